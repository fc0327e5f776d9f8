"""The power benchmark's own measurements against direct computations: the k-mer table it reads
from fsm-lite's text, the causal k-mers, the patterns, the figures of one run, and the tree it
builds for the tree-kinship pipelines."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from scipy import stats

from conftest import load_benchmark

bench = load_benchmark("bench_power")


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    """A small simulated population and fsm-lite's k-mers of it."""
    if shutil.which("fsm-lite") is None:
        pytest.skip("fsm-lite is not installed (apt-get install fsm-lite)")
    import genosift as gs

    folder = tmp_path_factory.mktemp("power")
    pop = gs.simulate_clonal_population(folder / "g", n_genomes=24, n_lineages=3, seed=5)
    text = subprocess.run(["fsm-lite", "-l", str(pop.file_list), "-t", str(folder / "idx"), *bench.FSM_LITE],
                          check=True, capture_output=True, text=True, cwd=folder).stdout
    (folder / "kmers.txt").write_text(text)
    return pop, folder / "kmers.txt", text


def test_the_kmer_table_is_the_one_genosift_reads(counted):
    pop, path, _ = counted
    import genosift as gs

    kmers, presence = bench.read_kmers(path, pop.samples)
    data = gs.io.read(path)
    rows = [list(data.sample_ids).index(s) for s in pop.samples]
    dense = np.asarray(data.X[rows].todense()) > 0
    assert list(kmers) == list(data.feature_names)
    assert np.array_equal(presence, dense)


def test_causal_kmers_are_the_substrings_of_the_gene_on_either_strand(counted):
    pop, path, _ = counted
    kmers, _ = bench.read_kmers(path, pop.samples)
    gene = pop.causal_gene
    back = gene.translate(str.maketrans("ACGT", "TGCA"))[::-1]
    pieces = {s[i:i + k] for s in (gene, back) for k in range(16, 32) for i in range(len(s) - k + 1)}
    expected = np.array([k in pieces for k in kmers])
    found = bench.causal_kmers(kmers, gene)
    assert np.array_equal(found, expected)
    assert found.sum() > 100  # the gene's k-mers are there, carried by its carriers alone
    _, presence = bench.read_kmers(path, pop.samples)
    carriers = pop.table["causal"].to_numpy().astype(bool)
    assert np.array_equal(presence[:, found].all(axis=1), carriers)


def test_patterns_are_the_distinct_columns(counted):
    pop, path, _ = counted
    import genosift as gs

    _, presence = bench.read_kmers(path, pop.samples)
    ids = bench.pattern_ids(presence)
    _, first, inverse = np.unique(presence.T, axis=0, return_index=True, return_inverse=True)
    assert ids.max() + 1 == first.size
    pairs = np.unique(np.column_stack([ids, inverse.ravel()]), axis=0)
    assert pairs.shape[0] == first.size  # each pattern is one distinct column, and each column one pattern
    assert ids[0] == 0 and np.all(np.diff(np.maximum.accumulate(ids)) <= 1)  # numbered by first appearance
    inside = bench.inside_af(presence, 0.05, 0.95)
    assert np.unique(ids[inside]).size == gs.count_patterns(path, min_af=0.05, max_af=0.95).n_patterns


def test_the_figures_of_one_run():
    # 6 k-mers in 4 patterns (0: the causal gene, k-mers 0-1; 1: k-mers 2-3; 2: k-mer 4; 3: k-mer 5 out of range)
    ids = np.array([0, 0, 1, 1, 2, 3])
    causal = np.array([True, True, False, False, False, False])
    inside = np.array([True] * 5 + [False])
    p = np.array([1e-3, 1e-3, 1e-4, 1e-4, 0.5, 1e-9])
    got = bench.measure(p, ids, causal, inside, alpha=0.03)
    assert got["n_patterns"] == 3 and got["threshold"] == pytest.approx(0.01)
    assert got["found"] and got["causal_pvalue"] == 1e-3
    assert got["causal_pattern_rank"] == 2 and got["causal_kmer_rank"] == 3
    assert got["noncausal_passing"] == 1 and got["patterns_passing"] == 2 and got["share_at_one"] == 0
    chi = stats.chi2.isf(np.array([1e-3, 1e-4, 0.5]), 1)
    assert got["lambda_patterns"] == pytest.approx(np.median(chi) / stats.chi2.ppf(0.5, 1))
    chi = stats.chi2.isf(p[:5], 1)
    assert got["lambda_kmers"] == pytest.approx(np.median(chi) / stats.chi2.ppf(0.5, 1))
    missed = bench.measure(np.where(causal, 0.02, p), ids, causal, inside, alpha=0.03, null=True)
    assert not missed["found"] and missed["false_passing"] == 1 and missed["causal_pattern_rank"] == 2
    untested = bench.measure(np.where(causal, np.nan, p), ids, causal, inside, alpha=0.03)
    assert not untested["found"] and untested["causal_pattern_rank"] is None and untested["n_tested"] == 3


def test_the_tree_of_an_additive_distance_is_recovered_and_rooted_at_its_midpoint(tmp_path):
    # the tree ((A:1,B:2):1,(C:1,D:3):2): its longest path B-D (8) has its midpoint 2 above A and B's
    # ancestor, so the rooted tree is ((A:1,B:2):2,(C:1,D:3):1)
    from genosift.genomics.structure import tree_kinship

    names = ["A", "B", "C", "D"]
    D = np.array([[0, 3, 5, 7], [3, 0, 6, 8], [5, 6, 0, 4], [7, 8, 4, 0]], dtype=float)
    path = tmp_path / "t.nwk"
    path.write_text(bench.neighbour_joining(D, names))
    K = tree_kinship(path).loc[names, names].to_numpy()
    expected = np.array([[3, 2, 0, 0], [2, 4, 0, 0], [0, 0, 2, 1], [0, 0, 1, 4]], dtype=float)
    assert np.allclose(K, expected)


def test_the_kmer_distance_is_the_share_of_kmers_one_sample_lacks():
    rng = np.random.default_rng(0)
    presence = rng.random((7, 45000)) < 0.3  # more k-mers than one block
    D = bench.kmer_distances(presence)
    direct = (presence[:, None, :] != presence[None, :, :]).mean(axis=2)
    assert np.allclose(D, direct)
