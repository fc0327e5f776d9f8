"""k-mer files to a store out of core: the streamed store equals the in-memory reading."""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.io import convert_kmers, open_store, read_kmers
from genosift.io.store import SUFFIX

from conftest import require_shared


def write_kmers(path, n_samples=23, n_kmers=300, density=0.2, seed=0, empty_every=17, big=False, prefix=""):
    """A random k-mer file; returns the dense matrix it holds (samples sorted as strings)."""
    rng = np.random.default_rng(seed)
    ids = [f"s-{i}.x/{i % 3}" for i in range(n_samples)]
    X = np.where(rng.random((n_samples, n_kmers)) < density, rng.geometric(0.3, (n_samples, n_kmers)), 0).astype(float)
    if big:
        X[rng.integers(0, n_samples, 5), rng.integers(0, n_kmers, 5)] = 2.0**40 + 3
    lines = []
    for j in range(n_kmers):
        kmer = prefix + "".join(rng.choice(list("ACGT"), 21))
        if empty_every and j % empty_every == 0:
            X[:, j] = 0
        rows = rng.permutation(np.flatnonzero(X[:, j]))  # sample order within a line is arbitrary
        lines.append(f"{kmer} | " + " ".join(f"{ids[i]}:{int(X[i, j])}" for i in rows))
    text = "\n".join(lines) + "\n"
    if str(path).endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return X, ids


def same_store(path, ref, obs=None):
    store = open_store(path)
    back = store.to_dataset()
    assert back.sample_ids.tolist() == list(ref.sample_ids)
    assert back.feature_names.tolist() == list(ref.feature_names)
    assert back.X.has_canonical_format
    np.testing.assert_array_equal(back.X.indptr, ref.X.indptr)
    np.testing.assert_array_equal(back.X.indices, ref.X.indices)
    np.testing.assert_array_equal(back.X.data, ref.X.data)
    blocks = [b for _, _, b in store.feature_blocks(width=7)]
    by_columns = sp.hstack(blocks).tocsr()
    assert (by_columns != ref.X).nnz == 0
    if obs is not None:
        pd.testing.assert_frame_equal(back.obs, obs, check_index_type=False)
    return store


@pytest.mark.parametrize("chunk_bytes", [1, 5000, 10**9])
@pytest.mark.parametrize("suffix", ["kmers", "kmers.gz"])
def test_streamed_equals_in_memory(tmp_path, monkeypatch, chunk_bytes, suffix):
    from genosift.io import kmer_store

    calls = []
    streamed = kmer_store._convert_spilled
    monkeypatch.setattr(kmer_store, "_convert_spilled", lambda *a: calls.append(1) or streamed(*a))
    src = tmp_path / f"a.{suffix}"
    write_kmers(src, big=True)
    ref = read_kmers(src)
    path, report = convert_kmers(src, tmp_path / f"a{SUFFIX}", chunk_bytes=chunk_bytes, block_size=512)
    assert report is None and len(calls) == (chunk_bytes < 10**6)
    same_store(path, ref)
    assert not list(tmp_path.glob(".genosift-kmers*"))  # the spill is gone


def test_streamed_with_metadata_and_samples(tmp_path):
    src = tmp_path / "a.kmers"
    X, ids = write_kmers(src, seed=1)
    meta = pd.DataFrame({"y": np.arange(8) % 2, "group": list("aabbccdd")},
                        index=pd.Index([*ids[:6], "absent-1", ids[10]], name="id"))
    from genosift.io import attach_metadata

    ref, ref_report = attach_metadata(read_kmers(src), meta)
    path, report = convert_kmers(src, tmp_path / f"m{SUFFIX}", metadata=meta, chunk_bytes=1, block_size=256,
                                 absent="drop")
    assert str(report) == str(ref_report) and report.only_in_metadata == ["absent-1"]
    same_store(path, ref, obs=ref.obs)
    # with absent="zeros" a sample on no k-mer line is a sample without those k-mers, streamed or not
    ref, ref_report = attach_metadata(read_kmers(src), meta, absent="zeros")
    path, report = convert_kmers(src, tmp_path / f"z{SUFFIX}", metadata=meta, chunk_bytes=1, block_size=256,
                                 absent="zeros")
    assert str(report) == str(ref_report) and report.zero_rows == ["absent-1"]
    same_store(path, ref, obs=ref.obs)
    # by default it is an error naming it (a genome always carries k-mers: a misspelt id), streamed or not
    for call in (lambda: convert_kmers(src, tmp_path / f"e{SUFFIX}", metadata=meta, chunk_bytes=1, block_size=256),
                 lambda: convert_kmers(src, tmp_path / f"e{SUFFIX}", metadata=meta)):
        with pytest.raises(ValueError, match=r"1 sample\(s\) of the metadata are among none of the data's samples: "
                                             r"'absent-1'.* pass absent='zeros' .* or absent='drop'"):
            call()
        assert not (tmp_path / f"e{SUFFIX}").exists()

    wanted = [ids[3], "nobody", ids[0]]
    with pytest.warns(UserWarning) as caught:
        ref = read_kmers(src, samples=wanted)
    with pytest.warns(UserWarning) as streamed:
        path, _ = convert_kmers(src, tmp_path / f"s{SUFFIX}", samples=wanted, chunk_bytes=1)
    # genosift's own warnings (a library's deprecation notices, as h5py's under numpy 1.x, aside)
    ours = lambda record: [str(w.message) for w in record if issubclass(w.category, UserWarning)]  # noqa: E731
    assert ours(streamed) == ours(caught)
    store = same_store(path, ref)
    assert store.to_dataset().X[1].nnz == 0  # "nobody" has an all-zero row


def test_streamed_files_with_different_kmers_combine(tmp_path):
    a, b = tmp_path / "a.kmers", tmp_path / "b.kmers.gz"
    write_kmers(a, seed=2, prefix="A")
    write_kmers(b, seed=3, n_samples=30, prefix="C")  # more samples, more lines
    ref = read_kmers([a, b])
    path, _ = convert_kmers([a, b], tmp_path / f"ab{SUFFIX}", chunk_bytes=2000, block_size=300)
    same_store(path, ref)


def test_files_sharing_kmers_beyond_the_budget_are_refused(tmp_path):
    a = tmp_path / "a.kmers"
    write_kmers(a, seed=4)
    b = tmp_path / "b.kmers"
    b.write_text(a.read_text().splitlines()[5] + "\n")
    out = tmp_path / f"x{SUFFIX}"
    with pytest.raises(ValueError, match="share k-mers.*larger chunk_bytes.*one by one"):
        convert_kmers([a, b], out, chunk_bytes=1)
    assert not out.exists() and not list(tmp_path.glob(".x*")) and not list(tmp_path.glob(".genosift*"))
    path, _ = convert_kmers([a, b], out)  # in memory, the shared counts are added
    same_store(path, read_kmers([a, b]))


def test_streamed_dtype_is_checked_before_writing(tmp_path):
    src = tmp_path / "a.kmers"
    write_kmers(src, big=True)
    out = tmp_path / f"a{SUFFIX}"
    with pytest.raises(ValueError, match=r"largest count, 1099511627779, is more than dtype uint32"):
        convert_kmers(src, out, dtype=np.uint32, chunk_bytes=1)
    assert not out.exists()
    small = tmp_path / "s.kmers"
    write_kmers(small)
    path, _ = convert_kmers(small, out, dtype=np.uint32, chunk_bytes=1)
    store = same_store(path, read_kmers(small, dtype=np.uint32))
    assert store.dtype == np.uint32
    with pytest.raises(ValueError, match="'dtype' parameter of convert_kmers"):
        convert_kmers(small, out, dtype=bool, overwrite=True)


def test_a_damaged_file_leaves_nothing(tmp_path):
    src = tmp_path / "a.kmers.gz"
    write_kmers(src, n_kmers=3000)
    data = src.read_bytes()
    src.write_bytes(data[: len(data) // 2])
    out = tmp_path / f"a{SUFFIX}"
    with pytest.raises(ValueError, match="damaged or incomplete"):
        convert_kmers(src, out, chunk_bytes=1, block_size=256)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.kmers.gz"]
    bad = tmp_path / "b.kmers"
    bad.write_text("ACGT | s1:1\nCCGT | s1:x\n")
    with pytest.raises(ValueError, match=r"line 2: the count 'x' of sample 's1'"):
        convert_kmers(bad, out, chunk_bytes=1)
    assert not out.exists()


def test_real_kmer_file_streamed(tmp_path):
    kmers = require_shared("pyseer_kmers", "kmers.gz")
    ref = read_kmers(kmers)
    path, _ = convert_kmers(kmers, tmp_path / f"pyseer{SUFFIX}", chunk_bytes=1 << 16)
    same_store(path, ref)


def test_planted_markers_are_found_from_a_streamed_store(tmp_path):
    from genosift.io.datasets import write_synthetic_kmers
    from genosift.scoring.store import score_store

    src = tmp_path / "syn.kmers.gz"
    pheno, markers = write_synthetic_kmers(src, n_samples=120, n_kmers=4000, density=0.1, n_markers=8,
                                           seed=7, compress=True)
    path, report = convert_kmers(src, tmp_path / f"syn{SUFFIX}", metadata=pheno.to_frame(), chunk_bytes=1 << 16)
    assert report.n_matched == 120
    res = score_store(path, "phenotype", method="fisher", chunk_bytes=1 << 16)
    assert set(res.top(8)) == set(markers)
    ref = read_kmers(src)
    same_store(path, ref, obs=pheno.loc[ref.sample_ids].to_frame())


_CHILD = """
import json, sys, time
from genosift.io import convert_kmers, read_metadata
from genosift.scoring.store import score_store
src, out, meta, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
convert_kmers(src, out, metadata=read_metadata(meta, id_column="sample"), chunk_bytes=budget)
t1 = time.perf_counter()
res = score_store(out, "phenotype", method="fisher", chunk_bytes=budget)
t2 = time.perf_counter()
peak = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")][0] * 1024
print(json.dumps({"top": list(res.top(20)), "convert": t1 - t0, "score": t2 - t1, "peak": peak}))
"""


@pytest.mark.slow
def test_multi_gigabyte_kmer_file_in_bounded_memory(tmp_path):
    """A 2 GB k-mer file (1,000 samples x 2,000,000 k-mers, 140 M counts): converted and scored
    in less than 1 GB of memory, imports included."""
    import json
    import subprocess
    import sys

    from genosift.io.datasets import write_synthetic_kmers

    src = tmp_path / "big.kmers"
    pheno, markers = write_synthetic_kmers(src, n_samples=1000, n_kmers=2_000_000, density=0.07,
                                           n_markers=20, seed=11)
    size = src.stat().st_size
    assert size > 2e9
    meta = tmp_path / "pheno.csv"
    pheno.to_frame().to_csv(meta)
    run = subprocess.run([sys.executable, "-c", _CHILD, str(src), str(tmp_path / f"big{SUFFIX}"), str(meta),
                          str(64 << 20)], capture_output=True, text=True, check=True)
    got = json.loads(run.stdout)
    assert set(got["top"]) == set(markers)
    assert got["peak"] < 1e9 and got["peak"] < size / 2, got


def test_streamed_names_are_checked(tmp_path):
    src = tmp_path / "a.kmers"
    src.write_bytes(b"ACGT | s1:1\nAC\x00GT | s1:2\n")
    with pytest.raises(ValueError, match=r"a.kmers', line 2: the line holds a NUL byte"):
        convert_kmers(src, tmp_path / f"a{SUFFIX}", chunk_bytes=1)
    src.write_bytes(b"ACGT | s1:1\nAC\xffGT | s1:2\n")
    with pytest.raises(ValueError, match=r"k-mer b'AC\\xffGT' in .*a.kmers', line 2 is not UTF-8"):
        convert_kmers(src, tmp_path / f"a{SUFFIX}", chunk_bytes=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.kmers"]


@pytest.mark.parametrize("piece", [1, 2, 3, 5, 64])
def test_arena_checks_and_name_blob_work_a_piece_at_a_time(piece):
    """The out-of-core converters check the k-mers (UTF-8, no NUL) and write their NUL-joined
    blob a piece of the arena at a time: every cut between pieces gives the whole's answers,
    a multi-byte character cut in two included."""
    from types import SimpleNamespace

    from genosift.io.arena import ArenaNames, first_byte, is_utf8

    names = ["ACGT", "Ωmega", "b\u00e9ta", "", "CCCC"]
    raw = "".join(f"{n}\n" for n in names).encode()
    arena = np.frombuffer(raw, np.uint8)
    offs = np.concatenate([[0], np.cumsum([len(n.encode()) + 1 for n in names])])
    assert is_utf8(arena, arena.size, piece) and first_byte(arena, arena.size, 0, piece) == -1
    assert first_byte(arena, arena.size, 10, piece) == raw.index(b"\n")
    blob = ArenaNames(SimpleNamespace(arena=arena, offs=offs), len(names), arena.size)
    pieces = list(blob.blob(piece))
    assert all(0 < x.size <= piece for x in pieces) and blob.size == arena.size - 1
    assert np.concatenate(pieces).tobytes() == "\x00".join(names).encode()
    bad = np.frombuffer(raw[:9] + b"\xff" + raw[10:], np.uint8)
    assert not is_utf8(bad, bad.size, piece)
    cut = np.frombuffer(raw[:-7] + b"\xce", np.uint8)  # a character's first byte, then the end
    assert not is_utf8(cut, cut.size, piece)
    nul = np.frombuffer(raw[:11] + b"\x00" + raw[12:], np.uint8)
    assert first_byte(nul, nul.size, 0, piece) == 11 and first_byte(nul, 11, 0, piece) == -1


def test_cli_convert_streams_with_a_budget(tmp_path, capsys):
    from genosift.cli import main
    from genosift.io.datasets import write_synthetic_kmers

    src = tmp_path / "syn.kmers"
    pheno, markers = write_synthetic_kmers(src, n_samples=40, n_kmers=3000, n_markers=5, seed=3)
    pheno.to_frame().to_csv(tmp_path / "pheno.csv")
    out = tmp_path / f"syn{SUFFIX}"
    argv = ["convert", str(src), "--meta", str(tmp_path / "pheno.csv"), "--id", "sample", "-o", str(out),
            "--chunk-bytes", "64K"]
    assert main(argv) == 0
    assert "40 samples x 3000 features" in capsys.readouterr().out
    same_store(out, read_kmers(src), obs=pheno.loc[read_kmers(src).sample_ids].to_frame())
    with pytest.raises(SystemExit) as usage:
        main([*argv[:-1], "nope", "--force"])
    assert usage.value.code == 2 and "must be a size in bytes" in capsys.readouterr().err


def test_store_result_names_are_read_on_first_use(tmp_path):
    import pickle

    from genosift.io.datasets import write_synthetic_kmers
    from genosift.io.store import Store
    from genosift.scoring.store import score_store

    src = tmp_path / "syn.kmers"
    pheno, markers = write_synthetic_kmers(src, n_samples=80, n_kmers=500, n_markers=3, seed=5)
    path, _ = convert_kmers(src, tmp_path / f"syn{SUFFIX}", metadata=pheno.to_frame())
    calls = []
    names = Store.feature_names
    try:
        Store.feature_names = property(lambda self: calls.append(1) or names.fget(self))
        res = score_store(path, "phenotype", method="fisher")
        assert calls == []  # scoring did not decode the names
        again = pickle.loads(pickle.dumps(res))
        assert list(again.feature_names) == list(read_kmers(src).feature_names) and calls
    finally:
        Store.feature_names = names
    assert set(res.top(3)) == set(markers)


@pytest.mark.parametrize("method",
                         [m.name for m in gs.REGISTRY.values() if m.streaming == "rows" and m.task != "regression"])
def test_sparse_store_scores_are_the_in_memory_numbers_bit_for_bit(tmp_path, method):
    src = tmp_path / "a.kmers"
    X, ids = write_kmers(src, n_samples=60, n_kmers=3000, seed=9)
    ref_ds = read_kmers(src)
    y = np.array([int(s.split("-")[1].split(".")[0]) % 2 for s in ref_ds.sample_ids])
    meta = pd.DataFrame({"y": y}, index=pd.Index(ref_ds.sample_ids, name="id"))
    path, _ = convert_kmers(src, tmp_path / f"a{SUFFIX}", metadata=meta)
    import genosift as gs
    from genosift.scoring.store import score_store

    target = None if method == "variance" else "y"
    ref = gs.score(ref_ds.X, None if target is None else y, method=method)
    for chunk in (None, 4096, 600):  # everything at once, ~10 rows, ~1 row per chunk
        res = score_store(path, target, method=method, chunk_bytes=chunk)
        np.testing.assert_array_equal(res.statistic, ref.statistic)
        np.testing.assert_array_equal(res.ranking, ref.ranking)
    keep = np.arange(60) % 3 != 0
    sub = score_store(path, target, method=method, samples=keep, chunk_bytes=2000)
    np.testing.assert_array_equal(sub.statistic, gs.score(ref_ds.X[keep], None if target is None else y[keep],
                                                          method=method).statistic)


def test_sparse_store_with_a_bad_value_names_the_feature(tmp_path):
    from genosift.io import Dataset, write_store
    from genosift.scoring.store import score_store

    X = sp.random(30, 50, density=0.3, format="csr", random_state=1)
    X.data[5] = np.inf
    bad = X.indices[5]
    names = np.array([f"k{j}" for j in range(50)], dtype=object)
    path = write_store(Dataset(X, np.array([f"s{i}" for i in range(30)], dtype=object), names), tmp_path / f"b{SUFFIX}")
    with pytest.raises(ValueError, match=f"NaN or infinity in feature.*k{bad}"):
        score_store(path, np.arange(30) % 2, method="fisher", chunk_bytes=500)


# --------------------------------------------------------------------------- text above the budget


def test_kmer_text_above_the_budget_is_scored_from_a_temporary_store(tmp_path, monkeypatch, capsys):
    """A command given k-mer text whose counts pass the memory budget writes them to a temporary
    store and scores from it: the same table, byte for byte, and nothing left behind."""
    import tempfile

    from genosift.cli import main
    from genosift.core import engine
    from genosift.io.kmer_store import read_kmers_within

    path = tmp_path / "k.kmers"
    _, ids = write_kmers(path, n_samples=30, n_kmers=400, density=0.3)
    meta = tmp_path / "meta.tsv"
    meta.write_text("id\tpheno\n" + "".join(f"{s}\t{'case' if i % 3 else 'control'}\n" for i, s in enumerate(ids)))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))

    # the library call: the counts in memory within the budget, a store beyond it, the same values
    ds, none = read_kmers_within(path, 1 << 30, tmp_path / "a.gs.h5ad")
    assert none is None and ds.X.dtype == np.float64
    none, store = read_kmers_within(path, 256, tmp_path / "b.gs.h5ad")
    assert none is None
    back = open_store(store).to_dataset()
    assert back.sample_ids.tolist() == ds.sample_ids.tolist()
    assert back.feature_names.tolist() == ds.feature_names.tolist()
    assert (back.X.astype(np.float64) != ds.X).nnz == 0

    tables = []
    default = engine.CHUNK_BYTES
    # the default budget, a smaller default, and the budget given on the command line (a store beyond it)
    for budget, option, spilled in ((default, [], False), (512, [], True), (default, ["--chunk-bytes", "512"], True),
                                    (default, ["--chunk-bytes", "1G"], False)):
        monkeypatch.setattr(engine, "CHUNK_BYTES", budget)
        out = tmp_path / "rank.tsv"
        assert main(["score", str(path), "--meta", str(meta), "--id", "id", "--target", "pheno", "--method",
                     "fisher", *option, "-o", str(out), "--force"]) == 0
        tables.append(out.read_bytes())
        said = capsys.readouterr()
        assert ("written to a temporary store" in said.out + said.err) == spilled
        assert list(temporary.iterdir()) == []  # the temporary store is gone with the command
    assert all(table == tables[0] for table in tables)
