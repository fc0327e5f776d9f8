"""Delimited text tables: CSV, TSV and the gene presence/absence tables (.Rtab) of Panaroo and Roary.

Each reader returns a :class:`~genosift.io.Dataset` with samples in rows (shared decisions: see
:mod:`genosift.io.binary`). Sample ids and feature names are strings exactly as the file spells
them; the matrix is dense float64. Files compressed with gzip, bzip2, xz or zstd are decompressed
on the fly with bounded memory (``.zst`` needs the ``zstandard`` package; the compression is told
from the first bytes, see :mod:`genosift.io.compression`). A line longer than 64 MiB, a NUL byte,
a row with another number of fields than the header and a damaged file raise a ``ValueError``
naming the file and the line.

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
import operator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.messages import FixError, plain
from ..core.validation import EXACT_INTEGERS
from .compression import MAX_LINE_BYTES, LineTooLong, open_binary, open_text
from .reading import (
    NulByte,
    check_unique,
    column_position,
    exact_floats,
    file_errors,
    numbered,
    numeric_block,
)
from .registry import Dataset, register_reader

__all__ = ["read_csv", "read_rtab", "read_tsv"]

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
            raise NulByte(self._path)
        buffer[: len(data)] = data
        if self._bar is not None:
            self._bar.advance(len(data) / 2**20)
        return len(data)


def reading_progress(path):
    """A progress bar over the bytes of a table as they are read (MiB; of the file's size when it
    is not compressed, open-ended when it is)."""
    from ..core import engine
    from .compression import detect, replayable

    try:
        total = Path(replayable(path)).stat().st_size / 2**20 if detect(path) is None else None
    except (OSError, ValueError):  # the reader itself names the problem
        total = None
    return engine.progress(f"Reading {path.name}", total=total, unit="MiB")


#: Tables with more columns than this are parsed a row at a time (``_wide_table``); pandas' parser
#: keeps objects per column, which costs 2.7 GB and 33 s for 8 rows of a million columns (24 MB).
WIDE_COLUMNS = 4096
#: The cells pandas' parser reads as missing by default (its documented ``na_values``).
NA_CELLS = frozenset(
    b"|#N/A|#N/A N/A|#NA|-1.#IND|-1.#QNAN|-NaN|-nan|1.#IND|1.#QNAN|<NA>|N/A|NA|NULL|NaN|None|n/a|nan|null".split(b"|"))


def _wide_table(path, sep, header_line, n, id_pos, keep_pos):
    """The data rows of a wide table as ``(lines, ids, kept, M)``: physical line numbers, ids and
    kept cells as text, the other columns as a float64 matrix, read a line at a time. None when a
    row holds anything but plain numbers and missing cells (quotes, booleans, text, integers
    beyond 2**53, -0 written as an integer, numbers beyond float64): pandas then reads the table,
    so that the two readers give the same values and the same messages."""
    sepb = sep.encode()
    others = [j for j in range(n) if j != id_pos and j not in keep_pos]
    plain_layout = id_pos == 0 and not keep_pos
    take = None if plain_layout else operator.itemgetter(*others)
    lines, ids, kept, rows = [], [], [], []
    with file_errors(path, "a delimited table"), open_binary(path, max_line=MAX_LINE_BYTES) as fh, \
            reading_progress(path) as bar:
        for number, raw in enumerate(fh, 1):
            bar.advance(len(raw) / 2**20)
            if number <= header_line:
                continue
            line = raw.rstrip(b"\n")
            line = line[:-1] if line.endswith(b"\r") else line
            if not line:
                continue
            if b"\x00" in line:
                raise NulByte(path)
            if b'"' in line or b"\r" in line:
                return None
            fields = line.split(sepb)
            if len(fields) != n:
                raise _ragged_error(path, sep, number, len(fields), header_line, n)
            cells = np.array(fields[1:] if plain_layout else take(fields))
            numbers = line[len(fields[0]) + 1:] if plain_layout else b"".join(cells.tolist())
            if b"_" in numbers:  # 1_000 is a number to numpy, not to pandas
                return None
            missing = np.isin(cells, list(NA_CELLS))
            if missing.any():  # (np.where widens the cells' type to hold b"nan")
                cells = np.where(missing, b"nan", cells)
            try:
                values = cells.astype(np.float64)
            except ValueError:
                return None
            odd = ~np.isfinite(values) & ~missing
            if odd.any() and not all(c.strip().lstrip(b"+-").lower() in (b"inf", b"infinity") for c in cells[odd]):
                return None
            big = np.flatnonzero((np.abs(values) >= EXACT_INTEGERS) & np.isfinite(values))
            if any(_integer_text(c) for c in cells[big]):
                return None
            zero = np.flatnonzero((values == 0) & np.signbit(values))
            if any(_integer_text(c) for c in cells[zero]):
                return None
            lines.append(number)
            ids.append(fields[id_pos])
            kept.append([fields[j] for j in keep_pos])
            rows.append(values)
    if not rows:
        return None
    return lines, ids, kept, np.vstack(rows)


def _empty_id_error(path, what, column, lines, count):
    """The error for ``count`` rows without an id in ``column``, the first at physical ``lines``."""
    return ValueError(f"{str(path)!r} has an empty {what} (column {column!r}) at {numbered(lines, count)}. "
                      f"Every row needs a {what}.")


def _integer_text(cell):
    """Whether the cell is written as an integer (pandas then reads its column as integers)."""
    body = cell.strip().lstrip(b"+-")
    return body.isdigit()


def _wide_dataset(wide, layout):
    """The Dataset of a table read by ``_wide_table``: ids checked as ``_read_delimited`` checks
    them, kept columns typed by pandas as it would type them in the whole table."""
    import pandas as pd

    path, sep, header, id_pos = layout.path, layout.sep, layout.header, layout.id_pos
    keep_pos, features_in_rows = layout.keep_pos, layout.features_in_rows
    lines, ids, kept, M = wide
    what = "feature name" if features_in_rows else "sample id"
    with file_errors(path, "a delimited table"):  # names the byte that is not UTF-8
        row_names = np.array([i.decode("utf-8") for i in ids], dtype=object)
    empty = [line for line, i in zip(lines, row_names) if i == ""]
    if empty:
        raise _empty_id_error(path, what, header[id_pos], empty[:5], len(empty))
    check_unique(row_names, "feature names" if features_in_rows else "sample ids", path)
    col_names = np.array([header[j] for j in range(len(header)) if j != id_pos and j not in keep_pos], dtype=object)
    if features_in_rows:
        return Dataset(np.ascontiguousarray(M.T), col_names, row_names)
    obs = None
    if keep_pos:
        with file_errors(path, "a delimited table"):
            text = b"\n".join(sep.encode().join(cells) for cells in kept).decode("utf-8")
        frame = pd.read_csv(io.StringIO(text), sep=sep, header=None, names=keep_pos, low_memory=False, **exact_floats())
        obs = pd.DataFrame({header[j]: frame[j].to_numpy() for j in keep_pos},
                           index=pd.Index(row_names, name=header[id_pos] or None))
    return Dataset(M, row_names, col_names, obs)


def _records(path, sep, after_line):
    """``(line, fields)`` for every non-blank record after physical line ``after_line``."""
    with open_text(path, max_line=MAX_LINE_BYTES) as fh:
        reader = csv.reader(fh, delimiter=sep)
        for fields in reader:
            if reader.line_num > after_line and fields:
                yield reader.line_num, fields


def _head(path, sep):
    """The header fields and its line number, and the first data record (or ``None``)."""
    with file_errors(path, "a delimited table"):
        records = _records(path, sep, 0)
        head = next(records, None)
        first = next(records, None) if head is not None else None
        records.close()
    return head, first


def _records_through(path, sep, line):
    """How many records end at or before physical ``line``, blank lines included: what pandas'
    ``skiprows`` counts (a quoted field with line breaks is one record over several lines)."""
    count = 0
    with open_text(path, max_line=MAX_LINE_BYTES) as fh:
        reader = csv.reader(fh, delimiter=sep)
        for _ in reader:
            count += 1
            if reader.line_num >= line:
                break
    return count


def _line_of(path, sep, header_line, rows):
    """Physical line numbers of the 0-based data ``rows`` (for messages only)."""
    wanted, found = set(rows), {}
    with file_errors(path, "a delimited table"):
        for r, (line, _) in enumerate(_records(path, sep, header_line)):
            if r in wanted:
                found[r] = line
                if len(found) == len(wanted):
                    break
    return [found.get(r, "?") for r in rows]


def _ragged(path, sep, header_line, n, rows=None):
    """The first data record (among 0-based ``rows`` if given) without ``n`` fields."""
    last = max(rows) if rows is not None else None
    with file_errors(path, "a delimited table"):
        for r, (line, fields) in enumerate(_records(path, sep, header_line)):
            if (rows is None or r in rows) and len(fields) != n:
                return line, len(fields)
            if last is not None and r >= last:
                break
    return None


def _ragged_error(path, sep, line, got, header_line, n):
    """The error for a row of ``got`` fields under a header of ``n``."""
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


@dataclass(frozen=True)
class _Layout:
    """Where things are in a delimited table: its ``header`` (at physical line ``header_line``),
    split on ``sep``; the positions of the id column and of the columns kept as ``obs``; and
    whether features are in rows (the ids are then feature names, the header's names samples)."""

    path: Path
    sep: str
    header_line: int
    header: list
    id_pos: int
    keep_pos: list
    features_in_rows: bool

    @property
    def n(self):
        """The number of fields of every record."""
        return len(self.header)

    @property
    def index_cols(self):
        """The columns read as the index: they stay out of the numeric block."""
        return [self.id_pos, *self.keep_pos]

    def locate(self, rows):
        """The physical lines of data ``rows`` (numbers from 0)."""
        return _line_of(self.path, self.sep, self.header_line, rows)


def _read_delimited(path, *, sep, id_column, features_in_rows, keep):
    """What read_csv, read_tsv and read_rtab do (see ``_DELIMITED_DOC``)."""
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
    layout, first = _layout(path, sep, id_column, features_in_rows, keep)
    if first is None:
        raise ValueError(
            f"{str(path)!r} has a header (line {layout.header_line}) but no data rows."
        )
    if len(first[1]) != layout.n:
        raise _ragged_error(path, sep, first[0], len(first[1]), layout.header_line, layout.n)
    if layout.n > WIDE_COLUMNS:  # pandas keeps an object per column: a wide table is parsed a row at a time
        wide = _wide_table(path, sep, layout.header_line, layout.n, layout.id_pos, layout.keep_pos)
        if wide is not None:
            return _wide_dataset(wide, layout)
    frame = _parsed(layout)
    short = np.flatnonzero(_column(frame, layout.n - 1, layout).isna().to_numpy())
    if short.size:  # a row with too few fields ends in missing values: count its fields
        bad = _ragged(path, sep, layout.header_line, layout.n, rows=set(short.tolist()))
        if bad is not None:
            raise _ragged_error(path, sep, bad[0], bad[1], layout.header_line, layout.n)
    return _frame_dataset(frame, layout, _row_names(frame, layout))


def _layout(path, sep, id_column, features_in_rows, keep):
    """The ``_Layout`` of the header of ``path`` (its names checked) and its first record
    (``(line, fields)``, None without one)."""
    try:
        head, first = _head(path, sep)
    except LineTooLong as exc:
        if features_in_rows:
            raise
        raise FixError(
            f"{exc} If it is a table of very many columns (over 64 MiB a line), write it with features in rows, "
            "one line per feature, and read it with {features_in_rows}; or keep it as a store or a NumPy file.",
            owner="read_table", features_in_rows=True) from None
    if head is None:
        raise ValueError(
            f"{str(path)!r} is empty. A table needs a header line and at least one data row."
        )
    header_line, header = head
    if len(header) < 2:
        raise FixError(
            f"{str(path)!r} has a single column when split on {sep!r} (header at line {header_line}). "
            "A table needs an id column and at least one feature column; pass {sep} if the file uses "
            "another separator.",
            owner="read_table", sep=FixError.ANY,
        )
    id_pos = column_position(header, 0 if id_column is None else id_column, "id_column", path,
                       f"the header (line {header_line})")
    keep_pos = [column_position(header, k, "keep", path, f"the header (line {header_line})") for k in keep]
    if id_pos in keep_pos:
        raise FixError(
            f"Column {header[id_pos]!r} of {str(path)!r} is the id column; it cannot also be in {{keep}}. "
            "The sample ids are always kept (they index obs).",
            owner="read_table", keep=FixError.ANY,
        )
    keep_pos = list(dict.fromkeys(keep_pos))
    others = [h for j, h in enumerate(header) if j != id_pos]
    label = "sample ids (in the header)" if features_in_rows else "column names"
    check_unique(others, label, path)
    if "" in others:
        j = next(j for j, h in enumerate(header) if h == "" and j != id_pos)
        raise ValueError(
            f"{str(path)!r} column {j + 1} has no name in the header (line {header_line}). Name every "
            "column; only the id column may be unnamed."
        )
    return _Layout(path, sep, header_line, header, id_pos, keep_pos, features_in_rows), first


def _parsed(layout):
    """The records of the table as pandas parses them, the id and kept columns as the index; an
    error naming the line of a row with another number of fields."""
    import pandas as pd

    path, sep, n = layout.path, layout.sep, layout.n
    frame = None
    with file_errors(path, "a delimited table", broad=True):
        try:
            with open_binary(path, max_line=MAX_LINE_BYTES) as fh, reading_progress(path) as bar:
                frame = pd.read_csv(
                    io.BufferedReader(_NulGuard(fh, path, bar), 1 << 20), sep=sep, header=None, names=list(range(n)),
                    index_col=layout.index_cols, skiprows=_records_through(path, sep, layout.header_line),
                    dtype={layout.id_pos: str}, low_memory=False, encoding="utf-8", **exact_floats(),
                )
        except pd.errors.ParserError as exc:
            parser_message = str(exc).strip()
    if frame is None:
        bad = _ragged(path, sep, layout.header_line, n)
        if bad is not None:
            raise _ragged_error(path, sep, bad[0], bad[1], layout.header_line, n)
        raise ValueError(f"Cannot parse {str(path)!r} as a table split on {sep!r}: {parser_message}.")
    return frame


def _column(frame, j, layout):
    """Column ``j`` of the table parsed into ``frame``, an index level or a column."""
    import pandas as pd

    if j in layout.index_cols:  # a level by its name, the column's position (a MultiIndex takes a number for a name)
        index = frame.index
        return pd.Series(index if index.nlevels == 1 else index.get_level_values(j))
    return frame[j]


def _row_names(frame, layout):
    """The ids of the rows, checked present and unique ("NA", "null"... are ids: read again
    without NA parsing)."""
    import pandas as pd

    path, header, id_pos = layout.path, layout.header, layout.id_pos
    ids = _column(frame, id_pos, layout)
    if ids.isna().any():  # "NA", "null"... are real ids here: read that column without NA parsing
        with file_errors(path, "a delimited table", broad=True), open_binary(path, max_line=MAX_LINE_BYTES) as fh:
            ids = pd.read_csv(
                fh, sep=layout.sep, header=None, names=list(range(layout.n)), index_col=False,
                skiprows=layout.header_line, usecols=[id_pos], dtype=str, na_filter=False, encoding="utf-8",
            )[id_pos]
        empty = np.flatnonzero((ids == "").to_numpy())
        if empty.size:
            raise _empty_id_error(path, "feature name" if layout.features_in_rows else "sample id", header[id_pos],
                                  layout.locate(empty[:5].tolist()), len(empty))
    row_names = ids.to_numpy(dtype=object)
    check_unique(row_names, "feature names" if layout.features_in_rows else "sample ids", path)
    return row_names


def _frame_dataset(frame, layout, row_names):
    """The Dataset of the parsed table: its numeric block, and its kept columns as ``obs``."""
    import pandas as pd

    header, features_in_rows = layout.header, layout.features_in_rows
    feat = list(frame.columns)
    if not feat:
        raise FixError(
            f"{str(layout.path)!r} has no feature columns: every column is the id column or in {{keep}}.",
            owner="read_table", keep=FixError.ANY,
        )
    M = numeric_block(frame, header, layout.path, layout.locate, features_in_rows=features_in_rows,
                       where="line", keep_hint=not features_in_rows)
    col_names = np.array([header[j] for j in feat], dtype=object)
    if features_in_rows:
        return Dataset(np.ascontiguousarray(M.T), col_names, row_names)
    obs = None
    if layout.keep_pos:
        obs = pd.DataFrame(
            {header[j]: _column(frame, j, layout).to_numpy() for j in layout.keep_pos},
            index=pd.Index(row_names, name=header[layout.id_pos] or None),
        )
    return Dataset(M, row_names, col_names, obs)


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
        ``X`` a dense float64 array (a column of integers beyond +-2**53, which float64 would
        round, is an error naming it); ``obs`` a
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
    data = _read_delimited(path, sep=sep, id_column=id_column, features_in_rows=True, keep=())
    odd = (data.X != 0) & (data.X != 1)
    if odd.any():
        i, j = (int(k[0]) for k in np.nonzero(odd))
        raise FixError(
            f"{str(path)!r} holds {data.X[i, j]:g} for the gene {plain(data.feature_names[j])} in sample "
            f"{plain(data.sample_ids[i])} ({int(odd.sum()):,} cell(s) in all are neither 0 nor 1): an .Rtab "
            "table of gene presence/absence holds 0 and 1 only. For counts or other values, read the "
            "table as a TSV with genes in rows: {format} {features_in_rows}.",
            owner="read", format="tsv", features_in_rows=True)
    return data


if read_csv.__doc__ and read_tsv.__doc__:  # absent under python -OO
    read_csv.__doc__ += _DELIMITED_DOC.format(sep=",")
    read_tsv.__doc__ += _DELIMITED_DOC.format(sep="\t")
