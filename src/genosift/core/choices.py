"""The models and metrics the modelling workflow offers and the knockoff filter's statistics and
S-matrices, by name: one list for the library, the command line and the report (no imports, so
that the command line starts fast)."""
from __future__ import annotations

__all__ = ["IMPORTANCE", "KNOCKOFF_STATISTICS", "METRICS", "MODELS", "SIMPLER", "S_METHODS"]

#: The models ``genosift.workflow.evaluate`` fits (``make_model``), with their options and defaults.
MODELS = {
    # l1_ratio is read with penalty="elasticnet" only (0: L2, 1: L1)
    "logistic": {"C": 1.0, "penalty": "l2", "l1_ratio": 0.5, "max_iter": 1000, "class_weight": None},
    "random_forest": {"n_estimators": 500, "max_depth": None, "min_samples_leaf": 1, "max_features": "sqrt",
                      "class_weight": None},
    "hist_gradient_boosting": {"max_iter": 100, "learning_rate": 0.1, "max_depth": None, "max_leaf_nodes": 31,
                               "min_samples_leaf": 20, "l2_regularization": 0.0, "class_weight": None},
    "linear_svm": {"C": 1.0, "penalty": "l2", "max_iter": 10000, "class_weight": None},
    # the elastic net of the selected features, its penalty chosen by its own cross-validation
    # inside each training fold (genosift.ElasticNetSelector)
    "enet": {"l1_ratio": 0.5, "folds": 10, "lambda_choice": "min", "n_lambdas": 100},
}
#: Which way each option makes a model simpler, for the tie rule of a grid of options: "smaller"
#: (a smaller value is simpler; None, no limit, is the least simple) or "larger". The values of an
#: option not listed (class_weight, penalty, max_iter...) are taken as simplest first in the order given.
SIMPLER = {
    "logistic": {"C": "smaller"},
    "random_forest": {"n_estimators": "smaller", "max_depth": "smaller", "min_samples_leaf": "larger"},
    "hist_gradient_boosting": {"max_iter": "smaller", "learning_rate": "smaller", "max_depth": "smaller",
                               "max_leaf_nodes": "smaller", "min_samples_leaf": "larger",
                               "l2_regularization": "larger"},
    "linear_svm": {"C": "smaller"},
    "enet": {"l1_ratio": "larger"},
}
#: What the ``importance`` of a selected feature is, per model: the L2 norm of its coefficients
#: (over the classes), its impurity decrease in the trees, or its permutation importance (the mean
#: drop of the metric when the feature is shuffled, on the validation folds).
IMPORTANCE = {"logistic": "coefficients", "linear_svm": "coefficients", "random_forest": "impurity",
              "hist_gradient_boosting": "permutation", "enet": "coefficients"}
#: The metrics ``evaluate`` reports for every k (and may choose k by).
METRICS = ("accuracy", "balanced_accuracy", "f1_macro", "roc_auc")
#: The knockoff filter's feature statistics (``genosift.KnockoffSelector``): the lasso's (or the elastic
#: net's, l1_ratio 0.5) coefficient difference at the penalty chosen by cross-validation, and the
#: penalty at which each enters the lasso's path.
KNOCKOFF_STATISTICS = ("lasso", "enet", "lasso_entry")
#: The constructions of the knockoffs' S-matrix (``genosift.knockoffs.gaussian``).
S_METHODS = ("mvr", "maxent", "sdp", "equi")
