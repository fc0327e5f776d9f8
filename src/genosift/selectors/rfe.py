"""Recursive feature elimination for many features: geometric steps and an optional pre-filter."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.utils.validation import validate_data

from ..core.messages import plain
from ..core.validation import check_fit_input, is_int, is_real, param_error
from ..sources import fit_accepts_anndata
from .models import ModelSelector, check_finite_for, check_score_func, is_estimator, model_importances, rank_features
from .score_funcs import matched_covariates, refuse_covariates_for


class RFE(ModelSelector):
    """Recursive feature elimination, for many features: geometric steps, an optional pre-filter.

    Fit the estimator on the remaining features, drop the ``step`` least important (squared
    ``coef_`` summed over classes, or ``feature_importances_``; ties: the lower index goes first),
    and repeat until ``n_features_to_select`` remain. A fractional ``step`` is a fraction of the
    features remaining at each round (at least one), so p features take O(log p) fits.

    With an int ``step``, or when the elimination ends within the first round, the selected set
    equals that of ``sklearn.feature_selection.RFE`` configured the same way; scikit-learn reads
    a fractional step as a fraction of the initial features instead, a constant step.

    Parameters
    ----------
    estimator : scikit-learn estimator
        With ``coef_`` or ``feature_importances_`` after fit (a ``Pipeline``: its last step).
        If it has ``warm_start=True`` and a ``coef_``, one clone is refitted from its previous
        weights (restricted to the surviving features) at every round; otherwise every round fits
        a fresh clone.
    n_features_to_select : int, float or None, default=None
        How many features to keep: an int, a fraction of the features entering the elimination
        (``int(fraction * m)``, at least 1), or None for half of them.
    step : int or float, default=0.1
        Features dropped per round: an int >= 1, or a fraction in (0, 1) of those remaining.
    prefilter : str or callable, optional
        A registered method or ``f(X, y) -> scores``: only its ``prefilter_k`` best features enter
        the elimination.
    prefilter_k : int, optional
        Required with ``prefilter``.

    Attributes
    ----------
    support_ : ndarray of bool (n_features,)
    ranking_ : ndarray of int (n_features,)
        1 for the selected features, 2 for those dropped in the last round, and so on; features
        removed by the pre-filter rank after all others.
    n_features_ : int
    estimator_ : the estimator fitted on the selected features.

    Examples
    --------
    >>> import genosift as gs
    >>> from sklearn.svm import LinearSVC
    >>> X, y, names = gs.load_golub()
    >>> rfe = gs.RFE(LinearSVC(), n_features_to_select=10, prefilter="welch", prefilter_k=500).fit(X, y)
    >>> rfe.n_features_, int((rfe.ranking_ == 1).sum()), rfe.transform(X).shape
    (10, 10, (38, 10))
    """

    def __init__(self, estimator, *, n_features_to_select=None, step=0.1, prefilter=None, prefilter_k=None):
        self.estimator = estimator
        self.n_features_to_select = n_features_to_select
        self.step = step
        self.prefilter = prefilter
        self.prefilter_k = prefilter_k

    def _check_params(self, n_features):
        if not is_estimator(self.estimator):
            raise param_error("estimator", "RFE", "a scikit-learn estimator (with fit)", self.estimator)
        ok_step = is_int(self.step) and self.step >= 1 or is_real(self.step) and 0 < self.step < 1
        if not ok_step:
            raise param_error("step", "RFE", "an int >= 1 or a fraction in (0, 1)", self.step)
        nsel = self.n_features_to_select
        ok = nsel is None or is_int(nsel) and nsel >= 1 or is_real(nsel) and not is_int(nsel) and 0 < nsel <= 1
        if not ok:
            raise param_error("n_features_to_select", "RFE", "an int >= 1, a fraction in (0, 1] or None", nsel)
        if self.prefilter is None:
            if self.prefilter_k is not None:
                raise ValueError("prefilter_k is set but prefilter is None: name the pre-filter's score "
                                 "(e.g. prefilter='anova'), or leave prefilter_k out.")
            return
        check_score_func(self.prefilter, None, "RFE", param="prefilter")
        if not is_int(self.prefilter_k) or not 1 <= self.prefilter_k <= n_features:
            raise param_error("prefilter_k", "RFE",
                              f"an int in [1, n_features] (n_features = {n_features}) when prefilter is set",
                              self.prefilter_k)

    @fit_accepts_anndata
    def fit(self, X, y, covariates=None):
        """Eliminate features of ``X`` by the importances of models fitted to ``y``.

        ``covariates``: one row per sample, for a ``prefilter`` method that adjusts for them
        (``genosift.scores.covariate_methods()``); the models see the features only.
        """
        if covariates is not None:
            refuse_covariates_for(None if self.prefilter is None or callable(self.prefilter)
                                  else check_score_func(self.prefilter, None, "RFE", param="prefilter"),
                                  covariates, "RFE")
            covariates = matched_covariates(X, covariates)
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, accept_sparse="csc", ensure_all_finite=False)
        check_finite_for(X, getattr(self, "feature_names_in_", None), None, self.estimator)
        p = X.shape[1]
        self._check_params(p)
        if is_classifier(self.estimator) and np.unique(y).size < 2:
            raise ValueError(f"y has only one class ({plain(np.unique(y)[0])}) in {len(y)} sample(s); RFE fits the "
                             "classifier estimator, which needs at least two. Check the labels.")
        if self.prefilter is None:
            candidates = np.arange(p)
        else:
            candidates = np.sort(rank_features(self.prefilter, None, X, y, covariates)[2][: self.prefilter_k])
        Xc = X if candidates.size == p else X[:, candidates]
        m = candidates.size
        nsel = self.n_features_to_select
        n_select = m // 2 if nsel is None else nsel if is_int(nsel) else int(nsel * m)
        if n_select > m:
            warnings.warn(f"n_features_to_select={n_select} > the {m} features entering the elimination: "
                          "all of them are kept.", UserWarning)
        n_select = max(1, min(n_select, m))
        support = np.ones(m, dtype=bool)
        ranking = np.ones(m, dtype=np.int64)
        model = None
        while support.sum() > n_select:
            features = np.flatnonzero(support)
            model = self._next(model)
            model.fit(Xc[:, features], y)
            importances = model_importances(model)
            order = np.argsort(importances, kind="stable")
            step = self.step if is_int(self.step) else max(1, int(self.step * features.size))
            drop = min(step, features.size - n_select)
            support[features[order[:drop]]] = False
            ranking[~support] += 1
            if self._warm(model):
                model.coef_ = model.coef_[..., np.sort(order[drop:])]
        self.estimator_ = self._next(model).fit(Xc[:, support], y)
        self.support_ = np.zeros(p, dtype=bool)
        self.support_[candidates[support]] = True
        self.ranking_ = np.full(p, ranking.max() + 1, dtype=np.int64)
        self.ranking_[candidates] = ranking
        self.n_features_ = int(support.sum())
        return self

    def _warm(self, model):
        return model is not None and model.get_params().get("warm_start") is True and hasattr(model, "coef_")

    def _next(self, model):
        """The model of the next round: the same one to warm-start, else a fresh clone."""
        return model if self._warm(model) else clone(self.estimator)
