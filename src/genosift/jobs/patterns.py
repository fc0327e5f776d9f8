"""The job ``patterns``: the distinct patterns of the features tested, and the threshold over them."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.validation import FixUsageError, renamed_parameters

__all__ = ["PatternCount", "patterns"]


@dataclass
class PatternCount:
    """What ``patterns`` did: the ``Patterns`` (``genosift.scoring.patterns``), the threshold,
    the table written (or None) and the summary the command prints (``lines``)."""

    patterns: object
    alpha: float
    threshold: float
    output: object = None
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


@renamed_parameters("chunk_bytes")
def patterns(samples, output=None, *, binary=True, min_af=None, max_af=None, alpha=0.05, force=False):
    """Count the distinct patterns of the features of ``samples`` and the Bonferroni threshold
    ``alpha / patterns`` over them: ``genosift patterns`` (pyseer's ``count_patterns``).

    Parameters
    ----------
    samples : Samples
        The data (a store read within ``samples.chunk_bytes``); with a ``target``, the patterns are
        those of the samples with a label (the training samples of ``score``, the samples of the
        analysis), else of every sample.
    output : str or path, optional
        A table of every feature's pattern (empty where not tested) and allele frequency.
    binary : bool, default True
        Presence/absence patterns (pyseer's for k-mers); False: patterns of the values.
    min_af, max_af : float, optional
        Count the features carried by a share of the samples in this range only (those tested).
    alpha : float
        The family-wise significance level the threshold divides.
    force : bool
        Replace an output genosift wrote.

    Returns
    -------
    PatternCount
    """
    from ..report.outputs import check_outputs, check_table_name, write_frame
    from ..scores import check_af
    from .inputs import check_declared
    from .ranking import as_usage

    started = time.perf_counter()
    try:
        bounds = check_af(min_af, max_af, "count_patterns")
        if not 0 < alpha < 1:
            raise ValueError(f"The 'alpha' parameter of patterns must be a number in (0, 1). Got {alpha!r} instead.")
    except ValueError as exc:
        raise as_usage(exc) from None
    if output is not None:
        check_table_name(output)
        check_declared([("output", output)], owner="patterns", samples=samples)
        check_outputs([output], force=force, inputs=samples.inputs)
    samples.refuse_scheduler("patterns")
    found, n_samples, notes = _count(samples, binary, bounds)
    threshold = found.threshold(alpha)
    if output is not None:
        write_frame(found.to_frame(), Path(output), force=force)
    what = "presence/absence" if binary else "value"
    tested = (f"{found.n_tested:,} of {found.n_features:,} features inside the allele-frequency range "
              f"[{bounds[0]:g}, {bounds[1]:g}]" if bounds is not None else f"{found.n_features:,} features")
    lines = [f"{found.n_patterns:,} distinct {what} patterns among {tested}, over {n_samples:,} samples "
             f"({time.perf_counter() - started:.1f} s)"]
    lines += [f"  {note}" for note in notes]
    lines.append(f"Bonferroni threshold over the patterns: p < {threshold!r} (alpha {alpha:g} / {found.n_patterns:,})")
    if output is not None:
        lines.append(f"Wrote {output}")
    return PatternCount(found, alpha, threshold, output, lines)


def _count(samples, binary, bounds):
    """``(Patterns, samples counted, notes)``: of the labelled samples, or of every sample."""
    from ..scoring.forms import source_patterns
    from .labelled import labelled_source

    samples = replace(samples, binary=binary)
    if samples.target is None:
        if samples.meta is not None:
            raise FixUsageError("{meta} joins the labels of {target}: pass {target} to count the patterns of the "
                                "labelled samples, or leave out {meta} to count those of every sample.",
                                owner="load_labelled", meta=FixUsageError.ANY, target=FixUsageError.ANY)
        from ..io import format_of
        from ..sources import as_source, on_disk
        from .labelled import read_dataset

        dataset = read_dataset(samples, samples.format or format_of(samples.data), dict(samples.read_options))
        data = (dataset.X.source() if on_disk(dataset.X)  # within the budget the rows keep
                else as_source(dataset.X, feature_names=dataset.feature_names, chunk_bytes=samples.chunk_bytes))
        found = source_patterns(data, bounds)
        return found, found.n_samples, []
    labelled = samples.load()
    found = source_patterns(labelled_source(labelled), bounds)
    return found, found.n_samples, list(labelled.notes)
