"""`genosift methods` and `genosift demo`: what the library offers, shown on bundled data."""
from __future__ import annotations

import shutil
import textwrap


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
    from .. import jobs

    print(jobs.demo(args.output, fdr=args.fdr, top=args.top))
    return 0
