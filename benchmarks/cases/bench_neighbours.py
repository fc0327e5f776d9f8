#!/usr/bin/env python
"""Benchmark genosift ``relieff`` against ``skrebate.ReliefF``, and alone at n = 20,000.

    python benchmarks/cases/bench_neighbours.py          # full sizes, about 1-2 minutes on 2 cores
    python benchmarks/cases/bench_neighbours.py --quick  # small sizes, a smoke test

Cases (data from a seeded generator; standard-normal float64 features, the first 1% shifted by
class, so that the scores are not all noise):

1. 1,000 x 1,000, two classes, ``n_neighbors=10``: genosift vs skrebate (``pip install
   skrebate``; rows skipped without it). Target: at least 20x faster, with the same scores
   (``rtol=1e-10``). skrebate is timed once (after one untimed run), as it takes ~20 s.
2. 20,000 x 100, three classes: genosift alone (skrebate would build n x n float64 arrays,
   3 GB each). Target: peak memory bounded by the block budget (< 4 x engine.BLOCK_BYTES =
   256 MB, whatever n), against 3,052 MB for one n x n float64 matrix.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the runner run.py
import run as runner  # noqa: E402  (benchmarks/run.py; `run` is this module's entry point)

K = 10


def _data(rng, n, p, k):
    y = rng.integers(0, k, n)
    X = rng.standard_normal((n, p))
    m = max(1, p // 100)
    X[:, :m] += 0.5 * y[:, None]
    return X, y


def _warm_up(X, y):
    """Compile (or load from numba's cache) the serial and the parallel kernels."""
    import genosift as gs
    from genosift.scores import neighbours

    tiny = np.ascontiguousarray(X[:40, :16])
    saved = neighbours._PARALLEL_WORK
    try:
        neighbours._PARALLEL_WORK = 0
        gs.score(tiny, y[:40], method="relieff")
    finally:
        neighbours._PARALLEL_WORK = saved
    gs.score(tiny, y[:40], method="relieff")


def run_vs_skrebate(rows, checks, quick):
    import genosift as gs

    n, p = (300, 300) if quick else (1000, 1000)
    case = f"dense float64 {n:,} x {p:,}, 2 classes, n_neighbors={K}"
    X, y = _data(np.random.default_rng(runner.SEED), n, p, 2)
    _warm_up(X, y)
    runner.log(f"relieff: genosift on {n} x {p}")
    t_gs, res = runner.measure(lambda: gs.score(X, y, method="relieff", method_options={"n_neighbors": K}))
    try:
        from skrebate import ReliefF
    except ImportError:
        rows.append(runner.Row(case, "genosift `relieff`", "full", t_gs))
        checks.append(("relieff vs skrebate", "skrebate not installed (`pip install skrebate`): rows skipped", ""))
        return
    runner.log(f"relieff: skrebate ReliefF on {n} x {p} (slow)")
    # skrebate scales its own copy of X in place: give it a fresh copy on every run
    t_sk, model = runner.measure(lambda: ReliefF(n_neighbors=K).fit(X.copy(), y), repeats=1)
    theirs = model.feature_importances_
    speed = t_sk.best / t_gs.best
    diff = float(np.max(np.abs(res.scores - theirs)))
    same = np.allclose(res.scores, theirs, rtol=1e-10, atol=1e-14)
    rows.append(runner.Row(case, "genosift `relieff`", "full", t_gs, target=">= 20x faster than skrebate, same scores",
                        verdict=f"{'PASS' if speed >= 20 else 'FAIL'} ({speed:.0f}x), "
                                f"{'PASS' if same else 'FAIL'} (scores)"))
    rows.append(runner.Row(case, f"skrebate `ReliefF(n_neighbors={K})`", "full", t_sk,
                        notes=["skrebate timed once after one untimed run; it builds the n x n distance matrix "
                               "(scipy pdist + squareform) and scores in a Python loop over samples and features"]))
    checks.append((f"relieff vs skrebate ({n:,} x {p:,}): speedup (skrebate time / genosift time)",
                   f"{speed:.1f}x", "PASS" if speed >= 20 else "FAIL (target 20x)"))
    checks.append((f"relieff vs skrebate ({n:,} x {p:,}): max abs score difference (scores up to "
                   f"{np.max(np.abs(theirs)):.3g})", f"{diff:.2e}", "PASS" if same else "FAIL (rtol 1e-10)"))
    top = min(50, p)
    agree = np.array_equal(res.ranking[:top], np.argsort(-theirs, kind="stable")[:top])
    checks.append((f"relieff vs skrebate: same top {top} features in the same order", str(agree),
                   "PASS" if agree else "FAIL"))


def run_large_n(rows, checks, quick):
    import genosift as gs
    from genosift.core import engine

    n, p = (5000, 100) if quick else (20000, 100)
    case = f"dense float64 {n:,} x {p}, 3 classes, n_neighbors={K}"
    X, y = _data(np.random.default_rng(runner.SEED + 1), n, p, 3)
    _warm_up(X, y)
    runner.log(f"relieff: genosift on {n} x {p}")
    t_gs, res = runner.measure(lambda: gs.score(X, y, method="relieff", method_options={"n_neighbors": K}), repeats=1)
    nn_mb = n * n * 8 / 2**20
    limit = 4 * engine.BLOCK_BYTES / 2**20  # distances of a row block, plus a few column blocks
    ok = t_gs.peak_mb < limit
    rows.append(runner.Row(case, "genosift `relieff`", "full", t_gs,
                        target=f"peak < 4 x engine.BLOCK_BYTES ({limit:,.0f} MB), whatever n",
                        verdict=f"{'PASS' if ok else 'FAIL'} (memory)",
                        notes=[f"row blocks of {int(engine.BLOCK_BYTES // (8 * (n + 3 * K)))} query samples x {n:,} "
                               f"distances (<= {engine.BLOCK_BYTES / 2**20:.0f} MiB, engine.BLOCK_BYTES); "
                               f"one n x n float64 matrix would be {nn_mb:,.0f} MB"]))
    informative = max(1, p // 100)
    found = set(res.ranking[:informative]) == set(range(informative))
    checks.append((f"relieff {n:,} x {p}: the {informative} shifted feature(s) rank first", str(found),
                   "PASS" if found else "FAIL"))
    checks.append((f"relieff {n:,} x {p}: peak RSS increment / one n x n float64 matrix",
                   f"{t_gs.peak_mb:,.0f} MB / {nn_mb:,.0f} MB", "PASS" if ok else "FAIL"))


def run(rows, checks, quick=False):
    """Append ``runner.Row`` objects to ``rows`` and (label, value, result) to ``checks``."""
    run_vs_skrebate(rows, checks, quick)
    run_large_n(rows, checks, quick)


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = ap.parse_args(argv)
    rows, checks = [], []
    run(rows, checks, quick=args.quick)
    print("| case | method | time (s) | peak RSS increment (MB) | target | result |")
    print("| --- | --- | ---: | ---: | --- | --- |")
    for r in rows:
        print(f"| {r.case} | {r.method} | {runner.fmt_t(r.timing.best)} | {r.timing.peak_mb:,.1f} | "
              f"{r.target or '-'} | {r.verdict or '-'} |")
    notes = [n for r in rows for n in r.notes]
    for i, note in enumerate(notes, 1):
        print(f"[{i}] {note}")
    print("\n| check | value | result |\n| --- | --- | --- |")
    for c, v, s in checks:
        print(f"| {c} | {v} | {s} |")


if __name__ == "__main__":
    main()
