"""Per-feature logistic regression with covariates against statsmodels, an independent Firth fit
and SEER's own output."""
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats

import genosift as gs
from genosift.scores import get_method, make_target
from genosift.scores.logistic import logistic

SEER_EXAMPLES = Path("/usr/share/doc/seer/examples")
needs_examples = pytest.mark.skipif(not (SEER_EXAMPLES / "example_kmers.gz").exists(),
                                    reason="SEER's example k-mers (Debian package seer) are not installed")


def _fit(y, X, C=None, **options):
    return logistic(X, make_target(get_method("logistic"), y, len(y), C), **options)


def _statsmodels(y, X, C):
    """beta, se, Wald p and LRT statistic of each column of X by statsmodels' Logit."""
    import statsmodels.api as sm

    n = len(y)
    base = np.ones((n, 1)) if C is None else np.column_stack([np.ones(n), C])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        null = sm.Logit(y, base).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
        rows = []
        for x in X.T:
            fit = sm.Logit(y, np.column_stack([base, x])).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
            rows.append((fit.params[-1], fit.bse[-1], fit.pvalues[-1], 2 * (fit.llf - null.llf)))
    return np.array(rows).T


def _assert_matches_statsmodels(y, X, C, out, at_least):
    plain = out.columns["firth"] == 0
    assert plain.sum() >= at_least
    beta, se, wald, lrt = _statsmodels(y, X[:, plain], C)
    np.testing.assert_allclose(out.statistic[plain], beta, rtol=1e-6)
    np.testing.assert_allclose(out.columns["se"][plain], se, rtol=1e-6)
    np.testing.assert_allclose(out.columns["wald_pvalue"][plain], wald, rtol=1e-6)
    np.testing.assert_allclose(out.scores[plain], lrt, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(out.pvalues[plain], stats.chi2.sf(lrt, 1), rtol=1e-6)


def _golub(p=120):
    X, y, _ = gs.load_golub()
    return (np.asarray(y) == "AML").astype(float), np.asarray(X[:, :p], dtype=np.float64)


def test_golub_genes_equal_statsmodels_without_covariates():
    y, X = _golub()
    _assert_matches_statsmodels(y, X, None, _fit(y, X), at_least=80)


def test_golub_genes_equal_statsmodels_with_covariates():
    y, X = _golub(200)
    C = X[:, [150, 180]]  # two other genes as covariates
    _assert_matches_statsmodels(y, X[:, :120], C, _fit(y, X[:, :120], C), at_least=60)


def _seer_kmers(pheno="subset.pheno"):
    """SEER's example k-mers as presence/absence for the samples of ``pheno`` (those with no
    k-mer in the file carry none), their labels and ids."""
    from genosift.io import read_kmers

    data = read_kmers(str(SEER_EXAMPLES / "example_kmers.gz"))
    counts = data.X.toarray() if hasattr(data.X, "toarray") else np.asarray(data.X)
    rows = {s: i for i, s in enumerate(data.sample_ids)}
    table = pd.read_csv(SEER_EXAMPLES / pheno, sep="\t", header=None)
    X = np.zeros((len(table), counts.shape[1]))
    for r, sample in enumerate(table[0]):
        if sample in rows:
            X[r] = counts[rows[sample]] > 0
    return X, table[2].to_numpy().astype(float), table[0].to_numpy(), np.asarray(data.feature_names)


def _seer_covariates(ids):
    """Column 2 of SEER's covariates.txt (quantitative) and column 3 (categorical, dummy coded)."""
    table = pd.read_csv(SEER_EXAMPLES / "covariates.txt", sep=r"\s+", header=None).set_index(0).loc[ids]
    return np.column_stack([table[1], table[2] == 1, table[2] == 2]).astype(float)


@needs_examples
@pytest.mark.parametrize("covariates", [False, True])
def test_kmers_equal_statsmodels(covariates):
    X, y, ids, _ = _seer_kmers()
    C = _seer_covariates(ids) if covariates else None
    keep = X.sum(axis=0) > 0
    _assert_matches_statsmodels(y, X[:, keep], C, _fit(y, X[:, keep], C), at_least=100)


def _firth_reference(y, X, x, free=None):
    """beta, se and penalised log-likelihood of Firth's logistic regression of y on (X, x), by
    solving the modified score equations (Firth 1993) with scipy; ``free``: how many leading
    coefficients are fitted (the others 0: the penalised null of Heinze & Schemper 2002)."""
    D = np.column_stack([X, x])
    free = D.shape[1] if free is None else free

    def pieces(b):
        mu = special.expit(D @ b)
        w = mu * (1 - mu)
        info = D.T @ (w[:, None] * D)
        h = w * np.einsum("ij,jk,ik->i", D, np.linalg.inv(info), D)
        return mu, info, h

    def full(b):
        return np.concatenate([b, np.zeros(D.shape[1] - free)])

    def modified_score(b):
        mu, _, h = pieces(full(b))
        return (D.T @ (y - mu + h * (0.5 - mu)))[:free]

    start = np.zeros(free)
    start[0] = special.logit(y.mean())
    sol = optimize.root(modified_score, start, method="hybr", tol=1e-13)
    assert np.abs(modified_score(sol.x)).max() < 1e-9
    b = full(sol.x)
    mu, info, _ = pieces(b)
    loglik = np.sum(y * np.log(mu) + (1 - y) * np.log1p(-mu)) + 0.5 * np.linalg.slogdet(info)[1]
    return b[-1], np.sqrt(np.linalg.inv(info)[-1, -1]), loglik


@needs_examples
@pytest.mark.parametrize("covariates", [False, True])
def test_firth_fits_equal_an_independent_solution_of_the_modified_score(covariates):
    X, y, ids, _ = _seer_kmers()
    n = len(y)
    C = _seer_covariates(ids) if covariates else None
    keep = X.sum(axis=0) > 0
    X = X[:, keep]
    out = _fit(y, X, C)
    firth = np.flatnonzero(out.columns["firth"] == 1)
    assert len(firth) >= 20 and set(out.columns["note"][firth]) <= {"bad-chisq", "high-se", "no-convergence"}
    base = np.ones((n, 1)) if C is None else np.column_stack([np.ones(n), C])
    for j in firth:
        beta, se, loglik = _firth_reference(y, base, X[:, j])
        *_, null = _firth_reference(y, base, X[:, j], free=base.shape[1])
        np.testing.assert_allclose(out.statistic[j], beta, rtol=1e-6)
        np.testing.assert_allclose(out.columns["se"][j], se, rtol=1e-6)
        np.testing.assert_allclose(out.scores[j], 2 * (loglik - null), rtol=1e-6, atol=1e-9)


def _run_seer(tmp_path, *extra, pheno="subset.pheno"):
    for name in ("example_kmers.gz", pheno, "covariates.txt", "all_structure_new"):
        (tmp_path / name).symlink_to(SEER_EXAMPLES / name)
    out = subprocess.run(["seer", "-k", "example_kmers.gz", "-p", pheno, "--pval", "1", "--chisq", "1", *extra],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    (tmp_path / "seer.tsv").write_text(out)
    return pd.read_csv(tmp_path / "seer.tsv", sep="\t").set_index("sequence")


def _as_seer_prints(lrt):
    """SEER's printed LRT p-value: the normal tail of sqrt(LRT), with its bound phi(z)/z from z = 5."""
    z = np.sqrt(lrt)
    with np.errstate(divide="ignore"):
        return np.where(z < 5, 2 * stats.norm.sf(z), 2 * stats.norm.pdf(z) / np.maximum(z, 5))


@needs_examples
@pytest.mark.skipif(shutil.which("seer") is None, reason="seer is not installed (Debian package seer)")
@pytest.mark.parametrize("case", ["plain", "covariates", "structure"])
def test_lrt_pvalues_equal_seers_printed_ones(tmp_path, case):
    """Where both fit by maximum likelihood (SEER: no comment or 'bfgs-fail'; here: no Firth),
    the p-values agree to the 4 digits SEER prints. SEER's Firth fits compare a penalised model
    with an unpenalised null, so those are not compared."""
    pheno = "example.pheno" if case == "structure" else "subset.pheno"
    extra = {"plain": (), "covariates": ("--covar_file", "covariates.txt", "--covar_list", "2q,3"),
             "structure": ("--struct", "all_structure_new")}[case]
    seer = _run_seer(tmp_path, *extra, pheno=pheno)
    X, y, ids, names = _seer_kmers(pheno)
    C = None
    if case == "covariates":
        C = _seer_covariates(ids)
    elif case == "structure":
        coords = np.loadtxt(SEER_EXAMPLES / "all_structure_new", skiprows=2)
        order = pd.read_csv(SEER_EXAMPLES / "all_structure_new.samples", header=None)[0]
        C = pd.DataFrame(coords, index=order).loc[ids].to_numpy()
    out = _fit(y, X, C)
    at = pd.Series(np.arange(len(names)), index=names).loc[seer.index].to_numpy()
    plain = (seer["comments"].isna() | (seer["comments"] == "bfgs-fail")).to_numpy() & (out.columns["firth"][at] == 0)
    assert plain.sum() >= 120
    ours = _as_seer_prints(out.scores[at][plain])
    np.testing.assert_allclose(ours, seer["lrt_p_val"].to_numpy()[plain], rtol=5e-4)
    np.testing.assert_allclose(out.statistic[at][plain], seer["beta"].to_numpy()[plain], rtol=5e-4)


def test_separation_falls_back_to_firth_and_never_gives_a_silent_p_value():
    rng = np.random.default_rng(4)
    n = 40
    y = np.arange(n) % 2.0
    C = rng.normal(size=(n, 1))
    X = np.column_stack([y * 2.0 + 1.0,  # separates the classes perfectly
                         np.where(y == 1, rng.uniform(1, 2, n), rng.uniform(-2, 1.5, n)),  # nearly
                         rng.normal(size=n),
                         np.full(n, 3.0),  # constant
                         C[:, 0] * 2 - 1])  # in the span of the covariates
    out = _fit(y, X, C)
    assert list(out.columns["note"]) == ["bad-chisq", "high-se", "", "constant", "in-covariate-span"]
    np.testing.assert_array_equal(out.columns["firth"][:3], [1, 1, 0])
    assert np.isfinite(out.pvalues[:3]).all() and out.pvalues[0] < 1e-4
    assert np.isnan(out.pvalues[3:]).all() and np.isnan(out.statistic[3:]).all()
    never = _fit(y, X, C, firth="never")
    assert list(never.columns["note"][:3]) == ["high-se", "high-se", ""]
    assert np.isnan(never.pvalues[:2]).all() and np.isnan(never.columns["firth"][:2]).all()
    assert never.columns["firth"][2] == 0 and never.pvalues[2] == out.pvalues[2]
    always = _fit(y, X, C, firth="always")
    assert (always.columns["firth"][:3] == 1).all()


def test_covariates_that_separate_the_classes_test_every_feature_by_firths_likelihood():
    """A lineage without cases: no maximum-likelihood null model exists, so each feature's test
    is the penalised likelihood ratio (Heinze & Schemper), equal to an independent solution of the
    modified score equations; with firth="never" nothing can be tested, which the error says."""
    rng = np.random.default_rng(0)
    n = 60
    lineage = np.repeat([0, 1, 2], 20)
    y = np.where(lineage == 2, 0.0, (rng.random(n) < 0.5) * 1.0)  # lineage 2 has no case
    C = np.column_stack([lineage == 1, lineage == 2]).astype(float)
    X = (rng.random((n, 4)) < 0.4) * 1.0
    with pytest.warns(UserWarning, match="The covariates separate the classes.*Firth's penalised likelihood"):
        out = _fit(y, X, C)
    assert (out.columns["firth"] == 1).all() and set(out.columns["note"]) == {"covariates-separate"}
    base = np.column_stack([np.ones(n), C])
    for j in range(X.shape[1]):
        beta, se, loglik = _firth_reference(y, base, X[:, j])
        *_, null = _firth_reference(y, base, X[:, j], free=base.shape[1])
        np.testing.assert_allclose(out.statistic[j], beta, rtol=1e-6)
        np.testing.assert_allclose(out.columns["se"][j], se, rtol=1e-6)
        np.testing.assert_allclose(out.scores[j], 2 * (loglik - null), rtol=1e-6, atol=1e-9)
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="The covariates separate the classes.*"
                                                                   "Without Firth's penalty no feature can be tested"):
        _fit(y, X, C, firth="never")


def test_bad_firth_option():
    with pytest.raises(ValueError, match=r"The 'firth' option of method 'logistic' must be one of "
                                         r"'auto', 'always', 'never'. Got 'yes' instead"):
        gs.score(np.eye(6), [0, 1] * 3, method="logistic", method_options={"firth": "yes"})


def test_beta_scales_with_the_feature_and_the_test_does_not():
    y, X = _golub(30)
    ref, scaled = gs.score(X, y, method="logistic"), gs.score(X * 8.0 - 3.0, y, method="logistic")
    np.testing.assert_allclose(scaled.statistic, ref.statistic / 8.0, rtol=1e-7)
    np.testing.assert_allclose(scaled.columns["se"], ref.columns["se"] / 8.0, rtol=1e-7)
    np.testing.assert_allclose(scaled.scores, ref.scores, rtol=1e-7, atol=1e-10)
    flipped = gs.score(-X, y, method="logistic")
    np.testing.assert_allclose(flipped.statistic, -ref.statistic, rtol=1e-7)
    np.testing.assert_allclose(flipped.scores, ref.scores, rtol=1e-7, atol=1e-10)


def test_table_columns_and_order():
    y, X = _golub(10)
    frame = gs.score(X, y, method="logistic").to_frame()
    assert list(frame.columns) == ["feature", "score", "statistic", "pvalue", "qvalue", "beta", "se", "wald_pvalue",
                                   "lrt_pvalue", "firth", "note", "rank"]
    np.testing.assert_array_equal(frame["pvalue"], frame["lrt_pvalue"])


def test_the_allele_frequency_filter_blanks_the_notes_of_untested_features():
    rng = np.random.default_rng(8)
    n = 40
    y = np.arange(n) % 2
    X = (rng.random((n, 6)) < 0.5).astype(float)
    X[:, 0] = 0.0
    X[:2, 0] = 1.0  # 5% of the samples: filtered out (its table would say bad-chisq)
    res = gs.score(X, y, method="logistic", min_af=0.1)
    full = gs.score(X, y, method="logistic")
    assert full.columns["note"][0] == "bad-chisq" and res.columns["note"][0] == ""
    assert np.isnan(res.columns["firth"][0]) and np.isnan(res.columns["beta"][0]) and np.isnan(res.scores[0])
    np.testing.assert_array_equal(res.columns["lrt_pvalue"][1:], full.columns["lrt_pvalue"][1:])
    assert list(res.to_frame().columns[-3:]) == ["note", "af", "rank"]


def test_a_method_column_must_not_shadow_the_tables_own():
    from genosift.scores import ScoreResult

    with pytest.raises(ValueError, match="column 'rank' must be one value per feature"):
        ScoreResult("x", np.zeros(3), np.zeros(3), None, 5, columns={"rank": np.zeros(3)})
