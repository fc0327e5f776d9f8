"""k-mer count text (`KMER | sample:count ...`) and metadata tables: values, edge cases, messages."""
from __future__ import annotations

import bz2
import gzip
import lzma
import re
import warnings
import zlib

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from genosift.io import Dataset, format_of, read
from genosift.io.kmers import read_kmers
from genosift.io.metadata import MatchReport, attach_metadata, read_metadata

from conftest import require_shared

FORM = ("Each line must be 'KMER | SAMPLE:COUNT SAMPLE:COUNT ...' (a k-mer in no sample: 'KMER |'; "
        "columns between the k-mer and the '|' are skipped).")
ENTRY = "Each entry must be SAMPLE:COUNT, e.g. 'sample_1:3'."
WEIRD_IDS = ["s-1", "s.2", "dir/s3", "a:b", "x:y:z", "ü-7", "S_10", "s_9"]


# --------------------------------------------------------------------------- helpers


def write_kmers(path, X, ids, kmers, *, seed=0, compress=None, sep=" | "):
    """A tiny k-mer text writer: one line per column of X, entries in a shuffled order."""
    rng = np.random.default_rng(seed)
    C = sp.csc_matrix(X)
    lines = []
    for j, kmer in enumerate(kmers):
        rows = C.indices[C.indptr[j] : C.indptr[j + 1]]
        vals = C.data[C.indptr[j] : C.indptr[j + 1]]
        order = rng.permutation(rows.size)
        entries = " ".join(f"{ids[rows[i]]}:{int(vals[i])}" for i in order)
        lines.append(f"{kmer}{sep}{entries}".rstrip() if entries else f"{kmer}{sep.rstrip()}")
    data = ("\n".join(lines) + "\n").encode()
    if compress is not None:
        data = compress(data)
    path.write_bytes(data)
    return path


def random_counts(seed, n, p, density=0.2):
    """A random CSR of counts with values above 65535 and one near 2**40, k-mers, odd ids."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, format="csr", random_state=seed, data_rvs=lambda k: rng.geometric(0.3, k))
    X.data[:: max(1, X.nnz // 7)] = 65536 + np.arange(X.data[:: max(1, X.nnz // 7)].size) * 70001
    X.data[0] = 2**40 + 3
    ids = WEIRD_IDS + [f"sample_{i:03d}" for i in range(n - len(WEIRD_IDS))]
    acgt = np.array(list("ACGT"))
    kmers = []
    seen = set()
    while len(kmers) < p:
        k = "".join(acgt[rng.integers(0, 4, rng.integers(11, 32))])
        if k not in seen:
            seen.add(k)
            kmers.append(k)
    return X, ids, kmers


def in_row_order(X, ids):
    """``X`` with its rows sorted by id as strings (the reader's default row order)."""
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return X[order], [ids[i] for i in order]


def assert_same(ds, X, ids, kmers):
    assert isinstance(ds, Dataset)
    assert sp.isspmatrix_csr(ds.X) and ds.X.dtype == np.float64
    assert ds.X.has_canonical_format
    assert ds.sample_ids.tolist() == list(ids)
    assert ds.feature_names.tolist() == list(kmers)
    assert (ds.X != sp.csr_matrix(X, dtype=np.float64)).nnz == 0


def kmer_file(tmp_path, text, name="k.kmers"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- real data


def simple_parse(lines):
    """An independent, slow parse: {(sample, k-mer): count}, k-mers in order."""
    counts, kmers = {}, []
    for line in lines:
        kmer, rest = line.split("|")
        kmer = kmer.strip()
        kmers.append(kmer)
        for token in rest.split():
            sample, count = token.rsplit(":", 1)
            counts[sample, kmer] = int(count)
    return counts, kmers


def test_pyseer_kmers_match_a_direct_parse():
    path = require_shared("pyseer_kmers", "kmers.gz")
    ds = read_kmers(path)
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    counts, kmers = simple_parse(lines)
    assert ds.shape == (1837, 200)
    assert ds.X.nnz == 181128 == len(counts)
    assert ds.feature_names.tolist() == kmers
    samples = sorted({s for s, _ in counts})
    assert ds.sample_ids.tolist() == samples
    rows = {s: i for i, s in enumerate(samples)}
    cols = {k: j for j, k in enumerate(kmers)}
    expected = sp.csr_matrix(
        (list(counts.values()), ([rows[s] for s, _ in counts], [cols[k] for _, k in counts])), shape=ds.shape
    )
    assert (ds.X != expected).nnz == 0
    # a handful of exact counts, by hand: the first line's first entries
    first = lines[0].split(" | ")[1].split()[:3]
    for token in first:
        sample, count = token.rsplit(":", 1)
        assert ds.X[rows[sample], 0] == int(count) == 1
    assert ds.X[rows["sample_616"], 0] == 1 and ds.X[rows["sample_617"], 0] == 0


def test_pyseer_kmers_through_the_registry_and_with_samples():
    path = require_shared("pyseer_kmers", "kmers.gz")
    assert format_of(path) == "kmers"
    full = read(path)
    wanted = require_shared("pyseer_kmers", "samples.txt").read_text().split()
    left_out = r"1787 sample ids of the k-mer files .* are not in 'samples' and were left out"
    with pytest.warns(UserWarning, match=left_out):
        ds = read(path, samples=wanted[::-1])
    assert ds.sample_ids.tolist() == wanted[::-1]
    rows = [full.sample_ids.tolist().index(s) for s in wanted[::-1]]
    assert (ds.X != full.X[rows]).nnz == 0


def test_pyseer_metadata_join():
    kmers = read_kmers(require_shared("pyseer_kmers", "kmers.gz"))
    meta = read_metadata(require_shared("pyseer_kmers", "example.pheno"), id_column="samples")
    assert meta.shape == (1837, 2) and meta.index.name == "samples"
    assert meta.columns.tolist() == ["continuous", "binary"]
    assert meta.loc["sample_3"].tolist() == [3, 1]
    ds, report = attach_metadata(kmers, meta, how="strict")
    assert report == MatchReport(1837, [], [])
    assert ds.obs.index.tolist() == kmers.sample_ids.tolist()
    subset = read_metadata(require_shared("pyseer_kmers", "subset.pheno"), id_column="samples")
    with pytest.warns(UserWarning, match=r"50 of the data's 1837 sample\(s\) \(3%\)"):  # a subset on purpose
        small, report = attach_metadata(kmers, subset)
    assert small.shape == (50, 200) and report.n_matched == 50 and len(report.only_in_data) == 1787
    assert report.only_in_metadata == []
    assert str(report).startswith(
        "50 sample(s) matched by id; 1787 in the data only, left out: 'sample_100', 'sample_1000', "
    )
    with pytest.raises(ValueError, match=r"\(how='strict'\): 1787 id\(s\) only in the data \('sample_100', "):
        attach_metadata(kmers, subset, how="strict")


# --------------------------------------------------------------------------- round trips


def test_round_trip_plain_gzip_and_block_sizes(tmp_path):
    X, ids, kmers = random_counts(1, 40, 300)
    expected, row_ids = in_row_order(X, ids)
    plain = write_kmers(tmp_path / "a.kmers", X, ids, kmers)
    packed = write_kmers(tmp_path / "a.kmers.gz", X, ids, kmers, compress=gzip.compress)
    for path in (plain, packed):
        assert_same(read_kmers(path), expected, row_ids, kmers)
    for block in (1, 2, 3, 7, 64, 1000):  # lines straddle the blocks; a line longer than a block
        assert_same(read_kmers(plain, block_size=block), expected, row_ids, kmers)
        assert_same(read_kmers(packed, block_size=block), expected, row_ids, kmers)


def test_other_compressions_and_magic_bytes_not_names(tmp_path):
    X, ids, kmers = random_counts(2, 12, 40)
    expected, row_ids = in_row_order(X, ids)
    for name, compress in [
        ("gzip_named_plain.kmers", gzip.compress),
        ("plain_named_gzip.kmers.gz", None),
        ("b.kmers.bz2", bz2.compress),
        ("c.kmers.xz", lzma.compress),
        ("members.kmers.gz", lambda d: gzip.compress(d[:100]) + gzip.compress(d[100:]) + b"\0" * 8),
    ]:
        path = write_kmers(tmp_path / name, X, ids, kmers, compress=compress)
        assert_same(read_kmers(path), expected, row_ids, kmers)
    zstandard = pytest.importorskip("zstandard")
    path = write_kmers(tmp_path / "d.kmers.zst", X, ids, kmers, compress=zstandard.ZstdCompressor().compress)
    assert_same(read_kmers(path), expected, row_ids, kmers)


def test_tabs_crlf_blank_lines_and_no_spaces_around_the_bar(tmp_path):
    path = kmer_file(tmp_path, "\nAAA|s1:2\ts2:3\r\n\r\n  CCC\t|\t s2:1 \r\nGGG |\n")
    ds = read_kmers(path)
    assert ds.sample_ids.tolist() == ["s1", "s2"]
    assert ds.feature_names.tolist() == ["AAA", "CCC", "GGG"]
    assert ds.X.toarray().tolist() == [[2, 0, 0], [3, 1, 0]]


def test_ids_with_dashes_dots_slashes_and_colons_split_at_the_last_colon(tmp_path):
    path = kmer_file(tmp_path, "ACGT | a-1:1 b.2:2 dir/c3:3 x:y:4 ::5\n")
    ds = read_kmers(path)
    assert ds.sample_ids.tolist() == [":", "a-1", "b.2", "dir/c3", "x:y"]
    assert ds.X.toarray().ravel().tolist() == [5, 1, 2, 3, 4]


def test_kmer_in_no_sample_is_an_all_zero_column(tmp_path):
    path = kmer_file(tmp_path, "AAA |\nCCC | s1:1\nGGG | \nTTT |\t\n")
    ds = read_kmers(path)
    assert ds.feature_names.tolist() == ["AAA", "CCC", "GGG", "TTT"]
    assert ds.X.toarray().tolist() == [[0, 1, 0, 0]]


def test_large_counts_are_exact(tmp_path):
    path = kmer_file(tmp_path, f"AAA | s1:65536 s2:4294967296 s3:{2**53}\nCCC | s1:0 s2:70000\n")
    ds = read_kmers(path)
    assert ds.X.toarray().tolist() == [[65536, 0], [4294967296, 70000], [2**53, 0]]
    assert ds.X.nnz == 4  # the count 0 is read, not stored
    with pytest.raises(ValueError, match=re.escape("holds exactly (up to 16777216). Pass dtype='float64'")):
        read_kmers(kmer_file(tmp_path, "AAA | s1:16777217\n", "f32.kmers"), dtype=np.float32)
    small = read_kmers(kmer_file(tmp_path, "AAA | s1:16777216 s2:3\n", "ok.kmers"), dtype=np.int32)
    assert small.X.dtype == np.int32 and small.X.toarray().ravel().tolist() == [16777216, 3]


def test_samples_fix_the_rows_and_report_absent_ids(tmp_path):
    path = kmer_file(tmp_path, "AAA | s1:1 s2:2 s3:3\nCCC | s3:4\n")
    with pytest.warns(UserWarning) as caught:
        ds = read_kmers(path, samples=["s3", "ghost", "s1"])
    messages = [str(w.message) for w in caught]
    assert messages == [
        f"1 of the 3 ids in 'samples' are in none of the k-mer files ('{path}'); their rows are all "
        "zero: 'ghost'. Check that the ids are spelt as in the k-mer files (e.g. 'sample_1' against "
        "'sample_1.fasta').",
        f"1 sample ids of the k-mer files ('{path}') are not in 'samples' and were left out: 's2'.",
    ]
    assert ds.sample_ids.tolist() == ["s3", "ghost", "s1"]
    assert ds.X.toarray().tolist() == [[3, 4], [0, 0], [1, 0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = read_kmers(path, samples=["s2", "s3", "s1"])
    assert exact.X.toarray().tolist() == [[2, 0], [3, 4], [1, 0]]
    with pytest.raises(ValueError, match=re.escape("lists 1 id(s) more than once: 's1'. Each sample must be")):
        read_kmers(path, samples=["s1", "s2", "s1"])
    with pytest.raises(ValueError, match="must be a list of sample ids"):
        read_kmers(path, samples="s1")


# --------------------------------------------------------------------------- several files


def test_two_files_join_by_kmer_string_not_line_position(tmp_path):
    a = kmer_file(tmp_path, "AAA | s1:1 s2:2\nCCC | s1:3\n", "a.kmers")
    b = kmer_file(tmp_path, "GGG | s3:5\nCCC | s2:7 s3:1\nTTT |\nAAA | s1:10\nACG | s1:1\n", "b.kmers")
    ds = read_kmers([a, b])
    assert ds.feature_names.tolist() == ["AAA", "CCC", "GGG", "TTT", "ACG"]
    assert ds.sample_ids.tolist() == ["s1", "s2", "s3"]
    assert ds.X.has_canonical_format
    assert ds.X.toarray().tolist() == [[11, 3, 0, 0, 1], [2, 7, 0, 0, 0], [0, 1, 5, 0, 0]]
    swapped = read_kmers([b, a])
    order = [swapped.feature_names.tolist().index(k) for k in ds.feature_names]
    assert (swapped.X[:, order] != ds.X).nnz == 0
    with pytest.raises(ValueError) as err:
        read_kmers([a, b], overlap="error")
    assert str(err.value) == (
        f"Sample 's1' has counts for the k-mer 'AAA' in more than one of the files '{a}', '{b}'. "
        "With overlap='error' each (k-mer, sample) pair must come from one file; pass "
        "overlap='sum' to add the counts of files that are parts of one count."
    )
    c = kmer_file(tmp_path, "AAA | s9:2\nCCC | s8:1\n", "c.kmers")
    parts = read_kmers([a, c], overlap="error")  # new samples, same k-mers: no overlap
    assert parts.X.toarray().tolist() == [[1, 3], [2, 0], [0, 1], [2, 0]]


def test_random_files_split_by_samples_and_kmers_sum_back(tmp_path):
    X, ids, kmers = random_counts(3, 30, 200, density=0.3)
    X = sp.csr_matrix(X)
    first = X.copy()
    first.data = np.floor(first.data / 2)
    second = X - first
    # file a: every k-mer, first half of the counts; file b: a shuffled subset of the k-mers, the rest
    write_kmers(tmp_path / "a.kmers", first, ids, kmers)
    rng = np.random.default_rng(3)
    cols = rng.permutation(200)
    extra = sp.csr_matrix(np.ones((30, 5)))
    b_matrix = sp.hstack([second[:, cols], extra]).tocsr()
    b_kmers = [kmers[j] for j in cols] + ["N" * i for i in range(1, 6)]
    write_kmers(tmp_path / "b.kmers.gz", b_matrix, ids, b_kmers, compress=gzip.compress)
    ds = read_kmers([tmp_path / "a.kmers", tmp_path / "b.kmers.gz"], block_size=100)
    expected, row_ids = in_row_order(sp.hstack([X, extra]).tocsr(), ids)
    assert_same(ds, expected, row_ids, kmers + b_kmers[200:])


def assert_csc_layout(csc, csr):
    """``csc`` (read with layout='csc') is ``csr`` (the default layout) by columns, canonical."""
    assert sp.isspmatrix_csc(csc.X) and csc.X.dtype == csr.X.dtype
    assert csc.X.has_canonical_format
    for j in range(csc.X.shape[1]):  # sorted rows, each once, in every column
        assert np.all(np.diff(csc.X.indices[csc.X.indptr[j] : csc.X.indptr[j + 1]]) > 0)
    assert csc.sample_ids.tolist() == csr.sample_ids.tolist()
    assert csc.feature_names.tolist() == csr.feature_names.tolist()
    np.testing.assert_array_equal(csc.X.toarray(), csr.X.toarray())


@pytest.mark.parametrize("dtype", [np.float64, np.uint32])
def test_the_column_layout_holds_the_same_counts(tmp_path, dtype):
    """layout='csc': each line becomes a column (samples listed in any order, sorted into rows),
    for one file, several files summed, blocks cut mid-line, rows chosen by ``samples``."""
    X, ids, kmers = random_counts(5, 30, 150, density=0.3)
    X.data = np.minimum(X.data, 2**31)  # uint32 holds every count
    one = write_kmers(tmp_path / "one.kmers", X, ids, kmers, seed=4)  # entries shuffled on each line
    first = X.copy()
    first.data = np.floor(first.data / 2)
    two = write_kmers(tmp_path / "two.kmers.gz", (X - first)[:, ::-1], ids, kmers[::-1], compress=gzip.compress)
    wanted = ["sample_007", "absent_1", "s.2", "x:y:z", "sample_000"]
    for paths, options in [(one, {}), ([one, two], {"block_size": 100}), (one, {"samples": wanted}),
                           ([two, one], {"samples": wanted[::-1]})]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the ids absent from one side, as in either layout
            csr = read_kmers(paths, dtype=dtype, **options)
            csc = read_kmers(paths, dtype=dtype, layout="csc", **options)
        assert_csc_layout(csc, csr)
    assert read_kmers(one, dtype=dtype).X.toarray().tolist() == in_row_order(X, ids)[0].toarray().tolist()


def test_the_column_layout_refuses_what_the_row_layout_refuses(tmp_path):
    a = kmer_file(tmp_path, "AAA | s1:1 s2:2\nCCC | s1:3\n", "a.kmers")
    b = kmer_file(tmp_path, "GGG | s3:5\nAAA | s1:10\n", "b.kmers")
    messages = []
    for layout in ("csr", "csc"):
        with pytest.raises(ValueError) as err:
            read_kmers([a, b], overlap="error", layout=layout)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "Sample 's1' has counts for the k-mer 'AAA'" in messages[0]
    with pytest.raises(ValueError, match=re.escape("The 'layout' parameter of read_kmers must be 'csr' or 'csc'. "
                                                   "Got 'coo' instead.")):
        read_kmers(a, layout="coo")
    big = kmer_file(tmp_path, f"AAA | s1:{2**40}\n", "big.kmers")
    for layout in ("csr", "csc"):
        with pytest.raises(ValueError, match=r"The largest count, 1099511627776, is more than dtype uint32 holds"):
            read_kmers(big, dtype=np.uint32, layout=layout)  # the same message in either layout
        assert read_kmers(big, layout=layout).X.toarray().tolist() == [[2.0**40]]


# --------------------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("AAA | s1:1\nACGT s1:1\n", 2, f"no '|' after the k-mer 'ACGT' in 'ACGT s1:1'. {FORM}"),
        ("AAA | s1:1\nCCC\n", 2, f"no '|' after the k-mer 'CCC' in 'CCC'. {FORM}"),
        ("| s1:1\n", 1, f"the line '| s1:1' has no k-mer before its '|'. {FORM}"),
        ("AAA | s1\n", 1, f"the entry 's1' has no ':' before a count. {ENTRY}"),
        ("AAA | s1:1 :3\n", 1, f"the entry ':3' has no sample id before its ':'. {ENTRY}"),
        ("AAA | s1:2\n\nCCC | s1:3.5\n", 3, "the count '3.5' of sample 's1' is not a non-negative integer."),
        ("AAA | s1:-1\n", 1, "the count '-1' of sample 's1' is not a non-negative integer. Counts must be whole "
         "numbers written with the digits 0-9, e.g. 'sample_1:3' (the count follows the last ':' of the entry)."),
        ("AAA | s1:\n", 1, "the count '' of sample 's1' is not a non-negative integer."),
        ("AAA | s1:1e3\n", 1, "the count '1e3' of sample 's1' is not a non-negative integer."),
        ("AAA | s1:x\n", 1, "the count 'x' of sample 's1' is not a non-negative integer."),
        (f"AAA | s1:{2**53 + 1}\n", 1, f"the count '{2**53 + 1}' of sample 's1' is above 2**53"),
        ("AAA | s1:1 s2:2 s1:3\n", 1, "sample 's1' is listed twice for the same k-mer in 'AAA | s1:1 s2:2 s1:3'. "
         "List each sample once per line, with its total count."),
    ],
)
def test_malformed_lines_name_the_file_line_and_fix(tmp_path, text, line, message):
    path = kmer_file(tmp_path, text)
    for block in (1 << 24, 3):
        with pytest.raises(ValueError) as err:
            read_kmers(path, block_size=block)
        assert str(err.value).startswith(f"'{path}', line {line}: {message}")


def test_duplicate_kmer_names_both_lines(tmp_path):
    path = kmer_file(tmp_path, "AAA | s1:1\nCCC | s1:2\n\nAAA | s2:1\n")
    with pytest.raises(ValueError) as err:
        read_kmers(path, block_size=5)
    assert str(err.value) == (
        f"'{path}', line 4: the k-mer 'AAA' is also on line 1. Each k-mer must have one line per "
        "file. If the file joins several count runs, pass the parts as separate files, "
        "read_kmers([part1, part2]), to add their counts."
    )


def test_corrupt_truncated_and_trailing_gzip(tmp_path):
    X, ids, kmers = random_counts(4, 20, 400)
    good = gzip.compress(write_kmers(tmp_path / "t.kmers", X, ids, kmers).read_bytes())
    cut = good[: len(good) // 2]
    readable = zlib.decompressobj(31).decompress(cut).count(b"\n")
    path = tmp_path / "cut.kmers.gz"
    path.write_bytes(cut)
    with pytest.raises(ValueError) as err:
        read_kmers(path)
    assert str(err.value) == (
        f"Cannot read '{path}': it is truncated: its gzip data end before the end-of-stream marker "
        f"(found after line {readable} of its text). The file is damaged or incomplete (an "
        "interrupted copy or download): re-create it or fetch it again (`gzip -t FILE` checks it)."
    )
    bad = bytearray(good)
    bad[len(bad) // 3 : len(bad) // 3 + 40] = bytes(40)
    path = tmp_path / "bad.kmers.gz"
    path.write_bytes(bytes(bad))
    with pytest.raises(ValueError) as err:
        read_kmers(path)
    assert re.fullmatch(
        rf"Cannot read '{re.escape(str(path))}': its gzip data are corrupt \(Error -\d+ [^)]+\) "
        r"\(found after line \d+ of its text\)\. The file is damaged or incomplete .*",
        str(err.value),
    )
    path = tmp_path / "crc.kmers.gz"
    path.write_bytes(good[:-8] + bytes([good[-8] ^ 1]) + good[-7:])  # wrong CRC-32 only
    crc = r"its gzip data are corrupt \(Error -6 Incorrect checksum found\) \(found after"
    with pytest.raises(ValueError, match=crc):
        read_kmers(path)
    path = tmp_path / "trail.kmers.gz"
    path.write_bytes(good + b"garbage")
    trailing = r"it has trailing bytes after its gzip data that are not gzip \(found after line 400 of its text\)\."
    with pytest.raises(ValueError, match=trailing):
        read_kmers(path)


def test_bad_arguments_and_files(tmp_path):
    path = kmer_file(tmp_path, "AAA | s1:1\n")
    with pytest.raises(FileNotFoundError, match="No such file"):
        read_kmers(tmp_path / "missing.kmers")
    with pytest.raises(IsADirectoryError):
        read_kmers(tmp_path)
    with pytest.raises(ValueError, match=re.escape(f"The file '{path}' is listed twice in 'paths'")):
        read_kmers([path, tmp_path / "." / "k.kmers"])
    with pytest.raises(ValueError, match=re.escape("holds no k-mer lines")):
        read_kmers(kmer_file(tmp_path, "\n\n", "empty.kmers"))
    expected = "The 'overlap' parameter of read_kmers must be 'sum' or 'error'. Got 'max' instead."
    with pytest.raises(ValueError, match=re.escape(expected)):
        read_kmers(path, overlap="max")
    with pytest.raises(ValueError, match=re.escape("The 'dtype' parameter of read_kmers must be")):
        read_kmers(path, dtype=bool)
    with pytest.raises(ValueError, match=re.escape("The 'block_size' parameter of read_kmers must be a positive")):
        read_kmers(path, block_size=0)
    binary = tmp_path / "bin.kmers"
    binary.write_bytes(b"\xff\xfe | s1:1\n")
    expected = f"The k-mer b'\\xff\\xfe' in '{binary}', line 1 is not UTF-8 text."
    with pytest.raises(ValueError, match=re.escape(expected)):
        read_kmers(binary)


# --------------------------------------------------------------------------- metadata


def test_read_metadata_sniffs_compression_and_separator(tmp_path):
    text = "id;group;target\n007;a;1.5\n s-2 ;b;2\nx/3;a;-1\n"
    for name, blob in [
        ("m.txt", text.encode()),
        ("m.csv.gz", gzip.compress(text.replace(";", ",").encode())),
        ("m.data", gzip.compress(text.replace(";", "\t").encode())),
    ]:
        (tmp_path / name).write_bytes(blob)
        meta = read_metadata(tmp_path / name, id_column="id")
        assert meta.index.tolist() == ["007", "s-2", "x/3"], name
        assert meta.index.name == "id"
        assert meta["group"].tolist() == ["a", "b", "a"]
        assert meta["target"].tolist() == [1.5, 2.0, -1.0]


def test_read_metadata_errors(tmp_path):
    path = tmp_path / "m.tsv"
    path.write_text("sample\tphenotype\nb\t1\na\t0\nb\t1\nc\t0\na\t1\n")
    with pytest.raises(ValueError) as err:
        read_metadata(path, id_column="sample")
    assert str(err.value) == (
        f"'{path}' lists 2 sample id(s) of column 'sample' more than once: 'a', 'b'. Each sample "
        "must have one row; remove or merge the repeats."
    )
    with pytest.raises(ValueError) as err:
        read_metadata(path, id_column="id")
    assert str(err.value) == (
        f"The id column 'id' is not in '{path}'; its columns are ['sample', 'phenotype'] "
        "(read with the separator '\\t'). Pass id_column= one of them."
    )
    ragged = tmp_path / "r.csv"
    ragged.write_text("id,y\na,1\nb,2,3\n")
    with pytest.raises(ValueError) as err:
        read_metadata(ragged, id_column="id")
    assert str(err.value) == (
        f"'{ragged}' is not a regular table (separator ','): Expected 2 fields in line 3, saw 3. Every row "
        "must have as many fields as the header: remove the stray separators, quote the fields "
        "that hold one, or pass the right sep=."
    )
    blank = tmp_path / "b.csv"
    blank.write_text("id,y\na,1\n,2\n")
    expected = "has 1 row(s) with no value in the id column 'id', on line(s) [3]."
    with pytest.raises(ValueError, match=re.escape(expected)):
        read_metadata(blank, id_column="id")


def test_attach_metadata_report_order_and_obs(tmp_path):
    X = sp.csr_matrix(np.arange(12.0).reshape(4, 3))
    ds = Dataset(X, np.array(["d", "a", "c", "b"], dtype=object), np.array(["k0", "k1", "k2"], dtype=object))
    meta = pd.DataFrame({"y": [1, 0, 1, 0], "g": list("pqrs")}, index=pd.Index(["a", "b", "z", "d"], name="id"))
    matched, report = attach_metadata(ds, meta)
    assert matched.sample_ids.tolist() == ["d", "a", "b"]  # the data's row order
    assert matched.X.toarray().tolist() == [[0, 1, 2], [3, 4, 5], [9, 10, 11]]
    assert matched.obs.index.tolist() == ["d", "a", "b"] and matched.obs["y"].tolist() == [0, 1, 0]
    assert report == MatchReport(3, ["c"], ["z"])
    assert str(report) == (
        "3 sample(s) matched by id; 1 in the data only, left out: 'c'; 1 in the metadata only, left out: 'z'."
    )
    with pytest.raises(ValueError) as err:
        attach_metadata(ds, meta, how="strict")
    assert str(err.value) == (
        "The data and the metadata do not hold the same samples (how='strict'): 1 id(s) only in "
        "the data ('c'), 1 only in the metadata ('z'). Fix the ids, or pass how='inner' to keep "
        "the 3 sample(s) found in both."
    )
    again, _ = attach_metadata(matched, pd.DataFrame({"w": [5, 6, 7]}, index=["b", "a", "d"]))
    assert again.obs.columns.tolist() == ["y", "g", "w"] and again.obs["w"].tolist() == [7, 6, 5]
    with pytest.raises(ValueError, match=re.escape("already have per-sample columns 'g', 'y' that the metadata")):
        attach_metadata(matched, meta)
    with pytest.raises(ValueError, match=re.escape("No sample id of the data is in the metadata")):
        attach_metadata(ds, pd.DataFrame({"y": [1]}, index=["nobody"]))
    dup = pd.DataFrame({"y": [1, 2]}, index=["a", "a"])
    with pytest.raises(ValueError, match=re.escape("The metadata list(s) 1 sample id(s) more than once: 'a'.")):
        attach_metadata(ds, dup)
    with pytest.raises(ValueError, match=re.escape("The 'how' parameter of attach_metadata must be 'inner' or")):
        attach_metadata(ds, meta, how="outer")


@pytest.mark.parametrize("dtype", [None, np.float64, np.uint32])
def test_counts_added_over_files_are_exact_or_refused(tmp_path, dtype):
    """Two files whose counts of one (k-mer, sample) add past 2**53 are refused, not rounded to
    2**53; a sum of 2**53 exactly is kept exactly (float64) or refused naming the type (uint32)."""
    half = 2**52
    (tmp_path / "a.txt").write_text(f"ACGT | s1:{half + 1} s2:1\nCCGT | s1:1\n")
    (tmp_path / "b.txt").write_text(f"ACGT | s1:{half} s2:2\n")
    (tmp_path / "c.txt").write_text(f"ACGT | s1:{half - 1} s2:2\n")
    options = {} if dtype is None else {"dtype": dtype}
    with pytest.raises(ValueError, match=r"The largest count, 9007199254740993, is above 2\*\*53"):
        read_kmers([tmp_path / "a.txt", tmp_path / "b.txt"], overlap="sum", **options)
    if dtype is np.uint32:
        with pytest.raises(ValueError, match=r"The largest count, 9007199254740992, is more than dtype uint32"):
            read_kmers([tmp_path / "a.txt", tmp_path / "c.txt"], overlap="sum", **options)
        return
    data = read_kmers([tmp_path / "a.txt", tmp_path / "c.txt"], overlap="sum", **options)
    X = data.X.toarray()
    assert X[list(data.sample_ids).index("s1"), list(data.feature_names).index("ACGT")] == 2**53
    assert X[list(data.sample_ids).index("s2"), list(data.feature_names).index("ACGT")] == 3
