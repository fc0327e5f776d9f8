"""Writing a store: the checked dtype, the AnnData skeleton, CSR values with their column copy, dense
tiles, and ``write_store``/``convert`` published atomically."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ...core import engine
from ...core.constraints import InstanceOf, checked
from ...core.files import staged
from ...core.messages import FixError, FixExistsError, plain
from ...core.sparse_columns import column_counts
from ...core.validation import check_integer_range, param_error
from ..registry import Dataset
from .encoding import require_h5py, set_encoding, string_blob, write_frame
from .read import gather

__all__ = ["CHUNK_BYTES", "SUFFIX", "atomic_output", "check_dtype", "column_groups", "convert",
           "index_dtype", "write_skeleton", "write_store"]

#: The suffix of a store; ``genosift.io.read`` picks the store reader for it.
SUFFIX = ".gs.h5ad"
#: Default budget, in bytes, of the matrix data held in memory at once while streaming.
CHUNK_BYTES = engine.CHUNK_BYTES
_VERSION = 1
#: The file attribute holding the ploidy of a store of genotypes (``Dataset.ploidy``).
PLOIDY = "genosift-ploidy"
_TILE_BYTES = 2**20  # dense stores: bytes of one HDF5 tile


@contextmanager
def atomic_output(path, overwrite):
    """A temporary name beside ``path``, published as ``path`` when the block succeeds (see
    ``genosift.core.files.staged``): whole or not at all, and never over a file made meanwhile."""
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
        raise FixError(
            f"The value {plain(piece[i])} {where(i)} does not convert exactly to dtype {dt.name}. "
            "Pass {dtype} to keep the values' own type, or a type that holds it.",
            owner="write_store", dtype=piece.dtype.name,
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
    colptr = np.zeros(p + 1, dtype=np.int64)
    np.cumsum(column_counts(M.indices, p), out=colptr[1:])
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
        gather((M.data, M.indices, M.indptr), 0, j0, j1, cursor, (out_data, out_rows), True)
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


def write_skeleton(f, sample_ids, obs, names, blob, var=None):
    """Everything of a store but ``X``: the AnnData groups, ``obs``, ``var`` and the name blob.

    ``names``: the feature names, any sliceable sequence of str; ``blob``: their UTF-8 bytes
    joined by NUL, as a uint8 array, or as consecutive uint8 pieces (an iterable) of ``names.size``
    bytes in all; ``var``: the per-feature columns (a data frame in the names' order), or None.
    """
    taken = [str(c) for c in ([] if var is None else var.columns) if str(c).startswith("_genosift")]
    if taken:
        raise ValueError(f"The var table has the column(s) {taken}, names the store keeps for itself. Rename them.")
    set_encoding(f, "anndata", "0.1.0")
    f.attrs["genosift-store"] = _VERSION
    write_frame(f, "obs", sample_ids, obs)
    var = write_frame(f, "var", names, var)
    if isinstance(blob, np.ndarray):
        var.create_dataset("_genosift_names", data=blob)
    else:
        ds = var.create_dataset("_genosift_names", shape=(names.size,), dtype=np.uint8)
        at = 0
        for piece in blob:
            ds[at:at + piece.size] = piece
            at += piece.size
        if at != names.size:
            raise RuntimeError("the names' bytes did not fill their dataset")
    for key in ("layers", "obsm", "varm", "obsp", "varp", "uns"):
        set_encoding(f.create_group(key), "dict", "0.1.0")


@checked(dataset=InstanceOf(Dataset, "a genosift.io.Dataset"))
def write_store(dataset, path, *, dtype=None, column_copy=True, chunk_bytes=None, overwrite=False):
    """Write a ``Dataset`` to a store file (AnnData-compatible HDF5, suffix ``.gs.h5ad``).

    Parameters
    ----------
    dataset : Dataset
        The matrix (dense ndarray or scipy sparse; sparse is stored as CSR), sample ids, feature
        names, ``obs`` and ``var`` (numbers, booleans, strings, categoricals; missing values
        allowed), the AnnData ``obs`` and ``var`` of the store.
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
    >>> from genosift.io import Dataset, open_store
    >>> X = sp.csr_matrix(np.array([[0, 3.0, 0], [2**40, 0, 1]]))
    >>> ds = Dataset(X, np.array(["s-1", "s.2"]), np.array(["ACGT", "CGTA", "GTAC"]))
    >>> path = write_store(ds, pathlib.Path(tempfile.mkdtemp()) / "counts.gs.h5ad")
    >>> store = open_store(path)
    >>> store.shape, store.sample_ids.tolist()
    ((2, 3), ['s-1', 's.2'])
    >>> [(j0, j1, b.toarray().tolist()) for j0, j1, b in store.feature_blocks(width=2)]
    [(0, 2, [[0.0, 3.0], [1099511627776.0, 0.0]]), (2, 3, [[0.0], [1.0]])]
    """
    budget = engine.check_budget(chunk_bytes, "write_store")
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
            write_skeleton(f, sample_ids, obs, names, np.frombuffer(joined.encode("utf-8"), dtype=np.uint8),
                           dataset.var)
            del joined
            if dataset.ploidy is not None:  # genotypes: kept, so that a model's variants match new ones
                f.attrs[PLOIDY] = int(dataset.ploidy)
            if sp.issparse(M):
                _write_sparse(f, M, dt, names, budget, column_copy)
            else:
                _write_dense(f, M, dt, names, budget)
    return Path(path)


# --------------------------------------------------------------------------------------------
# Reading


def convert(path, out_path, *, format=None, dtype=None, column_copy=True, overwrite=False, chunk_bytes=None,
            **read_options):
    """Any readable data file to a store: ``write_store(genosift.io.read(path, ...), out_path)``.

    The file is read into memory first (k-mer files convert in bounded memory with
    ``convert_kmers``); ``chunk_bytes`` bounds the extra memory of writing."""
    from ..formats import read

    ds = read(path, format=format, **read_options)
    return write_store(ds, out_path, dtype=dtype, column_copy=column_copy, overwrite=overwrite,
                       chunk_bytes=chunk_bytes)
