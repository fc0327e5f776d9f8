"""``score``, ``profile`` and ``count_patterns``: any kind of input, and the drivers behind them.

Each tells the input apart in one place, ``sources.as_source``, whose Source hands it to its
driver: ``memory`` (arrays, sparse matrices, DataFrames, streams of row chunks), ``store`` (a
genosift store, out of core), ``dask`` (Dask collections, and stores read by a cluster's workers)
or ``anndata`` (a backed AnnData). Other files and AnnData objects in memory are read into a matrix first. Every
driver runs the same preparation core (``genosift.scores``: make the target, check the classes,
merge statistics, finish the result).
"""
from __future__ import annotations

from ..core.constraints import Boolean, Choice, checked
from ..core.shared_docs import shared_docs
from ..core.validation import check_options_dict, options_in_one_dict, param_error, renamed_parameters
from ..scores import check_af, check_kinship_given, check_options, get_method, refuse_covariates

__all__ = ["count_patterns", "profile", "score", "score_targets"]


@options_in_one_dict
@checked(binary=Boolean())
@shared_docs
def score(X, y=None, *, method="fisher", feature_names=None, samples=None, chunk_bytes=None, scheduler=None,
          binary=False, min_af=None, max_af=None, layer=None, covariates=None, kinship=None, method_options=None):
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
        chunks within ``chunk_bytes``, never loaded whole (see ``genosift.io.anndata``).
    y : array-like (n_samples,), pandas Series, or str
        Class labels (any type) or a numeric target (a Dask array or Series is computed first);
        ``None`` for unsupervised methods and streams. For an AnnData, a store or a data file,
        also the name of a column of its sample table: the samples whose label is missing there
        are left out, with a warning saying how many (as the ``genosift score`` command does;
        choose them with ``samples`` to say which). A Series indexed by sample id (labels, not
        integers) is matched to the data's ids, as pandas and scanpy align by index: the
        samples it does not list, and those whose value is missing, are left out with a warning;
        ids that the data lack are an error naming them. A Series with a plain integer index,
        and an array, are taken in the order of the rows.
    method : str
        A name from ``genosift.methods()``.
    {feature_names}
    {samples}
    {chunk_bytes}
    {scheduler}
    {binary}
    {af}
    {layer}
    {covariates}
    {kinship}
    {method_options}

    Returns
    -------
    ScoreResult

    Raises
    ------
    ValueError
        NaN or infinity in ``X`` (naming the features) or in ``y`` given as an array (naming the
        positions: leave those samples out with ``samples``);
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
    from ..sources import as_source
    from .forms import score_source

    spec = get_method(method)
    check_options_dict(method_options, "method_options", "score")
    opts = check_options(spec, method_options or {})
    bounds = check_af(min_af, max_af)
    if covariates is not None:
        refuse_covariates(spec)
    check_kinship_given(spec, kinship)
    data = as_source(X, y, owner="score", feature_names=feature_names, layer=layer, binary=binary,
                     chunk_bytes=chunk_bytes, scheduler=scheduler, samples=samples, covariates=covariates,
                     labels_required=spec.task != "unsupervised", kinship=kinship)
    return score_source(data, spec, opts, bounds)


@options_in_one_dict
@checked(binary=Boolean())
@shared_docs
def score_targets(X, targets, *, method="regression", feature_names=None, samples=None, chunk_bytes=None,
                  binary=False, min_af=None, max_af=None, layer=None, covariates=None, kinship=None,
                  method_options=None):
    """Score every feature of ``X`` against each of several targets (phenotypes) in one pass.

    The data are read once: a whole-column method (``streaming`` "blocks" in
    ``genosift.methods()``: the regressions, ``logistic``, the mixed model ``lmm``, ...) fits every
    target on each block of features as the block is read; the covariates and the kinship are
    checked once, and the mixed model decomposes the kinship once and rotates each block once
    for all the targets (each target keeps its own null model and ``h2``). Each result equals
    ``genosift.score`` of that target alone, bit for bit. A row-mergeable method scores data
    in memory once per target, and reads a store once per target.

    Parameters
    ----------
    X : array-like, scipy.sparse matrix, pandas DataFrame, an ``anndata.AnnData`` in memory,
        or a store (a ``.gs.h5ad`` path or ``genosift.io.Store``)
    targets : pandas DataFrame, dict, or list of str
        The targets, by name: the columns of a DataFrame (one row per row of ``X``, in its
        order), a dict of name -> one value per row, or names of per-sample columns of an
        AnnData's ``obs`` or a store's sample table. Every target is given for every sample
        (leave out the samples with a missing value with ``samples``, or score those targets apart).
    method : str
        A name from ``genosift.methods()`` (default ``"regression"``).
    {feature_names}
    {samples}
    {chunk_bytes}
    {binary}
    {af}
    {layer}
    {covariates}
    {kinship}
    {method_options}

    Each the same for every target (a target given as values has one per row of ``X``, or one
    per sample kept).

    Returns
    -------
    dict
        ``{name: ScoreResult}``, in the order of ``targets``.

    Examples
    --------
    >>> import numpy as np, pandas as pd, genosift as gs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(60, 5)).astype(float)
    >>> Y = pd.DataFrame({"a": X[:, 1] + rng.normal(size=60), "b": X[:, 3] + rng.normal(size=60)})
    >>> results = gs.score_targets(X, Y, method="regression")
    >>> [int(results[name].ranking[0]) for name in results]
    [1, 3]
    >>> bool(np.array_equal(results["b"].scores, gs.score(X, Y["b"], method="regression").scores))
    True
    """
    from ..sources import as_source
    from .forms import score_source_targets

    spec = get_method(method)
    check_options_dict(method_options, "method_options", "score_targets")
    opts = check_options(spec, method_options or {})
    bounds = check_af(min_af, max_af)
    if covariates is not None:
        refuse_covariates(spec)
    check_kinship_given(spec, kinship)
    if spec.task == "unsupervised":
        raise ValueError(f"Method '{spec.name}' scores the features without a target; score_targets compares them "
                         "with targets. Use genosift.score, or choose a supervised method.")
    names, ys = _targets_of(X, targets)
    data = as_source(X, None, owner="score_targets", feature_names=feature_names, layer=layer, binary=binary,
                     chunk_bytes=chunk_bytes, samples=samples, covariates=covariates, kinship=kinship)
    ys = tuple(y if isinstance(y, str) else data.kept(y) for y in ys)  # one value per row kept
    return dict(zip(names, score_source_targets(data, spec, opts, ys, bounds)))


def _targets_of(X, targets):
    """``(names, values)`` of ``score_targets``' targets: their names (text, unique) and, for each,
    its values (or, for a store, its column's name)."""
    from collections.abc import Mapping

    from ..sources import named_targets

    if hasattr(targets, "columns") and hasattr(targets, "to_numpy"):  # a DataFrame
        pairs = [(str(c), targets[c].to_numpy()) for c in targets.columns]
    elif isinstance(targets, Mapping):
        pairs = [(str(k), v) for k, v in targets.items()]
    elif isinstance(targets, (list, tuple)) and targets and all(isinstance(t, str) for t in targets):
        pairs = named_targets(X, targets)
    else:
        raise param_error("targets", "score_targets", "a DataFrame, a dict of name -> values, or a list of column "
                          "names", type(targets).__name__)
    names = [name for name, _ in pairs]
    if not names:
        raise ValueError("score_targets needs at least one target.")
    if len(set(names)) < len(names):
        raise ValueError(f"The targets' names must be unique; got {names}.")
    return names, tuple(values for _, values in pairs)


@renamed_parameters("target")
@checked(kind=Choice("auto", "classes", "numeric"), binary=Boolean())
@shared_docs
def profile(X, y=None, *, kind="auto", feature_names=None, samples=None, chunk_bytes=None, scheduler=None,
            binary=False, layer=None):
    """Per-class means and prevalence (x > 0) of every feature, with the direction of its effect.

    Parameters
    ----------
    X : array-like, scipy.sparse matrix, DataFrame, iterator of ``(X_chunk, y_chunk)`` pairs,
        Dask array or DataFrame, a store (a ``.gs.h5ad`` path or ``genosift.io.Store``), another
        data file, or an ``anndata.AnnData``
        Any input ``genosift.score`` takes, told apart by the same dispatch
        (``genosift.sources``): sparse input is never densified, a store is read in row
        chunks of ``chunk_bytes``, and so is a backed AnnData (``read_h5ad(path, backed="r")``).
    y : array-like, Series, str or None
        Class labels or a numeric target, one per sample (per row, or per sample kept by
        ``samples``; or the name of a column of a store's, file's or AnnData's sample table), as
        ``genosift.score`` takes it: a Series indexed by sample id is matched to the data's ids
        and the samples without a label are left out, with a warning. None: one group of all
        samples. A chunk stream carries its own labels (pass None).
    kind : {"auto", "classes", "numeric"}
        What ``y`` is: class labels (per-class means and prevalence), or a numeric target (mean,
        prevalence and the sign of each feature's Pearson correlation with it). "auto": numeric
        when ``y`` is continuous (floats that are not class codes, see ``genosift.score``), else
        classes; for a chunk stream "auto" means classes.
    {feature_names}
    {samples}
    {chunk_bytes}
    {scheduler}
    {binary}
    {layer}

    Returns
    -------
    Profile
        ``Profile.to_frame()``: feature, ``mean_<class>`` per class, the signed effect
        (``diff_means`` = ``mean_<classes[1]>`` - ``mean_<classes[0]>`` for two classes,
        ``highest_mean`` for several, ``correlation_sign`` for a numeric target) and
        ``prevalence_<class>`` per class.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 1.0], [2, 0], [5, 0], [7, 3]])
    >>> prof = profile(X, ["a", "a", "b", "b"])
    >>> prof.to_frame().round(3).to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'feature': ['x0', 'x1'], 'mean_a': [1.0, 0.5], 'mean_b': [6.0, 1.5], 'diff_means': [5.0, 1.0],
     'prevalence_a': [0.5, 0.5], 'prevalence_b': [1.0, 0.5]}
    >>> profile(X, [0.1, 0.7, 1.9, 3.3]).to_frame()["correlation_sign"].tolist()
    [1.0, 1.0]
    """
    from ..sources import as_source
    from .forms import profile_source

    return profile_source(as_source(X, y, owner="profile", feature_names=feature_names, layer=layer, binary=binary,
                                    chunk_bytes=chunk_bytes, scheduler=scheduler, samples=samples), kind)


@checked(binary=Boolean())
@shared_docs
def count_patterns(X, *, binary=True, min_af=None, max_af=None, samples=None, chunk_bytes=None, layer=None,
                   feature_names=None):
    """The distinct patterns of the features of ``X`` (each with its first feature), in one pass.

    Parameters
    ----------
    X : any input ``genosift.score`` takes
        An array, sparse matrix, DataFrame, chunk stream (``(X_chunk, y_chunk)`` pairs), store,
        data file, Dask collection or AnnData; read as ``genosift.score`` reads it, in bounded
        memory where it would be.
    binary : bool, default True
        Presence/absence patterns (each value becomes ``x > 0``), as pyseer counts them for
        k-mers; False: patterns of the values themselves (counts, dosages).
    min_af, max_af : float in [0, 1], optional
        Count the patterns of the features carried by a share of the samples in this range only,
        as pyseer counts those of the variants it tested.
    {samples}
    {chunk_bytes}
    {layer}
    {feature_names}

    Returns
    -------
    Patterns
        ``n_patterns``, ``threshold(alpha)`` (``alpha / n_patterns``), each feature's pattern
        (``genosift.scoring.patterns.Patterns``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0, 2, 0], [0, 3, 0, 0], [1, 0, 5, 1]])
    >>> res = count_patterns(X)
    >>> res.ids.tolist(), res.n_patterns, res.threshold(0.05)
    ([0, 1, 0, 2], 3, 0.016666666666666666)
    >>> count_patterns(X, binary=False).n_patterns  # 2 and 5 differ from 1
    4
    """
    from ..sources import as_source
    from .forms import source_patterns

    bounds = check_af(min_af, max_af, "count_patterns")
    return source_patterns(as_source(X, owner="count_patterns", feature_names=feature_names, layer=layer,
                                     binary=binary, chunk_bytes=chunk_bytes, samples=samples), bounds)
