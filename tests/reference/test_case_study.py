"""The case-study benchmark at a tiny scale: its generator is seeded, its text is what it meant to
write, the store holds exactly those counts, and fisher ranks the planted markers first."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import load_benchmark

ISOLATES, KMERS = 600, 2420  # --scale 0.002 with 600 isolates


bench = load_benchmark("bench_case_study")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The whole benchmark (convert and score as commands, no models), its work folder kept."""
    folder = tmp_path_factory.mktemp("case") / "run"
    report = folder.parent / "report.md"
    code = bench.main(["--scale", str(KMERS / bench.TENTH_KMERS), "--isolates", str(ISOLATES), "--fit-scale", "0",
                       "--no-evaluate", "--folder", str(folder), "--keep", "--output", str(report)])
    return code, folder, report.read_text()


def test_the_benchmark_runs_and_fisher_ranks_the_planted_markers_first(run):
    code, folder, text = run
    assert code == 0
    assert "60 of 60 in fisher's top 60; the best k-mer that is no marker ranks 61" in text
    assert f"{ISOLATES:,} x {KMERS:,}" in text and "as generated" in text
    assert "| convert |" in text and "| score fisher |" in text and "| ok |" in text


def test_the_store_holds_the_generated_counts(run):
    from genosift.io.store import open_store

    _, folder, _ = run
    stored = open_store(folder / "case.gs.h5ad").to_dataset()
    X, names, ids = bench.generated_matrix(KMERS, ISOLATES)
    rows = {s: i for i, s in enumerate(ids)}
    cols = {k: j for j, k in enumerate(names)}
    assert sorted(stored.sample_ids) == sorted(ids) and sorted(stored.feature_names) == sorted(names)
    order_rows = np.array([rows[s] for s in stored.sample_ids])
    order_cols = np.array([cols[k] for k in stored.feature_names])
    expected = X[order_rows][:, order_cols]
    assert (stored.X != expected).nnz == 0
    assert stored.X.nnz == X.nnz
    assert set(stored.obs["region"]) == {f"region_{r:02d}" for r in range(1, 13)}


def test_the_generator_is_seeded(tmp_path):
    a = bench.write_case_study(tmp_path / "a", n_kmers=500, n_isolates=100, seed=7)
    b = bench.write_case_study(tmp_path / "b", n_kmers=500, n_isolates=100, seed=7)
    c = bench.write_case_study(tmp_path / "c", n_kmers=500, n_isolates=100, seed=8)
    assert a["kmers"].read_bytes() == b["kmers"].read_bytes()
    assert a["meta"].read_bytes() == b["meta"].read_bytes()
    assert a["markers"] == b["markers"] and a["markers"] != c["markers"]
    assert a["kmers"].read_bytes() != c["kmers"].read_bytes()


def test_the_text_is_the_layout_of_kmer_counters_and_parses_to_the_generated_counts(tmp_path):
    import gzip

    from genosift.io import read_kmers

    made = bench.write_case_study(tmp_path, n_kmers=300, n_isolates=80, seed=3)
    first = gzip.decompress(made["kmers"].read_bytes()).split(b"\n", 1)[0].decode()
    kmer, bar, *entries = first.split(" ")
    assert len(kmer) == 31 and set(kmer) <= set("ACGT") and bar == "|"
    assert all(e.startswith("EC") and int(e.split(":")[1]) >= 1 for e in entries)
    ds = read_kmers(made["kmers"])
    X, names, ids = bench.generated_matrix(300, 80, seed=3)
    assert ds.X.nnz == X.nnz == made["nnz"] and len(set(names)) == 300
    cols = {k: j for j, k in enumerate(names)}
    rows = {s: i for i, s in enumerate(ids)}
    expected = X[[rows[s] for s in ds.sample_ids]][:, [cols[k] for k in ds.feature_names]]
    assert (ds.X != expected).nnz == 0
    assert np.array_equal(np.sort(made["carriers"]), np.sort(np.diff(X.tocsc().indptr)))


def test_the_spectrum_has_rare_accessory_and_near_core_kmers():
    X, _, _ = bench.generated_matrix(4000, 1000, seed=1)
    carriers = np.diff(X.tocsc().indptr)
    assert np.mean(carriers <= 10) > 0.6  # most k-mers rare
    assert 0.02 < np.mean(carriers > 900) < 0.1  # a near-core block
    assert np.mean((carriers > 10) & (carriers <= 900)) > 0.1  # and a middle
