"""The ``genosift`` command: a thin shell over the library (no arithmetic here).

Exit codes: 0 success, 1 data error, 2 usage error.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from ._files import interrupted
from ._validation import UsageError
from .cli_options import cli_message
from .cli_options import read_options as _read_options


def _methods(args):
    from .scores import describe, methods

    if getattr(args, "name", None):  # one method: what it computes, its task, p-values, reference, options
        print(describe(args.name))
        return 0
    table = methods()[["task", "classes", "pvalues", "streaming", "summary"]]
    import pandas as pd

    with pd.option_context("display.max_colwidth", 80, "display.width", 160):
        print(table.to_string())
    return 0


def _demo(args):
    from . import __version__
    from .datasets import golub_descriptions, load_golub
    from .report import fresh_folder, write_json, write_table
    from .scores import score

    start = time.perf_counter()
    X, y, names = load_golub()
    fisher = score(X, y, method="fisher", feature_names=names)
    anova = score(X, y, method="anova")  # same ranking as fisher; gives p-values for the FDR cut
    selected = anova.qvalues <= args.fdr
    describe = golub_descriptions()

    frame = fisher.to_frame(sort=False)
    frame["pvalue"], frame["qvalue"] = anova.pvalues, anova.qvalues
    frame["selected"] = selected
    frame["description"] = [describe.get(n, "") for n in names]
    import pandas as pd

    from .profiles import profile

    frame = pd.concat([frame, profile(X, y).columns()], axis=1)  # class means, diff_means, prevalence
    frame = frame.iloc[fisher.ranking].reset_index(drop=True)

    out = fresh_folder(args.output)
    try:
        write_table(frame, out / "ranking.tsv")
        write_table(frame[frame["selected"]], out / "selected.tsv")
        write_json(
            {**fisher.provenance(), "fdr_method": "anova", "fdr_alpha": args.fdr,
             "n_selected": int(selected.sum()), "data": "Golub et al. (1999) ALL/AML training set",
             "genosift_version": __version__},
            out / "provenance.json",
        )
    except BaseException:  # the folder is this run's own: no half of a demo is left
        import shutil

        shutil.rmtree(out, ignore_errors=True)
        raise
    classes = ", ".join(f"{c}: {int((y == c).sum())}" for c in fisher.classes)
    print(f"genosift {__version__} demo: Golub ALL/AML leukemia, {X.shape[0]} samples ({classes}) x {X.shape[1]} genes")
    print(f"Fisher score ranking; {int(selected.sum())} genes pass FDR q <= {args.fdr} (ANOVA F p-values, BH)\n")
    top = frame.head(args.top)
    width = max(len(n) for n in top["feature"])
    print(f"{'rank':>4}  {'probe':<{width}}  {'fisher':>8}  {'q-value':>9}  description")
    for row in top.itertuples():
        print(f"{row.rank:>4}  {row.feature:<{width}}  {row.score:8.4f}  {row.qvalue:9.2e}  {row.description[:70]}")
    print(f"\nWrote {out}/ranking.tsv, selected.tsv, provenance.json in {time.perf_counter() - start:.1f} s")
    return 0


def _score_job(args):
    """Shared by `score` and `select`: read, label, score on the training samples."""
    from . import jobs
    from .scores import get_method

    spec = get_method(args.method)
    if args.fdr is not None and not spec.has_pvalues:
        raise ValueError(f"--fdr needs p-values, and method '{spec.name}' has none. Use --top K.")
    scoring = _scoring_options(args, spec)  # before any file is read
    labelled = _labelled(args)
    if args.scheduler and not isinstance(labelled.X_train, jobs.StoreRows):
        raise ValueError(f"--scheduler scores a store (.gs.h5ad) on Dask workers, which read it themselves; "
                         f"{args.data!r} is read into memory here. Convert it once with `genosift convert`, "
                         "or leave out --scheduler.")
    from .dask import use_scheduler

    with use_scheduler(args.scheduler):  # None: the local engine
        result = jobs.score_labelled(labelled, method=spec.name, chunk_bytes=args.chunk_bytes, **scoring)
    mask = jobs.select_mask(result, top=args.top, fdr=args.fdr)
    prof = jobs.profile_labelled(labelled, method=spec.name, chunk_bytes=args.chunk_bytes)
    return labelled, result, mask, prof


def _scoring_options(args, spec):
    """``--min-af`` / ``--max-af`` and ``--method-option`` of `score`, `select` and `evaluate`,
    checked against each other and against the method's declared options (a usage error, exit 2)."""
    from .scores import check_af, check_option_values

    try:
        check_af(args.min_af, args.max_af)
    except ValueError as exc:
        raise UsageError(cli_message(exc)) from None
    options = {}
    for key, value in args.method_option or []:
        if isinstance(value, str) and value.lower() in ("true", "false", "none"):  # as typed in a shell
            value = {"true": True, "false": False, "none": None}[value.lower()]
        options[key] = value
    if options:
        declared = spec.options
        listed = ", ".join(f"{k} (default {v!r})" for k, v in declared.items())
        unknown = sorted(set(options) - set(declared))
        if unknown:
            raise UsageError(f"--method-option {unknown[0]}: method '{spec.name}' has no option {unknown[0]!r}; "
                             + (f"its options are {listed}" if declared else "it takes no options")
                             + f". See `genosift methods {spec.name}`.")
        try:
            check_option_values(spec, options)
        except (ValueError, TypeError) as exc:
            given = " ".join(f"{k}={v!r}" for k, v in options.items())
            raise UsageError(f"--method-option {given}: {exc} Method '{spec.name}' takes {listed}; see "
                             f"`genosift methods {spec.name}`.") from None
    return {"min_af": args.min_af, "max_af": args.max_af, "options": options}


def _provenance(args, labelled, result, mask, started):
    from . import jobs

    inputs = [p for p in (args.data, args.meta) if p]
    return {
        **result.provenance(),
        "command": " ".join(["genosift", *sys.argv[1:]]) if sys.argv and sys.argv[0].endswith("genosift") else None,
        "inputs": {str(p): {"sha256": jobs.file_digest(p)} for p in inputs},
        "target": args.target,
        "selection": {"top": args.top, "fdr": args.fdr, "n_selected": int(mask.sum())},
        "samples_used": [str(s) for s in labelled.dataset.sample_ids[labelled.train]],
        "class_counts": {str(c): int((labelled.y_train == c).sum()) for c in np.unique(labelled.y_train)},
        "notes": labelled.notes,
        "seconds": round(time.perf_counter() - started, 3),
    }


def _summary(result, mask, labelled, started, out, prof=None):
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{result.method}: {result.n_samples} samples x {result.n_features} features; "
          f"{int(mask.sum())} selected; {time.perf_counter() - started:.1f} s, peak memory {peak:.0f} MB")
    for note in labelled.notes:
        print(f"  {note}")
    frame = result.to_frame().head(10)
    for j, row in zip(result.ranking, frame.itertuples()):
        p = "" if np.isnan(row.pvalue) else f"  q={row.qvalue:.2e}"
        way = "" if prof is None or not prof.direction(j) else f"  {prof.direction(j)}"
        print(f"  {row.rank:>3}  {row.feature}  {row.score:.6g}{p}{way}")
    print(f"Wrote {out}")


def _score(args):
    from . import jobs

    started = time.perf_counter()
    out = Path(args.output)
    sidecar = out.with_name(out.name + ".json")
    jobs.check_table_name(out)
    jobs.check_outputs([out, sidecar], force=args.force, inputs=(args.data, args.meta))
    labelled, result, mask, prof = _score_job(args)
    frame = jobs.ranking_frame(result, mask, prof)
    jobs.write_frame(frame, out, sidecar=sidecar, provenance=_provenance(args, labelled, result, mask, started),
                     force=args.force)
    _summary(result, mask, labelled, started, f"{out} and {sidecar.name}", prof)
    return 0


def _select(args):
    from . import jobs

    started = time.perf_counter()
    if args.top is None and args.fdr is None:
        raise UsageError("select needs a rule: --top K or --fdr Q.")
    out = Path(args.output)
    sidecar = out.with_name(out.name + ".json")
    jobs.check_table_name(out)
    jobs.check_outputs([out, sidecar], force=args.force, inputs=(args.data, args.meta))
    labelled, result, mask, prof = _score_job(args)
    reduced = jobs.reduced_frame(labelled, mask, result.feature_names, chunk_bytes=args.chunk_bytes)
    provenance = _provenance(args, labelled, result, mask, started)
    # the selected features' rows of the ranking table: scores, class means, the signed effect, prevalence
    chosen = jobs.ranking_frame(result, mask, prof)
    provenance["selected_features"] = [  # NaN (no p-value) as JSON null
        {k: None if isinstance(v, float) and v != v else v for k, v in row.items()}
        for row in chosen[chosen["selected"]].drop(columns="selected").to_dict("records")]
    jobs.write_frame(reduced, out, sidecar=sidecar, provenance=provenance, force=args.force)
    _summary(result, mask, labelled, started, f"{out} and {sidecar.name}", prof)
    return 0


def _convert(args):
    from . import jobs
    from .io import convert, convert_kmers, format_of, read_metadata
    from .io.store import SUFFIX

    started = time.perf_counter()
    if not Path(args.output).name.lower().endswith(".h5ad"):
        raise UsageError(f"convert writes a store (HDF5), so its output needs the suffix {SUFFIX}: "
                         f"{str(args.output)!r} would not be read back as one. Name it for example "
                         f"-o {Path(args.output).name.split('.')[0] or 'data'}{SUFFIX}.")
    # before reading anything, in the CLI's words
    jobs.check_outputs([args.output], force=args.force, inputs=(*args.inputs, args.meta))
    if args.meta and not args.id:
        raise UsageError("--meta needs --id: the metadata column that holds the sample ids.")
    kinds = {args.format or format_of(path) for path in args.inputs}
    meta = read_metadata(args.meta, id_column=args.id, sep=args.meta_sep) if args.meta else None
    if kinds == {"kmers"}:
        _read_options(args, data=args.inputs[0])  # refuses the table options
        out, report = convert_kmers(args.inputs, args.output, metadata=meta, overwrite=args.force,
                                    chunk_bytes=args.chunk_bytes, absent=args.absent_samples or "zeros")
        if report is not None:
            print(report)
    elif kinds == {"dumps"} and len(args.inputs) == 1:  # a list file or a folder of per-sample dumps
        from .io import convert_dumps

        _read_options(args, data=args.inputs[0])
        out, report = convert_dumps(args.inputs[0], args.output, metadata=meta, overwrite=args.force,
                                    chunk_bytes=args.chunk_bytes, absent=args.absent_samples or "drop")
        if report is not None:
            print(report)
    elif len(args.inputs) == 1:
        if meta is not None or args.absent_samples:
            raise UsageError("--meta and --absent-samples are for k-mer inputs; other tables keep their own "
                             "per-sample columns with --keep COLUMNS.")
        out = convert(args.inputs[0], args.output, format=args.format, overwrite=args.force,
                      chunk_bytes=args.chunk_bytes, **_read_options(args, data=args.inputs[0]))
    else:
        raise ValueError("Several inputs are combined only for k-mer count files; convert other files one at a time.")
    from .io import open_store

    store = open_store(out)
    print(f"Wrote {out}: {store.shape[0]} samples x {store.shape[1]} features"
          f"{f', {store.nnz} non-zeros' if store.sparse else ''} in {time.perf_counter() - started:.1f} s")
    return 0


def _labelled(args):
    """The labelled samples of `score`, `select` and `evaluate`."""
    from . import jobs

    return jobs.load_labelled(
        args.data, target=args.target, meta=args.meta, id_column=args.id, group_column=args.group,
        train_groups=args.train_groups, val_groups=args.val_groups, classes=args.classes,
        min_count=args.min_count, format=args.format, meta_sep=args.meta_sep, read_options=_read_options(args),
        absent=args.absent_samples, binary=args.binary, min_matched=args.min_matched,
    )


def _evaluate(args):
    from . import __version__, jobs
    from ._files import check_output
    from .workflow import evaluate, write_results

    started = time.perf_counter()
    out = Path(args.output)
    inputs = (args.data, args.meta)
    check_output(out, force=args.force, inputs=inputs, folder=True)  # before any work
    from .scores import get_method

    scoring = _scoring_options(args, get_method(args.method))
    labelled = _labelled(args)
    X = jobs.in_memory(labelled.dataset.X)
    held_out = args.train_groups or args.val_groups
    groups = None
    if args.group and not held_out:  # folds keep each group whole
        groups = labelled.dataset.obs[args.group].astype(str).to_numpy()
    ev = evaluate(X, labelled.y, method=args.method, ks=args.k, model=args.model,
                  model_options=dict(args.model_option or []), cv=args.cv, groups=groups,
                  validation=~labelled.train if held_out else None, metric=args.metric,
                  sample_ids=labelled.dataset.sample_ids, feature_names=labelled.dataset.feature_names,
                  random_state=args.seed, n_jobs=args.threads, binary=args.binary,
                  score_params=scoring["options"] or None, min_af=scoring["min_af"], max_af=scoring["max_af"])
    ev.notes.extend(labelled.notes)
    provenance = {
        "command": " ".join(["genosift", *sys.argv[1:]]) if sys.argv and sys.argv[0].endswith("genosift") else None,
        "inputs": {str(p): {"sha256": jobs.file_digest(p)} for p in (args.data, args.meta) if p},
        "target": args.target, "seconds": round(time.perf_counter() - started, 3),
    }
    write_results(ev, out, X=X, y=labelled.y, provenance=provenance, overwrite=args.force, inputs=inputs)
    best = ev.curve.set_index("k").loc[ev.best_k]
    split = ev.cv["kind"] == "validation"  # one train/validation split: one value per k, no spread
    n_val = int((~ev.train).sum())
    print(f"genosift {__version__} evaluate: {ev.method} ranking, {ev.model_name} model, "
          f"{len(labelled.y)} samples x {ev.result.n_features} features, "
          + (f"one train/validation split ({int(ev.train.sum())} training, {n_val} validation samples)" if split
             else f"{ev.cv['folds']}-fold cross-validation"))
    for note in ev.notes:
        print(f"  {note}")
    metrics = ("accuracy", "balanced_accuracy", "f1_macro", "roc_auc")
    print(("  metrics on the validation samples" if split else "  mean +/- s.d. over the folds")
          + f"\n  {'k':>7}  " + "  ".join(f"{m:>17}" for m in metrics))
    for row in ev.curve.itertuples():
        cells = [f"{getattr(row, m + '_mean'):.3f}" + ("" if split else f" +/- {getattr(row, m + '_std'):.3f}")
                 for m in metrics]
        print(f"  {row.k:>7}  " + "  ".join(f"{c:>17}" for c in cells) + ("  <- best" if row.k == ev.best_k else ""))
    how = (f"({best[ev.metric + '_mean']:.3f}), picked on the {n_val} validation samples of this one split" if split
           else f"({best[ev.metric + '_mean']:.3f}, the mean over the folds)")
    print(f"Best k = {ev.best_k} by {ev.metric} {how}; top features: "
          + ", ".join(str(f) for f in ev.result.top(min(5, ev.best_k))))
    print(f"Wrote {out}/ (tables, model.joblib, run.json) in {time.perf_counter() - started:.1f} s")
    return 0


def _predict(args):
    from . import jobs
    from .io import read
    from .workflow import held_out_metrics, load_model, predict

    if args.meta and not (args.id and args.target):
        raise UsageError("--meta needs --id (the sample-id column) and --target (the true labels) to compare.")
    out = Path(args.output)
    jobs.check_table_name(out)
    jobs.check_outputs([out], force=args.force, inputs=(args.data, args.meta, args.model))
    saved = load_model(args.model)
    in_table = args.target and not args.meta and jobs._is_table(args.data, args.format)
    # in a table, the true labels may be a column of the data table itself
    options = _read_options(args, extra_keep=(args.target,) if in_table else ())
    data = read(args.data, format=args.format, **options)
    frame, notes = predict(saved, jobs.in_memory(data.X), data.feature_names, sample_ids=data.sample_ids,
                           fill_missing=args.fill_missing)
    truth = None
    if in_table:
        if data.obs is None or args.target not in data.obs.columns:
            raise ValueError(f"--target {args.target!r} is not a column of {args.data!r}.")
        truth = data.obs[args.target].set_axis(frame["sample"].astype(str))
    if args.meta:
        from .io import read_metadata

        meta = read_metadata(args.meta, id_column=args.id, sep=args.meta_sep)
        if args.target not in meta.columns:
            raise ValueError(f"--target {args.target!r} is not a column of {args.meta!r}: {list(meta.columns)}.")
        truth = meta[args.target].reindex(frame["sample"].astype(str))
    if truth is not None:
        frame.insert(2, "true", truth.astype("string").to_numpy())
        notes.append(_held_out_note(held_out_metrics(frame, frame["true"]), args.target))
    jobs.write_frame(frame, out, force=args.force)
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


def _report(args):
    from .report import make_report

    try:
        report = make_report(args.results, args.output, png_dir=args.png_dir, overwrite=args.force)
    except ImportError as exc:  # matplotlib is optional: the message says how to install it
        print(f"genosift: error: {exc}", file=sys.stderr)
        return 1
    print(f"Wrote {report.html} and {len(report.pngs)} figures (PNG) in {report.pngs[0].parent}")
    return 0


_FORMAT_HELP = ("the format, when neither the name nor the first bytes tell it: csv, tsv, rtab, parquet, npy, "
                "npz, mtx, h5ad, kmers, dumps (a list or folder of per-sample k-mer dumps), vcf (VCF or BCF), "
                "plink (a .bed with its .bim and .fam) or store")


def _add_input_options(p):
    p.add_argument("data", help="data file: CSV/TSV (.gz/.bz2/.zst), Parquet, .npy/.npz, .mtx, .h5ad, a store, "
                                "Panaroo/Roary .Rtab, k-mer counts, a list file or folder of per-sample "
                                "k-mer dumps (KMC, Jellyfish), VCF/BCF genotypes or a PLINK .bed")
    p.add_argument("--format", help=_FORMAT_HELP)
    p.add_argument("--features-in-rows", action="store_true", help="the table has features in rows, samples in columns")
    _add_table_options(p)
    _add_genotype_options(p)
    p.add_argument("--meta", help="metadata table (CSV/TSV) with the sample ids, the target and groups")
    p.add_argument("--id", help="the sample-id column of --meta")
    p.add_argument("--meta-sep", type=_separator, metavar="CHAR",
                   help="the field separator of --meta (default: by its suffix, else guessed from its header)")


def _add_table_options(p):
    p.add_argument("--sep", type=_separator, metavar="CHAR",
                   help="the field separator of a CSV/TSV data file, e.g. ';' or tab (default: by the suffix)")
    p.add_argument("--id-column", metavar="COLUMN",
                   help="the sample-id column of a CSV/TSV/Parquet data file, by name or 0-based position "
                        "(default: the first)")
    p.add_argument("--keep", type=_column_list, action="append", metavar="COLUMNS",
                   help="comma-separated per-sample columns of a CSV/TSV/Parquet data file that are not "
                        "features (labels, groups): kept beside the samples, not scored (repeatable)")


def _add_genotype_options(p):
    p.add_argument("--missing-genotypes", choices=["zero", "error"],
                   help="missing calls of a VCF/BCF or PLINK file: read as 0, not carrying the allele (the "
                        "default, as pyseer reads them; their number is reported), or an error")


def _add_sample_options(p, binary=True):
    p.add_argument("--absent-samples", choices=["zeros", "drop"],
                   help="samples of --meta that the data lack: all-zero rows (the default for k-mer counts, "
                        "which list only the samples carrying each k-mer, as SEER and pyseer read them) or "
                        "left out (the default for other data, per-sample k-mer dumps included)")
    if binary:
        p.add_argument("--binary", action="store_true",
                       help="presence/absence: every value becomes 1 if above 0, else 0, before scoring and "
                            "modelling (a store is read that way, not rewritten)")


def _add_match_option(p):
    p.add_argument("--min-matched", type=_min_matched, metavar="N|SHARE",
                   help="the fewest samples the --meta join must match, else exit 2: a whole number is a count "
                        "(e.g. 100), a number between 0 and 1 a share of the data's and of the metadata's "
                        "samples each (e.g. 0.9); without it, matching less than half of either side only warns")


def _add_data_options(p):
    _add_input_options(p)
    _add_sample_options(p)
    _add_match_option(p)
    p.add_argument("--target", required=True, help="the label column (in --meta, or in the data table)")
    p.add_argument("--method", default="fisher", type=_method_name,
                   help="scoring method (see `genosift methods`; default fisher)")
    _add_scoring_options(p)
    p.add_argument("--top", type=_positive_int, help="select the K best features")
    p.add_argument("--fdr", type=_fraction, help="select features with BH q-value <= Q")
    p.add_argument("--group", help="metadata column of groups for --train-groups / --val-groups")
    p.add_argument("--train-groups", help="comma-separated groups to score on (others are held out)")
    p.add_argument("--val-groups", help="comma-separated groups to hold out of scoring")
    p.add_argument("--classes", help="comma-separated labels to keep (others are left out)")
    p.add_argument("--min-count", type=_positive_int, help="leave out classes with fewer samples")
    p.add_argument("--chunk-bytes", type=_byte_size, metavar="BYTES",
                   help="memory budget for streaming a store (.gs.h5ad), e.g. 64M or 1G (default 256M)")
    p.add_argument("-o", "--output", required=True, help="output file (.tsv, .csv or .parquet)")
    p.add_argument("--force", action="store_true", help="overwrite existing outputs")
    p.add_argument("--scheduler", metavar="ADDRESS|local[:N]",
                   help="score a store on a Dask cluster: a scheduler address (tcp://host:8786) or local:N "
                        "for N worker processes here; the workers read the store (needs genosift[dask])")
    _add_run_options(p)


def _add_run_options(p):
    p.add_argument("--threads", type=_positive_int, metavar="N", help="threads to use (default: all CPUs)")
    p.add_argument("--quiet", action="store_true", help="no progress bars (they show only on a terminal)")


def _int_list(text):
    try:
        values = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"must be comma-separated whole numbers >= 1, e.g. 10,100,1000; got {text!r}")
    return values


def _key_value(text):
    import ast

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE, e.g. C=0.1; got {text!r}")
    try:
        value = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        pass  # a plain string, e.g. class_weight=balanced
    return key.strip(), value


_SEPARATORS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "space": " ", "pipe": "|"}


def _separator(text):
    sep = _SEPARATORS.get(text.lower(), text)
    if len(sep) != 1 or sep in "\"\r\n":
        raise argparse.ArgumentTypeError(f"must be one character such as ',' or ';', or tab; got {text!r}")
    return sep


def _column_list(text):
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"must be comma-separated column names, e.g. label,batch; got {text!r}")
    return names


def _min_matched(text):
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is not None and 0 < value < 1:
        return value
    if value is not None and value >= 1 and value.is_integer():
        return int(value)
    raise argparse.ArgumentTypeError(f"must be a whole number >= 1 (a count) or a number between 0 and 1 "
                                     f"(a share), e.g. 100 or 0.9; got {text!r}")


def _add_scoring_options(p):
    p.add_argument("--method-option", type=_key_value, action="append", metavar="KEY=VALUE",
                   help="an option of the scoring method, e.g. n_neighbors=20 for relieff or bins=10 for mi "
                        "(repeatable; `genosift methods NAME` lists a method's options)")
    p.add_argument("--min-af", type=_share, metavar="F",
                   help="test only features carried (value above 0) by at least this share of the scored "
                        "samples, e.g. 0.01 (pyseer's --min-af); the others are not tested")
    p.add_argument("--max-af", type=_share, metavar="F",
                   help="test only features carried by at most this share of the scored samples, e.g. 0.99 "
                        "(pyseer's --max-af)")


def _share(text):
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a share of the samples, a number in [0, 1]; got {text!r}")
    return value


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1], got {text!r}")
    return value


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _byte_size(text):
    """Bytes from ``123``, ``64K``, ``64M``, ``1.5G``, ``2GiB``... (K, M, G, T are powers of 1024)."""
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    value = int(float(match[1]) * _UNITS[match[2]]) if match else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a size in bytes such as 4096, 64M or 1G, got {text!r}")
    return value


def _method_name(text):
    from .scores import REGISTRY

    if text not in REGISTRY:
        raise argparse.ArgumentTypeError(f"must be one of {sorted(REGISTRY)} (see `genosift methods`), got {text!r}")
    return text


def _positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(text)


def build_parser():
    parser = argparse.ArgumentParser(prog="genosift", description="Find the features that matter.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("methods", help="list the scoring methods, or describe one")
    p.add_argument("name", nargs="?", type=_method_name,
                   help="a method to describe: what it computes, its task, p-values, reference and options")
    p.set_defaults(func=_methods)
    p = sub.add_parser("demo", help="rank genes of the bundled Golub ALL/AML data set")
    p.add_argument("-o", "--output", default="genosift-demo", help="output folder (a fresh one is made if it exists)")
    p.add_argument("--fdr", type=_fraction, default=0.05, help="FDR level for the selected genes (default 0.05)")
    p.add_argument("--top", type=_positive_int, default=15, help="how many top genes to print (default 15)")
    p.set_defaults(func=_demo)
    p = sub.add_parser("convert", help="convert k-mer counts (or any data file) to a chunked store once")
    p.add_argument("inputs", nargs="+", help="k-mer count files (combined by k-mer), or one data file, list file "
                                             "or folder of per-sample k-mer dumps")
    p.add_argument("-o", "--output", required=True, help="the store to write (suffix .gs.h5ad)")
    p.add_argument("--format", help=_FORMAT_HELP)
    p.add_argument("--features-in-rows", action="store_true", help="the table has features in rows, samples in columns")
    _add_table_options(p)
    _add_genotype_options(p)
    p.add_argument("--meta", help="metadata table (CSV/TSV) of k-mer samples to store with them")
    p.add_argument("--id", help="the sample-id column of --meta")
    p.add_argument("--meta-sep", type=_separator, metavar="CHAR",
                   help="the field separator of --meta (default: by its suffix, else guessed from its header)")
    _add_sample_options(p, binary=False)
    p.add_argument("--force", action="store_true", help="overwrite an existing store")
    p.add_argument("--chunk-bytes", type=_byte_size, metavar="BYTES",
                   help="memory budget for the counts, e.g. 512M (default 256M); k-mer counts beyond it "
                        "are spilled to a temporary file beside the output and written in batches")
    _add_run_options(p)
    p.set_defaults(func=_convert)
    p = sub.add_parser("score", help="rank every feature of a data file against a label column")
    _add_data_options(p)
    p.set_defaults(func=_score)
    p = sub.add_parser("select", help="write the selected features of every labelled sample")
    _add_data_options(p)
    p.set_defaults(func=_select)
    p = sub.add_parser("evaluate", help="select features and fit a model for a grid of k, cross-validated")
    _add_input_options(p)
    _add_sample_options(p)
    _add_match_option(p)
    p.add_argument("--target", required=True, help="the label column (in --meta, or in the data table)")
    p.add_argument("--method", default="fisher", type=_method_name,
                   help="scoring method (see `genosift methods`; default fisher)")
    p.add_argument("--k", type=_int_list, default=[10, 100, 1000], help="numbers of top features to try (default 10,100,1000)")
    p.add_argument("--model", default="logistic", choices=["logistic", "random_forest", "linear_svm"],
                   help="the classifier (default logistic)")
    p.add_argument("--model-option", type=_key_value, action="append", metavar="KEY=VALUE",
                   help="a model option, e.g. C=0.1 or n_estimators=1000 (repeatable)")
    _add_scoring_options(p)
    p.add_argument("--cv", type=_positive_int, default=5, help="stratified folds (default 5)")
    p.add_argument("--metric", default="balanced_accuracy", choices=["accuracy", "balanced_accuracy", "f1_macro", "roc_auc"],
                   help="the metric that picks the best k (default balanced_accuracy)")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and models (default 0)")
    p.add_argument("--group", help="metadata column of groups: folds keep groups whole; or with --val-groups, the split")
    p.add_argument("--train-groups", help="comma-separated groups to train on (the others validate)")
    p.add_argument("--val-groups", help="comma-separated groups held out for validation (instead of --cv)")
    p.add_argument("--classes", help="comma-separated labels to keep (others are left out)")
    p.add_argument("--min-count", type=_positive_int, help="leave out classes with fewer samples")
    p.add_argument("-o", "--output", required=True, help="results folder to write")
    p.add_argument("--force", action="store_true", help="replace an existing results folder")
    _add_run_options(p)
    p.set_defaults(func=_evaluate)
    p = sub.add_parser("predict", help="apply a model saved by `evaluate` to new data (the model file runs code: trust it)")
    p.add_argument("model", help="model.joblib (or the results folder) of a `genosift evaluate` run")
    _add_input_options(p)
    p.add_argument("--target", help="the column of true labels (in --meta, or in the data table), to compare")
    p.add_argument("--fill-missing", action="store_true",
                   help="features of the model absent from the data are zero (counts such as k-mers)")
    p.add_argument("-o", "--output", required=True, help="predictions file (.tsv, .csv or .parquet)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output")
    _add_run_options(p)
    p.set_defaults(func=_predict)
    p = sub.add_parser("report", help="an HTML report with figures of an `evaluate` results folder")
    p.add_argument("results", help="the results folder written by `genosift evaluate -o`")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write (one file, readable offline)")
    p.add_argument("--png-dir", help="folder for the figures as PNG (default: <output name>_files beside the HTML)")
    p.add_argument("--force", action="store_true", help="overwrite an existing report and its figures")
    p.set_defaults(func=_report)
    return parser


def _version():
    from . import __version__

    return __version__


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every clean-up block runs (temporary files)."""


def _on_signal(signum, frame):
    """Record the signal where writers look before they publish an output, then unwind.

    An exception raised in a signal handler can be lost (Python drops it when it lands in a
    finalizer or a weak-reference callback): the recorded signal still stops every output from
    being published, and the command still ends with the signal's exit code.
    """
    import signal

    interrupted.append(signum)
    raise KeyboardInterrupt() if signum == signal.SIGINT else _Terminated()


def _signals_unwind():
    """Make SIGINT and SIGTERM unwind (only from the main thread); returns the previous handlers."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}


def _interrupted(by_sigint):
    name = "SIGINT" if by_sigint else "SIGTERM"
    print(f"genosift: interrupted ({name}); outputs are written whole or not at all, so run the "
          "command again to make them.", file=sys.stderr)
    return 130 if by_sigint else 143


def _warnings_shown(previous):
    """``warnings.showwarning`` that prints genosift's own warnings as one line naming options."""
    from ._messages import Spelled

    def show(message, category, filename, lineno, file=None, line=None):
        if isinstance(message, Spelled):
            print(f"genosift: warning: {cli_message(message)}", file=sys.stderr)
        else:
            previous(message, category, filename, lineno, file, line)

    return show


def main(argv=None):
    import signal
    import warnings

    from . import engine

    parser = build_parser()
    args = parser.parse_args(argv)
    threads = getattr(args, "threads", None)
    previous_threads = engine.set_threads(threads) if threads else None
    shown = engine.set_progress(sys.stderr.isatty() and not getattr(args, "quiet", False))
    previous = _signals_unwind()
    interrupted.clear()
    shown_warnings = warnings.showwarning
    warnings.showwarning = _warnings_shown(shown_warnings)
    try:
        code = args.func(args)
        if interrupted:  # a signal whose exception was lost: the outputs were not published
            raise KeyboardInterrupt() if interrupted[0] == signal.SIGINT else _Terminated()
        return code
    except BrokenPipeError:  # output piped into `head` and the like: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except UsageError as exc:  # options that do not fit together: as argparse's own usage errors
        print(f"genosift {args.command}: error: {cli_message(exc)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, ImportError) as exc:  # ImportError: an optional package
        if interrupted:  # an error caused by the interruption itself (a file closed under a reader)
            return _interrupted(interrupted[0] == signal.SIGINT)
        print(f"genosift: error: {cli_message(exc)}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, _Terminated) as exc:
        return _interrupted(isinstance(exc, KeyboardInterrupt))
    finally:  # in-process callers keep their own settings
        warnings.showwarning = shown_warnings
        interrupted.clear()
        if previous is not None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        engine.set_progress(shown)
        if threads:
            engine.set_threads(previous_threads)
