"""k-mer text lines parsed on every thread: the compiled kernels of the parallel path.

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
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .arena import FNV_OFFSET, FNV_PRIME, add, find
from .kmer_kernels import E_DUP_KMER, FILE, GROW_KMERS, KB, KN, NE, NL, OK, parse_count

__all__ = ["commit_lines", "line_cuts", "piece_bounds", "scan_pieces"]

_JIT = dict(nogil=True, cache=True)
#: Slots of a piece's row of ``scan_pieces``' results.
STOP, LINES, ENTRIES, CONSUMED, BIGGEST = range(5)


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
def scan_pieces(buf, cuts, line_at, entry_at, s_arena, s_offs, s_hash, s_table, marks, nnz,
                l_start, l_a, l_b, l_h, l_line, o_nnz, o_samp, o_count, res):
    """Parse every piece on its own thread, up to its first line the table of ids cannot settle.

    Piece ``i`` writes its lines from ``line_at[i]`` (the line's start, its k-mer's bytes and hash,
    its line number within the piece, its number of counts) and its counts from ``entry_at[i]``;
    ``marks`` and ``nnz`` are its own rows (an id twice on a line; counts per sample). ``res[i]``:
    where it stopped (the piece's end if it read it all), lines kept, counts kept, lines read
    before the stop (blank ones included) and its largest count.
    """
    for i in prange(cuts.size - 1):
        pos = cuts[i]
        end = cuts[i + 1]
        nl = line_at[i]
        ne = entry_at[i]
        line = 0
        biggest = 0
        stop = end
        while pos < end:
            p = pos
            while p < end and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
                p += 1
            if p == end or buf[p] == 10:  # blank line
                line += 1
                pos = p + 1
                continue
            a = p
            hk = FNV_OFFSET
            while p < end:
                c = buf[p]
                if c == 32 or c == 9 or c == 13 or c == 10 or c == 124:
                    break
                hk = (hk ^ np.uint64(c)) * FNV_PRIME
                p += 1
            b = p
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
                while p < end and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
                    p += 1
                if p == end or buf[p] == 10:
                    break
                t0 = p
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
        res[i, ENTRIES] = ne - entry_at[i]
        res[i, CONSUMED] = line
        res[i, BIGGEST] = biggest


@njit(**_JIT)
def commit_lines(buf, st, first, count, j, src, line_base, l_a, l_b, l_h, l_line,
                 k_arena, k_offs, k_hash, k_table, k_file, k_line, o_kmer, o_nnz, o_samp, o_count):
    """Keep the scanned lines ``first + j`` to ``first + count`` of a piece, in order: intern each
    k-mer, move the line and its counts (from ``src``) down to the block's next free places.

    Returns ``(code, j, src)``: :data:`OK` when done; ``GROW_KMERS`` (grow the k-mer table and call
    again from ``j``, ``src``); ``E_DUP_KMER`` at line ``first + j``, a k-mer already on a line of
    this file (the one-thread kernel, run from that line, words the error).
    """
    fileno = st[FILE]
    nl = st[NL]
    ne = st[NE]
    code = OK
    while j < count:
        q = first + j
        a = l_a[q]
        b = l_b[q]
        kidx = find(buf, a, b, l_h[q], k_arena, k_offs, k_hash, k_table)
        if kidx < 0:
            kidx = add(buf, a, b, l_h[q], -1 - kidx, k_arena, k_offs, k_hash, k_table, st, KN, KB)
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
