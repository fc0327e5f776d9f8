"""Category codes of feature blocks, and their contingency tables against the class.

Shared by the contingency-table scores (``chi2``, ``mi``). Every feature is discretised on its own,
from its own values only, by one rule:

1. **Categorical features.** If every value is an integer (``x == floor(x)``) and the feature has
   at most ``max_categories`` distinct values, the categories are its distinct values, coded
   ``0, 1, ...`` in increasing order of value: ``code(x) = number of distinct values below x``.
2. **Other features: ``bins`` equal-frequency bins.** With ``r(x)`` the number of samples whose
   value is strictly smaller than ``x`` (the 0-based "min" rank) and ``n`` the number of samples::

       code(x) = floor(bins * r(x) / n)

   Equivalently, with ``s_(1) <= ... <= s_(n)`` the sorted values, the bin edges are
   ``e_k = s_(ceil(k n / bins))`` for ``k = 1 .. bins - 1`` and ``code(x)`` is the number of edges
   strictly below ``x``. Without ties, bin ``k`` holds the sorted positions
   ``[k n / bins, (k + 1) n / bins)``: ``floor(n / bins)`` or ``ceil(n / bins)`` samples each.
   Equal values have the same ``r`` and therefore **always share a bin**: a run of tied values
   goes whole into the bin where its first sorted position falls, so the bins after it are
   smaller, or empty (a non-negative feature that is 60% zeros puts all its zeros in bin 0 and
   spreads the other 40% over the last two of five bins).

Codes are therefore in ``[0, max(bins, max_categories))``. Codes that no sample has (empty bins)
simply give empty rows in the tables; the scores drop them before counting degrees of freedom.

The rule depends on the values only, never on their order or storage: a dense block and a sparse
block of the same data give the same codes (for sparse blocks the implicit zeros are one more
value, ranked among the stored ones).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..core.validation import param_error


def check_bins(owner, bins, max_categories):
    """``(bins, max_categories)`` as ints, or the project's parameter error."""
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise param_error("bins", owner, "an int >= 2", bins)
    if isinstance(max_categories, bool) or not isinstance(max_categories, (int, np.integer)) or max_categories < 0:
        raise param_error("max_categories", owner, "an int >= 0", max_categories)
    return int(bins), int(max_categories)


def n_codes(bins, max_categories):
    """The number of possible codes (rows of every table): ``max(bins, max_categories)``."""
    return max(bins, max_categories, 1)


# --------------------------------------------------------------------------------------------
# dense blocks
#
# One pass gives each column's minimum, maximum and whether it is integer-valued. Integer columns
# of narrow range are then coded from a histogram of their values (one counting pass, no sort;
# the (value, class) counts become (code, class) counts with one bincount per class); the others
# from their sorted values (numpy's sort along the columns), as "number of edges below x", counted
# into the tables in the same pass. The compiled passes run over the rows of the C-contiguous
# block, all columns at once; numpy's combined-index bincount would need three more passes over
# the block (index arithmetic and the count) and was 4x slower.
# --------------------------------------------------------------------------------------------

_JIT = dict(nogil=True, cache=True)


@njit(**_JIT)
def _summary(X):
    """Minimum, maximum and integer-valuedness of every column, in one pass over the rows."""
    n, b = X.shape
    lo = X[0].copy()
    hi = X[0].copy()
    frac = np.zeros(b)
    for i in range(n):
        for j in range(b):
            x = X[i, j]
            lo[j] = min(lo[j], x)
            hi[j] = max(hi[j], x)
            frac[j] = max(frac[j], abs(x - np.floor(x)))
    return lo, hi, frac == 0.0


@njit(**_JIT)
def _value_counts(X, cols, lo, y, k, width):
    """``counts[t, x - lo[t], y_i]`` over the rows, for the integer columns ``cols``."""
    n = X.shape[0]
    m = cols.shape[0]
    counts = np.zeros((m, width, k))
    for i in range(n):
        c = y[i]
        for t in range(m):
            counts[t, np.intp(X[i, cols[t]] - lo[t]), c] += 1.0
    return counts


@njit(**_JIT)
def _lookup_codes(X, cols, lo, lookup, out):
    """``out[i, cols[t]] = lookup[t, x - lo[t]]``."""
    for i in range(X.shape[0]):
        for t in range(cols.shape[0]):
            out[i, cols[t]] = lookup[t, np.intp(X[i, cols[t]] - lo[t])]


@njit(**_JIT)
def _edge_codes(X, cols, edges, y, k, tables, out):
    """Code = number of edges below x, for the columns ``cols``.

    Adds one to ``tables[t, code, y_i]`` if ``tables`` has rows, else writes ``out[i, cols[t]]``.
    """
    count = tables.shape[0] > 0
    width = edges.shape[1]
    for i in range(X.shape[0]):
        c = y[i]
        for t in range(cols.shape[0]):
            x = X[i, cols[t]]
            code = 0
            for e in range(width):  # branch-free: the edges are few
                code += x > edges[t, e]
            if count:
                tables[t, code, c] += 1.0
            else:
                out[i, cols[t]] = code


def _plan(X, bins, max_categories, k):
    """``(hist_cols, lo, span, sort_cols, integer)``: which columns take which path."""
    n = X.shape[0]
    lo, hi, integer = _summary(X)
    with np.errstate(over="ignore", invalid="ignore"):
        span = hi - lo
        # the histogram has span + 1 cells per class: keep it no larger than the column
        hist = integer & ((span + 1.0) * k <= max(n, 1024))
    return np.flatnonzero(hist), lo, span, np.flatnonzero(~hist), integer


def _hist_lookup(counts, bins, max_categories, n):
    """Code of each value ``lo + v`` from the value counts (t, v, class) of integer columns."""
    hist = counts.sum(axis=2)
    present = hist > 0
    categorical = present.sum(axis=1) <= max_categories
    dense_rank = np.cumsum(present, axis=1) - 1
    below = np.cumsum(hist, axis=1) - hist  # r(x): samples strictly below each value
    codes = np.where(categorical[:, None], dense_rank, below * bins // n)
    # values absent from a column (padding up to the block's widest range) count nothing: any
    # in-range code will do, and above a column's maximum the binned formula would give `bins`
    return np.where(present, codes, 0).astype(np.intp)


def _sorted_edges(X, cols, integer, bins, max_categories):
    """Edges (len(cols), E), ascending, padded with +inf: code = number of edges below x."""
    n = X.shape[0]
    s = np.sort(X if cols.size == X.shape[1] else X[:, cols], axis=0)
    # binned: e_k = s_(ceil(k n / bins)) (1-based order statistics), k = 1 .. bins - 1
    positions = -(-np.arange(1, bins) * n // bins) - 1
    edges = s[positions].T
    candidates = np.flatnonzero(integer[cols])  # integer columns of wide range may be categorical
    if candidates.size and max_categories > 0:
        start = np.empty((n, candidates.size), dtype=bool)
        start[0] = True
        np.not_equal(s[1:, candidates], s[:-1, candidates], out=start[1:])
        cat = candidates[start.sum(axis=0) <= max_categories]
        if cat.size:
            edges = np.concatenate([edges, np.full((cols.size, max(0, max_categories - bins + 1)), np.inf)], axis=1)
            edges[cat] = np.inf
            start = start[:, np.isin(candidates, cat)]
            rows, sub = np.nonzero(start)
            rank = np.cumsum(start, axis=0)[rows, sub] - 1
            # categorical: the distinct values themselves (code = number of distinct values below x)
            edges[cat[sub], rank] = s[rows, cat[sub]]
    return np.ascontiguousarray(edges)


_NO_TABLES = np.zeros((0, 0, 0))
_NO_CODES = np.zeros((0, 0), dtype=np.intp)


def discretize(block, *, bins=5, max_categories=5):
    """Category codes of every feature of a dense block, by the module's rule.

    Parameters
    ----------
    block : array-like (n_samples, n_features), finite real values
    bins : int, default=5
        Equal-frequency bins for features that are not categorical.
    max_categories : int, default=5
        Integer-valued features with at most this many distinct values keep their values as
        categories.

    Returns
    -------
    codes : ndarray (n_samples, n_features) of ints in ``[0, max(bins, max_categories))``

    Examples
    --------
    >>> import numpy as np
    >>> from genosift.scores._discretize import discretize
    >>> X = np.column_stack([[3, 1, 1, 7, 3, 3], [0.5, 0.1, 0.4, 0.2, 0.6, 0.3]])
    >>> discretize(X, bins=3, max_categories=3).T.tolist()
    [[1, 0, 0, 2, 1, 1], [2, 0, 1, 0, 2, 1]]
    """
    bins, max_categories = check_bins("discretize", bins, max_categories)
    X = np.ascontiguousarray(block, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"discretize needs a 2-D block (samples x features). Got {X.ndim} dimension(s).")
    n = X.shape[0]
    codes = np.empty(X.shape, dtype=np.intp)
    hist, lo, span, other, integer = _plan(X, bins, max_categories, 1)
    y = np.zeros(n, dtype=np.intp)
    if hist.size:
        lo_h = lo[hist]
        counts = _value_counts(X, hist, lo_h, y, 1, int(span[hist].max()) + 1)
        _lookup_codes(X, hist, lo_h, _hist_lookup(counts, bins, max_categories, n), codes)
    if other.size:
        _edge_codes(X, other, _sorted_edges(X, other, integer, bins, max_categories), y, 1, _NO_TABLES, codes)
    return codes


def _dense_tables(X, y, k, bins, max_categories):
    n, b = X.shape
    L = n_codes(bins, max_categories)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.intp)
    tables = np.zeros((b, L, k))
    hist, lo, span, other, integer = _plan(X, bins, max_categories, k)
    if hist.size:
        # counts of (column, value, class), then value -> code on these small histograms
        counts = _value_counts(X, hist, lo[hist], y, k, int(span[hist].max()) + 1)
        lookup = _hist_lookup(counts, bins, max_categories, n)
        target = (np.arange(hist.size)[:, None] * L + lookup).ravel()
        counts = counts.reshape(-1, k)
        sub = np.empty((hist.size * L, k))
        for c in range(k):
            sub[:, c] = np.bincount(target, weights=counts[:, c], minlength=hist.size * L)
        tables[hist] = sub.reshape(hist.size, L, k)
    if other.size:
        edges = _sorted_edges(X, other, integer, bins, max_categories)
        part = np.zeros((other.size, L, k))
        _edge_codes(X, other, edges, y, k, part, _NO_CODES)
        tables[other] = part
    return tables


# --------------------------------------------------------------------------------------------
# sparse blocks: the stored values of each column, plus its implicit zeros as one more value
# --------------------------------------------------------------------------------------------

@njit(**_JIT)
def _csc_tables(data, rows, indptr, n, y, count, bins, max_categories, L):
    """Tables (b, L, k) of a CSC block without stored zeros, one column at a time."""
    b = indptr.shape[0] - 1
    k = count.shape[0]
    tables = np.zeros((b, L, k))
    for j in range(b):
        a, e = indptr[j], indptr[j + 1]
        order = np.argsort(data[a:e])
        s = data[a:e][order]
        m = e - a
        zeros = n - m
        integer = True
        distinct = 1 if zeros > 0 else 0
        negative = 0
        negative_distinct = 0
        for t in range(m):
            x = s[t]
            new = t == 0 or x != s[t - 1]
            if x != np.floor(x):
                integer = False
            if new:
                distinct += 1
            if x < 0:
                negative += 1
                if new:
                    negative_distinct += 1
        categorical = integer and distinct <= max_categories
        first = 0  # sorted position where the current run of equal values starts
        rank = -1  # number of distinct stored values below the current one
        for t in range(m):
            x = s[t]
            if t == 0 or x != s[t - 1]:
                first = t
                rank += 1
            if categorical:
                code = rank + (1 if x > 0 and zeros > 0 else 0)
            else:
                code = (first + (zeros if x > 0 else 0)) * bins // n
            tables[j, code, y[rows[a + order[t]]]] += 1.0
        if zeros > 0:
            code = negative_distinct if categorical else negative * bins // n
            for c in range(k):
                stored = 0.0
                for q in range(L):
                    stored += tables[j, q, c]
                tables[j, code, c] += count[c] - stored
    return tables


def _sparse_tables(B, y, count, bins, max_categories):
    B = sp.csc_matrix(B, dtype=np.float64)
    if not B.has_canonical_format or (B.data == 0).any():
        B = B.copy()
        B.sum_duplicates()
        B.eliminate_zeros()
    return _csc_tables(B.data, B.indices, B.indptr, B.shape[0], np.asarray(y, dtype=np.intp),
                       np.asarray(count, dtype=np.float64), bins, max_categories, n_codes(bins, max_categories))


def contingency_tables(block, y, count, *, bins=5, max_categories=5):
    """Counts of (category, class) for every feature of a block: ndarray (b, L, k).

    Parameters
    ----------
    block : dense float64 ndarray (n, b), or a scipy.sparse block (its zeros are a value like any)
    y : ndarray (n,) of ints in [0, k), the class code of each sample
    count : ndarray (k,), samples per class
    bins, max_categories : the discretisation (see the module docstring)

    Returns
    -------
    tables : ndarray (b, L, k) float64, ``L = max(bins, max_categories)``; ``tables[j, m, c]`` is
        the number of samples of class ``c`` whose value of feature ``j`` has code ``m``.
        Rows of codes no sample has are zero.
    """
    count = np.asarray(count)
    if sp.issparse(block):
        return _sparse_tables(block, y, count, bins, max_categories)
    return _dense_tables(np.asarray(block, dtype=np.float64), y, count.shape[0], bins, max_categories)


def presence_tables(positives, count, *, bins=5, max_categories=5):
    """The tables ``contingency_tables`` gives for features whose every value is 0 or 1, from each
    class's count of 1s alone: ndarray (b, L, k), equal to them entry for entry.

    ``positives``: (k, b), the samples of each class whose value is 1; ``count``: (k,), the
    samples of each class. The 0s have code 0. The 1s have code 1 when the feature keeps its two
    values as categories (``max_categories >= 2``), else the bin of their first sorted position,
    ``floor(bins * zeros / n)``; where the feature is constant both share code 0.
    """
    positives = np.asarray(positives, dtype=np.float64)
    count = np.asarray(count, dtype=np.float64)
    k, b = positives.shape
    n = int(count.sum())
    ones = positives.sum(axis=0).astype(np.int64)
    if max_categories >= 2:
        code = np.ones(b, np.int64)
    else:
        code = (n - ones) * int(bins) // max(n, 1)
    code[(ones == 0) | (ones == n)] = 0
    tables = np.zeros((b, n_codes(bins, max_categories), k))
    tables[np.arange(b), code] = positives.T
    tables[:, 0] += count - positives.T
    return tables
