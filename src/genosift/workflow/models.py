"""The classifiers ``evaluate`` fits, by name, and the metrics it measures them with."""
from __future__ import annotations

import numpy as np

from .._validation import param_error

#: The models ``evaluate`` fits, with their options and defaults.
MODELS = {
    "logistic": {"C": 1.0, "max_iter": 1000, "class_weight": None},
    "random_forest": {"n_estimators": 500, "max_depth": None, "min_samples_leaf": 1, "class_weight": None},
    "linear_svm": {"C": 1.0, "max_iter": 10000, "class_weight": None},
}
METRICS = ("accuracy", "balanced_accuracy", "f1_macro", "roc_auc")


def make_model(name="logistic", *, options=None, random_state=0, sparse=False, n_jobs=None):
    """A fresh, unfitted scikit-learn classifier by name (see ``MODELS``).

    Parameters
    ----------
    name : {"logistic", "random_forest", "linear_svm"}
    options : dict, optional
        Options of the model (keys of ``MODELS[name]``), e.g. ``{"C": 0.1}``.
    random_state : int
    sparse : bool
        The data are sparse: features are scaled without centring, so nothing is densified.
    n_jobs : int, optional
        Threads of the random forest.

    Examples
    --------
    >>> make_model("logistic", options={"C": 0.5}).named_steps["model"].C
    0.5
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    if name not in MODELS:
        raise param_error("model", "make_model", f"one of {sorted(MODELS)}", name)
    opts = dict(MODELS[name])
    unknown = sorted(set(options or {}) - set(opts))
    if unknown:
        raise ValueError(f"Unknown option(s) {unknown} for model {name!r}; its options are {sorted(opts)}.")
    opts.update(options or {})
    if name == "random_forest":
        return RandomForestClassifier(random_state=random_state, n_jobs=n_jobs, **opts)
    model = (LogisticRegression(random_state=random_state, **opts) if name == "logistic"
             else LinearSVC(random_state=random_state, **opts))
    return Pipeline([("scale", StandardScaler(with_mean=not sparse)), ("model", model)])


def importance(model, n_features):
    """Absolute coefficients (L2 norm over classes) or impurity importances of a fitted model."""
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    if hasattr(final, "coef_"):
        coef = np.atleast_2d(np.asarray(final.coef_, dtype=np.float64))
        return np.sqrt((coef ** 2).sum(axis=0))
    if hasattr(final, "feature_importances_"):
        return np.asarray(final.feature_importances_, dtype=np.float64)
    return np.full(n_features, np.nan)




def fold_metrics(y_true, y_pred, proba, classes, decision=None):
    """The four metrics of one fold at one k (ROC AUC only for two classes, from probabilities or scores)."""
    from sklearn.metrics import (
        accuracy_score,
        balanced_accuracy_score,
        f1_score,
        roc_auc_score,
    )

    out = {
        "accuracy": accuracy_score(y_true, y_pred),
        "balanced_accuracy": balanced_accuracy_score(y_true, y_pred),
        "f1_macro": f1_score(y_true, y_pred, average="macro", labels=classes, zero_division=0),
        "roc_auc": np.nan,
    }
    if len(classes) == 2 and len(np.unique(y_true)) == 2:
        positive = proba[:, 1] if proba is not None else decision
        if positive is not None:
            out["roc_auc"] = roc_auc_score(y_true == classes[1], positive)
    return out

