"""Figures of an evaluation: each function takes the tables of a results folder (DataFrames as
:func:`genosift.report.load_results` gives them) and returns a matplotlib ``Figure``.

Figures are made without pyplot (no global state, no display needed) and drawn with the Agg
backend; :func:`png_bytes` renders one to PNG. Every figure function is built through
:func:`drawn_literally`, so that each name from the data is drawn as it is.
"""
from __future__ import annotations

import functools
import math
import re

import numpy as np

# Okabe-Ito (distinguishable with the common colour-vision deficiencies), its pale yellow replaced
# by a dark wine that shows on white
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#882255"]
SELECTED, OTHER, OVERALL = "#D55E00", "#A8A8A8", "#555555"
#: The lineage effects of a Manhattan plot (hits whose ``effect`` is "lineage")
LINEAGE = PALETTE[3]
METRIC_NAMES = {"accuracy": "Accuracy", "balanced_accuracy": "Balanced accuracy",
                "f1_macro": "Macro F1", "roc_auc": "ROC AUC"}
_STYLE = {
    "font.size": 9.5, "axes.titlesize": 10.5, "axes.labelsize": 9.5, "legend.fontsize": 8.5,
    "xtick.labelsize": 8.5, "ytick.labelsize": 8.5, "axes.spines.top": False,
    "axes.spines.right": False, "axes.titleweight": "bold", "figure.dpi": 100,
}


def _matplotlib():
    """matplotlib, or an error that says how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "Report figures need matplotlib, which is not installed. Install it with "
            "`pip install 'genosift[report]'` (or pip install matplotlib)."
        ) from None
    return matplotlib


def new_figure(width, height, *, mosaic=None, **subplot_options):
    """A Figure on an Agg canvas, with the report style, and its axes (a dict by name with a
    ``mosaic`` layout)."""
    matplotlib = _matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplot_mosaic(mosaic, **subplot_options) if mosaic else fig.subplots(**subplot_options)
    return fig, axes


# texts are built as plain text, never TeX nor mathtext, whatever the user's matplotlib settings
_BUILD = {"text.usetex": False, "text.parse_math": False}
_RENDER = {"text.usetex": False, "text.parse_math": True}  # number ticks (10^k on a log axis) are mathtext


def drawn_literally(build):
    """Decorator of every figure function: each text of the figure it returns is drawn as it is.

    Names from the data (features, genes, references, classes, metrics, model options) reach
    titles, axis labels, legends, annotations and tick labels; matplotlib would read ``$x_1$``
    in them as math (garbled, or an error for ``$_$``) and, with ``text.usetex``, everything as
    TeX. The figure is built with TeX and mathtext off, so every text is literal; only the tick
    labels keep mathtext, for the numbers of log axes, and those that name data are escaped
    (:func:`literal`). Control characters in a name are shown as escapes (:func:`one_line`)."""

    @functools.wraps(build)
    def draw(*args, **kwargs):
        with _matplotlib().rc_context(_BUILD):
            fig = build(*args, **kwargs)
        _literal_texts(fig)
        return fig

    return draw


def _literal_texts(fig):
    """Every text of ``fig`` literal: mathtext off but in tick labels, those naming data escaped."""
    from matplotlib.category import StrCategoryFormatter
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    ticks = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for get, put in ((axis.get_major_formatter, axis.set_major_formatter),
                             (axis.get_minor_formatter, axis.set_minor_formatter)):
                names = get()  # labels given by name (set_ticks(..., labels)) or categories, not numbers
                done = isinstance(names, FuncFormatter) and getattr(names.func, "func", None) is _escaped
                if isinstance(names, (FixedFormatter, FuncFormatter, StrCategoryFormatter)) and not done:
                    put(FuncFormatter(functools.partial(_escaped, names)))
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks.update((tick.label1, tick.label2))
            ticks.add(axis.get_offset_text())
    for text in fig.findobj(Text):
        text.set_parse_math(text in ticks)
        if text not in ticks:
            text.set_text(one_line(text.get_text()))


def _escaped(names, x, pos=None):
    """The tick label of ``names`` at ``x``, escaped to be drawn as it is (:func:`literal`)."""
    return literal(one_line(names(x, pos)))


_UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text):
    """``text`` with its control characters and line separators written as escapes (``\\t``,
    ``\\n``, ``\\x1b``, ``\\u2028``): one line of plain text, in a figure (where a font has no
    glyph for them) and in a line-based file (phandango's, with neither quoting nor escapes).

    >>> print(one_line("a\\tb\\nc\\x1b[2J"))
    a\\tb\\nc\\x1b[2J
    """
    text = str(text)
    return _UNSEEN.sub(lambda m: repr(m.group())[1:-1], text) if _UNSEEN.search(text) else text


def png_bytes(fig, *, dpi=110):
    """The figure as PNG bytes, its number ticks in mathtext and no text through TeX.

    >>> import pandas as pd
    >>> curve = pd.DataFrame({"k": [1, 10, 100], "accuracy_mean": [0.7, 0.9, 0.85], "accuracy_std": [0.1, 0.05, 0.05]})
    >>> png_bytes(cv_curve(curve, best_k=10))[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    import io

    buffer = io.BytesIO()
    with _matplotlib().rc_context(_RENDER):
        fig.savefig(buffer, format="png", dpi=dpi, facecolor="white")
    return buffer.getvalue()


def literal(text):
    """``text`` from the data (a feature name, a class label) escaped for a text that matplotlib
    reads as mathtext (a tick label: :func:`drawn_literally` escapes those that name data).

    matplotlib reads a text with two ``$`` as mathtext (``$x_1$``), which garbles names and
    raises on invalid ones (``$_$``). A ``$`` written ``\\$`` is drawn as ``$`` and never starts
    mathtext, and text without an unescaped pair of ``$`` is drawn as it is otherwise.

    >>> print(literal("$_$"), literal("a_b^c"))
    \\$_\\$ a_b^c
    """
    return str(text).replace("$", "\\$")


def short(name, width=28):
    """``name`` cut to ``width`` characters by an ellipsis in the middle (ids often differ at
    their end). Drawn as it is: the figure functions make every text literal (:func:`drawn_literally`).

    >>> short("GCA_000794085_CDS_6294", 16)
    'GCA_000\u2026CDS_6294'
    """
    name = str(name)
    if len(name) > width:
        head = (width - 1) // 2
        name = name[:head] + "\u2026" + name[len(name) - (width - 1 - head):]
    return name


def class_colours(classes):
    """One colour per class: Okabe-Ito, then tab20 beyond eight classes."""
    if len(classes) <= len(PALETTE):
        return dict(zip(classes, PALETTE))
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    return {c: cmap(i % 20) for i, c in enumerate(classes)}


def minus_log10(p):
    """-log10 of the p-values (or q-values) ``p``, finite where p = 0: one decade above the
    smallest positive p of ``p`` (above the smallest positive float64, 4.9e-324, when none is
    positive: at most 324.3). A p of 0 is one too small for a float, not a certainty: the
    figures draw it at that cap, as phandango's file writes it. NaN stays NaN.

    >>> minus_log10([1e-5, 0.0, 1.0, float("nan")]).tolist()
    [5.0, 6.0, -0.0, nan]
    """
    p = np.array(p, dtype=np.float64, ndmin=1)
    positive = p[p > 0]
    least = positive.min() if positive.size else np.nextafter(0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = -np.log10(p)
    y[p <= 0] = 1.0 - np.log10(least)
    return y


@drawn_literally
def score_distribution(scores, *, best_k):
    """Histogram of every feature's score, the selected ones in colour, the cut-off at ``best_k``.

    The score axis is logarithmic when the scores are positive and span three or more decades,
    the count axis when the tail of selected features would otherwise be too short to see.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"score": [5.0, 3.0, 1.0, 0.5], "rank": [1, 2, 3, 4],
    ...                       "selected": [True, True, False, False]})
    >>> fig = score_distribution(frame, best_k=2)
    >>> fig.axes[0].get_xlabel()
    'score'
    """
    score = np.asarray(scores["score"], dtype=np.float64)
    selected = np.asarray(scores["selected"], dtype=bool)
    finite = np.isfinite(score)
    fig, ax = new_figure(8.0, 4.2)
    if not finite.any():
        ax.text(0.5, 0.5, "no finite scores", ha="center", va="center", transform=ax.transAxes)
        return fig
    values = score[finite]
    lo, hi = values.min(), values.max()
    log_x = lo > 0 and hi / np.median(values) >= 50  # a long right tail squeezed against zero
    if log_x:
        edges = np.geomspace(lo, hi, 61)
        ax.set_xscale("log")
    else:
        edges = np.linspace(lo, hi if hi > lo else lo + 1, 61)
    ax.hist([score[finite & ~selected], score[finite & selected]], bins=edges, stacked=True,
            color=[OTHER, SELECTED], label=["not selected", f"selected (top {best_k})"])
    counts, _ = np.histogram(values, bins=edges)
    if counts.max() >= 50 * max(1, np.count_nonzero(selected & finite) / 10):
        ax.set_yscale("log")
    order = np.argsort(np.asarray(scores["rank"], dtype=np.float64), kind="stable")
    if 0 < best_k <= len(order) and np.isfinite(score[order[best_k - 1]]):
        cut = score[order[best_k - 1]]
        ax.axvline(cut, color="black", linestyle="--", linewidth=1.2,
                   label=f"cut-off at k = {best_k} (score {cut:.4g})")
    n_nan = int((~finite).sum())
    ax.set_xlabel("score" + (" (log scale)" if log_x else ""))
    ax.set_ylabel("features" + (" (log scale)" if ax.get_yscale() == "log" else ""))
    without = f" ({n_nan:,} without a score)" if n_nan else ""
    ax.set_title(f"Score distribution of {finite.sum():,} features{without}")
    ax.legend(frameon=False)
    return fig


@drawn_literally
def volcano(scores, *, alpha=0.05, n_labels=6, effect="statistic", effect_label="effect size (statistic)"):
    """Effect size (the column ``effect``: a signed method's ``statistic``, else the difference of
    the class means) against -log10 q, selected features in colour.

    q-values of 0 are drawn at the top of the axis as triangles. The ``n_labels`` most
    significant selected features are named.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"feature": ["a", "b", "c"], "statistic": [4.0, -0.2, 0.1],
    ...                       "qvalue": [1e-6, 0.8, 0.5], "selected": [True, False, False]})
    >>> volcano(frame).axes[0].get_ylabel()
    '-log10 q'
    """
    stat = np.asarray(scores[effect], dtype=np.float64)
    q = np.asarray(scores["qvalue"], dtype=np.float64)
    selected = np.asarray(scores["selected"], dtype=bool)
    ok = np.isfinite(stat) & np.isfinite(q)
    capped = ok & (q <= 0)
    y = minus_log10(np.where(ok, np.minimum(q, 1.0), np.nan))
    fig, ax = new_figure(8.0, 5.0)
    for mask, colour, label, size in ((ok & ~selected, OTHER, "not selected", 8),
                                      (ok & selected, SELECTED, "selected", 18)):
        plain, top = mask & ~capped, mask & capped
        ax.scatter(stat[plain], y[plain], s=size, c=colour, alpha=0.7, linewidths=0,
                   label=f"{label} ({mask.sum():,})", rasterized=True)
        if top.any():
            ax.scatter(stat[top], y[top], s=size * 1.5, c=colour, marker="^", linewidths=0)
    ax.axhline(-np.log10(alpha), color="black", linestyle="--", linewidth=1, label=f"q = {alpha:g}")
    best = np.flatnonzero(ok & selected)
    best = best[np.argsort(q[best], kind="stable")][:n_labels]
    _label_points(ax, stat[best], y[best], [short(scores["feature"].iloc[j], 22) for j in best])
    ax.set_xlabel(effect_label)
    ax.set_ylabel("-log10 q")
    note = f"; {capped.sum()} with q = 0 drawn as triangles" if capped.any() else ""
    ax.set_title(f"Volcano plot of {ok.sum():,} features{note}")
    ax.legend(frameon=False, loc="upper left", markerscale=1.5)
    return fig


@drawn_literally
def qq_plot(pvalues, *, threshold=None, inflation=None, over="features", threshold_label=None, analysis=None,
            keep_top=2000, max_points=20_000):
    """Observed against expected -log10 p of the features tested (NaN p-values left out), or of
    what ``over`` names (``"distinct patterns"``: one p-value each), with the 95 % band of each
    order statistic under no association (a Beta distribution's quantiles), the genomic
    inflation factor ``inflation`` of those p-values in the title, a genome-wide ``threshold``
    as a line (``threshold_label`` in the legend; default its value) and the ``analysis`` the
    p-values come from above the plot.

    All ``keep_top`` smallest p-values are drawn, and ``max_points`` of the others on a log scale
    of their ranks (millions of k-mers draw as fast as thousands); p-values of 0 are drawn at the
    top of the axis as triangles.

    >>> import numpy as np
    >>> fig = qq_plot(np.linspace(0.001, 1, 1000), threshold=5e-5, inflation=1.0)
    >>> fig.axes[0].get_xlabel()
    'expected -log10 p'
    """
    from scipy.special import betaincinv

    p = np.sort(np.asarray(pvalues, dtype=np.float64)[~np.isnan(pvalues)])
    m = p.size
    if not m:
        raise ValueError("No p-value to draw: the table holds no feature tested.")
    ranks = np.unique(np.r_[np.arange(1, min(m, keep_top) + 1),
                            np.round(np.geomspace(1, m, max_points)).astype(np.int64)])
    capped = p[ranks - 1] <= 0
    y = minus_log10(p)[ranks - 1]
    expected = -np.log10((ranks - 0.5) / m)
    low, high = (-np.log10(betaincinv(ranks, m - ranks + 1, q)) for q in (0.975, 0.025))
    fig, ax = new_figure(5.5, 5.0)
    ax.fill_between(expected, low, high, color=OTHER, alpha=0.35, linewidth=0, label="95 % band without association")
    top = float(max(expected.max(), y.max()))
    ax.plot([0, expected.max()], [0, expected.max()], color=OVERALL, linewidth=1)
    ax.scatter(expected[~capped], y[~capped], s=8, c=PALETTE[0], linewidths=0, rasterized=True,
               label=f"{m:,} {over} tested")
    if capped.any():
        ax.scatter(expected[capped], y[capped], s=14, c=PALETTE[0], marker="^", linewidths=0)
    if threshold is not None and threshold > 0:
        ax.axhline(-np.log10(threshold), color=SELECTED, linestyle="--", linewidth=1,
                   label=threshold_label or f"threshold p = {threshold:.3g}")
        top = max(top, -np.log10(threshold))
    ax.set_ylim(0, top * 1.05 + 0.1)
    ax.set_xlabel("expected -log10 p")
    ax.set_ylabel("observed -log10 p")
    over_what = over.split()[-1]  # "patterns", "features"
    ax.set_title("QQ plot" + ("" if inflation is None else f" (lambda = {inflation:.3f} over the {over_what})"))
    if analysis:
        fig.suptitle(analysis, fontsize="medium")
    ax.legend(frameon=False, loc="upper left")
    return fig


@drawn_literally
def scree_plot(shares, *, chosen=None, metric=None):
    """The scree of the principal coordinates: each one's share of the variance (``shares``, in
    order), the ``chosen`` first ones (adjusted for) marked, the others grey.

    >>> fig = scree_plot([0.35, 0.32, 0.3, 0.07, 0.05], chosen=3)
    >>> fig.axes[0].get_ylabel()
    'share of the variance (%)'
    """
    values = 100.0 * np.asarray(shares, dtype=np.float64)
    if not values.size:
        raise ValueError("No principal coordinate to draw.")
    k = np.arange(1, values.size + 1)
    fig, ax = new_figure(6.0, 4.0)
    kept = k <= (chosen or 0)
    ax.bar(k[kept], values[kept], color=SELECTED, label=f"the {int(chosen)} adjusted for" if chosen else None)
    ax.bar(k[~kept], values[~kept], color=OTHER)
    ax.plot(k, values, color=OVERALL, linewidth=1, marker="o", markersize=3)
    ax.set_xlabel("principal coordinate" + (f" ({metric})" if metric else ""))
    ax.set_ylabel("share of the variance (%)")
    ax.set_title("Scree of the population structure")
    if chosen:
        ax.legend(frameon=False, loc="upper right")
    return fig


def hits_on(hits, reference=None):
    """``(reference, occurrences)``: the occurrences with a p-value of a ``genosift annotate``
    hits table on ``reference`` (default: the reference with most), each once (the table has a
    row per occurrence and gene); a clear error when there are none."""
    located = hits[hits["reference"].notna() & hits["pvalue"].notna()]
    if located.empty:
        raise ValueError("No hit with a p-value: the hits table holds no k-mer found in a reference.")
    if reference is None:
        reference = located["reference"].value_counts(sort=True).index[0]
    on = located[located["reference"] == reference].drop_duplicates(["feature", "contig", "start", "strand"])
    if on.empty:
        names = sorted(located["reference"].unique().tolist())
        raise ValueError(f"No hit on the reference {reference!r}: the hits are on {names[:10]}.")
    return reference, on


@drawn_literally
def manhattan_plot(hits, *, threshold=None, reference=None, n_labels=5, threshold_label=None, analysis=None):
    """-log10 p of each occurrence of the k-mers along a reference's coordinates (a ``genosift
    annotate`` hits table: ``feature, reference, contig, start, strand, pvalue``, and ``gene`` to
    label the best hits; ``hits_on``), contigs one after the other in their order in the table,
    in alternating colours; a genome-wide ``threshold`` as a line (``threshold_label`` in the
    legend; default its value) and the ``analysis`` the p-values come from above the plot. With
    an ``effect`` column (a ranking of ``score --lineage``, whose columns the hits keep), the
    lineage effects are drawn in their own colour, over the locus effects.

    >>> import pandas as pd
    >>> hits = pd.DataFrame({"feature": ["A" * 9, "C" * 9, "G" * 9], "reference": "ref", "contig": ["chr"] * 3,
    ...                      "start": [10, 500, 900], "end": [18, 508, 908], "strand": "+",
    ...                      "pvalue": [0.5, 1e-6, 0.01], "gene": [None, "abcD", None]})
    >>> fig = manhattan_plot(hits, threshold=1e-4)
    >>> fig.axes[0].get_ylabel()
    '-log10 p'
    """
    reference, on = hits_on(hits, reference)
    contigs = list(dict.fromkeys(on["contig"]))
    spans = on.groupby("contig", sort=False)["end"].max().reindex(contigs).to_numpy(dtype=np.int64)
    offsets = dict(zip(contigs, np.r_[0, np.cumsum(spans)[:-1]]))
    x = on["start"].to_numpy(dtype=np.int64) + on["contig"].map(offsets).to_numpy(dtype=np.int64)
    p = on["pvalue"].to_numpy(dtype=np.float64)
    y = minus_log10(p)
    colour = np.array([PALETTE[0], OTHER])[on["contig"].map({c: i % 2 for i, c in enumerate(contigs)}).to_numpy()]
    lineage = ((on["effect_kind"].to_numpy(dtype=object) == "lineage") if "effect_kind" in on.columns
               else np.zeros(len(on), bool))
    fig, ax = new_figure(8.0, 3.8)
    ax.scatter(x[~lineage], y[~lineage], s=9, c=colour[~lineage], linewidths=0, rasterized=True)
    if lineage.any():
        kmers = on["feature"][lineage].nunique()
        ax.scatter(x[lineage], y[lineage], s=11, c=LINEAGE, linewidths=0, rasterized=True,
                   label=f"lineage effects ({kmers:,} k-mer{'s' if kmers > 1 else ''}; the others locus effects)")
    top = float(y.max())
    if threshold is not None and threshold > 0:
        ax.axhline(-np.log10(threshold), color=SELECTED, linestyle="--", linewidth=1,
                   label=threshold_label or f"threshold p = {threshold:.3g}")
        top = max(top, -np.log10(threshold))
    if lineage.any() or threshold is not None and threshold > 0:
        ax.legend(frameon=False, loc="upper right")
    if "gene" in on.columns and n_labels:
        named = on.assign(_x=x, _y=y)[on["gene"].notna()].sort_values("_y", ascending=False, kind="stable")
        named = named.drop_duplicates("gene").head(n_labels)
        _label_points(ax, named["_x"].to_numpy(), named["_y"].to_numpy(), [short(g) for g in named["gene"]])
    ax.set_ylim(0, top * 1.08 + 0.1)
    ax.set_xlim(0, max(int(spans.sum()), 1))
    ax.set_xlabel(f"position on {short(reference, 40)} (bp" + (", contigs in turn)" if len(contigs) > 1 else ")"))
    ax.set_ylabel("-log10 p")
    ax.set_title(f"Manhattan plot: {len(on):,} hits of {on['feature'].nunique():,} k-mers")
    if analysis:
        fig.suptitle(analysis, fontsize="medium")
    return fig


def _label_points(ax, x, y, labels, gap=11.0):
    """Name points, the labels pushed apart vertically (in pixels) where they would overlap,
    with a thin line back to the point when moved."""
    if not len(labels):
        return
    ax.figure.canvas.draw()  # settle the limits so data and pixel positions agree
    to_px, from_px = ax.transData, ax.transData.inverted()
    px = to_px.transform(np.column_stack([x, y]))
    right_edge = ax.bbox.x0 + 0.75 * ax.bbox.width
    placed = []
    for i in np.argsort(-px[:, 1], kind="stable"):
        left = px[i, 0] > right_edge  # near the right edge: label on the left of the point
        tx, ty = px[i, 0] + (-6 if left else 6), px[i, 1] + 4
        for ox, oy, side in placed:  # labels are about 110 px wide
            if side == left and abs(ox - tx) < 110 and abs(oy - ty) < gap:
                ty = oy - gap
        placed.append((tx, ty, left))
        moved = abs(ty - px[i, 1] - 4) > 1
        ax.annotate(labels[i], (x[i], y[i]), xytext=from_px.transform((tx, ty)), textcoords="data",
                    fontsize=7.5, color="#333333", va="center", ha="right" if left else "left",
                    arrowprops={"arrowstyle": "-", "color": "#999999", "linewidth": 0.6} if moved else None)


def _density_grid(values, groups, n_points=200):
    """Gaussian kernel densities of ``values`` overall and per group, one shared bandwidth.

    Returns ``(grid, overall, {group: density})``; the bandwidth is Silverman's rule on all
    values, so the class curves are smoothed alike and comparable with the overall one.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    spread = values.std()
    iqr = np.subtract(*np.percentile(values, [75, 25])) / 1.34
    scale = min(spread, iqr) if iqr > 0 else spread
    h = 0.9 * scale * n ** -0.2 if scale > 0 else max(abs(values.mean()) * 0.1, 1.0)
    grid = np.linspace(values.min() - 3 * h, values.max() + 3 * h, n_points)

    def density(v):
        z = (grid[:, None] - v[None, :]) / h
        return np.exp(-0.5 * z * z).sum(axis=1) / (v.size * h * math.sqrt(2 * math.pi))

    return grid, density(values), {g: density(v) for g, v in groups.items() if v.size}


def _draw_distribution(ax, values, labels, classes, colours):
    """p(x) and p(x | class) of one feature on ``ax``: mass per value for a few distinct integer
    values, otherwise kernel densities (of log(1 + x) for long-tailed counts)."""
    ok = np.isfinite(values)
    values, labels = values[ok], labels[ok]
    if values.size == 0:
        ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        return ""
    integer = bool(np.all(values == np.round(values)))
    distinct = np.unique(values)
    if set(distinct.tolist()) <= {0.0, 1.0}:  # presence/absence: the share carrying it, overall and per class
        shares = [values.mean()] + [values[labels == c].mean() if (labels == c).any() else np.nan for c in classes]
        ax.bar(range(len(shares)), shares, color=[OVERALL] + [colours[c] for c in classes], width=0.7,
               alpha=0.85, linewidth=0)
        ax.set_xticks(range(len(shares)), ["all"] + [short(c, 10) for c in classes])
        ax.set_ylim(0, 1)
        return "share carrying it (x = 1)"
    if integer and distinct.size <= 20:
        width = 0.8 * (np.diff(distinct).min() if distinct.size > 1 else 1.0)
        overall = np.array([(values == v).mean() for v in distinct])
        ax.bar(distinct, overall, width=width, color=OVERALL, alpha=0.25, linewidth=0)
        for c in classes:
            v = values[labels == c]
            if v.size:
                ax.plot(distinct, [(v == d).mean() for d in distinct], "o-", color=colours[c],
                        markersize=3.5, linewidth=1.3)
        if distinct.size <= 10:
            ax.set_xticks(distinct)
        return "value (count)" if distinct.min() >= 0 else "value"
    log_counts = integer and values.min() >= 0 and values.max() > 50
    x = np.log1p(values) if log_counts else values
    grid, overall, per_class = _density_grid(x, {c: x[labels == c] for c in classes})
    ax.fill_between(grid, overall, color=OVERALL, alpha=0.2, linewidth=0)
    ax.plot(grid, overall, color=OVERALL, linestyle="--", linewidth=1.2)
    for c, d in per_class.items():
        ax.plot(grid, d, color=colours[c], linewidth=1.5)
    ax.set_ylim(bottom=0)
    return "log(1 + count)" if log_counts else "value"


@drawn_literally
def class_distributions(top_values, *, classes=None, max_features=12, columns=4):
    """p(x) against p(x | class) for the best features (the columns of ``top_values``, in rank
    order): the overall distribution shaded grey, one line per class.

    Presence/absence features (0 and 1 only) are drawn as bars of the share of samples carrying
    them, overall and per class; other integer features with at most 20 distinct values as the
    share of samples at each value; other features as Gaussian kernel densities with one
    bandwidth per feature (long-tailed counts on a log(1 + x) scale).

    >>> import pandas as pd
    >>> top = pd.DataFrame({"sample": ["s1", "s2", "s3", "s4"], "label": ["a", "a", "b", "b"],
    ...                     "g1": [0.1, 0.3, 2.0, 2.4], "g2": [0, 1, 1, 1]})
    >>> [ax.get_title() for ax in class_distributions(top).axes if ax.get_title()]
    ['1. g1', '2. g2']
    """
    features = [c for c in top_values.columns if c not in ("sample", "label")][:max_features]
    labels = top_values["label"].astype(str).to_numpy()
    classes = [str(c) for c in (classes if classes is not None else sorted(set(labels)))]
    colours = class_colours(classes)
    columns = max(1, min(columns, len(features)))
    rows = max(1, math.ceil(len(features) / columns))
    fig, axes = new_figure(2.55 * columns + 0.6, 2.25 * rows + 0.7, nrows=rows, ncols=columns,
                            squeeze=False)
    for ax, name in zip(axes.flat, features):
        values = np.asarray(top_values[name], dtype=np.float64)
        xlabel = _draw_distribution(ax, values, labels, classes, colours)
        ax.set_title(f"{features.index(name) + 1}. {short(name, 26)}", fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.tick_params(labelsize=7.5)
        if not xlabel.startswith("share"):  # densities: their height has no unit to read
            ax.set_yticks([])
            ax.spines["left"].set_visible(False)
    for ax in axes.flat[len(features):]:
        ax.set_axis_off()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    counts = {c: int((labels == c).sum()) for c in classes}
    handles = [Patch(color=OVERALL, alpha=0.3, label=f"p(x), all {labels.size} samples")]
    handles += [Line2D([], [], color=colours[c], linewidth=1.8, label=f"p(x | {short(c, 20)}), n = {counts[c]}")
                for c in classes]
    columns = len(handles) if len(handles) <= 5 else math.ceil(len(handles) / 2)
    fig.legend(handles=handles, loc="outside upper center", ncols=columns, frameon=False)
    return fig


def is_log_spaced(ks):
    """Whether the ks span a decade or more (drawn on a log axis)."""
    ks = np.asarray(ks, dtype=np.float64)
    return ks.size > 1 and ks.min() > 0 and ks.max() / ks.min() >= 10


@drawn_literally
def cv_curve(curve, *, best_k, metric=None, n_classes=None):
    """Each metric against k, mean with a band of +/- one standard deviation across the folds
    (no band when the ``_std`` columns are empty: a single validation split).

    One panel per metric with values (``<m>_mean`` and ``<m>_std`` columns); the best k is
    marked, and the panel of ``metric`` (the one that chose it) says so. k is on a log axis
    when it spans a decade or more. With ``n_classes``, chance levels are drawn for balanced
    accuracy (1 / n_classes) and ROC AUC (0.5).

    >>> import pandas as pd
    >>> curve = pd.DataFrame({"k": [1, 10, 100], "accuracy_mean": [0.7, 0.9, 0.85], "accuracy_std": [0.1, 0.05, 0.05]})
    >>> cv_curve(curve, best_k=10).axes[0].get_xscale()
    'log'
    """
    curve = curve.sort_values("k")
    ks = curve["k"].to_numpy(dtype=np.float64)
    names = [c[: -len("_mean")] for c in curve.columns if c.endswith("_mean")]
    names = [m for m in names if np.isfinite(curve[f"{m}_mean"].to_numpy(dtype=np.float64)).any()] or names[:1]
    columns = 2 if len(names) in (2, 4) else min(len(names), 3)
    rows = math.ceil(len(names) / columns)
    width = 4.6 if columns <= 2 else 3.9
    fig, axes = new_figure(width * columns + 0.4, 3.2 * rows + 0.3, nrows=rows, ncols=columns, squeeze=False)
    log_x = is_log_spaced(ks)
    chance = {"balanced_accuracy": 1 / n_classes if n_classes else None, "roc_auc": 0.5 if n_classes else None}
    for i, (ax, m) in enumerate(zip(axes.flat, names)):
        colour = PALETTE[i % len(PALETTE)]
        mean = curve[f"{m}_mean"].to_numpy(dtype=np.float64)
        std = curve[f"{m}_std"].to_numpy(dtype=np.float64) if f"{m}_std" in curve else np.full_like(mean, np.nan)
        spread = np.isfinite(std).any()  # none with a single validation split
        std = np.nan_to_num(std)
        if spread:
            ax.fill_between(ks, mean - std, mean + std, color=colour, alpha=0.18, linewidth=0, label="\u00b1 1 s.d.")
        ax.plot(ks, mean, "o-", color=colour, markersize=3.5, linewidth=1.6,
                label="mean over folds" if spread else "validation")
        if chance.get(m) is not None:
            ax.axhline(chance[m], color="#888888", linestyle=":", linewidth=1, label="chance")
        at = np.flatnonzero(ks == best_k)
        if at.size:
            j = at[0]
            ax.axvline(best_k, color="black", linestyle="--", linewidth=1)
            ax.plot([best_k], [mean[j]], marker="*", markersize=12, color="black", linestyle="none",
                    label=f"k = {best_k}: {mean[j]:.3f}" + (f" \u00b1 {std[j]:.3f}" if spread else ""))
        ax.set_title(METRIC_NAMES.get(m, m) + (" (chooses k)" if m == metric else ""))
        finite = np.isfinite(mean)
        low = np.nanmin((mean - std)[finite]) if finite.any() else 0.0
        ax.set_ylim(max(0.0, min(low, chance.get(m) or 1.0) - 0.05), 1.02)
        ax.legend(frameon=False, loc="best", fontsize=7.5)
        ax.set_xlabel("k, features selected" + (" (log scale)" if log_x else ""))
        ax.grid(axis="y", color="#e5e5e5", linewidth=0.8)
        if log_x:
            ax.set_xscale("log")
        if ks.size <= 12:
            from matplotlib.ticker import NullFormatter, NullLocator

            ax.set_xticks(ks, [f"{int(k):,}" for k in ks])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_minor_formatter(NullFormatter())
    for ax in axes.flat[len(names):]:
        ax.set_axis_off()
    return fig


@drawn_literally
def selection_stability(stability, *, selected=(), max_features=30):
    """How many features were chosen by each fraction of the CV folds (left), and the fraction
    for the most frequent features (right, in colour those of the final model's selection).

    >>> import pandas as pd
    >>> stab = pd.DataFrame({"feature": ["a", "b", "c"], "frequency": [1.0, 0.6, 0.2]})
    >>> len(selection_stability(stab, selected=["a"]).axes[1].patches)
    3
    """
    frequency = stability["frequency"].to_numpy(dtype=np.float64)
    top = stability.sort_values("frequency", ascending=False, kind="stable").head(max_features)
    n = len(top)
    chosen = set(map(str, selected))
    height = max(3.2, 0.24 * n + 1.5)
    fig, axes = new_figure(9.0, height, mosaic=[["levels", "top"], [".", "top"]], width_ratios=[1, 2.4],
                            height_ratios=[3.0, max(height - 3.0, 0.01)])
    left, ax = axes["levels"], axes["top"]
    levels, how_many = np.unique(np.round(frequency, 6), return_counts=True)
    width = 0.8 * (np.diff(levels).min() if levels.size > 1 else 0.2)
    left.bar(levels, how_many, width=width, color=PALETTE[0])
    for level, count in zip(levels, how_many):
        left.annotate(f"{count:,}", (level, count), xytext=(0, 2), textcoords="offset points", ha="center",
                      fontsize=7.5)
    left.set_xlim(0, 1.05)
    if levels.size <= 10:
        left.set_xticks(levels, [f"{v:.2g}" for v in levels])
    left.set_xlabel("fraction of CV folds")
    left.set_ylabel("features")
    left.set_title("Features by selection frequency")
    in_final = np.array([str(f) in chosen for f in top["feature"]], dtype=bool)
    positions = np.arange(n)[::-1]
    ax.barh(positions, top["frequency"].to_numpy(dtype=np.float64), height=0.72,
            color=np.where(in_final, PALETTE[0], OTHER))
    ax.set_yticks(positions, [short(f, 34) for f in top["feature"]], fontsize=8 if n > 15 else 8.5)
    ax.set_xlim(0, 1.0)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlabel("fraction of CV folds whose top k contains the feature")
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.8)
    ax.set_axisbelow(True)
    from matplotlib.patches import Patch

    fig.legend(handles=[Patch(color=PALETTE[0], label="in the final model"),
                        Patch(color=OTHER, label="not in the final model")],
               frameon=False, loc="outside lower right", ncols=2, fontsize=8)
    shown = f"The {n} most frequent of {len(stability):,}" if len(stability) > n else f"All {n}"
    ax.set_title(f"{shown} features ever selected")
    return fig


@drawn_literally
def roc_curve(predictions, classes):
    """The ROC curve of the out-of-fold probabilities of ``classes[1]`` (two classes), its area
    in the legend, the diagonal of chance.

    >>> import pandas as pd
    >>> oof = pd.DataFrame({"true": ["a", "a", "b", "b"], "proba_b": [0.1, 0.6, 0.4, 0.9]})
    >>> roc_curve(oof, ["a", "b"]).axes[0].get_legend().get_texts()[0].get_text()
    'AUC 0.750 (2 b, 2 a)'
    """
    from sklearn.metrics import roc_auc_score
    from sklearn.metrics import roc_curve as curve

    known = predictions["true"].notna().to_numpy()
    truth = predictions["true"].astype(str).to_numpy()[known] == str(classes[1])
    proba = np.asarray(predictions[f"proba_{classes[1]}"], dtype=np.float64)[known]
    fpr, tpr, _ = curve(truth, proba)
    fig, ax = new_figure(5.2, 4.6)
    ax.plot(fpr, tpr, color=PALETTE[0], linewidth=1.8, drawstyle="steps-post",
            label=f"AUC {roc_auc_score(truth, proba):.3f} ({truth.sum()} {short(classes[1], 16)}, "
                  f"{(~truth).sum()} {short(classes[0], 16)})")
    ax.plot([0, 1], [0, 1], color="#888888", linestyle=":", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_aspect("equal")
    ax.set_xlabel(f"false positive rate (1 \u2212 specificity; {short(classes[0], 16)} called {short(classes[1], 16)})")
    ax.set_ylabel("true positive rate (sensitivity)")
    ax.legend(frameon=False, loc="lower right")
    return fig


@drawn_literally
def confusion_matrix(confusion):
    """The out-of-fold confusion matrix: counts, and each row divided by its total (the recall
    of the class), side by side.

    >>> import pandas as pd
    >>> conf = pd.DataFrame({"true": ["a", "b"], "a": [9, 2], "b": [1, 8]})
    >>> [ax.get_title() for ax in confusion_matrix(conf).axes]
    ['Counts', 'Share of each true class']
    """
    classes = [str(c) for c in confusion["true"]]
    predicted = [str(c) for c in confusion.columns if c != "true"]
    counts = confusion[[c for c in confusion.columns if c != "true"]].to_numpy(dtype=np.float64)
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    n = max(len(classes), len(predicted))
    cell = 0.62 if n <= 6 else max(0.3, 4.4 / n)
    side = max(3.0, cell * n + 1.2)
    fig, axes = new_figure(2 * side + 0.6, side + 0.7, ncols=2)
    longest = max(len(c) for c in predicted)
    long_names = longest > 6 or n > 6 and longest > 2
    font = 9 if n <= 6 else max(5.0, 9 - 0.35 * (n - 6))
    for ax, matrix, title, fmt in ((axes[0], counts, "Counts", "{:.0f}"),
                                   (axes[1], shares, "Share of each true class", "{:.0%}")):
        ax.imshow(matrix, cmap="Blues", vmin=0, vmax=max(matrix.max(), 1e-12) if matrix is counts else 1.0)
        top = matrix.max() if matrix is counts else 1.0
        for (i, j), v in np.ndenumerate(matrix):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=font,
                    color="white" if top > 0 and v > 0.55 * top else "#222222")
        ax.set_xticks(range(len(predicted)), [short(c, 16) for c in predicted],
                      rotation=45 if long_names else 0, ha="right" if long_names else "center")
        ax.set_yticks(range(len(classes)), [short(c, 16) for c in classes])
        ax.set_xlabel("predicted class")
        ax.set_ylabel("true class")
        ax.set_title(title)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.tick_params(length=0)
    return fig
