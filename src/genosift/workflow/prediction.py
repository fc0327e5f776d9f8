"""Applying a saved model to new data, and its accuracy on the samples it was not fitted on."""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp


def _check_predict_finite(M, names, sample_ids):
    """The error naming the features (and samples) where the model would meet NaN or infinity."""
    from ..core.validation import names_list

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


def predict(saved, X, feature_names, *, sample_ids=None, fill_missing=False, ploidy=None):
    """Class predictions (and probabilities) of a saved model for new data.

    Columns are matched to the model's features by name, in any order; extra columns are
    ignored. A feature of the model missing from the data is an error, unless ``fill_missing``
    (counts such as k-mers, where absent means zero): then it is zero and reported.

    Genotypes (``ploidy`` given: ``Dataset.ploidy`` of VCF and PLINK data) are matched by
    chromosome, position and alleles: a variant of the model named ``CHROM:POS:A:B`` (``B``
    counted) found as ``CHROM:POS:B:A`` (PLINK 1.9 counts the minor allele, which is the
    reference at some sites) is counted as ``ploidy - count``; and counts are rescaled when the
    model's training data counted up to another number of copies (a haploid call is 1 in a VCF,
    2 in PLINK). The notes say how many.

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
    renamed = swapped = None
    if ploidy is not None:
        renamed, swapped = _match_variants(saved["features"], columns, names)
    matched = _Matched(columns, len(names), renamed=renamed, swapped=swapped, ploidy=ploidy)
    return _predict_columns(saved, X, matched, sample_ids=sample_ids, fill_missing=fill_missing)


def predict_store(saved, data, *, sample_ids=None, fill_missing=False):
    """``predict`` for the rows of a store (a ``StoreRows``), reading only the model's features.

    The model's features are found among the store's names without decoding them all
    (``Store.columns_named``) and only their columns are read, so the memory is that of the
    model's features, whatever the number of features stored. The result is ``predict``'s.
    """
    store = data.store
    columns = store.columns_named(saved["features"])
    renamed = swapped = None
    if store.ploidy is not None and (columns < 0).any():  # genotypes: the others by position and alleles
        renamed, swapped = _match_variants(saved["features"], columns, store.feature_names)
    present = np.flatnonzero(columns >= 0)
    M = data.read_columns(columns[present])
    local = np.full(columns.size, -1, dtype=np.int64)
    local[present] = np.arange(present.size)
    matched = _Matched(local, data.shape[1], renamed=renamed, swapped=swapped, ploidy=store.ploidy)
    return _predict_columns(saved, M, matched, sample_ids=sample_ids, fill_missing=fill_missing)


#: An allele as genosift names variants (VCF REF/ALT, PLINK A1/A2): bases, N or the * of a deletion.
_ALLELE = re.compile(r"[ACGTNacgtn*]+")


def _variant_key(name):
    """``(chromosome, position, allele, counted allele)`` of a feature named as genosift names a
    variant, ``CHROM:POS:A:B`` (a leading ``chr`` of the chromosome dropped: PLINK drops it), or None."""
    parts = str(name).rsplit(":", 3)
    if len(parts) != 4 or not parts[1].isdigit() or not all(_ALLELE.fullmatch(a) for a in parts[2:]):
        return None
    chrom = parts[0][3:] if parts[0][:3].lower() == "chr" and len(parts[0]) > 3 else parts[0]
    return chrom, int(parts[1]), parts[2].upper(), parts[3].upper()


def _match_variants(features, columns, data_names):
    """Finds, in place in ``columns``, the model's variants that are absent from the data by name
    (``columns[i] < 0``) among ``data_names`` by chromosome, position and alleles, in the same
    order or swapped; returns the masks of those found in the same order and of those found swapped."""
    same, swapped = np.zeros(columns.size, dtype=bool), np.zeros(columns.size, dtype=bool)
    absent = [(i, key) for i in np.flatnonzero(columns < 0).tolist() if (key := _variant_key(features[i]))]
    if not absent:
        return same, swapped
    index = {}
    for j, name in enumerate(data_names):
        key = _variant_key(name)
        if key is not None:
            index.setdefault(key, j)
    for i, (chrom, pos, a, b) in absent:
        j = index.get((chrom, pos, a, b), -1)
        same[i] = j >= 0
        if j < 0:
            j = index.get((chrom, pos, b, a), -1)
            swapped[i] = j >= 0
        columns[i] = j
    return same, swapped


def _genotype_counts(reduced, swapped, ploidy, model_ploidy, notes):
    """The model's features' values as the model counted them: swapped alleles counted as
    ``ploidy - count``, then counts rescaled from the data's ``ploidy`` to the model's."""
    if swapped.any():
        sparse = sp.issparse(reduced)  # kept so: the model's arithmetic, to the last bit, as on the other format
        reduced = reduced.toarray() if sparse else np.array(reduced, dtype=np.float64)
        reduced[:, swapped] = ploidy - reduced[:, swapped]
        reduced = sp.csr_matrix(reduced) if sparse else reduced
    if model_ploidy is not None and model_ploidy != ploidy:
        reduced = reduced * (model_ploidy / ploidy)
        notes.append(f"The new genotypes count up to {_copies(ploidy)} of an allele and the model's training data "
                     f"up to {_copies(model_ploidy)} (PLINK stores a haploid call as 2 copies): their counts were "
                     f"scaled by {model_ploidy}/{ploidy}.")
    return reduced


def _copies(n):
    return f"{n} cop{'y' if n == 1 else 'ies'}"


@dataclass(frozen=True)
class _Matched:
    """Where the model's features are in the new data: ``columns`` holds, for each of them, its
    column of the data (-1 where absent); ``renamed`` and ``swapped`` mark variants found by
    position and alleles under another name, and with their two alleles swapped, in genotypes of
    ``ploidy``; the data have ``n_columns`` features in all."""

    columns: np.ndarray
    n_columns: int
    renamed: np.ndarray | None = None
    swapped: np.ndarray | None = None
    ploidy: int | None = None


def _predict_columns(saved, X, matched, *, sample_ids, fill_missing):
    """``predict`` once the model's features are ``matched`` to the columns of ``X``."""
    if matched.swapped is None:
        matched = replace(matched, swapped=np.zeros(matched.columns.size, dtype=bool))
    missing_selected, notes = _matching_notes(saved, matched, fill_missing)
    reduced = _model_columns(saved, X, matched, sample_ids, notes)
    return _predicted(saved, _in_trained_form(saved, reduced), sample_ids, missing_selected, notes)


def _used_features(saved):
    """The names of the features the model takes (``load_model``: its 'selected')."""
    return {saved["features"][j] for j in np.asarray(saved["columns"], dtype=np.int64).tolist()}


def _matching_notes(saved, matched, fill_missing):
    """The model's features (of those it uses) absent from the new data, an error unless
    ``fill_missing``; and the notes of how the data's columns matched the model's features."""
    wanted, columns, swapped, renamed = saved["features"], matched.columns, matched.swapped, matched.renamed
    support = np.asarray(saved["columns"], dtype=np.int64)
    selected = _used_features(saved)
    missing = [f for f, j in zip(wanted, columns.tolist()) if j < 0]
    missing_selected = [f for f in missing if f in selected]
    notes = []
    if missing_selected and not fill_missing:
        from ..core.messages import FixError
        from ..core.validation import names_list

        raise FixError(
            f"{len(missing_selected)} feature(s) the model uses are not in the new data: "
            f"{names_list(missing_selected, 10)}. Give data with the same features (for counts such "
            "as k-mers, where an absent feature is zero, pass {fill_missing}).", owner="predict", fill_missing=True)
    if missing:
        notes.append(f"{len(missing)} of the model's {len(wanted)} features are absent from the new data"
                     + (f" ({len(missing_selected)} of them used by the model, set to 0)" if missing_selected else
                        " (none used by the model)") + ".")
    if swapped.any():
        used = int(swapped[support].sum())
        notes.append(f"{int(swapped.sum())} of the model's variants are in the new data with their two alleles "
                     f"swapped (CHROM:POS:B:A for CHROM:POS:A:B, as PLINK 1.9 counts the minor allele), "
                     f"{used} of them used by the model: counted as {matched.ploidy} - count.")
    if renamed is not None and renamed.any():
        notes.append(f"{int(renamed.sum())} of the model's variants are in the new data under another name, matched "
                     "by chromosome (a leading 'chr' aside), position and alleles.")
    extra = matched.n_columns - (len(wanted) - len(missing))
    if extra:
        notes.append(f"{extra} column(s) of the new data are not features of the model and were ignored.")
    return missing_selected, notes


def _model_columns(saved, X, matched, sample_ids, notes):
    """The columns of ``X`` the model uses, in its order (absent ones zero), checked finite and
    counted as the model counted them (genotypes, presence/absence)."""
    wanted = saved["features"]
    support = np.asarray(saved["columns"], dtype=np.int64)
    chosen = matched.columns[support]
    present = chosen >= 0
    taken = np.maximum(chosen, 0)  # absent features: any column, then zeroed (NaN there too)
    if not present.any():  # none of the model's features (X may have no column at all): zeros
        reduced = sp.csr_matrix((X.shape[0], taken.size)) if sp.issparse(X) else np.zeros((X.shape[0], taken.size))
    elif sp.issparse(X):
        reduced = sp.csr_matrix(sp.csr_matrix(X)[:, taken], dtype=np.float64, copy=True)
        reduced.data[~present[reduced.indices]] = 0.0
        reduced.eliminate_zeros()
    else:
        reduced = np.where(present, np.asarray(X, dtype=np.float64)[:, taken], 0.0)
    _check_predict_finite(reduced, np.asarray(wanted, dtype=object)[support], sample_ids)
    if matched.ploidy is not None:
        reduced = _genotype_counts(reduced, matched.swapped[support] & present, matched.ploidy, saved.get("ploidy"),
                                   notes)
    if saved.get("binary"):  # trained on presence/absence: the new data are read the same way
        from ..core.transforms import presence

        reduced = presence(reduced)
    return reduced


def _in_trained_form(saved, reduced):
    """``reduced`` in the form of the data the model was fitted on (dense for a scaler that centres)."""
    model = saved["estimator"]
    scaler = model.steps[0][1] if hasattr(model, "steps") else None
    trained_sparse = saved.get("sparse")  # the form of the data the model was fitted on (None: not told)
    if trained_sparse is not None:
        # One form whatever the input's (a store, a file, a table, counts in the assemblies): that of the
        # model's training data, so that the model sums the same terms in the same order as when it was
        # fitted and gives the same bits from every input: canonical CSR, or a dense array in Fortran order
        # (the order of the model's columns taken from the data, as its pipeline took them when fitted).
        if trained_sparse:
            reduced = sp.csr_matrix(reduced, dtype=np.float64, copy=not sp.issparse(reduced))
            reduced.eliminate_zeros()
            reduced.sort_indices()
        else:
            reduced = (reduced.toarray(order="F") if sp.issparse(reduced)
                       else np.asfortranarray(reduced, dtype=np.float64))
    if sp.issparse(reduced) and getattr(scaler, "with_mean", False):  # a model trained on dense data
        reduced = reduced.toarray()
    return reduced


def _predicted(saved, reduced, sample_ids, missing_selected, notes):
    """The model's predictions of the rows of ``reduced``, the training samples flagged, with the notes."""
    out = predict_frame(saved["estimator"], reduced, sample_ids=sample_ids, classes=saved["classes"])
    predicted = out["predicted"].unique()
    if len(out) > 1 and len(predicted) == 1:
        cause = (f" {len(missing_selected)} of the {len(_used_features(saved))} features the model uses were absent "
                 "and set to 0, which may be why" if missing_selected else "")
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
