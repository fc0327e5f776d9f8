"""Pairs of features that explain the classes jointly: ``score_pairs``.

A pair of presence/absence features (k-mers, genes, SNPs) can separate the classes where neither
does alone: an XOR (resistance when exactly one of two genes is present) or an AND has no
marginal signal. ``score_pairs`` screens every pair of the candidate features (by default the
distinct presence patterns inside the allele-frequency range) and keeps the ``top`` pairs.

The joint distribution of a pair within each class is a 2 x 2 x k table of counts. With the
columns packed into bits (64 samples a word), the count of samples carrying both features in
class c is ``popcount(a_i & a_j & class_c)`` summed over the words; every other cell follows
from each feature's class counts. Each pair costs k popcounts a word, on every core: the
screen runs through the ``n_pairs x n_samples`` pair-samples at the rate the
``benchmarks/bench_pairs.py`` results give.

Scores of a pair (``method``), from its table:

``"mi"``
    The mutual information of the pair with the classes, ``I((x_i, x_j); c)`` in bits, from
    counts only (a table of ``t log t``), so the screen is as fast as the counting.
``"jensen_shannon"``
    The class-share weighted Jensen-Shannon divergence (bits) of each class's joint
    distribution ``p(x_i, x_j | c)`` from the joint distribution ``p(x_i, x_j)``: the
    distribution-based score of ``genosift``'s ``jensen_shannon`` method, in two dimensions.
``"wasserstein"``
    The class-share weighted earth mover's distance ``W1`` between ``p(x_i, x_j | c)`` and
    ``p(x_i, x_j)`` on the square of the four presence/absence cells, one step (the Manhattan
    distance) between cells that differ in one feature: ``genosift``'s ``wasserstein``
    (``normalize=False``) in two dimensions. Transport on the square's cycle of four cells is
    a circulation: with ``g`` the running sums of the surplus around it, the cost is
    ``sum |g_k - median(g)|``, exact in a few operations.

Each kept pair also gets each feature's marginal score (the same measure of the feature alone),
the **synergy** (the joint score less the better marginal one), the interaction information
``I(x_i; x_j; c) = I((x_i, x_j); c) - I(x_i; c) - I(x_j; c)`` and, for two classes, the
epistasis test: the likelihood-ratio statistic of the product term ``x_i x_j`` in the logistic
model ``logit P(c = 1) = b0 + b1 x_i + b2 x_j + b3 x_i x_j`` (two binary features make it the
saturated model of the four cells, so the statistic is twice the gap between the cells'
binomial log-likelihood and that of the additive model, fitted by Newton's method) and its
chi2(1) p-value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["METHODS", "PairScores", "covariate_lrts", "epistasis_lrt", "pack_columns", "pair_tables", "score_pairs",
           "unpack_columns"]

#: The joint scores of a pair (see the module's notes).
METHODS = ("mi", "jensen_shannon", "wasserstein")
_LN2 = np.log(2.0)


@intrinsic
def _popcount(typingctx, word):
    """The number of bits set in a 64-bit word: one CPU instruction (LLVM's ctpop)."""
    signature = types.uint64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])

    return signature, codegen


def pack_columns(dense_bool):
    """The columns of an ``(n, m)`` boolean matrix as bits: ``(m, ceil(n / 64))`` uint64, sample
    ``i`` at bit ``i % 64`` of word ``i // 64`` (the padding bits zero)."""
    n, m = dense_bool.shape
    words = (n + 63) // 64
    padded = np.zeros((words * 64, m), dtype=np.uint8)
    padded[:n] = dense_bool
    as_bytes = np.packbits(padded.T, axis=1, bitorder="little")  # (m, words * 8)
    return np.ascontiguousarray(as_bytes).view(np.uint64).reshape(m, words)


@njit(cache=True, nogil=True)
def _xlogx(t):
    return 0.0 if t <= 0.0 else t * np.log(t)


@njit(cache=True, nogil=True)
def _mi_constant(n, class_n, tlog):
    """The part of ``_mi_bits`` that is the same for every pair: ``n log n - sum_c n_c log n_c``."""
    classes = 0.0
    for c in range(class_n.size):
        classes += tlog[class_n[c]]
    return n * np.log(n) - classes


@njit(cache=True, nogil=True)
def _mi_bits(cells, k, n, constant, tlog, size=4):
    """``I((x_i, x_j); c)`` in bits of a ``size`` x k table of counts (``cells[cell * k + c]``),
    with ``constant`` from ``_mi_constant``: ``(constant + sum t log t of the cells by class -
    sum of the cells) / (n log 2)``."""
    joint_c = 0.0
    joint = 0.0
    for cell in range(size):
        total = 0
        for c in range(k):
            count = cells[cell * k + c]
            joint_c += tlog[count]
            total += count
        joint += tlog[total]
    return (constant + joint_c - joint) / (n * _LN2)


@njit(cache=True, nogil=True)
def _js_bits(cells, k, n, class_n, size):
    """Class-share weighted Jensen-Shannon divergence (bits) of each class's distribution over
    the ``size`` cells from the whole's (``cells[cell * k + c]``)."""
    out = 0.0
    for c in range(k):
        if class_n[c] == 0:
            continue
        js = 0.0
        for cell in range(size):
            total = 0
            for d in range(k):
                total += cells[cell * k + d]
            p = total / n
            q = cells[cell * k + c] / class_n[c]
            m = 0.5 * (p + q)
            js += -_xlogx(m) + 0.5 * (_xlogx(p) + _xlogx(q))
        out += class_n[c] / n * js
    return out / np.log(2.0)


@njit(cache=True, nogil=True)
def _w1_square(cells, k, n, class_n):
    """Class-share weighted ``W1`` between each class's distribution over the four cells of two
    presence/absence features (``_table``'s order) and the whole's, one step between
    neighbouring cells (see the module's notes)."""
    around = (3, 2, 0, 1)  # (0,0) -> (0,1) -> (1,1) -> (1,0) -> (0,0)
    out = 0.0
    g = np.empty(4)
    for c in range(k):
        if class_n[c] == 0:
            continue
        running = 0.0
        for step in range(4):
            cell = around[step]
            total = 0
            for d in range(k):
                total += cells[cell * k + d]
            running += total / n - cells[cell * k + c] / class_n[c]
            g[step] = running
        g.sort()
        out += class_n[c] / n * (g[3] + g[2] - g[1] - g[0])
    return out


@njit(cache=True, nogil=True)
def _table(bits, i, j, masks, ones, k, class_n, cells):
    """The 4 x k counts of the pair (i, j) in ``cells``: (1,1), (1,0), (0,1), (0,0) by class."""
    words = bits.shape[1]
    for c in range(k):
        both = 0
        for w in range(words):
            both += _popcount(bits[i, w] & bits[j, w] & masks[c, w])
        only_i = ones[i, c] - both
        only_j = ones[j, c] - both
        cells[c] = both
        cells[k + c] = only_i
        cells[2 * k + c] = only_j
        cells[3 * k + c] = class_n[c] - both - only_i - only_j


@njit(cache=True, nogil=True)
def _table_levels(bits, i, j, levels, masks, ones, k, class_n, cells):
    """The ``levels^2`` x k counts of the pair (i, j) of features of ``levels`` levels in
    ``cells`` (cell ``u * levels + v``: level u of i, level v of j). ``bits`` and ``ones`` hold
    levels 1 .. levels - 1 of feature i at rows ``i * (levels - 1) + u - 1``; level 0 is the rest."""
    words = bits.shape[1]
    q = levels - 1
    for c in range(k):
        for u in range(1, levels):
            row = 0
            for v in range(1, levels):
                both = 0
                for w in range(words):
                    both += _popcount(bits[i * q + u - 1, w] & bits[j * q + v - 1, w] & masks[c, w])
                cells[(u * levels + v) * k + c] = both
                row += both
            cells[u * levels * k + c] = ones[i * q + u - 1, c] - row
        for v in range(1, levels):
            column = 0
            for u in range(1, levels):
                column += cells[(u * levels + v) * k + c]
            cells[v * k + c] = ones[j * q + v - 1, c] - column
        rest = class_n[c]
        for cell in range(1, levels * levels):
            rest -= cells[cell * k + c]
        cells[c] = rest


@njit(cache=True, nogil=True)
def _worse(s1, o1, s2, o2):
    """Whether pair 1 ranks below pair 2: a lower score, or the same score and a later pair."""
    return s1 < s2 or (s1 == s2 and o1 > o2)


@njit(cache=True, nogil=True)
def _sift_down(scores, orders, kept, parent):
    while True:
        left = 2 * parent + 1
        if left >= kept:
            return
        low = left
        if left + 1 < kept and _worse(scores[left + 1], orders[left + 1], scores[left], orders[left]):
            low = left + 1
        if not _worse(scores[low], orders[low], scores[parent], orders[parent]):
            return
        scores[parent], scores[low] = scores[low], scores[parent]
        orders[parent], orders[low] = orders[low], orders[parent]
        parent = low


@njit(cache=True, nogil=True)
def _keep(scores, orders, kept, top, value, order):
    """Offer a pair to the bounded heap of the ``top`` best (its root the worst kept): the new
    count kept."""
    if kept < top:
        scores[kept], orders[kept] = value, order
        child = kept
        while child > 0:
            parent = (child - 1) // 2
            if not _worse(scores[child], orders[child], scores[parent], orders[parent]):
                break
            scores[parent], scores[child] = scores[child], scores[parent]
            orders[parent], orders[child] = orders[child], orders[parent]
            child = parent
        return kept + 1
    if _worse(scores[0], orders[0], value, order):
        scores[0], orders[0] = value, order
        _sift_down(scores, orders, kept, 0)
    return kept


@njit(cache=True, nogil=True)
def _screen(bits, masks, ones, class_n, tlog, rows, method, marginal, top, keep_scores, keep_orders, levels=2):
    """Score every pair (i, j > i) of the features ``rows`` and keep the ``top`` by synergy (the
    joint score less the better marginal one; ties by the earlier pair, ``i * m + j``) in a
    bounded heap (``keep_*``); returns how many are kept. Features of more than 2 ``levels``
    are laid out as ``_table_levels`` reads them."""
    m = bits.shape[0] // (levels - 1)
    k = masks.shape[0]
    n = 0
    for c in range(k):
        n += class_n[c]
    size = levels * levels
    cells = np.zeros(size * k, dtype=np.int64)
    constant = _mi_constant(n, class_n, tlog)
    kept = 0
    for r in range(rows.size):
        i = rows[r]
        for j in range(i + 1, m):
            if levels == 2:
                _table(bits, i, j, masks, ones, k, class_n, cells)
            else:
                _table_levels(bits, i, j, levels, masks, ones, k, class_n, cells)
            if method == 0:
                joint = _mi_bits(cells, k, n, constant, tlog, size)
            elif method == 1:
                joint = _js_bits(cells, k, n, class_n, size)
            else:
                joint = _w1_square(cells, k, n, class_n)
            kept = _keep(keep_scores, keep_orders, kept, top, joint - max(marginal[i], marginal[j]), i * m + j)
    return kept


@njit(cache=True, nogil=True)
def _triple_table(bits, i, j, l, masks, ones, k, class_n, cells):
    """The 8 x k counts of the triple (i, j, l) in ``cells``, cells ordered (1,1,1), (1,1,0),
    (1,0,1), (0,1,1), (1,0,0), (0,1,0), (0,0,1), (0,0,0), from the counts of the samples carrying
    all three, each two and each one (inclusion-exclusion)."""
    words = bits.shape[1]
    for c in range(k):
        abc = ab = ac = bc = 0
        for w in range(words):
            mask = masks[c, w]
            x, y, z = bits[i, w] & mask, bits[j, w], bits[l, w]
            ab += _popcount(x & y)
            ac += _popcount(x & z)
            bc += _popcount(y & z & mask)
            abc += _popcount(x & y & z)
        a, b, d = ones[i, c], ones[j, c], ones[l, c]
        row = (abc, ab - abc, ac - abc, bc - abc, a - ab - ac + abc, b - ab - bc + abc, d - ac - bc + abc)
        rest = class_n[c]
        for cell in range(7):
            cells[cell * k + c] = row[cell]
            rest -= row[cell]
        cells[7 * k + c] = rest


@njit(cache=True, nogil=True)
def _extend_pairs(bits, masks, ones, class_n, tlog, pairs_i, pairs_j, rows, top, keep_scores, keep_orders):
    """Every triple (i, j, l) of a pair (i, j) of ``rows`` (positions in ``pairs_*``) and another
    candidate l, by its synergy over its best pair (its MI less the best of its three pairs'); a
    bounded heap as ``_screen``, ordered by the sorted triple (a triple met from two of its
    pairs is offered twice, with the same score and order)."""
    m = bits.shape[0]
    k = masks.shape[0]
    n = 0
    for c in range(k):
        n += class_n[c]
    constant = _mi_constant(n, class_n, tlog)
    cells = np.zeros(8 * k, dtype=np.int64)
    kept = 0
    for r in range(rows.size):
        i, j = pairs_i[rows[r]], pairs_j[rows[r]]
        _table(bits, i, j, masks, ones, k, class_n, cells)
        pair = _mi_bits(cells, k, n, constant, tlog)
        for x in range(m):
            if x == i or x == j:
                continue
            _table(bits, i, x, masks, ones, k, class_n, cells)
            best = max(pair, _mi_bits(cells, k, n, constant, tlog))
            _table(bits, j, x, masks, ones, k, class_n, cells)
            best = max(best, _mi_bits(cells, k, n, constant, tlog))
            _triple_table(bits, i, j, x, masks, ones, k, class_n, cells)
            joint = _mi_bits(cells, k, n, constant, tlog, 8)
            a, b, c = min(i, x), i + j + x - min(i, x) - max(j, x), max(j, x)  # i < j
            kept = _keep(keep_scores, keep_orders, kept, top, joint - best, (a * m + b) * m + c)
    return kept


@njit(cache=True, nogil=True)
def _marginals(ones, class_n, tlog, method, levels=2):
    """Each feature's score alone, the same measure over its ``levels`` x k table (``ones``: the
    counts of levels 1 .. levels - 1 by class, as ``_table_levels`` reads them)."""
    k = ones.shape[1]
    q = levels - 1
    m = ones.shape[0] // q
    n = 0
    for c in range(k):
        n += class_n[c]
    constant = _mi_constant(n, class_n, tlog)
    out = np.empty(m)
    cells = np.zeros(levels * k, dtype=np.int64)
    for i in range(m):
        for c in range(k):
            rest = class_n[c]
            for u in range(1, levels):
                cells[u * k + c] = ones[i * q + u - 1, c]
                rest -= ones[i * q + u - 1, c]
            cells[c] = rest
        if method == 0:
            out[i] = _mi_bits(cells, k, n, constant, tlog, levels)
        elif method == 1:
            out[i] = _js_bits(cells, k, n, class_n, levels)
        else:  # W1 between two points one step apart: the difference of the shares present
            w = 0.0
            for c in range(k):
                if class_n[c] > 0:
                    total = 0
                    for d in range(k):
                        total += cells[k + d]
                    w += class_n[c] / n * abs(cells[k + c] / class_n[c] - total / n)
            out[i] = w
    return out


@njit(cache=True, nogil=True)
def _cells_ll(cases, counts):
    """The binomial log-likelihood of the saturated model of the cells: each cell's share."""
    out = 0.0
    for cell in range(counts.size):
        n = counts[cell]
        if n > 0:
            out += _xlogx(cases[cell]) + _xlogx(n - cases[cell]) - _xlogx(n)
    return out


@njit(cache=True, nogil=True)
def _additive_ll(cases, counts, design):
    """The maximised binomial log-likelihood of ``logit p = design @ b`` over the cells (Newton's
    method from 0, halving a step that lowers it; a fit that runs to infinity, under separation,
    stops where the likelihood no longer moves)."""
    q = design.shape[1]
    b = np.zeros(q)

    def loglik(beta):
        out = 0.0
        for cell in range(counts.size):
            if counts[cell] > 0:
                eta = 0.0
                for a in range(q):
                    eta += design[cell, a] * beta[a]
                # log sigmoid(eta) = -log1p(exp(-eta)), written stably
                log_p = -np.log1p(np.exp(-eta)) if eta >= 0 else eta - np.log1p(np.exp(eta))
                log_q = -np.log1p(np.exp(eta)) if eta < 0 else -eta - np.log1p(np.exp(-eta))
                out += cases[cell] * log_p + (counts[cell] - cases[cell]) * log_q
        return out

    current = loglik(b)
    for _ in range(200):
        grad = np.zeros(q)
        hess = np.zeros((q, q))
        for cell in range(counts.size):
            if counts[cell] > 0:
                eta = 0.0
                for a in range(q):
                    eta += design[cell, a] * b[a]
                p = 1.0 / (1.0 + np.exp(-eta))
                w = counts[cell] * p * (1.0 - p)
                for a in range(q):
                    grad[a] += design[cell, a] * (cases[cell] - counts[cell] * p)
                    for d in range(q):
                        hess[a, d] += w * design[cell, a] * design[cell, d]
        step = np.linalg.lstsq(hess, grad)[0]
        scale = 1.0
        better = False
        for _ in range(40):
            trial = b + scale * step
            value = loglik(trial)
            if value >= current - 1e-14 * abs(current):
                better = True
                break
            scale *= 0.5
        if not better:
            break
        moved = value - current
        b, current = trial, value
        if abs(moved) <= 1e-15 * max(1.0, abs(current)):
            break
    return current


_DESIGN = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


@njit(cache=True, nogil=True)
def _lrts(bits, masks, ones, class_n, pairs_i, pairs_j, design):
    """The epistasis likelihood ratio of each pair (two classes): 2 (saturated - additive)."""
    k = masks.shape[0]
    cells = np.zeros(4 * k, dtype=np.int64)
    out = np.empty(pairs_i.size)
    cases = np.empty(4)
    counts = np.empty(4)
    for r in range(pairs_i.size):
        _table(bits, pairs_i[r], pairs_j[r], masks, ones, k, class_n, cells)
        for cell in range(4):
            cases[cell] = cells[cell * k + 1]
            counts[cell] = cells[cell * k] + cells[cell * k + 1]
        out[r] = max(2.0 * (_cells_ll(cases, counts) - _additive_ll(cases, counts, design)), 0.0)
    return out


def epistasis_lrt(xi, xj, y):
    """The likelihood-ratio statistic and chi2(1) p-value of the product term of two binary
    features in the logistic model of the binary ``y`` (see the module's notes)."""
    from scipy import special

    a, b = np.asarray(xi) > 0, np.asarray(xj) > 0
    y = np.asarray(y).astype(bool)
    bits = pack_columns(np.column_stack([a, b]))
    masks = pack_columns(np.column_stack([~y, y])).copy()
    class_n = np.array([(~y).sum(), y.sum()], dtype=np.int64)
    ones = np.array([[(a & ~y).sum(), (a & y).sum()], [(b & ~y).sum(), (b & y).sum()]], dtype=np.int64)
    lrt = _lrts(bits, masks, ones, class_n, np.array([0]), np.array([1]), _DESIGN)[0]
    return float(lrt), float(special.chdtrc(1, lrt))


def covariate_lrts(presence, y, first, second, covariates):
    """The epistasis test of each pair ``(first[r], second[r])`` of the columns of ``presence``
    given ``covariates``: the likelihood ratio of the product term in the logistic model
    ``logit P(y = 1) = b0 + Z g + b1 x_i + b2 x_j + b3 x_i x_j`` against the model without it
    (genosift's ``logistic`` method on the product with ``Z``, ``x_i`` and ``x_j`` as covariates,
    maximum likelihood); NaN where the product lies in the span of the others, or where the fit
    does not converge or separates (``logistic``'s notes)."""
    from ..scores import Target, get_method

    spec = get_method("logistic")
    Z = np.asarray(covariates, dtype=np.float64)
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    count = np.bincount(codes, minlength=2).astype(np.float64)
    out = np.full(first.size, np.nan)
    for r, (i, j) in enumerate(zip(first, second)):
        a, b = presence[:, i].astype(np.float64), presence[:, j].astype(np.float64)
        design = np.column_stack([Z, a, b])
        if np.linalg.matrix_rank(np.column_stack([np.ones(a.size), design])) < design.shape[1] + 1:
            continue  # x_i, x_j and the covariates collinear: no product term to test
        target = Target(a.size, codes=codes.astype(np.intp), classes=classes, count=count, values=codes.astype(float),
                        covariates=design)
        scores = spec.func(np.ascontiguousarray((a * b)[:, None]), target, firth="never")
        out[r] = scores.scores[0] if scores.scores is not None else np.nan
    return out


def pair_tables(X, y, pairs):
    """The 2 x 2 x k table of counts of each pair ``(i, j)`` of the columns of ``X`` (read as
    presence) by the classes of ``y``: an array ``(len(pairs), 4, k)``, cells (1,1), (1,0), (0,1),
    (0,0), classes in sorted order."""
    presence = np.asarray(X) > 0
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    masks = pack_columns(codes[:, None] == np.arange(classes.size)[None, :])
    bits = pack_columns(presence)
    class_n = np.bincount(codes, minlength=classes.size).astype(np.int64)
    ones = np.stack([presence[codes == c].sum(axis=0) for c in range(classes.size)], axis=1).astype(np.int64)
    cells = np.zeros(4 * classes.size, dtype=np.int64)
    out = np.empty((len(pairs), 4, classes.size), dtype=np.int64)
    for r, (i, j) in enumerate(pairs):
        _table(bits, int(i), int(j), masks, ones, classes.size, class_n, cells)
        out[r] = cells.reshape(4, classes.size)
    return out


@dataclass
class PairScores:
    """The ``top`` pairs of ``score_pairs``, best first (by synergy, ties by the earlier pair).

    Attributes
    ----------
    method : str
    n_samples, n_features, n_candidates, n_pairs : int
        The samples; the features given; the candidate features screened (one per distinct
        presence pattern inside the allele-frequency range); the pairs of them screened.
    classes : ndarray
    first, second : ndarray of int
        Each pair's features (their columns in the data), ``first < second``.
    names_first, names_second : ndarray of str
    joint, marginal_first, marginal_second, synergy, interaction : ndarray
        The joint score, each feature's alone, ``joint - max(marginals)``, and the interaction
        information ``I(x_i; x_j; c)`` (bits).
    lrt, pvalue : ndarray or None
        The epistasis test of each pair (two classes), see the module's notes.
    size_first, size_second : ndarray of int
        The features sharing each one's presence pattern (the same pair for all of them).
    family_pvalue : ndarray or None
        With permutations: the share of permuted label sets whose best synergy reaches the
        pair's ``(1 + count) / (1 + permutations)``.
    triples : pandas.DataFrame or None
        With ``triples``: the best triples that extend the best pairs, by their synergy over
        their best pair (``score_pairs``).
    """

    method: str
    n_samples: int
    n_features: int
    n_candidates: int
    n_pairs: int
    classes: np.ndarray
    first: np.ndarray
    second: np.ndarray
    names_first: np.ndarray
    names_second: np.ndarray
    joint: np.ndarray
    marginal_first: np.ndarray
    marginal_second: np.ndarray
    synergy: np.ndarray
    interaction: np.ndarray
    lrt: np.ndarray | None
    pvalue: np.ndarray | None
    size_first: np.ndarray
    size_second: np.ndarray
    family_pvalue: np.ndarray | None = None
    triples: object = None

    def bonferroni(self, alpha=0.05):
        """The p-value threshold of ``alpha`` over the pairs screened."""
        return alpha / self.n_pairs if self.n_pairs else float("nan")

    def to_frame(self):
        """One row per pair kept, best first: the features, the scores, the test."""
        import pandas as pd

        frame = pd.DataFrame({
            "rank": np.arange(1, self.first.size + 1), "feature_1": self.names_first,
            "feature_2": self.names_second, "joint": self.joint, "marginal_1": self.marginal_first,
            "marginal_2": self.marginal_second, "synergy": self.synergy, "interaction": self.interaction})
        if self.lrt is not None:
            frame["lrt"], frame["pvalue"] = self.lrt, self.pvalue
        if self.family_pvalue is not None:
            frame["family_pvalue"] = self.family_pvalue
        frame["pattern_size_1"], frame["pattern_size_2"] = self.size_first, self.size_second
        return frame


def _row_chunks(m, parts):
    """The rows 0..m-2 cut into ``parts`` interleaved sets of about equal pair counts (row i
    pairs with the m - 1 - i after it): row i goes to set ``i % parts`` in a zig-zag."""
    rows = np.arange(max(m - 1, 0))
    order = np.where((rows // parts) % 2 == 0, rows % parts, parts - 1 - rows % parts)
    return [rows[order == p] for p in range(parts) if (order == p).any()]


def _screen_all(bits, masks, ones, class_n, tlog, method_code, marginal, top, n_jobs, levels=2):
    """The ``top`` pairs of every pair of the features of ``bits``: ``(scores, orders)`` best first."""
    from ..core.engine import map_blocks, threads

    m = bits.shape[0] // (levels - 1)
    jobs = int(n_jobs or threads())
    parts = max(1, min(m - 1, 8 * jobs))

    def one(rows):
        scores = np.empty(top)
        orders = np.empty(top, dtype=np.int64)
        kept = _screen(bits, masks, ones, class_n, tlog, rows, method_code, marginal, top, scores, orders, levels)
        return scores[:kept], orders[:kept]

    found = map_blocks(one, _row_chunks(m, parts), n_jobs=jobs)
    scores = np.concatenate([f[0] for f in found]) if found else np.empty(0)
    orders = np.concatenate([f[1] for f in found]) if found else np.empty(0, dtype=np.int64)
    best = np.lexsort((orders, -scores))[:top]
    return scores[best], orders[best]


@njit(cache=True, nogil=True)
def _class_ones(bits, masks):
    """The samples of each class that carry each feature: ``(m, k)``."""
    m, words = bits.shape
    k = masks.shape[0]
    out = np.zeros((m, k), dtype=np.int64)
    for i in range(m):
        for c in range(k):
            total = 0
            for w in range(words):
                total += _popcount(bits[i, w] & masks[c, w])
            out[i, c] = total
    return out


def unpack_columns(bits, n):
    """The presence (``(n, m)`` bool) of the packed columns ``bits`` (``pack_columns``)."""
    as_bytes = np.ascontiguousarray(bits).view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :n].T.astype(bool)


def _column_blocks(X, y, feature_names, chunk_bytes):
    """``(n, p, names, blocks, y)``: the samples, features, names (or a function giving them) and
    ``(j0, j1, block)`` column blocks of any input ``genosift.score`` takes (``source``), each
    block's rows those scored, and the labels (a store's or AnnData's column named by ``y``
    read). A store and a Dask collection are read a block at a time."""
    from ..core.engine import block_width, column_blocks
    from ..core.validation import as_matrix
    from .source import StoreRows, source

    if isinstance(X, StoreRows):
        data = X.source(y)
    else:  # chunk_bytes sizes the blocks read here, of every form
        data = source(X, y, owner="score_pairs", feature_names=feature_names, labels_required=True)
    if data.form in ("stream", "backed"):
        what = "a stream of row chunks" if data.form == "stream" else "a backed AnnData"
        raise ValueError(f"score_pairs reads whole columns; it cannot read {what}. Pass an array, a sparse matrix, "
                         "a DataFrame, an AnnData in memory, a Dask array or a store (genosift.io.write_store).")
    if data.form == "store":
        from .store import store_column

        store, kept = data.X, data.rows
        labels = store_column(store, data.y) if isinstance(data.y, str) else data.y
        if isinstance(data.y, str) and kept is not None:
            labels = labels[kept]
        n = store.shape[0] if kept is None else len(kept)
        width = block_width(store.shape[0], store.shape[1], chunk_bytes)

        def read():
            for j0, j1, block in store.feature_blocks(width, chunk_bytes=chunk_bytes):
                yield j0, j1, block if kept is None else block[kept]

        return n, store.shape[1], store.names_loader(), read(), labels
    if data.form == "dask":
        n, p = data.X.shape
        width = block_width(n, p, chunk_bytes)

        def computed():
            for j0 in range(0, p, width):
                yield j0, min(j0 + width, p), np.asarray(data.X[:, j0:j0 + width].compute())

        names = list(data.X.columns) if hasattr(data.X, "columns") else None
        return n, p, data.feature_names if data.feature_names is not None else names, computed(), data.y
    M, names = as_matrix(data.X)
    n, p = M.shape
    names = data.feature_names if data.feature_names is not None else names
    return n, p, names, column_blocks(M, block_width(n, p, chunk_bytes), keep_sparse=True), data.y


def _presence_candidates(X, y, candidates, min_af, max_af, feature_names, chunk_bytes=None, bins=None):
    """The candidates as bits, read a block of columns at a time (never the whole matrix):
    ``(bits (m, words) of one feature per distinct presence pattern inside the allele-frequency
    range, their columns in X, the sizes of their patterns, every feature's name, n, p, the
    labels)``. With
    ``bins``, each feature's levels 1 .. bins - 1 (``discretize``'s codes) as ``bins - 1`` rows of
    bits, the features' rows one after another, and a pattern is that of its levels."""
    import scipy.sparse as sp

    from ..core.validation import default_feature_names
    from ..scores import af_tested, check_af

    bounds = check_af(min_af, max_af, "score_pairs")
    n, p, names, blocks, y = _column_blocks(X, y, feature_names, chunk_bytes)
    if feature_names is not None:
        names = np.asarray(feature_names, dtype=object)
        if names.shape != (p,):
            raise ValueError(f"feature_names holds {names.size} names for {p} features: give one name per feature.")
    elif callable(names):
        names = np.asarray(names(), dtype=object)
    else:
        names = default_feature_names(p) if names is None else np.asarray(names, dtype=object)
    wanted = None
    if candidates is not None:
        wanted = np.asarray(candidates)
        if wanted.dtype.kind in "OUS":
            where = {str(name): j for j, name in enumerate(names)}
            missing = [str(c) for c in wanted if str(c) not in where]
            if missing:
                raise ValueError(f"candidates names {len(missing)} feature(s) the data do not have, such as "
                                 f"{missing[:5]}: give names of features (or their column indices).")
            wanted = np.array([where[str(c)] for c in wanted], dtype=np.int64)
        wanted = np.unique(wanted.astype(np.int64))
        if wanted.size and (wanted.min() < 0 or wanted.max() >= p):
            raise ValueError(f"candidates holds column indices outside [0, {p}).")
    parts, kept = [], []
    for j0, j1, block in blocks:
        columns = np.arange(j0, j1)
        if wanted is not None:
            local = wanted[(wanted >= j0) & (wanted < j1)] - j0
            if not local.size:
                continue
            block, columns = block[:, local], columns[local]
        presence = block > 0
        presence = presence.toarray() if sp.issparse(presence) else np.asarray(presence)
        carried = presence.sum(axis=0)
        if bins is None:
            keep = (carried > 0) & (carried < n)  # a constant feature pairs with nothing
        else:
            from ..scores import discretize

            codes = discretize(block.toarray() if sp.issparse(block) else block, bins=bins, max_categories=bins)
            keep = (codes != codes[:1]).any(axis=0)
        if bounds is not None:
            keep &= af_tested(carried / n, bounds)
        if keep.any():
            if bins is None:
                parts.append(pack_columns(presence[:, keep]))
            else:  # levels 1 .. bins - 1 of each feature, one feature after another
                chosen = codes[:, keep]
                levels = chosen[:, :, None] == np.arange(1, bins)[None, None, :]
                parts.append(pack_columns(levels.reshape(n, -1)))
            kept.append(columns[keep])
    words = (n + 63) // 64
    q = 1 if bins is None else bins - 1
    bits = np.concatenate(parts) if parts else np.zeros((0, words), dtype=np.uint64)
    columns = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)
    if not bits.shape[0]:
        return bits, columns, np.zeros(0, dtype=np.int64), names, n, p, y
    by_feature = bits.reshape(columns.size, q * words)
    _, first, inverse = np.unique(by_feature, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # the patterns in the order of their first feature
    sizes = np.bincount(np.ravel(inverse), minlength=first.size)[order].astype(np.int64)
    first = first[order]
    return (np.ascontiguousarray(by_feature[first].reshape(first.size * q, words)), columns[first], sizes, names,
            n, p, y)


def score_pairs(X, y, *, method="mi", top=1000, candidates=None, min_af=None, max_af=None, feature_names=None,
                covariates=None, permutations=0, seed=0, triples=0, bins=None, chunk_bytes=None, n_jobs=None):
    """Screen every pair of features for the classes they explain together; keep the ``top``.

    Parameters
    ----------
    X : array-like (n_samples, n_features), scipy.sparse matrix, DataFrame, AnnData in memory,
        Dask array or DataFrame, a data file, or a store (a ``.gs.h5ad`` path or
        ``genosift.io.Store``)
        Read as presence/absence (a value above 0 is presence), one block of columns at a time
        (within ``chunk_bytes``): memory holds the candidates' bits (``n / 8`` bytes each), not
        the matrix (a store or a Dask collection is never loaded whole).
    y : array-like (n_samples,) or str
        Class labels (two or more classes); for a store or an AnnData also the name of a column
        of its sample table.
    method : {"mi", "jensen_shannon", "wasserstein"}
        The joint score of a pair (see the module's notes); ``"wasserstein"`` of presence/absence.
    top : int
        The pairs kept, by synergy: the joint score less the better of the two features' own.
    candidates : sequence of int or str, optional
        The features to pair (column indices or names); by default all.
    min_af, max_af : float, optional
        Pair only the features carried by a share of the samples in ``[min_af, max_af]``.
    feature_names : sequence of str, optional
    covariates : array-like (n_samples, c), optional
        For two classes: the epistasis test of each kept pair adjusts for them (a logistic fit per
        pair, ``covariate_lrts``). The screen itself is of the pairs' tables.
    permutations : int
        Also score the best pair under that many permutations of the labels (``seed``): each
        kept pair's ``family_pvalue``.
    triples : int
        Also extend each of the ``triples`` best pairs by every other candidate feature: each
        triple's joint mutual information with the classes (its 8 cells), the best of its three
        pairs' and its synergy (the joint less that best pair's); the ``top`` triples by synergy
        are ``PairScores.triples``.
    bins : int, optional
        Levels instead of presence/absence: a feature whose values are at most ``bins`` distinct
        integers keeps them (SNP dosages 0/1/2 with ``bins=3``, small counts), any other is cut
        into ``bins`` equal-frequency bins (genosift's discretisation, as ``chi2`` and ``mi``
        read features: ``genosift.scores.discretize``); each pair's table is then ``bins x bins``
        by class. The epistasis test, covariates and triples are of presence/absence only.
    chunk_bytes : int, optional
        The budget of a block of columns read (default ``genosift.core.engine.CHUNK_BYTES``).
    n_jobs : int, optional
        Threads (default ``genosift.core.engine.threads()``).

    Returns
    -------
    PairScores

    Features with the same presence pattern are screened once (the pair found stands for the
    pairs of their patterns; ``size_first`` and ``size_second`` say how many), a constant
    feature not at all.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(200, 30))
    >>> y = X[:, 4] ^ X[:, 17]  # an XOR: neither feature tells the class alone
    >>> res = score_pairs(X, y, top=3)
    >>> int(res.first[0]), int(res.second[0]), round(float(res.synergy[0]), 2)
    (4, 17, 1.0)
    """
    from scipy import special

    from ..core.validation import as_labels, is_int, param_error

    if method not in METHODS:
        raise param_error("method", "score_pairs", f"one of {list(METHODS)}", method)
    if not is_int(top) or top < 1:
        raise param_error("top", "score_pairs", "an int >= 1", top)
    if not is_int(permutations) or permutations < 0:
        raise param_error("permutations", "score_pairs", "an int >= 0", permutations)
    if bins is not None:
        from ..scores import check_bins

        bins = check_bins("score_pairs", bins, 0)[0]
        given = [name for name, value in (("covariates", covariates), ("triples", triples)) if value]
        if given:
            raise ValueError(f"{' and '.join(given)} work on presence/absence; with bins, leave them out (or leave "
                             "out bins).")
    levels = 2 if bins is None else bins
    if method == "wasserstein" and levels > 2:
        raise ValueError("The wasserstein joint score is of presence/absence pairs; with bins, choose mi or "
                         "jensen_shannon (or leave out bins).")
    bits, columns, sizes, names, n, p, y = _presence_candidates(X, y, candidates, min_af, max_af, feature_names,
                                                                chunk_bytes, bins)
    m = bits.shape[0] // (levels - 1)
    labels = as_labels(y, n)
    classes, codes = np.unique(labels, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"score_pairs compares classes, and y has {classes.size}: give labels of two classes or "
                         "more.")
    k = classes.size
    Z = None
    if covariates is not None:
        from ..scores import check_covariates

        if k != 2:
            raise ValueError("score_pairs adjusts the epistasis test of two classes for covariates; y has "
                             f"{k} classes. Leave out covariates, or give labels of two classes.")
        Z, _ = check_covariates(covariates, n, owner="score_pairs")
    masks = pack_columns(codes[:, None] == np.arange(k)[None, :])
    class_n = np.bincount(codes, minlength=k).astype(np.int64)
    ones = _class_ones(bits, masks)
    tlog = np.array([_xlogx(float(t)) for t in range(n + 1)])
    code = METHODS.index(method)
    marginal = _marginals(ones, class_n, tlog, code, levels)
    scores, orders = _screen_all(bits, masks, ones, class_n, tlog, code, marginal, top, n_jobs, levels)
    first, second = orders // max(m, 1), orders % max(m, 1)
    joint = scores + np.maximum(marginal[first], marginal[second])
    mi = _marginals(ones, class_n, tlog, 0, levels)
    tables = [_mi_of(bits, masks, ones, class_n, tlog, i, j, levels) for i, j in zip(first, second)]
    interaction = np.array(tables, dtype=np.float64) - mi[first] - mi[second]
    lrt = pvalue = None  # the epistasis test: of two presence/absence features, two classes
    if k == 2 and levels == 2 and covariates is not None:
        pair_columns = np.unique(np.r_[first, second])
        presence = unpack_columns(bits[pair_columns], n)
        at = {int(c): q for q, c in enumerate(pair_columns)}
        lrt = covariate_lrts(presence, codes, np.array([at[int(i)] for i in first]),
                             np.array([at[int(j)] for j in second]), Z)
        pvalue = special.chdtrc(1, lrt)
    elif k == 2 and levels == 2:
        lrt = _lrts(bits, masks, ones, class_n, first.astype(np.int64), second.astype(np.int64), _DESIGN)
        pvalue = special.chdtrc(1, lrt)
    family = None
    if permutations:
        rng = np.random.default_rng(seed)
        best = np.empty(permutations)
        for r in range(permutations):
            shuffled = rng.permutation(codes)
            p_masks = pack_columns(shuffled[:, None] == np.arange(k)[None, :])
            p_ones = _class_ones(bits, p_masks)
            p_marginal = _marginals(p_ones, class_n, tlog, code, levels)
            best[r] = _screen_all(bits, p_masks, p_ones, class_n, tlog, code, p_marginal, 1, n_jobs, levels)[0][0]
        family = (1.0 + (best[None, :] >= scores[:, None]).sum(axis=1)) / (1.0 + permutations)
    if not is_int(triples) or triples < 0:
        raise param_error("triples", "score_pairs", "an int >= 0", triples)
    found = None
    if triples:
        found = _triples_frame(bits, masks, ones, class_n, tlog, first[:triples].astype(np.int64),
                               second[:triples].astype(np.int64), top, n_jobs, columns, names, sizes)
    return PairScores(method, n, p, m, m * (m - 1) // 2, classes, columns[first], columns[second],
                      names[columns[first]], names[columns[second]], joint, marginal[first], marginal[second],
                      scores, interaction, lrt, pvalue, sizes[first], sizes[second], family, found)


def _triples_frame(bits, masks, ones, class_n, tlog, first, second, top, n_jobs, columns, names, sizes):
    """The ``top`` triples that extend the pairs ``(first, second)`` (positions) by a third
    candidate, as a table, best first."""
    import pandas as pd

    from ..core.engine import map_blocks, threads

    m = bits.shape[0]
    jobs = int(n_jobs or threads())
    room = 3 * top  # a triple comes back once per pair of it among those extended

    def one(rows):
        scores = np.empty(room)
        orders = np.empty(room, dtype=np.int64)
        kept = _extend_pairs(bits, masks, ones, class_n, tlog, first, second, rows, room, scores, orders)
        return scores[:kept], orders[:kept]

    chunks = np.array_split(np.arange(first.size), max(1, min(first.size, 8 * jobs)))
    found = map_blocks(one, [c for c in chunks if c.size], n_jobs=jobs) if m >= 3 else []
    scores = np.concatenate([s for s, _ in found]) if found else np.empty(0)
    orders = np.concatenate([o for _, o in found]) if found else np.empty(0, dtype=np.int64)
    orders, where = np.unique(orders, return_index=True)
    scores = scores[where]
    best = np.lexsort((orders, -scores))[:top]
    scores, orders = scores[best], orders[best]
    trio = [orders // (m * m), orders // m % m, orders % m]
    joint = np.array([_triple_mi(bits, masks, ones, class_n, tlog, a, b, c) for a, b, c in zip(*trio)])
    frame = pd.DataFrame({"rank": np.arange(1, scores.size + 1), "feature_1": names[columns[trio[0]]],
                          "feature_2": names[columns[trio[1]]], "feature_3": names[columns[trio[2]]],
                          "joint": joint, "best_pair": joint - scores, "synergy": scores})
    for q, x in enumerate(trio, 1):
        frame[f"pattern_size_{q}"] = sizes[x]
    return frame


def _triple_mi(bits, masks, ones, class_n, tlog, a, b, c):
    k = masks.shape[0]
    cells = np.zeros(8 * k, dtype=np.int64)
    _triple_table(bits, int(a), int(b), int(c), masks, ones, k, class_n, cells)
    n = int(class_n.sum())
    return _mi_bits(cells, k, n, _mi_constant(n, class_n, tlog), tlog, 8)


def _mi_of(bits, masks, ones, class_n, tlog, i, j, levels=2):
    k = masks.shape[0]
    cells = np.zeros(levels * levels * k, dtype=np.int64)
    if levels == 2:
        _table(bits, int(i), int(j), masks, ones, k, class_n, cells)
    else:
        _table_levels(bits, int(i), int(j), levels, masks, ones, k, class_n, cells)
    n = int(class_n.sum())
    return _mi_bits(cells, k, n, _mi_constant(n, class_n, tlog), tlog, levels * levels)
