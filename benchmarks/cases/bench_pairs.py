#!/usr/bin/env python
"""Benchmark of the pair screen: ``gs.score_pairs`` on every pair of presence/absence features,
against a numpy (BLAS) reference computing the same joint counts and mutual information, and
PLINK 1.9's ``--fast-epistasis boost`` on the same data.

    python benchmarks/cases/bench_pairs.py          # writes benchmarks/results/RESULTS-pairs.md

Data: ``n`` samples x ``m`` features, each present with probability 0.3, independent binary
labels (every pair screened in full whatever the signal). The unit is pair-samples per second:
the pairs screened times the samples, divided by the wall time. genosift runs on the threads
given (``--threads``, default 2); numpy's products on the same number of BLAS threads; PLINK with
``--threads`` the same, as it runs by default (its fast screen of every pair, the likelihood ratio
of those that pass it, the pairs with p < 1e-4 written). Where both are run, the top pair's statistic of PLINK (BOOST's
likelihood ratio) is checked against genosift's epistasis test of that pair.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402


def numpy_reference(presence, codes, k):
    """Every pair's mutual information with the classes, from BLAS products of the class blocks:
    ``(m, m)`` bits (the upper triangle is used)."""
    import numpy as np

    n, m = presence.shape
    A = presence.astype(np.float32)
    log = lambda t: np.where(t > 0, t * np.log(np.maximum(t, 1)), 0.0)  # noqa: E731
    joint_c = np.zeros((m, m))
    totals = np.zeros((4, m, m))
    for c in range(k):
        block = A[codes == c]
        both = (block.T @ block).astype(np.float64)
        ones = block.sum(axis=0).astype(np.float64)
        nc = float(block.shape[0])
        cells = (both, ones[:, None] - both, ones[None, :] - both, nc - ones[:, None] - ones[None, :] + both)
        for cell, values in enumerate(cells):
            joint_c += log(values)
            totals[cell] += values
    joint = sum(log(totals[cell]) for cell in range(4))
    classes = sum(log(float((codes == c).sum())) for c in range(k))
    return (n * np.log(n) - classes + joint_c - joint) / (n * np.log(2.0))


def screen_recall(gs, np, m, n, planted=20, seed=5):
    """Of the pairs whose exact epistasis test passes Bonferroni over all pairs, the share that
    the screen keeps in its top K by synergy, for each joint score and K. Planted: half XOR
    effects (no marginal signal), half products (an AND: marginal signal too), of strengths
    drawn in [1.5, 4] on the logit scale, with random signs."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, m)) < rng.uniform(0.3, 0.7, m)
    eta = np.zeros(n)
    for q in range(planted):
        a, b = X[:, 2 * q], X[:, 2 * q + 1]
        effect = rng.choice([-1, 1]) * rng.uniform(1.5, 4.0)
        eta += effect * ((a ^ b) if q % 2 == 0 else (a & b))
    y = (rng.random(n) < 1 / (1 + np.exp(-(eta - eta.mean())))).astype(int)
    every = gs.score_pairs(X, y, top=m * (m - 1) // 2)
    significant = {(i, j) for i, j, p in zip(every.first.tolist(), every.second.tolist(), every.pvalue)
                   if p < every.bonferroni()}
    table = []
    for method in ("mi", "jensen_shannon"):
        for top in (100, 1000, 10_000):
            kept = gs.score_pairs(X, y, method=method, top=top)
            hit = len(significant & set(zip(kept.first.tolist(), kept.second.tolist())))
            table.append((method, top, hit))
            print(method, top, hit, len(significant), flush=True)
    return m, planted, len(significant), table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--features", default="5000,20000")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--recall-features", type=int, default=2000)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    load = os.getloadavg()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    sys.path.insert(0, str(SRC))
    import numpy as np

    import genosift as gs
    from genosift.core import engine
    from genosift.scores.pairs import epistasis_lrt

    engine.set_threads(args.threads)
    rows = []
    n = args.samples
    for m in (int(f) for f in args.features.split(",")):
        rng = np.random.default_rng(m)
        X = rng.random((n, m)) < 0.3
        y = rng.integers(0, 2, n)
        gs.score_pairs(X[:, :50], y, top=10)  # compiled once, outside the timing
        started = time.perf_counter()
        res = gs.score_pairs(X, y, top=1000)
        ours = time.perf_counter() - started
        pairs = res.n_pairs
        rows.append((m, n, pairs, "genosift score_pairs (mi, top 1,000)", ours, ""))
        print(rows[-1], flush=True)
        if m * m * 8 * 6 < 4e9:  # the reference holds several m x m matrices
            started = time.perf_counter()
            reference = numpy_reference(X, y, 2)
            seconds = time.perf_counter() - started
            i, j = res.first[0], res.second[0]
            note = f"top pair's MI {reference[i, j]:.12g} (genosift {res.joint[0]:.12g})"
            rows.append((m, n, pairs, "numpy/BLAS reference (every pair's MI)", seconds, note))
            print(rows[-1], flush=True)
        if shutil.which("plink1.9"):
            from bed_reader import to_bed

            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                ids = [f"s{s}" for s in range(n)]
                to_bed(folder / "d.bed", (2 * X).astype(np.float32),
                       properties={"iid": ids, "fid": ids, "sid": [f"v{v}" for v in range(m)],
                                   "chromosome": ["1"] * m, "bp_position": np.arange(1, m + 1) * 1000,
                                   "pheno": (y + 1).astype(str)})
                started = time.perf_counter()
                subprocess.run(["plink1.9", "--bfile", "d", "--fast-epistasis", "boost",
                                "--allow-no-sex", "--threads", str(args.threads), "--out", "e"], cwd=folder,
                               check=True, capture_output=True)
                seconds = time.perf_counter() - started
                best, best_stat = None, -1.0
                with open(folder / "e.epi.cc") as fh:
                    next(fh)
                    for line in fh:
                        parts = line.split()
                        if float(parts[4]) > best_stat:
                            best, best_stat = (int(parts[1][1:]), int(parts[3][1:])), float(parts[4])
                ours_stat = epistasis_lrt(X[:, best[0]], X[:, best[1]], y)[0]
                rows.append((m, n, pairs, f"PLINK 1.9 --fast-epistasis boost --threads {args.threads}", seconds,
                             f"its best pair's statistic {best_stat:g} (genosift's test {ours_stat:.6g})"))
                print(rows[-1], flush=True)
    recall = screen_recall(gs, np, args.recall_features, n)
    lines = [*header("Every pair of features", load=load),
             f"{args.threads} threads each. Presence/absence "
             "features (each present with probability 0.3) and independent binary labels; every pair screened. "
             "Pair-samples per second: pairs x samples / wall time.", "",
             "| features | samples | pairs | what | seconds | pair-samples / s | per thread | note |",
             "|---:|---:|---:|---|---:|---:|---:|---|"]
    lines += [f"| {m:,} | {n:,} | {pairs:,} | {what} | {s:.2f} | {pairs * n / s:.3g} | "
              f"{pairs * n / s / args.threads:.3g} | {note} |" for m, n, pairs, what, s, note in rows]
    m, planted, found, table = recall
    lines += ["", "## The screen's recall", "",
              f"{m:,} features x {n:,} samples with {planted} planted interacting pairs (half XOR effects, half "
              "products, of random strengths and signs on the logit scale); the exact epistasis test of every one "
              f"of the {m * (m - 1) // 2:,} pairs (`top` = every pair) finds {found} pairs below the Bonferroni "
              "threshold over them. The share of those that the screen keeps in its `top` by synergy:", "",
              "| method | top | kept of the significant pairs | recall |", "|---|---:|---:|---:|"]
    lines += [f"| {method} | {top:,} | {hit} of {found} | {hit / max(found, 1):.3f} |" for method, top, hit in table]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.output) if args.output else RESULTS / "RESULTS-pairs.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
