#!/usr/bin/env python
"""Cost of checking a sparse matrix's index structure before scoring it.

    python benchmarks/cases/bench_sparse_check.py          # 1,000 x 2,000,000 CSR, 20 M non-zeros
    python benchmarks/cases/bench_sparse_check.py --quick  # 1,000 x 200,000, 2 M non-zeros (printed only)

Every sparse matrix from a file or a caller has its index pointers and indices checked (in
range, pointers non-decreasing, lengths consistent; for stores also sorted within each row) by
``genosift.core.sparse_check.check_sparse_structure``, one pass without temporaries. This measures
that pass against two things any scoring does anyway: ``X.sum(axis=0)`` (one pass over the
values) and ``genosift.score(X, y, method="fisher")``, on the same matrix, best of five.
A full run writes ``benchmarks/results/RESULTS-sparse-check.md``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, header  # noqa: E402


def best(fn, repeats=5):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    import genosift as gs
    from genosift.core.sparse_check import check_sparse_structure

    n, p, nnz = (1000, 200_000, 2_000_000) if args.quick else (1000, 2_000_000, 20_000_000)
    rng = np.random.default_rng(0)
    rows = np.sort(rng.integers(0, n, nnz))
    cols = rng.integers(0, p, nnz)
    X = sp.csr_matrix((np.ones(nnz), (rows, cols)), shape=(n, p))
    X.sum_duplicates()
    y = np.arange(n) % 2
    rows_out = [
        ("check (in range)", lambda: check_sparse_structure(X.indptr, X.indices, n, p, nnz=X.nnz)),
        ("check (in range and sorted)",
         lambda: check_sparse_structure(X.indptr, X.indices, n, p, nnz=X.nnz, sorted_indices=True)),
        ("X.sum(axis=0)", lambda: X.sum(axis=0)),
        ("genosift.score(X, y, 'fisher')", lambda: gs.score(X, y, method="fisher")),
    ]
    times = {name: best(fn) for name, fn in rows_out}
    base = times["X.sum(axis=0)"]
    lines = [
        *header("Checking sparse index structure", libraries=("scipy",), load=load),
        f"CSR {n:,} x {p:,}, {X.nnz:,} stored values (int32 indices), best of 5.",
        "",
        "| operation | seconds | / X.sum(axis=0) |",
        "|---|---|---|",
        *(f"| {name} | {t:.4f} | {t / base:.2f} |" for name, t in times.items()),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        (RESULTS / "RESULTS-sparse-check.md").write_text(text)


if __name__ == "__main__":
    main()
