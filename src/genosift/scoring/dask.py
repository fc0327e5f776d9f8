"""Scoring on Dask: Dask arrays and DataFrames, and stores read by a cluster's workers.

Nothing here computes a statistic. Row-mergeable methods run ``from_chunk`` of their statistic
(``genosift.stats``) in one task per block of rows and merge the results with its ``merge`` in a
tree of tasks; ``finish`` then turns the merged statistics into scores on the client.
Whole-column methods run in one task per block of features (every sample of it) and return that
block's scores. Only per-feature statistics and scores travel to the client, never the data.

Each task runs genosift's compiled kernels on one thread: Dask's workers and threads are the
parallelism. The scheduler they run on is resolved in ``scoring.schedulers``. Dask is imported only
when used; install it with ``pip install 'genosift[dask]'``.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from functools import reduce

import numpy as np
import scipy.sparse as sp

from ..core import engine
from ..core.engine import block_width
from ..core.messages import FixError, PythonText
from ..core.validation import param_error
from ..scores import (
    WithCarriers,
    build_result,
    carriers,
    check_classes,
    check_covariates,
    finish,
    finite_blocks,
    get_method,
    join_scores,
    make_target,
    score_block,
    target_values,
    with_af,
    with_covariates,
)
from ..sources.dask import computed, is_dask_collection
from .schedulers import (
    compute,
    current_scheduler,
    opened,
    require_dask,
    use_scheduler,
)
from .schedulers import slots as scheduler_slots

__all__ = ["FAN_IN", "RUNS_PER_THREAD", "TASK_BYTES", "as_array", "compute", "current_scheduler", "is_dask_collection",
           "merge_tree", "opened", "require_dask", "row_block_tasks", "score_collection", "score_store_tasks",
           "use_scheduler", "with_target"]

#: Most statistics merged by one task of the tree reduction (fewer when they are large).
FAN_IN = 8
#: Default budget, in bytes, of the stored matrix data a task reads from a store at once.
TASK_BYTES = engine.TASK_BYTES
#: Row-mergeable methods on a store: tasks per thread of the scheduler.
RUNS_PER_THREAD = 4



@contextmanager
def _one_thread():
    """The compiled kernels on one thread while a task runs (numba's setting is per thread)."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _chunk_statistic(block, y, method, names, af=False):
    """``from_chunk`` of the method's statistic on one block of rows (all features); with ``af``,
    together with the block's carrier counts (``WithCarriers``), for an allele-frequency filter."""
    spec = get_method(method)
    if block.shape[0] == 0:
        return WithCarriers(spec.statistic.empty(), 0) if af else spec.statistic.empty()
    with _one_thread():
        stat = spec.statistic.from_chunk(block, y, feature_names=names)
    return WithCarriers(stat, carriers(block)) if af else stat


def _merge_all(*parts):
    with _one_thread():
        return reduce(lambda a, b: a.merge(b), parts)


def _block_scores(block, target, method, options, j0, j1, names, af=False):
    """A whole-column method on one block of features, every sample: its ``Scores`` (with ``af``:
    ``(Scores, carrier counts)``, for an allele-frequency filter).

    ``names`` are the block's feature names (None: ``x{j}`` with ``j0 <= j < j1``).
    """
    spec = get_method(method)
    if sp.issparse(block):
        block = block.tocsc() if spec.sparse_blocks else block.toarray()
        block = block.astype(np.float64, copy=False)
    else:
        block = np.ascontiguousarray(block, dtype=np.float64)
    # the block checked (and, for scale-free methods, rescaled)
    ((_, _, block),) = finite_blocks([(j0, j1, block)] if names is None else [(0, j1 - j0, block)], names,
                                     spec.scale_free)
    with _one_thread():
        out = score_block(spec, block, target, options)
    return (out, carriers(block)) if af else out


def _split_carriers(parts, af):
    """``(Scores of every block, carrier counts or 0)`` of the blocks' results."""
    if not af:
        return join_scores(parts), 0
    return join_scores([q[0] for q in parts]), np.concatenate([q[1] for q in parts])


def _as_csc(block):
    return block.tocsc() if sp.issparse(block) else block


def merge_tree(parts, n_classes, n_features):
    """One delayed value: ``parts`` merged a few at a time, level by level.

    A merge task holds its inputs at once: up to ``FAN_IN`` of them while they are small, fewer
    (at least 2) when that would pass ``TASK_BYTES`` (about 16 bytes per class and feature).
    """
    delayed = require_dask().delayed
    fan_in = int(max(2, min(FAN_IN, TASK_BYTES // (16 * max(n_classes, 1) * n_features))))
    while len(parts) > 1:
        parts = [delayed(_merge_all, pure=False)(*parts[i:i + fan_in]) for i in range(0, len(parts), fan_in)]
    return parts[0]


def row_block_tasks(X, labels, task, *args):
    """One delayed ``task(block, labels of its rows or None, *args)`` per block of rows of the Dask
    array ``X``, each block holding every feature (``X`` is rechunked along its columns when it
    has several column chunks: choose row chunks with that in mind)."""
    delayed = require_dask().delayed
    X = X.rechunk({1: -1}) if X.numblocks[1] > 1 else X
    bounds = np.cumsum((0,) + X.chunks[0])
    return [delayed(task, pure=False)(block, None if labels is None else labels[a:b], *args)
            for block, a, b in zip(X.to_delayed()[:, 0], bounds[:-1], bounds[1:])]


def _n_classes(target):
    return 1 if target.classes is None else len(target.classes)


def _merged(build, names, scheduler):
    """Compute ``build(names_arg)``; on a ValueError, the same pass with names, for its message.

    The tasks get no feature names at first (they cost a copy per task); an error about some
    features (non-finite or negative values) is raised again naming them.
    """
    try:
        return compute(build(None), scheduler)
    except ValueError:
        if names is not None:
            compute(build(names), scheduler)
        raise


def _whole_matrix_error(spec, what):
    return FixError(
        f"Method '{spec.name}' works on the whole matrix at once (streaming 'matrix' in {{methods}}), "
        f"so it cannot score {what} by Dask tasks. {{in_memory}}, or choose another "
        "{method} (one whose streaming is 'row' or 'block').",
        owner="dask", method=FixError.ANY, methods=PythonText("genosift.methods()"),
        in_memory=PythonText("Load the data into memory (X.compute() for a Dask array) and call genosift.score"),
    )


# --------------------------------------------------------------------------------------------
# Dask arrays and DataFrames
# --------------------------------------------------------------------------------------------


def _height(block):
    return block.shape[0]


def as_array(X, feature_names, scheduler):
    """``(dask array with known chunk sizes, feature names or None)``.

    Unknown row counts (a DataFrame's partitions, an array of unknown chunk sizes) are computed
    first, on ``scheduler``: one pass over the data.
    """
    dask = require_dask()
    names = None if feature_names is None else np.asarray(feature_names, dtype=object)
    if hasattr(X, "columns") and hasattr(X, "to_dask_array"):  # a Dask DataFrame
        from ..core.validation import is_numeric_dtype, names_list

        bad = [c for c, t in zip(X.columns, X.dtypes) if not is_numeric_dtype(t)]
        if bad:
            raise TypeError(f"X has non-numeric columns {names_list(bad)}. Encode or drop them before scoring; "
                            "every feature must be a number.")
        names = np.asarray([str(c) for c in X.columns], dtype=object) if names is None else names
        X = X.to_dask_array(lengths=tuple(int(k) for k in compute(X.map_partitions(len), scheduler)))
    if not hasattr(X, "chunks") or X.ndim != 2:
        raise ValueError(f"X must be a 2-D Dask array or a Dask DataFrame (samples in rows, features in "
                         f"columns). Got {type(X).__name__} with {getattr(X, 'ndim', '?')} dimension(s).")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X has dtype {X.dtype}, which is not a real number type; every feature must be a number.")
    if any(np.isnan(c) for c in X.chunks[0]):  # the row offsets give each block its labels
        from dask.array.utils import meta_from_array

        heights = compute([dask.delayed(_height)(b) for b in X.to_delayed()[:, 0]], scheduler)
        X = dask.array.Array(X.dask, X.name, (tuple(heights), X.chunks[1]), meta=meta_from_array(X))
    n, p = X.shape
    if n == 0 or p == 0:
        raise ValueError(f"X is empty: {n} samples x {p} features. Scoring needs at least one sample and one feature.")
    if names is not None and names.shape != (p,):
        raise ValueError(f"feature_names has {names.size} names for {p} features; give one name per column of X.")
    return X, names


def with_target(X, y, feature_names, scheduler):
    """``(X as a Dask array, feature names or None, y)``: ``as_array``, and ``y`` computed on
    ``scheduler`` (n values) when it is a Dask array or Series."""
    X, names = as_array(X, feature_names, scheduler)
    return X, names, computed(y, _computed_values, scheduler)


def _computed_values(y, scheduler):
    return np.asarray(compute(y, scheduler))


def score_collection(source, spec, options, *, af=None):
    """Score the Dask array or DataFrame of ``source`` (a ``DaskSource``: the collection, its
    target, feature names, covariates, kinship and scheduler) with the registered method
    ``spec``: a ``ScoreResult``.

    What ``genosift.score`` runs for Dask input. Row-mergeable methods need blocks that span
    every feature, so ``X`` is rechunked along its columns when it has several column chunks
    (each row block then holds all features: choose row chunks with that in mind).
    Whole-column methods need every sample of a feature, so ``X`` is rechunked to one row chunk
    and to column blocks of at most ``genosift.core.engine.block_width`` features (narrower column
    chunks are kept); sparse row chunks are turned to CSC first, whose columns slice cheaply.
    Its ``y`` may be a Dask array or Series; it is computed (n values) first. ``af``: an
    allele-frequency filter ``(min_af, max_af)`` (``genosift.score``'s ``min_af`` and ``max_af``),
    its carriers counted by the same tasks. Its ``covariates``: one row per row of ``X`` (a Dask
    array or DataFrame is computed first, c values per sample), sent to the tasks with the target;
    its ``kinship`` (n x n, in the rows' order), for a mixed model, too.
    """
    if spec.streaming == "matrix":
        raise _whole_matrix_error(spec, "a Dask array")
    dask = require_dask()
    with opened(source.scheduler) as chosen:
        X, names, y = with_target(source.X, source.y, source.feature_names, chosen)
        n, p = X.shape
        Z, covariate_names = check_covariates(computed(source.covariates, compute, chosen), n)
        target = make_target(spec, y, n, Z, source.kinship)
        check_classes(spec, target)  # before reading: wrong labels fail at once
        if spec.streaming == "rows":
            labels = target_values(spec, y, n)

            def build(names_arg):
                key = None if names_arg is None else dask.delayed(names_arg, pure=False)
                tasks = row_block_tasks(X, labels, _chunk_statistic, spec.name, key, af is not None)
                return merge_tree(tasks, _n_classes(target), p)

            merged = _merged(build, names, chosen)
            if af is None:
                return finish(spec, merged, names, options)
            return with_af(finish(spec, merged.stat, names, options), merged.carriers, af)
        width = block_width(n, p)
        if X.numblocks[0] > 1 and sp.issparse(getattr(X, "_meta", None)):  # columns of CSC slice cheaply
            X = X.map_blocks(_as_csc, dtype=X.dtype, meta=sp.csc_matrix((0, 0), dtype=X.dtype))
        X = X.rechunk({0: -1, 1: width if max(X.chunks[1]) > width else X.chunks[1]})
        starts = np.cumsum((0,) + X.chunks[1])
        shared = dask.delayed(target, pure=False)
        parts = [dask.delayed(_block_scores, pure=False)(
            block, shared, spec.name, options, int(j0), int(j1), None if names is None else names[j0:j1],
            af is not None)
            for block, j0, j1 in zip(X.to_delayed()[0], starts[:-1], starts[1:])]
        out, counts = _split_carriers(compute(parts, chosen), af is not None)
        return with_covariates(with_af(build_result(spec, out, target, names, options), counts, af), covariate_names)


# --------------------------------------------------------------------------------------------
# Stores, read by the workers
# --------------------------------------------------------------------------------------------


class _StoreOnWorker:
    """What a task needs to open a store on a worker, and checks that it is the same file."""

    def __init__(self, store):
        self.path = os.path.abspath(store.path)
        self.shape, self.nnz, self.size = store.shape, store.nnz, store.signature[2]  # the size when opened
        self.binary = store.binary  # the workers read the values as the client's store does

    def open(self):
        import socket

        from ..io.store import Store

        try:
            store = Store(self.path, binary=self.binary)
        except (FileNotFoundError, PermissionError) as exc:
            raise FileNotFoundError(
                f"The Dask worker on {socket.gethostname()} cannot read the store {self.path!r} ({exc}). "
                "The workers read the store themselves: put it where every worker sees it under the "
                "same path (a shared file system), or score it without a scheduler."
            ) from None
        if store.shape != self.shape or store.nnz != self.nnz or os.stat(self.path).st_size != self.size:
            raise ValueError(f"The store {self.path!r} on a Dask worker differs from the one opened on the "
                             "client (another file, or replaced meanwhile). Give every worker the same file.")
        return store

    def statistic(self, ranges, method, named, af=False):
        """The method's statistic of the row ``ranges``, read and merged one at a time, in order.

        ``ranges``: ``(a, b, keep, y)`` for rows ``a <= i < b``, of which the local rows ``keep``
        (all if None), with their targets ``y``. The same fold as the local engine's. With ``af``,
        a ``WithCarriers``: the statistic and the carrier counts of the same rows.
        """
        from ..core.engine import accumulate

        store = self.open()
        names = store.feature_names if named else None
        empty = get_method(method).statistic.empty()
        with store.reader() as reader:
            return accumulate(ranges, lambda r: _chunk_statistic(self.rows(store, reader, *r[:3]), r[3], method, names,
                                                                 af),
                              WithCarriers(empty, 0) if af else empty)

    @staticmethod
    def rows(store, reader, a, b, keep):
        """Rows ``a <= i < b`` (then the local rows ``keep`` of them, if given), all features."""
        chunk = reader.rows(a, b)
        return chunk if keep is None else chunk[keep]

    def columns(self, j0, j1):
        """Features ``j0 <= j < j1``, every sample: CSC of a sparse store, an array of a dense one.

        A sparse store without its column copy is read whole for each block (slow: write the
        store with ``column_copy=True`` to score whole-column methods on a cluster).
        """
        store = self.open()
        if store.sparse and not store.has_column_copy:
            return store.read_columns(np.arange(j0, j1))
        with store.reader() as reader:
            return reader.columns(j0, j1)


def _store_block_scores(source, j0, j1, rows, target, method, options, af=False):
    block = source.columns(j0, j1)
    return _block_scores(block if rows is None else block[rows], target, method, options, j0, j1, None, af)


def score_store_tasks(source, spec, options, *, af=None):
    """Score the store of the ``StoreSource`` ``source`` on its Dask scheduler, the workers reading
    it: a ``ScoreResult``.

    What ``genosift.scoring.store.score_store(..., scheduler=...)`` runs once it has checked its inputs.
    Row-mergeable methods: the rows are cut into ranges holding at most ``chunk_bytes`` of stored
    values and indices (default ``TASK_BYTES``); each of ``RUNS_PER_THREAD`` tasks per scheduler
    thread reads a run of consecutive ranges, one at a time, merging their statistics as it goes
    (memory: one range and two statistics), and the tasks' statistics are merged in a tree.
    Whole-column methods: one task per block of features whose dense float64 form fits
    ``chunk_bytes``. The source's ``rows`` (sorted indices,
    None for all) keep some samples; its ``y`` has one value per sample kept. The store's path must be
    the same on every worker. Small stores are cut into at least as many tasks as the scheduler
    has threads, so that every thread has work. ``af``: an allele-frequency filter
    ``(min_af, max_af)``, its carriers counted by the same tasks. Its ``covariates``: the checked
    ``(m, c)`` array of the samples kept (``genosift.scores.check_covariates``), sent to the
    tasks with the target; its ``kinship``: the checked ``(m, m)`` kinship of a mixed model, sent with
    it too (one copy per worker, whose tasks share its null model: one decomposition a worker).
    """
    store, y, rows, chunk_bytes = source.X, source.y, source.rows, source.chunk_bytes
    if spec.streaming == "matrix":
        raise _whole_matrix_error(spec, "a store")
    if chunk_bytes is not None and (isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, (int, np.integer))
                                    or chunk_bytes < 1):
        raise param_error("chunk_bytes", "score_store", "a positive int (bytes) or None", chunk_bytes)
    budget = int(chunk_bytes or TASK_BYTES)
    dask = require_dask()
    n, p = store.shape
    m = n if rows is None else rows.size
    on_worker = _StoreOnWorker(store)
    target = make_target(spec, y, m, source.covariates, source.kinship)
    with opened(source.scheduler) as chosen:
        slots = scheduler_slots(chosen)
        if spec.streaming == "rows":
            budget = max(1, min(budget, -(-store.nnz * store.entry_bytes // slots)))
            labels = target_values(spec, y, m)
            ranges = store.row_ranges(budget)
            tasks = []
            for a, b in ranges:
                lo, hi = (a, b) if rows is None else np.searchsorted(rows, [a, b])
                if hi > lo:
                    keep = None if rows is None or hi - lo == b - a else rows[lo:hi] - a
                    tasks.append((a, b, keep, None if labels is None else labels[lo:hi]))

            # a task merges a run of ranges as it reads them: statistics travel once per task, not per range
            runs = np.array_split(np.arange(len(tasks)), min(len(tasks), RUNS_PER_THREAD * slots))

            def build(named):
                return merge_tree([dask.delayed(on_worker.statistic, pure=False)([tasks[i] for i in run], spec.name,
                                                                         named is not None, af is not None)
                              for run in runs], _n_classes(target), p)

            merged = _merged(build, True, chosen)
            if af is None:
                return finish(spec, merged, store.names_loader(), options)
            return with_af(finish(spec, merged.stat, store.names_loader(), options), merged.carriers, af)
        width = min(block_width(m, p, budget), -(-p // slots))
        shared = dask.delayed(target, pure=False)
        kept = None if rows is None else dask.delayed(rows, pure=False)
        parts = [dask.delayed(_store_block_scores, pure=False)(on_worker, j0, min(p, j0 + width), kept, shared,
                                                                spec.name, options, af is not None)
                 for j0 in range(0, p, width)]
        out, counts = _split_carriers(compute(parts, chosen), af is not None)
        return with_af(build_result(spec, out, target, store.names_loader(), options), counts, af)
