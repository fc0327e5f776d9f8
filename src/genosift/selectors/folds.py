"""The fold rule of every cross-validation here (``cv_splits``), apart from the selectors that use
it, so that a model (the elastic net) can cross-validate itself without importing them."""
from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import type_of_target

from ..core.validation import is_int, param_error

__all__ = ["cv_splits"]


def cv_splits(cv, X, y, groups, classifier, random_state, owner):
    """The ``(train, test)`` index pairs of ``cv``: an int (k folds), a splitter or the pairs.

    The fold rule of every cross-validation here: an int gives that many folds, stratified for a
    ``classifier`` on class labels (``StratifiedGroupKFold`` with ``groups``), shuffled with
    ``random_state`` when it is not None, else in row order. Only the length of ``X`` is read.
    """
    from sklearn.model_selection import GroupKFold, KFold, StratifiedGroupKFold, StratifiedKFold

    def bad():
        return param_error("cv", owner, "an int >= 2, a CV splitter or a non-empty iterable of (train, test) pairs", cv)

    if is_int(cv):
        if cv < 2:
            raise bad()
        if cv > len(y):
            raise param_error("cv", owner, f"an int in [2, n_samples] (n_samples = {len(y)})", cv)
        shuffle = random_state is not None
        options = dict(n_splits=int(cv), shuffle=shuffle, random_state=random_state if shuffle else None)
        stratify = classifier and type_of_target(y) in ("binary", "multiclass")
        if groups is not None:
            splitter = (StratifiedGroupKFold if stratify else GroupKFold)(**options)
        else:
            splitter = (StratifiedKFold if stratify else KFold)(**options)
    elif hasattr(cv, "split") and hasattr(cv, "get_n_splits"):
        splitter = cv
    else:
        try:
            pairs = [(np.asarray(train, dtype=np.intp), np.asarray(test, dtype=np.intp)) for train, test in cv]
        except (TypeError, ValueError):
            raise bad() from None
        if not pairs or any(train.ndim != 1 or test.ndim != 1 for train, test in pairs):
            raise bad()
        return pairs
    pairs = splitter.split(X, y) if groups is None else splitter.split(X, y, groups)
    return [(np.asarray(train), np.asarray(test)) for train, test in pairs]
