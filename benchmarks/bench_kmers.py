#!/usr/bin/env python
"""Benchmark of the k-mer text reader: non-zero counts parsed per second, plain and gzip.

    python benchmarks/bench_kmers.py            # 200,000 k-mers x 500 samples, ~5 % dense (~5 M counts)
    python benchmarks/bench_kmers.py --quick    # 20,000 k-mers

Data: a seeded synthetic file in the fsm-lite format (``KMER | sample_0001:3 ...``), random
31-mers, sample ids ``sample_0000`` ..., each sample present with probability 5 % per k-mer,
geometric counts; written as plain text and as gzip (level 6) to a temporary folder. The real
pyseer k-mers (1837 samples x 200 k-mers) are added when ``../shared/data`` is present.

Method: one untimed call first (loads or compiles the numba kernels), then the best wall time of
``--repeats`` calls of ``read_kmers`` (file to CSR matrix, names included); the files are in the
page cache. Peak memory is the tracemalloc peak of one more call (numpy arrays included), per
stored count. Baseline: GenoLearn's preprocessing, about 114,000 non-zeros per second on this class
of machine (issue #4); target: at least 30x that.
"""
from __future__ import annotations

import argparse
import gzip
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

SEED = 20240611
BASELINE = 114_000  # GenoLearn, non-zeros per second
TARGET = 30.0


def write_synthetic(folder, n_kmers, n_samples, density, seed=SEED):
    """Plain and gzip k-mer files; returns their paths and the number of stored counts."""
    rng = np.random.default_rng(seed)
    ids = np.array([f"sample_{i:04d}" for i in range(n_samples)], dtype=object)
    kmers = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (n_kmers, 31))]
    lines = []
    nnz = 0
    for i in range(n_kmers):
        present = np.flatnonzero(rng.random(n_samples) < density)
        counts = rng.geometric(0.3, present.size)
        nnz += present.size
        entries = " ".join(f"{s}:{c}" for s, c in zip(ids[present], counts.tolist()))
        lines.append(f"{kmers[i].tobytes().decode()} | {entries}")
    text = ("\n".join(lines) + "\n").encode()
    plain = Path(folder) / "synthetic.kmers"
    plain.write_bytes(text)
    packed = Path(folder) / "synthetic.kmers.gz"
    packed.write_bytes(gzip.compress(text, compresslevel=6))
    return plain, packed, nnz


def measure(read, path, repeats):
    read(path)  # untimed: kernels loaded, file in the page cache
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        ds = read(path)
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    read(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return ds, best, peak


def machine():
    """CPUs, CPU model, RAM and load average, as the main runner reports them."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import machine_info

    info = machine_info()
    load = "%.2f %.2f %.2f" % os.getloadavg()
    return f"{info['nproc']} CPUs ({info['cpu']}), {info['ram']} RAM, load average {load}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 k-mers instead of 200,000")
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--density", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    import numba

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from genosift.io.kmers import read_kmers

    n_kmers = 20_000 if args.quick else 200_000
    rows = []
    with tempfile.TemporaryDirectory(prefix="genosift-bench-kmers-") as folder:
        start = time.perf_counter()
        plain, packed, nnz = write_synthetic(folder, n_kmers, args.samples, args.density)
        made = time.perf_counter() - start
        print(
            f"generated {n_kmers:,} k-mers x {args.samples} samples, {nnz:,} counts: "
            f"{plain.stat().st_size / 1e6:.1f} MB text, {packed.stat().st_size / 1e6:.1f} MB gzip "
            f"({made:.1f} s)",
            file=sys.stderr,
        )
        cases = [(f"synthetic {n_kmers:,} x {args.samples}, plain", plain),
                 (f"synthetic {n_kmers:,} x {args.samples}, gzip", packed)]
        real = Path(__file__).resolve().parents[2] / "shared" / "data" / "pyseer_kmers" / "kmers.gz"
        if real.exists():
            cases.append(("pyseer k-mers 200 x 1837 (real), gzip", real))
        for name, path in cases:
            ds, seconds, peak = measure(read_kmers, path, args.repeats)
            rate = ds.X.nnz / seconds
            rows.append((name, ds.X.nnz, path.stat().st_size / 1e6, seconds, rate, peak / ds.X.nnz))

    print("# k-mer text reader: non-zeros per second\n")
    print(f"`python benchmarks/bench_kmers.py{' --quick' if args.quick else ''}` on {machine()}; "
          f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}. "
          f"Best of {args.repeats} after one untimed call. Baseline: GenoLearn, {BASELINE:,} non-zeros/s; "
          f"target >= {TARGET:.0f}x.\n")
    print("| case | non-zeros | file MB | seconds | M non-zeros/s | x GenoLearn | target 30x | peak bytes / non-zero |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for name, count, size, seconds, rate, per in rows:
        ratio = rate / BASELINE
        print(f"| {name} | {count:,} | {size:.1f} | {seconds:.3f} | {rate / 1e6:.2f} | {ratio:.0f} | "
              f"{'pass' if ratio >= TARGET else 'FAIL'} | {per:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
