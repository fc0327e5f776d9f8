"""The genosift store: one AnnData-compatible HDF5 file, read in row chunks and feature blocks.

Convert a data set once (``write_store``, ``kmer_store.convert_kmers``), then score it out of core as often
as needed (``genosift.io.score_store``, run by ``genosift.scoring.store``): row-mergeable methods read chunks of samples, whole-column methods
read blocks of features, and memory stays bounded by a chunk budget, never by the data size.

Why this format
---------------
The store is an ``.h5ad`` file (suffix ``.gs.h5ad``): HDF5, laid out as the AnnData on-disk
specification says (``X`` as a ``csr_matrix`` group or a 2-D array, ``obs`` and ``var`` data
frames). ``anndata.read_h5ad``, scanpy and every other AnnData reader open it as they are, so a
converted k-mer matrix is also a file the genomics tools already know; genosift needs only h5py.
HDF5 keeps a 1-D array contiguous on disk, so any range of rows of a CSR matrix is one sequential
read of ``data`` and ``indices``, at the speed of the disk; genosift reads those byte ranges with
``os.preadv`` straight into numpy buffers (no copy through HDF5, and the GIL is released, so a
thread reads the next chunk while the current one is scored). Data are stored uncompressed: the
point of the store is to stream at disk speed, and decompression would be the bottleneck.
Parquet (rows of a table, no sparse matrix type) and zarr (a folder of many small files, an
extra dependency, no gain for local disks) were the alternatives.

Rows and columns
----------------
Row chunks are cheap in CSR, feature blocks are not: the entries of a block of columns lie
scattered over every row. So a sparse store also keeps the same matrix by columns (CSC), under
``var/_genosift_columns``: this doubles the size on disk and makes both access patterns single
sequential reads. It sits inside the ``var`` group, which AnnData reads column by column from its
``column-order`` attribute, so AnnData tools ignore it and do not load it (``anndata.read_h5ad``
refuses unknown top-level groups, and would load a copy kept in ``layers``, doubling the memory of
anyone who opens the file with it). A store written with
``column_copy=False``, or any other ``.h5ad`` file with a CSR ``X``, still gives feature blocks:
one pass counts the entries of every column, then each pass over the rows gathers as many blocks
as the budget holds (slower, still bounded memory). Dense matrices are stored as one 2-D array
in tiles of about 1 MiB, which serve rows and columns alike.

Exact values
------------
Values are stored in the data's own type (float64 for the k-mer reader: every count up to 2**53
exact) or in the ``dtype`` asked for, after checking that every value converts exactly: a count
never wraps or rounds. Scores accumulate in float64 whatever the stored type.

Layout::

    /X                     csr_matrix (data, indices, indptr) or a 2-D array
    /obs                   data frame: index = sample ids, columns = Dataset.obs
    /var                   data frame: index = feature names
    /var/_genosift_columns csc_matrix: the same matrix by columns (sparse stores)
    /var/_genosift_names   uint8: the feature names as UTF-8 joined by NUL
    /layers /obsm /varm /obsp /varp /uns   empty, as AnnData expects

The names are kept twice: as HDF5 variable-length strings, which AnnData reads, and as one NUL-joined
blob, which loads about four times faster (2,000,000 k-mers: 0.12 s against 0.5 s) and costs one
byte per character on disk.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit

from .. import engine
from .._files import staged
from .._messages import FixError, FixExistsError, PythonText, plain
from .._sparse_check import check_sparse_structure
from .._validation import check_integer_range, param_error
from ..engine import block_width
from ..transforms import presence
from .registry import Dataset, register_reader

__all__ = ["CHUNK_BYTES", "SUFFIX", "Store", "StoreReader", "chunk_budget", "convert", "open_store", "read_store",
           "write_store"]

#: The suffix of a store; ``genosift.io.read`` picks the store reader for it.
SUFFIX = ".gs.h5ad"
#: Default budget, in bytes, of the matrix data held in memory at once while streaming.
CHUNK_BYTES = engine.CHUNK_BYTES
_VERSION = 1
_TILE_BYTES = 2**20  # dense stores: bytes of one HDF5 tile
_MAX_READ = 1 << 30  # bytes per preadv call (Linux reads at most 2 GiB - 4 KiB at once)


def require_h5py():
    """``h5py``, or an ImportError that says how to install it."""
    try:
        import h5py
    except ImportError:
        raise ImportError(
            "genosift stores are HDF5 files and need h5py: pip install 'genosift[io]' "
            "(or pip install h5py)."
        ) from None
    return h5py


def chunk_budget(chunk_bytes, owner):
    """``chunk_bytes`` checked (a positive int, as the ``owner`` function's parameter), or the
    default ``CHUNK_BYTES`` for None: the memory budget of the data read at once."""
    return engine.check_budget(chunk_bytes, owner)




# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


@contextmanager
def atomic_output(path, overwrite):
    """A temporary name beside ``path``, published as ``path`` when the block succeeds (see
    ``genosift._files.staged``): whole or not at all, and never over a file made meanwhile."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a folder; give write_store a file name such as 'data{SUFFIX}'.")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"Cannot write {str(path)!r}: the folder {str(path.parent)!r} does not exist.")
    if path.exists() and not overwrite:
        raise FixExistsError(f"{str(path)!r} already exists. Pass {{overwrite}} to replace it, or choose another name.",
                             owner="write_store", overwrite=True)
    with staged(path, force=overwrite) as tmp:
        yield str(tmp)


def set_encoding(obj, kind, version, **extra):
    """The AnnData encoding attributes (type, version, extras) of an HDF5 group or dataset."""
    obj.attrs["encoding-type"] = kind
    obj.attrs["encoding-version"] = version
    for k, v in extra.items():
        obj.attrs[k] = v


def string_blob(values, what):
    """``values`` as an object array of str, and their UTF-8 bytes joined by NUL (none may hold one)."""
    out = np.array([str(v) for v in values], dtype=object)
    joined = "\x00".join(out)
    if joined.count("\x00") != max(len(out) - 1, 0):
        bad = next(s for s in out if "\x00" in s)
        raise ValueError(f"The {what} {bad!r} holds a NUL character, which HDF5 strings cannot hold. Rename it.")
    return out, joined


def _write_strings(group, name, values, piece=1 << 20):
    """A string array; ``values`` is any sliceable sequence of str, written ``piece`` at a time."""
    h5py = require_h5py()
    ds = group.create_dataset(name, shape=(len(values),), dtype=h5py.string_dtype("utf-8"))
    for a in range(0, len(values), piece):
        ds[a:a + piece] = np.asarray(values[a:a + piece], dtype=object)
    set_encoding(ds, "string-array", "0.2.0")
    return ds


def _write_frame(group, name, index, frame):
    """An AnnData data frame: ``index`` (str) and the columns of ``frame`` (or none)."""
    g = group.create_group(name)
    columns = [] if frame is None else [str(c) for c in frame.columns]
    index_key = "_index"
    if frame is not None and isinstance(frame.index.name, str) and frame.index.name not in columns:
        index_key = frame.index.name  # kept, as AnnData keeps it
    if len(set(columns)) != len(columns) or index_key in columns or "_index" in columns:
        raise ValueError(
            f"The {name} table has duplicated column names or a column named '_index': "
            f"{columns}. Rename its columns."
        )
    set_encoding(g, "dataframe", "0.2.0", _index=index_key)
    g.attrs["column-order"] = np.array(columns, dtype=object) if columns else np.array([], dtype=np.float64)
    _write_strings(g, index_key, index)
    for col, key in zip([] if frame is None else frame.columns, columns):
        _write_column(g, key, frame[col])
    return g


def _write_column(g, key, series):
    import pandas as pd

    h5py = require_h5py()
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cat = series.array
        sub = g.create_group(key)
        set_encoding(sub, "categorical", "0.2.0", ordered=bool(cat.ordered))
        cats = cat.categories
        if cats.dtype.kind in "biuf":
            ds = sub.create_dataset("categories", data=np.asarray(cats))
            set_encoding(ds, "array", "0.2.0")
        else:
            _write_strings(sub, "categories", string_blob(cats, f"category of column {key!r}")[0])
        ds = sub.create_dataset("codes", data=np.asarray(cat.codes))
        set_encoding(ds, "array", "0.2.0")
        return
    missing = series.isna().to_numpy()
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        ds = g.create_dataset(key, data=series.to_numpy())
        set_encoding(ds, "array", "0.2.0")
        return
    kind = getattr(dtype, "kind", "O")
    if kind in "biu" and not isinstance(dtype, np.dtype):  # pandas nullable Int64 / boolean
        sub = g.create_group(key)
        set_encoding(sub, "nullable-boolean" if kind == "b" else "nullable-integer", "0.1.0")
        fill = False if kind == "b" else 0
        sub.create_dataset("values", data=series.to_numpy(dtype=dtype.numpy_dtype, na_value=fill))
        sub.create_dataset("mask", data=missing)
        return
    if kind == "f":  # pandas nullable Float64: missing values are NaN
        ds = g.create_dataset(key, data=series.to_numpy(dtype=np.float64, na_value=np.nan))
        set_encoding(ds, "array", "0.2.0")
        return
    values = series.to_numpy(dtype=object)
    kept = values[~missing]
    if not all(isinstance(v, str) for v in kept):
        bad = next(v for v in kept if not isinstance(v, str))
        raise ValueError(
            f"Column {key!r} of obs holds {type(bad).__name__} values such as {bad!r}; a store "
            "holds numbers, booleans, strings and categoricals. Convert it, e.g. "
            f"obs[{key!r}] = obs[{key!r}].astype(str)."
        )
    if not missing.any():
        _write_strings(g, key, string_blob(values, f"value of column {key!r}")[0])
        return
    sub = g.create_group(key)
    set_encoding(sub, "nullable-string-array", "0.1.0")
    text = np.where(missing, "", values).astype(object)
    ds = sub.create_dataset("values", data=string_blob(text, f"value of column {key!r}")[0], dtype=h5py.string_dtype("utf-8"))
    set_encoding(ds, "string-array", "0.2.0")
    sub.create_dataset("mask", data=missing)


def check_dtype(dtype, source):
    """The dtype a store keeps: ``dtype`` checked as a real number type, or the source's dtype for None."""
    if dtype is None:
        dt = np.dtype(source)
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            dt = None
    if dt is None or dt.kind not in "biuf":
        raise param_error("dtype", "write_store", "None or a real number type such as np.float64 or np.uint32", dtype)
    return dt.newbyteorder("=")


def _cast(piece, dt, where):
    """``piece`` as ``dt``, exactly; ``where(i)`` names the position of the i-th value."""
    if piece.dtype == dt:
        return piece
    with np.errstate(invalid="ignore", over="ignore"):
        out = piece.astype(dt)
        back = out.astype(piece.dtype)
    bad = back != piece
    if piece.dtype.kind == "f" and dt.kind == "f":  # NaN converts to NaN
        bad &= ~(np.isnan(piece) & np.isnan(back))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"The value {plain(piece[i])} {where(i)} does not convert exactly to dtype {dt.name}. "
            f"Pass dtype=None to keep {piece.dtype.name}, or a type that holds it, such as float64."
        )
    return out


def _csr_of(X):
    M = X.tocsr()
    if M.dtype.kind not in "biuf":
        raise TypeError(f"X has dtype {M.dtype}, which is not a real number type; a store holds numbers.")
    if not M.has_canonical_format:
        M = M.copy() if M is X else M
        M.sum_duplicates()
    return M


def index_dtype(n):
    """int32 for indices below 2**31, else int64."""
    return np.int32 if n < 2**31 else np.int64


def _write_sparse(f, M, dt, names, budget, column_copy):
    n, p = M.shape
    nnz = M.nnz
    step = max(1, budget // max(M.data.itemsize, 1))

    def at(off):
        def where(i):
            r = int(np.searchsorted(M.indptr, off + i, side="right")) - 1
            return f"at row {r}, feature {str(names[M.indices[off + i]])!r}"
        return where

    g = f.create_group("X")
    set_encoding(g, "csr_matrix", "0.1.0", shape=np.array([n, p], dtype=np.int64))
    data = g.create_dataset("data", shape=(nnz,), dtype=dt)
    for a in range(0, nnz, step):
        data[a:a + step] = _cast(M.data[a:a + step], dt, at(a))
    g.create_dataset("indices", data=M.indices.astype(index_dtype(p), copy=False))
    g.create_dataset("indptr", data=M.indptr.astype(np.int64))
    if not column_copy:
        return
    # the same matrix by columns, built in groups of columns that fit the budget
    counts = np.bincount(M.indices, minlength=p).astype(np.int64)
    colptr = np.zeros(p + 1, dtype=np.int64)
    np.cumsum(counts, out=colptr[1:])
    c = f["var"].create_group("_genosift_columns")
    set_encoding(c, "csc_matrix", "0.1.0", shape=np.array([n, p], dtype=np.int64))
    cdata = c.create_dataset("data", shape=(nnz,), dtype=dt)
    crows = c.create_dataset("indices", shape=(nnz,), dtype=index_dtype(n))
    c.create_dataset("indptr", data=colptr)
    per_entry = M.data.itemsize + dt.itemsize + np.dtype(index_dtype(n)).itemsize
    for j0, j1 in column_groups(colptr, max(1, budget // per_entry)):
        lo, hi = int(colptr[j0]), int(colptr[j1])
        out_data = np.empty(hi - lo, dtype=M.data.dtype)
        out_rows = np.empty(hi - lo, dtype=index_dtype(n))
        cursor = colptr[j0:j1] - lo
        _gather(M.data, M.indices, M.indptr, 0, j0, j1, cursor, out_data, out_rows, True)
        cdata[lo:hi] = out_data.astype(dt, copy=False)  # exact: the same values passed _cast above
        crows[lo:hi] = out_rows


def column_groups(colptr, max_entries):
    """``(j0, j1)`` runs of columns holding at most ``max_entries`` entries (at least one column)."""
    p = colptr.shape[0] - 1
    j0 = 0
    while j0 < p:
        j1 = int(np.searchsorted(colptr, colptr[j0] + max_entries, side="right")) - 1
        j1 = min(p, max(j1, j0 + 1))
        yield j0, j1
        j0 = j1


def _write_dense(f, M, dt, names, budget):
    n, p = M.shape
    rows_t = max(1, min(n, 256))
    cols_t = max(1, min(p, _TILE_BYTES // (dt.itemsize * rows_t)))
    ds = f.create_dataset("X", shape=(n, p), dtype=dt, chunks=(rows_t, cols_t) if n and p else None)
    set_encoding(ds, "array", "0.2.0")
    step = max(rows_t, (budget // max(1, p * M.itemsize)) // rows_t * rows_t)
    for a in range(0, n, step):
        piece = np.ascontiguousarray(M[a:a + step])

        def where(i, a=a):
            r, j = divmod(i, p)
            return f"at row {a + r}, feature {str(names[j])!r}"

        ds[a:a + step] = _cast(piece.ravel(), dt, where).reshape(piece.shape)


def write_skeleton(f, sample_ids, obs, names, blob):
    """Everything of a store but ``X``: the AnnData groups, ``obs``, ``var`` and the name blob.

    ``names``: the feature names, any sliceable sequence of str; ``blob``: their UTF-8 bytes
    joined by NUL, as a uint8 array.
    """
    set_encoding(f, "anndata", "0.1.0")
    f.attrs["genosift-store"] = _VERSION
    _write_frame(f, "obs", sample_ids, obs)
    var = _write_frame(f, "var", names, None)
    var.create_dataset("_genosift_names", data=blob)
    for key in ("layers", "obsm", "varm", "obsp", "varp", "uns"):
        set_encoding(f.create_group(key), "dict", "0.1.0")


def write_store(dataset, path, *, dtype=None, column_copy=True, chunk_bytes=None, overwrite=False):
    """Write a ``Dataset`` to a store file (AnnData-compatible HDF5, suffix ``.gs.h5ad``).

    Parameters
    ----------
    dataset : Dataset
        The matrix (dense ndarray or scipy sparse; sparse is stored as CSR), sample ids, feature
        names and ``obs`` (numbers, booleans, strings, categoricals; missing values allowed).
    path : str or Path
        The file to write. It is written under a temporary name in the same folder and renamed
        when complete, so a failed or interrupted write leaves nothing under ``path``.
    dtype : numpy dtype, optional
        Type of the stored values. By default the data's own type. Another type is accepted only
        if every value converts exactly (e.g. ``np.uint32`` for counts below 2**32, which halves
        the bytes of float64 counts); otherwise ``ValueError`` names the first value that does not.
    column_copy : bool, default True
        Sparse data only: also store the matrix by columns, so that feature blocks (for rank and
        other whole-column methods) are sequential reads. Doubles the size on disk.
    chunk_bytes : int, optional
        Bytes of values converted or transposed at a time (default ``CHUNK_BYTES``).
    overwrite : bool, default False
        Replace ``path`` if it exists; otherwise an existing ``path`` is a ``FileExistsError``.

    Returns
    -------
    Path
        ``path``.

    Notes
    -----
    The data set is in memory already; writing needs about ``chunk_bytes`` more, plus the CSR
    form of a sparse matrix given in another format.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, scipy.sparse as sp
    >>> from genosift.io import Dataset
    >>> X = sp.csr_matrix(np.array([[0, 3.0, 0], [2**40, 0, 1]]))
    >>> ds = Dataset(X, np.array(["s-1", "s.2"]), np.array(["ACGT", "CGTA", "GTAC"]))
    >>> path = write_store(ds, pathlib.Path(tempfile.mkdtemp()) / "counts.gs.h5ad")
    >>> store = open_store(path)
    >>> store.shape, store.sample_ids.tolist()
    ((2, 3), ['s-1', 's.2'])
    >>> [(j0, j1, b.toarray().tolist()) for j0, j1, b in store.feature_blocks(width=2)]
    [(0, 2, [[0.0, 3.0], [1099511627776.0, 0.0]]), (2, 3, [[0.0], [1.0]])]
    """
    if not isinstance(dataset, Dataset):
        raise param_error("dataset", "write_store", "a genosift.io.Dataset", type(dataset).__name__)
    budget = chunk_budget(chunk_bytes, "write_store")
    h5py = require_h5py()
    X = dataset.X
    if sp.issparse(X):
        M = _csr_of(X)
    else:
        M = np.asarray(X)
        if M.ndim != 2 or M.dtype.kind not in "biuf":
            raise TypeError(f"X must be a 2-D array of numbers; got {M.ndim} dimension(s) of dtype {M.dtype}.")
    dt = check_dtype(dtype, M.dtype)
    n, p = M.shape
    check_integer_range(M, lambda: dataset.feature_names, source="The data to write")
    sample_ids = string_blob(dataset.sample_ids, "sample id")[0]
    names, joined = string_blob(dataset.feature_names, "feature name")
    obs = dataset.obs
    if obs is not None and len(obs) != n:
        raise ValueError(f"obs has {len(obs)} rows for {n} samples; give one row per sample.")
    with atomic_output(path, overwrite) as tmp:
        with h5py.File(tmp, "w") as f:
            write_skeleton(f, sample_ids, obs, names, np.frombuffer(joined.encode("utf-8"), dtype=np.uint8))
            del joined
            if sp.issparse(M):
                _write_sparse(f, M, dt, names, budget, column_copy)
            else:
                _write_dense(f, M, dt, names, budget)
    return Path(path)


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


@njit(nogil=True, cache=True)
def _gather(data, indices, indptr, row0, j0, j1, cursor, out_data, out_rows, sorted_rows):
    """Scatter the entries of CSR rows that fall in columns ``[j0, j1)`` into CSC buffers.

    ``cursor[j - j0]`` is where the next entry of column ``j`` goes; rows are taken in order, so
    each column's rows come out ascending. With ``sorted_rows`` each row's start is found by
    binary search and the scan stops at ``j1``.
    """
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


class StoredVector:
    """A 1-D HDF5 dataset, read by ranges: ``os.preadv`` at its byte offset where it is stored
    contiguous and uncompressed (as ``write_store`` stores it), else through h5py."""

    def __init__(self, ds):
        self.name = ds.name
        self.dtype = ds.dtype
        self.size = int(ds.shape[0])
        direct = hasattr(os, "preadv") and ds.chunks is None and ds.compression is None  # no preadv on Windows
        offset = ds.id.get_offset() if direct else None
        self.offset = None if offset is None else int(offset)

    def read(self, reader, a, b, dtype=None):
        out_dtype = self.dtype.newbyteorder("=") if dtype is None else np.dtype(dtype)
        if b <= a:
            return np.empty(0, dtype=out_dtype)
        if self.offset is None:
            return reader.h5[self.name][a:b].astype(out_dtype, copy=False)
        raw = np.empty(b - a, dtype=self.dtype)
        view = memoryview(raw).cast("B")
        pos = self.offset + a * self.dtype.itemsize
        done = 0
        while done < len(view):
            got = os.preadv(reader.fd, [view[done:done + _MAX_READ]], pos + done)
            if got <= 0:
                raise ValueError(f"{str(reader.path)!r} is truncated: {self.name} ends before its stated size. Write the store again.")
            done += got
        return raw.astype(out_dtype, copy=False)


class _Reader:
    """An open file descriptor (and, on demand, an h5py file) for one pass over the store."""

    def __init__(self, store):
        self.path = store.path
        store._check_unchanged()
        self.fd = os.open(self.path, os.O_RDONLY)
        self._h5 = None

    @property
    def h5(self):
        if self._h5 is None:
            self._h5 = require_h5py().File(self.path, "r")
        return self._h5

    def close(self):
        if self._h5 is not None:
            self._h5.close()
        os.close(self.fd)


def _length(item):
    """Entries of a 1-D dataset or of an AnnData encoded array group (its ``values``); None if neither."""
    if item is None:
        return None
    if hasattr(item, "keys"):
        item = item.get("values") if "values" in item else item.get("codes")
    return int(item.shape[0]) if item is not None and item.ndim == 1 else None


def _read_strings(ds):
    kind = ds.attrs.get("encoding-type", "string-array")
    if kind == "nullable-string-array":
        values = _read_strings(ds["values"])
        mask = ds["mask"][()]
        values[mask] = np.nan
        return values
    if ds.dtype.kind in "SO":
        return np.asarray(ds.asstr()[()], dtype=object)
    return np.asarray(ds[()])


def _read_column(item, path, key):
    import pandas as pd

    kind = item.attrs.get("encoding-type", "array")
    if kind == "categorical":
        codes = item["codes"][()]
        cats = _read_strings(item["categories"])
        return pd.Categorical.from_codes(codes, categories=cats, ordered=bool(item.attrs.get("ordered", False)))
    if kind in ("nullable-integer", "nullable-boolean"):
        values = item["values"][()]
        mask = item["mask"][()].astype(bool)
        if kind == "nullable-boolean":
            return pd.arrays.BooleanArray(values.astype(bool), mask)
        return pd.arrays.IntegerArray(values, mask)
    if kind in ("string-array", "nullable-string-array"):  # pandas' default string type
        return pd.Series(_read_strings(item), dtype="str", copy=False).array
    if kind == "array" and not hasattr(item, "keys"):
        return item[()]
    raise FixError(
        f"Column {key!r} of obs in {str(path)!r} has the AnnData encoding {kind!r}, which the store "
        "reader does not decode. Read the file with {read_h5ad} instead.",
        owner="open_store", read_h5ad=PythonText("genosift.io.read(path, format='h5ad')"),
    )


def _split_names(blob, p, piece=1 << 20):
    """The ``p`` names of a NUL-joined UTF-8 blob (None if there are not ``p``).

    Decoded a piece at a time, so that a thread doing this lets others run between pieces.
    """
    names = np.empty(p, dtype=object)
    k = pos = 0
    while p and pos <= len(blob):
        end = blob.find(b"\x00", pos + piece)
        end = len(blob) if end < 0 else end
        part = blob[pos:end].decode("utf-8").split("\x00")
        if k + len(part) > p:
            return None
        names[k:k + len(part)] = part
        k += len(part)
        pos = end + 1
    return names if k == p else None


class _Presence:
    """A stored vector of values read as presence: 1.0 where the value is above 0, NaN kept."""

    def __init__(self, vector):
        self.vector, self.name, self.size = vector, vector.name, vector.size
        self.dtype = np.dtype(np.float64)

    def read(self, reader, a, b, dtype=None):
        return presence(self.vector.read(reader, a, b))


class Store:
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
            if self.sparse:
                self._data = _Presence(self._data)
                if self.has_column_copy:
                    self._cdata = _Presence(self._cdata)
        self._names = None
        self._ids = None
        self._obs = None
        self._obs_read = False

    @contextmanager
    def _file(self):
        """The file, open in h5py; HDF5 errors become a ValueError naming the file."""
        try:
            with require_h5py().File(self.path, "r") as f:
                yield f
        except (OSError, KeyError) as exc:
            raise FixError(
                f"Cannot read {str(self.path)!r} as a store: it is damaged or not an HDF5 file "
                f"({exc}). Write it with {{write_store}}.",
                owner="open_store", write_store=PythonText("genosift.io.write_store"),
            ) from None

    def _signature(self):
        st = os.stat(self.path)
        return st.st_ino, st.st_size, st.st_mtime_ns

    @property
    def signature(self):
        """``(inode, size, mtime_ns)`` of the file when the store was opened: a worker that
        reopens the path compares it to tell the same file from a replaced one."""
        return self._stat

    def _check_unchanged(self):
        try:
            same = self._signature() == self._stat
        except FileNotFoundError:
            same = False
        if not same:
            raise ValueError(f"The store {str(self.path)!r} was replaced or removed since it was opened; open it again.")

    def _open(self, f):
        where = str(self.path)
        if "X" not in f or "obs" not in f or "var" not in f:
            raise FixError(
                f"{where!r} is not a store or AnnData file: it lacks {[k for k in ('X', 'obs', 'var') if k not in f]}. "
                "Write one with {write_store}.",
                owner="open_store", write_store=PythonText("genosift.io.write_store"),
            )
        X = f["X"]
        kind = X.attrs.get("encoding-type", "array" if isinstance(X, require_h5py().Dataset) else "")
        self._canonical = bool(f.attrs.get("genosift-store", 0))
        if kind == "csr_matrix":
            self.sparse = True
            shape = np.asarray(X.attrs["shape"])
            if shape.shape != (2,) or shape.dtype.kind not in "iu" or (shape < 0).any():
                raise self._damaged(f"its shape attribute is {shape.tolist()}, not two sizes")
            self.shape = tuple(int(v) for v in shape)
            self._data, self._indices, self._indptr = (StoredVector(X[k]) for k in ("data", "indices", "indptr"))
            self.dtype = self._data.dtype.newbyteorder("=")
            self.nnz = self._data.size
            if self._indices.size != self.nnz or self._indptr.size != self.shape[0] + 1:
                raise self._damaged(
                    f"it holds {self._data.size} values, {self._indices.size} column indices and "
                    f"{self._indptr.size} row pointers for {self.shape[0]} rows")
            cols = f["var"].get("_genosift_columns")
            self.has_column_copy = cols is not None
            if cols is not None:
                self._cdata, self._crows, self._cptr = (StoredVector(cols[k]) for k in ("data", "indices", "indptr"))
                if not self._cdata.size == self._crows.size == self.nnz or self._cptr.size != self.shape[1] + 1:
                    raise self._damaged(
                        f"its column copy holds {self._cdata.size} values, {self._crows.size} row indices "
                        f"and {self._cptr.size} column pointers for {self.nnz} values in {self.shape[1]} columns")
        elif kind == "array" and X.ndim == 2:
            self.sparse = False
            self.shape = tuple(int(v) for v in X.shape)
            self.dtype = X.dtype.newbyteorder("=")
            self.nnz = self.shape[0] * self.shape[1]
            self.has_column_copy = False
            self._tile_rows = int(X.chunks[0]) if X.chunks else 1
        else:
            raise FixError(
                f"X in {where!r} is stored as {kind or 'an unknown encoding'!r}; the store reads a "
                "csr_matrix or a dense array. Read it with {read_h5ad} and write it with {write_store}.",
                owner="open_store", read_h5ad=PythonText("genosift.io.read(path, format='h5ad')"),
                write_store=PythonText("genosift.io.write_store"),
            )
        if self.dtype.kind not in "biuf":
            raise ValueError(f"X in {where!r} has dtype {self.dtype}, which is not a real number type.")
        for axis, group in enumerate(("obs", "var")):
            index = f[group].get(f[group].attrs.get("_index", "_index"))
            size = _length(index)
            if size != self.shape[axis]:
                raise self._damaged(
                    f"its matrix has {self.shape[axis]} {('rows', 'columns')[axis]} but {group} names "
                    f"{'no' if size is None else size} {('samples', 'features')[axis]}")

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
            with self._file() as f:
                var = f["var"]
                p = self.shape[1]
                names = None
                if "_genosift_names" in var:
                    ds = var["_genosift_names"]
                    blob = bytearray(ds.shape[0])  # read in place: no second copy of the names
                    if blob:
                        ds.read_direct(np.frombuffer(blob, dtype=np.uint8))
                    names = _split_names(blob, p)
                if names is None:
                    names = _read_strings(var[var.attrs.get("_index", "_index")]).astype(object)
            self._names = names
        return self._names

    @property
    def sample_ids(self):
        if self._ids is None:
            with self._file() as f:
                obs = f["obs"]
                self._ids = _read_strings(obs[obs.attrs.get("_index", "_index")]).astype(object)
        return self._ids

    @property
    def obs(self):
        if not self._obs_read:
            import pandas as pd

            with self._file() as f:
                g = f["obs"]
                order = [str(c) for c in np.atleast_1d(g.attrs.get("column-order", []))]
                frame = None
                if order:
                    key = g.attrs.get("_index", "_index")
                    index = pd.Index(self.sample_ids, dtype="str", name=None if key == "_index" else key)
                    frame = pd.DataFrame({c: _read_column(g[c], self.path, c) for c in order}, index=index)
            self._obs, self._obs_read = frame, True
        return self._obs

    # reading the matrix ------------------------------------------------------------------------

    def _row_ranges(self, reader, rows_per_chunk, budget, read_ahead=False):
        """``(ranges, indptr)``: the ``(a, b)`` row ranges of the chunks, and the row pointers.

        With ``read_ahead``, two chunks are in memory at once, so each gets half the budget;
        unless the whole matrix fits the budget, then it is one chunk.
        """
        n, p = self.shape
        if rows_per_chunk is not None:
            if isinstance(rows_per_chunk, bool) or not isinstance(rows_per_chunk, (int, np.integer)) or rows_per_chunk < 1:
                raise param_error("rows_per_chunk", "Store.row_chunks", "a positive int or None", rows_per_chunk)
            return [(a, min(n, a + int(rows_per_chunk))) for a in range(0, n, int(rows_per_chunk))], None
        per_entry = self.dtype.itemsize + (self._indices.dtype.itemsize if self.sparse else 0)
        if read_ahead and self.nnz * per_entry > budget:
            budget //= 2
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
        return presence(values) if self.binary else values

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

    def row_ranges(self, chunk_bytes=None, *, read_ahead=False):
        """The ``(a, b)`` row ranges ``row_chunks`` reads for ``chunk_bytes``, in order: each holds
        at most that many bytes of stored entries (half with ``read_ahead``) and at least one row."""
        budget = chunk_budget(chunk_bytes, "Store.row_ranges")
        with self.reader() as reader:
            ranges, _ = self._row_ranges(reader._io, None, budget, read_ahead)
        return ranges

    def names_loader(self):
        """A picklable function returning ``feature_names`` when called: a ``ScoreResult`` holds it
        so that millions of names are decoded only when they are shown."""
        return _NamesOf(self)

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
        budget = chunk_budget(chunk_bytes, "Store.row_chunks")
        reader = _Reader(self)
        try:
            ranges, indptr = self._row_ranges(reader, rows_per_chunk, budget, read_ahead)
            items = (self._row_chunk(reader, a, b, indptr) for a, b in ranges)
            if read_ahead and len(ranges) > 1:
                items = engine.read_ahead(items, name="genosift-store-read")
            try:
                yield from items
            finally:
                items.close()
        finally:
            reader.close()

    def feature_blocks(self, width=None, *, chunk_bytes=None):
        """Yield ``(j0, j1, block)``: every sample of the features ``j0 <= j < j1``, in order.

        Parameters
        ----------
        width : int, optional
            Features per block. By default, as many as make one dense float64 block of all samples
            fit ``chunk_bytes`` (the width in-memory scoring uses for that budget).
        chunk_bytes : int, optional
            The budget (default ``CHUNK_BYTES``).

        Yields
        ------
        (int, int, scipy.sparse.csc_matrix or ndarray)
            CSC blocks of a sparse store (in the stored dtype, rows sorted), ndarray blocks of a
            dense one.

        Notes
        -----
        A sparse store without its column copy is read by rows: one pass counts the entries of
        each column, then each further pass gathers as many blocks as ``chunk_bytes`` holds.
        """
        budget = chunk_budget(chunk_bytes, "Store.feature_blocks")
        n, p = self.shape
        if width is None:
            width = block_width(n, p, budget)
        elif isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
            raise param_error("width", "Store.feature_blocks", "a positive int or None", width)
        width = int(width)
        reader = _Reader(self)
        try:
            if not self.sparse:
                for j0 in range(0, p, width):
                    j1 = min(p, j0 + width)
                    yield j0, j1, self._dense(reader.h5["X"][:, j0:j1])
            elif self.has_column_copy:
                colptr = self._column_pointers(reader)
                for j0 in range(0, p, width):
                    j1 = min(p, j0 + width)
                    yield j0, j1, self._column_block(reader, j0, j1, colptr)
            else:
                yield from self._blocks_by_rows(reader, width, budget)
        finally:
            reader.close()

    def _blocks_by_rows(self, reader, width, budget):
        n, p = self.shape
        ranges, indptr = self._row_ranges(reader, None, budget // 2)
        counts = np.zeros(p, dtype=np.int64)
        for a, b in ranges:
            counts += np.bincount(self._row_chunk(reader, a, b, indptr).indices, minlength=p)
        colptr = np.zeros(p + 1, dtype=np.int64)
        np.cumsum(counts, out=colptr[1:])
        per_entry = self.dtype.itemsize + np.dtype(index_dtype(n)).itemsize
        bounds = np.r_[np.arange(0, p, width), p]
        g0 = 0  # groups of whole blocks that fit half the budget (the other half reads rows)
        while g0 < len(bounds) - 1:
            g1 = g0 + 1
            while g1 < len(bounds) - 1 and (colptr[bounds[g1 + 1]] - colptr[bounds[g0]]) * per_entry <= budget // 2:
                g1 += 1
            J0, J1 = int(bounds[g0]), int(bounds[g1])
            base = int(colptr[J0])
            size = int(colptr[J1]) - base
            out_data = np.empty(size, dtype=self.dtype)
            out_rows = np.empty(size, dtype=index_dtype(n))
            cursor = colptr[J0:J1] - base
            for a, b in ranges:
                M = self._row_chunk(reader, a, b, indptr)
                _gather(M.data, M.indices, M.indptr, a, J0, J1, cursor, out_data, out_rows, self._canonical)
            for j0, j1 in zip(bounds[g0:g1], bounds[g0 + 1:g1 + 1]):
                lo, hi = int(colptr[j0]) - base, int(colptr[j1]) - base
                block = sp.csc_matrix(
                    (out_data[lo:hi], out_rows[lo:hi], (colptr[j0:j1 + 1] - colptr[j0]).astype(index_dtype(max(hi - lo, n)))),
                    shape=(n, int(j1 - j0)),
                )
                if not block.has_canonical_format:
                    block.sum_duplicates()
                yield int(j0), int(j1), block
            g0 = g1

    def read_columns(self, columns, *, rows=None, chunk_bytes=None):
        """The values of some features (all samples, or ``rows``), read in bounded memory.

        Parameters
        ----------
        columns : array-like of int or bool
            Feature indices (any order, as the result's columns) or a boolean mask of the features.
        rows : array-like of int or bool, optional
            Keep only these samples: increasing row indices or a boolean mask. By default all.
        chunk_bytes : int, optional
            The budget for data read at once besides the result (default ``CHUNK_BYTES``).

        Returns
        -------
        scipy.sparse.csc_matrix or ndarray (n_rows, n_columns)
            CSC for a sparse store, an array for a dense one, in the stored dtype.

        Notes
        -----
        A sparse store with its column copy reads just the entries of those features; other
        stores are read once in row chunks, keeping those columns of each chunk.

        Examples
        --------
        >>> import tempfile, pathlib, numpy as np, scipy.sparse as sp
        >>> from genosift.io import Dataset
        >>> X = sp.csr_matrix(np.array([[0, 3.0, 1], [1, 0, 0], [0, 4, 2]]))
        >>> ds = Dataset(X, np.array(["a", "b", "c"]), np.array(["k1", "k2", "k3"]))
        >>> store = open_store(write_store(ds, pathlib.Path(tempfile.mkdtemp()) / "d.gs.h5ad"))
        >>> store.read_columns([2, 0]).toarray().tolist()
        [[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]
        >>> store.read_columns([True, False, True], rows=[0, 2]).toarray().tolist()
        [[0.0, 1.0], [0.0, 2.0]]
        """
        n, p = self.shape
        budget = chunk_budget(chunk_bytes, "Store.read_columns")
        cols = self._indices_of(columns, p, "columns", increasing=False)
        keep = None if rows is None else self._indices_of(rows, n, "rows", increasing=True)
        wanted, order = np.unique(cols, return_inverse=True)
        if self.sparse and self.has_column_copy:
            M = self._columns_from_copy(wanted)
            M = M if keep is None else M[keep]
        else:
            parts, a = [], 0
            for chunk in self.row_chunks(chunk_bytes=budget):
                b = a + chunk.shape[0]
                local = None if keep is None else keep[np.searchsorted(keep, a):np.searchsorted(keep, b)] - a
                part = chunk[:, wanted] if local is None else chunk[local][:, wanted]
                parts.append(part)
                a = b
            if self.sparse:
                M = sp.vstack(parts, format="csc") if parts else sp.csc_matrix((0, wanted.size), dtype=self.dtype)
            else:
                M = np.concatenate(parts) if parts else np.empty((0, wanted.size), dtype=self.dtype)
        return M if np.array_equal(order, np.arange(order.size)) else M[:, order]

    @staticmethod
    def _indices_of(values, size, what, *, increasing):
        index = np.asarray(values)
        if index.dtype == bool and index.shape == (size,):
            return np.flatnonzero(index)
        ok = index.ndim == 1 and (not index.size or index.dtype.kind in "iu")
        if ok and index.size:
            ok = index.min() >= 0 and index.max() < size and (not increasing or (np.diff(index) > 0).all())
        if not ok:
            order = "increasing " if increasing else ""
            raise param_error(what, "Store.read_columns", f"a boolean mask of {size} values or {order}indices in "
                              f"[0, {size})", index.tolist() if index.size <= 10 else f"an array of shape {index.shape}")
        return index.astype(np.int64)

    def _columns_from_copy(self, wanted):
        """CSC of the sorted columns ``wanted``, read from the column copy, one read per run."""
        n = self.shape[0]
        reader = _Reader(self)
        try:
            colptr = self._column_pointers(reader)
            counts = colptr[wanted + 1] - colptr[wanted]
            data = np.empty(int(counts.sum()), dtype=self.dtype)
            row_idx = np.empty(data.size, dtype=index_dtype(max(data.size, n)))
            # runs of consecutive columns are one contiguous range each
            breaks = np.flatnonzero(np.diff(wanted) != 1) + 1
            out = 0
            for run in np.split(wanted, breaks) if wanted.size else []:
                lo, hi = int(colptr[run[0]]), int(colptr[run[-1] + 1])
                data[out:out + hi - lo] = self._cdata.read(reader, lo, hi)
                row_idx[out:out + hi - lo] = self._crows.read(reader, lo, hi)
                out += hi - lo
        finally:
            reader.close()
        indptr = np.zeros(wanted.size + 1, dtype=row_idx.dtype)
        np.cumsum(counts, out=indptr[1:])
        check_sparse_structure(indptr, row_idx, wanted.size, n, sorted_indices=True, path=self.path, fmt="a store")
        M = sp.csc_matrix((data, row_idx, indptr), shape=(n, wanted.size), copy=False)
        M.has_canonical_format = True
        return M

    def to_dataset(self):
        """The whole store in memory, as a ``Dataset`` (CSR or dense ``X`` in the stored dtype)."""
        reader = _Reader(self)
        try:
            n = self.shape[0]
            X = self._row_chunk(reader, 0, n, None) if self.sparse else self._dense(reader.h5["X"][()])
        finally:
            reader.close()
        return Dataset(X, self.sample_ids, self.feature_names, self.obs)


class _NamesOf:
    """The feature names of a store, read when called (a picklable loader for a ScoreResult)."""

    def __init__(self, store):
        self.store = store

    def __call__(self):
        return self.store.feature_names


class StoreReader:
    """One open pass over a store: ``rows(a, b)`` and ``columns(j0, j1)`` read any ranges, in any
    order, through the same open file (``Store.reader()``; close it, or use it in a ``with``)."""

    def __init__(self, store):
        self.store = store
        self._io = _Reader(store)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
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


# --------------------------------------------------------------------------------------------
# Converting
# --------------------------------------------------------------------------------------------


def convert(path, out_path, *, format=None, dtype=None, column_copy=True, overwrite=False, chunk_bytes=None,
            **options):
    """Any readable data file to a store: ``write_store(genosift.io.read(path, ...), out_path)``.

    The file is read into memory first (k-mer files convert in bounded memory with
    ``convert_kmers``); ``chunk_bytes`` bounds the extra memory of writing."""
    from .formats import read

    ds = read(path, format=format, **options)
    return write_store(ds, out_path, dtype=dtype, column_copy=column_copy, overwrite=overwrite,
                       chunk_bytes=chunk_bytes)


def __getattr__(name):
    # ``genosift.io.store.score_store``: scoring a store is a driver's job (``genosift.scoring.store``),
    # resolved here on first use so that this module imports nothing of scoring.
    if name == "score_store":
        from ..scoring.store import score_store

        return score_store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
