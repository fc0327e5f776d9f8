"""The models of evaluate beyond L2 logistic regression: L1 / elastic-net logistic regression,
histogram gradient boosting, random forests and linear SVMs, against scikit-learn's own estimators
on the same folds; and the importance of each selected feature (coefficients, impurity, permutation
importance on the validation folds)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

import genosift as gs
from genosift.cli import main
from genosift.workflow import evaluate, load_model, predict, write_results


@pytest.fixture(scope="module")
def golub():
    return gs.load_golub()


def _reference_search(X, y, ev, model, grid, ks):
    """GridSearchCV over (k, grid) of Pipeline(SelectKBest, model) on ev's folds: mean test scores by params."""
    splits = [(f["train"], f["test"]) for f in ev.folds]
    pipe = Pipeline([("select", gs.SelectKBest(ev.method, k=ks[0])), ("model", model)])
    params = {"select__k": ks, **{f"model__{k}": v for k, v in grid.items()}}
    with warnings.catch_warnings():  # penalty= is deprecated from scikit-learn 1.8: the reference spells it so
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)  # before 1.8, l1_ratio is read with elasticnet only
        found = GridSearchCV(pipe, params, cv=splits, scoring=ev.metric, refit=False).fit(X, y).cv_results_
    return found


def _cell(ev, k, options=None):
    rows = ev.curve[ev.curve["k"] == k]
    if options is not None:
        rows = rows[rows["options"] == options]
    return rows.iloc[0][f"{ev.metric}_mean"]


def test_l1_and_elastic_net_logistic_regression(golub):
    X, y, names = golub
    ev = evaluate(X, y, method="welch", ks=[5, 50], cv=3, model_options={"penalty": ["l1", "elasticnet"],
                  "C": 0.5, "l1_ratio": 0.4}, random_state=2, feature_names=names)
    cases = (("l1", "liblinear", {"l1_ratio": [1.0]}), ("elasticnet", "saga", {"l1_ratio": [0.4]}))
    for penalty, solver, extra in cases:
        model = make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=1000, random_state=2))
        ref = _reference_search(X, y, ev, model, {"logisticregression__penalty": [penalty],
                                                  "logisticregression__solver": [solver],
                                                  **{f"logisticregression__{k}": v for k, v in extra.items()}},
                                [5, 50])
        for params, mean in zip(ref["params"], ref["mean_test_score"]):
            assert _cell(ev, params["select__k"], f"penalty={penalty!r}") == pytest.approx(mean, abs=1e-12)
    final = ev.pipeline.named_steps["model"].named_steps["model"]
    assert final.solver == {"l1": "liblinear", "elasticnet": "saga"}[ev.model_options["penalty"]]
    # importance: the size of each coefficient, in ranking order; an L1 fit leaves some at exactly 0
    l1 = evaluate(X, y, method="welch", ks=[50], cv=3, model_options={"penalty": "l1", "C": 0.3})
    coef = l1.pipeline.named_steps["model"].named_steps["model"].coef_[0]
    chosen = np.flatnonzero(l1.pipeline.named_steps["select"].get_support())
    order = np.argsort(l1.result.ranks[chosen], kind="stable")
    np.testing.assert_array_equal(l1.importance, np.abs(coef)[order])
    assert (l1.importance == 0).any() and (l1.importance > 0).any()


def test_penalty_must_be_known(golub):
    X, y, _ = golub
    with pytest.raises(ValueError, match=r"penalty must be 'l2', 'l1' or 'elasticnet'; got 'l3'.*model_options="):
        evaluate(X, y, ks=[5], cv=3, model_options={"penalty": "l3"})


def test_histogram_gradient_boosting_and_its_permutation_importance(golub, tmp_path):
    X, y, names = golub
    options = {"max_iter": [10, 20], "min_samples_leaf": 3, "learning_rate": 0.2}
    ev = evaluate(X, y, method="fisher", ks=[4, 30], cv=3, model="hist_gradient_boosting", model_options=options,
                  random_state=5, feature_names=names)
    hgb = HistGradientBoostingClassifier(min_samples_leaf=3, learning_rate=0.2, random_state=5)
    ref = _reference_search(X, y, ev, hgb, {"max_iter": [10, 20]}, [4, 30])
    for params, mean in zip(ref["params"], ref["mean_test_score"]):
        assert _cell(ev, params["select__k"], f"max_iter={params['model__max_iter']}") == pytest.approx(mean, abs=1e-12)
    # permutation importance on the held-out samples of each fold, averaged over the folds that selected the feature
    total, count = np.zeros(X.shape[1]), np.zeros(X.shape[1], dtype=int)
    for fold in ev.folds:
        cols = np.sort(fold["ranking"][: ev.best_k])
        model = HistGradientBoostingClassifier(min_samples_leaf=3, learning_rate=0.2, random_state=5,
                                               max_iter=ev.model_options["max_iter"])
        model.fit(X[fold["train"]][:, cols], y[fold["train"]])
        found = permutation_importance(model, X[fold["test"]][:, cols], y[fold["test"]], scoring=ev.metric,
                                       n_repeats=5, random_state=5)
        total[cols] += found.importances_mean
        count[cols] += 1
    chosen = ev.result.ranking[: ev.best_k]
    with np.errstate(invalid="ignore"):
        expected = np.where(count > 0, total / np.maximum(count, 1), np.nan)[chosen]
    np.testing.assert_array_equal(ev.importance, expected)
    np.testing.assert_array_equal(ev.importance_folds, count[chosen])
    assert np.isfinite(ev.importance).any() and (ev.importance != 0).any()
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    selected = pd.read_csv(out / "selected.tsv", sep="\t", float_precision="round_trip")
    np.testing.assert_array_equal(selected["importance"], ev.importance)
    np.testing.assert_array_equal(selected["importance_folds"], count[chosen])
    assert "shuffled" in json.loads((out / "run.json").read_text())["importance"]
    frame, _ = predict(load_model(out), X, names)
    np.testing.assert_array_equal(frame[["proba_ALL", "proba_AML"]], ev.pipeline.predict_proba(X))


def test_gradient_boosting_on_sparse_counts_equals_dense():
    rng = np.random.default_rng(1)
    counts = rng.poisson(0.5, size=(60, 80)).astype(np.float64)
    y = np.repeat(["a", "b"], 30)
    counts[y == "b", :5] += rng.poisson(2.0, size=(30, 5))
    kwargs = dict(ks=[3, 20], cv=3, model="hist_gradient_boosting",
                  model_options={"min_samples_leaf": 5, "max_iter": 15},
                  binary=True)
    dense_ev = evaluate(counts, y, **kwargs)
    sparse_ev = evaluate(sp.csr_matrix(counts), y, **kwargs)
    pd.testing.assert_frame_equal(dense_ev.curve, sparse_ev.curve)
    np.testing.assert_array_equal(dense_ev.importance, sparse_ev.importance)
    np.testing.assert_array_equal(sparse_ev.pipeline.predict_proba(sp.csr_matrix(counts)),
                                  dense_ev.pipeline.predict_proba(counts))


def test_random_forest_grid_and_impurity_importance(golub):
    X, y, names = golub
    ev = evaluate(X, y, method="welch", ks=[10], cv=3, model="random_forest",
                  model_options={"n_estimators": 30, "max_features": ["sqrt", 0.5]}, random_state=4)
    rf = RandomForestClassifier(n_estimators=30, random_state=4)
    ref = _reference_search(X, y, ev, rf, {"max_features": ["sqrt", 0.5]}, [10])
    for params, mean in zip(ref["params"], ref["mean_test_score"]):
        assert _cell(ev, 10, f"max_features={params['model__max_features']!r}") == pytest.approx(mean, abs=1e-12)
    final = ev.pipeline.named_steps["model"]
    chosen = np.flatnonzero(ev.pipeline.named_steps["select"].get_support())
    order = np.argsort(ev.result.ranks[chosen], kind="stable")
    np.testing.assert_array_equal(ev.importance, final.feature_importances_[order])
    assert ev.importance_folds is None


def test_cli_new_models(golub, tmp_path, capsys):
    X, y, names = golub
    ids = [f"s{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :200], columns=names[:200])
    data.insert(0, "sample", ids)
    data.insert(1, "type", y)
    data.to_csv(tmp_path / "expr.csv", index=False)
    base = ["evaluate", str(tmp_path / "expr.csv"), "--target", "type", "--k", "3,30", "--cv", "3", "--quiet"]
    assert main([*base, "--model", "linear_svm", "--model-option", "penalty=l1,l2", "-o", str(tmp_path / "svm")]) == 0
    run = json.loads((tmp_path / "svm" / "run.json").read_text())
    assert run["model_grid"] == {"penalty": ["l1", "l2"]} and "coefficients" in run["importance"]
    assert main([*base, "--model", "hist_gradient_boosting", "--model-option", "min_samples_leaf=4",
                 "--model-option", "max_iter=15", "--model-option", "max_depth=2,None",
                 "-o", str(tmp_path / "hgb")]) == 0
    run = json.loads((tmp_path / "hgb" / "run.json").read_text())
    assert run["options"] == ["max_depth=2", "max_depth=None"]  # no limit: the least simple
    selected = pd.read_csv(tmp_path / "hgb" / "selected.tsv", sep="\t")
    assert {"importance", "importance_folds"} <= set(selected.columns)
    capsys.readouterr()
    with pytest.raises(SystemExit) as usage:
        main([*base, "--model", "xgboost", "-o", str(tmp_path / "x")])
    assert usage.value.code == 2


@pytest.mark.parametrize("api", ["openmp", "blas"])
def test_threads_cap_the_models_pools(golub, monkeypatch, api):
    """`set_threads(1)` (`--threads 1`) holds for the models too: the OpenMP pool of gradient
    boosting and the BLAS pool of a logistic regression's solver run on the engine's threads
    during `evaluate`, and are given back afterwards."""
    from threadpoolctl import threadpool_info

    from genosift.core import engine
    from genosift.workflow import evaluation

    def openmp_threads():
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == api]

    if not openmp_threads():
        pytest.skip(f"no {api} library loaded in this process")
    seen = []

    class Recording(LogisticRegression):
        def fit(self, X, y, **kwargs):
            seen.append(openmp_threads())
            return super().fit(X, y, **kwargs)

    monkeypatch.setattr(evaluation, "make_model", lambda *args, **kwargs: Recording(max_iter=1000))
    before = openmp_threads()
    previous = engine.set_threads(1)
    try:
        evaluate(golub[0], golub[1], ks=[5], cv=3)
    finally:
        engine.set_threads(previous)
    assert seen and all(threads and set(threads) == {1} for threads in seen)
    assert set(openmp_threads()) == set(before)  # (a library loaded meanwhile may add a pool of its own)


@pytest.mark.parametrize("names", [["ACGT", "ü-7", "a b", ""], ["with\x00nul", "x"], ["only"]])
def test_saved_feature_names_come_back_as_written(golub, tmp_path, names):
    """Feature names of any spelling (a NUL, an empty name, non-ASCII) come back from model.skops
    and model.json as they were written."""
    X, y, _ = golub
    cols = X[:, : len(names)]
    ev = evaluate(cols, y, method="welch", ks=[1], cv=3, random_state=0, feature_names=names)
    out = write_results(ev, tmp_path / "res", X=cols, y=y)
    saved = load_model(out)
    assert saved["features"] == names == json.loads((out / "model.json").read_text())["features"]
    frame, _ = predict(saved, cols, names)
    np.testing.assert_array_equal(frame["proba_ALL"], ev.pipeline.predict_proba(cols)[:, 0])


def test_final_model_ranking_and_pipeline_equal_a_fresh_fit_of_the_training_samples():
    """The final model reuses its selector's scores as the ranking: they equal ``gs.score`` of the
    training samples (with the given names and the allele-frequency filter), and the pipeline
    predicts as a scikit-learn Pipeline fitted afresh; k beyond the tested features is clipped
    to them without a warning."""
    from sklearn.base import clone

    rng = np.random.default_rng(7)
    counts = rng.poisson(0.3, size=(80, 120)).astype(np.float64)
    y = np.repeat(["a", "b"], 40)
    counts[y == "b", :6] += rng.poisson(2.0, size=(40, 6))
    names = np.array([f"k{j}" for j in range(120)], dtype=object)
    validation = np.zeros(80, dtype=bool)
    validation[::5] = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = evaluate(sp.csr_matrix(counts), y, method="chi2", ks=[120], validation=validation, binary=True,
                      min_af=0.25, feature_names=names, random_state=0)
    train = ~validation
    X_train = (counts[train] > 0).astype(np.float64)
    ref = gs.score(X_train, y[train], method="chi2", feature_names=names, min_af=0.25)
    assert ref.n_tested < 120
    np.testing.assert_array_equal(ev.result.scores, ref.scores)
    np.testing.assert_array_equal(ev.result.pvalues, ref.pvalues)
    np.testing.assert_array_equal(ev.result.ranking, ref.ranking)
    np.testing.assert_array_equal(ev.result.feature_names, names)
    fresh = Pipeline([("select", gs.SelectKBest("chi2", k=ref.n_tested, min_af=0.25)),
                      ("model", clone(ev.pipeline.named_steps["model"]))]).fit(sp.csr_matrix(X_train), y[train])
    np.testing.assert_array_equal(ev.pipeline.named_steps["select"].get_support(),
                                  fresh.named_steps["select"].get_support())
    every = sp.csr_matrix((counts > 0).astype(np.float64))
    np.testing.assert_array_equal(ev.pipeline.predict_proba(every), fresh.predict_proba(every))
