"""Input checks shared by every entry point: one place, one message format.

Messages name the problem and the fix, e.g. ``The 'k' parameter of SelectKBest must be an int in
[1, n_features]. Got 0 instead.``
"""
from __future__ import annotations

import functools
import inspect
import numbers

import numpy as np
import scipy.sparse as sp

from .environment import check_thread_setting
from .messages import Spelled, plain

check_thread_setting()  # before numba is first imported (just below): its own error names no setting
from .sparse_check import check_sparse_matrix  # noqa: E402


def param_error(param, owner, expected, got, error=ValueError):
    """A ``ValueError`` (or ``error``: ``TypeError`` for a value of the wrong type) in the project's
    one format for a bad parameter value."""
    return error(f"The '{param}' parameter of {owner} must be {expected}. Got {plain(got)} instead.")


#: The parameters renamed for one meaning per name (docs/glossary.md): old -> (new, what it is).
#: ``alpha`` is renamed for the elastic net only; everywhere else it is a significance level.
#: A parameter that moved into an argument's object is named ``Class.field`` (the jobs' memory
#: budget and scheduler travel with their ``Samples``; ``genosift.score`` still takes both).
RENAMED = {
    "alpha": ("l1_ratio", "the mixing of the lasso and ridge penalties, as scikit-learn names it; 'alpha' is only "
                          "a significance level in genosift"),
    "score_params": ("method_options", "the scoring method's options, a dict, as everywhere in genosift"),
    "relevance_params": ("method_options", "the relevance method's options, a dict, as everywhere in genosift"),
    "threads": ("n_jobs", "the threads of the run, as scikit-learn names them"),
    "target": ("kind", "what y is: 'classes', 'numeric' or 'auto'; a target in genosift is the labels' column"),
    "metric": ("scoring", "the measure of the held-out predictions that picks k, as scikit-learn names it; 'metric' is "
                          "the distance between samples of principal_coordinates"),
    "chunk_bytes": ("Samples.chunk_bytes", "the memory budget of reading and scoring them"),
    "scheduler": ("Samples.scheduler", "the Dask cluster a store is scored on"),
}


def _refusal(old, owner, value):
    """What a call of ``owner`` that gives the old parameter ``old`` (``RENAMED``) is told: the new
    name, or the object whose field it is now, with the call to write."""
    new, meaning = RENAMED[old]
    if "." not in new:
        return f"The '{old}' parameter of {owner} is called '{new}' ({meaning}). Give {new}={plain(value)} instead."
    into, name = new.split(".")
    return (f"The '{old}' parameter of {owner} is a field of the {into} now ({meaning}): give "
            f"{into}(..., {name}={plain(value)}).")


def renamed_parameters(*old_names):
    """Decorate a public function (or an estimator's ``__init__``) whose parameters ``old_names``
    were renamed, or moved into the object of one of its arguments (``RENAMED``): a call with an
    old name is a ``TypeError`` naming the fix (not Python's bare "unexpected keyword argument").
    The signature stays the function's own (``inspect.signature`` follows ``__wrapped__``), so
    scikit-learn sees only the new names."""
    renamed = {old: RENAMED[old] for old in old_names}

    def decorate(func):
        owner = func.__qualname__.removesuffix(".__init__")

        @functools.wraps(func)
        def refusing(*args, **kwargs):
            for old in renamed.keys() & kwargs.keys():
                raise TypeError(_refusal(old, owner, kwargs[old]))
            return func(*args, **kwargs)
        return refusing
    return decorate


def options_in_one_dict(func):
    """Decorate a function taking a method's options as ``method_options`` (one dict): keywords it
    does not know are a ``TypeError`` saying where a method's options go, with the call to write."""
    parameters = inspect.signature(func).parameters

    @functools.wraps(func)
    def checked(*args, **kwargs):
        unknown = {k: v for k, v in kwargs.items() if k not in parameters}
        if unknown:
            raise TypeError(f"{func.__name__}() got unknown keyword(s) {sorted(unknown)}: a method's options go in "
                            f"one dict, method_options={plain(unknown)}; the parameters of {func.__name__} are "
                            f"{', '.join(parameters)}.")
        return func(*args, **kwargs)
    return checked


def is_int(value):
    """An integer (Python or numpy) that is not a bool: what an int parameter accepts."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value):
    """A real number (int or float, Python or numpy) that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_options_dict(options, param, owner):
    """``options`` (a method's options) is a dict or None; else the one-format error naming ``param``."""
    if options is not None and not isinstance(options, dict):
        raise param_error(param, owner, "a dict or None", options)


class UsageError(ValueError):
    """Options that do not fit together (the command line exits with code 2, as for a bad option)."""


class FixUsageError(Spelled, UsageError):
    """A ``UsageError`` whose text names parameters in ``{name}`` fields (see ``Spelled``): each
    caller reads them as it spells them (``meta=`` in Python, ``--meta`` on the command line)."""


def names_list(names, limit=5):
    """``'a', 'b' and 3 more``: the first ``limit`` of the sequence ``names``, quoted, for messages."""
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    more = len(names) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def closest_names(name, candidates, limit=3):
    """``" (closest: 'a', 'b')"``: the candidates most like ``name`` (by similarity of their text),
    for a message about a name that is not among them; empty when none is close.

    >>> closest_names("S05a", ["S05", "S06", "T11"])
    " (closest: 'S05')"
    """
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=limit, cutoff=0.6)
    return f" (closest: {names_list(close)})" if close else ""


def names_with_closest(names, candidates, limit=5):
    """``'S05a' (closest: 'S05'), 'x' and 3 more``: the first ``limit`` of ``names`` that are not
    among ``candidates``, each with the candidates most like it, for a message.

    >>> names_with_closest(["S05a", "zz"], ["S05", "S06"])
    "'S05a' (closest: 'S05'), 'zz'"
    """
    shown = ", ".join(f"{str(n)!r}{closest_names(n, candidates)}" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def default_feature_names(n_features, columns=None):
    """``x0, x1, ...``, the names scikit-learn gives unnamed columns (of ``columns`` only, if given)."""
    return np.array([f"x{j}" for j in (range(n_features) if columns is None else columns)], dtype=object)


def as_matrix(X, *, keep_csc=False):
    """Return ``(M, feature_names)``: ``M`` a numeric 2-D ndarray or a canonical CSR matrix (a
    canonical CSC matrix stays CSC with ``keep_csc``, for kernels that read columns).

    Dense input keeps its dtype (integers are accumulated in float64 later, never overflowing);
    sparse input is never densified. DataFrame columns become the feature names; other input
    gives ``None`` (default names are made only when asked for).
    """
    names = None
    if hasattr(X, "columns") and hasattr(X, "dtypes"):  # pandas DataFrame
        bad = [c for c, t in zip(X.columns, X.dtypes) if not is_numeric_dtype(t)]
        if bad:
            raise TypeError(
                f"X has non-numeric columns {names_list(bad)}. Encode or drop them before scoring; "
                "every feature must be a number."
            )
        names = np.asarray([str(c) for c in X.columns], dtype=object)
        check_unique_names(names)
        X = _frame_values(X)
    if sp.issparse(X):
        M = _as_csr(X, keep_csc)
    else:
        M = _as_dense(X)
    n, p = M.shape
    if n == 0 or p == 0:
        raise ValueError(
            f"X is empty: {n} samples x {p} features. Scoring needs at least one sample and one feature."
        )
    check_integer_range(M, names)
    return M, names


#: Features whose largest magnitude passes this (2**500, about 3e150) are too large to square.
HUGE = 2.0**500


def rescale_huge(M):
    """``M`` with every feature whose values reach :data:`HUGE` divided by a power of two that
    brings them below 1, exactly (no rounding); ``M`` itself when no feature does.

    For statistics that do not change when a feature is multiplied by a positive constant
    (distance correlation, ReliefF, weights of standardised features), whose arithmetic would
    otherwise overflow.
    """
    if sp.issparse(M):
        if not M.nnz or np.abs(M.data).max() < HUGE:
            return M
        top = np.asarray(abs(M).max(axis=0).todense()).ravel()
    else:
        if not M.size or np.abs(M).max() < HUGE:
            return M
        top = np.abs(M).max(axis=0)
    exponent = np.where(top >= HUGE, np.frexp(top)[1], 0)
    if sp.issparse(M):
        out = M.copy().astype(np.float64)
        out.data = np.ldexp(out.data, -exponent[out.indices] if out.format == "csr" else
                            -np.repeat(exponent, np.diff(out.indptr)))
        return out
    return np.ldexp(np.asarray(M, dtype=np.float64), -exponent)


#: The largest magnitude below which every integer is a float64 (2**53).
EXACT_INTEGERS = 2**53


def inexact_integer(values):
    """The first extreme (highest, else lowest) of the 64-bit integer array ``values`` that lies
    beyond +-2**53, where float64 skips integers; None when none does, or the values are not 64-bit
    integers. One pass (their minimum and maximum)."""
    if values.dtype.kind not in "iu" or values.dtype.itemsize < 8 or not values.size:
        return None
    high = values.max()
    if high > EXACT_INTEGERS:
        return high
    low = values.min() if values.dtype.kind == "i" else 0
    return low if low < -EXACT_INTEGERS else None


def check_integer_range(M, names=None, *, source="X"):
    """Raise the error naming the features when 64-bit integer values of ``M`` (ndarray or sparse)
    lie beyond +-2**53, where float64 (in which every score is computed) skips integers.

    ``names``: the feature names, or a callable giving them (called only to write the message).
    One pass over the values, for int64 and uint64 data only.
    """
    values = M.data if sp.issparse(M) else M
    if inexact_integer(values) is None:
        return
    wide = values > EXACT_INTEGERS
    if values.dtype.kind != "u":
        wide |= values < -EXACT_INTEGERS
    if sp.issparse(M):
        major = np.repeat(np.arange(M.shape[0] if M.format == "csr" else M.shape[1]), np.diff(M.indptr))
        cols = np.unique((M.indices if M.format == "csr" else major)[wide])
    else:
        cols = np.flatnonzero(wide.any(axis=0))
    names = names() if callable(names) else names
    names = default_feature_names(M.shape[1]) if names is None else np.asarray(names, dtype=object)
    raise ValueError(
        f"{source} holds integers beyond +-2**53 ({EXACT_INTEGERS}) in feature(s) {names_list(list(names[cols]))}: "
        "scores are computed in float64, which cannot hold every such integer, so those features would "
        "score wrongly. Subtract an offset from those features (for example their smallest value), or "
        "divide them, before scoring."
    )


def is_numeric_dtype(t):
    """Whether values of dtype ``t`` (numpy or a pandas extension dtype) are numbers or booleans."""
    try:
        return np.issubdtype(np.dtype(t), np.number) or np.issubdtype(np.dtype(t), np.bool_)
    except TypeError:  # pandas extension dtypes (Int64, Float64, boolean)
        return getattr(t, "_is_numeric", False) or getattr(t, "kind", "") in "biuf"


def _frame_values(X):
    """The values of a numeric DataFrame as one numpy array: in the columns' own dtype when they
    all share a plain numpy integer, unsigned or float dtype (integer columns cannot hold NaN, so
    no missing-value marker is asked for), else float64 with NaN for missing values (nullable
    Int64 / Float64 / boolean columns with ``pd.NA``, mixed dtypes, sparse columns)."""
    dts = set(X.dtypes)
    if len(dts) == 1:
        (t,) = dts
        if isinstance(t, np.dtype) and t.kind in "iuf":
            return X.to_numpy(dtype=t)
    return X.to_numpy(dtype=np.float64, na_value=np.nan)


def _as_dense(X):
    try:
        M = np.asarray(X)
    except Exception as exc:  # ragged nested lists and the like
        raise ValueError(f"X could not be read as a 2-D numeric array: {exc}") from exc
    if M.dtype == object:
        try:
            M = M.astype(np.float64)
        except (TypeError, ValueError) as exc:  # numpy names the offending value
            raise TypeError(
                f"X holds a value that is not a number ({exc}). Encode or drop the non-numeric "
                "features before scoring; every feature must be a number."
            ) from None
    if M.ndim != 2:
        raise ValueError(
            f"X must be 2-D (samples in rows, features in columns). Got an array with {M.ndim} "
            "dimension(s); use X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a "
            "single sample."
        )
    if M.dtype.kind == "b":
        M = M.view(np.uint8)
    elif M.dtype.kind not in "iuf":
        raise TypeError(
            f"X has dtype {M.dtype}, which is not a real number type. Convert it to numbers "
            "(for example X.astype(float)) before scoring."
        )
    if M.dtype.itemsize < 4 and M.dtype.kind == "f" or not M.dtype.isnative or M.dtype == np.longdouble:
        M = M.astype(np.float64 if M.dtype.itemsize > 4 else np.float32)
    if not (M.flags.c_contiguous or M.flags.f_contiguous):
        M = np.ascontiguousarray(M)
    return M


def _as_csr(X, keep_csc=False):
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D sparse matrix. Got {X.ndim} dimension(s).")
    M = check_sparse_matrix(X)
    M = M if keep_csc and M.format == "csc" else M.tocsr()
    if M.dtype.kind == "b":
        M = M.astype(np.uint8)
    elif M.dtype.kind not in "iuf":
        raise TypeError(f"X has dtype {M.dtype}, which is not a real number type.")
    elif M.dtype == np.longdouble:  # as for dense input: a type the kernels take
        M = M.astype(np.float64)
    if not M.has_canonical_format:
        M = M.copy() if M is X else M
        M.sum_duplicates()  # also sorts the indices
    return M


def check_unique_names(names):
    """Raise when a feature name appears more than once (results and selections are keyed by name)."""
    values = names.tolist() if isinstance(names, np.ndarray) else list(names)
    if len(set(values)) == len(values):  # a set of str: several times faster than a pandas index
        return
    import pandas as pd

    index = pd.Index(values)
    if not index.is_unique:
        dups = index[index.duplicated()].unique()
        counts = index.value_counts()
        shown = ", ".join(f"{str(n)!r} ({counts[n]} times)" for n in dups[:5])
        raise ValueError(
            f"X has duplicated feature names: {shown}{f' and {len(dups) - 5} more' if len(dups) > 5 else ''}. "
            "Each feature needs its own name; rename or drop the duplicates."
        )


def check_fit_input(X, y, *, supervised=True):
    """The checks a selector makes before scikit-learn's ``validate_data``, for clear messages.

    DataFrame columns numeric and named once, object arrays numeric, and (``supervised``) ``y``
    one finite label per row of ``X``. Empty input and other shapes are left to ``validate_data``.
    """
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        bad = [c for c, t in zip(X.columns, X.dtypes) if not is_numeric_dtype(t)]
        if bad:
            raise TypeError(
                f"X has non-numeric columns {names_list(bad)}. Encode or drop them before fitting; "
                "every feature must be a number."
            )
        check_unique_names([str(c) for c in X.columns])
    elif isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 2:
        _as_dense(X)
    shape = getattr(X, "shape", None)
    n_rows = shape[0] if shape else len(X) if isinstance(X, (list, tuple)) else None
    if supervised and y is not None and n_rows is not None:
        as_labels(y, n_rows)


def check_finite(M, names=None):
    """Raise the error naming the features when ``M`` (ndarray or sparse) holds NaN or infinity."""
    if sp.issparse(M):
        if not np.isfinite(M.data).all():
            coo = M.tocoo()
            raise_nonfinite(M, np.unique(coo.col[~np.isfinite(coo.data)]), names)
    elif np.asarray(M).dtype.kind == "f" and not np.isfinite(M).all():
        raise_nonfinite(M, np.flatnonzero(~np.isfinite(M).all(axis=0)), names)


def as_labels(y, n_samples, *, what="y"):
    """A 1-D array of class labels (or target values) of length ``n_samples``.

    Missing labels (None, NaN, ``pd.NA``), complex numbers and object arrays that mix numbers
    with text are errors; text labels that differ only by surrounding spaces, or that read as
    missing (``""``, ``"nan"``, ``"NA"``...), are kept as given with a warning naming them.
    """
    if y is None:
        raise ValueError(f"{what} is required: pass the class labels or the target values, one per sample.")
    if hasattr(y, "to_numpy"):
        kind = getattr(getattr(y, "dtype", None), "kind", "O")
        y = y.to_numpy(dtype=object, na_value=None) if not isinstance(y.dtype, np.dtype) and kind in "OSU" \
            else y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{what} must be 1-D, one label per sample. Got shape {y.shape}.")
    if y.shape[0] != n_samples:
        raise ValueError(
            f"X and {what} have different numbers of samples: X has {n_samples} rows, {what} has "
            f"{y.shape[0]} values. Pass one label per row of X."
        )
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(
            f"{what} contains NaN or infinity at positions {np.flatnonzero(~np.isfinite(y))[:5].tolist()}. "
            "Drop those samples or give them a label."
        )
    if y.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {what} holds complex numbers ({plain(y[:3].tolist())}...); "
                         "labels and targets must be real numbers, booleans or text.")
    if y.dtype == object:
        missing = [i for i, v in enumerate(y) if v is None or (isinstance(v, float) and v != v)
                   or type(v).__name__ in ("NAType", "NaTType")]
        if missing:
            raise ValueError(
                f"{what} has missing labels at positions {plain(missing[:5])}. Drop those samples or label them."
            )
        _check_label_kinds(y, what)
    if y.dtype.kind in "OU":
        _warn_odd_labels(y, what)
    return y


_MISSING_WORDS = {"", "nan", "na", "n/a", "none", "null", "-"}


def _check_label_kinds(y, what):
    """Refuse an object array whose labels mix numbers, text and other objects (they cannot be
    sorted together, and ``1`` and ``'1'`` would be two classes)."""
    kinds = {}
    for v in y:
        kind = ("number" if isinstance(v, (numbers.Real, np.bool_)) and not isinstance(v, complex)
                else "text" if isinstance(v, str) else type(v).__name__)
        kinds.setdefault(kind, v)
        if len(kinds) > 1:
            break
    if len(kinds) > 1 or "complex" in kinds:
        shown = " and ".join(f"{plain(v)} ({k})" for k, v in kinds.items())
        raise ValueError(
            f"{what} mixes labels of different kinds: {shown}. Give every label as text or every label "
            "as a number (for example y.astype(str))."
        )


def _warn_odd_labels(y, what):
    """Warn, naming them, about text labels that differ only by spaces or read as missing."""
    import warnings

    labels = [v for v in np.unique(y) if isinstance(v, str)]
    stripped = {}
    for v in labels:
        stripped.setdefault(v.strip(), []).append(v)
    spaced = [group for group in stripped.values() if len(group) > 1]
    empty = [v for v in labels if v.strip().lower() in _MISSING_WORDS]
    if spaced:
        shown = "; ".join(" vs ".join(repr(str(v)) for v in group) for group in spaced[:5])
        warnings.warn(f"{what} has labels that differ only by spaces, kept as separate classes: {shown}. Strip "
                      "the spaces in the labels if they are one class.", UserWarning, stacklevel=3)
    if empty:
        warnings.warn(f"{what} has labels that look like missing values, kept as classes of their own: "
                      f"{', '.join(repr(str(v)) for v in empty)}. Drop those samples or label them.",
                      UserWarning, stacklevel=3)


#: A float target whose values are not whole numbers is read as class labels when it has at
#: most this many distinct values and each occurs at least twice; otherwise it is continuous.
MAX_FLOAT_CLASSES = 20


def is_continuous(y):
    """Whether a 1-D target is continuous (a measurement) rather than class labels.

    Text, booleans and whole numbers are labels. Other floats are labels when they take at most
    :data:`MAX_FLOAT_CLASSES` distinct values, each at least twice (``0.5 / 1.5`` codes), and
    continuous otherwise (most values distinct).
    """
    if y.dtype.kind != "f":
        return False
    finite = y[np.isfinite(y)]
    if np.array_equal(finite, np.round(finite)):
        return False
    values, counts = np.unique(finite, return_counts=True)
    return len(values) > MAX_FLOAT_CLASSES or bool((counts < 2).any())


def numeric_target(y):
    """``y`` as float64 if it holds numbers (bools included), else ``None``."""
    if y.dtype.kind in "biuf":
        return y.astype(np.float64)
    if y.dtype == object and all(isinstance(v, numbers.Real) for v in y):
        return y.astype(np.float64)
    return None


def raise_nonfinite(M, columns, names):
    """Raise the error for features whose values are NaN/inf or too large to square in float64."""
    cols = np.asarray(columns)
    names = default_feature_names(M.shape[1]) if names is None else np.asarray(names, dtype=object)
    block = M[:, cols[:50]]
    block = block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)
    has_nan = ~np.isfinite(block).all(axis=0)
    bad = names[cols[:50][has_nan]] if has_nan.any() else names[cols[:50]]
    if has_nan.any():
        raise ValueError(
            f"X contains NaN or infinity in feature(s) {names_list(list(bad))}. Remove or impute "
            "missing values before scoring (for example with sklearn.impute.SimpleImputer)."
        )
    raise ValueError(
        f"X has values too large to square in float64 in feature(s) {names_list(list(bad))} "
        "(|x| above about 1e154). Rescale those features (for example divide by a constant) before scoring."
    )


def raise_tiny_spread(columns, names, n_features):
    """Raise the error for features whose values differ by less than float64 can square."""
    names = default_feature_names(n_features) if names is None else np.asarray(names, dtype=object)
    raise ValueError(
        f"X has values too close together to square in float64 in feature(s) "
        f"{names_list(list(names[np.asarray(columns)]))} (they differ by less than about 1e-154, so "
        "their spread underflows to zero). Rescale those features (for example multiply by a constant) "
        "before scoring."
    )
