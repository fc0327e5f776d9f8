"""Covariates through the selectors, cross-validation and ``evaluate``: every fit scores its rows with
their rows of the covariates, the same numbers as ``genosift.score`` on those rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from plain_methods import plain
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_validate
from sklearn.pipeline import Pipeline

import genosift as gs
from genosift.scores import covariate_methods
from genosift.selectors import RFE, StabilitySelection, cross_validate_ks
from genosift.workflow import evaluate, write_results

METHODS = plain(covariate_methods())
RNG = np.random.default_rng(7)
N, P = 60, 40
SITE = np.array(list("abc"))[RNG.integers(0, 3, N)]
AGE = RNG.normal(50, 10, N)
COV = pd.DataFrame({"age": AGE, "site": SITE})
Z = np.column_stack([AGE, SITE == "b", SITE == "c"]).astype(np.float64)
Y = np.where(0.08 * (AGE - 50) + (SITE == "c") + RNG.normal(size=N) > 0.3, "case", "control")
X = RNG.normal(size=(N, P))
X[Y == "case", :4] += 1.0
X[:, 4] += 2.0 * (SITE == "c")  # follows a covariate: adjusted away
FOLDS = list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, Y))


def _score(method, rows=slice(None)):
    return gs.score(X[rows], Y[rows], method=method, covariates=Z[rows])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("selector", [gs.SelectKBest(k=5), gs.SelectPercentile(percentile=20),
                                      gs.SelectFdr(alpha=0.5)], ids=lambda s: type(s).__name__)
def test_score_selectors_take_covariates_as_a_fit_parameter(method, selector):
    want = _score(method)
    sel = selector.set_params(score_func=method).fit(X, Y, covariates=COV)
    np.testing.assert_array_equal(sel.scores_, want.scores)
    assert sel.result_.covariates == ("age", "site=b", "site=c")
    name = type(selector).__name__.lower()
    pipe = Pipeline([(name, selector), ("model", LogisticRegression())]).fit(X, Y, **{f"{name}__covariates": Z})
    np.testing.assert_array_equal(pipe.named_steps[name].scores_, want.scores)


@pytest.mark.parametrize("method", METHODS)
def test_cross_validation_gives_each_fold_its_rows_of_the_covariates(method):
    pipe = Pipeline([("select", gs.SelectKBest(method, k=5)), ("model", LogisticRegression())])
    out = cross_validate(pipe, X, Y, cv=FOLDS, params={"select__covariates": COV}, return_estimator=True)
    for (train, _), fitted in zip(FOLDS, out["estimator"]):
        np.testing.assert_array_equal(fitted.named_steps["select"].scores_, _score(method, train).scores)
    folds = cross_validate_ks(X, Y, score_func=method, estimator=LogisticRegression(), ks=[3, 10], cv=FOLDS,
                              covariates=COV)
    for (train, _), fold in zip(FOLDS, folds):
        np.testing.assert_array_equal(fold["scores"], _score(method, train).scores)


@pytest.mark.parametrize("method", METHODS)
def test_select_k_cv_scores_each_training_fold_with_its_covariates(method):
    sel = gs.SelectKCV(method, ks=[2, 5, 20], cv=FOLDS).fit(X, Y, covariates=COV)
    for i, (train, _) in enumerate(FOLDS):
        np.testing.assert_array_equal(sel.cv_rankings_[i], _score(method, train).ranking[:20])
    np.testing.assert_array_equal(sel.scores_, _score(method).scores)
    assert sel.estimator_.n_features_in_ == sel.best_k_  # the model sees the selected features only
    unadjusted = gs.SelectKCV("pearson", ks=[2, 5, 20], cv=FOLDS).fit(X, Y)
    assert not np.array_equal(unadjusted.cv_rankings_, sel.cv_rankings_)


@pytest.mark.parametrize("method", METHODS)
def test_redundancy_mrmr_stability_and_rfe_prefilter(method):
    want = _score(method)
    red = gs.RedundancyFilter(method, k=5, max_corr=0.9).fit(X, Y, covariates=Z)
    np.testing.assert_array_equal(red.scores_, want.scores)
    mrmr = gs.MRMR(k=5, relevance=method).fit(X, Y, covariates=Z)
    np.testing.assert_array_equal(mrmr.relevance_, want.scores)
    stab = StabilitySelection(method, k=5, n_resamples=4, sample_fraction=0.8, random_state=0).fit(X, Y, covariates=COV)
    counts = np.zeros(P)
    for rows in stab.subsamples_:
        counts[_score(method, rows).ranking[:5]] += 1
    np.testing.assert_array_equal(stab.frequencies_, counts / 4)
    rfe = RFE(LogisticRegression(), n_features_to_select=3, prefilter=method, prefilter_k=10).fit(X, Y, covariates=Z)
    assert set(np.flatnonzero(rfe.support_)) <= set(want.ranking[:10])


@pytest.mark.parametrize("method", METHODS)
def test_evaluate_scores_each_fold_with_its_covariates(method, tmp_path):
    ev = evaluate(X, Y, method=method, ks=[2, 5], cv=4, covariates=COV, random_state=0)
    for fold in ev.folds:
        np.testing.assert_array_equal(fold["scores"], _score(method, fold["train"]).scores)
    np.testing.assert_array_equal(ev.result.scores, _score(method).scores)
    assert ev.result.covariates == ("age", "site=b", "site=c")
    assert ev.pipeline.named_steps["model"].n_features_in_ == ev.best_k
    folder = write_results(ev, tmp_path / "out", X=X, y=Y)
    import json

    assert json.loads((folder / "run.json").read_text())["covariates"] == ["age", "site=b", "site=c"]


def test_anndata_fit_takes_obs_column_names():
    anndata = pytest.importorskip("anndata")
    adata = anndata.AnnData(X, obs=COV.assign(y=Y).set_axis([f"s{i}" for i in range(N)]))
    sel = gs.SelectKBest(METHODS[0], k=5).fit(adata, "y", covariates=["age", "site"])
    np.testing.assert_array_equal(sel.scores_, _score(METHODS[0]).scores)
    cv = gs.SelectKCV(METHODS[0], ks=[2, 5], cv=FOLDS).fit(adata, "y", covariates=["age", "site"])
    np.testing.assert_array_equal(cv.scores_, _score(METHODS[0]).scores)


def test_scores_that_take_no_covariates_refuse_them():
    with pytest.raises(ValueError, match=r"Method 'anova' does not adjust for covariates.*or leave out covariates="):
        gs.SelectKBest("anova").fit(X, Y, covariates=Z)
    with pytest.raises(ValueError, match="not a registered method"):
        gs.SelectKBest(lambda X, y: X.var(axis=0)).fit(X, Y, covariates=Z)
    with pytest.raises(ValueError, match="does not adjust for covariates"):
        gs.SelectKCV("fisher", ks=[2]).fit(X, Y, covariates=Z)
    with pytest.raises(ValueError, match="does not adjust for covariates"):
        evaluate(X, Y, method="fisher", ks=[2], covariates=Z)
    with pytest.raises(ValueError, match="not a registered method"):
        RFE(LogisticRegression()).fit(X, Y, covariates=Z)
    with pytest.raises(ValueError, match=r"covariates have 59 rows, but 60 samples"):
        gs.SelectKCV(METHODS[0], ks=[2]).fit(X, Y, covariates=Z[1:])


def test_a_covariate_constant_on_a_training_fold_names_the_fold():
    site = SITE.copy()
    test_rows = FOLDS[2][1]
    site[test_rows[:2]] = "d"  # a level that only two held-out samples of fold 3 have
    with pytest.raises(ValueError, match=r"Fold 3/4, scored on its \d+ training rows: The covariate\(s\) 'site=d' "
                                         r"are constant"):
        gs.SelectKCV(METHODS[0], ks=[2], cv=FOLDS).fit(X, Y, covariates=pd.DataFrame({"site": site}))


def test_metadata_routing_requests_covariates():
    from sklearn import config_context

    method = METHODS[0]
    with config_context(enable_metadata_routing=True):
        pipe = Pipeline([("select", gs.SelectKBest(method, k=5).set_fit_request(covariates=True)),
                         ("model", LogisticRegression())])
        out = cross_validate(pipe, X, Y, cv=FOLDS, params={"covariates": Z}, return_estimator=True)
    for (train, _), fitted in zip(FOLDS, out["estimator"]):
        np.testing.assert_array_equal(fitted.named_steps["select"].scores_, _score(method, train).scores)


def test_rows_match_by_sample_id_only_where_both_have_ids():
    method = METHODS[0]
    ids = [f"s{i}" for i in range(N)]
    frame, by_id = pd.DataFrame(X, index=ids), COV.set_axis(ids)
    want = _score(method)
    for selector in (gs.SelectKBest(method, k=5), gs.RedundancyFilter(method, k=5, max_corr=0.9)):
        np.testing.assert_array_equal(selector.fit(frame, Y, covariates=by_id.iloc[::-1]).scores_, want.scores)
    np.testing.assert_array_equal(gs.SelectKCV(method, ks=[2], cv=FOLDS).fit(frame, Y, covariates=by_id.iloc[::-1])
                                  .scores_, want.scores)
    # cross-validation takes the same rows of X (default index) and of covariates indexed by id: by position
    pipe = Pipeline([("select", gs.SelectKBest(method, k=5)), ("model", LogisticRegression())])
    out = cross_validate(pipe, pd.DataFrame(X), Y, cv=FOLDS, params={"select__covariates": by_id},
                         return_estimator=True)
    for (train, _), fitted in zip(FOLDS, out["estimator"]):
        np.testing.assert_array_equal(fitted.named_steps["select"].scores_, _score(method, train).scores)
