"""``evaluate`` of a store in bounded memory: every ranking scored from the store, out of core,
and only the features that some ranking puts near its top read into memory.

For a method whose score of a feature depends on that feature's values alone (every "rows" and
"blocks" method without a step across all features, ``Method.combine``), a fold's top k over the
features read is its top k over every feature, in the same order (ties go to the lower feature
index in both, and the columns read keep the store's order). So the folds select, fit and
predict as they would with the whole matrix in memory, and the final model is the same; the
final ranking of every feature (``scores.tsv``) and its class profile come from the store.
Memory: the budget of the store's reads, the per-feature arrays of one ranking, and the samples
x features read (at most ``(folds + 1) * max(ks)`` features).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .results import TOP_VALUES  # the final ranking's best features are read: their values are written


@dataclass
class Screened:
    """What ``evaluate`` needs from the store besides the features it holds in memory."""

    columns: np.ndarray   # the store's features that the matrix in memory holds, increasing
    tested: list          # per fold, the features its training samples tested (all, without a filter)
    result: object        # the ScoreResult of every feature on the final model's training samples
    profile: object       # their class profile (a StoredProfile from a store's column copy): close it


def can_screen(spec):
    """Whether a method's top features can be found from the store first (see the module)."""
    return spec.streaming in ("rows", "blocks") and spec.combine is None


def evaluate_store(data, y, asked, *, unlabelled=None, folder=None):
    """``evaluate`` of the store rows ``data`` (a ``sources.StoreRows``, read within its budget)
    as ``asked`` (a ``workflow.evaluation.Asked``), never holding the store.

    Each fold's ranking and the final one are scored from the store (``score_store`` on the rows
    of the fold); the features in the top ``max(ks)`` of any of them (and the final top
    ``TOP_VALUES``) are read, for every sample, and ``evaluate`` runs on them
    (``asked.feature_names`` by default the store's); ``unlabelled`` is store rows too;
    ``folder`` holds the profile's temporary file.

    Returns
    -------
    (Evaluation, matrix, matrix or None)
        The evaluation, the features read of the labelled samples (``write_results`` takes it as
        ``X``), and of the unlabelled ones.
    """
    from .. import get_method
    from ..scores import check_af, check_options, refuse_covariates
    from ..scoring.forms import score_and_profile, score_source
    from ..selectors import check_ks
    from ..selectors.score_funcs import covariate_frame
    from .evaluation import evaluate_asked, evaluation_splits

    spec = get_method(asked.method)
    if not can_screen(spec):
        raise ValueError(f"Method '{spec.name}' scores each feature with the others (all of them pooled); evaluate "
                         "needs the whole matrix in memory for it: pass genosift.sources.in_memory(rows) to "
                         "evaluate.")
    store = data.store
    if asked.binary and not store.binary:  # scored as presence/absence (evaluate reads X so itself)
        from ..io import open_store

        store = open_store(store.path, binary=True)
    scored = replace(data, store=store)
    y = np.asarray(y)
    n, p = len(y), store.shape[1]
    ks = check_ks(asked.ks, p, "evaluate").tolist()
    covariates = covariate_frame(asked.covariates, n, "evaluate")
    splits, _ = evaluation_splits(y, cv=asked.cv, groups=asked.groups, validation=asked.validation,
                                  metric=asked.metric, random_state=asked.random_state)
    validation = asked.validation
    train = np.arange(n) if validation is None else np.flatnonzero(~np.asarray(validation, dtype=bool))
    opts = check_options(spec, asked.method_options or {})
    bounds = check_af(asked.min_af, asked.max_af, "evaluate")
    if covariates is not None:
        refuse_covariates(spec, "evaluate")
    keep = max(max(ks), TOP_VALUES)
    tops, tested = [], []
    for fold_train, _ in splits:
        res = score_source(_source(scored, fold_train, y, covariates), spec, opts, bounds)
        tops.append(res.top_indices(keep))
        tested.append(res.n_tested)
        del res
    # the final ranking and its class profile, in one pass over the store
    result, profile = score_and_profile(_source(scored, train, y, covariates), spec, opts, bounds, kind="classes",
                                        folder=folder)
    tops.append(result.ranking[:keep])
    columns = np.unique(np.concatenate(tops))
    screened = Screened(columns, tested, result, profile)
    try:
        X = data.read_columns(columns)
        others = None if unlabelled is None else unlabelled.read_columns(columns)
        names = asked.feature_names
        names = np.asarray((store.names_loader() if names is None else names)[columns], dtype=object)
        ev = evaluate_asked(X, y, replace(asked, method=spec.name, ks=ks, covariates=covariates, feature_names=names),
                            unlabelled=others, screened=screened)
        ev.notes.append(f"The store stayed on disk: every ranking was scored from it, and the {columns.size:,} "
                        f"features in the top {keep:,} of one of them (of {p:,}) were read for the models.")
    except BaseException:
        close = getattr(profile, "close", None)  # a StoredProfile's temporary file
        if close is not None:
            close()
        raise
    return ev, X, others


def _in_store_order(where, idx):
    """The store rows of the labelled samples ``idx``, increasing, and those samples in that order."""
    order = np.argsort(where[idx], kind="stable")
    return where[idx][order], idx[order]


def _source(data, idx, y, covariates):
    """The ``Source`` of the store rows ``data`` of the labelled samples ``idx`` (in the store's order),
    read within the rows' budget."""
    rows, idx = _in_store_order(data.rows, idx)
    return replace(data, rows=rows).source(y[idx], covariates=None if covariates is None else covariates.iloc[idx])
