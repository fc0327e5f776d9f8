"""What the model-based selectors share: the models ``evaluate`` fits, model importances, the
features' scores inside a resampling loop, and the base class of RFE, SelectKCV and StabilitySelection.

Feature scores come from a registered method (``genosift.methods()``), a callable
``f(X, y) -> scores`` or ``-> (scores, pvalues)``, or, where an estimator is accepted, from the
fitted model's ``coef_`` (squared, summed over classes) or ``feature_importances_``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from ..core.choices import METRICS, MODELS  # noqa: F401  (re-exported by genosift.selectors)
from ..core.messages import FixError, plain
from ..core.validation import RENAMED, check_finite, param_error
from ..scores import af_tested, carriers, check_af, rank_order
from ..scoring import score
from ..sources import AnnDataTransformMixin
from .score_funcs import callable_scores, resolve_score_func


def make_model(name="logistic", *, options=None, random_state=0, sparse=False, n_jobs=None, n_classes=None):
    """A fresh, unfitted scikit-learn classifier by name (see ``MODELS``).

    Parameters
    ----------
    name : {"logistic", "random_forest", "hist_gradient_boosting", "linear_svm", "enet"}
    options : dict, optional
        Options of the model (keys of ``MODELS[name]``), e.g. ``{"C": 0.1}``. For ``logistic``,
        ``penalty`` is "l2" (solver lbfgs), "l1" (liblinear for two classes, saga for more) or
        "elasticnet" (saga, mixing by ``l1_ratio``).
    random_state : int
    sparse : bool
        The data are sparse: features are scaled without centring, so nothing is densified (the
        gradient boosting, which takes dense input only, densifies the selected columns).
    n_jobs : int, optional
        Threads of the random forest.
    n_classes : int, optional
        The number of classes, which chooses the solver of an L1 logistic regression (None: saga).

    Examples
    --------
    >>> make_model("logistic", options={"C": 0.5}).named_steps["model"].C
    0.5
    >>> make_model("logistic", options={"penalty": "l1"}, n_classes=2).named_steps["model"].solver
    'liblinear'
    """
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler
    from sklearn.svm import LinearSVC

    if name not in MODELS:
        raise param_error("model", "make_model", f"one of {sorted(MODELS)}", name)
    opts = dict(MODELS[name])
    unknown = sorted(set(options or {}) - set(opts))
    if unknown:
        renamed = [f"{old!r} is called {RENAMED[old][0]!r} ({RENAMED[old][1]})" for old in unknown
                   if old in RENAMED and RENAMED[old][0] in opts]
        raise ValueError(f"Unknown option(s) {unknown} for model {name!r}; its options are {sorted(opts)}"
                         + (f": {'; '.join(renamed)}." if renamed else "."))
    opts.update(options or {})
    if name == "random_forest":
        return RandomForestClassifier(random_state=random_state, n_jobs=n_jobs, **opts)
    if name == "enet":
        return _enet(opts, random_state, n_classes)
    if name == "hist_gradient_boosting":
        model = HistGradientBoostingClassifier(random_state=random_state, **opts)
        return Pipeline([("dense", FunctionTransformer(dense, accept_sparse=True)), ("model", model)])
    model = (_logistic(opts, random_state, n_classes) if name == "logistic"
             else LinearSVC(random_state=random_state, **opts))
    return Pipeline([("scale", StandardScaler(with_mean=not sparse)), ("model", model)])


def _enet(opts, random_state, n_classes):
    """The elastic net as a model: logistic, for two classes; its own folds pick the penalty."""
    from .enet import ElasticNetSelector

    if n_classes is not None and n_classes != 2:
        raise FixError(f"The enet model is a logistic elastic net, for two classes; the labels have {n_classes}. "
                       "Choose another model, or keep two classes ({classes}).", owner="evaluate",
                       classes=FixError.ANY)
    return ElasticNetSelector(opts["l1_ratio"], cv=opts["folds"], lambda_choice=opts["lambda_choice"],
                              n_lambdas=opts["n_lambdas"], family="logistic", random_state=random_state)


def dense(X):
    """``X`` as a dense array (the selected columns, for a model that takes no sparse input)."""
    return X.toarray() if sp.issparse(X) else X


def _logistic(opts, random_state, n_classes):
    """LogisticRegression for ``penalty`` / ``l1_ratio``, with the solver that fits that penalty.

    scikit-learn 1.8 reads the penalty from ``l1_ratio`` alone (``penalty`` is deprecated there);
    the versions before it take ``penalty``: both are built here from the same options.
    """
    import inspect

    from sklearn.linear_model import LogisticRegression

    penalty, l1_ratio = opts.pop("penalty"), opts.pop("l1_ratio")
    solver = {"l2": "lbfgs", "elasticnet": "saga"}.get(penalty, "liblinear" if n_classes == 2 else "saga")
    if penalty not in ("l1", "l2", "elasticnet"):
        raise FixError(f"The model option penalty must be 'l2', 'l1' or 'elasticnet'; got {plain(penalty)}. "
                       "Choose one ({model_options}).", owner="evaluate", model_options=FixError.ANY)
    if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
        mixing = {"l2": 0.0, "l1": 1.0}.get(penalty, l1_ratio)
        return LogisticRegression(random_state=random_state, solver=solver, l1_ratio=mixing, **opts)
    mixing = {"l1_ratio": l1_ratio} if penalty == "elasticnet" else {}
    return LogisticRegression(random_state=random_state, solver=solver, penalty=penalty, **mixing, **opts)


def _coefficient_squares(final):
    """``coef_`` squared (summed over the rows of a 2-D ``coef_``), else ``feature_importances_``,
    else None: the one definition of a fitted model's feature importance."""
    coef = getattr(final, "coef_", None)
    if coef is not None:
        coef = coef.toarray() if sp.issparse(coef) else np.asarray(coef, dtype=np.float64)
        return coef**2 if coef.ndim == 1 else (coef**2).sum(axis=0), True
    importances = getattr(final, "feature_importances_", None)
    return (None if importances is None else np.asarray(importances, dtype=np.float64)), False


def model_importances(model):
    """Importance of each feature in a fitted model, float64 (n_features,), to rank features by.

    ``coef_`` squared (summed over the rows of a 2-D ``coef_``, as scikit-learn's RFE ranks
    features), else ``feature_importances_``. A ``Pipeline`` is read through its last step.
    Importances that cannot rank (none, all zero, NaN or infinite) are an error.
    """
    final = model[-1] if hasattr(model, "steps") else model
    importances, _ = _coefficient_squares(final)
    if importances is None:
        raise TypeError(f"{type(final).__name__} has neither coef_ nor feature_importances_ after fit, so it "
                        "cannot rank features. Use a linear model or a tree ensemble.")
    if not importances.any() or not np.isfinite(importances).all():
        raise ValueError(f"{type(final).__name__} gives every feature an importance of zero, or a NaN or infinite "
                         "one, so it cannot rank them. Check that it converged and is not regularised to zero, "
                         "and bring X to a usable scale (for example with sklearn.preprocessing.StandardScaler "
                         "in a Pipeline).")
    return importances


def reported_importances(model, n_features):
    """The importance ``evaluate`` reports for the ``n_features`` features of a fitted model.

    The same order as ``model_importances``, on the scale of the coefficients: the L2 norm of each
    feature's coefficients over the classes (the square root of ``model_importances``), else
    ``feature_importances_``, else NaN (never an error: a report shows what the model has).
    """
    final = model[-1] if hasattr(model, "steps") else model
    importances, squared = _coefficient_squares(final)
    if importances is None:
        return np.full(n_features, np.nan)
    return np.sqrt(importances) if squared else importances


def is_estimator(obj):
    """Duck-typed scikit-learn estimator: ``fit`` and ``get_params``."""
    return hasattr(obj, "fit") and hasattr(obj, "get_params")


def check_score_func(func, params, owner, param="score_func"):
    """The registered method ``func`` names, or None for a callable; clear errors otherwise.

    ``genosift.selectors.score_funcs.resolve_score_func``, and a callable takes no ``method_options``.
    """
    spec = resolve_score_func(func, owner, param=param, params=params)
    if spec is None and params:
        raise ValueError(f"method_options are options of a registered method; the callable {param} of "
                         f"{owner} takes none. Bind its options with functools.partial instead.")
    return spec


def check_finite_for(X, names, spec, model):
    """NaN or infinity in ``X`` is an error naming the features, unless only a callable score and a
    model that accepts missing values (``allow_nan`` tag) see ``X``."""
    if spec is not None or not (is_estimator(model) and get_tags(model).input_tags.allow_nan):
        check_finite(X, names)


def rank_features(func, params, X, y, covariates=None):
    """``(scores, pvalues or None, ranking)`` of the features of ``X``: a registered method or a callable.

    ``covariates``: those of the rows of ``X``, for a method that adjusts for them (refused
    before for the others, see ``genosift.selectors.score_funcs.refuse_covariates_for``).

    ``params`` may hold ``min_af`` / ``max_af`` (an allele-frequency filter, the shares carrying a
    feature counted on these rows): the features outside it score NaN and the ranking holds only
    the features inside it.
    """
    params = dict(params or {})
    af = check_af(params.pop("min_af", None), params.pop("max_af", None), "method_options")
    if callable(func):
        scores, pvalues = callable_scores(func, X, y)
        tested = None if af is None else af_tested(carriers(X) / X.shape[0], af)
        if tested is not None:
            scores = np.where(tested, scores, np.nan)
            pvalues = None if pvalues is None else np.where(tested, pvalues, np.nan)
        order = rank_order(scores)
        ranking = order if tested is None else order[tested[order]]
    else:
        bounds = {} if af is None else {"min_af": af[0], "max_af": af[1]}
        res = score(X, y, method=func, covariates=covariates, **bounds, method_options=params)
        scores, pvalues, ranking = res.scores, res.pvalues, res.ranking[:res.n_tested]
    if not ranking.size:
        raise ValueError(f"No feature of the {X.shape[0]} samples scored has an allele frequency in "
                         f"[{af[0]}, {af[1]}]: nothing to select. Widen the range (min_af, max_af).")
    return scores, pvalues, ranking



def rows_ready(X):
    """CSR for sparse input (rows are taken per fold), unchanged otherwise."""
    if sp.issparse(X):
        X = X.tocsr()
        X.sum_duplicates()
    return X



class ModelSelector(AnnDataTransformMixin, SelectorMixin, BaseEstimator):
    """Base of RFE, SelectKCV and StabilitySelection: tags follow the estimator; the support mask is ``support_``."""

    def _model(self):
        return self.estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        model = self._model()
        tags.input_tags.sparse = get_tags(model).input_tags.sparse if is_estimator(model) else True
        return tags

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

