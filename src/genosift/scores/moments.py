"""Scores computed from per-class moments or from co-moments with a numeric target.

Conventions shared by every method here: a feature with no spread at all is NaN (ranked last);
zero within-class spread with different class means is +inf (a perfect separator ranks first).
Binary methods compare ``classes[1]`` against ``classes[0]`` (labels in sorted order: 1 vs 0,
1 vs -1, 'b' vs 'a'), so a positive statistic means a higher mean in ``classes[1]``.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from ..core.engine import elementwise
from ..stats import ClassMoments, CoMoments
from ._base import Scores, ratio, register


def _two_classes(stats):
    """``(n0, n1, mean1 - mean0, var0, var1)`` with sample variances (ddof=1)."""
    n0, n1 = stats.count
    diff = stats.mean[1] - stats.mean[0]
    var0 = stats.m2[0] / (n0 - 1)
    var1 = stats.m2[1] / (n1 - 1)
    return n0, n1, diff, var0, var1


@register(
    "fisher", invariance="affine", statistic=ClassMoments, task="classification",
    formula="sum_j n_j (mu_ij - mu_i)^2 / sum_j n_j sigma_ij^2 (population variances)",
    reference="Aggarwal (2014), Data Classification: Algorithms and Applications, p. 44",
)
def fisher(stats):
    """Fisher score: between-class over within-class scatter, any number of classes."""
    between, within = stats.between_within()
    return Scores(ratio(between, within))


@register(
    "anova", invariance="affine", statistic=ClassMoments, task="classification", pvalues=True,
    formula="F = [SS_between / (g - 1)] / [SS_within / (n - g)], p from F(g - 1, n - g)",
    reference="one-way analysis of variance; scipy.stats.f_oneway; NIST StRD ANOVA",
)
def anova(stats):
    """One-way ANOVA F statistic with its p-value."""
    between, within = stats.between_within()
    g, n = len(stats.classes), stats.count.sum()
    if n <= g:
        raise ValueError(
            f"ANOVA needs more samples than classes: {int(n)} samples in {g} classes leave no "
            "degrees of freedom within classes. Add samples or merge classes."
        )
    f = ratio(between * (n - g), within * (g - 1))
    p = elementwise(special.fdtrc, g - 1, n - g, f)
    # rank by the same ratio as fisher so both methods order features identically
    return Scores(f, p, rank_key=ratio(between, within))


@register(
    "welch", invariance="affine", statistic=ClassMoments, task="classification", binary_only=True, pvalues=True,
    signed=True, min_class_size=2,
    formula="t = (m1 - m0) / sqrt(s1^2/n1 + s0^2/n0), Welch-Satterthwaite df, two-sided p",
    reference="Welch (1947); scipy.stats.ttest_ind(equal_var=False)",
)
def welch(stats):
    """Welch's unequal-variance t statistic (classes[1] minus classes[0]), two-sided p."""
    n0, n1, diff, var0, var1 = _two_classes(stats)
    a, b = var0 / n0, var1 / n1
    t = ratio(diff, np.sqrt(a + b))
    df = ratio((a + b) ** 2, a * a / (n0 - 1) + b * b / (n1 - 1))
    p = 2.0 * elementwise(special.stdtr, df, -np.abs(t))
    p[np.isinf(t)] = 0.0
    return Scores(t, p)


@register(
    "snr", invariance="affine", statistic=ClassMoments, task="classification", binary_only=True, signed=True,
    min_class_size=2,
    formula="(m1 - m0) / (s1 + s0), sample standard deviations",
    reference="Golub et al. (1999), Science 286:531-537",
)
def snr(stats):
    """Signal-to-noise ratio of the two class means."""
    _, _, diff, var0, var1 = _two_classes(stats)
    return Scores(ratio(diff, np.sqrt(var0) + np.sqrt(var1)))


@register(
    "cohen_d", invariance="affine", statistic=ClassMoments, task="classification", binary_only=True, signed=True,
    min_class_size=2,
    formula="d = (m1 - m0) / s_p, s_p^2 = ((n1 - 1) s1^2 + (n0 - 1) s0^2) / (n1 + n0 - 2)",
    reference="Cohen (1988), Statistical Power Analysis for the Behavioral Sciences; "
              "scipy.stats.ttest_ind(equal_var=True) t times sqrt(1/n1 + 1/n0)",
)
def cohen_d(stats):
    """Cohen's d: the difference of the class means (classes[1] minus classes[0]) in pooled standard deviations."""
    n0, n1, diff, var0, var1 = _two_classes(stats)
    pooled = ((n1 - 1) * var1 + (n0 - 1) * var0) / (n0 + n1 - 2)
    return Scores(ratio(diff, np.sqrt(pooled)))


@register(
    "fscore", invariance="affine", statistic=ClassMoments, task="classification", binary_only=True, min_class_size=2,
    formula="((m+ - m)^2 + (m- - m)^2) / (s+^2 + s-^2), sample variances",
    reference="Chen & Lin (2006), Combining SVMs with various feature selection strategies",
)
def fscore(stats):
    """Lin & Chen F-score of a binary split."""
    n0, n1, diff, var0, var1 = _two_classes(stats)
    n = n0 + n1
    # (m1 - m)^2 + (m0 - m)^2 with m the overall mean, written without cancellation
    num = diff * diff * (n0 * n0 + n1 * n1) / (n * n)
    return Scores(ratio(num, var0 + var1))


@register(
    "pearson", invariance="affine", statistic=CoMoments, task="regression", pvalues=True, signed=True,
    formula="r = cov(x, y) / (sd(x) sd(y)); p two-sided, exact under normality",
    reference="scipy.stats.pearsonr",
)
def pearson(stats):
    """Pearson correlation with a numeric target (binary labels coded 0/1), two-sided p."""
    r = np.clip(ratio(stats.c_xy, np.sqrt(stats.m2_x * stats.m2_y)), -1.0, 1.0)
    r[stats.m2_x == 0] = np.nan
    n = stats.count
    if n < 3:
        p = np.where(np.isnan(r), np.nan, 1.0)
    else:
        a = n / 2.0 - 1.0
        # |r| under H0 follows Beta(a, a) on [-1, 1]; same distribution scipy.stats.pearsonr uses
        p = 2.0 * elementwise(special.betainc, a, a, (1.0 - np.abs(r)) / 2.0)
    return Scores(r, p)


@register(
    "variance", invariance="none", statistic=ClassMoments, task="unsupervised",
    formula="sum_i (x_i - mean)^2 / n (population variance)",
    reference="unsupervised baseline; numpy.var",
)
def variance(stats):
    """Population variance of each feature (no target used)."""
    n, _, m2 = stats.total()
    return Scores(m2 / n)
