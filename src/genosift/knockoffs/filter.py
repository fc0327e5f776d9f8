"""The knockoff filter: a statistic per feature (or group) against its knockoff, the knockoff+
threshold, and the aggregation of several draws by e-values.

A statistic ``W_j`` is large and positive when feature ``j`` matters more than its knockoff and
its sign is a fair coin for a null feature (swapping a feature with its copy flips the sign).
The *knockoff+* threshold (Barber & Candes 2015) at level ``q`` is the smallest ``t > 0`` among the
``|W_j|`` with ``(1 + #{W_j <= -t}) / max(1, #{W_j >= t}) <= q``; the features with ``W_j >= t``
are selected and the expected share of false ones among them is at most ``q``.

One draw of the knockoffs is random, and so is its selection. *Derandomised* knockoffs (Ren &
Barber 2024) turn each draw's selection at level ``q_draw`` into e-values,
``e_j = p 1{W_j >= t} / (1 + #{W_k <= -t})``, average them over the draws and select by the
e-BH procedure at level ``q``: the ``k`` features of largest mean e-value, ``k`` the largest with
``e_(k) >= p / (q k)``. The FDR stays at most ``q`` under any dependence between draws; with one
draw and ``q_draw = q`` the selection is the knockoff+ one.
"""
from __future__ import annotations

import numpy as np

__all__ = ["e_bh", "knockoff_e_values", "knockoff_threshold"]


def knockoff_threshold(W, fdr, *, offset=1):
    """The knockoff+ threshold (``offset=1``; 0: the plain knockoff filter) of the statistics ``W``
    at level ``fdr``; ``inf`` when no threshold reaches it."""
    W = np.asarray(W, dtype=np.float64)
    candidates = np.unique(np.abs(W[W != 0]))
    if not candidates.size:
        return np.inf
    # counts at each candidate t: positives W >= t and negatives W <= -t
    positives = W[W > 0]
    negatives = -W[W < 0]
    above = positives.size - np.searchsorted(np.sort(positives), candidates, side="left")
    below = negatives.size - np.searchsorted(np.sort(negatives), candidates, side="left")
    ratio = (offset + below) / np.maximum(above, 1)
    ok = np.flatnonzero(ratio <= fdr)
    return float(candidates[ok[0]]) if ok.size else np.inf


def knockoff_e_values(W, fdr):
    """The e-value of each feature from one draw's statistics ``W`` at level ``fdr`` (knockoff+)."""
    W = np.asarray(W, dtype=np.float64)
    t = knockoff_threshold(W, fdr)
    if not np.isfinite(t):
        return np.zeros(W.size)
    return W.size * (W >= t) / (1.0 + (W <= -t).sum())


def e_bh(e, fdr):
    """The e-BH selection (a boolean mask) of the e-values ``e`` at level ``fdr``."""
    e = np.asarray(e, dtype=np.float64)
    m = e.size
    order = np.argsort(-e, kind="stable")
    ranks = np.arange(1, m + 1)
    ok = np.flatnonzero(e[order] >= m / (fdr * ranks))
    selected = np.zeros(m, dtype=bool)
    if ok.size:
        selected[order[:ok[-1] + 1]] = True
    return selected
