"""Writing results (atomic files, tidy tables, provenance sidecars) and the HTML report of a
results folder written by ``genosift evaluate``."""
from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ._files import staged, write_text
from ._messages import FixExistsError


def write_table(frame, path, *, force=True):
    """A DataFrame as a tab-separated file, written whole or not at all; every float64 and int64
    is written exactly (the shortest text that reads back to the same number)."""
    write_text(path, table_text(frame, "\t"), force=force)


def table_text(frame, sep):
    """``frame`` as delimited text without its index; numbers round-trip exactly."""
    return frame.to_csv(sep=sep, index=False)


def write_json(obj, path, *, force=True):
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", force=force)


def fresh_folder(base):
    """Create and return a new folder ``base``, or ``base-2``, ``base-3``... if it exists."""
    base = Path(base)
    for i in range(1, 10_000):
        candidate = base if i == 1 else base.with_name(f"{base.name}-{i}")
        try:
            candidate.mkdir(parents=True)
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"Could not create a fresh folder next to {base}.")


# ------------------------------------------------------------------ reading a results folder
METRICS = ("accuracy", "balanced_accuracy", "f1_macro", "roc_auc")
# name: (columns that must be there, columns read as numbers (None: all but the text ones), whether
# the report needs the table); the text columns are kept as written
_TABLES = {
    "curve.tsv": (("k",), None, True),
    "scores.tsv": (("feature", "score", "rank", "selected"), ("score", "statistic", "pvalue", "qvalue", "rank"), True),
    "selected.tsv": (("feature", "rank", "score"), ("rank", "score", "pvalue", "qvalue", "importance"), True),
    "per_class.tsv": (("class", "precision", "recall", "f1", "support"), ("precision", "recall", "f1", "support"), False),
    "confusion.tsv": (("true",), None, False),
    "stability.tsv": (("feature", "frequency"), ("frequency",), False),
    "top_values.tsv": (("sample", "label"), None, False),
}
_PROFILE_NUMBERS = ("mean", "prevalence", "diff_means", "correlation_sign")  # see genosift.Profile.columns
_TEXT = {"curve.tsv": (), "confusion.tsv": ("true",), "top_values.tsv": ("sample", "label")}
_MISSING = {"", "nan", "NaN", "NA", "N/A", "null", "None"}
_RUN_KEYS = ("method", "model", "best_k", "metric", "classes")


@dataclass
class Results:
    """The tables of a results folder written by ``genosift evaluate``, checked and typed.

    ``run`` is run.json; ``curve``, ``scores`` and ``selected`` are always there; the other
    tables are ``None`` when their file is absent.
    """

    folder: Path
    run: dict
    curve: object
    scores: object
    selected: object
    per_class: object = None
    confusion: object = None
    stability: object = None
    top_values: object = None

    @property
    def best_k(self):
        return int(self.run["best_k"])

    @property
    def one_split(self):
        """One training / validation split (``--val-groups``): one value per k, no spread, no folds."""
        return (self.run.get("cv") or {}).get("kind") == "validation"

    @property
    def curve_values(self):
        """``curve`` with no standard deviations for one split (older folders wrote 0 there)."""
        if not self.one_split:
            return self.curve
        curve = self.curve.copy()
        for c in curve.columns:
            if c.endswith("_std"):
                curve[c] = np.nan
        return curve

    @property
    def has_pvalues(self):
        q = self.scores["qvalue"] if "qvalue" in self.scores else None
        return bool(self.run.get("has_pvalues", True)) and q is not None and bool(np.isfinite(q).any())


def _bad(path, problem):
    return ValueError(f"The results file {str(path)!r} {problem}. It is written by `genosift evaluate`; "
                      "run it again, or repair the file.")


def _read_table(path, required, numeric):
    import pandas as pd

    try:
        frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise _bad(path, f"is not a readable tab-separated table ({exc})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise _bad(path, f"lacks the column(s) {', '.join(map(repr, missing))} (it has {', '.join(map(repr, frame.columns[:8]))})")
    if frame.empty:
        raise _bad(path, "has a header but no rows")
    columns = ([c for c in frame.columns if c not in _TEXT[path.name]] if numeric is None
               else [c for c in numeric if c in frame])
    if path.name in ("scores.tsv", "selected.tsv"):  # the class means, prevalence and signed effect
        columns += [c for c in frame.columns if c in _PROFILE_NUMBERS or c.startswith(("mean_", "prevalence_"))]
    for c in columns:
        text = frame[c].str.strip()
        blank = text.isin(_MISSING)
        values = pd.to_numeric(text.mask(blank), errors="coerce")
        bad = values.isna() & ~blank
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise _bad(path, f"has a value that is not a number in column {c!r}, row {row + 1}: {text.iloc[row]!r}")
        frame[c] = values.astype(np.float64)
    if path.name == "scores.tsv":
        flags = frame["selected"].str.strip().str.lower()
        unknown = ~flags.isin(["true", "false", "1", "0"])
        if unknown.any():
            raise _bad(path, f"has a 'selected' value that is not True or False: {frame['selected'][unknown].iloc[0]!r}")
        frame["selected"] = flags.isin(["true", "1"])
    return frame


def _whole(frame, column, path):
    values = frame[column].to_numpy()
    if not (np.isfinite(values).all() and (values == np.round(values)).all()):
        raise _bad(path, f"has a {column!r} that is not a whole number")
    frame[column] = values.astype(np.int64)


def load_results(results_dir):
    """Read and check the tables of a results folder written by ``genosift evaluate``.

    Returns a :class:`Results`. Raises ``FileNotFoundError`` when the folder or a needed file
    (run.json, curve.tsv, scores.tsv, selected.tsv) is absent and ``ValueError`` naming the file
    and the problem when a table is malformed. See :func:`make_report` for an example.
    """
    folder = Path(results_dir)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{str(folder)!r} is a file, not a results folder. Pass the folder that "
                                 "`genosift evaluate -o` wrote.")
    if not folder.is_dir():
        raise FileNotFoundError(f"The results folder {str(folder)!r} does not exist. Pass the folder "
                                "that `genosift evaluate -o` wrote.")
    run = _read_run(folder / "run.json")
    tables = {}
    for name, (required, numeric, needed) in _TABLES.items():
        path = folder / name
        if not path.exists():
            if needed:
                raise FileNotFoundError(f"The results folder {str(folder)!r} has no {name}, which the report "
                                        "needs. Is it the folder `genosift evaluate -o` wrote?")
            continue
        tables[name[: -len(".tsv")]] = _read_table(path, required, numeric)
    curve = tables["curve"]
    _whole(curve, "k", folder / "curve.tsv")
    _whole(tables["scores"], "rank", folder / "scores.tsv")
    _whole(tables["selected"], "rank", folder / "selected.tsv")
    if "per_class" in tables:
        _whole(tables["per_class"], "support", folder / "per_class.tsv")
    if "confusion" in tables:
        for column in tables["confusion"].columns[1:]:
            _whole(tables["confusion"], column, folder / "confusion.tsv")
    if f"{run['metric']}_mean" not in curve:
        raise _bad(folder / "curve.tsv", f"has no column {run['metric'] + '_mean'!r} for the metric that chose "
                   f"best_k in run.json")
    if run["best_k"] not in set(curve["k"]):
        raise _bad(folder / "run.json", f"gives best_k = {run['best_k']}, which is not a k of curve.tsv "
                   f"({', '.join(map(str, curve['k']))})")
    return Results(folder=folder, run=run, **tables)


def _read_run(path):
    if not path.exists():
        raise FileNotFoundError(f"The results folder {str(path.parent)!r} has no run.json, which the report needs. "
                                "Is it the folder `genosift evaluate -o` wrote?")
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(path, f"is not valid JSON ({exc})") from None
    if not isinstance(run, dict):
        raise _bad(path, "does not hold a JSON object")
    missing = [key for key in _RUN_KEYS if key not in run]
    if missing:
        raise _bad(path, f"lacks the key(s) {', '.join(map(repr, missing))}")
    if not isinstance(run["best_k"], int) or isinstance(run["best_k"], bool) or run["best_k"] < 1:
        raise _bad(path, f"has best_k = {run['best_k']!r}; it must be a whole number >= 1")
    return run


# ------------------------------------------------------------------ the HTML report
class Report(NamedTuple):
    """What :func:`make_report` wrote: the HTML file and the PNG files."""

    html: Path
    pngs: list


class _Figure(NamedTuple):
    name: str
    title: str
    caption: str
    png: bytes


FIGURE_NAMES = ("cv_curve", "confusion", "score_distribution", "volcano", "class_distributions", "stability")


def make_report(results_dir, out_html, *, png_dir=None, overwrite=False):
    """Write one self-contained HTML report of a results folder, and its figures as PNG files.

    The HTML embeds every figure (base64 data URIs) and its styles, so it opens offline and can
    be mailed as one file. Tables the folder lacks (stability, top values, ...) leave their
    figure out and the report says so; a volcano plot is drawn only where p-values exist.

    Parameters
    ----------
    results_dir : path of the folder written by ``genosift evaluate``.
    out_html : path of the HTML file to write; its folder must exist.
    png_dir : folder for the PNG files (made if needed); default ``<name>_files`` beside the HTML.
    overwrite : replace an existing report and figures; otherwise existing files are an error.

    Returns
    -------
    Report : ``(html, pngs)``, the paths written.

    Examples
    --------
    >>> import json, tempfile
    >>> import pandas as pd
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "run.json").write_text(json.dumps({"method": "fisher", "model": "logistic",
    ...     "best_k": 2, "metric": "accuracy", "classes": ["a", "b"], "ks": [1, 2]}))
    >>> write_table(pd.DataFrame({"k": [1, 2], "accuracy_mean": [0.8, 0.9], "accuracy_std": [0.1, 0.05]}), folder / "curve.tsv")
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
    if not out_html.parent.is_dir():
        raise FileNotFoundError(f"The output folder {str(out_html.parent)!r} does not exist. Create it first.")
    if out_html.exists() and not overwrite:
        raise FixExistsError(f"{str(out_html)!r} already exists. Pass {{overwrite}} to replace it, or choose "
                             "another {out_html}.", owner="make_report", overwrite=True, out_html=FixExistsError.ANY)
    results = load_results(results_dir)
    figures, missing = _figures(results)
    pngs = [png_dir / f"{f.name}.png" for f in figures]
    if not overwrite:
        taken = [p for p in pngs if p.exists()]
        if taken:
            raise FixExistsError(f"{str(taken[0])!r} already exists. Pass {{overwrite}} to replace the figures, "
                                 "or choose another {png_dir}.", owner="make_report", overwrite=True,
                                 png_dir=FixExistsError.ANY)
    page = _html(results, figures, missing).encode("utf-8")
    png_dir.mkdir(parents=True, exist_ok=True)
    with staged(*pngs, out_html, force=overwrite) as temps:  # the page and its figures together
        temps = temps if isinstance(temps, list) else [temps]
        for f, tmp in zip(figures, temps):
            tmp.write_bytes(f.png)
        temps[-1].write_bytes(page)
    for name in FIGURE_NAMES if overwrite else ():  # a figure of the report replaced that this one has not
        stale = png_dir / f"{name}.png"
        if stale not in pngs:
            stale.unlink(missing_ok=True)
    return Report(out_html, pngs)


def _figures(results):
    """The figures the tables allow, rendered to PNG, and a note for each one left out."""
    from . import figures as fg

    run, k = results.run, results.best_k
    cv = run.get("cv") or {}
    across = f"the {cv['folds']} cross-validation folds" if cv.get("folds") else "the cross-validation folds"
    metric = fg.METRIC_NAMES.get(run["metric"], run["metric"])
    made, missing = [], []

    def add(name, title, caption, draw):
        fig = draw()
        made.append(_Figure(name, title, caption, fg.png_bytes(fig)))

    if results.one_split:
        title, how = "Validation performance against k", "Each metric on the validation samples against the number "
        how += "of selected features k (one split: one value per k, no spread). "
    else:
        title, how = "Cross-validated performance against k", "Each metric against the number of selected features "
        how += f"k: mean over {across} with a band of \u00b1 one standard deviation. "
    picked = " on the validation samples of this one split" if results.one_split else ""
    add("cv_curve", title,
        how + f"The dashed line marks the best k = {k}, chosen by {_in_sentence(metric)}{picked}. Features were "
        "scored on the training samples only.",
        lambda: fg.cv_curve(results.curve_values, best_k=k, metric=run["metric"], n_classes=len(run["classes"])))
    if results.confusion is not None:
        add("confusion", f"Confusion matrix at k = {k}",
            ("Predictions for the validation samples" if results.one_split else "Out-of-fold predictions")
            + ": counts (left) and the share of each true class (right; the diagonal is the recall of each class).",
            lambda: fg.confusion_matrix(results.confusion))
    else:
        missing.append("The confusion matrix: confusion.tsv is not in the results folder.")
    add("score_distribution", "Score distribution",
        f"The {run['method']} score of every feature in the final ranking (fitted on all training samples); "
        f"the {k} features right of the dashed cut-off are the selected ones.",
        lambda: fg.score_distribution(results.scores, best_k=k))
    if results.has_pvalues:
        add("volcano", "Volcano plot",
            "Effect size (the method's statistic) against \u2212log10 of the Benjamini-Hochberg q-value; "
            "selected features in orange, the most significant of them named; dashed line: q = 0.05.",
            lambda: fg.volcano(results.scores))
    else:
        missing.append(f"The volcano plot: method '{run['method']}' gives no p-values.")
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
    return made, missing


def _in_sentence(name):
    """``Balanced accuracy`` -> ``balanced accuracy``; ``ROC AUC`` stays."""
    return name[:1].lower() + name[1:] if name[1:2].islower() else name


def _fmt(value, digits=3):
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            return "\u2013"
        return f"{value:.{digits}f}" if 1e-3 <= abs(value) < 1e5 or value == 0 else f"{value:.2e}"
    return str(value)


def _table(frame, *, formats=None, highlight=None, classes=""):
    """An HTML table of ``frame``; ``formats`` maps a column to a function of its value."""
    formats = formats or {}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for i, row in enumerate(frame.itertuples(index=False)):
        cells = "".join(f"<td>{html.escape(formats.get(c, _fmt)(v))}</td>" for c, v in zip(frame.columns, row))
        mark = ' class="best"' if highlight is not None and highlight(i) else ""
        rows.append(f"<tr{mark}>{cells}</tr>")
    return f'<table class="{classes}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _setting(key, value):
    if key == "inputs" and isinstance(value, dict):
        return "; ".join(f"{path} (sha256 {str((info or {}).get('sha256', ''))[:12]}\u2026)" for path, info in value.items())
    if isinstance(value, dict):
        return ", ".join(f"{k}={_setting(k, v)}" for k, v in value.items()) or "\u2013"
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value) or "\u2013"
    return "\u2013" if value is None else _fmt(value)


_SETTING_ORDER = ("method", "model", "model_options", "metric", "best_k", "ks", "cv", "classes", "n_samples",
                  "n_features", "has_pvalues", "command", "genosift_version", "inputs")


def _settings_html(run):
    keys = [k for k in _SETTING_ORDER if k in run] + sorted(k for k in run if k not in _SETTING_ORDER)
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(_setting(k, run[k]))}</td></tr>" for k in keys)
    return f'<table class="settings"><tbody>{rows}</tbody></table>'


def _curve_html(results):
    from .figures import METRIC_NAMES

    curve = results.curve_values.sort_values("k")
    metrics = [m for m in METRICS if f"{m}_mean" in curve and np.isfinite(curve[f"{m}_mean"]).any()]
    metrics += [c[:-5] for c in curve.columns if c.endswith("_mean") and c[:-5] not in METRICS]
    table = {"k": curve["k"].to_numpy()}
    for m in metrics:
        std = curve[f"{m}_std"] if f"{m}_std" in curve else np.full(len(curve), np.nan)
        table[METRIC_NAMES.get(m, m)] = [f"{a:.3f} \u00b1 {b:.3f}" if np.isfinite(b) else _fmt(a)
                                         for a, b in zip(curve[f"{m}_mean"], std)]
    import pandas as pd

    best = curve["k"].to_numpy() == results.best_k
    return _table(pd.DataFrame(table), formats={c: str for c in table if c != "k"},
                  highlight=lambda i: best[i], classes="numbers")


def _summary_html(results):
    from .figures import METRIC_NAMES

    run, k = results.run, results.best_k
    row = results.curve_values[results.curve_values["k"] == k].iloc[0]
    metric = run["metric"]
    std = row.get(f"{metric}_std", np.nan)
    spread = f" \u00b1 {std:.3f}" if np.isfinite(std) else ""
    others = [f"{_in_sentence(METRIC_NAMES.get(m, m))} {row[f'{m}_mean']:.3f}" for m in METRICS
              if m != metric and f"{m}_mean" in row and np.isfinite(row[f"{m}_mean"])]
    cv = run.get("cv") or {}
    how = {"stratified_kfold": f"{cv.get('folds', '?')}-fold stratified cross-validation",
           "groups": f"{cv.get('folds', '?')}-fold cross-validation keeping groups whole",
           "validation": "one training / validation split"}.get(cv.get("kind"), "cross-validation")
    seed = f", seed {cv['seed']}" if "seed" in cv else ""
    by = _in_sentence(METRIC_NAMES.get(metric, metric))
    picked = f"; best k picked on the validation samples of that split, by {by}" if results.one_split else ""
    return (f'<div class="summary"><div class="big">best k = {k:,}</div><div>'
            f"{html.escape(METRIC_NAMES.get(metric, metric))} <b>{row[f'{metric}_mean']:.3f}{spread}</b> "
            f"({html.escape(how + seed + picked)})" + (f"; {html.escape(', '.join(others))}" if others else "")
            + "</div></div>")


def _selected_html(selected, limit=100):
    columns = [c for c in ("rank", "feature", "score", "pvalue", "qvalue", "importance") if c in selected]
    columns += [c for c in selected.columns if c not in columns]
    frame = selected.sort_values("rank", kind="stable")[columns]
    frame = frame[[c for c in columns if c not in ("pvalue", "qvalue") or np.isfinite(frame[c]).any()]]
    note = (f"<p class=\"note\">The first {limit} of {len(frame):,} selected features; all are in selected.tsv.</p>"
            if len(frame) > limit else "")
    means = [c[len("mean_"):] for c in columns if c.startswith("mean_")]
    if means:  # the direction of each feature's effect, on the training samples
        diff = (f"; diff_means: mean_{means[1]} \u2212 mean_{means[0]}, positive where the feature is higher "
                f"in {means[1]}" if "diff_means" in columns and len(means) == 2 else "")
        highest = "; highest_mean: the class with the highest mean" if "highest_mean" in columns else ""
        note = ("<p class=\"note\">On the training samples: mean_&lt;class&gt;, the mean of the feature in the "
                f"class{html.escape(diff)}{highest}; prevalence_&lt;class&gt;, the share of the class's samples "
                "with a value above 0.</p>" + note)
    return _table(frame.head(limit), classes="numbers") + note


_CSS = """
body{margin:0;background:#f6f7f9;color:#1d2330;font:15px/1.5 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1060px;margin:0 auto;padding:24px 28px 48px;background:#fff;box-shadow:0 0 12px rgba(0,0,0,.06)}
h1{font-size:26px;margin:8px 0 4px}h2{font-size:20px;margin:36px 0 10px;padding-bottom:4px;border-bottom:2px solid #e3e6ec}
h3{font-size:16px;margin:24px 0 8px}.lead{color:#4a5263;margin-top:0}
nav{margin:14px 0;font-size:14px}nav a{margin-right:14px;color:#0b62a4;text-decoration:none}
.summary{display:flex;gap:22px;align-items:center;background:#eef5fb;border-left:5px solid #0072B2;padding:12px 18px;margin:16px 0}
.summary .big{font-size:22px;font-weight:700;white-space:nowrap}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13.5px}
th,td{padding:4px 10px;border-bottom:1px solid #e6e8ee;text-align:left;vertical-align:top}
thead th{background:#f0f2f6;border-bottom:2px solid #d5d9e2}
table.numbers td{font-variant-numeric:tabular-nums}table.numbers td+td{text-align:right}
table.numbers td:nth-child(2){text-align:left}table.settings th{width:170px;color:#4a5263;font-weight:600}
table.settings td{word-break:break-word}tr.best td{background:#fff4d6;font-weight:600}
figure{margin:18px 0 28px}figure img{max-width:100%;height:auto;border:1px solid #e6e8ee}
figcaption{color:#4a5263;font-size:13.5px;margin-top:6px;max-width:880px}
.note{color:#6b7280;font-size:13.5px}ul.missing li{color:#4a5263}
footer{margin-top:40px;color:#8a91a0;font-size:12.5px}
"""


def _figure_html(f):
    data = base64.b64encode(f.png).decode("ascii")
    return (f'<figure id="fig-{f.name}"><img src="data:image/png;base64,{data}" alt="{html.escape(f.title)}">'
            f"<figcaption><b>{html.escape(f.title)}.</b> {html.escape(f.caption)}</figcaption></figure>")


def _html(results, figures, missing):
    from . import __version__

    run = results.run
    figs = {f.name: _figure_html(f) for f in figures}
    e = html.escape
    title = f"genosift report: {run['method']} + {run['model']}"
    classes = ", ".join(map(str, run["classes"]))
    shape = (f"{_fmt(run['n_samples'])} samples \u00d7 {_fmt(run['n_features'])} features, "
             if "n_samples" in run and "n_features" in run else "")
    parts = [
        f"<h1>{e(title)}</h1>",
        f'<p class="lead">Features scored by <b>{e(str(run["method"]))}</b>, classified by <b>{e(str(run["model"]))}</b>; '
        f"{e(shape)}classes {e(classes)}.</p>",
        _summary_html(results),
        '<nav><a href="#performance">Performance</a><a href="#classes">Per class</a>'
        '<a href="#figures">Feature figures</a><a href="#features">Selected features</a>'
        '<a href="#settings">Run settings</a></nav>',
        '<section id="performance"><h2>Performance against k</h2>', figs["cv_curve"],
        ("<h3>Metrics on the validation samples (one split: one value per k)</h3>" if results.one_split
         else "<h3>Mean \u00b1 standard deviation over the folds</h3>"), _curve_html(results), "</section>",
        f'<section id="classes"><h2>Per-class results at k = {results.best_k:,}</h2>',
    ]
    if results.per_class is not None:
        parts.append(_table(results.per_class, classes="numbers"))
    parts += [figs.get("confusion", ""), "</section>",
              '<section id="figures"><h2>Feature figures</h2>',
              *(figs[n] for n in ("score_distribution", "volcano", "class_distributions", "stability") if n in figs),
              "</section>",
              f'<section id="features"><h2>Selected features ({len(results.selected):,})</h2>',
              _selected_html(results.selected), "</section>",
              '<section id="settings"><h2>Run settings</h2>', _settings_html(run), "</section>"]
    if missing:
        items = "".join(f"<li>{e(m)}</li>" for m in missing)
        parts.append(f'<section id="missing"><h2>Not in this report</h2><ul class="missing">{items}</ul></section>')
    parts.append(f"<footer>Written by genosift {e(__version__)} from {e(str(results.folder))}.</footer>")
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{e(title)}</title>\n'
            f"<style>{_CSS}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n")
