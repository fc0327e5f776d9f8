"""``partial_fit(X, y, classes=...)`` of the streaming selectors, as scikit-learn's incremental
estimators take it: ``classes`` on the first call, the same on later calls or left out; a label
outside it, or other classes later, is an error naming them. Results equal ``fit`` on all rows,
also when the first chunks hold one class only."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.exceptions import NotFittedError

import genosift as gs


def _data(n=60, p=25, seed=0, classes=("R", "S")):
    rng = np.random.default_rng(seed)
    y = np.asarray(classes)[np.arange(n) % len(classes)]
    X = rng.poisson(2.0, (n, p)).astype(np.float64)
    X[y == classes[-1], :3] += 2.0
    return X, y


def _chunks_by_class(X, y, size):
    """Rows sorted by label (the first chunks hold one class only), in chunks of ``size``."""
    order = np.argsort(y, kind="stable")
    return [(X[order[a:a + size]], y[order[a:a + size]]) for a in range(0, len(y), size)]


@pytest.mark.parametrize("method", ["fisher", "anova", "welch", "snr", "fscore", "chi2_counts", "pearson"])
@pytest.mark.parametrize("every_call", [True, False])
def test_one_class_first_chunks_then_equal_to_fit(method, every_call):
    X, y = _data()
    chunks = _chunks_by_class(X, y, 12)
    assert len(np.unique(chunks[0][1])) == 1 and len(np.unique(chunks[1][1])) == 1
    sel = gs.SelectKBest(method, k=4)
    for i, (Xc, yc) in enumerate(chunks):
        sel.partial_fit(Xc, yc, classes=["S", "R"] if (every_call or i == 0) else None)
        if i == 0:  # one class so far: kept, not scored; the selector says why
            with pytest.raises(NotFittedError, match="so far cannot be scored.*(one class|1 non-numeric label)"):
                sel.get_support()
    full = gs.SelectKBest(method, k=4).fit(X, y)
    np.testing.assert_array_equal(sel.classes_, ["R", "S"])
    np.testing.assert_allclose(sel.scores_, full.scores_, rtol=1e-9, atol=1e-12)
    if full.pvalues_ is not None:
        np.testing.assert_allclose(sel.pvalues_, full.pvalues_, rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(sel.get_support(), full.get_support())


def test_scores_against_scipy_after_one_class_chunks():
    """Welch t and ANOVA F of the streamed selector against scipy on all rows."""
    X, y = _data(classes=("a", "b", "c"))
    sel = gs.SelectKBest("anova", k=3)
    for Xc, yc in _chunks_by_class(X, y, 10):
        sel.partial_fit(Xc, yc, classes=np.array(["a", "b", "c"]))
    F, p = stats.f_oneway(*(X[y == c] for c in ("a", "b", "c")))
    np.testing.assert_allclose(sel.scores_, F, rtol=1e-10)
    np.testing.assert_allclose(sel.pvalues_, p, rtol=1e-8)
    X2, y2 = _data()
    sel = gs.SelectKBest("welch", k=3)
    for Xc, yc in _chunks_by_class(X2, y2, 7):
        sel.partial_fit(sp.csr_matrix(Xc), yc, classes=["R", "S"])
    t, p = stats.ttest_ind(X2[y2 == "S"], X2[y2 == "R"], equal_var=False)
    np.testing.assert_allclose(sel.scores_, np.abs(t), rtol=1e-10)
    np.testing.assert_allclose(sel.pvalues_, p, rtol=1e-8)


def test_integer_labels_and_a_declared_class_no_row_has():
    X, y = _data(classes=(0, 1))
    sel = gs.SelectKBest("anova", k=3)
    for Xc, yc in _chunks_by_class(X, y, 15):
        sel.partial_fit(Xc, yc, classes=[0, 1, 2])  # class 2 never comes: the statistics have two
    full = gs.SelectKBest("anova", k=3).fit(X, y)
    np.testing.assert_array_equal(sel.classes_, [0, 1, 2])
    np.testing.assert_allclose(sel.scores_, full.scores_, rtol=1e-10)
    np.testing.assert_allclose(sel.pvalues_, full.pvalues_, rtol=1e-10)


def test_other_classes_on_a_later_call_name_both():
    X, y = _data()
    sel = gs.SelectKBest("welch", k=3).partial_fit(X[:10], y[:10], classes=["R", "S"])
    with pytest.raises(ValueError, match=r"classes=\['R', 'S', 'T'\] is not the same as on an earlier call .* "
                                         r"classes=\['R', 'S'\]"):
        sel.partial_fit(X[10:20], y[10:20], classes=["R", "S", "T"])
    # the refused call added nothing: the rest gives fit on the rows that were accepted
    sel.partial_fit(X[10:], y[10:], classes=["S", "R"])  # the same set, in another order
    np.testing.assert_allclose(sel.scores_, gs.SelectKBest("welch", k=3).fit(X, y).scores_, rtol=1e-10)


def test_a_label_outside_classes_is_an_error_naming_it():
    X, y = _data()
    sel = gs.SelectKBest("fisher", k=3)
    with pytest.raises(ValueError, match=r"y holds label\(s\) \['S'\] that are not among classes=\['R'\]"):
        sel.partial_fit(X[:10], y[:10], classes=["R"])
    sel = gs.SelectKBest("fisher", k=3).partial_fit(X[:10], y[:10], classes=["R", "S"])
    bad = y[10:20].copy()
    bad[3] = "T"
    with pytest.raises(ValueError, match=r"\['T'\]"):
        sel.partial_fit(X[10:20], bad)  # classes remembered from the first call
    sel.partial_fit(X[10:], y[10:])
    np.testing.assert_allclose(sel.scores_, gs.SelectKBest("fisher", k=3).fit(X, y).scores_, rtol=1e-10)


def test_classes_after_rows_without_them_and_fit_resets():
    X, y = _data()
    # declared late: accepted when the rows so far fit inside them, refused (naming them) otherwise
    sel = gs.SelectKBest("welch", k=3).partial_fit(X[:10], y[:10])
    sel.partial_fit(X[10:20], y[10:20], classes=["R", "S"])
    np.testing.assert_array_equal(sel.classes_, ["R", "S"])
    sel = gs.SelectKBest("welch", k=3).partial_fit(X[:10], y[:10])
    with pytest.raises(ValueError, match=r"label\(s\) \['S'\] outside them: give classes on the first call"):
        sel.partial_fit(X[10:20], y[10:20], classes=["R", "T"])
    sel = gs.SelectKBest("welch", k=3).partial_fit(X[:10], y[:10], classes=["R", "S"])
    sel.fit(X, y)  # a fresh fit forgets the classes of partial_fit
    assert not hasattr(sel, "classes_")
    with pytest.raises(ValueError, match="outside them"):  # fit's rows hold 'S'
        sel.partial_fit(X[:10], y[:10], classes=["R", "T"])
    pearson = gs.SelectKBest("pearson", k=3).partial_fit(X[:10], np.arange(10.0))  # a numeric target
    with pytest.raises(ValueError, match="target values are not kept"):
        pearson.partial_fit(X[10:20], np.arange(10.0), classes=[0.0, 1.0])


def test_unsupervised_method_has_no_classes():
    X, y = _data()
    with pytest.raises(ValueError, match="takes no target"):
        gs.SelectKBest("variance", k=3).partial_fit(X, None, classes=["R", "S"])
