"""The job ``pangenome``: every gene of a pan-genome table against every trait, by Fisher's exact
test and the pairwise comparisons on the isolates' tree (``genosift.genomics.pangenome``)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["PangenomeRun", "pangenome"]

_OWNER = "pangenome"


@dataclass
class PangenomeRun:
    """What ``pangenome`` did: the ``overview`` across traits (a DataFrame, a row per trait: its
    isolates, genes tested, genes passing and best gene), the files written and the summary the
    command prints (``lines``)."""

    overview: object
    outputs: list
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


def trait_values(frame):
    """The trait columns of ``frame`` as a float64 (samples, traits) array: 0, 1 and NaN where a cell
    is missing (pandas' own, ``NA``...) or one of the metadata tables' missing marks
    (``genosift.io.metadata.MISSING_MARKS``: ``-``, ``.``, blanks); any other value is refused,
    naming the trait and sample."""
    import pandas as pd

    from ..io.metadata import MISSING_MARKS

    out = np.full(frame.shape, np.nan)
    for j, name in enumerate(frame.columns):
        column = frame[name]
        text = column.astype("string").str.strip()
        missing = column.isna().to_numpy() | text.isin(list(MISSING_MARKS)).fillna(True).to_numpy(dtype=bool)
        numbers = pd.to_numeric(text.where(~missing), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~missing & ~np.isin(numbers, (0.0, 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"The trait {name!r} holds {column.iloc[i]!r} for the sample {frame.index[i]!r} "
                             f"({int(bad.sum())} such cell(s)): a pan-genome trait holds 1 (has it), 0 (lacks it) "
                             "or a missing value (an empty cell, NA, - or .). "
                             "Code the trait as 0/1, or score a numeric trait with `genosift score`.")
        out[:, j] = np.where(missing, np.nan, numbers)
    return out


def pangenome(samples, output, *, tree=None, tree_out=None, threshold=0.05, permutations=0, seed=0, alpha=0.05,
              scoary_pairs=False, overview=None, force=False, command=None):
    """Test every gene of the pan-genome table of ``samples`` against each of its traits and write
    one table per trait and an overview across them: ``genosift pangenome``.

    Parameters
    ----------
    samples : Samples
        The gene table (Roary's or Panaroo's ``gene_presence_absence.csv`` or ``.Rtab``, or any 0/1
        data with isolates in rows) and its traits table (``meta``: isolates in the first column,
        traits as 0/1 with missing values allowed); ``target`` one trait, a list, or ``"all"``.
    output : str or path
        The table of each trait (``.tsv``, ``.csv`` or ``.parquet``), ``{target}`` where the trait's
        name goes when there are several; a JSON sidecar beside each.
    tree : str or path, optional
        The isolates' phylogeny (Newick) for the pairwise comparisons; by default the UPGMA tree of
        the isolates' Hamming distances over the genes that vary.
    tree_out : str or path, optional
        Write the UPGMA tree built (Newick).
    threshold : float, default=0.05
        The naive p-value at most which a gene is written (and compared pairwise); 1 writes every
        gene tested.
    permutations : int, default=0
        Permutations of the trait for the empirical p-value of the pairwise statistic of each gene
        written that passes the false discovery rate ``alpha`` and whose best-case pairwise p is at
        most ``alpha`` (0: none, else at least 10); ``seed`` seeds them.
    alpha : float, default=0.05
        The level of the overview's counts (Bonferroni and Benjamini-Hochberg) and of the genes
        given an empirical p-value.
    scoary_pairs : bool, default=False
        Count the supporting and opposing pairs by Scoary 1.6's rule (``genosift.genomics.pairwise.
        pairwise_comparisons``' ``scoary_pairs``) to reproduce its numbers; by default the most among
        the largest sets of independent pairs.
    overview : str or path, optional
        The overview table (default: ``output`` with ``overview`` for ``{target}``, or
        ``<output>.overview.tsv`` for one trait).
    force : bool
        Replace outputs that genosift wrote before.
    command : str, optional
        The command line recorded in the provenance.

    Returns
    -------
    PangenomeRun
    """
    from ..core.files import together
    from ..genomics.pangenome import pangenome_traits
    from ..report.outputs import Meanwhile, check_outputs, check_table_name, input_digests
    from ..sources import on_disk
    from .labelled import load_traits

    started = time.perf_counter()
    samples.refuse_scheduler(_OWNER)
    if tree is not None and tree_out is not None:
        raise _usage("{tree_out} writes the UPGMA tree built when no {tree} is given: pass one of them.",
                     tree_out=True, tree=True)
    dataset, frame, notes = load_traits(samples)
    if on_disk(dataset.X):
        raise _usage("pangenome tests a gene table held in memory (its counts come from two products with the "
                     "traits): give the table itself (gene_presence_absence.csv, .Rtab, CSV/TSV), not a store.")
    names = [str(c) for c in frame.columns]
    outs, overview = _outputs(output, names, overview)
    written = [p for out in outs for p in (out, _sidecar(out))] + [overview] + ([Path(tree_out)] if tree_out else [])
    for path in [*outs, overview]:
        check_table_name(path)
    check_outputs(written, force=force, inputs=samples.inputs + ((tree,) if tree else ()))
    values = trait_values(frame)
    asked = {"threshold": threshold, "permutations": permutations, "seed": seed, "alpha": alpha,
             "scoary_pairs": scoary_pairs}
    digests = Meanwhile(input_digests, [*samples.inputs, tree])  # hashed once, beside the work
    with together(*written):  # every output, the UPGMA tree's too, or none
        phylogeny, tree_note = _tree(dataset, tree, tree_out, force=force)
        found = pangenome_traits(dataset.X, values, names=names, feature_names=dataset.feature_names,
                                 tree=phylogeny, sample_ids=np.asarray(dataset.sample_ids, dtype=object), **asked)
        run = PangenomeRun(_written(found, outs, overview, dataset, digests=digests, command=command, force=force,
                                    asked={**asked, "tree": None if tree is None else str(tree)}), written)
    run.lines = _lines(run, dataset, notes, tree_note, asked, time.perf_counter() - started)
    run.lines.append(f"Wrote {len(outs):,} table(s) ({outs[0]}{' ...' if len(outs) > 1 else ''}) and {overview}")
    return run


def _written(found, outs, overview, dataset, *, digests, command, force, asked):
    """Write each trait's table (``found``: the traits' results, in the order of ``outs``) and the
    overview; the overview, a DataFrame."""
    from ..report.outputs import write_frame

    rows = []
    for trait, out in zip(found, outs):
        _write_trait(trait, out, dataset, digests=digests, command=command, force=force, asked=asked)
        rows.append(_overview_row(trait, asked["alpha"]))
    frame = _overview_frame(rows)
    write_frame(frame, overview, force=force)
    return frame


def _usage(text, **names):
    from ..core.validation import FixUsageError

    return FixUsageError(text, owner=_OWNER, **{name: FixUsageError.ANY for name in names})


def _sidecar(out):
    return out.with_name(out.name + ".json")


def _outputs(output, names, overview):
    """The table of each trait and the overview's path."""
    from .ranking import TARGET_FIELD, target_outputs

    if len(names) > 1 or TARGET_FIELD in str(output):
        outs = [Path(p) for p in target_outputs(output, names, owner=_OWNER)]
        if overview is None and "overview" in names:
            raise _usage("A trait is named 'overview', where the overview table would go: name the overview's "
                         "file with {overview}.", overview=True)
        default = Path(str(output).replace(TARGET_FIELD, "overview"))
    else:
        outs = [Path(output)]
        default = outs[0].with_name(outs[0].name + ".overview.tsv")
    overview = Path(overview) if overview is not None else default
    if overview in outs:
        raise _usage("{overview} names a trait's table: give the overview another file.", overview=True)
    return outs, overview


def _tree(dataset, tree, tree_out, *, force):
    """The isolates' tree: read from ``tree``, or the UPGMA tree of the gene table (written to
    ``tree_out``), and a note saying which."""
    from ..genomics.trees import read_tree, upgma_tree, write_newick

    if tree is not None:
        return read_tree(tree), f"tree: {tree}"
    built = upgma_tree(dataset.X, sample_ids=np.asarray(dataset.sample_ids, dtype=object))
    if tree_out is not None:
        write_newick(built, tree_out, force=force)
    return built, "tree: UPGMA of the isolates' Hamming distances over the genes that vary" + (
        f", written to {tree_out}" if tree_out else "")


def _annotated(table, dataset):
    """``table`` with the genes' annotation columns (``dataset.var``, a gene table's) after ``feature``."""
    var = getattr(dataset, "var", None)
    if var is None or table is None or not len(var.columns):
        return table
    notes = var.reindex(table["feature"].to_numpy()).reset_index(drop=True)
    notes.columns = [str(c) for c in notes.columns]
    return table.iloc[:, :1].join(notes).join(table.iloc[:, 1:])


def _write_trait(found, out, dataset, *, digests, command, asked, force):
    """Write the table of one trait and its sidecar."""
    import pandas as pd

    from ..report.outputs import write_frame

    table = found.table if found.table is not None else pd.DataFrame({"feature": []})
    table = _annotated(table, dataset)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    write_frame(table, out, sidecar=_sidecar(out), force=force, provenance=lambda: {
        "command": command, "inputs": digests.result(), "target": found.name,
        "method": "fisher_exact", "n_samples": found.n_samples, "n_pos": found.n_pos, "n_neg": found.n_neg,
        "n_tested": found.n_tested, **asked, "skipped": found.skipped})


def _overview_row(found, alpha):
    """One trait's line of the overview: its isolates, genes tested and passing, and its best gene."""
    table = found.table
    row = {"trait": found.name, "n_samples": found.n_samples, "n_pos": found.n_pos, "n_neg": found.n_neg,
           "n_tested": found.n_tested, "n_reported": 0 if table is None else len(table),
           "n_bonferroni": 0, "n_fdr": 0, "best_feature": "", "best_pvalue": np.nan, "best_bonferroni": np.nan,
           "best_qvalue": np.nan, "skipped": found.skipped or ""}
    if table is not None and len(table):
        best = table.iloc[0]
        row.update(n_bonferroni=int((table["bonferroni"] <= alpha).sum()), n_fdr=int((table["qvalue"] <= alpha).sum()),
                   best_feature=best["feature"], best_pvalue=best["pvalue"], best_bonferroni=best["bonferroni"],
                   best_qvalue=best["qvalue"])
        for column in ("pairs_max", "pairs_supporting", "pairs_opposing", "pairwise_p_worst", "empirical_p"):
            if column in table.columns:
                row[f"best_{column}"] = best[column]
    return row


def _overview_frame(rows):
    import pandas as pd

    return pd.DataFrame(rows)


def _lines(run, dataset, notes, tree_note, asked, seconds):
    """What ``pangenome`` prints: the data, the tree, each trait's best gene (the first 20 traits)
    and how many traits have a gene passing."""
    threshold, alpha = asked["threshold"], asked["alpha"]
    n, p = dataset.X.shape
    frame = run.overview
    lines = [f"pangenome: {p:,} genes x {n:,} isolates, {len(frame):,} trait(s); Fisher's exact test, "
             f"genes of p <= {threshold:g} written; {seconds:.1f} s", f"  {tree_note}"]
    lines += [f"  {note}" for note in notes]
    for row in frame.head(20).itertuples(index=False):
        if row.skipped:
            lines.append(f"  {row.trait}: not tested, {row.skipped}")
        elif not row.n_reported:
            lines.append(f"  {row.trait}: {row.n_tested:,} genes tested, none of p <= {threshold:g}")
        else:
            lines.append(f"  {row.trait}: {row.n_tested:,} genes tested; best {row.best_feature} "
                         f"p={row.best_pvalue:.3g} "
                         f"(Bonferroni {row.best_bonferroni:.3g}); {row.n_bonferroni} gene(s) pass Bonferroni, "
                         f"{row.n_fdr} the FDR at {alpha:g}")
    if len(frame) > 20:
        lines.append(f"  ... and {len(frame) - 20:,} more traits (the overview lists them all)")
    passing = int((frame["n_bonferroni"] > 0).sum())
    lines.append(f"{passing:,} of {len(frame):,} trait(s) have a gene passing Bonferroni at {alpha:g}"
                 + ("" if passing else ": no gene passes for any trait"))
    return lines
