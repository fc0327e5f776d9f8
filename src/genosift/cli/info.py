"""`genosift methods` and `genosift demo`: what the library offers, shown on bundled data."""
from __future__ import annotations

import time


def methods_command(args):
    from ..scores import describe, methods

    if getattr(args, "name", None):  # one method: what it computes, its task, p-values, reference, options
        print(describe(args.name))
        return 0
    table = methods()[["task", "classes", "pvalues", "streaming", "summary"]]
    import pandas as pd

    with pd.option_context("display.max_colwidth", 80, "display.width", 160):
        print(table.to_string())
    return 0


def demo_command(args):
    from .. import __version__
    from .._files import fresh_folder, write_json, write_table
    from ..pipeline import golub_demo

    start = time.perf_counter()
    X, y, fisher, frame, provenance = golub_demo(fdr=args.fdr)
    out = fresh_folder(args.output)
    try:
        write_table(frame, out / "ranking.tsv")
        write_table(frame[frame["selected"]], out / "selected.tsv")
        write_json(provenance, out / "provenance.json")
    except BaseException:  # the folder is this run's own: no half of a demo is left
        import shutil

        shutil.rmtree(out, ignore_errors=True)
        raise
    classes = ", ".join(f"{c}: {int((y == c).sum())}" for c in fisher.classes)
    print(f"genosift {__version__} demo: Golub ALL/AML leukemia, {X.shape[0]} samples ({classes}) x {X.shape[1]} genes")
    print(f"Fisher score ranking; {provenance['n_selected']} genes pass FDR q <= {args.fdr} (ANOVA F p-values, BH)\n")
    top = frame.head(args.top)
    width = max(len(n) for n in top["feature"])
    print(f"{'rank':>4}  {'probe':<{width}}  {'fisher':>8}  {'q-value':>9}  description")
    for row in top.itertuples():
        print(f"{row.rank:>4}  {row.feature:<{width}}  {row.score:8.4f}  {row.qvalue:9.2e}  {row.description[:70]}")
    print(f"\nWrote {out}/ranking.tsv, selected.tsv, provenance.json in {time.perf_counter() - start:.1f} s")
    return 0

