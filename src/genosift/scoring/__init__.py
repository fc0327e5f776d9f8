"""``score``: one function that scores any kind of input, and the drivers behind it.

``score`` tells the input apart and hands it to its driver: ``memory`` (arrays, sparse
matrices, DataFrames, streams of row chunks), ``store`` (a genosift store, out of core) or
``dask`` (Dask collections, and stores read by a cluster's workers). AnnData objects and other
files are turned into one of these first. Every driver runs the same preparation core
(``genosift.scores``: make the target, check the classes, merge statistics, finish the result).
"""
from __future__ import annotations

import os

import numpy as np

from ..core.engine import is_chunk_stream
from ..core.validation import param_error
from ..scores import check_af, check_options, get_method
from .memory import score_memory

__all__ = ["score"]


def score(X, y=None, *, method="fisher", feature_names=None, chunk_bytes=None, scheduler=None, binary=False,
          min_af=None, max_af=None, layer=None, covariates=None, **options):
    """Score every feature of ``X`` against ``y`` with one registered method.

    Parameters
    ----------
    X : array-like (n_samples, n_features), scipy.sparse matrix, pandas DataFrame, an
        iterator of ``(X_chunk, y_chunk)`` pairs (a stream of row chunks, merged exactly), a
        Dask array (dense or scipy.sparse chunks) or Dask DataFrame (scored by tasks, see
        ``genosift.dask.score_collection``), a store path, or an ``anndata.AnnData``.
        Any real dtype; integers are accumulated in float64. Sparse input is never densified.
        An AnnData is scored as its ``X`` (or ``layer``) with its ``var_names`` as the feature
        names; a backed one (``anndata.read_h5ad(path, backed="r")``) is read from its file in
        chunks within ``chunk_bytes``, never loaded whole (see ``genosift._anndata``).
    y : array-like (n_samples,)
        Class labels (any type) or a numeric target (a Dask array or Series is computed first);
        ``None`` for unsupervised methods and streams. For an AnnData, also the name of an
        ``adata.obs`` column, or a Series indexed by its ``obs_names``.
    method : str
        A name from ``genosift.methods()``.
    feature_names : sequence of str, optional
        Names of the columns; by default a DataFrame's columns, else ``x0, x1, ...``.
    chunk_bytes : int, optional
        For a store (a ``.gs.h5ad`` path or ``genosift.io.Store``): the memory budget of one
        chunk of rows or block of features read from disk (default 256 MiB). ``y`` may then
        name a column of the store's sample table.
    scheduler : distributed.Client or str, optional
        For Dask input and stores: where the tasks run (a client, a scheduler address,
        ``"local:N"``, or a Dask local scheduler name such as ``"threads"``); see
        ``genosift.dask.use_scheduler``. By default Dask's own default for Dask input, and the
        local engine for stores.
    binary : bool, default False
        Score presence/absence: each value becomes 1 where it is above 0, else 0 (NaN stays NaN;
        see ``genosift.presence``), in every input form; sparse stays sparse and a store is read
        that way, not rewritten. SEER and pyseer test k-mers this way; GenoLearn calls it
        ``fisher-binary``.
    min_af, max_af : float in [0, 1], optional
        Allele-frequency filter: test only the features carried (value above 0) by a share of
        the scored samples in ``[min_af, max_af]`` (bounds included), as pyseer's ``--min-af`` /
        ``--max-af``. The others are not tested: score, statistic, p- and q-value NaN, ranked
        after every tested feature, and left out of the Benjamini-Hochberg count. The result then
        has ``af`` (the share carrying each feature), ``tested`` and ``n_tested``, and its table
        an ``af`` column. Methods that score features jointly (``relieff``, ``linear``) see only
        the features inside the range. One bound alone leaves the other at 0 or 1.
    layer : str, optional
        Score ``adata.layers[layer]`` (for example raw ``"counts"``) instead of ``X``, for an
        AnnData or an ``.h5ad`` file.
    covariates : array-like (n_samples, c), pandas DataFrame or Series, or list of str, optional
        For the methods that adjust for covariates (``genosift.scores.covariate_methods()``):
        one row per sample, in the order of the rows scored, checked by
        ``genosift.scores.check_covariates`` (text and categorical columns of a DataFrame are
        one-hot encoded; constant and collinear covariates are an error naming them). A
        DataFrame or Series indexed by sample id is matched to the samples' ids (a DataFrame's
        index, an AnnData's ``obs_names``, a store's sample ids); for an AnnData or a store, a
        list of names of ``obs`` columns. For a store with ``samples``, one row per row of the
        store or one per sample kept. Given to any other method, or with a stream of row chunks,
        it is an error before any data are read. The result records their names
        (``ScoreResult.covariates``, and ``provenance()``).
    **options
        Options of the method (see ``genosift.methods()``).

    Returns
    -------
    ScoreResult

    Raises
    ------
    ValueError
        NaN or infinity in ``X`` (naming the features) or in ``y`` (naming the positions);
        empty ``X``; ``X`` and ``y`` of different lengths; one class (one value) where the
        method compares classes (needs a varying target); duplicated feature names; for the
        methods built on sums of squares, values too large (above about 1e154) or too close
        together (below about 1e-154) to square in float64.
    TypeError
        Text or other non-numbers in ``X``.

    Notes
    -----
    NaN policy: missing values are never dropped or imputed silently; impute or drop them
    first. A constant (or all-zero) feature scores NaN, with NaN p- and q-values, and ranks
    last (``variance`` scores it 0). Labels of any type (floats, bools, strings, -1/1) give the
    same scores; a class of one sample is a class. See "Bad input and the NaN policy" in the
    README for every case.

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> X = np.array([[0, 0, 1, 0, 0], [1, 1, 1, 0, 1], [0, 1, 0, 1, 0], [0, 3, 0, 1, 1],
    ...               [1, 3, 1, 0, 1], [0, 1, 1, 1, 0], [1, 0, 0, 1, 3], [2, 2, 4, 2, 0],
    ...               [0, 0, 1, 1, 0], [0, 1, 0, 1, 2]])
    >>> y = [0, 1, 0, 1, 1, 2, 0, 2, 0, 0]
    >>> res = gs.score(X, y, method="fisher")
    >>> np.round(res.scores, 6).tolist()
    [0.298077, 1.656489, 1.026178, 0.830508, 0.2]
    >>> (res.ranking + 1).tolist()
    [2, 3, 4, 1, 5]
    """
    from .._anndata import is_anndata
    from ..core.transforms import presence
    from .dask import is_dask_collection

    spec = get_method(method)
    opts = check_options(spec, options)
    if not isinstance(binary, (bool, np.bool_)):
        raise param_error("binary", "score", "True or False", binary)
    bounds = check_af(min_af, max_af)
    if covariates is not None:
        covariates = _covariates_for(spec, X, covariates)
    if is_anndata(X):
        from .._anndata import unpack

        if X.isbacked and layer is None:
            from .anndata import score_backed

            return score_backed(X, y, spec, opts, score=score, feature_names=feature_names, chunk_bytes=chunk_bytes,
                                scheduler=scheduler, binary=binary, af=bounds, covariates=covariates)
        X, y, feature_names = unpack(X, y, spec, layer=layer, feature_names=feature_names)
    elif layer is not None:
        from ..io import format_of

        if not isinstance(X, (str, os.PathLike)) or not os.path.isfile(X) or format_of(X) not in ("h5ad", "store"):
            what = f"the file {str(X)!r}" if isinstance(X, (str, os.PathLike)) else f"a {type(X).__name__}"
            raise TypeError(f"layer={layer!r} picks a layer of an AnnData or of an .h5ad file; X is {what}. "
                            "Leave out layer.")
    if is_dask_collection(X):
        if chunk_bytes is not None:
            raise ValueError("chunk_bytes sets the reads of a store; a Dask array is read in its own chunks "
                             "(rechunk it to change them). Leave out chunk_bytes.")
        if binary:
            X = X.map_partitions(presence) if hasattr(X, "map_partitions") else X.map_blocks(presence, dtype=np.float64)
        from .dask import score_collection

        return score_collection(X, y, spec, opts, feature_names=feature_names, scheduler=scheduler, af=bounds,
                                covariates=covariates)
    if isinstance(X, (str, os.PathLike)) or hasattr(X, "row_chunks"):
        from ..io import format_of, open_store, read
        from .store import score_store

        if layer is None and (hasattr(X, "row_chunks") or os.path.isfile(X) and format_of(X) == "store"):
            if not hasattr(X, "row_chunks"):
                X = open_store(X, binary=binary)
            elif binary and not X.binary:  # a store opened as it is, read as presence here
                X = open_store(X.path, binary=True)
            return score_store(X, y, method=spec.name, chunk_bytes=chunk_bytes, scheduler=scheduler, min_af=min_af,
                               max_af=max_af, covariates=covariates, **opts)
        named = ([y] if isinstance(y, str) else []) + _column_names(covariates)
        table = bool(named) and format_of(X) in ("csv", "tsv", "parquet")
        data = read(X, format="h5ad", layer=layer) if layer is not None else read(X, keep=named) if table else read(X)
        if isinstance(y, str):
            if data.obs is None or y not in data.obs.columns:
                have = [] if data.obs is None else list(data.obs.columns)
                raise ValueError(f"y names the column {y!r}, which {str(X)!r} does not have (sample columns: {have}). "
                                 "Pass the labels as an array, or read the file with genosift.io.read(..., "
                                 "keep=[...]).")
            y = data.obs[y].to_numpy()
        X, feature_names = data.X, data.feature_names if feature_names is None else feature_names
        covariates = _by_sample(covariates, data.sample_ids, data.obs)
    if binary:
        X = ((presence(c), *rest) for c, *rest in X) if is_chunk_stream(X) else presence(X)
    if scheduler is not None:
        raise ValueError("The 'scheduler' parameter of score must be None for data in memory (it runs Dask "
                         "arrays and stores; wrap X with dask.array.from_array(X, chunks=...) to score it by "
                         f"Dask tasks). Got {scheduler!r} instead.")
    return score_memory(spec, X, y, feature_names, opts, bounds, covariates)


def _covariates_for(spec, X, covariates):
    """The covariates of ``X`` as its driver takes them, checked for what can be checked before
    any data are read: a method that takes them, not a chunk stream; for an AnnData, ``obs``
    columns by name and a table indexed by ``obs_names`` resolved; for a DataFrame ``X`` indexed
    by sample id, a table indexed by sample id put in its row order."""
    from .._anndata import covariates_of, is_anndata
    from ..scores import align_covariates, frame_sample_ids, refuse_covariates

    refuse_covariates(spec)
    if is_chunk_stream(X):
        raise ValueError(f"Method '{spec.name}' adjusts for covariates on whole columns: it cannot read a "
                         "stream of row chunks. Pass an array, a sparse matrix, a DataFrame or a store.")
    if is_anndata(X):
        return covariates_of(X, covariates)
    return align_covariates(covariates, frame_sample_ids(X))


def _column_names(covariates):
    """The per-sample columns ``covariates`` names (a name, or a list of names), else none."""
    if isinstance(covariates, str):
        return [covariates]
    if isinstance(covariates, (list, tuple)) and all(isinstance(c, str) for c in covariates):
        return list(covariates)
    return []


def _by_sample(covariates, sample_ids, obs):
    """The covariates of a data file read into memory: columns of its ``obs`` by name, or a table
    indexed by sample id matched to its ``sample_ids``."""
    from ..scores import align_covariates, covariate_columns

    if covariates is None:
        return None
    return align_covariates(covariate_columns(covariates, obs, what="the data file"), sample_ids)
