"""Per-sample k-mer count dumps (KMC, Jellyfish), merged by k-mer into one matrix or store.

One text file per sample, a k-mer and its count a line: ``KMER<TAB>COUNT`` (``kmc_tools transform
DB dump OUT``, sorted; ``jellyfish dump -c -t DB``) or ``KMER COUNT`` (``jellyfish dump -c``).
A collection is a **list file** (``SAMPLE<TAB>PATH`` lines, paths relative to its folder, blank
lines and ``#`` comments skipped) or a **folder** (each file a sample, names starting with ``.``
skipped; the id is the file name less its compression suffix and its dump suffixes, see
``sample_id``). Rows follow the list (a folder: file names sorted); columns are the union of the
k-mers sorted by their bytes, whatever the order of the samples. A k-mer twice in one dump is an
error naming both lines (a dump lists each k-mer once: the file is joined or damaged).

The k-mer reader's block loop (:mod:`genosift.io.kmers`) feeds a compiled kernel that interns the
k-mers in its hash table; each sample becomes one row. Memory: the k-mer strings and a few arrays
of one value per k-mer, one sample's counts, and the rows (8 bytes a count) while they fit
``chunk_bytes``; ``convert_dumps`` spills the rest beside the output and writes the store from it.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from ..core import engine
from ..core.messages import plain
from ..core.validation import param_error
from .arena import ARG, ArenaNames, StringTable, grown, pad, reordered
from .compression import COMPRESSION_SUFFIXES, open_text
from .formats import dump_files, list_entry
from .kmer_kernels import (
    D_E_BIG,
    D_E_COUNT,
    D_E_FORM,
    D_ERR0,
    D_ERR1,
    D_GROW_ENTRIES,
    D_GROW_KMERS,
    D_KB,
    D_KN,
    D_MAX,
    D_NE,
    D_NK,
    D_OK,
    FILE,
    LINE,
    NSTATE,
    DumpKmers,
    Row,
    parse_dumps,
)
from .kmer_options import count_dtype
from .kmer_scan import LINES, RESULTS, DumpLines, Kept, commit_dump_lines, scan_dump_pieces
from .kmer_store import StoreOutput, check_store_dtype
from .kmers import (
    BLOCK_SIZE,
    KmerReader,
    block_pieces,
    check_block_size,
    check_count_dtype,
    check_max_count,
)
from .quoting import names_list, shown
from .registry import Dataset, register_reader
from .spill import Spill, StreamWriter, by_row

__all__ = ["DUMP_SUFFIXES", "convert_dumps", "dump_collection", "read_dumps", "read_dumps_within", "sample_id"]

#: Suffixes dropped from a dump's file name (after its compression suffix) to give the sample id.
DUMP_SUFFIXES = (".txt", ".tsv", ".dump", ".counts", ".kmc", ".jf", ".jellyfish")
_FORM = ("Each line of a k-mer dump must be 'KMER COUNT': the k-mer, a tab or spaces, and its count, "
         "as `kmc_tools transform DB dump OUT` and `jellyfish dump -c -t DB` write them")
#: The characters a line of a dump (or of a FASTA dump) may hold: others are not echoed in messages.
_DUMP_CHARACTERS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 \t\r>_-.,+")
_BUCKET_BYTES = 64  # bytes per count of sorting one group of columns of the column copy


class _DumpReader(KmerReader):
    """Parses dumps one sample at a time into interned k-mers and one row of counts each."""

    def __init__(self, block_size):
        super().__init__(block_size)
        self.st = np.zeros(NSTATE, np.int64)
        self.st[FILE] = -1
        self.kmers = StringTable(256, 1 << 13, {"file": (np.int32, -1), "line": (np.int64, 0), "nnz": (np.int64, 0)})
        self.row = Row(np.empty(1024, np.int64), np.empty(1024, np.float64))

    def read_sample(self, path):
        """The row of the dump ``path``: (k-mer indices in the order first seen, counts)."""
        self.st[D_NE] = self.st[D_NK] = 0
        self.read_file(path)
        ne = int(self.st[D_NE])
        if self.st[D_KN] >= 2**31:
            raise ValueError(f"The dumps up to {str(path)!r} hold more than 2**31 distinct k-mers, more than "
                             "a matrix column index holds. Split the k-mers (e.g. by prefix) and convert the parts.")
        counts = self.row.count[:ne]
        counts = counts.astype(np.uint32) if counts.max(initial=0) < 2**32 else counts.copy()
        return self.row.col[:ne].astype(np.int32), counts

    def parse_block(self, buf):
        """Parse a block of whole ``KMER COUNT`` lines into the sample's row: in a piece per
        thread when the block is large enough (:mod:`genosift.io.kmer_scan`), else on one; the
        row, the k-mers' order and every message are the same either way."""
        pieces = block_pieces(buf.size)
        if pieces > 1:
            self._parse_pieces(buf, pieces)
        else:
            self._parse_from(buf, 0)
        self.lines_in_file = int(self.st[D_NK])

    def _parse_pieces(self, buf, pieces):
        """Parse ``buf`` in ``pieces`` on every thread; their lines are kept on one thread in file
        order, and what follows a piece's first malformed line is parsed on one thread."""
        st = self.st
        cut = self._cut(buf, pieces)
        if cut is None:
            return
        cuts, bounds = cut
        line_at = np.concatenate(([0], np.cumsum(bounds[0])))
        n_lines = int(line_at[-1])
        lines = DumpLines(*(np.empty(n_lines, np.int64) for _ in range(3)), np.empty(n_lines, np.uint64),
                          *(np.empty(n_lines, np.int64) for _ in range(3)))
        res = np.zeros((pieces, RESULTS), np.int64)
        scan_dump_pieces(buf, cuts, line_at, self.kmers.interned, int(st[D_KN]), lines, res)
        for i in range(pieces):
            kept, j = Kept(int(line_at[i]), int(res[i, LINES]), int(st[LINE])), 0
            while True:
                code, j = commit_dump_lines(buf, st, kept, j, lines, self._kmer_table(), self.row)
                if code == D_GROW_KMERS:
                    self.kmers.grow(st[D_KN], st[D_KB], st[ARG])
                elif code == D_GROW_ENTRIES:
                    self._grow_row()
                else:
                    break
            q = kept.first + j
            repeated = None if code == D_OK else (lines.line[q], lines.start[q])  # a k-mer twice in the dump
            self._rest_of_piece(buf[: cuts[i + 1]], kept.base, res[i], repeated)

    def _kmer_table(self):
        """The k-mer table as the dump kernels take it (with each k-mer's count of samples)."""
        k = self.kmers
        return DumpKmers(k.interned, k.cols["file"], k.cols["line"], k.cols["nnz"])

    def _grow_row(self):
        """Twice the room for the sample's counts in ``row``."""
        self.row = Row(*(grown(a, 2 * a.size, None) for a in self.row))

    def _parse_from(self, buf, pos):
        """Parse the lines of ``buf`` from ``pos`` on one thread, after what the row holds."""
        st = self.st
        while True:
            code, pos = parse_dumps(buf, pos, st, self._kmer_table(), self.row)
            if code == D_OK:
                break
            if code == D_GROW_ENTRIES:
                self._grow_row()
            elif code == D_GROW_KMERS:
                self.kmers.grow(st[D_KN], st[D_KB], st[ARG])
            else:
                raise self.line_error(code, buf, pos)

    def empty_error(self, path):
        return ValueError(f"{str(path)!r} holds no k-mer lines. {_FORM}; check that the k-mer counting "
                          "finished and that this is the right file.")

    def line_error(self, code, buf, pos):
        st = self.st
        line = buf[pos:].tobytes().split(b"\n", 1)[0]
        kmer, count = shown(line.split()[0], 60), shown(buf[st[D_ERR0]:st[D_ERR1]], 30)
        if code == D_E_FORM:
            fasta = "; this is FASTA, Jellyfish's default dump: dump with `jellyfish dump -c -t DB`"
            odd = sorted(set(line.decode("latin-1")) - _DUMP_CHARACTERS)
            # a line of another kind of file (a list naming /etc/passwd) is described, not echoed
            shown_line = (f"the line {shown(line, 80)}" if not odd else
                          f"the line (of {len(line)} characters, {plain(odd[:3])} among them)")
            msg = f"{shown_line} is not 'KMER COUNT'. {_FORM}{fasta if line.startswith(b'>') else ''}."
        elif code == D_E_COUNT:
            msg = f"the count {count} of the k-mer {kmer} is not a non-negative integer (digits 0-9 only)."
        elif code == D_E_BIG:
            msg = (f"the count {count} of the k-mer {kmer} is above 2**53, the largest count stored exactly. "
                   "Check the counting step: no k-mer occurs that often in a genome.")
        else:
            msg = (f"the k-mer {kmer} is also on line {st[ARG]}. A dump lists each k-mer once: this file is "
                   "joined from several dumps or damaged. Dump the sample's database again.")
        return ValueError(f"{str(self.paths[-1])!r}, line {st[LINE] + 1}: {msg}")

    def columns(self, dt):
        """The k-mers sorted by their bytes: (column of each k-mer index, order, arena, offsets),
        the arena as the table keeps it; checks first that every count fits ``dt`` exactly."""
        check_max_count(int(self.st[D_MAX]), dt)
        n, nbytes = int(self.st[D_KN]), int(self.st[D_KB])
        arena, offs = self.kmers.arena[:nbytes], self.kmers.offs[: n + 1]
        if arena.max(initial=0) >= 128:  # not ASCII: must still be UTF-8 (raises naming the line)
            self.decoded(self.kmers, n, nbytes, "k-mer")
        self.check_kmers(n, nbytes, one_length=True)
        width = int(np.diff(offs).max(initial=2)) - 1
        padded = np.zeros((n, width), np.uint8)
        pad(arena, offs, padded)
        order = np.argsort(padded.view(f"S{width}").ravel(), kind="stable")
        del padded
        out, out_offs = np.empty(nbytes, np.uint8), np.zeros(n + 1, np.int64)
        reordered(arena, offs, order, out, out_offs)
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n)
        return rank, order, out, out_offs


def sample_id(name):
    """The sample id of a dump named ``name``: without its compression suffix, then without each
    trailing suffix of :data:`DUMP_SUFFIXES` (``S1.kmc.dump.gz`` -> ``S1``; case ignored)."""
    stem = Path(name).name
    for suffix in COMPRESSION_SUFFIXES:
        if stem.lower().endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    while True:
        cut = next((s for s in DUMP_SUFFIXES if stem.lower().endswith(s) and len(stem) > len(s)), None)
        if cut is None:
            return stem
        stem = stem[: -len(cut)]


def dump_collection(source):
    """The samples of a list file or a folder of dumps, as ``[(sample id, Path)]`` in row order."""
    source = Path(source)
    if not source.exists():
        raise FileNotFoundError(f"No such file or folder: {str(source)!r}.")
    entries, seen, files = [], {}, {}
    if source.is_dir():
        others = sorted(p.name for p in source.iterdir() if not p.name.startswith(".") and not p.is_file())
        if others:
            raise ValueError(
                f"The folder of k-mer dumps {str(source)!r} holds {names_list(others)}, which "
                f"{'is not a file' if len(others) == 1 else 'are not files'} (a folder, a FIFO, a socket or a device): "
                "every entry of the folder that does not start with '.' must be one sample's dump. Move the "
                "others out, or name the samples in a list file of SAMPLE<TAB>PATH lines.")
        found = dump_files(source)
        if not found:
            raise IsADirectoryError(f"{str(source)!r} is a folder, not a data file. Pass the path of a file in it, "
                                    "or a folder of k-mer count dumps, one file per sample: this one holds no files.")
        for path in found:
            s = sample_id(path.name)
            if s in seen:
                raise ValueError(
                    f"The files {seen[s].name!r} and {path.name!r} of the folder {str(source)!r} are both sample "
                    f"{s!r} (a sample id is the file name without its compression and dump suffixes "
                    f"{list(DUMP_SUFFIXES)}). Keep one file per sample, or name the samples in a list file "
                    "of SAMPLE<TAB>PATH lines.")
            key = path.resolve()
            if key in files:
                raise ValueError(
                    f"The files {files[key].name!r} and {path.name!r} of the folder {str(source)!r} are the same "
                    "file (a link to the other): its counts would be read as two samples. Keep one of them.")
            seen[s], files[key] = path, path
            entries.append((s, path))
        return entries
    with open_text(source) as fh:
        for number, text in enumerate(fh, 1):
            entry = list_entry(text)
            where = f"{str(source)!r}, line {number}"
            if entry is None:
                continue
            if entry is False:
                raise ValueError(
                    f"{where}: {text.rstrip(chr(13) + chr(10))[:80]!r} is not 'SAMPLE<TAB>PATH'. "
                    "A list of k-mer dumps holds one line per sample: its id, a tab, and the path of its dump "
                    "(relative to the list file's folder); blank lines and lines starting with '#' are skipped.")
            s, path = entry[0], source.parent / entry[1]
            if s in seen:
                raise ValueError(f"{where}: the sample id {s!r} is also on line {seen[s]}. List each sample once.")
            if not path.is_file():
                what = ("is a folder, not a file" if path.is_dir() else "does not exist" if not path.exists()
                        else "is not a regular file (a FIFO, a socket or a device)")
                raise FileNotFoundError(f"{where}: the dump {entry[1]!r} of sample {s!r} {what} (looked for "
                                        f"{str(path)!r}; paths are relative to the list file's folder).")
            key = path.resolve()
            if key in files:
                raise ValueError(f"{where}: the dump {entry[1]!r} is also the file of line {files[key]}; its "
                                 "counts would be read as two samples. Give each sample its own dump.")
            seen[s], files[key] = number, number
            entries.append((s, path))
    if not entries:
        raise ValueError(f"{str(source)!r} lists no samples: a list of k-mer dumps holds SAMPLE<TAB>PATH lines.")
    return entries


def _plan(source, samples, metadata, absent, owner):
    """The rows to read, ``[(sample id, path or None for an all-zero row)]``, with obs and report."""
    entries = dump_collection(source)
    if samples is not None:
        if isinstance(samples, (str, bytes)):
            raise param_error("samples", owner, "a list of sample ids (not one string)", samples)
        where, wanted = dict(entries), [str(s) for s in samples]
        unknown = [s for s in wanted if s not in where]
        if unknown or len(set(wanted)) < len(wanted) or not wanted:
            raise ValueError(f"The 'samples' parameter of {owner} must name samples of {str(source)!r}, each once"
                             f"{f'; {len(unknown)} are not among them: {names_list(unknown)}' if unknown else ''}"
                             f". Its samples: {names_list([s for s, _ in entries])}.")
        entries = [(s, where[s]) for s in wanted]
    if metadata is None:
        return entries, None, None
    from .metadata import attach_metadata

    skeleton = Dataset(sp.csr_matrix((len(entries), 0)), np.array([s for s, _ in entries], dtype=object),
                       np.array([], dtype=object))
    matched, report = attach_metadata(skeleton, metadata, absent=absent)
    where = dict(entries)
    return [(s, where.get(s)) for s in matched.sample_ids], matched.obs, report


def _read_rows(plan, block_size, keep):
    """Parse the dumps of ``plan`` in turn; ``keep(row, cols, counts)`` takes each row."""
    reader = _DumpReader(int(block_size))
    with engine.progress("Reading k-mer dumps", total=len(plan), unit="samples") as bar:
        for r, (_, path) in enumerate(plan):
            row = reader.read_sample(path) if path is not None else (np.empty(0, np.int32), np.empty(0, np.uint32))
            keep(r, *row)
            bar.advance()
    return reader


def _dataset(reader, rows, row_ids, dt):
    """The rows (k-mer indices first seen, counts) as a Dataset with sorted k-mer columns."""
    rank, _, arena, _ = reader.columns(dt)
    p = rank.size
    indptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([c.size for c, _ in rows], out=indptr[1:])
    index_dtype = np.int32 if max(int(indptr[-1]), p) < 2**31 else np.int64
    indices, data = np.empty(int(indptr[-1]), index_dtype), np.empty(int(indptr[-1]), dt)
    rows.reverse()
    for r in range(len(row_ids)):  # each row freed once placed
        cols, counts = rows.pop()
        indices[indptr[r]:indptr[r + 1]] = rank[cols]
        data[indptr[r]:indptr[r + 1]] = counts
    X = sp.csr_matrix((data, indices, indptr.astype(index_dtype)), shape=(len(row_ids), p))
    X.sort_indices()
    X.has_canonical_format = True  # sorted, and no k-mer twice in a dump
    names = np.array(arena.tobytes().decode("utf-8").split("\n")[:-1], dtype=object)
    return Dataset(X, np.array(row_ids, dtype=object), names)


@register_reader("dumps", suffixes=(".dumps", ".dumps.txt", ".dumps.tsv"))
def read_dumps(source, *, samples=None, dtype=np.float64, block_size=BLOCK_SIZE):
    """Per-sample k-mer dumps (KMC, Jellyfish: ``KMER COUNT`` lines), merged by k-mer into one matrix.

    Parameters
    ----------
    source : path
        A list file of ``SAMPLE<TAB>PATH`` lines (paths relative to its folder; blank lines and
        ``#`` comments skipped), or a folder whose every file is one sample's dump (its id: see
        ``sample_id``). Dumps are plain or compressed (gzip, bzip2, xz, zstd), in any order,
        tab- or space-separated.
    samples : list of str, optional
        The samples to read, in this order; default all, in the list's order (a folder: by name).
    dtype : numpy dtype, default float64
        Type of the stored counts; a smaller type only if every count fits it exactly.
    block_size : int, default ``BLOCK_SIZE`` (16 MiB)
        Bytes of decompressed text parsed at a time.

    Returns
    -------
    Dataset
        ``X``: CSR (samples x k-mers), sorted indices, no stored zeros; ``feature_names``: every
        k-mer of the dumps sorted by its bytes (a k-mer counted 0 is an all-zero column).

    Notes
    -----
    A line that is not ``KMER COUNT``, a count that is not a non-negative integer (or above
    2**53), a k-mer twice in one dump, an empty dump, a listed file that does not exist, a sample
    id listed twice (a folder: two files with one id) and an empty folder are errors naming the
    file and the line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("CCGTA\\t2\\nAACGT\\t5\\n")
    >>> _ = (d / "b.txt").write_text("ACGTA 1\\nCCGTA 7\\n")
    >>> ds = read_dumps(d)
    >>> ds.sample_ids.tolist(), ds.feature_names.tolist()
    (['a', 'b'], ['AACGT', 'ACGTA', 'CCGTA'])
    >>> ds.X.toarray().tolist()
    [[5.0, 0.0, 2.0], [0.0, 1.0, 7.0]]
    """
    dt = check_count_dtype(dtype, "read_dumps")
    check_block_size(block_size, "read_dumps")
    plan, _, _ = _plan(source, samples, None, "drop", "read_dumps")
    rows = []
    reader = _read_rows(plan, block_size, lambda r, cols, counts: rows.append((cols, counts)))
    return _dataset(reader, rows, [s for s, _ in plan], dt)


def convert_dumps(source, out_path, *, metadata=None, samples=None, dtype="auto", column_copy=True,
                  overwrite=False, chunk_bytes=None, block_size=BLOCK_SIZE, absent="error"):
    """Per-sample k-mer dumps (a list file or a folder, as for ``read_dumps``) to a store, in bounded memory.

    Parameters
    ----------
    source, samples, block_size
        As for ``read_dumps``.
    out_path : str or Path
        The store to write (suffix ``.gs.h5ad``), under a temporary name renamed when complete.
    metadata : pandas.DataFrame, optional
        Per-sample table indexed by sample id (``read_metadata``): only the samples it describes
        are read, and its columns are stored as ``obs``.
    dtype : numpy dtype or "auto", default "auto"
        As for ``convert_kmers``: by default the smallest of uint8, uint16 and uint32 that holds
        the largest count.
    column_copy, overwrite
        As for ``write_store``.
    chunk_bytes : int, optional
        Memory budget for the counts (default ``CHUNK_BYTES``, 256 MiB). The rows (8 bytes a
        count) are kept in memory while they fit, beyond it spilled to a temporary file beside
        the output (deleted at the end); the column copy is written in groups of columns of
        about this size.
    absent : {"error", "zeros", "drop"}, default "error"
        Samples of ``metadata`` with no dump: an error naming them and the closest sample ids of
        the dumps (a misspelt id, or a dump forgotten), all-zero rows, or left out.

    Returns
    -------
    (Path, MatchReport or None)
        The store, and the report of the metadata join (None without metadata).
    """
    budget = engine.check_budget(chunk_bytes, "convert_dumps")
    dt = check_store_dtype(dtype, "convert_dumps")
    if absent not in ("error", "zeros", "drop"):
        raise param_error("absent", "convert_dumps", "'error', 'zeros' or 'drop'", absent)
    check_block_size(block_size, "convert_dumps")
    out_path = Path(out_path)
    plan, obs, report = _plan(source, samples, metadata, absent, "convert_dumps")
    spill = Spill(budget, out_path.parent if out_path.parent.is_dir() else Path("."))
    try:
        reader, sizes = _spilled_rows(plan, block_size, spill)
        dt = count_dtype(int(reader.st[D_MAX])) if dt is None else dt
        output = StoreOutput(out_path, dt, column_copy, overwrite, budget)
        return _write_rows(reader, spill, sizes, [s for s, _ in plan], obs, output), report
    finally:
        spill.close()


def read_dumps_within(source, budget, store_path, *, samples=None, block_size=BLOCK_SIZE):
    """Per-sample dumps in memory while their counts fit ``budget`` bytes, else written to a store.

    Returns ``(Dataset, None)`` as ``read_dumps`` reads them (float64 counts) when the rows fit
    the budget; otherwise ``(None, store_path)``: the store ``convert_dumps`` would write (the same
    rows, columns and counts, with its column copy), for reading it a chunk at a time. The dumps
    are read once either way; the rows beyond the budget wait in a temporary file beside
    ``store_path``.
    """
    budget = engine.check_budget(budget, "read_dumps_within")
    check_block_size(block_size, "read_dumps_within")
    store_path = Path(store_path)
    plan, _, _ = _plan(source, samples, None, "drop", "read_dumps_within")
    ids = [s for s, _ in plan]
    spill = Spill(budget, store_path.parent)
    try:
        reader, sizes = _spilled_rows(plan, block_size, spill)
        if spill.spilled:
            dt = count_dtype(int(reader.st[D_MAX]))
            return None, _write_rows(reader, spill, sizes, ids, None, StoreOutput(store_path, dt, budget=budget))
        rows = [block[2:] for block in spill.memory]
        spill.memory = []
        return _dataset(reader, rows, ids, np.dtype(np.float64)), None
    finally:
        spill.close()


def _spilled_rows(plan, block_size, spill):
    """Parse the dumps of ``plan`` into ``spill`` (one block a row: its index, size, k-mers first
    seen and counts): the reader and the number of counts of each row."""
    sizes = []

    def keep(r, cols, counts):
        sizes.append(cols.size)
        spill.add(np.array([r], np.int64), np.array([cols.size], np.int32), cols, counts)

    return _read_rows(plan, block_size, keep), np.array(sizes, np.int64)


def _kept_rows(spill):
    """The rows again, in order, as ``(cols, counts)``: read back if spilled, else each let go once given."""
    if spill.spilled:
        yield from ((b[2], b[3]) for b in spill.blocks())
        return
    blocks, spill.memory = spill.memory[::-1], []
    while blocks:
        yield blocks.pop()[2:]


def _write_rows(reader, spill, row_nnz, row_ids, obs, output):
    """The store ``output`` from the kept rows: each row remapped to the sorted k-mers and written
    in turn; the column copy filled a group of columns at a time, then each group sorted by column."""
    from .store import atomic_output, column_groups, require_h5py, string_blob, write_skeleton
    from .store.read import StoredVector

    out_path, dt, column_copy, overwrite, budget = (output.path, output.dtype, output.column_copy, output.overwrite,
                                                    output.budget)

    rank, order, arena, offs = reader.columns(dt)
    p = rank.size
    colptr = np.zeros(p + 1, np.int64)
    np.cumsum(reader.kmers.cols["nnz"][:p][order], out=colptr[1:])
    del order
    groups = list(column_groups(colptr, max(1, budget // _BUCKET_BYTES))) if column_copy else [(0, p)]
    starts = np.array([j0 for j0, _ in groups] + [p], np.int64)
    fill = colptr[starts[:-1]].copy()  # the next free place of each group in the column copy
    names = ArenaNames(SimpleNamespace(arena=arena, offs=offs), p, offs[-1])
    with atomic_output(out_path, overwrite) as tmp, require_h5py().File(tmp, "w") as f, ExitStack() as done:
        write_skeleton(f, string_blob(row_ids, "sample id")[0], obs, names, names.blob())
        del names
        writer = StreamWriter(f, row_nnz, p, dt, column_copy)
        done.callback(writer.close)
        fd = os.open(tmp, os.O_RDONLY)
        done.callback(os.close, fd)
        if column_copy:  # the column of each entry of the column copy, until its group is sorted
            cols_file = done.enter_context(tempfile.TemporaryFile(prefix=".genosift-dumps.", dir=Path(tmp).parent))
        with engine.progress("Writing the store", total=len(row_ids), unit="samples") as bar:
            for r, (cols, counts) in enumerate(_kept_rows(spill)):
                cols = rank[cols]
                by_col = np.argsort(cols)
                cols, values = cols[by_col], counts[by_col].astype(dt)
                writer.data.put(int(writer.cursor[r]), values)
                writer.indices.put(int(writer.cursor[r]), cols)
                writer.cursor[r] += cols.size
                cuts = np.searchsorted(cols, starts) if column_copy else ()
                for g in np.flatnonzero(np.diff(cuts)):
                    lo, hi, at = int(cuts[g]), int(cuts[g + 1]), int(fill[g])
                    writer.cdata.put(at, values[lo:hi])
                    writer.crows.put(at, np.full(hi - lo, r))
                    cols_file.seek(4 * at)
                    cols_file.write(cols[lo:hi].astype(np.int32).tobytes())
                    fill[g] += hi - lo
                bar.advance()
        if column_copy:  # each group, filled row by row, sorted by column (stable: rows stay in order)
            into = SimpleNamespace(fd=fd, h5=f)
            crows, cdata = StoredVector(writer.crows.ds), StoredVector(writer.cdata.ds)
            for j0, j1 in groups:
                lo, hi = int(colptr[j0]), int(colptr[j1])
                cols_file.seek(4 * lo)
                keys = np.fromfile(cols_file, np.int32, hi - lo).astype(np.int64) - j0
                rows, pos = np.empty(hi - lo, np.int64), np.empty(hi - lo, np.int64)
                by_row(keys, crows.read(into, lo, hi, np.int64), j1 - j0, rows, pos, np.zeros(j1 - j0, np.int64))
                writer.crows.put(lo, rows)
                writer.cdata.put(lo, cdata.read(into, lo, hi)[pos])
            writer.colptr = colptr
        writer.next_col = p
        writer.finish()
    return out_path
