"""Distribution scores on whole columns: Wasserstein, Jensen-Shannon (distance correlation: ``dcor``).

``wasserstein`` and ``jensen_shannon`` measure how far the class-conditional distribution of a
feature, p(x | c), lies from its distribution over all samples, p(x), and average over the
classes weighted by their shares pi_c = n_c / n. A feature unrelated to the labels has the same
distribution in every class, so both scores are near 0; they grow as the classes separate.

Shared conventions:

- **CDF transform.** ``jensen_shannon`` always, and ``wasserstein`` with ``normalize=True``, first
  map each value to its mid-distribution function (empirical CDF with ties split in half)::

      u_i = (#{j : x_j < x_i} + #{j : x_j = x_i} / 2) / n  =  (average rank of x_i - 1/2) / n

  so every feature lives on (0, 1), whatever its units, and scores of different features are
  comparable. Without ties the u_i are (1/2, 3/2, ..., n - 1/2) / n, evenly spread, and equal-width
  bins of u are equal-frequency (quantile) bins of x. Splitting ties in half makes the transform
  symmetric: u(-x) = 1 - u(x), so a feature and its negative score the same.
- **No spread, no score.** A feature with a single distinct value scores NaN (ranked last).
- **One sort per feature.** Every method sorts each column once (numpy's vectorised argsort, a
  few hundred columns at a time) and walks the sorted values in a compiled kernel; nothing of
  size n x n is ever built.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.constraints import AnyOf, Boolean, Choice, Integer
from ._base import Scores, register

__all__ = ["JIT", "jensen_shannon", "run_sorted", "wasserstein"]

#: The compiled kernels' options (also those of ``dcor``).
JIT = dict(nogil=True, cache=True, error_model="numpy")
#: Columns transposed and argsorted at a time (a few MB: stays in cache, bounds the extra memory).
_CHUNK = 256


@njit(**JIT)
def _transpose(block, j0, j1, out):
    """``out[:j1 - j0] = block[:, j0:j1].T``, in tiles of rows (several times numpy's strided copy)."""
    n = block.shape[0]
    for i0 in range(0, n, 32):
        i1 = min(n, i0 + 32)
        for j in range(j0, j1):
            for i in range(i0, i1):
                out[j - j0, i] = block[i, j]


def _sorted_chunks(block):
    """Yield ``(j0, j1, xt, order)``: columns ``j0:j1`` transposed to rows, and their argsort."""
    n, b = block.shape
    buf = np.empty((min(b, _CHUNK), n))
    for j0 in range(0, b, _CHUNK):
        j1 = min(b, j0 + _CHUNK)
        xt = buf[: j1 - j0]
        _transpose(block, j0, j1, xt)
        yield j0, j1, xt, np.argsort(xt, axis=1)


# --------------------------------------------------------------------------------------------
# kernels: each walks the columns of one chunk in sorted order, one tie group at a time
# --------------------------------------------------------------------------------------------

@njit(**JIT)
def _cdf_gap(seen, f, share, inv_count):
    """``sum_c pi_c |F(t) - F_c(t)|`` from ``F(t) = f`` and the running class counts ``seen``."""
    total = 0.0
    for c in range(share.shape[0]):
        total += share[c] * abs(f - seen[c] * inv_count[c])
    return total


@njit(**JIT)
def _wasserstein_kernel(xt, order, codes, count, normalize, out):
    """Class-share weighted W1 between each column's distribution and its class subsets.

    ``W1(P, P_c)`` is the integral of ``|F - F_c|`` over the line. Both CDFs are step functions
    that only change at the column's distinct values, so the integral is a sum over tie groups of
    (gap after the group) x (distance to the next group), on the u scale if ``normalize``.
    """
    m, n = xt.shape
    k = count.shape[0]
    seen = np.zeros(k)
    share = count / n
    inv_count = 1.0 / count
    for j in range(m):
        x = xt[j]
        o = order[j]
        if x[o[0]] == x[o[n - 1]]:
            out[j] = np.nan
            continue
        seen[:] = 0.0
        total = 0.0
        gap = 0.0
        prev = 0.0
        i = 0
        while i < n:
            v = x[o[i]]
            start = i
            while i < n and x[o[i]] == v:
                seen[codes[o[i]]] += 1.0
                i += 1
            if normalize:
                # u moves from the previous group to this one by (t_prev + t) / (2n): half of the
                # step is charged to the previous gap here, the other half below
                half = (i - start) / (2.0 * n)
                total += gap * half
                gap = _cdf_gap(seen, i / n, share, inv_count)
                total += gap * half
            else:
                if start > 0:
                    total += gap * (v - prev)
                gap = _cdf_gap(seen, i / n, share, inv_count)
                prev = v
        out[j] = total


@njit(**JIT)
def _js_kernel(xt, order, codes, count, bins, out):
    """Class-share weighted Jensen-Shannon divergence (bits) of u-histograms, each column."""
    m, n = xt.shape
    k = count.shape[0]
    hist = np.zeros((k, bins))
    marg = np.zeros(bins)
    ln2 = math.log(2.0)
    for j in range(m):
        x = xt[j]
        o = order[j]
        if x[o[0]] == x[o[n - 1]]:
            out[j] = np.nan
            continue
        hist[:, :] = 0.0
        i = 0
        while i < n:
            v = x[o[i]]
            start = i
            while i < n and x[o[i]] == v:
                i += 1
            # u = (2 * start + t) / (2n) exactly, so its bin floor(u * bins) is integer arithmetic
            b = ((start + i) * bins) // (2 * n)
            for q in range(start, i):
                hist[codes[o[q]], b] += 1.0
        for b in range(bins):
            marg[b] = 0.0
            for c in range(k):
                marg[b] += hist[c, b]
        total = 0.0
        for c in range(k):
            js = 0.0
            for b in range(bins):
                p = marg[b] / n
                q = hist[c, b] / count[c]
                mid = 0.5 * (p + q)
                if p > 0.0:
                    js += p * math.log(p / mid)
                if q > 0.0:
                    js += q * math.log(q / mid)
            total += count[c] / n * max(0.0, 0.5 * js / ln2)
        out[j] = total


# --------------------------------------------------------------------------------------------
# methods
# --------------------------------------------------------------------------------------------

def run_sorted(block, kernel, *args):
    """``kernel(xt, order, *args, out)`` over the columns of ``block``, sorted a chunk at a time: one score each."""
    out = np.empty(block.shape[1])
    for j0, j1, xt, order in _sorted_chunks(block):
        kernel(xt, order, *args, out[j0:j1])
    return out


@register(
    "wasserstein", invariance="monotone", task="classification", streaming="blocks", distinct=True,
    formula="sum_c (n_c/n) W1(p(x), p(x|c)), W1 = integral |F(t) - F_c(t)| dt; normalize: on "
            "u = (average rank - 1/2)/n",
    reference="Vallender (1974), Theory Probab. Appl. 18:784 (W1 on the line); "
              "scipy.stats.wasserstein_distance",
    options={"normalize": Boolean()},
)
def wasserstein(block, target, *, normalize=True):
    """Class-share weighted Wasserstein-1 distance of each class's distribution from the whole.

    Parameters
    ----------
    normalize : bool, default True
        Score the CDF-transformed feature ``u = (average rank - 1/2) / n`` (see the module notes),
        so scores lie in [0, 1) and are comparable between features measured in different units
        or scales, and invariant to any increasing transform of a feature (log or not). False
        scores the raw values, in the feature's units.

    Notes
    -----
    ``sum_c pi_c W1(P, P_c)`` with ``P`` the empirical distribution of the feature over all
    samples, ``P_c`` over class ``c`` and ``pi_c = n_c / n``. With two classes it equals
    ``2 pi_0 pi_1 W1(P_0, P_1)``. A feature with one distinct value scores NaN.

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> X = np.array([[1.0, 0.3, 5], [2.0, 0.1, 5], [3.0, 0.4, 5], [4.0, 0.2, 5]])
    >>> y = ["a", "a", "b", "b"]
    >>> gs.score(X, y, method="wasserstein").scores.round(4).tolist()  # separated: pi_0 pi_1
    [0.25, 0.125, nan]
    >>> gs.score(X, y, method="wasserstein", method_options={"normalize": False}).scores.round(4).tolist()
    [1.0, 0.05, nan]
    """
    return Scores(run_sorted(block, _wasserstein_kernel, target.codes, target.count, bool(normalize)))


def _n_bins(bins, n):
    """The bins of ``n`` samples: ``"sturges"`` or an int >= 2, as the declaration takes."""
    return int(math.ceil(math.log2(n))) + 1 if isinstance(bins, str) else int(bins)


@register(
    "jensen_shannon", invariance="monotone", task="classification", streaming="blocks", distinct=True,
    formula="sum_c (n_c/n) JS(h, h_c), JS base 2 between the histograms of u = (average rank - "
            "1/2)/n over all samples and over class c, `bins` equal bins on [0, 1]",
    reference="Lin (1991), IEEE Trans. Inf. Theory 37:145; scipy.spatial.distance.jensenshannon(base=2)**2",
    options={"bins": AnyOf(Choice("sturges"), Integer(low=2))},
)
def jensen_shannon(block, target, *, bins="sturges"):
    """Class-share weighted Jensen-Shannon divergence (bits) of each class's histogram from the whole.

    Parameters
    ----------
    bins : 'sturges' or int >= 2, default 'sturges'
        Number of equal-width bins on [0, 1] for the CDF-transformed feature
        ``u = (average rank - 1/2) / n``: equal-frequency bins of the raw feature. 'sturges' is
        ``ceil(log2 n) + 1`` (7 bins at n = 38, 9 at n = 171, 11 at n = 1000). Few bins keep the
        upward bias of the plug-in divergence small for small classes (it grows like
        ``(bins - 1) / n_c``), which matters more here than resolution.

    Notes
    -----
    ``sum_c pi_c JS(h, h_c)`` with ``h`` the normalised histogram of ``u`` over all samples,
    ``h_c`` over class ``c``, ``pi_c = n_c / n`` and ``JS(P, Q) = KL(P || M) / 2 + KL(Q || M) / 2``,
    ``M = (P + Q) / 2``, in bits, so each term lies in [0, 1]. A value on a bin edge goes to the
    upper bin (``floor(u * bins)``, as ``numpy.histogram``); tied values share one ``u`` and one
    bin. A feature with one distinct value scores NaN.

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> X = np.array([[1.0, 0.3, 5], [2.0, 0.1, 5], [3.0, 0.4, 5], [4.0, 0.2, 5]])
    >>> y = ["a", "a", "b", "b"]
    >>> gs.score(X, y, method="jensen_shannon", method_options={"bins": 2}).scores.round(4).tolist()
    [0.3113, 0.0, nan]
    """
    n_bins = _n_bins(bins, block.shape[0])
    return Scores(run_sorted(block, _js_kernel, target.codes, target.count, n_bins))
