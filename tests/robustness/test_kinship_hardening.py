"""Kinships and phenotypes that a mixed model cannot use are refused or named: a phenotype with
nothing to explain, a kinship that explains nothing, a kinship that is not a covariance; kinship
files are read once (pipes), trees of any depth, trees with comments, wide tables quickly."""
from __future__ import annotations

import gzip
import warnings

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.genomics.structure import looks_like_newick, tree_kinship
from genosift.io import read_kinship

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


def _lineages(seed=0, n=36):
    """A kinship of 6 lineages, a phenotype with a lineage effect, a covariate."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(6), n // 6)
    K = (groups[:, None] == groups[None, :]).astype(float) + 0.1 * np.eye(n)
    y = rng.normal(size=6)[groups] + rng.normal(size=n)
    return K, y, rng.normal(size=(n, 1))


def test_a_phenotype_with_nothing_to_explain_is_refused():
    K, y, z = _lineages()
    n = y.size
    for constant in (np.full(n, 5.0), np.zeros(n), np.ones(n)):
        with pytest.raises(ValueError, match="is constant"):
            gs.heritability(K, constant)
    with pytest.raises(ValueError, match="given exactly by the intercept and the covariates"):
        gs.heritability(K, 2 * z[:, 0] + 1, covariates=z)
    X = np.random.default_rng(1).random((n, 4))
    with pytest.raises(ValueError, match="mixed model is given exactly by the intercept and the covariates"):
        gs.score(X, 3 - z[:, 0], method="lmm", kinship=K, covariates=z)
    assert 0 < gs.heritability(K, y, covariates=z).h2 < 1  # a phenotype that varies passes


@pytest.mark.parametrize("kind", ["ones", "identity", "constant plus identity", "covariate outer plus identity"])
def test_a_kinship_that_explains_nothing_is_refused_by_heritability_and_the_mixed_model(kind):
    """Every kinship whose part off the intercept and covariates is a multiple of the identity:
    h2 changes no likelihood. (A kinship of zeros is no similarity: refused before.)"""
    K, y, z = _lineages()
    n = y.size
    one, c = np.ones(n), z[:, 0]
    given = {"ones": np.ones((n, n)), "identity": np.eye(n), "constant plus identity": 3.0 + 2.0 * np.eye(n),
             "covariate outer plus identity": np.outer(one + c, one + c) + np.eye(n)}[kind]
    with pytest.raises(ValueError, match="kinship explains nothing") as info:
        gs.heritability(given, y, covariates=z)
    assert "kinship=" in str(info.value) and "genosift.kinship(X)" in str(info.value)
    with pytest.raises(ValueError, match="kinship explains nothing"):
        gs.score(np.random.default_rng(2).random((n, 3)), y, method="lmm", kinship=given, covariates=z)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same plus a little structure is a kinship, without a word
        assert 0 <= gs.heritability(given + 0.05 * K, y, covariates=z).h2 <= 1


def test_a_kinship_that_is_not_positive_semi_definite_is_named_and_rounding_is_silent():
    """A similarity (every |K_ij| <= sqrt(K_ii K_jj)) that is no covariance: its negative
    eigenvalues are named and taken as 0."""
    K, y, _ = _lineages()
    bad = K.copy()
    bad[0, 1] = bad[1, 0] = -1.0  # samples 0, 1 and 2 of one lineage: 0 and 2, 1 and 2 alike, 0 and 1 opposite
    with pytest.warns(UserWarning, match=r"not positive semi-definite: 1 of its 36 eigenvalues are negative, down "
                                         r"to -1\.364 \(the largest is 6\.1\)\. They are taken as 0"):
        found = gs.heritability(bad, y)
    clipped_values, vectors = np.linalg.eigh(bad)
    clipped = (vectors * np.maximum(clipped_values, 0)) @ vectors.T
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gs.heritability((clipped + clipped.T) / 2, y).h2 == pytest.approx(found.h2, abs=1e-6)
        # a kinship of the features written with 6 decimals: its null eigenvalue rounds below 0, silently
        X = (np.random.default_rng(3).random((y.size, 200)) < 0.3).astype(float)
        rounded = np.round(gs.kinship(X), 6)
        values = np.linalg.eigvalsh(rounded)
        shifted = rounded - (values[0] + 1e-7 * values[-1]) * np.eye(y.size)
        assert np.linalg.eigvalsh(shifted)[0] < 0
        assert 0 <= gs.heritability(shifted, y).h2 <= 1


def test_a_tree_with_negative_or_zero_branch_lengths(tmp_path):
    path = tmp_path / "nj.nwk"
    path.write_text("((A:1,B:-0.25):0.5,(C:1,D:1):2);")
    with pytest.warns(UserWarning, match=r"1 branch\(es\) of negative length \(down to -0\.25\).*taken as 0"):
        K = tree_kinship(path)
    assert K.loc["B", "B"] == 0.5 and K.loc["A", "B"] == 0.5 and K.loc["A", "A"] == 1.5
    flat = tmp_path / "flat.nwk"
    names = [f"s{i}" for i in range(12)]
    flat.write_text("(" + ",".join(f"({a}:0,{b}:0):0" for a, b in zip(names[::2], names[1::2])) + ");")
    K = tree_kinship(flat)
    assert not K.to_numpy().any()
    with pytest.raises(ValueError, match="not a similarity of the samples: every entry is 0"):
        gs.heritability(K.to_numpy(), np.arange(12.0) % 5)


def test_trees_of_any_depth_and_with_comments_are_read(tmp_path):
    depth = 2000  # a ladder: each inner node holds a leaf and the rest of the tree
    text = "A0:1"
    for i in range(1, depth):
        text = f"({text},A{i}:1):1"
    (tmp_path / "ladder.nwk.gz").write_bytes(gzip.compress(f"[&R] {text};".encode()))
    K = tree_kinship(tmp_path / "ladder.nwk.gz")
    assert K.shape == (depth, depth)
    assert K.loc["A0", "A0"] == depth - 1 and K.loc["A0", "A1"] == depth - 2 and K.loc[f"A{depth - 1}", "A0"] == 0
    assert looks_like_newick(b"[&R] ((A:1,B:1):1,C:2);") and looks_like_newick(b"\xef\xbb\xbf [&U][x]\n(A:1,B:1);")
    assert not looks_like_newick(b"\tA\tB\nA\t1\t0\n") and not looks_like_newick(b"[unclosed (A:1);")


def test_kinship_files_are_read_once_as_a_pipe_is(tmp_path, monkeypatch, capsys):
    """`--kinship` through a pipe (a table, a gzip table, a rooted tree) gives the file's numbers."""
    import os
    import threading

    from genosift.cli import main

    K, y, _ = _lineages(seed=4, n=24)
    ids = [f"iso{i}" for i in range(24)]
    X = (np.random.default_rng(5).random((24, 6)) < 0.4).astype(float)
    pd.DataFrame(X, index=pd.Index(ids, name="sample"), columns=[f"k{j}" for j in range(6)]).assign(
        pheno=y).to_csv(tmp_path / "data.tsv", sep="\t")
    table = pd.DataFrame(K, index=ids, columns=ids).to_csv(sep="\t", float_format="%.17g").encode()
    pairs = ",".join(f"({a}:1,{b}:2):{1 + i}" for i, (a, b) in enumerate(zip(ids[::2], ids[1::2])))
    tree = ("[" + "a comment longer than the first read " * 8 + "] [&R] (" + pairs + ");").encode()
    monkeypatch.chdir(tmp_path)
    expected = {"table": gs.heritability(K, y).h2,
                "tree": gs.heritability(tree_kinship_of(tmp_path, tree).loc[ids, ids].to_numpy(), y).h2}
    for kind, data in (("table", table), ("table", gzip.compress(table)), ("tree", tree)):
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        writer = threading.Thread(target=lambda d=data: fifo.write_bytes(d), daemon=True)
        writer.start()
        try:
            code = main(["heritability", "data.tsv", "--target", "pheno", "--keep", "pheno", "--kinship", str(fifo)])
        finally:
            writer.join(timeout=5)
            fifo.unlink()
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert f"h2 = {expected[kind]:.4f} (REML, on the kinship scaled to a mean diagonal of 1)" in captured.out


def tree_kinship_of(folder, data):
    (folder / "copy.nwk").write_bytes(data)
    return tree_kinship(folder / "copy.nwk")


def test_the_heritability_command_refuses_a_constant_phenotype_before_reading_the_kinship(tmp_path, monkeypatch,
                                                                                         capsys):
    from genosift.cli import main

    ids = [f"iso{i}" for i in range(10)]
    X = (np.random.default_rng(6).random((10, 4)) < 0.5).astype(float)
    frame = pd.DataFrame(X, index=pd.Index(ids, name="sample"), columns=[f"k{j}" for j in range(4)])
    frame.assign(pheno=1.0).to_csv(tmp_path / "data.tsv", sep="\t")
    (tmp_path / "K.tsv").write_text("not a kinship at all\n")  # never read
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--binary"]):
        assert main(["heritability", "data.tsv", "--target", "pheno", "--keep", "pheno", "--kinship", "K.tsv",
                     *extra]) != 0
        assert "phenotype given to heritability is constant (every sample has 1)" in capsys.readouterr().err


def test_the_kinship_table_is_checked_square_in_one_linear_pass(tmp_path):
    wide = tmp_path / "wide.tsv"
    wide.write_text("\t" + "\t".join(f"s{i}" for i in range(20_000)) + "\n")
    with pytest.raises(ValueError, match="not square: its header names 20,000 sample id"):
        read_kinship(wide)
    cases = {
        "\ts1\ts2\ns1\t1\t0.5\n": "header names 2 sample id.*1 row",
        "\ts1\ts2\ns1\t1\t0.5\t3\ns2\t0.5\t1\t3\n": "header names 2 sample id.* rows hold 3 number",
        "\ts1\ts1\ns1\t1\t1\ns1\t1\t1\n": r"\['s1'\] more than once",
        "\ts1\ts2\ns1\t1\tx\ns2\t0.5\t1\n": "holds 'x' .*sample 's1', column 's2'",
        "\ts1\ts2\ns1\t1\t0.5\ns3\t0.5\t1\n": "differing ids such as \\['s2', 's3'\\]",
        "": "is empty",
    }
    for text, message in cases.items():
        (tmp_path / "k.tsv").write_text(text)
        with pytest.raises(ValueError, match=message):
            read_kinship(tmp_path / "k.tsv")
    for text in ("\ts2\ts1\ns1\t1\t0.25\ns2\t2\t0.25\n", "s2 s1\ns1 1 0.25\ns2 2 0.25\n",
                 "sample,s2,s1\ns1,1,0.25\ns2,2,0.25\n"):
        (tmp_path / "k.txt").write_text(text)
        found = read_kinship(tmp_path / "k.txt")
        assert found.loc["s1", "s2"] == 1 and found.loc["s2", "s2"] == 2 and found.loc["s1", "s1"] == 0.25
