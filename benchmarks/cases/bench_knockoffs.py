#!/usr/bin/env python
"""Benchmark of the knockoff filter: ``gs.KnockoffSelector`` against knockpy, its false discovery
rate over many simulations beside the elastic net and marginal tests, and group knockoffs on
simulated clonal populations.

    python benchmarks/cases/bench_knockoffs.py --knockpy /path/to/venv/bin/python
        # writes benchmarks/results/RESULTS-knockoffs.md

1. Side by side with knockpy (run by the Python of its own venv, ``--knockpy``; without it that
   part is skipped): Gaussian AR(1) features (rho 0.5, n = 300, p = 400), 40 non-null features
   (random signs) and a linear or a logistic target; knockpy's ``KnockoffFilter(ksampler="gaussian",
   fstat="lasso", knockoff_kwargs={"method": "mvr"}).forward(X, y, fdr=0.1, shrinkage="ledoitwolf")``
   beside ``KnockoffSelector(fdr=0.1, statistic="lasso", s_method="mvr")``, both on the same
   ``--knockpy-runs`` data sets (each side in one warm process: time per fit, power, FDP), the
   first fit of genosift in a fresh process (numba's cache filled, and empty), where each side's
   time goes, and the S-matrix alone (``knockpy.smatrix.compute_smatrix`` against
   ``genosift.knockoffs.gaussian.s_matrix`` on the AR(1) correlation) with each objective.
2. The false discovery rate over ``--runs`` simulations per design (genosift alone): Gaussian
   AR(1) and thresholded binary features, with 20 causal features of 200 and without (a target
   independent of the features); beside the knockoffs the elastic net (``ElasticNetSelector``) and
   a marginal test (``pearson``, Benjamini-Hochberg q <= 0.1), and their power at a cut of their
   ranking chosen knowing the truth (the oracle: the most features whose FDP is within the
   knockoffs' mean FDP, per run).
3. Group knockoffs (``feature_groups="correlation"``) on the gene presence/absence of
   ``--populations`` simulated clonal populations (``clonal_gene_table``: 400 genomes, 8
   lineages, lineage 0 with raised odds of the phenotype), with and without the lineages as
   covariates; beside them the elastic net and marginal tests.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, best_run, header, timed_run  # noqa: E402

N, P, RHO, NONNULL = 300, 400, 0.5, 40
AMPLITUDE = {"linear": 0.3, "logistic": 1.0}
FDR = 0.1
S_SIZES = (200, 400, 1000)
S_METHODS = ("mvr", "maxent", "sdp")
SDP_LARGEST = 400  # the SDP beyond this size takes minutes on both sides: left out
#: The threads of every process measured (BLAS, OpenMP, numba), set by ``--threads``.
THREADS = {}

# The peer's side, run by knockpy's Python: ``fits DATA OUT``, ``smatrix SIZES OUT`` or ``cold DATA OUT``.
PEER = r'''
import json, resource, sys, time, warnings
import numpy as np
warnings.filterwarnings("ignore")
from knockpy import smatrix, utilities
from knockpy.knockoff_filter import KnockoffFilter

def fit(X, y, seed):
    np.random.seed(seed)
    kf = KnockoffFilter(ksampler="gaussian", fstat="lasso", knockoff_kwargs={"method": "mvr"})
    return kf.forward(X=X, y=y, fdr=0.1, shrinkage="ledoitwolf").astype(bool)

what, source, out = sys.argv[1:4]
if what == "cold":
    data = np.load(source)
    started = time.perf_counter()
    fit(data["X"][0], data["y"][0], 0)
    json.dump({"seconds": time.perf_counter() - started}, open(out, "w"))
elif what == "fits":
    data = np.load(source)
    fit(data["X"][0][:, :20], data["y"][0], 0)  # the imports and first calls, not timed
    seconds, selected = [], []
    for r in range(data["X"].shape[0]):
        started = time.perf_counter()
        selected.append(fit(data["X"][r], data["y"][r], r).tolist())
        seconds.append(time.perf_counter() - started)
    X, y = data["X"][0], data["y"][0]
    started = time.perf_counter()
    Sigma, _ = utilities.estimate_covariance(X, 1e-2, "ledoitwolf")
    covariance = time.perf_counter() - started
    started = time.perf_counter()
    smatrix.compute_smatrix(Sigma, method="mvr")
    s_seconds = time.perf_counter() - started
    json.dump({"seconds": seconds, "selected": selected, "covariance": covariance, "smatrix": s_seconds,
               "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}, open(out, "w"))
else:
    rho, largest = 0.5, 400
    results = {}
    for method in ("mvr", "maxent", "sdp"):
        small = rho ** np.abs(np.subtract.outer(np.arange(20), np.arange(20)))
        smatrix.compute_smatrix(small, method=method)  # the solver's first call, not timed
        for p in map(int, source.split(",")):
            if method == "sdp" and p > largest:
                continue
            C = rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
            started = time.perf_counter()
            S = smatrix.compute_smatrix(C, method=method)
            results[f"{method} {p}"] = {"seconds": time.perf_counter() - started, "s": np.diag(S).tolist()}
    json.dump(results, open(out, "w"))
'''

# genosift's first fit in a fresh process: ``DATA`` -> its seconds (import and fit) as JSON on stdout.
COLD = r'''
import json, sys, time
started = time.perf_counter()
import numpy as np
import genosift as gs
imported = time.perf_counter() - started
data = np.load(sys.argv[1])
started = time.perf_counter()
gs.KnockoffSelector(fdr=0.1, statistic="lasso", s_method="mvr").fit(data["X"][0], data["y"][0])
print(json.dumps({"import": imported, "fit": time.perf_counter() - started}))
'''


def ar1(p, rho=RHO):
    return rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))


def gaussian_design(rng, n, p, rho=RHO):
    return rng.standard_normal((n, p)) @ np.linalg.cholesky(ar1(p, rho)).T


def binary_design(rng, n, p, rho=RHO, frequency=0.3):
    """0/1 features: a latent AR(1) Gaussian above its ``1 - frequency`` quantile."""
    from scipy.special import ndtri

    return (gaussian_design(rng, n, p, rho) > ndtri(1.0 - frequency)).astype(np.float64)


def target(rng, X, nonnull, amplitude, family, standardise=None):
    """A linear (unit noise) or logistic target of the features ``nonnull`` with coefficients of
    size ``amplitude`` (random signs) on the features standardised by ``standardise`` (mean, sd)."""
    Z = X if standardise is None else (X - standardise[0]) / standardise[1]
    beta = np.zeros(X.shape[1])
    beta[nonnull] = amplitude * rng.choice([-1.0, 1.0], nonnull.size)
    eta = Z @ beta
    if family == "linear":
        return eta + rng.standard_normal(X.shape[0])
    return (rng.random(X.shape[0]) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)


def power_fdp(selected, truth):
    """``(power, FDP, selected)`` of the boolean ``selected`` against the boolean ``truth``."""
    selected = np.asarray(selected, dtype=bool)
    hits, count = int((selected & truth).sum()), int(selected.sum())
    return hits / max(int(truth.sum()), 1), (count - hits) / max(count, 1), count


def mean_se(values):
    values = np.asarray(values, dtype=np.float64)
    return values.mean(), values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else np.nan


def share(seconds, total):
    return f"{seconds:.3f} ({100 * seconds / total:.0f}%)"


def fmt(values, digits=3):
    m, se = mean_se(values)
    return f"{m:.{digits}f} ± {se:.{digits}f}"


# --------------------------------------------------------------------------------------------
# 1. against knockpy
# --------------------------------------------------------------------------------------------

def simulated_sets(family, runs, seed):
    """``runs`` data sets of the AR(1) design with a ``family`` target: (X, y, truth) stacked."""
    rng = np.random.default_rng(seed)
    X, y, truth = [], [], []
    for _ in range(runs):
        x = gaussian_design(rng, N, P)
        nonnull = np.sort(rng.choice(P, NONNULL, replace=False))
        X.append(x)
        y.append(target(rng, x, nonnull, AMPLITUDE[family], family))
        truth.append(np.isin(np.arange(P), nonnull))
    return np.stack(X), np.stack(y), np.stack(truth)


def genosift_fits(X, y):
    import genosift as gs

    gs.KnockoffSelector(statistic="lasso").fit(X[0][:, :20], y[0])  # the first calls, not timed
    seconds, selected = [], []
    for r in range(X.shape[0]):
        started = time.perf_counter()
        sel = gs.KnockoffSelector(fdr=FDR, statistic="lasso", s_method="mvr", random_state=r).fit(X[r], y[r])
        seconds.append(time.perf_counter() - started)
        selected.append(sel.get_support())
    return seconds, selected


def timed(call):
    """``(seconds, value)`` of one ``call()``."""
    started = time.perf_counter()
    value = call()
    return time.perf_counter() - started, value


def genosift_split(X, y, repeats):
    """Where a fit's time goes: the feature model (covariance), the S-matrix, the draw, the rest."""
    import genosift as gs
    from genosift.knockoffs.gaussian import feature_model, knockoff_draw, s_matrix

    model = best_run(lambda: timed(lambda: feature_model(X)), repeats)
    S = best_run(lambda: timed(lambda: s_matrix(model[1].corr, method="mvr")), repeats)
    draw = best_run(lambda: timed(lambda: knockoff_draw(model[1], S[1][0], np.random.default_rng(0))), repeats)
    total = best_run(lambda: timed(lambda: gs.KnockoffSelector(statistic="lasso").fit(X, y)), repeats)
    return {"covariance": model[0], "smatrix": S[0], "draw": draw[0], "total": total[0]}


def peer_run(knockpy, what, source, folder):
    out = Path(folder) / f"peer-{what}.json"
    seconds, rss, _ = timed_run([knockpy, "-c", PEER, what, source, out], folder, env=THREADS)
    return json.loads(out.read_text()), seconds, rss


def objectives(C, s):
    """``(mvr, maxent, sdp, smallest eigenvalue of 2C - S)`` of the diagonal S-matrix ``s``:
    tr(G^-1) = sum 1/s + tr((2C - S)^-1) (to minimise), log det G = sum log s + log det(2C - S)
    (to maximise) and sum s (to maximise), ``G`` the joint covariance of features and knockoffs."""
    A = 2.0 * C - np.diag(s)
    values = np.linalg.eigvalsh(A)
    if values[0] <= 0 or (s <= 0).any():
        return np.inf, -np.inf, float(s.sum()), float(values[0])
    return (float((1.0 / s).sum() + (1.0 / values).sum()), float(np.log(s).sum() + np.log(values).sum()),
            float(s.sum()), float(values[0]))


def smatrix_rows(knockpy, folder, repeats):
    from genosift.knockoffs.gaussian import s_matrix

    s_matrix(ar1(20), method="sdp")
    theirs = peer_run(knockpy, "smatrix", ",".join(map(str, S_SIZES)), folder)[0] if knockpy else {}
    rows = []
    for method in S_METHODS:
        for p in S_SIZES:
            if method == "sdp" and p > SDP_LARGEST:
                continue
            C = ar1(p)
            ours = best_run(lambda: timed(lambda: s_matrix(C, method=method)), repeats)  # noqa: B023
            ours_s = np.diag(ours[1][0])
            peer = theirs.get(f"{method} {p}")
            peer_s = np.asarray(peer["s"]) if peer else None
            rows.append((method, p, ours[0], peer["seconds"] if peer else np.nan, objectives(C, ours_s),
                         objectives(C, peer_s) if peer else None,
                         float(np.abs(ours_s - peer_s).max()) if peer else np.nan))
            print(rows[-1][:4], flush=True)
    return rows


def against_knockpy(knockpy, runs, repeats, folder):
    """The text of part 1."""
    lines = ["## 1. Side by side with knockpy", ""]
    fits = {}
    for seed, family in enumerate(("linear", "logistic")):
        X, y, truth = simulated_sets(family, runs, 100 + seed)
        data = Path(folder) / f"{family}.npz"
        np.savez(data, X=X, y=y)
        ours_s, ours_sel = genosift_fits(X, y)
        peer = peer_run(knockpy, "fits", data, folder)[0] if knockpy else None
        split = genosift_split(X[0], y[0], max(repeats, 5))
        ours = [power_fdp(s, t) for s, t in zip(ours_sel, truth)]
        theirs = [power_fdp(s, t) for s, t in zip(peer["selected"], truth)] if peer else None
        fits[family] = (ours_s, ours, peer, theirs, split)
        print(family, np.median(ours_s), peer and np.median(peer["seconds"]), flush=True)
    cold = {}
    data = Path(folder) / "linear.npz"
    for label, env in (("numba's cache filled", {}), ("numba's cache empty", {"NUMBA_CACHE_DIR": f"{folder}/nc"})):
        seconds, rss, out = timed_run([sys.executable, "-c", COLD, data], folder, env={**THREADS, **env})
        cold[label] = (seconds, rss, json.loads(out))
    peer_cold = peer_run(knockpy, "cold", data, folder) if knockpy else None
    lines += [f"AR(1) Gaussian features (rho {RHO}, n = {N}, p = {P}), {NONNULL} non-null features of "
              f"coefficient ±{AMPLITUDE['linear']} (linear target, unit noise) or ±{AMPLITUDE['logistic']} "
              f"(logistic target), FDR {FDR}; {runs} data sets per target (a small R to keep knockpy's time "
              "bounded: power and FDP are given with their Monte-Carlo standard errors), the same data for "
              "both. Each side fits them one after the other in one process, after one untimed first fit "
              "(warm); knockpy's seed `np.random.seed(r)`, genosift's `random_state=r`.", "",
              "| target | knockpy s/fit (median) | genosift s/fit (median) | ratio | knockpy power | genosift "
              "power | power difference (paired) | knockpy mean FDP | genosift mean FDP |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    verdicts = []
    for family, (ours_s, ours, peer, theirs, _) in fits.items():
        ps, os_ = np.median(peer["seconds"]), np.median(ours_s)
        difference = [o[0] - t[0] for o, t in zip(ours, theirs)]
        lines.append(f"| {family} | {ps:.3f} | {os_:.3f} | {ps / os_:.1f}x | {fmt([t[0] for t in theirs])} | "
                     f"{fmt([o[0] for o in ours])} | {fmt(difference)} | {fmt([t[1] for t in theirs])} | "
                     f"{fmt([o[1] for o in ours])} |")
        m, se = mean_se(difference)
        verdicts.append(f"{family}: {ps / os_:.1f}x ({'met' if ps / os_ >= 5 else 'not met'}), power difference "
                        f"{m:+.3f} ({abs(m) / se if se > 0 else 0:.1f} standard errors)")
    lines += ["", "Goal: genosift at least 5x faster than knockpy at equal power. " + "; ".join(verdicts) + "."]
    lines += ["", "Where the time of one fit goes (the first data set; genosift best of "
              f"{max(repeats, 5)} for each step and for the whole fit, the rest by difference; knockpy's covariance "
              "and S-matrix timed once on their own after its fits, beside its first timed fit):", "",
              "| target | side | covariance | S-matrix (mvr) | knockoff draw | lasso CV and the rest | total |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for family, (_, _, peer, _, split) in fits.items():
        total = split["total"]
        rest = total - split["covariance"] - split["smatrix"] - split["draw"]
        cells = [share(split[k], total) for k in ("covariance", "smatrix", "draw")] + [share(rest, total)]
        lines.append(f"| {family} | genosift | {' | '.join(cells)} | {total:.3f} |")
        if peer:
            total = peer["seconds"][0]
            cells = [share(peer["covariance"], total), share(peer["smatrix"], total), "(in the rest)",
                     share(total - peer["covariance"] - peer["smatrix"], total)]
            lines.append(f"| {family} | knockpy | {' | '.join(cells)} | {total:.3f} |")
    lines += ["", "The first fit in a fresh process (the linear target's first data set; whole process wall time "
              "and peak memory from GNU time):", "",
              "| side | process s | import s | first fit s | peak MiB |", "|---|---:|---:|---:|---:|"]
    for label, (seconds, rss, inner) in cold.items():
        lines.append(f"| genosift, {label} | {seconds:.2f} | {inner['import']:.2f} | {inner['fit']:.2f} | {rss:,.0f} |")
    if peer_cold:
        inner, seconds, rss = peer_cold
        lines.append(f"| knockpy | {seconds:.2f} | - | {inner['seconds']:.2f} | {rss:,.0f} |")
    lines += ["", "S-matrix alone on the AR(1) correlation (rho 0.5): genosift's `s_matrix` (best of "
              f"{repeats}) against knockpy's `compute_smatrix` (one run after an untimed call at p = 20; its "
              "default solvers: coordinate descent for mvr and maxent, cvxpy for sdp); max |diag S| difference; "
              "each S's objectives: tr(G^-1) = sum 1/s + tr((2C - S)^-1) (mvr, smaller is better), log det G = "
              "sum log s + log det(2C - S) (maxent, larger is better), sum s (sdp, larger is better), G the "
              f"joint covariance. SDP beyond p = {SDP_LARGEST} left out (minutes on both sides).", "",
              "| method | p | knockpy s | genosift s | ratio | max abs diff diag S | tr(G^-1) knockpy / genosift | "
              "log det G knockpy / genosift | sum s knockpy / genosift |", "|---|---:|---:|---:|---:|---:|---|---|---|"]
    for method, p, ours_t, peer_t, ours_o, peer_o, diff in smatrix_rows(knockpy, folder, repeats):
        po = peer_o or (np.nan,) * 4
        lines.append(f"| {method} | {p:,} | {peer_t:.3f} | {ours_t:.3f} | {peer_t / ours_t:.1f}x | {diff:.2e} | "
                     f"{po[0]:.6g} / {ours_o[0]:.6g} | {po[1]:.6g} / {ours_o[1]:.6g} | {po[2]:.6g} / {ours_o[2]:.6g} |")
    return lines + [""]


# --------------------------------------------------------------------------------------------
# 2. false discovery rate over many runs
# --------------------------------------------------------------------------------------------

FDR_N, FDR_P, FDR_CAUSAL = 300, 200, 20
FDR_AMPLITUDE = {"gaussian": 0.25, "binary": 0.25}


def oracle_power(order, truth, level):
    """The power of the longest head of the ranking ``order`` whose FDP is at most ``level``."""
    hits = np.cumsum(truth[order])
    k = np.arange(1, order.size + 1)
    ok = np.flatnonzero((k - hits) / k <= level)
    return hits[ok[-1]] / truth.sum() if ok.size else 0.0


def fdr_runs(runs, statistic):
    import genosift as gs

    designs = {}
    for d, (kind, signal) in enumerate([(k, s) for k in ("gaussian", "binary") for s in (True, False)]):
        rng = np.random.default_rng(1000 + d)
        rows = {"knockoffs": [], "enet": [], "pearson": [], "enet order": [], "pearson order": [], "truth": []}
        started = time.perf_counter()
        for r in range(runs):
            X = gaussian_design(rng, FDR_N, FDR_P) if kind == "gaussian" else binary_design(rng, FDR_N, FDR_P)
            causal = np.sort(rng.choice(FDR_P, FDR_CAUSAL, replace=False)) if signal else np.array([], dtype=int)
            standard = None if kind == "gaussian" else (0.3, np.sqrt(0.21))
            y = target(rng, X, causal, FDR_AMPLITUDE[kind], "linear", standard)
            truth = np.isin(np.arange(FDR_P), causal)
            ko = gs.KnockoffSelector(fdr=FDR, statistic=statistic, random_state=r).fit(X, y)
            en = gs.ElasticNetSelector(cv=5, random_state=r).fit(X, y)
            marginal = gs.score(X, y, method="pearson")
            rows["knockoffs"].append(power_fdp(ko.get_support(), truth))
            rows["enet"].append(power_fdp(en.get_support(), truth))
            rows["pearson"].append(power_fdp(marginal.qvalues <= FDR, truth))
            coef = np.abs(en.coef_)
            rows["enet order"].append(np.flatnonzero(coef > 0)[np.argsort(-coef[coef > 0], kind="stable")])
            rows["pearson order"].append(np.argsort(marginal.pvalues, kind="stable"))
            rows["truth"].append(truth)
        designs[(kind, signal)] = (rows, time.perf_counter() - started)
        print(kind, signal, fmt([o[1] for o in rows["knockoffs"]]), fmt([o[0] for o in rows["knockoffs"]]),
              flush=True)
    return designs


def fdr_section(runs, statistic):
    designs = fdr_runs(runs, statistic)
    lines = ["## 2. The false discovery rate over many simulations", "",
             f"{runs} simulations per design, n = {FDR_N}, p = {FDR_P}; Gaussian: AR(1) features (rho {RHO}); "
             f"binary: a latent AR(1) Gaussian (rho {RHO}) above its 0.7 quantile (0/1 features at frequency 0.3); "
             f"with signal: {FDR_CAUSAL} causal features at random with coefficients ±{FDR_AMPLITUDE['gaussian']} on "
             "the standardised features (binary: (x - 0.3) / sd), a linear target with unit noise; without: the "
             f"target N(0, 1) independent of the features. Knockoffs: `KnockoffSelector(fdr={FDR}, "
             f"statistic={statistic!r})` (mvr, Ledoit-Wolf); the elastic net `ElasticNetSelector(cv=5)` "
             f"(l1_ratio 0.5, the penalty of least CV deviance: its non-zero coefficients); marginal: `gs.score(X, y, "
             f"method='pearson')` with BH q <= {FDR}. A false selection is a feature outside the causal set (a "
             "conditional null: a neighbour of a causal feature is correlated with the target but is not in the "
             "model). Mean FDP and power ± their Monte-Carlo standard errors. Without signal every selection is "
             "false: the FDP of a run is 1 when it selects anything, so the mean FDP is the share of runs with a "
             "false selection.", "",
             "| features | signal | method | mean FDP | power | mean selected | oracle power at FDP <= the knockoffs' "
             f"mean FDP | oracle power at FDP <= {FDR} | seconds (design, all methods) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for (kind, signal), (rows, seconds) in designs.items():
        level = float(np.mean([o[1] for o in rows["knockoffs"]]))
        for method in ("knockoffs", "enet", "pearson"):
            fdp = [o[1] for o in rows[method]]
            pw = [o[0] for o in rows[method]] if signal else None
            selected = np.mean([o[2] for o in rows[method]])
            oracle = ["-", "-"]
            if signal and method != "knockoffs":
                oracle = [fmt([oracle_power(order, t, at) for order, t in zip(rows[f"{method} order"], rows["truth"])])
                          for at in (level, FDR)]
            lines.append(f"| {kind} | {'20 of 200' if signal else 'none'} | {method} | {fmt(fdp)} | "
                         f"{fmt(pw) if pw else '-'} | {selected:.1f} | {oracle[0]} | {oracle[1]} | "
                         f"{f'{seconds:.0f}' if method == 'knockoffs' else ''} |")
    lines += ["", "The oracle cut keeps, in each run, the longest head of the method's ranking (|coefficient| for the "
              "elastic net, p-value for the marginal test) whose FDP is at most the knockoffs' mean FDP in that "
              "design (or at most the nominal level): its mean FDP is at most that level and its power is an upper "
              "bound for any cut of that ranking at that FDR (it uses the truth).", ""]
    return lines


# --------------------------------------------------------------------------------------------
# 3. clonal populations
# --------------------------------------------------------------------------------------------

CLONAL = dict(n_genomes=400, n_lineages=8, genes_per_lineage=5, n_random_genes=20)
#: The second phenotype's causal genes besides the simulator's: the first random genes (``acc_1``...).
MORE_CAUSAL, MORE_LOG_ODDS = 9, 1.5


def clonal_settings(seed):
    """``(X, lineage-0 markers, [(phenotype, y, causal genes, covariates or None), ...])`` of one
    population: the simulator's phenotype (one causal gene) given the lineages, and a phenotype
    of ten causal genes (the causal one and ``MORE_CAUSAL`` random ones) with and without them."""
    from genosift.genomics.clonal import clonal_gene_table

    presence, genes, lineage, y, causal = clonal_gene_table(**CLONAL, seed=seed)
    X = presence.astype(np.float64)
    lin0 = np.array([g.startswith("lin0_") for g in genes])
    dummies = (lineage[:, None] == np.arange(1, CLONAL["n_lineages"])[None, :]).astype(np.float64)
    many = np.array([causal] + [genes.index(f"acc_{j + 1}") for j in range(MORE_CAUSAL)])
    rng = np.random.default_rng(10_000 + seed)
    logit = -1.0 + MORE_LOG_ODDS * (X[:, many] - X[:, many].mean(axis=0)).sum(axis=1) + 5.0 * (lineage == 0)
    y10 = (rng.random(X.shape[0]) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    return X, lin0, [("1 causal gene", y, np.array([causal]), dummies),
                     ("10 causal genes", y10, many, None), ("10 causal genes", y10, many, dummies)]


def _counts(selected_groups, causal, lin0, adjusted):
    """``(power, false, selected, lineage-0)`` of the selected ``groups`` (lists of gene columns):
    the share of the causal genes in a selected group; the groups with no causal gene (and,
    without covariates, no lineage-0 marker); the groups; those with a lineage-0 marker but no
    causal gene."""
    found = {int(j) for g in selected_groups for j in g} & set(causal.tolist())
    has_causal = [bool(set(g.tolist()) & set(causal.tolist())) for g in selected_groups]
    has_lin0 = [bool(lin0[g].any()) for g in selected_groups]
    false = sum(1 for c, m in zip(has_causal, has_lin0) if not c and (adjusted or not m))
    return (len(found) / causal.size, false, len(selected_groups),
            sum(1 for c, m in zip(has_causal, has_lin0) if m and not c))


def clonal_runs(populations, statistic):
    import genosift as gs

    out = {}
    for seed in range(populations):
        X, lin0, settings = clonal_settings(seed)
        for phenotype, y, causal, Z in settings:
            adjusted = Z is not None
            runs = out.setdefault((phenotype, adjusted), {})
            try:
                ko = gs.KnockoffSelector(fdr=FDR, feature_groups="correlation", statistic=statistic,
                                         random_state=seed).fit(X, y, covariates=Z)
                r = ko.result_
                groups = [np.flatnonzero(r.group == g) for g in np.flatnonzero(r.selected)]
                runs.setdefault("knockoffs (groups)", []).append(_counts(groups, causal, lin0, adjusted))
                runs.setdefault("groups", []).append(r.n_groups)
            except ValueError as error:
                runs.setdefault("errors", []).append(str(error)[:160])
            singles = {"enet": gs.ElasticNetSelector(cv=5, random_state=seed).fit(X, y, covariates=Z).get_support()}
            for method in ("logistic",) if adjusted else ("chi2", "logistic"):
                q = gs.score(X, y, method=method, covariates=Z).qvalues
                singles[f"{method}{' given the lineages' if adjusted else ''}"] = np.nan_to_num(q, nan=1.0) <= FDR
            for method, selected in singles.items():
                runs.setdefault(method, []).append(_counts([np.array([j]) for j in np.flatnonzero(selected)],
                                                           causal, lin0, adjusted))
        if seed % 10 == 9:
            print("population", seed + 1, flush=True)
    return out


def clonal_section(populations, statistic):
    import warnings

    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the logistic tests' notes on separating covariates
        out = clonal_runs(populations, statistic)
    seconds = time.perf_counter() - started
    genes = CLONAL["n_lineages"] * CLONAL["genes_per_lineage"] + CLONAL["n_random_genes"] + 1
    lines = ["## 3. Group knockoffs on simulated clonal populations", "",
             f"{populations} populations of `clonal_gene_table(n_genomes=400, n_lineages=8, genes_per_lineage=5, "
             f"n_random_genes=20, seed=s)` (s = 0..{populations - 1}; {genes} genes: 5 markers per lineage carried "
             "by 95% of its genomes and 3% of the others, 20 random genes each carried by a share in [0.2, 0.8], "
             "the causal gene in 35% of the genomes of every lineage). Two phenotypes: the simulator's, logit "
             "P(y = 1) = -2.5 + 3 [causal gene] + 5 [lineage 0]; and one drawn here from the same genes with ten "
             f"causal genes, logit = -1 + {MORE_LOG_ODDS} sum over the causal gene and acc_1..acc_{MORE_CAUSAL} of "
             "(presence - its mean) + 5 [lineage 0]. Knockoffs: `KnockoffSelector("
             f"fdr={FDR}, feature_groups='correlation', statistic={statistic!r})` (groups of mean |r| >= 0.5: a "
             "lineage's markers are one group); the elastic net `ElasticNetSelector(cv=5)`; marginal tests "
             f"(`gs.score`, BH q <= {FDR}). {seconds:.0f} s in all.", "",
             "What is false. The phenotype depends on membership of lineage 0, which is not a feature; its "
             "markers are the genes that proxy it, so given all the other genes the phenotype still depends on "
             "the lineage-0 markers: their group is not a conditional null, and the knockoff filter is right to "
             "select it (though it is not causal). So there are two settings. Without covariates, a selection is "
             "false when it holds neither a causal gene nor a lineage-0 marker, and the lineage-0 selections are "
             "counted on their own (the markers of the other lineages say a little about lineage 0 too, given "
             "the rest, so counting them false is slightly strict). With the lineages as covariates (7 "
             "indicators, unpenalised in the models, the knockoffs drawn given them), the phenotype given the "
             "lineages and the genes depends on the causal genes alone: every other selection is false, and the "
             "knockoffs' FDR guarantee applies to exactly these nulls. Knockoffs count groups, the other methods "
             "genes; power is the share of causal genes in a selected group (a selected gene).", "",
             "| phenotype | lineages as covariates | method | power | mean selections | populations with a selection "
             "| mean false selections | populations with a false selection | mean FDP | lineage-0 selections (no "
             "causal gene) per population |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    notes = []
    for (phenotype, adjusted), runs in out.items():
        for method, rows in runs.items():
            if method in ("errors", "groups"):
                continue
            rows = np.asarray(rows, dtype=np.float64)
            power, false, selected, lin0 = rows.T
            fdp = np.where(selected > 0, false / np.maximum(selected, 1), 0.0)
            lines.append(f"| {phenotype} | {'yes' if adjusted else 'no'} | {method} | {fmt(power, 2)} | "
                         f"{selected.mean():.2f} | {fmt(selected > 0, 2)} | {false.mean():.2f} | "
                         f"{fmt(false > 0, 2)} | {fmt(fdp, 3)} | {lin0.mean():.2f} |")
        if runs.get("errors"):
            notes.append(f"{phenotype}, covariates {'yes' if adjusted else 'no'}: the knockoffs refused "
                         f"{len(runs['errors'])} populations ({runs['errors'][0]}).")
        if runs.get("groups"):
            groups = np.asarray(runs["groups"])
            notes.append(f"{phenotype}, covariates {'yes' if adjusted else 'no'}: {groups.mean():.1f} knockoff "
                         f"groups per population ({groups.min()}-{groups.max()}).")
    lines += ["", *notes, "", "The mean FDP counts a population without selections as 0. The knockoff+ threshold "
              f"at FDR {FDR} selects either nothing or at least {round(1 / FDR)} groups (it needs (1 + negatives) / "
              f"positives <= {FDR}): with one causal gene (one or two non-null groups of about 29) a selection holds "
              f"at least {round(1 / FDR) - 2} false groups, so the filter almost never selects; with ten causal "
              "genes (eleven non-null groups with lineage 0's) it selects all or nothing, and its power is about "
              "the share of populations where it selects.", ""]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--knockpy", default=os.environ.get("KNOCKPY_PYTHON", "/work/kpenv/bin/python"),
                        help="the Python of a venv with knockpy (and cvxpy, scikit-learn)")
    parser.add_argument("--knockpy-runs", type=int, default=20)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--statistic", default="lasso", choices=("lasso", "lasso_entry"))
    parser.add_argument("--populations", type=int, default=100)
    parser.add_argument("--clonal-statistic", default="lasso", choices=("lasso", "lasso_entry"))
    parser.add_argument("--parts", default="1,2,3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of every side (BLAS, numba): 1 keeps a shared machine's timings steady")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    load = os.getloadavg()
    THREADS.update({name: str(args.threads) for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                         "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")})
    os.environ.update(THREADS)  # numba reads its own when genosift first imports it
    from threadpoolctl import threadpool_limits

    threadpool_limits(args.threads)  # numpy's BLAS, loaded already
    sys.path.insert(0, str(SRC))
    knockpy = args.knockpy if Path(args.knockpy).exists() else None
    version = "not found"
    if knockpy:
        version = subprocess.run([knockpy, "-c", "import knockpy, cvxpy, sklearn; print(f'knockpy {knockpy.__version__}"
                                  ", cvxpy {cvxpy.__version__}, scikit-learn {sklearn.__version__}')"],
                                 capture_output=True, text=True, check=True).stdout.strip()
    parts = set(args.parts.split(","))
    started = time.perf_counter()
    body = []
    with tempfile.TemporaryDirectory() as folder:
        if "1" in parts:
            body += against_knockpy(knockpy, args.knockpy_runs, args.repeats, folder) if knockpy else [
                "## 1. Side by side with knockpy", "", f"Skipped: no Python at {args.knockpy} (give `--knockpy`).", ""]
        if "2" in parts:
            body += fdr_section(args.runs, args.statistic)
        if "3" in parts:
            body += clonal_section(args.populations, args.clonal_statistic)
    lines = [*header("The knockoff filter against knockpy, and its FDR on simulations", load=load,
                     libraries=("scikit-learn", "scipy", ("peer", version))),
             f"Every process measured on {args.threads} thread(s) (`OMP_NUM_THREADS`, `OPENBLAS_NUM_THREADS`, "
             f"`NUMBA_NUM_THREADS`; threadpoolctl in this one). All of it took "
             f"{time.perf_counter() - started:.0f} s.", "", *body]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.output) if args.output else RESULTS / "RESULTS-knockoffs.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
