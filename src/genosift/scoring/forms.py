"""Each form's way to be scored, profiled and counted: the operations of a ``sources.Source``
that run a driver of this package, chosen by the Source's class (``functools.singledispatch``).

``sources`` tells the input apart and knows what it holds; the drivers that read each form live
here, above it: ``scoring.memory`` for a ``MatrixSource`` or a ``StreamSource``,
``scoring.store`` for a ``StoreSource``, ``scoring.dask`` for a ``DaskSource`` and
``scoring.anndata`` for a ``BackedSource``. ``score_source`` runs a method (what
``genosift.score`` returns), ``score_source_targets`` several targets in one pass,
``profile_source`` the per-class profile (``genosift.profile``), ``score_and_profile`` both (a
store read once), ``profile_after`` the profile of a result's features, and ``source_patterns``
the distinct patterns (``genosift.count_patterns``).
"""
from __future__ import annotations

from dataclasses import replace
from functools import singledispatch

import numpy as np

from ..core.validation import as_matrix
from ..sources import BackedSource, DaskSource, MatrixSource, Source, StoreSource, StreamSource

__all__ = ["profile_after", "profile_source", "score_and_profile", "score_source", "score_source_targets",
           "source_patterns"]


@singledispatch
def score_source(data: Source, spec, opts, bounds=None):
    """``genosift.score`` of the input ``data`` with the registered method ``spec``, its checked
    options ``opts`` and the allele-frequency bounds ``bounds`` (``scores.check_af``)."""
    raise TypeError(f"No driver scores a {type(data).__name__}.")


@score_source.register(MatrixSource)
def _score_memory(data, spec, opts, bounds=None):
    from .memory import score_memory

    return score_memory(spec, data.X, data.y, data.feature_names, opts, bounds, data.covariates, kinship=data.kinship)


@score_source.register(StreamSource)
def _score_stream(data, spec, opts, bounds=None):
    from .memory import score_stream

    return score_stream(spec, data.X, data.feature_names, opts, bounds)


@score_source.register(StoreSource)
def _score_store(data, spec, opts, bounds=None):
    from .store import store_scores

    return _named(data, store_scores(data, spec, opts, af=bounds))


@score_source.register(DaskSource)
def _score_dask(data, spec, opts, bounds=None):
    from .dask import score_collection

    return score_collection(data, spec, opts, af=bounds)


@score_source.register(BackedSource)
def _score_backed(data, spec, opts, bounds=None):
    from .anndata import score_backed

    return score_backed(data, spec, opts, af=bounds)


def _named(data, res):
    """A store's result under ``feature_names`` when they were given (else the store's own)."""
    if data.feature_names is None:
        return res
    return replace(res, names=np.asarray(data.feature_names, dtype=object), names_loader=None)


@singledispatch
def score_source_targets(data: Source, spec, opts, ys, bounds=None, *, riders=()):
    """``score_source`` of each target of ``ys`` (a tuple: one value per row each, or for a store
    the names of columns of its sample table) in one pass: a list of results in their order
    (``scoring.memory.score_memory_targets``, ``scoring.store.store_scores``; ``riders`` ride a
    store's pass). Data in memory and stores only."""
    raise ValueError(f"Several targets are scored in one pass of data in memory or of a store, not of "
                     f"{data.what}: score each target with genosift.score, or pass an array, a sparse "
                     "matrix, a DataFrame, an AnnData in memory or a store.")


@score_source_targets.register(MatrixSource)
def _targets_memory(data, spec, opts, ys, bounds=None, *, riders=()):
    from .memory import score_memory_targets

    return score_memory_targets(spec, data.X, tuple(ys), data.feature_names, opts, bounds, data.covariates,
                                kinship=data.kinship)


@score_source_targets.register(StoreSource)
def _targets_store(data, spec, opts, ys, bounds=None, *, riders=()):
    from .store import store_scores

    return [_named(data, res) for res in store_scores(data.with_target(tuple(ys)), spec, opts, af=bounds,
                                                      riders=riders)]


@singledispatch
def score_and_profile(data: Source, spec, opts, bounds=None, *, kind, folder=None, riders=()):
    """``score_source`` and the ``profile_source`` of ``kind`` ("classes", "numeric" or "none",
    see ``profiles.kind_for``) of the input ``data``: ``(result, profile)``.

    A store is read once: the scoring pass on this machine makes the profile from the row
    chunks or feature blocks it reads (``stored_profile.ProfilePass``), a ``StoredProfile``
    in the order of the ranking in a temporary file in ``folder`` (close it when done) when
    it reads feature blocks. Other inputs (and a store scored by Dask workers) are profiled
    after they are scored, as ``profile_source(on_disk=True)`` does. ``riders``: more work to
    ride along a store's pass (``scoring.store.store_scores``; see whether each ``began``).
    """
    res = score_source(data, spec, opts, bounds)
    return res, profile_after(data, kind, folder=folder, ranks=res.ranks)


@score_and_profile.register(StoreSource)
def _score_and_profile_store(data, spec, opts, bounds=None, *, kind, folder=None, riders=()):
    from .schedulers import current_scheduler
    from .store import store_scores
    from .stored_profile import ProfilePass

    tap = None if data.scheduler is not None or current_scheduler() is not None else ProfilePass(kind, folder=folder)
    try:
        res = _named(data, store_scores(data, spec, opts, af=bounds, riders=() if tap is None else (tap, *riders)))
        prof = None if tap is None else tap.result(res.ranks)
    finally:
        if tap is not None:
            tap.close()
    if prof is not None:
        return res, prof
    return res, profile_after(data, kind, folder=folder, ranks=res.ranks)


def profile_after(data, kind, *, folder=None, ranks=None):
    """The ``profile_source`` of ``kind`` (``profiles.kind_for``) of a result's features, in the
    order of its ``ranks`` when kept on disk, as ``score_and_profile`` makes it after scoring."""
    if kind == "none":
        return profile_source(data.with_target(None), "auto", on_disk=True, folder=folder, ranks=ranks)
    return profile_source(data, kind, on_disk=True, folder=folder, ranks=ranks)


@singledispatch
def profile_source(data: Source, target="auto", *, on_disk=False, folder=None, ranks=None):
    """``genosift.profile`` of the input ``data``: per-class means and prevalence and the signed effect.

    ``target``: "auto", "classes" or "numeric" (see ``genosift.profile``). ``on_disk``: a
    sparse store with its column copy gives a ``StoredProfile`` read by feature blocks and kept
    in a temporary file in ``folder`` in the order of ``ranks`` (close it when done), for the
    ranking tables of millions of features; any other input a ``Profile``.
    """
    raise TypeError(f"No driver profiles a {type(data).__name__}.")


@profile_source.register(MatrixSource)
def _profile_matrix(data, target="auto", *, on_disk=False, folder=None, ranks=None):
    from . import profiles

    M, names = as_matrix(data.X, keep_csc=True)  # each statistic reads the layout it takes
    return profiles.profile_matrix(M, data.y, target, names if data.feature_names is None else data.feature_names)


@profile_source.register(StreamSource)
def _profile_stream(data, target="auto", *, on_disk=False, folder=None, ranks=None):
    from . import profiles

    return profiles.profile_stream(data.X, target, data.feature_names)


@profile_source.register(StoreSource)
def _profile_store(data, target="auto", *, on_disk=False, folder=None, ranks=None):
    from . import profiles

    store = data.X
    if on_disk and store.sparse and store.has_column_copy:
        from .stored_profile import stored_profile

        kind = profiles.resolve_kind(target, data.y, store.shape[0] if data.rows is None else data.rows.size)
        return stored_profile(data, kind, ranks=ranks, folder=folder)
    return profiles.profile_store(data, target)


@profile_source.register(DaskSource)
def _profile_dask(data, target="auto", *, on_disk=False, folder=None, ranks=None):
    from . import profiles

    return profiles.profile_dask(data.X, data.y, target, data.feature_names, data.scheduler)


@profile_source.register(BackedSource)
def _profile_backed(data, target="auto", *, on_disk=False, folder=None, ranks=None):
    from . import profiles
    from .anndata import backed_rows

    y, chunks, names = backed_rows(data)
    kind = profiles.resolve_kind(target, y, data.X.n_obs)
    return profiles.profile_stream(chunks, kind, names if data.feature_names is None else data.feature_names)


@singledispatch
def source_patterns(data: Source, bounds=None):
    """The distinct patterns of the features of the input ``data`` (``scoring.patterns.count_patterns``)
    in one pass, among those inside the allele-frequency ``bounds`` (``scores.check_af``; None: all)."""
    raise TypeError(f"No driver counts the patterns of a {type(data).__name__}.")


@source_patterns.register(MatrixSource)
def _patterns_matrix(data, bounds=None):
    from ..core.engine import block_width, column_blocks
    from . import patterns as pat

    M, own = as_matrix(data.X, keep_csc=True)
    blocks = column_blocks(M, block_width(*M.shape), keep_sparse=True)  # on the engine's threads
    hashes = pat.hash_columns(blocks, M.shape[1])
    return pat.patterns_of(hashes, M.shape[0], bounds, own if data.feature_names is None else data.feature_names)


@source_patterns.register(StreamSource)
def _patterns_stream(data, bounds=None):
    from . import patterns as pat

    first = {}

    def rows():
        for chunk, *rest in data.X:
            M, own = as_matrix(chunk)
            first.setdefault("names", own)
            yield M, *rest

    hashes, n = pat.hash_rows(rows())
    names = data.feature_names
    return pat.patterns_of(hashes, n, bounds, first.get("names") if names is None else names)


@source_patterns.register(StoreSource)
def _patterns_store(data, bounds=None):
    from ..core.engine import check_budget
    from . import patterns as pat
    from .store import entry_blocks, labelled_chunks

    store, p, names = data.X, data.X.shape[1], data.feature_names
    budget = check_budget(data.chunk_bytes, "count_patterns")
    if store.sparse and store.has_column_copy:  # whole columns: one pass over the column copy
        blocks = ((j0, j1, block if data.rows is None else block[data.rows]) for j0, j1, block in
                  entry_blocks(store, max(1, budget // 2), 40))  # in the stored type: no float64 copy
        hashes = pat.hash_columns(blocks, p, "the store")
        n = store.shape[0] if data.rows is None else data.rows.size
    else:
        hashes, n = pat.hash_rows(labelled_chunks(store, None, budget, data.rows), p, "the store")
    return pat.patterns_of(hashes, n, bounds, store.names_loader() if names is None else names)


@source_patterns.register(DaskSource)
def _patterns_dask(data, bounds=None):
    from . import patterns as pat
    from .dask import as_array, compute, opened

    with opened(data.scheduler) as chosen:
        X, own = as_array(data.X, data.feature_names, chosen)
        X = X.rechunk({1: -1})  # blocks of whole rows
        hashes, n = pat.hash_rows(((compute(X.blocks[i], chosen),) for i in range(X.numblocks[0])), X.shape[1])
    return pat.patterns_of(hashes, n, bounds, own)


@source_patterns.register(BackedSource)
def _patterns_backed(data, bounds=None):
    from . import patterns as pat
    from .anndata import backed_rows

    _, chunks, own = backed_rows(data.with_target(None))
    hashes, n = pat.hash_rows(chunks)
    return pat.patterns_of(hashes, n, bounds, own if data.feature_names is None else data.feature_names)
