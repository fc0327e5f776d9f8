"""The genosift store: round trips, chunk and block boundaries, safe writes, out-of-core scoring."""
from __future__ import annotations

import re
import threading
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.io import Dataset, convert_kmers, format_of, read
from genosift.io.store import SUFFIX, Store, convert, open_store, write_store
from genosift.io.store import write as store_write
from genosift.scoring.store import score_store

from conftest import load_shared, require_shared

pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
# anndata 0.12 asks pandas 3 about an option pandas deprecates; nothing to do with genosift
pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")

ODD_IDS = ["s-1", "s.2", "dir/s3", "a:b", "ü-7", "with space", "", "007"]


def counts(n=8, p=30, density=0.3, seed=0):
    """A sparse count matrix with an empty row, an empty column and counts above 2**32."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, format="lil", random_state=seed,
                  data_rvs=lambda k: rng.integers(1, 50, k).astype(np.float64))
    X[:, 3] = 0
    X[2, :] = 0
    X[0, 1] = 2**40 + 1  # exact in float64, not in float32, above 2**32
    X[5, p - 1] = 2**53
    return sp.csr_matrix(X)


def dataset(X, obs=None, ids=None):
    n, p = X.shape
    ids = np.array(ids if ids is not None else [f"s{i}" for i in range(n)], dtype=object)
    names = np.array([f"kmer_{j}" for j in range(p)], dtype=object)
    return Dataset(X, ids, names, obs)


def same_csr(a, b):
    assert sp.issparse(a) and sp.issparse(b) and a.shape == b.shape
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    a.sort_indices()
    b.sort_indices()
    for part in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(a, part), getattr(b, part))


def rich_obs(ids):
    n = len(ids)
    return pd.DataFrame(
        {
            "y": np.array(["R", "S"] * (n // 2), dtype=object),
            "age": np.arange(n, dtype=np.int64),
            "dose": np.linspace(0, 1, n),
            "flag": np.arange(n) % 3 == 0,
            "group": pd.Categorical(["g1", "g2", "g1", "g3"] * (n // 4)),
            "count": pd.array([1, None] * (n // 2), dtype="Int64"),
            "note": np.array(["x", None] * (n // 2), dtype=object),
        },
        index=pd.Index(ids, name="sample"),
    )


# ---------------------------------------------------------------------------------------------
# round trips


def test_sparse_round_trip_with_obs_odd_ids_and_big_counts(tmp_path):
    X = counts()
    obs = rich_obs(ODD_IDS)
    path = write_store(dataset(X, obs, ODD_IDS), tmp_path / f"a{SUFFIX}")
    store = open_store(path)
    assert isinstance(store, Store) and store.shape == (8, 30) and store.sparse and store.has_column_copy
    assert store._data.offset is not None and store._cdata.offset is not None  # read by preadv
    assert store.dtype == np.float64 and store.nnz == X.nnz
    assert repr(store) == f"Store({str(path)!r}, 8 x 30, CSR + columns, float64)"
    back = store.to_dataset()
    same_csr(back.X, X)
    assert back.X[0, 1] == 2**40 + 1 and back.X[5, 29] == 2**53
    assert back.sample_ids.tolist() == ODD_IDS
    assert back.feature_names.tolist() == [f"kmer_{j}" for j in range(30)]
    expected = obs.copy()
    expected["note"] = np.array(["x", np.nan] * 4, dtype=object)  # missing text reads back as NaN
    pd.testing.assert_frame_equal(back.obs, expected, check_dtype=False)
    assert back.obs.index.name == "sample"


def test_read_picks_the_store_by_suffix(tmp_path):
    X = counts()
    path = write_store(dataset(X), tmp_path / f"d{SUFFIX}")
    assert format_of(path) == "store" and format_of(tmp_path / "plain.h5ad") == "h5ad"
    data = read(path)
    same_csr(data.X, X)
    assert data.obs is None
    assert read(path, format="store").shape == (8, 30)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.uint8, np.bool_])
def test_dense_round_trip_keeps_the_dtype(tmp_path, dtype):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2 if dtype is np.bool_ else 100, (9, 700)).astype(dtype)
    path = write_store(dataset(X), tmp_path / f"d{SUFFIX}")
    store = open_store(path)
    assert not store.sparse and store.dtype == dtype and not store.has_column_copy
    back = store.to_dataset().X
    assert isinstance(back, np.ndarray) and back.dtype == dtype
    np.testing.assert_array_equal(back, X)


def test_checked_cast_of_counts(tmp_path):
    X = counts()
    store = open_store(write_store(dataset(X), tmp_path / f"u64{SUFFIX}", dtype=np.uint64))
    assert store.dtype == np.uint64
    back = store.to_dataset().X
    assert back[0, 1] == 2**40 + 1 and back[5, 29] == 2**53
    with pytest.raises(ValueError, match=re.escape(
        "The value 1099511627777.0 at row 0, feature 'kmer_1' does not convert exactly "
        "to dtype uint32. Pass dtype='float64' to keep the values' own type, or a type that holds it."
    )):
        write_store(dataset(X), tmp_path / f"u32{SUFFIX}", dtype=np.uint32)
    assert not (tmp_path / f"u32{SUFFIX}").exists()
    small = sp.csr_matrix(np.array([[0, 70000.0], [4294967295.0, 1]]))
    store = open_store(write_store(dataset(small), tmp_path / f"ok{SUFFIX}", dtype=np.uint32))
    assert store.to_dataset().X.toarray().tolist() == [[0, 70000], [4294967295, 1]]
    with pytest.raises(ValueError, match=r"The value 0.5 at row 1, feature 'kmer_0'"):
        write_store(dataset(np.array([[1.0], [0.5]])), tmp_path / f"f{SUFFIX}", dtype=np.int64)
    with pytest.raises(ValueError, match=r"The 'dtype' parameter of write_store must be None or a real"):
        write_store(dataset(small), tmp_path / f"s{SUFFIX}", dtype=str)


def test_empty_matrix_and_all_zero_store(tmp_path):
    X = sp.csr_matrix((4, 6))
    store = open_store(write_store(dataset(X), tmp_path / f"z{SUFFIX}"))
    assert store.nnz == 0
    same_csr(store.to_dataset().X, X)
    assert [b.shape for _, _, b in store.feature_blocks(width=4)] == [(4, 4), (4, 2)]
    assert sum(c.shape[0] for c in store.row_chunks(rows_per_chunk=3)) == 4


def test_anndata_reads_the_store(tmp_path):
    anndata = pytest.importorskip("anndata", reason="anndata checks that stores stay AnnData files")
    X = counts()
    obs = rich_obs(ODD_IDS)
    path = write_store(dataset(X, obs, ODD_IDS), tmp_path / f"a{SUFFIX}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anndata's own deprecation notes
        adata = anndata.read_h5ad(path)
    same_csr(adata.X, X)
    assert list(adata.obs_names) == ODD_IDS and list(adata.var_names) == [f"kmer_{j}" for j in range(30)]
    assert list(adata.obs.columns) == list(obs.columns) and adata.obs["age"].tolist() == list(range(8))
    assert list(adata.layers) == [] and adata.uns == {}  # the column copy and names stay hidden


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_store_reads_an_anndata_file_without_column_copy(tmp_path, compression):
    anndata = pytest.importorskip("anndata", reason="anndata writes the foreign .h5ad file")
    X = counts(n=12, p=40, seed=4)
    obs = pd.DataFrame({"y": pd.Categorical(list("ab") * 6)}, index=[f"c{i}" for i in range(12)])
    path = tmp_path / "foreign.h5ad"
    adata = anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(40)]))
    settings = anndata.settings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if hasattr(settings, "allow_write_nullable_strings"):  # pandas 3 string indexes
            with settings.override(allow_write_nullable_strings=True):
                adata.write_h5ad(path, compression=compression)
        else:
            adata.write_h5ad(path, compression=compression)
    store = open_store(path)
    assert store._data.offset is None  # anndata writes chunked datasets: read through h5py
    assert store.sparse and not store.has_column_copy
    assert store.feature_names.tolist() == [f"g{j}" for j in range(40)]
    assert store.obs["y"].tolist() == list("ab") * 6
    # a compressed chunk is read whole: a budget below it is refused (test_store_budgets), one above reads
    assert (store.chunk_need > 200) == (compression is not None)
    budget = max(200, store.chunk_need)
    blocks = list(store.feature_blocks(width=7, chunk_bytes=budget))
    assert [(j0, j1) for j0, j1, _ in blocks] == [(0, 7), (7, 14), (14, 21), (21, 28), (28, 35), (35, 40)]
    same_csr(sp.hstack([b for _, _, b in blocks]), X)
    ref = gs.score(X, obs["y"].to_numpy(), method="auc")
    np.testing.assert_array_equal(score_store(store, "y", method="auc", chunk_bytes=max(300, budget)).scores,
                                  ref.scores)


# ---------------------------------------------------------------------------------------------
# chunks and blocks


@pytest.mark.parametrize("rows", [1, 3, 7, 8, 50])
def test_row_chunks_by_count(tmp_path, rows):
    X = counts()
    store = open_store(write_store(dataset(X), tmp_path / f"a{SUFFIX}"))
    chunks = list(store.row_chunks(rows))
    assert [c.shape[0] for c in chunks] == [min(rows, 8 - a) for a in range(0, 8, rows)]
    assert all(isinstance(c, sp.csr_matrix) and c.shape[1] == 30 for c in chunks)
    same_csr(sp.vstack(chunks), X)


def test_row_chunks_by_budget(tmp_path):
    X = counts(n=40, p=200, density=0.2, seed=2)
    store = open_store(write_store(dataset(X), tmp_path / f"a{SUFFIX}"))
    per_row = np.diff(X.indptr) * 12  # float64 value + int32 index
    for budget, ahead in [(500, True), (500, False), (2000, True), (10**6, True)]:
        chunks = list(store.row_chunks(chunk_bytes=budget, read_ahead=ahead))
        same_csr(sp.vstack(chunks), X)
        limit = budget if not ahead or per_row.sum() <= budget else budget // 2
        sizes = [c.nnz * 12 for c in chunks]
        assert all(size <= limit or c.shape[0] == 1 for size, c in zip(sizes, chunks))
    assert len(list(store.row_chunks(chunk_bytes=10**6))) == 1  # fits: one chunk
    with pytest.raises(ValueError,
                       match=r"The 'rows_per_chunk' parameter of Store.row_chunks must be a positive int or None. Got "
                       r"0 instead."):
        list(store.row_chunks(0))
    with pytest.raises(ValueError, match=r"The 'chunk_bytes' parameter of Store.row_chunks must be a positive int"):
        list(store.row_chunks(chunk_bytes=-1))


def test_read_ahead_thread_stops_when_the_reader_stops(tmp_path):
    X = counts(n=40, p=200, density=0.2, seed=2)
    store = open_store(write_store(dataset(X), tmp_path / f"a{SUFFIX}"))
    chunks = store.row_chunks(rows_per_chunk=5)
    first = next(chunks)
    same_csr(first, X[:5])
    chunks.close()
    assert not [t for t in threading.enumerate() if t.name == "genosift-store-read"]


@pytest.mark.parametrize("width", [1, 4, 29, 30, 31])
@pytest.mark.parametrize("copy", [True, False])
def test_feature_blocks(tmp_path, width, copy):
    X = counts()
    store = open_store(write_store(dataset(X), tmp_path / f"a{SUFFIX}", column_copy=copy))
    assert store.has_column_copy is copy
    blocks = list(store.feature_blocks(width, chunk_bytes=256))
    assert [(j0, j1) for j0, j1, _ in blocks] == [(j, min(30, j + width)) for j in range(0, 30, width)]
    assert all(isinstance(b, sp.csc_matrix) and b.has_canonical_format for _, _, b in blocks)
    same_csr(sp.hstack([b for _, _, b in blocks]), X)


def test_dense_chunks_and_blocks(tmp_path):
    X = np.random.default_rng(5).normal(size=(600, 260))
    store = open_store(write_store(dataset(X), tmp_path / f"d{SUFFIX}"))  # tiles of 256 rows
    chunks = list(store.row_chunks(chunk_bytes=300 * 260 * 8, read_ahead=False))
    assert [c.shape[0] for c in chunks] == [256, 256, 88]  # whole tiles per chunk
    assert all(isinstance(c, np.ndarray) for c in chunks)
    assert [c.shape[0] for c in store.row_chunks(chunk_bytes=100 * 260 * 8)] == [50] * 12  # read ahead: half
    np.testing.assert_array_equal(np.vstack(chunks), X)
    blocks = list(store.feature_blocks(width=100))
    assert [(j0, j1) for j0, j1, _ in blocks] == [(0, 100), (100, 200), (200, 260)]
    np.testing.assert_array_equal(np.hstack([b for _, _, b in blocks]), X)


# ---------------------------------------------------------------------------------------------
# safe writes


def test_overwrite_refused_then_allowed(tmp_path):
    path = write_store(dataset(counts()), tmp_path / f"a{SUFFIX}")
    with pytest.raises(FileExistsError, match=re.escape(
        f"{str(path)!r} already exists. Pass overwrite=True to replace it, or choose another name."
    )):
        write_store(dataset(np.eye(2)), path)
    assert open_store(path).shape == (8, 30)
    write_store(dataset(np.eye(2)), path, overwrite=True)
    assert open_store(path).shape == (2, 2)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    with pytest.raises(IsADirectoryError, match="is a folder; give write_store a file name"):
        write_store(dataset(np.eye(2)), tmp_path)
    with pytest.raises(FileNotFoundError, match="the folder .*nowhere' does not exist"):
        write_store(dataset(np.eye(2)), tmp_path / "nowhere" / f"a{SUFFIX}")


def test_failed_write_leaves_nothing_and_keeps_the_old_file(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(store_write, "_write_sparse", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        write_store(dataset(counts()), tmp_path / f"a{SUFFIX}")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    path = write_store(dataset(counts()), tmp_path / f"a{SUFFIX}")
    before = path.read_bytes()
    monkeypatch.setattr(store_write, "_write_sparse", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        write_store(dataset(counts(seed=9)), path, overwrite=True)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_replaced_store_is_noticed(tmp_path):
    path = write_store(dataset(counts()), tmp_path / f"a{SUFFIX}")
    store = open_store(path)
    write_store(dataset(counts(seed=3)), path, overwrite=True)
    with pytest.raises(ValueError, match="changed while it was read .*run again when nothing writes it"):
        list(store.row_chunks())


def test_bad_inputs_and_damaged_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such file"):
        open_store(tmp_path / "none.gs.h5ad")
    (tmp_path / f"text{SUFFIX}").write_text("not hdf5")
    with pytest.raises(ValueError, match=r"Cannot read .*text.gs.h5ad' as a store: it is damaged or not an HDF5"):
        open_store(tmp_path / f"text{SUFFIX}")
    good = write_store(dataset(counts()), tmp_path / f"good{SUFFIX}").read_bytes()
    (tmp_path / f"cut{SUFFIX}").write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match=r"cut.gs.h5ad'"):
        open_store(tmp_path / f"cut{SUFFIX}").to_dataset()
    with pytest.raises(TypeError, match="The 'dataset' parameter of write_store must be a genosift.io.Dataset. "
                                       "Got 'ndarray' instead"):
        write_store(np.eye(2), tmp_path / f"x{SUFFIX}")
    bad = dataset(np.eye(2), ids=["a\x00b", "c"])
    with pytest.raises(ValueError, match=r"The sample id 'a\\x00b' holds a NUL character"):
        write_store(bad, tmp_path / f"x{SUFFIX}")
    obs = pd.DataFrame({"when": pd.to_datetime(["2024-01-01", "2024-01-02"]).astype(object)}, index=["s0", "s1"])
    with pytest.raises(ValueError, match=r"Column 'when' of obs holds Timestamp values"):
        write_store(dataset(np.eye(2), obs), tmp_path / f"x{SUFFIX}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"cut{SUFFIX}", f"good{SUFFIX}", f"text{SUFFIX}"]


# ---------------------------------------------------------------------------------------------
# out-of-core scoring


def _same_result(got, ref, rtol):
    np.testing.assert_allclose(got.scores, ref.scores, rtol=rtol, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(got.statistic, ref.statistic, rtol=rtol, atol=1e-12, equal_nan=True)
    if ref.pvalues is not None:
        np.testing.assert_allclose(got.pvalues, ref.pvalues, rtol=rtol, atol=1e-12, equal_nan=True)
    assert got.method == ref.method and got.n_samples == ref.n_samples
    assert got.feature_names.tolist() == ref.feature_names.tolist()
    if ref.classes is not None:
        assert got.classes.tolist() == ref.classes.tolist()


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    rng = np.random.default_rng(11)
    n, p = 60, 500
    X = sp.random(n, p, density=0.1, format="csr", random_state=11,
                  data_rvs=lambda k: rng.integers(1, 9, k).astype(np.float64))
    obs = pd.DataFrame({"y": np.array(["R", "S", "I"])[rng.integers(0, 3, n)],
                        "bin": np.array(["case", "control"])[rng.integers(0, 2, n)],
                        "mic": rng.normal(size=n)}, index=[f"s{i}" for i in range(n)])
    folder = tmp_path_factory.mktemp("scored")
    ds = dataset(X, obs)
    paths = {
        "copy": write_store(ds, folder / f"copy{SUFFIX}"),
        "rows only": write_store(ds, folder / f"rows{SUFFIX}", column_copy=False),
        "dense": write_store(dataset(X.toarray(), obs), folder / f"dense{SUFFIX}"),
    }
    return X, obs, paths


def _column(method):
    """The per-sample column of ``scored``'s store that ``method`` takes as its target."""
    if method.task == "unsupervised":
        return None
    if method.task == "regression":
        return "mic"
    return "bin" if method.binary_only else "y"


# every method a store is scored by, from the registry: a new one is covered without editing a list
ROW_CASES = [(m.name, _column(m)) for m in gs.REGISTRY.values() if m.streaming == "rows" and not m.kinship]
BLOCK_CASES = [(m.name, _column(m)) for m in gs.REGISTRY.values() if m.streaming == "blocks" and not m.kinship]


@pytest.mark.parametrize("kind", ["copy", "rows only", "dense"])
@pytest.mark.parametrize("method,column", ROW_CASES + BLOCK_CASES)
def test_score_store_equals_score_in_memory(scored, kind, method, column):
    X, obs, paths = scored
    y = None if column is None else obs[column].to_numpy()
    names = [f"kmer_{j}" for j in range(X.shape[1])]
    ref = gs.score(X if kind != "dense" else X.toarray(), y, method=method, feature_names=names)
    for budget in (3000, 40_000, None):  # many chunks or blocks, a few, one
        got = score_store(paths[kind], column, method=method, chunk_bytes=budget)
        _same_result(got, ref, rtol=1e-12)
    got = score_store(open_store(paths[kind]), y, method=method, chunk_bytes=5000)  # labels as an array
    _same_result(got, ref, rtol=1e-12)


def test_block_methods_are_bit_identical(scored):
    X, obs, paths = scored
    for method, column in BLOCK_CASES:
        ref = gs.score(X, obs[column].to_numpy(), method=method)
        got = score_store(paths["copy"], column, method=method, chunk_bytes=2000)
        np.testing.assert_array_equal(got.scores, ref.scores)


def test_score_store_messages(scored, tmp_path):
    X, obs, paths = scored
    with pytest.raises(ValueError, match=re.escape(
        "Method 'relieff' needs the whole matrix in memory (it compares samples over all features at "
        "once), so it cannot score a store out of core."
    )):
        score_store(paths["copy"], "y", method="relieff")
    with pytest.raises(ValueError, match=re.escape(
        f"The store {str(paths['copy'])!r} has no per-sample column 'phenotype'; its columns: "
        "['y', 'bin', 'mic']. Pass the labels as an array"
    )):
        score_store(paths["copy"], "phenotype")
    with pytest.raises(ValueError, match=r"Method 'fisher' needs a target: pass the name of a column"):
        score_store(paths["copy"])
    with pytest.raises(ValueError, match=r"X and y have different numbers of samples: X has 60 rows, y has 3"):
        score_store(paths["copy"], [0, 1, 0])
    with pytest.raises(ValueError, match=r"Method 'auc' compares two classes, but y has 3"):
        score_store(paths["copy"], "y", method="auc")
    with pytest.raises(TypeError, match=r"Method 'fisher' got unknown option\(s\) \['k'\]"):
        score_store(paths["copy"], "y", method_options={"k": 3})
    with pytest.raises(TypeError, match=r"a method's options go in one dict, method_options=\{'k': 3\}"):
        score_store(paths["copy"], "y", k=3)
    with pytest.raises(ValueError, match=r"The 'method' parameter must be one of"):
        score_store(paths["copy"], "y", method="nope")
    nan = dataset(sp.csr_matrix(np.array([[1.0, np.nan, 0], [0, 2, 1], [3, 0, 1], [1, 1, 0]])))
    path = write_store(nan, tmp_path / f"nan{SUFFIX}")
    for method in ("fisher", "auc"):
        with pytest.raises(ValueError, match=r"X contains NaN or infinity in feature\(s\) 'kmer_1'"):
            score_store(path, [0, 1, 0, 1], method=method)


def test_memory_is_bounded_by_the_budget(tmp_path):
    rng = np.random.default_rng(7)
    n, p, density = 2000, 50_000, 0.05
    per_row = rng.binomial(p, density, n)
    indptr = np.r_[0, np.cumsum(per_row)]
    indices = np.concatenate([np.sort(rng.choice(p, k, replace=False)) for k in per_row]).astype(np.int32)
    X = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, p))
    y = rng.integers(0, 2, n)
    path = write_store(dataset(X), tmp_path / f"big{SUFFIX}")
    csr_bytes = X.data.nbytes + X.indices.nbytes  # 60 MB; dense would be 800 MB
    names = dataset(X).feature_names
    ref = {m: gs.score(X, y, method=m, feature_names=names) for m in ("fisher", "auc")}
    del X
    store = open_store(path)
    _ = store.feature_names  # names (50,000 strings) are part of any result: loaded before measuring
    for method, budget, limit in [("fisher", 4 << 20, 24 << 20), ("auc", 4 << 20, 24 << 20)]:
        tracemalloc.start()
        got = score_store(store, y, method=method, chunk_bytes=budget, n_jobs=2)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        _same_result(got, ref[method], rtol=1e-12)
        assert peak < limit < csr_bytes / 2, (method, peak)


# ---------------------------------------------------------------------------------------------
# converting


def test_convert_kmers_with_metadata(tmp_path):
    text = "ACGTA | s-2:1 s.1:3\nCGTAC | s-2:70000 s/3:4294967296\nGGGGG |\n"
    (tmp_path / "a.kmers").write_text(text)
    meta = pd.DataFrame({"y": [1, 0]}, index=pd.Index(["s.1", "s/3"], name="id"))
    path, report = convert_kmers(tmp_path / "a.kmers", tmp_path / f"k{SUFFIX}", metadata=meta)
    assert report.n_matched == 2 and report.only_in_data == ["s-2"]
    store = open_store(path)
    assert store.sample_ids.tolist() == ["s.1", "s/3"] and store.feature_names.tolist() == ["ACGTA", "CGTAC", "GGGGG"]
    assert store.to_dataset().X.toarray().tolist() == [[3, 0, 0], [0, 4294967296, 0]]
    assert store.obs["y"].tolist() == [1, 0] and store.obs.index.name == "id"
    path, report = convert_kmers(tmp_path / "a.kmers", tmp_path / f"k{SUFFIX}", overwrite=True, dtype=np.uint64)
    assert report is None and open_store(path).dtype == np.uint64 and open_store(path).shape == (3, 3)


def test_convert_any_reader(tmp_path):
    (tmp_path / "t.csv").write_text("id,f1,f2\na,1,2.5\nb,0,7\n")
    store = open_store(convert(tmp_path / "t.csv", tmp_path / f"t{SUFFIX}"))
    assert store.sample_ids.tolist() == ["a", "b"] and store.feature_names.tolist() == ["f1", "f2"]
    np.testing.assert_array_equal(store.to_dataset().X, [[1, 2.5], [0, 7]])


# ---------------------------------------------------------------------------------------------
# real data


def test_real_pangenome_counts_out_of_core(tmp_path):
    X, y, names = load_shared("camda_pseudomonas")
    ds = Dataset(X, np.array([f"isolate_{i}" for i in range(X.shape[0])], dtype=object),
                 np.asarray(names if names is not None else [f"gene_{j}" for j in range(X.shape[1])], dtype=object),
                 pd.DataFrame({"meropenem": y}, index=[f"isolate_{i}" for i in range(X.shape[0])]))
    path = write_store(ds, tmp_path / f"camda{SUFFIX}")
    same_csr(read(path).X, X)
    for method in ("fisher", "welch", "auc"):
        ref = gs.score(X, y, method=method, feature_names=ds.feature_names)
        _same_result(score_store(path, "meropenem", method=method, chunk_bytes=1 << 20), ref, rtol=1e-12)


def test_real_kmer_file_converts(tmp_path):
    kmers = require_shared("pyseer_kmers", "kmers.gz")
    from genosift.io.kmers import read_kmers

    ref = read_kmers(kmers)
    path, _ = convert_kmers(kmers, tmp_path / f"pyseer{SUFFIX}")
    back = read(path)
    same_csr(back.X, ref.X)
    assert back.sample_ids.tolist() == ref.sample_ids.tolist()
    assert back.feature_names.tolist() == ref.feature_names.tolist()
    blocks = list(open_store(path).feature_blocks(width=64))
    same_csr(sp.hstack([b for _, _, b in blocks]), ref.X)


def test_labels_are_checked_before_reading(scored, monkeypatch):
    X, obs, paths = scored
    store = open_store(paths["copy"])

    def unread(*args, **kwargs):
        raise AssertionError("the store was read")

    monkeypatch.setattr(Store, "row_chunks", unread)
    monkeypatch.setattr(Store, "feature_blocks", unread)
    with pytest.raises(ValueError, match=r"Method 'welch' compares two classes, but y has 3"):
        score_store(store, "y", method="welch")
    with pytest.raises(ValueError, match=r"y has only one class \(.*'a'.*\) in 60 sample\(s\)"):
        score_store(store, ["a"] * 60, method="fisher")
    with pytest.raises(ValueError,
                       match=r"The 'n_jobs' parameter of score_store must be a positive int or None. Got 0"):
        score_store(store, "bin", method="auc", n_jobs=0)


# --------------------------------------------------------------------------- column counts


def test_column_counts_are_numpys_bincount():
    from genosift.core.sparse_columns import column_counts

    rng = np.random.default_rng(5)
    for dtype in (np.int32, np.int64):
        indices = rng.integers(0, 31, 500).astype(dtype)
        assert np.array_equal(column_counts(indices, 40), np.bincount(indices, minlength=40))
    assert np.array_equal(column_counts(np.array([], np.int32), 3), [0, 0, 0])
