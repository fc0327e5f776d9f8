"""The results folder of ``evaluate``: its tables, run record and model; and loading the model back."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .model_file import SUFFIX, read_model, write_model

#: The best features of the final ranking whose values are written (top_values.tsv).
TOP_VALUES = 12


def results_tables(ev, X, y):
    """The tables of the results folder, by file name: DataFrames, and the ranking of every feature
    (``scores.tsv``) as consecutive pieces of one table (``outputs.ranking_frames``)."""
    import pandas as pd
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    from ..report.outputs import ranking_frames

    classes = [str(c) for c in ev.classes]
    true, pred = ev.oof["true"].to_numpy(), ev.oof["predicted"].to_numpy()
    precision, recall, f1, support = precision_recall_fscore_support(true, pred, labels=classes, zero_division=0)
    per_class = pd.DataFrame({"class": classes, "precision": precision, "recall": recall, "f1": f1,
                              "support": support})
    confusion = pd.DataFrame(confusion_matrix(true, pred, labels=classes), columns=classes)
    confusion.insert(0, "true", classes)
    res = ev.result
    chosen = res.ranking[: min(ev.best_k, res.n_tested)]  # never a feature the filter left out
    mask = np.zeros(res.n_features, dtype=bool)
    mask[chosen] = True
    prof = getattr(ev, "profile", None)  # class means, diff_means, prevalence (training samples)
    frames = ranking_frames(res, mask, prof)  # every feature, best first, a piece at a time
    selected = pd.DataFrame({
        "feature": res.names_of(chosen), "rank": np.arange(1, chosen.size + 1), "score": res.scores[chosen],
        "pvalue": res.pvalues[chosen] if res.pvalues is not None else np.nan,
        "qvalue": res.qvalues[chosen] if res.qvalues is not None else np.nan,
        "importance": ev.importance,
        **({} if getattr(ev, "importance_folds", None) is None else {"importance_folds": ev.importance_folds}),
    })
    if prof is not None:
        selected = pd.concat([selected, prof.columns(chosen).reset_index(drop=True)], axis=1)
    counts = {}
    for fold in ev.folds:
        for j in fold["ranking"][: ev.best_k]:
            counts[int(j)] = counts.get(int(j), 0) + 1
    features = np.array(sorted(counts, key=lambda j: (-counts[j], j)), dtype=np.int64)
    stability = pd.DataFrame({"feature": ev.feature_names[features],
                              "frequency": [counts[j] / len(ev.folds) for j in features]})
    top = res.ranking[: min(TOP_VALUES, res.n_features)]
    columns = getattr(ev, "columns", None)  # X holds these features of a store: where the top ones are
    rows = np.flatnonzero(ev.train)
    values = X[rows][:, top if columns is None else np.searchsorted(columns, top)]
    values = values.toarray() if sp.issparse(values) else np.asarray(values)
    top_values = pd.DataFrame(values, columns=[str(f) for f in res.names_of(top)])
    top_values.insert(0, "label", np.asarray(y)[rows].astype(str))
    top_values.insert(0, "sample", ev.sample_ids[rows])
    unlabelled = getattr(ev, "unlabelled", None)
    return {
        **({} if unlabelled is None else {"unlabelled_predictions.tsv": unlabelled}),
        "cv_metrics.tsv": ev.cv_metrics, "curve.tsv": ev.curve, "per_class.tsv": per_class,
        "confusion.tsv": confusion, "predictions.tsv": ev.oof, "scores.tsv": frames, "selected.tsv": selected,
        "stability.tsv": stability, "top_values.tsv": top_values,
    }


def write_results(ev, folder, *, X, y, provenance=None, overwrite=False, inputs=(), ploidy=None):
    """Write an ``Evaluation`` to ``folder`` (the layout ``genosift report`` reads).

    The folder is built under a temporary name beside it and renamed when complete, with a
    marker file listing what it holds. An existing ``folder`` is replaced only with
    ``overwrite=True``, and only if it is such a results folder holding nothing else and none of
    ``inputs`` (the paths the results were made from). ``X``, ``y``: the data given to
    ``evaluate`` (the values of the top features are written for the final model's samples);
    ``ploidy``: the data's ``Dataset.ploidy`` (genotypes), kept with the model so that
    ``predict`` matches its variants in VCF and PLINK data alike.
    """
    from .. import __version__
    from ..core.files import check_output, staged, write_json, write_marker, write_table
    from ..report.outputs import write_frame

    folder = Path(folder)
    check_output(folder, force=overwrite, inputs=inputs, folder=True)
    with staged(folder, force=overwrite, folder=True) as tmp:
        for name, table in results_tables(ev, X, y).items():
            if hasattr(table, "columns"):
                write_table(table, tmp / name)
            else:  # the ranking of every feature, written a piece at a time
                write_frame(table, tmp / name)
        chosen = ev.result.ranking[: min(ev.best_k, ev.result.n_tested)]
        run = {
            "genosift_version": __version__, "method": ev.method, "model": ev.model_name,
            "model_options": ev.model_options, "ks": ev.ks, "best_k": ev.best_k, "metric": ev.metric,
            "cv": ev.cv, "binary": bool(ev.binary), "classes": [str(c) for c in ev.classes],
            "n_samples": len(ev.sample_ids),
            "n_features": int(ev.result.n_features), "has_pvalues": ev.result.pvalues is not None,
            "probabilities": bool(hasattr(ev.pipeline, "predict_proba") and ev.model_name != "linear_svm"),
            "notes": ev.notes, "method_options": dict(ev.result.method_options), "importance": _importance_kind(ev),
            **({} if ev.result.af_range is None
               else {"min_af": ev.result.af_range[0], "max_af": ev.result.af_range[1]}),
            **({} if ev.result.covariates is None else {"covariates": list(ev.result.covariates)}),
            **_grid_record(ev),
            **(provenance or {}),
        }
        write_json(run, tmp / "run.json")
        model_info = {
            "features": [str(f) for f in ev.feature_names], "selected": [str(f) for f in ev.result.names_of(chosen)],
            "classes": [str(c) for c in ev.classes], "method": ev.method, "k": ev.best_k, "model": ev.model_name,
            "model_options": ev.model_options, "genosift_version": __version__, "seed": ev.seed,
            "binary": ev.binary, **({"options": ev.best_options} if ev.best_options else {}),
            # the form of the data it was fitted on: predict hands it new data in that form (the same sums)
            "sparse": bool(hasattr(X, "tocsr")),
            **({} if ploidy is None else {"ploidy": int(ploidy)}),
            # the samples the final model was fitted on (None: evaluate had row numbers, not ids)
            "training_samples": ([str(s) for s in ev.sample_ids[ev.train]]
                                 if getattr(ev, "named_samples", True) else None),
        }
        support = np.flatnonzero(ev.pipeline.named_steps["select"].get_support())
        final = ev.pipeline.named_steps["model"]
        saved = final.as_logistic() if hasattr(final, "as_logistic") else final  # the elastic net's, as data
        write_model(tmp / f"model{SUFFIX}", saved, model_info, support)
        write_json(model_info, tmp / "model.json")
        write_marker(tmp, [p.name for p in tmp.iterdir()])
        if overwrite and folder.exists():  # checked again: it may have changed during the run
            check_output(folder, force=True, inputs=inputs, folder=True)
    return folder


def _importance_kind(ev):
    """What the ``importance`` column of selected.tsv holds."""
    from ..core.choices import IMPORTANCE

    return {"coefficients": "the L2 norm of the feature's coefficients over the classes (standardised features)",
            "impurity": "the mean impurity decrease of the feature in the trees",
            "permutation": f"the mean drop of {ev.metric} on the held-out samples of the folds that selected the "
                           "feature (importance_folds) when its values are shuffled (5 shuffles)",
            }[IMPORTANCE[ev.model_name]]


def _grid_record(ev):
    """run.json's record of a grid of model options (nothing without one): the options that varied
    with their values (simplest first), the settings by name in that order, and the best one."""
    grid = getattr(ev, "grid", None)
    if grid is None or grid.size == 1:
        return {}
    return {"model_grid": grid.varying, "options": grid.labels, "best_options": ev.best_options}


def load_model(path):
    """Load a model saved by ``write_results`` (``model.skops``, or the results folder holding it).

    The file holds data only (see ``genosift.workflow.model_file``): loading it cannot run code,
    anything in it that no genosift model holds is refused, and so are malformed trees and lists
    of names that disagree (a ValueError naming the fault). A missing file is a FileNotFoundError.

    Returns
    -------
    dict
        ``model.json``'s record (``features``, ``selected``, ``classes``, ``method``, ``k``,
        ``model``, ``binary``, ``training_samples``...) with ``estimator``, the fitted model, and
        ``columns``, the positions among ``features`` of the columns it takes.
    """
    path = Path(path)
    if path.is_dir():
        older = path / "model.joblib"
        path = path / f"model{SUFFIX}"
        if not path.exists() and older.exists():  # a results folder of an earlier genosift
            path = older
    if not path.exists():  # whatever its name: a pickle is refused only once there is one
        raise FileNotFoundError(f"No model at {str(path)!r}; give the model{SUFFIX} (or the results folder) of a "
                                "`genosift evaluate` run.")
    if path.suffix in (".joblib", ".pkl", ".pickle"):
        raise ValueError(f"{str(path)!r} is a Python pickle, which runs code when it is loaded: genosift does not "
                         "load pickles. Run `genosift evaluate` again to save the model as data (model.skops).")
    estimator, info, columns = read_model(path)
    return {**info, "estimator": estimator, "columns": columns}
