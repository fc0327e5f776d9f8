"""``make_report``: the figures of a results folder, drawn and written with one HTML page."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ..core.files import check_apart, check_output, remove_written, staged
from ..core.messages import FixExistsError
from ..core.validation import FixUsageError
from .html import in_sentence, page
from .results import load_results


class Report(NamedTuple):
    """What :func:`make_report` wrote: the HTML file and the PNG files."""

    html: Path
    pngs: list


class _Figure(NamedTuple):
    name: str
    title: str
    caption: str
    png: bytes


FIGURE_NAMES = ("cv_curve", "grid_heatmap", "grid_curves", "confusion", "roc", "score_distribution", "volcano",
                "qq", "manhattan", "class_distributions", "stability")


def make_report(results_dir, out_html, *, png_dir=None, overwrite=False, hits=None, ranking=None):
    """Write one self-contained HTML report of a results folder, and its figures as PNG files.

    The HTML embeds every figure (base64 data URIs) and its styles, so it opens offline and can
    be mailed as one file. Tables the folder lacks (stability, top values, ...) leave their
    figure out and the report says so; a volcano plot and a QQ plot are drawn only where p-values
    exist, a Manhattan plot only from the ``hits`` of ``genosift annotate``.

    The QQ plot and the Manhattan plot come from one analysis, named in their titles and
    captions (``genosift.report.association``): the ``ranking`` of ``genosift score`` that the
    hits were annotated from, else the final ranking of the ``evaluate`` run; both draw its
    genome-wide threshold (alpha over its distinct patterns, else over its features tested).

    Parameters
    ----------
    results_dir : path of the folder written by ``genosift evaluate``.
    out_html : path of the HTML file to write; its folder must exist.
    png_dir : folder for the PNG files (made if needed); default ``<name>_files`` beside the HTML.
    overwrite : replace an existing report and figures; otherwise existing files are an error.
    hits : path of a hits table of ``genosift annotate`` (optional): its Manhattan plot is added;
        it needs the ``ranking`` it annotated.
    ranking : path of a ranking table of ``genosift score`` (optional; its sidecar beside it
        names the analysis): the QQ plot is drawn from it, and the ``hits`` must be its own.

    Returns
    -------
    Report : ``(html, pngs)``, the paths written.

    Examples
    --------
    >>> import json, tempfile
    >>> from genosift.report import write_table
    >>> import pandas as pd
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "run.json").write_text(json.dumps({"method": "fisher", "model": "logistic",
    ...     "best_k": 2, "metric": "accuracy", "classes": ["a", "b"], "ks": [1, 2]}))
    >>> write_table(pd.DataFrame({"k": [1, 2], "accuracy_mean": [0.8, 0.9], "accuracy_std": [0.1, 0.05]}),
    ...             folder / "curve.tsv")
    >>> scores = pd.DataFrame({"feature": ["g1", "g2", "g3"], "score": [3.0, 2.0, 0.5], "rank": [1, 2, 3],
    ...                        "selected": [True, True, False]})
    >>> write_table(scores, folder / "scores.tsv")
    >>> write_table(scores.head(2).drop(columns="selected"), folder / "selected.tsv")
    >>> report = make_report(folder, folder / "report.html")
    >>> sorted(p.name for p in report.pngs)
    ['cv_curve.png', 'score_distribution.png']
    >>> "0.900" in report.html.read_text()
    True
    >>> import shutil; shutil.rmtree(folder)
    """
    out_html = Path(out_html)
    png_dir = Path(png_dir) if png_dir is not None else out_html.with_name(out_html.stem + "_files")
    _check_paths(results_dir, out_html, png_dir, overwrite, hits, ranking)
    results = load_results(results_dir)
    association, hits = _analysis(ranking, hits)
    figures, missing = _figures(results, hits, association)
    pngs = _checked_pngs(figures, png_dir, overwrite)
    text = page(results, figures, missing).encode("utf-8")
    _write(figures, pngs, text, out_html, png_dir, overwrite)
    return Report(out_html, pngs)


def _check_paths(results_dir, out_html, png_dir, overwrite, hits, ranking):
    """The errors of ``make_report`` before any reading: no output folder, hits without their
    ranking, an output that is one of the inputs, an existing page not to be replaced."""
    if not out_html.parent.is_dir():
        raise FileNotFoundError(f"The output folder {str(out_html.parent)!r} does not exist. Create it first.")
    if hits is not None and ranking is None:
        raise FixUsageError("{hits} draws the Manhattan plot of the analysis that genosift annotate read: pass that "
                            "ranking table (genosift score's) in {ranking} too, so that the QQ plot and the "
                            "Manhattan plot come from one analysis.", owner="make_report", hits=FixUsageError.ANY,
                            ranking=FixUsageError.ANY)
    read = [p for p in Path(results_dir).iterdir() if p.is_file()] if Path(results_dir).is_dir() else []
    inputs = [("results_dir", p, True) for p in read] + [("hits", hits), ("ranking", ranking)]
    inputs += [] if ranking is None else [("ranking", str(ranking) + ".json")]
    possible = [("png_dir", png_dir / f"{name}.png") for name in FIGURE_NAMES]
    check_apart([("out_html", out_html), *possible], inputs, owner="make_report")
    check_output(out_html, force=overwrite, owner="make_report", option="out_html")


def _analysis(ranking, hits):
    """The association analysis of ``ranking`` (None without one) and the ``hits`` table read and
    checked against it (None without hits)."""
    association = None
    if ranking is not None:
        from .association import check_hits, ranking_association

        association = ranking_association(ranking)
    if hits is not None:
        from .outputs import read_hits

        table = read_hits(hits)
        check_hits(table, association, hits, ranking)
        hits = table
    return association, hits


def _checked_pngs(figures, png_dir, overwrite):
    """The PNG file of each figure, none of them existing unless ``overwrite`` (and then only one
    that genosift drew)."""
    pngs = [png_dir / f"{f.name}.png" for f in figures]
    if not overwrite:
        taken = [p for p in pngs if p.exists()]
        if taken:
            raise FixExistsError(f"{str(taken[0])!r} already exists. Pass {{overwrite}} to replace the figures, "
                                 "or choose another {png_dir}.", owner="make_report", overwrite=True,
                                 png_dir=FixExistsError.ANY)
    for png in pngs if png_dir.is_dir() else ():  # replaced only if genosift drew it
        check_output(png, force=overwrite, owner="make_report", option="png_dir")
    return pngs


def _write(figures, pngs, text, out_html, png_dir, overwrite):
    """The page and its figures written together; with ``overwrite``, a figure of an earlier
    report that this one has not is removed."""
    png_dir.mkdir(parents=True, exist_ok=True)
    with staged(*pngs, out_html, force=overwrite) as temps:  # the page and its figures together
        temps = temps if isinstance(temps, list) else [temps]
        for f, tmp in zip(figures, temps):
            tmp.write_bytes(f.png)
        temps[-1].write_bytes(text)
    for name in FIGURE_NAMES if overwrite else ():  # a figure of the report replaced that this one has not
        stale = png_dir / f"{name}.png"
        if stale not in pngs:
            remove_written(stale)  # only a figure genosift wrote: never a file of the user's


def _figures(results, hits=None, association=None):
    """The figures the tables allow, rendered to PNG, and a note for each one left out; the QQ
    and Manhattan plots those of ``association`` (default: evaluate's final ranking)."""
    from . import figures as fg

    made, missing = [], []

    def add(name, title, caption, draw):
        fig = draw()
        made.append(_Figure(name, title, caption, fg.png_bytes(fig)))

    _performance_figures(results, add, missing)
    _ranking_figures(results, add, missing, hits, association)
    _sample_figures(results, add, missing)
    return made, missing


def _performance_figures(results, add, missing):
    """The curve of the metrics against k (and the grid's figures), the confusion matrix and the
    ROC curve of the best k."""
    from . import figures as fg

    run, k = results.run, results.best_k
    cv = run.get("cv") or {}
    across = f"the {cv['folds']} cross-validation folds" if cv.get("folds") else "the cross-validation folds"
    metric = fg.METRIC_NAMES.get(run["metric"], run["metric"])
    if results.one_split:
        title, how = "Validation performance against k", "Each metric on the validation samples against the number "
        how += "of selected features k (one split: one value per k, no spread). "
    else:
        title, how = "Cross-validated performance against k", "Each metric against the number of selected features "
        how += f"k: mean over {across} with a band of \u00b1 one standard deviation. "
    picked = " on the validation samples of this one split" if results.one_split else ""
    at = f" with the best model options ({results.best_options})" if results.grid is not None else ""
    add("cv_curve", title + at,
        how + f"The dashed line marks the best k = {k}, chosen by {in_sentence(metric)}{picked}. Features were "
        "scored on the training samples only.",
        lambda: fg.cv_curve(results.best_curve, best_k=k, metric=run["metric"], n_classes=len(run["classes"])))
    if results.grid is not None:
        _grid_figures(results, add, metric, picked)
    if results.confusion is not None:
        add("confusion", f"Confusion matrix at k = {k}",
            ("Predictions for the validation samples" if results.one_split else "Out-of-fold predictions")
            + ": counts (left) and the share of each true class (right; the diagonal is the recall of each class).",
            lambda: fg.confusion_matrix(results.confusion))
    else:
        missing.append("The confusion matrix: confusion.tsv is not in the results folder.")
    classes = [str(c) for c in run["classes"]]
    proba = None if results.predictions is None or len(classes) != 2 else f"proba_{classes[1]}"
    if proba is not None and proba in results.predictions.columns:
        add("roc", f"ROC curve at k = {k}",
            ("Predictions for the validation samples" if results.one_split else "Out-of-fold predictions")
            + f": the share of {classes[1]} samples called {classes[1]} against the share of {classes[0]} samples "
            f"called {classes[1]}, as the threshold on the probability of {classes[1]} falls; dotted: chance.",
            lambda: fg.roc_curve(results.predictions, classes))
    elif len(classes) == 2:
        missing.append(f"The ROC curve: the model ({run['model']}) gives no class probabilities, or "
                       "predictions.tsv is not in the results folder.")


def _ranking_figures(results, add, missing, hits, association):
    """The distribution of the final ranking's scores, its volcano plot, and the QQ and Manhattan
    plots of ``association`` (default: that ranking's)."""
    from . import figures as fg

    run, k = results.run, results.best_k
    add("score_distribution", "Score distribution",
        f"The {run['method']} score of every feature in the final ranking (fitted on all training samples); "
        f"the {k} features right of the dashed cut-off are the selected ones.",
        lambda: fg.score_distribution(results.scores, best_k=k))
    signed = _signed(run["method"])
    two_means = "diff_means" in results.scores.columns
    if results.has_pvalues and (signed or two_means):
        effect, label, said = (("statistic", "effect size (statistic)", "the method's signed statistic") if signed
                               else ("diff_means", f"difference of the class means ({_difference(run)})",
                                     f"the difference of the class means, {_difference(run)}, as the "
                                     f"{run['method']} statistic has no sign"))
        add("volcano", "Volcano plot",
            f"Effect size ({said}) against \u2212log10 of the Benjamini-Hochberg q-value; "
            "selected features in orange, the most significant of them named; dashed line: q = 0.05.",
            lambda: fg.volcano(results.scores, effect=effect, effect_label=label))
    elif results.has_pvalues:
        missing.append(f"The volcano plot: method '{run['method']}' gives an unsigned statistic and the ranking "
                       "holds no difference of class means (more than two classes) to draw as an effect size.")
    else:
        missing.append(f"The volcano plot: method '{run['method']}' gives no p-values.")
    if association is None and results.has_pvalues:
        from .association import results_association

        association = results_association(results)
    if association is not None:
        _association_figures(association, hits, add)


def _sample_figures(results, add, missing):
    """The class-conditional distributions of the top features and the selection stability."""
    from . import figures as fg

    run, k = results.run, results.best_k
    if results.top_values is not None:
        n = len([c for c in results.top_values.columns if c not in ("sample", "label")][:12])
        add("class_distributions", "Class-conditional distributions of the top features",
            f"For the {n} best features of the final ranking: p(x) over all samples (grey) against p(x | class), "
            "one line per class. A feature that tells the classes apart has class curves that differ from "
            "each other and from p(x). Counts with few distinct values are shown as the share of samples at "
            "each value, other values as kernel density estimates.",
            lambda: fg.class_distributions(results.top_values, classes=[str(c) for c in run["classes"]]))
    else:
        missing.append("The class-conditional distributions: top_values.tsv is not in the results folder.")
    if results.one_split:
        missing.append("The selection stability: one training / validation split selects each feature once or "
                       "not at all, so there is no stability over folds to show.")
    elif results.stability is not None:
        add("stability", "Selection stability",
            f"How often each feature was among the top {k} of a training fold's ranking, most frequent first; "
            "features selected in every fold are the stable ones. Blue: selected by the final model.",
            lambda: fg.selection_stability(results.stability, selected=results.selected["feature"]))
    else:
        missing.append("The selection stability: stability.tsv is not in the results folder.")
    if results.per_class is None:
        missing.append("The per-class metrics: per_class.tsv is not in the results folder.")


def _association_figures(association, hits, add):
    """The QQ plot of ``association`` and, with ``hits``, its Manhattan plot: one analysis, named,
    with its genome-wide threshold."""
    from . import figures as fg

    a = association
    patterns = a.over == "distinct patterns"
    drawn = (f"each of the {a.pvalues.size:,} distinct patterns tested (one p-value each, shared by the features "
             f"of the pattern; {a.n_features:,} features with a p-value)" if patterns else
             f"each of the {a.n_features:,} features tested")
    lam = (f"lambda = {a.inflation:.3f} over the patterns ({a.feature_inflation:.3f} over the features)" if patterns
           else f"lambda = {a.inflation:.3f} over the features")
    add("qq", f"QQ plot: {a.name}",
        f"Observed against expected \u2212log10 p-value of {drawn}, from {a.source}, with the band in which they "
        f"fall 95 % of the time without any association; the genomic inflation factor {lam} is about 1 without "
        "confounding, well above 1 when population structure inflates every test. Dashed: the genome-wide "
        f"threshold, {a.threshold_text}.",
        lambda: fg.qq_plot(a.pvalues, threshold=a.threshold, inflation=a.inflation, over=a.over,
                           threshold_label=a.threshold_label, analysis=a.name))
    if hits is not None:
        add("manhattan", f"Manhattan plot: {a.name}",
            "\u2212log10 p of each occurrence of the annotated k-mers along the reference genome (the hits table "
            f"of genosift annotate, with the p-values of {a.source}); the best genes named. Dashed: the "
            f"genome-wide threshold, {a.threshold_text}.{a.lineage_text}",
            lambda: fg.manhattan_plot(hits, threshold=a.threshold, threshold_label=a.threshold_label,
                                      analysis=a.name))


def _grid_figures(results, add, metric, picked):
    """The heat map and the per-options curves of a grid of model options."""
    from . import grid_figures as gf

    run, k, best = results.run, results.best_k, results.best_options
    spread = "" if results.one_split else ", mean over the folds"
    add("grid_heatmap", f"{metric} over model options and k",
        f"{metric} of every model options (rows, simplest first) and k (columns){spread}; the outlined cell is "
        f"the best, k = {k} with {best}{picked}. Every cell comes from the same per-fold rankings of the features.",
        lambda: gf.grid_heatmap(results.curve_values, metric=run["metric"], best_options=best, best_k=k))
    add("grid_curves", f"{metric} against k, per model options",
        "One line per model options" + (", with a band of \u00b1 one standard deviation over the folds" if spread
                                        else "") + f"; the star marks the best, k = {k} with {best}.",
        lambda: gf.grid_curves(results.curve_values, metric=run["metric"], best_options=best, best_k=k,
                               n_classes=len(run["classes"])))


def _signed(method):
    """Whether the method's statistic has a sign (a direction) to draw as an effect size."""
    from ..scores import get_method

    try:
        return bool(get_method(method).signed)
    except (ValueError, KeyError):  # a results folder of a method this version lacks
        return False


def _difference(run):
    classes = [str(c) for c in run["classes"]]
    return f"{classes[1]} minus {classes[0]}" if len(classes) == 2 else "between the classes"
