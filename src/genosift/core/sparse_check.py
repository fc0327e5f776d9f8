"""Structural checks of compressed sparse arrays, before any compiled code indexes with them.

scipy's constructors check the lengths of ``indptr``, ``indices`` and ``data`` but not the values
of the indices, and a C or numba kernel that follows an index past the end of an array crashes the
process or reads other memory. Every sparse matrix that comes from a file or from a caller passes
here first: one pass over the index arrays, without temporaries.
"""
from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp
from numba import get_num_threads, njit, prange

__all__ = ["check_sparse_matrix", "check_sparse_structure"]

_FAULTS = {
    1: "its index pointer decreases after position {at}",
    2: "its index pointer passes the end of the indices at position {at}",
    3: "the index {value} at position {at} is outside 0..{last}",
    4: "the index {value} at position {at} is not greater than the one before it in its row or column "
       "(indices must be sorted and unique)",
}


@njit(nogil=True, cache=True)
def _first_fault_in(indptr, indices, n_minor, strictly_increasing, r0, r1):
    """``(code, position)`` of the first fault of rows ``r0:r1``, ``(0, 0)`` if none. A row whose
    start is negative lies after a decrease, which an earlier row reports."""
    size = indices.shape[0]
    for r in range(r0, r1):
        a = indptr[r]
        b = indptr[r + 1]
        if b < a or a < 0:
            return 1, r
        if b > size:
            return 2, r + 1
        last = -1
        for k in range(a, b):
            j = indices[k]
            if j < 0 or j >= n_minor:
                return 3, k
            if strictly_increasing and j <= last:
                return 4, k
            last = j
    return 0, 0


@njit(nogil=True, cache=True)
def _pointers_ok(indptr, size):
    """Whether the index pointer never decreases and ends within ``size`` indices (it starts at 0)."""
    bad = False
    for r in range(indptr.shape[0] - 1):
        bad |= indptr[r + 1] < indptr[r]
    return not bad and indptr[indptr.shape[0] - 1] <= size


@njit(nogil=True, cache=True)
def _entries_in(indices, a, b):
    """``(lowest, highest, drops)`` of ``indices[a:b]`` (with 0 and -1 among them): drops count
    the positions ``k > 0`` whose index is not above the one before it (compared across rows
    too, see ``_run``). One flat pass of min/max/count reductions in the indices' own
    type, in vector instructions whatever the rows' lengths."""
    if a >= b:
        return 0, -1, 0
    a1 = max(a, 1)
    cur = indices[a1:b]
    prev = indices[a1 - 1:b - 1]
    lo = indices[a]
    hi = lo
    drops = 0
    for k in range(cur.shape[0]):
        j = cur[k]
        lo = min(lo, j)
        hi = max(hi, j)
        drops += j <= prev[k]
    return min(np.int64(lo), 0), max(np.int64(hi), -1), drops


#: Entries summarised at a time by ``_run``, then the row starts among them while they are in cache.
_CHUNK = 1 << 15


@njit(nogil=True, cache=True)
def _run(indptr, indices, a, b):
    """``(lowest, highest, drops within rows)`` of positions ``a:b`` of a structure whose pointers
    are checked: ``_entries_in`` over chunks of ``_CHUNK`` entries, each followed by the row
    starts that fall in it (a drop there is between two rows, not within one). Reading a row's
    first entry right after its chunk keeps short rows (CSC columns of a few entries) from
    costing a second pass over the indices."""
    n = indptr.shape[0] - 1
    r = np.searchsorted(indptr, a)  # the first row starting at a or after: earlier ones are another run's
    lo = 0
    hi = -1
    drops = 0
    for c0 in range(a, b, _CHUNK):
        c1 = min(b, c0 + _CHUNK)
        low, high, d = _entries_in(indices, c0, c1)
        lo = min(lo, low)
        hi = max(hi, high)
        drops += d
        while r < n and indptr[r] < c1:
            start = indptr[r]
            if 0 < start < indptr[r + 1]:
                drops -= indices[start] <= indices[start - 1]
            r += 1
    return lo, hi, drops


@njit(nogil=True, cache=True, parallel=True)
def _entries(indptr, indices, stripes):
    """``_run`` over the entries in ``stripes`` runs on the engine's threads."""
    end = indptr[indptr.shape[0] - 1]
    lo = np.zeros(stripes, np.int64)
    hi = np.zeros(stripes, np.int64)
    drops = np.zeros(stripes, np.int64)
    for s in prange(stripes):
        lo[s], hi[s], drops[s] = _run(indptr, indices, end * s // stripes, end * (s + 1) // stripes)
    return lo.min(), hi.max(), drops.sum()


#: Structures with fewer indices than this are checked on one thread.
PARALLEL_FROM = 1 << 20


def _fail(what, path, fmt):
    if path is None:
        raise ValueError(
            f"X is not a valid sparse matrix: {what}. Its index arrays were changed or built by hand; "
            "build it again from valid indices (X.check_format(full_check=True) shows the fault)."
        )
    raise ValueError(
        f"Cannot read {str(path)!r} as {fmt}: {what}. The file is damaged or was not written by a "
        "compatible tool; write it again from the source data."
    )


def check_sparse_structure(indptr, indices, n_major, n_minor, *, nnz=None, sorted_indices=False,
                           path=None, fmt="a sparse matrix"):
    """Raise ``ValueError`` unless ``(indptr, indices)`` are a valid CSR (or CSC) structure.

    Parameters
    ----------
    indptr, indices : 1-D integer arrays
        Row pointers (column pointers for CSC), starting at 0, and the column (row) indices.
    n_major, n_minor : int
        Rows and columns for CSR (columns and rows for CSC).
    nnz : int, optional
        The number of stored values, when it is known apart from ``indices`` (``len(data)``).
    sorted_indices : bool, default False
        Also require strictly increasing indices within each row (a claimed canonical format).
    path, fmt : optional
        The file the arrays were read from and what it was read as, for the message; without a
        path the message speaks of ``X``, the caller's own matrix.

    Returns
    -------
    bool
        Whether the indices increase strictly within every row (sorted, none twice).
    """
    indptr, indices = np.asarray(indptr), np.asarray(indices)
    for name, a in (("index pointer", indptr), ("indices", indices)):
        if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
            _fail(f"its {name} is not a 1-D integer array (dtype {a.dtype}, {a.ndim} dimension(s))", path, fmt)
    if n_major < 0 or n_minor < 0:
        _fail(f"its shape ({n_major}, {n_minor}) is negative", path, fmt)
    if indptr.size != n_major + 1:
        _fail(f"its index pointer has {indptr.size} entries for {n_major} rows or columns "
              f"(it needs {n_major + 1})", path, fmt)
    if int(indptr[0]) != 0:
        _fail(f"its index pointer starts at {int(indptr[0])}, not 0", path, fmt)
    if nnz is not None and nnz != indices.size:
        _fail(f"it has {nnz} stored values but {indices.size} indices", path, fmt)
    # unsigned 64-bit arrays are summarised as int64: values past its range read as negative,
    # a fault that the exact pass below then names with the value as given
    ptr, idx = (a.view(np.int64) if a.dtype == np.uint64 else a for a in (indptr, indices))
    pointers_ok = _pointers_ok(ptr, indices.size)
    if not pointers_ok:
        lo = hi = drops = 0
    elif indices.size < PARALLEL_FROM or threading.current_thread() is not threading.main_thread():
        # one thread: small structures, and the blocks that worker threads already check side by side
        # (a parallel region started from each worker spins threads that the other workers need)
        lo, hi, drops = _run(ptr, idx, 0, int(ptr[-1]))  # a Python int: one compiled signature
    else:
        lo, hi, drops = _entries(ptr, idx, 4 * get_num_threads())
    increasing = pointers_ok and drops == 0  # every drop at the start of a row
    if pointers_ok and lo >= 0 and hi < n_minor and (increasing or not sorted_indices):
        if int(indptr[-1]) != indices.size:
            _fail(f"its index pointer ends at {int(indptr[-1])} but it has {indices.size} indices", path, fmt)
        return bool(increasing)
    # a fault: find the first one, for the message
    code, at = _first_fault_in(indptr, indices, n_minor, sorted_indices, 0, n_major)
    value = int(indices[at]) if code >= 3 else None
    _fail(_FAULTS[code].format(at=at, value=value, last=n_minor - 1), path, fmt)


def check_sparse_matrix(M, *, path=None, fmt="a sparse matrix"):
    """Check the index structure of a scipy.sparse matrix or array (CSR, CSC, BSR or COO).

    Other formats (DOK, LIL, DIA) hold no index arrays a kernel could follow and pass as they are.
    A CSR/CSC matrix found canonical (indices sorted, none twice in a row or column) is marked so,
    which spares scipy its own pass over the indices. Returns ``M``.
    """
    fmt_name = M.format
    n, p = M.shape
    if fmt_name in ("csr", "csc"):
        major, minor = (n, p) if fmt_name == "csr" else (p, n)
        if check_sparse_structure(M.indptr, M.indices, major, minor, nnz=M.data.shape[0], path=path, fmt=fmt):
            M.has_canonical_format = True
    elif fmt_name == "bsr":
        r, c = M.blocksize
        check_sparse_structure(M.indptr, M.indices, n // r, p // c, nnz=M.data.shape[0], path=path, fmt=fmt)
    elif fmt_name == "coo":
        coords = M.coords if hasattr(M, "coords") else (M.row, M.col)
        for axis, (idx, size) in enumerate(zip(coords, M.shape)):
            if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
                bad = int(np.flatnonzero((idx < 0) | (idx >= size))[0])
                _fail(f"the {'row' if axis == 0 else 'column'} index {int(idx[bad])} at position {bad} is "
                      f"outside 0..{size - 1}", path, fmt)
        if any(idx.size != M.data.shape[0] for idx in coords):
            _fail(f"it has {M.data.shape[0]} stored values but {[int(i.size) for i in coords]} indices", path, fmt)
    elif not sp.issparse(M):
        raise TypeError(f"check_sparse_matrix needs a scipy.sparse matrix, not {type(M).__name__}.")
    return M
