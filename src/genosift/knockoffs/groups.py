"""Groups of features for group knockoffs: the distinct patterns, and the blocks of patterns
correlated beyond a threshold.

Knockoffs cannot tell apart features that carry the same information: two identical columns (the
k-mers of one gene, present in exactly the same genomes) leave no room for a copy that differs
from one and resembles the other, and features correlated near 1 leave little (a small S, and
little power). So identical columns are one pattern, and patterns are grouped: average-linkage
hierarchical clustering of the patterns on the distance ``1 - |r|`` (``r`` their Pearson
correlation), cut at ``1 - threshold``, so that within a group the patterns' correlations
average at least ``threshold`` in absolute value. The knockoff filter then asks of each group
whether it matters given all the others (Dai & Barber 2016): a clonal genome's linked genes are
selected, or not, together.
"""
from __future__ import annotations

import numpy as np

__all__ = ["correlation_groups"]


def correlation_groups(X, *, threshold=0.5):
    """The group (0..G-1, in the order of each group's first column) of each column of the dense
    (n, p) ``X``: average-linkage clusters of ``1 - |r|`` cut at ``1 - threshold``."""
    X = np.asarray(X, dtype=np.float64)
    p = X.shape[1]
    if p < 2:
        return np.zeros(p, dtype=np.int64)
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    R = np.corrcoef(X, rowvar=False)
    distance = np.clip(1.0 - np.abs(R), 0.0, 2.0)
    np.fill_diagonal(distance, 0.0)
    tree = linkage(squareform((distance + distance.T) / 2.0, checks=False), method="average")
    clusters = fcluster(tree, t=1.0 - threshold, criterion="distance")
    _, first, labels = np.unique(clusters, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    return order[labels.ravel()].astype(np.int64)
