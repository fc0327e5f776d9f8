"""Covariates: the one check (``check_covariates``), and ``genosift.score(..., covariates=)`` in every
input form, against the in-memory array with the same covariates and statsmodels' OLS."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.scores import check_covariates, covariate_methods
from genosift.scoring.store import score_store

METHODS = [m for m in covariate_methods() if not gs.get_method(m).kinship]  # lmm: unit/scores/test_lmm.py
N, P = 48, 23
RNG = np.random.default_rng(11)
IDS = np.array([f"s{i:02d}" for i in range(N)], dtype=object)
SITE = np.array(list("abc"))[RNG.integers(0, 3, N)]
AGE = RNG.normal(50, 10, N).round(1)
X = RNG.poisson(1.0, size=(N, P)).astype(np.float64) * (RNG.random((N, P)) < 0.5)
X[:, 0] += (SITE == "b") * 2.0  # a feature that follows a covariate
Y = 0.05 * AGE + (SITE == "c") + 0.8 * X[:, 3] + RNG.normal(size=N)
LABELS = np.where(Y > np.median(Y), "case", "control")
COV = pd.DataFrame({"age": AGE, "site": SITE}, index=pd.Index(IDS, name="sample"))
Z = np.column_stack([AGE, SITE == "b", SITE == "c"]).astype(np.float64)


def _target(method):
    return Y if gs.get_method(method).task == "regression" else LABELS


def _reference(method, rows=None):
    rows = np.arange(N) if rows is None else rows
    return gs.score(X[rows], _target(method)[rows], method=method, covariates=Z[rows])


def _same(got, want, exact=True, names=("age", "site=b", "site=c")):
    check = np.testing.assert_array_equal if exact else (lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12))
    check(got.scores, want.scores)
    check(got.statistic, want.statistic)
    if want.pvalues is not None:
        check(got.pvalues, want.pvalues)
    assert got.covariates == (names or ("z0", "z1", "z2"))
    assert got.provenance()["covariates"] == list(got.covariates)


# ------------------------------------------------------------------ the check


def test_numbers_and_one_hot_columns():
    frame = pd.DataFrame({"age": [30, 41, 52, 38, 45, 60, 33, 47], "site": pd.Categorical(list("bcabcaab")),
                          "smoker": [True, False, True, True, False, False, True, False],
                          "batch": ["x2", "x1", "x1", "x2", "x1", "x2", "x2", "x1"]})
    got, names = check_covariates(frame, 8)
    assert names == ["age", "site=b", "site=c", "smoker=True", "batch=x2"]
    np.testing.assert_array_equal(got, [[30, 1, 0, 1, 1], [41, 0, 1, 0, 0], [52, 0, 0, 1, 0], [38, 1, 0, 1, 1],
                                        [45, 0, 1, 0, 0], [60, 0, 0, 0, 1], [33, 0, 0, 1, 1], [47, 1, 0, 0, 0]])
    assert got.dtype == np.float64 and got.flags.c_contiguous
    one, name = check_covariates(np.arange(5), 5)  # 1-D: one covariate
    assert one.shape == (5, 1) and name == ["z0"]
    assert check_covariates(pd.Series([1.0, 3, 2], name="dose"), 3)[1] == ["dose"]
    assert check_covariates(None, 5) == (None, []) and check_covariates(np.empty((5, 0)), 5) == (None, [])
    assert check_covariates(pd.DataFrame(index=range(5)), 5) == (None, [])


@pytest.mark.parametrize("bad, match", [
    (np.ones((4, 1)), r"have 4 rows, but 5 samples are scored"),
    (np.array([[1.0, 2], [np.nan, 1], [3, 4], [4, np.inf], [5, 0]]), r"column\(s\) 'z0', 'z1', at row\(s\) 1, 3"),
    (pd.DataFrame({"a": [1.0, 2, None, 4, 5], "g": ["u", None, "v", "u", "v"]}, index=list("pqrst")),
     r"column\(s\) 'a', 'g', at sample\(s\) 'q', 'r'"),
    (np.array([["1", "x"]] * 5, dtype=object), r"not numbers .*'x'.*DataFrame"),
    (np.column_stack([np.arange(5.0), np.full(5, 7.0)]), r"'z1' are constant: the model has an intercept"),
    (pd.DataFrame({"a": np.arange(5.0), "g": ["u"] * 5}), r"'g' are constant \(every sample has the level 'u'\)"),
    (np.column_stack([np.arange(5.0), [1.0, 0, 2, 0, 1], 3 * np.arange(5.0) - 2 * np.array([1.0, 0, 2, 0, 1]) + 4]),
     r"'z2' is a linear combination of the intercept and 'z0', 'z1'"),
    (pd.DataFrame({"b": [0, 1, 0, 1, 0], "site": list("xyxyx")}), r"'site=y' is a linear combination of the "
                                                                  r"intercept and 'b'"),
])
def test_bad_covariates_are_named_errors(bad, match):
    with pytest.raises(ValueError, match=match) as err:
        check_covariates(bad, 5)
    assert "covariates=" in str(err.value)  # the fix names the keyword


def test_nearly_but_not_exactly_collinear_covariates_pass():
    rng = np.random.default_rng(0)
    a = rng.normal(size=50)
    got, _ = check_covariates(np.column_stack([a, a + 1e-3 * rng.normal(size=50)]), 50)
    assert got.shape == (50, 2)


def test_regression_with_categorical_covariates_equals_statsmodels():
    smf = pytest.importorskip("statsmodels.formula.api")
    res = gs.score(X, Y, method="regression", covariates=COV)
    frame = COV.assign(y=Y)
    for j in (0, 3, 7):
        fit = smf.ols("y ~ age + C(site) + x", data=frame.assign(x=X[:, j])).fit()
        np.testing.assert_allclose(res.statistic[j], fit.tvalues["x"], rtol=1e-9)
        np.testing.assert_allclose(res.pvalues[j], fit.pvalues["x"], rtol=1e-9)


# ------------------------------------------------------------------ every input form


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("form", ["csr", "csc", "frame", "series_ids"])
def test_in_memory_forms_equal_the_array(method, form):
    want = _reference(method)
    if form == "frame":  # covariates indexed by sample id, in another order: matched to X's index
        got = gs.score(pd.DataFrame(X, index=IDS), _target(method), method=method, covariates=COV.iloc[::-1])
    elif form == "series_ids":
        got = gs.score(X, _target(method), method=method, covariates=COV)  # no ids on X: in row order
    else:
        got = gs.score(getattr(sp, f"{form}_matrix")(X), _target(method), method=method,
                       covariates=Z if form == "csr" else COV)
    _same(got, want, names=None if form == "csr" else ("age", "site=b", "site=c"))


def _store(tmp_path):
    from genosift.io import Dataset, write_store

    obs = COV.assign(target=Y, label=LABELS)
    return write_store(Dataset(sp.csr_matrix(X), IDS, np.array([f"k{j}" for j in range(P)]), obs),
                       tmp_path / "d.gs.h5ad")


@pytest.mark.parametrize("method", METHODS)
def test_stores_rows_and_ids(tmp_path, method):
    from genosift.io import open_store

    path = _store(tmp_path)
    y = "target" if gs.get_method(method).task == "regression" else "label"
    _same(gs.score(path, y, method=method, covariates=["age", "site"], chunk_bytes=3000), _reference(method))
    _same(score_store(open_store(path), y, method=method, covariates=Z), _reference(method), names=None)
    rows = np.array([0, 2, 3, 5, 8, 9, 11, 12, 15, 17, 20, 21, 22, 25, 28, 30, 31, 33, 36, 40, 41, 44, 46, 47])
    want = _reference(method, rows)
    for covariates in (Z, Z[rows], COV.sample(frac=1, random_state=1), COV.iloc[rows].reset_index(drop=True)):
        _same(score_store(path, y, method=method, samples=rows, covariates=covariates), want,
              names=None if isinstance(covariates, np.ndarray) else ("age", "site=b", "site=c"))
    with pytest.raises(ValueError, match=r"2 of the 48 samples scored have no row: 's00', 's01'"):
        score_store(path, y, method=method, covariates=COV.iloc[2:])


@pytest.mark.parametrize("method", METHODS)
def test_anndata_in_memory_and_backed(tmp_path, method):
    anndata = pytest.importorskip("anndata")
    adata = anndata.AnnData(sp.csr_matrix(X), obs=COV.assign(target=Y, label=LABELS),
                            var=pd.DataFrame(index=[f"k{j}" for j in range(P)]))
    y = "target" if gs.get_method(method).task == "regression" else "label"
    _same(gs.score(adata, y, method=method, covariates=["age", "site"]), _reference(method))
    _same(gs.score(adata, y, method=method, covariates=COV.iloc[::-1]), _reference(method))
    adata.write_h5ad(tmp_path / "a.h5ad")
    backed = anndata.read_h5ad(tmp_path / "a.h5ad", backed="r")
    _same(gs.score(backed, y, method=method, covariates=["age", "site"], chunk_bytes=3000), _reference(method))
    rows = np.r_[np.arange(47, 20, -1), np.arange(0, 15)]  # a view in another order than the file's
    view = gs.score(backed[rows], y, method=method, covariates=["age", "site"])
    _same(view, _reference(method, rows), exact=False)
    _same(view, _reference(method, np.sort(rows)))  # read in file order: the same sums, bit for bit


@pytest.mark.parametrize("method", METHODS)
def test_dask_arrays_and_stores_on_a_scheduler(tmp_path, method):
    da = pytest.importorskip("dask.array")
    _same(gs.score(da.from_array(X, chunks=(13, 7)), _target(method), method=method, covariates=COV,
                   scheduler="sync"), _reference(method))
    _same(gs.score(da.from_array(sp.csr_matrix(X), chunks=(13, P)), _target(method), method=method,
                   covariates=da.from_array(Z, chunks=(10, 3)), scheduler="sync"), _reference(method), names=None)
    path = _store(tmp_path)
    rows = np.arange(0, N, 2)
    _same(score_store(path, _target(method), method=method, covariates=COV, scheduler="sync"),
          _reference(method))
    _same(score_store(path, _target(method)[rows], method=method, samples=rows, covariates=COV,
                            scheduler="processes"), _reference(method, rows))


def test_methods_without_covariates_and_streams_refuse_them_before_reading(tmp_path):
    with pytest.raises(ValueError, match=r"Method 'fisher' does not adjust for covariates.*'regression'"
                                         r".*\(method=\), or leave out covariates="):
        gs.score(tmp_path / "no such file.gs.h5ad", "y", method="fisher", covariates=Z)
    with pytest.raises(ValueError, match="does not adjust for covariates"):
        score_store(tmp_path / "nope.gs.h5ad", "y", method="anova", covariates=Z)
    chunks = ((X[i:i + 10], Y[i:i + 10]) for i in range(0, N, 10))
    with pytest.raises(ValueError, match="cannot read a stream of row chunks"):
        gs.score(chunks, method=METHODS[0], covariates=Z)
    with pytest.raises(ValueError, match=r"covariates have 47 rows, but 48 samples are scored"):
        gs.score(X, Y, method="regression", covariates=Z[1:])


@pytest.mark.parametrize("method", METHODS)
def test_a_table_file_with_covariate_columns(tmp_path, method):
    frame = pd.DataFrame(X, columns=[f"k{j}" for j in range(P)]).assign(age=AGE, site=SITE, target=_target(method))
    frame.insert(0, "sample", IDS)
    frame.to_csv(tmp_path / "d.csv", index=False)
    _same(gs.score(tmp_path / "d.csv", "target", method=method, covariates=["age", "site"]), _reference(method))
    frame.drop(columns=["age", "site", "target"]).to_csv(tmp_path / "x.csv", index=False)  # ids matched to COV's
    _same(gs.score(tmp_path / "x.csv", _target(method), method=method, covariates=COV.iloc[::-1]), _reference(method))
