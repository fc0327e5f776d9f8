"""A table of covariates (lineage coordinates, batch, age, ...) read and matched to the samples by id.

The table is read as a metadata table (``read_metadata``: CSV / TSV, compressed or not, ids as
text), its id column named or the first. Every sample scored needs a row: a sample without one
is an error naming a few of them, never a silent drop, as covariates are never imputed. Rows
of other samples are left out and reported, as the metadata join reports its ids on one side.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..core.messages import FixError
from ..core.validation import names_with_closest
from .metadata import read_metadata
from .quoting import names_list

__all__ = ["CovariateMatch", "match_covariates", "read_covariates", "read_kinship"]


def read_covariates(path, *, id_column=None, sep=None):
    """A covariates table indexed by sample id: its other columns, in file order.

    ``id_column``: the column of sample ids (default: the first); ``sep``: as in
    ``read_metadata`` (by default by the suffix, else guessed from the header).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "cov.tsv"
    >>> _ = path.write_text("isolate\\tPC1\\tsite\\ns1\\t0.5\\ta\\ns2\\t-0.2\\tb\\n")
    >>> table = read_covariates(path)
    >>> table.index.tolist(), list(table.columns)
    (['s1', 's2'], ['PC1', 'site'])
    """
    try:
        return read_metadata(path, id_column=id_column, sep=sep)
    except FixError as exc:  # the same fix, spelled with this function's parameters
        raise FixError(exc.template, owner="read_covariates", **exc.params) from None


def read_kinship(path, *, sep=None, fh=None):
    """A square kinship table (pyseer's ``--similarity`` file: a header of sample ids, each row
    a sample id then its numbers) as a DataFrame indexed and with columns by sample id, checked
    square, with the same ids on both sides and numbers only.

    The header may start with a corner cell (pyseer's, pandas') or name the ids only (R's
    ``write.table``). ``sep``: a tab, ``,``, ``;`` or runs of spaces, by default told from the
    suffix (``.csv``, ``.tsv``) or the header. The file is read once, in one pass (a pipe reads as
    a file does; ``fh``: the file already opened with ``genosift.io.compression.open_binary``),
    and its shape is checked from the header and a count of its lines before any number is parsed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "k.tsv"
    >>> _ = path.write_text("\\ts1\\ts2\\ns1\\t1.0\\t0.25\\ns2\\t0.25\\t1.0\\n")
    >>> read_kinship(path).to_numpy().tolist()
    [[1.0, 0.25], [0.25, 1.0]]
    """
    from contextlib import nullcontext

    from .compression import MAX_LINE_BYTES, open_binary
    from .reading import file_errors

    name = str(path)
    if fh is None and Path(path).is_dir():
        raise IsADirectoryError(f"{name!r} is a folder, not a kinship table.")
    with file_errors(path, "a kinship table"), \
            (nullcontext(fh) if fh is not None else open_binary(path, max_line=MAX_LINE_BYTES)) as opened:
        return _kinship_rows(opened, name, sep)


def _kinship_rows(fh, name, sep):
    """The kinship table of the open file ``fh``: the header first (its ids checked before any
    number is read), then every row in one pass of pandas' parser."""
    import numpy as np
    import pandas as pd

    from .reading import exact_floats, text_numbers

    header = fh.readline()
    if b"\x00" in header:
        raise ValueError(f"{name!r} holds a NUL byte, which no kinship table holds: the file is damaged or binary.")
    text = header.decode("utf-8").removeprefix("\ufeff").rstrip("\r\n")
    if not text.strip():
        raise ValueError(f"The kinship {name!r} is empty or starts with an empty line: it needs a header of sample "
                         "ids and one row per sample.")
    sep = _kinship_sep(name, text) if sep is None else sep
    fields = text.split() if sep == r"\s+" else [f.strip().strip('"') for f in text.split(sep)]
    named = fields[1:] if not fields[0] else fields  # a corner cell, or the ids only
    seen = set()
    twice = sorted({i for i in named if i in seen or seen.add(i)})
    if twice or not all(named):
        raise ValueError(f"The kinship {name!r} names " + (f"the sample id(s) {twice[:5]} more than once" if twice
                         else "a sample without an id") + " in its header: name each sample once.")
    try:
        frame = pd.read_csv(fh, sep=sep, header=None, index_col=False, dtype={0: str}, keep_default_na=False,
                            na_values=[], encoding="utf-8", **exact_floats())
    except pd.errors.EmptyDataError:
        frame = None
    except pd.errors.ParserError as exc:
        detail = re.sub(r"line (\d+)", lambda m: f"line {int(m[1]) + 1}",  # after the header
                        str(exc).strip().replace("Error tokenizing data. C error: ", ""))
        raise ValueError(f"The kinship {name!r} is not a regular table (separator {sep!r}): {detail}. Every row "
                         f"must hold its sample id, then one number per sample of the header.") from None
    if frame is None or frame.empty:
        raise ValueError(f"The kinship {name!r} is not square: its header names {len(named):,} sample id(s) but it "
                         "has no rows. Write one row per sample: its id, then its kinship with each sample.")
    width = frame.shape[1] - 1
    if width not in ((len(fields) - 1,) if not fields[0] else (len(fields) - 1, len(fields))):
        raise ValueError(f"The kinship {name!r} is not square: its header names {len(named):,} sample id(s) and its "
                         f"rows hold {width:,} number(s). Write one row per sample: its id, then its kinship with "
                         "each sample of the header, in the header's order.")
    ids = fields[1:] if width == len(fields) - 1 else fields
    rows = [str(i).strip() for i in frame.iloc[:, 0]]
    if len(rows) != len(ids):
        raise ValueError(f"The kinship {name!r} is not square: its header names {len(ids):,} sample id(s) and it "
                         f"has {len(rows):,} row(s). Write one row per sample of the header: its id, then its "
                         "kinship with each sample.")
    if sorted(rows) != sorted(ids):
        extra = sorted(set(ids) ^ set(rows))[:5]
        raise ValueError(f"The kinship {name!r} is not square with the same sample ids in its header and its "
                         f"first column ({len(rows):,} rows of {width:,} numbers, {len(ids):,} ids in the header; "
                         f"differing ids such as {extra}). Write one row and one column per sample, in any order.")
    values = frame.iloc[:, 1:]
    if any(t.kind not in "fiu" for t in values.dtypes):
        values = values.apply(text_numbers)
    numbers = values.to_numpy(dtype=np.float64)
    if np.isnan(numbers).any():
        i, j = np.argwhere(np.isnan(numbers))[0]
        cell = frame.iat[i, j + 1]
        what = "an empty cell" if cell is None or isinstance(cell, float) or not str(cell).strip() else repr(cell)
        raise ValueError(f"The kinship {name!r} holds {what} (sample {rows[i]!r}, column {ids[j]!r}), not a "
                         "number. Give a number in every cell.")
    return pd.DataFrame(numbers, index=rows, columns=ids)


def _kinship_sep(name, header):
    """The separator of a kinship table: by its suffix, else the most frequent in its header."""
    base = name.lower()
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        base = base.removesuffix(suffix)
    if base.endswith(".csv"):
        return ","
    if base.endswith((".tsv", ".tab")):
        return "\t"
    counts = {sep: header.count(sep) for sep in ("\t", ",", ";")}
    best = max(counts, key=counts.get)
    return best if counts[best] else r"\s+"


@dataclass(frozen=True)
class CovariateMatch:
    """How the samples scored matched the rows of a covariates table by id.

    ``n_matched``: samples scored (all of them have a row); ``only_in_table``: sorted ids of the
    table's rows for other samples, left out; ``table_name``: the table as the summary names it.
    """

    n_matched: int
    only_in_table: list = field(default_factory=list)
    table_name: str = "the covariates table"

    def __str__(self):
        text = f"Covariates from {self.table_name}: {self.n_matched} sample(s) matched by id"
        if not self.only_in_table:
            return text + "; the table has no other rows."
        return (text + f"; {len(self.only_in_table)} in the covariates table only, left out: "
                f"{names_list(self.only_in_table)}.")


def match_covariates(sample_ids, table):
    """``(covariates, CovariateMatch)``: the rows of ``table`` (indexed by sample id) in the order
    of ``sample_ids`` (indexed by them, as text), and the report of the ids on one side.

    A sample without a row is an error naming a few of them and the fix.
    """
    import pandas as pd

    ids = [str(s) for s in sample_ids]
    index = pd.Index([str(s) for s in table.index])
    source = table.attrs.get("path")
    named = f"{source!r}" if source else "the covariates table"
    listed = set(index)
    missing = [s for s in ids if s not in listed]
    if missing:
        unmatched = sorted(listed - set(ids))  # a misspelt id is among them
        raise FixError(
            f"{len(missing)} of the {len(ids)} samples scored have no row in {named}: "
            f"{names_with_closest(missing, unmatched)}. "
            "Covariates are never imputed: add a row for every sample scored to {covariates} (check the id "
            "column, {covariates_id}), or leave those samples out (for example with {classes}).",
            owner="match_covariates", covariates=FixError.ANY, covariates_id=FixError.ANY, classes=FixError.ANY)
    if not index.is_unique:
        dup = sorted(set(index[index.duplicated()]))
        raise FixError(f"{named} lists sample id(s) {names_list(dup)} more than once; give each sample one row "
                       "of {covariates}.", owner="match_covariates", covariates=FixError.ANY)
    frame = table.set_axis(index, axis=0).loc[ids]
    others = sorted(set(index) - set(ids))
    return frame, CovariateMatch(len(ids), others, named)
