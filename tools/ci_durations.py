"""The table of CI's durations (``ci/DURATIONS.md``) from the log of a run of ``.ci/run``.

    CI=true bash -c "time bash .ci/run" > ci.log 2>&1
    python tools/ci_durations.py ci.log > ci/DURATIONS.md

The log holds, for each of the two jobs (newest versions, then the floors), pytest's summary line
and its 25 slowest tests (``--durations=25``, set by ``.ci/run``), and at the end the ``real``
time of the whole run.
"""
from __future__ import annotations

import re
import sys


def jobs(lines):
    """``[(summary, seconds, [(seconds, phase, test)])]`` of each job in the log, in order."""
    out, rows = [], None
    for line in lines:
        if "slowest 25 durations" in line:
            rows = []
            continue
        if rows is not None and re.match(r"^\d+\.\d+s (call|setup|teardown) ", line):
            seconds, phase, test = line.split(None, 2)
            rows.append((seconds.rstrip("s"), phase, test))
            continue
        found = re.search(r"=* ?(\d+ passed.*) in ([\d.]+)s", line)
        if found and rows is not None:
            out.append((found.group(1).strip(" ="), found.group(2), rows))
            rows = None
    return out


def table(log_text, when=""):
    lines = log_text.splitlines()
    real = next((line.split()[1] for line in lines if line.startswith("real")), "?")
    found = jobs(lines)
    if len(found) != 2:
        raise SystemExit(f"expected the summaries of two jobs in the log, found {len(found)}")
    (new_summary, new_seconds, new_rows), (low_summary, low_seconds, low_rows) = found
    out = ["# CI durations", "",
           "`.ci/run` on a clean clone of `main` beside `../shared` (so that the real-data tests run),",
           f"`CI=true bash -c \"time bash .ci/run\"`{when}; made by `python tools/ci_durations.py LOG`.", "",
           "The two jobs run side by side: the whole suite on the newest versions (two pytest-xdist workers)",
           "and the version-dependent tests on the lowest versions (`ci/min-versions.sh` says which), each",
           "with numba's cache of its own outside the tree, then the documentation's build. Every run prints",
           "the 25 slowest tests of each job.", "",
           "| | wall time |", "|---|---:|",
           f"| the whole `.ci/run` (Debian tools, two installs, ruff, both jobs, the documentation) | {real} |",
           f"| newest versions: {new_summary} | {new_seconds} s |",
           f"| lowest versions: {low_summary} | {low_seconds} s |"]
    for title, rows in (("newest versions", new_rows), ("lowest versions", low_rows)):
        out += ["", f"## The 25 slowest tests, {title}", "", "| seconds | phase | test |", "|---:|---|---|"]
        out += [f"| {s} | {p} | `{t}` |" for s, p, t in rows]
    return "\n".join(out) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (1, 2):
        raise SystemExit("usage: python tools/ci_durations.py LOG [WHEN]")
    with open(argv[0], encoding="utf-8", errors="replace") as f:
        sys.stdout.write(table(f.read(), f" ({argv[1]})" if len(argv) == 2 else ""))


if __name__ == "__main__":
    main()
