"""Which rows of the data are scored: those ``samples`` picks that have a label.

``kept_rows`` (data in memory) and ``store_rows`` (a store) turn ``samples`` and the target
into the increasing row positions kept and their labels: a ``y`` Series indexed by sample id is
matched to the data's ids, and samples without a label are left out with one warning per kind.
"""
from __future__ import annotations

import numpy as np

__all__ = ["by_id", "kept_rows", "store_rows"]


def by_id(y):
    """Whether ``y`` is a pandas Series indexed by sample id (``scores.has_sample_ids``)."""
    from ..scores import has_sample_ids

    return hasattr(y, "reindex") and getattr(y, "ndim", 0) == 1 and has_sample_ids(y)


def kept_rows(ids, n, y, samples, owner, *, named=False):
    """``(rows, y)``: the increasing positions of the rows scored among the ``n`` of the data (None:
    all) and their labels (``y`` as given when it has one per row kept or no row is left out).

    The rows are those ``samples`` picks (``core.samples.sample_rows``, in the data's order) that
    have a label: a Series ``y`` indexed by sample id is matched to the data's ``ids`` (where they
    have ids; the samples it lacks are left out, ids of samples the data lack are an error), and
    the missing labels of such a Series or of a column of the sample table (``named``) are left
    out. Each kind of sample left out is said in one warning."""
    from ..core.samples import sample_rows

    picked = sample_rows(samples, n, ids, owner=owner)
    rows = None if picked is None or picked.size == n else np.sort(picked)
    labelled = None
    if ids is not None and by_id(y):
        y, labelled = _labels_by_id(y, ids, owner)
    elif named and y is not None:
        labelled = ~_missing(y)
        if labelled.all():
            labelled = None
        else:
            _warn_left_out(int((~labelled if rows is None else ~labelled[rows]).sum()), "have no label", owner)
    if labelled is None:
        if rows is None or y is None:
            return rows, y
        if len(y) == n:
            return rows, (y.iloc[rows] if hasattr(y, "iloc") else np.asarray(y)[rows])
        if len(y) == rows.size and not np.array_equal(rows, picked):
            raise ValueError(f"y has one value per sample that 'samples' keeps, but {owner} takes the samples in the "
                             "data's order and 'samples' are in another: give y one value per row of the data, or "
                             "give samples in the data's order.")
        return rows, y
    keep = labelled if rows is None else np.zeros(n, dtype=bool)
    if rows is not None:
        keep[rows] = labelled[rows]
    rows = np.flatnonzero(keep)
    if not rows.size:
        raise ValueError(f"No sample given to {owner} has a label: give the labels of the samples to score.")
    return (None if rows.size == n else rows), np.asarray(y)[rows]


def _labels_by_id(y, ids, owner):
    """``(values, labelled)``: the labels of a Series ``y`` indexed by sample id, one per row of the
    data of ``ids`` (any value where it has none), and which rows have one (listed and not missing)."""
    import pandas as pd

    from ..core.validation import names_list

    index = pd.Index([str(i) for i in y.index])
    if not index.is_unique:
        repeated = sorted(set(index[index.duplicated()]))
        raise ValueError(f"y is a Series whose index repeats sample id(s) {names_list(repeated)}: each sample needs "
                         "one label.")
    data = pd.Index([str(i) for i in ids])
    unknown = index[~index.isin(data)]
    if len(unknown):
        raise ValueError(f"y is a Series indexed by sample id, but {len(unknown)} of its ids are not samples of the "
                         f"data: {names_list(list(unknown))}. Give y the labels of the data's samples only "
                         "(y.drop([...])), or pass the labels as an array in the order of the rows.")
    where = index.get_indexer(data)
    listed = where >= 0
    values = y.to_numpy()[np.where(listed, where, 0)]
    has = listed & ~_missing(values)
    if (~listed).any():
        _warn_left_out(int((~listed).sum()), "are not in y's index", owner)
    if (listed & ~has).any():
        _warn_left_out(int((listed & ~has).sum()), "have a missing label in y", owner)
    return values, has


def _warn_left_out(count, why, owner):
    import warnings

    if count:
        warnings.warn(f"{count} sample(s) {why} and were left out of {owner}; choose the samples with "
                      "samples=[...] to say which are scored.", UserWarning, stacklevel=5)


def store_rows(store, y, samples, owner):
    """``(rows, y)`` of a store (``kept_rows`` over its sample ids, as ``store.rows_kept`` keeps
    them: None for every row); ``y`` naming a column of its sample table stays that name unless
    samples without a label are left out."""
    from .store import rows_kept, store_column

    named = isinstance(y, str)
    whole = named and not _missing(store_column(store, y)).any()  # the column as the store reads it
    if samples is None and not by_id(y) and (whole or not named):
        return None, y
    ids, n = np.asarray(store.sample_ids, dtype=object), store.shape[0]
    if whole:
        return rows_kept(kept_rows(ids, n, None, samples, owner)[0], n), y
    rows, values = kept_rows(ids, n, store_column(store, y) if named else y, samples, owner, named=named)
    return rows_kept(rows, n), values


def _missing(values):
    """Which of ``values`` are missing (NaN, None, pandas' NA), whatever their type."""
    import pandas as pd

    return np.asarray(pd.isna(np.asarray(values, dtype=object)), dtype=bool)
