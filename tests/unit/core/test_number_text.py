"""Float64 text in compiled code: the very bytes of Python's ``repr``, for every kind of value."""
import numpy as np
import pytest

from genosift.core.number_text import bool_column, float_column, float_texts, int_column, join_rows


def _same_as_repr(values):
    values = np.asarray(values, dtype=np.float64)
    got = float_texts(values)
    expected = [repr(v) for v in values.tolist()]
    bad = [(e, g) for e, g in zip(expected, got) if e != g]
    assert len(got) == len(expected) and not bad, bad[:5]


def test_random_bit_patterns():
    """Every sign, exponent and mantissa: uniformly random 64-bit patterns (NaN and inf among them)."""
    rng = np.random.default_rng(7)
    _same_as_repr(rng.integers(0, 2**64, 400_000, dtype=np.uint64).view(np.float64))


def test_subnormals_and_the_extremes():
    rng = np.random.default_rng(8)
    tiny = rng.integers(1, 2**52, 100_000, dtype=np.uint64).view(np.float64)
    _same_as_repr(np.r_[tiny, -tiny, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
                        1.7976931348623157e308, -1.7976931348623157e308, np.finfo(float).eps])


@pytest.mark.parametrize("around", ["powers of two", "powers of ten"])
def test_powers_and_their_neighbours(around):
    """Where the rounding interval is lopsided (powers of two) or a decimal is exact (powers of ten),
    and the floats just beside them."""
    base = (2.0 ** np.arange(-1074, 1024) if around == "powers of two"
            else np.array([float(f"1e{e}") for e in range(-323, 309)]))
    base = base[np.isfinite(base) & (base > 0)]
    up, down = np.nextafter(base, np.inf), np.nextafter(base, 0)
    _same_as_repr(np.r_[base, up, down, np.nextafter(up, np.inf), np.nextafter(down, 0), -base])


def test_decimals_integers_and_notation_boundaries():
    """Short decimals at every exponent, integers up to 2**53 and past, and the values where repr
    switches between fixed and scientific notation (1e16, 1e-4)."""
    short = [float(f"{m}e{e}") for m in (1, 2, 5, 9, 12, 25, 125, 99, 123456789, 9007199254740993)
             for e in range(-330, 309)]
    ints = np.r_[np.arange(-2000, 2000), 2.0**53 - 1, 2.0**53, 2.0**53 + 2, 2.0**63, 1e15, 9999999999999998.0,
                 1e16, 1.5e16, 12345678901234567890.0]
    edges = [1e-4, 9.999999999999999e-05, 0.00011, 1e-5, 0.1, 0.2, 0.30000000000000004, 1 / 3, 2 / 3, 0.0,
             -0.0, np.inf, -np.inf, np.nan, 123.0, 100.0, 1e22, 1e23, 5e-324, 1.5e-323]
    _same_as_repr(np.r_[short, ints, edges])


def test_statistics_shaped_values():
    """The values a table of scores holds: p-values near 0 and 1, means of counts, ranks."""
    rng = np.random.default_rng(9)
    n = rng.integers(1, 500, 50_000)
    _same_as_repr(np.r_[rng.random(50_000) ** 20, 1 - rng.random(50_000) * 1e-12,
                        rng.integers(0, 1000, 50_000) / n, rng.standard_normal(50_000) * 1e6])


def test_any_layout_and_the_empty_array():
    values = np.arange(24, dtype=np.float64).reshape(4, 6) / 7
    assert float_texts(values[:, ::2].T) == [repr(v) for v in values[:, ::2].T.ravel().tolist()]
    assert float_texts(np.empty(0)) == []
    assert float_texts(np.array([-np.nan])) == ["nan"]


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_integers_as_str_writes_them(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    values = np.r_[rng.integers(info.min, info.max, 5000, dtype=dtype, endpoint=True),
                   np.array([info.min, info.max, 0, 1, 9, 10, 11, 99, 100], dtype=object).astype(dtype)]
    if info.min < 0:
        values = np.r_[values, np.array([-1, -9, -10, -11, -100, info.min + 1], dtype=dtype)]
    text, offsets = int_column(values)
    expected = [str(v) for v in values.tolist()]
    assert [bytes(text[a:b]).decode() for a, b in zip(offsets[:-1], offsets[1:])] == expected


def test_rows_of_a_table():
    floats = np.array([0.1, np.nan, -2.5e-300, 7.0])
    flags = np.array([True, False, True, True])
    ints = np.array([-3, 0, 2**62, 5])
    rows = join_rows([float_column(floats), bool_column(flags), int_column(ints)], b"\t", b"\n")
    expected = "".join(f"{'' if np.isnan(f) else repr(f)}\t{b}\t{i}\n"
                       for f, b, i in zip(floats.tolist(), flags.tolist(), ints.tolist()))
    assert bytes(rows).decode() == expected
    assert bytes(join_rows([float_column(np.empty(0))], b",", b"\r\n")) == b""
    assert bytes(join_rows([int_column(np.array([1, 2]))], b",", b"\r\n")) == b"1\r\n2\r\n"
