"""The grid of model options ``evaluate`` crosses with its ks: the settings, their names and order,
the metrics of every (options, k) and the rule that picks the best of them.

An option given one value is part of every setting; an option given a list of values varies. The
settings are ordered simplest first (``genosift.core.choices.SIMPLER``: a smaller C, fewer or
shallower trees...; the values of an option without a direction keep the order given), the
options compared in the order they were given; that order breaks ties of the metric.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..core.choices import METRICS
from ..core.messages import FixError, plain
from .models import fold_metrics

#: Means of the metric closer than this are a tie (the same fold values summed in another order
#: differ in their last bits).
TIE = 1e-12


@dataclass
class Grid:
    """The settings of a grid of model options, simplest first.

    ``settings``: the options of each (every option given, one value each); ``varying``: the
    options given several values, with those values simplest first; ``labels``: each setting
    named by its varying options (``"C=0.1, class_weight='balanced'"``; ``""`` without a grid).
    """

    settings: list
    varying: dict
    labels: list

    @property
    def size(self):
        return len(self.settings)


def _python(value):
    """numpy scalars as Python ones (JSON, repr)."""
    return value.item() if isinstance(value, np.generic) else value


def _values(name, value):
    """The values given for one option: a list, tuple or 1-D array is several, anything else one."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise FixError(f"Model option {name!r} was given a {value.ndim}-D array; give one value or a list "
                           "of values to try ({model_options}).", owner="evaluate", model_options=FixError.ANY)
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        return [_python(value)]
    values = [_python(v) for v in value]
    if not values:
        raise FixError(f"Model option {name!r} was given no value; give one, or a list of values to try "
                       "({model_options}).", owner="evaluate", model_options=FixError.ANY)
    repeated = [v for i, v in enumerate(values) if any(_same(v, w) for w in values[:i])]
    if repeated:
        raise FixError(f"Model option {name!r} lists the value {plain(repeated[0])} more than once; give each "
                       "value once ({model_options}).", owner="evaluate", model_options=FixError.ANY)
    return values


def _same(a, b):
    """Whether two option values are the same value (1 and 1.0 are; True and 1 are not)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _simplest_first(values, direction):
    """``values`` sorted simplest first by ``direction`` ("smaller", "larger" or None: as given).

    None (no limit: a tree of any depth) is the least simple; values that are not all numbers or
    None keep the order given.
    """
    numbers = all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values)
    if direction is None or not numbers:
        return list(values)
    sign = 1.0 if direction == "smaller" else -1.0
    return sorted(values, key=lambda v: np.inf if v is None else sign * v)


def label(setting, names):
    """A setting named by the options in ``names``: ``C=0.1, class_weight='balanced'``."""
    return ", ".join(f"{n}={plain(setting[n])}" for n in names)


def option_grid(model, options):
    """The :class:`Grid` of ``options`` (option -> a value, or a list of values to try) for ``model``.

    Examples
    --------
    >>> g = option_grid("logistic", {"C": [1.0, 0.01, 0.1], "class_weight": "balanced"})
    >>> g.labels
    ['C=0.01', 'C=0.1', 'C=1.0']
    >>> g.settings[0]
    {'C': 0.01, 'class_weight': 'balanced'}
    """
    from ..core.choices import MODELS, SIMPLER

    options = dict(options or {})
    unknown = sorted(set(options) - set(MODELS.get(model, options)))
    if unknown:
        raise FixError(f"Unknown option(s) {unknown} for model {model!r}; its options are "
                       f"{sorted(MODELS[model])} ({{model_options}}).", owner="evaluate", model_options=FixError.ANY)
    given = {name: _values(name, value) for name, value in options.items()}
    directions = SIMPLER.get(model, {})
    ordered = {name: _simplest_first(values, directions.get(name)) for name, values in given.items()}
    varying = {name: values for name, values in ordered.items() if len(values) > 1}
    settings = [dict(zip(ordered, combo)) for combo in itertools.product(*ordered.values())]
    return Grid(settings, varying, [label(s, list(varying)) for s in settings])


def invalid_option(exc, grid):
    """A scikit-learn error about the value of a model option of ``grid``, as a ``FixError`` naming
    ``model_options``; None for any other error."""
    text = str(exc)
    for name in grid.settings[0]:
        if text.startswith(f"The '{name}' parameter of "):
            return FixError(f"Model option {name!r}: {text} Give it a value the model accepts ({{model_options}}).",
                            owner="evaluate", model_options=FixError.ANY)
    return None


def grid_metrics(folds, ks, y, classes, grid, *, one_split):
    """Per fold, setting and k, the metrics; and per setting and k their mean and spread over the
    folds. Without a grid the tables have no ``options`` column (the layout of a single model)."""
    import pandas as pd

    rows = []
    for i, fold in enumerate(folds):
        for s in range(grid.size):
            for k in ks:
                m = fold_metrics(y[fold["test"]], fold["predicted"][s, k], fold["proba"][s, k], classes,
                                 fold["decision"][s, k])
                rows.append({"setting": s, "k": k, "fold": i, **m, "n_train": len(fold["train"]),
                             "n_test": len(fold["test"])})
    cv_metrics = pd.DataFrame(rows)
    grouped = cv_metrics.groupby(["setting", "k"])
    cells = pd.MultiIndex.from_product([range(grid.size), ks], names=["setting", "k"])
    curve = cells.to_frame(index=False)
    for m in METRICS:
        curve[f"{m}_mean"] = grouped[m].mean().reindex(cells).to_numpy()
        # one validation split: one value per k, no spread (NaN, not a standard deviation of 0)
        curve[f"{m}_std"] = np.nan if one_split else grouped[m].std(ddof=0).reindex(cells).to_numpy()
    return _labelled(cv_metrics, grid), _labelled(curve, grid)


def _labelled(frame, grid):
    """``frame`` with its setting index replaced by the ``options`` label (first), or dropped without a grid."""
    setting = frame.pop("setting").to_numpy()
    if grid.size > 1:
        frame.insert(0, "options", np.asarray(grid.labels, dtype=object)[setting])
    return frame


def best_cell(curve, metric, grid):
    """``(setting, k)`` of the best mean ``metric``: ties (within ``TIE``) go to the simpler setting,
    then to the smaller k. ``curve``'s rows are in (setting, k) order, simplest first."""
    values = curve[f"{metric}_mean"].to_numpy(dtype=np.float64)
    if np.isnan(values).all():  # roc_auc on test folds of one class, or a model without scores
        raise FixError(
            f"The metric {metric!r} could not be computed on any fold (each test fold needs both "
            "classes, and the model class scores). Choose another {metric}.",
            owner="evaluate", metric=FixError.ANY,
        )
    top = np.nanmax(values)
    row = int(np.flatnonzero(values >= top - TIE)[0])
    setting = grid.labels.index(curve["options"].iloc[row]) if grid.size > 1 else 0
    return setting, int(curve["k"].iloc[row])
