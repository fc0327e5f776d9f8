"""scikit-learn selectors over the registered scores: one class per selection rule."""
from __future__ import annotations

import math
import os
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from ..core.messages import plain
from ..core.validation import as_labels, check_options_dict, is_int, is_real, param_error, renamed_parameters
from ..io.anndata import fit_on_matrix
from ..scores import (
    REGISTRY,
    LabelCoding,
    af_tested,
    bh_qvalues,
    carriers,
    check_af,
    check_options,
    finish,
    rank_order,
    untested_last,
    with_af,
)
from ..scoring import score
from ..sources import AnnDataTransformMixin, selector_input
from .score_funcs import (
    callable_scores,
    kinship_refused,
    matched_covariates,
    refuse_covariates_for,
    resolve_score_func,
    score_func_tags,
    validate_scored,
)

__all__ = ["SelectFdr", "SelectKBest", "SelectPercentile"]


def _on_disk(X):
    """A file path, or an open store (``genosift.io.Store``)."""
    return isinstance(X, (str, os.PathLike)) or hasattr(X, "row_chunks")


class _ScoreSelector(AnnDataTransformMixin, SelectorMixin, BaseEstimator):
    """Shared fitting: score every feature, keep ``scores_``, ``pvalues_`` and ``ranking_``.

    ``min_af`` / ``max_af``: an allele-frequency filter (see ``genosift.score``); the features
    outside it are not tested (NaN scores, ranked last, ``tested_`` False) and never selected.
    """

    def __init__(self, score_func="anova", *, method_options=None, min_af=None, max_af=None):
        self.score_func = score_func
        self.method_options = method_options
        self.min_af = min_af
        self.max_af = max_af

    def __sklearn_tags__(self):
        return score_func_tags(super().__sklearn_tags__(), self.score_func)

    def _spec(self):
        return resolve_score_func(self.score_func, type(self).__name__)

    def fit(self, X, y=None, covariates=None, kinship=None):
        """Score the features of ``X`` against ``y``.

        ``kinship`` is refused with the fix: a selector takes no kinship (the mixed model
        ``lmm`` is not a selector's score); score with ``genosift.score(X, y, method="lmm",
        kinship=K)`` and select from its result.

        ``covariates``: for the methods that adjust for covariates
        (``genosift.scores.covariate_methods()``), one row per sample of ``X`` (see
        ``genosift.score``). A fit parameter aligned with the samples, as ``sample_weight`` is
        in scikit-learn: ``Pipeline.fit(X, y, selectkbest__covariates=C)``, and
        ``cross_validate(..., params={"covariates": C})`` gives each fold its rows.

        ``X`` may also be a store (a ``.gs.h5ad`` path or ``genosift.io.Store``), scored out of
        core by ``genosift.scoring.store.score_store``, or any data file ``genosift.io.read`` reads; ``y``
        may then name a per-sample column of the file. ``feature_names_in_`` (and
        ``get_feature_names_out``) are the file's feature names, read when first asked for;
        ``transform`` takes arrays (scikit-learn warns that they carry no names) or DataFrames
        with those columns. A Dask array or DataFrame is scored by Dask tasks
        (``genosift.score``), never loaded whole.

        ``X`` may also be an ``anndata.AnnData``: ``y`` may name a column of ``adata.obs``,
        ``feature_names_in_`` are its ``var_names``, and a backed one is read from its file in
        chunks (see ``genosift.score``); ``transform(adata)`` returns ``adata[:, selected]``.
        """
        if kinship is not None:
            raise kinship_refused(f"{type(self).__name__}.fit was given a kinship, which", type(self).__name__)
        for attr in ("stats_", "result_", "pending_", "classes_", "carriers_", "tested_", "af_"):
            self.__dict__.pop(attr, None)
        if covariates is not None:  # before any data are read
            refuse_covariates_for(None if callable(self.score_func) else self._spec(), covariates, type(self).__name__)
            covariates = matched_covariates(X, covariates)
        given = selector_input(X)
        if given == "anndata" and callable(self.score_func):  # a callable scores the matrix in memory
            return fit_on_matrix(self, lambda M, labels: self._fit_chunk(M, labels, reset=True), X, y)
        if given != "matrix":
            return self._fit_file(X, y, covariates, names_read=given != "dask")
        return self._fit_chunk(X, y, reset=True, covariates=covariates)

    def _fit_file(self, X, y, covariates=None, *, names_read=True):
        """``fit`` by ``genosift.score`` of ``X`` where it is; ``names_read``: the feature names are
        those of the result (a file, a store, an AnnData), else a Dask DataFrame's columns."""
        self._check_params()
        spec = self._spec()
        if spec is None:
            raise TypeError(
                f"A callable score_func scores arrays; got {_describe(X)}. Pass a method "
                "name from genosift.methods() as score_func, or read the file into arrays first."
            )
        self.__dict__.pop("feature_names_in_", None)
        self.result_ = score(X, y, method=spec.name, min_af=self.min_af, max_af=self.max_af, covariates=covariates,
                             method_options=self.method_options)
        if hasattr(X, "columns") and all(isinstance(c, str) for c in X.columns):  # a Dask DataFrame
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        elif names_read:  # a file, a store or an AnnData: its names, read on first use
            self.__dict__["_names_from"] = self.result_
        self.n_features_in_ = self.result_.n_features
        self._keep_result()
        return self

    def __getattr__(self, name):
        # ``feature_names_in_`` after a fit on a file, store or AnnData: the names of that fit's
        # result, decoded when first asked for (millions of k-mer names cost nothing until then)
        if name == "ranking_" and "result_" in self.__dict__ and "scores_" in self.__dict__:
            self.__dict__[name] = self.result_.ranking
            return self.__dict__[name]
        if name == "feature_names_in_":
            result = self.__dict__.get("_names_from")
            if result is not None and result is self.__dict__.get("result_"):
                names = np.asarray(result.feature_names, dtype=object)
                self.__dict__[name] = names
                return names
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _keep_result(self):
        """The fitted attributes from ``result_``."""
        res = self.result_
        self.scores_, self.pvalues_ = res.scores, res.pvalues
        self.__dict__.pop("ranking_", None)  # the full ranking is sorted on first use (``__getattr__``)
        self.tested_ = res.tested
        if res.af is not None:
            self.af_ = res.af

    def transform(self, X):
        """Keep the selected columns of ``X`` (an array, sparse matrix or DataFrame; lazily for Dask).

        An AnnData gives the AnnData view ``adata[:, selected]`` (see
        ``genosift.sources.AnnDataTransformMixin.transform``).
        """
        if selector_input(X) == "dask":
            keep = self.get_support()
            if X.shape[1] != keep.shape[0]:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was fitted on "
                                 f"{keep.shape[0]}.")
            return X[list(X.columns[keep])] if hasattr(X, "columns") else X[:, np.flatnonzero(keep)]
        if _on_disk(X):
            raise TypeError(
                f"transform reduces arrays, not {_describe(X)}. Read the selected columns "
                "with genosift.io.open_store(path).read_columns(selector.get_support()) for a store, "
                "or genosift.io.read(path) for other files, and transform that."
            )
        return super().transform(X)

    def partial_fit(self, X, y=None, classes=None):
        """Add a chunk of rows; after any sequence of chunks the result equals ``fit`` on all rows.

        Rows that cannot be scored yet (one class so far, too few samples) are kept and scored
        once later chunks complete them; until then ``get_support`` says why it cannot select.

        ``classes``, as scikit-learn's incremental estimators take it: every label ``y`` may hold
        over all calls. Optional; when used it is given on the first call, and a later call may
        repeat it only unchanged (different classes are an error naming both). A chunk with a
        label outside it is an error naming the label. The labels are kept as ``classes_``. A
        first chunk of one class is then kept until a chunk of another class comes. The scores
        are those of the labels present in the rows (a declared class that no row has is not a
        class of the statistics), so they equal ``fit`` on all the rows.
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
        reset = not hasattr(self, "stats_")
        if reset:
            self.__dict__.pop("classes_", None)
        self._check_classes_arg(classes, y, spec, reset)
        return self._fit_chunk(X, y, reset=reset, partial=True)

    def _labels_seen(self):
        """The labels of the rows added so far, or None when they are not known (a numeric target)."""
        classes = getattr(getattr(self, "stats_", None), "classes", None)
        if classes is not None:
            return list(classes)
        coding = getattr(self, "_label_coding", None)
        if coding is not None and coding.labels and not coding.numeric:
            return list(coding.labels)
        return None

    def _check_classes_arg(self, classes, y, spec, first):
        """Check ``partial_fit``'s ``classes`` against earlier calls, and ``y`` against them."""
        known = getattr(self, "classes_", None)
        if classes is not None:
            if spec is not None and spec.task == "unsupervised":
                raise ValueError(f"Method '{spec.name}' takes no target, so partial_fit has no classes: "
                                 "leave out classes.")
            values = np.asarray(classes, dtype=object).ravel() if np.ndim(classes) else np.asarray([classes])
            declared = np.unique(as_labels(values, values.shape[0], what="classes"))
            if known is not None and not (len(known) == len(declared) and all(a == b for a, b in zip(known, declared))):
                raise ValueError(f"classes={plain(declared)} is not the same as on an earlier call to "
                                 f"partial_fit, which gave classes={plain(known)}. Give the same classes on "
                                 "every call (or leave them out after the first).")
            if known is None and not first:  # rows came without classes (or from fit): they must fit too
                seen = self._labels_seen()
                outside = None if seen is None else [c for c in seen if not any(c == d for d in declared)]
                if outside is None or outside:
                    held = ("whose target values are not kept to check against them" if seen is None
                            else f"with label(s) {plain(outside)} outside them")
                    raise ValueError(f"classes={plain(declared)} came after rows were added without classes, "
                                     f"{held}: give classes on the first call to partial_fit (or call fit to "
                                     "start again).")
            self.classes_ = known = declared
        if known is not None and y is not None:
            labels = np.unique(as_labels(np.asarray(y), np.shape(y)[0]))
            outside = [c for c in labels if not any(c == k for k in known)]
            if outside:
                raise ValueError(f"y holds label(s) {plain(outside)} that are not among classes={plain(known)} "
                                 "given to partial_fit. Give every label in classes on the first call.")

    def _fit_chunk(self, X, y, reset, partial=False, covariates=None):
        self._check_params()
        spec = self._spec()
        if spec is not None:  # fit and partial_fit enter here: the options are checked before any row is read
            check_options(spec, self.method_options or {})
        X, y = validate_scored(self, X, y, spec, reset=reset)
        bounds = check_af(self.min_af, self.max_af, type(self).__name__)
        if spec is None:
            self.scores_, self.pvalues_ = callable_scores(self.score_func, X, y)
            self.tested_ = None
            if bounds is not None:  # the filter applies to a callable's scores too
                self.af_ = carriers(X) / X.shape[0]
                self.tested_ = af_tested(self.af_, bounds)
                self.scores_ = np.where(self.tested_, self.scores_, np.nan)
                if self.pvalues_ is not None:
                    self.pvalues_ = np.where(self.tested_, self.pvalues_, np.nan)
            self.ranking_ = untested_last(rank_order(self.scores_), self.tested_)
            return self
        names = getattr(self, "feature_names_in_", None)
        if spec.streaming != "rows":
            self.result_ = score(X, y, method=spec.name, feature_names=names, min_af=self.min_af, max_af=self.max_af,
                                 covariates=covariates, method_options=self.method_options)
            self._keep_result()
            return self
        if reset or not hasattr(self, "_label_coding"):
            self._label_coding = LabelCoding(spec)
        chunk = spec.statistic.from_chunk(X, self._label_coding.values(y, X.shape[0]), feature_names=names)
        self.stats_ = chunk if reset else self.stats_.merge(chunk)
        if bounds is not None:  # carriers add up over the chunks, as the statistics merge
            self.carriers_ = carriers(X) + (0 if reset else self.carriers_)
        try:
            self.result_ = with_af(finish(spec, self._label_coding.finish(self.stats_), names, self.method_options),
                                   getattr(self, "carriers_", 0), bounds)
        except ValueError as exc:
            if not partial:
                raise
            for attr in ("result_", "scores_", "pvalues_", "ranking_", "tested_", "af_"):
                self.__dict__.pop(attr, None)
            self.pending_ = str(exc)
            return self
        self.__dict__.pop("pending_", None)
        self._keep_result()
        return self

    def _check_params(self):
        check_options_dict(self.method_options, "method_options", type(self).__name__)
        check_af(self.min_af, self.max_af, type(self).__name__)

    def _check_scored(self):
        if getattr(self, "pending_", None) is not None:
            raise NotFittedError(f"The rows given to partial_fit so far cannot be scored: {self.pending_} "
                                 "Add rows with partial_fit, or call fit.")
        check_is_fitted(self, "scores_")

    def _n_tested(self):
        tested = getattr(self, "tested_", None)
        return self.scores_.shape[0] if tested is None else int(tested.sum())

    def _top(self, k):
        self._check_scored()
        mask = np.zeros(self.scores_.shape[0], dtype=bool)
        n_tested = self._n_tested()
        if k > n_tested and n_tested < self.scores_.shape[0]:
            warnings.warn(f"k={k} is greater than the {n_tested} features inside the allele-frequency range "
                          f"[{self.min_af}, {self.max_af}]; only those are kept.", UserWarning)
        k = min(k, n_tested)
        # the first k of the ranking: by partition when only a fit's result knows the scores
        mask[self.ranking_[:k] if "ranking_" in self.__dict__ else self.result_.top_indices(k)] = True
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
    method_options : dict, optional
        Options of the method.
    min_af, max_af : float in [0, 1], optional
        Allele-frequency filter (as ``genosift.score``): only features carried (value above 0)
        by a share of the training samples in ``[min_af, max_af]`` are tested and can be kept;
        with fewer of them than ``k``, all of them are kept (with a warning).

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

    @renamed_parameters("score_params")
    def __init__(self, score_func="anova", *, k=10, method_options=None, min_af=None, max_af=None):
        super().__init__(score_func, method_options=method_options, min_af=min_af, max_af=max_af)
        self.k = k

    def _check_params(self):
        super()._check_params()
        if not (self.k == "all" or (is_int(self.k) and self.k >= 0)):
            raise param_error("k", "SelectKBest", "an int in [0, n_features] or 'all'", self.k)

    def _get_support_mask(self):
        self._check_scored()
        p = self.scores_.shape[0]
        if self.k == "all":
            tested = getattr(self, "tested_", None)
            return np.ones(p, dtype=bool) if tested is None else tested.copy()
        if self.k > p:
            warnings.warn(f"k={self.k} is greater than n_features={p}. All the features will be kept.", UserWarning)
        return self._top(self.k)


class SelectPercentile(_ScoreSelector):
    """Keep the best ``percentile`` percent of the features: ``ceil(percentile * n_features / 100)``.

    With an allele-frequency filter (``min_af``, ``max_af``), the percent of the features inside
    it: ``ceil(percentile * n_tested / 100)``.

    Examples
    --------
    >>> import genosift as gs
    >>> X, y, names = gs.load_golub()
    >>> int(gs.SelectPercentile(score_func="anova", percentile=1).fit(X, y).get_support().sum())
    31
    """

    @renamed_parameters("score_params")
    def __init__(self, score_func="anova", *, percentile=10, method_options=None, min_af=None, max_af=None):
        super().__init__(score_func, method_options=method_options, min_af=min_af, max_af=max_af)
        self.percentile = percentile

    def _check_params(self):
        super()._check_params()
        if not is_real(self.percentile) or not 0 <= self.percentile <= 100:
            raise param_error("percentile", "SelectPercentile", "a number in [0, 100]", self.percentile)

    def _get_support_mask(self):
        self._check_scored()
        return self._top(math.ceil(self.percentile * self._n_tested() / 100 - 1e-9))


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

    @renamed_parameters("score_params")
    def __init__(self, score_func="anova", *, alpha=0.05, method_options=None, min_af=None, max_af=None):
        super().__init__(score_func, method_options=method_options, min_af=min_af, max_af=max_af)
        self.alpha = alpha

    def _check_params(self):
        super()._check_params()
        if not is_real(self.alpha) or not 0 < self.alpha <= 1:
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
