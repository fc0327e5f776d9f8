"""Benjamini-Hochberg q-values: the very bits of ``scipy.stats.false_discovery_control``."""
import numpy as np
import pytest
from scipy.stats import false_discovery_control

from genosift.scores import bh_qvalues


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 1000, 50000])
@pytest.mark.parametrize("kind", ["uniform", "ties", "tiny", "nan_and_edges"])
def test_bh_qvalues_match_scipy_bit_for_bit(n, kind):
    rng = np.random.default_rng(n)
    p = rng.random(n)
    if kind == "ties":
        p = np.round(p, 2)
    elif kind == "tiny":
        p = p ** 20
    elif kind == "nan_and_edges" and n:
        p[rng.random(n) < 0.3] = np.nan
        p[rng.random(n) < 0.1] = 1.0
        p[rng.random(n) < 0.1] = 0.0
    ok = ~np.isnan(p)
    expected = np.full(n, np.nan)
    if ok.any():
        expected[ok] = false_discovery_control(p[ok], method="bh")
    assert np.array_equal(bh_qvalues(p).view(np.int64), expected.view(np.int64))
