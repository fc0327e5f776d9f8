"""Features of a store found by name without decoding every name.

A store keeps its feature names as one NUL-joined UTF-8 byte array. To find a few thousand of
them among millions (the features a saved model uses), the bytes are read a piece at a time and
each name is hashed in compiled code; only the names whose 64-bit hash is one of the wanted
names' hashes are decoded and compared as text. Memory: a piece of the bytes, never the names.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...core.distinct import mix64

__all__ = ["find_names"]

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True)
def _hash_bytes(chunk, a, b):
    """The hash of the bytes ``chunk[a:b]`` (FNV-1a, then the length and a finaliser)."""
    h = _FNV_OFFSET
    for i in range(a, b):
        h = (h ^ np.uint64(chunk[i])) * _FNV_PRIME
    return mix64(h ^ np.uint64(b - a))


@njit(cache=True, nogil=True)
def _hash_names(chunk):
    """The hash of each NUL-ended name of ``chunk`` (which ends with a NUL)."""
    out = np.empty(np.count_nonzero(chunk == 0), dtype=np.uint64)
    start, n = 0, 0
    for i in range(chunk.size):
        if chunk[i] == 0:
            out[n] = _hash_bytes(chunk, start, i)
            n += 1
            start = i + 1
    return out


@njit(cache=True, nogil=True)
def _scan(chunk, begin, stop, wanted, hits, starts, ends):
    """Hash the NUL-ended names of ``chunk[begin:stop]`` (``stop`` just past a NUL) and record, in
    ``hits``/``starts``/``ends``, the number (counted from ``begin``) and the bytes of each name
    whose hash is in ``wanted`` (sorted). Stops early when ``hits`` is full.

    Returns (where the scan stopped, the names passed, the hits recorded)."""
    m, n, start = 0, 0, begin
    for i in range(begin, stop):
        if chunk[i] != 0:
            continue
        h = _hash_bytes(chunk, start, i)
        k = np.searchsorted(wanted, h)
        if k < wanted.size and wanted[k] == h:
            if m == hits.size:
                return start, n, m
            hits[m], starts[m], ends[m] = n, start, i
            m += 1
        n += 1
        start = i + 1
    return start, n, m


@njit(cache=True, nogil=True)
def _after_last_nul(chunk):
    """The position just after the last NUL of ``chunk`` (0 if it has none)."""
    for i in range(chunk.size - 1, -1, -1):
        if chunk[i] == 0:
            return i + 1
    return 0


def find_names(read_piece, size, p, names, *, piece=1 << 22):
    """The index of each of ``names`` among ``p`` NUL-joined names, or -1 where it is not one of them.

    Parameters
    ----------
    read_piece : callable ``(a, b)`` -> uint8 array
        Bytes ``a:b`` of the joined names (``size`` bytes in all, no NUL after the last name).
    size, p : int
        The bytes and the number of names.
    names : sequence of str
        The names to find.
    piece : int
        Bytes read at a time.

    Returns
    -------
    ndarray of int64, or None
        One index per name of ``names``; None when the bytes do not hold ``p`` names.

    Raises
    ------
    ValueError
        When one of ``names`` is there more than once.

    Examples
    --------
    >>> blob = np.frombuffer("ACGT\\x00GGA\\x00T".encode(), dtype=np.uint8)
    >>> find_names(lambda a, b: blob[a:b], blob.size, 3, ["T", "CC", "ACGT"]).tolist()
    [2, -1, 0]
    """
    names = [str(x) for x in names]
    where = {}
    for j, name in enumerate(names):
        where.setdefault(name, []).append(j)
    out = np.full(len(names), -1, dtype=np.int64)
    askable = [name for name in where if "\x00" not in name]  # a name with a NUL cannot be stored
    if not askable or not p:
        return out if (p or not size) else None
    wanted = np.unique(_hash_names(np.frombuffer(("\x00".join(askable) + "\x00").encode("utf-8"), dtype=np.uint8)))
    capacity = max(2 * len(askable), 64)
    hits, starts, ends = (np.empty(capacity, dtype=np.int64) for _ in range(3))
    seen, carry = 0, np.empty(0, dtype=np.uint8)
    for a in range(0, size + 1, piece):
        chunk = np.asarray(read_piece(a, min(a + piece, size)), dtype=np.uint8)
        if a + piece >= size:  # the last piece: its last name ends here
            chunk = np.concatenate([carry, chunk, np.zeros(1, dtype=np.uint8)])
        elif carry.size:
            chunk = np.concatenate([carry, chunk])
        stop = _after_last_nul(chunk)
        begin = 0
        while begin < stop:
            begin, n, m = _scan(chunk, begin, stop, wanted, hits, starts, ends)
            for h, s, e in zip(hits[:m].tolist(), starts[:m].tolist(), ends[:m].tolist()):
                for j in where.get(bytes(chunk[s:e]).decode("utf-8", errors="replace"), ()):
                    if out[j] >= 0:
                        raise ValueError(f"the name {names[j]!r} is there more than once")
                    out[j] = seen + h
            seen += n
        carry = chunk[stop:]
        if a + piece >= size:
            break
    return out if seen == p else None
