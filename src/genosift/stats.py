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
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import _kernels
from ._validation import _names_list, as_matrix, default_feature_names, raise_nonfinite, raise_tiny_spread


def _chan(n_a, mean_a, m2_a, n_b, mean_b, m2_b):
    """Merge two (count, mean, M2) summaries; counts broadcast against the per-feature arrays."""
    n = n_a + n_b
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(n > 0, n_b / np.where(n > 0, n, 1), 0.0)
        delta = mean_b - mean_a
        mean = mean_a + delta * frac
        m2 = m2_a + m2_b + delta * delta * (n_a * frac)
    return n, mean, m2


def _class_codes(y, n_samples):
    if y is None:
        return np.zeros(1, dtype=object), np.zeros(n_samples, dtype=np.intp)
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    return classes, codes.astype(np.intp, copy=False)


def _moments_kernel(M, codes, k, w):
    """Run the one-pass kernel on a checked matrix: ``(count, shift, mean, m2, cross)``."""
    n, p = M.shape
    count = np.bincount(codes, minlength=k).astype(np.float64)
    mean = np.zeros((k, p))
    m2 = np.zeros((k, p))
    cross = np.zeros((k, p)) if w.shape[0] else np.zeros((0, 0))
    if sp.issparse(M):
        shift = np.zeros(p)
        width = int(max(1024, min(65536, 2**15 // max(k, 1))))
        _kernels.csr_rows(M.data, M.indices, M.indptr, codes, count, w, mean, m2, cross, width)
    else:
        shift = M[0].astype(np.float64)
        inv = _kernels.running_inverse_counts(codes, k)
        if M.flags.c_contiguous:
            tile = int(max(128, min(4096, 8192 // max(k, 1))))
            _kernels.dense_row_major(M, codes, inv, shift, w, mean, m2, cross, tile)
        else:
            _kernels.dense_col_major(M, codes, inv, shift, w, mean, m2, cross)
    return count, shift, mean, m2, cross


def _check_finite(M, names, *arrays):
    ok = np.ones(M.shape[1], dtype=bool)
    for a in arrays:
        ok &= np.isfinite(a).all(axis=0) if a.ndim == 2 else np.isfinite(a)
    if not ok.all():
        raise_nonfinite(M, np.flatnonzero(~ok), names)


#: Differences below this (about 1.5e-154) square to a subnormal number or to zero in float64.
_SQUARABLE = np.sqrt(np.finfo(np.float64).tiny)


def _check_spread(M, names, m2):
    """Raise when a feature's values differ, but by too little to square in float64.

    Its M2 would underflow to zero and the feature would look constant (a NaN or infinite score).
    Only features whose M2 is below the smallest normal number are looked at: the dense columns
    in blocks; of a sparse matrix, only the columns holding a non-zero value below 2**53 times
    that difference (two values closer than it are both that small).
    """
    if M.dtype != np.float64:  # integers differ by at least 1; float32 differences square in float64
        return
    maybe = np.atleast_2d(m2).sum(axis=0) < np.finfo(np.float64).tiny
    if sp.issparse(M):
        near = (M.data != 0) & (np.abs(M.data) < 2.0**53 * _SQUARABLE)
        cols = np.unique(M.indices[near])
        blocks = [cols[maybe[cols]]]
    else:
        cols = np.flatnonzero(maybe)
        blocks = [cols[i:i + 1024] for i in range(0, cols.size, 1024)]
    for cols in blocks:
        if not cols.size:
            continue
        B = M[:, cols]
        if sp.issparse(B):
            lo, hi = (np.asarray(B.min(axis=0).todense()).ravel(), np.asarray(B.max(axis=0).todense()).ravel())
        else:
            lo, hi = B.min(axis=0), B.max(axis=0)
        tiny = (hi > lo) & (hi - lo < _SQUARABLE)
        if tiny.any():
            raise_tiny_spread(cols[tiny], names, M.shape[1])


def _reshift(mean, shift_from, shift_to):
    """Express means of ``x - shift_from`` as means of ``x - shift_to``."""
    return mean + (shift_from - shift_to)


class _Shifted:
    """What the shifted statistics share: their width and the merges with an empty side."""

    @property
    def n_features(self):
        return 0 if self.shift is None else self.shift.shape[0]

    def _merge_with_empty(self, other):
        """The result of ``self.merge(other)`` when either side is empty, else ``None``."""
        if other.shift is None:
            return self
        if self.shift is None:
            return other
        if other.n_features != self.n_features:
            raise ValueError(
                f"Cannot merge statistics of {self.n_features} and {other.n_features} features: "
                "every chunk must have the same columns."
            )
        return None


@dataclass(frozen=True, eq=False)
class ClassMoments(_Shifted):
    """Per-class count, mean and sum of squared deviations (M2) of every feature.

    Attributes
    ----------
    classes : ndarray (k,)
        Sorted class labels (a single placeholder class when built without labels).
    count : ndarray (k,)
        Samples per class, float64.
    shift : ndarray (p,) or None
        The per-feature offset the means are taken about; ``None`` for the empty value.
    mean : ndarray (k, p)
        Class means of ``x - shift``.
    m2 : ndarray (k, p)
        Class sums of squared deviations from the class mean.

    Examples
    --------
    >>> import numpy as np
    >>> from genosift.stats import ClassMoments
    >>> X = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 8.0], [7.0, 8.0]])
    >>> y = np.array(["a", "a", "b", "b"])
    >>> whole = ClassMoments.from_chunk(X, y)
    >>> parts = ClassMoments.from_chunk(X[:3], y[:3]).merge(ClassMoments.from_chunk(X[3:], y[3:]))
    >>> bool(np.allclose(whole.means(), parts.means()) and np.allclose(whole.m2, parts.m2))
    True
    """

    classes: np.ndarray
    count: np.ndarray
    shift: np.ndarray | None
    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def empty(cls):
        """The identity of ``merge``: no classes, no samples."""
        return cls(np.empty(0, dtype=object), np.zeros(0), None, np.zeros((0, 0)), np.zeros((0, 0)))

    @classmethod
    def from_chunk(cls, X, y=None, *, feature_names=None):
        """Statistics of one block of rows. ``y=None`` puts every row in one class."""
        M, names = as_matrix(X)
        names = names if feature_names is None else feature_names
        classes, codes = _class_codes(y, M.shape[0])
        count, shift, mean, m2, _ = _moments_kernel(M, codes, len(classes), np.zeros(0))
        _check_finite(M, names, mean, m2)
        _check_spread(M, names, m2)
        return cls(classes, count, shift, mean, m2)

    @classmethod
    def from_csr_stream(cls, chunks, classes, n_features):
        """Statistics of a stream of CSR row chunks, identical to ``from_chunk`` of all the rows.

        ``chunks`` yields ``(csr_chunk, codes)``, the codes indexing ``classes``. The Welford
        update of the stored entries simply continues from chunk to chunk, and the implicit zeros
        are added once at the end, so the numbers do not depend on where the chunks are cut (a
        merge of per-chunk statistics rounds differently for each cut), and no per-chunk (k, p)
        arrays are made. Returns None, having read only part of the stream, when a chunk needs
        ``from_chunk``'s checks to name a problem (values that are not finite, too large or too
        close together to square, unsorted indices): score the stream that way to get the message.
        """
        k, p = len(classes), int(n_features)
        acc = [np.zeros((k, p)) for _ in range(4)]  # stored count, mean, M2, sum
        count = np.zeros(k)
        width = int(max(1024, min(65536, 2**15 // max(k, 1))))
        for M, codes in chunks:
            data = M.data
            if M.shape[1] != p or not (sp.issparse(M) and M.format == "csr" and M.has_canonical_format):
                return None
            if data.dtype.kind == "f" and not _kernels.plain_values(data, 1e150, 2.0**53 * _SQUARABLE):
                return None
            codes = np.asarray(codes, dtype=np.intp)
            count += np.bincount(codes, minlength=k)
            _kernels.csr_stored_moments(data, M.indices, M.indptr, codes, *acc, width)
        mean, m2 = np.empty((k, p)), np.empty((k, p))
        _kernels.csr_moments_with_zeros(*acc, count, mean, m2)
        if not (np.isfinite(mean).all() and np.isfinite(m2).all()):
            return None
        return cls(np.asarray(classes), count, np.zeros(p), mean, m2)

    @classmethod
    def from_dense_stream(cls, chunks, classes, n_features):
        """Statistics of a stream of dense row chunks, bit for bit ``from_chunk`` of all the rows.

        ``chunks`` yields ``(array_chunk, codes)``. The row-by-row update of ``from_chunk``
        continues from chunk to chunk over the same arrays (the shift is the first row, the
        running class counts carry on), so the numbers do not depend on where the chunks are cut.
        Returns None, having read part of the stream, when a chunk needs ``from_chunk``'s checks
        to name a problem: score the stream that way to get the message.
        """
        k, p = len(classes), int(n_features)
        mean, m2, count = np.zeros((k, p)), np.zeros((k, p)), np.zeros(k)
        shift, nothing = None, np.zeros(0)
        tile = int(max(128, min(4096, 8192 // max(k, 1))))
        for M, codes in chunks:
            M = np.ascontiguousarray(M)
            if M.ndim != 2 or M.shape[1] != p or M.dtype.kind not in "iuf":
                return None
            if M.dtype.kind == "f" and not _kernels.plain_values(M.ravel(), 1e150, 2.0**53 * _SQUARABLE):
                return None
            codes = np.asarray(codes, dtype=np.intp)
            if shift is None:
                if not M.shape[0]:
                    continue
                shift = M[0].astype(np.float64)
            inv = np.empty(codes.shape[0])
            for c in range(k):  # 1 / (rows of the class so far), continued from the chunks before
                rows = np.flatnonzero(codes == c)
                inv[rows] = 1.0 / (count[c] + np.arange(1, rows.size + 1, dtype=np.float64))
                count[c] += rows.size
            _kernels.dense_row_major(M, codes, inv, shift, nothing, mean, m2, np.zeros((0, 0)), tile)
        if shift is None or not (np.isfinite(mean).all() and np.isfinite(m2).all()):
            return None
        return cls(np.asarray(classes), count, shift, mean, m2)

    @property
    def n_samples(self):
        return float(self.count.sum())

    def merge(self, other):
        """Combine with the statistics of other rows (classes are matched by label)."""
        done = self._merge_with_empty(other)
        if done is not None:
            return done
        classes = np.union1d(self.classes, other.classes)
        k, p = len(classes), self.n_features
        rows_a = np.full(k, -1, np.int64)
        rows_b = np.full(k, -1, np.int64)
        rows_a[np.searchsorted(classes, self.classes)] = np.arange(len(self.classes))
        rows_b[np.searchsorted(classes, other.classes)] = np.arange(len(other.classes))
        count = np.zeros(k)
        np.add.at(count, np.searchsorted(classes, self.classes), self.count)
        np.add.at(count, np.searchsorted(classes, other.classes), other.count)
        mean, m2 = np.empty((k, p)), np.empty((k, p))
        _kernels.chan_merge(rows_a, rows_b, self.count, self.mean, self.m2, other.count, other.mean,
                            other.m2, other.shift - self.shift, mean, m2)
        return ClassMoments(classes, count, self.shift, mean, m2)

    def absorb(self, other):
        """``merge``, written over this value's arrays when ``other``'s classes are among its own.

        For an accumulator that owns this value (``engine.accumulate``): a stream of chunks is
        merged without allocating new (k, p) arrays. Other holders of this value must not use
        it afterwards.
        """
        done = self._merge_with_empty(other)
        if done is not None:
            return done
        where = np.searchsorted(self.classes, other.classes)
        if np.any(where >= len(self.classes)) or np.any(self.classes[np.minimum(where, len(self.classes) - 1)] != other.classes):
            return self.merge(other)
        rows_b = np.full(len(self.classes), -1, np.int64)
        rows_b[where] = np.arange(len(other.classes))
        _kernels.chan_merge(np.arange(len(self.classes)), rows_b, self.count, self.mean, self.m2, other.count,
                            other.mean, other.m2, other.shift - self.shift, self.mean, self.m2)
        count = self.count.copy()
        count[where] += other.count
        return ClassMoments(self.classes, count, self.shift, self.mean, self.m2)

    def means(self):
        """Class means in the units of the data, (k, p)."""
        return self.mean + self.shift

    def total(self):
        """Pooled ``(n, mean, m2)`` over all classes; ``mean`` is of ``x - shift``."""
        n, mean, m2 = 0.0, np.zeros(self.n_features), np.zeros(self.n_features)
        for c in range(len(self.classes)):
            n, mean, m2 = _chan(n, mean, m2, self.count[c], self.mean[c], self.m2[c])
        return n, mean, m2

    def between_within(self):
        """Between-class and within-class sums of squares, (p,) each.

        The between-class sum is taken about the first class's mean, so it is exactly zero when
        all class means are equal (a constant feature never gets a spurious spread).
        """
        # one class at a time: a few (p,) temporaries, never (k, p) ones
        with np.errstate(over="ignore", invalid="ignore"):  # spreads beyond 1e154 are +inf
            d_bar = np.zeros(self.n_features)
            for c in range(len(self.classes)):
                d_bar += self.count[c] * (self.mean[c] - self.mean[0])
            d_bar /= self.count.sum()
            between = np.zeros(self.n_features)
            for c in range(len(self.classes)):
                d = self.mean[c] - self.mean[0]
                d -= d_bar
                d *= d
                d *= self.count[c]
                between += d
        within = self.m2.sum(axis=0)
        return between, within


@dataclass(frozen=True, eq=False)
class CoMoments(_Shifted):
    """Count, means, M2 of each feature and of a numeric target, and their co-moment.

    ``c_xy[j] = sum_i (x_ij - mean_x_j) (y_i - mean_y)``; merged with the bivariate Chan update.
    """

    count: float
    shift: np.ndarray | None
    mean_x: np.ndarray
    m2_x: np.ndarray
    mean_y: float
    m2_y: float
    c_xy: np.ndarray

    @classmethod
    def empty(cls):
        return cls(0.0, None, np.zeros(0), np.zeros(0), 0.0, 0.0, np.zeros(0))

    @classmethod
    def from_chunk(cls, X, y, *, feature_names=None, check=True):
        """Statistics of one block of rows; ``y`` numeric, one value per row.

        ``check=False`` skips the checks that every moment is finite and every spread squares
        in float64 (for a summary that tolerates them, such as ``TargetProfile``)."""
        M, names = as_matrix(X)
        names = names if feature_names is None else feature_names
        y = np.asarray(y, dtype=np.float64)
        n = M.shape[0]
        codes = np.zeros(n, dtype=np.intp)
        mean_y = y.mean()
        m2_y = float(((y - mean_y) ** 2).sum())
        if sp.issparse(M):
            w = y - mean_y
            count, shift, mean, m2, cross = _moments_kernel(M, codes, 1, w)
            # sum (x - mean_x) w = sum x w - mean_x sum w, and sum w is ~0 but not exactly
            c_xy = cross[0] - mean[0] * w.sum()
        else:
            w = _kernels.running_residuals(y, codes, 1)
            count, shift, mean, m2, cross = _moments_kernel(M, codes, 1, w)
            c_xy = cross[0]
        if check:
            _check_finite(M, names, mean[0], m2[0], c_xy)
            _check_spread(M, names, m2[0])
        return cls(float(n), shift, mean[0], m2[0], float(mean_y), m2_y, c_xy)

    @property
    def n_samples(self):
        return self.count

    def flip_target(self):
        """The statistics with ``1 - y`` as the target: the co-moment changes sign, exactly."""
        return CoMoments(self.count, self.shift, self.mean_x, self.m2_x, 1.0 - self.mean_y, self.m2_y, -self.c_xy)

    def merge(self, other):
        """Combine with the statistics of other rows (bivariate Chan update)."""
        done = self._merge_with_empty(other)
        if done is not None:
            return done
        na, nb = self.count, other.count
        mean_xb = _reshift(other.mean_x, other.shift, self.shift)
        dx = mean_xb - self.mean_x
        dy = other.mean_y - self.mean_y
        n, mean_x, m2_x = _chan(na, self.mean_x, self.m2_x, nb, mean_xb, other.m2_x)
        _, mean_y, m2_y = _chan(na, self.mean_y, self.m2_y, nb, other.mean_y, other.m2_y)
        c_xy = self.c_xy + other.c_xy + dx * dy * (na * nb / n)
        return CoMoments(n, self.shift, mean_x, m2_x, float(mean_y), float(m2_y), c_xy)


@dataclass(frozen=True, eq=False)
class ClassSums(_Shifted):
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

    classes: np.ndarray
    count: np.ndarray
    shift: np.ndarray | None
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
        M, names = as_matrix(X)
        names = names if feature_names is None else feature_names
        classes, codes = _class_codes(y, M.shape[0])
        k, p = len(classes), M.shape[1]
        if sp.issparse(M):
            shift = np.zeros(p)
            width = int(max(1024, min(65536, 2**15 // (k + 3))))  # tile accumulators in cache
            sums, lo, hi = _kernels.csr_class_sums(M.data, M.indices, M.indptr, codes, k, p, width)
        else:
            shift = M[0].astype(np.float64)
            if M.flags.c_contiguous:
                sums, lo, hi = _kernels.dense_class_sums_row_major(M, codes, k, shift, 4096)
            else:
                sums, lo, hi = _kernels.dense_class_sums_col_major(M, codes, k, shift)
        ok = np.isfinite(sums).all(axis=0) & np.isfinite(lo) & np.isfinite(hi)
        if not ok.all():
            raise_nonfinite(M, np.flatnonzero(~ok), names)
        negative = np.flatnonzero(lo < 0)
        if negative.size:
            names = default_feature_names(p) if names is None else np.asarray(names, dtype=object)
            raise ValueError(
                f"Method 'chi2_counts' needs non-negative counts or frequencies, but feature(s) "
                f"{_names_list(list(names[negative]))} have negative values (smallest "
                f"{lo[negative].min():g}). Use method 'chi2', which discretises any real feature, or "
                "make the values non-negative first."
            )
        return cls(classes, np.bincount(codes, minlength=k).astype(np.float64), shift, sums, lo, hi)

    @property
    def n_samples(self):
        return float(self.count.sum())

    def class_sums(self):
        """Class sums of ``x`` in the units of the data, (k, p)."""
        return self.sums + self.count[:, None] * self.shift

    def merge(self, other):
        """Combine with the statistics of other rows (classes are matched by label)."""
        done = self._merge_with_empty(other)
        if done is not None:
            return done
        classes = np.union1d(self.classes, other.classes)
        count, sums = np.zeros(len(classes)), np.zeros((len(classes), self.n_features))
        at = np.searchsorted(classes, self.classes)
        count[at] += self.count
        sums[at] += self.sums
        at = np.searchsorted(classes, other.classes)
        count[at] += other.count
        # sums of x - other.shift, re-expressed about self.shift
        sums[at] += other.sums + other.count[:, None] * (other.shift - self.shift)
        return ClassSums(classes, count, self.shift, sums, np.minimum(self.minimum, other.minimum),
                         np.maximum(self.maximum, other.maximum))


def _class_positives(M, codes, k):
    """Per-class counts of the values above 0 of every column of a checked matrix, (k, p)."""
    if sp.issparse(M):
        return _kernels.csr_class_positives(M.data, M.indices, M.indptr, codes, k, M.shape[1])
    if M.flags.c_contiguous:
        return _kernels.dense_class_positives_row_major(M, codes, k, 4096)
    return _kernels.dense_class_positives_col_major(M, codes, k)


@dataclass(frozen=True, eq=False)
class ClassProfile(_Shifted):
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

    classes: np.ndarray
    count: np.ndarray
    shift: np.ndarray | None
    sums: np.ndarray
    positive: np.ndarray

    @classmethod
    def empty(cls):
        """The identity of ``merge``: no classes, no samples."""
        return cls(np.empty(0, dtype=object), np.zeros(0), None, np.zeros((0, 0)), np.zeros((0, 0)))

    @classmethod
    def from_chunk(cls, X, y=None, *, feature_names=None):
        """Statistics of one block of rows. ``y=None`` puts every row in one class."""
        M, names = as_matrix(X)
        names = names if feature_names is None else feature_names
        classes, codes = _class_codes(y, M.shape[0])
        k, p = len(classes), M.shape[1]
        if sp.issparse(M):
            shift = np.zeros(p)
            width = int(max(1024, min(65536, 2**15 // (k + 3))))
            sums, _, _ = _kernels.csr_class_sums(M.data, M.indices, M.indptr, codes, k, p, width)
        else:
            shift = M[0].astype(np.float64)
            if M.flags.c_contiguous:
                sums, _, _ = _kernels.dense_class_sums_row_major(M, codes, k, shift, 4096)
            else:
                sums, _, _ = _kernels.dense_class_sums_col_major(M, codes, k, shift)
        if not np.isfinite(sums).all():
            bad = np.flatnonzero(~np.isfinite(sums).all(axis=0))
            values = M[:, bad].toarray() if sp.issparse(M) else M[:, bad]
            if not np.isfinite(values).all():  # NaN or infinity in X, named; else sums beyond float64 (inf means)
                raise_nonfinite(M, bad, names)
        positive = _class_positives(M, codes, k)
        return cls(classes, np.bincount(codes, minlength=k).astype(np.float64), shift, sums, positive)

    @property
    def n_samples(self):
        return float(self.count.sum())

    def means(self):
        """Class means in the units of the data, (k, p): the class sum over the class count, so
        the mean of integer counts (exact sums below 2**53) is the correctly rounded quotient."""
        with np.errstate(over="ignore", invalid="ignore"):
            return (self.sums + self.count[:, None] * self.shift) / self.count[:, None]

    def prevalence(self):
        """Share of each class's samples with x > 0, (k, p)."""
        return self.positive / self.count[:, None]

    def merge(self, other):
        """Combine with the statistics of other rows (classes are matched by label)."""
        done = self._merge_with_empty(other)
        if done is not None:
            return done
        classes = np.union1d(self.classes, other.classes)
        k, p = len(classes), self.n_features
        count, sums, positive = np.zeros(k), np.zeros((k, p)), np.zeros((k, p))
        at = np.searchsorted(classes, self.classes)
        count[at] += self.count
        sums[at] += self.sums
        positive[at] += self.positive
        at = np.searchsorted(classes, other.classes)
        count[at] += other.count
        with np.errstate(over="ignore", invalid="ignore"):  # sums of x - other.shift, about self.shift
            sums[at] += other.sums + other.count[:, None] * (other.shift - self.shift)
        positive[at] += other.positive
        return ClassProfile(classes, count, self.shift, sums, positive)

    def absorb(self, other):
        """``merge``, written over this value's arrays when ``other``'s classes are among its own
        (for an accumulator that owns this value, ``engine.accumulate``: no new (k, p) arrays)."""
        done = self._merge_with_empty(other)
        if done is not None:
            return done
        where = np.searchsorted(self.classes, other.classes)
        if np.any(where >= len(self.classes)) or np.any(self.classes[np.minimum(where, len(self.classes) - 1)]
                                                        != other.classes):
            return self.merge(other)
        with np.errstate(over="ignore", invalid="ignore"):
            self.sums[where] += other.sums + other.count[:, None] * (other.shift - self.shift)
        self.positive[where] += other.positive
        count = self.count.copy()
        count[where] += other.count
        return ClassProfile(self.classes, count, self.shift, self.sums, self.positive)


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
        return cls(moments, _class_positives(M, np.zeros(M.shape[0], np.intp), 1)[0])

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
