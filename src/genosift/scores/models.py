"""Scores from a fitted model: the weights of a linear classifier.

Features are scaled to unit standard deviation (population, ddof=0, as
``sklearn.preprocessing.StandardScaler``) before the fit, so that the weights are comparable
across features whatever their units. They are scaled but not centred (``with_mean=False``), so
sparse input stays sparse; the fitted intercept absorbs the means (for logistic regression, whose
intercept is not penalised, the weights are those of centred features, up to the solver's
tolerance). A constant feature carries no information: it is left out of the fit and scores NaN.

The solver always reads one CSR copy of the scaled features, built the same way from dense and
sparse input (means and spreads summed over its stored values in the same order), so every form
of the same data gives bit-identical scores. For dense data without zeros the copy takes 1.5x the
memory of a dense float64 copy; for counts with many zeros it is smaller.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._validation import param_error
from ._base import Scores, register

MODELS = ("logistic", "linear_svm")


def _check(model, C, max_iter, random_state):
    owner = "method 'linear'"
    if model not in MODELS:
        raise param_error("model", owner, f"one of {list(MODELS)}", model)
    if not isinstance(C, numbers.Real) or isinstance(C, bool) or not C > 0:
        raise param_error("C", owner, "a number > 0", C)
    if not isinstance(max_iter, numbers.Integral) or isinstance(max_iter, bool) or max_iter < 1:
        raise param_error("max_iter", owner, "an int >= 1", max_iter)
    if random_state is not None and (not isinstance(random_state, numbers.Integral) or isinstance(random_state, bool)):
        raise param_error("random_state", owner, "an int or None", random_state)


def _standardised(M):
    """``(Z, keep)``: the non-constant columns ``keep`` of ``M`` over their standard deviations, as CSR float64."""
    Z = sp.csr_matrix(M, dtype=np.float64, copy=True)
    Z.eliminate_zeros()
    n, p = Z.shape
    col = Z.indices
    stored = np.bincount(col, minlength=p)
    mean = np.bincount(col, Z.data, p) / n
    m2 = np.bincount(col, (Z.data - mean[col]) ** 2, p) + (n - stored) * mean**2
    lo, hi = np.zeros(p), np.zeros(p)
    full = stored == n  # no implicit zero: the extremes are those of the stored values
    lo[full], hi[full] = np.inf, -np.inf
    np.minimum.at(lo, col, Z.data)
    np.maximum.at(hi, col, Z.data)
    keep = np.flatnonzero(lo < hi)
    sd = np.sqrt(m2 / n)
    sd[lo == hi] = 1.0
    Z.data /= sd[col]
    return (Z if keep.size == p else Z[:, keep]), keep


@register(
    "linear", task="classification", streaming="matrix", signed=True,
    formula="w_j of an L2-penalised logistic regression (or linear SVM) fitted on x_j / sd_j; "
            "sqrt(sum_c w_cj^2) over the classes' weight vectors for more than two classes",
    reference="Guyon, Weston, Barnhill & Vapnik (2002), Gene selection for cancer classification using "
              "support vector machines, Machine Learning 46:389-422; sklearn LogisticRegression / LinearSVC",
)
def linear(M, target, *, model="logistic", C=1.0, max_iter=1000, random_state=0):
    """Absolute weights of an L2 logistic regression or linear SVM on standardised features.

    Parameters
    ----------
    model : {"logistic", "linear_svm"}, default="logistic"
        ``sklearn.linear_model.LogisticRegression`` (lbfgs; multinomial for several classes) or
        ``sklearn.svm.LinearSVC`` (squared hinge loss; one-vs-rest for several classes).
    C : float, default=1.0
        Inverse strength of the L2 penalty.
    max_iter : int, default=1000
        Iterations of the solver.
    random_state : int or None, default=0
        Seed of the solver (LinearSVC's coordinate descent shuffles): the same data and seed give
        the same scores.

    The statistic is the weight for two classes (positive: higher values in ``classes[1]``) and
    the L2 norm of the classes' weights for more; the score is its absolute value. The whole
    matrix is needed in memory, with one CSR float64 copy of the scaled features. No p-values.

    Examples
    --------
    >>> import genosift as gs
    >>> X, y, names = gs.load_golub()
    >>> res = gs.score(X, y, method="linear", feature_names=names)
    >>> res.n_features, bool(res.scores[res.ranking[0]] > 0)
    (3051, True)
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    _check(model, C, max_iter, random_state)
    Z, keep = _standardised(M)
    statistic = np.full(M.shape[1], np.nan)
    if keep.size == 0:
        return Scores(statistic)
    if model == "logistic":
        fitted = LogisticRegression(C=C, max_iter=max_iter, random_state=random_state)
    else:
        fitted = LinearSVC(C=C, max_iter=max_iter, random_state=random_state)
    fitted.fit(Z, target.codes)
    coef = fitted.coef_
    statistic[keep] = coef[0] if coef.shape[0] == 1 else np.sqrt((coef**2).sum(axis=0))
    return Scores(statistic)
