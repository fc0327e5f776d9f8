"""The ``genosift`` command: a thin shell over the library (no arithmetic here).

Exit codes: 0 success, 1 data error, 2 usage error.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


def _methods(args):
    from .scores import methods

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
    frame = frame.iloc[fisher.ranking].reset_index(drop=True)

    out = fresh_folder(args.output)
    write_table(frame, out / "ranking.tsv")
    write_table(frame[frame["selected"]], out / "selected.tsv")
    write_json(
        {**fisher.provenance(), "fdr_method": "anova", "fdr_alpha": args.fdr,
         "n_selected": int(selected.sum()), "data": "Golub et al. (1999) ALL/AML training set",
         "genosift_version": __version__},
        out / "provenance.json",
    )
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
    read_options = {"features_in_rows": True} if args.features_in_rows else {}
    labelled = jobs.load_labelled(
        args.data, target=args.target, meta=args.meta, id_column=args.id, group_column=args.group,
        train_groups=args.train_groups, val_groups=args.val_groups, classes=args.classes,
        min_count=args.min_count, format=args.format, read_options=read_options,
    )
    if args.scheduler and not isinstance(labelled.X_train, jobs.StoreRows):
        raise ValueError(f"--scheduler scores a store (.gs.h5ad) on Dask workers, which read it themselves; "
                         f"{args.data!r} is read into memory here. Convert it once with `genosift convert`, "
                         "or leave out --scheduler.")
    from .dask import use_scheduler

    with use_scheduler(args.scheduler):  # None: the local engine
        result = jobs.score_labelled(labelled, method=spec.name, chunk_bytes=args.chunk_bytes)
    mask = jobs.select_mask(result, top=args.top, fdr=args.fdr)
    return labelled, result, mask


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


def _summary(result, mask, labelled, started, out):
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{result.method}: {result.n_samples} samples x {result.n_features} features; "
          f"{int(mask.sum())} selected; {time.perf_counter() - started:.1f} s, peak memory {peak:.0f} MB")
    for note in labelled.notes:
        print(f"  {note}")
    frame = result.to_frame().head(10)
    for row in frame.itertuples():
        p = "" if np.isnan(row.pvalue) else f"  q={row.qvalue:.2e}"
        print(f"  {row.rank:>3}  {row.feature}  {row.score:.6g}{p}")
    print(f"Wrote {out}")


def _score(args):
    from . import jobs

    started = time.perf_counter()
    out = Path(args.output)
    sidecar = out.with_name(out.name + ".json")
    jobs.check_outputs([out, sidecar], force=args.force)
    labelled, result, mask = _score_job(args)
    frame = result.to_frame(sort=False)
    frame["selected"] = mask
    frame = frame.iloc[result.ranking].reset_index(drop=True)
    jobs.write_frame(frame, out)
    jobs.write_sidecar(sidecar, _provenance(args, labelled, result, mask, started))
    _summary(result, mask, labelled, started, f"{out} and {sidecar.name}")
    return 0


def _select(args):
    from . import jobs

    started = time.perf_counter()
    if args.top is None and args.fdr is None:
        raise ValueError("select needs a rule: --top K or --fdr Q.")
    out = Path(args.output)
    sidecar = out.with_name(out.name + ".json")
    jobs.check_outputs([out, sidecar], force=args.force)
    labelled, result, mask = _score_job(args)
    reduced = jobs.reduced_frame(labelled, mask, result.feature_names, chunk_bytes=args.chunk_bytes)
    jobs.write_frame(reduced, out)
    jobs.write_sidecar(sidecar, _provenance(args, labelled, result, mask, started))
    _summary(result, mask, labelled, started, f"{out} and {sidecar.name}")
    return 0


def _convert(args):
    from .io import convert, convert_kmers, format_of, read_metadata

    started = time.perf_counter()
    kinds = {args.format or format_of(path) for path in args.inputs}
    meta = read_metadata(args.meta, id_column=args.id) if args.meta else None
    if args.meta and not args.id:
        raise ValueError("--meta needs --id: the metadata column that holds the sample ids.")
    if kinds == {"kmers"}:
        out, report = convert_kmers(args.inputs, args.output, metadata=meta, overwrite=args.force,
                                    chunk_bytes=args.chunk_bytes)
        if report is not None:
            print(report)
    elif len(args.inputs) == 1:
        if meta is not None:
            raise ValueError("--meta is for k-mer inputs; other tables keep their own sample columns.")
        out = convert(args.inputs[0], args.output, format=args.format, overwrite=args.force,
                      chunk_bytes=args.chunk_bytes)
    else:
        raise ValueError("Several inputs are combined only for k-mer count files; convert other files one at a time.")
    from .io import open_store

    store = open_store(out)
    print(f"Wrote {out}: {store.shape[0]} samples x {store.shape[1]} features"
          f"{f', {store.nnz} non-zeros' if store.sparse else ''} in {time.perf_counter() - started:.1f} s")
    return 0


def _report(args):
    from .report import make_report

    try:
        report = make_report(args.results, args.output, png_dir=args.png_dir, overwrite=args.force)
    except ImportError as exc:  # matplotlib is optional: the message says how to install it
        print(f"genosift: error: {exc}", file=sys.stderr)
        return 1
    print(f"Wrote {report.html} and {len(report.pngs)} figures (PNG) in {report.pngs[0].parent}")
    return 0


def _add_data_options(p):
    p.add_argument("data", help="data file: CSV/TSV (.gz/.bz2/.zst), Parquet, .npy/.npz, .mtx, .h5ad or k-mer counts")
    p.add_argument("--format", help="reader name when the suffix does not tell (see genosift.io.READERS)")
    p.add_argument("--features-in-rows", action="store_true", help="the table has features in rows, samples in columns")
    p.add_argument("--meta", help="metadata table (CSV/TSV) with the sample ids, the target and groups")
    p.add_argument("--id", help="the sample-id column of --meta")
    p.add_argument("--target", required=True, help="the label column (in --meta, or in the data table)")
    p.add_argument("--method", default="fisher", help="scoring method (see `genosift methods`; default fisher)")
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


def _positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(text)


def build_parser():
    parser = argparse.ArgumentParser(prog="genosift", description="Find the features that matter.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("methods", help="list the scoring methods")
    p.set_defaults(func=_methods)
    p = sub.add_parser("demo", help="rank genes of the bundled Golub ALL/AML data set")
    p.add_argument("-o", "--output", default="genosift-demo", help="output folder (a fresh one is made if it exists)")
    p.add_argument("--fdr", type=_fraction, default=0.05, help="FDR level for the selected genes (default 0.05)")
    p.add_argument("--top", type=_positive_int, default=15, help="how many top genes to print (default 15)")
    p.set_defaults(func=_demo)
    p = sub.add_parser("convert", help="convert k-mer counts (or any data file) to a chunked store once")
    p.add_argument("inputs", nargs="+", help="k-mer count files (combined by k-mer), or one data file")
    p.add_argument("-o", "--output", required=True, help="the store to write (suffix .gs.h5ad)")
    p.add_argument("--format", help="reader name when the suffix does not tell")
    p.add_argument("--meta", help="metadata table (CSV/TSV) to store with the samples")
    p.add_argument("--id", help="the sample-id column of --meta")
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


def main(argv=None):
    from . import engine

    parser = build_parser()
    args = parser.parse_args(argv)
    threads = getattr(args, "threads", None)
    previous_threads = engine.set_threads(threads) if threads else None
    shown = engine.set_progress(sys.stderr.isatty() and not getattr(args, "quiet", False))
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into `head` and the like: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, TypeError, OSError) as exc:
        print(f"genosift: error: {exc}", file=sys.stderr)
        return 1
    finally:  # in-process callers keep their own settings
        engine.set_progress(shown)
        if threads:
            engine.set_threads(previous_threads)
