"""Gaussian model-X knockoffs: the features' covariance, the S-matrix, and the knockoff draws.

A knockoff copy ``X~`` of the features ``X`` is drawn so that ``(X, X~)`` keeps its distribution
when any feature is swapped with its copy, and ``X~`` knows nothing of ``y`` beyond ``X``. For
Gaussian features of covariance ``Sigma`` (Candes et al. 2018) the joint covariance is
``[[Sigma, Sigma - S], [Sigma - S, Sigma]]``, valid whenever ``S >= 0`` and ``2 Sigma - S >= 0``;
the larger ``S``, the less a copy resembles its feature and the more power. Given ``X``,

    X~ = mu + (X - mu) (I - Sigma^-1 S) + N(0, 2S - S Sigma^-1 S).

``S`` is found on the correlation scale and is block diagonal over the groups of features
(Dai & Barber 2016), ``S_g = gamma_g C_gg``: one scale per group (one per feature without groups),
chosen by

- ``"equi"``: every ``gamma_g`` equal, the largest that keeps ``2C - S`` semi-definite (capped at 1);
- ``"sdp"``: the largest sum of ``|g| gamma_g`` with ``gamma_g <= 1`` (Barber & Candes' SDP);
- ``"maxent"``: the largest ``log det`` of the joint covariance (Gimenez & Zou 2019);
- ``"mvr"``: the smallest trace of its inverse (minimum variance-based reconstructability,
  Spector & Janson 2022).

All four are convex in the scales; they are solved by Newton's method (``sdp`` through a log
barrier), whose gradient and Hessian need one inverse of ``2C - S`` per step (``O(p^3)``).
Features are centred (and, given covariates, regressed on them) before their covariance is
estimated, shrunk by Ledoit & Wolf's rule so that it is invertible when there are more features
than samples; the knockoffs are then drawn given the covariates too.

The guarantee of the knockoff filter holds exactly for Gaussian features whose covariance is
known; an estimated covariance, and presence/absence or counts treated as Gaussian (their first two
moments matched: "second-order" knockoffs), are approximations.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as la

from ..core.choices import S_METHODS

__all__ = ["S_METHODS", "FeatureModel", "KnockoffSampler", "feature_model", "knockoff_draw", "s_matrix"]

#: The share of the largest feasible S kept, so that the knockoffs' covariance stays positive definite.
MARGIN = 1e-5
#: The SDP's barrier is followed until its duality gap is this share of the objective's largest value.
GAP = 1e-7


class FeatureModel:
    """The Gaussian model of the features knockoffs are drawn from.

    ``fitted`` (n, p) the features' means (given the covariates), ``scale`` (p,) their standard
    deviations, ``corr`` (p, p) their shrunk correlation; ``residuals`` (n, p) the standardised
    deviations from the means.
    """

    def __init__(self, fitted, residuals, scale, corr, shrinkage):
        self.fitted, self.residuals, self.scale, self.corr, self.shrinkage = fitted, residuals, scale, corr, shrinkage


def feature_model(X, *, covariates=None, shrinkage="ledoit_wolf"):
    """The ``FeatureModel`` of the dense (n, p) ``X``: each column's mean (a regression on the
    ``covariates`` and an intercept, when given) and the residuals' correlation, shrunk by
    Ledoit & Wolf's rule (``shrinkage="ledoit_wolf"``) or a share ``shrinkage`` in [0, 1) of the
    way to the identity."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    basis = np.ones((n, 1)) if covariates is None else np.column_stack([np.ones(n), covariates])
    coef, *_ = la.lstsq(basis, X, lapack_driver="gelsy")
    fitted = basis @ coef
    R = X - fitted
    scale = np.sqrt((R * R).mean(axis=0))
    if not (scale > 1e-12 * np.maximum(np.abs(X).max(axis=0), 1.0)).all():
        raise ValueError("A feature is constant (given the covariates) over the samples: it cannot have a "
                         "knockoff. Leave out the constant features.")
    R = R / scale
    if shrinkage == "ledoit_wolf":
        from sklearn.covariance import ledoit_wolf

        cov, shrunk = ledoit_wolf(R, assume_centered=True)
    else:
        shrunk = float(shrinkage)
        cov = (1.0 - shrunk) * (R.T @ R / n) + shrunk * np.eye(X.shape[1])
    d = np.sqrt(np.diag(cov))
    corr = cov / np.outer(d, d)
    return FeatureModel(fitted, R, scale, (corr + corr.T) / 2.0, float(shrunk))


def _membership(groups, p):
    """``(labels 0..G-1 of each feature, G)``; every feature its own group when ``groups`` is None."""
    if groups is None:
        return np.arange(p), p
    _, labels = np.unique(np.asarray(groups), return_inverse=True)
    return labels.ravel(), int(labels.max()) + 1


def _block_diagonal(C, labels):
    """The (p, p) matrix of ``C``'s blocks within groups (zeros between groups)."""
    return np.where(labels[:, None] == labels[None, :], C, 0.0)


def _sum_blocks(M, labels, G):
    """The (G, G) sums of ``M`` over the blocks of the groups' features."""
    if G == labels.size:  # every feature its own group
        out = np.empty_like(M)
        out[np.ix_(labels, labels)] = M
        return out
    import scipy.sparse as sp

    Z = sp.csr_matrix((np.ones(labels.size), (np.arange(labels.size), labels)), shape=(labels.size, G))
    return np.asarray((Z.T @ (Z.T @ M).T).T)


def _equi_scale(C, D):
    """The largest ``gamma`` with ``2C - gamma D`` semi-definite (``D`` the within-group blocks)."""
    if np.array_equal(C, D):
        return 2.0
    if np.array_equal(np.diag(D), D.sum(axis=1)) and (np.diag(D) == 1.0).all():  # D = I: every feature alone
        low = la.eigh(C, eigvals_only=True, subset_by_index=[0, 0])[0]
    else:
        low = la.eigh(C, D, eigvals_only=True, subset_by_index=[0, 0])[0]
    return 2.0 * float(low)


def s_matrix(C, *, method="mvr", groups=None, tol=1e-8, max_steps=500):
    """The S-matrix of the (p, p) correlation matrix ``C``: ``(S (p, p), gamma (G,))`` with
    ``S_g = gamma_g C_gg`` over the ``groups`` (one label per feature; None: each its own), by
    ``method`` (one of ``S_METHODS``, see the module)."""
    C = np.asarray(C, dtype=np.float64)
    p = C.shape[0]
    labels, G = _membership(groups, p)
    D = _block_diagonal(C, labels)
    top = min(1.0, _equi_scale(C, D))
    if method == "equi" or top <= 0:
        gamma = np.full(G, max(top, 0.0) * (1.0 - MARGIN))
    elif method in ("mvr", "maxent", "sdp"):
        gamma = _newton(C, D, labels, method, np.full(G, 0.5 * top), tol, max_steps)
    else:
        raise ValueError(f"The S-matrix method must be one of {list(S_METHODS)}. Got {method!r} instead.")
    return D * gamma[labels][:, None], gamma


def _objective(C, D, labels, gamma, size, method, t, inv_blocks):
    """The objective at ``gamma`` with its gradient and Hessian; None where ``2C - S`` is not
    positive definite (or ``gamma`` out of its bounds)."""
    if (gamma <= 0).any() or (method == "sdp" and (gamma >= 1).any()):
        return None
    A = 2.0 * C - D * gamma[labels][:, None]
    try:
        factor = la.cho_factor(A, lower=True, check_finite=False)
    except la.LinAlgError:
        return None
    logdet = 2.0 * np.log(np.diag(factor[0])).sum()
    Ainv = _inverse(factor[0])
    G = size.size
    alone = G == labels.size  # D is the identity
    P = Ainv if alone else Ainv @ D
    trace = np.bincount(labels, weights=np.diag(P), minlength=G)          # tr(A^-1 B_g)
    if method == "mvr":
        Q = Ainv @ Ainv
        value = (inv_blocks / gamma).sum() + np.trace(Ainv)
        QD = np.diag(Q) if alone else np.einsum("ij,ji->i", Q, D)
        grad = -inv_blocks / gamma**2 + np.bincount(labels, weights=QD, minlength=G)
        hess = 2.0 * _sum_blocks((Ainv if alone else D @ P) * Q, labels, G) + np.diag(2.0 * inv_blocks / gamma**3)
        return value, grad, hess
    hess = _sum_blocks(P * P.T, labels, G)
    if method == "maxent":
        value = -(size * np.log(gamma)).sum() - logdet
        return value, -size / gamma + trace, hess + np.diag(size / gamma**2)
    value = -t * (size * gamma).sum() - logdet - np.log(gamma).sum() - np.log1p(-gamma).sum()
    grad = -t * size + trace - 1.0 / gamma + 1.0 / (1.0 - gamma)
    return value, grad, hess + np.diag(1.0 / gamma**2 + 1.0 / (1.0 - gamma) ** 2)


def _inverse(lower):
    """The inverse of ``L L^T`` from its Cholesky factor ``L`` (LAPACK's potri: half the work of
    solving against the identity)."""
    from scipy.linalg.lapack import dpotri

    inv, info = dpotri(lower, lower=1)
    if info:
        raise la.LinAlgError("the matrix is singular")
    return np.tril(inv) + np.tril(inv, -1).T


def _newton(C, D, labels, method, gamma, tol, max_steps):
    """Damped Newton steps from the feasible ``gamma`` (for ``sdp``, along the barrier's path)."""
    G = gamma.size
    size = np.bincount(labels, minlength=G).astype(np.float64)
    inv_blocks = np.zeros(G)
    if method == "mvr":
        for g in range(G):
            members = np.flatnonzero(labels == g)
            inv_blocks[g] = np.trace(la.inv(C[np.ix_(members, members)]))
    t, steps = 1.0, 0
    while True:
        current = _objective(C, D, labels, gamma, size, method, t, inv_blocks)
        while steps < max_steps:
            steps += 1
            value, grad, hess = current
            step = -la.solve(hess, grad, assume_a="pos", check_finite=False)
            decrement = -float(grad @ step)
            if decrement / 2.0 <= tol * max(1.0, abs(value)):
                break
            size_of_step = 1.0
            while True:
                trial = _objective(C, D, labels, gamma + size_of_step * step, size, method, t, inv_blocks)
                if trial is not None and trial[0] <= value - 0.25 * size_of_step * decrement:
                    break
                size_of_step /= 2.0
                if size_of_step < 1e-12:
                    trial = None
                    break
            if trial is None:
                break
            gamma, current = gamma + size_of_step * step, trial
        if method != "sdp" or (labels.size + 2 * gamma.size) / t < GAP * size.sum() or steps >= max_steps:
            break
        t *= 20.0
    return gamma * (1.0 - MARGIN)


class KnockoffSampler:
    """Draws knockoffs of the features of ``model`` (``FeatureModel``) for the S-matrix ``S``
    (correlation scale): the conditional law's mean map and the root of its covariance are found
    once, and each ``draw(rng)`` costs one (n, p) x (p, p) product."""

    def __init__(self, model, S):
        factor = la.cho_factor(model.corr, lower=True, check_finite=False)
        self.model = model
        self.CinvS = la.cho_solve(factor, S, check_finite=False)
        s = np.diag(S)
        SCinvS = s[:, None] * self.CinvS if np.count_nonzero(S) == np.count_nonzero(s) else S @ self.CinvS
        V = 2.0 * S - SCinvS
        V = (V + V.T) / 2.0
        try:  # positive definite inside the S-matrix's margin
            self.root = la.cholesky(V, lower=True, check_finite=False)
        except la.LinAlgError:  # semi-definite (an S on the boundary)
            values, vectors = la.eigh(V)
            self.root = vectors * np.sqrt(np.clip(values, 0.0, None))

    def draw(self, rng):
        """One draw of the knockoffs, in the data's units."""
        m = self.model
        R = m.residuals
        noise = rng.standard_normal(R.shape) @ self.root.T
        return m.fitted + (R - R @ self.CinvS + noise) * m.scale


def knockoff_draw(model, S, rng):
    """One draw of the knockoffs of the features of ``model`` (``FeatureModel``), in the data's
    units, for the S-matrix ``S`` (correlation scale)."""
    return KnockoffSampler(model, S).draw(rng)
