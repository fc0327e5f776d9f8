"""RedundancyFilter and MRMR: direct reference loops, mrmr_selection, duplicates, real data, contract."""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.feature_selection import f_classif
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import mutual_info_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import genosift as gs
from genosift.scores._discretize import discretize

from conftest import load_shared

# scikit-learn's f_classif, a reference here, warns about the constant features the tests plant
pytestmark = pytest.mark.filterwarnings("ignore:Features .* are constant:UserWarning",
                                        "ignore:invalid value encountered in divide:RuntimeWarning")


# --------------------------------------------------------------------------------------------
# direct, obviously-correct references
# --------------------------------------------------------------------------------------------

def _abs_corr(a, b):
    """|Pearson r| of two columns; 0 when either is constant."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return abs(np.corrcoef(a, b)[0, 1])


def _reference_filter(D, ranking, scores, k, max_corr):
    """The greedy walk, one candidate and one kept feature at a time."""
    kept, rejected, by, corr = [], [], [], []
    for j in ranking:
        if len(kept) == k or np.isnan(scores[j]):
            break
        if np.ptp(D[:, j]) == 0:
            rejected.append(j), by.append(-1), corr.append(np.nan)
            continue
        r = [_abs_corr(D[:, j], D[:, i]) for i in kept]
        if all(v <= max_corr for v in r):
            kept.append(j)
        else:
            rejected.append(j), by.append(kept[int(np.argmax(r))]), corr.append(max(r))
    return kept, rejected, by, corr


def _reference_mrmr(D, relevance, k, redundancy, scheme, floor=1e-3, bins=5, max_categories=5):
    """mRMR recomputing every pairwise term at every step; MI from scikit-learn on the codes."""
    p = D.shape[1]
    codes = discretize(D, bins=bins, max_categories=max_categories) if redundancy == "mi" else None
    pairs = {}

    def term(a, b):
        if (a, b) not in pairs:
            pairs[a, b] = (mutual_info_score(codes[:, a], codes[:, b]) if redundancy == "mi"
                           else _abs_corr(D[:, a], D[:, b]))
        return pairs[a, b]

    chosen, red_out, score_out = [], [], []
    for step in range(k):
        best, best_j, best_red = -np.inf, None, np.nan
        for j in range(p):
            if j in chosen or np.isnan(relevance[j]):
                continue
            if step == 0:
                red, crit = np.nan, relevance[j]
            else:
                red = np.mean([max(term(j, s), floor) for s in chosen])
                crit = relevance[j] - red if scheme == "difference" else relevance[j] / red
            if crit > best:
                best, best_j, best_red = crit, j, red
        chosen.append(best_j), red_out.append(best_red), score_out.append(best)
    return np.array(chosen), np.array(red_out), np.array(score_out)


def _factor_data(seed, n=60, p=300, n_factors=8):
    """Features mixing a few shared factors (correlations of all sizes) and class-shifted."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    F = rng.standard_normal((n, n_factors))
    W = rng.standard_normal((n_factors, p)) * rng.uniform(0, 1.5, p)
    X = F @ W + rng.standard_normal((n, p))
    X[:, : p // 5] += 0.8 * y[:, None] * rng.uniform(0, 1, p // 5)
    return X, y


def _sparse_counts(seed, n=80, p=200):
    """Non-negative counts with many zeros, some columns sharing a hidden pattern."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    base = rng.poisson(1.0 + 2.0 * y[:, None], (n, 10))
    X = rng.poisson(0.4, (n, p)).astype(np.float64)
    X[:, :60] += base[:, np.arange(60) % 10] * rng.integers(0, 2, (n, 60))
    X[:, 5] = 0.0  # an all-zero feature
    return X, y


# --------------------------------------------------------------------------------------------
# scikit-learn contract
# --------------------------------------------------------------------------------------------

@parametrize_with_checks([
    gs.RedundancyFilter(k=2),
    gs.RedundancyFilter(score_func="variance", k=1, max_corr=0.0),
    gs.MRMR(k=2),
    gs.MRMR(k=2, relevance="mi", redundancy="mi", scheme="quotient"),
])
@pytest.mark.filterwarnings("ignore:RedundancyFilter kept 1 of k=2")  # checks fitting one feature
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------------------------
# RedundancyFilter
# --------------------------------------------------------------------------------------------

def test_filter_keeps_one_of_each_duplicated_group():
    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 2, n)
    base = rng.standard_normal((n, 4)) + y[:, None] * np.array([2.0, 1.6, 1.2, 0.9])
    groups = []
    columns = [rng.standard_normal((n, 30))]
    start = 30
    for g in range(4):
        copies = [base[:, g], base[:, g]]  # an exact duplicate
        copies += [base[:, g] + 0.05 * rng.standard_normal(n) for _ in range(3)]  # near-duplicates
        columns.append(np.column_stack(copies))
        groups.append(np.arange(start, start + len(copies)))
        start += len(copies)
    X = np.column_stack(columns)
    sel = gs.RedundancyFilter(score_func="anova", k=10, max_corr=0.7).fit(X, y)
    kept = set(sel.selected_.tolist())
    for members in groups:
        inside = kept & set(members.tolist())
        assert len(inside) == 1, (members, sel.selected_)
        (rep,) = inside
        # every other member of the group was examined, rejected, and blamed on the kept one
        others = np.setdiff1d(members, [rep])
        at = np.searchsorted(sel.rejected_, others, sorter=np.argsort(sel.rejected_))
        order = np.argsort(sel.rejected_)[at]
        np.testing.assert_array_equal(sel.rejected_[order], others)
        np.testing.assert_array_equal(sel.rejected_by_[order], rep)
        assert (sel.rejected_corr_[order] > 0.99).all()
    assert len(sel.selected_) == 10
    assert all(j < 30 for j in kept - set(np.concatenate(groups).tolist()))


def _fit_recording_warnings(selector, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selector.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("max_corr", [0.3, 0.5, 0.8, 1.0])
@pytest.mark.parametrize("k", [1, 7, 45])
def test_filter_equals_direct_loop_dense_and_sparse(max_corr, k):
    X, y = _factor_data(seed=int(max_corr * 10) + k)
    X[:, 17] = 2.5  # constant: NaN anova score, never examined
    sel = gs.RedundancyFilter(score_func="anova", k=k, max_corr=max_corr)
    warned = _fit_recording_warnings(sel, X, y)
    F = f_classif(X, y)[0]
    np.testing.assert_allclose(sel.scores_, F, rtol=1e-10, equal_nan=True)
    ranking = np.argsort(-np.where(np.isnan(F), -np.inf, F), kind="stable")
    np.testing.assert_array_equal(sel.ranking_, ranking)
    kept, rejected, by, corr = _reference_filter(X, ranking, F, k, max_corr)
    np.testing.assert_array_equal(sel.selected_, kept)
    np.testing.assert_array_equal(sel.rejected_, rejected)
    np.testing.assert_array_equal(sel.rejected_by_, by)
    np.testing.assert_allclose(sel.rejected_corr_, corr, rtol=1e-10)
    np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), np.sort(kept))
    assert (len(kept) < k) == any(f"kept {len(kept)} of k={k}" in m for m in warned)

    Xs = np.where(X > 0.5, X, 0.0)
    dense = gs.RedundancyFilter(score_func="anova", k=k, max_corr=max_corr)
    _fit_recording_warnings(dense, Xs, y)
    np.testing.assert_array_equal(dense.selected_, _reference_filter(Xs, dense.ranking_, dense.scores_, k, max_corr)[0])
    for fmt in (sp.csr_matrix, sp.csc_matrix):
        sparse = gs.RedundancyFilter(score_func="anova", k=k, max_corr=max_corr)
        _fit_recording_warnings(sparse, fmt(Xs), y)
        np.testing.assert_array_equal(sparse.selected_, dense.selected_)
        np.testing.assert_array_equal(sparse.rejected_, dense.rejected_)
        np.testing.assert_array_equal(sparse.rejected_by_, dense.rejected_by_)
        np.testing.assert_allclose(sparse.rejected_corr_, dense.rejected_corr_, rtol=1e-9)


def test_filter_long_sparse_walk_equals_dense():
    """Every candidate examined: more blocks than the CSR gathers, so the CSC copy is used too."""
    rng = np.random.default_rng(12)
    n, p = 60, 1500
    y = rng.integers(0, 2, n)
    shared = rng.poisson(1.0 + y)  # every feature is mostly this one count (|r| ~ 0.6 or more)
    X = shared[:, None] + rng.poisson(0.3, (n, p)) * (rng.random((n, p)) < 0.5)
    X = X.astype(np.float64)
    for data in (X, sp.csr_matrix(X)):
        with pytest.warns(UserWarning, match="kept 1 of k=2"):
            sel = gs.RedundancyFilter(score_func="anova", k=2, max_corr=0.3).fit(data, y)
        kept, rejected, by, corr = _reference_filter(X, sel.ranking_, sel.scores_, 2, 0.3)
        assert len(rejected) == p - 1
        np.testing.assert_array_equal(sel.selected_, kept)
        np.testing.assert_array_equal(sel.rejected_, rejected)
        np.testing.assert_array_equal(sel.rejected_by_, by)
        np.testing.assert_allclose(sel.rejected_corr_, corr, rtol=1e-9)


@pytest.mark.parametrize("threads", [1, 2])
def test_columns_taken_from_csr_equal_scipys(threads):
    """The candidates' columns gathered from CSR rows: scipy's ``M[:, cols]`` as canonical CSC,
    columns in the order asked, whatever the stripes of rows (a repeated column goes to scipy)."""
    from genosift.core import engine
    from genosift.core.sparse_columns import take_columns

    rng = np.random.default_rng(4)
    previous = engine.set_threads(threads)
    try:
        for n, p, density in ((1, 6, 0.5), (9, 40, 0.3), (300, 5000, 0.02), (0, 8, 0.0)):
            X = sp.random(n, p, density=density, format="csr", random_state=rng, dtype=np.float32)
            X.data = np.ceil(X.data * 9)
            for cols in (np.arange(0), rng.permutation(p)[:min(p, 3)], rng.permutation(p)[:p // 2],
                         np.arange(p)[::-1], np.array([min(1, p - 1)] * 2)):
                got = take_columns(X, cols)
                want = sp.csc_matrix(X[:, cols], dtype=np.float64)
                want.sum_duplicates()
                assert got.format == "csc" and got.dtype == np.float64 and got.shape == (n, len(cols))
                assert got.has_canonical_format
                for a, b in ((got.indptr, want.indptr), (got.indices, want.indices), (got.data, want.data)):
                    np.testing.assert_array_equal(a, b)
    finally:
        engine.set_threads(previous)


def test_unsupervised_relevance_and_bad_callable():
    X, y = _factor_data(seed=13, p=40)
    sel = gs.MRMR(k=4, relevance="variance", scheme="difference").fit(X)
    rel = X.var(axis=0, ddof=1)
    chosen = _reference_mrmr(X, sel.relevance_, 4, "pearson", "difference")[0]
    np.testing.assert_allclose(sel.relevance_ / rel, sel.relevance_[0] / rel[0], rtol=1e-10)
    np.testing.assert_array_equal(sel.selected_, chosen)
    with pytest.raises(ValueError, match="must return one score per feature, shape \\(40,\\)"):
        gs.RedundancyFilter(score_func=lambda X, y: np.ones(3), k=2).fit(X, y)


def test_filter_constant_candidates_and_nan_scores():
    X, y = _factor_data(seed=3, p=40)
    X[:, 2] = 7.0
    X[:, 9] = 0.0

    def score(X, y):  # finite scores everywhere, constants ranked first
        s = np.abs(f_classif(X, y)[0])
        s[[2, 9]] = 100.0
        s[11] = np.nan
        return s

    sel = gs.RedundancyFilter(score_func=score, k=5, max_corr=1.0).fit(X, y)
    np.testing.assert_array_equal(sel.rejected_[:2], [2, 9])
    np.testing.assert_array_equal(sel.rejected_by_[:2], [-1, -1])
    assert np.isnan(sel.rejected_corr_[:2]).all()
    assert 2 not in sel.selected_ and 9 not in sel.selected_
    with pytest.warns(UserWarning, match="kept 37 of k=38"):
        full = gs.RedundancyFilter(score_func=score, k=38, max_corr=1.0).fit(X, y)
    assert 11 not in full.selected_ and 11 not in full.rejected_  # NaN score: never examined
    assert len(full.selected_) == 37


def test_filter_to_frame_explains_every_rejection():
    X, y = _factor_data(seed=4, p=80)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(80)])
    sel = gs.RedundancyFilter(score_func="fisher", k=6, max_corr=0.6).fit(frame, y)
    table = sel.to_frame()
    assert list(table["rank"]) == sorted(table["rank"])
    assert table["kept"].sum() == 6
    for row in table[~table["kept"]].itertuples():
        r = _abs_corr(frame[row.feature], frame[row.correlated_with])
        assert r > 0.6 and r == pytest.approx(row.abs_corr, rel=1e-10)
    assert list(sel.get_feature_names_out()) == sorted(table.loc[table["kept"], "feature"], key=lambda s: int(s[1:]))


# --------------------------------------------------------------------------------------------
# MRMR
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("redundancy", ["pearson", "mi"])
@pytest.mark.parametrize("scheme", ["difference", "quotient"])
def test_mrmr_equals_direct_loop(redundancy, scheme):
    X, y = _factor_data(seed=5, n=50, p=60)
    X[:, 3] = 1.0  # constant: NaN relevance, never chosen
    X[:, 10] = np.round(X[:, 10])  # an integer feature with more categories than bins
    # an F-statistic of ~10 would drown |r| in the difference: use a relevance on the same scale
    relevance = "mi" if scheme == "difference" else "anova"
    sel = gs.MRMR(k=12, relevance=relevance, redundancy=redundancy, scheme=scheme).fit(X, y)
    rel = gs.score(X, y, method=relevance).scores
    np.testing.assert_allclose(sel.relevance_, rel, rtol=1e-12, equal_nan=True)
    chosen, red, crit = _reference_mrmr(X, rel, 12, redundancy, scheme)
    np.testing.assert_array_equal(sel.selected_, chosen)
    np.testing.assert_allclose(sel.selected_redundancy_, red, rtol=1e-9, equal_nan=True)
    np.testing.assert_allclose(sel.selected_scores_, crit, rtol=1e-9)
    np.testing.assert_allclose(sel.selected_relevance_, rel[chosen], rtol=0)
    assert 3 not in sel.selected_
    assert sel.get_support().sum() == 12


@pytest.mark.parametrize("redundancy", ["pearson", "mi"])
def test_mrmr_sparse_equals_dense(redundancy):
    X, y = _sparse_counts(seed=6)
    ref = gs.MRMR(k=15, relevance="anova", redundancy=redundancy, scheme="quotient").fit(X, y)
    chosen, red, _ = _reference_mrmr(X, ref.relevance_, 15, redundancy, "quotient")
    np.testing.assert_array_equal(ref.selected_, chosen)
    np.testing.assert_allclose(ref.selected_redundancy_, red, rtol=1e-9, equal_nan=True)
    for fmt in (sp.csr_matrix, sp.csc_matrix):
        sel = gs.MRMR(k=15, relevance="anova", redundancy=redundancy, scheme="quotient").fit(fmt(X), y)
        np.testing.assert_array_equal(sel.selected_, ref.selected_)
        np.testing.assert_allclose(sel.selected_redundancy_, ref.selected_redundancy_, rtol=1e-9, equal_nan=True)


def test_mrmr_layout_dtype_and_offset_do_not_change_the_result():
    X, y = _factor_data(seed=7, n=70, p=90)
    ref = gs.MRMR(k=10, relevance="anova", scheme="quotient").fit(X, y)
    fortran = gs.MRMR(k=10, relevance="anova", scheme="quotient").fit(np.asfortranarray(X), y)
    np.testing.assert_array_equal(fortran.selected_, ref.selected_)
    np.testing.assert_allclose(fortran.selected_redundancy_, ref.selected_redundancy_, rtol=1e-12, equal_nan=True)
    # a large common offset: correlations must still come out right (the columns are centred)
    shifted = X + 1e9
    far = gs.MRMR(k=10, relevance="anova", scheme="quotient").fit(shifted, y)
    chosen, red, _ = _reference_mrmr(shifted, far.relevance_, 10, "pearson", "quotient")
    np.testing.assert_array_equal(far.selected_, chosen)
    np.testing.assert_allclose(far.selected_redundancy_, red, rtol=1e-6, equal_nan=True)
    single = gs.MRMR(k=10, relevance="anova", scheme="quotient").fit(X.astype(np.float32), y)
    chosen, red, _ = _reference_mrmr(X.astype(np.float32), single.relevance_, 10, "pearson", "quotient")
    np.testing.assert_array_equal(single.selected_, chosen)
    np.testing.assert_allclose(single.selected_redundancy_, red, rtol=1e-9, equal_nan=True)


def _mrmr_selection_order(X, y, k):
    mrmr = pytest.importorskip("mrmr", reason="mrmr_selection (pip install mrmr-selection) is the peer reference")
    frame = pd.DataFrame(np.asarray(X, dtype=np.float64), columns=[f"f{j}" for j in range(X.shape[1])])
    names = mrmr.mrmr_classif(frame, pd.Series(y), K=k, n_jobs=1, show_progress=False)
    return [int(s[1:]) for s in names]


def test_mrmr_matches_mrmr_selection():
    X, y = _factor_data(seed=8, n=90, p=400)
    sel = gs.MRMR(k=20, relevance="anova", redundancy="pearson", scheme="quotient").fit(X, y)
    chosen = _reference_mrmr(X, sel.relevance_, 20, "pearson", "quotient")[0]
    np.testing.assert_array_equal(sel.selected_, chosen)
    assert sel.selected_.tolist() == _mrmr_selection_order(X, y, 20)


# --------------------------------------------------------------------------------------------
# real data
# --------------------------------------------------------------------------------------------

def test_real_dense_filter_and_mrmr_against_references():
    X, y, _ = load_shared("ALLAML")
    X = X[:, :1500]
    sel = gs.RedundancyFilter(score_func="fisher", k=20, max_corr=0.6).fit(X, y)
    kept, rejected, by, corr = _reference_filter(X, sel.ranking_, sel.scores_, 20, 0.6)
    np.testing.assert_array_equal(sel.selected_, kept)
    np.testing.assert_array_equal(sel.rejected_by_, by)
    np.testing.assert_allclose(sel.rejected_corr_, corr, rtol=1e-9)
    R = np.abs(np.corrcoef(X[:, sel.selected_].T))
    assert (R[np.triu_indices(20, 1)] <= 0.6).all()
    mr = gs.MRMR(k=10, relevance="anova", scheme="quotient").fit(X, y)
    assert mr.selected_.tolist() == _reference_mrmr(X, mr.relevance_, 10, "pearson", "quotient")[0].tolist()
    assert mr.selected_.tolist() == _mrmr_selection_order(X, y, 10)


def test_real_sparse_filter_and_mrmr():
    X, y, _ = load_shared("dorothea_train")  # 800 x 100,000 binary, many constant features
    sel = gs.RedundancyFilter(score_func="fisher", k=15, max_corr=0.5).fit(X, y)
    examined = np.concatenate([sel.selected_, sel.rejected_])
    D = X[:, np.sort(examined)].toarray()
    local = {j: i for i, j in enumerate(np.sort(examined))}
    kept, rejected, by, corr = _reference_filter(D, [local[j] for j in sel.ranking_[:len(examined)]],
                                                 sel.scores_[np.sort(examined)], 15, 0.5)
    back = np.sort(examined)
    np.testing.assert_array_equal(sel.selected_, back[kept])
    np.testing.assert_array_equal(sel.rejected_, back[rejected])
    np.testing.assert_array_equal(sel.rejected_by_, np.where(np.array(by) < 0, -1, back[np.maximum(by, 0)]))
    assert len(sel.selected_) == 15
    sub = X[:, :3000]
    mr = gs.MRMR(k=8, relevance="anova", redundancy="pearson", scheme="difference", min_redundancy=0).fit(sub, y)
    chosen, red, _ = _reference_mrmr(sub.toarray(), mr.relevance_, 8, "pearson", "difference", floor=0.0)
    np.testing.assert_array_equal(mr.selected_, chosen)
    np.testing.assert_allclose(mr.selected_redundancy_, red, rtol=1e-9, equal_nan=True)


# --------------------------------------------------------------------------------------------
# parameters and pipelines
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("selector, match", [
    (gs.RedundancyFilter(k=31),
     r"The 'k' parameter of RedundancyFilter must be an int in \[1, n_features\] \(n_features = 30\)"),
    (gs.RedundancyFilter(k=0), "The 'k' parameter of RedundancyFilter"),
    (gs.RedundancyFilter(max_corr=1.5), r"The 'max_corr' parameter of RedundancyFilter must be a number in \[0, 1\]"),
    (gs.RedundancyFilter(max_corr=-0.1), "The 'max_corr' parameter"),
    (gs.RedundancyFilter(max_corr="0.5"), "The 'max_corr' parameter"),
    (gs.RedundancyFilter(score_func="nope"), "The 'score_func' parameter of RedundancyFilter"),
    (gs.RedundancyFilter(method_options=[1]), "The 'method_options' parameter of RedundancyFilter"),
    (gs.MRMR(k=31), r"The 'k' parameter of MRMR must be an int in \[1, n_features\] \(n_features = 30\)"),
    (gs.MRMR(k=2.0), "The 'k' parameter of MRMR"),
    (gs.MRMR(scheme="ratio"), "The 'scheme' parameter of MRMR must be 'difference' or 'quotient'"),
    (gs.MRMR(redundancy="spearman"), "The 'redundancy' parameter of MRMR"),
    (gs.MRMR(scheme="quotient", min_redundancy=0), "The 'min_redundancy' parameter of MRMR must be > 0"),
    (gs.MRMR(min_redundancy=-1), "The 'min_redundancy' parameter"),
    (gs.MRMR(relevance="nope"), "The 'relevance' parameter of MRMR"),
    (gs.MRMR(method_options=3), "The 'method_options' parameter of MRMR"),
    (gs.MRMR(redundancy="mi", bins=1), "The 'bins' parameter of MRMR"),
])
def test_bad_parameters(selector, match):
    X, y = _factor_data(seed=9, p=30)
    with pytest.raises(ValueError, match=match):
        selector.fit(X, y)


def test_relevance_options_reach_the_method():
    X, y = _factor_data(seed=10, p=30)
    with pytest.raises(TypeError, match="unknown option"):
        gs.MRMR(k=3, relevance="anova", method_options={"bins": 3}).fit(X, y)
    a = gs.MRMR(k=3, relevance="mi", method_options={"bins": 3}).fit(X, y)
    np.testing.assert_allclose(a.relevance_, gs.score(X, y, method="mi", method_options={"bins": 3}).scores)


def test_pipeline_names_and_sparse_output():
    X, y = _sparse_counts(seed=11)
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(X.shape[1])])
    for selector in (gs.RedundancyFilter(k=5), gs.MRMR(k=5)):
        model = make_pipeline(selector, LogisticRegression()).fit(frame, y)
        names = model[0].get_feature_names_out()
        assert list(names) == [f"gene{j}" for j in np.sort(model[0].selected_)]
        out = selector.fit(sp.csr_matrix(X), y).transform(sp.csr_matrix(X))
        assert sp.issparse(out) and out.shape == (X.shape[0], 5)
