"""Scores: input types, chunk invariance, edge cases and bad input."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats as ss

import genosift as gs
from genosift.stats import ClassMoments, CoMoments

ALL_METHODS = sorted(m.name for m in gs.REGISTRY.values() if m.streaming == "rows")


def _data(seed=0, n=120, p=40, k=2, offset=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.standard_normal((n, p)) + offset + 0.5 * y[:, None] * (np.arange(p) % 3 == 0)
    return X, y


def _close(a, b, rtol=1e-12):
    for name in ("scores", "statistic", "pvalues", "qvalues"):
        x, z = getattr(a, name), getattr(b, name)
        if x is None:
            assert z is None
            continue
        np.testing.assert_allclose(x, z, rtol=rtol, atol=0, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("method", ALL_METHODS)
def test_dense_sparse_frame_and_layouts_agree(method):
    rng = np.random.default_rng(1)
    X = rng.poisson(0.7, size=(90, 30)).astype(np.float64)
    X[:, 5] = 0  # an all-zero column
    X[:, 6] = 3  # a constant column
    y = rng.integers(0, 2, 90)
    ref = gs.score(X, y, method=method)
    for variant in (sp.csr_matrix(X), sp.csc_matrix(X), sp.coo_matrix(X), np.asfortranarray(X),
                    X.astype(np.int32), X.astype(np.uint8), X.astype(np.float32), X[:, ::1].copy(order="F")):
        _close(gs.score(variant, y, method=method), ref)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(30)])
    res = gs.score(frame, y, method=method)
    _close(res, ref)
    assert list(res.feature_names) == list(frame.columns)
    assert np.isnan(ref.scores[[5, 6]]).all() if method != "variance" else (ref.scores[[5, 6]] == 0).all()


@pytest.mark.parametrize("method", ALL_METHODS)
@pytest.mark.parametrize("kind", ["dense", "sparse", "offset"])
def test_chunked_stream_equals_in_memory(method, kind):
    X, y = _data(seed=2, offset=1e6 if kind == "offset" else 0.0)
    if method == "chi2_counts":  # counts must be non-negative
        X = np.abs(X)
    if kind == "sparse":
        X = sp.csr_matrix(np.where(X > 0.8, X, 0.0))
    ref = gs.score(X, y, method=method)
    rng = np.random.default_rng(3)
    for _ in range(3):
        cuts = np.sort(rng.choice(np.arange(1, X.shape[0]), size=6, replace=False))
        bounds = [0, *cuts, X.shape[0]]
        chunks = ((X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:]))
        res = gs.score(chunks, method=method)
        _close(res, ref, rtol=1e-11)
        if method in ("fisher", "anova"):
            np.testing.assert_array_equal(res.ranking, ref.ranking)


def test_chunks_may_miss_classes_and_be_empty():
    X, y = _data(seed=4, k=3)
    order = np.argsort(y, kind="stable")  # each chunk sees one class only
    Xs, ys = X[order], y[order]
    chunks = [(Xs[:0], ys[:0])] + [(Xs[i:i + 7], ys[i:i + 7]) for i in range(0, len(ys), 7)]
    _close(gs.score(iter(chunks), method="anova"), gs.score(X, y, method="anova"), rtol=1e-11)


def test_merge_identity_and_associativity():
    X, y = _data(seed=5, k=3)
    a, b, c = (ClassMoments.from_chunk(X[s], y[s]) for s in (slice(0, 40), slice(40, 70), slice(70, None)))
    e = ClassMoments.empty()
    left, right = a.merge(b).merge(c), a.merge(b.merge(c))
    whole = ClassMoments.from_chunk(X, y)
    for m in (left, right, e.merge(left), left.merge(e)):
        np.testing.assert_allclose(m.means(), whole.means(), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(m.m2, whole.m2, rtol=1e-12)
        np.testing.assert_array_equal(m.count, whole.count)
    yn = X[:, 0] * 2 + 1
    a, b = CoMoments.from_chunk(X[:50], yn[:50]), CoMoments.from_chunk(X[50:], yn[50:])
    w = CoMoments.from_chunk(X, yn)
    m = CoMoments.empty().merge(a).merge(b)
    np.testing.assert_allclose(m.c_xy, w.c_xy, rtol=1e-11)
    np.testing.assert_allclose(m.m2_x, w.m2_x, rtol=1e-12)


def test_integer_counts_never_overflow():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 200)
    big = rng.integers(0, 60000, size=(200, 8)).astype(np.uint16)  # squares overflow 32-bit ints
    ref = gs.score(big.astype(np.float64), y, method="anova")
    for dtype in (np.uint16, np.int32, np.int64):
        _close(gs.score(big.astype(dtype), y, method="anova"), ref)
    f = ss.f_oneway(*(big[y == c].astype(np.float64) for c in (0, 1)))
    np.testing.assert_allclose(ref.statistic, f.statistic, rtol=1e-10)


def test_perfect_separator_is_inf_and_first_constant_is_nan_and_last():
    y = np.array([0, 0, 0, 1, 1, 1])
    X = np.column_stack([
        [1.0, 2, 3, 1, 2, 4],      # ordinary
        [7.0, 7, 7, 7, 7, 7],      # constant
        [0.0, 0, 0, 5, 5, 5],      # perfect separator
        [0.1, 0.1, 0.1, 0.1, 0.1, 0.1],  # constant, not exactly representable
        [1.0, 3, 2, 2, 1, 3],      # equal class means: score 0, not NaN
    ])
    for method in ("fisher", "anova", "welch", "snr", "fscore"):
        res = gs.score(X, y, method=method)
        assert np.isinf(res.scores[2]) and res.ranking[0] == 2, method
        assert np.isnan(res.scores[[1, 3]]).all(), method
        assert set(res.ranking[-2:]) == {1, 3}, method
        assert res.scores[4] == 0, method
        if res.pvalues is not None:
            assert res.pvalues[2] == 0 and np.isnan(res.pvalues[[1, 3]]).all()
    pear = gs.score(X, y, method="pearson")
    assert np.isnan(pear.scores[[1, 3]]).all() and pear.scores[2] == 1.0


def test_ties_rank_lower_index_first():
    X = np.tile(np.array([[0.0], [1.0], [0.5], [2.0]]), (1, 4))
    res = gs.score(X, [0, 1, 0, 1], method="fisher")
    np.testing.assert_array_equal(res.ranking, [0, 1, 2, 3])
    np.testing.assert_array_equal(res.to_frame()["rank"], [1, 2, 3, 4])


def test_binary_sign_follows_sorted_labels():
    X = np.array([[1.0], [2.0], [10.0], [11.0]])
    for labels in (["a", "a", "b", "b"], [-1, -1, 1, 1], [0, 0, 1, 1], [False, False, True, True]):
        assert gs.score(X, labels, method="welch").statistic[0] > 0
        assert gs.score(X, labels, method="pearson").statistic[0] > 0
    t = ss.ttest_ind([10.0, 11.0], [1.0, 2.0], equal_var=False)
    np.testing.assert_allclose(gs.score(X, [0, 0, 1, 1], method="welch").pvalues[0], t.pvalue, rtol=1e-12)


def test_qvalues_are_benjamini_hochberg():
    X, y = _data(seed=7, p=60)
    X[:, 3] = 1.0  # NaN p-value: excluded from the count
    res = gs.score(X, y, method="welch")
    p = res.pvalues[~np.isnan(res.pvalues)]
    m, order = len(p), np.argsort(p)
    q = np.minimum.accumulate((p[order] * m / np.arange(1, m + 1))[::-1])[::-1]
    expected = np.empty(m)
    expected[order] = np.minimum(q, 1)
    np.testing.assert_allclose(res.qvalues[~np.isnan(res.pvalues)], expected, rtol=1e-12)
    assert np.isnan(res.qvalues[3])


def test_to_frame_and_provenance():
    X, y = _data(seed=8, p=5)
    res = gs.score(pd.DataFrame(X, columns=list("abcde")), y, method="anova")
    frame = res.to_frame()
    assert list(frame.columns) == ["feature", "score", "statistic", "pvalue", "qvalue", "rank"]
    assert list(frame["rank"]) == [1, 2, 3, 4, 5]
    assert frame.attrs["method"] == "anova" and frame.attrs["n_samples"] == 120
    assert list(res.top(2)) == list(frame["feature"][:2])
    assert gs.score(X, y, method="fisher").to_frame()["pvalue"].isna().all()


def test_methods_table_lists_registry():
    table = gs.methods()
    assert set(table.index) == set(gs.REGISTRY)
    assert table.loc["welch", "classes"] == "binary" and table.loc["anova", "pvalues"]
    assert table.loc["variance", "task"] == "unsupervised"


def test_pearson_numeric_target_and_variance():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((50, 6))
    t = X[:, 0] + rng.standard_normal(50)
    res = gs.score(X, t, method="pearson")
    ref = np.array([tuple(ss.pearsonr(X[:, j], t)) for j in range(X.shape[1])])
    np.testing.assert_allclose(res.statistic, ref[:, 0], rtol=1e-12)
    np.testing.assert_allclose(res.pvalues, ref[:, 1], rtol=1e-10)
    np.testing.assert_allclose(gs.score(X, method="variance").scores, X.var(axis=0), rtol=1e-13)


# ---------------------------------------------------------------- bad input gets a clear error
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nonfinite_x_names_the_columns(value):
    X, y = _data(seed=10, p=4)
    X[5, 2] = value
    frame = pd.DataFrame(X, columns=["a", "b", "gene_c", "d"])
    for data in (X, frame, sp.csr_matrix(X)):
        with pytest.raises(ValueError, match=r"NaN or infinity.*'(gene_c|x2)'"):
            gs.score(data, y, method="fisher")


def test_values_too_large_to_square():
    X = np.array([[1e200, 0.0], [1e200, 1.0], [-1e200, 2.0], [-1e200, 5.0]])
    with pytest.raises(ValueError, match="too large"):
        gs.score(X, [0, 1, 0, 1], method="anova")


@pytest.mark.parametrize(
    "X, y, method, match",
    [
        (np.empty((0, 3)), [], "fisher", "empty"),
        (np.empty((3, 0)), [0, 1, 0], "fisher", "empty"),
        (np.ones((4, 2)), [0, 1, 0], "fisher", "different numbers of samples"),
        (np.arange(8.0).reshape(4, 2), [1, 1, 1, 1], "anova", "only one class"),
        (np.arange(12.0).reshape(6, 2), [0, 1, 2, 0, 1, 2], "welch", "compares two classes"),
        (np.arange(12.0).reshape(6, 2), [0, 1, 1, 1, 1, 1], "welch", "at least 2 samples in every class"),
        (np.arange(8.0).reshape(4, 2), [0.5, 1.7, 2.2, 3.1], "fisher", "continuous"),
        (np.arange(8.0).reshape(4, 2), [0, 1, np.nan, 1], "fisher", "NaN"),
        (np.arange(8.0).reshape(4, 2), [0, 1, None, 1], "fisher", "missing labels"),
        (np.arange(8.0).reshape(4, 2), [2.0, 2.0, 2.0, 2.0], "pearson", "constant"),
        (np.arange(8.0).reshape(4, 2), ["a", "b", "c", "a"], "pearson", "numeric target or two class"),
        (np.arange(8.0).reshape(4, 2), [0, 1, 0, 1], "nope", "'method' parameter must be one of"),
        (np.arange(8.0), [0, 1, 0, 1, 0, 1, 0, 1], "fisher", "must be 2-D"),
        (np.arange(6.0).reshape(3, 2), [0, 1, 2], "anova", "more samples than classes"),
        (np.ones((4, 2)), np.zeros((4, 2)), "fisher", "1-D"),
    ],
)
def test_bad_input_raises_clear_value_error(X, y, method, match):
    with pytest.raises(ValueError, match=match):
        gs.score(X, y, method=method)


def test_non_numeric_x_is_a_type_error():
    frame = pd.DataFrame({"a": [1.0, 2, 3, 4], "name": list("wxyz")})
    with pytest.raises(TypeError, match="non-numeric columns 'name'"):
        gs.score(frame, [0, 1, 0, 1], method="fisher")
    with pytest.raises((TypeError, ValueError), match="could not convert|float"):
        gs.score(np.array([["1", "x"], ["2", "y"]], dtype=object), [0, 1], method="fisher")
    with pytest.raises(TypeError, match="not a real number type"):
        gs.score(np.ones((2, 2), dtype=complex), [0, 1], method="fisher")


def test_unknown_option_and_stream_misuse():
    X, y = _data(seed=11, p=3)
    with pytest.raises(TypeError, match="unknown option"):
        gs.score(X, y, method="fisher", method_options={"bins": 5})
    with pytest.raises(ValueError, match="carries its own labels"):
        gs.score(iter([(X, y)]), y, method="fisher")
    with pytest.raises(ValueError, match="empty"):
        gs.score(iter([]), method="fisher")
    with pytest.raises(ValueError, match="same features"):
        gs.score(iter([(X, y), (X[:, :2], y)]), method="fisher")
