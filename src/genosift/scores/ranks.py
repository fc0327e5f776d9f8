"""Rank-based scores, computed on whole columns (blocks of features, all samples)."""
from __future__ import annotations

import numpy as np
from scipy import special
from scipy.stats import rankdata

from ._base import Scores, register


def _centered_ranks(a):
    """Average ranks (ties share their mean rank) along axis 0, minus their mean (n + 1) / 2."""
    return rankdata(a, axis=0) - (a.shape[0] + 1) / 2.0


def _correlation_p(r, n):
    """Two-sided p of a correlation coefficient from Student's t with n - 2 df."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = r * np.sqrt((n - 2) / ((1.0 + r) * (1.0 - r)))
    p = 2.0 * special.stdtr(n - 2, -np.abs(t))
    p[np.abs(r) == 1.0] = 0.0
    return p


@register(
    "spearman", task="regression", streaming="blocks", pvalues=True, signed=True,
    formula="rho = Pearson r of the average ranks of x and y; p from t = rho sqrt((n-2)/(1-rho^2)), n-2 df",
    reference="scipy.stats.spearmanr",
)
def spearman(block, target):
    """Spearman rank correlation with a numeric target (binary labels coded 0/1), two-sided p."""
    n = target.n_samples
    ry = _centered_ranks(target.values)
    rx = _centered_ranks(block)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (ry @ rx) / np.sqrt((rx * rx).sum(axis=0) * (ry @ ry))
    rho = np.clip(rho, -1.0, 1.0)
    p = _correlation_p(rho, n) if n > 2 else np.where(np.isnan(rho), np.nan, 1.0)
    return Scores(rho, p)
