"""Permutation importance of the selected features on the validation folds, for the models that
have no importance of their own (``genosift.core.choices.IMPORTANCE``: gradient boosting)."""
from __future__ import annotations

import numpy as np

#: Shuffles of each feature per fold.
N_REPEATS = 5


def fold_permutation_importance(X, y, folds, estimator, k, *, metric, random_state):
    """Per feature, the mean over the folds whose top ``k`` held it of its permutation importance:
    the drop in ``metric`` on that fold's held-out samples when the feature's values are shuffled
    among them (``sklearn.inspection.permutation_importance``, ``N_REPEATS`` shuffles, seeded).

    Each fold's model is ``estimator`` fitted again on the fold's training samples and top-k
    columns (the model its cross-validation fitted: same data, same seed); the rankings are the
    folds' own, so nothing is scored again.

    Returns
    -------
    (importance, n_folds) : float64 and int64 arrays of length ``X.shape[1]``; NaN and 0 for the
        features no fold selected.
    """
    from sklearn.base import clone
    from sklearn.inspection import permutation_importance

    from ..selectors.models import dense

    total = np.zeros(X.shape[1])
    count = np.zeros(X.shape[1], dtype=np.int64)
    for fold in folds:
        cols = np.sort(fold["ranking"][:k])
        train, test = fold["train"], fold["test"]
        model = clone(estimator).fit(X[train][:, cols], y[train])
        found = permutation_importance(model, dense(X[test][:, cols]), y[test], scoring=metric,
                                       n_repeats=N_REPEATS, random_state=random_state)
        total[cols] += found.importances_mean
        count[cols] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan), count
