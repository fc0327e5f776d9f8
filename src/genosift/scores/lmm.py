"""Linear mixed model association of each feature, given a kinship between the samples.

The model of pyseer's ``--lmm`` and FaST-LMM::

    y = b0 + Z g + beta x + u + e,   u ~ N(0, s2 h2 K),   e ~ N(0, s2 (1 - h2) I)

with ``K`` the kinship of the samples (``Target.kinship``), ``Z`` the ``c`` covariates and ``h2``
the share of the variance that the kinship explains. ``K = U diag(S) U^T`` is decomposed once;
the null model (no feature) is fitted once by restricted maximum likelihood (REML: the
likelihood of the ``n - c - 1`` error contrasts, free of the intercept and covariates) over
``h2`` (a grid of 100 values in ``[0, 0.99999]``, then Brent's method between the best one's
neighbours), the likelihood FaST-LMM maximises when it is given covariates and the one pyseer's
``--lmm`` uses; each feature is then tested with ``h2`` fixed at the null's value. With
``d = h2 S + 1 - h2``, the map ``W = diag(d)^(-1/2) U^T`` turns the model into ordinary least
squares on ``W y``, ``W (1, Z)`` and ``W x``, so a block of features is fitted by the kernel of
``regression`` (Frisch-Waugh-Lovell on an orthonormal basis of the whitened design). With
``m = n - c - 1`` contrasts, as FaST-LMM's ``single_snp`` tests:

- ``beta`` and its standard error ``se = sqrt(rss / (m - 1) / sxx)`` (``sxx``: the whitened
  feature's sum of squares off the covariates);
- ``t = beta / se`` and its two-sided p-value from Student's t with ``m - 1 = n - c - 2`` degrees
  of freedom (FaST-LMM's F(1, n - c - 2) of ``t^2``);
- the likelihood-ratio statistic ``m log(rss_null / rss)`` (the contrasts' likelihoods, the
  log-determinant being the same under both at fixed ``h2``) and its chi2(1) p-value.

A binary phenotype (0/1) is by default tested in the logistic mixed model instead
(``model="auto"``; ``genosift.scores.glmm``: penalised quasi-likelihood, each feature's score test
calibrated by a saddlepoint approximation): the linear model of a 0/1 phenotype passes lineage
markers, whose variation off the lineages lies in a handful of samples, far below any
genome-wide threshold on populations where no locus is causal. ``model="linear"`` tests a binary
phenotype as a number, as pyseer's ``--lmm`` does (the same p-values).

The kinship is fitted scaled to a mean diagonal of 1 (``K n / trace(K)``, after any negative
eigenvalues are taken as 0), as pyseer, FaST-LMM and GCTA scale theirs: a positive multiple of
``K`` gives the same fits and p-values, but ``h2`` is a share of the variance only on a stated
scale, and on this one it is the same figure for any kinship, centred or not (``genosift.kinship``
is already so scaled; pyseer's ``similarity_pyseer`` output, ``G G^T`` with a diagonal in the
thousands, is not). A kinship that is not a similarity of the samples (a distance matrix: zeros on
its diagonal) is refused (``check_similarity``).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from ..core.constraints import Choice
from ._base import Scores, ratio, register, stack_scores
from .glmm import LogisticNull, glmm_tests
from .regression import COLLINEAR, least_squares_fits, orthonormal

__all__ = ["EXACT_TOL", "FLAT_TOL", "NEGATIVE_TOL", "SIMILARITY_TOL", "Heritability", "NullModel", "check_kinship",
           "MODELS", "check_phenotype", "check_similarity", "heritability", "kinship_by_ids", "lmm", "lmm_many",
           "logistic_model", "logistic_null_model", "null_model",
           "target_heritability"]

_FITTING = threading.Lock()
#: The largest ``h2`` searched: at 1 a kinship of lower rank than the samples leaves no variance.
MAX_H2 = 0.99999
_GRID = np.linspace(0.0, MAX_H2, 100)
#: A kinship's eigenvalue below minus this share of its largest is more than rounding: the kinship
#: is not positive semi-definite, and a warning says that its negative eigenvalues are taken as 0.
NEGATIVE_TOL = 1e-5
#: A kinship whose part off the fixed effects is, to this share of its size (Frobenius norms), a
#: multiple of the identity (zero included) explains nothing: h2 is not identifiable.
FLAT_TOL = 1e-9
#: A phenotype whose residual off the fixed effects is at most this share of its largest value is
#: constant, or the covariates give it exactly.
EXACT_TOL = 1e-10
#: A similarity of the samples (a covariance) has ``|K_ij| <= sqrt(K_ii K_jj)``; an entry beyond
#: that by more than this share of ``sqrt(K_ii K_jj)`` plus this share of the mean diagonal is more
#: than rounding. Printing every entry to 6 significant digits moves the ratio
#: ``|K_ij| / sqrt(K_ii K_jj)`` by at most 1e-5 (each entry by 5e-6 of itself), and to 6 decimals
#: a kinship of mean diagonal 1 moves each entry by 5e-7: ten times either is still far below what
#: a matrix that is no similarity shows (a distance's diagonal is 0, its entries off it positive).
SIMILARITY_TOL = 1e-4


def check_kinship(kinship, n_samples, owner="score"):
    """``kinship`` as a symmetric (n, n) float64 array of finite values that is a similarity of the
    samples (``check_similarity``), or a clear error. Time and memory ``O(n^2)``, before any
    decomposition."""
    K = np.asarray(kinship, dtype=np.float64) if not hasattr(kinship, "to_numpy") else kinship.to_numpy(np.float64)
    if K.shape != (n_samples, n_samples):
        raise ValueError(f"The kinship given to {owner} is {' x '.join(map(str, K.shape))}; it must be "
                         f"{n_samples} x {n_samples}: one row and one column per sample scored, in their order.")
    if not np.isfinite(K).all():
        raise ValueError(f"The kinship given to {owner} holds NaN or infinite values; give finite values.")
    K = _symmetric(K, rtol=1e-10, atol=1e-12 * max(1.0, float(K.max()), -float(K.min())))
    if K is None:
        raise ValueError(f"The kinship given to {owner} is not symmetric: K[i, j] must equal K[j, i].")
    check_similarity(K)
    return K


def _symmetric(K, *, rtol, atol, step_bytes=1 << 24):
    """``(K + K^T) / 2`` (a new array) where ``K`` equals its transpose to ``np.allclose``'s
    tolerance, else None; a strip of rows at a time (no n x n temporaries)."""
    n = K.shape[0]
    out = np.empty((n, n))
    step = max(1, step_bytes // (8 * max(n, 1)))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        rows, cols = K[i0:i1], np.ascontiguousarray(K[:, i0:i1].T)
        strip = out[i0:i1]
        np.subtract(rows, cols, out=strip)
        np.abs(strip, out=strip)
        if not (strip <= atol + rtol * np.abs(cols)).all():
            return None
        np.add(rows, cols, out=strip)
        strip *= 0.5
    return out


def check_similarity(K, ids=None, *, step_bytes=1 << 24):
    """The error for a kinship ``K`` (a finite square array) that is not a similarity of the
    samples: a trace that is not positive, a sample whose kinship to itself is zero or negative
    (a distance matrix has zeros there), or a pair whose kinship exceeds ``sqrt(K_ii K_jj)``,
    which no covariance of the samples does, beyond rounding (``SIMILARITY_TOL``). The samples are
    named by ``ids`` (in the order of ``K``'s rows) where given, else by row. ``O(n^2)`` time, a
    strip of rows at a time (memory ``step_bytes``).

    >>> check_similarity(np.array([[0.0, 0.4], [0.4, 0.0]]), ["a", "b"])
    Traceback (most recent call last):
    ...
    genosift.core.messages.FixError: The kinship is not a similarity of the samples: ...
    """
    n = K.shape[0]
    diag = np.diag(K).astype(np.float64)
    trace = float(diag.sum())

    def samples(*rows):  # named by id, else by row
        if ids is not None:
            return ("sample " if len(rows) == 1 else "samples ") + " and ".join(repr(str(ids[i])) for i in rows)
        return ("the sample of row " if len(rows) == 1 else "the samples of rows ") + " and ".join(map(str, rows))

    top = max(float(K.max(initial=0.0)), -float(K.min(initial=0.0)))
    if top == 0:
        _refuse_kinship("every entry is 0 (as in the kinship of a tree whose branches all have length 0); a "
                        "similarity has each sample's kinship to itself positive")
    if not np.abs(diag).max(initial=0.0) > 1e-12 * top:  # zeros, or rounding of zeros (1 - S)
        _refuse_kinship("its diagonal is 0 for every sample, as a distance matrix's is (each sample at distance 0 "
                        "from itself); a similarity has each sample's kinship to itself positive")
    if not trace > 0:
        _refuse_kinship(f"its diagonal sums to {trace:.6g}; a similarity has each sample's kinship to itself positive")
    low = np.flatnonzero(diag <= 0)
    if low.size:
        _refuse_kinship(f"{samples(low[0])} has kinship {diag[low[0]]:.6g} to itself"
                        + (f" ({low.size} of the {n} samples have one of 0 or below)" if low.size > 1 else "")
                        + "; a similarity has each sample's kinship to itself positive (a distance matrix has "
                          "zeros there)")
    root = np.sqrt(diag)
    slack = SIMILARITY_TOL * trace / n
    step = max(1, step_bytes // (8 * max(n, 1)))
    count, worst = 0, (0.0, 0, 0)
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        bound = root[i0:i1, None] * root[None, :]
        over = np.abs(K[i0:i1]) > bound * (1.0 + SIMILARITY_TOL) + slack
        if over.any():
            rows, cols = np.nonzero(over)
            count += rows.size
            ratios = np.abs(K[i0 + rows, cols]) / bound[rows, cols]
            k = int(np.argmax(ratios))
            if ratios[k] > worst[0]:
                worst = (float(ratios[k]), i0 + int(rows[k]), int(cols[k]))
    if count:
        _, i, j = worst
        pairs = count // 2
        _refuse_kinship(f"between {samples(i, j)} it is {K[i, j]:.6g}, where their kinships to "
                        f"themselves are {diag[i]:.6g} and {diag[j]:.6g}: larger than the root of their product, "
                        f"{root[i] * root[j]:.6g}, which a covariance of the samples never is"
                        + (f" ({pairs:,} pairs are so)" if pairs > 1 else ""))


def _refuse_kinship(problem):
    from ..core.messages import FixError, PythonText

    raise FixError(f"The kinship is not a similarity of the samples: {problem}. Give the samples' similarity: "
                   "pyseer's similarity_pyseer or phylogeny_distance --lmm output, or a phylogeny in Newick, with "
                   "{kinship}; or the kinship of the data, {kinship_of_data}.", owner="score",
                   kinship=PythonText("kinship=genosift.io.read_kinship(path) (a table) or "
                                      "kinship=genosift.genomics.structure.tree_kinship(path) (a tree)"),
                   kinship_of_data=PythonText("kinship=genosift.kinship(X)"))


def check_phenotype(values, covariates=None, owner="heritability"):
    """The error for a phenotype that leaves nothing for a kinship to explain: constant (one
    value, or one class of a binary phenotype), or given exactly by the intercept and the
    covariates ``(n, c)``; a phenotype that varies beyond them passes. Cheap (``O(n c^2)``): call it
    before the kinship is read or decomposed."""
    y = np.asarray(values, dtype=np.float64)
    if y.size and np.all(y == y[0]):
        raise ValueError(f"The phenotype given to {owner} is constant (every sample has {y[0]:g}): it has no "
                         "variance for a kinship to explain. Give a phenotype that varies (for two classes, "
                         "samples of both).")
    C = np.ones((y.size, 1)) if covariates is None else np.column_stack([np.ones(y.size), covariates])
    residual = y - C @ np.linalg.lstsq(C, y, rcond=None)[0]
    if not np.abs(residual).max(initial=0.0) > EXACT_TOL * np.abs(y).max(initial=0.0):
        raise ValueError(f"The phenotype given to {owner} is given exactly by the intercept and the covariates: "
                         "nothing is left for a kinship to explain. Leave out the covariates that repeat the "
                         "phenotype.")


def kinship_by_ids(kinship, ids):
    """``kinship`` as an array in the order of the samples ``ids``: a DataFrame indexed (and with
    columns) by sample id is reordered (every sample scored must be in it) and checked a similarity
    (``check_similarity``, naming samples by id); an array is taken as it is (its order is the
    rows', and so is a table indexed by position, as ``genosift.kinship`` gives for data without ids)."""
    from .covariates import has_sample_ids

    if not has_sample_ids(kinship):
        return np.asarray(kinship, dtype=np.float64)
    if ids is None:
        raise ValueError("The kinship is a table indexed by sample id, but these data have no sample ids: give it "
                         "as an array in the order of the rows, or the data as a DataFrame indexed by sample id.")
    index, columns = [str(i) for i in kinship.index], [str(c) for c in kinship.columns]
    names = [str(i) for i in ids]
    have = set(index) & set(columns)
    missing = [i for i in names if i not in have]
    if missing:
        raise ValueError(f"The kinship has no row or column for {len(missing)} sample(s) scored, such as "
                         f"{missing[:5]}: give the kinship of every sample scored (its index and columns the ids).")
    rows, cols = {k: i for i, k in enumerate(index)}, {k: i for i, k in enumerate(columns)}
    values = kinship.to_numpy(dtype=np.float64)
    values = values[np.ix_([rows[i] for i in names], [cols[i] for i in names])]
    if np.isfinite(values).all():  # (check_kinship names values that are not)
        check_similarity(values, names)  # here, where the samples have their ids
    return values


@dataclass(frozen=True, eq=False)
class NullModel:
    """The null model of a target (its covariates, no feature), fitted once.

    ``heritability``: the REML fit of ``h2``, the share of the variance the kinship explains
    (its standard error and test too); ``rotate`` (``U^T``, n x n, a view of the eigenvectors) and ``scale``
    (``d^(-1/2)``): ``W x = scale * (rotate @ x)``; ``Q``: an orthonormal basis of ``W (1, Z)``;
    ``yr``: ``W y`` less its projection on ``Q``; ``rss``: ``yr @ yr``.
    """

    heritability: Heritability
    rotate: np.ndarray
    scale: np.ndarray
    Q: np.ndarray
    yr: np.ndarray
    rss: float

    @property
    def h2(self):
        return self.heritability.h2


def _profiled(h2, S, Uy, UC):
    """``(d, rss, Cw)`` of the null model at ``h2``: the covariance's diagonal in the kinship's
    eigenbasis, the residual sum of squares of the whitened least-squares fit of ``y`` on the
    intercept and covariates, and the whitened design."""
    d = h2 * S + (1.0 - h2)
    w = 1.0 / np.sqrt(d)
    yw, Cw = Uy * w, UC * w[:, None]
    r = yw - Cw @ np.linalg.lstsq(Cw, yw, rcond=None)[0]
    return d, float(r @ r), Cw


class _Fits:
    """The eigendecomposition of the last kinship seen and the null models fitted with it, by
    target: the targets that share one kinship array (``make_targets``) share its decomposition.
    A new kinship lets the old one's go (n x n arrays are large). The eigenvalues are those of the
    kinship fitted: negative ones taken as 0, then scaled to a sum of ``n`` (a mean diagonal of 1,
    the scale of ``h2``)."""

    def __init__(self):
        self.kinship = self.S = self.U = None
        self.nulls = {}  # Target (by identity) -> NullModel
        self.logistic = {}  # Target (by identity) -> glmm.LogisticNull

    def eigen(self, kinship):
        if kinship is not self.kinship:
            self.kinship = self.S = self.U = None
            self.nulls, self.logistic = {}, {}
            S, U = np.linalg.eigh(kinship)
            _warn_negative(S)
            S = np.maximum(S, 0.0)  # rounding below zero of a PSD kinship
            S *= S.size / S.sum()  # a mean diagonal of 1 (check_similarity: the trace is positive)
            self.kinship, self.S, self.U = kinship, S, U
        return self.S, self.U


_LAST = _Fits()


def _warn_negative(S):
    """Warn that a kinship of eigenvalues ``S`` is not positive semi-definite, beyond rounding
    (``NEGATIVE_TOL`` of the largest), and that its negative eigenvalues are taken as 0."""
    top = max(float(S.max(initial=0.0)), 0.0)
    if S.size and S.min() < -NEGATIVE_TOL * top:
        import warnings

        k = int(np.sum(S < -NEGATIVE_TOL * top))
        warnings.warn(f"The kinship is not positive semi-definite: {k} of its {S.size} eigenvalues are negative, "
                      f"down to {S.min():.4g} (the largest is {top:.4g}). They are taken as 0 (the nearest positive "
                      "semi-definite kinship). A kinship is a covariance of the samples: give one computed as such "
                      "(the kinship of the features, a tree's shared branch lengths) to avoid this.",
                      UserWarning, stacklevel=4)


def _explains_nothing(S, UC, step_bytes=1 << 25):
    """Whether the kinship of eigenvalues ``S`` (its eigenbasis, where ``UC`` is the design: the
    intercept and covariates) is, off the design, a multiple of the identity (zero included) to
    ``FLAT_TOL`` of its size: then ``h2`` changes no likelihood and is not identifiable.

    With ``P`` the projection off the design and ``lam`` the mean of ``P diag(S) P``'s non-null
    eigenvalues, ``|P (diag(S) - lam) P|_F`` is summed a strip of rows at a time (memory
    ``step_bytes``, time ``O(n^2 c)``), never as a difference of large sums that cancel."""
    Q = orthonormal(np.ascontiguousarray(UC))
    n = S.size
    lam = (S.sum() - np.einsum("ij,i,ij->", Q, S, Q)) / (n - Q.shape[1])
    D = S - lam
    G = D[:, None] * Q
    H = Q.T @ G
    step = max(1, step_bytes // (8 * n))
    total = 0.0
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        strip = (Q[i0:i1] @ H - G[i0:i1]) @ Q.T - Q[i0:i1] @ G.T
        strip[np.arange(i1 - i0), np.arange(i0, i1)] += D[i0:i1]
        total += float(np.sum(strip * strip))
    return not np.sqrt(total) > FLAT_TOL * float(np.sqrt(S @ S))


def null_model(target):
    """The ``NullModel`` of ``target`` (a ``Target`` with ``kinship``), fitted once for all its
    blocks of features (a ``Target`` hashes by identity; it and its fit are never changed); the
    blocks' threads wait for the first to fit it rather than each fitting it."""
    with _FITTING:
        S, U = _LAST.eigen(target.kinship)
        null = _LAST.nulls.get(target)
        if null is None:
            null = _LAST.nulls[target] = _fit_null(target, S, U)
        return null


def _fit_null(target, S, U):
    check_phenotype(target.values, target.covariates, owner="the mixed model")
    Uy, UC = _rotated(target, U)
    df = target.n_samples - UC.shape[1] - 1
    if df < 1:
        raise ValueError(f"A mixed model on {UC.shape[1] - 1} covariate(s) and a feature needs more than "
                         f"{UC.shape[1] + 1} samples; got {target.n_samples}. Use fewer covariates or more samples.")
    if _explains_nothing(S, UC):
        _refuse_flat()
    fit = _heritability(S, Uy, UC)
    h2 = fit.h2
    scale = 1.0 / np.sqrt(h2 * S + (1.0 - h2))
    Q = orthonormal(np.ascontiguousarray(scale[:, None] * UC))
    yr = scale * Uy
    yr = yr - Q @ (Q.T @ yr)
    yr = yr - Q @ (Q.T @ yr)
    return NullModel(fit, U.T, scale, Q, yr, float(yr @ yr))


def _refuse_flat():
    from ..core.messages import FixError, PythonText

    raise FixError("The kinship explains nothing here: off the intercept and covariates it is zero or the same "
                       "for every sample (a kinship of one value throughout, or the identity), so h2 is not "
                       "identifiable and a mixed model is ordinary regression. Give the samples' kinship with "
                       "{kinship} (for example {kinship_of_data}), or score by ordinary regression ({method}).",
                       owner="score", kinship=FixError.ANY, kinship_of_data=PythonText("genosift.kinship(X)"),
                       method="regression")


def _rotated(target, U):
    """``U^T y`` and ``U^T (1, Z)`` of ``target``."""
    n = target.n_samples
    C = np.ones((n, 1)) if target.covariates is None else np.column_stack([np.ones(n), target.covariates])
    return U.T @ np.asarray(target.values, dtype=np.float64), U.T @ C


def _best(loglik):
    """The ``h2`` in ``[0, MAX_H2]`` that maximises ``loglik`` (a grid, then Brent's method between
    the best point's neighbours), and the maximum."""
    values = np.array([loglik(h) for h in _GRID])
    best = int(np.nanargmax(values))
    lo, hi = _GRID[max(best - 1, 0)], _GRID[min(best + 1, _GRID.size - 1)]
    found = optimize.minimize_scalar(lambda h: -loglik(h), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    if -found.fun >= values[best]:
        return float(found.x), -float(found.fun)
    return float(_GRID[best]), float(values[best])


def _reml(h2, S, Uy, UC):
    """The restricted log-likelihood of the null model at ``h2`` (the coefficients and the scale
    profiled out), up to a constant that does not depend on ``h2``."""
    d, rss, Cw = _profiled(h2, S, Uy, UC)
    m = S.size - UC.shape[1]
    return -0.5 * (m * np.log(2.0 * np.pi * rss / m) + m + np.log(d).sum() + np.linalg.slogdet(Cw.T @ Cw)[1])


@dataclass(frozen=True)
class Heritability:
    """The REML estimate of ``h2``, the share of the phenotype's variance the kinship explains
    (the kinship scaled to a mean diagonal of 1: see ``heritability``).

    ``se``: its standard error from the observed information (the curvature of the restricted
    log-likelihood at the estimate; NaN at a bound, where it is undefined); ``lrt``: twice the
    gain of the restricted log-likelihood over ``h2 = 0``; ``pvalue``: of ``h2 > 0``, from the
    50:50 mixture of 0 and chi2(1) that holds on the boundary (half of chi2(1)'s tail);
    ``loglik``: the maximised restricted log-likelihood (up to a constant)."""

    h2: float
    se: float
    lrt: float
    pvalue: float
    loglik: float

    def to_frame(self):
        """The estimate as a one-row ``pandas.DataFrame`` (columns ``h2, se, lrt, pvalue, loglik``),
        as every result's ``to_frame``: one row per phenotype when concatenated."""
        import pandas as pd

        return pd.DataFrame({name: [getattr(self, name)] for name in ("h2", "se", "lrt", "pvalue", "loglik")})


def _heritability(S, Uy, UC):
    def loglik(h):
        return _reml(h, S, Uy, UC)

    h2, best = _best(loglik)
    se = np.nan
    step = 1e-4
    if step < h2 < MAX_H2 - step:
        curvature = (loglik(h2 + step) - 2.0 * best + loglik(h2 - step)) / step ** 2
        se = float(1.0 / np.sqrt(-curvature)) if curvature < 0 else np.nan
    lrt = max(2.0 * (best - loglik(0.0)), 0.0)
    return Heritability(h2, se, lrt, float(0.5 * special.chdtrc(1, lrt)) if lrt > 0 else 1.0, best)


def heritability(kinship, y, *, covariates=None):
    """The REML estimate of the narrow-sense heritability ``h2`` (the share of ``y``'s variance
    that the kinship explains, given the covariates), its standard error and its test.

    ``h2`` is the share on the kinship scaled to a mean diagonal of 1 (``K n / trace(K)``, the
    scale of pyseer's, FaST-LMM's and GCTA's ``h2``), so any positive multiple of a kinship gives the
    same figure, whether it is centred (``genosift.kinship``) or not (pyseer's ``similarity_pyseer``
    output, ``G G^T``).

    Parameters
    ----------
    kinship : array-like (n, n) or DataFrame
        The samples' kinship, a similarity (``check_similarity``; a distance matrix is refused):
        ``genosift.kinship``, a tree's (``genosift.genomics.structure.tree_kinship``) or a table read with
        ``genosift.io.read_kinship``. A DataFrame indexed (and with columns) by sample id, with
        ``y`` a Series indexed by sample id, is matched to ``y`` by id (both must list the same
        samples: the ids of one missing from the other are an error naming them); otherwise in
        the order of ``y``.
    y : array-like (n,) or Series
        A numeric phenotype (two classes coded 0/1 are a number, as pyseer models them).
    covariates : array-like (n, c), optional
        Fixed effects (``genosift.scores.check_covariates``); a DataFrame indexed by sample id is
        put in the order of ``y``'s ids when they are matched.

    Returns
    -------
    Heritability

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat(np.arange(10), 20)
    >>> K = (groups[:, None] == groups[None, :]).astype(float)
    >>> y = rng.normal(size=10)[groups] + rng.normal(size=200)
    >>> h = heritability(K, y)
    >>> round(h.h2, 2), h.pvalue < 1e-6
    (0.42, True)
    >>> abs(heritability(250.0 * K, y).h2 - h.h2) < 1e-6  # the same on any scale of the kinship
    True
    """
    from ._base import Target
    from .covariates import align_covariates, check_covariates, has_sample_ids

    if has_sample_ids(kinship) and has_sample_ids(y) and getattr(y, "ndim", 0) == 1:
        ids = _common_ids(kinship, y)
        kinship, covariates = kinship_by_ids(kinship, ids), align_covariates(covariates, ids, owner="heritability")
        y = y.to_numpy()
    values = np.asarray(y, dtype=np.float64)
    if values.ndim != 1 or not np.isfinite(values).all():
        raise ValueError("The phenotype given to heritability must be one finite number per sample.")
    Z, _ = check_covariates(covariates, values.size, owner="heritability")
    check_phenotype(values, Z)
    target = Target(values.size, values=values, covariates=Z,
                    kinship=check_kinship(kinship, values.size, owner="heritability"))
    return target_heritability(target)


def _common_ids(kinship, y):
    """The ids of the Series ``y`` (as text, in its order) when the kinship table lists the same
    samples; else the error naming those of each that the other lacks."""
    from ..core.validation import names_list

    ids = [str(i) for i in y.index]
    rows, columns = [str(i) for i in kinship.index], [str(c) for c in kinship.columns]
    if len(set(ids)) < len(ids):
        raise ValueError("y is a Series whose index repeats sample ids: each sample needs one phenotype value.")
    if set(rows) != set(columns):
        raise ValueError("The kinship's index and columns list different samples: index and columns must be the "
                         "same sample ids.")
    have, given = set(rows), set(ids)
    lacking, unused = [i for i in ids if i not in have], [i for i in rows if i not in given]
    if lacking or unused:
        parts = ([f"{len(lacking)} of y's ids have no row in the kinship ({names_list(lacking)})"] if lacking else []) \
            + ([f"{len(unused)} samples of the kinship have no value in y ({names_list(unused)})"] if unused else [])
        raise ValueError("The kinship and y of heritability are indexed by sample ids that differ: "
                         f"{'; '.join(parts)}. Give both the same samples: K.loc[ids, ids] and y.loc[ids].")
    return ids


MODELS = ("auto", "linear", "logistic")


def logistic_model(target, model="auto"):
    """Whether ``target`` is tested in the logistic mixed model: ``model="logistic"``, or
    ``"auto"`` with a target of 0s and 1s (both present)."""
    if model == "linear":
        return False
    values = np.asarray(target.values, dtype=np.float64)
    binary = bool(np.isin(values, (0.0, 1.0)).all()) and 0 < values.sum() < values.size
    if model == "logistic" and not binary:
        from ..core.messages import FixError

        raise FixError("The logistic mixed model takes a binary target (0/1, both present); this one is not. Use "
                       "the linear mixed model ({model}) for a numeric target.", owner="lmm", model="linear")
    return binary


def logistic_null_model(target):
    """The null logistic mixed model of ``target`` (``genosift.scores.glmm.LogisticNull``), fitted
    once for all its blocks: on the kinship's nearest positive semi-definite matrix (its
    negative eigenvalues, beyond rounding with a warning, taken as 0), scaled to a mean diagonal of 1."""
    with _FITTING:
        S, U = _LAST.eigen(target.kinship)
        null = _LAST.logistic.get(target)
        if null is None:
            check_phenotype(target.values, target.covariates, owner="the mixed model")
            n = target.n_samples
            C = np.ones((n, 1)) if target.covariates is None else np.column_stack([np.ones(n), target.covariates])
            if _explains_nothing(S, U.T @ C):
                _refuse_flat()
            null = _LAST.logistic[target] = LogisticNull(target.values, C, (U * S) @ U.T)
        return null


def target_heritability(target):
    """``heritability`` of a ``Target`` with its kinship (and covariates): its null model's."""
    return null_model(target).heritability


def fitted_model(target, *, model="auto"):
    """What the method fitted once for all features. The linear model: the null's REML ``h2``
    (the one its tests use), its standard error, the likelihood-ratio test of ``h2 > 0`` and the
    maximised restricted log-likelihood. The logistic model: ``tau``, the random effect's variance
    on the logit scale, and ``h2``, its share of the latent variance ``tau / (tau + pi^2 / 3)``."""
    if logistic_model(target, model):
        null = logistic_null_model(target)
        return {"model": "logistic", "tau": null.tau, "h2": null.h2}
    fit = null_model(target).heritability
    return {"model": "linear", "h2": fit.h2, "h2_se": fit.se, "h2_lrt": fit.lrt, "h2_pvalue": fit.pvalue,
            "restricted_loglik": fit.loglik}


def _tests(whitened, null, n):
    """The tests of the whitened columns of a block against ``null``: ``Scores`` with ``t``, its
    p-value, ``beta``, ``se`` and the likelihood ratio (see the module's notes)."""
    beta, sxx, rss, scale = least_squares_fits(np.ascontiguousarray(whitened), null.Q, null.yr, COLLINEAR)
    rss[rss <= (64 * np.finfo(float).eps) ** 2 * null.rss] = 0.0  # an exact fit leaves rounding only
    m = n - null.Q.shape[1]  # the error contrasts
    with np.errstate(divide="ignore", invalid="ignore"):
        lrt = np.maximum(m * np.log(null.rss / rss), 0.0)
    lrt[np.isnan(beta)] = np.nan
    se = ratio(np.sqrt(rss / (m - 1)), np.sqrt(sxx) * scale)
    b = beta / scale
    t = ratio(b, se)
    return Scores(t, 2.0 * special.stdtr(m - 1, -np.abs(t)),
                  columns={"beta": b, "se": se, "lrt": lrt, "lrt_pvalue": special.chdtrc(1, lrt)})


def lmm_many(block, targets, *, model="auto"):
    """``lmm`` of a block for several targets that share one kinship and covariates: the block is
    rotated into the kinship's eigenbasis once (the n x n product, the bulk of the work) and
    each target's null model weighs the rotated columns (n per column). Binary targets in the
    logistic model are tested one after another."""
    if any(t.kinship is not targets[0].kinship for t in targets):
        raise ValueError("lmm_many fits targets that share one kinship array (scores.make_targets).")
    logistic = [logistic_model(t, model) for t in targets]
    if any(logistic):  # each in turn, in its own model
        return stack_scores([lmm(block, t, model="logistic" if each else "linear")
                             for t, each in zip(targets, logistic)])
    nulls = [null_model(t) for t in targets]
    n = targets[0].n_samples
    rotated = nulls[0].rotate @ np.asarray(block, dtype=np.float64)
    return stack_scores([_tests(null.scale[:, None] * rotated, null, n) for null in nulls])


@register(
    "lmm", invariance="affine", task="regression", streaming="blocks", pvalues=True, signed=True,
    covariates=True, kinship=True, distinct="all", fitted=fitted_model, many=lmm_many,
    options={"model": Choice(*MODELS)},
    formula="linear: y = b0 + Z g + beta x + u + e, u ~ N(0, s2 h2 K), e ~ N(0, s2 (1 - h2) I); h2 of the null by "
            "REML, then fixed; t = beta / se(beta) by generalised least squares, two-sided p from t(n - c - 2). "
            "logistic (a 0/1 target): logit P(y=1|u) = b0 + Z g + beta x + u, u ~ N(0, tau K); the null by "
            "penalised quasi-likelihood; z = x'(y - mu) / sqrt(x'Px), p by the saddlepoint approximation where "
            "|z| > 2",
    reference="Lippert et al. (2011) Nat. Methods 8:833 (FaST-LMM); Lees et al. (2018) Bioinformatics 34:4310 "
              "(pyseer --lmm); Breslow & Clayton (1993) JASA 88:9; Chen et al. (2016) AJHG 98:653 (GMMAT); "
              "Zhou et al. (2018) Nat. Genet. 50:1335 (SAIGE)",
)
def lmm(block, target, *, model="auto"):
    """Mixed model test of each feature, given the kinship and covariates.

    Parameters
    ----------
    model : str
        "auto": the logistic mixed model for a target of 0s and 1s, the linear one otherwise;
        "linear": the linear mixed model for every target (a binary one as a number, as pyseer's
        --lmm: the same p-values); "logistic": the logistic mixed model (a binary target only).

    Linear: ``statistic`` is ``t = beta / se``, the p-value from t(n - c - 2) as FaST-LMM's
    ``single_snp``; columns ``beta`` and ``se`` (feature units), ``lrt`` (the likelihood ratio of
    the error contrasts at the null's ``h2``) and ``lrt_pvalue`` (its chi2(1) p-value).
    Logistic: ``statistic`` is the score's ``z``; columns ``beta`` and ``se`` (log-odds per unit of
    the feature, one step from the null), ``score_pvalue`` (the normal approximation) and ``spa``
    (1 where the saddlepoint approximation gave the p-value). What the null fitted (``h2``, or
    ``tau``) is the result's ``model``.
    """
    if logistic_model(target, model):
        return glmm_tests(block, logistic_null_model(target))
    null = null_model(target)
    whitened = null.scale[:, None] * (null.rotate @ np.asarray(block, dtype=np.float64))
    return _tests(whitened, null, target.n_samples)
