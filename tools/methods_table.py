"""The documentation's methods table (``docs/methods.md``), generated from the registry (``genosift.REGISTRY``).

    python tools/methods_table.py           # rewrite the table in docs/methods.md
    python tools/methods_table.py --check   # exit 1 when the table is not the registry's

A new method registered in ``genosift.scores`` appears in the table by running the first command;
``tests/surface/test_readme.py`` fails while the table is stale.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "docs" / "methods.md"
BEGIN = "<!-- methods table: generated from the registry by `python tools/methods_table.py`; do not edit -->"
END = "<!-- end of the methods table -->"
COMMAND = "python tools/methods_table.py"


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def table():
    """The markdown table of every registered method, in registration order."""
    from genosift.scores import REGISTRY
    from genosift.scores._base import task_text

    lines = ["| method | task | statistic | p-value | reads | options | reference |", "|---|---|---|---|---|---|---|"]
    for m in REGISTRY.values():
        options = ", ".join(f"`{k}={v!r}` ({m.declared[k].text})" for k, v in m.options.items()) or "-"
        reads = (m.streaming + (", each distinct column once" if m.distinct else "")
                 + ("; data of 0s and 1s from each class's count of 1s" if m.positives else ""))
        cells = [f"`{m.name}`", task_text(m), m.formula, "yes" if m.has_pvalues else "-", reads, options, m.reference]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def render(readme_text):
    """``readme_text`` with the text between the markers replaced by the current table."""
    head, found, rest = readme_text.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not found or not found_end:
        raise SystemExit(f"{TARGET} lacks the markers of the methods table:\n{BEGIN}\n...\n{END}")
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale")
    args = parser.parse_args(argv)
    text = TARGET.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print(f"{TARGET}'s methods table is not the registry's; regenerate it with: {COMMAND}")
            return 1
        return 0
    if new != text:
        TARGET.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
