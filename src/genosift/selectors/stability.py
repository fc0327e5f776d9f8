"""Stability selection: the features among the k best in most subsamples of the rows."""
from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import clone, is_regressor
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import validate_data

from ..core.validation import check_fit_input, is_int, is_real, param_error, renamed_parameters
from ..scores import rank_order
from ..sources import fit_accepts_anndata
from .models import (
    ModelSelector,
    check_finite_for,
    check_score_func,
    is_estimator,
    model_importances,
    rank_features,
    rows_ready,
)
from .score_funcs import covariate_frame, matched_covariates, refuse_covariates_for


def subsamples(y, *, n_resamples, sample_fraction, stratify, random_state=None):
    """Row indices of ``n_resamples`` subsamples drawn without replacement, (n_resamples, m), sorted rows.

    Stratified: ``floor(sample_fraction * n_c)`` rows (at least 1) of every class ``c``; else
    ``floor(sample_fraction * n)`` rows of all. ``random_state``: as scikit-learn's (an int, a
    ``RandomState`` or None).

    >>> from genosift.selectors import subsamples
    >>> subsamples([0, 0, 0, 0, 1, 1], n_resamples=3, sample_fraction=0.5, stratify=True, random_state=0).shape
    (3, 3)
    """
    y = np.asarray(y)
    rng = check_random_state(random_state)
    if stratify:
        codes = np.unique(y, return_inverse=True)[1].ravel()
        pools = [np.flatnonzero(codes == c) for c in range(codes.max() + 1)]
    else:
        pools = [np.arange(y.shape[0])]
    sizes = [max(1, math.floor(sample_fraction * len(pool) + 1e-9)) for pool in pools]
    out = np.empty((n_resamples, sum(sizes)), dtype=np.intp)
    for r in range(n_resamples):
        out[r] = np.sort(np.concatenate([rng.choice(pool, size, replace=False) for pool, size in zip(pools, sizes)]))
    return out


class StabilitySelection(ModelSelector):
    """Keep the features that are among the k best in at least ``threshold`` of many subsamples.

    Each of ``n_resamples`` subsamples of ``sample_fraction`` of the rows (drawn without
    replacement; stratified by class for class labels) ranks the features, by a score or by a
    model fitted to it, and its k best are counted. ``frequencies_`` is the fraction of
    subsamples in which each feature was among the k best.

    Parameters
    ----------
    score_func : str, callable or scikit-learn estimator, default="anova"
        A method name from ``genosift.methods()``, ``f(X, y) -> scores`` / ``-> (scores, pvalues)``,
        or an estimator whose ``coef_`` (squared, summed over classes) or ``feature_importances_``
        rank the features (cloned for every subsample).
    k : int, default=50
        Features counted per subsample (all of them if k > n_features, with a warning).
    n_resamples : int, default=100
    sample_fraction : float in (0, 1), default=0.5
    threshold : float in (0, 1], default=0.6
        Smallest selection frequency of a kept feature.
    method_options : dict, optional
        Options of the method.
    random_state : int, RandomState or None, default=None
        Seed of the subsamples.

    Attributes
    ----------
    frequencies_ : ndarray (n_features,)
    subsamples_ : ndarray (n_resamples, m), the row indices of every subsample (sorted)
    support_ : ndarray of bool, ``frequencies_ >= threshold``

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 500)); y = np.repeat([0, 1], 40); X[y == 1, :4] += 2
    >>> sel = gs.StabilitySelection("anova", k=10, n_resamples=50, random_state=0).fit(X, y)
    >>> np.flatnonzero(sel.get_support()).tolist(), sel.frequencies_[:4].tolist()
    ([0, 1, 2, 3], [1.0, 1.0, 1.0, 1.0])
    """

    @renamed_parameters("score_params")
    def __init__(self, score_func="anova", *, k=50, n_resamples=100, sample_fraction=0.5, threshold=0.6,
                 method_options=None, random_state=None):
        self.score_func = score_func
        self.k = k
        self.n_resamples = n_resamples
        self.sample_fraction = sample_fraction
        self.threshold = threshold
        self.method_options = method_options
        self.random_state = random_state

    def _model(self):
        return self.score_func if is_estimator(self.score_func) else None

    def _check_params(self):
        model = self._model()
        spec = None if model is not None else check_score_func(self.score_func, self.method_options,
                                                                 "StabilitySelection")
        if model is not None and self.method_options:
            raise ValueError("method_options are options of a registered method; with an estimator as "
                             "score_func, set its parameters on the estimator instead.")
        for name, ok, expected in (
            ("k", is_int(self.k) and self.k >= 1, "an int >= 1"),
            ("n_resamples", is_int(self.n_resamples) and self.n_resamples >= 1, "an int >= 1"),
            ("sample_fraction", is_real(self.sample_fraction) and 0 < self.sample_fraction < 1, "a number in (0, 1)"),
            ("threshold", is_real(self.threshold) and 0 < self.threshold <= 1, "a number in (0, 1]"),
        ):
            if not ok:
                raise param_error(name, "StabilitySelection", expected, getattr(self, name))
        return spec, model

    @fit_accepts_anndata
    def fit(self, X, y, covariates=None):
        """Count how often each feature is among the k best of a subsample.

        ``covariates``: one row per sample, for a ``score_func`` method that adjusts for them
        (``genosift.scores.covariate_methods()``); each subsample is scored with its rows.
        """
        spec, model = self._check_params()
        refuse_covariates_for(spec, covariates, "StabilitySelection")
        covariates = matched_covariates(X, covariates)
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=False)
        check_finite_for(X, getattr(self, "feature_names_in_", None), spec, model)
        X = rows_ready(X)
        covariates = covariate_frame(covariates, X.shape[0], "StabilitySelection")
        p = X.shape[1]
        if self.k > p:
            warnings.warn(f"k={self.k} is greater than n_features={p}. All the features will be kept.", UserWarning)
        k = min(self.k, p)
        regression = (spec is not None and spec.task == "regression"
                      or model is not None and is_regressor(model)
                      or type_of_target(y) not in ("binary", "multiclass"))
        self.subsamples_ = subsamples(y, n_resamples=self.n_resamples, sample_fraction=self.sample_fraction,
                                      stratify=not regression, random_state=self.random_state)
        counts = np.zeros(p, dtype=np.int64)
        for rows in self.subsamples_:
            if model is not None:
                ranking = rank_order(model_importances(clone(model).fit(X[rows], y[rows])))
            else:
                ranking = rank_features(self.score_func, self.method_options, X[rows], y[rows],
                                        None if covariates is None else covariates.iloc[rows])[2]
            counts[ranking[:k]] += 1
        self.frequencies_ = counts / self.n_resamples
        self.support_ = self.frequencies_ >= self.threshold
        return self
