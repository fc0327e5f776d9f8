"""``--covariates FILE`` and ``--covariate COL`` of `genosift score`, `select` and `evaluate`, run as
commands: the same numbers as ``genosift.score`` with the covariates, the join reported, and the
errors named in the command's options."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.scores import covariate_methods

METHOD = "regression"  # a numeric target (--target pheno) and two classes (--target label)
N, P = 40, 25
RNG = np.random.default_rng(3)
IDS = np.array([f"iso{i:02d}" for i in range(N)])
SITE = np.array(list("xyz"))[RNG.integers(0, 3, N)]
PC = RNG.normal(size=(N, 2))
X = RNG.poisson(2.0, size=(N, P)).astype(np.float64)
X[:, 1] += 3 * (PC[:, 0] > 0)
PHENO = X[:, 0] * 0.5 + PC[:, 0] + (SITE == "z") + RNG.normal(size=N)
LABEL = np.where(PHENO > np.median(PHENO), "R", "S")
NAMES = [f"k{j}" for j in range(P)]
COVARIATES = pd.DataFrame({"PC1": PC[:, 0], "PC2": PC[:, 1], "site": SITE})


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "genosift", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.fixture
def files(tmp_path):
    data = pd.DataFrame(X, columns=NAMES)
    data.insert(0, "sample", IDS)
    data.to_csv(tmp_path / "data.csv", index=False)
    meta = pd.DataFrame({"sample": IDS[::-1], "pheno": PHENO[::-1], "label": LABEL[::-1], "site": SITE[::-1]})
    meta.to_csv(tmp_path / "meta.tsv", sep="\t", index=False)
    # the id column second, rows in another order, two isolates the data do not have
    table = pd.DataFrame({"PC1": np.r_[PC[::-1, 0], 0.1, 0.2], "isolate": [*IDS[::-1], "extra1", "extra2"],
                          "PC2": np.r_[PC[::-1, 1], 0.3, 0.4]})
    table.to_csv(tmp_path / "pcs.csv", index=False)
    return tmp_path


def _base(files, command="score"):
    return [command, files / "data.csv", "--meta", files / "meta.tsv", "--id", "sample", "--method", METHOD]


def test_score_adjusts_for_a_table_and_metadata_columns(files):
    out = files / "rank.tsv"
    done = _cli(*_base(files), "--target", "pheno", "--covariates", files / "pcs.csv", "--covariates-id", "isolate",
                "--covariate", "site", "--top", "5", "-o", out)
    assert done.returncode == 0, done.stderr
    assert ("Covariates from " in done.stdout and "40 sample(s) matched by id; 2 in the covariates table only, "
            "left out: 'extra1', 'extra2'" in done.stdout)
    want = gs.score(X, PHENO, method=METHOD, covariates=COVARIATES, feature_names=NAMES)
    table = pd.read_csv(out, sep="\t")
    assert table["feature"].tolist() == want.feature_names[want.ranking].tolist()
    np.testing.assert_allclose(table["statistic"], want.statistic[want.ranking], rtol=1e-12)
    np.testing.assert_allclose(table["pvalue"], want.pvalues[want.ranking], rtol=1e-12)
    prov = json.loads((files / "rank.tsv.json").read_text())
    assert prov["covariates"] == ["PC1", "PC2", "site=y", "site=z"] and len(prov["inputs"]) == 3
    assert "adjusted for 4 covariate(s): PC1, PC2, site=y, site=z" in done.stdout


def test_select_from_a_store_scores_the_training_samples_with_their_covariates(files):
    store = files / "d.gs.h5ad"
    assert _cli("convert", files / "data.csv", "-o", store).returncode == 0
    out = files / "selected.tsv"
    done = _cli("select", store, "--meta", files / "meta.tsv", "--id", "sample", "--method", METHOD, "--target",
                "pheno", "--group", "site", "--train-groups", "x,y", "--covariates", files / "pcs.csv",
                "--covariates-id", "isolate", "--top", "3", "-o", out)
    assert done.returncode == 0, done.stderr
    train = SITE != "z"
    want = gs.score(X[train], PHENO[train], method=METHOD, covariates=PC[train], feature_names=NAMES)
    chosen = [c for c in pd.read_csv(out, sep="\t").columns if c.startswith("k")]
    assert chosen == want.top(3).tolist()  # best first, as the ranking
    prov = json.loads((files / "selected.tsv.json").read_text())
    np.testing.assert_allclose([f["statistic"] for f in prov["selected_features"]],
                               want.statistic[want.ranking[:3]], rtol=1e-12)


def test_evaluate_scores_each_fold_with_its_covariates(files):
    out = files / "ev"
    done = _cli(*_base(files, "evaluate"), "--target", "label", "--covariates", files / "pcs.csv", "--covariates-id",
                "isolate", "--k", "2,5", "--cv", "4", "-o", out)
    assert done.returncode == 0, done.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["covariates"] == ["PC1", "PC2"] and run["method"] == METHOD
    assert "Adjusted for 2 covariate(s) (PC1, PC2), each fold" in done.stdout
    want = gs.score(X, LABEL, method=METHOD, covariates=PC, feature_names=NAMES)
    ranking = pd.read_csv(out / "scores.tsv", sep="\t")
    assert ranking["feature"].tolist()[:5] == want.top(5).tolist()


def test_a_method_without_covariates_is_a_usage_error_before_reading(files):
    done = _cli("score", files / "no such data.csv", "--meta", files / "meta.tsv", "--id", "sample", "--target",
                "pheno", "--method", "pearson", "--covariate", "site", "-o", files / "r.tsv")
    assert done.returncode == 2
    assert "Method 'pearson' does not adjust for covariates" in done.stderr and repr(covariate_methods()) in done.stderr
    assert "(--method), or leave out --covariates / --covariate" in done.stderr and "covariates=" not in done.stderr
    done = _cli(*_base(files), "--target", "pheno", "--covariates-id", "isolate", "-o", files / "r.tsv")
    assert done.returncode == 2 and "pass --covariates FILE too" in done.stderr


def test_samples_without_covariates_and_unknown_columns_are_named(files):
    ids = ["Iso-00", *IDS[1:]]  # a misspelt id, and two samples without a row
    pd.DataFrame({"isolate": ids[:1] + ids[3:], "PC1": PC[[0, *range(3, 40)], 0]}).to_csv(files / "short.tsv",
                                                                                         sep="\t", index=False)
    done = _cli(*_base(files), "--target", "pheno", "--covariates", files / "short.tsv", "-o", files / "r.tsv")
    assert done.returncode == 1
    assert "3 of the 40 samples scored have no row in" in done.stderr
    assert "'iso00' (closest: 'Iso-00'), 'iso01', 'iso02'" in done.stderr
    assert "add a row for every sample scored to --covariates (check the id column, --covariates-id)" in done.stderr
    done = _cli(*_base(files), "--target", "pheno", "--covariate", "age", "-o", files / "r.tsv")
    assert done.returncode == 1 and "--covariate names column(s) 'age'" in done.stderr and "--meta" in done.stderr
    done = _cli(*_base(files), "--target", "pheno", "--covariates", files / "pcs.csv", "--covariates-id", "id",
                "-o", files / "r.tsv")
    assert done.returncode == 1 and "Pass --covariates-id one of them" in done.stderr


def test_collinear_covariates_are_named_with_the_options(files):
    pd.DataFrame({"isolate": IDS, "PC1": PC[:, 0], "twice": 2 * PC[:, 0] - 1}).to_csv(files / "bad.csv", index=False)
    done = _cli(*_base(files), "--target", "pheno", "--covariates", files / "bad.csv", "-o", files / "r.tsv")
    assert done.returncode == 1
    assert "The covariate 'twice' is a linear combination of the intercept and 'PC1'" in done.stderr
    assert "Leave one of them out of --covariates / --covariate" in done.stderr
    pc1 = PC[:, 0].copy()
    pc1[5] = np.nan
    pd.DataFrame({"isolate": IDS, "PC1": pc1}).to_csv(files / "gap.csv", index=False)
    done = _cli(*_base(files), "--target", "pheno", "--covariates", files / "gap.csv", "-o", files / "r.tsv")
    assert done.returncode == 1
    assert "missing or infinite values in column(s) 'PC1', at sample(s) 'iso05'" in done.stderr


def test_structure_adds_principal_coordinates_and_writes_them_for_reuse(files):
    from genosift.genomics.structure import principal_coordinates

    out, pcs = files / "rank.tsv", files / "structure.tsv"
    done = _cli(*_base(files), "--target", "pheno", "--covariate", "site", "--structure", 2, "--structure-out", pcs,
                "-o", out)
    assert done.returncode == 0, done.stderr
    want_pcs = principal_coordinates(X, 2)
    written = pd.read_csv(pcs, sep="\t", dtype={"sample": str})
    assert written["sample"].tolist() == IDS.tolist() and list(written.columns) == ["sample", "PC1", "PC2"]
    np.testing.assert_allclose(written[["PC1", "PC2"]].to_numpy(), want_pcs.to_numpy(), rtol=1e-12)
    want = gs.score(X, PHENO, method=METHOD, feature_names=NAMES,
                    covariates=pd.DataFrame({"site": SITE}).join(want_pcs.reset_index(drop=True)))
    table = pd.read_csv(out, sep="\t")
    assert table["feature"].tolist() == want.feature_names[want.ranking].tolist()
    np.testing.assert_allclose(table["statistic"], want.statistic[want.ranking], rtol=1e-9)
    prov = json.loads((files / "rank.tsv.json").read_text())
    assert prov["covariates"] == ["site=y", "site=z", "PC1", "PC2"]
    again = _cli(*_base(files), "--target", "pheno", "--covariate", "site", "--covariates", pcs, "-o", files / "r2.tsv")
    assert again.returncode == 0, again.stderr
    np.testing.assert_allclose(pd.read_csv(files / "r2.tsv", sep="\t")["statistic"], table["statistic"], rtol=1e-9)
    done = _cli(*_base(files), "--target", "pheno", "--covariates", pcs, "--structure", 2, "-o", files / "r3.tsv")
    assert done.returncode == 1 and "'PC1', 'PC2' come twice" in done.stderr


def test_structure_of_a_store_uses_the_training_samples(files):
    from genosift.genomics.structure import principal_coordinates

    store = files / "d.gs.h5ad"
    assert _cli("convert", files / "data.csv", "-o", store).returncode == 0
    done = _cli("score", store, "--meta", files / "meta.tsv", "--id", "sample", "--method", METHOD, "--target", "pheno",
                "--group", "site", "--train-groups", "x,y", "--structure", 3, "--structure-metric", "euclidean",
                "-o", files / "s.tsv")
    assert done.returncode == 0, done.stderr
    train = SITE != "z"
    pcs = principal_coordinates(X[train], 3, metric="euclidean")
    want = gs.score(X[train], PHENO[train], method=METHOD, covariates=pcs.to_numpy(), feature_names=NAMES)
    np.testing.assert_allclose(pd.read_csv(files / "s.tsv", sep="\t")["statistic"], want.statistic[want.ranking],
                               rtol=1e-9)
    done = _cli(*_base(files), "--target", "pheno", "--structure-out", files / "x.tsv", "-o", files / "r.tsv")
    assert done.returncode == 2 and "pass --structure K too" in done.stderr
    done = _cli("score", files / "data.csv", "--meta", files / "meta.tsv", "--id", "sample", "--target", "pheno",
                "--structure", 2, "-o", files / "r.tsv")
    assert done.returncode == 2 and "does not adjust for covariates" in done.stderr
