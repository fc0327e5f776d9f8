#!/usr/bin/env python
"""Benchmark of the pattern count: ``gs.count_patterns`` on stores and in memory, and its cost
inside the score job.

    python benchmarks/cases/bench_patterns.py            # 600 samples x 1,000,000 k-mers, 8 % dense
    python benchmarks/cases/bench_patterns.py --quick    # 300 x 100,000 (printed only)

A full run writes ``benchmarks/results/RESULTS-patterns.md`` and prints it.

Data: the synthetic k-mer counts of ``bench_score_job.py`` (independent k-mers, so most columns
are patterns of their own) and the same store with every column copied four times over (a
clonal collection's k-mers come many to a pattern: 4 copies of 250,000 columns), each as a
sparse store (CSR and its column copy) and a dense one. Measured, warm, best of ``--repeats``:
``gs.count_patterns`` of each store; in memory, of the CSC matrix, against ``np.unique`` over the
rows of the dense presence matrix's transpose (the direct count the tests use, on the first
20,000 columns: it sorts rows of n bytes); and the score job's pass over a store (fisher) with and
without the pattern hashing riding along. Every count is checked against the direct one where
that is computed, and the riding count against ``count_patterns``.
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402


def best(func, repeats):
    out, seconds = None, float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = func()
        seconds = min(seconds, time.perf_counter() - t)
    return out, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(SRC))
    sys.path.insert(0, str(Path(__file__).parent))
    import numpy as np
    import scipy.sparse as sp
    from bench_score_job import make_stores

    import genosift as gs
    from genosift.io import Dataset, open_store, write_store
    from genosift.scoring.forms import score_and_profile
    from genosift.scoring.patterns import PatternPass
    from genosift.scoring.profiles import kind_for
    from genosift.sources import StoreRows

    n, p = (300, 100_000) if args.quick else (600, 1_000_000)
    started = datetime.datetime.now().astimezone()
    load = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        stores = make_stores(tmp, n, p, 0.08)
        data = open_store(stores["sparse"]).to_dataset()
        copies = Dataset(sp.hstack([data.X[:, : p // 4]] * 4, format="csr"), data.sample_ids,
                         np.array([f"c{j}" for j in range(4 * (p // 4))], dtype=object), data.obs)
        stores["sparse, 4 copies"] = write_store(copies, Path(tmp) / "copies.gs.h5ad")
        stores["dense, 4 copies"] = write_store(Dataset(copies.X.toarray().astype(np.uint8), copies.sample_ids,
                                                        copies.feature_names, copies.obs), Path(tmp) / "dc.gs.h5ad")
        for kind in ("sparse", "dense"):  # kernels compiled
            gs.count_patterns(stores[kind], chunk_bytes=1 << 20)
        for name, path in stores.items():
            found, seconds = best(lambda: gs.count_patterns(path), args.repeats)
            rows.append((f"store, {name}", found.n_features, found.n_patterns, seconds, ""))
            print(rows[-1], flush=True)
        M = data.X.tocsc()
        found, seconds = best(lambda: gs.count_patterns(M), args.repeats)
        head = (M[:, :20_000].toarray() > 0)
        direct, direct_s = best(lambda: len(np.unique(head.T, axis=0)), args.repeats)
        small = gs.count_patterns(M[:, :20_000])
        assert small.n_patterns == direct, (small.n_patterns, direct)
        small_s = best(lambda: gs.count_patterns(M[:, :20_000]), args.repeats)[1]
        rows.append(("memory, CSC", found.n_features, found.n_patterns, seconds, ""))
        rows.append(("memory, CSC, first 20,000 columns", 20_000, small.n_patterns, small_s,
                     f"np.unique: {direct_s:.3f} s ({direct_s / small_s:.1f}x), same count"))
        for row in rows[-2:]:
            print(row, flush=True)
        job_rows = []
        for name in ("sparse", "dense"):
            store = open_store(stores[name])
            y = store.obs["phenotype"].to_numpy()
            spec = gs.get_method("fisher")

            def one_pass(riders):
                res, prof = score_and_profile(
                    StoreRows(store).source(y), spec, spec.options, kind=kind_for("fisher", y), folder=tmp,
                    riders=riders)
                getattr(prof, "close", lambda: None)()
                return riders[0].result() if riders else None

            _, plain_s = best(lambda: one_pass(()), args.repeats)
            found, riding_s = best(lambda: one_pass((PatternPass(),)), args.repeats)
            assert found.n_patterns == gs.count_patterns(stores[name], binary=False).n_patterns
            job_rows.append((name, plain_s, riding_s, found.n_patterns))
            print(job_rows[-1], flush=True)
    lines = [*header("Distinct patterns: their count, and their cost inside the score job", load=load,
                     started=started),
             f"Data: {n:,} samples x {p:,} synthetic k-mer counts (8 % of the cells), and the same with its first "
             f"{p // 4:,} columns copied four times; sparse stores (CSR and the column copy) and dense ones "
             "(uint8). Warm, best of " + str(args.repeats) + ".", "",
             "| input | features | patterns | count_patterns s | note |", "|---|---:|---:|---:|---|"]
    for what, features, patterns, seconds, note in rows:
        lines.append(f"| {what} | {features:,} | {patterns:,} | {seconds:.3f} | {note} |")
    lines += ["", "The score job's pass over a store (fisher: `Source.score_and_profile`, the scores and the class "
              "profile) without the patterns, and with them riding along (`PatternPass`, what `genosift score` "
              "does):", "",
              "| store | pass s | pass with patterns s | cost | patterns |", "|---|---:|---:|---:|---:|"]
    for name, plain_s, riding_s, patterns in job_rows:
        lines.append(f"| {name} | {plain_s:.3f} | {riding_s:.3f} | {riding_s / plain_s - 1:+.0%} | {patterns:,} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        Path(args.output or RESULTS / "RESULTS-patterns.md").write_text(text)


if __name__ == "__main__":
    main()
