"""`genosift methods` and `genosift demo`: what the library offers, shown on bundled data."""
from __future__ import annotations

import shutil
import textwrap
import time


def methods_command(args):
    from ..scores import describe, methods

    if getattr(args, "name", None):  # one method: what it computes, its task, p-values, reference, options
        print(describe(args.name))
        return 0
    print(methods_text(methods(), shutil.get_terminal_size((100, 24)).columns))
    return 0


def methods_text(table, width):
    """The methods as a table of left-aligned columns within ``width`` characters (80 at least),
    each summary wrapped under its own column; ``genosift methods NAME`` tells the rest."""
    head = ("method", "task", "classes", "p-values", "streaming")
    rows = [(name, row.task, row.classes, "yes" if row.pvalues else "-", row.streaming)
            for name, row in table.iterrows()]
    widths = [max(len(str(v)) for v in column) for column in zip(head, *rows)]
    left = sum(widths) + 2 * len(widths)
    room = max(80, width) - left
    lines = []
    for cells, summary in [(head, "summary"), *zip(rows, table["summary"])]:
        wrapped = textwrap.wrap(summary, room) or [""]
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + "  " + wrapped[0])
        lines.extend(" " * left + more for more in wrapped[1:])
    lines.append("")
    lines.append("`genosift methods NAME` describes one: its formula, options and reference.")
    return "\n".join(line.rstrip() for line in lines)


def demo_command(args):
    from .. import __version__
    from ..core.files import fresh_folder, write_json, write_table
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

