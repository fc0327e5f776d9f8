#!/usr/bin/env python
"""Benchmark the contingency-table scores against scikit-learn.

    python benchmarks/cases/bench_contingency.py            # full sizes, about a minute
    python benchmarks/cases/bench_contingency.py --quick    # p / 10

Cases (seeded data, generated as in run.py):

1. dense 1000 x 10,000, 3 classes. ``mi`` against ``sklearn.feature_selection.mutual_info_classif``
   - with ``discrete_features=True`` on discrete data (the continuous features cut at the
     standard-normal quintiles into 5 integer levels, int8): the same MI, checked feature by
     feature; all 10,000 columns on both sides;
   - with its default estimator (continuous features: k-NN, Kraskov et al. / Ross 2014,
     n_neighbors=3) on the float32 features: scikit-learn is timed on the FIRST 500 COLUMNS ONLY
     (it takes milliseconds per feature); genosift is timed on the same 500 columns for the same-data
     ratio that the target is judged on, and on all 10,000 for the per-feature rate (labelled).
     The two estimators differ (binned plug-in vs k-NN), so only how many of the informative
     features each puts first is reported, as information.
2. sparse CSR 2000 x 1,000,000 counts (density 1%, float32, int32 indices): ``chi2_counts``
   against ``sklearn.feature_selection.chi2`` (statistic and p checked, rtol 1e-10).

Each case also times ``X.sum(axis=0)`` (the floor: one read of X) and ``f_classif`` on the same
data, for scale. scikit-learn's slow reference calls run once untimed and once timed (best of
1); everything else best of ``run.REPEATS``.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the runner run.py
import run as runner  # noqa: E402  (the benchmark runner: Row, measure, data generators)

KNN_SUBSET = 500
QUINTILES = np.array([-0.8416212335729143, -0.2533471031357997, 0.2533471031357997, 0.8416212335729143])


def _dense(rows, checks, quick):
    from sklearn.feature_selection import f_classif, mutual_info_classif

    import genosift as gs

    rng = np.random.default_rng(runner.SEED)
    n, p = 1000, 10_000 // (10 if quick else 1)
    X, y, _ = runner.dense_case(rng, n, p)
    Xd = np.digitize(X, QUINTILES).astype(np.int8)
    case = f"dense {n} x {p:,}, 3 classes"
    gs.score(np.ascontiguousarray(X[:40, :64]), y[:40], method="mi")  # JIT warm-up, both dtypes
    gs.score(np.ascontiguousarray(Xd[:40, :64]), y[:40], method="mi")

    # --- discrete data: mutual_info_classif(discrete_features=True) on every column
    runner.log("contingency: floor and f_classif on the discrete data")
    t_floor_d, _ = runner.measure(lambda: Xd.sum(axis=0))
    t_fc_d, _ = runner.measure(lambda: f_classif(Xd, y))
    runner.log("contingency: genosift mi, discrete data")
    t_mi_d, res_d = runner.measure(lambda: gs.score(Xd, y, method="mi"))
    runner.log("contingency: sklearn mutual_info_classif(discrete_features=True), all columns (slow)")
    t_sk_d, sk_d = runner.measure(lambda: mutual_info_classif(Xd, y, discrete_features=True), repeats=1)
    data_d = "int8, 5 levels (normal quintiles), all features"
    speed = t_sk_d.best / t_mi_d.best
    rows.append(runner.Row(case, "genosift `mi` (discrete features)", data_d, t_mi_d, t_floor_d.best, t_fc_d.best,
                           ">= 100x faster than mutual_info_classif(discrete_features=True)",
                           f"{'PASS' if speed >= 100 else 'FAIL'} ({speed:,.0f}x)"))
    rows.append(runner.Row(case, "sklearn `mutual_info_classif(discrete_features=True)`", data_d, t_sk_d,
                           t_floor_d.best, t_fc_d.best, notes=["best of 1 timed run (one call takes seconds)"]))
    diff = float(np.nanmax(np.abs(res_d.statistic - sk_d)))
    checks.append((f"{case}: mi vs mutual_info_classif(discrete_features=True), max abs difference",
                   f"{diff:.1e}", "PASS" if diff <= 1e-12 else "FAIL (atol 1e-12)"))

    # --- continuous data: the k-NN estimator on a column subset
    runner.log("contingency: floor and f_classif on the continuous data")
    t_floor, _ = runner.measure(lambda: X.sum(axis=0))
    t_fc, _ = runner.measure(lambda: f_classif(X, y))
    runner.log("contingency: genosift mi, continuous data, all columns")
    t_mi, res = runner.measure(lambda: gs.score(X, y, method="mi"))
    q = min(KNN_SUBSET // (10 if quick else 1), p)
    Xq = np.ascontiguousarray(X[:, :q])
    runner.log(f"contingency: genosift mi and sklearn mutual_info_classif (k-NN) on the first {q} columns")
    t_mi_q, res_q = runner.measure(lambda: gs.score(Xq, y, method="mi"))
    t_sk_q, sk_q = runner.measure(lambda: mutual_info_classif(Xq, y, random_state=0), repeats=1)
    sub = f"float32, first {q:,} features only"
    speed_q = t_sk_q.best / t_mi_q.best
    rate = (t_sk_q.best / q) / (t_mi.best / p)
    rows.append(runner.Row(case, "genosift `mi` (continuous: 5 equal-frequency bins)", "float32, all features",
                           t_mi, t_floor.best, t_fc.best,
                           notes=[f"time per feature {1e6 * t_mi.best / p:.1f} us against mutual_info_classif's "
                                  f"{1e6 * t_sk_q.best / q:,.0f} us per feature measured on the first {q:,} columns: "
                                  f"{rate:,.0f}x (a per-feature rate comparison; scikit-learn was not run on "
                                  "all features)"]))
    rows.append(runner.Row(case, "genosift `mi` (continuous)", sub, t_mi_q, None, None,
                           ">= 100x faster than mutual_info_classif (default k-NN), same columns",
                           f"{'PASS' if speed_q >= 100 else 'FAIL'} ({speed_q:,.0f}x)"))
    rows.append(runner.Row(case, "sklearn `mutual_info_classif` (default: k-NN estimator, n_neighbors=3)", sub,
                           t_sk_q, None, None,
                           notes=[f"run on the first {q:,} columns only ({1e3 * t_sk_q.best / q:.1f} ms per feature, "
                                  "single-threaded by default: n_jobs=None); best of 1 timed run; nothing "
                                  "extrapolated"]))
    informative = max(1, p // 100)  # the first 1% of the columns are shifted by class
    found = np.mean(res.ranking[:informative] < informative)
    checks.append((f"{case}: informative features (the first {informative}) among genosift mi's top "
                   f"{informative}, all columns", f"{found:.0%}", "info"))
    m = min(informative, q)
    for label, scores in (("genosift mi (binned)", res_q.statistic), ("sklearn k-NN MI", sk_q)):
        top = np.argsort(-scores, kind="stable")[:m]
        checks.append((f"{case}: informative features among the top {m} of {label}, first {q} columns",
                       f"{np.mean(top < informative):.0%}", "info: two estimators of the same quantity"))


def _sparse(rows, checks, quick):
    from sklearn.feature_selection import chi2, f_classif

    import genosift as gs

    rng = np.random.default_rng(runner.SEED + 1)
    n, p = 2000, 1_000_000 // (10 if quick else 1)
    runner.log(f"contingency: generating sparse {n} x {p:,} counts")
    X, y = runner.sparse_case(rng, n, p, 0.01)
    case = f"sparse CSR {n} x {p:,} counts, density 1%, 3 classes"
    gs.score(X[:40, :64], y[:40], method="chi2_counts")  # JIT warm-up (float32 data, int32 indices)
    runner.log("contingency: floor, f_classif")
    t_floor, _ = runner.measure(lambda: X.sum(axis=0))
    t_fc, _ = runner.measure(lambda: f_classif(X, y))
    runner.log("contingency: genosift chi2_counts, sklearn chi2")
    t_gs, res = runner.measure(lambda: gs.score(X, y, method="chi2_counts"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        t_sk, (stat_sk, p_sk) = runner.measure(lambda: chi2(X, y))
    speed = t_sk.best / t_gs.best
    rows.append(runner.Row(case, "genosift `chi2_counts`", "float32 counts, all features", t_gs, t_floor.best,
                           t_fc.best, "faster than sklearn chi2", f"{'PASS' if speed > 1 else 'FAIL'} ({speed:.1f}x)"))
    rows.append(runner.Row(case, "sklearn `chi2`", "float32 counts, all features", t_sk, t_floor.best, t_fc.best))
    # sklearn multiplies the float32 counts by a float64 class indicator: float64 arithmetic
    rel, nf = runner.max_rel_diff(res.statistic, stat_sk)
    checks.append((f"{case}: chi2_counts statistic vs sklearn chi2, max relative difference "
                   f"({nf:,} features)", f"{rel:.1e}", "PASS" if rel <= 1e-10 else "FAIL (rtol 1e-10)"))
    relp, _ = runner.max_rel_diff(res.pvalues, p_sk)
    checks.append((f"{case}: chi2_counts p vs sklearn chi2 p, max relative difference",
                   f"{relp:.1e}", "PASS" if relp <= 1e-10 else "FAIL (rtol 1e-10)"))


def run(rows, checks, quick=False):
    """Append the contingency rows and checks (see the module docstring)."""
    _dense(rows, checks, quick)
    runner._release_free_memory()
    _sparse(rows, checks, quick)


if __name__ == "__main__":
    import time

    quick = "--quick" in sys.argv[1:]
    rows, checks = [], []
    started = time.perf_counter()
    run(rows, checks, quick=quick)
    from common import machine_info

    print(f"\nnproc {machine_info()['nproc']}, {machine_info()['cpu']}; "
          f"load average {runner.os.getloadavg()[0]:.2f}; total {time.perf_counter() - started:.0f} s\n")
    print("| case | method | data | time (s) | x floor | peak RSS increment (MB) | target | result |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- | --- |")
    notes = []
    for r in rows:
        label = r.method
        if r.notes:
            notes.append("; ".join(r.notes))
            label += f" [{len(notes)}]"
        floor = f"{r.timing.best / r.floor:.2f}" if r.floor else "-"
        print(f"| {r.case} | {label} | {r.data} | {runner.fmt_t(r.timing.best)} | {floor} | "
              f"{r.timing.peak_mb:,.1f} | {r.target or '-'} | {r.verdict or '-'} |")
    print()
    for i, note in enumerate(notes, 1):
        print(f"[{i}] {note}")
    print("\n| check | value | result |\n| --- | --- | --- |")
    for c, v, s in checks:
        print(f"| {c} | {v} | {s} |")
