"""What the file readers share: errors that name the file, names and their checks, column positions, numbers.

:func:`file_errors` turns what decompressors and parsing libraries raise on a damaged file into
one message naming the file; :func:`numeric_block` reads text columns as numbers and names the
first cell that is none. Used by :mod:`genosift.io.delimited`, :mod:`genosift.io.binary` and
:mod:`genosift.io.metadata`.
"""
from __future__ import annotations

import csv
import lzma
import zipfile
import zlib
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..core.messages import FixError, plain
from ..core.validation import check_integer_range, closest_names, default_feature_names
from .compression import DamagedFile, LineTooLong, open_text, replayable, suffix_compression
from .quoting import names_list

__all__ = ["ForeignData", "NulByte", "ObjectsRefused", "check_unique", "column_position", "exact_floats",
           "file_errors", "names_for", "numbered", "numeric_block", "optional_module", "str_array", "text_numbers"]


def exact_floats():
    """pandas ``read_csv`` options that parse every float64 exactly: pandas 2's default parser can
    be one unit in the last place off, pandas 3's is exact (and deprecates the option)."""
    import pandas as pd

    return {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


#: An exponent of ten or more digits (leading zeros aside): pandas 2's own number parser (used by
#: ``to_numeric``, and by ``read_csv`` unless it parses floats as Python does) adds the digits into
#: a 32-bit integer, which overflows and crashes the process (pandas issue 63089).
_LONG_EXPONENT = r"([eE][+-]?)0*[1-9][0-9]{9,}"


def text_numbers(values):
    """``pandas.to_numeric(values, errors="coerce")`` for text cells (a Series): numbers as pandas
    reads them, NaN where a cell is none. A cell whose exponent has ten or more digits, which
    would crash pandas' parser, is read with an exponent of nine nines in its place: the same
    value (out of float64's range either way)."""
    import re

    import pandas as pd

    long_exponent = re.compile(_LONG_EXPONENT)
    text = values.astype(object)
    risky = np.fromiter((isinstance(v, str) and long_exponent.search(v) is not None for v in text),
                        dtype=bool, count=len(text))
    if risky.any():
        text = text.copy()
        text[risky] = [long_exponent.sub(r"\g<1>999999999", v) for v in text[risky]]
    return pd.to_numeric(text, errors="coerce")


class NulByte(ValueError):
    """A NUL byte in a text table: the file is damaged or binary."""

    def __init__(self, path):
        super().__init__(f"{str(path)!r} holds a NUL byte, which no text table holds: the file is damaged "
                         "or binary. Check that this is the right file, or re-create it.")


def _damage_errors():
    errors = [OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, csv.Error]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errors)


class ObjectsRefused(ValueError):
    """An array of Python objects was not loaded (its message says why); never re-wrapped."""


class ForeignData(ValueError):
    """A data file that would read other files (HDF5 external links, external storage, virtual
    datasets) was refused before any of its values were read; never re-wrapped."""


@contextmanager
def file_errors(path, kind, *, broad=False):
    """Turn errors from decompressors and parsers into a ValueError that names the file.

    ``broad=True`` wraps every exception: for a call into a parsing library, whatever it raises
    on a damaged file (RuntimeError from HDF5, TokenError from a .npy header...) means the same.
    """
    try:
        yield
    except (FileNotFoundError, IsADirectoryError, PermissionError, ImportError, MemoryError, ObjectsRefused,
            ForeignData, NulByte, LineTooLong):
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


def check_unique(names, what, path):
    counts = Counter(names)
    dups = [n for n, c in counts.items() if c > 1]
    if dups:
        shown = ", ".join(f"{str(n)!r} ({counts[n]} times)" for n in dups[:5])
        more = f" and {len(dups) - 5} more" if len(dups) > 5 else ""
        raise ValueError(
            f"{str(path)!r} has duplicated {what}: {shown}{more}. Each must appear once; remove or "
            "rename the duplicates."
        )


def str_array(values):
    return np.array([str(v) for v in values], dtype=object)


def column_position(header, column, option, path, where):
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
                f"names {names_list(header, 5)}{closest_names(column, header)}. Check the spelling, or give a "
                "0-based position.",
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


def numbered(numbers, total, word="line"):
    """``line 3`` or ``lines 3, 8 and 2 more``."""
    shown = ", ".join(str(x) for x in numbers)
    more = f" and {total - len(numbers)} more" if total > len(numbers) else ""
    return f"{word}{'s' if total > 1 else ''} {shown}{more}"


def _number_or_nan(value):
    """A cell as pandas reads a number, NaN where it is none or beyond float64 (then reported)."""
    import pandas as pd

    try:
        return float(text_numbers(pd.Series([value], dtype=object)).iloc[0])
    except OverflowError:
        return np.nan


def numeric_block(frame, header, path, locate, *, features_in_rows, where, keep_hint):
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
            values = text_numbers(col)
        except OverflowError:  # pandas raises, coercing or not, on an integer beyond float64
            values = col.map(_number_or_nan).astype(np.float64)
        bad = np.flatnonzero((values.isna() & col.notna()).to_numpy())
        if bad.size:
            bad_columns.append(header[j])
            first_bad = first_bad or (j, int(bad[0]))
            if len(bad_columns) > 10:
                break
        converted[j] = values if values.dtype.kind in "iu" else values.astype(np.float64)
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
            f"{names_list(listed)}{more}. "
        )
        raise FixError(text + fix, owner="read_table", **({"keep": [str(c) for c in listed]} if keep_hint else {}))
    if converted:  # text columns that hold numbers only: use their parsed values
        frame = frame.copy()
        for j, values in converted.items():
            frame[j] = values
    for wide in (np.int64, np.uint64):  # integers that float64 would round: refused, naming the columns
        columns = [j for j, t in zip(frame.columns, frame.dtypes) if t == wide]
        if columns:
            check_integer_range(frame[columns].to_numpy(dtype=wide), [header[j] for j in columns],
                                source=repr(str(path)))
    return frame.to_numpy(dtype=np.float64, na_value=np.nan)


def optional_module(module, purpose, *, package=None, install=None):
    """Import an optional dependency, or raise an ImportError that says how to install it.

    ``package``: its name on PyPI (default ``module``, ``_`` spelt ``-``); ``install``: the
    command(s) to show (default ``pip install PACKAGE`` or ``pip install 'genosift[io]'``).
    """
    import importlib

    package = package or module.replace("_", "-")
    install = install or f"`pip install {package}` or `pip install 'genosift[io]'`"
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"Reading {purpose} needs the '{package}' package, which is not installed. "
            f"Install it with {install}."
        ) from None


def _default_ids(n):
    """``s0, s1, ...``: the ids of unnamed samples."""
    return np.array([f"s{i}" for i in range(n)], dtype=object)


def _name_list(source, *, what, expected, path, option):
    """Names from ``source``: a path to a one-name-per-line file, or a sequence of names.

    In a file, a line holding tabs gives its first field (so 10x ``barcodes.tsv.gz`` and
    ``features.tsv.gz`` work as they are); the file may be compressed.
    """
    if isinstance(source, (str, Path)):
        name_file = Path(source)
        if not Path(replayable(name_file)).is_file():
            raise FileNotFoundError(
                f"The {what} file {str(name_file)!r} (the '{option}' option for {str(path)!r}) does not exist."
            )
        with file_errors(name_file, "a list of names"), open_text(name_file) as fh:
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


def names_for(path, shape, samples, features, suffix, file_names=(None, None)):
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
        check_unique(names, what, path)
        out.append(names)
    return out
