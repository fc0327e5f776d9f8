"""The jobs ``convert`` (data files to a store) and ``demo`` (the bundled Golub data, ranked)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.messages import PythonText
from ..core.validation import FixUsageError

__all__ = ["Converted", "Demo", "convert", "demo", "golub_demo"]


@dataclass
class Converted:
    """What ``convert`` did: the store written, its shape, the join's report and the summary."""

    store: Path
    shape: tuple
    report: object = None
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


def _check_one_file(kinds, table, absent, dtype):
    """Refuse what a file other than k-mer counts cannot take: ``dtype="auto"``, and the metadata
    ``table`` or ``absent`` for a table (which keeps its own per-sample columns) or ``absent``
    without a metadata table."""
    if dtype == "auto":
        raise FixUsageError("{dtype} is for k-mer counts, whose largest count is known once read; a table "
                            "keeps float64 (the default), or pass the type its values fit, e.g. {fits}.",
                            owner="convert", dtype="auto",
                            fits=PythonText("dtype='uint8'", "uint8"))
    if kinds <= {"csv", "tsv", "parquet"} and (table is not None or absent):
        raise FixUsageError("{meta} and {absent} are for data without per-sample columns (k-mer counts, VCF, "
                            "PLINK, arrays); a table keeps its own per-sample columns with {keep}.",
                            owner="attach_metadata", meta=FixUsageError.ANY, absent=FixUsageError.ANY,
                            keep=FixUsageError.ANY)
    if table is None and absent:
        raise FixUsageError("{absent} says what becomes of the samples of {meta} that the data lack: it needs "
                            "{meta}.", owner="attach_metadata", absent=FixUsageError.ANY, meta=FixUsageError.ANY)


def convert(inputs, output, *, format=None, read_options=None, meta=None, id_column=None, meta_sep=None,
            dtype="auto", absent=None, chunk_bytes=None, force=False):
    """Read ``inputs`` and write them as one store ``output`` (``.gs.h5ad``): ``genosift convert``.

    Several inputs are combined only for k-mer count files (one per sample, or fsm-lite, SEER
    and pyseer tables); a list file or folder of per-sample dumps is one input. ``meta`` (joined
    on its ``id_column``) adds per-sample columns to data without any (k-mer counts, VCF, PLINK,
    arrays); a table keeps its own (``read_options["keep"]``). ``absent``: what becomes of the
    samples of ``meta`` that the data lack ("error", the default for k-mer counts; "drop" for
    other data; "zeros"). ``dtype``: the stored type ("auto": the smallest integer type that
    holds k-mer counts; tables keep float64 unless told). The other parameters are those of
    ``genosift.io.convert``.

    Returns
    -------
    Converted
    """
    from ..io import (
        attach_metadata,
        convert_dumps,
        convert_kmers,
        format_of,
        open_store,
        read,
        read_metadata,
        write_store,
    )
    from ..io import convert as convert_file
    from ..io.metadata import first_column_is_ids
    from ..io.store import SUFFIX
    from ..report.outputs import check_outputs
    from .inputs import check_declared

    started = time.perf_counter()
    inputs = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    options = dict(read_options or {})
    if not Path(output).name.lower().endswith(".h5ad"):
        raise FixUsageError(f"convert writes a store (HDF5), so its output needs the suffix {SUFFIX}: "
                            f"{str(output)!r} would not be read back as one. Name it for example "
                            f"{{output}}.", owner="convert",
                            output=f"{Path(output).name.split('.')[0] or 'data'}{SUFFIX}")
    check_declared([("output", output)], owner="convert", inputs=[("meta", meta)],
                   lists=[("inputs", path) for path in inputs])
    check_outputs([output], force=force, inputs=(*inputs, meta))  # before reading anything
    if meta is not None and not id_column and not first_column_is_ids(meta, sep=meta_sep):
        raise FixUsageError("{meta} needs {id_column}: the metadata column that holds the sample ids.",
                            owner="attach_metadata", meta=FixUsageError.ANY, id_column=FixUsageError.ANY)
    kinds = {format or format_of(path) for path in inputs}
    table = read_metadata(meta, id_column=id_column, sep=meta_sep) if meta is not None else None
    report = None
    if options and kinds <= {"kmers", "dumps"}:
        raise FixUsageError("{read_options} are for tables and variant files; k-mer counts take none of "
                            f"{sorted(options)}.", owner="convert", read_options=FixUsageError.ANY)
    if kinds == {"kmers"}:
        out, report = convert_kmers(inputs, output, metadata=table, overwrite=force, dtype=dtype,
                                    chunk_bytes=chunk_bytes, absent=absent or "error")
    elif kinds == {"dumps"} and len(inputs) == 1:  # a list file or a folder of per-sample dumps
        out, report = convert_dumps(inputs[0], output, metadata=table, overwrite=force, dtype=dtype,
                                    chunk_bytes=chunk_bytes, absent=absent or "error")
    elif len(inputs) == 1:
        _check_one_file(kinds, table, absent, dtype)
        if table is None:
            out = convert_file(inputs[0], output, format=format, overwrite=force, dtype=dtype,
                               chunk_bytes=chunk_bytes, **options)
        else:  # (a VCF, a PLINK fileset, an array): the phenotypes joined, then stored with the matrix
            data, report = attach_metadata(read(inputs[0], format=format, **options), table, absent=absent or "drop")
            out = write_store(data, output, dtype=dtype, overwrite=force, chunk_bytes=chunk_bytes)
    else:
        raise ValueError("Several inputs are combined only for k-mer count files; convert other files one at a time.")
    store = open_store(out)
    lines = [] if report is None else [str(report)]
    lines.append(f"Wrote {out}: {store.shape[0]} samples x {store.shape[1]} features"
                 f"{f', {store.nnz} non-zeros' if store.sparse else ''} in {time.perf_counter() - started:.1f} s")
    return Converted(Path(out), tuple(store.shape), report, lines)


@dataclass
class Demo:
    """What ``demo`` did: the Fisher ranking of the Golub genes, its table, the folder written and
    the summary (``lines``)."""

    result: object
    frame: object
    folder: Path
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


def golub_demo(*, fdr=0.05):
    """The ranking of ``demo``: the Golub ALL/AML genes by Fisher score, best first, with ANOVA F
    p-values and BH q-values (the same ranking) for the cut at ``fdr``, the class profiles and the
    probe descriptions.

    Returns ``(X, y, result, frame, provenance)``: the data, the Fisher ``ScoreResult``, the table
    (its ``selected`` column: q <= ``fdr``) and the provenance written beside it.
    """
    import pandas as pd

    from .. import __version__
    from ..io.datasets import golub_descriptions, load_golub
    from ..scoring import profile, score

    X, y, names = load_golub()
    fisher = score(X, y, method="fisher", feature_names=names)
    anova = score(X, y, method="anova")  # same ranking as fisher; gives p-values for the FDR cut
    selected = anova.qvalues <= fdr
    describe = golub_descriptions()
    frame = fisher.to_frame(sort=False)
    frame["pvalue"], frame["qvalue"] = anova.pvalues, anova.qvalues
    frame["selected"] = selected
    frame["description"] = [describe.get(n, "") for n in names]
    frame = pd.concat([frame, profile(X, y).columns()], axis=1)  # class means, diff_means, prevalence
    frame = frame.iloc[fisher.ranking].reset_index(drop=True)
    provenance = {**fisher.provenance(), "fdr_method": "anova", "fdr_alpha": fdr, "n_selected": int(selected.sum()),
                  "data": "Golub et al. (1999) ALL/AML training set", "genosift_version": __version__}
    return X, y, fisher, frame, provenance


def demo(output, *, fdr=0.05, top=10):
    """Rank the Golub ALL/AML genes by Fisher score and write ``ranking.tsv``, ``selected.tsv``
    (q <= ``fdr``) and ``provenance.json`` into the new folder ``output``: ``genosift demo``.
    ``lines`` shows the ``top`` genes.

    Returns
    -------
    Demo
    """
    import shutil

    from .. import __version__
    from ..core.files import fresh_folder, write_json, write_table

    start = time.perf_counter()
    X, y, fisher, frame, provenance = golub_demo(fdr=fdr)
    out = fresh_folder(output)
    try:
        write_table(frame, out / "ranking.tsv")
        write_table(frame[frame["selected"]], out / "selected.tsv")
        write_json(provenance, out / "provenance.json")
    except BaseException:  # the folder is this run's own: no half of a demo is left
        shutil.rmtree(out, ignore_errors=True)
        raise
    classes = ", ".join(f"{c}: {int((y == c).sum())}" for c in fisher.classes)
    lines = [f"genosift {__version__} demo: Golub ALL/AML leukemia, {X.shape[0]} samples ({classes}) x "
             f"{X.shape[1]} genes",
             f"Fisher score ranking; {provenance['n_selected']} genes pass FDR q <= {fdr} (ANOVA F p-values, BH)", ""]
    shown = frame.head(top)
    width = max(len(n) for n in shown["feature"])
    lines.append(f"{'rank':>4}  {'probe':<{width}}  {'fisher':>8}  {'q-value':>9}  description")
    for row in shown.itertuples():
        lines.append(f"{row.rank:>4}  {row.feature:<{width}}  {row.score:8.4f}  {row.qvalue:9.2e}  "
                     f"{row.description[:70]}")
    lines.append(f"\nWrote {out}/ranking.tsv, selected.tsv, provenance.json in {time.perf_counter() - start:.1f} s")
    return Demo(fisher, frame, out, lines)
