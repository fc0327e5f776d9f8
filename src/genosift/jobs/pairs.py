"""The job ``pairs``: every pair of features screened for the classes they explain together."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PairRanking", "pairs"]


@dataclass
class PairRanking:
    """What ``pairs`` did: the ``PairScores`` (``genosift.scoring.pairs``), the table written and
    the summary the command prints (``lines``)."""

    result: object
    output: object
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


def _pair_lines(found, method, threshold, alpha, seconds, notes):
    """What ``pairs`` says of the pairs ``found``: how many were screened, the run's ``notes``, the
    Bonferroni threshold (p < ``threshold`` at level ``alpha``) and the ten best pairs."""
    lines = [f"{method} of every pair: {found.n_pairs:,} pairs of {found.n_candidates:,} distinct patterns (of "
             f"{found.n_features:,} features), {found.n_samples} samples; {seconds:.1f} s"]
    lines += [f"  {note}" for note in notes]
    if found.pvalue is not None:
        lines.append(f"  Bonferroni threshold over the pairs: p < {threshold:.3g} (alpha {alpha:g}); "
                     f"{int((found.pvalue < threshold).sum())} of the {found.first.size} pairs kept pass it")
    for row in found.to_frame().head(10).itertuples(index=False):
        test = "" if found.pvalue is None else f"  p={row.pvalue:.2e}"
        lines.append(f"  {row.rank:>3}  {row.feature_1} x {row.feature_2}  synergy {row.synergy:.4g}  "
                     f"joint {row.joint:.4g}{test}")
    return lines


def pairs(samples, output, *, method="mi", top=1000, min_af=None, max_af=None, permutations=0, seed=0, alpha=0.05,
          triples=0, triples_output=None, bins=None, force=False, command=None):
    """Screen every pair of the features of the labelled ``samples`` and write the ``top`` pairs:
    ``genosift pairs`` (``genosift.score_pairs`` on the training samples).

    Parameters
    ----------
    samples : Samples
        The data (read as presence/absence, a block of columns at a time: a store is never
        loaded whole) and its class labels.
    output : str or path
        The table of the pairs kept (``.tsv``, ``.csv`` or ``.parquet``), best first, with
        ``<output>.json`` beside it: the pairs screened, the Bonferroni threshold over them.
    method, top, min_af, max_af, permutations, seed, bins :
        As ``genosift.score_pairs``.
    alpha : float
        The family-wise level of the Bonferroni threshold reported.
    triples, triples_output : int, str or path
        Extend the ``triples`` best pairs by every other feature (``genosift.score_pairs``) and
        write the ``top`` triples to ``triples_output``.
    force : bool
        Replace outputs that genosift wrote before.
    command : str, optional
        The command line to record in the provenance.

    Returns
    -------
    PairRanking
    """
    from ..core.files import together
    from ..core.validation import FixUsageError
    from ..report.outputs import check_outputs, check_table_name, input_digests, write_frame
    from ..scoring.pairs import check_pair_options, score_pairs
    from .inputs import check_declared
    from .ranking import as_usage

    started = time.perf_counter()
    try:
        check_pair_options(method=method, top=top, permutations=permutations, triples=triples, bins=bins)
    except (TypeError, ValueError) as exc:
        raise as_usage(exc) from None
    out = Path(output)
    sidecar = out.with_name(out.name + ".json")
    check_table_name(out)
    if bool(triples) != (triples_output is not None):
        raise FixUsageError("{triples} extends the best pairs into triples, which {triples_output} writes: pass "
                            "both, or neither.", owner="pairs", triples=FixUsageError.ANY,
                            triples_output=FixUsageError.ANY)
    written = [out, sidecar] + ([Path(triples_output)] if triples_output is not None else [])
    if triples_output is not None:
        check_table_name(triples_output)
    check_declared([("output", out), ("output", sidecar), ("triples_output", triples_output)], owner="pairs",
                   samples=samples)
    check_outputs(written, force=force, inputs=samples.inputs)
    samples.refuse_scheduler("pairs")
    labelled = samples.load()
    found = score_pairs(labelled.X_train, labelled.y_train, method=method, top=top, min_af=min_af,
                        max_af=max_af, feature_names=labelled.dataset.feature_names, permutations=permutations,
                        seed=seed, triples=triples, bins=bins)
    threshold = found.bonferroni(alpha)
    with together(*written):  # the pairs, their sidecar and the triples, or none
        write_frame(found.to_frame(), out, sidecar=sidecar, force=force, provenance=lambda: {
            "command": command, "inputs": input_digests(samples.inputs), "target": samples.target, "method": method,
            "n_samples": found.n_samples, "n_features": found.n_features, "n_candidates": found.n_candidates,
            "n_pairs": found.n_pairs, "top": top, "alpha": alpha, "bonferroni": threshold,
            "permutations": permutations, "seed": seed, "bins": bins, "notes": labelled.notes,
            "seconds": round(time.perf_counter() - started, 3)})
        lines = _pair_lines(found, method, threshold, alpha, time.perf_counter() - started, labelled.notes)
        if found.triples is not None:
            write_frame(found.triples, Path(triples_output), force=force)
            for row in found.triples.head(5).itertuples(index=False):
                lines.append(f"  triple {row.rank:>3}  {row.feature_1} x {row.feature_2} x {row.feature_3}  synergy "
                             f"{row.synergy:.4g} over its best pair  joint {row.joint:.4g}")
    lines.append(f"Wrote {out} and {sidecar.name}" + (f", and {triples_output}" if found.triples is not None else ""))
    return PairRanking(found, out, lines)
