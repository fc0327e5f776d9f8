#!/usr/bin/env python
"""Benchmark of the multivariate selectors: MRMR against mrmr_selection, RedundancyFilter at 1M features.

    python benchmarks/cases/bench_multivariate.py           # full sizes, about 2.5 minutes on 2 cores, ~3 GB RAM
    python benchmarks/cases/bench_multivariate.py --quick   # p / 10 (mrmr_selection on smaller subsets)

MRMR: dense float64, 1000 samples x 100,000 features, two classes; the first 1% of the features
are noisy copies of 20 class-dependent factors (so redundancy matters), k=50, F-statistic
relevance, mean |Pearson r| redundancy, quotient scheme: ``mrmr_selection.mrmr_classif``'s
defaults, which ``gs.MRMR(relevance="anova", redundancy="pearson", scheme="quotient")``
reproduces. mrmr_selection keeps a p x p float64 redundancy table (80 GB at p = 100,000), so it is
run on evenly spaced column subsets (one run each, ``n_jobs=1`` so that its memory is measured in
this process) and its time and memory at full p are extrapolated from the subsets (time by
``a + c p`` fitted to them, which the speed-up uses, and by a fitted power of p; memory as 8 p^2
bytes plus the rest measured at the largest subset); genosift is run single-threaded on the same
subsets for the like-for-like ratio, and on all features with every thread. Targets: >= 20x
faster than mrmr_selection, peak memory below 10% of one float64 copy of X (O(p + k n)).

RedundancyFilter: CSR counts 1..20 (float32), 2000 x 1,000,000, density 1%, two classes; the first
10,000 features are 500 groups of 20 noisy copies of a class-dependent count pattern. k=100,
max_corr=0.7, Fisher score. Floor: the scores and their full ranking
(``gs.score(X, y, method="fisher").ranking``, what ``SelectKBest`` does), which the filter does
first. Target: within 3x the floor, peak below 10% of a dense float64 copy. A second row walks
every one of the 1,000,000 candidates (max_corr=0: everything correlated with the first kept
feature is rejected).
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the runner run.py
import run as runner  # noqa: E402  (benchmarks/run.py; this module's entry point is also called run)

SEED = 20240611
SPEED_TARGET = 20.0
FILTER_TARGET = 3.0


def _once(fn):
    """One run under ``runner.PeakRSS``, timed: for calls too slow to repeat."""
    with runner.PeakRSS() as mem:
        t0 = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - t0
    return runner.Timing(elapsed, [elapsed], mem.peak / 2**20, mem.exact), result


def _factor_dense(rng, n, p, n_factors=20):
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, p))
    m = max(n_factors, p // 100)
    factors = rng.standard_normal((n, n_factors)) + 0.6 * y[:, None]
    X[:, :m] += 1.5 * factors[:, np.arange(m) % n_factors]
    return X, y


def _grouped_sparse(rng, n, p, density, n_groups, copies):
    """``runner.sparse_case`` with its first ``n_groups * copies`` columns replaced by noisy copies."""
    X, y = runner.sparse_case(rng, n, p, density, k=2)
    m = n_groups * copies
    base = rng.poisson(1.0 + 2.0 * y[:, None], (n, n_groups)) * (rng.random((n, n_groups)) < 0.3)
    block = base[:, np.arange(m) % n_groups] + rng.poisson(0.05, (n, m))
    X = sp.hstack([sp.csc_matrix(block.astype(np.float32)), X.tocsc()[:, m:]], format="csr")
    return X, y, np.arange(m) % n_groups


def _mrmr_selection(X, y, k):
    import pandas as pd
    from mrmr import mrmr_classif

    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])], copy=False)
    return [int(s[1:]) for s in mrmr_classif(frame, pd.Series(y), K=k, n_jobs=1, show_progress=False)]


def _mrmr(rows, checks, quick):
    import genosift as gs

    n, p, k = 1000, 100_000 // (10 if quick else 1), 50
    case = f"dense float64 {n} x {p:,}, 2 classes, k={k}"
    runner.log(f"multivariate: generating {n} x {p} float64")
    X, y = _factor_dense(np.random.default_rng(SEED), n, p)
    make = lambda: gs.MRMR(k=k, relevance="anova", redundancy="pearson", scheme="quotient")  # noqa: E731
    make().fit(X[:60, :200], y[:60])  # compile the kernels before timing
    gs.MRMR(k=3, redundancy="mi").fit(X[:60, :200], y[:60])

    runner.log("multivariate: genosift MRMR on all features")
    t_full, full = runner.measure(lambda: make().fit(X, y))
    dense_copy = n * p * 8
    limit = dense_copy / 10 / 2**20
    runner.log("multivariate: genosift MRMR, mutual-information redundancy")
    t_mi, _ = runner.measure(lambda: gs.MRMR(k=k, relevance="mi", redundancy="mi").fit(X, y), repeats=1)

    try:
        import mrmr  # noqa: F401
    except ImportError:
        checks.append(("mrmr_selection", "not installed (`pip install mrmr-selection`): comparison skipped", ""))
        rows.append(runner.Row(case, "genosift `MRMR` (anova / pearson / quotient)", "full", t_full,
                               target=f"peak < {limit:,.0f} MB",
                               verdict="PASS" if t_full.peak_mb < limit else "FAIL"))
        return
    import importlib.metadata as md

    checks.append(("multivariate: mrmr_selection version", md.version("mrmr-selection"), "info"))
    subsets = (1_000, 2_000) if quick else (2_000, 5_000, 10_000)
    peer, ours = {}, {}
    previous = gs.engine.set_threads(1)
    try:
        for q in subsets:
            cols = np.linspace(0, p - 1, q).astype(np.intp)
            Xq = np.ascontiguousarray(X[:, cols])
            runner.log(f"multivariate: mrmr_selection on {q:,} features (one run)")
            peer[q] = _once(lambda: _mrmr_selection(Xq, y, k))
            runner.log(f"multivariate: genosift MRMR on {q:,} features, 1 thread")
            ours[q] = runner.measure(lambda: make().fit(Xq, y))
            same = ours[q][1].selected_.tolist() == peer[q][1]
            checks.append((f"multivariate: MRMR selection == mrmr_selection's, {q:,} features, k={k}",
                           str(same), "PASS" if same else "FAIL"))
    finally:
        gs.engine.set_threads(previous)

    b = subsets[-1]
    slope = np.polyfit(np.log(subsets), np.log([peer[q][0].best for q in subsets]), 1)[0]
    t_fit = peer[b][0].best * (p / b) ** slope
    # a + c p fitted to the subsets: every step visits every feature; ignores its p^2 terms
    t_peer = np.polyval(np.polyfit(subsets, [peer[q][0].best for q in subsets], 1), p)
    table = 8 * b * b / 2**20
    mem_peer = (peer[b][0].peak_mb - table) + 8 * p * p / 2**20
    for q in subsets:
        t_p, t_o = peer[q][0], ours[q][0]
        speed = t_p.best / t_o.best
        rows.append(runner.Row(f"dense float64 {n} x {q:,} (evenly spaced columns), k={k}",
                               "mrmr_selection `mrmr_classif` (n_jobs=1, one run)", "subset", t_p))
        rows.append(runner.Row(f"dense float64 {n} x {q:,} (evenly spaced columns), k={k}",
                               "genosift `MRMR` (anova / pearson / quotient), 1 thread", "subset", t_o,
                               target=f">= {SPEED_TARGET:g}x faster than mrmr_selection",
                               verdict=f"{'PASS' if speed >= SPEED_TARGET else 'FAIL'} ({speed:.0f}x)"))
    speed = t_peer / t_full.best
    rows.append(runner.Row(case, "genosift `MRMR` (anova / pearson / quotient), all threads", "full", t_full,
                           target=f">= {SPEED_TARGET:g}x faster than mrmr_selection (extrapolated), "
                                  f"peak < {limit:,.0f} MB",
                           verdict=f"{'PASS' if speed >= SPEED_TARGET else 'FAIL'} ({speed:.0f}x), "
                                   f"{'PASS' if t_full.peak_mb < limit else 'FAIL'} (memory)",
                           notes=[f"mrmr_selection at {p:,} features, extrapolated from the subsets (not run): "
                                  f"~{t_peer:,.0f} s by a + c p fitted to them (the speed-up uses this), "
                                  f"~{t_fit:,.0f} s by the fitted time ~ p^{slope:.2f}, and "
                                  f"~{mem_peer / 1024:,.0f} GiB (its p x p float64 redundancy table)"]))
    rows.append(runner.Row(case, "genosift `MRMR` (mi / mi / difference), all threads", "full", t_mi,
                           notes=[f"keeps the category codes of X, one byte per value ({n * p / 2**20:,.0f} MB); "
                                  "the peak is mostly that of scoring the `mi` relevance (gs.score's column blocks)"]))
    informative = max(20, p // 100)
    hit = np.mean(full.selected_ < informative)
    groups = len(np.unique(full.selected_[full.selected_ < informative] % 20))
    checks.append(("multivariate: MRMR, chosen features among the informative 1% / distinct factors among them",
                   f"{hit:.0%} / {groups} of 20", "info"))


def _filter(rows, checks, quick):
    import genosift as gs

    n, p, density = 2000, 1_000_000 // (10 if quick else 1), 0.01
    n_groups, copies, k = 500 // (10 if quick else 1), 20, 100 // (10 if quick else 1)
    case = f"sparse CSR {n} x {p:,}, density 1%, {n_groups} groups of {copies} copies"
    runner.log(f"multivariate: generating {n} x {p} CSR")
    X, y, group = _grouped_sparse(np.random.default_rng(SEED), n, p, density, n_groups, copies)
    gs.RedundancyFilter(k=3).fit(X[:60, :300], y[:60])
    limit = n * p * 8 / 10 / 2**20

    runner.log("multivariate: floor gs.score(X, y, method='fisher').ranking and RedundancyFilter, timed in turn")
    (t_floor, _), (t_sel, sel) = runner.measure_together([
        lambda: gs.score(X, y, method="fisher").ranking,
        lambda: gs.RedundancyFilter(score_func="fisher", k=k, max_corr=0.7).fit(X, y)])
    rows.append(runner.Row(case, "floor: `gs.score(X, y, method=\"fisher\").ranking`", "full", t_floor))
    ratio = t_sel.best / t_floor.best
    examined = len(sel.selected_) + len(sel.rejected_)
    rows.append(runner.Row(case, f"genosift `RedundancyFilter` (fisher, k={k}, max_corr=0.7)", "full", t_sel,
                           t_floor.best, target=f"<= {FILTER_TARGET:g}x floor, peak < {limit:,.0f} MB",
                           verdict=f"{'PASS' if ratio <= FILTER_TARGET else 'FAIL'} (time), "
                                   f"{'PASS' if t_sel.peak_mb < limit else 'FAIL'} (memory)",
                           notes=[f"{examined:,} candidates examined, {len(sel.rejected_):,} rejected"]))
    kept = sel.selected_
    in_group = kept[kept < len(group)]
    one_each = len(np.unique(group[in_group])) == len(in_group)
    R = np.corrcoef(X[:, kept].toarray().T)
    worst = np.abs(R[np.triu_indices(len(kept), 1)]).max()
    checks.append(("multivariate: RedundancyFilter keeps at most one copy per group",
                   f"{len(in_group)} kept from {len(np.unique(group[in_group]))} groups",
                   "PASS" if one_each else "FAIL"))
    checks.append(("multivariate: RedundancyFilter, max |r| among the kept features (dense recomputation)",
                   f"{worst:.3f}", "PASS" if worst <= 0.7 else "FAIL"))

    runner.log("multivariate: RedundancyFilter walking every candidate")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "kept 1 of k=2": the point of this row
        t_all, walk = runner.measure(lambda: gs.RedundancyFilter(score_func="fisher", k=2, max_corr=0.0).fit(X, y),
                                     repeats=1)
    rows.append(runner.Row(case, "genosift `RedundancyFilter` (k=2, max_corr=0: every candidate examined)", "full",
                           t_all, t_floor.best,
                           verdict=f"info: {len(walk.selected_) + len(walk.rejected_):,} candidates examined"))


def run(rows, checks, quick=False):
    """Append the multivariate selectors' ``runner.Row`` rows and checks (``quick``: p / 10)."""
    _mrmr(rows, checks, quick)
    runner._release_free_memory()
    _filter(rows, checks, quick)
    runner._release_free_memory()


if __name__ == "__main__":
    rows, checks = [], []
    run(rows, checks, quick="--quick" in sys.argv[1:])
    runner.print_family(rows, checks)
