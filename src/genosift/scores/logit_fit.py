"""Compiled Newton fits of a logistic regression to one design, the building block of method
'logistic': maximum likelihood or Firth's penalised likelihood, with the score, the information and
its Cholesky factor computed in one pass over the samples, and the gain in log-likelihood over a
null fit summed without cancellation.

The design ``D`` is stored one row per column of the model (``(m, n)``), so that every sum over
samples runs over contiguous memory; sums are taken in a fixed order (the same bits whatever the
threads or blocks).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["Null", "Scratch", "dot", "fit_logit", "logit_gain", "scratch"]

#: Newton steps allowed for one fit
MAX_STEPS = 50


class Scratch(NamedTuple):
    """The work arrays of the fits of one design of ``m`` columns to ``n`` samples, reused from
    fit to fit: the fitted probabilities ``mu`` (n,), the weights ``w`` (n,), the information's
    Cholesky factor ``L`` (m, m), the score ``g``, the Newton ``step``, Firth's ``z``, the last
    coefficients ``old`` (m,), and ``tmp`` (n,)."""

    mu: np.ndarray
    w: np.ndarray
    L: np.ndarray
    g: np.ndarray
    step: np.ndarray
    z: np.ndarray
    old: np.ndarray
    tmp: np.ndarray


class Null(NamedTuple):
    """The null fit's linear predictor ``eta`` and its probabilities ``mu`` and ``nu = 1 - mu``
    (each (n,)), from which ``logit_gain`` sums a gain without cancellation."""

    eta: np.ndarray
    mu: np.ndarray
    nu: np.ndarray


@njit(cache=True, nogil=True)
def scratch(n, m):
    """The ``Scratch`` of fits of ``m`` columns to ``n`` samples."""
    return Scratch(np.empty(n), np.empty(n), np.zeros((m, m)), np.empty(m), np.empty(m), np.empty(m), np.empty(m),
                   np.empty(n))


@njit(cache=True, nogil=True)
def dot(u, v):
    """``sum(u * v)`` in four interleaved partial sums (a fixed order: the same bits every time)."""
    n = u.shape[0]
    s0 = s1 = s2 = s3 = 0.0
    top = n - n % 4
    for i in range(0, top, 4):
        s0 += u[i] * v[i]
        s1 += u[i + 1] * v[i + 1]
        s2 += u[i + 2] * v[i + 2]
        s3 += u[i + 3] * v[i + 3]
    for i in range(top, n):
        s0 += u[i] * v[i]
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, nogil=True)
def _pass(D, y, theta, with_ll, work):
    """One pass over the samples at ``theta`` (``D``: the design, one row per column of it), into
    the ``Scratch`` ``work``: ``mu``, ``w = mu (1 - mu)``; the score ``D (y - mu)`` into ``g`` and
    the information ``D W D'`` into the lower triangle of ``L``. Returns the log-likelihood if
    ``with_ll`` (else 0: its logarithms are the costly part)."""
    mu, w, g, L, tmp = work.mu, work.w, work.g, work.L, work.tmp
    m, n = D.shape
    ll = 0.0
    w[:] = 0.0
    for k in range(m):
        t = theta[k]
        for i in range(n):
            w[i] += D[k, i] * t
    for i in range(n):
        eta = w[i]
        e = math.exp(-abs(eta))
        mu[i] = 1.0 / (1.0 + e) if eta >= 0.0 else e / (1.0 + e)
        if with_ll:
            ll += y[i] * eta - max(eta, 0.0) - math.log1p(e)
        w[i] = y[i] - mu[i]
    for a in range(m):
        g[a] = dot(D[a], w)
    for i in range(n):
        w[i] = mu[i] * (1.0 - mu[i])
    _information(D, w, L, tmp)
    return ll


@njit(cache=True, nogil=True)
def _information(D, w, L, work):
    """``D W D'`` into the lower triangle of ``L`` (``work``: (n,), overwritten)."""
    m, n = D.shape
    for a in range(m):
        for i in range(n):
            work[i] = D[a, i] * w[i]
        for b in range(a + 1):
            L[a, b] = dot(work, D[b])


@njit(cache=True, nogil=True)
def _factor(L):
    """Cholesky factor of the matrix in the lower triangle of ``L``, in place; False if it is not
    positive definite."""
    m = L.shape[0]
    for a in range(m):
        for b in range(a + 1):
            s = L[a, b]
            for k in range(b):
                s -= L[a, k] * L[b, k]
            if a == b:
                if not s > 0.0:
                    return False
                L[a, a] = math.sqrt(s)
            else:
                L[a, b] = s / L[b, b]
    return True


@njit(cache=True, nogil=True)
def _solve(L, g, out):
    """``out = (L L')^-1 g``."""
    m = g.shape[0]
    for a in range(m):
        s = g[a]
        for k in range(a):
            s -= L[a, k] * out[k]
        out[a] = s / L[a, a]
    for a in range(m - 1, -1, -1):
        s = out[a]
        for k in range(a + 1, m):
            s -= L[k, a] * out[k]
        out[a] = s / L[a, a]


@njit(cache=True, nogil=True)
def _firth_score(D, mu, w, L, g, z):
    """Add Firth's term ``D (h (1/2 - mu))`` to the score ``g`` (``h``: the diagonal of the hat
    matrix, ``w_i |L^-1 d_i|^2``); return ``log det I / 2``. ``z``: work space (m,)."""
    m, n = D.shape
    half_logdet = 0.0
    for a in range(m):
        half_logdet += math.log(L[a, a])
    for i in range(n):
        h = 0.0
        for a in range(m):
            s = D[a, i]
            for k in range(a):
                s -= L[a, k] * z[k]
            z[a] = s / L[a, a]
            h += z[a] * z[a]
        r = w[i] * h * (0.5 - mu[i])
        for a in range(m):
            g[a] += D[a, i] * r
    return half_logdet


@njit(cache=True, nogil=True)
def _at(D, y, theta, firth, with_ll, work):
    """``(ok, log-likelihood)`` at ``theta`` (penalised with Firth), with the score in ``work.g`` and
    the information's Cholesky factor in ``work.L``; ok False where the information is singular."""
    ll = _pass(D, y, theta, with_ll or firth, work)
    if not _factor(work.L):
        return False, np.nan
    if firth:
        ll += _firth_score(D, work.mu, work.w, work.L, work.g, work.z)
    return True, ll


@njit(cache=True, nogil=True)
def fit_logit(D, y, theta, firth, work, free, tol):
    """Maximise the (penalised) log-likelihood from ``theta`` (updated in place) by Newton steps.
    A step past the maximum along its line (the slope there turned clearly negative) is cut back
    to where the secant puts the slope at zero; with Firth, a step that lowers the penalised
    likelihood is also halved (the ordinary fit needs no likelihood: its logarithms are the
    costly part of a pass). Only the first ``free`` coefficients move (the others stay as given:
    the null of a penalised test keeps the feature's coefficient at 0 and its penalty). Returns
    True when converged: the decrement fell below ``tol``. ``work``: the ``Scratch`` of the fit."""
    L, g, step, old = work.L, work.g, work.step, work.old
    m = D.shape[0]
    best = -np.inf
    old[:] = theta
    step[:] = 0.0
    check = firth
    decrement = 0.0
    for _ in range(MAX_STEPS):
        ok, ll = _at(D, y, theta, firth, check, work)
        if ok and decrement > 0.0:
            # Firth's steps (the modified score with the unpenalised information) can overshoot
            # and oscillate about the maximum, and a long Newton step can overshoot
            slope = 0.0
            for a in range(m):
                slope += g[a] * step[a]
            if slope < -0.1 * decrement:
                t = decrement / (decrement - slope)
                for a in range(m):
                    step[a] *= t
                    theta[a] = old[a] + step[a]
                ok, ll = _at(D, y, theta, firth, check, work)
        if not ok or check and not ll >= best - 1e-12 * abs(best):  # worse: halve the last step
            for _halving in range(30):
                for a in range(m):
                    step[a] *= 0.5
                    theta[a] = old[a] + step[a]
                ok, ll = _at(D, y, theta, firth, check, work)
                if ok and (not check or ll >= best - 1e-12 * abs(best)):
                    break
            if not ok:
                return False
        best = ll
        _solve(L, g[:free], step[:free])  # the leading block of L factors the free part
        step[free:] = 0.0
        decrement = 0.0
        for a in range(free):
            decrement += g[a] * step[a]
        for a in range(m):
            old[a] = theta[a]
            theta[a] += step[a]
        if decrement < tol:
            return True
    return False


@njit(cache=True, nogil=True)
def logit_gain(D, y, theta, null, firth, work):
    """``(l(theta) - l(null), variance of the last coefficient)``, the gain plus
    ``log det I(theta) / 2`` with Firth (``null``: the ``Null`` fit). Summed sample by sample as
    ``y d - log((1 + e^eta) / (1 + e^eta0))`` with ``d = eta - eta0``, in the form without
    cancellation: small differences of likelihoods near -n log 2 keep their relative precision."""
    eta0, mu0, nu0, w, L, tmp = null.eta, null.mu, null.nu, work.w, work.L, work.tmp
    m, n = D.shape
    w[:] = 0.0
    for k in range(m):
        t = theta[k]
        for i in range(n):
            w[i] += D[k, i] * t
    total = 0.0
    for i in range(n):
        eta = w[i]
        d = eta - eta0[i]
        # mu = mu0 e^d / (1 + mu0 (e^d - 1)), 1 - mu = nu0 / (1 + mu0 (e^d - 1)), and mirrored
        if d >= 0.0:
            grow = mu0[i] * math.expm1(d)
            total += y[i] * d - math.log1p(grow)
            w[i] = (mu0[i] + grow) * nu0[i] / ((1.0 + grow) * (1.0 + grow))
        else:
            grow = nu0[i] * math.expm1(-d)
            total += (y[i] - 1.0) * d - math.log1p(grow)
            w[i] = (nu0[i] + grow) * mu0[i] / ((1.0 + grow) * (1.0 + grow))
    _information(D, w, L, tmp)
    if not _factor(L):
        return np.nan, np.nan
    if firth:
        for a in range(m):
            total += math.log(L[a, a])
    return total, 1.0 / (L[m - 1, m - 1] * L[m - 1, m - 1])
