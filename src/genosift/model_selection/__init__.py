"""Model-based and resampling selection: recursive elimination, k chosen by cross-validation,
stability selection; and the models ``genosift.workflow.evaluate`` fits.

Selection always happens inside the resampling loop: every fold (or subsample) scores the
features on its own training rows only, and every model is a fresh clone of the estimator given.
Feature scores come from a registered method (``genosift.methods()``), a callable
``f(X, y) -> scores`` or ``-> (scores, pvalues)``, or, where an estimator is accepted, from the
fitted model's ``coef_`` (squared, summed over classes) or ``feature_importances_``.
"""
from .cv import SelectKCV, check_ks, cross_validate_grid, cross_validate_ks, cv_splits
from .models import METRICS, MODELS, make_model, model_importances, reported_importances
from .rfe import RFE
from .stability import StabilitySelection, subsamples

__all__ = ["METRICS", "MODELS", "RFE", "SelectKCV", "StabilitySelection", "check_ks", "cross_validate_grid",
           "cross_validate_ks", "cv_splits", "make_model", "model_importances", "reported_importances",
           "subsamples"]
