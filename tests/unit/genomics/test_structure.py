"""Principal coordinates of the samples: against MDS computed from the full distance matrix, in every
input form (dense, sparse, DataFrame, store read in many blocks), and against SEER's own kmds."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from test_real_tools import seer_example  # noqa: F401  (the fixture of SEER's example files)

import genosift as gs
from genosift.genomics import structure
from genosift.genomics.structure import principal_coordinates
from genosift.io import Dataset, open_store, read_kmers, write_store


def _double_centred(X, metric, distinct=True):
    """``B = -1/2 J P J`` by its definition (``P``: every squared distance, kmds's squared once
    more), over the distinct columns of ``X`` (each once, as ``distinct=True`` counts them) or
    every column."""
    X = np.asarray(X, dtype=np.float64)
    if distinct:
        X = X[:, np.sort(np.unique(X, axis=1, return_index=True)[1])]
    diff = X[:, None, :] - X[None, :, :]
    squared = (diff ** 2).sum(axis=2)
    P = (squared / X.shape[1]) ** 2 if metric == "kmds" else squared
    n = len(X)
    J = np.eye(n) - np.full((n, n), 1.0 / n)
    return -0.5 * J @ P @ J


def _reference(X, k, metric, distinct=True):
    """Classical MDS by its definition (``_double_centred``, numpy's full eigh): the top ``k``
    coordinates, their eigenvalues and the sum of every positive eigenvalue."""
    values, vectors = np.linalg.eigh(_double_centred(X, metric, distinct))
    order = np.argsort(values)[::-1][:k]
    return vectors[:, order] * np.sqrt(values[order]), values[order], values[values > 0].sum()


def _assert_up_to_sign(got, ref, rtol=1e-9):
    for c in range(ref.shape[1]):
        sign = np.sign(got[:, c] @ ref[:, c])
        scale = np.abs(ref[:, c]).max()
        np.testing.assert_allclose(sign * got[:, c], ref[:, c], rtol=0, atol=rtol * scale, err_msg=f"PC{c + 1}")


def _lineages(n=40, p=300, seed=0, density=0.5, noise=0.08):
    """Presence/absence of three lineages with their own features and noise."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, n)
    base = rng.random((3, p)) < density
    X = base[group] ^ (rng.random((n, p)) < noise)
    return X.astype(np.float64)


@pytest.mark.parametrize("metric", ["kmds", "euclidean"])
def test_coordinates_equal_mds_of_the_full_distance_matrix(metric):
    X = _lineages()
    got = principal_coordinates(X, 4, metric=metric)
    ref, values, positive = _reference(X, 4, metric)
    _assert_up_to_sign(got.to_numpy(), ref)
    np.testing.assert_allclose(got.attrs["eigenvalues"], values, rtol=1e-10)
    np.testing.assert_allclose(got.attrs["explained"], values / positive, rtol=1e-10)
    assert list(got.columns) == ["PC1", "PC2", "PC3", "PC4"] and got.attrs["metric"] == metric
    coords = got.to_numpy()
    top = np.abs(coords).argmax(axis=0)
    assert (coords[top, np.arange(4)] > 0).all()  # the sign convention


def test_euclidean_is_principal_component_analysis():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 12)) * np.arange(1, 13) + 1000.0  # a large offset: centred exactly per block
    got = principal_coordinates(X, 3, metric="euclidean", chunk_bytes=30 * 8 * 5)
    U, S, _ = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    _assert_up_to_sign(got.to_numpy(), U[:, :3] * S[:3], rtol=1e-8)
    np.testing.assert_allclose(got.attrs["explained"], S[:3] ** 2 / (S ** 2).sum(), rtol=1e-9)
    assert got.attrs["binary"] is False


@pytest.mark.parametrize("metric", ["euclidean"])  # (kmds takes every eigenvalue from one reduction, any n)
def test_lanczos_and_lapack_agree(monkeypatch, metric):
    X = _lineages(n=120, p=400, seed=7, noise=0.2)
    lapack = principal_coordinates(X, 5, metric=metric)
    monkeypatch.setattr(structure, "LANCZOS_FROM", 100)
    lanczos = principal_coordinates(X, 5, metric=metric)
    np.testing.assert_allclose(lanczos.to_numpy(), lapack.to_numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(lanczos.attrs["eigenvalues"], lapack.attrs["eigenvalues"], rtol=1e-12)
    _assert_up_to_sign(lanczos.to_numpy(), _reference(X, 5, metric)[0])


def test_binary_reads_counts_as_presence():
    X = _lineages(seed=4)
    counts = X * np.random.default_rng(1).integers(1, 9, X.shape)
    a = principal_coordinates(counts, 3)  # kmds reads presence by default
    b = principal_coordinates(X, 3)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=0, atol=1e-12)
    c = principal_coordinates(counts, 3, metric="euclidean", binary=True)
    _assert_up_to_sign(c.to_numpy(), _reference(X, 3, "euclidean")[0])


@pytest.mark.parametrize("metric", ["kmds", "euclidean"])
@pytest.mark.parametrize("density, sparse_products", [(0.5, False), (0.004, True), (0.5, "exact")])
def test_every_input_form_gives_the_same_coordinates(tmp_path, monkeypatch, density, sparse_products, metric):
    """Through the exact integer products (presence/absence: every form the same bits), or, for
    values that are not integers, the centred dense and the sparse products."""
    X = _lineages(n=36, p=2000, seed=3, density=density, noise=density / 4)
    X[:, 100:200] = X[:, :100]  # copies: the exact path multiplies each distinct column once
    choices = []
    decide = structure._sparse_pays
    monkeypatch.setattr(structure, "_sparse_pays", lambda block: choices.append(decide(block)) or choices[-1])
    if sparse_products != "exact":
        monkeypatch.setattr(structure._ExactProducts, "add", lambda self, block: False)
    ids = np.array([f"s{i}" for i in range(len(X))], dtype=object)
    names = np.array([f"k{j}" for j in range(X.shape[1])], dtype=object)
    # every column counted (distinct=False), so that the copies reach the products: the distinct
    # columns once are tests/unit/genomics/test_structure_patterns.py's
    ref = principal_coordinates(pd.DataFrame(X, index=pd.Index(ids, name="sample")), 3, metric=metric, distinct=False)
    _assert_up_to_sign(ref.to_numpy(), _reference(X, 3, metric, distinct=False)[0])
    frame = pd.DataFrame(X, index=pd.Index(ids, name="id"), columns=names)
    forms = {"csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X), "frame": frame,
             "sparse frame": frame.astype(pd.SparseDtype(float, 0.0)), "dataset": Dataset(sp.csr_matrix(X), ids, names)}
    for kind in ("sparse", "dense"):
        M = sp.csr_matrix(X) if kind == "sparse" else X
        forms[f"{kind} store"] = write_store(Dataset(M, ids, names), tmp_path / f"{kind}.gs.h5ad")
    forms["Store"] = open_store(forms["sparse store"])
    for name, form in forms.items():
        got = principal_coordinates(form, 3, chunk_bytes=36 * 8 * 64, metric=metric, distinct=False)  # <= 64 a block
        np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), rtol=0, atol=1e-10, err_msg=name)
        assert got.index.tolist() == ids.tolist() or name in ("csr", "csc"), name
        np.testing.assert_allclose(got.attrs["eigenvalues"], ref.attrs["eigenvalues"], rtol=1e-10, err_msg=name)
        if sparse_products == "exact":
            assert got.to_numpy().tobytes() == ref.to_numpy().tobytes(), name
    if sparse_products == "exact":
        assert not choices  # every block exact
    else:
        assert choices and any(choices) == sparse_products  # some blocks multiplied as sparse, or none


def test_samples_choose_and_order_the_rows(tmp_path):
    X = _lineages(n=30, seed=5)
    ids = np.array([f"s{i}" for i in range(30)], dtype=object)
    path = write_store(Dataset(sp.csr_matrix(X * 3), ids, np.array([f"k{j}" for j in range(X.shape[1])])),
                       tmp_path / "d.gs.h5ad")
    pick = [f"s{i}" for i in (29, 3, 17, 8, 0, 11, 25, 4, 14, 20, 6)]
    got = principal_coordinates(str(path), 2, samples=pick, chunk_bytes=4096)
    rows = [int(s[1:]) for s in pick]
    assert got.index.tolist() == pick
    np.testing.assert_allclose(got.to_numpy(), principal_coordinates(X[rows], 2).to_numpy(), atol=1e-12)
    with pytest.raises(ValueError, match="must be sample ids of the data; 1 of the 2 given are not: 'nope'"):
        principal_coordinates(path, 2, samples=["s1", "nope"])


def test_errors_name_the_problem():
    X = _lineages(n=10)
    for k in (0, 10, 2.0, True):
        with pytest.raises(ValueError, match="'n_components' parameter of principal_coordinates"):
            principal_coordinates(X, k)
    with pytest.raises(ValueError, match="'metric' parameter"):
        principal_coordinates(X, 2, metric="jaccard")
    with pytest.raises(ValueError, match="constant data set"):
        principal_coordinates(np.ones((6, 4)), 2)
    with pytest.raises(ValueError, match="vary in only 1 dimension"):
        principal_coordinates(np.repeat([[0.0, 1.0], [1.0, 0.0]], 3, axis=0), 2)
    bad = X.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        principal_coordinates(bad, 2, metric="euclidean")
    with pytest.raises(ValueError, match=r"The 'samples' of principal_coordinates are ids \('a'\), but these data "
                                         "have no sample ids: give a boolean mask of 10 values or row positions"):
        principal_coordinates(X, 2, samples=["a"])
    with pytest.raises(ValueError, match=r"'samples' parameter of principal_coordinates must be a boolean mask of 10 "
                                         r"values or row positions in \[0, 10\). Got \[10\] instead"):
        principal_coordinates(X, 2, samples=[0, 10])


def test_exported_lazily():
    assert gs.principal_coordinates is principal_coordinates


def _kmds(kmers, pheno, folder, n_components):
    """Run SEER's kmds (one thread: its threaded distances skip pairs) and read its coordinates."""
    h5py = pytest.importorskip("h5py")
    subprocess.run(["kmds", "-k", str(kmers), "-p", str(pheno), "--pc", str(n_components), "--no_filtering",
                    "-o", str(folder / "structure")], capture_output=True, text=True, check=True, cwd=folder)
    with h5py.File(folder / "structure.dsm", "r") as f:
        coords = f["dataset"][()].T  # armadillo writes the matrix column by column
    ids = (folder / "structure.dsm.samples").read_text().split()
    return pd.DataFrame(coords, index=ids)


def test_equals_seers_kmds_on_its_example(seer_example, tmp_path):  # noqa: F811
    """kmds's squared distances are (share of k-mers carried by one sample only)^2; its coordinates
    are each divided by their largest magnitude (sign kept): ours divided alike are the same."""
    if shutil.which("kmds") is None:
        pytest.skip("SEER's kmds is not installed (apt-get install seer)")
    kmers, pheno, _ = seer_example
    theirs = _kmds(kmers, pheno, tmp_path, 3)
    phenotyped = pd.read_csv(pheno, sep=r"\s+", header=None, dtype=str)[1].tolist()
    with pytest.warns(UserWarning):  # samples of the k-mer file without a phenotype, and the reverse
        ds = read_kmers(kmers, samples=phenotyped)
    ours = principal_coordinates(ds, 3, samples=list(theirs.index), distinct=False, chunk_bytes=200 * 8 * 16)
    assert len(ours) == 200 and ours.attrs["n_features"] == 200
    for c in range(3):
        a = ours.iloc[:, c].to_numpy() / np.abs(ours.iloc[:, c]).max()
        b = theirs.iloc[:, c].to_numpy()
        assert np.abs(b).max() == pytest.approx(1.0)
        np.testing.assert_allclose(np.sign(a @ b) * a, b, rtol=0, atol=1e-10)
    everyone = read_kmers(kmers)
    some = list(everyone.sample_ids[::8])
    from_file = principal_coordinates(kmers, 2, samples=some)  # a k-mer file path: read into memory, sparse
    pd.testing.assert_frame_equal(from_file, principal_coordinates(everyone, 2, samples=some))
    assert from_file.index.tolist() == some and len(some) == 302


@pytest.mark.slow
def test_memory_of_a_large_store_is_bounded(tmp_path):
    if not Path("/proc/self/status").exists():
        pytest.skip("reads the peak memory from /proc (Linux)")
    """1,000 samples x 200,000 presence/absence features: the n x n matrix and the blocks only."""
    path = tmp_path / "big.gs.h5ad"
    rng = np.random.default_rng(0)
    n, p = 1000, 200_000
    blocks = [sp.random(n, 20_000, density=0.1, format="csr", random_state=rng, dtype=np.float64)
              for _ in range(p // 20_000)]
    X = sp.hstack(blocks, format="csr")
    X.data[:] = 1.0
    write_store(Dataset(X, np.array([f"s{i}" for i in range(n)]), np.array([f"k{j}" for j in range(p)])), path)
    del X, blocks
    # VmHWM: the peak of this process's own memory (ru_maxrss would count the parent's at exec)
    code = ("import re; import genosift as gs, numpy, scipy.linalg, pandas, h5py\n"
            "peak = lambda: int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
            "before = peak()\n"
            f"pcs = gs.principal_coordinates({str(path)!r}, 10, chunk_bytes=16 * 2**20)\n"
            "print(before, peak(), pcs.shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    before, after = int(out[0]) * 1024, int(out[1]) * 1024
    print(f"peak RSS {after / 2**20:.0f} MiB, {(after - before) / 2**20:.0f} MiB above the imports")
    assert after - before < 224 * 2**20, (before, after)  # measured: 147 MiB, 41 of them arrays


def test_exact_products_take_integers_whose_sums_stay_below_2_to_the_53():
    gram = np.zeros((2, 2), order="F")
    exact = structure._ExactProducts(gram)
    assert not exact.add(np.array([[0.5, 1.0], [1.0, 0.0]]))  # not integers
    assert not exact.add(np.full((2, 4), 2.0**26))  # 4 x 2^52 = 2^54: sums could round
    A = np.array([[1.0, 3.0, 1.0], [-2.0, 4.0, -2.0]])  # a copy of a column: counted twice
    assert exact.add(sp.csr_matrix(A)) and exact.add(A)
    assert np.array_equal(np.triu(gram), np.triu(2 * A @ A.T))
    assert not exact.add(np.array([[np.inf, 0.0], [0.0, 0.0]]))


def _clonal(lineages, per_lineage, seed):
    """Presence/absence of a clonal population: each lineage's markers, carried by its members
    with a few losses, and private features of single genomes (the scree's long tail)."""
    rng = np.random.default_rng(seed)
    n = lineages * per_lineage
    member = np.repeat(np.arange(lineages), per_lineage)
    markers = np.repeat(np.arange(lineages), 60)
    X = (member[:, None] == markers[None, :]) & (rng.random((n, markers.size)) > 0.05)
    private = rng.random((n, 3 * n)) < 1.0 / n
    return np.hstack([X, private]).astype(np.float64)


@pytest.mark.parametrize("lineages,per_lineage", [(4, 12), (8, 12), (8, 50), (16, 12)])
def test_auto_keeps_one_coordinate_fewer_than_the_lineages(lineages, per_lineage):
    X = _clonal(lineages, per_lineage, seed=lineages + per_lineage)
    pcs = gs.principal_coordinates(X, "auto")
    assert pcs.shape == (X.shape[0], lineages - 1)
    assert len(pcs.attrs["scree"]) == min(30, X.shape[0] - 1)
    assert f"{lineages - 1} principal coordinate(s)" in pcs.attrs["rule"]
    fixed = gs.principal_coordinates(X, lineages - 1)
    np.testing.assert_allclose(pcs.to_numpy(), fixed.to_numpy(), rtol=1e-10, atol=1e-12)
    assert pcs.attrs["explained"] == pytest.approx(fixed.attrs["explained"], rel=1e-12)


def test_explained_shares_are_of_the_positive_eigenvalues():
    """kmds's distances are not euclidean: its double-centred matrix has negative eigenvalues, and
    shares of the trace would add up to more than 1. Shares are of the sum of the positive
    eigenvalues: in [0, 1], adding up to 1 over every positive coordinate."""
    X = _clonal(6, 10, seed=3)
    every = np.linalg.eigvalsh(_double_centred(X, "kmds"))[::-1]
    positive = every[every > 0].sum()
    assert every[-1] < -0.01 * every[0] and positive > 1.02 * np.trace(_double_centred(X, "kmds"))  # trace: > 100 %
    k = int(np.sum(every > 1e-9 * every[0]))
    pcs = principal_coordinates(X, k)
    shares = np.array(pcs.attrs["explained"])
    np.testing.assert_allclose(shares, every[:k] / positive, rtol=1e-10)
    assert (shares >= 0).all() and (shares <= 1).all() and shares.sum() == pytest.approx(1.0, abs=1e-10)
    auto = principal_coordinates(X, "auto")
    chosen = auto.shape[1]
    np.testing.assert_allclose(auto.attrs["scree"], every[:30] / positive, rtol=1e-10)
    assert sum(auto.attrs["scree"]) <= 1 + 1e-12 and chosen == 5
    assert f"PC1-PC{chosen} explain {shares[:chosen].sum():.1%}" in auto.attrs["rule"]
    # 7 equal eigenvalues (8 lineages of one size, each with its own markers): the vectors of one
    # reduction stay orthonormal and span the reference's
    member = np.repeat(np.arange(8), 20)
    X = (member[:, None] == np.repeat(np.arange(8), 60)[None, :]).astype(float)
    pcs = principal_coordinates(X, 7)
    ref, values, positive = _reference(X, 7, "kmds")
    np.testing.assert_allclose(pcs.attrs["eigenvalues"], values, rtol=1e-10)
    unit = pcs.to_numpy() / np.sqrt(values)
    np.testing.assert_allclose(unit.T @ unit, np.eye(7), atol=1e-10)
    np.testing.assert_allclose(pcs.to_numpy() @ pcs.to_numpy().T, ref @ ref.T, atol=1e-10)  # the same span


def test_choose_components_reads_the_scree():
    from genosift.genomics.structure import choose_components

    values = np.array([30.0, 29.0, 28.0, 3.0, 2.9, 2.8, 0.5, 0.01])
    assert choose_components(values, 100.0)[0] == 3
    # the drop out of the coordinates above 1 % counts (20 -> 0.5); one after a negligible one
    # (0.5 % -> 0.001 %) does not
    assert choose_components(np.array([30.0, 20.0, 0.5, 0.001]), 100.0)[0] == 2
    k, rule = choose_components(np.array([0.9, 0.05]), 100.0)  # nothing above 1 %: one coordinate
    assert k == 1 and "no coordinate explains" in rule
    assert choose_components(np.array([40.0]), 100.0)[0] == 1
    with pytest.raises(ValueError, match="n_components"):
        gs.principal_coordinates(np.eye(5), "many")
