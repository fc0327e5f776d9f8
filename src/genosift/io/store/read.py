"""Low-level reading of a store: 1-D datasets read by byte ranges, the open file of one pass, values
read as presence, and the compiled kernel that gathers CSR rows into CSC columns."""
from __future__ import annotations

import os

import numpy as np
from numba import njit

from ...core.transforms import presence
from ...core.validation import EXACT_INTEGERS, inexact_integer
from .encoding import require_h5py

__all__ = ["FileReader", "Presence", "StoredVector", "exact_values", "gather", "read_dtype"]

_MAX_READ = 1 << 30  # bytes per preadv call (Linux reads at most 2 GiB - 4 KiB at once)


@njit(nogil=True, cache=True)
def gather(csr, row0, j0, j1, cursor, out, sorted_rows):
    """Scatter the entries of CSR rows (``csr``: data, indices, indptr) that fall in columns
    ``[j0, j1)`` into CSC buffers (``out``: data, rows).

    ``cursor[j - j0]`` is where the next entry of column ``j`` goes; rows are taken in order, so
    each column's rows come out ascending. With ``sorted_rows`` each row's start is found by
    binary search and the scan stops at ``j1``.
    """
    data, indices, indptr = csr
    out_data, out_rows = out
    n = indptr.shape[0] - 1
    for r in range(n):
        lo = indptr[r]
        hi = indptr[r + 1]
        if sorted_rows:
            a, b = lo, hi
            while a < b:
                m = (a + b) >> 1
                if indices[m] < j0:
                    a = m + 1
                else:
                    b = m
            lo = a
        for k in range(lo, hi):
            j = indices[k]
            if j >= j1:
                if sorted_rows:
                    break
                continue
            if j < j0:
                continue
            pos = cursor[j - j0]
            out_data[pos] = data[k]
            out_rows[pos] = row0 + r
            cursor[j - j0] = pos + 1


def read_dtype(stored):
    """The type stored values are read in: the stored one in native byte order, float16 as float32
    (every float16 is a float32; the compiled kernels take 32 and 64-bit floats)."""
    stored = np.dtype(stored).newbyteorder("=")
    return np.dtype(np.float32) if stored.kind == "f" and stored.itemsize < 4 else stored


def exact_values(values, path, name):
    """``values``, once any 64-bit integers among them are known to be exact in float64 (within
    +-2**53), in which every score is computed; else a ValueError naming the file and dataset."""
    bad = inexact_integer(values)
    if bad is not None:
        raise ValueError(
            f"{str(path)!r} holds the integer {int(bad)} in {name}, beyond +-2**53 ({EXACT_INTEGERS}): scores "
            "are computed in float64, which cannot hold every such integer, so its feature would score "
            "wrongly. Write the store again from values within that range (subtract an offset or divide).")
    return values


class StoredVector:
    """A 1-D HDF5 dataset, read by ranges: ``os.preadv`` at its byte offset where it is stored
    contiguous and uncompressed (as ``write_store`` stores it), else through h5py. With ``exact``
    (the stored values of a matrix) each range read is checked by ``exact_values``."""

    def __init__(self, ds, exact=False):
        self.name = ds.name
        self.exact = exact
        self.dtype = ds.dtype
        self.out_dtype = read_dtype(ds.dtype)
        self.size = int(ds.shape[0])
        direct = hasattr(os, "preadv") and ds.chunks is None and ds.compression is None  # no preadv on Windows
        offset = ds.id.get_offset() if direct else None
        self.offset = None if offset is None else int(offset)

    def read(self, reader, a, b, dtype=None):
        out_dtype = self.out_dtype if dtype is None else np.dtype(dtype)
        if b <= a:
            return np.empty(0, dtype=out_dtype)
        if self.offset is None:
            values = reader.h5[self.name][a:b]
            return (exact_values(values, reader.path, self.name) if self.exact else values).astype(out_dtype,
                                                                                                    copy=False)
        raw = np.empty(b - a, dtype=self.dtype)
        view = memoryview(raw).cast("B")
        pos = self.offset + a * self.dtype.itemsize
        done = 0
        while done < len(view):
            got = os.preadv(reader.fd, [view[done:done + _MAX_READ]], pos + done)
            if got <= 0:
                raise ValueError(f"{str(reader.path)!r} is truncated: {self.name} ends before its stated size. Write "
                                 "the store again.")
            done += got
        if self.exact:
            exact_values(raw, reader.path, self.name)
        return raw.astype(out_dtype, copy=False)


class FileReader:
    """An open file descriptor (and, on demand, an h5py file) for one pass over the store.

    Opening checks that the file is the one the store opened; ``finish()``, called when the pass
    has read everything, checks it again: a file replaced or edited meanwhile is refused."""

    def __init__(self, store):
        self.path = store.path
        self._store = store
        store._check_unchanged()
        self.fd = os.open(self.path, os.O_RDONLY)
        self._h5 = None
        try:
            store._check_unchanged(self.fd)  # the file opened is the one checked
        except ValueError:
            os.close(self.fd)
            raise

    @property
    def h5(self):
        if self._h5 is None:
            self._h5 = require_h5py().File(self.path, "r")
            self._store._check_unchanged()  # opened by its path: still the file of the descriptor
        return self._h5

    def finish(self):
        """Check, at the end of a pass, that the file read is still the one opened, unchanged."""
        self._store._check_unchanged(self.fd)
        self._store._check_unchanged()

    def close(self):
        if self._h5 is not None:
            self._h5.close()
        os.close(self.fd)


class Presence:
    """A stored vector of values read as presence: 1.0 where the value is above 0, NaN kept."""

    def __init__(self, vector):
        self.vector, self.name, self.size = vector, vector.name, vector.size
        self.dtype = np.dtype(np.float64)

    def read(self, reader, a, b, dtype=None):
        return presence(self.vector.read(reader, a, b))
