"""Per-sample metadata tables (targets, groups) and their join with a data set by sample id."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..core.messages import FixError, PythonText, Spelled
from ..core.validation import UsageError, names_with_closest, param_error
from .compression import MAX_LINE_BYTES, open_binary, suffix_compression
from .quoting import names_list
from .reading import exact_floats

__all__ = ["FewMatchedWarning", "MISSING_MARKS", "MatchReport", "TooFewMatched", "attach_metadata",
           "first_column_is_ids", "read_metadata"]

#: The cells a column of 0 and 1 may hold for a missing value besides pandas' own (empty, ``NA``):
#: a dash, a dot, or blanks (Scoary's traits tables write them).
MISSING_MARKS = frozenset({"-", ".", ""})
#: The first header cells that say the first column holds the sample ids (Scoary's traits tables).
ID_HEADERS = ("", "Name")


class FewMatchedWarning(Spelled, UserWarning):
    """Less than half of the data's or of the metadata's samples matched by id (see ``attach_metadata``)."""


class TooFewMatched(Spelled, UsageError):
    """Fewer samples matched by id than ``min_matched`` asks (a ``ValueError``; the command exits with 2)."""



def _opened(path):
    """The (decompressed) bytes of ``path`` with bounded memory and line length."""
    return open_binary(path, max_line=MAX_LINE_BYTES)


def _sniff_sep(path):
    """The separator of a table: from its suffix (.csv, .tsv, .tab), else from its header line."""
    name = path.name.lower()
    if suffix_compression(name):
        name = name[: name.rindex(".")]
    if name.endswith(".csv"):
        return ","
    if name.endswith((".tsv", ".tab")):
        return "\t"
    with _opened(path) as fh:
        head = fh.readline(1 << 20)
    header = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    counts = {sep: header.count(sep) for sep in ("\t", ",", ";")}
    best = max(counts, key=counts.get)
    if counts[best]:
        return best
    return r"\s+" if header.strip().count(" ") else ","


def read_metadata(path, *, id_column, sep=None):
    """A per-sample table (CSV / TSV, optionally compressed) indexed by sample id.

    Parameters
    ----------
    path : path
        A delimited text file with a header row; gzip, bzip2, xz or zstd compression is told from
        the first bytes.
    id_column : str or None
        The column holding the sample ids (None: the first column). Ids are read as text (``'007'`` stays
        ``'007'``) with surrounding whitespace removed; they must be present and unique.
    sep : str, optional
        The separator. By default ``,`` for ``.csv``, a tab for ``.tsv`` / ``.tab``, otherwise the
        most frequent of tab, ``,`` and ``;`` in the header line (runs of spaces if none).

    Returns
    -------
    pandas.DataFrame
        The other columns, indexed by sample id (index name: ``id_column``; None for an id
        column whose header cell is empty), in file order.

    Notes
    -----
    Cells are read as pandas reads them: numbers as numbers, empty cells and ``NA``, ``NaN``,
    ``null``... as missing. A column whose cells are all 0, 1 or missing, where missing may also
    be written ``-``, ``.`` or blanks (Scoary's traits tables), is read as numbers: 0.0 and
    1.0, NaN where missing (for that column only); any other column keeps ``-`` and ``.`` as text.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pheno.tsv"
    >>> _ = path.write_text("sample\\tresistant\\n007\\t1\\ns-2\\t0\\n")
    >>> meta = read_metadata(path, id_column="sample")
    >>> meta.index.tolist(), meta["resistant"].tolist()
    (['007', 's-2'], [1, 0])
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No such file: {str(path)!r}.")
    if path.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a folder, not a metadata table.")
    if id_column is not None and not isinstance(id_column, str):
        raise param_error("id_column", "read_metadata", "a column name (str) or None (the first)", id_column)
    frame, id_column, columns, options = _read_table(path, id_column, sep)
    ids = _sample_ids(path, frame, id_column, columns, options)
    frame = _marked_missing(frame.drop(columns=[id_column]))
    # pandas names an empty header cell "Unnamed: 0": the header as written tells it from a column of that name
    unnamed = id_column == columns[0] == "Unnamed: 0" and _header_cells(path, options)[0] == ""
    frame.index = pd.Index(ids.to_numpy(dtype=object), name=None if unnamed else id_column)
    frame.attrs["path"] = str(path)  # for the messages of attach_metadata
    return frame


def _header_cells(path, options):
    """The cells of the header line of ``path`` as written (an empty cell stays empty; pandas
    names it ``Unnamed: 0``), read with the table's ``options``."""
    import pandas as pd

    with _opened(path) as fh:
        first = pd.read_csv(fh, nrows=1, header=None, dtype=str, na_filter=False, **options)
    return [str(c) for c in first.iloc[0]]


def first_column_is_ids(path, *, sep=None):
    """Whether the first header cell of the table at ``path`` is empty or ``Name``: its first column
    then holds the sample ids without naming a column for them (Scoary's traits tables), and
    ``read_metadata(path, id_column=None)`` reads them. False for a file that cannot be read
    (``read_metadata`` names the fault).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "traits.csv"
    >>> _ = path.write_text(",Tetracycline_resistance\\nIsolate_1,0\\nIsolate_2,1\\n")
    >>> first_column_is_ids(path)
    True
    >>> read_metadata(path, id_column=None)["Tetracycline_resistance"].to_dict()
    {'Isolate_1': 0, 'Isolate_2': 1}
    """
    path = Path(path)
    try:
        sep = _sniff_sep(path) if sep is None else sep
        return _header_cells(path, dict(sep=sep, index_col=False, encoding="utf-8"))[0] in ID_HEADERS
    except (ValueError, OSError, IndexError):  # a fault of the file: read_metadata names it
        return False


def _marked_missing(frame):
    """``frame`` with each text column whose cells are all ``0``, ``1`` or missing (pandas' own, or
    one of ``MISSING_MARKS``, spaces aside) read as 0.0/1.0/NaN; other columns as they are."""
    import pandas as pd

    for column in frame.columns:
        values = frame[column]
        if values.dtype.kind in "biufcmM":
            continue
        cells = values.to_numpy(dtype=object)
        given = np.flatnonzero(~pd.isna(cells))
        if not given.size or not all(isinstance(v, str) for v in cells[given]):
            continue
        text = np.array([v.strip() for v in cells[given]], dtype=object)
        marked = np.isin(text, list(MISSING_MARKS))
        if marked.any() and not marked.all() and np.isin(text[~marked], ["0", "1"]).all():
            numbers = np.full(cells.size, np.nan)
            numbers[given[~marked]] = text[~marked] == "1"
            frame[column] = numbers
    return frame


def _read_table(path, id_column, sep):
    """The table of ``path`` as pandas reads it (the id column as text), the id column (default:
    the first), the header's columns and the options it was read with; an error naming the fix
    for a table pandas cannot read whole."""
    import pandas as pd

    try:
        if sep is None:
            sep = _sniff_sep(path)
        # pandas reads the bytes through a bounded decompressor, never the file itself
        options = dict(sep=sep, index_col=False, encoding="utf-8", **exact_floats())
        with _opened(path) as fh:
            columns = [str(c) for c in pd.read_csv(fh, nrows=0, **options).columns]
        id_column = columns[0] if id_column is None else id_column
        if id_column not in columns:
            raise FixError(
                f"The id column {id_column!r} is not in {str(path)!r}; its columns are {columns} "
                f"(read with the separator {sep!r}). Pass {{id_column}} one of them"
                + (", or the right {sep}." if len(columns) == 1 else "."),
                owner="read_metadata", id_column=FixError.ANY, sep=FixError.ANY,
            )
        with warnings.catch_warnings():  # pandas would drop the values beyond the header's columns
            warnings.filterwarnings("error", message=".*loss of data", category=pd.errors.ParserWarning)
            with _opened(path) as fh:
                frame = pd.read_csv(fh, dtype={id_column: str}, **options)
    except pd.errors.ParserWarning:
        raise FixError(
            f"{str(path)!r} has a row with more fields than its header's {len(columns)} (separator "
            f"{sep!r}); the extra values would be lost. Every row must have as many fields as the "
            "header: remove the stray separators, quote the fields that hold one, or pass the right {sep}.",
            owner="read_metadata", sep=FixError.ANY,
        ) from None
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"{str(path)!r} is empty; a metadata table needs a header row naming its columns."
        ) from None
    except pd.errors.ParserError as exc:
        detail = str(exc).strip().replace("Error tokenizing data. C error: ", "")
        raise FixError(
            f"{str(path)!r} is not a regular table (separator {sep!r}): {detail}. Every row must have "
            "as many fields as the header: remove the stray separators, quote the fields that "
            "hold one, or pass the right {sep}.",
            owner="read_metadata", sep=FixError.ANY,
        ) from None
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{str(path)!r} is not UTF-8 text (it holds the byte {exc.object[exc.start:exc.start + 1]!r}). "
            "Re-save it as UTF-8, for example with `iconv -f latin1 -t utf-8`."
        ) from None
    except PermissionError:
        raise
    return frame, id_column, columns, options


def _sample_ids(path, frame, id_column, columns, options):
    """The sample ids of ``frame``, stripped: an error for a table of no rows, a row without an
    id or an id repeated ("NA", "NULL"... are ids, read again without NA parsing)."""
    import pandas as pd

    if frame.empty:
        raise ValueError(
            f"{str(path)!r} is empty: it has a header ({names_list(columns)}) but no rows. A metadata "
            "table needs one row per sample."
        )
    ids = frame[id_column]
    if ids.isna().any():  # "NA", "NULL"... are real ids: that column again, without NA parsing
        with _opened(path) as fh:
            ids = pd.read_csv(fh, usecols=[id_column], dtype=str, na_filter=False, **options)[id_column]
    ids = ids.str.strip()
    missing = np.flatnonzero(ids.isna().to_numpy() | (ids == "").to_numpy())
    if missing.size:
        lines = (missing[:10] + 2).tolist()
        raise ValueError(
            f"{str(path)!r} has {missing.size} row(s) with no value in the id column "
            f"{id_column!r}, on line(s) {lines}. Give every row a sample id or remove those rows."
        )
    dup = ids[ids.duplicated(keep=False)]
    if len(dup):
        names = sorted(set(dup))
        raise ValueError(
            f"{str(path)!r} lists {len(names)} sample id(s) of column {id_column!r} more than "
            f"once: {names_list(names)}. Each sample must have one row; remove or merge the repeats."
        )
    return ids


@dataclass(frozen=True)
class MatchReport:
    """How the samples of a data set and of a metadata table matched by id.

    Attributes
    ----------
    n_matched : int
        Samples in both, kept.
    only_in_data : list of str
        Sorted ids of the data that the metadata lacks (left out).
    only_in_metadata : list of str
        Sorted ids of the metadata that the data lack, left out (``absent="drop"``).
    zero_rows : list of str
        Sorted ids of the metadata that the data lack, kept as all-zero rows (``absent="zeros"``).
    """

    n_matched: int
    only_in_data: list = field(default_factory=list)
    only_in_metadata: list = field(default_factory=list)
    zero_rows: list = field(default_factory=list)

    @property
    def n_data(self):
        """Samples of the data."""
        return self.n_matched + len(self.only_in_data)

    @property
    def n_metadata(self):
        """Samples of the metadata."""
        return self.n_matched + len(self.only_in_metadata) + len(self.zero_rows)

    @property
    def few(self):
        """Whether less than half of the data's or of the metadata's samples matched."""
        return 2 * self.n_matched < self.n_data or 2 * self.n_matched < self.n_metadata

    def _counts(self):
        m, nd, nm = self.n_matched, self.n_data, self.n_metadata
        return (f"{m} of the data's {nd} sample(s) ({m / max(nd, 1):.0%}) and {m} of the metadata's {nm} "
                f"({m / max(nm, 1):.0%}) matched by id")

    def _unmatched(self):
        meta_only = [*self.only_in_metadata, *self.zero_rows]
        parts = [f"ids of the data not in the metadata: {names_list(self.only_in_data, 5) or 'none'}",
                 f"ids of the metadata not in the data: {names_list(sorted(meta_only), 5) or 'none'}"]
        if self.zero_rows:
            parts.append(f"{len(self.zero_rows)} sample(s) of the metadata are kept as all-zero rows")
        return "; ".join(parts)

    def __str__(self):
        text = f"{self.n_matched} sample(s) matched by id"
        parts = []
        if self.only_in_data:
            parts.append(
                f"{len(self.only_in_data)} in the data only, left out: {names_list(self.only_in_data)}"
            )
        if self.only_in_metadata:
            parts.append(
                f"{len(self.only_in_metadata)} in the metadata only, left out: "
                f"{names_list(self.only_in_metadata)}"
            )
        if self.zero_rows:
            parts.append(
                f"{len(self.zero_rows)} in the metadata only, kept as samples that carry none of "
                f"the features (all-zero rows): {names_list(self.zero_rows)}"
            )
        if not parts:
            return text + "; the data and the metadata hold the same samples."
        return text + "; " + "; ".join(parts) + "."


_CHECK_IDS = ("Check that {id_column} names the metadata's id column and {data_id} the data's, that the "
              "separators are right ({sep} for the metadata, {data_sep} for the data), and that both files "
              "spell the ids alike.")
_CHECK_PARAMS = dict(owner="attach_metadata", id_column=FixError.ANY, sep=FixError.ANY,
                     data_id=PythonText("id_column= of genosift.io.read"),
                     data_sep=PythonText("sep= of genosift.io.read"))


def _check_min_matched(min_matched):
    """``min_matched`` as ("count", N) or ("share", f), or None; a bad value is an error."""
    if min_matched is None:
        return None
    expected = "a whole number >= 1 (a count of samples) or a number in (0, 1) (a share of each side)"
    if isinstance(min_matched, (bool, np.bool_)) or not isinstance(min_matched, (int, float, np.integer, np.floating)):
        raise param_error("min_matched", "attach_metadata", expected, min_matched)
    value = float(min_matched)
    if 0 < value < 1:
        return "share", value
    if value >= 1 and value.is_integer():
        return "count", int(value)
    raise param_error("min_matched", "attach_metadata", expected, min_matched)


def _enough(report, rule):
    kind, value = rule
    if kind == "count":
        return report.n_matched >= value
    return report.n_matched >= value * report.n_data and report.n_matched >= value * report.n_metadata


def absent_samples_error(absent, in_data, named, *, zeros=True):
    """The error for the samples ``absent`` of a table (``named``) that are among none of the data's
    samples ``in_data``: how many, the first five with the data's closest ids, and the fixes (read
    them as carrying nothing, with ``zeros``, or leave them out)."""
    return FixError(
        f"{len(absent)} sample(s) of {named} are among none of the data's samples: "
        f"{names_with_closest(absent, in_data)}. A genome always "
        "carries k-mers, so a sample on no line is almost always a misspelt id: fix the ids, or pass "
        + ("{absent} to read such samples as carrying none (SEER's reading), or " if zeros else "")
        + "{drop} to leave them out.",
        owner="attach_metadata", absent="zeros", drop=PythonText("absent='drop'"))


def attach_metadata(dataset, metadata, *, how="inner", absent="drop", min_matched=None):
    """Keep the samples of ``dataset`` that ``metadata`` describes and attach its columns as ``obs``.

    Parameters
    ----------
    dataset : Dataset
    metadata : pandas.DataFrame
        Indexed by sample id, e.g. from ``read_metadata``.
    how : {"inner", "strict"}, default "inner"
        ``"inner"`` keeps the samples found in both (at least one); ``"strict"`` raises
        ``ValueError`` naming the unmatched ids unless both hold exactly the same samples.
    absent : {"drop", "zeros", "error"}, default "drop"
        What becomes of the samples the metadata describe and the data lack: left out, kept as
        all-zero rows after the data's rows (in the metadata's order), or an error naming them
        and the data's closest ids. ``"zeros"`` is SEER's reading of k-mer files, which list only
        the samples that carry each k-mer: a sample on no line carries none of them. But a real
        genome always carries k-mers, so a sample on no line is almost always a misspelt id: the
        readers of k-mer counts take ``"error"`` by default.
    min_matched : int or float, optional
        The fewest matches to accept; fewer raise ``TooFewMatched`` (a ``ValueError``) naming the
        counts and some unmatched ids of each side. A whole number N >= 1 is a count: at least N
        samples must be in both. A number between 0 and 1 is a share of each side: at least that
        share of the data's samples and of the metadata's samples must be in both (0.9: 90 % of
        each). Without it, a join that matches less than half of either side warns
        (``FewMatchedWarning``) and goes on.

    Returns
    -------
    (Dataset, MatchReport)
        The matched samples in the data's row order, with ``obs`` holding the metadata columns
        (joined to an existing ``obs``); and the report of the ids found on one side only.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from genosift.io import Dataset
    >>> ds = Dataset(np.eye(3), np.array(["a", "b", "c"]), np.array(["f0", "f1", "f2"]))
    >>> meta = pd.DataFrame({"y": [1, 0, 1]}, index=pd.Index(["c", "a", "z"], name="id"))
    >>> matched, report = attach_metadata(ds, meta)
    >>> matched.sample_ids.tolist(), matched.obs["y"].tolist()
    (['a', 'c'], [0, 1])
    >>> print(report)
    2 sample(s) matched by id; 1 in the data only, left out: 'b'; 1 in the metadata only, left out: 'z'.
    """
    rule = _checked_join(metadata, how, absent, min_matched)
    ids, meta_ids = _unique_ids(dataset, metadata)
    in_meta = set(meta_ids)
    in_data = set(ids)
    keep = [i for i, s in enumerate(ids) if s in in_meta]
    only_meta = sorted(in_meta - in_data)
    zeros = absent == "zeros" and how == "inner"
    report = MatchReport(len(keep), sorted(in_data - in_meta), [] if zeros else only_meta, only_meta if zeros else [])
    source = metadata.attrs.get("path")
    named = f"the metadata ({source!r})" if source else "the metadata"
    _check_matched(report, ids, meta_ids, named, how, absent, rule, min_matched)
    added = [s for s in meta_ids if s not in in_data] if zeros else []
    return _joined(dataset, metadata, ids, meta_ids, keep, added), report


def _checked_join(metadata, how, absent, min_matched):
    """The errors of ``attach_metadata``'s options; the rule of ``min_matched``."""
    import pandas as pd

    if how not in ("inner", "strict"):
        raise param_error("how", "attach_metadata", "'inner' or 'strict'", how)
    rule = _check_min_matched(min_matched)
    if absent not in ("drop", "zeros", "error"):
        raise param_error("absent", "attach_metadata", "'drop', 'zeros' or 'error'", absent)
    if not isinstance(metadata, pd.DataFrame):
        expected = "a pandas DataFrame indexed by sample id"
        raise param_error("metadata", "attach_metadata", expected, type(metadata).__name__)
    return rule


def _unique_ids(dataset, metadata):
    """The sample ids of the data and of the metadata, as text; an error where one repeats."""
    ids = [str(s) for s in dataset.sample_ids]
    meta_ids = [str(s) for s in metadata.index]
    for side, values in (("the data", ids), ("the metadata", meta_ids)):
        seen, dup = set(), set()
        for s in values:
            (dup if s in seen else seen).add(s)
        if dup:
            raise ValueError(
                f"{side.capitalize()} list(s) {len(dup)} sample id(s) more than once: "
                f"{names_list(sorted(dup))}. Ids must be unique to be matched."
            )
    return ids, meta_ids


def _check_matched(report, ids, meta_ids, named, how, absent, rule, min_matched):
    """The errors (and the warning) of a join that ``report`` describes: samples not the same with
    ``how="strict"``, an empty side, absent samples with ``absent="error"``, fewer matches than
    ``min_matched`` asks (``rule``), few or none matched."""
    only_meta = sorted([*report.only_in_metadata, *report.zero_rows])
    if how == "strict" and (report.only_in_data or report.only_in_metadata):
        raise ValueError(
            "The data and the metadata do not hold the same samples (how='strict'): "
            f"{len(report.only_in_data)} id(s) only in the data ({names_list(report.only_in_data) or '-'}), "
            f"{len(report.only_in_metadata)} only in the metadata "
            f"({names_list(report.only_in_metadata) or '-'}). Fix the ids, or pass how='inner' to keep "
            f"the {report.n_matched} sample(s) found in both."
        )
    if not meta_ids:
        raise ValueError(f"{named.capitalize()} are empty: they have no rows. Give one row per sample.")
    if not ids:
        raise ValueError("The data have no samples, so there is nothing to match with the metadata.")
    if absent == "error" and only_meta and report.n_matched:
        raise absent_samples_error(only_meta, set(ids), named)
    if rule is not None and not _enough(report, rule):
        wanted = (f"at least {rule[1]}" if rule[0] == "count" else
                  f"at least {rule[1]:.0%} of each side")
        raise TooFewMatched(
            f"Too few samples matched: {report._counts()}, fewer than {{min_matched}} asks ({wanted}); "
            f"{report._unmatched()}. "
            + _CHECK_IDS, min_matched=min_matched, **_CHECK_PARAMS)
    if report.n_matched and report.few:
        warnings.warn(FewMatchedWarning(
            f"Few samples matched: {report._counts()}, less than half of one side; {report._unmatched()}. "
            + _CHECK_IDS
            + " To make this an error, pass {min_matched}.", min_matched=FixError.ANY, **_CHECK_PARAMS),
            stacklevel=3)  # the caller of attach_metadata
    if not report.n_matched:
        raise ValueError(
            f"No sample id of the data is in {named}: the data have "
            f"{names_list(sorted(set(ids)), 5)}; the metadata have {names_list(sorted(set(meta_ids)), 5)}. "
            "Check the id column and the spelling of the ids."
        )


def _joined(dataset, metadata, ids, meta_ids, keep, added):
    """The rows ``keep`` of ``dataset`` (then ``added``, all-zero rows of samples it lacks) with the
    metadata's columns joined to its ``obs``."""
    import pandas as pd

    rows = np.asarray(keep, dtype=np.intp)
    all_rows = len(keep) == len(ids)
    X = dataset.X if all_rows else dataset.X[rows]
    kept_ids = [ids[i] for i in keep]
    if added:
        X = _with_zero_rows(X, len(added))
        kept_ids += added
    meta = metadata.copy()
    meta.index = pd.Index(meta_ids, name=metadata.index.name)
    obs = meta.loc[kept_ids]
    if dataset.obs is not None:
        old = dataset.obs if all_rows else dataset.obs.iloc[rows]
        clash = sorted(set(map(str, old.columns)) & set(map(str, obs.columns)))
        if clash:
            raise ValueError(
                f"The data already have per-sample columns {names_list(clash)} that the metadata "
                "also hold. Drop or rename them on one side before joining."
            )
        old = old.set_axis(obs.index[: len(keep)], axis=0).reindex(obs.index)
        obs = pd.concat([old, obs], axis=1)
    sample_ids = np.asarray(dataset.sample_ids)[rows]
    if added:
        sample_ids = np.concatenate([sample_ids.astype(object), np.array(added, dtype=object)])
    return replace(dataset, X=X, sample_ids=sample_ids, obs=obs)


def _with_zero_rows(X, n):
    """``X`` with ``n`` all-zero rows after its own (sparse stays sparse, in its format)."""
    import scipy.sparse as sp

    if sp.issparse(X):
        return sp.vstack([X, sp.csr_matrix((n, X.shape[1]), dtype=X.dtype)], format=X.format)
    if isinstance(X, np.ndarray):
        return np.concatenate([X, np.zeros((n, X.shape[1]), dtype=X.dtype)])
    raise TypeError(
        f"Samples absent from the data can be added as all-zero rows only to a matrix in memory, not to "
        f"{type(X).__name__}. Leave them out (absent='drop'), or convert the k-mer files with the "
        "metadata so that the store holds those rows."
    )
