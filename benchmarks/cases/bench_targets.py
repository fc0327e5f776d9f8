#!/usr/bin/env python
"""Benchmark of several phenotypes in one pass: ``genosift score --target p1,p2,...`` against one
command per phenotype, on the k-mers of a simulated clonal population.

    python benchmarks/cases/bench_targets.py        # 400 genomes, 8 phenotypes
                                                    # writes benchmarks/results/RESULTS-targets.md

Data: ``gs.simulate_clonal_population`` (400 genomes, 8 lineages, lineage 0 all cases) counted by
fsm-lite (``-s 2 -m 16 -M 31``) and stored with its phenotypes: the simulated binary
``phenotype`` and quantitative traits ``q1, q2, ...`` (the causal gene's presence times an
effect, a random effect of each lineage and noise; each trait its own draws). Each way runs as
its own processes on 2 threads, best of ``--repeats``: the one command scoring every phenotype,
and the sum of the commands scoring one each. Peak memory is GNU time's ``%M`` (the largest of
the single commands). The rankings of the two ways are compared cell by cell: they must be equal.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, best_run, header, timed_run  # noqa: E402

MODELS = {
    "lmm, kinship of the k-mers": ["--method", "lmm", "--kinship-from-data"],
    "regression, 10 principal coordinates": ["--method", "regression", "--structure", "10"],
}






def phenotypes(table, count, seed=0):
    """The simulated binary phenotype and ``count - 1`` quantitative traits of the same genomes."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = table[["phenotype"]].copy()
    lineages = table["lineage"].to_numpy()
    for t in range(1, count):
        effects = rng.normal(0.0, 1.0, lineages.max() + 1)[lineages]
        out[f"q{t}"] = 1.5 * table["causal"].to_numpy() + effects + rng.normal(0.0, 1.0, len(table))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genomes", type=int, default=400)
    parser.add_argument("--phenotypes", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    load = os.getloadavg()
    if shutil.which("fsm-lite") is None:
        sys.exit("fsm-lite is needed: apt-get install fsm-lite")
    sys.path.insert(0, str(SRC))
    import pandas as pd

    import genosift as gs

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pop = gs.simulate_clonal_population(folder / "g", n_genomes=args.genomes, n_lineages=8, core_length=20000,
                                            lineage_snps=300, genes_per_lineage=5, n_random_genes=20,
                                            lineage_log_odds=12.0, seed=3)
        kmers = subprocess.run(["fsm-lite", "-l", str(pop.file_list), "-t", str(folder / "idx"), "-s", "2", "-m",
                                "16", "-M", "31"], check=True, capture_output=True, text=True, cwd=folder).stdout
        (folder / "kmers.txt").write_text(kmers)
        traits = phenotypes(pop.table, args.phenotypes)
        traits.rename_axis("sample").reset_index().to_csv(folder / "traits.tsv", sep="\t", index=False)
        genosift = [sys.executable, "-m", "genosift"]
        timed_run(genosift + ["convert", "kmers.txt", "--meta", "traits.tsv", "--id", "sample", "-o", "k.gs.h5ad"],
                  folder)
        p = sum(1 for _ in kmers.splitlines())
        names = list(traits.columns)
        (folder / "many").mkdir()
        (folder / "one").mkdir()
        common = ["--binary", "--min-af", "0.05", "--threads", "2", "--quiet", "--force"]
        for label, options in MODELS.items():
            chosen = names
            together = best_run(lambda: timed_run(genosift + ["score", "k.gs.h5ad", "--target", ",".join(chosen),
                                                              *options, *common, "-o", "many/{target}.tsv"], folder),
                                args.repeats)

            def apart():
                measured = [timed_run(genosift + ["score", "k.gs.h5ad", "--target", name, *options, *common, "-o",
                                                  f"one/{name}.tsv"], folder) for name in chosen]
                return sum(m[0] for m in measured), max(m[1] for m in measured)

            alone = best_run(apart, args.repeats)
            for name in chosen:
                pd.testing.assert_frame_equal(pd.read_csv(folder / "many" / f"{name}.tsv", sep="\t"),
                                              pd.read_csv(folder / "one" / f"{name}.tsv", sep="\t"))
            rows.append((args.genomes, p, label, len(chosen), together, alone))
            print(rows[-1], flush=True)
    lines = [*header("Several phenotypes in one pass", load=load),
             f"A simulated clonal population (8 lineages) counted by "
             "fsm-lite and stored with its phenotypes (the binary `phenotype` and quantitative traits); `genosift "
             "score STORE --binary --min-af 0.05 --threads 2` with every phenotype in one command (`--target "
             "phenotype,q1,...`) against one command per phenotype (the sum of their times; peak memory the "
             f"largest), each its own process, best of {args.repeats}. The rankings of both ways are equal cell "
             "by cell (checked by the benchmark).", "",
             "| genomes | k-mers | model | phenotypes | one command: seconds | peak MiB | one per phenotype: "
             "seconds | peak MiB | speed-up |",
             "|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {n} | {p:,} | {label} | {t} | {a[0]:.1f} | {a[1]:,.0f} | {b[0]:.1f} | {b[1]:,.0f} | "
              f"{b[0] / a[0]:.1f}x |" for n, p, label, t, a, b in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.output) if args.output else RESULTS / "RESULTS-targets.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
