"""The logistic mixed model of a binary target: each feature's score test, calibrated by a
saddlepoint approximation.

The model (GMMAT's and SAIGE's)::

    logit P(y_i = 1 | u) = b0 + Z_i g + beta x_i + u_i,   u ~ N(0, tau K)

with ``K`` the kinship of the samples scaled to a mean diagonal of 1 and ``tau`` the variance of
the random effect on the logit scale. The null model (``beta = 0``) is fitted once by penalised
quasi-likelihood (Breslow & Clayton 1993): for a given ``tau`` the mode of the fixed and random
effects by Newton's method on the penalised log-likelihood (step halving where a step lowers it),
and ``tau`` where the restricted-likelihood score of the working model vanishes,
``(y - mu)^T K (y - mu) = tr(P K)``, found by Brent's method on ``log tau`` (``tau = 0``, ordinary
logistic regression, where the score is negative from the start). With ``W = diag(mu (1 - mu))``
and ``V = tau K + W^-1``, ``P = V^-1 - V^-1 C (C^T V^-1 C)^-1 C^T V^-1`` (``C = (1, Z)``).

Each feature ``x`` is then tested by its score ``T = x^T (y - mu)`` (``mu`` the null's fitted
probabilities, random effects included) with its exact variance ``x^T P x`` under the working
model. Where ``|T| / sd`` exceeds ``SPA_CUTOFF``, the p-value is the saddlepoint approximation
(Barndorff-Nielsen's form of Lugannani & Rice) of the distribution of
``S = sum_i g_i (Y_i - mu_i)`` for independent ``Y_i ~ Bernoulli(mu_i)``, ``g`` the feature off the
covariates (``x - C (C^T W C)^-1 C^T W x``), at ``T`` rescaled to that sum's variance (SAIGE's
calibration; Dey et al. 2017 for the approximation). The normal approximation of a score is
poor exactly where a binary target's tests go wrong: a feature that, off the lineages, differs
in a handful of samples, and unbalanced classes; the saddlepoint's tail follows the Bernoulli
sums there.

``beta = T / x^T P x`` (one Newton step from the null) and ``se = 1 / sqrt(x^T P x)`` are on the
log-odds scale, per unit of the feature.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from numba import njit
from scipy import linalg, optimize, special

from ._base import Scores

__all__ = ["SPA_CUTOFF", "LogisticNull", "glmm_tests", "saddlepoint_pvalues"]

#: ``|z|`` above which the saddlepoint approximation gives the p-value (SAIGE's default).
SPA_CUTOFF = 2.0
#: The largest ``tau`` searched (the logit-scale variance of the random effect, on a kinship of mean
#: diagonal 1): beyond it every lineage is its own class, and the model says nothing more.
MAX_TAU = 1e4
MIN_TAU = 1e-6
#: A fitted probability is kept this far from 0 and 1 (the weights ``mu (1 - mu)`` stay positive).
MU_FLOOR = 1e-12
#: A feature whose variance off the covariates is below this share of its variance is in their span.
SPAN_TOL = 1e-9


class LogisticNull:
    """The null logistic mixed model of ``y`` (0/1) with design ``C`` (intercept first) and
    kinship ``K``: ``tau``, the fitted probabilities ``mu`` and what the tests of features need.

    ``residual``: ``y - mu``; ``L``: the Cholesky factor of ``B = I + tau W^1/2 K W^1/2`` (so that
    ``V^-1 = W^1/2 B^-1 W^1/2``); ``Q``: an orthonormal basis of ``L^-1 W^1/2 C``; ``CW``:
    ``C (C^T W C)^-1`` and ``WC``: ``W C``, to take a feature off the covariates for the
    saddlepoint."""

    def __init__(self, y, C, K):
        y = np.asarray(y, dtype=np.float64)
        self.n = n = y.size
        self.y, self.C = y, np.asarray(C, dtype=np.float64)
        K = np.asarray(K, dtype=np.float64)
        scale = float(np.trace(K)) / n
        if not scale > 0:
            raise ValueError("The kinship's diagonal sums to zero or less: it is no similarity of the samples.")
        self.K = K / scale  # a mean diagonal of 1: the scale of tau
        self.eta = np.full(n, special.logit(np.clip(y.mean(), MU_FLOOR, 1 - MU_FLOOR)))
        self.alpha = np.zeros(self.C.shape[1])
        self.evaluations = 0
        lo = self._score(MIN_TAU)
        if lo <= 0:
            tau = 0.0
        else:
            hi = self._score(MAX_TAU)
            if hi >= 0:
                tau = MAX_TAU
                warnings.warn(f"The logistic mixed model's random-effect variance reached its bound ({MAX_TAU:g} on "
                              "the logit scale): the kinship separates the classes. Its tests are those of that "
                              "bound.", UserWarning, stacklevel=3)
            else:
                tau = float(np.exp(optimize.brentq(lambda t: self._score(np.exp(t)), np.log(MIN_TAU),
                                                   np.log(MAX_TAU), xtol=1e-10, rtol=1e-12)))
        self.tau = tau
        self._mode(tau)
        self._finish()

    # --- the fit ---------------------------------------------------------------------------
    def _mode(self, tau):
        """The mode of the penalised log-likelihood at ``tau`` (Newton, step halving), from the
        last mode; sets ``eta``, ``alpha``, ``mu``, ``w`` and the factor ``L``."""
        C, K, y = self.C, self.K, self.y
        a = None
        objective = -np.inf
        for _ in range(200):
            mu = np.clip(special.expit(self.eta), MU_FLOOR, 1 - MU_FLOOR)
            w = mu * (1 - mu)
            sw = np.sqrt(w)
            L = self._factor(tau, sw)
            z = self.eta + (y - mu) / w
            Vz, VC = self._solve(L, sw, z), self._solve(L, sw, C)
            alpha = np.linalg.solve(C.T @ VC, C.T @ Vz)
            a_new = Vz - VC @ alpha
            eta_new = C @ alpha + tau * (K @ a_new)
            step = 1.0
            for _ in range(30):
                value = self._penalised(eta_new, a_new, tau)
                if value >= objective - 1e-10 * abs(objective) or a is None:
                    break
                step /= 2
                eta_new = self.eta + step * (eta_new - self.eta)
                a_new = a + step * (a_new - a)
                alpha = self.alpha + step * (alpha - self.alpha)
            if np.abs(eta_new).max() > 40:
                from ..core.messages import FixError

                raise FixError("The covariates separate the classes (a fitted probability runs off to 0 or 1), so "
                               "the logistic mixed model has no null fit. Remove or merge the covariates that "
                               "predict y perfectly, or score by the linear mixed model ({model}).",
                               owner="lmm", model="linear")
            change = np.abs(eta_new - self.eta).max()
            self.eta, self.alpha, a, objective = eta_new, alpha, a_new, value
            if change < 1e-10:
                break
        mu = np.clip(special.expit(self.eta), MU_FLOOR, 1 - MU_FLOOR)
        self.mu, self.w = mu, mu * (1 - mu)
        self.L = self._factor(tau, np.sqrt(self.w))
        self.evaluations += 1

    def _penalised(self, eta, a, tau):
        """``sum (y eta - log(1 + e^eta)) - tau a^T K a / 2`` (the random effects ``tau K a``)."""
        return float(self.y @ eta - np.logaddexp(0.0, eta).sum() - 0.5 * tau * (a @ (self.K @ a)))

    def _factor(self, tau, sw):
        B = tau * (sw[:, None] * self.K * sw[None, :])
        B[np.diag_indices_from(B)] += 1.0
        return linalg.cholesky(B, lower=True, check_finite=False)

    @staticmethod
    def _solve(L, sw, v):
        """``V^-1 v`` with ``V^-1 = W^1/2 B^-1 W^1/2``."""
        s = sw if v.ndim == 1 else sw[:, None]
        return s * linalg.cho_solve((L, True), s * v, check_finite=False)

    def _score(self, tau):
        """The restricted-likelihood score of the working model in ``tau`` at its mode (up to the
        factor 1/2): ``(y - mu)^T K (y - mu) - tr(P K)``."""
        self._mode(tau)
        r = self.y - self.mu
        sw = np.sqrt(self.w)
        Linv = linalg.solve_triangular(self.L, np.eye(self.n), lower=True, check_finite=False)
        trace_binv = float(np.sum(Linv * Linv))
        # tr(V^-1 K) = tr(B^-1 (B - I)) / tau, written to stay exact as tau -> 0
        S = sw[:, None] * self.K * sw[None, :]
        trace_vk = float(np.sum((Linv @ S) * Linv)) if tau < 1e-3 else (self.n - trace_binv) / tau
        VC = self._solve(self.L, sw, self.C)
        M = np.linalg.solve(self.C.T @ VC, VC.T @ self.K @ VC)
        return float(r @ (self.K @ r)) - (trace_vk - float(np.trace(M)))

    def _finish(self):
        sw = np.sqrt(self.w)
        self.sw = sw
        self.residual = self.y - self.mu
        self.Q = np.linalg.qr(linalg.solve_triangular(self.L, sw[:, None] * self.C, lower=True,
                                                      check_finite=False))[0]
        WC = self.w[:, None] * self.C
        self.WC, self.CW = WC, self.C @ np.linalg.inv(self.C.T @ WC)

    # --- what it reports ---------------------------------------------------------------------
    @property
    def h2(self):
        """The share of the latent (logit-scale) variance the random effect takes:
        ``tau / (tau + pi^2 / 3)``, on the kinship of mean diagonal 1."""
        return self.tau / (self.tau + np.pi ** 2 / 3)


def glmm_tests(block, null):
    """The score tests of the columns of ``block`` (n x m, float64) against ``null``: ``Scores``
    with the p-value (the saddlepoint's where ``|z| > SPA_CUTOFF``) and the columns
    ``beta``, ``se``, ``score_pvalue`` (the normal approximation) and ``spa`` (1 where the
    saddlepoint gave the p-value); the statistic is the normal quantile of the p-value, signed
    as the score ``T`` (``T / sd`` where the normal approximation holds)."""
    X = np.asarray(block, dtype=np.float64)
    T = X.T @ null.residual
    A = linalg.solve_triangular(null.L, null.sw[:, None] * X, lower=True, check_finite=False)
    total = np.einsum("ij,ij->j", A, A)
    inside = null.Q.T @ A
    var = total - np.einsum("ij,ij->j", inside, inside)
    untestable = ~(var > SPAN_TOL * total)
    var = np.where(untestable, np.nan, var)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(var)
        z = T / sd
    normal = 2.0 * special.ndtr(-np.abs(z))
    p = normal.copy()
    use = np.flatnonzero(np.abs(z) > SPA_CUTOFF)
    if use.size:
        G = X[:, use] - null.CW @ (null.WC.T @ X[:, use])
        spread = np.einsum("ij,i,ij->j", G, null.w, G)  # the variance of the Bernoulli sum
        q = np.abs(z[use]) * np.sqrt(spread)
        tail = saddlepoint_pvalues(G, null.mu, q)
        held = ~np.isnan(tail)
        p[use[held]] = tail[held]
        use = use[held]
    spa = np.zeros(X.shape[1])
    spa[use] = 1.0
    spa[untestable] = np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        beta, se = T / var, 1.0 / sd
    # the statistic is the z of the p-value, signed as the score: the ranking follows the p-values
    z = np.copysign(-special.ndtri(p / 2.0), T)  # (NaN where p is)
    return Scores(z, p, columns={"beta": beta, "se": se, "score_pvalue": normal, "spa": spa})


@njit(cache=True)
def _cgf(t, g, mu, logmu, log1mu):
    """``K(t), K'(t), K''(t)`` of ``sum g_i (Y_i - mu_i)``, ``Y_i ~ Bernoulli(mu_i)``."""
    k0 = k1 = k2 = 0.0
    for i in range(g.size):
        s = logmu[i] + t * g[i]
        # log(1 - mu + mu e^(t g)) and the tilted probability e = mu e^(t g) / (1 - mu + mu e^(t g))
        if s > log1mu[i]:
            lse = s + np.log1p(np.exp(log1mu[i] - s))
        else:
            lse = log1mu[i] + np.log1p(np.exp(s - log1mu[i]))
        e = np.exp(s - lse)
        k0 += lse - t * g[i] * mu[i]
        k1 += g[i] * (e - mu[i])
        k2 += g[i] * g[i] * e * (1.0 - e)
    return k0, k1, k2


@njit(cache=True)
def _upper_tail(g, mu, logmu, log1mu, q):
    """``P(S >= q)`` for ``q > 0`` by the saddlepoint (Barndorff-Nielsen's formula); 0 where ``q``
    is at the largest value ``S`` takes, the probability of that value; 0 beyond it."""
    top = 0.0
    corner = 0.0  # log P(S = top): every Y_i at the end its g_i favours
    for i in range(g.size):
        if g[i] > 0:
            top += g[i] * (1.0 - mu[i])
            corner += logmu[i]
        elif g[i] < 0:
            top -= g[i] * mu[i]
            corner += log1mu[i]
    if q > top * (1.0 + 1e-12):
        return 0.0
    if q >= top * (1.0 - 1e-12):
        return np.exp(corner)
    lo, hi = 0.0, 1.0
    for _ in range(2000):
        if _cgf(hi, g, mu, logmu, log1mu)[1] >= q:
            break
        lo, hi = hi, hi * 2.0
    t = 0.5 * (lo + hi)
    for _ in range(200):  # Newton's method, kept inside the bracket (bisection where it leaves)
        k0, k1, k2 = _cgf(t, g, mu, logmu, log1mu)
        if k1 > q:
            hi = t
        else:
            lo = t
        step = (k1 - q) / k2 if k2 > 0 else 0.0
        new = t - step
        if not (lo < new < hi) or k2 <= 0:
            new = 0.5 * (lo + hi)
        if abs(new - t) <= 1e-13 * max(1.0, abs(t)):
            t = new
            break
        t = new
    k0, k1, k2 = _cgf(t, g, mu, logmu, log1mu)
    r2 = 2.0 * (t * q - k0)
    if r2 <= 0 or k2 <= 0:
        return np.nan
    w = np.sqrt(r2)
    v = t * np.sqrt(k2)
    if w < 1e-6:
        return np.nan
    return 0.5 * math.erfc((w + np.log(v / w) / w) / np.sqrt(2.0))


@njit(cache=True)
def _saddlepoints(G, mu, q, out):
    logmu, log1mu = np.log(mu), np.log1p(-mu)
    for j in range(G.shape[1]):
        g = G[:, j]
        up = _upper_tail(g, mu, logmu, log1mu, q[j])
        down = _upper_tail(-g, mu, logmu, log1mu, q[j])
        out[j] = min(1.0, up + down)  # NaN where either side's approximation fails


def saddlepoint_pvalues(G, mu, q):
    """The two-sided saddlepoint p-values ``P(|S_j| >= q_j)`` of ``S_j = sum_i G_ij (Y_i - mu_i)``,
    ``Y_i ~ Bernoulli(mu_i)`` independent; NaN where the approximation does not hold (the tail
    is then the normal one's, which the caller keeps)."""
    G = np.asfortranarray(G, dtype=np.float64)
    out = np.empty(G.shape[1])
    _saddlepoints(G, np.asarray(mu, dtype=np.float64), np.asarray(q, dtype=np.float64), out)
    return out
