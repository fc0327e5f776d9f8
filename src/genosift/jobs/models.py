"""The jobs ``evaluate`` and ``predict``: models over a grid of k, written as a results folder, and
applied to new samples."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.validation import FixUsageError, renamed_parameters
from .inputs import Covariates, check_declared
from .ranking import checked_options

__all__ = ["Evaluated", "Predicted", "Reported", "evaluate", "predict", "report"]


@dataclass
class Evaluated:
    """What ``evaluate`` did: the ``Evaluation`` (``genosift.workflow``), the results folder and
    the summary the command prints (``lines``)."""

    evaluation: object
    folder: Path
    lines: list = field(default_factory=list)
    seconds: float = 0.0

    def __str__(self):
        return "\n".join(self.lines)


@dataclass
class Predicted:
    """What ``predict`` did: the predictions (one row per sample, with the true labels when
    given), the notes, the table written and the summary the command prints (``lines``)."""

    frame: object
    notes: list
    output: Path
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


@dataclass
class Reported:
    """What ``report`` did: the HTML file, the PNG files and the summary (``lines``)."""

    html: Path
    pngs: list
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


@renamed_parameters("threads", "chunk_bytes", "metric")
def evaluate(samples, output, *, method="fisher", method_options=None, ks=(10, 100, 1000), model="logistic",
             model_options=None, cv=5, scoring="balanced_accuracy", seed=0, n_jobs=None, min_af=None, max_af=None,
             covariates=None, force=False, command=None):
    """Rank, select and model the labelled ``samples`` for every k of ``ks``, scored inside each
    training fold, and write the results folder ``output``: ``genosift evaluate``.

    The samples of ``samples`` whose groups are held out (``val_groups``, or a ``train_groups``
    choice) form one validation split; otherwise ``cv`` folds, grouped by ``group_column`` when
    it is given. Samples with data but no label are predicted by the final model. A store stays
    on disk for the methods that can screen it (``genosift.workflow.screened``): only the top
    features of each ranking are read. The other parameters are those of
    ``genosift.workflow.evaluate`` (``seed`` its ``random_state``; ``n_jobs``: ``--threads``) and
    of ``genosift.jobs.score`` (``samples.chunk_bytes``: the memory budget of a store's reads and of
    k-mer text or dumps held in memory).

    Returns
    -------
    Evaluated
    """
    from ..core.files import check_output, together
    from ..report.outputs import input_digests
    from ..scores import get_method
    from ..sources import in_memory
    from ..workflow import write_results
    from ..workflow.evaluation import Asked, evaluate_asked
    from ..workflow.screened import can_screen, evaluate_store
    from .labelled import check_budget_applies, fold_groups

    started = time.perf_counter()
    out = Path(output)
    covariates = covariates if covariates is not None else Covariates()
    inputs = (*samples.inputs, *covariates.inputs)
    declared = check_declared([("output", out)], owner="evaluate", samples=samples, covariates=covariates,
                              folders=("output",))
    check_output(out, force=force, inputs=inputs, folder=True)  # before any work
    spec = get_method(method)
    opts = checked_options(spec, method_options, min_af, max_af, covariates)
    covariates.check_outputs(force=force, inputs=inputs)
    with together(*declared):  # the results folder and the coordinates, or neither
        samples.refuse_scheduler("evaluate")
        labelled = samples.load(unlabelled=True)
        check_budget_applies(labelled)
        frame = covariates.of(labelled, force=force)
        others = labelled.unlabelled  # samples with data but no label: predicted by the final model
        held_out = samples.train_groups or samples.val_groups
        groups = fold_groups(labelled, samples.group_column) if samples.group_column and not held_out else None
        asked = Asked(method=spec.name, ks=ks, model=model, model_options=model_options or {}, cv=cv, groups=groups,
                      validation=~labelled.train if held_out else None, metric=scoring,
                      sample_ids=labelled.dataset.sample_ids, feature_names=labelled.dataset.feature_names,
                      random_state=seed, n_jobs=n_jobs, binary=samples.binary, method_options=opts or None,
                      min_af=min_af, max_af=max_af, covariates=frame,
                      unlabelled_ids=None if others is None else others.sample_ids)
        if labelled.on_disk and can_screen(spec):
            # a store stays on disk: the rankings are scored from it, only their top features are read
            ev, X, _ = evaluate_store(labelled.dataset.X, labelled.y, asked,
                                      unlabelled=None if others is None else others.X, folder=out.resolve().parent)
        else:
            X = in_memory(labelled.dataset.X)
            ev = evaluate_asked(X, labelled.y, asked, unlabelled=None if others is None else in_memory(others.X))
        ev.notes.extend(labelled.notes)
        provenance = {"command": command, "inputs": input_digests(inputs), "target": samples.target,
                      "seconds": round(time.perf_counter() - started, 3)}
        try:
            write_results(ev, out, X=X, y=labelled.y, provenance=provenance, overwrite=force, inputs=inputs,
                          ploidy=labelled.dataset.ploidy)
        finally:
            close = getattr(ev.profile, "close", None)  # the store's profile, in a temporary file
            if close is not None:
                close()
    return Evaluated(ev, out, evaluation_lines(ev, len(labelled.y), out, started), time.perf_counter() - started)


def evaluation_lines(ev, n_samples, out, started):
    """What ``evaluate`` says: the split, the notes, the metrics per (options,) k and the best of them."""
    from .. import __version__
    from ..workflow import METRICS

    grid = "options" in ev.curve  # a grid of model options: one row per (options, k)
    rows = ev.curve.set_index(["options", "k"] if grid else "k")
    best = rows.loc[(ev.best_options, ev.best_k) if grid else ev.best_k]
    split = ev.cv["kind"] == "validation"  # one train/validation split: one value per k, no spread
    n_val = int((~ev.train).sum())
    lines = [f"genosift {__version__} evaluate: {ev.method} ranking, {ev.model_name} model"
             + (f" over {ev.grid.size} settings of its options" if grid else "")
             + f", {n_samples} samples x {ev.result.n_features} features, "
             + (f"one train/validation split ({int(ev.train.sum())} training, {n_val} validation samples)" if split
                else f"{ev.cv['folds']}-fold cross-validation")]
    lines += [f"  {note}" for note in ev.notes]
    width = max([len("options"), *map(len, ev.grid.labels)]) if grid else 0
    lines.append("  metrics on the validation samples" if split else "  mean +/- s.d. over the folds")
    lines.append("  " + (f"{'options':<{width}}  " if grid else "") + f"{'k':>7}  "
                 + "  ".join(f"{m:>17}" for m in METRICS))
    for row in ev.curve.to_dict("records"):
        cells = [f"{row[m + '_mean']:.3f}" + ("" if split else f" +/- {row[m + '_std']:.3f}") for m in METRICS]
        chosen = row["k"] == ev.best_k and (not grid or row["options"] == ev.best_options)
        lines.append("  " + (f"{row['options']:<{width}}  " if grid else "") + f"{row['k']:>7}  "
                     + "  ".join(f"{c:>17}" for c in cells) + ("  <- best" if chosen else ""))
    how = (f"({best[ev.metric + '_mean']:.3f}), picked on the {n_val} validation samples of this one split" if split
           else f"({best[ev.metric + '_mean']:.3f}, the mean over the folds)")
    lines.append(f"Best k = {ev.best_k}" + (f" with {ev.best_options}" if grid else "") + f" by {ev.metric} {how}; "
                 "top features: " + ", ".join(str(f) for f in ev.result.top(min(5, ev.best_k))))
    if ev.unlabelled is not None:
        lines.append(f"Predicted the {len(ev.unlabelled)} sample(s) without a label with the final model: "
                     "unlabelled_predictions.tsv")
    lines.append(f"Wrote {out}/ (tables, model.skops, run.json) in {time.perf_counter() - started:.1f} s")
    return lines


def _check_predict(data, format, meta, id_column, target, absent, assemblies, max_contig):
    """Refuse the options of ``predict`` that need another (``meta`` its ``id_column`` and
    ``target``, ``absent`` its ``meta``, ``max_contig`` ``assemblies``), a bad ``max_contig``, and
    a FASTA file given as data without ``assemblies``."""
    from ..io.metadata import first_column_is_ids
    from ..io.references import fasta_stem

    if meta is not None and not ((id_column or first_column_is_ids(meta)) and target):
        raise FixUsageError("{meta} needs {id_column} (the sample-id column) and {target} (the true labels) to "
                            "compare.", owner="true_labels", meta=FixUsageError.ANY, id_column=FixUsageError.ANY,
                            target=FixUsageError.ANY)
    if absent is not None and meta is None:
        raise FixUsageError("{absent} says what becomes of the samples of {meta} that the data lack: pass {meta} "
                            "(with {id_column} and {target}) too, or leave it out.", owner="true_labels",
                            absent=FixUsageError.ANY, meta=FixUsageError.ANY, id_column=FixUsageError.ANY,
                            target=FixUsageError.ANY)
    if max_contig is not None and not assemblies:
        raise FixUsageError("{max_contig} bounds the contigs of genome assemblies: pass {assemblies} too, or leave it "
                            "out.", owner="predict", max_contig=FixUsageError.ANY, assemblies=FixUsageError.ANY)
    if assemblies:
        from ..io.references import check_max_contig

        check_max_contig(max_contig, "predict")
    if not assemblies and format is None and fasta_stem(data)[1]:
        raise FixUsageError(f"{str(data)!r} is named as a FASTA file: to count the model's k-mers in genome "
                            "assemblies, pass {assemblies}.", owner="predict", assemblies=FixUsageError.ANY)


def predict(data, model, output, *, format=None, read_options=None, meta=None, id_column=None, meta_sep=None,
            target=None, absent=None, fill_missing=False, assemblies=False, max_contig=None, force=False):
    """Apply the saved model (an ``evaluate`` results folder's ``model.skops``) to the samples of
    ``data`` and write one row per sample to the table ``output``: ``genosift predict``.

    ``target``: the true labels, a column of ``meta`` (joined on its ``id_column``) or, without
    ``meta``, of the data table itself; the held-out accuracy is then reported, leaving out the
    samples the model was trained on. ``absent``: what becomes of the samples of ``meta`` that
    the data lack ("error", the default for k-mer counts, or "drop"). ``fill_missing``: features
    of the model that the data lack are read as 0 (else an error naming them). A store is read
    for the model's features only. ``assemblies``: ``data`` is one genome's FASTA or a list of
    ``sample<TAB>path.fa`` lines, in which the model's k-mers are counted (both strands, as
    fsm-lite counts them; ``genomics.annotation.count_kmers``), each contig of at most ``max_contig``
    bases (default ``MAX_CONTIG``, 256 Mi; a longer one is refused).

    Returns
    -------
    Predicted
    """
    from ..io import format_of, read
    from ..report.outputs import check_outputs, check_table_name, write_frame
    from ..workflow import held_out_metrics, load_model, predict_store
    from ..workflow import predict as predict_matrix
    from .labelled import is_table, read_store_rows, true_labels

    _check_predict(data, format, meta, id_column, target, absent, assemblies, max_contig)
    out = Path(output)
    check_table_name(out)
    check_declared([("output", out)], owner="predict", inputs=[("meta", meta), ("model", model)],
                   lists=[("data", data)], genomes=assemblies)
    check_outputs([out], force=force, inputs=(data, meta, model))
    saved = load_model(model)
    in_table = bool(target) and meta is None and not assemblies and is_table(data, format)
    options = dict(read_options or {})
    if in_table:  # in a table, the true labels may be a column of the data table itself
        options["keep"] = tuple(dict.fromkeys([target, *options.get("keep", ())]))
    if assemblies and (format is not None or options):
        raise FixUsageError("{assemblies} reads genomes (FASTA): {format} and the options of data tables do not "
                            "apply.", owner="predict", assemblies=FixUsageError.ANY, format=FixUsageError.ANY)
    kind = "assemblies" if assemblies else format or format_of(data)
    if assemblies:
        import numpy as np

        from ..genomics.annotation import count_kmers
        from ..io import Dataset

        features = [str(f) for f in saved["features"]]
        samples, counts = count_kmers(features, data, max_contig=max_contig, owner="the model")
        dataset = Dataset(counts, np.array(samples, dtype=object), np.array(features, dtype=object))
        frame, notes = predict_matrix(saved, counts, features, sample_ids=samples, fill_missing=fill_missing)
        notes.insert(0, f"the model's {len(features):,} k-mers counted in {len(samples):,} genome(s), both strands")
    elif kind == "store":  # only the model's features are read
        stored = read_store_rows(data, options)
        frame, notes = predict_store(saved, stored.X, sample_ids=stored.sample_ids, fill_missing=fill_missing)
        dataset = stored
    else:
        dataset = read(data, format=format, **options)
        frame, notes = predict_matrix(saved, dataset.X, dataset.feature_names, sample_ids=dataset.sample_ids,
                                      fill_missing=fill_missing, ploidy=dataset.ploidy)
    if in_table or meta is not None:
        absent = absent or ("error" if kind in ("kmers", "dumps") else "drop")
        truth = true_labels(frame["sample"], target, data=dataset, data_path=data, meta=meta, id_column=id_column,
                            meta_sep=meta_sep, absent=absent)
        if truth is not None:
            frame.insert(2, "true", truth)
            notes.append(_held_out_note(held_out_metrics(frame, frame["true"]), target))
    write_frame(frame, out, force=force)
    lines = [f"Predicted {len(frame)} sample(s) with the {saved['model']} model on {len(saved['selected'])} "
             f"feature(s) ({saved['method']}, k = {saved['k']})."]
    lines += [f"  {note}" for note in notes]
    lines.append(f"Wrote {out}")
    return Predicted(frame, notes, out, lines)


def _held_out_note(m, target):
    """What ``predict`` says about its accuracy: on held-out samples only, with both counts."""
    if not m["n_known"]:
        return f"no sample has a known {target!r}: no accuracy."
    if m["n_training"] is None:
        return (f"accuracy on the {m['n_known']} sample(s) with a known {target!r}: {m['accuracy']:.3f} "
                "(training samples may be among them: the model does not list its training samples)")
    training = (f"{m['n_training']} sample(s) used in training (in_training = True) left out"
                if m["n_training"] else "none of them used in training")
    if not m["n_held_out"]:
        return (f"no held-out accuracy: all {m['n_known']} sample(s) with a known {target!r} were used in "
                "training (in_training = True), and the model's accuracy on them says nothing of new data.")
    return (f"held-out accuracy {m['accuracy']:.3f} (balanced {m['balanced_accuracy']:.3f}) on the "
            f"{m['n_held_out']} sample(s) with a known {target!r} not used in training; {training}.")


def report(results, output, *, png_dir=None, hits=None, ranking=None, force=False):
    """The HTML report of an ``evaluate`` results folder, with its figures as PNG files:
    ``genosift report`` (``genosift.report.make_report``; it needs matplotlib, which the
    default install brings); with the ``ranking`` of ``score``, its QQ plot, and with the
    ``hits`` table that ``annotate`` made of it, its Manhattan plot too.

    Returns
    -------
    Reported
    """
    from ..report import make_report

    made = make_report(results, output, png_dir=png_dir, overwrite=force, hits=hits, ranking=ranking)
    return Reported(made.html, made.pngs, [f"Wrote {made.html} and {len(made.pngs)} figures (PNG) in "
                                           f"{made.pngs[0].parent}"])
