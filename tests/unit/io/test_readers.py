"""Readers for delimited tables, Parquet, NumPy, Matrix Market and AnnData files.

Every format is written here with the library that owns it (pandas, numpy, scipy, pyarrow,
anndata), read back through ``genosift.io.read`` and compared exactly: values, ids, names, obs.
"""
from __future__ import annotations

import bz2
import gzip
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp

from genosift.io import READERS, format_of, read

from conftest import require_shared


def q(path):
    """A path as the messages quote it."""
    return repr(str(path))


def check(data, X, ids, names, obs=None):
    if sp.issparse(X):
        assert isinstance(data.X, sp.csr_matrix)
        assert data.X.dtype == X.dtype
        np.testing.assert_array_equal(data.X.toarray(), X.toarray())
    else:
        assert isinstance(data.X, np.ndarray)
        np.testing.assert_array_equal(data.X, X)
    assert data.sample_ids.dtype == object and data.feature_names.dtype == object
    assert data.sample_ids.tolist() == list(ids)
    assert data.feature_names.tolist() == list(names)
    if obs is None:
        assert data.obs is None
    else:
        pd.testing.assert_frame_equal(data.obs, obs, check_dtype=False, check_index_type=False)


@pytest.fixture
def frame():
    """5 samples x 4 features: ids that look like numbers or missing values, awkward names."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((5, 4)) * 10.0 ** rng.integers(-300, 300, (5, 4))
    X[1, 2] = np.nan
    X[3, 0] = 70000.0  # counts above 65535 survive
    ids = ["007", "NA", "s-1.x/2", "null", "S5"]
    names = ["3005053", "gene A", "\u03b2-actin", "x,y"]
    return pd.DataFrame(X, index=pd.Index(ids, name="sample"), columns=names)


# ---------------------------------------------------------------------------------------------
# delimited tables


@pytest.mark.parametrize(
    "suffix, sep",
    [(".csv", ","), (".tsv", "\t"), (".txt", "\t"), (".tab", "\t"), (".csv.gz", ","),
     (".csv.bz2", ","), (".csv.xz", ","), (".tsv.zst", "\t")],
)
def test_delimited_round_trip(tmp_path, frame, suffix, sep):
    if suffix.endswith(".zst"):
        pytest.importorskip("zstandard", reason="zstandard is needed for .zst files (genosift[io])")
    path = tmp_path / f"data{suffix}"
    frame.to_csv(path, sep=sep)
    check(read(path), frame.to_numpy(), frame.index, frame.columns)


def test_float_values_round_trip_exactly(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 60)) * 10.0 ** rng.integers(-300, 300, (40, 60))
    frame = pd.DataFrame(X, index=[f"s{i}" for i in range(40)], columns=[f"g{j}" for j in range(60)])
    frame.to_csv(tmp_path / "x.csv")
    data = read(tmp_path / "x.csv")
    assert data.X.dtype == np.float64
    np.testing.assert_array_equal(data.X, X)


def test_features_in_rows(tmp_path, frame):
    frame.T.to_csv(tmp_path / "t.tsv", sep="\t", index_label="gene")
    data = read(tmp_path / "t.tsv", features_in_rows=True)
    check(data, frame.to_numpy(), frame.index, frame.columns)
    assert data.X.flags.c_contiguous


def test_keep_columns_go_to_obs(tmp_path):
    text = (
        "id,target,g1,group,g2\n"
        "a,case,1,10,0.5\n"
        "b,,2,10,1.5\n"
        "c,control,3,20,2.5\n"
    )
    (tmp_path / "t.csv").write_text(text)
    expected_obs = pd.DataFrame(
        {"target": ["case", np.nan, "control"], "group": [10, 10, 20]},
        index=pd.Index(["a", "b", "c"], name="id"),
    )
    X = np.array([[1, 0.5], [2, 1.5], [3, 2.5]])
    data = read(tmp_path / "t.csv", keep=["target", "group"])
    check(data, X, "abc", ["g1", "g2"], expected_obs)
    assert data.obs["group"].dtype.kind == "i"
    # by 0-based position, and a single name instead of a list
    check(read(tmp_path / "t.csv", keep=[1, 3]), X, "abc", ["g1", "g2"], expected_obs)
    check(read(tmp_path / "t.csv", keep="target", id_column="id").with_obs(None),
          np.array([[1, 10, 0.5], [2, 10, 1.5], [3, 20, 2.5]]), "abc", ["g1", "group", "g2"])


def test_id_column_by_name_or_position(tmp_path):
    (tmp_path / "t.csv").write_text("g1,name,g2\n1,a,2\n3,b,4\n")
    for id_column in ("name", 1):
        check(read(tmp_path / "t.csv", id_column=id_column), [[1, 2], [3, 4]], "ab", ["g1", "g2"])


def test_default_id_column_is_always_the_first(tmp_path):
    (tmp_path / "t.csv").write_text("n,a,b\n1,2,3\n4,5,6\n")
    check(read(tmp_path / "t.csv"), [[2, 3], [5, 6]], ["1", "4"], ["a", "b"])


def test_missing_values_booleans_and_infinities(tmp_path):
    (tmp_path / "t.csv").write_text("id,a,b,c\ns1,True,1e3,\ns2,False,NA,-inf\n")
    check(read(tmp_path / "t.csv"), [[1, 1000, np.nan], [0, np.nan, -np.inf]], ["s1", "s2"], "abc")


def test_ids_that_look_missing_are_kept_and_empty_ids_refused(tmp_path):
    (tmp_path / "t.csv").write_text("id,a\nNA,1\nnull,2\n")
    check(read(tmp_path / "t.csv"), [[1], [2]], ["NA", "null"], ["a"])
    path = tmp_path / "e.csv"
    path.write_text("id,a\nNA,1\n\n,2\n")
    with pytest.raises(ValueError) as err:
        read(path)
    assert str(err.value) == (
        f"{q(path)} has an empty sample id (column 'id') at line 4. Every row needs a sample id."
    )


def test_byte_order_mark_and_blank_lines(tmp_path):
    (tmp_path / "t.csv").write_bytes(b"\xef\xbb\xbfid,a\n\ns1,1\n\n\ns2,2\n\n")
    check(read(tmp_path / "t.csv"), [[1], [2]], ["s1", "s2"], ["a"])
    (tmp_path / "crlf.csv").write_bytes(b"\xef\xbb\xbfid,a\r\ns1,1\r\n\r\ns2,x\r\n")
    with pytest.raises(ValueError, match=r"crlf.csv' line 4, column 'a': 'x' is not a number"):
        read(tmp_path / "crlf.csv")


def test_non_numeric_cell_names_line_column_and_value(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,a,b\ns1,1,2\n\ns2,3,x\n")
    with pytest.raises(ValueError) as err:
        read(path)
    assert str(err.value) == (
        f"{q(path)} line 4, column 'b': 'x' is not a number. Every column other than the id column "
        "and the kept columns must hold numbers (empty cells and NA are read as missing); text found in "
        "'b'. Pass keep=['b'] to keep it as a per-sample column, or fix the values."
    )


def test_text_columns_are_listed_for_keep(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("acc\tgenus\tphenotype\tg1\nA1\tPseudomonas\tResistant\t1\n")
    with pytest.raises(ValueError, match=r"line 2, column 'genus': 'Pseudomonas' is not a number") as err:
        read(path)
    assert "Pass keep=['genus', 'phenotype'] to keep them as per-sample columns" in str(err.value)


def test_non_numeric_cell_with_features_in_rows(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("gene,s1,s2\ng1,1,2\ng2,4,oops\n")
    with pytest.raises(ValueError) as err:
        read(path, features_in_rows=True)
    assert str(err.value) == (
        f"{q(path)} line 3, sample 's2': 'oops' is not a number. Every column other than the id "
        "column must hold numbers (empty cells and NA are read as missing); text found in 's2'. "
        "Fix the values."
    )


def test_ragged_rows(tmp_path):
    long_row = tmp_path / "long.csv"
    long_row.write_text("id,a,b\ns1,1,2\ns2,1,2\ns3,3,4,5\n")
    with pytest.raises(ValueError) as err:
        read(long_row)
    assert str(err.value) == (
        f"{q(long_row)} line 4 has 4 fields but the header (line 1) has 3, splitting on ','. Every "
        "row needs one value per column: fix that row, or pass sep= if the separator is wrong. If "
        "every row has one field more than the header, the header lacks a name for the id column "
        "(R's write.table writes such files): add one."
    )
    short_row = tmp_path / "short.tsv"
    short_row.write_text("id\ta\tb\ns1\t1\t2\ns2\t3\n")
    with pytest.raises(ValueError, match=r"line 3 has 2 fields but the header \(line 1\) has 3, splitting on '\\t'"):
        read(short_row)
    r_style = tmp_path / "r.txt"
    r_style.write_text("a\tb\ns1\t1\t2\ns2\t3\t4\n")
    with pytest.raises(ValueError, match=r"line 2 has 3 fields .* the header lacks a name for the id column"):
        read(r_style)


def test_empty_last_cell_is_missing_not_ragged(tmp_path):
    (tmp_path / "t.csv").write_text('id,a,b\ns1,1,\ns2,3,""\ns3,5,6\n')
    check(read(tmp_path / "t.csv"), [[1, np.nan], [3, np.nan], [5, 6]], ["s1", "s2", "s3"], "ab")


def test_duplicated_ids_and_names(tmp_path):
    ids = tmp_path / "ids.csv"
    ids.write_text("id,a\ns1,1\ns2,2\ns1,3\ns2,4\ns3,5\n")
    with pytest.raises(ValueError) as err:
        read(ids)
    assert str(err.value) == (
        f"{q(ids)} has duplicated sample ids: 's1' (2 times), 's2' (2 times). Each must appear once; "
        "remove or rename the duplicates."
    )
    names = tmp_path / "names.csv"
    names.write_text("id,a,b,a\ns1,1,2,3\n")
    with pytest.raises(ValueError, match=r"has duplicated column names: 'a' \(2 times\)"):
        read(names)
    samples = tmp_path / "samples.csv"
    samples.write_text("gene,s1,s1\ng1,1,2\n")
    with pytest.raises(ValueError, match=r"has duplicated sample ids \(in the header\): 's1' \(2 times\)"):
        read(samples, features_in_rows=True)
    genes = tmp_path / "genes.csv"
    genes.write_text("gene,s1,s2\ng1,1,2\ng1,3,4\n")
    with pytest.raises(ValueError, match=r"has duplicated feature names: 'g1' \(2 times\)"):
        read(genes, features_in_rows=True)


def test_empty_tables(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError) as err:
        read(empty)
    assert str(err.value) == f"{q(empty)} is empty. A table needs a header line and at least one data row."
    blank_gz = tmp_path / "blank.csv.gz"
    blank_gz.write_bytes(gzip.compress(b"\n\n"))
    with pytest.raises(ValueError, match=r"is empty"):
        read(blank_gz)
    header_only = tmp_path / "header.csv"
    header_only.write_text("id,a,b\n")
    with pytest.raises(ValueError) as err:
        read(header_only)
    assert str(err.value) == f"{q(header_only)} has a header (line 1) but no data rows."


def test_wrong_separator_and_options(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("id a b\ns1 1 2\n")
    with pytest.raises(ValueError) as err:
        read(path)
    assert str(err.value) == (
        f"{q(path)} has a single column when split on '\\t' (header at line 1). A table needs an id "
        "column and at least one feature column; pass sep= if the file uses another separator."
    )
    check(read(path, sep=" "), [[1, 2]], ["s1"], "ab")
    with pytest.raises(ValueError, match=r"The 'sep' parameter must be a single character"):
        read(path, sep="  ")
    with pytest.raises(ValueError) as err:
        read(path, sep=" ", keep=["c"])
    assert str(err.value) == (
        f"{q(path)} has no column named 'c' (the keep= option); the header (line 1) names 'id', "
        "'a', 'b'. Check the spelling, or give a 0-based position."
    )
    with pytest.raises(ValueError,
                       match=r"The id_column= option must be a column name or a 0-based column position in \[0, 2\]"):
        read(path, sep=" ", id_column=3)
    with pytest.raises(ValueError, match=r"with features_in_rows=True every column"):
        read(path, sep=" ", keep=["a"], features_in_rows=True)
    with pytest.raises(ValueError, match=r"no feature columns"):
        read(path, sep=" ", keep=["a", "b"])


def test_unnamed_feature_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(",a,\ns1,1,2\n")  # the id column may be unnamed, a feature may not
    with pytest.raises(ValueError) as err:
        read(path)
    assert str(err.value) == (
        f"{q(path)} column 3 has no name in the header (line 1). Name every column; only the id "
        "column may be unnamed."
    )


def test_damaged_compressed_files(tmp_path, frame):
    good = tmp_path / "good.csv.gz"
    frame.to_csv(good)
    truncated = tmp_path / "cut.csv.gz"
    truncated.write_bytes(good.read_bytes()[:-20])
    with pytest.raises(ValueError) as err:
        read(truncated)
    assert str(err.value) == (
        f"Cannot read {q(truncated)} as a delimited table: it is truncated: its gzip data end before "
        "the end-of-stream marker. The file is damaged or incomplete (an interrupted copy or "
        "download): re-create it or fetch it again (`gzip -t FILE` checks it)."
    )
    plain_named_gzip = tmp_path / "plain.csv.gz"  # the compression is told from the first bytes
    plain_named_gzip.write_text("id,a\ns1,1\n")
    check(read(plain_named_gzip), [[1]], ["s1"], ["a"])
    not_gzip = tmp_path / "binary.csv.gz"
    not_gzip.write_bytes(b"\x00\x01\x02id,a\n")
    with pytest.raises(ValueError, match=r"Cannot read .*binary.csv.gz' as a delimited table: its name says gzip "
                       r"but it does not start with the gzip header\. .*`gzip -t FILE` checks it"):
        read(not_gzip)
    bad_bz2 = tmp_path / "bad.csv.bz2"
    bad_bz2.write_bytes(bz2.compress(b"id,a\ns1,1\n" * 100)[:-8])
    with pytest.raises(ValueError, match=r"Cannot read .*bad.csv.bz2' as a delimited table: it is truncated"):
        read(bad_bz2)


def test_truncated_zstandard_file(tmp_path):
    zstandard = pytest.importorskip("zstandard", reason="zstandard is needed for .zst files (genosift[io])")
    whole = zstandard.ZstdCompressor().compress(b"id,a\ns1,1\ns2,2\n")
    for cut in (1, 3, len(whole) // 2):
        path = tmp_path / f"cut{cut}.csv.zst"
        path.write_bytes(whole[:-cut])
        with pytest.raises(ValueError, match=r"its zstd data end before the end-of-stream marker"):
            read(path)
    two_frames = tmp_path / "frames.csv.zst"
    two_frames.write_bytes(whole + zstandard.ZstdCompressor().compress(b"s3,3\n"))
    check(read(two_frames), [[1], [2], [3]], ["s1", "s2", "s3"], ["a"])


def test_missing_zstandard_is_an_actionable_import_error(tmp_path, monkeypatch):
    path = tmp_path / "t.csv.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd whatever")  # the zstd magic bytes
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(ImportError, match=r"needs the 'zstandard' package.*pip install 'genosift\[io\]'"):
        read(path)


def test_not_utf8(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("id,a\ns\u00e9,1\n".encode("latin-1"))
    with pytest.raises(ValueError) as err:
        read(path)
    assert str(err.value) == (
        f"{q(path)} is not UTF-8 text (it holds the byte b'\\xe9'). Re-save it as UTF-8, for example "
        "with `iconv -f latin1 -t utf-8`."
    )


def test_format_by_suffix_and_override(tmp_path):
    assert {"csv", "tsv", "parquet", "npy", "npz", "mtx", "h5ad"} <= set(READERS)
    assert format_of("a.CSV.GZ") == "csv"
    assert format_of("a.tsv.zst") == "tsv"
    assert format_of("matrix.mtx.gz") == "mtx"
    assert format_of("X.sparse.npz") == "npz"
    path = tmp_path / "data.dat"
    path.write_text("id a\ns1 1\n")
    with pytest.raises(ValueError, match=r"Cannot tell the format of .*data.dat' from its name or its first bytes"):
        read(path)
    path.write_text("id,a\ns1,1\n")
    check(read(path), [[1]], ["s1"], ["a"])  # the name says nothing: the header's commas do
    check(read(path, format="csv"), [[1]], ["s1"], ["a"])
    tab = tmp_path / "data.csv"
    tab.write_text("id\ta\ns1\t1\n")
    check(read(tab, format="tsv"), [[1]], ["s1"], ["a"])


def test_real_table_with_targets_in_it():
    """The CAMDA 2024 meropenem AMR table: ids, 4 metadata columns, 875 gene/SNP counts."""
    path = require_shared("camda_pseudomonas", "original", "ResistanceMeropenemStrict.tsv.gz")
    data = read(path, keep=["genus", "species", "phenotype", "mic"])
    expected = np.loadtxt(path, delimiter="\t", skiprows=1, usecols=range(5, 880))
    np.testing.assert_array_equal(data.X, expected)
    with gzip.open(path, "rt") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        first = fh.readline().split("\t")
    assert data.feature_names.tolist() == header[5:]  # numeric-looking names stay text
    assert data.sample_ids[0] == first[0] == "GCA_002947415"
    assert data.obs.index.name == "accession"
    assert data.obs["phenotype"].value_counts(dropna=False).to_dict() == {
        "Susceptible": 1967, "Resistant": 1167, np.nan: 757,
    }
    assert data.obs["genus"].value_counts().to_dict() == {
        "Klebsiella": 2638, "Pseudomonas": 652, "Acinetobacter": 269, "Escherichia": 264, "Enterobacter": 68,
    }


@pytest.mark.slow
def test_real_wide_table_matches_the_stored_matrix():
    """The 652 x 90846 bz2 pangenome table: its labelled rows are exactly camda_pseudomonas/X."""
    path = require_shared("camda_pseudomonas", "original", "PangenomeCountPseudomonas.tsv.bz2")
    stored = sp.load_npz(require_shared("camda_pseudomonas", "X.sparse.npz"))
    names = require_shared("camda_pseudomonas", "features.txt").read_text().split("\n")[:-1]
    labels = require_shared("camda_pseudomonas", "y.txt").read_text().split("\n")[:-1]
    data = read(path, keep=["genus", "species", "antibiotic", "phenotype", "measurement_value"])
    assert data.shape == (652, 90840)
    labelled = data.obs["phenotype"].notna().to_numpy()
    np.testing.assert_array_equal(data.X[labelled], stored.toarray())
    assert data.feature_names.tolist() == names
    assert data.obs["phenotype"][labelled].tolist() == labels


# ---------------------------------------------------------------------------------------------
# Parquet


def test_parquet_round_trip(tmp_path, frame):
    pytest.importorskip("pyarrow", reason="pyarrow is needed for Parquet files (genosift[io])")
    frame.to_parquet(tmp_path / "a.parquet")  # the index is stored: it gives the ids
    check(read(tmp_path / "a.parquet"), frame.to_numpy(), frame.index, frame.columns)
    frame.reset_index().to_parquet(tmp_path / "b.pq", index=False)  # ids in the first column
    check(read(tmp_path / "b.pq"), frame.to_numpy(), frame.index, frame.columns)


def test_parquet_keep_and_ids_of_any_type(tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow is needed for Parquet files (genosift[io])")
    table = pd.DataFrame({
        "g1": [1, 2, 3], "id": [10, 20, 30], "y": ["a", "b", None], "g2": [0.5, None, 2.5],
        "flag": [True, False, True],
    })
    table.to_parquet(tmp_path / "t.parquet", index=False)
    obs = pd.DataFrame({"y": ["a", "b", None]}, index=pd.Index(["10", "20", "30"], name="id"))
    data = read(tmp_path / "t.parquet", id_column="id", keep=["y"])
    check(data, [[1, 0.5, 1], [2, np.nan, 0], [3, 2.5, 1]], ["10", "20", "30"], ["g1", "g2", "flag"], obs)


def test_parquet_errors(tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow is needed for Parquet files (genosift[io])")
    path = tmp_path / "t.parquet"
    pd.DataFrame({"id": ["a", "b"], "g1": [1, 2], "g2": ["3", "x"]}).to_parquet(path, index=False)
    with pytest.raises(ValueError) as err:
        read(path)
    assert str(err.value) == (
        f"{q(path)} row 2, column 'g2': 'x' is not a number. Every column other than the id column "
        "and the kept columns must hold numbers (empty cells and NA are read as missing); text found "
        "in 'g2'. Pass keep=['g2'] to keep it as a per-sample column, or fix the values."
    )
    numbers_as_text = tmp_path / "text.parquet"
    pd.DataFrame({"id": ["a", "b"], "g1": ["1.5", "2"]}).to_parquet(numbers_as_text, index=False)
    check(read(numbers_as_text), [[1.5], [2]], "ab", ["g1"])
    missing = tmp_path / "missing.parquet"
    pd.DataFrame({"id": ["a", None], "g1": [1, 2]}).to_parquet(missing, index=False)
    with pytest.raises(ValueError, match=r"has missing sample ids \(column 'id'\) at row 2"):
        read(missing)
    dups = tmp_path / "dups.parquet"
    pd.DataFrame({"id": ["a", "a"], "g1": [1, 2]}).to_parquet(dups, index=False)
    with pytest.raises(ValueError, match=r"has duplicated sample ids: 'a' \(2 times\)"):
        read(dups)
    fake = tmp_path / "fake.parquet"
    fake.write_text("id,a\ns1,1\n")
    with pytest.raises(ValueError, match=r"Cannot read .*fake.parquet' as a Parquet file: .*damaged"):
        read(fake)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(ValueError, match=r"Cannot read .*cut.parquet' as a Parquet file"):
        read(cut)


def test_missing_pyarrow_is_an_actionable_import_error(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"Reading Parquet files needs the 'pyarrow' package"):
        read(path)


# ---------------------------------------------------------------------------------------------
# NumPy


def test_npy_round_trip_keeps_dtype_and_default_names(tmp_path):
    X = np.arange(-6, 6, dtype=np.int16).reshape(3, 4)
    np.save(tmp_path / "x.npy", X)
    data = read(tmp_path / "x.npy")
    check(data, X, ["s0", "s1", "s2"], ["x0", "x1", "x2", "x3"])
    assert data.X.dtype == np.int16


def test_npy_names_from_sidecars_or_options(tmp_path):
    X = np.eye(3)
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "x.samples.txt").write_text("a\nb\nc\n")
    (tmp_path / "x.features.txt").write_text("f1\r\nf 2\r\nf3")
    check(read(tmp_path / "x.npy"), X, "abc", ["f1", "f 2", "f3"])
    check(read(tmp_path / "x.npy", samples=["p", "q", "r"], features=tmp_path / "x.samples.txt"),
          X, "pqr", "abc")
    (tmp_path / "x.samples.txt").write_text("a\nb\n")
    with pytest.raises(ValueError) as err:
        read(tmp_path / "x.npy")
    assert str(err.value) == (
        f"The sample ids file {q(tmp_path / 'x.samples.txt')} gives 2 names but "
        f"{q(tmp_path / 'x.npy')} has 3 sample ids. Give exactly one name per sample id."
    )
    with pytest.raises(ValueError, match=r"has duplicated feature names: 'f' \(3 times\)"):
        read(tmp_path / "x.npy", samples=list("abc"), features=["f", "f", "f"])


def test_npy_errors(tmp_path):
    np.save(tmp_path / "v.npy", np.arange(3.0))
    with pytest.raises(ValueError, match=r"holds a 1-D array of shape \(3,\); a data matrix must be 2-D"):
        read(tmp_path / "v.npy")
    np.save(tmp_path / "o.npy", np.array([[1, "a"]], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError) as err:
        read(tmp_path / "o.npy")
    assert str(err.value) == (
        f"{q(tmp_path / 'o.npy')} holds arrays of Python objects; they are not loaded, because that "
        "would run pickled code. Save numbers (a.astype(float)) and names as text "
        "(np.array(names, dtype=str))."
    )
    np.savez(tmp_path / "names.npz", X=np.ones((1, 1)), sample_ids=np.array(["a"], dtype=object))
    with pytest.raises(ValueError, match=r"names.npz' holds arrays of Python objects"):
        read(tmp_path / "names.npz")
    np.save(tmp_path / "s.npy", np.array([["1", "2"]]))
    with pytest.raises(ValueError, match=r"holds values of type <U1, which are not real numbers"):
        read(tmp_path / "s.npy")
    np.save(tmp_path / "c.npy", np.ones((4, 4)))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "c.npy").read_bytes()[:-8])
    with pytest.raises(ValueError, match=r"Cannot read .*cut.npy' as a NumPy .npy file"):
        read(tmp_path / "cut.npy")
    np.savez(tmp_path / "z.npz", X=np.ones((2, 2)))
    (tmp_path / "z.npy").write_bytes((tmp_path / "z.npz").read_bytes())
    with pytest.raises(ValueError, match=r"is an .npz archive, not an .npy array; pass format='npz'"):
        read(tmp_path / "z.npy")


def test_npz_dense_with_names(tmp_path):
    X = np.arange(6.0).reshape(2, 3)
    np.savez_compressed(tmp_path / "d.npz", X=X, sample_ids=np.array(["a", "b"]),
                        feature_names=np.array(["f", "g", "h"]))
    check(read(tmp_path / "d.npz"), X, "ab", "fgh")
    np.savez(tmp_path / "only.npz", X.astype(np.uint16))  # saved under 'arr_0'
    data = read(tmp_path / "only.npz")
    check(data, X, ["s0", "s1"], ["x0", "x1", "x2"])
    assert data.X.dtype == np.uint16


@pytest.mark.parametrize("layout", ["csr", "csc", "coo"])
def test_npz_sparse_is_read_as_csr(tmp_path, layout):
    X = sp.random(30, 20, density=0.2, format=layout, random_state=3, dtype=np.float64)
    X.data[:] = np.round(X.data * 100_000)  # counts above 65535
    sp.save_npz(tmp_path / "X.sparse.npz", X)
    data = read(tmp_path / "X.sparse.npz")
    check(data, X.tocsr(), [f"s{i}" for i in range(30)], [f"x{j}" for j in range(20)])
    assert data.X.has_canonical_format


def test_npz_sparse_integer_counts_keep_their_type(tmp_path):
    X = sp.csr_matrix(np.array([[0, 70000], [3, 0]], dtype=np.int64))
    sp.save_npz(tmp_path / "c.npz", X)
    (tmp_path / "c.samples.txt").write_text("p\nq\n")
    data = read(tmp_path / "c.npz")
    check(data, X, "pq", ["x0", "x1"])
    assert data.X.dtype == np.int64


def test_npz_errors(tmp_path):
    np.savez(tmp_path / "two.npz", a=np.ones((2, 2)), b=np.ones(2))
    with pytest.raises(ValueError) as err:
        read(tmp_path / "two.npz")
    assert str(err.value) == (
        f"{q(tmp_path / 'two.npz')} holds the arrays ['a', 'b'] but no matrix: save the matrix under "
        "the key 'X' (numpy.savez(path, X=X)) or with scipy.sparse.save_npz."
    )
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not really a zip archive")
    with pytest.raises(ValueError, match=r"Cannot read .*junk.npz' as a NumPy .npz archive"):
        read(tmp_path / "junk.npz")
    sp.save_npz(tmp_path / "s.npz", sp.eye(50, format="csr"))
    (tmp_path / "cut.npz").write_bytes((tmp_path / "s.npz").read_bytes()[:-40])
    with pytest.raises(ValueError, match=r"Cannot read .*cut.npz' as a NumPy .npz archive"):
        read(tmp_path / "cut.npz")
    with open(tmp_path / "arr.npz", "wb") as fh:
        np.save(fh, np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"is a single .npy array, not an .npz archive; pass format='npy'"):
        read(tmp_path / "arr.npz")


# ---------------------------------------------------------------------------------------------
# Matrix Market


def test_mtx_round_trip(tmp_path):
    X = sp.csr_matrix(np.array([[0, 70000, 0], [3, 0, 0], [0, 0, 0], [1, 2, 5]], dtype=np.int64))
    scipy.io.mmwrite(tmp_path / "m.mtx", X)
    data = read(tmp_path / "m.mtx")
    check(data, X, ["s0", "s1", "s2", "s3"], ["x0", "x1", "x2"])
    assert data.X.dtype == np.int64
    R = sp.random(6, 4, density=0.5, format="csr", random_state=2)
    scipy.io.mmwrite(tmp_path / "r.mtx", R, precision=17)
    with gzip.open(tmp_path / "r.mtx.gz", "wb") as fh:
        fh.write((tmp_path / "r.mtx").read_bytes())
    (tmp_path / "r.samples.txt").write_text("abcdef".replace("", "\n").strip() + "\n")
    check(read(tmp_path / "r.mtx.gz"), R, "abcdef", ["x0", "x1", "x2", "x3"])


def test_mtx_10x_layout(tmp_path):
    genes_by_cells = sp.csr_matrix(np.array([[1, 0, 2], [0, 0, 4]], dtype=np.int64))
    scipy.io.mmwrite(tmp_path / "matrix.mtx", genes_by_cells)
    with gzip.open(tmp_path / "barcodes.tsv.gz", "wt") as fh:
        fh.write("AAAC-1\nAAAG-1\nAAAT-1\n")
    with gzip.open(tmp_path / "features.tsv.gz", "wt") as fh:
        fh.write("ENSG01\tMIR1302-2HG\tGene Expression\nENSG02\tFAM138A\tGene Expression\n")
    data = read(tmp_path / "matrix.mtx", features_in_rows=True,
                samples=tmp_path / "barcodes.tsv.gz", features=tmp_path / "features.tsv.gz")
    check(data, genes_by_cells.T.tocsr(), ["AAAC-1", "AAAG-1", "AAAT-1"], ["ENSG01", "ENSG02"])


def test_mtx_dense_array_layout(tmp_path):
    X = np.array([[1.5, 2.0], [0.0, -3.0], [4.0, 5.0]])
    scipy.io.mmwrite(tmp_path / "d.mtx", X)
    check(read(tmp_path / "d.mtx"), X, ["s0", "s1", "s2"], ["x0", "x1"])


def test_mtx_errors(tmp_path):
    path = tmp_path / "short.mtx"
    path.write_text("%%MatrixMarket matrix coordinate integer general\n3 3 4\n1 1 1\n2 2 2\n")
    with pytest.raises(ValueError, match=r"Cannot read .*short.mtx' as a Matrix Market file: .*Truncated file"):
        read(path)
    junk = tmp_path / "junk.mtx"
    junk.write_text("hello\n1 2\n")
    with pytest.raises(ValueError, match=r"Cannot read .*junk.mtx' as a Matrix Market file: .*banner"):
        read(junk)
    scipy.io.mmwrite(tmp_path / "ok.mtx", sp.eye(2, format="csr"))
    with pytest.raises(FileNotFoundError, match=r"The sample ids file .*nope.txt' \(the 'samples' option"):
        read(tmp_path / "ok.mtx", samples=tmp_path / "nope.txt")


def test_mtx_cut_inside_a_number_does_not_crash(tmp_path):
    """scipy's parser crashes the interpreter on a file that ends inside an exponent ('5.1E')."""
    path = tmp_path / "cut.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2.5\n2 2 5.1E")
    code = f"from genosift.io import read; print(read({str(path)!r}).X.toarray().tolist())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[2.5, 0.0], [0.0, 5.1]]"


# ---------------------------------------------------------------------------------------------
# AnnData


def _write_h5ad(adata, path):
    settings = getattr(sys.modules["anndata"], "settings", None)
    if hasattr(settings, "allow_write_nullable_strings"):  # pandas 3 string columns
        with settings.override(allow_write_nullable_strings=True):
            adata.write_h5ad(path)
    else:
        adata.write_h5ad(path)


# anndata 0.12 asks pandas 3 about an option pandas deprecates; nothing to do with genosift
h5ad_warnings = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


@h5ad_warnings
@pytest.mark.parametrize("storage", ["dense", "csr", "csc"])
def test_h5ad_round_trip(tmp_path, storage):
    anndata = pytest.importorskip("anndata", reason="anndata is needed for .h5ad files (genosift[io])")
    rng = np.random.default_rng(1)
    dense = rng.poisson(2.0, (6, 5)).astype(np.float32)
    X = {"dense": dense, "csr": sp.csr_matrix(dense), "csc": sp.csc_matrix(dense)}[storage]
    obs = pd.DataFrame({"y": pd.Categorical(list("aabbab")), "age": np.arange(6.0)},
                       index=pd.Index([f"cell{i}" for i in range(6)], name="barcode"))
    var = pd.DataFrame(index=[f"gene{j}" for j in range(5)])
    _write_h5ad(anndata.AnnData(X=X, obs=obs, var=var, layers={"counts": dense * 2}), tmp_path / "a.h5ad")
    data = read(tmp_path / "a.h5ad")
    check(data, sp.csr_matrix(dense) if storage != "dense" else dense, obs.index, var.index, obs)
    assert data.X.dtype == np.float32
    assert isinstance(data.obs["y"].dtype, pd.CategoricalDtype)
    check(read(tmp_path / "a.h5ad", layer="counts"), dense * 2, obs.index, var.index, obs)
    with pytest.raises(ValueError, match=r"The 'layer' parameter must be one of \['counts'\]"):
        read(tmp_path / "a.h5ad", layer="raw")


@h5ad_warnings
def test_h5ad_without_obs_columns_and_damaged(tmp_path):
    anndata = pytest.importorskip("anndata", reason="anndata is needed for .h5ad files (genosift[io])")
    X = np.eye(3)
    adata = anndata.AnnData(X=X, obs=pd.DataFrame(index=list("abc")), var=pd.DataFrame(index=list("xyz")))
    _write_h5ad(adata, tmp_path / "a.h5ad")
    check(read(tmp_path / "a.h5ad"), X, "abc", "xyz")
    (tmp_path / "cut.h5ad").write_bytes((tmp_path / "a.h5ad").read_bytes()[:2000])
    with pytest.raises(ValueError, match=r"Cannot read .*cut.h5ad' as an AnnData .h5ad file"):
        read(tmp_path / "cut.h5ad")
    (tmp_path / "text.h5ad").write_text("not hdf5")
    with pytest.raises(ValueError, match=r"Cannot read .*text.h5ad' as an AnnData .h5ad file"):
        read(tmp_path / "text.h5ad")


# ---------------------------------------------------------------------------------------------
# the shared real data sets


def test_real_dense_npz():
    path = require_shared("golub", "X.npz")
    data = read(path)
    with np.load(path) as z:
        expected = z["X"]
    assert data.shape == (38, 3051)
    np.testing.assert_array_equal(data.X, expected)
    assert data.sample_ids[[0, -1]].tolist() == ["s0", "s37"]
    assert data.feature_names[[0, -1]].tolist() == ["x0", "x3050"]


def test_real_sparse_npz():
    path = require_shared("camda_pseudomonas", "X.sparse.npz")
    data = read(path)
    expected = sp.load_npz(path).tocsr()
    assert isinstance(data.X, sp.csr_matrix) and data.shape == (536, 90840)
    assert data.X.nnz == expected.nnz
    for part in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(data.X, part), getattr(expected, part))
    names = require_shared("camda_pseudomonas", "features.txt")
    named = read(path, features=names)
    assert named.feature_names[0] == "GCA_000793885_CDS_2713"


@pytest.mark.parametrize("sep", [",", "\t"])
@pytest.mark.parametrize("compress", [None, "gzip", "bz2"])
@pytest.mark.parametrize("where", ["header", "data", "both", "blank lines first"])
def test_quoted_line_breaks_never_drop_rows(tmp_path, sep, compress, where):
    """A cell with a line break (Excel's Alt+Enter) is one cell: every row is kept, in order."""
    head = ["id", '"gene\nA"' if where in ("header", "both") else "geneA", "g2", "label"]
    rows = [[f"s{i}", str(i), str(10 * i), '"yes\nreally"' if where in ("data", "both") and i == 1 else str(i % 2)]
            for i in range(5)]
    text = ("\n\n" if where == "blank lines first" else "") + "\n".join(sep.join(r) for r in [head, *rows]) + "\n"
    name = "t.csv" if sep == "," else "t.tsv"
    path = tmp_path / (name + {None: "", "gzip": ".gz", "bz2": ".bz2"}[compress])
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress == "gzip" else bz2.compress(data) if compress else data)
    ds = read(path, keep=["label"])
    assert ds.sample_ids.tolist() == [f"s{i}" for i in range(5)]
    assert ds.X[:, 0].tolist() == [0, 1, 2, 3, 4] and ds.X[:, 1].tolist() == [0, 10, 20, 30, 40]
    assert ds.feature_names.tolist() == ["gene\nA" if where in ("header", "both") else "geneA", "g2"]
    assert ds.obs["label"].astype(str).tolist()[1] == ("yes\nreally" if where in ("data", "both") else "1")
