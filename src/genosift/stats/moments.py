"""Per-class moments (``ClassMoments``) and moments with a numeric target (``CoMoments``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..core import kernels as _kernels
from ..core import sparse_kernels as _sparse_kernels
from ..core.sparse_columns import column_counts
from ..core.validation import as_matrix
from .base import (
    SQUARABLE,
    PerClass,
    Shifted,
    chan,
    check_finite,
    check_spread,
    csr_blocks,
    labelled_chunk,
    moments_kernel,
    reshift,
)


@dataclass(frozen=True, eq=False)
class ClassMoments(PerClass):
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

    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def from_chunk(cls, X, y=None, *, feature_names=None):
        """Statistics of one block of rows. ``y=None`` puts every row in one class."""
        M, names, classes, codes = labelled_chunk(X, y, feature_names, keep_csc=True)
        count, shift, mean, m2, _, exact = moments_kernel(M, codes, len(classes), np.zeros(0))
        if not exact:  # exact integer sums are finite and keep every spread
            check_finite(M, names, mean, m2)
            check_spread(M, names, m2)
        return cls(classes, count, shift, mean, m2)

    @classmethod
    def from_csr_stream(cls, chunks, classes, n_features):
        """Statistics of a stream of CSR row chunks, identical to ``from_chunk`` of all the rows.

        ``chunks`` yields ``(csr_chunk, codes)``, the codes indexing ``classes``. The sums over
        the stored entries (exact integer sums for integer values, as ``from_chunk`` takes them)
        simply continue from chunk to chunk, row after row, and the implicit zeros
        are added once at the end, so the numbers do not depend on where the chunks are cut (a
        merge of per-chunk statistics rounds differently for each cut), and no per-chunk (k, p)
        arrays are made. Returns None, having read only part of the stream, when a chunk needs
        ``from_chunk``'s checks to name a problem (values that are not finite, too large or too
        close together to square, unsorted indices), or when integer values give way to others or
        outgrow exact sums (``from_chunk`` would then use the shifted sums): score the stream that
        way to get the message or the numbers.
        """
        k, p = len(classes), int(n_features)
        acc = np.zeros((p, k, 2))  # integer sums per (feature, class) while the values are integers
        count = np.zeros(k)
        for M, codes in chunks:
            data = M.data
            if M.shape[1] != p or not (sp.issparse(M) and M.format == "csr" and M.has_canonical_format):
                return None
            if data.dtype.kind == "f" and not _kernels.plain_values(data, 1e150, 2.0**53 * SQUARABLE):
                return None
            codes = np.asarray(codes, dtype=np.intp)
            if acc.shape[2] == 2 and not _sparse_kernels.csr_int_stored(data, M.indices, M.indptr, codes, acc,
                                                                  *csr_blocks(k, p, 2)):
                if count.any():  # integers so far, not in this chunk: from_chunk would use the shifted sums
                    return None
                acc = np.zeros((p, k, _sparse_kernels.N_ACC))  # the first chunk: shifted sums from the start
            if acc.shape[2] != 2:
                _sparse_kernels.csr_stored_moments(data, M.indices, M.indptr, codes, acc, *csr_blocks(k, p))
            count += np.bincount(codes, minlength=k)
        mean, m2, shift = np.empty((k, p)), np.empty((k, p)), np.zeros(p)
        if acc.shape[2] == 2:
            if not _sparse_kernels.csr_int_with_zeros(acc, count, mean, m2):
                return None  # sums too large to be exact: from_chunk uses the shifted sums
        else:
            base = np.empty((k, p))
            _sparse_kernels.csr_moments_with_zeros(acc, count, mean, m2, base)
            _sparse_kernels.rebase_means(mean, base, shift)
        if not (np.isfinite(mean).all() and np.isfinite(m2).all()):
            return None
        return cls(np.asarray(classes), count, shift, mean, m2)

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
            if M.dtype.kind == "f" and not _kernels.plain_values(M.ravel(), 1e150, 2.0**53 * SQUARABLE):
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

    def _merge_classes(self, other, classes):
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
        def update(where):
            rows_b = np.full(len(self.classes), -1, np.int64)
            rows_b[where] = np.arange(len(other.classes))
            _kernels.chan_merge(np.arange(len(self.classes)), rows_b, self.count, self.mean, self.m2, other.count,
                                other.mean, other.m2, other.shift - self.shift, self.mean, self.m2)

        return self._absorb_with(other, update)

    def means(self):
        """Class means in the units of the data, (k, p)."""
        return self.mean + self.shift

    def total(self):
        """Pooled ``(n, mean, m2)`` over all classes; ``mean`` is of ``x - shift``."""
        n, mean, m2 = 0.0, np.zeros(self.n_features), np.zeros(self.n_features)
        for c in range(len(self.classes)):
            n, mean, m2 = chan(n, mean, m2, self.count[c], self.mean[c], self.m2[c])
        return n, mean, m2

    def between_within(self):
        """Between-class and within-class sums of squares, (p,) each.

        The between-class sum is taken about the first class's mean, so it is exactly zero when
        all class means are equal (a constant feature never gets a spurious spread).
        """
        between, within = np.empty(self.n_features), np.empty(self.n_features)
        _kernels.between_within(self.count, self.count.sum(), self.mean, self.m2, between, within)
        return between, within


def _cross_about_shift(M, w, shift, mean, cols):
    """``sum_i (x_ij - mean_x_j) w_i`` of the sparse ``M``'s features ``cols``, as
    ``sum_i (x_ij - shift_j) w_i - (mean_x_j - shift_j) sum w`` (``mean``: of ``x - shift``), the
    first sum over the stored entries plus ``-shift_j`` times the weights of the others: no term
    is of the size of the offset, so nothing cancels."""
    C = (M if cols.size == M.shape[1] else M[:, cols]).tocsc()
    C.sort_indices()
    s = shift[cols]
    where = np.repeat(np.arange(cols.size), np.diff(C.indptr))
    stored = np.bincount(where, weights=(C.data - s[where]) * w[C.indices], minlength=cols.size)
    return stored - s * _sparse_kernels.unstored_sums(C.indptr, C.indices, w) - mean[cols] * w.sum()


@dataclass(frozen=True, eq=False)
class CoMoments(Shifted):
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
            count, shift, mean, m2, cross, _ = moments_kernel(M, codes, 1, w)
            # sum (x - mean_x) w = sum x w - mean_x sum w, and sum w is ~0 but not exactly
            c_xy = cross[0] - (mean[0] + shift) * w.sum()
            # features whose values sit far from 0 (1e6 + 0.1 k, stored in most rows): sum x w cancels;
            # taken about the shift
            offset = np.flatnonzero(np.abs(shift) > 64 * np.sqrt(m2[0] / max(n, 1)))
            if offset.size:
                stored = np.diff(M.indptr) if M.format == "csc" else column_counts(M.indices, M.shape[1])
                offset = offset[2 * stored[offset] >= n]
            if offset.size:
                c_xy[offset] = _cross_about_shift(M, w, shift, mean[0], offset)
        else:
            w = _kernels.running_residuals(y, codes, 1)
            count, shift, mean, m2, cross, _ = moments_kernel(M, codes, 1, w)
            c_xy = cross[0]
        if check:
            check_finite(M, names, mean[0], m2[0], c_xy)
            check_spread(M, names, m2[0])
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
        mean_xb = reshift(other.mean_x, other.shift, self.shift)
        dx = mean_xb - self.mean_x
        dy = other.mean_y - self.mean_y
        n, mean_x, m2_x = chan(na, self.mean_x, self.m2_x, nb, mean_xb, other.m2_x)
        _, mean_y, m2_y = chan(na, self.mean_y, self.m2_y, nb, other.mean_y, other.m2_y)
        c_xy = self.c_xy + other.c_xy + dx * dy * (na * nb / n)
        return CoMoments(n, self.shift, mean_x, m2_x, float(mean_y), float(m2_y), c_xy)
