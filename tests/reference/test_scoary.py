"""``genosift pangenome`` against Scoary 1.6.16 on Scoary's own example data (tests/data/scoary).

Both traits, every gene tested (``threshold=1``, Scoary's ``-p 1.0``), with the example tree and
with genosift's UPGMA tree of the gene table: the genes tested, every count, odds ratio, naive,
Bonferroni and Benjamini-Hochberg p and, counted by Scoary's rule (``scoary_pairs``), every pairwise
column equal Scoary's results. By default the supporting and opposing pairs are the most among the
largest sets of independent pairs (checked against a brute force in
tests/unit/genomics/test_pairwise.py): the same ``pairs_max`` as Scoary, and at most its counts,
which its root takes also from smaller sets.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.jobs import Samples

DATA = Path(__file__).resolve().parents[1] / "data" / "scoary"
GENES = "Gene_presence_absence.csv.gz"
TRAITS = ("Tetracycline_resistance", "Bogus_trait")

#: Scoary's column -> genosift's.
NAMES = {"Number_pos_present_in": "n_pos_present", "Number_neg_present_in": "n_neg_present",
         "Number_pos_not_present_in": "n_pos_absent", "Number_neg_not_present_in": "n_neg_absent",
         "Sensitivity": "sensitivity", "Specificity": "specificity", "Odds_ratio": "odds_ratio",
         "Naive_p": "pvalue", "Bonferroni_p": "bonferroni", "Benjamini_H_p": "qvalue",
         "Max_Pairwise_comparisons": "pairs_max", "Max_supporting_pairs": "pairs_supporting",
         "Max_opposing_pairs": "pairs_opposing", "Best_pairwise_comp_p": "pairwise_p_best",
         "Worst_pairwise_comp_p": "pairwise_p_worst"}
COUNTS = ("n_pos_present", "n_neg_present", "n_pos_absent", "n_neg_absent")
PAIRS = ("pairs_max", "pairs_supporting", "pairs_opposing")


@pytest.fixture(scope="module")
def scoary():
    table = pd.read_csv(DATA / "scoary_results.csv.gz", dtype={"trait": str, "Gene": str})
    return {trait: part.rename(columns=NAMES).set_index("Gene") for trait, part in table.groupby("trait")}


def _run(folder, *, tree, scoary_pairs):
    for name in (GENES, "Tetracycline_resistance.csv", "ExampleTree.nwk"):
        shutil.copy(DATA / name, folder / name)
    tree = folder / "ExampleTree.nwk" if tree else None
    samples = Samples(folder / GENES, meta=folder / "Tetracycline_resistance.csv",
                      target="all")
    run = gs.jobs.pangenome(samples, folder / "{target}.tsv", tree=tree, threshold=1.0, scoary_pairs=scoary_pairs,
                            tree_out=None if tree else folder / "upgma.nwk")
    tables = {t: pd.read_csv(folder / f"{t}.tsv", sep="\t", dtype={"feature": str}).set_index("feature")
              for t in TRAITS}
    return run, tables, folder


@pytest.fixture(scope="module", params=["example tree", "upgma"])
def ours(request, tmp_path_factory):
    return _run(tmp_path_factory.mktemp("scoary"), tree=request.param == "example tree", scoary_pairs=True)


@pytest.mark.parametrize("trait", TRAITS)
def test_every_column_equals_scoarys(scoary, ours, trait):
    run, tables, _ = ours
    theirs, mine = scoary[trait], tables[trait]
    assert sorted(mine.index) == sorted(theirs.index)  # the same genes tested
    mine = mine.loc[theirs.index]
    for column in (*COUNTS, *PAIRS):
        np.testing.assert_array_equal(mine[column].to_numpy(np.int64), theirs[column].to_numpy(np.int64), column)
    for column in ("sensitivity", "specificity", "odds_ratio"):
        np.testing.assert_array_equal(mine[column].to_numpy(), theirs[column].to_numpy(), column)
    for column in ("pvalue", "bonferroni", "qvalue", "pairwise_p_best", "pairwise_p_worst"):
        np.testing.assert_allclose(mine[column].to_numpy(), theirs[column].to_numpy(), rtol=1e-12, atol=0,
                                   err_msg=column)
    # the order: by naive p, as Scoary writes them
    assert np.all(np.diff(tables[trait]["pvalue"].to_numpy()) >= 0)
    row = run.overview.set_index("trait").loc[trait]
    assert row["n_tested"] == len(theirs) and row["best_feature"] == theirs["pvalue"].idxmin()


def test_the_annotation_and_the_overview(ours):
    run, tables, folder = ours
    top = tables["Tetracycline_resistance"].iloc[0]
    assert top.name == "TetRCG" and top["rank"] == 1
    assert top["Annotation"] == "A fictitious gene known to cause resistance against tetracycline"
    frame = run.overview.set_index("trait")
    assert frame.loc["Bogus_trait", "n_samples"] == 97  # three isolates lack the trait (NA, - and .)
    assert frame.loc["Tetracycline_resistance", "n_bonferroni"] >= 1
    assert (folder / "overview.tsv").exists()


def test_the_exact_counts_keep_scoarys_pairs_and_never_exceed_its_counts(scoary, tmp_path):
    _, tables, _ = _run(tmp_path, tree=True, scoary_pairs=False)
    differ = 0
    for trait in TRAITS:
        theirs, mine = scoary[trait], tables[trait].loc[scoary[trait].index]
        np.testing.assert_array_equal(mine["pairs_max"], theirs["pairs_max"])
        for column in ("pairs_supporting", "pairs_opposing"):
            assert (mine[column] <= theirs[column]).all()
        differ += int(((mine["pairs_supporting"] != theirs["pairs_supporting"])
                       | (mine["pairs_opposing"] != theirs["pairs_opposing"])).sum())
    assert 0 < differ < 0.15 * sum(len(scoary[t]) for t in TRAITS)
