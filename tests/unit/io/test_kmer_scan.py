"""k-mer text parsed on every thread equals the one-thread parse, byte for byte, errors included.

The pieces a block is cut into are forced (``kmers.PIECES``, ``kmers.MIN_PIECE``), so the
parallel path runs whatever the machine's threads; every file is read both ways and compared:
the matrix, the order in which ids and k-mers were first met, every error message.
"""
from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.sparse as sp

from genosift.io import kmers as kmer_module
from genosift.io.kmer_store import convert_kmers
from genosift.io.kmers import KmerReader, read_kmers
from genosift.io.store import open_store


@pytest.fixture
def pieces(monkeypatch):
    """Set how a block is cut: ``pieces(None)`` one thread, ``pieces(k)`` k pieces of any size."""
    def cut(k):
        monkeypatch.setattr(kmer_module, "PIECES", k)
        monkeypatch.setattr(kmer_module, "MIN_PIECE", 1 << 60 if k is None else 1)
    return cut


def random_text(seed, n_lines=400, n_ids=40, late=5):
    """k-mer text with every quirk the format allows: ids holding ':', zero counts, blank and
    blank-looking lines, CRLF, tabs, statistics before the bar, k-mers in no sample, leading
    spaces, ids first met late in the file. Returns the text and {(id, k-mer): count}."""
    rng = np.random.default_rng(seed)
    ids = [f"s{i}" for i in range(n_ids - 3)] + ["odd:id", "x/y.z-1", "a:b:c"]
    early = ids[: n_ids - late]
    counts, lines = {}, []
    acgt = np.array(list("ACGT"))
    seen = set()
    for i in range(n_lines):
        while True:
            kmer = "".join(acgt[rng.integers(0, 4, 15)])
            if kmer not in seen:
                seen.add(kmer)
                break
        pool = early if i < n_lines // 2 else ids
        chosen = rng.choice(len(pool), size=rng.integers(0, min(12, len(pool))), replace=False)
        entries = []
        for c in chosen:
            v = int(rng.choice([0, 1, 2, 7, 300, 70000, 2**33 + 5], p=[.1, .4, .2, .1, .1, .05, .05]))
            entries.append(f"{pool[c]}:{v}")
            if v:
                counts[pool[c], kmer] = v
        sep = rng.choice([" | ", "|", "\t|\t", " 5.03 0.16 100 | "])
        space = str(rng.choice([" ", "\t", "  "]))
        line = " " * int(rng.integers(0, 2)) + kmer + sep + space.join(entries)
        end = "\r\n" if rng.random() < 0.1 else "\n"
        lines.append(line + end)
        if rng.random() < 0.05:
            lines.append(rng.choice(["\n", "  \n", "\t\r\n"]))
    return "".join(lines), counts


def read_both(path, pieces, k, **options):
    pieces(None)
    one = read_kmers(path, **options)
    pieces(k)
    many = read_kmers(path, **options)
    return one, many


def assert_identical(one, many):
    assert one.X.format == many.X.format and one.X.dtype == many.X.dtype
    for name in ("data", "indices", "indptr"):
        a, b = getattr(one.X, name), getattr(many.X, name)
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert one.sample_ids.tolist() == many.sample_ids.tolist()
    assert one.feature_names.tolist() == many.feature_names.tolist()


@pytest.mark.parametrize("k", [2, 7])
@pytest.mark.parametrize("seed", [0, 1])
def test_pieces_give_the_one_thread_result_and_the_counts_written(tmp_path, pieces, k, seed):
    text, counts = random_text(seed)
    path = tmp_path / "k.kmers"
    path.write_text(text)
    for block in (1 << 24, 4096, 700):
        one, many = read_both(path, pieces, k, block_size=block)
        assert_identical(one, many)
    # and both equal the counts the text was written from
    X = many.X.tocoo()
    got = {(many.sample_ids[r], many.feature_names[c]): v for r, c, v in zip(X.row, X.col, X.data)}
    assert got == {key: float(v) for key, v in counts.items()}


def test_ids_and_kmers_are_interned_in_the_order_the_file_first_lists_them(tmp_path, pieces):
    text, _ = random_text(3, n_lines=600, late=8)
    path = tmp_path / "k.kmers.gz"
    path.write_bytes(gzip.compress(text.encode()))
    readers = []
    for k in (None, 5):
        pieces(k)
        reader = KmerReader(2048)
        reader.read_file(path)
        readers.append(reader)
    one, many = readers
    for table, n, b in (("samples", 3, 4), ("kmers", 5, 6)):  # SN, SB and KN, KB slots
        assert one.st[n] == many.st[n] and one.st[b] == many.st[b]
        t1, t2 = getattr(one, table), getattr(many, table)
        assert t1.strings(int(one.st[b])) == t2.strings(int(many.st[b]))
    n = int(one.st[3])
    assert np.array_equal(one.samples.cols["nnz"][:n], many.samples.cols["nnz"][:n])
    kept = [0, 1, 3, 4, 5, 6, 7, 8, 9]  # LINE, FILE, SN, SB, KN, KB, NL, NE, MAX (not the kernels' scratch)
    assert np.array_equal(one.st[kept], many.st[kept])


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_several_files_layouts_samples_and_types(tmp_path, pieces, layout):
    paths = []
    for seed in (4, 5):
        text, _ = random_text(seed, n_lines=300)
        paths.append(tmp_path / f"part{seed}.kmers")
        paths[-1].write_text(text)
    chosen = ["s3", "s1", "nobody", "odd:id"]
    with pytest.warns(UserWarning):
        one, many = read_both(paths, pieces, 4, layout=layout, samples=chosen, block_size=1000)
    assert_identical(one, many)
    one, many = read_both(paths, pieces, 4, layout=layout, dtype=np.float64, block_size=1000)
    assert_identical(one, many)


def test_the_store_written_from_pieces_is_the_same(tmp_path, pieces):
    text, _ = random_text(6, n_lines=500)
    path = tmp_path / "k.kmers"
    path.write_text(text)
    stores = []
    for k, budget in ((None, None), (3, None), (3, 64)):  # in memory, and spilled in batches
        pieces(k)
        out, _ = convert_kmers(path, tmp_path / f"s{k}{budget}.gs.h5ad", chunk_bytes=budget, block_size=2048)
        stores.append(open_store(out).to_dataset())
    for other in stores[1:]:
        assert_identical(stores[0], other)


BAD_LINES = [
    "ACGTACGT s1:1",  # no bar
    "| s1:1",  # no k-mer
    "ACGTACGT | s1",  # no colon
    "ACGTACGT | s1:1 :3",  # no id
    "ACGTACGT | s1:3.5",
    "ACGTACGT | s1:",
    f"ACGTACGT | s1:{2**53 + 1}",
    "ACGTACGT | s1:1 s2:2 s1:3",  # an id twice on a line
    "ACGTACGT | newid:1 newid:0",  # twice, and new to the file
    "ACGTACGT | s1:1\rs1:2",  # CR alone inside a line, and an id twice
]


@pytest.mark.parametrize("bad", BAD_LINES)
@pytest.mark.parametrize("where", [0.1, 0.93])
def test_a_bad_line_anywhere_gives_the_one_thread_message(tmp_path, pieces, bad, where):
    text, _ = random_text(7, n_lines=300)
    lines = text.splitlines(keepends=True)
    at = int(len(lines) * where)
    lines.insert(at, bad + "\n")
    path = tmp_path / "k.kmers"
    path.write_text("".join(lines), newline="")
    messages = []
    for k in (None, 4):
        pieces(k)
        with pytest.raises(ValueError) as err:
            read_kmers(path, block_size=1 << 20)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"'{path}', line {at + 1}: ")


@pytest.mark.parametrize("gap", [1, 290])
def test_a_kmer_repeated_in_another_piece_names_both_lines(tmp_path, pieces, gap):
    text, _ = random_text(8, n_lines=300)
    lines = text.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if "|" in line and not line.startswith(" "))
    kmer = lines[first].split()[0].split("|")[0]
    at = min(len(lines), first + gap)
    lines.insert(at, f"{kmer} | s2:4\n")
    path = tmp_path / "k.kmers"
    path.write_text("".join(lines), newline="")
    messages = []
    for k in (None, 2, 6):
        pieces(k)
        with pytest.raises(ValueError) as err:
            read_kmers(path)
        messages.append(str(err.value))
    assert messages[0] == messages[1] == messages[2]
    assert f"line {at + 1}: the k-mer '{kmer}' is also on line {first + 1}." in messages[0]


def test_empty_pieces_and_a_last_line_without_a_break(tmp_path, pieces):
    path = tmp_path / "k.kmers"
    path.write_text("AAAA | s1:1 s2:2\n\n\n\nCCCC | s2:5\nGGGG |")
    one, many = read_both(path, pieces, 9)
    assert_identical(one, many)
    assert many.X.toarray().tolist() == [[1, 0, 0], [2, 5, 0]]
    X = sp.csr_matrix(np.array([[1.0, 0, 0], [2, 5, 0]]))
    assert (many.X != X).nnz == 0


@pytest.mark.parametrize("room", [1, 8 * 40 * 2])
def test_pieces_are_fewer_when_their_rows_of_ids_would_be_large(tmp_path, pieces, monkeypatch, room):
    """Each piece keeps a row of marks and counts per known id: beyond a bound on their bytes the
    block is cut into fewer pieces (one: a one-thread parse), with the same result."""
    text, _ = random_text(9, n_lines=300, n_ids=40)
    path = tmp_path / "k.kmers"
    path.write_text(text)
    one, _ = read_both(path, pieces, 6, block_size=2048)
    monkeypatch.setattr(kmer_module, "_PIECE_ROWS_BYTES", room)
    seen = []
    scan = kmer_module.scan_pieces
    monkeypatch.setattr(kmer_module, "scan_pieces", lambda buf, cut, *rest: (seen.append(cut.cuts.size - 1),
                                                                            scan(buf, cut, *rest))[1])
    assert_identical(one, read_kmers(path, block_size=2048))
    if room == 1:  # no room for a row: every block on one thread
        assert seen == []
    else:  # a file's first block knows no id yet: its first piece is read on one thread, then the
        # ids it met leave room for 2 pieces, not the 5 others: the rest of the block on one thread
        assert max(seen) == 2


# --------------------------------------------------------------------------- per-sample dumps


def random_dumps(folder, seed, n_samples=6, pool=400):
    """Dumps of random samples: core and accessory k-mers (each sample meets k-mers the others
    lack, all through its file), sorted or in hash order, zero counts, blank lines, CRLF, spaces."""
    rng = np.random.default_rng(seed)
    acgt = np.array(list("ACGT"))
    kmers = sorted({"".join(acgt[rng.integers(0, 4, 13)]) for _ in range(pool)})
    core = rng.random(len(kmers)) < 0.75
    lines = []
    for s in range(n_samples):
        chosen = [k for k, c in zip(kmers, core) if rng.random() < (0.9 if c else 0.3)]
        if s % 2:
            rng.shuffle(chosen)  # Jellyfish's order
        text = []
        for k in chosen:
            sep = str(rng.choice(["\t", " ", "  "]))
            end = "\r\n" if rng.random() < 0.05 else "\n"
            text.append(f"{k}{sep}{int(rng.choice([0, 1, 3, 250, 70000]))}{end}")
            if rng.random() < 0.03:
                text.append("\n")
        (folder / f"s{s}.txt").write_text("".join(text), newline="")
        lines.append(f"s{s}\ts{s}.txt\n")
    listing = folder / "samples.txt"
    listing.write_text("".join(lines))
    return listing


@pytest.mark.parametrize("k", [2, 5])
@pytest.mark.parametrize("seed", [0, 1])
def test_dumps_in_pieces_give_the_one_thread_result(tmp_path, pieces, k, seed):
    from genosift.io.dumps import read_dumps

    listing = random_dumps(tmp_path, seed)
    for block in (1 << 24, 1500):
        pieces(None)
        one = read_dumps(listing, block_size=block)
        pieces(k)
        many = read_dumps(listing, block_size=block)
        assert_identical(one, many)


@pytest.mark.parametrize("bad", ["ACGTACGTACGTA", "ACGTACGTACGTA 1 2", "ACGTACGTACGTA x", f"ACGTACGTACGTA {2**53 + 1}",
                                 "REPEAT"])
@pytest.mark.parametrize("where", [0.2, 0.8])
def test_a_bad_dump_line_anywhere_gives_the_one_thread_message(tmp_path, pieces, bad, where):
    from genosift.io.dumps import read_dumps

    listing = random_dumps(tmp_path, 3)
    dump = tmp_path / "s3.txt"
    lines = dump.read_text().splitlines(keepends=True)
    at = int(len(lines) * where)
    if bad == "REPEAT":  # a k-mer of an earlier line (another piece) again
        bad = lines[min(3, at - 1)].split()[0] + " 2"
    lines.insert(at, bad + "\n")
    dump.write_text("".join(lines), newline="")
    messages = []
    for k in (None, 4):
        pieces(k)
        with pytest.raises(ValueError) as err:
            read_dumps(listing, block_size=1 << 20)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert f"line {at + 1}: " in messages[0]


def test_a_block_of_blank_or_very_short_lines_is_read_on_one_thread(tmp_path, pieces, monkeypatch):
    """The pieces keep 40-56 bytes per line: a block of blank lines (a blank-line bomb) would make
    them many times its size, so such a block is read on one thread, with the same result."""
    from genosift.io import dumps as dump_module
    from genosift.io.dumps import read_dumps

    text, _ = random_text(10, n_lines=100)
    path = tmp_path / "k.kmers"
    path.write_text("\n" * 5000 + text + "\n" * 5000)
    dump = tmp_path / "d.txt"
    dump.write_text("\n" * 5000 + "ACGTACGTACG 3\nCCCCCCCCCCC 1\n" + "\n" * 5000)
    listing = tmp_path / "list.txt"
    listing.write_text("one\td.txt\n")
    scanned = []
    for module, name in ((kmer_module, "scan_pieces"), (dump_module, "scan_dump_pieces")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *args, original=original: (scanned.append(1), original(*args))[1])
    one, many = read_both(path, pieces, 4, block_size=4096)
    assert_identical(one, many)
    assert_identical(read_dumps(listing, block_size=4096), (pieces(None), read_dumps(listing, block_size=4096))[1])
    assert scanned == []  # every block of the two files is mostly blank: none was cut
