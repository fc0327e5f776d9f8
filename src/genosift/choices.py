"""The models and metrics the modelling workflow offers, by name: one list for the library, the
command line and the report (no imports, so that the command line starts fast)."""
from __future__ import annotations

__all__ = ["METRICS", "MODELS", "SIMPLER"]

#: The models ``genosift.workflow.evaluate`` fits (``make_model``), with their options and defaults.
MODELS = {
    "logistic": {"C": 1.0, "max_iter": 1000, "class_weight": None},
    "random_forest": {"n_estimators": 500, "max_depth": None, "min_samples_leaf": 1, "class_weight": None},
    "linear_svm": {"C": 1.0, "max_iter": 10000, "class_weight": None},
}
#: Which way each option makes a model simpler, for the tie rule of a grid of options: "smaller"
#: (a smaller value is simpler; None, no limit, is the least simple) or "larger". The values of an
#: option not listed (class_weight, max_iter...) are taken as simplest first in the order given.
SIMPLER = {
    "logistic": {"C": "smaller"},
    "random_forest": {"n_estimators": "smaller", "max_depth": "smaller", "min_samples_leaf": "larger"},
    "linear_svm": {"C": "smaller"},
}
#: The metrics ``evaluate`` reports for every k (and may choose k by).
METRICS = ("accuracy", "balanced_accuracy", "f1_macro", "roc_auc")
