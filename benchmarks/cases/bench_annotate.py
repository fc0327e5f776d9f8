#!/usr/bin/env python
"""Benchmark of ``genosift annotate``: k-mers placed in reference genomes and their genes named,
against bwa and bedtools doing the same job.

    python benchmarks/cases/bench_annotate.py            # 100,000 k-mers, 10 references of 5 Mb
    python benchmarks/cases/bench_annotate.py --quick    # 10,000 k-mers, 2 references of 1 Mb (printed only)

A full run writes ``benchmarks/results/RESULTS-annotate.md`` and prints it.

Data, made with numpy (seed 0): references of random sequence, each a 5 Mb chromosome, with a
GFF3 of genes of 300-1,500 bases separated by 50-300 bases on both strands (a bacterial
genome's density); k-mers drawn from the references (half as they are, half reverse-
complemented), their lengths uniform in 16-31 bases (fsm-lite's ``-m 16 -M 31``, the
walk-through's), plus 2 % of 9-15 bases (the short ones an aligner's seeds miss) and 1 % found
nowhere.

Measured, each as one whole run (cold: new processes, references not indexed before):

- genosift: ``genosift annotate --all`` on a ranking of the k-mers (one automaton of the
  k-mers and their reverse complements, one pass over each reference, then the genes).
- bwa + bedtools, the tools pyseer's ``annotate_hits`` calls: ``bwa index`` of each reference,
  ``bwa fastmap -l 9 -w 1000000`` of the k-mers against it (every exact match of the whole
  k-mer, both strands), the matches as BED, then ``bedtools intersect -wa -wb`` and ``bedtools
  closest -D ref -io -id / -iu`` with the GFF3 (overlapping genes, nearest up- and downstream).
  The parsing between the tools (Python) is counted too.

The number of occurrences found by each is compared (they must be equal, palindromes counted
once). Peak memory: the largest resident set of the process or of any child (``getrusage``).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402


def make_data(folder, n_refs, length, n_kmers, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    bases = np.frombuffer(b"ACGT", dtype=np.uint8)
    lines, genomes = [], []
    for r in range(n_refs):
        genome = bases[rng.integers(0, 4, length)].tobytes().decode()
        genomes.append(genome)
        fasta = folder / f"ref{r:02d}.fa"
        fasta.write_text(">chromosome\n" + "".join(genome[i:i + 80] + "\n" for i in range(0, length, 80)))
        records, at, g = ["##gff-version 3"], int(rng.integers(50, 300)), 0
        while at + 1500 < length:
            size = int(rng.integers(300, 1500))
            strand = "+-"[rng.integers(2)]
            records.append(f"chromosome\tsim\tCDS\t{at + 1}\t{at + size}\t.\t{strand}\t0\t"
                           f"ID=r{r}_g{g};gene=gene{g};locus_tag=r{r}_g{g};product=protein {g}")
            at += size + int(rng.integers(50, 300))
            g += 1
        gff = folder / f"ref{r:02d}.gff3"
        gff.write_text("\n".join(records) + "\n")
        lines.append(f"{fasta.name}\t{gff.name}\tref")
    (folder / "refs.tsv").write_text("\n".join(lines) + "\n")
    comp = str.maketrans("ACGT", "TGCA")
    kmers = set()
    while len(kmers) < n_kmers:
        u = rng.random()
        if u < 0.01:
            kmers.add(bases[rng.integers(0, 4, 31)].tobytes().decode())
            continue
        size = int(rng.integers(9, 16)) if u < 0.03 else int(rng.integers(16, 32))
        genome = genomes[rng.integers(n_refs)]
        start = int(rng.integers(0, length - size))
        kmer = genome[start:start + size]
        kmers.add(kmer if rng.random() < 0.5 else kmer.translate(comp)[::-1])
    kmers = sorted(kmers)
    ranking = folder / "ranking.tsv"
    pvalues, betas = rng.random(len(kmers)).tolist(), rng.normal(size=len(kmers)).tolist()
    ranking.write_text("feature\tpvalue\tbeta\n" + "".join(f"{k}\t{p!r}\t{b!r}\n" for k, p, b in
                                                          zip(kmers, pvalues, betas)))
    (folder / "kmers.fa").write_text("".join(f">{i}\n{k}\n" for i, k in enumerate(kmers)))
    return kmers


def run_genosift(folder):
    out = folder / "hits.tsv"
    if out.exists():
        out.unlink()
    (folder / "genes.tsv").unlink(missing_ok=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "genosift", "annotate", str(folder / "ranking.tsv"), "--references",
                    str(folder / "refs.tsv"), "--all", "-o", str(out), "--genes", str(folder / "genes.tsv")],
                   check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(SRC)))
    seconds = time.perf_counter() - started
    import pandas as pd

    hits = pd.read_csv(out, sep="\t", usecols=["feature", "contig", "reference", "start", "strand"],
                       keep_default_na=False, na_values=[""])
    occurrences = len(hits.dropna(subset=["reference"]).drop_duplicates(["feature", "reference", "start", "strand"]))
    return seconds, occurrences


def run_tools(folder, n_refs):
    """bwa index + fastmap, then bedtools intersect and closest, reference by reference."""
    work = folder / "tools"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    started = time.perf_counter()
    occurrences = 0
    for r in range(n_refs):
        fasta = work / f"ref{r:02d}.fa"
        shutil.copy(folder / fasta.name, fasta)
        subprocess.run(["bwa", "index", str(fasta)], check=True, capture_output=True)
        out = subprocess.run(["bwa", "fastmap", "-l", "9", "-w", "1000000", str(fasta), str(folder / "kmers.fa")],
                             check=True, capture_output=True, text=True).stdout
        bed, seen, query = [], set(), None
        for line in out.splitlines():
            cells = line.split("\t")
            if cells[0] == "SQ":
                query, size = cells[1], int(cells[2])
            elif cells[0] == "EM" and cells[1] == "0" and int(cells[2]) == size:
                for place in cells[4:]:
                    contig, _, where = place.rpartition(":")
                    start = int(where[1:])
                    if (query, start) not in seen:  # a palindrome is reported on both strands
                        seen.add((query, start))
                        bed.append((contig, start - 1, start - 1 + size, query, where[0]))
        occurrences += len(bed)
        bed.sort(key=lambda b: (b[0], b[1]))
        bed_path = work / f"hits{r:02d}.bed"
        bed_path.write_text("".join(f"{c}\t{s}\t{e}\t{q}\t0\t{st}\n" for c, s, e, q, st in bed))
        gff = folder / f"ref{r:02d}.gff3"
        for args in (["intersect", "-a", str(bed_path), "-b", str(gff), "-wa", "-wb"],
                     ["closest", "-a", str(bed_path), "-b", str(gff), "-D", "ref", "-io", "-id", "-t", "first"],
                     ["closest", "-a", str(bed_path), "-b", str(gff), "-D", "ref", "-io", "-iu", "-t", "first"]):
            with open(work / "out.txt", "w") as fh:
                subprocess.run(["bedtools", *args], check=True, stdout=fh)
    return time.perf_counter() - started, occurrences


def side(name, folder, n_refs):
    """One side in a process of its own, so that its peak memory (its children's) is its own."""
    import json

    out = subprocess.run([sys.executable, __file__, "--side", name, "--folder", str(folder), "--refs", str(n_refs)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", default=None)
    parser.add_argument("--side", choices=["genosift", "tools"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--refs", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        import json

        run = run_genosift if args.side == "genosift" else lambda f: run_tools(f, args.refs)
        seconds, found = run(Path(args.folder))
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(json.dumps({"seconds": seconds, "found": found, "peak": peak}))
        return
    if not (shutil.which("bwa") and shutil.which("bedtools")):
        sys.exit("bwa and bedtools are needed: apt-get install bwa bedtools")
    n_refs, length, n_kmers = (2, 1_000_000, 10_000) if args.quick else (10, 5_000_000, 100_000)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        make_data(folder, n_refs, length, n_kmers)
        print(f"data: {time.perf_counter() - t:.1f} s", flush=True)
        ours = side("genosift", folder, n_refs)
        tools = side("tools", folder, n_refs)
    assert ours["found"] == tools["found"], (ours, tools)
    lines = [
        *header("`genosift annotate` against bwa + bedtools", load=load),
        f"{n_kmers:,} k-mers (16-31 bases, 2 % of 9-15, 1 % found nowhere) against {n_refs} references of "
        f"{length / 1e6:g} Mb with their GFF3; every exact occurrence on both strands and its genes. One cold run "
        "each (new processes; bwa indexes each reference first, as a first annotation does).",
        "",
        "| run | seconds | occurrences found | peak memory (MiB) |",
        "|---|---:|---:|---:|",
        f"| genosift annotate --all (whole command) | {ours['seconds']:.1f} | {ours['found']:,} | "
        f"{ours['peak']:,.0f} |",
        f"| bwa index + fastmap, bedtools intersect + closest | {tools['seconds']:.1f} | {tools['found']:,} | "
        f"{tools['peak']:,.0f} (largest tool process) |",
        "",
        f"genosift is {tools['seconds'] / ours['seconds']:.1f}x faster; both find the same {ours['found']:,} "
        "occurrences (a palindromic k-mer's counted once).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        out = Path(args.output) if args.output else RESULTS / "RESULTS-annotate.md"
        out.write_text(text)


if __name__ == "__main__":
    main()
