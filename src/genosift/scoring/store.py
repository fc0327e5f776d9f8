"""Scoring a genosift store out of core: ``score_store``.

Row-mergeable methods fold the statistics of the store's row chunks (``Store.row_chunks``);
whole-column methods, and the class-moment ones on a sparse store with its column copy
(``by_features``), score its feature blocks (``Store.feature_blocks``) on the local engine's
threads; with a Dask scheduler the workers read the store themselves (``scoring.dask``).
Memory stays within the chunk budget, never the size of the data.
"""
from __future__ import annotations

from dataclasses import replace
from functools import singledispatch

import numpy as np

from ..core import engine
from ..core.engine import block_width, check_budget
from ..core.messages import FixError, PythonText
from ..core.validation import as_labels, check_options_dict, options_in_one_dict, param_error
from ..io.store import Store
from ..scores import (
    CarrierTap,
    build_result,
    check_af,
    check_classes,
    check_kinship_given,
    check_options,
    covariate_columns,
    finish,
    get_method,
    join_scores,
    make_target,
    make_targets,
    prepare_covariates,
    refuse_covariates,
    score_blocks,
    stream_statistics,
    with_af,
    with_covariates,
)
from ..sources.store import StoreSource, float_block, kept_kinship, rows_kept, store_column
from ..stats import ClassMoments
from .dask import current_scheduler, score_store_tasks

__all__ = ["by_features", "entry_blocks", "labelled_chunks", "score_store", "store_scores"]


def _target_of(store, target, spec):
    """The labels ``target`` gives: the values of the store's ``obs`` column it names, or itself."""
    if isinstance(target, str):
        return store_column(store, target)
    if target is None and spec.task != "unsupervised":
        raise ValueError(
            f"Method '{spec.name}' needs a target: pass the name of a column of the store's obs "
            f"({[] if store.obs is None else [str(c) for c in store.obs.columns]}) or an array of labels."
        )
    return target


def labelled_chunks(store, y, budget, rows=None):
    """``(chunk, y_chunk)`` over the store's row chunks, keeping the sorted ``rows`` (all if None).

    ``y`` has one value per row kept. A chunk is let go before the next is read.
    """
    chunks = store.row_chunks(chunk_bytes=budget)
    try:
        with engine.progress("Reading rows", total=store.shape[0], unit="rows") as bar:
            a = k = 0
            while True:
                chunk = None
                chunk = next(chunks, None)
                if chunk is None:
                    return
                b = a + chunk.shape[0]
                bar.advance(b - a)
                if rows is not None:
                    lo, hi = np.searchsorted(rows, [a, b])
                    if hi == lo:
                        a = b
                        continue
                    if hi - lo < b - a:
                        chunk = chunk[rows[lo:hi] - a]
                    b_y = k + (hi - lo)
                else:
                    b_y = b
                yield chunk, None if y is None else y[k:b_y]
                a, k = b, b_y
    finally:
        chunks.close()


def _score_rows(store, y, spec, opts, budget, rows, af=None, riders=()):
    """A row-mergeable method over the store's row chunks: merged statistics, then the scores.

    The feature names (a Python string each) are decoded when the result first needs them, not
    while scoring: a ranking of millions of k-mers costs the names only when they are shown.
    With an allele-frequency filter ``af`` (``(min_af, max_af)``), the carriers of each feature
    are counted in the same pass, and the ``riders`` (``store_scores``) see every chunk.
    """
    def tapped(pairs):
        for rider in riders:
            pairs = rider.rows(pairs)
        return pairs if tap is None else tap.pairs(pairs)

    if spec.statistic is ClassMoments:  # one pass, independent of the chunk size
        classes, codes = (np.zeros(1, dtype=object), np.zeros(store.shape[0] if rows is None else len(rows), np.intp)
                          ) if y is None else np.unique(np.asarray(y), return_inverse=True)
        stream = ClassMoments.from_csr_stream if store.sparse else ClassMoments.from_dense_stream
        tap = None if af is None else CarrierTap(trusted=True)
        stats = stream(tapped(labelled_chunks(store, codes, budget, rows)), classes, store.shape[1])
        if stats is not None:
            return with_af(finish(spec, stats, store.names_loader(), opts), 0 if tap is None else tap.counts, af)
    tap = None if af is None else CarrierTap(trusted=True)
    try:
        stats, _ = stream_statistics(spec, tapped(labelled_chunks(store, y, budget, rows)))
    except ValueError:  # the same pass again, so that the message names the features
        stream_statistics(spec, labelled_chunks(store, y, budget, rows), feature_names=store.feature_names)
        raise
    return with_af(finish(spec, stats, store.names_loader(), opts), 0 if tap is None else tap.counts, af)


@singledispatch
def _opened(source):
    """The store at the path ``source`` (an open ``Store`` as it is)."""
    return Store(source)


@_opened.register(Store)
def _open_already(source):
    return source


@options_in_one_dict
def score_store(source, target=None, *, method="fisher", samples=None, chunk_bytes=None, n_jobs=None,
                scheduler=None, min_af=None, max_af=None, covariates=None, kinship=None, method_options=None):
    """Score every feature of a store against a target, out of core.

    Row-mergeable methods (``streaming == "rows"`` in ``genosift.methods()``) read the store in
    chunks of samples and merge their statistics exactly; whole-column methods (``"blocks"``) read
    it in blocks of features, as do the class-moment methods (fisher, anova, welch, ...) on a
    sparse store with its column copy (``by_features``: the same numbers, bit for bit). Memory
    holds at most about ``chunk_bytes`` of data, plus the per-feature results and, for the row
    chunks, the statistics (a few arrays of n_features x n_classes); never the matrix.

    Parameters
    ----------
    source : str, Path or Store
    target : str or array-like, optional
        The name of a column of the store's ``obs``, or the labels (or numeric target), one per
        sample in the store's row order (or one per sample kept by ``samples``). None for
        unsupervised methods.
    method : str
        A name from ``genosift.methods()``; "matrix" methods (relieff) need the data in memory.
    samples : array-like of bool or int, optional
        Score only these rows of the store: a boolean mask (one value per row) or increasing row
        indices. Rows are dropped as they are read, so the result is ``genosift.score`` on
        ``X[samples]`` with the same memory budget. By default every row.
    chunk_bytes : int, optional
        The budget for data in memory (default ``CHUNK_BYTES``).
    n_jobs : int, optional
        Threads for whole-column methods (default ``genosift.core.engine.threads()``: all CPUs unless
        ``engine.set_threads`` says otherwise).
    scheduler : distributed.Client or str, optional
        Score on Dask (``pip install 'genosift[dask]'``): a client, a scheduler address
        (``"tcp://host:8786"``) or ``"local:N"`` (N worker processes on this machine). The workers
        read the store themselves, so its path must be the same on every worker; only per-feature
        statistics come back. ``chunk_bytes`` is then the data one task reads (default
        ``genosift.dask.TASK_BYTES``). By default the one set by ``genosift.dask.use_scheduler``,
        else the local engine.
    min_af, max_af : float in [0, 1], optional
        Test only the features carried (value above 0) by a share of the scored samples (those
        ``samples`` keeps) in ``[min_af, max_af]``, as ``genosift.score``. The carriers are
        counted in the same pass over the store as the statistics.
    covariates : array-like, pandas DataFrame or Series, or list of str, optional
        For the methods that adjust for covariates: one row per row of the store (in the
        store's row order) or one per sample kept by ``samples``; a DataFrame or Series indexed
        by sample id, matched to the store's sample ids; or names of columns of the store's
        ``obs``. Checked by ``genosift.scores.check_covariates`` before any data are read; the
        workers of a Dask scheduler get them with the target.
    kinship : array-like or DataFrame, optional
        The samples' kinship, for the mixed model (``method="lmm"``): an array of one row and
        column per row of the store or per sample kept, or a DataFrame indexed by sample id
        (``kept_kinship``). On this machine only.
    method_options : dict, optional
        Options of the method, by name (``genosift.scores.describe(method)``).

    Returns
    -------
    ScoreResult
        The same result as ``genosift.score`` on the matrix in memory. For the class-moment
        methods (fisher, anova, welch, snr, fscore, variance) bit for bit, whatever
        ``chunk_bytes``, on sparse and dense stores: the rows stream into one set of moments.
        Other row methods merge per-chunk statistics, equal up to rounding in the last digits
        (and rank alike: see ``TIE_BITS``).

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, pandas as pd, scipy.sparse as sp
    >>> from genosift.io import Dataset, write_store
    >>> X = sp.csr_matrix(np.array([[0, 3.0, 1], [1, 0, 0], [0, 4, 2], [2, 1, 0], [1, 0, 1], [3, 1, 0]]))
    >>> obs = pd.DataFrame({"y": list("ababab")}, index=["s1", "s2", "s3", "s4", "s5", "s6"])
    >>> ds = Dataset(X, np.array(obs.index), np.array(["k1", "k2", "k3"]), obs)
    >>> path = write_store(ds, pathlib.Path(tempfile.mkdtemp()) / "d.gs.h5ad")
    >>> res = score_store(path, "y", method="fisher")  # row chunks, merged
    >>> np.round(res.scores, 6).tolist(), res.top(2).tolist()
    ([1.5625, 0.446429, 4.0], ['k3', 'k1'])
    >>> np.round(score_store(path, "y", method="auc").scores, 6).tolist()  # feature blocks
    [0.944444, 0.722222, 1.0]
    >>> score_store(path, "y", samples=[0, 1, 2, 3]).n_samples  # the first four samples only
    4
    """
    spec = get_method(method)
    if covariates is not None:
        refuse_covariates(spec, "score_store")
    store = _opened(source)
    check_options_dict(method_options, "method_options", "score_store")
    opts = check_options(spec, method_options or {})
    af = check_af(min_af, max_af, "score_store")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1):
        raise param_error("n_jobs", "score_store", "a positive int or None", n_jobs)
    check_kinship_given(spec, kinship, "score_store")
    rows = rows_kept(samples, store.shape[0])
    source = StoreSource(store, target, rows=rows, covariates=covariates, chunk_bytes=chunk_bytes, scheduler=scheduler,
                         kinship=None if kinship is None else kept_kinship(kinship, store, rows))
    return store_scores(source, spec, opts, n_jobs=n_jobs, af=af)


def store_scores(source, spec, opts, *, n_jobs=None, af=None, riders=()):
    """``score_store`` once its arguments are checked: the ``StoreSource`` (the opened store, its
    target, the increasing ``rows`` kept, covariates, the kept samples' kinship in their order,
    the memory budget and the scheduler), the registered method ``spec`` with its checked options
    ``opts`` and the allele-frequency bounds ``af`` (``check_af``). A tuple as the source's target:
    several targets (``_store_targets``).

    ``riders``: work that rides along the pass on this machine (a Dask scheduler's workers do not
    take them), each told the target with ``begin(y, m, p, names)`` and then shown every row chunk
    (``rows(pairs)``, a generator of the pairs it is given) or every block of whole columns
    (``block(j0, j1, block)``, on the block's thread) that the pass reads, when it says it rides
    along such a pass of this store (``rides_rows(store)``, ``rides_blocks(store)``): the class
    profile (``stored_profile.ProfilePass``) and the patterns (``patterns.PatternPass``)."""
    store, rows, scheduler = source.X, source.rows, source.scheduler
    budget = check_budget(source.chunk_bytes, "score_store")
    store.check_budget(budget, "score_store")
    if isinstance(source.y, tuple):
        return _store_targets(source, spec, opts, n_jobs=n_jobs, af=af, riders=riders)
    y = _target_of(store, source.y, spec)
    n = store.shape[0]
    if spec.streaming == "matrix":
        raise FixError(
            f"Method '{spec.name}' needs the whole matrix in memory (it compares samples over all "
            "features at once), so it cannot score a store out of core. {in_memory}, or choose "
            "another {method} (one whose streaming is 'row' or 'block' in {methods}).",
            owner="score_store", methods=PythonText("genosift.methods()"),
            in_memory=PythonText("Load it with genosift.io.read(path) and call genosift.score"),
            method=FixError.ANY,
        )
    m = n if rows is None else rows.size
    y = _kept_labels(y, n, rows)
    Z, covariate_names = _store_covariates(store, source.covariates, rows)
    target_ = make_target(spec, y, m, Z, source.kinship)
    check_classes(spec, target_)  # before reading: wrong labels fail at once
    if scheduler is not None or current_scheduler() is not None:
        if n_jobs is not None:
            raise ValueError("n_jobs sets the threads of the local engine; on a Dask scheduler the workers' "
                             "threads do the work. Leave out n_jobs or scheduler.")
        res = score_store_tasks(replace(source, y=y, covariates=Z, kinship=target_.kinship), spec, opts, af=af)
        return with_covariates(res, covariate_names)
    for rider in riders:
        rider.begin(y, m, store.shape[1], lambda: store.feature_names)
    if spec.streaming == "rows" and not by_features(store, spec):
        res = _score_rows(store, y, spec, opts, budget, rows, af,
                          [r for r in riders if r.rides_rows(store)])
    else:
        res = _score_blocks(source, target_, spec, opts, n_jobs, af, [r for r in riders if r.rides_blocks(store)])
    return with_covariates(res, covariate_names)


def _kept_labels(y, n, rows):
    """The labels ``y`` of the ``rows`` kept (None: every row of the ``n``), from one per row of
    the store or one per row kept."""
    if y is None:
        return None
    m = n if rows is None else rows.size
    if rows is not None and np.ndim(y) == 1 and len(y) not in (n, m):
        raise ValueError(
            f"y has {len(y)} values, but the store has {n} rows and 'samples' keeps {m}: give "
            "one label per row of the store, or one per sample kept."
        )
    return as_labels(y, n)[rows] if rows is not None and len(y) == n else as_labels(y, m)


def _store_covariates(store, covariates, rows):
    """``(Z, names)``: the checked covariates of the rows kept, or ``(None, [])``."""
    if covariates is None:  # the client reads the store's sample table only when there are some
        return None, []
    return prepare_covariates(covariate_columns(covariates, store.obs, what="the store"), store.shape[0],
                              rows=rows, sample_ids=store.sample_ids, owner="score_store")


def _store_targets(source, spec, opts, *, n_jobs, af, riders):
    """``store_scores`` of the tuple of targets of ``source``: a list of results in their order. A
    whole-column method fits every target on each feature block of one pass (``score_blocks`` with
    ``make_targets``), and every rider rides it; another method reads the store once per target
    (the riders ride the first pass)."""
    if source.scheduler is not None or current_scheduler() is not None:
        raise ValueError("Several targets are scored in one pass on this machine's threads, not on a Dask scheduler: "
                         "leave out scheduler (and use no Dask scheduler), or score each target with score_store.")
    if spec.streaming != "blocks":
        return [store_scores(source.with_target(y), spec, opts, n_jobs=n_jobs, af=af, riders=riders if t == 0 else ())
                for t, y in enumerate(source.y)]
    store, rows = source.X, source.rows
    n, m = store.shape[0], store.shape[0] if rows is None else rows.size
    ys = tuple(_kept_labels(_target_of(store, y, spec), n, rows) for y in source.y)
    Z, covariate_names = _store_covariates(store, source.covariates, rows)
    made = make_targets(spec, ys, m, Z, source.kinship)
    for target in made:
        check_classes(spec, target)
    for rider in riders:
        rider.begin(ys[0], m, store.shape[1], lambda: store.feature_names)
    results = _score_blocks(source, made, spec, opts, n_jobs, af, [r for r in riders if r.rides_blocks(store)])
    return [with_covariates(res, covariate_names) for res in results]


def by_features(store, spec):
    """Whether a row-mergeable method reads the store's feature blocks rather than its rows: a
    class-moment method on a store that holds its matrix by columns too (a sparse store's column
    copy). Only the scores of every feature are then kept, not their moments (32 bytes per
    feature and class), and the blocks run on threads; the numbers are the same bit for bit (each
    feature's sums run over its rows in order, exactly for integer counts)."""
    return spec.statistic is ClassMoments and store.sparse and store.has_column_copy


def _moment_block(spec, block, j0, j1, target, opts, names):
    """A class-moment method on a block of whole columns (``by_features``): its ``Scores``."""
    try:
        stats = ClassMoments.from_chunk(block, target.codes)
    except ValueError:  # again, so that the message names the features
        ClassMoments.from_chunk(block, target.codes, feature_names=names.take(np.arange(j0, j1)))
        raise
    return spec.func(stats, **opts)


def _score_blocks(source, target, spec, opts, n_jobs, af=None, riders=()):
    """A whole-column method (or a class-moment one, ``by_features``) over the feature blocks of
    the store of ``source`` (the ``rows`` kept, within its budget), on threads; each block is also
    shown to the ``riders`` (``store_scores``)."""
    store, rows, budget = source.X, source.rows, check_budget(source.chunk_bytes, "score_store")
    n, p = store.shape
    names = store.names_loader()  # decoded where a message or the result shows them
    moments = spec.streaming == "rows"
    # half the budget for the blocks in flight (2 per thread, one being read), half for reading
    jobs = int(n_jobs or engine.threads())
    share = max(1, budget // 2 // (2 * jobs + 1), store.chunk_need)  # a compressed chunk is read whole
    width = block_width(n, p, share)

    def prepared(blocks, bar):
        for j0, j1, block in blocks:
            bar.advance(j1 - j0)
            yield j0, j1, float_block(block, rows, keep_sparse=spec.sparse_blocks or moments)

    if moments:  # results per feature and class; sparse blocks cut by their entries
        k = 1 if target.classes is None else len(target.classes)
        reads = entry_blocks(store, share, 32 * k)
    else:
        reads = store.feature_blocks(width, chunk_bytes=max(1, budget // 2, store.chunk_need))
    tap = CarrierTap()
    with engine.progress("Reading feature blocks", total=p, unit="features") as bar:
        blocks = prepared(reads, bar)
        if af is not None:  # carriers of each block as it is read
            blocks = tap.blocks(blocks, p)
        show = _shown(riders)  # on each block's thread
        if moments:
            def one(item):
                if show is not None:
                    show(*item)
                return _moment_block(spec, item[2], item[0], item[1], target, opts, names)

            parts = engine.map_blocks(one, blocks, n_jobs=jobs)
            res = build_result(spec, join_scores(parts), target, names, opts)
        else:
            res = score_blocks(spec, blocks, target, names, opts, n_jobs=jobs, each=show)
        if isinstance(res, list):  # several targets
            return [with_af(each, tap.counts, af) for each in res]
        return with_af(res, tap.counts, af)


def _shown(riders):
    """The ``each`` of ``score_blocks`` that shows a block to every rider, or None for none."""
    if not riders:
        return None

    def show(j0, j1, block):
        for rider in riders:
            rider.block(j0, j1, block)

    return show


def entry_blocks(store, share, per_feature):
    """The feature blocks of a sparse store with its column copy for a pass that keeps
    ``per_feature`` bytes of results for each feature of a block: each block within ``share``
    bytes of stored entries (a float64 copy of each counted) and of results."""
    return store.feature_blocks(max(1, share // per_feature), chunk_bytes=share, entry_bytes=store.entry_bytes + 8)
