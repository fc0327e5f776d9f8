"""Identical columns scored once: ``distinct_columns`` is exact, and every method registered
``distinct`` gives, bit for bit, what it gives when every column is scored, through every driver."""
from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.core import distinct as _distinct
from genosift.core.distinct import distinct_columns
from genosift.io import Dataset, write_store
from genosift.scores import register

DISTINCT = sorted(m for m in gs.REGISTRY if gs.get_method(m).distinct and not gs.get_method(m).kinship)  # lmm: test_lmm


def _duplicated(rng, n=40, patterns=25, p=120, counts=False):
    """An ``n x p`` matrix of ``patterns`` distinct columns, repeated in a shuffled order."""
    base = (rng.random((n, patterns)) < 0.4) * (rng.integers(1, 5, (n, patterns)) if counts else 1)
    return base[:, rng.integers(0, patterns, p)].astype(np.float64)


def _check(M, first, inverse):
    dense = M.toarray() if sp.issparse(M) else np.asarray(M)
    assert np.array_equal(dense[:, first][:, inverse], dense)
    assert np.all(np.diff(first) > 0) and first.dtype.kind == "i"
    # each kept column is the first of its kind
    assert np.array_equal(first[inverse[first]], first)
    seen = {}
    for j in range(dense.shape[1]):
        seen.setdefault(dense[:, j].tobytes(), j)
    assert sorted(seen.values()) == first.tolist()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.uint16, np.int64, bool])
def test_distinct_columns_of_arrays_and_csc_matrices(dtype):
    rng = np.random.default_rng(1)
    M = _duplicated(rng, counts=dtype is not bool).astype(dtype)
    first, inverse = distinct_columns(M)
    _check(M, first, inverse)
    assert first.size == np.unique(M, axis=1).shape[1]
    sparse = distinct_columns(sp.csc_matrix(M))
    assert np.array_equal(sparse[0], first) and np.array_equal(sparse[1], inverse)
    fortran = distinct_columns(np.asfortranarray(M))
    assert np.array_equal(fortran[0], first) and np.array_equal(fortran[1], inverse)


def test_all_distinct_gives_none_and_csr_is_refused():
    assert distinct_columns(np.eye(5)) is None
    assert distinct_columns(np.ones((3, 1))) is None
    assert distinct_columns(np.ones((3, 0))) is None
    with pytest.raises(TypeError, match="CSC"):
        distinct_columns(sp.csr_matrix(np.ones((2, 2))))


def test_identical_means_the_same_bits_and_the_same_stored_entries():
    """-0.0 and 0.0, or an explicitly stored zero, make columns distinct: never wrongly merged."""
    assert distinct_columns(np.array([[0.0, -0.0], [1.0, 1.0]])) is None
    assert distinct_columns(np.array([[np.nan, np.nan], [1.0, 1.0]]))[0].tolist() == [0]
    M = sp.csc_matrix((np.array([1.0, 0.0, 1.0]), np.array([0, 1, 0]), np.array([0, 2, 3])), shape=(2, 2))
    assert distinct_columns(M) is None


def test_hash_collisions_are_resolved_by_comparing_values(monkeypatch):
    """Every column hashed alike: the comparisons alone decide, and decide right."""
    rng = np.random.default_rng(2)
    M = _duplicated(rng, counts=True)
    expected = distinct_columns(M)
    monkeypatch.setattr(_distinct, "_hashes", lambda *args: np.zeros(args[4], dtype=np.uint64))
    for form in (M, sp.csc_matrix(M)):
        got = distinct_columns(form)
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


@pytest.mark.parametrize("threads", [1, 2])
def test_many_columns_on_any_number_of_threads(threads):
    """Thousands of columns in hundreds of groups, the runs of equal hashes split between threads;
    and two columns built so that their one stored pair mixes to the same word (the hash of a
    column is a sum over its pairs): equal hashes, told apart by their values."""
    from genosift.core import engine

    rng = np.random.default_rng(5)
    M = _duplicated(rng, n=60, patterns=400, p=6000, counts=True)
    row = np.uint64(0xD6E8FEB86659FD93)
    with np.errstate(over="ignore"):  # the wrapping products the hash takes
        bits = np.array([1.0]).view(np.uint64)[0] ^ (np.uint64(3) * row) ^ (np.uint64(7) * row)
    twin = np.zeros((60, 2))
    twin[3, 0], twin[7, 1] = 1.0, np.array([bits], dtype=np.uint64).view(np.float64)[0]
    M = np.hstack([M, twin])
    C = sp.csc_matrix(M)
    previous = engine.set_threads(threads)
    try:
        h = _distinct._hashes(np.empty((0, 0), np.uint64), C.indptr, C.indices, C.data.view(np.uint64),
                              C.shape[1], False)
        assert h[-1] == h[-2]  # the crafted pair collides
        first, inverse = distinct_columns(C)
    finally:
        engine.set_threads(previous)
    _check(C, first, inverse)
    assert {M.shape[1] - 2, M.shape[1] - 1} <= set(first.tolist())


def test_the_per_feature_model_fits_are_registered_distinct():
    assert {"logistic", "regression", "moderated_t"} <= set(DISTINCT)
    with pytest.raises(ValueError, match="column blocks"):
        register("bad", task="classification", invariance="none", statistic=object, distinct=True, formula="",
                    reference="")


@pytest.fixture
def every_column(monkeypatch):
    """``plain(name)``: the method with every column scored (the registry entry swapped for the
    call); ``widths``: how many columns the method's function was given, call by call."""
    widths = []

    def plain(name, call):
        spec = gs.get_method(name)
        monkeypatch.setitem(gs.REGISTRY, name, dataclasses.replace(spec, distinct=False))
        try:
            return call()
        finally:
            monkeypatch.setitem(gs.REGISTRY, name, spec)

    def counted(name):
        spec = gs.get_method(name)

        @functools.wraps(spec.func)  # the method's signature: its options
        def func(block, target, **options):
            widths.append(block.shape[1])
            return spec.func(block, target, **options)

        monkeypatch.setitem(gs.REGISTRY, name, dataclasses.replace(spec, func=func))

    return plain, counted, widths


def _target(spec, rng, n):
    if spec.task == "regression":
        return rng.normal(size=n)
    return np.repeat([0, 1], n // 2)


def _frames_identical(a, b):
    fa, fb = a.to_frame(), b.to_frame()
    assert list(fa.columns) == list(fb.columns) and list(fa.index) == list(fb.index)
    for name in fa.columns:
        x, y = fa[name].to_numpy(), fb[name].to_numpy()
        if x.dtype == object:
            assert list(x) == list(y), name
        else:
            assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes(), name


@pytest.mark.parametrize("form", ["dense", "csr", "csc", "frame"])
@pytest.mark.parametrize("method", DISTINCT)
def test_scores_of_distinct_columns_equal_scoring_every_column(method, form, every_column):
    plain, counted, widths = every_column
    spec = gs.get_method(method)
    rng = np.random.default_rng(3)
    M = _duplicated(rng, counts=not spec.binary_only)
    M[:, 7] = 0.0  # a constant column among them
    y = _target(spec, rng, M.shape[0])
    covariates = rng.normal(size=(M.shape[0], 2)) if spec.covariates else None
    X = {"dense": M, "csr": sp.csr_matrix(M), "csc": sp.csc_matrix(M),
         "frame": pd.DataFrame(M, columns=[f"k{j}" for j in range(M.shape[1])])}[form]
    reference = plain(method, lambda: gs.score(X, y, method=method, covariates=covariates))
    counted(method)
    got = gs.score(X, y, method=method, covariates=covariates)
    _frames_identical(got, reference)
    assert sum(widths) == np.unique(M, axis=1).shape[1]


@pytest.mark.parametrize("method", DISTINCT)
def test_store_and_dask_blocks_score_their_distinct_columns_once(method, every_column, tmp_path):
    pytest.importorskip("anndata")
    plain, counted, widths = every_column
    spec = gs.get_method(method)
    rng = np.random.default_rng(4)
    M = _duplicated(rng, n=30, p=200, counts=not spec.binary_only)
    y = _target(spec, rng, M.shape[0])
    path = tmp_path / "d.h5ad"
    write_store(Dataset(sp.csr_matrix(M), [f"s{i}" for i in range(M.shape[0])], [f"k{j}" for j in range(M.shape[1])]),
                path)
    # blocks of 64 columns: each block's duplicates are found within the block
    reference = plain(method, lambda: gs.score(str(path), y, method=method, chunk_bytes=64 * 8 * 30))
    counted(method)
    got = gs.score(str(path), y, method=method, chunk_bytes=64 * 8 * 30)
    _frames_identical(got, reference)
    assert max(widths) <= 64 and sum(widths) < M.shape[1]
    memory = gs.score(M, y, method=method, feature_names=[f"k{j}" for j in range(M.shape[1])])
    _frames_identical(memory, reference)
    da = pytest.importorskip("dask.array", reason="Dask scoring needs dask: pip install 'genosift[dask]'")
    widths.clear()
    on_dask = gs.score(da.from_array(M, chunks=(30, 64)), y, method=method, scheduler="synchronous",
                       feature_names=[f"k{j}" for j in range(M.shape[1])])
    _frames_identical(on_dask, reference)
    assert max(widths) <= 64 and sum(widths) < M.shape[1]
