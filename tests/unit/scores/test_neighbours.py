"""ReliefF: against a direct O(n^2) implementation, against skrebate, epistasis, bounded memory.

The reference below is written from the definition (see ``genosift.scores.neighbours``): the
full n x n distance matrix, neighbours by ``np.lexsort`` on (distance, sample index), and the
weight formula as a plain loop over samples. It sums each distance feature by feature in column
order, as genosift does, so that two distances that are equal in exact arithmetic (discrete
data: many ties) are also equal in floating point in both, and the tie-break is what is tested.

skrebate (``pip install skrebate``) is not a dependency: its tests skip without it.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.core import engine
from genosift.scores import neighbours

from conftest import load_shared

RTOL = 1e-10
# A weight is a sum of positive (misses) and negative (hits) terms of size ~1/n: where they
# nearly cancel, only the absolute rounding error (~1e-17 here) is bounded.
ATOL = 1e-14


def reference(X, y, k=10, miss_weight="prior", skrebate_small_classes=False):
    """ReliefF weights straight from the definition (O(n^2 p) time, n x n memory).

    ``skrebate_small_classes`` reproduces what skrebate 0.8.4 does when a class has at most
    ``k`` samples: the sample itself is counted as one of its own hits (difference 0), and the
    misses of class c get weight ``(C - 1) m_c / M^2`` each (M = all misses found).
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    n, p = X.shape
    lo, span = X.min(axis=0), X.max(axis=0) - X.min(axis=0)
    S = (X - lo) / np.where(span > 0, span, 1.0)
    S[:, span == 0] = 0.0
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    C = len(classes)
    count = np.bincount(codes)
    D = np.zeros((n, n))
    for j in range(p):  # feature by feature, in column order
        D += np.abs(S[:, j, None] - S[None, :, j])
    W = np.zeros(p)
    for i in range(n):
        order = np.lexsort((np.arange(n), D[i]))  # by distance, then by lower index
        order = order[order != i]
        yi = codes[i]
        hits = order[codes[order] == yi][:k]
        if skrebate_small_classes and count[yi] <= k:
            hits = np.append(hits, i)
        if len(hits):
            W -= np.abs(S[i] - S[hits]).sum(axis=0) / len(hits)
        misses = {c: order[codes[order] == c][:k] for c in range(C) if c != yi}
        total = sum(len(m) for m in misses.values())
        for c, m in misses.items():
            if skrebate_small_classes:
                w = (C - 1) * len(m) / total**2
            elif miss_weight == "prior":
                w = count[c] / (n - count[yi]) / len(m)
            else:
                w = 1.0 / (C - 1) / len(m)
            W += w * np.abs(S[i] - S[m]).sum(axis=0)
    W /= n
    W[span == 0] = np.nan
    return W


def _close(actual, desired):
    np.testing.assert_allclose(actual, desired, rtol=RTOL, atol=ATOL, equal_nan=True)


def _continuous_columns(X, m, min_unique=11):
    """The first ``m`` columns with more than 10 distinct values (skrebate: continuous)."""
    X = np.asarray(X, dtype=np.float64)
    keep = [j for j in range(X.shape[1]) if len(np.unique(X[:, j])) >= min_unique][:m]
    return np.ascontiguousarray(X[:, keep])


# --------------------------------------------------------------------------------------------
# against the direct implementation, on real data
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, k, cols", [
    ("golub", 10, None),  # binary, ALL:27 AML:11, string labels
    ("GLIOMA", 10, None),  # 4 classes, one of 7 samples: fewer than k hits and misses
    ("TOX_171", 10, 1500),  # 4 classes, unlogged intensities
    ("leukemia", 10, 2000),  # int16 in {-2..2}: many tied distances
    ("lymphoma", 3, 1000),  # int16, 9 classes, two of 2 samples
])
@pytest.mark.parametrize("miss_weight", ["prior", "equal"])
def test_matches_direct_definition_on_real_data(name, k, cols, miss_weight):
    X, y, _ = load_shared(name)
    X = X if cols is None else X[:, :cols]
    res = gs.score(X, y, method="relieff", method_options={"n_neighbors": k, "miss_weight": miss_weight})
    _close(res.scores, reference(X, y, k, miss_weight))
    np.testing.assert_array_equal(res.scores, res.statistic)
    assert res.method_options == {"n_neighbors": k, "miss_weight": miss_weight}


def test_sparse_counts_match_dense_and_reference():
    X, y, _ = load_shared("camda_pseudomonas")
    X = X[:, :1200]  # CSR counts, with constant (all-zero) features
    res = gs.score(X, y, method="relieff")
    assert sp.issparse(X) and np.isnan(res.scores).any()
    _close(res.scores, reference(X, y))
    np.testing.assert_array_equal(res.scores, gs.score(X.toarray(), y, method="relieff").scores)


def test_binary_prior_and_equal_agree_and_multiclass_differ():
    X, y, _ = load_shared("golub")
    X = X[:, :500]
    np.testing.assert_array_equal(gs.score(X, y, method="relieff").scores,
                                  gs.score(X, y, method="relieff", method_options={"miss_weight": "equal"}).scores)
    X, y, _ = load_shared("GLIOMA")  # classes 14/7/14/15: priors differ
    X = X[:, :500]
    a = gs.score(X, y, method="relieff").scores
    b = gs.score(X, y, method="relieff", method_options={"miss_weight": "equal"}).scores
    assert not np.allclose(a, b)


# --------------------------------------------------------------------------------------------
# against skrebate
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, k, m", [
    ("golub", 10, 300),  # binary
    ("ALLAML", 5, 200),  # binary, standardized
    ("GLIOMA", 5, 200),  # 4 classes, every class has more than k samples
    ("TOX_171", 10, 100),  # 4 classes
])
def test_matches_skrebate_on_continuous_data(name, k, m):
    skrebate = pytest.importorskip("skrebate")
    X, y, _ = load_shared(name)
    Xc = _continuous_columns(X, m)
    theirs = skrebate.ReliefF(n_neighbors=k).fit(Xc.copy(), y).feature_importances_
    # skrebate weights every miss class equally; the same as "prior" for two classes
    ours = gs.score(Xc, y, method="relieff", method_options={"n_neighbors": k, "miss_weight": "equal"})
    _close(ours.scores, theirs)


def test_skrebate_differs_only_by_its_small_class_rules():
    """GLIOMA with k = 10: class '2' has 7 samples. skrebate counts each of them as its own hit
    and weights the miss classes by their share of the misses found; genosift does not."""
    skrebate = pytest.importorskip("skrebate")
    X, y, _ = load_shared("GLIOMA")
    Xc = _continuous_columns(X, 150)
    theirs = skrebate.ReliefF(n_neighbors=10).fit(Xc.copy(), y).feature_importances_
    _close(theirs, reference(Xc, y, 10, skrebate_small_classes=True))
    ours = gs.score(Xc, y, method="relieff", method_options={"miss_weight": "equal"}).scores
    _close(ours, reference(Xc, y, 10, "equal"))
    assert np.abs(ours - theirs).max() > 1e-3


def test_ties_as_skrebate_with_a_stable_sort(monkeypatch):
    """Discrete data tie distances: genosift takes the lower sample index first. skrebate orders
    neighbours with numpy's default (unstable) argsort, so ties may go either way; made stable,
    it picks the same neighbours (skrebate options make every feature continuous here)."""
    skrebate = pytest.importorskip("skrebate")
    X, y, _ = load_shared("leukemia")
    X = np.asarray(X[:, :80], dtype=np.float64)
    codes = np.unique(y, return_inverse=True)[1]
    ours = gs.score(X, codes, method="relieff").scores
    stable = np.argsort
    monkeypatch.setattr(np, "argsort", lambda a, *args, **kw: stable(a, kind="stable"))
    model = skrebate.ReliefF(n_neighbors=10, categorical_threshold=0, label_type="binary")
    _close(ours, model.fit(X.copy(), codes).feature_importances_)


# --------------------------------------------------------------------------------------------
# what ReliefF is for: interactions
# --------------------------------------------------------------------------------------------

def test_finds_xor_epistasis_that_anova_cannot_see():
    """GAMETES-style pure epistasis: the class is x0 XOR x1, each of the four genotype pairs
    in exactly a quarter of the samples, so neither feature alone says anything about y."""
    rng = np.random.default_rng(20240611)
    n = 200
    pairs = np.repeat([[0, 0], [0, 1], [1, 0], [1, 1]], n // 4, axis=0)
    X = rng.integers(0, 2, (n, 52)).astype(np.float64)
    X[:, :2] = pairs[rng.permutation(n)]
    y = (X[:, 0] != X[:, 1]).astype(int)
    relief = gs.score(X, y, method="relieff")
    assert set(relief.ranking[:2]) == {0, 1}
    assert relief.scores[:2].min() > 2 * np.sort(relief.scores[2:])[-1]
    anova = gs.score(X, y, method="anova")
    np.testing.assert_allclose(anova.statistic[:2], 0.0, atol=1e-12)  # equal class means
    assert anova.ranks[:2].min() > 10


# --------------------------------------------------------------------------------------------
# bounded memory: row blocks and feature blocks
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sparse", [False, True])
def test_blocks_give_identical_results(monkeypatch, sparse):
    X, y, _ = load_shared("GLIOMA")
    X = np.array(X[:, :60], dtype=np.float64)  # a copy: the shared data are read-only
    X[:, 7] = 3.0  # a constant feature
    X = sp.csr_matrix(X) if sparse else X
    n = X.shape[0]
    ref = gs.score(X, y, method="relieff")
    seen = {"rows": set(), "widths": set()}
    add = neighbours._add_manhattan

    def spy(ST, r0, D):
        seen["rows"].add(D.shape[0])
        seen["widths"].add(ST.shape[0])
        return add(ST, r0, D)

    monkeypatch.setattr(neighbours, "_add_manhattan", spy)
    for rows, width in [(1, 5), (3, 7), (5, 13), (4, 60), (50, 1)]:
        seen["rows"].clear(), seen["widths"].clear()
        # a query row holds n distances and the numbers of its 4 classes x 10 nearest samples
        monkeypatch.setattr(neighbours, "ROW_BLOCK_BYTES", 8 * (n + 4 * 10) * rows)
        monkeypatch.setattr(engine, "BLOCK_BYTES", 8 * n * width)
        res = gs.score(X, y, method="relieff")
        np.testing.assert_array_equal(res.scores, ref.scores)
        assert max(seen["rows"]) == min(rows, n) and max(seen["widths"]) == width


@pytest.mark.parametrize("threads", [0, 2**62])
def test_threads_do_not_change_results(monkeypatch, threads):
    """Every kernel on all threads (work threshold 0) or on one gives the same numbers."""
    X, y, _ = load_shared("TOX_171")
    X = X[:, :300]
    ref = gs.score(X, y, method="relieff")
    monkeypatch.setattr(neighbours, "_PARALLEL_WORK", threads)
    monkeypatch.setattr(neighbours, "ROW_BLOCK_BYTES", 8 * X.shape[0] * 7)
    np.testing.assert_array_equal(gs.score(X, y, method="relieff").scores, ref.scores)


def test_memory_is_bounded_by_the_block_budgets(monkeypatch):
    """n = 3000: an n x n float64 matrix would be 69 MiB; with 1 MiB budgets the call stays far
    below (numpy allocations, as tracemalloc sees them)."""
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.standard_normal((n, 6))
    y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    monkeypatch.setattr(engine, "BLOCK_BYTES", 2**20)
    monkeypatch.setattr(neighbours, "ROW_BLOCK_BYTES", 2**20)
    gs.score(X[:50], y[:50], method="relieff")  # compile first
    tracemalloc.start()
    try:
        res = gs.score(X, y, method="relieff")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20 < n * n * 8 / 16
    assert res.ranking[0] == 0


# --------------------------------------------------------------------------------------------
# edge cases
# --------------------------------------------------------------------------------------------

def test_hand_computed_ties_and_a_singleton_class():
    """Two equally near hits: the lower index wins. A sample alone in its class has no hits."""
    X = np.array([[0.0, 0.0, 0.0],
                  [1.0, 0.0, 0.0],  # distance 1 from sample 0
                  [0.0, 1.0, 0.0],  # distance 1 from sample 0 too
                  [1.0, 1.0, 1.0]])
    y = np.array([0, 0, 0, 1])
    res = gs.score(X, y, method="relieff", method_options={"n_neighbors": 1})
    # features scaled to [0, 1] already; per sample: -diff(hit) + diff(miss = sample 3)
    # 0: hit 1 (not 2): [-1, 0, 0] + [1, 1, 1];  1: hit 0: [-1, 0, 0] + [0, 1, 1]
    # 2: hit 0: [0, -1, 0] + [1, 0, 1];          3: no hit; miss 1 (ties 1, 2: lower index): [0, 1, 1]
    expected = np.array([0 - 1 + 1 + 0, 1 + 1 - 1 + 1, 1 + 1 + 1 + 1]) / 4
    np.testing.assert_allclose(res.scores, expected, rtol=1e-15)
    _close(res.scores, reference(X, y, 1))


def test_more_neighbours_than_samples_uses_them_all():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 8))
    y = rng.integers(0, 3, 30)
    all_ = gs.score(X, y, method="relieff", method_options={"n_neighbors": 30}).scores
    np.testing.assert_array_equal(all_, gs.score(X, y, method="relieff", method_options={"n_neighbors": 10**6}).scores)
    _close(all_, reference(X, y, 30))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10", None])
def test_bad_n_neighbors_is_a_clear_error(bad):
    X = np.random.default_rng(0).standard_normal((20, 4))
    with pytest.raises(ValueError, match="The 'n_neighbors' option of method 'relieff' must be an int >= 1"):
        gs.score(X, np.arange(20) % 2, method="relieff", method_options={"n_neighbors": bad})


def test_bad_miss_weight_is_a_clear_error():
    X = np.random.default_rng(0).standard_normal((20, 4))
    with pytest.raises(ValueError, match="The 'miss_weight' option of method 'relieff' must be one of 'prior', "
                                         "'equal'"):
        gs.score(X, np.arange(20) % 2, method="relieff", method_options={"miss_weight": "uniform"})


def test_numpy_integer_n_neighbors_and_registry_entry():
    X = np.random.default_rng(0).standard_normal((20, 4))
    y = np.arange(20) % 2
    np.testing.assert_array_equal(gs.score(X, y, method="relieff", method_options={"n_neighbors": np.int64(3)}).scores,
                                  gs.score(X, y, method="relieff", method_options={"n_neighbors": 3}).scores)
    spec = gs.get_method("relieff")
    assert spec.streaming == "matrix" and spec.task == "classification" and not spec.has_pvalues
    assert spec.options == {"n_neighbors": 10, "miss_weight": "prior"}
