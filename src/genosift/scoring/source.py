"""What the user gave, told apart once: ``source`` turns any input into a ``Source``.

``genosift.score``, ``genosift.profile``, the jobs behind the commands and the store-screened
``evaluate`` all start here. ``source`` decides which of five forms the input takes and does
every check that depends on the form alone (a ``layer`` of what has no layers, a scheduler for
data read here, row choices for data in memory, covariates for a stream); the ``Source`` then
runs a method (``Source.score``) or the per-class profile (``Source.profile``) with the driver
of its form:

===========  ======================================================  ===========================
form         what it holds                                           driver
===========  ======================================================  ===========================
``matrix``   an array, sparse matrix or DataFrame in memory (files   ``scoring.memory``
             other than stores, and AnnData objects in memory, are
             read into one)
``stream``   an iterator of ``(X_chunk, y_chunk)`` row chunks        ``scoring.memory``
``store``    a genosift store (``io.Store``) and the rows kept       ``scoring.store``
``dask``     a Dask array or DataFrame                               ``scoring.dask``
``backed``   a backed AnnData (``read_h5ad(path, backed="r")``)      ``scoring.anndata``
===========  ======================================================  ===========================
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np

from ..core.engine import is_chunk_stream
from ..core.validation import as_matrix

__all__ = ["FORMS", "Source", "StoreRows", "in_memory", "source"]

FORMS = ("matrix", "stream", "store", "dask", "backed")


@dataclass(frozen=True, eq=False)
class Source:
    """One input, in one of ``FORMS``, with its target and what reading it needs.

    Attributes
    ----------
    form : str
        One of ``FORMS``.
    X : object
        The matrix, the chunk iterator, the ``io.Store``, the Dask collection or the backed AnnData.
    y : object
        The labels or numeric target, one per row scored (for a store also the name of a column
        of its sample table; for a backed AnnData also that of an ``obs`` column); None.
    feature_names : sequence or None
        None: the input's own (a DataFrame's columns, a store's names, ``x0, x1, ...``).
    rows : ndarray or None
        The increasing row indices kept (None: every row): for a store, those read; for a matrix,
        those taken from the data given (``X`` holds just them, ``n_given`` the rows it had), by
        ``samples`` and the samples without a label (see ``source``).
    covariates : object
        One row per sample scored (or, for a store or a backed AnnData, per row of the file),
        matched to the samples where they carry ids; None.
    chunk_bytes, scheduler : optional
        The reads of a store or backed file, and where Dask tasks run.
    binary : bool
        For a backed AnnData: read its values as presence/absence (the other forms already are).
    """

    form: str
    X: object
    y: object = None
    feature_names: object = None
    rows: object = None
    covariates: object = None
    chunk_bytes: object = None
    scheduler: object = None
    binary: bool = False
    kinship: object = None
    n_given: object = None

    def kept(self, values):
        """``values`` given one per row of the data (a matrix's before its rows were taken, a
        store's rows) for the rows kept; values of another length as they are."""
        n = self.X.shape[0] if self.form == "store" else self.n_given
        if self.rows is None or values is None or n is None or len(values) != n:
            return values
        return values.iloc[self.rows] if hasattr(values, "iloc") else np.asarray(values)[self.rows]

    def score(self, spec, opts, bounds=None):
        """``genosift.score`` of this input with the registered method ``spec``, its checked
        options ``opts`` and the allele-frequency bounds ``bounds`` (``scores.check_af``)."""
        if self.form in ("matrix", "stream"):
            from .memory import score_memory

            return score_memory(spec, self.X, self.y, self.feature_names, opts, bounds, self.covariates,
                                kinship=self.kinship)
        if self.form == "store":
            from .store import store_scores

            return self._named(store_scores(self.X, self.y, spec, opts, rows=self.rows, chunk_bytes=self.chunk_bytes,
                                            scheduler=self.scheduler, af=bounds, covariates=self.covariates,
                                            kinship=self.kinship))
        if self.form == "dask":
            from .dask import score_collection

            return score_collection(self.X, self.y, spec, opts, feature_names=self.feature_names,
                                    scheduler=self.scheduler, af=bounds, covariates=self.covariates,
                                    kinship=self.kinship)
        from .anndata import score_backed

        return score_backed(self.X, self.y, spec, opts, feature_names=self.feature_names, chunk_bytes=self.chunk_bytes,
                            scheduler=self.scheduler, binary=self.binary, af=bounds, covariates=self.covariates,
                            kinship=self.kinship)

    def score_targets(self, spec, opts, ys, bounds=None, *, riders=()):
        """``score`` of each target of ``ys`` (a tuple: one value per row each, or for a store the
        names of columns of its sample table) in one pass: a list of results in their order
        (``scoring.memory.score_memory_targets``, ``scoring.store.store_scores``; ``riders`` ride a
        store's pass). Data in memory and stores only."""
        ys = tuple(ys)
        if self.form == "matrix":
            from .memory import score_memory_targets

            return score_memory_targets(spec, self.X, ys, self.feature_names, opts, bounds, self.covariates,
                                        kinship=self.kinship)
        if self.form == "store":
            from .store import store_scores

            return [self._named(res) for res in store_scores(
                self.X, ys, spec, opts, rows=self.rows, chunk_bytes=self.chunk_bytes, scheduler=self.scheduler,
                af=bounds, covariates=self.covariates, kinship=self.kinship, riders=riders)]
        what = {"stream": "a stream of row chunks", "dask": "a Dask collection", "backed": "a backed AnnData"}
        raise ValueError(f"Several targets are scored in one pass of data in memory or of a store, not of "
                         f"{what[self.form]}: score each target with genosift.score, or pass an array, a sparse "
                         "matrix, a DataFrame, an AnnData in memory or a store.")

    def _named(self, res):
        """A store's result under ``feature_names`` when they were given (else the store's own)."""
        if self.feature_names is None:
            return res
        return replace(res, names=np.asarray(self.feature_names, dtype=object), names_loader=None)

    def score_and_profile(self, spec, opts, bounds=None, *, kind, folder=None, riders=()):
        """``score`` and the ``profile`` of ``kind`` ("classes", "numeric" or "none", see
        ``profiles.kind_for``) of this input: ``(result, profile)``.

        A store is read once: the scoring pass on this machine makes the profile from the row
        chunks or feature blocks it reads (``stored_profile.ProfilePass``), a ``StoredProfile``
        in the order of the ranking in a temporary file in ``folder`` (close it when done) when
        it reads feature blocks. Other inputs (and a store scored by Dask workers) are profiled
        after they are scored, as ``profile(on_disk=True)`` does. ``riders``: more work to ride
        along a store's pass (``scoring.store.store_scores``; see whether each ``began``).
        """
        if self.form == "store":
            from .schedulers import current_scheduler
            from .store import store_scores
            from .stored_profile import ProfilePass

            tap = None if self.scheduler is not None or current_scheduler() is not None else ProfilePass(
                kind, folder=folder)
            try:
                res = self._named(store_scores(self.X, self.y, spec, opts, rows=self.rows, chunk_bytes=self.chunk_bytes,
                                               scheduler=self.scheduler, af=bounds, covariates=self.covariates,
                                               kinship=self.kinship, riders=() if tap is None else (tap, *riders)))
                prof = None if tap is None else tap.result(res.ranks)
            finally:
                if tap is not None:
                    tap.close()
            if prof is not None:
                return res, prof
        else:
            res = self.score(spec, opts, bounds)
        return res, self.profile_of(kind, folder=folder, ranks=res.ranks)

    def profile_of(self, kind, *, folder=None, ranks=None):
        """The ``profile`` of ``kind`` (``profiles.kind_for``) of a result's features, in the
        order of its ``ranks`` when kept on disk, as ``score_and_profile`` makes it after scoring."""
        if kind == "none":
            return replace(self, y=None).profile("auto", on_disk=True, folder=folder, ranks=ranks)
        return self.profile(kind, on_disk=True, folder=folder, ranks=ranks)

    def patterns(self, bounds=None):
        """The distinct patterns of the features (``scoring.patterns.count_patterns``) in one pass,
        among those inside the allele-frequency ``bounds`` (``scores.check_af``; None: all)."""
        from . import patterns as pat

        names = self.feature_names
        if self.form == "store":
            from ..io.store import chunk_budget
            from .store import entry_blocks, labelled_chunks

            store, p = self.X, self.X.shape[1]
            budget = chunk_budget(self.chunk_bytes, "count_patterns")
            if store.sparse and store.has_column_copy:  # whole columns: one pass over the column copy
                blocks = ((j0, j1, block if self.rows is None else block[self.rows]) for j0, j1, block in
                          entry_blocks(store, max(1, budget // 2), 40))  # in the stored type: no float64 copy
                hashes = pat.hash_columns(blocks, p, "the store")
                n = store.shape[0] if self.rows is None else self.rows.size
            else:
                hashes, n = pat.hash_rows(labelled_chunks(store, None, budget, self.rows), p, "the store")
            return pat.patterns_of(hashes, n, bounds, store.names_loader() if names is None else names)
        if self.form == "dask":
            from .dask import as_array, compute, opened

            with opened(self.scheduler) as chosen:
                X, own = as_array(self.X, names, chosen)
                X = X.rechunk({1: -1})  # blocks of whole rows
                hashes, n = pat.hash_rows(((compute(X.blocks[i], chosen),) for i in range(X.numblocks[0])),
                                          X.shape[1])
            return pat.patterns_of(hashes, n, bounds, own)
        if self.form == "backed":
            from .anndata import backed_rows

            _, chunks, own = backed_rows(self.X, None, self.chunk_bytes, self.binary)
            hashes, n = pat.hash_rows(chunks)
            return pat.patterns_of(hashes, n, bounds, own if names is None else names)
        if self.form == "stream":
            first = {}

            def rows():
                for chunk, *rest in self.X:
                    M, own = as_matrix(chunk)
                    first.setdefault("names", own)
                    yield M, *rest

            hashes, n = pat.hash_rows(rows())
            return pat.patterns_of(hashes, n, bounds, first.get("names") if names is None else names)
        from ..core.engine import block_width, column_blocks

        M, own = as_matrix(self.X, keep_csc=True)
        blocks = column_blocks(M, block_width(*M.shape), keep_sparse=True)  # on the engine's threads
        hashes = pat.hash_columns(blocks, M.shape[1])
        return pat.patterns_of(hashes, M.shape[0], bounds, own if names is None else names)

    def profile(self, target="auto", *, on_disk=False, folder=None, ranks=None):
        """``genosift.profile`` of this input: per-class means and prevalence and the signed effect.

        ``target``: "auto", "classes" or "numeric" (see ``genosift.profile``). ``on_disk``: a
        sparse store with its column copy gives a ``StoredProfile`` read by feature blocks and kept
        in a temporary file in ``folder`` in the order of ``ranks`` (close it when done), for the
        ranking tables of millions of features; any other input a ``Profile``.
        """
        from . import profiles

        if self.form == "store":
            store = self.X
            if on_disk and store.sparse and store.has_column_copy:
                from .stored_profile import stored_profile

                kind = profiles.resolve_kind(target, self.y, store.shape[0] if self.rows is None else self.rows.size)
                return stored_profile(store, self.y, kind, rows=self.rows, ranks=ranks, chunk_bytes=self.chunk_bytes,
                                      folder=folder)
            return profiles.profile_store(store, self.y, target, self.feature_names, self.rows, self.chunk_bytes)
        if self.form == "dask":
            return profiles.profile_dask(self.X, self.y, target, self.feature_names, self.scheduler)
        if self.form == "stream":
            return profiles.profile_stream(self.X, target, self.feature_names)
        if self.form == "backed":
            from .anndata import backed_rows

            y, chunks, names = backed_rows(self.X, self.y, self.chunk_bytes, self.binary)
            kind = profiles.resolve_kind(target, y, self.X.n_obs)
            return profiles.profile_stream(chunks, kind, names if self.feature_names is None else self.feature_names)
        M, names = as_matrix(self.X, keep_csc=True)  # each statistic reads the layout it takes
        return profiles.profile_matrix(M, self.y, target, names if self.feature_names is None else self.feature_names)


class StoreRows:
    """Rows of a store, not loaded: what ``Dataset.X`` holds when the data stay on disk.

    Indexing by rows (an index array or a boolean mask) gives the rows kept, so the metadata
    join and the label filters work on it as on an array; scoring then streams just those rows.
    """

    def __init__(self, store, rows=None):
        self.store = store
        self.rows = np.arange(store.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)

    @property
    def shape(self):
        return (self.rows.size, self.store.shape[1])

    def __getitem__(self, index):
        return StoreRows(self.store, self.rows[index])

    def source(self, y=None, *, chunk_bytes=None, covariates=None, kinship=None):
        """These rows as a ``Source`` of the store, with their target ``y`` (one per row kept),
        ``covariates`` (one row per row kept, or per row of the store) and ``kinship``
        (``store.kept_kinship``)."""
        from .store import kept_kinship, rows_kept

        rows = rows_kept(self.rows, self.store.shape[0])
        return Source("store", self.store, y, rows=rows, covariates=covariates, chunk_bytes=chunk_bytes,
                      kinship=None if kinship is None else kept_kinship(kinship, self.store, rows))

    def read_columns(self, columns):
        """The features ``columns`` of these rows, in the rows' order (read in the store's): CSR for
        a sparse store, else an array, in the stored type."""
        import scipy.sparse as sp

        order = np.argsort(self.rows, kind="stable")
        M = self.store.read_columns(columns, rows=self.rows[order])
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        return sp.csr_matrix(M)[back] if sp.issparse(M) else np.asarray(M)[back]


def in_memory(X):
    """``X`` as a matrix in memory: store rows are read (all their columns), anything else as is."""
    if isinstance(X, StoreRows):
        return X.store.to_dataset().X[X.rows]
    return X


def source(X, y=None, *, owner="score", feature_names=None, layer=None, binary=False, chunk_bytes=None,
           scheduler=None, samples=None, covariates=None, labels_required=False, kinship=None):
    """The ``Source`` of ``X`` (any input ``genosift.score`` takes) and its target ``y``.

    The rows scored are those ``samples`` picks (``core.samples.sample_rows``: sample ids where
    the data have ids, else a boolean mask or row positions; in the data's order) that have a
    label: a ``y`` Series indexed by sample id is matched to the data's ids (the samples it does
    not list are left out; ids the data lack are an error), and the samples whose label is
    missing in a named column of the sample table or in such a Series are left out, each with a
    warning saying how many. ``kinship``: the samples' kinship (``genosift.score``'s), put in the
    order of the rows scored.
    """
    found = _source(X, y, owner=owner, feature_names=feature_names, layer=layer, binary=binary,
                    chunk_bytes=chunk_bytes, scheduler=scheduler, samples=samples, covariates=covariates,
                    labels_required=labels_required)
    if kinship is None:
        return found
    if found.form == "stream":
        raise ValueError(f"{owner} fits a mixed model on whole columns: it cannot read a stream of row chunks. Pass "
                         "an array, a sparse matrix, a DataFrame, an AnnData, a Dask array or a store.")
    return replace(found, kinship=_aligned_kinship(kinship, X, found))


def _aligned_kinship(kinship, X, found):
    """``kinship`` in the order of the rows scored (``scores.kinship_by_ids`` for a table indexed
    by sample id: a DataFrame's index, an AnnData's ``obs_names``; ``store.kept_kinship`` for a
    store); an array (or a table indexed by position) is taken as it is, or its rows kept where
    it has one row per row of the data given."""
    from ..io.anndata import is_anndata
    from ..scores import frame_sample_ids, has_sample_ids, kinship_by_ids

    if found.form == "store":
        from .store import kept_kinship

        return kept_kinship(kinship, found.X, found.rows)
    if found.form == "dask":  # a Dask DataFrame's index holds the ids: computed once here
        ids = np.asarray(X.index.compute(), dtype=object) if hasattr(X, "columns") else None
        return kinship_by_ids(kinship, ids)
    ids = np.asarray(X.obs_names, dtype=object) if is_anndata(X) else frame_sample_ids(X)
    if found.rows is None:
        return kinship_by_ids(kinship, ids)
    if has_sample_ids(kinship):
        return kinship_by_ids(kinship, None if ids is None else ids[found.rows])
    K = np.asarray(kinship, dtype=np.float64)
    return K[np.ix_(found.rows, found.rows)] if K.ndim == 2 and K.shape[0] == found.n_given else K


def _source(X, y=None, *, owner="score", feature_names=None, layer=None, binary=False, chunk_bytes=None,
            scheduler=None, samples=None, covariates=None, labels_required=False):
    """``source`` without the kinship.

    ``binary``: read every value as presence/absence, in every form (a store is opened that way,
    not rewritten; sparse stays sparse). ``samples``: the samples to use (see ``source``).
    ``covariates``: as ``genosift.score`` takes them; a stream refuses them, AnnData resolve
    ``obs`` column names and tables indexed by ``obs_names``, data files resolve their per-sample
    columns, tables indexed by sample id are put in the samples' order. ``labels_required``:
    ``y`` of an AnnData must be given. ``owner`` names the public function in messages.
    """
    from ..io.anndata import is_anndata
    from .schedulers import is_dask_collection

    if covariates is not None and is_chunk_stream(X):
        raise ValueError(f"{owner} adjusts for covariates on whole columns: it cannot read a stream of row chunks. "
                         "Pass an array, a sparse matrix, a DataFrame or a store.")
    if is_anndata(X):
        from ..io.anndata import covariates_of

        covariates = None if covariates is None else covariates_of(X, covariates)
        if X.isbacked and layer is None:
            _refuse_rows(samples, None, owner)
            return Source("backed", X, y, feature_names, covariates=covariates, chunk_bytes=chunk_bytes,
                          scheduler=scheduler, binary=bool(binary))
        from ..io.anndata import labels_of, matrix_of, names_of

        named = isinstance(y, str)
        if not _by_id(y):  # a Series indexed by sample id is matched to the obs_names below
            y = labels_of(X, y, required=labels_required)
        names = names_of(X.var_names) if feature_names is None else feature_names
        return _in_memory(matrix_of(X, layer), y, names, binary, covariates, chunk_bytes, scheduler, samples, owner,
                          ids=np.asarray(X.obs_names, dtype=object), named=named)
    if layer is not None:
        from ..io import format_of

        if not isinstance(X, (str, os.PathLike)) or not os.path.isfile(X) or format_of(X) not in ("h5ad", "store"):
            what = f"the file {str(X)!r}" if isinstance(X, (str, os.PathLike)) else f"a {type(X).__name__}"
            raise TypeError(f"layer={layer!r} picks a layer of an AnnData or of an .h5ad file; X is {what}. "
                            "Leave out layer.")
    if is_dask_collection(X):
        if chunk_bytes is not None:
            raise ValueError("chunk_bytes sets the reads of a store; a Dask array is read in its own chunks "
                             "(rechunk it to change them). Leave out chunk_bytes.")
        _refuse_rows(samples, None, owner)
        if binary:
            from ..core.transforms import presence

            X = X.map_partitions(presence) if hasattr(X, "map_partitions") else X.map_blocks(presence, dtype=np.float64)
        return Source("dask", X, y, feature_names, covariates=covariates, scheduler=scheduler)
    if hasattr(X, "row_chunks") or isinstance(X, (str, os.PathLike)) and layer is None and _is_store_file(X):
        from ..io import open_store

        if not hasattr(X, "row_chunks"):
            X = open_store(X, binary=binary)
        elif binary and not X.binary:  # a store opened as it is, read as presence here
            X = open_store(X.path, binary=True)
        if feature_names is not None and np.shape(feature_names) != (X.shape[1],):
            from ..core.validation import param_error

            raise param_error("feature_names", owner, f"{X.shape[1]} names, one per feature of the store",
                              f"{np.size(feature_names)} names")
        rows, y = _store_rows(X, y, samples, owner)
        return Source("store", X, y, feature_names, rows=rows, covariates=covariates, chunk_bytes=chunk_bytes,
                      scheduler=scheduler)
    if isinstance(X, (str, os.PathLike)):
        named = isinstance(y, str)
        X, y, names, covariates, ids = _read_file(X, y, layer, covariates)
        return _in_memory(X, y, names if feature_names is None else feature_names, binary, covariates, chunk_bytes,
                          scheduler, samples, owner, ids=ids, named=named)
    from ..scores import frame_sample_ids

    return _in_memory(X, y, feature_names, binary, covariates, chunk_bytes, scheduler, samples, owner,
                      ids=frame_sample_ids(X), align=True)


def _is_store_file(path):
    from ..io import format_of

    return os.path.isfile(path) and format_of(path) == "store"


def _refuse_rows(samples, chunk_bytes, owner):
    """Refuse ``samples`` for data read as they come (a stream of row chunks, a Dask collection, a
    backed AnnData) and ``chunk_bytes`` for data other than stores and backed files."""
    if samples is not None:
        raise ValueError(f"'samples' chooses the samples of data in memory or of a store; {owner} reads these data "
                         "as they come (a stream of row chunks, a Dask collection or a backed AnnData). Take the rows "
                         "first (X[rows]) and leave out samples, or write a store (genosift.io.write_store).")
    if chunk_bytes is not None:
        raise ValueError(f"'chunk_bytes' chooses the rows and reads of a store; {owner} reads these data as they "
                         "are. For data in memory leave it out; to read in bounded memory, write a store first "
                         "(genosift.io.write_store).")


def _by_id(y):
    """Whether ``y`` is a pandas Series indexed by sample id (``scores.has_sample_ids``)."""
    from ..scores import has_sample_ids

    return hasattr(y, "reindex") and getattr(y, "ndim", 0) == 1 and has_sample_ids(y)


def _kept_rows(ids, n, y, samples, owner, *, named=False):
    """``(rows, y)``: the increasing positions of the rows scored among the ``n`` of the data (None:
    all) and their labels (``y`` as given when it has one per row kept or no row is left out).

    The rows are those ``samples`` picks (``core.samples.sample_rows``, in the data's order) that
    have a label: a Series ``y`` indexed by sample id is matched to the data's ``ids`` (where they
    have ids; the samples it lacks are left out, ids of samples the data lack are an error), and
    the missing labels of such a Series or of a column of the sample table (``named``) are left
    out. Each kind of sample left out is said in one warning."""
    from ..core.samples import sample_rows

    picked = sample_rows(samples, n, ids, owner=owner)
    rows = None if picked is None or picked.size == n else np.sort(picked)
    labelled = None
    if ids is not None and _by_id(y):
        y, labelled = _labels_by_id(y, ids, owner)
    elif named and y is not None:
        import pandas as pd

        labelled = ~np.asarray(pd.isna(np.asarray(y, dtype=object)), dtype=bool)
        if labelled.all():
            labelled = None
        else:
            _warn_left_out(int((~labelled if rows is None else ~labelled[rows]).sum()), "have no label", owner)
    if labelled is None:
        if rows is None or y is None:
            return rows, y
        if len(y) == n:
            return rows, (y.iloc[rows] if hasattr(y, "iloc") else np.asarray(y)[rows])
        if len(y) == rows.size and not np.array_equal(rows, picked):
            raise ValueError(f"y has one value per sample that 'samples' keeps, but {owner} takes the samples in the "
                             "data's order and 'samples' are in another: give y one value per row of the data, or "
                             "give samples in the data's order.")
        return rows, y
    keep = labelled if rows is None else np.zeros(n, dtype=bool)
    if rows is not None:
        keep[rows] = labelled[rows]
    rows = np.flatnonzero(keep)
    if not rows.size:
        raise ValueError(f"No sample given to {owner} has a label: give the labels of the samples to score.")
    return (None if rows.size == n else rows), np.asarray(y)[rows]


def _labels_by_id(y, ids, owner):
    """``(values, labelled)``: the labels of a Series ``y`` indexed by sample id, one per row of the
    data of ``ids`` (any value where it has none), and which rows have one (listed and not missing)."""
    import pandas as pd

    from ..core.validation import names_list

    index = pd.Index([str(i) for i in y.index])
    if not index.is_unique:
        repeated = sorted(set(index[index.duplicated()]))
        raise ValueError(f"y is a Series whose index repeats sample id(s) {names_list(repeated)}: each sample needs "
                         "one label.")
    data = pd.Index([str(i) for i in ids])
    unknown = index[~index.isin(data)]
    if len(unknown):
        raise ValueError(f"y is a Series indexed by sample id, but {len(unknown)} of its ids are not samples of the "
                         f"data: {names_list(list(unknown))}. Give y the labels of the data's samples only "
                         "(y.drop([...])), or pass the labels as an array in the order of the rows.")
    where = index.get_indexer(data)
    listed = where >= 0
    values = y.to_numpy()[np.where(listed, where, 0)]
    has = listed & ~np.asarray(pd.isna(np.asarray(values, dtype=object)), dtype=bool)
    if (~listed).any():
        _warn_left_out(int((~listed).sum()), "are not in y's index", owner)
    if (listed & ~has).any():
        _warn_left_out(int((listed & ~has).sum()), "have a missing label in y", owner)
    return values, has


def _warn_left_out(count, why, owner):
    import warnings

    if count:
        warnings.warn(f"{count} sample(s) {why} and were left out of {owner}; choose the samples with "
                      "samples=[...] to say which are scored.", UserWarning, stacklevel=5)


def _store_rows(store, y, samples, owner):
    """``(rows, y)`` of a store (``_kept_rows`` over its sample ids, as ``store.rows_kept`` keeps
    them: None for every row); ``y`` naming a column of its sample table stays that name unless
    samples without a label are left out."""
    from .store import rows_kept, store_column

    named = isinstance(y, str)
    whole = named and not _has_missing(store_column(store, y))  # the column as the store reads it
    if samples is None and not _by_id(y) and (whole or not named):
        return None, y
    ids, n = np.asarray(store.sample_ids, dtype=object), store.shape[0]
    if whole:
        return rows_kept(_kept_rows(ids, n, None, samples, owner)[0], n), y
    rows, values = _kept_rows(ids, n, store_column(store, y) if named else y, samples, owner, named=named)
    return rows_kept(rows, n), values


def _has_missing(values):
    import pandas as pd

    return bool(np.asarray(pd.isna(np.asarray(values, dtype=object)), dtype=bool).any())


def _in_memory(X, y, feature_names, binary, covariates, chunk_bytes, scheduler, samples, owner, *, ids=None,
               named=False, align=False):
    """A ``matrix`` or ``stream`` source: data here, so no scheduler and no reads to size; the rows
    kept (``_kept_rows``) are taken from ``X`` and from ``covariates`` given per row of the data,
    and covariates indexed by sample id are put in the order of the rows kept (``align``: those
    of ``X``'s ids have not been yet)."""
    if scheduler is not None:
        raise ValueError(f"The 'scheduler' parameter of {owner} must be None for data in memory (it runs Dask "
                         "arrays and stores; wrap X with dask.array.from_array(X, chunks=...) to score it by "
                         f"Dask tasks). Got {scheduler!r} instead.")
    stream = is_chunk_stream(X)
    _refuse_rows(samples if stream else None, chunk_bytes, owner)
    if stream and y is not None:
        raise ValueError("A chunk stream carries its own labels: pass y=None and yield (X, y) pairs.")
    rows = n = None
    if not stream:
        n = X.shape[0] if hasattr(X, "shape") and len(X.shape) == 2 else len(X)
        rows, y = _kept_rows(ids, n, y, samples, owner, named=named)
        if rows is not None:
            X = _take_rows(X, rows)
    if covariates is not None and (align or rows is not None):
        from ..scores import align_covariates, has_sample_ids

        if ids is not None and has_sample_ids(covariates):
            covariates = align_covariates(covariates, ids if rows is None else ids[rows])
        elif rows is not None and not isinstance(covariates, (str, list, tuple)) and len(covariates) == n:
            covariates = covariates.iloc[rows] if hasattr(covariates, "iloc") else np.asarray(covariates)[rows]
    if binary:
        from ..core.transforms import presence

        X = ((presence(c), *rest) for c, *rest in X) if stream else presence(X)
    return Source("stream" if stream else "matrix", X, y, feature_names, covariates=covariates, rows=rows,
                  n_given=n)


def _take_rows(X, rows):
    """The ``rows`` of a matrix in memory: a DataFrame's by position, a sparse matrix's in its format
    (COO, which cannot be indexed, as CSR), an array-like's as an array."""
    import scipy.sparse as sp

    if hasattr(X, "iloc"):
        return X.iloc[rows]
    if sp.issparse(X):
        return (X.tocsr() if X.format not in ("csr", "csc") else X)[rows]
    return np.asarray(X)[rows]


def _read_file(path, y, layer, covariates):
    """A data file other than a store, read into memory: ``(X, y, feature_names, covariates, ids)``
    with ``y`` and the covariates looked up in its per-sample columns when they name them."""
    from ..io import format_of, read
    from ..scores import align_covariates, covariate_columns

    named = ([y] if isinstance(y, str) else []) + _column_names(covariates)
    table = bool(named) and format_of(path) in ("csv", "tsv", "parquet")
    if layer is not None:
        data = read(path, format="h5ad", layer=layer)
    else:
        data = read(path, keep=named) if table else read(path)
    if isinstance(y, str):
        if data.obs is None or y not in data.obs.columns:
            have = [] if data.obs is None else list(data.obs.columns)
            raise ValueError(f"y names the column {y!r}, which {str(path)!r} does not have (sample columns: {have}). "
                             "Pass the labels as an array, or read the file with genosift.io.read(..., keep=[...]).")
        y = data.obs[y].to_numpy()
    if covariates is not None:
        covariates = align_covariates(covariate_columns(covariates, data.obs, what="the data file"), data.sample_ids)
    return data.X, y, data.feature_names, covariates, data.sample_ids


def _column_names(covariates):
    """The per-sample columns ``covariates`` names (a name, or a list of names), else none."""
    if isinstance(covariates, str):
        return [covariates]
    if isinstance(covariates, (list, tuple)) and all(isinstance(c, str) for c in covariates):
        return list(covariates)
    return []
