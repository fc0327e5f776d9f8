#!/usr/bin/env python
"""Benchmark of the mixed model: ``genosift score --method lmm`` as a whole command on simulated
clonal populations, beside the fixed-effect logistic regression with principal coordinates.

    python benchmarks/cases/bench_lmm.py            # 100 and 400 genomes; writes benchmarks/results/RESULTS-lmm.md

Data: ``gs.simulate_clonal_population`` (8 lineages, a 20 kb core, 5 marker genes per lineage, 20
random genes; lineage 0 all cases: ``lineage_log_odds=12``) counted by fsm-lite (``-s 2 -m 16
-M 31``), converted to a store with the phenotype. Each command runs as its own process on 2
threads, best of 2; wall time and peak resident memory (GNU time's ``%M``). Recorded beside
them: the rank of the causal gene's best k-mer, the genomic inflation lambda and h2.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, best_run, header, timed_run  # noqa: E402

RUNS = {
    "lmm, kinship of the k-mers": ["--method", "lmm", "--kinship-from-data"],  # binary: the logistic mixed model
    "lmm, kinship of the k-mers, linear (pyseer's model)": ["--method", "lmm", "--kinship-from-data",
                                                            "--method-option", "model=linear"],
    "logistic, principal coordinates chosen from the scree (auto)": ["--method", "logistic", "--structure", "auto"],
    "logistic, 10 principal coordinates": ["--method", "logistic", "--structure", "10"],
    "logistic, 3 principal coordinates": ["--method", "logistic", "--structure", "3"],
}




def causal_rank(folder, ranking):
    import pandas as pd

    sys.path.insert(0, str(SRC))
    from genosift.genomics.annotation import reverse_complement
    from genosift.io.references import read_fasta, read_gff3

    genes = read_gff3(folder / "g" / "reference.gff3")
    sequence = "".join(read_fasta(folder / "g" / "reference.fa").values())
    row = genes[genes["gene"] == "causal"].iloc[0]
    gene = sequence[row["start"] - 1:row["end"]]
    table = pd.read_csv(folder / ranking, sep="\t", usecols=["feature", "rank", "pvalue"])
    inside = table[[k in gene or reverse_complement(k) in gene for k in table["feature"]]]
    return int(inside["rank"].min()), float(inside["pvalue"].min())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,400")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    load = os.getloadavg()
    if shutil.which("fsm-lite") is None:
        sys.exit("fsm-lite is needed: apt-get install fsm-lite")
    sys.path.insert(0, str(SRC))
    import genosift as gs

    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            pop = gs.simulate_clonal_population(folder / "g", n_genomes=n, n_lineages=8, core_length=20000,
                                                lineage_snps=300, genes_per_lineage=5, n_random_genes=20,
                                                lineage_log_odds=12.0, seed=3)
            kmers = subprocess.run(["fsm-lite", "-l", str(pop.file_list), "-t", str(folder / "idx"), "-s", "2", "-m",
                                    "16", "-M", "31"], check=True, capture_output=True, text=True, cwd=folder).stdout
            (folder / "kmers.txt").write_text(kmers)
            genosift = [sys.executable, "-m", "genosift"]
            timed_run(genosift + ["convert", "kmers.txt", "--meta", str(pop.phenotype), "--id", "sample", "-o",
                            "k.gs.h5ad"], folder)
            p = sum(1 for _ in kmers.splitlines())
            for label, options in RUNS.items():
                best = best_run(lambda: timed_run(  # noqa: B023 (called at once, in this iteration)
                    genosift + ["score", "k.gs.h5ad", "--target", "phenotype", "--binary", *options, "--min-af",
                                "0.05", "--threads", "2", "--quiet", "-o", "r.tsv", "--force"], folder), args.repeats)
                seconds, rss, out = best
                lam = re.search(r"lambda = ([0-9.]+)", out)
                h2 = re.search(r"h2 = ([0-9.]+)", out)
                rank, pvalue = causal_rank(folder, "r.tsv")
                rows.append((n, p, label, seconds, rss, rank, pvalue, lam.group(1) if lam else "",
                             h2.group(1) if h2 else ""))
                print(rows[-1], flush=True)
    lines = [*header("The mixed model as a whole command", load=load),
             f"Simulated clonal populations of 8 lineages (lineage 0 all "
             "cases), k-mers counted by fsm-lite and stored; `genosift score STORE --target phenotype --binary "
             "--min-af 0.05 --threads 2` with each model, its own process, best of "
             f"{args.repeats}; peak memory from GNU time.", "",
             "| genomes | k-mers | model | seconds | peak MiB | causal gene's best rank | its p-value | lambda | h2 |",
             "|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {n} | {p:,} | {label} | {s:.1f} | {rss:,.0f} | {rank:,} | {pv:.3g} | {lam} | {h2} |"
              for n, p, label, s, rss, rank, pv, lam, h2 in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.output) if args.output else RESULTS / "RESULTS-lmm.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
