"""The jobs ``score`` and ``select``: labelled samples in, a ranking table or the selected columns out.

Each checks every option and output before it reads a file, scores the training samples through
their ``Source`` (a store streamed, other data in memory), profiles them, writes its outputs
atomically with their provenance, and returns a ``Ranking`` that says what it did.
"""
from __future__ import annotations

import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.messages import FixError, PythonText
from ..core.validation import FixUsageError
from .inputs import Covariates

__all__ = ["Ranking", "as_usage", "checked_options", "score", "select"]


@dataclass
class Ranking:
    """What ``score`` or ``select`` did.

    Attributes
    ----------
    result : ScoreResult
        The scores of the training samples.
    mask : ndarray of bool
        The features selected (every tested one without a rule).
    outputs : list of Path
        The files written (the table and its JSON sidecar).
    notes : list of str
        What was dropped, matched or written on the way.
    lines : list of str
        The summary the command prints: the run, the notes and the ten best features.
    seconds : float
    """

    result: object
    mask: np.ndarray
    outputs: list
    notes: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    seconds: float = 0.0

    def __str__(self):
        return "\n".join(self.lines)


def as_usage(exc):
    """``exc`` (a bad value of a job's parameter) as a usage error, spelled as it was."""
    from ..core.messages import Spelled
    from ..core.validation import UsageError

    if isinstance(exc, Spelled):  # the method's options are the job's ``method_options``
        params = {k: FixUsageError.ANY if k == "method_options" else v for k, v in exc.params.items()}
        return FixUsageError(exc.template, owner=exc.owner, **params)
    return UsageError(str(exc))


def checked_options(spec, method_options, min_af, max_af, covariates):
    """The method's options (defaults filled in), checked with the allele-frequency bounds and
    whether the method takes ``covariates``: values that do not fit are the call's usage errors,
    raised before any file is read."""
    from ..scores import check_af, check_options, refuse_covariates

    try:
        check_af(min_af, max_af)
        opts = check_options(spec, dict(method_options or {}))
        if covariates:
            refuse_covariates(spec)
    except (TypeError, ValueError) as exc:
        raise as_usage(exc) from None
    return opts


def _checked(samples, output, *, method, method_options, top, fdr, min_af, max_af, covariates, force, rule):
    """The method, the scoring options and the outputs, checked before any file is read."""
    from ..outputs import check_outputs, check_table_name
    from ..scores import get_method

    spec = get_method(method)
    if rule and top is None and fdr is None:
        raise FixUsageError("select needs a rule: {top} or {fdr}.", owner="select", top=FixUsageError.ANY,
                            fdr=FixUsageError.ANY)
    if fdr is not None and not spec.has_pvalues:
        raise FixError(f"{{fdr}} needs p-values, and method '{spec.name}' has none. Use {{top}}.",
                       owner="select_mask", fdr=FixError.ANY, top=FixError.ANY)
    covariates = covariates if covariates is not None else Covariates()
    opts = checked_options(spec, method_options, min_af, max_af, covariates)
    out = Path(output)
    sidecar = out.with_name(out.name + ".json")
    check_table_name(out)
    inputs = (*samples.inputs, *covariates.inputs)
    covariates.check_outputs(force=force, inputs=inputs)
    check_outputs([out, sidecar], force=force, inputs=inputs)
    return spec, opts, covariates, out, sidecar, inputs


def _scored(samples, spec, opts, covariates, *, min_af, max_af, chunk_bytes, scheduler, force, folder, top, fdr):
    """Read, label, score on the training samples, select and profile."""
    from ..dask import use_scheduler
    from ..scores import check_af
    from ..scoring.source import StoreRows
    from .labelled import score_labelled, select_mask

    labelled = samples.load(layout="csc" if spec.streaming == "blocks" else None)
    frame = covariates.of(labelled, rows=labelled.train, chunk_bytes=chunk_bytes, force=force)
    if scheduler and not isinstance(labelled.X_train, StoreRows):
        raise FixError(f"{{scheduler}} scores a store (.gs.h5ad) on Dask workers, which read it themselves; "
                       f"{str(samples.data)!r} is read into memory here. Convert it once with {{write_store}}, or "
                       "leave out {scheduler}.", owner="score", scheduler=FixError.ANY,
                       write_store=PythonText("genosift.io.write_store"))
    with use_scheduler(scheduler):  # None: the local engine
        result, prof = score_labelled(labelled, method=spec.name, opts=opts, bounds=check_af(min_af, max_af),
                                      chunk_bytes=chunk_bytes, covariates=frame, folder=folder)
    mask = select_mask(result, top=top, fdr=fdr)
    return labelled, result, mask, prof


def _provenance(labelled, result, mask, samples, inputs, *, top, fdr, started, command, digests):
    from .labelled import run_provenance

    return run_provenance(labelled, result, mask, inputs=inputs, target=samples.target, top=top, fdr=fdr,
                          started=started, command=command, digests=digests)


def _lines(result, mask, labelled, started, written, prof):
    """The summary of a run: what was scored, the notes, the ten best features (with their
    direction when the profile tells it) and where the outputs went."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [f"{result.method}: {result.n_samples} samples x {result.n_features} features; "
             f"{int(mask.sum())} selected; {time.perf_counter() - started:.1f} s, peak memory {peak:.0f} MB"]
    lines += [f"  {note}" for note in labelled.notes]
    if result.covariates:
        lines.append(f"  adjusted for {len(result.covariates)} covariate(s): {', '.join(result.covariates)}")
    frame = result.to_frame(rows=result.ranking[:10])
    for j, row in zip(result.ranking, frame.itertuples()):
        p = "" if np.isnan(row.pvalue) else f"  q={row.qvalue:.2e}"
        way = "" if prof is None or not prof.direction(j) else f"  {prof.direction(j)}"
        lines.append(f"  {row.rank:>3}  {row.feature}  {row.score:.6g}{p}{way}")
    lines.append(f"Wrote {written}")
    return lines


def score(samples, output, *, method="fisher", method_options=None, top=None, fdr=None, min_af=None, max_af=None,
          covariates=None, chunk_bytes=None, scheduler=None, force=False, command=None):
    """Score every feature of the labelled ``samples`` and write the ranking: ``genosift score``.

    Parameters
    ----------
    samples : Samples
        The data file and its labels; the training samples are scored.
    output : str or path
        The ranking table (``.tsv``, ``.csv`` or ``.parquet``), one row per feature, best first,
        with the class profile columns and a ``selected`` column; ``<output>.json`` beside it
        holds the provenance.
    method, method_options : str, dict
        A method of ``genosift.methods()`` and its options (``genosift.scores.describe``).
    top, fdr : optional
        The selection rule for the ``selected`` column: the ``top`` best, or q-value <= ``fdr``.
    min_af, max_af : float, optional
        The allele-frequency filter (see ``genosift.score``).
    covariates : Covariates, optional
        What to adjust for (the methods of ``genosift.scores.covariate_methods()``).
    chunk_bytes, scheduler : optional
        The reads of a store, and the Dask scheduler that scores it.
    force : bool
        Replace outputs that genosift wrote before (never an input, never another program's file).
    command : str, optional
        The command line to record in the provenance.

    Returns
    -------
    Ranking
    """
    from ..outputs import Meanwhile, input_digests, ranking_frames, write_frame

    started = time.perf_counter()
    spec, opts, covariates, out, sidecar, inputs = _checked(
        samples, output, method=method, method_options=method_options, top=top, fdr=fdr, min_af=min_af, max_af=max_af,
        covariates=covariates, force=force, rule=False)
    labelled, result, mask, prof = _scored(samples, spec, opts, covariates, min_af=min_af, max_af=max_af,
                                           chunk_bytes=chunk_bytes, scheduler=scheduler, force=force,
                                           folder=out.absolute().parent, top=top, fdr=fdr)
    digests = Meanwhile(input_digests, inputs)  # the inputs' checksums, taken while the table is written
    with closing(prof):
        write_frame(ranking_frames(result, mask, prof), out, sidecar=sidecar, force=force,
                    provenance=lambda: _provenance(labelled, result, mask, samples, inputs, top=top, fdr=fdr,
                                                   started=started, command=command, digests=digests.result()))
        lines = _lines(result, mask, labelled, started, f"{out} and {sidecar.name}", prof)
    return Ranking(result, mask, [out, sidecar], list(labelled.notes), lines, time.perf_counter() - started)


def select(samples, output, *, method="fisher", method_options=None, top=None, fdr=None, min_af=None, max_af=None,
           covariates=None, chunk_bytes=None, scheduler=None, force=False, command=None):
    """Score the labelled ``samples`` and write the selected columns: ``genosift select``.

    The parameters are those of ``score``, with a rule required (``top`` or ``fdr``); ``output``
    is a table of the samples (rows, with their ids and labels) by the selected features (best
    first), and its sidecar lists the features selected with their scores.

    Returns
    -------
    Ranking
    """
    from ..outputs import Meanwhile, input_digests, selected_frame, selected_records, write_frame
    from .labelled import reduced_frame

    started = time.perf_counter()
    spec, opts, covariates, out, sidecar, inputs = _checked(
        samples, output, method=method, method_options=method_options, top=top, fdr=fdr, min_af=min_af, max_af=max_af,
        covariates=covariates, force=force, rule=True)
    labelled, result, mask, prof = _scored(samples, spec, opts, covariates, min_af=min_af, max_af=max_af,
                                           chunk_bytes=chunk_bytes, scheduler=scheduler, force=force,
                                           folder=out.absolute().parent, top=top, fdr=fdr)
    digests = Meanwhile(input_digests, inputs)
    with closing(prof):
        columns = np.flatnonzero(mask)
        columns = columns[np.argsort(result.ranks[columns], kind="stable")]  # best first, as in the ranking
        reduced = reduced_frame(labelled, columns, result.names_of(columns), chunk_bytes=chunk_bytes)
        selected = selected_records(selected_frame(result, mask, prof))

        def provenance():
            return {**_provenance(labelled, result, mask, samples, inputs, top=top, fdr=fdr, started=started,
                                  command=command, digests=digests.result()),
                    "selected_features": selected}

        write_frame(reduced, out, sidecar=sidecar, provenance=provenance, force=force)
        lines = _lines(result, mask, labelled, started, f"{out} and {sidecar.name}", prof)
    return Ranking(result, mask, [out, sidecar], list(labelled.notes), lines, time.perf_counter() - started)
