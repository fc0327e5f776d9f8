#!/usr/bin/env python
"""Benchmark of variant genotypes to a samples x variants matrix: VCF (bgzip) and PLINK .bed.

    python benchmarks/cases/bench_variants.py           # 200 haploid samples x 100,000 variants
    python benchmarks/cases/bench_variants.py --quick   # 20,000 variants (printed only)

Writes ``benchmarks/results/RESULTS-variants.md`` (full run) and prints it.

Data (seeded): a haploid VCF as snippy and bcftools write bacterial calls (GT ``0``, ``1``,
``.``), allele frequencies drawn from Beta(0.3, 3) (mostly rare variants), 1 % missing calls and
2 % of sites with two alternate alleles; compressed with ``bgzip`` (Python's gzip when bgzip is
absent). The same genotypes are written as a PLINK fileset with ``bed_reader.to_bed``.

Readers compared, each in a fresh Python process so that its peak memory is its own:

- ``genosift.io.read`` (cyvcf2, variant blocks, CSR int8 out);
- a plain cyvcf2 loop: one alt-allele count vector per allele from ``variant.genotype.array()``,
  stacked into a dense int8 array (what a script without genosift does);
- ``allel.read_vcf`` of scikit-allel (its own VCF parser) then the dosage of each alternate allele
  from ``calldata/GT``, dense int8 (skipped, and said so, when scikit-allel is not installed);
- PLINK: ``genosift.io.read`` against ``bed_reader.open_bed(...).read(dtype="int8")`` (dense).

Every result is checked against genosift's (the same sums, weighted by row and by column).
Method: one untimed call (loads libraries, compiles or loads numba kernels), then the best wall
time of ``--repeats`` calls. Peak memory: the peak resident set size of the process during the
first call, above its size just before it (``ru_maxrss``), so htslib's C allocations count too.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SEED = 20240611
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, header  # noqa: E402

# ---------------------------------------------------------------------------------------------
# data


def write_vcf(folder, n, p, seed=SEED):
    """A bgzipped haploid VCF and a PLINK fileset of the same calls; returns their paths."""
    rng = np.random.default_rng(seed)
    samples = [f"iso{i:04d}" for i in range(n)]
    text = folder / "calls.vcf"
    with open(text, "w") as fh:
        fh.write('##fileformat=VCFv4.2\n##contig=<ID=chrom,length=10000000>\n'
                 '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
                 "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t" + "\t".join(samples) + "\n")
        freq = rng.beta(0.3, 3.0, size=p)
        two = rng.random(p) < 0.02
        codes = np.array(["0", "1", "2", "."])
        for j in range(p):
            g = (rng.random(n) < freq[j]).astype(np.int64)
            if two[j]:
                g[(g == 1) & (rng.random(n) < 0.3)] = 2
            g[rng.random(n) < 0.01] = 3
            alt = "G,T" if two[j] else "G"
            fh.write(f"chrom\t{10 * j + 1}\t.\tA\t{alt}\t.\tPASS\t.\tGT\t" + "\t".join(codes[g]) + "\n")
    packed = folder / "calls.vcf.gz"
    if shutil.which("bgzip"):
        with open(packed, "wb") as out:
            subprocess.run(["bgzip", "-c", str(text)], check=True, stdout=out)
    else:
        packed.write_bytes(gzip.compress(text.read_bytes(), compresslevel=6))
    text.unlink()
    return packed


def write_bed(folder, X, sample_ids, names):
    """The dosage matrix (missing as -127) as a PLINK fileset, one variant per column."""
    from bed_reader import to_bed

    path = folder / "calls.bed"
    p = X.shape[1]
    to_bed(path, X, properties={"iid": sample_ids, "sid": names, "chromosome": ["1"] * p,
                                "bp_position": np.arange(1, p + 1), "allele_1": ["G"] * p, "allele_2": ["A"] * p})
    return path


# ---------------------------------------------------------------------------------------------
# readers (run in a child process)


def genosift_read(path):
    import warnings

    from genosift.io import read

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-call report
        return read(path).X


def cyvcf2_loop(path):
    from cyvcf2 import VCF

    columns = []
    for variant in VCF(str(path)):
        g = variant.genotype.array()[:, :-1]
        for k in range(1, len(variant.ALT) + 1):
            columns.append((g == k).sum(axis=1, dtype=np.int8))
    return np.array(columns, dtype=np.int8).T


def allel_read(path):
    import allel

    data = allel.read_vcf(str(path), fields=["samples", "variants/ALT", "calldata/GT"], alt_number=2)
    gt = data["calldata/GT"]  # variants x samples x 2, -1 where missing or beyond the ploidy
    n_alt = (data["variants/ALT"] != "").sum(axis=1)
    per_allele = np.stack([(gt == k).sum(axis=2, dtype=np.int8) for k in (1, 2)], axis=1)  # p x 2 x n
    keep = (np.arange(2)[None, :] < n_alt[:, None]).ravel()
    return per_allele.reshape(-1, gt.shape[1])[keep].T


def bed_read(path):
    from bed_reader import open_bed

    with open_bed(path) as bed:
        X = bed.read(dtype="int8")
    X[X < 0] = 0
    return X


READERS = {"genosift": genosift_read, "cyvcf2 loop": cyvcf2_loop, "scikit-allel": allel_read,
           "genosift plink": genosift_read, "bed-reader": bed_read}


def _rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(name, path, warm, repeats):
    """Run one reader: JSON with the best time, the peak memory and checksums."""
    import scipy.sparse as sp

    read = READERS[name]
    read(warm)  # libraries loaded, kernels compiled
    before = _rss()
    start = time.perf_counter()
    X = read(path)
    first = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    times = [first]
    for _ in range(repeats):
        X = None
        start = time.perf_counter()
        X = read(path)
        times.append(time.perf_counter() - start)
    n, p = X.shape
    if sp.issparse(X):
        size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
        X = X.tocsr().astype(np.int64)
        total, by_row, by_col = X.sum(), (X.T @ np.arange(n)).sum(), (X @ np.arange(p)).sum()
    else:
        size = X.nbytes
        X = X.astype(np.int64)
        total, by_row, by_col = X.sum(), (np.arange(n) @ X).sum(), (X @ np.arange(p)).sum()
    print(json.dumps({"seconds": min(times[1:] or times), "peak": max(peak, 0), "out": size, "shape": [n, p],
                      "check": [int(total), int(by_row), int(by_col)]}))


def measure(name, path, warm, repeats):
    result = subprocess.run([sys.executable, __file__, "--child", name, str(path), str(warm), str(repeats)],
                            check=False, capture_output=True, text=True)
    if result.returncode:
        return {"error": result.stderr.strip().splitlines()[-1]}
    return json.loads(result.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--variants", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20,000 variants, printed only")
    parser.add_argument("--output", default=str(RESULTS / "RESULTS-variants.md"))
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name, path, warm, repeats = args.child
        return child(name, Path(path), Path(warm), int(repeats))
    n, p = args.samples, 20_000 if args.quick else args.variants
    load = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder, small = Path(tmp), Path(tmp) / "warm"
        small.mkdir()
        vcf, warm_vcf = write_vcf(folder, n, p), write_vcf(small, 20, 50, seed=1)
        from cyvcf2 import VCF

        X = cyvcf2_loop(vcf)
        X_warm = cyvcf2_loop(warm_vcf)
        for target, M, samples in ((folder, X, VCF(str(vcf)).samples), (small, X_warm, VCF(str(warm_vcf)).samples)):
            missing = _missing_mask(target / "calls.vcf.gz")
            M = M.copy()
            M[missing] = -127
            names = [f"v{j}" for j in range(M.shape[1])]
            write_bed(target, M, samples, names)
        calls = n * p
        file_mb = vcf.stat().st_size / 2**20
        reference = None
        for name, path, warm in (("genosift", vcf, warm_vcf), ("cyvcf2 loop", vcf, warm_vcf),
                                 ("scikit-allel", vcf, warm_vcf), ("genosift plink", folder / "calls.bed",
                                                                   small / "calls.bed"),
                                 ("bed-reader", folder / "calls.bed", small / "calls.bed")):
            got = measure(name, path, warm, args.repeats)
            if "error" in got:
                rows.append(f"| {name} | {path.name} | not run: {got['error']} | | | | |")
                continue
            if name == "genosift":
                reference = got["check"]
            same = "yes" if got["check"] == reference else "NO"
            rows.append(f"| {name} | {path.name} ({path.stat().st_size / 2**20:.1f} MB) | {got['seconds']:.2f} | "
                        f"{calls / got['seconds'] / 1e6:.1f} | {got['peak'] / 2**20:.0f} | {got['out'] / 2**20:.1f} | "
                        f"{same} |")
    report = "\n".join([
        *header("Variant genotypes to a matrix: VCF (bgzip) and PLINK .bed",
                libraries=("cyvcf2", "bed-reader", "scikit-allel"), load=load),
        f"{n} haploid samples x {p:,} sites (2 % with two ALT alleles, 1 % missing calls), "
        f"bgzipped VCF {file_mb:.1f} MB. Best of {args.repeats} after one untimed call; each reader in its "
        "own process. Peak MB: the process's peak resident memory during the first call above its size "
        "before it. Output MB: the matrix returned (genosift: CSR int8, the others dense int8). "
        "'same' checks the values against genosift's.",
        "",
        "| reader | file | seconds | M calls/s | peak MB | output MB | same |",
        "|---|---|---:|---:|---:|---:|---|",
        *rows,
        "",
    ])
    print(report)
    if not args.quick:
        Path(args.output).write_text(report)
    return 0


def _missing_mask(path):
    """Samples x alleles, True where the call of the allele's site is missing (for the .bed)."""
    from cyvcf2 import VCF

    columns = []
    for variant in VCF(str(path)):
        gap = (variant.genotype.array()[:, :-1] == -1).any(axis=1)
        columns.extend([gap] * len(variant.ALT))
    return np.array(columns).T


if __name__ == "__main__":
    sys.exit(main())
