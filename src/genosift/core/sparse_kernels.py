"""Compiled one-pass kernels for per-class moments of sparse matrices (CSR rows, CSC columns).

Each (feature, class) accumulates over its stored entries only, row after row; the implicit
zeros are added in closed form at the end. Integer values (counts) take two exact sums, the sum
and the sum of squares, and give correctly rounded means and M2. Other values take sums of
``x - h`` and its square about ``h``, the first stored value of the class, so that large offsets
do not cancel; their class means are then given about a shift per feature (``rebase_means``: the
``h`` of the first class holding an entry), as the dense path gives them about its first row, so
that differences of class means keep every digit. CSR, CSC and a stream of row chunks apply the
same updates in the same order: every form gives the same numbers. With a
weight vector ``w`` (co-moments with a numeric target), ``cross += x * w_i`` over the stored
entries, with ``w_i = t_i - mean(t)``: the co-moment about the mean up to ``mean_x * sum(w)``.

Accumulators are float64 whatever the input dtype.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from numba import njit, prange

#: No contraction into fused multiply-adds: every kernel (CSR, CSC, continued over row chunks)
#: rounds each update the same way, so they agree bit for bit.
_EXACT = dict(nogil=True, cache=True, error_model="numpy")


@njit(**_EXACT)
def row_start(indices, lo, hi, j0):
    """First position in ``indices[lo:hi]`` (sorted) holding a column ``>= j0``: binary search."""
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < j0:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**_EXACT)
def row_cursors(indices, indptr, j0):
    """For every CSR row, the position of its first stored entry in a column ``>= j0``."""
    n = indptr.shape[0] - 1
    pos = np.empty(n, np.int64)
    for i in range(n):
        pos[i] = row_start(indices, indptr[i], indptr[i + 1], j0)
    return pos


#: Accumulators of one (feature, class) over its stored entries: count, ``h`` (the first stored
#: value), and the sums of ``x - h`` and of its square.
N_ACC = 4


@njit(inline="always", **_EXACT)
def _add_entry(acc, j, c, x):
    """Add the stored value ``x`` to the accumulators ``acc[j, c]`` (see :data:`N_ACC`)."""
    n = acc[j, c, 0]
    if n == 0.0:
        acc[j, c, 1] = x
    d = x - acc[j, c, 1]
    acc[j, c, 0] = n + 1.0
    acc[j, c, 2] += d
    acc[j, c, 3] += d * d


@njit(inline="always", **_EXACT)
def _class_moments(acc, j, c, nc):
    """(mean of ``x - h``, M2, h) of a class of ``nc`` rows from its stored entries' accumulators,
    zeros included; ``h`` is the class's first stored value (NaN, mean 0, with none stored).

    With S1, S2 the sums of ``x - h`` and its square over the class, the zeros (``-h`` each)
    added in closed form, the mean is S1 / nc and M2 is ``(nc S2 - S1^2) / nc``: exactly 0 for a
    class whose values are all equal. ``h``, a value of the class, keeps large offsets from
    cancelling; ``rebase_means`` puts every class's mean about one shift per feature.
    """
    n = acc[j, c, 0]
    if n == 0.0:
        return 0.0, 0.0, np.nan
    z = nc - n
    h = acc[j, c, 1]
    s1 = acc[j, c, 2] - z * h
    s2 = acc[j, c, 3] + z * (h * h)
    num = nc * s2 - s1 * s1
    m2 = num / nc if np.isfinite(num) else s2 - s1 * (s1 / nc)
    return s1 / nc, max(m2, 0.0), h


@njit(parallel=True, **_EXACT)
def rebase_means(mean, base, shift):
    """Class means ``mean`` (k, p), each of ``x - base[c, j]`` (NaN base: a class with nothing
    stored, whose values are all 0), rewritten about ``shift[j]``: the base of the first class
    holding an entry (0 for a feature with none). Values with a common offset have bases within a
    factor of two of each other, whose difference is exact."""
    k, p = mean.shape
    for j in prange(p):
        h = 0.0
        for c in range(k):
            if not np.isnan(base[c, j]):
                h = base[c, j]
                break
        shift[j] = h
        for c in range(k):
            b = base[c, j]
            mean[c, j] = -h if np.isnan(b) else mean[c, j] + (b - h)


@njit(**_EXACT)
def _csr_block(data, indices, indptr, codes, pos, j1, acc, base):
    """Add the entries of columns ``[.., j1)`` of every row, from ``pos[i]`` on, to ``acc[j - base]``."""
    for i in range(indptr.shape[0] - 1):
        c = codes[i]
        q = pos[i]
        end = indptr[i + 1]
        while q < end and indices[q] < j1:
            _add_entry(acc, indices[q] - base, c, np.float64(data[q]))
            q += 1
        pos[i] = q


#: Below this magnitude an integer's square is exact in float64 (2**26).
EXACT_SQUARE = 2.0**26
#: Sums of integers stay exact up to here (2**53).
EXACT_SUM = 2.0**53


@njit(**_EXACT)
def _csr_int_block(data, indices, indptr, codes, pos, j1, acc, base):
    """Add the entries of columns ``[.., j1)`` of every row, from ``pos[i]`` on, to the integer
    sums ``acc[j - base]`` (sum and sum of squares); False, at once, on a value that is not an
    integer of magnitude at most :data:`EXACT_SQUARE` (or NaN)."""
    for i in range(indptr.shape[0] - 1):
        c = codes[i]
        q = pos[i]
        end = indptr[i + 1]
        while q < end and indices[q] < j1:
            x = np.float64(data[q])
            if not (abs(x) <= EXACT_SQUARE and x == np.floor(x)):
                return False
            j = indices[q] - base
            acc[j, c, 0] += x
            acc[j, c, 1] += x * x
            q += 1
        pos[i] = q
    return True


@njit(inline="always", **_EXACT)
def _int_moments(acc, j, c, nc):
    """(mean, M2, exact) of a class from its integer sums: ``(nc S2 - S1^2) / nc`` is the correctly
    rounded M2 when ``nc S2`` is at most :data:`EXACT_SUM` (``exact``), as ``_class_moments`` gives."""
    s1 = acc[j, c, 0]
    s2 = acc[j, c, 1]
    return s1 / nc, (nc * s2 - s1 * s1) / nc, nc * s2 <= EXACT_SUM


@njit(**_EXACT)
def _integer_values_in(data, a, b):
    run = data[a:b]
    bad = False
    for q in range(run.shape[0]):
        x = np.float64(run[q])
        bad |= (abs(x) > EXACT_SQUARE) | (x != np.floor(x))
    return not bad


@njit(parallel=True, **_EXACT)
def integer_values(data):
    """Whether every value is an integer of magnitude at most :data:`EXACT_SQUARE` (no NaN): a
    pass in vector instructions on the engine's threads, the test ``csr_int_rows`` and
    ``csc_int_cols`` need and make no more per entry."""
    stripes = 8 if data.shape[0] >= 1 << 20 else 1
    ok = np.ones(stripes, np.bool_)
    size = data.shape[0]
    for s in prange(stripes):
        ok[s] = _integer_values_in(data, size * s // stripes, size * (s + 1) // stripes)
    return ok.all()


@njit(**_EXACT)
def class_order(codes, k):
    """The rows of each class in increasing order, one class after another, and where each
    class starts: ``(order, starts)`` with ``starts[k]`` the number of rows (a counting sort)."""
    starts = np.zeros(k + 1, np.int64)
    for i in range(codes.shape[0]):
        starts[codes[i] + 1] += 1
    for c in range(k):
        starts[c + 1] += starts[c]
    fill = starts[:k].copy()
    order = np.empty(codes.shape[0], np.int64)
    for i in range(codes.shape[0]):
        order[fill[codes[i]]] = i
        fill[codes[i]] += 1
    return order, starts


@njit(parallel=True, **_EXACT)
def csr_int_rows(data, indices, indptr, order, starts, count, mean, m2, width, stripes):
    """``csr_rows`` for integer values (:func:`integer_values` holds): two sums per (feature,
    class), and the same numbers as ``csr_rows`` gives them (both correctly rounded).

    Each of ``stripes`` threads walks its run of blocks of ``width`` features; within a block,
    one class at a time (``order``, ``starts``: :func:`class_order`), so the accumulators of a
    block are those of one class and a block can be k times wider for the same cache. The sums
    are exact, so their order does not matter. False when a sum of squares grew past exactness:
    then ``mean`` and ``m2`` are incomplete; use ``csr_rows``.
    """
    k, p = mean.shape
    n_blocks = (p + width - 1) // width
    per = (n_blocks + stripes - 1) // stripes
    ok = np.ones(stripes, np.bool_)
    for s in prange(stripes):
        b0, b1 = s * per, min(n_blocks, (s + 1) * per)
        if b0 >= b1:
            continue
        pos = row_cursors(indices, indptr, b0 * width)
        acc = np.empty((width, 2))
        exact = True
        for b in range(b0, b1):
            j0, j1 = b * width, min(p, (b + 1) * width)
            for c in range(k):
                acc[:] = 0.0
                for t in range(starts[c], starts[c + 1]):
                    i = order[t]
                    q = pos[i]
                    end = indptr[i + 1]
                    while q < end and indices[q] < j1:
                        x = np.float64(data[q])
                        j = indices[q] - j0
                        acc[j, 0] += x
                        acc[j, 1] += x * x
                        q += 1
                    pos[i] = q
                nc = count[c]
                mc = mean[c, j0:j1]
                vc = m2[c, j0:j1]
                for j in range(j1 - j0):
                    s1 = acc[j, 0]
                    s2 = acc[j, 1]
                    mc[j] = s1 / nc
                    vc[j] = (nc * s2 - s1 * s1) / nc
                    exact &= nc * s2 <= EXACT_SUM
        ok[s] = exact
    return ok.all()


#: Assumed size of a core's second-level cache where the system does not tell it.
DEFAULT_CORE_CACHE = 256 * 2**10


@functools.lru_cache(maxsize=4)
def core_cache_bytes(root="/sys/devices/system/cpu/cpu0/cache"):
    """Size in bytes of one core's second-level cache (data or unified), as Linux describes it
    under ``root``; :data:`DEFAULT_CORE_CACHE` where it does not."""
    root = Path(root)
    try:
        for entry in sorted(root.glob("index*")):
            if (entry / "level").read_text().strip() == "2" and \
                    (entry / "type").read_text().strip() in ("Data", "Unified"):
                text = (entry / "size").read_text().strip().upper()
                scale = {"K": 2**10, "M": 2**20}.get(text[-1:], 1)
                return int(text.rstrip("KM")) * scale
    except (OSError, ValueError):
        pass
    return DEFAULT_CORE_CACHE


def row_blocks(n, p, nnz, threads, feature_bytes):
    """``(width, stripes)`` of the CSR kernels that take one class at a time. Any value gives
    the same numbers; the time is a balance of two costs: a class's sums of a block are cheap
    to update while they stay in the core's second-level cache (``feature_bytes`` per feature:
    16 for ``csr_int_rows``, 8 * N_ACC for ``csr_rows``), and every block visits every row (a
    cursor, and the row's next entries fetched from memory). A block's sums take at most half
    of that cache, the other half holding the rows' entries passing through (on a core of
    2 MiB, sums filling the whole cache took 1.4x as long, an eighth of it 1.7x). Blocks are
    then widened until a row holds about 64 entries in each, or n / 32 when there are many
    rows (each visit then costs more: their cursors no longer stay in cache), up to 131072
    features; at least four runs per thread where there are blocks enough."""
    width = 1024
    while 2 * width * feature_bytes <= core_cache_bytes() // 2:
        width *= 2
    per_visit = max(64.0, n / 32.0)
    want = per_visit * p / max(nnz / max(n, 1), 1e-9)
    while width < want and width < (1 << 17):
        width *= 2
    width = int(min(width, max(p, 1)))
    return width, int(max(1, min(4 * threads, -(-p // width))))


@njit(parallel=True, **_EXACT)
def csr_int_stored(data, indices, indptr, codes, acc, width, stripes):
    """Continue the integer sums ``acc`` (p, k, 2) with more CSR rows; False as ``csr_int_rows``
    (the sums are then incomplete)."""
    p = acc.shape[0]
    n_blocks = (p + width - 1) // width
    per = (n_blocks + stripes - 1) // stripes
    ok = np.ones(stripes, np.bool_)
    for s in prange(stripes):
        b0, b1 = s * per, min(n_blocks, (s + 1) * per)
        pos = row_cursors(indices, indptr, b0 * width)
        for b in range(b0, b1):
            if not _csr_int_block(data, indices, indptr, codes, pos, min(p, (b + 1) * width), acc, 0):
                ok[s] = False
                break
    return ok.all()


@njit(parallel=True, **_EXACT)
def csr_int_with_zeros(acc, count, mean, m2):
    """``mean``, ``m2`` (k, p) from the integer sums; False when one is not exact (see ``csr_int_rows``)."""
    k, p = mean.shape
    ok = np.ones(p, np.bool_)
    for j in prange(p):
        for c in range(k):
            mean[c, j], m2[c, j], exact = _int_moments(acc, j, c, count[c])
            ok[j] &= exact
    return ok.all()


@njit(parallel=True, **_EXACT)
def csc_int_cols(data, indices, indptr, codes, count, mean, m2):
    """``csr_int_rows`` for CSC columns (rows sorted in each; :func:`integer_values` holds).

    The entries of a column go alternately to two sets of sums, merged at its end: two chains
    of additions instead of one per class (the sums are exact, so the split changes nothing).
    """
    k, p = mean.shape
    stripes = min(p, 256)
    per = (p + stripes - 1) // stripes
    ok = np.ones(stripes, np.bool_)
    for s in prange(stripes):
        acc = np.empty((2, k, 2))
        exact = True
        for j in range(s * per, min(p, (s + 1) * per)):
            acc[:] = 0.0
            q = indptr[j]
            end = indptr[j + 1]
            while q + 1 < end:
                x = np.float64(data[q])
                c = codes[indices[q]]
                u = np.float64(data[q + 1])
                d = codes[indices[q + 1]]
                acc[0, c, 0] += x
                acc[0, c, 1] += x * x
                acc[1, d, 0] += u
                acc[1, d, 1] += u * u
                q += 2
            if q < end:
                x = np.float64(data[q])
                c = codes[indices[q]]
                acc[0, c, 0] += x
                acc[0, c, 1] += x * x
            for c in range(k):
                nc = count[c]
                s1 = acc[0, c, 0] + acc[1, c, 0]
                s2 = acc[0, c, 1] + acc[1, c, 1]
                mean[c, j] = s1 / nc
                m2[c, j] = (nc * s2 - s1 * s1) / nc
                exact &= nc * s2 <= EXACT_SUM
        ok[s] = exact
    return ok.all()


@njit(**_EXACT)
def _csr_class_block(data, indices, indptr, order, t0, t1, pos, j1, acc, base):
    """``_csr_block`` for the rows ``order[t0:t1]`` of one class, into ``acc[j - base, 0]``."""
    for t in range(t0, t1):
        i = order[t]
        q = pos[i]
        end = indptr[i + 1]
        while q < end and indices[q] < j1:
            _add_entry(acc, indices[q] - base, 0, np.float64(data[q]))
            q += 1
        pos[i] = q


@njit(parallel=True, **_EXACT)
def csr_rows(data, indices, indptr, order, starts, count, w, mean, m2, base, cross, width, stripes):
    """CSR rows with sorted indices: moments of every (class, feature), implicit zeros included;
    ``mean[c, j]`` of ``x - base[c, j]`` (see ``_class_moments``; then ``rebase_means``).

    One pass over the stored entries: each of ``stripes`` threads walks its run of blocks of
    ``width`` features left to right with a cursor per row, one class at a time (``order``,
    ``starts``: :func:`class_order`), so the block's accumulators stay in cache and every entry is
    read once; then the class's moments of the block are written out. Each (feature, class) takes
    its entries in row order, as every other form does. With weights ``w``, ``cross`` gets
    ``sum x w`` over the stored entries.
    """
    k, p = mean.shape
    n_blocks = (p + width - 1) // width
    per = (n_blocks + stripes - 1) // stripes
    for s in prange(stripes):
        b0, b1 = s * per, min(n_blocks, (s + 1) * per)
        if b0 >= b1:
            continue
        pos = row_cursors(indices, indptr, b0 * width)
        acc = np.empty((width, 1, N_ACC))
        for b in range(b0, b1):
            j0, j1 = b * width, min(p, (b + 1) * width)
            for c in range(k):
                acc[:] = 0.0
                if w.shape[0] > 0:
                    for t in range(starts[c], starts[c + 1]):
                        i = order[t]
                        q = pos[i]
                        while q < indptr[i + 1] and indices[q] < j1:
                            cross[c, indices[q]] += np.float64(data[q]) * w[i]
                            q += 1
                _csr_class_block(data, indices, indptr, order, starts[c], starts[c + 1], pos, j1, acc, j0)
                for j in range(j1 - j0):
                    mean[c, j0 + j], m2[c, j0 + j], base[c, j0 + j] = _class_moments(acc, j, 0, count[c])


@njit(parallel=True, **_EXACT)
def csc_cols(data, indices, indptr, codes, count, mean, m2, base):
    """``csr_rows`` for CSC columns (rows sorted in each): the same updates in the same order."""
    k, p = mean.shape
    stripes = min(p, 256)
    per = (p + stripes - 1) // stripes
    for s in prange(stripes):
        acc = np.empty((1, k, N_ACC))
        for j in range(s * per, min(p, (s + 1) * per)):
            for c in range(k):
                for f in range(N_ACC):
                    acc[0, c, f] = 0.0
            for q in range(indptr[j], indptr[j + 1]):
                _add_entry(acc, 0, codes[indices[q]], np.float64(data[q]))
            for c in range(k):
                mean[c, j], m2[c, j], base[c, j] = _class_moments(acc, 0, c, count[c])


@njit(parallel=True, **_EXACT)
def unstored_sums(indptr, indices, w):
    """For each CSC column, the sum of ``w`` over the rows it does not store (its rows sorted),
    added directly: as a difference of the whole sum and the stored one it would carry the
    rounding of the whole sum."""
    p = indptr.shape[0] - 1
    n = w.shape[0]
    out = np.zeros(p)
    for j in prange(p):
        q = indptr[j]
        end = indptr[j + 1]
        total = 0.0
        for i in range(n):
            if q < end and indices[q] == i:
                q += 1
            else:
                total += w[i]
        out[j] = total
    return out


@njit(parallel=True, **_EXACT)
def csr_stored_moments(data, indices, indptr, codes, acc, width, stripes):
    """Continue the stored-entry accumulators ``acc`` (p, k, N_ACC) with more CSR rows."""
    p = acc.shape[0]
    n_blocks = (p + width - 1) // width
    per = (n_blocks + stripes - 1) // stripes
    for s in prange(stripes):
        b0, b1 = s * per, min(n_blocks, (s + 1) * per)
        if b0 >= b1:
            continue
        pos = row_cursors(indices, indptr, b0 * width)
        for b in range(b0, b1):
            _csr_block(data, indices, indptr, codes, pos, min(p, (b + 1) * width), acc, 0)


@njit(parallel=True, **_EXACT)
def csr_moments_with_zeros(acc, count, mean, m2, base):
    """``mean``, ``m2``, ``base`` (k, p) from the stored-entry accumulators and the class counts
    (zeros added), as ``csr_rows`` gives them."""
    k, p = mean.shape
    for j in prange(p):
        for c in range(k):
            mean[c, j], m2[c, j], base[c, j] = _class_moments(acc, j, c, count[c])
