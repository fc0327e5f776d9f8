#!/usr/bin/env python
"""Association with population structure: SEER against genosift, whole command against whole command.

    python benchmarks/cases/bench_association.py                  # 60 and 120 genomes, and 120 with a longer core
    python benchmarks/cases/bench_association.py --sizes 60 --large ""   # one size (a quick look)

Writes ``benchmarks/results/RESULTS-association.md`` (with the command that made it) and prints it.

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
  --min-af 0.01 --threads 2 --method logistic``; with structure, the same with ``--structure K``;
- the structure step alone on each side: ``kmds`` and ``principal_coordinates`` (file to table);
- the same covariates given to both: genosift's K principal coordinates as SEER's
  ``--covar_file`` (``--covar_list 2q,3q,...``) and as genosift's ``--covariates pcs.tsv``;
- the start-up of the libraries genosift is built on (numpy, scipy.sparse, scipy.special, pandas,
  numba and one compiled kernel loaded from numba's cache), a floor under any command of this
  stack: the notes set it against SEER's time / 20.

Agreement: the largest relative difference between genosift's p-values and SEER's printed ones
(4 significant digits), and how many differ by more than half a printed step, over the k-mers
that SEER prints (genosift's ``pvalue`` against SEER's ``lrt_p_val``).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, header  # noqa: E402

SEED = 20251125
K = 3
GENOMES = dict(n_lineages=4, core_length=20_000, lineage_snps=400, private_snps=20, genes_per_lineage=6,
               n_random_genes=20, gene_length=1000)
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


def seer_command(kmers, pheno, *more):
    """SEER's association command on 2 threads, every k-mer printed, then the options ``more``."""
    return ["seer", "-k", kmers, "-p", pheno, "--pval", "1", "--chisq", "1", "--threads", "2", *more]


def seer_runs(folder, kmers, pheno, structure=True):
    rows = {}
    rows["SEER"] = timed(seer_command(kmers, pheno), folder / "seer.txt")
    if not structure:
        return rows
    kmds = timed(["kmds", "-k", kmers, "-p", pheno, "--pc", K, "--no_filtering", "-o", folder / "structure"])
    seer = timed(seer_command(kmers, pheno, "--struct", folder / "structure.dsm"), folder / "seer-struct.txt")
    rows[f"SEER + kmds --pc {K}"] = (kmds[0] + seer[0], max(kmds[1], seer[1]))
    rows[f"kmds --pc {K} alone"] = kmds
    return rows


def seer_given(folder, kmers, pheno):
    """SEER with genosift's principal coordinates as its covariates (``--covar_file``)."""
    pcs = pd.read_csv(folder / "pcs.tsv", sep="\t", index_col=0)
    with open(folder / "covariates.txt", "w") as fh:
        for sample, row in zip(pcs.index, pcs.to_numpy()):
            fh.write(str(sample) + "\t" + "\t".join(f"{v:.17g}" for v in row) + "\n")
    columns = ",".join(f"{j + 2}q" for j in range(pcs.shape[1]))
    return timed(seer_command(kmers, pheno, "--covar_file", folder / "covariates.txt", "--covar_list", columns),
                 folder / "seer-given.txt")


_PCS = ("import sys, genosift as gs, pandas as pd\n"
        "ids = pd.read_csv(sys.argv[2], sep='\\t', index_col=0).index.tolist()\n"
        "pcs = gs.principal_coordinates(sys.argv[1], int(sys.argv[3]), samples=ids)\n"
        "pcs.to_csv(sys.argv[4], sep='\\t')\n")

#: The libraries every genosift command starts (numpy, scipy.sparse and scipy.special, pandas, numba)
#: and one compiled kernel loaded from numba's cache: the start-up below which no command of this
#: stack goes, whatever its input.
_STARTUP = ("import numpy as np, scipy.sparse, scipy.special, pandas\n"
            "from numba import njit\n\n\n"
            "@njit(cache=True)\n"
            "def total(x):\n"
            "    s = 0.0\n"
            "    for v in x:\n"
            "        s += v\n"
            "    return s\n\n\n"
            "total(np.ones(3))\n")

STARTUP = "start-up of the libraries alone (numpy, scipy, pandas, numba and one cached kernel)"


def genosift_runs(folder, kmers, meta, structure=True):
    base = [sys.executable, "-m", "genosift", "score", kmers, "--meta", meta, "--id", "sample", "--target",
            "phenotype", "--binary", "--min-af", "0.01", "--threads", "2", "--quiet", "--force",
            "--method", "logistic"]
    rows, outputs = {}, {}
    startup = folder / "startup.py"
    startup.write_text(_STARTUP)
    rows[STARTUP] = timed([sys.executable, startup])
    rows["genosift logistic"] = timed([*base, "-o", folder / "gs-logistic.tsv"])
    outputs["logistic"] = folder / "gs-logistic.tsv"
    if structure:
        rows[f"genosift principal_coordinates K={K} alone (Python, file to table)"] = timed(
            [sys.executable, "-c", _PCS, kmers, meta, K, folder / "pcs.tsv"])
        rows[f"genosift logistic + structure K={K}"] = timed(
            [*base, "--structure", K, "-o", folder / "gs-logistic-struct.tsv"])
        outputs["logistic-struct"] = folder / "gs-logistic-struct.tsv"
        rows[f"genosift logistic --covariates (the K={K} coordinates given)"] = timed(
            [*base, "--covariates", folder / "pcs.tsv", "-o", folder / "gs-logistic-given.tsv"])
        outputs["logistic-given"] = folder / "gs-logistic-given.tsv"
    return rows, outputs


def printed_agreement(ours, seer, floor=0.0):
    """Over the k-mers whose printed p-value is at least ``floor``: their number, the largest
    relative difference, the number beyond half of SEER's printed step, and how far beyond it the
    farthest of those lies (a share of the value: 1e-8 is a value on a rounding boundary)."""
    both = seer.index.intersection(ours.index)
    a, b = ours.loc[both].to_numpy(float), seer.loc[both].to_numpy(float)
    keep = (b > 0) & (b >= floor) & np.isfinite(a)
    a, b = a[keep], b[keep]
    rel = np.abs(a - b) / b
    half = 0.5 * 10.0 ** (np.floor(np.log10(b)) - 3)
    beyond = np.abs(a - b) > half * (1 + 1e-9)
    excess = float(((np.abs(a - b) - half) / b)[beyond].max()) if beyond.any() else 0.0
    return len(b), float(rel.max()) if len(b) else math.nan, int(beyond.sum()), excess


def seer_table(path):
    frame = pd.read_csv(path, sep="\t", usecols=lambda c: c in ("sequence", "chisq_p_val", "lrt_p_val", "comments"))
    return frame.set_index("sequence")


def agreement(folder, outputs):
    lines = []
    pairs = [("logistic", "seer.txt", "lrt_p_val"), ("logistic-struct", "seer-struct.txt", "lrt_p_val"),
             ("logistic-given", "seer-given.txt", "lrt_p_val")]
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
            n, rel, off, excess = printed_agreement(ours, seer.loc[rows, column], floor)
            farthest = f" (the farthest by {excess:.1e} of its value)" if off else ""
            lines.append(f"- genosift `{key}` p-values against SEER's `{column}` ({seer_file}, {where}): {n:,} "
                         f"k-mers, largest relative difference {rel:.2e}, {off:,} beyond half a printed step"
                         f"{farthest}")
    return lines


def one_size(n, folder, core_length=GENOMES["core_length"], structure=True):
    pop, kmers, pheno, n_kmers, counting = population(folder, n, core_length)
    meta = pop.phenotype
    rows = seer_runs(folder, kmers, pheno, structure)
    more, outputs = genosift_runs(folder, kmers, meta, structure)
    if structure:
        rows[f"SEER --covar_file (the K={K} coordinates given)"] = seer_given(folder, kmers, pheno)
    rows.update(more)
    tested = len(pd.read_csv(folder / "seer.txt", sep="\t", usecols=[0]))
    pairs = [("SEER", "genosift logistic"), (f"SEER + kmds --pc {K}", f"genosift logistic + structure K={K}"),
             (f"SEER --covar_file (the K={K} coordinates given)",
              f"genosift logistic --covariates (the K={K} coordinates given)")]
    ratios = [f"{theirs} / {ours}: {rows[theirs][0] / rows[ours][0]:.1f}x" for theirs, ours in pairs
              if theirs in rows and ours in rows]
    ratios.append(f"SEER / 20 = {rows['SEER'][0] / 20:.2f} s against a start-up of {rows[STARTUP][0]:.2f} s "
                  f"for the libraries alone")
    table = [f"| {n} | {core_length // 1000} | {n_kmers:,} | {tested:,} | {name} | {wall:.2f} | {rss:.0f} | "
             f"{1e6 * wall / tested:.0f} |" for name, (wall, rss) in rows.items()]
    notes = [f"- n = {n}, {core_length // 1000} kb core: fsm-lite counted {n_kmers:,} k-mers in {counting:.1f} s; "
             f"SEER tested {tested:,} "
             f"(maf >= 0.01); whole command against whole command, " + "; ".join(ratios)] + agreement(folder, outputs)
    return table, notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="60,120", help="numbers of genomes, comma-separated")
    parser.add_argument("--large", default="120:60000,120:200000",
                        help="GENOMES:CORE_BASES populations with a longer core genome, comma-separated, timed "
                             "without structure ('' for none)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the fastest is kept")
    parser.add_argument("--output", default=str(RESULTS / "RESULTS-association.md"))
    args = parser.parse_args(argv)
    load = os.getloadavg()
    REPEAT[0] = args.repeat
    for tool in ("seer", "kmds", "fsm-lite"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install seer fsm-lite)")
    # byte code written once, as an installed package has it (where PYTHONDONTWRITEBYTECODE is set,
    # every run would otherwise compile the modules changed since their last byte code)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC / "genosift")], check=True)
    table, notes = [], []
    plans = [(int(s), GENOMES["core_length"], True) for s in args.sizes.split(",") if s]
    plans += [(int(s.split(":")[0]), int(s.split(":")[1]), False) for s in args.large.split(",") if s]
    for n, core_length, structure in plans:
        with tempfile.TemporaryDirectory() as tmp:
            rows, more = one_size(n, Path(tmp), core_length, structure)
        table += rows
        notes += more
    text = "\n".join([
        *header("Association with population structure: SEER against genosift", load=load,
                argv=None if argv is None else [__file__, *argv]),
        "Each row is one whole command (or two, summed, where structure is computed first), run as its own "
        f"process on 2 threads, the fastest of {args.repeat} runs: wall time and peak resident memory of that "
        "process. Per k-mer: wall time over the k-mers SEER tested.", "",
        "| genomes | core kb | k-mers | tested | command | wall s | peak MiB | us per k-mer |",
        "|---:|---:|---:|---:|---|---:|---:|---:|", *table, "", "## Agreement and notes", "", *notes,
        "- SEER prints chi-square p-values below about 1e-4 up to a few percent away from the exact value "
        "(see `test_chi_square_on_all_of_seers_phenotypes_is_exact` in `tests/reference/test_real_tools.py`), and its "
        "likelihood-ratio p-values likewise; hence the lines over the printed p-values of at least 1e-4. SEER "
        "comments the k-mers it fits otherwise (bad-chisq, firth, ...), genosift flags those it fits with Firth's "
        "penalty: the ordinary fits of both are the ones comparable to the last digit. With `--covar_file`, SEER "
        "writes some lines with three fields more than its header (the covariates' p-values again); its columns "
        "are read by name, so on those lines the comment field holds a number and the k-mer counts as commented.",
        ""])
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
