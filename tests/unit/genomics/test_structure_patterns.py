"""Population structure over distinct patterns (``distinct=True``, the default of
``principal_coordinates``, ``kinship``, ``--structure`` and ``--kinship-from-data``): each
distinct column counted once, wherever its copies are, in every input form; and on a clonal
population the answer it gives (the lineages make the coordinates, the causal gene is found),
where counting every k-mer adjusts the causal gene away."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from test_clonal import _of_gene, count_kmers

import genosift as gs
from genosift import kinship, principal_coordinates, simulate_clonal_population
from genosift.cli import main
from genosift.core.distinct import FirstColumns
from genosift.io import Dataset, open_store, write_store


def _first_columns(X):
    """The columns of ``X`` that no earlier column equals, in order: numpy's unique, by definition."""
    return X[:, np.sort(np.unique(X, axis=1, return_index=True)[1])]


def _copies(seed=0, n=30, p=400):
    """Counts of three lineages, with copies of columns near and far from their originals."""
    rng = np.random.default_rng(seed)
    lineage = np.repeat(np.arange(3), n // 3)
    carried = rng.random((n, p)) < np.where(lineage[:, None] == rng.integers(0, 3, p), 0.8, 0.15)
    X = (carried * rng.integers(1, 4, (n, p))).astype(np.float64)
    X[:, 5:25] = X[:, :1]  # one pattern twenty times: an accessory gene of many k-mers
    X[:, 390:] = X[:, 100:110]  # copies in a later block
    return X


def test_first_columns_keeps_each_distinct_column_once_across_blocks():
    X = _copies()
    for form in (np.asarray, sp.csr_matrix, sp.csc_matrix):
        first = FirstColumns()
        kept = [first.keep(form(X[:, j0:j0 + 37])) for j0 in range(0, X.shape[1], 37)]
        got = np.hstack([k.toarray() if sp.issparse(k) else k for k in kept])
        np.testing.assert_array_equal(got, _first_columns(X))
        assert first.seen == _first_columns(X).shape[1] and first.total == X.shape[1]


@pytest.mark.parametrize("binary", [False, True])
def test_each_pattern_once_is_the_structure_of_the_distinct_columns_in_every_form(tmp_path, binary):
    X = _copies(seed=1)
    read = (X > 0).astype(np.float64) if binary else X
    once = _first_columns(read)
    assert once.shape[1] < 380
    ids = np.array([f"s{i}" for i in range(len(X))], dtype=object)
    names = np.array([f"k{j}" for j in range(X.shape[1])], dtype=object)
    metric = "kmds" if binary else "euclidean"
    ref = principal_coordinates(once, 3, metric=metric, binary=binary, distinct=False)
    K_ref = kinship(once, binary=binary, distinct=False)
    assert not np.allclose(principal_coordinates(X, 3, metric=metric, binary=binary, distinct=False).to_numpy(),
                           ref.to_numpy(), atol=1e-3)  # the copies weigh when every column counts
    frame = pd.DataFrame(X, index=pd.Index(ids, name="id"), columns=names)
    forms = {"dense": X, "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X), "frame": frame,
             "dataset": Dataset(sp.csr_matrix(X), ids, names),
             "store": write_store(Dataset(sp.csr_matrix(X), ids, names), tmp_path / f"s{binary}.gs.h5ad")}
    forms["Store"] = open_store(forms["store"])
    for name, form in forms.items():
        got = principal_coordinates(form, 3, metric=metric, binary=binary, chunk_bytes=30 * 8 * 40)  # 40 a block
        np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), rtol=0, atol=1e-10, err_msg=name)
        assert got.attrs["distinct"] and got.attrs["n_used"] == once.shape[1], name
        K = kinship(form, binary=binary, chunk_bytes=30 * 8 * 40)
        np.testing.assert_allclose(np.asarray(K), K_ref, rtol=0, atol=1e-12, err_msg=name)


def test_distinct_must_be_a_bool():
    with pytest.raises(ValueError, match="distinct"):
        principal_coordinates(_copies(), 2, distinct="yes")
    with pytest.raises(ValueError, match="distinct"):
        kinship(_copies(), distinct=1)


@pytest.fixture(scope="module")
def clonal(tmp_path_factory):
    """200 genomes of 8 lineages with the simulator's default gene sizes: its 4 random accessory
    genes and the causal one each hold a few hundred k-mers of one pattern."""
    folder = tmp_path_factory.mktemp("clonal8")
    pop = simulate_clonal_population(folder, n_genomes=200, n_lineages=8, seed=1)
    kmers = count_kmers(pop, folder)
    ds = gs.io.read(kmers)
    table = pop.table.loc[ds.sample_ids]
    return folder, kmers, ds, table, _of_gene(ds.feature_names, pop.causal_gene)


def _lineage_r2(pcs, lineage):
    D = pd.get_dummies(lineage).to_numpy(float)
    out = []
    for v in pcs.to_numpy().T:
        fitted = D @ np.linalg.lstsq(D, v, rcond=None)[0]
        out.append(1 - np.sum((v - fitted) ** 2) / np.sum((v - v.mean()) ** 2))
    return np.array(out)


def test_each_pattern_once_the_coordinates_are_the_lineages_and_the_causal_gene_is_found(clonal):
    _, _, ds, table, causal = clonal
    y, lineage = table["phenotype"].to_numpy(), table["lineage"].to_numpy()
    carried = (ds.X > 0).astype(np.float64)
    threshold = gs.count_patterns(carried).threshold(0.05)
    once = principal_coordinates(ds, "auto")
    assert once.shape[1] == 7 and (_lineage_r2(once, lineage) > 0.95).all()
    found = gs.score(carried, y, method="logistic", covariates=once.to_numpy())
    assert causal[found.ranking[:causal.sum()]].all()  # the causal gene's k-mers first, all of them
    assert found.pvalues[causal].max() < threshold / 1000
    # counted by k-mer, each accessory gene takes a coordinate of its own, the causal one among them
    every = principal_coordinates(ds, "auto", distinct=False)
    r2 = _lineage_r2(every, lineage)
    assert every.shape[1] == 12 and (r2[:7] > 0.95).all() and (r2[7:] < 0.05).all()
    missed = gs.score(carried, y, method="logistic", covariates=every.to_numpy())
    assert missed.pvalues[causal].min() > 0.01


def _readme_lines():
    text = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    marker = "<!-- found-output: tests/unit/genomics/test_structure_patterns.py checks these lines of its summary -->"
    assert marker in text, "the README lost the example that finds the gene"
    lines = re.search(r"```text\n(.*?)```", text[text.index(marker):], re.S).group(1).splitlines()
    assert len(lines) == 3
    return lines


def test_the_command_line_counts_each_pattern_once_unless_told(clonal, capsys):
    folder, kmers, ds, table, causal = clonal
    meta = folder / "meta.tsv"
    table.rename_axis("sample").reset_index().to_csv(meta, sep="\t", index=False)
    base = ["score", str(kmers), "--meta", str(meta), "--id", "sample", "--target", "phenotype"]
    capsys.readouterr()
    assert main([*base, "--method", "logistic", "--structure", "auto", "-o", str(folder / "a.tsv")]) == 0
    printed = capsys.readouterr().out.splitlines()
    for line in _readme_lines():  # the README's example is this very run
        assert line in printed, line
    base.append("--quiet")
    assert main([*base, "--method", "logistic", "--structure", "auto", "--structure-count", "features",
                 "-o", str(folder / "b.tsv")]) == 0
    assert main([*base, "--method", "lmm", "--kinship-from-data", "--binary", "-o", str(folder / "c.tsv")]) == 0
    a, b, c = (pd.read_csv(folder / f"{x}.tsv", sep="\t").set_index("feature") for x in "abc")
    best = {name: frame.loc[np.asarray(ds.feature_names)[causal], "pvalue"].min() for name, frame in
            (("a", a), ("b", b), ("c", c))}
    threshold = gs.count_patterns(ds.X > 0).threshold(0.05)
    assert best["a"] < threshold and best["c"] < threshold and best["b"] > 0.01
    pcs = principal_coordinates(ds, "auto")
    expected = gs.score((ds.X > 0).astype(np.float64), table["phenotype"].to_numpy(), method="logistic",
                        covariates=pcs.to_numpy(), feature_names=list(ds.feature_names))
    np.testing.assert_allclose(a.loc[list(ds.feature_names), "pvalue"].to_numpy(), expected.pvalues, rtol=1e-9)
    K = kinship(ds, binary=True)
    ref = gs.score((ds.X > 0).astype(np.float64), table["phenotype"].to_numpy(), method="lmm", kinship=np.asarray(K),
                   feature_names=list(ds.feature_names))
    np.testing.assert_allclose(c.loc[list(ds.feature_names), "pvalue"].to_numpy(), ref.pvalues, rtol=1e-9)
