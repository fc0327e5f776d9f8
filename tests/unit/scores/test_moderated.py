"""limma's moderated t against R limma: stored reference values and, where R is installed, live."""
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.io import Dataset, write_store
from genosift.scores import get_method, make_target, score_blocks
from genosift.scores.moderated import trigamma_inverse

DATA = Path(__file__).resolve().parents[2] / "data"
CASES = {  # the columns of the R design after the intercept: covariates, then the tested one
    "classes": ([], "group"),
    "classes_covariates": (["cov_gene", "batch"], "group"),
    "numeric_covariate": (["batch"], "num_target"),
}


def _moderated(X, y, C=None, names=None):
    spec = get_method("moderated_t")
    target = make_target(spec, y, X.shape[0], C)
    return score_blocks(spec, [(0, X.shape[1], X)], target, names, {})


def _assert_like_limma(res, ref, rtol=1e-8):
    cols = res.columns
    np.testing.assert_allclose(cols["coef"], ref["coef"], rtol=rtol)
    np.testing.assert_allclose(cols["stdev_unscaled"], ref["stdev_unscaled"], rtol=rtol)
    np.testing.assert_allclose(cols["sigma"], ref["sigma"], rtol=rtol)
    np.testing.assert_allclose(cols["sigma_post"] ** 2, ref["s2_post"], rtol=rtol)
    np.testing.assert_allclose(res.statistic, ref["t"], rtol=rtol)
    np.testing.assert_allclose(res.pvalues, ref["p_value"], rtol=rtol)
    np.testing.assert_allclose(cols["df_total"], ref["df_total"], rtol=rtol)
    np.testing.assert_allclose(cols["df_prior"], ref["df_prior"], rtol=rtol)
    np.testing.assert_allclose(cols["sigma_prior"] ** 2, ref["s2_prior"], rtol=rtol)


@pytest.mark.parametrize("case", sorted(CASES))
def test_equals_limma_on_golub_genes(case):
    data = pd.read_csv(DATA / "limma_golub_input.csv")
    ref = pd.read_csv(DATA / "limma_golub_reference.csv").query("case == @case")
    covariates, tested = CASES[case]
    X = data.iloc[:, 5:].to_numpy(dtype=np.float64)
    C = data[covariates].to_numpy(dtype=np.float64) if covariates else None
    res = _moderated(X, data[tested].to_numpy(dtype=np.float64), C, names=data.columns[5:])
    assert list(res.feature_names) == list(ref["feature"])
    _assert_like_limma(res, ref)


def test_classes_are_coded_as_limma_codes_the_group():
    data = pd.read_csv(DATA / "limma_golub_input.csv")
    ref = pd.read_csv(DATA / "limma_golub_reference.csv").query("case == 'classes'")
    labels = np.where(data["group"] == 1, "AML", "ALL")
    res = gs.score(data.iloc[:, 5:].to_numpy(), labels, method="moderated_t")
    np.testing.assert_allclose(res.statistic, ref["t"], rtol=1e-8)
    assert list(res.to_frame().columns) == ["feature", "score", "statistic", "pvalue", "qvalue", "coef",
                                            "stdev_unscaled", "sigma", "df_residual", "sigma_post", "df_total",
                                            "df_prior", "sigma_prior", "rank"]


R_SCRIPT = """
suppressPackageStartupMessages(library(limma))
d <- read.csv("in.csv")
genes <- t(as.matrix(d[, -(1:2)]))
fit <- eBayes(lmFit(genes, model.matrix(~ z + y, d)))
write.csv(data.frame(coef = fit$coefficients[, 3], stdev_unscaled = fit$stdev.unscaled[, 3], sigma = fit$sigma,
                     s2_post = fit$s2.post, t = fit$t[, 3], df_total = fit$df.total, p_value = fit$p.value[, 3],
                     df_prior = fit$df.prior, s2_prior = fit$s2.prior),
          "out.csv", row.names = FALSE)
"""


def _limma_available():
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(limma)"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _limma_available(), reason="R with the limma package is not installed")
@pytest.mark.parametrize("spread", [0.0, 1.5], ids=["equal-variances", "varied-variances"])
def test_equals_limma_live(tmp_path, spread):
    """Simulated genes with equal variances (limma's prior df comes out infinite) or varied ones."""
    rng = np.random.default_rng(11)
    n, p = 14, 300
    y = np.repeat([0.0, 1.0], n // 2)
    z = rng.normal(size=n)
    D = np.column_stack([np.ones(n), z, y])
    E = rng.normal(size=(n, p))
    E -= D @ np.linalg.lstsq(D, E, rcond=None)[0]  # residuals of the model, scaled to equal size
    E *= np.exp(spread * rng.normal(size=p)) / np.linalg.norm(E, axis=0)
    X = E + 3.0 + np.outer(y, rng.normal(size=p) * 0.8) + np.outer(z, rng.normal(size=p))
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(p)])
    frame.insert(0, "y", y)
    frame.insert(0, "z", z)
    frame.to_csv(tmp_path / "in.csv", index=False, float_format="%.17g")
    (tmp_path / "run.R").write_text(R_SCRIPT)
    subprocess.run(["Rscript", "run.R"], cwd=tmp_path, check=True, capture_output=True)
    ref = pd.read_csv(tmp_path / "out.csv")
    res = _moderated(X, y, z[:, None])
    if spread == 0.0:
        assert np.isinf(res.columns["df_prior"]).all() and np.isinf(ref["df_prior"]).all()
        np.testing.assert_allclose(res.columns["df_total"], (n - 3) * p)  # capped at the pooled df
        ref = ref.drop(columns="df_prior")
        res.columns["df_prior"] = np.full(p, np.nan)
        ref["df_prior"] = np.nan
    _assert_like_limma(res, ref)


def test_trigamma_inverse():
    from scipy import special

    x = np.array([1e-4, 0.05, 0.7, 3.0, 40.0, 1e4])
    np.testing.assert_allclose(special.polygamma(1, trigamma_inverse(x)), x, rtol=1e-13)


def test_store_and_chunked_blocks_give_the_same_numbers(tmp_path):
    data = pd.read_csv(DATA / "limma_golub_input.csv")
    X = data.iloc[:, 5:].to_numpy(dtype=np.float64)
    y = data["num_target"].to_numpy()
    ref = gs.score(X, y, method="moderated_t")
    ids = np.array(data["sample"], dtype=object)
    names = np.array([f"x{j}" for j in range(X.shape[1])], dtype=object)
    path = write_store(Dataset(X, ids, names, pd.DataFrame(index=ids)), tmp_path / "g.gs.h5ad")
    got = gs.score(str(path), y, method="moderated_t", chunk_bytes=8_000)  # several column blocks
    np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(got.pvalues, ref.pvalues, rtol=1e-12)
    np.testing.assert_allclose(got.columns["df_prior"], ref.columns["df_prior"], rtol=1e-12)


def test_dask_gives_the_same_numbers():
    da = pytest.importorskip("dask.array")
    data = pd.read_csv(DATA / "limma_golub_input.csv")
    X = data.iloc[:, 5:].to_numpy(dtype=np.float64)
    y = data["group"].to_numpy()
    ref = gs.score(X, y, method="moderated_t")
    got = gs.score(da.from_array(X, chunks=(38, 37)), y, method="moderated_t")
    np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(got.pvalues, ref.pvalues, rtol=1e-12)


def test_the_prior_pools_only_the_features_the_allele_frequency_filter_keeps():
    rng = np.random.default_rng(2)
    n = 30
    y = np.arange(n) % 2
    X = rng.poisson(2.0, size=(n, 60)).astype(float)
    X[:, :10] = 0.0
    X[:2, :10] = rng.uniform(1, 5, size=(2, 10))  # carried by 2 of 30 samples: filtered out
    res = gs.score(X, y, method="moderated_t", min_af=0.2)
    alone = gs.score(X[:, 10:], y, method="moderated_t")
    assert np.isnan(res.statistic[:10]).all() and np.isnan(res.columns["sigma"][:10]).all()
    np.testing.assert_allclose(res.statistic[10:], alone.statistic, rtol=1e-12)
    np.testing.assert_allclose(res.columns["df_prior"][10:], alone.columns["df_prior"], rtol=1e-12)


def test_what_holds_instead_of_invariance():
    """One scale for every feature and a shift per feature leave the moderated t unchanged; a
    scale per feature does not (the prior pools the features' variances)."""
    data = pd.read_csv(DATA / "limma_golub_input.csv")
    X = data.iloc[:, 5:].to_numpy(dtype=np.float64)
    y = data["group"].to_numpy()
    ref = gs.score(X, y, method="moderated_t")
    shifts = np.random.default_rng(0).uniform(-100, 100, X.shape[1])
    same = gs.score(X * 7.5 + shifts, y, method="moderated_t")
    np.testing.assert_allclose(same.statistic, ref.statistic, rtol=1e-9)
    np.testing.assert_allclose(same.columns["coef"], ref.columns["coef"] * 7.5, rtol=1e-9)
    one = X.copy()
    one[:, 0] *= 100.0
    moved = gs.score(one, y, method="moderated_t")
    assert not np.allclose(moved.statistic[1:], ref.statistic[1:], rtol=1e-6)


def test_constant_features_are_nan_and_left_out_of_the_prior():
    data = pd.read_csv(DATA / "limma_golub_input.csv")
    X = data.iloc[:, 5:].to_numpy(dtype=np.float64)
    y = data["group"].to_numpy()
    ref = gs.score(X, y, method="moderated_t")
    got = gs.score(np.column_stack([np.full(38, 2.0), X]), y, method="moderated_t")
    assert np.isnan(got.statistic[0]) and np.isnan(got.pvalues[0])
    np.testing.assert_allclose(got.statistic[1:], ref.statistic, rtol=1e-12)


def test_a_target_explained_by_the_covariates_is_an_error():
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="explained by the covariates"):
        _moderated(np.random.default_rng(0).normal(size=(20, 5)), y, y[:, None] * 2.0 + 1.0)
