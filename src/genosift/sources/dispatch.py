"""What the user gave, told apart once: ``as_source`` turns any input into a ``Source``.

``genosift.score``, ``genosift.profile``, the jobs behind the commands and the store-screened
``evaluate`` all start here. ``as_source`` decides which of five forms the input takes and does
every check that depends on the form alone (a ``layer`` of what has no layers, a scheduler for
data read here, row choices for data in memory, covariates for a stream); the rows kept are
those of ``sources.rows``. The Source it returns runs a method (``Source.score``) or the
per-class profile (``Source.profile``) with the driver of its form.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace

import numpy as np

from ..core.engine import is_chunk_stream
from .backed import BackedSource
from .dask import DaskSource
from .matrix import MatrixSource
from .rows import by_id, kept_rows, store_rows
from .store import StoreRows, StoreSource
from .stream import StreamSource

__all__ = ["AnnDataTransformMixin", "as_source", "fit_accepts_anndata", "matrix_or_store", "named_targets",
           "selector_input"]


def as_source(X, y=None, *, owner="score", feature_names=None, layer=None, binary=False, chunk_bytes=None,
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
    found = _told_apart(X, y, Reading(owner, feature_names, layer, binary, chunk_bytes, scheduler, samples,
                                      covariates, labels_required))
    if kinship is None:
        return found
    if isinstance(found, StreamSource):
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

    if isinstance(found, StoreSource):
        from .store import kept_kinship

        return kept_kinship(kinship, found.X, found.rows)
    if isinstance(found, DaskSource):  # a Dask DataFrame's index holds the ids: computed once here
        ids = np.asarray(X.index.compute(), dtype=object) if hasattr(X, "columns") else None
        return kinship_by_ids(kinship, ids)
    ids = np.asarray(X.obs_names, dtype=object) if is_anndata(X) else frame_sample_ids(X)
    if found.rows is None:
        return kinship_by_ids(kinship, ids)
    if has_sample_ids(kinship):
        return kinship_by_ids(kinship, None if ids is None else ids[found.rows])
    K = np.asarray(kinship, dtype=np.float64)
    return K[np.ix_(found.rows, found.rows)] if K.ndim == 2 and K.shape[0] == found.n_given else K


@dataclass(frozen=True)
class Reading:
    """How ``as_source`` is asked to read its input, besides the data and the target.

    ``binary``: read every value as presence/absence, in every form (a store is opened that way,
    not rewritten; sparse stays sparse). ``samples``: the samples to use (see ``as_source``).
    ``covariates``: as ``genosift.score`` takes them; a stream refuses them, AnnData resolve
    ``obs`` column names and tables indexed by ``obs_names``, data files resolve their per-sample
    columns, tables indexed by sample id are put in the samples' order. ``labels_required``:
    ``y`` of an AnnData must be given. ``owner`` names the public function in messages.
    ``chunk_bytes`` and ``scheduler``: the reads of a store or a backed file, and where Dask
    tasks run.
    """

    owner: str = "score"
    feature_names: object = None
    layer: object = None
    binary: bool = False
    chunk_bytes: object = None
    scheduler: object = None
    samples: object = None
    covariates: object = None
    labels_required: bool = False


def _told_apart(X, y, reading):
    """``as_source`` without the kinship: the ``Source`` of ``X`` and ``y`` read as ``reading`` says."""
    from ..io.anndata import is_anndata
    from .dask import is_dask_collection

    owner, feature_names, layer, binary = reading.owner, reading.feature_names, reading.layer, reading.binary
    chunk_bytes, scheduler, samples, covariates = (reading.chunk_bytes, reading.scheduler, reading.samples,
                                                   reading.covariates)

    if isinstance(X, StoreRows):  # rows of a store chosen already, not loaded (a Dataset's X left on disk)
        rows = StoreRows(_chosen_store(X, binary, samples, owner), X.rows,
                         X.chunk_bytes if chunk_bytes is None else chunk_bytes)  # the reading's budget, else theirs
        return replace(rows.source(y, covariates=covariates), feature_names=feature_names, scheduler=scheduler)
    if covariates is not None and is_chunk_stream(X):
        raise ValueError(f"{owner} adjusts for covariates on whole columns: it cannot read a stream of row chunks. "
                         "Pass an array, a sparse matrix, a DataFrame or a store.")
    if is_anndata(X):
        from ..io.anndata import covariates_of

        covariates = None if covariates is None else covariates_of(X, covariates)
        if X.isbacked and layer is None:
            _refuse_rows(samples, owner)
            return BackedSource(X, y, feature_names, covariates=covariates, chunk_bytes=chunk_bytes,
                                scheduler=scheduler, binary=bool(binary))
        from ..io.anndata import labels_of, matrix_of, names_of

        named = isinstance(y, str)
        if not by_id(y):  # a Series indexed by sample id is matched to the obs_names below
            y = labels_of(X, y, required=reading.labels_required)
        names = names_of(X.var_names) if feature_names is None else feature_names
        return _in_memory(matrix_of(X, layer), y, replace(reading, feature_names=names, covariates=covariates),
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
        _refuse_rows(samples, owner)
        if binary:
            from ..core.transforms import presence

            X = X.map_partitions(presence) if hasattr(X, "map_partitions") else X.map_blocks(presence, dtype=np.float64)
        return DaskSource(X, y, feature_names, covariates=covariates, scheduler=scheduler)
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
        rows, y = store_rows(X, y, samples, owner)
        return StoreSource(X, y, feature_names, rows=rows, covariates=covariates, chunk_bytes=chunk_bytes,
                           scheduler=scheduler)
    if isinstance(X, (str, os.PathLike)):
        named = isinstance(y, str)
        X, y, names, covariates, ids = _read_file(X, y, layer, covariates)
        return _in_memory(X, y, replace(reading, feature_names=names if feature_names is None else feature_names,
                                        covariates=covariates), ids=ids, named=named)
    from ..scores import frame_sample_ids

    return _in_memory(X, y, reading, ids=frame_sample_ids(X), align=True)


def _chosen_store(X, binary, samples, owner):
    """The store of the store rows ``X`` (``StoreRows``, every one of them scored), read as
    presence/absence where ``binary``."""
    if samples is not None:
        raise ValueError(f"X holds rows of a store chosen already; {owner} scores them all. Take the rows first "
                         "(X[rows]) and leave out samples.")
    store = X.store
    if binary and not store.binary:  # a store opened as it is, read as presence here
        from ..io import open_store

        store = open_store(store.path, binary=True)
    return store


def _is_store_file(path):
    from ..io import format_of

    return os.path.isfile(path) and format_of(path) == "store"


def _refuse_rows(samples, owner):
    """Refuse ``samples`` for data read as they come (a stream of row chunks, a Dask collection, a
    backed AnnData)."""
    if samples is not None:
        raise ValueError(f"'samples' chooses the samples of data in memory or of a store; {owner} reads these data "
                         "as they come (a stream of row chunks, a Dask collection or a backed AnnData). Take the rows "
                         "first (X[rows]) and leave out samples, or write a store (genosift.io.write_store).")


def _refuse_budget(reading):
    """Refuse a memory budget for data other than stores and backed files."""
    if reading.chunk_bytes is not None:
        raise ValueError(f"'chunk_bytes' chooses the rows and reads of a store; {reading.owner} reads these data as "
                         "they are. For data in memory leave it out; to read in bounded memory, write a store first "
                         "(genosift.io.write_store).")


def _in_memory(X, y, reading, *, ids=None, named=False, align=False):
    """A ``matrix`` or ``stream`` source: data here, so no scheduler and no reads to size; the rows
    kept (``kept_rows``) are taken from ``X`` and from the covariates given per row of the data,
    and covariates indexed by sample id are put in the order of the rows kept (``align``: those
    of ``X``'s ids have not been yet)."""
    owner, scheduler, samples, covariates = reading.owner, reading.scheduler, reading.samples, reading.covariates
    if scheduler is not None:
        raise ValueError(f"The 'scheduler' parameter of {owner} must be None for data in memory (it runs Dask "
                         "arrays and stores; wrap X with dask.array.from_array(X, chunks=...) to score it by "
                         f"Dask tasks). Got {scheduler!r} instead.")
    stream = is_chunk_stream(X)
    _refuse_rows(samples if stream else None, owner)
    _refuse_budget(reading)
    if stream and y is not None:
        raise ValueError("A chunk stream carries its own labels: pass y=None and yield (X, y) pairs.")
    rows = n = None
    if not stream:
        n = X.shape[0] if hasattr(X, "shape") and len(X.shape) == 2 else len(X)
        rows, y = kept_rows(ids, n, y, samples, owner, named=named)
        if rows is not None:
            X = _take_rows(X, rows)
    if covariates is not None and (align or rows is not None):
        from ..scores import align_covariates, has_sample_ids

        if ids is not None and has_sample_ids(covariates):
            covariates = align_covariates(covariates, ids if rows is None else ids[rows])
        elif rows is not None and not isinstance(covariates, (str, list, tuple)) and len(covariates) == n:
            covariates = covariates.iloc[rows] if hasattr(covariates, "iloc") else np.asarray(covariates)[rows]
    if reading.binary:
        from ..core.transforms import presence

        X = ((presence(c), *rest) for c, *rest in X) if stream else presence(X)
    return (StreamSource if stream else MatrixSource)(X, y, reading.feature_names, covariates=covariates, rows=rows,
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


def matrix_or_store(X, *, binary=False):
    """``(store, M, ids, labels)`` of ``X`` as the functions that read a matrix or a store as it is
    (the structure of the samples) take it: a path is read (a store opened); a store, opened as
    presence/absence where ``binary``, with its sample ids as ids and labels (``M`` None); a
    ``Dataset``'s matrix and ids; a DataFrame's values (a sparse one as CSR) and index (its ids where
    they are sample ids); else ``X`` as it is (``store``, ``ids`` and ``labels`` None)."""
    from ..io import Dataset, Store, format_of, open_store, read
    from ..scores import has_sample_ids

    if isinstance(X, (str, bytes)) or hasattr(X, "__fspath__"):
        X = open_store(X) if format_of(X) == "store" else read(X)
    if isinstance(X, Store):
        store = X if X.binary == binary else open_store(X.path, binary=binary)
        ids = np.asarray(store.sample_ids, dtype=object)
        return store, None, ids, ids
    if isinstance(X, Dataset):
        ids = np.asarray(X.sample_ids, dtype=object)
        return None, X.X, ids, ids
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        labels = X.index.to_numpy()
        ids = np.asarray(labels, dtype=object) if has_sample_ids(X) else None
        sparse = len(X.columns) > 0 and all(str(t).startswith("Sparse") for t in X.dtypes)
        return None, X.sparse.to_coo().tocsr() if sparse else X.to_numpy(), ids, labels
    return None, X, None, None


def named_targets(X, names):
    """``(name, values)`` of each target of ``genosift.score_targets`` that ``names`` names: a column
    of an AnnData's ``obs`` (its values) or of a store's sample table (the name, read with the
    store); other data have no such columns."""
    from ..io.anndata import is_anndata, labels_of

    if is_anndata(X):
        return [(t, labels_of(X, t, required=True)) for t in names]
    if hasattr(X, "row_chunks") or isinstance(X, (str, os.PathLike)):
        return [(t, t) for t in names]  # columns of the store's sample table, read with it
    raise TypeError("targets names columns of an AnnData's obs or of a store's sample table; for these data "
                    "pass the targets' values: a DataFrame (one column per target) or a dict.")


# ----------------------------------------------------------------------------------------------
# the selectors' inputs


def selector_input(X):
    """How a selector fits ``X``: ``"matrix"`` (data in memory, scored by the selector's own
    statistics of its rows), ``"anndata"`` (an AnnData, in memory or backed), ``"dask"`` (a Dask
    collection) or ``"read"`` (a file path or an open store), the last three scored where they
    are by ``genosift.score``."""
    from ..io.anndata import is_anndata
    from .dask import is_dask_collection

    if is_anndata(X):
        return "anndata"
    if is_dask_collection(X):
        return "dask"
    if isinstance(X, (str, os.PathLike)) or hasattr(X, "row_chunks"):
        return "read"
    return "matrix"


class AnnDataTransformMixin:
    """``transform(adata)`` of a fitted selector: the AnnData restricted to the selected features."""

    def transform(self, X):
        """Keep the selected columns of ``X``.

        An AnnData gives an AnnData: the view ``adata[:, selected]`` (its ``obs``, the selected
        rows of ``var``, layers and ``varm`` with it; ``.copy()`` makes it a new object, and
        ``.to_memory()`` reads a backed one). A selector fitted with feature names finds them
        in ``var_names`` by name (any order; other features are left out) and returns them in the
        order they were fitted; one fitted without names needs the same number of features.
        With ``set_output(transform="pandas")`` (or another container) the selected columns come
        as that container instead, indexed by ``obs_names``.
        """
        from ..io.anndata import is_anndata, select_vars

        if not is_anndata(X):
            return super().transform(X)
        subset = select_vars(self, X)
        import sklearn

        wanted = getattr(self, "_sklearn_output_config", {}).get("transform", sklearn.get_config()["transform_output"])
        return subset if wanted == "default" else subset.to_df()


def fit_accepts_anndata(fit):
    """Let a selector's ``fit(X, y, ...)`` take an AnnData: its matrix ``X`` (a backed ``X`` is
    read into memory, as these selectors need every value), ``y`` or ``groups`` naming ``obs``
    columns, and ``feature_names_in_`` from ``var_names``."""

    @functools.wraps(fit)
    def fit_(self, X, y=None, *args, **kwargs):
        from ..io.anndata import fit_on_matrix, is_anndata

        if not is_anndata(X):
            return fit(self, X, y, *args, **kwargs)
        return fit_on_matrix(self, lambda M, labels, **kw: fit(self, M, labels, *args, **kw), X, y, **kwargs)

    return fit_
