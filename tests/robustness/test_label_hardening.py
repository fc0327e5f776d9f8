"""Labels drawn from the data are drawn as literal text in every figure, escaped in the HTML
report, and kept on one line in phandango's plot file, where a p of 0 is finite."""
from __future__ import annotations

import inspect
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from genosift.cli import main

pytest.importorskip("matplotlib", reason="figures need matplotlib")

from genosift.report import figures, grid_figures  # noqa: E402

_png_bytes = figures.png_bytes

# names that mathtext or TeX would read: each must be drawn as it is
NAMES = ["r$_$", "a_b^c", "\\fr{x}", "{}$", "$x^2$", "<b>&"]
# a number tick in mathtext (10^k on a log axis): the only math a figure may hold
NUMBER_TICK = re.compile(r"^\$\\mathdefault\{[-\u2212\d.^{}\\times ]*\}\$$")


def _figure_functions():
    """Every function of the figure modules that builds a figure (calls ``new_figure``)."""
    found = {}
    for module in (figures, grid_figures):
        for name, f in vars(module).items():
            source = inspect.getsource(inspect.unwrap(f)) if inspect.isfunction(f) else ""
            if "new_figure(" in source and f.__module__ == module.__name__ and not name.startswith("_") \
                    and name != "new_figure":
                found[name] = f
    return found


def _cases():
    """Each figure function with inputs naming the data by NAMES, and the names it must show."""
    rng = np.random.default_rng(3)
    n = len(NAMES)
    scores = pd.DataFrame({"feature": NAMES, "score": np.geomspace(1e-3, 1e4, n), "statistic": rng.normal(size=n),
                           "qvalue": [0.0, 1e-6, 1e-3, 0.01, 0.5, 1.0], "rank": np.arange(1, n + 1),
                           "selected": [True] * n})
    classes = ["c$_$", "c^{x}"]
    top = pd.DataFrame({"sample": [f"s{i}" for i in range(8)], "label": classes * 4,
                        **{name: rng.normal(size=8) for name in NAMES[:3]}, NAMES[3]: [0, 1] * 4})
    hits = pd.DataFrame({"feature": ["A" * 9, "C" * 9, "G" * 9, "T" * 9], "reference": "ref$_$",
                         "contig": ["ctg_1$", "ctg_1$", "ctg^2$", "ctg^2$"], "start": [10, 500, 20, 900],
                         "end": [18, 508, 28, 908], "strand": "+", "pvalue": [0.5, 0.0, 1e-8, 0.01],
                         "gene": [None, NAMES[0], NAMES[1], NAMES[2]]})
    metric = "m$_$"
    curve = pd.DataFrame({"k": [1, 10, 100], f"{metric}_mean": [0.7, 0.9, 0.8], f"{metric}_std": [0.1, 0.0, 0.1]})
    grid = pd.DataFrame({"options": [NAMES[0], NAMES[0], NAMES[1], NAMES[1]], "k": [5, 50, 5, 50],
                         f"{metric}_mean": [0.7, 0.8, 0.75, 0.9], f"{metric}_std": [0.1, 0.1, 0.05, 0.0]})
    oof = pd.DataFrame({"true": classes * 3, "proba_c^{x}": [0.1, 0.6, 0.4, 0.9, 0.3, 0.8]})
    confusion = pd.DataFrame({"true": classes, classes[0]: [3, 1], classes[1]: [0, 4]})
    stability = pd.DataFrame({"feature": NAMES, "frequency": np.linspace(1, 0.2, n)})
    return {
        "score_distribution": (lambda: figures.score_distribution(scores, best_k=2), []),
        "volcano": (lambda: figures.volcano(scores, n_labels=n), NAMES),
        "qq_plot": (lambda: figures.qq_plot(np.r_[0.0, np.geomspace(1e-9, 1, 300)], threshold=1e-5,
                                            inflation=1.0), []),
        "scree_plot": (lambda: figures.scree_plot([0.4, 0.3, 0.1], chosen=2, metric=metric), [metric]),
        "manhattan_plot": (lambda: figures.manhattan_plot(hits, threshold=1e-4), ["ref$_$", *NAMES[:3]]),
        "class_distributions": (lambda: figures.class_distributions(top), NAMES[:4] + classes),
        "cv_curve": (lambda: figures.cv_curve(curve, best_k=10, metric=metric), [metric]),
        "selection_stability": (lambda: figures.selection_stability(stability, selected=NAMES[:2]), NAMES),
        "roc_curve": (lambda: figures.roc_curve(oof, classes), classes),
        "confusion_matrix": (lambda: figures.confusion_matrix(confusion), classes),
        "grid_heatmap": (lambda: grid_figures.grid_heatmap(grid, metric=metric, best_options=NAMES[1], best_k=50),
                         [metric, *NAMES[:2]]),
        "grid_curves": (lambda: grid_figures.grid_curves(grid, metric=metric, best_options=NAMES[1], best_k=50),
                        [metric, *NAMES[:2]]),
    }


def _small_png(fig, *, dpi=110):
    """The figure rendered at a low resolution: every text is laid out and drawn all the same."""
    return _png_bytes(fig, dpi=20)


def _shown(fig):
    """The strings the figure's texts draw; fails on a text read as math that is not a number."""
    from matplotlib.text import Text

    shown = []
    for text in fig.findobj(Text):
        assert text.get_usetex() is False, text.get_text()
        string, math_text = text._preprocess_math(text.get_text())
        assert not math_text or NUMBER_TICK.match(text.get_text()), text.get_text()
        shown.append(string)
    return shown


def test_every_figure_function_is_built_literally_and_tested_here():
    found = _figure_functions()
    assert set(found) == set(_cases())  # a new figure function needs a case here
    for name, f in found.items():
        assert f.__qualname__ == name and f.__code__ is figures.drawn_literally(len).__code__, name


@pytest.mark.parametrize("name", sorted(_cases()))
def test_every_figure_draws_names_from_the_data_as_they_are(name, monkeypatch):
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "text.usetex", True)  # a user's setting: never TeX for names
    monkeypatch.setitem(matplotlib.rcParams, "text.parse_math", True)
    build, names = _cases()[name]
    fig = build()
    assert _small_png(fig)[:4] == b"\x89PNG"  # mathtext raises on '$_$', TeX without latex
    shown = _shown(fig)  # after drawing: the tick labels are those drawn
    for expected in names:
        assert any(expected in s for s in shown), (expected, shown)
    if name == "score_distribution":  # a log axis keeps its number ticks: 10^k drawn as powers
        assert any(NUMBER_TICK.match(t.get_text()) for t in fig.axes[0].get_xticklabels())


def test_p_of_zero_is_one_decade_above_the_smallest_positive():
    y = figures.minus_log10([1e-8, 0.0, 0.5, np.nan, 5e-324])
    assert y[1] == pytest.approx(1 - math.log10(5e-324)) and np.isfinite(y[1])
    assert y[0] == pytest.approx(8.0) and np.isnan(y[3])
    assert figures.minus_log10([0.0, 0.0]).tolist() == [1 - math.log10(5e-324)] * 2  # none positive: 324.3
    assert figures.minus_log10([0.0, 1e-3])[0] == pytest.approx(4.0)


def _hits(feature, pvalue):
    n = len(feature)
    return pd.DataFrame({"feature": feature, "reference": "ref$_$", "contig": "chr", "start": np.arange(n) * 100 + 1,
                         "end": np.arange(n) * 100 + 31, "strand": "+", "pvalue": pvalue,
                         "gene": [f"g_{i}$" for i in range(n)]})


def _ranking(tmp_path, n, metric="m$_$"):
    rng = np.random.default_rng(1)
    pd.DataFrame({"feature": [f"f{i}" for i in range(n)], "pvalue": rng.random(n)}).to_csv(
        tmp_path / "ranking.tsv", sep="\t", index=False)
    (tmp_path / "ranking.tsv.json").write_text(json.dumps(
        {"n_patterns": n, "structure": {"explained": [0.3, 0.2], "scree": [0.3, 0.2, 0.1], "metric": metric}}))
    return tmp_path / "ranking.tsv"


def test_plot_draws_a_reference_and_a_metric_holding_mathtext(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(figures, "png_bytes", _small_png)
    ranking = _ranking(tmp_path, 20)
    _hits(["ACGT", "CGTA", "GTAC"], [1e-6, 0.0, 0.3]).to_csv(tmp_path / "ref$_$.hits.tsv", sep="\t", index=False)
    code = main(["plot", str(ranking), "--manhattan", str(tmp_path / "m.png"), "--scree", str(tmp_path / "s.png"),
                 "--qq", str(tmp_path / "q.png"), "--hits", str(tmp_path / "ref$_$.hits.tsv")])
    assert code == 0, capsys.readouterr().err
    for name in ("m.png", "s.png", "q.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def test_phandango_writes_p_zero_finite_and_each_occurrence_on_one_line(tmp_path, capsys):
    from genosift.jobs.plots import phandango_text

    features = ["ACGT", "a\tb", "c\nd", "e\x1b[2Jf", "g\\h", "k\u2028l"]
    p = [1e-6, 0.0, 0.3, 2e-3, 0.5, 1.0]
    hits = _hits(features, p)
    lines = phandango_text(hits).split("\n")
    assert lines[-1] == "" and len(lines) == 2 + len(features)
    rows = [line.split("\t") for line in lines[1:-1]]
    assert all(len(r) == 6 for r in rows), rows
    assert [r[1] for r in rows] == ["ACGT", "a\\tb", "c\\nd", "e\\x1b[2Jf", "g\\h", "k\\u2028l"]
    minus = [float(r[3]) for r in rows]
    assert minus[0] == -math.log10(1e-6) and float(rows[0][4]) == math.log10(1e-6)  # exact where p > 0
    assert minus[1] == pytest.approx(7.0) and float(rows[1][4]) == pytest.approx(-7.0)  # p = 0: 1e-6 / 10
    assert "inf" not in "\n".join(lines).lower()
    # the same height as the Manhattan plot draws it
    fig = figures.manhattan_plot(hits)
    drawn = sorted(np.asarray(fig.axes[0].collections[0].get_offsets())[:, 1].tolist())
    assert drawn[-1] == pytest.approx(minus[1])
    # through the command line: every p of 0
    _ranking(tmp_path, 5)
    _hits(["ACGT", "CGTA"], [0.0, 0.0]).to_csv(tmp_path / "hits.tsv", sep="\t", index=False)
    code = main(["plot", str(tmp_path / "ranking.tsv"), "--phandango", str(tmp_path / "h.plot"), "--hits",
                 str(tmp_path / "hits.tsv")])
    assert code == 0, capsys.readouterr().err
    written = (tmp_path / "h.plot").read_text().splitlines()[1:]
    assert [float(line.split("\t")[3]) for line in written] == [1 - math.log10(5e-324)] * 2


def test_the_report_escapes_names_and_draws_them_literally(tmp_path, monkeypatch):
    from genosift.report import make_report
    from genosift.workflow import evaluate, write_results

    rng = np.random.default_rng(5)
    names = np.array(["<script>alert(1)</script>", "$_$", "a_b^c", "\\fr{x}", "q\"'>", "x$y$"], dtype=object)
    X = rng.normal(size=(16, len(names)))
    y = np.array(["<i>c</i>", "$_$"] * 8, dtype=object)
    X[:, 0] += 2 * (y == "$_$")
    ev = evaluate(X, y, ks=[2, len(names)], cv=2, feature_names=names)
    write_results(ev, tmp_path / "ev", X=X, y=y)
    p = [1e-5, 0.0, 0.2, 0.3, 0.4, 0.5]
    _hits(list(names), p).to_csv(tmp_path / "hits.tsv", sep="\t", index=False)
    pd.DataFrame({"feature": names, "pvalue": p}).to_csv(tmp_path / "ranking.tsv", sep="\t", index=False)
    (tmp_path / "ranking.tsv.json").write_text(json.dumps({"method": "logistic", "target": "<b>t$_$</b>"}))
    monkeypatch.setattr(figures, "png_bytes", _small_png)  # drawn all the same, quicker
    report = make_report(tmp_path / "ev", tmp_path / "r.html", hits=tmp_path / "hits.tsv",
                         ranking=tmp_path / "ranking.tsv")
    page = report.html.read_text()
    assert "<script" not in page.lower() and "<i>" not in page and "<b>t" not in page
    assert "QQ plot: logistic of &#x27;&lt;b&gt;t$_$&lt;/b&gt;&#x27;" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;i&gt;c&lt;/i&gt;" in page
    assert "q&quot;&#x27;&gt;" in page
    assert "manhattan.png" in {p.name for p in report.pngs}


def test_control_characters_in_names_are_drawn_as_escapes():
    import warnings

    names = ["a\x00b", "c\x1b[2Jd", "e\nf", "g\th"]
    scores = pd.DataFrame({"feature": names, "statistic": [1.0, -1.0, 2.0, 0.5], "qvalue": [1e-3, 1e-2, 0.0, 0.1],
                           "selected": [True] * 4})
    stability = pd.DataFrame({"feature": names, "frequency": [1.0, 0.8, 0.5, 0.2]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a glyph missing for a control character warns, with it raw
        drawn = [figures.volcano(scores, n_labels=4), figures.selection_stability(stability)]
        for fig in drawn:
            _small_png(fig)
    for strings in map(_shown, drawn):
        for escaped in ("a\\x00b", "c\\x1b[2Jd", "e\\nf", "g\\th"):
            assert escaped in strings, strings
        assert all(s == figures.one_line(s) for s in strings)
