"""Per-sample k-mer count dumps (KMC, Jellyfish): list files and folders merged by k-mer."""
import bz2
import gzip
import shutil
import subprocess

import h5py
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import genosift as gs
from genosift.cli import main
from genosift.io.dumps import convert_dumps, dump_collection, read_dumps, sample_id

# ---------------------------------------------------------------------------------------------
# helpers: a collection written from a dict, and the matrix the dict says
# ---------------------------------------------------------------------------------------------


def _random_counts(rng, n_samples=5, pool=60, k=7):
    kmers = sorted({"".join(rng.choice(list("ACGT"), k)) for _ in range(pool)})
    out = {}
    for i in range(n_samples):
        chosen = rng.choice(len(kmers), rng.integers(1, len(kmers) + 1), replace=False)
        out[f"S{i}"] = {kmers[j]: int(rng.integers(0, 300)) for j in chosen}
    return out


def _dump_text(counts, rng=None, sep="\t", shuffle=False):
    items = list(counts.items())
    if shuffle:
        items = [items[i] for i in rng.permutation(len(items))]
    return "".join(f"{k}{sep}{c}\n" for k, c in items)


def _write(path, text, compress=None):
    data = text.encode()
    if compress == "gz":
        data = gzip.compress(data)
    elif compress == "bz2":
        data = bz2.compress(data)
    path.write_bytes(data)
    return path


def _reference(counts, order):
    kmers = sorted({k for c in counts.values() for k in c})
    X = np.array([[counts[s].get(k, 0) for k in kmers] for s in order], dtype=float)
    return X, kmers


def _check(ds, counts, order):
    X, kmers = _reference(counts, order)
    assert ds.sample_ids.tolist() == list(order)
    assert ds.feature_names.tolist() == kmers
    np.testing.assert_array_equal(ds.X.toarray(), X)
    assert ds.X.has_sorted_indices and not (ds.X.data == 0).any()


def _list_file(tmp_path, counts, rng, name="samples.txt", compress=None):
    """A list file with its dumps in a sub-folder (relative paths), mixed layouts."""
    sub = tmp_path / "dumps"
    sub.mkdir(exist_ok=True)
    lines = ["# sample\tpath", ""]
    for i, (s, c) in enumerate(counts.items()):
        comp = compress or [None, "gz", "bz2"][i % 3]
        f = _write(sub / f"{s}.dump", _dump_text(c, rng, sep=" \t"[i % 2], shuffle=i % 2 == 1), comp)
        lines.append(f"{s}\tdumps/{f.name}")
    return _write(tmp_path / name, "\n".join(lines) + "\n")


def _store_arrays(path):
    with h5py.File(path, "r") as f:
        out = {}
        f.visititems(lambda name, item: out.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None)
    return out


# ---------------------------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_list_file_round_trip(tmp_path, seed):
    rng = np.random.default_rng(seed)
    counts = _random_counts(rng)
    listed = _list_file(tmp_path, counts, rng)
    assert gs.io.format_of(listed) == "dumps"
    _check(gs.io.read(listed), counts, list(counts))
    # samples picks and orders the rows
    _check(read_dumps(listed, samples=["S3", "S0"]), {s: counts[s] for s in ("S3", "S0")}, ["S3", "S0"])


def test_folder_round_trip_with_suffixes_and_compression(tmp_path):
    rng = np.random.default_rng(5)
    counts = _random_counts(rng, n_samples=6)
    names = ["S0.txt", "S1.txt.gz", "S2.kmc.dump", "S3.jf.bz2", "S4", "S5.counts.tsv"]
    for (_s, c), name in zip(counts.items(), names):
        compress = "gz" if name.endswith(".gz") else "bz2" if name.endswith(".bz2") else None
        _write(tmp_path / name, _dump_text(c, rng, shuffle=True), compress)
    _write(tmp_path / ".hidden", "not a dump\n")
    assert gs.io.format_of(tmp_path) == "dumps"
    _check(gs.io.read(tmp_path), counts, list(counts))
    assert [s for s, _ in dump_collection(tmp_path)] == list(counts)


def test_compressed_dumps_with_names_that_say_nothing(tmp_path):
    counts = {"a": {"ACGTT": 3, "TTTTT": 1}, "b": {"ACGTT": 2, "CCCCC": 9}}
    _write(tmp_path / "one", _dump_text(counts["a"]), "gz")  # gzip, no suffix
    _write(tmp_path / "two", _dump_text(counts["b"]), "bz2")
    listed = _write(tmp_path / "collection", "a\tone\nb\ttwo\n")  # a list file, no suffix either
    assert gs.io.format_of(listed) == "dumps"
    _check(gs.io.read(listed), counts, ["a", "b"])


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6).flatmap(lambda k: st.dictionaries(  # one k for every dump, as a counter writes them
    st.text("ACGTN", min_size=1, max_size=9),
    st.dictionaries(st.text("ACGT", min_size=k, max_size=k), st.integers(0, 2**40), min_size=1),
    min_size=1, max_size=5)))
def test_any_collection_matches_its_dict(tmp_path_factory, counts):
    folder = tmp_path_factory.mktemp("dumps")
    for s, c in counts.items():
        _write(folder / f"{s}.txt", _dump_text(c, sep=" "))
    order = sorted(counts, key=lambda s: f"{s}.txt")  # a folder's rows: its file names, sorted
    ds = read_dumps(folder, block_size=7)  # lines cut by block edges
    _check(ds, counts, order)


@pytest.mark.parametrize("name, sample", [
    ("S1.txt.gz", "S1"), ("S1.kmc.dump", "S1"), ("S1.jf.txt.bz2", "S1"), ("S1", "S1"),
    ("ERR12.1.txt", "ERR12.1"), ("S1.TXT.GZ", "S1"), (".txt", ".txt"), ("S1.fa.txt", "S1.fa")])
def test_sample_id_rule(name, sample):
    assert sample_id(name) == sample


def test_zero_counts_keep_their_column_and_dtypes(tmp_path):
    _write(tmp_path / "a.txt", "AAA\t0\nCCC\t70000\n")
    _write(tmp_path / "b.txt", "GGG\t2\n")
    ds = read_dumps(tmp_path, dtype=np.uint32)
    assert ds.feature_names.tolist() == ["AAA", "CCC", "GGG"] and ds.X.dtype == np.uint32
    assert ds.X.toarray().tolist() == [[0, 70000, 0], [0, 0, 2]] and ds.X.nnz == 2
    with pytest.raises(ValueError, match=r"70000, is more than dtype uint16 holds exactly"):
        read_dumps(tmp_path, dtype=np.uint16)


# ---------------------------------------------------------------------------------------------
# stores: in memory and spilled give the same file
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("column_copy", [True, False])
def test_store_in_memory_and_spilled_are_identical(tmp_path, column_copy):
    rng = np.random.default_rng(11)
    counts = _random_counts(rng, n_samples=7, pool=200)
    listed = _list_file(tmp_path, counts, rng)
    expected = gs.io.write_store(read_dumps(listed), tmp_path / "ref.gs.h5ad", column_copy=column_copy)
    ref = _store_arrays(expected)
    for budget in (None, 64, 1000, 5000):
        path, report = convert_dumps(listed, tmp_path / f"c{budget}.gs.h5ad", chunk_bytes=budget,
                                     column_copy=column_copy)
        got = _store_arrays(path)
        assert report is None and sorted(got) == sorted(ref)
        for key in ref:
            np.testing.assert_array_equal(got[key], ref[key], err_msg=f"{key} (chunk_bytes={budget})")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


@pytest.mark.filterwarnings("ignore:Few samples matched")
@pytest.mark.parametrize("absent", ["drop", "zeros"])
def test_store_with_metadata_reads_only_its_samples(tmp_path, absent):
    rng = np.random.default_rng(3)
    counts = _random_counts(rng, n_samples=5)
    listed = _list_file(tmp_path, counts, rng)
    meta = pd.DataFrame({"y": [1, 0, 1]}, index=pd.Index(["S4", "S1", "ghost"], name="id"))
    stores = [convert_dumps(listed, tmp_path / f"{b}.gs.h5ad", metadata=meta, chunk_bytes=b, absent=absent)
              for b in (None, 64)]
    rows = ["S1", "S4"] + (["ghost"] if absent == "zeros" else [])
    expected = {**counts, "ghost": {}}
    for path, report in stores:
        store = gs.io.open_store(path)
        ds = store.to_dataset()
        assert ds.sample_ids.tolist() == rows and store.obs["y"].tolist() == [0, 1] + ([1] if absent == "zeros" else [])
        _check(ds, {s: expected[s] for s in rows}, rows)
        assert ("ghost" in report.zero_rows) == (absent == "zeros")


def test_store_counts_beyond_the_dtype_are_refused(tmp_path):
    _write(tmp_path / "a.txt", "AAA\t300\n")
    for budget in (None, 8):
        with pytest.raises(ValueError, match=r"300, is more than dtype uint8"):
            convert_dumps(tmp_path, tmp_path.parent / f"x{budget}.gs.h5ad", dtype=np.uint8, chunk_bytes=budget)


# ---------------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------------


def test_cli_convert_and_score_a_list_file(tmp_path, capsys):
    rng = np.random.default_rng(7)
    pool = sorted({"".join(rng.choice(list("ACGT"), 9)) for _ in range(300)})
    counts, labels = {}, {}
    for i in range(24):
        y = i % 2
        kmers = set(rng.choice(pool, 120, replace=False)) | ({"AAAAAAAAA"} if y else set())
        counts[f"iso{i}"] = {k: int(rng.integers(1, 20)) for k in kmers}
        labels[f"iso{i}"] = y
    listed = _list_file(tmp_path, counts, rng, name="isolates.txt")
    meta = tmp_path / "pheno.csv"
    pd.DataFrame({"sample": [*labels, "not_counted"], "resistant": [*labels.values(), 1]}).to_csv(meta, index=False)
    store = tmp_path / "iso.gs.h5ad"
    command = ["convert", str(listed), "--meta", str(meta), "--id", "sample", "--chunk-bytes", "4096", "-o", str(store)]
    assert main(command) == 1  # a phenotyped sample with no dump: refused by default, named
    assert "1 sample(s) of the metadata" in capsys.readouterr().err and not store.exists()
    assert main([*command, "--absent-samples", "drop"]) == 0
    printed = capsys.readouterr().out
    assert "24 sample(s) matched" in printed and "'not_counted'" in printed
    ds = gs.io.open_store(store).to_dataset()
    _check(ds, counts, list(counts))
    for data in (listed, tmp_path / "dumps", store):  # the store keeps the labels it was converted with
        out = tmp_path / f"rank-{data.name}.tsv"
        labels = [] if data == store else ["--meta", str(meta), "--id", "sample", "--absent-samples", "drop"]
        assert main(["score", str(data), *labels, "--target", "resistant", "--method", "chi2", "--binary",
                     "--top", "5", "-o", str(out)]) == 0
        ranking = pd.read_csv(out, sep="\t")
        assert ranking["feature"].iloc[0] == "AAAAAAAAA" and len(ranking) == ds.shape[1]
    capsys.readouterr()
    assert main(["convert", str(tmp_path / "dumps"), "-o", str(tmp_path / "f.gs.h5ad")]) == 0
    assert gs.io.open_store(tmp_path / "f.gs.h5ad").shape == ds.shape


def test_cli_reports_a_bad_dump_with_its_file_and_line(tmp_path, capsys):
    _write(tmp_path / "a.txt", "ACGT\t1\nACGT\t1.5\n")
    assert main(["convert", str(tmp_path), "-o", str(tmp_path.parent / "bad.gs.h5ad")]) == 1
    err = capsys.readouterr().err
    assert "a.txt', line 2: the count '1.5' of the k-mer 'ACGT' is not a non-negative integer" in err


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("AAA\t1\nCCC\n", r"line 2: the line 'CCC' is not 'KMER COUNT'\. Each line of a k-mer dump"),
    ("AAA\t1\nCCC\t2\t3\n", r"line 2: the line 'CCC\\t2\\t3' is not 'KMER COUNT'"),
    (">3\nAAA\n", r"line 1: .* this is FASTA, Jellyfish's default dump: dump with `jellyfish dump -c -t DB`"),
    ("AAA\t1\n\nCCC\t-2\n", r"line 3: the count '-2' of the k-mer 'CCC' is not a non-negative integer"),
    ("AAA\t1e3\n", r"line 1: the count '1e3' of the k-mer 'AAA' is not a non-negative integer"),
    ("AAA\t99999999999999999999\n", r"line 1: the count '99999999999999999999' .* is above 2\*\*53"),
    ("AAA\t1\nCCC\t1\nAAA\t4\n", r"line 3: the k-mer 'AAA' is also on line 1\. A dump lists each k-mer once"),
    ("\n \n", r"holds no k-mer lines\. Each line of a k-mer dump must be 'KMER COUNT'"),
    ("AAA\t1\nC\x00C\t1\n", r"line 2: the line holds a NUL byte"),
])
def test_bad_dump_lines_name_the_file_and_line(tmp_path, text, message):
    _write(tmp_path / "good.txt", "AAA\t1\n")
    _write(tmp_path / "zbad.txt", text)
    for block in (3, 1 << 20):
        with pytest.raises(ValueError, match=r"zbad\.txt', line|zbad\.txt' holds"):
            read_dumps(tmp_path, block_size=block)
        with pytest.raises(ValueError, match=message):
            read_dumps(tmp_path, block_size=block)
    with pytest.raises(ValueError, match=message):
        convert_dumps(tmp_path, tmp_path.parent / "bad.gs.h5ad", chunk_bytes=8)
    assert not (tmp_path.parent / "bad.gs.h5ad").exists()


@pytest.mark.parametrize("lines, error, message", [
    ("a\ta.txt\nb\tmissing.txt\n", FileNotFoundError,
     (r"list\.txt', line 2: the dump 'missing\.txt' of sample 'b' does not exist \(looked for '.*missing\.txt'; "
      r"paths are relative to the list file's folder\)")),
    ("a\ta.txt\nb\tsub\n", FileNotFoundError, r"line 2: the dump 'sub' of sample 'b' is a folder, not a file"),
    ("# ids\na\ta.txt\n\na\tb.txt\n", ValueError, r"list\.txt', line 4: the sample id 'a' is also on line 2"),
    ("a\ta.txt\nb\ta.txt\n", ValueError, r"line 2: the dump 'a\.txt' is also the file of line 1"),
    ("a\ta.txt\nb b.txt\n", ValueError, r"line 2: 'b b\.txt' is not 'SAMPLE<TAB>PATH'"),
    ("a\ta.txt\t3\n", ValueError, r"line 1: 'a\\ta\.txt\\t3' is not 'SAMPLE<TAB>PATH'"),
    ("# nothing\n\n", ValueError, r"list\.txt' lists no samples"),
])
def test_bad_list_files(tmp_path, lines, error, message):
    _write(tmp_path / "a.txt", "AAA\t1\n")
    _write(tmp_path / "b.txt", "CCC\t1\n")
    (tmp_path / "sub").mkdir()
    listed = _write(tmp_path / "list.txt", lines)
    with pytest.raises(error, match=message):
        read_dumps(listed)


def test_bad_folders(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(IsADirectoryError, match=r"empty' is a folder, not a data file\. .* this one holds no files"):
        read_dumps(empty)
    with pytest.raises(IsADirectoryError, match=r"is a folder, not a data file"):
        gs.io.read(empty)
    twice = tmp_path / "twice"
    twice.mkdir()
    _write(twice / "S1.txt", "AAA\t1\n")
    _write(twice / "S1.txt.gz", "AAA\t1\n", "gz")
    with pytest.raises(ValueError,
                       match=r"The files 'S1\.txt' and 'S1\.txt\.gz' of the folder .* are both sample 'S1'"):
        gs.io.read(twice)
    tables = tmp_path / "tables"
    tables.mkdir()
    _write(tables / "t.csv", "id,a\ns,1\n")
    with pytest.raises(IsADirectoryError, match=r"a folder is read only when it holds k-mer count dumps"):
        gs.io.read(tables)
    with pytest.raises(ValueError,
                       match=r"'samples' parameter of read_dumps must name samples of .*tables', each once; 1 are not "
                       r"among them: 'S9'\. "
                       r"Its samples: 't\.csv'"):
        read_dumps(tables, samples=["S9"])


def test_samples_parameter_and_the_format_option(tmp_path):
    _write(tmp_path / "a.txt", "AAA\t1\n")
    _write(tmp_path / "b.txt", "CCC\t1\n")
    listed = _write(tmp_path / "list.tsv", "a\ta.txt\nb\tb.txt\n")
    assert gs.io.format_of(listed) == "tsv"  # a .tsv name means a table...
    assert gs.io.read(listed, format="dumps").sample_ids.tolist() == ["a", "b"]  # ...unless told
    assert read_dumps(listed, samples=["b"]).feature_names.tolist() == ["CCC"]  # only b's dump is read
    for bad in (["a", "a"], [], "a"):
        with pytest.raises(ValueError, match=r"must name samples of .*list\.tsv', each once\. |not one string"):
            read_dumps(listed, samples=bad)


def test_tables_are_not_taken_for_lists(tmp_path):
    _write(tmp_path / "a.txt", "AAA\t1\n")
    table = _write(tmp_path / "t.txt", "id\tf1\ns1\t3\n")  # two columns, but no file named '3' or 'f1'
    assert gs.io.format_of(table) == "tsv"
    assert gs.io.format_of(_write(tmp_path / "t2.txt", "id\tf1\tf2\ns1\t3\t4\n")) == "tsv"


# ---------------------------------------------------------------------------------------------
# real counters: KMC and Jellyfish against counts made here
# ---------------------------------------------------------------------------------------------

_COMPLEMENT = str.maketrans("ACGT", "TGCA")


def _canonical_counts(contigs, k):
    counts = {}
    for seq in contigs:
        for i in range(len(seq) - k + 1):
            kmer = seq[i:i + k]
            if set(kmer) <= set("ACGT"):
                kmer = min(kmer, kmer.translate(_COMPLEMENT)[::-1])
                counts[kmer] = counts.get(kmer, 0) + 1
    return counts


def _genomes(tmp_path, n=4, seed=0):
    rng = np.random.default_rng(seed)
    repeat = "".join(rng.choice(list("ACGT"), 40))
    out = {}
    for g in range(n):
        contigs = []
        for _c in range(2):
            seq = "".join(rng.choice(list("ACGT"), int(rng.integers(800, 3000))))
            seq = seq[:300] + repeat * (g + 1) + seq[300:500] + "NNNNN" + seq[500:]  # repeats, and Ns
            contigs.append(seq)
        fasta = tmp_path / f"genome{g}.fa"
        fasta.write_text("".join(f">g{g}_contig{c}\n{s}\n" for c, s in enumerate(contigs)))
        out[f"genome{g}"] = (fasta, contigs)
    return out


def _run(*args):
    subprocess.run([str(a) for a in args], check=True, capture_output=True)


def test_kmc_dumps_match_counts_made_here(tmp_path):
    if shutil.which("kmc") is None or shutil.which("kmc_tools") is None:
        pytest.skip("KMC (kmc, kmc_tools) is not installed (apt-get install kmc)")
    genomes = _genomes(tmp_path)
    lines = []
    for name, (fasta, _) in genomes.items():
        work = tmp_path / f"work-{name}"
        work.mkdir()
        _run("kmc", "-k11", "-ci1", "-fm", fasta, tmp_path / name, work)
        _run("kmc_tools", "transform", tmp_path / name, "dump", tmp_path / f"{name}.kmc.txt")
        lines.append(f"{name}\t{name}.kmc.txt\n")
    listed = _write(tmp_path / "kmc-samples", "".join(lines))
    expected = {name: _canonical_counts(contigs, 11) for name, (_, contigs) in genomes.items()}
    assert max(max(c.values()) for c in expected.values()) > 1  # the repeats are counted
    _check(gs.io.read(listed), expected, list(genomes))
    path, _ = convert_dumps(listed, tmp_path / "kmc.gs.h5ad", chunk_bytes=1 << 12)
    _check(gs.io.open_store(path).to_dataset(), expected, list(genomes))
    # the KMC database left in a folder of dumps: named, with the command that dumps it
    folder = tmp_path / "folder"
    folder.mkdir()
    name = next(iter(genomes))
    for suffix in (".kmc.txt", ".kmc_pre", ".kmc_suf"):
        shutil.copy(tmp_path / f"{name}{suffix}", folder / f"{name}{suffix}")
    assert gs.io.format_of(folder) == "dumps"
    with pytest.raises(ValueError, match=r"kmc_pre', line 1: the line holds a NUL byte .* This is a KMC database file, "
                                         r"not a text dump: dump it with `kmc_tools transform DB dump DB\.txt`"):
        gs.io.read(folder)


def test_jellyfish_dumps_match_counts_made_here(tmp_path):
    if shutil.which("jellyfish") is None:
        pytest.skip("Jellyfish is not installed (apt-get install jellyfish)")
    genomes = _genomes(tmp_path, seed=1)
    folder = tmp_path / "jf"
    folder.mkdir()
    for name, (fasta, _) in genomes.items():
        db = tmp_path / f"{name}.jf"
        _run("jellyfish", "count", "-m", "11", "-s", "1M", "-C", "-o", db, fasta)
        dump = subprocess.run(["jellyfish", "dump", "-c", "-t", str(db)], check=True, capture_output=True).stdout
        (folder / f"{name}.txt.gz").write_bytes(gzip.compress(dump))
    # `jellyfish dump -c` without -t: space-separated
    plain = subprocess.run(["jellyfish", "dump", "-c", str(tmp_path / "genome0.jf")], check=True,
                           capture_output=True).stdout
    assert b"\t" not in plain and b" " in plain
    (folder / "genome0.txt.gz").write_bytes(gzip.compress(plain))
    expected = {name: _canonical_counts(contigs, 11) for name, (_, contigs) in genomes.items()}
    _check(gs.io.read(folder), expected, list(genomes))


@pytest.mark.parametrize("dumps, message", [
    ({"a.txt": "ACGT\t3\n", "b.txt": "ACGTA\t2\n"},
     r"The k-mers 'ACGT' \('.*a\.txt', line 1\) and 'ACGTA' \('.*b\.txt', line 1\) have different lengths \(4 and "
     r"5\): the dumps of one analysis come from one k-mer length"),
    ({"a.txt": "ACGT\t3\nACG\t1\n"}, r"'ACGT' .* and 'ACG' \('.*a\.txt', line 2\) have different lengths"),
    ({"a.txt": "ACGT\t3\n", "b.txt": "acgt\t2\nACGT\t1\n"},
     r"The k-mer 'acgt' \('.*b\.txt', line 1\) holds lower-case letters: k-mer counters write upper case"),
    ({"a.txt": "ACgT\t3\n"}, r"The k-mer 'ACgT' .* holds lower-case letters"),
])
def test_one_k_and_upper_case_in_every_dump(tmp_path, dumps, message):
    for name, text in dumps.items():
        _write(tmp_path / name, text)
    with pytest.raises(ValueError, match=message):
        read_dumps(tmp_path)
    with pytest.raises(ValueError, match=message):
        gs.io.convert_dumps(tmp_path, tmp_path / "out.gs.h5ad")
    assert not (tmp_path / "out.gs.h5ad").exists()


def test_entries_of_a_dumps_folder_that_are_not_dump_files_are_refused(tmp_path):
    import os

    _write(tmp_path / "a.txt", "ACGT\t3\n")
    _write(tmp_path / ".hidden", "anything")  # hidden entries are skipped, as before
    os.mkfifo(tmp_path / "b.fifo")
    with pytest.raises(ValueError, match=r"holds 'b\.fifo', which is not a file \(a folder, a FIFO, a socket or a "
                                         r"device\): every entry of the folder that does not start with '\.'"):
        read_dumps(tmp_path)
    (tmp_path / "b.fifo").unlink()
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match=r"holds 'sub', which is not a file"):
        read_dumps(tmp_path)
    (tmp_path / "sub").rmdir()
    (tmp_path / "c.txt").symlink_to(tmp_path / "a.txt")
    with pytest.raises(ValueError, match=r"The files 'a\.txt' and 'c\.txt' of the folder .* are the same file"):
        read_dumps(tmp_path)
    (tmp_path / "c.txt").unlink()
    assert read_dumps(tmp_path).sample_ids.tolist() == ["a"]


def test_a_list_naming_a_device_or_another_kind_of_file(tmp_path):
    """A device is named as such (not "does not exist"); a file that is no dump is described,
    its lines not echoed (a list naming /etc/passwd must not put its lines into a message)."""
    (tmp_path / "secret.txt").write_text("root:x:0:0:root:/root:/bin/bash\n")
    listed = _write(tmp_path / "list.txt", "x\t/dev/zero\n")
    with pytest.raises(FileNotFoundError, match=r"the dump '/dev/zero' of sample 'x' is not a regular file \(a FIFO, "
                                                r"a socket or a device\)"):
        read_dumps(listed)
    listed = _write(tmp_path / "list2.txt", f"x\t{tmp_path / 'secret.txt'}\n")
    with pytest.raises(ValueError, match=r"line 1: the line \(of 31 characters, \['/', ':'\] among them\) is not "
                                         r"'KMER COUNT'") as info:
        read_dumps(listed)
    assert "root" not in str(info.value).replace(str(tmp_path), "")


@pytest.mark.parametrize("first, message", [
    ("", r"'.*a\.txt' holds no k-mer lines"),
    ("ACGT\t-2\n", r"'.*a\.txt', line 1: the count '-2' of the k-mer 'ACGT' is not a non-negative integer"),
    ("ACGT\t2.5\n", r"'.*a\.txt', line 1: the count '2\.5' of the k-mer 'ACGT' is not a non-negative integer"),
])
def test_a_folder_whose_first_dump_is_empty_or_damaged_is_read_as_dumps(tmp_path, first, message):
    """The folder is told to be dumps from the first dump that holds a line, so the reader names
    the faulty dump (not "is a folder, not a data file")."""
    _write(tmp_path / "a.txt", first)
    _write(tmp_path / "b.txt", "ACGT\t2\nCCGT\t1\n")
    assert gs.io.format_of(tmp_path) == "dumps"
    with pytest.raises(ValueError, match=message):
        gs.io.read(tmp_path)


def test_dumps_above_the_budget_are_scored_from_a_temporary_store(tmp_path, monkeypatch, capsys):
    """Dumps given to a command whose counts pass the memory budget are written to a temporary
    store and scored from it: the same table, byte for byte, and nothing left behind."""
    import tempfile

    from genosift.core import engine
    from genosift.io.dumps import read_dumps_within

    rng = np.random.default_rng(21)
    counts = _random_counts(rng, n_samples=12, pool=150)
    listed = _list_file(tmp_path, counts, rng)
    meta = tmp_path / "meta.tsv"
    meta.write_text("id\tpheno\n" + "".join(f"{s}\t{'case' if i % 3 else 'control'}\n" for i, s in enumerate(counts)))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))

    # the library call: the counts in memory within the budget, a store beyond it, the same values
    ds, none = read_dumps_within(listed, 1 << 30, tmp_path / "a.gs.h5ad")
    assert none is None and ds.X.dtype == np.float64 and not (tmp_path / "a.gs.h5ad").exists()
    _check(ds, counts, list(counts))
    _check(read_dumps_within(listed, 1 << 30, tmp_path / "a.gs.h5ad", samples=["S3", "S1"])[0],
           {s: counts[s] for s in ("S3", "S1")}, ["S3", "S1"])
    none, store = read_dumps_within(listed, 64, tmp_path / "b.gs.h5ad")
    assert none is None
    got, expected = _store_arrays(store), _store_arrays(convert_dumps(listed, tmp_path / "c.gs.h5ad")[0])
    assert sorted(got) == sorted(expected)  # the store convert_dumps writes, array for array
    for key, values in expected.items():
        np.testing.assert_array_equal(got[key], values, err_msg=key)
    _check(gs.io.open_store(store).to_dataset(), counts, list(counts))

    for binary in ([], ["--binary"]):
        tables = []
        for budget, option in ((engine.CHUNK_BYTES, []), (64, []), (engine.CHUNK_BYTES, ["--chunk-bytes", "64"])):
            monkeypatch.setattr(engine, "CHUNK_BYTES", budget)
            out = tmp_path / "rank.tsv"
            assert main(["score", str(listed), "--meta", str(meta), "--id", "id", "--target", "pheno", "--method",
                         "chi2", *binary, *option, "-o", str(out), "--force"]) == 0
            tables.append(out.read_bytes())
            said = capsys.readouterr()
            assert ("written to a temporary store" in said.out + said.err) == (budget == 64 or bool(option))
            assert list(temporary.iterdir()) == []  # the temporary store is gone with the command
        assert all(table == tables[0] for table in tables)
