"""One ranking whatever the form of the data: dense, CSR, CSC, DataFrame, chunk stream, store
and Dask copies of a real k-mer data set pick the same top-k features.

The last bits of a score depend on the order of the arithmetic, which differs between forms;
scores that agree to about ten significant digits rank as ties (lower index first), so that a
difference of a few units in the last place never reorders features.
"""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.io import Dataset, write_store
from genosift.scores import TIE_BITS, rank_order, tie_key

from conftest import require_shared

ROWS = [m for m in gs.methods().index if gs.methods().loc[m, "streaming"] == "rows"]
KS = (10, 1000, 10000)


@pytest.fixture(scope="module")
def camda(tmp_path_factory):
    folder = require_shared("camda_pseudomonas")
    X = sp.load_npz(folder / "X.sparse.npz").tocsr()
    y = np.loadtxt(folder / "y.txt", dtype=str)
    store = write_store(Dataset(X, np.array([f"s{i}" for i in range(X.shape[0])]),
                                np.array([f"k{j}" for j in range(X.shape[1])]),
                                pd.DataFrame({"y": y}, index=[f"s{i}" for i in range(X.shape[0])])),
                        tmp_path_factory.mktemp("ties") / "camda.gs.h5ad")
    return X, y, store


def _forms(X, y, method):
    D = X.toarray()
    yield "dense", gs.score(D, y, method=method)
    yield "CSC", gs.score(X.tocsc(), y, method=method)
    yield "Fortran", gs.score(np.asfortranarray(D), y, method=method)
    yield "DataFrame", gs.score(pd.DataFrame(D, columns=[f"k{j}" for j in range(D.shape[1])]), y, method=method)
    for rows in (37, 200):
        yield f"stream of {rows}", gs.score(((X[a:a + rows], y[a:a + rows]) for a in range(0, len(y), rows)),
                                            method=method)


@pytest.mark.parametrize("method", ROWS)
def test_top_k_is_the_same_in_every_form(camda, method):
    X, y, store = camda
    ref = gs.score(X, y, method=method)
    for name, got in _forms(X, y, method):
        for k in KS:
            assert set(got.ranking[:k]) == set(ref.ranking[:k]), (name, k)
        np.testing.assert_allclose(got.scores, ref.scores, rtol=1e-9, atol=1e-12, err_msg=name)
    for budget in (1 << 20, None):
        got = gs.score(store, "y", method=method, chunk_bytes=budget)
        for k in KS:
            assert set(got.ranking[:k]) == set(ref.ranking[:k]), ("store", budget, k)


def test_top_k_on_dask(camda):
    da = pytest.importorskip("dask.array")
    X, y, _ = camda
    D = X.toarray()
    for method in ("fisher", "welch", "auc"):
        ref = gs.score(X, y, method=method)
        got = gs.score(da.from_array(D, chunks=(100, 20000)), y, method=method, scheduler="sync")
        for k in KS:
            assert set(got.ranking[:k]) == set(ref.ranking[:k]), (method, k)


def test_tie_key_rounds_to_nearest_and_keeps_order():
    x = np.array([0.1875, np.nextafter(0.1875, 0), np.nextafter(0.1875, 1), -0.1875, np.nextafter(-0.1875, 0)])
    assert np.all(tie_key(x)[:3] == 0.1875) and np.all(tie_key(x)[3:] == -0.1875)
    rng = np.random.RandomState(0)
    v = np.sort(np.concatenate([rng.normal(size=5000) * 10.0 ** rng.randint(-300, 300, 5000), [0.0, np.inf, -np.inf]]))
    k = tie_key(v)
    assert (np.diff(k) >= 0).all()  # monotone: rounding never swaps two values
    assert np.isnan(tie_key([np.nan])).all()
    close = 1.0 + np.arange(4) * 2.0 ** -50  # differ in the last bits only
    assert rank_order(close[::-1]).tolist() == [0, 1, 2, 3]  # ties: lower index first
    apart = 1.0 + np.arange(4) * 2.0 ** -(TIE_BITS - 4)  # differ within the kept bits
    assert rank_order(apart).tolist() == [3, 2, 1, 0]
