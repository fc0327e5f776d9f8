"""Labels: the same classes and codes whatever the chunking, and clear words for odd labels."""

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.io import Dataset, write_store

ROWS = [m for m in gs.methods().index if gs.methods().loc[m, "streaming"] == "rows"]
SUPERVISED = [m for m in ROWS if gs.methods().loc[m, "task"] != "unsupervised"]


def _data(n=30, sort=True):
    rng = np.random.RandomState(3)
    y = np.where(np.arange(n) % 3 == 0, "resistant", "susceptible")
    if sort:  # sorted rows: the first chunks hold one class only
        y = np.sort(y)
    X = rng.normal(size=(n, 4)) + (y == "resistant")[:, None] * np.array([1.5, 0, -1, 0])
    return np.abs(X), y  # non-negative, so that chi2_counts takes it too


@pytest.mark.parametrize("method", SUPERVISED)
@pytest.mark.parametrize("rows", [1, 2, 7])
def test_string_labels_do_not_depend_on_chunks(method, rows):
    X, y = _data()
    ref = gs.score(X, y, method=method)
    stream = ((X[a:a + rows], y[a:a + rows]) for a in range(0, len(y), rows))
    got = gs.score(stream, method=method)
    np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(got.ranking, ref.ranking)
    selector = gs.SelectKBest(score_func=method, k=2)
    for a in range(0, len(y), rows):
        selector.partial_fit(X[a:a + rows], y[a:a + rows])
    np.testing.assert_allclose(selector.scores_, ref.scores, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("method", SUPERVISED)
def test_string_labels_in_a_store_with_tiny_chunks(method, tmp_path):
    X, y = _data()
    ids = np.array([f"s{i}" for i in range(len(y))])
    path = write_store(Dataset(X, ids, np.array([f"g{j}" for j in range(4)]),
                               pd.DataFrame({"label": y}, index=ids)), tmp_path / "d.gs.h5ad")
    ref = gs.score(X, y, method=method)
    for budget in (64, 200, None):  # down to one row per chunk
        got = gs.score(path, "label", method=method, chunk_bytes=budget)
        np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-12, atol=1e-14)


def test_pearson_codes_the_label_that_sorts_last_as_one():
    X, y = _data(sort=False)
    numeric = gs.score(X, (y == "susceptible").astype(float), method="pearson")
    for rows in (1, 5, 30):
        for order in (slice(None), slice(None, None, -1)):  # either label first
            Xo, yo = X[order], y[order]
            got = gs.score(((Xo[a:a + rows], yo[a:a + rows]) for a in range(0, len(yo), rows)), method="pearson")
            np.testing.assert_allclose(got.statistic, numeric.statistic, rtol=1e-12)


def test_chunked_labels_still_refuse_one_or_three_labels():
    X, y = _data()
    with pytest.raises(ValueError, match=r"y has 1 non-numeric labels \(\['resistant'\]\)"):
        gs.score(((X[a:a + 5], y[a:a + 5]) for a in range(0, 10, 5)), method="pearson")
    y3 = y.copy()
    y3[-1] = "intermediate"
    with pytest.raises(ValueError, match="y has at least 3 non-numeric labels"):
        gs.score(((X[a:a + 5], y3[a:a + 5]) for a in range(0, 30, 5)), method="pearson")
    selector = gs.SelectKBest(score_func="pearson", k=1).partial_fit(X[:5], y[:5])
    assert "1 non-numeric labels" in selector.pending_


X6 = np.random.RandomState(0).normal(size=(6, 2))


@pytest.mark.parametrize("labels, words", [
    (["b", "b ", "a", " b", "a", "a"], "differ only by spaces, kept as separate classes: ' b' vs 'b' vs 'b '"),
    (["a", "", "b", "nan", "a", "b"], "look like missing values, kept as classes of their own: '', 'nan'"),
    (["a", "NA", "b", "a", "b", "b"], "'NA'"),
])
def test_odd_text_labels_warn_naming_them(labels, words):
    for y in (np.array(labels, dtype=object), np.array(labels), pd.Series(labels, dtype="string")):
        with pytest.warns(UserWarning, match=words.replace("(", r"\(").replace(")", r"\)")):
            result = gs.score(X6, y, method="fisher")
        assert sorted(result.classes) == sorted(set(labels))  # kept as given, never merged silently


@pytest.mark.parametrize("y, message", [
    (np.array([1, "a", 1, "a", 2, "a"], dtype=object),
     r"y mixes labels of different kinds: 1 \(number\) and 'a' \(text\)"),
    (pd.array(["a", pd.NA, "b", "a", "b", "a"], dtype="string"), r"y has missing labels at positions \[1\]"),
    (pd.array([0, 1, None, 1, 0, 1], dtype="Int64"),
     r"y (has missing labels|contains NaN or infinity) at positions \[2\]"),
    (np.array([1 + 1j, 2, 1 + 1j, 2, 1 + 1j, 2]), "y holds complex numbers"),
    (np.array([None, "a", "b", "a", "b", "a"], dtype=object), r"missing labels at positions \[0\]"),
])
@pytest.mark.parametrize("method", ["fisher", "auc", "pearson", "relieff"])
def test_labels_that_cannot_be_classes_are_named_errors(y, message, method):
    with pytest.raises(ValueError, match=message):
        gs.score(X6, y, method=method)


def test_float_labels_rule():
    y = np.array([0.5, 1.5] * 3)
    ref = gs.score(X6, np.array(["a", "b"] * 3), method="fisher")
    np.testing.assert_array_equal(gs.score(X6, y, method="fisher").scores, ref.scores)  # classes 0.5 < 1.5
    many = np.linspace(0, 1, 6) + 0.01  # every value once: a measurement
    with pytest.raises(ValueError, match="continuous target .* at most 20 values, each at least twice"):
        gs.score(X6, many, method="fisher")
    gs.score(X6, many, method="pearson")  # what the message suggests works
    rng = np.random.RandomState(0)
    X = rng.normal(size=(63, 2))
    with pytest.raises(ValueError, match="continuous target"):  # 21 distinct values, each three times
        gs.score(X, np.repeat(np.arange(21) + 0.5, 3), method="anova")
    assert gs.score(X[:60], np.repeat(np.arange(20) + 0.5, 3), method="anova").classes.size == 20


def test_integer_labels_with_a_blank_cell_keep_their_spelling(tmp_path, capsys):
    """A phenotype column of 0 and 1 with one blank cell (pandas reads it as floats): the labels are
    0 and 1 in every output (columns mean_0, proba_1, classes), and predict's truth matches them;
    a column of true fractions keeps them."""
    from genosift.cli import main
    from genosift.jobs.labelled import spelled_labels

    rng = np.random.RandomState(0)
    ids = [f"s{i}" for i in range(30)]
    y = np.arange(30) % 2
    data = pd.DataFrame(rng.normal(size=(30, 6)) + y[:, None] * [2, 0, 0, 0, 0, 0], columns=list("abcdef"))
    data.insert(0, "id", ids)
    data.to_csv(tmp_path / "data.csv", index=False)
    pd.DataFrame({"id": ids, "label": [str(v) if i != 3 else "" for i, v in enumerate(y)]}).to_csv(
        tmp_path / "meta.csv", index=False)
    common = [str(tmp_path / "data.csv"), "--meta", str(tmp_path / "meta.csv"), "--id", "id", "--target", "label"]
    assert main(["score", *common, "-o", str(tmp_path / "s.tsv")]) == 0
    assert pd.read_csv(tmp_path / "s.tsv", sep="\t").columns[7:11].tolist() == ["pattern", "pattern_size", "mean_0",
                                                                               "mean_1"]
    assert main(["evaluate", *common, "--k", "2", "--cv", "3", "-o", str(tmp_path / "ev")]) == 0
    assert pd.read_csv(tmp_path / "ev" / "predictions.tsv", sep="\t").filter(like="proba_").columns.tolist() == \
        ["proba_0", "proba_1"]
    assert gs.workflow.load_model(tmp_path / "ev")["classes"] == ["0", "1"]
    assert main(["predict", str(tmp_path / "ev"), str(tmp_path / "data.csv"), "--meta", str(tmp_path / "meta.csv"),
                 "--id", "id", "--target", "label", "-o", str(tmp_path / "p.tsv")]) == 0
    pred = pd.read_csv(tmp_path / "p.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert set(pred["true"]) == {"0", "1", ""}
    capsys.readouterr()
    fractions = pd.Series([0.5, np.nan, 1.5])
    assert spelled_labels(fractions) is fractions
    assert spelled_labels(pd.Series([2.0, np.nan, -1.0])).tolist()[::2] == [2, -1]
    written_as_floats = pd.Series([0.0, 1.0, 1.0])  # "0.0" in the file, no blank: pandas had no reason to change it
    assert spelled_labels(written_as_floats) is written_as_floats
