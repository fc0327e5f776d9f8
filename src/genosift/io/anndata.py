"""AnnData objects (scanpy's data) as input to ``genosift.score`` and the selectors, and results
written back into ``adata.var``.

``anndata`` is an optional dependency (``pip install 'genosift[h5ad]'``): an AnnData is told by
the module of its type, so nothing here imports ``anndata`` unless it was handed an AnnData.

An AnnData in memory is scored as its matrix (``X`` or a layer; dense or sparse, never
densified), with ``var_names`` as the feature names and a ``y`` that may name an ``obs`` column;
a backed AnnData is scored without loading ``X`` by ``genosift.scoring.anndata``.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core.constraints import Satisfies, Text, checked
from ..core.messages import plain
from ..core.validation import param_error

__all__ = ["annotate_var", "is_anndata"]


def is_anndata(X):
    """Whether ``X`` is an ``anndata.AnnData`` (or a view of one), without importing anndata."""
    return any(c.__name__ == "AnnData" and c.__module__.partition(".")[0] == "anndata" for c in type(X).__mro__)


def names_of(index):
    """The labels of an AnnData index (``var_names``, ``obs_names``) as an object array of str."""
    return np.asarray([str(v) for v in index], dtype=object)


def _obs_columns(adata):
    return [str(c) for c in adata.obs.columns]


def labels_of(adata, y, *, what="y", required=False):
    """``y`` for the rows of ``adata``: the values of an ``obs`` column when ``y`` names one, a
    pandas Series aligned by ``obs_names`` when its index holds them, else ``y`` as given."""
    if y is None:
        if required:
            raise ValueError(f"{what} is required: pass the name of a column of adata.obs "
                             f"({_obs_columns(adata) or 'it has none'}) or the labels, one per observation.")
        return None
    if isinstance(y, str):
        if y not in adata.obs.columns:
            raise ValueError(f"{what}={y!r} names no column of adata.obs (its columns: "
                             f"{_obs_columns(adata) or 'none'}). "
                             "Pass the name of an obs column, or the labels as an array.")
        return adata.obs[y].to_numpy()
    if hasattr(y, "index") and hasattr(y, "reindex") and getattr(y, "ndim", 1) == 1:  # a pandas Series
        import pandas as pd

        if isinstance(y.index, pd.RangeIndex):
            return y
        obs_names = adata.obs_names
        if y.index.equals(obs_names):
            return y
        missing = obs_names[~obs_names.isin(y.index)]
        if len(missing):
            raise ValueError(
                f"{what} is a Series indexed by sample ids, but {len(missing)} of the {len(obs_names)} obs_names "
                f"are not in its index ({plain([str(v) for v in missing[:5]])}{' ...' if len(missing) > 5 else ''}). "
                "Give a label to every observation, or pass the labels as an array in the order of adata.obs_names.")
        if not y.index.is_unique:
            raise ValueError(f"{what} is a Series whose index repeats sample ids; each observation needs one label.")
        return y.reindex(obs_names)
    return y


def covariates_of(adata, covariates):
    """The covariates of the observations of ``adata``: ``obs`` columns by name (a list of
    names, or one), or a DataFrame / Series indexed by ``obs_names`` put in their order;
    anything else (an array, one row per observation) as it is."""
    from ..scores import align_covariates, covariate_columns

    named = covariate_columns(covariates, adata.obs, what="adata.obs")
    return named if named is not covariates else align_covariates(covariates, names_of(adata.obs_names))


def _pick(adata, layer, owner):
    """``adata.X`` or ``adata.layers[layer]`` as the object anndata holds (backed or in memory)."""
    if layer is not None:
        if layer not in adata.layers:
            raise param_error("layer", owner, f"one of {sorted(adata.layers)}", layer)
        return adata.layers[layer]
    if adata.X is None:
        raise ValueError(f"adata has no X matrix; pass layer= one of {sorted(adata.layers)} to score a layer.")
    return adata.X


def matrix_of(adata, layer=None, *, owner="score"):
    """The matrix of ``adata`` (``X`` or a layer) in memory: numpy, scipy.sparse or Dask as held;
    a backed ``X`` is read whole here, for the callers that need every value at once."""
    M = _pick(adata, layer, owner)
    if hasattr(M, "to_memory"):  # a backed sparse dataset
        M = M.to_memory()
    elif type(M).__module__.partition(".")[0] == "h5py":  # a backed dense dataset
        M = M[()]
    elif type(M).__module__.partition(".")[0] == "pandas":
        M = M.to_numpy()
    return M


# ----------------------------------------------------------------------------------------------
# genosift.score on an AnnData in memory


def unpack(adata, y, spec, *, layer=None, feature_names=None):
    """``(matrix, y, feature_names)`` of an AnnData in memory (or of a layer of a backed one) for
    ``genosift.score``: the matrix as anndata holds it, ``y`` resolved against ``obs``."""
    y = labels_of(adata, y, required=spec.task != "unsupervised")
    names = names_of(adata.var_names) if feature_names is None else feature_names
    return matrix_of(adata, layer), y, names


# ----------------------------------------------------------------------------------------------
# selectors (``sources.dispatch.AnnDataTransformMixin`` and ``fit_accepts_anndata`` ask whether
# the input is an AnnData, then call these)


def select_vars(selector, adata):
    """``adata[:, selected]`` for a fitted selector (see ``sources.dispatch.AnnDataTransformMixin.transform``)."""
    keep = selector.get_support()
    fitted = getattr(selector, "feature_names_in_", None)
    owner = type(selector).__name__
    if fitted is None:
        if adata.n_vars != keep.shape[0]:
            raise ValueError(f"adata has {adata.n_vars} features (var_names), but {owner} was fitted on "
                             f"{keep.shape[0]}.")
        return adata[:, np.flatnonzero(keep)]
    wanted = np.asarray(fitted, dtype=object)[keep]
    where = adata.var_names.get_indexer(wanted) if adata.var_names.is_unique else None
    if where is None:
        raise ValueError("adata has duplicated var_names; make them unique (adata.var_names_make_unique()) "
                         "before selecting features by name.")
    if (where < 0).any():
        missing = [str(v) for v in wanted[where < 0]]
        raise ValueError(f"adata lacks {len(missing)} of the {len(wanted)} features {owner} selected: "
                         f"{plain(missing[:5])}{' ...' if len(missing) > 5 else ''} are not in its var_names.")
    return adata[:, where]


def fit_on_matrix(selector, fit, adata, y, **kwargs):
    """``fit(matrix, labels, **kwargs)`` on the matrix of ``adata`` (``y``, a ``groups`` keyword
    and ``covariates`` may name ``obs`` columns), then ``feature_names_in_`` from its ``var_names``."""
    if isinstance(kwargs.get("groups"), str):
        kwargs["groups"] = labels_of(adata, kwargs["groups"], what="groups")
    if kwargs.get("covariates") is not None:
        kwargs["covariates"] = covariates_of(adata, kwargs["covariates"])
    out = fit(matrix_of(adata, owner=type(selector).__name__), labels_of(adata, y), **kwargs)
    selector.feature_names_in_ = names_of(adata.var_names)
    result = selector.__dict__.get("result_")
    if result is not None and result.names is None:
        selector.result_ = dataclasses.replace(result, names=selector.feature_names_in_)
    return out


# ----------------------------------------------------------------------------------------------
# results into adata.var


#: The columns ``annotate_var`` writes, after the prefix.
COLUMNS = ("score", "statistic", "pvalue", "qvalue", "rank", "selected")


def _parts(result):
    """``(names or None, columns)`` of a ScoreResult or a fitted selector."""
    from ..scores import ScoreResult, bh_qvalues, rank_order

    if isinstance(result, ScoreResult):
        named = result.names is not None or result.names_loader is not None
        cols = {"score": result.scores, "statistic": result.statistic, "pvalue": result.pvalues,
                "qvalue": result.qvalues, "rank": result.ranks.astype(np.float64)}
        return (result.feature_names if named else None), cols
    if not hasattr(result, "get_support"):
        raise TypeError(f"annotate_var writes a genosift.ScoreResult or a fitted selector; got "
                        f"{type(result).__name__}.")
    selected = result.get_support()
    names = getattr(result, "feature_names_in_", None)
    inner = getattr(result, "result_", None)
    if isinstance(inner, ScoreResult):
        inner_names, cols = _parts(inner)
        names = inner_names if names is None else names
    else:
        cols = {}
        scores = getattr(result, "scores_", None)
        if scores is not None and np.shape(scores) == selected.shape:
            pvalues = getattr(result, "pvalues_", None)
            ranks = np.empty(len(scores))
            ranks[rank_order(scores)] = np.arange(1, len(scores) + 1)
            cols = {"score": scores, "pvalue": pvalues, "qvalue": None if pvalues is None else bh_qvalues(pvalues),
                    "rank": ranks}
    cols["selected"] = selected
    return names, cols


@checked(adata=Satisfies(is_anndata, "an anndata.AnnData"), prefix=Text())
def annotate_var(adata, result, *, prefix="genosift_", selected=None, copy=False):
    """Write per-feature results into ``adata.var`` columns, matched by ``var_names``.

    The columns are ``{prefix}score``, ``statistic``, ``pvalue``, ``qvalue`` (methods with
    p-values), ``rank`` (1 = best) and ``selected``, as scanpy's ``highly_variable_genes``
    writes ``highly_variable``. Features of ``adata`` that the result lacks get NaN (and
    ``selected`` False); features of the result that ``adata`` lacks are left out. Columns of an
    earlier call with the same prefix are replaced, and ``adata.uns[prefix without its trailing
    "_"]`` records the method and its options.

    Parameters
    ----------
    adata : anndata.AnnData
    result : genosift.ScoreResult or a fitted selector
        A ScoreResult (``genosift.score``), or a fitted genosift selector (its ``get_support``
        gives ``selected``; its scores, when it has them, the other columns). Results with
        feature names are matched by name; a result without names (scored from an array) needs
        one value per feature of ``adata``, in its order.
    prefix : str, default ``"genosift_"``
    selected : int, array of bool or sequence of names, optional
        With a ScoreResult, the features to mark as selected: the ``k`` best, a mask over the
        result's features, or their names. By default a ScoreResult writes no ``selected``.
    copy : bool, default False
        Annotate and return a copy instead of ``adata`` itself.

    Returns
    -------
    anndata.AnnData or None
        The annotated copy with ``copy=True``; otherwise None (``adata`` is updated in place).

    Examples
    --------
    >>> import genosift as gs, anndata, numpy as np, pandas as pd  # doctest: +SKIP
    >>> res = gs.score(adata, "cell_type", method="kruskal")       # doctest: +SKIP
    >>> gs.annotate_var(adata, res, selected=100)                   # doctest: +SKIP
    >>> adata[:, adata.var["genosift_selected"]]                    # doctest: +SKIP
    """
    import pandas as pd

    names, cols = _parts(result)
    p = len(cols["score"] if "score" in cols else cols["selected"])
    if selected is not None:
        cols["selected"] = _selected_mask(selected, cols, names, p)
    if copy:
        adata = adata.copy()
    n_vars = adata.n_vars
    if names is None:
        if p != n_vars:
            raise ValueError(f"The result has no feature names and {p} features, but adata has {n_vars}: score "
                             "the AnnData itself (genosift.score(adata, ...)), or pass feature_names= when scoring.")
        where = np.arange(n_vars)
    else:
        where = pd.Index(np.asarray(names, dtype=object)).get_indexer(adata.var_names.astype(str))
        if n_vars and not (where >= 0).any():
            raise ValueError(f"No feature of the result is among adata.var_names (result: "
                             f"{plain([str(v) for v in names[:3]])} ...; adata: "
                             f"{plain([str(v) for v in adata.var_names[:3]])} ...). Score the same features.")
    found = where >= 0
    for key in COLUMNS:  # an earlier call's columns, which this call may not all write again
        if prefix + key in adata.var.columns:
            del adata.var[prefix + key]
    for key in COLUMNS:
        values = cols.get(key)
        if values is None:
            continue
        values = np.asarray(values)
        if key == "selected":
            column = np.zeros(n_vars, dtype=bool)
        else:
            column = np.full(n_vars, np.nan)
        column[found] = values[where[found]]
        adata.var[prefix + key] = column
    adata.uns[prefix.rstrip("_") or "genosift"] = _provenance(result)
    return adata if copy else None


def _selected_mask(selected, cols, names, p):
    if isinstance(selected, (int, np.integer)) and not isinstance(selected, bool):
        if "rank" not in cols or selected < 0:
            raise param_error("selected", "annotate_var", "an int >= 0 (with a result that ranks features), a "
                              "boolean mask or feature names", selected)
        return cols["rank"] <= selected
    selected = np.asarray(selected)
    if selected.dtype == bool:
        if selected.shape != (p,):
            raise param_error("selected", "annotate_var", f"a boolean mask of {p} values (one per feature)",
                              f"a mask of shape {selected.shape}")
        return selected
    if names is None:
        raise ValueError("selected= names features, but the result has no feature names; pass a boolean mask.")
    import pandas as pd

    where = pd.Index(np.asarray(names, dtype=object)).get_indexer(selected.astype(str).astype(object))
    if (where < 0).any():
        raise ValueError(f"selected= names features the result does not have: "
                         f"{plain([str(v) for v in selected[where < 0][:5]])}.")
    mask = np.zeros(p, dtype=bool)
    mask[where] = True
    return mask


def _provenance(result):
    """What ``adata.uns`` keeps of a result: values an .h5ad file can hold."""
    from ..scores import ScoreResult

    def simple(v):
        return isinstance(v, (str, bool, int, float, np.integer, np.floating, np.bool_))

    if isinstance(result, ScoreResult):
        info = {"method": result.method, "n_samples": int(result.n_samples)}
        options = {k: v for k, v in result.method_options.items() if simple(v)}
    else:
        info = {"selector": type(result).__name__}
        options = {k: v for k, v in result.get_params(deep=False).items() if simple(v)}
        inner = getattr(result, "result_", None)
        if isinstance(inner, ScoreResult):
            info["method"] = inner.method
    if options:
        info["params"] = options
    return info
