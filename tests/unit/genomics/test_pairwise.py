"""Pairwise comparisons against a brute force over every set of independent pairs, the binomial
p-values against scipy's binomtest, and the permutations' reproducibility and early stop."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from genosift.genomics.pairwise import _stops, binomial_pvalues, empirical_pvalues, pairwise_comparisons
from genosift.genomics.trees import Tree


def _random_tree(rng, n, polytomies):
    """A random rooted tree on ``n`` tips: clusters joined two (or, ``polytomies``, up to four) at a time."""
    parent, live = [], list(range(n))
    parent.extend([-1] * n)
    while len(live) > 1:
        k = min(len(live), int(rng.integers(2, 5)) if polytomies else 2)
        picked = rng.choice(len(live), size=k, replace=False)
        new = len(parent)
        parent.append(-1)
        for p in picked:
            parent[live[p]] = new
        live = [c for i, c in enumerate(live) if i not in set(picked.tolist())] + [new]
    return Tree.from_parents(parent, [f"t{i}" for i in range(n)], np.arange(n))


def _brute(tree, kinds):
    """``(max, supporting, opposing)`` over every set of node-disjoint contrasting pairs."""
    up = {}
    for v in range(tree.n_nodes):
        up[v] = tree.parent[v]
    node_of = {int(tree.tip[v]): v for v in range(tree.n_nodes) if tree.tip[v] >= 0}

    def ancestors(v):
        out = []
        while v >= 0:
            out.append(v)
            v = up[v]
        return out

    def path(a, b):
        A, B = ancestors(node_of[a]), ancestors(node_of[b])
        common = next(x for x in A if x in set(B))
        return frozenset(A[:A.index(common) + 1]) | frozenset(B[:B.index(common) + 1])

    pairs = [(path(a, b), kinds[a] in (0, 3)) for a, b in itertools.combinations(range(len(kinds)), 2)
             if kinds[a] >= 0 and kinds[b] >= 0 and kinds[a] ^ kinds[b] == 3]
    best = {}

    def walk(start, used, size, sup, opp):
        old = best.get(size, (-1, -1))
        best[size] = (max(old[0], sup), max(old[1], opp))
        for k in range(start, len(pairs)):
            nodes, supporting = pairs[k]
            if not nodes & used:
                walk(k + 1, used | nodes, size + 1, sup + supporting, opp + (not supporting))

    walk(0, frozenset(), 0, 0, 0)
    top = max(best)
    return top, best[top][0], best[top][1]


def test_pairs_equal_brute_force_on_random_trees():
    rng = np.random.default_rng(5)
    for case in range(120):  # 120 trees x 6 genes
        n = int(rng.integers(2, 9))
        tree = _random_tree(rng, n, polytomies=case % 3 == 1)
        ids = [f"t{i}" for i in range(n)]
        if case % 3 == 2:  # restricted: nodes of one child, samples in another order
            extra = _random_tree(rng, n + 3, polytomies=False)
            tree = extra
            ids = [f"t{i}" for i in rng.permutation(n + 3)[:n]]
        genes = rng.integers(0, 2, size=(n, 6))
        y = rng.integers(0, 2, size=n).astype(float)
        y[rng.random(n) < 0.15] = np.nan
        got = pairwise_comparisons(genes, y, tree, sample_ids=ids)
        sub = tree.restricted(ids)
        where = {str(s): k for k, s in enumerate(sub.names)}
        for j in range(6):
            kinds = [-1] * sub.n_tips
            for i, s in enumerate(ids):
                kinds[where[s]] = -1 if np.isnan(y[i]) else int(2 * genes[i, j] + y[i])
            assert tuple(got.iloc[j, :3]) == _brute(sub, kinds), (case, j)


def test_scoarys_rule_counts_at_least_the_optimum():
    # (((a, b), c), d) with a:AB b:aB c:ab d:Ab: the most pairs is 2 (a-c and b-d, opposing 1);
    # the root's closed state alone reaches supporting 1 in a set of 1 pair, and so on. Scoary's
    # rule is never below the lexicographic optimum, and equals it in max.
    rng = np.random.default_rng(2)
    for _ in range(30):
        n = int(rng.integers(3, 9))
        tree = _random_tree(rng, n, polytomies=False)
        genes = rng.integers(0, 2, size=(n, 4))
        y = rng.integers(0, 2, size=n).astype(float)
        ids = [f"t{i}" for i in range(n)]
        exact = pairwise_comparisons(genes, y, tree, sample_ids=ids)
        scoary = pairwise_comparisons(genes, y, tree, sample_ids=ids, scoary_pairs=True)
        assert (scoary.pairs_max == exact.pairs_max).all()
        assert (scoary.pairs_supporting >= exact.pairs_supporting).all()
        assert (scoary.pairs_opposing >= exact.pairs_opposing).all()


def test_binomial_pvalues_equal_binomtest():  # to a few units in the last place
    from scipy.stats import binomtest

    n = np.concatenate([np.full(k + 1, k) for k in range(1, 301)])
    k = np.concatenate([np.arange(m + 1) for m in range(1, 301)])
    ours = binomial_pvalues(k, n)
    picked = np.random.default_rng(0).choice(k.size, 1500, replace=False)
    for i in np.concatenate([picked, np.arange(400)]):
        assert ours[i] == pytest.approx(binomtest(int(k[i]), int(n[i]), 0.5).pvalue, rel=1e-14, abs=0), (k[i], n[i])


def test_pvalue_columns_follow_the_leading_count():
    from scipy.stats import binomtest

    rng = np.random.default_rng(4)
    tree = _random_tree(rng, 12, polytomies=False)
    X, y = rng.integers(0, 2, size=(12, 30)), rng.integers(0, 2, size=12)
    got = pairwise_comparisons(X, y, tree, sample_ids=[f"t{i}" for i in range(12)])
    for row in got.itertuples():
        M, S, O = row.pairs_max, row.pairs_supporting, row.pairs_opposing
        p_s, p_o = (binomtest(k, M, 0.5).pvalue if M else 1.0 for k in (S, M - O))
        expected = (p_s, p_o) if S >= O else (p_o, p_s)
        assert (row.pairwise_p_best, row.pairwise_p_worst) == pytest.approx(expected, rel=1e-14, abs=0)


def test_stops_equal_the_rule():
    from scipy.stats import binom

    limit = _stops(300)
    for i in range(30, 300):
        r = np.arange(i + 2)
        assert limit[i] == r[1.0 - binom.cdf(r, i, 0.1) < 0.05].min()
    assert (limit[:30] > 300).all()


def test_empirical_pvalues_reproducible_and_stop_early():
    rng = np.random.default_rng(3)
    n = 24
    names = [f"t{i}" for i in range(n)]
    tree = _random_tree(rng, n, polytomies=False)
    X = rng.integers(0, 2, size=(n, 5))
    y = rng.integers(0, 2, size=n).astype(float)
    X[:, 0] = y  # the trait itself: every pair supports it
    y[0] = np.nan
    a = empirical_pvalues(X, y, tree, sample_ids=names, permutations=200, seed=7)
    b = empirical_pvalues(X, y, tree, sample_ids=names, permutations=200, seed=7)
    assert np.array_equal(a, b)
    assert a[0] < 0.05  # ran all 200: r small
    stopped = a[1:][a[1:] > (a[1:] * 0 + 0.2)]
    assert stopped.size  # a gene unrelated to the trait stops early: (r + 1) / (i + 2), i < 199
    assert any(abs(p * k - round(p * k)) < 1e-9 for p in stopped for k in range(32, 201))


def test_errors_name_the_fix():
    tree = Tree.from_parents([2, 2, -1], ["a", "b"], [0, 1])
    with pytest.raises(ValueError, match="no tip in the tree"):
        pairwise_comparisons(np.ones((3, 1)), [0, 1, 1], tree, sample_ids="abc")
    with pytest.raises(ValueError, match="0 or 1"):
        pairwise_comparisons(np.ones((2, 1)), [0, 2], tree, sample_ids="ab")
    with pytest.raises(ValueError, match="permutations"):
        empirical_pvalues(np.ones((2, 1)), [0, 1], tree, sample_ids="ab", permutations=5)


def test_sparse_and_repeated_genes_give_the_same_rows():
    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    tree = _random_tree(rng, 15, polytomies=True)
    X = rng.integers(0, 2, size=(15, 20))
    X[:, 10:] = X[:, :10]
    ids = [f"t{i}" for i in range(15)]
    y = rng.integers(0, 2, size=15)
    dense = pairwise_comparisons(X, y, tree, sample_ids=ids)
    assert dense.equals(pairwise_comparisons(sp.csr_matrix(3 * X), y, tree, sample_ids=ids))
    assert np.array_equal(dense.iloc[:10].to_numpy(), dense.iloc[10:].to_numpy())


def test_inputs_checked():
    tree = Tree.from_parents([2, 2, -1], ["a", "b"], [0, 1])
    with pytest.raises(ValueError, match="rows for 2 sample_ids"):
        pairwise_comparisons(np.ones((3, 1)), [0, 1, 1], tree, sample_ids="ab")
    with pytest.raises(ValueError, match="more than once"):
        pairwise_comparisons(np.ones((2, 1)), [0, 1], tree, sample_ids="aa")


def test_empirical_pvalues_follow_the_permutations_one_by_one():
    from scipy.stats import binom

    rng = np.random.default_rng(8)
    n, N = 20, 80
    ids = [f"t{i}" for i in range(n)]
    tree = _random_tree(rng, n, polytomies=False)
    X = rng.integers(0, 2, size=(n, 3))
    y = rng.integers(0, 2, size=n).astype(float)
    y[3] = np.nan
    X[:, 1] = np.nan_to_num(y)
    got = empirical_pvalues(X, y, tree, sample_ids=ids, permutations=N, seed=11)
    known = ~np.isnan(y)
    draws = np.random.default_rng(11)
    perms = []
    for _ in range(N):
        z = y.copy()
        z[known] = draws.permutation(y[known])
        perms.append(pairwise_comparisons(X, z, tree, sample_ids=ids))
    base = pairwise_comparisons(X, y, tree, sample_ids=ids)
    early = 0
    for j in range(3):
        col = "pairs_supporting" if base.pairs_supporting[j] >= base.pairs_opposing[j] else "pairs_opposing"
        stat = base[col][j] / base.pairs_max[j]
        r, expected = 0, None
        for i, frame in enumerate(perms):
            r += frame[col][j] / frame.pairs_max[j] >= stat
            if i >= 30 and 1 - binom.cdf(r, i, 0.1) < 0.05:
                expected = (r + 1) / (i + 2)
                break
        assert got[j] == (expected if expected is not None else (r + 1) / (N + 1)), j
        early += expected is not None
    assert 0 < early < 3  # the trait's own gene runs to the end, an unrelated one stops early
