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


def test_regression_reports_beta_and_se_in_the_table_and_keeps_them_through_the_af_filter():
    import statsmodels.api as sm

    X, y, _ = gs.load_golub()
    X = np.asarray(X[:, :30])
    rng = np.random.default_rng(3)
    C = rng.normal(size=(X.shape[0], 2))
    yy = (np.asarray(y) == "AML").astype(float)
    out = regression(X, make_target(get_method("regression"), yy, X.shape[0], C))
    for j in (0, 7, 29):
        fit = sm.OLS(yy, np.column_stack([np.ones(len(yy)), C, X[:, j]])).fit()
        np.testing.assert_allclose([out.columns["beta"][j], out.columns["se"][j]], [fit.params[-1], fit.bse[-1]],
                                   rtol=1e-9)
    res = gs.score(X, yy, method="regression")
    frame = res.to_frame(sort=False)
    assert list(frame.columns) == ["feature", "score", "statistic", "pvalue", "qvalue", "beta", "se", "rank"]
    np.testing.assert_allclose(frame["beta"] / frame["se"], res.statistic, rtol=1e-9)
    B = (X > np.median(X, axis=0)).astype(float)
    B[:, 0] = 0.0
    B[:3, 0] = 1.0  # carried by 3 of 72 samples: below the filter
    cut = gs.score(B, yy, method="regression", min_af=0.1)
    full = gs.score(B, yy, method="regression")
    assert np.isnan(cut.columns["beta"][0]) and np.isnan(cut.columns["se"][0])
    np.testing.assert_array_equal(cut.columns["beta"][1:], full.columns["beta"][1:])
    assert list(cut.to_frame().columns)[-3:] == ["se", "af", "rank"]


def test_the_columns_are_joined_across_blocks_and_stores(tmp_path):
    import pandas as pd

    from genosift.io import Dataset, write_store

    X, y, _ = gs.load_golub()
    X = np.asarray(X[:, :300])
    yy = (np.asarray(y) == "AML").astype(float)
    ref = gs.score(X, yy, method="regression")
    ids = np.array([f"s{i}" for i in range(X.shape[0])], dtype=object)
    names = np.array([f"x{j}" for j in range(X.shape[1])], dtype=object)
    path = write_store(Dataset(X, ids, names, pd.DataFrame(index=ids)), tmp_path / "g.gs.h5ad")
    got = gs.score(str(path), yy, method="regression", chunk_bytes=20_000)
    for name in ("beta", "se"):
        np.testing.assert_allclose(got.columns[name], ref.columns[name], rtol=1e-12)


@pytest.mark.parametrize("suffix", [".tsv", ".parquet"])
def test_the_cli_ranking_table_holds_the_methods_columns(tmp_path, suffix):
    import pandas as pd

    from genosift.cli import main

    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    X, y, names = gs.load_golub()
    data = pd.DataFrame(X[:, :40], columns=names[:40])
    data.insert(0, "type", (np.asarray(y) == "AML").astype(float))
    data.insert(0, "sample", [f"p{i}" for i in range(len(y))])
    data.to_csv(tmp_path / "expr.csv", index=False)
    out = tmp_path / f"rank{suffix}"
    assert main(["score", str(tmp_path / "expr.csv"), "--target", "type", "--method", "regression",
                 "-o", str(out)]) == 0
    table = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out, sep="\t")
    ref = gs.score(X[:, :40], (np.asarray(y) == "AML").astype(float), method="regression")
    assert list(table.columns[:8]) == ["feature", "score", "statistic", "pvalue", "qvalue", "beta", "se", "rank"]
    np.testing.assert_allclose(table["beta"], ref.columns["beta"][ref.ranking], rtol=1e-12)
    np.testing.assert_allclose(table["se"], ref.columns["se"][ref.ranking], rtol=1e-12)
