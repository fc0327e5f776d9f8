"""Method 'logistic' against SEER on the same k-mers, phenotype and covariates, whole command
against whole command, both on 2 threads.

Simulated presence/absence k-mers of a clonal population (185,000 x 120 by default: the size of
the issue's measurement): each k-mer is carried by one of a few lineages, with mutations, or at a
random frequency; a binary phenotype tied to one lineage; 3 continuous covariates. The k-mers are
written in the fsm-lite text layout SEER reads (``KMER | sample:count ...``).

    python benchmarks/cases/bench_logistic.py [--features 185000] [--samples 120] [--no-scaling] [--output PATH]

Writes ``benchmarks/results/RESULTS-logistic.md`` (the command, machine load, seconds, the largest
relative difference of the likelihood-ratio p-values as SEER prints them). SEER (Debian package
``seer``) is skipped when it is not on the PATH.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, header  # noqa: E402


def simulate(p, n, seed=0):
    rng = np.random.default_rng(seed)
    lineage = rng.integers(0, 6, n)
    y = (rng.random(n) < np.where(lineage == 2, 0.75, 0.35)).astype(np.int64)
    of = rng.integers(-1, 6, p)  # -1: a k-mer at a random frequency
    X = np.where(of[None, :] >= 0, lineage[:, None] == of[None, :], rng.random((n, p)) < rng.uniform(0.05, 0.95, p))
    X ^= rng.random((n, p)) < 0.03  # mutations
    C = rng.normal(size=(n, 3)) + lineage[:, None] * np.array([0.5, -0.3, 0.1])
    return X.astype(np.float64), y, C


def kmer_names(p):
    digits = np.arange(p)[:, None] // 4 ** np.arange(15)[None, :] % 4
    return ["".join("ACGT"[d] for d in row) + "GATTACA" for row in digits]


def write_seer_inputs(folder, X, y, C, names):
    samples = [f"s{i}" for i in range(X.shape[0])]
    with open(folder / "kmers.txt", "w") as fh:
        for j, name in enumerate(names):
            carriers = np.flatnonzero(X[:, j])
            fh.write(f"{name} | " + " ".join(f"{samples[i]}:1" for i in carriers) + "\n")
    with open(folder / "pheno.txt", "w") as fh:
        for s, v in zip(samples, y):
            fh.write(f"{s}\t{s}\t{v}\n")
    with open(folder / "covariates.txt", "w") as fh:
        for s, row in zip(samples, C):
            fh.write(s + "\t" + "\t".join(f"{v:.17g}" for v in row) + "\n")


def run_seer(folder, covariates):
    cmd = ["seer", "-k", "kmers.txt", "-p", "pheno.txt", "--threads", "2", "--pval", "1", "--chisq", "1",
           "--maf", "0"]
    if covariates:
        cmd += ["--covar_file", "covariates.txt", "--covar_list", "2q,3q,4q"]
    start = time.perf_counter()
    with open(folder / "seer.out", "w") as out:
        subprocess.run(cmd, cwd=folder, stdout=out, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start, " ".join(cmd)


def run_genosift(X, y, C, names):
    from genosift.core.engine import column_blocks
    from genosift.scores import get_method, make_target, score_blocks

    spec = get_method("logistic")
    target = make_target(spec, y, X.shape[0], C)
    blocks = column_blocks(X, 4096)
    start = time.perf_counter()
    result = score_blocks(spec, blocks, target, names, {"firth": "auto"}, n_jobs=2)
    return time.perf_counter() - start, result


def time_reading(folder):
    """Seconds to read SEER's k-mer file with genosift's reader (what `genosift score` would add)."""
    from genosift.io import read_kmers

    start = time.perf_counter()
    read_kmers(str(folder / "kmers.txt"))
    return time.perf_counter() - start


def seer_printed_p(lrt):
    """The p-value SEER prints for a likelihood-ratio statistic: the normal tail of its root, with
    SEER's bound phi(z) / z for z >= 5."""
    from scipy import stats

    z = np.sqrt(lrt)
    with np.errstate(divide="ignore"):
        return np.where(z < 5, 2 * stats.norm.sf(z), 2 * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi) / np.maximum(z, 5))


def agreement(folder, result):
    import pandas as pd

    seer = pd.read_csv(folder / "seer.out", sep="\t").set_index("sequence")
    ours = result.to_frame(sort=False).set_index("feature").loc[seer.index]
    plain = seer["comments"].isna() | seer["comments"].isin(["bfgs-fail"])
    both = plain.to_numpy() & (ours["firth"] == 0).to_numpy()
    ours_p = seer_printed_p(ours["score"].to_numpy()[both])
    theirs = seer["lrt_p_val"].to_numpy()[both]
    ok = theirs > 0
    return int(both.sum()), len(seer), float(np.max(np.abs(ours_p[ok] - theirs[ok]) / theirs[ok]))


def scaling(p=10_000):
    """Rows of per-feature cost (microseconds) of genosift's fit as n and c grow (simulated k-mers,
    nearly all distinct: every column fitted)."""
    rows = []
    for n in (60, 120, 480, 1920):
        X, y, C = simulate(p, n, seed=1)
        rng = np.random.default_rng(2)
        for c in (0, 3, 10):
            Z = None if c == 0 else np.column_stack([C, rng.normal(size=(n, max(0, c - 3)))])[:, :c]
            seconds, result = run_genosift(X, y, Z, kmer_names(p))
            firth = float(np.nanmean(result.columns["firth"]))
            rows.append(f"| {n} | {c} | {seconds / p * 1e6:.1f} | {firth:.0%} |")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, default=185_000)
    parser.add_argument("--samples", type=int, default=120)
    parser.add_argument("--scaling", action=argparse.BooleanOptionalAction, default=True,
                        help="also time genosift alone at n = 60 ... 1920 samples and c = 0, 3, 10 covariates")
    parser.add_argument("--output", default=str(RESULTS / "RESULTS-logistic.md"))
    args = parser.parse_args(argv)
    load = os.getloadavg()
    X, y, C = simulate(args.features, args.samples)
    names = kmer_names(args.features)
    run_genosift(X[:, :64], y, C, names[:64])  # compile the kernels first
    run_genosift(X[:, :64], y, None, names[:64])
    lines = [*header(f"logistic against SEER: {args.features} k-mers x {args.samples} samples", load=load),
             "| covariates | genosift scoring (s) | SEER (s) | speed-up | p-values compared "
             "| largest relative difference |",
             "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        have_seer = shutil.which("seer") is not None
        write_seer_inputs(folder, X, y, C, names)
        reading = time_reading(folder)
        for covariates in (None, C):
            ours, result = run_genosift(X, y, covariates, names)
            c = 0 if covariates is None else covariates.shape[1]
            if have_seer:
                theirs, command = run_seer(folder, covariates is not None)
                both, total, worst = agreement(folder, result)
                lines.append(f"| {c} | {ours:.2f} | {theirs:.2f} | {theirs / ours:.0f}x | {both} of {total} "
                             f"(ordinary fit in both) | {worst:.1e} |")
            else:
                lines.append(f"| {c} | {ours:.2f} | (seer not installed) | | | |")
    lines += ["", f"Reading the k-mer file with `genosift.io.read_kmers`: {reading:.2f} s (once; not in the "
              "scoring column).", "",
              "genosift: `score_blocks` on 2 threads (blocks of 4096 k-mers, the data in memory); SEER: "
              "`seer --threads 2 --pval 1 --chisq 1 --maf 0` (with `--covar_file --covar_list 2q,3q,4q`), "
              "reading its k-mer file. SEER prints p-values to 4 digits, with a bound for z >= 5."]
    if args.scaling:
        lines += ["", "Scaling of genosift's fit (10,000 simulated k-mers, nearly all distinct, 2 threads): "
                  "microseconds per k-mer and the share of k-mers refitted with Firth's penalty", "",
                  "| samples n | covariates c | us per k-mer | Firth |", "|---:|---:|---:|---:|", *scaling()]
    text = "\n".join(lines) + "\n"
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
