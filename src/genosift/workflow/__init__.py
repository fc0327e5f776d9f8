"""The modelling workflow: select features and fit a model over a grid of k, honestly evaluated.

``evaluate`` scores the features inside each training fold only (never on the samples it is
tested on), fits a model on the top k of that fold's ranking for every k of the grid, and
measures it on the held-out samples; then it refits the ranking and the model on all training
samples at the best k. ``write_results`` writes the tables, the final model and its provenance
to a folder, which ``genosift report`` turns into figures; ``predict`` applies a saved model to
new data.

Models: ``"logistic"`` (L2, L1 or elastic-net logistic regression on standardised features),
``"random_forest"``, ``"hist_gradient_boosting"`` and ``"linear_svm"`` (on standardised features;
no class probabilities). A list of values of a model option is a grid, crossed with the ks.

The names load on first use (scikit-learn with them), so that ``genosift.workflow.covariates``
serves ``genosift score --structure`` without loading the models.
"""
from importlib import import_module

__all__ = ["MODELS", "Evaluation", "evaluate", "held_out_metrics", "load_model", "make_model", "predict",
           "predict_store", "write_results"]

#: Where each public name lives (``METRICS``: the metrics ``evaluate`` measures).
_HOMES = {"Evaluation": ".evaluation", "evaluate": ".evaluation", "METRICS": "..core.choices",
          "MODELS": "..core.choices", "make_model": "..selectors.models", "held_out_metrics": ".prediction",
          "predict": ".prediction", "predict_store": ".prediction",
          "load_model": ".results", "write_results": ".results"}


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOMES))
