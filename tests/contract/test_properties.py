"""Property-based tests of the scores and selectors (hypothesis).

Each property is checked on data drawn by hypothesis: a shape, a kind of values and a seed (the
values themselves come from numpy, so that a drawn case is a realistic matrix, not a handful of
hand-picked numbers), then a transform drawn by hypothesis (a permutation, an affine map, a
chunking).

Kinds of data, chosen to reach the code paths that differ:

- ``normal``: continuous values, all distinct (no ties anywhere);
- ``levels``: integers in -2..2 (discretised expression: heavy ties, categorical for chi2 / mi);
- ``counts``: Poisson counts, mostly zeros (non-negative, ties at zero);
- ``sparse``: the same counts as a CSR matrix.

Tolerances: rank, contingency and Wasserstein / Jensen-Shannon statistics are sums of exact
values (half-integer ranks, counts), so they agree to the last bits; moment-based statistics are
float sums whose order changes with the rows, so they agree to ~1e-9 relative; ``linear`` fits a
logistic regression to a gradient of 1e-10, so its weights agree to ~1e-6; ``logistic`` stops its
Newton steps at a decrement of 1e-8 (its coefficients agree to ~1e-8).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from plain_methods import plain
from scipy.stats import rankdata
from sklearn.base import clone

import genosift as gs

METHODS = sorted(m for m in gs.REGISTRY if not gs.get_method(m).kinship)  # lmm: unit/scores/test_lmm.py
ROW_METHODS = [m for m in METHODS if gs.get_method(m).streaming == "rows"]
KINDS = ("normal", "levels", "counts", "sparse")
#: rtol by method; the others use EXACT
LOOSE = {"linear": 1e-5, "relieff": 1e-9, "dcor": 1e-9, "logistic": 1e-7}
#: Methods built on merged sums over rows (moments, class sums): rtol 1e-9 for the rounding of sums
MOMENTS = set(ROW_METHODS)
EXACT = 1e-12

PROPERTY = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _rtol(method):
    return LOOSE.get(method, 1e-9 if method in MOMENTS else EXACT)


def _kinds(method):
    """Kinds of data ``method`` is defined on, and on which the property holds exactly.

    ``chi2_counts`` needs non-negative counts. ``relieff`` breaks ties in distance by sample
    index (documented), so with tied values its neighbours, and its scores, depend on the row
    order: it is checked on continuous data, where distances do not tie.
    """
    if method == "chi2_counts":
        return ("counts", "sparse")
    if method == "relieff":
        return ("normal",)
    return KINDS


def _matrix(kind, n, p, rng):
    if kind == "normal":
        return rng.normal(size=(n, p)) * rng.uniform(0.5, 20, size=p) + rng.uniform(-50, 50, size=p)
    if kind == "levels":
        return rng.integers(-2, 3, size=(n, p)).astype(np.float64)
    X = rng.poisson(0.7, size=(n, p)).astype(np.float64)
    return sp.csr_matrix(X) if kind == "sparse" else X


def _labels(spec, n, rng, n_classes):
    """A valid target for ``spec``: at least 3 samples of every class."""
    if spec.task == "unsupervised":
        return None
    if spec.task == "regression" or (spec.task == "any" and n_classes == 1):
        return rng.normal(size=n)
    k = 2 if spec.binary_only else max(2, n_classes)
    y = np.concatenate([np.arange(k).repeat(3), rng.integers(0, k, n - 3 * k)])
    return np.array(["ctl", "case", "mid", "late"])[rng.permutation(y)]


@st.composite
def problems(draw, method, kinds=None):
    """``(X, y, rng)`` valid for ``method``."""
    spec = gs.get_method(method)
    kind = draw(st.sampled_from(kinds or _kinds(method)))
    n = draw(st.integers(14, 40))
    p = draw(st.integers(1, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_classes = draw(st.integers(1, 4))
    return _matrix(kind, n, p, rng), _labels(spec, n, rng, n_classes), rng


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


def assert_same(a, b, rtol, *, columns=None):
    """Two ScoreResults agree (``b`` against ``a``'s columns ``columns``); rankings agree up to ties."""
    pick = slice(None) if columns is None else columns
    # absolute slack for values that should be 0 (a t of two equal means): rounding of O(1)
    scale = np.nanmax(np.abs(a.statistic), initial=0.0) if np.isfinite(a.statistic).any() else 0.0
    atol = 1e-3 * rtol * max(scale, 1.0)
    np.testing.assert_allclose(b.statistic, a.statistic[pick], rtol=rtol, atol=atol, equal_nan=True)
    np.testing.assert_allclose(b.scores, a.scores[pick], rtol=rtol, atol=atol, equal_nan=True)
    assert (a.pvalues is None) == (b.pvalues is None)
    if a.pvalues is not None:
        np.testing.assert_allclose(b.pvalues, a.pvalues[pick], rtol=max(rtol, 1e-7), atol=1e-13, equal_nan=True)
    # the ranking is best first with ties broken by index: compare the scores in ranking order,
    # which stay the same whichever of two tied features comes first
    np.testing.assert_allclose(b.scores[b.ranking], a.scores[a.ranking], rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------------------------
# row order
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@PROPERTY
@given(data=st.data())
def test_scores_do_not_depend_on_the_row_order(method, data):
    X, y, rng = data.draw(problems(method))
    perm = data.draw(st.permutations(range(X.shape[0])))
    ref = gs.score(X, y, method=method)
    shuffled = gs.score(X[perm], None if y is None else y[perm], method=method)
    assert_same(ref, shuffled, _rtol(method))
    assert shuffled.n_samples == ref.n_samples
    if ref.classes is not None:
        np.testing.assert_array_equal(shuffled.classes, ref.classes)


# --------------------------------------------------------------------------------------------
# column order
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@PROPERTY
@given(data=st.data())
def test_permuting_columns_permutes_the_results(method, data):
    X, y, rng = data.draw(problems(method))
    p = X.shape[1]
    perm = np.array(data.draw(st.permutations(range(p))), dtype=np.intp)
    names = np.array([f"f{j}" for j in range(p)], dtype=object)
    ref = gs.score(X, y, method=method, feature_names=names)
    moved = gs.score(X[:, perm], y, method=method, feature_names=names[perm])
    assert_same(ref, moved, _rtol(method), columns=perm)
    np.testing.assert_array_equal(moved.feature_names, names[perm])
    # the same features come out on top, by name, except among tied scores
    best = ref.scores[ref.ranking[0]]
    if np.isfinite(best) and np.sum(np.isclose(ref.scores, best, rtol=1e-6)) == 1:
        assert moved.top(1)[0] == ref.top(1)[0]


# --------------------------------------------------------------------------------------------
# transforms of a feature
# --------------------------------------------------------------------------------------------

# Each method declares in the registry the maps of a feature that leave its scores unchanged.
#: Invariant to x -> a x + b with a > 0 (as are the rank methods below: any increasing map).
AFFINE_INVARIANT = plain(m.name for m in gs.REGISTRY.values() if m.invariance == "affine")
#: Invariant to every strictly increasing map of a feature: they see only the order of its values
#: (ranks, equal-frequency bins, the CDF transform). chi2 / mi only without the categorical rule
#: (max_categories=0): an integer feature with few levels keeps its levels as categories, and
#: a x + b may stop being integer.
MONOTONE_INVARIANT = {m.name: {"max_categories": 0} if "max_categories" in m.options else {}
                      for m in gs.REGISTRY.values() if m.invariance == "monotone"}
# Not invariant, and what holds instead (tested below): variance scales by a^2 and ignores b;
# moderated_t pools the variances of all features, so a scale of one feature moves every t;
# chi2_counts reads counts (b would make them negative or non-counts) and its statistic scales by a;
# wasserstein(normalize=False) is in the feature's units, so it scales by a and ignores b.
NOT_INVARIANT = {m.name for m in gs.REGISTRY.values() if m.invariance == "none"}
#: Affine-invariant scores whose statistic is a coefficient per unit of the feature (logistic's
#: beta): under a x + b it is divided by a.
STATISTIC_PER_UNIT = {"logistic"}


def test_what_holds_instead_is_tested_for_every_method_without_invariance():
    """The methods that declare no invariance are those whose own transform tests follow."""
    # moderated_t: tests/unit/scores/test_moderated.py (one scale for all features and a shift per feature);
    # fisher_exact (presence: a value above 0): tests/unit/scores/test_exact.py (a positive scale)
    assert NOT_INVARIANT == {"variance", "chi2_counts", "moderated_t", "fisher_exact"}, (
        "a method registered with invariance='none' needs a test of what holds instead of invariance")


def _same_order(X, T):
    """True when every column of ``T`` orders (and ties) the samples as the column of ``X`` does."""
    return all(np.array_equal(rankdata(X[:, j], method="dense"), rankdata(T[:, j], method="dense"))
               for j in range(X.shape[1]))


@st.composite
def affine(draw, p):
    a = np.array(draw(st.lists(st.floats(-2, 2), min_size=p, max_size=p)))
    b = np.array(draw(st.lists(st.floats(-1e3, 1e3), min_size=p, max_size=p)))
    return 10.0**a, b


@pytest.mark.parametrize("method", AFFINE_INVARIANT + list(MONOTONE_INVARIANT))
@PROPERTY
@given(data=st.data())
def test_invariant_to_positive_affine_maps_of_a_feature(method, data):
    kinds = ("normal", "levels", "counts") if method != "relieff" else ("normal",)
    X, y, rng = data.draw(problems(method, kinds))
    a, b = data.draw(affine(X.shape[1]))
    T = a * X + b
    assume(_same_order(X, T))  # rounding of a x + b never merges two values here, but check
    options = MONOTONE_INVARIANT.get(method, {})
    rtol = {"linear": 1e-5, "logistic": 1e-6}.get(method, 1e-7)
    got = gs.score(T, y, method=method, method_options=options)
    if method in STATISTIC_PER_UNIT:
        got = replace(got, statistic=got.statistic * a)
    assert_same(gs.score(X, y, method=method, method_options=options), got, rtol)


MONOTONE_MAPS = {
    "cube": np.cbrt,
    "arctan": lambda x: np.arctan(x / 7.0),
    "sinh": lambda x: np.sinh(x / 25.0),
    "logistic": lambda x: 1.0 / (1.0 + np.exp(-x / 3.0)),
}


@pytest.mark.parametrize("method", list(MONOTONE_INVARIANT))
@PROPERTY
@given(data=st.data(), name=st.sampled_from(sorted(MONOTONE_MAPS)))
def test_rank_and_bin_scores_invariant_to_increasing_maps(method, data, name):
    X, y, rng = data.draw(problems(method, ("normal", "levels", "counts")))
    T = MONOTONE_MAPS[name](X)
    assume(_same_order(X, T))
    options = MONOTONE_INVARIANT[method]
    assert_same(gs.score(X, y, method=method, method_options=options),
                gs.score(T, y, method=method, method_options=options), 1e-12)


@PROPERTY
@given(data=st.data())
def test_signed_statistics_change_sign_when_a_feature_is_negated(data):
    method = data.draw(st.sampled_from(["welch", "snr", "pearson", "spearman", "kendall"]))
    X, y, rng = data.draw(problems(method, ("normal", "levels")))
    ref, neg = gs.score(X, y, method=method), gs.score(-X, y, method=method)
    np.testing.assert_allclose(neg.statistic, -ref.statistic, rtol=1e-9, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(neg.scores, ref.scores, rtol=1e-9, atol=1e-12, equal_nan=True)


@PROPERTY
@given(data=st.data())
def test_variance_scales_by_a_squared_and_ignores_shifts(data):
    X, y, rng = data.draw(problems("variance", ("normal", "levels", "counts")))
    a, b = data.draw(affine(X.shape[1]))
    ref, moved = gs.score(X, method="variance"), gs.score(a * X + b, method="variance")
    np.testing.assert_allclose(moved.scores, a**2 * ref.scores, rtol=1e-8, atol=1e-9 * (a**2).max())


@PROPERTY
@given(data=st.data())
def test_chi2_counts_statistic_scales_by_a(data):
    X, y, rng = data.draw(problems("chi2_counts", ("counts",)))
    a = 10.0 ** data.draw(st.floats(-2, 2))
    ref, moved = gs.score(X, y, method="chi2_counts"), gs.score(a * X, y, method="chi2_counts")
    np.testing.assert_allclose(moved.statistic, a * ref.statistic, rtol=1e-9, atol=1e-12 * a * X.sum(), equal_nan=True)


@PROPERTY
@given(data=st.data())
def test_raw_wasserstein_scales_by_a_and_ignores_shifts(data):
    X, y, rng = data.draw(problems("wasserstein", ("normal", "levels", "counts")))
    a, b = data.draw(affine(X.shape[1]))
    T = a * X + b
    assume(_same_order(X, T))
    ref, moved = (gs.score(M, y, method="wasserstein", method_options={"normalize": False}) for M in (X, T))
    np.testing.assert_allclose(moved.scores, a * ref.scores, rtol=1e-8, atol=1e-12 * a.max(), equal_nan=True)


# --------------------------------------------------------------------------------------------
# row chunks
# --------------------------------------------------------------------------------------------

@st.composite
def cuts(draw, n):
    """Chunk boundaries ``0 = c0 <= c1 <= ... <= n``: empty chunks and single rows included."""
    inner = sorted(draw(st.lists(st.integers(0, n), max_size=8)))
    return [0, *inner, n]


def _chunks(X, y, bounds, form):
    for a, b in zip(bounds[:-1], bounds[1:]):
        part = X[a:b]
        if form == "csr":
            part = sp.csr_matrix(part)
        elif form == "frame":
            import pandas as pd

            part = pd.DataFrame(_dense(part), columns=[f"f{j}" for j in range(X.shape[1])])
        yield part, None if y is None else y[a:b]


@pytest.mark.parametrize("method", ROW_METHODS)
@settings(max_examples=25, deadline=None)
@given(data=st.data(), form=st.sampled_from(["same", "csr", "frame"]))
def test_chunk_stream_equals_in_memory(method, data, form):
    X, y, rng = data.draw(problems(method))
    bounds = data.draw(cuts(X.shape[0]))
    ref = gs.score(X, y, method=method)
    if y is None:  # an unsupervised stream still yields (X, y) pairs
        stream = ((part, None) for part, _ in _chunks(X, y, bounds, form))
    else:
        stream = _chunks(X, y, bounds, form)
    assert_same(ref, gs.score(stream, method=method), 1e-9)


# --------------------------------------------------------------------------------------------
# selectors
# --------------------------------------------------------------------------------------------

SELECTORS = {
    "SelectKBest": lambda m, d: gs.SelectKBest(m, k=d.draw(st.integers(0, 9))),
    "SelectPercentile": lambda m, d: gs.SelectPercentile(m, percentile=d.draw(st.integers(0, 100))),
    "SelectFdr": lambda m, d: gs.SelectFdr(m, alpha=d.draw(st.sampled_from([0.01, 0.2, 1.0]))),
}


@pytest.mark.parametrize("selector", sorted(SELECTORS))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_partial_fit_over_any_chunking_equals_fit(selector, data):
    methods = [m for m in ROW_METHODS if selector != "SelectFdr" or gs.get_method(m).has_pvalues]
    method = data.draw(st.sampled_from(methods))
    X, y, rng = data.draw(problems(method))
    bounds = data.draw(cuts(X.shape[0]))
    bounds = [0, *[c for c in bounds[1:-1] if c > 0], X.shape[0]]  # partial_fit takes non-empty chunks
    make = SELECTORS[selector]
    full = make(method, data).fit(X, y)
    part = clone(full)
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            part.partial_fit(X[a:b], None if y is None else y[a:b])
    np.testing.assert_allclose(part.scores_, full.scores_, rtol=1e-9, atol=1e-12, equal_nan=True)
    if full.pvalues_ is not None:
        np.testing.assert_allclose(part.pvalues_, full.pvalues_, rtol=1e-7, atol=1e-13, equal_nan=True)
    keep_full, keep_part = full.get_support(), part.get_support()
    assert keep_full.sum() == keep_part.sum()
    # the same features, except where the last one kept ties (to rounding) with the first left out
    np.testing.assert_allclose(np.sort(full.scores_[keep_part]), np.sort(full.scores_[keep_full]),
                               rtol=1e-9, atol=1e-12, equal_nan=True)
    if not np.array_equal(keep_full, keep_part):
        changed = full.scores_[keep_full != keep_part]
        assert np.allclose(changed, changed[0], rtol=1e-9, atol=1e-12), "only tied features may swap"
    np.testing.assert_array_equal(part.transform(_dense(X)).shape, full.transform(_dense(X)).shape)


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_linear_weights_do_not_depend_on_a_large_offset(form):
    # found by the affine property: uncentred features 1e4 +- 1 stopped Newton-CG early (16% off)
    rng = np.random.default_rng(7)
    X = rng.poisson(0.3, size=(40, 12)).astype(np.float64)
    y = np.repeat(["a", "b"], 20)
    X[:, 0] = rng.normal(size=40) + (y == "b")
    as_form = sp.csr_matrix if form == "csr" else np.asarray
    ref = gs.score(as_form(X), y, method="linear").statistic
    for offset in (1e4, 1e5, 1e6):
        moved = X.copy()
        moved[:, 0] += offset
        np.testing.assert_allclose(gs.score(as_form(moved), y, method="linear").statistic, ref, rtol=1e-8)


def test_partial_fit_keeps_rows_it_cannot_score_yet():
    # found by the chunking property: a first chunk of one class raised in partial_fit
    from sklearn.exceptions import NotFittedError

    rng = np.random.default_rng(8)
    X, y = rng.normal(size=(30, 6)), np.repeat(["a", "b"], 15)
    sel = gs.SelectKBest("welch", k=2).partial_fit(X[:1], y[:1])
    with pytest.raises(NotFittedError, match="cannot be scored: y has only one class"):
        sel.get_support()
    sel.partial_fit(X[1:20], y[1:20]).partial_fit(X[20:], y[20:])
    full = gs.SelectKBest("welch", k=2).fit(X, y)
    np.testing.assert_allclose(sel.scores_, full.scores_, rtol=1e-12)
    np.testing.assert_array_equal(sel.get_support(), full.get_support())
    with pytest.raises(ValueError, match="needs at least 2 samples in every class"):
        gs.SelectKBest("welch", k=2).fit(X[14:17], y[14:17])  # fit still says so at once
