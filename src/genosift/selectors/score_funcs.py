"""What every selector that runs a score function shares: resolving ``score_func`` (a registered
method or a callable), a callable's scores, the scikit-learn tags and input validation it implies,
and which scores take covariates."""
from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from ..core.messages import FixError, PythonText
from ..core.validation import check_fit_input, check_options_dict, param_error
from ..scores import REGISTRY, covariate_methods, get_method, refuse_covariates

__all__ = ["callable_scores", "covariate_frame", "kinship_refused", "matched_covariates", "refuse_covariates_for",
           "resolve_score_func", "score_func_tags", "validate_scored"]


def resolve_score_func(func, owner, *, param="score_func", params=None, params_param="method_options"):
    """The registered method that ``func`` names, or None for a scoring callable.

    The one resolver of every selector's score: ``params`` (the method's options, checked as a
    dict or None under the name ``params_param``) and an unknown name give the one-format error.
    """
    check_options_dict(params, params_param, owner)
    if callable(func):
        return None
    try:
        spec = get_method(func)
    except ValueError:
        raise param_error(param, owner, f"a callable or one of {sorted(REGISTRY)}", func) from None
    if spec.kinship:
        raise kinship_refused(f"Method '{spec.name}' needs the samples' kinship, which", owner, param)
    return spec


def kinship_refused(what, owner, param="score_func"):
    """The error for a kinship given to a selector (``what`` says how it came, ending with "which"):
    a selector takes none, and the fix is to score with ``genosift.score`` and select from its result."""
    return FixError(f"{what} the selectors do not take (their folds would need its rows and columns, and no "
                    "method option carries it): score with {score} and select from the result ({top}, or the "
                    "features whose p-value is below a threshold), or choose another {" + param + "}.", owner=owner,
                    score=PythonText("genosift.score(X, y, method='lmm', kinship=K)"),
                    top=PythonText("result.top(k)"), **{param: FixError.ANY})


def callable_scores(func, X, y):
    """``(scores, pvalues or None)``, float64, of a callable ``f(X, y) -> scores`` or ``-> (scores, pvalues)``."""
    out = func(X, y)
    scores, pvalues = out if isinstance(out, (tuple, list)) else (out, None)
    return np.asarray(scores, dtype=np.float64), None if pvalues is None else np.asarray(pvalues, dtype=np.float64)


def score_func_tags(tags, func):
    """scikit-learn tags of a selector scored by ``func``: a target unless unsupervised; sparse input."""
    spec = REGISTRY.get(func) if isinstance(func, str) else None
    tags.target_tags.required = spec is None or spec.task != "unsupervised"
    tags.input_tags.sparse = True
    return tags


def validate_scored(estimator, X, y, spec, *, reset=True):
    """``validate_data`` for a selector scored by ``spec`` (None: a callable): ``(X, y)``.

    Clear messages first (``check_fit_input``); no target for an unsupervised method; non-finite
    values are left to the registered methods, which name the features.
    """
    check_fit_input(X, y, supervised=spec is None or spec.task != "unsupervised")
    kwargs = dict(accept_sparse=("csr", "csc"), dtype="numeric", reset=reset, ensure_all_finite=spec is None)
    if spec is not None and spec.task == "unsupervised":
        return validate_data(estimator, X, **kwargs), None
    return validate_data(estimator, X, y, **kwargs)


def refuse_covariates_for(spec, covariates, owner):
    """Raise the error for ``covariates`` given to a score that cannot take them: a callable
    (``spec`` None) or a registered method that does not adjust for covariates. Call it before
    reading data."""
    if covariates is None:
        return
    if spec is None:
        raise FixError(f"{owner} got covariates, but its score is not a registered method (a callable, an "
                       "estimator, or no score at all sees X and y only). Score with a method that adjusts for "
                       f"covariates ({covariate_methods()}), or leave out {{covariates}}.",
                       owner=owner, covariates=FixError.ANY)
    refuse_covariates(spec, owner)


def matched_covariates(X, covariates):
    """``covariates`` in the order of the rows of ``X`` when both are pandas objects indexed by
    sample id (``genosift.scores.align_covariates``); else as given, one row per row of ``X``.
    Call it before ``X`` is validated into an array, which loses the ids."""
    from ..scores import align_covariates, frame_sample_ids

    return None if covariates is None else align_covariates(covariates, frame_sample_ids(X))


def covariate_frame(covariates, n_samples, owner):
    """The checked covariates of ``n_samples`` rows (``genosift.scores.check_covariates``) as a
    DataFrame with their names and a plain row index, whose rows a resampling loop takes with
    ``.iloc``; None for none."""
    import pandas as pd

    from ..scores import check_covariates

    Z, names = check_covariates(covariates, n_samples, owner=owner)
    return None if Z is None else pd.DataFrame(Z, columns=names)
