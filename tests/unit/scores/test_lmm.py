"""The linear mixed model: its null h2 (REML), betas, standard errors, t and likelihood-ratio
p-values equal a direct generalised-least-squares fit on the full covariance (Cholesky, no
eigendecomposition) and FaST-LMM's likelihood and tests;
every input form gives the same results; the kinship from the features equals its formula; what is
refused is named."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import optimize, stats

import genosift as gs
from genosift.io import Dataset, write_store

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


def _population(seed=0, n=90, p=160):
    """Samples of 6 lineages (a kinship with structure), a phenotype with a lineage effect, a
    causal feature and covariates; features with duplicated columns."""
    rng = np.random.default_rng(seed)
    lineage = np.repeat(np.arange(6), n // 6)
    markers = (rng.random((6, 400)) < 0.5)[lineage] ^ (rng.random((n, 400)) < 0.05)
    K = gs.kinship(markers.astype(float)).to_numpy()
    X = (rng.random((n, p)) < 0.35).astype(float)
    X[:, 10] = X[:, 3]  # duplicates, fitted once
    Z = rng.normal(size=(n, 2))
    y = 0.8 * X[:, 0] + 1.5 * rng.normal(size=6)[lineage] + rng.normal(size=n) + Z @ [0.3, -0.2]
    return X, y, Z, K


def _direct(K, y, C, X, h2=None):
    """REML of the null over h2 (``_direct_reml``), then each feature's GLS fit at that h2 with
    the full covariance, by Cholesky: ``(h2, [(beta, se, t p-value, lrt)])``, se with the
    variance ``rss / (n - q - 1)`` and the likelihood ratio of the ``n - q`` error contrasts."""
    n, q = C.shape
    if h2 is None:
        h2, _ = _direct_reml(K, y, C)
    L = np.linalg.cholesky(h2 * K + (1 - h2) * np.eye(n))

    def fit(D):
        yw, Dw = np.linalg.solve(L, y), np.linalg.solve(L, D)
        b = np.linalg.lstsq(Dw, yw, rcond=None)[0]
        return b, float(np.sum((yw - Dw @ b) ** 2)), Dw

    _, rss0, _ = fit(C)
    out = []
    for j in range(X.shape[1]):
        b, rss, Dw = fit(np.column_stack([C, X[:, j]]))
        se = np.sqrt(np.linalg.inv(Dw.T @ Dw)[-1, -1] * rss / (n - q - 1))
        out.append((b[-1], se, 2 * stats.t.sf(abs(b[-1] / se), n - q - 1), (n - q) * np.log(rss0 / rss)))
    return h2, np.array(out)


def test_lmm_equals_a_direct_gls_fit():
    X, y, Z, K = _population()
    res = gs.score(X, y, method="lmm", kinship=K, covariates=Z)
    C = np.column_stack([np.ones(y.size), Z])
    h2, direct = _direct(K, y, C, X[:, :40])
    assert 0.05 < res.model["h2"] < 0.95  # inside, where the likelihood has its maximum
    assert res.model["h2"] == pytest.approx(h2, abs=1e-6)
    # at the same h2 every number agrees to rounding
    _, same_h2 = _direct(K, y, C, X[:, :40], h2=res.model["h2"])
    np.testing.assert_allclose(res.columns["beta"][:40], same_h2[:, 0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.columns["se"][:40], same_h2[:, 1], rtol=1e-9)
    np.testing.assert_allclose(res.pvalues[:40], same_h2[:, 2], rtol=1e-8)
    np.testing.assert_allclose(res.statistic[:40], same_h2[:, 0] / same_h2[:, 1], rtol=1e-9)
    np.testing.assert_allclose(res.columns["lrt"][:40], same_h2[:, 3], rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(res.columns["lrt_pvalue"][:40], stats.chi2.sf(same_h2[:, 3], 1), rtol=1e-6)
    np.testing.assert_allclose(res.pvalues[:40], direct[:, 2], rtol=1e-4)
    assert res.ranking[0] == 0  # the causal feature first
    assert res.provenance()["model"]["h2"] == res.model["h2"]


@pytest.mark.parametrize("covariates", [True, False])
def test_lmm_equals_fastlmm(covariates):
    """FaST-LMM's ``lmm_cov.LMM`` (the likelihood pyseer's --lmm is built on): the same REML h2 to
    its optimiser's tolerance, and at that h2 the same betas, standard errors, likelihood ratios
    and single_snp's F(1, n - c - 2) p-values."""
    lmm_cov = pytest.importorskip("fastlmm.inference.lmm_cov", reason="the FaST-LMM reference needs fastlmm "
                                  "(pip install fastlmm six)")
    X, y, Z, K = _population(seed=11, n=120, p=60)
    Z = Z if covariates else None
    res = gs.score(X, y, method="lmm", kinship=K, covariates=Z)
    n = y.size
    design = np.ones((n, 1)) if Z is None else np.column_stack([Z, np.ones(n)])
    reference = lmm_cov.LMM(X=design, Y=y[:, None], K=K)
    found = reference.findH2()
    assert res.model["h2"] == pytest.approx(float(found["h2"][0]), abs=1e-6)
    ours = reference.nLLeval(h2=res.model["h2"])["nLL"]
    assert ours[0] <= found["nLL"][0] + 1e-9  # our h2 is at least as good an optimum of its likelihood
    null = reference.nLLeval(h2=res.model["h2"])
    fits = reference.nLLeval(h2=res.model["h2"], snps=X)
    lrt = 2 * (null["nLL"][0] - fits["nLL"][:, 0])
    wald = fits["beta"][:, 0] ** 2 / fits["variance_beta"][:, 0]
    np.testing.assert_allclose(res.columns["beta"], fits["beta"][:, 0], rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(res.columns["se"], np.sqrt(fits["variance_beta"][:, 0]), rtol=1e-10)
    np.testing.assert_allclose(res.pvalues, stats.f.sf(wald, 1, n - design.shape[1] - 1), rtol=1e-9)
    np.testing.assert_allclose(res.columns["lrt"], lrt, rtol=1e-6, atol=1e-8)


def test_every_input_form_gives_the_same_results(tmp_path):
    """The same to rounding (the rotation of a block of features is a BLAS product, whose last
    bits depend on the block's width); the null model the same bits."""
    anndata = pytest.importorskip("anndata", reason="AnnData input needs anndata")
    X, y, Z, K = _population(seed=1)
    ids = np.array([f"s{i}" for i in range(y.size)], dtype=object)
    names = np.array([f"k{j}" for j in range(X.shape[1])], dtype=object)
    frame_K = pd.DataFrame(K, index=ids, columns=ids)
    shuffled = frame_K.iloc[::-1, ::-1]  # put back in the samples' order by id
    base = gs.score(X, y, method="lmm", kinship=K, covariates=Z)
    forms = {
        "csr": gs.score(sp.csr_matrix(X), y, method="lmm", kinship=K, covariates=Z),
        "frame": gs.score(pd.DataFrame(X, index=ids, columns=names), y, method="lmm", kinship=shuffled,
                          covariates=Z),
        "anndata": gs.score(anndata.AnnData(X, obs=pd.DataFrame(index=ids), var=pd.DataFrame(index=names)), y,
                            method="lmm", kinship=shuffled, covariates=Z),
    }
    for dense in (False, True):
        path = write_store(Dataset(X if dense else sp.csr_matrix(X), ids, names), tmp_path / f"{dense}.gs.h5ad")
        forms[f"store {dense}"] = gs.score(path, y, method="lmm", kinship=shuffled, covariates=Z, chunk_bytes=12_000)
    for form, res in forms.items():
        for a, b in ((res.pvalues, base.pvalues), (res.statistic, base.statistic), (res.scores, base.scores)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14, err_msg=form)
        assert res.model == base.model, form
    # a store's kept samples: the kinship of every row (taken) or of the rows kept
    keep = np.flatnonzero(np.arange(y.size) % 5 != 0)
    sub = gs.score(X[keep], y[keep], method="lmm", kinship=K[np.ix_(keep, keep)], covariates=Z[keep])
    path = tmp_path / "False.gs.h5ad"
    from genosift.scoring.store import score_store

    for given in (K, K[np.ix_(keep, keep)], frame_K):
        kept = score_store(path, y[keep], method="lmm", kinship=given, covariates=Z[keep], samples=keep)
        np.testing.assert_allclose(kept.pvalues, sub.pvalues, rtol=1e-10)


def test_the_kinship_of_the_features_equals_its_formula(tmp_path):
    rng = np.random.default_rng(3)
    X = (rng.random((30, 500)) < 0.3) * rng.integers(1, 4, (30, 500))
    centred = X - X.mean(axis=0)
    expected = centred @ centred.T
    expected /= np.trace(expected) / 30
    K = gs.kinship(X).to_numpy()
    np.testing.assert_allclose(K, expected, rtol=1e-12, atol=1e-12)
    ids = np.array([f"s{i}" for i in range(30)], dtype=object)
    path = write_store(Dataset(sp.csr_matrix(X), ids, np.array([f"k{j}" for j in range(500)], dtype=object)),
                       tmp_path / "k.gs.h5ad")
    stored = gs.kinship(path, chunk_bytes=4_000)
    assert list(stored.index) == list(ids) and np.array_equal(stored.to_numpy(), K)  # integers: the same bits
    presence = X > 0
    centred = presence - presence.mean(axis=0)
    np.testing.assert_allclose(gs.kinship(X, binary=True).to_numpy(),
                               centred @ centred.T / (np.trace(centred @ centred.T) / 30), rtol=1e-12, atol=1e-14)
    chosen = gs.kinship(path, samples=["s3", "s1", "s2"])
    assert list(chosen.index) == ["s3", "s1", "s2"]


def test_what_is_refused_is_named():
    X, y, Z, K = _population(seed=2, n=30, p=12)
    with pytest.raises(ValueError, match="needs the kinship of the samples"):
        gs.score(X, y, method="lmm")
    with pytest.raises(ValueError, match="does not use a kinship"):
        gs.score(X, y, method="regression", kinship=K)
    with pytest.raises(ValueError, match="must be 30 x 30"):
        gs.score(X, y, method="lmm", kinship=K[:-1, :-1])
    bad = K.copy()
    bad[0, 1] += 0.5
    with pytest.raises(ValueError, match="not symmetric"):
        gs.score(X, y, method="lmm", kinship=bad)
    bad = K.copy()
    bad[2, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        gs.score(X, y, method="lmm", kinship=bad)
    ids = [f"s{i}" for i in range(30)]
    partial = pd.DataFrame(K[1:, 1:], index=ids[1:], columns=ids[1:])
    with pytest.raises(ValueError, match="no row or column for 1 sample"):
        gs.score(pd.DataFrame(X, index=ids), y, method="lmm", kinship=partial)
    with pytest.raises(ValueError, match="stream of row chunks"):
        gs.score(iter([(X, y)]), method="lmm", kinship=K)


def _counts_and_kinship(seed, n=60, p=23):
    """The contract tests' data (counts, two constant features) with a fixed kinship."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.2, size=(n, p)).astype(np.float64)
    X[:, 4], X[:, 7] = 0.0, 2.0
    K = gs.kinship(rng.random((n, 50)) < 0.4).to_numpy()
    return X, rng.standard_normal(n), K


def test_the_registry_contracts_hold_with_a_kinship(monkeypatch):
    """What tests/contract/test_contract.py and tests/contract/test_properties.py check of every method, for the
    mixed model with its kinship: result conventions, every in-memory form, block widths, NaN
    named, rows and columns permuted, affine maps of a feature, threads."""
    from genosift.core import engine
    from genosift.scores import tie_key

    X, y, K = _counts_and_kinship(0)
    res = gs.score(X, y, method="lmm", kinship=K)
    assert res.n_features == 23 and np.isnan(res.scores[[4, 7]]).all() and set(res.ranking[-2:]) == {4, 7}
    np.testing.assert_array_equal(res.scores[~np.isnan(res.scores)] >= 0, True)
    np.testing.assert_array_equal(res.scores, res.statistic * 0 + res.scores)  # finite where the statistic is
    order = res.ranking[~np.isnan(res.scores[res.ranking])]
    assert (np.diff(tie_key(res.scores)[order]) <= 0).all()

    def same(a, b, rtol=1e-9, atol=1e-12):
        for u, v in ((a.scores, b.scores), (a.statistic, b.statistic), (a.pvalues, b.pvalues)):
            np.testing.assert_allclose(u, v, rtol=rtol, atol=atol, equal_nan=True)

    for variant in (sp.csr_matrix(X), sp.csc_matrix(X), np.asfortranarray(X), X.astype(np.int16),
                    pd.DataFrame(X, columns=[f"f{j}" for j in range(23)])):
        same(gs.score(variant, y, method="lmm", kinship=K), res)
    for width in (1, 5, 22):
        monkeypatch.setattr(engine, "BLOCK_BYTES", width * 8 * 60)
        same(gs.score(X, y, method="lmm", kinship=K), res)
    monkeypatch.undo()
    perm = np.random.default_rng(1).permutation(60)
    # permuted rows: another eigendecomposition, so h2's optimum moves by rounding (the likelihood is flat there:
    # h2 = 0.05, se 0.2, so a change of the log-likelihood by its last bits moves h2 by ~2e-8, p by ~5e-6 of itself)
    same(gs.score(X[perm], y[perm], method="lmm", kinship=K[np.ix_(perm, perm)]), res, rtol=2e-5, atol=1e-9)
    cols = np.random.default_rng(2).permutation(23)
    moved = gs.score(X[:, cols], y, method="lmm", kinship=K)
    np.testing.assert_allclose(moved.pvalues, res.pvalues[cols], rtol=1e-9, equal_nan=True)
    affine = X.copy()
    affine[:, 3] = 7.5 * affine[:, 3] - 2.0
    mapped = gs.score(affine, y, method="lmm", kinship=K)
    np.testing.assert_allclose(mapped.pvalues, res.pvalues, rtol=1e-8, equal_nan=True)
    assert mapped.columns["beta"][3] == pytest.approx(res.columns["beta"][3] / 7.5, rel=1e-9)
    previous = engine.set_threads(1)
    try:
        one = gs.score(X, y, method="lmm", kinship=K)
    finally:
        engine.set_threads(previous)
    same(one, res, rtol=1e-12)
    bad = pd.DataFrame(X, columns=[f"gene{j}" for j in range(23)])
    bad.iloc[3, 11] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity.*'gene11'"):
        gs.score(bad, y, method="lmm", kinship=K)


def test_the_score_command_fits_the_mixed_model_with_a_kinship_file_or_the_data(tmp_path, monkeypatch, capsys):
    """`genosift score --method lmm` with pyseer's similarity file (matched by id, in another
    order) or the kinship of the data: the library's numbers, h2 printed and in the sidecar."""
    import json

    from genosift.cli import main
    from genosift.report.outputs import read_table

    X, y, Z, K = _population(seed=5, n=48, p=30)
    ids = [f"iso{i:02d}" for i in range(48)]
    pd.DataFrame(X, index=pd.Index(ids, name="sample"), columns=[f"k{j}" for j in range(30)]).assign(
        pheno=y).to_csv(tmp_path / "data.tsv", sep="\t")
    order = np.random.default_rng(0).permutation(48)
    similarity = pd.DataFrame(K, index=ids, columns=ids).iloc[order, order]
    similarity.to_csv(tmp_path / "similarity.tsv", sep="\t", float_format="%.17g")
    monkeypatch.chdir(tmp_path)
    assert main(["score", "data.tsv", "--target", "pheno", "--keep", "pheno", "--method", "lmm", "--kinship",
                 "similarity.tsv", "-o", "lmm.tsv"]) == 0
    out = capsys.readouterr().out
    expected = gs.score(X, y, method="lmm", kinship=K)
    assert (f"h2 = {expected.model['h2']:.4f} (REML, on the kinship scaled to a mean diagonal of 1; fixed for the "
            f"tests), se {expected.model['h2_se']:.4f}") in out
    assert "read from similarity.tsv" in out
    table = read_table("lmm.tsv").set_index("feature")
    names = [f"k{j}" for j in range(30)]
    np.testing.assert_allclose(table.loc[names, "pvalue"], expected.pvalues, rtol=1e-9)
    record = json.loads((tmp_path / "lmm.tsv.json").read_text())
    assert record["model"]["h2"] == pytest.approx(expected.model["h2"], rel=1e-9)
    assert main(["score", "data.tsv", "--target", "pheno", "--keep", "pheno", "--method", "lmm",
                 "--kinship-from-data", "-o", "data_k.tsv"]) == 0
    from_data = gs.score(X, y, method="lmm", kinship=gs.kinship(X))
    np.testing.assert_allclose(read_table("data_k.tsv").set_index("feature").loc[names, "pvalue"],
                               from_data.pvalues, rtol=1e-9)
    capsys.readouterr()
    assert main(["heritability", "data.tsv", "--target", "pheno", "--keep", "pheno", "--kinship",
                 "similarity.tsv"]) == 0
    found = gs.heritability(K, y)
    assert (f"h2 = {found.h2:.4f} (REML, on the kinship scaled to a mean diagonal of 1), standard error "
            f"{found.se:.4f}") in capsys.readouterr().out
    similarity.iloc[:-1, :-1].to_csv(tmp_path / "short.tsv", sep="\t")
    assert main(["score", "data.tsv", "--target", "pheno", "--keep", "pheno", "--method", "lmm", "--kinship",
                 "short.tsv", "-o", "x.tsv"]) != 0
    assert "no row or column for 1 sample" in capsys.readouterr().err
    assert main(["score", "data.tsv", "--target", "pheno", "--keep", "pheno", "--method", "lmm", "-o", "y.tsv"]) != 0
    err = capsys.readouterr().err
    assert "needs the kinship of the samples: pass --kinship FILE (for example --kinship-from-data" in err


def _direct_reml(K, y, C):
    """The restricted log-likelihood with the full covariance (Cholesky), maximised over h2 on a
    fine grid then by Brent's method: ``(h2, loglik function)``."""
    n, q = C.shape

    def loglik(h):
        L = np.linalg.cholesky(h * K + (1 - h) * np.eye(n))
        yw, Cw = np.linalg.solve(L, y), np.linalg.solve(L, C)
        b = np.linalg.lstsq(Cw, yw, rcond=None)[0]
        rss = float(np.sum((yw - Cw @ b) ** 2))
        m = n - q
        return -0.5 * (m * np.log(2 * np.pi * rss / m) + m + 2 * np.log(np.diag(L)).sum()
                       + np.linalg.slogdet(Cw.T @ Cw)[1])

    grid = np.linspace(0, 0.99999, 2001)
    k = int(np.argmax([loglik(h) for h in grid]))
    h2 = optimize.minimize_scalar(lambda h: -loglik(h), bounds=(grid[max(k - 1, 0)], grid[min(k + 1, 2000)]),
                                  method="bounded", options={"xatol": 1e-12}).x
    return h2, loglik


def test_heritability_is_the_reml_estimate_with_its_error_and_test():
    X, y, Z, K = _population(seed=7)
    C = np.column_stack([np.ones(y.size), Z])
    found = gs.heritability(K, y, covariates=Z)
    h2, loglik = _direct_reml(K, y, C)
    assert 0.05 < found.h2 < 0.95 and found.h2 == pytest.approx(h2, abs=1e-6)
    step = 1e-4
    curvature = (loglik(h2 + step) - 2 * loglik(h2) + loglik(h2 - step)) / step ** 2
    assert found.se == pytest.approx(1 / np.sqrt(-curvature), rel=1e-3)
    lrt = 2 * (loglik(h2) - loglik(0.0))
    assert found.lrt == pytest.approx(lrt, rel=1e-6)
    assert found.pvalue == pytest.approx(0.5 * stats.chi2.sf(lrt, 1), rel=1e-5)
    frame = found.to_frame()
    assert frame.columns.tolist() == ["h2", "se", "lrt", "pvalue", "loglik"] and len(frame) == 1
    assert frame.iloc[0].tolist() == [found.h2, found.se, found.lrt, found.pvalue, found.loglik]
    assert not hasattr(found, "as_dict")
    # the mixed model's tests use it, and report it
    res = gs.score(X, y, method="lmm", kinship=K, covariates=Z)
    assert res.model == {"model": "linear", "h2": found.h2, "h2_se": found.se, "h2_lrt": found.lrt,
                         "h2_pvalue": found.pvalue, "restricted_loglik": found.loglik}
    # no signal of the kinship: h2 near 0 and no evidence
    rng = np.random.default_rng(8)
    none = gs.heritability(K, rng.normal(size=y.size))
    assert none.h2 < 0.3 and none.pvalue > 0.01
    with pytest.raises(ValueError, match="one finite number per sample"):
        gs.heritability(K, np.r_[y[:-1], np.nan])


def _random_tree(rng, names):
    """A random rooted binary tree in Newick with random branch lengths (joins of random pairs)."""
    nodes = [f"{name}:{rng.uniform(0.01, 1):.6f}" for name in names]
    while len(nodes) > 1:
        i, j = sorted(rng.choice(len(nodes), 2, replace=False))
        joined = f"({nodes[i]},{nodes[j]}):{rng.uniform(0.01, 1):.6f}"
        nodes = [n for k, n in enumerate(nodes) if k not in (i, j)] + [joined]
    return nodes[0].rsplit(":", 1)[0] + ";"


def test_the_kinship_of_a_tree_is_the_branch_length_shared_from_the_root(tmp_path):
    import gzip
    import io

    from Bio import Phylo

    from genosift.genomics.structure import tree_kinship

    rng = np.random.default_rng(9)
    names = [f"iso{i}" for i in range(25)]
    text = _random_tree(rng, names)
    (tmp_path / "t.nwk.gz").write_bytes(gzip.compress(text.encode()))
    K = tree_kinship(tmp_path / "t.nwk.gz")
    tree = Phylo.read(io.StringIO(text), "newick")
    for a in names[:8]:
        for b in names:
            shared = tree.distance(tree.root, tree.common_ancestor(a, b))
            assert K.loc[a, b] == pytest.approx(shared, abs=1e-12)
    assert np.array_equal(K.to_numpy(), K.to_numpy().T)
    for bad, message in (("((A:1,B:2):1,(A:1,C:1):1);", "more than once"), ("((A:1,B):1,C:1);", "without a length"),
                         ("((A:1,:2):1,C:1);", "without a name")):
        (tmp_path / "bad.nwk").write_text(bad)
        with pytest.raises(ValueError, match=message):
            tree_kinship(tmp_path / "bad.nwk")


def test_the_score_command_takes_a_phylogeny_as_the_kinship(tmp_path, monkeypatch, capsys):
    from genosift.cli import main
    from genosift.genomics.structure import tree_kinship
    from genosift.report.outputs import read_table

    X, y, Z, _ = _population(seed=11, n=36, p=20)
    ids = [f"iso{i}" for i in range(36)]
    (tmp_path / "tree.nwk").write_text(_random_tree(np.random.default_rng(3), ids))
    pd.DataFrame(X, index=pd.Index(ids, name="sample"), columns=[f"k{j}" for j in range(20)]).assign(
        pheno=y).to_csv(tmp_path / "data.tsv", sep="\t")
    monkeypatch.chdir(tmp_path)
    assert main(["score", "data.tsv", "--target", "pheno", "--keep", "pheno", "--method", "lmm", "--kinship",
                 "tree.nwk", "-o", "lmm.tsv"]) == 0
    assert "(a phylogeny: the branch length each pair shares from the root)" in capsys.readouterr().out
    K = tree_kinship(tmp_path / "tree.nwk").loc[ids, ids]
    expected = gs.score(X, y, method="lmm", kinship=K.to_numpy())
    np.testing.assert_allclose(read_table("lmm.tsv").set_index("feature").loc[[f"k{j}" for j in range(20)],
                                                                               "pvalue"], expected.pvalues, rtol=1e-9)


@pytest.mark.parametrize("layout", ["csr", "csc", "dense"])
def test_a_backed_anndata_gives_the_results_in_memory(tmp_path, layout):
    """A backed AnnData (read as a store, by column blocks, or as a view in memory), its kinship
    matched to ``obs_names``: the numbers of the matrix in memory."""
    anndata = pytest.importorskip("anndata", reason="AnnData input needs anndata")
    X, y, Z, K = _population(seed=12, n=60, p=40)
    ids = [f"s{i}" for i in range(60)]
    stored = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "dense": np.asarray}[layout](X)
    anndata.AnnData(stored, obs=pd.DataFrame({"y": y}, index=ids),
                    var=pd.DataFrame(index=[f"k{j}" for j in range(40)])).write_h5ad(tmp_path / "a.h5ad")
    backed = anndata.read_h5ad(tmp_path / "a.h5ad", backed="r")
    shuffled = pd.DataFrame(K, index=ids, columns=ids).iloc[::-1, ::-1]
    expected = gs.score(X, y, method="lmm", kinship=K)
    got = gs.score(backed, "y", method="lmm", kinship=shuffled, chunk_bytes=6_000)
    np.testing.assert_allclose(got.pvalues, expected.pvalues, rtol=1e-9)
    assert got.model["h2"] == pytest.approx(expected.model["h2"], abs=1e-12)
    rows = np.arange(59, -1, -3)  # a view: rows out of file order (read in file order: another eigendecomposition,
    view = gs.score(backed[rows], "y", method="lmm", kinship=shuffled)  # so h2's optimum moves by rounding)
    np.testing.assert_allclose(view.pvalues, gs.score(X[rows], y[rows], method="lmm", kinship=K[np.ix_(rows, rows)])
                               .pvalues, rtol=1e-6)
