"""Labels: the same classes and codes whatever the chunking, and clear words for odd labels."""
import warnings

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.io import Dataset, write_store

ROWS = [m for m in gs.methods().index if gs.methods().loc[m, "streaming"] == "rows"]
SUPERVISED = [m for m in ROWS if gs.methods().loc[m, "task"] != "unsupervised"]


def _data(n=30, sort=True):
    rng = np.random.RandomState(3)
    y = np.where(np.arange(n) % 3 == 0, "resistant", "susceptible")
    if sort:  # sorted rows: the first chunks hold one class only
        y = np.sort(y)
    X = rng.normal(size=(n, 4)) + (y == "resistant")[:, None] * np.array([1.5, 0, -1, 0])
    return np.abs(X), y  # non-negative, so that chi2_counts takes it too


@pytest.mark.parametrize("method", SUPERVISED)
@pytest.mark.parametrize("rows", [1, 2, 7])
def test_string_labels_do_not_depend_on_chunks(method, rows):
    X, y = _data()
    ref = gs.score(X, y, method=method)
    stream = ((X[a:a + rows], y[a:a + rows]) for a in range(0, len(y), rows))
    got = gs.score(stream, method=method)
    np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(got.ranking, ref.ranking)
    selector = gs.SelectKBest(score_func=method, k=2)
    for a in range(0, len(y), rows):
        selector.partial_fit(X[a:a + rows], y[a:a + rows])
    np.testing.assert_allclose(selector.scores_, ref.scores, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("method", SUPERVISED)
def test_string_labels_in_a_store_with_tiny_chunks(method, tmp_path):
    X, y = _data()
    ids = np.array([f"s{i}" for i in range(len(y))])
    path = write_store(Dataset(X, ids, np.array([f"g{j}" for j in range(4)]),
                               pd.DataFrame({"label": y}, index=ids)), tmp_path / "d.gs.h5ad")
    ref = gs.score(X, y, method=method)
    for budget in (64, 200, None):  # down to one row per chunk
        got = gs.io.score_store(path, "label", method=method, chunk_bytes=budget)
        np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-12, atol=1e-14)


def test_pearson_codes_the_label_that_sorts_last_as_one():
    X, y = _data(sort=False)
    numeric = gs.score(X, (y == "susceptible").astype(float), method="pearson")
    for rows in (1, 5, 30):
        for order in (slice(None), slice(None, None, -1)):  # either label first
            Xo, yo = X[order], y[order]
            got = gs.score(((Xo[a:a + rows], yo[a:a + rows]) for a in range(0, len(yo), rows)), method="pearson")
            np.testing.assert_allclose(got.statistic, numeric.statistic, rtol=1e-12)


def test_chunked_labels_still_refuse_one_or_three_labels():
    X, y = _data()
    with pytest.raises(ValueError, match=r"y has 1 non-numeric labels \(\['resistant'\]\)"):
        gs.score(((X[a:a + 5], y[a:a + 5]) for a in range(0, 10, 5)), method="pearson")
    y3 = y.copy()
    y3[-1] = "intermediate"
    with pytest.raises(ValueError, match="y has at least 3 non-numeric labels"):
        gs.score(((X[a:a + 5], y3[a:a + 5]) for a in range(0, 30, 5)), method="pearson")
    selector = gs.SelectKBest(score_func="pearson", k=1).partial_fit(X[:5], y[:5])
    assert "1 non-numeric labels" in selector.pending_
