"""Minimum redundancy, maximum relevance (mRMR), chosen incrementally.

A running sum of redundancy is kept for every feature and updated against the newly chosen one
only: never a p x p matrix, never a dense copy of sparse input. Pearson correlations take means
and spreads from ``genosift.stats.ClassMoments`` (all features at once); dense columns are
centred inside compiled passes, sparse ones use ``X^T z - mean * sum(z)``. Mutual information is
computed from one-byte category codes of the features (kept sparse for sparse input).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from sklearn.utils.validation import check_is_fitted

from ..core.engine import BLOCK_BYTES, block_width, column_blocks
from ..core.validation import is_int, is_real, param_error, renamed_parameters
from ..scores import check_bins, discretize, n_codes
from ..sources import fit_accepts_anndata
from ..stats import ClassMoments
from .redundancy import RankedSelector

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
    """Category codes of every feature (the rule of ``genosift.scores.discretize``) and the
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
        width = block_width(self.n, block_bytes=BLOCK_BYTES // 4)  # discretising needs a few copies of a block
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



class MRMR(RankedSelector):
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
        ``mrmr_selection.mrmr_classif`` (F-statistic relevance, mean ``|r|`` floored at 0.001).
    method_options : dict, optional
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

    _score_param, _params_param = "relevance", "method_options"

    @renamed_parameters("relevance_params")
    def __init__(self, k=50, *, relevance="anova", redundancy="pearson", scheme="difference",
                 min_redundancy=1e-3, method_options=None, bins=5, max_categories=5):
        self.k = k
        self.relevance = relevance
        self.redundancy = redundancy
        self.scheme = scheme
        self.min_redundancy = min_redundancy
        self.method_options = method_options
        self.bins = bins
        self.max_categories = max_categories

    def _check_params(self):
        if not is_int(self.k) or self.k < 1:
            raise param_error("k", "MRMR", "an int in [1, n_features]", self.k)
        if self.redundancy not in ("pearson", "mi"):
            raise param_error("redundancy", "MRMR", "'pearson' or 'mi'", self.redundancy)
        if self.scheme not in ("difference", "quotient"):
            raise param_error("scheme", "MRMR", "'difference' or 'quotient'", self.scheme)
        if not is_real(self.min_redundancy) or not self.min_redundancy >= 0:
            raise param_error("min_redundancy", "MRMR", "a number >= 0", self.min_redundancy)
        if self.scheme == "quotient" and self.min_redundancy == 0:
            raise param_error("min_redundancy", "MRMR", "> 0 with scheme='quotient' (it bounds the divisor)",
                              self.min_redundancy)
        return check_bins("MRMR", self.bins, self.max_categories)

    @fit_accepts_anndata
    def fit(self, X, y=None, covariates=None):
        """Score the relevance of every feature, then choose ``k`` of them one at a time.

        ``covariates``: one row per sample of ``X``, for a ``relevance`` method that adjusts for
        covariates (``genosift.scores.covariate_methods()``); the redundancy terms do not use them.
        """
        bins, max_categories = self._check_params()
        X, relevance, _ = self._score_features(X, y, covariates)
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
