"""KnockoffSelector: scikit-learn's checks, the false discovery rate over simulations with and
without signal, identical features as one pattern, groups, covariates, draws combined."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import norm
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import genosift as gs
from genosift.selectors.knockoffs import KnockoffOptions


def _ar1(n, p, rho, rng):
    X = np.empty((n, p))
    X[:, 0] = rng.standard_normal(n)
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    return X


def _design(seed, *, n=150, p=60, k=15, amplitude=0.5, binary=False, signal=True):
    """AR(1) Gaussian features (or thresholded at their 70 % quantile: 0/1 at frequency 0.3) and a
    linear target (or its sign about the median) of ``k`` random features."""
    rng = np.random.default_rng(seed)
    X = _ar1(n, p, 0.5, rng)
    if binary:
        X = (X > norm.ppf(0.7)).astype(float)
    beta = np.zeros(p)
    if signal:
        beta[rng.choice(p, k, replace=False)] = rng.choice([-1.0, 1.0], k) * amplitude * (2.2 if binary else 1.0)
    y = X @ beta + rng.standard_normal(n)
    return X, ((y > np.median(y)).astype(int) if binary else y), beta != 0


def _false_discovery_proportions(runs, fdr, **design):
    fdp, power = np.empty(runs), np.empty(runs)
    for r in range(runs):
        X, y, truth = _design(r, **design)
        chosen = gs.KnockoffSelector(fdr=fdr, statistic="lasso_entry", random_state=r).fit(X, y).get_support()
        fdp[r] = (chosen & ~truth).sum() / max(chosen.sum(), 1)
        power[r] = (chosen & truth).sum() / max(truth.sum(), 1)
    return fdp, power


def _check_fdr(fdp, fdr):
    """The mean false discovery proportion at most the target, within 2 Monte-Carlo standard errors."""
    assert fdp.mean() <= fdr + 2 * fdp.std(ddof=1) / np.sqrt(fdp.size) + 1e-12


def test_fdr_controlled_over_100_gaussian_designs_with_signal():
    fdp, power = _false_discovery_proportions(100, 0.2, n=120, p=40, k=12, amplitude=0.55)
    _check_fdr(fdp, 0.2)
    assert power.mean() > 0.5  # and something found


@pytest.mark.slow
@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("signal", [True, False])
def test_fdr_controlled_over_100_designs(binary, signal):
    fdp, power = _false_discovery_proportions(100, 0.2, binary=binary, signal=signal)
    _check_fdr(fdp, 0.2)
    if signal:
        assert power.mean() > (0.3 if binary else 0.6)
    else:  # the FDP is the share of runs with any selection
        assert fdp.mean() <= 0.05


@parametrize_with_checks([gs.KnockoffSelector(statistic="lasso_entry", s_method="equi"),
                          gs.KnockoffSelector(fdr=0.3, cv=2, feature_groups="correlation", n_draws=2)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_selects_the_signal_and_ranks_every_feature():
    X, y, truth = _design(7, n=300, p=60, k=15, amplitude=0.6)
    sel = gs.KnockoffSelector(fdr=0.1).fit(X, y)
    chosen = sel.get_support()
    assert chosen.sum() >= 10 and (chosen & ~truth).sum() <= 2
    frame = sel.result_.to_frame([f"f{j}" for j in range(60)])
    assert list(frame.columns) == ["feature", "group", "statistic", "e_value", "selected", "rank"]
    assert frame["rank"].tolist() == list(range(1, 61)) and frame["selected"].sum() == chosen.sum()
    assert frame["selected"].iloc[:chosen.sum()].all()  # the selected first
    assert (np.diff(frame["e_value"]) <= 0).all()
    np.testing.assert_array_equal(sel.transform(X), X[:, chosen])
    # in a pipeline, and the same for a sparse matrix of the same values
    pipe = make_pipeline(gs.KnockoffSelector(fdr=0.1), gs.ElasticNetSelector(cv=3)).fit(X, y)
    np.testing.assert_array_equal(pipe[0].get_support(), chosen)
    np.testing.assert_array_equal(gs.KnockoffSelector(fdr=0.1).fit(sp.csr_matrix(X), y).get_support(), chosen)
    import pandas as pd

    named = gs.KnockoffSelector(fdr=0.1).fit(pd.DataFrame(X, columns=[f"g{j}" for j in range(60)]), y)
    assert named.result_.to_frame()["feature"].tolist() == [f"g{j}" for j in frame["feature"].str[1:].astype(int)]


def test_identical_and_constant_features_are_one_pattern():
    X, y, truth = _design(8, n=300, p=40, k=12, amplitude=0.6)
    twice = np.hstack([X, X[:, :5], np.ones((300, 1))])
    sel = gs.KnockoffSelector(fdr=0.2, statistic="lasso_entry").fit(twice, y)
    r = sel.result_
    assert r.patterns == 40 and r.group[-1] == -1 and not sel.get_support()[-1]
    np.testing.assert_array_equal(r.group[40:45], r.group[:5])
    np.testing.assert_array_equal(sel.get_support()[40:45], sel.get_support()[:5])
    assert np.isnan(sel.statistics_[-1])
    with pytest.raises(ValueError, match="Identical features are in different groups"):
        gs.KnockoffSelector(feature_groups=np.arange(46)).fit(twice, y)


def test_groups_are_selected_whole():
    rng = np.random.default_rng(3)
    n, blocks = 300, 40
    latent = rng.standard_normal((n, blocks))
    X = np.repeat(latent, 3, axis=1) + 0.5 * rng.standard_normal((n, 3 * blocks))  # blocks of 3 correlated
    y = latent[:, :12] @ np.full(12, 0.5) + rng.standard_normal(n)
    sel = gs.KnockoffSelector(fdr=0.1, feature_groups="correlation", statistic="lasso_entry",
                              random_state=103).fit(X, y)
    np.testing.assert_array_equal(sel.result_.group, np.repeat(np.arange(blocks), 3))
    chosen = sel.get_support().reshape(blocks, 3)
    assert (chosen.all(axis=1) | ~chosen.any(axis=1)).all()
    assert chosen[:12].all(axis=1).sum() >= 10 and chosen[12:].all(axis=1).sum() <= 1
    given = gs.KnockoffSelector(fdr=0.1, feature_groups=np.repeat(np.arange(blocks), 3), statistic="lasso_entry",
                                random_state=103).fit(X, y)
    np.testing.assert_array_equal(given.get_support(), sel.get_support())


def test_a_covariate_confounder_is_not_selected_when_given():
    """A feature that only tracks a covariate which drives the target is null given the covariate."""
    rng = np.random.default_rng(5)
    n = 400
    z = rng.standard_normal(n)
    X = rng.standard_normal((n, 40))
    X[:, :10] += 1.5 * z[:, None]  # proxies of the covariate
    X[:, 10:22] += 0.0
    y = 1.5 * z + X[:, 10:22] @ np.full(12, 0.5) + rng.standard_normal(n)
    with_z = gs.KnockoffSelector(fdr=0.1).fit(X, y, covariates=z[:, None]).get_support()
    without = gs.KnockoffSelector(fdr=0.1).fit(X, y).get_support()
    assert with_z[10:22].sum() >= 10 and with_z[:10].sum() <= 2
    assert without[:10].sum() >= 6  # without it, the proxies carry the covariate's effect


def test_draws_combined_by_e_values():
    X, y, truth = _design(11, n=300, p=60, k=15, amplitude=0.6)
    sel = gs.KnockoffSelector(fdr=0.2, n_draws=4, statistic="lasso_entry").fit(X, y)
    r = sel.result_
    assert r.statistics.shape == (4, 60) and r.draw_fdr == 0.1
    by_hand = np.mean([60 * (W >= t) / (1 + (W <= -t).sum()) if np.isfinite(t) else np.zeros(60)
                       for W, t in zip(r.statistics, r.thresholds)], axis=0)
    np.testing.assert_allclose(r.e_values, by_hand)
    chosen = sel.get_support()
    assert (chosen & truth).sum() >= 10 and (chosen & ~truth).sum() <= 0.4 * chosen.sum()  # one run's FDP
    # the same seed, the same selection
    again = gs.KnockoffSelector(fdr=0.2, n_draws=4, statistic="lasso_entry").fit(X, y)
    np.testing.assert_array_equal(again.result_.statistics, r.statistics)


def test_a_logistic_target():
    X, y, truth = _design(12, n=400, p=40, k=12, amplitude=0.6, binary=True)
    chosen = gs.KnockoffSelector(fdr=0.2).fit(X, np.where(y == 1, "case", "control")).get_support()
    assert (chosen & truth).sum() >= 6 and (chosen & ~truth).sum() <= 2


@pytest.mark.parametrize(("options", "message"), [
    ({"fdr": 0}, "'fdr' parameter"), ({"fdr": 1.5}, "'fdr' parameter"), ({"statistic": "lcd"}, "'statistic'"),
    ({"s_method": "asdp"}, "'s_method'"), ({"n_draws": 0}, "'n_draws'"), ({"draw_fdr": 2.0}, "'draw_fdr'"),
    ({"shrinkage": 1.0}, "'shrinkage'"), ({"cv": 1}, "'cv'"), ({"knockoffs": "metro"}, "'knockoffs'"),
    ({"feature_groups": "clusters"}, "'feature_groups'"), ({"group_threshold": 1.0}, "'group_threshold'"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        KnockoffOptions(**options).check()
