"""The distinct columns of a matrix, found by hashing and then compared value for value.

Methods whose result for a feature depends on that feature's values alone (registered with
``distinct=True``) score each distinct column once and copy its result to the identical ones.
K-mers that occur in exactly the same genomes share one presence pattern: in a clonal bacterial
collection there are several times fewer patterns than k-mers (SEER's 120-genome example: 13,769
patterns for 134,298 k-mers), so a per-feature model fit costs several times less.

Columns are identical when their values are identical bit for bit (dense), or when they store the
same entries in the same order (CSC). That is stricter than equal values (``-0.0`` and ``0.0``,
or an explicitly stored zero, make columns distinct) and never wrong: identical input gives the
method identical work, so the copied results are the very bits it would have computed.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

__all__ = ["EntryHashes", "FirstColumns", "distinct_columns", "mix64"]

_SEED = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S1, _S2, _S3 = np.uint64(30), np.uint64(27), np.uint64(31)


@njit(cache=True, nogil=True)
def mix64(h):
    """A 64-bit finaliser (splitmix64's): every input bit reaches every output bit."""
    h = (h ^ (h >> _S1)) * _M1
    h = (h ^ (h >> _S2)) * _M2
    return h ^ (h >> _S3)


#: An odd constant that spreads a row index over all 64 bits before its value is mixed in.
_ROW = np.uint64(0xD6E8FEB86659FD93)


@njit(cache=True, nogil=True, parallel=True)
def _hashes(dense, indptr, indices, values, b, is_dense):
    """One 64-bit hash per column: of a dense matrix's values (as unsigned bits, read row by row),
    or of a CSC matrix's stored (row, value) pairs: the wrapping sum of one mixed word per pair
    (no chain from entry to entry, so the entries of a column hash side by side), mixed with
    the column's length. Equal hashes are only candidates: ``_same`` decides."""
    h = np.full(b, _SEED, dtype=np.uint64)
    if is_dense:
        for i in range(dense.shape[0]):
            for j in range(b):
                h[j] = mix64(h[j] ^ np.uint64(dense[i, j]))
        return h
    for j in prange(b):
        x = np.uint64(0)
        for k in range(indptr[j], indptr[j + 1]):
            x += mix64(values[k] ^ (np.uint64(indices[k]) * _ROW))
        h[j] = mix64(x ^ np.uint64(indptr[j + 1] - indptr[j]))
    return h


@njit(cache=True, nogil=True)
def _same(dense, indptr, indices, values, a, c, is_dense):
    """Whether columns ``a`` and ``c`` are identical."""
    if is_dense:
        for i in range(dense.shape[0]):
            if dense[i, a] != dense[i, c]:
                return False
        return True
    s, t, m = indptr[a], indptr[c], indptr[a + 1] - indptr[a]
    if indptr[c + 1] - t != m:
        return False
    for k in range(m):
        if indices[s + k] != indices[t + k] or values[s + k] != values[t + k]:
            return False
    return True


@njit(cache=True, nogil=True, parallel=True)
def _representatives(order, h, dense, indptr, indices, values, is_dense):
    """``rep[j]``: the first column identical to column ``j`` (``j`` itself if none before it).
    ``order`` sorts the hashes ``h`` stably, so each run of equal hashes lists its columns in
    increasing order; a column is compared with the run's earlier representatives only (one
    comparison, unless two different columns share a hash). Runs are independent: they are
    taken on the engine's threads."""
    b = order.shape[0]
    rep = np.empty(b, dtype=np.int64)
    starts = np.empty(b + 1, dtype=np.int64)
    n_runs = 0
    for k in range(b):
        if k == 0 or h[order[k]] != h[order[k - 1]]:
            starts[n_runs] = k
            n_runs += 1
    starts[n_runs] = b
    for run in prange(n_runs):
        start, stop = starts[run], starts[run + 1]
        for k in range(start, stop):
            j = order[k]
            rep[j] = j
            for m in range(start, k):
                r = order[m]
                if rep[r] == r and _same(dense, indptr, indices, values, r, j, is_dense):
                    rep[j] = r
                    break
    return rep


def _unsigned(values):
    """``values`` seen as unsigned integers of the same width (bit patterns, compared exactly)."""
    values = np.asarray(values)
    if values.dtype.itemsize not in (1, 2, 4, 8):
        values = values.astype(np.float64)
    return values.view(np.dtype(f"u{values.dtype.itemsize}"))


def distinct_columns(M):
    """The distinct columns of ``M`` (an ndarray, or a CSC matrix) and where each column's copy is.

    Returns ``(first, inverse)``: ``first`` the index of the first occurrence of each distinct
    column, in increasing order, and ``inverse`` (one entry per column) the position in ``first``
    of its copy, so that ``M[:, first][:, inverse]`` is ``M``; or None when all columns differ.

    Examples
    --------
    >>> import numpy as np
    >>> first, inverse = distinct_columns(np.array([[1., 0., 1.], [0., 2., 0.]]))
    >>> first.tolist(), inverse.tolist()
    ([0, 1], [0, 1, 0])
    """
    b = M.shape[1]
    if b < 2:
        return None
    if sp.issparse(M):
        if M.format != "csc":
            raise TypeError("distinct_columns reads dense arrays and CSC matrices.")
        args = (np.empty((0, 0), dtype=np.uint64), M.indptr, M.indices, _unsigned(M.data), b, False)
    else:
        one = np.empty(1, dtype=np.int64)
        args = (_unsigned(M), one, one, np.empty(1, dtype=np.uint64), b, True)
    h = _hashes(*args)
    rep = _representatives(np.argsort(h, kind="stable"), h, *args[:4], args[5])
    first = np.flatnonzero(rep == np.arange(b))
    if first.size == b:
        return None
    position = np.empty(b, dtype=np.intp)
    position[first] = np.arange(first.size)
    return first, position[rep]


# ----------------------------------------------------------------------------------------------
# Hashes of the non-zero entries of each column, added up chunk by chunk


#: Seeds and row multipliers of the two independent 64-bit hashes of ``EntryHashes``.
_SEED_A, _ROW_A = np.uint64(0x243F6A8885A308D3), np.uint64(0x9E3779B97F4A7C15)
_SEED_B, _ROW_B = np.uint64(0x13198A2E03707344), np.uint64(0xC2B2AE3D27D4EB4F)


_MAGNITUDE = np.uint64(0x7FFFFFFFFFFFFFFF)  # a float64's bits but its sign: 0 for +0.0 and -0.0
_SIGN = np.uint64(63)


@njit(cache=True, nogil=True)
def _hash_a(bits, row):
    """The first hash of one entry: its value's bits and its row."""
    return mix64(bits ^ (np.uint64(row) * _ROW_A) ^ _SEED_A)


@njit(cache=True, nogil=True)
def _hash_b(bits, row):
    """The second, independent hash of one entry."""
    return mix64(mix64(bits + np.uint64(row) * _ROW_B) ^ _SEED_B)


# Each kernel adds an entry (a value that is no zero of either sign) to its column j: both hashes,
# the entry count, and the count of values above 0 (sign bit clear).


@njit(cache=True, nogil=True)
def _bits_of(value, table):
    """A value's float64 bits: looked up in ``table`` for small integer types, else the value is
    the bits already (``_coded``)."""
    if table.shape[0]:
        return table[value]
    return np.uint64(value)


@njit(cache=True, nogil=True)
def _add_rows(indptr, indices, values, table, row0, a, b, count, positive):
    """The entries of a CSR block of rows ``row0...``: each column's sums and counts."""
    for i in range(indptr.shape[0] - 1):
        row = row0 + i
        for k in range(indptr[i], indptr[i + 1]):
            bits, j = _bits_of(values[k], table), indices[k]
            if bits & _MAGNITUDE:
                a[j] += _hash_a(bits, row)
                b[j] += _hash_b(bits, row)
                count[j] += 1
                if (bits >> _SIGN) == 0:
                    positive[j] += 1


@njit(cache=True, nogil=True)
def _add_columns(indptr, indices, values, table, j0, a, b, count, positive):
    """The entries of a CSC block of whole columns ``j0...`` (rows as they are indexed). Serial:
    blocks run side by side on the engine's threads, each writing its own columns."""
    for c in range(indptr.shape[0] - 1):
        j = j0 + c
        for k in range(indptr[c], indptr[c + 1]):
            bits, row = _bits_of(values[k], table), indices[k]
            if bits & _MAGNITUDE:
                a[j] += _hash_a(bits, row)
                b[j] += _hash_b(bits, row)
                count[j] += 1
                if (bits >> _SIGN) == 0:
                    positive[j] += 1


#: Columns of a dense block that one thread hashes, row by row (a tile of each row is contiguous).
_TILE = 512


@njit(cache=True, nogil=True, parallel=True)
def _add_dense(values, table, row0, j0, a, b, count, positive):
    """The values of a dense block (rows ``row0...``, columns ``j0...``): tiles of columns on
    numba's threads, each read row by row."""
    n, w = values.shape
    for t in prange((w + _TILE - 1) // _TILE):
        for i in range(n):
            row = row0 + i
            for c in range(t * _TILE, min(w, (t + 1) * _TILE)):
                bits, j = _bits_of(values[i, c], table), j0 + c
                if bits & _MAGNITUDE:
                    a[j] += _hash_a(bits, row)
                    b[j] += _hash_b(bits, row)
                    count[j] += 1
                    if (bits >> _SIGN) == 0:
                        positive[j] += 1


class EntryHashes:
    """Two independent 64-bit hashes of each column's non-zero entries (row, value), summed
    entry by entry, so that they are taken from row chunks or blocks of whole columns alike, in
    any order: a column's key is the same whichever way its entries come. Columns with equal keys
    hold the same non-zero values in the same rows (two different columns share a key with a
    chance of about ``m**2 / 2**129`` among ``m`` distinct columns: below 1e-20 for 10**8).

    Values are read as float64 bits (a count of 3 and 3.0 are the same); zeros, stored or not,
    are no entries, and NaN is refused by the callers. ``rows(X, row0)`` adds a block of rows
    whose first is row ``row0``; ``columns(X, j0)`` a block of whole columns starting at column
    ``j0``; ``keys()`` gives the (p, 2) keys; ``count`` holds the non-zero entries of each column
    and ``positive`` those above 0 (its carriers).

    >>> import numpy as np
    >>> X = np.array([[1., 0., 1.], [0., 2., 0.], [3., 0., 3.]])
    >>> h = EntryHashes(3); h.rows(X[:2], 0); h.rows(X[2:], 2)
    >>> k = h.keys(); bool((k[0] == k[2]).all()), bool((k[0] == k[1]).all())
    (True, False)
    """

    def __init__(self, p):
        self.a = np.zeros(p, dtype=np.uint64)
        self.b = np.zeros(p, dtype=np.uint64)
        self.count = np.zeros(p, dtype=np.int64)
        self.positive = np.zeros(p, dtype=np.int64)

    def rows(self, X, row0, *, canonical=False):
        """Add the rows ``row0 ... row0 + len(X)`` (dense, or any sparse matrix; ``canonical``: a
        sparse one is known to hold no duplicate entries, as a store's blocks, checked on reading)."""
        if sp.issparse(X):
            M = X.tocsr()
            if not canonical and not M.has_canonical_format:
                M = M.copy()
                M.sum_duplicates()
            _add_rows(M.indptr, M.indices, *_coded(M.data), row0, *self._arrays())
        else:
            _add_dense(*_coded(np.asarray(X)), row0, 0, *self._arrays())

    def columns(self, X, j0, *, canonical=False):
        """Add the whole columns ``j0 ... j0 + X.shape[1]`` (dense, or any sparse matrix;
        ``canonical`` as for ``rows``)."""
        if sp.issparse(X):
            M = X.tocsc()
            if not canonical and not M.has_canonical_format:
                M = M.copy()
                M.sum_duplicates()
            _add_columns(M.indptr, M.indices, *_coded(M.data), j0, *self._arrays())
        else:
            _add_dense(*_coded(np.asarray(X)), 0, j0, *self._arrays())

    def _arrays(self):
        return self.a, self.b, self.count, self.positive

    def keys(self):
        """The (p, 2) uint64 key of each column: both sums, each mixed with the entry count."""
        n = self.count.astype(np.uint64)
        with np.errstate(over="ignore"):
            return np.stack([mix64(self.a ^ (n * _ROW)), mix64(self.b ^ (n * _M1))], axis=1)


#: The float64 bits of every uint8 and uint16 value, for the kernels to look up.
_TABLES = {}
_NO_TABLE = np.empty(0, dtype=np.uint64)


def _coded(values):
    """``(values, table)`` as the kernels read them: small unsigned integers as they are, with the
    table of their float64 bits (a k-mer store's counts, never copied to float64); anything else
    as float64 bit patterns (uint64) and no table."""
    values = np.asarray(values)
    if values.dtype in (np.uint8, np.uint16):
        table = _TABLES.get(values.dtype)
        if table is None:
            table = _TABLES[values.dtype] = np.arange(np.iinfo(values.dtype).max + 1,
                                                      dtype=np.float64).view(np.uint64)
        return values, table
    return np.ascontiguousarray(values, dtype=np.float64).view(np.uint64), _NO_TABLE


class FirstColumns:
    """The columns of a stream of blocks of whole columns that no earlier column equals: each
    distinct column (a pattern: k-mers carried by the same genomes with the same counts) once,
    wherever its copies are. ``keep(block)`` gives the block's columns seen for the first time, in
    their order; ``seen`` counts the distinct columns so far and ``total`` every column.

    Columns are compared by their ``EntryHashes`` keys (as ``genosift.count_patterns`` counts
    patterns), kept sorted: memory 16 bytes per distinct column.

    >>> import numpy as np
    >>> first = FirstColumns()
    >>> first.keep(np.array([[1., 1., 0.], [0., 0., 1.]])).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> first.keep(np.array([[0., 1.], [1., 1.]])).tolist(), first.seen, first.total
    ([[1.0], [1.0]], 3, 5)
    """

    _KEY = np.dtype((np.void, 16))

    def __init__(self):
        self.keys = np.empty(0, dtype=self._KEY)
        self.seen = self.total = 0

    def keep(self, block):
        width = block.shape[1]
        self.total += width
        if not width:
            return block
        hashes = EntryHashes(width)
        hashes.columns(block, 0)
        keys = np.ascontiguousarray(hashes.keys()).view(self._KEY).ravel()
        _, first = np.unique(keys, return_index=True)  # the first of the block's copies
        new = np.zeros(width, dtype=bool)
        new[first] = True
        new &= ~np.isin(keys, self.keys)
        if new.any():
            self.keys = np.union1d(self.keys, keys[new])
            self.seen += int(new.sum())
        if new.all():
            return block
        columns = np.flatnonzero(new)
        return block.tocsc()[:, columns] if sp.issparse(block) else block[:, columns]
