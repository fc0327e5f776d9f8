"""Figures of a grid of model options (``curve.tsv`` with an ``options`` column): the metric that
chose the best model over options x k as a heat map, and its curve against k for each options."""
from __future__ import annotations

import numpy as np

from .figures import METRIC_NAMES, PALETTE, drawn_literally, is_log_spaced, new_figure, short


def _table(curve, metric, column):
    """``column`` of ``metric`` as a (options, k) matrix: the options in the order of ``curve``."""
    options = list(dict.fromkeys(curve["options"]))
    ks = np.unique(curve["k"].to_numpy())
    values = np.full((len(options), ks.size), np.nan)
    name = f"{metric}_{column}"
    if name in curve:
        rows = np.array([options.index(o) for o in curve["options"]])
        cols = np.searchsorted(ks, curve["k"].to_numpy())
        values[rows, cols] = curve[name].to_numpy(dtype=np.float64)
    return options, ks, values


@drawn_literally
def grid_heatmap(curve, *, metric, best_options, best_k):
    """The mean ``metric`` of every (options, k): one row per options, one column per k, each cell
    written; the best cell outlined.

    >>> import pandas as pd
    >>> curve = pd.DataFrame({"options": ["C=0.1", "C=0.1", "C=1", "C=1"], "k": [5, 50, 5, 50],
    ...                       "accuracy_mean": [0.7, 0.8, 0.75, 0.9]})
    >>> grid_heatmap(curve, metric="accuracy", best_options="C=1", best_k=50).axes[0].get_xlabel()
    'k, features selected'
    """
    from matplotlib.patches import Rectangle

    options, ks, values = _table(curve, metric, "mean")
    longest = max(len(short(o, 40)) for o in options)
    fig, ax = new_figure(min(max(6.5, 2.6 + 0.9 * ks.size + 0.065 * longest), 12.0),
                         min(1.8 + 0.42 * len(options), 14.0))
    finite = values[np.isfinite(values)]
    low, high = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    image = ax.imshow(values, cmap="viridis", aspect="auto", vmin=low, vmax=high if high > low else low + 1e-9)
    for i in range(len(options)):
        for j in range(ks.size):
            if np.isfinite(values[i, j]):
                light = (values[i, j] - low) < 0.6 * (high - low) if high > low else True
                ax.text(j, i, f"{values[i, j]:.3f}", ha="center", va="center", fontsize=8,
                        color="white" if light else "black")
    if best_options in options and best_k in ks:
        ax.add_patch(Rectangle((int(np.searchsorted(ks, best_k)) - 0.5, options.index(best_options) - 0.5), 1, 1,
                               fill=False, edgecolor="#D55E00", linewidth=2.5))
    ax.set_xticks(range(ks.size), [f"{int(k):,}" for k in ks])
    ax.set_yticks(range(len(options)), [short(o, 40) for o in options])
    ax.set_xlabel("k, features selected")
    ax.set_ylabel("model options")
    ax.spines[:].set_visible(False)
    fig.colorbar(image, ax=ax, label=METRIC_NAMES.get(metric, metric), shrink=0.9)
    ax.set_title(f"{METRIC_NAMES.get(metric, metric)} over model options and k")
    return fig


@drawn_literally
def grid_curves(curve, *, metric, best_options, best_k, n_classes=None):
    """``metric`` against k, one line per options (error bars of +/- one standard deviation where
    the folds give one, each setting's points nudged sideways so that they do not hide each
    other); the best (options, k) starred.

    >>> import pandas as pd
    >>> curve = pd.DataFrame({"options": ["C=0.1", "C=0.1", "C=1", "C=1"], "k": [5, 50, 5, 50],
    ...                       "accuracy_mean": [0.7, 0.8, 0.75, 0.9], "accuracy_std": [0.1, 0.1, 0.05, 0.0]})
    >>> [t.get_text() for t in grid_curves(curve, metric="accuracy", best_options="C=1", best_k=50).legends[0].texts]
    ['C=0.1', 'C=1', 'best: k = 50, C=1 (0.900)']
    """
    options, ks, means = _table(curve, metric, "mean")
    _, _, stds = _table(curve, metric, "std")
    fig, ax = new_figure(8.0, 4.4)
    many = len(options) > len(PALETTE)
    if many:
        from matplotlib import colormaps

        cmap = colormaps["viridis"]
    log_x = is_log_spaced(ks)
    for i, name in enumerate(options):
        colour = cmap(i / max(1, len(options) - 1)) if many else PALETTE[i]
        # each setting's points nudged sideways, its spread as error bars: bands of several settings overlap
        step = 0.035 * (i - (len(options) - 1) / 2)
        at = ks * np.exp(step) if log_x else ks + step * (np.ptp(ks) or 1.0) / 4
        ax.plot(at, means[i], "o-", color=colour, markersize=3, linewidth=1.4, label=short(name, 40))
        if np.isfinite(stds[i]).any():
            ax.errorbar(at, means[i], yerr=np.nan_to_num(stds[i]), fmt="none", ecolor=colour, elinewidth=0.9,
                        capsize=2, alpha=0.8)
    if best_options in options and best_k in ks:
        value = means[options.index(best_options), int(np.searchsorted(ks, best_k))]
        ax.plot([best_k], [value], marker="*", markersize=13, color="black", linestyle="none",
                label=f"best: k = {best_k}, {short(best_options, 40)} ({value:.3f})")
    if n_classes and metric in ("balanced_accuracy", "roc_auc"):
        ax.axhline(0.5 if metric == "roc_auc" else 1 / n_classes, color="#888888", linestyle=":", linewidth=1,
                   label="chance")
    if is_log_spaced(ks):
        ax.set_xscale("log")
    if ks.size <= 12:
        from matplotlib.ticker import NullFormatter, NullLocator

        ax.set_xticks(ks, [f"{int(k):,}" for k in ks])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("k, features selected" + (" (log scale)" if is_log_spaced(ks) else ""))
    ax.set_ylabel(METRIC_NAMES.get(metric, metric))
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.8)
    fig.legend(*ax.get_legend_handles_labels(), frameon=False, fontsize=7.5, loc="outside right upper")
    ax.set_title(f"{METRIC_NAMES.get(metric, metric)} against k, per model options")
    return fig
