"""Neighbour-based scores: ReliefF.

ReliefF (Kononenko 1994) rewards a feature that differs between a sample and its nearest
neighbours of other classes ("misses") and penalises one that differs between a sample and its
nearest neighbours of the same class ("hits"). Every sample is an instance (m = n).

Definitions used here, for continuous features:

- each feature is scaled by its range, ``s_j = (x_j - min_j) / (max_j - min_j)``, and the
  difference of two samples on feature ``j`` is ``diff_j(a, b) = |s_aj - s_bj|`` (in [0, 1]);
- the distance of two samples is Manhattan on the scaled features, ``sum_j diff_j(a, b)`` over
  the non-constant features;
- for sample ``i`` of class ``y``: its ``h = min(k, n_y - 1)`` nearest hits ``H`` (itself
  excluded) and, for every other class ``c``, its ``m_c = min(k, n_c)`` nearest misses ``M_c``;
  ties in distance go to the lower sample index;
- ``W_j = (1/n) sum_i [ -(1/h) sum_{H} diff_j + sum_{c != y} w_c (1/m_c) sum_{M_c} diff_j ]``,
  where the hit term is left out for a sample alone in its class (``h = 0``), and ``w_c`` is
  ``p_c / (1 - p_y)`` with class priors ``p = n_c / n`` (``miss_weight="prior"``, Kononenko's
  ReliefF) or ``1 / (C - 1)`` (``miss_weight="equal"``, what skrebate 0.8.4 computes).

Agreement with ``skrebate.ReliefF(n_neighbors=k).feature_importances_`` (0.8.4), on features it
treats as continuous (more than 10 distinct values): the same numbers (to ~1e-16) for two
classes, and with ``miss_weight="equal"`` for 3 to 10 classes, whenever every class has more
than ``k`` samples. Differences: (1) skrebate orders neighbours with numpy's default, unstable
argsort, so tied distances (discrete data) may go to either sample; with a stable sort it picks
the lower index, as here. (2) For a class with at most ``k`` samples, skrebate counts each sample
as one of its own hits (difference 0, diluting the hit term), and, with several classes, weights
the misses of class ``c`` by ``(C - 1) m_c / M^2`` (``M`` all misses found), which adds up to more
than 1 when the ``m_c`` differ. (3) Features with at most 10 distinct values are discrete for
skrebate (Hamming distance, mixed with Manhattan); here every feature is range-scaled, which
gives the same differences for 0/1 features.

Memory is bounded by ``genosift.core.engine.BLOCK_BYTES`` whatever ``n``: query samples are taken in
row blocks of ``R`` rows, with ``R x n`` distances (``R * n * 8 <= ROW_BLOCK_BYTES``, by default
``BLOCK_BYTES``), accumulated over feature blocks of ``n x w`` values (``engine.column_blocks``);
the nearest hits and misses of the row block are kept, and the weight updates are accumulated
over the feature blocks again. No ``n x n`` matrix is built and sparse input is densified one
column block at a time. Every distance is summed feature by feature in column order and every
weight query by query in row order, so the result does not depend on the block sizes.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..core import engine
from ..core.constraints import Choice, Integer
from ._base import Scores, register

#: Bytes of the ``R x n`` float64 distances of one block of query rows; None: ``engine.BLOCK_BYTES``.
ROW_BLOCK_BYTES = None

_JIT = dict(nogil=True, cache=True, error_model="numpy")
_TILE_Q, _TILE_L = 4, 512  # distance tiles: query rows x samples, kept in L1/L2 while j runs
_PARALLEL_WORK = 2**21  # inner-loop steps below which a kernel runs on one thread (no thread start-up)


@njit(**_JIT)
def _manhattan_tile(ST, r0, D, q0, q1, l0, l1):
    """``D[q0:q1, l0:l1] += |ST[j, r0 + q] - ST[j, l]|`` for each feature ``j`` in turn.

    Four query rows at a time share each load of ``ST[j, l]`` (the loop over ``l`` vectorises).
    """
    w = ST.shape[0]
    if q1 - q0 == 4:
        o0, o1, o2, o3 = D[q0, l0:l1], D[q0 + 1, l0:l1], D[q0 + 2, l0:l1], D[q0 + 3, l0:l1]
        for j in range(w):
            row = ST[j, l0:l1]
            x0, x1, x2, x3 = ST[j, r0 + q0], ST[j, r0 + q0 + 1], ST[j, r0 + q0 + 2], ST[j, r0 + q0 + 3]
            for l in range(l1 - l0):
                v = row[l]
                o0[l] += abs(x0 - v)
                o1[l] += abs(x1 - v)
                o2[l] += abs(x2 - v)
                o3[l] += abs(x3 - v)
    else:
        for j in range(w):
            row = ST[j, l0:l1]
            for q in range(q0, q1):
                xq = ST[j, r0 + q]
                out = D[q, l0:l1]
                for l in range(l1 - l0):
                    out[l] += abs(xq - row[l])


def _tiles(R, n):
    return ((R + _TILE_Q - 1) // _TILE_Q) * ((n + _TILE_L - 1) // _TILE_L)


@njit(**_JIT)
def _manhattan_tile_number(ST, r0, D, t):
    n = ST.shape[1]
    R = D.shape[0]
    n_l = (n + _TILE_L - 1) // _TILE_L
    q0 = (t // n_l) * _TILE_Q
    l0 = (t % n_l) * _TILE_L
    _manhattan_tile(ST, r0, D, q0, min(R, q0 + _TILE_Q), l0, min(n, l0 + _TILE_L))


@njit(parallel=True, **_JIT)
def _manhattan_parallel(ST, r0, D, n_tiles):
    for t in prange(n_tiles):
        _manhattan_tile_number(ST, r0, D, t)


@njit(**_JIT)
def _manhattan_serial(ST, r0, D, n_tiles):
    for t in range(n_tiles):
        _manhattan_tile_number(ST, r0, D, t)


def _add_manhattan(ST, r0, D):
    """``D[q, l] += sum_j |ST[j, r0 + q] - ST[j, l]|``, ``j`` in order (ST: features x samples).

    Each ``D[q, l]`` gets its terms one feature at a time in column order, whatever the tiling
    and the threads.
    """
    run = _manhattan_parallel if D.size * ST.shape[0] >= _PARALLEL_WORK else _manhattan_serial
    run(ST, r0, D, _tiles(*D.shape))
    return D


@njit(**_JIT)
def _nearest_one(d_row, i, codes, k, dist, idx, cnt):
    """The ``k`` nearest samples of each class to sample ``i`` (itself excluded), from its distances.

    ``idx[c, :cnt[c]]`` are the nearest samples of class ``c``, nearest first; equal distances
    keep the lower sample index first (samples are visited in index order and a newcomer goes
    after every kept sample at the same distance).
    """
    cnt[:] = 0
    for l in range(d_row.shape[0]):
        if l == i:
            continue
        c = codes[l]
        d = d_row[l]
        m = cnt[c]
        if m == k:
            if not d < dist[c, k - 1]:
                continue
            pos = k - 1
        else:
            pos = m
            cnt[c] = m + 1
        while pos > 0 and dist[c, pos - 1] > d:
            dist[c, pos] = dist[c, pos - 1]
            idx[c, pos] = idx[c, pos - 1]
            pos -= 1
        dist[c, pos] = d
        idx[c, pos] = l


@njit(parallel=True, **_JIT)
def _nearest_parallel(D, r0, codes, k, idx, cnt):
    for q in prange(D.shape[0]):
        _nearest_one(D[q], r0 + q, codes, k, np.empty(idx.shape[1:]), idx[q], cnt[q])


@njit(**_JIT)
def _nearest_serial(D, r0, codes, k, idx, cnt):
    dist = np.empty(idx.shape[1:])
    for q in range(D.shape[0]):
        _nearest_one(D[q], r0 + q, codes, k, dist, idx[q], cnt[q])


def _nearest(D, r0, codes, k, idx, cnt):
    """Nearest hits and misses of each query row of ``D``: ``idx[q, c, :cnt[q, c]]``."""
    run = _nearest_parallel if D.size >= _PARALLEL_WORK else _nearest_serial
    run(D, r0, codes, k, idx, cnt)


@njit(**_JIT)
def _update_one(row, r0, codes, idx, cnt, weight, acc):
    """``acc + sum_q sum_c weight[y_q, c] / m_qc * sum_{l in idx[q, c]} |row[r0 + q] - row[l]|``."""
    R, C, _ = idx.shape
    for q in range(R):
        xq = row[r0 + q]
        y = codes[r0 + q]
        for c in range(C):
            m = cnt[q, c]
            if m == 0:
                continue
            s = 0.0
            for t in range(m):
                s += abs(xq - row[idx[q, c, t]])
            acc += weight[y, c] * (s / m)
    return acc


@njit(parallel=True, **_JIT)
def _updates_parallel(ST, r0, codes, idx, cnt, weight, W):
    for j in prange(ST.shape[0]):
        W[j] = _update_one(ST[j], r0, codes, idx, cnt, weight, W[j])


@njit(**_JIT)
def _updates_serial(ST, r0, codes, idx, cnt, weight, W):
    for j in range(ST.shape[0]):
        W[j] = _update_one(ST[j], r0, codes, idx, cnt, weight, W[j])


def _add_updates(ST, r0, codes, idx, cnt, weight, W):
    """Add the row block's weight updates to ``W`` (the block's features), queries in row order.

    ``weight[y, y]`` is -1 (hits), ``weight[y, c]`` the weight of class ``c``'s misses; adding
    queries in row order makes ``W`` independent of how rows are blocked.
    """
    run = _updates_parallel if ST.shape[0] * idx.size >= _PARALLEL_WORK else _updates_serial
    run(ST, r0, codes, idx, cnt, weight, W)


def _scaled_blocks(M, width, lo, span):
    """Yield ``(j0, j1, ST)``: range-scaled feature blocks, transposed (features x samples).

    ``ST[j] = (x_j - min_j) / range_j``; constant features are all zero, so they add nothing to
    any distance.
    """
    for j0, j1, block in engine.column_blocks(M, width):
        s = span[j0:j1, None]
        ST = np.empty((j1 - j0, block.shape[0]))
        np.subtract(block.T, lo[j0:j1, None], out=ST)
        ST /= np.where(s > 0, s, 1.0)
        ST[s[:, 0] == 0] = 0.0
        yield j0, j1, ST


def _column_ranges(M, width):
    """Per-feature minimum and range (max - min), one column block at a time."""
    p = M.shape[1]
    lo, hi = np.empty(p), np.empty(p)
    for j0, j1, block in engine.column_blocks(M, width):
        lo[j0:j1] = block.min(axis=0)
        hi[j0:j1] = block.max(axis=0)
    return lo, hi - lo


def _miss_weights(count, miss_weight):
    """``weight[y, c]``: -1 on the diagonal (hits), the weight of class ``c``'s misses elsewhere."""
    C = count.shape[0]
    if miss_weight == "prior":
        # p_c / (1 - p_y) with p = count / n
        weight = count[None, :] / (count.sum() - count[:, None])
    else:  # "equal", the other value the declaration takes
        weight = np.full((C, C), 1.0 / (C - 1))
    np.fill_diagonal(weight, -1.0)
    return weight


@register(
    "relieff", invariance="affine", task="classification", streaming="matrix", scale_free=True,
    formula="W_j = (1/n) sum_i [-(1/h) sum_hits |ds_j| + sum_c p_c/(1-p_yi) (1/m_c) sum_misses_c |ds_j|]; "
            "k nearest hits and misses per class, Manhattan on range-scaled features",
    reference="Kononenko (1994), ECML; Robnik-Sikonja & Kononenko (2003), Mach. Learn. 53:23-69; "
              "skrebate.ReliefF",
    options={"n_neighbors": Integer(low=1), "miss_weight": Choice("prior", "equal")},
)
def relieff(M, target, *, n_neighbors=10, miss_weight="prior"):
    """ReliefF: k nearest hits and misses per class, Manhattan distance on range-scaled features.

    Parameters
    ----------
    n_neighbors : int, default 10
        ``k``, the number of nearest hits and of nearest misses of each other class per sample.
        A class with too few samples gives what it has: ``min(k, n_y - 1)`` hits,
        ``min(k, n_c)`` misses (no error); a sample alone in its class has no hit term.
        (skrebate also clips, but counts the sample itself as a hit when ``n_y <= k``.)
    miss_weight : {"prior", "equal"}, default "prior"
        Weight of the misses of class ``c`` for a sample of class ``y``: ``"prior"``,
        ``p_c / (1 - p_y)`` with the class frequencies (Kononenko 1994); ``"equal"``,
        ``1 / (C - 1)``, what ``skrebate.ReliefF`` computes for 3 to 10 classes when every
        class has more than ``k`` samples. Both are the same for two classes.

    Every sample is an instance. Scores lie in [-1, 1], higher = more relevant; a constant
    feature scores NaN. Every feature is treated as continuous (skrebate treats features with at
    most 10 distinct values as discrete; on 0/1 features the two agree). Ties in distance go to
    the sample with the lower index.
    """
    n, p = M.shape
    count = target.count
    k = int(min(n_neighbors, count.max()))  # no class can give more
    weight = _miss_weights(count, miss_weight)
    codes = np.ascontiguousarray(target.codes, dtype=np.intp)
    C = count.shape[0]

    if sp.issparse(M):
        M = M.tocsc()  # once: every column block below is a slice of it
    width = engine.block_width(n)
    lo, span = _column_ranges(M, width)
    budget = engine.BLOCK_BYTES if ROW_BLOCK_BYTES is None else ROW_BLOCK_BYTES
    # per query row: n distances, and the sample numbers of its C * k nearest neighbours
    rows = int(max(1, min(n, budget // (8 * (n + C * k)))))
    # a single feature block is scaled once and kept; otherwise it is rebuilt for each pass
    cached = list(_scaled_blocks(M, width, lo, span)) if width >= p else None

    def blocks():
        return cached if cached is not None else _scaled_blocks(M, width, lo, span)

    W = np.zeros(p)
    idx = np.empty((rows, C, k), dtype=np.intp)
    cnt = np.empty((rows, C), dtype=np.intp)
    D = np.empty((rows, n))
    for r0 in range(0, n, rows):
        R = min(rows, n - r0)
        d = D[:R]
        d.fill(0.0)
        for _, _, ST in blocks():
            _add_manhattan(ST, r0, d)
        _nearest(d, r0, codes, k, idx[:R], cnt[:R])
        for j0, j1, ST in blocks():
            _add_updates(ST, r0, codes, idx[:R], cnt[:R], weight, W[j0:j1])
    W /= n
    W[span == 0] = np.nan
    return Scores(W)
