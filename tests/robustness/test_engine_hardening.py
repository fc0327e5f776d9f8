"""The run's settings and a store's reads hold against a careless or hostile environment.

A thread count numba cannot use is named with its fix before numba reads it (exit 1, every
command); a budget of a few bytes reads a store in a bounded number of reads (counted, not
timed); a store replaced or edited while a command streams it is refused, never mixed.
"""
import collections
import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.cli import main
from genosift.core import environment as engine
from genosift.io import Dataset, open_store, write_store
from genosift.io.store import read as store_read
from genosift.io.store.columns import GATHER_PASSES

# the thread count in the environment ----------------------------------------------------------

@pytest.mark.parametrize("value", ["0", "-1", "abc", "99999999"])
@pytest.mark.parametrize("argv", [["methods"], ["methods", "welch"], ["score", "x.csv", "--target", "c", "-o", "o.tsv"],
                                  ["--version"]], ids=["methods", "methods-welch", "score", "version"])
def test_a_thread_count_numba_cannot_use_is_named_with_its_fix_exit_1(monkeypatch, capsys, value, argv):
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"NUMBA_NUM_THREADS={value!r}, which must be a whole number of threads from 1 to " \
           f"{engine.max_env_threads()}" in err
    assert "unset NUMBA_NUM_THREADS" in err and "--threads N" in err and "invalid" not in err


@pytest.mark.parametrize("value, bad", [("4", False), (" 2 ", False), ("", False), ("0", True), ("-3", True),
                                        ("1.5", True), ("٣", True), ("2000000", True)])
def test_the_library_names_the_thread_variable(monkeypatch, value, bad):
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    if not bad:
        assert engine.thread_setting_error() is None
        engine.check_thread_setting()
        return
    with pytest.raises(ValueError, match=r"^The environment sets NUMBA_NUM_THREADS=.*set_threads"):
        engine.check_thread_setting()


def test_an_unset_thread_count_is_fine(monkeypatch):
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    assert engine.thread_setting_error() is None


# stores -------------------------------------------------------------------------------------

def _dataset(n, p, seed=0, sparse=True):
    rng = np.random.RandomState(seed)
    X = (rng.rand(n, p) < 0.3).astype(np.float64) * rng.randint(1, 4, size=(n, p))
    ids = np.array([f"s{i}" for i in range(n)], dtype=object)
    obs = pd.DataFrame({"c": np.where(np.arange(n) % 2, "a", "b"), "t": np.arange(n) % 7 * 1.0}, index=ids)
    return Dataset(sp.csr_matrix(X) if sparse else X, ids, np.array([f"f{j}" for j in range(p)], dtype=object), obs)


@pytest.fixture
def reads(monkeypatch):
    """The number of reads of each stored vector, and a hook run after every read."""
    counts, after = collections.Counter(), []
    original = store_read.StoredVector.read

    def read(self, *args, **kwargs):
        counts[self.name] += 1
        out = original(self, *args, **kwargs)
        for hook in list(after):
            hook()
        return out

    monkeypatch.setattr(store_read.StoredVector, "read", read)
    return counts, after


@pytest.mark.parametrize("column_copy", [False, True], ids=["rows-only", "column-copy"])
@pytest.mark.parametrize("method", ["welch", "auc"])
def test_a_budget_of_one_byte_reads_a_store_in_a_bounded_number_of_reads(tmp_path, monkeypatch, reads, column_copy,
                                                                       method):
    counts, _ = reads
    monkeypatch.setattr("genosift.io.store.access.ROW_CHUNKS", 16)
    ds = _dataset(3000, 12)
    store = open_store(write_store(ds, tmp_path / "d.gs.h5ad", column_copy=column_copy))
    y = np.asarray(ds.obs["c"])
    got = gs.score(store, y, method=method, chunk_bytes=1)
    np.testing.assert_allclose(got.scores, gs.score(ds.X, y, method=method).scores, rtol=1e-10)
    most = max(counts.values())
    # whole rows per chunk: about 2 * ROW_CHUNKS chunks a pass, and at most ~GATHER_PASSES passes
    bound = (2 * 16 + 2) if column_copy or method == "welch" else (2 * GATHER_PASSES + 2) ** 2
    assert most <= bound and most < 3000, dict(counts)
    assert counts["/X/data"] == counts["/X/indices"]


def test_feature_blocks_of_a_tiny_budget_are_bounded_and_cover_every_feature(tmp_path, monkeypatch):
    monkeypatch.setattr("genosift.io.store.access.ROW_CHUNKS", 8)
    for sparse in (True, False):
        ds = _dataset(50, 400, sparse=sparse)
        store = open_store(write_store(ds, tmp_path / f"b{sparse}.gs.h5ad", overwrite=True))
        blocks = list(store.feature_blocks(chunk_bytes=1))
        assert len(blocks) <= 2 * 8 + 1
        assert blocks[0][0] == 0 and blocks[-1][1] == 400 and all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
        X = ds.X.toarray() if sparse else ds.X
        for j0, j1, block in blocks:
            np.testing.assert_array_equal(block.toarray() if sparse else block, X[:, j0:j1])


# a store changed while it is read -----------------------------------------------------------

def _replace(path, tmp_path):
    other = write_store(_dataset(60, 12, seed=5), tmp_path / "other.gs.h5ad", overwrite=True)
    os.replace(other, path)


def _edit(path, tmp_path):
    """Change one stored value in place (same size, same inode) and move the time on, as a writer would."""
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([(byte[0] + 1) % 256]))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


def _cli(command, extra=()):
    def run(path, out):
        return main([command, str(path), *extra, "-o", str(out), "--quiet"])
    return run


_DRIVERS = {
    "score-rows": _cli("score", ["--target", "c", "--method", "welch"]),
    "score-blocks": _cli("score", ["--target", "c", "--method", "auc"]),
    "patterns": _cli("patterns", ["--target", "c"]),
    "pairs": _cli("pairs", ["--target", "c", "--top", "5"]),
    "enet": _cli("enet", ["--target", "c", "--folds", "2", "--n-lambdas", "4"]),
    "evaluate": _cli("evaluate", ["--target", "c", "--k", "2", "--cv", "2"]),
}


@pytest.mark.parametrize("change", [_replace, _edit], ids=["replaced", "edited"])
@pytest.mark.parametrize("driver", list(_DRIVERS))
def test_a_store_changed_between_reads_is_refused_by_every_command(tmp_path, reads, capsys, driver, change):
    _, after = reads
    path = write_store(_dataset(60, 12), tmp_path / "d.gs.h5ad")
    done = []

    def once():
        if not done:
            done.append(True)
            change(path, tmp_path)

    after.append(once)
    out = tmp_path / ("out" if driver == "evaluate" else "out.tsv")
    code = _DRIVERS[driver](path, out)
    err = capsys.readouterr().err
    assert done, "the command read no stored data"
    assert code == 1 and f"The store {str(path)!r} changed while it was read" in err, err
    assert "run again when nothing writes it" in err and not out.exists()


@pytest.mark.parametrize("change", [_replace, _edit], ids=["replaced", "edited"])
def test_a_profile_of_a_store_changed_between_reads_is_refused(tmp_path, reads, change):
    _, after = reads
    path = write_store(_dataset(60, 12), tmp_path / "d.gs.h5ad")
    store = open_store(path)
    after.append(lambda: after.clear() or change(path, tmp_path))
    with pytest.raises(ValueError, match="changed while it was read"):
        gs.profile(store, "c")


def test_an_unchanged_store_reads_as_before(tmp_path, reads):
    counts, _ = reads
    ds = _dataset(60, 12)
    store = open_store(write_store(ds, tmp_path / "d.gs.h5ad"))
    y = np.asarray(ds.obs["c"])
    np.testing.assert_allclose(gs.score(store, y, method="welch").scores, gs.score(ds.X, y, method="welch").scores)
    assert sum(counts.values()) > 0
    with store.reader() as r:
        np.testing.assert_array_equal(r.rows(0, 5).toarray(), ds.X[:5].toarray())


# pairs: what is kept, and missing values --------------------------------------------------------

def _pairs_data(n=40, p=12, seed=2):
    rng = np.random.RandomState(seed)
    return (rng.rand(n, p) < 0.5).astype(np.float64), np.arange(n) % 2


def test_a_top_above_the_pairs_that_exist_keeps_them_all(monkeypatch):
    X, y = _pairs_data()
    monkeypatch.setattr("genosift.scoring.pairs.MAX_TOP", 100)  # 66 pairs exist: 10**12 asked keeps the 66
    res = gs.score_pairs(X, y, top=10**12)
    assert len(res.to_frame()) == 12 * 11 // 2
    assert res.to_frame().iloc[:5].equals(gs.score_pairs(X, y, top=5).to_frame())


def test_a_top_beyond_what_memory_holds_is_refused_with_the_largest_accepted(monkeypatch, tmp_path, capsys):
    X, y = _pairs_data()
    monkeypatch.setattr("genosift.scoring.pairs.MAX_TOP", 10)
    with pytest.raises(ValueError, match=r"keeps at most 10 pairs in memory; 66 of the 66 pairs .* Pass top=10"):
        gs.score_pairs(X, y, top=10**12)
    data = tmp_path / "x.csv"
    pd.DataFrame(X, index=[f"s{i}" for i in range(40)]).add_prefix("f").rename_axis("id").assign(c=y).to_csv(data)
    assert main(["pairs", str(data), "--target", "c", "--top", "1000000000000", "-o", str(tmp_path / "p.tsv"),
                 "--quiet"]) == 1
    assert "Pass --top 10 or fewer" in capsys.readouterr().err and not (tmp_path / "p.tsv").exists()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_missing_value_given_to_pairs_is_an_error_naming_the_feature_as_in_score(tmp_path, bad):
    X, y = _pairs_data()
    X[3, 4] = bad
    with pytest.raises(ValueError, match=r"X contains NaN or infinity in feature\(s\) 'x4'"):
        gs.score_pairs(X, y)
    with pytest.raises(ValueError, match=r"X contains NaN or infinity in feature\(s\) 'x4'"):
        gs.score(X, y, method="welch")
    Xs = sp.csr_matrix(X)
    with pytest.raises(ValueError, match=r"NaN or infinity in feature\(s\) 'f4'"):
        gs.score_pairs(Xs, y, feature_names=[f"f{j}" for j in range(12)])
    ds = Dataset(Xs, np.array([f"s{i}" for i in range(40)], dtype=object), np.array([f"k{j}" for j in range(12)],
                                                                                  dtype=object))
    store = open_store(write_store(ds, tmp_path / "n.gs.h5ad"))
    with pytest.raises(ValueError, match=r"NaN or infinity in feature\(s\) 'k4'"):
        gs.score_pairs(store, y)
