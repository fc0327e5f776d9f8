#!/usr/bin/env python
"""Benchmark of SelectKCV: ten values of k for about the cost of one, against GridSearchCV.

    python benchmarks/cases/bench_model_selection.py           # full sizes, about 1.5 minutes on 2 cores, ~1 GB RAM
    python benchmarks/cases/bench_model_selection.py --quick   # p / 10

Dense float64, 300 samples x 100,000 features, two classes, the first 1% of the features shifted
by class. Five stratified folds (shuffled, fixed seed), ANOVA F scores, SelectKCV's default model
(``LogisticRegression(max_iter=1000)``), balanced accuracy, ks = 1, 2, 5, 10, 20, 50, 100, 200,
500, 1000.

``gs.SelectKCV`` scores the features once per training fold and evaluates every k from that one
ranking, so ten ks cost the scoring plus ten model fits per fold. Floor: ``gs.SelectKCV`` with one
k (the smallest, whose model is the cheapest: the strictest comparison; and the largest, as
information). Target: ten ks within 1.5x one k. Compared with
``GridSearchCV(Pipeline([SelectKBest(f_classif), model]), {"k": ks})`` on the same folds, which
scores the features again for every k of every fold; both refit on all rows at the end, both run
on one process (no n_jobs), with BLAS limited to one thread (``threadpoolctl``): the fits are on at
most 1000 columns of 240 rows, where a second BLAS thread only adds contention (on a loaded 2-core
machine, lbfgs fits of that size ran 30x slower with two OpenBLAS threads, and the timings of
every row varied threefold). A check confirms both give the same cross-validation curve.

The ratio is (scoring + ten fits) / (scoring + one fit) per fold: it meets the target where
scoring the features costs more than the extra model fits, as at full size (100,000 features); at
p / 10 (``--quick``) ANOVA scores take a few milliseconds per fold, the fits dominate and the
ratio is about 3x (reported as FAIL there).

Every measured call: one untimed run (the memory measurement), then the runner's repeats (one
when run alone); the three ``SelectKCV`` calls compared take their timed runs in turn.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline

import genosift as gs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the runner run.py
import run as runner  # noqa: E402  (benchmarks/run.py; this module's entry point is also called run)

SEED = 20240611
TARGET = 1.5
KS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def _data(rng, n, p):
    y = np.repeat([0, 1], n // 2)
    rng.shuffle(y)
    X = rng.standard_normal((n, p))
    X[:, : max(1, p // 100)] += 0.4 * y[:, None]
    return X, y


def run(rows, checks, quick=False):
    """Append SelectKCV's ``runner.Row`` rows and checks (``quick``: p / 10), BLAS on one thread."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # every BLAS is loaded by the imports above
        _cases(rows, checks, quick)


def _cases(rows, checks, quick):
    n, p = 300, 100_000 // (10 if quick else 1)
    case = f"dense float64 {n} x {p:,}, 2 classes, 5 folds, {len(KS)} ks"
    runner.log(f"model selection: generating {n} x {p} float64")
    X, y = _data(np.random.default_rng(SEED), n, p)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    gs.score(X[:40, :64], y[:40], method="anova")  # compile the kernels before timing

    def select(ks):
        return gs.SelectKCV("anova", ks=ks, cv=cv).fit(X, y)

    runner.log(f"model selection: SelectKCV, one k (smallest, largest) and {len(KS)} ks, timed in turn")
    (t_min, _), (t_max, _), (t_all, sel) = runner.measure_together(
        [lambda: select((KS[0],)), lambda: select((KS[-1],)), lambda: select(KS)])
    runner.log(f"model selection: GridSearchCV(Pipeline(SelectKBest(f_classif), model)), {len(KS)} ks")
    model = LogisticRegression(max_iter=1000)
    grid = GridSearchCV(Pipeline([("select", SelectKBest(f_classif)), ("model", model)]),
                        {"select__k": list(KS)}, cv=cv, scoring="balanced_accuracy")
    t_grid, fitted = runner.measure(lambda: grid.fit(X, y))
    runner.log("model selection: the scoring part alone (5 training folds)")
    splits = list(cv.split(X, y))
    t_rank, _ = runner.measure(lambda: [gs.score(X[tr], y[tr], method="anova").ranking for tr, _ in splits])

    ratio = t_all.best / t_min.best
    rows.append(runner.Row(case, f"floor: `SelectKCV`, one k (k={KS[0]})", "full", t_min))
    rows.append(runner.Row(case, f"`SelectKCV`, one k (k={KS[-1]})", "full", t_max, t_min.best,
                           verdict=f"info: {t_max.best / t_min.best:.2f}x one k={KS[0]}"))
    rows.append(runner.Row(case, f"`SelectKCV`, ks = {', '.join(map(str, KS))}", "full", t_all, t_min.best,
                           target=f"<= {TARGET:g}x one k", verdict="PASS" if ratio <= TARGET else "FAIL",
                           notes=[f"{t_all.best / t_max.best:.2f}x one k={KS[-1]}; "
                                  f"{t_grid.best / t_all.best:.1f}x faster than GridSearchCV over the same ks"]))
    rows.append(runner.Row(case, "`GridSearchCV(Pipeline([SelectKBest(f_classif), LogisticRegression]))`", "full",
                           t_grid, t_min.best, verdict=f"info: {t_grid.best / t_all.best:.1f}x SelectKCV's time"))
    rows.append(runner.Row(case, "for scale: `gs.score(X[train], y[train], method=\"anova\")` on the 5 training folds",
                           "full", t_rank, t_min.best))
    same = np.abs(sel.cv_results_["mean_test_score"] - fitted.cv_results_["mean_test_score"]).max()
    checks.append(("model selection: SelectKCV curve vs GridSearchCV's (max |mean balanced accuracy difference| "
                   "over the ks)", f"{same:.1e}", "PASS" if same <= 1e-12 else "FAIL"))
    checks.append(("model selection: best k (SelectKCV / GridSearchCV)",
                   f"{sel.best_k_} / {fitted.best_params_['select__k']}",
                   "PASS" if sel.best_k_ == fitted.best_params_["select__k"] else "FAIL"))


if __name__ == "__main__":
    runner.REPEATS = 1
    rows, checks = [], []
    run(rows, checks, quick="--quick" in sys.argv[1:])
    runner.print_family(rows, checks)
