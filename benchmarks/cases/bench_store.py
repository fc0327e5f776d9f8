#!/usr/bin/env python
"""Benchmark of the genosift store: write, read and out-of-core scoring of a k-mer-like matrix.

    python benchmarks/cases/bench_store.py            # 1,000 samples x 2,000,000 k-mers, 1 % dense
    python benchmarks/cases/bench_store.py --quick    # 1,000 x 200,000 (printed only)

A full run writes ``benchmarks/results/RESULTS-store.md`` and prints it.

Data: a seeded synthetic sparse matrix shaped like k-mer counts (each sample holds each k-mer
with probability ``--density``, geometric counts, float64 as ``read_kmers`` gives them), random
31-mer names, sample ids and a binary ``phenotype`` column in ``obs``. It is written with
``write_store`` to a temporary folder (CSR plus the column copy).

Measured:

- write: wall time of ``write_store`` (one run), and the file size by part.
- disk read rate: one sequential read of the whole file in 8 MiB pieces into a reused buffer,
  after ``posix_fadvise(DONTNEED)`` has dropped the file from the page cache ("cold": the rate of
  the disk as this process sees it), and again with the file cached ("warm": the rate of memory).
  Dropping the whole page cache (``/proc/sys/vm/drop_caches``) is not used; dropping this one
  file's pages is enough for a clean first read.
- row chunks: reading every row chunk of the store with ``Store.row_chunks()`` (default budget),
  cold and warm.
- score: ``score_store(path, "phenotype", method=...)`` from a fresh ``Store`` (so the feature
  names are loaded each time), cold and warm, best of ``--repeats``; each method in a child
  process that first scores a tiny store (numba kernels loaded), so that the child's peak
  resident set size (``VmHWM``) is the peak of the scoring (plus the imports, reported).

Targets: methods that read row chunks score at least half the cold disk read rate, where the
scoring rate is the bytes of the CSR matrix per second of wall time; methods that read feature
blocks are bound by their arithmetic, not by reading: either that rate, or the store read cold
takes no longer than the same scores from the matrix already in memory (``in memory s``). Peak
memory below 1 GB for 1,000 samples x 2,000,000 k-mers.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

SEED = 20240611
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402


def synthetic(n, p, density, seed=SEED):
    """A k-mer-like Dataset: sorted CSR rows of geometric counts, 31-mer names, a phenotype."""
    import pandas as pd
    import scipy.sparse as sp

    from genosift.io import Dataset

    rng = np.random.default_rng(seed)
    per_row = rng.binomial(p, density, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_row, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    for i in range(n):
        indices[indptr[i]:indptr[i + 1]] = np.sort(rng.choice(p, per_row[i], replace=False))
    data = rng.geometric(0.3, indices.size).astype(np.float64)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, p))
    kmers = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (p, 31), dtype=np.uint8)]
    names = np.array(kmers.view("S31").ravel().astype(str), dtype=object)
    ids = np.array([f"sample_{i:04d}" for i in range(n)], dtype=object)
    obs = pd.DataFrame({"phenotype": rng.integers(0, 2, n)}, index=pd.Index(ids, name="sample"))
    return Dataset(X, ids, names, obs)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_file(path, piece=8 << 20):
    """Seconds to read the whole file sequentially into a reused buffer."""
    buf = memoryview(bytearray(piece))
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        start = time.perf_counter()
        pos = 0
        while pos < size:
            got = os.preadv(fd, [buf], pos)
            if got <= 0:
                break
            pos += got
        return time.perf_counter() - start
    finally:
        os.close(fd)


def parts(path):
    """Bytes on disk of the CSR matrix, the column copy, and the rest (the names, mostly)."""
    import h5py

    sizes = {"X (CSR)": 0, "column copy (CSC)": 0}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and name.startswith(("X/", "var/_genosift_columns/")):
                sizes["X (CSR)" if name.startswith("X/") else "column copy (CSC)"] += obj.id.get_storage_size()
        f.visititems(visit)
        blob = f["var/_genosift_names"].id.get_storage_size()
    rest = os.path.getsize(path) - sum(sizes.values())
    sizes["names (HDF5 strings for AnnData + a NUL-joined blob) and the rest"] = rest
    return sizes, blob


def time_row_chunks(path, cold):
    from genosift.io.store import open_store

    store = open_store(path)
    if cold:
        drop_cache(path)
    start = time.perf_counter()
    total = 0
    for chunk in store.row_chunks():
        total += chunk.data.nbytes + chunk.indices.nbytes
    return time.perf_counter() - start, total


def _vm_hwm():
    """Peak resident set size of this process image, in bytes (VmHWM; reset by exec, unlike
    ru_maxrss, which a child started by fork + exec inherits from its parent)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def child(args):
    """Run in a fresh process: score the store, print JSON with times and the peak RSS."""
    import scipy.sparse as sp

    from genosift.io import Dataset
    from genosift.io.store import write_store
    from genosift.scoring.store import score_store

    with tempfile.TemporaryDirectory() as tmp:  # load the numba kernels on a tiny store
        X = sp.random(20, 50, density=0.3, format="csr", random_state=0)
        y = np.arange(20) % 2
        tiny = write_store(Dataset(X, np.arange(20).astype(str), np.arange(50).astype(str)), Path(tmp) / "t.gs.h5ad")
        score_store(tiny, y, method=args.method)
    rss = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    times = {}
    for cold in (True, False):
        best = float("inf")
        for _ in range(args.repeats):
            if cold:
                drop_cache(args.child)
            start = time.perf_counter()
            res = score_store(args.child, "phenotype", method=args.method, chunk_bytes=args.chunk_bytes)
            best = min(best, time.perf_counter() - start)
        times["cold" if cold else "warm"] = best
        start = time.perf_counter()
        res.top(10)  # the first use of the names: decoded from the store now
        times["names"] = time.perf_counter() - start
        del res
    print(json.dumps({"times": times, "peak": _vm_hwm(), "base": rss}))


def run_child(path, method, chunk_bytes, repeats):
    cmd = [sys.executable, __file__, "--child", str(path), "--method", method, "--repeats", str(repeats)]
    if chunk_bytes:
        cmd += ["--chunk-bytes", str(chunk_bytes)]
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200,000 k-mers instead of 2,000,000")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--features", type=int, default=None)
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", default="fisher,anova,auc", help="comma-separated score methods")
    parser.add_argument("--budgets", default="0,67108864",
                        help="comma-separated chunk_bytes to score with (0: the default budget)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--method", default="fisher", help=argparse.SUPPRESS)
    parser.add_argument("--chunk-bytes", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(SRC))
    if args.child:
        child(args)
        return 0
    load = os.getloadavg()

    import genosift as gs
    from genosift.io.store import CHUNK_BYTES, write_store
    from genosift.scoring.store import by_features

    p = args.features or (200_000 if args.quick else 2_000_000)
    n = args.samples
    with tempfile.TemporaryDirectory(prefix="genosift-bench-store-") as folder:
        path = Path(folder) / "kmers.gs.h5ad"
        start = time.perf_counter()
        ds = synthetic(n, p, args.density)
        made = time.perf_counter() - start
        nnz = ds.X.nnz
        print(f"generated {n:,} x {p:,}, {nnz:,} non-zeros ({made:.1f} s)", file=sys.stderr)
        start = time.perf_counter()
        write_store(ds, path)
        write_s = time.perf_counter() - start
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        in_memory = {}
        for method in methods:  # the same scores from the matrix in memory: no file, no names to load
            y = ds.obs["phenotype"].to_numpy()
            gs.score(ds.X[:50], y[:50], method=method)  # kernels loaded
            best = float("inf")
            for _ in range(args.repeats):
                start = time.perf_counter()
                gs.score(ds.X, y, method=method, feature_names=ds.feature_names)
                best = min(best, time.perf_counter() - start)
            in_memory[method] = best
        del ds
        size = os.path.getsize(path)
        sizes, blob = parts(path)
        csr = sizes["X (CSR)"]

        drop_cache(path)
        cold_read = read_file(path)
        warm_read = min(read_file(path) for _ in range(args.repeats))
        chunks_cold = time_row_chunks(path, True)
        chunks_warm = min((time_row_chunks(path, False) for _ in range(args.repeats)), key=lambda t: t[0])

        scored = []
        budgets = [int(b) or None for b in args.budgets.split(",") if b.strip()]
        for method in methods:
            for budget in budgets:
                print(f"scoring {method}, chunk_bytes={budget or CHUNK_BYTES}", file=sys.stderr)
                scored.append((method, budget or CHUNK_BYTES, run_child(path, method, budget, args.repeats)))

    mb = 1e6
    disk_rate = size / cold_read / mb
    print("\n".join(header("genosift store: write, read, out-of-core scoring", load=load)))
    print(f"{n:,} samples x {p:,} features, density {args.density}, {nnz:,} non-zeros (float64), seed {SEED}.\n")
    print("| what | value |")
    print("|---|---:|")
    print(f"| write_store (CSR + column copy + names) | {write_s:.2f} s |")
    print(f"| file size | {size / mb:.0f} MB |")
    for key, value in sizes.items():
        print(f"| &nbsp; of which {key} | {value / mb:.0f} MB |")
    print(f"| disk read rate, whole file, cold (page cache of the file dropped) | {disk_rate:,.0f} MB/s |")
    print(f"| memory read rate, whole file, warm (in page cache) | {size / warm_read / mb:,.0f} MB/s |")
    print(f"| Store.row_chunks(), all CSR chunks, cold | {chunks_cold[1] / chunks_cold[0] / mb:,.0f} MB/s "
          f"({chunks_cold[0]:.3f} s) |")
    print(f"| Store.row_chunks(), all CSR chunks, warm | {chunks_warm[1] / chunks_warm[0] / mb:,.0f} MB/s "
          f"({chunks_warm[0]:.3f} s) |")
    print()
    read_bytes = csr
    print(f"Scoring reads the matrix: {read_bytes / mb:.0f} MB of CSR rows (the column copy, about as large, for "
          f"block methods). Rate = those bytes / wall time of `score_store` (the result built: scores, "
          f"p-values); target >= half the cold disk rate, {disk_rate / 2:,.0f} MB/s, for the methods that read "
          "row chunks; for those that read feature blocks, that rate or a cold store no slower than the matrix "
          "in memory (\"in memory s\"): bound by their arithmetic, not by reading. The feature names "
          f"({blob / mb:.0f} MB) are decoded when the result first needs them: \"names s\" is that first "
          "`res.top(10)`. \"in memory\" = genosift.score on the CSR matrix already in memory (no file, names "
          "given): where it is as slow as the store, the method is bound by its arithmetic (p-values, ranks), "
          "not by reading. Peak = the child process's peak RSS, names included (imports included; their RSS "
          "before scoring in brackets); target < 1 GB (10^9 bytes).\n")
    print("| method | reads | chunk_bytes | cold s | cold MB/s | warm s | warm MB/s | rate target | in memory s "
          "| names s | peak RSS (imports) | memory target |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
    for method, budget, res in scored:
        cold, warm = res["times"]["cold"], res["times"]["warm"]
        rate = read_bytes / cold / mb
        peak = res["peak"] / 2**20
        reads = "row chunks" if gs.get_method(method).streaming == "rows" else "feature blocks"
        if by_features(SimpleNamespace(sparse=True, has_column_copy=True), gs.get_method(method)):
            reads = "feature blocks (class moments from the column copy)"
        if rate >= disk_rate / 2:
            verdict = "pass"
        elif reads != "row chunks" and cold <= in_memory[method]:
            verdict = f"pass (arithmetic-bound: {cold:.2f} s cold <= {in_memory[method]:.2f} s in memory)"
        else:
            verdict = "FAIL"
        print(f"| {method} | {reads} | {budget >> 20} MiB | {cold:.3f} | {rate:,.0f} | {warm:.3f} | "
              f"{read_bytes / warm / mb:,.0f} | {verdict} | "
              f"{in_memory[method]:.3f} | {res['times']['names']:.3f} | {peak:,.0f} MiB ({res['base'] / 2**20:,.0f}) | "
              f"{'pass' if res['peak'] < 1e9 else 'FAIL'} |")
    return 0


def report(argv=None):
    """Run ``main``; a full run (not ``--quick``, not a child, not ``--help``) also writes RESULTS-store.md."""
    import contextlib
    import io

    argv = sys.argv[1:] if argv is None else argv
    if {"--quick", "--child", "-h", "--help"} & set(argv):
        return main(argv)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(argv)
    print(buffer.getvalue(), end="")
    (RESULTS / "RESULTS-store.md").write_text(buffer.getvalue())
    return code


if __name__ == "__main__":
    raise SystemExit(report())
