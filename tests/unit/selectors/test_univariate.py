"""Selectors: scikit-learn contract, partial_fit == fit, pipelines, parameters."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.feature_selection import SelectKBest as SkSelectKBest
from sklearn.feature_selection import f_classif
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import genosift as gs


def _data(seed=0, n=80, p=30):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, p))
    X[:, :5] += 1.5 * y[:, None] * np.array([1.0, 0.8, 0.6, 0.4, 0.2])
    return X, y


@parametrize_with_checks(
    [
        gs.SelectKBest(),
        gs.SelectKBest(score_func="fisher", k=2),
        gs.SelectPercentile(score_func="fisher", percentile=50),
        gs.SelectFdr(alpha=0.5),
        gs.SelectKBest(score_func="variance", k=1),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("method", ["fisher", "anova", "welch", "pearson", "variance"])
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_equals_fit(method, sparse):
    X, y = _data(seed=1)
    X = sp.csr_matrix(np.where(X > 0.5, X, 0)) if sparse else X
    full = gs.SelectKBest(score_func=method, k=5).fit(X, y)
    part = gs.SelectKBest(score_func=method, k=5)
    for start in range(0, 80, 17):
        part.partial_fit(X[start:start + 17], y[start:start + 17])
    np.testing.assert_allclose(part.scores_, full.scores_, rtol=1e-11, equal_nan=True)
    np.testing.assert_array_equal(part.get_support(), full.get_support())
    ref = gs.score(X, y, method=method)
    np.testing.assert_allclose(full.scores_, ref.scores, rtol=0, equal_nan=True)


def test_fit_resets_partial_state():
    X, y = _data(seed=2)
    sel = gs.SelectKBest(score_func="anova", k=3).partial_fit(X[:40], y[:40])
    sel.fit(X, y)
    np.testing.assert_allclose(sel.scores_, gs.score(X, y, method="anova").scores, rtol=1e-12)


def test_kbest_selects_ranking_prefix_and_matches_sklearn_with_callable():
    X, y = _data(seed=3)
    ours = gs.SelectKBest(score_func="anova", k=5).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(ours.get_support()), np.sort(ours.ranking_[:5]))
    theirs = SkSelectKBest(f_classif, k=5).fit(X, y)
    np.testing.assert_array_equal(ours.get_support(), theirs.get_support())
    same = gs.SelectKBest(score_func=f_classif, k=5).fit(X, y)
    np.testing.assert_array_equal(same.get_support(), theirs.get_support())
    assert np.allclose(ours.scores_, theirs.scores_, rtol=1e-6)


def test_percentile_and_fdr_rules():
    X, y = _data(seed=4, p=200)
    sel = gs.SelectPercentile(score_func="welch", percentile=2.5).fit(X, y)
    assert sel.get_support().sum() == 5  # ceil(2.5 * 200 / 100)
    assert gs.SelectPercentile(percentile=0).fit(X, y).get_support().sum() == 0
    assert gs.SelectPercentile(percentile=100).fit(X, y).get_support().all()
    fdr = gs.SelectFdr(score_func="welch", alpha=0.05).fit(X, y)
    np.testing.assert_array_equal(fdr.get_support(), fdr.result_.qvalues <= 0.05)
    assert fdr.get_support().sum() in range(1, 11)


def test_nan_scores_are_never_chosen_before_finite_ones():
    X, y = _data(seed=5, p=6)
    X[:, 0] = 4.0  # constant: NaN score
    sel = gs.SelectKBest(score_func="fisher", k=5).fit(X, y)
    assert not sel.get_support()[0]
    assert sel.ranking_[-1] == 0


def test_pipeline_gridsearch_and_set_output():
    X, y = _data(seed=6)
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(X.shape[1])])
    pipe = make_pipeline(gs.SelectKBest(score_func="welch"), LogisticRegression())
    grid = GridSearchCV(pipe, {"selectkbest__k": [2, 5, 10]}, cv=StratifiedKFold(3)).fit(frame, y)
    assert grid.best_params_["selectkbest__k"] in (2, 5, 10)
    sel = gs.SelectKBest(score_func="fisher", k=3).set_output(transform="pandas").fit(frame, y)
    out = sel.transform(frame)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(sel.get_feature_names_out())
    assert list(out.columns) == list(sel.result_.top(3)[np.argsort(sel.result_.ranking[:3])])
    assert list(sel.result_.feature_names) == list(frame.columns)


def test_sparse_transform_stays_sparse():
    X, y = _data(seed=7)
    Xs = sp.csr_matrix(np.where(X > 1, X, 0))
    out = gs.SelectKBest(score_func="anova", k=4).fit(Xs, y).transform(Xs)
    assert sp.issparse(out) and out.shape == (80, 4)


@pytest.mark.parametrize(
    "selector, match",
    [
        (gs.SelectKBest(k=-1), "The 'k' parameter of SelectKBest"),
        (gs.SelectKBest(k="some"), "The 'k' parameter of SelectKBest"),
        (gs.SelectPercentile(percentile=120), "The 'percentile' parameter of SelectPercentile"),
        (gs.SelectFdr(alpha=0), "The 'alpha' parameter of SelectFdr"),
        (gs.SelectFdr(score_func="fisher"), "SelectFdr needs p-values"),
        (gs.SelectKBest(score_func="unknown"), "The 'score_func' parameter of SelectKBest"),
        (gs.SelectKBest(method_options=[1]), "The 'method_options' parameter"),
    ],
)
def test_bad_parameters(selector, match):
    X, y = _data(seed=8)
    with pytest.raises(ValueError, match=match):
        selector.fit(X, y)


def test_partial_fit_rejects_callables_and_changed_width():
    X, y = _data(seed=9)
    with pytest.raises(TypeError, match="partial_fit needs a registered method"):
        gs.SelectKBest(score_func=f_classif).partial_fit(X, y)
    sel = gs.SelectKBest(score_func="anova").partial_fit(X, y)
    with pytest.raises(ValueError, match="features"):
        sel.partial_fit(X[:, :10], y)


def test_score_params_reach_the_method():
    X, y = _data(seed=10)
    with pytest.raises(TypeError, match="unknown option"):
        gs.SelectKBest(score_func="anova", method_options={"bins": 3}).fit(X, y)


# ------------------------------------------------------------------ fitting on a store or file


@pytest.fixture
def store_path(tmp_path):
    pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
    from genosift.io import Dataset, write_store

    X, y = _data(seed=4, n=60, p=25)
    ids = np.array([f"s{i}" for i in range(60)], dtype=object)
    names = np.array([f"g{j}" for j in range(25)], dtype=object)
    obs = pd.DataFrame({"label": np.where(y == 1, "case", "control")}, index=ids)
    return write_store(Dataset(X, ids, names, obs), tmp_path / "d.gs.h5ad"), X, obs["label"].to_numpy()


@pytest.mark.parametrize(
    "selector",
    [gs.SelectKBest(score_func="welch", k=4), gs.SelectPercentile(score_func="fisher", percentile=20),
     gs.SelectFdr(score_func="anova", alpha=0.01), gs.SelectKBest(score_func="auc", k=3),
     gs.SelectKBest(score_func="variance", k=2)],
)
def test_fit_on_a_store_equals_fit_on_arrays(store_path, selector):
    from sklearn.base import clone

    from genosift.io import open_store

    path, X, y = store_path
    ref = clone(selector).fit(X, y)
    target = None if selector.score_func == "variance" else "label"
    for source, labels in ((path, target), (str(path), target), (open_store(path), y if target else None)):
        sel = clone(selector).fit(source, labels)
        np.testing.assert_array_equal(sel.get_support(), ref.get_support())
        np.testing.assert_allclose(sel.scores_, ref.scores_, rtol=1e-12)
        assert sel.n_features_in_ == 25 and sel.result_.feature_names[0] == "g0"
        names = np.array([f"g{j}" for j in range(25)], dtype=object)
        assert "feature_names_in_" not in vars(sel)  # the store's names are read when first asked for
        np.testing.assert_array_equal(sel.feature_names_in_, names)
        np.testing.assert_array_equal(sel.get_feature_names_out(), names[ref.get_support()])
        np.testing.assert_array_equal(sel.transform(pd.DataFrame(X, columns=names)), X[:, ref.get_support()])
        with pytest.warns(UserWarning, match="does not have valid feature names"):  # fitted with names
            np.testing.assert_array_equal(sel.transform(X), X[:, ref.get_support()])
    store = open_store(path)
    np.testing.assert_array_equal(store.read_columns(sel.get_support()), X[:, ref.get_support()])


def test_fit_on_a_file_refits_and_explains_transform(store_path, tmp_path):
    path, X, y = store_path
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(25)])
    sel = gs.SelectKBest(score_func="welch", k=4).fit(frame, y)
    assert hasattr(sel, "feature_names_in_")
    sel.fit(path, "label")  # a later fit on a store has the store's names
    assert sel.feature_names_in_.tolist() == [f"g{j}" for j in range(25)]
    sel.fit(X, y)  # and a later fit on an array has none
    assert not hasattr(sel, "feature_names_in_")
    sel.fit(path, "label")
    frame.insert(0, "label", y)
    frame.insert(0, "id", [f"s{i}" for i in range(60)])
    frame.to_csv(tmp_path / "t.csv", index=False)
    np.testing.assert_array_equal(gs.SelectKBest(score_func="welch", k=4).fit(tmp_path / "t.csv",
                                                                              "label").get_support(),
                                  sel.get_support())
    with pytest.raises(TypeError, match=r"transform reduces arrays, not the file '.*d\.gs\.h5ad'\. Read the selected "
                                        r"columns with genosift\.io\.open_store\(path\)\.read_columns"):
        sel.transform(path)
    with pytest.raises(TypeError, match=r"transform reduces arrays, not the store Store\("):
        sel.fit_transform(gs.io.open_store(path), "label")
    with pytest.raises(TypeError, match=r"partial_fit adds a chunk of rows as an array; got the file"):
        sel.partial_fit(str(path), "label")
    with pytest.raises(TypeError, match=r"A callable score_func scores arrays; got the file"):
        gs.SelectKBest(score_func=lambda X, y: X.sum(axis=0), k=2).fit(path, "label")
    with pytest.raises(ValueError, match=r"has no per-sample column 'nope'"):
        gs.SelectKBest(score_func="welch").fit(path, "nope")
