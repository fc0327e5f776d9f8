#!/usr/bin/env python
"""GenoLearn's case study at one tenth of its size: convert -> score -> evaluate, end to end.

    python benchmarks/cases/bench_case_study.py                 # 2,874 isolates x 1,210,000 k-mers (+ a 1/4 run)
    python benchmarks/cases/bench_case_study.py --scale 0.01    # 12,100 k-mers: a smoke test, well under a minute

Writes ``benchmarks/results/RESULTS-case-study.md`` (``--scale 1`` only; other scales print the report)
with the command that made it.

GenoLearn's case study: 2,874 *E. coli* O157 isolates x 12.1 million k-mers, 12 regions. The
generator here (``write_case_study``, seeded) writes k-mer counts of the same number of isolates
and a tenth of the k-mers (``--scale`` multiplies that), in the text layout of fsm-lite and
unitig-caller (``KMER | EC00017:1 EC00230:2 ...``, gzip: see ``SPECTRUM_NOTE``), and a metadata
table (``sample``, ``region``, ``lineage``). The shape of a clonal bacterial pangenome:

- 48 lineages of unequal sizes; each isolate's region is its lineage's home region with
  probability 0.6, else drawn from the 12 regions' shares (so regions follow lineages in part);
- rare k-mers (private variants, singletons to 1 %) carried inside one lineage, accessory
  k-mers shared by a random set of lineages (1 % to 90 % of the isolates), near-core k-mers
  missing from a few isolates or from one lineage (a deletion);
- 5 planted marker k-mers per region, carried by 85 % of that region's isolates and 1 % of the
  others, whatever their lineage: the benchmark checks that fisher ranks them first.

Each step runs the genosift command line as its own process on 2 threads: ``convert`` (text ->
store), ``score --method fisher`` (the case study's method, on counts as GenoLearn scores them)
and ``evaluate`` over a grid of k for each model of ``EVALUATIONS``. Recorded per step: wall
time, the process's peak resident memory (GNU time's ``%M``; see ``run_step``), the peak and final
bytes it added to the work folder (spill files included; polled every 0.5 s), and its exit. A
step above ``--memory-cap`` is stopped and reported as such. The conversion and the scoring are
run again at ``--fit-scale`` (a quarter by default) and extrapolated to 12.1 M k-mers on the line
through both points (see the report).
"""
from __future__ import annotations

import argparse
import gzip
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
from common import RESULTS, SRC, git_revision, header  # noqa: E402

SEED = 20260114
N_ISOLATES = 2874
TENTH_KMERS = 1_210_000
FULL_KMERS = 12_100_000
N_REGIONS = 12
N_LINEAGES = 48
HOME_AFFINITY = 0.5          # share of a lineage's isolates sampled in its home region
MARKERS_PER_REGION = 5
MARKER_RATES = (0.005, 0.85)  # carriers outside, inside the marker's region
KIND_SHARES = {"rare": 0.78, "accessory": 0.16, "near-core": 0.06}
K = 31
GENOLEARN = {"parse_rate": 114_000, "fisher_s": 25 * 60, "fisher_bytes": 9e9, "ms_per_sample_million": 50}
GOAL = {"seconds": 30 * 60, "bytes": 2e9}
EVALUATIONS = {  # label: extra options of `genosift evaluate`; add rows here
    "logistic": ["--model", "logistic"],
    "random_forest": ["--model", "random_forest"],
}
GRID_EVALUATIONS = {  # run only where `--model-option` takes a comma-separated grid (see model_grids)
    "logistic, C grid": ["--model", "logistic", "--model-option", "C=0.01,0.1,1"],
    "random_forest, grid": ["--model", "random_forest", "--model-option", "max_features=sqrt,0.1"],
}
KS = "10,100,1000,10000"
SMOKE = {"ks": "10,100", "models": "logistic"}  # the evaluate grid below --scale 0.1: a check of the pipeline
SPECTRUM_NOTE = (
    "Why this spectrum: a k-mer table of a case study like this one lists the k-mers that vary between isolates "
    "(k-mers in every isolate say nothing about a region, and counters' maximum-support filters or the pipeline drop "
    "them), so 'near-core' here means k-mers missing from a few isolates or from one lineage, a small share. Most "
    "k-mers of a clonal collection come from private variants: each SNP or indel of a small subclade makes up to 31 "
    "k-mers in few isolates, hence the 1/c spectrum of the rare class (c carriers, c from 1 to 1 % of the isolates; "
    "the neutral site-frequency spectrum). Accessory genes (prophages, plasmids, islands) are shared by lineages at "
    "every frequency (log-uniform from 1 % to 90 %). The stored non-zeros, not the k-mers, drive conversion time "
    "and the store's size, and the accessory and near-core classes hold most of them: with a larger near-core "
    "share the times and sizes below grow with the non-zeros (the report gives rates per non-zero to redo the "
    "arithmetic). GenoLearn's own figures fit this order of size: at its 114,000 non-zeros per second, 'hours of "
    "preprocessing' means billions of non-zeros for the full table. Gzip (level 6, what `gzip -c` writes): "
    "fsm-lite writes plain text to its standard output, and a table of billions of counts is kept compressed (the "
    "full-size text is tens of GB); genosift reads gzip as it streams, and the conversion's time includes the "
    "decompression.")


def population(n_isolates, seed):
    """Isolate ids, region labels, lineage of each isolate and the lineages' sizes."""
    rng = np.random.default_rng([seed, 0])
    lineage_share = rng.dirichlet(np.full(N_LINEAGES, 0.8))
    region_share = 0.88 ** np.arange(N_REGIONS)
    region_share /= region_share.sum()
    lineage = rng.choice(N_LINEAGES, n_isolates, p=lineage_share)
    home = rng.choice(N_REGIONS, N_LINEAGES, p=region_share)
    region = np.where(rng.random(n_isolates) < HOME_AFFINITY, home[lineage],
                      rng.choice(N_REGIONS, n_isolates, p=region_share))
    ids = np.array([f"EC{i + 1:05d}" for i in range(n_isolates)], dtype=object)
    return ids, region, lineage, np.bincount(lineage, minlength=N_LINEAGES)


def kmer_strings(start, m, rng):
    """``m`` distinct 31-mers (uint8 rows): 14 bases from a bijection of the k-mer's index, 17 random."""
    index = (np.arange(start, start + m, dtype=np.uint64) * np.uint64(0x9E3779B1) + np.uint64(12345)) % np.uint64(
        1 << 28)
    digits = (index[:, None] >> (2 * np.arange(14, dtype=np.uint64))[None, :]) & np.uint64(3)
    bases = np.frombuffer(b"ACGT", np.uint8)
    return np.hstack([bases[digits.astype(np.intp)], bases[rng.integers(0, 4, (m, K - 14))]])


def marker_positions(n_kmers):
    n_markers = N_REGIONS * MARKERS_PER_REGION
    return np.linspace(0, n_kmers - 1, n_markers).round().astype(np.int64)


def carrier_probabilities(kind, rng, sizes, n):
    """Per k-mer (rows) and lineage (columns), the probability that an isolate carries it."""
    m = kind.size
    P = np.zeros((m, N_LINEAGES), np.float32)
    rare = np.flatnonzero(kind == 0)
    cmax = max(1, n // 100)
    weights = 1.0 / np.arange(1, cmax + 1)
    c = 1 + np.searchsorted(np.cumsum(weights) / weights.sum(), rng.random(rare.size))
    home = rng.choice(N_LINEAGES, rare.size, p=sizes / n)
    P[rare, home] = np.minimum(1.0, c / np.maximum(sizes[home], 1))
    acc = np.flatnonzero(kind == 1)
    share = np.exp(rng.uniform(np.log(0.01), np.log(0.9), acc.size))
    order = np.argsort(rng.random((acc.size, N_LINEAGES)), axis=1)
    before = np.cumsum(sizes[order], axis=1) - sizes[order]
    member = np.zeros((acc.size, N_LINEAGES), bool)
    np.put_along_axis(member, order, before < share[:, None] * n, axis=1)
    P[acc] = np.where(member, rng.uniform(0.9, 0.99, (acc.size, 1)), 0.002)
    core = np.flatnonzero(kind == 2)
    P[core] = 1.0 - rng.uniform(0.002, 0.05, (core.size, 1))
    deleted = core[rng.random(core.size) < 0.3]
    P[deleted, rng.integers(0, N_LINEAGES, deleted.size)] = 0.02
    return P


def kmer_block(start, m, n_kmers, pop, seed):
    """One block of k-mers: their strings, their counts as CSR rows (indptr, isolate indices, counts) and
    the region each marker k-mer marks (-1: not a marker). Seeded by ``seed`` and the block's start."""
    _, region, lineage, sizes = pop
    n = lineage.size
    rng = np.random.default_rng([seed, 1 + start])
    kind = np.searchsorted(np.cumsum(list(KIND_SHARES.values())), rng.random(m) * sum(KIND_SHARES.values()))
    kind = np.minimum(kind, 2)
    marker_region = np.full(m, -1)
    at = marker_positions(n_kmers)
    inside = (at >= start) & (at < start + m)
    marker_region[at[inside] - start] = np.flatnonzero(inside) // MARKERS_PER_REGION
    probs = carrier_probabilities(kind, rng, sizes, n)[:, lineage]
    rows = np.flatnonzero(marker_region >= 0)
    probs[rows] = np.where(region[None, :] == marker_region[rows, None], MARKER_RATES[1], MARKER_RATES[0])
    present = rng.random((m, n), dtype=np.float32) < probs
    empty = np.flatnonzero(~present.any(axis=1))  # a k-mer line lists at least one isolate
    present[empty, rng.integers(0, n, empty.size)] = True
    indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
    indices = np.nonzero(present)[1].astype(np.int32)
    counts = rng.geometric(0.9, indices.size).astype(np.int64)  # mostly 1: a k-mer once per genome
    return kmer_strings(start, m, rng), indptr, indices, counts, marker_region


@njit(cache=True)
def format_lines(kmers, indptr, indices, counts, ids, out):
    """``KMER | ID:COUNT ...`` lines into ``out``; returns the number of bytes written."""
    pos = 0
    for i in range(kmers.shape[0]):
        for t in range(kmers.shape[1]):
            out[pos] = kmers[i, t]
            pos += 1
        out[pos] = 32
        out[pos + 1] = 124
        pos += 2
        for e in range(indptr[i], indptr[i + 1]):
            out[pos] = 32
            pos += 1
            for t in range(ids.shape[1]):
                out[pos] = ids[indices[e], t]
                pos += 1
            out[pos] = 58
            pos += 1
            c = counts[e]
            digits = 1
            while c >= 10 ** digits:
                digits += 1
            for d in range(digits - 1, -1, -1):
                out[pos + d] = 48 + c % 10
                c //= 10
            pos += digits
        out[pos] = 10
        pos += 1
    return pos


def blocks(n_kmers, pop, seed, block=8192):
    for start in range(0, n_kmers, block):
        yield start, kmer_block(start, min(block, n_kmers - start), n_kmers, pop, seed)


def write_case_study(folder, *, n_kmers=TENTH_KMERS, n_isolates=N_ISOLATES, seed=SEED, compress=True, level=6):
    """Write ``kmers.txt.gz`` (or ``kmers.txt``) and ``meta.tsv`` into ``folder``; returns what was made:
    paths, markers {k-mer: region}, non-zeros, the number of carriers of each k-mer, seconds."""
    started = time.perf_counter()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pop = population(n_isolates, seed)
    ids_text, region, lineage, _ = pop
    ids = np.frombuffer("".join(ids_text).encode(), np.uint8).reshape(n_isolates, -1)
    labels = np.array([f"region_{r + 1:02d}" for r in range(N_REGIONS)], dtype=object)
    meta = folder / "meta.tsv"
    meta.write_text("sample\tregion\tlineage\n" + "".join(
        f"{s}\t{labels[r]}\tL{g:02d}\n" for s, r, g in zip(ids_text, region, lineage)))
    path = folder / ("kmers.txt.gz" if compress else "kmers.txt")
    markers, carriers, nnz = {}, np.zeros(n_kmers, np.int64), 0

    def encode(parts):
        kmers, indptr, indices, counts = parts
        out = np.empty(indptr.size * (K + 3) + indices.size * (ids.shape[1] + 12), np.uint8)
        text = out[:format_lines(kmers, indptr, indices, counts, ids, out)].tobytes()
        return gzip.compress(text, compresslevel=level, mtime=0) if compress else text

    with open(path, "wb") as fh, ThreadPoolExecutor(2) as pool:
        pending = []
        for start, (kmers, indptr, indices, counts, marker_region) in blocks(n_kmers, pop, seed):
            for i in np.flatnonzero(marker_region >= 0):
                markers[kmers[i].tobytes().decode()] = labels[marker_region[i]]
            carriers[start:start + indptr.size - 1] = np.diff(indptr)
            nnz += indices.size
            pending.append(pool.submit(encode, (kmers, indptr, indices, counts)))
            while len(pending) > 2 or (pending and pending[0].done()):
                fh.write(pending.pop(0).result())
        for job in pending:
            fh.write(job.result())
    return {"kmers": path, "meta": meta, "markers": markers, "nnz": nnz, "carriers": carriers,
            "bytes": path.stat().st_size, "seconds": time.perf_counter() - started, "n_isolates": n_isolates,
            "n_kmers": n_kmers}


def generated_matrix(n_kmers, n_isolates=N_ISOLATES, seed=SEED):
    """The generated counts as an isolates x k-mers CSR matrix and the k-mer strings (for tests)."""
    import scipy.sparse as sp

    pop = population(n_isolates, seed)
    parts = [p for _, p in blocks(n_kmers, pop, seed)]
    names = np.array([row.tobytes().decode() for p in parts for row in p[0]], dtype=object)
    offsets = np.cumsum([0] + [p[2].size for p in parts])
    indptr = np.concatenate([[0]] + [p[1][1:] + offset for p, offset in zip(parts, offsets)])
    X = sp.csr_matrix((np.concatenate([p[3] for p in parts]).astype(np.float64),
                       np.concatenate([p[2] for p in parts]), indptr), shape=(n_kmers, n_isolates))
    return X.T.tocsr(), names, pop[0]


def folder_bytes(folder):
    total = 0
    for entry in os.scandir(folder):
        try:
            total += folder_bytes(entry.path) if entry.is_dir(follow_symlinks=False) else entry.stat().st_size
        except FileNotFoundError:  # a temporary file removed while we looked
            pass
    return total


def process_tree(pid):
    """``pid`` and its descendants that are still running, from /proc."""
    out = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            for child in fh.read().split():
                out += process_tree(int(child))
    except OSError:
        pass
    return out


def unlinked_bytes(pid, folder):
    """Disk bytes of the files in ``folder`` that ``pid`` or its descendants hold open after
    unlinking them (the spill files of ``convert``, the profile of ``score``): no listing shows
    them, the disk holds them all the same."""
    total, prefix = 0, str(Path(folder).resolve()) + os.sep
    for proc in process_tree(pid):
        try:
            fds = os.listdir(f"/proc/{proc}/fd")
        except OSError:  # gone
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{proc}/fd/{fd}")
                if target.startswith(prefix) and target.endswith(" (deleted)"):
                    total += os.stat(f"/proc/{proc}/fd/{fd}").st_blocks * 512
            except OSError:  # closed while we looked
                pass
    return total


def rss_bytes(pid):
    """Resident bytes of ``pid`` and its descendants, from /proc (0 when gone)."""
    total = 0
    for proc in process_tree(pid):
        try:
            with open(f"/proc/{proc}/status") as fh:
                total += next((int(line.split()[1]) * 1024 for line in fh if line.startswith("VmRSS:")), 0)
        except OSError:
            pass
    return total


def run_step(command, folder, log, cap):
    """Run one command; its wall time, peak RSS, peak and final bytes added to ``folder`` (files it
    holds open after unlinking them included), and how it ended
    ('ok', 'exit N' or 'stopped above the memory cap'). A thread polls the folder's size and the RSS every
    0.5 s while this one waits for the process.

    The peak RSS is the one GNU time reports for the command (``%M``). Not ``ru_maxrss`` of a child of
    this process: Linux carries the parent's high-water mark into a child started by vfork, which
    subprocess uses, so every step would read at least this process's own peak. GNU time is small, and
    its child starts from its size."""
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    before = folder_bytes(folder)
    seen = {"disk": before, "ended": "ok", "rss": 0}
    done = threading.Event()
    peak_file = Path(log).with_suffix(".rss")

    def watch():
        while not done.wait(0.5):
            seen["disk"] = max(seen["disk"], folder_bytes(folder) + unlinked_bytes(proc.pid, folder))
            rss = rss_bytes(proc.pid)
            seen["rss"] = max(seen["rss"], rss)
            if rss > cap:
                seen["ended"] = f"stopped above the memory cap ({cap / 2**30:.0f} GiB)"
                os.killpg(proc.pid, signal.SIGKILL)  # the process group of our own child, by its id

    wrapper = ["/usr/bin/time", "-f", "%M", "-o", peak_file] if Path("/usr/bin/time").exists() else []
    with open(log, "w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in wrapper + command], stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            code = proc.wait()
        finally:
            wall = time.perf_counter() - start
            done.set()
            watcher.join()
            if proc.poll() is None:  # interrupted: stop our child's process group too
                os.killpg(proc.pid, signal.SIGKILL)
    if code and seen["ended"] == "ok":
        seen["ended"] = f"exit {code}"
    peak = seen["rss"]
    if wrapper and peak_file.exists():
        last = peak_file.read_text().split()
        peak = int(last[-1]) * 1024 if last and last[-1].isdigit() else peak
    final = folder_bytes(folder)
    return {"seconds": wall, "peak_rss": peak, "peak_disk": max(seen["disk"], final) - before,
            "disk": final - before, "ended": seen["ended"], "log": Path(log).read_text(errors="replace")[-3000:]}


def slug(name):
    return "".join(c if c.isalnum() else "-" for c in name)


def genosift(*args):
    return [sys.executable, "-m", "genosift", *args, "--threads", "2", "--quiet"]


def model_grids():
    """Whether this genosift's `evaluate --model-option` takes a comma-separated grid of values."""
    text = subprocess.run(genosift("evaluate", "--help")[:-3], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(SRC))).stdout
    option = text[text.rfind("--model-option"):]
    option = option[:option.find("\n  --", 20)]
    return any(word in option for word in ("VALUE...", "comma", "several values"))


# the scoring alone, without the command's table: which part of `score` grows with the k-mers
LIBRARY = "score fisher, library call (top 1,000 only)"
_LIBRARY_SCORE = ("import sys, genosift as gs\n"
                  "result = gs.score(sys.argv[1], 'region', method='fisher')\n"
                  "open(sys.argv[2], 'w').write('\\n'.join(result.top(1000)))\n")


def pipeline(folder, made, cap, evaluations=(), ks=KS):
    """convert, score and ``evaluate`` for each of ``evaluations`` (labels of EVALUATIONS and
    GRID_EVALUATIONS), each its own process; returns {step: measurement}."""
    folder = Path(folder)
    store, ranking = folder / "case.gs.h5ad", folder / "fisher.tsv"
    steps = {"convert": genosift("convert", made["kmers"], "--meta", made["meta"], "--id", "sample", "-o", store),
             "score fisher": genosift("score", store, "--target", "region", "--method", "fisher", "-o", ranking),
             "patterns": genosift("patterns", store, "--min-af", "0.01", "--max-af", "0.99"),
             LIBRARY: [sys.executable, "-c", _LIBRARY_SCORE, store, folder / "top.txt"]}
    for label in evaluations:
        extra = {**EVALUATIONS, **GRID_EVALUATIONS}[label]
        steps[f"evaluate {label}"] = genosift("evaluate", store, "--target", "region", "--method", "fisher",
                                              "--k", ks, "--cv", "5", *extra, "-o", folder / f"ev-{slug(label)}")
    runs = {}
    for name, command in steps.items():
        runs[name] = run_step(command, folder, folder / f"{slug(name)}.log", cap)
        shown = command[2:] if name != LIBRARY else ["python -c", "'gs.score(store, \"region\", method=\"fisher\")'"]
        runs[name]["command"] = " ".join(str(c) for c in shown).replace(str(folder) + "/", "")
        print(f"  {name}: {runs[name]['seconds']:.1f} s, {runs[name]['peak_rss'] / 2**20:.0f} MiB, "
              f"{runs[name]['ended']}", file=sys.stderr)
        if runs[name]["ended"] != "ok" and name in ("convert", "score fisher"):
            break  # later steps need this one's output
    return runs


def check_markers(ranking, markers):
    """How many of the planted markers are among the top len(markers) of the ranking, and the best rank
    of a k-mer that is no marker."""
    import pandas as pd

    table = pd.read_csv(ranking, sep="\t", usecols=["feature", "rank"])
    top = table.nsmallest(len(markers), "rank")["feature"]
    others = table.loc[~table["feature"].isin(list(markers)), "rank"]
    return int(top.isin(list(markers)).sum()), int(others.min())


def spectrum_rows(carriers, n):
    """The frequency spectrum: k-mers and non-zeros by number of carrying isolates."""
    edges = [(1, 1, "1 (singletons)"), (2, 5, "2-5"), (6, n // 100, f"6-{n // 100} (rare, < 1 %)"),
             (n // 100 + 1, n // 10, "1-10 %"), (n // 10 + 1, n // 2, "10-50 %"), (n // 2 + 1, int(0.9 * n), "50-90 %"),
             (int(0.9 * n) + 1, n, "> 90 % (near-core)")]
    rows, total = [], carriers.sum()
    for lo, hi, label in edges:
        inside = (carriers >= lo) & (carriers <= hi)
        rows.append(f"| {label} | {inside.sum():,} | {inside.mean():.1%} | {carriers[inside].sum() / total:.1%} |")
    return rows


def line_through(points, x):
    """The value at ``x`` on the line through two (x, y) points; with one point, proportional."""
    if len(points) == 1:
        (x0, y0), = points
        return y0 * x / x0
    (x0, y0), (x1, y1) = points
    return y1 + (y1 - y0) / (x1 - x0) * (x - x1)


def analysis_notes(runs, full, made, full_nnz):
    """What the measurements say about the limits: the store's bytes per count, the cost of the ranking
    table next to the scoring alone."""
    lines = []
    if runs.get("convert", {}).get("ended") == "ok":
        per, text = runs["convert"]["disk"] / made["nnz"], made["bytes"] / made["nnz"]
        lines.append(f"- The store takes {per:.1f} bytes per stored count (counts in the type the Checks give, "
                     f"int32 indices, kept twice: by rows and the column copy): {per * full_nnz / 1e9:.0f} GB for "
                     f"the full case study, where its gzip text takes {text * full_nnz / 1e9:.0f} GB.")
    if "score fisher" in full and LIBRARY in full:
        kept = 8 + 8 + 8 + 1 + (K + 1) + 8
        record = (2 * N_REGIONS + 1) * 8
        lines.append(
            f"- `score`'s peak grows by {full['score fisher']['slope']:,.0f} bytes per k-mer, the scoring alone "
            f"(the library call) by {full[LIBRARY]['slope']:,.0f}. What the command must keep for every k-mer: its "
            f"score (8 bytes), the ranking and its rank (8 + 8), the selection (1), its name as bytes with an "
            f"offset ({K} + 1 + 8): {kept} bytes. The rest is scored and profiled a block of k-mers at a time "
            "from the store's column copy: the 12 classes' moments and sums of a block only, and the profile "
            f"columns of the table (means and prevalences, {record} bytes per k-mer: "
            f"{record * FULL_KMERS / 1e9:.1f} GB at {FULL_KMERS:,} k-mers) go to an unlinked temporary file "
            "beside the output, written in the ranking's order and read back one piece of the table at a time.")
        if full[LIBRARY]["peak_rss"] > GOAL["bytes"]:
            lines.append(f"- Even the scoring alone needs {gib(full[LIBRARY]['peak_rss'])} at {FULL_KMERS:,} k-mers.")
    return lines


def evaluate_notes(runs, p):
    """`evaluate` scores every fold from the store: its peak, and that peak scaled in proportion to
    the full case study (an upper bound: the features read for the models do not grow with the k-mers)."""
    lines = []
    for name, r in runs.items():
        if name.startswith("evaluate") and r["ended"] == "ok":
            lines.append(f"- `{name}` scores each fold's training samples from the store (the store stays on disk) "
                         f"and reads only the k-mers near the top of some ranking for the models: "
                         f"{gib(r['peak_rss'])} here, at most about {gib(r['peak_rss'] * FULL_KMERS / p)} at "
                         f"{FULL_KMERS:,} k-mers in proportion ({r['seconds'] / 60:.1f} minutes here).")
    return lines


def goal_line(full, convert, score, what):
    if convert not in full or score not in full:
        return f"- {what}: not measured."
    secs = full[convert]["seconds"] + full[score]["seconds"]
    peak = max(full[convert]["peak_rss"], full[score]["peak_rss"])
    verdict = "met" if secs <= GOAL["seconds"] and peak <= GOAL["bytes"] else "NOT met"
    return f"- {what}: {secs / 60:.1f} minutes, larger peak {gib(peak)} ({peak / 1e9:.1f} GB): **{verdict}**."


def gib(b):
    return f"{b / 2**30:.2f} GiB"


def evaluation_lines(folder, runs):
    import pandas as pd

    lines = []
    for label in [k[len("evaluate "):] for k in runs if k.startswith("evaluate ")]:
        curve_path = Path(folder) / f"ev-{slug(label)}" / "curve.tsv"
        if runs.get(f"evaluate {label}", {}).get("ended") != "ok" or not curve_path.exists():
            continue
        curve = pd.read_csv(curve_path, sep="\t")
        best = curve.loc[curve["balanced_accuracy_mean"].idxmax()]
        cells = ", ".join(f"k = {int(r.k):,}: {r.balanced_accuracy_mean:.3f}" for r in curve.itertuples())
        lines.append(f"- `evaluate {label}`: balanced accuracy (5-fold mean) {cells}; best k = {int(best.k):,} "
                     f"(chance: 1/12 = 0.083).")
    return lines


def report(args, made, runs, fits, checks, load_before):
    n, p, nnz = made["n_isolates"], made["n_kmers"], made["nnz"]
    full_nnz = nnz * FULL_KMERS / p
    rows = []
    for scale_p, scale_runs in [(p, runs)] + [(q, r) for q, r in fits.items()]:
        for name, r in scale_runs.items():
            rows.append(f"| {scale_p:,} | {name} | `{r['command']}` | {r['seconds']:.1f} | "
                        f"{r['peak_rss'] / 2**20:,.0f} | {r['disk'] / 1e6:,.0f} | {r['peak_disk'] / 1e6:,.0f} | "
                        f"{r['ended']} |")
    extra, full = [], {}
    for step in ("convert", "score fisher", LIBRARY):
        points = [(q, r[step]) for q, r in [(p, runs)] + list(fits.items()) if step in r and r[step]["ended"] == "ok"]
        points = sorted(points, key=lambda t: t[0])[-2:]
        if not points:
            extra.append(f"| {step} | not measured | | | | |")
            continue
        full[step] = {key: line_through([(q, r[key]) for q, r in points], FULL_KMERS)
                      for key in ("seconds", "peak_rss", "disk")}
        rate = nnz / runs[step]["seconds"] if step in runs else float("nan")
        last_p, last = points[-1]
        slope = full[step]["slope"] = (full[step]["peak_rss"] - last["peak_rss"]) / (FULL_KMERS - last_p)
        extra.append(f"| {step} | {full[step]['seconds'] / 60:.1f} min | {gib(full[step]['peak_rss'])} | "
                     f"{slope:,.0f} | {full[step]['disk'] / 1e9:.1f} GB | {rate / 1e6:.2f} M |")
    goal = [goal_line(full, "convert", "score fisher", "the commands `convert` and `score`")]
    if LIBRARY in full:
        goal.append(goal_line(full, "convert", LIBRARY, "`convert` and the scoring alone (the library call, "
                                                          "without the command's ranking table)"))
    genolearn_pre = full_nnz / GENOLEARN["parse_rate"]
    genolearn_fisher = N_ISOLATES * FULL_KMERS / 1e6 * GENOLEARN["ms_per_sample_million"] / 1e3
    marker_hits, best_other = checks["markers"]
    title = (f"GenoLearn's case study at {'one tenth' if p == TENTH_KMERS else f'{p / FULL_KMERS:.2g} of its k-mers'}: "
             "convert, score, evaluate")
    return "\n".join([
        *header(title, load=load_before, revision=checks["revision"], argv=[__file__, *args.argv]),
        f"Load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end (the benchmark loads both "
        "cores).", "",
        "## Data", "",
        f"{n:,} isolates x {p:,} k-mers (GenoLearn's case study: {N_ISOLATES:,} x {FULL_KMERS:,}), seed {args.seed}: "
        f"{nnz:,} non-zero counts ({nnz / (n * p):.1%} dense), {made['bytes'] / 1e6:,.0f} MB of "
        f"gzip text ({made['kmers'].name}), written in {made['seconds']:.0f} s by `write_case_study`. "
        f"12 regions of {checks['regions']} isolates; {N_LINEAGES} lineages; {len(made['markers'])} planted marker "
        "k-mers (5 per region). Counts: 1 + a geometric number (mean 1.11).", "",
        "| isolates carrying a k-mer | k-mers | share of k-mers | share of non-zeros |", "|---|---:|---:|---:|",
        *spectrum_rows(made["carriers"], n), "", SPECTRUM_NOTE, "",
        "## Steps", "",
        "Each step is one genosift command in its own process on 2 threads (`--threads 2 --quiet`). Peak RSS: the "
        "process's peak resident memory as GNU time reports it (`/usr/bin/time -f %M`). Disk: bytes the step "
        "added to the work folder at its end, and at most while it ran (temporary files included, those "
        "the step holds open after unlinking them too, found through /proc).", "",
        "| k-mers | step | command | wall s | peak RSS MiB | disk MB | peak disk MB | outcome |",
        "|---:|---|---|---:|---:|---:|---:|---|", *rows, "",
        "## Checks", "",
        f"- Store: {checks['store']}.",
        f"- Planted markers: {marker_hits} of {len(made['markers'])} in fisher's top {len(made['markers'])}; the best "
        f"k-mer that is no marker ranks {best_other:,}.",
        *pattern_lines(runs), *evaluation_lines(args.folder, runs), "",
        f"## Extrapolation to {FULL_KMERS:,} k-mers", "",
        f"Same isolates, {FULL_KMERS / p:,.3g} times the k-mers (and the non-zeros: the spectrum does not depend on "
        "the number of k-mers). Time, peak memory and disk on the line through the two measured sizes "
        f"({', '.join(f'{q:,}' for q in sorted([p, *fits]))} k-mers): the intercept is what does not grow with "
        "the k-mers (interpreter, imports, the per-sample part), the slope what does. Rate: non-zeros per second "
        "of the step at the largest size.", "",
        "| step | time | peak memory | peak bytes per k-mer (slope) | disk | non-zeros / s |",
        "|---|---:|---:|---:|---:|---:|", *extra, "",
        f"GenoLearn on the full case study ({full_nnz / 1e9:.1f} billion non-zeros at this spectrum): preprocessing "
        f"at its measured {GENOLEARN['parse_rate']:,} non-zeros per second, {genolearn_pre / 3600:.1f} hours; "
        f"Fisher scoring about 25 minutes and 9 GB (its {GENOLEARN['ms_per_sample_million']} ms per sample per "
        f"million features gives {genolearn_fisher / 60:.0f} minutes).", "",
        "**Goal**: conversion + scoring of the full case study within 30 minutes and 2 GB on this 2-core machine "
        "(the steps run one after the other, so the larger of their peaks is what the machine needs).", "",
        *goal, "", "## Where it goes", "", *analysis_notes(runs, full, made, full_nnz), *checks["notes"],
        *evaluate_notes(runs, p), ""])


def pattern_lines(runs):
    """What `genosift patterns` printed: the distinct presence/absence patterns and the threshold."""
    if "patterns" not in runs or runs["patterns"]["ended"] != "ok":
        return []
    said = [line.strip() for line in runs["patterns"]["log"].splitlines() if line.strip()]
    return [f"- Patterns (`{runs['patterns']['command']}`, {runs['patterns']['seconds']:.1f} s): "
            + " ".join(said[:2])]


def store_check(store, made):
    from genosift.io.store import open_store

    s = open_store(store)
    same = s.shape == (made["n_isolates"], made["n_kmers"]) and s.nnz == made["nnz"]
    return (f"{s.shape[0]:,} x {s.shape[1]:,}, {s.nnz:,} stored counts ({s.dtype}), "
            + ("as generated" if same else f"NOT as generated ({made['n_isolates']} x {made['n_kmers']}, "
                                           f"{made['nnz']:,})"))


def limiting_notes(runs, fits):
    notes = []
    for step in ("convert", "score fisher"):
        r = runs.get(step)
        if r and r["ended"] != "ok":
            notes.append(f"- `{step}` did not finish ({r['ended']}): log tail `{r['log'][-300:].strip()}`")
    done = {k: r for k, r in runs.items() if r["ended"] == "ok"}
    if done:
        slow = max(done, key=lambda k: done[k]["seconds"])
        big = max(done, key=lambda k: done[k]["peak_rss"])
        notes.append(f"- At this size the slowest step is `{slow}` ({done[slow]['seconds']:.0f} s) and the largest "
                     f"in memory `{big}` ({done[big]['peak_rss'] / 2**30:.2f} GiB).")
    for step, r in runs.items():
        if step.startswith("evaluate") and r["ended"] != "ok":
            notes.append(f"- `{step}`: {r['ended']} after {r['seconds']:.0f} s, peak {r['peak_rss'] / 2**30:.1f} GiB.")
    return notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="k-mers as a share of the tenth (1: 1,210,000)")
    parser.add_argument("--fit-scale", type=float, default=0.25,
                        help="a second, smaller size for the extrapolation's line (0: none, proportional)")
    parser.add_argument("--isolates", type=int, default=N_ISOLATES)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--folder", default="/tmp/case-study/run", help="work folder (removed at the end)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--no-evaluate", action="store_true", help="convert and score only")
    parser.add_argument("--ks", help=f"the evaluate grid of k (default {KS}; below --scale 0.1, {SMOKE['ks']})")
    parser.add_argument("--models", help=f"labels of EVALUATIONS to run, comma-separated (default all; below "
                                         f"--scale 0.1, {SMOKE['models']}); with a genosift whose --model-option "
                                         "takes a grid, GRID_EVALUATIONS are added")
    parser.add_argument("--memory-cap", type=float, default=14.0, help="GiB; a step above it is stopped")
    parser.add_argument("--output", help="report file (default: RESULTS-case-study.md at --scale 1, else none)")
    args = parser.parse_args(argv)
    args.argv = list(argv if argv is not None else sys.argv[1:])
    import shutil

    load_before = os.getloadavg()
    folder = Path(args.folder)
    if folder.exists():
        shutil.rmtree(folder)
    cap = args.memory_cap * 2**30
    fits = {}
    try:
        if args.fit_scale:
            sub = folder / "fit"
            made = write_case_study(sub, n_kmers=round(TENTH_KMERS * args.scale * args.fit_scale),
                                    n_isolates=args.isolates, seed=args.seed)
            print(f"fit size: {made['n_kmers']:,} k-mers, {made['nnz']:,} counts", file=sys.stderr)
            fits[made["n_kmers"]] = pipeline(sub, made, cap)
            shutil.rmtree(sub)
        made = write_case_study(folder, n_kmers=round(TENTH_KMERS * args.scale), n_isolates=args.isolates,
                                seed=args.seed)
        print(f"generated {made['n_kmers']:,} k-mers x {made['n_isolates']:,} isolates, {made['nnz']:,} counts, "
              f"{made['bytes'] / 1e6:,.0f} MB in {made['seconds']:.0f} s", file=sys.stderr)
        smoke = args.scale < 0.1
        models = (args.models or (SMOKE["models"] if smoke else ",".join(EVALUATIONS))).split(",")
        if not args.models and not smoke and model_grids():
            models += list(GRID_EVALUATIONS)
        runs = pipeline(folder, made, cap, evaluations=[] if args.no_evaluate else models,
                        ks=args.ks or (SMOKE["ks"] if smoke else KS))
        ok = runs["convert"]["ended"] == "ok"
        scored = ok and runs.get("score fisher", {}).get("ended") == "ok"
        checks = {
            "revision": git_revision(),
            "regions": ", ".join(str(c) for c in np.bincount(population(args.isolates, args.seed)[1])),
            "store": store_check(folder / "case.gs.h5ad", made) if ok else "not written",
            "markers": check_markers(folder / "fisher.tsv", made["markers"]) if scored else (0, 0),
            "notes": limiting_notes(runs, fits),
        }
        if smoke:
            checks["notes"].append("- A smoke run: at sizes this small, start-up dominates and the extrapolation's "
                                   "line means nothing.")
        args.folder = folder
        with open(folder.parent / "last-run.pickle", "wb") as fh:  # the measurements, to redo the report
            pickle.dump((args, made, runs, fits, checks, load_before), fh)
        text = report(args, made, runs, fits, checks, load_before)
    finally:
        if not args.keep and folder.exists():
            shutil.rmtree(folder)
    output = args.output or (RESULTS / "RESULTS-case-study.md" if args.scale == 1 else None)
    if output:
        Path(output).write_text(text)
    print(text)
    return 0 if scored and checks["markers"][0] == len(made["markers"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
