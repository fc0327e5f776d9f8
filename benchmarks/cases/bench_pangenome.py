#!/usr/bin/env python
"""Benchmark of the pan-genome test: ``genosift pangenome`` against Scoary 1.6.16 on Scoary's example,
and many traits of a synthetic pan-genome with planted causal genes.

    python benchmarks/cases/bench_pangenome.py --scoary /path/to/venv/bin/scoary
        # writes benchmarks/results/RESULTS-pangenome.md

1. Scoary's example (``tests/data/scoary``: 9,001 genes x 100 isolates, 2 traits, its tree):
   ``scoary -t traits -g genes -n tree`` (its default naive p <= 0.05, and ``-p 1.0``: every gene)
   beside ``genosift pangenome --target all --tree tree`` (``--threshold`` 0.05 and 1), each its
   own process, best of ``--repeats`` (warm: numba's cache filled), and genosift's first run with
   an empty numba cache (cold). Scoary runs on Python 3 after two fixes for current Python and
   SciPy (``open(..., "rU")``, ``scipy.stats.binom_test``): give its executable with
   ``--scoary``; without it that part is skipped.
2. A synthetic pan-genome of ``--isolates`` x ``--genes`` and ``--traits`` traits: a random
   coalescent tree of the isolates; each gene gained on a random branch (its clade carries it)
   and lost or gained again at random in 2 % of the isolates; each trait either a null trait
   (half of them drawn independently of the tree, half a random clade with 10 % of its values
   flipped: a lineage trait that many genes of that lineage follow without causing it), or, for
   ``--causal`` traits, the presence of a planted gene acquired again and again across the tree (each
   isolate carries it at random, 20-50 %) with 10 % of the values flipped. One run of
   ``genosift pangenome --target all --permutations 100`` (every trait, one read of the table, one
   UPGMA tree) with GNU time's peak memory; then what it found: the causal gene passing
   Bonferroni in the causal traits, null traits with a gene passing Bonferroni, the same with the
   pairwise comparisons' worst-case p <= 0.05 too (the tree-aware filter Scoary recommends), and
   with the pairs in the direction of the association too.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, ROOT, best_run, header, timed_run  # noqa: E402

EXAMPLE = ROOT / "tests" / "data" / "scoary"






def genosift(*args):
    return [sys.executable, "-m", "genosift", "pangenome", *map(str, args)]


def example(scoary, repeats, folder):
    """Rows of the Scoary comparison on its example data."""
    import gzip

    (folder / "Gene_presence_absence.csv").write_bytes(gzip.decompress(
        (EXAMPLE / "Gene_presence_absence.csv.gz").read_bytes()))
    for name in ("Tetracycline_resistance.csv", "ExampleTree.nwk"):
        shutil.copy(EXAMPLE / name, folder / name)
    rows = []
    cache = folder / "numba-cold"
    for p in ("0.05", "1.0"):
        (folder / f"gs-{p}").mkdir()
        ours = genosift("Gene_presence_absence.csv", "--meta", "Tetracycline_resistance.csv", "--target", "all",
                        "--tree", "ExampleTree.nwk", "--threshold", p, "-o", f"gs-{p}/{{target}}.tsv", "--force")
        shutil.rmtree(cache, ignore_errors=True)
        cold = timed_run(ours, folder, env={"NUMBA_CACHE_DIR": str(cache)}) if p == "0.05" else None
        warm = best_run(lambda: timed_run(ours, folder, env={"NUMBA_CACHE_DIR": str(cache)}), repeats)
        theirs = None
        if scoary:
            def scoary_run():
                shutil.rmtree(folder / f"sc-{p}", ignore_errors=True)
                return timed_run([scoary, "-t", "Tetracycline_resistance.csv", "-g", "Gene_presence_absence.csv", "-n",
                            "ExampleTree.nwk", "-p", p, "-o", f"sc-{p}", "--no-time"], folder)
            theirs = best_run(scoary_run, repeats)
        rows.append((p, theirs, warm, cold))
    return rows


def synthetic(isolates, genes, traits, causal, seed, folder):
    """Write the synthetic gene table (Roary's layout) and traits; return the causal genes by trait."""
    import numpy as np

    rng = np.random.default_rng(seed)
    members = [[i] for i in range(isolates)]  # a random coalescent: join two random lineages at a time
    clades = []
    while len(members) > 1:
        a, b = rng.choice(len(members), 2, replace=False)
        joined = members[a] + members[b]
        members = [m for k, m in enumerate(members) if k not in (a, b)] + [joined]
        clades.append(joined)
    clades += [[i] for i in range(isolates)]
    X = np.zeros((genes, isolates), dtype=np.uint8)
    for g in range(genes):
        X[g, clades[rng.integers(len(clades))]] = 1
    flip = rng.random(X.shape) < 0.02
    X[flip] ^= 1
    T = np.zeros((isolates, traits), dtype=np.int8)
    planted = {}
    for t in range(traits):
        if t < causal:  # a gene acquired again and again across the tree (horizontally): its own row
            g = t
            X[g] = rng.random(isolates) < rng.uniform(0.2, 0.5)
            planted[f"trait_{t}"] = f"gene_{g}"
            T[:, t] = X[g] ^ (rng.random(isolates) < 0.1)
        elif t % 2:
            T[:, t] = rng.random(isolates) < rng.uniform(0.2, 0.8)
        else:
            clade = clades[rng.integers(len(clades) - isolates)]
            while not 0.1 * isolates < len(clade) < 0.9 * isolates:
                clade = clades[rng.integers(len(clades) - isolates)]
            T[clade, t] = 1
            T[:, t] ^= rng.random(isolates) < 0.1
    names = [f"isolate_{i}" for i in range(isolates)]
    columns = ["Gene", "Non-unique Gene name", "Annotation"]
    with open(folder / "gene_presence_absence.csv", "w") as fh:
        fh.write(",".join(f'"{c}"' for c in columns + names) + "\n")
        for g in range(genes):
            cells = ["" if v == 0 else f"isolate_{i}_{g:05d}" for i, v in enumerate(X[g])]
            fh.write(f'"gene_{g}","","synthetic gene {g}",' + ",".join(f'"{c}"' for c in cells) + "\n")
    with open(folder / "traits.csv", "w") as fh:
        fh.write("," + ",".join(f"trait_{t}" for t in range(traits)) + "\n")
        for i in range(isolates):
            fh.write(names[i] + "," + ",".join(map(str, T[i])) + "\n")
    return planted


def found(folder, planted, traits, alpha=0.05):
    """What the run found: causal genes passing, and null traits with a gene passing, by three rules:
    Bonferroni; Bonferroni and the pairwise worst-case p; and those two with the pairs in the
    direction of the association (more supporting than opposing pairs where the odds ratio is above
    1, more opposing where below)."""
    import pandas as pd

    hit = {kind: [0, 0, 0] for kind in ("causal", "null")}
    for t in range(traits):
        name = f"trait_{t}"
        table = pd.read_csv(folder / "out" / f"{name}.tsv", sep="\t", dtype={"feature": str})
        passing = table[table["bonferroni"] <= alpha]
        tree_aware = passing[passing["pairwise_p_worst"] <= 0.05]
        agreeing = tree_aware[(tree_aware["odds_ratio"] > 1) == (tree_aware["pairs_supporting"]
                                                                  > tree_aware["pairs_opposing"])]
        rules = (passing, tree_aware, agreeing)
        if name in planted:
            for k, rule in enumerate(rules):
                hit["causal"][k] += planted[name] in set(rule["feature"])
        else:
            for k, rule in enumerate(rules):
                hit["null"][k] += len(rule) > 0
    return hit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scoary", default=None, help="Scoary 1.6.16's executable (patched for Python 3)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--isolates", type=int, default=1000)
    parser.add_argument("--genes", type=int, default=20000)
    parser.add_argument("--traits", type=int, default=1000)
    parser.add_argument("--causal", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    load = os.getloadavg()
    lines = header("Pan-genome association: genosift pangenome against Scoary 1.6.16", libraries=("scipy", "pandas"),
                   load=load)
    lines += [line.strip() for line in __doc__.split("\n\n", 2)[2].splitlines()] + [""]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines += ["## Scoary's example: 9,001 genes x 100 isolates, 2 traits, its tree", "",
                  "| genes written | Scoary 1.6.16 | genosift warm | genosift cold | ratio (warm) | peak MiB "
                  "Scoary / genosift |", "|---|---|---|---|---|---|"]
        for p, theirs, warm, cold in example(args.scoary, args.repeats, folder):
            ratio = f"{theirs[0] / warm[0]:.0f}x" if theirs else "n/a"
            sc = f"{theirs[0]:.2f} s" if theirs else "not run"
            lines.append(f"| naive p <= {p} | {sc} | {warm[0]:.2f} s | "
                         f"{f'{cold[0]:.2f} s' if cold else '-'} | {ratio} | "
                         f"{f'{theirs[1]:.0f}' if theirs else '-'} / {warm[1]:.0f} |")
        print("\n".join(lines), flush=True)
        big = folder / "synthetic"
        big.mkdir()
        started = time.perf_counter()
        planted = synthetic(args.isolates, args.genes, args.traits, args.causal, args.seed, big)
        made = time.perf_counter() - started
        (big / "out").mkdir()
        seconds, rss, _ = timed_run(genosift("gene_presence_absence.csv", "--meta", "traits.csv", "--target", "all",
                                    "--permutations", "100", "-o", "out/{target}.tsv"), big)
        hit = found(big, planted, args.traits)
        nulls = args.traits - args.causal
        lines += ["", f"## Synthetic: {args.isolates:,} isolates x {args.genes:,} genes x {args.traits:,} traits "
                  f"({args.causal} with a planted causal gene), --permutations 100", "",
                  f"Data made in {made:.0f} s (not counted). `genosift pangenome --target all --permutations 100`: "
                  f"**{seconds:.0f} s, peak {rss / 1024:.2f} GiB** (goal: under 5 minutes and 4 GB).", "",
                  "| | naive Bonferroni <= 0.05 | and pairwise worst-case p <= 0.05 | and the pairs in the "
                  "association's direction |", "|---|---|---|---|",
                  f"| causal gene found (of {args.causal}) | " + " | ".join(map(str, hit["causal"])) + " |",
                  f"| null traits with a gene passing (of {nulls}: half random, half a lineage's) | "
                  + " | ".join(map(str, hit["null"])) + " |"]
    lines += ["", f"Load average before the run: {load[0]:.2f}."]
    text = "\n".join(lines) + "\n"
    out = Path(args.output) if args.output else RESULTS / "RESULTS-pangenome.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
