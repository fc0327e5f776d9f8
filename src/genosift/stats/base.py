"""What the mergeable statistics share: Chan's merge, the one-pass kernel, the checks of the
accumulated values, and the shifted base class (see ``genosift.stats``)."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numba
import numpy as np
import scipy.sparse as sp

from ..core import kernels as _kernels
from ..core import sparse_kernels as _sparse_kernels
from ..core.validation import as_matrix, raise_nonfinite, raise_tiny_spread


def chan(n_a, mean_a, m2_a, n_b, mean_b, m2_b):
    """Merge two (count, mean, M2) summaries; counts broadcast against the per-feature arrays."""
    n = n_a + n_b
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(n > 0, n_b / np.where(n > 0, n, 1), 0.0)
        delta = mean_b - mean_a
        mean = mean_a + delta * frac
        m2 = m2_a + m2_b + delta * delta * (n_a * frac)
    return n, mean, m2


def class_codes(y, n_samples):
    if y is None:
        return np.zeros(1, dtype=object), np.zeros(n_samples, dtype=np.intp)
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    return classes, codes.astype(np.intp, copy=False)


def labelled_chunk(X, y, feature_names, *, keep_csc=False):
    """A block of rows as the per-class statistics read it: ``(M, names, classes, codes)``.

    ``M`` is the checked matrix (CSC input stays CSC with ``keep_csc``), ``names`` the given
    ``feature_names`` (else the block's own), ``codes`` index the sorted ``classes``; ``y=None``
    puts every row in one class.
    """
    M, names = as_matrix(X, keep_csc=keep_csc)
    classes, codes = class_codes(y, M.shape[0])
    return M, names if feature_names is None else feature_names, classes, codes


def moments_kernel(M, codes, k, w):
    """Run the one-pass kernel on a checked matrix: ``(count, shift, mean, m2, cross, exact)``.

    ``exact`` is True when a sparse matrix's values were integers summed exactly: its moments are
    then finite and correctly rounded, and need neither ``check_finite`` nor ``check_spread``.
    """
    n, p = M.shape
    count = np.bincount(codes, minlength=k).astype(np.float64)
    fresh = np.empty if sp.issparse(M) else np.zeros  # the sparse kernels write every value
    mean = fresh((k, p))
    m2 = fresh((k, p))
    cross = np.zeros((k, p)) if w.shape[0] else np.zeros((0, 0))
    exact = False
    if sp.issparse(M):
        shift = np.zeros(p)
        # integer counts: two exact sums per (feature, class), else the shifted sums; the same numbers
        threads = numba.get_num_threads()
        if M.format == "csr":
            order, starts = _sparse_kernels.class_order(codes, k)
        exact = not w.shape[0] and _sparse_kernels.integer_values(M.data) and (
            _sparse_kernels.csc_int_cols(M.data, M.indices, M.indptr, codes, count, mean, m2) if M.format == "csc"
            else _sparse_kernels.csr_int_rows(M.data, M.indices, M.indptr, order, starts, count, mean, m2,
                                              *_sparse_kernels.row_blocks(n, p, M.nnz, threads, 16)))
        if not exact:  # shifted sums, the class means about a shift per feature
            base = np.empty((k, p))
            if M.format == "csc":  # class moments only (no weights)
                _sparse_kernels.csc_cols(M.data, M.indices, M.indptr, codes, count, mean, m2, base)
            else:
                _sparse_kernels.csr_rows(M.data, M.indices, M.indptr, order, starts, count, w, mean, m2, base, cross,
                                         *_sparse_kernels.row_blocks(n, p, M.nnz, threads, 8 * _sparse_kernels.N_ACC))
            _sparse_kernels.rebase_means(mean, base, shift)
    else:
        shift = M[0].astype(np.float64)
        inv = _kernels.running_inverse_counts(codes, k)
        if M.flags.c_contiguous:
            tile = int(max(128, min(4096, 8192 // max(k, 1))))
            _kernels.dense_row_major(M, codes, inv, shift, w, mean, m2, cross, tile)
        else:
            _kernels.dense_col_major(M, codes, inv, shift, w, mean, m2, cross)
    return count, shift, mean, m2, cross, bool(exact and count.all())  # an empty class divides 0 by 0


def csr_blocks(k, p, n_acc=_sparse_kernels.N_ACC):
    """``(width, stripes)`` of the kernels that continue CSR sums over a stream of row chunks
    (``csr_int_stored``, ``csr_stored_moments``): blocks of features whose accumulators
    (``width * k * n_acc`` float64) fit in a core's cache, in four runs per thread (each run
    starts with a binary search in every row: more runs cost more than they balance). Any
    value gives the same numbers."""
    width = int(max(256, min(16384, 2**15 // (max(k, 1) * n_acc))))
    return width, int(max(1, min(4 * numba.get_num_threads(), (p + width - 1) // width)))


def check_finite(M, names, *arrays):
    if all(_kernels.all_finite(np.atleast_2d(a)) for a in arrays):  # one pass, no temporaries
        return
    ok = np.ones(M.shape[1], dtype=bool)
    for a in arrays:
        ok &= np.isfinite(a).all(axis=0) if a.ndim == 2 else np.isfinite(a)
    if not ok.all():
        raise_nonfinite(M, np.flatnonzero(~ok), names)


#: Differences below this (about 1.5e-154) square to a subnormal number or to zero in float64.
SQUARABLE = np.sqrt(np.finfo(np.float64).tiny)


def check_spread(M, names, m2):
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
        near = (M.data != 0) & (np.abs(M.data) < 2.0**53 * SQUARABLE)
        cols = np.unique(M.indices[near] if M.format == "csr"
                         else np.repeat(np.arange(M.shape[1]), np.diff(M.indptr))[near])
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
        tiny = (hi > lo) & (hi - lo < SQUARABLE)
        if tiny.any():
            raise_tiny_spread(cols[tiny], names, M.shape[1])


def reshift(mean, shift_from, shift_to):
    """Express means of ``x - shift_from`` as means of ``x - shift_to``."""
    return mean + (shift_from - shift_to)


class Shifted:
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
class PerClass(Shifted):
    """What the per-class statistics share: sorted ``classes``, the ``count`` of samples of each
    (float64) and the per-feature ``shift`` (None for the empty value); subclasses add (k, p) arrays."""

    classes: np.ndarray
    count: np.ndarray
    shift: np.ndarray | None

    @classmethod
    def empty(cls):
        """The identity of ``merge``: no classes, no samples."""
        arrays = [np.zeros((0, 0)) for _ in fields(cls)[3:]]
        return cls(np.empty(0, dtype=object), np.zeros(0), None, *arrays)

    @property
    def n_samples(self):
        return float(self.count.sum())

    def merge(self, other):
        """Combine with the statistics of other rows (classes are matched by label)."""
        done = self._merge_with_empty(other)
        if done is not None:
            return done
        return self._merge_classes(other, np.union1d(self.classes, other.classes))

    def _absorb_with(self, other, update):
        """``absorb``: ``update(where)`` writes ``other`` over this value's arrays, at the rows
        ``where`` of its classes, and the counts are added. An empty side, or a class of ``other``
        this value lacks, is left to ``merge``."""
        done = self._merge_with_empty(other)
        if done is not None:
            return done
        where = np.searchsorted(self.classes, other.classes)
        last = len(self.classes) - 1
        if np.any(where > last) or np.any(self.classes[np.minimum(where, last)] != other.classes):
            return self.merge(other)
        update(where)
        count = self.count.copy()
        count[where] += other.count
        return replace(self, count=count)
