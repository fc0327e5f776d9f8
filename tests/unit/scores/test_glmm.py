"""The logistic mixed model of a binary target (``lmm``'s default for 0/1 targets,
``genosift.scores.glmm``): its null fit against an independent solution of the penalised
quasi-likelihood equations, its score tests against dense formulas and, without a random effect,
statsmodels' logistic regression; its saddlepoint tails against the exact distribution of the
Bernoulli sums; and on simulated clonal populations the answer it gives, where the linear model
of a 0/1 phenotype passes lineage markers."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy import optimize, special, stats

import genosift as gs
from genosift.scores.glmm import SPA_CUTOFF, LogisticNull, glmm_tests, saddlepoint_pvalues


def _lineages(seed, n=90, k=6, p=40):
    """Samples in ``k`` lineages: a kinship from their features, a phenotype with lineage effects."""
    rng = np.random.default_rng(seed)
    lineage = np.repeat(np.arange(k), n // k)
    X = (rng.random((n, p)) < np.where(rng.random((k, p))[lineage] < 0.5, 0.85, 0.1)).astype(np.float64)
    Xc = X - X.mean(0)
    K = Xc @ Xc.T
    K = K / np.trace(K) * n + 0.05 * np.eye(n)  # positive definite: the reference factors it
    effect = rng.normal(0, 1.3, k)[lineage]
    y = (rng.random(n) < special.expit(-0.4 + effect)).astype(np.float64)
    Z = rng.normal(size=(n, 1))
    return X, y, Z, K


def _mode(y, C, K, tau):
    """The mode of the penalised log-likelihood ``l(C a + b) - b' K^-1 b / (2 tau)``, by
    scipy's trust-region Newton method on ``(a, u)`` with ``b = chol(K) u`` (no IRLS)."""
    n, q = C.shape
    R = np.linalg.cholesky(K)
    D = np.hstack([C, R])

    def f(theta):
        eta = D @ theta
        u = theta[q:]
        return -(y @ eta - np.logaddexp(0, eta).sum()) + u @ u / (2 * tau)

    def jac(theta):
        g = -D.T @ (y - special.expit(D @ theta))
        g[q:] += theta[q:] / tau
        return g

    def hess(theta):
        mu = special.expit(D @ theta)
        H = D.T @ (D * (mu * (1 - mu))[:, None])
        H[q:, q:] += np.eye(n) / tau
        return H

    fit = optimize.minimize(f, np.zeros(q + n), jac=jac, hess=hess, method="trust-exact",
                            options={"gtol": 1e-12})
    return special.expit(D @ fit.x)


def _dense_P(mu, C, K, tau):
    V = tau * K + np.diag(1 / (mu * (1 - mu)))
    Vi = np.linalg.inv(V)
    return Vi - Vi @ C @ np.linalg.solve(C.T @ Vi @ C, C.T @ Vi)


@pytest.mark.parametrize("seed", [1, 4, 9])
def test_null_fit_solves_the_penalised_quasi_likelihood_equations(seed):
    X, y, Z, K = _lineages(seed)
    C = np.column_stack([np.ones(y.size), Z])
    null = LogisticNull(y, C, K)
    assert null.tau > 0.1
    scale = np.trace(K) / y.size  # tau is on the kinship of mean diagonal 1
    Ks = K / scale
    mu = _mode(y, C, Ks, null.tau)
    np.testing.assert_allclose(null.mu, mu, rtol=0, atol=1e-7)
    # tau solves the working model's restricted-likelihood score equation
    P = _dense_P(mu, C, Ks, null.tau)
    r = y - mu
    assert r @ Ks @ r == pytest.approx(np.trace(P @ Ks), rel=1e-6)
    # each feature's score and its exact variance
    got = glmm_tests(X, null)
    T = X.T @ r
    var = np.einsum("ij,ij->j", X, P @ X)
    np.testing.assert_allclose(got.columns["se"], 1 / np.sqrt(var), rtol=1e-6)
    np.testing.assert_allclose(got.columns["beta"], T / var, rtol=1e-5, atol=1e-9)
    normal = 2 * stats.norm.sf(np.abs(T) / np.sqrt(var))
    np.testing.assert_allclose(got.columns["score_pvalue"], normal, rtol=1e-5)
    inside = np.abs(T) / np.sqrt(var) <= SPA_CUTOFF
    assert inside.any() and (~inside).any()
    np.testing.assert_allclose(got.pvalues[inside], normal[inside], rtol=1e-5)
    assert (got.columns["spa"] == (~inside)).all()
    # the statistic is the signed normal quantile of the p-value: the ranking follows the p-values
    np.testing.assert_allclose(np.abs(got.statistic), stats.norm.isf(got.pvalues / 2), rtol=1e-9)
    assert (np.sign(got.statistic) == np.sign(T)).all()


def test_without_a_random_effect_the_tests_are_logistic_regression_score_tests():
    import statsmodels.api as sm

    rng = np.random.default_rng(5)
    n = 120
    X, _, Z, K = _lineages(11, n=n)
    y = (rng.random(n) < 0.35).astype(np.float64)  # unrelated to the lineages
    C = np.column_stack([np.ones(n), Z])
    null = LogisticNull(y, C, K)
    assert null.tau == 0.0  # the score of tau is negative at 0: no random effect
    fit = sm.Logit(y, C).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(null.mu, fit.predict(C), rtol=1e-8)
    got = glmm_tests(X, null)
    for j in range(0, X.shape[1], 7):
        full = sm.GLM(y, np.column_stack([C, X[:, j]]), family=sm.families.Binomial())
        # the score test of the feature at the null (statsmodels: score_test of the constrained fit)
        restricted = sm.GLM(y, C, family=sm.families.Binomial()).fit(tol=1e-12)
        chi2, p, _ = full.score_test(np.append(restricted.params, 0.0), k_constraints=1)
        assert got.columns["score_pvalue"][j] == pytest.approx(float(np.squeeze(p)), rel=1e-6)


def _outcomes(n):
    return np.array(list(itertools.product((0.0, 1.0), repeat=n)))


def _exact_tail(Y, g, mu, q):
    """P(|sum g_i (Y_i - mu_i)| >= q) over every outcome ``Y`` (rows) of the ``Y_i``."""
    S = (Y - mu) @ g
    prob = np.exp(np.log(np.where(Y == 1, mu, 1 - mu)).sum(1))
    return float(prob[np.abs(S) >= q * (1 - 1e-12)].sum())


def test_saddlepoint_tails_follow_the_exact_bernoulli_sums():
    rng = np.random.default_rng(3)
    n = 18
    Y = _outcomes(n)
    errors = {"spa": [], "normal": []}
    for _ in range(8):
        mu = rng.uniform(0.02, 0.5, n)
        g = rng.normal(size=n) * (rng.random(n) < 0.8)
        sd = np.sqrt(np.sum(g * g * mu * (1 - mu)))
        for k in (2.5, 3.0, 3.5, 4.0):
            exact = _exact_tail(Y, g, mu, k * sd)
            if exact < 1e-9:
                continue
            spa = saddlepoint_pvalues(g[:, None], mu, np.array([k * sd]))[0]
            errors["spa"].append(abs(np.log(spa / exact)))
            errors["normal"].append(abs(np.log(2 * stats.norm.sf(k) / exact)))
    # each saddlepoint tail is within a factor 1.6 of the exact one (these sums of 18 skewed terms
    # are lattice-like: no smooth tail is closer everywhere), and over all of them it is several
    # times closer than the normal tail
    assert len(errors["spa"]) >= 20
    assert max(errors["spa"]) < np.log(1.6)
    assert np.mean(errors["spa"]) < np.mean(errors["normal"]) / 3


def test_at_the_largest_value_the_tail_is_its_probability():
    mu = np.array([0.1, 0.2, 0.7, 0.4])
    g = np.array([1.0, 2.0, 0.5, 0.0])
    top = 1.0 * 0.9 + 2.0 * 0.8 + 0.5 * 0.3
    got = saddlepoint_pvalues(np.column_stack([g, g]), mu, np.array([top, top * 1.01]))
    # P(S = top), and -top is beyond the smallest value (-0.85): P(S <= -top) = 0
    assert got[0] == pytest.approx(0.1 * 0.2 * 0.7, rel=1e-12) and got[1] == 0.0


def test_model_option_and_the_result_model():
    X, y, Z, K = _lineages(4)
    res = gs.score(X, y, method="lmm", kinship=K)
    assert res.model["model"] == "logistic" and res.model["tau"] > 0
    assert res.model["h2"] == pytest.approx(res.model["tau"] / (res.model["tau"] + np.pi ** 2 / 3))
    assert {"beta", "se", "score_pvalue", "spa"} <= set(res.columns)
    linear = gs.score(X, y, method="lmm", kinship=K, method_options={"model": "linear"})
    assert linear.model["model"] == "linear" and "lrt_pvalue" in linear.columns
    again = gs.score(X, y, method="lmm", kinship=K, method_options={"model": "logistic"})
    np.testing.assert_array_equal(again.pvalues, res.pvalues)
    numeric = y + np.random.default_rng(0).normal(size=y.size)
    assert gs.score(X, numeric, method="lmm", kinship=K).model["model"] == "linear"
    with pytest.raises(ValueError, match="binary target"):
        gs.score(X, numeric, method="lmm", kinship=K, method_options={"model": "logistic"})


def test_covariates_that_separate_the_classes_are_refused_with_the_fix():
    X, y, Z, K = _lineages(4)
    with warnings.catch_warnings(), pytest.raises(ValueError, match="separate the classes.*model=linear|linear"):
        warnings.simplefilter("ignore")
        separating = (2 * y - 1) * np.linspace(1, 2, y.size)
        gs.score(X, y, method="lmm", kinship=K, covariates=separating[:, None])


@pytest.fixture(scope="module")
def null_population(tmp_path_factory):
    """200 genomes of 8 lineages whose phenotype follows lineage 0 alone (no causal locus): every
    pattern passing the threshold is a false positive."""
    from test_clonal import count_kmers

    folder = tmp_path_factory.mktemp("null8")
    pop = gs.simulate_clonal_population(folder, n_genomes=200, n_lineages=8, causal_log_odds=0.0, seed=101)
    ds = gs.io.read(count_kmers(pop, folder))
    carried = (ds.X > 0).astype(np.float64)
    af = np.asarray(carried.mean(0)).ravel()
    keep = (af >= 0.05) & (af <= 0.95)
    return carried[:, keep], pop.table.loc[ds.sample_ids], np.asarray(gs.kinship(ds, binary=True))


def test_on_a_null_clonal_population_no_pattern_passes_where_the_linear_model_passes_lineage_markers(null_population):
    X, table, K = null_population
    y = table["phenotype"].to_numpy()
    threshold = gs.count_patterns(X).threshold(0.05)
    default = gs.score(X, y, method="lmm", kinship=K)
    assert default.model["model"] == "logistic" and default.model["tau"] > 1
    assert np.nanmin(default.pvalues) > threshold and genomic_inflation_of(default) < 1.3
    linear = gs.score(X, y, method="lmm", kinship=K, method_options={"model": "linear"})
    passing = np.flatnonzero(linear.pvalues < threshold)
    assert passing.size > 0
    # what passes there: patterns that follow the lineages but for a few samples, cases where the
    # lineage's other members are controls or the reverse (one sample's outcome, weighed as if it
    # were a Gaussian's)
    lineage = table["lineage"].to_numpy()
    for j in passing:
        carriers = np.array([int(X[lineage == g, j].sum()) for g in np.unique(lineage)])
        off = np.minimum(carriers, 25 - carriers)  # the samples unlike the rest of their lineage
        assert off.sum() <= 3, carriers


def genomic_inflation_of(result):
    return gs.scores.genomic_inflation(result.pvalues)
