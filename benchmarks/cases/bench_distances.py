#!/usr/bin/env python
"""Benchmark the distribution and dependence scores: wasserstein, jensen_shannon, dcor.

Data: ``run.dense_case``, float32, 1000 samples x 100,000 features (10,000 with ``quick``), 3
classes, the first 1% of features shifted by class, plus its numeric target. The floor is one
``np.sort(X, axis=0)``: every method here sorts each column once, so it cannot do much better.
Target (wasserstein, normalize=True): <= 20x the floor. scipy and the ``dcor`` package are timed
on the first few hundred columns only (a Python loop over features), labelled as such.

    python benchmarks/cases/bench_distances.py [--quick]
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the runner run.py
import run as runner  # noqa: E402  (the benchmark runner; `run` below is this module's entry point)

WASSERSTEIN_TARGET = 20.0


def _scipy_wasserstein(X, y, normalize):
    from scipy.stats import rankdata, wasserstein_distance

    classes = np.unique(y)
    out = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        x = X[:, j].astype(np.float64)
        if normalize:
            x = (rankdata(x) - 0.5) / x.shape[0]
        out[j] = sum(np.mean(y == c) * wasserstein_distance(x, x[y == c]) for c in classes)
    return out


def _top_hits(res, m):
    """Share of the first m features (the informative ones) among the m best ranked."""
    return np.count_nonzero(res.ranking[:m] < m) / m


def run(rows, checks, quick=False):
    from sklearn.feature_selection import f_classif

    import genosift as gs

    n, p = 1000, (10_000 if quick else 100_000)
    sub = 200 if quick else 500
    case = f"dense float32 {n} x {p:,}, 3 classes"
    rng = np.random.default_rng(runner.SEED)
    runner.log(f"distances: generating {n} x {p} float32")
    X, y, y_num = runner.dense_case(rng, n, p)
    m = max(1, p // 100)

    tiny = np.ascontiguousarray(X[:40, :64])  # JIT warm-up, same dtype and layout
    for method in ("wasserstein", "jensen_shannon", "dcor"):
        gs.score(tiny, y[:40], method=method)
    gs.score(tiny, y[:40], method="wasserstein", method_options={"normalize": False})
    gs.score(tiny, y_num[:40], method="dcor")

    runner.log("distances: floor np.sort(X, axis=0)")
    t_floor, _ = runner.measure(lambda: np.sort(X, axis=0))
    rows.append(runner.Row(case, "floor: `np.sort(X, axis=0)`", "full", t_floor))
    runner.log("distances: sklearn f_classif (for scale)")
    t_fc, _ = runner.measure(lambda: f_classif(X, y))

    results = {}
    for label, kwargs, target in (
        ("wasserstein", dict(method="wasserstein"), y),
        ("wasserstein, normalize=False", dict(method="wasserstein", method_options={"normalize": False}), y),
        ("jensen_shannon", dict(method="jensen_shannon"), y),
        ("dcor (labels, discrete metric)", dict(method="dcor"), y),
        ("dcor (numeric y)", dict(method="dcor"), y_num),
    ):
        runner.log(f"distances: genosift {label}")
        t, res = runner.measure(lambda kw=kwargs, t=target: gs.score(X, t, **kw))
        results[label] = res
        goal, verdict = "", ""
        if label == "wasserstein":
            ratio = t.best / t_floor.best
            goal = f"<= {WASSERSTEIN_TARGET:g}x floor"
            verdict = f"{'PASS' if ratio <= WASSERSTEIN_TARGET else 'FAIL'} ({ratio:.1f}x)"
        rows.append(runner.Row(case, f"genosift `{label}`", "full", t, t_floor.best, t_fc.best, goal, verdict))

    # peers, on the first `sub` columns only (Python loops over features); nothing extrapolated
    Xs = np.ascontiguousarray(X[:, :sub])
    label = f"first {sub:,} features only"
    t_gs, res_gs = runner.measure(lambda: gs.score(Xs, y, method="wasserstein"))
    runner.log(f"distances: scipy wasserstein_distance loop on {sub} columns")
    t_sc, ref = runner.measure(lambda: _scipy_wasserstein(Xs, y, True), repeats=1)
    rows.append(runner.Row(case, "scipy `wasserstein_distance` per class, weighted (CDF-transformed)", label,
                        t_sc, notes=[f"a Python loop over {sub:,} features; genosift `wasserstein` takes "
                                     f"{runner.fmt_t(t_gs.best)} s on the same columns"]))
    checks.append((f"wasserstein vs scipy (first {sub} features), max abs difference",
                   f"{np.max(np.abs(res_gs.statistic - ref)):.1e}",
                   "PASS" if np.allclose(res_gs.statistic, ref, rtol=1e-10, atol=1e-14) else "FAIL"))
    try:
        import dcor as dcor_pkg
    except ImportError:
        dcor_pkg = None
        checks.append(("dcor package", "not installed (`pip install dcor`): its row is skipped", ""))
    if dcor_pkg is not None:
        t_gs, res_gs = runner.measure(lambda: gs.score(Xs, y_num, method="dcor"))
        dcor_pkg.distance_correlation(Xs[:40, 0].astype(np.float64), y_num[:40])  # its JIT warm-up
        runner.log(f"distances: dcor package loop on {sub} columns")
        t_dc, ref = runner.measure(lambda: np.array([dcor_pkg.distance_correlation(Xs[:, j].astype(np.float64), y_num)
                                                  for j in range(sub)]), repeats=1)
        rows.append(runner.Row(case, "`dcor.distance_correlation` (numeric y), per feature", label, t_dc,
                            notes=[f"dcor {dcor_pkg.__version__}, a Python loop over {sub:,} features; "
                                   f"genosift `dcor` takes {runner.fmt_t(t_gs.best)} s on the same columns"]))
        checks.append((f"dcor vs dcor package (numeric y, first {sub} features), max abs difference",
                       f"{np.max(np.abs(res_gs.statistic - ref)):.1e}",
                       "PASS" if np.allclose(res_gs.statistic, ref, rtol=1e-8, atol=1e-12) else "FAIL"))
    for name, res in results.items():
        if "numeric" in name:  # run.dense_case's numeric target depends on the first 100 features
            k = min(100, p)
            what = f"the {k} features the numeric target is built from"
        else:
            k = m
            what = f"the {k:,} class-shifted features"
        checks.append((f"{name}: share of {what} among the {k:,} best", f"{_top_hits(res, k):.1%}", "info"))


def _print(rows, checks):
    print("| case | method | data | time (s) | x floor | peak RSS increment (MB) | target | result |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- | --- |")
    for r in rows:
        ratio = f"{r.timing.best / r.floor:.2f}" if r.floor else "-"
        print(f"| {r.case} | {r.method} | {r.data} | {runner.fmt_t(r.timing.best)} | {ratio} | "
              f"{r.timing.peak_mb:,.1f} | {r.target or '-'} | {r.verdict or '-'} |")
    for r in rows:
        for note in r.notes:
            print(f"- {r.method}: {note}")
    print()
    for label, value, result in checks:
        print(f"- {label}: {value} {result}")


if __name__ == "__main__":
    rows, checks = [], []
    run(rows, checks, quick="--quick" in sys.argv[1:])
    _print(rows, checks)
