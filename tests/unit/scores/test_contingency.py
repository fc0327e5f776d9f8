"""Contingency-table scores (chi2, mi, chi2_counts) and the shared discretiser.

References are independent: tables are built here from ``np.unique`` codes (discrete data) or from
a direct per-feature implementation of the documented binning rule (``_rule_codes``), then given
to ``scipy.stats.chi2_contingency`` / ``sklearn.metrics.mutual_info_score``; ``chi2_counts`` is
compared with ``sklearn.feature_selection.chi2``. Tolerance ``rtol=1e-10`` throughout; an
``atol`` only where a value can be (nearly) zero, where only absolute rounding is bounded.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import scipy.stats as ss
from sklearn.feature_selection import chi2 as sk_chi2
from sklearn.feature_selection import mutual_info_classif
from sklearn.metrics import mutual_info_score

import genosift as gs
from genosift.scores import register
from genosift.scores._discretize import contingency_tables, discretize
from genosift.scores.contingency import ClassSums

from conftest import load_shared

RTOL = 1e-10
ATOL_MI = 1e-13  # MI of a (nearly) independent feature is ~0: sklearn zeroes terms below eps
DISCRETE = ["colon", "leukemia", "lymphoma", "nci9", "lung_small"]


# --------------------------------------------------------------------------------------------
# independent references
# --------------------------------------------------------------------------------------------

def _rule_codes(x, bins=5, max_categories=5):
    """The documented rule, written per feature with numpy set and sort functions."""
    x = np.asarray(x, dtype=np.float64)
    values = np.unique(x)
    if np.all(x == np.floor(x)) and values.size <= max_categories:
        return np.searchsorted(values, x)
    s = np.sort(x)
    n = x.size
    edges = np.array([s[int(np.ceil(k * n / bins)) - 1] for k in range(1, bins)])
    return np.searchsorted(edges, x, side="left")  # number of edges strictly below x


def _rank_codes(x, bins):
    """The same binning written with ranks: floor(bins * r / n), r = min rank - 1."""
    r = ss.rankdata(x, method="min") - 1
    return (r * bins) // len(x)


def _table(xcodes, y):
    """(category x class) counts of the categories that occur (no empty rows)."""
    _, xi = np.unique(xcodes, return_inverse=True)
    _, yi = np.unique(y, return_inverse=True)
    t = np.zeros((xi.max() + 1, yi.max() + 1))
    np.add.at(t, (xi, yi), 1)
    return t


def _columns(X, step):
    cols = np.arange(0, X.shape[1], step)
    A = X[:, cols]
    return cols, (A.toarray() if sp.issparse(A) else np.asarray(A))


def _check_against_scipy(X, y, codes_of, step=1, **options):
    """chi2 and mi of genosift vs scipy / sklearn on tables built from ``codes_of(column)``."""
    chi = gs.score(X, y, method="chi2", method_options=options)
    info = gs.score(X, y, method="mi", method_options=options)
    cols, A = _columns(X, step)
    n = A.shape[0]
    tested = 0
    for j, col in zip(cols, A.T):
        codes = codes_of(col)
        t = _table(codes, y)
        if t.shape[0] < 2:
            assert np.isnan([chi.statistic[j], chi.pvalues[j], info.statistic[j], info.pvalues[j]]).all()
            continue
        tested += 1
        ref = ss.chi2_contingency(t, correction=False)
        np.testing.assert_allclose(chi.statistic[j], ref.statistic, rtol=RTOL)
        np.testing.assert_allclose(chi.pvalues[j], ref.pvalue, rtol=RTOL, atol=1e-300)
        g = ss.chi2_contingency(t, correction=False, lambda_="log-likelihood")
        np.testing.assert_allclose(info.statistic[j], mutual_info_score(codes, y), rtol=RTOL, atol=ATOL_MI)
        np.testing.assert_allclose(2 * n * info.statistic[j], g.statistic, rtol=RTOL, atol=1e-10)
        np.testing.assert_allclose(info.pvalues[j], g.pvalue, rtol=1e-9, atol=1e-12)
    assert tested > 0
    return chi, info


# --------------------------------------------------------------------------------------------
# chi2 and mi on real data
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", DISCRETE)
def test_chi2_and_mi_match_scipy_and_sklearn_on_discrete_sets(name):
    X, y, _ = load_shared(name)
    step = max(1, X.shape[1] // 600)
    _check_against_scipy(X, y, lambda col: np.unique(col, return_inverse=True)[1], step=step)


@pytest.mark.parametrize("name", ["colon", "lymphoma"])
def test_mi_equals_mutual_info_classif_with_discrete_features(name):
    X, y, _ = load_shared(name)
    A = np.asarray(X[:, :400])
    ref = mutual_info_classif(A, y, discrete_features=True)
    res = gs.score(A, y, method="mi")
    np.testing.assert_allclose(res.statistic, ref, rtol=RTOL, atol=ATOL_MI)


@pytest.mark.parametrize("name, options", [("golub", {}), ("GLIOMA", {}), ("ALLAML", {"bins": 10}),
                                           ("TOX_171", {"bins": 3, "max_categories": 0})])
def test_chi2_and_mi_on_continuous_sets_follow_the_binning_rule(name, options):
    X, y, _ = load_shared(name)
    step = max(1, X.shape[1] // 400)
    _check_against_scipy(X, y, lambda col: _rule_codes(col, **options), step=step, **options)


def test_sparse_counts_camda_match_the_rule_and_dense():
    X, y, _ = load_shared("camda_pseudomonas")
    # keep the columns that vary: many of camda's gene families are constant
    cols = np.flatnonzero(X.max(axis=0).toarray().ravel() != X.min(axis=0).toarray().ravel())[:1500]
    Xs = X[:, cols]
    _check_against_scipy(Xs, y, _rule_codes, step=3)
    dense = Xs.toarray()
    for method in ("chi2", "mi"):
        a, b = gs.score(Xs, y, method=method), gs.score(dense, y, method=method)
        np.testing.assert_allclose(a.statistic, b.statistic, rtol=1e-13, equal_nan=True)
        np.testing.assert_allclose(a.pvalues, b.pvalues, rtol=1e-13, equal_nan=True)


def test_mi_on_dorothea_binary_sparse_matches_sklearn():
    X, y, _ = load_shared("dorothea_train")
    Xs = X[:, :3000]
    res = gs.score(Xs, y, method="mi")
    A = Xs.toarray()
    varying = A.max(axis=0) > 0
    ref = mutual_info_classif(A[:, varying], y, discrete_features=True)
    np.testing.assert_allclose(res.statistic[varying], ref, rtol=RTOL, atol=ATOL_MI)
    assert np.isnan(res.statistic[~varying]).all()


# --------------------------------------------------------------------------------------------
# chi2_counts against scikit-learn
# --------------------------------------------------------------------------------------------

def _check_chi2_counts(X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # sklearn divides 0 by 0 on all-zero features
        stat, p = sk_chi2(X, y)
    res = gs.score(X, y, method="chi2_counts")
    lo = np.asarray(X.min(axis=0).todense() if sp.issparse(X) else X.min(axis=0)).ravel()
    hi = np.asarray(X.max(axis=0).todense() if sp.issparse(X) else X.max(axis=0)).ravel()
    constant = lo == hi
    assert np.isnan(res.statistic[constant]).all() and np.isnan(res.pvalues[constant]).all()
    assert np.isnan(stat[~constant]).sum() == 0  # sklearn is NaN only on (all-zero) constants
    ok = ~constant
    assert ok.sum() >= min(100, X.shape[1])
    np.testing.assert_allclose(res.statistic[ok], stat[ok], rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(res.pvalues[ok], p[ok], rtol=RTOL, atol=1e-300)
    return res


@pytest.mark.parametrize("name", ["camda_pseudomonas", "PCMAC", "BASEHOCK", "dorothea_train"])
def test_chi2_counts_matches_sklearn_on_sparse_counts(name):
    X, y, _ = load_shared(name)
    _check_chi2_counts(X, y)


def test_chi2_counts_matches_sklearn_dense_and_multiclass():
    X, y, _ = load_shared("PCMAC")
    dense = X.toarray()  # uint8 counts, dense
    res = _check_chi2_counts(dense, y)
    # dense sums are taken about the first row, sparse ones about 0: the same to rounding
    np.testing.assert_allclose(gs.score(X, y, method="chi2_counts").statistic, res.statistic,
                               rtol=RTOL, atol=1e-12, equal_nan=True)
    X, y, _ = load_shared("lymphoma")  # 9 classes; shift the {-2, 0, 2} levels to counts
    _check_chi2_counts(np.asarray(X, dtype=np.float64) + 2.0, y)


def test_chi2_counts_on_frequencies():
    rng = np.random.default_rng(7)
    X = rng.dirichlet(np.ones(30), size=80)  # rows of relative frequencies
    y = rng.integers(0, 3, 80)
    _check_chi2_counts(X, y)


def test_chi2_counts_streams_over_row_chunks():
    X, y, _ = load_shared("PCMAC")
    ref = gs.score(X, y, method="chi2_counts")
    bounds = [0, 1, 400, 401, 1200, X.shape[0]]
    chunks = ((X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:]))
    res = gs.score(chunks, method="chi2_counts")
    np.testing.assert_allclose(res.statistic, ref.statistic, rtol=1e-13, equal_nan=True)
    np.testing.assert_allclose(res.pvalues, ref.pvalues, rtol=1e-12, equal_nan=True)
    sel = gs.SelectKBest(score_func="chi2_counts", k=20)
    rows = np.random.default_rng(10).permutation(X.shape[0])  # every chunk sees both classes
    for part in np.array_split(rows, 3):
        sel.partial_fit(X[part], y[part])
    np.testing.assert_array_equal(sel.ranking_[:20], ref.ranking[:20])


def test_chi2_counts_is_accurate_for_counts_with_a_large_offset():
    from fractions import Fraction

    rng = np.random.default_rng(15)
    X = 10**9 + rng.poisson(3.0, size=(60, 6))
    y = rng.integers(0, 3, 60)
    exact = []
    for j in range(6):
        col = [int(v) for v in X[:, j]]
        total, n = sum(col), len(col)
        chi = Fraction(0)
        for c in range(3):
            n_c = int((y == c).sum())
            expected = Fraction(n_c * total, n)
            chi += (sum(v for v, yc in zip(col, y) if yc == c) - expected) ** 2 / expected
        exact.append(float(chi))
    res = gs.score(X, y, method="chi2_counts")
    np.testing.assert_allclose(res.statistic, exact, rtol=1e-12)  # sklearn: 8e-7 here
    chunks = iter([(X[:7], y[:7]), (X[7:30], y[7:30]), (X[30:], y[30:])])
    np.testing.assert_allclose(gs.score(chunks, method="chi2_counts").statistic, exact, rtol=1e-12)


def test_class_sums_merge_chunks_missing_classes():
    rng = np.random.default_rng(8)
    X = rng.poisson(2.0, size=(30, 6)).astype(float)
    y = np.repeat(["a", "b", "c"], 10)
    whole = ClassSums.from_chunk(X, y)
    parts = ClassSums.empty()
    for s in (slice(0, 10), slice(10, 25), slice(25, 30)):
        parts = parts.merge(ClassSums.from_chunk(X[s], y[s]))
    np.testing.assert_array_equal(parts.classes, whole.classes)
    np.testing.assert_array_equal(parts.count, whole.count)
    np.testing.assert_array_equal(parts.class_sums(), whole.class_sums())
    np.testing.assert_array_equal(parts.class_sums(), [X[y == c].sum(axis=0) for c in "abc"])
    np.testing.assert_array_equal(parts.minimum, whole.minimum)
    np.testing.assert_array_equal(parts.maximum, whole.maximum)


@pytest.mark.parametrize("kind", ["frame", "array", "csr"])
def test_chi2_counts_rejects_negative_values_naming_the_features(kind):
    rng = np.random.default_rng(9)
    X = rng.poisson(1.0, size=(40, 8)).astype(float)
    X[5, 3] = -1.0
    X[7, 6] = -0.5
    y = rng.integers(0, 2, 40)
    data = {"frame": pd.DataFrame(X, columns=[f"gene{j}" for j in range(8)]), "array": X,
            "csr": sp.csr_matrix(X)}[kind]
    names = "'gene3', 'gene6'" if kind == "frame" else "'x3', 'x6'"
    with pytest.raises(ValueError, match=f"non-negative.*{names}.*smallest -1"):
        gs.score(data, y, method="chi2_counts")
    with pytest.raises(ValueError, match=f"non-negative.*{names}"):
        gs.score(iter([(data[:20], y[:20]), (data[20:], y[20:])]), method="chi2_counts")
    # the discretising chi2 accepts any real values
    assert np.isfinite(gs.score(data, y, method="chi2").statistic).all()


# --------------------------------------------------------------------------------------------
# the discretisation rule
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, bins", [(100, 5), (103, 5), (61, 7), (10, 3), (4, 5)])
def test_bins_have_equal_frequency_without_ties(n, bins):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n)
    codes = discretize(x[:, None], bins=bins, max_categories=5)[:, 0]
    sizes = np.bincount(codes, minlength=bins)
    assert sizes.sum() == n
    if n >= bins:
        assert set(sizes) <= {n // bins, -(-n // bins)}
    order = np.argsort(x)
    assert (np.diff(codes[order]) >= 0).all(), "codes increase with the value"
    np.testing.assert_array_equal(codes, _rank_codes(x, bins))
    np.testing.assert_array_equal(codes, _rule_codes(x, bins))


def test_ties_are_never_split_and_go_to_the_bin_of_their_first_position():
    x = np.array([0.0] * 6 + [1.5, 2.5, 3.5, 4.5])
    # r = 0 for the zeros, 6..9 for the others; code = floor(5 r / 10)
    assert discretize(x[:, None], bins=5)[:, 0].tolist() == [0] * 6 + [3, 3, 4, 4]
    rng = np.random.default_rng(11)
    X = np.round(rng.standard_normal((97, 40)), 1) * 1.3  # heavy ties, non-integer
    codes = discretize(X, bins=6, max_categories=5)
    for j in range(X.shape[1]):
        values, inverse = np.unique(X[:, j], return_inverse=True)
        per_value = np.zeros(values.size, dtype=int)
        per_value[inverse] = codes[:, j]
        np.testing.assert_array_equal(codes[:, j], per_value[inverse])  # one code per value
        np.testing.assert_array_equal(codes[:, j], _rank_codes(X[:, j], 6))


def test_max_categories_boundary():
    rng = np.random.default_rng(12)
    n = 50
    five = rng.choice([-3, 0, 1, 4, 9], n).astype(float)
    five[:5] = [-3, 0, 1, 4, 9]
    six = rng.choice([-3, 0, 1, 4, 9, 12], n).astype(float)
    six[:6] = [-3, 0, 1, 4, 9, 12]
    halves = rng.choice([0.5, 1.5], n)  # two values but not integers: binned
    X = np.column_stack([five, six, halves])
    codes = discretize(X, bins=4, max_categories=5)
    np.testing.assert_array_equal(codes[:, 0], np.unique(five, return_inverse=True)[1])
    np.testing.assert_array_equal(codes[:, 1], _rank_codes(six, 4))
    np.testing.assert_array_equal(codes[:, 2], _rank_codes(halves, 4))
    assert set(codes[:, 2]) == {0, _rank_codes(halves, 4).max()}
    np.testing.assert_array_equal(discretize(X, bins=4, max_categories=6)[:, 1], np.unique(six, return_inverse=True)[1])
    np.testing.assert_array_equal(discretize(X, bins=4, max_categories=0)[:, 0], _rank_codes(five, 4))


def _mixed_block(rng, n=83):
    """Columns of every kind the discretiser distinguishes."""
    cols = [
        rng.standard_normal(n),                                   # continuous
        np.round(rng.standard_normal(n), 1),                      # continuous, ties
        rng.integers(-2, 3, n),                                   # few integers, negatives
        rng.poisson(0.3, n),                                      # mostly zeros
        rng.poisson(6.0, n),                                      # many integers, narrow range
        rng.choice([0, 10**9, -7], n),                            # few integers, wide range
        rng.integers(0, 10**7, n),                                # many integers, wide range
        np.where(rng.random(n) < 0.7, 0.0, rng.standard_normal(n)),  # zero-inflated, both signs
        np.full(n, 3.0),                                          # constant
        np.zeros(n),                                              # all zero
        np.where(rng.random(n) < 0.5, 2.5, 0.0),                 # two non-integer values
        -rng.poisson(9.0, n),                                     # negative counts, no zeros
    ]
    return np.column_stack(cols).astype(np.float64)


@pytest.mark.parametrize("bins, max_categories", [(5, 5), (2, 0), (10, 3), (4, 12)])
def test_discretize_and_tables_agree_with_the_rule_dense_and_sparse(bins, max_categories):
    rng = np.random.default_rng(13 + bins)
    X = _mixed_block(rng)
    y = rng.integers(0, 3, X.shape[0])
    count = np.bincount(y).astype(float)
    codes = discretize(X, bins=bins, max_categories=max_categories)
    for j in range(X.shape[1]):
        np.testing.assert_array_equal(codes[:, j], _rule_codes(X[:, j], bins, max_categories), err_msg=f"column {j}")
    L = max(bins, max_categories)
    assert codes.max() < L
    ref = np.zeros((X.shape[1], L, 3))
    for j in range(X.shape[1]):
        np.add.at(ref[j], (codes[:, j], y), 1)
    np.testing.assert_array_equal(contingency_tables(X, y, count, bins=bins, max_categories=max_categories), ref)
    S = sp.csc_matrix(X)
    S.data[::7] = 0.0  # explicit zeros are zeros
    dense = S.toarray()
    np.testing.assert_array_equal(
        contingency_tables(S, y, count, bins=bins, max_categories=max_categories),
        contingency_tables(dense, y, count, bins=bins, max_categories=max_categories))


def test_empty_categories_are_dropped_before_counting_degrees_of_freedom():
    x = np.array([0.0] * 6 + [1.5, 2.5, 3.5, 4.5] + [0.0] * 6 + [1.5, 2.5, 3.5, 4.5])
    y = np.array([0] * 10 + [1] * 10)
    X = np.column_stack([x, x[::-1]])
    res = gs.score(X, y, method="chi2")  # codes 0, 3, 4: a 3 x 2 table, 2 degrees of freedom
    ref = ss.chi2_contingency(_table(_rule_codes(x), y), correction=False)
    assert ref.dof == 2
    np.testing.assert_allclose(res.statistic[0], ref.statistic, rtol=RTOL)
    np.testing.assert_allclose(res.pvalues[0], ref.pvalue, rtol=RTOL)


def test_constant_features_are_nan_and_a_separator_has_full_information():
    y = np.array([0, 0, 0, 1, 1, 1, 1])
    X = np.column_stack([np.full(7, 2.0), [1, 1, 1, 5, 5, 5, 5], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]])
    for method in ("chi2", "mi", "chi2_counts"):
        res = gs.score(X, y, method=method)
        assert np.isnan(res.statistic[0]) and np.isnan(res.pvalues[0]) and res.ranking[-1] == 0
    info = gs.score(X, y, method="mi").statistic[1]
    np.testing.assert_allclose(info, ss.entropy([3, 4]), rtol=1e-14)
    np.testing.assert_allclose(gs.score(X, y, method="chi2").statistic[1], 7.0, rtol=1e-14)  # n phi^2, phi = 1


@pytest.mark.parametrize("option, value", [("bins", 1), ("bins", 2.5), ("bins", True),
                                           ("max_categories", -1), ("max_categories", "5")])
def test_bad_options_are_clear_errors(option, value):
    X = np.random.default_rng(14).standard_normal((20, 3))
    y = np.arange(20) % 2
    for method in ("chi2", "mi"):
        with pytest.raises(ValueError, match=f"The '{option}' option of method '{method}' must be an int >= "):
            gs.score(X, y, method=method, method_options={option: value})


def test_integer_columns_of_different_ranges_share_a_block(monkeypatch):
    # a binned integer column after one of wider range, in one block: the narrower one's padding
    # slots (values above its maximum) must not produce out-of-range codes
    from genosift.core import engine

    monkeypatch.setattr(engine.os, "cpu_count", lambda: 1)  # one block for both columns
    rng = np.random.default_rng(11)
    X = np.column_stack([rng.integers(0, 40, 60), rng.integers(0, 10, 60)]).astype(np.float64)
    y = rng.integers(0, 2, 60)
    together = gs.score(X, y, method="chi2")
    for j in range(2):
        alone = gs.score(X[:, [j]], y, method="chi2")
        np.testing.assert_allclose(together.statistic[j], alone.statistic[0], rtol=1e-12)


# --------------------------------------------------------------------------------------------
# presence/absence: the tables from each class's count of 1s
# --------------------------------------------------------------------------------------------

POSITIVES = sorted(m for m in gs.REGISTRY if gs.get_method(m).positives is not None)


def _presence_matrix(rng, n=61, p=90):
    M = (rng.random((n, p)) < rng.random(p)).astype(np.float64)  # every carriage from rare to common
    M[:, 0], M[:, 1], M[:, 2] = 0.0, 1.0, 0.0
    M[0, 2] = 1.0  # all zeros, all ones, a single carrier
    return M


@pytest.fixture
def blocks_only(monkeypatch):
    """``blocks_only(name)``: score with the method's column blocks, its ``positives`` unregistered."""
    import dataclasses

    def run(name, call):
        spec = gs.get_method(name)
        monkeypatch.setitem(gs.REGISTRY, name, dataclasses.replace(spec, positives=None))
        try:
            return call()
        finally:
            monkeypatch.setitem(gs.REGISTRY, name, spec)

    return run


def _same_bits(a, b):
    for field in ("statistic", "pvalues", "scores"):
        x, y = np.asarray(getattr(a, field)), np.asarray(getattr(b, field))
        assert x.tobytes() == y.tobytes(), field
    assert a.ranking.tolist() == b.ranking.tolist()


def test_the_contingency_scores_read_presence_from_class_counts():
    assert POSITIVES == ["chi2", "fisher_exact", "mi"]
    with pytest.raises(ValueError, match="column blocks"):
        register("bad", task="classification", invariance="none", statistic=ClassSums, positives=lambda c, t: c,
                    formula="", reference="")


@pytest.mark.parametrize("form", ["dense", "csr", "csc", "frame", "counts --binary", "store --binary"])
@pytest.mark.parametrize("method", POSITIVES)
def test_presence_from_class_counts_equals_the_column_blocks_bit_for_bit(method, form, blocks_only, tmp_path):
    """Data of 0s and 1s are scored from each class's count of 1s: the numbers of the column
    blocks, bit for bit, for two and three classes and every way the options code a 0/1 feature
    (two categories; bins, where the 1s share the 0s' bin or not)."""
    rng = np.random.default_rng(17)
    M = _presence_matrix(rng)
    counts = M * rng.integers(1, 9, M.shape)  # counts, read as presence with binary=True
    X = {"dense": M, "csr": sp.csr_matrix(M), "csc": sp.csc_matrix(M), "frame": pd.DataFrame(M),
         "counts --binary": sp.csr_matrix(counts)}.get(form)
    if form == "store --binary":  # its blocks of the column copy, read as presence
        X = str(gs.io.write_store(gs.io.Dataset(sp.csr_matrix(counts), [f"s{i}" for i in range(M.shape[0])],
                                                [f"k{j}" for j in range(M.shape[1])]), tmp_path / "c.gs.h5ad"))
    binary = form.endswith("--binary")
    spec = gs.get_method(method)
    targets = (np.arange(M.shape[0]) % 2,) + (() if spec.binary_only else (rng.integers(0, 3, M.shape[0]),))
    for y in targets:
        for options in ({}, {"max_categories": 1}, {"max_categories": 0, "bins": 3}, {"bins": 40, "max_categories": 0},
                        {"bins": 7, "max_categories": 9})[:5 if spec.options else 1]:
            got = gs.score(X, y, method=method, binary=binary, method_options=options)
            reference = blocks_only(method, lambda: gs.score(X, y, method=method, binary=binary,
                                                             method_options=options))
            _same_bits(got, reference)
            n, zeros = M.shape[0], (M == 0).sum(axis=0)
            if options.get("max_categories", 5) >= 2:  # two categories wherever both values occur
                one_category = (zeros == 0) | (zeros == n)
            else:  # the 1s in the 0s' bin where the 0s are fewer than n / bins
                one_category = (zeros == n) | (zeros * options.get("bins", 5) // n == 0)
            assert np.isnan(got.statistic).tolist() == one_category.tolist()


@pytest.mark.parametrize("method", POSITIVES)
def test_only_blocks_of_zeros_and_ones_are_scored_from_class_counts(method, monkeypatch, blocks_only):
    """Data of 0s and 1s in memory go to ``positives`` whole; otherwise each block of columns of
    0s and 1s does (here: those without the count 2 or the entry stored twice), the others to the
    method's function; the numbers are the column blocks' either way. NaN: the usual error."""
    import dataclasses
    import functools

    from genosift.scoring import memory

    spec = gs.get_method(method)
    widths = {"positives": [], "func": []}

    @functools.wraps(spec.positives)
    def positives(counts, target, **options):
        widths["positives"].append(counts.shape[1])
        return spec.positives(counts, target, **options)

    @functools.wraps(spec.func)  # the method's signature: its options
    def func(block, target, **options):
        widths["func"].append(block.shape[1])
        return spec.func(block, target, **options)

    rng = np.random.default_rng(5)
    M = _presence_matrix(rng)
    y = np.arange(M.shape[0]) % 2
    counted = M.copy()
    counted[3, 5] = 2.0
    indptr = np.r_[0, np.full(M.shape[0], 2)]
    doubled = sp.csr_matrix((np.ones(2), np.array([4, 4]), indptr), shape=M.shape)  # one entry stored twice: 2
    assert not doubled.has_canonical_format
    monkeypatch.setattr(gs.core.engine, "BLOCK_BYTES", 8 * M.shape[0] * 16)  # blocks of at most 16 columns
    for X, whole in ((sp.csr_matrix(M), True), (M, True), (counted, False), (doubled, False)):
        reference = blocks_only(method, lambda: gs.score(X, y, method=method))
        widths["positives"].clear(), widths["func"].clear()
        with monkeypatch.context() as patched:
            patched.setitem(gs.REGISTRY, method, dataclasses.replace(spec, func=func, positives=positives))
            if whole:  # one pass over the rows: no copy by columns
                patched.setattr(memory, "column_blocks", None)
            got = gs.score(X, y, method=method)
        _same_bits(got, reference)
        assert sum(widths["positives"]) + sum(widths["func"]) == M.shape[1]
        assert len(widths["func"]) == (0 if whole else 1)
    holed = M.copy()
    holed[4, 6] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        gs.score(holed, y, method=method)


def test_chi2_of_binary_data_matches_scipy():
    """An independent reference for the counts path: scipy's test of independence per feature."""
    rng = np.random.default_rng(9)
    M = _presence_matrix(rng)
    y = rng.integers(0, 3, M.shape[0])
    res = gs.score(sp.csr_matrix(M), y, method="chi2")
    ones = M.sum(axis=0)
    constant = (ones == 0) | (ones == M.shape[0])
    assert np.isnan(res.statistic[constant]).all() and (~constant).sum() > 80
    for j in np.flatnonzero(~constant):
        table = np.array([[np.sum((M[:, j] == v) & (y == c)) for c in range(3)] for v in (0, 1)])
        stat, p, _, _ = ss.chi2_contingency(table, correction=False)
        np.testing.assert_allclose([res.statistic[j], res.pvalues[j]], [stat, p], rtol=RTOL)
