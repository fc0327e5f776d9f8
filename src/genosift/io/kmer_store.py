"""k-mer count files to a store, in memory bounded by a budget, whatever the size of the files.

The text is read once. Its parsed counts (about 8 bytes per count: the sample's index and the
count) are kept in memory while they fit ``chunk_bytes``; the data set is then written as
``write_store`` writes any other. Beyond the budget they are spilled, block by block, to a
temporary file beside the output, and written into the store in a second, sequential pass:

- k-mer files list one k-mer per line, so the parsed blocks arrive column by column: the
  column copy (CSC) is appended in order, its rows sorted within each column;
- the row layout (CSR) has every row's length known from the first pass (the parser counts the
  entries of each sample), so each batch of columns is sorted by row, stably, and each row's
  share is written at that row's cursor: columns stay sorted within every row.

Memory holds one batch of counts (``chunk_bytes``), the k-mers and sample ids, and a few arrays
of one value per k-mer or per sample; never the matrix.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit

from .. import engine
from .._messages import FixError
from .._validation import param_error
from . import Dataset
from .kmers import BLOCK_SIZE, _exact_limit, _path_list, _Reader, _sample_list, _warn_unmatched

__all__ = ["convert_kmers"]

# bytes per count of a batch written out of core: the sample indices and counts read back (12),
# rows and positions (16), values and columns (16), their copies sorted by row (24), index cast (4)
_BYTES_PER_COUNT = 72
# bytes per count converted in memory: the parsed counts (8) and the CSR matrix (12)
_IN_MEMORY_BYTES = 20


class _Spill:
    """Parsed blocks, kept in memory up to a budget, then appended to a temporary file."""

    def __init__(self, budget, folder):
        self.budget = budget
        self.folder = folder
        self.memory = []
        self.file = None
        self.index = []  # per spilled block: lines, entries, count dtype
        self.entries = 0
        self.lines = 0

    def add(self, kmer, nnz, samp, counts):
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
        for a in block:
            self.file.write(memoryview(np.ascontiguousarray(a)).cast("B"))
        self.index.append((kmer.size, samp.size, counts.dtype))

    @property
    def spilled(self):
        return self.file is not None

    def blocks(self):
        """The spilled blocks again, in order, one at a time."""
        self.file.flush()
        self.file.seek(0)
        for lines, entries, count_dtype in self.index:
            kmer = np.fromfile(self.file, np.int64, lines)
            nnz = np.fromfile(self.file, np.int32, lines)
            samp = np.fromfile(self.file, np.int32, entries)
            counts = np.fromfile(self.file, count_dtype, entries)
            if counts.size != entries:
                raise OSError("the temporary file of parsed counts was cut short (is the disk full?)")
            yield kmer, nnz, samp, counts

    def close(self):
        if self.file is not None:
            self.file.close()


@njit(nogil=True, cache=True)
def _by_column(nnz, samp, row_of, out_rows, out_pos, col_counts):
    """Kept entries of a batch of lines, rows sorted within each line (column).

    ``out_pos[i]`` is the position in the batch of the i-th kept entry; returns their number.
    """
    e = 0
    m = 0
    for i in range(nnz.size):
        start = m
        for _ in range(nnz[i]):
            r = row_of[samp[e]]
            if r >= 0:
                out_rows[m] = r
                out_pos[m] = e
                m += 1
            e += 1
        if m - start > 1:
            order = np.argsort(out_rows[start:m])
            out_rows[start:m] = out_rows[start:m][order]
            out_pos[start:m] = out_pos[start:m][order]
        col_counts[i] = m - start
    return m


@njit(nogil=True, cache=True)
def _by_row(rows, cols, n_rows, out_cols, out_pos, row_counts):
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
        from .store import _h5py

        h5py = _h5py()
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


class _StreamWriter:
    """Writes batches of columns into the CSR matrix and its column copy of an open store."""

    def __init__(self, f, row_nnz, n_cols, dt, column_copy):
        from .store import _attrs, _index_dtype

        n = row_nnz.size
        self.n, self.p, self.dt = n, n_cols, dt
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(row_nnz, out=indptr[1:])
        total = int(indptr[-1])
        self.fd = os.open(f.filename, os.O_WRONLY) if hasattr(os, "pwrite") else None
        g = f.create_group("X")
        _attrs(g, "csr_matrix", "0.1.0", shape=np.array([n, n_cols], dtype=np.int64))
        self.data = _Out(g, "data", total, dt, self.fd)
        self.indices = _Out(g, "indices", total, _index_dtype(n_cols), self.fd)
        g.create_dataset("indptr", data=indptr)
        self.cursor = indptr[:-1].copy()
        self.ends = indptr[1:]
        self.column_copy = column_copy
        self.colptr = np.zeros(n_cols + 1, np.int64)
        self.next_col = 0
        self.written = 0
        if column_copy:
            c = f["var"].create_group("_genosift_columns")
            _attrs(c, "csc_matrix", "0.1.0", shape=np.array([n, n_cols], dtype=np.int64))
            self.cdata = _Out(c, "data", total, dt, self.fd)
            self.crows = _Out(c, "indices", total, _index_dtype(n), self.fd)
            self.cgroup = c

    def write(self, blocks, row_of):
        kmer = np.concatenate([b[0] for b in blocks])
        nnz = np.concatenate([b[1] for b in blocks])
        samp = np.concatenate([b[2] for b in blocks])
        counts = np.concatenate([b[3].astype(np.float64, copy=False) for b in blocks])
        if kmer.size and (kmer[0] != self.next_col or np.any(np.diff(kmer) != 1)):
            raise RuntimeError("k-mer columns arrived out of order while converting")  # guarded by the caller
        col_counts = np.zeros(kmer.size, np.int64)
        rows = np.empty(samp.size, np.int64)
        pos = np.empty(samp.size, np.int64)
        m = _by_column(nnz, samp, row_of, rows, pos, col_counts)
        rows, pos = rows[:m], pos[:m]
        values = counts[pos].astype(self.dt, copy=False)
        del counts
        cols = np.repeat(kmer, col_counts)
        if self.column_copy:
            a = self.written
            self.cdata.put(a, values)
            self.crows.put(a, rows)
        self.written += m
        if kmer.size:
            j0, j1 = int(kmer[0]), int(kmer[-1]) + 1
            self.colptr[j0 + 1:j1 + 1] = self.colptr[j0] + np.cumsum(col_counts)
            self.next_col = j1
        row_counts = np.zeros(self.n, np.int64)
        by_row_cols = np.empty(m, np.int64)
        by_row_pos = np.empty(m, np.int64)
        _by_row(rows, cols, self.n, by_row_cols, by_row_pos, row_counts)
        del rows, cols
        values = values[by_row_pos]
        by_row_cols = by_row_cols.astype(self.indices.dtype, copy=False)
        k = 0
        for r in np.flatnonzero(row_counts):
            c = int(row_counts[r])
            a = int(self.cursor[r])
            self.data.put(a, values[k:k + c])
            self.indices.put(a, by_row_cols[k:k + c])
            self.cursor[r] = a + c
            k += c

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def finish(self):
        self.close()
        if self.next_col != self.p or not np.array_equal(self.cursor, self.ends):
            raise RuntimeError("the second pass over the counts did not match the first")
        if self.column_copy:
            self.cgroup.create_dataset("indptr", data=self.colptr)


class _ArenaNames:
    """The k-mers of a reader's table as a sliceable sequence of str, decoded a slice at a time."""

    def __init__(self, table, n, nbytes):
        self.arena, self.offs, self.n, self.nbytes = table.arena, table.offs, n, nbytes

    def __len__(self):
        return self.n

    def __getitem__(self, where):
        a, b, _ = where.indices(self.n)
        if b <= a:
            return []
        text = self.arena[self.offs[a]:self.offs[b] - 1].tobytes().decode("utf-8")
        return text.split("\n")

    def blob(self):
        """The names' UTF-8 bytes joined by NUL (checked to hold none)."""
        out = self.arena[: max(self.nbytes - 1, 0)].copy()
        out[out == 10] = 0
        return out


def _rows(reader, ids, samples):
    """Row ids and the row of each sample index of the reader (-1: left out)."""
    if samples is None:
        order = sorted(range(len(ids)), key=ids.__getitem__)
        row_of = np.empty(len(ids), np.int64)
        row_of[order] = np.arange(len(ids))
        return [ids[i] for i in order], row_of
    where = {s: r for r, s in enumerate(samples)}
    row_of = np.array([where.get(s, -1) for s in ids], dtype=np.int64)
    _warn_unmatched(samples, ids, row_of, reader.paths)
    return list(samples), row_of


def _matched(row_ids, row_of, metadata, absent):
    """Rows kept by the metadata join: (Dataset skeleton with obs, new row_of, report)."""
    from .metadata import attach_metadata

    skeleton = Dataset(sp.csr_matrix((len(row_ids), 0)), np.array(row_ids, dtype=object), np.array([], dtype=object))
    matched, report = attach_metadata(skeleton, metadata, absent=absent)
    new_row = {s: r for r, s in enumerate(matched.sample_ids)}
    old_to_new = np.array([new_row.get(s, -1) for s in row_ids], dtype=np.int64)
    kept = row_of >= 0
    row_of = row_of.copy()
    row_of[kept] = old_to_new[row_of[kept]]
    return matched, row_of, report


def convert_kmers(paths, out_path, *, metadata=None, samples=None, dtype=None, column_copy=True,
                  overwrite=False, chunk_bytes=None, overlap="sum", block_size=BLOCK_SIZE, absent="zeros"):
    """k-mer counter files (``KMER | sample:count ...``) to a store, in bounded memory.

    Parameters
    ----------
    paths : path or list of paths
        As for ``read_kmers``: plain or compressed text, several files combined by k-mer.
    out_path : str or Path
        The store to write (suffix ``.gs.h5ad`` recommended). It is written under a temporary
        name and renamed when complete: an interrupted conversion leaves nothing under this name.
    metadata : pandas.DataFrame, optional
        Per-sample table indexed by sample id (e.g. from ``read_metadata``); the samples it
        describes are kept and its columns stored as ``obs`` (``attach_metadata``, how="inner").
        Samples it describes that are on no k-mer line carry none of the k-mers: all-zero rows
        (see ``absent``).
    samples : list of str, optional
        The rows, as for ``read_kmers`` (ids in no file get all-zero rows).
    dtype : numpy dtype, optional
        Stored type of the counts (default float64, exact up to 2**53); a smaller type only if
        every count fits it exactly.
    column_copy, overwrite
        As for ``write_store``.
    chunk_bytes : int, optional
        Memory budget for the counts (default ``CHUNK_BYTES``, 256 MiB). Counts that fit are
        converted in memory; more are spilled to a temporary file in the output's folder (about
        8 bytes per count, deleted at the end) and written in batches of this size.
    overlap : {"sum", "error"}
        As for ``read_kmers``.
    block_size : int
        Bytes of text parsed at a time, as for ``read_kmers``.
    absent : {"zeros", "drop"}, default "zeros"
        Samples of ``metadata`` on no k-mer line: all-zero rows (as SEER and pyseer count them),
        or left out.

    Returns
    -------
    (Path, MatchReport or None)
        The store written, and the match report of the metadata join (None without metadata).

    Notes
    -----
    Beyond the budget, several files are combined only if they hold different k-mers (e.g. a
    count split by k-mer); files that share k-mers are combined in memory (raise
    ``chunk_bytes``) or converted one by one.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from genosift.io import open_store
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "c.kmers").write_text("ACGTA | s2:1 s1:3\\nCGTAC | s2:7\\nGGGGG | s3:2 s1:1\\n")
    >>> path, _ = convert_kmers(d / "c.kmers", d / "c.gs.h5ad", chunk_bytes=64)  # streamed
    >>> store = open_store(path)
    >>> store.sample_ids.tolist(), store.to_dataset().X.toarray().tolist()
    (['s1', 's2', 's3'], [[3.0, 0.0, 1.0], [1.0, 7.0, 0.0], [0.0, 0.0, 2.0]])
    """
    from .store import _budget, _check_dtype, write_store

    path_list = _path_list(paths)
    sample_list = _sample_list(samples)
    budget = _budget(chunk_bytes, "convert_kmers")
    dt = _check_dtype(dtype, np.float64)
    if dt.kind == "b":
        raise param_error("dtype", "convert_kmers", "a number type such as np.float64 or np.uint32", dtype)
    if overlap not in ("sum", "error"):
        raise param_error("overlap", "convert_kmers", "'sum' or 'error'", overlap)
    if absent not in ("zeros", "drop"):
        raise param_error("absent", "convert_kmers", "'zeros' or 'drop'", absent)
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise param_error("block_size", "convert_kmers", "a positive int (bytes)", block_size)
    out_path = Path(out_path)
    folder = out_path.parent if out_path.parent.is_dir() else Path(".")
    reader = _Reader(int(block_size))
    spill = _Spill(budget, folder)
    try:
        with engine.progress("Reading k-mer counts", unit="k-mers") as bar:
            def add(kmer, *rest):
                spill.add(kmer, *rest)
                bar.advance(kmer.size)

            reader.on_block = add
            for path in path_list:
                reader.read_file(path)
        if spill.spilled:
            return _convert_spilled(reader, spill, out_path, sample_list, metadata, dt, column_copy,
                                    overwrite, budget, absent)
        reader.blocks = spill.memory
        ds = reader.dataset(sample_list, dt, overlap)
    finally:
        spill.close()
    report = None
    if metadata is not None:
        from .metadata import attach_metadata

        ds, report = attach_metadata(ds, metadata, absent=absent)
    return write_store(ds, out_path, dtype=dt, column_copy=column_copy, overwrite=overwrite,
                       chunk_bytes=budget), report


def _convert_spilled(reader, spill, out_path, sample_list, metadata, dt, column_copy, overwrite, budget, absent):
    from .kmers import _KB, _KN, _MAX, _SB, _SN
    from .store import _atomic, _h5py, _strings, _write_skeleton

    st = reader.st
    ids = reader._decoded(reader.samples, int(st[_SN]), int(st[_SB]), "sample id")
    try:
        reader.kmers.arena[: int(st[_KB])].tobytes().decode("utf-8")
    except UnicodeDecodeError:
        reader._decoded(reader.kmers, int(st[_KN]), int(st[_KB]), "k-mer")  # raises, naming the line
    nul = np.flatnonzero(reader.kmers.arena[: int(st[_KB])] == 0)
    if nul.size:
        i = int(np.searchsorted(reader.kmers.offs[: int(st[_KN]) + 1], nul[0], side="right")) - 1
        raise ValueError(
            f"The k-mer on line {reader.kmers.cols['line'][i]} of "
            f"{str(reader.paths[reader.kmers.cols['file'][i]])!r} holds a NUL byte, which a store "
            "cannot hold: the file is damaged or not k-mer text."
        )
    if spill.lines != int(st[_KN]):
        files = ", ".join(repr(str(p)) for p in reader.paths)
        raise FixError(
            f"The files {files} share k-mers, and their {spill.entries} counts are more than the "
            f"memory budget of {budget} bytes ({{chunk_bytes}}) holds: files that share k-mers are "
            f"combined in memory. Pass a larger {{chunk_bytes}} (about {20 * spill.entries} bytes), or "
            "convert the files one by one.",
            owner="convert_kmers", chunk_bytes=FixError.ANY,
        )
    limit = _exact_limit(dt)
    if int(st[_MAX]) > limit:
        raise ValueError(
            f"The largest count, {int(st[_MAX])}, is more than dtype {dt.name} holds exactly (up to "
            f"{limit}). Pass dtype=np.float64 (exact up to 2**53)."
        )
    row_ids, row_of = _rows(reader, ids, sample_list)
    report, obs = None, None
    if metadata is not None:
        matched, row_of, report = _matched(row_ids, row_of, metadata, absent)
        row_ids, obs = matched.sample_ids, matched.obs
    nnz = reader.samples.cols["nnz"][: len(ids)]
    row_nnz = np.zeros(len(row_ids), np.int64)
    kept = row_of >= 0
    row_nnz[row_of[kept]] = nnz[kept]
    names = _ArenaNames(reader.kmers, int(st[_KN]), int(st[_KB]))
    reader.kmers.table = reader.kmers.hashes = None  # the look-up table is done with
    per_batch = max(1, budget // _BYTES_PER_COUNT)
    h5py = _h5py()
    with _atomic(out_path, overwrite) as tmp:
        with h5py.File(tmp, "w") as f:
            _write_skeleton(f, _strings(row_ids, "sample id")[0], obs, names, names.blob())
            del names
            writer = _StreamWriter(f, row_nnz, int(st[_KN]), dt, column_copy)
            try:
                with engine.progress("Writing the store", total=spill.lines, unit="k-mers") as bar:
                    batch, entries = [], 0
                    for block in spill.blocks():
                        batch.append(block)
                        entries += block[2].size
                        if entries >= per_batch:
                            writer.write(batch, row_of)
                            bar.advance(sum(b[0].size for b in batch))
                            batch, entries = [], 0
                    if batch:
                        writer.write(batch, row_of)
                        bar.advance(sum(b[0].size for b in batch))
                writer.finish()
            finally:
                writer.close()
    return out_path, report
