"""Files as the tools our users run write them: SEER's example k-mers (dsm-framework layout),
fsm-lite output, names that say nothing of the format, samples on no k-mer line, and
presence/absence scoring, against SEER's own printed chi-square p-values."""
from __future__ import annotations

import bz2
import gzip
import lzma
import math
import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from plain_methods import plain
from scipy.stats import chi2_contingency

import genosift as gs
from genosift.cli import main
from genosift.io import Dataset, attach_metadata, convert_kmers, format_of, open_store, read, read_kmers, write_store

SEER_EXAMPLES = Path("/usr/share/doc/seer/examples")
#: SEER reads a phenotyped sample on no k-mer line as carrying none of them; genosift refuses such a
#: sample by default (a misspelt id, almost always), and reads it SEER's way when asked to.
SEER_READING = ["--absent-samples", "zeros"]


@pytest.fixture(scope="module")
def seer_example():
    """SEER's example k-mers and the 200-sample phenotype of its own tests (Debian's ``seer``)."""
    kmers = SEER_EXAMPLES / "example_kmers.gz"
    if not kmers.exists():
        pytest.skip(f"SEER's examples are not installed ({kmers}); apt-get install seer")
    return kmers, SEER_EXAMPLES / "subset.pheno", SEER_EXAMPLES / "test2.o.txt"


def _pheno_table(pheno, out):
    """SEER's phenotype file (FID IID PHENO, no header) as a TSV with a header."""
    frame = pd.read_csv(pheno, sep=r"\s+", header=None, names=["fid", "sample", "resistant"], dtype=str)
    frame[["sample", "resistant"]].to_csv(out, sep="\t", index=False)
    return out


def _by_definition(text):
    """k-mer text by its definition: the first token is the k-mer, entries follow the bar."""
    kmers, cells = [], {}
    for line in text.splitlines():
        if not line.strip():
            continue
        head, rest = line.split("|", 1)
        kmers.append(head.split()[0])
        for entry in rest.split():
            sample, count = entry.rsplit(":", 1)
            cells[sample, len(kmers) - 1] = int(count)
    samples = sorted({s for s, _ in cells})
    X = np.zeros((len(samples), len(kmers)))
    for (s, j), c in cells.items():
        X[samples.index(s), j] = c
    return samples, kmers, X


def test_seer_example_in_the_dsm_framework_layout(seer_example):
    path = seer_example[0]
    text = gzip.decompress(path.read_bytes()).decode()
    assert text.split("|", 1)[0].split()[1:] != []  # statistics columns stand before the bar
    ds = read_kmers(path)
    samples, kmers, X = _by_definition(text)
    assert ds.shape == (2415, 200) and ds.sample_ids.tolist() == samples and ds.feature_names.tolist() == kmers
    assert "6925_3#7" in samples  # ids hold '#'
    np.testing.assert_array_equal(ds.X.toarray(), X)


@pytest.mark.parametrize("name", ["counts.gz", "isolates.txt", "a.txt.gz", "kmers", "a.tsv.bz2.part"])
def test_kmer_files_are_recognised_by_content(seer_example, tmp_path, name):
    text = gzip.decompress(seer_example[0].read_bytes())
    raw = gzip.compress(text) if name.endswith(".gz") else text
    path = tmp_path / name
    path.write_bytes(raw)
    if name.endswith(".part"):  # an unknown suffix: the content decides
        path.write_bytes(bz2.compress(text))
    assert format_of(path) == "kmers"
    ds = read(path)
    assert ds.shape == (2415, 200)


def test_every_format_is_recognised_by_content(tmp_path):
    X = np.array([[0.0, 1.5, 2.0], [3.0, 0.0, 4.0]])
    ds = Dataset(X, np.array(["s1", "s2"], dtype=object), np.array(["f1", "f2", "f3"], dtype=object))
    frame = pd.DataFrame(X, index=pd.Index(["s1", "s2"], name="id"), columns=["f1", "f2", "f3"])
    made = {}
    np.save(tmp_path / "a.npy", X)
    made["npy"] = tmp_path / "a.npy"
    sp.save_npz(tmp_path / "b.npz", sp.csr_matrix(X))
    made["npz"] = tmp_path / "b.npz"
    frame.to_parquet(tmp_path / "c.parquet")
    made["parquet"] = tmp_path / "c.parquet"
    import scipy.io

    scipy.io.mmwrite(tmp_path / "d.mtx", sp.coo_matrix(X))
    made["mtx"] = tmp_path / "d.mtx"
    frame.to_csv(tmp_path / "e.csv")
    made["csv"] = tmp_path / "e.csv"
    frame.to_csv(tmp_path / "f.tsv", sep="\t")
    made["tsv"] = tmp_path / "f.tsv"
    made["store"] = write_store(ds, tmp_path / "g.gs.h5ad")
    import anndata

    anndata.AnnData(X).write_h5ad(tmp_path / "h.h5ad")
    made["h5ad"] = tmp_path / "h.h5ad"
    for kind, path in made.items():
        plain = tmp_path / f"unnamed-{kind}"
        shutil.copy(path, plain)
        assert format_of(plain) == kind, kind
        if kind in ("csv", "tsv", "mtx"):
            for suffix, pack in ((".gz", gzip.compress), (".xz", lzma.compress)):
                packed = tmp_path / f"unnamed-{kind}{suffix}"
                packed.write_bytes(pack(path.read_bytes()))
                assert format_of(packed) == kind, (kind, suffix)
        assert read(plain).shape == (2, 3) if kind != "mtx" else read(plain).shape in ((2, 3), (3, 2))
    # a suffix that names one format still decides; .txt and .h5ad are settled by the content
    table = tmp_path / "t.txt"
    table.write_text("id\tf1\ns1\t1\n")
    assert format_of(table) == "tsv"
    assert format_of(made["csv"]) == "csv"
    store_named_h5ad = tmp_path / "plain.h5ad"
    shutil.copy(made["store"], store_named_h5ad)
    assert format_of(store_named_h5ad) == "store" and format_of(made["h5ad"]) == "h5ad"


def test_a_name_and_content_that_say_nothing_is_a_clear_error(tmp_path):
    path = tmp_path / "mystery"
    path.write_text("just some words\n")
    with pytest.raises(ValueError, match="Cannot tell the format of .* from its name or its first bytes"):
        read(path)


def test_what_convert_writes_score_reads(seer_example, tmp_path, capsys):
    meta = _pheno_table(seer_example[1], tmp_path / "pheno.tsv")
    data = tmp_path / "counts.gz"
    shutil.copy(seer_example[0], data)
    assert main(["convert", str(data), "--meta", str(meta), "--id", "sample", *SEER_READING,
                 "-o", str(tmp_path / "store.h5ad")]) == 0
    assert format_of(tmp_path / "store.h5ad") == "store"
    assert main(["score", str(tmp_path / "store.h5ad"), "--target", "resistant", "-o", str(tmp_path / "r.tsv")]) == 0
    ranking = pd.read_csv(tmp_path / "r.tsv", sep="\t")
    assert len(ranking) == 200


def _seer_pvalues(path):
    frame = pd.read_csv(path, sep="\t")
    return frame.set_index("sequence")["chisq_p_val"]


def _assert_printed_digits(ours, seer):
    """``ours`` rounds to SEER's printed value (4 significant digits)."""
    for kmer, printed in seer.items():
        value = ours[kmer]
        step = 10.0 ** (math.floor(math.log10(printed)) - 3)
        assert abs(value - printed) <= 0.5 * step * (1 + 1e-9), (kmer, value, printed)


@pytest.mark.parametrize("via", ["kmers", "store", "store-spilled"])
def test_chi_square_pvalues_equal_seers(seer_example, tmp_path, via, capsys):
    kmers, pheno, expected = seer_example
    meta = _pheno_table(pheno, tmp_path / "pheno.tsv")
    data = kmers
    if via != "kmers":
        data = tmp_path / "seer.gs.h5ad"
        budget = ["--chunk-bytes", "1K"] if via == "store-spilled" else []
        assert main(["convert", str(kmers), "--meta", str(meta), "--id", "sample", *SEER_READING, "-o", str(data),
                     *budget]) == 0
        options = ["--target", "resistant"]
    else:
        options = ["--meta", str(meta), "--id", "sample", *SEER_READING, "--target", "resistant"]
    out = tmp_path / "chi2.tsv"
    assert main(["score", str(data), *options, "--method", "chi2", "--binary", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "65 in the metadata only, kept as samples that carry none of the features" in printed
    ours = pd.read_csv(out, sep="\t").set_index("feature")["pvalue"]
    seer = _seer_pvalues(expected)
    assert len(seer) == 174  # SEER prints the k-mers its frequency filter keeps
    _assert_printed_digits(ours, seer)
    # and each equals scipy's chi-square test of the 2 x 2 table of presence against the phenotype
    table = pd.read_csv(meta, sep="\t", dtype={"sample": str}).set_index("sample")
    with pytest.warns(UserWarning):  # the ids of the k-mer file that the phenotype lacks
        ds = read_kmers(kmers, samples=list(table.index))
    carried = (ds.X > 0).toarray()
    y = table["resistant"].to_numpy()
    for j in range(0, 200, 37):
        counts = pd.crosstab(carried[:, j], y).to_numpy()
        if counts.shape == (2, 2):
            ref = chi2_contingency(counts, correction=False)[1]
            assert ours[ds.feature_names[j]] == pytest.approx(ref, rel=1e-12)


def _seer_printed(path):
    """SEER's printed k-mers and their ``maf`` column (lines may carry sample lists beyond the header)."""
    rows = [line.split("\t") for line in Path(path).read_text().splitlines()[1:]]
    return {row[0]: float(row[1]) for row in rows}


@pytest.mark.parametrize("min_af, expected, n", [(0.01, "test2.o.txt", 174), (0.1, "test3.o.txt", 95)])
def test_frequency_filter_keeps_seers_kmers(seer_example, tmp_path, min_af, expected, n, capsys):
    """SEER's --maf F (0.01 by default; 0.1 in its third test) tests the k-mers that at least a
    share F of the phenotyped samples carry: --min-af F tests the same ones, with the same share."""
    kmers, pheno, _ = seer_example
    meta = _pheno_table(pheno, tmp_path / "pheno.tsv")
    out = tmp_path / "chi2.tsv"
    assert main(["score", str(kmers), "--meta", str(meta), "--id", "sample", *SEER_READING, "--target", "resistant",
                 "--method", "chi2", "--binary", "--min-af", str(min_af), "-o", str(out)]) == 0
    frame = pd.read_csv(out, sep="\t").set_index("feature")
    seer = _seer_printed(SEER_EXAMPLES / expected)
    assert len(seer) == n
    tested = frame.index[frame["pvalue"].notna()]
    assert sorted(tested) == sorted(seer)
    for kmer, maf in seer.items():  # printed with 3 decimals
        assert abs(frame.loc[kmer, "af"] - maf) <= 0.0005 + 1e-12, (kmer, frame.loc[kmer, "af"], maf)
    assert frame.loc[frame["pvalue"].isna(), "af"].lt(min_af).all()


def test_chi_square_on_all_of_seers_phenotypes_is_exact(seer_example, tmp_path, capsys):
    """SEER's whole example phenotype (3,069 samples; 654 on no k-mer line): each p-value equals the
    chi-square tail of the 2 x 2 table computed exactly (statistic as a fraction, tail by erfc).

    SEER itself prints p-values under about 1e-5 up to 3.4% away from this (e.g. 2.322e-07 for
    2.2439e-07 exactly); above 1e-4 it agrees to its printed digits."""
    from fractions import Fraction

    kmers, _, _ = seer_example
    meta = _pheno_table(SEER_EXAMPLES / "example.pheno", tmp_path / "pheno.tsv")
    out = tmp_path / "chi2.tsv"
    assert main(["score", str(kmers), "--meta", str(meta), "--id", "sample", *SEER_READING, "--target", "resistant",
                 "--method", "chi2", "--binary", "-o", str(out)]) == 0
    ours = pd.read_csv(out, sep="\t").set_index("feature")["pvalue"]
    table = pd.read_csv(meta, sep="\t", dtype={"sample": str}).set_index("sample")
    ds = read_kmers(kmers)
    row = {s: i for i, s in enumerate(ds.sample_ids)}
    carried = np.zeros((len(table), ds.shape[1]), dtype=bool)  # phenotyped samples on no line: zeros
    present = [(k, row[s]) for k, s in enumerate(table.index) if s in row]
    carried[[k for k, _ in present]] = (ds.X[[i for _, i in present]] > 0).toarray()
    y = table["resistant"].to_numpy() == 1
    assert len(table) == 3069 and len(present) == 2415
    for j, kmer in enumerate(ds.feature_names):
        a, b = int(np.sum(carried[:, j] & y)), int(np.sum(carried[:, j] & ~y))
        c, d = int(y.sum()) - a, int((~y).sum()) - b
        n = a + b + c + d
        stat = Fraction(n * (a * d - b * c) ** 2, (a + b) * (c + d) * (a + c) * (b + d))
        exact = math.erfc(math.sqrt(float(stat) / 2))  # the chi-square tail with one degree of freedom
        assert ours[kmer] == pytest.approx(exact, rel=1e-11), (kmer, ours[kmer], exact)


def test_seer_binary_agrees_when_installed(seer_example, tmp_path, capsys):
    if shutil.which("seer") is None:
        pytest.skip("the seer program is not installed (apt-get install seer)")
    kmers, pheno, _ = seer_example
    run = subprocess.run(["seer", "-k", str(kmers), "-p", str(pheno), "--pval", "1", "--chisq", "1"],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    (tmp_path / "seer.txt").write_text(run.stdout)
    meta = _pheno_table(pheno, tmp_path / "pheno.tsv")
    out = tmp_path / "chi2.tsv"
    assert main(["score", str(kmers), "--meta", str(meta), "--id", "sample", *SEER_READING, "--target", "resistant",
                 "--method", "chi2", "--binary", "-o", str(out)]) == 0
    ours = pd.read_csv(out, sep="\t").set_index("feature")["pvalue"]
    _assert_printed_digits(ours, _seer_pvalues(tmp_path / "seer.txt"))


def test_absent_samples_can_be_dropped(seer_example, tmp_path, capsys):
    kmers, pheno, _ = seer_example
    meta = _pheno_table(pheno, tmp_path / "pheno.tsv")
    out = tmp_path / "r.tsv"
    assert main(["score", str(kmers), "--meta", str(meta), "--id", "sample", "--target", "resistant",
                 "--absent-samples", "drop", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "135 samples x 200 features" in printed and "65 in the metadata only, left out" in printed


def test_attach_metadata_zero_rows_in_every_matrix_form():
    ids = np.array(["a", "b", "c"], dtype=object)
    meta = pd.DataFrame({"y": [1, 0, 1, 0]}, index=pd.Index(["c", "a", "z", "w"], name="id"))
    X = np.array([[1.0, 2.0], [3.0, 0.0], [0.0, 5.0]])
    for form in (X, sp.csr_matrix(X), sp.csc_matrix(X)):
        matched, report = attach_metadata(Dataset(form, ids, np.array(["f", "g"], dtype=object)), meta, absent="zeros")
        dense = matched.X.toarray() if sp.issparse(matched.X) else matched.X
        assert type(matched.X) is type(form)
        np.testing.assert_array_equal(dense, [[1, 2], [0, 5], [0, 0], [0, 0]])
        assert matched.sample_ids.tolist() == ["a", "c", "z", "w"] and matched.obs["y"].tolist() == [0, 1, 1, 0]
        assert report.zero_rows == ["w", "z"] and report.only_in_metadata == [] and report.only_in_data == ["b"]
    dropped, report = attach_metadata(Dataset(X, ids, np.array(["f", "g"], dtype=object)), meta)
    assert dropped.sample_ids.tolist() == ["a", "c"] and report.only_in_metadata == ["w", "z"]
    with pytest.raises(ValueError, match="absent"):
        attach_metadata(Dataset(X, ids, np.array(["f", "g"], dtype=object)), meta, absent="keep")


@pytest.mark.parametrize("budget", [None, 64])
def test_convert_kmers_gives_absent_samples_zero_rows(tmp_path, budget):
    (tmp_path / "c.kmers").write_text("ACGTA | s2:1 s1:3\nCGTAC | s2:7\n")
    meta = pd.DataFrame({"y": [0, 1, 1]}, index=pd.Index(["s1", "s2", "s9"], name="id"))
    path, report = convert_kmers(tmp_path / "c.kmers", tmp_path / "c.gs.h5ad", metadata=meta, chunk_bytes=budget,
                                 absent="zeros")
    store = open_store(path)
    assert store.sample_ids.tolist() == ["s1", "s2", "s9"] and report.zero_rows == ["s9"]
    np.testing.assert_array_equal(store.to_dataset().X.toarray(), [[3, 0], [1, 7], [0, 0]])
    assert store.obs["y"].tolist() == [0, 1, 1]
    path, report = convert_kmers(tmp_path / "c.kmers", tmp_path / "d.gs.h5ad", metadata=meta, chunk_bytes=budget,
                                 absent="drop")
    assert open_store(path).sample_ids.tolist() == ["s1", "s2"] and report.only_in_metadata == ["s9"]


def _methods_for_labels():
    return plain(name for name, spec in gs.REGISTRY.items() if spec.task in ("classification", "any"))


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(3)
    X = rng.poisson(0.8, size=(40, 12)).astype(np.float64)
    X[:, 3] -= 1.0  # negative values read as absent
    y = np.repeat(["r", "s"], 20)
    X[y == "r", 0] += rng.poisson(2, 20)
    return X, y


@pytest.mark.parametrize("method", _methods_for_labels())
def test_binary_is_presence_in_every_input_form(counts, method, tmp_path):
    X, y = counts
    ref = gs.score(gs.presence(X), y, method=method).scores
    forms = {"dense": X, "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X),
             "frame": pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])}
    for name, form in forms.items():
        got = gs.score(form, y, method=method, binary=True).scores
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0, equal_nan=True, err_msg=name)
    ids = np.array([f"s{i}" for i in range(len(y))], dtype=object)
    names = np.array([f"x{j}" for j in range(X.shape[1])], dtype=object)
    for name, M in (("sparse store", sp.csr_matrix(X)), ("dense store", X)):
        path = write_store(Dataset(M, ids, names), tmp_path / f"{name.split()[0]}.gs.h5ad", overwrite=True)
        spec = gs.get_method(method)
        if spec.streaming == "matrix":
            continue  # read whole into memory by the caller: gs.score(read(path).X, ...) above
        got = gs.score(path, y, method=method, binary=True, chunk_bytes=256).scores
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0, equal_nan=True, err_msg=name)
        assert open_store(path).to_dataset().X.max() > 1  # the file keeps its counts


@pytest.mark.parametrize("method", plain(m for m, spec in gs.REGISTRY.items() if spec.task != "unsupervised"))
def test_every_method_scores_kmer_text_as_it_scores_the_matrix(counts, method, tmp_path, capsys):
    """`genosift score KMERS --binary`: the k-mers read in the layout the method reads (columns for
    the methods that take whole columns, rows for the others), samples listed in any order on a
    line and a labelled sample with no k-mer (an all-zero row, with --absent-samples zeros); the
    scores are the matrix's."""
    X, y = counts
    X = np.vstack([np.maximum(X, 0), np.zeros((1, X.shape[1]))])
    y = np.append(y, "s")
    if gs.get_method(method).task == "regression":  # a numeric target
        y = np.where(y == "r", 1.5, -0.25) + np.random.default_rng(5).normal(size=len(y))
    ids = [f"s{i:02d}" for i in range(len(y))]
    rng = np.random.default_rng(8)
    lines = []
    for j in range(X.shape[1]):
        rows = rng.permutation(np.flatnonzero(X[:, j]))
        lines.append(f"K{j} | " + " ".join(f"{ids[i]}:{int(X[i, j])}" for i in rows))
    (tmp_path / "counts.kmers").write_text("\n".join(lines) + "\n")
    pd.DataFrame({"sample": ids, "label": y}).to_csv(tmp_path / "meta.tsv", sep="\t", index=False)
    command = ["score", str(tmp_path / "counts.kmers"), "--meta", str(tmp_path / "meta.tsv"), "--id", "sample",
               "--target", "label", "--binary", "--method", method, "--quiet", "-o", str(tmp_path / "out.tsv")]
    assert main(command) == 1  # by default the sample on no line is refused, named: a misspelt id
    assert f"1 sample(s) of the metadata ('{tmp_path / 'meta.tsv'}') are among none of the data's samples: " \
        f"'{ids[-1]}'" in capsys.readouterr().err
    assert main([*command, *SEER_READING]) == 0
    table = pd.read_csv(tmp_path / "out.tsv", sep="\t").set_index("feature")
    ref = gs.score(gs.presence(X), y, method=method, feature_names=[f"K{j}" for j in range(X.shape[1])])
    np.testing.assert_allclose(table.loc[ref.feature_names, "score"].to_numpy(), ref.scores, rtol=1e-12, atol=0,
                               equal_nan=True)


@pytest.mark.parametrize("method", ["fisher", "auc"])  # row statistics and whole columns
@pytest.mark.parametrize("sparse", [True, False])
def test_binary_store_on_a_dask_scheduler(counts, tmp_path, method, sparse):
    """Dask tasks open the store themselves: they read it as presence too."""
    X, y = counts
    ids = np.array([f"s{i}" for i in range(len(y))], dtype=object)
    names = np.array([f"x{j}" for j in range(X.shape[1])], dtype=object)
    path = write_store(Dataset(sp.csr_matrix(X) if sparse else X, ids, names), tmp_path / "d.gs.h5ad")
    ref = gs.score(gs.presence(X), y, method=method).scores
    got = gs.score(path, y, method=method, binary=True, scheduler="sync", chunk_bytes=256).scores
    np.testing.assert_allclose(got, ref, rtol=1e-12, equal_nan=True)
    store = open_store(path, binary=True)
    np.testing.assert_allclose(gs.score(store, y, method=method, scheduler="sync").scores, ref, rtol=1e-12,
                               equal_nan=True)


def test_binary_stream_and_dask_and_nan(counts):
    X, y = counts
    ref = gs.score(gs.presence(X), y, method="fisher").scores
    chunks = iter([(X[:15], y[:15]), (X[15:], y[15:])])
    np.testing.assert_allclose(gs.score(chunks, method="fisher", binary=True).scores, ref, rtol=1e-12)
    import dask.array as da

    got = gs.score(da.from_array(X, chunks=(13, 5)), y, method="fisher", binary=True).scores
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    bad = X.copy()
    bad[2, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):  # never read as absent
        gs.score(bad, y, method="fisher", binary=True)
    with pytest.raises(ValueError, match="binary"):
        gs.score(X, y, binary="yes")


def test_evaluate_and_predict_on_presence(counts, tmp_path, capsys):
    X, y = counts
    ids = [f"s{i}" for i in range(len(y))]
    frame = pd.DataFrame(X, index=pd.Index(ids, name="id"), columns=[f"x{j}" for j in range(X.shape[1])])
    frame.insert(0, "label", y)
    frame.to_csv(tmp_path / "d.tsv", sep="\t")
    frame.assign(**{c: (frame[c] > 0).astype(float) for c in frame.columns[1:]}).to_csv(tmp_path / "p.tsv", sep="\t")
    assert main(["evaluate", str(tmp_path / "d.tsv"), "--target", "label", "--binary", "--k", "2,5", "--cv", "3",
                 "-o", str(tmp_path / "run")]) == 0
    assert main(["evaluate", str(tmp_path / "p.tsv"), "--target", "label", "--k", "2,5", "--cv", "3",
                 "-o", str(tmp_path / "ref")]) == 0
    a = pd.read_csv(tmp_path / "run" / "cv_metrics.tsv", sep="\t")
    b = pd.read_csv(tmp_path / "ref" / "cv_metrics.tsv", sep="\t")
    pd.testing.assert_frame_equal(a, b)
    import json

    assert json.loads((tmp_path / "run" / "model.json").read_text())["binary"] is True
    for model, data, out in (("run", "d.tsv", "a.tsv"), ("ref", "p.tsv", "b.tsv")):
        assert main(["predict", str(tmp_path / model), str(tmp_path / data), "--keep", "label",
                     "-o", str(tmp_path / out)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.tsv", sep="\t"), pd.read_csv(tmp_path / "b.tsv", sep="\t"))


def test_fsm_lite_output_reads_as_written(tmp_path):
    if shutil.which("fsm-lite") is None:
        pytest.skip("fsm-lite is not installed (apt-get install fsm-lite)")
    rng = random.Random(5)
    lines = []
    for i in range(5):
        seq = "".join(rng.choice("ACGT") for _ in range(400))
        (tmp_path / f"g{i}.fa").write_text(f">contig{i}\n{seq}\n{seq[: 50 * (i + 1)]}\n")
        lines.append(f"iso#{i}\t{tmp_path / f'g{i}.fa'}")
    (tmp_path / "list.txt").write_text("\n".join(lines) + "\n")
    run = subprocess.run(["fsm-lite", "-l", str(tmp_path / "list.txt"), "-t", str(tmp_path / "idx"), "-s", "1",
                          "-m", "9", "-M", "15"], capture_output=True, text=True, check=True)
    out = tmp_path / "fsm_output"  # fsm-lite writes to standard output; users name the file freely
    out.write_text(run.stdout)
    samples, kmers, X = _by_definition(run.stdout)
    assert len(kmers) > 50
    ds = read(out)
    assert ds.sample_ids.tolist() == samples and ds.feature_names.tolist() == kmers
    np.testing.assert_array_equal(ds.X.toarray(), X)


@pytest.mark.parametrize("name", ["gene_presence_absence.Rtab", "roary.rtab.gz"])
def test_pangenome_presence_absence_tables(tmp_path, name, capsys):
    """Panaroo / Roary ``.Rtab``: genes in rows, samples in columns, read without options."""
    rng = np.random.default_rng(8)
    samples = [f"iso_{i}#1" for i in range(12)]
    genes = ["group_1", "dnaA", "mecA~~~mecA_2", "group_4"]
    present = rng.integers(0, 2, size=(len(genes), len(samples)))
    present[2] = np.repeat([1, 0], 6)  # carried by the resistant half
    text = "Gene\t" + "\t".join(samples) + "\n" + "".join(
        g + "\t" + "\t".join(map(str, row)) + "\n" for g, row in zip(genes, present))
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    ds = read(path)
    assert format_of(path) == "rtab"
    assert ds.sample_ids.tolist() == samples and ds.feature_names.tolist() == genes
    np.testing.assert_array_equal(ds.X, present.T)
    meta = tmp_path / "pheno.tsv"
    meta.write_text("sample\tresistant\n" + "".join(f"{s}\t{int(i < 6)}\n" for i, s in enumerate(samples)))
    assert main(["score", str(path), "--meta", str(meta), "--id", "sample", *SEER_READING, "--target", "resistant",
                 "--method", "chi2", "-o", str(tmp_path / "r.tsv")]) == 0
    assert pd.read_csv(tmp_path / "r.tsv", sep="\t")["feature"][0] == "mecA~~~mecA_2"


@pytest.mark.parametrize("first", ["ACGT | s1:3 s2:4", "ACGT|s1:3", "ACGT\t5.0\t0.1\t|\ts#1:8", "ACGT |",
                                   "  ACGT | s1:3\r"])
def test_kmer_lines_in_any_spacing_are_recognised(tmp_path, first):
    path = tmp_path / "noname"
    path.write_text(f"\n{first}\nCCCC | s1:1\n")
    assert format_of(path) == "kmers"


def test_a_missing_file_without_a_telling_name_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such file"):
        format_of(tmp_path / "absent")
