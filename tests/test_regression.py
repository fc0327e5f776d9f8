"""Per-feature least squares with covariates against a full-design reference fit."""
import numpy as np
import pytest
from scipy import stats

import genosift as gs
from genosift.scores import get_method, make_target
from genosift.scores.regression import regression


def _reference(X, y, C):
    """t and two-sided p of the last coefficient of y ~ 1 + C + x, by a full least-squares fit."""
    n = len(y)
    t, p = [], []
    for x in X.T:
        D = np.column_stack([np.ones(n), *([] if C is None else [C]), x])
        coef, *_ = np.linalg.lstsq(D, y, rcond=None)
        resid = y - D @ coef
        df = n - D.shape[1]
        cov = (resid @ resid / df) * np.linalg.inv(D.T @ D)
        t.append(coef[-1] / np.sqrt(cov[-1, -1]))
        p.append(2 * stats.t.sf(abs(t[-1]), df))
    return np.array(t), np.array(p)


@pytest.mark.parametrize("c", [0, 1, 3])
def test_regression_equals_a_full_least_squares_fit(c):
    rng = np.random.default_rng(c)
    n, p = 60, 7
    C = rng.normal(size=(n, c)) if c else None
    X = rng.normal(size=(n, p)) + (C[:, :1] if c else 0)  # features correlated with a covariate
    y = X[:, 0] * 0.4 + (C @ np.arange(1, c + 1) if c else 0) + rng.normal(size=n)
    out = regression(X, make_target(get_method("regression"), y, n, C))
    t, pv = _reference(X, y, C)
    np.testing.assert_allclose(out.statistic, t, rtol=1e-9)
    np.testing.assert_allclose(out.pvalues, pv, rtol=1e-9)


def test_a_feature_in_the_span_of_the_covariates_has_no_coefficient():
    rng = np.random.default_rng(5)
    n = 40
    C = rng.normal(size=(n, 2))
    X = np.column_stack([C[:, 0] * 3 - 1, rng.normal(size=n), np.full(n, 2.5)])
    y = rng.normal(size=n)
    out = regression(X, make_target(get_method("regression"), y, n, C))
    assert np.isnan(out.statistic[[0, 2]]).all() and np.isnan(out.pvalues[[0, 2]]).all()
    assert np.isfinite(out.statistic[1])


def test_methods_without_covariates_refuse_them():
    with pytest.raises(ValueError, match=r"Method 'fisher' does not adjust for covariates; the methods that do: "
                                         r"\[.*'regression'.*\]"):
        make_target(get_method("fisher"), np.arange(10) % 2, 10, np.ones((10, 1)))


def test_regression_without_covariates_is_pearsons_test():
    X, y, _ = gs.load_golub()
    yy = (np.asarray(y) == "AML").astype(float)
    reg = gs.score(X[:, :200], yy, method="regression")
    r = gs.score(X[:, :200], yy, method="pearson")
    np.testing.assert_allclose(reg.pvalues, r.pvalues, rtol=1e-9)
    np.testing.assert_array_equal(np.sign(reg.statistic), np.sign(r.statistic))
