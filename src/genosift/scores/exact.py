"""Fisher's exact test of 2x2 tables in compiled code: :func:`fisher_exact_pvalues`.

A table ``[[a, n_pos - a], [n_present - a, n - n_pos - n_present + a]]`` with its margins fixed
has the hypergeometric distribution ``P(a) = C(n_pos, a) C(n - n_pos, n_present - a) / C(n,
n_present)``. The two-sided p-value is the rule of ``scipy.stats.fisher_exact``: 1 when ``P(a)``
is within a relative 1e-14 of the mode's probability; else every table on ``a``'s side of the
mode from ``a`` outwards, plus the tables on the other side whose probability is below ``P(a)``
times ``1 + 1e-14``.

The probabilities are computed once per margin: from the mode (weight 1) outwards by the ratio
of neighbouring probabilities, ``P(x + 1) / P(x) = (n_pos - x)(n_present - x) / ((x + 1)(n -
n_pos - n_present + x + 1))``, whose numerator and denominator are exact integers in float64;
each walk stops where the weights underflow (tables less probable than the mode by a factor
beyond 1e-323 count as 0). The tail sums are accumulated from the ends inwards and divided by
the sum of all weights, so a p-value is accurate to a few hundred rounding errors at worst
(the walk's length; 1e-13 relative) down to about 1e-300, with no cancellation of
log-factorials. A mirror-symmetric distribution (``n = 2 n_pos`` or ``n = 2 n_present``) gets
bitwise-equal weights at mirrored tables, so exact ties are always found.

Tests are grouped by their margins (one sort of packed keys): each distinct ``(n, n_pos,
n_present)`` is walked once and each distinct table's p-value computed once, so the cost is
the number of distinct margins times the distribution's width, plus one look-up per test.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..core.engine import map_blocks, threads
from ..core.validation import param_error

#: ``scipy.stats.fisher_exact``'s relative tolerance: probabilities within it of the observed
#: table's are as extreme as it
TOLERANCE = 1e-14
#: Tests per thread below which one thread does the work
_PARALLEL_SIZE = 1 << 20


@njit(cache=True, nogil=True)
def _weights(N, K, m, w, c):
    """The hypergeometric weights of the tables with margins ``(N, K, m)`` relative to the
    mode's, ``w[x]``, and their tail sums ``c[x]`` (``x <= mode``: the sum from the lowest
    weight up to ``x``; ``x > mode``: from ``x`` to the highest); ``(lowest, mode, highest,
    total)``, the range of the weights that do not underflow and the sum of all of them."""
    lo = max(0, m - (N - K))
    hi = min(K, m)
    d = float(N - K - m)
    mode = (m + 1) * (K + 1) // (N + 2)
    w[mode] = 1.0
    top = mode
    while top < hi:
        step = (float(K - top) * float(m - top)) / (float(top + 1) * (d + float(top + 1)))
        v = w[top] * step
        if v == 0.0:
            break
        top += 1
        w[top] = v
    low = mode
    while low > lo:
        step = (float(low) * (d + float(low))) / (float(K - low + 1) * float(m - low + 1))
        v = w[low] * step
        if v == 0.0:
            break
        low -= 1
        w[low] = v
    total = 0.0
    for x in range(low, mode + 1):
        total += w[x]
        c[x] = total
    right = 0.0
    for x in range(top, mode, -1):
        right += w[x]
        c[x] = right
    return low, mode, top, total + right


@njit(cache=True, nogil=True)
def _pvalue(x, w, c, low, mode, top, total):
    """The two-sided p of the table ``x`` from its margins' ``_weights``."""
    if x < low or x > top:  # less probable than the mode by more than a float64 holds
        return 0.0
    wx = w[x]
    if abs(wx - 1.0) <= TOLERANCE * max(wx, 1.0):
        return 1.0
    limit = wx * (1.0 + TOLERANCE)
    if x < mode:  # the other side: the first table above the mode below the limit, and beyond
        i, j = mode + 1, top + 1
        while i < j:
            mid = (i + j) // 2
            if w[mid] < limit:
                j = mid
            else:
                i = mid + 1
        tail = c[x] + (c[i] if i <= top else 0.0)
    else:  # the last table below the mode at or below the limit, and before
        i, j = low, mode
        while i < j:
            mid = (i + j) // 2
            if w[mid] > limit:
                j = mid
            else:
                i = mid + 1
        tail = c[x] + (c[i - 1] if i > low else 0.0)
    return min(tail / total, 1.0)


@njit(cache=True, nogil=True)
def _fisher_sorted(packed, bits, order, a, layout, out):
    """The p-values of the tests of ``packed`` (sorted keys of their margins, each with its
    position in its low ``bits``; or, with ``bits`` 0, the keys alone and the positions in
    ``order``), written at their positions of ``out``; ``a`` the tables' counts by position,
    ``layout`` ``(n0, n_pos0, n_present0, n_pos range, n_present range, largest n)`` of the
    keys. A count outside its margins' range gets -1. NaN where a margin is 0 (no test)."""
    n0, k0, m0, rk, rm, largest = layout[0], layout[1], layout[2], layout[3], layout[4], layout[5]
    mask = (np.int64(1) << bits) - 1
    w = np.zeros(largest + 2)
    c = np.zeros(largest + 2)
    memo = np.zeros(largest + 2)
    stamp = np.full(largest + 2, -1, dtype=np.int64)
    group, last = -1, -1
    N = K = m = low = mode = top = 0
    total = 0.0
    for i in range(packed.shape[0]):
        key = packed[i] >> bits if bits else packed[i]
        j = packed[i] & mask if bits else order[i]
        if key != last:
            group += 1
            last = key
            N, rest = key // (rk * rm) + n0, key % (rk * rm)
            K, m = rest // rm + k0, rest % rm + m0
            if 0 < K < N and 0 < m < N:
                low, mode, top, total = _weights(N, K, m, w, c)
        x = a[j]
        if x < max(0, m - (N - K)) or x > min(K, m):
            out[j] = -1.0
        elif not (0 < K < N and 0 < m < N):
            out[j] = np.nan
        elif stamp[x] == group:
            out[j] = memo[x]
        else:
            p = _pvalue(x, w, c, low, mode, top, total)
            stamp[x] = group
            memo[x] = p
            out[j] = p


def _counts(value, name):
    """``value`` as an int64 array of non-negative whole numbers, or the error."""
    values = np.asarray(value)
    if values.dtype.kind not in "biuf" or values.size and (
            not np.isfinite(values).all() or (values < 0).any() or (values != np.floor(values)).any()):
        raise param_error(name, "fisher_exact_pvalues", "non-negative whole numbers (counts)",
                          values.ravel()[:5].tolist() if values.size > 1 else values.tolist())
    return values.astype(np.int64, copy=False)


def _sorted_margins(n, n_pos, n_present, shape):
    """``(packed, bits, order, layout)`` of ``_fisher_sorted``: the tests' margins as sorted keys."""
    lows = [int(v.min()) if v.size else 0 for v in (n, n_pos, n_present)]
    spans = [int(v.max()) - low + 1 if v.size else 1 for v, low in zip((n, n_pos, n_present), lows)]
    key = ((n - lows[0]) * spans[1] + (n_pos - lows[1])) * spans[2] + (n_present - lows[2])
    key = np.broadcast_to(key, shape).ravel()
    size = key.size
    bits = max(int(size - 1).bit_length(), 1)
    layout = np.array([*lows, spans[1], spans[2], lows[0] + spans[0] - 1], dtype=np.int64)
    if spans[0] * spans[1] * spans[2] < 1 << (62 - bits):  # key and position in one int64: one fast sort
        packed = (key << bits) | np.arange(size, dtype=np.int64)
        packed.sort()
        return packed, bits, np.zeros(0, dtype=np.int64), layout
    order = np.argsort(key, kind="stable")
    return key[order], 0, order, layout


def fisher_exact_pvalues(a, n_pos, n_present, n):
    """Two-sided p-values of Fisher's exact test of many 2x2 tables, as ``scipy.stats.fisher_exact``.

    The table of each test is ``[[a, n_pos - a], [n_present - a, n - n_pos - n_present + a]]``
    (for a feature against a binary class: the positive samples carrying it, the positive
    samples, the samples carrying it, all samples). The arguments broadcast against each other,
    so a (features x traits) matrix of ``a`` takes ``n_pos`` per trait (shape ``(traits,)``) and
    ``n_present`` per feature (shape ``(features, 1)``). Tests that share their margins share one
    computation of the distribution; identical tables are computed once.

    Parameters
    ----------
    a : array_like of int
        The count of the table's first cell.
    n_pos : array_like of int
        The first row's sum (the positive class's size).
    n_present : array_like of int
        The first column's sum (the samples carrying the feature).
    n : array_like of int
        The table's total.

    Returns
    -------
    ndarray of float64
        The p-values, of the broadcast shape: within ~1e-13 relative of scipy's down to about
        1e-300 (smaller ones may come out as 0). NaN where ``n_present`` or ``n_pos`` is 0 or
        ``n`` (scipy's p is 1 there: one table has those margins, no test).

    Examples
    --------
    >>> round(float(fisher_exact_pvalues(8, 10, 9, 16)), 6)  # scipy.stats.fisher_exact([[8, 2], [1, 5]])
    0.034965

    Two genes (rows, carried by 9 and 3 of 16 samples) against two traits (8 and 7 positives):

    >>> fisher_exact_pvalues([[6, 5], [1, 2]], [8, 7], [[9], [3]], 16).round(4).tolist()
    [[0.3147, 0.3575], [1.0, 0.55]]
    """
    a, n_pos, n_present, n = (_counts(v, name) for v, name in
                              ((a, "a"), (n_pos, "n_pos"), (n_present, "n_present"), (n, "n")))
    shape = np.broadcast_shapes(a.shape, n_pos.shape, n_present.shape, n.shape)
    for part, name in ((n_pos, "n_pos"), (n_present, "n_present")):
        if (np.broadcast_to(part, np.broadcast_shapes(part.shape, n.shape)) > n).any():
            raise param_error(name, "fisher_exact_pvalues", "at most n, the table's total", int(part.max()))
    packed, bits, order, layout = _sorted_margins(n, n_pos, n_present, shape)
    flat = np.ascontiguousarray(np.broadcast_to(a, shape)).ravel()
    out = np.empty(flat.size)
    size = packed.size
    parts = [0, size]
    if size >= _PARALLEL_SIZE and threads() > 1:  # split between margins: each group on one thread
        cuts = packed[np.linspace(0, size, threads() + 1).astype(np.int64)[1:-1]]
        inner = np.searchsorted(packed, ((cuts >> bits) + 1) << bits)  # the first test of the next margins
        parts = [0, *sorted(set(inner.tolist())), size]

    def run(span):
        _fisher_sorted(packed[span[0]:span[1]], bits, order[span[0]:span[1]] if order.size else order, flat,
                       layout, out)

    spans = list(zip(parts[:-1], parts[1:]))
    if len(spans) > 1:
        map_blocks(run, spans)
    else:
        run(spans[0])
    bad = np.flatnonzero(out < 0)
    if bad.size:
        where = tuple(int(i) for i in np.unravel_index(int(bad[0]), shape))
        margins = [int(np.broadcast_to(v, shape)[where]) for v in (n_pos, n_present, n)]
        at = f" at {where}" if where else ""
        raise param_error("a", "fisher_exact_pvalues", "a count its margins allow, max(0, n_present - (n - n_pos)) <= "
                          f"a <= min(n_pos, n_present) (n_pos={margins[0]}, n_present={margins[1]}, n={margins[2]}"
                          f"{at})", int(flat[bad[0]]))
    return out.reshape(shape)[()] if shape == () else out.reshape(shape)
