"""The modelling workflow: evaluate (selection inside the folds), results folder, predict, CLI."""
from __future__ import annotations

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
              "scores.tsv", "selected.tsv", "stability.tsv", "top_values.tsv", "model.joblib", "model.json"]


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
    np.testing.assert_allclose(stability.set_index("feature")["frequency"], in_folds.loc[stability["feature"]], rtol=1e-9)
    assert len(stability) == len(in_folds) and stability["frequency"].is_monotonic_decreasing
    top_values = pd.read_csv(out / "top_values.tsv", sep="\t")
    assert list(top_values.columns[2:]) == list(ref.top(12))
    np.testing.assert_allclose(top_values[ref.top(1)[0]], X[:, ref.ranking[0]], rtol=1e-9)
    with pytest.raises(FileExistsError, match="--force"):
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
    with pytest.raises(ValueError, match=f"not in the new data: .*{used}.*--fill-missing"):
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


def test_bad_parameters(golub):
    X, y, _ = golub
    with pytest.raises(ValueError, match=r"k = \[5000\] is more than the 3051 features"):
        evaluate(X, y, ks=[10, 5000])
    with pytest.raises(ValueError, match="smallest class has 11 sample"):
        evaluate(X, y, ks=[10], cv=12)
    with pytest.raises(ValueError, match="Unknown option"):
        evaluate(X, y, ks=[10], model_options={"depth": 3})
    with pytest.raises(ValueError, match="for regression targets"):
        evaluate(X, y, method="pearson", ks=[10])


def test_cli_evaluate_then_predict(tmp_path, capsys):
    X, y, names = gs.load_golub()
    ids = [f"patient-{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :400], columns=names[:400])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "expr.csv", index=False)
    pd.DataFrame({"sample": ids, "type": y, "site": (["a", "b", "c"] * 13)[:38]}).to_csv(tmp_path / "meta.csv", index=False)
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
    assert main(["predict", str(out / "model.joblib"), str(tmp_path / "expr.csv"), "--meta", str(tmp_path / "meta.csv"),
                 "--id", "sample", "--target", "type", "-o", str(preds)]) == 0
    table = pd.read_csv(preds, sep="\t")
    assert list(table.columns[:3]) == ["sample", "predicted", "true"] and "accuracy on the 38" in capsys.readouterr().out
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
    assert f"{ev.best_k}" in text and len(pngs) == 6 and all(p.stat().st_size > 10_000 for p in pngs)


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
