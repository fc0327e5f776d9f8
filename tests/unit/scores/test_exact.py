"""Fisher's exact test: ``fisher_exact_pvalues`` and the ``fisher_exact`` method.

Reference: ``scipy.stats.fisher_exact`` itself, table by table. Every 2x2 table with n <= 25 is
checked; scipy is called once per class of tables that the test's symmetries (transposing,
swapping the rows, swapping the columns) map onto each other, whose p-values are equal in exact
arithmetic (the slow test calls it on every table). Measured: 7e-16 relative at n <= 25, 5e-15
on random tables of up to 5,000 samples down to p = 1e-297; asserted to 1e-14 and 1e-13.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import scipy.stats as ss

import genosift as gs
from genosift.cli import main
from genosift.scores import exact
from genosift.scores.exact import fisher_exact_pvalues


def _tables(largest):
    """Every 2x2 table ``(a, b, c, d)`` with ``a + b + c + d <= largest``, as an (m, 4) array."""
    return np.array([(a, b, c, n - a - b - c) for n in range(largest + 1)
                     for a, b, c in itertools.product(range(n + 1), repeat=3) if a + b + c <= n])


def _scipy(a, b, c, d):
    res = ss.fisher_exact([[a, b], [c, d]])
    return float(res.statistic), float(res.pvalue)


def _margins(T):
    a, b, c, d = T.T
    return a, a + b, a + c, a + b + c + d


def test_every_table_of_at_most_25_samples_matches_scipy():
    T = _tables(25)
    assert len(T) == 23751
    # the canonical table of each class: the smallest of its 8 images under the symmetries
    images = [T[:, order] for order in ([0, 1, 2, 3], [0, 2, 1, 3], [2, 3, 0, 1], [1, 0, 3, 2], [3, 1, 2, 0],
                                         [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1])]
    keys = np.stack([(((t[:, 0] * 26 + t[:, 1]) * 26 + t[:, 2]) * 26 + t[:, 3]) for t in images])
    canonical, inverse = np.unique(keys.min(axis=0), return_inverse=True)
    reference = np.array([_scipy(*(k // 26 ** np.arange(3, -1, -1) % 26))[1] for k in canonical])[inverse]
    p = fisher_exact_pvalues(*_margins(T))
    a, n_pos, n_present, n = _margins(T)
    no_test = (n_pos == 0) | (n_pos == n) | (n_present == 0) | (n_present == n)
    assert np.isnan(p).tolist() == no_test.tolist() and np.all(reference[no_test] == 1.0)
    np.testing.assert_allclose(p[~no_test], reference[~no_test], rtol=1e-14, atol=0)


@pytest.mark.slow
def test_every_table_of_at_most_25_samples_matches_scipy_one_call_each():
    T = _tables(25)
    reference = np.array([_scipy(*t)[1] for t in T])
    p = fisher_exact_pvalues(*_margins(T))
    ok = ~np.isnan(p)
    np.testing.assert_allclose(p[ok], reference[ok], rtol=1e-14, atol=0)


def _large_tables(rng, count):
    out = []
    for i in range(count):
        n = int(rng.integers(30, 5001))
        n_pos = int(rng.integers(1, n)) if i % 2 else n // 2  # unbalanced, balanced
        present = int(rng.integers(1, n))
        lo, hi = max(0, present - (n - n_pos)), min(n_pos, present)
        a = int(rng.integers(lo, hi + 1)) if i % 3 else (lo if i % 4 else hi)  # anywhere, or at an end
        out.append((a, n_pos, present, n))
    return np.array(out)


def test_large_tables_match_scipy_down_to_1e_300_and_underflow_to_0():
    rng = np.random.default_rng(3)
    cases = _large_tables(rng, 150)
    # tables whose p runs from ~1e-5 down past the smallest float64, balanced and not
    steps = [(a, 1000, 1000, 2000) for a in range(500, 330, -10)] + [(a, 900, 200, 3000) for a in range(60, 201, 10)]
    cases = np.vstack([cases, steps])
    a, n_pos, present, n = cases.T
    p = fisher_exact_pvalues(a, n_pos, present, n)
    reference = np.array([_scipy(x, k - x, m - x, t - k - m + x)[1] for x, k, m, t in cases])
    exact_range = reference > 1e-300
    assert (reference < 1e-280).sum() > 10 and (reference[exact_range] < 1e-100).sum() > 20
    np.testing.assert_allclose(p[exact_range], reference[exact_range], rtol=1e-13, atol=0)
    assert np.all(p[~exact_range] < 1e-300) and (p == 0).sum() > 5


def test_arguments_broadcast_and_threads_split_between_margins(monkeypatch):
    rng = np.random.default_rng(4)
    n = 40
    X = rng.random((n, 60)) < rng.random(60)
    Y = rng.random((n, 7)) < rng.uniform(0.2, 0.8, 7)
    A = X.T.astype(np.int64) @ Y.astype(np.int64)
    n_pos, present = Y.sum(axis=0), X.sum(axis=0)[:, None]
    one = fisher_exact_pvalues(A, n_pos, present, n)
    assert one.shape == (60, 7)
    each = np.array([[fisher_exact_pvalues(A[g, t], n_pos[t], present[g, 0], n) for t in range(7)]
                     for g in range(60)])
    assert one.tobytes() == each.tobytes()
    monkeypatch.setattr(exact, "_PARALLEL_SIZE", 16)
    previous = gs.core.engine.set_threads(2)
    try:
        assert fisher_exact_pvalues(A.astype(np.float64), n_pos, present, n).tobytes() == one.tobytes()
    finally:
        gs.core.engine.set_threads(previous)
    ok = ~np.isnan(one)
    g, t = np.nonzero(ok)
    pick = rng.choice(g.size, 40, replace=False)
    reference = [_scipy(A[i, j], n_pos[j] - A[i, j], present[i, 0] - A[i, j], n - n_pos[j] - present[i, 0] + A[i, j])[1]
                 for i, j in zip(g[pick], t[pick])]
    np.testing.assert_allclose(one[g[pick], t[pick]], reference, rtol=1e-14)


@pytest.mark.parametrize("args, match", [
    ((5, 4, 6, 10), "'a' parameter .* a count its margins allow.*n_pos=4, n_present=6, n=10\\). Got 5 instead"),
    (([0, 5], 4, 6, 10), "'a' parameter .*n=10 at \\(1,\\)\\). Got 5 instead"),
    ((-1, 4, 6, 10), "'a' parameter .* non-negative whole numbers"),
    ((1.5, 4, 6, 10), "'a' parameter .* non-negative whole numbers"),
    ((1, 11, 6, 10), "'n_pos' parameter .* at most n"),
])
def test_impossible_tables_are_errors(args, match):
    with pytest.raises(ValueError, match=match):
        fisher_exact_pvalues(*args)


# --------------------------------------------------------------------------------------------
# the method
# --------------------------------------------------------------------------------------------

def _presence(rng, n=50, p=40):
    M = (rng.random((n, p)) < rng.uniform(0.05, 0.95, p)).astype(np.float64)
    M[:, 3], M[:, 9] = 0.0, 1.0  # carried by none, by all: not tested
    return M


def test_columns_odds_ratio_and_p_match_scipy_per_feature():
    rng = np.random.default_rng(5)
    M = _presence(rng)
    y = np.where(rng.random(50) < 0.4, "R", "S")  # "S" sorts last: the positive class
    res = gs.score(M, y, method="fisher_exact")
    frame = res.to_frame(sort=False)
    assert list(frame.columns) == ["feature", "score", "statistic", "pvalue", "qvalue", "n_pos_present",
                                   "n_neg_present", "n_pos_absent", "n_neg_absent", "odds_ratio", "sensitivity",
                                   "specificity", "bonferroni", "rank"]
    pos = y == "S"
    for j in range(M.shape[1]):
        a, b = M[pos, j].sum(), (1 - M[pos, j]).sum()
        c, d = M[~pos, j].sum(), (1 - M[~pos, j]).sum()
        row = frame.iloc[j]
        assert [row.n_pos_present, row.n_pos_absent, row.n_neg_present, row.n_neg_absent] == [a, b, c, d]
        np.testing.assert_allclose([row.sensitivity, row.specificity], [100 * a / pos.sum(), 100 * d / (~pos).sum()],
                                   rtol=1e-15)
        odds, p = _scipy(int(a), int(b), int(c), int(d))
        if j in (3, 9):
            assert np.isnan([row.statistic, row.odds_ratio, row.pvalue, row.qvalue, row.bonferroni, row.score]).all()
            continue
        assert row.odds_ratio == odds  # scipy's number exactly (inf and 0 included)
        np.testing.assert_allclose(row.pvalue, p, rtol=1e-14)
        assert row.score == row.statistic == -np.log10(row.pvalue)
    assert res.ranking[-2:].tolist() == [3, 9]
    assert (np.diff(res.pvalues[res.ranking[:-2]]) >= 0).all()  # ranked by p


def test_bonferroni_and_q_values_count_the_tested_features_only():
    rng = np.random.default_rng(6)
    M = _presence(rng)
    y = rng.integers(0, 2, 50)
    res = gs.score(M, y, method="fisher_exact")
    p = res.pvalues
    np.testing.assert_array_equal(res.columns["bonferroni"], np.minimum(p * 38, 1.0))
    np.testing.assert_allclose(res.qvalues[~np.isnan(p)], ss.false_discovery_control(p[~np.isnan(p)]), rtol=1e-15)
    # an allele-frequency filter: m is the number inside it
    filtered = gs.score(M, y, method="fisher_exact", min_af=0.2, max_af=0.8)
    af = M.mean(axis=0)
    inside = (af >= 0.2) & (af <= 0.8)
    np.testing.assert_array_equal(filtered.pvalues[inside], p[inside])
    np.testing.assert_array_equal(filtered.columns["bonferroni"][inside], np.minimum(p[inside] * inside.sum(), 1.0))
    assert np.isnan(filtered.columns["bonferroni"][~inside]).all()


def test_presence_is_a_value_above_0_in_every_form_and_for_several_targets():
    rng = np.random.default_rng(7)
    M = _presence(rng)
    counts = M * rng.integers(1, 9, M.shape)
    y = rng.integers(0, 2, 50)
    ref = gs.score(M, y, method="fisher_exact")
    for X in (counts, sp.csr_matrix(counts), sp.csc_matrix(M), 3.5 * counts):  # and what holds of a x, a > 0
        got = gs.score(X, y, method="fisher_exact")
        for field in ("statistic", "pvalues", "scores"):
            assert getattr(got, field).tobytes() == getattr(ref, field).tobytes()
        assert got.columns["bonferroni"].tobytes() == ref.columns["bonferroni"].tobytes()
    y2 = rng.integers(0, 2, 50)
    both = gs.score_targets(M, pd.DataFrame({"t1": y, "t2": y2}), method="fisher_exact")
    for got, target in zip(both.values() if isinstance(both, dict) else both, (y, y2)):
        one = gs.score(M, target, method="fisher_exact")
        np.testing.assert_array_equal(got.pvalues, one.pvalues)
        np.testing.assert_array_equal(got.columns["bonferroni"], one.columns["bonferroni"])


def test_the_command_line_scores_a_binary_csv(tmp_path):
    rng = np.random.default_rng(8)
    M = _presence(rng, n=30, p=12).astype(np.int64)
    y = rng.integers(0, 2, 30)
    frame = pd.DataFrame(M, columns=[f"gene{j}" for j in range(12)])
    frame.insert(0, "trait", y)
    frame.insert(0, "isolate", [f"i{i}" for i in range(30)])
    frame.to_csv(tmp_path / "genes.csv", index=False)
    out = tmp_path / "hits.tsv"
    assert main(["score", str(tmp_path / "genes.csv"), "--id", "isolate", "--target", "trait",
                 "--method", "fisher_exact", "-o", str(out)]) == 0
    table = pd.read_csv(out, sep="\t")
    ref = gs.score(M, y, method="fisher_exact", feature_names=frame.columns[2:])
    assert list(table["feature"]) == list(ref.feature_names[ref.ranking])
    np.testing.assert_allclose(table["pvalue"], ref.pvalues[ref.ranking], rtol=1e-9)
    np.testing.assert_allclose(table["bonferroni"], ref.columns["bonferroni"][ref.ranking], rtol=1e-9)
    np.testing.assert_array_equal(table["n_pos_present"], ref.columns["n_pos_present"][ref.ranking])
