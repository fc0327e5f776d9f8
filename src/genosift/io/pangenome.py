"""Gene presence/absence tables of Roary and Panaroo (``gene_presence_absence.csv``).

Both tools write one comma-separated row per gene: a header of annotation columns, then one
column per isolate whose cell holds the isolate's gene ids (paralogues joined by ``;`` or by
tabs) where it carries the gene and is empty where not. The annotation columns recognised, by
name, are:

- Roary's 14 (and Panaroo's ``gene_presence_absence_roary.csv``): ``Gene``, ``Non-unique Gene
  name``, ``Annotation``, ``No. isolates``, ``No. sequences``, ``Avg sequences per isolate``,
  ``Genome Fragment``, ``Order within Fragment``, ``Accessory Fragment``, ``Accessory Order with
  Fragment``, ``QC``, ``Min group size nuc``, ``Max group size nuc``, ``Avg group size nuc``
  (``Genome fragment``, ``Order within fragment`` and ``Accessory fragment`` as older Roary
  versions spell them);
- Panaroo's ``gene_presence_absence.csv``: the first three only, ``Gene``, ``Non-unique Gene
  name`` and ``Annotation`` (Panaroo's isolate cells may end in ``_len``, ``_stop`` or name a
  refound gene: all of them are present).

The first header column after ``Annotation`` that is not among these names starts the
isolates. A cell is absent when it is empty, ``0`` or ``-`` (spaces after the comma aside: they
are not part of a field), as Scoary reads these tables; any other text is present (Scoary's
example table writes 1 and 0).

Example
-------
>>> import tempfile, pathlib
>>> from genosift.io import read
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = pathlib.Path(tmp) / "gene_presence_absence.csv"
...     _ = path.write_text('"Gene","Non-unique Gene name","Annotation","iso1","iso2"\\n'
...                         '"tetM","","tetracycline resistance, ribosomal","iso1_001;iso1_009",""\\n'
...                         '"group_2","","hypothetical protein","","iso2_417"\\n')
...     data = read(path)
>>> data.sample_ids.tolist(), data.feature_names.tolist()
(['iso1', 'iso2'], ['tetM', 'group_2'])
>>> data.X.toarray().tolist()
[[1, 0], [0, 1]]
>>> data.var["Annotation"].tolist()
['tetracycline resistance, ribosomal', 'hypothetical protein']
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..core.messages import FixError
from .compression import MAX_LINE_BYTES, open_text
from .delimited import reading_progress
from .quoting import names_list
from .reading import NulByte, check_unique, file_errors
from .registry import Dataset, register_reader

__all__ = ["ANNOTATION_COLUMNS", "LEADING_COLUMNS", "is_gene_presence_absence", "read_gene_presence_absence"]

#: The header's first three cells in every Roary and Panaroo table.
LEADING_COLUMNS = ("Gene", "Non-unique Gene name", "Annotation")
#: The names of the annotation columns (every spelling Roary's versions write); the isolates
#: start at the first header column after ``Annotation`` that is none of these.
ANNOTATION_COLUMNS = frozenset((
    *LEADING_COLUMNS, "No. isolates", "No. sequences", "Avg sequences per isolate", "Genome Fragment",
    "Genome fragment", "Order within Fragment", "Order within fragment", "Accessory Fragment",
    "Accessory fragment", "Accessory Order with Fragment", "QC", "Min group size nuc", "Max group size nuc",
    "Avg group size nuc",
))
_KIND = "a gene presence/absence table"
_ZERO, _DASH = ord("0"), ord("-")  # the one-character cells that mean absent


#: How much of a first line tells whether it is a gene table's header.
_HEADER_START = 4096


def is_gene_presence_absence(line, sep=","):
    """Whether a header line (bytes or str; it may be cut) starts with ``Gene``, ``Non-unique Gene
    name``, ``Annotation``, as the header of every Roary and Panaroo ``gene_presence_absence.csv`` does.

    Examples
    --------
    >>> is_gene_presence_absence(b'"Gene","Non-unique Gene name","Annotation","No. isolates"')
    True
    >>> is_gene_presence_absence(b"sample,geneA,geneB")
    False
    """
    line = line[:_HEADER_START]  # the three names are short: a line of any length is not parsed whole
    text = line.decode("utf-8", "replace") if isinstance(line, (bytes, bytearray)) else line
    try:
        fields = next(csv.reader([text.lstrip("\ufeff").rstrip("\r\n")], delimiter=sep), [])
    except csv.Error:  # not a delimited header at all
        return False
    return tuple(fields[:3]) == LEADING_COLUMNS


def _isolates_from(header, path, sep):
    """The position of the first isolate column of ``header`` (line 1's fields), checked."""
    if tuple(header[:3]) != LEADING_COLUMNS:
        raise FixError(
            f"{str(path)!r} is not a gene presence/absence table of Roary or Panaroo: its header starts with "
            f"{names_list(header[:3])}, not {names_list(LEADING_COLUMNS)} (splitting on {sep!r}). Read it "
            "as the table it is ({format}), or pass {sep} if the separator is wrong.",
            owner="read", format="csv", sep=FixError.ANY)
    first = next((j for j in range(3, len(header)) if header[j] not in ANNOTATION_COLUMNS), None)
    if first is None:
        raise ValueError(
            f"{str(path)!r} has the annotation columns of a gene presence/absence table ({names_list(header)}) "
            "but no isolate column after them. Roary and Panaroo write one column per isolate after the "
            "annotation columns: check that this is the whole table.")
    isolates = header[first:]
    if "" in isolates:
        raise ValueError(f"{str(path)!r} column {first + isolates.index('') + 1} has no name in the header: "
                         "every isolate column needs the isolate's name.")
    check_unique(isolates, "isolate names (in the header)", path)
    return first


def _present(cells):
    """The positions of the ``cells`` that hold a gene: neither empty nor ``0`` nor ``-``; their
    lengths and one-character cells are looked at by functions mapped in C, not a Python loop."""
    size = np.fromiter(map(len, cells), np.int64, count=len(cells))
    held = size > 1
    single = np.flatnonzero(size == 1)
    if single.size:  # "1", "0", "-": their code points, side by side
        codes = np.frombuffer("".join(map(cells.__getitem__, single.tolist())).encode("utf-32-le"), np.uint32)
        held[single] = (codes != _ZERO) & (codes != _DASH)
    return np.flatnonzero(held).astype(np.int32)


def _checked_lines(fh, path, bar):
    """The text lines of ``fh``, refusing a NUL byte (csv reads one as text), counted on ``bar``."""
    for line in fh:
        if "\x00" in line:
            raise NulByte(path)
        bar.advance(len(line) / 2**20)
        yield line


def _row_error(path, line, got, n, sep, header_line):
    """The error for a gene row of ``got`` fields under a header of ``n`` (at ``header_line``)."""
    return FixError(
        f"{str(path)!r} line {line} has {got} fields but the header (line {header_line}) has {n}, splitting on "
        f"{sep!r}. Every gene needs one cell per column: a field that holds the separator (an annotation with a "
        "comma) must be quoted (\"...\"); fix that row, or pass {sep} if the separator is wrong.",
        owner="read_table", sep=FixError.ANY)


def _rows(path, sep):
    """``(header, first, genes, annotation, indptr, indices)`` of the table, read a row at a time:
    its header and first isolate column, the genes' names and annotation cells as text, and each
    gene's isolates (positions) as a CSC structure."""
    header, first, header_line = None, 0, 0
    genes, annotation, pieces, counts = [], [], [], [0]
    with file_errors(path, _KIND), open_text(path, max_line=MAX_LINE_BYTES) as fh, reading_progress(path) as bar:
        # spaces after a separator are not part of the field (a cell " 0" is "0"), as Scoary reads these tables
        reader = csv.reader(_checked_lines(fh, path, bar), delimiter=sep, skipinitialspace=True)
        for fields in reader:
            if not fields:
                continue
            if header is None:
                header, first, header_line = fields, _isolates_from(fields, path, sep), reader.line_num
                continue
            if len(fields) != len(header):
                raise _row_error(path, reader.line_num, len(fields), len(header), sep, header_line)
            if not fields[0].strip():
                raise ValueError(f"{str(path)!r} line {reader.line_num} has no gene name (column 'Gene'). "
                                 "Every gene row needs one.")
            genes.append(fields[0])
            annotation.append(fields[1:first])
            held = _present(fields[first:])
            pieces.append(held)
            counts.append(held.size)
    if header is None:
        raise ValueError(f"{str(path)!r} is empty. A gene presence/absence table needs a header line and "
                         "one row per gene.")
    if not genes:
        raise ValueError(f"{str(path)!r} has a header (line {header_line}) but no gene rows.")
    indices = np.concatenate(pieces)
    del pieces
    return header, first, genes, annotation, np.cumsum(counts, dtype=np.int64), indices


# the name both tools give the file: any other .csv is told by its header (genosift.io.format_of)
@register_reader("gene_presence_absence", suffixes=("gene_presence_absence.csv",))
def read_gene_presence_absence(path, *, sep=","):
    """Gene presence/absence of Roary and Panaroo (gene_presence_absence.csv): genes in rows.

    Parameters
    ----------
    path : str or Path
        The table; ``.gz``, ``.bz2``, ``.xz`` and ``.zst`` files are decompressed on the fly.
    sep : str, default ","
        The field separator (both tools write commas); quoting follows the CSV convention, so a
        quoted annotation may hold commas, and a quoted cell line breaks.

    Returns
    -------
    Dataset
        Isolates in rows (``sample_ids``: the header's isolate names), genes in columns
        (``feature_names``: the ``Gene`` column). ``X`` a CSR matrix of ``int8``, 1 where the
        isolate carries the gene (only those cells stored). ``var`` the annotation columns
        (``Non-unique Gene name``, ``Annotation`` and Roary's others) as text as written
        (numbers included; spaces after a comma are not part of a field), indexed by gene.

    Notes
    -----
    A header without the three leading columns, an isolate column missing, unnamed or
    repeated, a row with another number of fields than the header, a gene without a name or
    repeated (Roary and Panaroo name each gene once), a NUL byte, text that is not UTF-8 and a
    damaged compressed file raise a ``ValueError`` naming the file (and the line). The table is
    read a row at a time: memory holds the present cells (4 bytes each while reading, 5 in the
    result, twice that while the rows become the matrix's rows) and the annotation text, never
    a cell per isolate and gene.
    """
    import pandas as pd

    path = Path(path)
    if not isinstance(sep, str) or len(sep) != 1 or sep in "\"\r\n":
        raise ValueError(f"The 'sep' parameter must be a single character such as ','. Got {sep!r} instead.")
    header, first, genes, annotation, indptr, indices = _rows(path, sep)
    names = np.array(genes, dtype=object)
    check_unique(names, "genes (column 'Gene')", path)
    isolates = np.array(header[first:], dtype=object)
    by_gene = sp.csc_matrix((np.ones(indices.size, np.int8), indices, indptr), shape=(isolates.size, names.size))
    del indices
    X = by_gene.tocsr()
    del by_gene
    var = pd.DataFrame(annotation, columns=header[1:first], index=pd.Index(names, name=header[0]), dtype=object)
    return Dataset(X, isolates, names, var=var)
