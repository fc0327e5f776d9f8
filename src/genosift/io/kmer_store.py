"""k-mer count files to a store, in memory bounded by a budget, whatever the size of the files.

The text is read once. Its parsed counts (8 bytes per count: the sample's index and the count)
are kept in memory while they fit ``chunk_bytes``; the data set is then written as
``write_store`` writes any other. Beyond the budget they are spilled, block by block, to a
temporary file beside the output, and written into the store in a second, sequential pass:

- k-mer files list one k-mer per line, so the parsed blocks arrive column by column: the
  column copy (CSC) is appended in order, its rows sorted within each column;
- the row layout (CSR) has every row's length known from the first pass (the parser counts the
  entries of each sample), so each batch of columns is sorted by row, stably, and each row's
  share is written at that row's cursor: columns stay sorted within every row.

Memory holds one batch of counts (``chunk_bytes``), the k-mers and sample ids, and a few arrays
of one value per k-mer or per sample; never the matrix.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..core import engine
from ..core.messages import FixError
from ..core.validation import param_error
from .arena import ArenaNames, first_byte, is_utf8
from .kmer_kernels import KB, KN, MAX, SB, SN
from .kmer_options import check_count_dtype, count_dtype
from .kmers import BLOCK_SIZE, KmerReader, check_block_size, check_max_count, check_paths, check_samples
from .registry import Dataset
from .spill import Spill, StreamWriter

__all__ = ["check_store_dtype", "convert_kmers", "read_kmers_within"]

# bytes per count of a batch written out of core, at most: the sample indices and counts read back
# and joined (16), rows and values by column (16), columns and values by row (16)
_BYTES_PER_COUNT = 48


def check_store_dtype(dtype, owner):
    """The stored type of the counts ``owner`` converts: a number type, or None for ``"auto"`` (and
    None): the smallest unsigned integer type that holds every count, known once they are read
    (``count_dtype``)."""
    if dtype is None or (isinstance(dtype, str) and dtype == "auto"):
        return None
    expected = "'auto' or a real number type such as np.uint16 or np.float64"
    return check_count_dtype(dtype, owner, expected).newbyteorder("=")


@dataclass(frozen=True)
class StoreOutput:
    """A store to write of parsed counts: its ``path``, the stored type of the counts (``dtype``
    None: the smallest that holds them), ``column_copy`` and ``overwrite`` as for
    ``write_store``, and the memory ``budget`` of the writing."""

    path: Path
    dtype: object = None
    column_copy: bool = True
    overwrite: bool = False
    budget: int = 0


@dataclass(frozen=True)
class _Conversion:
    """What a conversion of k-mer files was asked, checked: the store to write (``output``), the
    rows (``samples``, None: every id) and their ``metadata`` (samples it describes on no k-mer
    line: ``absent``), and what a k-mer in several files does (``overlap``)."""

    output: StoreOutput
    samples: list | None = None
    metadata: object = None
    overlap: str = "sum"
    absent: str = "error"


def _matched(row_ids, row_of, metadata, absent):
    """Rows kept by the metadata join: (Dataset skeleton with obs, new row_of, report)."""
    from .metadata import attach_metadata

    skeleton = Dataset(sp.csr_matrix((len(row_ids), 0)), np.array(row_ids, dtype=object), np.array([], dtype=object))
    matched, report = attach_metadata(skeleton, metadata, absent=absent)
    new_row = {s: r for r, s in enumerate(matched.sample_ids)}
    old_to_new = np.array([new_row.get(s, -1) for s in row_ids], dtype=np.int64)
    kept = row_of >= 0
    row_of = row_of.copy()
    row_of[kept] = old_to_new[row_of[kept]]
    return matched, row_of, report


def convert_kmers(paths, out_path, *, metadata=None, samples=None, dtype="auto", column_copy=True,
                  overwrite=False, chunk_bytes=None, overlap="sum", block_size=BLOCK_SIZE, absent="error"):
    """k-mer counter files (``KMER | sample:count ...``) to a store, in bounded memory.

    Parameters
    ----------
    paths : path or list of paths
        As for ``read_kmers``: plain or compressed text, several files combined by k-mer.
    out_path : str or Path
        The store to write (suffix ``.gs.h5ad`` recommended). It is written under a temporary
        name and renamed when complete: an interrupted conversion leaves nothing under this name.
    metadata : pandas.DataFrame, optional
        Per-sample table indexed by sample id (e.g. from ``read_metadata``); the samples it
        describes are kept and its columns stored as ``obs`` (``attach_metadata``, how="inner").
        Samples it describes that are on no k-mer line carry none of the k-mers: all-zero rows
        (see ``absent``).
    samples : list of str, optional
        The rows, as for ``read_kmers`` (ids in no file get all-zero rows).
    dtype : numpy dtype or "auto", default "auto"
        Stored type of the counts. "auto": the smallest of uint8, uint16 and uint32 that holds the
        largest count (1, 2 or 4 bytes a count; float64 beyond, exact up to 2**53). A type given
        is refused if a count does not fit it exactly.
    column_copy, overwrite
        As for ``write_store``.
    chunk_bytes : int, optional
        Memory budget for the counts (default ``CHUNK_BYTES``, 256 MiB). Counts that fit are
        converted in memory; more are spilled to a temporary file in the output's folder (3 to 8
        bytes per count, deleted at the end) and written in batches of this size.
    overlap : {"sum", "error"}
        As for ``read_kmers``.
    block_size : int
        Bytes of text parsed at a time, as for ``read_kmers``.
    absent : {"error", "zeros", "drop"}, default "error"
        Samples of ``metadata`` on no k-mer line: an error naming them and the closest ids of the
        files (a genome always carries k-mers: such a sample is almost always a misspelt id),
        all-zero rows (SEER's reading), or left out.

    Returns
    -------
    (Path, MatchReport or None)
        The store written, and the match report of the metadata join (None without metadata).

    Notes
    -----
    Beyond the budget, several files are combined only if they hold different k-mers (e.g. a
    count split by k-mer); files that share k-mers are combined in memory (raise
    ``chunk_bytes``) or converted one by one.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from genosift.io import open_store
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "c.kmers").write_text("ACGTA | s2:1 s1:3\\nCGTAC | s2:7\\nGGGGG | s3:2 s1:1\\n")
    >>> path, _ = convert_kmers(d / "c.kmers", d / "c.gs.h5ad", chunk_bytes=64)  # streamed
    >>> store = open_store(path)
    >>> store.sample_ids.tolist(), store.dtype.name, store.to_dataset().X.toarray().tolist()
    (['s1', 's2', 's3'], 'uint8', [[3, 0, 1], [1, 7, 0], [0, 0, 2]])
    """
    path_list = check_paths(paths)
    sample_list = check_samples(samples)
    budget = engine.check_budget(chunk_bytes, "convert_kmers")
    dt = check_store_dtype(dtype, "convert_kmers")
    _check_choices(overlap, absent)
    check_block_size(block_size, "convert_kmers")
    output = StoreOutput(Path(out_path), dt, column_copy, overwrite, budget)
    asked = _Conversion(output, sample_list, metadata, overlap, absent)
    folder = output.path.parent if output.path.parent.is_dir() else Path(".")
    reader, spill = _parsed(path_list, int(block_size), budget, folder)
    try:
        if spill.spilled:
            return _convert_spilled(reader, spill, asked)
        ds, dt = _in_memory(reader, spill, asked)
    finally:
        spill.close()
    return _written(ds, dt, asked)


def _check_choices(overlap, absent):
    """The errors of a bad ``overlap`` or ``absent`` of ``convert_kmers``."""
    if overlap not in ("sum", "error"):
        raise param_error("overlap", "convert_kmers", "'sum' or 'error'", overlap)
    if absent not in ("error", "zeros", "drop"):
        raise param_error("absent", "convert_kmers", "'error', 'zeros' or 'drop'", absent)


def _in_memory(reader, spill, asked):
    """The data set of counts that fit the budget, and their stored type."""
    reader.blocks = spill.memory
    dt = asked.output.dtype
    if dt is None:  # counts added over files may pass the largest one read
        ds = reader.dataset(asked.samples, count_dtype(int(reader.st[MAX]) * len(reader.paths)), asked.overlap)
        dt = count_dtype(ds.X.data.max(initial=0))
    else:
        ds = reader.dataset(asked.samples, dt, asked.overlap)
    return ds, dt


def _written(ds, dt, asked):
    """``ds`` joined to the metadata and written as the store: (its path, the match report or None)."""
    from .store import write_store

    report = None
    if asked.metadata is not None:
        from .metadata import attach_metadata

        ds, report = attach_metadata(ds, asked.metadata, absent=asked.absent)
    output = asked.output
    return write_store(ds, output.path, dtype=dt, column_copy=output.column_copy, overwrite=output.overwrite,
                       chunk_bytes=output.budget), report


def _parsed(path_list, block_size, budget, folder):
    """The files parsed: the reader (k-mers and ids) and its counts, in memory up to ``budget``
    and spilled beyond it to a temporary file in ``folder``."""
    reader = KmerReader(block_size)
    spill = Spill(budget, folder)
    try:
        with engine.progress("Reading k-mer counts", unit="k-mers") as bar:
            def add(kmer, *rest):
                spill.add(kmer, *rest)
                bar.advance(kmer.size)

            reader.on_block = add
            for path in path_list:
                reader.read_file(path)
    except BaseException:
        spill.close()
        raise
    return reader, spill


def read_kmers_within(paths, budget, store_path, *, overlap="sum", block_size=BLOCK_SIZE, layout="csr"):
    """k-mer text in memory while its counts fit ``budget`` bytes, else written to a store.

    Returns ``(Dataset, None)`` as ``read_kmers`` reads it (float64 counts, rows every id sorted)
    when the parsed counts fit the budget; otherwise ``(None, store_path)``: the store
    ``convert_kmers`` would write (the same rows, columns and counts), for reading it a chunk at
    a time. The files are read once either way.
    """
    path_list = check_paths(paths)
    budget = engine.check_budget(budget, "read_kmers_within")
    if overlap not in ("sum", "error"):
        raise param_error("overlap", "read_kmers_within", "'sum' or 'error'", overlap)
    check_block_size(block_size, "read_kmers_within")
    store_path = Path(store_path)
    reader, spill = _parsed(path_list, int(block_size), budget, store_path.parent)
    try:
        if spill.spilled:
            return None, _convert_spilled(reader, spill, _Conversion(StoreOutput(store_path, budget=budget)))[0]
        reader.blocks = spill.memory
        return reader.dataset(None, np.dtype(np.float64), overlap, layout), None
    finally:
        spill.close()


def _convert_spilled(reader, spill, asked):
    """The store of counts spilled beyond the budget, written batch by batch: (its path, the match
    report or None)."""
    from .store import atomic_output, require_h5py, string_blob, write_skeleton

    output, sample_list, metadata = asked.output, asked.samples, asked.metadata
    out_path, dt, budget = output.path, output.dtype, output.budget

    st = reader.st
    ids = reader.decoded(reader.samples, int(st[SN]), int(st[SB]), "sample id")
    if not is_utf8(reader.kmers.arena, int(st[KB])):
        reader.decoded(reader.kmers, int(st[KN]), int(st[KB]), "k-mer")  # raises, naming the line
    reader.check_kmers(int(st[KN]), int(st[KB]))
    nul = first_byte(reader.kmers.arena, int(st[KB]), 0)
    if nul >= 0:
        i = int(np.searchsorted(reader.kmers.offs[: int(st[KN]) + 1], nul, side="right")) - 1
        raise ValueError(
            f"The k-mer on line {reader.kmers.cols['line'][i]} of "
            f"{str(reader.paths[reader.kmers.cols['file'][i]])!r} holds a NUL byte, which a store "
            "cannot hold: the file is damaged or not k-mer text."
        )
    if spill.lines != int(st[KN]):
        files = ", ".join(repr(str(p)) for p in reader.paths)
        raise FixError(
            f"The files {files} share k-mers, and their {spill.entries} counts are more than the "
            f"memory budget of {budget} bytes ({{chunk_bytes}}) holds: files that share k-mers are "
            f"combined in memory. Pass a larger {{chunk_bytes}} (about {20 * spill.entries} bytes), or "
            "convert the files one by one.",
            owner="convert_kmers", chunk_bytes=FixError.ANY,
        )
    dt = count_dtype(int(st[MAX])) if dt is None else dt  # no k-mer in two files here: no sums
    check_max_count(int(st[MAX]), dt)
    row_ids, row_of = reader.sample_rows(ids, sample_list, stacklevel=4)
    report, obs = None, None
    if metadata is not None:
        matched, row_of, report = _matched(row_ids, row_of, metadata, asked.absent)
        row_ids, obs = matched.sample_ids, matched.obs
    nnz = reader.samples.cols["nnz"][: len(ids)]
    row_nnz = np.zeros(len(row_ids), np.int64)
    kept = row_of >= 0
    row_nnz[row_of[kept]] = nnz[kept]
    names = ArenaNames(reader.kmers, int(st[KN]), int(st[KB]))
    reader.kmers.table = reader.kmers.hashes = None  # the look-up table is done with
    per_batch = max(1, budget // _BYTES_PER_COUNT)
    h5py = require_h5py()
    with atomic_output(out_path, output.overwrite) as tmp:
        with h5py.File(tmp, "w") as f:
            write_skeleton(f, string_blob(row_ids, "sample id")[0], obs, names, names.blob())
            del names
            writer = StreamWriter(f, row_nnz, int(st[KN]), dt, output.column_copy)
            try:
                with engine.progress("Writing the store", total=spill.lines, unit="k-mers") as bar:
                    batch, entries = [], 0
                    for block in spill.blocks():
                        batch.append(block)
                        entries += block[2].size
                        if entries >= per_batch:
                            writer.write(batch, row_of)
                            bar.advance(sum(b[0].size for b in batch))
                            batch, entries = [], 0
                    if batch:
                        writer.write(batch, row_of)
                        bar.advance(sum(b[0].size for b in batch))
                writer.finish()
            finally:
                writer.close()
    return out_path, report
