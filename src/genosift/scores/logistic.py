"""Per-feature logistic regression that adjusts for covariates, with Firth's penalty where needed.

For every feature ``x`` the model is ``logit P(y = 1) = b0 + Z g + beta x`` (``y = 1`` for the
class that sorts last), fitted by maximum likelihood; the feature is tested by the
likelihood-ratio statistic ``2 (l1 - l0)`` against the null model ``(1, Z)``, fitted once.

The fit is batched over a block of features in one compiled kernel. Each feature is first made
scale-free: divided by a power of two (exact), centred and divided by its range, then its part in
the span of ``(1, Z)`` is removed (which leaves its coefficient unchanged and conditions the
problem); Newton steps with step halving then start from the null fit.

Separation, as SEER and pyseer handle it: a two-valued feature whose 2x2 table against the
classes has a cell of at most 1 or two cells of at most 5, a fit that does not converge, or a
standard error above 3 (per range of the feature: for a 0/1 feature, in log odds) is refitted
with Firth's penalised likelihood ``l + log det I / 2`` (Firth 1993; Heinze & Schemper 2002),
and its likelihood ratio compares the penalised fits of both models. The penalty is computed for
the feature coded ``(x - mean) / (max - min)``: for a 0/1 feature the usual coding. A fit that
fails either way, a constant feature and a feature in the span of the covariates are NaN; the
``note`` column says which.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy import special

from ._base import Scores, register
from .regression import COLLINEAR, design_basis, project_out

#: Newton steps stop when the decrement ``g' I^-1 g`` falls below this: the log-likelihood is then
#: within ~1e-20 of its maximum and the coefficients within ~1e-7 of theirs, relative.
TOLERANCE = 1e-14
MAX_STEPS = 50
#: A standard error above this, per range of the feature, marks a (quasi-)separated fit (SEER, pyseer).
MAX_SE = 3.0
#: What happened to each feature, by the code the kernel returns.
NOTES = np.array(["", "bad-chisq", "high-se", "no-convergence", "constant", "in-covariate-span", "firth-fail"],
                 dtype=object)
ML, BAD_TABLE, HIGH_SE, NO_CONVERGENCE, CONSTANT, COLLINEAR_CODE, FIRTH_FAIL = range(7)
FIRTH_MODES = {"auto": 0, "always": 1, "never": 2}


@njit(cache=True, nogil=True)
def _evaluate(D, y, theta, mu, w):
    """Fill ``mu``, ``w = mu (1 - mu)`` at ``theta``; return the log-likelihood."""
    n, m = D.shape
    ll = 0.0
    for i in range(n):
        eta = 0.0
        for k in range(m):
            eta += D[i, k] * theta[k]
        e = math.exp(-abs(eta))
        if eta >= 0.0:
            mu[i] = 1.0 / (1.0 + e)
            ll += y[i] * eta - eta - math.log1p(e)
        else:
            mu[i] = e / (1.0 + e)
            ll += y[i] * eta - math.log1p(e)
        w[i] = mu[i] * (1.0 - mu[i])
    return ll


@njit(cache=True, nogil=True)
def _cholesky(D, w, L):
    """``L``: the Cholesky factor of the information ``D' W D``; False if it is not positive definite."""
    n, m = D.shape
    for a in range(m):
        for b in range(a + 1):
            s = 0.0
            for i in range(n):
                s += D[i, a] * w[i] * D[i, b]
            L[a, b] = s
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
def _score(D, y, mu, w, L, firth, g, z):
    """The (penalised) score ``D' (y - mu + h (1/2 - mu))`` into ``g`` (``h``: the hat diagonal,
    Firth only); returns ``log det I / 2`` (0 without Firth). ``z``: work space (m,)."""
    n, m = D.shape
    half_logdet = 0.0
    if firth:
        for a in range(m):
            half_logdet += math.log(L[a, a])
    for a in range(m):
        g[a] = 0.0
    for i in range(n):
        r = y[i] - mu[i]
        if firth:
            h = 0.0
            for a in range(m):  # h_i = w_i |L^-1 d_i|^2
                s = D[i, a]
                for k in range(a):
                    s -= L[a, k] * z[k]
                z[a] = s / L[a, a]
                h += z[a] * z[a]
            r += w[i] * h * (0.5 - mu[i])
        for a in range(m):
            g[a] += D[i, a] * r
    return half_logdet


@njit(cache=True, nogil=True)
def _fit(D, y, theta, firth, mu, w, L, g, step, z, old):
    """Maximise the (penalised) log-likelihood from ``theta`` (updated in place) by Newton steps
    with step halving. Returns ``(converged, loglik, variance of the last coefficient)``."""
    m = D.shape[1]
    best = -np.inf
    old[:] = theta
    step[:] = 0.0
    for _ in range(MAX_STEPS):
        ll = _evaluate(D, y, theta, mu, w)
        ok = _cholesky(D, w, L)
        if ok:
            ll += _score(D, y, mu, w, L, firth, g, z)
        if not ok or not ll >= best - 1e-12 * abs(best):  # worse: halve the last step
            for halving in range(30):
                for a in range(m):
                    step[a] *= 0.5
                    theta[a] = old[a] + step[a]
                ll = _evaluate(D, y, theta, mu, w)
                ok = _cholesky(D, w, L)
                if ok:
                    ll += _score(D, y, mu, w, L, firth, g, z)
                    if ll >= best - 1e-12 * abs(best):
                        break
            if not ok:
                return False, np.nan, np.nan
        best = ll
        _solve(L, g, step)
        decrement = 0.0
        for a in range(m):
            decrement += g[a] * step[a]
        if decrement < TOLERANCE:
            for a in range(m):
                theta[a] += step[a]
            # (I^-1)_mm = 1 / L_mm^2; the last Newton step's gain is decrement / 2 (ML)
            return True, ll + (0.0 if firth else 0.5 * decrement), 1.0 / (L[m - 1, m - 1] * L[m - 1, m - 1])
        for a in range(m):
            old[a] = theta[a]
            theta[a] += step[a]
    return False, np.nan, np.nan


@njit(cache=True, nogil=True)
def _standardise(x, Q, r):
    """``r``: ``x`` divided by a power of two, centred, divided by its range and with its part in
    the span of ``Q`` removed. Returns ``(factor, norm, two_valued)``: ``x`` in standard units is
    ``x / factor``; ``r / norm`` is the column fitted (``norm`` 0: constant or in the span)."""
    n = x.shape[0]
    top, lo, hi = 0.0, np.inf, -np.inf
    for i in range(n):
        top = max(top, abs(x[i]))
        lo = min(lo, x[i])
        hi = max(hi, x[i])
    if lo == hi:
        return 1.0, 0.0, False
    scale = 2.0 ** np.floor(np.log2(top))
    span = hi / scale - lo / scale
    mean = 0.0
    for i in range(n):
        mean += x[i] / scale
    mean /= n
    css = 0.0
    two = True
    for i in range(n):
        r[i, 0] = (x[i] / scale - mean) / span
        css += r[i, 0] * r[i, 0]
        two = two and (x[i] == lo or x[i] == hi)
    project_out(Q, r)
    project_out(Q, r)
    rr = 0.0
    for i in range(n):
        rr += r[i, 0] * r[i, 0]
    if not rr > COLLINEAR * css:
        return scale * span, 0.0, two
    return scale * span, math.sqrt(rr), two


@njit(cache=True, nogil=True)
def _bad_table(x, y):
    """A two-valued feature's 2x2 table against the classes has a cell <= 1 or two cells <= 5."""
    hi = x.max()
    cells = np.zeros(4)
    for i in range(x.shape[0]):
        cells[2 * int(x[i] == hi) + int(y[i])] += 1.0
    low = 0
    for c in cells:
        if c <= 1.0:
            return True
        low += c <= 5.0
    return low > 1


@njit(cache=True, nogil=True)
def _constant(x):
    for i in range(x.shape[0]):
        if x[i] != x[0]:
            return False
    return True


@njit(cache=True, nogil=True)
def _logistic_block(X, y, Q, null, null_firth, mode):
    """Fit every column of ``X``. Rows of the result (6, b): beta and se in standard units, the
    log-likelihood (penalised for Firth, in standard units), the note code, and ``factor``
    (standard units are ``x / factor``)."""
    n, b = X.shape
    q = Q.shape[1]
    m = q + 1
    out = np.full((5, b), np.nan)
    D = np.empty((n, m))
    D[:, :q] = Q
    r = np.empty((n, 1))
    theta, g, step, z, old = np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    mu, w, L = np.empty(n), np.empty(n), np.zeros((m, m))
    for j in range(b):
        factor, norm, two = _standardise(X[:, j], Q, r)
        out[4, j] = factor
        if norm == 0.0:
            out[3, j] = CONSTANT if _constant(X[:, j]) else COLLINEAR_CODE
            continue
        for i in range(n):
            D[i, q] = r[i, 0] / norm
        code = BAD_TABLE if mode == 1 or mode == 0 and two and _bad_table(X[:, j], y) else ML
        if code == ML:
            theta[:q] = null
            theta[q] = 0.0
            converged, ll, var = _fit(D, y, theta, False, mu, w, L, g, step, z, old)
            if not converged:
                code = NO_CONVERGENCE
            elif math.sqrt(var) / norm > MAX_SE:
                code = HIGH_SE
            if mode == 2 and code == NO_CONVERGENCE:  # never Firth: no result
                out[3, j] = code
                continue
        if code != ML and mode != 2:
            theta[:q] = null_firth
            theta[q] = 0.0
            converged, ll, var = _fit(D, y, theta, True, mu, w, L, g, step, z, old)
            if not converged:
                out[3, j] = FIRTH_FAIL
                continue
            ll += math.log(norm)  # the penalty of the standardised column, not of r / norm
        out[0, j] = theta[q] / norm
        out[1, j] = math.sqrt(var) / norm
        out[2, j] = ll
        out[3, j] = code
    return out


class NullFit:
    """The null model ``(1, Z)`` of a target, fitted once: by maximum likelihood and penalised."""

    def __init__(self, target):
        if target.classes is None or len(target.classes) != 2:
            raise ValueError("Method 'logistic' needs two classes.")
        self.y = (target.codes == 1).astype(np.float64)
        self.Q = design_basis(target)
        n, q = self.Q.shape
        if n < q + 2:
            raise ValueError(f"A logistic regression on {q - 1} covariate(s) and a feature needs more than {q + 1} "
                             f"samples; got {n}. Use fewer covariates or more samples.")
        self.ml, self.ll = self._fit(False)
        self.firth, self.ll_firth = self._fit(True)

    def _fit(self, firth):
        n, q = self.Q.shape
        theta = np.zeros(q)
        theta[0] = special.logit(self.y.mean()) * np.sqrt(n)  # the first column of Q is 1 / sqrt(n)
        m = q
        converged, ll, var = _fit(self.Q, self.y, theta, firth, np.empty(n), np.empty(n), np.zeros((m, m)),
                                  np.empty(m), np.empty(m), np.empty(m), np.empty(m))
        if not converged:
            raise ValueError("The covariates separate the classes: the logistic regression of y on the covariates "
                             "alone does not converge. Remove or merge the covariates that predict y perfectly.")
        return theta, ll


@register(
    "logistic", invariance="affine", task="classification", binary_only=True, streaming="blocks", pvalues=True,
    signed=True, covariates=True,
    formula="logit P(y=1) = b0 + Z g + beta x by maximum likelihood (Firth's penalty under separation); "
            "statistic beta, score 2 (l1 - l0), p from chi2(1)",
    reference="SEER (Lees et al. 2016) and pyseer (Lees et al. 2018); Firth (1993); statsmodels Logit",
)
def logistic(block, target, *, firth="auto"):
    """Logistic regression likelihood-ratio test of each feature, given the covariates.

    Parameters
    ----------
    firth : str
        "auto": Firth's penalised likelihood where separation breaks the ordinary fit (a bad 2x2
        table, no convergence or a standard error above 3 per range of the feature), as SEER and
        pyseer do; "always": every feature penalised; "never": ordinary fits only (a fit that does
        not converge is NaN).

    Columns: ``beta`` and ``se`` (feature units), ``wald_pvalue``, ``lrt_pvalue``, ``firth`` (1 where
    the penalised fit was used, 0 where not) and ``note`` (why: bad-chisq, high-se,
    no-convergence; or why no fit: constant, in-covariate-span, firth-fail).
    """
    if firth not in FIRTH_MODES:
        raise ValueError(f"The 'firth' option of method 'logistic' must be one of {sorted(FIRTH_MODES)}. "
                         f"Got {firth!r} instead.")
    null = NullFit(target)
    out = _logistic_block(np.ascontiguousarray(block, dtype=np.float64), null.y, null.Q, null.ml, null.firth,
                          FIRTH_MODES[firth])
    code = out[3].astype(np.intp)
    penalised = (code > ML) & (code < CONSTANT) & (firth != "never")
    lrt = np.maximum(2.0 * (out[2] - np.where(penalised, null.ll_firth, null.ll)), 0.0)
    beta, se = out[0] / out[4], out[1] / out[4]
    columns = {"beta": beta, "se": se, "wald_pvalue": 2.0 * special.ndtr(-np.abs(out[0] / out[1])),
               "lrt_pvalue": special.chdtrc(1.0, lrt), "firth": np.where(np.isnan(out[2]), np.nan, penalised * 1.0),
               "note": NOTES[code]}
    return Scores(beta, columns["lrt_pvalue"], lrt, None, columns)
