#!/usr/bin/env python
"""Benchmark of the rank methods: spearman, kendall, auc, kruskal.

    python benchmarks/cases/bench_ranks.py           # full sizes, about 1.5 minutes on 2 cores, ~2 GB RAM
    python benchmarks/cases/bench_ranks.py --quick   # p / 10

Dense: float64, 1000 samples x 100,000 features, binary labels (the first 1% of features shifted
by class) and a numeric target. Floor: one ``np.sort(X, axis=0)``, the least any rank method must
do. Target: ``auc`` and ``spearman`` within 20x the floor; ``kendall`` and ``kruskal`` reported.

Sparse: CSR counts 1..20 (float32, int32 indices), 2000 x 1,000,000, density 1%, binary labels.
``auc`` ranks only the stored values of each column (its zeros share one average rank), so the
expectation is dense-free: time on the order of one ``X.tocsc()`` (the floor here, the copy of the
non-zeros every column method needs; target within 20x), and a peak memory far below one dense
float64 copy (target below 10% of n x p x 8 bytes).

Rows with a target: best of the runner's repeats after one untimed run; "info" rows (kendall,
kruskal): one timed run after one untimed run, to keep the module short.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the runner run.py
import run as runner  # noqa: E402  (benchmarks/run.py; this module's entry point is also called run)

SEED = 20240611
TARGET = 20.0


def _dense_data(rng, n, p):
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, p))
    X[:, : max(1, p // 100)] += 0.5 * y[:, None]
    w = rng.standard_normal(min(100, p))
    y_num = X[:, : w.shape[0]] @ w + rng.standard_normal(n)
    return X, y, y_num


def _max_abs(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    return float(np.abs(a[ok] - b[ok]).max()) if ok.any() else float("nan")


def _dense(rows, checks, quick):
    from scipy import stats

    import genosift as gs

    n, p = 1000, 100_000 // (10 if quick else 1)
    case = f"dense float64 {n} x {p:,}, 2 classes"
    runner.log(f"ranks dense: generating {n} x {p} float64")
    X, y, y_num = _dense_data(np.random.default_rng(SEED), n, p)
    tiny = np.ascontiguousarray(X[:40, :64])  # compile the numba kernels before timing
    for method, target in (("auc", y), ("kruskal", y), ("spearman", y_num), ("kendall", y_num)):
        gs.score(tiny, target[:40], method=method)

    runner.log("ranks dense: floor np.sort(X, axis=0)")
    t_floor, _ = runner.measure(lambda: np.sort(X, axis=0))
    floor = t_floor.best
    rows.append(runner.Row(case, "floor: `np.sort(X, axis=0)`", "full", t_floor))
    results = {}
    for method, target, label, goal in (
        ("auc", y, "labels", True),
        ("spearman", y_num, "numeric y", True),
        ("kendall", y_num, "numeric y", False),
        ("kendall", y, "labels coded 0/1", False),
        ("kruskal", y, "labels", False),
    ):
        runner.log(f"ranks dense: genosift {method} ({label})")
        # the targets' rows: best of the runner's repeats; info rows: one timed run (keeps it short)
        t, res = runner.measure(lambda: gs.score(X, target, method=method), repeats=None if goal else 1)
        results[method, label] = res
        ratio = t.best / floor
        rows.append(runner.Row(case, f"genosift `{method}` ({label})", "full", t, floor,
                            target=f"<= {TARGET:g}x floor" if goal else "",
                            verdict=("PASS" if ratio <= TARGET else "FAIL") if goal else f"info: {ratio:.1f}x floor"))

    # correctness on a column subset, against scipy
    q = 100
    auc = results["auc", "labels"]
    mw = stats.mannwhitneyu(X[y == 1, :q], X[y == 0, :q], axis=0, method="asymptotic")
    checks.append((f"ranks dense: auc p vs scipy mannwhitneyu, first {q} features, max abs diff",
                   f"{_max_abs(auc.pvalues[:q], mw.pvalue):.1e}", "info"))
    sp_ = [stats.spearmanr(X[:, j], y_num) for j in range(q)]
    checks.append((f"ranks dense: spearman rho vs scipy spearmanr, first {q} features, max abs diff",
                   f"{_max_abs(results['spearman', 'numeric y'].statistic[:q], [r.statistic for r in sp_]):.1e}",
                   "info"))
    kt = [stats.kendalltau(X[:, j], y_num) for j in range(q)]
    ken = results["kendall", "numeric y"]
    checks.append((f"ranks dense: kendall tau / p vs scipy kendalltau, first {q} features, max abs diff",
                   f"{_max_abs(ken.statistic[:q], [r.statistic for r in kt]):.1e} / "
                   f"{_max_abs(ken.pvalues[:q], [r.pvalue for r in kt]):.1e}", "info"))
    kr = stats.kruskal(X[y == 0, :q], X[y == 1, :q], axis=0)
    checks.append((f"ranks dense: kruskal H vs scipy kruskal, first {q} features, max rel diff",
                   f"{runner.max_rel_diff(results['kruskal', 'labels'].statistic[:q], kr.statistic)[0]:.1e}", "info"))
    informative = max(1, p // 100)
    hit = np.isin(auc.ranking[:informative], np.arange(informative)).mean()
    checks.append(("ranks dense: auc, share of the shifted features among the top 1%", f"{hit:.1%}", "info"))
    return t_floor


def _sparse(rows, checks, quick, dense_floor=None, dense_p=None):
    from scipy import stats

    import genosift as gs

    n, p, density = 2000, 1_000_000 // (10 if quick else 1), 0.01
    case = f"sparse CSR {n} x {p:,}, density 1%, counts, 2 classes"
    runner.log(f"ranks sparse: generating {n} x {p} CSR")
    X, y = runner.sparse_case(np.random.default_rng(SEED), n, p, density, k=2)
    gs.score(X[:40, :64], y[:40], method="auc")
    gs.score(X[:40, :64], y[:40], method="kruskal")
    limit = n * p * 8 / 10

    runner.log("ranks sparse: floor X.tocsc()")
    t_floor, _ = runner.measure(lambda: X.tocsc())
    floor = t_floor.best
    rows.append(runner.Row(case, "floor: `X.tocsc()` (a copy of the non-zeros)", "full", t_floor))
    notes = []
    if dense_floor is not None:
        per_value = dense_floor.best / (1000 * dense_p)
        notes = [f"a dense path would first need a {n * p * 8 / 2**30:.0f} GiB float64 copy, and sorting it "
                 f"would take ~{per_value * n * p:.0f} s at the dense floor's speed per value"]
    for method in ("auc", "kruskal"):
        runner.log(f"ranks sparse: genosift {method}")
        goal = method == "auc"
        t, res = runner.measure(lambda: gs.score(X, y, method=method), repeats=None if goal else 1)
        ratio = t.best / floor
        no_copy = t.peak_mb * 2**20 < limit
        rows.append(runner.Row(case, f"genosift `{method}` (sparse blocks)", "full", t, floor,
                            target=f"<= {TARGET:g}x floor, peak < {limit / 2**20:,.0f} MB" if goal else "",
                            verdict=(f"{'PASS' if ratio <= TARGET else 'FAIL'} (time), "
                                     f"{'PASS' if no_copy else 'FAIL'} (memory)") if goal
                            else f"info: {ratio:.1f}x floor",
                            notes=notes if goal else []))
        if goal:
            q = 200
            D = X[:, :q].toarray().astype(np.float64)
            mw = stats.mannwhitneyu(D[y == 1], D[y == 0], axis=0, method="asymptotic")
            checks.append((f"ranks sparse: auc p vs scipy mannwhitneyu (dense copy of the first {q} features), "
                           "max abs diff", f"{_max_abs(res.pvalues[:q], mw.pvalue):.1e}", "info"))
            dense = gs.score(D, y, method="auc")
            same = np.array_equal(dense.statistic, res.statistic[:q], equal_nan=True)
            checks.append(("ranks sparse: auc of CSR == auc of its dense copy (bit for bit)", str(same),
                           "PASS" if same else "FAIL"))


def run(rows, checks, quick=False):
    """Append the rank methods' ``runner.Row`` rows and correctness checks (``quick``: p / 10)."""
    t_floor = _dense(rows, checks, quick)
    runner._release_free_memory()
    _sparse(rows, checks, quick, t_floor, 100_000 // (10 if quick else 1))
    runner._release_free_memory()


if __name__ == "__main__":
    rows, checks = [], []
    run(rows, checks, quick="--quick" in sys.argv[1:])
    runner.print_family(rows, checks)
