#!/usr/bin/env python
"""Association with population structure: SEER against genosift, whole command against whole command.

    python benchmarks/bench_association.py                  # 60 and 120 genomes, and 120 with a longer core
    python benchmarks/bench_association.py --sizes 60 --large ""   # one size (a quick look)

Writes ``benchmarks/RESULTS-association.md`` (with the command that made it) and prints it.

Data: ``genosift.simulate_clonal_population`` (seeded): 4 lineages, a 20 kb core genome with 400
substitutions per lineage branch and 20 per genome, 6 lineage genes per lineage, 20 random genes
and one causal gene of 1 kb each; the phenotype raised by the causal gene and by lineage 0. The
k-mers (16 to 100 bases, in at least 2 genomes) are counted by ``fsm-lite`` and gzipped; both tools
read that one file. About 134,000 k-mers for 120 genomes. ``--large`` adds populations with a
longer core genome (``GENOMES:CORE_BASES``; default 120 genomes with a 60 kb core, about 227,000
k-mers, near the 185,000 of SEER's published timing, and with a 200 kb core, about 392,000),
timed without structure: there SEER alone takes up to minutes per run.

Runs, each a separate process on 2 threads, its wall time and peak memory (``ru_maxrss`` of that
child, from ``os.wait4``) recorded:

- SEER: ``seer -k kmers.gz -p pheno --pval 1 --chisq 1 --threads 2`` (its default ``--maf 0.01``);
  with structure, ``kmds -k kmers.gz -p pheno --pc K --no_filtering -o structure`` and then the
  same with ``--struct structure.dsm`` (kmds's time is counted with it);
- genosift: ``genosift score kmers.gz --meta phenotype.tsv --id sample --target phenotype --binary
  --min-af 0.01 --threads 2 --method logistic``; with structure, ``--structure K`` where the CLI has
  it, else ``principal_coordinates`` on the same k-mers (its time counted) and ``--covariates``;
- the structure step alone on each side: ``kmds`` and ``principal_coordinates`` (file to table);
- where ``logistic`` is not there yet, the methods that are: ``chi2`` (the same test as SEER's
  chi-square pre-filter) and ``regression`` (a linear model; with structure through the Python
  API when the CLI has no covariates yet), labelled as such.

Agreement: the largest relative difference between genosift's p-values and SEER's printed ones
(4 significant digits), and how many differ by more than half a printed step, over the k-mers
that SEER prints (logistic against SEER's ``lrt_p_val``, chi2 against its ``chisq_p_val``).
"""
from __future__ import annotations

import argparse
import gzip
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20251125
K = 3
GENOMES = dict(n_lineages=4, core_length=20_000, lineage_snps=400, private_snps=20, genes_per_lineage=6,
               n_random_genes=20, gene_length=1000)
HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


#: Each command runs this many times; the fastest run is kept (``--repeat``).
REPEAT = [3]


def timed(command, out=None):
    """Run ``command`` ``REPEAT`` times; ``(wall seconds, peak RSS in MiB)`` of its fastest run,
    stdout to ``out``."""
    return min(_timed_once(command, out) for _ in range(REPEAT[0]))


def _timed_once(command, out=None):
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    sink = open(out, "w") if out else subprocess.DEVNULL  # noqa: SIM115  (closed below)
    start = time.perf_counter()
    proc = subprocess.Popen([str(c) for c in command], stdout=sink, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    if out:
        sink.close()
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, command))} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def population(folder, n, core_length=GENOMES["core_length"]):
    """Genomes, fsm-lite's k-mers (gzipped), SEER's .pheno and genosift's metadata table."""
    from genosift import simulate_clonal_population

    pop = simulate_clonal_population(folder / "genomes", n_genomes=n, seed=SEED,
                                     **{**GENOMES, "core_length": core_length})
    start = time.perf_counter()
    run = subprocess.run(["fsm-lite", "-l", str(pop.file_list), "-t", str(folder / "index"), "-s", "2",
                          "-m", "16", "-M", "100"], capture_output=True, check=True)
    counting = time.perf_counter() - start
    kmers = folder / "kmers.gz"
    kmers.write_bytes(gzip.compress(run.stdout, compresslevel=1))
    pheno = folder / "seer.pheno"
    pheno.write_text("".join(f"{s}\t{s}\t{v}\n" for s, v in pop.table["phenotype"].items()))
    return pop, kmers, pheno, run.stdout.count(b"\n"), counting


def cli_has(option):
    text = subprocess.run([sys.executable, "-m", "genosift", "score", "--help"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(SRC))).stdout
    return option in text


def has_method(name):
    import genosift as gs

    return name in gs.REGISTRY


def seer_runs(folder, kmers, pheno, structure=True):
    rows = {}
    rows["SEER"] = timed(["seer", "-k", kmers, "-p", pheno, "--pval", "1", "--chisq", "1", "--threads", "2"],
                         folder / "seer.txt")
    if not structure:
        return rows
    kmds = timed(["kmds", "-k", kmers, "-p", pheno, "--pc", K, "--no_filtering", "-o", folder / "structure"])
    seer = timed(["seer", "-k", kmers, "-p", pheno, "--pval", "1", "--chisq", "1", "--threads", "2",
                  "--struct", folder / "structure.dsm"], folder / "seer-struct.txt")
    rows[f"SEER + kmds --pc {K}"] = (kmds[0] + seer[0], max(kmds[1], seer[1]))
    rows[f"kmds --pc {K} alone"] = kmds
    return rows


_PCS = ("import sys, genosift as gs, pandas as pd\n"
        "ids = pd.read_csv(sys.argv[2], sep='\\t', index_col=0).index.tolist()\n"
        "pcs = gs.principal_coordinates(sys.argv[1], int(sys.argv[3]), samples=ids)\n"
        "pcs.to_csv(sys.argv[4], sep='\\t')\n")

_ADJUSTED = ("import sys, numpy as np, pandas as pd, genosift as gs\n"
             "from genosift.scores import make_target\n"
             "ds = gs.io.read(sys.argv[1])\n"
             "y = pd.read_csv(sys.argv[2], sep='\\t', index_col=0).loc[ds.sample_ids, 'phenotype'].to_numpy()\n"
             "pcs = gs.principal_coordinates(ds, int(sys.argv[3]))\n"
             "X = gs.presence(ds.X).tocsc()\n"
             "keep = np.flatnonzero(np.asarray(X.sum(axis=0)).ravel() >= 0.01 * len(y))\n"
             "spec = gs.get_method(sys.argv[4])\n"
             "target = make_target(spec, y, len(y), pcs.to_numpy())\n"
             "parts = [spec.func(X[:, keep[j:j + 4096]].toarray(), target) for j in range(0, keep.size, 4096)]\n"
             "table = {'feature': ds.feature_names[keep], 'pvalue': np.concatenate([r.pvalues for r in parts])}\n"
             "if parts and 'firth' in (parts[0].columns or {}):\n"
             "    table['firth'] = np.concatenate([r.columns['firth'] for r in parts])\n"
             "pd.DataFrame(table).to_csv(sys.argv[5], sep='\\t', index=False)\n")


def genosift_runs(folder, kmers, meta, structure=True):
    base = [sys.executable, "-m", "genosift", "score", kmers, "--meta", meta, "--id", "sample", "--target",
            "phenotype", "--binary", "--min-af", "0.01", "--threads", "2", "--quiet", "--force"]
    rows, outputs = {}, {}
    if structure:
        rows[f"genosift principal_coordinates K={K} alone (Python, file to table)"] = timed(
            [sys.executable, "-c", _PCS, kmers, meta, K, folder / "pcs.tsv"])
    methods = ["logistic"] if has_method("logistic") else ["chi2", "regression"]
    for method in methods:
        out = folder / f"gs-{method}.tsv"
        rows[f"genosift {method}"] = timed([*base, "--method", method, "-o", out])
        outputs[method] = out
        label = f"genosift {method} + structure K={K}"
        out = folder / f"gs-{method}-struct.tsv"
        if method == "chi2" or not structure:
            continue  # a marginal test: no covariates; or a size timed without structure
        if cli_has("--structure"):
            rows[label] = timed([*base, "--method", method, "--structure", K, "-o", out])
        elif cli_has("--covariates"):
            pcs = timed([sys.executable, "-c", _PCS, kmers, meta, K, folder / "pcs.tsv"])
            score = timed([*base, "--method", method, "--covariates", folder / "pcs.tsv", "-o", out])
            rows[label + " (principal_coordinates, then --covariates)"] = (pcs[0] + score[0], max(pcs[1], score[1]))
        else:
            rows[label + " (Python API: the CLI has no covariates yet)"] = timed(
                [sys.executable, "-c", _ADJUSTED, kmers, meta, K, method, out])
        outputs[f"{method}-struct"] = out
    return rows, outputs


def printed_agreement(ours, seer, floor=0.0):
    """Largest relative difference, and the number beyond half of SEER's printed step, over the
    k-mers whose printed p-value is at least ``floor``."""
    both = seer.index.intersection(ours.index)
    a, b = ours.loc[both].to_numpy(float), seer.loc[both].to_numpy(float)
    keep = (b > 0) & (b >= floor) & np.isfinite(a)
    a, b = a[keep], b[keep]
    rel = np.abs(a - b) / b
    step = 10.0 ** (np.floor(np.log10(b)) - 3)
    return len(b), float(rel.max()) if len(b) else math.nan, int(np.sum(np.abs(a - b) > 0.5 * step * (1 + 1e-9)))


def seer_table(path):
    frame = pd.read_csv(path, sep="\t", usecols=lambda c: c in ("sequence", "chisq_p_val", "lrt_p_val", "comments"))
    return frame.set_index("sequence")


def agreement(folder, outputs):
    lines = []
    pairs = [("chi2", "seer.txt", "chisq_p_val"), ("logistic", "seer.txt", "lrt_p_val"),
             ("logistic-struct", "seer-struct.txt", "lrt_p_val")]
    for key, seer_file, column in pairs:
        if key not in outputs:
            continue
        frame = pd.read_csv(outputs[key], sep="\t").set_index("feature")
        ours = frame["pvalue"]
        seer = seer_table(folder / seer_file)
        subsets = [(0.0, "all", seer.index), (1e-4, "printed p >= 0.0001", seer.index)]
        if "firth" in frame.columns and "comments" in seer.columns:
            plain = seer.index[seer["comments"].isna()].intersection(frame.index[frame["firth"] == 0])
            subsets += [(0.0, "ordinary fits in both: no SEER comment, no Firth penalty", plain),
                        (1e-4, "ordinary fits in both, printed p >= 0.0001", plain)]
        for floor, where, rows in subsets:
            n, rel, off = printed_agreement(ours, seer.loc[rows, column], floor)
            lines.append(f"- genosift `{key}` p-values against SEER's `{column}` ({seer_file}, {where}): {n:,} "
                         f"k-mers, largest relative difference {rel:.2e}, {off:,} beyond half a printed step")
    return lines


def one_size(n, folder, core_length=GENOMES["core_length"], structure=True):
    pop, kmers, pheno, n_kmers, counting = population(folder, n, core_length)
    meta = pop.phenotype
    rows = seer_runs(folder, kmers, pheno, structure)
    more, outputs = genosift_runs(folder, kmers, meta, structure)
    rows.update(more)
    tested = len(pd.read_csv(folder / "seer.txt", sep="\t", usecols=[0]))
    pairs = [("SEER", "genosift logistic"), (f"SEER + kmds --pc {K}", f"genosift logistic + structure K={K}")]
    ratios = [f"{theirs} / {ours}: {rows[theirs][0] / rows[ours][0]:.1f}x" for theirs, ours in pairs
              if theirs in rows and ours in rows]
    table = [f"| {n} | {core_length // 1000} | {n_kmers:,} | {tested:,} | {name} | {wall:.2f} | {rss:.0f} | "
             f"{1e6 * wall / tested:.0f} |" for name, (wall, rss) in rows.items()]
    notes = [f"- n = {n}, {core_length // 1000} kb core: fsm-lite counted {n_kmers:,} k-mers in {counting:.1f} s; "
             f"SEER tested {tested:,} "
             f"(maf >= 0.01); whole command against whole command, " + "; ".join(ratios)] + agreement(folder, outputs)
    return table, notes


def machine():
    sys.path.insert(0, str(HERE))
    from run import machine_line

    return machine_line()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="60,120", help="numbers of genomes, comma-separated")
    parser.add_argument("--large", default="120:60000,120:200000",
                        help="GENOMES:CORE_BASES populations with a longer core genome, comma-separated, timed "
                             "without structure ('' for none)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the fastest is kept")
    parser.add_argument("--output", default=str(HERE / "RESULTS-association.md"))
    args = parser.parse_args(argv)
    REPEAT[0] = args.repeat
    for tool in ("seer", "kmds", "fsm-lite"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install seer fsm-lite)")
    table, notes = [], []
    plans = [(int(s), GENOMES["core_length"], True) for s in args.sizes.split(",") if s]
    plans += [(int(s.split(":")[0]), int(s.split(":")[1]), False) for s in args.large.split(",") if s]
    for n, core_length, structure in plans:
        with tempfile.TemporaryDirectory() as tmp:
            rows, more = one_size(n, Path(tmp), core_length, structure)
        table += rows
        notes += more
    command = "python benchmarks/bench_association.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = "\n".join([
        "# Association with population structure: SEER against genosift", "",
        f"Command: `{command.strip()}`  ", f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  ",
        f"Machine: {machine()}", "",
        "Each row is one whole command (or two, summed, where structure is computed first), run as its own "
        f"process on 2 threads, the fastest of {args.repeat} runs: wall time and peak resident memory of that "
        "process. Per k-mer: wall time over the k-mers SEER tested.", "",
        "| genomes | core kb | k-mers | tested | command | wall s | peak MiB | us per k-mer |",
        "|---:|---:|---:|---:|---|---:|---:|---:|", *table, "", "## Agreement and notes", "", *notes,
        "- SEER prints chi-square p-values below about 1e-4 up to a few percent away from the exact value "
        "(see `test_chi_square_on_all_of_seers_phenotypes_is_exact` in `tests/test_real_tools.py`), and its "
        "likelihood-ratio p-values likewise; hence the lines over the printed p-values of at least 1e-4. SEER "
        "comments the k-mers it fits otherwise (bad-chisq, firth, ...), genosift flags those it fits with Firth's "
        "penalty: the ordinary fits of both are the ones comparable to the last digit.", ""])
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
