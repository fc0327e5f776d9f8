"""The elastic net over every feature: the path of penalties, screened, and its cross-validation.

``fit_path`` follows glmnet's path (a geometric sequence of penalties from the smallest that
keeps every feature out, warm starts, the same early stop) but never puts all features into the
solver: at each step the working set is the features already in the model and those the
*strong rule* (Tibshirani et al. 2012) keeps, the fit on the working set is checked against the
*KKT conditions* of every feature (one product ``X^T r`` per check, over several penalties at
once as in BASIL, Qian et al. 2020), and violators join the working set before the fit is
repeated. So the solution is that of the whole problem, and only the working set is ever dense.

A ``Design`` gives the path what it needs of the features: their gradients ``X^T R`` for a few
residual vectors and their standardised columns for the working set; ``batch`` penalties are
checked by one product, their working set holding the strong rule's features for the first and
the ``spare`` features of largest gradient besides (the working set stays small: the strong rule
of the batch's last penalty would keep a large share of millions of weak features). ``MemoryDesign`` holds a
matrix in memory; ``genosift.enet.store`` streams a store.

Identical columns (k-mers in the same genomes) are fitted as one: with ``m`` copies of a column
the solution gives each the same coefficient when ``l1_ratio < 1`` (the ridge term is strictly
convex), so the pattern's coefficient ``B`` (the copies' sum) is penalised by
``l1_ratio |B| + (1 - l1_ratio) / (2 m) B^2``, and each copy receives ``B / m``. With ``l1_ratio = 1`` the
lasso's solutions split ``B`` between copies in any way; the equal split is the one with the
smallest norm, and the one returned.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ..core.distinct import distinct_columns
from .kernels import enet_fit

__all__ = ["EnetPath", "MemoryDesign", "PenaltyGrid", "Solver", "deviances", "fit_path", "in_data_units", "means",
           "objective", "penalties", "squared_deviations", "value_range"]

#: glmnet's early stop of a path: the share of the null deviance explained, and the smallest
#: relative gain from one penalty to the next.
DEV_MAX, DEV_GAIN = 0.999, 1e-5


def value_range(values):
    """The smallest and largest value of each column of the (n, p) ``values`` (dense, or sparse
    with its implicit zeros), to tell constant columns exactly."""
    if not sp.issparse(values):
        values = np.asarray(values)
        return values.min(axis=0), values.max(axis=0)
    values = sp.csc_matrix(values)
    n, p = values.shape
    nnz = np.diff(values.indptr)
    low, high = np.zeros(p), np.zeros(p)
    stored = np.flatnonzero(nnz)
    if stored.size:
        starts = values.indptr[stored]
        low[stored] = np.minimum.reduceat(values.data, starts)
        high[stored] = np.maximum.reduceat(values.data, starts)
        full = nnz[stored] == n  # no implicit zero
        low[stored[~full]] = np.minimum(low[stored[~full]], 0.0)
        high[stored[~full]] = np.maximum(high[stored[~full]], 0.0)
    return low, high


def squared_deviations(values, mean):
    """The sum of squared deviations from ``mean`` of each column of the (n, p) ``values`` (dense,
    or sparse: its implicit zeros counted once per column, not densified)."""
    n = values.shape[0]
    if sp.issparse(values):
        values = sp.csc_matrix(values)
        nnz = np.diff(values.indptr)
        col = np.repeat(np.arange(values.shape[1]), nnz)
        dev = values.data - mean[col]
        return np.bincount(col, weights=dev * dev, minlength=values.shape[1]) + (n - nnz) * mean**2
    return ((np.asarray(values) - mean) ** 2).sum(axis=0)


class MemoryDesign:
    """The features of an (n, p) matrix in memory (dense or sparse), identical columns as one.

    ``X`` holds the distinct columns on the rows fitted; ``ridge[j]`` is ``1 / copies``;
    ``usable`` marks the columns that vary on these rows (the others, constant, never enter the model).
    """

    batch = 1
    spare = 0

    def __init__(self, X, copies):
        n = X.shape[0]
        self.X = X.tocsc() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        self.n = n
        self.copies = np.asarray(copies, dtype=np.float64)
        self.ridge = 1.0 / self.copies
        self.mean = np.asarray(self.X.mean(axis=0), dtype=np.float64).ravel()
        low, high = value_range(self.X)
        self.usable = low < high  # (a constant column's rounded mean may leave it a scale of 1e-16)
        self.scale = np.where(self.usable, np.sqrt(squared_deviations(self.X, self.mean) / n), 0.0)
        self.inverse_scale = np.where(self.usable, 1.0 / np.where(self.usable, self.scale, 1.0), 0.0)

    @classmethod
    def of(cls, X):
        """A design of ``X`` with its identical columns as one, and the inverse map: the column of
        the design each feature of ``X`` is (``None``: all differ)."""
        M = X.tocsc() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        if sp.issparse(M):
            M = M.copy()
            M.sum_duplicates()
            M.eliminate_zeros()
        found = distinct_columns(M)
        if found is None:
            return cls(M, np.ones(M.shape[1])), None
        first, inverse = found
        return cls(M[:, first], np.bincount(inverse)), inverse

    def rows(self, index):
        """The design of these rows (the same columns and copies)."""
        return type(self)(self.X[index], self.copies)

    @property
    def n_columns(self):
        return self.X.shape[1]

    def gradients(self, R):
        """``X~^T R / n`` for the standardised columns ``X~`` (0 for constant ones), (p, L)."""
        R = np.asarray(R, dtype=np.float64).reshape(self.n, -1)
        G = np.asarray(self.X.T @ R) - np.outer(self.mean, R.sum(axis=0))
        return G * (self.inverse_scale / self.n)[:, None]

    def dot(self, B, rows=None):
        """``X[rows] @ B`` for the (p, L) sparse ``B`` (every row when ``rows`` is None), dense (n, L)."""
        product = (self.X if rows is None else self.X[rows]) @ B
        return product.toarray() if sp.issparse(product) else np.asarray(product)

    def columns(self, index):
        """The standardised columns ``index``, one row each: a C-ordered (len(index), n) array."""
        block = self.X[:, index]
        block = block.toarray() if sp.issparse(block) else np.asarray(block)
        return np.ascontiguousarray(((block - self.mean[index]) * self.inverse_scale[index]).T)


@dataclass
class EnetPath:
    """A fitted path. Coefficients are on the design's columns in standardised units (``beta``:
    a CSC (p, L)); ``unscaled`` turns them into the data's units."""

    lambdas: np.ndarray
    intercept: np.ndarray            # (L,) standardised coordinates
    beta: sp.csc_matrix              # (p, L)
    covariate_beta: np.ndarray       # (L, c) standardised
    deviance: np.ndarray
    null_deviance: float
    sweeps: np.ndarray
    ridge: np.ndarray = None         # (p,) the ridge term's weight of each column
    covariate_mean: np.ndarray = None
    covariate_scale: np.ndarray = None
    checks: int = 0                  # passes over all features (KKT checks, the first gradient)
    working: int = 0                 # the largest working set
    info: dict = field(default_factory=dict)

    @property
    def dev_ratio(self):
        return 1.0 - self.deviance / self.null_deviance

    @property
    def df(self):
        return np.diff(self.beta.indptr)


def deviances(y, eta, logistic):
    """The deviance of each column of ``eta`` ((n,) or (n, L)) for the 0/1 or numeric ``y``."""
    eta = np.asarray(eta, dtype=np.float64)
    yy = y if eta.ndim == 1 else y[:, None]
    if logistic:
        return 2.0 * (np.logaddexp(0.0, eta) - yy * eta).sum(axis=0)
    return ((yy - eta) ** 2).sum(axis=0)


def penalties(beta, l1_ratio, ridge):
    """``P(b)`` of each column of the standardised coefficients ``beta`` (p, L) (CSC or dense)."""
    B = beta.toarray() if sp.issparse(beta) else np.asarray(beta)
    return l1_ratio * np.abs(B).sum(axis=0) + 0.5 * (1.0 - l1_ratio) * (ridge[:, None] * B * B).sum(axis=0)


def objective(y, eta, lam, penalty, logistic):
    """glmnet's objective: the mean loss (half the mean deviance) plus ``lam * penalty``."""
    return deviances(y, eta, logistic) / (2.0 * y.shape[0]) + lam * penalty


def _standardised(Z):
    """Covariates as rows of a C-ordered (c, n) array of mean 0 and mean square 1, with their
    means and scales; a constant covariate is an error."""
    Z = np.asarray(Z, dtype=np.float64)
    mean = Z.mean(axis=0)
    low, high = value_range(Z)
    if (low == high).any():
        raise ValueError(f"Covariate {int(np.flatnonzero(low == high)[0])} is constant over the samples fitted: "
                         "with the intercept it explains nothing. Leave it out.")
    scale = np.sqrt(squared_deviations(Z, mean) / Z.shape[0])
    return np.ascontiguousarray(((Z - mean) / scale).T), mean, scale


def means(eta, logistic):
    """The model's mean at the linear predictor ``eta``: the probability (logistic) or ``eta``."""
    return expit(eta) if logistic else eta


@dataclass(frozen=True)
class Solver:
    """How a path is fitted. ``tol`` is glmnet's ``thresh``: a fit stops when no coordinate moves
    the objective by more than ``tol`` times the null deviance per sample; ``max_sweeps`` bounds
    the sweeps of one fit; ``stop_early`` ends the path where glmnet does (the deviance explained
    saturates); ``batch`` penalties are checked by one product (None: the design's);
    ``screen=False`` puts every feature in the working set from the start (the reference the
    screen is tested against)."""

    tol: float = 1e-7
    max_sweeps: int = 100_000
    stop_early: bool = True
    batch: int | None = None
    screen: bool = True


@dataclass(frozen=True)
class PenaltyGrid:
    """The penalties of a path: ``lambdas`` (decreasing) as given, else ``n_lambdas`` from the
    smallest penalty that keeps every feature out down to ``min_ratio`` times it (glmnet's
    defaults: 0.01 when there are more features than samples, else 1e-4)."""

    lambdas: object = None
    n_lambdas: int = 100
    min_ratio: float | None = None

    def of(self, lam_max, wide):
        """The penalties from ``lam_max`` (the smallest that keeps every feature out) for a
        ``wide`` design (more features than samples), checked."""
        lambdas, n_lambdas, min_ratio = self.lambdas, self.n_lambdas, self.min_ratio
        if lambdas is None:
            if min_ratio is None:
                min_ratio = 0.01 if wide else 1e-4
            lambdas = (lam_max * min_ratio ** (np.arange(n_lambdas) / max(n_lambdas - 1, 1))
                       if lam_max > 0 else np.zeros(1))
        lambdas = np.asarray(lambdas, dtype=np.float64)
        if lambdas.ndim != 1 or not lambdas.size or (lambdas < 0).any() or (np.diff(lambdas) > 0).any():
            raise ValueError("The penalties (lambdas) must be a non-empty decreasing sequence of numbers >= 0.")
        return lambdas


@dataclass(frozen=True)
class _Problem:
    """What every fit along a path shares: the target, the family and the mix of the penalties,
    the standardised covariates ``Zs`` (one row each) with their means and scales, the null model
    (its deviance and intercept), the threshold of convergence, the factor of the ridge term (glmnet
    fits a numeric target divided by its standard deviation) and the sweeps allowed."""

    y: np.ndarray
    logistic: bool
    l1_ratio: float
    Zs: np.ndarray
    zmean: np.ndarray
    zscale: np.ndarray
    null_deviance: float
    null_intercept: float
    thresh: float
    shrink: float
    max_sweeps: int


def fit_path(design, y, *, logistic, l1_ratio=0.5, grid=PenaltyGrid(), covariates=None, solver=Solver()):
    """The elastic-net path of ``y`` on the design's features (and unpenalised covariates), at the
    penalties of ``grid`` (``PenaltyGrid``). ``solver``: how the fits are made and checked (``Solver``).
    """
    problem = _problem(y, covariates, logistic, l1_ratio, solver)
    y, Zs, c = problem.y, problem.Zs, problem.Zs.shape[0]
    b0, gamma = _covariates_fit(problem)  # where every path starts
    g = design.gradients(y - means(b0 + gamma @ Zs, logistic))[:, 0]
    lam_max = float(np.abs(g).max()) / max(l1_ratio, 1e-3)
    lambdas = grid.of(lam_max, design.n_columns > y.shape[0])
    batch = design.batch if solver.batch is None else solver.batch
    L, p = lambdas.size, design.n_columns
    in_set = np.zeros(p, dtype=bool)
    working = np.empty(0, dtype=np.int64)
    W = Zs
    beta_w = gamma.copy()                    # covariates first, then the working features
    kept = {"b0": [], "beta": [], "dev": [], "sweeps": []}
    if not solver.screen:
        working, W, beta_w = _grow(design, working, W, beta_w, np.flatnonzero(design.usable), in_set)
    prev = max(lam_max, lambdas[0])
    k, largest, checks = 0, 0, 1
    while k < L:
        end = min(k + batch, L)
        strong = _strong(design, g, in_set, l1_ratio * (2.0 * lambdas[k] - prev), end - k > 1)
        if strong.any():
            working, W, beta_w = _grow(design, working, W, beta_w, np.flatnonzero(strong), in_set)
        largest = max(largest, working.size)
        start_b0, start = b0, beta_w.copy()
        trial, residuals = _fit_batch(problem, design, W, working, lambdas[k:end], b0, beta_w)
        G = design.gradients(residuals)
        checks += 1
        bad, violators = _first_violated(design, in_set, G, lambdas[k:end], l1_ratio)
        accepted = end - k if bad is None else bad
        if _kept(kept, trial[:accepted], solver.stop_early, problem.null_deviance):
            break
        if accepted:
            b0, beta_w = trial[accepted - 1][0], trial[accepted - 1][1].copy()
            g = G[:, accepted - 1]
            prev = lambdas[k + accepted - 1]
        else:
            b0, beta_w = start_b0, start
        if bad is not None:
            working, W, beta_w = _grow(design, working, W, beta_w, np.flatnonzero(violators), in_set)
        k += accepted
    path = _path(lambdas[:len(kept["b0"])], kept, working, c, p, problem.null_deviance, checks, largest)
    path.ridge = problem.shrink * design.ridge
    path.covariate_mean, path.covariate_scale = problem.zmean, problem.zscale
    return path


def _problem(y, covariates, logistic, l1_ratio, solver):
    """The ``_Problem`` of a path: the covariates standardised, the null model fitted (a constant
    target is an error)."""
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    if covariates is None:
        Zs, zmean, zscale = np.empty((0, n)), np.empty(0), np.empty(0)
    else:
        Zs, zmean, zscale = _standardised(covariates)
    ybar = y.mean()
    null_eta = np.full(n, math.log(ybar / (1 - ybar)) if logistic else ybar)
    null_deviance = float(deviances(y, null_eta, logistic))
    if not null_deviance > 0:
        raise ValueError("The target is constant over the samples fitted: there is nothing to explain.")
    # glmnet fits a numeric target divided by its standard deviation s (the penalty divided by s
    # too), which leaves the lasso term as written and divides the ridge term by s: the same here
    shrink = 1.0 if logistic else 1.0 / math.sqrt(null_deviance / n)
    return _Problem(y, logistic, l1_ratio, Zs, zmean, zscale, null_deviance, float(null_eta[0]),
                    solver.tol * null_deviance / n, shrink, solver.max_sweeps)


def _covariates_fit(problem):
    """The intercept and the coefficients of the covariates' (unpenalised) fit."""
    c = problem.Zs.shape[0]
    gamma = np.zeros(c)
    b0 = problem.null_intercept
    if c:
        b0, _, ok = enet_fit(problem.Zs, problem.y, problem.logistic, 0.0, problem.l1_ratio, np.zeros(c),
                             np.ones(c, dtype=np.bool_), gamma, b0, problem.thresh, problem.max_sweeps)
        _check_converged(ok, "the covariates' fit")
    return b0, gamma


def _strong(design, g, in_set, cut, several):
    """The features out of the working set that the strong rule keeps (gradient ``g`` at least
    ``cut``), and, for a batch of ``several`` penalties, the design's ``spare`` next strongest."""
    out = design.usable & ~in_set
    strong = out & (np.abs(g) >= cut)
    spare = design.spare if several else 0
    if spare:
        rest = np.flatnonzero(out & ~strong)
        if rest.size > spare:
            rest = rest[np.argpartition(-np.abs(g[rest]), spare)[:spare]]
        strong[rest] = True
    return strong


def _fit_batch(problem, design, W, working, lambdas, b0, beta_w):
    """The fits on the working set ``W`` at each of ``lambdas``, warm-started from ``b0`` and
    ``beta_w`` (updated in place): ``(b0, beta, deviance, sweeps)`` of each, and the residuals."""
    y, logistic, c = problem.y, problem.logistic, problem.Zs.shape[0]
    ridge = np.concatenate([np.zeros(c), problem.shrink * design.ridge[working]])
    free = np.concatenate([np.ones(c, dtype=np.bool_), np.zeros(working.size, dtype=np.bool_)])
    trial, residuals = [], np.empty((y.shape[0], lambdas.size))
    for t, lam in enumerate(lambdas):
        b0, sweeps, ok = enet_fit(W, y, logistic, lam, problem.l1_ratio, ridge, free, beta_w, b0, problem.thresh,
                                  problem.max_sweeps)
        _check_converged(ok, f"the fit at lambda {lam:.6g}")
        eta = b0 + beta_w @ W
        residuals[:, t] = y - means(eta, logistic)
        trial.append((b0, beta_w.copy(), float(deviances(y, eta, logistic)), sweeps))
    return trial, residuals


def _first_violated(design, in_set, G, lambdas, l1_ratio):
    """The first of ``lambdas`` at which a feature out of the working set violates the KKT
    conditions (gradients ``G``, one column each), with those features; ``(None, None)``."""
    for t, lam in enumerate(lambdas):
        violators = design.usable & ~in_set & (np.abs(G[:, t]) > l1_ratio * lam)
        if violators.any():
            return t, violators
    return None, None


def _kept(kept, trials, stop_early, null_deviance):
    """Adds the accepted ``trials`` to ``kept``; whether the path stops there (``stop_early``:
    the deviance explained saturates)."""
    for b0_t, beta_t, dev_t, sweeps_t in trials:
        kept["b0"].append(b0_t)
        kept["beta"].append(beta_t)
        kept["dev"].append(dev_t)
        kept["sweeps"].append(sweeps_t)
        if stop_early and _saturated(kept["dev"], null_deviance):
            return True
    return False


def in_data_units(path, design):
    """``(intercept (L,), B (p, L) CSC, gamma (L, c))``: the path's coefficients in the data's units,
    ``B`` per column of the design (a column standing for ``m`` features carries their sum)."""
    B = sp.csc_matrix(path.beta.multiply(design.inverse_scale[:, None]))
    gamma = path.covariate_beta / path.covariate_scale
    intercept = path.intercept - B.T @ design.mean - gamma @ path.covariate_mean
    return intercept, B, gamma


def _grow(design, working, W, beta_w, new, in_set):
    """The working set with the features ``new`` added (their coefficients 0)."""
    in_set[new] = True
    return (np.concatenate([working, new]), np.vstack([W, design.columns(new)]),
            np.concatenate([beta_w, np.zeros(new.size)]))


def _saturated(dev, null_deviance):
    ratio = 1.0 - dev[-1] / null_deviance
    if ratio >= DEV_MAX:
        return True
    return len(dev) > 1 and ratio - (1.0 - dev[-2] / null_deviance) < DEV_GAIN * ratio


def _check_converged(ok, what):
    if not ok:
        raise RuntimeError(f"The elastic net did not converge for {what}: raise max_sweeps, or loosen tol.")


def _path(lambdas, kept, working, c, p, null_deviance, checks, largest):
    L = lambdas.size
    order = np.argsort(working, kind="stable")
    rows, cols, vals = [], [], []
    for t, beta in enumerate(kept["beta"]):
        b = beta[c:]
        b = np.concatenate([b, np.zeros(working.size - b.size)])[order]
        nz = np.flatnonzero(b)
        rows.append(working[order][nz])
        cols.append(np.full(nz.size, t))
        vals.append(b[nz])
    beta = sp.csc_matrix((np.concatenate(vals) if vals else np.empty(0),
                          (np.concatenate(rows) if rows else np.empty(0, dtype=np.int64),
                           np.concatenate(cols) if cols else np.empty(0, dtype=np.int64))), shape=(p, L))
    cov = np.array([b[:c] for b in kept["beta"]]).reshape(L, c)
    return EnetPath(lambdas, np.array(kept["b0"]), beta, cov, np.array(kept["dev"]), null_deviance,
                    np.array(kept["sweeps"]), checks=checks, working=largest)
