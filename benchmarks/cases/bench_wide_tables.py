#!/usr/bin/env python
"""Reading a wide CSV (few samples, very many feature columns) against pandas' reader.

    python benchmarks/cases/bench_wide_tables.py                  # writes benchmarks/results/RESULTS-wide-tables.md
    python benchmarks/cases/bench_wide_tables.py --columns 100000 --output -   # quicker, printed only

A table of samples in rows and ``--columns`` integer features (0-2, as gene presence/absence or
genotypes; a cell in 1,000 empty, read as missing) is read by ``genosift.io.read`` (a row at a time
above ``genosift.io.delimited.WIDE_COLUMNS`` columns), by the same function with the threshold
raised so that pandas parses it (what genosift did before), and by ``pandas.read_csv`` itself.
Each reader runs in a fresh process, so that its peak resident memory is its own (the interpreter
and libraries included, and measured alone as the floor); seconds are the best of ``--repeat``
processes, the libraries' import excluded. The matrices are checked to be equal.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, header  # noqa: E402

READERS = {
    "floor (imports only)": "pass",
    "genosift `io.read` (a row at a time)": "d = gs.io.read(path); X = d.X",
    "genosift `io.read` through pandas (before)": ("from genosift.io import delimited\n"
                                                   "delimited.WIDE_COLUMNS = 10**9\n"
                                                   "d = gs.io.read(path); X = d.X"),
    "pandas `read_csv`": "X = pd.read_csv(path, index_col=0).to_numpy(dtype=float)",
}

CHILD = """
import resource, sys, time, hashlib
import numpy as np, pandas as pd
import genosift as gs
path = sys.argv[1]
start = time.perf_counter()
{code}
seconds = time.perf_counter() - start
digest = hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest() if 'X' in dir() else ''
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, digest)
"""


def write_table(path, rows, columns, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        fh.write("sample," + ",".join(f"gene_{j}" for j in range(columns)) + "\n")
        for i in range(rows):
            values = rng.integers(0, 3, columns).astype(str)
            values[rng.random(columns) < 0.001] = ""
            fh.write(f"isolate_{i}," + ",".join(values) + "\n")


def run(code, path):
    out = subprocess.run([sys.executable, "-c", CHILD.format(code=code), str(path)], capture_output=True, text=True,
                         check=True)
    seconds, peak, *digest = out.stdout.split()
    return float(seconds), int(peak), "".join(digest)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--columns", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS / "RESULTS-wide-tables.md"), help="results file, or - to print")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "wide.csv"
        write_table(path, args.rows, args.columns)
        size = path.stat().st_size
        results = {}
        for name, code in READERS.items():
            runs = [run(code, path) for _ in range(args.repeat)]
            results[name] = (min(r[0] for r in runs), max(r[1] for r in runs), runs[0][2])
    digests = {d for name, (_, _, d) in results.items() if d}
    floor = results["floor (imports only)"][1]
    before = results["genosift `io.read` through pandas (before)"][0]
    lines = [
        *header("Reading a wide CSV", libraries=("pandas",), load=load,
                argv=None if argv is None else [__file__, *argv]),
        f"{args.rows} samples x {args.columns:,} integer features ({size / 2**20:.1f} MiB of text), each reader in "
        f"a fresh process, best of {args.repeat}; peak resident memory of the process (the floor: the same "
        f"imports and nothing read). Every reader gives the same matrix: {'yes' if len(digests) == 1 else 'NO'}",
        "",
        "| reader | seconds | peak RSS | above the floor | time before / time |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (seconds, peak, _) in results.items():
        if name.startswith("floor"):
            lines.append(f"| {name} | | {peak / 2**20:,.0f} MiB | | |")
            continue
        lines.append(f"| {name} | {seconds:.2f} | {peak / 2**20:,.0f} MiB | {(peak - floor) / 2**20:,.0f} MiB | "
                     f"{before / seconds:.1f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output != "-":
        Path(args.output).write_text(text)
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
