"""The modelling workflow: select features and fit a model over a grid of k, honestly evaluated.

``evaluate`` scores the features inside each training fold only (never on the samples it is
tested on), fits a model on the top k of that fold's ranking for every k of the grid, and
measures it on the held-out samples; then it refits the ranking and the model on all training
samples at the best k. ``write_results`` writes the tables, the final model and its provenance
to a folder, which ``genosift report`` turns into figures; ``predict`` applies a saved model to
new data.

Models: ``"logistic"`` (L2 logistic regression on standardised features), ``"random_forest"``
and ``"linear_svm"`` (on standardised features; no class probabilities).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._messages import FixError, plain
from ._validation import param_error
from .model_selection.models import METRICS, MODELS, make_model
from .model_selection.models import reported_importances as _importance

__all__ = ["MODELS", "Evaluation", "evaluate", "held_out_metrics", "load_model", "make_model", "predict",
           "write_results"]


@dataclass
class Evaluation:
    """What ``evaluate`` found; ``write_results`` writes it to a folder."""

    method: str
    model_name: str
    model_options: dict
    ks: list
    metric: str
    classes: np.ndarray
    cv: dict
    folds: list                      # per fold: dict(train, test, ranking, predicted {k}, proba {k})
    cv_metrics: object               # DataFrame: k, fold, metrics, n_train, n_test
    curve: object                    # DataFrame: k, <metric>_mean, <metric>_std
    best_k: int
    oof: object                      # DataFrame of out-of-fold predictions at best_k
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


def _fold_metrics(y_true, y_pred, proba, classes, decision=None):
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, roc_auc_score

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


def _check_grid(ks, n_features):
    if isinstance(ks, (int, np.integer)):
        ks = [ks]
    try:
        ks = sorted({int(k) for k in ks})
    except (TypeError, ValueError):
        raise param_error("ks", "evaluate", "a list of ints >= 1", ks) from None
    if not ks or ks[0] < 1:
        raise param_error("ks", "evaluate", "a non-empty list of ints >= 1", ks)
    too_big = [k for k in ks if k > n_features]
    if too_big:
        raise ValueError(f"k = {too_big} is more than the {n_features} features; choose ks up to {n_features}.")
    return ks


def evaluate(X, y, *, method="fisher", ks=(10, 100, 1000), model="logistic", model_options=None, cv=5,
             groups=None, validation=None, metric="balanced_accuracy", sample_ids=None, feature_names=None,
             score_params=None, random_state=0, n_jobs=None, binary=False, min_af=None, max_af=None):
    """Select features and fit a model for every k of a grid, scored inside each training fold.

    Parameters
    ----------
    X : array-like or sparse (n_samples, n_features)
    y : array-like of class labels
    method : str
        A classification method of the registry (``genosift.methods()``).
    ks : list of int
        Numbers of top features to try.
    model : {"logistic", "random_forest", "linear_svm"}
    model_options : dict, optional
        Options of the model (``MODELS``).
    cv : int
        Stratified folds (shuffled with ``random_state``); ignored when ``validation`` is given.
    groups : array-like, optional
        Group of each sample: folds never split a group (``StratifiedGroupKFold``).
    validation : boolean array, optional
        One split instead of folds: these samples are held out (e.g. ``--val-groups``). The
        curve then holds one value per k (its ``_std`` columns are NaN: no spread) and the best
        k is picked on the validation samples.
    metric : str
        The metric whose mean over folds chooses the best k (ties: the smaller k).
    sample_ids, feature_names : optional
        Carried into the outputs; with ``sample_ids`` the saved model lists the ids of its
        training samples, so ``predict`` can flag them (``in_training``).
    score_params : dict, optional
        Options of the scoring method.
    random_state : int
        Seed of the folds and of the models: the same inputs and seed give the same outputs.
    binary : bool
        Presence/absence: features become ``x > 0`` for scoring and for the models (GenoLearn's
        binary mode); the saved model applies the same reading to new data in ``predict``.
    min_af, max_af : float in [0, 1], optional
        Allele-frequency filter (as ``genosift.score``): in each fold, only the features carried
        (value above 0) by a share of that fold's training samples in ``[min_af, max_af]`` are
        tested and can be chosen (the held-out samples never count); the final ranking and model
        use the shares of all training samples. A k above the number of features inside the
        range takes all of them (a note says so).

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
    import pandas as pd
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
    from sklearn.pipeline import Pipeline

    from . import engine, get_method, score
    from ._validation import as_labels, as_matrix, check_finite
    from .model_selection import cross_validate_ks
    from .profiles import profile
    from .selection import SelectKBest

    spec = get_method(method)
    from .scores import check_af

    af = check_af(min_af, max_af, "evaluate")
    if spec.task not in ("classification", "any"):
        raise ValueError(f"evaluate fits classifiers; method '{spec.name}' is for {spec.task} targets. "
                         "Choose a classification method (genosift methods).")
    if metric not in METRICS:
        raise param_error("metric", "evaluate", f"one of {list(METRICS)}", metric)
    if hasattr(X, "columns") and hasattr(X, "dtypes"):  # a DataFrame: its values, and its names
        X, frame_names = as_matrix(X)
        feature_names = frame_names if feature_names is None else feature_names
    if binary:  # presence/absence, for scoring and for the models; predict reads it from the model
        from .transforms import presence

        X = presence(X)
    n, p = X.shape
    y = as_labels(y, n)
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
    ks = _check_grid(ks, p)
    estimator = make_model(model, options=model_options, random_state=random_state, sparse=sp.issparse(X),
                           n_jobs=n_jobs)
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
        splits = [(train_idx, test_idx)]
        cv_info = {"kind": "validation", "folds": 1, "seed": random_state}
    else:
        if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
            raise param_error("cv", "evaluate", "an int >= 2", cv)
        smallest = int(np.unique(y, return_counts=True)[1].min())
        if smallest < cv:
            raise FixError(f"The smallest class has {smallest} sample(s), fewer than the {cv} folds "
                           f"asked for. Ask for at most {smallest} folds ({{cv}}), or leave the class out "
                           "(--min-count).", owner="evaluate", cv=FixError.ANY)
        if groups is not None:
            splitter = StratifiedGroupKFold(n_splits=int(cv), shuffle=True, random_state=random_state)
            splits = list(splitter.split(np.zeros(n), y, groups))
        else:
            splitter = StratifiedKFold(n_splits=int(cv), shuffle=True, random_state=random_state)
            splits = list(splitter.split(np.zeros(n), y))
        cv_info = {"kind": "groups" if groups is not None else "stratified_kfold", "folds": int(cv),
                   "seed": random_state}
    folds = cross_validate_ks(X, y, score_func=spec.name, estimator=estimator, ks=ks, cv=splits,
                              score_params=score_params, random_state=random_state, min_af=min_af, max_af=max_af)
    af_notes = []
    if af is not None:  # per fold, the features inside the range of its training samples
        tested = [len(fold["ranking"]) for fold in folds]
        af_notes.append(f"Allele-frequency filter [{af[0]}, {af[1]}] (on each fold's training samples): "
                        f"{min(tested)}-{max(tested)} of {p} features tested per fold"
                        + ("; k above that number used all of them" if max(ks) > min(tested) else "") + ".")
    rows = []
    for i, fold in enumerate(folds):
        for k in ks:
            m = _fold_metrics(y[fold["test"]], fold["predicted"][k], fold["proba"][k], classes,
                              fold.get("decision", {}).get(k))
            rows.append({"k": k, "fold": i, **m, "n_train": len(fold["train"]), "n_test": len(fold["test"])})
    cv_metrics = pd.DataFrame(rows)
    grouped = cv_metrics.groupby("k")
    curve = pd.DataFrame({"k": ks})
    for m in METRICS:
        curve[f"{m}_mean"] = grouped[m].mean().reindex(ks).to_numpy()
        # one validation split: one value per k, no spread (NaN, not a standard deviation of 0)
        curve[f"{m}_std"] = (np.nan if validation is not None
                             else grouped[m].std(ddof=0).reindex(ks).to_numpy())
    chosen_by = curve[f"{metric}_mean"].to_numpy()
    if np.isnan(chosen_by).all():  # roc_auc on test folds of one class, or a model without scores
        raise FixError(
            f"The metric {metric!r} could not be computed on any fold (each test fold needs both "
            "classes, and the model class scores). Choose another {metric}.",
            owner="evaluate", metric=FixError.ANY,
        )
    best_k = int(ks[int(np.nanargmax(chosen_by))])
    oof = _out_of_fold(folds, best_k, y, classes, sample_ids)
    # the final model: scored and fitted on every training sample
    train = np.ones(n, dtype=bool) if validation is None else ~validation
    X_train, y_train = X[np.flatnonzero(train)], y[train]
    with engine.progress("Final model", total=2, unit="steps") as bar:
        bar.describe("Final model: scoring the training samples")
        result = score(X_train, y_train, method=spec.name, feature_names=feature_names, min_af=min_af,
                       max_af=max_af, **(score_params or {}))
        bar.advance()
        bar.describe(f"Final model: fitting k = {best_k:,}")
        select = SelectKBest(spec.name, k=min(best_k, result.n_tested), score_params=score_params, min_af=min_af,
                             max_af=max_af)
        pipeline = Pipeline([("select", select),
                             ("model", clone(estimator))])
        pipeline.fit(X_train, y_train)
        bar.advance()
    prof = profile(X_train, y_train, target="classes", feature_names=result.feature_names)
    chosen = np.flatnonzero(pipeline.named_steps["select"].get_support())
    importance = _importance(pipeline.named_steps["model"], chosen.size)
    order = np.argsort(result.ranks[chosen], kind="stable")  # importance in ranking order
    return Evaluation(
        method=spec.name, model_name=model, model_options=dict(model_options or {}), ks=ks, metric=metric,
        notes=af_notes, classes=classes, cv=cv_info, folds=folds, cv_metrics=cv_metrics, curve=curve, best_k=best_k,
        oof=oof,
        result=result, pipeline=pipeline, importance=importance[order],
        sample_ids=np.asarray(sample_ids if sample_ids is not None else np.arange(n).astype(str), dtype=object),
        feature_names=np.asarray(result.feature_names, dtype=object), seed=random_state, train=train,
        binary=bool(binary), named_samples=sample_ids is not None, profile=prof,
    )


def _out_of_fold(folds, k, y, classes, sample_ids):
    import pandas as pd

    parts = []
    for i, fold in enumerate(folds):
        test = fold["test"]
        frame = pd.DataFrame({
            "sample": (np.asarray(sample_ids, dtype=object)[test] if sample_ids is not None else test.astype(str)),
            "fold": i, "true": y[test].astype(str), "predicted": np.asarray(fold["predicted"][k]).astype(str),
        })
        proba = fold["proba"][k]
        for c, name in enumerate(classes):
            frame[f"proba_{name}"] = proba[:, c] if proba is not None else np.nan
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)


def _tables(ev, X, y):
    """The tables of the results folder, by file name."""
    import pandas as pd
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    classes = [str(c) for c in ev.classes]
    true, pred = ev.oof["true"].to_numpy(), ev.oof["predicted"].to_numpy()
    precision, recall, f1, support = precision_recall_fscore_support(true, pred, labels=classes, zero_division=0)
    per_class = pd.DataFrame({"class": classes, "precision": precision, "recall": recall, "f1": f1,
                              "support": support})
    confusion = pd.DataFrame(confusion_matrix(true, pred, labels=classes), columns=classes)
    confusion.insert(0, "true", classes)
    res = ev.result
    frame = res.to_frame()
    frame["selected"] = frame["rank"] <= min(ev.best_k, res.n_tested)  # never a feature the filter left out
    chosen = res.ranking[: min(ev.best_k, res.n_tested)]
    selected = pd.DataFrame({
        "feature": res.feature_names[chosen], "rank": np.arange(1, chosen.size + 1), "score": res.scores[chosen],
        "pvalue": res.pvalues[chosen] if res.pvalues is not None else np.nan,
        "qvalue": res.qvalues[chosen] if res.qvalues is not None else np.nan,
        "importance": ev.importance,
    })
    if getattr(ev, "profile", None) is not None:  # class means, diff_means, prevalence (training samples)
        columns = ev.profile.columns()
        frame = pd.concat([frame, columns.iloc[res.ranking].reset_index(drop=True)], axis=1)
        selected = pd.concat([selected, columns.iloc[chosen].reset_index(drop=True)], axis=1)
    counts = {}
    for fold in ev.folds:
        for j in fold["ranking"][: ev.best_k]:
            counts[int(j)] = counts.get(int(j), 0) + 1
    features = np.array(sorted(counts, key=lambda j: (-counts[j], j)), dtype=np.int64)
    stability = pd.DataFrame({"feature": ev.feature_names[features],
                              "frequency": [counts[j] / len(ev.folds) for j in features]})
    top = res.ranking[: min(12, res.n_features)]
    rows = np.flatnonzero(ev.train)
    values = X[rows][:, top]
    values = values.toarray() if sp.issparse(values) else np.asarray(values)
    top_values = pd.DataFrame(values, columns=[str(f) for f in res.feature_names[top]])
    top_values.insert(0, "label", np.asarray(y)[rows].astype(str))
    top_values.insert(0, "sample", ev.sample_ids[rows])
    return {
        "cv_metrics.tsv": ev.cv_metrics, "curve.tsv": ev.curve, "per_class.tsv": per_class,
        "confusion.tsv": confusion, "predictions.tsv": ev.oof, "scores.tsv": frame, "selected.tsv": selected,
        "stability.tsv": stability, "top_values.tsv": top_values,
    }


def write_results(ev, folder, *, X, y, provenance=None, overwrite=False, inputs=()):
    """Write an ``Evaluation`` to ``folder`` (the layout ``genosift report`` reads).

    The folder is built under a temporary name beside it and renamed when complete, with a
    marker file listing what it holds. An existing ``folder`` is replaced only with
    ``overwrite=True``, and only if it is such a results folder holding nothing else and none of
    ``inputs`` (the paths the results were made from). ``X``, ``y``: the data given to
    ``evaluate`` (the values of the top features are written for the final model's samples).
    """
    import joblib

    from . import __version__
    from ._files import check_output, staged, write_marker
    from .report import write_json, write_table

    folder = Path(folder)
    check_output(folder, force=overwrite, inputs=inputs, folder=True)
    with staged(folder, force=overwrite, folder=True) as tmp:
        for name, table in _tables(ev, X, y).items():
            write_table(table, tmp / name)
        chosen = ev.result.ranking[: min(ev.best_k, ev.result.n_tested)]
        run = {
            "genosift_version": __version__, "method": ev.method, "model": ev.model_name,
            "model_options": ev.model_options, "ks": ev.ks, "best_k": ev.best_k, "metric": ev.metric,
            "cv": ev.cv, "classes": [str(c) for c in ev.classes], "n_samples": int(len(ev.sample_ids)),
            "n_features": int(ev.result.n_features), "has_pvalues": ev.result.pvalues is not None,
            "probabilities": bool(hasattr(ev.pipeline, "predict_proba") and ev.model_name != "linear_svm"),
            "notes": ev.notes, "method_options": dict(ev.result.options),
            **({} if ev.result.af_range is None
               else {"min_af": ev.result.af_range[0], "max_af": ev.result.af_range[1]}),
            **(provenance or {}),
        }
        write_json(run, tmp / "run.json")
        model_info = {
            "features": [str(f) for f in ev.feature_names], "selected": [str(f) for f in ev.feature_names[chosen]],
            "classes": [str(c) for c in ev.classes], "method": ev.method, "k": ev.best_k, "model": ev.model_name,
            "model_options": ev.model_options, "genosift_version": __version__, "seed": ev.seed,
            "binary": ev.binary,
            # the samples the final model was fitted on (None: evaluate had row numbers, not ids)
            "training_samples": ([str(s) for s in ev.sample_ids[ev.train]]
                                 if getattr(ev, "named_samples", True) else None),
        }
        joblib.dump({"pipeline": ev.pipeline, **model_info}, tmp / "model.joblib")
        write_json(model_info, tmp / "model.json")
        write_marker(tmp, [p.name for p in tmp.iterdir()])
        if overwrite and folder.exists():  # checked again: it may have changed during the run
            check_output(folder, force=True, inputs=inputs, folder=True)
    return folder


def load_model(path):
    """Load a model saved by ``write_results`` (``model.joblib``).

    Loading a joblib file runs code from it (it is a pickle): load only models you made or trust.
    """
    import joblib

    path = Path(path)
    if path.is_dir():
        path = path / "model.joblib"
    if not path.exists():
        raise FileNotFoundError(f"No model at {str(path)!r}; give the model.joblib of a `genosift evaluate` run.")
    try:
        saved = joblib.load(path)
    except Exception as exc:  # a damaged, truncated or foreign file fails anywhere inside unpickling
        raise ValueError(f"Cannot load {str(path)!r} as a genosift model ({type(exc).__name__}: {exc}). Give the "
                         "model.joblib that `genosift evaluate` wrote; a damaged or other file cannot be read.") from None
    if not isinstance(saved, dict) or "pipeline" not in saved or "features" not in saved:
        raise ValueError(f"{str(path)!r} is not a genosift model (written by `genosift evaluate`).")
    return saved


def _check_predict_finite(M, names, sample_ids):
    """The error naming the features (and samples) where the model would meet NaN or infinity."""
    from ._validation import _names_list

    if sp.issparse(M):
        coo = M.tocoo()
        bad = ~np.isfinite(coo.data)
        if not bad.any():
            return
        cols, rows = np.unique(coo.col[bad]), np.unique(coo.row[bad])
    else:
        bad = ~np.isfinite(M)
        if not bad.any():
            return
        cols, rows = np.flatnonzero(bad.any(axis=0)), np.flatnonzero(bad.any(axis=1))
    samples = rows if sample_ids is None else np.asarray(sample_ids, dtype=object)[rows]
    raise ValueError(
        f"The new data have NaN or infinity in {cols.size} feature(s) the model uses: "
        f"{_names_list(list(names[cols]), 10)}, in {rows.size} sample(s): {_names_list(list(samples), 10)}. "
        "The model cannot predict from missing values: fill them in (impute) or leave those samples out."
    )


def predict(saved, X, feature_names, *, sample_ids=None, fill_missing=False):
    """Class predictions (and probabilities) of a saved model for new data.

    Columns are matched to the model's features by name, in any order; extra columns are
    ignored. A feature of the model missing from the data is an error, unless ``fill_missing``
    (counts such as k-mers, where absent means zero): then it is zero and reported.

    Returns
    -------
    (DataFrame, list of str)
        sample, predicted, ``in_training`` (True for the samples the model was fitted on, by
        sample id; present when ``sample_ids`` are given and the model lists its training
        samples), ``proba_<class>`` per class; and notes on the columns matched.
    """
    import pandas as pd

    names = [str(f) for f in feature_names]
    where = {f: j for j, f in enumerate(names)}
    if len(where) != len(names):
        raise ValueError("The new data have duplicated feature names; each feature must be named once.")
    wanted = saved["features"]
    selected = set(saved["selected"])
    missing = [f for f in wanted if f not in where]
    missing_selected = [f for f in missing if f in selected]
    notes = []
    if missing_selected and not fill_missing:
        from ._validation import _names_list

        raise ValueError(
            f"{len(missing_selected)} feature(s) the model uses are not in the new data: "
            f"{_names_list(missing_selected, 10)}. Give data with the same features (for counts such "
            "as k-mers, where an absent feature is zero, pass --fill-missing)."
        )
    if missing:
        notes.append(f"{len(missing)} of the model's {len(wanted)} features are absent from the new data"
                     + (f" ({len(missing_selected)} of them used by the model, set to 0)" if missing_selected else
                        " (none used by the model)") + ".")
    extra = len(names) - (len(wanted) - len(missing))
    if extra:
        notes.append(f"{extra} column(s) of the new data are not features of the model and were ignored.")
    if saved.get("binary"):  # trained on presence/absence: the new data are read the same way
        from .transforms import presence

        X = presence(X)
    n = X.shape[0]
    columns = np.array([where.get(f, -1) for f in wanted], dtype=np.int64)
    present = columns >= 0
    columns = np.maximum(columns, 0)  # absent features: any column, then zeroed (NaN there too)
    if sp.issparse(X):
        aligned = sp.csr_matrix(sp.csr_matrix(X)[:, columns], dtype=np.float64, copy=True)
        aligned.data[~present[aligned.indices]] = 0.0
        aligned.eliminate_zeros()
    else:
        aligned = np.where(present, np.asarray(X, dtype=np.float64)[:, columns], 0.0)
    pipeline = saved["pipeline"]
    support = pipeline.named_steps["select"].get_support()
    _check_predict_finite(aligned[:, np.flatnonzero(support)], np.asarray(wanted, dtype=object)[support],
                          sample_ids)
    reduced = pipeline.named_steps["select"].transform(aligned)
    model = pipeline.named_steps["model"]
    scaler = model.steps[0][1] if hasattr(model, "steps") else None
    if sp.issparse(reduced) and getattr(scaler, "with_mean", False):  # a model trained on dense data
        reduced = reduced.toarray()
    out = pd.DataFrame({"sample": np.asarray(sample_ids if sample_ids is not None else np.arange(n).astype(str),
                                             dtype=object)})
    out["predicted"] = np.asarray(model.predict(reduced)).astype(str)
    training = saved.get("training_samples")
    if sample_ids is not None and training is not None:
        out["in_training"] = out["sample"].astype(str).isin(set(map(str, training))).to_numpy()
    elif "training_samples" not in saved:
        notes.append("This model file does not list the samples it was trained on (it was written by an older "
                     "genosift): training samples cannot be told apart from new ones. Run evaluate again to "
                     "get a model that lists them.")
    elif training is None:
        notes.append("The model does not know the ids of its training samples (evaluate was given none): "
                     "training samples cannot be told apart from new ones.")
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    if hasattr(final, "predict_proba"):
        proba = model.predict_proba(reduced)
        for c, name in enumerate(saved["classes"]):
            out[f"proba_{name}"] = proba[:, c]
    return out, notes


def held_out_metrics(predictions, truth):
    """Accuracy of ``predict``'s output against true labels, on the samples not used in training.

    Parameters
    ----------
    predictions : DataFrame
        From ``predict``: ``predicted`` and, when the model knows its training samples,
        ``in_training``.
    truth : array-like
        The true label of each row (missing values: unknown, left out).

    Returns
    -------
    dict
        ``n_known`` (rows with a true label), ``n_training`` (of them, samples the model was
        fitted on; None when unknown), ``n_held_out`` (the others), and ``accuracy`` and
        ``balanced_accuracy`` over the held-out rows only (NaN when there are none). Training
        samples are never counted: a model is right on most of the samples it was fitted on,
        which says nothing of new data. Without ``in_training``, every known row counts and
        ``n_training`` is None.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"predicted": ["a", "b", "a", "b"], "in_training": [True, True, False, False]})
    >>> m = held_out_metrics(frame, ["a", "b", "a", "a"])
    >>> m["n_held_out"], m["n_training"], m["accuracy"]
    (2, 2, 0.5)
    """
    import pandas as pd
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    truth = pd.Series(np.asarray(truth, dtype=object)).astype("string")
    if len(truth) != len(predictions):
        raise ValueError(f"truth has {len(truth)} labels for {len(predictions)} predictions; give one per row.")
    known = truth.notna().to_numpy()
    training = (predictions["in_training"].to_numpy(dtype=bool) if "in_training" in predictions
                else None)
    held = known if training is None else known & ~training
    out = {"n_known": int(known.sum()), "n_training": None if training is None else int((known & training).sum()),
           "n_held_out": int(held.sum()), "accuracy": np.nan, "balanced_accuracy": np.nan}
    if held.any():
        true = truth[held].to_numpy(dtype=str)
        pred = predictions["predicted"].astype(str).to_numpy()[held]
        out["accuracy"] = float(accuracy_score(true, pred))
        with warnings.catch_warnings():  # a class predicted but absent from the truth: its recall is not counted
            warnings.simplefilter("ignore", UserWarning)
            out["balanced_accuracy"] = float(balanced_accuracy_score(true, pred))
    return out
