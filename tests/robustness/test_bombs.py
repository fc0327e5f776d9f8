"""Compressed input read with bounded memory, and the text rules every text reader shares.

Bombs: small files that decompress to gigabytes (one stream repeated: concatenated streams are
valid gzip, bzip2, xz and zstd). Each reader is run on them in a child process whose peak
resident memory (``VmHWM``, reset before each bomb) is compared with its resident size before,
after the same reader has read a small valid file (so imports and compiled kernels are counted).
A bomb of one long line must fail fast with the line-length error, a bomb of blank lines must
be read through without holding it.
"""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from genosift.io import compression, read, read_kmers, read_metadata
from genosift.io.compression import MAX_LINE_BYTES, DamagedFile, LineTooLong

SRC = str(Path(__file__).resolve().parents[2] / "src")
UNIT = 1 << 24  # 16 MiB of decompressed text per stream
GIB = 1 << 30
BOUND = 300 << 20  # the most a reader may grow beyond its warm state, in bytes


def _zstd_compress(data):
    zstandard = pytest.importorskip("zstandard", reason="zstandard is needed for .zst files (genosift[io])")
    return zstandard.ZstdCompressor(level=3).compress(data)


COMPRESS = {
    "gz": lambda d: gzip.compress(d, 9),
    "bz2": lambda d: bz2.compress(d, 9),
    "xz": lzma.compress,
    "zst": _zstd_compress,
}


def bomb(folder, name, unit, repeats, ext, head=b""):
    """``head`` then ``unit`` repeated, as ``repeats`` concatenated streams (each a unit)."""
    path = Path(folder) / f"{name}.{ext}"
    one = COMPRESS[ext](unit)
    path.write_bytes((COMPRESS[ext](head) if head else b"") + one * repeats)
    return path


@pytest.fixture(scope="module")
def long_units():
    return b"A" * UNIT


# The child reads a small valid file first (imports done, kernels compiled), then each bomb,
# and reports its peak memory after each step and the error each bomb raised.
_CHILD = r"""
import contextlib, io, json, resource, sys
sys.path.insert(0, sys.argv[1])
from genosift.cli import main
from genosift.io import read, read_kmers, read_metadata

def status(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024

def reset():
    # the resident size now; the peak (VmHWM) is reset to it where Linux allows
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    return status("VmRSS")

def peak():
    return status("VmHWM")

reader, warm, kmers, bombs = sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])

def run(path):
    if reader == "kmers":
        read_kmers(path)
    elif reader == "table":
        read(path)
    elif reader == "meta":
        read_metadata(path, id_column="id")
    else:
        args = ["convert", path] if reader == "convert" else ["convert", kmers, "--meta", path, "--id", "id"]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(args + ["-o", path + ".out.gs.h5ad", "--quiet", "--force"])
        if code != 0:
            raise RuntimeError(err.getvalue())

run(warm)
out = {"steps": []}
for path in bombs:
    base = reset()
    try:
        run(path)
        error = None
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    out["steps"].append({"path": path, "error": error, "grown": peak() - base})
print(json.dumps(out))
"""


def run_child(reader, folder, bombs, timeout=600):
    """Peak memory of ``reader`` on each bomb beyond its warm state, and the errors raised."""
    folder = Path(folder)
    kmers = folder / "warm.kmers"
    kmers.write_text("ACGT | s1:1 s2:3\nCCGT | s2:1\n")
    warm = folder / "warm.csv"
    warm.write_text("id,a,b\ns1,1,2\ns2,3,4\n")
    if reader in ("kmers", "convert"):
        warm = kmers
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, SRC, reader, str(warm), str(kmers), json.dumps([str(b) for b in bombs])],
        capture_output=True, text=True, timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return [(Path(s["path"]).name, s["grown"], s["error"]) for s in out["steps"]]


@pytest.fixture(scope="module")
def long_bombs(tmp_path_factory):
    """3 GiB of one line without a line break, per format, under k-mer and CSV names."""
    folder = tmp_path_factory.mktemp("long")
    out = {}
    for ext in COMPRESS:
        blob = bomb(folder, "x", b"A" * UNIT, 3 * GIB // UNIT, ext).read_bytes()
        for stem in ("long.kmers", "long.csv"):
            path = folder / f"{stem}.{ext}"
            path.write_bytes(blob)
            out[stem, ext] = path
    return folder, out


@pytest.mark.parametrize("reader, stem", [
    ("kmers", "long.kmers"), ("table", "long.csv"), ("meta", "long.csv"),
    ("convert", "long.kmers"), ("convert", "long.csv"), ("convert-meta", "long.csv"),
])
def test_a_long_line_bomb_fails_fast_with_bounded_memory(long_bombs, reader, stem):
    folder, paths = long_bombs
    bombs = [paths[stem, ext] for ext in COMPRESS]
    assert all(p.stat().st_size < 4 << 20 for p in bombs)  # 3 GiB each once decompressed
    for name, grown, error in run_child(reader, folder, bombs):
        assert error is not None and re.search(
            rf"{re.escape(name)}' line 1 is longer than {MAX_LINE_BYTES:,} bytes", error
        ), (name, error)
        assert grown < BOUND, (name, grown, error)



@pytest.fixture(scope="module")
def blank_bombs(tmp_path_factory):
    """1 GiB of blank lines per format, under k-mer and CSV names (the CSV with a header)."""
    folder = tmp_path_factory.mktemp("blank")
    out = {}
    for ext in COMPRESS:
        out["blank.kmers", ext] = bomb(folder, "blank.kmers", b"\n" * UNIT, GIB // UNIT, ext)
        out["blank.csv", ext] = bomb(folder, "blank.csv", b"\n" * UNIT, GIB // UNIT, ext, head=b"id,a\n")
    return folder, out


def test_a_blank_line_bomb_is_read_through_with_bounded_memory(tmp_path):
    path = bomb(tmp_path, "blank.kmers", b"\n" * UNIT, GIB // UNIT, "gz")  # 1 GiB of blank lines
    [(name, grown, error)] = run_child("kmers", tmp_path, [path])
    assert error is not None and "holds no k-mer lines" in error, error
    assert grown < BOUND, grown


@pytest.mark.slow
@pytest.mark.parametrize("reader, stem", [
    ("kmers", "blank.kmers"), ("meta", "blank.csv"), ("convert", "blank.kmers"), ("convert-meta", "blank.csv"),
])
def test_blank_line_bombs_of_every_format(blank_bombs, reader, stem):
    folder, paths = blank_bombs
    expected = {"kmers": "holds no k-mer lines", "convert": "holds no k-mer lines",
                "meta": "has no sample ids|no data|empty id", "convert-meta": "."}[reader]
    for name, grown, error in run_child(reader, folder, [paths[stem, ext] for ext in COMPRESS], timeout=1200):
        assert grown < BOUND, (name, grown, error)
        assert error is None or re.search(expected, error), (name, error)


# ---------------------------------------------------------------------------------------------
# streams, members, padding and trailing bytes, for every format and every text reader

TEXT = "".join(f"s{i},{i * 0.25},{-i}\n" for i in range(3000)).encode()
TABLE = b"id,a,b\n" + TEXT


def kmer_text(n=300):
    return "".join(f"{'ACGT'[i % 4]}{i:05d} | s{i % 7}:{i + 1} s{(i + 3) % 7}:2\n" for i in range(n)).encode()


@pytest.mark.parametrize("ext", list(COMPRESS))
def test_pieces_are_bounded_and_match_the_reference_decompressor(tmp_path, ext):
    path = bomb(tmp_path, "b.csv", b"\n" * (1 << 22), 8, ext)  # 32 MiB from a few KiB
    sizes = [len(piece) for piece in compression.decompressed(path, step=1 << 16)]
    assert max(sizes) <= 1 << 16 and sum(sizes) == 32 << 20
    assert compression.detect(path) == {"gz": "gzip", "bz2": "bzip2", "xz": "xz", "zst": "zstd"}[ext]
    path.write_bytes(COMPRESS[ext](TABLE))
    reference = {"gz": gzip.decompress, "bz2": bz2.decompress, "xz": lzma.decompress,
                 "zst": lambda b: __import__("zstandard").ZstdDecompressor().decompressobj().decompress(b)}[ext]
    assert b"".join(compression.decompressed(path, step=100)) == reference(path.read_bytes()) == TABLE


@pytest.mark.parametrize("ext", list(COMPRESS))
def test_concatenated_streams_padding_and_trailing_bytes(tmp_path, ext):
    comp = COMPRESS[ext]
    cuts = [0, 7, 1000, len(TEXT)]
    streams = comp(b"id,a,b\n") + b"".join(comp(TEXT[a:b]) for a, b in zip(cuts, cuts[1:]))
    kmers = kmer_text()
    kmer_streams = comp(kmers[:50]) + comp(kmers[50:])
    expected = read(tmp_path / "plain.csv" if (tmp_path / "plain.csv").write_bytes(TABLE) else None)
    expected_kmers = read_kmers(tmp_path / "plain.kmers" if (tmp_path / "plain.kmers").write_bytes(kmers) else None)
    padded = ext in ("gz", "xz")  # xz stream padding; gzip tools accept trailing zeros too
    for tail, ok in [(b"", True), (b"\0" * 8, padded), (b"garbage", False), (b"\0" * 4 + b"x", False)]:
        table, meta, counts = tmp_path / f"t.csv.{ext}", tmp_path / f"m.csv.{ext}", tmp_path / f"k.kmers.{ext}"
        table.write_bytes(streams + tail)
        meta.write_bytes(streams + tail)
        counts.write_bytes(kmer_streams + tail)
        if ok:
            got = read(table)
            np.testing.assert_array_equal(got.X, expected.X)
            assert got.sample_ids.tolist() == expected.sample_ids.tolist()
            assert read_metadata(meta, id_column="id").shape == (3000, 2)
            got = read_kmers(counts)
            assert (got.X != expected_kmers.X).nnz == 0
            assert got.feature_names.tolist() == expected_kmers.feature_names.tolist()
            continue
        kind = compression.detect(table)
        for call, path in [(read, table), (lambda p: read_metadata(p, id_column="id"), meta), (read_kmers, counts)]:
            with pytest.raises(DamagedFile) as err:
                call(path)
            message = str(err.value)
            read_as = " as a delimited table" if call is read else ""
            assert message.startswith(f"Cannot read {str(path)!r}{read_as}: it has trailing bytes after its "
                                      f"{kind} data that are not {kind}"), message
            assert f"(`{compression.check_command(kind)} FILE` checks it)" in message


@pytest.mark.parametrize("ext", list(COMPRESS))
def test_truncated_and_corrupt_streams(tmp_path, ext):
    whole = COMPRESS[ext](TABLE)
    path = tmp_path / f"cut.csv.{ext}"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DamagedFile, match=r"it is truncated: its \w+ data end before the end-of-stream marker"):
        read(path)
    path.write_bytes(whole[:-1] if ext != "gz" else whole[:-4] + bytes(4))  # gzip: a wrong length field
    with pytest.raises(DamagedFile, match=re.escape(f"Cannot read {str(path)!r} as a delimited table: ")):
        read(path)


def test_xz_dictionary_is_bounded(tmp_path):
    path = tmp_path / "x9.csv.xz"
    path.write_bytes(lzma.compress(TABLE, preset=9 | lzma.PRESET_EXTREME))  # the largest preset is read
    assert read(path).X.shape == (3000, 2)
    filters = [{"id": lzma.FILTER_LZMA2, "dict_size": 1 << 30}]  # asks the reader for 1 GiB
    path.write_bytes(lzma.compress(TABLE, filters=filters))
    with pytest.raises(DamagedFile, match=r"its xz data ask for more than 256 MiB to decompress"):
        read(path)


def test_multi_member_gzip_like_bgzip(tmp_path):
    members = b"".join(gzip.compress(TABLE[i : i + 4096]) for i in range(0, len(TABLE), 4096))
    path = tmp_path / "t.csv.gz"
    path.write_bytes(members)
    assert b"".join(compression.decompressed(path, step=1000)) == TABLE
    assert read(path).X.shape == (3000, 2)


def test_compression_is_told_from_the_first_bytes(tmp_path):
    path = tmp_path / "named.csv.bz2"  # gzip data under a bzip2 name
    path.write_bytes(gzip.compress(TABLE))
    assert compression.detect(path) == "gzip" and read(path).X.shape == (3000, 2)
    path = tmp_path / "plain.kmers.xz"  # text under a compressed name is read as text
    path.write_bytes(kmer_text(3))
    assert compression.detect(path) is None and read_kmers(path).X.shape[1] == 3
    path = tmp_path / "binary.kmers.zst"
    path.write_bytes(b"\x00\x01\x02\x03 not zstd")
    with pytest.raises(DamagedFile, match=r"its name says zstd but it does not start with the zstd header"):
        read_kmers(path)


# ---------------------------------------------------------------------------------------------
# the line bound


def test_line_bound_names_the_line_in_linear_time(tmp_path):
    lines = [b"short"] * 10 + [b"x" * 5000] + [b"y"]
    path = tmp_path / "t.txt.gz"
    path.write_bytes(gzip.compress(b"\n".join(lines)))
    for step in (3, 100, 1 << 20):  # the long line across pieces, or inside one piece
        pieces = compression.decompressed(path, step=step)
        stream = compression._Stream(path, pieces, 1000)
        with pytest.raises(LineTooLong) as err:
            while stream.read(64):
                pass
        assert str(err.value).startswith(f"{str(path)!r} line 11 is longer than 1,000 bytes"), (step, str(err.value))
    with compression.open_binary(path, max_line=5000) as fh:
        assert fh.read() == b"\n".join(lines)
    path.write_bytes(b"a,b\r1,2\r" * 200)  # CR line endings: one line for LF readers
    with pytest.raises(LineTooLong, match=r"line 1 is longer than 1,000 bytes.* uses CR \(old Mac\) line endings"):
        compression.open_binary(path, max_line=1000).read()


def test_long_line_in_the_kmer_reader_is_linear(tmp_path, monkeypatch):
    import genosift.io.kmers as kmers

    monkeypatch.setattr(kmers, "MAX_LINE_BYTES", 10_000)
    path = tmp_path / "long.kmers"
    path.write_bytes(kmer_text(5) + b"A" * 20_000 + b" | s1:1\n")
    with pytest.raises(LineTooLong, match=r"long.kmers' line 6 is longer than 10,000 bytes"):
        read_kmers(path, block_size=7)  # thousands of pieces, never joined until the line ends
    path.write_bytes(kmer_text(5) + b"A" * 5_000 + b" | s1:1\n")
    assert read_kmers(path, block_size=7).feature_names[-1] == "A" * 5_000


# ---------------------------------------------------------------------------------------------
# k-mer text: byte-order mark, NUL bytes, line endings


@pytest.mark.parametrize("compress", [None, gzip.compress])
def test_kmer_byte_order_mark_is_skipped(tmp_path, compress):
    text = b"\xef\xbb\xbfACGT | s1:1\nCCGT | s1:2\n"
    path = tmp_path / "bom.kmers"
    path.write_bytes(compress(text) if compress else text)
    for block in (4, 5, 1 << 24):
        ds = read_kmers(path, block_size=block)
        assert ds.feature_names.tolist() == ["ACGT", "CCGT"], block
        assert ds.X.toarray().tolist() == [[1, 2]]
    other = tmp_path / "other.kmers"
    other.write_bytes(b"ACGT | s2:5\n")
    ds = read_kmers([path, other])  # the same k-mer in both files: one column
    assert ds.feature_names.tolist() == ["ACGT", "CCGT"] and ds.X.toarray().tolist() == [[1, 2], [5, 0]]


@pytest.mark.parametrize("text, line", [
    (b"ACGT | s1:1\nAC\x00GT | s1:2\n", 2),
    (b"ACGT | s1:1\n\nCCGT | s\x001:2\n", 3),
    (b"\x00", 1),
])
def test_kmer_nul_bytes_are_refused_at_their_line(tmp_path, text, line):
    path = tmp_path / "nul.kmers"
    path.write_bytes(text)
    for block in (1, 3, 1 << 24):
        with pytest.raises(ValueError) as err:
            read_kmers(path, block_size=block)
        assert str(err.value).startswith(f"{str(path)!r}, line {line}: the line holds a NUL byte"), str(err.value)


def test_kmer_cr_line_endings_are_named(tmp_path):
    path = tmp_path / "mac.kmers"
    path.write_bytes(b"ACGT | s1:1 s2:4\rCCGT | s2:1\rGGGT |\r")
    with pytest.raises(ValueError, match=r"mac.kmers', line 1: .*The file uses CR \(old Mac\) line endings, "
                       r"so its lines run together: convert them to LF first, e.g. with `tr '\\r' '\\n'"):
        read_kmers(path)
    path.write_bytes(b"ACGT | s1:1 s2:4\r\nCCGT | s2:1\r\nGGGT |\r\n")  # CRLF (Windows) is read
    for block in (1, 2, 5, 1 << 24):
        ds = read_kmers(path, block_size=block)
        assert ds.feature_names.tolist() == ["ACGT", "CCGT", "GGGT"]
        assert ds.X.toarray().tolist() == [[1, 0, 0], [4, 1, 0]]
