"""The ``genosift`` command: a thin shell over the library (no arithmetic here).

Exit codes: 0 success, 1 data error, 2 usage error.
"""
from __future__ import annotations

import argparse
import sys
import time


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


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1], got {text!r}")
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
    return parser


def _version():
    from . import __version__

    return __version__


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into `head` and the like: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, TypeError, OSError) as exc:
        print(f"genosift: error: {exc}", file=sys.stderr)
        return 1
