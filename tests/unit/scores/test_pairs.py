"""Pairs of features: the joint counts equal numpy's, the scores their formulas, the epistasis test
statsmodels' logistic fits; a planted XOR or AND pair with no marginal signal ranks first among
10,000 features, where no single-feature method finds it; the test is uniform under the null."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats

import genosift as gs
from genosift.scores.pairs import epistasis_lrt, pair_tables


def _crosstab(a, b, y):
    classes = np.unique(y)
    return np.array([[((a == u) & (b == v) & (y == c)).sum() for c in classes]
                     for u, v in ((1, 1), (1, 0), (0, 1), (0, 0))])


@pytest.mark.parametrize("n", [1, 63, 64, 65, 200])
def test_joint_counts_equal_numpys(n):
    rng = np.random.default_rng(n)
    X = (rng.random((n, 12)) < 0.4).astype(np.int64) * rng.integers(1, 4, (n, 12))  # counts: read as presence
    y = rng.integers(0, 3, n)
    pairs = [(i, j) for i in range(12) for j in range(i + 1, 12)]
    tables = pair_tables(X, y, pairs)
    for (i, j), table in zip(pairs, tables):
        expected = _crosstab(X[:, i] > 0, X[:, j] > 0, y)
        np.testing.assert_array_equal(table[:, :expected.shape[1]], expected)


def _mi_bits(table):
    """I((x_i, x_j); c) in bits of a 4 x k table, from its definition with scipy's entropy."""
    p = table / table.sum()
    return (stats.entropy(p.sum(axis=1), base=2) + stats.entropy(p.sum(axis=0), base=2)
            - stats.entropy(p.ravel(), base=2))


def _js_bits(table):
    """The class-share weighted Jensen-Shannon divergence (bits), by scipy's distance squared."""
    from scipy.spatial.distance import jensenshannon

    total = table.sum(axis=1) / table.sum()
    return sum(table[:, c].sum() / table.sum() * jensenshannon(total, table[:, c] / table[:, c].sum(), base=2) ** 2
               for c in range(table.shape[1]))


@pytest.mark.parametrize("method", ["mi", "jensen_shannon"])
@pytest.mark.parametrize("form", ["dense", "sparse", "frame"])
def test_every_pair_kept_is_the_brute_force_ranking(method, form):
    rng = np.random.default_rng(7)
    n, m = 150, 40
    X = (rng.random((n, m)) < 0.35).astype(float)
    y = np.where(X[:, 3] != X[:, 9], "R", "S")  # an XOR among others
    data = {"dense": X, "sparse": sp.csr_matrix(X), "frame": pd.DataFrame(X, columns=[f"g{j}" for j in range(m)])}
    res = gs.score_pairs(data[form], y, method=method, top=m * (m - 1) // 2)
    assert res.n_pairs == m * (m - 1) // 2 and res.n_candidates == m and res.n_samples == n
    score = _mi_bits if method == "mi" else _js_bits
    marginal = np.array([score(_crosstab(X[:, j] > 0, X[:, j] > 0, y)[[0, 3]]) for j in range(m)])
    expected = []
    for i in range(m):
        for j in range(i + 1, m):
            joint = score(_crosstab(X[:, i] > 0, X[:, j] > 0, y).astype(float))
            expected.append((-(joint - max(marginal[i], marginal[j])), i, j, joint))
    expected.sort()
    assert [(i, j) for _, i, j, _ in expected[:20]] == list(zip(res.first[:20], res.second[:20]))
    np.testing.assert_allclose(res.joint, [e[3] for e in expected], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.synergy, [-e[0] for e in expected], rtol=1e-9, atol=1e-12)
    assert (res.first[0], res.second[0]) == (3, 9)
    if form == "frame":
        assert (res.names_first[0], res.names_second[0]) == ("g3", "g9")
    mi = np.array([_mi_bits(_crosstab(X[:, j] > 0, X[:, j] > 0, y)[[0, 3]]) for j in range(m)])
    top = [(_mi_bits(_crosstab(X[:, i] > 0, X[:, j] > 0, y).astype(float)) - mi[i] - mi[j]) for i, j in
           zip(res.first[:20], res.second[:20])]
    np.testing.assert_allclose(res.interaction[:20], top, rtol=1e-9, atol=1e-12)


def test_the_marginal_jensen_shannon_is_the_single_feature_methods():
    rng = np.random.default_rng(8)
    X = (rng.random((90, 15)) < 0.4).astype(float)
    y = rng.integers(0, 3, 90)
    res = gs.score_pairs(X, y, method="jensen_shannon", top=105)
    single = gs.score(X, y, method="jensen_shannon", method_options={"bins": 2}).scores
    got = dict(zip(res.first, res.marginal_first)) | dict(zip(res.second, res.marginal_second))
    np.testing.assert_allclose([got[j] for j in range(15)], single, rtol=1e-10)
    mi = gs.score_pairs(X, y, method="mi", top=105)
    got = dict(zip(mi.first, mi.marginal_first)) | dict(zip(mi.second, mi.marginal_second))
    from sklearn.metrics import mutual_info_score

    np.testing.assert_allclose([got[j] for j in range(15)],
                               [mutual_info_score(X[:, j], y) / np.log(2) for j in range(15)], rtol=1e-10)


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
def test_the_epistasis_test_equals_statsmodels_logistic_fits():
    sm = pytest.importorskip("statsmodels.api", reason="the reference logistic fits need statsmodels")
    rng = np.random.default_rng(9)
    checked = 0
    for _ in range(40):
        n = int(rng.integers(80, 300))
        a, b = rng.random(n) < rng.uniform(0.2, 0.8), rng.random(n) < rng.uniform(0.2, 0.8)
        logit = rng.normal(size=4) @ np.array([np.ones(n), a, b, a & b]) * 0.8
        y = rng.random(n) < 1 / (1 + np.exp(-logit))
        full = np.column_stack([np.ones(n), a, b, a & b]).astype(float)
        try:
            big = sm.Logit(y.astype(float), full).fit(disp=0, method="newton", maxiter=200, tol=1e-12)
            small = sm.Logit(y.astype(float), full[:, :3]).fit(disp=0, method="newton", maxiter=200, tol=1e-12)
        except Exception:  # separation: statsmodels refuses, no reference here
            continue
        lrt, p = epistasis_lrt(a, b, y)
        assert lrt == pytest.approx(2 * (big.llf - small.llf), rel=1e-7, abs=1e-9)
        assert p == pytest.approx(stats.chi2.sf(2 * (big.llf - small.llf), 1), rel=1e-6, abs=1e-12)
        checked += 1
    assert checked >= 30


def test_the_epistasis_test_is_uniform_under_the_null():
    rng = np.random.default_rng(10)
    p = []
    for _ in range(600):
        n = 200
        a, b = rng.random(n) < 0.4, rng.random(n) < 0.5
        y = rng.random(n) < 1 / (1 + np.exp(-(-0.3 + 0.8 * a - 0.5 * b)))  # main effects, no interaction
        p.append(epistasis_lrt(a, b, y)[1])
    assert stats.kstest(p, "uniform").pvalue > 0.01


@pytest.mark.parametrize("kind", ["xor", "and"])
def test_a_planted_pair_ranks_first_among_10000_features_where_single_features_see_nothing(kind):
    rng = np.random.default_rng(11 if kind == "xor" else 12)
    n, p = 240, 10_000
    X = (rng.random((n, p)) < 0.5).astype(np.uint8)
    a, b = X[:, 1234].astype(bool), X[:, 8765].astype(bool)
    if kind == "xor":
        y = a ^ b
    else:  # the class when both are present (a quarter of the samples), noise elsewhere
        y = (a & b) | (rng.random(n) < 0.05)
    flip = rng.random(n) < 0.05
    y = np.where(flip, ~y, y).astype(int)
    res = gs.score_pairs(X, y, top=10)
    assert (res.first[0], res.second[0]) == (1234, 8765)
    assert res.n_pairs == p * (p - 1) // 2
    if kind == "xor":
        assert res.pvalue[0] < res.bonferroni(0.05)
        # no marginal signal: single-feature methods rank them among the noise
        for method in ("chi2", "fisher", "mi"):
            ranks = gs.score(X, y, method=method).ranks
            assert min(ranks[1234], ranks[8765]) > 100, method


def test_threads_ties_and_duplicate_patterns():
    rng = np.random.default_rng(13)
    X = (rng.random((64, 30)) < 0.5).astype(float)
    X[:, 20] = X[:, 3]  # a duplicate pattern: screened once
    X[:, 25] = 1.0  # constant: paired with nothing
    y = rng.integers(0, 2, 64)
    one = gs.score_pairs(X, y, top=50, n_jobs=1)
    two = gs.score_pairs(X, y, top=50, n_jobs=2)
    for name in ("first", "second", "joint", "synergy", "lrt"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert one.n_candidates == 28 and 20 not in one.first and 20 not in one.second
    assert set(one.size_first[one.first == 3]) <= {2}
    # exact ties: (b, d) is (a, c) with the samples permuted within each class, the same table
    a, c = X[:, 0], X[:, 1]
    moved = np.arange(64)
    for label in (0, 1):
        members = np.flatnonzero(y == label)
        moved[members] = rng.permutation(members)
    tied = np.column_stack([a, a[moved], c, c[moved]])
    for jobs in (1, 2):
        ties = gs.score_pairs(tied, y, top=6, n_jobs=jobs)
        order = list(zip(ties.first.tolist(), ties.second.tolist()))
        assert ties.synergy[order.index((0, 2))] == ties.synergy[order.index((1, 3))]
        assert order.index((0, 2)) + 1 == order.index((1, 3))  # the earlier pair first, side by side


def test_permutations_give_a_family_wise_pvalue():
    rng = np.random.default_rng(14)
    X = (rng.random((120, 40)) < 0.5).astype(float)
    y = (X[:, 2].astype(bool) ^ X[:, 30].astype(bool)).astype(int)
    res = gs.score_pairs(X, y, top=3, permutations=49, seed=1)
    assert res.family_pvalue[0] == pytest.approx(1 / 50)
    assert (np.diff(res.family_pvalue) >= 0).all()
    # under the null the best pair's family-wise p-value is uniform on {1/20, ..., 1}
    found = [gs.score_pairs((rng.random((60, 12)) < 0.5), rng.integers(0, 2, 60), top=1, permutations=19,
                            seed=s).family_pvalue[0] for s in range(200)]
    assert stats.chisquare(np.bincount(np.round(np.array(found) * 20).astype(int) - 1, minlength=20)).pvalue > 0.001


def test_what_is_refused_is_named():
    X = np.zeros((10, 3))
    X[:5, 0] = X[::2, 1] = X[1::3, 2] = 1
    with pytest.raises(ValueError, match="method"):
        gs.score_pairs(X, [0, 1] * 5, method="chi2")
    with pytest.raises(ValueError, match="top"):
        gs.score_pairs(X, [0, 1] * 5, top=0)
    with pytest.raises(ValueError, match="two classes or more"):
        gs.score_pairs(X, [0] * 10)
    with pytest.raises(ValueError, match="do not have"):
        gs.score_pairs(X, [0, 1] * 5, candidates=["nope"])


def test_the_command_writes_the_pairs_of_the_library(tmp_path, capsys):
    import json

    from genosift.cli import main
    from genosift.report.outputs import read_table

    rng = np.random.default_rng(15)
    n = 150
    X = (rng.random((n, 80)) < 0.5).astype(int)
    y = np.where(X[:, 10] != X[:, 70], "R", "S")
    ids = [f"s{i}" for i in range(n)]
    pd.DataFrame(X, index=pd.Index(ids, name="sample"), columns=[f"gene{j}" for j in range(80)]).to_csv(
        tmp_path / "genes.tsv", sep="\t")
    pd.DataFrame({"id": ids, "res": y}).to_csv(tmp_path / "meta.tsv", sep="\t", index=False)
    out = tmp_path / "pairs.tsv"
    assert main(["pairs", str(tmp_path / "genes.tsv"), "--meta", str(tmp_path / "meta.tsv"), "--id", "id",
                 "--target", "res", "--top", "25", "--min-af", "0.05", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "3,160 pairs of 80 distinct patterns" in printed and "gene10 x gene70" in printed
    table = read_table(out)
    expected = gs.score_pairs(X, y, top=25, min_af=0.05, feature_names=[f"gene{j}" for j in range(80)]).to_frame()
    pd.testing.assert_frame_equal(table, expected, check_dtype=False)
    record = json.loads((tmp_path / "pairs.tsv.json").read_text())
    assert record["n_pairs"] == 3160 and record["bonferroni"] == 0.05 / 3160
    assert main(["pairs", str(tmp_path / "genes.tsv"), "--meta", str(tmp_path / "meta.tsv"), "--id", "id",
                 "--target", "res", "-o", str(out)]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["pairs", str(tmp_path / "genes.tsv"), "--meta", str(tmp_path / "meta.tsv"), "--id", "id",
                 "--target", "res", "--top", "5", "--triples", "3", "--triples-output", str(tmp_path / "t.tsv"),
                 "-o", str(tmp_path / "p2.tsv")]) == 0
    triples = read_table(tmp_path / "t.tsv")
    expected = gs.score_pairs(X, y, top=5, triples=3, feature_names=[f"gene{j}" for j in range(80)]).triples
    pd.testing.assert_frame_equal(triples, expected, check_dtype=False)
    assert "triple   1" in capsys.readouterr().out
    assert main(["pairs", str(tmp_path / "genes.tsv"), "--meta", str(tmp_path / "meta.tsv"), "--id", "id",
                 "--target", "res", "--triples", "3", "-o", str(tmp_path / "p3.tsv")]) == 2
    assert "--triples extends the best pairs into triples, which --triples-output" in capsys.readouterr().err
    assert main(["pairs", str(tmp_path / "genes.tsv"), "--meta", str(tmp_path / "meta.tsv"), "--id", "id",
                 "--target", "res", "--top", "5", "--bins", "3", "-o", str(tmp_path / "p4.tsv")]) == 0
    expected = gs.score_pairs(X, y, top=5, bins=3, feature_names=[f"gene{j}" for j in range(80)]).to_frame()
    pd.testing.assert_frame_equal(read_table(tmp_path / "p4.tsv"), expected, check_dtype=False)


def test_the_epistasis_test_equals_plinks_boost_statistic(tmp_path):
    """PLINK 1.9's --fast-epistasis boost likelihood ratio (the log-linear model without the
    three-way term, which for two binary features is the logistic model without the product)
    equals genosift's test of every pair, to its 6 printed digits."""
    import shutil
    import subprocess

    if shutil.which("plink1.9") is None:
        pytest.skip("plink1.9 is not installed (Debian: apt-get install plink1.9)")
    bed_reader = pytest.importorskip("bed_reader", reason="writing the .bed needs bed-reader")
    rng = np.random.default_rng(16)
    n, m = 300, 40
    X = rng.random((n, m)) < 0.4
    logit = -0.5 + 0.6 * X[:, 3] - 0.4 * X[:, 7] + 1.5 * (X[:, 3] & X[:, 7])
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    ids = [f"s{i}" for i in range(n)]
    bed_reader.to_bed(tmp_path / "d.bed", (2 * X).astype(np.float32),
                      properties={"iid": ids, "fid": ids, "sid": [f"v{j}" for j in range(m)], "chromosome": ["1"] * m,
                                  "bp_position": np.arange(1, m + 1) * 1000, "pheno": (y + 1).astype(str)})
    subprocess.run(["plink1.9", "--bfile", "d", "--fast-epistasis", "boost", "--epi1", "1", "--allow-no-sex",
                    "--out", "e"], cwd=tmp_path, check=True, capture_output=True)
    table = pd.read_csv(tmp_path / "e.epi.cc", sep=r"\s+")
    assert len(table) == m * (m - 1) // 2
    ours = np.array([epistasis_lrt(X[:, int(a[1:])], X[:, int(b[1:])], y)[0] for a, b in zip(table.SNP1, table.SNP2)])
    printed = table.STAT.to_numpy(dtype=float)
    digits = 10.0 ** (np.floor(np.log10(np.maximum(np.abs(printed), 1e-300))) - 5)  # the 6th significant digit
    assert (np.abs(ours - printed) <= 0.5 * digits + 1e-12).all()
    res = gs.score_pairs(X, y, top=m * (m - 1) // 2)
    by_pair = dict(zip(zip(res.first.tolist(), res.second.tolist()), res.lrt))
    np.testing.assert_allclose([by_pair[(int(a[1:]), int(b[1:]))] for a, b in zip(table.SNP1, table.SNP2)], ours,
                               rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
def test_the_epistasis_test_with_covariates_equals_statsmodels():
    sm = pytest.importorskip("statsmodels.api", reason="the reference logistic fits need statsmodels")
    rng = np.random.default_rng(17)
    n = 400
    Z = rng.normal(size=(n, 2))
    X = rng.random((n, 25)) < 0.45
    logit = 0.5 * Z[:, 0] - 0.3 * Z[:, 1] + 0.4 * X[:, 2] - 0.6 * X[:, 5] + 1.4 * (X[:, 2] & X[:, 5])
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    res = gs.score_pairs(X, y, top=300, covariates=Z)
    plain = gs.score_pairs(X, y, top=300)
    assert not np.allclose(res.lrt, plain.lrt, equal_nan=True)  # the covariates change the test
    checked = 0
    for i, j, lrt in zip(res.first[:60], res.second[:60], res.lrt[:60]):
        a, b = X[:, i].astype(float), X[:, j].astype(float)
        small = np.column_stack([np.ones(n), Z, a, b])
        big = sm.Logit(y, np.column_stack([small, a * b])).fit(disp=0, method="newton", maxiter=200, tol=1e-12)
        null = sm.Logit(y, small).fit(disp=0, method="newton", maxiter=200, tol=1e-12)
        if np.isnan(lrt):
            continue
        assert lrt == pytest.approx(2 * (big.llf - null.llf), rel=1e-6, abs=1e-8)
        checked += 1
    assert checked >= 50
    # without covariates the logistic fit gives the table's test
    from genosift.scores.pairs import covariate_lrts

    none = covariate_lrts(X, y, plain.first[:40], plain.second[:40], np.zeros((n, 0)))
    np.testing.assert_allclose(none, plain.lrt[:40], rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="two classes"):
        gs.score_pairs(X, rng.integers(0, 3, n), covariates=Z)


def test_triples_of_the_best_pairs_find_a_three_way_rule():
    rng = np.random.default_rng(18)
    n, m = 400, 30
    X = rng.random((n, m)) < 0.5
    a, b, c = X[:, 4], X[:, 11], X[:, 23]
    y = ((a ^ b) & c).astype(int)  # (a, b) tells something, c completes it
    res = gs.score_pairs(X, y, top=20, triples=5)
    table = res.triples
    assert list(table.loc[0, ["feature_1", "feature_2", "feature_3"]]) == ["x4", "x11", "x23"]
    # the joint MI of the top triples from its definition, and the best of their pairs'
    for row in table.head(10).itertuples():
        idx = [int(row.feature_1[1:]), int(row.feature_2[1:]), int(row.feature_3[1:])]
        cells = np.array([[((X[:, idx] == bits).all(axis=1) & (y == cls)).sum() for cls in (0, 1)]
                          for bits in np.array(np.meshgrid([1, 0], [1, 0], [1, 0], indexing="ij")).reshape(3, -1).T])
        assert row.joint == pytest.approx(_mi_bits(cells.astype(float)), rel=1e-10, abs=1e-12)
        pairs = [_mi_bits(_crosstab(X[:, u], X[:, v], y).astype(float)) for u, v in
                 ((idx[0], idx[1]), (idx[0], idx[2]), (idx[1], idx[2]))]
        assert row.best_pair == pytest.approx(max(pairs), rel=1e-10, abs=1e-12)
        assert row.synergy == pytest.approx(row.joint - row.best_pair, abs=1e-12)
    assert (np.diff(table["synergy"]) <= 0).all() and len(table) == 20
    one = gs.score_pairs(X, y, top=20, triples=5, n_jobs=1).triples
    pd.testing.assert_frame_equal(one, table)


@pytest.mark.parametrize("sparse", [True, False])
def test_a_store_read_in_blocks_equals_the_matrix_in_memory(tmp_path, sparse):
    from genosift.io import Dataset, write_store

    rng = np.random.default_rng(19)
    n, m = 130, 300
    X = (rng.random((n, m)) < 0.3) * rng.integers(1, 5, (n, m))
    X[:, 50] = X[:, 10]  # patterns shared across blocks
    X[:, 299] = X[:, 10] > 0
    y = np.where((X[:, 10] > 0) != (X[:, 200] > 0), "R", "S")
    ids = np.array([f"s{i}" for i in range(n)])
    names = np.array([f"k{j}" for j in range(m)])
    path = write_store(Dataset(sp.csr_matrix(X) if sparse else X.astype(float), ids, names,
                               pd.DataFrame({"res": y}, index=ids)), tmp_path / "k.gs.h5ad")
    expected = gs.score_pairs(X, y, top=200, min_af=0.05, feature_names=names, triples=3).to_frame()
    for budget in (2_000, 50_000, None):
        got = gs.score_pairs(path, y, top=200, min_af=0.05, chunk_bytes=budget, triples=3)
        pd.testing.assert_frame_equal(got.to_frame(), expected)
    assert got.size_first[(got.names_first == "k10") & (got.names_second == "k200")] == [3]
    keep = np.arange(0, n, 2)
    kept = gs.score_pairs(X[keep], y[keep], top=50, feature_names=names).to_frame()
    from genosift.sources import StoreRows

    rows = StoreRows(gs.io.Store(path), keep)
    pd.testing.assert_frame_equal(gs.score_pairs(rows, y[keep], top=50, chunk_bytes=5_000).to_frame(), kept)


@pytest.mark.parametrize("method", ["mi", "jensen_shannon"])
def test_levels_small_counts_exactly_and_continuous_features_in_quantile_bins(method):
    from genosift.scores import discretize

    rng = np.random.default_rng(20)
    n = 180
    dosage = rng.integers(0, 3, (n, 14)).astype(float)  # SNP dosages: 3 levels, by value
    expression = rng.normal(size=(n, 6))  # continuous: 3 equal-frequency bins
    X = np.column_stack([dosage, expression])
    y = ((dosage[:, 2] == 1) ^ (expression[:, 3] > np.median(expression[:, 3]))).astype(int) + (
        rng.random(n) < 0.1)
    res = gs.score_pairs(X, y, method=method, bins=3, top=190)
    codes = discretize(X, bins=3, max_categories=3)
    classes = np.unique(y)

    def table(i, j):
        return np.array([[((codes[:, i] == u) & (codes[:, j] == v) & (y == c)).sum() for c in classes]
                         for u in range(3) for v in range(3)], dtype=float)

    score = _mi_bits if method == "mi" else _js_bits
    marginal = [score(np.array([[((codes[:, j] == u) & (y == c)).sum() for c in classes] for u in range(3)],
                               dtype=float)) for j in range(20)]
    expected = sorted((-(score(table(i, j)) - max(marginal[i], marginal[j])), i, j) for i in range(20)
                       for j in range(i + 1, 20))
    assert [(i, j) for _, i, j in expected[:15]] == list(zip(res.first[:15].tolist(), res.second[:15].tolist()))
    np.testing.assert_allclose(res.synergy, [-e[0] for e in expected], rtol=1e-9, atol=1e-12)
    assert (res.first[0], res.second[0]) == (2, 17) and res.lrt is None
    with pytest.raises(ValueError, match="presence/absence"):
        gs.score_pairs(X, y, bins=3, triples=2)
    with pytest.raises(ValueError, match="bins"):
        gs.score_pairs(X, y, bins=1)


def _w1_lp(p, q):
    """W1 between two distributions over the square's cells (1,1), (1,0), (0,1), (0,0), the
    Manhattan distance between them, by scipy's linear programme of the transport."""
    from scipy.optimize import linprog

    points = np.array([(1, 1), (1, 0), (0, 1), (0, 0)])
    cost = np.abs(points[:, None, :] - points[None, :, :]).sum(axis=2).ravel()
    rows = [np.kron(np.eye(4)[a], np.ones(4)) for a in range(4)] + [np.kron(np.ones(4), np.eye(4)[b]) for b in range(4)]
    found = linprog(cost, A_eq=np.array(rows), b_eq=np.r_[p, q], bounds=(0, None), method="highs")
    return found.fun


def test_the_wasserstein_joint_score_is_the_transport_on_the_square():
    rng = np.random.default_rng(21)
    n = 160
    X = (rng.random((n, 18)) < 0.45).astype(float)
    y = ((X[:, 1] > 0) ^ (X[:, 9] > 0)).astype(int) + 2 * (rng.random(n) < 0.2)
    res = gs.score_pairs(X, y, method="wasserstein", top=153)
    classes = np.unique(y)
    for i, j, joint in zip(res.first[:30], res.second[:30], res.joint[:30]):
        table = _crosstab(X[:, i] > 0, X[:, j] > 0, y).astype(float)
        whole = table.sum(axis=1) / n
        expected = sum(table[:, c].sum() / n * _w1_lp(whole, table[:, c] / table[:, c].sum())
                       for c in range(classes.size))
        assert joint == pytest.approx(expected, rel=1e-9, abs=1e-12)
    single = gs.score(X, y, method="wasserstein", method_options={"normalize": False}).scores
    got = dict(zip(res.first, res.marginal_first)) | dict(zip(res.second, res.marginal_second))
    np.testing.assert_allclose([got[j] for j in range(18)], single, rtol=1e-10)
    assert (res.first[0], res.second[0]) == (1, 9)
    with pytest.raises(ValueError, match="presence/absence"):
        gs.score_pairs(X, y, method="wasserstein", bins=3)


def test_every_input_form_gives_the_same_pairs(tmp_path):
    anndata = pytest.importorskip("anndata", reason="AnnData input needs anndata")
    da = pytest.importorskip("dask.array", reason="Dask input needs dask")
    rng = np.random.default_rng(22)
    n, m = 90, 40
    X = (rng.random((n, m)) < 0.4).astype(float)
    y = (X[:, 4] != X[:, 33]).astype(int)
    names = [f"g{j}" for j in range(m)]
    expected = gs.score_pairs(X, y, top=30, feature_names=names).to_frame()
    obs = pd.DataFrame({"y": y}, index=[f"s{i}" for i in range(n)])
    frame = pd.DataFrame(X, columns=names)
    adata = anndata.AnnData(X, obs=obs, var=pd.DataFrame(index=names))
    frame.insert(0, "sample", obs.index)
    frame.to_csv(tmp_path / "d.csv", index=False)
    for form, target in ((adata, "y"), (da.from_array(X, chunks=(30, 7)), y), (pd.DataFrame(X, columns=names), y),
                         (str(tmp_path / "d.csv"), y)):
        got = gs.score_pairs(form, target, top=30, chunk_bytes=4_000,
                             feature_names=names if hasattr(form, "chunks") else None).to_frame()
        pd.testing.assert_frame_equal(got, expected)
    with pytest.raises(ValueError, match="stream of row chunks"):
        gs.score_pairs(iter([(X, y)]), None)


def test_the_job_checks_its_options_before_reading(tmp_path):
    from genosift.core.validation import UsageError
    from genosift.jobs import Samples

    missing = Samples(str(tmp_path / "absent.tsv"), target="res")  # never read: the options fail first
    for bad in ({"top": 0}, {"method": "chi2"}, {"bins": 1}, {"bins": 3, "method": "wasserstein"},
                {"triples": -1, "triples_output": str(tmp_path / "t.tsv")}):
        with pytest.raises(UsageError):
            gs.jobs.pairs(missing, tmp_path / "p.tsv", **bad)
