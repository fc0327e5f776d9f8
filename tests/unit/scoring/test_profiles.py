"""Direction and effect size: per-class means, prevalence (x > 0) and the signed effect of every
feature, against numpy computed class by class, in every input form, and in the tables the
commands write (read back exactly)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.stats import pearsonr

import genosift as gs
from genosift.cli import main
from genosift.io import Dataset, write_store
from genosift.stats import ClassProfile, TargetProfile

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


def _data(n=90, p=40, seed=0, classes=("R", "S", "T")):
    """Counts with many zeros, some negative values and a large offset in one feature."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.8, size=(n, p)).astype(np.float64)
    X[:, 1] -= 1.0                     # negative values: not counted as present
    X[:, 2] = 1e12 + rng.integers(0, 5, n)  # a large common offset
    X[:, 3] = 0.0                      # all zero
    X[:, 4] = 7.0                      # constant, present everywhere
    y = np.array(classes)[rng.integers(0, len(classes), n)]
    return X, y


def _by_class(X, y):
    """The reference: numpy on the rows of each class, in sorted class order."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    classes = np.unique(y)
    means = np.array([X[y == c].mean(axis=0) for c in classes])
    prevalence = np.array([(X[y == c] > 0).mean(axis=0) for c in classes])
    return classes, means, prevalence


def _check(prof, X, y):
    classes, means, prevalence = _by_class(X, y)
    assert prof.kind == "classes" and prof.classes.tolist() == classes.tolist()
    # whole-number data: the class sums are exact, so the means are numpy's to the last bit
    np.testing.assert_array_equal(prof.means, means)
    np.testing.assert_array_equal(prof.prevalence, prevalence)  # counts over counts: exact
    np.testing.assert_array_equal(prof.count, [(y == c).sum() for c in classes])


FORMS = {
    "dense C": lambda X: np.ascontiguousarray(X),
    "dense F": lambda X: np.asfortranarray(X),
    "int64": lambda X: X.astype(np.int64) if np.abs(X).max() < 2**53 else X,
    "csr": sp.csr_matrix,
    "csc": sp.csc_matrix,
    "DataFrame": lambda X: pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])]),
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("classes", [("R", "S"), ("R", "S", "T")])
def test_class_means_and_prevalence_equal_numpy_in_memory(form, classes):
    X, y = _data(classes=classes)
    prof = gs.profile(FORMS[form](X), y)
    _check(prof, X, y)
    frame = prof.to_frame()
    labels = list(classes)
    if len(labels) == 2:  # the difference of the class means, classes[1] minus classes[0]
        assert list(frame.columns) == ["feature", "mean_R", "mean_S", "diff_means", "prevalence_R", "prevalence_S"]
        np.testing.assert_array_equal(frame["diff_means"], prof.means[1] - prof.means[0])
        np.testing.assert_allclose(frame["diff_means"], X[y == "S"].mean(0) - X[y == "R"].mean(0),
                                   rtol=1e-12, atol=1e-9)
    else:  # the class with the highest mean; None where every class has the same mean
        assert "highest_mean" in frame and "diff_means" not in frame
        _, means, _ = _by_class(X, y)
        for j in range(X.shape[1]):
            expected = None if np.ptp(means[:, j]) == 0 else labels[int(np.argmax(means[:, j]))]
            assert frame["highest_mean"][j] == expected
    assert frame["feature"].tolist() == (list(FORMS[form](X).columns) if form == "DataFrame"
                                         else [f"x{j}" for j in range(X.shape[1])])
    # the features made above: all zero and constant are never present / always present
    np.testing.assert_array_equal(prof.prevalence[:, 3], 0.0)
    np.testing.assert_array_equal(prof.prevalence[:, 4], 1.0)
    np.testing.assert_array_equal(prof.means[:, 4], 7.0)


def test_chunk_streams_and_merges_give_the_same_numbers():
    X, y = _data()
    whole = gs.profile(X, y)
    for size in (1, 7, 90):
        stream = ((X[i:i + size], y[i:i + size]) for i in range(0, len(y), size))
        part = gs.profile(stream)
        np.testing.assert_allclose(part.means, whole.means, rtol=1e-13)
        np.testing.assert_array_equal(part.prevalence, whole.prevalence)
    # the statistic merges exactly what one chunk holds, whatever the grouping of the chunks
    a = ClassProfile.from_chunk(X[:30], y[:30]).merge(ClassProfile.from_chunk(sp.csr_matrix(X[30:]), y[30:]))
    np.testing.assert_allclose(a.means(), whole.means, rtol=1e-13)
    np.testing.assert_array_equal(a.positive, [((X > 0) & (y == c)[:, None]).sum(0) for c in whole.classes])


def test_numeric_target_gives_the_mean_the_prevalence_and_the_sign_of_pearson_r():
    X, _ = _data(n=120, seed=4)
    rng = np.random.default_rng(4)
    t = X[:, 0] - 0.5 * X[:, 5] + rng.normal(size=120)
    for form in (X, sp.csr_matrix(X), np.asfortranarray(X)):
        prof = gs.profile(form, t)  # continuous floats: a numeric target
        assert prof.kind == "numeric" and prof.classes is None
        np.testing.assert_allclose(prof.means[0], X.mean(axis=0), rtol=1e-13)
        np.testing.assert_array_equal(prof.prevalence[0], (X > 0).mean(axis=0))
        for j in range(X.shape[1]):
            if np.ptp(X[:, j]) == 0:  # a constant feature has no correlation
                assert np.isnan(prof.effect[j])
            else:
                assert prof.effect[j] == np.sign(pearsonr(X[:, j], t).statistic), j
        frame = prof.to_frame()
        assert list(frame.columns) == ["feature", "mean", "correlation_sign", "prevalence"]
    # by chunks: the co-moments merge
    merged = TargetProfile.from_chunk(X[:50], t[:50]).merge(TargetProfile.from_chunk(X[50:], t[50:]))
    np.testing.assert_array_equal(merged.correlation_sign(), gs.profile(X, t).effect)
    # whole numbers are labels unless target="numeric" says otherwise
    counts = np.arange(120) % 7
    assert gs.profile(X, counts).kind == "classes"
    assert gs.profile(X, counts, kind="numeric").kind == "numeric"


def test_no_target_and_bad_parameters():
    X, y = _data()
    prof = gs.profile(X)
    assert prof.kind == "none" and list(prof.to_frame().columns) == ["feature", "mean", "prevalence"]
    np.testing.assert_allclose(prof.means[0], X.mean(axis=0), rtol=1e-13)
    with pytest.raises(ValueError, match="The 'kind' parameter of profile must be one of 'auto', 'classes', 'numeric'"):
        gs.profile(X, y, kind="labels")
    with pytest.raises(ValueError, match="kind='numeric' needs numbers"):
        gs.profile(X, y, kind="numeric")
    bad = X.copy()
    bad[3, 6] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinity in feature\(s\) 'x6'"):
        gs.profile(bad, y)
    # presence/absence, as genosift.score reads it
    np.testing.assert_array_equal(gs.profile(X, y, binary=True).means, gs.profile(X, y).prevalence)


@pytest.fixture(scope="module")
def store_data(tmp_path_factory):
    pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
    X, y = _data(n=150, p=60, seed=7)
    X[:, 2] = np.random.default_rng(7).integers(0, 5, 150)  # no 1e12 offset: a CSR store keeps counts
    ids = np.array([f"s{i}" for i in range(150)], dtype=object)
    names = np.array([f"k{j}" for j in range(60)], dtype=object)
    obs = pd.DataFrame({"y": y, "t": X[:, 0] + np.random.default_rng(1).normal(size=150)}, index=ids)
    folder = tmp_path_factory.mktemp("profile-stores")
    paths = {"dense": write_store(Dataset(X, ids, names, obs), folder / "dense.gs.h5ad"),
             "sparse": write_store(Dataset(sp.csr_matrix(X), ids, names, obs), folder / "sparse.gs.h5ad")}
    return X, y, obs, paths


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_stores_are_read_in_row_chunks_and_give_numpys_numbers(store_data, kind):
    X, y, obs, paths = store_data
    for chunk in (600, 4096, None):  # a few rows per chunk, up to all of them
        _check(gs.profile(paths[kind], "y", chunk_bytes=chunk), X, y)
    rows = np.flatnonzero(np.arange(150) % 3 != 0)
    prof = gs.profile(paths[kind], y[rows], samples=np.arange(150) % 3 != 0, chunk_bytes=1000)  # a mask
    _check(prof, X[rows], y[rows])
    assert prof.feature_names[:2].tolist() == ["k0", "k1"]
    numeric = gs.profile(paths[kind], "t", chunk_bytes=1000)
    t = obs["t"].to_numpy()
    np.testing.assert_array_equal(numeric.effect[:2], [np.sign(pearsonr(X[:, j], t).statistic) for j in (0, 1)])


def test_dask_arrays_give_numpys_numbers():
    da = pytest.importorskip("dask.array", reason="Dask is optional (genosift[dask])")
    X, y = _data()
    prof = gs.profile(da.from_array(X, chunks=(13, 15)), y, scheduler="threads")
    _check(prof, X, y)
    prof = gs.profile(da.from_array(sp.csr_matrix(X), chunks=(20, 40), asarray=False), y, scheduler="threads")
    _check(prof, X, y)


# ------------------------------------------------------------------ the tables of the commands
@pytest.fixture
def golub_csv(tmp_path):
    X, y, names = gs.load_golub()
    ids = [f"p{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :200], columns=names[:200])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "expr.csv", index=False)
    pd.DataFrame({"sample": ids, "type": y, "site": (["a", "b", "c"] * 13)[:38]}).to_csv(tmp_path / "meta.csv",
                                                                                      index=False)
    return tmp_path


def _exact(path, sep="\t"):
    return pd.read_csv(path, sep=sep, float_precision="round_trip")


def test_score_and_select_tables_hold_the_profile_exactly(golub_csv, capsys):
    folder = golub_csv
    read = gs.io.read(folder / "expr.csv")
    y = pd.read_csv(folder / "meta.csv").set_index("sample").loc[read.sample_ids, "type"].to_numpy()
    ref = gs.profile(read.X, y, feature_names=read.feature_names)
    common = [str(folder / "expr.csv"), "--meta", str(folder / "meta.csv"), "--id", "sample", "--target", "type",
              "--quiet"]
    for suffix, sep in ((".tsv", "\t"), (".csv", ",")):
        out = folder / f"ranking{suffix}"
        assert main(["score", *common, "--method", "welch", "-o", str(out)]) == 0
        table = _exact(out, sep)
        assert list(table.columns) == ["feature", "score", "statistic", "pvalue", "qvalue", "rank", "selected",
                                       "pattern", "pattern_size", "mean_ALL", "mean_AML", "diff_means",
                                       "prevalence_ALL", "prevalence_AML"]
        order = pd.Index(read.feature_names).get_indexer(table["feature"])
        for i, c in enumerate(("ALL", "AML")):  # every number read back is the one computed
            np.testing.assert_array_equal(table[f"mean_{c}"], ref.means[i, order])
            np.testing.assert_array_equal(table[f"prevalence_{c}"], ref.prevalence[i, order])
        np.testing.assert_array_equal(table["diff_means"], ref.effect[order])
        # the sign of welch's t is the sign of the difference of the class means
        assert (np.sign(table["statistic"]) == np.sign(table["diff_means"])).all()
    text = capsys.readouterr().out
    best = table.iloc[0]
    way = "higher in AML" if best["diff_means"] > 0 else "higher in ALL"
    assert f"  1  {best['feature']}" in text and way in text.split(best["feature"])[1].splitlines()[0]
    # select: the selected features' rows of that table in the sidecar, exact through JSON
    out = folder / "selected.tsv"
    assert main(["select", *common, "--method", "welch", "--top", "5", "-o", str(out)]) == 0
    rows = json.loads((folder / "selected.tsv.json").read_text())["selected_features"]
    assert [r["feature"] for r in rows] == table["feature"][:5].tolist()
    for r in rows:
        j = list(read.feature_names).index(r["feature"])
        assert (r["mean_ALL"], r["mean_AML"], r["diff_means"]) == (ref.means[0, j], ref.means[1, j], ref.effect[j])
        assert (r["prevalence_ALL"], r["prevalence_AML"]) == (ref.prevalence[0, j], ref.prevalence[1, j])
    assert list(_exact(out).columns[4:]) == [r["feature"] for r in rows]  # best first, as the ranking


def test_regression_ranking_gives_the_correlation_sign(golub_csv):
    folder = golub_csv
    read = gs.io.read(folder / "expr.csv")
    t = read.X[:, 0] * 0.3 + np.linspace(0, 1, 38)
    pd.DataFrame({"sample": read.sample_ids, "t": t}).to_csv(folder / "t.csv", index=False)
    out = folder / "r.tsv"
    assert main(["score", str(folder / "expr.csv"), "--meta", str(folder / "t.csv"), "--id", "sample",
                 "--target", "t", "--method", "pearson", "--top", "3", "-o", str(out), "--quiet"]) == 0
    table = _exact(out)
    assert list(table.columns[7:]) == ["pattern", "pattern_size", "mean", "correlation_sign", "prevalence"]
    np.testing.assert_array_equal(np.sign(table["statistic"]), table["correlation_sign"])
    order = pd.Index(read.feature_names).get_indexer(table["feature"])
    np.testing.assert_allclose(table["mean"], read.X.mean(axis=0)[order], rtol=1e-13)
    np.testing.assert_array_equal(table["prevalence"], (read.X > 0).mean(axis=0)[order])


def test_score_on_a_store_writes_the_profile_of_the_rows_scored(store_data, tmp_path):
    X, y, obs, paths = store_data
    obs = obs.assign(batch=np.where(np.arange(150) < 100, "train", "held"))
    store = write_store(Dataset(sp.csr_matrix(X), obs.index.to_numpy(), np.array([f"k{j}" for j in range(60)],
                                                                                  dtype=object), obs),
                        tmp_path / "b.gs.h5ad")
    out = tmp_path / "r.tsv"
    assert main(["score", str(store), "--target", "y", "--method", "kruskal", "--group", "batch",
                 "--train-groups", "train", "--chunk-bytes", "2K", "-o", str(out), "--quiet"]) == 0
    table = _exact(out)
    _, means, prevalence = _by_class(X[:100], y[:100])  # the training rows only
    order = table["feature"].str[1:].astype(int).to_numpy()
    for i, c in enumerate(np.unique(y[:100])):
        np.testing.assert_allclose(table[f"mean_{c}"], means[i, order], rtol=1e-13)
        np.testing.assert_array_equal(table[f"prevalence_{c}"], prevalence[i, order])
    assert "highest_mean" in table


def test_evaluate_tables_and_report_show_the_profile(golub_csv):
    folder = golub_csv
    out = folder / "results"
    assert main(["evaluate", str(folder / "expr.csv"), "--meta", str(folder / "meta.csv"), "--id", "sample",
                 "--target", "type", "--k", "3,30", "--cv", "3", "--group", "site", "--val-groups", "c",
                 "-o", str(out), "--quiet"]) == 0
    read = gs.io.read(folder / "expr.csv")
    meta = pd.read_csv(folder / "meta.csv").set_index("sample").loc[read.sample_ids]
    train = (meta["site"] != "c").to_numpy()
    ref = gs.profile(read.X[train], meta["type"].to_numpy()[train])
    for name in ("scores.tsv", "selected.tsv"):
        table = _exact(out / name)
        order = pd.Index(read.feature_names).get_indexer(table["feature"])
        np.testing.assert_array_equal(table["mean_AML"], ref.means[1, order])
        np.testing.assert_array_equal(table["prevalence_ALL"], ref.prevalence[0, order])
        np.testing.assert_array_equal(table["diff_means"], ref.effect[order])
    pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")
    from genosift.report import load_results, make_report

    results = load_results(out)
    assert results.selected["diff_means"].dtype == np.float64  # read as numbers
    html = make_report(out, folder / "report.html").html.read_text()
    selected = html.split('id="features"')[1]
    assert "<th>diff_means</th>" in selected and "<th>prevalence_AML</th>" in selected
    first = results.selected.iloc[0]
    assert f"<td>{first['mean_AML']:.3f}</td>" in selected
