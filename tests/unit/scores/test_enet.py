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
from genosift.enet.path import (
    MemoryDesign,
    PenaltyGrid,
    Solver,
    deviances,
    fit_path,
    in_data_units,
    objective,
    penalties,
)
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
    path = fit_path(design, y, logistic=logistic, l1_ratio=alpha, solver=Solver(tol=1e-12))
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
    screened = fit_path(design, y, logistic=logistic, l1_ratio=0.5, solver=Solver(tol=1e-13, batch=batch))

    full = fit_path(design, y, logistic=logistic, l1_ratio=0.5, grid=PenaltyGrid(screened.lambdas),
                    solver=Solver(tol=1e-13, stop_early=False, screen=False))
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
    a = elastic_net(collapsed, y, logistic=True, l1_ratio=0.4, n_lambdas=30, cv=None, tol=1e-13, inverse=inverse)
    b = elastic_net(expanded, y, logistic=True, l1_ratio=0.4, lambdas=a.lambdas, cv=None, tol=1e-13)
    np.testing.assert_allclose(a.intercept + X @ a.coef, b.intercept + X @ b.coef, atol=1e-4)
    np.testing.assert_allclose(a.coef.toarray(), b.coef.toarray(), atol=1e-4)
    np.testing.assert_array_equal(a.coef[100:200].toarray(), a.coef[:100].toarray())


def test_glmnet_defaults_of_the_path():
    X, y, _ = _population(6)
    design, _ = MemoryDesign.of(X)
    path = fit_path(design, y, logistic=True, l1_ratio=0.5, grid=PenaltyGrid(n_lambdas=100))
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
    ({"l1_ratio": 0}, "l1_ratio"), ({"l1_ratio": 1.5}, "l1_ratio"), ({"n_lambdas": 0}, "n_lambdas"),
    ({"lambda_choice": "best"}, "lambda_choice"), ({"family": "poisson"}, "family"), ({"min_ratio": 1}, "min_ratio"),
])
def test_bad_options_are_named(bad, message):
    X, y, _ = _population(9, n=40, p=20)
    with pytest.raises(ValueError, match=message):
        gs.ElasticNetSelector(**bad).fit(X, y)


def test_alpha_for_the_mixing_is_refused_naming_l1_ratio():
    """scikit-learn's name for the mixing is l1_ratio (its alpha is the penalty's strength), and alpha
    is a significance level everywhere else in genosift: glmnet's spelling gets the fix, not a fit."""
    with pytest.raises(TypeError, match=r"The 'alpha' parameter of ElasticNetSelector is called 'l1_ratio'.*"
                                        r"Give l1_ratio=0\.3 instead"):
        gs.ElasticNetSelector(alpha=0.3)
    with pytest.raises(TypeError, match=r"The 'alpha' parameter of enet is called 'l1_ratio'"):
        gs.jobs.enet(None, "out.tsv", alpha=0.3)
    from genosift.selectors.models import make_model

    with pytest.raises(ValueError, match=r"for model 'enet'.*'alpha' is called 'l1_ratio'"):
        make_model("enet", options={"alpha": 0.3})
    assert make_model("enet", options={"l1_ratio": 0.3}).l1_ratio == 0.3
    assert "alpha" not in gs.ElasticNetSelector().get_params()
    assert gs.ElasticNetSelector(0.3).get_params()["l1_ratio"] == 0.3


def test_three_classes_are_refused_with_the_fix():
    X, _, _ = _population(9, n=60, p=20)
    with pytest.raises(ValueError, match="two classes"):
        gs.ElasticNetSelector(family="logistic").fit(X, np.arange(60) % 3)


@parametrize_with_checks([gs.ElasticNetSelector(cv=0, n_lambdas=5), gs.ElasticNetSelector(cv=2, n_lambdas=5),
                          gs.ElasticNetSelector(cv=2, n_lambdas=5, family="logistic")])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------------------------
# a store read in passes, and the command
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def enet_store(tmp_path_factory):
    pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
    import pandas as pd

    from genosift.io import Dataset, write_store

    X, y, numeric = _population(10, n=150, p=900, copies=200)
    ids = np.array([f"s{i:03d}" for i in range(X.shape[0])], dtype=object)
    names = np.array([f"k{j}" for j in range(X.shape[1])], dtype=object)
    obs = pd.DataFrame({"case": np.where(y > 0, "R", "S"), "value": numeric, "lineage": np.arange(y.size) % 15},
                       index=ids)
    folder = tmp_path_factory.mktemp("enet-store")
    path = write_store(Dataset(sp.csr_matrix(X), ids, names, obs), folder / "k.gs.h5ad")
    return X, y, numeric, path, folder


@pytest.mark.parametrize("logistic", [True, False])
@pytest.mark.parametrize("rows", [None, "subset"])
def test_the_store_read_in_passes_gives_the_fit_in_memory(enet_store, logistic, rows):
    from genosift.enet.store import StoreDesign
    from genosift.io import open_store
    from genosift.sources import StoreRows

    X, y01, numeric, path, _ = enet_store
    y = y01 if logistic else numeric
    patterns = gs.count_patterns(X, binary=False)
    kept = None if rows is None else np.flatnonzero(np.arange(y.size) % 5 != 2)
    store = open_store(path)
    streamed = StoreDesign(StoreRows(store, kept, chunk_bytes=20_000), patterns.first, patterns.sizes, spare=16)
    M = sp.csc_matrix(X)[:, patterns.first]
    memory = MemoryDesign(M if kept is None else M[kept], patterns.sizes)
    yy = y if kept is None else y[kept]
    a = fit_path(streamed, yy, logistic=logistic, l1_ratio=0.5, solver=Solver(tol=1e-12))
    b = fit_path(memory, yy, logistic=logistic, l1_ratio=0.5, grid=PenaltyGrid(a.lambdas),
                 solver=Solver(tol=1e-12, stop_early=False))
    np.testing.assert_allclose(streamed.mean, memory.mean, rtol=1e-13)
    np.testing.assert_allclose(streamed.scale, memory.scale, rtol=1e-12)
    oa = objective(yy, _eta(streamed, a), a.lambdas, penalties(a.beta, 0.5, a.ridge), logistic)
    ob = objective(yy, _eta(memory, b), b.lambdas, penalties(b.beta, 0.5, b.ridge), logistic)
    np.testing.assert_allclose(oa, ob, rtol=1e-8)
    np.testing.assert_allclose(_eta(streamed, a), _eta(memory, b), atol=1e-3)
    # checks run over several penalties at once: far fewer passes than penalties
    assert streamed.passes == a.checks + 1 and a.checks < a.lambdas.size / 2
    assert a.working < patterns.n_patterns


def _run(args):
    """The command's exit code (argparse's own errors exit 2 too)."""
    from genosift.cli import main

    try:
        return main(["enet", *map(str, args)])
    except SystemExit as exc:
        return exc.code


def test_the_command_on_a_store_in_passes_and_in_memory(enet_store, tmp_path, capsys):
    import json

    from genosift.report.outputs import read_table

    X, y01, _, path, _ = enet_store
    common = [path, "--target", "case", "--folds", "5", "--group", "lineage"]
    assert _run([*common, "-o", tmp_path / "a.tsv", "--chunk-bytes", "20K"]) == 0
    printed = capsys.readouterr().out
    assert "(from the store)" in printed and "out of fold: deviance" in printed
    assert _run([*common, "-o", tmp_path / "b.tsv"]) == 0
    assert "(in memory)" in capsys.readouterr().out
    a, b = read_table(tmp_path / "a.tsv"), read_table(tmp_path / "b.tsv")
    ra, rb = (json.loads((tmp_path / f"{n}.tsv.json").read_text()) for n in "ab")
    assert ra["design"] == "from the store" and rb["design"] == "in memory"
    # equal to the solver's tolerance (glmnet's default, 1e-7 of the null deviance: the two designs
    # check different batches of penalties, so their working sets and sweeps differ)
    np.testing.assert_allclose(ra["path"]["cv_deviance"], rb["path"]["cv_deviance"], rtol=1e-2)
    assert ra["lambda"] == rb["lambda"]
    assert set(a["feature"]) == set(b["feature"])
    np.testing.assert_allclose(a.set_index("feature").loc[b["feature"], "coefficient"], b["coefficient"], atol=2e-2)
    # the library's fit: the same folds (the lineages whole), the same penalty and features
    sel = gs.ElasticNetSelector(0.5, cv=gs_folds(rb, y01, np.arange(y01.size) % 15), random_state=0)
    sel.fit(X, np.where(y01 > 0, "R", "S"))
    assert sel.lambda_ == pytest.approx(rb["lambda"], rel=1e-12)
    kept = np.flatnonzero(sel.coef_)
    assert set(b["feature"]) == {f"k{j}" for j in kept}
    np.testing.assert_allclose(b.set_index("feature").loc[[f"k{j}" for j in kept], "coefficient"], sel.coef_[kept],
                               rtol=1e-6, atol=1e-9)
    assert rb["out_of_fold"]["roc_auc"] > 0.6 and rb["model"] == "logistic" and rb["classes"] == ["R", "S"]
    # identical features share the coefficient of their pattern
    frame = b.set_index("feature")["coefficient"]
    for j in kept[kept < 100]:
        assert frame[f"k{j + 100}"] == frame[f"k{j}"]


def gs_folds(record, y, groups):
    """The folds the command made: stratified, the groups whole, shuffled with the seed."""
    from genosift.selectors import cv_splits

    return cv_splits(5, y, y, groups.astype(str), True, record["seed"], "test")


def test_the_model_the_command_saves_predicts_as_the_selector(enet_store, tmp_path, capsys):
    from genosift.report.outputs import read_table

    X, y01, _, path, _ = enet_store
    assert _run([path, "--target", "case", "--folds", "4", "-o", tmp_path / "k.tsv", "--model",
                 tmp_path / "m.skops"]) == 0
    from genosift.cli import main

    assert main(["predict", str(tmp_path / "m.skops"), str(path), "-o", str(tmp_path / "p.tsv")]) == 0
    predicted = read_table(tmp_path / "p.tsv")
    sel = gs.ElasticNetSelector(0.5, cv=4).fit(X, np.where(y01 > 0, "R", "S"))
    np.testing.assert_allclose(predicted["proba_S"], sel.predict_proba(X)[:, 1], rtol=1e-9)
    assert (predicted["predicted"] == sel.predict(X)).all()


@pytest.mark.parametrize("args, message", [
    (["--model", "m.skops", "--target", "value"], "a logistic model"),
    (["--model", "m.joblib"], "name it *.skops"),
    (["--folds", "1"], "folds >= 2"),
    (["--l1-ratio", "0"], "(0, 1]"),
    (["--alpha", "0.3"], "--alpha is called --l1-ratio here"),
    (["--min-ratio", "1"], "(0, 1)"),
])
def test_the_command_refuses_what_it_cannot_do(enet_store, tmp_path, capsys, args, message):
    _, _, _, path, _ = enet_store
    given = ["--target", "case"] if "--target" not in args else []
    assert _run([path, *given, *[tmp_path / a if a.endswith((".skops", ".joblib")) else a for a in args], "-o",
                 tmp_path / "x.tsv"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.tsv").exists()


def test_a_numeric_target_fits_the_linear_model(enet_store, tmp_path, capsys):
    import json

    X, _, numeric, path, _ = enet_store
    assert _run([path, "--target", "value", "--folds", "5", "-o", tmp_path / "v.tsv"]) == 0
    record = json.loads((tmp_path / "v.tsv.json").read_text())
    assert record["model"] == "linear" and "roc_auc" not in record["out_of_fold"]
    sel = gs.ElasticNetSelector(0.5, cv=5).fit(X, numeric)
    assert record["lambda"] == pytest.approx(sel.lambda_, rel=1e-12)
    assert record["out_of_fold"]["r2"] == pytest.approx(sel.result_.out_of_fold(numeric, sel.lambda_index_)["r2"],
                                                        rel=1e-6)


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_constant_columns_never_enter(form, tmp_path):
    """A column of ones (a k-mer in every genome) has a mean rounded below 1 and so a scale of
    about 1e-16 from the arithmetic: it is told constant exactly, in memory and in a store, and the
    first feature enters right after the largest penalty."""
    from genosift.enet.store import StoreDesign
    from genosift.io import Dataset, open_store, write_store
    from genosift.sources import StoreRows

    rng = np.random.default_rng(11)
    n = 40
    X = (rng.random((n, 30)) < 0.4).astype(float)
    X[:, 3], X[:, 7], X[:, 11] = 1.0, 0.0, 0.1
    y = (X[:, 0] + rng.random(n) > 0.9).astype(float)
    M = X if form == "dense" else sp.csr_matrix(X)
    store = write_store(Dataset(M, np.array([f"s{i}" for i in range(n)]), np.array([f"f{j}" for j in range(30)])),
                        tmp_path / "c.gs.h5ad")
    for design in (MemoryDesign(sp.csc_matrix(M) if form == "csr" else M, np.ones(30)),
                   StoreDesign(StoreRows(open_store(store), chunk_bytes=2_000), np.arange(30), np.ones(30))):
        assert np.flatnonzero(~design.usable).tolist() == [3, 7, 11]
        path = fit_path(design, y, logistic=True, l1_ratio=0.5, grid=PenaltyGrid(n_lambdas=20))
        assert path.df[1] >= 1 and path.lambdas.size == 20
        assert not path.beta[[3, 7, 11]].nnz


# --------------------------------------------------------------------------------------------
# the elastic net as evaluate's model
# --------------------------------------------------------------------------------------------

def test_evaluate_fits_the_elastic_net_inside_each_fold():
    """``evaluate --model enet``: the top k of each training fold go to an elastic net whose own
    folds (inside the training rows) choose its penalty; the final model is the one fitted to the
    top k of every sample, and its model file predicts as it does."""
    from genosift.workflow import evaluate

    X, y01, _ = _population(12, n=160, p=400)
    y = np.where(y01 > 0, "R", "S")
    ev = evaluate(X, y, method="anova", ks=[20, 100], cv=4, model="enet", model_options={"folds": 5},
                  random_state=0)
    final = ev.pipeline.named_steps["model"]
    chosen = np.flatnonzero(ev.pipeline.named_steps["select"].get_support())
    direct = gs.ElasticNetSelector(0.5, cv=5, family="logistic", random_state=0).fit(X[:, chosen], y)
    np.testing.assert_array_equal(final.coef_, direct.coef_)
    assert final.lambda_ == direct.lambda_
    # each fold's predictions are those of an elastic net fitted to that fold's training rows
    fold = ev.folds[0]
    top = np.sort(fold["ranking"][:ev.best_k])
    inner = gs.ElasticNetSelector(0.5, cv=5, family="logistic", random_state=0).fit(X[fold["train"]][:, top],
                                                                                     y[fold["train"]])
    np.testing.assert_array_equal(fold["predicted"][(0, ev.best_k)], inner.predict(X[fold["test"]][:, top]))
    logistic = final.as_logistic()
    np.testing.assert_array_equal(logistic.predict_proba(X[:, chosen]), final.predict_proba(X[:, chosen]))
    with pytest.raises(ValueError, match="two classes"):
        evaluate(X, np.arange(160) % 3, method="anova", ks=[20], cv=3, model="enet")
