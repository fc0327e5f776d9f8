"""The job ``annotate``: where the k-mers of a ranking lie in reference genomes and which genes they hit."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.messages import printable
from ..core.validation import FixUsageError

__all__ = ["Annotated", "annotate"]


@dataclass
class Annotated:
    """What ``annotate`` did: the ``genomics.Annotation``, the files written and the summary the
    command prints (``lines``)."""

    annotation: object
    files: list
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


def annotate(ranking, references, output, *, genes=None, top=None, pvalue=None, every=False, effect="auto",
             nearby=False, max_contig=None, max_occurrences=None, force=False):
    """Find the k-mers of a ranking in reference genomes and name the genes they hit:
    ``genosift annotate``.

    Parameters
    ----------
    ranking : str or path
        A table with a ``feature`` column of k-mers: the ranking ``genosift score`` writes (TSV,
        CSV or Parquet); its other columns (``pvalue``, ``beta``, ``pattern``...) are kept.
    references : str or path
        The references file: one line per genome, ``fasta<TAB>gff<TAB>ref|draft``.
    output : str or path
        The hits table: a row per occurrence and gene (``genomics.annotation.annotate``).
    genes : str or path, optional
        The gene summary table: k-mers, patterns, lowest p-value and effects per gene.
    top, pvalue, every : optional
        The k-mers annotated: the ``top`` best ranked, those with a p-value below ``pvalue``, or
        ``every`` one; by default those the ranking marks ``selected``.
    effect, nearby : optional
        The column of effects summarised per gene, and whether k-mers between genes count
        towards their neighbours (see ``genomics.annotation.annotate``).
    max_contig : int, optional
        The longest contig of a reference's FASTA read, in bases (default ``MAX_CONTIG``, 256 Mi);
        a longer one is refused.
    max_occurrences : int, optional
        The occurrences of a k-mer kept in each reference (default ``MAX_OCCURRENCES``, 10,000;
        0 keeps every one), with a warning for a k-mer that has more.
    force : bool
        Replace outputs genosift wrote.

    Returns
    -------
    Annotated
    """
    from ..core.files import check_apart, together
    from ..genomics.annotation import annotate as find
    from ..genomics.annotation import check_max_occurrences
    from ..io.references import check_max_contig, read_references
    from ..report.outputs import check_outputs, check_table_name, read_table, write_frame

    started = time.perf_counter()
    check_max_contig(max_contig, "annotate")  # before any file is read
    check_max_occurrences(max_occurrences, "annotate")
    if sum(x is not None and x is not False for x in (top, pvalue, every or None)) > 1:
        raise FixUsageError("annotate takes one choice of k-mers: {top}, {pvalue} or {every}.", owner="annotate",
                            top=FixUsageError.ANY, pvalue=FixUsageError.ANY, every=FixUsageError.ANY)
    outputs = [Path(output)] + ([Path(genes)] if genes is not None else [])
    for path in outputs:
        check_table_name(path)
    refs = read_references(references)
    listed = [("references", f, True) for r in refs for f in (r.fasta, r.gff) if f is not None]
    check_apart([("output", output), ("genes", genes)], [("ranking", ranking), ("references", references), *listed],
                owner="annotate")
    check_outputs(outputs, force=force)
    table = read_table(ranking, need=["feature"])
    chosen, rule = _chosen(table, top, pvalue, every)
    found = find(table[chosen].reset_index(drop=True), refs, effect=effect, nearby=nearby, max_contig=max_contig,
                 max_occurrences=max_occurrences)
    with together(*outputs):  # both tables or neither
        write_frame(found.hits, output, force=force)
        if genes is not None:
            write_frame(found.genes, genes, force=force)
    n_hits = int(found.hits["reference"].notna().sum())
    in_genes = found.hits.loc[found.hits["gene_id"].notna(), "feature"].nunique()
    lines = [f"{found.n_kmers:,} k-mers ({rule}) searched in {len(refs)} reference(s): {found.n_found:,} found, "
             f"{n_hits:,} occurrence(s), {in_genes:,} k-mer(s) in {len(found.genes):,} gene(s) "
             f"({time.perf_counter() - started:.1f} s)"]
    if found.n_kmers > found.n_found:
        lines.append(f"  {found.n_kmers - found.n_found:,} k-mer(s) found in no reference (rows with an empty "
                     "reference)")
    for row in found.genes.head(5).itertuples(index=False):
        best = f", lowest p = {row.min_pvalue:.3g}" if hasattr(row, "min_pvalue") else ""
        lines.append(printable(f"  {row.gene} ({row.gene_id}, {row.reference}:{row.contig}): {row.n_kmers:,} "
                               f"k-mer(s){best}"
                               + (f", {row.product}" if isinstance(row.product, str) and row.product else "")))
    lines.append("Wrote " + " and ".join(str(p) for p in outputs))
    return Annotated(found, outputs, lines)


def _chosen(table, top, pvalue, every):
    """Which rows of the ranking are annotated, and the rule in words."""
    if every:
        return np.ones(len(table), dtype=bool), "every row"
    if top is not None:
        if "rank" in table.columns:
            return table["rank"].to_numpy() <= top, f"the top {top:,}"
        return np.arange(len(table)) < top, f"the first {top:,}"
    if pvalue is not None:
        if "pvalue" not in table.columns:
            raise FixUsageError("{pvalue} compares p-values, and this ranking has none: use {top}.", owner="annotate",
                                pvalue=FixUsageError.ANY, top=FixUsageError.ANY)
        with np.errstate(invalid="ignore"):
            return table["pvalue"].to_numpy(dtype=float) < pvalue, f"p < {pvalue:g}"
    if "selected" not in table.columns:
        raise FixUsageError("This table has no 'selected' column: choose the k-mers with {top}, {pvalue} or {every}.",
                            owner="annotate", top=FixUsageError.ANY, pvalue=FixUsageError.ANY, every=FixUsageError.ANY)
    chosen = table["selected"].astype(str).str.lower().isin(["true", "1"]).to_numpy()
    if not chosen.any():
        raise FixUsageError("The ranking selects no feature: choose the k-mers with {top}, {pvalue} or {every}.",
                            owner="annotate", top=FixUsageError.ANY, pvalue=FixUsageError.ANY, every=FixUsageError.ANY)
    return chosen, "selected"
