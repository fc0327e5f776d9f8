"""Wide delimited tables are read a row at a time, with the values and messages of pandas' reader.

A table with more than ``WIDE_COLUMNS`` columns is parsed line by line (pandas' parser keeps
objects per column: 2.7 GB and 33 s for 8 rows of a million columns). Each table here is read
both ways (the threshold lowered to force the row-at-a-time reader): the same matrix bit for bit,
the same ids, names and per-sample table, or the same error.
"""
import gzip
import re

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.io import delimited

GOOD = {
    "numbers": "id,a,b,c\ns1,1,2.5,-3e2\ns2,0.1,1e-400,+7\ns3,.5,5.,1E5\n",
    "missing cells": "id,a,b,c\ns1,,NA,nan\ns2,null,N/A,3\ns3,None,#N/A,-nan\n",
    "one-character cells with gaps": "id,a,b,c\ns1,1,,2\ns2,,3,\ns3,0,1,2\n",
    "infinities": "id,a,b\ns1,inf,-Infinity\ns2,1,2\n",
    "negative zero of floats": "id,a,b\ns1,-0.0,1\ns2,2,3\n",
    "spaces around numbers": "id,a,b\ns1, 3,4 \ns2,5,6\n",
    "crlf and blank lines": "id,a,b\r\ns1,1,2\r\n\r\ns2,3,4\r\n\n",
    "ids of NA and leading zeros": "id,a,b\nNA,1,2\n007,3,4\n",
    "kept columns": "label,id,a,grp,b\n0,s1,1,x,2\n1,s2,3,,4\n1,s3,5,y,6\n",
    "negative zero of integers": "id,a,b\ns1,-0,1\ns2,2,3\n",
    "booleans": "id,a,b\ns1,True,1\ns2,False,3\n",
    "quoted cells": 'id,a,b\ns1,"1",2\n"s,2",3,4\n',
    "underscores": "id,a,b\ns1,1,2\ns2,3,4\ns3_x,5,6\n",
}
BAD = {
    "text": "id,a,b\ns1,1,x\ns2,3,4\n",
    "ragged, short": "id,a,b\ns1,1,2\ns2,3\n",
    "ragged, long": "id,a,b\ns1,1,2,9\ns2,3,4\n",
    "empty id": "id,a,b\ns1,1,2\n,3,4\n",
    "repeated id": "id,a,b\ns1,1,2\ns1,3,4\n",
    "integers beyond 2**53": "id,a,b\ns1,9223372036854775807,1\ns2,9223372036854775806,2\n",
    "underscore in a number": "id,a,b\ns1,1_000,2\ns2,3,4\n",
    "an id that is not UTF-8": "id,a,b\ns\xe9,1,2\ns2,3,4\n",
    "a huge exponent": "id,a,b\ns1,1e500,1\ns2,3,4\n",
}
OPTIONS = {"kept columns": {"id_column": "id", "keep": ["label", "grp"]}}
#: What the row reader hands to pandas (the others it reads, or refuses, itself).
HANDED = {"negative zero of integers", "booleans", "quoted cells", "text", "integers beyond 2**53",
          "underscore in a number", "a huge exponent"}


def _read_both(tmp_path, name, text, monkeypatch, compress=False, **options):
    path = tmp_path / ("t.csv.gz" if compress else "t.csv")
    data = text.encode("latin-1")
    path.write_bytes(gzip.compress(data) if compress else data)
    got = []
    for limit in (delimited.WIDE_COLUMNS, 1):
        monkeypatch.setattr(delimited, "WIDE_COLUMNS", limit)
        try:
            got.append(gs.io.read(path, **options))
        except ValueError as exc:
            got.append(re.sub(r"'[^']*t\.csv(\.gz)?'", "FILE", str(exc)))
    return got


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert a.X.dtype == b.X.dtype and a.X.shape == b.X.shape
    assert a.X.tobytes() == b.X.tobytes()
    assert a.sample_ids.tolist() == b.sample_ids.tolist() and a.feature_names.tolist() == b.feature_names.tolist()
    if a.obs is None:
        assert b.obs is None
    else:
        pd.testing.assert_frame_equal(a.obs, b.obs)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", list(GOOD) + list(BAD))
def test_the_row_reader_gives_what_pandas_gives(tmp_path, monkeypatch, name, compress):
    text = GOOD.get(name) or BAD[name]
    pandas_read, row_read = _read_both(tmp_path, name, text, monkeypatch, compress, **OPTIONS.get(name, {}))
    assert isinstance(pandas_read, str) == (name in BAD), pandas_read
    _same(pandas_read, row_read)
    # the row reader itself reads (or refuses) every table but those it hands over: the comparison is real
    path = next(tmp_path.glob("t.csv*"))
    header = text.splitlines()[0].split(",")
    options = OPTIONS.get(name, {})
    id_pos = header.index(options.get("id_column", header[0]))
    keep_pos = [header.index(k) for k in options.get("keep", [])]
    try:
        rows = delimited._wide_table(path, ",", 1, len(header), id_pos, keep_pos)
    except ValueError:
        rows = "refused"
    assert (rows is None) == (name in HANDED), rows


def test_features_in_rows(tmp_path, monkeypatch):
    text = "gene\ts1\ts2\ts3\ng1\t1\t0\t1\ng2\t0\t1\t\n"
    path = tmp_path / "t.tsv"
    path.write_text(text)
    monkeypatch.setattr(delimited, "WIDE_COLUMNS", 1)
    fast = gs.io.read(path, features_in_rows=True)
    monkeypatch.undo()
    _same(gs.io.read(path, features_in_rows=True), fast)


def test_a_million_columns_are_read_a_row_at_a_time(tmp_path):
    """The table that took pandas 33 s and 2.7 GB: its values, without pandas' per-column parse."""
    rng = np.random.RandomState(0)
    X = rng.randint(0, 3, size=(4, 200_000)).astype(np.float64)
    X[1, 7] = np.nan
    path = tmp_path / "wide.csv"
    with open(path, "w") as fh:
        fh.write("id," + ",".join(f"g{j}" for j in range(X.shape[1])) + "\n")
        for i, row in enumerate(X):
            fh.write(f"s{i}," + ",".join("" if np.isnan(v) else str(int(v)) for v in row) + "\n")
    data = gs.io.read(path)
    np.testing.assert_array_equal(data.X, X)
    assert data.feature_names[-1] == "g199999" and data.sample_ids.tolist() == ["s0", "s1", "s2", "s3"]


def test_kept_columns_before_the_id_column_keep_their_values(tmp_path, monkeypatch):
    """The id column after a kept one (the kept column at position 0): each column where it is."""
    path = tmp_path / "t.csv"
    path.write_text(GOOD["kept columns"])
    for limit in (delimited.WIDE_COLUMNS, 1):
        monkeypatch.setattr(delimited, "WIDE_COLUMNS", limit)
        data = gs.io.read(path, id_column="id", keep=["label", "grp"])
        assert data.sample_ids.tolist() == ["s1", "s2", "s3"]
        assert data.obs["label"].tolist() == [0, 1, 1] and data.obs["grp"].tolist()[::2] == ["x", "y"]
        np.testing.assert_array_equal(data.X, [[1, 2], [3, 4], [5, 6]])


def test_a_line_too_long_for_a_table_says_how_to_write_a_wide_one(tmp_path, monkeypatch):
    monkeypatch.setattr(delimited, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "t.csv"
    path.write_text("id," + ",".join(f"g{j}" for j in range(400)) + "\ns1," + ",".join(["1"] * 400) + "\n")
    with pytest.raises(ValueError, match=r"line 1 is longer than 1,000 bytes.* If it is a table of very many columns "
                                         r".*write it with features in rows, one line per feature, and read it with "
                                         r"features_in_rows=True"):
        gs.io.read(path)
