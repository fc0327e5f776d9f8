"""Model-based selection: method 'linear', RFE, SelectKCV / cross_validate_ks, StabilitySelection."""
import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_selection import RFE as SkRFE
from sklearn.feature_selection import SelectKBest as SkSelectKBest
from sklearn.feature_selection import f_classif
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.model_selection import GridSearchCV, GroupKFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

import genosift as gs
from genosift.selectors import cross_validate_ks, model_importances, subsamples

from conftest import load_shared


def _data(seed=0, n=80, p=40, classes=2, informative=5, shift=1.0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    rng.shuffle(y)
    X = rng.standard_normal((n, p))
    X[:, :informative] += shift * y[:, None] * np.linspace(1.0, 0.3, informative)
    return X, y


def _weights(coef):
    return np.abs(coef[0]) if coef.shape[0] == 1 else np.sqrt((coef**2).sum(axis=0))


@parametrize_with_checks([  # small settings: every check fits many times
    gs.RFE(LogisticRegression(), n_features_to_select=1, step=0.5),
    gs.RFE(DecisionTreeClassifier(random_state=0), step=1, prefilter="fisher", prefilter_k=1),
    gs.SelectKCV(ks=(1,), cv=2),
    gs.SelectKCV("fisher", DecisionTreeClassifier(random_state=0), ks=(1, 2), cv=2, scoring="accuracy"),
    gs.StabilitySelection(k=1, n_resamples=5),
    gs.StabilitySelection(LogisticRegression(), k=1, n_resamples=2, threshold=0.5),
])
@pytest.mark.filterwarnings("ignore:ks above n_features", "ignore:k=1 is greater")
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------------------------
# method 'linear'
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["golub", "GLIOMA"])  # two classes; four classes
def test_linear_equals_a_direct_scikit_learn_fit(name):
    X, y, _ = load_shared(name)
    X = np.asarray(X[:, :1500], dtype=np.float64)
    res = gs.score(X, y, method="linear")
    logistic = LogisticRegression(solver="newton-cg", tol=1e-10, max_iter=1000)
    direct = make_pipeline(StandardScaler(with_mean=False), clone(logistic)).fit(X, y)[-1].coef_
    expected = _weights(direct)
    np.testing.assert_allclose(res.scores, expected, rtol=0, atol=1e-5 * expected.max())
    if len(np.unique(y)) == 2:
        np.testing.assert_allclose(res.statistic, direct[0], rtol=0, atol=1e-5 * expected.max())
    # solved to the optimum: the weights of centred features (StandardScaler's default) are the same
    centred = _weights(make_pipeline(StandardScaler(), clone(logistic)).fit(X, y)[-1].coef_)
    np.testing.assert_allclose(res.scores, centred, rtol=0, atol=1e-5 * expected.max())
    X = X[:, :500]  # liblinear converges slowly on thousands of standardised features
    svm = gs.score(sp.csr_matrix(X), y, method="linear",
                   method_options={"model": "linear_svm", "C": 0.01, "max_iter": 10000})
    direct = make_pipeline(StandardScaler(with_mean=False), LinearSVC(C=0.01, max_iter=10000, random_state=0)).fit(X, y)
    np.testing.assert_allclose(svm.scores, _weights(direct[-1].coef_), rtol=1e-9, atol=1e-12)


def test_linear_constant_features_are_nan_and_left_out_of_the_fit():
    X, y = _data(seed=1, p=12)
    X[:, 3] = 7.0
    X[:, 8] = 0.0
    res = gs.score(X, y, method="linear", method_options={"C": 0.5})
    assert np.isnan(res.scores[[3, 8]]).all() and np.isfinite(np.delete(res.scores, [3, 8])).all()
    rest = np.delete(np.arange(12), [3, 8])
    Z = X[:, rest] / X[:, rest].std(axis=0)
    direct = LogisticRegression(C=0.5, solver="newton-cg", tol=1e-10, max_iter=1000).fit(Z, y).coef_[0]
    np.testing.assert_allclose(res.statistic[rest], direct, rtol=1e-6, atol=1e-9)
    assert list(res.ranking[-2:]) == [3, 8]


@pytest.mark.parametrize("density", [0.1, 0.9])  # the solver's copy is CSR, then dense
def test_linear_gives_the_same_bits_for_every_form_of_the_data(density):
    rng = np.random.default_rng(12)
    X = rng.poisson(3.0, size=(70, 90)) * (rng.random((70, 90)) < density)
    X[:, 5] = 0
    y = rng.integers(0, 3, 70)
    ref = gs.score(X, y, method="linear")
    for form in (X.astype(np.float32), np.asfortranarray(X), sp.csr_matrix(X), sp.csc_matrix(X.astype(np.float64))):
        np.testing.assert_array_equal(gs.score(form, y, method="linear").scores, ref.scores)
    Z = X[:, np.arange(90) != 5] / X[:, np.arange(90) != 5].std(axis=0)
    direct = LogisticRegression(solver="newton-cg", tol=1e-10, max_iter=1000).fit(Z, y).coef_
    np.testing.assert_allclose(np.delete(ref.scores, 5), _weights(direct), rtol=1e-6)


def test_linear_bad_options_are_clear_errors():
    X, y = _data(p=5)
    with pytest.raises(ValueError, match="The 'model' option of method 'linear' must be one of"):
        gs.score(X, y, method="linear", method_options={"model": "svm"})
    with pytest.raises(ValueError, match="The 'C' option of method 'linear' must be a finite number > 0. Got 0"):
        gs.score(X, y, method="linear", method_options={"C": 0})
    with pytest.raises(ValueError, match="'max_iter'"):
        gs.score(X, y, method="linear", method_options={"max_iter": 0})
    assert gs.get_method("linear").streaming == "matrix" and not gs.get_method("linear").has_pvalues


# --------------------------------------------------------------------------------------------
# RFE
# --------------------------------------------------------------------------------------------

def _rfe_cases():
    X1, y1 = _data(seed=2, n=90, p=30)
    X2, y2 = _data(seed=3, n=120, p=25, classes=3, informative=8)
    return [("binary", X1, y1), ("three classes", X2, y2)]


def _stable_sklearn_ties(monkeypatch):
    """The reference breaks ties among equal importances by position, as genosift's RFE does.

    scikit-learn does so from 1.8 (a stable sort); before, its order among tied importances (a
    decision tree's zeros) was numpy's default sort's, which differs between numpy 1.x and 2.x.
    For those versions the reference's sort is made stable; nothing else of it changes.
    """
    import types

    import sklearn.feature_selection._rfe as rfe_module

    if 'kind="stable"' in inspect.getsource(rfe_module):
        return
    shim = types.ModuleType("numpy_with_stable_argsort")
    shim.__dict__.update(np.__dict__)
    shim.argsort = lambda a, *args, **kw: np.argsort(a, *args, **{"kind": "stable", **kw})
    monkeypatch.setattr(rfe_module, "np", shim)


@pytest.mark.parametrize("case", [0, 1])
@pytest.mark.parametrize("step", [1, 7])
@pytest.mark.parametrize("make", [lambda: LogisticRegression(max_iter=1000), lambda: LinearSVC(random_state=0),
                                  lambda: DecisionTreeClassifier(random_state=0)])
def test_rfe_int_step_equals_sklearn(case, step, make, monkeypatch):
    _stable_sklearn_ties(monkeypatch)
    _, X, y = _rfe_cases()[case]
    ours = gs.RFE(make(), n_features_to_select=6, step=step).fit(X, y)
    theirs = SkRFE(make(), n_features_to_select=6, step=step).fit(X, y)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_array_equal(ours.ranking_, theirs.ranking_)
    assert ours.n_features_ == theirs.n_features_ == 6


def test_rfe_equals_sklearn_on_real_data():
    X, y, _ = load_shared("colon")
    X = np.asarray(X[:, :400], dtype=np.float64)
    ours = gs.RFE(LinearSVC(C=0.01, random_state=0), n_features_to_select=0.05, step=20).fit(X, y)
    theirs = SkRFE(LinearSVC(C=0.01, random_state=0), n_features_to_select=0.05, step=20).fit(X, y)
    np.testing.assert_array_equal(ours.ranking_, theirs.ranking_)
    Xs = sp.csr_matrix(np.where(np.abs(X) > 1, X, 0.0))
    ours = gs.RFE(LogisticRegression(max_iter=1000), n_features_to_select=10, step=50).fit(Xs, y)
    theirs = SkRFE(LogisticRegression(max_iter=1000), n_features_to_select=10, step=50).fit(Xs, y)
    np.testing.assert_array_equal(ours.support_, theirs.support_)


def test_rfe_fractional_step_is_a_fraction_of_the_remaining_features():
    X, y, _ = load_shared("golub")
    X = X[:, :600]
    ours = gs.RFE(LinearSVC(random_state=0), n_features_to_select=15, step=0.3).fit(X, y)
    # reference: scikit-learn's RFE, one round at a time, each dropping 30% of what remains
    remaining, rounds = np.arange(X.shape[1]), 0
    while remaining.size > 15:
        drop = min(max(1, int(0.3 * remaining.size)), remaining.size - 15)
        one = SkRFE(LinearSVC(random_state=0), n_features_to_select=remaining.size - drop, step=drop)
        remaining = remaining[one.fit(X[:, remaining], y).support_]
        rounds += 1
    np.testing.assert_array_equal(np.flatnonzero(ours.support_), remaining)
    assert ours.ranking_.max() == rounds + 1 and (ours.ranking_ == 1).sum() == 15
    # within the first round the fraction is also scikit-learn's (a fraction of all features)
    ours = gs.RFE(LinearSVC(random_state=0), n_features_to_select=500, step=0.25).fit(X, y)
    theirs = SkRFE(LinearSVC(random_state=0), n_features_to_select=500, step=0.25).fit(X, y)
    np.testing.assert_array_equal(ours.ranking_, theirs.ranking_)


def test_rfe_prefilter_runs_the_elimination_on_the_best_scored_features():
    X, y = _data(seed=4, n=100, p=300)
    ours = gs.RFE(LogisticRegression(max_iter=1000), n_features_to_select=5, step=3,
                  prefilter="anova", prefilter_k=40).fit(X, y)
    kept = np.sort(np.argsort(-f_classif(X, y)[0], kind="stable")[:40])
    theirs = SkRFE(LogisticRegression(max_iter=1000), n_features_to_select=5, step=3).fit(X[:, kept], y)
    np.testing.assert_array_equal(np.flatnonzero(ours.support_), kept[theirs.support_])
    np.testing.assert_array_equal(ours.ranking_[kept], theirs.ranking_)
    outside = np.setdiff1d(np.arange(300), kept)
    assert (ours.ranking_[outside] == theirs.ranking_.max() + 1).all()
    same = gs.RFE(LogisticRegression(max_iter=1000), n_features_to_select=5, step=3,
                  prefilter=lambda X, y: f_classif(X, y)[0], prefilter_k=40).fit(X, y)
    np.testing.assert_array_equal(same.ranking_, ours.ranking_)


class _CountingLogistic(LogisticRegression):
    """Logistic regression that records the solver iterations of every fit."""

    iterations = []

    def fit(self, X, y):
        super().fit(X, y)
        _CountingLogistic.iterations.append(int(self.n_iter_[0]))
        return self


def test_rfe_warm_start_carries_the_surviving_weights():
    X, y = _data(seed=5, n=150, p=80, informative=6, shift=1.5)
    make = lambda warm: _CountingLogistic(C=0.1, tol=1e-8, max_iter=5000, warm_start=warm)  # noqa: E731
    _CountingLogistic.iterations = []
    cold = gs.RFE(make(False), n_features_to_select=6, step=0.2).fit(X, y)
    cold_iterations = sum(_CountingLogistic.iterations)
    _CountingLogistic.iterations = []
    warm = gs.RFE(make(True), n_features_to_select=6, step=0.2).fit(X, y)
    # the same optimum at every round, reached from the previous round's weights
    np.testing.assert_array_equal(warm.ranking_, cold.ranking_)
    np.testing.assert_allclose(warm.estimator_.coef_, cold.estimator_.coef_, rtol=1e-5)
    assert len(_CountingLogistic.iterations) == 15 and sum(_CountingLogistic.iterations) < 0.9 * cold_iterations
    # an estimator that starts from coef_ (SGD) gets the surviving columns of the previous weights
    sgd = gs.RFE(SGDClassifier(random_state=0, warm_start=True), n_features_to_select=6, step=0.2).fit(X, y)
    assert sgd.estimator_.coef_.shape == (1, 6) and sgd.estimator_.warm_start


def test_rfe_parameter_errors():
    X, y = _data(p=10)
    with pytest.raises(ValueError, match="'step' parameter of RFE must be an int >= 1 or a fraction in"):
        gs.RFE(LogisticRegression(), step=0).fit(X, y)
    with pytest.raises(ValueError, match="'n_features_to_select' parameter of RFE"):
        gs.RFE(LogisticRegression(), n_features_to_select=1.5).fit(X, y)
    with pytest.raises(ValueError, match="'prefilter_k' parameter of RFE must be an int in \\[1, n_features\\]"):
        gs.RFE(LogisticRegression(), prefilter="anova").fit(X, y)
    with pytest.raises(ValueError, match="'prefilter' parameter of RFE must be a callable or one of"):
        gs.RFE(LogisticRegression(), prefilter="nope", prefilter_k=3).fit(X, y)
    with pytest.raises(ValueError, match="prefilter_k is set but prefilter is None"):
        gs.RFE(LogisticRegression(), prefilter_k=3).fit(X, y)
    with pytest.raises(TypeError, match="neither coef_ nor feature_importances_"):
        from sklearn.neighbors import KNeighborsClassifier
        gs.RFE(KNeighborsClassifier()).fit(X, y)
    with pytest.warns(UserWarning, match="all of them are kept"):
        assert gs.RFE(LogisticRegression(), n_features_to_select=20).fit(X, y).n_features_ == 10


# --------------------------------------------------------------------------------------------
# SelectKCV and cross_validate_ks
# --------------------------------------------------------------------------------------------

def test_no_selection_leak_on_pure_noise():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((60, 5000))
    y = np.repeat([0, 1], 30)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    sel = gs.SelectKCV("anova", LogisticRegression(), ks=(10, 20, 50), cv=cv).fit(X, y)
    assert (sel.cv_results_["mean_test_score"] < 0.65).all(), sel.cv_results_
    # the leak this avoids: scoring on all rows first, then cross-validating the model
    for k in (10, 20, 50):
        top = gs.score(X, y, method="anova").ranking[:k]
        leaky = cross_val_score(LogisticRegression(), X[:, top], y, cv=cv, scoring="balanced_accuracy").mean()
        assert leaky > 0.85


def test_fold_rankings_are_the_training_rows_scores():
    X, y, _ = load_shared("golub")
    sel = gs.SelectKCV("welch", ks=(2, 20, 200), cv=4, random_state=0).fit(X, y)
    assert len(sel.cv_splits_) == 4 and sel.cv_rankings_.shape == (4, 200)
    for (train, test), ranking in zip(sel.cv_splits_, sel.cv_rankings_):
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == X.shape[0]
        np.testing.assert_array_equal(ranking, gs.score(X[train], y[train], method="welch").ranking[:200])
    full = gs.score(X, y, method="welch")
    np.testing.assert_array_equal(sel.ranking_, full.ranking)
    np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), np.sort(full.ranking[: sel.best_k_]))
    assert sel.estimator_.coef_.shape == (1, sel.best_k_)


@pytest.mark.parametrize("sparse", [False, True])
def test_selectkcv_curve_equals_grid_search_over_a_pipeline(sparse):
    X, y = _data(seed=7, n=90, p=120, classes=3, informative=10, shift=0.8)
    X = sp.csr_matrix(np.where(X > 0.3, X, 0.0)) if sparse else X
    ks = [1, 3, 10, 30, 120]
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    sel = gs.SelectKCV("anova", LogisticRegression(max_iter=500), ks=ks, cv=cv, scoring="accuracy").fit(X, y)
    grid = GridSearchCV(make_pipeline(SkSelectKBest(f_classif), LogisticRegression(max_iter=500)),
                        {"selectkbest__k": ks}, cv=cv, scoring="accuracy").fit(X, y)
    res = sel.cv_results_
    np.testing.assert_array_equal(res["k"], ks)
    np.testing.assert_allclose(res["mean_test_score"], grid.cv_results_["mean_test_score"], rtol=1e-12)
    np.testing.assert_allclose(res["std_test_score"], grid.cv_results_["std_test_score"], rtol=1e-12, atol=1e-15)
    for i in range(3):
        np.testing.assert_allclose(res[f"split{i}_test_score"], grid.cv_results_[f"split{i}_test_score"])
    np.testing.assert_array_equal(res["rank_test_score"], grid.cv_results_["rank_test_score"])
    assert sel.best_k_ == grid.best_params_["selectkbest__k"] and sel.best_score_ == pytest.approx(grid.best_score_)


def test_cross_validate_ks_predictions_and_probabilities():
    X, y = _data(seed=8, n=60, p=50, classes=3)
    labels = np.array(["a", "b", "c"])[y]
    with pytest.warns(UserWarning, match=r"ks above n_features=50 \(\[500\]\) are evaluated as k=50"):
        folds = cross_validate_ks(X, labels, score_func="fisher", estimator=LogisticRegression(), ks=[2, 8, 500],
                                  cv=3, random_state=0)
    assert len(folds) == 3
    for fold in folds:
        train, test = fold["train"], fold["test"]
        assert list(fold["ks"]) == [2, 8, 50] and list(fold["classes"]) == ["a", "b", "c"]
        np.testing.assert_array_equal(fold["ranking"], gs.score(X[train], labels[train], method="fisher").ranking)
        for k in (2, 8, 50):
            cols = np.sort(fold["ranking"][:k])
            model = LogisticRegression().fit(X[np.ix_(train, cols)], labels[train])
            np.testing.assert_array_equal(fold["predicted"][k], model.predict(X[np.ix_(test, cols)]))
            np.testing.assert_allclose(fold["proba"][k], model.predict_proba(X[np.ix_(test, cols)]), rtol=1e-12)
            np.testing.assert_allclose(fold["decision"][k], model.decision_function(X[np.ix_(test, cols)]), rtol=1e-12)
    # a class missing from a training fold: its probability column is 0, its decision -inf
    test = np.flatnonzero(labels == "c")[:5]
    train = np.setdiff1d(np.flatnonzero(labels != "c"), test)
    for model, columns in ((LogisticRegression(), [0, 1]), (DecisionTreeClassifier(random_state=0), [0, 1])):
        (fold,) = cross_validate_ks(X, labels, score_func="fisher", estimator=model, ks=[4], cv=[(train, test)])
        cols = np.sort(fold["ranking"][:4])
        direct = clone(model).fit(X[np.ix_(train, cols)], labels[train]).predict_proba(X[np.ix_(test, cols)])
        assert fold["proba"][4].shape == (5, 3) and (fold["proba"][4][:, 2] == 0).all()
        np.testing.assert_allclose(fold["proba"][4][:, columns], direct, rtol=1e-12)
    assert fold["decision"][4] is None  # a tree has no decision_function
    svm = cross_validate_ks(X, labels, score_func="fisher", estimator=LinearSVC(), ks=[4], cv=2)
    assert svm[0]["proba"][4] is None and svm[0]["decision"][4].shape == (30, 3)
    (fold,) = cross_validate_ks(X, labels, score_func="fisher", estimator=LinearSVC(), ks=[4],
                                cv=[(train, test)])
    assert fold["decision"][4].shape == (5,)  # two classes in training: scikit-learn's 1-D decision


def test_cross_validate_ks_keeps_groups_whole_and_accepts_a_splitter():
    X, y = _data(seed=9, n=60, p=30)
    groups = np.arange(60) // 4
    for cv in (3, GroupKFold(3)):
        folds = cross_validate_ks(X, y, score_func="anova", estimator=LogisticRegression(), ks=[3], cv=cv,
                                  groups=groups)
        for fold in folds:
            assert np.intersect1d(groups[fold["train"]], groups[fold["test"]]).size == 0
        assert np.sort(np.concatenate([f["test"] for f in folds])).tolist() == list(range(60))


def test_selectkcv_is_reproducible_and_refits_on_all_rows():
    X, y = _data(seed=10, n=70, p=200, informative=4, shift=1.5)
    a = gs.SelectKCV("fisher", ks=(2, 4, 50), cv=5, random_state=3).fit(X, y)
    b = gs.SelectKCV("fisher", ks=(2, 4, 50), cv=5, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    for sel in (a, gs.SelectKCV("fisher", ks=(2, 4, 50), cv=5, random_state=4).fit(X, y)):
        mean = sel.cv_results_["mean_test_score"]
        assert sel.best_k_ == (2, 4, 50)[int(np.argmax(mean))] and sel.best_score_ == mean.max()
        top = gs.score(X, y, method="fisher").ranking[: sel.best_k_]
        np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), np.sort(top))
    folds = [test for _, test in a.cv_splits_]
    assert not any(np.array_equal(t, u) for t, u in zip(folds, (test for _, test in b.cv_splits_[1:])))
    expected = StratifiedKFold(5, shuffle=True, random_state=3).split(X, y)
    assert all(np.array_equal(t, e) for t, (_, e) in zip(folds, expected))
    with pytest.warns(UserWarning, match="ks above n_features=200"):
        c = gs.SelectKCV(lambda X, y: f_classif(X, y), ks=(1, 4, 1000), cv=3).fit(X, y)
    assert c.cv_results_["k"].tolist() == [1, 4, 200]
    np.testing.assert_allclose(c.pvalues_, f_classif(X, y)[1])


def test_selectkcv_parameter_errors():
    X, y = _data(p=10)
    for params, match in (
        (dict(ks=[]), "'ks' parameter of SelectKCV must be a non-empty sequence of ints >= 1"),
        (dict(ks=[0, 3]), "'ks' parameter"),
        (dict(ks=[2.5]), "'ks' parameter"),
        (dict(cv=1), "'cv' parameter of SelectKCV must be an int >= 2"),
        (dict(cv="five"), "'cv' parameter"),
        (dict(cv=[(1, 2)]), "'cv' parameter"),
        (dict(scoring="nope"), "'scoring' parameter of SelectKCV must be a name from"),
        (dict(estimator="logistic"), "'estimator' parameter of SelectKCV must be a scikit-learn estimator"),
        (dict(score_func="nope"), "'score_func' parameter of SelectKCV must be a callable or one of"),
        (dict(method_options=3), "'method_options' parameter of SelectKCV must be a dict or None"),
    ):
        with pytest.raises(ValueError, match=match):
            gs.SelectKCV(**{"ks": (1,), **params}).fit(X, y)
    with pytest.raises(ValueError, match="'estimator' parameter of cross_validate_ks"):
        cross_validate_ks(X, y, score_func="anova", estimator=None, ks=[1], cv=2)


# --------------------------------------------------------------------------------------------
# StabilitySelection
# --------------------------------------------------------------------------------------------

def test_stability_frequencies_equal_a_direct_loop():
    X, y, _ = load_shared("GLIOMA")
    X = X[:, :1500]
    sel = gs.StabilitySelection("fisher", k=20, n_resamples=30, sample_fraction=0.6, threshold=0.7,
                                random_state=0).fit(X, y)
    counts = np.zeros(X.shape[1])
    for rows in sel.subsamples_:
        counts[gs.score(X[rows], y[rows], method="fisher").ranking[:20]] += 1
    np.testing.assert_array_equal(sel.frequencies_, counts / 30)
    np.testing.assert_array_equal(sel.get_support(), counts / 30 >= 0.7)
    assert 0 < sel.get_support().sum() < 20


def test_stability_with_an_estimator_equals_a_direct_loop():
    X, y = _data(seed=11, n=60, p=40)
    model = LogisticRegression(C=0.1)
    sel = gs.StabilitySelection(model, k=5, n_resamples=12, random_state=1).fit(X, y)
    counts = np.zeros(40)
    for rows in sel.subsamples_:
        coef = LogisticRegression(C=0.1).fit(X[rows], y[rows]).coef_[0]
        counts[np.argsort(-coef**2, kind="stable")[:5]] += 1
    np.testing.assert_array_equal(sel.frequencies_, counts / 12)
    np.testing.assert_array_equal(model_importances(LogisticRegression().fit(X, y)),
                                  LogisticRegression().fit(X, y).coef_[0] ** 2)


def test_subsamples_are_stratified_without_replacement_and_seeded():
    y = np.array(["a"] * 11 + ["b"] * 7 + ["c"] * 2)
    rows = subsamples(y, n_resamples=200, sample_fraction=0.5, stratify=True, random_state=0)
    assert rows.shape == (200, 5 + 3 + 1)
    for r in rows:
        assert np.unique(r).size == r.size and (np.diff(r) > 0).all()
        assert [int((y[r] == c).sum()) for c in "abc"] == [5, 3, 1]
    # every row of a class is drawn about equally often
    drawn = np.bincount(rows.ravel(), minlength=20)
    assert drawn[:11].min() > 0.5 * 200 * 5 / 11 and drawn[11:18].min() > 0.5 * 200 * 3 / 7
    np.testing.assert_array_equal(rows, subsamples(y, n_resamples=200, sample_fraction=0.5, stratify=True,
                                                   random_state=0))
    plain = subsamples(y, n_resamples=3, sample_fraction=0.3, stratify=False, random_state=0)
    assert plain.shape == (3, 6)
    X = np.random.default_rng(0).standard_normal((20, 6))
    sel = gs.StabilitySelection("pearson", k=2, n_resamples=4, random_state=2).fit(X, np.arange(20) * 0.5)
    assert sel.subsamples_.shape == (4, 10)  # a numeric target: not stratified


def test_stability_parameter_errors():
    X, y = _data(p=10)
    for params, match in (
        (dict(k=0), "'k' parameter of StabilitySelection must be an int >= 1"),
        (dict(n_resamples=0), "'n_resamples'"),
        (dict(sample_fraction=1.0), "'sample_fraction' parameter of StabilitySelection must be a number in \\(0, 1\\)"),
        (dict(threshold=0), "'threshold'"),
        (dict(score_func="nope"), "'score_func' parameter of StabilitySelection"),
    ):
        with pytest.raises(ValueError, match=match):
            gs.StabilitySelection(**params).fit(X, y)
    with pytest.raises(ValueError, match="set its parameters on the estimator"):
        gs.StabilitySelection(LogisticRegression(), method_options={"C": 1}).fit(X, y)
