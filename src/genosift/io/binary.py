"""Binary and columnar data files: Parquet, NumPy (.npy, .npz), Matrix Market and AnnData (.h5ad).

Each reader returns a :class:`~genosift.io.Dataset` with samples in rows. Decisions shared by
all readers (:mod:`genosift.io.delimited` included):

- Sample ids and feature names are strings exactly as the file spells them (``"007"`` stays
  ``"007"``); a duplicated id or name is an error that lists the duplicates.
- Text tables (CSV, TSV, Parquet) give a dense float64 matrix. Binary arrays (``.npy``,
  ``.npz``, ``.mtx``, ``.h5ad``) keep the numeric type they were saved with, so a large int8
  genotype matrix is not blown up eight-fold; later steps accumulate in float64 whatever the
  input type. Sparse data stay sparse (CSR), never densified.
- A damaged file (corrupt or truncated compressed stream, not the format its name says) raises a
  ``ValueError`` naming the file and the problem.
"""
from __future__ import annotations

import io
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..core.messages import FixError
from ..core.sparse_check import check_sparse_matrix
from .compression import MAX_LINE_BYTES, detect, open_binary, replayable
from .reading import (
    ObjectsRefused,
    check_unique,
    column_position,
    file_errors,
    names_for,
    numbered,
    numeric_block,
    optional_module,
    str_array,
)
from .registry import Dataset, register_reader
from .store.contained import check_file

__all__ = ["read_h5ad", "read_mtx", "read_npy", "read_npz", "read_parquet"]


@contextmanager
def _objects_refused(path):
    """Say clearly why an array of Python objects is not loaded."""
    try:
        yield
    except ValueError as exc:
        if "allow_pickle" not in str(exc):
            raise
        if "contains pickled" in str(exc) or "containing pickled" in str(exc):  # neither .npy nor zip header
            # ("This file contains pickled (object) data" in numpy 2, "Cannot load file containing
            # pickled data" before); an object array says "Object arrays cannot be loaded"
            raise ValueError("it starts with neither the .npy header nor a zip (.npz) header") from None
        raise ObjectsRefused(
            f"{str(path)!r} holds arrays of Python objects; they are not loaded, because that would "
            "run pickled code. Save numbers (a.astype(float)) and names as text (np.array(names, dtype=str))."
        ) from None


#: The most a deflated zip member expands (deflate's limit is about 1032:1), plus slack.
_DEFLATE_RATIO, _ZIP_SLACK = 1100, 1 << 20


def _npy_claim(fh):
    """``(shape, dtype, bytes)`` that the .npy header at ``fh``'s position declares, or None when
    it is not a readable .npy header (``np.load`` then names the fault)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, _, dtype = read(fh)
    except Exception:  # not a .npy header: left to np.load's own message
        return None
    count = 1
    for size in shape:
        count *= int(size)
    return shape, dtype, count * dtype.itemsize


def _check_npy_sizes(path):
    """Refuse an .npy file, or an .npz member, whose header declares more bytes than the file
    (or the member) holds, before anything is allocated for it: a crafted header claiming 10**12
    values would otherwise ask for terabytes."""
    import zipfile

    with open(path, "rb") as fh:
        if fh.read(2) == b"PK":
            members = []
            with zipfile.ZipFile(fh) as z:
                for info in z.infolist():
                    limit = info.compress_size if info.compress_type == zipfile.ZIP_STORED \
                        else _DEFLATE_RATIO * info.compress_size + _ZIP_SLACK
                    if info.file_size > limit:
                        raise ValueError(f"its member {info.filename!r} claims {info.file_size:,} bytes, more than "
                                         f"its {info.compress_size:,} stored bytes can expand to")
                    if info.filename.endswith(".npy"):
                        with z.open(info) as member:
                            members.append((info.filename, _npy_claim(member), info.file_size))
        else:
            fh.seek(0)
            claim = _npy_claim(fh)
            members = [(None, claim, Path(path).stat().st_size - fh.tell() if claim else 0)]
    for name, claim, held in members:
        if claim is not None and claim[2] > held:
            where = "" if name is None else f"its array {name[:-4]!r} "
            raise ValueError(f"{where}declares shape {tuple(int(v) for v in claim[0])} of {claim[1]} "
                             f"({claim[2]:,} bytes) but holds {held:,} bytes: it is truncated or its header is "
                             "damaged")


def _numeric_dense(M, path):
    """``M`` itself, checked to be a 2-D array of real numbers."""
    if M.ndim != 2:
        raise ValueError(
            f"{str(path)!r} holds a {M.ndim}-D array of shape {M.shape}; a data matrix must be 2-D "
            "(samples in rows, features in columns). Reshape it before saving, e.g. a.reshape(-1, 1)."
        )
    if M.dtype.kind not in "biuf":
        raise ValueError(
            f"{str(path)!r} holds values of type {M.dtype}, which are not real numbers. Save a "
            "numeric array (for example a.astype(float))."
        )
    return M


def _as_csr(M, path, fmt):
    """``M`` as canonical CSR, its index structure checked first (``path``, ``fmt``: for the message)."""
    M = sp.csr_matrix(check_sparse_matrix(M, path=path, fmt=fmt))
    if not M.has_canonical_format:
        M.sum_duplicates()
    return M


# ---------------------------------------------------------------------------------------------
# Parquet


@register_reader("parquet", suffixes=(".parquet", ".pq"))
def read_parquet(path, *, id_column=None, keep=()):
    """Parquet table (pyarrow), samples in rows; id and keep columns as for CSV.

    Parameters
    ----------
    path : str or Path
    id_column : str or int, optional
        The sample-id column, as a name or a 0-based position. Default: the pandas index stored
        in the file (``DataFrame.to_parquet`` writes it), if there is exactly one; else the first
        column. Ids of any type are turned into text.
    keep : str or sequence of str or int, default ()
        Columns to keep in ``obs`` (targets, groups) instead of as features.

    Returns
    -------
    Dataset
        ``X`` dense float64 (nulls become NaN); ``obs`` with the ``keep`` columns, or None.

    Notes
    -----
    Needs ``pyarrow``. The whole table is read into memory. Feature columns must be numeric or
    boolean; a text column whose every value parses as a number is accepted, any other is a
    ``ValueError`` that names the column, the 1-based row and the value.
    """
    import pandas as pd

    path = Path(path)
    pq = optional_module("pyarrow.parquet", "Parquet files", package="pyarrow")
    with file_errors(path, "a Parquet file", broad=True):
        names = pq.read_schema(path).names
    check_unique(names, "column names", path)  # pyarrow's table reader fails on them obscurely
    with file_errors(path, "a Parquet file", broad=True):
        table = pq.read_table(path)
        frame = table.to_pandas(ignore_metadata=True)
    header = [str(c) for c in table.column_names]
    n = len(header)
    if table.num_rows == 0 or n < 2:
        raise ValueError(
            f"{str(path)!r} has {table.num_rows} rows and {n} columns; a data table needs an id "
            "column, at least one feature column and at least one row."
        )
    if id_column is None:
        meta = table.schema.pandas_metadata or {}
        stored = [c for c in meta.get("index_columns", []) if isinstance(c, str)]
        id_column = header.index(stored[0]) if len(stored) == 1 and stored[0] in header else 0
    keep = [keep] if isinstance(keep, (str, int)) else list(keep or ())
    where = "its columns"
    id_pos = column_position(header, id_column, "id_column", path, where)
    keep_pos = list(dict.fromkeys(column_position(header, k, "keep", path, where) for k in keep))
    if id_pos in keep_pos:
        raise FixError(
            f"Column {header[id_pos]!r} of {str(path)!r} is the id column; it cannot also be in {{keep}}.",
            owner="read_table", keep=FixError.ANY,
        )
    check_unique([h for j, h in enumerate(header) if j != id_pos], "column names", path)
    frame.columns = range(n)
    ids = frame[id_pos]
    if ids.isna().any():
        missing = np.flatnonzero(ids.isna().to_numpy()) + 1
        raise ValueError(
            f"{str(path)!r} has missing sample ids (column {header[id_pos]!r}) at "
            f"{numbered(missing[:5].tolist(), missing.size, 'row')}. Every row needs a sample id."
        )
    sample_ids = str_array(ids)
    check_unique(sample_ids, "sample ids", path)
    feat = [j for j in range(n) if j != id_pos and j not in keep_pos]
    if not feat:
        raise FixError(f"{str(path)!r} has no feature columns: every column is the id column or in {{keep}}.",
                       owner="read_table", keep=FixError.ANY)
    M = numeric_block(frame[feat], header, path, lambda rows: [r + 1 for r in rows],
                       features_in_rows=False, where="row", keep_hint=True)
    obs = None
    if keep_pos:
        obs = pd.DataFrame({header[j]: frame[j].to_numpy() for j in keep_pos},
                           index=pd.Index(sample_ids, name=header[id_pos]))
    return Dataset(M, sample_ids, np.array([header[j] for j in feat], dtype=object), obs)


# ---------------------------------------------------------------------------------------------
# NumPy


@register_reader("npy", suffixes=(".npy",))
def read_npy(path, *, samples=None, features=None):
    """NumPy .npy file holding one 2-D numeric array, samples in rows.

    Parameters
    ----------
    path : str or Path
    samples, features : str, Path or sequence of str, optional
        The sample ids and feature names: a file with one name per line, or the names. Default:
        the files ``<stem>.samples.txt`` and ``<stem>.features.txt`` beside ``path`` (for
        ``data.npy``: ``data.samples.txt``), if present; else ``s0, s1, ...`` and ``x0, x1, ...``.

    Returns
    -------
    Dataset
        ``X`` the array as saved (its numeric type kept); ``obs`` None.

    Notes
    -----
    The array is loaded into memory. Object arrays are refused (loading them would run pickled
    code).
    """
    path = Path(path)
    with file_errors(path, "a NumPy .npy file", broad=True), _objects_refused(path):
        _check_npy_sizes(path)
        M = np.load(path, allow_pickle=False)
    if not isinstance(M, np.ndarray):
        M.close()
        raise ValueError(f"{str(path)!r} is an .npz archive, not an .npy array; pass format='npz'.")
    M = _numeric_dense(M, path)
    sample_ids, names = names_for(path, M.shape, samples, features, ".npy")
    return Dataset(M, sample_ids, names)


_SPARSE_KEYS = {"format", "shape", "data"}


@register_reader("npz", suffixes=(".npz",))
def read_npz(path, *, samples=None, features=None):
    """NumPy .npz archive: a scipy.sparse save_npz matrix (read as CSR) or a dense array 'X'.

    Parameters
    ----------
    path : str or Path
        Either a ``scipy.sparse.save_npz`` file (recognised by its ``format``, ``shape`` and
        ``data`` arrays; any sparse layout, returned as CSR) or a ``numpy.savez`` archive with
        the matrix under ``X`` (or as its only array).
    samples, features : str, Path or sequence of str, optional
        As for :func:`read_npy`. Without them the names come from the arrays ``sample_ids`` and
        ``feature_names`` in the archive, else from ``<stem>.samples.txt`` /
        ``<stem>.features.txt`` beside it, else ``s0, ...`` / ``x0, ...``.

    Returns
    -------
    Dataset
        ``X`` a CSR matrix (sparse archives) or the dense array as saved; ``obs`` None.
    """
    path = Path(path)
    with file_errors(path, "a NumPy .npz archive", broad=True), _objects_refused(path):
        _check_npy_sizes(path)
        archive = np.load(path, allow_pickle=False)
    if isinstance(archive, np.ndarray):
        raise ValueError(f"{str(path)!r} is a single .npy array, not an .npz archive; pass format='npy'.")
    with file_errors(path, "a NumPy .npz archive", broad=True), _objects_refused(path):
        with archive:
            keys = set(archive.files)
            stored = tuple(archive[k] if k in keys else None for k in ("sample_ids", "feature_names"))
            if _SPARSE_KEYS <= keys:
                M = None
            elif "X" in keys or len(keys) == 1:
                M = archive["X" if "X" in keys else next(iter(keys))]
            else:
                M = False
    if M is False:
        raise ValueError(
            f"{str(path)!r} holds the arrays {sorted(keys)} but no matrix: save the matrix under "
            "the key 'X' (numpy.savez(path, X=X)) or with scipy.sparse.save_npz."
        )
    if M is None:
        with file_errors(path, "a scipy.sparse .npz file", broad=True):
            M = sp.load_npz(path)
        M = _as_csr(M, path, "a scipy.sparse .npz file")
        if M.dtype.kind not in "biuf":
            raise ValueError(f"{str(path)!r} holds values of type {M.dtype}, which are not real numbers.")
    else:
        M = _numeric_dense(M, path)
    file_names = tuple(None if a is None else a.ravel().tolist() for a in stored)
    sample_ids, names = names_for(path, M.shape, samples, features, ".npz", file_names)
    return Dataset(M, sample_ids, names)


# ---------------------------------------------------------------------------------------------
# Matrix Market


class _NewlineTerminated(io.RawIOBase):
    """A byte stream that ends with a newline even when its source does not.

    scipy's fast Matrix Market parser (scipy 1.12+) reads past the end of a file whose last
    line is cut inside a number and crashes the interpreter; ending every stream with a newline
    avoids that.
    """

    def __init__(self, raw):
        self._raw = raw
        self._last = b"\n"
        self._done = False

    def readable(self):
        return True

    def readinto(self, buffer):
        if self._done:
            return 0
        count = self._raw.readinto(buffer)
        if count:
            self._last = bytes(buffer[count - 1:count])
            return count
        self._done = True
        if self._last != b"\n":
            buffer[0:1] = b"\n"
            return 1
        return 0

    def close(self):
        self._raw.close()
        super().close()


def _mtx_claim(path):
    """What the size line of a Matrix Market file declares (text for messages), checked against
    the shape and, for an uncompressed file, against its size: every stored value takes at least
    two bytes of text (four for an entry of the coordinate layout), so a header that declares
    more cannot describe the file, and is refused before anything is allocated for it."""
    with open_binary(path, max_line=MAX_LINE_BYTES) as fh:
        banner = fh.readline().lower().split()
        line = fh.readline()
        while line.startswith(b"%") or (line and not line.strip()):
            line = fh.readline()
    fields = line.split()
    coordinate = len(banner) > 2 and banner[2] == b"coordinate"
    if len(fields) != (3 if coordinate else 2) or not all(f.isdigit() for f in fields):
        return "a size line that is not understood"  # scipy names the fault
    rows, cols, *rest = (int(f) for f in fields)
    values = rest[0] if coordinate else rows * cols
    claim = f"{rows:,} x {cols:,} with {values:,} stored values"
    if coordinate and values > rows * cols:
        raise ValueError(f"its header declares {claim}, more values than the matrix has cells")
    size = Path(replayable(path)).stat().st_size
    if detect(path) is None and size < values * (4 if coordinate else 2):
        raise ValueError(f"its header declares {claim}, but the whole file holds {size:,} "
                         "bytes: it is truncated or its header is damaged")
    return claim


@register_reader("mtx", suffixes=(".mtx",))
def read_mtx(path, *, samples=None, features=None, features_in_rows=False):
    """Matrix Market file (.mtx, .mtx.gz), read as CSR; optional sample and feature name files.

    Parameters
    ----------
    path : str or Path
        A coordinate (sparse) or array (dense) Matrix Market file, maybe compressed.
    samples, features : str, Path or sequence of str, optional
        The sample ids and feature names: files with one name per line (a line with tabs gives
        its first field, so 10x ``barcodes.tsv.gz`` and ``features.tsv.gz`` work as they are;
        name files may be compressed) or the names themselves. Default: ``<stem>.samples.txt``
        and ``<stem>.features.txt`` beside ``path`` (for ``counts.mtx.gz``:
        ``counts.samples.txt``), if present; else ``s0, ...`` and ``x0, ...``.
    features_in_rows : bool, default False
        If True the file holds features x samples (10x Genomics matrices do) and is transposed.
        ``samples`` and ``features`` always name the samples and the features.

    Returns
    -------
    Dataset
        ``X`` a CSR matrix (int64 for integer files, float64 for real ones); a file in the dense
        array layout gives a dense array; ``obs`` None.

    Examples
    --------
    A 10x Genomics folder (features x cells)::

        read("matrix.mtx.gz", features_in_rows=True,
             samples="barcodes.tsv.gz", features="features.tsv.gz")
    """
    path = Path(path)
    import scipy.io

    with file_errors(path, "a Matrix Market file", broad=True):
        with open_binary(path, max_line=MAX_LINE_BYTES) as fh:
            banner = fh.read(14)
        if banner.lower() != b"%%matrixmarket":  # checked here: scipy's own words vary by version
            raise ValueError("Missing banner '%%MatrixMarket' on its first line")
        claim = _mtx_claim(path)
        try:
            with io.BufferedReader(_NewlineTerminated(open_binary(path, max_line=MAX_LINE_BYTES)), 1 << 20) as stream:
                M = scipy.io.mmread(stream)
        except MemoryError:
            raise ValueError(f"its header declares {claim}, more than this machine's memory holds: the header is "
                             "damaged, or the matrix needs a larger machine") from None
    if sp.issparse(M):
        M = _as_csr(M.T if features_in_rows else M, path, "a Matrix Market file")
    else:
        M = np.ascontiguousarray(M.T if features_in_rows else M)
    if M.dtype.kind not in "biuf":
        raise ValueError(
            f"{str(path)!r} holds {M.dtype} values; only integer and real Matrix Market files are supported."
        )
    sample_ids, names = names_for(path, M.shape, samples, features, ".mtx")
    return Dataset(M, sample_ids, names)


# ---------------------------------------------------------------------------------------------
# AnnData


@register_reader("h5ad", suffixes=(".h5ad",))
def read_h5ad(path, *, layer=None):
    """AnnData .h5ad file: X (dense or sparse) with obs_names, var_names and obs as targets.

    Parameters
    ----------
    path : str or Path
    layer : str, optional
        Read this entry of ``adata.layers`` (for example raw ``"counts"``) instead of ``X``.

    Returns
    -------
    Dataset
        ``X`` as stored: dense arrays as they are, sparse matrices as CSR (CSC is converted);
        sample ids from ``obs_names``, feature names from ``var_names``; ``obs`` the AnnData
        ``obs`` table (categorical columns stay categorical), or None when it has no columns.

    Notes
    -----
    Needs ``anndata``. The file is read whole into memory (not in backed mode), so it must fit.
    """
    import pandas as pd

    path = Path(path)
    anndata = optional_module("anndata", "AnnData .h5ad files")
    with file_errors(path, "an AnnData .h5ad file", broad=True), warnings.catch_warnings():
        check_file(path)  # nothing that reads other files
        # duplicated names are checked below, with a message that says what to do
        warnings.filterwarnings("ignore", "(Observation|Variable) names are not unique", UserWarning)
        adata = anndata.read_h5ad(path)
    if layer is None:
        M = adata.X
        if M is None:
            raise ValueError(f"{str(path)!r} has no X matrix; pass layer= one of {sorted(adata.layers)}.")
    else:
        if layer not in adata.layers:
            raise ValueError(
                f"The 'layer' parameter must be one of {sorted(adata.layers)} for {str(path)!r}. "
                f"Got {layer!r} instead."
            )
        M = adata.layers[layer]
    if sp.issparse(M):
        M = _as_csr(M, path, "an AnnData .h5ad file" + (f" (layer {layer!r})" if layer else ""))
    else:
        M = np.asarray(M)
    M = _numeric_dense(M, path) if isinstance(M, np.ndarray) else M
    sample_ids = str_array(adata.obs_names)
    names = str_array(adata.var_names)
    check_unique(sample_ids, "sample ids (obs_names)", path)
    check_unique(names, "feature names (var_names)", path)
    obs = None
    if adata.obs.shape[1]:
        obs = adata.obs.copy()
        obs.index = pd.Index(sample_ids, name=adata.obs.index.name)
    return Dataset(M, sample_ids, names, obs)
