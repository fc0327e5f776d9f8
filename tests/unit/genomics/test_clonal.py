"""The worked example: a simulated clonal population, k-mers counted by fsm-lite, and the marginal
ranking against the ranking adjusted for population structure (principal coordinates)."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.genomics.clonal import clonal_gene_table, simulate_clonal_population
from genosift.genomics.structure import principal_coordinates

_COMPLEMENT = str.maketrans("ACGT", "TGCA")


def count_kmers(population, folder, *, min_length=16, max_length=31):
    """fsm-lite's k-mers of the population's genomes (in at least two of them), as a file."""
    if shutil.which("fsm-lite") is None:
        pytest.skip("fsm-lite is not installed (apt-get install fsm-lite)")
    run = subprocess.run(["fsm-lite", "-l", str(population.file_list), "-t", str(folder / "index"), "-s", "2",
                          "-m", str(min_length), "-M", str(max_length)], capture_output=True, text=True, check=True)
    out = folder / "kmers.txt"
    out.write_text(run.stdout)
    return out


def _of_gene(kmers, gene):
    """Which k-mers are substrings of ``gene``, on either strand."""
    return np.array([k in gene or k[::-1].translate(_COMPLEMENT) in gene for k in kmers])


def test_simulated_population_is_as_described(tmp_path):
    pop = simulate_clonal_population(tmp_path, n_genomes=30, n_lineages=3, seed=4)
    table = pd.read_csv(pop.phenotype, sep="\t", index_col="sample")
    pd.testing.assert_frame_equal(table, pop.table)
    assert pop.samples == table.index.tolist() and table["lineage"].value_counts().tolist() == [10, 10, 10]
    records = {}
    for sample, path in zip(pop.samples, pop.fasta):
        text = path.read_text().split(">")[1:]
        records[sample] = dict(r.split("\n", 1) for r in text)
        assert (pop.causal_gene + "\n" in records[sample].values()) == bool(table.loc[sample, "causal"])
    core = {s: r["core"].strip() for s, r in records.items()}
    same_lineage = [sum(a != b for a, b in zip(core["iso_000"], core[s])) for s in pop.samples[1:10]]
    other = [sum(a != b for a, b in zip(core["iso_000"], core[s])) for s in pop.samples[10:]]
    assert max(same_lineage) <= 6 < 100 <= min(other)  # private substitutions only, against two branches
    again = simulate_clonal_population(tmp_path / "again", n_genomes=30, n_lineages=3, seed=4)
    assert [p.read_text() for p in again.fasta] == [p.read_text() for p in pop.fasta]
    with pytest.raises(ValueError, match="'n_genomes' parameter of simulate_clonal_population"):
        simulate_clonal_population(tmp_path, n_genomes=5, n_lineages=3)


def test_the_gene_table_is_the_written_population(tmp_path):
    keywords = dict(n_genomes=30, n_lineages=3, genes_per_lineage=2, n_random_genes=3, seed=7)
    pop = simulate_clonal_population(tmp_path, **keywords)
    presence, genes, lineage, phenotype, causal = clonal_gene_table(**keywords)
    assert presence.dtype == np.int8 and presence.shape == (30, 3 * 2 + 3 + 1)
    assert genes == ["lin0_1", "lin0_2", "lin1_1", "lin1_2", "lin2_1", "lin2_2", "acc_1", "acc_2", "acc_3", "causal"]
    assert causal == 9
    np.testing.assert_array_equal(lineage, pop.table["lineage"].to_numpy())
    np.testing.assert_array_equal(phenotype, pop.table["phenotype"].to_numpy())
    np.testing.assert_array_equal(presence[:, causal], pop.table["causal"].to_numpy())
    # each gene's sequence, read back from the reference's annotation, is in exactly the genomes the table says
    reference = pop.reference.read_text().split("\n", 1)[1].replace("\n", "")
    rows = [line.split("\t") for line in pop.annotation.read_text().splitlines() if "\tgene\t" in line]
    where = {r[8].split("Name=")[1].split(";")[0]: (int(r[3]), int(r[4]), r[6]) for r in rows}
    texts = [path.read_text() for path in pop.fasta]
    for j, name in enumerate(genes):
        start, end, strand = where[name]
        sequence = reference[start - 1:end]
        sequence = sequence if strand == "+" else sequence[::-1].translate(_COMPLEMENT)
        np.testing.assert_array_equal(presence[:, j], [sequence in text for text in texts], err_msg=name)
    markers = presence[:, :6].reshape(30, 3, 2)  # lineage k's markers: in most of lineage k, few others
    for k in range(3):
        assert markers[lineage == k, k].mean() > 0.8 > 0.2 > markers[lineage != k, k].mean()
    again = clonal_gene_table(**keywords)
    np.testing.assert_array_equal(again[0], presence)
    with pytest.raises(ValueError, match="'n_genomes' parameter of clonal_gene_table"):
        clonal_gene_table(n_genomes=5, n_lineages=3)


def _ranking(method, carried, y, covariates=None):
    """The method's p-values and its ranking (``gs.score``'s order, best first)."""
    result = gs.score(carried, y, method=method, covariates=covariates)
    return result.pvalues, result.ranking


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clonal")
    pop = simulate_clonal_population(folder, n_genomes=50, seed=0)
    ds = gs.io.read(count_kmers(pop, folder))
    table = pop.table.loc[ds.sample_ids]
    carried = (ds.X > 0).toarray()
    causal = _of_gene(ds.feature_names, pop.causal_gene)
    in_lineage = table["lineage"].to_numpy() == pop.confounded_lineage
    return ds, table["phenotype"].to_numpy(), carried, causal, in_lineage


def _lineage_marker(carried, in_lineage, j):
    agreement = np.mean(carried[:, j] == in_lineage)
    return max(agreement, 1 - agreement) >= 0.95


@pytest.mark.parametrize("method", ["chi2", "logistic"])
def test_the_marginal_ranking_puts_a_lineage_marker_first(counted, method):
    _, y, carried, causal, in_lineage = counted
    pvalues, order = _ranking(method, carried, y)
    first = order[0]
    assert not causal[first] and _lineage_marker(carried, in_lineage, first)
    assert np.flatnonzero(causal[order])[0] > 1000 and np.nanmin(pvalues[causal]) > 0.01


@pytest.mark.parametrize("method", ["regression", "logistic"])
def test_structure_moves_the_causal_gene_ahead_of_the_lineage_markers(counted, method):
    ds, y, carried, causal, in_lineage = counted
    pcs = principal_coordinates(ds, 3)
    assert pcs.index.tolist() == ds.sample_ids.tolist()
    marker = gs.score(carried, y, method="chi2").ranking[0]
    pvalues, order = _ranking(method, carried, y, pcs)  # rows in the data's order
    assert causal[order[:3]].all()  # the three best adjusted k-mers are the causal gene's
    assert pvalues[order[0]] < 5e-3  # 50 genomes: 7e-4 (logistic) and 1.1e-3 (regression) with each pattern once
    assert np.flatnonzero(order == marker)[0] > 100  # the lineage marker, given the lineages, says little
