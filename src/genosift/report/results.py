"""Reading a results folder written by ``genosift evaluate``: its tables, checked and typed."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io.reading import text_numbers

# name: (columns that must be there, columns read as numbers (None: all but the text ones), whether
# the report needs the table); the text columns are kept as written
_TABLES = {
    "curve.tsv": (("k",), None, True),
    "scores.tsv": (("feature", "score", "rank", "selected"), ("score", "statistic", "pvalue", "qvalue", "rank"), True),
    "selected.tsv": (("feature", "rank", "score"),
                     ("rank", "score", "pvalue", "qvalue", "importance", "importance_folds"), True),
    "per_class.tsv": (("class", "precision", "recall", "f1", "support"), ("precision", "recall", "f1", "support"),
                      False),
    "confusion.tsv": (("true",), None, False),
    "stability.tsv": (("feature", "frequency"), ("frequency",), False),
    "top_values.tsv": (("sample", "label"), None, False),
    "predictions.tsv": (("sample", "true", "predicted"), None, False),
    "unlabelled_predictions.tsv": (("sample", "predicted"), None, False),
}
_PROFILE_NUMBERS = ("mean", "prevalence", "diff_means", "correlation_sign")  # see genosift.Profile.columns
_TEXT = {"curve.tsv": ("options",), "confusion.tsv": ("true",), "top_values.tsv": ("sample", "label"),
         "predictions.tsv": ("sample", "true", "predicted", "fold"),
         "unlabelled_predictions.tsv": ("sample", "predicted")}
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
    predictions: object = None
    unlabelled_predictions: object = None

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
    def grid(self):
        """The models of a grid of options (``curve.tsv`` has an ``options`` column, one row per
        options and k): their names in the order of the table, simplest first; None without a grid."""
        if "options" not in self.curve:
            return None
        return list(dict.fromkeys(self.curve["options"]))

    @property
    def best_options(self):
        """The options of the final model, by name (run.json's ``best_options``; ``""`` without a grid)."""
        return str(self.run.get("best_options", "")) if self.grid is not None else ""

    @property
    def best_curve(self):
        """``curve_values`` of the final model's options only, one row per k (without the ``options`` column)."""
        curve = self.curve_values
        if self.grid is None:
            return curve
        return curve[curve["options"] == self.best_options].drop(columns="options").reset_index(drop=True)

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
        raise _bad(path,
                   f"lacks the column(s) {', '.join(map(repr, missing))} (it has "
                   f"{', '.join(map(repr, frame.columns[:8]))})")
    if frame.empty:
        raise _bad(path, "has a header but no rows")
    columns = ([c for c in frame.columns if c not in _TEXT[path.name]] if numeric is None
               else [c for c in numeric if c in frame])
    if path.name in ("scores.tsv", "selected.tsv"):  # the class means, prevalence and signed effect
        columns += [c for c in frame.columns if c in _PROFILE_NUMBERS or c.startswith(("mean_", "prevalence_"))]
    for c in columns:
        text = frame[c].str.strip()
        blank = text.isin(_MISSING)
        values = text_numbers(text.mask(blank))
        bad = values.isna() & ~blank
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise _bad(path, f"has a value that is not a number in column {c!r}, row {row + 1}: {text.iloc[row]!r}")
        frame[c] = values.astype(np.float64)
    if path.name == "scores.tsv":
        flags = frame["selected"].str.strip().str.lower()
        unknown = ~flags.isin(["true", "false", "1", "0"])
        if unknown.any():
            raise _bad(path,
                       f"has a 'selected' value that is not True or False: {frame['selected'][unknown].iloc[0]!r}")
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
    if "options" in curve and str(run.get("best_options")) not in set(curve["options"]):
        raise _bad(folder / "run.json", f"gives best_options = {run.get('best_options')!r}, which are not options "
                   "of curve.tsv")
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

