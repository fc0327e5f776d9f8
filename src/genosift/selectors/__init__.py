"""Every selector, in one place: scikit-learn transformers that keep the features that matter.

- ``univariate``: ``SelectKBest``, ``SelectPercentile``, ``SelectFdr`` (a registered method's
  scores, or a callable's);
- ``redundancy`` and ``mrmr``: ``RedundancyFilter`` (the greedy filter) and ``MRMR``;
- ``knockoffs``: ``KnockoffSelector`` (the model-X knockoff filter, its false discovery rate controlled);
- ``rfe``, ``cv`` and ``stability``: model-based and resampling selection (recursive elimination,
  k chosen by cross-validation, stability selection); ``models``: the models they and
  ``genosift.workflow.evaluate`` fit; ``score_funcs``: the scoring of a selector's data.

Selection inside a resampling loop always happens on the training rows of each fold (or
subsample), and every model is a fresh clone of the estimator given. The modules load on first
use: ``genosift.selectors.score_funcs`` does not bring scikit-learn's models with it.
"""
from importlib import import_module

#: Each public name and the module that defines it.
_HOMES = {
    "SelectKBest": ".univariate", "SelectPercentile": ".univariate", "SelectFdr": ".univariate",
    "RedundancyFilter": ".redundancy", "MRMR": ".mrmr",
    "ElasticNetSelector": ".enet", "EnetResult": ".enet", "elastic_net": ".enet",
    "KnockoffSelector": ".knockoffs", "KnockoffResult": ".knockoffs", "knockoff_filter": ".knockoffs",
    "RFE": ".rfe", "SelectKCV": ".cv", "StabilitySelection": ".stability",
    "check_ks": ".cv", "cross_validate_grid": ".cv", "cross_validate_ks": ".cv", "cv_splits": ".folds",
    "METRICS": ".models", "MODELS": ".models", "make_model": ".models", "model_importances": ".models",
    "reported_importances": ".models", "subsamples": ".stability",
}

__all__ = sorted(_HOMES)


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOMES))
