"""Per-feature linear regression that adjusts for covariates.

For every feature ``x`` the model is ``y = b0 + Z g + beta x + e`` with ``Z`` the covariates
(lineage coordinates, batch, age, ...; ``Target.covariates``) and the feature's coefficient
``beta`` tested by its t statistic. By the Frisch-Waugh-Lovell theorem ``beta`` and its t come
from the residuals of ``y`` and of ``x`` on ``(1, Z)``: with ``Q`` an orthonormal basis of
``(1, Z)``, computed once, a block of features is residualised by two matrix products, so the
fit is vectorised across features and costs ``O(n (c + 1))`` per feature.

A feature that lies in the span of the intercept and the covariates (a constant, or a copy of a
covariate) has no coefficient of its own: NaN, ranked last. A feature that explains the
residual of ``y`` exactly scores ``+inf`` (p = 0), as the perfect separators of the other
methods do.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from scipy import special

from ._base import Scores, ratio, register

#: A feature whose part outside the span of the covariates has a sum of squares below this share
#: of its own (its R^2 on the covariates above 1 - 1e-12) is taken to lie in that span.
COLLINEAR = 1e-12


@njit(cache=True, nogil=True)
def orthonormal(Z):
    """An orthonormal basis of the columns of ``Z`` (full column rank), by Gram-Schmidt twice:
    loops in a fixed order, so the bits do not depend on BLAS threads."""
    n, q = Z.shape
    Q = Z.copy()
    for k in range(q):
        for _ in range(2):
            for m in range(k):
                dot = 0.0
                for i in range(n):
                    dot += Q[i, m] * Q[i, k]
                for i in range(n):
                    Q[i, k] -= dot * Q[i, m]
        norm = 0.0
        for i in range(n):
            norm += Q[i, k] * Q[i, k]
        norm = np.sqrt(norm)
        for i in range(n):
            Q[i, k] /= norm
    return Q


@njit(cache=True, nogil=True)
def project_out(Q, R):
    """``R -= Q (Q^T R)`` in place, the sums over samples in sample order."""
    n, b = R.shape
    q = Q.shape[1]
    P = np.zeros((q, b))
    for i in range(n):
        for k in range(q):
            qik = Q[i, k]
            for j in range(b):
                P[k, j] += qik * R[i, j]
    for i in range(n):
        for k in range(q):
            qik = Q[i, k]
            for j in range(b):
                R[i, j] -= qik * P[k, j]


@njit(cache=True, nogil=True)
def column_scales(X):
    """``(scale, same)`` of each column of ``X``: the power of two at or below its largest
    magnitude (1 for an all-zero column), by which it can be divided exactly, and whether all
    its values are equal."""
    n, b = X.shape
    scale = np.ones(b)
    same = np.ones(b, dtype=np.bool_)
    for j in range(b):
        top = 0.0
        for i in range(n):
            top = max(top, abs(X[i, j]))
            if X[i, j] != X[0, j]:
                same[j] = False
        if top > 0.0:
            scale[j] = 2.0 ** np.floor(np.log2(top))
    return scale, same


@njit(cache=True, nogil=True)
def least_squares_fits(X, Q, yr, collinear):
    """``(beta, sxx, rss, scale)`` of each column of ``X`` divided by ``scale``, the power of two
    at or below its largest magnitude (exact), so that squares neither overflow nor underflow;
    ``beta`` and ``sxx`` NaN for a column in the span of ``Q``."""
    n, b = X.shape
    scale, same = column_scales(X)
    R = np.empty((n, b))
    mean = np.zeros(b)
    for i in range(n):
        for j in range(b):
            R[i, j] = X[i, j] / scale[j]
            mean[j] += R[i, j]
    css = np.zeros(b)
    for i in range(n):
        for j in range(b):
            d = R[i, j] - mean[j] / n
            css[j] += d * d
    project_out(Q, R)
    project_out(Q, R)
    sxx, sxy = np.zeros(b), np.zeros(b)
    for i in range(n):
        for j in range(b):
            sxx[j] += R[i, j] * R[i, j]
            sxy[j] += R[i, j] * yr[i]
    beta = np.full(b, np.nan)
    for j in range(b):
        if not same[j] and sxx[j] > collinear * css[j]:
            beta[j] = sxy[j] / sxx[j]
    rss = np.zeros(b)
    for i in range(n):
        for j in range(b):
            e = yr[i] - R[i, j] * beta[j]
            rss[j] += e * e
    for j in range(b):
        if np.isnan(beta[j]):
            sxx[j] = np.nan
    return beta, sxx, rss, scale


def design_basis(target):
    """An orthonormal basis ``Q`` (n x (c + 1)) of the intercept and the target's covariates."""
    n = target.n_samples
    Z = np.ones((n, 1)) if target.covariates is None else np.column_stack([np.ones(n), target.covariates])
    return orthonormal(np.ascontiguousarray(Z, dtype=np.float64))


class Fit(NamedTuple):
    """Per-feature least-squares fits of ``y`` on ``(1, covariates, feature)``.

    ``beta``: the feature's coefficient and ``se`` its standard error, in the feature's units;
    ``signal``: ``beta / stdev_unscaled`` (``beta`` times the root of the feature's residual sum of
    squares on the covariates), free of the feature's scale, so that ``t = signal / sqrt(s2)``
    for any estimate ``s2`` of the residual variance; ``s2``: the residual variance ``rss / df``;
    ``df``: the residual degrees of freedom ``n - c - 2``. NaN for a feature in the span of the
    intercept and the covariates.
    """

    beta: np.ndarray
    se: np.ndarray
    signal: np.ndarray
    s2: np.ndarray
    df: int


def residual_fits(block, target):
    """The ``Fit`` of every feature of a dense column ``block`` against ``target.values``."""
    Q = design_basis(target)
    n, q = Q.shape
    df = n - q - 1
    if df < 1:
        raise ValueError(f"A regression on {q - 1} covariate(s) and a feature needs more than {q + 1} samples; "
                         f"got {n}. Use fewer covariates or more samples.")
    yr = np.array(target.values, dtype=np.float64)[:, None]
    project_out(Q, yr)
    project_out(Q, yr)
    yr = yr[:, 0]
    beta, sxx, rss, scale = least_squares_fits(np.ascontiguousarray(block, dtype=np.float64), Q, yr, COLLINEAR)
    # an exact fit leaves rounding only: call it exact, so the feature scores +inf
    rss[rss <= (64 * np.finfo(float).eps) ** 2 * (yr @ yr)] = 0.0
    s2 = rss / df
    root = np.sqrt(sxx)
    return Fit(beta / scale, ratio(np.sqrt(s2), root * scale), beta * root, s2, df)


@register(
    "regression", invariance="affine", task="regression", streaming="blocks", pvalues=True, signed=True,
    covariates=True, distinct=True,
    formula="y = b0 + Z g + beta x + e by least squares; t = beta / se(beta), two-sided p from t(n - c - 2)",
    reference="ordinary least squares with covariates; statsmodels OLS; Frisch & Waugh (1933), Lovell (1963)",
)
def regression(block, target):
    """Least-squares t statistic of each feature's coefficient, given the covariates.

    Columns: ``beta``, the feature's coefficient, and ``se``, its standard error (feature units).
    """
    fit = residual_fits(block, target)
    t = ratio(fit.signal, np.sqrt(fit.s2))
    p = 2.0 * special.stdtr(fit.df, -np.abs(t))
    return Scores(t, p, columns={"beta": fit.beta, "se": fit.se})
