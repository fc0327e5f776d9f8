"""Rooted trees with named tips: read from Newick, built by UPGMA from presence/absence, restricted
to the samples of an analysis, written back to Newick.

A :class:`Tree` is a few arrays: its nodes in post-order (children before their parent, the
children of a node in the order the text lists them, the root last), each node's parent, and
which nodes are tips. Polytomies and nodes of one child are allowed; no recursion walks it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from .structure import newick_clades

__all__ = ["Tree", "read_tree", "upgma_tree", "write_newick"]

_JIT = dict(nogil=True, cache=True, error_model="numpy")


@dataclass(frozen=True, eq=False)
class Tree:
    """A rooted tree with named tips.

    Attributes
    ----------
    names : ndarray of str
        The tips' names, in the order the tips come in post-order (tip ``t`` is ``names[t]``).
    parent : ndarray of int64
        Each node's parent (the nodes in post-order: a parent comes after its children); ``-1``
        for the root, the last node.
    tip : ndarray of int64
        For each node, the number of its tip (an index into ``names``), or ``-1`` for an inner node.

    Examples
    --------
    >>> t = Tree.from_parents([4, 3, 3, 4, -1], ["A", "B", "C"], [0, 1, 2])
    >>> t.n_tips, t.n_nodes, t.clades() == {frozenset("BC"), frozenset("ABC")}
    (3, 5, True)
    """

    names: np.ndarray
    parent: np.ndarray
    tip: np.ndarray

    @classmethod
    def from_parents(cls, parent, tip_names, tip_nodes):
        """The tree of nodes ``0..m-1`` whose parents are ``parent`` (``-1``: the root), in any
        order, tips ``tip_names`` at nodes ``tip_nodes``; renumbered in post-order, the children of a
        node kept in the order of their numbers."""
        parent = np.asarray(parent, dtype=np.int64)
        m = parent.size
        roots = np.flatnonzero(parent < 0)
        if roots.size != 1:
            raise ValueError(f"A tree has one root; these parents give {roots.size}.")
        order = np.argsort(parent, kind="stable")  # the children of each node, in their order
        start = np.searchsorted(parent[order], np.arange(m + 2) - 1)
        pre, stack = [], [int(roots[0])]
        while stack:  # pre-order of the mirrored tree; reversed, the post-order of this one
            v = stack.pop()
            pre.append(v)
            stack.extend(order[start[v + 1]:start[v + 2]].tolist())
        if len(pre) != m:
            raise ValueError("A tree's parents must join every node to the root, without cycles.")
        post = np.array(pre[::-1], dtype=np.int64)
        rank = np.empty(m, dtype=np.int64)
        rank[post] = np.arange(m)
        new_parent = np.where(parent[post] < 0, -1, rank[np.maximum(parent[post], 0)])
        tips = np.full(m, -1, dtype=np.int64)
        tips[rank[np.asarray(tip_nodes, dtype=np.int64)]] = 1
        tip_rank = np.flatnonzero(tips > 0)
        by_node = np.empty(m, dtype=object)
        by_node[rank[np.asarray(tip_nodes, dtype=np.int64)]] = np.asarray(tip_names, dtype=object)
        tips[tip_rank] = np.arange(tip_rank.size)
        return cls(np.array(by_node[tip_rank].tolist(), dtype=str), new_parent, tips)

    @property
    def n_tips(self):
        """The number of tips."""
        return int(self.names.size)

    @property
    def n_nodes(self):
        """The number of nodes, tips included."""
        return int(self.parent.size)

    def children(self):
        """The children of every node as a CSR: ``(indptr, indices)``, node ``v``'s children
        ``indices[indptr[v]:indptr[v + 1]]`` in their order."""
        p = self.parent[:-1]
        order = np.argsort(p, kind="stable")
        indptr = np.searchsorted(p[order], np.arange(self.n_nodes + 1))
        return indptr.astype(np.int64), order.astype(np.int64)

    def clades(self):
        """The set of clades of the inner nodes, each a ``frozenset`` of tip names (to compare
        topologies)."""
        below = [None] * self.n_nodes
        out = set()
        for v in range(self.n_nodes):
            if self.tip[v] >= 0:
                below[v] = frozenset([str(self.names[self.tip[v]])])
            else:
                out.add(below[v])
            p = self.parent[v]
            if p >= 0:
                below[p] = below[v] if below[p] is None else below[p] | below[v]
        return out

    def restricted(self, sample_ids):
        """The tree on the tips ``sample_ids`` only: the other tips, and inner nodes left without a
        tip, removed (a node left with one child is kept). A name without a tip is an error.

        >>> t = Tree.from_parents([4, 3, 3, 4, -1], ["A", "B", "C"], [0, 1, 2])
        >>> t.restricted(["C", "A"]).clades() == {frozenset("AC"), frozenset("C")}
        True
        """
        wanted = [str(n) for n in sample_ids]
        known = set(self.names.tolist())
        missing = [n for n in wanted if n not in known]
        if missing:
            raise ValueError(f"{len(missing)} sample(s) have no tip in the tree, e.g. {missing[:5]}: give a tree "
                             "with a tip for every sample analysed (or leave those samples out).")
        keep_tip = np.isin(self.names, wanted)
        alive = np.zeros(self.n_nodes, dtype=bool)
        alive[self.tip >= 0] = keep_tip[self.tip[self.tip >= 0]]
        for v in range(self.n_nodes - 1):  # post-order: a node's children are settled before it
            if alive[v]:
                alive[self.parent[v]] = True
        nodes = np.flatnonzero(alive)
        rank = np.full(self.n_nodes, -1, dtype=np.int64)
        rank[nodes] = np.arange(nodes.size)
        parent = np.where(self.parent[nodes] < 0, -1, rank[np.maximum(self.parent[nodes], 0)])
        tip = self.tip[nodes]
        kept = tip >= 0
        new_tip = np.full(nodes.size, -1, dtype=np.int64)
        new_tip[kept] = np.arange(int(kept.sum()))
        return Tree(self.names[tip[kept]], parent.astype(np.int64), new_tip)

    def newick(self):
        """The tree as Newick text (no branch lengths); names that need it are quoted."""
        text = [None] * self.n_nodes
        kids = [[] for _ in range(self.n_nodes)]
        for v in range(self.n_nodes):
            text[v] = _quoted(str(self.names[self.tip[v]])) if self.tip[v] >= 0 else "(" + ",".join(kids[v]) + ")"
            kids[v] = None
            if self.parent[v] >= 0:
                kids[self.parent[v]].append(text[v])
        return text[-1] + ";"


def _quoted(name):
    """A Newick label: as it is when it holds no character Newick reserves, else in single quotes.
    A name holding a single quote is refused: Newick doubles it inside quotes, which Biopython
    before 1.84 reads as another name."""
    if "'" in name:
        raise ValueError(f"The sample name {name!r} holds a single quote, which a Newick file cannot keep for "
                         "every reader: rename the sample without it.")
    if name and not any(c in name for c in " \t\n()[]:;,"):
        return name
    return "'" + name + "'"


def read_tree(path, *, fh=None):
    """A :class:`Tree` from a Newick file (possibly compressed; quoted names lose their quotes).

    Every leaf must be named, once; branch lengths, if any, are ignored.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.nwk"
    >>> _ = f.write_text("(('Isolate_1', 'Isolate_2'), Isolate_3);")
    >>> read_tree(f).names.tolist()
    ['Isolate_1', 'Isolate_2', 'Isolate_3']
    """
    clades, parents = newick_clades(path, fh=fh)
    leaves = [k for k, c in enumerate(clades) if not c.clades]
    return Tree.from_parents(parents, [clades[k].name for k in leaves], leaves)


def write_newick(tree, path, *, force=True):
    """Write ``tree`` as Newick text to ``path``, whole or not at all.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.nwk"
    >>> write_newick(Tree.from_parents([2, 2, -1], ["A", "B c"], [0, 1]), f)
    >>> f.read_text()
    "(A,'B c');\\n"
    """
    from ..core.files import write_text

    write_text(path, tree.newick() + "\n", force=force)


def upgma_tree(X, sample_ids):
    """The UPGMA tree of the samples (rows of ``X``, 0/1, dense or sparse; tips named
    ``sample_ids``) on their Hamming distances, as Scoary builds it.

    Only the genes that vary among the samples count; the distance of two samples is the share of
    those genes on which they differ. At each step the two nearest clusters join, the new one
    taking the place of the first, with children (first, second); its distance to another cluster
    is the mean of its members' (``(d_ik n_i + d_jk n_j) / (n_i + n_j)``, float64). Ties go to the
    pair first in Z-order (the Morton order of (row, column), the row's bit before the column's at
    each level: a quad tree's search from the top), which decides the topology of data with equal
    distances as Scoary's does. Scoary's distance matrix also holds 1.0 on its diagonal and in the
    rows of clusters joined away; these would take part only in a step where no two clusters are
    nearer than 1.0 (they differ on every varying gene), which is not replicated.

    Time ``O(n^2 p)`` for the distances (one matrix product) and ``O(n^3)`` for the joins; memory
    ``O(n^2)``: 1,000 samples x 20,000 genes take about half a second.

    Examples
    --------
    >>> X = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 1], [0, 1, 1]])
    >>> upgma_tree(X, ["a", "b", "c", "d"]).newick()
    '((a,b),(c,d));'
    """
    names = [str(n) for n in sample_ids]
    X = X if sp.issparse(X) else np.asarray(X)
    n = X.shape[0]
    if len(names) != n or n < 2:
        raise ValueError(f"upgma_tree needs at least 2 samples and one id per row of X; got {n} rows and "
                         f"{len(names)} sample_ids.")
    if len(set(names)) != n:
        raise ValueError("The sample_ids of upgma_tree name a sample more than once: give each sample once.")
    if sp.issparse(X):
        X = sp.csc_array(X, dtype=np.float32)
        X.data = (X.data != 0).astype(np.float32)
        counts = np.asarray(X.sum(axis=0)).ravel()
        X = X[:, np.flatnonzero((counts > 0) & (counts < n))]
        inner = np.asarray((X @ X.T).todense(), dtype=np.float64)
    else:
        X = (np.asarray(X) != 0)
        counts = X.sum(axis=0)
        X = X[:, (counts > 0) & (counts < n)].astype(np.float32)  # counts < 2^24: exact in float32
        inner = (X @ X.T).astype(np.float64)
    varying = X.shape[1]
    if varying == 0:
        raise ValueError("The samples carry the same genes: no gene varies among them, so they have no distance "
                         "to build a tree from; give a tree instead.")
    own = np.diag(inner).copy()
    D = (own[:, None] + own[None, :] - 2.0 * inner) / varying
    merges = _upgma(D, _spread(n))
    kids = {}
    at = list(range(n))  # the node that holds each position's cluster
    for k in range(n - 1):
        i, j = merges[k]
        kids[n + k] = (at[i], at[j])
        at[i] = n + k
    parent, tip_nodes, stack = [], [], [(2 * n - 2, -1)]  # numbered in pre-order: children in their order
    while stack:
        v, up = stack.pop()
        parent.append(up)
        if v < n:
            tip_nodes.append((len(parent) - 1, v))
        else:
            stack.extend((c, len(parent) - 1) for c in reversed(kids[v]))
    nodes, tips = zip(*tip_nodes)
    return Tree.from_parents(parent, [names[t] for t in tips], nodes)


def _spread(n):
    """The bits of ``0..n-1`` spread to the even positions (bit ``b`` to bit ``2b``)."""
    out = np.zeros(n, dtype=np.uint64)
    values = np.arange(n, dtype=np.uint64)
    for b in range(32):
        out |= ((values >> np.uint64(b)) & np.uint64(1)) << np.uint64(2 * b)
    return out


@njit(**_JIT)
def _upgma(D, spread):
    """The joins of UPGMA on ``D`` (overwritten): row ``k``, the positions ``(i, j)``, ``i < j``,
    joined at step ``k`` into ``i``; ties to the first in Z-order of (i, j)."""
    n = D.shape[0]
    alive = np.ones(n, dtype=np.bool_)
    size = np.ones(n)
    merges = np.empty((n - 1, 2), dtype=np.int64)
    for step in range(n - 1):
        best = np.inf
        code = np.uint64(0)
        bi = bj = -1
        for i in range(n):
            if not alive[i]:
                continue
            row = spread[i] << np.uint64(1)
            for j in range(i + 1, n):
                if alive[j]:
                    d = D[i, j]
                    if d < best or (d == best and (row | spread[j]) < code):
                        best = d
                        code = row | spread[j]
                        bi = i
                        bj = j
        merges[step, 0] = bi
        merges[step, 1] = bj
        si = size[bi]
        sj = size[bj]
        total = si + sj
        for k in range(n):
            if alive[k] and k != bi and k != bj:
                d = (D[bi, k] * si + D[bj, k] * sj) / total
                D[bi, k] = d
                D[k, bi] = d
        alive[bj] = False
        size[bi] = total
    return merges
