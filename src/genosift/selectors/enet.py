"""The whole-genome elastic net: every feature in one penalised logistic or linear model, its
penalty chosen by cross-validation, as a function (``elastic_net``) and a scikit-learn selector
and estimator (``ElasticNetSelector``).

The objective and the path are glmnet's (``genosift.enet.path``); the cross-validation is
cv.glmnet's: each fold fits the whole data's penalties on its training rows, the held-out
deviance per sample is averaged over all samples (``cv_mean``) with the standard error of the
fold means (``cv_se``), ``lambda_min`` is the penalty of the smallest mean and ``lambda_1se``
the largest within one standard error of it. The predictions of the held-out rows give the
out-of-fold AUC, accuracy and R^2 (never the fit to the rows it was fitted on).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..core.validation import check_fit_input, is_int, is_real, param_error, renamed_parameters
from ..enet.path import MemoryDesign, PenaltyGrid, Solver, fit_path, in_data_units, means
from ..sources import AnnDataTransformMixin
from .folds import cv_splits

__all__ = ["FAMILIES", "PROB_CLIP", "ElasticNetSelector", "EnetResult", "check_enet_options", "covariate_matrix",
           "elastic_net",
           "enet_target", "logistic_of"]

#: The models: logistic for two classes, linear for a numeric target, or chosen by the target ("auto").
FAMILIES = ("auto", "logistic", "linear")
#: The held-out probabilities are kept inside [PROB_CLIP, 1 - PROB_CLIP] for the deviance (cv.glmnet's).
PROB_CLIP = 1e-5


@dataclass
class EnetResult:
    """A fitted elastic-net path and its cross-validation.

    ``coef`` (n_features, L) CSC and ``intercept`` (L,) in the data's units (identical features share
    their pattern's coefficient equally); ``covariate_coef`` (L, c); ``cv_mean`` and ``cv_se`` the
    held-out deviance per sample; ``oof`` (n, L) the held-out linear predictor of every sample.
    """

    lambdas: np.ndarray
    intercept: np.ndarray
    coef: sp.csc_matrix
    covariate_coef: np.ndarray
    dev_ratio: np.ndarray
    logistic: bool
    l1_ratio: float
    cv_mean: np.ndarray = None
    cv_se: np.ndarray = None
    oof: np.ndarray = None
    folds: list = None
    patterns: int = 0
    checks: int = 0
    working: int = 0

    def __repr__(self):
        cv = f", folds={len(self.folds)}" if self.folds else ""
        return (f"EnetResult({'logistic' if self.logistic else 'linear'}, l1_ratio={self.l1_ratio:g}, "
                f"n_features={self.coef.shape[0]}, n_lambdas={self.lambdas.size}, patterns={self.patterns}{cv})")

    @property
    def df(self):
        """The number of features in the model at each penalty."""
        return np.diff(self.coef.indptr)

    @property
    def index_min(self):
        """The penalty of the smallest cross-validated deviance (the largest such if tied)."""
        return int(np.flatnonzero(self.cv_mean <= np.nanmin(self.cv_mean))[0])

    @property
    def index_1se(self):
        """The largest penalty whose cross-validated deviance is within one standard error of the smallest."""
        i = self.index_min
        return int(np.flatnonzero(self.cv_mean <= self.cv_mean[i] + self.cv_se[i])[0])

    def index(self, choice="min"):
        if choice in ("min", "1se"):
            if self.cv_mean is None:
                raise ValueError(f"lambda {choice!r} is chosen by cross-validation, and this path has none.")
            return self.index_min if choice == "min" else self.index_1se
        raise param_error("lambda_choice", "ElasticNetSelector", "'min' or '1se'", choice)

    def out_of_fold(self, y, index):
        """Out-of-fold metrics at the penalty ``index``: deviance per sample, R^2 (of the held-out
        probability or value), and for two classes the accuracy and ROC AUC."""
        from sklearn.metrics import roc_auc_score

        eta = self.oof[:, index]
        mean = means(eta, self.logistic)
        out = {"deviance": float(self.cv_mean[index]),
               "r2": float(1.0 - ((y - mean) ** 2).sum() / ((y - y.mean()) ** 2).sum())}
        if self.logistic:
            out["accuracy"] = float(((mean > 0.5) == (y > 0.5)).mean())
            out["roc_auc"] = float(roc_auc_score(y, mean))
        return out


def _held_out_loss(y, eta, logistic):
    """Each held-out sample's deviance at each penalty (cv.glmnet's, probabilities clipped)."""
    if logistic:
        p = np.clip(means(eta, True), PROB_CLIP, 1 - PROB_CLIP)
        return -2.0 * (y[:, None] * np.log(p) + (1 - y[:, None]) * np.log1p(-p))
    return (y[:, None] - eta) ** 2


def elastic_net(design, y, *, logistic, l1_ratio=0.5, n_lambdas=100, min_ratio=None, lambdas=None, covariates=None,
                cv=10, groups=None, random_state=0, tol=1e-7, inverse=None, owner="elastic_net"):
    """Fit the path on every sample and cross-validate it (``cv``: k folds, a splitter or pairs;
    0 or None: no cross-validation). ``design``: a ``MemoryDesign`` or a store's; ``inverse`` maps
    each feature to its design column (None: one column per feature)."""
    y = np.asarray(y, dtype=np.float64)
    Z = None if covariates is None else np.asarray(covariates, dtype=np.float64)
    path = fit_path(design, y, logistic=logistic, l1_ratio=l1_ratio, grid=PenaltyGrid(lambdas, n_lambdas, min_ratio),
                    covariates=Z, solver=Solver(tol=tol))
    intercept, B, gamma = in_data_units(path, design)
    coef = B if inverse is None else sp.csc_matrix(_spread(inverse, design.copies) @ B)
    result = EnetResult(path.lambdas, intercept, coef, gamma, path.dev_ratio, logistic, l1_ratio,
                        patterns=design.n_columns, checks=path.checks, working=path.working)
    if cv:
        folds = cv_splits(cv, y, y, groups, logistic, random_state, owner)
        L = path.lambdas.size
        oof = np.full((y.size, L), np.nan)
        raw = np.empty((len(folds), L))
        sizes = np.empty(len(folds))
        for f, (train, test) in enumerate(folds):
            fitted = design.rows(train)
            fold = fit_path(fitted, y[train], logistic=logistic, l1_ratio=l1_ratio, grid=PenaltyGrid(path.lambdas),
                            covariates=None if Z is None else Z[train], solver=Solver(tol=tol, stop_early=False))
            oof[test] = _held_out(design, fitted, fold, test, Z)
            raw[f] = _held_out_loss(y[test], oof[test], logistic).mean(axis=0)
            sizes[f] = test.size
        result.cv_mean = (raw * sizes[:, None]).sum(axis=0) / sizes.sum()
        spread = ((raw - result.cv_mean) ** 2 * sizes[:, None]).sum(axis=0) / sizes.sum()
        result.cv_se = np.sqrt(spread / (len(folds) - 1))
        result.oof, result.folds = oof, folds
    return result


def check_enet_options(*, l1_ratio=0.5, n_lambdas=100, min_ratio=None, lambda_choice="min", family="auto", tol=1e-7,
                       owner="ElasticNetSelector"):
    """The elastic net's options checked before any data are read; a bad value is the error naming it."""
    if not (is_real(l1_ratio) and 0 < l1_ratio <= 1):
        raise param_error("l1_ratio", owner, "a number in (0, 1]", l1_ratio)
    if not (is_int(n_lambdas) and n_lambdas >= 1):
        raise param_error("n_lambdas", owner, "an int >= 1", n_lambdas)
    if min_ratio is not None and not (is_real(min_ratio) and 0 < min_ratio < 1):
        raise param_error("min_ratio", owner, "a number in (0, 1) or None", min_ratio)
    if lambda_choice not in ("min", "1se"):
        raise param_error("lambda_choice", owner, "'min' or '1se'", lambda_choice)
    if family not in FAMILIES:
        raise param_error("family", owner, f"one of {list(FAMILIES)}", family)
    if not (is_real(tol) and 0 < tol < 1):
        raise param_error("tol", owner, "a number in (0, 1)", tol)


def enet_target(y, family="auto"):
    """``(values, logistic, classes)``: the target as the model fits it (0/1 for ``classes[1]``, or the
    numbers), whether the model is logistic ("auto": when ``y`` has two values) and the two classes."""
    values = np.unique(y)
    if values.size < 2:
        raise ValueError(f"y has one value (one class) over its {len(y)} sample(s): there is nothing to explain. "
                         "Check the target.")
    logistic = family == "logistic" or (family == "auto" and values.size == 2)
    if not logistic:
        try:
            return np.asarray(y, dtype=np.float64), False, None
        except (TypeError, ValueError):
            raise ValueError(f"The linear elastic net needs a numeric target; y has {values.size} values such as "
                             f"{values[0]!r}. Give numbers, or two classes for the logistic model.") from None
    if values.size != 2:
        from sklearn.utils.multiclass import type_of_target

        raise ValueError(f"Only binary classification is supported. The type of the target is {type_of_target(y)} "
                         f"({values.size} values): the logistic elastic net takes two classes. Give a binary target, "
                         "or the linear model (family 'linear') for a numeric one.")
    return (np.asarray(y) == values[1]).astype(np.float64), True, values


def logistic_of(coef, intercept, classes):
    """A fitted scikit-learn ``LogisticRegression`` of two ``classes`` with these coefficients (one per
    feature it takes) and intercept."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression()
    model.classes_ = np.asarray(classes)
    model.coef_ = np.asarray(coef, dtype=np.float64).reshape(1, -1)
    model.intercept_ = np.array([float(intercept)])
    model.n_features_in_ = model.coef_.shape[1]
    model.n_iter_ = np.zeros(1, dtype=np.int32)
    return model


def _spread(inverse, copies):
    """The (p, P) matrix giving each feature its pattern's coefficient over the pattern's copies
    (0 for a feature in no pattern: ``inverse`` -1, outside the allele-frequency range)."""
    inverse = np.asarray(inverse)
    inside = np.flatnonzero(inverse >= 0)
    return sp.csr_matrix((1.0 / copies[inverse[inside]], (inside, inverse[inside])),
                         shape=(inverse.size, copies.size))


def _held_out(design, fitted, fold_path, test, Z):
    """The held-out rows' linear predictor from a path fitted on the training rows (``fitted``)."""
    intercept, B, gamma = in_data_units(fold_path, fitted)
    eta = intercept + design.dot(B, test)
    if Z is not None:
        eta = eta + Z[test] @ gamma.T
    return eta


def _logistic(selector):
    """predict_proba exists before fit (to say it is not fitted) and for the logistic model."""
    return not hasattr(selector, "coef_") or hasattr(selector, "classes_")


class ElasticNetSelector(AnnDataTransformMixin, SelectorMixin, BaseEstimator):
    """Every feature in one elastic-net model; the features it keeps, and its predictions.

    A logistic model for two classes, a linear one for a numeric target (``family``), over every
    feature of a dense or sparse ``X`` (identical columns fitted as one), with glmnet's objective
    (features standardised, covariates and the intercept unpenalised) along a path of
    ``n_lambdas`` penalties, the penalty chosen by ``cv``-fold cross-validation
    (``lambda_choice``: the smallest held-out deviance, or the largest penalty within one
    standard error of it). The selected features are those with a coefficient at that penalty.

    Parameters
    ----------
    l1_ratio : float, default=0.5
        The mixing of the lasso (1) and ridge (0) penalties, in (0, 1]: scikit-learn's name
        (glmnet and pyseer call it ``alpha``, which in genosift is only a significance level).
    n_lambdas : int, default=100
    min_ratio : float, optional
        The smallest penalty as a share of the largest (glmnet's default: 0.01 when there are more
        features than samples, else 1e-4).
    cv : int, splitter or iterable, default=10
        Folds (stratified for two classes; ``groups`` in ``fit`` keep a group, e.g. a lineage,
        inside one fold); 0: no cross-validation, the model of the path's last penalty.
    lambda_choice : {"min", "1se"}, default="min"
    family : {"auto", "logistic", "linear"}, default="auto"
        "auto": logistic when ``y`` has two values, else linear.
    random_state : int or None, default=0
        The folds' shuffling (None: in row order).
    tol : float, default=1e-7
        glmnet's ``thresh``.

    Attributes
    ----------
    result_ : EnetResult
        The path, its cross-validation and its out-of-fold predictions.
    coef_ : ndarray (n_features,)
        The coefficients at the chosen penalty.
    intercept_ : float
    lambda_ : float
    classes_ : ndarray (logistic only)

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((80, 200)) < 0.3).astype(float)
    >>> y = (X[:, 0] + X[:, 1] + 0.3 * rng.standard_normal(80) > 0.8).astype(int)
    >>> sel = gs.ElasticNetSelector(cv=5).fit(X, y)
    >>> bool(sel.get_support()[0] and sel.get_support()[1])
    True
    """

    @renamed_parameters("alpha")
    def __init__(self, l1_ratio=0.5, *, n_lambdas=100, min_ratio=None, cv=10, lambda_choice="min", family="auto",
                 random_state=0, tol=1e-7):
        self.l1_ratio = l1_ratio
        self.n_lambdas = n_lambdas
        self.min_ratio = min_ratio
        self.cv = cv
        self.lambda_choice = lambda_choice
        self.family = family
        self.random_state = random_state
        self.tol = tol

    def fit(self, X, y, groups=None, covariates=None):
        """Fit the path on ``X`` and ``y``, cross-validate it and keep the chosen penalty's model.

        ``groups``: one label per sample kept inside one fold (lineages); ``covariates``: one row
        per sample, in the model unpenalised (and needed again by ``predict``).
        """
        from sklearn.utils.validation import validate_data

        from .score_funcs import matched_covariates

        check_enet_options(l1_ratio=self.l1_ratio, n_lambdas=self.n_lambdas, min_ratio=self.min_ratio,
                           lambda_choice=self.lambda_choice, family=self.family, tol=self.tol)
        covariates = matched_covariates(X, covariates)
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, accept_sparse="csc", dtype=np.float64)
        target, logistic, classes = enet_target(y, self.family)
        if logistic:
            self.classes_ = classes
        elif hasattr(self, "classes_"):  # a refit with a numeric target
            del self.classes_
        Z = None if covariates is None else covariate_matrix(covariates, X.shape[0])
        design, inverse = MemoryDesign.of(X)
        self.result_ = elastic_net(design, target, logistic=logistic, l1_ratio=float(self.l1_ratio),
                                   n_lambdas=self.n_lambdas, min_ratio=self.min_ratio, covariates=Z,
                                   cv=self.cv if self.cv else None, groups=groups, random_state=self.random_state,
                                   tol=self.tol, inverse=inverse, owner="ElasticNetSelector")
        r = self.result_
        i = r.index(self.lambda_choice) if self.cv else r.lambdas.size - 1
        self.lambda_index_ = i
        self.lambda_ = float(r.lambdas[i])
        self.coef_ = r.coef[:, i].toarray().ravel()
        self.intercept_ = float(r.intercept[i])
        self.covariate_coef_ = r.covariate_coef[i]
        return self

    def decision_function(self, X, covariates=None):
        """The linear predictor of each sample (log-odds of ``classes_[1]`` for the logistic model)."""
        from sklearn.utils.validation import validate_data

        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        # as scikit-learn's linear models compute it (the same bits as ``as_logistic()``'s)
        eta = safe_sparse_dot(X, self.coef_.reshape(1, -1).T, dense_output=True).ravel() + self.intercept_
        if self.covariate_coef_.size:
            if covariates is None:
                raise ValueError(f"This model was fitted with {self.covariate_coef_.size} covariate(s): give them "
                                 "to predict (covariates=).")
            eta = eta + covariate_matrix(covariates, X.shape[0]) @ self.covariate_coef_
        return eta

    def predict(self, X, covariates=None):
        """The class (logistic model) or the value (linear model) of each sample."""
        eta = self.decision_function(X, covariates)
        return self.classes_[(eta > 0).astype(int)] if hasattr(self, "classes_") else eta

    @available_if(_logistic)
    def predict_proba(self, X, covariates=None):
        """The probability of each class (the logistic model only)."""
        p = expit(self.decision_function(X, covariates))
        return np.vstack([1 - p, p]).T

    def _get_support_mask(self):
        check_is_fitted(self, "coef_")
        return self.coef_ != 0

    def as_logistic(self):
        """The fitted logistic model as a scikit-learn ``LogisticRegression`` (the same predictions):
        what a model file holds (``genosift.workflow.model_file``)."""
        check_is_fitted(self, "coef_")
        if not hasattr(self, "classes_") or self.covariate_coef_.size:
            raise ValueError("Only a logistic model without covariates is a LogisticRegression of its features.")
        return logistic_of(self.coef_, self.intercept_, self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        if self.family == "logistic":  # a classifier of two classes (folds stratified by evaluate)
            from sklearn.utils import ClassifierTags

            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags(multi_class=False)
        return tags


def covariate_matrix(covariates, n, owner="ElasticNetSelector"):
    """The checked covariates of ``n`` samples as an (n, c) array (``genosift.scores.check_covariates``)."""
    from ..scores import check_covariates

    Z, _ = check_covariates(covariates, n, owner=owner)
    return Z
