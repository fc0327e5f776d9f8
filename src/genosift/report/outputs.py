"""The tables ``score`` and ``select`` write: the ranking (built and written in pieces), the
selected rows, and the one writer of result tables with their JSON sidecars (TSV / CSV with every
number exact, or Parquet), published whole or not at all; checked before any work is done."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ..core.files import check_output, json_text, staged
from ..core.tabletext import write_delimited

#: Rows of a ranking table built and written at a time (``ranking_frames``).
RANKING_ROWS = 1 << 16


def ranking_frame(result, mask, prof, rows=None, patterns=None, lineage=None):
    """The ranking table of ``score``: the result's columns, ``selected`` (``mask``: what a rule
    selected, all False without one), the feature's
    ``pattern`` (with ``patterns``, a ``scoring.patterns.Patterns``; empty where not tested),
    the profile's columns (means, the signed effect, prevalence) and, with ``lineage`` (a
    ``scoring.lineage.LineageEffects``), ``lineage``, ``lineage_r`` and ``effect``, best feature
    first; or of the features ``rows`` (indices), in that order."""
    import pandas as pd

    rows = result.ranking if rows is None else np.asarray(rows, dtype=np.intp)
    frame = result.to_frame(rows=rows)
    frame["selected"] = mask[rows]
    if patterns is not None:
        from ..scoring.patterns import nullable

        ids = patterns.ids[rows]
        frame["pattern"] = nullable(ids)
        frame["pattern_size"] = nullable(np.where(ids >= 0, patterns.sizes[np.maximum(ids, 0)], -1))
    if prof is not None:
        frame = pd.concat([frame, prof.columns(rows)], axis=1)
    if lineage is not None:
        frame = pd.concat([frame, lineage.columns(rows).set_axis(frame.index, axis=0)], axis=1)
    return frame


def collapsed_ranking(result, patterns):
    """The ranking with one feature per pattern: the best-ranked feature of each (its
    representative), and every feature not tested, in ranking order."""
    ranking = result.ranking
    ids = patterns.ids[ranking]
    tested = ids >= 0
    _, first = np.unique(ids[tested], return_index=True)
    keep = ~tested
    keep[np.flatnonzero(tested)[first]] = True
    return ranking[keep]


def ranking_frames(result, mask, prof, *, batch=None, patterns=None, collapse=False, lineage=None):
    """The ranking table in consecutive pieces of ``batch`` rows (default ``RANKING_ROWS``), best
    first (for ``write_frame``: the table of millions of features is never held whole); with
    ``collapse``, one row per pattern (``collapsed_ranking``); ``lineage``: see ``ranking_frame``."""
    batch = RANKING_ROWS if batch is None else batch
    ranking = collapsed_ranking(result, patterns) if collapse else result.ranking
    for start in range(0, max(len(ranking), 1), batch):
        yield ranking_frame(result, mask, prof, ranking[start:start + batch], patterns, lineage)


def selected_frame(result, mask, prof, patterns=None, lineage=None):
    """The rows of the ranking table that ``mask`` selects, best first."""
    ranking = result.ranking
    return ranking_frame(result, mask, prof, ranking[mask[ranking]], patterns, lineage)


def selected_records(ranking):
    """The selected rows of a ranking table (:func:`ranking_frame`, :func:`selected_frame`) as JSON
    records: scores, class means, the signed effect, prevalence; NaN (no p-value) as null."""
    return [{k: None if isinstance(v, float) and v != v else v for k, v in row.items()}
            for row in ranking[ranking["selected"]].drop(columns="selected").to_dict("records")]


def input_digests(paths):
    """``{path: {"sha256": ...}}`` of the given input paths (``None`` entries left out)."""
    return {str(p): {"sha256": file_digest(p)} for p in paths if p}


class Meanwhile:
    """``func(*args)`` run in a daemon thread from now on; ``result()`` waits for its value (or
    raises its error). The checksums of a command's inputs (a store of tens of GB takes a minute
    to hash) are taken while its table is written on the other core; a command that fails meanwhile
    exits without waiting for them."""

    def __init__(self, func, *args):
        import threading

        self._out = {}

        def run():
            try:
                self._out["value"] = func(*args)
            except BaseException as exc:  # handed to the caller of result()
                self._out["error"] = exc

        self._thread = threading.Thread(target=run, name="genosift-meanwhile", daemon=True)
        self._thread.start()

    def result(self):
        self._thread.join()
        if "error" in self._out:
            raise self._out["error"]
        return self._out["value"]


def file_digest(path):
    """SHA-256 of a file (or of the files under a folder), to tie outputs to their input."""
    from ..core import engine

    path = Path(path)
    digest = hashlib.sha256()
    files = [f for f in (sorted(path.rglob("*")) if path.is_dir() else [path]) if f.is_file()]
    total = sum(f.stat().st_size for f in files) / 2**20
    buffer = bytearray(1 << 18)  # one buffer, read into: a few hundred KiB however large the input
    view = memoryview(buffer)
    with engine.progress(f"Checksum of {path.name}", total=total, unit="MiB") as bar:
        for f in files:
            with open(f, "rb") as fh:
                while size := fh.readinto(buffer):
                    digest.update(view[:size])
                    bar.advance(size / 2**20)
    return digest.hexdigest()


def check_outputs(paths, *, force, inputs=()):
    """Check before any work that the outputs can be written (see ``_files.check_output``)."""
    for path in paths:
        check_output(path, force=force, inputs=inputs)


TABLE_SUFFIXES = (".tsv", ".txt", ".tab", ".csv", ".parquet", ".pq")


def check_table_name(path):
    """The suffix of a table output must say its format: .tsv (.txt, .tab), .csv or .parquet."""
    if not Path(path).name.lower().endswith(TABLE_SUFFIXES):
        raise ValueError(f"The output {str(path)!r} has no table suffix: name it .tsv, .csv or .parquet "
                         "(the suffix chooses the format).")


def write_frame(frame, path, *, sidecar=None, provenance=None, force=True):
    """A DataFrame (or an iterable of DataFrames with the same columns, written one after the
    other as one table) as TSV / CSV (by suffix, every number exact) or Parquet, and its JSON
    sidecar if given: published together, whole, or not at all; existing files replaced only if
    ``force``. ``provenance`` may be a function, called once the table is written."""
    path = Path(path)
    check_table_name(path)
    name = path.name.lower()
    paths = [path] if sidecar is None else [path, Path(sidecar)]
    pieces = [frame] if hasattr(frame, "columns") else frame
    with staged(*paths, force=force) as temps:
        tmp = temps[0] if sidecar is not None else temps
        if name.endswith((".parquet", ".pq")):
            _write_parquet(pieces, tmp)
        else:  # in blocks of rows: the text of a ranking of millions of features is never held whole
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                for i, piece in enumerate(pieces):
                    write_delimited(piece, fh, sep="," if name.endswith(".csv") else "\t", header=i == 0)
        if sidecar is not None:
            temps[1].write_text(json_text(provenance() if callable(provenance) else provenance), encoding="utf-8")


def _write_parquet(pieces, path):
    """DataFrames as one Parquet file, a row group each (with the first one's schema)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    try:
        for piece in pieces:
            table = pa.Table.from_pandas(piece, preserve_index=False,
                                         schema=None if writer is None else writer.schema)
            if writer is None:  # a text column empty in the first piece is text, not of no type
                table = table.cast(pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f
                                              for f in table.schema], metadata=table.schema.metadata))
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()


#: The columns of genosift's tables that hold whole numbers (empty where there is none).
INTEGER_COLUMNS = frozenset({"rank", "pattern", "pattern_size", "start", "end", "gene_start", "gene_end",
                             "upstream_distance", "downstream_distance", "n_kmers", "n_patterns"})


#: The columns of genosift's tables that hold numbers.
NUMBER_COLUMNS = frozenset({"score", "statistic", "pvalue", "qvalue", "beta", "se", "af", "diff_means", "lineage_r"})

#: The columns of genosift's tables that hold text, whatever it looks like (a lineage named 3).
TEXT_COLUMNS = ("feature", "representative", "gene", "gene_id", "product", "lineage", "effect_kind")


def read_table(path, columns=None, *, need=(), what="a ranking table that genosift score writes"):
    """A table that ``write_frame`` wrote (TSV, CSV or Parquet, by suffix) read back exactly:
    every float64 to the bit, text cells such as ``NA`` kept as text, empty cells missing. Only
    ``columns`` (those present, when given) are read; a clear error when a column of ``need`` is
    absent."""
    import pandas as pd

    from ..io.reading import exact_floats, text_numbers

    path = Path(path)
    name = path.name.lower()
    parquet, sep = name.endswith((".parquet", ".pq")), "," if name.endswith(".csv") else "\t"
    if parquet:
        import pyarrow.parquet as pq

        present = pq.read_schema(path).names
    else:
        present = list(pd.read_csv(path, sep=sep, nrows=0).columns)
    missing = [c for c in need if c not in present]
    if missing:
        raise ValueError(f"{str(path)!r} has no {missing[0]!r} column: this reads {what} (its columns: "
                         f"{present[:12]}).")
    wanted = present if columns is None else [c for c in present if c in columns]
    if parquet:
        frame = pd.read_parquet(path, columns=wanted)
    else:
        text = {c: str for c in wanted if c in TEXT_COLUMNS}
        text.update({c: "Int64" for c in wanted if c in INTEGER_COLUMNS})
        try:
            frame = pd.read_csv(path, sep=sep, usecols=wanted, keep_default_na=False, na_values=[""], dtype=text,
                                **exact_floats())
        except (TypeError, ValueError) as exc:  # a whole-number column with other text
            raise ValueError(f"Cannot read {str(path)!r} as {what}: {exc}. Check the file.") from None
    for column in NUMBER_COLUMNS.intersection(frame.columns):
        if not pd.api.types.is_numeric_dtype(frame[column]):
            bad = text_numbers(frame[column]).isna() & frame[column].notna()
            raise ValueError(f"The column {column!r} of {str(path)!r} holds {frame[column][bad].iloc[0]!r} (row "
                             f"{int(np.flatnonzero(bad.to_numpy())[0]) + 1}), not a number: this reads {what}.")
    return frame


def pattern_pvalues(table):
    """One p-value per distinct pattern of a ranking table (its ``pattern`` and ``pvalue``
    columns): that of the pattern's first row, which every feature of the pattern shares (the
    same values give the same test); None without a ``pattern`` column or a row that has one."""
    if "pattern" not in table.columns:
        return None
    known = table["pattern"].notna().to_numpy()
    if not known.any():
        return None
    first = ~table["pattern"][known].duplicated().to_numpy()
    return table["pvalue"].to_numpy(dtype=float)[known][first]


def read_hits(path):
    """The hits table that ``genosift annotate`` writes (``read_table``), checked to hold the
    columns its plots read."""
    return read_table(path, need=["feature", "reference", "contig", "start", "end", "strand", "pvalue"],
                      what="a hits table that genosift annotate writes")
