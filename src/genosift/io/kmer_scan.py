"""k-mer text lines and dump lines parsed on every thread: the compiled kernels of the parallel path.

A block of whole lines is cut at line breaks into one piece per thread (:func:`line_cuts`);
:func:`piece_bounds` counts each piece's line breaks and colons (at most one line per line break,
plus one, and one count per colon), so every piece owns a fixed stretch of the output arrays.
:func:`scan_pieces` then parses the pieces at once, reading the sample-id table without changing
it: a piece stops at its first line that needs more than that (an id not seen yet, an error of any
kind), and its lines before it are kept. :func:`commit_lines` (one thread, in file order) interns
each kept line's k-mer, refuses a k-mer repeated in the file, and moves the line and its counts
down to their place in the block's output. What follows a piece's stop is parsed by the one-thread
kernel (:func:`genosift.io.kmer_kernels.parse_kmers`), which adds new ids in the order the file
first lists them and words every error as it does. The output, the order of the ids and k-mers and
every message are therefore those of the one-thread parse, byte for byte.

A per-sample dump (``KMER COUNT`` lines) is cut the same way: :func:`scan_dump_pieces` parses the
pieces at once and looks each k-mer up in the table as it stands, and :func:`commit_dump_lines`
(one thread, in file order) adds the k-mers it did not find, marks each line's k-mer as the
file's (a k-mer twice in a dump is refused) and fills the sample's row.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .arena import FNV_OFFSET, FNV_PRIME, add, find
from .kmer_kernels import (
    D_E_DUP,
    D_GROW_ENTRIES,
    D_GROW_KMERS,
    D_KMER_TALLY,
    D_MAX,
    D_NE,
    D_NK,
    D_OK,
    E_DUP_KMER,
    FILE,
    GROW_KMERS,
    KMER_TALLY,
    NE,
    NL,
    OK,
    entry_token,
    kmer_token,
    parse_count,
    spaces,
    token_end,
)

__all__ = ["BIGGEST", "CONSUMED", "LINES", "RESULTS", "STOP", "DumpLines", "Kept", "Pieces", "ScannedLines",
           "commit_dump_lines", "commit_lines", "line_cuts", "piece_bounds", "scan_dump_pieces", "scan_pieces"]

_JIT = dict(nogil=True, cache=True)
#: Slots of a piece's row of the scanners' results (``RESULTS`` of them): where it stopped, the
#: lines kept, the lines read before the stop (blank ones included), its largest count.
STOP, LINES, CONSUMED, BIGGEST = range(4)
RESULTS = 4


class Pieces(NamedTuple):
    """A block of k-mer text cut into pieces: where each starts in the block (``cuts``, one more
    than the pieces), and where its lines and its counts start in the arrays the pieces fill."""

    cuts: np.ndarray
    line_at: np.ndarray
    entry_at: np.ndarray


class ScannedLines(NamedTuple):
    """Per k-mer text line kept by a piece's thread: its start in the block, its k-mer's bytes
    (``a`` to ``b``) and hash (``h``), and its line number within the piece."""

    start: np.ndarray
    a: np.ndarray
    b: np.ndarray
    h: np.ndarray
    line: np.ndarray


class DumpLines(NamedTuple):
    """Per dump line kept by a piece's thread: its start, its k-mer's bytes (``a`` to ``b``) and
    hash (``h``, 0 where the k-mer was found without it), the k-mer's index in the table (-1: not
    in it yet), the count and the line number within the piece."""

    start: np.ndarray
    a: np.ndarray
    b: np.ndarray
    h: np.ndarray
    kidx: np.ndarray
    count: np.ndarray
    line: np.ndarray


class Kept(NamedTuple):
    """The lines a piece's thread kept, to commit in file order: the index of the first among the
    scanned lines, how many, and the lines of the file before the piece (``base``)."""

    first: int
    count: int
    base: int


@njit(**_JIT)
def line_cuts(buf, pieces):
    """``pieces + 1`` positions cutting ``buf`` just after line breaks into pieces of about equal size."""
    n = buf.size
    cuts = np.empty(pieces + 1, np.int64)
    cuts[0] = 0
    for k in range(1, pieces):
        p = max(cuts[k - 1], (n * k) // pieces)
        while p < n and buf[p] != 10:
            p += 1
        cuts[k] = min(n, p + 1)
    cuts[pieces] = n
    return cuts


@njit(parallel=True, **_JIT)
def piece_bounds(buf, cuts, lines, entries):
    """Per piece, at most how many lines (line breaks + 1) and counts (colons) it holds."""
    for i in prange(cuts.size - 1):
        nl = 1
        nc = 0
        for p in range(cuts[i], cuts[i + 1]):
            c = buf[p]
            if c == 10:
                nl += 1
            elif c == 58:
                nc += 1
        lines[i] = nl
        entries[i] = nc


@njit(parallel=True, **_JIT)
def scan_pieces(buf, pieces, samples, marks, nnz, lines, out, res):
    """Parse every piece on its own thread, up to its first line the ids of ``samples`` (an
    :class:`~genosift.io.arena.Interned`) cannot settle.

    Piece ``i`` writes its :class:`ScannedLines` ``lines`` and its lines' numbers of counts
    (``out.nnz``) from ``pieces.line_at[i]``, and its counts (``out.samp``, ``out.count``) from
    ``pieces.entry_at[i]``; ``marks`` and ``nnz`` are its own rows (an id twice on a line; counts
    per sample). ``res[i]``: where it stopped (the piece's end if it read it all), lines kept,
    lines read before the stop (blank ones included) and its largest count.
    """
    cuts, line_at, entry_at = pieces
    s_arena, s_offs, s_hash, s_table = samples
    l_start, l_a, l_b, l_h, l_line = lines
    o_nnz, o_samp, o_count = out.nnz, out.samp, out.count
    for i in prange(cuts.size - 1):
        pos = cuts[i]
        end = cuts[i + 1]
        nl = line_at[i]
        ne = entry_at[i]
        line = 0
        biggest = 0
        stop = end
        while pos < end:
            p = spaces(buf, pos, end)
            if p == end or buf[p] == 10:  # blank line
                line += 1
                pos = p + 1
                continue
            a = p
            b, hk = kmer_token(buf, a, end)
            p = b
            ok = b > a
            if ok:
                while p < end and buf[p] != 124 and buf[p] != 10:
                    p += 1
                ok = p < end and buf[p] == 124
            if not ok:
                stop = pos
                break
            p += 1
            e0 = ne
            top = 0
            stamp = line + 1
            while True:
                p = spaces(buf, p, end)
                if p == end or buf[p] == 10:
                    break
                t0 = p
                p, colon, h_id = entry_token(buf, t0, end)
                if colon <= t0 or colon + 1 == p:
                    ok = False
                    break
                v = parse_count(buf, colon + 1, p)
                if v < 0:
                    ok = False
                    break
                sidx = find(buf, t0, colon, h_id, s_arena, s_offs, s_hash, s_table)
                if sidx < 0 or marks[i, sidx] == stamp:
                    ok = False
                    break
                marks[i, sidx] = stamp
                if v > 0:
                    o_samp[ne] = sidx
                    o_count[ne] = v
                    ne += 1
                    if v > top:
                        top = v
            if not ok:
                ne = e0
                stop = pos
                break
            for q in range(e0, ne):
                nnz[i, o_samp[q]] += 1
            l_start[nl] = pos
            l_a[nl] = a
            l_b[nl] = b
            l_h[nl] = hk
            l_line[nl] = line
            o_nnz[nl] = ne - e0
            nl += 1
            line += 1
            if top > biggest:
                biggest = top
            pos = p + 1
        res[i, STOP] = stop
        res[i, LINES] = nl - line_at[i]
        res[i, CONSUMED] = line
        res[i, BIGGEST] = biggest


@njit(**_JIT)
def commit_lines(buf, st, kept, j, src, lines, kmers, out):
    """Keep the :class:`ScannedLines` ``kept.first + j`` to ``kept.first + kept.count`` of a piece,
    in order: intern each k-mer in the :class:`~genosift.io.kmer_kernels.Kmers` ``kmers``, move the
    line and its counts (from ``src``) down to the next free places of ``out``.

    Returns ``(code, j, src)``: :data:`OK` when done; ``GROW_KMERS`` (grow the k-mer table and call
    again from ``j``, ``src``); ``E_DUP_KMER`` at line ``first + j``, a k-mer already on a line of
    this file (the one-thread kernel, run from that line, words the error).
    """
    first, count, line_base = kept
    l_a, l_b, l_h, l_line = lines.a, lines.b, lines.h, lines.line
    strings, k_file, k_line = kmers
    arena, offs, hashes, table = strings
    o_kmer, o_nnz, o_samp, o_count = out
    fileno = st[FILE]
    nl = st[NL]
    ne = st[NE]
    code = OK
    while j < count:
        q = first + j
        a = l_a[q]
        b = l_b[q]
        kidx = find(buf, a, b, l_h[q], arena, offs, hashes, table)
        if kidx < 0:
            kidx = add(buf, a, b, l_h[q], -1 - kidx, strings, st, KMER_TALLY)
            if kidx < 0:
                code = GROW_KMERS
                break
        if k_file[kidx] == fileno:
            code = E_DUP_KMER
            break
        k = o_nnz[q]
        if src != ne:  # only where a piece held fewer counts than colons (ids with ':', zero counts)
            for t in range(k):
                o_samp[ne + t] = o_samp[src + t]
                o_count[ne + t] = o_count[src + t]
        o_kmer[nl] = kidx
        o_nnz[nl] = k
        k_file[kidx] = fileno
        k_line[kidx] = line_base + l_line[q] + 1
        nl += 1
        ne += k
        src += k
        j += 1
    st[NL] = nl
    st[NE] = ne
    return code, j, src


# ---------------------------------------------------------------------------------------------
# per-sample dumps: KMER COUNT lines


@njit(parallel=True, **_JIT)
def scan_dump_pieces(buf, cuts, line_at, kmers, n_known, lines, res):
    """Parse every piece of a dump's block on its own thread, up to its first malformed line.

    Piece ``i`` writes its :class:`DumpLines` ``lines`` from ``line_at[i]``, each line's k-mer
    looked up among the ``n_known`` first of ``kmers`` (an :class:`~genosift.io.arena.Interned`,
    read, never changed). ``res[i]``: where it stopped, lines kept, lines read before the stop
    (blank ones included).
    """
    arena, offs, hashes, table = kmers
    l_start, l_a, l_b, l_h, l_kidx, l_count, l_line = lines
    for i in prange(cuts.size - 1):
        pos = cuts[i]
        end = cuts[i + 1]
        nl = line_at[i]
        line = 0
        last = np.int64(-2)
        stop = end
        while pos < end:
            a = spaces(buf, pos, end)
            if a == end or buf[a] == 10:
                line += 1
                pos = a + 1
                continue
            b = token_end(buf, a, end)  # the k-mer
            t0 = spaces(buf, b, end)
            t1 = token_end(buf, t0, end)  # the count
            p = spaces(buf, t1, end)
            v = parse_count(buf, t0, t1) if t1 > t0 else np.int64(-1)
            if t0 == t1 or (p < end and buf[p] != 10) or v < 0:
                stop = pos
                break
            # the k-mer after the previous line's is tried first (dumps list their k-mers in one order)
            kidx = last + 1
            h = np.uint64(0)
            if kidx < 0 or kidx >= n_known or offs[kidx + 1] - offs[kidx] - 1 != b - a:
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
                if kidx < 0 or kidx >= n_known:
                    kidx = -1
            l_start[nl] = pos
            l_a[nl] = a
            l_b[nl] = b
            l_h[nl] = h
            l_kidx[nl] = kidx
            l_count[nl] = v
            l_line[nl] = line
            nl += 1
            line += 1
            last = kidx if kidx >= 0 else np.int64(-2)
            pos = p + 1
        res[i, STOP] = stop
        res[i, LINES] = nl - line_at[i]
        res[i, CONSUMED] = line


@njit(**_JIT)
def commit_dump_lines(buf, st, kept, j, lines, kmers, row):
    """Keep the :class:`DumpLines` ``kept.first + j`` to ``kept.first + kept.count`` of a dump's
    piece, in order: a k-mer the threads did not find is looked up again and added to the
    :class:`~genosift.io.kmer_kernels.DumpKmers` ``kmers``, each line marks its k-mer as this
    file's, each non-zero count joins the sample's ``row``. Returns ``(code, j)``: ``D_OK``;
    ``D_GROW_KMERS`` or ``D_GROW_ENTRIES`` (grow, call again from ``j``); ``D_E_DUP`` at line
    ``first + j`` (the one-thread kernel, run from that line, words the error)."""
    first, count, line_base = kept
    l_a, l_b, l_h, l_kidx, l_count, l_line = lines.a, lines.b, lines.h, lines.kidx, lines.count, lines.line
    strings, k_file, k_line, k_nnz = kmers
    arena, offs, hashes, table = strings
    o_col, o_count = row
    fileno = st[FILE]
    ne = st[D_NE]
    nk = st[D_NK]
    biggest = st[D_MAX]
    code = D_OK
    while j < count:
        q = first + j
        kidx = l_kidx[q]
        if kidx < 0:
            a = l_a[q]
            b = l_b[q]
            kidx = find(buf, a, b, l_h[q], arena, offs, hashes, table)
            if kidx < 0:
                kidx = add(buf, a, b, l_h[q], -1 - kidx, strings, st, D_KMER_TALLY)
                if kidx < 0:
                    code = D_GROW_KMERS
                    break
            l_kidx[q] = kidx
        if k_file[kidx] == fileno:
            code = D_E_DUP
            break
        v = l_count[q]
        if v > 0 and ne >= o_col.size:
            code = D_GROW_ENTRIES
            break
        k_file[kidx] = fileno
        k_line[kidx] = line_base + l_line[q] + 1
        nk += 1
        if v > 0:
            o_col[ne] = kidx
            o_count[ne] = v
            k_nnz[kidx] += 1
            ne += 1
            if v > biggest:
                biggest = v
        j += 1
    st[D_NE] = ne
    st[D_NK] = nk
    st[D_MAX] = biggest
    return code, j
