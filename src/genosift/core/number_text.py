"""Numbers as the text Python writes them, and rows of a delimited table, in compiled code.

Python writes a float as the shortest decimal string that reads back to the same value (of those,
the one nearest the value) and then picks fixed or scientific notation. Tables of millions of
scores spend most of their writing time there, a few hundred nanoseconds a value. Here the
shortest digits come from Ryu's method (Adams, "Ryū: fast float-to-string conversion", PLDI 2018):
the value's rounding interval is scaled by a power of ten with 128-bit fixed-point multipliers of
the powers of five, and decimal digits are dropped while the interval still holds a shorter
number. The notation then follows Python's rules (``repr``: scientific when the decimal point
would fall more than 16 digits right of the first digit or 4 or more zeros left of it).
The result is the same text, byte for byte, for every float64 (tested against ``repr``).
Integers and booleans are written as ``str`` writes them, and ``join_rows`` lays the columns'
texts out as the rows of a table, so a block of a table never becomes Python strings.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bool_column", "float_column", "float_texts", "int_column", "join_rows"]

_BITS = 125  # precision of the power-of-five multipliers (both tables)
_U = np.uint64
_MASK32 = _U(0xFFFFFFFF)


def _tables():
    """128-bit multipliers, as (low, high) uint64 columns: ``inverse[q]`` = floor(2**j / 5**q) + 1
    with j = bits(5**q) - 1 + 125, for q < 342; ``power[i]`` = 5**i scaled to 125 bits, for i < 326."""
    inverse = np.empty((342, 2), dtype=np.uint64)
    for q in range(342):
        p = 5**q
        v = (1 << (p.bit_length() - 1 + _BITS)) // p + 1
        inverse[q] = (v & (2**64 - 1), v >> 64)
    power = np.empty((326, 2), dtype=np.uint64)
    for i in range(326):
        p = 5**i
        shift = p.bit_length() - _BITS
        v = p >> shift if shift > 0 else p << -shift
        power[i] = (v & (2**64 - 1), v >> 64)
    return inverse, power


_INVERSE, _POWER = _tables()
#: '00', '01', ... '99' as bytes: two digits written at a time
_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode("ascii"), dtype=np.uint8).copy()


@njit(cache=True, nogil=True, inline="always")
def _pow5bits(e):
    """ceil(log2(5**e)) (1 for e = 0), for 0 <= e <= 3528."""
    return ((e * 1217359) >> 19) + 1


@njit(cache=True, nogil=True, inline="always")
def _mul_shift(m, lo, hi, j):
    """floor(m * (hi * 2**64 + lo) / 2**j) for m < 2**55, 64 < j < 128: two 64 x 64 -> 128-bit
    products from 32-bit halves."""
    m_lo, m_hi = m & _MASK32, m >> _U(32)
    # m * lo: only its upper 64 bits matter
    a_lo, a_hi = lo & _MASK32, lo >> _U(32)
    p0, p1, p2, p3 = m_lo * a_lo, m_lo * a_hi, m_hi * a_lo, m_hi * a_hi
    mid = (p0 >> _U(32)) + (p1 & _MASK32) + (p2 & _MASK32)
    b0_hi = p3 + (p1 >> _U(32)) + (p2 >> _U(32)) + (mid >> _U(32))
    # m * hi, 128 bits
    a_lo, a_hi = hi & _MASK32, hi >> _U(32)
    p0, p1, p2, p3 = m_lo * a_lo, m_lo * a_hi, m_hi * a_lo, m_hi * a_hi
    mid = (p0 >> _U(32)) + (p1 & _MASK32) + (p2 & _MASK32)
    b2_lo = (p0 & _MASK32) | (mid << _U(32))
    b2_hi = p3 + (p1 >> _U(32)) + (p2 >> _U(32)) + (mid >> _U(32))
    # (b0 >> 64) + b2, then >> (j - 64)
    s_lo = b0_hi + b2_lo
    s_hi = b2_hi + (_U(1) if s_lo < b0_hi else _U(0))
    d = _U(j - 64)
    return (s_hi << (_U(64) - d)) | (s_lo >> d)


@njit(cache=True, nogil=True, inline="always")
def _fives(v):
    """How many times 5 divides ``v`` (> 0)."""
    n = 0
    while v % _U(5) == _U(0):
        v //= _U(5)
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _integer_digits(mantissa, exponent):
    """The digits of a float64 of these IEEE fields (exponent in 1023..1075) that is an integer below
    2**53, whose own digits are the shortest: (digits without trailing zeros, power of ten); (0, 0)
    when it has a fraction."""
    m2 = mantissa | (_U(1) << _U(52))
    shift = _U(1075 - exponent)
    if (m2 & ((_U(1) << shift) - _U(1))) != _U(0):
        return _U(0), 0
    out, exp10 = m2 >> shift, 0
    while out % _U(10) == _U(0):
        out //= _U(10)
        exp10 += 1
    return out, exp10


@njit(cache=True, nogil=True, inline="always")
def _interval(mantissa, exponent):
    """Ryu's interval of the float64 of these IEEE fields, scaled by a power of ten: its value
    ``vr`` and bounds ``vp``, ``vm``, that power ``e10``, whether the digits dropped from ``vm`` and
    ``vr`` are all zeros, and whether the bounds are inside (an even mantissa)."""
    if exponent == 0:
        e2 = 1 - 1023 - 52 - 2
        m2 = mantissa
    else:
        e2 = exponent - 1023 - 52 - 2
        m2 = mantissa | (_U(1) << _U(52))
    accept = (m2 & _U(1)) == _U(0)
    mv = _U(4) * m2
    mm_shift = _U(1) if (mantissa != _U(0) or exponent <= 1) else _U(0)
    vm_zeros = False
    vr_zeros = False
    if e2 >= 0:
        q = ((e2 * 78913) >> 18) - (1 if e2 > 3 else 0)  # floor(log10(2**e2)), less one above 3
        e10 = q
        k = _BITS + _pow5bits(q) - 1
        i = -e2 + q + k
        lo, hi = _INVERSE[q, 0], _INVERSE[q, 1]
        vr = _mul_shift(mv, lo, hi, i)
        vp = _mul_shift(mv + _U(2), lo, hi, i)
        vm = _mul_shift(mv - _U(1) - mm_shift, lo, hi, i)
        if q <= 21:
            if mv % _U(5) == _U(0):
                vr_zeros = _fives(mv) >= q
            elif accept:
                vm_zeros = _fives(mv - _U(1) - mm_shift) >= q
            elif _fives(mv + _U(2)) >= q:
                vp -= _U(1)
    else:
        q = ((-e2 * 732923) >> 20) - (1 if -e2 > 1 else 0)  # floor(log10(5**-e2)), less one above 1
        e10 = q + e2
        i = -e2 - q
        k = _pow5bits(i) - _BITS
        j = q - k
        lo, hi = _POWER[i, 0], _POWER[i, 1]
        vr = _mul_shift(mv, lo, hi, j)
        vp = _mul_shift(mv + _U(2), lo, hi, j)
        vm = _mul_shift(mv - _U(1) - mm_shift, lo, hi, j)
        if q <= 1:
            vr_zeros = True
            if accept:
                vm_zeros = mm_shift == _U(1)
            else:
                vp -= _U(1)
        elif q < 63:
            vr_zeros = (mv & ((_U(1) << _U(q)) - _U(1))) == _U(0)
    return vr, vp, vm, e10, vm_zeros, vr_zeros, accept


@njit(cache=True, nogil=True, inline="always")
def _fewest_digits(vr, vp, vm, vm_zeros, vr_zeros, accept):
    """Ryu's shortest digits inside the interval ``(vm, vp)``, rounded as ``vr``: (digits, the
    number of digits removed)."""
    removed = 0
    last = _U(0)
    ten = _U(10)
    if vm_zeros or vr_zeros:
        while vp // ten > vm // ten:
            vm_zeros = vm_zeros and vm % ten == _U(0)
            vr_zeros = vr_zeros and last == _U(0)
            last = vr % ten
            vr //= ten
            vp //= ten
            vm //= ten
            removed += 1
        if vm_zeros:
            while vm % ten == _U(0):
                vr_zeros = vr_zeros and last == _U(0)
                last = vr % ten
                vr //= ten
                vp //= ten
                vm //= ten
                removed += 1
        if vr_zeros and last == _U(5) and vr % _U(2) == _U(0):
            last = _U(4)  # exactly halfway: round to even
        up = (vr == vm and (not accept or not vm_zeros)) or last >= _U(5)
    else:
        if vp // _U(100) > vm // _U(100):  # two digits at once first (the usual case)
            last = (vr % _U(100)) // ten
            vr //= _U(100)
            vp //= _U(100)
            vm //= _U(100)
            removed += 2
        while vp // ten > vm // ten:
            last = vr % ten
            vr //= ten
            vp //= ten
            vm //= ten
            removed += 1
        up = vr == vm or last >= _U(5)
    return vr + (_U(1) if up else _U(0)), removed


@njit(cache=True, nogil=True, inline="always")
def _shortest(mantissa, exponent):
    """Ryu's shortest digits of the finite, non-zero float64 with these IEEE fields:
    (digits as an integer without trailing zeros, power of ten)."""
    if 1075 - 52 <= exponent <= 1075:  # maybe an integer below 2**53: then its digits are the shortest
        out, exp10 = _integer_digits(mantissa, exponent)
        if out != _U(0):
            return out, exp10
    vr, vp, vm, e10, vm_zeros, vr_zeros, accept = _interval(mantissa, exponent)
    out, removed = _fewest_digits(vr, vp, vm, vm_zeros, vr_zeros, accept)
    exp10 = e10 + removed
    ten = _U(10)
    while out % ten == _U(0):
        out //= ten
        exp10 += 1
    return out, exp10


@njit(cache=True, nogil=True, inline="always")
def _digit_count(v):
    """Decimal digits of the uint64 ``v`` (1 for 0)."""
    n, bound = 1, _U(10)
    while n < 20 and v >= bound:
        n += 1
        bound *= _U(10)
    return n


@njit(cache=True, nogil=True, inline="always")
def _write_digits(buf, last, v):
    """The decimal digits of the uint64 ``v``, the last at ``buf[last]``, two at a time."""
    k = last
    while v >= _U(100):
        d = 2 * np.int64(v % _U(100))
        v //= _U(100)
        buf[k - 1], buf[k] = _PAIRS[d], _PAIRS[d + 1]
        k -= 2
    if v >= _U(10):
        d = 2 * np.int64(v)
        buf[k - 1], buf[k] = _PAIRS[d], _PAIRS[d + 1]
    else:
        buf[k] = 48 + np.uint8(v)


@njit(cache=True, nogil=True)
def _floats_into(bits, buf, offsets, sep, nan_text):
    """The text of every value (float64 bits) into ``buf``, ``offsets[t + 1]`` the end of value
    ``t``'s text, each followed by the byte ``sep`` unless it is negative (NaN as 'nan', or nothing
    unless ``nan_text``); returns the bytes written. One loop, digits written from the last."""
    at = 0
    offsets[0] = 0
    for t in range(bits.shape[0]):
        b = bits[t]
        exponent = np.int64((b >> _U(52)) & _U(0x7FF))
        mantissa = b & ((_U(1) << _U(52)) - _U(1))
        if exponent == 0x7FF and mantissa != _U(0):
            if nan_text:
                buf[at], buf[at + 1], buf[at + 2] = 110, 97, 110  # 'nan'
                at += 3
        else:
            if (b >> _U(63)) != _U(0):
                buf[at] = 45  # '-'
                at += 1
            if exponent == 0x7FF:
                buf[at], buf[at + 1], buf[at + 2] = 105, 110, 102  # 'inf'
                at += 3
            elif exponent == 0 and mantissa == _U(0):
                buf[at], buf[at + 1], buf[at + 2] = 48, 46, 48  # '0.0'
                at += 3
            else:
                out, exp10 = _shortest(mantissa, exponent)
                n = _digit_count(out)
                point = n + exp10  # the decimal point falls after `point` digits
                scientific = not (-4 < point <= 16)
                if scientific:
                    first = at + 1  # the digits, then the first moved before a '.'
                elif point <= 0:  # 0.000ddd
                    buf[at], buf[at + 1] = 48, 46
                    for k in range(at + 2, at + 2 - point):
                        buf[k] = 48
                    first = at + 2 - point
                else:
                    first = at
                _write_digits(buf, first + n - 1, out)
                if scientific:
                    buf[at] = buf[at + 1]
                    if n > 1:
                        buf[at + 1] = 46
                        at += n + 1
                    else:
                        at += 1
                    e = point - 1
                    buf[at] = 101  # 'e'
                    buf[at + 1] = 45 if e < 0 else 43
                    at += 2
                    e = -e if e < 0 else e
                    if e >= 100:
                        buf[at] = 48 + e // 100
                        at += 1
                    buf[at], buf[at + 1] = 48 + (e // 10) % 10, 48 + e % 10
                    at += 2
                elif point <= 0:
                    at = first + n
                elif point >= n:  # ddd000.0
                    for k in range(at + n, at + point):
                        buf[k] = 48
                    buf[at + point], buf[at + point + 1] = 46, 48
                    at += point + 2
                else:  # dd.ddd: the fraction moved one place right
                    for k in range(at + n, at + point, -1):
                        buf[k] = buf[k - 1]
                    buf[at + point] = 46
                    at += n + 1
        offsets[t + 1] = at
        if sep >= 0:
            buf[at] = sep
            at += 1
    return at


@njit(cache=True, nogil=True)
def _ints_into(magnitude, negative, buf, offsets):
    """Decimal text of every integer, given as its magnitude (uint64) and sign, into ``buf``,
    delimited by ``offsets``."""
    at = 0
    offsets[0] = 0
    for t in range(magnitude.shape[0]):
        v = magnitude[t]
        if negative[t]:
            buf[at] = 45
            at += 1
        n = _digit_count(v)
        _write_digits(buf, at + n - 1, v)
        at += n
        offsets[t + 1] = at
    return at


@njit(cache=True, nogil=True)
def _bools_into(values, buf, offsets):
    at = 0
    offsets[0] = 0
    for t in range(values.shape[0]):
        if values[t]:
            buf[at], buf[at + 1], buf[at + 2], buf[at + 3] = 84, 114, 117, 101  # 'True'
            at += 4
        else:
            buf[at], buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4] = 70, 97, 108, 115, 101  # 'False'
            at += 5
        offsets[t + 1] = at
    return at


def float_texts(values):
    """``[repr(float(v)) for v in values]`` for a float64 array, computed in compiled code.

    >>> float_texts(np.array([0.1, 1e-05, 1e16, 2.5, -0.0, np.inf, 123.0]))
    ['0.1', '1e-05', '1e+16', '2.5', '-0.0', 'inf', '123.0']
    """
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if not values.size:
        return []
    buf = np.empty(25 * values.size, dtype=np.uint8)  # the longest text, '-1.7976931348623157e+308', has 24
    offsets = np.empty(values.size + 1, dtype=np.int64)
    n = _floats_into(values.view(np.uint64), buf, offsets, 10, True)
    return buf[:n - 1].tobytes().decode("ascii").split("\n")


def float_column(values):
    """``(bytes, offsets)``: the text of each float64 of ``values`` as ``repr`` writes it (NaN as
    nothing, as a table writes a missing value), value ``t`` in ``bytes[offsets[t]:offsets[t + 1]]``."""
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    buf = np.empty(24 * values.size, dtype=np.uint8)
    offsets = np.empty(values.size + 1, dtype=np.int64)
    n = _floats_into(values.view(np.uint64), buf, offsets, -1, False)
    return buf[:n], offsets


def int_column(values, missing=None):
    """``(bytes, offsets)`` of integers (any width, signed or not) as ``str`` writes them; the
    values where ``missing`` (a boolean mask) is True as nothing, as a table writes a missing value."""
    values = np.asarray(values).ravel()
    negative = values < 0
    magnitude = values.astype(np.uint64)  # two's complement for the negatives, which negation turns back
    np.negative(magnitude, out=magnitude, where=negative)
    buf = np.empty(20 * values.size, dtype=np.uint8)
    offsets = np.empty(values.size + 1, dtype=np.int64)
    text = buf[:_ints_into(magnitude, negative, buf, offsets)]
    if missing is None or not np.any(missing):
        return text, offsets
    lengths = np.diff(offsets)
    kept = np.repeat(~np.asarray(missing, dtype=bool), lengths)  # the bytes of the values written
    lengths[missing] = 0
    return text[kept], np.r_[0, np.cumsum(lengths)]


def bool_column(values):
    """``(bytes, offsets)`` of booleans as ``str`` writes them ('True', 'False')."""
    values = np.ascontiguousarray(values, dtype=np.bool_).ravel()
    buf = np.empty(5 * values.size, dtype=np.uint8)
    offsets = np.empty(values.size + 1, dtype=np.int64)
    return buf[:_bools_into(values, buf, offsets)], offsets


@njit(cache=True, nogil=True)
def _join_rows(buf, begin, end, sep, eol, out):
    n_rows, n_cols = begin.shape
    at = 0
    for r in range(n_rows):
        for c in range(n_cols):
            for t in range(begin[r, c], end[r, c]):
                out[at] = buf[t]
                at += 1
            if c < n_cols - 1:
                for t in range(sep.size):
                    out[at] = sep[t]
                    at += 1
        for t in range(eol.size):
            out[at] = eol[t]
            at += 1
    return at


def join_rows(columns, sep, end):
    r"""The rows of a table as bytes (a uint8 array): ``columns`` holds each column's ``(bytes,
    offsets)``, value ``t`` in ``bytes[offsets[t]:offsets[t + 1]]``, or ``(bytes, begins, ends)``
    (the same number of values each); fields joined by ``sep``, rows ended by ``end`` (bytes).

    >>> rows = join_rows([float_column(np.array([0.5, np.nan])), int_column(np.array([3, -12]))], b"\t", b"\n")
    >>> bytes(rows)
    b'0.5\t3\n\t-12\n'
    """
    if not columns:
        return np.empty(0, dtype=np.uint8)
    spans = [(c[1][:-1], c[1][1:]) if len(c) == 2 else (c[1], c[2]) for c in columns]
    shift = np.cumsum([0] + [c[0].size for c in columns[:-1]])
    buf = np.concatenate([c[0] for c in columns])
    begin = np.stack([np.asarray(b, dtype=np.int64) + k for (b, _), k in zip(spans, shift)], axis=1)
    stop = np.stack([np.asarray(e, dtype=np.int64) + k for (_, e), k in zip(spans, shift)], axis=1)
    sep, end = np.frombuffer(sep, dtype=np.uint8), np.frombuffer(end, dtype=np.uint8)
    n_rows = begin.shape[0]
    out = np.empty(int((stop - begin).sum()) + n_rows * ((len(columns) - 1) * sep.size + end.size), dtype=np.uint8)
    return out[:_join_rows(buf, begin, stop, sep, end, out)]
