#!/usr/bin/env python
"""Power and false positives of the association pipelines on simulated clonal populations with a
known truth: does each pipeline find the causal gene below the genome-wide threshold, and how
many patterns that are not the causal gene pass it?

    python benchmarks/cases/bench_power.py                      # every design of DEFAULT_DESIGNS, 6 + 4 seeds each
    python benchmarks/cases/bench_power.py --quick              # 2 populations with a causal gene + 1 null per design
    python benchmarks/cases/bench_power.py --designs 200x8 --seeds 1,2 --null-seeds 101
    python benchmarks/cases/bench_power.py --pipelines lmm      # only the pipelines whose name holds 'lmm'

Populations: ``genosift.simulate_clonal_population`` with the settings of ``DESIGNS``. A population
with a causal gene has the simulator's phenotype (the causal gene, carried by 35 % of every
lineage, and the lineage-0 effect); a null population is simulated with ``causal_log_odds=0``:
the same genomes as the same seed would give, the lineage-0 effect alone, the causal gene carried
but without effect. The k-mers are counted by fsm-lite (``-s 2 -m 16 -M 31``). Each population,
its k-mers, its store and the structure files made from it are cached under ``--cache`` in a
folder named by the design, the kind, the seed and a digest of every setting that made it.

Pipelines: ``GENOSIFT`` (name -> the options after ``genosift score STORE --target phenotype
--binary --min-af A --max-af B --threads T``, each run as its own process) and ``PYSEER`` (name ->
the options after ``pyseer --phenotypes P --kmers K --min-af A --max-af B --cpu T``). ``{name}``
in an option stands for a structure file of the population (``STRUCTURE_FILES``): ``distances``
(the share of the k-mers that one of two samples carries and the other lacks, as SEER's kmds),
``tree`` (the neighbour-joining tree of those distances, rooted at its midpoint), ``similarity``
(``similarity_pyseer`` of the k-mers) and ``tree_similarity`` (pyseer's ``phylogeny_distance.py
--lmm`` of the tree). A pipeline whose tool or file is missing is skipped with its reason.
pyseer is looked for on PATH, else in ``../pyseer-venv`` beside the checkout, its scripts in
``../pyseer-src/scripts`` (``--pyseer``, ``--pyseer-scripts``).

The truth: a k-mer is causal when it is a substring of the causal gene or of its reverse
complement. K-mers carried by the same samples form one pattern; the threshold is ``alpha`` over
the distinct patterns of the k-mers inside the allele-frequency range (the same for every pipeline
of a population, and the number genosift prints). Per population and pipeline: the causal gene
found (its best pattern's p-value below the threshold), that p-value and its rank among the
patterns and among the k-mers, the distinct non-causal patterns below the threshold (on a null
population every pattern counts), the pattern-level genomic inflation (median chi-square of one
p-value per pattern over its expected value) beside the k-mer-level one, and the wall time.
Writes ``benchmarks/results/RESULTS-power.md`` and ``RESULTS-power.json`` beside it.

The genosift measured is a copy of ``src/`` made at the start (``--source worktree``, the default:
the working tree as it is then; ``--source head``: the committed revision), so that edits made
during a run do not reach half of its commands; the report names it.
"""
from __future__ import annotations

import argparse
import datetime
import functools
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
# SRC is replaced by main() with a snapshot of it (see ``snapshot``)
from common import RESULTS, ROOT, SRC, command, header, machine  # noqa: E402

#: design -> settings of ``simulate_clonal_population`` (besides the seed and the phenotype's model)
DESIGNS = {
    "200x8": dict(n_genomes=200, n_lineages=8),  # the simulator's default core (3 kb) and gene sizes
    "200x8-longcore": dict(n_genomes=200, n_lineages=8, core_length=20000, lineage_snps=300, genes_per_lineage=5,
                           n_random_genes=20),  # the other benchmarks' population: a 20 kb core
    "100x4": dict(n_genomes=100, n_lineages=4),
    "400x16": dict(n_genomes=400, n_lineages=16),
}
DEFAULT_DESIGNS = ("200x8", "200x8-longcore")
#: the phenotype's model of each kind of population (the simulator's own for ``causal``)
KINDS = {"causal": {}, "null": {"causal_log_odds": 0.0}}
FSM_LITE = ["-s", "2", "-m", "16", "-M", "31"]

#: name -> the options after ``genosift score STORE --target phenotype --binary --min-af --max-af --threads``
GENOSIFT = {
    "genosift logistic (no structure)": ["--method", "logistic"],
    "genosift logistic --structure auto": ["--method", "logistic", "--structure", "auto"],
    "genosift logistic --structure 10": ["--method", "logistic", "--structure", "10"],
    "genosift lmm --kinship-from-data": ["--method", "lmm", "--kinship-from-data"],
    "genosift lmm --kinship-from-data --method-option model=linear": ["--method", "lmm", "--kinship-from-data",
                                                                      "--method-option", "model=linear"],
    # the same two documented defaults counting every k-mer (as before patterns were counted once)
    "genosift logistic --structure auto --structure-count features": ["--method", "logistic", "--structure", "auto",
                                                                      "--structure-count", "features"],
    "genosift lmm --kinship-from-data --structure-count features": ["--method", "lmm", "--kinship-from-data",
                                                                    "--structure-count", "features"],
    "genosift lmm --kinship NJ tree": ["--method", "lmm", "--kinship", "{tree}"],
    "genosift lmm --kinship similarity_pyseer": ["--method", "lmm", "--kinship", "{similarity}"],
}
#: name -> the options after ``pyseer --phenotypes --kmers --min-af --max-af --cpu``
PYSEER = {
    "pyseer fixed effects, MDS 10 of the k-mer distance": ["--distances", "{distances}", "--max-dimensions", "10"],
    "pyseer --lmm, similarity_pyseer": ["--lmm", "--similarity", "{similarity}"],
    "pyseer --lmm, NJ tree (phylogeny_distance --lmm)": ["--lmm", "--similarity", "{tree_similarity}"],
}
#: structure file -> (file name, whether pyseer makes it)
STRUCTURE_FILES = {"distances": ("distances.tsv", False), "tree": ("tree.nwk", False),
                   "similarity": ("similarity.tsv", True), "tree_similarity": ("tree_similarity.tsv", True)}
#: structure file -> the files it is made from (their time counts towards a pipeline that uses it)
NEEDS = {"tree": ("distances",), "tree_similarity": ("tree", "distances")}


# --- the truth and the measurements (tests/reference/test_bench_power.py checks these) -------------------------

_COMPLEMENT = str.maketrans("ACGTacgt", "TGCAtgca")


def reverse_complement(sequence):
    return sequence.translate(_COMPLEMENT)[::-1]


def causal_kmers(kmers, gene):
    """Bool per k-mer: a substring of ``gene`` or of its reverse complement."""
    back = reverse_complement(gene)
    return np.fromiter((k in gene or k in back for k in kmers), dtype=bool, count=len(kmers))


def read_kmers(path, samples):
    """``(kmers, presence)`` of an fsm-lite file (``KMER | sample:count ...``, gzip or plain):
    ``presence`` is bool, samples (in the order of ``samples``) x k-mers."""
    column = {s: i for i, s in enumerate(samples)}
    kmers, rows, cols = [], [], []
    opener = gzip.open if Path(path).read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as fh:
        for j, line in enumerate(fh):
            kmer, _, rest = line.partition(" | ")
            kmers.append(kmer)
            carriers = [column[t.rpartition(":")[0]] for t in rest.split()]
            rows.extend(carriers)
            cols.extend([j] * len(carriers))
    presence = np.zeros((len(samples), len(kmers)), dtype=bool)
    presence[np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)] = True
    return np.asarray(kmers, dtype=object), presence


def pattern_ids(presence):
    """Each k-mer's pattern: k-mers (columns) carried by the same samples share a number, numbered
    by first appearance."""
    packed = np.ascontiguousarray(np.packbits(presence, axis=0).T)  # k-mers x bytes
    keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # unique's numbering -> numbering by first appearance
    renumber = np.empty_like(order)
    renumber[order] = np.arange(order.size)
    return renumber[inverse.ravel()]


def inside_af(presence, min_af, max_af):
    af = presence.mean(axis=0)
    return (af >= min_af) & (af <= max_af)


def genomic_inflation(pvalues):
    """Median chi-square (1 df) of the finite p-values over its expected value."""
    from scipy import stats

    p = np.asarray(pvalues, dtype=float)
    p = p[np.isfinite(p)]
    if not p.size:
        return float("nan")
    return float(np.median(stats.chi2.isf(p, 1)) / stats.chi2.ppf(0.5, 1))


def measure(pvalues, ids, causal, inside, *, alpha=0.05, null=False):
    """What a run's p-values (one per k-mer, NaN where not tested) say of the truth.

    The threshold is ``alpha`` over the distinct patterns among the k-mers ``inside`` the
    allele-frequency range; a pattern is causal when it holds a causal k-mer, and takes the
    smallest p-value of its k-mers. On a ``null`` population no pattern is causal in effect: every
    pattern below the threshold is a false positive."""
    p = np.where(inside, np.asarray(pvalues, dtype=float), np.nan)
    n_patterns = int(np.unique(ids[inside]).size)
    threshold = alpha / n_patterns
    per = np.full(ids.max() + 1, np.inf)
    tested = np.isfinite(p)
    np.minimum.at(per, ids[tested], p[tested])
    seen = np.zeros(per.size, dtype=bool)
    seen[ids[tested]] = True
    is_causal = np.zeros(per.size, dtype=bool)
    is_causal[ids[causal & inside]] = True
    pattern_p = per[seen]
    best = float(per[is_causal & seen].min()) if (is_causal & seen).any() else float("nan")
    other = seen & ~is_causal
    passing = seen & (per < threshold)
    out = {
        "n_tested": int(tested.sum()), "n_patterns": n_patterns, "n_patterns_tested": int(seen.sum()),
        "threshold": threshold, "causal_pvalue": best, "found": bool(best < threshold),
        "causal_pattern_rank": int((per[other] < best).sum()) + 1 if np.isfinite(best) else None,
        "causal_kmer_rank": int((p[tested & ~causal] < best).sum()) + 1 if np.isfinite(best) else None,
        "noncausal_passing": int((passing & ~is_causal).sum()), "patterns_passing": int(passing.sum()),
        "lambda_patterns": genomic_inflation(pattern_p), "lambda_kmers": genomic_inflation(p[tested]),
        "share_at_one": float((pattern_p >= 0.995).mean()) if pattern_p.size else float("nan"),
    }
    if null:
        out["false_passing"] = out["patterns_passing"]
    return out


# --- populations ----------------------------------------------------------------------------------

@dataclass
class Population:
    design: str
    kind: str
    seed: int
    folder: Path
    samples: list
    causal_gene: str
    timings: dict
    facts: dict = field(default_factory=dict)

    @property
    def name(self):
        return f"{self.kind} s{self.seed}"

    @property
    def kmers(self):
        return self.folder / "kmers.txt.gz"

    @property
    def store(self):
        return self.folder / "kmers.gs.h5ad"

    @property
    def meta(self):
        return self.folder / "genomes" / "phenotype.tsv"

    @property
    def pheno(self):
        return self.folder / "pheno.tsv"


def snapshot(cache, source):
    """A copy of genosift's source that no edit reaches during the run, and what it is: the
    committed ``HEAD`` (``source="head"``) or the working tree as it is now (``"worktree"``), kept
    under ``cache`` by revision or by a digest of its files (numba's cache of kernels stays in it)."""
    root = ROOT
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                          text=True).stdout.strip() or "unknown"
    if source == "head":
        folder = Path(cache) / f"source-{head}"
        if not (folder / "src").exists():
            folder.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", "archive", "HEAD", "src"], cwd=root, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
        return folder / "src", f"git {head} (committed)"
    files = sorted(f for f in SRC.rglob("*") if f.is_file() and "__pycache__" not in f.parts
                   and f.suffix not in (".pyc", ".so") and ".egg-info" not in str(f))
    digest = hashlib.sha256()
    for f in files:
        digest.update(str(f.relative_to(SRC)).encode() + b"\0" + f.read_bytes())
    digest = digest.hexdigest()[:10]
    folder = Path(cache) / f"source-worktree-{digest}"
    if not (folder / "src").exists():
        for f in files:
            target = folder / "src" / f.relative_to(SRC)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True,
                           text=True).stdout.strip()
    return folder / "src", f"git {head}" + (f", working tree with local changes (digest {digest})" if dirty else "")


def genosift_command():
    return [sys.executable, "-m", "genosift"]


def environment():
    return dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def settings_of(design, kind, seed):
    return {"design": DESIGNS[design], "kind": KINDS[kind], "seed": seed, "fsm-lite": FSM_LITE}


def population(design, kind, seed, cache):
    """The population (simulated, counted and stored once, then read from ``cache``)."""
    settings = settings_of(design, kind, seed)
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]
    folder = Path(cache) / f"{design}-{kind}-s{seed}-{digest}"
    record = folder / "population.json"
    if record.exists():
        saved = json.loads(record.read_text())
        return Population(design, kind, seed, folder, saved["samples"], saved["causal_gene"], saved["timings"],
                          saved["facts"])
    sys.path.insert(0, str(SRC))
    import genosift as gs

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    timings = {}
    started = time.perf_counter()
    pop = gs.simulate_clonal_population(folder / "genomes", seed=seed, **DESIGNS[design], **KINDS[kind])
    timings["simulate"] = time.perf_counter() - started
    started = time.perf_counter()
    with open(folder / "kmers.txt", "wb") as out:
        subprocess.run(["fsm-lite", "-l", str(pop.file_list), "-t", str(folder / "fsm_index"), *FSM_LITE],
                       stdout=out, check=True, cwd=folder)
    timings["count"] = time.perf_counter() - started
    for leftover in folder.glob("fsm_index*"):
        leftover.unlink()
    with open(folder / "kmers.txt", "rb") as fh, gzip.open(folder / "kmers.txt.gz", "wb", compresslevel=1) as gz:
        shutil.copyfileobj(fh, gz)
    (folder / "kmers.txt").unlink()
    table = pop.table
    (folder / "pheno.tsv").write_text("samples\tphenotype\n" + "".join(
        f"{s}\t{v}\n" for s, v in zip(table.index, table["phenotype"])))
    started = time.perf_counter()
    subprocess.run(genosift_command() + ["convert", str(folder / "kmers.txt.gz"), "--meta", str(pop.phenotype),
                                         "--id", "sample", "-o", str(folder / "kmers.gs.h5ad"), "--quiet"],
                   check=True, capture_output=True, env=environment())
    timings["convert"] = time.perf_counter() - started
    facts = {"cases": int(table["phenotype"].sum()), "carriers": int(table["causal"].sum()),
             "cases_among_carriers": int(table.loc[table["causal"] == 1, "phenotype"].sum()),
             "cases_in_lineage_0": int(table.loc[table["lineage"] == 0, "phenotype"].sum()),
             "lineage_0": int((table["lineage"] == 0).sum())}
    saved = {"settings": settings, "samples": list(pop.samples), "causal_gene": pop.causal_gene,
             "timings": timings, "facts": facts}
    record.write_text(json.dumps(saved, indent=1))
    return Population(design, kind, seed, folder, saved["samples"], pop.causal_gene, timings, facts)


def presence_of(pop):
    """``(kmers, presence)`` of a population, cached as ``presence.npz``."""
    cached = pop.folder / "presence.npz"
    if cached.exists():
        saved = np.load(cached, allow_pickle=False)
        n = len(pop.samples)
        return saved["kmers"].astype(object), np.unpackbits(saved["packed"], axis=0, count=n).astype(bool)
    kmers, presence = read_kmers(pop.kmers, pop.samples)
    np.savez(cached, kmers=kmers.astype(str), packed=np.packbits(presence, axis=0))
    return kmers, presence


def kmer_distances(presence):
    """The share of the k-mers that one of two samples carries and the other lacks (n x n)."""
    n, p = presence.shape
    shared = np.zeros((n, n))
    for start in range(0, p, 20000):
        block = presence[:, start:start + 20000].astype(np.float64)
        shared += block @ block.T
    carried = np.diag(shared).copy()
    return (carried[:, None] + carried[None, :] - 2 * shared) / p


def neighbour_joining(distances, names):
    """The neighbour-joining tree of ``distances`` (negative branch lengths set to 0), rooted at the
    midpoint of its longest leaf-to-leaf path, as Newick text."""
    n = len(names)
    D = np.zeros((2 * n, 2 * n))
    D[:n, :n] = distances
    edges = {i: {} for i in range(2 * n)}
    active, new = list(range(n)), n
    while len(active) > 2:
        m = len(active)
        sub = D[np.ix_(active, active)]
        r = sub.sum(axis=1)
        Q = (m - 2) * sub - r[:, None] - r[None, :]
        np.fill_diagonal(Q, np.inf)
        a, b = np.unravel_index(np.argmin(Q), Q.shape)
        i, j = active[a], active[b]
        to_i = 0.5 * sub[a, b] + (r[a] - r[b]) / (2 * (m - 2))
        for leaf, length in ((i, to_i), (j, sub[a, b] - to_i)):
            edges[new][leaf] = edges[leaf][new] = max(length, 0.0)
        rest = [k for k in active if k not in (i, j)]
        D[new, rest] = D[rest, new] = 0.5 * (D[i, rest] + D[j, rest] - D[i, j])
        active = rest + [new]
        new += 1
    i, j = active
    edges[i][j] = edges[j][i] = max(D[i, j], 0.0)
    return _midpoint_newick(edges, names)


def _farthest(edges, start):
    """The node farthest from ``start`` and the path to it."""
    parent, depth, stack = {start: None}, {start: 0.0}, [start]
    while stack:
        node = stack.pop()
        for other, length in edges[node].items():
            if other not in parent:
                parent[other], depth[other] = node, depth[node] + length
                stack.append(other)
    end = max(depth, key=depth.get)
    path = [end]
    while parent[path[-1]] is not None:
        path.append(parent[path[-1]])
    return path, depth


def _midpoint_newick(edges, names):
    end_a = _farthest(edges, 0)[0][0]
    path, depth = _farthest(edges, end_a)  # from the far end back to end_a
    half = depth[path[0]] / 2
    # depth decreases along the path: the root goes on its first edge that reaches half of it
    k = next(k for k in range(len(path) - 1) if depth[path[k + 1]] <= half)
    below, above = path[k], path[k + 1]
    root = max(edges) + 1
    length = edges[below].pop(above)
    edges[above].pop(below)
    edges[root] = {below: depth[below] - half, above: length - (depth[below] - half)}
    edges[below][root], edges[above][root] = edges[root][below], edges[root][above]
    text, stack = {}, [(root, None, False)]
    while stack:  # post-order without recursion
        node, parent, ready = stack.pop()
        children = [c for c in edges[node] if c != parent]
        if not ready:
            stack.append((node, parent, True))
            stack.extend((c, node, False) for c in children)
            continue
        label = names[node] if node < len(names) else ""
        inner = "(" + ",".join(text[c] for c in children) + ")" if children else ""
        text[node] = inner + label + ("" if parent is None else f":{edges[node][parent]:.10g}")
    return text[root] + ";\n"


def write_square(path, matrix, names):
    lines = ["\t" + "\t".join(names)] + [name + "\t" + "\t".join(f"{v:.10g}" for v in row)
                                         for name, row in zip(names, matrix)]
    Path(path).write_text("\n".join(lines) + "\n")


class Tools:
    """Where pyseer is, and why not when it is not."""

    def __init__(self, pyseer, scripts):
        found = pyseer or shutil.which("pyseer") or str(ROOT.parent / "pyseer-venv" / "bin" / "pyseer")
        self.pyseer = Path(found) if found and Path(found).exists() else None
        self.scripts = Path(scripts) if scripts else ROOT.parent / "pyseer-src" / "scripts"
        self.why_not = None
        if self.pyseer is None:
            self.why_not = ("pyseer not found (on PATH, or --pyseer; set up with `python3 -m venv ../pyseer-venv` and "
                            "`../pyseer-venv/bin/pip install pyseer`: it imports glmnet_python on start, which only "
                            "its --wg enet uses)")
            return
        done = subprocess.run([str(self.pyseer), "--version"], capture_output=True, text=True)
        if done.returncode:
            self.why_not = f"{self.pyseer} --version fails: {(done.stderr or done.stdout).strip().splitlines()[-1]}"
            self.pyseer = None
        else:
            self.version = (done.stdout or done.stderr).strip()
        self.python = self.pyseer.parent / "python" if self.pyseer else None

    def similarity_pyseer(self):
        return self.pyseer.parent / "similarity_pyseer"

    def phylogeny_distance(self):
        script = self.scripts / "phylogeny_distance.py"
        return script if script.exists() else None


def structure_file(pop, which, tools, presence):
    """The path of structure file ``which`` of the population (made once, its time recorded), or
    ``(None, reason)``."""
    filename, by_pyseer = STRUCTURE_FILES[which]
    path = pop.folder / filename
    times = pop.folder / "structure-times.json"
    recorded = json.loads(times.read_text()) if times.exists() else {}
    if path.exists() and which in recorded:
        return path, None
    if by_pyseer and tools.pyseer is None:
        return None, tools.why_not
    started = time.perf_counter()
    if which == "distances":
        write_square(path, kmer_distances(presence), pop.samples)
    elif which == "tree":
        distances, why = structure_file(pop, "distances", tools, presence)
        import pandas as pd

        D = pd.read_csv(distances, sep="\t", index_col=0).loc[pop.samples, pop.samples].to_numpy()
        started = time.perf_counter()
        path.write_text(neighbour_joining(D, pop.samples))
    elif which == "similarity":
        listing = pop.folder / "samples.txt"
        listing.write_text("".join(s + "\n" for s in pop.samples))
        with open(path, "w") as out:
            done = subprocess.run([str(tools.similarity_pyseer()), "--kmers", str(pop.kmers), str(listing)],
                                  stdout=out, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            path.unlink()
            return None, f"similarity_pyseer failed: {done.stderr.strip().splitlines()[-1]}"
    elif which == "tree_similarity":
        script = tools.phylogeny_distance()
        if script is None:
            return None, f"pyseer's scripts/phylogeny_distance.py not found in {tools.scripts} (--pyseer-scripts)"
        tree, why = structure_file(pop, "tree", tools, presence)
        started = time.perf_counter()
        with open(path, "w") as out:
            done = subprocess.run([str(tools.python), str(script), "--lmm", str(tree)], stdout=out,
                                  stderr=subprocess.PIPE, text=True)
        if done.returncode:
            path.unlink()
            return None, f"phylogeny_distance.py failed: {done.stderr.strip().splitlines()[-1]}"
    recorded[which] = time.perf_counter() - started
    times.write_text(json.dumps(recorded, indent=1))
    return path, None


def structure_times(pop):
    times = pop.folder / "structure-times.json"
    return json.loads(times.read_text()) if times.exists() else {}


# --- running the pipelines ------------------------------------------------------------------------

def fill(options, pop, tools, presence):
    """``options`` with each ``{file}`` replaced by the population's structure file; ``(None,
    reason)`` when one cannot be made, and the files named."""
    out, used = [], []
    for option in options:
        names = re.findall(r"\{(\w+)\}", option)
        for which in names:
            path, why = structure_file(pop, which, tools, presence)
            if path is None:
                return None, why, used
            option = option.replace("{" + which + "}", str(path))
            used.append(which)
        out.append(option)
    return out, None, used


def timed(command, cwd, stdout=None):
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=environment(), text=True, capture_output=stdout is None,
                          stdout=stdout, stderr=subprocess.PIPE if stdout is not None else None)
    return time.perf_counter() - started, done


def first_error(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no message"


#: the genosift pipelines already run once by this process
WARM = set()


def run_genosift(pop, name, options, args, index, work):
    output = work / "ranking.tsv"
    command = genosift_command() + ["score", str(pop.store), "--target", "phenotype", "--binary", *options,
                                    "--min-af", str(args.min_af), "--max-af", str(args.max_af), "--threads",
                                    str(args.threads), "-o", str(output), "--force", "--quiet"]
    seconds, done = timed(command, work)
    if done.returncode == 0 and name not in WARM:  # its first run may compile kernels (numba's cache): not timed
        WARM.add(name)
        seconds, done = timed(command, work)
    if done.returncode:
        return None, seconds, {"error": first_error(done.stderr)}
    import pandas as pd

    table = pd.read_csv(output, sep="\t", usecols=["feature", "pvalue"])
    pvalues = np.full(len(index), np.nan)
    pvalues[table["feature"].map(index).to_numpy()] = table["pvalue"].to_numpy()
    sidecar = json.loads(Path(str(output) + ".json").read_text())
    info = {"n_patterns_printed": sidecar.get("n_patterns"), "lambda_printed": sidecar.get("genomic_inflation"),
            "job_seconds": sidecar.get("seconds")}
    if sidecar.get("structure"):
        info["coordinates"] = len(sidecar["structure"].get("eigenvalues", []))
    model = sidecar.get("model") or {}
    if model.get("model") == "logistic":  # the logistic mixed model: the random effect's variance
        info["tau"] = model["tau"]
    elif model.get("h2") is not None:
        info["h2"] = model["h2"]
    return pvalues, seconds, info


def run_pyseer(pop, options, args, tools, index, work):
    output = work / "pyseer.tsv"
    command = [str(tools.pyseer), "--phenotypes", str(pop.pheno), "--kmers", str(pop.kmers), *options,
               "--min-af", str(args.min_af), "--max-af", str(args.max_af), "--cpu", str(args.threads)]
    with open(output, "w") as out:
        seconds, done = timed(command, work, stdout=out)
    if done.returncode:
        return None, seconds, {"error": first_error(done.stderr)}
    import pandas as pd

    table = pd.read_csv(output, sep="\t", usecols=["variant", "lrt-pvalue"])
    pvalues = np.full(len(index), np.nan)
    pvalues[table["variant"].map(index).to_numpy()] = table["lrt-pvalue"].to_numpy(dtype=float)
    info = {}
    h2 = re.search(r"h\^2 = ([0-9.eE+-]+)", done.stderr)
    if h2:
        info["h2"] = float(h2.group(1))
    return pvalues, seconds, info


def pipelines(args, tools):
    chosen = [s.strip() for s in args.pipelines.split(",")] if args.pipelines else None
    out = [(name, "genosift", options) for name, options in GENOSIFT.items()]
    if not args.no_pyseer:
        out += [(name, "pyseer", options) for name, options in PYSEER.items()]
    skip = [s.strip() for s in args.skip_pipelines.split(",") if s.strip()]
    return [entry for entry in out if (chosen is None or any(c in entry[0] for c in chosen))
            and not any(c in entry[0] for c in skip)]


def evaluate_population(pop, args, tools, work, log):
    kmers, presence = presence_of(pop)
    index = {k: i for i, k in enumerate(kmers)}
    ids = pattern_ids(presence)
    causal = causal_kmers(kmers, pop.causal_gene)
    inside = inside_af(presence, args.min_af, args.max_af)
    n_patterns = int(np.unique(ids[inside]).size)
    summary = {"design": pop.design, "kind": pop.kind, "seed": pop.seed, "folder": str(pop.folder),
               "n_kmers": int(len(kmers)), "n_inside": int(inside.sum()), "n_patterns": n_patterns,
               "threshold": args.alpha / n_patterns, "causal_kmers": int((causal & inside).sum()),
               "causal_patterns": int(np.unique(ids[causal & inside]).size), **pop.facts,
               "timings": pop.timings, "runs": {}}
    for name, tool, options in pipelines(args, tools):
        filled, why, used = fill(options, pop, tools, presence)
        if filled is None:
            summary["runs"][name] = {"skipped": why}
            log(f"  {name}: skipped ({why})")
            continue
        if tool == "genosift":
            pvalues, seconds, info = run_genosift(pop, name, filled, args, index, work)
            inputs = pop.timings["convert"]
        else:
            pvalues, seconds, info = run_pyseer(pop, filled, args, tools, index, work)
            inputs = 0.0
        times = structure_times(pop)
        inputs += sum(times.get(f, 0.0) for f in set(used) | {d for u in used for d in NEEDS.get(u, ())})
        run = {"tool": tool, "command": [tool] + filled, "seconds": seconds, "seconds_with_inputs": seconds + inputs,
               **info}
        if pvalues is not None:
            run.update(measure(pvalues, ids, causal, inside, alpha=args.alpha, null=pop.kind == "null"))
        summary["runs"][name] = run
        log(f"  {name}: {describe(run)}")
    return summary


def describe(run):
    if "error" in run:
        return f"refused ({run['error']}), {run['seconds']:.1f} s"
    extra = [f"{run['coordinates']} PCs" if "coordinates" in run else "", f"h2 {run['h2']:.3g}" if "h2" in run else "",
             f"tau {run['tau']:.3g}" if "tau" in run else ""]
    return (f"{'FOUND' if run['found'] else 'missed'} p = {run['causal_pvalue']:.3g} (pattern rank "
            f"{run['causal_pattern_rank']}), {run['noncausal_passing']} non-causal pattern(s) pass, lambda "
            f"{run['lambda_patterns']:.3f} (patterns) / {run['lambda_kmers']:.3f} (k-mers), {run['seconds']:.1f} s "
            + " ".join(e for e in extra if e)).strip()


# --- the report -----------------------------------------------------------------------------------

def median(values):
    values = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.median(values)) if values else float("nan")


def summarise(populations, names):
    """design -> pipeline -> the figures of the design's table."""
    out = {}
    for design in dict.fromkeys(p["design"] for p in populations):
        rows = {}
        for name in names:
            runs = {kind: [p["runs"][name] for p in populations if p["design"] == design and p["kind"] == kind
                           and name in p["runs"] and "skipped" not in p["runs"][name]] for kind in KINDS}
            if not runs["causal"] and not runs["null"]:
                continue
            answered = {kind: [r for r in runs[kind] if "error" not in r] for kind in KINDS}
            rows[name] = {
                "found": sum(r["found"] for r in answered["causal"]), "causal_populations": len(runs["causal"]),
                "causal_refused": len(runs["causal"]) - len(answered["causal"]),
                "median_noncausal_passing": median([r["noncausal_passing"] for r in answered["causal"]]),
                "null_with_pass": sum(r["patterns_passing"] > 0 for r in answered["null"]),
                "null_populations": len(runs["null"]), "null_refused": len(runs["null"]) - len(answered["null"]),
                "median_null_passing": median([r["patterns_passing"] for r in answered["null"]]),
                "median_lambda_patterns": median([r["lambda_patterns"] for r in answered["causal"]]),
                "median_lambda_kmers": median([r["lambda_kmers"] for r in answered["causal"]]),
                "median_null_lambda_patterns": median([r["lambda_patterns"] for r in answered["null"]]),
                "median_null_lambda_kmers": median([r["lambda_kmers"] for r in answered["null"]]),
                "median_seconds": median([r["seconds"] for r in runs["causal"] + runs["null"]]),
                "median_seconds_with_inputs": median([r["seconds_with_inputs"] for r in runs["causal"] + runs["null"]]),
            }
        out[design] = rows
    return out


def fmt(value, digits=3):
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return ""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.{digits}g}"
    return f"{int(value):,}"


def fmt_lambda(patterns, kmers):
    return f"{fmt(patterns)} ({fmt(kmers)})" if fmt(patterns) else ""


def render(args, populations, table, skipped, started, elapsed, tools):
    argv = [__file__, *args.argv]
    lines = [*header("Power and false positives on simulated clonal populations", load=args.load,
                     started=datetime.datetime.fromtimestamp(started).astimezone(),
                     revision=args.revision.removeprefix("git "), argv=argv),
             f"Ran {elapsed / 60:.1f} min; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end; "
             f"pyseer: {getattr(tools, 'version', None) or tools.why_not or 'not run (--no-pyseer)'}.", "",
             f"Every pipeline is its own process with {args.threads} thread(s) (`--threads` / `--cpu`), k-mers inside "
             f"the allele-frequency range [{args.min_af:g}, {args.max_af:g}]; the threshold is {args.alpha:g} over "
             "the distinct presence/absence patterns of those k-mers (the same for every pipeline of a population). "
             "A null population has the lineage-0 effect only (`causal_log_odds=0`): every pattern passing there is "
             "a false positive. 'Non-causal passing' counts the distinct patterns without a causal k-mer below the "
             "threshold; lambda is the median chi-square of one p-value per pattern (per k-mer in brackets), over the "
             "populations with the causal gene, then over the null ones. "
             "Time: the command's wall time (with the files it needs: genosift's store, the distance matrix, tree "
             "or similarity, in brackets). Designs (`DESIGNS` in the script; everything else is the simulator's "
             "default):", ""]
    for design in table:
        lines.append(f"- `{design}`: " + ", ".join(f"{k}={v}" for k, v in DESIGNS[design].items()))
    for why in sorted(set(skipped)):
        lines.append(f"- skipped: {why}")
    for design, rows in table.items():
        pops = [p for p in populations if p["design"] == design]
        lines += ["", f"## {design}", "",
                  "| pipeline | causal gene found | median non-causal patterns passing | null populations with "
                  "any pass | median patterns passing on null | median pattern lambda (k-mers) | the same on null "
                  "| median seconds (with inputs) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, r in rows.items():
            found = f"{r['found']}/{r['causal_populations']}" + (f" ({r['causal_refused']} refused)"
                                                                 if r["causal_refused"] else "")
            null = f"{r['null_with_pass']}/{r['null_populations']}" + (f" ({r['null_refused']} refused)"
                                                                        if r["null_refused"] else "")
            lines.append(f"| {name} | {found} | {fmt(r['median_noncausal_passing'])} | {null} | "
                         f"{fmt(r['median_null_passing'])} | "
                         f"{fmt_lambda(r['median_lambda_patterns'], r['median_lambda_kmers'])} | "
                         f"{fmt_lambda(r['median_null_lambda_patterns'], r['median_null_lambda_kmers'])} | "
                         f"{r['median_seconds']:.1f} ({r['median_seconds_with_inputs']:.1f}) |")
        lines += ["", "| population | k-mers (in range) | patterns | threshold | causal k-mers (patterns) | "
                  "carriers (cases) | cases (lineage 0) | simulate + count + convert s | structure files s |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for p in pops:
            t, files = p["timings"], structure_times_of(p)
            lines.append(f"| {p['kind']} s{p['seed']} | {p['n_kmers']:,} ({p['n_inside']:,}) | {p['n_patterns']:,} | "
                         f"{p['threshold']:.3g} | {p['causal_kmers']} ({p['causal_patterns']}) | {p['carriers']} "
                         f"({p['cases_among_carriers']}) | {p['cases']} ({p['cases_in_lineage_0']}/{p['lineage_0']}) | "
                         f"{t['simulate']:.1f} + {t['count']:.1f} + {t['convert']:.1f} | "
                         + ", ".join(f"{k} {v:.1f}" for k, v in files.items()) + " |")
        lines += ["", "| population | pipeline | found | causal p | pattern rank | k-mer rank | non-causal passing | "
                  "all passing | pattern lambda (k-mers) | seconds | notes |",
                  "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        for p in pops:
            for name, r in p["runs"].items():
                if "skipped" in r:
                    continue
                if "error" in r:
                    lines.append(f"| {p['kind']} s{p['seed']} | {name} | refused | | | | | | | {r['seconds']:.1f} | "
                                 f"{r['error'].replace('|', '/')} |")
                    continue
                notes = "; ".join(run_notes(r, p))
                lines.append(f"| {p['kind']} s{p['seed']} | {name} | {'yes' if r['found'] else 'no'} | "
                             f"{r['causal_pvalue']:.3g} | {fmt(r['causal_pattern_rank'])} | "
                             f"{fmt(r['causal_kmer_rank'])} | "
                             f"{r['noncausal_passing']} | {r['patterns_passing']} | {r['lambda_patterns']:.3f} "
                             f"({r['lambda_kmers']:.3f}) | {r['seconds']:.1f} | {notes} |")
    return "\n".join(lines) + "\n", command(argv)


def run_notes(r, p):
    """What a run's detail row says beside its figures."""
    out = [f"{r['coordinates']} PCs" if "coordinates" in r else "", f"h2 {r['h2']:.3g}" if "h2" in r else "",
           f"tau {r['tau']:.3g}" if "tau" in r else "",
           f"p >= 0.995 for {r['share_at_one']:.0%} of the patterns" if r.get("share_at_one", 0) > 0.1 else ""]
    if r.get("n_patterns_printed") not in (None, p["n_patterns"]):
        out.append(f"genosift counted {r['n_patterns_printed']:,} patterns")
    return [x for x in out if x]


def structure_times_of(p):
    times = Path(p["folder"]) / "structure-times.json"
    return json.loads(times.read_text()) if times.exists() else {}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", default=",".join(DEFAULT_DESIGNS), help=f"comma-separated, of {list(DESIGNS)}")
    parser.add_argument("--seeds", default="1,2,3,4,5,6", help="seeds of the populations with a causal gene")
    parser.add_argument("--null-seeds", default="101,102,103,104", help="seeds of the null populations ('' for none)")
    parser.add_argument("--quick", action="store_true", help="2 causal seeds and 1 null seed per design")
    parser.add_argument("--pipelines", default="", help="comma-separated parts of pipeline names to run (default all)")
    parser.add_argument("--skip-pipelines", default="", help="comma-separated parts of pipeline names not to run")
    parser.add_argument("--no-pyseer", action="store_true")
    parser.add_argument("--pyseer", default=None, help="the pyseer executable (default: on PATH, else ../pyseer-venv)")
    parser.add_argument("--pyseer-scripts", default=None, help="pyseer's scripts/ (default ../pyseer-src/scripts)")
    parser.add_argument("--cache", default="/tmp/genosift-power")
    parser.add_argument("--source", choices=("worktree", "head"), default="worktree",
                        help="the genosift measured: a copy of the working tree's src/ as it is at the start (edits "
                             "made during the run do not reach it), or of the committed HEAD")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--min-af", type=float, default=0.05)
    parser.add_argument("--max-af", type=float, default=0.95)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--output", default=None, help="the markdown report (default "
                                                       "benchmarks/results/RESULTS-power.md); the JSON is written "
                                                       "beside it")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if shutil.which("fsm-lite") is None:
        sys.exit("fsm-lite is needed: apt-get install fsm-lite")
    unknown = [d for d in args.designs.split(",") if d not in DESIGNS]
    if unknown:
        sys.exit(f"unknown design(s) {unknown}: choose among {list(DESIGNS)}")
    seeds = [1, 2] if args.quick else [int(s) for s in args.seeds.split(",") if s.strip()]
    null_seeds = [101] if args.quick else [int(s) for s in args.null_seeds.split(",") if s.strip()]
    tools = Tools(args.pyseer, args.pyseer_scripts)
    if args.no_pyseer:
        tools.why_not = "not run (--no-pyseer)"
    elif tools.why_not:
        print(f"pyseer's pipelines are skipped: {tools.why_not}", flush=True)
    global SRC
    args.load = os.getloadavg()
    SRC, args.revision = snapshot(args.cache, args.source)
    args.machine = machine(args.load)
    print(f"genosift: {args.revision}, run from {SRC}", flush=True)
    started = time.time()
    work = Path(args.cache) / "work"
    work.mkdir(parents=True, exist_ok=True)
    populations, skipped = [], []
    log = functools.partial(print, flush=True)
    for design in args.designs.split(","):
        for kind, chosen in (("causal", seeds), ("null", null_seeds)):
            for seed in chosen:
                began = time.perf_counter()
                pop = population(design, kind, seed, args.cache)
                log(f"{design} {kind} s{seed}: ready in {time.perf_counter() - began:.1f} s (simulate "
                    f"{pop.timings['simulate']:.1f} + count {pop.timings['count']:.1f} + convert "
                    f"{pop.timings['convert']:.1f} s when made)")
                result = evaluate_population(pop, args, tools, work, log)
                skipped += [r["skipped"] for r in result["runs"].values() if "skipped" in r]
                populations.append(result)
    names = [name for name, _, _ in pipelines(args, tools)]
    table = summarise(populations, names)
    text, command = render(args, populations, table, skipped, started, time.time() - started, tools)
    print(text)
    out = Path(args.output) if args.output else RESULTS / "RESULTS-power.md"
    out.write_text(text)
    settings = {"designs": {d: DESIGNS[d] for d in args.designs.split(",")}, "kinds": KINDS, "fsm-lite": FSM_LITE,
                "min_af": args.min_af, "max_af": args.max_af, "alpha": args.alpha, "threads": args.threads}
    record = {"command": command, "date": time.strftime("%Y-%m-%d %H:%M", time.localtime(started)),
              "machine": args.machine, "revision": args.revision, "settings": settings,
              "pipelines": {**{n: ["genosift", "score", *o] for n, o in GENOSIFT.items()},
                            **{n: ["pyseer", *o] for n, o in PYSEER.items()}},
              "summary": table, "populations": populations}
    out.with_suffix(".json").write_text(json.dumps(record, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
