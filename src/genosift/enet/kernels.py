"""The elastic net's compiled solver: coordinate descent on a working set of standardised columns.

The objective, in the standardised coordinates ``b`` of the columns (mean 0, mean square 1 over
the samples), is glmnet's:

- linear: ``(1/2n) sum (y - b0 - X b)^2 + lam * P(b)``;
- logistic: ``-(1/n) sum (y eta - log(1 + e^eta)) + lam * P(b)``, ``eta = b0 + X b``;

``P(b) = sum_j l1_ratio |b_j| + (1 - l1_ratio) / 2 * ridge_j * b_j^2`` over the penalised columns; the
columns marked ``free`` (covariates) and the intercept are not penalised. ``ridge_j`` is 1 for a
feature and ``1/m`` for a column standing for ``m`` identical features (see
``genosift.enet.path``). The logistic fit is glmnet's: each outer step replaces the
likelihood by its quadratic approximation at the current fit (weights ``p(1-p)``, kept above
1e-5 like glmnet's) and minimises that by coordinate descent; the sweeps alternate between every
column and the columns in the model, until no coordinate moves the objective by more than
``thresh``.

The working set is stored one row per column (``(m, n)``), so every sum over samples reads
contiguous memory, in a fixed order (the same bits every time). ``add_transposed_product`` and
``row_moments`` read a store's row chunks for ``genosift.enet.store``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..scores.logit_fit import dot

__all__ = ["PMIN", "add_transposed_product", "enet_fit", "row_moments"]

#: The smallest fitted probability (and one less the largest) of the logistic quadratic steps.
PMIN = 1e-5
#: Quadratic approximations allowed for one logistic fit.
MAX_OUTER = 100


@njit(cache=True, nogil=True)
def _sweep(W, r, v, beta, b0, xv, sv, lam, l1_ratio, ridge, free, every):
    """One pass of coordinate descent (the intercept, then every column or only those in the model);
    returns ``(b0, largest weighted squared move)``."""
    m, n = W.shape
    # the intercept (unpenalised): its exact minimiser given the others
    d = dot(v, r) / (n * sv)
    moved = sv * d * d
    if d != 0.0:
        b0 += d
        for i in range(n):
            r[i] -= d
    l1 = lam * l1_ratio
    for j in range(m):
        old = beta[j]
        if not every and old == 0.0 and not free[j]:
            continue
        row = W[j]
        g = 0.0
        for i in range(n):
            g += v[i] * row[i] * r[i]
        u = g / n + xv[j] * old
        if free[j]:
            new = u / xv[j]
        else:
            a = abs(u) - l1
            new = 0.0 if a <= 0.0 else math.copysign(a, u) / (xv[j] + lam * (1.0 - l1_ratio) * ridge[j])
        d = new - old
        if d != 0.0:
            beta[j] = new
            for i in range(n):
                r[i] -= d * row[i]
            moved = max(moved, xv[j] * d * d)
    return b0, moved


@njit(cache=True, nogil=True)
def _linear_predictor(W, beta, b0, eta):
    eta[:] = b0
    for j in range(W.shape[0]):
        if beta[j] != 0.0:
            eta += beta[j] * W[j]


@njit(cache=True, nogil=True)
def enet_fit(W, y, logistic, lam, l1_ratio, ridge, free, beta, b0, thresh, max_sweeps):
    """Fit at one ``lam``, starting from ``beta`` (updated in place) and ``b0``.

    Returns ``(b0, sweeps, converged)``: ``converged`` is False when ``max_sweeps`` sweeps (or
    ``MAX_OUTER`` logistic steps) did not bring every move below ``thresh``.
    """
    m, n = W.shape
    eta = np.empty(n)
    v = np.ones(n)
    r = np.empty(n)
    xv = np.empty(m)
    old = np.empty(m)
    sweeps = 0
    for _ in range(MAX_OUTER if logistic else 1):
        _linear_predictor(W, beta, b0, eta)
        if logistic:
            for i in range(n):
                p = 1.0 / (1.0 + math.exp(-eta[i]))
                p = min(max(p, PMIN), 1.0 - PMIN)
                v[i] = p * (1.0 - p)
                r[i] = (y[i] - p) / v[i]
        else:
            for i in range(n):
                r[i] = y[i] - eta[i]
        sv = v.sum() / n
        for j in range(m):
            row = W[j]
            s = 0.0
            for i in range(n):
                s += v[i] * row[i] * row[i]
            xv[j] = s / n
        old[:] = beta
        old_b0 = b0
        done = False
        while sweeps < max_sweeps:
            b0, moved = _sweep(W, r, v, beta, b0, xv, sv, lam, l1_ratio, ridge, free, True)
            sweeps += 1
            if moved < thresh:
                done = True
                break
            while sweeps < max_sweeps:
                b0, moved = _sweep(W, r, v, beta, b0, xv, sv, lam, l1_ratio, ridge, free, False)
                sweeps += 1
                if moved < thresh:
                    break
        if not done:
            return b0, sweeps, False
        if not logistic:
            return b0, sweeps, True
        step = sv * (b0 - old_b0) ** 2
        for j in range(m):
            step = max(step, xv[j] * (beta[j] - old[j]) ** 2)
        if step < thresh:
            return b0, sweeps, True
    return b0, sweeps, False


@njit(cache=True, nogil=True, parallel=True)
def add_transposed_product(indptr, indices, data, R, G):
    """``G += (X^T R)^T`` for the CSR rows ``X`` (``indptr, indices, data``) and the (rows, L)
    ``R``: ``G`` is (L, p), one thread per column of ``R``."""
    rows, L = R.shape
    for l in prange(L):
        out = G[l]
        for i in range(rows):
            r = R[i, l]
            if r == 0.0:
                continue
            for k in range(indptr[i], indptr[i + 1]):
                out[indices[k]] += data[k] * r


@njit(cache=True, nogil=True)
def row_moments(indptr, indices, data, keep, p):
    """Of the CSR rows ``keep`` marks: their number, and per column the mean, the sum of squared
    deviations (about the mean, so without cancellation) and the smallest and largest value, the
    implicit zeros counted."""
    k = 0
    total = np.zeros(p)
    stored = np.zeros(p, dtype=np.int64)
    low = np.full(p, np.inf)
    high = np.full(p, -np.inf)
    for i in range(keep.size):
        if not keep[i]:
            continue
        k += 1
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            v = float(data[e])
            total[j] += v
            stored[j] += 1
            low[j] = min(low[j], v)
            high[j] = max(high[j], v)
    mean = total / max(k, 1)
    ssd = np.zeros(p)
    for i in range(keep.size):
        if not keep[i]:
            continue
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            d = float(data[e]) - mean[j]
            ssd[j] += d * d
    for j in range(p):
        zeros = k - stored[j]
        if zeros > 0:
            ssd[j] += zeros * mean[j] * mean[j]
            low[j] = min(low[j], 0.0)
            high[j] = max(high[j], 0.0)
    return k, mean, ssd, low, high
