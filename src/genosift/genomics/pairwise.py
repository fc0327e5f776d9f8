"""Pairwise comparisons of a gene and a binary trait on a tree (Read & Nee 1995; Maddison 2000),
as Scoary tests them, and their binomial and empirical p-values.

Each tip is ``AB`` (gene present, trait 1), ``aB`` (absent, 1), ``Ab`` (present, 0) or ``ab``
(absent, 0); a tip whose trait is unknown takes no part. A contrasting pair is ``AB`` with ``ab``
(supporting) or ``Ab`` with ``aB`` (opposing). Pairs are independent when their paths on the
tree share no node. On a binary tree that is the same as sharing no branch (Scoary's rule); at a
polytomy at most one pair, or one path still open upwards, passes through the node: conservative
where a resolution of the polytomy could fit more pairs (Scoary resolves it arbitrarily).

For each gene: ``pairs_max``, the most independent contrasting pairs; ``pairs_supporting``, the
most supporting pairs among the sets of that size; ``pairs_opposing``, the most opposing among
them. One dynamic programme over the nodes in post-order, per gene and per objective
(``W * pairs + supporting``, resp. ``+ opposing``, with ``W`` above any count), with five states
per node: a path open up to a tip of each of the four kinds, or none.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..core.distinct import distinct_columns

__all__ = ["binomial_pvalues", "empirical_pvalues", "pairwise_comparisons"]

_JIT = dict(nogil=True, cache=True, error_model="numpy")
_NONE = -(1 << 40)  # a state that cannot be reached


@njit(**_JIT)
def _best_pairs(kind, indptr, kids, w, favour, value):
    """The best ``w * pairs + favoured pairs`` of one gene (``favour``: 0 supporting, 1 opposing).

    ``kind``: per node, the tip's kind 0..3 (``2 * gene + trait``), -1 for a tip without a trait,
    -2 for an inner node. ``value``: scratch ``(nodes, 5)``: states 0..3 a path open to a tip of
    that kind, 4 the best over all (nothing open, or an open path unused)."""
    m = kind.shape[0]
    top1 = np.empty(4, dtype=np.int64)  # per kind: the best gain (open path minus best) and its child
    top2 = np.empty(4, dtype=np.int64)  # (one scratch for all nodes: no allocation per node)
    who = np.empty(4, dtype=np.int64)
    for v in range(m):
        k = kind[v]
        if k != -2:
            for s in range(4):
                value[v, s] = _NONE
            value[v, 4] = 0
            if k >= 0:
                value[v, k] = 0
            continue
        rest = 0  # the children's best, summed
        for c in range(indptr[v], indptr[v + 1]):
            rest += value[kids[c], 4]
        top1[:] = _NONE
        top2[:] = _NONE
        who[:] = -1
        for c in range(indptr[v], indptr[v + 1]):
            u = kids[c]
            for s in range(4):
                g = value[u, s] - value[u, 4]
                if value[u, s] <= _NONE // 2:
                    continue
                if g > top1[s]:
                    top2[s] = top1[s]
                    top1[s] = g
                    who[s] = u
                elif g > top2[s]:
                    top2[s] = g
        best = rest
        for s in range(4):
            value[v, s] = rest + top1[s] if top1[s] > _NONE else _NONE
            if value[v, s] > best:
                best = value[v, s]
        for s in (0, 1):  # pairs of kinds (s, 3 - s): 0-3 supporting, 1-2 opposing
            t = 3 - s
            if top1[s] == _NONE or top1[t] == _NONE:
                continue
            if who[s] != who[t]:
                g = top1[s] + top1[t]
            else:
                g = max(top1[s] + top2[t] if top2[t] > _NONE else _NONE,
                        top2[s] + top1[t] if top2[s] > _NONE else _NONE)
                if g <= _NONE // 2:
                    continue
            gain = w + (1 if s == favour else 0)
            if rest + g + gain > best:
                best = rest + g + gain
        value[v, 4] = best
    return value[m - 1, 4]


@njit(parallel=True, **_JIT)
def _pairs_kernel(gene, trait, tip_node, inner, indptr, kids):
    """``(max, supporting, opposing)`` per gene pattern (rows of ``gene``, 0/1 per tip) against
    ``trait`` per tip (0, 1 or -1 unknown)."""
    g, n = gene.shape
    m = inner.shape[0]
    w = n + 1  # above any count of pairs
    out = np.empty((g, 3), dtype=np.int64)
    for q in prange(g):
        kind = inner.copy()
        for t in range(n):
            kind[tip_node[t]] = 2 * gene[q, t] + trait[t] if trait[t] >= 0 else -1
        value = np.empty((m, 5), dtype=np.int64)
        sup = _best_pairs(kind, indptr, kids, w, 0, value)
        opp = _best_pairs(kind, indptr, kids, w, 1, value)
        out[q, 0] = sup // w
        out[q, 1] = sup % w
        out[q, 2] = opp % w
    return out


class _Layout:
    """A tree restricted to the samples, as the kernels read it."""

    def __init__(self, tree, ids):
        tree = tree.restricted(ids)
        self.indptr, self.kids = tree.children()
        self.inner = np.where(tree.tip >= 0, 0, -2).astype(np.int64)
        tip_nodes = np.flatnonzero(tree.tip >= 0)
        position = {str(name): k for k, name in enumerate(tree.names)}
        order = np.array([position[s] for s in ids], dtype=np.int64)
        self.tip_node = tip_nodes[order]  # the node of each sample, in the samples' order


def _inputs(X, y, tree, sample_ids):
    """The tree's layout on the samples, the distinct gene patterns, each gene's pattern, the trait."""
    ids = [str(s) for s in sample_ids]
    X = X if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2 or X.shape[0] != len(ids):
        raise ValueError(f"X has {X.shape[0] if X.ndim else 0} rows for {len(ids)} sample_ids: give the samples "
                         "in rows, one id per row.")
    if len(set(ids)) != len(ids):
        raise ValueError("The sample_ids name a sample more than once: give each sample once.")
    patterns, inverse = _patterns(X)
    return _Layout(tree, ids), patterns, inverse, _trait(y, len(ids))


def _patterns(X):
    """The distinct gene columns of ``X`` (presence: non-zero) as rows of int64 (one per pattern),
    and each column's pattern; a sparse ``X`` is made dense in its distinct columns only."""
    if sp.issparse(X):
        X = sp.csc_array(X)
        X.eliminate_zeros()
        X.sort_indices()
        X.data = np.ones_like(X.data, dtype=np.uint8)
    else:
        X = (np.asarray(X) != 0).astype(np.uint8)
    found = distinct_columns(X)
    first, inverse = found if found is not None else (np.arange(X.shape[1]), np.arange(X.shape[1]))
    rows = X[:, first]
    rows = rows.toarray() if sp.issparse(rows) else rows
    return np.ascontiguousarray(rows.T, dtype=np.int64), inverse


def _trait(y, n):
    """The trait per sample as 0, 1 or -1 (unknown, NaN)."""
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.size != n:
        raise ValueError(f"The trait has {y.size} values for {n} samples: give one per sample (NaN: unknown).")
    known = ~np.isnan(y)
    if not np.isin(y[known], (0.0, 1.0)).all():
        raise ValueError("The trait must be 0 or 1 (NaN where unknown) for the pairwise comparisons.")
    return np.where(known, y, -1).astype(np.int64)


def binomial_pvalues(k, n):
    """Two-sided binomial test p-values of ``k`` successes in ``n`` trials at 0.5, vectorised:
    ``scipy.stats.binomtest(k, n, 0.5).pvalue`` (to about 1e-15 relative; 1 where ``n`` is 0):
    twice the tail ``P(X <= min(k, n - k))``, the regularised incomplete beta function
    ``I_{1/2}(n - j, j + 1)`` of ``scipy.special.betainc``, without the import of ``scipy.stats``
    (a quarter of a second of every run).

    >>> binomial_pvalues([0, 3, 5], [5, 6, 5]).round(4).tolist()
    [0.0625, 1.0, 0.0625]
    """
    from scipy.special import betainc

    k = np.asarray(k, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    low = np.minimum(k, n - k)
    with np.errstate(invalid="ignore"):  # n = 0: no test, 1 below
        p = 2.0 * betainc(np.maximum(n - low, 1).astype(np.float64), low + 1.0, 0.5)
    return np.where((2 * k == n) | (n == 0), 1.0, np.minimum(1.0, p))


def pairwise_comparisons(X, y, tree, *, sample_ids, scoary_pairs=False):
    """The pairwise comparisons of every gene (columns of ``X``) with the trait ``y`` on ``tree``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix (n_samples, n_genes)
        Presence (non-zero) or absence (0), samples in rows aligned to ``sample_ids``.
    y : array-like (n_samples,)
        The trait, 0 or 1, NaN where unknown (that sample takes no part).
    tree : Tree
        A tree with a tip for every sample (its other tips are left out).
    sample_ids : sequence of str
        The samples' names, as the tree's tips are named.
    scoary_pairs : bool, default False
        Give Scoary's counts of supporting and opposing pairs: at the root it takes the most of each
        over every state of the root, also over states with fewer than ``pairs_max`` pairs, so a
        count can exceed the most among sets of ``pairs_max`` pairs. Binary trees only (nodes of one
        child, and the samples of unknown trait, are passed over).

    Returns
    -------
    pandas.DataFrame
        One row per gene: ``pairs_max``, ``pairs_supporting``, ``pairs_opposing`` and the two-sided
        binomial p-values at 0.5: ``pairwise_p_best`` of ``S`` in ``M`` and ``pairwise_p_worst`` of
        ``M - O`` when ``S >= O``, else ``p(M - O)`` and ``p(S)`` (``S``, ``O``, ``M``: supporting,
        opposing, max); both 1 for a gene without a contrasting pair.

    Notes
    -----
    Each distinct gene column is counted once, by one pass over the tree's nodes per objective
    (``O(nodes)``, in parallel over the patterns): 1,000 samples x 20,000 genes take about 2 s
    on 2 cores.

    Examples
    --------
    >>> from genosift.genomics.trees import Tree
    >>> t = Tree.from_parents([4, 4, 5, 5, 6, 6, -1], ["a", "b", "c", "d"], [0, 1, 2, 3])
    >>> X = np.array([[1, 1], [0, 0], [1, 0], [0, 1]])
    >>> pairwise_comparisons(X, [1, 0, 1, 0], t, sample_ids="abcd").iloc[:, :3].to_numpy().tolist()
    [[2, 2, 0], [2, 1, 1]]
    """
    import pandas as pd

    layout, patterns, inverse, trait = _inputs(X, y, tree, sample_ids)
    if scoary_pairs:
        counts = _scoary_counts(patterns, trait, layout)
    else:
        counts = _pairs_kernel(patterns, trait, layout.tip_node, layout.inner, layout.indptr, layout.kids)
    M, S, O = (counts[inverse, c] for c in range(3))
    first, second = binomial_pvalues(S, M), binomial_pvalues(M - O, M)
    swap = S < O
    return pd.DataFrame({"pairs_max": M, "pairs_supporting": S, "pairs_opposing": O,
                         "pairwise_p_best": np.where(swap, second, first),
                         "pairwise_p_worst": np.where(swap, first, second)})


def _scoary_counts(patterns, trait, layout):
    """``(max, supporting, opposing)`` per pattern by Scoary's states (binary trees), vectorised
    over the patterns: per node and state the lexicographic best ``(pairs, supporting)`` and
    ``(pairs, opposing)``; at the root the most of each over all the states."""
    m = layout.inner.size
    tips = np.full(m, -1, dtype=np.int64)
    tips[layout.tip_node] = np.arange(layout.tip_node.size)
    value = [None] * m  # per node: (3, g, 5) totals, supporting, opposing; -1 unreachable
    for v in range(m):
        kids = layout.kids[layout.indptr[v]:layout.indptr[v + 1]]
        if tips[v] >= 0:
            if trait[tips[v]] >= 0:  # a sample of unknown trait is pruned, as are nodes left without one
                kind = 2 * patterns[:, tips[v]] + trait[tips[v]]
                st = np.where(np.arange(5)[None, :] == kind[:, None], 0, -1)
                value[v] = np.stack([st, st, st])
            continue
        present = [value[k] for k in kids if value[k] is not None]
        if len(present) > 2:
            raise ValueError("scoary_pairs needs a binary tree: Scoary counts pairs on binary trees only.")
        value[v] = present[0] if len(present) == 1 else _scoary_join(*present) if present else None
        for k in kids:
            value[k] = None
    root = value[m - 1]
    return np.stack([root[0].max(1), root[1].max(1), root[2].max(1)], axis=1)


def _scoary_join(L, R):
    """Scoary's states of a node from its children's (``(3, g, 5)`` each): open to kind ``s``
    (0..3) from one child, the other in any state; closed (4) from two closed children or a pair
    across."""
    g = L.shape[1]
    out = np.full((3, g, 5), -1, dtype=np.int64)
    options = {s: [] for s in range(5)}
    for s in range(4):
        for o in range(5):
            options[s].append((L[:, :, s], R[:, :, o], 0))
            if o != s:
                options[s].append((L[:, :, o], R[:, :, s], 0))
    options[4].append((L[:, :, 4], R[:, :, 4], 0))
    for a, b in ((3, 0), (0, 3), (2, 1), (1, 2)):
        options[4].append((L[:, :, a], R[:, :, b], 1 if a in (0, 3) else 2))
    for s, opts in options.items():
        total = np.full(g, -1)
        for a, b, pair in opts:
            ok = (a[0] >= 0) & (b[0] >= 0)
            total = np.maximum(total, np.where(ok, a[0] + b[0] + (pair > 0), -1))
        for c in (1, 2):
            best = np.full(g, -1)
            for a, b, pair in opts:
                ok = (a[0] >= 0) & (b[0] >= 0) & (a[0] + b[0] + (pair > 0) == total)
                best = np.maximum(best, np.where(ok, a[c] + b[c] + (pair == c), -1))
            out[c, :, s] = best
        out[0, :, s] = total
    return out


def empirical_pvalues(X, y, tree, *, sample_ids, permutations=1000, seed=None):
    """Scoary's empirical p-values of the pairwise comparisons: the trait permuted among the samples
    that have one (the genes kept), and the share of permutations whose statistic reaches the
    data's.

    The statistic is ``pairs_supporting / pairs_max`` (or ``pairs_opposing / pairs_max``, where the
    data have more opposing than supporting pairs); ``r`` counts the permutations at or above the
    data's. After permutation ``i`` (from 0), ``i >= 30``, the test stops where
    ``1 - binom.cdf(r, i, 0.1) < 0.05``, with ``(r + 1) / (i + 2)``; else it ends with
    ``(r + 1) / (permutations + 1)``. NaN for a gene without a contrasting pair. The same
    permutations (drawn once, in order) serve every gene; each gene stops at its own.

    Parameters
    ----------
    X, y, tree, sample_ids
        As :func:`pairwise_comparisons` takes them.
    permutations : int, default 1000
        The most permutations per gene (at least 10).
    seed : int or None
        Seeds ``numpy.random.default_rng``: the same seed, the same p-values.

    Returns
    -------
    ndarray (n_genes,)

    Examples
    --------
    >>> from genosift.genomics.trees import Tree
    >>> t = Tree.from_parents([4, 4, 5, 5, 6, 6, -1], ["a", "b", "c", "d"], [0, 1, 2, 3])
    >>> X = np.array([[1, 1], [0, 0], [1, 0], [0, 1]])
    >>> empirical_pvalues(X, [1, 0, 1, 0], t, sample_ids="abcd", permutations=20, seed=1).round(3).tolist()
    [0.429, 0.857]
    """
    if int(permutations) != permutations or permutations < 10:
        raise ValueError(f"The 'permutations' parameter of empirical_pvalues must be an int >= 10. Got "
                         f"{permutations!r} instead.")
    permutations = int(permutations)
    layout, patterns, inverse, trait = _inputs(X, y, tree, sample_ids)
    known = np.flatnonzero(trait >= 0)
    rng = np.random.default_rng(seed)
    shuffled = np.repeat(trait[None, :].astype(np.int8), permutations, axis=0)
    for r in range(permutations):
        shuffled[r, known] = rng.permutation(trait[known])
    p = _empirical_kernel(patterns, trait, shuffled, _stops(permutations), layout.tip_node, layout.inner, layout.indptr,
                          layout.kids)
    return p[inverse]


def _stops(permutations):
    """Per permutation ``i``, the least ``r`` at which the test stops (``1 - P(Binomial(i, 0.1) <= r)
    < 0.05``, from ``i = 30`` on; beyond reach before)."""
    from scipy.special import bdtr

    limit = np.full(permutations, permutations + 2, dtype=np.int64)
    for i in range(30, permutations):
        r = np.arange(i + 1)
        stops = np.flatnonzero(1.0 - bdtr(r, i, 0.1) < 0.05)
        if stops.size:
            limit[i] = stops[0]
    return limit


@njit(parallel=True, **_JIT)
def _empirical_kernel(gene, trait, shuffled, limit, tip_node, inner, indptr, kids):
    """Per pattern, the sequential permutation p-value (stop after permutation ``i`` once ``r``
    reaches ``limit[i]``)."""
    g, n = gene.shape
    m = inner.shape[0]
    w = n + 1  # above any count of pairs
    N = shuffled.shape[0]
    out = np.empty(g)
    for q in prange(g):
        kind = inner.copy()
        value = np.empty((m, 5), dtype=np.int64)
        for t in range(n):
            kind[tip_node[t]] = 2 * gene[q, t] + trait[t] if trait[t] >= 0 else -1
        sup = _best_pairs(kind, indptr, kids, w, 0, value)
        opp = _best_pairs(kind, indptr, kids, w, 1, value)
        total = sup // w
        if total == 0:
            out[q] = np.nan
            continue
        favour = 0 if sup % w >= opp % w else 1
        stat = ((sup if favour == 0 else opp) % w) / total
        r = 0
        out[q] = np.nan
        for i in range(N):
            for t in range(n):
                kind[tip_node[t]] = 2 * gene[q, t] + shuffled[i, t] if shuffled[i, t] >= 0 else -1
            v = _best_pairs(kind, indptr, kids, w, favour, value)
            if v // w > 0 and (v % w) / (v // w) >= stat:
                r += 1
            if r >= limit[i]:
                out[q] = (r + 1.0) / (i + 2.0)
                break
        if np.isnan(out[q]):
            out[q] = (r + 1.0) / (N + 1.0)
    return out
