"""The elastic net's features read from a store, in bounded memory.

``StoreDesign`` gives ``genosift.enet.path.fit_path`` what it asks of the features without
holding them: each gradient check is one pass over the store's row chunks (``X^T R`` for the
residuals of several penalties at once), the working set's columns are read by
``Store.read_columns``, and the samples of a cross-validation fold are a subset of the rows
(the others get a residual of zero). Memory: one chunk (the store's budget), the gradients of
every feature for one batch of penalties, and the working set. Each distinct pattern (the
representative ``first`` feature of ``genosift.count_patterns``) is one column.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..stats.base import chan
from .kernels import add_transposed_product, row_moments
from .path import squared_deviations, value_range

__all__ = ["StoreDesign"]


class StoreDesign:
    """The columns ``first`` of the store rows ``data`` (a ``sources.StoreRows`` of increasing
    rows, read within its budget), each standing for ``copies`` features, standardised on those
    rows as ``MemoryDesign`` does. ``spare``: the features of largest gradient added to the
    working set for the penalties of a batch after the first (fewer passes for a few more columns
    in memory)."""

    #: Penalties fitted on the working set before one pass checks them all.
    batch = 8

    def __init__(self, data, first, copies, spare=256):
        self.data = data
        self.store = store = data.store
        self.spare = int(spare)
        self.first = np.asarray(first, dtype=np.int64)
        self.copies = np.asarray(copies, dtype=np.float64)
        self.ridge = 1.0 / self.copies
        self.chunk_bytes = data.chunk_bytes
        N = store.shape[0]
        self.samples = None if data.rows.size == N else data.rows  # increasing: all of them are every row
        self.n = N if self.samples is None else self.samples.size
        self._keep = np.ones(N, dtype=bool)
        if self.samples is not None:
            self._keep[:] = False
            self._keep[self.samples] = True
        self.mean, m2, low, high = self._moments()
        self.usable = low < high
        self.scale = np.where(self.usable, np.sqrt(m2 / self.n), 0.0)
        self.inverse_scale = np.where(self.usable, 1.0 / np.where(self.usable, self.scale, 1.0), 0.0)
        self.passes = 1

    @property
    def n_columns(self):
        return self.first.size

    def rows(self, index):
        """The design of these of its rows (positions among its own rows)."""
        index = np.sort(np.asarray(index, dtype=np.int64))
        return type(self)(self.data[index], self.first, self.copies, self.spare)

    def _chunks(self):
        """``(a, b, chunk)``: the store's consecutive row chunks, as CSR or arrays."""
        a = 0
        for chunk in self.store.row_chunks(chunk_bytes=self.chunk_bytes):
            b = a + chunk.shape[0]
            yield a, b, chunk
            a = b

    def _moments(self):
        """The mean, the sum of squared deviations, the smallest and the largest value of each
        column on the rows, chunk by chunk (merged by Chan's update: no cancellation)."""
        p = self.store.shape[1]
        count, mean, m2 = 0.0, np.zeros(p), np.zeros(p)
        low, high = np.full(p, np.inf), np.full(p, -np.inf)
        for a, b, chunk in self._chunks():
            keep = self._keep[a:b]
            if not keep.any():
                continue
            if sp.issparse(chunk):
                k, m, s, lo, hi = row_moments(chunk.indptr, chunk.indices, chunk.data, keep, p)
            else:
                part = np.asarray(chunk, dtype=np.float64)[keep]
                k, m = part.shape[0], part.mean(axis=0)
                s, (lo, hi) = squared_deviations(part, m), value_range(part)
            count, mean, m2 = chan(count, mean, m2, float(k), m, s)
            low, high = np.minimum(low, lo), np.maximum(high, hi)
        f = self.first
        return mean[f], m2[f], low[f], high[f]

    def gradients(self, R):
        """``X~^T R / n`` of the standardised columns: one pass over the store."""
        R = np.asarray(R, dtype=np.float64).reshape(self.n, -1)
        full = np.zeros((self._keep.size, R.shape[1]))
        full[self._keep] = R
        G = np.zeros((R.shape[1], self.store.shape[1]))
        for a, b, chunk in self._chunks():
            if not self._keep[a:b].any():
                continue
            if sp.issparse(chunk):
                add_transposed_product(chunk.indptr, chunk.indices, chunk.data, full[a:b], G)
            else:
                G += (np.asarray(chunk, dtype=np.float64).T @ full[a:b]).T
        self.passes += 1
        G = G[:, self.first].T - np.outer(self.mean, R.sum(axis=0))
        return G * (self.inverse_scale / self.n)[:, None]

    def _read(self, index, rows):
        block = self.store.read_columns(self.first[index], rows=rows, chunk_bytes=self.chunk_bytes)
        return block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)

    def columns(self, index):
        """The standardised columns ``index``, one row each: (len(index), n)."""
        index = np.asarray(index, dtype=np.int64)
        block = self._read(index, self.samples)
        return np.ascontiguousarray(((block - self.mean[index]) * self.inverse_scale[index]).T)

    def dot(self, B, rows=None):
        """``X[rows] @ B`` for the (p, L) sparse ``B``, reading only the columns ``B`` uses."""
        B = sp.csr_matrix(B)
        used = np.flatnonzero(np.diff(B.indptr))
        where = self.samples if rows is None else (np.asarray(rows) if self.samples is None else self.samples[rows])
        n = self.n if where is None else len(where)
        if not used.size:
            return np.zeros((n, B.shape[1]))
        order = np.argsort(where) if where is not None else None
        block = self._read(used, None if where is None else np.sort(where))
        out = block @ B[used].toarray()
        if order is not None:
            back = np.empty_like(order)
            back[order] = np.arange(order.size)
            out = out[back]
        return out
