"""Per-class sums: contingency sums (``ClassSums``) and class profiles (``ClassProfile``,
``TargetProfile``): means and prevalence, merged exactly."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..core import kernels as _kernels
from ..core.engine import map_blocks
from ..core.validation import as_matrix, default_feature_names, names_list, raise_nonfinite
from .base import PerClass, labelled_chunk
from .moments import CoMoments


def _class_sums(M, codes, k):
    """Per-class sums of ``x - shift`` of a checked matrix, and each column's minimum and maximum:
    ``(shift, sums, minimum, maximum)``; the shift is the first row (zero for sparse input)."""
    p = M.shape[1]
    if sp.issparse(M) and M.format == "csc":
        return (np.zeros(p), *_kernels.csc_class_sums(M.data, M.indices, M.indptr, codes, k, p)[:3])
    if sp.issparse(M):
        width = int(max(1024, min(65536, 2**15 // (k + 3))))  # tile accumulators in cache
        return (np.zeros(p), *_kernels.csr_class_sums(M.data, M.indices, M.indptr, codes, k, p, width))
    shift = M[0].astype(np.float64)
    if M.flags.c_contiguous:
        return (shift, *_kernels.dense_class_sums_row_major(M, codes, k, shift, 4096))
    return (shift, *_kernels.dense_class_sums_col_major(M, codes, k, shift))


@dataclass(frozen=True, eq=False)
class ClassSums(PerClass):
    """Per-class sums of every feature, with each feature's minimum and maximum.

    The sufficient statistic of ``chi2_counts``. Features must be non-negative (counts or
    frequencies): ``from_chunk`` raises, naming them, otherwise. Sums are accumulated directly in
    float64 (exact for integer counts below 2**53), of ``x - shift`` with the per-feature
    ``shift`` of ``genosift.stats.ClassMoments`` (the first row of the first dense chunk, zero for
    sparse input): ``O_c - E_c = T_c - (n_c / n) sum_c T_c`` is then free of cancellation for
    features with a large common offset, whatever the chunking.

    Attributes
    ----------
    classes : ndarray (k,)   sorted class labels
    count : ndarray (k,)     samples per class, float64
    shift : ndarray (p,) or None   None for the empty value
    sums : ndarray (k, p)    class sums of ``x - shift``
    minimum, maximum : ndarray (p,) or None

    Examples
    --------
    >>> import numpy as np
    >>> from genosift.stats import ClassSums
    >>> X = np.array([[1, 0], [3, 2], [0, 5], [2, 5]])
    >>> s = ClassSums.from_chunk(X[:3], [0, 0, 1]).merge(ClassSums.from_chunk(X[3:], [1]))
    >>> s.class_sums().tolist(), s.minimum.tolist()
    ([[4.0, 2.0], [2.0, 10.0]], [0.0, 0.0])
    """

    sums: np.ndarray
    minimum: np.ndarray | None
    maximum: np.ndarray | None

    @classmethod
    def empty(cls):
        """The identity of ``merge``: no classes, no samples."""
        return cls(np.empty(0, dtype=object), np.zeros(0), None, np.zeros((0, 0)), None, None)

    @classmethod
    def from_chunk(cls, X, y=None, *, feature_names=None):
        """Statistics of one block of rows. ``y=None`` puts every row in one class."""
        M, names, classes, codes = labelled_chunk(X, y, feature_names, keep_csc=True)
        k = len(classes)
        shift, sums, lo, hi = _class_sums(M, codes, k)
        finite = np.isfinite(lo) & np.isfinite(hi) & ~np.isnan(sums).any(axis=0)
        if not finite.all():  # NaN or infinite values
            raise_nonfinite(M, np.flatnonzero(~finite), names)
        overflow = np.flatnonzero(~np.isfinite(sums).all(axis=0))
        if overflow.size:
            names = default_feature_names(M.shape[1]) if names is None else np.asarray(names, dtype=object)
            raise ValueError(
                f"X has values too large to add up in float64 in feature(s) {names_list(list(names[overflow]))}: "
                f"their class sums pass 1.8e308 (largest value {np.abs(hi[overflow]).max():g}, {M.shape[0]} "
                "samples). Divide those features by a constant before scoring.")
        negative = np.flatnonzero(lo < 0)
        if negative.size:
            names = default_feature_names(M.shape[1]) if names is None else np.asarray(names, dtype=object)
            raise ValueError(
                f"Method 'chi2_counts' needs non-negative counts or frequencies, but feature(s) "
                f"{names_list(list(names[negative]))} have negative values (smallest "
                f"{lo[negative].min():g}). Use method 'chi2', which discretises any real feature, or "
                "make the values non-negative first."
            )
        return cls(classes, np.bincount(codes, minlength=k).astype(np.float64), shift, sums, lo, hi)

    def class_sums(self):
        """Class sums of ``x`` in the units of the data, (k, p)."""
        return self.sums + self.count[:, None] * self.shift

    def _merge_classes(self, other, classes):
        count = _by_class(classes, (self.classes, self.count), (other.classes, other.count))
        sums = _by_class(classes, (self.classes, self.sums), (other.classes, _rebased_sums(self, other)))
        return ClassSums(classes, count, self.shift, sums, np.minimum(self.minimum, other.minimum),
                         np.maximum(self.maximum, other.maximum))


def _by_class(classes, *parts):
    """Per-class arrays added under the sorted labels ``classes``: each part is ``(labels, values)``."""
    out = np.zeros((len(classes),) + parts[0][1].shape[1:])
    for labels, values in parts:
        out[np.searchsorted(classes, labels)] += values
    return out


def _rebased_sums(own, other):
    """``other``'s class sums of ``x - other.shift`` re-expressed about ``own.shift``."""
    with np.errstate(over="ignore", invalid="ignore"):  # sums beyond float64 stay infinite
        return other.sums + other.count[:, None] * (other.shift - own.shift)


def class_positives(M, codes, k):
    """Per-class counts of the values above 0 of every column of a checked matrix, (k, p).

    ``M``: a 2-D array, or a CSR or CSC matrix without duplicate entries; ``codes``: the class
    (0 to k - 1) of each row. NaN is not above 0. Compiled passes, no temporary copies of ``M``."""
    if M.dtype == np.longdouble:  # a type the kernels do not take: its signs are what is counted
        M = type(M)((M.data > 0, M.indices, M.indptr), shape=M.shape) if sp.issparse(M) else M > 0
    if sp.issparse(M) and M.format == "csc":
        return _kernels.csc_class_positives(M.data, M.indices, M.indptr, codes, k, M.shape[1])
    if sp.issparse(M):
        return _csr_class_positives(M, codes, k)
    if M.flags.c_contiguous:
        return _kernels.dense_class_positives_row_major(M, codes, k, 4096)
    return _kernels.dense_class_positives_col_major(M, codes, k)


def _csr_class_positives(M, codes, k):
    """``class_positives`` of a CSR matrix: tiles of columns whose counts stay in cache, on the
    engine's threads (each row's entries of a tile found by binary search), where its indices
    are sorted; else one pass over the entries."""
    p = M.shape[1]
    searched = M.has_sorted_indices
    width = int(max(1024, min(65536, 2**15 // max(k, 1)))) if searched else max(p, 1)

    def tile(j0):
        out = np.zeros((k, min(width, p - j0)))
        _kernels.csr_class_positives(M.data, M.indices, M.indptr, codes, out, j0, searched and width < p)
        return out

    if p <= width:  # one tile: no threads
        return tile(0)
    return np.concatenate(map_blocks(tile, range(0, p, width)), axis=1)


@dataclass(frozen=True, eq=False)
class ClassProfile(PerClass):
    """Per-class count, sum and number of positive values (x > 0) of every feature.

    What the ranking tables show beside the scores: the mean of each feature in each class and
    its prevalence, the share of the class's samples with x > 0. Sums are of ``x - shift`` (the
    shift of ``ClassMoments``: the first row of the first dense chunk, zero for sparse input), so
    a large common offset does not cost digits; any real values are accepted.

    Attributes
    ----------
    classes : ndarray (k,)   sorted class labels (one placeholder class without labels)
    count : ndarray (k,)     samples per class, float64
    shift : ndarray (p,) or None   None for the empty value
    sums : ndarray (k, p)    class sums of ``x - shift``
    positive : ndarray (k, p)   samples of each class with x > 0, float64

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 2.0], [3, 0], [1, 5], [0, 5]])
    >>> y = np.array(["a", "a", "b", "b"])
    >>> s = ClassProfile.from_chunk(X[:3], y[:3]).merge(ClassProfile.from_chunk(X[3:], y[3:]))
    >>> s.means().tolist(), s.prevalence().tolist()
    ([[1.5, 1.0], [0.5, 5.0]], [[0.5, 0.5], [0.5, 1.0]])
    """

    sums: np.ndarray
    positive: np.ndarray

    @classmethod
    def from_chunk(cls, X, y=None, *, feature_names=None):
        """Statistics of one block of rows. ``y=None`` puts every row in one class."""
        M, names, classes, codes = labelled_chunk(X, y, feature_names, keep_csc=True)
        k = len(classes)
        positive = None
        if sp.issparse(M) and M.format == "csc":  # one pass for the sums and the positives
            sums, _, _, positive = _kernels.csc_class_sums(M.data, M.indices, M.indptr, codes, k, M.shape[1])
            shift = np.zeros(M.shape[1])
        else:
            shift, sums, _, _ = _class_sums(M, codes, k)
        if not np.isfinite(sums).all():
            bad = np.flatnonzero(~np.isfinite(sums).all(axis=0))
            values = M[:, bad].toarray() if sp.issparse(M) else M[:, bad]
            if not np.isfinite(values).all():  # NaN or infinity in X, named; else sums beyond float64 (inf means)
                raise_nonfinite(M, bad, names)
        positive = class_positives(M, codes, k) if positive is None else positive
        return cls(classes, np.bincount(codes, minlength=k).astype(np.float64), shift, sums, positive)

    def means(self):
        """Class means in the units of the data, (k, p): the class sum over the class count, so
        the mean of integer counts (exact sums below 2**53) is the correctly rounded quotient."""
        with np.errstate(over="ignore", invalid="ignore"):
            return (self.sums + self.count[:, None] * self.shift) / self.count[:, None]

    def prevalence(self):
        """Share of each class's samples with x > 0, (k, p)."""
        return self.positive / self.count[:, None]

    def _merge_classes(self, other, classes):
        count = _by_class(classes, (self.classes, self.count), (other.classes, other.count))
        sums = _by_class(classes, (self.classes, self.sums), (other.classes, _rebased_sums(self, other)))
        positive = _by_class(classes, (self.classes, self.positive), (other.classes, other.positive))
        return ClassProfile(classes, count, self.shift, sums, positive)

    def absorb(self, other):
        """``merge``, written over this value's arrays when ``other``'s classes are among its own
        (for an accumulator that owns this value, ``engine.accumulate``: no new (k, p) arrays)."""
        def update(where):
            self.sums[where] += _rebased_sums(self, other)
            self.positive[where] += other.positive

        return self._absorb_with(other, update)


@dataclass(frozen=True, eq=False)
class TargetProfile:
    """Co-moments of every feature with a numeric target, and the number of positive values.

    The profile of a regression target: the mean of each feature, its prevalence (share of
    samples with x > 0) and the sign of its Pearson correlation with the target. The co-moments
    are ``CoMoments`` taken without their range checks (a summary, not a score).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 4.0], [1, 3], [2, 2], [3, 0]])
    >>> t = TargetProfile.from_chunk(X[:2], [1.0, 2]).merge(TargetProfile.from_chunk(X[2:], [3.0, 4]))
    >>> t.means().tolist(), t.prevalence().tolist(), t.correlation_sign().tolist()
    ([1.5, 2.25], [0.75, 0.75], [1.0, -1.0])
    """

    moments: CoMoments
    positive: np.ndarray | None

    @classmethod
    def empty(cls):
        return cls(CoMoments.empty(), None)

    @classmethod
    def from_chunk(cls, X, y, *, feature_names=None):
        M, names = as_matrix(X)
        names = names if feature_names is None else feature_names
        moments = CoMoments.from_chunk(M, y, feature_names=names, check=False)
        if not np.isfinite(moments.mean_x).all():
            bad = np.flatnonzero(~np.isfinite(moments.mean_x))
            values = M[:, bad].toarray() if sp.issparse(M) else M[:, bad]
            if not np.isfinite(values).all():
                raise_nonfinite(M, bad, names)
        return cls(moments, class_positives(M, np.zeros(M.shape[0], np.intp), 1)[0])

    @property
    def n_samples(self):
        return self.moments.count

    @property
    def n_features(self):
        return self.moments.n_features

    def merge(self, other):
        if other.positive is None:
            return self
        if self.positive is None:
            return other
        return TargetProfile(self.moments.merge(other.moments), self.positive + other.positive)

    def means(self):
        """The mean of every feature, (p,)."""
        return self.moments.mean_x + self.moments.shift

    def prevalence(self):
        """The share of samples with x > 0, (p,)."""
        return self.positive / self.moments.count

    def correlation_sign(self):
        """The sign of each feature's Pearson correlation with the target: 1, -1 or 0 (uncorrelated
        to the last bit); NaN for a constant feature or target, whose correlation is undefined."""
        m = self.moments
        sign = np.sign(m.c_xy).astype(np.float64)
        return np.where((m.m2_x > 0) & (m.m2_y > 0), sign, np.nan)
