"""Distinct patterns: the features that hold the same values in the same samples, counted once.

K-mers carried by exactly the same genomes share one presence/absence pattern, and a test of one
of them is a test of all: the number of distinct patterns among the features tested, not the
number of features, is the number of independent tests a genome-wide threshold divides the
significance level by (pyseer's count of patterns and its Bonferroni threshold ``alpha /
patterns``). ``genosift.count_patterns`` finds them in one pass over any input ``genosift.score``
takes, through the one dispatch (``sources.Source.patterns``): the non-zero entries of every column are hashed
(``core.distinct.EntryHashes``: two independent 64-bit hashes, so row chunks and feature blocks
give the same key), and columns with equal keys form a pattern.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..core.distinct import EntryHashes

__all__ = ["PatternPass", "Patterns", "hash_columns", "hash_rows", "nullable", "pattern_ids",
           "patterns_of"]


@dataclass(frozen=True, eq=False)
class Patterns:
    """The distinct patterns of the features tested.

    Attributes
    ----------
    ids : ndarray of int64 (p,)
        Each feature's pattern, numbered 0, 1, ... in the order of the first feature of each
        (so pattern 0 is that of the first feature tested); -1 for a feature not tested.
    af : ndarray (p,)
        The share of the samples carrying each feature (a value above 0).
    tested : ndarray of bool (p,)
        The features inside the allele-frequency range (all without one).
    n_samples : int
    feature_names : ndarray (p,) or None
    """

    ids: np.ndarray
    af: np.ndarray
    tested: np.ndarray
    n_samples: int
    feature_names: object = None

    def __repr__(self):
        return (f"Patterns(n_samples={self.n_samples}, n_features={self.n_features}, n_tested={self.n_tested}, "
                f"n_patterns={self.n_patterns})")

    @property
    def n_features(self):
        return self.ids.size

    @property
    def n_tested(self):
        return int(self.tested.sum())

    @property
    def n_patterns(self):
        return int(self.ids.max()) + 1 if self.ids.size and self.ids.max() >= 0 else 0

    @cached_property
    def sizes(self):
        """The number of features of each pattern, (n_patterns,)."""
        return np.bincount(self.ids[self.ids >= 0], minlength=self.n_patterns)

    @property
    def first(self):
        """The first feature of each pattern (its representative), (n_patterns,)."""
        out = np.full(self.n_patterns, -1, dtype=np.int64)
        tested = np.flatnonzero(self.ids >= 0)
        out[self.ids[tested[::-1]]] = tested[::-1]  # the last write of each pattern is its first feature
        return out

    def threshold(self, alpha=0.05):
        """The Bonferroni threshold over the patterns: ``alpha / n_patterns`` (pyseer's)."""
        if not 0 < alpha < 1:
            raise ValueError(f"alpha is a significance level in (0, 1); got {alpha!r}.")
        return alpha / self.n_patterns if self.n_patterns else float("nan")

    def to_frame(self):
        """One row per feature: ``feature``, ``pattern`` (empty where not tested), ``af``."""
        import pandas as pd

        from ..core.validation import default_feature_names

        names = default_feature_names(self.n_features) if self.feature_names is None else self.feature_names
        return pd.DataFrame({"feature": np.asarray(names, dtype=object), "pattern": nullable(self.ids),
                             "af": self.af})


def nullable(values):
    """Non-negative integers as a pandas ``Int64`` array, empty (NA) where negative."""
    import pandas as pd

    values = np.asarray(values)
    return pd.arrays.IntegerArray(np.where(values >= 0, values, 0).astype(np.int64), values < 0)


def pattern_ids(keys, tested=None):
    """The pattern of each column from its (p, 2) ``EntryHashes`` key: numbered in the order of
    each pattern's first column, -1 where ``tested`` (a mask) is False."""
    p = keys.shape[0]
    ids = np.full(p, -1, dtype=np.int64)
    where = np.arange(p) if tested is None else np.flatnonzero(tested)
    if not where.size:
        return ids
    k = keys[where]
    order = np.argsort(k[:, 0])  # equal first hashes side by side
    ranked = k[order]
    if (ranked[1:, 0] == ranked[:-1, 0]).any() and (ranked[1:, 1] != ranked[:-1, 1])[
            ranked[1:, 0] == ranked[:-1, 0]].any():  # equal first hashes, different second ones: sort both
        order = np.lexsort((k[:, 1], k[:, 0]))
        ranked = k[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    first = np.minimum.reduceat(order, starts)  # each pattern's first column
    number = np.empty(starts.size, dtype=np.int64)
    number[np.argsort(first, kind="stable")] = np.arange(starts.size)  # numbered by first appearance
    ids[where[order]] = number[np.cumsum(new) - 1]
    return ids


def _finite(values, what):
    if not np.isfinite(values).all():
        raise ValueError(f"NaN or infinity in {what}: patterns are defined on finite values. Impute or drop "
                         "the missing values first (see the NaN policy of genosift.score).")


def hash_rows(chunks, p=None, what="the data"):
    """``EntryHashes`` of ``p`` columns (None: as many as the first chunk has) over
    ``(X_chunk, ...)`` row chunks, rows numbered from 0, and the number of rows."""
    hashes, n = None if p is None else EntryHashes(p), 0
    for chunk, *_ in chunks:
        if hashes is None:
            hashes = EntryHashes(chunk.shape[1])
        elif chunk.shape[1] != hashes.count.size:
            raise ValueError(f"A chunk of rows has {chunk.shape[1]} features, the first had {hashes.count.size}: "
                             "every chunk must hold the same features.")
        _finite(chunk.data if sp.issparse(chunk) else np.asarray(chunk), what)
        hashes.rows(chunk, n)
        n += chunk.shape[0]
    if hashes is None:
        raise ValueError("The chunk stream was empty: no rows to count patterns on.")
    return hashes, n


def hash_columns(blocks, p, what="the data"):
    """``EntryHashes`` of ``p`` columns over ``(j0, j1, block)`` blocks of whole columns, on the
    engine's threads (each block writes its own columns)."""
    from ..core.engine import map_blocks

    hashes = EntryHashes(p)

    def one(item):
        j0, _, block = item
        _finite(block.data if sp.issparse(block) else np.asarray(block), what)
        hashes.columns(block, j0)

    map_blocks(one, blocks)
    return hashes


def patterns_of(hashes, n, bounds=None, feature_names=None):
    """The ``Patterns`` from the hashes of ``n`` rows, tested inside the allele-frequency ``bounds``."""
    from ..scores import af_tested

    af = hashes.positive / float(n) if n else np.full(hashes.positive.size, np.nan)
    tested = np.ones(af.size, dtype=bool) if bounds is None else af_tested(af, bounds)
    return Patterns(pattern_ids(hashes.keys(), tested), af, tested, n, feature_names)


class PatternPass:
    """The patterns of a store's features, found from what its scoring pass reads (a rider of
    ``scoring.store.store_scores``): the row chunks or the blocks of whole columns, whichever the
    pass reads, as scored (presence/absence where the store is read so). ``result()`` gives the
    ``Patterns`` of the features inside the allele-frequency ``bounds``; None if no pass ran here
    (a Dask scheduler's workers scored the store)."""

    def __init__(self, bounds=None):
        self.bounds, self.hashes = bounds, None

    @property
    def began(self):
        return self.hashes is not None

    def begin(self, y, m, p, names):
        self.m, self.p, self.hashes = m, p, EntryHashes(p)

    def rides_rows(self, store):
        return True

    def rides_blocks(self, store):
        return True

    def rows(self, pairs):
        """``pairs`` as they are, their entries hashed on the way; a pass that starts again starts
        the hashes again."""
        self.hashes, done = EntryHashes(self.p), 0
        for chunk, target in pairs:
            self.hashes.rows(chunk, done, canonical=True)  # a store's, checked as it was read
            done += chunk.shape[0]
            yield chunk, target

    def block(self, j0, j1, block):
        """The whole columns ``j0:j1`` (blocks write disjoint columns: any thread)."""
        self.hashes.columns(block, j0, canonical=True)

    def result(self):
        return None if self.hashes is None else patterns_of(self.hashes, self.m, self.bounds)
