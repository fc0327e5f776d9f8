"""Distribution and dependence scores on whole columns: Wasserstein, Jensen-Shannon, distance correlation.

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
import numbers

import numpy as np
from numba import njit

from .._messages import plain
from ._base import Scores, register

_JIT = dict(nogil=True, cache=True, error_model="numpy")
#: Columns transposed and argsorted at a time (a few MB: stays in cache, bounds the extra memory).
_CHUNK = 256


@njit(**_JIT)
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

@njit(**_JIT)
def _cdf_gap(seen, f, share, inv_count):
    """``sum_c pi_c |F(t) - F_c(t)|`` from ``F(t) = f`` and the running class counts ``seen``."""
    total = 0.0
    for c in range(share.shape[0]):
        total += share[c] * abs(f - seen[c] * inv_count[c])
    return total


@njit(**_JIT)
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


@njit(**_JIT)
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


@njit(**_JIT)
def _x_terms(x, o, a_dot):
    """Standardise one sorted column; fill ``a_dot[i] = sum_j |x_i - x_j|``.

    Returns ``(xs, a_all, sum_sq)``: the standardised values in sorted order, the total of all
    pairwise distances and ``sum_ij (x_i - x_j)^2``. Distance correlation is invariant to shifting
    and scaling x, so x is centred at its median and divided by its range (no overflow, less
    cancellation).
    """
    n = o.shape[0]
    lo = x[o[0]]
    scale = x[o[n - 1]] - lo
    mid = x[o[n // 2]]
    xs = np.empty(n)
    total = 0.0
    for i in range(n):
        xs[i] = (x[o[i]] - mid) / scale
        total += xs[i]
    mean = total / n
    ss = 0.0
    for i in range(n):
        ss += (xs[i] - mean) ** 2
    below = 0.0
    a_all = 0.0
    for i in range(n):
        # sum_j |s_i - s_j| = s_i (2i - n) + total - 2 (sum of the i values below)
        a = xs[i] * (2 * i - n) + total - 2.0 * below
        a_dot[o[i]] = a
        a_all += a
        below += xs[i]
    return xs, a_all, 2.0 * n * ss


@njit(**_JIT)
def _dvar(sum_sq, dot, total, n):
    """V-statistic dVar^2 from sum_ij d_ij^2, the row sums ``dot`` and their total."""
    s = 0.0
    for i in range(n):
        s += dot[i] * dot[i]
    nf = float(n)
    return sum_sq / nf**2 + total * total / nf**4 - 2.0 * s / nf**3


@njit(**_JIT)
def _dcor_finish(s_ab, a_dot, b_dot, a_all, b_all, sum_sq, dvar_y, n):
    s = 0.0
    for i in range(n):
        s += a_dot[i] * b_dot[i]
    nf = float(n)
    dcov = s_ab / nf**2 + a_all * b_all / nf**4 - 2.0 * s / nf**3
    dvar_x = _dvar(sum_sq, a_dot, a_all, n)
    if dcov <= 0.0 or dvar_x <= 0.0:
        return 0.0
    return min(1.0, math.sqrt(dcov / math.sqrt(dvar_x * dvar_y)))


@njit(**_JIT)
def _dcor_numeric_kernel(xt, order, y, y_rank, b_dot, b_all, dvar_y, out):
    """Distance correlation with a numeric target, O(n log n) per column.

    The cross term ``sum_ij |x_i - x_j| |y_i - y_j|`` is collected in x order: for each sample,
    the samples before it are split into those with a smaller and a larger y by a Fenwick tree
    over the ranks of y holding (count, sum x, sum y, sum xy) (Huo & Szekely 2016).
    """
    m, n = xt.shape
    a_dot = np.empty(n)
    tree = np.zeros((n + 1, 4))
    for j in range(m):
        x = xt[j]
        o = order[j]
        if x[o[0]] == x[o[n - 1]]:
            out[j] = np.nan
            continue
        xs, a_all, sum_sq = _x_terms(x, o, a_dot)
        tree[:, :] = 0.0
        tot_c = 0.0
        tot_x = 0.0
        tot_y = 0.0
        tot_xy = 0.0
        cross = 0.0
        for i in range(n):
            s = o[i]
            xi = xs[i]
            yi = y[s]
            # prefix sums over samples seen so far with y rank below this one
            bc = 0.0
            bx = 0.0
            by = 0.0
            bxy = 0.0
            r = y_rank[s]
            while r > 0:
                bc += tree[r, 0]
                bx += tree[r, 1]
                by += tree[r, 2]
                bxy += tree[r, 3]
                r -= r & (-r)
            ac = tot_c - bc
            ax = tot_x - bx
            ay = tot_y - by
            axy = tot_xy - bxy
            # sum over earlier samples of (x_i - x_e) |y_i - y_e|, below then above
            cross += (xi * yi * bc - xi * by - yi * bx + bxy) - (xi * yi * ac - xi * ay - yi * ax + axy)
            r = y_rank[s] + 1
            while r <= n:
                tree[r, 0] += 1.0
                tree[r, 1] += xi
                tree[r, 2] += yi
                tree[r, 3] += xi * yi
                r += r & (-r)
            tot_c += 1.0
            tot_x += xi
            tot_y += yi
            tot_xy += xi * yi
        out[j] = _dcor_finish(2.0 * cross, a_dot, b_dot, a_all, b_all, sum_sq, dvar_y, n)


@njit(**_JIT)
def _dcor_labels_kernel(xt, order, codes, k, b_dot, b_all, dvar_y, out):
    """Distance correlation with class labels under the discrete metric 1[y_i != y_j].

    The cross term is the sum of all pairwise |x_i - x_j| minus those within a class, collected
    in x order from running per-class counts and sums: O(n) per column after the sort.
    """
    m, n = xt.shape
    a_dot = np.empty(n)
    cnt = np.zeros(k)
    acc = np.zeros(k)
    for j in range(m):
        x = xt[j]
        o = order[j]
        if x[o[0]] == x[o[n - 1]]:
            out[j] = np.nan
            continue
        xs, a_all, sum_sq = _x_terms(x, o, a_dot)
        cnt[:] = 0.0
        acc[:] = 0.0
        within = 0.0
        for i in range(n):
            c = codes[o[i]]
            within += cnt[c] * xs[i] - acc[c]
            cnt[c] += 1.0
            acc[c] += xs[i]
        out[j] = _dcor_finish(a_all - 2.0 * within, a_dot, b_dot, a_all, b_all, sum_sq, dvar_y, n)


# --------------------------------------------------------------------------------------------
# methods
# --------------------------------------------------------------------------------------------

def _run(block, kernel, *args):
    out = np.empty(block.shape[1])
    for j0, j1, xt, order in _sorted_chunks(block):
        kernel(xt, order, *args, out[j0:j1])
    return out


def _check_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"The '{name}' option must be True or False. Got {value!r} instead.")
    return bool(value)


@register(
    "wasserstein", invariance="monotone", task="classification", streaming="blocks",
    formula="sum_c (n_c/n) W1(p(x), p(x|c)), W1 = integral |F(t) - F_c(t)| dt; normalize: on "
            "u = (average rank - 1/2)/n",
    reference="Vallender (1974), Theory Probab. Appl. 18:784 (W1 on the line); "
              "scipy.stats.wasserstein_distance",
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
    >>> gs.score(X, y, method="wasserstein", normalize=False).scores.round(4).tolist()
    [1.0, 0.05, nan]
    """
    normalize = _check_bool("normalize", normalize)
    return Scores(_run(block, _wasserstein_kernel, target.codes, target.count, normalize))


def _n_bins(bins, n):
    if isinstance(bins, str):
        if bins == "sturges":
            return int(math.ceil(math.log2(n))) + 1
    elif isinstance(bins, numbers.Integral) and not isinstance(bins, (bool, np.bool_)) and bins >= 2:
        return int(bins)
    raise ValueError(f"The 'bins' option must be 'sturges' or an int >= 2. Got {bins!r} instead.")


@register(
    "jensen_shannon", invariance="monotone", task="classification", streaming="blocks",
    formula="sum_c (n_c/n) JS(h, h_c), JS base 2 between the histograms of u = (average rank - "
            "1/2)/n over all samples and over class c, `bins` equal bins on [0, 1]",
    reference="Lin (1991), IEEE Trans. Inf. Theory 37:145; scipy.spatial.distance.jensenshannon(base=2)**2",
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
    >>> gs.score(X, y, method="jensen_shannon", bins=2).scores.round(4).tolist()
    [0.3113, 0.0, nan]
    """
    n_bins = _n_bins(bins, block.shape[0])
    return Scores(_run(block, _js_kernel, target.codes, target.count, n_bins))


_Y_METRICS = ("auto", "absolute", "discrete")


def _y_terms(target, y_metric):
    """``(labels, y, y_rank, b_dot, b_all, dvar_y)`` for the target under the chosen metric."""
    if y_metric not in _Y_METRICS:
        raise ValueError(f"The 'y_metric' option must be one of {_Y_METRICS}. Got {y_metric!r} instead.")
    n = target.n_samples
    if y_metric == "auto":
        y_metric = "discrete" if target.codes is not None else "absolute"
    if y_metric == "discrete":
        if target.codes is None:
            raise ValueError(
                "y_metric='discrete' needs class labels, but y looks like a continuous target. "
                "Use y_metric='absolute' (or 'auto'), or bin y into classes first."
            )
        count = target.count
        b_dot = n - count[target.codes]
        b_all = float(n * n - (count * count).sum())
        # b_ij^2 = b_ij, so sum_ij b_ij^2 = b_all
        dvar_y = float(_dvar(b_all, b_dot, b_all, n))
        return True, None, None, b_dot, b_all, dvar_y
    if target.values is None:
        raise ValueError(
            "y_metric='absolute' needs a numeric y, but y holds non-numeric labels "
            f"{plain(target.classes[:5])}. Use y_metric='discrete' (or 'auto') for labels."
        )
    o = np.argsort(target.values, kind="stable")
    y_rank = np.empty(n, dtype=np.intp)
    y_rank[o] = np.arange(n)
    b_dot = np.empty(n)
    xs, b_all, sum_sq = _x_terms(target.values, o, b_dot)
    return False, xs[y_rank], y_rank, b_dot, b_all, float(_dvar(sum_sq, b_dot, b_all, n))


@register(
    "dcor", invariance="affine", task="any", streaming="blocks", scale_free=True,
    formula="dCor = dCov(x, y) / sqrt(dVar(x) dVar(y)), V-statistics of double-centred distance "
            "matrices; d(y) = |y_i - y_j| for numbers, 1[y_i != y_j] for labels",
    reference="Szekely, Rizzo & Bakirov (2007), Ann. Statist. 35:2769; O(n log n): Huo & Szekely "
              "(2016), Technometrics 58:435; dcor.distance_correlation",
)
def dcor(block, target, *, y_metric="auto"):
    """Distance correlation with y, in [0, 1]: any kind of dependence (population value 0 iff independent).

    Parameters
    ----------
    y_metric : {'auto', 'absolute', 'discrete'}, default 'auto'
        Distance between two targets. 'absolute' is ``|y_i - y_j|`` (a numeric target);
        'discrete' is ``1[y_i != y_j]`` (class labels: no order, no spacing between classes;
        the same as the Euclidean distance between one-hot codes, up to scale). 'auto' takes
        'discrete' when y looks like class labels (strings, or few integer values) and
        'absolute' otherwise. With two classes both give the same score. Force 'absolute' for
        an integer-valued numeric target (counts, grades), whose spacing matters.

    Notes
    -----
    The squared sample distance covariance is the V-statistic
    ``dCov^2 = (1/n^2) sum_ij A_ij B_ij`` of the double-centred distance matrices of x and y,
    and ``dCor = sqrt(dCov^2(x, y) / sqrt(dVar^2(x) dVar^2(y)))``. Computed from one sort of each
    feature in O(n log n) time and O(n) memory per feature (no n x n matrix), with the
    expansion of Huo & Szekely (2016). A feature with one distinct value scores NaN.

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> X = np.array([[1.0, 0.3, 5], [2.0, 0.1, 5], [3.0, 0.4, 5], [4.0, 0.2, 5]])
    >>> gs.score(X, ["a", "a", "b", "b"], method="dcor").scores.round(4).tolist()
    [0.9122, 0.5266, nan]
    >>> gs.score(X, [1.0, 2.5, 2.9, 4.2], method="dcor").scores.round(4).tolist()
    [0.974, 0.6236, nan]
    """
    labels, y, y_rank, b_dot, b_all, dvar_y = _y_terms(target, y_metric)
    if labels:
        return Scores(_run(block, _dcor_labels_kernel, target.codes, len(target.classes), b_dot, b_all, dvar_y))
    return Scores(_run(block, _dcor_numeric_kernel, y, y_rank, b_dot, b_all, dvar_y))
