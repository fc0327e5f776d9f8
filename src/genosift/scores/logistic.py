"""Per-feature logistic regression that adjusts for covariates, with Firth's penalty where needed.

For every feature ``x`` the model is ``logit P(y = 1) = b0 + Z g + beta x`` (``y = 1`` for the
class that sorts last), fitted by maximum likelihood; the feature is tested by the
likelihood-ratio statistic ``2 (l1 - l0)`` against the null model ``(1, Z)``, fitted once.

The fit is batched over a block of features in one compiled kernel (``logit_fit``). Each feature
is first made scale-free: divided by a power of two (exact), centred and divided by its range,
then its part in the span of ``(1, Z)`` is removed (which leaves its coefficient unchanged and
conditions the problem); Newton steps then start from the null fit. A two-valued feature without
covariates has a closed form (the fitted probabilities are the shares of the 2x2 table), which is
what presence/absence k-mers without covariates get.

Separation, as SEER and pyseer handle it: a two-valued feature whose 2x2 table against the
classes has a cell of at most 1 or two cells of at most 5, a fit that does not converge, or a
standard error above 3 (per range of the feature: for a 0/1 feature, in log odds) is refitted
with Firth's penalised likelihood ``l + log det I / 2`` (Firth 1993), and tested by the penalised
likelihood ratio of Heinze & Schemper (2002), as R's logistf does: the null keeps the feature's
coefficient at 0 under the same penalty (pyseer fits the null with its own penalty, and SEER
compares with the unpenalised null; both can give a negative statistic). A fit that
fails either way, a constant feature and a feature in the span of the covariates are NaN; the
``note`` column says which.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit
from scipy import special

from ..core.constraints import Choice
from ._base import Scores, register
from .logit_fit import Null, dot, fit_logit, logit_gain, scratch
from .regression import COLLINEAR, design_basis

#: Newton steps stop when the decrement ``g' I^-1 g`` falls below this; the step it gives is
#: taken, after which the log-likelihood is within ~1e-20 of its maximum. Firth's steps (the
#: modified score with the information of the unpenalised model) converge more slowly: stricter.
TOLERANCE = 1e-8
FIRTH_TOLERANCE = 1e-15
#: The null model converges quadratically to this, while a separated one (coefficients running to
#: infinity) only gains about a factor e per step.
NULL_TOLERANCE = 1e-20
#: A standard error above this, per range of the feature, marks a (quasi-)separated fit (SEER, pyseer).
MAX_SE = 3.0
#: What happened to each feature, by the code the kernel returns.
NOTES = np.array(["", "bad-chisq", "high-se", "no-convergence", "constant", "in-covariate-span", "firth-fail"],
                 dtype=object)
ML, BAD_TABLE, HIGH_SE, NO_CONVERGENCE, CONSTANT, COLLINEAR_CODE, FIRTH_FAIL = range(7)
FIRTH_MODES = {"auto": 0, "always": 1, "never": 2}
#: What a logistic regression of the classes on the covariates alone that does not converge says.
SEPARATED = ("The covariates separate the classes: the logistic regression of y on the covariates alone does not "
             "converge (some combination of them predicts y perfectly, as a lineage without cases does).")


@njit(cache=True, nogil=True)
def _extremes(x):
    """``(lo, hi, scale, two_valued)``: ``scale`` the power of two at or below the largest magnitude."""
    top, lo, hi = 0.0, np.inf, -np.inf
    for v in x:
        top = max(top, abs(v))
        lo = min(lo, v)
        hi = max(hi, v)
    two = True
    for v in x:
        if v != lo and v != hi:
            two = False
            break
    return lo, hi, 2.0 ** np.floor(np.log2(top)) if top > 0.0 else 1.0, two


@njit(cache=True, nogil=True)
def _standardise(x, lo, hi, scale, D, q, r):
    """``r``: ``x`` divided by ``scale`` (exact), centred, divided by its range, and with its part in
    the span of the orthonormal rows ``D[:q]`` removed (twice, for rounding). Returns ``r``'s norm
    (0: in the span)."""
    n = x.shape[0]
    span = hi / scale - lo / scale
    mean = 0.0
    for i in range(n):
        mean += x[i] / scale
    mean /= n
    for i in range(n):
        r[i] = (x[i] / scale - mean) / span
    css = dot(r, r)
    for _ in range(2):
        for k in range(q):
            c = dot(D[k], r)
            for i in range(n):
                r[i] -= c * D[k, i]
    rr = dot(r, r)
    return math.sqrt(rr) if rr > COLLINEAR * css else 0.0


@njit(cache=True, nogil=True)
def _table(x, y):
    """The 2x2 table of a two-valued feature against the classes: counts of (low, y=0), (low, 1),
    (high, 0), (high, 1)."""
    hi = x.max()
    cells = np.zeros(4)
    for i in range(x.shape[0]):
        cells[2 * int(x[i] == hi) + int(y[i])] += 1.0
    return cells


@njit(cache=True, nogil=True)
def _bad_table(cells):
    """A cell <= 1, or two cells <= 5: the ordinary fit is unreliable (pyseer's rule)."""
    low = 0
    for c in cells:
        if c <= 1.0:
            return True
        low += c <= 5.0
    return low > 1


@njit(cache=True, nogil=True)
def _table_fit(cells, firth):
    """The fit of a two-valued feature without covariates, in closed form: the fitted
    probabilities are the columns' shares of y = 1 (with Firth's penalty, of the table with 1/2
    added to every cell). Returns ``(beta, se, gain)`` for the feature coded 0/1: the gain in
    log-likelihood over the null (with Firth, of the penalised fits, as in the iterative path);
    NaN where a cell is empty and there is no maximum-likelihood fit."""
    add = 0.5 if firth else 0.0
    n = cells.sum()
    share = (cells[1] + cells[3]) / n
    gain, w, logit = 0.0, np.ones(2), np.zeros(2)
    for col in range(2):
        no, yes = cells[2 * col] + add, cells[2 * col + 1] + add
        if not (no > 0.0 and yes > 0.0):
            return np.nan, np.nan, np.nan
        p = yes / (no + yes)
        logit[col] = math.log(yes / no)
        w[col] = (cells[2 * col] + cells[2 * col + 1]) * p * (1.0 - p)
        if cells[2 * col + 1] > 0.0:
            gain += cells[2 * col + 1] * math.log(p / share)
        if cells[2 * col] > 0.0:
            gain += cells[2 * col] * math.log((1.0 - p) / (1.0 - share))
    if firth:
        # minus the penalised null: the feature's coefficient 0, the full model's penalty, at its
        # maximum mu = (k + 1) / (n + 2)
        k = cells[1] + cells[3]
        mu = (k + 1.0) / (n + 2.0)
        gain += 0.5 * math.log(w[0] * w[1])
        gain -= k * math.log(mu / share) + (n - k) * math.log((1.0 - mu) / (1.0 - share)) + math.log(mu * (1.0 - mu))
        gain -= 0.5 * math.log((cells[0] + cells[1]) * (cells[2] + cells[3]))
    return logit[1] - logit[0], math.sqrt(1.0 / w[0] + 1.0 / w[1]), gain


@njit(cache=True, nogil=True)
def _closed_form(cells, code, mode, out):
    """``out[:4]`` of a two-valued feature without covariates (see ``_logistic_block``), by the
    same rules as the iterative fit."""
    if code == ML:
        beta, se, gain = _table_fit(cells, False)
        if not np.isfinite(beta):
            code = NO_CONVERGENCE
        elif not se <= MAX_SE:
            code = HIGH_SE
        if mode == 2 and code != ML:
            out[3] = code
            return
    if code != ML and mode != 2:
        beta, se, gain = _table_fit(cells, True)
    out[0], out[1], out[2], out[3] = beta, se, gain, code


@njit(cache=True, nogil=True)
def _logistic_block(X, y, Q, null, null_firth, null_fit, mode):
    """Fit every column of ``X``. Rows of the result (6, b): beta and se in standard units, the
    gain in log-likelihood over the null fit (``logit_gain``; penalised for Firth, for the column in
    standard units), the note code, and the range and scale (standard units are
    ``x / scale / range``, centred). ``null``, ``null_firth``: the null's coefficients by maximum
    likelihood and penalised; ``null_fit``: the ``Null`` fit by maximum likelihood."""
    n, b = X.shape
    q = Q.shape[1]
    m = q + 1
    out = np.full((6, b), np.nan)
    D = np.empty((m, n))
    D[:q] = Q.T
    r = np.empty(n)
    theta = np.empty(m)
    work = scratch(n, m)
    for j in range(b):
        lo, hi, scale, two = _extremes(X[:, j])
        if lo == hi:
            out[3, j] = CONSTANT
            continue
        out[4, j] = hi / scale - lo / scale  # standard units: x / scale / this
        out[5, j] = scale
        cells = _table(X[:, j], y) if two else np.zeros(4)
        code = BAD_TABLE if mode == 1 or mode == 0 and two and _bad_table(cells) else ML
        if two and q == 1:  # no covariates: closed form
            _closed_form(cells, code, mode, out[:, j])
            continue
        norm = _standardise(X[:, j], lo, hi, scale, D, q, r)
        if norm == 0.0:
            out[3, j] = COLLINEAR_CODE
            continue
        for i in range(n):
            D[q, i] = r[i] / norm
        gain, var = np.nan, np.nan
        if code == ML:
            theta[:q] = null
            theta[q] = 0.0
            if not fit_logit(D, y, theta, False, work, m, TOLERANCE):
                code = NO_CONVERGENCE
            else:
                gain, var = logit_gain(D, y, theta, null_fit, False, work)
                if not math.sqrt(var) / norm <= MAX_SE:
                    code = HIGH_SE
            if mode == 2 and code != ML:  # never Firth: no result
                out[3, j] = code
                continue
        if code != ML and mode != 2:
            theta[:q] = null_firth
            theta[q] = 0.0
            if not fit_logit(D, y, theta, True, work, m, FIRTH_TOLERANCE):
                out[3, j] = FIRTH_FAIL
                continue
            gain, var = logit_gain(D, y, theta, null_fit, True, work)
            beta = theta[q]
            # the null: the feature's coefficient held at 0, the penalty still the full model's
            theta[:q] = null_firth
            theta[q] = 0.0
            if not fit_logit(D, y, theta, True, work, q, FIRTH_TOLERANCE):
                out[3, j] = FIRTH_FAIL
                continue
            gain -= logit_gain(D, y, theta, null_fit, True, work)[0]
            theta[q] = beta
        out[0, j] = theta[q] / norm
        out[1, j] = math.sqrt(var) / norm
        out[2, j] = gain
        out[3, j] = code
    return out


class NullFit:
    """The null model ``(1, Z)`` of a target: by maximum likelihood and penalised."""

    def __init__(self, target):
        if target.classes is None or len(target.classes) != 2:
            raise ValueError("Method 'logistic' needs two classes.")
        self.y = (target.codes == 1).astype(np.float64)
        self.Q = design_basis(target)
        n, q = self.Q.shape
        if n < q + 2:
            raise ValueError(f"A logistic regression on {q - 1} covariate(s) and a feature needs more than {q + 1} "
                             f"samples; got {n}. Use fewer covariates or more samples.")
        self.firth = self._fit(True)  # where the penalised fits start
        try:
            self.ml, self.separated = self._fit(False), False
        except ValueError:
            # the covariates separate the classes (a lineage without cases, say): no maximum-likelihood
            # null exists, so every feature is tested by Firth's penalised likelihood, whose null does
            import warnings

            self.ml, self.separated = self.firth, True
            warnings.warn(SEPARATED + " Every feature is tested by Firth's penalised likelihood ratio instead "
                          "(note 'covariates-separate').", UserWarning, stacklevel=2)
        eta = self.Q @ self.ml
        self.fitted = Null(eta, special.expit(eta), special.expit(-eta))  # the maximum-likelihood null

    def _fit(self, firth):
        n, q = self.Q.shape
        theta = np.zeros(q)
        theta[0] = special.logit(self.y.mean()) * np.sqrt(n)  # the first column of Q is 1 / sqrt(n)
        converged = fit_logit(np.ascontiguousarray(self.Q.T), self.y, theta, firth, scratch(n, q), q,
                              FIRTH_TOLERANCE if firth else NULL_TOLERANCE)
        if not converged or not firth and np.abs(self.Q @ theta).max() > 25:
            # separated, the fit runs off to infinity: fitted probabilities within 1e-11 of 0 or 1
            raise ValueError(SEPARATED + " Remove or merge the covariates that predict y perfectly.")
        return theta


@lru_cache(maxsize=4)
def null_fit(target):
    """The ``NullFit`` of ``target``, fitted once for all its blocks of features (a ``Target``
    hashes by identity; it and its fit are never changed)."""
    return NullFit(target)


@register(
    "logistic", invariance="affine", task="classification", binary_only=True, streaming="blocks", pvalues=True,
    covariates=True, distinct="all",
    formula="logit P(y=1) = b0 + Z g + beta x by maximum likelihood (Firth's penalty under separation); "
            "statistic beta, score 2 (l1 - l0), p from chi2(1)",
    reference="SEER (Lees et al. 2016) and pyseer (Lees et al. 2018); Firth (1993); Heinze & Schemper (2002), "
              "Stat. Med. 21:2409; statsmodels Logit",
    options={"firth": Choice(*FIRTH_MODES)},
)
def logistic(block, target, *, firth="auto"):
    """Logistic regression likelihood-ratio test of each feature, given the covariates.

    Parameters
    ----------
    firth : str
        "auto": Firth's penalised likelihood where separation breaks the ordinary fit (a bad 2x2
        table, no convergence or a standard error above 3 per range of the feature), as SEER and
        pyseer do, and for every feature where the covariates alone separate the classes (no
        ordinary null model exists; a warning says so, note ``covariates-separate``); "always":
        every feature penalised; "never": ordinary fits only (a fit that does
        not converge or has a standard error above 3 is NaN, with the note).

    Columns: ``beta`` and ``se`` (feature units), ``wald_pvalue``, ``lrt_pvalue``, ``firth`` (1 where
    the penalised fit was used, 0 where not) and ``note`` (why: bad-chisq, high-se,
    no-convergence; or why no fit: constant, in-covariate-span, firth-fail).
    """
    null = null_fit(target)
    if null.separated and firth == "never":
        from ..core.messages import FixError

        raise FixError(SEPARATED + " Without Firth's penalty no feature can be tested: leave {firth} at auto, or "
                       "remove or merge the covariates that predict y perfectly.", owner="logistic", firth="auto")
    # one feature after another: each column contiguous
    out = _logistic_block(np.asfortranarray(block, dtype=np.float64), null.y, null.Q, null.ml, null.firth,
                          null.fitted, 1 if null.separated else FIRTH_MODES[firth])
    code = out[3].astype(np.intp)
    penalised = (code > ML) & (code < CONSTANT) & (firth != "never")
    lrt = np.maximum(2.0 * out[2], 0.0)
    beta, se = out[0] / out[4] / out[5], out[1] / out[4] / out[5]
    columns = {"beta": beta, "se": se, "wald_pvalue": 2.0 * special.ndtr(-np.abs(out[0] / out[1])),
               "lrt_pvalue": special.chdtrc(1.0, lrt), "firth": np.where(np.isnan(out[2]), np.nan, penalised * 1.0),
               "note": np.where(penalised & null.separated, "covariates-separate", NOTES[code])}
    return Scores(beta, columns["lrt_pvalue"], lrt, None, columns)
