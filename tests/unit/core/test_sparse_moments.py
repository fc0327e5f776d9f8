"""Class moments of sparse matrices in one pass over the stored entries: integer counts as two exact
sums per (feature, class), other values as sums about a shift; the same bits from CSR, CSC, row
chunks, a store and any thread count, and the exact values where the arithmetic allows them."""
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.core import engine
from genosift.core import sparse_kernels as _sparse_kernels
from genosift.stats import ClassMoments


def _counts(seed, n=90, p=400, density=0.08, top=30):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=seed, format="csr")
    X.data = np.ceil(X.data * top)
    y = rng.integers(0, 3, n)
    X = X.tolil()
    X[:, 7] = 5.0  # a feature constant over every row, and one constant within each class
    X[:, 8] = (y[:, None] == 1) * 4.0
    return sp.csr_matrix(X), y


def _floats(seed, n=90, p=400):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.3, random_state=seed, format="csr")
    X.data = 1e6 + rng.normal(size=X.nnz)  # a large offset: sums about 0 would cancel
    return X, rng.integers(0, 3, n)


def _bits(st):
    return st.mean.tobytes(), st.m2.tobytes(), st.count.tobytes()


def _exact(X, y):
    """Class means and M2 in exact rational arithmetic, rounded once to float64."""
    D = X.toarray()
    classes = np.unique(y)
    mean, m2 = np.empty((len(classes), D.shape[1])), np.empty((len(classes), D.shape[1]))
    for c, label in enumerate(classes):
        rows = D[y == label]
        for j in range(D.shape[1]):
            vals = [Fraction(v) for v in rows[:, j]]
            mu = sum(vals) / len(vals)
            mean[c, j] = float(mu)
            m2[c, j] = float(sum((v - mu) ** 2 for v in vals))
    return mean, m2


@pytest.mark.parametrize("seed", [0, 1])
def test_integer_counts_give_the_correctly_rounded_moments(seed):
    X, y = _counts(seed, p=120)
    st = ClassMoments.from_chunk(X, y)
    mean, m2 = _exact(X, y)
    np.testing.assert_array_equal(st.mean, mean)
    np.testing.assert_array_equal(st.m2, m2)
    assert (st.m2[:, 7] == 0).all() and (st.m2[:, 8] == 0).all()  # constant: exactly 0


@pytest.mark.parametrize("make", [_counts, _floats])
def test_every_sparse_form_gives_the_same_bits(make, tmp_path):
    X, y = make(3)
    ref = ClassMoments.from_chunk(X, y)
    assert _bits(ClassMoments.from_chunk(X.tocsc(), y)) == _bits(ref)
    classes = np.unique(y)
    codes = np.searchsorted(classes, y)
    for rows in (1, 7, 50, 1000):
        stream = ((X[a:a + rows], codes[a:a + rows]) for a in range(0, X.shape[0], rows))
        assert _bits(ClassMoments.from_csr_stream(stream, classes, X.shape[1])) == _bits(ref), rows
    previous = engine.set_threads(None)
    try:
        for n in (1, 2):
            engine.set_threads(n)
            assert _bits(ClassMoments.from_chunk(X, y)) == _bits(ref)
            assert _bits(ClassMoments.from_chunk(X.tocsc(), y)) == _bits(ref)
    finally:
        engine.set_threads(previous)


def _kernel_inputs(X, y):
    """What the kernels take besides the CSR arrays: the CSC copy, the class codes and counts,
    and the rows in class order."""
    classes, codes = np.unique(y, return_inverse=True)
    count = np.bincount(codes).astype(np.float64)
    return (X.tocsc(), codes, count, *_sparse_kernels.class_order(codes, len(classes)))


def _shifted(kernel_call, k, p):
    """Run a shifted-sum kernel, put its means about one shift per feature: (mean, m2, shift)."""
    mean, m2, base, shift = np.full((k, p), np.nan), np.full((k, p), np.nan), np.full((k, p), 7.0), np.zeros(p)
    kernel_call(mean, m2, base)
    _sparse_kernels.rebase_means(mean, base, shift)
    return mean, m2, shift


@pytest.mark.parametrize("threads", [1, 2])
def test_integer_and_shifted_sums_agree_on_counts(threads):
    """The integer kernels (CSR in blocks of any width, one class at a time; CSC with two chains
    of sums) give the same bits on counts, correctly rounded; the shifted ones the same M2 bits,
    and the same bits among themselves for the means about their shift, within two roundings of
    the exact ones."""
    X, y = _counts(5, n=200, p=700)
    C, codes, count, order, starts = _kernel_inputs(X, y)
    k, p = count.size, X.shape[1]
    np.testing.assert_array_equal(order, np.argsort(codes, kind="stable"))
    np.testing.assert_array_equal(starts, np.r_[0, np.cumsum(count)].astype(np.int64))
    assert _sparse_kernels.integer_values(X.data)
    previous = engine.set_threads(threads)
    try:
        got = []
        blocks = ((p, 1), (64, 3), (100, 7), (8192, 1), _sparse_kernels.row_blocks(*X.shape, X.nnz, threads, 16))
        for width, stripes in blocks:
            mean, m2 = np.full((k, p), np.nan), np.full((k, p), np.nan)
            assert _sparse_kernels.csr_int_rows(X.data, X.indices, X.indptr, order, starts, count, mean, m2,
                                                width, stripes)
            got.append((mean.tobytes(), m2.tobytes()))
        mean, m2 = np.full((k, p), np.nan), np.full((k, p), np.nan)
        assert _sparse_kernels.csc_int_cols(C.data, C.indices, C.indptr, codes, count, mean, m2)
        got.append((mean.tobytes(), m2.tobytes()))
        shifted = [_shifted(lambda mean, m2, base: _sparse_kernels.csr_rows(
            X.data, X.indices, X.indptr, order, starts, count, np.zeros(0), mean, m2, base, np.zeros((0, 0)),
            width, stripes), k, p) for width, stripes in blocks]
        shifted.append(_shifted(lambda mean, m2, base: _sparse_kernels.csc_cols(
            C.data, C.indices, C.indptr, codes, count, mean, m2, base), k, p))
    finally:
        engine.set_threads(previous)
    assert all(g == got[0] for g in got)
    exact_mean, exact_m2 = _exact(X, y)
    assert got[0] == (exact_mean.tobytes(), exact_m2.tobytes())
    for mean, m2, shift in shifted:
        assert (mean.tobytes(), m2.tobytes(), shift.tobytes()) == tuple(a.tobytes() for a in shifted[0])
        assert m2.tobytes() == exact_m2.tobytes()
        np.testing.assert_allclose(mean, exact_mean - shift, rtol=0,
                                   atol=4 * np.finfo(float).eps * np.maximum(abs(exact_mean), abs(shift)).max())


def test_shifted_means_keep_the_digits_of_a_common_offset(tmp_path):
    """Features ``1e6 + 0.1 k``: the class means of every sparse form and of the dense path, about
    their shifts, give the difference of the class means to a few units in the last place of the
    difference itself (means in data units would lose 9 digits of it); the scores of CSR, CSC and
    a store, pearson's co-moment included, are the dense path's to 1e-13 (they were 1e-9 off)."""
    rng = np.random.RandomState(1)
    n = 40
    y = np.arange(n) % 2
    X = 1e6 + 0.1 * rng.randint(0, 10, size=(n, 6))
    X[:5, 5] = 0.0  # a feature with implicit zeros too
    exact = np.array([float(sum(map(Fraction, X[y == 0, j])) / 20 - sum(map(Fraction, X[y == 1, j])) / 20)
                      for j in range(6)])
    for form in (X, sp.csr_matrix(X), sp.csc_matrix(X)):
        m = gs.stats.ClassMoments.from_chunk(form, y)
        np.testing.assert_allclose(m.mean[0] - m.mean[1], exact, rtol=1e-14)
        np.testing.assert_allclose(m.means(), [X[y == c].mean(axis=0) for c in (0, 1)], rtol=1e-15)
    ids = np.array([f"s{i}" for i in range(n)], dtype=object)
    store = gs.io.open_store(gs.io.write_store(gs.io.Dataset(sp.csr_matrix(X), ids, np.array(
        [f"f{j}" for j in range(6)], dtype=object)), tmp_path / "offset.gs.h5ad"))
    t = rng.normal(size=n)  # a numeric target: the co-moment about the shift too
    for method, target in (("welch", y), ("fisher", y), ("anova", y), ("pearson", t)):
        dense = gs.score(X, target, method=method).scores
        for form in (sp.csr_matrix(X), sp.csc_matrix(X), store):
            np.testing.assert_allclose(gs.score(form, target, method=method).scores, dense, rtol=1e-13,
                                       err_msg=f"{method} {type(form).__name__}")


@pytest.mark.parametrize("threads", [1, 2])
def test_shifted_sums_take_the_same_order_in_blocks_of_any_width(threads):
    """Values that are not integers: CSR in blocks of any width (one class at a time) gives the
    bits of the CSC columns, each (feature, class) summed about its first value in row order."""
    X, y = _floats(6, n=150, p=500)
    C, codes, count, order, starts = _kernel_inputs(X, y)
    k, p = count.size, X.shape[1]
    assert not _sparse_kernels.integer_values(X.data)
    previous = engine.set_threads(threads)
    try:
        ref = [a.tobytes() for a in _shifted(lambda mean, m2, base: _sparse_kernels.csc_cols(
            C.data, C.indices, C.indptr, codes, count, mean, m2, base), k, p)]
        chosen = _sparse_kernels.row_blocks(*X.shape, X.nnz, threads, 8 * _sparse_kernels.N_ACC)
        for width, stripes in ((p, 1), (64, 3), (100, 7), chosen):
            got = _shifted(lambda mean, m2, base: _sparse_kernels.csr_rows(
                X.data, X.indices, X.indptr, order, starts, count, np.zeros(0), mean, m2, base, np.zeros((0, 0)),
                width, stripes), k, p)
            assert [a.tobytes() for a in got] == ref, (width, stripes)
    finally:
        engine.set_threads(previous)


def _cache_entry(root, index, level, kind, size):
    entry = root / f"index{index}"
    entry.mkdir(parents=True)
    for name, text in (("level", level), ("type", kind), ("size", size)):
        (entry / name).write_text(f"{text}\n")


def test_core_cache_is_read_from_the_systems_description(tmp_path):
    (a := tmp_path / "a").mkdir()
    _cache_entry(a, 0, 1, "Data", "48K")
    _cache_entry(a, 1, 1, "Instruction", "32K")
    _cache_entry(a, 2, 2, "Unified", "2048K")
    _cache_entry(a, 3, 3, "Unified", "260M")
    assert _sparse_kernels.core_cache_bytes(str(a)) == 2 * 2**20
    (b := tmp_path / "b").mkdir()
    _cache_entry(b, 0, 2, "Data", "1M")
    assert _sparse_kernels.core_cache_bytes(str(b)) == 2**20
    (c := tmp_path / "c").mkdir()
    _cache_entry(c, 2, 2, "Unified", "many")
    for root in (tmp_path / "missing", c):
        assert _sparse_kernels.core_cache_bytes(str(root)) == _sparse_kernels.DEFAULT_CORE_CACHE


@pytest.mark.parametrize("cache", [256 * 2**10, 2**20, 2 * 2**20])
def test_row_blocks_keep_a_blocks_sums_in_half_the_core_cache(cache, monkeypatch):
    monkeypatch.setattr(_sparse_kernels, "core_cache_bytes", lambda: cache)
    n, p = 2000, 1_000_000
    for feature_bytes in (16, 8 * _sparse_kernels.N_ACC):
        width, stripes = _sparse_kernels.row_blocks(n, p, n * p // 10, 2, feature_bytes)  # 100,000 per row
        assert width & (width - 1) == 0 and width * feature_bytes <= cache // 2 < 2 * width * feature_bytes
        assert stripes == 8
        # few entries per row: wider blocks, until a row holds about 64 entries in each
        width, _ = _sparse_kernels.row_blocks(n, p, n * 100, 2, feature_bytes)  # 100 per row
        assert width == 1 << 17
    assert _sparse_kernels.row_blocks(10, 300, 100, 2, 16) == (300, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_integer_values_declines_what_the_integer_sums_cannot_take(dtype):
    ok = np.array([0, 1, 7, 2**20 if np.dtype(dtype).itemsize >= 4 else 200], dtype=dtype)
    assert _sparse_kernels.integer_values(ok)
    if np.dtype(dtype).kind == "f":
        for bad in (0.5, np.nan, np.inf, -np.inf, 2.0**27, -(2.0**27)):
            assert not _sparse_kernels.integer_values(np.append(ok, dtype(bad))), bad
        assert _sparse_kernels.integer_values(np.array([2.0**26, -(2.0**26)], dtype=dtype))
    elif np.dtype(dtype).itemsize >= 4:
        assert not _sparse_kernels.integer_values(np.append(ok, dtype(2**26 + 1)))
        assert _sparse_kernels.integer_values(np.append(ok, dtype(2**26)))


def test_sums_past_exactness_fall_back_to_the_shifted_sums():
    """Counts whose sums of squares pass 2**53 are not summed exactly: both integer kernels say
    so, and the moments come from the shifted sums (as they would on one thread, CSR or CSC)."""
    n, p = 40, 3
    X = sp.csr_matrix(np.where(np.arange(n)[:, None] % 2 == 0, 2.0**26, 1.0) * np.ones((n, p)))
    y = np.arange(n) % 2
    codes = y.astype(np.intp)
    count = np.bincount(codes).astype(np.float64)
    mean, m2 = np.empty((2, p)), np.empty((2, p))
    assert not _sparse_kernels.csr_int_rows(X.data, X.indices, X.indptr, *_sparse_kernels.class_order(codes, 2),
                                            count, mean, m2, p, 1)
    C = X.tocsc()
    assert not _sparse_kernels.csc_int_cols(C.data, C.indices, C.indptr, codes, count, mean, m2)
    ref = ClassMoments.from_chunk(X, y)
    assert _bits(ClassMoments.from_chunk(C, y)) == _bits(ref)
    np.testing.assert_array_equal(ref.means(), np.tile([[2.0**26], [1.0]], (1, p)))
    np.testing.assert_array_equal(ref.m2, 0.0)


def test_large_offsets_keep_their_precision():
    X, y = _floats(4, p=60)
    st = ClassMoments.from_chunk(X, y)
    mean, m2 = _exact(X, y)
    # the means about their shift, plus the shift: as the dense path's, one rounding more than the sum
    np.testing.assert_allclose(st.means(), mean, rtol=2.5e-15)
    np.testing.assert_allclose(st.m2, m2, rtol=1e-9)


def test_scores_and_rankings_match_the_dense_path():
    """The dense path (a Welford update of every value, row after row) is the reference: the
    same statistics to rounding, and the same rankings."""
    for make in (_counts, _floats):
        X, y = make(6)
        for method in ("anova", "fisher"):
            sparse = gs.score(X, y, method=method)
            dense = gs.score(X.toarray(), y, method=method)
            np.testing.assert_allclose(sparse.statistic, dense.statistic, rtol=1e-6 if make is _floats else 1e-12,
                                       equal_nan=True)
            np.testing.assert_array_equal(sparse.ranking[:50], dense.ranking[:50])


def _between_within_numpy(st):
    """The sums of squares as numpy writes them, class by class (the reference of the kernel)."""
    with np.errstate(over="ignore", invalid="ignore"):
        d_bar = np.zeros(st.mean.shape[1])
        for c in range(len(st.count)):
            d_bar += st.count[c] * (st.mean[c] - st.mean[0])
        d_bar /= st.count.sum()
        between = np.zeros(st.mean.shape[1])
        for c in range(len(st.count)):
            d = st.mean[c] - st.mean[0]
            d -= d_bar
            d *= d
            d *= st.count[c]
            between += d
    return between, st.m2.sum(axis=0)


@pytest.mark.parametrize("k", [1, 2, 3, 8, 13])
@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_sums_of_squares_equal_numpy_bit_for_bit(k, threads):
    rng = np.random.default_rng(k)
    p = 5000
    count = rng.integers(1, 40, k).astype(np.float64)
    mean = rng.normal(size=(k, p)) * 10.0 ** rng.integers(-8, 9, (k, p))
    m2 = np.abs(rng.normal(size=(k, p))) * 10.0 ** rng.integers(-300, 300, (k, p))
    mean[:, :3] = 2.5  # equal class means: a between sum of exactly zero
    mean[0, 3], m2[-1, 4], mean[-1, 5] = np.nan, np.inf, 1e200  # and values that overflow
    st = ClassMoments(np.arange(k), count, np.zeros(p), mean, m2)
    for view in (st, ClassMoments(st.classes, count, np.zeros(p // 2), mean[:, ::2], m2[:, ::2])):
        with _threads(threads):
            got = view.between_within()
        want = _between_within_numpy(view)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    assert (st.between_within()[0][:3] == 0).all()


class _threads:
    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.before = engine.set_threads(self.n)

    def __exit__(self, *exc):
        engine.set_threads(self.before)


@pytest.mark.parametrize("shape", [(3, 200_000), (1, 7), (12, 70_001)])
def test_finite_check_finds_one_bad_value_anywhere(shape):
    from genosift.core import kernels as _kernels

    rng = np.random.default_rng(shape[1])
    a = rng.normal(size=shape)
    assert _kernels.all_finite(a) and _kernels.all_finite(a[:, ::3])
    for bad in (np.nan, np.inf, -np.inf):
        for _ in range(5):
            b = a.copy()
            b[rng.integers(shape[0]), rng.integers(shape[1])] = bad
            assert not _kernels.all_finite(b)


@pytest.mark.parametrize("threads", [1, 2])
def test_class_positives_of_csr_in_tiles_equal_counting_every_value(threads):
    """Per-class counts of the values above 0: CSR in tiles of columns (sorted indices, more
    columns than a tile), one pass (unsorted indices), CSC and dense agree with numpy."""
    from genosift.stats import class_positives

    previous = engine.threads()
    engine.set_threads(threads)
    try:
        rng = np.random.default_rng(12)
        for k, p in ((1, 70_000), (3, 30_000), (2, 37)):
            X = sp.random(23, p, density=0.02, format="csr", random_state=rng)
            X.data -= 0.25  # some stored values at or below 0 (not counted)
            codes = rng.integers(0, k, 23)
            A = X.toarray()
            expected = np.array([(A[codes == c] > 0).sum(axis=0) for c in range(k)], dtype=np.float64)
            shuffled = X.copy()
            for i in range(23):
                a, b = shuffled.indptr[i], shuffled.indptr[i + 1]
                order = rng.permutation(b - a)
                shuffled.indices[a:b], shuffled.data[a:b] = shuffled.indices[a:b][order], shuffled.data[a:b][order]
            shuffled.has_sorted_indices = False
            for M in (X, shuffled, X.tocsc(), A, np.asfortranarray(A)):
                np.testing.assert_array_equal(class_positives(M, codes, k), expected)
    finally:
        engine.set_threads(previous)
