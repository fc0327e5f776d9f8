"""Scores from contingency tables of (discretised) features against the class: chi-square, mutual
information, Fisher's exact test of presence.

``chi2`` and ``mi`` work on whole columns: each feature becomes categories by the rule of
``genosift.scores._discretize`` (integer features with at most ``max_categories`` distinct values
keep their values; the others get ``bins`` equal-frequency bins, ties never split), then a
(categories x classes) table of counts. Empty categories are dropped before the degrees of
freedom are counted, so the table is the one ``scipy.stats.chi2_contingency`` would be given.
A feature with one category (constant) has no test: NaN, ranked last.

``chi2_counts`` is scikit-learn's ``chi2``: it reads features as non-negative counts or
frequencies and compares each feature's total per class with the class sizes. It only needs
per-class sums, so it streams over rows (``genosift.stats.ClassSums`` merges exactly; ``partial_fit``
and chunk streams work).

Defaults ``bins=5, max_categories=5``. With equal-frequency bins the expected count of a cell
under independence is about ``n_c / bins`` for a class of ``n_c`` samples; Cochran's rule of
thumb for the chi-square approximation asks for expected counts of at least 5 (and none below 1),
i.e. ``n_c >= 25`` with 5 bins but ``n_c >= 50`` with 10 -- most labelled expression data sets
have 40-100 samples in all. The plug-in mutual information is biased upwards by about
``(M - 1)(K - 1) / (2 n)`` nats (Miller-Madow) for ``M`` categories and ``K`` classes: 0.028
nats at n = 72 with 5 bins and two classes, 0.063 with 10, against at most ln 2 = 0.69.
``max_categories`` equals ``bins`` so that no feature is given more cells than a binned one (the
bias, and the chi-square's degrees of freedom, stay comparable across features); integer data
coded in up to 5 levels (-2..2 discretised expression, 0/1 presence, small counts) keep their
levels exactly.

``fisher_exact`` tests each feature's presence (a value above 0, as ``carriers`` counts it)
against two classes with the exact 2x2 test (``genosift.scores.exact``), as Scoary does for a
pan-genome's genes: the table's counts, the odds ratio, sensitivity and specificity are columns,
and a Bonferroni-adjusted p over the features tested is added once all blocks are joined.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from ..core.constraints import Integer
from ..stats import ClassSums, class_positives
from ._base import Scores, ratio, register
from ._discretize import contingency_tables, presence_tables
from .exact import fisher_exact_pvalues


def _chi2_sf(dof, x):
    """Upper tail of chi-square: ``erfc(sqrt(x / 2))`` for 1 dof, ``exp(-x / 2)`` for 2 (exact
    identities, and ~50x faster than ``scipy.special.chdtrc``, which they match to ~1e-13), else
    ``chdtrc``. NaN stays NaN."""
    dof = np.broadcast_to(np.asarray(dof, dtype=np.float64), np.shape(x))
    p = np.full(np.shape(x), np.nan)
    for d, func in ((1.0, lambda v: special.erfc(np.sqrt(v / 2.0))), (2.0, lambda v: np.exp(-v / 2.0))):
        at = dof == d
        p[at] = func(x[at])
    rest = (dof != 1.0) & (dof != 2.0)
    p[rest] = special.chdtrc(dof[rest], x[rest])
    return p


@register(
    "chi2_counts", invariance="none", statistic=ClassSums, task="classification", pvalues=True,
    formula="sum_c (O_c - E_c)^2 / E_c, O_c = sum of x over class c, E_c = (n_c / n) sum of x; p from chi2(K - 1)",
    reference="sklearn.feature_selection.chi2",
)
def chi2_counts(stats):
    """Chi-square of non-negative counts: each feature's class totals against the class sizes."""
    n = stats.count.sum()
    share = (stats.count / n)[:, None]
    # features whose totals (or n times the shift) come near the float64 limit are divided by a
    # power of two, exactly, and their statistic multiplied back (it is linear in the counts)
    top = np.frexp(np.maximum(np.abs(stats.maximum), np.abs(stats.shift)))[1] + np.frexp(n)[1]  # of n max|x|
    exponent = np.maximum(top - 1000, 0)
    sums, shift = np.ldexp(stats.sums, -exponent), np.ldexp(stats.shift, -exponent)
    total = sums.sum(axis=0)  # of x - shift
    observed_minus_expected = sums - share * total  # the shift cancels
    expected = share * (total + n * shift)
    # (O - E) * ((O - E) / E), not (O - E)**2 / E: the square would overflow at 1e300 and underflow at 1e-300
    with np.errstate(over="ignore"):  # a statistic beyond 1.8e308 is infinite: p = 0
        chisq = np.ldexp((observed_minus_expected * ratio(observed_minus_expected, expected)).sum(axis=0), exponent)
    chisq[stats.minimum == stats.maximum] = np.nan  # constant (all-zero included): no test
    return Scores(chisq, _chi2_sf(len(stats.classes) - 1, chisq))


# --------------------------------------------------------------------------------------------
# chi-square test of independence and mutual information, on discretised features
# --------------------------------------------------------------------------------------------

def _margins(tables):
    """``(n, row sums, column sums, degrees of freedom)`` of each table, empty rows and columns dropped."""
    row = tables.sum(axis=2)
    col = tables.sum(axis=1)
    n = row.sum(axis=1)
    dof = ((row > 0).sum(axis=1) - 1) * ((col > 0).sum(axis=1) - 1)
    return n, row, col, dof.astype(np.float64)


def _tables(block, target, bins, max_categories):
    return contingency_tables(block, target.codes, target.count, bins=int(bins), max_categories=int(max_categories))


def _chi2_of(tables):
    """Pearson's X^2 and its p of each (category x class) table of ``tables`` (b, L, k)."""
    n, row, col, dof = _margins(tables)
    expected = row[:, :, None] * col[:, None, :] / n[:, None, None]
    terms = ratio((tables - expected) ** 2, expected)
    stat = np.where(expected > 0, terms, 0.0).sum(axis=(1, 2))
    stat[dof == 0] = np.nan
    return Scores(stat, _chi2_sf(dof, stat))


def _mi_of(tables):
    """The mutual information (nats) and its G-test p of each table of ``tables`` (b, L, k)."""
    n, row, col, dof = _margins(tables)
    positive = tables > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = (np.log(np.where(positive, tables, 1.0)) + np.log(n)[:, None, None]
                     - np.log(np.where(positive, row[:, :, None], 1.0))
                     - np.log(np.where(positive, col[:, None, :], 1.0)))
    info = np.maximum((np.where(positive, tables, 0.0) * log_ratio).sum(axis=(1, 2)) / n, 0.0)
    info[dof == 0] = np.nan
    return Scores(info, _chi2_sf(dof, 2.0 * n * info))


def _from_positives(of_tables):
    """A contingency score of features of 0s and 1s from each class's count of 1s (``counts``
    (k, b)): ``of_tables`` of their ``presence_tables`` (a method's registered ``positives``)."""
    def from_counts(counts, target, *, bins=5, max_categories=5):
        return of_tables(presence_tables(counts, target.count, bins=bins, max_categories=max_categories))

    return from_counts


_DISCRETISE = ("categories: integer features with <= max_categories distinct values as they are, "
               "others in `bins` equal-frequency bins (ties never split)")


@register(
    "chi2", invariance="monotone", task="classification", streaming="blocks", pvalues=True, sparse_blocks=True,
    formula=f"X^2 = sum (O - E)^2 / E over the (category x class) table, {_DISCRETISE}; "
            "p from chi2((M - 1)(K - 1)), empty categories dropped",
    reference="Pearson's chi-square test of independence; scipy.stats.chi2_contingency(correction=False)",
    options={"bins": Integer(low=2), "max_categories": Integer(low=0)},
    positives=_from_positives(_chi2_of),
)
def chi2(block, target, *, bins=5, max_categories=5):
    """Chi-square test of independence between the feature's categories and the class.

    Parameters
    ----------
    bins : int, default=5
        Equal-frequency bins for features that are not categorical (see the module docstring
        for the choice: expected counts of about ``n_c / bins`` per cell).
    max_categories : int, default=5
        Integer-valued features with at most this many distinct values keep their values as
        categories.

    The statistic is Pearson's X^2 with ``(M - 1)(K - 1)`` degrees of freedom, ``M`` the
    non-empty categories; no continuity correction. Features with one category are NaN. Scores
    are X^2; features with different ``M`` are better compared by their p-values.
    """
    return _chi2_of(_tables(block, target, bins, max_categories))


@register(
    "mi", invariance="monotone", task="classification", streaming="blocks", pvalues=True, sparse_blocks=True,
    formula=f"I(x; y) = sum p(m, c) ln[p(m, c) / (p(m) p(c))] in nats over the {_DISCRETISE}; "
            "p of the G-test G = 2 n I from chi2((M - 1)(K - 1))",
    reference="sklearn.metrics.mutual_info_score; G-test: scipy.stats.chi2_contingency(lambda_='log-likelihood')",
    options={"bins": Integer(low=2), "max_categories": Integer(low=0)},
    positives=_from_positives(_mi_of),
)
def mi(block, target, *, bins=5, max_categories=5):
    """Mutual information (nats) between the feature's categories and the class, with the G-test p.

    Parameters
    ----------
    bins : int, default=5
        Equal-frequency bins for features that are not categorical. The plug-in estimate is
        biased upwards by about ``(M - 1)(K - 1) / (2 n)`` nats, so more bins inflate it.
    max_categories : int, default=5
        Integer-valued features with at most this many distinct values keep their values as
        categories (then ``mi`` equals ``sklearn.feature_selection.mutual_info_classif`` with
        ``discrete_features=True``).

    The p-value is that of the likelihood-ratio (G) test of independence on the same table,
    ``G = 2 n I`` against chi-square with ``(M - 1)(K - 1)`` degrees of freedom. Features with
    one category are NaN.
    """
    return _mi_of(_tables(block, target, bins, max_categories))


# --------------------------------------------------------------------------------------------
# Fisher's exact test of presence against two classes
# --------------------------------------------------------------------------------------------

def fisher_exact_columns(pos_present, neg_present, n_pos, n_neg):
    """Fisher's exact test of tables given by their counts: ``(pvalues, columns)``, ``columns`` the
    counts of ``fisher_exact`` and its ``odds_ratio``, ``sensitivity`` and ``specificity``.

    The arguments broadcast: a (genes, traits) matrix of each trait's carriers among its positive
    and its negative samples against ``n_pos`` and ``n_neg`` of shape (traits,) tests every gene
    against every trait at once (``fisher_exact_pvalues`` computes each distinct table once). A
    table whose feature is carried by all its samples or none is not tested: NaN.

    Examples
    --------
    >>> p, columns = fisher_exact_columns(np.array([3.0, 1.0]), np.array([0.0, 2.0]), 3, 3)
    >>> p.round(4).tolist(), columns["odds_ratio"].tolist(), columns["sensitivity"].tolist()
    ([0.1, 1.0], [inf, 0.25], [100.0, 33.33333333333333])
    """
    pos_present, neg_present = np.asarray(pos_present, dtype=np.float64), np.asarray(neg_present, dtype=np.float64)
    n_pos, n_neg = np.asarray(n_pos, dtype=np.float64), np.asarray(n_neg, dtype=np.float64)
    p = fisher_exact_pvalues(pos_present, n_pos, pos_present + neg_present, n_pos + n_neg)
    pos_absent, neg_absent = n_pos - pos_present, n_neg - neg_present
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.where((pos_absent > 0) & (neg_present > 0),
                        pos_present * neg_absent / (pos_absent * neg_present), np.inf)
        # percent as Scoary computes it: the share first, then times 100 (the same bits as its tables)
        sensitivity, specificity = pos_present / n_pos * 100.0, neg_absent / n_neg * 100.0
    odds[np.isnan(p)] = np.nan  # a margin of 0: scipy's odds ratio is NaN
    return p, {"n_pos_present": pos_present, "n_neg_present": neg_present, "n_pos_absent": pos_absent,
               "n_neg_absent": neg_absent, "odds_ratio": odds, "sensitivity": sensitivity,
               "specificity": specificity}


def _fisher_of(counts, target):
    """``fisher_exact`` from each class's count of samples carrying the feature (``counts`` (2, b))."""
    neg_present, pos_present = counts
    n_neg, n_pos = target.count
    p, columns = fisher_exact_columns(pos_present, neg_present, n_pos, n_neg)
    return Scores(_minus_log10(p), p, None, None, columns)


def _minus_log10(p):
    """``-log10 p``: the statistic and score, ordered as the p-values (p = 0 scores +inf); NaN stays NaN."""
    with np.errstate(divide="ignore"):
        return 0.0 - np.log10(p)


def _bonferroni(scores):
    """The ``combine`` step of ``fisher_exact``: the ``bonferroni`` column ``min(p m, 1)``, ``m``
    the features tested (those with a p-value), after the columns of the blocks are joined."""
    p = np.asarray(scores.pvalues, dtype=np.float64)
    columns = dict(scores.columns or {})
    columns["bonferroni"] = np.minimum(p * np.count_nonzero(~np.isnan(p)), 1.0)
    return Scores(_minus_log10(p), p, None, None, columns)


@register(
    "fisher_exact", invariance="none", task="classification", streaming="blocks", binary_only=True, pvalues=True,
    sparse_blocks=True, combine=_bonferroni, positives=_fisher_of,
    formula="presence (x > 0) against classes[1] in the 2x2 table; two-sided p = sum of the hypergeometric "
            "probabilities of the tables with its margins no more probable than it (relative tolerance 1e-14); "
            "statistic and score -log10 p; the odds ratio (a d) / (b c) a column",
    reference="Fisher (1935); scipy.stats.fisher_exact; Scoary (Brynildsrud et al. 2016, Genome Biol. 17:238)",
)
def fisher_exact(block, target):
    """Fisher's exact test of each feature's presence (a value above 0) against two classes.

    The table is ``[[n_pos_present, n_pos_absent], [n_neg_present, n_neg_absent]]``: "pos" is
    ``classes[1]``, the label that sorts last (1 of 0/1, ``'S'`` of ``'R'``/``'S'``), "neg"
    ``classes[0]``, as for every two-class method. The p-value is ``scipy.stats.fisher_exact``'s
    two-sided one, exact at every size. ``statistic`` and ``score`` are ``-log10 p`` (the ranking
    follows p; a p = 0, below the smallest float64, is +inf). A feature carried by all samples or
    none is not tested: NaN, ranked last, left out of the q-values and of the Bonferroni ``m``.

    Columns: ``n_pos_present``, ``n_neg_present``, ``n_pos_absent``, ``n_neg_absent`` (counts),
    ``odds_ratio`` (scipy's statistic ``(a d) / (b c)``: inf when ``b`` or ``c`` is 0, 0 when
    ``a`` or ``d`` is; above 1 when presence goes with ``classes[1]``), ``sensitivity`` (100
    n_pos_present / n_pos) and ``specificity`` (100 n_neg_absent / n_neg), in percent as Scoary
    gives them, and ``bonferroni``, ``min(p m, 1)`` over the ``m`` features tested.

    Examples
    --------
    >>> import genosift as gs
    >>> X = [[1, 0], [1, 1], [1, 0], [0, 1], [0, 0], [0, 1]]
    >>> res = gs.score(X, [1, 1, 1, 0, 0, 0], method="fisher_exact")
    >>> res.pvalues.round(4).tolist(), res.columns["bonferroni"].round(4).tolist()
    ([0.1, 1.0], [0.2, 1.0])
    """
    return _fisher_of(class_positives(block, target.codes, 2), target)
