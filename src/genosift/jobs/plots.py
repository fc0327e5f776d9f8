"""The job ``plot``: the figures of a ranking table (``score``'s), as PNG files."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..core.validation import FixUsageError

__all__ = ["Plotted", "plot"]


@dataclass
class Plotted:
    """What ``plot`` did: the files written, the genomic inflation factor, the threshold drawn
    (or None) and the summary the command prints (``lines``)."""

    files: list
    inflation: float
    threshold: object = None
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


def _pvalues(path):
    """The ``pvalue`` column of a ranking table (TSV, CSV or Parquet), read exactly."""
    import pandas as pd

    name = Path(path).name.lower()
    parquet, sep = name.endswith((".parquet", ".pq")), "," if name.endswith(".csv") else "\t"
    if parquet:
        import pyarrow.parquet as pq

        columns = pq.read_schema(path).names
    else:
        columns = list(pd.read_csv(path, sep=sep, nrows=0).columns)
    if "pvalue" not in columns:
        raise ValueError(f"{str(path)!r} has no 'pvalue' column: plot draws the ranking table that genosift score "
                         f"writes (its columns: {columns[:12]}).")
    frame = (pd.read_parquet(path, columns=["pvalue"]) if parquet else  # that column only, read exactly
             pd.read_csv(path, sep=sep, usecols=["pvalue"], keep_default_na=False, na_values=[""],
                         float_precision="round_trip"))
    return frame["pvalue"].to_numpy(dtype=float)


def _threshold(path, alpha):
    """The genome-wide threshold of the run, from the ranking's sidecar (``<table>.json``): the
    p-value its rule selected by, else ``alpha`` over its number of patterns; None without one."""
    sidecar = Path(str(path) + ".json")
    if not sidecar.is_file():
        return None
    record = json.loads(sidecar.read_text(encoding="utf-8"))
    chosen = (record.get("selection") or {}).get("pvalue")
    if chosen is not None:
        return float(chosen)
    n = record.get("n_patterns")
    return alpha / n if n else None


def plot(ranking, *, qq=None, alpha=0.05, force=False):
    """Draw the figures of the ranking table ``ranking`` (``genosift score``'s): ``genosift plot``.

    Parameters
    ----------
    ranking : str or path
        A ranking table (TSV, CSV or Parquet) with its ``pvalue`` column; the sidecar beside it
        (``<ranking>.json``) gives the threshold drawn: the p-value its rule selected by
        (``--threshold``), else ``alpha`` over its number of distinct patterns.
    qq : str or path
        The QQ plot to write (PNG): observed against expected -log10 p of the features tested,
        with its 95 % band, the threshold and the genomic inflation factor.
    alpha : float
        The family-wise level of the threshold drawn when the run selected by none.
    force : bool
        Replace a figure genosift wrote.

    Returns
    -------
    Plotted
    """
    from ..core.files import check_output, write_bytes
    from ..report.figures import png_bytes, qq_plot
    from ..scores import genomic_inflation

    if qq is None:
        raise FixUsageError("plot needs a figure to draw: {qq}.", owner="plot", qq=FixUsageError.ANY)
    if not Path(qq).name.lower().endswith(".png"):
        raise FixUsageError(f"The figure {str(qq)!r} is written as PNG: name it .png in {{qq}}.", owner="plot",
                            qq=FixUsageError.ANY)
    check_output(qq, force=force, inputs=(ranking,))
    p = _pvalues(ranking)
    inflation = genomic_inflation(p)
    threshold = _threshold(ranking, alpha)
    write_bytes(qq, png_bytes(qq_plot(p, threshold=threshold, inflation=inflation)), force=force)
    lines = [f"QQ plot of {int((p == p).sum()):,} p-values: genomic inflation lambda = {inflation:.3f}"
             + ("" if threshold is None else f"; threshold p = {threshold:.3g}"), f"Wrote {qq}"]
    return Plotted([Path(qq)], inflation, threshold, lines)
