"""Distribution and dependence scores: wasserstein, jensen_shannon, dcor.

References are computed here independently: scipy's per-class Wasserstein distance and
Jensen-Shannon distance (on histograms built with numpy), a direct O(n^2) double-centred
distance-covariance V-statistic, and the ``dcor`` package when it is installed.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats as ss
from scipy.spatial.distance import jensenshannon

import genosift as gs

from conftest import load_shared

REAL = ["golub", "GLIOMA", "colon", "TOX_171"]
#: columns of each real set compared one by one against the references (keeps the file fast)
COLS = 150


def _real(name, cols=COLS):
    X, y, _ = load_shared(name)
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    step = max(1, X.shape[1] // cols)
    return np.asarray(X[:, ::step][:, :cols], dtype=np.float64), np.asarray(y)


def _u(x):
    """The CDF transform, written from its definition: (average rank - 1/2) / n."""
    return (ss.rankdata(x) - 0.5) / x.shape[0]


def _class_weighted(x, y, dist):
    return sum(np.mean(y == c) * dist(x, x[y == c]) for c in np.unique(y))


def _dcor_ref(x, dy):
    """Distance correlation from the n x n double-centred matrices (V-statistic)."""
    def centre(d):
        return d - d.mean(axis=0) - d.mean(axis=1)[:, None] + d.mean()

    a, b = centre(np.abs(x[:, None] - x[None, :])), centre(dy)
    dcov2, dvx, dvy = (a * b).mean(), (a * a).mean(), (b * b).mean()
    return np.sqrt(max(dcov2, 0.0) / np.sqrt(dvx * dvy))


def _abs_dist(y):
    y = np.asarray(y, dtype=np.float64)
    return np.abs(y[:, None] - y[None, :])


def _discrete_dist(y):
    return (y[:, None] != y[None, :]).astype(np.float64)


# --------------------------------------------------------------------------------------------
# wasserstein
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("normalize", [True, False])
def test_wasserstein_matches_scipy_per_class(name, normalize):
    X, y = _real(name)
    res = gs.score(X, y, method="wasserstein", method_options={"normalize": normalize})
    ref = np.array([_class_weighted(_u(x) if normalize else x, y, ss.wasserstein_distance) for x in X.T])
    np.testing.assert_allclose(res.statistic, ref, rtol=1e-11, atol=1e-15)
    np.testing.assert_array_equal(res.scores, res.statistic)
    assert res.method_options == {"normalize": normalize}


def test_wasserstein_two_classes_is_scaled_distance_between_classes():
    X, y = _real("golub", 40)
    res = gs.score(X, y, method="wasserstein", method_options={"normalize": False})
    a, b = np.unique(y)
    p0 = np.mean(y == a)
    ref = [2 * p0 * (1 - p0) * ss.wasserstein_distance(x[y == a], x[y == b]) for x in X.T]
    np.testing.assert_allclose(res.statistic, ref, rtol=1e-11)


def test_wasserstein_normalized_is_invariant_to_monotone_maps_and_sign():
    X, y = _real("colon", 60)  # discrete {-2..2}: many ties
    ref = gs.score(X, y, method="wasserstein").statistic
    for Z in (np.exp(X), 3.0 * X + 7.0, -X):
        np.testing.assert_allclose(gs.score(Z, y, method="wasserstein").statistic, ref, rtol=1e-12)
    raw = gs.score(X, y, method="wasserstein", method_options={"normalize": False}).statistic
    np.testing.assert_allclose(gs.score(10 * X, y, method="wasserstein", method_options={"normalize": False}).statistic,
                               10 * raw, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# jensen_shannon
# --------------------------------------------------------------------------------------------

def _js_ref(x, y, bins):
    u = _u(x)
    h = np.histogram(u, bins=bins, range=(0.0, 1.0))[0]
    return sum(np.mean(y == c) * jensenshannon(h, np.histogram(u[y == c], bins=bins, range=(0.0, 1.0))[0],
                                               base=2) ** 2 for c in np.unique(y))


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("bins", ["sturges", 4, 10])
def test_jensen_shannon_matches_scipy_on_histograms(name, bins):
    X, y = _real(name)
    n_bins = int(np.ceil(np.log2(X.shape[0]))) + 1 if bins == "sturges" else bins
    res = gs.score(X, y, method="jensen_shannon", method_options={"bins": bins})
    ref = np.array([_js_ref(x, y, n_bins) for x in X.T])
    np.testing.assert_allclose(res.statistic, ref, rtol=1e-10, atol=1e-14)
    assert ((res.statistic >= 0) & (res.statistic <= 1)).all()


def test_jensen_shannon_sturges_bins():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 19)
    X = rng.standard_normal((38, 5))
    # 38 samples: ceil(log2 38) + 1 = 7 bins
    np.testing.assert_allclose(gs.score(X, y, method="jensen_shannon").statistic,
                               gs.score(X, y, method="jensen_shannon", method_options={"bins": 7}).statistic, rtol=0)


# --------------------------------------------------------------------------------------------
# dcor
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REAL)
def test_dcor_matches_direct_formula_numeric_target(name):
    X, _ = _real(name, 41)
    t, X = X[:, 0], X[:, 1:]  # a real, measured numeric target: one feature against the others
    # colon's values are integers -2..2, which 'auto' would read as class labels
    res = gs.score(X, t, method="dcor", method_options={"y_metric": "absolute"})
    dy = _abs_dist(t)
    ref = np.array([_dcor_ref(x, dy) for x in X.T])
    np.testing.assert_allclose(res.statistic, ref, rtol=1e-9, atol=1e-12)
    if name != "colon":
        np.testing.assert_array_equal(gs.score(X, t, method="dcor").statistic, res.statistic)


@pytest.mark.parametrize("name", REAL)
def test_dcor_matches_direct_formula_labels(name):
    X, y = _real(name, 40)
    res = gs.score(X, y, method="dcor")
    dy = _discrete_dist(y)
    ref = np.array([_dcor_ref(x, dy) for x in X.T])
    np.testing.assert_allclose(res.statistic, ref, rtol=1e-9, atol=1e-12)
    assert res.method_options == {"y_metric": "auto"}


def test_dcor_ties_in_x_and_y_large_n():
    rng = np.random.default_rng(7)
    n = 1500
    t = rng.integers(0, 12, n).astype(np.float64)  # heavy ties in y
    X = np.column_stack([rng.integers(0, 4, n) + 0.1 * t, rng.poisson(2.0, n), np.round(rng.standard_normal(n), 1)])
    res = gs.score(X, t, method="dcor", method_options={"y_metric": "absolute"})
    dy = _abs_dist(t)
    np.testing.assert_allclose(res.statistic, [_dcor_ref(x, dy) for x in X.T], rtol=1e-9)
    res = gs.score(X, t, method="dcor", method_options={"y_metric": "discrete"})
    dy = _discrete_dist(t)
    np.testing.assert_allclose(res.statistic, [_dcor_ref(x, dy) for x in X.T], rtol=1e-9)


def test_dcor_auto_metric_and_binary_agreement():
    X, y = _real("TOX_171", 20)
    codes = np.unique(y, return_inverse=True)[1]
    # integer labels 0..3 look like classes: 'auto' is the discrete metric
    auto = gs.score(X, codes, method="dcor").statistic
    discrete = gs.score(X, codes, method="dcor", method_options={"y_metric": "discrete"})
    np.testing.assert_allclose(auto, discrete.statistic, rtol=0)
    absolute = gs.score(X, codes, method="dcor", method_options={"y_metric": "absolute"}).statistic
    np.testing.assert_allclose(absolute, [_dcor_ref(x, _abs_dist(codes)) for x in X.T], rtol=1e-9)
    assert not np.allclose(auto, absolute)
    # two classes: |y_i - y_j| and 1[y_i != y_j] are proportional, so both metrics agree
    b = (codes >= 2).astype(int)
    np.testing.assert_allclose(gs.score(X, b, method="dcor", method_options={"y_metric": "absolute"}).statistic,
                               gs.score(X, b, method="dcor", method_options={"y_metric": "discrete"}).statistic,
                               rtol=1e-10)


def test_dcor_is_invariant_to_shift_scale_and_sign():
    X, _ = _real("golub", 21)
    t, X = X[:, 0], X[:, 1:]
    ref = gs.score(X, t, method="dcor").statistic
    np.testing.assert_allclose(gs.score(-1e6 * X + 3e7, 1e-3 * t + 5, method="dcor").statistic, ref, rtol=1e-9)


@pytest.mark.slow  # the dcor package compiles its kernels on first use: about 17 s of CI per job
@pytest.mark.parametrize("name", ["golub", "TOX_171"])
def test_dcor_matches_dcor_package(name):
    dcor_pkg = pytest.importorskip("dcor", reason="the optional `dcor` package is not installed")
    X, y = _real(name, 30)
    t = X[:, 0]
    res = gs.score(X[:, 1:], t, method="dcor")
    ref = [dcor_pkg.distance_correlation(x, t) for x in X[:, 1:].T]
    np.testing.assert_allclose(res.statistic, ref, rtol=1e-8, atol=1e-12)
    # labels: the discrete metric is the Euclidean distance of one-hot codes, up to a factor
    onehot = (y[:, None] == np.unique(y)[None, :]).astype(np.float64)
    res = gs.score(X, y, method="dcor")
    ref = [dcor_pkg.distance_correlation(x, onehot) for x in X.T]
    np.testing.assert_allclose(res.statistic, ref, rtol=1e-8, atol=1e-12)


# --------------------------------------------------------------------------------------------
# all three: sanity, edge cases, errors
# --------------------------------------------------------------------------------------------

def test_perfect_separator_beats_noise():
    rng = np.random.default_rng(3)
    n = 400
    y = rng.integers(0, 2, n)
    X = np.column_stack([y + 0.1 * rng.random(n), rng.standard_normal(n), rng.standard_normal(n), y.astype(float)])
    p0 = np.mean(y == 0)
    w = gs.score(X, y, method="wasserstein").statistic
    # perfectly separated classes: W1(u | 0, u | 1) = 1/2, so the score is 2 p0 p1 / 2
    np.testing.assert_allclose(w[[0, 3]], p0 * (1 - p0), rtol=1e-12)
    raw = gs.score(X, y, method="wasserstein", method_options={"normalize": False}).statistic
    np.testing.assert_allclose(raw[3], 2 * p0 * (1 - p0), rtol=1e-12)
    d = gs.score(X, y, method="dcor").statistic
    assert d[3] == pytest.approx(1.0, abs=1e-12)
    for method in ("wasserstein", "jensen_shannon", "dcor"):
        s = gs.score(X, y, method=method).scores
        assert s[[1, 2]].max() < 0.2 * s[[0, 3]].min(), method
        assert set(gs.score(X, y, method=method).ranking[:2]) == {0, 3}


def test_independent_noise_scores_near_zero():
    rng = np.random.default_rng(4)
    n = 5000
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 4))
    assert gs.score(X, y, method="wasserstein").scores.max() < 0.02
    assert gs.score(X, y, method="jensen_shannon").scores.max() < 0.01
    assert gs.score(X, y, method="dcor").scores.max() < 0.06
    assert gs.score(X, rng.standard_normal(n), method="dcor").scores.max() < 0.06


@pytest.mark.parametrize("method", ["wasserstein", "jensen_shannon", "dcor"])
def test_no_spread_is_nan_and_two_values_are_scored(method):
    y = np.array([0, 0, 0, 1, 1, 1])
    X = np.array([[5.0, 0, 1], [5, 0, 1], [5, 1, 1], [5, 1, 2], [5, 1, 2], [5, 1, 2]])
    res = gs.score(X, y, method=method)
    assert np.isnan(res.scores[0])
    assert np.isfinite(res.scores[1:]).all() and (res.scores[1:] > 0).all()
    assert res.scores[2] > res.scores[1]  # column 2 separates the classes exactly


@pytest.mark.parametrize("method", ["wasserstein", "jensen_shannon", "dcor"])
def test_many_classes(method):
    X, y = _real("GLIOMA", 10)
    res = gs.score(X, y, method=method)
    assert np.isfinite(res.scores).all() and (res.scores >= 0).all()
    assert list(res.classes) == sorted(set(y))


def test_bad_options_are_clear_errors():
    X, y = _real("golub", 5)
    for bins in (1, 0, 2.5, "auto", True):
        with pytest.raises(ValueError, match="The 'bins' option of method 'jensen_shannon' must be one of 'sturges' "
                                             "or an int >= 2"):
            gs.score(X, y, method="jensen_shannon", method_options={"bins": bins})
    with pytest.raises(ValueError, match="The 'normalize' option of method 'wasserstein' must be True or False"):
        gs.score(X, y, method="wasserstein", method_options={"normalize": "yes"})
    with pytest.raises(ValueError, match="The 'y_metric' option of method 'dcor' must be one of 'auto', 'absolute', "
                                         "'discrete'. Got 'euclidean'"):
        gs.score(X, y, method="dcor", method_options={"y_metric": "euclidean"})
    with pytest.raises(ValueError, match="needs a numeric y.*'discrete'"):
        gs.score(X, y, method="dcor", method_options={"y_metric": "absolute"})
    with pytest.raises(ValueError, match="needs class labels.*continuous"):
        gs.score(X, np.linspace(0.5, 3.3, X.shape[0]), method="dcor", method_options={"y_metric": "discrete"})
    with pytest.raises(ValueError, match="continuous"):
        gs.score(X, np.linspace(0.5, 3.3, X.shape[0]), method="wasserstein")


def test_methods_table_lists_the_options():
    table = gs.methods()
    assert table.loc["wasserstein", "options"] == "normalize=True"
    assert table.loc["jensen_shannon", "options"] == "bins='sturges'"
    assert table.loc["dcor", "options"] == "y_metric='auto'"
    assert table.loc["dcor", "task"] == "any"
