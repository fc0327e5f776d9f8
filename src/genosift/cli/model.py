"""`genosift evaluate`, `predict` and `report`: models over a grid of k, applied, and shown."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from .data import command_line, covariates_of, labelled_samples, scoring_options
from .spelling import read_options


def evaluate_command(args):
    from .. import pipeline
    from ..core.files import check_output
    from ..workflow import evaluate, write_results
    from ..workflow.screened import can_screen, evaluate_store

    started = time.perf_counter()
    out = Path(args.output)
    inputs = (args.data, args.meta, args.covariates)
    check_output(out, force=args.force, inputs=inputs, folder=True)  # before any work
    from ..scores import get_method

    scoring = scoring_options(args, get_method(args.method))
    labelled = labelled_samples(args, unlabelled=True)
    covariates = covariates_of(args, labelled)
    others = labelled.unlabelled  # samples with data but no label: predicted by the final model
    held_out = args.train_groups or args.val_groups
    groups = pipeline.fold_groups(labelled, args.group) if args.group and not held_out else None
    options = dict(method=args.method, ks=args.k, model=args.model, model_options=args.model_option or {}, cv=args.cv,
                   groups=groups, validation=~labelled.train if held_out else None, metric=args.metric,
                   sample_ids=labelled.dataset.sample_ids, feature_names=labelled.dataset.feature_names,
                   random_state=args.seed, n_jobs=args.threads, binary=args.binary,
                   score_params=scoring["options"] or None, min_af=scoring["min_af"], max_af=scoring["max_af"],
                   covariates=covariates, unlabelled_ids=None if others is None else others.sample_ids)
    if isinstance(labelled.dataset.X, pipeline.StoreRows) and can_screen(get_method(args.method)):
        # a store stays on disk: the rankings are scored from it, only their top features are read
        ev, X, _ = evaluate_store(labelled.dataset.X, labelled.y, unlabelled=None if others is None else others.X,
                                  folder=out.resolve().parent, **options)
    else:
        X = pipeline.in_memory(labelled.dataset.X)
        ev = evaluate(X, labelled.y, unlabelled=None if others is None else pipeline.in_memory(others.X), **options)
    ev.notes.extend(labelled.notes)
    provenance = {"command": command_line(), "inputs": pipeline.input_digests(inputs), "target": args.target,
                  "seconds": round(time.perf_counter() - started, 3)}
    try:
        write_results(ev, out, X=X, y=labelled.y, provenance=provenance, overwrite=args.force, inputs=inputs,
                      ploidy=labelled.dataset.ploidy)
    finally:
        close = getattr(ev.profile, "close", None)  # the store's profile, in a temporary file
        if close is not None:
            close()
    _print_evaluation(ev, len(labelled.y), out, started)
    return 0


def _print_evaluation(ev, n_samples, out, started):
    """What `evaluate` prints: the split, the notes, the metrics per (options,) k and the best of them."""
    from .. import __version__
    from ..workflow import METRICS

    grid = "options" in ev.curve  # a grid of model options: one row per (options, k)
    rows = ev.curve.set_index(["options", "k"] if grid else "k")
    best = rows.loc[(ev.best_options, ev.best_k) if grid else ev.best_k]
    split = ev.cv["kind"] == "validation"  # one train/validation split: one value per k, no spread
    n_val = int((~ev.train).sum())
    print(f"genosift {__version__} evaluate: {ev.method} ranking, {ev.model_name} model"
          + (f" over {ev.grid.size} settings of its options" if grid else "")
          + f", {n_samples} samples x {ev.result.n_features} features, "
          + (f"one train/validation split ({int(ev.train.sum())} training, {n_val} validation samples)" if split
             else f"{ev.cv['folds']}-fold cross-validation"))
    for note in ev.notes:
        print(f"  {note}")
    width = max([len("options"), *map(len, ev.grid.labels)]) if grid else 0
    print(("  metrics on the validation samples" if split else "  mean +/- s.d. over the folds")
          + "\n  " + (f"{'options':<{width}}  " if grid else "") + f"{'k':>7}  "
          + "  ".join(f"{m:>17}" for m in METRICS))
    for row in ev.curve.to_dict("records"):
        cells = [f"{row[m + '_mean']:.3f}" + ("" if split else f" +/- {row[m + '_std']:.3f}") for m in METRICS]
        chosen = row["k"] == ev.best_k and (not grid or row["options"] == ev.best_options)
        print("  " + (f"{row['options']:<{width}}  " if grid else "") + f"{row['k']:>7}  "
              + "  ".join(f"{c:>17}" for c in cells) + ("  <- best" if chosen else ""))
    how = (f"({best[ev.metric + '_mean']:.3f}), picked on the {n_val} validation samples of this one split" if split
           else f"({best[ev.metric + '_mean']:.3f}, the mean over the folds)")
    print(f"Best k = {ev.best_k}" + (f" with {ev.best_options}" if grid else "") + f" by {ev.metric} {how}; "
          "top features: " + ", ".join(str(f) for f in ev.result.top(min(5, ev.best_k))))
    if ev.unlabelled is not None:
        print(f"Predicted the {len(ev.unlabelled)} sample(s) without a label with the final model: "
              "unlabelled_predictions.tsv")
    print(f"Wrote {out}/ (tables, model.skops, run.json) in {time.perf_counter() - started:.1f} s")
    return 0


def predict_command(args):
    from .. import pipeline
    from ..core.validation import UsageError
    from ..io import format_of, read
    from ..workflow import held_out_metrics, load_model, predict, predict_store

    if args.meta and not (args.id and args.target):
        raise UsageError("--meta needs --id (the sample-id column) and --target (the true labels) to compare.")
    if args.absent_samples and not args.meta:
        raise UsageError("--absent-samples says what becomes of the samples of --meta that the data lack: pass "
                         "--meta (with --id and --target) too, or leave it out.")
    out = Path(args.output)
    pipeline.check_table_name(out)
    pipeline.check_outputs([out], force=args.force, inputs=(args.data, args.meta, args.model))
    saved = load_model(args.model)
    in_table = args.target and not args.meta and pipeline.is_table(args.data, args.format)
    # in a table, the true labels may be a column of the data table itself
    options = read_options(args, extra_keep=(args.target,) if in_table else ())
    if (args.format or format_of(args.data)) == "store":  # only the model's features are read
        data = pipeline.read_store_rows(args.data, options)
        frame, notes = predict_store(saved, data.X, sample_ids=data.sample_ids, fill_missing=args.fill_missing)
    else:
        data = read(args.data, format=args.format, **options)
        frame, notes = predict(saved, data.X, data.feature_names, sample_ids=data.sample_ids,
                               fill_missing=args.fill_missing, ploidy=data.ploidy)
    truth = None
    if in_table or args.meta:
        kind = args.format or format_of(args.data)
        absent = args.absent_samples or ("error" if kind in ("kmers", "dumps") else "drop")
        truth = pipeline.true_labels(frame["sample"], args.target, data=data, data_path=args.data, meta=args.meta,
                                     id_column=args.id, meta_sep=args.meta_sep, absent=absent)
    if truth is not None:
        frame.insert(2, "true", truth)
        notes.append(_held_out_note(held_out_metrics(frame, frame["true"]), args.target))
    pipeline.write_frame(frame, out, force=args.force)
    print(f"Predicted {len(frame)} sample(s) with the {saved['model']} model on {len(saved['selected'])} "
          f"feature(s) ({saved['method']}, k = {saved['k']}).")
    for note in notes:
        print(f"  {note}")
    print(f"Wrote {out}")
    return 0


def _held_out_note(m, target):
    """What `predict` prints about its accuracy: on held-out samples only, with both counts."""
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


def report_command(args):
    from ..report import make_report

    try:
        report = make_report(args.results, args.output, png_dir=args.png_dir, overwrite=args.force)
    except ImportError as exc:  # matplotlib is optional: the message says how to install it
        print(f"genosift: error: {exc}", file=sys.stderr)
        return 1
    print(f"Wrote {report.html} and {len(report.pngs)} figures (PNG) in {report.pngs[0].parent}")
    return 0

