#!/usr/bin/env python
"""Benchmark of the whole-genome elastic net: ``genosift enet`` as a whole command beside R's
glmnet (``cv.glmnet``), scikit-learn's saga and skglm on the same k-mers.

    python benchmarks/cases/bench_enet.py                  # 100 and 400 genomes, and the large store
    python benchmarks/cases/bench_enet.py --sizes 100:20 --large 0

Data: ``gs.simulate_clonal_population`` (8 lineages, a 20 kb core, 5 marker genes per lineage,
20 random genes at 100 genomes (104,399 k-mers), 1,100 at 400 (about 500,000); lineage 0 all
cases) counted by fsm-lite (``-s 2 -m 16 -M 31``) and stored with the phenotype; and a store
of 1,000 samples x 2,000,000 features made with numpy (presence with allele frequencies from a
Beta(0.2, 5), 20 causal features), whose distinct patterns do not fit the memory budget, so that
the path reads the store at each check.

Each tool runs as its own process on 2 threads; wall time and peak resident memory (GNU time's
``%M``); ours cold (an empty numba cache: the compilation a first run pays) and warm (best of
2). Every CV fit is judged by its out-of-fold AUC at the penalty it chose (never the fit to the
rows it was fitted on). glmnet and genosift fit the same objective: the objective of glmnet's
coefficients (its path solved again to ``thresh=1e-12``, not timed) is computed by our formula
at each penalty and compared with ours (to ``tol=1e-10``). scikit-learn's saga and
skglm fit one path of 10 penalties without CV (as the issue measured them): their objective at
each penalty beside ours.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402

R_CV = r"""
suppressMessages({library(glmnet); library(Matrix)})
a <- commandArgs(TRUE)
X <- as(readMM(a[1]), "CsparseMatrix"); y <- scan(a[2], quiet=TRUE); foldid <- scan(a[3], quiet=TRUE)
started <- Sys.time()
f <- cv.glmnet(X, y, family="binomial", alpha=0.5, foldid=foldid, keep=TRUE, type.measure="deviance")
secs <- as.numeric(difftime(Sys.time(), started, units="secs"))  # the fit alone, without reading
i <- which(f$lambda == f$lambda.min)
p <- f$fit.preval[, i]
b <- as.matrix(coef(f, s="lambda.min"))
write(c(secs, f$lambda.min, sum(b[-1] != 0)), a[4], ncolumns=3)
write(p, a[5], ncolumns=1)
write(f$lambda, a[6], ncolumns=1)
write(which(b[-1] != 0), a[7], ncolumns=1)
"""

R_PATH = r"""
suppressMessages({library(glmnet); library(Matrix)})
a <- commandArgs(TRUE)
X <- as(readMM(a[1]), "CsparseMatrix"); y <- scan(a[2], quiet=TRUE); lam <- scan(a[3], quiet=TRUE)
g <- glmnet(X, y, family="binomial", alpha=0.5, lambda=lam, thresh=1e-12, maxit=1e7)
write.table(as.matrix(coef(g)), a[4], row.names=FALSE, col.names=FALSE)
"""

PEER = r"""
import sys, time, json, numpy as np, scipy.sparse as sp
sys.path.insert(0, sys.argv[1])
from genosift.io import open_store
which, store, lam_file, out = sys.argv[2:6]
st = open_store(store, binary=True)
X = sp.csc_matrix(st.to_dataset().X, dtype=np.float64)
y = (st.obs["phenotype"].to_numpy() > 0).astype(float)
lambdas = np.loadtxt(lam_file)
n = X.shape[0]
from genosift.enet.path import squared_deviations, value_range
mean = np.asarray(X.mean(axis=0)).ravel()
low, high = value_range(X)
keep = low < high
sd = np.sqrt(squared_deviations(X, mean) / n)
Xs = sp.csc_matrix(X[:, keep].multiply(1 / sd[keep]))
started = time.perf_counter()
coefs, icpts = [], []
if which == "saga":
    from sklearn.linear_model import LogisticRegression
    import inspect, warnings
    warnings.simplefilter("ignore")
    new = inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated"
    w = None
    for lam in lambdas:
        kw = dict(l1_ratio=0.5) if new else dict(penalty="elasticnet", l1_ratio=0.5)
        m = LogisticRegression(solver="saga", C=1 / (n * lam), max_iter=1000, tol=1e-4, warm_start=True, **kw)
        if w is not None:
            m.coef_, m.intercept_, m.classes_ = w[0], w[1], np.array([0.0, 1.0])
        m.fit(Xs, y)
        w = (m.coef_.copy(), m.intercept_.copy())
        coefs.append(m.coef_.ravel().copy()); icpts.append(float(m.intercept_[0]))
else:
    from skglm import GeneralizedLinearEstimator
    from skglm.datafits import Logistic
    from skglm.penalties import L1_plus_L2
    from skglm.solvers import ProxNewton
    for lam in lambdas:
        m = GeneralizedLinearEstimator(datafit=Logistic(), penalty=L1_plus_L2(alpha=lam, l1_ratio=0.5),
                                       solver=ProxNewton(fit_intercept=True, max_iter=50, tol=1e-6))
        m.fit(Xs, 2 * y - 1)
        coefs.append(np.ravel(m.coef_).copy()); icpts.append(float(np.ravel(m.intercept_)[0]))
secs = time.perf_counter() - started
B = np.array(coefs).T
eta = Xs @ B + np.array(icpts)
from genosift.enet.path import objective, penalties
obj = objective(y, eta, lambdas, penalties(B, 0.5, np.ones(B.shape[0])), True)
json.dump({"seconds": secs, "objective": obj.tolist(), "nonzero": (B != 0).sum(axis=0).tolist()}, open(out, "w"))
"""


def run(command, folder, env_extra=None, timeout=None):
    env = dict(os.environ, PYTHONPATH=str(SRC), OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", **(env_extra or {}))
    timed = ["/usr/bin/time", "-f", "%M", "-o", str(folder / "rss")] if Path("/usr/bin/time").exists() else []
    started = time.perf_counter()
    try:
        done = subprocess.run(timed + command, capture_output=True, text=True, env=env, cwd=folder, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    seconds = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{' '.join(map(str, command))}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    rss = int((folder / "rss").read_text().split()[-1]) / 1024 if timed else float("nan")
    return seconds, rss, done.stdout


def simulated(folder, n, random_genes):
    import genosift as gs

    pop = gs.simulate_clonal_population(folder / "g", n_genomes=n, n_lineages=8, core_length=20000,
                                        lineage_snps=300, genes_per_lineage=5, n_random_genes=random_genes,
                                        lineage_log_odds=12.0, seed=3)
    kmers = subprocess.run(["fsm-lite", "-l", str(pop.file_list), "-t", str(folder / "idx"), "-s", "2", "-m", "16",
                            "-M", "31"], check=True, capture_output=True, text=True, cwd=folder).stdout
    (folder / "kmers.txt").write_text(kmers)
    run([sys.executable, "-m", "genosift", "convert", "kmers.txt", "--meta", str(pop.phenotype), "--id", "sample",
         "-o", "k.gs.h5ad"], folder)
    return folder / "k.gs.h5ad", pop.causal_gene


def large_store(folder, n=1000, p=2_000_000, seed=0):
    """A presence store of ``n`` x ``p`` (allele frequencies from a Beta(0.2, 5)) and a phenotype of 20
    causal features."""
    import pandas as pd
    import scipy.sparse as sp

    from genosift.io import Dataset, write_store

    rng = np.random.default_rng(seed)
    af = np.clip(rng.beta(0.2, 5.0, size=p), 2.0 / n, 0.95)
    blocks = []
    for j0 in range(0, p, 20_000):
        j1 = min(p, j0 + 20_000)
        blocks.append(sp.csc_matrix((rng.random((n, j1 - j0), dtype=np.float32) < af[j0:j1]).astype(np.uint8)))
    X = sp.hstack(blocks, format="csr")
    del blocks
    causal = rng.choice(np.flatnonzero((af > 0.1) & (af < 0.5)), 20, replace=False)
    eta = X[:, causal] @ rng.choice([-1.5, 1.5], 20)
    eta = eta - eta.mean()
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    ids = np.array([f"s{i:04d}" for i in range(n)])
    names = np.array([f"f{j}" for j in range(p)])
    write_store(Dataset(X, ids, names, pd.DataFrame({"phenotype": y}, index=ids)), folder / "big.gs.h5ad")
    return folder / "big.gs.h5ad", X.nnz, [f"f{j}" for j in causal]


def ours(folder, store, extra=(), repeats=2):
    command = [sys.executable, "-m", "genosift", "enet", str(store), "--target", "phenotype", "--binary", "--folds",
               "10", "--threads", "2", "--quiet", "-o", "enet.tsv", "--force", *extra]
    cache = folder / "numba-cold"
    shutil.rmtree(cache, ignore_errors=True)
    cold = run(command, folder, {"NUMBA_CACHE_DIR": str(cache)})
    warm = min((run(command, folder) for _ in range(repeats)), key=lambda r: r[0])
    return cold, warm, json.loads((folder / "enet.tsv.json").read_text())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100:20,400:1100",
                        help="genomes:random genes of each population (1100: about 500,000 k-mers at 400 genomes)")
    parser.add_argument("--peer-sizes", default="100", help="the populations scikit-learn's saga and skglm run on")
    parser.add_argument("--large", type=int, default=2_000_000, help="features of the large store (0: none)")
    parser.add_argument("--peer-timeout", type=float, default=900)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    load = os.getloadavg()
    if shutil.which("fsm-lite") is None:
        sys.exit("fsm-lite is needed: apt-get install fsm-lite")
    sys.path.insert(0, str(SRC))
    import pandas as pd
    import scipy.io
    import scipy.sparse as sp
    from sklearn.metrics import roc_auc_score

    from genosift.enet.path import MemoryDesign, fit_path, in_data_units, objective, penalties, squared_deviations
    from genosift.genomics.annotation import reverse_complement
    from genosift.io import open_store
    from genosift.selectors.enet import elastic_net

    rows, checks = [], []
    have_r = shutil.which("Rscript") is not None and subprocess.run(
        ["Rscript", "-e", "library(glmnet)"], capture_output=True).returncode == 0
    peer_sizes = {int(s) for s in args.peer_sizes.split(",") if s}
    for n, genes in (map(int, s.split(":")) for s in args.sizes.split(",") if s):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            store, gene = simulated(folder, n, genes)
            st = open_store(store, binary=True)
            X = sp.csr_matrix(st.to_dataset().X, dtype=np.float64)
            y = (st.obs["phenotype"].to_numpy() > 0).astype(float)
            names = np.asarray(st.feature_names)
            causal = {k for k in names if k in gene or reverse_complement(k) in gene}
            cold, warm, record = ours(folder, store)
            kept = pd.read_csv(folder / "enet.tsv", sep="\t")
            label = f"{n} genomes x {X.shape[1]:,} k-mers"
            rows.append((label, "genosift enet (cold: first run, empty numba cache)", cold[0], cold[1],
                         record["n_selected"], record["out_of_fold"]["roc_auc"], len(causal & set(kept["feature"]))))
            rows.append((label, "genosift enet (warm, best of 2)", warm[0], warm[1], record["n_selected"],
                         record["out_of_fold"]["roc_auc"], len(causal & set(kept["feature"]))))
            print(rows[-2:], flush=True)
            lambdas = np.asarray(record["path"]["lambda"])
            if have_r:
                scipy.io.mmwrite(folder / "X.mtx", X)
                np.savetxt(folder / "y.txt", y, fmt="%d")
                folds = np.empty(y.size, dtype=int)
                from sklearn.model_selection import StratifiedKFold

                for f, (_, test) in enumerate(StratifiedKFold(10, shuffle=True, random_state=0).split(X, y)):
                    folds[test] = f + 1
                np.savetxt(folder / "folds.txt", folds, fmt="%d")
                (folder / "cv.R").write_text(R_CV)
                measured = run(["Rscript", "cv.R", "X.mtx", "y.txt", "folds.txt", "r.txt", "preval.txt", "lam.txt",
                                "kept.txt"], folder, timeout=args.peer_timeout)
                if measured is None:
                    rows.append((label, "R glmnet cv.glmnet (10 folds)", float("nan"), float("nan"), 0, float("nan"),
                                 0))
                else:
                    secs_fit, lam_min, nonzero = np.loadtxt(folder / "r.txt")
                    preval = np.loadtxt(folder / "preval.txt")
                    lam_r = np.loadtxt(folder / "lam.txt")
                    rows.append((label, "R glmnet cv.glmnet (10 folds)", measured[0], measured[1], int(nonzero),
                                 roc_auc_score(y, preval),
                                 len(causal & set(names[np.loadtxt(folder / "kept.txt", ndmin=1).astype(int) - 1]))))
                    print(rows[-1], flush=True)
                    if n not in peer_sizes:  # (glmnet's tight path takes over 13 minutes at 400 genomes)
                        continue
                    # the objective check, not timed: glmnet's path solved to its tightest threshold
                    (folder / "path.R").write_text(R_PATH)
                    run(["Rscript", "path.R", "X.mtx", "y.txt", "lam.txt", "B.txt"], folder)
                    B = np.loadtxt(folder / "B.txt", ndmin=2)
                    # the same objective: glmnet's coefficients judged by our formula at its penalties,
                    # against our fit at the penalties both paths share
                    sd = np.sqrt(squared_deviations(X, np.asarray(X.mean(axis=0)).ravel()) / y.size)
                    ridge = np.ones(sd.size)
                    theirs = objective(y, B[0] + X @ B[1:], lam_r, penalties(B[1:] * sd[:, None], 0.5, ridge), True)
                    design, inverse = MemoryDesign.of(X)
                    common = lam_r[:min(lam_r.size, lambdas.size)]
                    mine = elastic_net(design, y, logistic=True, l1_ratio=0.5, lambdas=common, cv=None, inverse=inverse,
                                       tol=1e-10)
                    ours_obj = objective(y, mine.intercept + X @ mine.coef, common,
                                         penalties(mine.coef.toarray() * sd[:, None], 0.5, np.ones(sd.size)), True)
                    rel = (ours_obj - theirs[:common.size]) / theirs[:common.size]
                    checks.append(f"{label}: at the {common.size} penalties of glmnet's path (glmnet solved to "
                                  "thresh 1e-12, ours to tol 1e-10), our objective less glmnet's, relative: "
                                  f"max |.| {np.abs(rel).max():.1e} (min {rel.min():.1e}, ours lower where "
                                  f"negative); cv.glmnet's fit took {secs_fit:.1f} s of its {measured[0]:.1f} s")
                    print(checks[-1], flush=True)
                    print(rows[-1], flush=True)
            if n not in peer_sizes:
                continue
            ten = lambdas[np.linspace(0, lambdas.size - 1, 10).astype(int)]
            np.savetxt(folder / "ten.txt", ten)
            (folder / "peer.py").write_text(PEER)
            design, _ = MemoryDesign.of(X)
            started = time.perf_counter()
            fit_path(design, y, logistic=True, l1_ratio=0.5, lambdas=ten, stop_early=False)
            mine_secs = time.perf_counter() - started
            path = fit_path(design, y, logistic=True, l1_ratio=0.5, lambdas=ten, stop_early=False, tol=1e-10)
            intercept, B, _ = in_data_units(path, design)
            mine = objective(y, intercept + design.dot(B), ten, penalties(path.beta, 0.5, path.ridge), True)
            checks.append(f"{label}: one path of 10 penalties without CV, genosift {mine_secs:.2f} s (in process; "
                          "compared below solved to tol 1e-10)")
            for which in ("saga", "skglm"):
                if which == "skglm":
                    try:
                        import skglm  # noqa: F401
                    except ImportError:
                        continue
                measured = run([sys.executable, "peer.py", str(SRC), which, str(store), "ten.txt", "peer.json"],
                               folder, timeout=args.peer_timeout)
                name = {"saga": "scikit-learn saga", "skglm": "skglm ProxNewton"}[which]
                if measured is None:
                    rows.append((label, f"{name}: one path of 10 penalties, no CV", float("nan"), float("nan"), 0,
                                 float("nan"), 0))
                    checks.append(f"{label}: {name} did not finish the 10 penalties in {args.peer_timeout:.0f} s")
                    continue
                peer = json.loads((folder / "peer.json").read_text())
                rel = (np.asarray(peer["objective"]) - mine) / mine
                rows.append((label, f"{name}: one path of 10 penalties, no CV", measured[0], measured[1],
                             peer["nonzero"][-1], float("nan"), 0))
                checks.append(f"{label}: {name} {peer['seconds']:.1f} s for the 10 penalties; its objective less "
                              f"ours, relative, at each: {', '.join(f'{v:.1e}' for v in rel)}")
                print(checks[-1], flush=True)
    if args.large:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            started = time.perf_counter()
            store, nnz, causal = large_store(folder, p=args.large)
            made = time.perf_counter() - started
            cold, warm, record = ours(folder, store, repeats=1)
            kept = pd.read_csv(folder / "enet.tsv", sep="\t")
            label = f"1,000 samples x {args.large:,} features ({nnz:,} entries; a store)"
            rows.append((label, f"genosift enet ({record['design']}; cold)", cold[0], cold[1], record["n_selected"],
                         record["out_of_fold"]["roc_auc"], len(set(causal) & set(kept["feature"]))))
            rows.append((label, f"genosift enet ({record['design']}; warm)", warm[0], warm[1], record["n_selected"],
                         record["out_of_fold"]["roc_auc"], len(set(causal) & set(kept["feature"]))))
            checks.append(f"{label}: made in {made:.0f} s; {record['n_patterns']:,} distinct patterns; "
                          f"{record['kkt_checks']} passes over the store for the whole path, largest working set "
                          f"{record['largest_working_set']:,}")
            print(rows[-1], checks[-1], flush=True)
    lines = [*header("The whole-genome elastic net", load=load),
             "Every tool in its own process, 2 threads; wall time and "
             "peak memory (GNU time). AUC: out of fold at the penalty the cross-validation chose (10 folds; "
             "glmnet's `fit.preval`). Causal: the causal gene's k-mers (or the 20 causal features) among those "
             "kept. pyseer `--wg enet` could not be installed here (not on PyPI or Debian).", "",
             "| data | tool | seconds | peak MiB | features kept | out-of-fold AUC | causal kept |",
             "|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {d} | {t} | {s:.1f} | {m:,.0f} | {k:,} | {a:.3f} | {'' if c != c else f'{c:,}'} |"
              for d, t, s, m, k, a, c in rows]
    lines += ["", *[f"- {c}" for c in checks]]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.output) if args.output else RESULTS / "RESULTS-enet.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
