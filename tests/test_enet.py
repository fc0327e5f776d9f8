"""The whole-genome elastic net: glmnet's objective and path, checked against R's glmnet itself, the
KKT conditions at every penalty, screening against the fit of every feature, patterns against
features, cv.glmnet's cross-validation, and the selector's scikit-learn contract."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

import genosift as gs
from genosift.scoring.enet import MemoryDesign, deviances, fit_path, in_data_units, objective, penalties
from genosift.selectors.enet import elastic_net


def _glmnet_available():
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(glmnet)"], capture_output=True).returncode == 0


needs_glmnet = pytest.mark.skipif(not _glmnet_available(), reason="R with the glmnet package (r-cran-glmnet) "
                                                                  "is not installed")

_R = r"""
suppressMessages(library(glmnet))
X <- as.matrix(read.table("X.txt")); y <- scan("y.txt", quiet=TRUE); lam <- scan("lam.txt", quiet=TRUE)
opt <- read.table("opt.txt", header=TRUE)
pf <- rep(1, ncol(X)); if (opt$free > 0) pf[1:opt$free] <- 0
if (opt$folds > 0) {
  foldid <- scan("foldid.txt", quiet=TRUE)
  f <- cv.glmnet(X, y, family=as.character(opt$family), alpha=opt$alpha, lambda=lam, thresh=1e-14, maxit=1e7,
                 penalty.factor=pf, foldid=foldid, type.measure=ifelse(opt$family == "binomial", "deviance", "mse"))
  write.table(cbind(f$lambda, f$cvm, f$cvsd), "cv.txt", row.names=FALSE, col.names=FALSE)
  f <- f$glmnet.fit
} else {
  f <- glmnet(X, y, family=as.character(opt$family), alpha=opt$alpha, lambda=lam, thresh=1e-14, maxit=1e7,
              penalty.factor=pf)
}
write.table(as.matrix(coef(f)), "B.txt", row.names=FALSE, col.names=FALSE)
"""


def _glmnet(tmp_path, X, y, lambdas, *, logistic, alpha, free=0, foldid=None):
    """R glmnet's coefficients (intercept first, one column per penalty) and, with ``foldid``,
    cv.glmnet's ``(lambda, cvm, cvsd)``."""
    np.savetxt(tmp_path / "X.txt", X, fmt="%.17g")
    np.savetxt(tmp_path / "y.txt", y, fmt="%.17g")
    np.savetxt(tmp_path / "lam.txt", lambdas, fmt="%.17g")
    (tmp_path / "opt.txt").write_text(f"family alpha free folds\n{'binomial' if logistic else 'gaussian'} {alpha} "
                                      f"{free} {0 if foldid is None else int(foldid.max())}\n")
    if foldid is not None:
        np.savetxt(tmp_path / "foldid.txt", foldid, fmt="%d")
    (tmp_path / "run.R").write_text(_R)
    subprocess.run(["Rscript", "run.R"], cwd=tmp_path, check=True, capture_output=True)
    cv = np.loadtxt(tmp_path / "cv.txt", ndmin=2) if foldid is not None else None
    return np.loadtxt(tmp_path / "B.txt", ndmin=2), cv


def _population(seed=0, n=120, p=600, copies=50):
    """Presence/absence with ``copies`` features repeated (patterns) and five causal ones."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < 0.3).astype(float)
    copies = min(copies, p - 100)
    if copies > 0:
        X[:, 100:100 + copies] = X[:, :copies]
    eta = X[:, :5].sum(axis=1) * 1.5 - 2
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return X, y, eta + rng.standard_normal(n)


def _objectives(X, y, intercept, coef, lambdas, alpha, logistic, Z=None, gamma=None):
    """glmnet's objective of coefficients in the data's units, at each penalty (penalised: X's columns)."""
    sd = X.std(axis=0)
    eta = intercept + X @ coef + (0 if Z is None else Z @ gamma.T)
    ridge = np.full(X.shape[1], 1.0 if logistic else 1.0 / y.std())
    return objective(y, eta, lambdas, penalties(coef * sd[:, None], alpha, ridge), logistic)


def _kkt(design, path, y, logistic, alpha, Z=None):
    """The largest violation of the KKT conditions over every column of the design, relative to lambda."""
    W = design.columns(np.arange(design.n_columns))
    worst = 0.0
    intercept, B, gamma = in_data_units(path, design)
    for t, lam in enumerate(path.lambdas):
        b = path.beta[:, t].toarray().ravel()
        eta = intercept[t] + design.dot(B[:, [t]]).ravel() + (0 if Z is None else Z @ gamma[t])
        mu = 1 / (1 + np.exp(-eta)) if logistic else eta
        g = W @ (y - mu) / y.size
        zero = b == 0
        worst = max(worst, (np.abs(g[zero]) - alpha * lam).max(initial=-np.inf) / lam)
        active = g[~zero] - lam * (alpha * np.sign(b[~zero]) + (1 - alpha) * path.ridge[~zero] * b[~zero])
        worst = max(worst, np.abs(active).max(initial=0.0) / lam)
    return worst


@needs_glmnet
@pytest.mark.parametrize("logistic", [True, False])
@pytest.mark.parametrize("alpha", [0.3, 0.9])
@pytest.mark.parametrize("form", ["dense", "csr"])
def test_the_path_equals_glmnet(tmp_path, logistic, alpha, form):
    X, y01, numeric = _population()
    y = y01 if logistic else numeric
    sel = gs.ElasticNetSelector(alpha, n_lambdas=40, cv=0, tol=1e-12).fit(X if form == "dense" else sp.csr_matrix(X), y)
    r = sel.result_
    B, _ = _glmnet(tmp_path, X, y, r.lambdas, logistic=logistic, alpha=alpha)
    ours = _objectives(X, y, r.intercept, r.coef.toarray(), r.lambdas, alpha, logistic)
    theirs = _objectives(X, y, B[0], B[1:], r.lambdas, alpha, logistic)
    assert r.lambdas.size >= 20
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert (ours <= theirs * (1 + 1e-7)).all()
    # the fitted values (unique at the optimum, where the coefficients of p >> n are barely so)
    np.testing.assert_allclose(r.intercept + X @ r.coef, B[0] + X @ B[1:], atol=1e-3)
    # identical features share their pattern's coefficient equally
    np.testing.assert_array_equal(r.coef[100:150].toarray(), r.coef[:50].toarray())


@needs_glmnet
@pytest.mark.parametrize("logistic", [True, False])
def test_covariates_are_unpenalised_as_in_glmnet(tmp_path, logistic):
    X, y01, numeric = _population(1, p=300)
    y = y01 if logistic else numeric
    rng = np.random.default_rng(5)
    Z = np.column_stack([rng.standard_normal(y.size), X[:, 0] + rng.standard_normal(y.size)])
    sel = gs.ElasticNetSelector(0.5, n_lambdas=30, cv=0, tol=1e-12).fit(X, y, covariates=Z)
    r = sel.result_
    # glmnet rescales the penalty factors to add up to the number of columns: its lambda is ours
    # times p / (p + c)
    p, c = X.shape[1], Z.shape[1]
    B, _ = _glmnet(tmp_path, np.column_stack([Z, X]), y, r.lambdas * p / (p + c), logistic=logistic, alpha=0.5,
                   free=c)
    ours = _objectives(X, y, r.intercept, r.coef.toarray(), r.lambdas, 0.5, logistic, Z, r.covariate_coef)
    theirs = _objectives(X, y, B[0], B[1 + c:], r.lambdas, 0.5, logistic, Z, B[1:1 + c].T)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    np.testing.assert_allclose(r.covariate_coef, B[1:1 + c].T, atol=1e-3 * np.abs(B[1:1 + c]).max())


@needs_glmnet
@pytest.mark.parametrize("logistic", [True, False])
def test_cross_validation_equals_cv_glmnet(tmp_path, logistic):
    X, y01, numeric = _population(2, p=400)
    y = y01 if logistic else numeric
    sel = gs.ElasticNetSelector(0.5, n_lambdas=30, cv=5, tol=1e-12).fit(X, y)
    r = sel.result_
    foldid = np.empty(y.size, dtype=int)
    for f, (_, test) in enumerate(r.folds):
        foldid[test] = f + 1
    _, cv = _glmnet(tmp_path, X, y, r.lambdas, logistic=logistic, alpha=0.5, foldid=foldid)
    # cv.glmnet's fold fits may stop early (its path rule): compare the penalties both reach
    L = min(cv.shape[0], r.lambdas.size)
    np.testing.assert_allclose(cv[:L, 0], r.lambdas[:L], rtol=1e-12)
    # (a held-out deviance depends on the fold's coefficients, which an objective equal to 1e-8
    # fixes to about 1e-4 where p >> n)
    np.testing.assert_allclose(r.cv_mean[:L], cv[:L, 1], rtol=1e-3)
    np.testing.assert_allclose(r.cv_mean[:10], cv[:10, 1], rtol=1e-7)
    np.testing.assert_allclose(r.cv_se[:L], cv[:L, 2], rtol=1e-2)
    np.testing.assert_allclose(r.cv_se[:10], cv[:10, 2], rtol=1e-5)


@pytest.mark.parametrize("logistic", [True, False])
@pytest.mark.parametrize("alpha", [0.2, 1.0])
def test_kkt_conditions_hold_at_every_penalty(logistic, alpha):
    X, y01, numeric = _population(3, n=90, p=2000)
    y = y01 if logistic else numeric
    design, _ = MemoryDesign.of(X)
    path = fit_path(design, y, logistic=logistic, alpha=alpha, tol=1e-12)
    assert path.lambdas.size >= 30
    assert _kkt(design, path, y, logistic, alpha) < 1e-3
    # the screen: the working set stays far below the features
    assert path.working < design.n_columns / 3


@pytest.mark.parametrize("logistic", [True, False])
@pytest.mark.parametrize("batch", [1, 7])
def test_screening_gives_the_fit_of_every_feature(logistic, batch):
    """With every feature in the working set from the start (no strong rule) the solution is that
    of the screened path, for one penalty per check or several."""
    X, y01, numeric = _population(4, n=100, p=800)
    y = y01 if logistic else numeric
    design, _ = MemoryDesign.of(X)
    screened = fit_path(design, y, logistic=logistic, alpha=0.5, tol=1e-13, batch=batch)

    full = fit_path(design, y, logistic=logistic, alpha=0.5, tol=1e-13, lambdas=screened.lambdas,
                    stop_early=False, screen=False)
    assert full.working == design.usable.sum()
    o1 = objective(y, _eta(design, screened), screened.lambdas, penalties(screened.beta, 0.5, screened.ridge), logistic)
    o2 = objective(y, _eta(design, full), full.lambdas, penalties(full.beta, 0.5, full.ridge), logistic)
    np.testing.assert_allclose(o1, o2, rtol=1e-9)
    # the fitted values are unique where the coefficients of a p >> n problem are nearly not
    np.testing.assert_allclose(_eta(design, screened), _eta(design, full), atol=1e-4)


def _eta(design, path):
    intercept, B, _ = in_data_units(path, design)
    return intercept + design.dot(B)


def test_patterns_give_the_fit_of_the_features():
    """The fit on distinct patterns (copies as one column, the ridge term divided by their number)
    equals the fit of every feature as its own column, in objective and coefficients."""
    X, y, _ = _population(5, n=100, p=400, copies=100)
    collapsed, inverse = MemoryDesign.of(X)
    assert collapsed.n_columns == 300
    expanded = MemoryDesign(X, np.ones(X.shape[1]))
    a = elastic_net(collapsed, y, logistic=True, alpha=0.4, n_lambdas=30, cv=None, tol=1e-13, inverse=inverse)
    b = elastic_net(expanded, y, logistic=True, alpha=0.4, lambdas=a.lambdas, cv=None, tol=1e-13)
    np.testing.assert_allclose(a.intercept + X @ a.coef, b.intercept + X @ b.coef, atol=1e-4)
    np.testing.assert_allclose(a.coef.toarray(), b.coef.toarray(), atol=1e-4)
    np.testing.assert_array_equal(a.coef[100:200].toarray(), a.coef[:100].toarray())


def test_glmnet_defaults_of_the_path():
    X, y, _ = _population(6)
    design, _ = MemoryDesign.of(X)
    path = fit_path(design, y, logistic=True, alpha=0.5, n_lambdas=100)
    # the first penalty keeps every feature out, the next lets one in; the sequence is geometric
    # down to 1% (more features than samples)
    assert path.df[0] == 0 and path.df[1] >= 1
    ratios = path.lambdas[1:] / path.lambdas[:-1]
    np.testing.assert_allclose(ratios, 0.01 ** (1 / 99), rtol=1e-12)
    # the path stops early as glmnet's does (deviance explained 0.999, or no gain)
    assert path.lambdas.size <= 100
    assert path.dev_ratio[-1] <= 0.999 + 1e-9 or path.lambdas.size < 100
    np.testing.assert_allclose(path.deviance, deviances(y, _eta(design, path), True))


def test_the_selector_finds_the_causal_features_and_predicts():
    X, y, _ = _population(7, n=300, p=1000)
    sel = gs.ElasticNetSelector(0.5, cv=5).fit(X, y.astype(int))
    assert set(range(5)) <= set(np.flatnonzero(sel.get_support()))
    proba = sel.predict_proba(X)[:, 1]
    np.testing.assert_allclose(proba, 1 / (1 + np.exp(-(X @ sel.coef_ + sel.intercept_))))
    np.testing.assert_array_equal(sel.predict(X), (proba > 0.5).astype(int))
    oof = sel.result_.out_of_fold(y, sel.lambda_index_)
    assert 0.75 < oof["roc_auc"] <= 1 and 0 < oof["r2"] < 1
    # the out-of-fold predictions come from fits that never saw the row
    assert np.isfinite(sel.result_.oof).all()
    one = sel.result_.index_1se
    assert one <= sel.result_.index_min and sel.result_.df[one] <= sel.result_.df[sel.result_.index_min]


def test_groups_keep_a_lineage_in_one_fold():
    X, y, _ = _population(8, n=120, p=300)
    groups = np.repeat(np.arange(12), 10)
    sel = gs.ElasticNetSelector(cv=4).fit(X, y, groups=groups)
    for train, test in sel.result_.folds:
        assert not set(groups[train]) & set(groups[test])


@pytest.mark.parametrize("bad, message", [
    ({"alpha": 0}, "alpha"), ({"alpha": 1.5}, "alpha"), ({"n_lambdas": 0}, "n_lambdas"),
    ({"lambda_choice": "best"}, "lambda_choice"), ({"family": "poisson"}, "family"), ({"min_ratio": 1}, "min_ratio"),
])
def test_bad_options_are_named(bad, message):
    X, y, _ = _population(9, n=40, p=20)
    with pytest.raises(ValueError, match=message):
        gs.ElasticNetSelector(**bad).fit(X, y)


def test_three_classes_are_refused_with_the_fix():
    X, _, _ = _population(9, n=60, p=20)
    with pytest.raises(ValueError, match="two classes"):
        gs.ElasticNetSelector(family="logistic").fit(X, np.arange(60) % 3)


@parametrize_with_checks([gs.ElasticNetSelector(cv=0, n_lambdas=5), gs.ElasticNetSelector(cv=2, n_lambdas=5)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
