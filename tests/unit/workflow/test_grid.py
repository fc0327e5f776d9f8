"""A grid of model options crossed with the ks in evaluate: the metrics of every (options, k) against
scikit-learn's GridSearchCV on the same folds, one scoring per fold whatever the grid size, the tie
rule, the results folder, the command line and the report."""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

import genosift as gs
from genosift.cli import main
from genosift.selectors import cv as cv_module
from genosift.workflow import evaluate, load_model, make_model, predict, write_results
from genosift.workflow.grid import option_grid


@pytest.fixture(scope="module")
def golub():
    return gs.load_golub()


def _grid_search(X, y, ev, model, param_grid, ks, *, metric="balanced_accuracy", method_options=None):
    """scikit-learn's grid search over (k, options) of a Pipeline(SelectKBest, model) on ev's folds."""
    splits = [(f["train"], f["test"]) for f in ev.folds]
    pipe = Pipeline([("select", gs.SelectKBest(ev.method, k=ks[0], method_options=method_options)),
                     ("model", make_model(model, random_state=ev.seed))])
    grid = {"select__k": ks, **{f"model__model__{name}": values for name, values in param_grid.items()}}
    return GridSearchCV(pipe, grid, cv=splits, scoring=metric, refit=False).fit(X, y).cv_results_


def _curve_of(ev, options, k, metric="balanced_accuracy"):
    rows = ev.curve[(ev.curve["options"] == options) & (ev.curve["k"] == k)]
    assert len(rows) == 1
    return rows.iloc[0][f"{metric}_mean"]


def test_every_cell_of_the_grid_is_scikit_learns_grid_search(golub):
    X, y, names = golub
    ks, Cs = [2, 20, 200], [1.0, 0.001, 0.1]
    ev = evaluate(X, y, method="fisher", ks=ks, cv=4, model_options={"C": Cs, "max_iter": 2000},
                  random_state=3, feature_names=names)
    assert ev.grid.labels == ["C=0.001", "C=0.1", "C=1.0"]  # simplest (strongest regularisation) first
    assert ev.curve["options"].tolist() == [o for o in ev.grid.labels for _ in ks]
    assert len(ev.cv_metrics) == 4 * 3 * 3 and set(ev.cv_metrics["options"]) == set(ev.grid.labels)
    ref = _grid_search(X, y, ev, "logistic", {"C": Cs, "max_iter": [2000]}, ks)
    for params, mean, std in zip(ref["params"], ref["mean_test_score"], ref["std_test_score"]):
        label = f"C={params['model__model__C']}"
        row = ev.curve[(ev.curve["options"] == label) & (ev.curve["k"] == params["select__k"])].iloc[0]
        assert row["balanced_accuracy_mean"] == pytest.approx(mean, abs=1e-12)
        assert row["balanced_accuracy_std"] == pytest.approx(std, abs=1e-12)
    # the best cell, refitted on all samples with its options
    best = ev.curve["balanced_accuracy_mean"].max()
    assert _curve_of(ev, ev.best_options, ev.best_k) == best
    assert ev.pipeline.named_steps["model"].named_steps["model"].C == ev.model_options["C"]
    assert ev.model_options == {"C": float(ev.best_options[2:]), "max_iter": 2000}
    # the out-of-fold predictions are those of the best cell
    fold = ev.folds[0]
    np.testing.assert_array_equal(ev.oof["predicted"][: len(fold["test"])].to_numpy(),
                                  fold["predicted"][ev.best_setting, ev.best_k].astype(str))


def test_the_features_are_scored_once_per_fold_whatever_the_grid_size(golub, monkeypatch):
    X, y, names = golub
    calls = []
    real = cv_module.rank_features

    def counting(*args, **kwargs):
        calls.append(args[2].shape[0])  # the rows scored: a training fold
        return real(*args, **kwargs)

    monkeypatch.setattr(cv_module, "rank_features", counting)
    grids = [None, {"C": [0.01, 0.1, 1.0]}, {"C": [0.01, 0.1, 1.0], "class_weight": [None, "balanced"]}]
    rankings = []
    for options in grids:
        calls.clear()
        ev = evaluate(X, y, method="welch", ks=[5, 50], cv=3, model_options=options, random_state=0)
        assert len(calls) == 3, options  # one scoring per fold, for 1, 3 and 6 settings
        assert sorted(calls) == sorted(len(f["train"]) for f in ev.folds)
        assert len(ev.cv_metrics) == 3 * 2 * (1 if options is None else ev.grid.size)
        rankings.append([f["ranking"] for f in ev.folds])
    for other in rankings[1:]:  # the same rankings, whatever the grid
        for a, b in zip(rankings[0], other):
            np.testing.assert_array_equal(a, b)


def test_ties_go_to_the_simpler_model_then_the_smaller_k():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 30))
    y = np.repeat(["a", "b"], 30)
    X[y == "b", :4] += 4.0  # every model is right on every fold: all cells tie at 1.0
    ev = evaluate(X, y, method="welch", ks=[3, 10], cv=3, model_options={"C": [10.0, 1.0, 0.5]})
    assert (ev.curve["balanced_accuracy_mean"] == 1.0).all()
    assert (ev.best_options, ev.best_k) == ("C=0.5", 3)
    # trees: fewer, then shallower (None, no limit, the least simple)
    ev = evaluate(X, y, method="welch", ks=[3, 10], cv=3, model="random_forest",
                  model_options={"max_depth": [None, 4, 2], "n_estimators": [30, 10]})
    assert ev.grid.labels[:3] == ["max_depth=2, n_estimators=10", "max_depth=2, n_estimators=30",
                                  "max_depth=4, n_estimators=10"]
    assert (ev.best_options, ev.best_k) == ("max_depth=2, n_estimators=10", 3)
    # an option without a direction: its values in the order given
    ev = evaluate(X, y, method="welch", ks=[3], cv=3, model_options={"class_weight": ["balanced", None]})
    assert ev.grid.labels == ["class_weight='balanced'", "class_weight=None"] and ev.best_options == ev.grid.labels[0]


def test_a_better_cell_wins_over_a_simpler_one(golub):
    X, y, names = golub
    ev = evaluate(X, y, method="fisher", ks=[5, 50], cv=3, model_options={"C": [1e-4, 1.0]}, random_state=1)
    # a C so small that the model predicts the larger class only: balanced accuracy 0.5
    assert _curve_of(ev, "C=0.0001", 5) == 0.5 and _curve_of(ev, "C=0.0001", 50) == 0.5
    assert ev.best_options == "C=1.0" and _curve_of(ev, "C=1.0", ev.best_k) > 0.8


def test_grid_with_presence_absence_and_groups():
    rng = np.random.default_rng(5)
    counts = rng.poisson(1.0, size=(90, 120)).astype(np.float64)
    y = np.repeat(["r", "s"], 45)
    counts[y == "s", :6] += rng.poisson(2.0, size=(45, 6))
    groups = np.tile(np.arange(9), 10)
    ev = evaluate(counts, y, method="chi2", ks=[3, 30], cv=3, groups=groups, binary=True,
                  model_options={"C": [0.05, 1.0], "class_weight": "balanced"}, random_state=2)
    assert ev.cv["kind"] == "groups"
    for fold in ev.folds:  # no group on both sides of a split
        assert not set(groups[fold["train"]]) & set(groups[fold["test"]])
    ref = _grid_search((counts > 0).astype(np.float64), y, ev, "logistic",
                       {"C": [0.05, 1.0], "class_weight": ["balanced"]}, [3, 30])
    for params, mean in zip(ref["params"], ref["mean_test_score"]):
        assert _curve_of(ev, f"C={params['model__model__C']}", params["select__k"]) == pytest.approx(mean, abs=1e-12)
    assert ev.model_options["class_weight"] == "balanced"


def test_grid_on_one_validation_split(golub):
    X, y, names = golub
    held = np.arange(len(y)) % 3 == 0
    ev = evaluate(X, y, method="welch", ks=[4, 40], validation=held, model_options={"C": [0.01, 1.0]})
    assert ev.curve.filter(like="_std").isna().all().all() and len(ev.curve) == 4
    ref = _grid_search(X, y, ev, "logistic", {"C": [0.01, 1.0]}, [4, 40])
    for params, mean in zip(ref["params"], ref["mean_test_score"]):
        assert _curve_of(ev, f"C={params['model__model__C']}", params["select__k"]) == pytest.approx(mean, abs=1e-12)


def test_option_grid_checks_its_values():
    with pytest.raises(ValueError, match=r"Model option 'C' lists the value 0.1 more than once.*model_options="):
        option_grid("logistic", {"C": [0.1, 1, 0.1]})
    with pytest.raises(ValueError, match=r"Model option 'C' was given no value"):
        option_grid("logistic", {"C": []})
    with pytest.raises(ValueError, match=r"Unknown option\(s\) \['depth'\] for model 'random_forest'"):
        option_grid("random_forest", {"depth": [1, 2]})
    g = option_grid("logistic", {"C": np.array([1.0, 0.1])})
    assert g.settings == [{"C": 0.1}, {"C": 1.0}] and type(g.settings[0]["C"]) is float
    single = option_grid("logistic", {"C": 0.3})
    assert single.size == 1 and single.labels == [""] and single.varying == {}
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 5)), np.repeat([0, 1], 15)
    with pytest.raises(ValueError, match=r"Model option 'C': The 'C' parameter of LogisticRegression .*"
                                         r"Give it a value the model accepts \(model_options=\)"):
        evaluate(X, y, ks=[2], cv=3, model_options={"C": [1.0, -1.0]})


def test_results_folder_of_a_grid_and_predict(golub, tmp_path):
    X, y, names = golub
    ids = np.array([f"p{i}" for i in range(len(y))], dtype=object)
    ev = evaluate(X, y, method="welch", ks=[5, 50], cv=3, sample_ids=ids, feature_names=names, random_state=1,
                  model_options={"C": [0.01, 1.0], "class_weight": [None, "balanced"]})
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    run = json.loads((out / "run.json").read_text())
    assert run["model_grid"] == {"C": [0.01, 1.0], "class_weight": [None, "balanced"]}
    assert run["options"] == ev.grid.labels and run["best_options"] == ev.best_options
    assert run["model_options"] == ev.model_options and run["best_k"] == ev.best_k
    curve = pd.read_csv(out / "curve.tsv", sep="\t", keep_default_na=False, float_precision="round_trip")
    assert list(curve.columns[:2]) == ["options", "k"] and len(curve) == 8
    cv_metrics = pd.read_csv(out / "cv_metrics.tsv", sep="\t", keep_default_na=False)
    assert list(cv_metrics.columns[:3]) == ["options", "k", "fold"] and len(cv_metrics) == 24
    np.testing.assert_array_equal(curve["balanced_accuracy_mean"].astype(float), ev.curve["balanced_accuracy_mean"])
    info = json.loads((out / "model.json").read_text())
    assert info["options"] == ev.best_options and info["model_options"] == ev.model_options
    saved = load_model(out)
    frame, _ = predict(saved, X, names, sample_ids=ids)
    np.testing.assert_array_equal(frame["predicted"], ev.pipeline.predict(X))


def _files(tmp_path, golub):
    X, y, names = golub
    ids = [f"s{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :300], columns=names[:300])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "expr.csv", index=False)
    pd.DataFrame({"sample": ids, "type": y, "site": (["a", "b", "c"] * 13)[:38]}).to_csv(tmp_path / "meta.csv",
                                                                                      index=False)
    return ["evaluate", str(tmp_path / "expr.csv"), "--meta", str(tmp_path / "meta.csv"), "--id", "sample",
            "--target", "type", "--k", "3,30", "--quiet"]


def test_cli_grid(golub, tmp_path, capsys):
    argv = _files(tmp_path, golub)
    out = tmp_path / "res"
    assert main([*argv, "--cv", "3", "--model-option", "C=1,0.01", "--model-option", "class_weight=balanced",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    run = json.loads((out / "run.json").read_text())
    assert run["model_grid"] == {"C": [0.01, 1]} and run["model_options"]["class_weight"] == "balanced"
    assert "over 2 settings of its options" in text
    assert f"Best k = {run['best_k']} with {run['best_options']} by balanced_accuracy" in text
    for label in ("C=0.01", "C=1"):
        assert sum(line.strip().startswith(label) for line in text.splitlines()) == 2
    # the same numbers as the library
    X, y, names = golub
    ev = evaluate(X[:, :300], y, ks=[3, 30], cv=3, model_options={"C": [1, 0.01], "class_weight": "balanced"})
    curve = pd.read_csv(out / "curve.tsv", sep="\t", float_precision="round_trip")
    np.testing.assert_array_equal(curve["balanced_accuracy_mean"], ev.curve["balanced_accuracy_mean"])
    # the group split with a grid; values read as typed, and a dict value with its commas
    assert main([*argv, "--group", "site", "--val-groups", "c", "--model-option", "class_weight={'ALL': 1, 'AML': 2}",
                 "--model-option", "C=0.1,none", "--model", "linear_svm", "-o", str(tmp_path / "val")]) == 1
    assert "Model option 'C'" in capsys.readouterr().err  # None is not a C: named with the option to fix
    assert main([*argv, "--group", "site", "--val-groups", "c", "--model-option", "class_weight={'ALL': 1, 'AML': 2}",
                 "--model-option", "C=0.1,1", "--model", "linear_svm", "-o", str(tmp_path / "val")]) == 0
    run = json.loads((tmp_path / "val" / "run.json").read_text())
    assert run["cv"]["kind"] == "validation" and run["model_options"]["class_weight"] == {"ALL": 1, "AML": 2}
    capsys.readouterr()
    for bad, message in ((["--model-option", "C=0.1", "--model-option", "C=1"], "C is given twice"),
                         (["--model-option", "C=0.1,"], "KEY=V1,V2"),
                         (["--model-option", "C=0.1,0.1"], None)):
        code = None
        try:
            code = main([*argv, "--cv", "3", *bad, "-o", str(tmp_path / "bad")])
        except SystemExit as usage:
            code = usage.code
        err = capsys.readouterr().err
        if message is None:  # a value repeated: a data error naming the option
            assert code == 1 and "lists the value 0.1 more than once" in err and "--model-option" in err
        else:
            assert code == 2 and message in err
    assert not (tmp_path / "bad").exists()


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="the report needs matplotlib")
def test_report_of_a_grid(golub, tmp_path):
    from html import unescape

    from genosift.report import load_results, make_report

    X, y, names = golub
    ev = evaluate(X, y, method="welch", ks=[2, 20, 200], cv=3, feature_names=names,
                  model_options={"C": [0.001, 0.1, 1.0]}, random_state=0)
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    results = load_results(out)
    assert results.grid == ev.grid.labels and results.best_options == ev.best_options
    assert results.best_curve["k"].tolist() == [2, 20, 200]
    report = make_report(out, tmp_path / "report.html")
    names_drawn = sorted(p.stem for p in report.pngs)
    assert {"grid_heatmap", "grid_curves", "cv_curve"} <= set(names_drawn)
    page = unescape(report.html.read_text())
    assert ev.best_options in page and page.count("C=0.001") >= 3  # the table rows of one options
    from genosift.report.grid_figures import grid_heatmap

    fig = grid_heatmap(results.curve_values, metric="balanced_accuracy", best_options=ev.best_options,
                       best_k=ev.best_k)
    image = fig.axes[0].images[0].get_array()
    expected = ev.curve.pivot(index="options", columns="k", values="balanced_accuracy_mean").loc[ev.grid.labels]
    np.testing.assert_allclose(np.asarray(image), expected.to_numpy(), rtol=1e-15)


# ------------------------------------------------------------------ samples without a label
def test_evaluate_predicts_the_unlabelled_samples(golub, tmp_path):
    X, y, names = golub
    rng = np.random.default_rng(4)
    counts = rng.poisson(0.8, size=(len(y), 200)).astype(np.float64)  # counts: presence/absence differs
    counts[y == "AML", :10] += rng.poisson(2.0, size=(int((y == "AML").sum()), 10))
    others = np.arange(len(y)) % 5 == 0  # these have data but no label
    ids = np.array([f"p{i}" for i in range(len(y))], dtype=object)
    ev = evaluate(counts[~others], y[~others], ks=[5, 50], cv=3, binary=True, sample_ids=ids[~others],
                  feature_names=names[:200], unlabelled=counts[others], unlabelled_ids=ids[others])
    frame = ev.unlabelled
    assert frame["sample"].tolist() == ids[others].tolist()
    present = (counts[others] > 0).astype(np.float64)
    np.testing.assert_array_equal(frame["predicted"], ev.pipeline.predict(present))
    np.testing.assert_array_equal(frame[["proba_ALL", "proba_AML"]].to_numpy(), ev.pipeline.predict_proba(present))
    assert not np.array_equal(ev.pipeline.predict_proba(counts[others]), ev.pipeline.predict_proba(present))
    out = write_results(ev, tmp_path / "res", X=counts[~others], y=y[~others])
    written = pd.read_csv(out / "unlabelled_predictions.tsv", sep="\t", float_precision="round_trip")
    pd.testing.assert_frame_equal(written, frame.astype({"sample": str}), check_dtype=False)
    assert "unlabelled_predictions.tsv" in json.loads((out / ".genosift-results.json").read_text())["files"]
    assert not set(json.loads((out / "model.json").read_text())["training_samples"]) & set(ids[others])
    # no probabilities from a linear SVM: the predicted classes only
    svm = evaluate(X[~others], y[~others], ks=[5], cv=3, model="linear_svm", unlabelled=X[others])
    assert list(svm.unlabelled.columns) == ["sample", "predicted"]
    assert svm.unlabelled["sample"].tolist() == [str(i) for i in range(others.sum())]
    with pytest.raises(ValueError, match=r"unlabelled samples have 10 feature column\(s\); the labelled data have "
                                         r"3051\. Give unlabelled= the same features"):
        evaluate(X[~others], y[~others], ks=[5], cv=3, unlabelled=X[others, :10])


def test_cli_evaluate_predicts_the_samples_without_a_label(golub, tmp_path, capsys):
    X, y, names = golub
    argv = _files(tmp_path, golub)
    meta = pd.read_csv(tmp_path / "meta.csv")
    blank = np.arange(len(y)) % 4 == 1
    meta.loc[blank, "type"] = None  # a row in the metadata, an empty label
    meta.to_csv(tmp_path / "meta.csv", index=False)
    out = tmp_path / "res"
    assert main([*argv, "--cv", "3", "--model-option", "C=0.1,1", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"{int(blank.sum())} sample(s) without a 'type' label were kept apart" in text
    assert f"Predicted the {int(blank.sum())} sample(s) without a label" in text
    table = pd.read_csv(out / "unlabelled_predictions.tsv", sep="\t", float_precision="round_trip")
    assert table["sample"].tolist() == meta["sample"][blank].tolist()
    run = json.loads((out / "run.json").read_text())
    assert run["n_samples"] == int((~blank).sum())  # they are not scored nor used in training
    # the same predictions as `genosift predict` on those samples
    preds = tmp_path / "pred.tsv"
    assert main(["predict", str(out), str(tmp_path / "expr.csv"), "-o", str(preds)]) == 0
    predicted = pd.read_csv(preds, sep="\t", float_precision="round_trip").set_index("sample").loc[table["sample"]]
    np.testing.assert_array_equal(predicted["predicted"], table["predicted"])
    np.testing.assert_array_equal(predicted[["proba_ALL", "proba_AML"]], table[["proba_ALL", "proba_AML"]])
    assert not predicted["in_training"].any()
    # every sample labelled: no file
    pd.DataFrame({"sample": meta["sample"], "type": y}).to_csv(tmp_path / "meta_all.csv", index=False)
    assert main([*argv[:3], str(tmp_path / "meta_all.csv"), *argv[4:], "--cv", "3", "-o", str(tmp_path / "all")]) == 0
    assert not (tmp_path / "all" / "unlabelled_predictions.tsv").exists()
