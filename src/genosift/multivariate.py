"""Multivariate selectors: a greedy redundancy filter and incremental mRMR.

Both rank the features by a registered score (or a callable) and then account for redundancy by
comparing candidates only with the features already chosen: never a p x p matrix, never a dense
copy of sparse input (at most a dense block of the chosen columns and one bounded block of
candidates).

Pearson correlations centre every column before its products with the chosen features (dense
input), or use ``X^T z - mean * sum(z)`` with ``z`` the centred chosen feature, whose sum is zero
up to rounding (sparse input). Means and spreads are two-pass (the filter, from each block of
candidates) or from ``genosift.stats.ClassMoments`` (mRMR, all features at once). A constant
feature has no correlation: it counts as 0 wherever a correlation with it is needed.
"""
from __future__ import annotations

import numbers
import warnings
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._anndata import AnnDataTransformMixin, fit_accepts_anndata
from ._validation import as_matrix, check_fit_input, default_feature_names, param_error
from .engine import block_width, column_blocks
from .scores import REGISTRY, get_method, rank_order, score
from .scores._discretize import check_options, discretize, n_codes
from .stats import ClassMoments

_JIT = dict(nogil=True, cache=True)
_TILE = 1024  # columns per task of the compiled passes over all features


# --------------------------------------------------------------------------------------------
# compiled passes over every feature against one chosen feature
# --------------------------------------------------------------------------------------------

@njit(parallel=True, **_JIT)
def _centred_dot_rows(X, mean, z, tile):
    """``sum_i (X[i, j] - mean[j]) z[i]`` for every column of a C-contiguous ``X``, in float64."""
    n, p = X.shape
    out = np.zeros(p)
    for g in prange((p + tile - 1) // tile):
        j0 = g * tile
        j1 = min(p, j0 + tile)
        m = mean[j0:j1]
        acc = np.zeros(j1 - j0)
        for i in range(n):
            row = X[i, j0:j1]
            zi = z[i]
            for q in range(j1 - j0):
                acc[q] += (row[q] - m[q]) * zi
        out[j0:j1] = acc
    return out


@njit(parallel=True, **_JIT)
def _centred_dot_columns(X, mean, z):
    """The same for an F-contiguous ``X``: one column at a time, rows in memory order."""
    n, p = X.shape
    out = np.zeros(p)
    for j in prange(p):
        acc = 0.0
        for i in range(n):
            acc += (X[i, j] - mean[j]) * z[i]
        out[j] = acc
    return out


@njit(**_JIT)
def _table_information(table, count, n):
    """Mutual information (nats) of a (codes x codes) table whose column sums are ``count``."""
    info = 0.0
    for a in range(table.shape[0]):
        row = 0.0
        for c in range(table.shape[1]):
            row += table[a, c]
        for c in range(table.shape[1]):
            t = table[a, c]
            if t > 0:
                info += t * np.log(t * n / (row * count[c]))
    return max(info / n, 0.0)


@njit(parallel=True, **_JIT)
def _dense_information(codes, s, count, tile):
    """Mutual information of every column of the code matrix (n, p) with the codes ``s``."""
    n, p = codes.shape
    L = count.shape[0]
    out = np.zeros(p)
    for g in prange((p + tile - 1) // tile):
        j0 = g * tile
        j1 = min(p, j0 + tile)
        tables = np.zeros((j1 - j0, L, L))
        for i in range(n):
            c = s[i]
            row = codes[i, j0:j1]
            for q in range(j1 - j0):
                tables[q, row[q], c] += 1.0
        for q in range(j1 - j0):
            out[j0 + q] = _table_information(tables[q], count, n)
    return out


@njit(parallel=True, **_JIT)
def _sparse_information(data, rows, indptr, s, count, n):
    """The same for CSC codes whose unstored entries are code 0 (stored codes are >= 1)."""
    p = indptr.shape[0] - 1
    L = count.shape[0]
    out = np.zeros(p)
    for j in prange(p):
        table = np.zeros((L, L))
        for e in range(indptr[j], indptr[j + 1]):
            table[data[e], s[rows[e]]] += 1.0
        for c in range(L):
            stored = 0.0
            for a in range(1, L):
                stored += table[a, c]
            table[0, c] = count[c] - stored
        out[j] = _table_information(table, count, n)
    return out


class _Block:
    """Columns ``cols`` of a checked matrix, with their means and norms (two-pass, from the block).

    Dense columns are held centred (float64); sparse ones as a CSC block, centred on the fly.
    """

    def __init__(self, B, cols):
        n = B.shape[0]
        self.cols = cols
        if sp.issparse(B):
            self.B = B
            self.mean = np.asarray(B.sum(axis=0)).ravel() / n
            stored = np.diff(B.indptr)
            dev = B.data - np.repeat(self.mean, stored)
            m2 = np.bincount(np.repeat(np.arange(len(cols)), stored), weights=dev * dev, minlength=len(cols))
            m2 += (n - stored) * self.mean**2
            self.constant = (B.max(axis=0).toarray() == B.min(axis=0).toarray()).ravel()
        else:
            self.constant = B.max(axis=0) == B.min(axis=0)
            self.mean = B.mean(axis=0)
            B -= self.mean  # B is the block's own copy
            self.B = B
            m2 = np.einsum("ij,ij->j", B, B)
        self.norm = np.sqrt(m2)

    def unit(self, q):
        """Column ``q`` of the block centred and scaled to unit norm (dense float64)."""
        if sp.issparse(self.B):
            return (self.B[:, [q]].toarray().ravel() - self.mean[q]) / self.norm[q]
        return self.B[:, q] / self.norm[q]

    def correlate(self, Z, start=0):
        """``r`` (columns from ``start`` on, m) with the centred unit vectors ``Z`` (n, m)."""
        B = self.B[:, start:]
        num = np.asarray(B.T @ Z)
        if sp.issparse(B):
            num -= np.outer(self.mean[start:], Z.sum(axis=0))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = num / self.norm[start:, None]
        r[self.constant[start:]] = 0.0
        return r


class _Candidates:
    """Blocks of chosen columns of a checked matrix, never densifying sparse input.

    Sparse columns are first gathered from the CSR matrix (a pass over its non-zeros each);
    after a few gathers the matrix is converted to CSC once, so a long walk pays one copy.
    """

    _CSR_GATHERS = 4

    def __init__(self, M):
        self.M = M
        self.gathers = 0

    @cached_property
    def _csc(self):
        return self.M.tocsc()

    def block(self, cols):
        if not sp.issparse(self.M):
            return _Block(np.asarray(self.M[:, cols], dtype=np.float64), cols)
        self.gathers += 1
        source = self.M if self.gathers <= self._CSR_GATHERS else self._csc
        return _Block(sp.csc_matrix(source[:, cols], dtype=np.float64), cols)


class _Correlations:
    """Pearson correlations of every feature with one chosen feature, in one pass over X.

    Means and spreads come from ``genosift.stats.ClassMoments`` (Chan's updates; a constant
    feature has exactly zero spread). Dense columns are centred inside the compiled pass; sparse
    ones use ``X^T z - mean * sum(z)`` with ``z`` centred.
    """

    def __init__(self, M, names):
        moments = ClassMoments.from_chunk(M, feature_names=names)  # also the non-finite check
        self.M = M.astype(np.float64, copy=False) if sp.issparse(M) else M
        self.mean = moments.means()[0]
        self.norm = np.sqrt(moments.m2[0])
        self.constant = moments.m2[0] == 0

    def __call__(self, j):
        """``|r|`` (p,) of every feature with feature ``j`` (0 for constant features)."""
        M = self.M
        x = M[:, [j]].toarray().ravel() if sp.issparse(M) else M[:, j].astype(np.float64)
        z = (x - self.mean[j]) / self.norm[j]
        if sp.issparse(M):
            num = M.T @ z - self.mean * z.sum()
        elif M.flags.c_contiguous:
            num = _centred_dot_rows(M, self.mean, z, _TILE)
        else:
            num = _centred_dot_columns(M, self.mean, z)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.abs(num / self.norm)
        r[self.constant] = 0.0
        return r


class _Codes:
    """Category codes of every feature (the rule of ``genosift.scores._discretize``) and the
    mutual information of all features with one of them.

    Dense input keeps the codes as an (n, p) matrix of one-byte integers (an eighth of a float64
    copy); sparse input keeps them sparse: each column's codes are relabelled so that the code of
    its zeros is 0 (mutual information does not depend on the labels), so they are stored only
    where X has a value.
    """

    def __init__(self, M, bins, max_categories):
        self.n = M.shape[0]
        self.L = n_codes(bins, max_categories)
        dtype = np.min_scalar_type(self.L - 1)
        width = block_width(self.n, block_bytes=16 * 2**20)  # discretising needs a few copies of a block
        if sp.issparse(M):
            parts = []
            for _, _, block in column_blocks(M, width):
                codes = discretize(block, bins=bins, max_categories=max_categories)
                zero = block == 0
                zero_code = codes[zero.argmax(axis=0), np.arange(block.shape[1])] * zero.any(axis=0)
                parts.append(sp.csc_matrix(((codes - zero_code) % self.L).astype(dtype)))
            self.codes = sp.hstack(parts, format="csc")
            self.codes.eliminate_zeros()
        else:
            self.codes = np.empty(M.shape, dtype=dtype)
            for j0, j1, block in column_blocks(M, width):
                self.codes[:, j0:j1] = discretize(block, bins=bins, max_categories=max_categories)

    def information(self, j):
        """Mutual information (nats) of every feature with feature ``j``: (p,)."""
        C = self.codes
        s = (C[:, [j]].toarray().ravel() if sp.issparse(C) else C[:, j]).astype(np.intp)
        count = np.bincount(s, minlength=self.L).astype(np.float64)
        if sp.issparse(C):
            return _sparse_information(C.data, C.indices, C.indptr, s, count, float(self.n))
        return _dense_information(C, s, count, _TILE)


# --------------------------------------------------------------------------------------------
# selectors
# --------------------------------------------------------------------------------------------

def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class _RankedSelector(AnnDataTransformMixin, SelectorMixin, BaseEstimator):
    """Shared by the multivariate selectors: the score that ranks the features, input checks."""

    _score_param, _params_param = "score_func", "score_params"  # the score and its options

    def _score_spec(self):
        func = getattr(self, self._score_param)
        if callable(func):
            return None
        try:
            return get_method(func)
        except ValueError:
            raise param_error(self._score_param, type(self).__name__,
                              f"a callable or one of {sorted(REGISTRY)}", func) from None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        func = getattr(self, self._score_param)
        spec = REGISTRY.get(func) if isinstance(func, str) else None
        tags.target_tags.required = spec is None or spec.task != "unsupervised"
        tags.input_tags.sparse = True
        return tags

    def _check_k(self, n_features):
        if not _is_int(self.k) or not 1 <= self.k <= n_features:
            raise param_error("k", type(self).__name__, f"an int in [1, n_features] (n_features = {n_features})", self.k)

    def _score_features(self, X, y):
        """Validate ``X`` and score its features: ``(X, scores, pvalues)``."""
        params = getattr(self, self._params_param)
        if params is not None and not isinstance(params, dict):
            raise param_error(self._params_param, type(self).__name__, "a dict or None", params)
        spec = self._score_spec()
        check_fit_input(X, y, supervised=spec is None or spec.task != "unsupervised")
        kwargs = dict(accept_sparse=("csr", "csc"), dtype="numeric", reset=True, ensure_all_finite=spec is None)
        if spec is not None and spec.task == "unsupervised":
            X = validate_data(self, X, **kwargs)
        else:
            X, y = validate_data(self, X, y, **kwargs)
        X, _ = as_matrix(X)  # canonical CSR (a copy only if the input is not), or a numeric ndarray
        self._check_k(X.shape[1])
        if spec is None:
            out = getattr(self, self._score_param)(X, y)
            scores, pvalues = out if isinstance(out, (tuple, list)) else (out, None)
            scores = np.asarray(scores, dtype=np.float64)
            if scores.shape != (X.shape[1],):
                raise ValueError(f"The '{self._score_param}' callable of {type(self).__name__} must return one "
                                 f"score per feature, shape ({X.shape[1]},). Got shape {scores.shape} instead.")
            return X, scores, None if pvalues is None else np.asarray(pvalues, dtype=np.float64)
        res = score(X, y, method=spec.name, feature_names=getattr(self, "feature_names_in_", None), **(params or {}))
        return X, res.scores, res.pvalues

    def _names(self):
        names = getattr(self, "feature_names_in_", None)
        return default_feature_names(self.n_features_in_) if names is None else names

    def _get_support_mask(self):
        check_is_fitted(self, "selected_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.selected_] = True
        return mask


def _greedy_walk(candidates, order, k, max_corr):
    """Keep ``order``'s features unless |r| with a kept one exceeds ``max_corr``, until ``k`` are kept.

    Candidates are taken in blocks (doubling from ``max(64, 2k)`` up to a 64 MiB dense block);
    each block is correlated with the features kept before it in one product, then walked in
    order: every time one of its candidates is kept, the rest of the block is correlated with it.
    Returns ``(kept, rejected, most correlated kept feature of each rejected, that |r|)``.
    """
    n = candidates.M.shape[0]
    Z = np.empty((n, k))
    kept, rejected, by, corr = [], [], [], []
    limit = block_width(n)
    width = min(limit, max(64, 2 * k))
    start = 0
    while len(kept) < k and start < len(order):
        block = candidates.block(order[start:start + width])
        cols = block.cols
        start += width
        width = min(limit, 2 * width)
        best = np.zeros(len(cols))
        arg = np.full(len(cols), -1)
        if kept:
            r = np.abs(block.correlate(Z[:, :len(kept)]))
            best, arg = r.max(axis=1), np.asarray(kept)[r.argmax(axis=1)]
        eligible = ~block.constant
        t = 0
        while t < len(cols) and len(kept) < k:
            ok = np.flatnonzero(eligible[t:] & (best[t:] <= max_corr))
            u = t + ok[0] if ok.size else len(cols)
            rejected.append(cols[t:u])
            by.append(np.where(eligible[t:u], arg[t:u], -1))
            corr.append(np.where(eligible[t:u], best[t:u], np.nan))
            if u == len(cols):
                break
            Z[:, len(kept)] = block.unit(u)
            kept.append(cols[u])
            if u + 1 < len(cols):
                r = np.abs(block.correlate(Z[:, len(kept) - 1:len(kept)], start=u + 1))[:, 0]
                higher = r > best[u + 1:]
                best[u + 1:][higher] = r[higher]
                arg[u + 1:][higher] = cols[u]
            t = u + 1
    join = lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)  # noqa: E731
    return (np.asarray(kept, dtype=np.intp), join(rejected, np.intp), join(by, np.intp), join(corr, np.float64))


class RedundancyFilter(_RankedSelector):
    """Keep the best-scoring features that are not too correlated with a better one.

    Rank the features by the score, keep the best, then walk down the ranking: a candidate is
    kept if its absolute Pearson correlation with every feature kept so far is at most
    ``max_corr``, until ``k`` are kept. Correlations are computed only against the kept features
    (O(k n) per candidate, in blocks of candidates; never a p x p matrix), and sparse input is
    never densified, so the walk scales to millions of candidates.

    Parameters
    ----------
    score_func : str or callable, default="fisher"
        A method name from ``genosift.methods()``, or ``f(X, y) -> scores`` /
        ``-> (scores, pvalues)`` as in scikit-learn.
    k : int, default=25
        Number of features to keep, in [1, n_features].
    max_corr : float in [0, 1], default=0.7
        Largest absolute correlation allowed with a kept feature.
    score_params : dict, optional
        Options of the method.

    Attributes
    ----------
    scores_, pvalues_ : ndarray (n_features,)
        The score of every feature (``pvalues_`` None without a test).
    ranking_ : ndarray (n_features,)
        Feature indices, best score first (NaN last, ties by lower index).
    selected_ : ndarray
        The kept features, in the order they were kept (their ranking order).
    rejected_ : ndarray
        The candidates examined and rejected, in ranking order.
    rejected_by_ : ndarray
        For each rejected candidate, the kept feature it is most correlated with (among those
        kept before it was examined), or -1 for a constant candidate.
    rejected_corr_ : ndarray
        That absolute correlation (NaN for a constant candidate).

    Notes
    -----
    Features with a NaN score are never examined. A constant feature has no correlation and no
    information: it is never kept (it appears in ``rejected_`` with ``rejected_by_ == -1``). If
    fewer than ``k`` features qualify, fewer are kept, with a warning. ``to_frame()`` lists every
    examined candidate and why it was dropped.

    Examples
    --------
    >>> import pandas as pd, genosift as gs
    >>> X, y, names = gs.load_golub()
    >>> genes = pd.DataFrame(X, columns=names)
    >>> sel = gs.RedundancyFilter(score_func="fisher", k=3, max_corr=0.7).fit(genes, y)
    >>> genes.columns[sel.selected_].tolist()  # in the order kept
    ['M27891_at', 'X95735_at', 'X74262_at']
    >>> sel.to_frame().loc[:3, ["feature", "rank", "kept", "correlated_with"]]
         feature  rank   kept correlated_with
    0  M27891_at     1   True            <NA>
    1  D88422_at     2  False       M27891_at
    2  X95735_at     3   True            <NA>
    3  M23197_at     4  False       X95735_at
    """

    def __init__(self, score_func="fisher", *, k=25, max_corr=0.7, score_params=None):
        self.score_func = score_func
        self.k = k
        self.max_corr = max_corr
        self.score_params = score_params

    @fit_accepts_anndata
    def fit(self, X, y=None):
        """Score the features of ``X`` against ``y`` and walk down the ranking."""
        if not _is_real(self.max_corr) or not 0 <= self.max_corr <= 1:
            raise param_error("max_corr", "RedundancyFilter", "a number in [0, 1]", self.max_corr)
        if not _is_int(self.k) or self.k < 1:
            raise param_error("k", "RedundancyFilter", "an int in [1, n_features]", self.k)
        X, self.scores_, self.pvalues_ = self._score_features(X, y)
        self.ranking_ = rank_order(self.scores_)
        order = self.ranking_[:np.count_nonzero(~np.isnan(self.scores_))]
        self.selected_, self.rejected_, self.rejected_by_, self.rejected_corr_ = _greedy_walk(
            _Candidates(X), order, self.k, float(self.max_corr))
        if len(self.selected_) < self.k:
            warnings.warn(
                f"RedundancyFilter kept {len(self.selected_)} of k={self.k} features: the others have a "
                f"NaN score, are constant, or are correlated above max_corr={self.max_corr} with a kept "
                "feature. Raise max_corr or lower k.", UserWarning)
        return self

    def to_frame(self):
        """Every examined candidate in ranking order: feature, score, rank, kept, correlated_with, abs_corr."""
        import pandas as pd

        check_is_fitted(self, "selected_")
        names = np.asarray(self._names(), dtype=object)
        examined = np.concatenate([self.selected_, self.rejected_])
        ranks = np.empty(len(self.ranking_), dtype=np.intp)
        ranks[self.ranking_] = np.arange(1, len(self.ranking_) + 1)
        with_names = np.where(self.rejected_by_ >= 0, names[np.maximum(self.rejected_by_, 0)], None)
        frame = pd.DataFrame({
            "feature": names[examined],
            "score": self.scores_[examined],
            "rank": ranks[examined],
            "kept": np.arange(len(examined)) < len(self.selected_),
            # pandas' nullable string type: a kept feature shows <NA> under every pandas version
            "correlated_with": pd.array(np.concatenate([np.full(len(self.selected_), None, dtype=object), with_names]),
                                        dtype="string"),
            "abs_corr": np.concatenate([np.full(len(self.selected_), np.nan), self.rejected_corr_]),
        })
        return frame.sort_values("rank", kind="stable").reset_index(drop=True)


class MRMR(_RankedSelector):
    """Minimum redundancy, maximum relevance: choose features one at a time.

    The first feature is the most relevant. Each next one maximises, over the features not yet
    chosen, ``relevance - redundancy`` (``scheme="difference"``) or ``relevance / redundancy``
    (``"quotient"``), where redundancy is the mean over the chosen features of ``|r|``
    (``redundancy="pearson"``) or of the mutual information of the discretised features
    (``"mi"``). A running sum of redundancy is kept for every feature and updated against the
    newly chosen feature only: O(n p) time per step, memory O(p + k n) beyond the input (and
    the codes of X with ``redundancy="mi"``).

    Parameters
    ----------
    k : int, default=50
        Number of features to choose, in [1, n_features].
    relevance : str or callable, default="anova"
        A method name from ``genosift.methods()``, or ``f(X, y) -> scores`` /
        ``-> (scores, pvalues)``. Features with a NaN relevance are never chosen.
    redundancy : {"pearson", "mi"}, default="pearson"
        ``"mi"``: mutual information (nats) between the features' category codes, by the rule of
        the ``mi`` method (``bins`` equal-frequency bins, integer features with at most
        ``max_categories`` values kept as they are). It holds the codes of X, one byte per
        value, for dense input; sparse input keeps them sparse.
    scheme : {"difference", "quotient"}, default="difference"
    min_redundancy : float, default=1e-3
        Every pairwise redundancy term (``|r|`` or mutual information) counts as at least this
        much, so that the quotient stays finite; must be > 0 with ``scheme="quotient"``, and 0
        gives the plain mean with ``"difference"``. With ``relevance="anova"``,
        ``redundancy="pearson"`` and ``scheme="quotient"``, the default reproduces
        ``mrmr_selection.mrmr_classif`` (F-statistic relevance, mean |r| floored at 0.001).
    relevance_params : dict, optional
        Options of the relevance method.
    bins, max_categories : int, default=5
        Discretisation for ``redundancy="mi"``.

    Attributes
    ----------
    relevance_ : ndarray (n_features,)
        Relevance of every feature.
    selected_ : ndarray (k,)
        The chosen features, in the order they were chosen.
    selected_relevance_, selected_redundancy_, selected_scores_ : ndarray (k,)
        In selection order: relevance, mean redundancy with the features chosen before it (NaN
        for the first), and the mRMR score that chose it (the relevance for the first).

    Notes
    -----
    Two edge cases differ from ``mrmr_selection``: it never chooses a feature whose relevance is
    0 (here one is chosen only when nothing better is left), and it scores a candidate whose mean
    redundancy is exactly 1 (a copy of every chosen feature) as 0.

    Examples
    --------
    >>> import pandas as pd, genosift as gs
    >>> X, y, names = gs.load_golub()
    >>> genes = pd.DataFrame(X, columns=names)
    >>> sel = gs.MRMR(k=4, relevance="mi", redundancy="mi").fit(genes, y)
    >>> sel.to_frame().round(3)
              feature  relevance  redundancy  score
    0       X51521_at      0.462         NaN  0.462
    1  M31303_rna1_at      0.367       0.304  0.063
    2  U50136_rna1_at      0.387       0.325  0.062
    3     M27783_s_at      0.456       0.425  0.030
    """

    _score_param, _params_param = "relevance", "relevance_params"

    def __init__(self, k=50, *, relevance="anova", redundancy="pearson", scheme="difference",
                 min_redundancy=1e-3, relevance_params=None, bins=5, max_categories=5):
        self.k = k
        self.relevance = relevance
        self.redundancy = redundancy
        self.scheme = scheme
        self.min_redundancy = min_redundancy
        self.relevance_params = relevance_params
        self.bins = bins
        self.max_categories = max_categories

    def _check_params(self):
        if not _is_int(self.k) or self.k < 1:
            raise param_error("k", "MRMR", "an int in [1, n_features]", self.k)
        if self.redundancy not in ("pearson", "mi"):
            raise param_error("redundancy", "MRMR", "'pearson' or 'mi'", self.redundancy)
        if self.scheme not in ("difference", "quotient"):
            raise param_error("scheme", "MRMR", "'difference' or 'quotient'", self.scheme)
        if not _is_real(self.min_redundancy) or not self.min_redundancy >= 0:
            raise param_error("min_redundancy", "MRMR", "a number >= 0", self.min_redundancy)
        if self.scheme == "quotient" and self.min_redundancy == 0:
            raise param_error("min_redundancy", "MRMR", "> 0 with scheme='quotient' (it bounds the divisor)",
                              self.min_redundancy)
        return check_options("MRMR", self.bins, self.max_categories)

    @fit_accepts_anndata
    def fit(self, X, y=None):
        """Score the relevance of every feature, then choose ``k`` of them one at a time."""
        bins, max_categories = self._check_params()
        X, relevance, _ = self._score_features(X, y)
        self.relevance_ = relevance
        if self.redundancy == "pearson":
            terms = _Correlations(X, getattr(self, "feature_names_in_", None))
        else:
            terms = _Codes(X, bins, max_categories).information
        open_ = ~np.isnan(relevance)
        total = np.zeros(len(relevance))
        chosen, redundancy, scores = [], [], []
        for step in range(self.k):
            if not open_.any():
                break
            if step == 0:
                mean, crit = np.full(len(relevance), np.nan), relevance
            else:
                mean = total / step
                crit = relevance - mean if self.scheme == "difference" else relevance / mean
            j = int(np.argmax(np.where(open_, crit, -np.inf)))
            chosen.append(j)
            redundancy.append(mean[j])
            scores.append(crit[j])
            open_[j] = False
            if step + 1 < self.k:
                total += np.maximum(terms(j), self.min_redundancy)
        self.selected_ = np.asarray(chosen, dtype=np.intp)
        self.selected_relevance_ = relevance[self.selected_]
        self.selected_redundancy_ = np.asarray(redundancy, dtype=np.float64)
        self.selected_scores_ = np.asarray(scores, dtype=np.float64)
        if len(chosen) < self.k:
            warnings.warn(f"MRMR chose {len(chosen)} of k={self.k} features: the others have a NaN relevance.",
                          UserWarning)
        return self

    def to_frame(self):
        """The chosen features in selection order: feature, relevance, redundancy, score."""
        import pandas as pd

        check_is_fitted(self, "selected_")
        return pd.DataFrame({
            "feature": np.asarray(self._names(), dtype=object)[self.selected_],
            "relevance": self.selected_relevance_,
            "redundancy": self.selected_redundancy_,
            "score": self.selected_scores_,
        })
