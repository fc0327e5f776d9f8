"""A store's memory budget holds whatever the file's own layout, and a tiny budget stays quick.

HDF5 decompresses a compressed chunk whole to read any part of it, so a store written by another
tool with one compressed chunk of hundreds of megabytes would take that chunk in memory under any
budget: such a store is refused when the budget is smaller than a chunk, with the budget that
reads it. A budget of a few bytes on a store of many samples reads at most ``ROW_CHUNKS`` row
chunks (each at most ``FLOOR_BYTES``), not one chunk per row.
"""
import subprocess
import sys

import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.io import Dataset, write_store
from genosift.io.store.access import FLOOR_BYTES, ROW_CHUNKS


def _store(tmp_path, sparse, n=400, p=30):
    rng = np.random.RandomState(0)
    X = rng.randint(0, 4, size=(n, p)).astype(np.float64)
    ids = np.array([f"s{i}" for i in range(n)], dtype=object)
    path = write_store(Dataset(sp.csr_matrix(X) if sparse else X, ids,
                               np.array([f"f{j}" for j in range(p)], dtype=object),
                               pd.DataFrame({"label": np.arange(n) % 2}, index=ids)),
                       tmp_path / f"b{int(sparse)}.gs.h5ad")
    return path, X


def _compress(path, sparse):
    """Rewrite the matrix's datasets gzip-compressed in one chunk each, as another tool might."""
    names = ["X/data", "X/indices", "var/_genosift_columns/data", "var/_genosift_columns/indices"] if sparse \
        else ["X"]
    with h5py.File(path, "r+") as f:
        for name in names:
            values, attrs = f[name][...], dict(f[name].attrs)
            del f[name]
            f.create_dataset(name, data=values, chunks=values.shape, compression="gzip")
            f[name].attrs.update(attrs)
    return max(np.prod(h5py.File(path, "r")[n].shape) * h5py.File(path, "r")[n].dtype.itemsize for n in names)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_a_compressed_chunk_larger_than_the_budget_is_refused_with_the_budget_that_reads_it(tmp_path, sparse):
    path, X = _store(tmp_path, sparse)
    need = _compress(path, sparse)
    y = np.arange(X.shape[0]) % 2
    store = gs.io.open_store(path)
    for call in (lambda: list(store.row_chunks(chunk_bytes=need // 2)),
                 lambda: list(store.feature_blocks(2, chunk_bytes=need // 2)),
                 lambda: store.read_columns([1, 3], chunk_bytes=need // 2),
                 lambda: gs.score(store, y, method="fisher", chunk_bytes=need // 2),
                 lambda: gs.score(store, y, method="auc", chunk_bytes=need // 2)):
        with pytest.raises(ValueError, match=rf"stores /(X|var)\S* compressed in HDF5 chunks of {need:,} bytes: "
                                             rf"reading any part of a chunk takes all of it in memory.*"
                                             rf"chunk_bytes={need}"):
            call()
    ref = gs.score(X, y, method="fisher")
    np.testing.assert_allclose(gs.score(store, y, method="fisher", chunk_bytes=need).scores, ref.scores, rtol=1e-12)
    run = subprocess.run([sys.executable, "-m", "genosift", "score", str(path), "--target", "label", "--method",
                          "fisher", "--chunk-bytes", str(need // 2), "-o", str(tmp_path / "out.tsv")],
                         capture_output=True, text=True)
    assert run.returncode == 1 and f"Pass --chunk-bytes {need} or more" in run.stderr, run.stderr


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_a_budget_of_one_byte_reads_a_bounded_number_of_row_chunks(tmp_path, sparse):
    path, X = _store(tmp_path, sparse, n=20_000, p=4)
    store = gs.io.open_store(path)
    ranges = store.row_ranges(chunk_bytes=1)
    total = store.nnz * store.entry_bytes
    assert len(ranges) <= 2 * ROW_CHUNKS + 1 and len(ranges) <= X.shape[0] / 4
    assert all(b > a for a, b in ranges) and ranges[0][0] == 0 and ranges[-1][1] == X.shape[0]
    entries = [int((X[a:b] != 0).sum()) if sparse else (b - a) * X.shape[1] for a, b in ranges]
    assert max(entries) * store.entry_bytes <= min(-(-total // ROW_CHUNKS), FLOOR_BYTES)
    y = np.arange(X.shape[0]) % 2
    np.testing.assert_allclose(gs.score(store, y, method="welch", chunk_bytes=1).scores,
                               gs.score(X, y, method="welch").scores, rtol=1e-10)
    (tmp_path / "small").mkdir()
    small, _ = _store(tmp_path / "small", sparse, n=10, p=3)
    assert len(gs.io.open_store(small).row_ranges(chunk_bytes=1)) == 10  # small stores keep one-row chunks
