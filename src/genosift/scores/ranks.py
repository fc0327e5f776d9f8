"""Rank-based scores, computed on whole columns (blocks of features, all samples).

Every method here ranks each feature's values with average ranks for ties (the mid-rank), as
``scipy.stats.rankdata`` does. A dense block is sorted once, vectorised over its columns
(``np.argsort`` of the transposed block); a compiled kernel then walks each sorted column and
accumulates, per feature,

- ``C[c] = sum over samples i of group c of (r_i - (n + 1) / 2) * w_i``, the centred ranks
  weighted by ``w`` and summed per group code (class codes with ``w = 1`` for ``auc`` and
  ``kruskal``, one group with ``w`` = the centred ranks of ``y`` for ``spearman``);
- ``S = sum_i (r_i - (n + 1) / 2) ** 2``, which carries the tie correction:
  ``S = (n^3 - n - sum_ties (t^3 - t)) / 12``.

A sparse (CSC) block never becomes dense: only the stored values of a column are sorted, and all
its zeros form one tie group that shares one average rank. Centred ranks are multiples of 1/2, so
``C`` (with integer or half-integer weights) and ``S`` are exact in float64 up to ~10^5 samples:
dense and sparse input give identical statistics.

Conventions: a constant feature has NaN statistic, score and p-value (ranked last); binary
methods compare ``classes[1]`` against ``classes[0]`` (labels in sorted order).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy import special

from ..core.constraints import Boolean, Choice
from ._base import Scores, ratio, register

# --------------------------------------------------------------------------------------------
# compiled kernels
# --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _dense_rank_sums(XT, order, codes, weights, k):
    """``(C, S)`` of the rows of ``XT`` (one feature per row), ``order[j]`` sorting row ``j``."""
    b, n = XT.shape
    C = np.zeros((b, k))
    S = np.zeros(b)
    mid = 0.5 * (n + 1)
    for j in range(b):
        col = XT[j]
        o = order[j]
        s = 0
        while s < n:
            v = col[o[s]]
            e = s + 1
            while e < n and col[o[e]] == v:
                e += 1
            dev = 0.5 * (s + e + 1) - mid  # mean of the 1-based ranks s+1 .. e, centred
            S[j] += (e - s) * dev * dev
            if dev != 0.0:
                for q in range(s, e):
                    i = o[q]
                    C[j, codes[i]] += dev * weights[i]
            s = e
    return C, S


@njit(cache=True, nogil=True)
def _sparse_rank_sums(data, indices, indptr, n, codes, weights, wtot):
    """``(C, S)`` of the columns of a CSC block; ``wtot[c]`` = sum of ``weights`` in group ``c``.

    The zeros of a column (implicit or stored) are one tie group of centred rank ``dev0``, so
    ``C[c] = dev0 * wtot[c] + sum over stored non-zeros of (dev_i - dev0) * w_i``.
    """
    b = indptr.shape[0] - 1
    k = wtot.shape[0]
    C = np.zeros((b, k))
    S = np.zeros(b)
    mid = 0.5 * (n + 1)
    for j in range(b):
        lo, hi = indptr[j], indptr[j + 1]
        m = hi - lo
        vals = data[lo:hi]
        rows = indices[lo:hi]
        neg = 0
        stored_zeros = 0
        for q in range(m):
            if vals[q] < 0.0:
                neg += 1
            elif vals[q] == 0.0:
                stored_zeros += 1
        z = n - m + stored_zeros  # size of the zero group
        dev0 = neg + 0.5 * (z + 1) - mid if z > 0 else 0.0
        S[j] += z * dev0 * dev0
        for c in range(k):
            C[j, c] = dev0 * wtot[c]
        if m == 0:
            continue
        o = np.argsort(vals)
        s = 0
        while s < m:
            v = vals[o[s]]
            e = s + 1
            while e < m and vals[o[e]] == v:
                e += 1
            if v != 0.0:
                start = s if v < 0.0 else s - stored_zeros + z  # 0-based position among all n
                t = e - s
                dev = start + 0.5 * (t + 1) - mid
                S[j] += t * dev * dev
                for q in range(s, e):
                    r = rows[o[q]]
                    C[j, codes[r]] += (dev - dev0) * weights[r]
            s = e
    return C, S


@njit(cache=True, nogil=True)
def _kendall_counts(XT, order, ycode, m):
    """Per row of ``XT``: discordant pairs, pairs tied in x and y, and the x tie sums.

    Walks the feature in ascending order, one tie group at a time; a Fenwick tree over the
    ``m`` target codes counts the earlier samples (strictly smaller x) with a larger y.
    Returns ``(dis, joint, xtie, x0, x1)`` with ``xtie = sum t(t-1)/2``,
    ``x0 = sum t(t-1)(t-2)`` and ``x1 = sum t(t-1)(2t+5)`` over the tie groups of x.
    """
    b, n = XT.shape
    dis = np.zeros(b, np.int64)
    joint = np.zeros(b, np.int64)
    xtie = np.zeros(b, np.int64)
    x0 = np.zeros(b)
    x1 = np.zeros(b)
    tree = np.zeros(m + 1, np.int64)
    same = np.zeros(m, np.int64)
    for j in range(b):
        tree[:] = 0
        col = XT[j]
        o = order[j]
        s = 0
        d = 0
        jt = 0
        while s < n:
            v = col[o[s]]
            e = s + 1
            while e < n and col[o[e]] == v:
                e += 1
            for q in range(s, e):
                c = ycode[o[q]]
                i = c + 1
                le = 0
                while i > 0:
                    le += tree[i]
                    i -= i & (-i)
                d += s - le  # the s earlier samples with y code > c
                jt += same[c]
                same[c] += 1
            for q in range(s, e):
                c = ycode[o[q]]
                same[c] = 0
                i = c + 1
                while i <= m:
                    tree[i] += 1
                    i += i & (-i)
            t = e - s
            if t > 1:
                xtie[j] += t * (t - 1) // 2
                x0[j] += t * (t - 1.0) * (t - 2.0)
                x1[j] += t * (t - 1.0) * (2.0 * t + 5.0)
            s = e
        dis[j] = d
        joint[j] = jt
    return dis, joint, xtie, x0, x1


# --------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------


def _sorted_rows(block):
    """``(XT, order)``: the dense block's columns as contiguous rows, and each row's argsort."""
    XT = np.ascontiguousarray(block.T, dtype=np.float64)
    return XT, np.argsort(XT, axis=1)


def _rank_sums(block, codes, weights, k):
    """``(C, S)`` of a dense or CSC block (see the module docstring): C is (b, k), S is (b,)."""
    codes = np.ascontiguousarray(codes, dtype=np.intp)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if sp.issparse(block):
        block = sp.csc_matrix(block)
        wtot = np.bincount(codes, weights, minlength=k).astype(np.float64)
        return _sparse_rank_sums(block.data.astype(np.float64, copy=False), block.indices, block.indptr,
                                 block.shape[0], codes, weights, wtot)
    XT, order = _sorted_rows(block)
    return _dense_rank_sums(XT, order, codes, weights, k)


def _correlation_p(r, n):
    """Two-sided p of a correlation coefficient from Student's t with n - 2 df."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = r * np.sqrt((n - 2) / ((1.0 + r) * (1.0 - r)))
    p = 2.0 * special.stdtr(n - 2, -np.abs(t))
    p[np.abs(r) == 1.0] = 0.0
    return p


# --------------------------------------------------------------------------------------------
# methods
# --------------------------------------------------------------------------------------------


@register(
    "spearman", invariance="monotone", task="regression", streaming="blocks", pvalues=True, signed=True,
    sparse_blocks=True,
    formula="rho = Pearson r of the average ranks of x and y; p from t = rho sqrt((n-2)/(1-rho^2)), n-2 df",
    reference="scipy.stats.spearmanr",
)
def spearman(block, target):
    """Spearman rank correlation with a numeric target (binary labels coded 0/1), two-sided p.

    Examples
    --------
    >>> import genosift as gs
    >>> X = [[1, 5], [2, 3], [3, 4], [4, 1]]
    >>> gs.score(X, [1.0, 2.0, 3.0, 4.0], method="spearman").statistic.tolist()
    [1.0, -0.8]
    """
    from scipy.stats import rankdata

    n = target.n_samples
    ry = rankdata(target.values) - 0.5 * (n + 1)
    C, S = _rank_sums(block, np.zeros(n, dtype=np.intp), ry, 1)
    rho = ratio(C[:, 0], np.sqrt(S * (ry @ ry)))
    rho[S == 0] = np.nan
    rho = np.clip(rho, -1.0, 1.0)
    p = _correlation_p(rho, n) if n > 2 else np.where(np.isnan(rho), np.nan, 1.0)
    return Scores(rho, p)


@lru_cache(maxsize=64)
def _kendall_exact_cdf(n):
    """``P(D <= c)`` for c = 0 .. n(n-1)/2, D the number of discordant pairs of n untied samples.

    Counts of permutations by number of inversions (Mahonian numbers) in exact integers, one
    division each, so every probability is correctly rounded.
    """
    counts = [1]
    for j in range(2, n + 1):  # insert element j: adds 0 .. j-1 inversions
        prefix = [0]
        for c in counts:
            prefix.append(prefix[-1] + c)
        size = len(counts) + j - 1
        counts = [prefix[min(c + 1, len(counts))] - prefix[max(0, c - j + 1)] for c in range(size)]
    total = math.factorial(n)
    cdf, run = [], 0
    for c in counts:
        run += c
        cdf.append(run / total)
    return np.array(cdf)


def _kendall_exact_p(n, c):
    """Two-sided exact p of Kendall's tau without ties: ``min(1, 2 P(D <= c))``, c the smaller tail."""
    if n <= 33:
        return np.minimum(1.0, 2.0 * _kendall_exact_cdf(n)[c])
    # only reached for c <= 1: P(D = 0) = 1/n!, P(D <= 1) = n/n! (0 once it underflows)
    p0 = 2.0 / math.factorial(n) if n < 171 else 0.0
    p1 = 2.0 / math.factorial(n - 1) if n < 172 else 0.0
    return np.where(c == 0, p0, p1)


@register(
    "kendall", invariance="monotone", task="regression", streaming="blocks", pvalues=True, signed=True, distinct=True,
    formula="tau_b = (P - Q) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1/n2 pairs tied in x/y; "
            "p exact (n <= 33, no ties) or normal with the tie-corrected variance of P - Q",
    reference="Kendall (1945); scipy.stats.kendalltau (variant='b', method='auto')",
    options={"p_method": Choice("auto", "asymptotic")},
)
def kendall(block, target, *, p_method="auto"):
    """Kendall's tau-b rank correlation with a numeric target (binary labels coded 0/1), two-sided p.

    Parameters
    ----------
    p_method : {"auto", "asymptotic"}
        "auto" (the default, as ``scipy.stats.kendalltau``): the exact null distribution of the
        number of discordant pairs when neither the feature nor ``y`` has ties and n <= 33, or
        when at most one pair is discordant (or concordant); else the normal approximation of
        P - Q with the tie-corrected variance. "asymptotic": always the normal approximation.

    Examples
    --------
    >>> import genosift as gs
    >>> X = [[1, 5], [2, 3], [3, 4], [4, 1]]
    >>> res = gs.score(X, [1.0, 2.0, 3.0, 4.0], method="kendall")
    >>> res.statistic.round(4).tolist(), res.pvalues.round(4).tolist()
    ([1.0, -0.6667], [0.0833, 0.3333])
    """
    n = target.n_samples
    yvals, ycode, ycount = np.unique(target.values, return_inverse=True, return_counts=True)
    ycount = ycount[ycount > 1].astype(np.int64)
    ytie = int((ycount * (ycount - 1) // 2).sum())
    y0 = float((ycount * (ycount - 1.0) * (ycount - 2.0)).sum())
    y1 = float((ycount * (ycount - 1.0) * (2.0 * ycount + 5.0)).sum())

    XT, order = _sorted_rows(block)
    dis, joint, xtie, x0, x1 = _kendall_counts(XT, order, ycode.astype(np.intp), len(yvals))
    tot = n * (n - 1) // 2
    s = (tot - xtie - ytie + joint - 2 * dis).astype(np.float64)  # concordant minus discordant
    constant = xtie == tot
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.clip(s / np.sqrt(tot - xtie) / np.sqrt(tot - ytie), -1.0, 1.0)
        m = n * (n - 1.0)
        var = (m * (2 * n + 5) - x1 - y1) / 18 + (2.0 * xtie * ytie) / m
        if n > 2:
            var = var + x0 * y0 / (9 * m * (n - 2))
        p = 2.0 * special.ndtr(-np.abs(s / np.sqrt(var)))
    if p_method == "auto" and ytie == 0:
        c = np.minimum(dis, tot - dis)
        exact = (xtie == 0) & ((n <= 33) | (c <= 1))
        if exact.any():
            p[exact] = _kendall_exact_p(n, c[exact])
    tau[constant] = np.nan
    p[constant] = np.nan
    return Scores(tau, p)


@register(
    "auc", invariance="monotone", task="classification", streaming="blocks", binary_only=True, pvalues=True,
    sparse_blocks=True,
    formula="AUC = U1 / (n0 n1), U1 = R1 - n1(n1+1)/2 (R1 rank sum of classes[1]); score = max(AUC, 1 - AUC); "
            "p: Mann-Whitney U, normal approximation with tie and continuity correction",
    reference="Mann & Whitney (1947); Hanley & McNeil (1982); sklearn.metrics.roc_auc_score; "
              "scipy.stats.mannwhitneyu(method='asymptotic')",
    options={"continuity": Boolean()},
)
def auc(block, target, *, continuity=True):
    """ROC AUC of each feature for classes[1] against classes[0]; score max(AUC, 1 - AUC), Mann-Whitney p.

    Parameters
    ----------
    continuity : bool
        Apply the continuity correction (subtract 1/2 from ``|U - n0 n1 / 2|``) in the normal
        approximation of the p-value, as ``scipy.stats.mannwhitneyu(use_continuity=True)``.

    Examples
    --------
    >>> import genosift as gs
    >>> X = [[1, 5], [2, 3], [3, 4], [4, 1], [5, 2]]
    >>> res = gs.score(X, ["a", "a", "b", "b", "b"], method="auc")
    >>> res.statistic.round(4).tolist(), res.scores.round(4).tolist()
    ([1.0, 0.1667], [1.0, 0.8333])
    """
    n = target.n_samples
    n0, n1 = target.count
    C, S = _rank_sums(block, target.codes, np.ones(n), 2)
    d = C[:, 1]  # U1 - n0 n1 / 2
    constant = S == 0
    stat = 0.5 + d / (n0 * n1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (np.abs(d) - (0.5 if continuity else 0.0)) / np.sqrt(n0 * n1 * S / (n * (n - 1.0)))
    p = np.clip(2.0 * special.ndtr(-z), 0.0, 1.0)
    stat[constant] = np.nan
    p[constant] = np.nan
    return Scores(stat, p, np.maximum(stat, 1.0 - stat))


@register(
    "kruskal", invariance="monotone", task="classification", streaming="blocks", pvalues=True, sparse_blocks=True,
    formula="H = 12/(n(n+1)) sum_j n_j (mean rank_j - (n+1)/2)^2 / (1 - sum_ties (t^3-t)/(n^3-n)); "
            "p from chi2(k-1)",
    reference="Kruskal & Wallis (1952); scipy.stats.kruskal",
)
def kruskal(block, target):
    """Kruskal-Wallis H test (rank one-way ANOVA) over any number of classes, tie-corrected, with p.

    Examples
    --------
    >>> import genosift as gs
    >>> X = [[1, 5], [2, 3], [3, 4], [4, 1], [5, 2], [6, 6]]
    >>> res = gs.score(X, [0, 0, 1, 1, 2, 2], method="kruskal")
    >>> res.statistic.round(4).tolist()
    [4.5714, 0.8571]
    """
    n, k = target.n_samples, len(target.classes)
    C, S = _rank_sums(block, target.codes, np.ones(n), k)
    # H = 12/(n(n+1)) sum_j D_j^2/n_j divided by the tie correction 12 S/(n^3 - n); D_j = C[:, j]
    h = ratio((n - 1) * ((C * C) / target.count).sum(axis=1), S)
    h[S == 0] = np.nan
    return Scores(h, special.chdtrc(k - 1, h))
