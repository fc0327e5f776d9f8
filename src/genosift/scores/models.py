"""Scores from a fitted model: the weights of a linear classifier.

Features are scaled to unit standard deviation (population, ddof=0, as
``sklearn.preprocessing.StandardScaler``) before the fit, so that the weights are comparable
across features whatever their units. They are scaled but not centred (``with_mean=False``), so
sparse input stays sparse; the fitted intercept absorbs the means. Logistic regression does not
penalise its intercept and is solved to convergence (Newton-CG until every gradient component is
below 1e-10; scikit-learn's default lbfgs stops after a few iterations on p >> n data, tens of
percent from the optimum), so its weights are those of the optimum, the same as on centred
features. For the logistic fit the columns that hold no zero are centred all the same (a dense
copy wholly; in a CSR copy the columns without implicit zeros, so no zero is added): a feature far
from zero for its spread, 10^4 +- 1, makes the problem so ill-conditioned that the solver stops
early, weights off by 16% (10^4) or 8-fold (10^5); a column with zeros lies at most sqrt(n) spreads
from zero. The linear SVM (liblinear) penalises its intercept, so its weights do depend on the
centring; it runs with liblinear's defaults. A constant feature carries no information: it is
left out of the fit and scores NaN.

The solver reads one float64 copy of the scaled features in the smaller of two forms: CSR when
fewer than 2/3 of the values are non-zero (12 bytes per stored value against 8 per value), else a
dense array, whatever the form of the input (so a dense copy of sparse input is made only when it
is smaller than the sparse copy). The means and spreads are summed over the non-zero values in
row order for both forms, so every form of the same data gives the same copy, bit for bit, and
the same scores.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.constraints import AnyOf, Choice, Integer, Nothing, Real
from ..core.sparse_columns import column_counts
from ._base import Scores, register

MODELS = ("logistic", "linear_svm")


def _column_moments(M):
    """``(non-zeros, mean, M2 / scale**2, min, max, scale)`` of every column, summed over the
    non-zero values in row order.

    The same additions in the same order for a dense array and for the CSR copy of its non-zeros
    (adding a zero changes no sum), so both give the same bits. The sums are of ``x / scale``,
    ``scale`` the power of two just above the column's largest ``|x|``: squares neither overflow
    nor underflow whatever the units (1e300 or 1e-300), and dividing by a power of two is exact,
    so data in the usual range give the same bits as unscaled sums.
    """
    n, p = M.shape
    lo, hi = np.zeros(p), np.zeros(p)
    if sp.issparse(M):
        col = M.indices
        stored = column_counts(col, p)
        full = stored == n  # no implicit zero: the extremes are those of the stored values
        lo[full], hi[full] = np.inf, -np.inf
        np.minimum.at(lo, col, M.data)
        np.maximum.at(hi, col, M.data)
        scale = np.ldexp(1.0, np.frexp(np.maximum(-lo, hi))[1])
        data = M.data / scale[col]
        mean = np.bincount(col, data, p) / n
        m2 = np.bincount(col, (data - mean[col]) ** 2, p)
    else:
        stored, total, m2 = np.zeros(p, dtype=np.int64), np.zeros(p), np.zeros(p)
        lo[:], hi[:] = M.min(axis=0), M.max(axis=0)
        scale = np.ldexp(1.0, np.frexp(np.maximum(-lo, hi))[1])
        for row in M:
            total += row / scale
            stored += row != 0
        mean = total / n
        for row in M:
            m2 += np.where(row != 0, (row / scale - mean) ** 2, 0.0)
    return stored, mean * scale, m2 + (n - stored) * mean**2, lo, hi, scale


def _standardised(M, *, centre=False):
    """``(Z, keep)``: the non-constant columns ``keep`` of ``M`` over their standard deviations (float64).

    ``centre``: subtract the means of the columns first, where that adds no stored value (every
    column of a dense copy, the columns of a CSR copy that have no implicit zero).
    """
    if sp.issparse(M):
        M = sp.csr_matrix(M, dtype=np.float64, copy=True)
        M.eliminate_zeros()
    n, p = M.shape
    stored, mean, m2, lo, hi, scale = _column_moments(M)
    keep = np.flatnonzero(lo < hi)
    sd = scale[keep] * np.sqrt(m2[keep] / n)
    M = M if keep.size == p else M[:, keep]
    if stored.sum() >= 2 / 3 * n * p:  # a dense copy is the smaller
        Z = M.toarray() if sp.issparse(M) else np.array(M, dtype=np.float64, order="C")
        if centre:
            Z -= mean[keep]
        Z /= sd
    else:
        Z = M.copy() if sp.issparse(M) and keep.size == p else sp.csr_matrix(M, dtype=np.float64)
        if centre:
            full = (stored[keep] == n)[Z.indices]
            Z.data[full] -= mean[keep][Z.indices[full]]
        Z.data /= sd[Z.indices]
    return Z, keep


@register(
    "linear", invariance="affine", task="classification", streaming="matrix", signed=True, scale_free=True,
    formula="w_j of an L2-penalised logistic regression (or linear SVM) fitted on x_j / sd_j; "
            "sqrt(sum_c w_cj^2) over the classes' weight vectors for more than two classes",
    reference="Guyon, Weston, Barnhill & Vapnik (2002), Gene selection for cancer classification using "
              "support vector machines, Machine Learning 46:389-422; sklearn LogisticRegression / LinearSVC",
    options={"model": Choice(*MODELS), "C": Real(low=0, above=True), "max_iter": Integer(low=1),
             "random_state": AnyOf(Integer(), Nothing())},
)
def linear(M, target, *, model="logistic", C=1.0, max_iter=1000, random_state=0):
    """Absolute weights of an L2 logistic regression or linear SVM on standardised features.

    Parameters
    ----------
    model : {"logistic", "linear_svm"}, default="logistic"
        ``sklearn.linear_model.LogisticRegression`` (Newton-CG to a gradient below 1e-10;
        multinomial for several classes) or ``sklearn.svm.LinearSVC`` (squared hinge loss;
        one-vs-rest for several classes).
    C : float, default=1.0
        Inverse strength of the L2 penalty.
    max_iter : int, default=1000
        Iterations of the solver.
    random_state : int or None, default=0
        Seed of LinearSVC's coordinate descent (which shuffles); Newton-CG is deterministic.

    The statistic is the weight for two classes (positive: higher values in ``classes[1]``) and
    the L2 norm of the classes' weights for more; the score is its absolute value. The whole
    matrix is needed in memory, with one float64 copy of the scaled features. No p-values.

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

    Z, keep = _standardised(M, centre=model == "logistic")
    statistic = np.full(M.shape[1], np.nan)
    if keep.size == 0:
        return Scores(statistic)
    if model == "logistic":
        fitted = LogisticRegression(C=C, solver="newton-cg", tol=1e-10, max_iter=max_iter, random_state=random_state)
    else:
        fitted = LinearSVC(C=C, max_iter=max_iter, random_state=random_state)
    fitted.fit(Z, target.codes)
    coef = fitted.coef_
    statistic[keep] = coef[0] if coef.shape[0] == 1 else np.sqrt((coef**2).sum(axis=0))
    return Scores(statistic)
