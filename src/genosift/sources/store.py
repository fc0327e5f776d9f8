"""A genosift store: ``StoreSource``, the store and the rows kept, read in row chunks or feature
blocks of a memory budget by ``scoring.store``; ``StoreRows``, rows of a store not loaded (what
``Dataset.X`` holds when the data stay on disk), and ``in_memory`` to load them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..core.validation import param_error
from .base import Source

__all__ = ["StoreRows", "StoreSource", "float_block", "in_memory", "kept_kinship", "on_disk", "rows_kept",
           "store_column"]


@dataclass(frozen=True, eq=False)
class StoreSource(Source):
    """An ``io.Store``, the rows read (``rows``; None: all) and their target (an array, or the
    name of a column of the store's sample table)."""

    form = "store"
    what = "a store"
    carries_riders = True

    def rows_given(self):
        return self.X.shape[0]

    def labels(self):
        y = self.y
        return self.kept(np.asarray(store_column(self.X, y) if isinstance(y, str) else y))

    def ids_scored(self, given):
        ids = np.asarray(self.X.sample_ids, dtype=object)
        return ids if self.rows is None else ids[self.rows]

    def column_blocks(self, *, owner):
        from ..core.engine import block_width

        chunk_bytes = self.chunk_bytes
        store, kept = self.X, self.rows
        n = store.shape[0] if kept is None else len(kept)
        width = block_width(store.shape[0], store.shape[1], chunk_bytes)

        def read():
            for j0, j1, block in store.feature_blocks(width, chunk_bytes=chunk_bytes):
                yield j0, j1, block if kept is None else block[kept]

        return n, store.shape[1], store.names_loader(), read()

    def float_columns(self, *, owner):
        from ..core.engine import check_budget

        store, rows = self.X, self.rows
        reads = store.feature_blocks(chunk_bytes=check_budget(self.chunk_bytes, owner))
        m = store.shape[0] if rows is None else rows.size
        return m, store.shape[1], ((j0, j1, float_block(block, rows)) for j0, j1, block in reads)


@dataclass(frozen=True, eq=False)
class StoreRows:
    """Rows of a store, not loaded: what ``Dataset.X`` holds when the data stay on disk, and the
    memory budget ``chunk_bytes`` their reads keep (None: the engine's).

    Indexing by rows (an index array or a boolean mask) gives the rows kept, so the metadata
    join and the label filters work on it as on an array; scoring then streams just those rows.
    """

    store: object
    rows: object = None
    chunk_bytes: object = None

    def __post_init__(self):
        rows = np.arange(self.store.shape[0]) if self.rows is None else np.asarray(self.rows, dtype=np.int64)
        object.__setattr__(self, "rows", rows)

    @property
    def shape(self):
        return (self.rows.size, self.store.shape[1])

    def __getitem__(self, index):
        return StoreRows(self.store, self.rows[index], self.chunk_bytes)

    def source(self, y=None, *, covariates=None, kinship=None):
        """These rows as a ``StoreSource`` read within their budget, with their target ``y`` (one
        per row kept), ``covariates`` (one row per row kept, or per row of the store) and
        ``kinship`` (``store.kept_kinship``)."""
        rows = rows_kept(self.rows, self.store.shape[0])
        return StoreSource(self.store, y, rows=rows, covariates=covariates, chunk_bytes=self.chunk_bytes,
                           kinship=None if kinship is None else kept_kinship(kinship, self.store, rows))

    def read_columns(self, columns):
        """The features ``columns`` of these rows, in the rows' order (read in the store's): CSR for
        a sparse store, else an array, in the stored type."""
        order = np.argsort(self.rows, kind="stable")
        M = self.store.read_columns(columns, rows=self.rows[order])
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        return sp.csr_matrix(M)[back] if sp.issparse(M) else np.asarray(M)[back]


def on_disk(X):
    """Whether the rows ``X`` of a data set stay on disk (rows of a store, ``StoreRows``: scored a
    chunk at a time, their chosen columns read) rather than in memory."""
    return isinstance(X, StoreRows)


def in_memory(X):
    """``X`` as a matrix in memory: store rows are read (all their columns), anything else as is."""
    if on_disk(X):
        return X.store.to_dataset().X[X.rows]
    return X


def store_column(store, name):
    """The values of the per-sample column ``name`` of the store's ``obs``, or the error naming
    the columns it has."""
    obs = store.obs
    if obs is None or name not in obs.columns:
        have = [] if obs is None else [str(c) for c in obs.columns]
        raise ValueError(
            f"The store {str(store.path)!r} has no per-sample column {name!r}; its columns: "
            f"{have or 'none'}. Pass the labels as an array, or write the store with that column in obs."
        )
    return obs[name].to_numpy()


def rows_kept(samples, n):
    """The sorted row indices that ``samples`` (a boolean mask or sorted indices) keeps; None if all."""
    if samples is None:
        return None
    rows = np.asarray(samples)
    expected = f"None, a boolean mask of {n} values, or increasing row indices in [0, {n})"
    if rows.dtype == bool:
        if rows.shape != (n,):
            raise param_error("samples", "score_store", expected, f"a boolean array of shape {rows.shape}")
        rows = np.flatnonzero(rows)
    elif rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise param_error("samples", "score_store", expected, f"an array of {rows.dtype} of shape {rows.shape}")
    rows = rows.astype(np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= n or (np.diff(rows) <= 0).any()):
        raise param_error("samples", "score_store", expected, rows[:10].tolist() + (["..."] if rows.size > 10 else []))
    if not rows.size:
        raise ValueError("'samples' keeps no row of the store: select at least one sample to score.")
    return None if rows.size == n else rows


def kept_kinship(kinship, store, rows):
    """The kinship of the ``rows`` kept of ``store``, in their order: a DataFrame indexed by
    sample id reordered by the store's ids; an array of one row per row of the store with the
    kept rows taken, or one per row kept as it is."""
    from ..scores import has_sample_ids, kinship_by_ids

    ids = np.asarray(store.sample_ids, dtype=object)
    if rows is not None:
        if not has_sample_ids(kinship) and np.shape(kinship)[0] == ids.size != rows.size:
            return np.asarray(kinship, dtype=np.float64)[np.ix_(rows, rows)]
        ids = ids[rows]
    return kinship_by_ids(kinship, ids)


def float_block(block, rows=None, *, keep_sparse=True):
    """A block read from a store as the scorers take it: its ``rows`` kept (all if None), in
    float64, a sparse one kept sparse (or made dense)."""
    if rows is not None:
        block = block[rows]
    if sp.issparse(block):
        return (block if keep_sparse else block.toarray()).astype(np.float64, copy=False)
    return np.ascontiguousarray(block, dtype=np.float64)
