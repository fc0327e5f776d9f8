"""``evaluate``: select features and fit a model over a grid of k (and of model options), scored
inside each training fold."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ..core.choices import IMPORTANCE, METRICS
from ..core.messages import FixError, PythonText, plain
from ..core.validation import is_int, param_error
from ..selectors.models import make_model
from ..selectors.models import reported_importances as importance
from .grid import best_cell, grid_metrics, invalid_option, option_grid


@dataclass
class Evaluation:
    """What ``evaluate`` found; ``write_results`` writes it to a folder."""

    method: str
    model_name: str
    model_options: dict              # the options of the final model (the best setting of the grid)
    ks: list
    metric: str
    classes: np.ndarray
    cv: dict
    folds: list                      # per fold: dict(train, test, ranking, predicted {(s, k)}, proba {(s, k)})
    cv_metrics: object               # DataFrame: [options], k, fold, metrics, n_train, n_test
    curve: object                    # DataFrame: [options], k, <metric>_mean, <metric>_std
    best_k: int
    oof: object                      # DataFrame of out-of-fold predictions at the best (options, k)
    result: object                   # ScoreResult on all training samples
    pipeline: object                 # the final fitted Pipeline(select, model)
    importance: np.ndarray           # of the best_k selected features, in ranking order
    sample_ids: np.ndarray
    feature_names: np.ndarray
    seed: int
    train: np.ndarray                # the samples of the final model (all but a validation split)
    notes: list = field(default_factory=list)
    binary: bool = False             # features read as presence/absence (x > 0)
    named_samples: bool = True       # sample_ids were given (not row numbers): the model lists its training ids
    profile: object = None           # genosift.Profile of the training samples: class means, prevalence
    unlabelled: object = None        # DataFrame: the final model's predictions of the samples without a label
    importance_folds: object = None  # permutation importance: per selected feature, the folds it is a mean over
    grid: object = None              # the grid.Grid of model options (one setting without a grid)
    best_setting: int = 0            # the position of the final model's options in grid.settings
    columns: object = None           # X held only these features of a store (screened): feature_names,
    #                                  the folds and the model are of these; result and profile of all

    @property
    def best_options(self):
        """The best setting named by the options that vary (``""`` without a grid)."""
        return "" if self.grid is None else self.grid.labels[self.best_setting]


def _threads_capped(func):
    """Run ``func`` with the BLAS and OpenMP pools of the models (a logistic regression's BLAS,
    gradient boosting's OpenMP) capped at genosift's threads (``set_threads``, ``--threads``), as
    numba's loops and the workers already are."""
    import functools

    @functools.wraps(func)
    def capped(*args, **kwargs):
        from threadpoolctl import threadpool_limits

        from ..core import engine

        with threadpool_limits(limits=engine.threads()):
            return func(*args, **kwargs)

    return capped


@dataclass(frozen=True)
class Asked:
    """What a model evaluation was asked, the data aside: ``evaluate``'s keyword parameters (the
    unlabelled samples aside), as given, with its defaults. ``evaluate`` builds it; a caller that
    holds the request already (``jobs.evaluate``, ``screened.evaluate_store``) passes it down to
    ``evaluate_asked``."""

    method: str = "fisher"
    ks: object = (10, 100, 1000)
    model: str = "logistic"
    model_options: dict | None = None
    cv: object = 5
    groups: object = None
    validation: object = None
    metric: str = "balanced_accuracy"
    sample_ids: object = None
    feature_names: object = None
    method_options: dict | None = None
    random_state: object = 0
    n_jobs: object = None
    binary: bool = False
    min_af: float | None = None
    max_af: float | None = None
    covariates: object = None
    unlabelled_ids: object = None


@dataclass(frozen=True)
class _Checked:
    """The data and the request of ``evaluate``, checked: the matrix (presence/absence with
    ``binary``), labels, names and classes; the method's spec, the allele-frequency range, the
    covariate frame, the ks, the grid of model options and a model for each of its settings, the
    validation mask and the unlabelled samples."""

    X: object
    y: np.ndarray
    feature_names: object
    classes: np.ndarray
    spec: object
    af: tuple | None
    covariates: object
    ks: list
    grid: object
    estimators: list
    validation: np.ndarray | None
    unlabelled: object


def evaluate(X, y, *, method="fisher", ks=(10, 100, 1000), model="logistic", model_options=None, cv=5,
             groups=None, validation=None, metric="balanced_accuracy", sample_ids=None, feature_names=None,
             method_options=None, random_state=0, n_jobs=None, binary=False, min_af=None, max_af=None, covariates=None,
             unlabelled=None, unlabelled_ids=None):
    """Select features and fit a model for every k of a grid, scored inside each training fold.

    Parameters
    ----------
    X : array-like or sparse (n_samples, n_features)
    y : array-like of class labels
    method : str
        A classification method of the registry (``genosift.methods()``), or a regression method for two classes
        (it scores the classes coded 0 and 1).
    ks : int or list of int
        Numbers of top features to try (each >= 1; sorted, repeats dropped). A k above the number of features is
        tried as that number, with a warning (``model_selection.check_ks``).
    model : {"logistic", "random_forest", "hist_gradient_boosting", "linear_svm"}
        The importance of the selected features (``genosift.core.choices.IMPORTANCE``) is the norm of their
        coefficients, their impurity decrease, or (gradient boosting) their permutation importance on the
        validation folds (``importance.fold_permutation_importance``).
    model_options : dict, optional
        Options of the model (``MODELS``). A list of values is a grid: ``{"C": [0.01, 0.1, 1]}`` tries each,
        crossed with every other option given a list and with every k, all from the same per-fold rankings (the
        features are scored once per fold whatever the grid size).
    cv : int
        Stratified folds (``model_selection.cv_splits``: shuffled with ``random_state`` unless it is None);
        ignored when ``validation`` is given.
    groups : array-like, optional
        Group of each sample: folds never split a group (``StratifiedGroupKFold``).
    validation : boolean array, optional
        One split instead of folds: these samples are held out (e.g. ``--val-groups``). The curve then holds one
        value per k (its ``_std`` columns are NaN: no spread) and the best k is picked on the validation samples.
    metric : str
        The metric whose mean over folds chooses the best k and options. Ties (means within ``grid.TIE``) go to
        the simpler model (``genosift.core.choices.SIMPLER``: smaller C, fewer or shallower trees; otherwise the
        values in the order given, the options in the order given), then to the smaller k.
    sample_ids, feature_names : optional
        Carried into the outputs; with ``sample_ids`` the saved model lists the ids of its training samples, so
        ``predict`` can flag them (``in_training``).
    method_options : dict, optional
        Options of the scoring method.
    random_state : int
        Seed of the folds and of the models: the same inputs and seed give the same outputs.
    binary : bool
        Presence/absence: features become ``x > 0`` for scoring and for the models (GenoLearn's binary mode);
        the saved model applies the same reading to new data in ``predict``.
    min_af, max_af : float in [0, 1], optional
        Allele-frequency filter (as ``genosift.score``): in each fold, only the features carried (above 0) by a
        share of its training samples in ``[min_af, max_af]`` are tested and chosen (held-out samples never count);
        the final model uses all training samples' shares. A k above the number inside takes them all (a note says).
    covariates : array-like (n_samples, c) or DataFrame, optional
        For a method that adjusts for covariates (``genosift.scores.covariate_methods()``): one row per sample
        (``scores.check_covariates``). Each fold scores its training samples with their covariates, the final
        ranking all training samples with theirs. The models see the selected features only (``predict`` too).
    unlabelled : array-like or sparse (m, n_features), optional
        Samples with data but no label (the same features, in the same order; ids ``unlabelled_ids``, default
        their row numbers): never scored nor used in training; the final model predicts them (``Evaluation.
        unlabelled``: sample, predicted, ``proba_<class>`` with probabilities), read as presence/absence with binary.

    Returns
    -------
    Evaluation

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 40)); y = np.repeat(["a", "b"], 30); X[y == "b", :3] += 2
    >>> ev = evaluate(X, y, ks=[2, 3, 20], cv=3)
    >>> ev.best_k in (2, 3, 20), bool(ev.curve["balanced_accuracy_mean"].max() > 0.8)
    (True, True)
    """
    asked = Asked(method, ks, model, model_options, cv, groups, validation, metric, sample_ids, feature_names,
                  method_options, random_state, n_jobs, binary, min_af, max_af, covariates, unlabelled_ids)
    return evaluate_asked(X, y, asked, unlabelled=unlabelled)


@_threads_capped
def evaluate_asked(X, y, asked, *, unlabelled=None, screened=None):
    """``evaluate`` of ``X`` and ``y`` as ``asked`` (an ``Asked``), the ``unlabelled`` samples
    predicted by the final model. ``screened`` (a ``workflow.screened.Screened``, which
    ``screened.evaluate_store`` makes): ``X`` holds only these features of a store, near the top
    of every ranking; the final ranking and profile of every feature are the store's, the per-fold
    tested counts too.

    Returns
    -------
    Evaluation
    """
    return _evaluation(_checked(X, y, unlabelled, asked), asked, screened)


def _checked(X, y, unlabelled, asked):
    """The data and the request of ``evaluate`` checked before any work, in the order their errors are told."""
    from .. import get_method
    from ..scores import check_af, refuse_covariates
    from ..selectors import check_ks
    from ..selectors.score_funcs import covariate_frame, matched_covariates

    spec = get_method(asked.method)
    af = check_af(asked.min_af, asked.max_af, "evaluate")
    if spec.task == "unsupervised":
        raise ValueError(f"evaluate fits classifiers; method '{spec.name}' takes no target. "
                         "Choose a classification method (genosift methods).")
    covariates = asked.covariates
    if covariates is not None:
        refuse_covariates(spec, "evaluate")
        covariates = matched_covariates(X, covariates)
    if asked.metric not in METRICS:
        raise param_error("metric", "evaluate", f"one of {list(METRICS)}", asked.metric)
    X, y, feature_names, classes = _checked_data(X, y, asked.feature_names, binary=asked.binary, metric=asked.metric)
    if spec.task == "regression" and len(classes) != 2:
        raise ValueError(f"evaluate fits classifiers; method '{spec.name}' is for numeric targets and scores two "
                         f"classes (coded 0 and 1), but y has {len(classes)}. Choose a classification method "
                         "(genosift methods), or keep two classes.")
    n, p = X.shape
    if unlabelled is not None:
        unlabelled = _checked_unlabelled(unlabelled, asked.unlabelled_ids, p, binary=asked.binary,
                                         feature_names=feature_names)
    covariates = covariate_frame(covariates, n, "evaluate")
    ks = check_ks(asked.ks, p, "evaluate").tolist()
    grid = option_grid(asked.model, asked.model_options)
    estimators = [make_model(asked.model, options=setting, random_state=asked.random_state, sparse=sp.issparse(X),
                             n_jobs=asked.n_jobs, n_classes=len(classes)) for setting in grid.settings]
    validation = None if asked.validation is None else np.asarray(asked.validation, dtype=bool)
    return _Checked(X=X, y=y, feature_names=feature_names, classes=classes, spec=spec, af=af, covariates=covariates,
                    ks=ks, grid=grid, estimators=estimators, validation=validation, unlabelled=unlabelled)


def _cross_validated(data, asked):
    """The folds of ``evaluate`` (every setting and k from one ranking per fold) and what they were."""
    from ..selectors import cross_validate_grid

    splits, cv_info = evaluation_splits(data.y, cv=asked.cv, groups=asked.groups, validation=data.validation,
                                        metric=asked.metric, random_state=asked.random_state)
    try:
        folds = cross_validate_grid(data.X, data.y, score_func=data.spec.name, estimators=data.estimators,
                                    ks=data.ks, cv=splits, labels=data.grid.labels,
                                    method_options=asked.method_options, random_state=asked.random_state,
                                    min_af=asked.min_af, max_af=asked.max_af, covariates=data.covariates)
    except (ValueError, TypeError) as exc:  # scikit-learn refusing the value of a model option: name the fix
        fix = invalid_option(exc, data.grid)
        if fix is None:
            raise
        raise fix from None
    return folds, cv_info


def _notes(data, folds, screened):
    """The notes of the covariates and of the allele-frequency filter (per fold, the features inside the range
    of its training samples)."""
    covariates, af, ks = data.covariates, data.af, data.ks
    notes = [] if covariates is None else [
        f"Adjusted for {covariates.shape[1]} covariate(s) ({', '.join(map(str, covariates.columns))}), each fold "
        "with its training samples' rows; the models see the selected features only."]
    if af is not None:
        tested = [len(fold["ranking"]) for fold in folds] if screened is None else screened.tested
        notes.append(f"Allele-frequency filter [{af[0]}, {af[1]}] (on each fold's training samples): "
                     f"{min(tested)}-{max(tested)} of "
                     f"{data.X.shape[1] if screened is None else screened.result.n_features} features tested per fold"
                     + ("; k above that number used all of them" if max(ks) > min(tested) else "") + ".")
    return notes


def _evaluation(data, asked, screened):
    """The folds, their curve and its best (setting, k), the out-of-fold predictions there, and the final model
    of that cell on the training samples (with the importances of its features)."""
    from ..selectors.univariate import SelectKBest

    folds, cv_info = _cross_validated(data, asked)
    X, y, classes = data.X, data.y, data.classes
    notes = _notes(data, folds, screened)
    cv_metrics, curve = grid_metrics(folds, data.ks, y, classes, data.grid, one_split=data.validation is not None)
    best_setting, best_k = best_cell(curve, asked.metric, data.grid)
    oof = _out_of_fold(folds, (best_setting, best_k), y, classes, asked.sample_ids)
    train = np.ones(X.shape[0], dtype=bool) if data.validation is None else ~data.validation
    estimator = data.estimators[best_setting]
    select = SelectKBest(data.spec.name, k=best_k, method_options=asked.method_options, min_af=asked.min_af,
                         max_af=asked.max_af)
    result, pipeline, prof, weights = _final_model(
        X, y, train, estimator, select, data.feature_names,
        None if data.covariates is None else data.covariates.iloc[np.flatnonzero(train)])
    importance_folds = None
    if IMPORTANCE[asked.model] == "permutation":  # on the validation folds, for the features of the final model
        from .importance import fold_permutation_importance

        values, counts = fold_permutation_importance(X, y, folds, estimator, best_k, metric=asked.metric,
                                                     random_state=asked.random_state)
        chosen = result.ranking[: min(best_k, result.n_tested)]
        weights, importance_folds = values[chosen], counts[chosen]
    names = np.asarray(result.feature_names, dtype=object)  # of X's columns
    if screened is not None:  # every feature's ranking and profile, from the store
        result, prof = screened.result, screened.profile
    unlabelled = data.unlabelled
    if unlabelled is not None:
        from .prediction import predict_frame

        unlabelled = predict_frame(pipeline, unlabelled, sample_ids=asked.unlabelled_ids, classes=classes)
    sample_ids = asked.sample_ids
    return Evaluation(
        method=data.spec.name, model_name=asked.model, model_options=dict(data.grid.settings[best_setting]),
        ks=data.ks, metric=asked.metric, notes=notes, classes=classes, cv=cv_info, folds=folds,
        cv_metrics=cv_metrics, curve=curve, best_k=best_k, oof=oof, result=result, pipeline=pipeline,
        importance=weights,
        sample_ids=np.asarray(sample_ids if sample_ids is not None else np.arange(X.shape[0]).astype(str),
                              dtype=object),
        feature_names=names, seed=asked.random_state, train=train,
        columns=None if screened is None else screened.columns,
        binary=bool(asked.binary), named_samples=sample_ids is not None, profile=prof, grid=data.grid,
        best_setting=best_setting, unlabelled=unlabelled, importance_folds=importance_folds,
    )


def _checked_data(X, y, feature_names, *, binary, metric):
    """The matrix (presence/absence when ``binary``), its labels, names and classes, checked."""
    from ..core.validation import as_labels, as_matrix, check_finite

    if hasattr(X, "columns") and hasattr(X, "dtypes"):  # a DataFrame: its values, and its names
        X, frame_names = as_matrix(X)
        feature_names = frame_names if feature_names is None else feature_names
    if binary:  # presence/absence, for scoring and for the models; predict reads it from the model
        from ..core.transforms import presence

        X = presence(X)
    y = as_labels(y, X.shape[0])
    check_finite(X, feature_names)
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(f"y has only one class ({plain(classes[0]) if len(classes) else 'none'}); "
                         "evaluate needs at least two.")
    if metric == "roc_auc" and len(classes) != 2:
        others = ", ".join(m for m in METRICS if m != "roc_auc")
        raise FixError(
            f"The metric 'roc_auc' needs two classes; y has {len(classes)}: {plain(classes)}. Choose "
            f"another {{metric}} ({others}), or keep two classes.",
            owner="evaluate", metric=FixError.ANY,
        )
    return X, y, feature_names, classes


def evaluation_splits(y, *, cv, groups, validation, metric, random_state):
    """The (train, test) index pairs: one validation split, or stratified (group) folds."""
    from ..selectors import cv_splits

    n = len(y)
    if validation is not None:
        validation = np.asarray(validation, dtype=bool)
        train_idx, test_idx = np.flatnonzero(~validation), np.flatnonzero(validation)
        if not train_idx.size or not test_idx.size:
            raise ValueError("The validation split leaves no training or no validation samples.")
        if metric == "roc_auc" and len(np.unique(y[test_idx])) < 2:
            raise FixError(
                f"The metric 'roc_auc' needs both classes among the validation samples; they are all "
                f"{plain(np.unique(y[test_idx])[0])}. Choose another {{metric}}, or validate on "
                "samples of both classes.",
                owner="evaluate", metric=FixError.ANY,
            )
        return [(train_idx, test_idx)], {"kind": "validation", "folds": 1, "seed": random_state}
    if not is_int(cv) or cv < 2:
        raise param_error("cv", "evaluate", "an int >= 2", cv)
    smallest = int(np.unique(y, return_counts=True)[1].min())
    if smallest < cv:
        raise FixError(f"The smallest class has {smallest} sample(s), fewer than the {cv} folds "
                       f"asked for. Ask for at most {smallest} folds ({{cv}}), or leave the class out "
                       "({min_count}).", owner="evaluate", cv=FixError.ANY,
                       min_count=PythonText("drop its samples from X and y"))
    splits = cv_splits(int(cv), np.zeros(n), y, groups, True, random_state, "evaluate")
    cv_info = {"kind": "groups" if groups is not None else "stratified_kfold", "folds": int(cv),
               "seed": random_state}
    return splits, cv_info


def _final_model(X, y, train, estimator, select, feature_names, covariates=None):
    """The ranking (``select``, an unfitted ``SelectKBest`` of the best k, fitted here), model and class
    profile of every training sample (``covariates``: theirs); the importances in ranking order."""
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline

    from ..core import engine
    from ..scoring import profile

    X_train, y_train = X[np.flatnonzero(train)], y[train]
    best_k = select.k
    with engine.progress("Final model", total=2, unit="steps") as bar:
        bar.describe("Final model: scoring the training samples")
        # the selector's own scores are the ranking: the training samples are scored once
        select.fit(X_train, y_train, covariates=covariates)
        result = select.result_
        if feature_names is not None:
            result = replace(result, names=np.asarray(feature_names, dtype=object))
        select.k = min(best_k, result.n_tested)
        bar.advance()
        bar.describe(f"Final model: fitting k = {select.k:,}")
        model = clone(estimator).fit(select.transform(X_train), y_train)
        pipeline = Pipeline([("select", select), ("model", model)])
        bar.advance()
    prof = profile(X_train, y_train, kind="classes", feature_names=result.feature_names)
    chosen = np.flatnonzero(pipeline.named_steps["select"].get_support())
    weights = importance(pipeline.named_steps["model"], chosen.size)
    order = np.argsort(result.ranks[chosen], kind="stable")  # importance in ranking order
    return result, pipeline, prof, weights[order]


def _out_of_fold(folds, cell, y, classes, sample_ids):
    """The out-of-fold predictions of one (setting, k) ``cell``."""
    import pandas as pd

    parts = []
    for i, fold in enumerate(folds):
        test = fold["test"]
        frame = pd.DataFrame({
            "sample": (np.asarray(sample_ids, dtype=object)[test] if sample_ids is not None else test.astype(str)),
            "fold": i, "true": y[test].astype(str), "predicted": np.asarray(fold["predicted"][cell]).astype(str),
        })
        proba = fold["proba"][cell]
        for c, name in enumerate(classes):
            frame[f"proba_{name}"] = proba[:, c] if proba is not None else np.nan
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)




def _checked_unlabelled(X, sample_ids, n_features, *, binary, feature_names):
    """The samples without a label, checked (and read as presence/absence with ``binary``)."""
    from ..core.validation import as_matrix, check_finite

    X, _ = as_matrix(X)
    if X.ndim != 2 or X.shape[1] != n_features:  # (Python only: the command line takes them from the same data)
        raise ValueError(f"The unlabelled samples have {X.shape[1] if X.ndim == 2 else 'no'} feature column(s); the "
                         f"labelled data have {n_features}. Give unlabelled= the same features, in the same order.")
    if sample_ids is not None and len(sample_ids) != X.shape[0]:
        raise ValueError(f"{len(sample_ids)} unlabelled_ids for {X.shape[0]} unlabelled samples; give one id per "
                         "row (unlabelled_ids=).")
    if binary:
        from ..core.transforms import presence

        X = presence(X)
    check_finite(X, feature_names)
    return X
