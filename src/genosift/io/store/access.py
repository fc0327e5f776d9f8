"""The ``Store``: an open store file, its names and per-sample table, read in row chunks; ``open_store``,
``read_store`` and ``StoreReader``, one open pass reading any rows and columns."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ...core import engine
from ...core.engine import check_budget
from ...core.messages import FixError, PythonText
from ...core.sparse_check import check_sparse_structure
from ...core.transforms import presence
from ...core.validation import is_int, param_error
from ..registry import Dataset, register_reader
from .columns import ColumnReads
from .contained import check_contained
from .encoding import NameBlob, NamesOf, index_length, read_column, read_strings, require_h5py, split_names, string_blob
from .read import FileReader, Presence, StoredVector, exact_values, read_dtype
from .write import PLOIDY, SUFFIX, index_dtype

__all__ = ["NamesOf", "Store", "StoreReader", "open_store", "read_store"]

#: Row chunks and feature blocks hold at least 1 / ROW_CHUNKS of the matrix, up to FLOOR_BYTES (so a
#: budget below that gives at most about 2 * ROW_CHUNKS chunks, whole rows each): a budget of a few
#: bytes on a million samples would otherwise read a million chunks of one row each, and each chunk
#: costs its kernels' start-up however few rows it holds.
ROW_CHUNKS, FLOOR_BYTES = 256, 1 << 20


def filtered_chunk_bytes(ds):
    """Bytes of one stored chunk of the dataset ``ds`` when HDF5 must decompress (or otherwise
    filter) a whole chunk to read any part of it; 0 for contiguous or unfiltered storage."""
    if ds.chunks is None or not ds.id.get_create_plist().get_nfilters():
        return 0
    size = ds.dtype.itemsize
    for c in ds.chunks:
        size *= int(c)
    return size


class Store(ColumnReads):
    """An open store: shape, names and per-sample table, read in row chunks or feature blocks.

    Use ``open_store(path)``. Nothing stays open between reads: each pass over the data opens
    the file, and the store checks that the file has not been replaced since it was opened.

    Attributes
    ----------
    path : Path
    shape : (int, int)            samples x features
    dtype : numpy dtype           of the stored values
    sparse : bool                 CSR (True) or a dense array (False)
    nnz : int                     stored entries (n_samples * n_features when dense)
    has_column_copy : bool        a sparse store that also holds its matrix by columns
    sample_ids, feature_names : ndarray of str (loaded on first use)
    obs : pandas.DataFrame or None  per-sample columns (targets, groups), indexed by sample id
    binary : bool                 values read as presence (1.0 where above 0), the file unchanged
    """

    def __init__(self, path, *, binary=False):
        self.path = Path(path)
        self.binary = bool(binary)
        if not self.path.exists():
            raise FileNotFoundError(f"No such file: {str(self.path)!r}.")
        if self.path.is_dir():
            raise IsADirectoryError(f"{str(self.path)!r} is a folder, not a store file.")
        self._stat = self._signature()
        with self._file() as f:
            self._open(f)
        if self.binary:
            self.dtype = np.dtype(np.float64)
            self.ploidy = None if self.ploidy is None else 1  # presence of an allele
            if self.sparse:
                self._data = Presence(self._data)
                if self.has_column_copy:
                    self._cdata = Presence(self._cdata)
        self._names = None
        self._blob = None
        self._ids = None
        self._obs = self._var = None
        self._obs_read = self._var_read = False

    @contextmanager
    def _file(self):
        """The file, open in h5py; HDF5 errors become a ValueError naming the file. A store opened
        before is checked to be the same file when it is opened and when the block ends."""
        opened = hasattr(self, "_stat")
        if opened:
            self._check_unchanged()
        try:
            with require_h5py().File(self.path, "r") as f:
                yield f
        except (OSError, KeyError) as exc:
            raise FixError(
                f"Cannot read {str(self.path)!r} as a store: it is damaged or not an HDF5 file "
                f"({exc}). Write it with {{write_store}}.",
                owner="open_store", write_store=PythonText("genosift.io.write_store"),
            ) from None
        if opened:
            self._check_unchanged()

    def _signature(self, fd=None):
        st = os.stat(self.path) if fd is None else os.fstat(fd)
        return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns

    @property
    def signature(self):
        """``(device, inode, size, mtime_ns, ctime_ns)`` of the file when the store was opened: every
        read compares it with the file's, to tell the same file from one replaced or edited since."""
        return self._stat

    def _check_unchanged(self, fd=None):
        """Refuse to go on reading a file that is no longer the one opened: replaced (``os.replace``),
        edited in place or removed since (``fd``: an open descriptor to check instead of the path).
        Each pass over the data checks when it starts and when it ends: a result never mixes the
        values of two files."""
        try:
            same = self._signature(fd) == self._stat
        except FileNotFoundError:
            same = False
        if not same:
            raise ValueError(f"The store {str(self.path)!r} changed while it was read (replaced, edited or removed "
                             "since it was opened), so its values would mix two files; run again when nothing "
                             "writes it.")

    def _open(self, f):
        where = str(self.path)
        check_contained(f, self.path)
        if "X" not in f or "obs" not in f or "var" not in f:
            raise FixError(
                f"{where!r} is not a store or AnnData file: it lacks {[k for k in ('X', 'obs', 'var') if k not in f]}. "
                "Write one with {write_store}.",
                owner="open_store", write_store=PythonText("genosift.io.write_store"),
            )
        X = f["X"]
        kind = X.attrs.get("encoding-type", "array" if isinstance(X, require_h5py().Dataset) else "")
        self._canonical = bool(f.attrs.get("genosift-store", 0))
        self.ploidy = f.attrs.get(PLOIDY)
        if self.ploidy is not None:
            if np.ndim(self.ploidy) or not is_int(self.ploidy) or not 0 < self.ploidy < 2**31:
                raise self._damaged(f"its {PLOIDY} attribute is {self.ploidy!r}, not a positive number of copies")
            self.ploidy = int(self.ploidy)
        if kind == "csr_matrix":
            self.sparse = True
            shape = np.asarray(X.attrs["shape"])
            if shape.shape != (2,) or shape.dtype.kind not in "iu" or (shape < 0).any():
                raise self._damaged(f"its shape attribute is {shape.tolist()}, not two sizes")
            self.shape = tuple(int(v) for v in shape)
            self._data = StoredVector(X["data"], exact=True)
            self._indices, self._indptr = StoredVector(X["indices"]), StoredVector(X["indptr"])
            self.dtype = self._data.out_dtype
            self.nnz = self._data.size
            parts = [X["data"], X["indices"]]
            if self._indices.size != self.nnz or self._indptr.size != self.shape[0] + 1:
                raise self._damaged(
                    f"it holds {self._data.size} values, {self._indices.size} column indices and "
                    f"{self._indptr.size} row pointers for {self.shape[0]} rows")
            cols = f["var"].get("_genosift_columns")
            self.has_column_copy = cols is not None
            if cols is not None:
                parts += [cols["data"], cols["indices"]]
                self._cdata = StoredVector(cols["data"], exact=True)
                self._crows, self._cptr = StoredVector(cols["indices"]), StoredVector(cols["indptr"])
                if not self._cdata.size == self._crows.size == self.nnz or self._cptr.size != self.shape[1] + 1:
                    raise self._damaged(
                        f"its column copy holds {self._cdata.size} values, {self._crows.size} row indices "
                        f"and {self._cptr.size} column pointers for {self.nnz} values in {self.shape[1]} columns")
        elif kind == "array" and X.ndim == 2:
            self.sparse = False
            self.shape = tuple(int(v) for v in X.shape)
            self.dtype = read_dtype(X.dtype)
            self.nnz = self.shape[0] * self.shape[1]
            self.has_column_copy = False
            self._tile_rows = int(X.chunks[0]) if X.chunks else 1
            parts = [X]
        else:
            raise FixError(
                f"X in {where!r} is stored as {kind or 'an unknown encoding'!r}; the store reads a "
                "csr_matrix or a dense array. Read it with {read_h5ad} and write it with {write_store}.",
                owner="open_store", read_h5ad=PythonText("genosift.io.read(path, format='h5ad')"),
                write_store=PythonText("genosift.io.write_store"),
            )
        if self.dtype.kind not in "biuf":
            raise ValueError(f"X in {where!r} has dtype {self.dtype}, which is not a real number type.")
        self._chunk_need = max((filtered_chunk_bytes(ds), ds.name) for ds in parts)
        for axis, group in enumerate(("obs", "var")):
            index = f[group].get(f[group].attrs.get("_index", "_index"))
            size = index_length(index)
            if size != self.shape[axis]:
                raise self._damaged(
                    f"its matrix has {self.shape[axis]} {('rows', 'columns')[axis]} but {group} names "
                    f"{'no' if size is None else size} {('samples', 'features')[axis]}")

    @property
    def chunk_need(self):
        """Bytes of the largest stored chunk that HDF5 decompresses whole to read any part of it
        (0 for a store written by genosift, whose matrix is not compressed)."""
        return self._chunk_need[0]

    def check_budget(self, budget, owner):
        """Refuse a ``budget`` (bytes) smaller than one stored chunk that HDF5 decompresses whole
        to read any part of it (a store written with compression by another tool): reading would
        take that chunk in memory, whatever the budget."""
        need, name = self._chunk_need
        if need > budget:
            raise FixError(
                f"{str(self.path)!r} stores {name} compressed in HDF5 chunks of {need:,} bytes: reading any part of "
                f"a chunk takes all of it in memory, more than the budget of {budget:,} bytes. Pass {{chunk_bytes}} "
                "or more, or write the store again with genosift (its matrix is stored uncompressed, read in "
                "pieces of any size).", owner=owner, chunk_bytes=need)

    def _damaged(self, what):
        """The error for a store whose structure is inconsistent (``what``: the fault)."""
        return ValueError(
            f"Cannot read {str(self.path)!r} as a store: {what}. The file is damaged or was not written "
            "by a compatible tool; write it again from the source data."
        )

    def __repr__(self):
        kind = "CSR" + (" + columns" if self.has_column_copy else "") if self.sparse else "dense"
        return f"Store({str(self.path)!r}, {self.shape[0]} x {self.shape[1]}, {kind}, {self.dtype.name})"

    # names and per-sample table ---------------------------------------------------------------

    @property
    def feature_names(self):
        if self._names is None:
            blob = self._stored_blob()
            names = None if blob is None else split_names(blob, self.shape[1])
            if names is None:
                with self._file() as f:
                    var = f["var"]
                    names = read_strings(var[var.attrs.get("_index", "_index")]).astype(object)
            self._names = names
        return self._names

    @property
    def name_blob(self):
        """The feature names as a ``NameBlob``: their bytes and offsets, each name decoded only when
        taken (about 40 bytes a k-mer, where ``feature_names`` costs some 90 more as Python strings)."""
        if self._blob is None:
            stored = self._stored_blob()
            try:
                self._blob = None if stored is None else NameBlob(np.frombuffer(stored, dtype=np.uint8),
                                                                  self.shape[1])
            except ValueError:  # not the store's own blob: the names AnnData reads
                self._blob = None
            if self._blob is None:
                joined = string_blob(self.feature_names, "feature name")[1].encode("utf-8")
                self._blob = NameBlob(np.frombuffer(joined, dtype=np.uint8), self.shape[1])
        return self._blob

    def take_names(self, rows):
        """The names of the features ``rows`` (indices), an object array in that order: from
        ``feature_names`` once they are decoded, else from ``name_blob`` (those names only)."""
        if self._names is not None:
            return self._names[np.asarray(rows, dtype=np.intp)]
        return self.name_blob.take(rows)

    def _stored_blob(self):
        """The bytes of ``/var/_genosift_names`` (a bytearray), or None where the file has none."""
        with self._file() as f:
            var = f["var"]
            if "_genosift_names" not in var:
                return None
            ds = var["_genosift_names"]
            blob = bytearray(ds.shape[0])  # read in place: no second copy of the names
            if blob:
                ds.read_direct(np.frombuffer(blob, dtype=np.uint8))
            return blob

    @property
    def sample_ids(self):
        if self._ids is None:
            with self._file() as f:
                obs = f["obs"]
                self._ids = read_strings(obs[obs.attrs.get("_index", "_index")]).astype(object)
        return self._ids

    @property
    def obs(self):
        if not self._obs_read:
            self._obs, self._obs_read = self._table("obs", lambda: self.sample_ids), True
        return self._obs

    @property
    def var(self):
        """The per-feature columns (``Dataset.var``), indexed by feature name; None without any."""
        if not self._var_read:
            self._var, self._var_read = self._table("var", lambda: self.feature_names), True
        return self._var

    def _table(self, group, index_of):
        """The data frame ``group`` (``obs`` or ``var``) with its columns in their stored order, indexed
        by ``index_of()`` (the ids or the names, read only where there are columns); None without columns."""
        import pandas as pd

        with self._file() as f:
            g = f[group]
            order = [str(c) for c in np.atleast_1d(g.attrs.get("column-order", []))]
            if not order:
                return None
            key = g.attrs.get("_index", "_index")
            columns = {c: read_column(g[c], self.path, c) for c in order}
        index = pd.Index(index_of(), dtype="str", name=None if key == "_index" else key)
        return pd.DataFrame(columns, index=index)

    # reading the matrix ------------------------------------------------------------------------

    def _row_ranges(self, reader, rows_per_chunk, budget, read_ahead=False):
        """``(ranges, indptr)``: the ``(a, b)`` row ranges of the chunks, and the row pointers.

        With ``read_ahead``, two chunks are in memory at once, so each gets half the budget;
        unless the whole matrix fits the budget, then it is one chunk.
        """
        n, p = self.shape
        if rows_per_chunk is not None:
            if (isinstance(rows_per_chunk, bool) or not isinstance(rows_per_chunk, (int, np.integer))
                    or rows_per_chunk < 1):
                raise param_error("rows_per_chunk", "Store.row_chunks", "a positive int or None", rows_per_chunk)
            return [(a, min(n, a + int(rows_per_chunk))) for a in range(0, n, int(rows_per_chunk))], None
        per_entry = self.entry_bytes
        if read_ahead and self.nnz * per_entry > budget:
            budget //= 2
        budget = self.floored(budget)
        if not self.sparse:
            rows = max(1, budget // max(1, p * per_entry))
            tile = self._tile_rows
            rows = rows // tile * tile if rows >= tile else rows
            return [(a, min(n, a + rows)) for a in range(0, n, rows)], None
        indptr = self._indptr.read(reader, 0, n + 1, np.int64)
        if indptr[0] != 0 or indptr[-1] != self.nnz or (np.diff(indptr) < 0).any():
            raise self._damaged(f"its row pointers do not run from 0 to its {self.nnz} stored values in order")
        per = max(1, budget // per_entry)
        ranges, a = [], 0
        while a < n:
            b = int(np.searchsorted(indptr, indptr[a] + per, side="right")) - 1
            b = min(n, max(b, a + 1))
            ranges.append((a, b))
            a = b
        return ranges, indptr

    def _row_chunk(self, reader, a, b, indptr):
        if not self.sparse:
            return self._dense(reader.h5["X"][a:b])
        if indptr is None:
            ptr = self._indptr.read(reader, a, b + 1, np.int64)
        else:
            ptr = indptr[a:b + 1]
        return self._slice(reader, ptr, (self._data, self._indices), b - a, self.shape[1], "csr")

    def _slice(self, reader, ptr, arrays, n_major, n_minor, kind):
        """The CSR rows or CSC columns whose pointers are ``ptr``, read from ``arrays`` (values,
        indices) and checked before anything indexes with them."""
        lo, hi = int(ptr[0]), int(ptr[-1])
        if lo < 0 or hi > self.nnz or hi < lo:
            raise self._damaged(f"its {'row' if kind == 'csr' else 'column'} pointers run from {lo} to {hi}, "
                                f"outside its {self.nnz} stored values")
        itype = index_dtype(max(hi - lo, n_minor))
        data = arrays[0].read(reader, lo, hi)
        indices = arrays[1].read(reader, lo, hi, itype)
        ptr = (ptr - lo).astype(itype)
        canonical = self._canonical or kind == "csc"  # the column copy is written sorted
        check_sparse_structure(ptr, indices, n_major, n_minor, nnz=data.size, sorted_indices=canonical,
                               path=self.path, fmt="a store")
        shape = (n_major, n_minor) if kind == "csr" else (n_minor, n_major)
        M = (sp.csr_matrix if kind == "csr" else sp.csc_matrix)((data, indices, ptr), shape=shape, copy=False)
        if canonical:
            M.has_canonical_format = True
        return M

    def _dense(self, values):
        return presence(values) if self.binary else exact_values(values, self.path, "X").astype(self.dtype,
                                                                                                copy=False)

    def _column_pointers(self, reader):
        """The column copy's pointers, checked to run from 0 to nnz without decreasing."""
        colptr = self._cptr.read(reader, 0, self.shape[1] + 1, np.int64)
        if colptr[0] != 0 or colptr[-1] != self.nnz or (np.diff(colptr) < 0).any():
            raise self._damaged("the column pointers of its column copy do not run from 0 to its "
                                f"{self.nnz} stored values in order")
        return colptr

    def _column_block(self, reader, j0, j1, colptr=None):
        """CSC of the features ``j0 <= j < j1`` read from the column copy (rows sorted)."""
        ptr = self._cptr.read(reader, j0, j1 + 1, np.int64) if colptr is None else colptr[j0:j1 + 1]
        return self._slice(reader, ptr, (self._cdata, self._crows), j1 - j0, self.shape[0], "csc")

    # the streaming API: row ranges, rows and column blocks read through one open reader ---------

    @property
    def entry_bytes(self):
        """Bytes one stored entry takes on disk: its value, plus its column index when sparse."""
        return self.dtype.itemsize + (self._indices.dtype.itemsize if self.sparse else 0)

    def floored(self, budget, pieces=None, most=None):
        """``budget`` raised to ``1 / pieces`` of the stored matrix, but not above ``most`` bytes: what
        each chunk or block of a pass may hold, so that a tiny budget cuts a pass into at most about
        ``pieces`` reads, not one per row or feature (a budget at or above the floor is kept). By
        default ``ROW_CHUNKS`` pieces of at most ``FLOOR_BYTES``."""
        pieces, most = pieces or ROW_CHUNKS, most or FLOOR_BYTES
        return max(budget, min(-(-self.nnz * self.entry_bytes // pieces), most))

    def row_ranges(self, chunk_bytes=None, *, read_ahead=False):
        """The ``(a, b)`` row ranges ``row_chunks`` reads for ``chunk_bytes``, in order: each holds
        at most that many bytes of stored entries (half with ``read_ahead``) and at least one row."""
        budget = check_budget(chunk_bytes, "Store.row_ranges")
        self.check_budget(budget, "Store.row_ranges")
        with self.reader() as reader:
            ranges, _ = self._row_ranges(reader._io, None, budget, read_ahead)
        return ranges

    def names_loader(self):
        """A picklable function returning ``feature_names`` when called: a ``ScoreResult`` holds it
        so that millions of names are decoded only when they are shown."""
        return NamesOf(self)

    def reader(self):
        """A ``StoreReader``: the file open for reading rows and column blocks until it is closed
        (use it in a ``with`` block); the store checks first that the file is the one it opened."""
        return StoreReader(self)

    def row_chunks(self, rows_per_chunk=None, *, chunk_bytes=None, read_ahead=True):
        """Yield the matrix in chunks of consecutive rows (all features), in order.

        Parameters
        ----------
        rows_per_chunk : int, optional
            Rows per chunk. By default the chunks are sized from ``chunk_bytes``: the whole matrix
            in one chunk if its values and indices fit, else chunks holding at most half the
            budget each with ``read_ahead`` (two are in memory at once), all of it without; a
            chunk holds at least one row.
        chunk_bytes : int, optional
            The budget for matrix data in memory at once (default ``CHUNK_BYTES``).
        read_ahead : bool, default True
            Read the next chunk in a thread while the caller works on this one; at most two
            chunks are in memory at once.

        Yields
        ------
        scipy.sparse.csr_matrix or ndarray
            CSR chunks of a sparse store (in the stored dtype), ndarray chunks of a dense one.
        """
        budget = check_budget(chunk_bytes, "Store.row_chunks")
        self.check_budget(budget, "Store.row_chunks")
        reader = FileReader(self)
        try:
            ranges, indptr = self._row_ranges(reader, rows_per_chunk, budget, read_ahead)
            items = (self._row_chunk(reader, a, b, indptr) for a, b in ranges)
            if read_ahead and len(ranges) > 1:
                items = engine.read_ahead(items, name="genosift-store-read")
            try:
                yield from items
            finally:
                items.close()
            reader.finish()
        finally:
            reader.close()


    def to_dataset(self):
        """The whole store in memory, as a ``Dataset`` (CSR or dense ``X`` in the stored dtype)."""
        reader = FileReader(self)
        try:
            n = self.shape[0]
            X = self._row_chunk(reader, 0, n, None) if self.sparse else self._dense(reader.h5["X"][()])
            reader.finish()
        finally:
            reader.close()
        return Dataset(X, self.sample_ids, self.feature_names, self.obs, ploidy=self.ploidy, var=self.var)


class StoreReader:
    """One open pass over a store: ``rows(a, b)`` and ``columns(j0, j1)`` read any ranges, in any
    order, through the same open file (``Store.reader()``; close it, or use it in a ``with``)."""

    def __init__(self, store):
        self.store = store
        self._io = FileReader(store)

    def __enter__(self):
        return self

    def __exit__(self, kind, *exc):
        try:
            if kind is None:  # a pass that ran to its end: check it read one file throughout
                self._io.finish()
        finally:
            self.close()

    def close(self):
        self._io.close()

    def rows(self, a, b):
        """Rows ``a <= i < b``, every feature: CSR of a sparse store, an array of a dense one."""
        return self.store._row_chunk(self._io, a, b, None)

    def columns(self, j0, j1):
        """Features ``j0 <= j < j1``, every sample: CSC from the column copy of a sparse store (one
        that has it: ``Store.has_column_copy``), an array of a dense one."""
        store = self.store
        if not store.sparse:
            return store._dense(self._io.h5["X"][:, j0:j1])
        if not store.has_column_copy:
            raise ValueError(f"The store {str(store.path)!r} has no column copy: read its features with "
                             "Store.read_columns or Store.feature_blocks.")
        return store._column_block(self._io, j0, j1)


def open_store(path, *, binary=False):
    """Open a store (or any ``.h5ad`` file whose ``X`` is CSR or dense) for chunked reading.

    Parameters
    ----------
    path : str or Path
    binary : bool, default False
        Read every value as presence/absence (1.0 where it is above 0, else 0; NaN stays NaN),
        e.g. to score k-mers by the samples that carry them. The file is not changed.

    Returns
    -------
    Store
    """
    return Store(path, binary=binary)


@register_reader("store", suffixes=(SUFFIX,))
def read_store(path):
    """genosift store (.gs.h5ad, AnnData-compatible HDF5), read whole into memory."""
    return Store(path).to_dataset()

