"""The registry of scoring methods and ``score``, the one function that runs any of them."""
from __future__ import annotations

import os
import threading

import numpy as np
import scipy.sparse as sp

from .._messages import plain
from .._validation import MAX_FLOAT_CLASSES, as_labels, as_matrix, is_continuous, numeric_target, param_error
from ..engine import accumulate, block_width, column_blocks, is_chunk_stream, map_blocks
from ._base import (REGISTRY, Method, Scores, ScoreResult, Target, bh_qvalues, describe, get_method, methods,
                    rank_order, register)
from ._af import CarrierTap, af_tested, carriers, check_af, with_af
# registers the methods; this order is the order of genosift.methods()
from . import moments, ranks, contingency, distances, neighbours, models  # noqa: E402,F401,I001

__all__ = [
    "REGISTRY", "Method", "ScoreResult", "Scores", "Target", "bh_qvalues", "get_method", "methods",
    "rank_order", "register", "score", "score_blocks", "statistics", "finish", "check_options", "make_target",
    "LabelCoding", "describe", "carriers", "check_af", "with_af", "check_option_values",
]


def check_options(spec, options):
    """The method's options with defaults filled in; unknown names are a clear error."""
    allowed = spec.options
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        valid = ", ".join(allowed) if allowed else "none"
        raise TypeError(f"Method '{spec.name}' got unknown option(s) {unknown}. Its options: {valid}.")
    return {**allowed, **options}


def check_option_values(spec, options):
    """Run the method with ``options`` on a small made-up data set, so that an option value it
    refuses (a wrong type, a value out of range) is an error before any real data are read.

    Returns the options with defaults filled in; raises the method's own ``ValueError`` or
    ``TypeError`` for a bad value (``check_options``'s ``TypeError`` for an unknown name).
    """
    import warnings

    spec = get_method(spec)
    opts = check_options(spec, options)
    rows = np.arange(12)
    X = np.column_stack([rows % 4, (rows * 7) % 5 + 0.5 * (rows > 5), rows % 3 == 0]).astype(np.float64)
    y = {"unsupervised": None, "regression": rows * 1.5 + (rows % 3)}.get(spec.task, (rows > 5).astype(np.int64))
    with warnings.catch_warnings():  # a made-up data set: convergence and the like are not the point
        warnings.simplefilter("ignore")
        score(X, y, method=spec, **opts)
    return opts


def _target(spec, y, n_samples):
    """The labels or numeric values ``spec`` needs from ``y``."""
    if spec.task == "unsupervised":
        return None
    y = as_labels(y, n_samples)
    if spec.task == "any":
        return y
    if spec.task == "classification":
        if is_continuous(y):
            raise ValueError(
                f"Method '{spec.name}' needs class labels, but y looks like a continuous target "
                f"({len(np.unique(y))} distinct non-integer values; float labels are classes when there "
                f"are at most {MAX_FLOAT_CLASSES} values, each at least twice). Use a regression method such "
                "as 'pearson', or bin y into classes first."
            )
        return y
    values = numeric_target(y)
    if values is None:
        classes = np.unique(y)
        if len(classes) != 2:
            raise ValueError(
                f"Method '{spec.name}' needs a numeric target or two class labels; y has "
                f"{len(classes)} non-numeric labels. Encode y as numbers first."
            )
        values = (y == classes[1]).astype(np.float64)
    return values


class LabelCoding:
    """The target of a row-streamed method, coded the same way whatever the chunks hold.

    A regression method given two non-numeric labels scores ``y == the label that sorts last``
    (as on all rows at once). Chunk by chunk a chunk may hold one label only, so the label seen
    first is coded 0 and the other 1; :meth:`finish` turns the merged statistics into those of the
    sorted coding (for co-moments, ``1 - y``: the co-moment changes sign, exactly). Other methods'
    targets are coded per chunk as they are.
    """

    def __init__(self, spec):
        self.spec = spec
        self.labels = []
        self.numeric = False
        self._lock = threading.Lock()

    def __getstate__(self):  # a fitted selector pickles with it; the lock is made anew
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def values(self, y, n_samples):
        """The target of one chunk of ``n_samples`` rows."""
        if self.spec.task != "regression":
            return _target(self.spec, y, n_samples)
        y = as_labels(y, n_samples)
        values = numeric_target(y)
        with self._lock:
            if values is not None:
                self.numeric = True
            else:
                for label in np.unique(y):
                    if label not in self.labels:
                        self.labels.append(label)
                self._check()
                first = self.labels[0]
        return values if values is not None else (y != first).astype(np.float64)

    def _check(self, done=False):
        if self.numeric and self.labels:
            raise ValueError(f"Method '{self.spec.name}' needs a numeric target or two class labels; y mixes "
                             "numbers and other labels across chunks. Encode y as numbers first.")
        if len(self.labels) > 2 or done and len(self.labels) == 1:
            raise ValueError(
                f"Method '{self.spec.name}' needs a numeric target or two class labels; y has "
                f"{'at least ' if not done else ''}{len(self.labels)} non-numeric labels "
                f"({plain(sorted(self.labels)[:5])}). Encode y as numbers first.")

    def finish(self, stats):
        """The merged statistics as if ``y`` had been coded on all rows at once."""
        if not self.labels:
            return stats
        self._check(done=True)
        if self.labels[0] > self.labels[1]:  # the label seen first sorts last: it is the one coded 1
            return stats.flip_target()
        return stats


def make_target(spec, y, n_samples):
    """The ``Target`` a whole-column method gets: class codes, numeric values, or neither."""
    y = _target(spec, y, n_samples)
    if y is None:
        return Target(n_samples)
    if spec.task == "regression":
        return Target(n_samples, values=y)
    values = numeric_target(y) if spec.task == "any" else None
    if spec.task == "any":
        from sklearn.utils.multiclass import type_of_target

        if type_of_target(y) not in ("binary", "multiclass"):
            return Target(n_samples, values=values)
    classes, codes = np.unique(y, return_inverse=True)
    count = np.bincount(codes, minlength=len(classes)).astype(np.float64)
    return Target(n_samples, codes=codes.astype(np.intp, copy=False), classes=classes, count=count, values=values)


def _finite_blocks(blocks, names, scale_free=False):
    """Pass ``(j0, j1, block)`` through, raising the non-finite error (naming the features);
    with ``scale_free``, features too large to square come out rescaled (``rescale_huge``)."""
    from .._validation import default_feature_names, raise_nonfinite, rescale_huge

    for j0, j1, block in blocks:
        values = block.data if sp.issparse(block) else block
        if not np.isfinite(values).all():
            dense = block.toarray() if sp.issparse(block) else block
            local = default_feature_names(j1)[j0:] if names is None else names[j0:j1]
            raise_nonfinite(dense, np.flatnonzero(~np.isfinite(dense).all(axis=0)), local)
        yield j0, j1, rescale_huge(block) if scale_free else block


def score_blocks(spec, blocks, target, feature_names, options, *, n_jobs=None):
    """Run a "blocks" method over ``(j0, j1, block)`` column blocks, in order: a ``ScoreResult``.

    The one loop behind in-memory arrays and on-disk stores; blocks run on ``n_jobs`` threads.
    """
    parts = map_blocks(lambda jb: spec.func(jb[2], target, **options),
                       _finite_blocks(blocks, feature_names, spec.scale_free), n_jobs=n_jobs)
    out = Scores(*(None if parts[0][i] is None else np.concatenate([q[i] for q in parts]) for i in range(4)))
    return _result(spec, out, target, feature_names, options)


def _score_columns(spec, X, y, names, opts):
    """Run a "blocks" or "matrix" method on in-memory data."""
    if is_chunk_stream(X):
        raise ValueError(
            f"Method '{spec.name}' needs every sample of a feature at once (it works on whole "
            "columns), so it cannot read a stream of row chunks. Pass an array, a sparse matrix or "
            "a DataFrame."
        )
    M, frame_names = as_matrix(X)
    names = frame_names if names is None else np.asarray(names, dtype=object)
    target = make_target(spec, y, M.shape[0])
    _check_classes(spec, target)
    blocks = column_blocks(M, block_width(*M.shape), keep_sparse=spec.sparse_blocks)
    if spec.streaming == "matrix":
        for _ in _finite_blocks(blocks, names):  # the finiteness check, one block at a time
            pass
        if spec.scale_free:
            from .._validation import rescale_huge

            M = rescale_huge(M)
        return _result(spec, spec.func(M, target, **opts), target, names, opts)
    return score_blocks(spec, blocks, target, names, opts)


def statistics(spec, X, y=None, *, feature_names=None):
    """``(stats, feature_names)`` of in-memory data, or of a stream of ``(X, y)`` chunks."""
    spec = get_method(spec)
    if not is_chunk_stream(X):
        M, names = as_matrix(X)
        names = names if feature_names is None else np.asarray(feature_names, dtype=object)
        return spec.statistic.from_chunk(M, _target(spec, y, M.shape[0]), feature_names=names), names
    if y is not None:
        raise ValueError("A chunk stream carries its own labels: pass y=None and yield (X, y) pairs.")
    first = {}
    coding = LabelCoding(spec)

    def summarize(chunk):
        try:
            Xc, yc = chunk
        except (TypeError, ValueError):
            raise TypeError("A chunk stream must yield (X_chunk, y_chunk) pairs.") from None
        if np.shape(Xc)[0] == 0:
            return spec.statistic.empty()
        M, names = as_matrix(Xc)
        if not first:
            first.update(p=M.shape[1], names=names if feature_names is None else np.asarray(feature_names, dtype=object))
        same_names = names is None or first["names"] is None or np.array_equal(first["names"], names)
        if M.shape[1] != first["p"] or not same_names:
            raise ValueError(
                f"Chunk columns differ from the first chunk's ({M.shape[1]} vs {first['p']} features): "
                "every chunk must have the same features in the same order."
            )
        return spec.statistic.from_chunk(M, coding.values(yc, M.shape[0]), feature_names=first["names"])

    stats = accumulate(X, summarize, spec.statistic.empty())
    if stats.n_features == 0:
        raise ValueError("The chunk stream was empty: no rows to score.")
    return coding.finish(stats), first["names"]


def _check_classes(spec, stats):
    if spec.task == "any":
        if stats.n_samples < 2:
            raise ValueError(f"Method '{spec.name}' needs at least 2 samples; got {int(stats.n_samples)}.")
        if stats.classes is not None and len(stats.classes) < 2 or stats.classes is None and stats.m2_y == 0:
            raise ValueError(f"y is constant (only one class or value): method '{spec.name}' needs a target that varies.")
        return
    if spec.task != "classification":
        if spec.task == "regression":
            if stats.n_samples < 2:
                raise ValueError(f"Method '{spec.name}' needs at least 2 samples; got {int(stats.n_samples)}.")
            if stats.m2_y == 0:
                raise ValueError(f"y is constant: method '{spec.name}' needs a target that varies.")
        return
    classes, count = stats.classes, stats.count
    if len(classes) < 2:
        raise ValueError(
            f"y has only one class ({plain(classes[0])}) in "
            f"{int(count.sum())} sample(s); method "
            f"'{spec.name}' compares classes and needs at least two. Check the labels."
        )
    if spec.binary_only and len(classes) != 2:
        raise ValueError(
            f"Method '{spec.name}' compares two classes, but y has {len(classes)}: "
            f"{plain(list(classes)[:10])}. Use 'anova' or 'fisher' for several classes, or keep two classes."
        )
    small = classes[count < spec.min_class_size]
    if len(small):
        raise ValueError(
            f"Method '{spec.name}' needs at least {spec.min_class_size} samples in every class; "
            f"class(es) {plain(small)} have fewer. Add samples or drop those classes."
        )


def finish(spec, stats, feature_names, options=None):
    """Turn merged statistics into a ``ScoreResult``."""
    spec = get_method(spec)
    opts = check_options(spec, options or {})
    _check_classes(spec, stats)
    return _result(spec, spec.func(stats, **opts), stats, feature_names, opts)


def _result(spec, out, data, feature_names, opts):
    """Build the ``ScoreResult`` of ``out``; ``data`` (statistics or Target) gives n and classes.

    ``feature_names``: the names, None (``x0, x1, ...``), or a function that returns them when the
    result first needs them.
    """
    statistic = np.asarray(out.statistic, dtype=np.float64)
    scores = out.scores if out.scores is not None else (np.abs(statistic) if spec.signed else statistic)
    # p-values are probabilities: clip the last-bit excursions above 1 (2 * 0.5000000000000001)
    pvalues = None if out.pvalues is None else np.clip(np.asarray(out.pvalues, dtype=np.float64), 0.0, 1.0)
    return ScoreResult(
        method=spec.name,
        scores=np.asarray(scores, dtype=np.float64),
        statistic=statistic,
        pvalues=pvalues,
        n_samples=int(data.n_samples),
        classes=data.classes if spec.task in ("classification", "any") else None,
        options=opts,
        names=None if feature_names is None or callable(feature_names) else np.asarray(feature_names, dtype=object),
        names_loader=feature_names if callable(feature_names) else None,
        rank_key=out.rank_key,
    )


def _score_kept(spec, M, y, names, opts, counts, bounds):
    """A "matrix" method (it scores the features jointly) on the features inside the
    allele-frequency range only; the others come back NaN."""
    from .._validation import default_feature_names

    n, p = M.shape
    for _ in _finite_blocks(column_blocks(M, block_width(n, p)), names):  # every feature, as without a filter
        pass
    keep = np.flatnonzero(af_tested(counts / n, bounds))
    if keep.size == p:
        return _score_columns(spec, M, y, names, opts)
    target = make_target(spec, y, n)
    _check_classes(spec, target)
    full = np.full(p, np.nan)
    out = Scores(full, None, full.copy(), None)
    if keep.size:
        every = default_feature_names(p) if names is None else np.asarray(names, dtype=object)
        part = _score_columns(spec, M[:, keep], y, every[keep], opts)
        arrays = []
        for values in (part.statistic, part.pvalues, part.scores, part.rank_key):
            if values is None:
                arrays.append(None)
                continue
            wide = np.full(p, np.nan)
            wide[keep] = values
            arrays.append(wide)
        out = Scores(*arrays)
    return _result(spec, out, target, names, opts)


def _score_af(spec, X, y, feature_names, opts, bounds):
    """``score`` on data in memory or a chunk stream, with the allele-frequency filter ``bounds``."""
    if is_chunk_stream(X):
        if spec.streaming != "rows":
            return _score_columns(spec, X, y, feature_names, opts)  # the error for streams
        tap = CarrierTap()
        stats, names = statistics(spec, tap.pairs(X), y, feature_names=feature_names)
        return with_af(finish(spec, stats, names, opts), tap.counts, bounds)
    M, frame_names = as_matrix(X)
    names = frame_names if feature_names is None else np.asarray(feature_names, dtype=object)
    counts = carriers(M)
    if spec.streaming == "matrix":
        result = _score_kept(spec, M, y, names, opts, counts, bounds)
    elif spec.streaming == "blocks":
        result = _score_columns(spec, M, y, names, opts)
    else:
        stats, names = statistics(spec, M, y, feature_names=names)
        result = finish(spec, stats, names, opts)
    return with_af(result, counts, bounds)


def score(X, y=None, *, method="fisher", feature_names=None, chunk_bytes=None, scheduler=None, binary=False,
          min_af=None, max_af=None, layer=None, **options):
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
    from ..dask import is_dask_collection, score_collection
    from ..transforms import presence

    spec = get_method(method)
    opts = check_options(spec, options)
    if not isinstance(binary, (bool, np.bool_)):
        raise param_error("binary", "score", "True or False", binary)
    bounds = check_af(min_af, max_af)
    if is_anndata(X):
        from .._anndata import score_backed, unpack

        if X.isbacked and layer is None:
            return score_backed(X, y, spec, opts, feature_names=feature_names, chunk_bytes=chunk_bytes,
                                scheduler=scheduler, binary=binary, af=bounds)
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
        return score_collection(X, y, spec, opts, feature_names=feature_names, scheduler=scheduler, af=bounds)
    if isinstance(X, (str, os.PathLike)) or hasattr(X, "row_chunks"):
        from ..io import format_of, open_store, read, score_store

        if layer is None and (hasattr(X, "row_chunks") or os.path.isfile(X) and format_of(X) == "store"):
            if not hasattr(X, "row_chunks"):
                X = open_store(X, binary=binary)
            elif binary and not X.binary:  # a store opened as it is, read as presence here
                X = open_store(X.path, binary=True)
            return score_store(X, y, method=spec.name, chunk_bytes=chunk_bytes, scheduler=scheduler, min_af=min_af,
                               max_af=max_af, **opts)
        table = isinstance(y, str) and format_of(X) in ("csv", "tsv", "parquet")
        data = read(X, format="h5ad", layer=layer) if layer is not None else read(X, keep=(y,)) if table else read(X)
        if isinstance(y, str):
            if data.obs is None or y not in data.obs.columns:
                have = [] if data.obs is None else list(data.obs.columns)
                raise ValueError(f"y names the column {y!r}, which {str(X)!r} does not have (sample columns: {have}). "
                                 "Pass the labels as an array, or read the file with genosift.io.read(..., keep=[...]).")
            y = data.obs[y].to_numpy()
        X, feature_names = data.X, data.feature_names if feature_names is None else feature_names
    if binary:
        X = ((presence(c), *rest) for c, *rest in X) if is_chunk_stream(X) else presence(X)
    if scheduler is not None:
        raise ValueError("The 'scheduler' parameter of score must be None for data in memory (it runs Dask "
                         "arrays and stores; wrap X with dask.array.from_array(X, chunks=...) to score it by "
                         f"Dask tasks). Got {scheduler!r} instead.")
    if bounds is not None:
        return _score_af(spec, X, y, feature_names, opts, bounds)
    if spec.streaming != "rows":
        return _score_columns(spec, X, y, feature_names, opts)
    stats, names = statistics(spec, X, y, feature_names=feature_names)
    return finish(spec, stats, names, opts)
