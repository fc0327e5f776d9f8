"""Fuzzing of the text readers: k-mer counts, CSV / TSV tables and metadata tables (hypothesis).

Every reader is given, for a bounded number of inputs,

- random bytes, random bytes behind a gzip header, gzip of random bytes, truncated gzip;
- near-valid text: a valid file with random corruption (characters inserted, deleted or
  replaced by separators, quotes, NUL, CR, random unicode; a very long token; lines duplicated
  or dropped; the file cut short);
- valid files (random ids and names in any unicode, random separators and spacing).

Each call must return or raise the documented error: ``ValueError`` (``UnicodeError`` is one)
whose message names the file; never another exception, and never take more than ``LIMIT``
seconds. A valid file must parse to what an independent, straightforward parser written here
finds. ``-m slow`` runs the same checks on many more inputs.
"""
from __future__ import annotations

import gzip
import math
import re
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genosift.io import read, read_kmers, read_metadata
from genosift.io.references import read_fasta, read_gff3

LIMIT = 10.0  # seconds per call: a parse of a few kB (~0.05 s) that takes longer hangs, even on a busy machine
# a warning from a reader (pandas dropping values, say) fails the test, as an error would
pytestmark = pytest.mark.filterwarnings("error")
FAST = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
MANY = settings(FAST, max_examples=3000, derandomize=False)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz")
    (path / "warm.kmers").write_text("A | s:1\n")
    read_kmers(path / "warm.kmers")  # compiled once, so the time limit measures the parse
    return path


def _write(folder, name, data):
    path = folder / name
    path.write_bytes(data)
    return path


def _call(func, path):
    """``func(path)``: its result, or the documented ValueError; fails on anything else or a hang."""
    start = time.perf_counter()
    try:
        result = func(path)
    except ValueError as exc:  # UnicodeError included
        result = exc
    elapsed = time.perf_counter() - start
    assert elapsed < LIMIT, f"{func.__name__} took {elapsed:.1f} s on {path.read_bytes()[:200]!r}"
    if isinstance(result, ValueError):
        assert path.name in str(result), f"the message does not name the file: {result}"
    return result


READERS = {
    # name: (file name, call); compression is told from the first bytes, except for CSV / TSV,
    # told from the suffix (so their gzip inputs are named .gz)
    "kmers": ("counts.kmers", read_kmers),
    "csv": ("table.csv", lambda path: read(path, format="csv")),
    "tsv": ("table.tsv", lambda path: read(path, format="tsv")),
    "metadata": ("pheno.tsv", lambda path: read_metadata(path, id_column="id")),
    "metadata_sniffed": ("pheno.txt", lambda path: read_metadata(path, id_column="id")),
    "fasta": ("genome.fa", read_fasta),
    "gff3": ("genes.gff3", read_gff3),
}


def _name(reader, gz):
    name = READERS[reader][0]
    return name + ".gz" if gz and reader in ("csv", "tsv") else name


# --------------------------------------------------------------------------------------------
# bytes and compression
# --------------------------------------------------------------------------------------------

def _valid_sample(reader):
    if reader == "kmers":
        return b"ACGT | s1:3 s2:1\nTTGA | s2:7\n"
    if reader == "fasta":
        return b">chr1 a genome\nACGTNacgt\n>plasmid\nTTGA\n"
    if reader == "gff3":
        return b"##gff-version 3\nchr1\t.\tCDS\t1\t10\t.\t+\t0\tID=a;Name=x\n"
    sep = b"," if reader == "csv" else b"\t"
    return sep.join([b"id", b"a", b"b"]) + b"\n" + sep.join([b"s1", b"1", b"2"]) + b"\n" + \
        sep.join([b"s2", b"3", b"4"]) + b"\n"


@st.composite
def damaged(draw, reader):
    """``(bytes, gzip named?)``: random bytes or a damaged gzip stream."""
    kind = draw(st.sampled_from(["bytes", "gzip_header", "gzip_of_random", "truncated_gzip", "gzip_tail"]))
    junk = draw(st.binary(max_size=600))
    if kind == "bytes":
        return junk, False
    if kind == "gzip_header":
        return b"\x1f\x8b" + junk, True
    if kind == "gzip_of_random":
        return gzip.compress(junk), True
    whole = gzip.compress(_valid_sample(reader))
    if kind == "truncated_gzip":
        return whole[: draw(st.integers(0, len(whole) - 1))], True
    return whole + junk[:1] + junk, True  # a valid member, then bytes that are no gzip member


@pytest.mark.parametrize("reader", sorted(READERS))
@FAST
@given(data=st.data())
def test_random_bytes_and_damaged_gzip(folder, reader, data):
    raw, gz = data.draw(damaged(reader))
    _call(READERS[reader][1], _write(folder, _name(reader, gz), raw))


@pytest.mark.parametrize("reader", sorted(READERS))
def test_truncated_gzip_of_a_valid_file_is_an_error(folder, reader):
    whole = gzip.compress(_valid_sample(reader) * 50)
    for cut in (10, len(whole) // 2, len(whole) - 1):
        result = _call(READERS[reader][1], _write(folder, _name(reader, True), whole[:cut]))
        assert isinstance(result, ValueError), f"a gzip file cut at {cut} of {len(whole)} bytes was read"


# --------------------------------------------------------------------------------------------
# valid files and their independent parse
# --------------------------------------------------------------------------------------------

# identifiers: any unicode but the separators of the format and NUL (refused in text), so also
# quotes, other control characters and emoji
_ID_CHARS = st.characters(codec="utf-8", exclude_characters=" \t\r\n|:,;\"'\x00")
ids = st.text(_ID_CHARS, min_size=1, max_size=12)


@st.composite
def kmer_files(draw):
    """A valid k-mer file as text: unique k-mers, per line distinct samples, any spacing."""
    samples = draw(st.lists(ids, min_size=1, max_size=6, unique=True))
    # ':' may appear inside an id: the count follows the last one
    samples = [s + ":x" if i == 0 and draw(st.booleans()) else s for i, s in enumerate(samples)]
    kmers = draw(st.lists(st.text("ACGTN", min_size=1, max_size=31), min_size=1, max_size=12, unique=True))
    space = st.sampled_from([" ", "\t", "  ", " \t"])
    counts = st.one_of(st.integers(0, 50), st.integers(0, 2**53))
    lines = []
    for kmer in kmers:
        held = draw(st.lists(st.sampled_from(samples), max_size=len(samples), unique=True))
        entries = "".join(draw(space) + f"{s}:{draw(counts)}" for s in held)
        # dsm-framework's layout: columns of statistics between the k-mer and the bar
        stats = draw(st.lists(st.sampled_from(["5.033430", "0", "100", "1e-3", "NA"]), max_size=7))
        lead = "".join(draw(space) + v for v in stats)
        lines.append(draw(st.sampled_from(["", " "])) + kmer + lead + draw(st.sampled_from(["", " ", "\t"])) + "|"
                     + entries + draw(st.sampled_from(["", " ", "\r"])))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", "  ", "\t"])))  # blank lines are skipped
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


def parse_kmers(text):
    """The format by its definition: ``KMER [STATISTICS ...] | SAMPLE:COUNT ...``, whitespace = space,
    tab, CR."""
    kmers, counts, seen = [], {}, []
    for line in text.split("\n"):
        if not line.strip(" \t\r"):
            continue
        kmer, rest = line.split("|", 1)
        kmers.append(re.split(r"[ \t\r]+", kmer.strip(" \t\r"))[0])
        for entry in re.split(r"[ \t\r]+", rest.strip(" \t\r")) if rest.strip(" \t\r") else []:
            sample, count = entry.rsplit(":", 1)
            seen.append(sample)
            counts[sample, len(kmers) - 1] = int(count)
    samples = sorted(set(seen))
    X = np.zeros((len(samples), len(kmers)))
    for (sample, j), c in counts.items():
        X[samples.index(sample), j] = c
    return samples, kmers, X


@FAST
@given(text=kmer_files(), gz=st.booleans())
def test_valid_kmer_files_parse_as_defined(folder, text, gz):
    _check_kmer_file(folder, text, gz)


def _check_kmer_file(folder, text, gz):
    raw = text.encode("utf-8")
    ds = _call(read_kmers, _write(folder, "valid.kmers", gzip.compress(raw) if gz else raw))
    assert not isinstance(ds, Exception), ds
    samples, kmers, X = parse_kmers(text)
    assert ds.sample_ids.tolist() == samples
    assert ds.feature_names.tolist() == kmers
    np.testing.assert_array_equal(ds.X.toarray(), X)
    assert ds.X.has_sorted_indices and (ds.X.data != 0).all()


_NUMBERS = st.one_of(
    st.integers(-(2**53), 2**53).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: f"{v:.6g}"),
    st.just(""),  # missing
)


@st.composite
def tables(draw, sep):
    """A valid table: unique ids and names (no separator, quote or line break), numbers or empty."""
    # NUL is no text: a table holding one is refused (test_nul_byte_is_refused)
    chars = st.characters(codec="utf-8", exclude_characters=f"\r\n\"{sep}\x00", exclude_categories=["Cs"])
    name = st.text(chars, min_size=1, max_size=10).filter(lambda s: s.strip() == s and s[0] != "#")
    p = draw(st.integers(1, 6))
    names = draw(st.lists(name, min_size=p, max_size=p, unique=True).filter(lambda v: "id" not in v))
    rows = draw(st.lists(name, min_size=1, max_size=8, unique=True))
    cells = [[draw(_NUMBERS) for _ in names] for _ in rows]
    lines = [sep.join(["id", *names])] + [sep.join([r, *c]) for r, c in zip(rows, cells)]
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


def parse_table(text, sep):
    lines = [line for line in text.split("\n") if line]
    header = lines[0].split(sep)
    rows = [line.split(sep) for line in lines[1:]]
    X = np.array([[float(v) if v else math.nan for v in r[1:]] for r in rows], dtype=np.float64)
    return [r[0] for r in rows], header[1:], X.reshape(len(rows), len(header) - 1)


@pytest.mark.parametrize("reader", ["csv", "tsv"])
@FAST
@given(data=st.data(), gz=st.booleans())
def test_valid_tables_parse_as_defined(folder, reader, data, gz):
    sep = "," if reader == "csv" else "\t"
    text = data.draw(tables(sep))
    raw = text.encode("utf-8")
    ds = _call(READERS[reader][1], _write(folder, _name(reader, gz), gzip.compress(raw) if gz else raw))
    assert not isinstance(ds, Exception), ds
    samples, names, X = parse_table(text, sep)
    assert ds.sample_ids.tolist() == samples
    assert ds.feature_names.tolist() == names
    np.testing.assert_array_equal(ds.X, X)


_WORDS = st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8).map(lambda s: "w" + s)


@st.composite
def metadata_tables(draw, sep):
    """A valid metadata table: an id column (leading zeros, spaces around), int, float, word columns."""
    chars = st.characters(codec="utf-8", exclude_characters=f"\r\n\"{sep}#", exclude_categories=["Cs", "Zs", "Cc"])
    sample = st.text(chars, min_size=1, max_size=10)
    n = draw(st.integers(1, 8))
    samples = draw(st.lists(sample, min_size=n, max_size=n, unique=True))
    columns = {"count": st.integers(-999, 999).map(str), "value": st.floats(-1e3, 1e3).map(repr), "label": _WORDS}
    rows = []
    for s in samples:
        pad = draw(st.sampled_from(["", " "]))
        rows.append([pad + s + pad] + [draw(columns[c]) for c in columns])
    lines = [sep.join(["id", *columns])] + [sep.join(r) for r in rows]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("reader", ["metadata", "metadata_sniffed"])
@FAST
@given(data=st.data(), gz=st.booleans())
def test_valid_metadata_parses_as_defined(folder, reader, data, gz):
    sep = "\t" if reader == "metadata" else data.draw(st.sampled_from([",", "\t", ";"]))
    text = data.draw(metadata_tables(sep))
    raw = text.encode("utf-8")
    meta = _call(READERS[reader][1], _write(folder, _name(reader, gz), gzip.compress(raw) if gz else raw))
    assert not isinstance(meta, Exception), meta
    rows = [line.split(sep) for line in text.split("\n")[1:] if line]
    assert meta.index.tolist() == [r[0].strip() for r in rows]
    assert list(meta.columns) == ["count", "value", "label"]
    assert meta["count"].tolist() == [int(r[1]) for r in rows]
    np.testing.assert_array_equal(meta["value"].to_numpy(dtype=float), [float(r[2]) for r in rows])
    assert meta["label"].tolist() == [r[3] for r in rows]


# --------------------------------------------------------------------------------------------
# near-valid text: a valid file, then random damage
# --------------------------------------------------------------------------------------------

_NOISE = st.one_of(
    st.sampled_from(["|", ":", ",", "\t", ";", " ", "\"", "'", "\x00", "\r", "\n", "\r\n", "#", "-", "e", "NA",
                     "\ufeff", "\u2028", "\x85", "9" * 400]),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=4),
)


@st.composite
def corrupted(draw, text):
    """``text`` with a few random edits at random places."""
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "long_token", "many_fields", "dup_line",
                                   "drop_line", "cut", "latin1"]))
        at = draw(st.integers(0, len(text)))
        if op == "insert":
            text = text[:at] + draw(_NOISE) + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 5)):]
        elif op == "replace":
            text = text[:at] + draw(_NOISE) + text[at + 1:]
        elif op == "long_token":
            text = text[:at] + draw(st.sampled_from(["A", "9", "x:"])) * draw(st.integers(1000, 100_000)) + text[at:]
        elif op == "many_fields":  # (pandas reads a header of 10^5 fields in ~6 s: linear-ish, no hang)
            text = text[:at] + draw(st.sampled_from(["\t", ",", " |"])) * draw(st.integers(100, 5000)) + text[at:]
        elif op in ("dup_line", "drop_line"):
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines[i:i + 1] = [lines[i]] * (2 if op == "dup_line" else 0)
            text = "\n".join(lines)
        elif op == "cut":
            text = text[:at]
        else:
            return (text[:at].encode("utf-8") + b"\xe9\xff" + text[at:].encode("utf-8"))
    return text.encode("utf-8")


def _valid_text(reader, data):
    if reader == "kmers":
        return data.draw(kmer_files())
    if reader in ("csv", "tsv"):
        return data.draw(tables("," if reader == "csv" else "\t"))
    return data.draw(metadata_tables("\t" if reader == "metadata" else data.draw(st.sampled_from([",", ";"]))))


@pytest.mark.parametrize("reader", sorted(READERS))
@FAST
@given(data=st.data(), gz=st.booleans())
def test_near_valid_text(folder, reader, data, gz):
    raw = data.draw(corrupted(_valid_text(reader, data)))
    result = _call(READERS[reader][1], _write(folder, _name(reader, gz), gzip.compress(raw) if gz else raw))
    if reader == "kmers" and not isinstance(result, Exception):
        # whatever was read is what the definition reads from the damaged text (bytes that are not
        # UTF-8 may stand only in the skipped statistics columns)
        samples, kmers, X = parse_kmers(raw.decode("utf-8", "surrogateescape"))
        assert result.sample_ids.tolist() == samples and result.feature_names.tolist() == kmers
        np.testing.assert_array_equal(result.X.toarray(), X)


# --------------------------------------------------------------------------------------------
# the same, many more inputs
# --------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("reader", sorted(READERS))
@MANY
@given(data=st.data(), gz=st.booleans())
def test_many_damaged_inputs(folder, reader, data, gz):
    if data.draw(st.booleans()):
        raw, gz = data.draw(damaged(reader))
    else:
        raw = data.draw(corrupted(_valid_text(reader, data)))
        raw = gzip.compress(raw) if gz else raw
    _call(READERS[reader][1], _write(folder, _name(reader, gz), raw))


@pytest.mark.slow
@MANY
@given(text=kmer_files(), gz=st.booleans())
def test_many_valid_kmer_files(folder, text, gz):
    _check_kmer_file(folder, text, gz)


# --------------------------------------------------------------------------------------------
# what the fuzzing found, as plain cases
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("content, message", [
    (b"id\ty\ns1\t1\textra\ns2\t0\n", "more fields than its header's 2"),  # pandas dropped 'extra'
    (b"id\ty\ns\xe91\t1\n", r"not UTF-8 text \(it holds the byte b'\\xe9'\)"),
    (gzip.compress(b"id\ty\ns1\t1\n" * 40, mtime=0)[:-9], "damaged or incomplete.*gzip -t"),
    (b"\x1f\x8b\x08\x00junk", "damaged or incomplete"),
])
@pytest.mark.parametrize("name", ["pheno.tsv", "pheno.txt"])  # separator from the suffix, or sniffed
def test_metadata_errors_name_the_file_and_the_fix(folder, content, message, name):
    path = _write(folder, name, content)
    with pytest.raises(ValueError, match=message) as info:
        read_metadata(path, id_column="id")
    assert repr(str(path)) in str(info.value)


#: A number with an exponent of 20 digits: pandas 2's own number parser adds them up in a 32-bit
#: integer and crashes the process (it reads "1.5e3999" as text, then ``to_numeric`` crashes).
LONG_EXPONENT = "1.5e3" + "9" * 20


@pytest.mark.parametrize("reader, name, text, message", [
    ("csv", "t.csv", f"id,a,b\ns1,1,2\ns2,3,{LONG_EXPONENT}\n", r"line 3, column 'b': '?1\.5e3.*is not a number"),
    ("tsv", "t.tsv", f"id\ta\tb\ns1\t1\t2\ns2\t3\t{LONG_EXPONENT}\n", r"line 3, column 'b'.*is not a number"),
    ("rtab", "t.Rtab", f"gene\ts1\ts2\ng1\t1\t{LONG_EXPONENT}\ng2\t0\t1\n", r"is not a number"),
    ("covariates", "c.tsv", f"id\tage\ns1\t{LONG_EXPONENT}\ns2\t3\n", None),
    ("kinship", "k.tsv", f"id\ts1\ts2\ns1\t1\t{LONG_EXPONENT}\ns2\t0.5\t1\n", r"k\.tsv.*not a"),
    ("metadata", "m.tsv", f"id\ty\ns1\t{LONG_EXPONENT}\ns2\t3\n", None),
    ("ranking", "r.tsv", f"feature\tscore\tpvalue\nk1\t{LONG_EXPONENT}\t0.5\n", r"'score' of .*r\.tsv"),
])
def test_a_number_with_a_huge_exponent_is_read_or_named_in_every_reader(folder, reader, name, text, message):
    """Every reader of numbers written as text: the value is out of float64's range, so it is
    refused naming the file and the cell (or, in a table of sample traits or covariates, kept as
    text); never a crash."""
    from genosift.io import read_covariates, read_kinship
    from genosift.report.outputs import read_table

    calls = {"csv": lambda p: read(p, format="csv"), "tsv": lambda p: read(p, format="tsv"),
             "rtab": lambda p: read(p, format="rtab"), "covariates": lambda p: read_covariates(p, id_column="id"),
             "kinship": read_kinship, "metadata": lambda p: read_metadata(p, id_column="id"), "ranking": read_table}
    path = _write(folder, name, text.encode())
    if message is None:
        assert calls[reader](path).iloc[0, 0] == LONG_EXPONENT  # a trait that is not a number stays text
        return
    with pytest.raises(ValueError, match=message):
        calls[reader](path)


@pytest.mark.parametrize("digits", [400, 900, 5000])
def test_an_integer_beyond_float64_in_a_table_is_named(folder, digits):
    path = _write(folder, "huge.csv", b"id,a,b\ns1,1,2\ns2,3," + b"9" * digits + b"\n")
    with pytest.raises(ValueError, match=r"huge.csv' line 3, column 'b': '?9{10}.*is not a number"):
        read(path, format="csv")  # pandas raised OverflowError for 900 digits


def test_kmer_sample_id_not_utf8_names_the_file(folder):
    path = _write(folder, "latin.kmers", b"ACGT | s\xe91:3\n")
    with pytest.raises(ValueError, match=r"sample id b's\\xe91' in '.*latin.kmers' is not UTF-8"):
        read_kmers(path)


@pytest.mark.parametrize("text", ["id,a\nx\x00,1\n", "id,a\x00\nx,1\n", "id,a\nx,1\x00\n"])
def test_nul_byte_is_refused(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match="holds a NUL byte"):
        read(path)
