"""presence(), with and without a copy, in every sparse layout; carriers in one pass."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from genosift.core.transforms import presence, zeros_and_ones
from genosift.scores import carriers


def _values():
    """Counts with negatives, explicit zeros and NaN, as a dense reference and its stored entries."""
    rng = np.random.default_rng(11)
    X = rng.poisson(0.7, size=(40, 25)).astype(np.float64)
    X[rng.random(X.shape) < 0.1] *= -1
    X[3, 4] = np.nan
    X[7, 0] = -0.0
    return X


def _same(A, B):
    """The same stored entries, NaN included."""
    A, B = A.tocoo(), B.tocoo()
    return (np.array_equal(A.row, B.row) and np.array_equal(A.col, B.col)
            and np.array_equal(A.data, B.data, equal_nan=True))


def _expected(X):
    out = (X > 0).astype(np.float64)
    out[np.isnan(X)] = np.nan
    return out


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("copy", [True, False])
def test_presence_of_sparse_counts(fmt, copy):
    X = _values()
    M = sp.csr_matrix(X).asformat(fmt)
    M.data[np.flatnonzero(~np.isnan(M.data))[::5]] = 0.0  # explicit zeros stored: dropped from the result
    before = M.copy()
    P = presence(M, copy=copy)
    assert P.format == fmt and P.dtype == np.float64
    np.testing.assert_array_equal(P.toarray(), _expected(before.toarray()))
    assert not np.any(P.data == 0)  # values at or below 0 left the stored entries
    assert np.isnan(P.data).sum() == 1  # NaN stays NaN
    if copy or fmt == "coo":  # coo goes through CSR: the input is never rewritten
        assert _same(M, before)


@pytest.mark.parametrize("dtype", [np.int16, np.uint32, np.float32])
def test_presence_without_a_copy_leaves_other_value_types_alone(dtype):
    X = np.nan_to_num(_values()).astype(dtype)
    M = sp.csc_matrix(X)
    before = M.copy()
    P = presence(M, copy=False)
    np.testing.assert_array_equal(P.toarray(), (X > 0).astype(np.float64))
    assert M.dtype == dtype and _same(M, before)
    np.testing.assert_array_equal(presence(X), (X > 0).astype(np.float64))


def test_carriers_in_every_layout_with_duplicates_and_negatives():
    X = np.nan_to_num(_values())
    rows, cols = np.nonzero(X)
    values = X[rows, cols]
    # each entry split in two stored halves (one duplicate per cell), in a shuffled order
    order = np.random.default_rng(2).permutation(2 * values.size)
    data = np.concatenate([values / 2, values / 2])[order]
    r, c = np.concatenate([rows, rows])[order], np.concatenate([cols, cols])[order]
    expect = (X > 0).sum(axis=0).astype(np.float64)
    for fmt in ("csr", "csc"):
        M = sp.coo_matrix((data, (r, c)), shape=X.shape)
        M = (sp.csr_matrix if fmt == "csr" else sp.csc_matrix)((M.data, (M.row, M.col)), shape=X.shape)
        M = M.copy()
        np.testing.assert_array_equal(carriers(M), expect)
        np.testing.assert_array_equal(carriers(sp.csr_matrix(X).asformat(fmt)), expect)
    np.testing.assert_array_equal(carriers(X), expect)
    np.testing.assert_array_equal(carriers(np.asfortranarray(X)), expect)


def test_sparse_long_double_values():
    """long double (a type the compiled kernels do not take): read as float64, as dense input is,
    in presence, carriers and scoring by rows and by columns."""
    import genosift as gs

    X = np.nan_to_num(_values())
    dtype = np.longdouble
    M = sp.csr_matrix(X.astype(dtype))
    assert M.dtype == dtype
    reference = sp.csr_matrix(X.astype(np.float64))
    np.testing.assert_array_equal(presence(M).toarray(), (X > 0).astype(np.float64))
    np.testing.assert_array_equal(carriers(M), (X > 0).sum(axis=0))
    y = np.repeat([0, 1], 20)
    for method in ("fisher", "auc", "logistic"):
        for fmt in ("csr", "csc"):
            got = gs.score(M.asformat(fmt), y, method=method, min_af=0.05).scores
            want = gs.score(reference.asformat(fmt), y, method=method, min_af=0.05).scores
            np.testing.assert_array_equal(got, want)


def test_zeros_and_ones_of_every_form():
    M = np.array([[0, 1, 1], [1, 0, 0]])
    for dtype in (bool, np.int8, np.uint16, np.float32, np.float64):
        for X in (M.astype(dtype), np.asfortranarray(M.astype(dtype)), sp.csr_matrix(M.astype(dtype)),
                  sp.csc_matrix(M.astype(dtype))):
            assert zeros_and_ones(X)
    for other in (2, -1, 0.5, np.nan, np.inf):
        bad = M.astype(np.float64)
        bad[1, 2] = other
        assert not zeros_and_ones(bad) and not zeros_and_ones(sp.csr_matrix(bad))
    assert zeros_and_ones(np.zeros((0, 3))) and not zeros_and_ones(np.array([["0", "1"]], dtype=object))
    big = np.zeros((3000, 2000))  # read in slices: the other value in the last one
    big[-1, -1] = 3.0
    assert not zeros_and_ones(big)
