"""DataFrames as delimited text (TSV / CSV), exact and fast, in blocks of rows.

The bytes are those of pandas' ``frame.to_csv(fh, sep=sep, index=False)``: every float64 as the
shortest text that reads back to the same value (``repr``), integers and booleans as Python writes
them, missing values empty, text quoted only where the field holds the separator, a quote or a line
break (by the :mod:`csv` module itself). It is several times faster because each column is turned
into text once per block (float64 values by compiled code, ``genosift._float_text``), rather
than cell by cell through pandas' formatting layer. Columns of other dtypes (datetimes, categoricals, nullable extension
types) and one-column frames are written by pandas itself.
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
    """Whether a column of ``dtype`` is written here (else pandas writes the whole frame)."""
    return isinstance(dtype, np.dtype) and dtype.kind in "fiubO"


def _floats(values):
    """Float column text: ``repr`` for float64 (the same text as numpy's ``astype(str)``, which
    pandas uses), computed in compiled code; numpy's own for other widths."""
    if values.dtype != np.float64:
        return values.astype(str).tolist()
    from ._float_text import float_texts  # numba: loaded when a float column is written

    return float_texts(values)


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


def _column_text(values, isna, writer, buf, sep):
    kind = values.dtype.kind
    if kind == "f":
        text = _floats(values)
        nan = np.isnan(values)
        if nan.any():
            for i in np.flatnonzero(nan).tolist():
                text[i] = ""
        return text
    if kind in "iub":
        return list(map(str, values.tolist()))
    return _objects(values, isna, writer, buf, sep)


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

    columns = [frame.iloc[:, j] for j in range(frame.shape[1])]
    if len(columns) < 2 or isinstance(frame.columns, MultiIndex) or not all(_fast_kind(c.dtype) for c in columns):
        frame.to_csv(fh, sep=sep, index=False, header=header, chunksize=max(1, block_rows // max(1, frame.shape[1])))
        return
    end = os.linesep
    options = dict(lineterminator=end, delimiter=sep, quoting=csv.QUOTE_MINIMAL, doublequote=True, quotechar='"')
    if header:
        csv.writer(fh, **options).writerow(list(frame.columns))
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, **options)
    arrays = [c.to_numpy() for c in columns]
    for start in range(0, len(frame), block_rows):
        stop = min(start + block_rows, len(frame))
        text = [_column_text(a[start:stop], isna, writer, buf, sep) for a in arrays]
        fh.write(end.join(map(sep.join, zip(*text))) + end)


def frame_text(frame, *, sep="\t"):
    """``frame`` as one string, as :func:`write_delimited` writes it (for small tables)."""
    buf = io.StringIO(newline="")
    write_delimited(frame, buf, sep=sep)
    return buf.getvalue()
