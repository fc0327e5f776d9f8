"""Reference genomes: FASTA sequences, GFF3 annotations and the list of references to search.

A references file names one reference per line, ``fasta<TAB>gff<TAB>ref|draft`` (the layout of
pyseer's ``annotate_hits`` input): the GFF3 column may be empty or ``-`` for a genome without
annotation, and a line of one column is a ``ref`` without annotation. Relative paths are taken
from the references file's own folder (from the working directory when it is a pipe). Every file
may be gzip, bzip2, xz or zstd compressed.

Every file is read with bounded memory: lines of the list files and GFF3 files are bounded by
``MAX_LINE_BYTES`` (64 MiB), contigs by ``MAX_CONTIG`` bases (or the caller's ``max_contig``:
``genosift annotate`` and ``genosift predict --assemblies`` take ``--max-contig``),
and a FASTA header, a contig name or a GFF3 coordinate that holds control characters or is not
a plain number is refused, naming the file and the line.

Only the files the list names are read, each as data: a GFF3's ``##FASTA`` section ends its
features, and nothing in a file makes another file read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from ..core.messages import FixError, printable
from .compression import COMPRESSION_SUFFIXES, MAX_LINE_BYTES, open_binary
from .reading import NulByte, check_unique, file_errors

__all__ = ["FASTA_SUFFIXES", "FEATURE_TYPES", "MAX_CONTIG", "MAX_COORDINATE", "Reference", "check_max_contig",
           "fasta_records", "fasta_stem", "genomes_of", "read_fasta",
           "read_gff3", "read_references", "reverse_complement"]

#: The GFF3 feature types that are annotated: genes and what they code (proteins and RNAs).
FEATURE_TYPES = frozenset({"gene", "pseudogene", "CDS", "rRNA", "tRNA", "ncRNA", "tmRNA", "misc_RNA", "RNase_P_RNA",
                           "SRP_RNA", "antisense_RNA", "mRNA", "transcript", "pseudogenic_tRNA", "pseudogenic_rRNA"})
#: Types that stand for their children's gene, replaced by them where the file has them.
_PARENTS = frozenset({"gene", "pseudogene", "mRNA", "transcript"})
_SEQUENCE = re.compile(rb"[A-Za-z*\-.]*")
#: The longest contig read, in bases (256 Mi): longer than any bacterial replicon (the largest
#: are near 16 Mb) and than human chromosome 1 (249 Mb); memory holds one contig at a time.
MAX_CONTIG = 1 << 28
#: The largest GFF3 coordinate read: far beyond any contig, and within int64.
MAX_COORDINATE = 10 ** 15
_DIGITS = re.compile(r"[0-9]+")
_PIECE = 1 << 20  # FASTA bytes read at a time; also the longest header


def _folder(path):
    """The folder relative paths of a list file are taken from: its own, or the working directory
    for a pipe (``<(cat refs.tsv)``), whose folder is a process's file descriptors."""
    return path.resolve().parent if path.is_file() else Path.cwd()


def _lines(path, kind, errors="strict"):
    """``(number, text)`` of each line of the text file ``path`` (line ends dropped), read once
    and with lines bounded by ``MAX_LINE_BYTES``; a NUL byte is refused. ``errors``: how bytes
    that are not UTF-8 are decoded."""
    with file_errors(path, kind), open_binary(path, max_line=MAX_LINE_BYTES) as fh:
        for number, raw in enumerate(fh, 1):
            if b"\0" in raw:
                raise NulByte(path)
            yield number, raw.decode("utf-8", errors).rstrip("\r\n")


@dataclass(frozen=True)
class Reference:
    """One line of a references file: the FASTA, its GFF3 (or None) and ``ref`` or ``draft``."""

    fasta: Path
    gff: object
    kind: str

    @property
    def name(self):
        """The FASTA's file name without its compression and FASTA suffixes."""
        return fasta_stem(self.fasta)[0]


_COMPLEMENT = str.maketrans("ACGT", "TGCA")


def reverse_complement(sequence):
    """The reverse complement of a sequence of A, C, G and T.

    >>> reverse_complement("AACGTT"), reverse_complement("GATTACA")
    ('AACGTT', 'TGTAATC')
    """
    return sequence.translate(_COMPLEMENT)[::-1]


#: The suffixes of FASTA files (before a compression suffix).
FASTA_SUFFIXES = (".fasta", ".fas", ".fna", ".ffn", ".fa", ".faa")


def fasta_stem(path):
    """``(stem, is_fasta)``: the file name of ``path`` without its compression suffix and FASTA
    suffix, and whether it had a FASTA suffix.

    >>> fasta_stem("genomes/iso_1.fna.gz"), fasta_stem("kmers.txt")
    (('iso_1', True), ('kmers.txt', False))
    """
    name = Path(path).name
    for suffix in COMPRESSION_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[:-len(suffix)]
            break
    for suffix in FASTA_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)], True
    return name, False


def read_references(path):
    """The references listed in ``path``, in its order (``ref`` lines and ``draft`` lines).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("a.fa", "a.gff", "b.fa"):
    ...     _ = (folder / name).write_text("")
    >>> _ = (folder / "refs.tsv").write_text("a.fa\\ta.gff\\tref\\nb.fa\\t\\tdraft\\n")
    >>> [(r.fasta.name, r.gff and r.gff.name, r.kind) for r in read_references(folder / "refs.tsv")]
    [('a.fa', 'a.gff', 'ref'), ('b.fa', None, 'draft')]
    """
    path = Path(path)
    folder = _folder(path)
    out = []
    for number, line in _lines(path, "a references file"):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) > 3 or (len(cells) == 3 and cells[2].strip() not in ("ref", "draft")):
            raise ValueError(f"Line {number} of the references file {str(path)!r} is {line[:200]!r}: each line is "
                             "'fasta<TAB>gff<TAB>ref' or 'fasta<TAB>gff<TAB>draft' (the GFF3 may be empty or "
                             "'-'). Fix that line.")
        fasta, gff = cells[0].strip(), (cells[1].strip() if len(cells) > 1 else "")
        kind = cells[2].strip() if len(cells) == 3 else "ref"
        files = [folder / fasta] + ([folder / gff] if gff not in ("", "-") else [])
        for file in files:
            if not file.is_file():
                raise FileNotFoundError(f"Line {number} of the references file {str(path)!r} names "
                                        f"{str(file)!r}, which is not a file. Fix the path (relative paths "
                                        "are taken from the references file's folder, or from the working "
                                        "directory for a pipe).")
        out.append(Reference(files[0], files[1] if len(files) > 1 else None, kind))
    if not out:
        raise ValueError(f"The references file {str(path)!r} lists no reference: write one line per genome, "
                         "'fasta<TAB>gff<TAB>ref' (or draft).")
    check_unique([r.name for r in out], "reference names (each FASTA's file name without its suffixes names its "
                 "hits)", path)
    return out


def genomes_of(path):
    """``[(sample, FASTA path)]``: of a list file of ``sample<TAB>path`` lines (fsm-lite's ``-l``
    file; relative paths from the list's folder), or of one FASTA file (the sample named by its
    file name without suffixes). Every path is checked to be a file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.fa").write_text(">c\\nACGT\\n")
    >>> _ = (folder / "list.txt").write_text("iso1\\ta.fa\\n")
    >>> genomes_of(folder / "list.txt")[0][0], genomes_of(folder / "a.fa")[0][0]
    ('iso1', 'a')
    """
    path = Path(path)
    folder, out = _folder(path), []
    lines = _lines(path, "a genome list or FASTA", errors="replace")  # a FASTA header may be Latin-1
    for number, line in lines:  # read once: a pipe cannot be read twice
        if not line.strip():
            continue
        if not out and line.lstrip().startswith(">"):
            lines.close()
            if not path.is_file():
                raise ValueError(f"{str(path)!r} is a FASTA read from a pipe, which cannot be read twice "
                                 "(for its samples, then for its k-mers): give a FASTA file, or a genome list "
                                 "of 'sample<TAB>path.fa' lines.")
            return [(Reference(path, None, "ref").name, path)]
        cells = line.split("\t")
        if len(cells) != 2 or not cells[0].strip():
            raise ValueError(f"Line {number} of {str(path)!r} is {line[:80]!r}: a genome list has "
                             "'sample<TAB>path.fa' lines (fsm-lite's -l file), a FASTA file '>' headers.")
        fasta = folder / cells[1].strip()
        if not fasta.is_file():
            raise FileNotFoundError(f"Line {number} of the genome list {str(path)!r} names {str(fasta)!r}, "
                                    "which is not a file. Fix the path (relative paths are taken from the list's "
                                    "folder).")
        out.append((cells[0].strip(), fasta))
    if not out:
        raise ValueError(f"The genome list {str(path)!r} names no genome: write one 'sample<TAB>path.fa' line per "
                         "genome.")
    check_unique([s for s, _ in out], "samples", path)
    return out


def read_fasta(path, *, max_contig=None):
    """``{contig: sequence}`` of a FASTA file, the sequences as upper-case ``str`` in file order
    (``fasta_records`` reads one contig at a time; a contig longer than ``max_contig`` bases,
    default ``MAX_CONTIG``, is refused).

    The contig's name is the header's first word. Soft-masked (lower-case) bases are read as
    upper case; IUPAC codes such as ``N`` are kept (no k-mer of A, C, G and T matches them).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "g.fa"
    >>> _ = f.write_text(">chr1 complete genome\\nACGT\\nacgn\\n>plasmid\\nTTTT\\n")
    >>> read_fasta(f)
    {'chr1': 'ACGTACGN', 'plasmid': 'TTTT'}
    """
    return {name: sequence.decode("ascii") for name, sequence in fasta_records(path, max_contig=max_contig)}


def _contig_too_long(path, name, limit):
    return FixError(f"The contig {name!r} of the FASTA file {str(path)!r} is longer than {limit:,} bases, the most "
                    "read (memory holds a whole contig). Check that this is a genome's FASTA; for a longer contig "
                    "(a plant chromosome), raise the bound, e.g. {max_contig}.", owner="fasta_records",
                    max_contig=4 * limit)


def check_max_contig(max_contig, owner="fasta_records"):
    """``max_contig`` as an ``int`` (``MAX_CONTIG`` for None); a clear error unless it is a whole
    number of bases >= 1."""
    from ..core.validation import is_int, param_error

    if max_contig is None:
        return MAX_CONTIG
    if not is_int(max_contig) or max_contig < 1:
        raise param_error("max_contig", owner, "a whole number of bases >= 1 (or None: MAX_CONTIG)", max_contig)
    return int(max_contig)


def _upper(sequence, step=1 << 20):
    """``sequence`` (a bytearray) in upper case, in place: no second copy of a contig."""
    for i in range(0, len(sequence), step):
        sequence[i:i + step] = sequence[i:i + step].upper()
    return sequence


def fasta_records(path, *, max_contig=None):
    """``(contig, sequence)`` of each record of a FASTA file in turn, the sequence as an upper-case
    ASCII ``bytearray``: memory holds one contig (and one line), of at most ``max_contig`` bases
    (default ``MAX_CONTIG``; a longer contig is refused).

    A header whose name holds a control character (a NUL, an escape) is refused."""
    path = Path(path)
    max_contig = check_max_contig(max_contig)
    seen, name, sequence = set(), None, bytearray()

    def record():
        if name in seen:
            raise ValueError(f"The FASTA file {str(path)!r} has two records named {name!r}: each contig's name "
                             "(the header's first word) must be unique. Rename one.")
        seen.add(name)
        return name, _upper(sequence)

    number, line_start = 0, True
    with file_errors(path, "FASTA"), open_binary(path) as fh:
        # read in pieces of at most _PIECE bytes: a contig on one line is never held twice
        while piece := fh.readline(_PIECE):
            number += line_start
            if line_start and piece.startswith(b">"):
                while not piece.endswith(b"\n") and len(piece) <= _PIECE and (more := fh.readline(_PIECE)):
                    piece += more
                if not piece.endswith(b"\n") and len(piece) > _PIECE:
                    raise ValueError(f"Line {number} of the FASTA file {str(path)!r} is a header longer than "
                                     f"{_PIECE:,} bytes: check that this is a FASTA file.")
                if name is not None:
                    yield record()
                header = piece.rstrip(b"\r\n").decode("utf-8", "replace")
                if printable(header.replace("\t", " ")) != header.replace("\t", " "):
                    raise ValueError(f"Line {number} of the FASTA file {str(path)!r} is a header holding a "
                                     f"control character ({header[:60]!r}): the file is damaged or binary, "
                                     "and its contig names reach every output. Fix the header.")
                words = header[1:].split()
                if not words:
                    raise ValueError(f"Line {number} of the FASTA file {str(path)!r} is a header without a "
                                     "name. Give the record a name after '>'.")
                name, sequence = words[0], bytearray()
                continue
            ends = piece.endswith(b"\n")
            line = piece.rstrip() if ends else piece  # white space around a line, never inside it
            if line_start:
                line = line.lstrip(b" \t")
            line_start = ends
            if not line:
                continue
            if name is None or not _SEQUENCE.fullmatch(line):
                if b"\0" in line:
                    raise NulByte(path)
                raise ValueError(f"Line {number} of {str(path)!r} is not FASTA: "
                                 + ("sequence before the first '>' header." if name is None else
                                    f"{line[:40].decode('utf-8', 'replace')!r} holds characters that are not "
                                    "bases.")
                                 + " Check that this is a FASTA file of the genome.")
            sequence += line
            if len(sequence) > max_contig:
                raise _contig_too_long(path, name, max_contig)
    if name is None:
        raise ValueError(f"The FASTA file {str(path)!r} holds no sequence. Check that this is the genome's "
                         "FASTA.")
    yield record()


def read_gff3(path):
    """The genes of a GFF3 file: a DataFrame of ``contig, start, end, strand, type, gene, gene_id,
    product`` (1-based, both ends included), sorted by contig and start.

    The features kept are genes and what they code (``FEATURE_TYPES``: CDS, rRNA, tRNA, ncRNA,
    tmRNA...). A gene (or mRNA) whose children are in the file is replaced by them, each taking
    the gene's name where it has none of its own; one without children stands for itself.
    ``gene`` is the ``gene`` attribute, else ``Name`` (NCBI names a CDS by its protein), else
    ``locus_tag``, else ``ID``; ``gene_id``
    the ``locus_tag``, else ``ID``; ``product`` the ``product`` attribute.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "g.gff"
    >>> _ = f.write_text("##gff-version 3\\n"
    ...     "chr1\\t.\\tgene\\t10\\t99\\t.\\t+\\t.\\tID=g1;Name=abcD\\n"
    ...     "chr1\\t.\\tCDS\\t10\\t99\\t.\\t+\\t0\\tID=c1;Parent=g1;product=a protein%3B putative\\n"
    ...     "chr1\\t.\\ttRNA\\t120\\t150\\t.\\t-\\t.\\tID=t1;locus_tag=T_01\\n")
    >>> read_gff3(f)[["start", "end", "type", "gene", "gene_id", "product"]].to_dict("records")[0]
    {'start': 10, 'end': 99, 'type': 'CDS', 'gene': 'abcD', 'gene_id': 'c1', 'product': 'a protein; putative'}
    """
    path = Path(path)
    rows = []
    for number, line in _lines(path, "GFF3"):
        if line.startswith("##FASTA") or line.startswith(">"):
            break
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != 9:
            raise ValueError(f"Line {number} of the GFF3 file {str(path)!r} has {len(cells)} tab-separated "
                             "columns, not 9: check that this is a GFF3 file (GTF and GFF2 are not read).")
        if cells[2] not in FEATURE_TYPES:
            continue
        # ASCII digits only: int() also takes '1_0' and other scripts' digits
        start, end = (int(c) if _DIGITS.fullmatch(c) and len(c) <= 16 else 0 for c in cells[3:5])
        if not 1 <= start <= end <= MAX_COORDINATE:
            raise ValueError(f"Line {number} of the GFF3 file {str(path)!r} has start {cells[3][:40]!r} and end "
                             f"{cells[4][:40]!r}: they must be whole numbers (digits 0-9) with 1 <= start <= "
                             f"end <= {MAX_COORDINATE:.0e}. Fix that line.")
        attributes = _attributes(cells[8])
        rows.append((unquote(cells[0]), start, end, cells[6] if cells[6] in "+-" else ".", cells[2], attributes))
    return _genes(rows, path)


def _attributes(text):
    out = {}
    for pair in text.strip().strip(";").split(";"):
        key, _, value = pair.partition("=")
        if key.strip():
            out[key.strip()] = unquote(value.strip())
    return out


def _parent_cycle(ids, path):
    """Refuse a feature that is its own parent, or a chain of ``Parent`` attributes that comes back
    to where it started: the gene would otherwise vanish from the annotation without a word."""
    done = set()
    for start in ids:
        chain, on, at = [], {}, start
        while at in ids and at not in done:
            parents = ids[at].get("Parent", "").split(",")
            if at in parents:
                chain, on[at] = [at], 0
            if at in on:
                loop = " -> ".join(repr(x) for x in chain[on[at]:] + [at])
                raise ValueError(f"The GFF3 file {str(path)!r} has a cycle of Parent attributes ({loop[:300]}): a "
                                 "feature cannot be its own parent or ancestor. Fix the Parent attributes of these "
                                 "features.")
            on[at] = len(chain)
            chain.append(at)
            at = parents[0]
        done.update(chain)


def _genes(rows, path):
    """The rows of gene-level features, parents replaced by their children."""
    import pandas as pd

    ids = {a["ID"]: a for *_, a in rows if "ID" in a}
    _parent_cycle(ids, path)
    with_children = {p for *_, a in rows for p in a.get("Parent", "").split(",") if p in ids}
    records = []
    for contig, start, end, strand, kind, a in rows:
        if kind in _PARENTS and a.get("ID") in with_children:
            continue
        names = dict(a)
        parent = a.get("Parent", "").split(",")[0]
        for _ in range(3):  # a CDS's mRNA's gene: the child's own attributes win
            if parent not in ids:
                break
            names = {**ids[parent], **names}
            parent = ids[parent].get("Parent", "").split(",")[0]
        gene = names.get("gene") or names.get("Name") or names.get("locus_tag") or names.get("ID") or ""
        gene_id = names.get("locus_tag") or names.get("ID") or gene
        records.append((contig, start, end, strand, kind, gene, gene_id, names.get("product", "")))
    frame = pd.DataFrame(records, columns=["contig", "start", "end", "strand", "type", "gene", "gene_id", "product"])
    frame = frame.astype({"start": np.int64, "end": np.int64})
    return frame.sort_values(["contig", "start", "end"], kind="stable").reset_index(drop=True)
