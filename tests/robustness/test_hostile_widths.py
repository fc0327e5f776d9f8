"""Integers that float64 cannot hold exactly never reach a score, whatever the form they come in.

Scores are computed in float64, exact for integers within +-2**53. Arrays, frames and stores
written by genosift refuse wider integers already; a store written by another tool (or crafted)
may hold them in its ``X`` (dense) or its values and column copy (CSR): every way of reading such
a store (row chunks, feature blocks, whole, chosen columns) must refuse them, naming the file.
"""
import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from plain_methods import plain

import genosift as gs
from genosift.io import Dataset, write_store

WIDE = 2**60 + 1


def _store(tmp_path, sparse, value=WIDE):
    rng = np.random.RandomState(0)
    X = rng.randint(0, 5, size=(20, 4)).astype(np.int64)
    X[:, 0] += 1
    X[3, 2] = 7
    ids = np.array([f"s{i}" for i in range(20)], dtype=object)
    path = write_store(Dataset(sp.csr_matrix(X) if sparse else X, ids, np.array(list("abcd"), dtype=object),
                               pd.DataFrame({"label": np.arange(20) % 2}, index=ids)),
                       tmp_path / f"w{int(sparse)}.gs.h5ad")
    with h5py.File(path, "r+") as f:
        for name in (["X/data", "var/_genosift_columns/data"] if sparse else ["X"]):
            values = f[name][...]
            assert values.dtype == np.int64
            values[values == 7] = value
            f[name][...] = values
    return path


READS = {
    "score rows (fisher)": lambda path: gs.score(gs.io.open_store(path), np.arange(20) % 2, method="fisher"),
    "score blocks (auc)": lambda path: gs.score(gs.io.open_store(path), np.arange(20) % 2, method="auc"),
    "read whole": lambda path: gs.io.read(path),
    "read columns": lambda path: gs.io.open_store(path).read_columns([2]),
    "feature blocks": lambda path: list(gs.io.open_store(path).feature_blocks(2)),
    "row chunks": lambda path: list(gs.io.open_store(path).row_chunks(5)),
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("read", list(READS))
@pytest.mark.parametrize("value", [WIDE, -WIDE, 2**53 + 1])
def test_a_store_of_integers_beyond_float64_is_refused_on_every_read(tmp_path, sparse, read, value):
    path = _store(tmp_path, sparse, value)
    with pytest.raises(ValueError, match=rf"holds the integer {value} in .*beyond \+-2\*\*53 \(9007199254740992\)"):
        READS[read](path)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_integers_at_the_edge_are_read_exactly(tmp_path, sparse):
    path = _store(tmp_path, sparse, 2**53)
    X = gs.io.read(path).X
    X = X.toarray() if sp.issparse(X) else X
    assert X[3, 2] == 2**53
    assert np.isfinite(gs.score(gs.io.open_store(path), np.arange(20) % 2, method="welch").scores[2])


METHODS = plain(m for m in gs.methods().index if gs.methods().loc[m, "streaming"] != "matrix")


@pytest.fixture(scope="module", params=["float16", ">f8", ">i4", ">u2", "<f4"])
def odd_type_stores(request, tmp_path_factory):
    """A dense and a CSR store whose values are stored in ``request.param`` (float16, big-endian),
    as another tool may write them, and the same values in memory."""
    tmp_path = tmp_path_factory.mktemp("types")
    rng = np.random.RandomState(2)
    X = rng.randint(0, 6, size=(30, 5)).astype(np.float64)
    X[:, 0] += 1
    ids = np.array([f"s{i}" for i in range(30)], dtype=object)
    stores = []
    for sparse in (False, True):
        path = write_store(Dataset(sp.csr_matrix(X) if sparse else X, ids, np.array(list("abcde"), dtype=object),
                                   pd.DataFrame({"label": np.arange(30) % 2}, index=ids)),
                           tmp_path / f"t{int(sparse)}.gs.h5ad")
        with h5py.File(path, "r+") as f:
            for name in (["X/data", "var/_genosift_columns/data"] if sparse else ["X"]):
                values, attrs = f[name][...], dict(f[name].attrs)
                del f[name]
                f.create_dataset(name, data=values.astype(request.param))
                f[name].attrs.update(attrs)
        stores.append(path)
    return request.param, X, stores


@pytest.mark.parametrize("method", METHODS)
def test_values_stored_in_any_numeric_type_score_as_in_memory(odd_type_stores, method):
    """float16 (which the compiled kernels do not take) is read as float32, other byte orders in
    the machine's own: every method scores such a store as the same values in memory."""
    kind, X, stores = odd_type_stores
    y = None if gs.methods().loc[method, "task"] == "unsupervised" else \
        (np.arange(30) % 2 if gs.methods().loc[method, "task"] != "regression" else X[:, 1] + np.arange(30) % 3)
    ref = gs.score(X, y, method=method)
    for path in stores:
        got = gs.score(gs.io.open_store(path), y, method=method)
        np.testing.assert_allclose(got.scores, ref.scores, rtol=1e-9, err_msg=f"{kind} {path.name}")
