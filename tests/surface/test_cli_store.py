"""Out-of-core runs: scoring a subset of a store's rows, reading selected columns, threads,
progress bars, and the command line on a store (in-process)."""
from __future__ import annotations

import json
import re
import tracemalloc

import numba
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.cli import build_parser, main
from genosift.core import engine
from genosift.io import Dataset, open_store, write_store
from genosift.scoring.store import score_store

pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


def _counts(n, p, density, seed):
    rng = np.random.default_rng(seed)
    return sp.random(n, p, density=density, format="csr", random_state=seed,
                     data_rvs=lambda k: rng.integers(1, 9, k).astype(np.float64))


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """One data set as three stores: CSR with its column copy, CSR only, dense."""
    rng = np.random.default_rng(3)
    n, p = 70, 400
    X = _counts(n, p, 0.1, 3)
    ids = np.array([f"iso-{i}" for i in range(n)], dtype=object)
    names = np.array([f"k{j}" for j in range(p)], dtype=object)
    obs = pd.DataFrame({"y": np.array(["R", "S", "I"])[rng.integers(0, 3, n)],
                        "bin": np.array(["case", "control"])[rng.integers(0, 2, n)],
                        "mic": rng.normal(size=n),
                        "batch": np.array(["a", "b"])[np.arange(n) % 2]}, index=ids)
    folder = tmp_path_factory.mktemp("stores")
    paths = {
        "copy": write_store(Dataset(X, ids, names, obs), folder / "copy.gs.h5ad"),
        "rows only": write_store(Dataset(X, ids, names, obs), folder / "rows.gs.h5ad", column_copy=False),
        "dense": write_store(Dataset(X.toarray(), ids, names, obs), folder / "dense.gs.h5ad"),
    }
    return X, names, obs, paths


def _same(got, ref):
    np.testing.assert_allclose(got.scores, ref.scores, rtol=1e-12, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-12, atol=1e-12, equal_nan=True)
    if ref.pvalues is not None:
        np.testing.assert_allclose(got.pvalues, ref.pvalues, rtol=1e-12, atol=1e-14, equal_nan=True)
    assert got.n_samples == ref.n_samples and got.feature_names.tolist() == ref.feature_names.tolist()


# ---------------------------------------------------------------------------------------------
# score_store(samples=...)

CASES = [("fisher", "y"), ("welch", "bin"), ("pearson", "mic"), ("variance", None),  # row chunks
         ("auc", "bin"), ("kruskal", "y"), ("spearman", "mic")]  # feature blocks


@pytest.mark.parametrize("kind", ["copy", "rows only", "dense"])
@pytest.mark.parametrize("method,column", CASES)
def test_samples_equal_score_on_the_subset(stores, kind, method, column):
    X, names, obs, paths = stores
    n = X.shape[0]
    mask = (np.arange(n) % 3 != 1) & (np.arange(n) > 4)  # rows missing at both ends and inside
    rows = np.flatnonzero(mask)
    y = None if column is None else obs[column].to_numpy()
    ref = gs.score(X[rows], None if y is None else y[rows], method=method, feature_names=names)
    for samples in (mask, rows):
        for budget in (1500, 30_000, None):  # chunks that hold no kept row, a few chunks, one
            _same(score_store(paths[kind], column, method=method, samples=samples, chunk_bytes=budget), ref)
    if y is not None:  # labels for every store row, or for the kept rows only
        _same(score_store(paths[kind], y, method=method, samples=rows, chunk_bytes=2000), ref)
        _same(score_store(paths[kind], y[rows], method=method, samples=mask, chunk_bytes=2000), ref)


def test_samples_all_rows_and_one_chunk_per_row(stores):
    X, names, obs, paths = stores
    y = obs["y"].to_numpy()
    ref = gs.score(X, y, method="anova", feature_names=names)
    _same(score_store(paths["copy"], "y", method="anova", samples=np.ones(X.shape[0], bool)), ref)
    rows = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 69])
    ref = gs.score(X[rows], y[rows], method="anova", feature_names=names)
    _same(score_store(paths["copy"], "y", method="anova", samples=rows, chunk_bytes=1), ref)


def test_samples_errors(stores):
    X, names, obs, paths = stores
    path = paths["copy"]
    expected = "None, a boolean mask of 70 values, or increasing row indices in [0, 70)"
    for bad, got in [([3, 1], [3, 1]), ([0, 70], [0, 70]), ([-1, 2], [-1, 2]), ([2, 2], [2, 2]),
                     (np.ones(5, bool), "a boolean array of shape (5,)"),
                     (np.array([0.5, 1.5]), "an array of float64 of shape (2,)")]:
        with pytest.raises(ValueError, match=re.escape(
                f"The 'samples' parameter of score_store must be {expected}. Got {got!r} instead.")):
            score_store(path, "y", samples=bad)
    with pytest.raises(ValueError, match="'samples' keeps no row of the store"):
        score_store(path, "y", samples=np.zeros(70, bool))
    with pytest.raises(ValueError, match=re.escape(
            "y has 3 values, but the store has 70 rows and 'samples' keeps 10: give one label per row")):
        score_store(path, ["a", "b", "a"], samples=np.arange(10))
    with pytest.raises(ValueError, match=r"y has only one class \('R'\)"):  # checked on the kept rows
        score_store(path, "y", samples=np.flatnonzero(obs["y"].to_numpy() == "R"))


# ---------------------------------------------------------------------------------------------
# reading selected columns


@pytest.mark.parametrize("kind", ["copy", "rows only", "dense"])
def test_read_columns(stores, kind):
    X, names, obs, paths = stores
    store = open_store(paths[kind])
    dense = X.toarray()
    cols = np.array([399, 0, 17, 18, 19, 250, 17])  # any order, repeats, runs of neighbours
    rows = np.array([1, 2, 40, 69])
    for budget in (700, None):
        for keep, ref in ((None, dense[:, cols]), (rows, dense[rows][:, cols])):
            got = store.read_columns(cols, rows=keep, chunk_bytes=budget)
            assert isinstance(got, np.ndarray) == (kind == "dense")
            np.testing.assert_array_equal(got.toarray() if sp.issparse(got) else got, ref)
    mask = np.zeros(400, bool)
    mask[[5, 6, 300]] = True
    got = store.read_columns(mask, rows=np.arange(70) % 7 == 0)
    np.testing.assert_array_equal(got.toarray() if sp.issparse(got) else got, dense[::7][:, [5, 6, 300]])
    assert store.read_columns([]).shape == (70, 0)
    with pytest.raises(ValueError, match=re.escape(
            "The 'columns' parameter of Store.read_columns must be a boolean mask of 400 values or "
            "indices in [0, 400). Got [400] instead.")):
        store.read_columns([400])
    with pytest.raises(ValueError, match=r"The 'rows' parameter of Store.read_columns must be .* increasing"):
        store.read_columns([1], rows=[3, 2])


# ---------------------------------------------------------------------------------------------
# threads and progress


@pytest.fixture
def restore_engine():
    yield
    engine.set_threads(None)
    engine.set_progress(False)


def test_one_and_two_threads_give_identical_results(stores, restore_engine):
    X, names, obs, paths = stores
    for method, column in [("fisher", "y"), ("auc", "bin"), ("mi", "y")]:
        got = {}
        for n in (1, 2):
            engine.set_threads(n)
            assert engine.threads() == n
            assert numba.get_num_threads() == min(n, numba.config.NUMBA_NUM_THREADS)
            got[n] = (score_store(paths["copy"], column, method=method, chunk_bytes=3000),
                      gs.score(X, obs[column].to_numpy(), method=method))
        for a, b in zip(got[1], got[2]):
            np.testing.assert_array_equal(a.scores, b.scores)
            np.testing.assert_array_equal(a.statistic, b.statistic)


def test_blocks_mapped_lazily_come_in_order_and_stop_when_closed():
    import threading

    started, first, later = [], threading.Event(), threading.Event()

    def slow(b):
        started.append(b)
        if b == 0:
            first.wait(5)  # blocks 1 and 2 finish first, and wait their turn
        elif b >= 3:
            later.wait(0.3)  # both workers busy while the consumer stops
        return b * b

    results = engine.imap_blocks(slow, range(50), n_jobs=2)  # four blocks submitted ahead
    threading.Timer(0.2, first.set).start()
    assert [next(results) for _ in range(3)] == [0, 1, 4]
    results.close()  # block 5, submitted but not started, is cancelled; 6 on were never submitted
    assert {0, 1, 2, 3} <= set(started) <= {0, 1, 2, 3, 4}  # 4 runs if a worker took it before the close
    assert list(engine.imap_blocks(lambda b: -b, iter(range(9)), n_jobs=3)) == [-b for b in range(9)]
    assert list(engine.imap_blocks(lambda b: -b, range(3), n_jobs=1)) == [0, -1, -2]

    def fails_at_5(b):
        if b == 5:
            raise ValueError("block 5")
        return b

    got = []
    with pytest.raises(ValueError, match="block 5"):
        for value in engine.imap_blocks(fails_at_5, range(20), n_jobs=2):
            got.append(value)
    assert got == [0, 1, 2, 3, 4]


def test_set_threads_caps_numba_and_workers_follow(restore_engine):
    engine.set_threads(10_000)
    assert engine.threads() == 10_000 and numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    engine.set_threads(1)
    # pool workers run numba with the caller's thread count (numba's setting is per thread)
    assert engine.map_blocks(lambda _: numba.get_num_threads(), range(4), n_jobs=2) == [1, 1, 1, 1]
    assert engine.set_threads(None) == 1 and numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError,
                           match=re.escape("The 'n' parameter of set_threads must be a positive int or None")):
            engine.set_threads(bad)


def test_progress_counts_only_when_enabled(restore_engine):
    with engine.progress("quiet", total=5) as bar:
        bar.advance(5)
        assert engine._live["bar"] is None  # nothing is drawn or kept
    engine.set_progress(True)
    with engine.progress("Reading rows", total=10, unit="rows") as outer:
        outer.advance(4)
        with engine.progress("Blocks", unit="blocks") as inner:  # a second bar under the first
            inner.advance()
            engine.map_blocks(lambda _: outer.advance(2), range(3), n_jobs=2)  # from worker threads
            tasks = {t.description: t for t in engine._live["bar"].tasks}
            assert tasks["Reading rows"].completed == 10 and tasks["Reading rows"].total == 10
            assert tasks["Blocks"].completed == 1 and tasks["Blocks"].total is None
        assert [t.description for t in engine._live["bar"].tasks] == ["Reading rows"]
    assert engine._live["bar"] is None


def test_score_store_reports_progress(stores, restore_engine, monkeypatch):
    X, names, obs, paths = stores
    seen = []
    real = engine.progress

    def spy(description, total=None, unit=""):
        seen.append((description, total, unit))
        return real(description, total, unit)

    monkeypatch.setattr(engine, "progress", spy)
    engine.set_progress(True)
    score_store(paths["rows only"], "y", method="fisher", chunk_bytes=3000)
    score_store(paths["copy"], "bin", method="auc", chunk_bytes=3000)
    score_store(paths["copy"], "y", method="fisher", chunk_bytes=3000)  # moments by its column copy
    assert seen == [("Reading rows", 70, "rows"), ("Reading feature blocks", 400, "features"),
                    ("Reading feature blocks", 400, "features")]


# ---------------------------------------------------------------------------------------------
# the command line on a store


@pytest.mark.parametrize("text, value", [("4096", 4096), ("64K", 64 << 10), ("64M", 64 << 20), ("1G", 1 << 30),
                                         ("2gib", 2 << 30), ("1.5M", 3 << 19), ("512kb", 512 << 10)])
def test_chunk_bytes_sizes(text, value):
    args = build_parser().parse_args(["score", "d.gs.h5ad", "--target", "y", "-o", "r.tsv", "--chunk-bytes", text])
    assert args.chunk_bytes == value


@pytest.mark.parametrize("argv", [["--chunk-bytes", "0"], ["--chunk-bytes", "12X"], ["--chunk-bytes", "-5M"],
                                  ["--threads", "0"], ["--threads", "two"]])
def test_bad_run_options_are_usage_errors(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(["score", "d.gs.h5ad", "--target", "y", "-o", "r.tsv", *argv])
    assert exc.value.code == 2 and argv[0] in capsys.readouterr().err


def test_cli_score_on_a_store_in_bounded_memory(tmp_path, capsys, restore_engine):
    n, p = 3000, 3000
    X = _counts(n, p, 0.1, 5)  # 900,000 non-zeros: 10.8 MB of CSR, 72 MB dense
    rng = np.random.default_rng(5)
    ids = np.array([f"s{i}" for i in range(n)], dtype=object)
    names = np.array([f"k{j}" for j in range(p)], dtype=object)
    y = np.array(["R", "S"])[rng.integers(0, 2, n)]
    path = write_store(Dataset(X, ids, names, pd.DataFrame({"pheno": y}, index=ids)), tmp_path / "big.gs.h5ad")
    csr_bytes = X.data.nbytes + X.indices.nbytes
    refs = {m: gs.score(X, y, method=m, feature_names=names) for m in ("welch", "auc")}
    del X
    for method, ref in refs.items():
        out = tmp_path / f"{method}.tsv"
        argv = ["score", str(path), "--target", "pheno", "--method", method, "--chunk-bytes", "256K",
                "--threads", "2", "--fdr", "0.5", "-o", str(out)]
        # once untraced: the modules a command imports on first use are not data in flight
        assert main([*argv[:-1], str(tmp_path / f"warm-{method}.tsv")]) == 0
        tracemalloc.start()
        assert main(argv) == 0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # 256 KiB of data in flight; the rest is per-sample and per-feature (ids, names, outputs)
        assert peak < min(5 << 20, csr_bytes / 2), (method, peak)
        table = pd.read_csv(out, sep="\t")
        assert table["feature"].tolist() == ref.feature_names[ref.ranking].tolist()
        np.testing.assert_allclose(table["statistic"], ref.statistic[ref.ranking], rtol=1e-9)
        np.testing.assert_array_equal(table["selected"], ref.qvalues[ref.ranking] <= 0.5)
        prov = json.loads((tmp_path / f"{method}.tsv.json").read_text())
        assert prov["n_samples"] == n and len(prov["samples_used"]) == n
    assert "welch: 3000 samples x 3000 features" in capsys.readouterr().out
    assert engine._settings["threads"] is None  # --threads held for the run only


def test_cli_on_a_store_with_metadata_filters_and_select(stores, tmp_path):
    X, names, obs, paths = stores
    n = X.shape[0]
    ids = obs.index.to_numpy()
    rng = np.random.default_rng(9)
    meta = pd.DataFrame({"id": ids[::-1], "resistant": np.array(["yes", "no", "rare"])[rng.integers(0, 3, n)]})
    meta = meta[meta["id"] != "iso-3"]  # one store sample without metadata: left out
    meta.loc[meta.index[:2], "resistant"] = "tiny"  # a class of 2 samples: dropped by --min-count 3
    meta.to_csv(tmp_path / "meta.csv", index=False)
    keep = np.array([s in set(meta["id"]) for s in ids])
    labels = meta.set_index("id")["resistant"].reindex(ids).to_numpy()
    keep &= labels != "tiny"
    keep &= np.isin(labels, ["yes", "no", "tiny"])  # --classes yes,no,tiny
    train = keep & (obs["batch"].to_numpy() == "a")
    ref = gs.score(X[train], labels[train], method="welch", feature_names=names)
    for kind in ("copy", "rows only", "dense"):
        out = tmp_path / f"sel-{kind}.parquet"
        argv = ["select", str(paths[kind]), "--meta", str(tmp_path / "meta.csv"), "--id", "id",
                "--target", "resistant", "--classes", "yes,no,tiny", "--min-count", "3", "--group", "batch",
                "--train-groups", "a", "--method", "welch", "--top", "6", "--chunk-bytes", "2K", "-o", str(out)]
        assert main(argv) == 0
        frame = pd.read_parquet(out)
        chosen = ref.ranking[:6]
        assert list(frame.columns[:6]) == ["sample", "used_for_scoring", "y", "bin", "mic", "batch"]
        assert list(frame.columns[7:]) == list(names[chosen])  # after the 'resistant' column, best first
        assert list(frame["sample"]) == list(ids[keep])
        np.testing.assert_array_equal(frame["used_for_scoring"], train[keep])
        np.testing.assert_array_equal(frame[list(names[chosen])].to_numpy(), X[keep][:, chosen].toarray())
        prov = json.loads(out.with_name(out.name + ".json").read_text())
        assert prov["samples_used"] == list(ids[train]) and prov["n_samples"] == int(train.sum())


def test_cli_store_errors(stores, tmp_path, capsys):
    X, names, obs, paths = stores
    out = str(tmp_path / "r.tsv")
    assert main(["score", str(paths["copy"]), "--target", "nope", "-o", out]) == 1
    err = capsys.readouterr().err
    assert "Column(s) 'nope' not found among the sample columns kept with the store (`genosift convert --keep`): " \
        "'y', 'bin', 'mic', 'batch'" in err
    assert main(["score", str(paths["copy"]), "--target", "y", "--features-in-rows", "-o", out]) == 1
    assert "do not apply to a store" in capsys.readouterr().err
    (tmp_path / "t.csv").write_text("id,f1,f2,y\na,1,2,R\nb,0,7,S\nc,1,1,R\nd,3,0,S\n")
    assert main(["score", str(tmp_path / "t.csv"), "--target", "y", "--chunk-bytes", "1M", "-o", out]) == 1
    assert "--chunk-bytes sets the memory budget of scoring a store" in capsys.readouterr().err


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
def test_convert_dtype_stores_smaller_counts_that_score_the_same(tmp_path, capsys, dtype):
    """`convert --dtype`: counts in 1, 2 or 4 bytes, scored exactly as the float64 store; a count
    the type cannot hold is refused with the option that fixes it."""
    from genosift.io.datasets import write_synthetic_kmers

    src = tmp_path / "k.kmers.gz"
    pheno, markers = write_synthetic_kmers(src, n_samples=60, n_kmers=3000, n_markers=5, seed=3, compress=True)
    pheno.to_csv(tmp_path / "pheno.csv")
    stores = {}
    for kind in ("float64", dtype):
        stores[kind] = tmp_path / f"{kind}.gs.h5ad"
        assert main(["convert", str(src), "--meta", str(tmp_path / "pheno.csv"), "--id", "sample", "--dtype", kind,
                     "-o", str(stores[kind])]) == 0
    small, full = open_store(stores[dtype]), open_store(stores["float64"])
    x_small, x_full = small.to_dataset().X, full.to_dataset().X
    assert x_small.dtype == np.dtype(dtype) and x_full.dtype == np.float64
    assert (x_small != x_full).nnz == 0 and x_small.nnz == x_full.nnz
    for method in ("fisher", "welch", "auc"):
        a, b = score_store(stores[dtype], "phenotype", method=method), score_store(stores["float64"], "phenotype",
                                                                                   method=method)
        assert a.scores.tobytes() == b.scores.tobytes(), method
    big = tmp_path / "big.kmers"
    big.write_text("ACGT | s1:70000 s2:1\n")
    capsys.readouterr()
    assert main(["convert", str(big), "--dtype", "uint16", "-o", str(tmp_path / "big.gs.h5ad")]) == 1
    assert "holds exactly (up to 65535). Pass --dtype float64" in capsys.readouterr().err
    assert not (tmp_path / "big.gs.h5ad").exists()
    table = tmp_path / "t.csv"
    pd.DataFrame({"id": ["a", "b"], "g1": [0.5, 2.0]}).to_csv(table, index=False)
    out = str(tmp_path / "t.gs.h5ad")
    assert main(["convert", str(table), "--id-column", "id", "--dtype", "uint8", "-o", out]) == 1
    assert "does not convert exactly to dtype uint8. Pass --dtype float64 to keep" in capsys.readouterr().err
