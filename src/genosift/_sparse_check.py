"""Structural checks for compressed sparse arrays read from untrusted files."""
import numpy as np

__all__ = ["check_sparse_structure"]


def _fail(path, fmt, what):
    raise ValueError(
        f"Cannot read {str(path)!r} as {fmt}: {what}. The file is damaged or was not "
        "written by a compatible tool; write it again from the source data.")


def check_sparse_structure(indptr, indices, n_major, n_minor, *, nnz=None,
                           path="<memory>", fmt="a sparse matrix"):
    """Raise ValueError unless (indptr, indices) form a valid CSR/CSC structure.

    One vectorised pass over indptr and indices; no loop over entries.
    """
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    if n_major < 0 or n_minor < 0:
        _fail(path, fmt, f"negative shape ({n_major}, {n_minor})")
    if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
        _fail(path, fmt, f"index pointer has {indptr.size} entries, expected {n_major + 1}")
    if n_major + 1 and indptr[0] != 0:
        _fail(path, fmt, f"index pointer starts at {int(indptr[0])}, expected 0")
    if n_major:
        bad = np.flatnonzero(np.diff(indptr) < 0)
        if bad.size:
            _fail(path, fmt, f"index pointer decreases at position {int(bad[0]) + 1}")
    n = indices.shape[0] if indices.ndim == 1 else -1
    if nnz is not None and nnz != n:
        _fail(path, fmt, f"{nnz} stored values but {n} indices")
    if int(indptr[-1]) != n:
        _fail(path, fmt, f"index pointer ends at {int(indptr[-1])} but there are {n} indices")
    if n:
        if indices.dtype.kind not in "iu":
            _fail(path, fmt, f"indices have non-integer type {indices.dtype}")
        lo, hi = indices.min(), indices.max()
        if lo < 0 or hi >= n_minor:
            pos = int(np.flatnonzero((indices < 0) | (indices >= n_minor))[0])
            _fail(path, fmt, f"index {int(indices[pos])} at position {pos} is outside 0..{n_minor - 1}")
