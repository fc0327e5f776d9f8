"""The fast table writer writes the very bytes of pandas' ``to_csv(sep=..., index=False)``."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from genosift.core import engine, tabletext

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-300, 5e-324, 1e16, 1e15, 1e-5, 1e-4, 3.0, 0.1,
           1.7976931348623157e308, 123456789012345678.0, 2.0**53 + 2]


def _pandas(frame, sep):
    buf = io.StringIO(newline="")
    frame.to_csv(buf, sep=sep, index=False)
    return buf.getvalue()


def _ours(frame, sep, block_rows=tabletext.BLOCK_ROWS):
    buf = io.StringIO(newline="")
    tabletext.write_delimited(frame, buf, sep=sep, block_rows=block_rows)
    return buf.getvalue()


def _frame(n, seed=0):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**64, size=n, dtype=np.uint64).view(np.float64)
    special = np.resize(np.array(SPECIAL), n)
    text = np.resize(np.array(['plain', 'tab\there', 'comma,here', 'quote"here', 'new\nline', 'cr\rhere', '',
                               ' spaced ', 'ünïcode', None, np.nan, 3, 2.5, True], dtype=object), n)
    return pd.DataFrame({
        "feature": [f"k{i}" for i in range(n)],
        "random_bits": bits,
        "special": special,
        "few": rng.integers(0, 5, n) / 7.0,
        "whole": rng.integers(-10**6, 10**6, n).astype(float),
        "scaled": rng.random(n) * 10.0 ** rng.integers(-320, 300, n),
        "int": rng.integers(-2**62, 2**62, n),
        "uint": rng.integers(0, 2**63, n).astype(np.uint64),
        "small": rng.integers(0, 100, n).astype(np.int8),
        "flag": rng.random(n) < 0.5,
        "f32": rng.random(n).astype(np.float32),
        "text": text,
        "note": np.where(rng.random(n) < 0.5, "", "firth"),
        "all_nan": np.full(n, np.nan),
        # pandas' nullable integers (a ranking's pattern numbers): missing values empty
        "nullable": pd.arrays.IntegerArray(rng.integers(-10**12, 10**12, n), rng.random(n) < 0.3),
        "none_missing": pd.array(rng.integers(0, 5, n), dtype="Int64"),
        "all_missing": pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)),
    })


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sep", ["\t", ","])
@pytest.mark.parametrize("n, block_rows", [(0, 16), (1, 16), (37, 16), (500, 64), (3000, tabletext.BLOCK_ROWS)])
def test_bytes_are_those_of_pandas(sep, n, block_rows, threads):
    """Blocks laid out on one thread or several, written in order."""
    previous = engine.set_threads(threads)
    try:
        frame = _frame(n, seed=n)
        assert all(tabletext._fast_kind(frame[c].dtype) for c in frame)  # no column left to pandas
        assert _ours(frame, sep, block_rows) == _pandas(frame, sep)
    finally:
        engine.set_threads(previous)


@pytest.mark.parametrize("sep", ["\t", ","])
def test_awkward_headers_and_shapes_match_pandas(sep):
    frame = pd.DataFrame({"a\tb": [1.5, np.nan], 'q"uote': ["x", "y,z"], 3: [1, 2], 0.5: [True, False]})
    assert _ours(frame, sep) == _pandas(frame, sep)
    one = pd.DataFrame({"only": ["", "a", None]})
    assert _ours(one, sep) == _pandas(one, sep)
    other = pd.DataFrame({"t": pd.to_datetime(["2020-01-01", None]), "c": pd.Categorical(["a", "b"]),
                          "n": pd.array([1, None], dtype="Int64")})
    assert _ours(other, sep) == _pandas(other, sep)
    sliced = _frame(100).iloc[::3, ::2]
    assert _ours(sliced, sep) == _pandas(sliced, sep)


def test_every_float64_reads_back_exactly():
    frame = _frame(2000, seed=5).drop(columns="text")
    back = pd.read_csv(io.StringIO(_ours(frame, "\t")), sep="\t", float_precision="round_trip")
    for column in ("random_bits", "special", "scaled", "few", "whole"):
        np.testing.assert_array_equal(back[column].to_numpy(), frame[column].to_numpy())


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_a_file_gets_the_bytes_of_pandas(tmp_path, encoding):
    """A file handle (rows written to its binary buffer when it writes UTF-8, as text otherwise),
    with text written before and after the table through the same handle."""
    frame = _frame(3000, seed=11)
    if encoding != "utf-8":
        frame["text"] = frame["text"].map(lambda v: v.replace("ü", "u").replace("ï", "i") if isinstance(v, str) else v)
    ours, theirs = tmp_path / "ours.tsv", tmp_path / "theirs.tsv"
    with open(ours, "w", encoding=encoding, newline="") as fh:
        fh.write("# before\n")
        tabletext.write_delimited(frame, fh, block_rows=700)
        fh.write("# after\n")
    with open(theirs, "w", encoding=encoding, newline="") as fh:
        fh.write("# before\n")
        frame.to_csv(fh, sep="\t", index=False)
        fh.write("# after\n")
    assert ours.read_bytes() == theirs.read_bytes()
