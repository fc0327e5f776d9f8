"""Which reader a file needs: from its name when the name is unambiguous, else from its content.

A suffix that names one format (``.csv``, ``.parquet``, ``.npz``, ``.kmers``, ...) is taken at
its word, through any compression suffix, but for ``.csv``: a header starting with ``Gene``,
``Non-unique Gene name``, ``Annotation`` is Roary's or Panaroo's ``gene_presence_absence.csv``
(``gene_presence_absence``, as that file name says too), any other a table. A name that says
nothing (``counts.gz``, ``isolates``) or too little (``.txt``, read by both the table and the
k-mer readers; ``.h5ad``, which may be a genosift store) is settled by the first bytes: the
magic numbers of HDF5, Parquet, NumPy, zip, PLINK .bed (``6c 1b 01``) and BCF files, then, for
text (decompressed with bounded memory when compressed), the first line that is not blank: a
Matrix Market banner, a VCF header (``##fileformat=VCF``; a bgzipped BCF shows its ``BCF``
magic here), a k-mer line (``KMER [STATS ...] | SAMPLE:COUNT ...``), a list of per-sample k-mer
dumps (``SAMPLE<TAB>PATH`` naming an existing file), a gene presence/absence header or a
delimited header (a tab or a comma, as many times on the next line). A folder is data only as a
collection of k-mer dumps: its first file's first line is ``KMER COUNT``.
"""
from __future__ import annotations

import re
from pathlib import Path

from .compression import COMPRESSION_SUFFIXES, DamagedFile, LineTooLong, is_pipe, open_binary, open_text, replayable
from .pangenome import is_gene_presence_absence
from .registry import READERS

__all__ = ["COUNTER_DATABASES", "dump_files", "format_of", "is_store", "list_entry", "read", "sniff_format"]

#: Suffixes that several readers could mean: the file's content decides.
AMBIGUOUS = (".txt", ".h5ad")
_HDF5 = b"\x89HDF\r\n\x1a\n"
_MAGIC = ((b"PAR1", "parquet"), (b"\x93NUMPY", "npy"), (b"PK\x03\x04", "npz"), (b"PK\x05\x06", "npz"),
          (b"\x6c\x1b\x01", "plink"), (b"BCF\x02", "vcf"))
# a VCF's first line; a BCF (BGZF-compressed, read through gzip) starts with its magic
_VARIANTS = (b"##fileformat=VCF", b"BCF\x02")
_HEAD_BYTES = 1 << 20  # text read to decide: the start of the first line is enough
# a k-mer, optional statistics columns, the bar, then SAMPLE:COUNT entries (a cut last one allowed)
_DUMP_LINE = re.compile(rb"[ \t]*\S+[ \t]+\d+[ \t\r]*")  # a k-mer dump: KMER COUNT
_DAMAGED_DUMP_LINE = re.compile(rb"[ \t]*[A-Za-z]+[ \t]+[-+]?[\d.eE+-]+[ \t\r]*")  # KMER and a bad count
#: The binary databases of k-mer counters, by suffix: what the file is, and the command that dumps it
#: (a folder of dumps is told by its other files; the reader names these).
COUNTER_DATABASES = {
    ".kmc_pre": ("a KMC database file", "kmc_tools transform DB dump DB.txt"),
    ".kmc_suf": ("a KMC database file", "kmc_tools transform DB dump DB.txt"),
    ".jf": ("a Jellyfish database", "jellyfish dump -c -t DB.jf > DB.txt"),
}
#: The readers that open their files themselves, by seeking (binary formats): a pipe is refused.
_SEEKING = ("store", "h5ad", "parquet", "npy", "npz", "plink", "vcf")
_KMER_LINE = re.compile(rb"[ \t]*[^\s|:]+(?:[ \t]+[^\s|]+)*[ \t]*\|"  # the k-mer, statistics columns, the bar
                        rb"[ \t]*(?:\S*:\d+(?:[ \t]+\S*:\d+)*)?(?:[ \t]+\S*)?[ \t\r]*")


def _by_suffix(path):

    name = Path(path).name.lower()
    best = None
    for reader in READERS.values():
        for suffix in reader.suffixes:
            for comp in ("", *COMPRESSION_SUFFIXES):
                if name.endswith(suffix + comp) and (best is None or len(suffix + comp) > best[1]):
                    best = (reader.name, len(suffix + comp), suffix)
    return best


def is_store(path):
    """Whether the file ``path`` is a genosift store: HDF5 marked ``genosift-store`` (h5py needed)."""
    try:
        import h5py
    except ImportError:
        return False
    try:
        with h5py.File(path, "r") as f:
            return bool(f.attrs.get("genosift-store", 0))
    except OSError:
        return False


def _first_lines(path):
    """The first two lines of text that are not blank, as far as the first 1 MiB holds them
    (the first one possibly cut, the second None when the first fills the 1 MiB)."""
    with open_binary(path) as fh:
        head = fh.read(_HEAD_BYTES)
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    whole = len(head) < _HEAD_BYTES
    lines = [line for line in head.split(b"\n") if line.strip(b" \t\r")]
    if lines and not whole and not head.endswith(b"\n"):
        lines = lines[:-1] or lines  # the last line may be cut, unless it is the only one
    return (lines + [None, None])[:2]


def dump_files(folder):
    """The files of a folder that are samples: regular files not starting with ``.``, sorted."""
    return sorted(p for p in Path(folder).iterdir() if not p.name.startswith(".") and p.is_file())


def list_entry(text):
    """``(sample, path text)`` of a list file's line; None for a blank or comment line, False if malformed."""
    text = text.rstrip("\r\n")
    if not text.strip() or text.lstrip().startswith("#"):
        return None
    fields = [f.strip() for f in text.split("\t")]
    return (fields[0], fields[1]) if len(fields) == 2 and all(fields) else False


def _dump_list(path):
    """Whether ``path`` is a list of k-mer dumps: its first line that is neither blank nor a ``#``
    comment is ``SAMPLE<TAB>PATH``, naming an existing file (relative to the list's folder)."""
    try:
        with open_text(path) as fh:
            for _ in range(1000):
                raw = fh.readline(1 << 16)
                entry = list_entry(raw)
                if entry is None and raw.endswith("\n"):
                    continue
                return bool(entry) and (Path(path).parent / entry[1]).is_file()
    except (ValueError, OSError):
        pass
    return False


def _dump_folder(path, tried=16):
    """Whether a folder holds k-mer dumps: the first line of the first of its files (of the first
    ``tried``) that holds one is ``KMER COUNT``, or two fields of which the second is a number of
    any sign (a damaged dump, then named by the reader). An empty first dump is passed over, so
    that the reader names it instead of the folder being taken for no data."""
    for file in [f for f in dump_files(path) if f.suffix.lower() not in COUNTER_DATABASES][:tried]:
        try:
            line = _first_lines(file)[0]
        except (ValueError, OSError):
            return False
        if line is not None:
            return _DUMP_LINE.fullmatch(line) is not None or _DAMAGED_DUMP_LINE.fullmatch(line) is not None
    return False


def _delimited(first, second):
    """``"tsv"`` or ``"csv"`` when the first lines split alike on a tab or a comma, else None."""
    for sep, name in ((b"\t", "tsv"), (b",", "csv")):
        n = first.count(sep)
        if n and (second is None or second.count(sep) == n):
            return name
    return None


def sniff_format(path):
    """The reader name that the content of ``path`` calls for, or None if it cannot tell.


    Examples
    --------
    >>> import tempfile, pathlib, gzip
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "counts.gz"
    >>> _ = path.write_bytes(gzip.compress(b"ACGTA 0.5 12 | s1:3 s2:1\\nCCGTA | s2:4\\n"))
    >>> sniff_format(path)
    'kmers'
    """
    with open(replayable(path), "rb") as fh:
        head = fh.read(16)
    if head.startswith(_HDF5):
        return "store" if is_store(path) else "h5ad"
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    try:
        line, second = _first_lines(path)
    except (DamagedFile, LineTooLong, OSError):
        return None
    if line is None:
        return None
    if line.startswith(b"%%MatrixMarket"):
        return "mtx"
    if line.startswith(_VARIANTS):
        return "vcf"
    if b"\x00" in line:
        return None
    if b"|" in line:
        cut = line if len(line) < _HEAD_BYTES else line[: line.rfind(b" ")]  # a whole line, or whole tokens
        if _KMER_LINE.fullmatch(cut):
            return "kmers"
    if (b"\t" in line or line.startswith(b"#")) and _dump_list(path):
        return "dumps"
    if is_gene_presence_absence(line):
        return "gene_presence_absence"
    return _delimited(line, second)


def _gene_table(path):
    """Whether the first line of ``path`` is a gene presence/absence header (a file that cannot be
    read is not: its reader names the fault)."""
    try:
        line = _first_lines(path)[0]
    except (ValueError, OSError):
        return False
    return line is not None and is_gene_presence_absence(line)


def format_of(path):
    """The reader name for ``path``: its suffix when that names one format, else its content.

    Compression suffixes are looked through. Raises a ``ValueError`` naming the known suffixes
    and ``--format`` when neither the name nor the content tells. A folder is ``"dumps"`` when its
    files are k-mer dumps, else an ``IsADirectoryError``.
    """
    if Path(path).is_dir():

        if _dump_folder(path):
            return "dumps"
        raise IsADirectoryError(
            f"{str(path)!r} is a folder, not a data file. Pass the path of a file in it (formats: "
            f"{sorted(READERS)}); a folder is read only when it holds k-mer count dumps, one file of "
            "'KMER COUNT' lines per sample."
        )
    best = _by_suffix(path)
    if best is not None and best[0] == "csv" and _gene_table(path):
        return "gene_presence_absence"
    if best is not None and best[2] not in AMBIGUOUS:
        return best[0]
    found = sniff_format(path) if Path(replayable(path)).is_file() else None
    if found is not None:
        return found
    if best is not None:
        return best[0]
    if not Path(path).exists():
        raise FileNotFoundError(f"No such file: {str(path)!r}.")
    from ..core.messages import FixError

    known = sorted({s for r in READERS.values() for s in r.suffixes})
    raise FixError(
        f"Cannot tell the format of {str(path)!r} from its name or its first bytes. Known suffixes: "
        f"{known} (optionally compressed with {list(COMPRESSION_SUFFIXES)}); or pass {{format}} one of "
        f"{sorted(READERS)}.",
        owner="read", format=FixError.ANY,
    )



def read(path, *, format=None, **read_options):
    """Read a data file into a ``Dataset``: by ``format``, else by its suffix, else by its content;
    ``read_options``: the reader's parameters (``genosift.io.READERS[format].parameters``).

    See ``genosift.io.format_of``: a suffix that names one format decides; a name that says
    nothing (``counts.gz``) or too little (``.txt``, ``.h5ad``) is settled by the first bytes.
    A folder is read as per-sample k-mer dumps (``read_dumps``) when its files are dumps.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No such file: {str(path)!r}.")
    if path.is_dir() and (format or format_of(path)) != "dumps":
        raise IsADirectoryError(f"{str(path)!r} is a folder, not a data file. Pass the path of a file in it "
                                f"(formats: {sorted(READERS)}).")
    name = format or format_of(path)
    if name not in READERS:
        from ..core.messages import FixError

        raise FixError(f"The {{format}} option must be one of {sorted(READERS)}. Got {name!r} instead.",
                       owner="read", format=FixError.ANY)
    if name in _SEEKING and is_pipe(path):
        raise ValueError(f"{str(path)!r} is a pipe, not a file: {name} data are read by seeking in a file. "
                         "Save the data to a file first and pass that file's path.")
    return READERS[name].func(path, **read_options)
