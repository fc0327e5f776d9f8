"""DataFrames as delimited text (TSV / CSV), exact and fast, in blocks of rows.

The bytes are those of pandas' ``frame.to_csv(fh, sep=sep, index=False)``: every float64 as the
shortest text that reads back to the same value (``repr``), integers and booleans as Python writes
them, missing values empty, text quoted only where the field holds the separator, a quote or a line
break (by the :mod:`csv` module itself). It is ten times faster than pandas because each column of
a block is turned into bytes at once (numbers by compiled code, ``genosift.core.number_text``, which
also lays out the rows) rather than cell by cell through pandas' formatting layer; blocks are laid
out on the engine's threads and written in order. Columns of other
dtypes (datetimes, categoricals, nullable extension types other than integers) and one-column
frames are written by pandas itself.
"""
from __future__ import annotations

import csv
import io
import os

import numpy as np

__all__ = ["BLOCK_ROWS", "frame_text", "write_delimited"]

#: Rows turned into text at a time: the text of millions of rows is never held whole.
BLOCK_ROWS = 1 << 14

#: Characters after which a text field may need quoting; such fields go through :mod:`csv`.
_SPECIAL = ('"', "\n", "\r")


def _fast_kind(dtype):
    """Whether a column of ``dtype`` is written here (else pandas writes the whole frame): numpy
    numbers, booleans and objects, and pandas' nullable integers (missing values empty)."""
    return isinstance(dtype, np.dtype) and dtype.kind in "fiubO" or _nullable_int(dtype)


def _nullable_int(dtype):
    from pandas.api.types import is_extension_array_dtype, is_integer_dtype

    return is_extension_array_dtype(dtype) and is_integer_dtype(dtype)


def _array(column):
    """A column as ``_column_bytes`` takes it: a numpy array, or ``(integers, missing)`` for a
    nullable integer column."""
    if _nullable_int(column.dtype):
        missing = column.isna().to_numpy()
        return column.to_numpy(dtype=np.int64, na_value=0), missing
    return column.to_numpy()


def _field(writer, buf, value, sep):
    """The text :mod:`csv` writes for ``value`` as one field among several (quoted if needed)."""
    buf.seek(0)
    buf.truncate()
    writer.writerow([value, ""])
    return buf.getvalue()[:-len(sep) - len(os.linesep)]


def _objects(values, isna, writer, buf, sep):
    """Object column text: missing values empty, strings as they are unless they need quoting,
    anything else as :mod:`csv` writes it."""
    missing = isna(values)
    text = ["" if m else v for v, m in zip(values.tolist(), missing.tolist())]
    plain = [type(v) is str for v in text]
    joined = "".join([v for v, p in zip(text, plain) if p])
    special = _SPECIAL + (sep,)
    check = any(c in joined for c in special)
    for i, (v, p) in enumerate(zip(text, plain)):
        if not p or (check and any(c in v for c in special)):
            text[i] = _field(writer, buf, v, sep)
    return text


def _joined_bytes(joined):
    """``(bytes, begins, ends)`` of texts joined by NUL (none holding one), UTF-8."""
    data = np.frombuffer(joined.encode("utf-8"), dtype=np.uint8)
    nul = np.flatnonzero(data == 0)
    return data, np.r_[0, nul + 1], np.r_[nul, data.size]


def _text_bytes(text):
    """``(bytes, begins, ends)`` of a list of str, UTF-8: one encoding of the NUL-joined texts
    (unless a text holds a NUL, then each encoded on its own)."""
    joined = "\x00".join(text)
    if joined.count("\x00") == max(len(text) - 1, 0):
        return _joined_bytes(joined)
    encoded = [t.encode("utf-8") for t in text]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets[:-1], offsets[1:]


def _column_bytes(values, isna, writer, buf, sep):
    """One column of a block as ``join_rows`` takes it."""
    from . import number_text as _number_text  # numba: loaded when a table is written

    if isinstance(values, tuple):  # nullable integers and where they are missing
        return _number_text.int_column(*values)
    kind = values.dtype.kind
    if values.dtype == np.float64:
        return _number_text.float_column(values)
    if kind == "f":
        text = values.astype(str).tolist()
        for i in np.flatnonzero(np.isnan(values)).tolist():
            text[i] = ""
        return _text_bytes(text)
    if kind in "iu":
        return _number_text.int_column(values)
    if kind == "b":
        return _number_text.bool_column(values)
    items = values.tolist()
    if set(map(type, items)) == {str}:  # names: written as they are unless one needs quoting
        joined = "\x00".join(items)
        if joined.count("\x00") == len(items) - 1 and not any(c in joined for c in _SPECIAL + (sep,)):
            return _joined_bytes(joined)
    return _text_bytes(_objects(values, isna, writer, buf, sep))


def _emit(fh, rows):
    """Write the bytes ``rows`` to the text handle ``fh``: straight to its binary buffer when it
    writes UTF-8 (after flushing its text), else decoded."""
    import codecs

    raw = getattr(fh, "buffer", None)
    encoding = getattr(fh, "encoding", None)
    if raw is not None and encoding and codecs.lookup(encoding).name == "utf-8":
        fh.flush()
        raw.write(memoryview(rows))
    else:
        fh.write(rows.tobytes().decode("utf-8"))


def write_delimited(frame, fh, *, sep="\t", block_rows=BLOCK_ROWS, header=True):
    """Write ``frame`` (its header unless ``header=False``, no index) to the text handle ``fh``
    with the separator ``sep``; ``fh`` should be opened with ``newline=""``, as for :mod:`csv`.

    >>> import pandas as pd
    >>> buf = io.StringIO()
    >>> write_delimited(pd.DataFrame({"k": ["a", "b"], "v": [0.1, float("nan")], "n": [1, 2]}), buf)
    >>> buf.getvalue()
    'k\\tv\\tn\\na\\t0.1\\t1\\nb\\t\\t2\\n'
    """
    from pandas import MultiIndex, isna

    from . import engine
    from .number_text import join_rows

    columns = [frame.iloc[:, j] for j in range(frame.shape[1])]
    if len(columns) < 2 or isinstance(frame.columns, MultiIndex) or not all(_fast_kind(c.dtype) for c in columns):
        frame.to_csv(fh, sep=sep, index=False, header=header, chunksize=max(1, block_rows // max(1, frame.shape[1])))
        return
    end = os.linesep
    options = dict(lineterminator=end, delimiter=sep, quoting=csv.QUOTE_MINIMAL, doublequote=True, quotechar='"')
    if header:
        csv.writer(fh, **options).writerow(list(frame.columns))
    arrays = [_array(c) for c in columns]
    sep_bytes, end_bytes = sep.encode("utf-8"), end.encode("utf-8")

    def block_bytes(start):
        buf = io.StringIO(newline="")  # each block its own: blocks are laid out on several threads
        writer = csv.writer(buf, **options)
        stop = min(start + block_rows, len(frame))
        return join_rows([_column_bytes(tuple(x[start:stop] for x in a) if isinstance(a, tuple) else a[start:stop],
                                        isna, writer, buf, sep) for a in arrays], sep_bytes, end_bytes)

    starts = range(0, len(frame), block_rows)
    jobs = 1 if len(starts) < 2 else engine.threads()
    for rows in engine.imap_blocks(block_bytes, starts, n_jobs=jobs, ahead=jobs):  # jobs + 1 blocks held at most
        _emit(fh, rows)


def frame_text(frame, *, sep="\t"):
    """``frame`` as one string, as :func:`write_delimited` writes it (for small tables)."""
    buf = io.StringIO(newline="")
    write_delimited(frame, buf, sep=sep)
    return buf.getvalue()
