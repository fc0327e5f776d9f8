"""A table of covariates (lineage coordinates, batch, age, ...) read and matched to the samples by id.

The table is read as a metadata table (``read_metadata``: CSV / TSV, compressed or not, ids as
text), its id column named or the first. Every sample scored needs a row: a sample without one
is an error naming a few of them, never a silent drop, as covariates are never imputed. Rows
of other samples are left out and reported, as the metadata join reports its ids on one side.
"""
from __future__ import annotations

from dataclasses import dataclass, field

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


def read_kinship(path, *, sep=None):
    """A square kinship table (pyseer's ``--similarity`` file: a header of sample ids, each row
    a sample id then its numbers) as a DataFrame indexed and with columns by sample id, checked
    square, with the same ids on both sides and numbers only.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "k.tsv"
    >>> _ = path.write_text("\\ts1\\ts2\\ns1\\t1.0\\t0.25\\ns2\\t0.25\\t1.0\\n")
    >>> read_kinship(path).to_numpy().tolist()
    [[1.0, 0.25], [0.25, 1.0]]
    """
    import numpy as np
    import pandas as pd

    table = read_metadata(path, id_column=None, sep=sep)
    columns = [str(c) for c in table.columns]
    rows = [str(i) for i in table.index]
    if sorted(columns) != sorted(rows) or len(set(rows)) != len(rows):
        extra = sorted(set(columns) ^ set(rows))[:5]
        raise ValueError(f"The kinship {str(path)!r} is not square with the same sample ids in its header and its "
                         f"first column ({len(rows)} rows, {len(columns)} columns; differing ids such as {extra}). "
                         "Write one row and one column per sample, in any order.")
    values = table.apply(pd.to_numeric, errors="coerce")
    if values.isna().to_numpy().any():
        bad = np.argwhere(values.isna().to_numpy())[0]
        raise ValueError(f"The kinship {str(path)!r} holds {table.iat[bad[0], bad[1]]!r} (sample {rows[bad[0]]!r}, "
                         f"column {columns[bad[1]]!r}), not a number. Give a number in every cell.")
    return pd.DataFrame(values.to_numpy(dtype=np.float64), index=rows, columns=columns)


@dataclass(frozen=True)
class CovariateMatch:
    """How the samples scored matched the rows of a covariates table by id.

    ``n_matched``: samples scored (all of them have a row); ``only_in_table``: sorted ids of the
    table's rows for other samples, left out.
    """

    n_matched: int
    only_in_table: list = field(default_factory=list)
    source: str = "the covariates table"

    def __str__(self):
        text = f"Covariates from {self.source}: {self.n_matched} sample(s) matched by id"
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
