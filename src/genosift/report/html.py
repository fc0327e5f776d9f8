"""The HTML of the report: tables, the summary, the settings and the page around the figures."""
from __future__ import annotations

import base64
import html

import numpy as np

from ..core.choices import METRICS


def in_sentence(name):
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
    # in a box that scrolls sideways: a wide table (many class columns) never spills out of the page
    return (f'<div class="scroll"><table class="{classes}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _setting(key, value):
    if key == "inputs" and isinstance(value, dict):
        return "; ".join(f"{path} (sha256 {str((info or {}).get('sha256', ''))[:12]}\u2026)"
                         for path, info in value.items())
    if isinstance(value, dict):
        return ", ".join(f"{k}={_setting(k, v)}" for k, v in value.items()) or "\u2013"
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value) or "\u2013"
    return "\u2013" if value is None else _fmt(value)


_SETTING_ORDER = ("method", "binary", "model", "model_options", "metric", "best_k", "ks", "cv", "classes", "n_samples",
                  "n_features", "has_pvalues", "command", "genosift_version", "inputs")


def _settings_html(run):
    keys = [k for k in _SETTING_ORDER if k in run] + sorted(k for k in run if k not in _SETTING_ORDER)
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(_setting(k, run[k]))}</td></tr>" for k in keys)
    return f'<table class="settings"><tbody>{rows}</tbody></table>'


def _curve_html(results):
    from .figures import METRIC_NAMES

    curve = results.curve_values
    curve = curve.sort_values("k", kind="stable") if results.grid is None else curve
    metrics = [m for m in METRICS if f"{m}_mean" in curve and np.isfinite(curve[f"{m}_mean"]).any()]
    metrics += [c[:-5] for c in curve.columns if c.endswith("_mean") and c[:-5] not in METRICS]
    table = {} if results.grid is None else {"options": curve["options"].to_numpy()}
    table["k"] = curve["k"].to_numpy()
    for m in metrics:
        std = curve[f"{m}_std"] if f"{m}_std" in curve else np.full(len(curve), np.nan)
        table[METRIC_NAMES.get(m, m)] = [f"{a:.3f} \u00b1 {b:.3f}" if np.isfinite(b) else _fmt(a)
                                         for a, b in zip(curve[f"{m}_mean"], std)]
    import pandas as pd

    best = curve["k"].to_numpy() == results.best_k
    if results.grid is not None:
        best &= curve["options"].to_numpy() == results.best_options
    return _table(pd.DataFrame(table), formats={c: str for c in table if c != "k"},
                  highlight=lambda i: best[i], classes="numbers")


def _summary_html(results):
    from .figures import METRIC_NAMES

    run, k = results.run, results.best_k
    row = results.best_curve[results.best_curve["k"] == k].iloc[0]
    metric = run["metric"]
    std = row.get(f"{metric}_std", np.nan)
    spread = f" \u00b1 {std:.3f}" if np.isfinite(std) else ""
    others = [f"{in_sentence(METRIC_NAMES.get(m, m))} {row[f'{m}_mean']:.3f}" for m in METRICS
              if m != metric and f"{m}_mean" in row and np.isfinite(row[f"{m}_mean"])]
    cv = run.get("cv") or {}
    how = {"stratified_kfold": f"{cv.get('folds', '?')}-fold stratified cross-validation",
           "groups": f"{cv.get('folds', '?')}-fold cross-validation keeping groups whole",
           "validation": "one training / validation split"}.get(cv.get("kind"), "cross-validation")
    seed = f", seed {cv['seed']}" if "seed" in cv else ""
    by = in_sentence(METRIC_NAMES.get(metric, metric))
    picked = f"; best k picked on the validation samples of that split, by {by}" if results.one_split else ""
    grid = (f'<div class="big">{html.escape(results.best_options)}</div>' if results.grid is not None else "")
    return (f'<div class="summary"><div class="big">best k = {k:,}</div>{grid}<div>'
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
body{margin:0;background:#f6f7f9;color:#1d2330;\
font:15px/1.5 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1060px;margin:0 auto;padding:24px 28px 48px;background:#fff;box-shadow:0 0 12px rgba(0,0,0,.06)}
h1{font-size:26px;margin:8px 0 4px}\
h2{font-size:20px;margin:36px 0 10px;padding-bottom:4px;border-bottom:2px solid #e3e6ec}
h3{font-size:16px;margin:24px 0 8px}.lead{color:#4a5263;margin-top:0}
nav{margin:14px 0;font-size:14px}nav a{margin-right:14px;color:#0b62a4;text-decoration:none}
.summary{display:flex;gap:22px;align-items:center;background:#eef5fb;border-left:5px solid #0072B2;\
padding:12px 18px;margin:16px 0}
.summary .big{font-size:22px;font-weight:700;white-space:nowrap}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13.5px}
th,td{padding:4px 10px;border-bottom:1px solid #e6e8ee;text-align:left;vertical-align:top}
thead th{background:#f0f2f6;border-bottom:2px solid #d5d9e2}
.scroll{overflow-x:auto;max-width:100%}
table.numbers td{font-variant-numeric:tabular-nums;white-space:nowrap}table.numbers td+td{text-align:right}
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


def page(results, figures, missing):
    """The report's HTML page: the summary, the figures (embedded), the tables and the run settings."""
    from .. import __version__

    run = results.run
    figs = {f.name: _figure_html(f) for f in figures}
    e = html.escape
    title = f"genosift report: {run['method']} + {run['model']}"
    classes = ", ".join(map(str, run["classes"]))
    shape = (f"{_fmt(run['n_samples'])} samples \u00d7 {_fmt(run['n_features'])} features, "
             if "n_samples" in run and "n_features" in run else "")
    parts = [
        f"<h1>{e(title)}</h1>",
        f'<p class="lead">Features scored by <b>{e(str(run["method"]))}</b>, classified by '
        f'<b>{e(str(run["model"]))}</b>; '
        f"{e(shape)}classes {e(classes)}.</p>",
        _summary_html(results),
        '<nav><a href="#performance">Performance</a><a href="#classes">Per class</a>'
        + ('<a href="#unlabelled">Unlabelled samples</a>' if results.unlabelled_predictions is not None else '')
        + ''
        '<a href="#figures">Feature figures</a><a href="#features">Selected features</a>'
        '<a href="#settings">Run settings</a></nav>',
        '<section id="performance"><h2>Performance against k</h2>', figs["cv_curve"],
        *(figs[n] for n in ("grid_heatmap", "grid_curves") if n in figs),
        ("<h3>Metrics on the validation samples (one split: one value per k)</h3>" if results.one_split
         else "<h3>Mean \u00b1 standard deviation over the folds</h3>"), _curve_html(results), "</section>",
        f'<section id="classes"><h2>Per-class results at k = {results.best_k:,}</h2>',
    ]
    if results.per_class is not None:
        parts.append(_table(results.per_class, classes="numbers"))
    parts += [figs.get("confusion", ""), figs.get("roc", ""), "</section>"]
    if results.unlabelled_predictions is not None:
        parts += ['<section id="unlabelled"><h2>Samples without a label, predicted by the final model '
                  f"({len(results.unlabelled_predictions):,})</h2>",
                  _table(results.unlabelled_predictions.head(100), classes="numbers"),
                  ('<p class="note">The first 100; all are in unlabelled_predictions.tsv.</p>'
                   if len(results.unlabelled_predictions) > 100 else ""), "</section>"]
    parts += ['<section id="figures"><h2>Feature figures</h2>',
              *(figs[n] for n in ("score_distribution", "volcano", "qq", "manhattan", "class_distributions",
                                  "stability") if n in figs),
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
