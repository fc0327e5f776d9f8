"""Scoring on Dask with a real scheduler: a LocalCluster of two worker processes (loopback only).

Dask arrays (dense and sparse chunks, chunk shapes that do not divide the data) and DataFrames
against the in-memory results for every registered method; stores read by the workers; a worker
killed mid-computation; the selectors; the command line with --scheduler.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

pytest.importorskip("dask", reason="Dask scoring needs dask: pip install 'genosift[dask]'")
pytest.importorskip("distributed", reason="Dask scoring needs distributed: pip install 'genosift[dask]'")
pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")

import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402
from plain_methods import plain

import genosift as gs  # noqa: E402
import genosift.scoring.dask as gdask  # noqa: E402  (the Dask driver, and its task functions)
from genosift.cli import main  # noqa: E402
from genosift.io import Dataset, open_store, write_store  # noqa: E402
from genosift.scoring import schedulers  # noqa: E402  (resolving a scheduler argument)
from genosift.scoring.store import score_store  # noqa: E402

METHODS = plain(sorted(gs.REGISTRY))
pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


@pytest.fixture(scope="module")
def client():
    # the scheduler serves HTTP even without a dashboard: a free port on the loopback interface
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster, set_as_default=False) as c:
        yield c


def _target(spec, n, rng):
    if spec.task == "regression":
        return rng.standard_normal(n)
    return rng.integers(0, 2 if spec.binary_only else 3, n)


def _data(rng, n=61, p=23, offset=1e9):
    X = rng.poisson(1.3, size=(n, p)).astype(np.float64)
    X[:, 4] = 0.0  # constant features score NaN (or 0 unsupervised)
    X[:, 7] = 2.0
    X[:, 9] += offset  # a large offset: the shifted moments of dense data stay exact
    return X


def _same(got, ref):
    """Equal to 1e-12 of the scores' scale (scores near zero are differences of nearly equal means)."""
    for a, b in ((got.scores, ref.scores), (got.statistic, ref.statistic), (got.pvalues, ref.pvalues)):
        if b is None:
            assert a is None
            continue
        scale = np.nanmax(np.abs(b)) if np.isfinite(b).any() else 1.0
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * scale, equal_nan=True)
    assert got.n_samples == ref.n_samples
    np.testing.assert_array_equal(got.ranking[:10], ref.ranking[:10])  # the tail may hold rounding ties


# ---------------------------------------------------------------------------------------------
# Dask arrays and DataFrames: the contract over the registry
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_every_method_on_the_cluster_equals_in_memory(client, method):
    spec = gs.get_method(method)
    rng = np.random.default_rng(5)
    X = _data(rng)
    y = _target(spec, 61, rng)
    if spec.task == "unsupervised":
        y = None
    csr = sp.csr_matrix(_data(np.random.default_rng(5), offset=0.0))  # the same without the offset
    variants = {"dense": (X, da.from_array(X, chunks=(13, 9))),  # 61 x 23: no chunk divides the data
                "sparse": (csr, da.from_array(csr, chunks=(17, 10)))}
    if spec.streaming == "matrix":
        for _, Xd in variants.values():
            with pytest.raises(ValueError, match=f"Method '{method}' works on the whole matrix"):
                gs.score(Xd, y, method=method, scheduler=client)
        return
    for kind, (M, Xd) in variants.items():
        got = gs.score(Xd, y, method=method, scheduler=client)
        _same(got, gs.score(M, y, method=method))
        assert got.feature_names.tolist() == [f"x{j}" for j in range(23)], kind


@pytest.mark.parametrize("method", [m for m in METHODS if gs.get_method(m).streaming == "rows"])
def test_rows_merge_the_same_statistics_as_the_local_engine(method):
    """Up to FAN_IN row blocks merge in the local engine's order: the very same numbers."""
    spec = gs.get_method(method)
    rng = np.random.default_rng(6)
    X = _data(rng, n=70)
    y = None if spec.task == "unsupervised" else _target(spec, 70, rng)
    edges = [0, 11, 30, 31, 52, 70]
    stream = iter([(X[a:b], None if y is None else y[a:b]) for a, b in zip(edges[:-1], edges[1:])])
    local = gs.score(stream, method=method)
    chunks = (tuple(np.diff(edges)), (23,))
    got = gs.score(da.from_array(X, chunks=chunks), y, method=method, scheduler="sync")
    np.testing.assert_array_equal(got.scores, local.scores)


@pytest.mark.parametrize("method", [m for m in METHODS if gs.get_method(m).streaming == "rows"
                                    and gs.get_method(m).task == "classification"])
def test_row_blocks_that_lack_a_class(method):
    """Labels sorted by class: most row blocks hold one class only; merging matches classes by label."""
    rng = np.random.default_rng(10)
    X = _data(rng, n=60, p=15)
    y = np.sort(_target(gs.get_method(method), 60, rng))
    _same(gs.score(da.from_array(X, chunks=(11, 15)), y, method=method, scheduler="sync"),
          gs.score(X, y, method=method))


def test_dataframe_names_dask_labels_and_unknown_chunk_sizes(client):
    rng = np.random.default_rng(7)
    X = _data(rng, n=80, p=12)
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(12)])
    frame["label"] = np.array(["ALL", "AML"])[rng.integers(0, 2, 80)]
    ddf = dd.from_pandas(frame, npartitions=3)
    features, labels = ddf.drop(columns="label"), ddf["label"]
    for method in ("welch", "auc"):
        got = gs.score(features, labels, method=method, scheduler=client)
        ref = gs.score(frame.drop(columns="label"), frame["label"].to_numpy(), method=method)
        _same(got, ref)
        assert got.top(2).tolist() == ref.top(2).tolist() and got.feature_names[0] == "gene0"
    unknown = features.to_dask_array()  # row chunk sizes not known
    assert np.isnan(unknown.chunks[0][0])
    _same(gs.score(unknown, labels, method="fisher", scheduler=client),
          gs.score(X, frame["label"].to_numpy(), method="fisher"))


def test_sparse_chunks_made_by_map_blocks_empty_row_chunks_and_dask_labels(client):
    rng = np.random.default_rng(8)
    X = _data(rng, n=50, p=12, offset=0.0)
    y = rng.integers(0, 2, 50)
    dense = da.from_array(X, chunks=((20, 0, 30), (5, 7)))
    csr = dense.map_blocks(sp.csr_matrix, dtype=X.dtype, meta=sp.csr_matrix((0, 0)))
    for method in ("fisher", "chi2_counts", "spearman"):
        _same(gs.score(csr, y, method=method, scheduler=client), gs.score(X, y, method=method))
    _same(gs.score(csr, da.from_array(y, chunks=15), method="welch", scheduler=client), gs.score(X, y, method="welch"))


def test_rows_span_all_columns_and_blocks_all_rows():
    """The graph: one statistic per row block of all columns; one task per column block."""
    X = da.zeros((100, 30), chunks=(40, 7))
    seen = []

    def record(block):
        seen.append(block.shape)
        return block

    gs.score(X.map_blocks(record, dtype=X.dtype).rechunk((40, 7)), None, method="variance", scheduler="sync")
    assert max(s[0] for s in seen) == 40
    shapes = []
    original = gdask._block_scores

    def spy(block, *args):
        shapes.append(block.shape)
        return original(block, *args)

    gdask._block_scores = spy
    try:
        gs.score(X + da.arange(30), np.arange(100) % 2, method="auc", scheduler="sync")
    finally:
        gdask._block_scores = original
    assert [s[0] for s in shapes] == [100] * len(shapes) and sum(s[1] for s in shapes) == 30


def test_nonfinite_values_and_bad_input_name_the_problem():
    X = np.ones((20, 4))
    X[:, 1] = np.arange(20)
    X[5, 2] = np.inf
    y = np.arange(20) % 2
    frame = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c", "d"]), npartitions=2)
    with pytest.raises(ValueError, match="NaN or infinity in feature.*'c'"):
        gs.score(frame, y, method="fisher", scheduler="sync")
    with pytest.raises(ValueError, match="NaN or infinity in feature.*'x2'"):
        gs.score(da.from_array(X, chunks=(7, 3)), y, method="auc", scheduler="sync")
    with pytest.raises(ValueError, match="chunk_bytes sets the reads of a store"):
        gs.score(da.from_array(X), y, chunk_bytes=1000)
    with pytest.raises(ValueError, match="The 'scheduler' parameter of score must be None for data in memory"):
        gs.score(X, y, scheduler="sync")
    with pytest.raises(ValueError, match="different numbers of samples"):
        gs.score(da.from_array(X), y[:-1], method="fisher")
    with pytest.raises(TypeError, match="not a real number type"):
        gs.score(da.from_array(np.array([["a", "b"], ["c", "d"]])), [0, 1])
    for bad in ("local:0", "local:two", "", 3):
        with pytest.raises(ValueError, match="The 'scheduler' parameter of genosift must be"):
            gs.score(da.from_array(X), y, scheduler=bad)


def test_missing_dask_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r"pip install 'genosift\[dask\]'"):
        gdask.require_dask()
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install 'genosift\[dask\]'"):
        schedulers.require_distributed()


def test_selectors_fit_dask_input_through_score(client):
    rng = np.random.default_rng(9)
    X = _data(rng, n=90, p=40)
    y = rng.integers(0, 2, 90)
    X[:, 3] += 2.0 * y  # one clear marker
    Xd = da.from_array(X, chunks=(25, 40))
    names = [f"f{j}" for j in range(40)]
    frame = dd.from_pandas(pd.DataFrame(X, columns=names), npartitions=4)
    with gdask.use_scheduler(client):
        for selector in (gs.SelectKBest("welch", k=5), gs.SelectPercentile("auc", percentile=20),
                         gs.SelectFdr("anova", alpha=0.2)):
            ref = type(selector)(**selector.get_params()).fit(X, y)
            got = selector.fit(Xd, y)
            np.testing.assert_array_equal(got.get_support(), ref.get_support())
            np.testing.assert_allclose(got.scores_, ref.scores_, rtol=1e-12, atol=1e-14, equal_nan=True)
            lazy = got.transform(Xd)
            assert isinstance(lazy, da.Array)
            np.testing.assert_array_equal(lazy.compute(), ref.transform(X))
        named = gs.SelectKBest("welch", k=3).fit(frame, y)
    assert named.get_feature_names_out().tolist() == [names[j] for j in np.sort(named.ranking_[:3])]
    assert named.transform(frame).columns.tolist() == named.get_feature_names_out().tolist()
    assert 3 in named.ranking_[:3]


# ---------------------------------------------------------------------------------------------
# Stores: the workers read the file
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    rng = np.random.default_rng(3)
    n, p = 90, 300
    X = sp.random(n, p, density=0.15, format="csr", random_state=3,
                  data_rvs=lambda k: rng.integers(1, 9, k).astype(np.float64))
    ids = np.array([f"iso-{i}" for i in range(n)], dtype=object)
    names = np.array([f"k{j}" for j in range(p)], dtype=object)
    obs = pd.DataFrame({"y": np.array(["R", "S"])[rng.integers(0, 2, n)], "mic": rng.normal(size=n)}, index=ids)
    folder = tmp_path_factory.mktemp("stores")
    paths = {
        "copy": write_store(Dataset(X, ids, names, obs), folder / "copy.gs.h5ad"),
        "rows only": write_store(Dataset(X, ids, names, obs), folder / "rows.gs.h5ad", column_copy=False),
        "dense": write_store(Dataset(X.toarray(), ids, names, obs), folder / "dense.gs.h5ad"),
    }
    return X, obs, paths


@pytest.mark.parametrize("kind", ["copy", "rows only", "dense"])
def test_store_read_by_the_workers_equals_local(client, stores, kind):
    X, obs, paths = stores
    path = paths[kind]
    for method, target in (("fisher", "y"), ("chi2_counts", "y"), ("pearson", "mic"), ("auc", "y"),
                           ("spearman", "mic")):
        local = score_store(path, target, method=method)
        got = score_store(path, target, method=method, scheduler=client, chunk_bytes=4000)  # many tasks
        _same(got, local)
        assert got.feature_names.tolist() == local.feature_names.tolist()
    keep = np.flatnonzero(obs["mic"].to_numpy() > -0.5)
    for method in ("welch", "kruskal"):
        _same(score_store(path, "y", method=method, samples=keep, scheduler=client, chunk_bytes=3000),
              gs.score(X[keep], obs["y"].to_numpy()[keep], method=method))
    via_score = gs.score(str(path), "y", method="fisher", scheduler=client)
    _same(via_score, gs.score(X, obs["y"].to_numpy(), method="fisher"))
    with pytest.raises(ValueError, match="Method 'relieff' needs the whole matrix"):
        score_store(path, "y", method="relieff", scheduler=client)
    with pytest.raises(ValueError, match="Leave out n_jobs or scheduler"):
        score_store(path, "y", scheduler=client, n_jobs=2)


def test_workers_open_the_store_themselves(client, stores, tmp_path):
    """The client reads no data: a store the workers cannot see fails on the workers, naming it."""
    X, obs, paths = stores
    moved = tmp_path / "moved.gs.h5ad"
    moved.write_bytes(Path(paths["copy"]).read_bytes())
    store = open_store(moved)
    moved.rename(tmp_path / "elsewhere.gs.h5ad")
    with pytest.raises(FileNotFoundError, match="Dask worker .* cannot read the store .*moved.gs.h5ad.*same path"):
        score_store(store, obs["y"].to_numpy(), method="auc", scheduler=client)


def _install_worker_killer(client, marker, out=None):
    """On every worker: the first read of a row range past the first makes its worker process exit.

    An exclusive create of ``marker`` picks one task in the whole cluster; the marker records
    whether ``out`` existed at that moment.
    """
    def install(marker, out):
        import os

        import genosift.scoring.dask as g

        original = g._StoreOnWorker.rows

        def rows(store, reader, a, b, keep):
            if a > 0:
                try:
                    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    pass
                else:
                    os.write(fd, b"output present" if out and os.path.exists(out) else b"no output yet")
                    os.close(fd)
                    os._exit(1)
            return original(store, reader, a, b, keep)

        rows.original = original
        g._StoreOnWorker.rows = staticmethod(rows)

    client.run(install, str(marker), None if out is None else str(out))


def _remove_worker_killer(client):
    def remove():
        import genosift.scoring.dask as g

        g._StoreOnWorker.rows = staticmethod(getattr(g._StoreOnWorker.rows, "original", g._StoreOnWorker.rows))

    client.run(remove)


def _pids(client):
    return set(client.run(os.getpid).values())


def test_a_worker_killed_mid_computation_changes_nothing(client, stores, tmp_path):
    X, obs, paths = stores
    ref = gs.score(X, obs["y"].to_numpy(), method="fisher")
    before = _pids(client)
    marker = tmp_path / "killed"
    _install_worker_killer(client, marker)
    try:
        got = score_store(paths["copy"], "y", method="fisher", scheduler=client, chunk_bytes=2000)
    finally:
        client.wait_for_workers(2, timeout=60)
        _remove_worker_killer(client)
    assert marker.exists(), "a worker exited during the computation"
    assert len(_pids(client) - before) == 1, "the nanny started a new worker process"
    _same(got, ref)

    # a Dask array whose third row block makes its worker exit the first time it is computed
    dense = X.toarray()
    flag = str(tmp_path / "killed-array")

    def exit_once(block, block_info=None):
        if block_info[0]["chunk-location"][0] == 2:
            try:
                os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return block
            os._exit(1)
        return block

    Xd = da.from_array(dense, chunks=(14, 300)).map_blocks(exit_once, dtype=dense.dtype)
    before = _pids(client)
    try:
        got = gs.score(Xd, obs["y"].to_numpy(), method="welch", scheduler=client)
    finally:
        client.wait_for_workers(2, timeout=60)
    assert Path(flag).exists() and len(_pids(client) - before) == 1
    _same(got, gs.score(dense, obs["y"].to_numpy(), method="welch"))


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def _ranking(path):
    return pd.read_csv(path, sep="\t")


def test_cli_scheduler_writes_the_same_ranking(client, stores, tmp_path, capsys):
    X, obs, paths = stores
    store = str(paths["copy"])
    plain, local, remote = tmp_path / "plain.tsv", tmp_path / "local.tsv", tmp_path / "remote.tsv"
    args = ["score", store, "--target", "y", "--method", "welch", "--top", "20", "--quiet"]
    assert main([*args, "-o", str(plain)]) == 0
    assert main([*args, "-o", str(local), "--scheduler", "local:2", "--chunk-bytes", "3K"]) == 0
    ref = _ranking(plain)
    pd.testing.assert_frame_equal(_ranking(local), ref)

    # a worker of a running cluster dies mid-run: same output, written only at the end
    marker = tmp_path / "killed"
    _install_worker_killer(client, marker, out=remote)
    try:
        assert main([*args, "-o", str(remote), "--scheduler", client.scheduler.address, "--chunk-bytes", "2K"]) == 0
    finally:
        client.wait_for_workers(2, timeout=60)
        _remove_worker_killer(client)
    assert marker.read_text() == "no output yet"
    pd.testing.assert_frame_equal(_ranking(remote), ref)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["killed", "local.tsv", "local.tsv.json", "plain.tsv", "plain.tsv.json", "remote.tsv", "remote.tsv.json"])

    capsys.readouterr()
    table = tmp_path / "data.tsv"
    pd.DataFrame(X.toarray()[:, :5], columns=list("abcde")).assign(y=obs["y"].to_numpy()).to_csv(table, sep="\t")
    assert main(["score", str(table), "--target", "y", "-o", str(tmp_path / "t.tsv"), "--scheduler", "local:2"]) == 1
    assert "--scheduler scores a store (.gs.h5ad)" in capsys.readouterr().err
    assert main([*args, "-o", str(tmp_path / "bad.tsv"), "--scheduler", "local:0"]) == 1
    assert "'local' or 'local:N' with N >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("part", ["rows", "columns"])
def test_workers_refuse_a_crafted_store(client, stores, tmp_path, part):
    """Each worker checks the index structure it reads before any kernel sees it."""
    import h5py
    from test_hostile_sparse import _crafted

    X, obs, paths = stores
    path = tmp_path / f"bad-{part}.gs.h5ad"
    path.write_bytes(paths["copy"].read_bytes())
    key, minor = ("X", X.shape[1]) if part == "rows" else ("var/_genosift_columns", X.shape[0])
    with h5py.File(path, "r+") as f:
        indptr, indices = _crafted(f[key]["indptr"][()], f[key]["indices"][()], "index too high", minor)
        f[key]["indices"][...] = indices
    method = "fisher" if part == "rows" else "auc"
    with pytest.raises(ValueError, match=rf"Cannot read '.*bad-{part}\.gs\.h5ad' as a store: the index"):
        score_store(path, "y", method=method, scheduler=client, chunk_bytes=4000)


def test_the_mixed_model_on_the_cluster_equals_local(client, stores):
    """``lmm`` with a kinship: a store read by the workers (all rows, and kept rows) and a Dask
    array and DataFrame give the local results; each worker's tasks share one null model."""
    X, obs, paths = stores
    K = gs.kinship(X)
    ids = list(obs.index)
    frame_K = pd.DataFrame(np.asarray(K), index=ids, columns=ids).iloc[::-1, ::-1]  # matched by id
    local = score_store(paths["copy"], "mic", method="lmm", kinship=frame_K)
    for kind in ("copy", "dense"):
        got = score_store(paths[kind], "mic", method="lmm", kinship=frame_K, scheduler=client, chunk_bytes=4000)
        _same(got, local)
        assert got.model == local.model
    keep = np.flatnonzero(obs["mic"].to_numpy() > -0.5)
    kept_local = gs.score(X[keep], obs["mic"].to_numpy()[keep], method="lmm",
                          kinship=np.asarray(K)[np.ix_(keep, keep)])
    _same(score_store(paths["copy"], "mic", method="lmm", kinship=frame_K, samples=keep, scheduler=client,
                      chunk_bytes=3000), kept_local)
    dense = X.toarray()
    in_memory = gs.score(dense, obs["mic"].to_numpy(), method="lmm", kinship=np.asarray(K))
    _same(gs.score(da.from_array(dense, chunks=(30, 40)), obs["mic"].to_numpy(), method="lmm",
                   kinship=np.asarray(K), scheduler=client), in_memory)
    table = dd.from_pandas(pd.DataFrame(dense, index=ids, columns=[f"k{j}" for j in range(dense.shape[1])]),
                           npartitions=3, sort=False)  # the rows in the labels' order
    _same(gs.score(table, obs["mic"].to_numpy(), method="lmm", kinship=frame_K, scheduler=client), in_memory)
