#!/usr/bin/env python
"""The first run of the README's commands in a fresh install, beside their warm runs.

    python benchmarks/cases/bench_cold_start.py            # writes benchmarks/results/RESULTS-cold-start.md
    python benchmarks/cases/bench_cold_start.py --output -  # printed only

A copy of the repository's files is installed as the README's quick start does (a new venv,
``pip install .``: the build compiles the README's kernels into the package, see
``tools/genosift_build.py``), then the README's commands run in that venv, each sequence in a
fresh folder: the demo, the walk-through from k-mers to predictions (its k-mers counted by
fsm-lite once, beforehand; skipped if fsm-lite is absent), the user guide's synthetic k-mer run, and two
Python calls. Every command is a whole process, timed from start to exit. Three passes:

- *compiled on first use*: numba's cache pointed at an empty folder (``NUMBA_CACHE_DIR``), so
  every kernel is compiled on its first call, as before the build compiled them; the passes share
  that folder, so a kernel compiled by one command is cached for the next, as a user's would be;
- *first run*: the fresh install as it is, the first time each command runs;
- *warm*: the same commands again (best of two passes).

The target: a first run within twice its warm run and at most 2 s more.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, ROOT, header  # noqa: E402

GOLUB_LOGISTIC = ("import numpy as np, genosift as gs; rng = np.random.default_rng(0); "
                  "X = rng.normal(size=(40, 30)); y = np.repeat([0, 1], 20); gs.score(X, y, method='logistic')")
GOLUB_FISHER = ("import genosift as gs; X, y, names = gs.load_golub(); "
                "gs.score(X, y, method='fisher', feature_names=names)")

WALKTHROUGH = [
    "genosift convert kmers.txt --meta meta.tsv --id sample -o kmers.gs.h5ad",
    "genosift score kmers.gs.h5ad --target phenotype --binary --method logistic --structure 3 --min-af 0.05 "
    "--top 50 -o ranking.tsv",
    "genosift evaluate kmers.gs.h5ad --target phenotype --binary --method chi2 --k 10,100,1000 --model logistic "
    "--model-option C=0.1,1,10 --cv 5 --seed 0 -o results",
    "genosift report results -o report.html",
    "genosift predict results/model.skops kmers.gs.h5ad --fill-missing -o predictions.tsv",
]
TOY = [
    "genosift convert toy.kmers.gz --meta toy.pheno.csv --id sample -o toy.gs.h5ad",
    "genosift score toy.gs.h5ad --target phenotype --method welch --fdr 0.05 --chunk-bytes 64M --threads 2 "
    "-o ranking-toy.tsv",
    "genosift select toy.gs.h5ad --target phenotype --method auc --top 10 --chunk-bytes 64M -o markers.parquet",
]


def install(folder):
    """The repository's tracked files (as they are in the working tree) copied and installed by
    the README's install line; returns the venv's bin folder and the install's seconds."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True)
    repo = folder / "genosift"
    for name in files.stdout.split():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NUMBA_CACHE_DIR")}
    start = time.perf_counter()
    subprocess.run(["bash", "-c", "python3 -m venv .venv && .venv/bin/pip install -q ."], cwd=repo, env=env,
                   check=True, capture_output=True)
    return repo / ".venv" / "bin", time.perf_counter() - start, env


def prepare(inputs, bin_dir, env):
    """The inputs of the commands, made once: the walk-through's k-mers and metadata, the toy file."""
    inputs.mkdir()
    python = str(bin_dir / "python")
    script = ("import genosift as gs\n"
              "gs.simulate_clonal_population('genomes', n_genomes=48, seed=0)\n"
              "from genosift.io.datasets import write_synthetic_kmers\n"
              "pheno, _ = write_synthetic_kmers('toy.kmers.gz', n_samples=200, n_kmers=200_000, compress=True)\n"
              "pheno.to_csv('toy.pheno.csv')\n")
    subprocess.run([python, "-c", script], cwd=inputs, env=env, check=True, capture_output=True)
    lines = (inputs / "genomes" / "phenotype.tsv").read_text().splitlines()
    meta = [line if i <= 41 else "\t".join(line.split("\t")[:3] + [""]) for i, line in enumerate(lines)]
    (inputs / "meta.tsv").write_text("\n".join(meta) + "\n")
    if shutil.which("fsm-lite") is None:
        return False
    with open(inputs / "kmers.txt", "w") as out:
        subprocess.run(["fsm-lite", "-l", "genomes/genomes.txt", "-t", "fsm_index", "-s", "2", "-m", "16", "-M",
                        "31"], cwd=inputs, stdout=out, stderr=subprocess.DEVNULL, check=True)
    return True


def commands(with_walkthrough):
    runs = [("genosift demo", "genosift demo -o demo")]
    runs += [(c, c) for c in (WALKTHROUGH if with_walkthrough else [])]
    runs += [(c, c) for c in TOY]
    runs += [("`gs.score(X, y, method=\"logistic\")`, 40 x 30", f'python -c "{GOLUB_LOGISTIC}"'),
             ("`gs.score(golub, method=\"fisher\")`", f'python -c "{GOLUB_FISHER}"')]
    return runs


def one_pass(runs, inputs, folder, env):
    """Every command once, in order, in a fresh folder holding the inputs; seconds per command."""
    shutil.copytree(inputs, folder)
    seconds = []
    for _, line in runs:
        start = time.perf_counter()
        run = subprocess.run(["bash", "-c", line], cwd=folder, env=env, capture_output=True, text=True)
        seconds.append(time.perf_counter() - start)
        if run.returncode:
            raise SystemExit(f"{line} failed:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=str(RESULTS / "RESULTS-cold-start.md"), help="results file, or - to print")
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="genosift-cold-") as tmp:
        tmp = Path(tmp)
        bin_dir, install_seconds, env = install(tmp)
        env = dict(env, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        walkthrough = prepare(tmp / "inputs", bin_dir, env)
        runs = commands(walkthrough)
        before = one_pass(runs, tmp / "inputs", tmp / "before", dict(env, NUMBA_CACHE_DIR=str(tmp / "empty-cache")))
        first = one_pass(runs, tmp / "inputs", tmp / "first", env)
        warm = [min(pair) for pair in zip(*(one_pass(runs, tmp / "inputs", tmp / f"warm{i}", env) for i in (1, 2)))]
        installed = subprocess.run([str(bin_dir / "python"), "-c", "import numba, numpy, sys; print("
                                    "f'python {sys.version.split()[0]}\\nnumba {numba.__version__}\\nnumpy "
                                    "{numpy.__version__}')"], capture_output=True, text=True, env=env).stdout
        installed = installed.split("\n")
        versions = [tuple(line.split(" ", 1)) for line in installed if line]  # the new venv's, not this process's
    rows = []
    for (name, _), b, f, w in zip(runs, before, first, warm):
        ok = f <= 2 * w and f <= w + 2
        rows.append(f"| {name} | {b:.2f} | {f:.2f} | {w:.2f} | {f / w:.2f}x | {f - w:+.2f} | {'yes' if ok else 'no'} |")
    text = "\n".join([
        *header("The first run of the README's commands, cold and warm", libraries=versions, load=load),
        f"`python3 -m venv .venv && .venv/bin/pip install .` on a copy of the repository: {install_seconds:.0f} s "
        "(the build compiles the README's kernels into the package; the packages come from pip's cache). "
        "Then each command as a whole process, seconds from start to exit; *compiled on first use* is the "
        "same install with numba's cache in an empty folder, as every first run was before the build "
        "compiled the kernels." + ("" if walkthrough else " fsm-lite is absent: the walk-through's commands "
                                                           "were not run."),
        "",
        "| command | compiled on first use | first run | warm | first / warm | first - warm (s) | "
        "within 2x warm and 2 s |",
        "|---|---:|---:|---:|---:|---:|:---:|",
        *rows,
        "",
    ])
    if args.output == "-":
        print(text)
    else:
        Path(args.output).write_text(text)
        print(text)
        print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
