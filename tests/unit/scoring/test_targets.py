"""Several targets (phenotypes) scored in one pass: ``genosift.score_targets`` and ``genosift score
--target a,b,c``. Each target's result must equal ``genosift.score`` of that target alone, bit for
bit, for every method and input form; the mixed model must decompose the kinship once."""
import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.io import Dataset, write_store

SUPERVISED = sorted(m for m in gs.REGISTRY if gs.get_method(m).task != "unsupervised")


def _targets(spec, rng, n, X):
    """Three targets of the kind the method takes, each tied to a different feature."""
    if spec.task == "regression":
        return pd.DataFrame({f"t{j}": X[:, j] + rng.standard_normal(n) for j in (1, 3, 5)})
    return pd.DataFrame({f"t{j}": ((X[:, j] + rng.random(n)) > 1.2).astype(int) for j in (1, 3, 5)})


def _same(a, b):
    for name in ("scores", "statistic", "pvalues", "ranks"):
        left, right = getattr(a, name), getattr(b, name)
        assert (left is None) == (right is None), name
        if left is not None:
            np.testing.assert_array_equal(left, right, err_msg=name)
    assert sorted(a.columns or {}) == sorted(b.columns or {})
    for name in a.columns or {}:
        np.testing.assert_array_equal(a.columns[name], b.columns[name], err_msg=name)
    assert a.model == b.model or (a.model is not None and np.allclose(
        [a.model[k] for k in sorted(a.model)], [b.model[k] for k in sorted(b.model)], equal_nan=True, rtol=0, atol=0))


def _data(seed=0, n=70, p=40):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.8, size=(n, p)).astype(np.float64)
    X[:, 7] = 0.0  # a constant feature: NaN for every target
    X[:, 9] = X[:, 8]  # a duplicate: scored once where the method scores distinct columns once
    return rng, X


@pytest.mark.parametrize("method", SUPERVISED)
def test_every_method_equals_one_target_at_a_time(method):
    spec = gs.get_method(method)
    rng, X = _data()
    Y = _targets(spec, rng, X.shape[0], X)
    kinship = {"kinship": gs.kinship(X)} if spec.kinship else {}
    covariates = {"covariates": rng.standard_normal((X.shape[0], 2))} if spec.covariates else {}
    for data in (X, sp.csr_matrix(X)):
        results = gs.score_targets(data, Y, method=method, **kinship, **covariates)
        assert list(results) == list(Y.columns)
        for name in Y.columns:
            _same(results[name], gs.score(data, Y[name].to_numpy(), method=method, **kinship, **covariates))


@pytest.mark.parametrize("method", ["lmm", "regression", "logistic", "fisher", "auc"])
def test_a_store_in_one_pass_equals_each_target_alone(tmp_path, method):
    spec = gs.get_method(method)
    rng, X = _data(1, n=90, p=300)
    Y = _targets(spec, rng, X.shape[0], X)
    ids = np.array([f"s{i}" for i in range(X.shape[0])])
    obs = Y.set_axis(ids).assign(age=rng.standard_normal(X.shape[0]))
    path = write_store(Dataset(sp.csr_matrix(X), ids, np.array([f"k{j}" for j in range(X.shape[1])]), obs),
                       tmp_path / "d.gs.h5ad")
    keep = np.flatnonzero(rng.random(X.shape[0]) < 0.8)
    extra = {"kinship": pd.DataFrame(gs.kinship(X).to_numpy(), index=ids, columns=ids)} if spec.kinship else {}
    if spec.covariates:
        extra["covariates"] = ["age"]
    store = gs.io.Store(path)
    options = dict(method=method, chunk_bytes=20_000, min_af=0.05, **extra)
    results = gs.score_targets(path, list(Y.columns), **options) if not spec.covariates else None
    for name in Y.columns:
        alone = gs.score(path, name, **options)
        if results is not None:
            _same(results[name], alone)
        assert list(alone.feature_names[:2]) == ["k0", "k1"]
    from genosift.scores import check_options
    from genosift.scoring.forms import score_source_targets
    from genosift.scoring.store import score_store
    from genosift.sources import as_source

    kept = as_source(path, None, samples=np.isin(np.arange(X.shape[0]), keep), chunk_bytes=20_000,
                     covariates=extra.get("covariates"), kinship=extra.get("kinship"))
    many = score_source_targets(kept, spec, check_options(spec, {}), [Y[c].to_numpy()[keep] for c in Y.columns],
                                gs.scores.check_af(0.05, None))
    for name, result in zip(Y.columns, many):
        _same(result, score_store(store, Y[name].to_numpy()[keep], samples=keep, **options))


def test_the_mixed_model_decomposes_the_kinship_once(monkeypatch):
    rng, X = _data(2, n=60, p=200)
    Y = pd.DataFrame({name: X[:, j] + rng.standard_normal(60) for name, j in (("a", 0), ("b", 2), ("c", 4))})
    K = gs.kinship(X)
    calls = []
    eigh = np.linalg.eigh

    def counted(a, *args, **kwargs):
        calls.append(a.shape)
        return eigh(a, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "eigh", counted)
    results = gs.score_targets(X, Y, method="lmm", kinship=K)
    assert calls == [(60, 60)], "one eigendecomposition for the three targets (tests and heritability)"
    calls.clear()
    for name in Y.columns:
        gs.score(X, Y[name], method="lmm", kinship=K)
    assert len(calls) == 3
    h2 = [results[name].model["h2"] for name in Y.columns]
    assert len(set(h2)) == 3, "each target keeps its own null model"


def test_refusals_are_clear():
    rng, X = _data(3)
    Y = pd.DataFrame({"a": rng.standard_normal(70), "b": rng.standard_normal(70)})
    with pytest.raises(ValueError, match="without a target"):
        gs.score_targets(X, Y, method="variance")
    with pytest.raises(ValueError, match="unique"):
        gs.score_targets(X, pd.DataFrame(np.c_[Y, Y], columns=["a", "b", "a", "c"]), method="pearson")
    with pytest.raises(TypeError, match="names columns of an AnnData"):
        gs.score_targets(X, ["a", "b"], method="pearson")
    with pytest.raises(ValueError, match="at least one target"):
        gs.score_targets(X, {}, method="pearson")
    with pytest.raises(ValueError, match="not of a stream of row chunks"):
        gs.score_targets(iter([(X, None)]), Y, method="pearson")
    with pytest.raises(ValueError, match="NaN"):
        gs.score_targets(X, Y.assign(b=np.r_[np.nan, Y["b"].to_numpy()[1:]]), method="pearson")


def test_anndata_obs_columns_name_the_targets():
    anndata = pytest.importorskip("anndata")
    rng, X = _data(4)
    obs = pd.DataFrame({"a": X[:, 1] + rng.standard_normal(70), "b": X[:, 2] + rng.standard_normal(70)},
                       index=[f"s{i}" for i in range(70)])
    adata = anndata.AnnData(X, obs=obs)
    results = gs.score_targets(adata, ["a", "b"], method="pearson")
    for name in ("a", "b"):
        _same(results[name], gs.score(X, obs[name].to_numpy(), method="pearson"))


# --- the command -----------------------------------------------------------------------------

@pytest.fixture
def phenotypes(tmp_path):
    rng = np.random.default_rng(5)
    n, p = 80, 120
    X = (rng.random((n, p)) < 0.3).astype(int)
    ids = [f"s{i}" for i in range(n)]
    pd.DataFrame(X, index=pd.Index(ids, name="sample"), columns=[f"f{j}" for j in range(p)]).to_csv(
        tmp_path / "data.tsv", sep="\t")
    a = X[:, 1] + rng.standard_normal(n)
    a[4] = np.nan  # one sample without this phenotype: left out of every target's run
    meta = pd.DataFrame({"id": ids, "a": a, "b": 2 * X[:, 3] + rng.standard_normal(n),
                         "c": ((X[:, 4] + rng.random(n)) > 0.8).astype(int)})
    meta.to_csv(tmp_path / "meta.tsv", sep="\t", index=False)
    return tmp_path


def _run(*args):
    from genosift.cli import main

    return main([str(a) for a in args])


def _ranking(path):
    return pd.read_csv(path, sep="\t")


@pytest.mark.parametrize("method,extra", [("lmm", ["--kinship-from-data"]), ("regression", ["--structure", "2"]),
                                          ("spearman", [])])
def test_the_command_writes_each_target_as_its_own_run(phenotypes, method, extra, capsys):
    d = phenotypes
    (d / "many").mkdir()
    (d / "one").mkdir()
    base = [d / "data.tsv", "--meta", d / "meta.tsv", "--id", "id", "--method", method, "--top", "5", *extra]
    assert _run("score", *base, "--target", "a,b,c", "-o", d / "many" / "{target}.tsv") == 0
    printed = capsys.readouterr().out
    assert "target 'a':" in printed and "target 'c':" in printed
    assert "1 sample(s) without a 'a' value were left out" in printed
    # one target at a time, on the same samples (those with every target)
    meta = pd.read_csv(d / "meta.tsv", sep="\t").dropna()
    meta.to_csv(d / "complete.tsv", sep="\t", index=False)
    for name in ("a", "b", "c"):
        one = [d / "data.tsv", "--meta", d / "complete.tsv", "--id", "id", "--method", method, "--top", "5", *extra]
        assert _run("score", *one, "--target", name, "-o", d / "one" / f"{name}.tsv", "--absent-samples", "drop") == 0
        pd.testing.assert_frame_equal(_ranking(d / "many" / f"{name}.tsv"), _ranking(d / "one" / f"{name}.tsv"))
        sidecar = json.loads((d / "many" / f"{name}.tsv.json").read_text())
        assert sidecar["target"] == name and sidecar["targets"] == ["a", "b", "c"]
        assert len(sidecar["samples_used"]) == 79


def test_the_command_refuses_what_it_cannot_do(phenotypes, capsys):
    d = phenotypes
    base = [d / "data.tsv", "--meta", d / "meta.tsv", "--id", "id", "--target", "a,b"]
    assert _run("score", *base, "-o", d / "x.tsv") == 2
    assert "put {target} in --output" in capsys.readouterr().err
    assert _run("score", *base, "--classes", "0,1", "-o", d / "{target}.tsv") == 2
    assert "--classes and --min-count filter the classes of one target" in capsys.readouterr().err
    assert _run("score", *base, "--method", "welch", "-o", d / "{target}.tsv") == 1  # bad data, before reading it
    assert "Target 'a': Method 'welch' needs class labels" in capsys.readouterr().err
    assert not list(d.glob("*.tsv.json")), "nothing written"
    assert _run("score", d / "data.tsv", "--meta", d / "meta.tsv", "--id", "id", "--target", "b,b",
                "-o", d / "{target}.tsv") == 2
    assert "names a column twice" in capsys.readouterr().err
