"""The job ``pangenome`` (``genosift pangenome``): a gene table against many traits, each trait on
the isolates that have a value of it, its table, the overview, and the errors of its inputs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import genosift as gs
from genosift.cli import main
from genosift.jobs import Samples


@pytest.fixture
def pangenome(tmp_path):
    """A Roary-style table of 12 genes x 24 isolates and a Scoary-style traits table: ``t1`` caused by
    gene_0 with two values missing, ``t2`` random, ``flat`` of one class."""
    rng = np.random.default_rng(3)
    n = 24
    ids = [f"iso{i}" for i in range(n)]
    X = (rng.random((12, n)) < 0.5).astype(int)
    X[11] = 1  # a core gene: tested for no trait
    t1 = X[0].astype(object)
    t1[[2, 5]] = ["NA", "-"]
    lines = ['"Gene","Non-unique Gene name","Annotation",' + ",".join(f'"{i}"' for i in ids)]
    for g in range(12):
        cells = ",".join(f'"{ids[i]}_{g}"' if X[g, i] else '""' for i in range(n))
        lines.append(f'"gene_{g}","","protein {g}",{cells}')
    (tmp_path / "gpa.csv").write_text("\n".join(lines) + "\n")
    traits = pd.DataFrame({"t1": t1, "t2": rng.integers(0, 2, n), "flat": np.ones(n, dtype=int)}, index=ids)
    traits.to_csv(tmp_path / "traits.csv", index_label="")
    return tmp_path, X, traits


def test_every_trait_on_its_isolates_against_scipy(pangenome, capsys):
    folder, X, traits = pangenome
    (folder / "out").mkdir()
    code = main(["pangenome", str(folder / "gpa.csv"), "--meta", str(folder / "traits.csv"), "--target", "all",
                 "--threshold", "1", "-o", str(folder / "out" / "{target}.tsv")])
    out = capsys.readouterr().out
    assert code == 0 and "flat: not tested, one class only" in out
    table = pd.read_csv(folder / "out" / "t1.tsv", sep="\t").set_index("feature")
    y = pd.to_numeric(traits["t1"], errors="coerce").to_numpy()
    known = ~np.isnan(y)
    assert "gene_11" not in table.index and len(table) == 11  # present everywhere: not tested
    for g in range(11):
        row = table.loc[f"gene_{g}"]
        x = X[g, known]
        a, b = int((x[y[known] == 1] == 1).sum()), int((x[y[known] == 1] == 0).sum())
        c, d = int((x[y[known] == 0] == 1).sum()), int((x[y[known] == 0] == 0).sum())
        odds, p = stats.fisher_exact([[a, b], [c, d]])
        assert (row["n_pos_present"], row["n_pos_absent"], row["n_neg_present"], row["n_neg_absent"]) == (a, b, c, d)
        assert row["pvalue"] == pytest.approx(p, rel=1e-12) and row["odds_ratio"] == pytest.approx(odds, rel=1e-15)
        assert row["bonferroni"] == pytest.approx(min(p * 11, 1.0), rel=1e-12)
        assert row["Annotation"] == f"protein {g}"
    overview = pd.read_csv(folder / "out" / "overview.tsv", sep="\t").set_index("trait")
    assert overview.loc["t1", "n_samples"] == 22 and overview.loc["t2", "n_samples"] == 24
    assert overview.loc["t1", "best_feature"] == "gene_0" and overview.loc["flat", "n_tested"] == 0


def test_one_trait_the_upgma_tree_and_permutations(pangenome):
    folder, X, traits = pangenome
    run = gs.jobs.pangenome(Samples(folder / "gpa.csv", meta=folder / "traits.csv", target="t1"),
                            folder / "t1.tsv", tree_out=folder / "upgma.nwk", permutations=50, seed=4, alpha=0.5)
    table = pd.read_csv(folder / "t1.tsv", sep="\t")
    assert table["feature"].iloc[0] == "gene_0" and (table["pvalue"] <= 0.05).all()
    assert {"pairs_max", "pairwise_p_worst", "empirical_p"} <= set(table.columns)
    tree = gs.read_tree(folder / "upgma.nwk")
    assert sorted(tree.names) == sorted(traits.index)
    assert 0 < table["empirical_p"].iloc[0] <= 1
    assert (folder / "t1.tsv.overview.tsv").exists() and run.overview["trait"].tolist() == ["t1"]
    again = gs.jobs.pangenome(Samples(folder / "gpa.csv", meta=folder / "traits.csv", target="t1"),
                              folder / "again.tsv", tree=folder / "upgma.nwk", permutations=50, seed=4, alpha=0.5)
    assert again.overview["trait"].tolist() == ["t1"]
    pd.testing.assert_frame_equal(pd.read_csv(folder / "again.tsv", sep="\t"), table)


def test_what_the_job_refuses(pangenome, capsys):
    folder, _, traits = pangenome
    base = ["pangenome", str(folder / "gpa.csv"), "--meta", str(folder / "traits.csv")]
    assert main([*base, "--target", "t1,t2", "-o", str(folder / "one.tsv")]) == 2
    assert "{target}" in capsys.readouterr().err
    assert main([*base, "--target", "t1", "--tree", "x.nwk", "--tree-out", "y.nwk", "-o", str(folder / "a.tsv")]) == 2
    assert "--tree-out" in capsys.readouterr().err
    bad = traits.assign(t2=["yes"] + list(traits["t2"].iloc[1:]))
    bad.to_csv(folder / "bad.csv", index_label="")
    with pytest.raises(ValueError, match="The trait 't2' holds 'yes' for the sample 'iso0'"):
        gs.jobs.pangenome(Samples(folder / "gpa.csv", meta=folder / "bad.csv", target="all"), folder / "{target}.tsv")
    assert not list(folder.glob("t*.tsv"))  # nothing written
    gs.io.convert(folder / "gpa.csv", folder / "gpa.gs.h5ad")
    with pytest.raises(gs.core.validation.UsageError, match="not a store"):
        gs.jobs.pangenome(Samples(folder / "gpa.gs.h5ad", meta=folder / "traits.csv", target="t1"), folder / "s.tsv")
