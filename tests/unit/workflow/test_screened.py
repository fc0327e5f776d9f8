"""``evaluate`` of a store without the store in memory: the rankings scored from it, only their top
features read. Every table of the results folder is the in-memory evaluation's, byte for byte,
and the saved model predicts the same classes and probabilities from data with every feature."""
import filecmp
import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.cli import main
from genosift.io import Dataset, open_store, write_store
from genosift.sources import StoreRows, in_memory
from genosift.workflow import evaluate, load_model, predict, predict_store, write_results
from genosift.workflow.evaluation import Asked
from genosift.workflow.screened import can_screen, evaluate_store

TABLES = ["confusion.tsv", "curve.tsv", "cv_metrics.tsv", "per_class.tsv", "predictions.tsv", "scores.tsv",
          "selected.tsv", "stability.tsv", "top_values.tsv"]


def _store(tmp_path, *, n=150, p=3000, k=3, seed=1, binary=False):
    """A store of counts (integers: every order of the rows sums them exactly) whose first 30
    features follow the class; labels of every row."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = sp.random(n, p, density=0.05, random_state=seed, format="csr")
    X.data = np.ceil(X.data * 9)
    signal = sp.csr_matrix((y[:, None] * rng.integers(0, 3, (n, 30))).astype(np.float64))
    X = sp.hstack([X[:, :30] + signal, X[:, 30:]], format="csr")
    ds = Dataset(X, np.array([f"s{i}" for i in range(n)], dtype=object),
                 np.array([f"kmer{j}" for j in range(p)], dtype=object))
    return open_store(write_store(ds, tmp_path / "d.gs.h5ad"), binary=binary), y


def _both(tmp_path, store, y, rows, unlabelled=None, **options):
    """The screened and the in-memory evaluation of the same rows, written to two folders."""
    data = StoreRows(store, rows)
    options = dict(sample_ids=store.sample_ids[rows], feature_names=store.names_loader(), **options)
    others = None if unlabelled is None else StoreRows(store, unlabelled)
    if unlabelled is not None:
        options["unlabelled_ids"] = store.sample_ids[unlabelled]
    ev_s, X_s, _ = evaluate_store(data, y[rows], Asked(**options), unlabelled=others)
    X_m = in_memory(data)
    ev_m = evaluate(X_m, y[rows], unlabelled=None if others is None else in_memory(others), **options)
    a = write_results(ev_s, tmp_path / "screened", X=X_s, y=y[rows])
    b = write_results(ev_m, tmp_path / "memory", X=X_m, y=y[rows])
    ev_s.profile.close()
    return ev_s, ev_m, X_s, a, b


def _same_folders(a, b, *, tables=TABLES):
    for name in tables:
        assert filecmp.cmp(a / name, b / name, shallow=False), name
    run_a, run_b = (json.loads((f / "run.json").read_text()) for f in (a, b))
    read = run_a["notes"].pop()  # what the screened evaluation says it read
    assert read.startswith("The store stayed on disk") and "features in the top" in read
    assert run_a == run_b


def _same_predictions(a, b, store):
    """Both saved models, given every feature of every sample, predict the same."""
    X = store.to_dataset().X
    names = np.asarray(store.feature_names, dtype=object)
    pa, notes_a = predict(load_model(a), X, names, sample_ids=store.sample_ids)
    pb, _ = predict(load_model(b), X, names, sample_ids=store.sample_ids)
    pd.testing.assert_frame_equal(pa, pb)
    # from the store itself, reading only the model's features: the same frame and notes
    pc, notes_c = predict_store(load_model(a), StoreRows(store), sample_ids=store.sample_ids)
    pd.testing.assert_frame_equal(pa, pc)
    assert notes_a == notes_c
    model = json.loads((a / "model.json").read_text())
    assert len(model["features"]) < store.shape[1]  # the screened model lists only the features it read
    assert model["selected"] == json.loads((b / "model.json").read_text())["selected"]


@pytest.mark.parametrize("method, model, k, options", [
    ("fisher", "logistic", 3, {}),
    # the screen reads the same columns whatever the model: the forests' fits (10-12 s each) run
    # with the slow checks; the logistic cases keep the screen in every run
    pytest.param("auc", "random_forest", 2, {"min_af": 0.05, "max_af": 0.9}, marks=pytest.mark.slow),
    # permutation importance on the folds (20 boosting rounds: the same code paths, a fifth of the fits)
    pytest.param("chi2_counts", "hist_gradient_boosting", 3, {"model_options": {"max_iter": 20}},
                 marks=pytest.mark.slow),
    ("kruskal", "logistic", 3, {"model_options": {"C": [0.1, 1.0]}}),
])
def test_screened_evaluation_writes_the_in_memory_tables(tmp_path, method, model, k, options):
    store, y = _store(tmp_path, k=k)
    rows = np.random.default_rng(0).permutation(store.shape[0])[:130]  # not in the store's order
    ev_s, ev_m, X_s, a, b = _both(tmp_path, store, y, rows, method=method, model=model, ks=[3, 10, 40], cv=3,
                                  random_state=0, **options)
    _same_folders(a, b)
    _same_predictions(a, b, store)
    # what was read: the top 40 of the 3 folds and of the final ranking at most
    assert X_s.shape == (130, ev_s.columns.size) and ev_s.columns.size <= 4 * 40
    np.testing.assert_array_equal(ev_s.columns, np.unique(ev_s.columns))
    assert ev_s.result.n_features == store.shape[1] == ev_m.result.n_features
    np.testing.assert_array_equal(ev_s.importance, ev_m.importance)


def test_screened_with_a_validation_split_unlabelled_samples_and_presence(tmp_path):
    store, y = _store(tmp_path, k=2, binary=True)
    rows, unlabelled = np.arange(20, 150), np.arange(20)
    validation = np.zeros(rows.size, dtype=bool)
    validation[::4] = True
    ev_s, ev_m, _, a, b = _both(tmp_path, store, y, rows, unlabelled=unlabelled, method="welch", ks=[5, 25],
                                validation=validation, binary=True, random_state=3)
    _same_folders(a, b, tables=[*TABLES, "unlabelled_predictions.tsv"])
    _same_predictions(a, b, store)
    assert ev_s.binary and ev_s.cv["kind"] == "validation"


def test_screened_with_covariates(tmp_path):
    store, y = _store(tmp_path, k=2, p=600)
    rng = np.random.default_rng(5)
    covariates = pd.DataFrame({"age": rng.normal(size=150), "site": rng.integers(0, 2, 150).astype(float)})
    rows = np.arange(150)
    _, _, _, a, b = _both(tmp_path, store, y, rows, method="logistic", ks=[4, 12], cv=3, covariates=covariates,
                          random_state=0)
    _same_folders(a, b)


def test_methods_that_pool_every_feature_are_not_screened(tmp_path):
    assert not can_screen(gs.get_method("moderated_t")) and not can_screen(gs.get_method("relieff"))
    assert all(can_screen(gs.get_method(m)) for m in ("fisher", "auc", "logistic", "chi2", "mi"))
    store, y = _store(tmp_path, p=200)
    with pytest.raises(ValueError, match="needs the whole matrix in memory for it: pass "
                                         "genosift.sources.in_memory"):
        evaluate_store(StoreRows(store), y.astype(float), Asked(method="moderated_t", ks=[5]))


def test_the_command_line_screens_a_store(tmp_path, capsys):
    """``genosift evaluate`` of a store writes the tables of ``evaluate`` on its matrix in memory."""
    store, y = _store(tmp_path)
    meta = tmp_path / "meta.tsv"
    pd.DataFrame({"sample": store.sample_ids, "label": y}).to_csv(meta, sep="\t", index=False)
    assert main(["evaluate", str(store.path), "--meta", str(meta), "--id", "sample", "--target", "label",
                 "--method", "anova", "--k", "5,30", "--cv", "3", "--seed", "2", "-o", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    X = in_memory(StoreRows(store))
    ev = evaluate(X, y, method="anova", ks=[5, 30], cv=3, random_state=2, sample_ids=store.sample_ids,
                  feature_names=store.names_loader())
    write_results(ev, tmp_path / "b", X=X, y=y)
    for name in TABLES:
        assert filecmp.cmp(tmp_path / "a" / name, tmp_path / "b" / name, shallow=False), name
    assert not list(tmp_path.glob(".genosift-profile*"))  # the profile's temporary file is gone


def test_names_default_to_the_stores(tmp_path):
    store, y = _store(tmp_path, p=400)
    ev, X, _ = evaluate_store(StoreRows(store), y, Asked(ks=[5], cv=3))
    ev.profile.close()
    names = np.asarray(store.feature_names, dtype=object)
    np.testing.assert_array_equal(ev.feature_names, names[ev.columns])
    assert list(ev.result.names_of(ev.result.ranking[:5])) == list(names[ev.result.ranking[:5]])
    assert X.shape == (150, ev.columns.size)


def test_presence_asked_of_a_store_of_counts(tmp_path):
    """``binary=True`` on a store opened as counts: scored and modelled as presence/absence, as in memory."""
    store, y = _store(tmp_path, k=2, p=800)
    assert not store.binary
    rows = np.arange(150)
    ev_s, _, _, a, b = _both(tmp_path, store, y, rows, method="fisher", ks=[4, 16], cv=3, binary=True)
    _same_folders(a, b)
    assert ev_s.binary


def test_the_command_line_budget_of_k_mer_text_and_stores(tmp_path, capsys, monkeypatch):
    """``evaluate --chunk-bytes``: k-mer text beyond it goes to a temporary store, screened, with the
    tables of the evaluation in memory; a store's reads take it; a table in memory refuses it."""
    import tempfile

    from genosift.io.datasets import write_synthetic_kmers

    kmers = tmp_path / "k.kmers"
    pheno, _ = write_synthetic_kmers(kmers, n_samples=60, n_kmers=600, density=0.3)
    meta = tmp_path / "pheno.csv"
    pheno.to_csv(meta)
    run = ["--meta", str(meta), "--id", "sample", "--target", "phenotype", "--binary", "--method", "chi2",
           "--k", "5,20", "--cv", "3", "--seed", "1"]
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    assert main(["evaluate", str(kmers), *run, "-o", str(tmp_path / "memory")]) == 0
    assert "temporary store" not in capsys.readouterr().out
    assert main(["evaluate", str(kmers), *run, "--chunk-bytes", "4096", "-o", str(tmp_path / "spilled")]) == 0
    assert "written to a temporary store" in capsys.readouterr().out
    assert list(temporary.iterdir()) == []  # the temporary store is gone with the command
    for name in TABLES:
        assert filecmp.cmp(tmp_path / "memory" / name, tmp_path / "spilled" / name, shallow=False), name
    store = tmp_path / "k.gs.h5ad"
    assert main(["convert", str(kmers), "-o", str(store)]) == 0
    assert main(["evaluate", str(store), *run, "--chunk-bytes", "4096", "-o", str(tmp_path / "store")]) == 0
    for name in TABLES:
        assert filecmp.cmp(tmp_path / "memory" / name, tmp_path / "store" / name, shallow=False), name
    table = tmp_path / "t.csv"
    table.write_text("id,f1,f2,y\na,1,2,R\nb,0,7,S\nc,1,1,R\nd,3,0,S\ne,2,2,R\nf,0,1,S\n")
    capsys.readouterr()
    assert main(["evaluate", str(table), "--target", "y", "--k", "1", "--cv", "2", "--chunk-bytes", "1M", "-o",
                 str(tmp_path / "t")]) == 1
    assert "--chunk-bytes sets the memory budget of scoring a store" in capsys.readouterr().err
