"""Stores of k-mer counts in the smallest unsigned type that holds their largest count.

`convert` (and ``convert_kmers`` / ``convert_dumps``) store counts by default ("auto") as uint8,
uint16 or uint32, float64 beyond: streamed or in memory, from k-mer text or per-sample dumps,
with counts added over files. The values are the counts read, and the scores the float64
store's, bit for bit. The spill file keeps sample indices and counts in their smallest type too.
"""
from __future__ import annotations

import numpy as np
import pytest
from plain_methods import plain
from test_kmer_store import same_store, write_kmers

import genosift as gs
from genosift.cli import main
from genosift.io import convert_kmers, open_store, read_kmers, read_metadata
from genosift.io.dumps import convert_dumps, read_dumps
from genosift.io.spill import Spill
from genosift.io.store import SUFFIX
from genosift.scoring.store import score_store

#: (largest count, the type "auto" stores) at each type's edges.
EDGES = [(20, "uint8"), (255, "uint8"), (256, "uint16"), (65535, "uint16"), (65536, "uint32"),
         (2**32 - 1, "uint32"), (2**32, "float64"), (2**53, "float64")]


def with_count(path, top):
    """A k-mer file whose largest count is ``top`` (one more line)."""
    _, samples = write_kmers(path, seed=5, n_samples=23, n_kmers=120)
    with open(path, "a") as f:
        f.write(f"TTTTTGGGGGCCCCCAAAAATTTTT | {samples[2]}:{top} {samples[0]}:1\n")
    return samples


@pytest.mark.parametrize("chunk_bytes", [1, 10**9], ids=["spilled", "in-memory"])
@pytest.mark.parametrize("top, kind", EDGES)
def test_kmer_stores_take_the_smallest_type_holding_the_counts(tmp_path, chunk_bytes, top, kind):
    src = tmp_path / "a.kmers"
    samples = with_count(src, top)
    path, _ = convert_kmers(src, tmp_path / f"a{SUFFIX}", chunk_bytes=chunk_bytes, block_size=512)
    store = same_store(path, read_kmers(src))
    row = store.sample_ids.tolist().index(samples[2])
    assert store.dtype == np.dtype(kind) and store.to_dataset().X[row, -1] == top


def test_counts_added_over_files_choose_the_type_of_their_sum(tmp_path):
    a, b = tmp_path / "a.kmers", tmp_path / "b.kmers"
    for second, kind in ((50, "uint8"), (100, "uint16")):
        a.write_text("ACGTA | s1:200 s2:1\nCCCCC | s2:3\n")
        b.write_text(f"ACGTA | s1:{second}\n")
        path, _ = convert_kmers([a, b], tmp_path / f"{second}{SUFFIX}")
        store = same_store(path, read_kmers([a, b]))
        assert store.dtype == np.dtype(kind) and store.to_dataset().X[0, 0] == 200 + second


def test_a_named_type_is_kept_or_refused(tmp_path):
    src = tmp_path / "a.kmers"
    with_count(src, 300)
    for dtype in (np.float64, np.uint32, "uint16"):
        path, _ = convert_kmers(src, tmp_path / f"{np.dtype(dtype).name}{SUFFIX}", dtype=dtype, chunk_bytes=1)
        assert open_store(path).dtype == np.dtype(dtype)
    with pytest.raises(ValueError, match=r"largest count, 300, is more than dtype uint8"):
        convert_kmers(src, tmp_path / f"u8{SUFFIX}", dtype=np.uint8, chunk_bytes=1)
    with pytest.raises(ValueError, match="'dtype' parameter of convert_kmers"):
        convert_kmers(src, tmp_path / f"x{SUFFIX}", dtype="automatic")


@pytest.mark.parametrize("top, kind", [(255, "uint8"), (300, "uint16"), (70000, "uint32")])
@pytest.mark.parametrize("budget", [None, 8])
def test_dump_stores_take_the_smallest_type(tmp_path, top, kind, budget):
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "S1.txt").write_text(f"AAA\t{top}\nCCC\t2\n")
    (dumps / "S2.txt").write_text("CCC\t7\nGGG\t1\n")
    path, _ = convert_dumps(dumps, tmp_path / f"d{SUFFIX}", chunk_bytes=budget)
    store = open_store(path)
    assert store.dtype == np.dtype(kind)
    ref = read_dumps(dumps)
    assert (store.to_dataset().X != ref.X).nnz == 0


def _target(method):
    """The target a method scores against here: two classes, a number, or none."""
    task = gs.methods().loc[method, "task"]
    return {"classification": "y", "unsupervised": None}.get(task, "t")


def _scored(path, target, method):
    """``method`` on a store: out of core where it streams, else on the matrix read into memory."""
    if gs.methods().loc[method, "streaming"] != "matrix":
        return score_store(path, target, method=method)
    ds = open_store(path).to_dataset()
    return gs.score(ds.X, None if target is None else ds.obs[target].to_numpy(), method=method)


@pytest.mark.parametrize("method", plain(gs.methods().index))
def test_scores_from_the_smallest_type_are_the_float64_stores(tmp_path, method):
    """Every method scores a store of uint8 counts exactly as the same counts stored in float64."""
    src = tmp_path / "a.kmers"
    _, ids = write_kmers(src, seed=7, n_samples=40, n_kmers=200, density=0.4)
    rows = "".join(f"{s}\t{'R' if i % 3 else 'S'}\t{(i * 7919) % 31 / 4}\n" for i, s in enumerate(ids))
    (tmp_path / "m.tsv").write_text("id\ty\tt\n" + rows)
    meta = read_metadata(tmp_path / "m.tsv", id_column="id")
    auto, _ = convert_kmers(src, tmp_path / f"auto{SUFFIX}", metadata=meta, chunk_bytes=1)
    full, _ = convert_kmers(src, tmp_path / f"full{SUFFIX}", metadata=meta, dtype=np.float64, chunk_bytes=1)
    assert open_store(auto).dtype == np.uint8
    a, b = (_scored(path, _target(method), method) for path in (auto, full))
    assert a.scores.tobytes() == b.scores.tobytes()
    assert (a.pvalues is None) == (b.pvalues is None)
    if a.pvalues is not None:
        assert a.pvalues.tobytes() == b.pvalues.tobytes()


def test_cli_convert_stores_counts_in_the_smallest_type(tmp_path, capsys):
    src = tmp_path / "a.kmers"
    with_count(src, 1000)
    out = tmp_path / f"a{SUFFIX}"
    assert main(["convert", str(src), "-o", str(out), "--quiet"]) == 0
    assert open_store(out).dtype == np.uint16
    assert main(["convert", str(src), "-o", str(out), "--dtype", "auto", "--force", "--quiet"]) == 0
    assert open_store(out).dtype == np.uint16
    assert main(["convert", str(src), "-o", str(out), "--dtype", "float64", "--force", "--quiet"]) == 0
    assert open_store(out).dtype == np.float64
    table = tmp_path / "t.csv"
    table.write_text("id,g1,g2\na,1,2\nb,3,4\n")
    capsys.readouterr()
    out = str(tmp_path / f"t{SUFFIX}")
    assert main(["convert", str(table), "--id-column", "id", "--dtype", "auto", "-o", out]) == 2
    err = capsys.readouterr().err
    assert "--dtype auto is for k-mer counts" in err and "--dtype uint8" in err
    assert main(["convert", str(table), "--id-column", "id", "-o", out]) == 0
    assert open_store(out).dtype == np.float64  # a table keeps float64


@pytest.mark.parametrize("samples, counts", [(200, 9), (300, 300), (70000, 70000), (70000, 2**32 + 5)])
def test_the_spill_keeps_each_block_in_its_smallest_types(tmp_path, samples, counts):
    rng = np.random.default_rng(samples)
    blocks = []
    for size in (50, 0, 30):
        samp = rng.integers(0, samples, size).astype(np.int32)
        if size:
            samp[0] = samples - 1
        values = rng.integers(1, 3, size).astype(np.uint32 if counts < 2**32 else np.float64)
        if size:
            values[-1] = counts
        blocks.append((np.arange(size // 10, dtype=np.int64), np.full(size // 10, 10, np.int32), samp, values))
    spill = Spill(0, tmp_path)
    try:
        for block in blocks:
            spill.add(*block)
        assert spill.spilled
        back = list(spill.blocks())
    finally:
        spill.close()
    for (kmer, nnz, samp, values), (kmer2, nnz2, samp2, values2) in zip(blocks, back):
        for x, y in ((kmer, kmer2), (nnz, nnz2), (samp, samp2), (values, values2)):
            np.testing.assert_array_equal(x, y)
        if samp.size:
            assert samp2.itemsize == (1 if samples <= 2**8 else 2 if samples <= 2**16 else 4)
            assert values2.itemsize == {9: 1, 300: 2, 70000: 4}.get(counts, 8)
