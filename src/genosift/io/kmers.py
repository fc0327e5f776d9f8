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
once; k-mers and sample ids are interned in hash tables inside the kernel. A block is cut at
line breaks into a piece per thread of the engine and the pieces are parsed at once
(:mod:`genosift.io.kmer_scan`); what a thread cannot settle alone (a sample id not seen before,
a malformed line) is parsed on one thread in file order, so the result and every message are
those of a one-thread parse. A thread reads and decompresses ahead while the kernels parse.
Memory: about 8 bytes per stored count while reading, plus the CSR result (12 bytes per count),
plus a few blocks of text and, per block, 40 bytes per line.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import get_num_threads

from ..core.engine import read_ahead
from ..core.validation import param_error
from .arena import StringTable, first_byte, grown
from .compression import MAX_LINE_BYTES, DamagedFile, LineTooLong, decompressed
from .formats import COUNTER_DATABASES
from .kmer_kernels import (
    ARG,
    FILE,
    GROW_ENTRIES,
    GROW_KMERS,
    GROW_LINES,
    GROW_SAMPLES,
    KB,
    KN,
    LINE,
    MAX,
    NE,
    NL,
    NSTATE,
    OK,
    SB,
    SN,
    Kmers,
    LineCounts,
    Samples,
    column_sizes,
    first_repeat,
    kmer_line_message,
    parse_kmers,
    scatter,
    scatter_columns,
)
from .kmer_options import (
    check_block_size,
    check_count_dtype,
    check_max_count,
    check_paths,
    check_samples,
    exact_limit,
    warn_unmatched,
)
from .kmer_scan import (
    BIGGEST,
    CONSUMED,
    LINES,
    RESULTS,
    STOP,
    Kept,
    Pieces,
    ScannedLines,
    commit_lines,
    line_cuts,
    piece_bounds,
    scan_pieces,
)
from .quoting import shown
from .registry import Dataset, register_reader

__all__ = ["BLOCK_SIZE", "KmerReader", "block_pieces", "check_block_size", "check_count_dtype", "check_max_count",
           "check_paths", "check_samples", "exact_limit", "few_lines", "read_kmers", "warn_unmatched"]

#: Bytes of (decompressed) text parsed per kernel call; a line longer than this is still read
#: whole, up to ``compression.MAX_LINE_BYTES`` (64 MiB) or the block size if that is larger.
BLOCK_SIZE = 1 << 24
#: The smallest piece of a block parsed on a thread of its own.
MIN_PIECE = 1 << 20
#: Pieces a block is cut into (None: one per thread of the engine).
PIECES = None
_PIECE_ROWS_BYTES = 1 << 26  # at most this much for the pieces' rows of per-id marks and counts
#: Blocks whose lines are shorter than this on average are parsed on one thread (``few_lines``).
MIN_LINE_BYTES = 14
_BOM = b"\xef\xbb\xbf"


def block_pieces(size):
    """The pieces a block of ``size`` bytes is parsed in: one per thread of the engine (or
    ``PIECES``), each of at least ``MIN_PIECE`` bytes; 1 is a one-thread parse."""
    return max(1, min(PIECES or get_num_threads(), size // MIN_PIECE))


def few_lines(lines, size):
    """Whether a block of ``size`` bytes with at most ``lines`` lines is parsed in pieces: the
    arrays the pieces keep per line (40-56 bytes) stay within a few times the block's size; a
    block of blank or very short lines (a blank-line bomb) is parsed on one thread."""
    return lines * MIN_LINE_BYTES <= size


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


class KmerReader:
    """Parses k-mer files in turn into interned k-mers, sample ids and per-block count arrays.

    ``read_file(path)`` runs the block loop of one file (pieces of decompressed text, lines cut
    by a block edge carried over, NUL bytes and over-long lines refused) and hands every block
    of whole lines to ``parse_block``; ``dataset`` builds the matrix. ``st`` is the kernel's state
    vector (slots of :mod:`genosift.io.kmer_kernels`); ``samples`` and ``kmers`` are the
    :class:`~genosift.io.arena.StringTable` of the ids and k-mers; ``out`` is the
    :class:`~genosift.io.kmer_kernels.LineCounts` the kernels fill with a block's lines. Set
    ``on_block`` to take each parsed block ``(kmer, nnz, samp, counts)`` instead of keeping it in
    ``blocks``. Readers of other layouts subclass it and override ``parse_block``, ``empty_error``
    and ``line_error``.
    """

    def __init__(self, block_size):
        self.block_size = block_size
        self.st = np.zeros(NSTATE, np.int64)
        self.st[FILE] = -1
        # small to start with (every array doubles when full), so that tests reach the growth paths
        self.samples = StringTable(16, 256, {"mark": (np.int64, 0), "nnz": (np.int64, 0)})
        self.kmers = StringTable(256, 1 << 13, {"file": (np.int32, -1), "line": (np.int64, 0)})
        self.out = LineCounts(np.empty(256, np.int64), np.empty(256, np.int32), np.empty(1024, np.int32),
                              np.empty(1024, np.float64))
        self.blocks = []
        self.on_block = None  # called with each parsed block instead of keeping it, if set
        self.paths = []

    def read_file(self, path):
        st = self.st
        st[FILE] += 1
        st[LINE] = 0
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
                            raise LineTooLong(path, st[LINE] + 1, limit, any(b"\r" in t for t in tail))
                        continue
                    tail.append(piece[: first + 1])
                    self.parse_block(np.frombuffer(b"".join(tail), np.uint8))
                    start = first + 1
                cut = piece.rfind(b"\n") + 1
                if cut > start:
                    self.parse_block(np.frombuffer(piece, np.uint8, count=cut - start, offset=start))
                rest = piece[max(cut, start) :]
                tail, tail_size = ([rest], len(rest)) if rest else ([], 0)
                if tail_size > limit:
                    raise LineTooLong(path, st[LINE] + 1, limit, b"\r" in rest)
            if tail:
                self.parse_block(np.frombuffer(b"".join(tail), np.uint8))
        except DamagedFile as exc:
            raise DamagedFile(path, exc.kind, exc.reason, f" (found after line {st[LINE]} of its text)") from None
        finally:
            pieces.close()
        if self.lines_in_file == 0:
            raise self.empty_error(path)

    def empty_error(self, path):
        """The error for a file without a k-mer line (readers of other layouts say their own)."""
        return ValueError(
            f"{str(path)!r} holds no k-mer lines. Each line must be 'KMER | SAMPLE:COUNT ...'; "
            "check that the k-mer counting finished and that this is the right file."
        )

    def parse_block(self, buf):
        """Parse a block of whole lines (a uint8 array), growing the arrays the kernel fills: on
        every thread when the block is large enough and sample ids are known
        (:mod:`genosift.io.kmer_scan`), else on one; the output is the same either way."""
        st = self.st
        st[NL] = 0
        st[NE] = 0
        pieces = min(block_pieces(buf.size), self._room_for_pieces())
        if pieces > 1:
            self._parse_pieces(buf, pieces)
        else:
            self._parse_from(buf, 0)
        nl, ne, out = int(st[NL]), int(st[NE]), self.out
        if nl:
            self.lines_in_file += nl
            counts = out.count[:ne]
            # kept as uint32 until the end when they fit (checked), float64 otherwise: 8 bytes per count
            counts = counts.astype(np.uint32) if counts.max(initial=0) < 2**32 else counts.copy()
            block = (out.kmer[:nl].copy(), out.nnz[:nl].copy(), out.samp[:ne].copy(), counts)
            if self.on_block is None:
                self.blocks.append(block)
            else:
                self.on_block(*block)

    def _room_for_pieces(self):
        """The most pieces whose rows of marks and counts of the known ids (8 bytes an id each)
        fit ``_PIECE_ROWS_BYTES``."""
        return max(1, _PIECE_ROWS_BYTES // max(8 * int(self.st[SN]), 1))

    def _grow_lines(self, size):
        """Room for ``size`` lines in ``out``."""
        self.out = self.out._replace(kmer=grown(self.out.kmer, size, None), nnz=grown(self.out.nnz, size, None))

    def _grow_entries(self, size):
        """Room for ``size`` counts in ``out``."""
        self.out = self.out._replace(samp=grown(self.out.samp, size, None), count=grown(self.out.count, size, None))

    def _parse_from(self, buf, pos):
        """Parse the lines of ``buf`` from ``pos`` on one thread, after what the block holds."""
        st = self.st
        while True:
            s = self.samples
            code, pos = parse_kmers(buf, pos, st, Samples(s.interned, s.cols["mark"], s.cols["nnz"]),
                                    self._kmer_table(), self.out)
            if code == OK:
                return
            if code == GROW_LINES:
                self._grow_lines(2 * self.out.kmer.size)
            elif code == GROW_ENTRIES:
                self._grow_entries(2 * self.out.samp.size)
            elif code == GROW_KMERS:
                self.kmers.grow(st[KN], st[KB], st[ARG])
            elif code == GROW_SAMPLES:
                self.samples.grow(st[SN], st[SB], st[ARG])
            else:
                raise self.line_error(code, buf, pos)

    def _kmer_table(self):
        """The k-mer table as the k-mer text kernels take it."""
        k = self.kmers
        return Kmers(k.interned, k.cols["file"], k.cols["line"])

    def _parse_pieces(self, buf, pieces):
        """Parse ``buf`` in ``pieces`` on every thread; each piece's lines the threads could not
        settle (new ids, errors) are parsed after its kept ones on one thread, in file order. With
        no id known yet (a file's first block), the first piece is parsed on one thread first."""
        st = self.st
        cut = self._cut(buf, pieces)
        if cut is None:
            return
        cuts, bounds = cut
        if st[SN] == 0:
            self._parse_from(buf[: cuts[1]], 0)
            cuts, bounds = cuts[1:], bounds[:, 1:]
            pieces -= 1
            if pieces > self._room_for_pieces():  # the first piece met too many ids for the pieces' rows
                self._parse_from(buf, int(cuts[0]))
                return
        line_at, entry_at = (np.concatenate(([at], at + np.cumsum(b))) for at, b in zip((st[NL], st[NE]), bounds))
        if self.out.kmer.size < line_at[-1]:
            self._grow_lines(max(2 * self.out.kmer.size, int(line_at[-1])))
        if self.out.samp.size < entry_at[-1]:
            self._grow_entries(max(2 * self.out.samp.size, int(entry_at[-1])))
        known = int(st[SN])
        marks = np.zeros((pieces, known), np.int32)
        nnz = np.zeros((pieces, known), np.int32)
        n_lines = int(line_at[-1])  # the line arrays are indexed as the output's
        lines = ScannedLines(*(np.empty(n_lines, np.int64) for _ in range(3)), np.empty(n_lines, np.uint64),
                             np.empty(n_lines, np.int64))
        res = np.zeros((pieces, RESULTS), np.int64)
        scan_pieces(buf, Pieces(cuts, line_at, entry_at), self.samples.interned, marks, nnz, lines, self.out, res)
        for i in range(pieces):
            kept = Kept(int(line_at[i]), int(res[i, LINES]), int(st[LINE]))
            j, src = 0, int(entry_at[i])
            while True:
                code, j, src = commit_lines(buf, st, kept, j, src, lines, self._kmer_table(), self.out)
                if code != GROW_KMERS:
                    break
                self.kmers.grow(st[KN], st[KB], st[ARG])
            st[MAX] = max(st[MAX], res[i, BIGGEST])
            q = kept.first + j
            repeated = None if code == OK else (lines.line[q], lines.start[q])  # a k-mer met before
            self._rest_of_piece(buf[: cuts[i + 1]], kept.base, res[i], repeated)
        self.samples.cols["nnz"][:known] += nnz.sum(axis=0)

    def _cut(self, buf, pieces):
        """``buf`` cut at line breaks into ``pieces``, with each piece's lines and colons
        (``line_cuts``, ``piece_bounds``): ``(cuts, bounds)``; None when ``buf`` was parsed on one
        thread instead, its lines too short for the pieces' per-line arrays to pay (``few_lines``)."""
        cuts = line_cuts(buf, pieces)
        bounds = np.zeros((2, pieces), np.int64)
        piece_bounds(buf, cuts, bounds[0], bounds[1])
        if few_lines(bounds[0].sum(), buf.size):
            return cuts, bounds
        self._parse_from(buf, 0)
        return None

    def _rest_of_piece(self, piece, base, res, repeated=None):
        """After the kept lines of ``piece`` (the block up to the piece's end) are committed, its
        line count ``base`` before them: with ``repeated`` ``(line, start)``, the line of a
        k-mer met before, which the one-thread parse words (it raises); else the lines the
        piece consumed counted, and what follows its stop parsed on one thread."""
        if repeated is not None:
            self.st[LINE] = base + repeated[0]
            self._parse_from(piece, int(repeated[1]))
            raise RuntimeError(f"line {int(self.st[LINE]) + 1}: a repeated k-mer was not refused")
        self.st[LINE] = base + res[CONSUMED]
        if res[STOP] < piece.size:
            self._parse_from(piece, int(res[STOP]))

    def _nul_error(self, piece, at):
        line = int(self.st[LINE]) + 1 + piece.count(b"\n", 0, at)
        path = Path(self.paths[-1])
        database = COUNTER_DATABASES.get(path.suffix.lower())
        fix = (f"This is {database[0]}, not a text dump: dump it with `{database[1]}`, and give the dumps "
               "(a folder of dumps holds only them)." if database else
               "Check that this is the right file, or re-create it.")
        return ValueError(
            f"{str(path)!r}, line {line}: the line holds a NUL byte (\\x00), which k-mer "
            f"text never holds: the file is damaged or binary. {fix}"
        )

    def line_error(self, code, buf, pos):
        """The ValueError for the kernel's error ``code`` on the line at ``buf[pos:]``."""
        where = f"{str(self.paths[-1])!r}, line {self.st[LINE] + 1}"
        return ValueError(f"{where}: {kmer_line_message(code, self.st, buf, pos)}")

    def dataset(self, samples, dtype, overlap, layout="csr"):
        """The parsed counts as a Dataset: rows ``samples`` (None: every id, sorted), counts of
        ``dtype``, a CSR matrix or (``layout="csc"``) a CSC one, each k-mer's line its column."""
        st = self.st
        n_files = len(self.paths)
        ids = self.decoded(self.samples, int(st[SN]), int(st[SB]), "sample id")
        kmers = self.decoded(self.kmers, int(st[KN]), int(st[KB]), "k-mer")
        self.check_kmers(int(st[KN]), int(st[KB]))
        row_ids, row_of = self.sample_rows(ids, samples)
        if layout == "csc":
            sizes = np.zeros(len(kmers), np.int64)
            for kmer, nnz, samp, _ in self.blocks:
                column_sizes(kmer, nnz, samp, row_of, sizes)
        else:
            nnz = self.samples.cols["nnz"][: len(ids)]
            sizes = np.zeros(len(row_ids), np.int64)
            kept = row_of >= 0
            sizes[row_of[kept]] = nnz[kept]
        indptr = np.zeros(len(sizes) + 1, np.int64)
        np.cumsum(sizes, out=indptr[1:])
        total = int(indptr[-1])
        index_dtype = np.int32 if max(total, len(kmers), len(row_ids)) < 2**31 else np.int64
        indptr = indptr.astype(index_dtype)
        limit = exact_limit(dtype)
        direct = int(st[MAX]) * n_files <= limit
        if int(st[MAX]) * n_files >= 2**63:
            raise ValueError(
                f"The counts of {', '.join(repr(str(p)) for p in self.paths[:3])}{' and more' if n_files > 3 else ''} "
                f"reach {int(st[MAX])}: added over {n_files} files they could pass 2**63, beyond what is added "
                "exactly. Check the counting step: no k-mer occurs that often in a genome.")
        indices = np.empty(total, index_dtype)
        data = np.empty(total, dtype if direct else np.int64)  # counts added exactly, then checked
        cursor = indptr[:-1].astype(np.int64)
        fill = scatter_columns if layout == "csc" else scatter
        self.blocks.reverse()
        while self.blocks:  # free each block once it is written
            fill(*self.blocks.pop(), row_of, cursor, indices, data)
        shape = (len(row_ids), len(kmers))
        X = (sp.csc_matrix if layout == "csc" else sp.csr_matrix)((data, indices, indptr), shape=shape)
        if layout == "csc" and n_files == 1:  # rows in the order each line lists its samples
            X.sort_indices()  # checked first: nothing to do where they are in order
        if n_files > 1:
            if overlap == "error":
                self._check_overlap(X, row_ids, kmers)
            X.sum_duplicates()  # sorts the indices of each row, adds counts found in two files
        else:
            X.has_canonical_format = True  # one file: a k-mer once, a sample once on its line
        if not direct:
            check_max_count(X.data.max(initial=0), dtype)
            X = X.astype(dtype)
        return Dataset(X, np.array(row_ids, dtype=object), np.array(kmers, dtype=object))

    def sample_rows(self, ids, samples, stacklevel=5):
        """Row ids and the row of each sample index (-1: left out): ``samples`` in their order, or
        (None) every id of the files, sorted; ids not matched are warned of (``warn_unmatched``)."""
        if samples is None:
            order = sorted(range(len(ids)), key=ids.__getitem__)
            row_of = np.empty(len(ids), np.int64)
            row_of[order] = np.arange(len(ids))
            return [ids[i] for i in order], row_of
        where = {s: r for r, s in enumerate(samples)}
        row_of = np.array([where.get(s, -1) for s in ids], dtype=np.int64)
        warn_unmatched(samples, ids, row_of, self.paths, stacklevel)
        return list(samples), row_of

    def _check_overlap(self, X, row_ids, kmers):
        """Refuse a (sample, k-mer) count found in two files (overlap='error')."""
        r, j = first_repeat(X.indptr, X.indices, X.shape[1 if X.format == "csr" else 0])
        if X.format == "csc":
            r, j = j, r
        if r >= 0:
            names = ", ".join(repr(str(p)) for p in self.paths)
            raise ValueError(
                f"Sample {row_ids[r]!r} has counts for the k-mer {kmers[j]!r} in more than one of "
                f"the files {names}. With overlap='error' each (k-mer, sample) pair must come from "
                "one file; pass overlap='sum' to add the counts of files that are parts of one count."
            )

    def check_kmers(self, n, nbytes, *, one_length=False):
        """Refuse k-mers in lower case (counters write upper case: ``acgt`` beside ``ACGT`` would be
        two features for one sequence) and, with ``one_length`` (dumps of k-mer counters, which
        count one k), k-mers of different lengths; each error names the k-mer, its file and line."""
        table = self.kmers
        lower = first_byte(table.arena, nbytes, ord("a"), last=ord("z"))
        if lower >= 0:
            i = int(np.searchsorted(table.offs[: n + 1], lower, side="right")) - 1
            raise ValueError(
                f"The k-mer {self._kmer_text(i)}{self._kmer_where(i)} holds lower-case letters: k-mer counters write "
                "upper case, and a lower-case k-mer beside its upper-case twin would be two features for one "
                "sequence. Count k-mers of upper-cased sequences (soft-masked assemblies: `seqkit seq -u`, or "
                "`tr a-z A-Z` on the sequence lines).")
        if one_length and n:
            lengths = np.diff(table.offs[: n + 1])
            other = np.flatnonzero(lengths != lengths[0])
            if other.size:
                j = int(other[0])
                first, second = (f"{self._kmer_text(i)}{self._kmer_where(i)}" for i in (0, j))
                raise ValueError(
                    f"The k-mers {first} and {second} "
                    f"have different lengths ({int(lengths[0]) - 1} and {int(lengths[j]) - 1}): the dumps of one "
                    "analysis come from one k-mer length. Count every sample with the same k (`kmc -k`, "
                    "`jellyfish count -m`).")

    def _kmer_text(self, i):
        t = self.kmers
        return shown(t.arena[t.offs[i]:t.offs[i + 1] - 1], 60)

    def _kmer_where(self, i):
        t = self.kmers
        return f" ({str(self.paths[t.cols['file'][i]])!r}, line {t.cols['line'][i]})"

    def decoded(self, table, n, nbytes, what):
        """The entries of ``table`` as str; a ValueError naming the entry (a ``what``) if not UTF-8."""
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


@register_reader("kmers", suffixes=("kmers", "kmers.txt", ".kmer", ".kmer.txt", ".fsm", ".fsm.txt", ".fsmlite"))
def read_kmers(paths, *, samples=None, dtype=np.float64, overlap="sum", block_size=BLOCK_SIZE, layout="csr"):
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
    layout : {"csr", "csc"}, default "csr"
        The sparse layout of ``X``. "csc" (one column per k-mer, each written from its own line)
        costs no transposition; it is what scoring column by column reads (the methods that fit
        a model per feature, such as ``logistic``), while "csr" suits row-wise work.

    Returns
    -------
    Dataset
        ``X``: ``scipy.sparse.csr_matrix`` (``csc_matrix`` with ``layout="csc"``) (n_samples,
        n_kmers) of counts with sorted indices and no stored zeros; ``sample_ids``: the row ids;
        ``feature_names``: the k-mers, in the order first seen (file by file, line by line).

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
    path_list = check_paths(paths)
    sample_list = check_samples(samples)
    dt = check_count_dtype(dtype, "read_kmers")
    if overlap not in ("sum", "error"):
        raise param_error("overlap", "read_kmers", "'sum' or 'error'", overlap)
    check_block_size(block_size, "read_kmers")
    if layout not in ("csr", "csc"):
        raise param_error("layout", "read_kmers", "'csr' or 'csc'", layout)
    reader = KmerReader(int(block_size))
    for path in path_list:
        reader.read_file(path)
    return reader.dataset(sample_list, dt, overlap, layout)
