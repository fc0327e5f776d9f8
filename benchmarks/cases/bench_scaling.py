#!/usr/bin/env python
"""How each parallel path of genosift scales with threads: 1, 2, 4, ... up to the machine's cores.

    python benchmarks/cases/bench_scaling.py                      # this machine, writes RESULTS-scaling.md
    python benchmarks/cases/bench_scaling.py --quick              # smaller data, printed only
    python benchmarks/cases/bench_scaling.py --output FILE.md     # another machine's results

One script that builds its data with numpy (seeded) and needs only genosift and its dependencies
(run from a checkout it imports ``src/`` when genosift is not installed), so it can be copied to a
many-core machine as it is. Every path runs in this process at each thread count
(``genosift.core.engine.set_threads``: numba's parallel loops and genosift's pools; the BLAS is left
as it is) after one untimed call that compiles or loads its kernels; the time is the best of
``--repeats``. The whole ``genosift convert`` command runs as a child process with ``--threads``.

Reported per path: seconds at each thread count, the speed-up over one thread, the fraction of
the ideal (speed-up / threads) and the bytes of its input (the matrix's arrays; the k-mer text as
parsed, decompressed) over its time at the most threads, beside the share of the machine's
bandwidth that is. A path that reads memory more than it computes stops scaling when the memory
bus is full: the stream line measures the bandwidth the machine gives at each thread count (a
compiled a = b + s c over 3 x 256 MiB), so the paths' limits can be read against it (a path that
reads its input once and stays near the bus's rate is limited by it; one far below it, by its
computation or its serial parts).

Paths and data (the sizes of the scaling issue):

- class moments: ``fisher`` on a CSR 2,000 x 1,000,000 at 1 % (3 classes);
- contingency: ``chi2`` on its presence (``binary=True``);
- ranks: ``kruskal`` on a CSR 2,000 x 100,000 at 5 %;
- logistic and regression: ``logistic`` (two classes) and ``regression`` (a numeric target) with 3
  covariates on presence/absence 300 x 60,000;
- distances: ``wasserstein`` on a dense 1,000 x 20,000;
- structure: ``principal_coordinates`` (kmds, 3 coordinates) of a CSR 2,000 x 50,000's presence;
- k-mer text: ``read_kmers`` (parse to CSR) and ``convert_kmers`` (to a store) of fsm-lite text
  (1,000 samples x 200,000 k-mers at 5 %, 10 M counts, 147 MB), plain and gzip; ``genosift
  convert`` of the gzip file, whole command (start-up included);
- k-mer dumps: ``read_dumps`` of 50 sorted per-sample dumps of 200,000 31-mers each (10 M counts).
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402

try:
    import genosift  # noqa: F401
except ImportError:  # a checkout copied as it is
    sys.path.insert(0, str(SRC))

import numba  # noqa: E402
from numba import njit, prange  # noqa: E402

import genosift as gs  # noqa: E402
from genosift.core import engine  # noqa: E402

SEED = 20261127


def thread_counts(cores):
    out, t = [], 1
    while t < cores:
        out.append(t)
        t *= 2
    return out + [cores]


def best(fn, repeats):
    fn()  # compiles or loads the kernels, fills the caches
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def sparse_counts(rng, n, p, density, classes=3):
    """CSR counts 1..20 (float32), sorted distinct columns per row; the first 1 % class-dependent."""
    y = rng.integers(0, classes, n)
    width = int(p * density * 1.2) + 64
    gaps = rng.geometric(density, size=(n, width))
    cols = np.cumsum(gaps, axis=1) - 1
    keep = cols < p
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(keep.sum(axis=1), out=indptr[1:])
    indices = cols[keep].astype(np.int32)
    data = rng.integers(1, 21, indices.size).astype(np.float32)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    marked = indices < max(1, p // 100)
    data[marked] = np.minimum(20, data[marked] + 3 * y[rows[marked]])
    return sp.csr_matrix((data, indices, indptr), shape=(n, p)), y


@njit(parallel=True, nogil=True, cache=True)
def _triad(a, b, c, s):
    for i in prange(a.size):
        a[i] = b[i] + s * c[i]


def stream_gbs(repeats):
    n = (256 << 20) // 8
    a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)
    seconds = best(lambda: _triad(a, b, c, 3.0), repeats)
    return 3 * a.nbytes / seconds / 1e9


def write_kmer_text(folder, n_samples, n_kmers, density, seed):
    from genosift.io.datasets import write_synthetic_kmers

    plain = Path(folder) / "kmers.txt"
    write_synthetic_kmers(plain, n_samples=n_samples, n_kmers=n_kmers, density=density, seed=seed)
    packed = Path(folder) / "kmers.txt.gz"
    with open(plain, "rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
        while chunk := src.read(1 << 24):
            dst.write(chunk)
    counts = 0
    with open(plain, "rb") as fh:
        while chunk := fh.read(1 << 24):
            counts += chunk.count(b":")
    return plain, packed, counts


def write_dumps(folder, n_samples, per_sample, seed):
    """One sorted ``KMER COUNT`` dump per sample (75 % core k-mers, the rest drawn from twice as
    many accessory ones) and a list file naming them; returns the list file and the counts."""
    rng = np.random.default_rng(seed)
    core = int(per_sample * 0.75)
    pool = rng.integers(0, 4, size=(core + 2 * (per_sample - core), 31), dtype=np.uint8)
    text = np.frombuffer(b"ACGT", np.uint8)[pool].view("S31").ravel()
    listed, total = [], 0
    for s in range(n_samples):
        pick = np.concatenate([np.arange(core), core + rng.choice(len(text) - core, per_sample - core, replace=False)])
        kmers = np.sort(text[pick])
        counts = rng.geometric(0.6, size=kmers.size)
        body = b"".join(k + b"\t" + str(c).encode() + b"\n" for k, c in zip(kmers.tolist(), counts.tolist()))
        (Path(folder) / f"d{s:03d}.txt").write_bytes(body)
        listed.append(f"sample_{s:03d}\td{s:03d}.txt\n")
        total += kmers.size
    path = Path(folder) / "dumps.txt"
    path.write_text("".join(listed))
    return path, total


def size_of(M):
    """Bytes of a matrix's arrays: what a pass over it reads."""
    if sp.issparse(M):
        return M.data.nbytes + M.indices.nbytes + M.indptr.nbytes
    return M.nbytes


def command_seconds(args, threads, repeats):
    """Best wall time of the ``genosift`` command ``args`` with ``--threads`` (a child process, its
    modules' bytecode cached as an installed package's is)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "genosift", *args, "--threads", str(threads), "--quiet", "--force"]
    subprocess.run(cmd, check=True, env=env, capture_output=True)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, capture_output=True)
        times.append(time.perf_counter() - t)
    return min(times)


def build_paths(folder, quick):
    rng = np.random.default_rng(SEED)
    scale = 10 if quick else 1
    X1, y1 = sparse_counts(rng, 2000, 1_000_000 // scale, 0.01)
    X2, y2 = sparse_counts(rng, 2000, 100_000 // scale, 0.05)
    X3 = sparse_counts(rng, 2000, 50_000 // scale, 0.01)[0]
    n, p = 300, 60_000 // scale
    P = (rng.random((n, p)) < 0.3).astype(np.float64)
    cov = rng.normal(size=(n, 3))
    yb = (rng.random(n) < 0.5).astype(int)
    yn = cov @ np.array([0.5, -0.2, 0.1]) + rng.normal(size=n)
    D = rng.normal(size=(1000, 20_000 // scale))
    yd = rng.integers(0, 2, 1000)
    kmer_samples, kmer_count = (200, 20_000) if quick else (1000, 200_000)
    plain, packed, counts = write_kmer_text(folder, kmer_samples, kmer_count, 0.05, SEED)
    dumps, dump_counts = write_dumps(folder, 10 if quick else 50, 20_000 if quick else 200_000, SEED)
    store = Path(folder) / "out.gs.h5ad"
    kmer_case = f"fsm-lite text {kmer_samples:,} x {kmer_count:,} at 5 % ({counts:,} counts, " \
                f"{plain.stat().st_size / 1e6:.0f} MB plain, {packed.stat().st_size / 1e6:.0f} MB gzip)"
    text_bytes = plain.stat().st_size
    dump_bytes = sum(f.stat().st_size for f in Path(folder).glob("d*.txt"))
    return [
        ("class moments", "`fisher`", f"CSR 2,000 x {X1.shape[1]:,} at 1 %", None, size_of(X1),
         lambda: gs.score(X1, y1, method="fisher")),
        ("contingency", "`chi2`, binary", f"CSR 2,000 x {X1.shape[1]:,} at 1 %", None, size_of(X1),
         lambda: gs.score(X1, y1, method="chi2", binary=True)),
        ("ranks", "`kruskal`", f"CSR 2,000 x {X2.shape[1]:,} at 5 %", None, size_of(X2),
         lambda: gs.score(X2, y2, method="kruskal")),
        ("logistic", "`logistic` + 3 covariates", f"presence {n} x {p:,}", None, size_of(P),
         lambda: gs.score(P, yb, method="logistic", covariates=cov)),
        ("regression", "`regression` + 3 covariates", f"presence {n} x {p:,}", None, size_of(P),
         lambda: gs.score(P, yn, method="regression", covariates=cov)),
        ("distances", "`wasserstein`", f"dense 1,000 x {D.shape[1]:,}", None, size_of(D),
         lambda: gs.score(D, yd, method="wasserstein")),
        ("structure", "`principal_coordinates`, kmds, K = 3", f"CSR 2,000 x {X3.shape[1]:,} at 1 %", None,
         size_of(X3), lambda: gs.principal_coordinates(X3, 3, binary=True)),
        ("k-mer text", "`read_kmers`, plain", kmer_case, counts, text_bytes, lambda: gs.io.read_kmers(plain)),
        ("k-mer text", "`read_kmers`, gzip", kmer_case, counts, text_bytes, lambda: gs.io.read_kmers(packed)),
        ("k-mer text", "`convert_kmers` to a store, gzip", kmer_case, counts, text_bytes,
         lambda: gs.io.convert_kmers(packed, store, overwrite=True)),
        ("k-mer text", "`genosift convert`, gzip, whole command", kmer_case, counts, text_bytes,
         ("convert", str(packed), "-o", str(store))),
        ("k-mer dumps", "`read_dumps`, plain", f"{10 if quick else 50} sorted dumps of "
         f"{20_000 if quick else 200_000:,} 31-mers (75 % core; {dump_counts:,} counts)", dump_counts, dump_bytes,
         lambda: gs.io.read_dumps(dumps)),
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="data at a tenth (printed only)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", help="thread counts, comma-separated (default 1, 2, 4, ... the cores)")
    parser.add_argument("--output", help="results file (default: benchmarks/results/RESULTS-scaling.md unless --quick)")
    args = parser.parse_args(argv)
    cores = min(os.cpu_count() or 1, numba.config.NUMBA_NUM_THREADS)
    counts = [int(t) for t in args.threads.split(",")] if args.threads else thread_counts(cores)
    started = datetime.datetime.now().astimezone()
    load = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="genosift-scaling-") as folder:
        paths = build_paths(folder, args.quick)
        engine.set_threads(counts[0])
        stream = []
        for t in counts:
            engine.set_threads(t)
            stream.append(stream_gbs(args.repeats))
            print(f"stream, {t} threads: {stream[-1]:.1f} GB/s", flush=True)
        for kind, what, data, n_counts, nbytes, run in paths:
            seconds = []
            for t in counts:
                engine.set_threads(t)
                s = command_seconds(run, t, args.repeats) if isinstance(run, tuple) else best(run, args.repeats)
                seconds.append(s)
                rate = f", {n_counts / s / 1e6:.1f} M counts/s" if n_counts else ""
                print(f"{kind}: {what}, {t} threads: {s:.3f} s{rate}", flush=True)
            rows.append((kind, what, data, n_counts, nbytes, seconds))
        engine.set_threads(None)
    head = "| path | what | data | " + " | ".join(f"{t} thr. s" for t in counts) + \
        f" | speed-up at {counts[-1]} | of ideal | input read at {counts[-1]} thr., GB/s (of the bus) |"
    libraries = [("numba", f"{numba.__version__} ({numba.threading_layer()} threads)")]
    lines = [
        *header("Scaling with threads", libraries=libraries, load=load, started=started),
        f"Best of {args.repeats} after one untimed call, each path "
        "in one process at each thread count (the whole command: a child process per run).",
        "",
        head,
        "|" + "---|" * 3 + "---:|" * (len(counts) + 3),
    ]
    lines.append("| memory bandwidth | compiled a = b + s c, 3 x 256 MiB | GB/s | "
                 + " | ".join(f"{g:.1f}" for g in stream)
                 + f" | {stream[-1] / stream[0]:.2f}x | {stream[-1] / stream[0] / counts[-1]:.2f} | |")
    for kind, what, data, n_counts, nbytes, seconds in rows:
        cells = [f"{s:.3f}" + (f" ({n_counts / s / 1e6:.1f} M/s)" if n_counts else "") for s in seconds]
        up = seconds[0] / seconds[-1]
        read = nbytes / seconds[-1] / 1e9
        lines.append(f"| {kind} | {what} | {data} | " + " | ".join(cells)
                     + f" | {up:.2f}x | {up / counts[-1]:.2f} | {read:.1f} ({read / stream[-1]:.2f}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    output = args.output or (None if args.quick else str(RESULTS / "RESULTS-scaling.md"))
    if output:
        Path(output).write_text(text)
        print(f"wrote {output}")


if __name__ == "__main__":
    main()
