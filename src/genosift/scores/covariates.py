"""The one check of covariates, for every driver: ``check_covariates`` and ``align_covariates``.

The methods that adjust for covariates (``covariate_methods()``) fit ``y`` on the intercept,
the covariates and one feature at a time. Covariates come as an array (n x c, or 1-D for one)
or a pandas DataFrame / Series; they are checked once, before any data are read, into an
``(n, c)`` float64 array and the names of its columns. Text, categorical and bool columns of a
DataFrame are one-hot encoded, their first level (sorted) dropped: the intercept stands for it.
Nothing here reads files or knows of stores; the drivers pass the covariates of the samples
scored, in the order of their rows (``align_covariates`` puts a table indexed by sample id in
that order).
"""
from __future__ import annotations

import numpy as np

from ..core.messages import FixError, plain
from ..core.validation import names_list, rescale_huge

__all__ = ["COLLINEAR_COVARIATES", "align_covariates", "check_covariates", "covariate_columns", "frame_sample_ids",
           "has_sample_ids", "missing_columns", "prepare_covariates", "with_covariates"]

#: A covariate whose part outside the span of the intercept and the covariates before it has a
#: sum of squares below this share of its own (its R^2 on them above 1 - 1e-10) is collinear.
COLLINEAR_COVARIATES = 1e-10


def _is_frame(value):
    return hasattr(value, "columns") and hasattr(value, "dtypes") and hasattr(value, "index")


def _is_series(value):
    return hasattr(value, "index") and hasattr(value, "dtype") and getattr(value, "ndim", 0) == 1 and \
        hasattr(value, "to_frame")


def _rows_named(rows, labels):
    """The rows, by sample id when ``labels`` (a DataFrame's index) has them, else by position."""
    shown = [plain(labels[i]) if labels is not None else str(int(i)) for i in rows[:5]]
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    return ("sample(s) " if labels is not None else "row(s) ") + ", ".join(shown) + more


def _missing_error(columns, rows, labels, owner):
    return FixError(
        f"The covariates have missing or infinite values in column(s) {names_list(columns)}, at "
        f"{_rows_named(rows, labels)}. Covariates are never imputed: fill those values in, leave out "
        "those samples, or leave the column(s) out of {covariates}.",
        owner=owner, covariates=FixError.ANY)


def _one_hot(name, values, owner):
    """``(columns, names)`` of a categorical column: one 0/1 column per level but the first (sorted)."""
    values = np.asarray(values, dtype=object)
    try:
        levels = sorted(set(values.tolist()))
    except TypeError:  # levels of mixed types: in the order of their text
        levels = sorted(set(values.tolist()), key=str)
    if len(levels) < 2:
        raise _constant_error([name], owner, f" (every sample has the level {plain(levels[0])})")
    columns = [(values == level).astype(np.float64) for level in levels[1:]]
    return columns, [f"{name}={level}" for level in levels[1:]]


def _frame_columns(frame, owner):
    """``(matrix, names)`` of a DataFrame: numbers as float64, the rest one-hot encoded; a
    missing or infinite value anywhere is an error naming its columns and samples."""
    import pandas as pd

    from ..core.validation import is_numeric_dtype

    labels = frame.index if has_sample_ids(frame) else None
    numeric = {col: is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for col, t in frame.dtypes.items()}
    values = {col: frame[col].to_numpy(dtype=np.float64, na_value=np.nan) if numeric[col]
              else frame[col].to_numpy(dtype=object) for col in frame.columns}
    bad = np.column_stack([~np.isfinite(v) if numeric[c] else pd.isna(v) for c, v in values.items()]) \
        if len(values) else np.zeros((len(frame), 0), dtype=bool)
    if bad.any():
        raise _missing_error([str(c) for c, b in zip(frame.columns, bad.any(axis=0)) if b],
                             np.flatnonzero(bad.any(axis=1)), labels, owner)
    columns, names = [], []
    for col, v in values.items():
        more, more_names = ([v], [str(col)]) if numeric[col] else _one_hot(str(col), v, owner)
        columns += more
        names += more_names
    return (np.column_stack(columns) if columns else np.empty((len(frame), 0))), names


def _array_columns(values, owner):
    """``(matrix, names)`` of an array-like of numbers (1-D: one covariate)."""
    import scipy.sparse as sp

    if sp.issparse(values):
        values = values.toarray()
    raw = np.asarray(values)
    if raw.dtype.kind not in "biuf":
        try:
            raw = raw.astype(np.float64)
        except (TypeError, ValueError):
            raise FixError(
                f"The covariates hold values that are not numbers (an array of {raw.dtype}, e.g. "
                f"{plain(next((v for v in raw.ravel() if not _is_number(v)), raw.ravel()[0]))}). Pass a pandas "
                "DataFrame as {covariates}: its text and categorical columns are one-hot encoded.",
                owner=owner, covariates=FixError.ANY) from None
    if raw.ndim == 1:
        raw = raw[:, None]
    if raw.ndim != 2:
        raise FixError(f"The covariates must be a table of samples x covariates (2-D) or one covariate (1-D); "
                       f"got an array of shape {raw.shape}. Pass {{covariates}} as an (n_samples, c) array.",
                       owner=owner, covariates=FixError.ANY)
    return raw.astype(np.float64), [f"z{j}" for j in range(raw.shape[1])]


def _is_number(value):
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _constant_error(columns, owner, detail=""):
    return FixError(
        f"The covariate(s) {names_list(columns)} are constant{detail}: the model has an intercept "
        "already, so a constant adds nothing and cannot be fitted. Leave them out of {covariates}.",
        owner=owner, covariates=FixError.ANY)


def _collinear(Z, names, owner):
    """Raise the error naming the first covariate that is a linear combination of the intercept
    and the covariates before it, and the covariates it combines (an incremental rank test)."""
    n, c = Z.shape
    S = (Z - Z.mean(axis=0)) / Z.std(axis=0)  # centred: the intercept is out of every column
    Q = np.empty((n, 0))
    kept = []
    for j in range(c):
        r = S[:, j].copy()
        for _ in range(2):
            r -= Q @ (Q.T @ r)
        if r @ r > COLLINEAR_COVARIATES * (S[:, j] @ S[:, j]):
            Q = np.column_stack([Q, r / np.sqrt(r @ r)])
            kept.append(j)
            continue
        if not kept:  # a centred column with nothing left: constant, caught before
            raise _constant_error([names[j]], owner)
        coef = np.linalg.lstsq(S[:, kept], S[:, j], rcond=None)[0]
        involved = [names[k] for k, b in zip(kept, coef) if abs(b) > 1e-6]
        raise FixError(
            f"The covariate {names[j]!r} is a linear combination of the intercept and "
            f"{names_list(involved, 10)}: collinear covariates have no separate coefficients. Leave one "
            "of them out of {covariates} (one-hot encoded columns drop the first level of each already; "
            "a column that sums others, or a second coding of the same factor, is the usual cause).",
            owner=owner, covariates=FixError.ANY)


def check_covariates(covariates, n_samples, *, owner="score"):
    """Covariates as an ``(n_samples, c)`` float64 array and the names of its columns.

    Parameters
    ----------
    covariates : array-like (n_samples, c) or (n_samples,), pandas DataFrame or Series, or None
        Numbers, one row per sample in the order of the samples scored. A DataFrame's numeric
        columns are taken as float64; its categorical, text (object, string) and bool columns
        are one-hot encoded, the first level (sorted) dropped, the columns named ``col=level``.
        Array columns are named ``z0, z1, ...``; a Series is one column named as the Series.
    n_samples : int
        The number of samples scored.
    owner : str
        The function whose ``covariates`` parameter this is, for the messages.

    Returns
    -------
    (ndarray or None, list of str)
        ``(None, [])`` for None or for covariates without columns.

    Raises
    ------
    ValueError
        (a ``FixError``) A length other than ``n_samples`` (both are named); NaN or infinity
        (naming the columns and the rows); text in an array of numbers; a constant column (the
        model has an intercept); a column that is a linear combination of the intercept and
        others (naming the columns involved).

    Examples
    --------
    >>> import pandas as pd
    >>> Z, names = check_covariates(pd.DataFrame({"age": [30, 41, 52, 38], "site": list("baba")}), 4)
    >>> names, Z[:, 1].tolist()
    (['age', 'site=b'], [1.0, 0.0, 1.0, 0.0])
    """
    if covariates is None:
        return None, []
    if _is_series(covariates) and not _is_frame(covariates):
        covariates = covariates.to_frame(name=covariates.name if covariates.name is not None else "z0")
    if _is_frame(covariates):
        Z, names = _frame_columns(covariates, owner)
    else:
        Z, names = _array_columns(covariates, owner)
    if Z.shape[0] != n_samples:
        raise FixError(f"The covariates have {Z.shape[0]} rows, but {n_samples} samples are scored. Give "
                       "{covariates} one row per sample scored, in the order of the samples (or a DataFrame "
                       "indexed by sample id where the samples have ids).", owner=owner, covariates=FixError.ANY)
    if Z.shape[1] == 0:
        return None, []
    bad = ~np.isfinite(Z)
    if bad.any():
        raise _missing_error([names[j] for j in np.flatnonzero(bad.any(axis=0))], np.flatnonzero(bad.any(axis=1)),
                             None, owner)
    constant = [names[j] for j in np.flatnonzero((Z == Z[:1]).all(axis=0))]
    if constant:
        raise _constant_error(constant, owner)
    # columns too large to square (a covariate of 1e308) divided by a power of two, exactly: the
    # models hold an intercept and a coefficient per covariate, so the features' tests do not change
    Z = rescale_huge(Z)
    _collinear(Z, names, owner)
    return np.ascontiguousarray(Z), names


def has_sample_ids(frame):
    """Whether a pandas DataFrame or Series is indexed by sample ids: an index of labels (text,
    categories), not of integers. An integer index, the default ``RangeIndex`` or the positions
    left by taking rows (``frame.iloc[train]``, as cross-validation does), means row positions."""
    import pandas as pd

    index = getattr(frame, "index", None)
    return isinstance(index, pd.Index) and not pd.api.types.is_integer_dtype(index.dtype)


def frame_sample_ids(X):
    """The sample ids of a pandas DataFrame ``X``: its index when of labels (``has_sample_ids``),
    else None (no ids: the covariates' rows are taken in the order of ``X``'s rows)."""
    if not (_is_frame(X) and type(X).__module__.partition(".")[0] == "pandas") or not has_sample_ids(X):
        return None
    return np.asarray(X.index, dtype=object)


def align_covariates(covariates, sample_ids, *, owner="score"):
    """``covariates`` in the order of ``sample_ids`` when it is a DataFrame or Series indexed by
    sample id (see ``has_sample_ids``); anything else as it is (its rows in the samples' order).

    Every sample scored needs a row; rows of other samples are left out. Missing ids are an
    error naming a few of them.
    """
    import pandas as pd

    if sample_ids is None or not (_is_frame(covariates) or _is_series(covariates)) or not has_sample_ids(covariates):
        return covariates
    ids = pd.Index([str(s) for s in sample_ids])
    index = pd.Index([str(s) for s in covariates.index])
    if not index.is_unique:
        dup = sorted(set(index[index.duplicated()]))
        raise FixError(f"The covariates list sample id(s) {names_list(dup)} more than once; each sample needs "
                       "one row of {covariates}.", owner=owner, covariates=FixError.ANY)
    missing = ids[~ids.isin(index)]
    if len(missing):
        raise FixError(
            f"The covariates are indexed by sample id, but {len(missing)} of the {len(ids)} samples scored have "
            f"no row: {names_list(list(missing))}. Give {{covariates}} a row for every sample scored (or pass "
            "them in the order of the samples, without sample ids).", owner=owner, covariates=FixError.ANY)
    aligned = covariates.set_axis(index, axis=0).loc[ids]
    return aligned.set_axis(pd.Index(list(sample_ids)), axis=0)


def missing_columns(obs, names):
    """``(have, missing)``: the column names of the per-sample table ``obs`` (a DataFrame, or
    None), and those of ``names`` it lacks."""
    have = [] if obs is None else [str(c) for c in obs.columns]
    return have, [c for c in names if c not in have]


def covariate_columns(covariates, obs, *, what, owner="score"):
    """The columns of the per-sample table ``obs`` (a DataFrame, or None) that ``covariates``
    names when it is a list of column names (or one name); any other ``covariates`` as it is.
    ``what`` names the table's owner in the message for a name it lacks."""
    if isinstance(covariates, str):
        covariates = [covariates]
    if not (isinstance(covariates, (list, tuple)) and covariates and all(isinstance(c, str) for c in covariates)):
        return covariates
    have, missing = missing_columns(obs, covariates)
    if missing:
        raise FixError(f"The covariates name column(s) {names_list(missing)} that {what} does not have; its "
                       f"per-sample columns: {names_list(have, 20) or 'none'}. Name columns it has in "
                       "{covariates}, or pass the covariates as an array or a DataFrame.",
                       owner=owner, covariates=FixError.ANY)
    return obs[list(covariates)]


def prepare_covariates(covariates, n_samples, *, rows=None, sample_ids=None, owner="score"):
    """``check_covariates`` of the covariates of the samples scored: the ``rows`` kept (sorted
    indices, None for all) of ``n_samples``.

    A DataFrame or Series indexed by sample id is matched to ``sample_ids`` (of all
    ``n_samples``; None where the samples have no ids); other covariates have one row per sample
    (the kept rows are taken from them) or one per sample kept.
    """
    if covariates is None:
        return None, []
    m = n_samples if rows is None else len(rows)
    if sample_ids is not None:
        ids = np.asarray(sample_ids, dtype=object)
        aligned = align_covariates(covariates, ids if rows is None else ids[rows], owner=owner)
        if aligned is not covariates:
            return check_covariates(aligned, m, owner=owner)
    if rows is not None and m != n_samples and len(covariates) == n_samples:
        covariates = covariates.iloc[rows] if hasattr(covariates, "iloc") else np.asarray(covariates)[rows]
    return check_covariates(covariates, m, owner=owner)


def with_covariates(result, names):
    """``result`` (a ``ScoreResult``) recording the names of the covariates it was adjusted for."""
    from dataclasses import replace

    return result if not names else replace(result, covariates=tuple(str(n) for n in names))
