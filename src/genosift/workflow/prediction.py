"""Applying a saved model to new data, and its accuracy on the samples it was not fitted on."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp


def _check_predict_finite(M, names, sample_ids):
    """The error naming the features (and samples) where the model would meet NaN or infinity."""
    from .._validation import names_list

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
        f"{names_list(list(names[cols]), 10)}, in {rows.size} sample(s): {names_list(list(samples), 10)}. "
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

    names = [str(f) for f in feature_names]
    where = {f: j for j, f in enumerate(names)}
    if len(where) != len(names):
        raise ValueError("The new data have duplicated feature names; each feature must be named once.")
    columns = np.array([where.get(f, -1) for f in saved["features"]], dtype=np.int64)
    return _predict_columns(saved, X, columns, len(names), sample_ids=sample_ids, fill_missing=fill_missing)


def predict_store(saved, data, *, sample_ids=None, fill_missing=False):
    """``predict`` for the rows of a store (a ``StoreRows``), reading only the model's features.

    The model's features are found among the store's names without decoding them all
    (``Store.columns_named``) and only their columns are read, so the memory is that of the
    model's features, whatever the number of features stored. The result is ``predict``'s.
    """
    columns = data.store.columns_named(saved["features"])
    present = np.flatnonzero(columns >= 0)
    M = data.read_columns(columns[present])
    local = np.full(columns.size, -1, dtype=np.int64)
    local[present] = np.arange(present.size)
    return _predict_columns(saved, M, local, data.shape[1], sample_ids=sample_ids, fill_missing=fill_missing)


def _predict_columns(saved, X, columns, n_columns, *, sample_ids, fill_missing):
    """``predict`` once the model's features are found: ``columns`` holds, for each of them, its
    column of ``X`` (-1 where absent); the data have ``n_columns`` features in all."""
    wanted = saved["features"]
    selected = set(saved["selected"])
    missing = [f for f, j in zip(wanted, columns.tolist()) if j < 0]
    missing_selected = [f for f in missing if f in selected]
    notes = []
    if missing_selected and not fill_missing:
        from .._validation import names_list

        raise ValueError(
            f"{len(missing_selected)} feature(s) the model uses are not in the new data: "
            f"{names_list(missing_selected, 10)}. Give data with the same features (for counts such "
            "as k-mers, where an absent feature is zero, pass --fill-missing)."
        )
    if missing:
        notes.append(f"{len(missing)} of the model's {len(wanted)} features are absent from the new data"
                     + (f" ({len(missing_selected)} of them used by the model, set to 0)" if missing_selected else
                        " (none used by the model)") + ".")
    extra = n_columns - (len(wanted) - len(missing))
    if extra:
        notes.append(f"{extra} column(s) of the new data are not features of the model and were ignored.")
    if saved.get("binary"):  # trained on presence/absence: the new data are read the same way
        from ..transforms import presence

        X = presence(X)
    present = columns >= 0
    columns = np.maximum(columns, 0)  # absent features: any column, then zeroed (NaN there too)
    if not present.any():  # none of the model's features (X may have no column at all): zeros
        aligned = sp.csr_matrix((X.shape[0], columns.size)) if sp.issparse(X) else np.zeros((X.shape[0], columns.size))
    elif sp.issparse(X):
        aligned = sp.csr_matrix(sp.csr_matrix(X)[:, columns], dtype=np.float64, copy=True)
        aligned.data[~present[aligned.indices]] = 0.0
        aligned.eliminate_zeros()
    else:
        aligned = np.where(present, np.asarray(X, dtype=np.float64)[:, columns], 0.0)
    support = saved["columns"]
    _check_predict_finite(aligned[:, support], np.asarray(wanted, dtype=object)[support], sample_ids)
    reduced = aligned[:, support]
    model = saved["estimator"]
    scaler = model.steps[0][1] if hasattr(model, "steps") else None
    if sp.issparse(reduced) and getattr(scaler, "with_mean", False):  # a model trained on dense data
        reduced = reduced.toarray()
    out = predict_frame(model, reduced, sample_ids=sample_ids, classes=saved["classes"])
    predicted = out["predicted"].unique()
    if len(out) > 1 and len(predicted) == 1:
        cause = (f" {len(missing_selected)} of the {len(selected)} features the model uses were absent and set to 0, "
                 "which may be why" if missing_selected else "")
        notes.append(f"The model predicts the same class, {predicted[0]!r}, for all {len(out)} samples.{cause} "
                     "Check that the new data are of the kind the model was trained on.")
    training = saved.get("training_samples")
    if sample_ids is not None and training is not None:
        out.insert(2, "in_training", out["sample"].astype(str).isin(set(map(str, training))).to_numpy())
    elif training is None:
        notes.append("The model does not know the ids of its training samples (evaluate was given none): "
                     "training samples cannot be told apart from new ones.")
    return out, notes


def predict_frame(model, X, *, sample_ids=None, classes):
    """``sample``, ``predicted`` and, when the model gives them, ``proba_<class>`` per class of
    ``classes``: a fitted model (or pipeline) applied to the rows of ``X``."""
    import pandas as pd

    ids = sample_ids if sample_ids is not None else np.arange(X.shape[0]).astype(str)
    out = pd.DataFrame({"sample": np.asarray(ids, dtype=object)})
    out["predicted"] = np.asarray(model.predict(X)).astype(str)
    final = model
    while hasattr(final, "steps"):  # a pipeline, possibly nested: its last step has the probabilities or not
        final = final.steps[-1][1]
    if hasattr(final, "predict_proba"):
        proba = model.predict_proba(X)
        for c, name in enumerate(classes):
            out[f"proba_{name}"] = proba[:, c]
    return out


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
