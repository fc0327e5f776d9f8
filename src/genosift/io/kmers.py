"""k-mer counter output: `KMER | sample:count ...` lines, plain or compressed.

The text format of fsm-lite and unitig-caller, read by SEER, pyseer and GenoLearn: one k-mer per
line, then ``|``, then the samples holding it with their counts, separated by spaces or tabs::

    ACGTTGCAAGT | sample_1:3 sample_7:1 sample_12:2

The dsm-framework layout that SEER was published with writes columns of statistics between the
k-mer and the bar; they are skipped, as SEER and pyseer skip them::

    ACGTTGCAAGT 5.03 0.16 100 0 100 0.15 100 | 6925_3#7:8 6823_4#17:25

Files may be plain text or compressed with gzip (single or multi-member, e.g. bgzip), bzip2 or
xz; zstd needs the ``zstandard`` package. The compression is told from the file's first bytes,
never from its name, and decompression runs with bounded memory (:mod:`genosift.io.compression`).
A UTF-8 byte-order mark at the start is skipped; CRLF line endings are read; a NUL byte, CR-only
line endings and a line longer than 64 MiB are errors naming the file and the line.

Parsing runs in a compiled kernel over blocks of the decompressed bytes (a line cut by a block
edge is carried over to the next block), so the text of a large file is never held in memory at
once; k-mers and sample ids are interned in hash tables inside the kernel. A thread reads and
decompresses ahead while the kernel parses. Memory: about 8 bytes per stored count while
reading, plus the CSR result (12 bytes per count), plus a few blocks of text.
"""
from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._validation import _names_list, param_error
from ..engine import read_ahead
from . import Dataset, register_reader
from .compression import MAX_LINE_BYTES, DamagedFile, LineTooLong, decompressed

__all__ = ["read_kmers", "BLOCK_SIZE"]

#: Bytes of (decompressed) text parsed per kernel call; a line longer than this is still read
#: whole, up to ``compression.MAX_LINE_BYTES`` (64 MiB) or the block size if that is larger.
BLOCK_SIZE = 1 << 24
_BOM = b"\xef\xbb\xbf"
_MAX_EXACT = 2**53  # the largest count float64 holds exactly (with all smaller integers)

_JIT = dict(nogil=True, cache=True)

# Slots of the int64 state vector shared by the Python driver and the kernel.
_LINE, _FILE, _STAMP, _SN, _SB, _KN, _KB, _NL, _NE, _MAX, _ERR0, _ERR1, _ARG = range(13)
_NSTATE = 13

# Kernel return codes: 0 done, 1-4 an array is full (grow it and call again), >= 10 a bad line.
_OK, _GROW_LINES, _GROW_ENTRIES, _GROW_KMERS, _GROW_SAMPLES = range(5)
(_E_EMPTY_KMER, _E_NO_BAR, _E_DUP_KMER, _E_NO_COLON, _E_EMPTY_ID, _E_BAD_COUNT, _E_BIG_COUNT,
 _E_DUP_SAMPLE) = range(10, 18)

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_ONE = np.uint64(1)


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
def _find(buf, a, b, h, arena, offs, hashes, table):
    """Index of the bytes ``buf[a:b]`` (hash ``h``) in a table, or ``-1 - slot`` of a free slot.

    Entry ``i`` is stored in ``arena[offs[i]:offs[i + 1] - 1]`` followed by a newline, so the whole
    arena decodes to the entries with one ``split``.
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
def _add(buf, a, b, h, slot, arena, offs, hashes, table, st, i_n, i_b):
    """Store ``buf[a:b]`` as a new entry in the free ``slot``; -1 (and the bytes needed) if full.

    (Kept apart from ``_find``: with the insertion in the same function the look-ups, the
    common case, run several times slower.)
    """
    size = b - a
    n = st[i_n]
    nb = st[i_b]
    if n + 2 > offs.size or nb + size + 1 > arena.size:
        st[_ARG] = size + 1
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
def _rehash(hashes, n, table):
    mask = np.uint64(table.size - 1)
    for i in range(n):
        slot = hashes[i] & mask
        while table[slot] >= 0:
            slot = (slot + _ONE) & mask
        table[slot] = i


@njit(**_JIT)
def _parse(buf, pos, st, s_arena, s_offs, s_hash, s_table, s_mark, s_nnz,
           k_arena, k_offs, k_hash, k_table, k_file, k_line, o_kmer, o_nnz, o_samp, o_count):
    """Parse the whole lines of ``buf`` from byte ``pos``; return ``(code, line start)``.

    Per line: the k-mer's index (``o_kmer``) and its number of stored counts (``o_nnz``); per
    non-zero count: the sample's index (``o_samp``) and the count (``o_count``). A line is
    committed only once it is read whole, so the driver can grow a full array and call again
    from the returned line start.
    """
    end = buf.size
    fileno = st[_FILE]
    line = st[_LINE]
    nl = st[_NL]
    ne = st[_NE]
    stamp = st[_STAMP]
    biggest = st[_MAX]
    code = _OK
    start = pos
    e0 = ne
    while pos < end:
        start = pos
        e0 = ne
        p = pos
        while p < end and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
            p += 1
        if p == end or buf[p] == 10:  # blank line
            line += 1
            pos = p + 1
            continue
        a = p
        h = _FNV_OFFSET
        while p < end:
            c = buf[p]
            if c == 32 or c == 9 or c == 13 or c == 10 or c == 124:
                break
            h = (h ^ np.uint64(c)) * _FNV_PRIME
            p += 1
        b = p
        st[_ERR0] = a
        st[_ERR1] = b
        if b == a:
            code = _E_EMPTY_KMER
            break
        while p < end and buf[p] != 124 and buf[p] != 10:  # dsm-framework: statistics before '|'
            p += 1
        if p == end or buf[p] != 124:
            code = _E_NO_BAR
            break
        p += 1
        if nl >= o_kmer.size:
            code = _GROW_LINES
            break
        kidx = _find(buf, a, b, h, k_arena, k_offs, k_hash, k_table)
        if kidx < 0:
            kidx = _add(buf, a, b, h, -1 - kidx, k_arena, k_offs, k_hash, k_table, st, _KN, _KB)
            if kidx < 0:
                code = _GROW_KMERS
                break
        if k_file[kidx] == fileno:
            st[_ARG] = k_line[kidx]
            code = _E_DUP_KMER
            break
        stamp += 1
        while True:
            while p < end and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
                p += 1
            if p == end or buf[p] == 10:
                break
            t0 = p
            h = _FNV_OFFSET
            h_id = h
            colon = -1
            while p < end:
                c = buf[p]
                if c == 32 or c == 9 or c == 13 or c == 10:
                    break
                if c == 58:
                    colon = p
                    h_id = h
                h = (h ^ np.uint64(c)) * _FNV_PRIME
                p += 1
            st[_ERR0] = t0
            st[_ERR1] = p
            if colon < 0:
                code = _E_NO_COLON
                break
            if colon == t0:
                code = _E_EMPTY_ID
                break
            if colon + 1 == p:
                code = _E_BAD_COUNT
                break
            v = parse_count(buf, colon + 1, p)
            if v < 0:
                code = _E_BAD_COUNT if v == -1 else _E_BIG_COUNT
                break
            if ne >= o_samp.size:
                code = _GROW_ENTRIES
                break
            sidx = _find(buf, t0, colon, h_id, s_arena, s_offs, s_hash, s_table)
            if sidx < 0:
                sidx = _add(buf, t0, colon, h_id, -1 - sidx, s_arena, s_offs, s_hash, s_table, st, _SN, _SB)
                if sidx < 0:
                    code = _GROW_SAMPLES
                    break
            if s_mark[sidx] == stamp:
                code = _E_DUP_SAMPLE
                break
            s_mark[sidx] = stamp
            if v > 0:
                o_samp[ne] = sidx
                o_count[ne] = v
                ne += 1
                if v > biggest:
                    biggest = v
        if code != _OK:
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
    if code == _OK:
        start = end
        e0 = ne
    st[_LINE] = line
    st[_NL] = nl
    st[_NE] = e0
    st[_STAMP] = stamp
    st[_MAX] = biggest
    return code, start


@njit(**_JIT)
def _scatter(kmer, nnz, samp, count, row_of, cursor, indices, data):
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
def _first_repeat(indptr, indices, n_cols):
    """``(row, column)`` of the first column stored twice in a row of a CSR matrix, or (-1, -1)."""
    mark = np.full(n_cols, -1, np.int64)
    for r in range(indptr.size - 1):
        for c in range(indptr[r], indptr[r + 1]):
            j = indices[c]
            if mark[j] == r:
                return r, j
            mark[j] = r
    return -1, -1


def _grown(a, size, fill):
    out = np.full(size, fill, a.dtype) if fill is not None else np.empty(size, a.dtype)
    out[: a.size] = a
    return out


class _Table:
    """Interned byte strings (k-mers or sample ids) with per-entry columns, growable."""

    def __init__(self, cap, nbytes, columns):
        self.arena = np.empty(nbytes, np.uint8)
        self.offs = np.zeros(cap + 1, np.int64)
        self.hashes = np.zeros(cap, np.uint64)
        self.table = np.full(2 * cap, -1, np.int64)
        self.fills = dict(columns)
        self.cols = {name: np.full(cap, fill, dtype) for name, (dtype, fill) in columns.items()}

    def grow(self, n, nbytes, need):
        if nbytes + need > self.arena.size:
            self.arena = _grown(self.arena, max(2 * self.arena.size, nbytes + need), None)
        if n + 2 > self.offs.size:
            cap = 2 * self.hashes.size
            self.offs = _grown(self.offs, cap + 1, 0)
            self.hashes = _grown(self.hashes, cap, 0)
            for name, (_, fill) in self.fills.items():
                self.cols[name] = _grown(self.cols[name], cap, fill)
            self.table = np.full(2 * cap, -1, np.int64)
            _rehash(self.hashes, n, self.table)

    def strings(self, nbytes):
        """The entries as a list of str, in the order they were first seen."""
        text = self.arena[:nbytes].tobytes().decode("utf-8")
        return text.split("\n")[:-1]


def _pieces(path, block_size):
    """The file's (decompressed) bytes in pieces of at most ``block_size``, read ahead by a thread;
    a UTF-8 byte-order mark at its start is dropped."""
    source = read_ahead(decompressed(path, max(block_size, 1 << 16)), 2, name="genosift-decompress")
    try:
        first = True
        for out in source:
            if first:
                first = False
                if out.startswith(_BOM):
                    out = out[len(_BOM) :]
            if len(out) <= block_size:
                yield out
            else:
                for i in range(0, len(out), block_size):
                    yield out[i : i + block_size]
    finally:
        source.close()  # stops the thread before the file is closed


class _Reader:
    """Parses k-mer files in turn into interned k-mers, sample ids and per-block count arrays."""

    def __init__(self, block_size):
        self.block_size = block_size
        self.st = np.zeros(_NSTATE, np.int64)
        self.st[_FILE] = -1
        # small to start with (every array doubles when full), so that tests reach the growth paths
        self.samples = _Table(16, 256, {"mark": (np.int64, 0), "nnz": (np.int64, 0)})
        self.kmers = _Table(256, 1 << 13, {"file": (np.int32, -1), "line": (np.int64, 0)})
        self.o_kmer = np.empty(256, np.int64)
        self.o_nnz = np.empty(256, np.int32)
        self.o_samp = np.empty(1024, np.int32)
        self.o_count = np.empty(1024, np.float64)
        self.blocks = []
        self.on_block = None  # called with each parsed block instead of keeping it, if set
        self.paths = []

    def read_file(self, path):
        st = self.st
        st[_FILE] += 1
        st[_LINE] = 0
        self.paths.append(path)
        self.lines_in_file = 0
        limit = max(MAX_LINE_BYTES, self.block_size)
        tail, tail_size = [], 0  # the start of a line cut by a block edge, in pieces (no copies)
        pieces = _pieces(path, self.block_size)
        try:
            for piece in pieces:
                nul = piece.find(b"\x00")
                if nul >= 0:
                    raise self._nul_error(piece, nul)
                start = 0
                if tail:
                    first = piece.find(b"\n")
                    if first < 0:
                        tail.append(piece)
                        tail_size += len(piece)
                        if tail_size > limit:
                            raise LineTooLong(path, st[_LINE] + 1, limit, any(b"\r" in t for t in tail))
                        continue
                    tail.append(piece[: first + 1])
                    self._run(np.frombuffer(b"".join(tail), np.uint8))
                    start = first + 1
                cut = piece.rfind(b"\n") + 1
                if cut > start:
                    self._run(np.frombuffer(piece, np.uint8, count=cut - start, offset=start))
                rest = piece[max(cut, start) :]
                tail, tail_size = ([rest], len(rest)) if rest else ([], 0)
                if tail_size > limit:
                    raise LineTooLong(path, st[_LINE] + 1, limit, b"\r" in rest)
            if tail:
                self._run(np.frombuffer(b"".join(tail), np.uint8))
        except DamagedFile as exc:
            raise DamagedFile(path, exc.kind, exc.reason, f" (found after line {st[_LINE]} of its text)") from None
        finally:
            pieces.close()
        if self.lines_in_file == 0:
            raise self._empty_error(path)

    def _empty_error(self, path):
        """The error for a file without a k-mer line (readers of other layouts say their own)."""
        return ValueError(
            f"{str(path)!r} holds no k-mer lines. Each line must be 'KMER | SAMPLE:COUNT ...'; "
            "check that the k-mer counting finished and that this is the right file."
        )

    def _run(self, buf):
        st = self.st
        st[_NL] = 0
        st[_NE] = 0
        pos = 0
        while True:
            s, k = self.samples, self.kmers
            code, pos = _parse(
                buf, pos, st, s.arena, s.offs, s.hashes, s.table, s.cols["mark"], s.cols["nnz"],
                k.arena, k.offs, k.hashes, k.table, k.cols["file"], k.cols["line"],
                self.o_kmer, self.o_nnz, self.o_samp, self.o_count,
            )
            if code == _OK:
                break
            if code == _GROW_LINES:
                self.o_kmer = _grown(self.o_kmer, 2 * self.o_kmer.size, None)
                self.o_nnz = _grown(self.o_nnz, 2 * self.o_nnz.size, None)
            elif code == _GROW_ENTRIES:
                self.o_samp = _grown(self.o_samp, 2 * self.o_samp.size, None)
                self.o_count = _grown(self.o_count, 2 * self.o_count.size, None)
            elif code == _GROW_KMERS:
                self.kmers.grow(st[_KN], st[_KB], st[_ARG])
            elif code == _GROW_SAMPLES:
                self.samples.grow(st[_SN], st[_SB], st[_ARG])
            else:
                raise self._line_error(code, buf, pos)
        nl, ne = int(st[_NL]), int(st[_NE])
        if nl:
            self.lines_in_file += nl
            counts = self.o_count[:ne]
            # kept as uint32 until the end when they fit (checked), float64 otherwise: 8 bytes per count
            counts = counts.astype(np.uint32) if counts.max(initial=0) < 2**32 else counts.copy()
            block = (self.o_kmer[:nl].copy(), self.o_nnz[:nl].copy(), self.o_samp[:ne].copy(), counts)
            if self.on_block is None:
                self.blocks.append(block)
            else:
                self.on_block(*block)

    def _nul_error(self, piece, at):
        line = int(self.st[_LINE]) + 1 + piece.count(b"\n", 0, at)
        return ValueError(
            f"{str(self.paths[-1])!r}, line {line}: the line holds a NUL byte (\\x00), which k-mer "
            "text never holds: the file is damaged or binary. Check that this is the right file, "
            "or re-create it."
        )

    def _line_error(self, code, buf, pos):
        st = self.st
        where = f"{str(self.paths[-1])!r}, line {st[_LINE] + 1}"
        rest = buf[pos:].tobytes()
        stop = rest.find(b"\n")
        line = rest if stop < 0 else rest[:stop]
        stop = pos + len(line)
        text = _show(buf[pos:stop], 80)
        token = _show(buf[st[_ERR0] : st[_ERR1]], 60)
        form = ("Each line must be 'KMER | SAMPLE:COUNT SAMPLE:COUNT ...' (a k-mer in no sample: 'KMER |'; "
                "columns between the k-mer and the '|' are skipped)")
        if code == _E_EMPTY_KMER:
            msg = f"the line {text} has no k-mer before its '|'. {form}."
        elif code == _E_NO_BAR:
            msg = f"no '|' after the k-mer {token} in {text}. {form}."
        elif code == _E_DUP_KMER:
            msg = (
                f"the k-mer {token} is also on line {st[_ARG]}. Each k-mer must have one line per "
                "file. If the file joins several count runs, pass the parts as separate files, "
                "read_kmers([part1, part2]), to add their counts."
            )
        else:
            colon = bytes(buf[st[_ERR0] : st[_ERR1]]).rfind(b":")
            sample = _show(buf[st[_ERR0] : st[_ERR0] + colon], 60) if colon >= 0 else token
            count = _show(buf[st[_ERR0] + colon + 1 : st[_ERR1]], 30) if colon >= 0 else ""
            entry = "Each entry must be SAMPLE:COUNT, e.g. 'sample_1:3'."
            if code == _E_NO_COLON:
                msg = f"the entry {token} has no ':' before a count. {entry}"
            elif code == _E_EMPTY_ID:
                msg = f"the entry {token} has no sample id before its ':'. {entry}"
            elif code == _E_BAD_COUNT:
                msg = (
                    f"the count {count} of sample {sample} is not a non-negative integer. Counts "
                    "must be whole numbers written with the digits 0-9, e.g. 'sample_1:3' (the "
                    "count follows the last ':' of the entry)."
                )
            elif code == _E_BIG_COUNT:
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
        return ValueError(f"{where}: {msg}")

    def dataset(self, samples, dtype, overlap):
        st = self.st
        n_files = len(self.paths)
        ids = self._decoded(self.samples, int(st[_SN]), int(st[_SB]), "sample id")
        kmers = self._decoded(self.kmers, int(st[_KN]), int(st[_KB]), "k-mer")
        nnz = self.samples.cols["nnz"][: len(ids)]
        if samples is None:
            order = sorted(range(len(ids)), key=ids.__getitem__)
            row_ids = [ids[i] for i in order]
            row_of = np.empty(len(ids), np.int64)
            row_of[order] = np.arange(len(ids))
        else:
            row_ids = samples
            where = {s: r for r, s in enumerate(samples)}
            row_of = np.array([where.get(s, -1) for s in ids], dtype=np.int64)
            _warn_unmatched(samples, ids, row_of, self.paths)
        counts = np.zeros(len(row_ids), np.int64)
        kept = row_of >= 0
        counts[row_of[kept]] = nnz[kept]
        indptr = np.zeros(len(row_ids) + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        total = int(indptr[-1])
        index_dtype = np.int32 if max(total, len(kmers)) < 2**31 else np.int64
        indptr = indptr.astype(index_dtype)
        limit = _exact_limit(dtype)
        direct = int(st[_MAX]) * n_files <= limit
        indices = np.empty(total, index_dtype)
        data = np.empty(total, dtype if direct else np.float64)
        cursor = indptr[:-1].astype(np.int64)
        self.blocks.reverse()
        while self.blocks:  # free each block once it is written
            _scatter(*self.blocks.pop(), row_of, cursor, indices, data)
        X = sp.csr_matrix((data, indices, indptr), shape=(len(row_ids), len(kmers)))
        if n_files > 1:
            if overlap == "error":
                self._check_overlap(X, row_ids, kmers)
            X.sum_duplicates()  # sorts the indices of each row, adds counts found in two files
        else:
            X.has_canonical_format = True  # one file: columns rise along each row, none twice
        if not direct:
            biggest = X.data.max(initial=0)
            if biggest > limit:
                raise ValueError(
                    f"The largest count, {biggest:.0f}, is more than dtype {np.dtype(dtype).name} holds "
                    f"exactly (up to {limit}). Pass dtype=np.float64 (exact up to 2**53)."
                )
            X = X.astype(dtype)
        return Dataset(X, np.array(row_ids, dtype=object), np.array(kmers, dtype=object))

    def _check_overlap(self, X, row_ids, kmers):
        r, j = _first_repeat(X.indptr, X.indices, X.shape[1])
        if r >= 0:
            names = ", ".join(repr(str(p)) for p in self.paths)
            raise ValueError(
                f"Sample {row_ids[r]!r} has counts for the k-mer {kmers[j]!r} in more than one of "
                f"the files {names}. With overlap='error' each (k-mer, sample) pair must come from "
                "one file; pass overlap='sum' to add the counts of files that are parts of one count."
            )

    def _decoded(self, table, n, nbytes, what):
        try:
            return table.strings(nbytes)
        except UnicodeDecodeError as exc:
            i = int(np.searchsorted(table.offs[: n + 1], exc.start, side="right")) - 1
            raw = table.arena[table.offs[i] : table.offs[i + 1] - 1]
            where = " in " + ", ".join(repr(str(p)) for p in self.paths)
            if what == "k-mer":
                f, line = table.cols["file"][i], table.cols["line"][i]
                where = f" in {str(self.paths[f])!r}, line {line}"
            raise ValueError(
                f"The {what} {bytes(raw)!r}{where} is not UTF-8 text. k-mer files are plain "
                "ASCII text; check that this is a k-mer count file and not a binary file."
            ) from None


def _show(raw, limit):
    text = bytes(raw).decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _exact_limit(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return 2 ** (np.finfo(dt).nmant + 1)
    return int(np.iinfo(dt).max)


def _names(names, limit=10):
    return _names_list(list(names), limit)


def _warn_unmatched(samples, ids, row_of, paths):
    found = set(ids)
    absent = [s for s in samples if s not in found]
    extra = sorted(s for s, r in zip(ids, row_of) if r < 0)
    files = ", ".join(repr(str(p)) for p in paths)
    if absent:
        warnings.warn(
            f"{len(absent)} of the {len(samples)} ids in 'samples' are in none of the k-mer files "
            f"({files}); their rows are all zero: {_names(absent)}. Check that the ids are spelt as "
            "in the k-mer files (e.g. 'sample_1' against 'sample_1.fasta').",
            UserWarning,
            stacklevel=4,
        )
    if extra:
        warnings.warn(
            f"{len(extra)} sample ids of the k-mer files ({files}) are not in 'samples' and were "
            f"left out: {_names(extra)}.",
            UserWarning,
            stacklevel=4,
        )


def _path_list(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    try:
        paths = [Path(os.fsdecode(p)) for p in paths]
    except TypeError:
        raise param_error("paths", "read_kmers", "a path or a list of paths", paths) from None
    if not paths:
        raise param_error("paths", "read_kmers", "a path or a non-empty list of paths", paths)
    seen = {}
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"No such file: {str(p)!r}.")
        if p.is_dir():
            raise IsADirectoryError(f"{str(p)!r} is a folder, not a k-mer file.")
        key = p.resolve()
        if key in seen:
            raise ValueError(
                f"The file {str(p)!r} is listed twice in 'paths' (also as {str(seen[key])!r}); "
                "its counts would be added twice. List each file once."
            )
        seen[key] = p
    return paths


def _sample_list(samples):
    if samples is None:
        return None
    if isinstance(samples, (str, bytes)):
        raise param_error("samples", "read_kmers", "a list of sample ids (not one string)", samples)
    out = [str(s) for s in samples]
    if not out:
        raise param_error("samples", "read_kmers", "a non-empty list of sample ids, or None", samples)
    counts = {}
    for s in out:
        counts[s] = counts.get(s, 0) + 1
    dup = sorted(s for s, c in counts.items() if c > 1)
    if dup:
        raise ValueError(
            f"The 'samples' parameter of read_kmers lists {len(dup)} id(s) more than once: "
            f"{_names(dup)}. Each sample must be listed once."
        )
    return out


@register_reader("kmers", suffixes=("kmers", "kmers.txt", ".kmer", ".kmer.txt", ".fsm", ".fsm.txt", ".fsmlite"))
def read_kmers(paths, *, samples=None, dtype=np.float64, overlap="sum", block_size=BLOCK_SIZE):
    """k-mer counts (``KMER | sample:count ...`` text, plain or gzip) as a samples x k-mers CSR matrix.

    Parameters
    ----------
    paths : path or list of paths
        One k-mer file or several. Each line holds a k-mer, ``|``, then ``SAMPLE:COUNT`` entries
        separated by spaces or tabs; only non-zero counts need to be listed. Columns between the
        k-mer and the ``|`` (the statistics of dsm-framework's layout) are skipped. The count follows the
        *last* ``:`` of an entry, so sample ids may hold any characters but whitespace (``-``,
        ``.``, ``/``, ``:`` included). Compression (gzip, bzip2, xz, zstd) is told from the first
        bytes. Several files are combined by k-mer string, never by line position: the columns
        are the union of their k-mers and the counts of one (k-mer, sample) pair found in two
        files are added (see ``overlap``).
    samples : list of str, optional
        The rows, in this order, e.g. the ids of a metadata table. Ids in none of the files get
        all-zero rows, and ids of the files not listed are left out; both cases are reported with
        a ``UserWarning`` naming them. By default the rows are every sample id seen in the files,
        sorted as strings.
    dtype : numpy dtype, default float64
        Type of the stored counts. float64 holds every count up to 2**53 exactly; a smaller type is
        accepted only if every count fits it exactly (``ValueError`` otherwise).
    overlap : {"sum", "error"}, default "sum"
        What to do when two files both hold a count for the same (k-mer, sample) pair: add them
        (the files are parts of one count) or raise ``ValueError`` naming the pair.
    block_size : int, default ``BLOCK_SIZE`` (16 MiB)
        Bytes of decompressed text parsed at a time; it bounds the text held in memory.

    Returns
    -------
    Dataset
        ``X``: ``scipy.sparse.csr_matrix`` (n_samples, n_kmers) of counts with sorted indices and
        no stored zeros; ``sample_ids``: the row ids; ``feature_names``: the k-mers, in the order
        first seen (file by file, line by line).

    Notes
    -----
    - A k-mer with no entries (``KMER |``) is kept as an all-zero column, so the columns hold
      every k-mer of the files; entries with count 0 are read but not stored.
    - Blank lines are skipped; line numbers in messages count them.
    - A k-mer on two lines of one file is an error naming both lines (a joined file: pass its
      parts as separate files instead). A sample listed twice on one line is an error.
    - Malformed lines (no ``|``, an entry without ``:``, a count that is not a non-negative
      integer, a NUL byte, CR-only line endings), a line longer than 64 MiB (or ``block_size``
      if larger), and damaged or truncated compressed files (bytes after the last stream
      included) raise ``ValueError`` naming the file and the line. A UTF-8 byte-order mark at
      the start of a file is skipped.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "counts.kmers"
    >>> _ = path.write_text("ACGTA | s-2:1 s.1:3\\nCGTAC | s-2:70000\\nGGGGG |\\n")
    >>> ds = read_kmers(path)
    >>> ds.sample_ids.tolist(), ds.feature_names.tolist()
    (['s-2', 's.1'], ['ACGTA', 'CGTAC', 'GGGGG'])
    >>> ds.X.toarray().tolist()
    [[1.0, 70000.0, 0.0], [3.0, 0.0, 0.0]]
    """
    path_list = _path_list(paths)
    sample_list = _sample_list(samples)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind not in "iuf":
        raise param_error("dtype", "read_kmers", "a real number type such as np.float64", dtype)
    if overlap not in ("sum", "error"):
        raise param_error("overlap", "read_kmers", "'sum' or 'error'", overlap)
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise param_error("block_size", "read_kmers", "a positive int (bytes)", block_size)
    reader = _Reader(int(block_size))
    for path in path_list:
        reader.read_file(path)
    return reader.dataset(sample_list, dt, overlap)
