"""`genosift precompile`: the kernels of the common commands compiled into numba's cache, once.

genosift's kernels are compiled by numba on their first call, for the types they are called with,
and cached on disk. ``pip install .`` runs this command while it builds the package (the build
backend, ``tools/genosift_build.py``), so that the first run of the commands of the README and
its user guide finds their kernels compiled; a user whose cache is elsewhere (a read-only install,
numba older than 0.68, whose cache is keyed on file times) runs it once. It runs those commands
on small made-up data in a temporary folder: the demo, the walk-through from k-mers to a model (a
simulated clonal population, counted here), the conversion and scoring of the guide's synthetic
k-mer file, and the README's Python calls on the bundled Golub data.
"""
from __future__ import annotations

import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

#: The Python calls of the README that the commands below do not make: ``genosift.score``'s keywords.
API_CALLS = ({"method": "fisher"}, {"method": "relieff", "method_options": {"n_neighbors": 20}},
             {"method": "welch", "min_af": 0.01, "max_af": 0.99}, {"method": "anova"}, {"method": "logistic"})


def precompile_command(args):
    if not args.quiet:
        print("genosift precompile: running the README's commands on small data to compile their kernels "
              "(about a minute)", flush=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="genosift-precompile-") as folder:
        steps = precompile(Path(folder))
    if not args.quiet:
        print(f"genosift precompile: {steps} steps run in {time.perf_counter() - started:.1f} s; their kernels are "
              "in numba's cache")
    return 0


def precompile(folder):
    """Run the README's steps on small data in ``folder``; returns how many ran. A failing step
    raises RuntimeError with what the command said."""
    folder = Path(folder)
    runs = [["demo", "-o", str(folder / "demo")]]
    runs += _walkthrough(folder / "walkthrough")
    runs += _synthetic_kmers(folder / "toy")
    for argv in runs:
        _run(argv)
    _api_calls()
    _kmer_pieces(folder)
    _large_structures()
    return len(runs) + len(API_CALLS) + 2


def _run(argv):
    """One command, as a user runs it: a process of its own."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "genosift", *argv], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"`genosift {' '.join(argv)}` failed while precompiling (exit {done.returncode}):\n"
                           f"{done.stdout[-2000:]}{done.stderr[-4000:]}")


def _walkthrough(folder):
    """The walk-through's commands on its simulated population, its k-mers counted here (every
    31-mer in at least 2 genomes, in fsm-lite's text format)."""
    from ..genomics.clonal import simulate_clonal_population

    population = simulate_clonal_population(folder / "genomes", n_genomes=48, seed=0)
    meta = population.table.copy()
    meta["phenotype"] = meta["phenotype"].astype("Int64")
    meta.iloc[41:, meta.columns.get_loc("phenotype")] = None  # the walk-through's new isolates: no phenotype
    meta["growth"] = meta["lineage"] + 0.5 * meta["causal"] + 0.25 * np.arange(len(meta)) % 1.5  # a numeric trait
    meta.to_csv(folder / "meta.tsv", sep="\t")
    _write_kmers(population, folder / "kmers.txt", k=31)
    kmers, store, target = str(folder / "kmers.txt"), str(folder / "kmers.gs.h5ad"), ["--target", "phenotype"]
    meta_options = ["--meta", str(folder / "meta.tsv"), "--id", "sample"]
    results, ranking, hits = str(folder / "results"), str(folder / "ranking.tsv"), str(folder / "hits.tsv")
    return [
        ["convert", kmers, *meta_options, "-o", store],
        ["score", store, *target, "--binary", "--method", "logistic", "--structure", "auto", "--min-af", "0.05",
         "--top", "50", "-o", ranking],
        ["score", store, *target, "--binary", "--method", "lmm", "--kinship-from-data", "--min-af", "0.05", "--top",
         "50", "-o", str(folder / "lmm.tsv")],
        ["enet", store, *target, "--binary", "--structure", "auto", "--min-af", "0.05", "-o", str(folder / "enet.tsv")],
        ["annotate", ranking, "--references", str(population.references), "--all", "-o", hits, "--genes",
         str(folder / "genes.tsv")],
        ["plot", ranking, "--qq", str(folder / "qq.png"), "--manhattan", str(folder / "manhattan.png"), "--hits", hits],
        ["evaluate", store, *target, "--binary", "--method", "chi2", "--k", "10,100,1000", "--model", "logistic",
         "--model-option", "C=0.1,1,10", "--cv", "5", "--seed", "0", "-o", results],
        ["report", results, "-o", str(folder / "report.html"), "--ranking", ranking, "--hits", hits],
        ["predict", str(folder / "results" / "model.skops"), str(population.file_list), "--assemblies", "-o",
         str(folder / "predictions.tsv")],
        # the same model on the store (its k-mers found among the store's names)
        ["predict", str(folder / "results" / "model.skops"), store, "--fill-missing", "-o",
         str(folder / "store_predictions.tsv")],
        # the pairs of k-mers (and their triples) of the guide
        ["pairs", store, *target, "--min-af", "0.05", "--top", "100", "--triples", "5", "--triples-output",
         str(folder / "triples.tsv"), "-o", str(folder / "pairs.tsv")],
        # a k-mer text scored as it is, without a store
        ["score", kmers, *meta_options, *target, "--binary", "--method", "chi2", "--fdr", "0.05", "-o",
         str(folder / "chi2_hits.tsv")],
        # the guide's several phenotypes in one pass (one of them numeric), on the counts as they are
        ["score", kmers, *meta_options, "--target", "phenotype,growth", "--method", "lmm", "--kinship-from-data",
         "-o", str(folder / "{target}.tsv")],
        ["score", kmers, *meta_options, *target, "--method", "welch", "--fdr", "0.05", "-o", str(folder / "welch.tsv")],
        ["score", store, "--target", "growth", "--binary", "--method", "regression", "--structure", "3", "-o",
         str(folder / "regression.tsv")],
        ["heritability", store, *target, "--kinship-from-data"],
    ]


def _write_kmers(population, path, *, k):
    counts = {}
    for sample, fasta in zip(population.samples, population.fasta):
        seen = Counter()
        for record in Path(fasta).read_text().split(">")[1:]:
            sequence = "".join(record.splitlines()[1:])
            seen.update(sequence[i:i + k] for i in range(len(sequence) - k + 1))
        for kmer, count in seen.items():
            counts.setdefault(kmer, []).append(f"{sample}:{count}")
    with open(path, "w") as out:
        out.writelines(f"{kmer} | {' '.join(found)}\n" for kmer, found in counts.items() if len(found) >= 2)


def _synthetic_kmers(folder):
    """The user guide's run on its synthetic k-mer file (gzip), with a memory budget and two threads (a
    structure as large as the guide's: some kernels take over from others above a size)."""
    from ..io.datasets import write_synthetic_kmers

    folder.mkdir(parents=True)
    kmers, store = str(folder / "toy.kmers.gz"), str(folder / "toy.gs.h5ad")
    pheno, _ = write_synthetic_kmers(kmers, n_samples=200, n_kmers=200_000, compress=True)  # the guide's size
    pheno.to_csv(folder / "toy.pheno.csv")
    return [
        ["convert", kmers, "--meta", str(folder / "toy.pheno.csv"), "--id", "sample", "-o", store],
        ["score", store, "--target", "phenotype", "--method", "welch", "--fdr", "0.05", "--chunk-bytes", "64M",
         "--threads", "2", "-o", str(folder / "ranking.tsv")],
        ["select", store, "--target", "phenotype", "--method", "auc", "--top", "10", "--chunk-bytes", "64M", "-o",
         str(folder / "markers.parquet")],
    ]


def _api_calls():
    import genosift as gs

    X, y, names = gs.load_golub()
    for keywords in API_CALLS:
        gs.score(X, y, feature_names=names, **keywords)
    gs.SelectKBest("chi2", k=100, min_af=0.05, max_af=0.95).fit(X > X.mean(axis=0), y)


def _kmer_pieces(folder):
    """k-mer text parsed in pieces on threads, however many cores this machine has (the
    commands above cut a block only where there are two threads or more)."""
    from itertools import product

    from ..io import kmers as kmer_text

    path = Path(folder) / "pieces.kmers"
    path.write_text("".join(f"{''.join(k)} | s1:{i % 3} s2:1\n" for i, k in enumerate(product("ACGT", repeat=5))))
    saved = kmer_text.PIECES, kmer_text.MIN_PIECE
    kmer_text.PIECES, kmer_text.MIN_PIECE = 3, 1
    try:
        kmer_text.read_kmers(path, block_size=4096)
    finally:
        kmer_text.PIECES, kmer_text.MIN_PIECE = saved


def _large_structures():
    """The check of a sparse matrix's index arrays as it runs on one above a million stored values
    (on the engine's threads; the commands above check smaller ones on one thread), for the index
    types scipy makes (32- and 64-bit)."""
    from ..core.sparse_check import PARALLEL_FROM, check_sparse_structure

    n_rows, per_row = 64, -(-PARALLEL_FROM // 64)
    for dtype in (np.int32, np.int64):
        indptr = np.arange(n_rows + 1, dtype=dtype) * per_row
        indices = np.tile(np.arange(per_row, dtype=dtype), n_rows)
        check_sparse_structure(indptr, indices, n_rows, per_row)
