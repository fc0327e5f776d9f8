"""The metrics ``evaluate`` measures its models with, fold by fold (the models themselves, and their
importances, are those of the selectors: ``genosift.selectors.models``)."""
from __future__ import annotations

import numpy as np


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

