"""Chosen columns of a CSR matrix as a CSC matrix, in two compiled passes over its entries.

``scipy``'s ``M[:, cols]`` on CSR walks every stored entry twice on one thread and builds a CSR
result that must then be converted; :func:`take_columns` counts and copies the entries of the
chosen columns straight into CSC arrays, rows split in stripes over the engine's threads (each
stripe writes its own part of every column, so every column's rows stay sorted). The matrix
must have been checked (``_sparse_check``): indices within the shape.
"""
from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from numba import njit, prange


@njit(nogil=True, cache=True)
def column_counts(indices, p):
    """Entries of each of ``p`` columns among sparse ``indices`` (``np.bincount`` casts int32
    indices at a tenth of this speed)."""
    counts = np.zeros(p, np.int64)
    for j in indices:
        counts[j] += 1
    return counts


@njit(parallel=True, nogil=True, cache=True)
def _count(indices, indptr, chosen, where, m, stripes):
    """Entries of each chosen column (``chosen[j]`` set, ``where[j]`` its place among them) in
    each stripe of rows. The byte mask is tested first: it stays in cache where ``where`` would not."""
    n = indptr.shape[0] - 1
    counts = np.zeros((stripes, m), np.int64)
    for s in prange(stripes):
        row = counts[s]
        for q in range(indptr[n * s // stripes], indptr[n * (s + 1) // stripes]):
            j = indices[q]
            if chosen[j]:
                row[where[j]] += 1
    return counts


@njit(parallel=True, nogil=True, cache=True)
def _copy(data, indices, indptr, chosen, where, starts, out_data, out_rows):
    """Copy the chosen entries, stripe ``s`` of column ``c`` from ``starts[s, c]`` on."""
    n = indptr.shape[0] - 1
    stripes = starts.shape[0]
    for s in prange(stripes):
        pos = starts[s].copy()
        for i in range(n * s // stripes, n * (s + 1) // stripes):
            for q in range(indptr[i], indptr[i + 1]):
                j = indices[q]
                if chosen[j]:
                    c = where[j]
                    out_data[pos[c]] = data[q]
                    out_rows[pos[c]] = i
                    pos[c] += 1


def take_columns(M, cols, dtype=np.float64):
    """``M[:, cols]`` of a checked CSR matrix as a canonical CSC matrix of ``dtype``; ``cols``
    distinct column indices (a repeated column is taken by scipy)."""
    cols = np.asarray(cols, dtype=np.int64)
    n, p = M.shape
    m = cols.size
    chosen = np.zeros(p, np.uint8)
    chosen[cols] = 1
    if np.count_nonzero(chosen) != m:  # a column asked for twice
        return sp.csc_matrix(M[:, cols], dtype=dtype)
    where = np.zeros(p, np.int32 if m <= np.iinfo(np.int32).max else np.int64)
    where[cols] = np.arange(m)
    stripes = int(max(1, min(n, 4 * numba.get_num_threads())))
    counts = _count(M.indices, M.indptr, chosen, where, m, stripes)
    indptr = np.zeros(m + 1, np.int64)
    np.cumsum(counts.sum(axis=0), out=indptr[1:])
    starts = indptr[:-1] + np.cumsum(counts, axis=0) - counts  # stripe s after the stripes before it
    index = np.int32 if max(n, indptr[-1]) <= np.iinfo(np.int32).max else np.int64  # as scipy would choose
    out_data = np.empty(indptr[-1], dtype)
    out_rows = np.empty(indptr[-1], index)
    _copy(M.data, M.indices, M.indptr, chosen, where, starts, out_data, out_rows)
    out = sp.csc_matrix((out_data, out_rows, indptr.astype(index)), shape=(n, m))
    out.has_sorted_indices = True  # rows in order in every column; repeated only if M repeats an entry
    if M.has_canonical_format:
        out.has_canonical_format = True
    return out
