"""Interned byte strings: an arena of entries and an open-addressing hash table, for compiled parsers.

The k-mer readers (:mod:`genosift.io.kmers`, :mod:`genosift.io.dumps`) intern k-mers and sample
ids as they parse: :func:`find` looks the bytes of a token up by its FNV-1a hash
(:data:`FNV_OFFSET`, :data:`FNV_PRIME`), :func:`add` stores a new one. Entry ``i`` lies in
``arena[offs[i]:offs[i + 1] - 1]`` followed by a newline, so the whole arena decodes to the entries
with one ``split``. :class:`StringTable` holds the arrays and grows them; :class:`ArenaNames`
decodes a slice of the entries at a time; :func:`pad` and :func:`reordered` sort them.
"""
from __future__ import annotations

import codecs
from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["ARG", "FNV_OFFSET", "FNV_PRIME", "PIECE", "ArenaNames", "Interned", "StringTable", "add", "find",
           "first_byte", "grown", "is_utf8", "pad", "rehash", "reordered"]

_JIT = dict(nogil=True, cache=True)
#: The slot of a parser's int64 state vector where :func:`add` leaves the bytes a full arena needs
#: (the last of its 13 slots; parsers use it too for the argument of an error code).
ARG = 12
#: Bytes of an arena handled at a time where the whole would be copied (checks, the name blob).
PIECE = 1 << 24
FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)
_ONE = np.uint64(1)


class Interned(NamedTuple):
    """The arrays of a table of interned byte strings, as the compiled parsers take them: the
    entries' bytes (``arena``), where each starts (``offs``), their hashes and the open-addressing
    ``table`` of entry indices (-1: a free slot)."""

    arena: np.ndarray
    offs: np.ndarray
    hashes: np.ndarray
    table: np.ndarray


@njit(**_JIT)
def find(buf, a, b, h, arena, offs, hashes, table):
    """Index of the bytes ``buf[a:b]`` (hash ``h``) in a table, or ``-1 - slot`` of a free slot.

    Entry ``i`` is stored in ``arena[offs[i]:offs[i + 1] - 1]`` followed by a newline, so the whole
    arena decodes to the entries with one ``split``. It takes the arrays of an :class:`Interned`
    one by one: it runs on every line, and a tuple would be unpacked (each array's reference
    counted) at every call.
    """
    size = b - a
    mask = np.uint64(table.size - 1)
    slot = h & mask
    while True:
        idx = table[slot]
        if idx < 0:
            return -1 - np.int64(slot)
        if hashes[idx] == h:
            o = offs[idx]
            if offs[idx + 1] - o - 1 == size:
                same = True
                for t in range(size):
                    if arena[o + t] != buf[a + t]:
                        same = False
                        break
                if same:
                    return idx
        slot = (slot + _ONE) & mask


@njit(**_JIT)
def add(buf, a, b, h, slot, strings, st, tally):
    """Store ``buf[a:b]`` as a new entry of ``strings`` in the free ``slot``; -1 (and the bytes
    needed) if full. ``tally``: the slots of the state vector ``st`` counting the table's entries
    and bytes.

    (Kept apart from ``find``: with the insertion in the same function the look-ups, the
    common case, run several times slower.)
    """
    arena, offs, hashes, table = strings
    i_n, i_b = tally
    size = b - a
    n = st[i_n]
    nb = st[i_b]
    if n + 2 > offs.size or nb + size + 1 > arena.size:
        st[ARG] = size + 1
        return -1
    for t in range(size):
        arena[nb + t] = buf[a + t]
    arena[nb + size] = 10
    offs[n + 1] = nb + size + 1
    hashes[n] = h
    table[slot] = n
    st[i_n] = n + 1
    st[i_b] = nb + size + 1
    return n


@njit(**_JIT)
def rehash(hashes, n, table):
    """Place the first ``n`` entries (by their ``hashes``) into an empty, larger ``table``."""
    mask = np.uint64(table.size - 1)
    for i in range(n):
        slot = hashes[i] & mask
        while table[slot] >= 0:
            slot = (slot + _ONE) & mask
        table[slot] = i


def grown(a, size, fill):
    """``a`` copied into a new array of ``size`` (the rest ``fill``, or left uninitialised if None)."""
    out = np.full(size, fill, a.dtype) if fill is not None else np.empty(size, a.dtype)
    out[: a.size] = a
    return out


class StringTable:
    """Interned byte strings (k-mers or sample ids) with per-entry columns, growable."""

    def __init__(self, cap, nbytes, columns):
        self.arena = np.empty(nbytes, np.uint8)
        self.offs = np.zeros(cap + 1, np.int64)
        self.hashes = np.zeros(cap, np.uint64)
        self.table = np.full(2 * cap, -1, np.int64)
        self.fills = dict(columns)
        self.cols = {name: np.full(cap, fill, dtype) for name, (dtype, fill) in columns.items()}

    @property
    def interned(self):
        """The table's arrays as the compiled parsers take them (new ones after ``grow``)."""
        return Interned(self.arena, self.offs, self.hashes, self.table)

    def grow(self, n, nbytes, need):
        """Make room for ``need`` more bytes and one more entry (``n`` entries of ``nbytes`` held)."""
        if nbytes + need > self.arena.size:
            self.arena = grown(self.arena, max(2 * self.arena.size, nbytes + need), None)
        if n + 2 > self.offs.size:
            cap = 2 * self.hashes.size
            self.offs = grown(self.offs, cap + 1, 0)
            self.hashes = grown(self.hashes, cap, 0)
            for name, (_, fill) in self.fills.items():
                self.cols[name] = grown(self.cols[name], cap, fill)
            self.table = np.full(2 * cap, -1, np.int64)
            rehash(self.hashes, n, self.table)

    def strings(self, nbytes):
        """The entries as a list of str, in the order they were first seen."""
        text = self.arena[:nbytes].tobytes().decode("utf-8")
        return text.split("\n")[:-1]


@njit(nogil=True, cache=True)
def pad(arena, offs, out):
    """Each entry of an arena in a row of ``out``, zero-padded (zero sorts before any byte)."""
    for i in range(out.shape[0]):
        for t in range(offs[i + 1] - 1 - offs[i]):
            out[i, t] = arena[offs[i] + t]


@njit(nogil=True, cache=True)
def reordered(arena, offs, order, out, out_offs):
    """The arena's entries in ``order``, each still followed by a newline."""
    at = 0
    for i in range(order.size):
        a, b = offs[order[i]], offs[order[i] + 1]
        out[at:at + b - a] = arena[a:b]
        at += b - a
        out_offs[i + 1] = at


class ArenaNames:
    """The k-mers of a reader's table as a sliceable sequence of str, decoded a slice at a time."""

    def __init__(self, table, n, nbytes):
        self.arena, self.offs, self.n, self.nbytes = table.arena, table.offs, n, nbytes

    def __len__(self):
        return self.n

    def __getitem__(self, where):
        a, b, _ = where.indices(self.n)
        if b <= a:
            return []
        text = self.arena[self.offs[a]:self.offs[b] - 1].tobytes().decode("utf-8")
        return text.split("\n")

    @property
    def size(self):
        """Bytes of the names joined by NUL (what ``blob`` gives)."""
        return max(self.nbytes - 1, 0)

    def blob(self, piece=PIECE):
        """The names' UTF-8 bytes joined by NUL (checked to hold none), as consecutive uint8 pieces
        of at most ``piece`` bytes: never a copy of the whole arena."""
        for a in range(0, self.size, piece):
            out = self.arena[a:min(self.size, a + piece)].copy()
            out[out == 10] = 0
            yield out


def first_byte(arena, nbytes, value, piece=PIECE, last=None):
    """Position of the first byte ``value`` (with ``last``: of a byte from ``value`` to ``last``)
    in ``arena[:nbytes]``, or -1; a piece at a time."""
    for a in range(0, nbytes, piece):
        part = arena[a:min(nbytes, a + piece)]
        hit = np.flatnonzero(part == value if last is None else (part >= value) & (part <= last))
        if hit.size:
            return a + int(hit[0])
    return -1


def is_utf8(arena, nbytes, piece=PIECE):
    """Whether ``arena[:nbytes]`` is valid UTF-8: ASCII at once (its largest byte), else decoded
    a piece at a time (an incremental decoder keeps a character cut between two pieces)."""
    if not nbytes or int(arena[:nbytes].max()) < 128:
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for a in range(0, nbytes, piece):
            decoder.decode(arena[a:min(nbytes, a + piece)].tobytes(), final=a + piece >= nbytes)
    except UnicodeDecodeError:
        return False
    return True
