#!/usr/bin/env python
"""Benchmark of testing each distinct pattern once: the per-feature regressions on k-mers, with
each distinct column fitted once and its result shared by its copies, against fitting every
k-mer.

    python benchmarks/cases/bench_patterns_once.py          # writes benchmarks/results/RESULTS-patterns-once.md

Data: simulated clonal populations (``gs.simulate_clonal_population``) counted by fsm-lite
(``-s 2 -m 16 -M 31``): the README's walk-through (48 genomes, seed 0) and a larger one (200
genomes of 8 lineages, a 20 kb core, seed 1), read as presence/absence. Each method is run warm,
best of 3, in this process, on the matrix in memory (every distinct column fitted once) and on
the same columns with the method's ``distinct`` flag turned off (every column fitted); the
results are checked to be the same bits. 3 principal coordinates are the covariates. From a
store (``score_store``, by feature blocks): each distinct column fitted once over all blocks,
against once per block (the blocks' duplicates of one another fitted again).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402

POPULATIONS = {
    "walk-through (48 genomes)": dict(n_genomes=48, seed=0),
    "200 genomes, 8 lineages": dict(n_genomes=200, n_lineages=8, core_length=20000, lineage_snps=300,
                                    genes_per_lineage=5, n_random_genes=20, seed=1),
}


def best(func, repeats=3):
    out, seconds = None, float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = func()
        seconds = min(seconds, time.perf_counter() - t)
    return out, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    load = os.getloadavg()
    if shutil.which("fsm-lite") is None:
        sys.exit("fsm-lite is needed: apt-get install fsm-lite")
    sys.path.insert(0, str(SRC))
    import numpy as np

    import genosift as gs
    import genosift.scoring.store as store_driver
    from genosift.io import Dataset, write_store
    from genosift.scores import REGISTRY
    from genosift.scores import _prepare as prepare

    rows, store_rows = [], []
    for label, settings in POPULATIONS.items():
        with tempfile.TemporaryDirectory() as tmp:
            pop = gs.simulate_clonal_population(Path(tmp) / "g", **settings)
            out = subprocess.run(["fsm-lite", "-l", str(pop.file_list), "-t", str(Path(tmp) / "idx"), "-s", "2",
                                  "-m", "16", "-M", "31"], check=True, capture_output=True, text=True).stdout
            (Path(tmp) / "k.txt").write_text(out)
            ds = gs.io.read(Path(tmp) / "k.txt")
            X = gs.presence(ds.X)
            y = pop.table.loc[ds.sample_ids, "phenotype"].to_numpy()
            pcs = gs.principal_coordinates(ds, 3)
            path = write_store(Dataset(X.astype(np.uint8), ds.sample_ids, ds.feature_names), Path(tmp) / "k.gs.h5ad")
            for method in ("logistic", "regression"):
                timed = {}
                for once in (False, True):
                    store_driver.score_blocks = (lambda *a, once_=once, **k:
                                                 prepare.score_blocks(*a, **{**k, "once": once_}))
                    try:
                        timed[once] = best(lambda: store_driver.score_store(path, y, method=method,
                                                                            covariates=pcs.to_numpy()))
                    finally:
                        store_driver.score_blocks = prepare.score_blocks
                (a, t_block), (b, t_all) = timed[False], timed[True]
                assert np.array_equal(a.pvalues, b.pvalues, equal_nan=True)
                store_rows.append((label, X.shape[1], method, t_block, t_all))
                print(store_rows[-1], flush=True)
        patterns = gs.count_patterns(X).n_patterns
        for method in ("logistic", "regression"):
            spec = REGISTRY[method]
            once, t_once = best(lambda: gs.score(X, y, method=method, covariates=pcs))
            REGISTRY[method] = dataclasses.replace(spec, distinct=False)
            try:
                every, t_every = best(lambda: gs.score(X, y, method=method, covariates=pcs))
            finally:
                REGISTRY[method] = spec
            same = all(np.array_equal(a, b, equal_nan=True) for a, b in
                       ((once.pvalues, every.pvalues), (once.scores, every.scores), (once.statistic, every.statistic)))
            assert same, f"{method} on {label}: the results differ"
            rows.append((label, X.shape[1], patterns, method, t_every, t_once))
            print(rows[-1], flush=True)
    lines = [*header("Each distinct pattern tested once", load=load),
             "`gs.score(presence, y, method, covariates=3 "
             "principal coordinates)` on k-mers counted by fsm-lite in simulated populations, warm, best of 3: every "
             "k-mer fitted, against each distinct column fitted once and its result shared by its copies (the same "
             "bits, checked).", "",
             "| population | k-mers | distinct patterns | method | every k-mer (s) | each pattern once (s) "
             "| speed-up |",
             "|---|---:|---:|---|---:|---:|---:|"]
    lines += [f"| {label} | {p:,} | {n:,} | {method} | {every:.3f} | {once:.3f} | {every / once:.1f}x |"
              for label, p, n, method, every, once in rows]
    lines += ["", "From a store of the same presence/absence (`score_store`, feature blocks of its column copy), warm, "
              "best of 3:", "",
              "| population | k-mers | method | each distinct column once per block (s) | once in all (s) | speed-up |",
              "|---|---:|---|---:|---:|---:|"]
    lines += [f"| {label} | {p:,} | {method} | {block:.3f} | {once:.3f} | {block / once:.2f}x |"
              for label, p, method, block, once in store_rows]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.output) if args.output else RESULTS / "RESULTS-patterns-once.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
