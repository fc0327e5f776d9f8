"""The knockoff+ threshold and e-BH against their definitions by brute force; correlation groups."""
from __future__ import annotations

import numpy as np
import pytest

from genosift.knockoffs.filter import e_bh, knockoff_e_values, knockoff_threshold
from genosift.knockoffs.groups import correlation_groups


def _threshold_by_definition(W, q, offset):
    best = np.inf
    for t in sorted(set(np.abs(W[W != 0]))):
        if (offset + (W <= -t).sum()) / max(1, (W >= t).sum()) <= q:
            best = min(best, t)
    return best


def _ebh_by_definition(e, q):
    m = e.size
    k = max([k for k in range(1, m + 1) if (e >= m / (q * k)).sum() >= k], default=0)
    cut = np.sort(e)[::-1][k - 1] if k else np.inf
    return e >= cut if k else np.zeros(m, dtype=bool)


@pytest.mark.parametrize("seed", range(40))
def test_threshold_and_ebh_by_their_definitions(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(5, 60))
    W = np.round(rng.standard_normal(m) + rng.random(m) * 3 * (rng.random(m) < 0.4), 1)  # ties and zeros
    for q in (0.05, 0.1, 0.3):
        for offset in (0, 1):
            assert knockoff_threshold(W, q, offset=offset) == _threshold_by_definition(W, q, offset)
        e = knockoff_e_values(W, q)
        t = knockoff_threshold(W, q)
        # one draw: e-BH at the same level selects exactly what knockoff+ does
        np.testing.assert_array_equal(e_bh(e, q), W >= t)
        mean_e = (e + knockoff_e_values(-W[::-1], q)[::-1] + rng.random(m) * 2) / 3
        np.testing.assert_array_equal(e_bh(mean_e, q), _ebh_by_definition(mean_e, q))


def test_no_threshold_without_enough_positives():
    assert knockoff_threshold(np.array([1.0, 2.0, 3.0]), 0.1) == np.inf  # (1 + 0) / 3 > 0.1
    assert knockoff_threshold(np.zeros(4), 0.1) == np.inf
    np.testing.assert_array_equal(knockoff_e_values(np.array([1.0, -1.0]), 0.1), 0.0)
    assert not e_bh(np.zeros(5), 0.1).any()
    W = np.r_[np.arange(1.0, 21.0), -0.5]  # at t = 0.5: (1 + 1) / 20 <= 0.1
    assert knockoff_threshold(W, 0.1) == 0.5
    assert knockoff_threshold(W, 0.09) == 1.0  # (1 + 0) / 20
    e = knockoff_e_values(W, 0.1)
    np.testing.assert_allclose(e[:20], W.size / 2.0)
    assert e[20] == 0


def test_correlation_groups_find_planted_blocks():
    rng = np.random.default_rng(0)
    n = 500
    blocks = []
    for size in (4, 1, 3):
        latent = rng.standard_normal(n)
        blocks.append(latent[:, None] + 0.4 * rng.standard_normal((n, size)))
    X = np.hstack(blocks)[:, [0, 4, 1, 5, 2, 6, 3, 7]]  # interleaved
    labels = correlation_groups(X, threshold=0.5)
    np.testing.assert_array_equal(labels, [0, 1, 0, 2, 0, 2, 0, 2])
    # a threshold above every correlation leaves each column alone
    np.testing.assert_array_equal(correlation_groups(X, threshold=0.99), np.arange(8))
    # an anti-correlated copy is in the same group
    np.testing.assert_array_equal(correlation_groups(np.column_stack([X[:, 0], -X[:, 0] + 0.1 * X[:, 1]])), [0, 0])
