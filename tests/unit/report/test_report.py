"""The HTML report and its figures, on results folders computed for real: per-fold rankings with
gs.score, a scikit-learn model per k, scikit-learn metrics, tables written as the results-folder
contract of `genosift evaluate` lays them out."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from html import unescape

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.cli import main
from genosift.report import load_results, make_report, write_json, write_table

from conftest import load_shared

mpimg = pytest.importorskip("matplotlib.image", reason="the report figures need matplotlib (the test extra)")

METRICS = ("accuracy", "balanced_accuracy", "f1_macro", "roc_auc")


def _dense(block):
    return block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)


def _model(seed):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000, random_state=seed))


def write_results(folder, X, y, names, *, method, ks, folds=5, seed=0):
    """A results folder as `genosift evaluate` writes it: scores fitted in each training fold,
    a standardised logistic regression on the top k, out-of-fold metrics; final ranking and
    model on all samples. Returns the folder."""
    from sklearn import metrics
    from sklearn.model_selection import StratifiedKFold

    folder.mkdir(parents=True)
    y = np.asarray(y).astype(str)
    classes = sorted(set(y))
    samples = np.array([f"s{i}" for i in range(len(y))])
    rows, fold_of, rankings = [], np.empty(len(y), int), []
    oof = {k: (np.empty(len(y), dtype=object), np.empty((len(y), len(classes)))) for k in ks}
    splits = StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y)
    for fold, (train, test) in enumerate(splits):
        fold_of[test] = fold
        ranking = gs.score(X[train], y[train], method=method).ranking
        rankings.append(ranking)
        for k in ks:
            cols = np.sort(ranking[:k])
            model = _model(seed).fit(_dense(X[train][:, cols]), y[train])
            pred, proba = model.predict(_dense(X[test][:, cols])), model.predict_proba(_dense(X[test][:, cols]))
            oof[k][0][test], oof[k][1][test] = pred, proba
            rows.append({
                "k": k, "fold": fold, "accuracy": metrics.accuracy_score(y[test], pred),
                "balanced_accuracy": metrics.balanced_accuracy_score(y[test], pred),
                "f1_macro": metrics.f1_score(y[test], pred, average="macro"),
                "roc_auc": metrics.roc_auc_score(y[test], proba[:, 1]) if len(classes) == 2 else np.nan,
                "n_train": len(train), "n_test": len(test),
            })
    cv = pd.DataFrame(rows)
    curve = cv.groupby("k")[list(METRICS)].agg(["mean", "std"])
    curve.columns = [f"{m}_{s}" for m, s in curve.columns]
    curve = curve.reset_index()
    best_k = int(curve["k"][np.argmax(curve["balanced_accuracy_mean"].to_numpy())])
    pred, proba = oof[best_k]
    precision, recall, f1, support = metrics.precision_recall_fscore_support(y, pred, labels=classes, zero_division=0)
    confusion = pd.DataFrame(metrics.confusion_matrix(y, pred, labels=classes), columns=classes)
    confusion.insert(0, "true", classes)
    predictions = pd.DataFrame({"sample": samples, "fold": fold_of, "true": y, "predicted": pred})
    for j, c in enumerate(classes):
        predictions[f"proba_{c}"] = proba[:, j]

    final = gs.score(X, y, method=method, feature_names=names)
    scores = final.to_frame()
    scores["selected"] = scores["rank"] <= best_k
    top = final.ranking[:best_k]
    model = _model(seed).fit(_dense(X[:, np.sort(top)]), y)
    coef = np.abs(model[-1].coef_).sum(axis=0)
    importance = dict(zip(names[np.sort(top)], coef))
    selected = scores[scores["selected"]][["feature", "rank", "score", "pvalue", "qvalue"]].copy()
    selected["importance"] = [importance[f] for f in selected["feature"]]
    counts = pd.Series(np.concatenate([names[r[:best_k]] for r in rankings])).value_counts()
    stability = pd.DataFrame({"feature": counts.index, "frequency": counts.to_numpy() / folds})
    top_values = pd.DataFrame(_dense(X[:, final.ranking[:12]]), columns=names[final.ranking[:12]])
    top_values.insert(0, "label", y)
    top_values.insert(0, "sample", samples)

    for name, frame in [("cv_metrics", cv), ("curve", curve), ("per_class", pd.DataFrame(
            {"class": classes, "precision": precision, "recall": recall, "f1": f1, "support": support})),
            ("confusion", confusion), ("predictions", predictions), ("scores", scores),
            ("selected", selected), ("stability", stability), ("top_values", top_values)]:
        write_table(frame, folder / f"{name}.tsv")
    write_json({
        "genosift_version": gs.__version__, "command": f"genosift evaluate data --method {method}",
        "method": method, "model": "logistic", "model_options": {"C": 1.0}, "ks": list(ks),
        "best_k": best_k, "metric": "balanced_accuracy",
        "cv": {"kind": "stratified_kfold", "folds": folds, "seed": seed}, "classes": classes,
        "n_samples": len(y), "n_features": X.shape[1], "inputs": {"data.tsv": {"sha256": "ab" * 32}},
        "has_pvalues": final.pvalues is not None,
    }, folder / "run.json")
    return folder


@pytest.fixture(scope="module")
def golub_results(tmp_path_factory):
    X, y, names = gs.load_golub()
    return write_results(tmp_path_factory.mktemp("golub") / "results", X, y, names, method="welch",
                         ks=[1, 2, 5, 10, 20, 50, 100, 200])


@pytest.fixture(scope="module")
def fisher_results(tmp_path_factory):
    """A method without p-values (no volcano), and a folder without the optional stability and
    top-value tables."""
    X, y, names = gs.load_golub()
    folder = write_results(tmp_path_factory.mktemp("fisher") / "results", X, y, names, method="fisher",
                           ks=[1, 5, 20])
    (folder / "stability.tsv").unlink()
    (folder / "top_values.tsv").unlink()
    return folder


@pytest.fixture(scope="module")
def golub_report(golub_results, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return make_report(golub_results, out / "report.html")


def _png_size(path):
    image = mpimg.imread(path)
    return image.shape[1], image.shape[0], image


def test_report_writes_one_html_and_every_figure(golub_report):
    html, pngs = golub_report
    assert html.exists() and html.name == "report.html"
    assert {p.name for p in pngs} == {"cv_curve.png", "confusion.png", "roc.png", "score_distribution.png",
                                      "volcano.png", "qq.png", "class_distributions.png", "stability.png"}
    assert all(p.parent == html.with_name("report_files") for p in pngs)
    for path in pngs:
        width, height, image = _png_size(path)
        assert 500 <= width <= 1800 and 250 <= height <= 1800, (path.name, width, height)
        assert image[..., :3].std() > 0.05, f"{path.name} looks blank"
    assert not list(html.parent.glob(".*part")) and not list(pngs[0].parent.glob(".*part"))


def test_html_is_self_contained(golub_report):
    import base64

    text = golub_report.html.read_text()
    assert "<script" not in text.lower() and "<link" not in text.lower() and "@import" not in text
    assert not re.search(r"url\(", text)
    links = re.findall(r'\b(?:src|href)\s*=\s*"([^"]*)"', text)
    assert links and not [u for u in links if u.startswith(("http:", "https:", "//", "file:"))]
    assert all(u.startswith("#") for u in re.findall(r'\bhref\s*=\s*"([^"]*)"', text))
    sources = re.findall(r'<img\b[^>]*\bsrc="([^"]*)"', text)
    assert len(sources) == 8 and all(s.startswith("data:image/png;base64,") for s in sources)
    embedded = {base64.b64decode(s.split(",", 1)[1]) for s in sources}
    assert embedded == {p.read_bytes() for p in golub_report.pngs}  # the same figures as the PNG files
    assert text.count("<figcaption>") == 8


def test_html_holds_the_numbers_of_the_results(golub_results, golub_report):
    text = golub_report.html.read_text()
    curve = pd.read_csv(golub_results / "curve.tsv", sep="\t")
    best_k = int(curve["k"][curve["balanced_accuracy_mean"].idxmax()])
    assert json.loads((golub_results / "run.json").read_text())["best_k"] == best_k
    assert f"best k = {best_k}" in text
    for row in curve.itertuples():
        for m in METRICS:
            assert f"{getattr(row, m + '_mean'):.3f} \u00b1 {getattr(row, m + '_std'):.3f}" in text
    best_row = re.search(r'<tr class="best"><td>([^<]*)</td>', text)
    assert best_row and best_row.group(1) == f"{best_k:,}"
    per_class = pd.read_csv(golub_results / "per_class.tsv", sep="\t")
    for row in per_class.itertuples():
        assert f"<td>{row._1}</td><td>{row.precision:.3f}</td><td>{row.recall:.3f}</td>" in text
    selected = pd.read_csv(golub_results / "selected.tsv", sep="\t")
    positions = [text.index(f"<td>{f}</td>") for f in selected["feature"][:100]]
    assert positions == sorted(positions)  # in rank order
    assert f"The first 100 of {best_k}" in text
    assert "welch" in text and "stratified cross-validation" in text and "M27891_at" in text
    assert "Not in this report" not in text


def test_missing_pvalues_and_optional_tables_leave_their_figures_out(fisher_results, tmp_path):
    html, pngs = make_report(fisher_results, tmp_path / "fisher.html")
    assert {p.name for p in pngs} == {"cv_curve.png", "confusion.png", "roc.png", "score_distribution.png"}
    assert all(p.parent == tmp_path / "fisher_files" for p in pngs)
    text = unescape(html.read_text())
    assert text.count("<img ") == 4
    assert "method 'fisher' gives no p-values" in text
    assert "stability.tsv is not in the results folder" in text
    assert "top_values.tsv is not in the results folder" in text
    assert "qvalue" not in text  # an all-empty column is not shown


def test_overwrite_needs_force_and_replaces_stale_figures(golub_results, fisher_results, tmp_path):
    out = tmp_path / "r.html"
    first = make_report(golub_results, out)
    with pytest.raises(FileExistsError, match="already exists"):
        make_report(golub_results, out)
    with pytest.raises(FileExistsError, match="cv_curve.png"):  # the figures are not overwritten either
        make_report(golub_results, tmp_path / "other.html", png_dir=tmp_path / "r_files", overwrite=False)
    second = make_report(fisher_results, out, overwrite=True)
    assert len(first.pngs) == 8 and len(second.pngs) == 4
    assert sorted(p.name for p in (tmp_path / "r_files").iterdir()) == sorted(p.name for p in second.pngs)
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "volcano.png").write_bytes(b"not ours to delete")
    make_report(fisher_results, tmp_path / "third.html", png_dir=tmp_path / "keep")
    assert (tmp_path / "keep" / "volcano.png").read_bytes() == b"not ours to delete"  # only --force replaces


def test_without_matplotlib_the_error_says_how_to_install_it(fisher_results, tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"pip install 'genosift\[report\]'"):
        make_report(fisher_results, tmp_path / "r.html")
    assert main(["report", str(fisher_results), "-o", str(tmp_path / "r.html")]) == 1
    assert "need matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r_files").exists()


def _broken(folder, tmp_path, name, edit):
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    path = broken / name
    if edit is None:
        path.unlink()
    else:
        path.write_text(edit(path.read_text()))
    return broken


def _replace_header(old, new):
    return lambda text: text.replace(old, new, 1)


BROKEN = [
    ("curve.tsv", None, FileNotFoundError, r"no curve\.tsv"),
    ("run.json", None, FileNotFoundError, r"no run\.json"),
    ("run.json", lambda t: t[:-5], ValueError, r"run\.json.*not valid JSON"),
    ("run.json", lambda t: t.replace('"best_k": 200', '"best_k": 7'), ValueError,
     r"best_k = 7, which is not a k of curve\.tsv"),
    ("run.json", lambda t: t.replace('"metric"', '"the_metric"'), ValueError, r"lacks the key\(s\) 'metric'"),
    ("curve.tsv", _replace_header("k\t", "n\t"), ValueError, r"curve\.tsv.*lacks the column\(s\) 'k'"),
    ("curve.tsv", lambda t: t.replace("\n200\t", "\n200.5\t"), ValueError,
     r"curve\.tsv.*'k' that is not a whole number"),
    ("scores.tsv", lambda t: t.replace("X95735_at\t", "X95735_at\tabc", 1), ValueError,
     r"scores\.tsv.*not a number in column 'score', row 1: 'abc"),
    # an exponent of 20 digits: pandas' own number parser crashes the process on it
    ("scores.tsv", lambda t: t.replace("X95735_at\t", "X95735_at\t1.5e3" + "9" * 20 + "0", 1), ValueError,
     r"scores\.tsv.*not a number in column 'score', row 1: '1\.5e39{20}"),
    ("scores.tsv", lambda t: t.replace("True", "maybe", 1), ValueError, r"scores\.tsv.*'selected' value .*'maybe'"),
    ("selected.tsv", lambda t: t.split("\n")[0] + "\n", ValueError, r"selected\.tsv.*header but no rows"),
    ("stability.tsv", lambda t: t.replace("frequency", "freq"), ValueError, r"stability\.tsv.*'frequency'"),
    ("confusion.tsv", lambda t: t.replace("\t27\t", "\t2.5\t"), ValueError, r"confusion\.tsv.*whole number"),
    ("top_values.tsv", lambda t: "\x00\x01\xff", ValueError, r"top_values\.tsv"),
]


@pytest.mark.parametrize("name, edit, error, message", BROKEN, ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN)])
def test_missing_or_malformed_tables_are_named_and_nothing_is_written(golub_results, tmp_path, name, edit, error,
                                                                      message):
    broken = _broken(golub_results, tmp_path, name, edit)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(error, match=message):
        make_report(broken, out / "report.html")
    assert list(out.iterdir()) == []


def test_load_results_types_the_tables(golub_results):
    results = load_results(golub_results)
    assert results.best_k == 200 and results.has_pvalues
    assert results.curve["k"].dtype == np.int64 and results.scores["selected"].dtype == bool
    assert results.scores["selected"].sum() == 200 and results.confusion.to_numpy()[:, 1:].sum() == 38
    assert results.top_values["label"].tolist()[:3] == ["ALL", "ALL", "ALL"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_results(golub_results / "nowhere")


def test_cli_report_exit_codes(fisher_results, tmp_path, capsys):
    out, figs = tmp_path / "cli.html", tmp_path / "figs"
    assert main(["report", str(fisher_results), "-o", str(out), "--png-dir", str(figs)]) == 0
    assert "4 figures" in capsys.readouterr().out
    assert out.exists() and len(list(figs.glob("*.png"))) == 4
    assert main(["report", str(fisher_results), "-o", str(out), "--png-dir", str(figs)]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["report", str(fisher_results), "-o", str(out), "--png-dir", str(figs), "--force"]) == 0
    assert main(["report", str(tmp_path / "none"), "-o", str(tmp_path / "x.html")]) == 1
    assert "does not exist" in capsys.readouterr().err
    broken = _broken(fisher_results, tmp_path, "curve.tsv", _replace_header("k\t", "n\t"))
    assert main(["report", str(broken), "-o", str(tmp_path / "x.html")]) == 1
    assert "curve.tsv" in capsys.readouterr().err
    assert main(["report", str(fisher_results), "-o", str(tmp_path / "no" / "x.html")]) == 1
    with pytest.raises(SystemExit) as exc:
        main(["report", str(fisher_results)])  # -o is required
    assert exc.value.code == 2


# ------------------------------------------------------------------ the figures, against direct computations
def test_confusion_figure_shows_counts_and_row_shares(golub_results):
    from sklearn.metrics import confusion_matrix

    from genosift.report.figures import confusion_matrix as figure

    predictions = pd.read_csv(golub_results / "predictions.tsv", sep="\t")
    counts = confusion_matrix(predictions["true"], predictions["predicted"], labels=["ALL", "AML"])
    shares = confusion_matrix(predictions["true"], predictions["predicted"], labels=["ALL", "AML"], normalize="true")
    fig = figure(load_results(golub_results).confusion)
    left, right = fig.axes
    assert [t.get_text() for t in left.texts] == [str(v) for v in counts.ravel()]
    assert [t.get_text() for t in right.texts] == [f"{v:.0%}" for v in shares.ravel()]


def test_cv_curve_draws_the_means_and_marks_best_k(golub_results):
    from genosift.report.figures import cv_curve

    results = load_results(golub_results)
    fig = cv_curve(results.curve, best_k=results.best_k, metric="balanced_accuracy", n_classes=2)
    assert [ax.get_title() for ax in fig.axes] == ["Accuracy", "Balanced accuracy (chooses k)", "Macro F1", "ROC AUC"]
    for ax, m in zip(fig.axes, METRICS):
        mean_line = next(line for line in ax.lines if line.get_label() == "mean over folds")
        np.testing.assert_allclose(mean_line.get_ydata(), results.curve[f"{m}_mean"])
        assert ax.get_xscale() == "log"
        star = next(line for line in ax.lines if line.get_label().startswith(f"k = {results.best_k}:"))
        assert star.get_xdata()[0] == results.best_k


def test_score_distribution_counts_every_scored_feature(golub_results):
    from genosift.report.figures import score_distribution

    results = load_results(golub_results)
    fig = score_distribution(results.scores, best_k=results.best_k)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == len(results.scores)  # stacked: selected on top of the rest
    cut = next(line for line in ax.lines if "cut-off" in line.get_label())
    assert cut.get_xdata()[0] == results.scores.sort_values("rank")["score"].iloc[results.best_k - 1]


def test_class_densities_equal_scipy_kde_with_the_same_bandwidth():
    from scipy.stats import gaussian_kde

    from genosift.report.figures import _density_grid

    X, y, _ = gs.load_golub()
    values = X[:, 1882]
    grid, overall, per_class = _density_grid(values, {c: values[y == c] for c in ("ALL", "AML")})
    assert abs(overall.sum() * (grid[1] - grid[0]) - 1) < 1e-3
    spread = values.std()
    iqr = np.subtract(*np.percentile(values, [75, 25])) / 1.34
    h = 0.9 * min(spread, iqr) * len(values) ** -0.2  # Silverman's rule
    np.testing.assert_allclose(overall, gaussian_kde(values, bw_method=h / values.std(ddof=1))(grid), rtol=1e-10)
    for c, density in per_class.items():
        v = values[y == c]
        np.testing.assert_allclose(density, gaussian_kde(v, bw_method=h / v.std(ddof=1))(grid), rtol=1e-10)


def test_multiclass_counts_report(tmp_path):
    """Seven classes of discretised values: no ROC AUC, class shares per value, a 7 x 7 matrix."""
    X, y, _ = load_shared("lung_small")
    names = np.array([f"g{j}" for j in range(X.shape[1])], dtype=object)
    folder = write_results(tmp_path / "lung", X, y, names, method="anova", ks=[3, 30, 325])
    html, pngs = make_report(folder, tmp_path / "lung.html")
    text = html.read_text()
    assert "ROC AUC" not in text.split('id="performance"')[1].split("</section>")[0]
    results = load_results(folder)
    from genosift.report.figures import class_colours, class_distributions, cv_curve

    assert len(cv_curve(results.curve, best_k=results.best_k).axes) == 3
    fig = class_distributions(results.top_values, classes=results.run["classes"])
    first = fig.axes[0]
    values, labels = results.top_values.iloc[:, 2].to_numpy(), results.top_values["label"].to_numpy()
    shares = [np.mean(values[labels == "7"] == v) for v in (-2, 0, 2)]
    colour = class_colours(results.run["classes"])["7"]
    (line,) = [ln for ln in first.lines if ln.get_color() == colour]
    np.testing.assert_allclose(line.get_ydata(), shares)
    for path in pngs:
        width, height, _ = _png_size(path)
        assert width <= 1800 and height <= 1800


# ------------------------------------------------------------------ a real browser
def _chromium():
    return next((b for b in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
                 if shutil.which(b)), None)


def test_report_renders_in_headless_chromium(golub_report, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium binary on PATH (apt-get install chromium); the browser rendering is not checked")
    url = golub_report.html.resolve().as_uri()
    flags = ["--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
             f"--user-data-dir={tmp_path / 'profile'}"]
    shot = tmp_path / "shot.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1200,3000", url],
                   check=True, capture_output=True, timeout=120)
    width, height, image = _png_size(shot)
    assert (width, height) == (1200, 3000)
    rgb = (image[..., :3] * 255).round().astype(int)
    assert (rgb.sum(axis=2) < 600).mean() > 0.05  # far from blank
    orange = (np.abs(rgb - [213, 94, 0]).sum(axis=2) < 40).sum()  # the curve of the metric that chose k
    assert orange > 500, "the embedded figures did not render"
    dom = subprocess.run([browser, *flags, "--dump-dom", url], check=True, capture_output=True, text=True,
                         timeout=120).stdout
    assert dom.count('src="data:image/png;base64,') == 8
    assert "best k = 200" in dom and dom.count("<figcaption>") == 8


def test_single_validation_split_has_no_spread(golub_results, tmp_path):
    """Fold 0 of the CV as the one validation split: its metrics are the curve, without spread."""
    from matplotlib.collections import PolyCollection

    from genosift.report.figures import cv_curve

    folder = tmp_path / "validation"
    shutil.copytree(golub_results, folder)
    cv = pd.read_csv(folder / "cv_metrics.tsv", sep="\t")
    curve = cv[cv["fold"] == 0][["k", *METRICS]].rename(columns={m: f"{m}_mean" for m in METRICS})
    for m in METRICS:
        curve[f"{m}_std"] = np.nan
    for name in ("curve.tsv", "run.json"):  # copies: not files genosift wrote, so not replaced by it
        (folder / name).unlink()
    write_table(curve, folder / "curve.tsv")
    run = json.loads((golub_results / "run.json").read_text())
    run["best_k"] = int(curve["k"].iloc[np.argmax(curve["balanced_accuracy_mean"].to_numpy())])
    run["cv"] = {"kind": "validation", "folds": 1, "seed": 0}
    write_json(run, folder / "run.json")
    html, _ = make_report(folder, tmp_path / "v.html")
    text = unescape(html.read_text())
    assert "one training / validation split" in text and "Validation performance against k" in text
    # one split: no word of cross-validation or folds' spread anywhere in the page, best k picked on it
    page = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text)
    assert "\u00b1" not in page and "cross-validat" not in page.lower() and "standard deviation" not in page
    assert "best k picked on the validation samples of that split" in page
    assert "The selection stability: one training / validation split" in page  # no figure of folds
    table = text.split("Metrics on the validation samples")[1].split("</table>")[0]
    for value in curve["accuracy_mean"]:
        assert f"<td>{value:.3f}</td>" in table
    fig = cv_curve(load_results(folder).curve, best_k=run["best_k"])
    assert not any(isinstance(c, PolyCollection) for ax in fig.axes for c in ax.collections)


def test_an_unsigned_method_draws_the_difference_of_class_means_on_the_volcano(tmp_path):
    """chi2's statistic has no sign (drawn as an effect size it folded every feature onto one
    side): the volcano's x axis is the difference of the class means, signed, and says so."""
    from genosift.report import figures as fg
    from genosift.report.make import _signed

    assert not _signed("chi2") and _signed("welch")
    rng = np.random.RandomState(0)
    y = np.repeat(["a", "b"], 20)
    X = (rng.random((40, 30)) < 0.4).astype(float)
    X[y == "b", :3] = 1.0
    X[y == "b", 3:6] = 0.0
    res = gs.score(X, y, method="chi2")
    frame = res.to_frame().merge(gs.profile(X, y).to_frame()[["feature", "diff_means"]], on="feature")
    frame["selected"] = frame["rank"] <= 6
    fig = fg.volcano(frame, effect="diff_means", effect_label="difference of the class means (b minus a)")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "difference of the class means (b minus a)"
    x = np.concatenate([c.get_offsets()[:, 0] for c in ax.collections])
    assert (x < -0.2).any() and (x > 0.2).any()  # both directions, where chi2 alone has none


def test_presence_absence_features_are_bars_of_the_share_carrying_them():
    from genosift.report import figures as fg

    top = pd.DataFrame({"sample": [f"s{i}" for i in range(8)], "label": list("aaaabbbb"),
                        "gene1": [1, 1, 1, 0, 0, 0, 0, 1], "count": [0, 3, 5, 2, 7, 1, 0, 4]})
    fig = fg.class_distributions(top, classes=["a", "b"])
    binary, counts = fig.axes[0], fig.axes[1]
    heights = [p.get_height() for p in binary.patches]
    assert heights == pytest.approx([0.5, 0.75, 0.25])  # all, a, b
    assert binary.get_ylim() == (0, 1) and len(binary.get_yticks()) > 1  # a readable share axis
    assert [t.get_text() for t in binary.get_xticklabels()] == ["all", "a", "b"]
    assert binary.get_xlabel() == "share carrying it (x = 1)" and counts.get_xlabel().startswith("value")


def test_grid_curves_show_spread_as_error_bars_that_do_not_hide_each_other():
    from matplotlib.collections import PolyCollection

    from genosift.report.grid_figures import grid_curves

    curve = pd.DataFrame({"options": ["C=0.1"] * 3 + ["C=1"] * 3, "k": [5, 50, 500] * 2,
                          "accuracy_mean": [0.7, 0.8, 0.8, 0.72, 0.81, 0.79], "accuracy_std": [0.1] * 6})
    ax = grid_curves(curve, metric="accuracy", best_options="C=1", best_k=50).axes[0]
    assert not any(isinstance(c, PolyCollection) for c in ax.collections)  # no overlapping bands
    xs = [line.get_xdata() for line in ax.lines if line.get_label() in ("C=0.1", "C=1")]
    assert len(xs) == 2 and (np.asarray(xs[0]) < np.asarray(xs[1])).all()  # nudged apart at every k


def test_binary_is_among_the_run_settings(tmp_path):
    from genosift.workflow import evaluate, write_results

    rng = np.random.RandomState(1)
    y = np.repeat(["a", "b"], 15)
    X = rng.poisson(2, size=(30, 20)).astype(float)
    X[y == "b", 0] += 4
    ev = evaluate(X, y, method="chi2", ks=[2, 5], cv=3, binary=True)
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    assert json.loads((out / "run.json").read_text())["binary"] is True
    report = gs.report.make_report(out, tmp_path / "r.html")
    assert "<th>binary</th><td>yes</td>" in report.html.read_text()


def test_roc_curve_and_unlabelled_predictions(tmp_path):
    """Two classes with probabilities: the ROC curve of the out-of-fold predictions, its area
    that of scikit-learn; samples without a label: their predictions in a table of their own;
    wide tables scroll inside the page instead of spilling out of it."""
    from sklearn.metrics import roc_auc_score

    from genosift.report import figures as fg
    from genosift.workflow import evaluate, write_results

    rng = np.random.RandomState(2)
    y = np.repeat(["neg", "pos"], 20)
    X = rng.normal(size=(40, 30))
    X[y == "pos", :3] += 1.2
    new = rng.normal(size=(5, 30))
    ev = evaluate(X, y, method="welch", ks=[3, 10], cv=4, unlabelled=new,
                  unlabelled_ids=[f"new{i}" for i in range(5)])
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    results = gs.report.load_results(out)
    fig = fg.roc_curve(results.predictions, ["neg", "pos"])
    auc = roc_auc_score(results.predictions["true"] == "pos", results.predictions["proba_pos"])
    assert fig.axes[0].get_legend().get_texts()[0].get_text().startswith(f"AUC {auc:.3f} (20 pos, 20 neg)")
    report = gs.report.make_report(out, tmp_path / "r.html")
    text = report.html.read_text()
    assert 'id="fig-roc"' in text and "ROC curve at k =" in text
    assert "Samples without a label, predicted by the final model (5)" in text
    assert all(f"<td>new{i}</td>" in text for i in range(5))
    assert text.count('<div class="scroll"><table') >= 3 and ".scroll{overflow-x:auto" in text


_LAYOUT_PROBE = """<script>
window.addEventListener('load', () => {
  const right = document.querySelector('main').getBoundingClientRect().right + 1;
  const spill = [...document.querySelectorAll('main table, main figure, main .summary, main p')]
    .filter(e => !e.closest('.scroll') && e.getBoundingClientRect().right > right)
    .map(e => e.tagName + (e.className ? '.' + e.className : ''));
  const boxes = [...document.querySelectorAll('.scroll')].filter(s => s.getBoundingClientRect().right > right).length;
  const wrapped = [...document.querySelectorAll('table.numbers td')].filter(td => {
    const line = parseFloat(getComputedStyle(td).lineHeight) || 20;
    return td.clientHeight > 2.2 * line;
  }).map(td => td.textContent);
  document.body.setAttribute('data-layout', JSON.stringify({spill, boxes, wrapped}));
});
</script>"""


def _layout(browser, page, folder):
    """What a layout probe measures in headless Chromium at a window 800 pixels wide: the elements
    that spill out of the page's column, the scrolling boxes that do, the number cells that wrap."""
    probe = folder / "probe.html"
    probe.write_text(page.replace("</body>", _LAYOUT_PROBE + "</body>"))
    flags = ["--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--window-size=800,3000",
             "--virtual-time-budget=5000", f"--user-data-dir={folder / 'profile'}"]
    dom = subprocess.run([_chromium(), *flags, "--dump-dom", probe.resolve().as_uri()], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'data-layout="([^"]*)"', dom)
    assert found, "the layout probe did not run"
    return json.loads(unescape(found.group(1))), dom


def test_the_report_of_a_kmer_evaluation_lays_out_in_headless_chromium(tmp_path):
    """The report's defects, checked where users see them, in a browser: presence/absence k-mers
    with long names and tiny p-values, --binary, samples without a label. No table or figure
    spills out of the page (wide tables scroll in their box), no number wraps, the settings say
    binary, the ROC curve and the unlabelled predictions are there. The probe itself is checked:
    the same page without the scrolling boxes and the no-wrap rule is caught."""
    if _chromium() is None:
        pytest.skip("no chromium binary on PATH (apt-get install chromium); the browser rendering is not checked")
    from genosift.workflow import evaluate, write_results

    rng = np.random.RandomState(3)
    y = np.repeat(["resistant", "susceptible"], 30)
    X = (rng.random((60, 40)) < 0.4).astype(float)
    X[y == "resistant", :4] = (rng.random((30, 4)) < 0.95)
    names = ["".join(rng.choice(list("ACGT"), 31)) for _ in range(40)]
    new = (rng.random((6, 40)) < 0.4).astype(float)
    ev = evaluate(X, y, method="chi2", ks=[2, 5, 10], cv=3, binary=True, feature_names=names, unlabelled=new,
                  unlabelled_ids=[f"new_isolate_{i}" for i in range(6)])
    out = write_results(ev, tmp_path / "res", X=X, y=y)
    report = gs.report.make_report(out, tmp_path / "report.html")
    layout, dom = _layout(_chromium(), report.html.read_text(), tmp_path)
    assert layout == {"spill": [], "boxes": 0, "wrapped": []}, layout
    assert "<th>binary</th><td>yes</td>" in dom and 'id="fig-roc"' in dom
    assert all(f"new_isolate_{i}" in dom for i in range(6))
    broken = report.html.read_text().replace(".scroll{overflow-x:auto;max-width:100%}", "").replace(
        "white-space:nowrap}table.numbers", "}table.numbers")
    caught, _ = _layout(_chromium(), broken, tmp_path)
    assert caught["spill"] or caught["wrapped"], caught


def test_without_a_ranking_the_qq_plot_is_evaluates_named_with_its_threshold(golub_results, golub_report):
    from genosift.scores import genomic_inflation

    scores = pd.read_csv(golub_results / "scores.tsv", sep="\t")
    assert "qq.png" in {p.name for p in golub_report.pngs}
    text = unescape(golub_report.html.read_text())
    p = scores["pvalue"].to_numpy()
    assert f"lambda = {genomic_inflation(p):.3f} over the features" in text
    assert "QQ plot: welch on 38 samples (evaluate's final ranking), not adjusted for population structure." in text
    threshold = 0.05 / np.isfinite(p).sum()  # no patterns: Bonferroni over the features tested
    assert f"p < {threshold:.3g} (alpha 0.05 over the {np.isfinite(p).sum():,} features tested)" in text


def _drawing(monkeypatch, module, name):
    """The figures ``module.name`` draws from now on, in a list."""
    drawn, original = [], getattr(module, name)

    def draw(*args, **kwargs):
        drawn.append(original(*args, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(module, name, draw)
    return drawn


def _threshold_lines(ax):
    """The heights of the horizontal threshold lines of ``ax`` (``axhline``: labelled, flat)."""
    return [line.get_ydata()[0] for line in ax.lines
            if "threshold" in line.get_label() and len(set(np.asarray(line.get_ydata(), float))) == 1]


@pytest.fixture(scope="module")
def kmer_ranking(tmp_path_factory):
    """A ranking of k-mer-like presence/absence (40 patterns copied over 240 columns) by logistic
    given 2 principal coordinates, and a hits table of it."""
    rng = np.random.default_rng(4)
    n = 60
    base = (rng.random((n, 40)) < rng.uniform(0.15, 0.85, 40)).astype(int)
    pick = np.r_[np.arange(40), rng.integers(0, 40, 200)]
    X = base[:, pick]
    y = np.where(rng.random(n) < 0.85, base[:, 0], 1 - base[:, 0])
    folder = tmp_path_factory.mktemp("kmer-ranking")
    table = pd.DataFrame(X, columns=[f"k{j}" for j in range(X.shape[1])])
    table.insert(0, "sample", [f"s{i}" for i in range(n)])
    table.insert(1, "trait", y)
    table.to_csv(folder / "data.tsv", sep="\t", index=False)
    ranking = folder / "ranking.tsv"
    assert main(["score", str(folder / "data.tsv"), "--target", "trait", "--binary", "--method", "logistic",
                 "--structure", "2", "-o", str(ranking), "--quiet"]) == 0
    ranked = pd.read_csv(ranking, sep="\t", float_precision="round_trip")
    hits = pd.DataFrame({"feature": ranked["feature"], "reference": "ref", "contig": "chr",
                         "start": np.arange(len(ranked)) * 40 + 1, "end": np.arange(len(ranked)) * 40 + 31,
                         "strand": "+", "gene": [f"g{j // 10}" for j in range(len(ranked))],
                         "pvalue": ranked["pvalue"]})
    hits.to_csv(folder / "hits.tsv", sep="\t", index=False)
    return X, ranking, folder / "hits.tsv", ranked


def test_the_qq_and_manhattan_plots_come_from_one_named_analysis_with_its_threshold(fisher_results, kmer_ranking,
                                                                                     tmp_path, monkeypatch):
    from scipy import stats

    from genosift.report import figures as fg

    X, ranking, hits, ranked = kmer_ranking
    qq, manhattan = _drawing(monkeypatch, fg, "qq_plot"), _drawing(monkeypatch, fg, "manhattan_plot")
    report = make_report(fisher_results, tmp_path / "r.html", ranking=ranking, hits=hits)  # fisher: no p-values
    assert {"qq.png", "manhattan.png"} <= {p.name for p in report.pngs}
    text = unescape(report.html.read_text())
    n_patterns = len(np.unique(X.T, axis=0))  # counted directly over the columns
    threshold = 0.05 / n_patterns
    name = "logistic of 'trait' on 60 samples, adjusted for 2 principal coordinates"
    assert f"QQ plot: {name}." in text and f"Manhattan plot: {name}." in text
    said = f"p < {threshold:.3g} (alpha 0.05 over the {n_patterns:,} distinct patterns tested)"
    assert text.count(said) == 2  # both captions
    # the Manhattan plot: its threshold line at -log10 of alpha over the patterns, its value in the legend
    ax = manhattan[0].axes[0]
    assert _threshold_lines(ax) == [pytest.approx(-np.log10(threshold), rel=1e-12)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [f"genome-wide threshold p = {threshold:.3g}"]
    assert _suptitle(manhattan[0]) == name
    # the QQ plot: one point per distinct pattern, lambda over them, the same threshold
    per_pattern = ranked.drop_duplicates("pattern")["pvalue"].to_numpy()
    lam = np.median(stats.chi2.isf(per_pattern, 1)) / stats.chi2.ppf(0.5, 1)
    ax = qq[0].axes[0]
    assert sum(len(c.get_offsets()) for c in ax.collections[1:]) == n_patterns
    assert ax.get_title() == f"QQ plot (lambda = {lam:.3f} over the patterns)"
    assert _threshold_lines(ax) == [pytest.approx(-np.log10(threshold), rel=1e-12)]
    assert f"lambda = {lam:.3f} over the patterns" in text and _suptitle(qq[0]) == name


def test_hits_need_their_own_ranking(fisher_results, kmer_ranking, tmp_path, capsys):
    from genosift.core.validation import FixUsageError

    _, ranking, hits, ranked = kmer_ranking
    with pytest.raises(FixUsageError, match="pass that ranking table .* in ranking= too"):
        make_report(fisher_results, tmp_path / "r.html", hits=hits)
    code = main(["report", str(fisher_results), "-o", str(tmp_path / "r.html"), "--hits", str(hits)])
    assert code == 2 and "in --ranking TABLE too" in capsys.readouterr().err
    other = pd.read_csv(hits, sep="\t", float_precision="round_trip")
    other.loc[3, "pvalue"] = other.loc[3, "pvalue"] / 2  # a hit of another analysis
    other.to_csv(tmp_path / "other.tsv", sep="\t", index=False)
    with pytest.raises(ValueError, match=r"1 of their 240 k-mers differ .* Pass in ranking= the ranking"):
        make_report(fisher_results, tmp_path / "r.html", ranking=ranking, hits=tmp_path / "other.tsv")
    other.drop(columns="start").to_csv(tmp_path / "bad.tsv", sep="\t", index=False)
    with pytest.raises(ValueError, match="no 'start' column"):
        make_report(fisher_results, tmp_path / "r2.html", ranking=ranking, hits=tmp_path / "bad.tsv")
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r2.html").exists()


def _suptitle(figure):
    """A figure's suptitle (``Figure.get_suptitle`` from matplotlib 3.8 on; before, its Text)."""
    return figure.get_suptitle() if hasattr(figure, "get_suptitle") else figure._suptitle.get_text()
