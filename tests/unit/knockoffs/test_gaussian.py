"""Gaussian knockoffs: the S-matrix against knockpy's and its optimality conditions, the draws'
joint covariance, the covariance model given covariates."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from genosift.knockoffs.gaussian import S_METHODS, feature_model, knockoff_draw, s_matrix

DATA = Path(__file__).resolve().parents[2] / "data" / "knockoffs"
KNOCKPY = json.loads((DATA / "knockpy_smatrix.json").read_text())
KNOCKPY_NAMES = {"mvr": "mvr", "maxent": "maxent", "sdp": "sdp", "equi": "equicorrelated"}


def _objective(C, s, method):
    """The criterion each method optimises, of the diagonal ``s`` (the smaller the better)."""
    A = 2.0 * C - np.diag(s)
    if method == "mvr":  # the trace of the joint covariance's inverse
        return (1.0 / s).sum() + np.trace(np.linalg.inv(A))
    if method == "maxent":  # minus its log-determinant
        return -np.log(s).sum() - np.linalg.slogdet(A)[1]
    return -s.sum()


@pytest.mark.parametrize("name", ["ar1", "random"])
@pytest.mark.parametrize("method", S_METHODS)
def test_s_matrix_equals_knockpys_or_betters_it(name, method):
    C = np.array(KNOCKPY["matrices"][name])
    theirs = np.array(KNOCKPY["s"][f"{name}/{KNOCKPY_NAMES[method]}"])
    S, gamma = s_matrix(C, method=method)
    s = np.diag(S)
    np.testing.assert_array_equal(S, np.diag(s))
    np.testing.assert_allclose(s, gamma * np.diag(C), rtol=1e-15)
    assert np.linalg.eigvalsh(2.0 * C - S).min() > 0 and (s > 0).all()
    if method in ("sdp", "equi"):
        assert s.max() <= 1.0
    if method == "sdp":  # the SDP's optimum need not be unique; knockpy's solver stops 0.5-1 % below it
        assert -_objective(C, theirs, "sdp") <= -_objective(C, s, "sdp") <= -_objective(C, theirs, "sdp") * 1.02
        assert np.linalg.eigvalsh(2.0 * C - S).min() < 1e-4  # on the boundary, as an optimum is
    else:  # knockpy keeps a margin of about 1e-3 below the optimum
        np.testing.assert_allclose(s, theirs, rtol=0, atol=2e-3)
        assert _objective(C, s, method) <= _objective(C, theirs, method) + 1e-12


@pytest.mark.parametrize("name", ["ar1", "random"])
def test_group_equicorrelated_equals_knockpys(name):
    C = np.array(KNOCKPY["matrices"][name])
    S, gamma = s_matrix(C, method="equi", groups=np.array(KNOCKPY["groups"]))
    np.testing.assert_allclose(S, np.array(KNOCKPY["s"][f"{name}/equicorrelated/groups"]), rtol=0, atol=2e-3)
    assert np.ptp(gamma) == 0


def _random_correlation(p, seed):
    rng = np.random.default_rng(seed)
    C = np.corrcoef(rng.standard_normal((3 * p, p)), rowvar=False)
    return 0.6 * C + 0.4 * 0.7 ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))


@pytest.mark.parametrize("grouped", [False, True])
def test_maxent_and_mvr_meet_their_optimality_conditions(grouped):
    """At the optimum the gradient in each group's scale is 0 (the bounds are not active):
    maxent ``|g| / gamma_g = tr(A^-1_gg C_gg)``, mvr ``tr(C_gg^-1) / gamma_g^2 = tr((A^-2)_gg C_gg)``."""
    p = 24
    C = _random_correlation(p, 3)
    groups = np.repeat(np.arange(8), 3) if grouped else np.arange(p)
    for method in ("maxent", "mvr"):
        S, gamma = s_matrix(C, method=method, groups=groups if grouped else None)
        Ainv = np.linalg.inv(2.0 * C - S)
        for g in range(groups.max() + 1):
            m = np.flatnonzero(groups == g)
            Cg = C[np.ix_(m, m)]
            np.testing.assert_allclose(S[np.ix_(m, m)], gamma[g] * Cg, rtol=1e-12, atol=0)
            if method == "maxent":
                lhs, rhs = m.size / gamma[g], np.trace(Ainv[np.ix_(m, m)] @ Cg)
            else:
                lhs, rhs = np.trace(np.linalg.inv(Cg)) / gamma[g] ** 2, np.trace((Ainv @ Ainv)[np.ix_(m, m)] @ Cg)
            np.testing.assert_allclose(lhs, rhs, rtol=2e-4)


def test_identity_has_s_one_and_a_singular_design_none():
    for method in S_METHODS:
        _, gamma = s_matrix(np.eye(5), method=method)
        np.testing.assert_allclose(gamma, 1.0, rtol=1e-4)
    with pytest.raises(ValueError, match="S-matrix method"):
        s_matrix(np.eye(3), method="asdp")


def test_draws_have_the_knockoff_joint_covariance():
    """``(X, X~)`` has covariance ``[[C, C - S], [C - S, C]]`` (the swap-invariance of the second
    moments), whatever the features' means and scales."""
    p, n = 5, 40_000
    C = 0.6 ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
    rng = np.random.default_rng(0)
    scale = np.array([1.0, 2.0, 0.5, 3.0, 1.5])
    X = 10.0 + rng.multivariate_normal(np.zeros(p), C, size=n) * scale
    model = feature_model(X, shrinkage=0.0)
    S, _ = s_matrix(model.corr, method="mvr")
    K = knockoff_draw(model, S, np.random.default_rng(1))
    joint = np.corrcoef(np.hstack([X, K]), rowvar=False)
    np.testing.assert_allclose(joint[p:, p:], model.corr, atol=0.02)
    np.testing.assert_allclose(joint[:p, p:], model.corr - S, atol=0.02)
    np.testing.assert_allclose(K.mean(axis=0), X.mean(axis=0), atol=0.05 * scale.max())
    np.testing.assert_allclose(K.std(axis=0), X.std(axis=0), rtol=0.03)


def test_knockoffs_are_drawn_given_the_covariates():
    """A feature that is a covariate's multiple plus noise has knockoffs with the same dependence
    on the covariate (and no more on the feature than the model says)."""
    rng = np.random.default_rng(2)
    n = 20_000
    z = rng.standard_normal(n)
    X = np.column_stack([3.0 * z + rng.standard_normal(n), -2.0 * z + rng.standard_normal(n)])
    model = feature_model(X, covariates=z[:, None], shrinkage=0.0)
    np.testing.assert_allclose(model.scale, 1.0, rtol=0.02)
    S, _ = s_matrix(model.corr, method="sdp")
    K = knockoff_draw(model, S, np.random.default_rng(3))
    slopes = np.linalg.lstsq(np.column_stack([np.ones(n), z]), K, rcond=None)[0][1]
    np.testing.assert_allclose(slopes, [3.0, -2.0], atol=0.03)


def test_ledoit_wolf_shrinkage_is_sklearns_on_the_standardised_features():
    from sklearn.covariance import ledoit_wolf

    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 50)) * np.arange(1, 51)
    model = feature_model(X)
    R = (X - X.mean(axis=0)) / X.std(axis=0)
    cov, shrunk = ledoit_wolf(R, assume_centered=True)
    assert model.shrinkage == pytest.approx(shrunk)
    np.testing.assert_allclose(model.corr, cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov))), atol=1e-12)
    assert np.linalg.eigvalsh(model.corr).min() > 0
    with pytest.raises(ValueError, match="constant"):
        feature_model(np.column_stack([X[:, 0], np.ones(30)]))
