"""A store scored and profiled by feature blocks: class-moment methods whose per-feature moments
outgrow the budget read the column copy (bit for bit the row stream's numbers), the command
line's profile is kept on disk (``StoredProfile``, bit for bit the in-memory profile), and a
store's names are decoded only for the rows shown (``NameBlob``)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.cli import main
from genosift.io import Dataset, open_store, write_store
from genosift.io.store import NameBlob
from genosift.report.outputs import ranking_frame
from genosift.scores import REGISTRY
from genosift.scoring import profile
from genosift.scoring import store as store_driver
from genosift.scoring.store import by_features, score_store
from genosift.scoring.stored_profile import StoredProfile, stored_profile
from genosift.sources import StoreSource
from genosift.stats import ClassMoments

pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")

MOMENT_METHODS = sorted(name for name, spec in REGISTRY.items() if spec.statistic is ClassMoments)
N, P = 90, 700


def _matrix(kind, seed=5):
    rng = np.random.default_rng(seed)
    X = sp.random(N, P, density=0.08, format="csr", random_state=seed)
    X.data = np.ceil(X.data * 9) if kind == "counts" else X.data * 3.7 - 0.4
    keep = np.ones(P)
    keep[3] = 0.0  # a feature nobody carries
    X = (X @ sp.diags(keep)).tocsr()
    X.eliminate_zeros()
    return X, rng


@pytest.fixture(scope="module", params=["counts", "reals"])
def store(request, tmp_path_factory):
    X, rng = _matrix(request.param)
    ids = np.array([f"s{i}" for i in range(N)], dtype=object)
    names = np.array([f"ACGT{j}" if j % 3 else f"k-é{j}" for j in range(P)], dtype=object)  # some UTF-8
    obs = pd.DataFrame({"five": np.array(list("abcde"))[rng.integers(0, 5, N)],
                        "two": np.array(["R", "S"])[rng.integers(0, 2, N)],
                        "mic": rng.normal(size=N)}, index=ids)
    path = write_store(Dataset(X, ids, names, obs), tmp_path_factory.mktemp("blocks") / "d.gs.h5ad")
    return X, names, obs, path


def _same_bits(a, b):
    for x, y in ((a.scores, b.scores), (a.statistic, b.statistic), (a.pvalues, b.pvalues)):
        assert (x is None) == (y is None)
        if x is not None:
            assert np.array_equal(x.view(np.int64), y.view(np.int64))


@pytest.mark.parametrize("method", MOMENT_METHODS)
def test_moments_by_features_equal_the_row_stream_bit_for_bit(store, method, monkeypatch):
    X, _, obs, path = store
    spec = REGISTRY[method]
    target = None if spec.task == "unsupervised" else ("two" if spec.binary_only else "five")
    rows = np.flatnonzero(np.arange(N) % 4 != 1)
    for samples, af in ((None, {}), (rows, {}), (None, {"min_af": 0.05, "max_af": 0.9})):
        monkeypatch.setattr(store_driver, "by_features", lambda *a: False)
        by_rows = score_store(path, target, method=method, samples=samples, **af)
        monkeypatch.undo()
        streamed = []
        real = ClassMoments.from_csr_stream.__func__
        monkeypatch.setattr(ClassMoments, "from_csr_stream",
                            classmethod(lambda cls, *a: streamed.append(1) or real(cls, *a)))
        by_blocks = score_store(path, target, method=method, samples=samples, chunk_bytes=20_000, **af)
        monkeypatch.undo()
        assert not streamed, "a store with its column copy is read by feature blocks"
        _same_bits(by_blocks, by_rows)
        y = None if target is None else obs[target].to_numpy()
        kept = slice(None) if samples is None else samples
        in_memory = gs.score(X[kept], None if y is None else y[kept], method=method, **af)
        _same_bits(by_blocks, in_memory)
        assert by_blocks.ranking.tolist() == by_rows.ranking.tolist()


def test_by_features_whenever_the_store_has_its_column_copy(store, tmp_path):
    X, names, obs, path = store
    spec, s = REGISTRY["fisher"], open_store(path)
    assert by_features(s, spec)
    rows_only = write_store(Dataset(X, np.array(obs.index), names, obs), tmp_path / "r.gs.h5ad", column_copy=False)
    assert not by_features(open_store(rows_only), spec)  # no column copy: rows
    dense = write_store(Dataset(X.toarray(), np.array(obs.index), names, obs), tmp_path / "d.gs.h5ad")
    assert not by_features(open_store(dense), spec)
    assert not by_features(s, REGISTRY["auc"])  # not a moment method


def _profiles(store, kind, target, samples, ranks):
    X, _, obs, path = store
    y = None if target is None else obs[target].to_numpy()
    kept = np.arange(N) if samples is None else samples
    y = None if y is None else y[kept]
    ref = profile(X[kept], y, kind="auto" if kind == "none" else kind)
    return ref, stored_profile(StoreSource(open_store(path), y, rows=samples, chunk_bytes=30_000), kind, ranks=ranks)


@pytest.mark.parametrize("kind,target", [("classes", "five"), ("classes", "two"), ("numeric", "mic"),
                                         ("none", None)])
def test_stored_profile_equals_the_profile_in_memory(store, kind, target, monkeypatch):
    monkeypatch.setattr(StoredProfile, "READ", 1000)  # reads of a few records: the pieces join
    rng = np.random.default_rng(1)
    rows = np.flatnonzero(np.arange(N) % 3 != 0)
    ranking = rng.permutation(P)
    ranks = np.empty(P, dtype=np.int64)
    ranks[ranking] = np.arange(1, P + 1)
    for samples, order in ((None, None), (rows, ranks)):  # feature order, or a ranking's
        ref, stored = _profiles(store, kind, target, samples, order)
        try:
            shuffled = np.r_[rng.permutation(P), 5, 5, 0]  # any order, repeats too
            for wanted in (shuffled, ranking[:64], ranking[64:300], ranking[::7], np.arange(P)):
                pd.testing.assert_frame_equal(stored.columns(wanted), ref.columns(wanted), check_exact=True)
            pd.testing.assert_frame_equal(stored.columns(), ref.columns(), check_exact=True)
            assert [stored.direction(j) for j in shuffled[:50]] == [ref.direction(j) for j in shuffled[:50]]
            assert stored.effect_column == ref.effect_column and stored.n_features == P
            assert stored.records([]).shape == (0, stored.width)
        finally:
            stored.close()


@pytest.mark.parametrize("method,target", [("fisher", "five"), ("welch", "two"), ("pearson", "mic"),
                                           ("auc", "two")])
def test_cli_ranking_of_a_store_equals_the_table_in_memory(store, method, target, tmp_path):
    """The whole ranking table of ``score`` on a store (profile on disk, names taken as written,
    moments by feature blocks) equals the table built from its result and the profile of the data
    in memory, value for value."""
    X, names, obs, path = store
    out = tmp_path / f"{method}.tsv"
    argv = ["score", str(path), "--method", method, "--chunk-bytes", "20000", "--top", "17", "-o", str(out)]
    assert main([*argv, "--target", target]) == 0
    assert not list(tmp_path.glob(".genosift-profile.*")), "the profile's file is unlinked"
    y = obs[target].to_numpy()
    result = score_store(path, y, method=method, chunk_bytes=20_000)  # pearson's rows merge: its own rounding
    mask = np.zeros(P, dtype=bool)
    mask[result.top_indices(17)] = True
    expected = ranking_frame(result, mask, profile(X, y, kind="numeric" if method == "pearson" else "classes"),
                             patterns=gs.count_patterns(X, binary=False))
    got = pd.read_csv(out, sep="\t", keep_default_na=False, na_values=[""], float_precision="round_trip")
    expected = expected.astype({c: object for c in expected.columns if expected[c].dtype == object})
    assert got.columns.tolist() == expected.columns.tolist()
    for c in got.columns:
        a, b = got[c].to_numpy(), expected[c].to_numpy()
        if b.dtype.kind == "f":
            assert np.array_equal(a.astype(np.float64), b, equal_nan=True), c
        else:
            assert ["" if v != v else str(v) for v in a] == ["" if v is None else str(v) for v in b], c


def test_names_are_decoded_only_for_the_rows_shown(store):
    _, names, obs, path = store
    s = open_store(path)
    res = score_store(s, obs["five"].to_numpy(), method="fisher")
    frame = res.to_frame(rows=res.ranking[:10])
    assert s._names is None, "showing ten rows must not decode every name"
    assert frame["feature"].tolist() == names[res.ranking[:10]].tolist()
    assert res.top(5).tolist() == names[res.ranking[:5]].tolist() and s._names is None
    assert res.feature_names.tolist() == names.tolist()  # all of them, when asked for


@pytest.mark.parametrize("names", [[], [""], ["", ""], ["a"], ["ACGT", "é", "", "TT"]])
@pytest.mark.parametrize("piece", [1, 2, 3, 1 << 24])
def test_name_blob_takes_any_names(names, piece):
    data = np.frombuffer("\x00".join(names).encode(), dtype=np.uint8)
    blob = NameBlob(data, len(names), piece)  # the names' ends found a piece of the blob at a time
    assert len(blob) == len(names)
    order = np.arange(len(names))[::-1]
    assert blob.take(order).tolist() == [names[i] for i in order]
    wrong = [len(names) + 2] + ([len(names) - 1] if len(names) > 1 else []) + ([len(names) + 1] if names else [])
    for p in wrong:  # one name more or fewer than the blob holds
        with pytest.raises(ValueError, match="names"):
            NameBlob(data, p, piece)


@pytest.mark.parametrize("layout", ["rows only", "dense"])
def test_stored_profile_of_stores_without_a_column_copy(store, layout, tmp_path):
    X, names, obs, _ = store
    data = X.toarray() if layout == "dense" else X
    path = write_store(Dataset(data, np.array(obs.index), names, obs), tmp_path / "s.gs.h5ad",
                       **({"column_copy": False} if layout == "rows only" else {}))
    y = obs["five"].to_numpy()
    stored = stored_profile(StoreSource(open_store(path), y, chunk_bytes=30_000), "classes")
    try:  # the profile of the same data in memory, dense or sparse as stored
        pd.testing.assert_frame_equal(stored.columns(), profile(data, y).columns(), check_exact=True)
    finally:
        stored.close()


def test_no_room_for_the_profile_is_a_clear_error(store, tmp_path, monkeypatch, capsys):
    """A full disk beside the output stops `score` before any page is written, naming the space
    it needs and where; the output is not written."""
    import errno
    import os

    _, _, _, path = store

    def full(fd, offset, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    out = tmp_path / "r.tsv"
    code = main(["score", str(path), "--target", "five", "--method", "fisher", "-o", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and "No room for the table's class profile" in err and str(tmp_path) in err, err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_a_file_system_without_fallocate_still_gets_the_profile(store, tmp_path, monkeypatch):
    import errno
    import os

    _, _, _, path = store

    def unsupported(fd, offset, size):
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    monkeypatch.setattr(os, "posix_fallocate", unsupported, raising=False)
    out = tmp_path / "r.tsv"
    assert main(["score", str(path), "--target", "five", "--method", "fisher", "-o", str(out)]) == 0
    assert len(pd.read_csv(out, sep="\t")) == P


def test_a_stores_names_index_like_an_array(store):
    _, names, _, path = store
    lazy = open_store(path).names_loader()
    mask = np.arange(P) % 7 == 3
    assert len(lazy) == P and lazy[0] == names[0] and lazy[-1] == names[-1]
    for index in (slice(3, 40, 5), slice(None, None, -9), np.array([9, 2, 9]), mask, [P - 1, 0]):
        assert lazy[index].tolist() == names[index].tolist()
    with pytest.raises(IndexError):
        lazy[P]
    assert np.asarray(lazy).tolist() == list(lazy) == names.tolist()


def _reads(monkeypatch):
    """Count the passes over a store: each call of ``row_chunks`` or ``feature_blocks``."""
    from genosift.io.store import Store

    calls = []
    for name in ("row_chunks", "feature_blocks"):
        original = getattr(Store, name)

        def counted(self, *args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Store, name, counted)
    return calls


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("method,target", [("fisher", "five"), ("auc", "two"), ("chi2", "two"), ("variance", None),
                                           ("pearson", "mic")])
def test_the_scoring_pass_makes_the_profile_of_a_two_pass_run(store, method, target, dense, tmp_path, monkeypatch):
    """``score_and_profile`` reads a store once where the scoring pass reads it as the profile's own
    pass would, and its profile is the one the profile's own pass makes, on the rows kept and in
    the order of the ranking: bit for bit for counts (sums of whole numbers are exact in any
    order), to the last digits for real values (summed by rows or by whole columns as each pass
    reads them)."""
    from genosift.scoring.forms import profile_source, score_and_profile
    from genosift.scoring.profiles import kind_for
    from genosift.sources import StoreRows

    X, names, obs, path = store
    s = open_store(path)
    if dense:
        s = open_store(write_store(Dataset(X.toarray(), s.sample_ids, names, obs), tmp_path / "dense.gs.h5ad"))
    rows = np.flatnonzero(np.arange(N) % 4 != 1)
    y = None if target is None else obs[target].to_numpy()[rows]
    spec = gs.get_method(method)
    kind = kind_for(method, y)
    data = StoreRows(s, rows, 30_000).source(y)
    calls = _reads(monkeypatch)
    res, prof = score_and_profile(data, spec, spec.options, kind=kind, folder=tmp_path)
    passes = len(calls)
    monkeypatch.undo()
    try:
        _same_bits(res, score_store(path if not dense else s.path, y, method=method, samples=rows, chunk_bytes=30_000))
        alone = StoreRows(s, rows, 30_000).source(None if kind == "none" else y)
        separate = profile_source(alone, "auto" if kind == "none" else kind, on_disk=True, folder=tmp_path,
                                  ranks=res.ranks)
        try:
            wanted = np.r_[res.ranking, res.ranking[::-5]]
            counts = bool(np.all(X.data == np.round(X.data)))
            close = dict(rtol=1e-12, atol=1e-15)
            pd.testing.assert_frame_equal(prof.columns(wanted), separate.columns(wanted), check_exact=counts, **close)
            reference = profile(X[rows], y, kind="auto" if kind == "none" else kind)
            pd.testing.assert_frame_equal(prof.columns(wanted), reference.columns(wanted),
                                          check_exact=counts and kind != "numeric", **close)
        finally:
            getattr(separate, "close", lambda: None)()
    finally:
        getattr(prof, "close", lambda: None)()
    # the profile rides along the pass that reads the store as its own would: a column copy's
    # feature blocks, a dense store's row chunks; otherwise it reads the store once more
    by_blocks = spec.streaming != "rows" or by_features(s, spec)
    assert passes == (1 if by_blocks != dense else 2), calls
    assert not list(tmp_path.glob(".genosift-profile.*")), "the profile's files are unlinked"


@pytest.mark.parametrize("method", ["logistic", "dcor"])
@pytest.mark.parametrize("dense", [False, True])
def test_each_distinct_column_of_a_store_is_fitted_once(tmp_path, monkeypatch, method, dense):
    """k-mers come many to a pattern, spread over the store: the blocks of a pass of a costly
    method (registered ``distinct="all"``) fit each distinct column once in all, and the results
    are the same bits as fitting every column."""
    import dataclasses
    import functools

    rng = np.random.default_rng(7)
    n, patterns = 60, 40
    base = (rng.random((n, patterns)) < 0.3).astype(np.uint8)
    X = base[:, rng.integers(0, patterns, 900)]  # each pattern ~22 times, in every block
    names = np.array([f"k{j}" for j in range(X.shape[1])], dtype=object)
    ids = np.array([f"s{i}" for i in range(n)], dtype=object)
    y = rng.integers(0, 2, n)
    data = X if dense else sp.csr_matrix(X)
    path = write_store(Dataset(data, ids, names, pd.DataFrame({"y": y}, index=ids)), tmp_path / "p.gs.h5ad")
    spec = REGISTRY[method]
    fitted = []

    @functools.wraps(spec.func)  # the method's signature, which its options are read from
    def counting(block, target, **options):
        fitted.append(block.shape[1])
        return spec.func(block, target, **options)

    covariates = rng.normal(size=(n, 2)) if spec.covariates else None
    target = y if spec.task != "regression" else rng.normal(size=n)
    monkeypatch.setitem(REGISTRY, method, dataclasses.replace(spec, func=counting))
    once = score_store(path, target, method=method, covariates=covariates, chunk_bytes=8_000)
    distinct = np.unique(X, axis=1).shape[1]
    assert sum(fitted) == distinct and len(fitted) > 1  # several blocks, each column fitted once in all
    monkeypatch.setitem(REGISTRY, method, dataclasses.replace(spec, distinct=False))
    every = score_store(path, target, method=method, covariates=covariates, chunk_bytes=8_000)
    _same_bits(once, every)
    for name in once.columns or {}:
        a, b = once.columns[name], every.columns[name]
        assert np.array_equal(a, b) if a.dtype == object else np.array_equal(a, b, equal_nan=True)
