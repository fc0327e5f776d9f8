"""Model-based and resampling selection: recursive elimination, k chosen by cross-validation,
stability selection.

Selection always happens inside the resampling loop: every fold (or subsample) scores the
features on its own training rows only, and every model is a fresh clone of the estimator given.
Feature scores come from a registered method (``genosift.methods()``), a callable
``f(X, y) -> scores`` or ``-> (scores, pvalues)``, or, where an estimator is accepted, from the
fitted model's ``coef_`` (squared, summed over classes) or ``feature_importances_``.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from . import engine
from ._anndata import AnnDataTransformMixin, fit_accepts_anndata
from ._messages import plain
from ._validation import as_labels, as_matrix, check_finite, check_fit_input, param_error
from .scores import REGISTRY, carriers, check_af, get_method, rank_order, score
from .scores._af import af_tested


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_estimator(obj):
    return hasattr(obj, "fit") and hasattr(obj, "get_params")


def _check_score_func(func, params, owner, param="score_func"):
    """The registered method ``func`` names, or None for a callable; clear errors otherwise."""
    if params is not None and not isinstance(params, dict):
        raise param_error("score_params", owner, "a dict or None", params)
    if callable(func):
        if params:
            raise ValueError(f"score_params are options of a registered method; the callable {param} of "
                             f"{owner} takes none. Bind its options with functools.partial instead.")
        return None
    try:
        return get_method(func)
    except ValueError:
        raise param_error(param, owner, f"a callable or one of {sorted(REGISTRY)}", func) from None


def _check_finite_for(X, names, spec, model):
    """NaN or infinity in ``X`` is an error naming the features, unless only a callable score and a
    model that accepts missing values (``allow_nan`` tag) see ``X``."""
    if spec is not None or not (_is_estimator(model) and get_tags(model).input_tags.allow_nan):
        check_finite(X, names)


def _rank(func, params, X, y):
    """``(scores, pvalues or None, ranking)`` of the features of ``X``: a registered method or a callable.

    ``params`` may hold ``min_af`` / ``max_af`` (an allele-frequency filter, the shares carrying a
    feature counted on these rows): the features outside it score NaN and the ranking holds only
    the features inside it.
    """
    params = dict(params or {})
    af = check_af(params.pop("min_af", None), params.pop("max_af", None), "score_params")
    if callable(func):
        out = func(X, y)
        scores, pvalues = out if isinstance(out, (tuple, list)) else (out, None)
        scores = np.asarray(scores, dtype=np.float64)
        pvalues = None if pvalues is None else np.asarray(pvalues, dtype=np.float64)
        tested = None if af is None else af_tested(carriers(X) / X.shape[0], af)
        if tested is not None:
            scores = np.where(tested, scores, np.nan)
            pvalues = None if pvalues is None else np.where(tested, pvalues, np.nan)
        order = rank_order(scores)
        ranking = order if tested is None else order[tested[order]]
    else:
        res = score(X, y, method=func, **params) if af is None else \
            score(X, y, method=func, min_af=af[0], max_af=af[1], **params)
        scores, pvalues, ranking = res.scores, res.pvalues, res.ranking[:res.n_tested]
    if not ranking.size:
        raise ValueError(f"No feature of the {X.shape[0]} samples scored has an allele frequency in "
                         f"[{af[0]}, {af[1]}]: nothing to select. Widen the range (min_af, max_af).")
    return scores, pvalues, ranking


def model_importances(model):
    """Importance of each feature in a fitted model, float64 (n_features,).

    ``coef_`` squared (summed over the rows of a 2-D ``coef_``, as scikit-learn's RFE ranks
    features), else ``feature_importances_``. A ``Pipeline`` is read through its last step.
    """
    final = model[-1] if hasattr(model, "steps") else model
    coef = getattr(final, "coef_", None)
    if coef is not None:
        coef = coef.toarray() if sp.issparse(coef) else np.asarray(coef, dtype=np.float64)
        importances = coef**2 if coef.ndim == 1 else (coef**2).sum(axis=0)
    else:
        importances = getattr(final, "feature_importances_", None)
        if importances is None:
            raise TypeError(f"{type(final).__name__} has neither coef_ nor feature_importances_ after fit, so it "
                            "cannot rank features. Use a linear model or a tree ensemble.")
        importances = np.asarray(importances, dtype=np.float64)
    if not importances.any() or not np.isfinite(importances).all():
        raise ValueError(f"{type(final).__name__} gives every feature an importance of zero, or a NaN or infinite "
                         "one, so it cannot rank them. Check that it converged and is not regularised to zero, "
                         "and bring X to a usable scale (for example with sklearn.preprocessing.StandardScaler "
                         "in a Pipeline).")
    return importances


def _rows_ready(X):
    """CSR for sparse input (rows are taken per fold), unchanged otherwise."""
    if sp.issparse(X):
        X = X.tocsr()
        X.sum_duplicates()
    return X


def _check_ks(ks, n_features, owner):
    """Sorted distinct ks; values above ``n_features`` become ``n_features`` (with a warning)."""
    values = np.atleast_1d(np.asarray(ks, dtype=object))
    if values.ndim != 1 or values.size == 0 or not all(_is_int(k) and k >= 1 for k in values):
        raise param_error("ks", owner, "a non-empty sequence of ints >= 1", ks)
    values = values.astype(np.int64)
    if values.max() > n_features:
        warnings.warn(f"ks above n_features={n_features} ({sorted(set(values[values > n_features].tolist()))}) "
                      f"are evaluated as k={n_features}.", UserWarning)
    return np.unique(np.minimum(values, n_features))


def _splits(cv, X, y, groups, classifier, random_state, owner):
    """The ``(train, test)`` index pairs of ``cv``: an int (k folds), a splitter or the pairs."""
    from sklearn.model_selection import GroupKFold, KFold, StratifiedGroupKFold, StratifiedKFold

    def bad():
        return param_error("cv", owner, "an int >= 2, a CV splitter or a non-empty iterable of (train, test) pairs", cv)

    if _is_int(cv):
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


def _fold(X, y, train, test, score_func, score_params, estimator, ks, visit, bar=None, name=""):
    """Score on the training rows, then per k fit a clone on the top-k columns and ``visit`` it.

    Returns ``(scores, ranking, [visit(model, X_test_k) for k in ks])``; the top-k columns are
    taken in feature order (as ``SelectKBest`` passes them). ``bar`` (``engine.progress``) is
    told the step under way, named ``name`` ("Fold 2/5"), and advanced once per k.
    """
    bar = bar or engine._Silent()
    bar.describe(f"{name}: scoring the features")
    X_train, y_train = X[train], y[train]
    scores, _, ranking = _rank(score_func, score_params, X_train, y_train)
    X_test = X[test]
    out = []
    for k in ks:
        bar.describe(f"{name}: fitting k = {int(k):,}")
        cols = np.sort(ranking[:k])
        model = clone(estimator).fit(X_train[:, cols], y_train)
        out.append(visit(model, X_test[:, cols]))
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


def cross_validate_ks(X, y, *, score_func, estimator, ks, cv, score_params=None, groups=None,
                      random_state=None, min_af=None, max_af=None):
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
    score_params : dict, optional
        Options of the method.
    groups : array-like (n_samples,), optional
        Group labels for the splitter.
    random_state : int or None
        Seed of the fold shuffle (int ``cv`` only).
    min_af, max_af : float in [0, 1], optional
        Allele-frequency filter (as ``genosift.score``), applied in each fold with the shares of
        that fold's training rows that carry each feature (never the held-out rows): features
        outside it score NaN and are never chosen; a k above the number inside it takes them all.

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
    >>> from genosift.model_selection import cross_validate_ks
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 200)); y = np.repeat([0, 1], 20); X[y == 1, :3] += 3
    >>> folds = cross_validate_ks(X, y, score_func="anova", estimator=LogisticRegression(), ks=[3, 50], cv=4)
    >>> len(folds), sorted(folds[0]["predicted"]), folds[0]["proba"][3].shape
    (4, [3, 50], (10, 2))
    >>> float(np.mean([np.mean(f["predicted"][3] == y[f["test"]]) for f in folds]))
    1.0
    """
    owner = "cross_validate_ks"
    spec = _check_score_func(score_func, score_params, owner)
    af = check_af(min_af, max_af, owner)
    if af is not None:  # applied by _rank on each fold's training rows
        score_params = {**(score_params or {}), "min_af": af[0], "max_af": af[1]}
    if not _is_estimator(estimator):
        raise param_error("estimator", owner, "a scikit-learn estimator (with fit and predict)", estimator)
    M, names = as_matrix(X)
    y = as_labels(y, M.shape[0])
    _check_finite_for(M, names, spec, estimator)
    ks = _check_ks(ks, M.shape[1], owner)
    classifier = is_classifier(estimator)
    classes = np.unique(y) if classifier else None
    folds = []
    splits = _splits(cv, M, y, groups, classifier, random_state, owner)
    title = "Validation split" if len(splits) == 1 else "Cross-validation"
    with engine.progress(title, total=len(splits) * len(ks), unit="fits") as bar:
        return _folds(M, y, splits, ks, classes, score_func, score_params, estimator, bar, folds)


def _folds(M, y, splits, ks, classes, score_func, score_params, estimator, bar, folds):
    for (train, test), name in zip(splits, _fold_names(len(splits))):
        def visit(model, X_test):
            model_classes = getattr(model, "classes_", None)
            proba = model.predict_proba(X_test) if hasattr(model, "predict_proba") else None
            decision = model.decision_function(X_test) if hasattr(model, "decision_function") else None
            if classes is not None and model_classes is not None:
                proba = None if proba is None else _aligned(proba, model_classes, classes, 0.0)
                decision = None if decision is None else _aligned(decision, model_classes, classes, -np.inf)
            return model.predict(X_test), proba, decision

        scores, ranking, out = _fold(M, y, train, test, score_func, score_params, estimator, ks, visit, bar, name)
        folds.append({
            "train": train, "test": test, "scores": scores, "ranking": ranking, "ks": ks,
            "predicted": {int(k): o[0] for k, o in zip(ks, out)},
            "proba": {int(k): o[1] for k, o in zip(ks, out)},
            "decision": {int(k): o[2] for k, o in zip(ks, out)},
            "classes": classes,
        })
    return folds


class _ModelSelector(AnnDataTransformMixin, SelectorMixin, BaseEstimator):
    """Shared by the selectors here: tags follow the estimator; the support mask is ``support_``."""

    def _model(self):
        return self.estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        model = self._model()
        tags.input_tags.sparse = get_tags(model).input_tags.sparse if _is_estimator(model) else True
        return tags

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_


class RFE(_ModelSelector):
    """Recursive feature elimination, for many features: geometric steps, an optional pre-filter.

    Fit the estimator on the remaining features, drop the ``step`` least important (squared
    ``coef_`` summed over classes, or ``feature_importances_``; ties: the lower index goes first),
    and repeat until ``n_features_to_select`` remain. A fractional ``step`` is a fraction of the
    features remaining at each round (at least one), so p features take O(log p) fits.

    With an int ``step``, or when the elimination ends within the first round, the selected set
    equals that of ``sklearn.feature_selection.RFE`` configured the same way; scikit-learn reads
    a fractional step as a fraction of the initial features instead, a constant step.

    Parameters
    ----------
    estimator : scikit-learn estimator
        With ``coef_`` or ``feature_importances_`` after fit (a ``Pipeline``: its last step).
        If it has ``warm_start=True`` and a ``coef_``, one clone is refitted from its previous
        weights (restricted to the surviving features) at every round; otherwise every round fits
        a fresh clone.
    n_features_to_select : int, float or None, default=None
        How many features to keep: an int, a fraction of the features entering the elimination
        (``int(fraction * m)``, at least 1), or None for half of them.
    step : int or float, default=0.1
        Features dropped per round: an int >= 1, or a fraction in (0, 1) of those remaining.
    prefilter : str or callable, optional
        A registered method or ``f(X, y) -> scores``: only its ``prefilter_k`` best features enter
        the elimination.
    prefilter_k : int, optional
        Required with ``prefilter``.

    Attributes
    ----------
    support_ : ndarray of bool (n_features,)
    ranking_ : ndarray of int (n_features,)
        1 for the selected features, 2 for those dropped in the last round, and so on; features
        removed by the pre-filter rank after all others.
    n_features_ : int
    estimator_ : the estimator fitted on the selected features.

    Examples
    --------
    >>> import genosift as gs
    >>> from sklearn.svm import LinearSVC
    >>> X, y, names = gs.load_golub()
    >>> rfe = gs.RFE(LinearSVC(), n_features_to_select=10, prefilter="welch", prefilter_k=500).fit(X, y)
    >>> rfe.n_features_, int((rfe.ranking_ == 1).sum()), rfe.transform(X).shape
    (10, 10, (38, 10))
    """

    def __init__(self, estimator, *, n_features_to_select=None, step=0.1, prefilter=None, prefilter_k=None):
        self.estimator = estimator
        self.n_features_to_select = n_features_to_select
        self.step = step
        self.prefilter = prefilter
        self.prefilter_k = prefilter_k

    def _check_params(self, n_features):
        if not _is_estimator(self.estimator):
            raise param_error("estimator", "RFE", "a scikit-learn estimator (with fit)", self.estimator)
        ok_step = _is_int(self.step) and self.step >= 1 or _is_real(self.step) and 0 < self.step < 1
        if not ok_step:
            raise param_error("step", "RFE", "an int >= 1 or a fraction in (0, 1)", self.step)
        nsel = self.n_features_to_select
        ok = nsel is None or _is_int(nsel) and nsel >= 1 or _is_real(nsel) and not _is_int(nsel) and 0 < nsel <= 1
        if not ok:
            raise param_error("n_features_to_select", "RFE", "an int >= 1, a fraction in (0, 1] or None", nsel)
        if self.prefilter is None:
            if self.prefilter_k is not None:
                raise ValueError("prefilter_k is set but prefilter is None: name the pre-filter's score "
                                 "(e.g. prefilter='anova'), or leave prefilter_k out.")
            return
        _check_score_func(self.prefilter, None, "RFE", param="prefilter")
        if not _is_int(self.prefilter_k) or not 1 <= self.prefilter_k <= n_features:
            raise param_error("prefilter_k", "RFE",
                              f"an int in [1, n_features] (n_features = {n_features}) when prefilter is set",
                              self.prefilter_k)

    @fit_accepts_anndata
    def fit(self, X, y):
        """Eliminate features of ``X`` by the importances of models fitted to ``y``."""
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, accept_sparse="csc", ensure_all_finite=False)
        _check_finite_for(X, getattr(self, "feature_names_in_", None), None, self.estimator)
        p = X.shape[1]
        self._check_params(p)
        if is_classifier(self.estimator) and np.unique(y).size < 2:
            raise ValueError(f"y has only one class ({plain(np.unique(y)[0])}) in {len(y)} sample(s); RFE fits the "
                             "classifier estimator, which needs at least two. Check the labels.")
        if self.prefilter is None:
            candidates = np.arange(p)
        else:
            candidates = np.sort(_rank(self.prefilter, None, X, y)[2][: self.prefilter_k])
        Xc = X if candidates.size == p else X[:, candidates]
        m = candidates.size
        nsel = self.n_features_to_select
        n_select = m // 2 if nsel is None else nsel if _is_int(nsel) else int(nsel * m)
        if n_select > m:
            warnings.warn(f"n_features_to_select={n_select} > the {m} features entering the elimination: "
                          "all of them are kept.", UserWarning)
        n_select = max(1, min(n_select, m))
        support = np.ones(m, dtype=bool)
        ranking = np.ones(m, dtype=np.int64)
        model = None
        while support.sum() > n_select:
            features = np.flatnonzero(support)
            model = self._next(model)
            model.fit(Xc[:, features], y)
            importances = model_importances(model)
            order = np.argsort(importances, kind="stable")
            step = self.step if _is_int(self.step) else max(1, int(self.step * features.size))
            drop = min(step, features.size - n_select)
            support[features[order[:drop]]] = False
            ranking[~support] += 1
            if self._warm(model):
                model.coef_ = model.coef_[..., np.sort(order[drop:])]
        self.estimator_ = self._next(model).fit(Xc[:, support], y)
        self.support_ = np.zeros(p, dtype=bool)
        self.support_[candidates[support]] = True
        self.ranking_ = np.full(p, ranking.max() + 1, dtype=np.int64)
        self.ranking_[candidates] = ranking
        self.n_features_ = int(support.sum())
        return self

    def _warm(self, model):
        return model is not None and model.get_params().get("warm_start") is True and hasattr(model, "coef_")

    def _next(self, model):
        """The model of the next round: the same one to warm-start, else a fresh clone."""
        return model if self._warm(model) else clone(self.estimator)


class SelectKCV(_ModelSelector):
    """Keep the k best features, k chosen by cross-validating ``estimator`` over ``ks``.

    Every fold scores the features on its training rows only (never the held-out rows), once;
    every k is evaluated from that one ranking, by fitting a clone of the estimator on the top-k
    columns of the training rows and scoring it on the held-out rows. The best k has the highest
    mean score (the smallest such k on ties). Then the features are scored on all rows and the
    best k of them are selected.

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
    score_params : dict, optional
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

    def __init__(self, score_func="anova", estimator=None, *, ks=(10, 100, 1000), cv=5,
                 scoring="balanced_accuracy", score_params=None, random_state=None):
        self.score_func = score_func
        self.estimator = estimator
        self.ks = ks
        self.cv = cv
        self.scoring = scoring
        self.score_params = score_params
        self.random_state = random_state

    def _model(self):
        if self.estimator is None:
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(max_iter=1000)
        return self.estimator

    @fit_accepts_anndata
    def fit(self, X, y, groups=None):
        """Choose k by cross-validation, then select the best k features of all rows."""
        from sklearn.metrics import check_scoring

        spec = _check_score_func(self.score_func, self.score_params, "SelectKCV")
        estimator = self._model()
        if not _is_estimator(estimator):
            raise param_error("estimator", "SelectKCV", "a scikit-learn estimator (with fit and predict) or None",
                              self.estimator)
        try:
            scorer = check_scoring(estimator, scoring=self.scoring)
        except (ValueError, TypeError):
            raise param_error("scoring", "SelectKCV", "a name from sklearn.metrics.get_scorer_names() or a "
                              "callable scorer(estimator, X, y)", self.scoring) from None
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=False)
        _check_finite_for(X, getattr(self, "feature_names_in_", None), spec, estimator)
        X = _rows_ready(X)
        ks = _check_ks(self.ks, X.shape[1], "SelectKCV")
        splits = _splits(self.cv, X, y, groups, is_classifier(estimator), self.random_state, "SelectKCV")
        fold_scores = np.empty((len(splits), ks.size))
        rankings = np.empty((len(splits), ks[-1]), dtype=np.intp)
        with engine.progress("Cross-validation", total=len(splits) * ks.size, unit="fits") as bar:
            for i, ((train, test), name) in enumerate(zip(splits, _fold_names(len(splits)))):
                _, ranking, out = _fold(X, y, train, test, self.score_func, self.score_params, estimator, ks,
                                        lambda model, X_test: scorer(model, X_test, y[test]), bar, name)
                fold_scores[i] = out
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
        self.scores_, self.pvalues_, self.ranking_ = _rank(self.score_func, self.score_params, X, y)
        self.support_ = np.zeros(X.shape[1], dtype=bool)
        self.support_[self.ranking_[: self.best_k_]] = True
        self.estimator_ = clone(estimator).fit(X[:, self.support_], y)
        return self


def subsamples(y, *, n_resamples, sample_fraction, stratify, random_state=None):
    """Row indices of ``n_resamples`` subsamples drawn without replacement, (n_resamples, m), sorted rows.

    Stratified: ``floor(sample_fraction * n_c)`` rows (at least 1) of every class ``c``; else
    ``floor(sample_fraction * n)`` rows of all. ``random_state``: as scikit-learn's (an int, a
    ``RandomState`` or None).

    >>> from genosift.model_selection import subsamples
    >>> subsamples([0, 0, 0, 0, 1, 1], n_resamples=3, sample_fraction=0.5, stratify=True, random_state=0).shape
    (3, 3)
    """
    y = np.asarray(y)
    rng = check_random_state(random_state)
    if stratify:
        codes = np.unique(y, return_inverse=True)[1].ravel()
        pools = [np.flatnonzero(codes == c) for c in range(codes.max() + 1)]
    else:
        pools = [np.arange(y.shape[0])]
    sizes = [max(1, math.floor(sample_fraction * len(pool) + 1e-9)) for pool in pools]
    out = np.empty((n_resamples, sum(sizes)), dtype=np.intp)
    for r in range(n_resamples):
        out[r] = np.sort(np.concatenate([rng.choice(pool, size, replace=False) for pool, size in zip(pools, sizes)]))
    return out


class StabilitySelection(_ModelSelector):
    """Keep the features that are among the k best in at least ``threshold`` of many subsamples.

    Each of ``n_resamples`` subsamples of ``sample_fraction`` of the rows (drawn without
    replacement; stratified by class for class labels) ranks the features, by a score or by a
    model fitted to it, and its k best are counted. ``frequencies_`` is the fraction of
    subsamples in which each feature was among the k best.

    Parameters
    ----------
    score_func : str, callable or scikit-learn estimator, default="anova"
        A method name from ``genosift.methods()``, ``f(X, y) -> scores`` / ``-> (scores, pvalues)``,
        or an estimator whose ``coef_`` (squared, summed over classes) or ``feature_importances_``
        rank the features (cloned for every subsample).
    k : int, default=50
        Features counted per subsample (all of them if k > n_features, with a warning).
    n_resamples : int, default=100
    sample_fraction : float in (0, 1), default=0.5
    threshold : float in (0, 1], default=0.6
        Smallest selection frequency of a kept feature.
    score_params : dict, optional
        Options of the method.
    random_state : int, RandomState or None, default=None
        Seed of the subsamples.

    Attributes
    ----------
    frequencies_ : ndarray (n_features,)
    subsamples_ : ndarray (n_resamples, m), the row indices of every subsample (sorted)
    support_ : ndarray of bool, ``frequencies_ >= threshold``

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 500)); y = np.repeat([0, 1], 40); X[y == 1, :4] += 2
    >>> sel = gs.StabilitySelection("anova", k=10, n_resamples=50, random_state=0).fit(X, y)
    >>> np.flatnonzero(sel.get_support()).tolist(), sel.frequencies_[:4].tolist()
    ([0, 1, 2, 3], [1.0, 1.0, 1.0, 1.0])
    """

    def __init__(self, score_func="anova", *, k=50, n_resamples=100, sample_fraction=0.5, threshold=0.6,
                 score_params=None, random_state=None):
        self.score_func = score_func
        self.k = k
        self.n_resamples = n_resamples
        self.sample_fraction = sample_fraction
        self.threshold = threshold
        self.score_params = score_params
        self.random_state = random_state

    def _model(self):
        return self.score_func if _is_estimator(self.score_func) else None

    def _check_params(self):
        model = self._model()
        spec = None if model is not None else _check_score_func(self.score_func, self.score_params,
                                                                 "StabilitySelection")
        if model is not None and self.score_params:
            raise ValueError("score_params are options of a registered method; with an estimator as "
                             "score_func, set its parameters on the estimator instead.")
        for name, ok, expected in (
            ("k", _is_int(self.k) and self.k >= 1, "an int >= 1"),
            ("n_resamples", _is_int(self.n_resamples) and self.n_resamples >= 1, "an int >= 1"),
            ("sample_fraction", _is_real(self.sample_fraction) and 0 < self.sample_fraction < 1, "a number in (0, 1)"),
            ("threshold", _is_real(self.threshold) and 0 < self.threshold <= 1, "a number in (0, 1]"),
        ):
            if not ok:
                raise param_error(name, "StabilitySelection", expected, getattr(self, name))
        return spec, model

    @fit_accepts_anndata
    def fit(self, X, y):
        """Count how often each feature is among the k best of a subsample."""
        spec, model = self._check_params()
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=False)
        _check_finite_for(X, getattr(self, "feature_names_in_", None), spec, model)
        X = _rows_ready(X)
        p = X.shape[1]
        if self.k > p:
            warnings.warn(f"k={self.k} is greater than n_features={p}. All the features will be kept.", UserWarning)
        k = min(self.k, p)
        regression = (spec is not None and spec.task == "regression"
                      or model is not None and is_regressor(model)
                      or type_of_target(y) not in ("binary", "multiclass"))
        self.subsamples_ = subsamples(y, n_resamples=self.n_resamples, sample_fraction=self.sample_fraction,
                                      stratify=not regression, random_state=self.random_state)
        counts = np.zeros(p, dtype=np.int64)
        for rows in self.subsamples_:
            if model is not None:
                ranking = rank_order(model_importances(clone(model).fit(X[rows], y[rows])))
            else:
                ranking = _rank(self.score_func, self.score_params, X[rows], y[rows])[2]
            counts[ranking[:k]] += 1
        self.frequencies_ = counts / self.n_resamples
        self.support_ = self.frequencies_ >= self.threshold
        return self
