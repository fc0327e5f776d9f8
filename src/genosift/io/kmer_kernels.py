"""The compiled parse kernels of the k-mer readers: k-mer text lines and per-sample dumps.

Each kernel parses the whole lines of a block of bytes from a position, interning k-mers and
sample ids with :mod:`genosift.io.arena`, and returns ``(code, line start)``: :data:`OK` when the
block is done, a ``GROW_*`` code when an array is full (the driver grows it and calls again from
the returned line start, so a line is committed only once read whole), an ``E_*`` code >= 10 for a
bad line. The driver and the kernel share an int64 state vector of :data:`NSTATE` slots:
:data:`LINE` and :data:`FILE` (the line and file being read) and :data:`~genosift.io.arena.ARG`
for all, then each kernel's own slots (``KN``... for k-mer text, ``D_KN``... for dumps).
:func:`kmer_line_message` says what is wrong with a k-mer text line, for an error code.
"""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
from numba import njit

from .arena import ARG, FNV_OFFSET, FNV_PRIME, Interned, add, find
from .quoting import shown

__all__ = ["DumpKmers", "Kmers", "LineCounts", "Row", "Samples", "column_sizes", "entry_token", "first_repeat",
           "kmer_line_message", "kmer_token", "parse_count", "parse_dumps", "parse_kmers", "scatter",
           "scatter_columns", "spaces", "token_end"]

_JIT = dict(nogil=True, cache=True)
_MAX_EXACT = 2**53  # the largest count float64 holds exactly (with all smaller integers)

#: Slots of the state vector: the line and file read, then those of the k-mer text kernel.
LINE, FILE, STAMP, SN, SB, KN, KB, NL, NE, MAX, ERR0, ERR1 = range(12)
NSTATE = ARG + 1
#: The dump kernel's own slots (after LINE and FILE).
D_KN, D_KB, D_NE, D_NK, D_MAX, D_ERR0, D_ERR1 = range(2, 9)

#: k-mer text kernel codes: 0 done, 1-4 an array is full (grow it and call again), >= 10 a bad line.
OK, GROW_LINES, GROW_ENTRIES, GROW_KMERS, GROW_SAMPLES = range(5)
(E_EMPTY_KMER, E_NO_BAR, E_DUP_KMER, E_NO_COLON, E_EMPTY_ID, E_BAD_COUNT, E_BIG_COUNT,
 E_DUP_SAMPLE) = range(10, 18)
#: Dump kernel codes.
D_OK, D_GROW_ENTRIES, D_GROW_KMERS = range(3)
D_E_FORM, D_E_COUNT, D_E_BIG, D_E_DUP = range(10, 14)
#: The slots counting the entries and bytes of each table (the ``tally`` of ``arena.add``).
SAMPLE_TALLY, KMER_TALLY, D_KMER_TALLY = (SN, SB), (KN, KB), (D_KN, D_KB)


class Samples(NamedTuple):
    """The sample ids of k-mer text as the kernels take them: the interned ids (``strings``) and,
    per id, the stamp of the last line that listed it (``mark``) and its number of counts (``nnz``)."""

    strings: Interned
    mark: np.ndarray
    nnz: np.ndarray


class Kmers(NamedTuple):
    """The k-mers of k-mer text as the kernels take them: the interned k-mers (``strings``) and, per
    k-mer, the file and the line that last held it (``file``, ``line``)."""

    strings: Interned
    file: np.ndarray
    line: np.ndarray


class LineCounts(NamedTuple):
    """A block of k-mer text parsed: per line the k-mer's index (``kmer``) and its number of stored
    counts (``nnz``); per non-zero count the sample's index (``samp``) and the count (``count``)."""

    kmer: np.ndarray
    nnz: np.ndarray
    samp: np.ndarray
    count: np.ndarray


class DumpKmers(NamedTuple):
    """The k-mers of dumps as the kernel takes them: the interned k-mers (``strings``) and, per
    k-mer, the file and line that last held it and its number of non-zero counts (``nnz``)."""

    strings: Interned
    file: np.ndarray
    line: np.ndarray
    nnz: np.ndarray


class Row(NamedTuple):
    """A sample's row of counts from its dump: per non-zero count the k-mer's index (``col``) and
    the count."""

    col: np.ndarray
    count: np.ndarray


@njit(**_JIT)
def parse_count(buf, a, b):
    """The decimal count written in ``buf[a:b]``: its value; -1 if a character is not a digit; -2
    beyond 2**53, the largest count float64 holds with every smaller integer."""
    v = np.int64(0)
    for q in range(a, b):
        d = np.int64(buf[q]) - 48
        if d < 0 or d > 9:
            return np.int64(-1)
        v = v * 10 + d
        if v > _MAX_EXACT:
            return np.int64(-2)
    return v


@njit(**_JIT)
def spaces(buf, p, end):
    """The first byte from ``p`` that is not a space, tab or CR."""
    while p < end and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
        p += 1
    return p


@njit(**_JIT)
def token_end(buf, p, end):
    """The end of the word at ``p``: the next space, tab, CR or line break."""
    while p < end and buf[p] != 32 and buf[p] != 9 and buf[p] != 13 and buf[p] != 10:
        p += 1
    return p


@njit(**_JIT)
def kmer_token(buf, p, end):
    """The end of the k-mer at ``p`` (the next blank, line break or ``|``) and its FNV-1a hash."""
    h = FNV_OFFSET
    while p < end:
        c = buf[p]
        if c == 32 or c == 9 or c == 13 or c == 10 or c == 124:
            break
        h = (h ^ np.uint64(c)) * FNV_PRIME
        p += 1
    return p, h


@njit(**_JIT)
def entry_token(buf, p, end):
    """The end of the ``SAMPLE:COUNT`` entry at ``p``, its last colon (-1: none) and the FNV-1a
    hash of the bytes before that colon (the sample id)."""
    h = FNV_OFFSET
    h_id = h
    colon = -1
    while p < end:
        c = buf[p]
        if c == 32 or c == 9 or c == 13 or c == 10:
            break
        if c == 58:
            colon = p
            h_id = h
        h = (h ^ np.uint64(c)) * FNV_PRIME
        p += 1
    return p, colon, h_id


@njit(**_JIT)
def parse_kmers(buf, pos, st, samples, kmers, out):
    """Parse the whole lines of ``buf`` from byte ``pos`` into the :class:`LineCounts` ``out``,
    interning the ids and k-mers in ``samples`` and ``kmers``; return ``(code, line start)``.

    A line is committed only once it is read whole, so the driver can grow a full array and call
    again from the returned line start.
    """
    s_strings, s_mark, s_nnz = samples
    k_strings, k_file, k_line = kmers
    s_arena, s_offs, s_hash, s_table = s_strings
    k_arena, k_offs, k_hash, k_table = k_strings
    o_kmer, o_nnz, o_samp, o_count = out
    end = buf.size
    fileno = st[FILE]
    line = st[LINE]
    nl = st[NL]
    ne = st[NE]
    stamp = st[STAMP]
    biggest = st[MAX]
    code = OK
    start = pos
    e0 = ne
    while pos < end:
        start = pos
        e0 = ne
        p = spaces(buf, pos, end)
        if p == end or buf[p] == 10:  # blank line
            line += 1
            pos = p + 1
            continue
        a = p
        b, h = kmer_token(buf, a, end)
        p = b
        st[ERR0] = a
        st[ERR1] = b
        if b == a:
            code = E_EMPTY_KMER
            break
        while p < end and buf[p] != 124 and buf[p] != 10:  # dsm-framework: statistics before '|'
            p += 1
        if p == end or buf[p] != 124:
            code = E_NO_BAR
            break
        p += 1
        if nl >= o_kmer.size:
            code = GROW_LINES
            break
        kidx = find(buf, a, b, h, k_arena, k_offs, k_hash, k_table)
        if kidx < 0:
            kidx = add(buf, a, b, h, -1 - kidx, k_strings, st, KMER_TALLY)
            if kidx < 0:
                code = GROW_KMERS
                break
        if k_file[kidx] == fileno:
            st[ARG] = k_line[kidx]
            code = E_DUP_KMER
            break
        stamp += 1
        while True:
            p = spaces(buf, p, end)
            if p == end or buf[p] == 10:
                break
            t0 = p
            p, colon, h_id = entry_token(buf, t0, end)
            st[ERR0] = t0
            st[ERR1] = p
            if colon < 0:
                code = E_NO_COLON
                break
            if colon == t0:
                code = E_EMPTY_ID
                break
            if colon + 1 == p:
                code = E_BAD_COUNT
                break
            v = parse_count(buf, colon + 1, p)
            if v < 0:
                code = E_BAD_COUNT if v == -1 else E_BIG_COUNT
                break
            if ne >= o_samp.size:
                code = GROW_ENTRIES
                break
            sidx = find(buf, t0, colon, h_id, s_arena, s_offs, s_hash, s_table)
            if sidx < 0:
                sidx = add(buf, t0, colon, h_id, -1 - sidx, s_strings, st, SAMPLE_TALLY)
                if sidx < 0:
                    code = GROW_SAMPLES
                    break
            if s_mark[sidx] == stamp:
                code = E_DUP_SAMPLE
                break
            s_mark[sidx] = stamp
            if v > 0:
                o_samp[ne] = sidx
                o_count[ne] = v
                ne += 1
                if v > biggest:
                    biggest = v
        if code != OK:
            break
        for q in range(e0, ne):
            s_nnz[o_samp[q]] += 1
        o_kmer[nl] = kidx
        o_nnz[nl] = ne - e0
        nl += 1
        line += 1
        k_file[kidx] = fileno
        k_line[kidx] = line
        pos = p + 1
    if code == OK:
        start = end
        e0 = ne
    st[LINE] = line
    st[NL] = nl
    st[NE] = e0
    st[STAMP] = stamp
    st[MAX] = biggest
    return code, start


@njit(**_JIT)
def scatter(kmer, nnz, samp, count, row_of, cursor, indices, data):
    """Write one block's counts into their CSR rows (``cursor``: next free slot of each row)."""
    e = 0
    for i in range(kmer.size):
        col = kmer[i]
        for _ in range(nnz[i]):
            r = row_of[samp[e]]
            if r >= 0:
                c = cursor[r]
                indices[c] = col
                data[c] = count[e]
                cursor[r] = c + 1
            e += 1


@njit(**_JIT)
def column_sizes(kmer, nnz, samp, row_of, sizes):
    """Add one block's kept entries (samples with a row) to the entry count of each k-mer column."""
    e = 0
    for i in range(kmer.size):
        kept = 0
        for _ in range(nnz[i]):
            if row_of[samp[e]] >= 0:
                kept += 1
            e += 1
        sizes[kmer[i]] += kept


@njit(**_JIT)
def scatter_columns(kmer, nnz, samp, count, row_of, cursor, indices, data):
    """Write one block's counts into their CSC columns (``cursor``: next free slot of each column)."""
    e = 0
    for i in range(kmer.size):
        c = cursor[kmer[i]]
        for _ in range(nnz[i]):
            r = row_of[samp[e]]
            if r >= 0:
                indices[c] = r
                data[c] = count[e]
                c += 1
            e += 1
        cursor[kmer[i]] = c


@njit(**_JIT)
def first_repeat(indptr, indices, n_cols):
    """``(row, column)`` of the first column stored twice in a row of a CSR matrix, or (-1, -1)."""
    mark = np.full(n_cols, -1, np.int64)
    for r in range(indptr.size - 1):
        for c in range(indptr[r], indptr[r + 1]):
            j = indices[c]
            if mark[j] == r:
                return r, j
            mark[j] = r
    return -1, -1


def kmer_line_message(code, st, buf, pos):
    """What is wrong with the k-mer text line at ``buf[pos:]``, for the kernel's error ``code``."""
    rest = buf[pos:].tobytes()
    stop = rest.find(b"\n")
    line = rest if stop < 0 else rest[:stop]
    stop = pos + len(line)
    text = shown(buf[pos:stop], 80)
    token = shown(buf[st[ERR0] : st[ERR1]], 60)
    form = ("Each line must be 'KMER | SAMPLE:COUNT SAMPLE:COUNT ...' (a k-mer in no sample: 'KMER |'; "
            "columns between the k-mer and the '|' are skipped)")
    if code == E_EMPTY_KMER:
        msg = f"the line {text} has no k-mer before its '|'. {form}."
    elif code == E_NO_BAR:
        msg = f"no '|' after the k-mer {token} in {text}. {form}."
    elif code == E_DUP_KMER:
        msg = (
            f"the k-mer {token} is also on line {st[ARG]}. Each k-mer must have one line per "
            "file. If the file joins several count runs, pass the parts as separate files, "
            "read_kmers([part1, part2]), to add their counts."
        )
    else:
        colon = bytes(buf[st[ERR0] : st[ERR1]]).rfind(b":")
        sample = shown(buf[st[ERR0] : st[ERR0] + colon], 60) if colon >= 0 else token
        count = shown(buf[st[ERR0] + colon + 1 : st[ERR1]], 30) if colon >= 0 else ""
        entry = "Each entry must be SAMPLE:COUNT, e.g. 'sample_1:3'."
        if code == E_NO_COLON:
            msg = f"the entry {token} has no ':' before a count. {entry}"
        elif code == E_EMPTY_ID:
            msg = f"the entry {token} has no sample id before its ':'. {entry}"
        elif code == E_BAD_COUNT:
            msg = (
                f"the count {count} of sample {sample} is not a non-negative integer. Counts "
                "must be whole numbers written with the digits 0-9, e.g. 'sample_1:3' (the "
                "count follows the last ':' of the entry)."
            )
        elif code == E_BIG_COUNT:
            msg = (
                f"the count {count} of sample {sample} is above 2**53, the largest count "
                "stored exactly. Check the counting step: no k-mer occurs that often in a genome."
            )
        else:
            msg = (
                f"sample {sample} is listed twice for the same k-mer in {text}. List each "
                "sample once per line, with its total count."
            )
    if re.search(rb"\r[^\r\n]", line):
        msg += (
            " The file uses CR (old Mac) line endings, so its lines run together: convert them "
            "to LF first, e.g. with `tr '\\r' '\\n' < FILE > FILE.kmers`."
        )
    return msg


# ---------------------------------------------------------------------------------------------
# per-sample dumps: KMER COUNT lines


@njit(**_JIT)
def parse_dumps(buf, pos, st, kmers, row):
    """Parse the whole lines of ``buf`` from ``pos`` into the sample's :class:`Row` ``row``,
    interning the k-mers in the :class:`DumpKmers` ``kmers``; return ``(code, line start)``.

    A line is committed only once read whole, so the driver can grow a full array and call again.
    """
    strings, k_file, k_line, k_nnz = kmers
    arena, offs, hashes, table = strings
    o_col, o_count = row
    end = buf.size
    line, ne, nk, biggest, fileno = st[LINE], st[D_NE], st[D_NK], st[D_MAX], st[FILE]
    last = np.int64(-1)  # the k-mer of the previous line
    code = D_OK
    start = pos
    while pos < end:
        start = pos
        a = spaces(buf, pos, end)
        if a == end or buf[a] == 10:  # blank line
            line += 1
            pos = a + 1
            continue
        b = token_end(buf, a, end)  # the k-mer
        t0 = spaces(buf, b, end)
        t1 = token_end(buf, t0, end)  # the count
        p = spaces(buf, t1, end)
        st[D_ERR0], st[D_ERR1] = t0, t1
        if t0 == t1 or (p < end and buf[p] != 10):  # one field, or more than two
            code = D_E_FORM
            break
        v = parse_count(buf, t0, t1)
        if v < 0:
            code = D_E_COUNT if v == -1 else D_E_BIG
            break
        if ne >= o_col.size:
            code = D_GROW_ENTRIES
            break
        # dumps list their k-mers in one order (KMC sorts them, Jellyfish keeps its hash order), so
        # the k-mer after the previous line's, in the order first seen, is tried before the table
        kidx = last + 1
        if kidx >= st[D_KN] or offs[kidx + 1] - offs[kidx] - 1 != b - a:
            kidx = -1
        else:
            o = offs[kidx] - a
            for t in range(a, b):
                if arena[o + t] != buf[t]:
                    kidx = -1
                    break
        if kidx < 0:
            h = FNV_OFFSET
            for t in range(a, b):
                h = (h ^ np.uint64(buf[t])) * FNV_PRIME
            kidx = find(buf, a, b, h, arena, offs, hashes, table)
            if kidx < 0:
                kidx = add(buf, a, b, h, -1 - kidx, strings, st, D_KMER_TALLY)
                if kidx < 0:
                    code = D_GROW_KMERS
                    break
        if k_file[kidx] == fileno:
            st[ARG] = k_line[kidx]
            code = D_E_DUP
            break
        line += 1
        nk += 1
        last = kidx
        k_file[kidx] = fileno
        k_line[kidx] = line
        if v > 0:
            o_col[ne] = kidx
            o_count[ne] = v
            k_nnz[kidx] += 1
            ne += 1
            biggest = max(biggest, v)
        pos = p + 1
    if code == D_OK:
        start = end
    st[LINE], st[D_NE], st[D_NK], st[D_MAX] = line, ne, nk, biggest
    return code, start
