"""limma's moderated t: per-feature linear models with variances shrunk towards a common prior.

As in limma (``lmFit`` then ``eBayes``; Smyth 2004) the feature is the response: for every
feature ``x``, least squares of ``x`` on ``(1, Z, y)`` (``Z`` the covariates, ``y`` the numeric
target or the two classes coded 0/1), the coefficient of ``y`` with its unscaled standard
deviation, and the residual variance ``s2`` on ``d = n - c - 2`` degrees of freedom. Then one
step over all features at once (the registry's ``combine``): the ``s2`` are taken as draws of
``s0^2 chi2(d0) / d0`` scaled, the prior ``(d0, s0^2)`` is estimated by the method of moments
of limma's ``fitFDist`` (on ``log s2``, with the trigamma function inverted), every variance is
moderated to ``(d0 s0^2 + d s2) / (d0 + d)``, and ``t = coef / (stdev_unscaled sqrt(s2_post))``
is referred to a t distribution on ``d + d0`` degrees of freedom (at most the pooled ``d`` of all
features; ``d0`` infinite when the ``s2`` vary no more than chance allows).

Per feature the least squares are vectorised as in ``regression``: with ``Q`` an orthonormal
basis of ``(1, Z)`` and ``yr`` the residual of ``y``, the coefficient is ``<x, yr> / <yr, yr>``
and the residual is what is left of ``x`` outside ``(Q, yr)``. Each feature is divided by a power
of two first (exact), so values near the ends of float64 square safely; the prior is estimated
on logarithms for the same reason.
"""
from __future__ import annotations

import warnings

import numpy as np
from numba import njit
from scipy import special

from ._base import Scores, register
from .regression import column_scales, design_basis, project_out

#: limma's floor of the residual variances before their logarithms are taken, as a share of
#: their median
FLOOR = 1e-5


@njit(cache=True, nogil=True)
def _responses(X, Q, yr):
    """``(coef, rss, scale)`` of each column of ``X`` as the response of ``(Q, yr)`` (``yr``
    orthogonal to ``Q``): the column is divided by ``scale``, the power of two at or below its
    largest magnitude; NaN for a constant column."""
    n, b = X.shape
    scale, same = column_scales(X)
    R = np.empty((n, b))
    for i in range(n):
        for j in range(b):
            R[i, j] = X[i, j] / scale[j]
    project_out(Q, R)
    project_out(Q, R)
    syy = 0.0
    for i in range(n):
        syy += yr[i] * yr[i]
    coef = np.zeros(b)
    for i in range(n):
        for j in range(b):
            coef[j] += R[i, j] * yr[i]
    for j in range(b):
        coef[j] /= syy
    rss = np.zeros(b)
    for i in range(n):
        for j in range(b):
            e = R[i, j] - coef[j] * yr[i]
            rss[j] += e * e
    for j in range(b):
        if same[j]:
            coef[j] = np.nan
            rss[j] = np.nan
    return coef, rss, scale


def trigamma_inverse(x):
    """``y`` with ``trigamma(y) = x`` (x > 0), by Newton's method on ``1 / trigamma`` (which is
    nearly linear), from ``0.5 + 1 / x``."""
    x = np.asarray(x, dtype=np.float64)
    y = 0.5 + 1.0 / x
    for _ in range(100):
        tri = special.polygamma(1, y)
        step = tri * (1.0 - tri / x) / special.polygamma(2, y)
        y = y + step
        if np.max(-step / y) < 1e-15:
            break
    return y


def _log_median(log_x):
    """The log of the median of ``exp(log_x)`` (the mean of the middle two for an even count)."""
    s = np.sort(log_x)
    k = len(s)
    if k % 2:
        return s[k // 2]
    return np.logaddexp(s[k // 2 - 1], s[k // 2]) - np.log(2.0)


def prior(log_s2, df):
    """``(d0, log s0^2)``: limma's ``fitFDist`` (no trend, not robust) for residual variances
    given as logarithms (``-inf`` for 0), all on ``df`` degrees of freedom."""
    k = len(log_s2)
    if k == 1:
        return 0.0, float(log_s2[0])
    log_m = _log_median(log_s2)
    if log_m == -np.inf:
        warnings.warn("More than half of the features' residual variances are exactly zero: the moderated t "
                      "is unreliable.", RuntimeWarning, stacklevel=3)
        log_m = 0.0
    z = np.maximum(log_s2, np.log(FLOOR) + log_m)
    e = z - special.digamma(df / 2) + np.log(df / 2)
    emean = e.mean()
    evar = ((e - emean) ** 2).sum() / (k - 1) - special.polygamma(1, df / 2)
    if evar > 0:
        d0 = 2.0 * trigamma_inverse(evar)
        return d0, emean + special.digamma(d0 / 2) - np.log(d0 / 2)
    return np.inf, special.logsumexp(z) - np.log(k)  # the mean of the floored variances


def moderate(scores):
    """The ``combine`` step of ``moderated_t``: the prior from every tested feature's residual
    variance, then each feature's moderated t, p-value and columns (NaN features stay NaN)."""
    cols = dict(scores.columns)
    coef, su, sigma, df = (np.asarray(cols[k], dtype=np.float64)
                           for k in ("coef", "stdev_unscaled", "sigma", "df_residual"))
    ok = np.isfinite(coef) & np.isfinite(sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_s2 = 2.0 * np.log(sigma)
    t = np.full(coef.shape, np.nan)
    log_post = np.full(coef.shape, np.nan)
    d0, log_s0 = (np.nan, np.nan)
    if ok.any():
        d = float(df[ok][0])
        d0, log_s0 = prior(log_s2[ok], d)
        if np.isinf(d0):
            log_post[ok] = log_s0
        else:
            with np.errstate(divide="ignore"):  # d0 = 0 (one feature): no prior
                log_post[ok] = np.logaddexp(np.log(d0) + log_s0, np.log(d) + log_s2[ok]) - np.log(d0 + d)
        with np.errstate(divide="ignore"):
            t[ok] = np.sign(coef[ok]) * np.exp(np.log(np.abs(coef[ok])) - np.log(su[ok]) - log_post[ok] / 2)
    df_total = np.where(ok, np.minimum(df + d0, np.nansum(np.where(ok, df, np.nan))), np.nan)
    p = 2.0 * special.stdtr(df_total, -np.abs(t))
    cols.update(sigma_post=np.exp(log_post / 2), df_total=df_total, df_prior=np.where(ok, d0, np.nan),
                sigma_prior=np.where(ok, np.exp(log_s0 / 2), np.nan))
    return Scores(t, p, columns=cols)


@register(
    "moderated_t", invariance="none", task="regression", streaming="blocks", pvalues=True, signed=True,
    covariates=True, combine=moderate, distinct=True,
    formula="x = b0 + Z g + coef y + e per feature; t = coef / (stdev_unscaled sqrt(s2_post)), "
            "s2_post = (d0 s0^2 + d s2) / (d0 + d), p from t(d + d0)",
    reference="limma lmFit + eBayes (Smyth 2004, Stat Appl Genet Mol Biol 3:3)",
)
def moderated_t(block, target):
    """limma's empirical-Bayes moderated t of the target's coefficient, given the covariates.

    Columns: ``coef`` (the target's coefficient: for two classes the adjusted difference of the
    class means), ``stdev_unscaled``, ``sigma`` (the residual standard deviation), ``df_residual``,
    then from all features ``sigma_post`` (the root of limma's ``s2.post``), ``df_total``,
    ``df_prior`` and ``sigma_prior`` (the root of ``s2.prior``).
    """
    Q = design_basis(target)
    n, q = Q.shape
    df = n - q - 1
    if df < 1:
        raise ValueError(f"A moderated t with {q - 1} covariate(s) needs more than {q + 1} samples; got {n}. "
                         "Use fewer covariates or more samples.")
    y = np.array(target.values, dtype=np.float64)
    yr = y[:, None].copy()
    project_out(Q, yr)
    project_out(Q, yr)
    yr = yr[:, 0]
    if not yr @ yr > 1e-24 * ((y - y.mean()) ** 2).sum():
        raise ValueError("The target is explained by the covariates (it lies in their span): nothing is left "
                         "for a moderated t to test. Remove the covariates that reproduce y.")
    coef, rss, scale = _responses(np.ascontiguousarray(block, dtype=np.float64), Q, yr)
    su = np.full(coef.shape, 1.0 / np.sqrt(yr @ yr))
    columns = {"coef": coef * scale, "stdev_unscaled": su, "sigma": np.sqrt(rss / df) * scale,
               "df_residual": np.full(coef.shape, float(df))}
    return Scores(coef, None, None, None, columns)
