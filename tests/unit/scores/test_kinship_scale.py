"""The scale of h2 and what a kinship must be.

h2 is the share of the variance on the kinship scaled to a mean diagonal of 1, whatever the scale
the kinship comes in: pyseer's printed h2 on its uncentred ``G G^T`` similarity, the same for any
positive multiple, a restricted likelihood maximised here from its formula, FaST-LMM's on the
normalised kinship. A matrix that is no similarity of the samples (a distance, a pair more alike
than either is to itself) is refused with the fix, from Python and from the command line; the
similarities users bring (genosift's kinship, pyseer's, a tree's, any of them printed to 6
digits) pass."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

import genosift as gs
from genosift.genomics.structure import tree_kinship
from genosift.io import read_kinship
from genosift.scores.lmm import SIMILARITY_TOL, check_similarity

from conftest import require_shared

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


@pytest.fixture(scope="module")
def sim100():
    """pyseer's similarity of the 100 genomes (``G G^T``, not centred), the phenotypes and the h2
    pyseer printed for each (its text, to compare digit for digit)."""
    folder = require_shared("pyseer_sim100")
    K = read_kinship(folder / "kinship_GGt.tsv")
    out = {"kinship": K}
    for kind in ("bin", "cont"):
        pheno = pd.read_csv(folder / f"pheno_{kind}.tsv", sep="\t", index_col=0).iloc[:, 0]
        printed = re.search(r"^h\^2 = (\S+)$", (folder / f"ps_lmm_{kind}.err").read_text(), re.M)[1]
        out[kind] = (pheno, printed)
    return folder, out


def _digits(value, printed):
    """``value`` written with as many decimals as pyseer's ``printed``."""
    return f"{value:.{len(printed.split('.')[1])}f}"


@pytest.mark.parametrize("kind", ["bin", "cont"])
def test_h2_is_pyseers_printed_h2_on_its_uncentred_similarity(sim100, kind, tmp_path, monkeypatch, capsys):
    from genosift.cli import main

    folder, data = sim100
    pheno, printed = data[kind]
    K = data["kinship"].loc[pheno.index, pheno.index]
    assert np.trace(K.to_numpy()) / len(K) > 1000  # a diagonal in the thousands: not on h2's scale as it is
    found = gs.heritability(K.to_numpy(), pheno.to_numpy())
    assert _digits(found.h2, printed) == printed
    # the mixed model's null, the one its tests use, is the same (the features do not change it)
    X = pd.read_csv(folder / "meta.tsv", sep="\t", index_col=0).loc[pheno.index, ["causal", "lineage"]]
    res = gs.score(X, pheno.to_numpy(), method="lmm", kinship=K, method_options={"model": "linear"})  # pyseer's model
    assert res.model["h2"] == pytest.approx(found.h2, abs=1e-12)
    # and the command prints it
    monkeypatch.chdir(tmp_path)
    target = {"bin": "phenotype", "cont": "cont"}[kind]
    assert main(["heritability", str(folder / "meta.tsv"), "--target", target, "--kinship",
                 str(folder / "kinship_GGt.tsv")]) == 0
    shown = re.search(r"h2 = (\d\.\d+) \(REML[,)]", capsys.readouterr().out)[1]
    assert _digits(float(shown), printed) == printed and float(shown) == pytest.approx(found.h2, abs=5e-5)


def _population(seed=0, n=40, p=300):
    """Presence/absence of 4 lineages, its uncentred similarity ``G G^T`` (pyseer's formula), a
    phenotype with a lineage effect and a covariate."""
    rng = np.random.default_rng(seed)
    lineage = np.repeat(np.arange(4), n // 4)
    G = ((rng.random((4, p)) < 0.4)[lineage] ^ (rng.random((n, p)) < 0.08)).astype(float)
    y = 0.9 * rng.normal(size=4)[lineage] + rng.normal(size=n)
    return G, G @ G.T, y, rng.normal(size=(n, 1))


def _direct_reml(K, y, C):
    """h2 maximising the restricted likelihood of ``y ~ N(C b, s2 (h2 K + (1 - h2) I))`` with ``K``
    scaled to trace n, written from its formula (``s2`` and ``b`` profiled out): ``-1/2 (log|V| +
    log|C^T V^-1 C| + (n - q) log(y^T P y))``, ``P = V^-1 - V^-1 C (C^T V^-1 C)^-1 C^T V^-1``."""
    n, q = C.shape
    K = K * n / np.trace(K)

    def minus_loglik(h):
        V = h * K + (1 - h) * np.eye(n)
        Vi = np.linalg.inv(V)
        A = C.T @ Vi @ C
        P = Vi - Vi @ C @ np.linalg.solve(A, C.T @ Vi)
        return 0.5 * (np.linalg.slogdet(V)[1] + np.linalg.slogdet(A)[1] + (n - q) * np.log(y @ P @ y))

    grid = np.linspace(0.0, 0.999, 1000)
    k = int(np.argmin([minus_loglik(h) for h in grid]))
    return optimize.minimize_scalar(minus_loglik, bounds=(grid[max(k - 1, 0)], grid[min(k + 1, 999)]),
                                    method="bounded", options={"xatol": 1e-10}).x


def test_h2_is_the_same_on_any_scale_of_the_kinship_and_equals_a_direct_reml():
    G, K, y, z = _population(seed=4)
    C = np.column_stack([np.ones(y.size), z])
    expected = _direct_reml(K, y, C)
    assert 0.1 < expected < 0.9
    fits = {factor: gs.heritability(factor * K, y, covariates=z) for factor in (1e-3, 1.0, 1e4)}
    for factor, found in fits.items():
        assert found.h2 == pytest.approx(expected, abs=1e-6), factor
        assert found.lrt == pytest.approx(fits[1.0].lrt, rel=1e-6)
        assert found.se == pytest.approx(fits[1.0].se, rel=1e-3)
    X = G[:, :30]
    base = gs.score(X, y, method="lmm", kinship=K, covariates=z)
    for factor in (1e-3, 1e4):
        scaled = gs.score(X, y, method="lmm", kinship=factor * K, covariates=z)
        np.testing.assert_allclose(scaled.pvalues, base.pvalues, rtol=1e-6, equal_nan=True)
        assert scaled.model["h2"] == pytest.approx(base.model["h2"], abs=1e-6)


def test_h2_equals_fastlmms_on_the_normalised_kinship():
    """FaST-LMM fitted on ``K n / trace(K)`` (as pyseer hands it the similarity), genosift on
    ``G G^T`` as it comes."""
    lmm_cov = pytest.importorskip("fastlmm.inference.lmm_cov", reason="the FaST-LMM reference needs fastlmm "
                                  "(pip install fastlmm six)")
    G, K, y, z = _population(seed=3)
    n = y.size
    reference = lmm_cov.LMM(X=np.column_stack([z, np.ones(n)]), Y=y[:, None], K=K * n / np.trace(K))
    found = reference.findH2()
    ours = gs.heritability(K, y, covariates=z)
    assert 0.05 < ours.h2 < 0.95
    assert ours.h2 == pytest.approx(float(found["h2"][0]), abs=1e-5)
    assert reference.nLLeval(h2=ours.h2)["nLL"][0] <= found["nLL"][0] + 1e-9  # at least as good an optimum


def _similar(seed=5, n=12):
    """A kinship of the features with diagonal 1 (a correlation of the samples) and ids."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, 80)) < 0.4).astype(float)
    K = gs.kinship(X).to_numpy()
    d = np.sqrt(np.diag(K))
    ids = [f"iso{i}" for i in range(n)]
    return X, K / np.outer(d, d), ids, rng.normal(size=n)


def test_a_distance_or_a_matrix_that_is_no_similarity_is_refused_with_the_fix():
    X, S, ids, y = _similar()
    distance = 1.0 - S  # zero diagonal, positive off it
    for call in (lambda K: gs.heritability(K, y), lambda K: gs.score(X, y, method="lmm", kinship=K)):
        with pytest.raises(ValueError, match=r"not a similarity of the samples: its diagonal is 0 for every sample, "
                                             r"as a distance matrix's is") as info:
            call(distance)
        message = str(info.value)
        assert ("with kinship=genosift.io.read_kinship(path) (a table) or "
                "kinship=genosift.genomics.structure.tree_kinship(path) (a tree); or the kinship of the data, "
                "kinship=genosift.kinship(X)") in message
        assert "similarity_pyseer" in message and "phylogeny_distance --lmm" in message and "--kinship" not in message
    frame = pd.DataFrame(X, index=ids)
    named = pd.DataFrame(distance + 0.01 * np.eye(12), index=ids, columns=ids).iloc[::-1, ::-1]
    with pytest.raises(ValueError, match=r"between samples 'iso\d+' and 'iso\d+' it is \d\.\d+, where their kinships "
                                         r"to themselves are 0\.01 and 0\.01: larger than the root of their product, "
                                         r"0\.01, which a covariance of the samples never is \(66 pairs are so\)"):
        gs.score(frame, y, method="lmm", kinship=named)
    bad = S.copy()
    bad[3, 3] = -0.2
    with pytest.raises(ValueError, match=r"sample 'iso3' has kinship -0\.2 to itself; a similarity has each sample's "
                                         r"kinship to itself positive"):
        gs.score(frame, y, method="lmm", kinship=pd.DataFrame(bad, index=ids, columns=ids))
    bad = S.copy()
    bad[2, 7] = bad[7, 2] = 1.5  # more alike than either is to itself (1)
    with pytest.raises(ValueError, match=r"between the samples of rows 2 and 7 it is 1\.5, where their kinships to "
                                         r"themselves are 1 and 1: larger than the root of their product, 1,"):
        gs.heritability(bad, y)
    with pytest.raises(ValueError, match=r"its diagonal sums to -3"):
        gs.heritability(-3.0 / 12 * np.eye(12), y)


def test_the_command_refuses_a_distance_matrix_with_its_own_fix(tmp_path, monkeypatch, capsys):
    from genosift.cli import main

    X, S, ids, y = _similar(seed=6, n=16)
    pd.DataFrame(X, index=pd.Index(ids, name="sample"), columns=[f"k{j}" for j in range(80)]).assign(
        pheno=y).to_csv(tmp_path / "data.tsv", sep="\t")
    pd.DataFrame(1.0 - S, index=ids, columns=ids).to_csv(tmp_path / "distance.tsv", sep="\t", float_format="%.6g")
    monkeypatch.chdir(tmp_path)
    for command in (["score", "data.tsv", "--target", "pheno", "--keep", "pheno", "--method", "lmm", "--kinship",
                     "distance.tsv", "-o", "lmm.tsv"],
                    ["heritability", "data.tsv", "--target", "pheno", "--keep", "pheno", "--kinship", "distance.tsv"]):
        assert main(command) != 0
        err = capsys.readouterr().err
        assert "not a similarity of the samples: its diagonal is 0 for every sample" in err
        assert ("pyseer's similarity_pyseer or phylogeny_distance --lmm output, or a phylogeny in Newick, with "
                "--kinship FILE; or the kinship of the data, --kinship-from-data.") in err
        assert "genosift.kinship" not in err and "kinship=" not in err
    assert not (tmp_path / "lmm.tsv").exists()
    close = 1.0 - S
    np.fill_diagonal(close, 1.0)  # a diagonal, but pairs beyond it: named by id
    pd.DataFrame(close, index=ids, columns=ids).to_csv(tmp_path / "close.tsv", sep="\t")
    assert main(["heritability", "data.tsv", "--target", "pheno", "--keep", "pheno", "--kinship", "close.tsv"]) != 0
    assert re.search(r"between samples 'iso\d+' and 'iso\d+' it is 1\.\d+, where their kinships to themselves are 1 "
                     r"and 1", capsys.readouterr().err)


def test_the_similarities_users_bring_pass_also_printed_to_6_digits(sim100, tmp_path, monkeypatch, capsys):
    from genosift.cli import main

    folder, data = sim100
    pheno, _ = data["bin"]
    K = data["kinship"].loc[pheno.index, pheno.index]
    names = list(K.index)
    rng = np.random.default_rng(7)
    nodes = [f"{s}:{rng.uniform(0.001, 0.05):.6f}" for s in names]
    while len(nodes) > 1:
        i, j = sorted(rng.choice(len(nodes), 2, replace=False))
        joined = f"({nodes[i]},{nodes[j]}):{rng.uniform(0, 0.1):.6f}"
        nodes = [v for k, v in enumerate(nodes) if k not in (i, j)] + [joined]
    (tmp_path / "tree.nwk").write_text(nodes[0].rsplit(":", 1)[0] + ";")
    tree = tree_kinship(tmp_path / "tree.nwk").loc[names, names]
    ours = gs.kinship(pd.read_csv(folder / "meta.tsv", sep="\t", index_col=0).loc[names, ["lineage", "causal"]])
    for label, similarity in (("pyseer", K), ("tree", tree), ("genosift", ours)):
        check_similarity(similarity.to_numpy(), names)
        path = tmp_path / f"{label}.tsv"
        similarity.to_csv(path, sep="\t", float_format="%.6g")  # 6 significant digits
        printed = read_kinship(path).loc[names, names]
        if label != "pyseer":  # (pyseer's integers print exactly)
            assert not np.array_equal(printed.to_numpy(), similarity.to_numpy())
        exact, rounded = (gs.heritability(k.to_numpy(), pheno.to_numpy()).h2 for k in (similarity, printed))
        assert rounded == pytest.approx(exact, abs=1e-4), label
    assert main(["score", str(folder / "meta.tsv"), "--target", "phenotype", "--keep", "phenotype", "--method", "lmm",
                 "--kinship", str(tmp_path / "tree.tsv"), "-o", str(tmp_path / "out.tsv")]) == 0
    assert "h2 = " in capsys.readouterr().out


def test_rounding_to_6_significant_digits_never_trips_the_check(monkeypatch):
    """The tightest similarity, ``v v^T`` (every pair at the bound, ``|K_ij| = sqrt(K_ii K_jj)``),
    printed to 6 significant digits passes; the bound exceeded by ten times the tolerance does not."""
    rng = np.random.default_rng(8)
    v = rng.lognormal(size=300) * rng.choice([-1.0, 1.0], size=300)
    K = np.outer(v, v)
    printed = np.array([[float(f"{x:.6g}") for x in row] for row in K])
    check_similarity(printed)
    # what lets it pass is the tolerance: rounding takes some pairs beyond the bound itself
    import genosift.scores.lmm as lmm

    monkeypatch.setattr(lmm, "SIMILARITY_TOL", 0.0)
    with pytest.raises(ValueError, match="it is"):
        check_similarity(printed)
    monkeypatch.undo()
    over = K.copy()
    over[4, 9] = over[9, 4] = K[4, 9] * (1 + 10 * SIMILARITY_TOL) + np.sign(K[4, 9]) * np.trace(K) / 300 * 1e-3
    with pytest.raises(ValueError, match="between the samples of rows 4 and 9 it is"):
        check_similarity(over)
