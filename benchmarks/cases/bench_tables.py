#!/usr/bin/env python
"""Writing a ranking table of millions of features as exact text, against pandas and pyarrow.

    python benchmarks/cases/bench_tables.py            # 2,000,000 rows, writes benchmarks/results/RESULTS-tables.md
    python benchmarks/cases/bench_tables.py --rows 200000 --output -   # quicker, printed only

The table has the columns ``genosift score`` writes for a two-class method (a k-mer name, score,
statistic, p- and q-value, rank, selected, the class means, their difference and the class
prevalences): random doubles of 17 digits, means of counts, NaN where there is no test, integers
and booleans. Each writer writes the same frame to a file on the same disk, best of three:
``genosift.core.tabletext.write_delimited`` (the writer of every TSV/CSV genosift writes; blocks of rows
laid out on the engine's threads, and on one), pandas'
``DataFrame.to_csv`` (whose bytes genosift's must be: checked), and ``pyarrow.csv.write_csv``
(compiled, but not the same text: ``0`` for ``0.0``, ``1e-05`` as ``0.00001``...), for reference.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: common.py
from common import RESULTS, header  # noqa: E402


def ranking_frame(n, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 40, (n, 2))
    mean = counts / np.array([1437.0, 1437.0])
    score = np.sort(rng.gamma(0.5, 2.0, n))[::-1]
    pvalue = np.where(rng.random(n) < 0.1, np.nan, rng.random(n) ** 4)
    return pd.DataFrame({
        "feature": ["".join(rng.choice(list("ACGT"), 31)) for _ in range(min(n, 1000))] * (n // 1000)
                   + ["".join(rng.choice(list("ACGT"), 31)) for _ in range(n % 1000)],
        "score": score, "statistic": score * 1.5, "pvalue": pvalue, "qvalue": np.minimum(1.0, pvalue * 3),
        "rank": np.arange(1, n + 1), "selected": np.arange(n) < 100,
        "mean_0": mean[:, 0], "mean_1": mean[:, 1], "diff_means": mean[:, 1] - mean[:, 0],
        "prevalence_0": (counts[:, 0] > 0) / 1.0, "prevalence_1": rng.integers(0, 1437, n) / 1437.0,
    })


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--folder", default=None, help="where the files are written (default: a temporary folder)")
    parser.add_argument("--output", default=str(RESULTS / "RESULTS-tables.md"), help="results file, or - to print")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    import tempfile

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from genosift.core import engine, tabletext

    sys.path.insert(0, str(HERE))
    from bench_sparse_check import best

    frame = ranking_frame(args.rows)
    tabletext.write_delimited(frame.head(100), __import__("io").StringIO(newline=""))  # compiled beforehand
    folder = Path(args.folder or tempfile.mkdtemp(prefix="genosift-tables-"))
    folder.mkdir(parents=True, exist_ok=True)
    ours, theirs, arrow = folder / "genosift.tsv", folder / "pandas.tsv", folder / "pyarrow.tsv"

    def genosift_writer():
        with open(ours, "w", encoding="utf-8", newline="") as fh:
            tabletext.write_delimited(frame, fh)

    def genosift_one_thread():
        previous = engine.set_threads(1)
        try:
            genosift_writer()
        finally:
            engine.set_threads(previous)

    def pandas_writer():
        with open(theirs, "w", encoding="utf-8", newline="") as fh:
            frame.to_csv(fh, sep="\t", index=False)

    table = pa.Table.from_pandas(frame, preserve_index=False)

    def arrow_writer():
        pacsv.write_csv(table, arrow, write_options=pacsv.WriteOptions(delimiter="\t", quoting_style="none"))

    results = [(name, best(fn, repeats=3)) for name, fn in (("genosift `write_delimited`", genosift_writer),
                                                  ("genosift `write_delimited`, 1 thread", genosift_one_thread),
                                                  ("pandas `to_csv`", pandas_writer),
                                                  ("pyarrow `csv.write_csv` (other text)", arrow_writer))]
    same = ours.read_bytes() == theirs.read_bytes()
    size = ours.stat().st_size
    lines = [
        *header("Writing a ranking table as exact text", libraries=("pandas", "pyarrow"), load=load),
        f"{args.rows:,} rows x {frame.shape[1]} columns ({size / 2**20:,.0f} MiB of text), written to a file, "
        "best of 3 after an untimed run. genosift's bytes equal pandas' bytes: " + ("yes" if same else "NO"),
        "",
        "| writer | seconds | rows / s | MiB / s | pandas time / time |",
        "|---|---:|---:|---:|---:|",
    ]
    t_pandas = dict(results)["pandas `to_csv`"]
    for name, t in results:
        lines.append(f"| {name} | {t:.2f} | {args.rows / t:,.0f} | {size / 2**20 / t:,.0f} | {t_pandas / t:.1f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output != "-":
        Path(args.output).write_text(text)
    if not same:
        raise SystemExit("genosift's table differs from pandas'")


if __name__ == "__main__":
    main()
