"""Reading a store by features: feature blocks and chosen columns, from the column copy of a sparse
store, by rows when it has none, or from the dense array."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...core.engine import block_width, check_budget
from ...core.sparse_check import check_sparse_structure
from ...core.validation import param_error
from .lookup import find_names
from .read import FileReader, gather
from .write import index_dtype

__all__ = ["ColumnReads"]

#: A sparse store without its column copy gathers its feature blocks in passes over its rows, each
#: holding at least 1 / GATHER_PASSES of the matrix, up to GATHER_BYTES: at most about
#: GATHER_PASSES passes for any budget below that, not one pass over every row per feature.
GATHER_PASSES, GATHER_BYTES = 16, 16 << 20


class ColumnReads:
    """The feature-wise reads of a ``Store`` (which this class is a base of)."""

    def feature_blocks(self, width=None, *, chunk_bytes=None, entry_bytes=None):
        """Yield ``(j0, j1, block)``: every sample of the features ``j0 <= j < j1``, in order.

        Parameters
        ----------
        width : int, optional
            Features per block. By default, as many as make one dense float64 block of all samples
            fit ``chunk_bytes`` (the width in-memory scoring uses for that budget).
        chunk_bytes : int, optional
            The budget (default ``CHUNK_BYTES``).
        entry_bytes : int, optional
            For a sparse store with its column copy: cut the blocks by their stored entries
            instead, each holding at most ``chunk_bytes`` at ``entry_bytes`` per entry (what one
            entry costs its reader in memory) and at most ``width`` features, and at least one
            feature: blocks of rare k-mers are wide, blocks of common ones narrow.

        Yields
        ------
        (int, int, scipy.sparse.csc_matrix or ndarray)
            CSC blocks of a sparse store (in the stored dtype, rows sorted), ndarray blocks of a
            dense one.

        Notes
        -----
        A sparse store without its column copy is read by rows: one pass counts the entries of
        each column, then each further pass gathers as many blocks as ``chunk_bytes`` holds.
        """
        budget = check_budget(chunk_bytes, "Store.feature_blocks")
        self.check_budget(budget, "Store.feature_blocks")
        n, p = self.shape
        if width is None:
            width = block_width(n, p, budget)
        elif isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
            raise param_error("width", "Store.feature_blocks", "a positive int or None", width)
        # at most about ROW_CHUNKS blocks for any budget: a block holds at least ``floored`` bytes
        least, stored = self.floored(0), self.nnz * self.entry_bytes
        width = max(int(width), -(-p * least // stored) if stored else 1)
        budget = max(budget, least)
        reader = FileReader(self)
        try:
            if not self.sparse:
                for j0 in range(0, p, width):
                    j1 = min(p, j0 + width)
                    yield j0, j1, self._dense(reader.h5["X"][:, j0:j1])
            elif self.has_column_copy:
                colptr = self._column_pointers(reader)
                if entry_bytes is None:
                    bounds = range(0, p + width, width)
                else:
                    bounds = _by_entries(colptr, width, max(1, budget // max(1, int(entry_bytes))))
                for j0, j1 in zip(bounds, bounds[1:]):
                    j0, j1 = int(j0), min(p, int(j1))
                    if j0 < j1:
                        yield j0, j1, self._column_block(reader, j0, j1, colptr)
            else:
                yield from self._blocks_by_rows(reader, width, budget)
            reader.finish()
        finally:
            reader.close()

    def _blocks_by_rows(self, reader, width, budget):
        n, p = self.shape
        half = self.floored(budget // 2, GATHER_PASSES, GATHER_BYTES)  # of the groups, and of the rows read
        ranges, indptr = self._row_ranges(reader, None, max(half, self.chunk_need))
        counts = np.zeros(p, dtype=np.int64)
        for a, b in ranges:
            counts += np.bincount(self._row_chunk(reader, a, b, indptr).indices, minlength=p)
        colptr = np.zeros(p + 1, dtype=np.int64)
        np.cumsum(counts, out=colptr[1:])
        per_entry = self.dtype.itemsize + np.dtype(index_dtype(n)).itemsize
        bounds = np.r_[np.arange(0, p, width), p]
        g0 = 0  # groups of whole blocks that fit half the budget (the other half reads rows)
        while g0 < len(bounds) - 1:
            g1 = g0 + 1
            while g1 < len(bounds) - 1 and (colptr[bounds[g1 + 1]] - colptr[bounds[g0]]) * per_entry <= half:
                g1 += 1
            J0, J1 = int(bounds[g0]), int(bounds[g1])
            base = int(colptr[J0])
            size = int(colptr[J1]) - base
            out_data = np.empty(size, dtype=self.dtype)
            out_rows = np.empty(size, dtype=index_dtype(n))
            cursor = colptr[J0:J1] - base
            for a, b in ranges:
                M = self._row_chunk(reader, a, b, indptr)
                gather((M.data, M.indices, M.indptr), a, J0, J1, cursor, (out_data, out_rows), self._canonical)
            for j0, j1 in zip(bounds[g0:g1], bounds[g0 + 1:g1 + 1]):
                lo, hi = int(colptr[j0]) - base, int(colptr[j1]) - base
                pointers = (colptr[j0:j1 + 1] - colptr[j0]).astype(index_dtype(max(hi - lo, n)))
                block = sp.csc_matrix(
                    (out_data[lo:hi], out_rows[lo:hi], pointers),
                    shape=(n, int(j1 - j0)),
                )
                if not block.has_canonical_format:
                    block.sum_duplicates()
                yield int(j0), int(j1), block
            g0 = g1

    def read_columns(self, columns, *, rows=None, chunk_bytes=None):
        """The values of some features (all samples, or ``rows``), read in bounded memory.

        Parameters
        ----------
        columns : array-like of int or bool
            Feature indices (any order, as the result's columns) or a boolean mask of the features.
        rows : array-like of int or bool, optional
            Keep only these samples: increasing row indices or a boolean mask. By default all.
        chunk_bytes : int, optional
            The budget for data read at once besides the result (default ``CHUNK_BYTES``).

        Returns
        -------
        scipy.sparse.csc_matrix or ndarray (n_rows, n_columns)
            CSC for a sparse store, an array for a dense one, in the stored dtype.

        Notes
        -----
        A sparse store with its column copy reads just the entries of those features; other
        stores are read once in row chunks, keeping those columns of each chunk.

        Examples
        --------
        >>> import tempfile, pathlib, numpy as np, scipy.sparse as sp
        >>> from genosift.io import Dataset, open_store, write_store
        >>> X = sp.csr_matrix(np.array([[0, 3.0, 1], [1, 0, 0], [0, 4, 2]]))
        >>> ds = Dataset(X, np.array(["a", "b", "c"]), np.array(["k1", "k2", "k3"]))
        >>> store = open_store(write_store(ds, pathlib.Path(tempfile.mkdtemp()) / "d.gs.h5ad"))
        >>> store.read_columns([2, 0]).toarray().tolist()
        [[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]
        >>> store.read_columns([True, False, True], rows=[0, 2]).toarray().tolist()
        [[0.0, 1.0], [0.0, 2.0]]
        """
        n, p = self.shape
        budget = check_budget(chunk_bytes, "Store.read_columns")
        self.check_budget(budget, "Store.read_columns")
        cols = self._indices_of(columns, p, "columns", increasing=False)
        keep = None if rows is None else self._indices_of(rows, n, "rows", increasing=True)
        wanted, order = np.unique(cols, return_inverse=True)
        if self.sparse and self.has_column_copy:
            M = self._columns_from_copy(wanted)
            M = M if keep is None else M[keep]
        else:
            parts, a = [], 0
            for chunk in self.row_chunks(chunk_bytes=budget):
                b = a + chunk.shape[0]
                local = None if keep is None else keep[np.searchsorted(keep, a):np.searchsorted(keep, b)] - a
                part = chunk[:, wanted] if local is None else chunk[local][:, wanted]
                parts.append(part)
                a = b
            if self.sparse:
                M = sp.vstack(parts, format="csc") if parts else sp.csc_matrix((0, wanted.size), dtype=self.dtype)
            else:
                M = np.concatenate(parts) if parts else np.empty((0, wanted.size), dtype=self.dtype)
        return M if np.array_equal(order, np.arange(order.size)) else M[:, order]

    def columns_named(self, names):
        """The index of the feature named by each of ``names``, -1 where the store has none so named.

        The stored names are scanned a piece at a time and only the candidates are decoded: a few
        thousand names are found among millions without holding the millions as strings.

        Examples
        --------
        >>> import tempfile, pathlib, numpy as np
        >>> from genosift.io import Dataset, open_store, write_store
        >>> ds = Dataset(np.eye(3), np.array(["a", "b", "c"]), np.array(["k1", "k2", "k3"]))
        >>> store = open_store(write_store(ds, pathlib.Path(tempfile.mkdtemp()) / "d.gs.h5ad"))
        >>> store.columns_named(["k3", "k9", "k1"]).tolist()
        [2, -1, 0]
        """
        p = self.shape[1]
        with self._file() as f:
            var = f["var"]
            if "_genosift_names" in var:
                ds = var["_genosift_names"]
                try:
                    found = find_names(lambda a, b: ds[a:b], ds.shape[0], p, names)
                except ValueError as exc:  # feature names are unique in a store genosift wrote
                    raise ValueError(f"The store {str(self.path)!r} is damaged: {exc}. Write it again from "
                                     "the source data.") from None
                if found is not None:
                    return found
        where = {str(name): j for j, name in enumerate(self.feature_names)}  # names written by another tool
        return np.array([where.get(str(name), -1) for name in names], dtype=np.int64)

    @staticmethod
    def _indices_of(values, size, what, *, increasing):
        index = np.asarray(values)
        if index.dtype == bool and index.shape == (size,):
            return np.flatnonzero(index)
        ok = index.ndim == 1 and (not index.size or index.dtype.kind in "iu")
        if ok and index.size:
            ok = index.min() >= 0 and index.max() < size and (not increasing or (np.diff(index) > 0).all())
        if not ok:
            order = "increasing " if increasing else ""
            raise param_error(what, "Store.read_columns", f"a boolean mask of {size} values or {order}indices in "
                              f"[0, {size})",
                              index.tolist() if index.size <= 10 else f"an array of shape {index.shape}")
        return index.astype(np.int64)

    def _columns_from_copy(self, wanted):
        """CSC of the sorted columns ``wanted``, read from the column copy, one read per run."""
        n = self.shape[0]
        reader = FileReader(self)
        try:
            colptr = self._column_pointers(reader)
            counts = colptr[wanted + 1] - colptr[wanted]
            data = np.empty(int(counts.sum()), dtype=self.dtype)
            row_idx = np.empty(data.size, dtype=index_dtype(max(data.size, n)))
            # runs of consecutive columns are one contiguous range each
            breaks = np.flatnonzero(np.diff(wanted) != 1) + 1
            out = 0
            for run in np.split(wanted, breaks) if wanted.size else []:
                lo, hi = int(colptr[run[0]]), int(colptr[run[-1] + 1])
                data[out:out + hi - lo] = self._cdata.read(reader, lo, hi)
                row_idx[out:out + hi - lo] = self._crows.read(reader, lo, hi)
                out += hi - lo
            reader.finish()
        finally:
            reader.close()
        indptr = np.zeros(wanted.size + 1, dtype=row_idx.dtype)
        np.cumsum(counts, out=indptr[1:])
        check_sparse_structure(indptr, row_idx, wanted.size, n, sorted_indices=True, path=self.path, fmt="a store")
        M = sp.csc_matrix((data, row_idx, indptr), shape=(n, wanted.size), copy=False)
        M.has_canonical_format = True
        return M


def _by_entries(colptr, width, entries):
    """Block bounds over the features: each block holds at most ``entries`` stored entries (at
    least one feature) and at most ``width`` features."""
    p = colptr.shape[0] - 1
    bounds, j = [0], 0
    while j < p:
        end = int(np.searchsorted(colptr, colptr[j] + entries, side="right")) - 1
        j = min(p, j + width, max(j + 1, end))
        bounds.append(j)
    return bounds
