"""Scoring the ``X`` of a backed AnnData (``anndata.read_h5ad(path, backed="r")``) without loading it.

- ``X`` stored by rows (CSR) or dense: the file is read as a genosift store
  (``genosift.scoring.store.score_store``), row chunks or feature blocks within ``chunk_bytes``; a view
  (``adata[rows, cols]``) reads its rows only and keeps its features' results;
- ``X`` stored by columns (CSC): blocks of features through anndata's backed access
  (``adata.X[:, j0:j1]``), each within ``chunk_bytes``;
- other layouts: row chunks through anndata's backed access (``adata.X[i:j]``), for the
  methods that merge row chunks.

Layers of a backed AnnData are in memory already (anndata backs ``X`` only), and a view that
cannot be read from the file as above (repeated rows, a layout by columns) is read by anndata
itself, that is the view's values only.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from ..core import engine
from ..core.engine import check_budget
from ..core.transforms import presence
from ..core.validation import as_labels
from ..io.anndata import labels_of, matrix_of, names_of
from ..io.store import Store
from ..io.store.contained import check_file
from ..scores import (
    CarrierTap,
    build_result,
    check_classes,
    check_covariates,
    finish,
    join_scores,
    make_target,
    score_blocks,
    stream_statistics,
    target_values,
    with_af,
    with_covariates,
)
from ..sources.store import StoreSource
from .store import store_scores

__all__ = ["backed_rows", "score_backed"]


def score_backed(source, spec, opts, *, af=None):
    """``genosift.score`` of the ``X`` of the backed AnnData of ``source`` (a ``BackedSource``),
    never loaded whole (see the module's notes).

    Its ``covariates``: one row per observation (``genosift.io.anndata.covariates_of`` resolves
    names of ``obs`` columns and tables indexed by ``obs_names`` first); its ``kinship``: the
    observations' (n x n, in their order), for a mixed model.
    """
    adata = source.X
    check_file(adata.filename)  # its X is read from this file: nothing that reads other files
    y = labels_of(adata, source.y, required=spec.task != "unsupervised")
    feature_names = source.feature_names
    names = names_of(adata.var_names) if feature_names is None else np.asarray(feature_names, dtype=object)
    Z, covariate_names = check_covariates(source.covariates, adata.n_obs)
    kinship = None if source.kinship is None else np.asarray(source.kinship, dtype=np.float64)
    res = _score_backed(dataclasses.replace(source, y=y, covariates=Z, kinship=kinship), spec, opts, names, af)
    return with_covariates(res, covariate_names)


def _positions(index, size):
    """Parent positions of a view's index (a slice, a boolean mask or integers)."""
    if isinstance(index, slice):
        return np.arange(size)[index]
    index = np.asarray(index)
    if index.dtype == bool:
        return np.flatnonzero(index)
    return index.astype(np.int64, copy=False)


def _view_of(adata):
    """``(parent, rows, cols)`` of a backed AnnData: the parent positions of a view's rows and
    columns (None where it keeps them all), or ``None`` when anndata does not tell them."""
    if not adata.is_view:
        return adata, None, None
    parent = getattr(adata, "_adata_ref", None)
    oidx, vidx = getattr(adata, "_oidx", None), getattr(adata, "_vidx", None)
    if parent is None or oidx is None or vidx is None:
        return None
    n, p = parent.shape
    rows, cols = _positions(oidx, n), _positions(vidx, p)
    return (parent, None if np.array_equal(rows, np.arange(n)) else rows,
            None if np.array_equal(cols, np.arange(p)) else cols)


def _view_values(parent, rows, cols):
    """The values of a view of the backed ``parent`` in memory: its rows read once each in
    increasing order (what h5py takes), then put in the view's order, repeats included."""
    X = parent.X
    if rows is None:
        M = matrix_of(parent)
    else:
        unique, back = np.unique(rows, return_inverse=True)
        M = X[unique]
        M = M[back] if unique.size != rows.size or (np.diff(rows) < 0).any() else M
    return M if cols is None else M[:, cols]


def _store_of(parent, binary):
    """The backed file of ``parent`` opened as a genosift store when its ``X`` is stored by rows
    or dense (the layouts a store reads), else None."""
    try:
        store = Store(parent.filename, binary=binary)
    except (ValueError, OSError):  # X by columns, or a layout the store does not read
        return None
    return store if tuple(store.shape) == tuple(parent.shape) else None


def _take_features(res, cols, names):
    """``res`` restricted to the features ``cols`` (q-values and ranking are those of the subset)."""
    p = res.n_features
    subset = {}
    for f in dataclasses.fields(res):
        value = getattr(res, f.name)
        if f.name not in ("classes", "names") and isinstance(value, np.ndarray) and value.shape == (p,):
            subset[f.name] = value[cols]
    return dataclasses.replace(res, names=names, names_loader=None, **subset)


def _in_memory(M, source, spec, opts, names, af):
    """The values ``M`` anndata read into memory, scored as a matrix with the target, covariates and
    kinship of ``source``."""
    from .memory import score_memory

    return score_memory(spec, presence(M) if source.binary else M, source.y, names, opts, af, source.covariates,
                        kinship=source.kinship)


def _score_backed(source, spec, opts, names, af):
    """``score_backed`` once the target, covariates and kinship of ``source`` are checked: through a
    store where the file reads as one, else through anndata's backed access."""
    adata, scheduler = source.X, source.scheduler
    check_budget(source.chunk_bytes, "score")  # a budget that is not one fails before any read
    if spec.streaming == "matrix":
        raise ValueError(
            f"Method '{spec.name}' needs the whole matrix in memory (it compares samples over all features "
            "at once), so it cannot read a backed AnnData in chunks. Load it with adata.to_memory() first, "
            "or choose a method whose streaming is 'rows' or 'blocks' in genosift.methods().")
    view = _view_of(adata)
    parent, rows, cols = view if view is not None else (None, None, None)
    store = None if parent is None else _store_of(parent, source.binary)
    y, covariates, kinship = source.y, source.covariates, source.kinship
    if store is not None:
        if rows is not None:
            order = np.argsort(rows, kind="stable")
            rows = rows[order]
            if rows.size and (np.diff(rows) == 0).any():  # a view that repeats rows: read by anndata
                store = None
            else:  # the rows in file order; scores do not depend on it
                y = None if y is None else as_labels(y, len(order))[order]
                covariates = None if covariates is None else covariates[order]
                kinship = None if kinship is None else kinship[np.ix_(order, order)]
    if store is not None:
        res = store_scores(StoreSource(store, y, rows=rows, covariates=covariates, chunk_bytes=source.chunk_bytes,
                                       scheduler=scheduler, kinship=kinship), spec, opts, af=af)
        if cols is not None:
            return _take_features(res, cols, names)
        return dataclasses.replace(res, names=names, names_loader=None)
    if adata.is_view:  # the view's values only (read in file order where its parent is known)
        _no_scheduler(adata, scheduler)
        return _in_memory(_values_of_view(adata), source, spec, opts, names, af)
    if scheduler is not None:
        raise ValueError(f"A backed AnnData whose X is stored as {getattr(adata.X, 'format', 'this layout')!r} is "
                         "read through anndata here, not by Dask tasks. Leave out scheduler, or write the data to a "
                         "store (genosift.io.write_store) and score that on the scheduler.")
    X = adata.X
    if getattr(X, "format", None) == "csc":
        return _score_column_blocks(source, spec, opts, names, af)
    if spec.streaming != "rows":
        raise ValueError(
            f"Method '{spec.name}' needs every sample of a feature at once, which this backed AnnData (X stored "
            f"as {type(X).__name__}) cannot give in blocks. Load it with adata.to_memory(), or write it to a "
            "store with genosift.io.write_store and score that.")
    return _score_row_chunks(source, spec, opts, names, af)


def _no_scheduler(adata, scheduler):
    if scheduler is not None:
        raise ValueError("A view of a backed AnnData is read into memory by anndata here, not by Dask tasks. Leave "
                         "out scheduler, or write the data to a store (genosift.io.write_store) and score that on the "
                         "scheduler.")


def _values_of_view(adata):
    """The values of a view of a backed AnnData, in memory."""
    view = _view_of(adata)
    if view is None:  # anndata reads the view's values only
        return matrix_of(adata)
    parent, rows, cols = view
    return _view_values(parent, rows, cols)


def backed_rows(source):
    """The rows of the ``X`` of the backed AnnData of ``source`` (a ``BackedSource``) as a stream:
    ``(y, chunks, names)`` with its target resolved against ``obs`` (None without one) and
    ``chunks`` the ``(X_chunk, y_chunk)`` row chunks within its ``chunk_bytes`` (a view: its
    values, read once, as one chunk), as presence/absence where it is ``binary``."""
    adata, binary = source.X, source.binary
    check_file(adata.filename)
    y = labels_of(adata, source.y)
    y = None if y is None else as_labels(y, adata.n_obs)
    names = names_of(adata.var_names)
    if adata.is_view:
        M = _values_of_view(adata)
        return y, iter([(presence(M) if binary else M, y)]), names
    return y, _row_chunks(adata.X, y, check_budget(source.chunk_bytes, "profile"), binary), names


def _row_chunks(X, y, budget, binary):
    """``(X[i:j], y[i:j])`` over a backed matrix, each chunk within ``budget`` with its float64 copy."""
    n = X.shape[0]
    per_value, per_row, _ = _bytes_per_value(X)
    step = int(max(1, budget // max(1, per_value * per_row * 2)))  # the read and its float64 copy
    for i in range(0, n, step):
        chunk = X[i:min(n, i + step)]
        yield (presence(chunk) if binary else chunk), None if y is None else y[i:i + step]


def _bytes_per_value(X):
    """Bytes in memory per stored value of a backed matrix, and the stored values per row and per column."""
    n, p = X.shape
    itemsize = np.dtype(X.dtype).itemsize
    group = getattr(X, "group", None)
    if group is not None and "data" in group:  # sparse: values plus their indices
        nnz = int(group["data"].shape[0])
        return itemsize + 8, nnz / max(n, 1), nnz / max(p, 1)
    return itemsize, p, n


def _score_row_chunks(source, spec, opts, names, af):
    """A row-mergeable method over row chunks ``X[i:j]`` of the backed matrix of ``source``."""
    X, y = source.X.X, source.y
    y = None if y is None else as_labels(y, X.shape[0])
    chunks = _row_chunks(X, y, check_budget(source.chunk_bytes, "score"), source.binary)
    tap = CarrierTap()
    stats, _ = stream_statistics(spec, tap.pairs(chunks) if af else chunks, feature_names=names)
    return with_af(finish(spec, stats, names, opts), tap.counts, af)


def _score_column_blocks(source, spec, opts, names, af):
    """Any block or row method over blocks of features ``X[:, j0:j1]`` of the backed matrix of
    ``source``, stored by columns."""
    X, y, binary = source.X.X, source.y, source.binary
    budget = check_budget(source.chunk_bytes, "score")
    n, p = X.shape
    per_value, _, per_col = _bytes_per_value(X)
    sparse_out = spec.streaming == "rows" or spec.sparse_blocks
    column_bytes = per_col * per_value + (per_col * 16 if sparse_out else n * 8)  # as read, and as scored
    jobs = engine.threads()
    width = int(max(1, budget // (2 * jobs + 1) // max(1, column_bytes)))
    target = make_target(spec, y, n, source.covariates, source.kinship)
    check_classes(spec, target)  # before reading: wrong labels fail at once

    def blocks():
        for j0 in range(0, p, width):
            j1 = min(p, j0 + width)
            block = X[:, j0:j1]
            if binary:
                block = presence(block)
            if sp.issparse(block):
                block = block.astype(np.float64) if sparse_out else block.toarray().astype(np.float64)
            else:
                block = np.ascontiguousarray(block, dtype=np.float64)
            yield j0, j1, block

    tap = CarrierTap()
    items = tap.blocks(blocks(), p) if af else blocks()
    if spec.streaming != "rows":
        return with_af(score_blocks(spec, items, target, names, opts, n_jobs=jobs), tap.counts, af)
    values = target_values(spec, y, n)

    def one(item):
        j0, j1, block = item
        return spec.func(spec.statistic.from_chunk(block, values, feature_names=names[j0:j1]), **opts)

    parts = engine.map_blocks(one, items, n_jobs=jobs)
    return with_af(build_result(spec, join_scores(parts), target, names, opts), tap.counts, af)
