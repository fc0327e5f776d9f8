"""The job ``plot``: the figures of a ranking table (``score``'s), as PNG files."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.validation import FixUsageError

__all__ = ["Plotted", "phandango_text", "plot"]


@dataclass
class Plotted:
    """What ``plot`` did: the files written, the genomic inflation factor ``inflation`` of what
    the QQ plot draws (``over``: the distinct patterns where the ranking has them, else the
    features), that of every feature (``feature_inflation``), the threshold drawn (or None) and
    the summary the command prints (``lines``)."""

    files: list
    inflation: float
    threshold: object = None
    lines: list = field(default_factory=list)
    over: str = "features"
    feature_inflation: float = None

    def __str__(self):
        return "\n".join(self.lines)


def _sidecar(path):
    """The record of the run beside the ranking ``path`` (``<table>.json``), or {} without one."""
    from ..report.association import read_sidecar

    return read_sidecar(path)


def _threshold(path, alpha):
    """The genome-wide threshold of the run, from the ranking's sidecar (``<table>.json``): the
    p-value its rule selected by, else ``alpha`` over its number of patterns; None without one."""
    record = _sidecar(path)
    if not record:
        return None
    chosen = (record.get("selection") or {}).get("pvalue")
    if chosen is not None:
        return float(chosen)
    n = record.get("n_patterns")
    return alpha / n if n else None


def _structure(path):
    """The principal coordinates the run of the ranking ``path`` adjusted for (its sidecar's
    ``structure``), or the error saying how to get them."""
    from ..core.messages import FixError

    structure = _sidecar(path).get("structure")
    if not structure:
        raise FixError(f"The run of {str(path)!r} adjusted for no principal coordinates (its sidecar "
                       f"{Path(str(path) + '.json').name!r} records none): score with {{structure}} to draw their "
                       "scree.",
                       owner="plot", structure=FixError.ANY)
    return structure


def _check_figures(qq, manhattan, phandango, scree, hits):
    """Refuse a plot with no figure asked for, a figure not named .png, and the hits' figures
    without the hits table."""
    if qq is None and manhattan is None and phandango is None and scree is None:
        raise FixUsageError("plot needs a figure to draw: {qq}, {manhattan}, {phandango} or {scree}.", owner="plot",
                            qq=FixUsageError.ANY, manhattan=FixUsageError.ANY, phandango=FixUsageError.ANY,
                            scree=FixUsageError.ANY)
    for figure, option in ((qq, "qq"), (manhattan, "manhattan"), (scree, "scree")):
        if figure is not None and not Path(figure).name.lower().endswith(".png"):
            raise FixUsageError(f"The figure {str(figure)!r} is written as PNG: name it .png in {{{option}}}.",
                                owner="plot", **{option: FixUsageError.ANY})
    if hits is None and (manhattan is not None or phandango is not None):
        raise FixUsageError("{manhattan} and {phandango} draw the hits of genosift annotate: pass them in {hits}.",
                            owner="plot", manhattan=FixUsageError.ANY, phandango=FixUsageError.ANY,
                            hits=FixUsageError.ANY)


def plot(ranking, *, qq=None, manhattan=None, hits=None, phandango=None, reference=None, scree=None, alpha=0.05,
         force=False):
    """Draw the figures of the ranking table ``ranking`` (``genosift score``'s): ``genosift plot``.

    Parameters
    ----------
    ranking : str or path
        A ranking table (TSV, CSV or Parquet) with its ``pvalue`` column; the sidecar beside it
        (``<ranking>.json``) gives the threshold drawn: the p-value its rule selected by
        (``--threshold``), else ``alpha`` over its number of distinct patterns.
    qq : str or path
        The QQ plot to write (PNG): observed against expected -log10 p of the distinct patterns
        tested (one p-value each, where the ranking has its ``pattern`` column; else of the
        features tested), with its 95 % band, the threshold and the genomic inflation factor of
        what it draws (the summary gives both, over the patterns and over the features).
    manhattan : str or path
        The Manhattan plot to write (PNG): -log10 p of each occurrence in ``hits`` along the
        coordinates of ``reference``, the threshold drawn and the best genes named.
    hits : str or path
        The hits table of ``genosift annotate`` (for ``manhattan`` and ``phandango``).
    phandango : str or path
        The occurrences on ``reference`` as phandango's GWAS plot file: ``#CHR, SNP, BP,
        minLOG10(P), log10(p), r^2`` (the k-mer, ``start..end``, -log10 p).
    reference : str, optional
        The reference drawn (its FASTA's name without suffixes); default: the one with most hits.
    scree : str or path
        The scree of the principal coordinates the run adjusted for (``--structure``; PNG): each
        one's share of the variance, those adjusted for marked; with ``--structure auto``, all
        the coordinates its rule looked at.
    alpha : float
        The family-wise level of the threshold drawn when the run selected by none.
    force : bool
        Replace a figure genosift wrote.

    Returns
    -------
    Plotted
    """
    from ..core.files import check_apart, check_output, staged
    from ..report.association import ranking_association
    from ..report.figures import manhattan_plot, png_bytes, qq_plot, scree_plot
    from ..report.outputs import read_hits

    _check_figures(qq, manhattan, phandango, scree, hits)
    named = [(o, f) for o, f in (("qq", qq), ("manhattan", manhattan), ("phandango", phandango), ("scree", scree))
             if f is not None]
    written = [f for _, f in named]
    check_apart(named, [("ranking", ranking), ("ranking", str(ranking) + ".json"), ("hits", hits)], owner="plot")
    for option, figure in named:
        check_output(figure, force=force, owner="plot", option=option)
    structure = None if scree is None else _structure(ranking)
    lines, drawn, threshold, data = [], None, None, {}
    if written != [scree]:
        drawn = ranking_association(ranking)  # its p-values: per distinct pattern where the table has them
        threshold = _threshold(ranking, alpha)
        said = (f"{int(np.isfinite(drawn.pvalues).sum()):,} distinct patterns with a p-value: genomic inflation lambda "
                f"= {drawn.inflation:.3f} over the patterns, {drawn.feature_inflation:.3f} over the features"
                if drawn.over == "distinct patterns" else
                f"{drawn.n_features:,} p-values: genomic inflation lambda = {drawn.inflation:.3f} over the features")
        lines.append(said + ("" if threshold is None else f"; threshold p = {threshold:.3g}"))
    if scree is not None:  # every figure is drawn before any is written: all of them or none
        chosen = len(structure["explained"])
        data[scree] = png_bytes(scree_plot(structure.get("scree", structure["explained"]), chosen=chosen,
                                           metric=structure.get("metric")))
        lines.append(f"{chosen} principal coordinate(s) adjusted for, explaining "
                     f"{sum(structure['explained']):.1%} of the variance")
    if qq is not None:
        data[qq] = png_bytes(qq_plot(drawn.pvalues, threshold=threshold, inflation=drawn.inflation, over=drawn.over))
    if hits is not None:
        table = read_hits(hits)
        if manhattan is not None:
            data[manhattan] = png_bytes(manhattan_plot(table, threshold=threshold, reference=reference))
        if phandango is not None:
            data[phandango] = phandango_text(table, reference).encode("utf-8")
    with staged(*written, force=force) as temps:
        for figure, tmp in zip(written, temps if len(written) > 1 else [temps]):
            tmp.write_bytes(data[figure])
    lines += [f"Wrote {f}" for f in written]
    return Plotted([Path(f) for f in written], None if drawn is None else drawn.inflation, threshold, lines,
                   "features" if drawn is None else drawn.over, None if drawn is None else drawn.feature_inflation)


def phandango_text(hits, reference=None):
    """The occurrences of a hits table on ``reference`` (default: the one with most) as
    phandango's GWAS plot file, one line per k-mer occurrence, p-values exact; a p of 0 is
    written at the figures' cap (:func:`genosift.report.figures.minus_log10`), and a feature
    holding a tab, a line break or another control character with them escaped
    (:func:`genosift.report.figures.one_line`)."""
    import math

    from ..report.figures import hits_on, minus_log10, one_line

    _, on = hits_on(hits, reference)
    lines = ["#CHR\tSNP\tBP\tminLOG10(P)\tlog10(p)\tr^2"]
    for row, capped in zip(on.itertuples(index=False), minus_log10(on["pvalue"]).tolist()):
        minus = -math.log10(row.pvalue) if row.pvalue > 0 else capped
        lines.append(f"26\t{one_line(row.feature)}\t{row.start}..{row.end}\t{minus!r}\t{-minus!r}\t0")
    return "\n".join(lines) + "\n"
