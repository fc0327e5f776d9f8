"""Numbers at the edges of float64: a score is right, or a named error says why it cannot be."""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from plain_methods import plain

import genosift as gs
from genosift.io import Dataset, write_store

METHODS = plain(gs.methods().index)
NAMED = ("too large to square", "too large to add up", "too close together to square", "needs non-negative counts")


def _data():
    rng = np.random.RandomState(0)
    n = 40
    y = np.arange(n) % 2
    base = rng.normal(size=(n, 3))
    base[:, 0] += y
    return base / np.abs(base).max(), y  # in [-1, 1]


@pytest.mark.parametrize("scale", [1.5e308, 1e-300], ids=["huge", "tiny"])
@pytest.mark.parametrize("method", METHODS)
def test_every_method_at_the_edges_of_float64(method, scale):
    """Values up to +-1.5e308 and down to 1e-300: the scores of the same data at unit scale (every
    method but chi2_counts is scale-invariant), or one of the named errors."""
    unit, y = _data()
    if method == "chi2_counts":  # counts or frequencies: non-negative
        unit = np.abs(unit)
    X = unit * scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = gs.score(unit, y, method=method)
        for form in (X, sp.csr_matrix(X)):
            try:
                got = gs.score(form, y, method=method)
            except ValueError as exc:
                assert any(text in str(exc) for text in NAMED), str(exc)
                assert "'x0'" in str(exc)  # names the features
                continue
            # chi-square of counts grows with the counts (sklearn.feature_selection.chi2 does too)
            want = ref.scores * (scale if method == "chi2_counts" else 1.0)
            np.testing.assert_allclose(got.scores, want, rtol=1e-9, atol=0, err_msg=method)
            assert np.isnan(got.scores).sum() == np.isnan(ref.scores).sum()


def test_scale_free_methods_rescale_instead_of_refusing():
    unit, y = _data()
    free = gs.methods().query("scale_free").index.tolist()
    assert set(free) == {"dcor", "relieff", "linear"}
    for method in free:  # exact: a power-of-two rescaling gives the very same arithmetic
        X = np.ldexp(unit, 1020)
        np.testing.assert_array_equal(gs.score(X, y, method=method).scores,
                                      gs.score(np.ldexp(X, -1020), y, method=method).scores)


BIG = 2**62


def _big_forms():
    n = 206
    y = np.arange(n) % 2
    X = np.zeros((n, 2), dtype=np.int64)
    X[:, 0] = BIG + np.arange(n) % 103 + 50 * y
    X[:, 1] = np.arange(n) % 7
    frame = pd.DataFrame(X, columns=["big", "small"])
    return y, {"int64": X, "uint64": X.astype(np.uint64), "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X),
               "frame": frame, "stream": ((X[a:a + 50], y[a:a + 50]) for a in range(0, n, 50))}


@pytest.mark.parametrize("method", METHODS)
def test_integers_beyond_2_53_are_refused_in_every_form(method):
    y, forms = _big_forms()
    for name, X in forms.items():
        if name == "stream" and gs.methods().loc[method, "streaming"] != "rows":
            continue
        with pytest.raises(ValueError, match=r"integers beyond \+-2\*\*53 .* feature\(s\) '(big|x0)'"):
            gs.score(X, None if name == "stream" else y, method=method)


def test_integers_up_to_2_53_score_exactly_and_offsets_fix_the_rest():
    y, forms = _big_forms()
    X = forms["int64"]
    shifted = X - X.min(axis=0)  # exact in int64: what the message tells the user to do
    exact = shifted.astype(np.float64)
    assert np.array_equal(exact.astype(np.int64), shifted)
    got = gs.score(shifted, y, method="welch")
    np.testing.assert_array_equal(got.statistic, gs.score(exact, y, method="welch").statistic)
    assert got.statistic[0] > 10  # the class difference of 50 is seen
    edge = np.array([[2**53], [2**53 - 1], [-2**53], [0]] * 3, dtype=np.int64)
    gs.score(edge, np.arange(12) % 2)  # at the limit every integer is still a float64


def test_stores_refuse_integers_beyond_2_53(tmp_path):
    y, forms = _big_forms()
    X = forms["int64"]
    ds = Dataset(X, np.array([f"s{i}" for i in range(len(y))]), np.array(["big", "small"]))
    with pytest.raises(ValueError, match=r"integers beyond \+-2\*\*53 .* 'big'"):
        write_store(ds, tmp_path / "d.gs.h5ad")
    assert list(tmp_path.iterdir()) == []
