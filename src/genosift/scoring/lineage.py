"""Lineage effects: which lineage each feature follows, and which lineages go with the phenotype.

A test adjusted for population structure looks for *locus* effects: a feature associated with
the phenotype beyond what the lineages explain. Earle et al. (2016, Nat. Microbiol. 1:16041,
bugwas) also name *lineage* effects: a feature that marks a lineage which is itself associated
with the phenotype. Such a feature may be causal, but its own test cannot tell it from the
hundreds of other markers of its lineage. Two questions tell the two apart:

- **the lineages' own association with the phenotype**: one regression of the phenotype on every
  lineage coordinate together (logistic for a target of two classes, least squares otherwise;
  the regression and logistic methods' own fits, each coordinate tested by its Wald statistic
  given the others), a coordinate associated where its p-value is below ``alpha`` over the
  number of coordinates (Bonferroni). Lineages given as clusters (a label per sample, one-hot)
  are tested one at a time, each against all the others, so that every cluster can be named;
- **the lineage each feature follows**: the coordinate its values correlate with most (the
  largest ``|r|`` over the samples tested), and that correlation.

A feature is a lineage effect (``effect`` "lineage") where the coordinate it follows is
associated with the phenotype and ``|r|`` is at least ``LINEAGE_R``; else a locus effect.
The correlations are one product of each block of features with the centred coordinates
(``n x k``), read as the scoring reads them: a store's feature blocks within its budget, a
matrix in memory by column blocks, sparse kept sparse.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..core.constraints import Boolean, checked
from ..core.shared_docs import shared_docs
from ..core.validation import names_list

__all__ = ["LINEAGE_R", "LineageEffects", "Lineages", "feature_lineages", "lineage_association", "lineage_effects",
           "lineage_frame"]

#: The smallest ``|r|`` between a feature and the lineage coordinate it follows for the feature to
#: be that lineage's (when the lineage is associated with the phenotype): ``r^2 >= 0.25``, a
#: quarter of the feature's variance along the lineage. On the fsm-lite k-mers of
#: ``genosift.simulate_clonal_population`` (50-200 genomes of 4-8 lineages) the marker k-mers of
#: the confounded lineage follow their coordinate at ``|r|`` of at least 0.58 (the smallest per
#: population 0.58-0.87), and the causal gene, spread across every lineage, at most 0.23.
LINEAGE_R = 0.5
_OWNER = "lineage_effects"


@dataclass(frozen=True)
class Lineages:
    """The lineages' own association with the phenotype.

    Attributes
    ----------
    names : tuple of str
        The lineages: principal coordinates (``PC1`` ...) or cluster labels.
    coefficient, se, pvalue : ndarray (k,)
        Each lineage's coefficient in the regression of the phenotype (for two classes, the log
        odds of the class that sorts last), its standard error and its Wald p-value; NaN where
        the fit failed (``notes`` says why).
    explained : ndarray (k,)
        A principal coordinate's share of the variance (the structure's ``explained``); NaN for
        clusters or where not known.
    alpha : float
        The family-wise level: a lineage is associated where ``pvalue < alpha / k``.
    model : {"logistic", "regression"}
        The regression of the phenotype.
    joint : bool
        All coordinates in one regression (True), or each cluster against the others (False).
    covariates : tuple of str
        The other covariates in every regression.
    notes : tuple of str
    """

    names: tuple
    coefficient: np.ndarray
    se: np.ndarray
    pvalue: np.ndarray
    explained: np.ndarray
    alpha: float
    model: str
    joint: bool
    covariates: tuple = ()
    notes: tuple = ()

    def __repr__(self):
        associated = [n for n, a in zip(self.names, self.associated) if a]
        return (f"Lineages({self.model}, n_lineages={len(self.names)}, alpha={self.alpha:g}, "
                f"associated=[{names_list(associated, limit=4)}])")

    @property
    def threshold(self):
        """``alpha`` over the number of lineages (Bonferroni)."""
        return self.alpha / len(self.names)

    @property
    def associated(self):
        """Which lineages are associated with the phenotype, (k,) bool."""
        with np.errstate(invalid="ignore"):
            return self.pvalue < self.threshold

    def to_frame(self):
        """One row per lineage: ``lineage, coefficient, se, pvalue, explained, associated``."""
        import pandas as pd

        return pd.DataFrame({"lineage": list(self.names), "coefficient": self.coefficient, "se": self.se,
                             "pvalue": self.pvalue, "explained": self.explained, "associated": self.associated})

    def record(self):
        """What a sidecar keeps (a NaN as null)."""
        rows = self.to_frame().to_dict("records")
        return {"model": self.model, "joint": self.joint, "alpha": self.alpha, "threshold": self.threshold,
                "covariates": list(self.covariates), "notes": list(self.notes),
                "associated": [n for n, a in zip(self.names, self.associated) if a],
                "lineages": [{k: (None if isinstance(v, float) and v != v else
                                  bool(v) if isinstance(v, np.bool_) else v) for k, v in row.items()}
                             for row in rows]}


@dataclass(frozen=True)
class LineageEffects:
    """What ``lineage_effects`` found.

    Attributes
    ----------
    lineages : Lineages
        The lineages' association with the phenotype.
    best : ndarray of int64 (p,)
        The lineage each feature follows (an index of ``lineages.names``): the largest ``|r|``,
        the first of equal ones; -1 for a constant feature or one not tested.
    r : ndarray (p,)
        Its correlation with that lineage (signed; NaN where ``best`` is -1).
    min_r : float
        The ``|r|`` from which a feature following an associated lineage is a lineage effect.
    """

    lineages: Lineages
    best: np.ndarray
    r: np.ndarray
    min_r: float = LINEAGE_R

    def __repr__(self):
        locus, lineage = self.split(np.ones(self.best.size, dtype=bool))
        return (f"LineageEffects({self.lineages!r}, n_features={self.best.size}, min_r={self.min_r:g}, "
                f"lineage_effects={lineage}, locus_effects={locus})")

    @property
    def is_lineage(self):
        """Which features are lineage effects, (p,) bool."""
        return self._lineage_of(slice(None))

    @property
    def effect_kind(self):
        """Each feature's kind of effect: "lineage", "locus", or None where ``best`` is -1."""
        return self._effect_of(slice(None))

    def _lineage_of(self, rows):
        best, r = self.best[rows], self.r[rows]
        known = best >= 0
        associated = np.zeros(best.size, dtype=bool)
        associated[known] = self.lineages.associated[best[known]]
        with np.errstate(invalid="ignore"):
            return associated & (np.abs(r) >= self.min_r)

    def _effect_of(self, rows):
        out = np.where(self._lineage_of(rows), "lineage", "locus").astype(object)
        out[self.best[rows] < 0] = None
        return out

    def columns(self, rows):
        """The ranking's columns of the features ``rows``: ``lineage`` (the name of the lineage
        each follows), ``lineage_r`` and ``effect_kind``, empty where ``best`` is -1."""
        import pandas as pd

        rows = np.asarray(rows, dtype=np.intp)
        best = self.best[rows]
        names = np.asarray(self.lineages.names, dtype=object)
        lineage = np.where(best >= 0, names[np.maximum(best, 0)], None).astype(object)
        return pd.DataFrame({"lineage": lineage, "lineage_r": self.r[rows], "effect_kind": self._effect_of(rows)})

    def split(self, mask):
        """``(locus, lineage)``: how many of the features ``mask`` are locus and lineage effects."""
        mask = np.asarray(mask, dtype=bool) & (self.best >= 0)
        lineage = int((mask & self.is_lineage).sum())
        return int(mask.sum()) - lineage, lineage


def lineage_frame(labels):
    """Clusters as lineages: one indicator column per distinct label of ``labels`` (a Series or
    sequence, one per sample; sorted as text, named by the label), indexed as ``labels`` is."""
    import pandas as pd

    series = labels if isinstance(labels, pd.Series) else pd.Series(list(labels))
    missing = series.isna().to_numpy()
    if missing.any():
        where = names_list([str(s) for s in series.index[missing]])
        raise ValueError(f"{int(missing.sum())} sample(s) have no lineage label ({where}): give every sample one, or "
                         "leave those samples out.")
    text = series.astype(str)
    levels = sorted(text.unique())
    if len(levels) < 2:
        raise ValueError(f"every sample has the lineage label {levels[0]!r}: lineages need at least two labels.")
    return pd.DataFrame({level: (text == level).to_numpy(dtype=np.float64) for level in levels}, index=series.index)


def lineage_association(lineages, y, *, covariates=None, explained=None, alpha=0.05, joint=True):
    """The ``Lineages``: the regression of ``y`` on the ``lineages`` (an ``(n, k)`` DataFrame or
    array: coordinates, or with ``joint=False`` cluster indicators) and ``covariates``.

    For two classes the logistic method's maximum-likelihood fit (no penalty: its Wald test is
    statsmodels' ``Logit``), otherwise the regression method's least squares (its t test). With
    ``joint``, lineage ``j`` is fitted as the feature with every other lineage among the
    covariates: the joint model's coefficient and standard error (the regression of all at
    once); without, each lineage is fitted alone (with the ``covariates``).
    """
    from ..scores import check_covariates
    from . import score

    names, L = _named(lineages)
    n, k = L.shape
    y = np.asarray(y)
    C, cnames = check_covariates(covariates, n, owner=_OWNER)
    two = np.unique(y).size == 2
    method, options = ("logistic", {"firth": "never"}) if two else ("regression", {})
    out = np.full((3, k), np.nan)
    notes = []
    for j in range(k):
        parts = [np.delete(L, j, axis=1)] if joint and k > 1 else []
        parts += [] if C is None else [C]
        Z = np.column_stack(parts) if parts else None
        try:
            res = score(L[:, [j]], y, method=method, covariates=Z, method_options=options)
        except ValueError as exc:  # the lineages separate the classes: no fit
            notes.append(f"{names[j]}: {exc}")
            continue
        p = res.columns["wald_pvalue"] if two else res.pvalues
        out[:, j] = res.columns["beta"][0], res.columns["se"][0], p[0]
        note = res.columns.get("note")
        if note is not None and note[0]:
            notes.append(f"{names[j]}: the fit failed ({note[0]})")
    shares = np.full(k, np.nan) if explained is None else np.asarray(explained, dtype=np.float64)
    return Lineages(tuple(names), out[0], out[1], out[2], shares, float(alpha), method, bool(joint),
                    tuple(cnames), tuple(notes))


def feature_lineages(data, lineages, *, patterns=None):
    """``(best, r)`` of every feature of ``data`` (a ``Source`` of a matrix or a store, its rows
    those of ``lineages``, an ``(n, k)`` DataFrame or array): the lineage its values correlate
    with most, and that correlation (see ``LineageEffects``). With ``patterns``
    (``scoring.patterns.Patterns`` of the features), each feature of a pattern takes its first
    feature's (the same values: the same lineage, to the bit), and a feature not tested none."""
    from ..core import engine

    _, L = _named(lineages)
    centred = L - L.mean(axis=0)
    norms = np.sqrt(np.einsum("ij,ij->j", centred, centred))
    blocks, p = _blocks(data, L.shape[0])

    def one(item):
        j0, _, block = item
        return j0, _correlations(block, centred, norms)

    best, r = np.full(p, -1, dtype=np.int64), np.full(p, np.nan)
    for j0, rb in engine.imap_blocks(one, blocks):
        width = rb.shape[0]
        strength = np.where(np.isnan(rb), -1.0, np.abs(rb))
        top = np.argmax(strength, axis=1)
        known = strength[np.arange(width), top] >= 0
        best[j0:j0 + width] = np.where(known, top, -1)
        r[j0:j0 + width] = np.where(known, rb[np.arange(width), top], np.nan)
    if patterns is None:
        return best, r
    ids = patterns.ids
    first = patterns.first[np.maximum(ids, 0)] if patterns.n_patterns else np.zeros(ids.size, dtype=np.int64)
    return np.where(ids >= 0, best[first], -1), np.where(ids >= 0, r[first], np.nan)


def _blocks(data, n):
    """The ``(j0, j1, block)`` feature blocks of a matrix or store ``Source`` (its rows kept, as
    float64, sparse kept sparse; ``Source.float_columns``) and the number of features."""
    m, p, blocks = data.float_columns(owner=_OWNER)
    if m != n:
        raise ValueError(f"The lineages of {_OWNER} have {n} rows, but {m} samples are scored: one row per sample.")
    return blocks, p


def _correlations(block, centred, norms):
    """The correlation of each column of ``block`` with each column of the centred lineages,
    ``(width, k)``; NaN for a constant column. The cross-products are of the raw values with the
    centred lineages (which sum to 0), the spread of each column about its own mean."""
    n = block.shape[0]
    if sp.issparse(block):
        block = block.tocsc()
        counts = np.diff(block.indptr)
        width = block.shape[1]
        mean = np.bincount(np.repeat(np.arange(width), counts), weights=block.data, minlength=width) / n
        gap = block.data - np.repeat(mean, counts)
        css = np.bincount(np.repeat(np.arange(width), counts), weights=gap * gap, minlength=width)
        css += (n - counts) * mean * mean
        constant = block.min(axis=0).toarray().ravel() == block.max(axis=0).toarray().ravel()  # implicit 0s too
        cross = np.asarray(block.T @ centred)
    else:
        mean = block.mean(axis=0)
        gap = block - mean
        css = np.einsum("ij,ij->j", gap, gap)
        constant = (block == block[:1]).all(axis=0)
        cross = block.T @ centred
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cross / (np.sqrt(css)[:, None] * norms[None, :])
    r[constant] = np.nan
    return np.clip(r, -1.0, 1.0)


def _named(lineages):
    """``(names, values)`` of lineages given as a DataFrame (its columns) or an array (``L1 ...``)."""
    if hasattr(lineages, "columns"):
        names = [str(c) for c in lineages.columns]
        values = lineages.to_numpy(dtype=np.float64)
    else:
        values = np.asarray(lineages, dtype=np.float64)
        values = values[:, None] if values.ndim == 1 else values
        names = [f"L{j + 1}" for j in range(values.shape[1])]
    values = np.ascontiguousarray(values)  # one memory order: the same sums, the same bits, from any table
    if values.ndim != 2 or values.shape[1] < 1 or not np.isfinite(values).all():
        raise ValueError(f"The lineages of {_OWNER} are an (n_samples, k) table of finite numbers, k >= 1; got shape "
                         f"{values.shape}{'' if np.isfinite(values).all() else ' with NaN or infinity'}.")
    constant = [name for name, same in zip(names, (values == values[:1]).all(axis=0)) if same]
    if constant:
        raise ValueError(f"The lineage(s) {names_list(constant)} of {_OWNER} take one value over every sample: a "
                         "lineage that does not vary has no correlation with any feature. Leave them out.")
    return names, values


@checked(binary=Boolean())
@shared_docs
def lineage_effects(X, y, lineages, *, covariates=None, binary=False, samples=None, chunk_bytes=None, alpha=0.05,
                    min_r=LINEAGE_R):
    """Lineage effects (bugwas, Earle et al. 2016): each feature's lineage, and the lineages'
    own association with the phenotype ``y``.

    Parameters
    ----------
    X : array-like, scipy.sparse matrix, DataFrame, AnnData in memory, or a store
        The features, as ``genosift.score`` takes them (a store read in feature blocks within
        ``chunk_bytes``, never loaded).
    y : array-like (n_samples,)
        The phenotype: two classes (a logistic regression of it on the lineages) or numbers
        (least squares).
    lineages : DataFrame or array (n_samples, k), or a Series or sequence of labels
        Lineage coordinates, one row per sample scored (``genosift.principal_coordinates``: a
        DataFrame indexed by sample id is matched to the samples' ids), tested together; or a
        cluster label per sample (one lineage per label, each tested against the others).
    covariates : optional
        Other covariates of the phenotype's regression (as ``genosift.score`` takes them).
    {binary}
    {samples}
    {chunk_bytes}
    alpha : float
        A lineage is associated with the phenotype where its Wald p-value is below
        ``alpha / k``.
    min_r : float
        A feature is a lineage effect where the lineage it follows is associated and ``|r|`` is
        at least this (default ``LINEAGE_R``).

    Returns
    -------
    LineageEffects

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> rng = np.random.default_rng(0)
    >>> lineage = np.repeat([0, 1, 2, 3], 30)                              # 4 lineages of 30 samples
    >>> markers = rng.random((120, 20)) < np.where(lineage[:, None] == np.arange(20) % 4, 0.9, 0.05)
    >>> spread = rng.random((120, 1)) < 0.4                                # carried in every lineage
    >>> X = np.hstack([markers, spread]).astype(float)
    >>> y = (rng.random(120) < np.where(lineage == 0, 0.8, 0.2)).astype(int)  # lineage 0: mostly cases
    >>> found = gs.lineage_effects(X, y, lineage)                          # one lineage per label
    >>> found.lineages.associated.tolist()
    [True, False, False, False]
    >>> found.effect_kind[[0, 1, 20]].tolist()          # a marker of lineage 0, one of lineage 1, the spread one
    ['lineage', 'locus', 'locus']
    >>> pcs = gs.principal_coordinates(X, 3)                               # or lineage coordinates
    >>> gs.lineage_effects(X, y, pcs).lineages.names
    ('PC1', 'PC2', 'PC3')
    """
    from ..core.validation import param_error
    from ..sources import as_source

    if not 0 < alpha < 1:
        raise param_error("alpha", _OWNER, "a significance level in (0, 1)", alpha)
    if isinstance(min_r, bool) or not isinstance(min_r, (int, float)) or not 0 <= min_r <= 1:
        raise param_error("min_r", _OWNER, "a number in [0, 1]", min_r)
    data = as_source(X, y, owner=_OWNER, binary=binary, chunk_bytes=chunk_bytes, samples=samples)
    clusters = np.ndim(lineages) == 1
    table = lineage_frame(lineages) if clusters else lineages
    table = _aligned(table, data, X)
    found = lineage_association(table, _labels(data), covariates=_aligned(covariates, data, X),
                                explained=None if clusters else getattr(lineages, "attrs", {}).get("explained"),
                                alpha=alpha, joint=not clusters)
    return LineageEffects(found, *feature_lineages(data, table), float(min_r))


def _aligned(table, data, X):
    """``table`` (lineages or covariates) in the order of the samples scored, where it is indexed
    by sample id and they have ids (a DataFrame's index, a store's ids of the rows kept)."""
    from ..scores import align_covariates

    if table is None:
        return None
    aligned = align_covariates(table, data.ids_scored(X), owner=_OWNER)
    return aligned if aligned is not table else data.kept(table)


def _labels(data):
    """The target of ``data`` as values, one per sample scored (``Source.labels``)."""
    return np.asarray(data.labels())
