"""The top of the ranking by partition (``top_order``, ``ScoreResult.top``, ``SelectKBest``, the
command line's ``--top``) is exactly the first k of the full stable ranking: ties by lower index,
NaN last, features left out by the allele-frequency filter after the tested ones."""
import numpy as np
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.scores import rank_order, top_order, untested_last


def _adversarial(rng, p):
    """Scores with many exact and near ties (last-bit differences), NaN, +-inf and -0.0."""
    levels = np.array([0.0, -0.0, 1.0, np.nextafter(1.0, 2), np.nextafter(1.0, 0), 2.5, np.inf, -np.inf, np.nan])
    key = levels[rng.integers(0, levels.size, p)]
    noisy = rng.random(p) < 0.3
    key[noisy] = np.round(rng.normal(size=noisy.sum()), 1)  # more exact ties
    return key


@pytest.mark.parametrize("seed", range(6))
def test_top_order_is_the_first_k_of_the_full_ranking(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(1, 400))
    key = _adversarial(rng, p)
    tested = rng.random(p) < 0.7
    for filt in (None, tested):
        full = untested_last(rank_order(key), filt)
        for k in sorted({0, 1, 2, p // 3, p // 2, p - 1, p, p + 5}):
            got = top_order(key, k, filt)
            np.testing.assert_array_equal(got, full[:k], err_msg=f"p={p} k={k} filter={filt is not None}")


def test_top_order_cuts_inside_a_run_of_exact_ties():
    key = np.array([3.0] + [1.0] * 50 + [2.0] * 3 + [1.0] * 50 + [np.nan, -np.inf])
    for k in range(key.size + 1):
        np.testing.assert_array_equal(top_order(key, k), rank_order(key)[:k])


def test_score_result_top_selector_and_select_mask_agree_with_the_ranking():
    from genosift.jobs.labelled import select_mask

    rng = np.random.default_rng(3)
    X = rng.poisson(0.3, size=(60, 500)).astype(np.float64)
    X[:, 100:300] = X[:, [0]]  # 200 identical columns: their scores tie exactly
    y = np.arange(60) % 3
    X[y == 1, :5] += 2
    for options in ({}, {"min_af": 0.2, "max_af": 0.9}):
        res = gs.score(sp.csr_matrix(X), y, method="fisher", **options)
        full = gs.score(sp.csr_matrix(X), y, method="fisher", **options).ranking
        for k in (1, 7, 150, 499):
            fresh = gs.score(sp.csr_matrix(X), y, method="fisher", **options)
            np.testing.assert_array_equal(fresh.top_indices(min(k, fresh.n_tested)), full[:min(k, fresh.n_tested)])
            assert "ranking" not in fresh.__dict__  # no full sort was needed
            assert list(res.top(k)) == list(res.feature_names[full[:min(k, res.n_tested)]])
            mask = select_mask(fresh, top=k)
            assert set(np.flatnonzero(mask)) == set(full[:k]) & set(np.flatnonzero(fresh.tested if options else mask))
            sel = gs.SelectKBest("fisher", k=k, **options).fit(sp.csr_matrix(X), y)
            assert "ranking_" not in sel.__dict__
            assert set(np.flatnonzero(sel.get_support())) == set(full[:min(k, res.n_tested)])
            np.testing.assert_array_equal(sel.ranking_, full)  # still there, sorted on first use
