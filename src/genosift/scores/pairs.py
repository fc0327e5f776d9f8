"""The kernels of the pair screen (``genosift.scoring.pairs``): presence columns as bits, the
joint tables of pairs and triples counted by popcount, their scores, a bounded heap of the best,
and the epistasis test.

Columns are packed 64 samples to a word (``pack_columns``); the count of samples of class c
carrying both features is ``popcount(a_i & a_j & class_c)`` summed over the words, every other
cell of the 2 x 2 x k table following from each feature's class counts (``class_ones``).
Features of more levels (``level_table``) hold one row of bits per level above the first.
The scores (bits for the information measures) are those the screen module's notes define.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["ADDITIVE", "PairCounts", "class_masks", "class_ones", "covariate_lrts", "epistasis_lrt", "extend_pairs",
           "js_bits", "level_table", "marginal_scores", "mi_bits", "mi_constant", "pack_columns", "pair_lrts",
           "pair_table", "pair_tables", "screen_pairs", "triple_table", "unpack_columns", "w1_square", "xlogx"]

_LN2 = np.log(2.0)


class PairCounts(NamedTuple):
    """What the joint tables of pairs and triples are counted from, as the kernels take it (a
    tuple numba reads as it reads each array): the features' presence ``bits`` (``levels - 1``
    rows of bits a feature: levels 1 .. levels - 1, ``level_table``), the classes' ``masks``
    (``class_masks``), each row's count of carriers by class ``ones`` (``class_ones``), the
    classes' sizes ``class_n`` and the features' ``levels``."""

    bits: np.ndarray
    masks: np.ndarray
    ones: np.ndarray
    class_n: np.ndarray
    levels: int = 2


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
def xlogx(t):
    return 0.0 if t <= 0.0 else t * np.log(t)


@njit(cache=True, nogil=True)
def mi_constant(n, class_n, tlog):
    """The part of ``mi_bits`` that is the same for every pair: ``n log n - sum_c n_c log n_c``."""
    classes = 0.0
    for c in range(class_n.size):
        classes += tlog[class_n[c]]
    return n * np.log(n) - classes


@njit(cache=True, nogil=True)
def mi_bits(cells, k, n, constant, tlog, size=4):
    """``I((x_i, x_j); c)`` in bits of a ``size`` x k table of counts (``cells[cell * k + c]``),
    with ``constant`` from ``mi_constant``: ``(constant + sum t log t of the cells by class -
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
def js_bits(cells, k, n, class_n, size):
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
            js += -xlogx(m) + 0.5 * (xlogx(p) + xlogx(q))
        out += class_n[c] / n * js
    return out / np.log(2.0)


@njit(cache=True, nogil=True)
def w1_square(cells, k, n, class_n):
    """Class-share weighted ``W1`` between each class's distribution over the four cells of two
    presence/absence features (``pair_table``'s order) and the whole's, one step between
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
def pair_table(counts, i, j, cells):
    """The 4 x k counts of the pair (i, j) in ``cells``: (1,1), (1,0), (0,1), (0,0) by class."""
    bits, masks, ones, class_n = counts.bits, counts.masks, counts.ones, counts.class_n
    k, words = masks.shape[0], bits.shape[1]
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
def level_table(counts, i, j, cells):
    """The ``levels^2`` x k counts of the pair (i, j) of features of ``counts.levels`` levels in
    ``cells`` (cell ``u * levels + v``: level u of i, level v of j). ``bits`` and ``ones`` hold
    levels 1 .. levels - 1 of feature i at rows ``i * (levels - 1) + u - 1``; level 0 is the rest."""
    bits, masks, ones, class_n, levels = counts.bits, counts.masks, counts.ones, counts.class_n, counts.levels
    k, words = masks.shape[0], bits.shape[1]
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
def screen_pairs(counts, tlog, rows, method, marginal, top, keep_scores, keep_orders):
    """Score every pair (i, j > i) of the features ``rows`` of ``counts`` (a ``PairCounts``) and
    keep the ``top`` by synergy (the joint score less the better marginal one; ties by the earlier
    pair, ``i * m + j``) in a bounded heap (``keep_*``); returns how many are kept. Features of
    more than 2 levels are laid out as ``level_table`` reads them."""
    class_n, levels = counts.class_n, counts.levels
    m = counts.bits.shape[0] // (levels - 1)
    k = counts.masks.shape[0]
    n = 0
    for c in range(k):
        n += class_n[c]
    size = levels * levels
    cells = np.zeros(size * k, dtype=np.int64)
    constant = mi_constant(n, class_n, tlog)
    kept = 0
    for r in range(rows.size):
        i = rows[r]
        for j in range(i + 1, m):
            if levels == 2:
                pair_table(counts, i, j, cells)
            else:
                level_table(counts, i, j, cells)
            if method == 0:
                joint = mi_bits(cells, k, n, constant, tlog, size)
            elif method == 1:
                joint = js_bits(cells, k, n, class_n, size)
            else:
                joint = w1_square(cells, k, n, class_n)
            kept = _keep(keep_scores, keep_orders, kept, top, joint - max(marginal[i], marginal[j]), i * m + j)
    return kept


@njit(cache=True, nogil=True)
def triple_table(counts, i, j, l, cells):
    """The 8 x k counts of the triple (i, j, l) in ``cells``, cells ordered (1,1,1), (1,1,0),
    (1,0,1), (0,1,1), (1,0,0), (0,1,0), (0,0,1), (0,0,0), from the counts of the samples carrying
    all three, each two and each one (inclusion-exclusion)."""
    bits, masks, ones, class_n = counts.bits, counts.masks, counts.ones, counts.class_n
    k, words = masks.shape[0], bits.shape[1]
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
def extend_pairs(counts, tlog, pairs_i, pairs_j, rows, top, keep_scores, keep_orders):
    """Every triple (i, j, l) of a pair (i, j) of ``rows`` (positions in ``pairs_*``) and another
    candidate l of ``counts`` (a ``PairCounts`` of presence), by its synergy over its best pair
    (its MI less the best of its three pairs'); a bounded heap as ``screen_pairs``, ordered by the
    sorted triple (a triple met from two of its pairs is offered twice, with the same score and
    order)."""
    class_n = counts.class_n
    m = counts.bits.shape[0]
    k = counts.masks.shape[0]
    n = 0
    for c in range(k):
        n += class_n[c]
    constant = mi_constant(n, class_n, tlog)
    cells = np.zeros(8 * k, dtype=np.int64)
    kept = 0
    for r in range(rows.size):
        i, j = pairs_i[rows[r]], pairs_j[rows[r]]
        pair_table(counts, i, j, cells)
        pair = mi_bits(cells, k, n, constant, tlog)
        for x in range(m):
            if x == i or x == j:
                continue
            pair_table(counts, i, x, cells)
            best = max(pair, mi_bits(cells, k, n, constant, tlog))
            pair_table(counts, j, x, cells)
            best = max(best, mi_bits(cells, k, n, constant, tlog))
            triple_table(counts, i, j, x, cells)
            joint = mi_bits(cells, k, n, constant, tlog, 8)
            a, b, c = min(i, x), i + j + x - min(i, x) - max(j, x), max(j, x)  # i < j
            kept = _keep(keep_scores, keep_orders, kept, top, joint - best, (a * m + b) * m + c)
    return kept


@njit(cache=True, nogil=True)
def marginal_scores(ones, class_n, tlog, method, levels=2):
    """Each feature's score alone, the same measure over its ``levels`` x k table (``ones``: the
    counts of levels 1 .. levels - 1 by class, as ``level_table`` reads them)."""
    k = ones.shape[1]
    q = levels - 1
    m = ones.shape[0] // q
    n = 0
    for c in range(k):
        n += class_n[c]
    constant = mi_constant(n, class_n, tlog)
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
            out[i] = mi_bits(cells, k, n, constant, tlog, levels)
        elif method == 1:
            out[i] = js_bits(cells, k, n, class_n, levels)
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
            out += xlogx(cases[cell]) + xlogx(n - cases[cell]) - xlogx(n)
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


ADDITIVE = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


@njit(cache=True, nogil=True)
def pair_lrts(counts, pairs_i, pairs_j, design):
    """The epistasis likelihood ratio of each pair (two classes) of ``counts`` (a ``PairCounts``
    of presence): 2 (saturated - additive)."""
    k = counts.masks.shape[0]
    cells = np.zeros(4 * k, dtype=np.int64)
    out = np.empty(pairs_i.size)
    cases = np.empty(4)
    sizes = np.empty(4)  # the samples of each cell
    for r in range(pairs_i.size):
        pair_table(counts, pairs_i[r], pairs_j[r], cells)
        for cell in range(4):
            cases[cell] = cells[cell * k + 1]
            sizes[cell] = cells[cell * k] + cells[cell * k + 1]
        out[r] = max(2.0 * (_cells_ll(cases, sizes) - _additive_ll(cases, sizes, design)), 0.0)
    return out


def class_masks(codes, k):
    """The samples of each of the ``k`` classes (``codes`` in ``[0, k)``) as bits, ``(k, words)``
    (``pack_columns``), and the classes' sizes."""
    codes = np.asarray(codes)
    return pack_columns(codes[:, None] == np.arange(k)[None, :]), np.bincount(codes, minlength=k).astype(np.int64)


def epistasis_lrt(xi, xj, y):
    """The likelihood-ratio statistic and chi2(1) p-value of the product term of two binary
    features in the logistic model of the binary ``y`` (see the module's notes)."""
    from scipy import special

    bits = pack_columns(np.column_stack([np.asarray(xi) > 0, np.asarray(xj) > 0]))
    masks, class_n = class_masks(np.asarray(y).astype(bool).astype(np.intp), 2)
    counts = PairCounts(bits, masks, class_ones(bits, masks), class_n)
    lrt = pair_lrts(counts, np.array([0]), np.array([1]), ADDITIVE)[0]
    return float(lrt), float(special.chdtrc(1, lrt))


def covariate_lrts(presence, y, first, second, covariates):
    """The epistasis test of each pair ``(first[r], second[r])`` of the columns of ``presence``
    given ``covariates``: the likelihood ratio of the product term in the logistic model
    ``logit P(y = 1) = b0 + Z g + b1 x_i + b2 x_j + b3 x_i x_j`` against the model without it
    (genosift's ``logistic`` method on the product with ``Z``, ``x_i`` and ``x_j`` as covariates,
    maximum likelihood); NaN where the product lies in the span of the others, or where the fit
    does not converge or separates (``logistic``'s notes)."""
    from ._base import get_method
    from ._prepare import make_target

    spec = get_method("logistic")
    Z = np.asarray(covariates, dtype=np.float64)
    y = np.asarray(y)
    out = np.full(first.size, np.nan)
    for r, (i, j) in enumerate(zip(first, second)):
        a, b = presence[:, i].astype(np.float64), presence[:, j].astype(np.float64)
        design = np.column_stack([Z, a, b])
        if np.linalg.matrix_rank(np.column_stack([np.ones(a.size), design])) < design.shape[1] + 1:
            continue  # x_i, x_j and the covariates collinear: no product term to test
        target = make_target(spec, y, a.size, design)
        scores = spec.func(np.ascontiguousarray((a * b)[:, None]), target, firth="never")
        out[r] = scores.scores[0] if scores.scores is not None else np.nan
    return out


def pair_tables(X, y, pairs):
    """The 2 x 2 x k table of counts of each pair ``(i, j)`` of the columns of ``X`` (read as
    presence) by the classes of ``y``: an array ``(len(pairs), 4, k)``, cells (1,1), (1,0), (0,1),
    (0,0), classes in sorted order."""
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    masks, class_n = class_masks(codes, classes.size)
    bits = pack_columns(np.asarray(X) > 0)
    counts = PairCounts(bits, masks, class_ones(bits, masks), class_n)
    cells = np.zeros(4 * classes.size, dtype=np.int64)
    out = np.empty((len(pairs), 4, classes.size), dtype=np.int64)
    for r, (i, j) in enumerate(pairs):
        pair_table(counts, int(i), int(j), cells)
        out[r] = cells.reshape(4, classes.size)
    return out


@njit(cache=True, nogil=True)
def class_ones(bits, masks):
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
