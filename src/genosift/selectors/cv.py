"""Cross-validating the number of features: ``cross_validate_ks`` (out-of-fold predictions for
every k from one ranking per fold), ``cross_validate_grid`` (the same for several models, from the
same rankings) and ``SelectKCV`` (the k with the best cross-validated score).

Selection always happens inside the resampling loop: every fold scores the features on its own
training rows only, and every model is a fresh clone of the estimator given.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import rankdata
from sklearn.base import clone, is_classifier
from sklearn.utils.validation import validate_data

from ..core import engine
from ..core.messages import FixError
from ..core.validation import as_labels, as_matrix, check_fit_input, is_int, param_error, renamed_parameters
from ..scores import check_af
from ..sources import fit_accepts_anndata
from .folds import cv_splits
from .models import ModelSelector, check_finite_for, check_score_func, is_estimator, rank_features, rows_ready
from .score_funcs import covariate_frame, matched_covariates, refuse_covariates_for


def check_ks(ks, n_features, owner):
    """The k-grid rule of every selector and workflow that tries several k: the sorted, distinct
    ks (an int or a non-empty sequence of ints >= 1, else an error); a k above ``n_features`` is
    tried as ``n_features`` (all the features), with a warning naming it."""
    values = np.atleast_1d(np.asarray(ks, dtype=object))
    if values.ndim != 1 or values.size == 0 or not all(is_int(k) and k >= 1 for k in values):
        raise param_error("ks", owner, "a non-empty sequence of ints >= 1", ks)
    values = values.astype(np.int64)
    if values.max() > n_features:
        warnings.warn(f"ks above n_features={n_features} ({sorted(set(values[values > n_features].tolist()))}) "
                      f"are evaluated as k={n_features}.", UserWarning)
    return np.unique(np.minimum(values, n_features))


@dataclass(frozen=True)
class CrossValidation:
    """What a cross-validation was asked: the method and its options, the estimators (a name for
    each in ``labels``), the ks, the allele-frequency filter and the covariates, and the entry
    point that asked (``owner``, named in errors). Once checked, ``method_options`` carries the
    filter, ``covariates`` is a ``covariate_frame``, ``ks`` the sorted distinct ks and ``classes``
    the labels of a classifier's target (else None)."""

    owner: str
    score_func: object
    estimators: list
    ks: object
    method_options: dict | None = None
    min_af: float | None = None
    max_af: float | None = None
    covariates: object = None
    labels: list | None = None
    classes: np.ndarray | None = None


def _fold(X, y, train, test, asked, visit, bar=None, name=""):
    """Score on the training rows (with their rows of ``asked.covariates``, a ``covariate_frame``),
    then per k and per estimator fit a clone on the top-k columns (the features only) and ``visit`` it.

    Returns ``(scores, ranking, out)``, ``out[(s, k)] = visit(model, X_test_k)`` for the estimator
    ``asked.estimators[s]``: the features are scored once, whatever the number of estimators. The
    top-k columns are taken in feature order (as ``SelectKBest`` passes them). ``bar``
    (``engine.progress``) is told the step under way, named ``name`` ("Fold 2/5") and the
    estimator's ``asked.labels[s]`` when there are several, and advanced once per fit.
    """
    bar = bar or engine.Silent()
    bar.describe(f"{name}: scoring the features")
    X_train, y_train = X[train], y[train]
    covariates, estimators, labels = asked.covariates, asked.estimators, asked.labels
    try:
        scores, _, ranking = rank_features(asked.score_func, asked.method_options, X_train, y_train,
                                           None if covariates is None else covariates.iloc[train])
    except FixError as exc:  # a covariate constant or collinear on this fold's rows: say which fold
        if covariates is None:
            raise
        raise FixError(f"{name or 'A fold'}, scored on its {len(train)} training rows: {exc.template}",
                       owner=exc.owner, **exc.params) from None
    X_test = X[test]
    out = {}
    for k in asked.ks:
        cols = np.sort(ranking[:k])
        X_train_k, X_test_k = X_train[:, cols], X_test[:, cols]
        for s, estimator in enumerate(estimators):
            named = f", {labels[s]}" if labels is not None and len(estimators) > 1 else ""
            bar.describe(f"{name}: fitting k = {int(k):,}{named}")
            model = clone(estimator).fit(X_train_k, y_train)
            out[s, int(k)] = visit(model, X_test_k)
            bar.advance()
    return scores, ranking, out


def _fold_names(n_splits):
    """How progress names each split: "Fold 2/5", or "Validation split" for a single one."""
    if n_splits == 1:
        return ["Validation split"]
    return [f"Fold {i + 1}/{n_splits}" for i in range(n_splits)]


def _aligned(values, model_classes, classes, fill):
    """Columns of ``values`` (one per class of the model) placed under ``classes``."""
    if values.ndim == 1 or np.array_equal(model_classes, classes):
        return values
    out = np.full((values.shape[0], len(classes)), fill, dtype=np.float64)
    out[:, np.searchsorted(classes, model_classes)] = values
    return out


@renamed_parameters("score_params")
def cross_validate_ks(X, y, *, score_func, estimator, ks, cv, method_options=None, groups=None,
                      random_state=None, min_af=None, max_af=None, covariates=None):
    """Out-of-fold predictions of ``estimator`` on the top-k features, every k from one ranking per fold.

    In each fold the features are scored on the training rows only (never the held-out rows);
    for every k a clone of ``estimator`` is fitted on the training rows' top-k columns (in
    feature order) and predicts the held-out rows.

    Parameters
    ----------
    X : array-like or sparse matrix (n_samples, n_features)
    y : array-like (n_samples,)
    score_func : str or callable
        A method name from ``genosift.methods()``, or ``f(X, y) -> scores`` / ``-> (scores, pvalues)``.
    estimator : scikit-learn estimator
        Cloned for every fold and k.
    ks : sequence of int
        Numbers of features; values above n_features are evaluated as n_features.
    cv : int, CV splitter or iterable of (train, test) index pairs
        An int gives that many folds: stratified for a classifier on class labels, with
        ``groups`` kept whole when given; shuffled with ``random_state`` when it is not None.
    method_options : dict, optional
        Options of the method.
    groups : array-like (n_samples,), optional
        Group labels for the splitter.
    random_state : int or None
        Seed of the fold shuffle (int ``cv`` only).
    min_af, max_af : float in [0, 1], optional
        Allele-frequency filter (as ``genosift.score``), applied in each fold with the shares of
        that fold's training rows that carry each feature (never the held-out rows): features
        outside it score NaN and are never chosen; a k above the number inside it takes them all.
    covariates : array-like (n_samples, c) or DataFrame, optional
        For a method that adjusts for covariates (``genosift.scores.covariate_methods()``): one
        row per sample, checked once (``genosift.scores.check_covariates``); each fold scores
        its training rows with their rows of the covariates. The models are fitted on the
        selected features only, not on the covariates.

    Returns
    -------
    list of dict, one per fold, each with
        ``train``, ``test`` : int arrays, the row indices;
        ``scores`` : float64 (n_features,), the training rows' scores;
        ``ranking`` : feature indices, best first, from those scores (with an allele-frequency
        filter, only the features inside it);
        ``ks`` : the evaluated ks (sorted, distinct);
        ``predicted`` : {k: predicted labels (or values) of the test rows};
        ``proba`` : {k: (n_test, n_classes) ``predict_proba``, or None without it};
        ``decision`` : {k: ``decision_function`` output, or None without it};
        ``classes`` : the labels of ``np.unique(y)`` (classifiers; else None). Columns of
        ``proba`` and of a 2-D ``decision`` follow them; a class missing from a training fold
        gets probability 0 and decision -inf. A model of two classes gives a 1-D ``decision``
        (positive: the second of its classes), as scikit-learn's.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from genosift.selectors import cross_validate_ks
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 200)); y = np.repeat([0, 1], 20); X[y == 1, :3] += 3
    >>> folds = cross_validate_ks(X, y, score_func="anova", estimator=LogisticRegression(), ks=[3, 50], cv=4)
    >>> len(folds), sorted(folds[0]["predicted"]), folds[0]["proba"][3].shape
    (4, [3, 50], (10, 2))
    >>> float(np.mean([np.mean(f["predicted"][3] == y[f["test"]]) for f in folds]))
    1.0
    """
    asked = CrossValidation("cross_validate_ks", score_func, [estimator], ks, method_options=method_options,
                            min_af=min_af, max_af=max_af, covariates=covariates)
    folds = _cross_validate(X, y, asked, cv, groups, random_state)
    for fold in folds:  # one estimator: by k
        for key in ("predicted", "proba", "decision"):
            fold[key] = {k: value for (_, k), value in fold[key].items()}
    return folds


def cross_validate_grid(X, y, *, score_func, estimators, ks, cv, labels=None, method_options=None, groups=None,
                        random_state=None, min_af=None, max_af=None, covariates=None):
    """``cross_validate_ks`` for several estimators (a grid of model options) from the same rankings.

    Each fold scores its training rows once; every estimator is then fitted for every k on the
    top-k columns of that one ranking. The folds are as ``cross_validate_ks`` returns them, with
    ``predicted``, ``proba`` and ``decision`` keyed by ``(s, k)``, ``s`` the position of the
    estimator in ``estimators``. ``labels``: a name for each estimator, shown in the progress.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 200)); y = np.repeat([0, 1], 20); X[y == 1, :3] += 3
    >>> models = [LogisticRegression(C=c) for c in (0.01, 1.0)]
    >>> folds = cross_validate_grid(X, y, score_func="anova", estimators=models, ks=[3, 50], cv=4)
    >>> sorted(folds[0]["predicted"])
    [(0, 3), (0, 50), (1, 3), (1, 50)]
    """
    if isinstance(estimators, (str, bytes)) or not hasattr(estimators, "__len__") or not len(estimators):
        raise param_error("estimators", "cross_validate_grid", "a non-empty list of scikit-learn estimators",
                          estimators)
    if labels is not None and len(labels) != len(estimators):
        raise ValueError(f"cross_validate_grid got {len(labels)} labels for {len(estimators)} estimators; "
                         "give one label per estimator, or none.")
    asked = CrossValidation("cross_validate_grid", score_func, list(estimators), ks, method_options=method_options,
                            min_af=min_af, max_af=max_af, covariates=covariates, labels=labels)
    return _cross_validate(X, y, asked, cv, groups, random_state)


def _cross_validate(X, y, asked, cv, groups, random_state):
    """The checks and the folds of ``cross_validate_ks`` and ``cross_validate_grid``."""
    owner, estimators, method_options = asked.owner, asked.estimators, asked.method_options
    spec = check_score_func(asked.score_func, method_options, owner)
    refuse_covariates_for(spec, asked.covariates, owner)
    covariates = matched_covariates(X, asked.covariates)
    af = check_af(asked.min_af, asked.max_af, owner)
    if af is not None:  # applied by rank_features on each fold's training rows
        method_options = {**(method_options or {}), "min_af": af[0], "max_af": af[1]}
    for estimator in estimators:
        if not is_estimator(estimator):
            name = "estimator" if owner == "cross_validate_ks" else "estimators"
            raise param_error(name, owner, "a scikit-learn estimator (with fit and predict)", estimator)
    M, names = as_matrix(X)
    y = as_labels(y, M.shape[0])
    covariates = covariate_frame(covariates, M.shape[0], owner)
    for estimator in estimators:
        check_finite_for(M, names, spec, estimator)
    ks = check_ks(asked.ks, M.shape[1], owner)
    classifier = is_classifier(estimators[0])
    asked = replace(asked, method_options=method_options, covariates=covariates, ks=ks,
                    classes=np.unique(y) if classifier else None)
    splits = cv_splits(cv, M, y, groups, classifier, random_state, owner)
    title = "Validation split" if len(splits) == 1 else "Cross-validation"
    with engine.progress(title, total=len(splits) * len(ks) * len(estimators), unit="fits") as bar:
        return [_one_fold(M, y, split, name, asked, bar)
                for split, name in zip(splits, _fold_names(len(splits)))]


def _one_fold(M, y, split, name, asked, bar):
    """One fold of ``_cross_validate``: its scores, ranking and every model's predictions of the
    held-out rows (probabilities and decisions placed under ``asked.classes``)."""
    classes = asked.classes

    def visit(model, X_test):
        model_classes = getattr(model, "classes_", None)
        proba = model.predict_proba(X_test) if hasattr(model, "predict_proba") else None
        decision = model.decision_function(X_test) if hasattr(model, "decision_function") else None
        if classes is not None and model_classes is not None:
            proba = None if proba is None else _aligned(proba, model_classes, classes, 0.0)
            decision = None if decision is None else _aligned(decision, model_classes, classes, -np.inf)
        return model.predict(X_test), proba, decision

    train, test = split
    scores, ranking, out = _fold(M, y, train, test, asked, visit, bar, name)
    return {
        "train": train, "test": test, "scores": scores, "ranking": ranking, "ks": asked.ks,
        "predicted": {key: o[0] for key, o in out.items()},
        "proba": {key: o[1] for key, o in out.items()},
        "decision": {key: o[2] for key, o in out.items()},
        "classes": classes,
    }


class SelectKCV(ModelSelector):
    """Keep the k best features, k chosen by cross-validating ``estimator`` over ``ks``.

    Every fold scores the features on its training rows only (never the held-out rows), once;
    every k is evaluated from that one ranking, by fitting a clone of the estimator on the top-k
    columns of the training rows and scoring it on the held-out rows. The best k has the highest
    mean score (the smallest such k on ties). Then the features are scored on all rows and the
    best k of them are selected.

    ``fit(X, y, covariates=C)``: for a method that adjusts for covariates
    (``genosift.scores.covariate_methods()``), each fold scores its training rows with their
    rows of ``C``, and the final ranking all rows with all of ``C``. The estimator is fitted on
    the selected features only (the covariates adjust the scores, they are not model inputs).

    Parameters
    ----------
    score_func : str or callable, default="anova"
        A method name from ``genosift.methods()``, or ``f(X, y) -> scores`` / ``-> (scores, pvalues)``.
    estimator : scikit-learn estimator, default=None
        The model evaluated on the selected features; None: ``LogisticRegression(max_iter=1000)``.
    ks : sequence of int, default=(10, 100, 1000)
        Candidate numbers of features; values above n_features are evaluated as n_features.
    cv : int, CV splitter or iterable of (train, test) pairs, default=5
        As in ``cross_validate_ks``: an int gives stratified folds for a classifier, shuffled with
        ``random_state`` when it is not None; ``fit(X, y, groups=...)`` keeps groups whole.
    scoring : str or callable, default="balanced_accuracy"
        A name from ``sklearn.metrics.get_scorer_names()`` or ``scorer(estimator, X, y)``.
    method_options : dict, optional
        Options of the method.
    random_state : int or None, default=None
        Seed of the fold shuffle.

    Attributes
    ----------
    cv_results_ : dict of arrays, one entry per k (a ``pandas.DataFrame(cv_results_)`` is the curve)
        ``k``, ``mean_test_score``, ``std_test_score``, ``rank_test_score`` and
        ``split{i}_test_score`` for each fold ``i``.
    best_k_ : int
    best_score_ : float
        The mean cross-validated score of ``best_k_``.
    cv_splits_ : list of (train, test) index arrays
    cv_rankings_ : ndarray (n_folds, max k)
        The best features of each fold's ranking (training rows only), best first.
    scores_, pvalues_, ranking_ : the scores on all rows (``pvalues_`` None without a test)
    support_ : ndarray of bool, the ``best_k_`` best features
    estimator_ : the estimator refitted on all rows' selected features

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 300)); y = np.repeat([0, 1], 30); X[y == 1, :5] += 1.5
    >>> sel = gs.SelectKCV("anova", ks=[1, 5, 50, 300], cv=5).fit(X, y)
    >>> sel.best_k_, sel.transform(X).shape
    (5, (60, 5))
    >>> sel.cv_results_["k"].tolist()
    [1, 5, 50, 300]
    """

    @renamed_parameters("score_params")
    def __init__(self, score_func="anova", estimator=None, *, ks=(10, 100, 1000), cv=5,
                 scoring="balanced_accuracy", method_options=None, random_state=None):
        self.score_func = score_func
        self.estimator = estimator
        self.ks = ks
        self.cv = cv
        self.scoring = scoring
        self.method_options = method_options
        self.random_state = random_state

    def _model(self):
        if self.estimator is None:
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(max_iter=1000)
        return self.estimator

    @fit_accepts_anndata
    def fit(self, X, y, groups=None, covariates=None):
        """Choose k by cross-validation, then select the best k features of all rows."""
        from sklearn.metrics import check_scoring

        spec = check_score_func(self.score_func, self.method_options, "SelectKCV")
        refuse_covariates_for(spec, covariates, "SelectKCV")
        covariates = matched_covariates(X, covariates)
        estimator = self._model()
        if not is_estimator(estimator):
            raise param_error("estimator", "SelectKCV", "a scikit-learn estimator (with fit and predict) or None",
                              self.estimator)
        try:
            scorer = check_scoring(estimator, scoring=self.scoring)
        except (ValueError, TypeError):
            raise param_error("scoring", "SelectKCV", "a name from sklearn.metrics.get_scorer_names() or a "
                              "callable scorer(estimator, X, y)", self.scoring) from None
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=False)
        check_finite_for(X, getattr(self, "feature_names_in_", None), spec, estimator)
        X = rows_ready(X)
        covariates = covariate_frame(covariates, X.shape[0], "SelectKCV")
        ks = check_ks(self.ks, X.shape[1], "SelectKCV")
        splits = cv_splits(self.cv, X, y, groups, is_classifier(estimator), self.random_state, "SelectKCV")
        fold_scores = np.empty((len(splits), ks.size))
        rankings = np.empty((len(splits), ks[-1]), dtype=np.intp)
        asked = CrossValidation("SelectKCV", self.score_func, [estimator], ks, method_options=self.method_options,
                                covariates=covariates)
        with engine.progress("Cross-validation", total=len(splits) * ks.size, unit="fits") as bar:
            for i, ((train, test), name) in enumerate(zip(splits, _fold_names(len(splits)))):
                _, ranking, out = _fold(X, y, train, test, asked,
                                        lambda model, X_test: scorer(model, X_test, y[test]), bar, name)
                fold_scores[i] = [out[0, int(k)] for k in ks]
                rankings[i] = ranking[: ks[-1]]
        mean, std = fold_scores.mean(axis=0), fold_scores.std(axis=0)
        if np.isnan(mean).all():
            raise ValueError(f"Every k scored NaN with scoring={self.scoring!r}; check that the scorer suits "
                             "the estimator and the target.")
        best = int(np.nanargmax(mean))
        ranks = rankdata(-np.where(np.isnan(mean), np.inf, mean), method="min").astype(np.int32)  # as GridSearchCV
        self.cv_results_ = {"k": ks, "mean_test_score": mean, "std_test_score": std, "rank_test_score": ranks,
                            **{f"split{i}_test_score": fold_scores[i] for i in range(len(splits))}}
        self.best_k_, self.best_score_ = int(ks[best]), float(mean[best])
        self.cv_splits_, self.cv_rankings_ = splits, rankings
        self.scores_, self.pvalues_, self.ranking_ = rank_features(self.score_func, self.method_options, X, y,
                                                                   covariates)
        self.support_ = np.zeros(X.shape[1], dtype=bool)
        self.support_[self.ranking_[: self.best_k_]] = True
        self.estimator_ = clone(estimator).fit(X[:, self.support_], y)
        return self
