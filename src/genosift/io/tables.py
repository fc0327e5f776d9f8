"""Delimited tables, Parquet, NumPy, Matrix Market and AnnData files.

Each reader returns a :class:`~genosift.io.Dataset` with samples in rows. Decisions shared by
all of them:

- Sample ids and feature names are strings exactly as the file spells them (``"007"`` stays
  ``"007"``); a duplicated id or name is an error that lists the duplicates.
- Text tables (CSV, TSV, Parquet) give a dense float64 matrix. Binary arrays (``.npy``,
  ``.npz``, ``.mtx``, ``.h5ad``) keep the numeric type they were saved with, so a large int8
  genotype matrix is not blown up eight-fold; later steps accumulate in float64 whatever the
  input type. Sparse data stay sparse (CSR), never densified.
- Text files compressed with gzip, bzip2, xz or zstd are decompressed on the fly, with bounded
  memory (``.zst`` needs the ``zstandard`` package); the compression is told from the first
  bytes (see :mod:`genosift.io.compression`). A line longer than 64 MiB is an error.
- A damaged file (corrupt or truncated compressed stream, not the format its name says) raises a
  ``ValueError`` naming the file and the problem.

Example
-------
>>> import tempfile, pathlib
>>> from genosift.io import read
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = pathlib.Path(tmp) / "expr.csv"
...     _ = path.write_text("sample,geneA,geneB,label\\ns1,1.5,0,case\\ns2,2,7,control\\n")
...     data = read(path, keep=["label"])
>>> data.X
array([[1.5, 0. ],
       [2. , 7. ]])
>>> data.sample_ids.tolist(), data.feature_names.tolist(), data.obs["label"].tolist()
(['s1', 's2'], ['geneA', 'geneB'], ['case', 'control'])
"""
from __future__ import annotations

import csv
import io
import lzma
import warnings
import zipfile
import zlib
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._messages import FixError, plain
from .._sparse_check import check_sparse_matrix
from .._validation import _names_list, default_feature_names
from . import Dataset, register_reader
from .compression import MAX_LINE_BYTES, DamagedFile, LineTooLong, open_binary, open_text, suffix_compression

__all__ = ["read_csv", "read_tsv", "read_parquet", "read_npy", "read_npz", "read_mtx", "read_h5ad"]

_INSTALL = "pip install 'genosift[io]'"
# pandas 2's default float parser can be one unit in the last place off; pandas 3's is exact (and
# deprecates the option)
_EXACT_FLOATS = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


# ---------------------------------------------------------------------------------------------
# files, compression and error wrapping


def _optional(module, package, purpose):
    """Import an optional dependency, or raise an ImportError that says how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"Reading {purpose} needs the '{package}' package, which is not installed. "
            f"Install it with `pip install {package}` or `{_INSTALL}`."
        ) from None


def _open_binary(path):
    """``path`` opened for reading bytes, decompressed with bounded memory, lines bounded."""
    return open_binary(path, max_line=MAX_LINE_BYTES)


class _NulGuard(io.RawIOBase):
    """A byte stream that refuses NUL bytes: text tables hold none, and pandas' parser (before
    pandas 3) would silently cut a cell at one."""

    def __init__(self, raw, path, bar=None):
        self._raw = raw
        self._path = path
        self._bar = bar  # an engine.progress bar counting MiB read, or None

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self._raw.read(len(buffer))
        if b"\x00" in data:
            raise _NulByte(self._path)
        buffer[: len(data)] = data
        if self._bar is not None:
            self._bar.advance(len(data) / 2**20)
        return len(data)


def _reading(path):
    """A progress bar over the bytes of a table as they are read (MiB; of the file's size when it
    is not compressed, open-ended when it is)."""
    from .. import engine
    from .compression import detect

    try:
        total = path.stat().st_size / 2**20 if detect(path) is None else None
    except (OSError, ValueError):  # the reader itself names the problem
        total = None
    return engine.progress(f"Reading {path.name}", total=total, unit="MiB")


class _NulByte(ValueError):
    def __init__(self, path):
        super().__init__(f"{str(path)!r} holds a NUL byte, which no text table holds: the file is damaged "
                         "or binary. Check that this is the right file, or re-create it.")


def _open_text(path):
    return open_text(path)


def _damage_errors():
    errors = [OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, csv.Error]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errors)


class _ObjectsRefused(ValueError):
    """An array of Python objects was not loaded (its message says why); never re-wrapped."""


@contextmanager
def _file_errors(path, kind, *, broad=False):
    """Turn errors from decompressors and parsers into a ValueError that names the file.

    ``broad=True`` wraps every exception: for a call into a parsing library, whatever it raises
    on a damaged file (RuntimeError from HDF5, TokenError from a .npy header...) means the same.
    """
    try:
        yield
    except (FileNotFoundError, IsADirectoryError, PermissionError, ImportError, MemoryError, _ObjectsRefused,
            _NulByte, LineTooLong):
        raise
    except DamagedFile as exc:
        raise DamagedFile(exc.path, exc.kind, exc.reason, reader=kind) from None
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{str(path)!r} is not UTF-8 text (it holds the byte "
            f"{exc.object[exc.start:exc.start + 1]!r}). Re-save it as UTF-8, for example with "
            "`iconv -f latin1 -t utf-8`."
        ) from None
    except Exception as exc:
        if not broad and not isinstance(exc, _damage_errors()):
            raise
        reason = str(exc).strip().rstrip(".") or type(exc).__name__
        raise FixError(
            f"Cannot read {str(path)!r} as {kind}: {reason}. The file is damaged (truncated or "
            "corrupt) or is not in this format; check it, or pass {format} to choose another reader.",
            owner="read", format=FixError.ANY,
        ) from None


def _check_unique(names, what, path):
    counts = Counter(names)
    dups = [n for n, c in counts.items() if c > 1]
    if dups:
        shown = ", ".join(f"{str(n)!r} ({counts[n]} times)" for n in dups[:5])
        more = f" and {len(dups) - 5} more" if len(dups) > 5 else ""
        raise ValueError(
            f"{str(path)!r} has duplicated {what}: {shown}{more}. Each must appear once; remove or "
            "rename the duplicates."
        )


def _str_array(values):
    return np.array([str(v) for v in values], dtype=object)


def _default_ids(n):
    return np.array([f"s{i}" for i in range(n)], dtype=object)


def _name_list(source, *, what, expected, path, option):
    """Names from ``source``: a path to a one-name-per-line file, or a sequence of names.

    In a file, a line holding tabs gives its first field (so 10x ``barcodes.tsv.gz`` and
    ``features.tsv.gz`` work as they are); the file may be compressed.
    """
    if isinstance(source, (str, Path)):
        name_file = Path(source)
        if not name_file.is_file():
            raise FileNotFoundError(
                f"The {what} file {str(name_file)!r} (the '{option}' option for {str(path)!r}) does not exist."
            )
        with _file_errors(name_file, "a list of names"), _open_text(name_file) as fh:
            lines = fh.read().splitlines()
        names = [line.split("\t", 1)[0] for line in lines]
        if names and names[-1] == "" and len(names) == expected + 1:
            names.pop()
        empty = [i + 1 for i, n in enumerate(names) if n == ""]
        if empty:
            raise ValueError(
                f"The {what} file {str(name_file)!r} has empty names at lines {empty[:5]}. Give one "
                "name per line."
            )
        origin = f"the {what} file {str(name_file)!r}"
    else:
        names = [str(n) for n in source]
        origin = f"the '{option}' option"
    if len(names) != expected:
        raise ValueError(
            f"{origin[0].upper() + origin[1:]} gives {len(names)} names but {str(path)!r} has "
            f"{expected} {what}. Give exactly one name per {what[:-1] if what.endswith('s') else what}."
        )
    return np.array(names, dtype=object)


def _sidecar(path, suffix, kind):
    """``<stem>.<kind>.txt`` beside ``path``, where ``stem`` is the name without ``suffix`` (and
    any compression suffix); ``None`` when there is no such file."""
    name = Path(path).name
    if suffix_compression(name):
        name = name[: name.rindex(".")]
    if name.lower().endswith(suffix):
        name = name[: -len(suffix)]
    candidate = Path(path).with_name(f"{name}.{kind}.txt")
    return candidate if candidate.is_file() else None


def _names_for(path, shape, samples, features, suffix, file_names=(None, None)):
    """Sample ids and feature names: explicit option, else stored in the file, else sidecar
    files, else ``s0, s1, ...`` / ``x0, x1, ...``."""
    n, p = shape
    out = []
    for given, stored, kind, count, default, option in (
        (samples, file_names[0], "samples", n, _default_ids, "samples"),
        (features, file_names[1], "features", p, default_feature_names, "features"),
    ):
        what = "sample ids" if kind == "samples" else "feature names"
        if given is not None:
            names = _name_list(given, what=what, expected=count, path=path, option=option)
        elif stored is not None:
            names = _name_list(stored, what=what, expected=count, path=path, option=option)
        elif (side := _sidecar(path, suffix, kind)) is not None:
            names = _name_list(side, what=what, expected=count, path=path, option=option)
        else:
            names = np.asarray(default(count), dtype=object)
        _check_unique(names, what, path)
        out.append(names)
    return out


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
        raise _ObjectsRefused(
            f"{str(path)!r} holds arrays of Python objects; they are not loaded, because that would "
            "run pickled code. Save numbers (a.astype(float)) and names as text (np.array(names, dtype=str))."
        ) from None


def _numeric_dense(M, path):
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
# delimited text


def _position(header, column, option, path, where):
    """0-based position of ``column`` (a header name or a 0-based index) in ``header``."""
    if isinstance(column, (bool, np.bool_)) or not isinstance(column, (str, int, np.integer)):
        raise ValueError(
            f"The '{option}' parameter must be a column name (str) or a 0-based column position "
            f"(int). Got {column!r} instead."
        )
    if isinstance(column, str):
        hits = [j for j, h in enumerate(header) if h == column]
        if not hits and column.isdigit():  # "2" names no column: the 0-based position, as typed
            column = int(column)           # on the command line
    if isinstance(column, str):
        if not hits:
            raise FixError(
                f"{str(path)!r} has no column named {column!r} (the {{{option}}} option); {where} "
                f"names {_names_list(list(header))}. Check the spelling, or give a 0-based position.",
                owner="read_table", **{option: FixError.ANY},
            )
        if len(hits) > 1:
            raise FixError(
                f"{str(path)!r} has {len(hits)} columns named {column!r} (positions {hits[:5]}); "
                f"give the {{{option}}} option a 0-based position instead.",
                owner="read_table", **{option: FixError.ANY},
            )
        return hits[0]
    if not 0 <= int(column) < len(header):
        raise FixError(
            f"The {{{option}}} option must be a column name or a 0-based column position in [0, {len(header) - 1}] "
            f"for {str(path)!r}. Got {int(column)} instead.",
            owner="read_table", **{option: FixError.ANY},
        )
    return int(column)


def _records(path, sep, after_line):
    """``(line, fields)`` for every non-blank record after physical line ``after_line``."""
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep)
        for fields in reader:
            if reader.line_num > after_line and fields:
                yield reader.line_num, fields


def _head(path, sep):
    """The header fields and its line number, and the first data record (or ``None``)."""
    with _file_errors(path, "a delimited table"):
        records = _records(path, sep, 0)
        head = next(records, None)
        first = next(records, None) if head is not None else None
        records.close()
    return head, first


def _records_through(path, sep, line):
    """How many records end at or before physical ``line``, blank lines included: what pandas'
    ``skiprows`` counts (a quoted field with line breaks is one record over several lines)."""
    count = 0
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep)
        for _ in reader:
            count += 1
            if reader.line_num >= line:
                break
    return count


def _line_of(path, sep, header_line, rows):
    """Physical line numbers of the 0-based data ``rows`` (for messages only)."""
    wanted, found = set(rows), {}
    with _file_errors(path, "a delimited table"):
        for r, (line, _) in enumerate(_records(path, sep, header_line)):
            if r in wanted:
                found[r] = line
                if len(found) == len(wanted):
                    break
    return [found.get(r, "?") for r in rows]


def _ragged(path, sep, header_line, n, rows=None):
    """The first data record (among 0-based ``rows`` if given) without ``n`` fields."""
    last = max(rows) if rows is not None else None
    with _file_errors(path, "a delimited table"):
        for r, (line, fields) in enumerate(_records(path, sep, header_line)):
            if (rows is None or r in rows) and len(fields) != n:
                return line, len(fields)
            if last is not None and r >= last:
                break
    return None


def _lines(numbers, total, word="line"):
    """``line 3`` or ``lines 3, 8 and 2 more``."""
    shown = ", ".join(str(x) for x in numbers)
    more = f" and {total - len(numbers)} more" if total > len(numbers) else ""
    return f"{word}{'s' if total > 1 else ''} {shown}{more}"


def _ragged_error(path, sep, line, got, header_line, n):
    hint = ""
    if got == n + 1:
        hint = (
            " If every row has one field more than the header, the header lacks a name for the id "
            "column (R's write.table writes such files): add one."
        )
    return FixError(
        f"{str(path)!r} line {line} has {got} fields but the header (line {header_line}) has {n}, "
        f"splitting on {sep!r}. Every row needs one value per column: fix that row, or pass {{sep}} if "
        f"the separator is wrong.{hint}",
        owner="read_table", sep=FixError.ANY,
    )


def _read_delimited(path, *, sep, id_column, features_in_rows, keep):
    path = Path(path)
    if not isinstance(sep, str) or len(sep) != 1 or sep in "\"\r\n":
        raise ValueError(
            f"The 'sep' parameter must be a single character such as ',' or '\\t'. Got {sep!r} instead."
        )
    keep = [keep] if isinstance(keep, (str, int)) else list(keep or ())
    if features_in_rows and keep:
        raise FixError(
            f"{{keep}} selects per-sample columns, but with {{features_in_rows}} every column of "
            f"{str(path)!r} other than the id column is a sample. Leave out {{keep}}, or put "
            "per-sample columns in a separate metadata table.",
            owner="read_table", keep=FixError.ANY, features_in_rows=True,
        )
    head, first = _head(path, sep)
    if head is None:
        raise ValueError(
            f"{str(path)!r} is empty. A table needs a header line and at least one data row."
        )
    header_line, header = head
    n = len(header)
    if n < 2:
        raise FixError(
            f"{str(path)!r} has a single column when split on {sep!r} (header at line {header_line}). "
            "A table needs an id column and at least one feature column; pass {sep} if the file uses "
            "another separator.",
            owner="read_table", sep=FixError.ANY,
        )
    id_pos = _position(header, 0 if id_column is None else id_column, "id_column", path,
                       f"the header (line {header_line})")
    keep_pos = [_position(header, k, "keep", path, f"the header (line {header_line})") for k in keep]
    if id_pos in keep_pos:
        raise FixError(
            f"Column {header[id_pos]!r} of {str(path)!r} is the id column; it cannot also be in {{keep}}. "
            "The sample ids are always kept (they index obs).",
            owner="read_table", keep=FixError.ANY,
        )
    keep_pos = list(dict.fromkeys(keep_pos))
    others = [h for j, h in enumerate(header) if j != id_pos]
    label = "sample ids (in the header)" if features_in_rows else "column names"
    _check_unique(others, label, path)
    if "" in others:
        j = next(j for j, h in enumerate(header) if h == "" and j != id_pos)
        raise ValueError(
            f"{str(path)!r} column {j + 1} has no name in the header (line {header_line}). Name every "
            "column; only the id column may be unnamed."
        )
    if first is None:
        raise ValueError(
            f"{str(path)!r} has a header (line {header_line}) but no data rows."
        )
    if len(first[1]) != n:
        raise _ragged_error(path, sep, first[0], len(first[1]), header_line, n)

    columns = list(range(n))
    index_cols = [id_pos, *keep_pos]  # as the index, they stay out of the numeric block
    frame = None
    with _file_errors(path, "a delimited table", broad=True):
        try:
            with _open_binary(path) as fh, _reading(path) as bar:
                frame = pd.read_csv(
                    io.BufferedReader(_NulGuard(fh, path, bar), 1 << 20), sep=sep, header=None, names=columns,
                    index_col=index_cols, skiprows=_records_through(path, sep, header_line),
                    dtype={id_pos: str}, low_memory=False, encoding="utf-8", **_EXACT_FLOATS,
                )
        except pd.errors.ParserError as exc:
            parser_message = str(exc).strip()
    if frame is None:
        bad = _ragged(path, sep, header_line, n)
        if bad is not None:
            raise _ragged_error(path, sep, bad[0], bad[1], header_line, n)
        raise ValueError(f"Cannot parse {str(path)!r} as a table split on {sep!r}: {parser_message}.")

    def column(j):
        if j in index_cols:
            return pd.Series(frame.index.get_level_values(index_cols.index(j)))
        return frame[j]

    short = np.flatnonzero(column(n - 1).isna().to_numpy())
    if short.size:  # a row with too few fields ends in missing values: count its fields
        bad = _ragged(path, sep, header_line, n, rows=set(short.tolist()))
        if bad is not None:
            raise _ragged_error(path, sep, bad[0], bad[1], header_line, n)

    ids = column(id_pos)
    if ids.isna().any():  # "NA", "null"... are real ids here: read that column without NA parsing
        with _file_errors(path, "a delimited table", broad=True), _open_binary(path) as fh:
            ids = pd.read_csv(
                fh, sep=sep, header=None, names=columns, index_col=False, skiprows=header_line,
                usecols=[id_pos], dtype=str, na_filter=False, encoding="utf-8",
            )[id_pos]
        empty = np.flatnonzero((ids == "").to_numpy())
        if empty.size:
            what = "feature name" if features_in_rows else "sample id"
            raise ValueError(
                f"{str(path)!r} has an empty {what} (column {header[id_pos]!r}) at "
                f"{_lines(_line_of(path, sep, header_line, empty[:5].tolist()), len(empty))}. "
                f"Every row needs a {what}."
            )
    row_names = ids.to_numpy(dtype=object)
    _check_unique(row_names, "feature names" if features_in_rows else "sample ids", path)

    feat = list(frame.columns)
    if not feat:
        raise FixError(
            f"{str(path)!r} has no feature columns: every column is the id column or in {{keep}}.",
            owner="read_table", keep=FixError.ANY,
        )

    def locate(rows):
        return _line_of(path, sep, header_line, rows)

    M = _numeric_block(frame, header, path, locate, features_in_rows=features_in_rows,
                       where="line", keep_hint=not features_in_rows)
    col_names = np.array([header[j] for j in feat], dtype=object)
    if features_in_rows:
        return Dataset(np.ascontiguousarray(M.T), col_names, row_names)
    obs = None
    if keep_pos:
        obs = pd.DataFrame(
            {header[j]: column(j).to_numpy() for j in keep_pos},
            index=pd.Index(row_names, name=header[id_pos] or None),
        )
    return Dataset(M, row_names, col_names, obs)


def _number_or_nan(value):
    """A cell as pandas reads a number, NaN where it is none or beyond float64 (then reported)."""
    try:
        return float(pd.to_numeric(value, errors="coerce"))
    except OverflowError:
        return np.nan


def _numeric_block(frame, header, path, locate, *, features_in_rows, where, keep_hint):
    """All columns of ``frame`` (labelled by their position in ``header``) as a float64 matrix.

    A column that pandas left as text is parsed as numbers; if a cell is not a number, the error
    names the first such cell (line or row, column, value) and lists the text columns.
    """
    kinds = np.array([getattr(t, "kind", "O") for t in frame.dtypes])
    textual = [frame.columns[i] for i in np.flatnonzero(~np.isin(kinds, list("biuf")))]
    converted, bad_columns, first_bad = {}, [], None
    for j in textual:
        col = frame[j]
        try:
            values = pd.to_numeric(col, errors="coerce")
        except OverflowError:  # pandas raises, coercing or not, on an integer beyond float64
            values = col.map(_number_or_nan).astype(np.float64)
        bad = np.flatnonzero((values.isna() & col.notna()).to_numpy())
        if bad.size:
            bad_columns.append(header[j])
            first_bad = first_bad or (j, int(bad[0]))
            if len(bad_columns) > 10:
                break
        converted[j] = values.astype(np.float64)
    if first_bad:
        j, r = first_bad
        (at,) = locate([r])
        role = "sample" if features_in_rows else "column"
        listed = bad_columns[:10]
        more = " and more" if len(bad_columns) > 10 else ""
        if keep_hint:
            them = "them as per-sample columns" if len(listed) > 1 else "it as a per-sample column"
            fix = f"Pass {{keep}} to keep {them}, or fix the values."
        else:
            fix = "Fix the values."
        text = (
            f"{str(path)!r} {where} {at}, {role} {header[j]!r}: {plain(frame[j].iloc[r])} is not a number. "
            f"Every column other than the id column{' and the kept columns' if keep_hint else ''} must "
            f"hold numbers (empty cells and NA are read as missing); text found in "
            f"{_names_list(listed, limit=10)}{more}. "
        )
        raise FixError(text + fix, owner="read_table", **({"keep": [str(c) for c in listed]} if keep_hint else {}))
    if converted:  # text columns that hold numbers only: use their parsed values
        frame = frame.copy()
        for j, values in converted.items():
            frame[j] = values
    return frame.to_numpy(dtype=np.float64, na_value=np.nan)


_DELIMITED_DOC = """
    Parameters
    ----------
    path : str or Path
        The table; ``.gz``, ``.bz2``, ``.xz`` and ``.zst`` files are decompressed on the fly
        (``.zst`` needs the ``zstandard`` package).
    sep : str, default {sep!r}
        The one-character field separator. Quoting follows the CSV convention (``"a,b"``).
    id_column : str or int, optional
        The column holding the sample ids (or, with ``features_in_rows=True``, the feature
        names), as a header name or a 0-based position. Default: the first column, always, so
        a table without an id column loses its first column to the ids; there is no guessing
        from the values. Ids are read as text exactly as written (``NA`` and ``007`` included).
    features_in_rows : bool, default False
        If True, rows are features and the header holds the sample ids (after the id column's
        own header cell); the matrix is transposed to samples in rows.
    keep : str or sequence of str or int, default ()
        Non-feature columns to keep, as names or 0-based positions, in ``obs`` (for example the
        target and group columns when the labels sit in the data table). Their types are
        inferred (numbers or text). Only for samples in rows.

    Returns
    -------
    Dataset
        ``X`` a dense float64 array (integers above 2**53 lose precision); ``obs`` a
        DataFrame indexed by sample id with the ``keep`` columns, or None.

    Notes
    -----
    The first non-blank line is the header; blank lines are skipped; line numbers in messages
    count every line of the (decompressed) file from 1. Every column other than the id and
    ``keep`` columns must hold numbers: empty cells and ``NA``, ``NaN``, ``null``... are read as
    missing (NaN); ``True``/``False`` as 1/0; any other text is a ``ValueError`` that names the
    line, the column and the value. A row with a different number of fields than the header, an
    empty or duplicated id and a duplicated or empty column name are errors too.

    Memory and speed: the table is parsed whole by pandas' C parser, then copied into the
    float64 matrix, so reading peaks at about three times the final ``8 * n_samples *
    n_features`` bytes (a 652 x 90,846 table of 238 MB: 474 MB matrix, 1.6 GB peak, about 6 s
    with pandas 3; pandas 2 needs its slower exact float parser, about 11 s). A file whose last
    column has missing cells is scanned once more to tell empty cells from short rows.
"""


@register_reader("csv", suffixes=(".csv",))
def read_csv(path, *, sep=",", id_column=None, features_in_rows=False, keep=()):
    """Comma-separated table with a header; samples in rows (or features, with features_in_rows)."""
    return _read_delimited(path, sep=sep, id_column=id_column, features_in_rows=features_in_rows, keep=keep)


@register_reader("tsv", suffixes=(".tsv", ".tab", ".txt"))
def read_tsv(path, *, sep="\t", id_column=None, features_in_rows=False, keep=()):
    """Tab-separated table with a header (.tsv, .tab, .txt); as read_csv with sep='\\t'."""
    return _read_delimited(path, sep=sep, id_column=id_column, features_in_rows=features_in_rows, keep=keep)


@register_reader("rtab", suffixes=(".rtab",))
def read_rtab(path, *, sep="\t", id_column=None):
    """Gene presence/absence of Panaroo and Roary (.Rtab): genes in rows, samples in columns.

    The first column names the genes (``Gene``; Panaroo joins merged genes with ``~~~``) and
    every other column is a sample, 1 where it carries the gene and 0 where not. Read as
    ``read_tsv(path, features_in_rows=True)``: samples become rows, genes features.
    """
    return _read_delimited(path, sep=sep, id_column=id_column, features_in_rows=True, keep=())


if read_csv.__doc__ and read_tsv.__doc__:  # absent under python -OO
    read_csv.__doc__ += _DELIMITED_DOC.format(sep=",")
    read_tsv.__doc__ += _DELIMITED_DOC.format(sep="\t")


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
    path = Path(path)
    pq = _optional("pyarrow.parquet", "pyarrow", "Parquet files")
    with _file_errors(path, "a Parquet file", broad=True):
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
    id_pos = _position(header, id_column, "id_column", path, where)
    keep_pos = list(dict.fromkeys(_position(header, k, "keep", path, where) for k in keep))
    if id_pos in keep_pos:
        raise FixError(
            f"Column {header[id_pos]!r} of {str(path)!r} is the id column; it cannot also be in {{keep}}.",
            owner="read_table", keep=FixError.ANY,
        )
    _check_unique([h for j, h in enumerate(header) if j != id_pos], "column names", path)
    frame.columns = range(n)
    ids = frame[id_pos]
    if ids.isna().any():
        missing = np.flatnonzero(ids.isna().to_numpy()) + 1
        raise ValueError(
            f"{str(path)!r} has missing sample ids (column {header[id_pos]!r}) at "
            f"{_lines(missing[:5].tolist(), missing.size, 'row')}. Every row needs a sample id."
        )
    sample_ids = _str_array(ids)
    _check_unique(sample_ids, "sample ids", path)
    feat = [j for j in range(n) if j != id_pos and j not in keep_pos]
    if not feat:
        raise FixError(f"{str(path)!r} has no feature columns: every column is the id column or in {{keep}}.",
                       owner="read_table", keep=FixError.ANY)
    M = _numeric_block(frame[feat], header, path, lambda rows: [r + 1 for r in rows],
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
    with _file_errors(path, "a NumPy .npy file", broad=True), _objects_refused(path):
        M = np.load(path, allow_pickle=False)
    if not isinstance(M, np.ndarray):
        M.close()
        raise ValueError(f"{str(path)!r} is an .npz archive, not an .npy array; pass format='npz'.")
    M = _numeric_dense(M, path)
    sample_ids, names = _names_for(path, M.shape, samples, features, ".npy")
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
    with _file_errors(path, "a NumPy .npz archive", broad=True), _objects_refused(path):
        archive = np.load(path, allow_pickle=False)
    if isinstance(archive, np.ndarray):
        raise ValueError(f"{str(path)!r} is a single .npy array, not an .npz archive; pass format='npy'.")
    with _file_errors(path, "a NumPy .npz archive", broad=True), _objects_refused(path):
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
        with _file_errors(path, "a scipy.sparse .npz file", broad=True):
            M = sp.load_npz(path)
        M = _as_csr(M, path, "a scipy.sparse .npz file")
        if M.dtype.kind not in "biuf":
            raise ValueError(f"{str(path)!r} holds values of type {M.dtype}, which are not real numbers.")
    else:
        M = _numeric_dense(M, path)
    file_names = tuple(None if a is None else a.ravel().tolist() for a in stored)
    sample_ids, names = _names_for(path, M.shape, samples, features, ".npz", file_names)
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

    with _file_errors(path, "a Matrix Market file", broad=True):
        with _open_binary(path) as fh:
            banner = fh.read(14)
        if banner.lower() != b"%%matrixmarket":  # checked here: scipy's own words vary by version
            raise ValueError("Missing banner '%%MatrixMarket' on its first line")
        with io.BufferedReader(_NewlineTerminated(_open_binary(path)), 1 << 20) as stream:
            M = scipy.io.mmread(stream)
    if sp.issparse(M):
        M = _as_csr(M.T if features_in_rows else M, path, "a Matrix Market file")
    else:
        M = np.ascontiguousarray(M.T if features_in_rows else M)
    if M.dtype.kind not in "biuf":
        raise ValueError(
            f"{str(path)!r} holds {M.dtype} values; only integer and real Matrix Market files are supported."
        )
    sample_ids, names = _names_for(path, M.shape, samples, features, ".mtx")
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
    path = Path(path)
    anndata = _optional("anndata", "anndata", "AnnData .h5ad files")
    with _file_errors(path, "an AnnData .h5ad file", broad=True), warnings.catch_warnings():
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
    sample_ids = _str_array(adata.obs_names)
    names = _str_array(adata.var_names)
    _check_unique(sample_ids, "sample ids (obs_names)", path)
    _check_unique(names, "feature names (var_names)", path)
    obs = None
    if adata.obs.shape[1]:
        obs = adata.obs.copy()
        obs.index = pd.Index(sample_ids, name=adata.obs.index.name)
    return Dataset(M, sample_ids, names, obs)
