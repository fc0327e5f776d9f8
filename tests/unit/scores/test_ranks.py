"""Rank methods (spearman, kendall, auc, kruskal) against scipy / scikit-learn and direct formulas."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.metrics import roc_auc_score

import genosift as gs
from genosift.core import engine
from genosift.scores import ranks

from conftest import load_shared

RANK_METHODS = ["spearman", "kendall", "auc", "kruskal"]


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def _columns(X, p, seed=0):
    """A reproducible subset of at most ``p`` columns of X (dense float64)."""
    cols = np.sort(np.random.default_rng(seed).choice(X.shape[1], min(p, X.shape[1]), replace=False))
    return _dense(X[:, cols])


def _close(a, b, rtol, atol=0.0, what=""):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _binary01(y):
    """Labels as 0/1 for classes[1] (sorted) against classes[0]."""
    classes = np.unique(y)
    assert len(classes) == 2
    return (y == classes[1]).astype(np.float64)


def _brute_kendall(x, y):
    """Kendall tau-b and S = concordant - discordant by the O(n^2) pair definition."""
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    iu = np.triu_indices(len(x), 1)
    s = (dx * dy)[iu].sum()
    n_x, n_y = (dx[iu] != 0).sum(), (dy[iu] != 0).sum()
    return s / math.sqrt(n_x * n_y), s


def _brute_auc(x, y01):
    """P(x1 > x0) + P(x1 == x0) / 2 over all pairs of a positive and a negative sample."""
    pos, neg = x[y01 == 1], x[y01 == 0]
    d = pos[:, None] - neg[None, :]
    return ((d > 0).sum() + 0.5 * (d == 0).sum()) / d.size


# ------------------------------------------------------------------------------------------
# spearman
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["golub", "colon", "Prostate_GE"])
def test_spearman_matches_scipy_on_real_data(name):
    X, y, _ = load_shared(name)
    Xs = _columns(X, 300)
    target = Xs[:, 0].copy() if name == "Prostate_GE" else _binary01(y)  # numeric y, or 0/1 labels
    res = gs.score(Xs, target, method="spearman")
    ref = [stats.spearmanr(Xs[:, j], target) for j in range(Xs.shape[1])]
    _close(res.statistic, [r.statistic for r in ref], rtol=1e-12, atol=1e-14, what="rho")
    _close(res.pvalues, [r.pvalue for r in ref], rtol=1e-10, atol=1e-300, what="p")


def test_spearman_string_labels_coded_01_and_sparse_equals_dense():
    X, y, _ = load_shared("PCMAC")
    Xs = X[:, :400]
    res = gs.score(Xs, y, method="spearman")
    dense = gs.score(Xs.toarray(), y, method="spearman")
    np.testing.assert_array_equal(res.statistic, dense.statistic)
    D, t = _columns(Xs, 60), _binary01(y)
    sub = gs.score(D, y, method="spearman")
    ref = [stats.spearmanr(D[:, j], t) for j in range(D.shape[1])]
    _close(sub.statistic, [r.statistic for r in ref], rtol=1e-12, atol=1e-14)
    _close(sub.pvalues, [r.pvalue for r in ref], rtol=1e-10, atol=1e-300)


# ------------------------------------------------------------------------------------------
# kendall
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, numeric", [("ALLAML", False), ("colon", False), ("lymphoma", True),
                                           ("Prostate_GE", True)])
def test_kendall_matches_scipy_asymptotic_on_real_data(name, numeric):
    X, y, _ = load_shared(name)
    Xs = _columns(X, 150)
    # numeric: a real, tied, numeric target (class labels 1..9 or one gene's values)
    target = (y.astype(float) if name == "lymphoma" else Xs[:, 0].copy()) if numeric else _binary01(y)
    res = gs.score(Xs, target, method="kendall")
    ref = [stats.kendalltau(Xs[:, j], target) for j in range(Xs.shape[1])]
    _close(res.statistic, [r.statistic for r in ref], rtol=1e-12, atol=1e-14, what="tau")
    _close(res.pvalues, [r.pvalue for r in ref], rtol=1e-10, atol=1e-300, what="p")


def test_kendall_exact_small_n_without_ties_matches_scipy():
    X, _, _ = load_shared("golub")
    rows = np.arange(0, 38, 38 / 30).astype(int)[:30]  # n = 30 <= 33: the exact null distribution
    Xs = _columns(X[rows], 400, seed=1)
    target = Xs[:, 0] + 1e-9 * np.arange(30)  # one gene's values, without ties
    assert len(np.unique(target)) == 30
    res = gs.score(Xs, target, method="kendall")
    ref = [stats.kendalltau(Xs[:, j], target) for j in range(Xs.shape[1])]
    untied = np.array([len(np.unique(Xs[:, j])) == 30 for j in range(Xs.shape[1])])
    assert untied.sum() > 300 and (~untied).sum() > 0  # both paths are exercised
    _close(res.statistic, [r.statistic for r in ref], rtol=1e-12, atol=1e-14)
    _close(res.pvalues, [r.pvalue for r in ref], rtol=1e-12, atol=1e-300)
    # the normal approximation on request, as scipy's method="asymptotic"
    asym = gs.score(Xs, target, method="kendall", method_options={"p_method": "asymptotic"})
    ref = [stats.kendalltau(Xs[:, j], target, method="asymptotic").pvalue for j in range(Xs.shape[1])]
    _close(asym.pvalues, ref, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("n", [2, 3, 10, 33, 34, 50, 171, 180])
def test_kendall_exact_tails_and_near_perfect_order(n):
    x = np.arange(n, dtype=np.float64)
    cols = [x, x[::-1].copy()]
    if n >= 3:
        one_swap = x.copy()
        one_swap[[0, 1]] = one_swap[[1, 0]]  # exactly one discordant pair
        cols += [one_swap, one_swap[::-1].copy()]
    rng = np.random.default_rng(n)
    cols.append(rng.permutation(n).astype(np.float64))
    X = np.column_stack(cols)
    y = np.arange(n, dtype=np.float64)
    res = gs.score(X, y, method="kendall")
    for j in range(X.shape[1]):
        r = stats.kendalltau(X[:, j], y)
        _close(res.statistic[j], r.statistic, rtol=1e-12, atol=1e-14)
        _close(res.pvalues[j], r.pvalue, rtol=1e-10, atol=1e-300, what=f"n={n}, column {j}")


def test_kendall_ties_match_the_pair_definition():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 4, size=(40, 25)).astype(np.float64)
    y = rng.integers(0, 5, size=40).astype(np.float64)
    res = gs.score(X, y, method="kendall")
    for j in range(X.shape[1]):
        tau, _ = _brute_kendall(X[:, j], y)
        assert res.statistic[j] == pytest.approx(tau, rel=1e-12, abs=1e-15)


def test_kendall_rejects_an_unknown_p_method():
    with pytest.raises(ValueError, match="The 'p_method' option of method 'kendall'.*Got 'exact'"):
        gs.score(np.eye(5), np.arange(5.0), method="kendall", method_options={"p_method": "exact"})


# ------------------------------------------------------------------------------------------
# auc
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["golub", "ALLAML", "colon", "Prostate_GE"])
def test_auc_matches_sklearn_and_mannwhitneyu_on_real_data(name):
    X, y, _ = load_shared(name)
    Xs = _columns(X, 300)
    t = _binary01(y)
    res = gs.score(Xs, y, method="auc")
    auc = np.array([roc_auc_score(t, Xs[:, j]) for j in range(Xs.shape[1])])
    _close(res.statistic, auc, rtol=1e-12, what="AUC")
    _close(res.scores, np.maximum(auc, 1 - auc), rtol=1e-12, what="score")
    mw = stats.mannwhitneyu(Xs[t == 1], Xs[t == 0], axis=0, method="asymptotic")
    _close(res.pvalues, mw.pvalue, rtol=1e-10, atol=1e-300, what="p")
    nocc = gs.score(Xs, y, method="auc", method_options={"continuity": False})
    mw = stats.mannwhitneyu(Xs[t == 1], Xs[t == 0], axis=0, method="asymptotic", use_continuity=False)
    _close(nocc.pvalues, mw.pvalue, rtol=1e-10, atol=1e-300, what="p without continuity correction")


@pytest.mark.parametrize("name", ["PCMAC", "dorothea_train"])
def test_auc_on_sparse_counts_matches_references_and_dense(name):
    X, y, _ = load_shared(name)
    res = gs.score(X, y, method="auc")  # CSR, scored in sparse blocks
    t = _binary01(y)
    cols = np.flatnonzero(np.diff(X.tocsc().indptr) > 0)  # non-constant columns (zeros elsewhere)
    cols = np.sort(np.random.default_rng(0).choice(cols, min(200, len(cols)), replace=False))
    D = X[:, cols].toarray().astype(np.float64)
    auc = np.array([roc_auc_score(t, D[:, j]) for j in range(D.shape[1])])
    _close(res.statistic[cols], auc, rtol=1e-12)
    mw = stats.mannwhitneyu(D[t == 1], D[t == 0], axis=0, method="asymptotic")
    _close(res.pvalues[cols], mw.pvalue, rtol=1e-10, atol=1e-300)
    # all-zero columns are constant: NaN and ranked last
    empty = np.diff(X.tocsc().indptr) == 0
    assert np.isnan(res.statistic[empty]).all() and np.isnan(res.scores[empty]).all()
    assert set(res.ranking[len(res.ranking) - empty.sum():]) == set(np.flatnonzero(empty))
    # the same numbers as the dense path, bit for bit (exact half-integer rank sums)
    dense = gs.score(X[:, :3000].toarray(), y, method="auc")
    np.testing.assert_array_equal(res.statistic[:3000], dense.statistic)
    np.testing.assert_array_equal(res.pvalues[:3000], dense.pvalues)


def test_auc_pair_definition_ties_and_positive_class():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(30, 12)).astype(np.float64)
    y = np.array(["ctrl", "case"])[rng.integers(0, 2, 30)]  # classes sorted: case, ctrl
    res = gs.score(X, y, method="auc")
    t = (y == "ctrl").astype(float)  # classes[1] is the positive class
    _close(res.statistic, [_brute_auc(X[:, j], t) for j in range(12)], rtol=1e-14)


def test_auc_constant_feature_is_nan_not_one_half():
    X = np.column_stack([np.zeros(10), np.full(10, 3.0), np.arange(10.0)])
    res = gs.score(X, np.arange(10) % 2, method="auc")
    assert np.isnan(res.statistic[:2]).all() and np.isnan(res.pvalues[:2]).all()
    assert np.isnan(res.scores[:2]).all() and res.ranking[0] == 2


def test_auc_rejects_three_classes_and_continuous_targets():
    X = np.random.default_rng(0).standard_normal((30, 4))
    with pytest.raises(ValueError, match="compares two classes"):
        gs.score(X, np.arange(30) % 3, method="auc")
    with pytest.raises(ValueError, match="continuous"):
        gs.score(X, np.linspace(0.1, 3.3, 30), method="auc")


# ------------------------------------------------------------------------------------------
# kruskal
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["GLIOMA", "lymphoma", "TOX_171", "colon"])
def test_kruskal_matches_scipy_on_real_data(name):
    X, y, _ = load_shared(name)
    Xs = _columns(X, 300)
    res = gs.score(Xs, y, method="kruskal")
    groups = [Xs[y == c] for c in np.unique(y)]
    ref = stats.kruskal(*groups, axis=0)
    # genosift sums squared deviations of mean ranks (no cancellation); scipy subtracts 3(n+1)
    _close(res.statistic, ref.statistic, rtol=1e-9, atol=1e-9, what="H")
    _close(res.pvalues, ref.pvalue, rtol=1e-9, atol=1e-12, what="p")


def test_kruskal_on_sparse_counts_matches_scipy():
    X, y, _ = load_shared("camda_pseudomonas")
    Xs = X[:, :5000]
    res = gs.score(Xs, y, method="kruskal")
    nz = np.flatnonzero(np.diff(Xs.tocsc().indptr) > 0)[:150]
    D = Xs[:, nz].toarray()
    ref = stats.kruskal(*[D[y == c] for c in np.unique(y)], axis=0)
    _close(res.statistic[nz], ref.statistic, rtol=1e-9, atol=1e-9)
    _close(res.pvalues[nz], ref.pvalue, rtol=1e-9, atol=1e-12)


def test_kruskal_two_classes_is_the_squared_mann_whitney_z():
    X, y, _ = load_shared("ALLAML")
    Xs = _columns(X, 100)
    h = gs.score(Xs, y, method="kruskal").statistic
    a = gs.score(Xs, y, method="auc", method_options={"continuity": False}).pvalues
    _close(stats.chi2.sf(h, 1), a, rtol=1e-9)


# ------------------------------------------------------------------------------------------
# shared rank kernel: sparse == dense, negatives, stored zeros, blocks
# ------------------------------------------------------------------------------------------

def test_sparse_rank_kernel_handles_negatives_and_stored_zeros():
    rng = np.random.default_rng(11)
    D = rng.integers(-2, 3, size=(50, 40)).astype(np.float64) * (rng.random((50, 40)) < 0.3)
    D[:, 3] = 0.0
    D[:, 4] = -1.0  # constant, no zeros
    S = sp.csc_matrix(D)
    col = np.repeat(np.arange(40), np.diff(S.indptr))
    S.data[(np.arange(S.nnz) % 7 == 0) & (col != 4)] = 0.0  # explicit stored zeros
    S.data[col == 5] = 0.0  # a column of stored zeros only
    codes = rng.integers(0, 3, 50)
    w = stats.rankdata(rng.standard_normal(50)) - 25.5  # centred ranks, as spearman uses
    for weights in (np.ones(50), w):
        Cs, Ss = ranks._rank_sums(S, codes, weights, 3)
        Cd, Sd = ranks._rank_sums(S.toarray(), codes, weights, 3)
        np.testing.assert_array_equal(Cs, Cd)
        np.testing.assert_array_equal(Ss, Sd)
    # against a direct computation from scipy's average ranks
    r = stats.rankdata(S.toarray(), axis=0) - 25.5
    onehot = np.eye(3)[codes]
    _close(Cd, (r * w[:, None]).T @ onehot, rtol=1e-14, atol=1e-12)
    _close(Sd, (r * r).sum(axis=0), rtol=1e-14, atol=0)
    assert (Sd[[3, 4, 5]] == 0).all() and (Sd[6:] > 0).all()


@pytest.mark.parametrize("method", RANK_METHODS)
def test_rank_methods_on_integer_ties_dense_sparse_and_blocks_agree(method, monkeypatch):
    X, y, _ = load_shared("colon")  # int16, values -2..2: heavy ties and negatives
    spec = gs.get_method(method)
    target = y if spec.task == "classification" else _binary01(y)
    ref = gs.score(X, target, method=method)
    monkeypatch.setattr(engine, "BLOCK_BYTES", 37 * 8 * X.shape[0])
    for variant in (X, sp.csr_matrix(X)):
        res = gs.score(variant, target, method=method)
        np.testing.assert_array_equal(res.statistic, ref.statistic)
        np.testing.assert_array_equal(res.pvalues, ref.pvalues)


@pytest.mark.parametrize("method", RANK_METHODS)
def test_rank_methods_are_registered_with_their_properties(method):
    spec = gs.get_method(method)
    assert spec.streaming == "blocks" and spec.has_pvalues
    assert spec.sparse_blocks == (method != "kendall")
    assert spec.binary_only == (method == "auc")
    assert spec.signed == (method in ("spearman", "kendall"))
