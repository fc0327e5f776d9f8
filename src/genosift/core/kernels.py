"""Compiled one-pass kernels for per-class moments (Welford updates, vectorised across features).

Every kernel visits the rows of a chunk in order and, for each class ``c`` and feature ``j``,
applies the same update to ``(mean, m2)`` of the shifted value ``x - shift[j]``::

    d = x - mean;  mean += d / n_c;  m2 += d * (x - mean)

so the dense row-major and column-major kernels give the same numbers for the same data. An
optional weight vector ``w`` adds a co-moment with a numeric target ``t``:

- dense kernels: ``cross += d * w_i`` with ``d`` the Welford deviation above and
  ``w_i = t_i - (running mean of t in the class, row i included)``, the online co-moment update,
  accurate whatever the shift;
- the sparse kernels live in ``_sparse_kernels`` (sums over the stored entries, zeros added in
  closed form).

Accumulators are float64 whatever the input dtype.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .sparse_kernels import row_start

_JIT = dict(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})


@njit(**_JIT)
def running_inverse_counts(codes, k):
    """``1 / (number of rows of the same class up to and including row i)`` for each row."""
    seen = np.zeros(k)
    inv = np.empty(codes.shape[0])
    for i in range(codes.shape[0]):
        c = codes[i]
        seen[c] += 1.0
        inv[i] = 1.0 / seen[c]
    return inv


@njit(**_JIT)
def running_residuals(t, codes, k):
    """``t_i`` minus the running mean of ``t`` over the rows of its class up to row ``i``."""
    seen = np.zeros(k)
    mean = np.zeros(k)
    out = np.empty(t.shape[0])
    for i in range(t.shape[0]):
        c = codes[i]
        seen[c] += 1.0
        mean[c] += (t[i] - mean[c]) / seen[c]
        out[i] = t[i] - mean[c]
    return out


@njit(parallel=True, **_JIT)
def dense_row_major(X, codes, inv, shift, w, mean, m2, cross, tile):
    """Row-major (C-contiguous) ``X``: parallel over column tiles that stay in cache."""
    n, p = X.shape
    has_w = w.shape[0] > 0
    n_tiles = (p + tile - 1) // tile
    for t in prange(n_tiles):
        j0 = t * tile
        j1 = min(p, j0 + tile)
        sh = shift[j0:j1]
        for i in range(n):
            c = codes[i]
            a = inv[i]
            xr = X[i, j0:j1]
            mr = mean[c, j0:j1]
            qr = m2[c, j0:j1]
            if has_w:
                wi = w[i]
                cr = cross[c, j0:j1]
                for j in range(j1 - j0):
                    x = xr[j] - sh[j]
                    d = x - mr[j]
                    mu = mr[j] + d * a
                    mr[j] = mu
                    qr[j] += d * (x - mu)
                    cr[j] += d * wi
            else:
                for j in range(j1 - j0):
                    x = xr[j] - sh[j]
                    d = x - mr[j]
                    mu = mr[j] + d * a
                    mr[j] = mu
                    qr[j] += d * (x - mu)


@njit(parallel=True, **_JIT)
def dense_col_major(X, codes, inv, shift, w, mean, m2, cross):
    """Column-major (F-contiguous) ``X``: parallel over features, rows in order."""
    n, p = X.shape
    has_w = w.shape[0] > 0
    for j in prange(p):
        s = shift[j]
        for i in range(n):
            c = codes[i]
            x = X[i, j] - s
            d = x - mean[c, j]
            mu = mean[c, j] + d * inv[i]
            mean[c, j] = mu
            m2[c, j] += d * (x - mu)
            if has_w:
                cross[c, j] += d * w[i]


@njit(parallel=True, **_JIT)
def csr_class_sums(data, indices, indptr, codes, k, p, width):
    """Per-class sums, minimum and maximum of every column of a CSR matrix (sorted indices).

    Parallel over tiles of ``width`` columns whose accumulators stay in cache; each tile finds
    its entries in every row by binary search.
    """
    n = indptr.shape[0] - 1
    sums = np.zeros((k, p))
    lo = np.empty(p)
    hi = np.empty(p)
    for b in prange((p + width - 1) // width):
        j0 = b * width
        j1 = min(p, j0 + width)
        t_sums = np.zeros((k, j1 - j0))
        t_lo = np.full(j1 - j0, np.inf)
        t_hi = np.full(j1 - j0, -np.inf)
        stored = np.zeros(j1 - j0)
        for i in range(n):
            c = codes[i]
            q = row_start(indices, indptr[i], indptr[i + 1], j0)
            end = indptr[i + 1]
            while q < end and indices[q] < j1:
                j = indices[q] - j0
                v = np.float64(data[q])
                t_sums[c, j] += v
                t_lo[j] = min(t_lo[j], v)
                t_hi[j] = max(t_hi[j], v)
                stored[j] += 1.0
                q += 1
        for j in range(j1 - j0):
            if stored[j] < n:  # implicit zeros
                t_lo[j] = min(t_lo[j], 0.0)
                t_hi[j] = max(t_hi[j], 0.0)
            lo[j0 + j] = t_lo[j]
            hi[j0 + j] = t_hi[j]
            for c in range(k):
                sums[c, j0 + j] = t_sums[c, j]
    return sums, lo, hi


@njit(parallel=True, **_JIT)
def csc_class_sums(data, indices, indptr, codes, k, p):
    """``csr_class_sums`` of a CSC matrix (rows sorted in each column): the same sums, bit for bit
    (each column's entries are added in row order in both), with the per-class counts of the
    values above 0; parallel over columns: ``(sums, minimum, maximum, positive)``."""
    n = codes.shape[0]
    sums = np.zeros((k, p))
    positive = np.zeros((k, p))
    lo = np.empty(p)
    hi = np.empty(p)
    for j in prange(p):
        a, b = indptr[j], indptr[j + 1]
        t_lo, t_hi = np.inf, -np.inf
        for q in range(a, b):
            c = codes[indices[q]]
            v = np.float64(data[q])
            sums[c, j] += v
            t_lo = min(t_lo, v)
            t_hi = max(t_hi, v)
            if v > 0:
                positive[c, j] += 1.0
        if b - a < n:  # implicit zeros
            t_lo = min(t_lo, 0.0)
            t_hi = max(t_hi, 0.0)
        lo[j] = t_lo
        hi[j] = t_hi
    return sums, lo, hi, positive


@njit(parallel=True, **_JIT)
def dense_class_sums_row_major(X, codes, k, shift, tile):
    """Per-class sums of ``x - shift``, minimum and maximum of ``x``, C-contiguous ``X``.

    Parallel over column tiles."""
    n, p = X.shape
    sums = np.zeros((k, p))
    lo = np.full(p, np.inf)
    hi = np.full(p, -np.inf)
    for b in prange((p + tile - 1) // tile):
        j0 = b * tile
        j1 = min(p, j0 + tile)
        for i in range(n):
            row = sums[codes[i]]
            for j in range(j0, j1):
                v = np.float64(X[i, j])
                row[j] += v - shift[j]
                lo[j] = min(lo[j], v)
                hi[j] = max(hi[j], v)
    return sums, lo, hi


@njit(parallel=True, **_JIT)
def dense_class_sums_col_major(X, codes, k, shift):
    """Per-class sums of ``x - shift``, minimum and maximum of ``x``, F-contiguous ``X``."""
    n, p = X.shape
    sums = np.zeros((k, p))
    lo = np.full(p, np.inf)
    hi = np.full(p, -np.inf)
    for j in prange(p):
        for i in range(n):
            v = np.float64(X[i, j])
            sums[codes[i], j] += v - shift[j]
            lo[j] = min(lo[j], v)
            hi[j] = max(hi[j], v)
    return sums, lo, hi


@njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def chan_merge(rows_a, rows_b, n_a, mean_a, m2_a, n_b, mean_b, m2_b, shift_b, out_mean, out_m2):
    """Merge per-class (count, mean, M2) summaries of two row sets into ``out_*``, (k, p).

    Output class ``c`` takes row ``rows_a[c]`` of the first summary and ``rows_b[c]`` of the
    second (-1: absent there); ``shift_b`` re-expresses the second's means about the first's
    shift. The same Chan update as ``stats._chan``, fused: no (k, p) temporaries.
    """
    k, p = out_mean.shape
    for c in range(k):
        i, j = rows_a[c], rows_b[c]
        na = n_a[i] if i >= 0 else 0.0
        nb = n_b[j] if j >= 0 else 0.0
        n = na + nb
        frac = nb / n if n > 0 else 0.0
        for f in prange(p):
            if j < 0:
                out_mean[c, f] = mean_a[i, f]
                out_m2[c, f] = m2_a[i, f]
            elif i < 0:
                out_mean[c, f] = mean_b[j, f] + shift_b[f]
                out_m2[c, f] = m2_b[j, f]
            else:
                delta = (mean_b[j, f] + shift_b[f]) - mean_a[i, f]
                out_mean[c, f] = mean_a[i, f] + delta * frac
                out_m2[c, f] = m2_a[i, f] + m2_b[j, f] + delta * delta * (na * frac)


@njit(parallel=True, nogil=True, cache=True)
def plain_values(data, largest, smallest):
    """True when every value is finite, below ``largest`` in size and zero or at least ``smallest``.

    One pass in place of several numpy ones (and no temporary copies) over a chunk's values.
    """
    n_parts = 64
    step = (data.size + n_parts - 1) // n_parts
    bad = np.zeros(n_parts, np.bool_)
    for t in prange(n_parts):
        for i in range(t * step, min(data.size, (t + 1) * step)):
            a = abs(np.float64(data[i]))
            if not (a < largest) or (a > 0 and a < smallest):  # NaN fails a < largest
                bad[t] = True
                break
    return not bad.any()


@njit(**_JIT)
def csr_class_positives(data, indices, indptr, codes, out, j0, searched):
    """Add to ``out`` (k, width) the per-class counts of the stored values above 0 in the columns
    ``j0 ... j0 + width - 1`` of a CSR matrix. ``searched``: each row's entries of those columns
    found by binary search (sorted indices; a tile of the columns); else all of them are read
    (the whole matrix, its indices in any order)."""
    j1 = j0 + out.shape[1]
    for i in range(indptr.shape[0] - 1):
        c = codes[i]
        q, end = indptr[i], indptr[i + 1]
        if searched:
            q = row_start(indices, q, end, j0)
        while q < end and indices[q] < j1:
            if data[q] > 0:
                out[c, indices[q] - j0] += 1.0
            q += 1


@njit(parallel=True, **_JIT)
def csc_class_positives(data, indices, indptr, codes, k, p):
    """Per-class counts of the stored values above 0 of every column of a CSC matrix, (k, p).

    Parallel over columns; no temporary beyond the output."""
    out = np.zeros((k, p))
    for j in prange(p):
        for q in range(indptr[j], indptr[j + 1]):
            if data[q] > 0:
                out[codes[indices[q]], j] += 1.0
    return out


@njit(parallel=True, **_JIT)
def dense_class_positives_row_major(X, codes, k, tile):
    """Per-class counts of the values above 0 of every column, C-contiguous ``X``, (k, p).

    Parallel over column tiles."""
    n, p = X.shape
    out = np.zeros((k, p))
    for b in prange((p + tile - 1) // tile):
        j0 = b * tile
        j1 = min(p, j0 + tile)
        for i in range(n):
            row = out[codes[i]]
            for j in range(j0, j1):
                if X[i, j] > 0:
                    row[j] += 1.0
    return out


@njit(parallel=True, **_JIT)
def dense_class_positives_col_major(X, codes, k):
    """Per-class counts of the values above 0 of every column, F-contiguous ``X``, (k, p)."""
    n, p = X.shape
    out = np.zeros((k, p))
    for j in prange(p):
        for i in range(n):
            if X[i, j] > 0:
                out[codes[i], j] += 1.0
    return out


@njit(parallel=True, nogil=True, cache=True, error_model="numpy")
def between_within(count, total, mean, m2, between, within):
    """Between- and within-class sums of squares of every feature, (k, p) -> (p,), in one pass.

    The operations and their order are those of ``ClassMoments.between_within`` written with
    numpy (no contraction into fused multiply-adds), so the numbers are the same bit for bit:
    the class means' weighted mean deviation from the first class's mean (``total`` is
    ``count.sum()`` as numpy takes it), then the weighted squares about it, class by class; the
    within sum adds the classes' M2 in order.
    """
    k, p = mean.shape
    for j in prange(p):
        m0 = mean[0, j]
        d_bar = 0.0
        for c in range(k):
            d_bar += count[c] * (mean[c, j] - m0)
        d_bar /= total
        b = 0.0
        for c in range(k):
            d = mean[c, j] - m0
            d -= d_bar
            d *= d
            d *= count[c]
            b += d
        between[j] = b
        w = m2[0, j]
        for c in range(1, k):
            w += m2[c, j]
        within[j] = w


@njit(parallel=True, nogil=True, cache=True)
def all_finite(a):
    """True when every value of the 2-D array ``a`` is finite: rows in parallel, no temporaries."""
    rows, cols = a.shape
    n_parts = min(64, max(1, rows * cols // 65536))
    step = (cols + n_parts - 1) // n_parts
    bad = np.zeros(n_parts, np.bool_)
    for t in prange(n_parts):
        for r in range(rows):
            for j in range(t * step, min(cols, (t + 1) * step)):
                if not np.isfinite(a[r, j]):
                    bad[t] = True
            if bad[t]:
                break
    return not bad.any()
