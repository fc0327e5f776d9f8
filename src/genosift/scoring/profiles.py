"""How each feature differs: its mean and prevalence per class, and the direction of its effect.

A score says how strongly a feature tells the classes apart, not which way. A profile
(``genosift.profile``, through the one dispatch ``sources.as_source``) gives,
for every feature, the mean in each class, the prevalence in each class (the share of the class's
samples with x > 0: carriers of a k-mer or a gene) and a signed effect: for two classes the
difference of the class means (``classes[1]`` minus ``classes[0]``, the convention of the signed
statistics); for several classes the class with the highest mean; for a numeric target the
overall mean and prevalence and the sign of the Pearson correlation.

The numbers come from mergeable per-class sums (``genosift.stats.ClassProfile`` and
``TargetProfile``), so every input form gives them in one pass and bounded memory: arrays,
sparse matrices (never densified), DataFrames, streams of row chunks, stores (read in row
chunks) and Dask collections (one task per block of rows, merged in a tree).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.validation import as_labels, as_matrix, is_continuous, names_list, numeric_target

__all__ = ["KINDS", "Profile", "block_records", "chunk_statistic", "finish_profile", "profile_dask", "profile_matrix",
           "profile_store", "profile_stream", "records_profile", "resolve_kind", "statistic_for"]

KINDS = ("auto", "classes", "numeric")


@dataclass(frozen=True, eq=False)
class Profile:
    """Per-feature means and prevalence, by class, with the signed effect of each feature.

    Attributes
    ----------
    kind : {"classes", "numeric", "none"}
        Class labels, a numeric target, or no target (one group of all samples).
    classes : ndarray or None
        The sorted class labels (``kind == "classes"``).
    count : ndarray
        Samples per class (one value for "numeric" and "none").
    means : ndarray (k, p)
        Mean of every feature in each class (k = 1 for "numeric" and "none").
    prevalence : ndarray (k, p)
        Share of each class's samples with x > 0.
    effect : ndarray (p,) or None
        Two classes: ``means[1] - means[0]``; numeric target: the sign of the Pearson correlation
        (1, -1, 0; NaN for a constant feature); otherwise None.
    highest : ndarray (p,) of object or None
        Several classes: the class with the highest mean (None where all class means are equal).
    feature_names : ndarray (p,)
    """

    kind: str
    classes: object
    count: np.ndarray
    means: np.ndarray
    prevalence: np.ndarray
    effect: object
    highest: object
    feature_names: np.ndarray

    def __repr__(self):
        classes = "" if self.classes is None else f", classes=[{names_list(list(self.classes), limit=4)}]"
        return (f"Profile(kind={self.kind!r}{classes}, n_samples={int(np.sum(self.count))}, "
                f"n_features={self.n_features})")

    @property
    def n_features(self):
        return self.means.shape[1]

    @property
    def effect_column(self):
        """The name of the signed column: ``diff_means``, ``correlation_sign``, ``highest_mean`` or None."""
        if self.kind == "numeric":
            return "correlation_sign"
        if self.kind == "classes":
            return "diff_means" if len(self.classes) == 2 else "highest_mean"
        return None

    def columns(self, rows=None):
        """The columns the ranking tables get, in feature order, or of the features ``rows`` (indices)
        in that order (a DataFrame without ``feature``).

        Two classes: ``mean_<a>``, ``mean_<b>``, ``diff_means``, ``prevalence_<a>``,
        ``prevalence_<b>``; several classes: the ``mean_<class>`` columns, ``highest_mean``, the
        ``prevalence_<class>`` columns; a numeric target: ``mean``, ``correlation_sign``,
        ``prevalence``; no target: ``mean``, ``prevalence``.
        """
        import pandas as pd

        take = (lambda values: values) if rows is None else (lambda values: values[rows])
        if self.kind == "classes":
            labels = [_label_text(c) for c in self.classes]
            out = {f"mean_{c}": take(self.means[i]) for i, c in enumerate(labels)}
            if len(labels) == 2:
                out["diff_means"] = take(self.effect)
            else:
                out["highest_mean"] = take(self.highest)
            out.update({f"prevalence_{c}": take(self.prevalence[i]) for i, c in enumerate(labels)})
        else:
            out = {"mean": take(self.means[0])}
            if self.kind == "numeric":
                out["correlation_sign"] = take(self.effect)
            out["prevalence"] = take(self.prevalence[0])
        return pd.DataFrame(out)

    def close(self):
        """Nothing to release: the profile is in memory (a store's ``StoredProfile`` has a file)."""

    def to_frame(self):
        """``feature`` and the columns of :meth:`columns`, one row per feature in feature order."""
        frame = self.columns()
        frame.insert(0, "feature", self.feature_names)
        return frame

    def direction(self, j):
        """A few words on which way feature ``j`` goes: ``higher in AML``, ``r > 0``..."""
        if self.kind == "numeric":
            sign = self.effect[j]
            return "" if not np.isfinite(sign) else {1.0: "r > 0", -1.0: "r < 0"}.get(float(sign), "r = 0")
        if self.kind != "classes":
            return ""
        if len(self.classes) == 2:
            d = self.effect[j]
            if not np.isfinite(d) or d == 0:
                return "" if not np.isfinite(d) else "equal means"
            return f"higher in {_label_text(self.classes[1] if d > 0 else self.classes[0])}"
        top = self.highest[j]
        return "" if top is None else f"highest in {top}"


def _label_text(label):
    value = label.item() if isinstance(label, np.generic) else label
    return str(value)


def kind_for(method, y):
    """The profile that suits a scoring method and its target: classes, numeric, or none.

    Class methods get per-class means; a regression method on a numeric target of more than two
    values gets the correlation's sign (two values, or two text labels: the two classes);
    ``any`` methods follow the target as ``make_target`` reads it.
    """
    from ..scores import get_method

    spec = get_method(method)
    if spec.task == "unsupervised" or y is None:
        return "none"
    y = np.asarray(y)
    if spec.task == "classification":
        return "classes"
    values = numeric_target(y)
    if values is None:
        return "classes"
    if spec.task == "any":
        from sklearn.utils.multiclass import type_of_target

        return "classes" if type_of_target(y) in ("binary", "multiclass") else "numeric"
    return "numeric" if np.unique(values).size > 2 else "classes"


def finish_profile(stats, kind, names):
    """A ``Profile`` from merged statistics."""
    from ..core.validation import default_feature_names

    names = default_feature_names(stats.n_features) if names is None else np.asarray(names, dtype=object)
    classes, count, means, prevalence, effect, top = _arrays(stats, kind)
    highest = None if top is None else _highest_labels(classes, top)
    return Profile(kind, classes, count, means, prevalence, effect, highest, names)


def _arrays(stats, kind):
    """``(classes, count, means, prevalence, effect, top)`` of a profile from merged statistics;
    ``top``: with several classes, the index of the class with the highest mean (``_highest_class``)."""
    if kind == "numeric":
        return (None, np.array([stats.n_samples]), stats.means()[None, :], stats.prevalence()[None, :],
                stats.correlation_sign(), None)
    means, prevalence = stats.means(), stats.prevalence()
    effect = top = None
    if kind == "classes":
        if len(stats.classes) == 2:
            with np.errstate(invalid="ignore", over="ignore"):
                effect = means[1] - means[0]
        else:
            top = _highest_class(means)
    return stats.classes if kind == "classes" else None, stats.count.copy(), means, prevalence, effect, top


def _highest_class(means):
    """The class (row) with the highest mean of each feature (column), -1 where all are equal."""
    top = np.argmax(means, axis=0)
    top[(means == means[:1]).all(axis=0)] = -1
    return top


def _highest_labels(classes, codes):
    labels = np.array([None] + [_label_text(c) for c in classes], dtype=object)
    return labels[np.asarray(codes, dtype=np.intp) + 1]


def records_profile(kind, classes, count, records, names=None):
    """The ``Profile`` of ``records`` (rows of ``block_records``) of a profile of that ``kind``,
    ``classes`` and per-class ``count``."""
    k = (records.shape[1] - 1) // 2
    means, prevalence, last = records[:, :k].T, records[:, k:2 * k].T, records[:, 2 * k]
    effect = highest = None
    if kind == "numeric" or kind == "classes" and len(classes) == 2:
        effect = last.copy()
    elif kind == "classes":
        highest = _highest_labels(classes, last)
    names = np.empty(records.shape[0], dtype=object) if names is None else names
    return Profile(kind, classes, count, np.ascontiguousarray(means), np.ascontiguousarray(prevalence), effect,
                   highest, names)


def statistic_for(kind):
    from ..stats import ClassProfile, TargetProfile

    return TargetProfile if kind == "numeric" else ClassProfile


def _chunk_target(kind, y, n):
    """``y`` of one chunk as the statistic takes it: labels, numbers, or None."""
    if kind == "none":
        return None
    y = as_labels(y, n)
    if kind == "numeric":
        values = numeric_target(y)
        if values is None:
            raise ValueError("kind='numeric' needs numbers in y; these labels are text. Pass "
                             "kind='classes' for per-class means.")
        return values
    return y


def chunk_statistic(X, y, stat, kind):
    """The statistic of one chunk (a Dask task or a store's chunk); an empty chunk gives the empty value."""
    if X.shape[0] == 0:
        return stat.empty()
    return stat.from_chunk(X, _chunk_target(kind, y, X.shape[0]))


def profile_matrix(M, y, target, names):
    """The profile of a matrix in memory (``as_matrix``'s)."""
    kind = resolve_kind(target, y, M.shape[0])
    return finish_profile(chunk_statistic(M, y, statistic_for(kind), kind), kind, names)


def profile_stream(chunks, target, feature_names=None):
    """The profile of a stream of ``(X_chunk, y_chunk)`` row chunks (``target`` "auto" means classes)."""
    from ..core.engine import accumulate

    kind = "classes" if target == "auto" else target
    stat = statistic_for(kind)
    first = {}

    def summarize(chunk):
        Xc, yc = chunk
        M, names = as_matrix(Xc) if np.shape(Xc)[0] else (Xc, None)
        first.setdefault("names", names)
        return chunk_statistic(M, yc, stat, kind)

    stats = accumulate(chunks, summarize, stat.empty())
    if stats.n_features == 0:
        raise ValueError("The chunk stream was empty: no rows to profile.")
    return finish_profile(stats, kind, feature_names if feature_names is not None else first.get("names"))


def block_records(X, y, kind):
    """The profile of one block of whole columns (every sample of some features) as records, one
    row of float64 per feature: the means (one per class, or one), the prevalences, then the
    effect (``diff_means`` or ``correlation_sign``; with several classes the index of the class
    of ``highest_mean``, -1 for none; 0 without a target). Returns ``(records, classes, count)``;
    ``records_profile`` gives the ``Profile`` back. ``y``: labels for ``kind`` "classes", numbers
    for "numeric", None for "none"."""
    classes, count, means, prevalence, effect, top = _arrays(chunk_statistic(X, y, statistic_for(kind), kind), kind)
    k = means.shape[0]
    out = np.empty((means.shape[1], 2 * k + 1))
    out[:, :k] = means.T
    out[:, k:2 * k] = prevalence.T
    out[:, 2 * k] = effect if effect is not None else top if top is not None else 0.0
    return out, classes, count


def resolve_kind(target, y, n):
    """The kind of profile for ``y`` (all of it at hand)."""
    if y is None:
        if target != "auto":
            raise ValueError(f"kind={target!r} needs y: pass the labels or target values.")
        return "none"
    if target != "auto":
        return target
    labels = as_labels(y, n)
    return "numeric" if is_continuous(labels) else "classes"


def profile_store(source, target):
    """One pass over the row chunks of the opened store of ``source`` (a ``StoreSource``: only its
    increasing ``rows``, all if None, within its memory budget), merged statistics. Its ``y``: one
    value per row of the store or per row kept, or the name of a column of its sample table."""
    from ..core.engine import accumulate, check_budget
    from ..sources.store import store_column
    from .store import labelled_chunks

    store, y, rows, feature_names = source.X, source.y, source.rows, source.feature_names
    budget = check_budget(source.chunk_bytes, "profile")
    n = store.shape[0]
    m = n if rows is None else rows.size
    if isinstance(y, str):
        y = store_column(store, y)
    if y is not None:
        y = as_labels(y, len(y))
        if rows is not None and len(y) == n:
            y = y[rows]
        y = as_labels(y, m)
    kind = resolve_kind(target, y, m)
    stat = statistic_for(kind)
    stats = accumulate(labelled_chunks(store, y, budget, rows), lambda c: chunk_statistic(*c, stat, kind), stat.empty())
    names = feature_names if feature_names is not None else store.feature_names
    return finish_profile(stats, kind, names)


def profile_dask(X, y, target, feature_names=None, scheduler=None):
    """One task per block of rows (all features), the statistics merged in a tree of tasks."""
    from .dask import compute, merge_tree, opened, row_block_tasks, with_target

    with opened(scheduler) as chosen:
        X, names, y = with_target(X, y, feature_names, chosen)
        n, p = X.shape
        kind = resolve_kind(target, y, n)
        labels = None if y is None else _chunk_target(kind, y, n)
        stat = statistic_for(kind)
        parts = row_block_tasks(X, labels, chunk_statistic, stat, kind)
        k = 1 if labels is None or kind == "numeric" else len(np.unique(labels))
        stats = compute(merge_tree(parts, 2 * k, p), chosen)
    return finish_profile(stats, kind, names)
