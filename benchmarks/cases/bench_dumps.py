#!/usr/bin/env python
"""Benchmark of per-sample k-mer dumps merged into one matrix and into a store, against pandas.

    python benchmarks/cases/bench_dumps.py            # 50 samples x 200,000 k-mers each (10 M counts)
    python benchmarks/cases/bench_dumps.py --quick    # 10 samples x 20,000 k-mers (printed only)

Writes ``benchmarks/results/RESULTS-dumps.md`` (full run) and prints it.

Data (seeded): a pan-genome of random 31-mers, a core that every sample holds (75 %) and
accessory k-mers drawn per sample (25 %, from a pool as large as the core), geometric counts;
one dump per sample as ``kmc_tools transform DB dump`` writes it (sorted, ``KMER<TAB>COUNT``),
plain and gzip (level 1), named in a list file.

Measured, on the list file:

- ``read_dumps``: the dumps to a CSR matrix in memory, k-mers sorted, names included;
- ``convert_dumps`` to a store (CSR + column copy + names), in memory (default budget);
- ``convert_dumps`` spilled: ``chunk_bytes`` = 16 MiB (1 MiB with ``--quick``), the rows spilled to a temporary file and
  the column copy written in groups of columns;
- the peer: pandas, ``pd.read_csv`` per file (C parser, k-mer as index) and one outer
  ``pd.concat(axis=1)``, NaN filled with 0 (a dense k-mers x samples frame, the usual script);
  checked equal to ``read_dumps``.

Method: one untimed call under ``PeakRSS`` (peak resident memory above the RSS before the call,
see ``run.py``), then the best wall time of ``--repeats`` calls; the files are in the page cache.
"""
from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py and the runner run.py
from common import RESULTS, SRC, header  # noqa: E402

SEED = 20240612


def write_dumps(folder, n_samples, per_sample, compress, seed=SEED):
    """One sorted dump per sample and a list file naming them; returns the list file and the counts."""
    rng = np.random.default_rng(seed)
    core = int(per_sample * 0.75)
    pool = rng.integers(0, 4, size=(core + 2 * (per_sample - core), 31), dtype=np.uint8)
    text = np.frombuffer(b"ACGT", np.uint8)[pool].view("S31").ravel()
    lines, total = [], 0
    for s in range(n_samples):
        pick = np.concatenate([np.arange(core), core + rng.choice(len(text) - core, per_sample - core, replace=False)])
        kmers = np.sort(text[pick])
        counts = rng.geometric(0.6, size=kmers.size)
        body = b"".join(k + b"\t" + str(c).encode() + b"\n" for k, c in zip(kmers.tolist(), counts.tolist()))
        name = f"sample_{s:03d}.txt" + (".gz" if compress else "")
        (Path(folder) / name).write_bytes(gzip.compress(body, compresslevel=1) if compress else body)
        lines.append(f"sample_{s:03d}\t{name}\n")
        total += kmers.size
    listed = Path(folder) / "samples.txt"
    listed.write_text("".join(lines))
    return listed, total


def pandas_merge(listed):
    """The peer: read every dump with pandas and join them on the k-mer (outer), zeros for NaN."""
    import pandas as pd

    entries = [line.split("\t") for line in listed.read_text().splitlines()]
    frames = [pd.read_csv(listed.parent / path, sep="\t", header=None, names=["kmer", sample], index_col=0)
              for sample, path in entries]
    return pd.concat(frames, axis=1, join="outer").fillna(0).sort_index().T


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 samples x 20,000 k-mers")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    load = os.getloadavg()


    sys.path.insert(0, str(SRC))
    from run import measure

    from genosift.io import convert_dumps, read_dumps

    n_samples, per_sample = (10, 20_000) if args.quick else (50, 200_000)
    budget = (1 if args.quick else 16) << 20  # below the counts' in-memory size, so they spill
    rows = []
    with tempfile.TemporaryDirectory(prefix="genosift-bench-dumps-") as folder:
        store = Path(folder) / "out.gs.h5ad"
        for compress in (False, True):
            sub = Path(folder) / ("gzip" if compress else "plain")
            sub.mkdir()
            start = time.perf_counter()
            listed, total = write_dumps(sub, n_samples, per_sample, compress)
            size = sum(p.stat().st_size for p in sub.iterdir()) / 1e6
            print(f"generated {n_samples} dumps x {per_sample:,} k-mers ({total:,} counts, {size:.0f} MB, "
                  f"{'gzip' if compress else 'plain'}) in {time.perf_counter() - start:.1f} s", file=sys.stderr)
            runs = [
                ("genosift `read_dumps` (CSR in memory)", lambda listed=listed: read_dumps(listed)),
                ("genosift `convert_dumps`, in memory",
                 lambda listed=listed: convert_dumps(listed, store, overwrite=True)),
                (f"genosift `convert_dumps`, spilled ({budget >> 20} MiB budget)",
                 lambda listed=listed: convert_dumps(listed, store, overwrite=True, chunk_bytes=budget)),
                ("pandas: read_csv per file + outer concat (dense)", lambda listed=listed: pandas_merge(listed)),
            ]
            ours = read_dumps(listed)
            peer = pandas_merge(listed)
            assert ours.feature_names.tolist() == peer.columns.tolist(), "k-mer columns differ from pandas"
            assert np.array_equal(ours.X.toarray(), peer.to_numpy()), "counts differ from pandas"
            n_cols = ours.shape[1]
            del ours, peer
            for what, func in runs:
                timing, _ = measure(func, args.repeats)
                print(f"  {what}: {timing.best:.2f} s, peak {timing.peak_mb:.0f} MB", file=sys.stderr)
                rows.append(("gzip (level 1)" if compress else "plain", size, what, total, timing))

    out = header("Per-sample k-mer dumps to matrix and to store: counts per second and peak memory",
                 libraries=("pandas",), load=load)
    out.append(f"{n_samples} samples x {per_sample:,} k-mers each ({total:,} counts, "
               f"{n_cols:,} distinct 31-mers: 75 % core, 25 % accessory), KMC-style sorted dumps named in a "
               f"list file. Best of {args.repeats} after one untimed call; peak = resident memory above the "
               "RSS before the call (see run.py). The pandas result is checked equal to genosift's.\n")
    out.append("| dumps | MB | what | counts | seconds | M counts/s | peak MB | x pandas (time) |")
    out.append("|---|---:|---|---:|---:|---:|---:|---:|")
    peers = {kind: t.best for kind, _, what, _, t in rows if what.startswith("pandas")}
    for kind, size, what, count, t in rows:
        out.append(f"| {kind} | {size:.0f} | {what} | {count:,} | {t.best:.2f} | {count / t.best / 1e6:.1f} | "
                   f"{t.peak_mb:.0f} | {peers[kind] / t.best:.1f} |")
    text = "\n".join(out) + "\n"
    print(text)
    if not args.quick:
        (RESULTS / "RESULTS-dumps.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
