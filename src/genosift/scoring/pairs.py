"""Pairs of features that explain the classes jointly: ``score_pairs``.

A pair of presence/absence features (k-mers, genes, SNPs) can separate the classes where neither
does alone: an XOR (resistance when exactly one of two genes is present) or an AND has no
marginal signal. ``score_pairs`` screens every pair of the candidate features (by default the
distinct presence patterns inside the allele-frequency range) and keeps the ``top`` pairs.

The joint distribution of a pair within each class is a 2 x 2 x k table of counts. With the
columns packed into bits (64 samples a word), the count of samples carrying both features in
class c is ``popcount(a_i & a_j & class_c)`` summed over the words; every other cell follows
from each feature's class counts. Each pair costs k popcounts a word, on every core: the
screen runs through the ``n_pairs x n_samples`` pair-samples at the rate the
``benchmarks/cases/bench_pairs.py`` results give.

Scores of a pair (``method``), from its table:

``"mi"``
    The mutual information of the pair with the classes, ``I((x_i, x_j); c)`` in bits, from
    counts only (a table of ``t log t``), so the screen is as fast as the counting.
``"jensen_shannon"``
    The class-share weighted Jensen-Shannon divergence (bits) of each class's joint
    distribution ``p(x_i, x_j | c)`` from the joint distribution ``p(x_i, x_j)``: the
    distribution-based score of ``genosift``'s ``jensen_shannon`` method, in two dimensions.
``"wasserstein"``
    The class-share weighted earth mover's distance ``W1`` between ``p(x_i, x_j | c)`` and
    ``p(x_i, x_j)`` on the square of the four presence/absence cells, one step (the Manhattan
    distance) between cells that differ in one feature: ``genosift``'s ``wasserstein``
    (``normalize=False``) in two dimensions. Transport on the square's cycle of four cells is
    a circulation: with ``g`` the running sums of the surplus around it, the cost is
    ``sum |g_k - median(g)|``, exact in a few operations.

Each kept pair also gets each feature's marginal score (the same measure of the feature alone),
the **synergy** (the joint score less the better marginal one), the interaction information
``I(x_i; x_j; c) = I((x_i, x_j); c) - I(x_i; c) - I(x_j; c)`` and, for two classes, the
epistasis test: the likelihood-ratio statistic of the product term ``x_i x_j`` in the logistic
model ``logit P(c = 1) = b0 + b1 x_i + b2 x_j + b3 x_i x_j`` (two binary features make it the
saturated model of the four cells, so the statistic is twice the gap between the cells'
binomial log-likelihood and that of the additive model, fitted by Newton's method) and its
chi2(1) p-value.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..scores.pairs import (
    ADDITIVE,
    PairCounts,
    class_masks,
    class_ones,
    covariate_lrts,
    extend_pairs,
    level_table,
    marginal_scores,
    mi_bits,
    mi_constant,
    pack_columns,
    pair_lrts,
    pair_table,
    screen_pairs,
    triple_table,
    unpack_columns,
    xlogx,
)

__all__ = ["METHODS", "PairScores", "check_pair_options", "score_pairs"]

#: The joint scores of a pair (see the module's notes).
METHODS = ("mi", "jensen_shannon", "wasserstein")


@dataclass
class PairScores:
    """The ``top`` pairs of ``score_pairs``, best first (by synergy, ties by the earlier pair).

    Attributes
    ----------
    method : str
    n_samples, n_features, n_candidates, n_pairs : int
        The samples; the features given; the candidate features screened (one per distinct
        presence pattern inside the allele-frequency range); the pairs of them screened.
    classes : ndarray
    first, second : ndarray of int
        Each pair's features (their columns in the data), ``first < second``.
    names_first, names_second : ndarray of str
    joint, marginal_first, marginal_second, synergy, interaction : ndarray
        The joint score, each feature's alone, ``joint - max(marginals)``, and the interaction
        information ``I(x_i; x_j; c)`` (bits).
    lrt, pvalue : ndarray or None
        The epistasis test of each pair (two classes), see the module's notes.
    size_first, size_second : ndarray of int
        The features sharing each one's presence pattern (the same pair for all of them).
    family_pvalue : ndarray or None
        With permutations: the share of permuted label sets whose best synergy reaches the
        pair's ``(1 + count) / (1 + permutations)``.
    triples : pandas.DataFrame or None
        With ``triples``: the best triples that extend the best pairs, by their synergy over
        their best pair (``score_pairs``).
    """

    method: str
    n_samples: int
    n_features: int
    n_candidates: int
    n_pairs: int
    classes: np.ndarray
    first: np.ndarray
    second: np.ndarray
    names_first: np.ndarray
    names_second: np.ndarray
    joint: np.ndarray
    marginal_first: np.ndarray
    marginal_second: np.ndarray
    synergy: np.ndarray
    interaction: np.ndarray
    lrt: np.ndarray | None
    pvalue: np.ndarray | None
    size_first: np.ndarray
    size_second: np.ndarray
    family_pvalue: np.ndarray | None = None
    triples: object = None

    def __repr__(self):
        best = f", best=({self.names_first[0]!s:.40}, {self.names_second[0]!s:.40})" if len(self.first) else ""
        triples = "" if self.triples is None else f", n_triples={len(self.triples)}"
        return (f"PairScores(method={self.method!r}, n_samples={self.n_samples}, n_features={self.n_features}, "
                f"n_candidates={self.n_candidates}, n_pairs={self.n_pairs}, kept={len(self.first)}{best}{triples})")

    def bonferroni(self, alpha=0.05):
        """The p-value threshold of ``alpha`` over the pairs screened."""
        return alpha / self.n_pairs if self.n_pairs else float("nan")

    def to_frame(self):
        """One row per pair kept, best first: the features, the scores, the test."""
        import pandas as pd

        frame = pd.DataFrame({
            "rank": np.arange(1, self.first.size + 1), "feature_1": self.names_first,
            "feature_2": self.names_second, "joint": self.joint, "marginal_1": self.marginal_first,
            "marginal_2": self.marginal_second, "synergy": self.synergy, "interaction": self.interaction})
        if self.lrt is not None:
            frame["lrt"], frame["pvalue"] = self.lrt, self.pvalue
        if self.family_pvalue is not None:
            frame["family_pvalue"] = self.family_pvalue
        frame["pattern_size_1"], frame["pattern_size_2"] = self.size_first, self.size_second
        return frame


def _row_chunks(m, parts):
    """The rows 0..m-2 cut into ``parts`` interleaved sets of about equal pair counts (row i
    pairs with the m - 1 - i after it): row i goes to set ``i % parts`` in a zig-zag."""
    rows = np.arange(max(m - 1, 0))
    order = np.where((rows // parts) % 2 == 0, rows % parts, parts - 1 - rows % parts)
    return [rows[order == p] for p in range(parts) if (order == p).any()]


@dataclass(frozen=True)
class _Tables:
    """What the table of every pair is counted from: the candidates' ``bits`` (``levels - 1`` rows
    of bits each), the classes' ``masks`` (``class_masks``), each row's count of carriers per class
    (``ones``), the classes' sizes ``class_n`` and the ``t log t`` table ``tlog``."""

    bits: np.ndarray
    masks: np.ndarray
    ones: np.ndarray
    class_n: np.ndarray
    tlog: np.ndarray
    levels: int = 2

    @classmethod
    def of(cls, bits, codes, k, tlog, levels=2):
        """The tables of the candidates ``bits`` for the class ``codes`` (``k`` classes)."""
        masks, class_n = class_masks(codes, k)
        return cls(bits, masks, class_ones(bits, masks), class_n, tlog, levels)

    def marginal(self, code):
        """Each candidate's own score by the method of ``code`` (``METHODS.index``)."""
        return marginal_scores(self.ones, self.class_n, self.tlog, code, self.levels)

    @property
    def counts(self):
        """The ``PairCounts`` the kernels count the tables from."""
        return PairCounts(self.bits, self.masks, self.ones, self.class_n, self.levels)


def _screen_all(tables, method_code, marginal, top, n_jobs):
    """The ``top`` pairs of every pair of the candidates of ``tables``: ``(scores, orders)`` best first."""
    from ..core.engine import map_blocks, threads

    counts = tables.counts
    m = counts.bits.shape[0] // (counts.levels - 1)
    jobs = int(n_jobs or threads())
    parts = max(1, min(m - 1, 8 * jobs))

    def one(rows):
        room = int(min(top, (m - 1 - rows).sum()))  # no more than the pairs these rows start
        scores = np.empty(room)
        orders = np.empty(room, dtype=np.int64)
        kept = screen_pairs(counts, tables.tlog, rows, method_code, marginal, room, scores, orders)
        return scores[:kept], orders[:kept]

    found = map_blocks(one, _row_chunks(m, parts), n_jobs=jobs)
    scores = np.concatenate([f[0] for f in found]) if found else np.empty(0)
    orders = np.concatenate([f[1] for f in found]) if found else np.empty(0, dtype=np.int64)
    best = np.lexsort((orders, -scores))[:top]
    return scores[best], orders[best]


@dataclass(frozen=True)
class _Candidates:
    """The features ``score_pairs`` pairs, one per distinct presence pattern: their ``bits``
    (``(m, words)``, or ``bins - 1`` rows a feature), their ``columns`` in the data, the ``sizes``
    of their patterns, every feature's name, the samples ``n``, the features ``p`` and the labels."""

    bits: np.ndarray
    columns: np.ndarray
    sizes: np.ndarray
    names: np.ndarray
    n: int
    p: int
    y: object


def _presence_candidates(source, candidates, bounds, bins=None):
    """The ``_Candidates`` of ``source``, read a block of columns at a time
    (``Source.column_blocks``: never the whole matrix, a store and a Dask collection a block at a
    time): one feature per distinct presence pattern inside the allele-frequency ``bounds``, and
    the labels (a store's or AnnData's column named by the target read). With ``bins``, each
    feature's levels 1 .. bins - 1 (``discretize``'s codes) as ``bins - 1`` rows of bits, the
    features' rows one after another, and a pattern is that of its levels."""
    import scipy.sparse as sp

    from ..core.validation import check_finite, default_feature_names
    from ..scores import af_tested

    n, p, names, blocks = source.column_blocks(owner="score_pairs")
    y = source.labels()
    if source.feature_names is not None:
        names = np.asarray(source.feature_names, dtype=object)
        if names.shape != (p,):
            raise ValueError(f"feature_names holds {names.size} names for {p} features: give one name per feature.")
    elif callable(names):
        names = np.asarray(names(), dtype=object)
    else:
        names = default_feature_names(p) if names is None else np.asarray(names, dtype=object)
    wanted = None
    if candidates is not None:
        wanted = np.asarray(candidates)
        if wanted.dtype.kind in "OUS":
            where = {str(name): j for j, name in enumerate(names)}
            missing = [str(c) for c in wanted if str(c) not in where]
            if missing:
                raise ValueError(f"candidates names {len(missing)} feature(s) the data do not have, such as "
                                 f"{missing[:5]}: give names of features (or their column indices).")
            wanted = np.array([where[str(c)] for c in wanted], dtype=np.int64)
        wanted = np.unique(wanted.astype(np.int64))
        if wanted.size and (wanted.min() < 0 or wanted.max() >= p):
            raise ValueError(f"candidates holds column indices outside [0, {p}).")
    parts, kept = [], []
    for j0, j1, block in blocks:
        columns = np.arange(j0, j1)
        if wanted is not None:
            local = wanted[(wanted >= j0) & (wanted < j1)] - j0
            if not local.size:
                continue
            block, columns = block[:, local], columns[local]
        check_finite(block, names[columns])  # the NaN policy of every score: missing values are an error
        presence = block > 0
        presence = presence.toarray() if sp.issparse(presence) else np.asarray(presence)
        carried = presence.sum(axis=0)
        if bins is None:
            keep = (carried > 0) & (carried < n)  # a constant feature pairs with nothing
        else:
            from ..scores import discretize

            codes = discretize(block.toarray() if sp.issparse(block) else block, bins=bins, max_categories=bins)
            keep = (codes != codes[:1]).any(axis=0)
        if bounds is not None:
            keep &= af_tested(carried / n, bounds)
        if keep.any():
            if bins is None:
                parts.append(pack_columns(presence[:, keep]))
            else:  # levels 1 .. bins - 1 of each feature, one feature after another
                chosen = codes[:, keep]
                levels = chosen[:, :, None] == np.arange(1, bins)[None, None, :]
                parts.append(pack_columns(levels.reshape(n, -1)))
            kept.append(columns[keep])
    words = (n + 63) // 64
    q = 1 if bins is None else bins - 1
    bits = np.concatenate(parts) if parts else np.zeros((0, words), dtype=np.uint64)
    columns = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)
    if not bits.shape[0]:
        return _Candidates(bits, columns, np.zeros(0, dtype=np.int64), names, n, p, y)
    by_feature = bits.reshape(columns.size, q * words)
    _, first, inverse = np.unique(by_feature, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # the patterns in the order of their first feature
    sizes = np.bincount(np.ravel(inverse), minlength=first.size)[order].astype(np.int64)
    first = first[order]
    return _Candidates(np.ascontiguousarray(by_feature[first].reshape(first.size * q, words)), columns[first], sizes,
                       names, n, p, y)


#: The most pairs ``score_pairs`` keeps (its ``top``, once bounded by the pairs that exist): each is
#: held by the screen and the result (some 100 bytes, times the screen's parts), so ten million
#: take about a gigabyte; a ``top`` above the pairs that exist keeps them all.
MAX_TOP = 10_000_000


def kept_pairs(top, m):
    """How many pairs to keep of the ``m * (m - 1) / 2`` pairs of ``m`` candidates: ``top``, or all of
    them when ``top`` is more; a ValueError naming ``top`` when that is above ``MAX_TOP``."""
    from ..core.messages import FixError

    wanted = min(int(top), m * (m - 1) // 2)
    if wanted > MAX_TOP:
        raise FixError(f"score_pairs keeps at most {MAX_TOP:,} pairs in memory; {wanted:,} of the {m * (m - 1) // 2:,} "
                       f"pairs of the {m:,} candidate features were asked for. Pass {{top}} or fewer (the best "
                       "ones), or narrow the candidates.", owner="score_pairs", top=MAX_TOP)
    return max(wanted, 1)


def check_pair_options(*, method="mi", top=1000, permutations=0, triples=0, bins=None, covariates=False):
    """The options of ``score_pairs`` checked before any data are read (``covariates``: whether
    some are given): ``bins`` as an int, or None; a bad value is the error naming it."""
    from ..core.validation import is_int, param_error

    if method not in METHODS:
        raise param_error("method", "score_pairs", f"one of {list(METHODS)}", method)
    for name, value, low in (("top", top, 1), ("permutations", permutations, 0), ("triples", triples, 0)):
        if not is_int(value) or value < low:
            raise param_error(name, "score_pairs", f"an int >= {low}", value)
    if bins is None:
        return None
    from ..core.messages import FixError
    from ..scores import check_bins

    bins = check_bins("score_pairs", bins, 0)[0]
    given = [name for name, value in (("covariates", covariates), ("triples", triples)) if value]
    if given:
        verb, them = ("work", "them") if len(given) > 1 else ("works", "it")
        raise FixError(" and ".join(f"{{{name}}}" for name in given) + f" {verb} on presence/absence: with {{bins}}, "
                       f"leave {them} out, or leave out {{bins}}.", owner="score_pairs", bins=FixError.ANY,
                       **{name: FixError.ANY for name in given})
    if method == "wasserstein":
        raise FixError("The wasserstein joint score is of presence/absence pairs: with {bins}, choose mi or "
                       "jensen_shannon in {method}, or leave out {bins}.", owner="score_pairs", bins=FixError.ANY,
                       method=FixError.ANY)
    return bins


def score_pairs(X, y, *, method="mi", top=1000, candidates=None, min_af=None, max_af=None, feature_names=None,
                covariates=None, permutations=0, seed=0, triples=0, bins=None, chunk_bytes=None, n_jobs=None):
    """Screen every pair of features for the classes they explain together; keep the ``top``.

    Parameters
    ----------
    X : array-like (n_samples, n_features), scipy.sparse matrix, DataFrame, AnnData in memory,
        Dask array or DataFrame, a data file, or a store (a ``.gs.h5ad`` path or
        ``genosift.io.Store``)
        Read as presence/absence (a value above 0 is presence), one block of columns at a time
        (within ``chunk_bytes``): memory holds the candidates' bits (``n / 8`` bytes each), not
        the matrix (a store or a Dask collection is never loaded whole).
    y : array-like (n_samples,) or str
        Class labels (two or more classes); for a store or an AnnData also the name of a column
        of its sample table.
    method : {"mi", "jensen_shannon", "wasserstein"}
        The joint score of a pair (see the module's notes); ``"wasserstein"`` of presence/absence.
    top : int
        The pairs kept, by synergy: the joint score less the better of the two features' own.
    candidates : sequence of int or str, optional
        The features to pair (column indices or names); by default all.
    min_af, max_af : float, optional
        Pair only the features carried by a share of the samples in ``[min_af, max_af]``.
    feature_names : sequence of str, optional
    covariates : array-like (n_samples, c), optional
        For two classes: the epistasis test of each kept pair adjusts for them (a logistic fit per
        pair, ``covariate_lrts``). The screen itself is of the pairs' tables.
    permutations : int
        Also score the best pair under that many permutations of the labels (``seed``): each
        kept pair's ``family_pvalue``.
    triples : int
        Also extend each of the ``triples`` best pairs by every other candidate feature: each
        triple's joint mutual information with the classes (its 8 cells), the best of its three
        pairs' and its synergy (the joint less that best pair's); the ``top`` triples by synergy
        are ``PairScores.triples``.
    bins : int, optional
        Levels instead of presence/absence: a feature whose values are at most ``bins`` distinct
        integers keeps them (SNP dosages 0/1/2 with ``bins=3``, small counts), any other is cut
        into ``bins`` equal-frequency bins (genosift's discretisation, as ``chi2`` and ``mi``
        read features: ``genosift.scores.discretize``); each pair's table is then ``bins x bins``
        by class. The epistasis test, covariates and triples are of presence/absence only.
    chunk_bytes : int, optional
        The budget of a block of columns read (default ``genosift.core.engine.CHUNK_BYTES``).
    n_jobs : int, optional
        Threads (default ``genosift.core.engine.threads()``).

    Returns
    -------
    PairScores

    Features with the same presence pattern are screened once (the pair found stands for the
    pairs of their patterns; ``size_first`` and ``size_second`` say how many), a constant
    feature not at all.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(200, 30))
    >>> y = X[:, 4] ^ X[:, 17]  # an XOR: neither feature tells the class alone
    >>> res = score_pairs(X, y, top=3)
    >>> int(res.first[0]), int(res.second[0]), round(float(res.synergy[0]), 2)
    (4, 17, 1.0)
    """
    from ..scores import check_af
    from ..sources import as_source

    bins = check_pair_options(method=method, top=top, permutations=permutations, triples=triples, bins=bins,
                              covariates=covariates is not None)
    bounds = check_af(min_af, max_af, "score_pairs")
    data = as_source(X, y, owner="score_pairs", feature_names=feature_names, labels_required=True)
    # chunk_bytes sizes the blocks read here, of every form
    found = _presence_candidates(replace(data, chunk_bytes=chunk_bytes), candidates, bounds, bins)
    return _pairs_of(found, _Screen(method, top, permutations, seed, triples, 2 if bins is None else bins), covariates,
                     n_jobs)


@dataclass(frozen=True)
class _Screen:
    """What ``score_pairs`` screens the candidates for: the joint score ``method``, the ``top``
    pairs kept, the ``permutations`` of the labels (by ``seed``), the ``triples`` best pairs
    extended, and the ``levels`` of a feature (2: presence/absence)."""

    method: str
    top: int
    permutations: int
    seed: int
    triples: int
    levels: int


def _pairs_of(found, screen, covariates, n_jobs):
    """The ``PairScores`` of the candidates ``found`` (``_Candidates``) as ``screen`` asks."""
    levels = screen.levels
    bits, columns, sizes, names, n = found.bits, found.columns, found.sizes, found.names, found.n
    m = bits.shape[0] // (levels - 1)
    top = kept_pairs(screen.top, m)
    classes, codes, Z = _classes_of(found.y, n, covariates)
    k = classes.size
    tables = _Tables.of(bits, codes, k, np.array([xlogx(float(t)) for t in range(n + 1)]), levels)
    code = METHODS.index(screen.method)
    marginal = tables.marginal(code)
    scores, orders = _screen_all(tables, code, marginal, top, n_jobs)
    first, second = orders // max(m, 1), orders % max(m, 1)
    joint = scores + np.maximum(marginal[first], marginal[second])
    mi = marginal if code == 0 else tables.marginal(0)
    pair_mi = [_mi_of(tables, i, j) for i, j in zip(first, second)]
    interaction = np.array(pair_mi, dtype=np.float64) - mi[first] - mi[second]
    lrt, pvalue = _epistasis(tables, codes, first, second, Z) if k == 2 and levels == 2 else (None, None)
    family = None
    if screen.permutations:
        family = _family_pvalues(tables, codes, k, code, scores, screen, n_jobs)
    triples = None
    if screen.triples:
        triples = _triples_frame(tables, first[:screen.triples].astype(np.int64),
                                 second[:screen.triples].astype(np.int64), top, n_jobs, columns, names, sizes)
    return PairScores(screen.method, n, found.p, m, m * (m - 1) // 2, classes, columns[first], columns[second],
                      names[columns[first]], names[columns[second]], joint, marginal[first], marginal[second],
                      scores, interaction, lrt, pvalue, sizes[first], sizes[second], family, triples)


def _classes_of(y, n, covariates):
    """``(classes, codes, Z)``: the classes of the labels ``y`` (two or more), each sample's code,
    and the checked covariates (two classes only; None without)."""
    from ..core.validation import as_labels

    labels = as_labels(y, n)
    classes, codes = np.unique(labels, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"score_pairs compares classes, and y has {classes.size}: give labels of two classes or "
                         "more.")
    k = classes.size
    Z = None
    if covariates is not None:
        from ..scores import check_covariates

        if k != 2:
            raise ValueError("score_pairs adjusts the epistasis test of two classes for covariates; y has "
                             f"{k} classes. Leave out covariates, or give labels of two classes.")
        Z, _ = check_covariates(covariates, n, owner="score_pairs")
    return classes, codes, Z


def _epistasis(tables, codes, first, second, Z):
    """``(lrt, pvalue)``: the epistasis test of the pairs ``(first, second)`` of two presence/absence
    features and two classes, adjusted for the covariates ``Z`` where there are some."""
    from scipy import special

    if Z is not None:
        bits, n = tables.bits, codes.size
        pair_columns = np.unique(np.r_[first, second])
        presence = unpack_columns(bits[pair_columns], n)
        at = {int(c): q for q, c in enumerate(pair_columns)}
        lrt = covariate_lrts(presence, codes, np.array([at[int(i)] for i in first]),
                             np.array([at[int(j)] for j in second]), Z)
    else:
        lrt = pair_lrts(tables.counts, first.astype(np.int64), second.astype(np.int64), ADDITIVE)
    return lrt, special.chdtrc(1, lrt)


def _family_pvalues(tables, codes, k, code, scores, screen, n_jobs):
    """Each kept pair's share of ``screen.permutations`` permuted label sets whose best synergy
    reaches its ``scores``: ``(1 + count) / (1 + permutations)``."""
    rng = np.random.default_rng(screen.seed)
    best = np.empty(screen.permutations)
    for r in range(screen.permutations):
        shuffled = _Tables.of(tables.bits, rng.permutation(codes), k, tables.tlog, tables.levels)
        best[r] = _screen_all(shuffled, code, shuffled.marginal(code), 1, n_jobs)[0][0]
    return (1.0 + (best[None, :] >= scores[:, None]).sum(axis=1)) / (1.0 + screen.permutations)


def _triples_frame(tables, first, second, top, n_jobs, columns, names, sizes):
    """The ``top`` triples that extend the pairs ``(first, second)`` (positions) by a third
    candidate, as a table, best first."""
    import pandas as pd

    from ..core.engine import map_blocks, threads

    m, counts = tables.bits.shape[0], tables.counts
    jobs = int(n_jobs or threads())
    room = 3 * top  # a triple comes back once per pair of it among those extended

    def one(rows):
        scores = np.empty(room)
        orders = np.empty(room, dtype=np.int64)
        kept = extend_pairs(counts, tables.tlog, first, second, rows, room, scores, orders)
        return scores[:kept], orders[:kept]

    chunks = np.array_split(np.arange(first.size), max(1, min(first.size, 8 * jobs)))
    found = map_blocks(one, [c for c in chunks if c.size], n_jobs=jobs) if m >= 3 else []
    scores = np.concatenate([s for s, _ in found]) if found else np.empty(0)
    orders = np.concatenate([o for _, o in found]) if found else np.empty(0, dtype=np.int64)
    orders, where = np.unique(orders, return_index=True)
    scores = scores[where]
    best = np.lexsort((orders, -scores))[:top]
    scores, orders = scores[best], orders[best]
    trio = [orders // (m * m), orders // m % m, orders % m]
    joint = np.array([_triple_mi(tables, a, b, c) for a, b, c in zip(*trio)])
    frame = pd.DataFrame({"rank": np.arange(1, scores.size + 1), "feature_1": names[columns[trio[0]]],
                          "feature_2": names[columns[trio[1]]], "feature_3": names[columns[trio[2]]],
                          "joint": joint, "best_pair": joint - scores, "synergy": scores})
    for q, x in enumerate(trio, 1):
        frame[f"pattern_size_{q}"] = sizes[x]
    return frame


def _triple_mi(tables, a, b, c):
    k, class_n, tlog = tables.masks.shape[0], tables.class_n, tables.tlog
    cells = np.zeros(8 * k, dtype=np.int64)
    triple_table(tables.counts, int(a), int(b), int(c), cells)
    n = int(class_n.sum())
    return mi_bits(cells, k, n, mi_constant(n, class_n, tlog), tlog, 8)


def _mi_of(tables, i, j):
    k, class_n, tlog, levels = tables.masks.shape[0], tables.class_n, tables.tlog, tables.levels
    cells = np.zeros(levels * levels * k, dtype=np.int64)
    if levels == 2:
        pair_table(tables.counts, int(i), int(j), cells)
    else:
        level_table(tables.counts, int(i), int(j), cells)
    n = int(class_n.sum())
    return mi_bits(cells, k, n, mi_constant(n, class_n, tlog), tlog, levels * levels)
