"""Contract tests over every registered method: input types, blocks, errors, selectors."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.core import engine
from genosift.scores import tie_key

#: The mixed model needs a kinship: its contracts are tested in tests/unit/scores/test_lmm.py, with one.
METHODS = sorted(m for m in gs.REGISTRY if not gs.get_method(m).kinship)
KINSHIP_METHODS = sorted(m for m in gs.REGISTRY if gs.get_method(m).kinship)
#: Methods whose score may be negative: ReliefF weights lie in [-1, 1] (a feature that differs more
#: between neighbours of one class than between classes counts against). Every other score is >= 0
#: (a signed statistic scores by its absolute value).
NEGATIVE_SCORES = {"relieff"}


def _target(spec, n, rng, k=2):
    if spec.task == "regression":
        return rng.standard_normal(n)
    return rng.integers(0, k, n)


def _counts(rng, n=60, p=23):
    X = rng.poisson(1.2, size=(n, p)).astype(np.float64)
    X[:, 4] = 0.0
    X[:, 7] = 2.0
    return X


def _same(a, b, rtol=1e-10):
    np.testing.assert_allclose(a.scores, b.scores, rtol=rtol, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(a.statistic, b.statistic, rtol=rtol, atol=1e-12, equal_nan=True)
    if a.pvalues is None:
        assert b.pvalues is None
    else:
        np.testing.assert_allclose(a.pvalues, b.pvalues, rtol=rtol, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("method", METHODS)
def test_result_shape_and_conventions(method):
    spec = gs.get_method(method)
    rng = np.random.default_rng(0)
    X = _counts(rng)
    y = _target(spec, 60, rng)
    res = gs.score(X, y, method=method)
    assert res.method == method and res.n_features == 23 and res.n_samples == 60
    for arr in (res.scores, res.statistic):
        assert arr.dtype == np.float64 and arr.shape == (23,)
    assert (res.pvalues is not None) == spec.has_pvalues
    if spec.has_pvalues:
        ok = ~np.isnan(res.pvalues)
        assert ((res.pvalues[ok] >= 0) & (res.pvalues[ok] <= 1)).all()
        assert res.qvalues.shape == (23,)
    finite = res.scores[~np.isnan(res.scores)]
    assert (finite >= (-1.0 if method in NEGATIVE_SCORES else 0.0)).all(), "scores are non-negative"
    if spec.signed:
        np.testing.assert_array_equal(res.scores, np.abs(res.statistic))
    if spec.task == "unsupervised":
        assert (res.scores[[4, 7]] == 0).all()
    else:
        assert np.isnan(res.scores[[4, 7]]).all(), "a constant feature scores NaN"
    assert set(res.ranking[-2:]) == {4, 7}, "constant features rank last"
    order = res.ranking[~np.isnan(res.scores[res.ranking])]
    # best first; scores equal to TIE_BITS significant bits are ties, in index order
    key = tie_key(res.scores)[order]
    assert (np.diff(key) <= 0).all(), "ranking is best first"
    tied = np.diff(key) == 0
    assert (np.diff(order)[tied] > 0).all(), "ties by lower index"


@pytest.mark.parametrize("method", METHODS)
def test_dense_sparse_frame_int_and_fortran_agree(method):
    spec = gs.get_method(method)
    rng = np.random.default_rng(1)
    X = _counts(rng)
    y = _target(spec, 60, rng)
    ref = gs.score(X, y, method=method)
    for variant in (sp.csr_matrix(X), sp.csc_matrix(X), np.asfortranarray(X), X.astype(np.int16),
                    pd.DataFrame(X, columns=[f"f{j}" for j in range(23)])):
        _same(gs.score(variant, y, method=method), ref)


@pytest.mark.parametrize("method", [m for m in METHODS if gs.get_method(m).streaming != "rows"])
def test_block_boundaries_do_not_matter(method, monkeypatch):
    spec = gs.get_method(method)
    rng = np.random.default_rng(2)
    X = _counts(rng, p=37)
    y = _target(spec, 60, rng)
    ref = gs.score(X, y, method=method)
    for width in (1, 5, 36):
        monkeypatch.setattr(engine, "BLOCK_BYTES", width * 8 * 60)
        _same(gs.score(X, y, method=method), ref, rtol=1e-13)
        _same(gs.score(sp.csr_matrix(X), y, method=method), ref)


@pytest.mark.parametrize("method", METHODS)
def test_nan_is_an_error_naming_the_feature(method):
    spec = gs.get_method(method)
    rng = np.random.default_rng(3)
    X = _counts(rng)
    X[3, 11] = np.nan
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(23)])
    with pytest.raises(ValueError, match="NaN or infinity.*'gene11'"):
        gs.score(frame, _target(spec, 60, rng), method=method)


@pytest.mark.parametrize("method", [m for m in METHODS if gs.get_method(m).task == "classification"])
def test_class_methods_reject_one_class_and_continuous_targets(method):
    spec = gs.get_method(method)
    X = _counts(np.random.default_rng(4))
    with pytest.raises(ValueError, match="one class"):
        gs.score(X, np.zeros(60), method=method)
    with pytest.raises(ValueError, match="continuous"):
        gs.score(X, np.linspace(0.1, 7.3, 60), method=method)
    if spec.binary_only:
        with pytest.raises(ValueError, match="compares two classes"):
            gs.score(X, np.arange(60) % 3, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_selectors_accept_every_method(method):
    spec = gs.get_method(method)
    rng = np.random.default_rng(5)
    X = _counts(rng)
    y = _target(spec, 60, rng)
    sel = gs.SelectKBest(score_func=method, k=3).fit(X, y)
    assert sel.transform(X).shape == (60, 3)
    np.testing.assert_allclose(sel.scores_, gs.score(X, y, method=method).scores, equal_nan=True)
    if spec.streaming == "rows":
        part = gs.SelectKBest(score_func=method, k=3).partial_fit(X[:30], y[:30]).partial_fit(X[30:], y[30:])
        np.testing.assert_array_equal(part.get_support(), sel.get_support())
    else:
        with pytest.raises(TypeError, match="cannot stream"):
            gs.SelectKBest(score_func=method).partial_fit(X, y)
        with pytest.raises(ValueError, match="whole"):
            gs.score(iter([(X, y)]), method=method)


@pytest.mark.parametrize("method", KINSHIP_METHODS)
def test_selectors_refuse_a_method_that_needs_a_kinship(method):
    X = _counts(np.random.default_rng(5))
    for selector in (gs.SelectKBest(score_func=method, k=3), gs.SelectFdr(score_func=method),
                     gs.RedundancyFilter(score_func=method), gs.SelectKCV(score_func=method)):
        with pytest.raises(ValueError, match="selectors do not take"):
            selector.fit(X, np.arange(60.0))


@pytest.mark.parametrize("method", [m for m in METHODS if gs.get_method(m).task == "regression"])
def test_regression_methods_reject_several_non_numeric_labels(method):
    X = _counts(np.random.default_rng(6))
    with pytest.raises(ValueError, match="numeric target or two class labels"):
        gs.score(X, np.array(["a", "b", "c"] * 20), method=method)
    with pytest.raises(ValueError, match="constant"):
        gs.score(X, np.full(60, 2.5), method=method)
