#!/usr/bin/env python
"""Benchmark of the score job's pass over a store: scoring and profiling in one pass or in two.

    python benchmarks/cases/bench_score_job.py            # 600 samples x 1,000,000 k-mers, 8 % dense
    python benchmarks/cases/bench_score_job.py --quick    # 300 x 100,000 (printed only)

A full run writes ``benchmarks/results/RESULTS-score-job.md`` and prints it.

``genosift score`` ranks every feature and writes, beside each score, the class profile of the
feature (per-class means and prevalence, the direction of the effect). Both come from the store:
the profile either rides along the scoring pass (``Source.score_and_profile``, what the job does)
or reads the store again after it (``Source.score`` then ``Source.profile(on_disk=True)``, what
the job did before). Each is timed here in the same process on the same store, warm (file in the
page cache, kernels compiled), best of ``--repeats``; each variant's peak resident memory is that
of a child process running it once after loading the kernels on a tiny store. The whole job
(``gs.jobs.score``: read the labels, score, profile, write the ranking table) is timed too.

Data: a seeded synthetic k-mer count matrix (``genosift.io.datasets.write_synthetic_kmers``: each
sample holds each k-mer with probability ``--density``, geometric counts, planted markers, a
binary phenotype), converted once with ``genosift.io.convert_kmers`` (CSR plus the column copy);
a dense store of the same counts is written for the dense rows.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402

METHODS = ("fisher", "chi2", "auc", "variance")
NOTES = (
    "The profile rides along the scoring pass where that pass reads the store as the profile's own "
    "would: the feature blocks of a sparse store's column copy (fisher, variance: class moments by "
    "feature blocks; chi2, auc: whole-column methods), and the row chunks of a dense store (fisher, "
    "variance). Where a method reads a dense store's feature blocks (chi2, auc) the profile still takes a "
    "pass of its own over the rows, faster than riding along, so both variants do the same work there: "
    "those rows show the noise of the measure. On the row chunks of a dense store the "
    "profile's per-class sums are held beside the scoring's statistics, which raises that pass's peak "
    "(16 bytes per feature and class, plus a chunk's own sums while they are merged).")


def make_stores(folder, n, p, density, seed=20261127):
    """The k-mer file, its sparse store (with the column copy) and a dense store of the same counts."""
    import numpy as np

    from genosift.io import Dataset, convert_kmers, open_store, write_store
    from genosift.io.datasets import write_synthetic_kmers

    folder = Path(folder)
    phenotype, _ = write_synthetic_kmers(folder / "k.txt", n_samples=n, n_kmers=p, density=density, seed=seed)
    meta = phenotype.rename("phenotype").to_frame()
    meta.index = meta.index.astype(str)
    sparse, _ = convert_kmers([folder / "k.txt"], folder / "sparse.gs.h5ad", metadata=meta, dtype="auto")
    data = open_store(sparse).to_dataset()
    dense = write_store(Dataset(np.asarray(data.X.toarray(), dtype=np.uint8), data.sample_ids, data.feature_names,
                                data.obs), folder / "dense.gs.h5ad")
    (folder / "k.txt").unlink()
    return {"sparse": Path(sparse), "dense": Path(dense)}


def run_variant(path, method, variant, folder):
    """One run of ``variant`` ("one pass", "two passes", "job") of ``method`` on the store ``path``."""
    import genosift as gs
    from genosift.io import open_store
    from genosift.jobs import Samples
    from genosift.scoring.forms import profile_source, score_and_profile, score_source
    from genosift.scoring.profiles import kind_for
    from genosift.sources import StoreRows

    if variant == "job":
        gs.jobs.score(Samples(path, target="phenotype"), Path(folder) / f"{method}.tsv", method=method, top=100,
                      force=True)
        return
    store = open_store(path)
    y = store.obs["phenotype"].to_numpy()
    spec = gs.get_method(method)
    kind = kind_for(method, y)
    data = StoreRows(store).source(y)
    if variant == "one pass":
        res, prof = score_and_profile(data, spec, spec.options, kind=kind, folder=folder)
    else:
        res = score_source(data, spec, spec.options)
        alone = StoreRows(store).source(None if kind == "none" else y)
        prof = profile_source(alone, "auto" if kind == "none" else kind, on_disk=True, folder=folder, ranks=res.ranks)
    getattr(prof, "close", lambda: None)()


def child(args):
    """Load the kernels on a tiny store, then run the variant once and print the peak RSS (MiB)."""
    with tempfile.TemporaryDirectory() as tmp:
        tiny = make_stores(tmp, 40, 300, 0.2)
        for kind in ("sparse", "dense"):
            for variant in ("one pass", "two passes", "job"):
                run_variant(tiny[kind], args.method, variant, tmp)
        run_variant(args.path, args.method, args.variant, tmp)
        print(json.dumps({"peak": _vm_hwm()}))


def _vm_hwm():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--method", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    n, p, density = (300, 100_000, 0.08) if args.quick else (600, 1_000_000, 0.08)
    started = datetime.datetime.now().astimezone()
    load = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        stores = make_stores(tmp, n, p, density)
        made = time.perf_counter() - t0
        for kind, path in stores.items():
            for method in METHODS:
                for variant in ("one pass", "two passes", "job"):
                    run_variant(path, method, variant, tmp)  # warm: page cache, kernels, names
                times = {}
                for variant in ("one pass", "two passes", "job"):
                    best = float("inf")
                    for _ in range(args.repeats):
                        t = time.perf_counter()
                        run_variant(path, method, variant, tmp)
                        best = min(best, time.perf_counter() - t)
                    times[variant] = best
                peaks = {}
                for variant in ("one pass", "two passes"):
                    out = subprocess.run([sys.executable, __file__, "--child", "--path", str(path), "--method", method,
                                          "--variant", variant], capture_output=True, text=True, check=True,
                                         env={**os.environ, "PYTHONPATH": str(SRC)})
                    peaks[variant] = json.loads(out.stdout.strip().splitlines()[-1])["peak"]
                rows.append((kind, method, times, peaks))
                print(kind, method, {k: round(v, 3) for k, v in times.items()}, peaks, flush=True)
    lines = [*header("The score job: scoring and profiling a store in one pass or in two", load=load,
                     started=started),
             f"Data: {n:,} samples x {p:,} k-mers, each held with probability {density} (synthetic k-mer counts "
             f"with planted markers, binary phenotype), made in {made:.1f} s: a sparse store (CSR and its column "
             "copy, as `genosift convert` writes k-mers) and a dense store of the same counts.", "",
             "Times: warm (store in the page cache, kernels compiled), best of "
             f"{args.repeats}. One pass: `Source.score_and_profile` (the profile rides along the scoring pass); "
             "two passes: `Source.score`, then `Source.profile(on_disk=True)` reading the store again; job: "
             "`gs.jobs.score` with the profile in one pass and the ranking table written (TSV). Peak: the child "
             "process's peak resident memory (VmHWM), imports and warm-up on a tiny store included.", "",
             "| store | method | one pass s | two passes s | two / one | job s | peak one pass MiB | "
             "peak two passes MiB |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for kind, method, times, peaks in rows:
        lines.append(f"| {kind} | {method} | {times['one pass']:.3f} | {times['two passes']:.3f} | "
                     f"{times['two passes'] / times['one pass']:.2f} | {times['job']:.3f} | {peaks['one pass']:.0f} | "
                     f"{peaks['two passes']:.0f} |")
    lines += ["", NOTES]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        Path(args.output or RESULTS / "RESULTS-score-job.md").write_text(text)


if __name__ == "__main__":
    sys.path.insert(0, str(SRC))
    main()
