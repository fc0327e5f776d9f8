"""scikit-learn selectors over the registered scores: one class per selection rule."""
from __future__ import annotations

import math
import numbers
import os
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import check_fit_input, param_error
from .scores import REGISTRY, bh_qvalues, finish, get_method, rank_order, score
from .scores import LabelCoding


def _on_disk(X):
    """A file path, or an open store (``genosift.io.Store``)."""
    return isinstance(X, (str, os.PathLike)) or hasattr(X, "row_chunks")


class _ScoreSelector(SelectorMixin, BaseEstimator):
    """Shared fitting: score every feature, keep ``scores_``, ``pvalues_`` and ``ranking_``."""

    def __init__(self, score_func="anova", *, score_params=None):
        self.score_func = score_func
        self.score_params = score_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        spec = REGISTRY.get(self.score_func) if isinstance(self.score_func, str) else None
        tags.target_tags.required = spec is None or spec.task != "unsupervised"
        tags.input_tags.sparse = True
        return tags

    def _spec(self):
        if callable(self.score_func):
            return None
        try:
            return get_method(self.score_func)
        except ValueError:
            raise param_error(
                "score_func", type(self).__name__,
                f"a callable or one of {sorted(REGISTRY)}", self.score_func,
            ) from None

    def _validate(self, X, y, reset, spec):
        check_fit_input(X, y, supervised=spec is None or spec.task != "unsupervised")
        kwargs = dict(accept_sparse=("csr", "csc"), dtype="numeric", reset=reset,
                      ensure_all_finite=spec is None)
        if spec is not None and spec.task == "unsupervised":
            return validate_data(self, X, **kwargs), None
        return validate_data(self, X, y, **kwargs)

    def fit(self, X, y=None):
        """Score the features of ``X`` against ``y``.

        ``X`` may also be a store (a ``.gs.h5ad`` path or ``genosift.io.Store``), scored out of
        core by ``genosift.io.score_store``, or any data file ``genosift.io.read`` reads; ``y``
        may then name a per-sample column of the file. ``result_.feature_names`` holds the
        file's feature names; ``transform`` takes arrays. A Dask array or DataFrame is scored by
        Dask tasks (``genosift.score``), never loaded whole.
        """
        from .dask import is_dask_collection

        for attr in ("stats_", "result_", "pending_"):
            self.__dict__.pop(attr, None)
        if _on_disk(X) or is_dask_collection(X):
            return self._fit_file(X, y)
        return self._fit_chunk(X, y, reset=True)

    def _fit_file(self, X, y):
        self._check_params()
        spec = self._spec()
        if spec is None:
            raise TypeError(
                f"A callable score_func scores arrays; got {_describe(X)}. Pass a method "
                "name from genosift.methods() as score_func, or read the file into arrays first."
            )
        self.__dict__.pop("feature_names_in_", None)
        self.result_ = score(X, y, method=spec.name, **(self.score_params or {}))
        if hasattr(X, "columns") and all(isinstance(c, str) for c in X.columns):  # a Dask DataFrame
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        self.n_features_in_ = self.result_.n_features
        self.scores_, self.pvalues_, self.ranking_ = self.result_.scores, self.result_.pvalues, self.result_.ranking
        return self

    def transform(self, X):
        """Keep the selected columns of ``X`` (an array, sparse matrix or DataFrame; lazily for Dask)."""
        from .dask import is_dask_collection

        if is_dask_collection(X):
            keep = self.get_support()
            if X.shape[1] != keep.shape[0]:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was fitted on {keep.shape[0]}.")
            return X[list(X.columns[keep])] if hasattr(X, "columns") else X[:, np.flatnonzero(keep)]
        if _on_disk(X):
            raise TypeError(
                f"transform reduces arrays, not {_describe(X)}. Read the selected columns "
                "with genosift.io.open_store(path).read_columns(selector.get_support()) for a store, "
                "or genosift.io.read(path) for other files, and transform that."
            )
        return super().transform(X)

    def partial_fit(self, X, y=None):
        """Add a chunk of rows; after any sequence of chunks the result equals ``fit`` on all rows.

        Rows that cannot be scored yet (one class so far, too few samples) are kept and scored
        once later chunks complete them; until then ``get_support`` says why it cannot select.
        """
        if _on_disk(X):
            raise TypeError(
                f"partial_fit adds a chunk of rows as an array; got {_describe(X)}. "
                "Pass the file to fit, which streams it."
            )
        if callable(self.score_func):
            raise TypeError(
                f"partial_fit needs a registered method as score_func (its statistics merge across "
                f"chunks); got the callable {self.score_func!r}. Use fit on all rows instead."
            )
        spec = self._spec()
        if spec is not None and spec.streaming != "rows":
            raise TypeError(
                f"partial_fit cannot stream method '{spec.name}': it needs every sample of a feature "
                "at once. Use fit on all rows, or a method whose statistics merge across chunks "
                f"({sorted(m.name for m in REGISTRY.values() if m.streaming == 'rows')})."
            )
        return self._fit_chunk(X, y, reset=not hasattr(self, "stats_"), partial=True)

    def _fit_chunk(self, X, y, reset, partial=False):
        self._check_params()
        spec = self._spec()
        X, y = self._validate(X, y, reset, spec)
        if spec is None:
            out = self.score_func(X, y)
            scores, pvalues = out if isinstance(out, (tuple, list)) else (out, None)
            self.scores_ = np.asarray(scores, dtype=np.float64)
            self.pvalues_ = None if pvalues is None else np.asarray(pvalues, dtype=np.float64)
            self.ranking_ = rank_order(self.scores_)
            return self
        names = getattr(self, "feature_names_in_", None)
        if spec.streaming != "rows":
            self.result_ = score(X, y, method=spec.name, feature_names=names, **(self.score_params or {}))
            self.scores_, self.pvalues_, self.ranking_ = self.result_.scores, self.result_.pvalues, self.result_.ranking
            return self
        if reset or not hasattr(self, "_label_coding"):
            self._label_coding = LabelCoding(spec)
        chunk = spec.statistic.from_chunk(X, self._label_coding.values(y, X.shape[0]), feature_names=names)
        self.stats_ = chunk if reset else self.stats_.merge(chunk)
        try:
            self.result_ = finish(spec, self._label_coding.finish(self.stats_), names, self.score_params)
        except ValueError as exc:
            if not partial:
                raise
            for attr in ("result_", "scores_", "pvalues_", "ranking_"):
                self.__dict__.pop(attr, None)
            self.pending_ = str(exc)
            return self
        self.__dict__.pop("pending_", None)
        self.scores_ = self.result_.scores
        self.pvalues_ = self.result_.pvalues
        self.ranking_ = self.result_.ranking
        return self

    def _check_params(self):
        if self.score_params is not None and not isinstance(self.score_params, dict):
            raise param_error("score_params", type(self).__name__, "a dict or None", self.score_params)

    def _check_scored(self):
        if getattr(self, "pending_", None) is not None:
            raise NotFittedError(f"The rows given to partial_fit so far cannot be scored: {self.pending_} "
                                 "Add rows with partial_fit, or call fit.")
        check_is_fitted(self, "ranking_")

    def _top(self, k):
        self._check_scored()
        mask = np.zeros(self.scores_.shape[0], dtype=bool)
        mask[self.ranking_[:k]] = True
        return mask


def _describe(X):
    if isinstance(X, (str, os.PathLike)):
        return f"the file {str(X)!r}"
    return f"the store {X!r}" if hasattr(X, "row_chunks") else f"the Dask {type(X).__name__}"


class SelectKBest(_ScoreSelector):
    """Keep the ``k`` best-scoring features (NaN scores last, ties by lower index).

    Parameters
    ----------
    score_func : str or callable, default="anova"
        A method name from ``genosift.methods()``, or ``f(X, y) -> scores`` /
        ``-> (scores, pvalues)`` as in scikit-learn.
    k : int or "all", default=10
    score_params : dict, optional
        Options of the method.

    Attributes
    ----------
    scores_, pvalues_ : ndarray (n_features,)
    ranking_ : ndarray, feature indices best first
    result_ : ScoreResult (registered methods only)
    stats_ : the merged statistics (registered methods only; what ``partial_fit`` extends)

    Examples
    --------
    >>> import genosift as gs
    >>> X, y, names = gs.load_golub()
    >>> sel = gs.SelectKBest(score_func="fisher", k=5).fit(X, y)
    >>> sel.transform(X).shape
    (38, 5)
    """

    def __init__(self, score_func="anova", *, k=10, score_params=None):
        super().__init__(score_func, score_params=score_params)
        self.k = k

    def _check_params(self):
        super()._check_params()
        if not (self.k == "all" or (isinstance(self.k, numbers.Integral) and not isinstance(self.k, bool) and self.k >= 0)):
            raise param_error("k", "SelectKBest", "an int in [0, n_features] or 'all'", self.k)

    def _get_support_mask(self):
        self._check_scored()
        p = self.scores_.shape[0]
        if self.k == "all":
            return np.ones(p, dtype=bool)
        if self.k > p:
            warnings.warn(f"k={self.k} is greater than n_features={p}. All the features will be kept.", UserWarning)
        return self._top(self.k)


class SelectPercentile(_ScoreSelector):
    """Keep the best ``percentile`` percent of the features: ``ceil(percentile * n_features / 100)``.

    Examples
    --------
    >>> import genosift as gs
    >>> X, y, names = gs.load_golub()
    >>> int(gs.SelectPercentile(score_func="anova", percentile=1).fit(X, y).get_support().sum())
    31
    """

    def __init__(self, score_func="anova", *, percentile=10, score_params=None):
        super().__init__(score_func, score_params=score_params)
        self.percentile = percentile

    def _check_params(self):
        super()._check_params()
        ok = isinstance(self.percentile, numbers.Real) and not isinstance(self.percentile, bool)
        if not ok or not 0 <= self.percentile <= 100:
            raise param_error("percentile", "SelectPercentile", "a number in [0, 100]", self.percentile)

    def _get_support_mask(self):
        self._check_scored()
        p = self.scores_.shape[0]
        return self._top(math.ceil(self.percentile * p / 100 - 1e-9))


class SelectFdr(_ScoreSelector):
    """Keep the features whose Benjamini-Hochberg q-value is at most ``alpha``.

    The method must have p-values (see the ``pvalues`` column of ``genosift.methods()``).

    Examples
    --------
    >>> import genosift as gs
    >>> X, y, names = gs.load_golub()
    >>> sel = gs.SelectFdr(score_func="welch", alpha=0.01).fit(X, y)
    >>> bool(sel.get_support().sum() > 0)
    True
    """

    def __init__(self, score_func="anova", *, alpha=0.05, score_params=None):
        super().__init__(score_func, score_params=score_params)
        self.alpha = alpha

    def _check_params(self):
        super()._check_params()
        ok = isinstance(self.alpha, numbers.Real) and not isinstance(self.alpha, bool)
        if not ok or not 0 < self.alpha <= 1:
            raise param_error("alpha", "SelectFdr", "a number in (0, 1]", self.alpha)
        spec = self._spec()
        if spec is not None and not spec.has_pvalues:
            with_p = sorted(m.name for m in REGISTRY.values() if m.has_pvalues)
            raise ValueError(
                f"SelectFdr needs p-values, and method '{spec.name}' has none. Use one of {with_p}, "
                "or SelectKBest / SelectPercentile."
            )

    def _get_support_mask(self):
        self._check_scored()
        if self.pvalues_ is None:
            raise ValueError("SelectFdr needs p-values: the score_func callable returned scores only.")
        q = self.result_.qvalues if hasattr(self, "result_") else bh_qvalues(self.pvalues_)
        with np.errstate(invalid="ignore"):
            return q <= self.alpha
