"""Mergeable sufficient statistics.

Each statistic is a small frozen value with ``from_chunk(X, y)``, ``merge(other)`` and an
``empty()`` identity. Merging is associative (Chan et al. 1979 / Pebay 2008 pairwise updates,
never ``E[x^2] - E[x]^2``), so one in-memory array, a stream of row chunks, a thread pool and a
Dask tree reduction all go through the same code.

Means are stored for ``x - shift``, with a per-feature ``shift`` taken from the data (the first
row of the first dense chunk; zero for sparse input). Shifting keeps the accumulation exact for
features with a large constant offset (the NIST StRD SmLs07-09 case, values near 1e12 that differ
in the 13th digit).
"""
from .moments import ClassMoments, CoMoments
from .sums import ClassProfile, ClassSums, TargetProfile, class_positives

__all__ = ["ClassMoments", "ClassProfile", "ClassSums", "CoMoments", "TargetProfile", "class_positives"]

# pickles (saved models, Dask tasks) name the classes by this public path, as before the split
for _cls in (ClassMoments, ClassProfile, ClassSums, CoMoments, TargetProfile):
    _cls.__module__ = __name__
del _cls
