"""Selection with a false-discovery-rate guarantee: the model-X knockoff filter over every feature
(or group of features), as a function (``knockoff_filter``) and a scikit-learn selector
(``KnockoffSelector``).

Each feature gets a Gaussian knockoff copy (``genosift.knockoffs.gaussian``); the elastic net of
every feature and every copy (``genosift.selectors.enet``, the covariates unpenalised) compares
each feature with its copy; the knockoff+ threshold (``genosift.knockoffs.filter``) selects the
features that beat their copies by enough, and several draws are combined by e-values. Identical
features are one pattern; patterns may be grouped (``genosift.knockoffs.groups``), and a group is
selected or not as a whole.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from ..core import engine
from ..core.choices import KNOCKOFF_STATISTICS, S_METHODS
from ..core.validation import check_fit_input, is_int, is_real, param_error
from ..knockoffs.filter import e_bh, knockoff_e_values, knockoff_threshold
from ..knockoffs.gaussian import KnockoffSampler, feature_model, s_matrix
from ..sources import AnnDataTransformMixin

__all__ = ["KnockoffOptions", "KnockoffResult", "KnockoffSelector", "knockoff_filter"]

_OWNER = "KnockoffSelector"
#: The penalties of the lasso's path whose entries rank the features for ``statistic="lasso_entry"``.
ENTRY_LAMBDAS = 200
#: The solver's convergence threshold for the statistics and the penalties of the cross-validated path
#: (glmnet's defaults, ``thresh`` 1e-7 and 100 penalties, move the statistics by less than their noise
#: from one knockoff draw to the next, at three times the time).
STATISTIC_TOL, STATISTIC_LAMBDAS = 1e-5, 50
#: Patterns below which the dense algebra runs on one BLAS thread (threads gain nothing there, and
#: on a busy machine they cost far more than they save).
SMALL = 1000


@dataclass
class KnockoffResult:
    """What the knockoff filter found.

    ``group`` (n_features,) each feature's group (-1: constant, never tested); ``statistics``
    (n_draws, G) each draw's ``W`` of each group; ``thresholds`` (n_draws,) each draw's knockoff+
    threshold at ``draw_fdr``; ``e_values`` (G,) their mean e-values; ``selected`` (G,) the e-BH
    selection at ``fdr``; ``gamma`` (G,) the S-matrix's scale of each group (correlation units);
    ``patterns`` the distinct features tested; ``shrinkage`` the covariance's shrinkage;
    ``feature_names`` those of a DataFrame fitted (None: ``x0``, ``x1``, ...).
    """

    group: np.ndarray
    statistics: np.ndarray
    thresholds: np.ndarray
    e_values: np.ndarray
    selected: np.ndarray
    gamma: np.ndarray
    patterns: int
    shrinkage: float
    fdr: float
    draw_fdr: float
    feature_names: object = None

    @property
    def n_groups(self):
        return self.selected.size

    def feature_support(self):
        """Whether each feature is selected (its group is)."""
        out = np.zeros(self.group.size, dtype=bool)
        tested = self.group >= 0
        out[tested] = self.selected[self.group[tested]]
        return out

    def to_frame(self, feature_names=None):
        """One row per feature: ``feature, group, statistic`` (the mean ``W`` of its group over the
        draws), ``e_value, selected, rank`` (1: the strongest; by e-value, then statistic, then
        feature order); constant features last, without a group. ``feature_names``: the features'
        names (default: ``feature_names``, else ``x0``, ``x1``, ...)."""
        import pandas as pd

        if feature_names is None:
            feature_names = self.feature_names
        names = np.asarray(feature_names if feature_names is not None else
                           [f"x{j}" for j in range(self.group.size)], dtype=object)
        tested = self.group >= 0
        g = np.where(tested, self.group, 0)
        W = np.where(tested, self.statistics.mean(axis=0)[g], np.nan)
        e = np.where(tested, self.e_values[g], np.nan)
        order = np.lexsort((np.arange(g.size), -np.nan_to_num(W, nan=-np.inf), -np.nan_to_num(e, nan=-np.inf)))
        rank = np.empty(g.size, dtype=np.int64)
        rank[order] = np.arange(1, g.size + 1)
        frame = pd.DataFrame({"feature": names, "group": np.where(tested, self.group, -1), "statistic": W,
                              "e_value": e, "selected": self.feature_support(), "rank": rank})
        return frame.iloc[order].reset_index(drop=True)


@dataclass(frozen=True)
class KnockoffOptions:
    """The knockoff filter's options (``KnockoffSelector``'s parameters), as one bundle; ``check``
    names the first out of range."""

    fdr: float = 0.1
    statistic: str = "lasso"
    feature_groups: object = None
    group_threshold: float = 0.5
    knockoffs: str = "gaussian"
    s_method: str = "mvr"
    n_draws: int = 1
    draw_fdr: float | None = None
    shrinkage: object = "ledoit_wolf"
    cv: int = 5
    random_state: int = 0

    def check(self, owner=_OWNER):
        if not (is_real(self.fdr) and 0 < self.fdr < 1):
            raise param_error("fdr", owner, "a number in (0, 1)", self.fdr)
        if self.draw_fdr is not None and not (is_real(self.draw_fdr) and 0 < self.draw_fdr < 1):
            raise param_error("draw_fdr", owner, "a number in (0, 1) or None", self.draw_fdr)
        if self.statistic not in KNOCKOFF_STATISTICS:
            raise param_error("statistic", owner, f"one of {list(KNOCKOFF_STATISTICS)}", self.statistic)
        groups = self.feature_groups
        if isinstance(groups, str) and groups != "correlation":
            raise param_error("feature_groups", owner, "None, 'correlation' or one group label per feature", groups)
        if not (is_real(self.group_threshold) and 0 < self.group_threshold < 1):
            raise param_error("group_threshold", owner, "a number in (0, 1)", self.group_threshold)
        if self.knockoffs != "gaussian":
            raise param_error("knockoffs", owner, "'gaussian'", self.knockoffs)
        if self.s_method not in S_METHODS:
            raise param_error("s_method", owner, f"one of {list(S_METHODS)}", self.s_method)
        if not (is_int(self.n_draws) and self.n_draws >= 1):
            raise param_error("n_draws", owner, "an int >= 1", self.n_draws)
        if not (self.shrinkage == "ledoit_wolf" or is_real(self.shrinkage) and 0 <= self.shrinkage < 1):
            raise param_error("shrinkage", owner, "'ledoit_wolf' or a number in [0, 1)", self.shrinkage)
        if self.statistic != "lasso_entry" and not (is_int(self.cv) and self.cv >= 2):
            raise param_error("cv", owner, "an int >= 2 (the folds choosing the penalty)", self.cv)
        if not is_int(self.random_state):
            raise param_error("random_state", owner, "an int", self.random_state)
        return self

    @property
    def level_of_each_draw(self):
        """``draw_fdr``, else ``fdr`` for one draw and ``fdr / 2`` for several."""
        if self.draw_fdr is not None:
            return float(self.draw_fdr)
        return float(self.fdr) if self.n_draws == 1 else float(self.fdr) / 2.0


def _patterns(X, feature_groups, group_threshold):
    """``(P dense (n, m) distinct varying columns, group of each feature (-1: constant), group of
    each pattern)``."""
    from ..core.distinct import distinct_columns
    from ..enet.path import value_range
    from ..knockoffs.groups import correlation_groups

    p = X.shape[1]
    low, high = value_range(X)
    varying = np.flatnonzero(low < high)
    M = X[:, varying]
    M = M.toarray() if sp.issparse(M) else np.ascontiguousarray(M, dtype=np.float64)
    found = distinct_columns(M)
    first, inverse = (np.arange(varying.size), np.arange(varying.size)) if found is None else found
    P = M[:, first]
    if feature_groups is None:
        pattern_group = np.arange(first.size)
    elif isinstance(feature_groups, str):
        pattern_group = correlation_groups(P, threshold=group_threshold)
    else:
        labels = np.asarray(feature_groups).ravel()
        if labels.size != p:
            raise ValueError(f"feature_groups has {labels.size} labels for {p} features: give one per feature.")
        _, codes = np.unique(labels[varying], return_inverse=True)
        codes = codes.ravel()
        pattern_group = codes[first]
        if (pattern_group[inverse] != codes).any():
            raise ValueError("Identical features are in different groups of feature_groups: a knockoff cannot tell "
                             "them apart. Put identical features in one group.")
        _, pattern_group = np.unique(pattern_group, return_inverse=True)
        pattern_group = pattern_group.ravel()
    group = np.full(p, -1, dtype=np.int64)
    group[varying] = pattern_group[inverse]
    if not P.shape[1]:
        raise ValueError("Every feature is constant over the samples: there is nothing to select.")
    return P, group, pattern_group


def _statistic(M, order, y, pattern_group, *, options, logistic, covariates, groups):
    """Each group's ``W`` from ``M``, the patterns and their knockoffs side by side in the columns
    ``order`` of ``[P, K]`` (a random order, so that the solver's order of coordinates favours
    neither): the sum over the group's patterns of the importance of the pattern less that of its
    knockoff (the absolute standardised coefficient at the cross-validated penalty, or the largest
    penalty at which it is in the lasso)."""
    from ..enet.path import MemoryDesign, PenaltyGrid, Solver, fit_path
    from .enet import elastic_net

    m, G = M.shape[1] // 2, int(pattern_group.max()) + 1
    design = MemoryDesign(M, np.ones(2 * m))
    importance = np.zeros(2 * m)
    if options.statistic == "lasso_entry":
        path = fit_path(design, y, logistic=logistic, l1_ratio=1.0, grid=PenaltyGrid(n_lambdas=ENTRY_LAMBDAS),
                        covariates=covariates, solver=Solver(tol=STATISTIC_TOL))
        beta = path.beta.tocsr()
        rows = np.flatnonzero(np.diff(beta.indptr))
        importance[order[rows]] = path.lambdas[beta.indices[beta.indptr[rows]]]  # the first penalty it is in
        sums = np.zeros((2, G))
        np.maximum.at(sums[0], pattern_group, importance[:m])
        np.maximum.at(sums[1], pattern_group, importance[m:])
        return np.maximum(sums[0], sums[1]) * np.sign(sums[0] - sums[1])
    result = elastic_net(design, y, logistic=logistic, l1_ratio=1.0 if options.statistic == "lasso" else 0.5,
                         n_lambdas=STATISTIC_LAMBDAS, covariates=covariates, cv=options.cv, groups=groups,
                         random_state=options.random_state, tol=STATISTIC_TOL, owner=_OWNER)
    importance[order] = np.abs(result.coef[:, result.index_min].toarray().ravel()) * design.scale
    return (np.bincount(pattern_group, weights=importance[:m], minlength=G)
            - np.bincount(pattern_group, weights=importance[m:], minlength=G))


def knockoff_filter(X, y, *, logistic, options=None, covariates=None, groups=None):
    """The knockoff filter of the (n, p) ``X`` (dense or sparse) for the target ``y`` (0/1 with
    ``logistic``, else numbers), with ``options`` (``KnockoffOptions``; None: the defaults), the
    ``covariates`` (n, c) unpenalised and the knockoffs drawn given them, and ``groups`` (one label
    per sample) kept inside one fold of the penalty's cross-validation: a ``KnockoffResult``."""
    from threadpoolctl import threadpool_limits

    options = (KnockoffOptions() if options is None else options).check()
    P, group, pattern_group = _patterns(X, options.feature_groups, options.group_threshold)
    Z = None if covariates is None else np.asarray(covariates, dtype=np.float64)
    # BLAS threads cost more than they save on small matrices (and far more on a busy machine)
    with threadpool_limits(limits=1 if P.shape[1] < SMALL else engine.threads(), user_api="blas"):
        model = feature_model(P, covariates=Z, shrinkage=options.shrinkage)
        grouped = options.feature_groups is not None
        S, gamma = s_matrix(model.corr, method=options.s_method, groups=pattern_group if grouped else None)
        sampler = KnockoffSampler(model, S)
        rng = np.random.default_rng(options.random_state)
        q_draw, G = options.level_of_each_draw, int(pattern_group.max()) + 1
        statistics, thresholds, e = np.empty((options.n_draws, G)), np.empty(options.n_draws), np.zeros(G)
        for d in range(options.n_draws):
            K = sampler.draw(rng)
            order = rng.permutation(2 * P.shape[1])
            W = _statistic(np.hstack([P, K])[:, order], order, y, pattern_group, options=options,
                           logistic=logistic, covariates=Z, groups=groups)
            statistics[d], thresholds[d] = W, knockoff_threshold(W, q_draw)
            e += knockoff_e_values(W, q_draw) / options.n_draws
    return KnockoffResult(group, statistics, thresholds, e, e_bh(e, options.fdr), gamma, P.shape[1], model.shrinkage,
                          float(options.fdr), q_draw)


class KnockoffSelector(AnnDataTransformMixin, SelectorMixin, BaseEstimator):
    """The features (or groups) that matter given all the others, with the false discovery rate
    controlled: the model-X knockoff filter.

    Every feature gets a knockoff copy drawn from a Gaussian model of the features (their
    covariance estimated and shrunk); the lasso of the features and their copies (covariates
    unpenalised) gives each feature a statistic ``W`` (its importance less its copy's), and the
    knockoff+ threshold keeps the features of large ``W`` so that the expected share of false
    selections is at most ``fdr``. The guarantee is exact for Gaussian features of known
    covariance and approximate otherwise (see the guide). Identical features are tested as one
    pattern; with ``feature_groups`` patterns are tested in groups.

    Parameters
    ----------
    fdr : float, default=0.1
        The target false discovery rate, in (0, 1).
    statistic : {"lasso", "enet", "lasso_entry"}, default="lasso"
        "lasso": the difference of the absolute standardised coefficients of a feature and its
        copy in the lasso at the penalty of the smallest ``cv``-fold cross-validated deviance;
        "enet": the same in the elastic net of ``l1_ratio`` 0.5; "lasso_entry": the largest
        penalty at which each is in the lasso's path (no cross-validation, faster).
    feature_groups : None, "correlation" or array-like of shape (n_features,), default=None
        None: every distinct feature on its own; "correlation": groups of features whose
        correlations average at least ``group_threshold`` (hierarchical clustering); or one
        label per feature.
    group_threshold : float, default=0.5
    knockoffs : {"gaussian"}, default="gaussian"
        The model of the features knockoffs are drawn from.
    s_method : {"mvr", "maxent", "sdp", "equi"}, default="mvr"
        How different each copy is from its feature (the S-matrix; see
        ``genosift.knockoffs.gaussian``).
    n_draws : int, default=1
        Knockoff draws; more than one are combined by e-values (derandomised knockoffs), so that
        the selection hardly depends on the draw.
    draw_fdr : float, optional
        Each draw's level (default: ``fdr`` for one draw, ``fdr / 2`` for several).
    shrinkage : "ledoit_wolf" or float, default="ledoit_wolf"
        The covariance's shrinkage towards the identity (Ledoit & Wolf's, or a share in [0, 1)).
    cv : int, default=5
        Folds choosing the lasso's penalty.
    family : {"auto", "logistic", "linear"}, default="auto"
    random_state : int, default=0
        The seed of the knockoff draws and the folds.

    Attributes
    ----------
    result_ : KnockoffResult
    statistics_ : ndarray (n_features,)
        The mean ``W`` of each feature's group over the draws (NaN: a constant feature).

    Examples
    --------
    >>> import numpy as np, genosift as gs
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((300, 60))
    >>> y = X[:, :6] @ np.full(6, 0.6) + rng.standard_normal(300)
    >>> sel = gs.KnockoffSelector(fdr=0.2, statistic="lasso_entry").fit(X, y)
    >>> bool(sel.get_support()[:6].sum() >= 4)
    True
    """

    def __init__(self, fdr=0.1, *, statistic="lasso", feature_groups=None, group_threshold=0.5, knockoffs="gaussian",
                 s_method="mvr", n_draws=1, draw_fdr=None, shrinkage="ledoit_wolf", cv=5, family="auto",
                 random_state=0):
        self.fdr = fdr
        self.statistic = statistic
        self.feature_groups = feature_groups
        self.group_threshold = group_threshold
        self.knockoffs = knockoffs
        self.s_method = s_method
        self.n_draws = n_draws
        self.draw_fdr = draw_fdr
        self.shrinkage = shrinkage
        self.cv = cv
        self.family = family
        self.random_state = random_state

    def fit(self, X, y, groups=None, covariates=None):
        """Draw the knockoffs of ``X``, compare each feature with its copy and keep those passing.

        ``groups``: one label per sample kept inside one fold of the penalty's cross-validation;
        ``covariates``: one row per sample, in the model unpenalised and the knockoffs drawn given them.
        """
        from sklearn.utils.validation import validate_data

        from .enet import covariate_matrix, enet_target
        from .score_funcs import matched_covariates

        options = KnockoffOptions(self.fdr, self.statistic, self.feature_groups, self.group_threshold, self.knockoffs,
                                  self.s_method, self.n_draws, self.draw_fdr, self.shrinkage, self.cv,
                                  self.random_state).check()
        covariates = matched_covariates(X, covariates)
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, accept_sparse="csc", dtype=np.float64)
        target, logistic, _ = enet_target(y, self.family)
        Z = None if covariates is None else covariate_matrix(covariates, X.shape[0], _OWNER)
        self.result_ = knockoff_filter(X, target, logistic=logistic, options=options, covariates=Z, groups=groups)
        if hasattr(self, "feature_names_in_"):
            self.result_.feature_names = self.feature_names_in_
        r = self.result_
        tested = r.group >= 0
        self.statistics_ = np.where(tested, r.statistics.mean(axis=0)[np.where(tested, r.group, 0)], np.nan)
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "result_")
        return self.result_.feature_support()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        return tags
