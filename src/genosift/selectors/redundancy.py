"""The greedy redundancy filter, and the base of the selectors that account for redundancy.

``RedundancyFilter`` ranks the features by a registered score (or a callable) and then compares
candidates only with the features already kept: never a p x p matrix, never a dense copy of
sparse input (at most a dense block of the kept columns and one bounded block of candidates).

Pearson correlations centre every column before its products with the kept features (dense
input), or use ``X^T z - mean * sum(z)`` with ``z`` the centred kept feature, whose sum is zero
up to rounding (sparse input). Means and spreads are two-pass, from each block of candidates. A
constant feature has no correlation: it counts as 0 wherever a correlation with it is needed.
"""
from __future__ import annotations

import warnings
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from ..core.engine import block_width
from ..core.sparse_columns import take_columns
from ..core.validation import as_matrix, default_feature_names, is_int, is_real, param_error, renamed_parameters
from ..scores import rank_order
from ..scoring import score
from ..sources import AnnDataTransformMixin, fit_accepts_anndata
from .score_funcs import (
    callable_scores,
    matched_covariates,
    refuse_covariates_for,
    resolve_score_func,
    score_func_tags,
    validate_scored,
)


class _Block:
    """Columns ``cols`` of a checked matrix, with their means and norms (two-pass, from the block).

    Dense columns are held centred (float64); sparse ones as a CSC block, centred on the fly.
    """

    def __init__(self, B, cols):
        n = B.shape[0]
        self.cols = cols
        if sp.issparse(B):
            self.B = B
            self.mean = np.asarray(B.sum(axis=0)).ravel() / n
            stored = np.diff(B.indptr)
            dev = B.data - np.repeat(self.mean, stored)
            m2 = np.bincount(np.repeat(np.arange(len(cols)), stored), weights=dev * dev, minlength=len(cols))
            m2 += (n - stored) * self.mean**2
            self.constant = (B.max(axis=0).toarray() == B.min(axis=0).toarray()).ravel()
        else:
            self.constant = B.max(axis=0) == B.min(axis=0)
            self.mean = B.mean(axis=0)
            B -= self.mean  # B is the block's own copy
            self.B = B
            m2 = np.einsum("ij,ij->j", B, B)
        self.norm = np.sqrt(m2)

    def unit(self, q):
        """Column ``q`` of the block centred and scaled to unit norm (dense float64)."""
        if sp.issparse(self.B):
            return (self.B[:, [q]].toarray().ravel() - self.mean[q]) / self.norm[q]
        return self.B[:, q] / self.norm[q]

    def correlate(self, Z, start=0):
        """``r`` (columns from ``start`` on, m) with the centred unit vectors ``Z`` (n, m)."""
        B = self.B[:, start:]
        num = np.asarray(B.T @ Z)
        if sp.issparse(B):
            num -= np.outer(self.mean[start:], Z.sum(axis=0))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = num / self.norm[start:, None]
        r[self.constant[start:]] = 0.0
        return r


class _Candidates:
    """Blocks of chosen columns of a checked matrix, never densifying sparse input.

    Sparse columns are first gathered from the CSR matrix (``take_columns``: two passes over its
    non-zeros each, on the engine's threads);
    after a few gathers the matrix is converted to CSC once, so a long walk pays one copy.
    """

    _CSR_GATHERS = 4

    def __init__(self, M):
        self.M = M
        self.gathers = 0

    @cached_property
    def _csc(self):
        return self.M.tocsc()

    def block(self, cols):
        if not sp.issparse(self.M):
            return _Block(np.asarray(self.M[:, cols], dtype=np.float64), cols)
        self.gathers += 1
        if self.M.format == "csr" and self.gathers <= self._CSR_GATHERS:
            return _Block(take_columns(self.M, cols), cols)
        return _Block(sp.csc_matrix(self._csc[:, cols], dtype=np.float64), cols)



class RankedSelector(AnnDataTransformMixin, SelectorMixin, BaseEstimator):
    """Base of ``RedundancyFilter`` and ``MRMR``: the score that ranks the features, input checks.

    ``_score_param`` / ``_params_param`` name the attributes holding the score and its options.
    """

    _score_param, _params_param = "score_func", "method_options"

    def _score_spec(self, params=None):
        return resolve_score_func(getattr(self, self._score_param), type(self).__name__, param=self._score_param,
                                  params=params, params_param=self._params_param)

    def __sklearn_tags__(self):
        return score_func_tags(super().__sklearn_tags__(), getattr(self, self._score_param))

    def _check_k(self, n_features):
        if not is_int(self.k) or not 1 <= self.k <= n_features:
            raise param_error("k", type(self).__name__, f"an int in [1, n_features] (n_features = {n_features})",
                              self.k)

    def _score_features(self, X, y, covariates=None):
        """Validate ``X`` and score its features (given the ``covariates`` of its rows, for the
        methods that adjust for them): ``(X, scores, pvalues)``."""
        params = getattr(self, self._params_param)
        spec = self._score_spec(params)
        refuse_covariates_for(spec, covariates, type(self).__name__)
        covariates = matched_covariates(X, covariates)
        X, y = validate_scored(self, X, y, spec)
        X, _ = as_matrix(X)  # canonical CSR (a copy only if the input is not), or a numeric ndarray
        self._check_k(X.shape[1])
        if spec is None:
            scores, pvalues = callable_scores(getattr(self, self._score_param), X, y)
            if scores.shape != (X.shape[1],):
                raise ValueError(f"The '{self._score_param}' callable of {type(self).__name__} must return one "
                                 f"score per feature, shape ({X.shape[1]},). Got shape {scores.shape} instead.")
            return X, scores, pvalues
        res = score(X, y, method=spec.name, feature_names=getattr(self, "feature_names_in_", None),
                    covariates=covariates, method_options=params)
        return X, res.scores, res.pvalues

    def _names(self):
        names = getattr(self, "feature_names_in_", None)
        return default_feature_names(self.n_features_in_) if names is None else names

    def _get_support_mask(self):
        check_is_fitted(self, "selected_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.selected_] = True
        return mask


def _greedy_walk(candidates, order, k, max_corr):
    """Keep ``order``'s features unless |r| with a kept one exceeds ``max_corr``, until ``k`` are kept.

    Candidates are taken in blocks (doubling from ``max(64, 2k)`` up to a dense block of
    ``engine.BLOCK_BYTES``, 64 MiB); each block is correlated with the features kept before it in
    one product, then walked in order: every time one of its candidates is kept, the rest of the
    block is correlated with it.
    Returns ``(kept, rejected, most correlated kept feature of each rejected, that |r|)``.
    """
    n = candidates.M.shape[0]
    Z = np.empty((n, k))
    kept, rejected, by, corr = [], [], [], []
    limit = block_width(n)
    width = min(limit, max(64, 2 * k))
    start = 0
    while len(kept) < k and start < len(order):
        block = candidates.block(order[start:start + width])
        cols = block.cols
        start += width
        width = min(limit, 2 * width)
        best = np.zeros(len(cols))
        arg = np.full(len(cols), -1)
        if kept:
            r = np.abs(block.correlate(Z[:, :len(kept)]))
            best, arg = r.max(axis=1), np.asarray(kept)[r.argmax(axis=1)]
        eligible = ~block.constant
        t = 0
        while t < len(cols) and len(kept) < k:
            ok = np.flatnonzero(eligible[t:] & (best[t:] <= max_corr))
            u = t + ok[0] if ok.size else len(cols)
            rejected.append(cols[t:u])
            by.append(np.where(eligible[t:u], arg[t:u], -1))
            corr.append(np.where(eligible[t:u], best[t:u], np.nan))
            if u == len(cols):
                break
            Z[:, len(kept)] = block.unit(u)
            kept.append(cols[u])
            if u + 1 < len(cols):
                r = np.abs(block.correlate(Z[:, len(kept) - 1:len(kept)], start=u + 1))[:, 0]
                higher = r > best[u + 1:]
                best[u + 1:][higher] = r[higher]
                arg[u + 1:][higher] = cols[u]
            t = u + 1
    join = lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)  # noqa: E731
    return (np.asarray(kept, dtype=np.intp), join(rejected, np.intp), join(by, np.intp), join(corr, np.float64))



class RedundancyFilter(RankedSelector):
    """Keep the best-scoring features that are not too correlated with a better one.

    Rank the features by the score, keep the best, then walk down the ranking: a candidate is
    kept if its absolute Pearson correlation with every feature kept so far is at most
    ``max_corr``, until ``k`` are kept. Correlations are computed only against the kept features
    (O(k n) per candidate, in blocks of candidates; never a p x p matrix), and sparse input is
    never densified, so the walk scales to millions of candidates.

    Parameters
    ----------
    score_func : str or callable, default="fisher"
        A method name from ``genosift.methods()``, or ``f(X, y) -> scores`` /
        ``-> (scores, pvalues)`` as in scikit-learn.
    k : int, default=25
        Number of features to keep, in [1, n_features].
    max_corr : float in [0, 1], default=0.7
        Largest absolute correlation allowed with a kept feature.
    method_options : dict, optional
        Options of the method.

    Attributes
    ----------
    scores_, pvalues_ : ndarray (n_features,)
        The score of every feature (``pvalues_`` None without a test).
    ranking_ : ndarray (n_features,)
        Feature indices, best score first (NaN last, ties by lower index).
    selected_ : ndarray
        The kept features, in the order they were kept (their ranking order).
    rejected_ : ndarray
        The candidates examined and rejected, in ranking order.
    rejected_by_ : ndarray
        For each rejected candidate, the kept feature it is most correlated with (among those
        kept before it was examined), or -1 for a constant candidate.
    rejected_corr_ : ndarray
        That absolute correlation (NaN for a constant candidate).

    Notes
    -----
    Features with a NaN score are never examined. A constant feature has no correlation and no
    information: it is never kept (it appears in ``rejected_`` with ``rejected_by_ == -1``). If
    fewer than ``k`` features qualify, fewer are kept, with a warning. ``to_frame()`` lists every
    examined candidate and why it was dropped.

    Examples
    --------
    >>> import pandas as pd, genosift as gs
    >>> X, y, names = gs.load_golub()
    >>> genes = pd.DataFrame(X, columns=names)
    >>> sel = gs.RedundancyFilter(score_func="fisher", k=3, max_corr=0.7).fit(genes, y)
    >>> genes.columns[sel.selected_].tolist()  # in the order kept
    ['M27891_at', 'X95735_at', 'X74262_at']
    >>> sel.to_frame().loc[:3, ["feature", "rank", "kept", "correlated_with"]]
         feature  rank   kept correlated_with
    0  M27891_at     1   True            <NA>
    1  D88422_at     2  False       M27891_at
    2  X95735_at     3   True            <NA>
    3  M23197_at     4  False       X95735_at
    """

    @renamed_parameters("score_params")
    def __init__(self, score_func="fisher", *, k=25, max_corr=0.7, method_options=None):
        self.score_func = score_func
        self.k = k
        self.max_corr = max_corr
        self.method_options = method_options

    @fit_accepts_anndata
    def fit(self, X, y=None, covariates=None):
        """Score the features of ``X`` against ``y`` and walk down the ranking.

        ``covariates``: one row per sample of ``X``, for a ``score_func`` that adjusts for
        covariates (``genosift.scores.covariate_methods()``); a fit parameter aligned with the
        samples (``Pipeline.fit(..., redundancyfilter__covariates=C)``). The correlations
        between features do not use them.
        """
        if not is_real(self.max_corr) or not 0 <= self.max_corr <= 1:
            raise param_error("max_corr", "RedundancyFilter", "a number in [0, 1]", self.max_corr)
        if not is_int(self.k) or self.k < 1:
            raise param_error("k", "RedundancyFilter", "an int in [1, n_features]", self.k)
        X, self.scores_, self.pvalues_ = self._score_features(X, y, covariates)
        self.ranking_ = rank_order(self.scores_)
        order = self.ranking_[:np.count_nonzero(~np.isnan(self.scores_))]
        self.selected_, self.rejected_, self.rejected_by_, self.rejected_corr_ = _greedy_walk(
            _Candidates(X), order, self.k, float(self.max_corr))
        if len(self.selected_) < self.k:
            warnings.warn(
                f"RedundancyFilter kept {len(self.selected_)} of k={self.k} features: the others have a "
                f"NaN score, are constant, or are correlated above max_corr={self.max_corr} with a kept "
                "feature. Raise max_corr or lower k.", UserWarning)
        return self

    def to_frame(self):
        """Every examined candidate in ranking order: feature, score, rank, kept, correlated_with, abs_corr."""
        import pandas as pd

        check_is_fitted(self, "selected_")
        names = np.asarray(self._names(), dtype=object)
        examined = np.concatenate([self.selected_, self.rejected_])
        ranks = np.empty(len(self.ranking_), dtype=np.intp)
        ranks[self.ranking_] = np.arange(1, len(self.ranking_) + 1)
        with_names = np.where(self.rejected_by_ >= 0, names[np.maximum(self.rejected_by_, 0)], None)
        frame = pd.DataFrame({
            "feature": names[examined],
            "score": self.scores_[examined],
            "rank": ranks[examined],
            "kept": np.arange(len(examined)) < len(self.selected_),
            # pandas' nullable string type: a kept feature shows <NA> under every pandas version
            "correlated_with": pd.array(np.concatenate([np.full(len(self.selected_), None, dtype=object), with_names]),
                                        dtype="string"),
            "abs_corr": np.concatenate([np.full(len(self.selected_), np.nan), self.rejected_corr_]),
        })
        return frame.sort_values("rank", kind="stable").reset_index(drop=True)
