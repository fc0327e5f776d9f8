#!/usr/bin/env python
"""Benchmark of scoring on a Dask cluster: bounded worker memory, throughput, overhead.

    python benchmarks/cases/bench_dask.py            # a 1.8 GB store; writes benchmarks/results/RESULTS-dask.md
    python benchmarks/cases/bench_dask.py --quick    # smaller stores, printed only (a smoke test)

Needs ``pip install -e ".[dask,io]"``. Every cluster is a ``distributed.LocalCluster`` of worker
processes on this machine (loopback only), one thread each, started fresh for each measurement
so that each worker's peak resident set size (``VmHWM``) is the peak of that run.

Measured:

- a store larger than one worker's memory limit and than both workers' together (sparse CSR of
  geometric counts, seeded; about 1.8 GB of values and indices, written without the column
  copy), scored with ``fisher`` by
  ``score_store(..., scheduler=client, chunk_bytes=32 MiB)`` on 1 and 2 workers limited to
  ``--memory-limit`` each: wall time, throughput (bytes of the stored matrix per second), each
  worker's peak RSS against the limit, whether a worker was restarted or paused, and the result
  against the local engine's (``score_store`` without a scheduler, the same file).
- the overhead on data that fits in memory: a 430 MB store (with its column copy) scored with
  ``fisher`` (row chunks) and ``auc`` (feature blocks) by the local engine (2 threads) and by a
  cluster of 2 single-thread workers (default task size), best of 3 each; and a CSR matrix in
  memory scored by ``genosift.score`` against the same matrix as a Dask array of 4 row chunks
  (made beforehand) on Dask's threaded scheduler. Target: Dask within 1.5x of the local engine.

Workers import genosift (numpy, scipy, scikit-learn, pandas, numba) before scoring; with its
kernels loaded a worker holds about 350 MiB before it reads any data, which is why the limit is
800 MB rather than smaller: dask pauses a worker at 80 % of its limit. Warm-up: every cluster first scores a tiny
store, so numba's kernels are loaded and no JIT time is counted.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, header  # noqa: E402

SEED = 20261121
MiB = 2**20


def counts_store(path, n, p, density, *, column_copy, seed=SEED):
    """A seeded sparse store of geometric counts with a binary ``phenotype``; its matrix bytes."""
    import pandas as pd
    import scipy.sparse as sp

    from genosift.io import Dataset, write_store

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):  # gaps between entries are geometric: sorted columns, about p * density
        cols = np.cumsum(rng.geometric(density, int(p * density * 1.2) + 16)) - 1
        rows.append(cols[cols < p].astype(np.int32))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([r.size for r in rows], out=indptr[1:])
    indices = np.concatenate(rows)
    del rows
    data = rng.geometric(0.3, indices.size).astype(np.float64)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, p))
    ids = np.array([f"s{i}" for i in range(n)], dtype=object)
    names = np.array([f"k{j}" for j in range(p)], dtype=object)
    obs = pd.DataFrame({"phenotype": rng.integers(0, 2, n)}, index=ids)
    write_store(Dataset(X, ids, names, obs), path, column_copy=column_copy, overwrite=True)
    return X, data.nbytes + indices.nbytes + indptr.nbytes


def _peak_mib():
    """The process's peak RSS (``VmHWM``: reset by exec, unlike ``ru_maxrss``, which a worker
    would inherit from the process that forked its nanny)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


def _rss_mib():
    import psutil

    return psutil.Process().memory_info().rss / MiB


def cluster(n_workers, memory_limit):
    from distributed import Client, LocalCluster

    c = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                     host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=40)
    return c, Client(c, set_as_default=False)


def warm_up(client, tiny):
    from genosift.scoring.store import score_store

    for method in ("fisher", "auc"):
        score_store(tiny, "phenotype", method=method, scheduler=client)


def best_of(func, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t)
    return min(times), out


def same(a, b):
    scale = np.nanmax(np.abs(b.scores))
    return bool(np.allclose(a.scores, b.scores, rtol=1e-12, atol=1e-12 * scale, equal_nan=True))


def bounded_memory(big, big_bytes, tiny, limit_mb, task_bytes, repeats):
    """Score the big store on 1 and 2 workers (best of ``repeats``): rows of the table."""
    from genosift.scoring.store import score_store

    local_s, local = best_of(lambda: score_store(big, "phenotype", method="fisher"), repeats)
    rows = []
    for workers in (1, 2):
        c, client = cluster(workers, f"{limit_mb}MB")
        try:
            warm_up(client, tiny)
            before = client.run(os.getpid)
            base = client.run(_rss_mib)
            wall, got = best_of(lambda: score_store(big, "phenotype", method="fisher", scheduler=client,
                                                    chunk_bytes=task_bytes), repeats)
            peaks = client.run(_peak_mib)
            restarted = client.run(os.getpid) != before
            logs = [msg for _, msgs in client.get_worker_logs().items() for _, msg in msgs]
            paused = sum("Paused worker" in m or "pausing" in m.lower() for m in logs)
        finally:
            client.close()
            c.close()
        rows.append({"workers": workers, "wall": wall, "rate": big_bytes / wall / 1e6,
                     "peaks": [peaks[a] for a in sorted(peaks)], "base": [base[a] for a in sorted(base)],
                     "restarted": restarted, "paused": paused, "equal": same(got, local)})
    return local_s, rows


def overhead(small, small_X, tiny, repeats):
    import dask.array as da

    import genosift as gs
    from genosift.scoring.store import score_store

    rows = []
    c, client = cluster(2, "auto")
    try:
        warm_up(client, tiny)
        for method in ("fisher", "auc"):
            local_s, local = best_of(lambda: score_store(small, "phenotype", method=method), repeats)
            dask_s, got = best_of(lambda: score_store(small, "phenotype", method=method, scheduler=client), repeats)
            rows.append(("store, local engine (2 threads) vs 2 workers x 1 thread", method, local_s, dask_s,
                         same(got, local)))
    finally:
        client.close()
        c.close()
    y = gs.io.open_store(small).obs["phenotype"].to_numpy()
    # the chunks are made once (scipy's row slicing of a CSR copies it): the timing is of the scoring
    lazy = da.from_array(small_X, chunks=(small_X.shape[0] // 4 + 1, small_X.shape[1])).persist(scheduler="threads")
    for method in ("fisher", "auc"):
        local_s, local = best_of(lambda: gs.score(small_X, y, method=method), repeats)
        dask_s, got = best_of(lambda: gs.score(lazy, y, method=method, scheduler="threads"), repeats)
        rows.append(("CSR in memory vs Dask array of it (4 row chunks), threaded scheduler", method, local_s, dask_s,
                     same(got, local)))
    return rows


def report(args, sizes, big_bytes, limit_mb, task_bytes, local_s, big_rows, over_rows):
    lines = [*header("genosift on a Dask cluster: bounded worker memory, throughput, overhead",
                     libraries=("dask", "distributed"), load=args.load),
             sizes, "",
             "## A store larger than a worker's memory limit", "",
             "`score_store(path, 'phenotype', method='fisher', scheduler=client, "
             f"chunk_bytes={task_bytes // MiB} MiB)`: "
             f"{big_bytes / 1e6:,.0f} MB of stored matrix (CSR values, column indices, row pointers), workers of one "
             f"thread limited to {limit_mb} MB each (dask pauses a worker at 80 % and restarts it at 95 %). "
             f"Wall time: best of {args.repeats}. Peak = each worker's peak RSS over its life (imports, warm-up "
             "and all runs included; its RSS after the warm-up in brackets). The local engine (the same call "
             f"without a scheduler, 256 MiB chunks, 2 threads) takes {local_s:.2f} s "
             f"({big_bytes / local_s / 1e6:,.0f} MB/s).",
             "",
             "| workers | wall s | MB/s | peak RSS per worker, MiB (after warm-up) | under the limit | worker "
             "restarted | pauses | equal to local |",
             "|---:|---:|---:|---|---|---|---:|---|"]
    for r in big_rows:
        peaks = ", ".join(f"{p:.0f} ({b:.0f})" for p, b in zip(r["peaks"], r["base"]))
        under = all(p * MiB < limit_mb * 1e6 for p in r["peaks"])
        lines.append(f"| {r['workers']} | {r['wall']:.2f} | {r['rate']:,.0f} | {peaks} | {'yes' if under else 'NO'} | "
                     f"{'yes' if r['restarted'] else 'no'} | {r['paused']} | {'yes' if r['equal'] else 'NO'} |")
    if len(big_rows) == 2:
        lines += ["", f"Speed-up with 2 workers: {big_rows[0]['wall'] / big_rows[1]['wall']:.2f}x. The "
                  f"{os.cpu_count()} CPUs also run the scheduler and the client, and other users' processes (the "
                  "load average above): two workers gain only where a CPU is free."]
    lines += ["", "## Overhead on data that fits in memory", "",
              f"Best of {args.repeats} wall times; ratio = Dask / local (target < 1.5).", "",
              "| comparison | method | local s | Dask s | ratio | target | equal |", "|---|---|---:|---:|---:|---|---|"]
    for what, method, local, dsk, equal in over_rows:
        ratio = dsk / local
        lines.append(f"| {what} | {method} | {local:.3f} | {dsk:.3f} | {ratio:.2f} | "
                     f"{'pass' if ratio < 1.5 else 'FAIL'} | "
                     f"{'yes' if equal else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller stores; print only")
    parser.add_argument("--memory-limit", type=int, default=800, help="MB per worker (default 800)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS / "RESULTS-dask.md"))
    args = parser.parse_args(argv)
    args.load = os.getloadavg()
    task_bytes = 32 * MiB
    big_shape = (3000, 500_000, 0.1) if not args.quick else (500, 250_000, 0.05)
    small_shape = (2000, 300_000, 0.06) if not args.quick else (500, 100_000, 0.06)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="genosift-bench-dask-") as folder:
        folder = Path(folder)
        tiny = folder / "tiny.gs.h5ad"
        counts_store(tiny, 40, 100, 0.3, column_copy=True)
        big = folder / "big.gs.h5ad"
        t = time.perf_counter()
        X, big_bytes = counts_store(big, *big_shape, column_copy=False)
        del X
        print(f"wrote {big_bytes / 1e6:,.0f} MB store in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        local_s, big_rows = bounded_memory(big, big_bytes, tiny, args.memory_limit, task_bytes, args.repeats)
        big.unlink()
        small = folder / "small.gs.h5ad"
        small_X, small_bytes = counts_store(small, *small_shape, column_copy=True)
        over_rows = overhead(small, small_X, tiny, args.repeats)
    sizes = (f"Large store: {big_shape[0]:,} samples x {big_shape[1]:,} features, density {big_shape[2]}; "
             f"in memory: {small_shape[0]:,} x {small_shape[1]:,}, density {small_shape[2]} "
             f"({small_bytes / 1e6:,.0f} MB); "
             f"seed {SEED}. "
             f"Whole run {time.perf_counter() - started:.0f} s.")
    text = report(args, sizes, big_bytes, args.memory_limit, task_bytes, local_s, big_rows, over_rows)
    print(text)
    if not args.quick:
        Path(args.output).write_text(text)


if __name__ == "__main__":
    main()
