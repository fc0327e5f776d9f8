"""The modelling workflow: evaluate (selection inside the folds), results folder, predict, CLI."""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import balanced_accuracy_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold

import genosift as gs
from genosift.cli import main
from genosift.workflow import evaluate, load_model, make_model, predict, write_results

SPEC_FILES = ["run.json", "cv_metrics.tsv", "curve.tsv", "per_class.tsv", "confusion.tsv", "predictions.tsv",
              "scores.tsv", "selected.tsv", "stability.tsv", "top_values.tsv", "model.skops", "model.json"]


@pytest.fixture(scope="module")
def golub():
    X, y, names = gs.load_golub()
    return X, y, names


def test_folds_are_scored_on_their_training_samples_only(golub):
    X, y, names = golub
    ks = [2, 20, 200]
    ev = evaluate(X, y, method="fisher", ks=ks, cv=4, random_state=3, feature_names=names)
    splits = list(StratifiedKFold(4, shuffle=True, random_state=3).split(X, y))
    model = make_model("logistic", random_state=3)
    for i, (train, test) in enumerate(splits):
        ranking = gs.score(X[train], y[train], method="fisher").ranking
        for k in ks:
            top = np.sort(ranking[:k])  # the columns in feature order, as the folds fit them
            fitted = clone(model).fit(X[train][:, top], y[train])
            pred = fitted.predict(X[test][:, top])
            row = ev.cv_metrics[(ev.cv_metrics["fold"] == i) & (ev.cv_metrics["k"] == k)].iloc[0]
            assert row["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y[test], pred), abs=1e-12)
            auc = roc_auc_score(y[test] == "AML", fitted.predict_proba(X[test][:, top])[:, 1])
            assert row["roc_auc"] == pytest.approx(auc, abs=1e-12)
            assert row["n_train"] == len(train) and row["n_test"] == len(test)
    means = ev.cv_metrics.groupby("k")["balanced_accuracy"].mean()
    assert ev.best_k == int(means.idxmax())
    np.testing.assert_allclose(ev.curve["balanced_accuracy_mean"], means.loc[ks].to_numpy(), rtol=1e-12)
    # the final model: the best k of the ranking on all samples
    ref = gs.score(X, y, method="fisher", feature_names=names)
    chosen = np.flatnonzero(ev.pipeline.named_steps["select"].get_support())
    assert set(chosen) == set(ref.ranking[: ev.best_k])


def test_no_selection_leak_on_noise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5000))
    y = np.repeat([0, 1], 30)
    ev = evaluate(X, y, method="welch", ks=[10], cv=5, random_state=0)
    honest = ev.curve["balanced_accuracy_mean"].iloc[0]
    # the leak: rank on all samples first, then cross-validate the model on those features
    top = gs.score(X, y, method="welch").ranking[:10]
    leaky = []
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        fitted = make_model("logistic").fit(X[train][:, top], y[train])
        leaky.append(balanced_accuracy_score(y[test], fitted.predict(X[test][:, top])))
    assert honest < 0.7 < 0.85 < np.mean(leaky)


def test_results_folder_and_predict(golub, tmp_path):
    X, y, names = golub
    ids = np.array([f"p{i}" for i in range(len(y))], dtype=object)
    ev = evaluate(X, y, method="welch", ks=[5, 50], cv=3, sample_ids=ids, feature_names=names, random_state=1)
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    assert sorted(p.name for p in out.iterdir()) == sorted([*SPEC_FILES, ".genosift-results.json"])
    assert sorted(json.loads((out / ".genosift-results.json").read_text())["files"]) == sorted(SPEC_FILES)
    run = json.loads((out / "run.json").read_text())
    assert run["best_k"] == ev.best_k and run["classes"] == ["ALL", "AML"] and run["has_pvalues"]
    oof = pd.read_csv(out / "predictions.tsv", sep="\t")
    assert sorted(oof["sample"]) == sorted(ids) and list(oof.columns[-2:]) == ["proba_ALL", "proba_AML"]
    confusion = pd.read_csv(out / "confusion.tsv", sep="\t")
    assert confusion[["ALL", "AML"]].to_numpy().sum() == len(y)
    assert int(confusion.set_index("true").loc["ALL"].sum()) == int((y == "ALL").sum())
    selected = pd.read_csv(out / "selected.tsv", sep="\t")
    ref = gs.score(X, y, method="welch", feature_names=names)
    assert list(selected["feature"]) == list(ref.top(ev.best_k))
    np.testing.assert_allclose(selected["pvalue"], ref.pvalues[ref.ranking[: ev.best_k]], rtol=1e-9)
    stability = pd.read_csv(out / "stability.tsv", sep="\t")
    in_folds = pd.Series(np.concatenate([names[f["ranking"][: ev.best_k]] for f in ev.folds])).value_counts() / 3
    np.testing.assert_allclose(stability.set_index("feature")["frequency"], in_folds.loc[stability["feature"]],
                               rtol=1e-9)
    assert len(stability) == len(in_folds) and stability["frequency"].is_monotonic_decreasing
    top_values = pd.read_csv(out / "top_values.tsv", sep="\t")
    assert list(top_values.columns[2:]) == list(ref.top(12))
    np.testing.assert_allclose(top_values[ref.top(1)[0]], X[:, ref.ranking[0]], rtol=1e-9)
    with pytest.raises(FileExistsError, match="Pass overwrite=True to replace it, or choose another output path"):
        write_results(ev, out, X=X, y=y)

    saved = load_model(out)
    assert saved["selected"] == list(ref.top(ev.best_k))
    frame, notes = predict(saved, X, names, sample_ids=ids)
    np.testing.assert_array_equal(frame["predicted"], ev.pipeline.predict(X))
    # columns in another order, plus an unknown one: the same predictions
    order = np.random.default_rng(0).permutation(X.shape[1])
    shuffled = np.column_stack([X[:, order], np.ones(len(y))])
    frame2, notes2 = predict(saved, shuffled, [*names[order], "extra"], sample_ids=ids)
    pd.testing.assert_frame_equal(frame, frame2)
    assert any("ignored" in n for n in notes2)
    used = saved["selected"][0]
    keep = names != used
    with pytest.raises(ValueError, match=f"not in the new data: .*{used}.*pass fill_missing=True"):
        predict(saved, X[:, keep], names[keep])
    filled, notes3 = predict(saved, sp.csr_matrix(X[:, keep]), names[keep], fill_missing=True)
    zeroed = X.copy()
    zeroed[:, ~keep] = 0
    np.testing.assert_array_equal(filled["predicted"], ev.pipeline.predict(zeroed))
    assert any("set to 0" in n for n in notes3)


def test_validation_split_by_groups(golub):
    X, y, names = golub
    held = np.zeros(len(y), dtype=bool)
    held[::4] = True
    ev = evaluate(X, y, method="fisher", ks=[10], validation=held, random_state=0)
    assert ev.cv == {"kind": "validation", "folds": 1, "seed": 0}
    train = ~held
    top = gs.score(X[train], y[train], method="fisher").ranking[:10]
    fitted = make_model("logistic").fit(X[train][:, top], y[train])
    assert ev.cv_metrics["balanced_accuracy"].iloc[0] == pytest.approx(
        balanced_accuracy_score(y[held], fitted.predict(X[held][:, top])))


def test_k_grid_and_folds_follow_the_rule_of_model_selection():
    """One k-grid rule and one fold rule: evaluate tries a k above the number of features as all
    of them, with the warning cross_validate_ks and SelectKCV give, on the folds they make."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 30))
    y = np.repeat(["a", "b"], 20)
    X[y == "b", :3] += 2
    with pytest.warns(UserWarning, match=r"ks above n_features=30 \(\[100, 500\]\) are evaluated as k=30"):
        ev = evaluate(X, y, ks=[100, 5, 500], cv=4, random_state=7)
    assert ev.ks == [5, 30] and ev.curve["k"].tolist() == [5, 30]
    assert json.loads(json.dumps(ev.ks)) == [5, 30]
    sel = gs.SelectKCV("fisher", ks=[5, 30], cv=4, random_state=7).fit(X, y)
    assert len(ev.folds) == len(sel.cv_splits_) == 4
    for fold, (train, test) in zip(ev.folds, sel.cv_splits_):
        np.testing.assert_array_equal(fold["train"], train)
        np.testing.assert_array_equal(fold["test"], test)
    with pytest.raises(ValueError, match=r"The 'ks' parameter of evaluate must be a non-empty sequence of ints"):
        evaluate(X, y, ks=[0, 5])
    with pytest.raises(ValueError, match=r"The 'ks' parameter of evaluate"):
        evaluate(X, y, ks=[2.5])


def test_bad_parameters(golub):
    X, y, _ = golub
    with pytest.raises(ValueError, match="smallest class has 11 sample"):
        evaluate(X, y, ks=[10], cv=12)
    with pytest.raises(ValueError, match="Unknown option"):
        evaluate(X, y, ks=[10], model_options={"depth": 3})
    with pytest.raises(ValueError, match="is for numeric targets and scores two classes.*but y has 3"):
        evaluate(X, np.array(["a", "b", "c"] * 13)[:38], method="pearson", ks=[10])
    with pytest.raises(ValueError, match="takes no target"):
        evaluate(X, y, method="variance", ks=[10])


def test_cli_evaluate_then_predict(tmp_path, capsys):
    X, y, names = gs.load_golub()
    ids = [f"patient-{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :400], columns=names[:400])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "expr.csv", index=False)
    pd.DataFrame({"sample": ids, "type": y, "site": (["a", "b", "c"] * 13)[:38]}).to_csv(tmp_path / "meta.csv",
                                                                                         index=False)
    out = tmp_path / "results"
    argv = ["evaluate", str(tmp_path / "expr.csv"), "--meta", str(tmp_path / "meta.csv"), "--id", "sample",
            "--target", "type", "--method", "fisher", "--k", "5,50", "--cv", "3", "--model", "random_forest",
            "--model-option", "n_estimators=50", "--seed", "2", "-o", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    run = json.loads((out / "run.json").read_text())
    assert f"Best k = {run['best_k']}" in text and run["model_options"] == {"n_estimators": 50}
    assert main(argv) == 1 and "--force" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    capsys.readouterr()
    preds = tmp_path / "pred.tsv"
    assert main(["predict", str(out / "model.skops"), str(tmp_path / "expr.csv"), "--meta", str(tmp_path / "meta.csv"),
                 "--id", "sample", "--target", "type", "-o", str(preds)]) == 0
    table = pd.read_csv(preds, sep="\t")
    assert list(table.columns[:4]) == ["sample", "predicted", "true", "in_training"]
    # cross-validated: the final model was fitted on all 38 samples, so none is held out
    assert table["in_training"].all() and "no held-out accuracy: all 38" in capsys.readouterr().out
    ev_again = pd.read_csv(out / "selected.tsv", sep="\t")
    assert len(ev_again) == run["best_k"]
    # validation by groups, and bad option values
    assert main([*argv[:-2], "--group", "site", "--val-groups", "c", "-o", str(tmp_path / "val")]) == 0
    assert json.loads((tmp_path / "val" / "run.json").read_text())["cv"]["kind"] == "validation"
    for bad in (["--k", "0,5"], ["--model-option", "C"], ["--model", "knn"]):
        with pytest.raises(SystemExit) as usage:
            main([*argv, "--force", *bad])
        assert usage.value.code == 2


def test_kmer_run_end_to_end(tmp_path, capsys):
    """GenoLearn's run, done with genosift: k-mer counts -> store -> evaluate over k -> predict."""
    from conftest import require_shared

    folder = require_shared("pyseer_kmers")
    store = tmp_path / "kmers.gs.h5ad"
    pheno = str(folder / "example.pheno")
    assert main(["convert", str(folder / "kmers.gz"), "--meta", pheno, "--id", "samples", "-o", str(store)]) == 0
    out = tmp_path / "results"
    assert main(["evaluate", str(store), "--target", "binary", "--method", "chi2_counts", "--k", "5,20,200",
                 "--cv", "3", "--seed", "1", "-o", str(out)]) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["n_samples"] == 1837 and run["n_features"] == 200 and run["best_k"] in (5, 20, 200)
    # the same numbers from the library on the matrix in memory
    ds = gs.io.read_kmers(folder / "kmers.gz")
    meta = gs.io.read_metadata(folder / "example.pheno", id_column="samples")
    y = meta.loc[ds.sample_ids, "binary"].to_numpy()
    ev = evaluate(ds.X, y, method="chi2_counts", ks=[5, 20, 200], cv=3, random_state=1)
    curve = pd.read_csv(out / "curve.tsv", sep="\t")
    np.testing.assert_allclose(curve["balanced_accuracy_mean"], ev.curve["balanced_accuracy_mean"], rtol=1e-9)
    assert curve["balanced_accuracy_mean"].between(0.4, 0.6).all()  # these 200 k-mers do not predict it
    capsys.readouterr()
    preds = tmp_path / "pred.tsv"
    assert main(["predict", str(out), str(folder / "kmers.gz"), "--meta", pheno, "--id", "samples",
                 "--target", "binary", "-o", str(preds)]) == 0
    table = pd.read_csv(preds, sep="\t")
    assert len(table) == 1837 and set(table["predicted"].astype(str)) <= {"0", "1"}


def test_report_of_a_real_evaluation(golub, tmp_path):
    pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")
    from genosift.report import make_report

    X, y, names = golub
    ev = evaluate(X, y, method="welch", ks=[2, 20, 200], cv=3, feature_names=names, random_state=0)
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    html, pngs = make_report(out, tmp_path / "report.html")
    text = html.read_text()
    assert f"{ev.best_k}" in text and len(pngs) == 8 and all(p.stat().st_size > 10_000 for p in pngs)  # ROC, QQ


def test_predict_takes_true_labels_from_the_data_table(golub, tmp_path, capsys):
    X, y, names = golub
    ev = evaluate(X, y, method="welch", ks=[5], cv=3, feature_names=names)
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    table = pd.DataFrame(X, columns=names)
    table.insert(0, "type", y)
    table.insert(0, "sample", [f"s{i}" for i in range(len(y))])
    table.to_csv(tmp_path / "labelled.csv", index=False)
    preds = tmp_path / "pred.tsv"
    assert main(["predict", str(out), str(tmp_path / "labelled.csv"), "--target", "type", "-o", str(preds)]) == 0
    frame = pd.read_csv(preds, sep="\t")
    np.testing.assert_array_equal(frame["true"], y)
    np.testing.assert_array_equal(frame["predicted"], ev.pipeline.predict(X))
    assert f"accuracy on the {len(y)} sample(s)" in capsys.readouterr().out
    assert main(["predict", str(out), str(tmp_path / "labelled.csv"), "--target", "type", "-o",
                 str(tmp_path / "pred.xyz")]) == 1
    assert "name it .tsv, .csv or .parquet" in capsys.readouterr().err and not (tmp_path / "pred.xyz").exists()


# ------------------------------------------------------------------ predict: held-out samples only
def test_predict_scores_the_samples_not_used_in_training(tmp_path):
    from sklearn.metrics import accuracy_score

    from genosift.workflow import held_out_metrics

    rng = np.random.default_rng(2)  # weak signal: a model right on its training samples, not on others
    X = rng.normal(size=(60, 300))
    y = np.repeat(["a", "b"], 30)
    X[y == "b", :5] += 0.6
    names = np.array([f"g{j}" for j in range(300)], dtype=object)
    ids = np.array([f"p{i}" for i in range(len(y))], dtype=object)
    held = np.zeros(len(y), dtype=bool)
    held[1::3] = True
    ev = evaluate(X, y, method="welch", ks=[30, 100], validation=held, sample_ids=ids, feature_names=names)
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    info = json.loads((out / "model.json").read_text())
    assert info["training_samples"] == ids[~held].tolist()  # the samples the final model was fitted on
    saved = load_model(out)
    assert saved["training_samples"] == ids[~held].tolist()
    frame, _ = predict(saved, X, names, sample_ids=ids)
    np.testing.assert_array_equal(frame["in_training"], ~held)
    m = held_out_metrics(frame, y)
    pred = ev.pipeline.predict(X)
    assert (m["n_known"], m["n_training"], m["n_held_out"]) == (60, int((~held).sum()), int(held.sum()))
    assert m["accuracy"] == accuracy_score(y[held], pred[held])  # the rows not used in training, only
    assert m["balanced_accuracy"] == balanced_accuracy_score(y[held], pred[held])
    assert m["accuracy"] != accuracy_score(y, pred)  # all rows would count the training ones too
    # unknown labels are not counted
    partly = y.astype(object)
    partly[:6] = None
    m2 = held_out_metrics(frame, partly)
    known = np.arange(len(y)) >= 6
    assert m2["n_held_out"] == int((held & known).sum())
    assert m2["accuracy"] == accuracy_score(y[held & known], pred[held & known])
    # a model that does not know its training samples: no flag, a note
    old = {**saved, "training_samples": None}
    frame_old, notes = predict(old, X, names, sample_ids=ids)
    assert "in_training" not in frame_old and any("does not know the ids" in n for n in notes)
    m3 = held_out_metrics(frame_old, y)
    assert m3["n_training"] is None and m3["n_held_out"] == 60


def test_cli_predict_prints_held_out_accuracy_and_both_counts(tmp_path, capsys):
    from sklearn.metrics import accuracy_score

    X, y, names = gs.load_golub()
    ids = [f"patient-{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :300], columns=names[:300])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "expr.csv", index=False)
    site = np.array((["a", "b", "c"] * 13)[:38])
    pd.DataFrame({"sample": ids, "type": y, "site": site}).to_csv(tmp_path / "meta.csv", index=False)
    out = tmp_path / "results"
    meta = ["--meta", str(tmp_path / "meta.csv"), "--id", "sample"]
    assert main(["evaluate", str(tmp_path / "expr.csv"), *meta, "--target", "type", "--k", "5,50", "--group", "site",
                 "--val-groups", "c", "-o", str(out), "--quiet"]) == 0
    capsys.readouterr()
    preds = tmp_path / "pred.tsv"
    assert main(["predict", str(out), str(tmp_path / "expr.csv"), *meta, "--target", "type", "-o", str(preds)]) == 0
    text = capsys.readouterr().out
    table = pd.read_csv(preds, sep="\t")
    assert list(table.columns[:4]) == ["sample", "predicted", "true", "in_training"]
    np.testing.assert_array_equal(table["in_training"], site != "c")
    val = (site == "c")
    acc = accuracy_score(table["true"][val], table["predicted"][val])
    bal = balanced_accuracy_score(table["true"][val], table["predicted"][val])
    assert (f"held-out accuracy {acc:.3f} (balanced {bal:.3f}) on the {int(val.sum())} sample(s) with a known "
            f"'type' not used in training; {int((~val).sum())} sample(s) used in training (in_training = True) "
            "left out") in text
    assert f"{accuracy_score(table['true'], table['predicted']):.3f}" not in text.split("held-out")[1][:40]


# ------------------------------------------------------------------ one validation split is not cross-validation
def test_cli_evaluate_names_one_split_as_such(tmp_path, capsys):
    X, y, names = gs.load_golub()
    ids = [f"s{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :200], columns=names[:200])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "expr.csv", index=False)
    pd.DataFrame({"sample": ids, "type": y, "site": (["a", "b", "c"] * 13)[:38]}).to_csv(tmp_path / "meta.csv",
                                                                                      index=False)
    argv = ["evaluate", str(tmp_path / "expr.csv"), "--meta", str(tmp_path / "meta.csv"), "--id", "sample",
            "--target", "type", "--k", "4,40", "--quiet"]
    assert main([*argv, "--group", "site", "--val-groups", "c", "-o", str(tmp_path / "val")]) == 0
    text = capsys.readouterr().out
    assert "cross-validation" not in text.lower() and "CV" not in text and "+/-" not in text and "fold" not in text
    assert "one train/validation split (26 training, 12 validation samples)" in text
    curve = pd.read_csv(tmp_path / "val" / "curve.tsv", sep="\t")
    assert curve.filter(like="_std").isna().all().all()  # one value per k: no spread
    best = json.loads((tmp_path / "val" / "run.json").read_text())["best_k"]
    value = curve.set_index("k").loc[best, "balanced_accuracy_mean"]
    assert (f"Best k = {best} by balanced_accuracy ({value:.3f}), picked on the 12 validation samples of this "
            "one split") in text
    for row in curve.itertuples():
        assert f"{row.accuracy_mean:.3f}" in text
    # the report of that folder: no cross-validation, no spread, the best k picked on the split
    if importlib.util.find_spec("matplotlib") is not None:
        import re
        from html import unescape

        from genosift.report import make_report

        page = unescape(make_report(tmp_path / "val", tmp_path / "val.html").html.read_text())
        page = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
        assert "cross-validat" not in page.lower() and "\u00b1" not in page and "out-of-fold" not in page.lower()
        assert "one training / validation split" in page
        assert "best k picked on the validation samples of that split, by balanced accuracy" in page
    # folds: means with their spread
    assert main([*argv, "--cv", "3", "-o", str(tmp_path / "cv")]) == 0
    text = capsys.readouterr().out
    assert "3-fold cross-validation" in text and "+/-" in text and "the mean over the folds" in text


# ------------------------------------------------------------------ progress
def _progress_spy(monkeypatch):
    """Record every progress bar opened: its title, total, the steps it was told, and whether it draws."""
    from contextlib import contextmanager

    from genosift.core import engine

    seen = []
    real = engine.progress

    class Spy:
        def __init__(self, bar, title, total):
            self.bar, self.title, self.total, self.steps, self.done = bar, title, total, [], 0
            self.drawn = not isinstance(bar, engine._Silent)

        def advance(self, n=1):
            self.done += n
            self.bar.advance(n)

        def describe(self, text):
            self.steps.append(text)
            self.bar.describe(text)

    @contextmanager
    def spy(description, total=None, unit=""):
        with real(description, total, unit) as bar:
            seen.append(Spy(bar, description, total))
            yield seen[-1]

    monkeypatch.setattr(engine, "progress", spy)
    return seen


def test_evaluate_and_convert_show_progress_on_a_terminal_unless_quiet(tmp_path, capsys, monkeypatch):
    import sys

    pytest.importorskip("h5py", reason="convert writes a store (h5py)")
    X, y, names = gs.load_golub()
    ids = [f"s{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :100], columns=names[:100])
    data.insert(0, "sample", ids)
    data.insert(1, "type", y)
    data.to_csv(tmp_path / "expr.csv", index=False)
    argv = ["evaluate", str(tmp_path / "expr.csv"), "--target", "type", "--k", "2,20", "--cv", "3"]
    seen = _progress_spy(monkeypatch)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main([*argv, "-o", str(tmp_path / "a")]) == 0
    bars = {s.title: s for s in seen}
    folds = bars["Cross-validation"]
    assert folds.drawn and folds.total == 6 and folds.done == 6
    assert folds.steps == [f"Fold {i}/3: {step}" for i in (1, 2, 3)
                           for step in ("scoring the features", "fitting k = 2", "fitting k = 20")]
    assert bars["Final model"].drawn and bars["Final model"].done == 2
    assert bars["Reading expr.csv"].drawn and bars["Reading expr.csv"].done == pytest.approx(
        (tmp_path / "expr.csv").stat().st_size / 2**20)
    capsys.readouterr()
    # --quiet: no bar is drawn, nothing on stderr
    seen.clear()
    assert main([*argv, "-o", str(tmp_path / "b"), "--quiet"]) == 0
    assert seen and not any(s.drawn for s in seen) and capsys.readouterr().err == ""
    assert {s.title for s in seen} >= {"Cross-validation", "Final model", "Reading expr.csv"}
    # stderr that is not a terminal (a pipe, a log file): quiet too
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    seen.clear()
    assert main([*argv, "-o", str(tmp_path / "c")]) == 0
    assert seen and not any(s.drawn for s in seen) and capsys.readouterr().err == ""
    # one validation split is named so
    seen.clear()
    held = np.arange(len(y)) % 3 == 0
    evaluate(X[:, :50], y, ks=[2], validation=held)
    assert seen[0].title == "Validation split" and seen[0].steps == [
        "Validation split: scoring the features", "Validation split: fitting k = 2"]
    # convert shows the reading of a table
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    seen.clear()
    assert main(["convert", str(tmp_path / "expr.csv"), "--keep", "type", "-o", str(tmp_path / "e.gs.h5ad")]) == 0
    reading = [s for s in seen if s.title == "Reading expr.csv"]
    assert reading and reading[0].drawn and reading[0].done == pytest.approx(reading[0].total)


def test_predict_of_kmers_refuses_metadata_samples_on_no_kmer_line(tmp_path, capsys):
    """The absent-sample rule of every k-mer command holds for predict's true labels too: a sample
    of --meta on no k-mer line is an error naming the closest ids, unless --absent-samples drop."""
    rng = np.random.default_rng(0)
    samples = [f"S{i:02d}" for i in range(30)]
    y = np.repeat([0, 1], 15)
    lines = []
    for j in range(40):
        rates = (0.2, 0.8) if j < 4 else (0.4, 0.4)  # the first 4 k-mers mark the cases
        carriers = [s for s, label in zip(samples, y) if rng.random() < rates[label]]
        lines.append("".join(rng.choice(list("ACGT"), 21)) + " | " + " ".join(f"{s}:1" for s in carriers) + "\n")
    kmers = tmp_path / "kmers.txt"
    kmers.write_text("".join(lines))
    meta = tmp_path / "meta.tsv"
    meta.write_text("sample\ty\n" + "".join(f"{s}\t{v}\n" for s, v in zip(samples, y)))
    assert main(["evaluate", str(kmers), "--meta", str(meta), "--id", "sample", "--target", "y", "--k", "4",
                 "--cv", "3", "-o", str(tmp_path / "results")]) == 0
    typo = tmp_path / "typo.tsv"
    typo.write_text(meta.read_text().replace("S05\t", "S05a\t"))
    capsys.readouterr()
    model = str(tmp_path / "results" / "model.skops")
    common = [model, str(kmers), "--meta", str(typo), "--id", "sample", "--target", "y"]
    assert main(["predict", *common, "-o", str(tmp_path / "p.tsv")]) == 1
    err = capsys.readouterr().err
    assert "1 sample(s) of the metadata" in err
    assert "are among none of the data's samples: 'S05a' (closest: 'S05')" in err
    assert "pass --absent-samples drop to leave them out" in err and "zeros" not in err
    assert not (tmp_path / "p.tsv").exists()
    assert main(["predict", model, str(kmers), "--absent-samples", "drop", "-o", str(tmp_path / "q.tsv")]) == 2
    assert "--absent-samples says what becomes of the samples of --meta" in capsys.readouterr().err
    assert main(["predict", *common, "--absent-samples", "drop", "-o", str(tmp_path / "p.tsv")]) == 0
    frame = pd.read_csv(tmp_path / "p.tsv", sep="\t", index_col="sample")
    assert frame["true"].isna().tolist() == [s == "S05" for s in samples]
