"""Parsed k-mer counts kept in memory up to a budget, then spilled to disk, and written into a store.

:class:`Spill` keeps the parsed blocks of a reader while they fit a memory budget, then appends
them to a temporary file beside the output (unlinked at once, so gone with the process however it
ends). :class:`StreamWriter` writes batches of them into the CSR matrix of an open store and its
column copy, each range at its place in the file; :func:`by_column` and :func:`by_row` are the
compiled sorts it uses. Used by :mod:`genosift.io.kmer_store` and :mod:`genosift.io.dumps`.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np
from numba import get_num_threads, njit, prange

__all__ = ["Spill", "StreamWriter", "by_column", "by_row"]

_JIT = dict(nogil=True, cache=True)
# bytes per count converted in memory: the parsed counts (8) and the CSR matrix (12)
_IN_MEMORY_BYTES = 20


class Spill:
    """Parsed blocks, kept in memory up to a budget, then appended to a temporary file."""

    def __init__(self, budget, folder):
        self.budget = budget
        self.folder = folder
        self.memory = []
        self.file = None
        self.index = []  # per spilled block: lines, entries, the sample indices' and the counts' dtypes
        self.entries = 0
        self.lines = 0

    def add(self, kmer, nnz, samp, counts):
        """Keep one parsed block (k-mer of each line, entries per line, sample of each entry, counts)."""
        self.entries += samp.size
        self.lines += kmer.size
        block = (kmer, nnz, samp, counts)
        if self.file is None:
            self.memory.append(block)
            if self.entries * _IN_MEMORY_BYTES <= self.budget:
                return
            fd, name = tempfile.mkstemp(prefix=".genosift-kmers.", suffix=".spill", dir=self.folder)
            self.file = os.fdopen(fd, "w+b")
            os.unlink(name)  # gone with the process, however it ends
            blocks, self.memory = self.memory, []
            for b in blocks:
                self._write(b)
            return
        self._write(block)

    def _write(self, block):
        kmer, nnz, samp, counts = block
        samp, counts = _smallest(samp), _smallest(counts)  # 2 + 1 bytes a count where they fit, not 4 + 4
        for a in (kmer, nnz, samp, counts):
            self.file.write(memoryview(np.ascontiguousarray(a)).cast("B"))
        self.index.append((kmer.size, samp.size, samp.dtype, counts.dtype))

    @property
    def spilled(self):
        return self.file is not None

    def blocks(self):
        """The spilled blocks again, in order, one at a time."""
        self.file.flush()
        self.file.seek(0)
        for lines, entries, samp_dtype, count_dtype in self.index:
            kmer = np.fromfile(self.file, np.int64, lines)
            nnz = np.fromfile(self.file, np.int32, lines)
            samp = np.fromfile(self.file, samp_dtype, entries)
            counts = np.fromfile(self.file, count_dtype, entries)
            if counts.size != entries:
                raise OSError("the temporary file of parsed counts was cut short (is the disk full?)")
            yield kmer, nnz, samp, counts

    def close(self):
        if self.file is not None:
            self.file.close()


def _smallest(a):
    """Non-negative integers ``a`` as uint8 or uint16 where they fit (the same values), else as they are."""
    if a.dtype.kind not in "iu" or not a.size or int(a.min()) < 0:
        return a
    top = int(a.max())
    return a.astype(np.uint8) if top < 2**8 else a.astype(np.uint16) if top < 2**16 else a


@njit(**_JIT)
def by_column(nnz, samp, counts, row_of, out_rows, out_vals, col_counts, row_counts):
    """Kept entries of a batch of lines (columns), rows rising within each line.

    ``out_rows``, ``out_vals``: the row and the count (cast to ``out_vals``' type, exact: checked
    by the caller) of each kept entry; ``col_counts``: kept entries per line; ``row_counts``
    (added to): kept entries per row. Returns the number of kept entries.
    """
    e = 0
    m = 0
    for i in range(nnz.size):
        start = m
        rising = True
        for _ in range(nnz[i]):
            r = row_of[samp[e]]
            if r >= 0:
                if m > start and r < out_rows[m - 1]:
                    rising = False
                out_rows[m] = r
                out_vals[m] = counts[e]
                row_counts[r] += 1
                m += 1
            e += 1
        if not rising:  # a line's samples are distinct: any sort gives the same order
            order = np.argsort(out_rows[start:m])
            out_rows[start:m] = out_rows[start:m][order]
            out_vals[start:m] = out_vals[start:m][order]
        col_counts[i] = m - start
    return m


@njit(parallel=True, **_JIT)
def row_scatter(rows, vals, col_counts, col0, row_start, cuts, out_cols, out_vals):
    """Entries in column order (``col_counts`` per column from ``col0``) placed by row: row ``r``
    fills ``out_*[row_start[r]:row_start[r + 1]]``, columns rising. Each thread takes the rows
    ``cuts[t]:cuts[t + 1]`` (about equal numbers of entries) and reads every entry."""
    for t in prange(cuts.size - 1):
        r0, r1 = cuts[t], cuts[t + 1]
        cursor = row_start[:-1].copy()
        e = 0
        for i in range(col_counts.size):
            j = col0 + i
            for _ in range(col_counts[i]):
                r = rows[e]
                if r >= r0 and r < r1:
                    q = cursor[r]
                    out_cols[q] = j
                    out_vals[q] = vals[e]
                    cursor[r] = q + 1
                e += 1


@njit(**_JIT)
def by_row(rows, cols, n_rows, out_cols, out_pos, row_counts):
    """A stable counting sort of entries (in column order) by row: columns rise within each row."""
    for r in rows:
        row_counts[r] += 1
    start = np.empty(n_rows, np.int64)
    acc = 0
    for r in range(n_rows):
        start[r] = acc
        acc += row_counts[r]
    for k in range(rows.size):
        r = rows[k]
        out_cols[start[r]] = cols[k]
        out_pos[start[r]] = k
        start[r] += 1


class _Out:
    """A 1-D dataset of a store being written, filled by ranges: with ``os.pwrite`` at its place
    in the file (allocated when created; HDF5 keeps it contiguous), else through h5py."""

    def __init__(self, group, name, size, dtype, fd):
        from .store import require_h5py

        h5py = require_h5py()
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
        self.ds = group.create_dataset(name, shape=(size,), dtype=dtype, dcpl=dcpl)
        self.dtype = np.dtype(dtype)
        offset = self.ds.id.get_offset() if fd is not None and size else None
        self.fd, self.offset = fd, None if offset is None else int(offset)

    def put(self, start, values):
        """Write ``values`` (cast to the dataset's type, exactly: checked by the caller) at ``start``."""
        values = np.ascontiguousarray(values, dtype=self.dtype)
        if not values.size:
            return
        if self.offset is None:
            self.ds[start:start + values.size] = values
            return
        view = memoryview(values).cast("B")
        pos = self.offset + start * self.dtype.itemsize
        done = 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:], pos + done)


class StreamWriter:
    """Writes batches of columns into the CSR matrix and its column copy of an open store."""

    def __init__(self, f, row_nnz, n_cols, dt, column_copy):
        from .store import index_dtype, set_encoding

        n = row_nnz.size
        self.n, self.p, self.dt = n, n_cols, dt
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(row_nnz, out=indptr[1:])
        total = int(indptr[-1])
        self.fd = os.open(f.filename, os.O_WRONLY) if hasattr(os, "pwrite") else None
        g = f.create_group("X")
        set_encoding(g, "csr_matrix", "0.1.0", shape=np.array([n, n_cols], dtype=np.int64))
        self.data = _Out(g, "data", total, dt, self.fd)
        self.indices = _Out(g, "indices", total, index_dtype(n_cols), self.fd)
        g.create_dataset("indptr", data=indptr)
        self.cursor = indptr[:-1].copy()
        self.ends = indptr[1:]
        self.column_copy = column_copy
        self.colptr = np.zeros(n_cols + 1, np.int64)
        self.next_col = 0
        self.written = 0
        if column_copy:
            c = f["var"].create_group("_genosift_columns")
            set_encoding(c, "csc_matrix", "0.1.0", shape=np.array([n, n_cols], dtype=np.int64))
            self.cdata = _Out(c, "data", total, dt, self.fd)
            self.crows = _Out(c, "indices", total, index_dtype(n), self.fd)
            self.cgroup = c

    def write(self, blocks, row_of):
        """Write parsed blocks of the next columns; ``row_of``: the row of each sample index (-1: left out)."""
        kmer = np.concatenate([b[0] for b in blocks])
        if kmer.size and (kmer[0] != self.next_col or np.any(np.diff(kmer) != 1)):
            raise RuntimeError("k-mer columns arrived out of order while converting")  # guarded by the caller
        nnz = np.concatenate([b[1] for b in blocks])
        samp = np.concatenate([b[2] for b in blocks])
        counts = np.concatenate([b[3] for b in blocks])  # uint32, or float64 where a block needs it
        col_counts = np.zeros(kmer.size, np.int64)
        row_counts = np.zeros(self.n, np.int64)
        rows = np.empty(samp.size, self.crows.dtype if self.column_copy else np.int64)
        values = np.empty(samp.size, self.dt)
        m = by_column(nnz, samp, counts, row_of, rows, values, col_counts, row_counts)
        del nnz, samp, counts
        rows, values = rows[:m], values[:m]
        if self.column_copy:
            self.cdata.put(self.written, values)
            self.crows.put(self.written, rows)
        self.written += m
        if kmer.size:
            j0, j1 = int(kmer[0]), int(kmer[-1]) + 1
            self.colptr[j0 + 1:j1 + 1] = self.colptr[j0] + np.cumsum(col_counts)
            self.next_col = j1
        row_start = np.zeros(self.n + 1, np.int64)
        np.cumsum(row_counts, out=row_start[1:])
        parts = max(1, min(get_num_threads(), self.n))
        cuts = np.searchsorted(row_start, np.arange(parts + 1) * (m / parts)).astype(np.int64)
        cuts[0], cuts[-1] = 0, self.n
        by_row_cols = np.empty(m, self.indices.dtype)
        by_row_vals = np.empty(m, self.dt)
        row_scatter(rows, values, col_counts, int(kmer[0]) if kmer.size else 0, row_start, cuts,
                    by_row_cols, by_row_vals)
        del rows, values
        for r in np.flatnonzero(row_counts):
            a, b = int(row_start[r]), int(row_start[r + 1])
            at = int(self.cursor[r])
            self.data.put(at, by_row_vals[a:b])
            self.indices.put(at, by_row_cols[a:b])
            self.cursor[r] = at + b - a

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def finish(self):
        """Check that every row and column was written, and write the column copy's pointers."""
        self.close()
        if self.next_col != self.p or not np.array_equal(self.cursor, self.ends):
            raise RuntimeError("the second pass over the counts did not match the first")
        if self.column_copy:
            self.cgroup.create_dataset("indptr", data=self.colptr)
