"""Pan-genome association for many traits at once: each gene's presence against each binary trait
by Fisher's exact test, and the tree-aware pairwise comparisons of the genes that pass.

The gene table (isolates in rows, genes as 0/1 columns, dense or sparse) is read once. The
traits are columns of 0/1 with NaN where a trait is unknown: an isolate with a missing value
takes no part in that trait's tests only. For each block of traits the 2x2 counts of every gene
come from two products of the gene table with the traits' indicator matrices (``X^T P``,
``X^T N``), so memory holds the data once and one block of counts, never the traits times the
data. A gene present in none or all of a trait's isolates is not tested for it (it counts in
neither the Bonferroni nor the Benjamini-Hochberg adjustment, as in Scoary).

The genes whose naive p-value is at most ``threshold`` are reported, each with its pairwise
comparisons on the tree (``genosift.genomics.pairwise``); with ``permutations``, those of them
that pass both the false discovery rate ``alpha`` (Benjamini-Hochberg q at most ``alpha``) and the
pairwise test (best-case p at most ``alpha``) also get the empirical p-value of their pairwise
statistic (the others NaN): the permutations confirm hits, and the lineage markers of a thousand
traits do not pay for them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..core.validation import is_int, is_real, param_error

__all__ = ["PangenomeTrait", "pangenome_traits"]

_OWNER = "pangenome_traits"

#: The 2x2 counts of a gene and a trait, the first columns of a trait's table.
COUNTS = ("n_pos_present", "n_neg_present", "n_pos_absent", "n_neg_absent")

#: Traits counted together: memory for two (genes, TRAIT_BLOCK) float64 matrices of counts.
TRAIT_BLOCK = 64

#: The columns of a trait's table, in order, after the gene and its annotation.
COLUMNS = (*COUNTS, "sensitivity", "specificity", "odds_ratio", "pvalue", "bonferroni", "qvalue")


@dataclass(frozen=True)
class PangenomeTrait:
    """One trait's result: its ``name``, the isolates with a value (``n_samples``, of which
    ``n_pos`` are 1), the genes tested (``n_tested``), the ``table`` of the genes reported (naive
    p at most the threshold), best first, and why the trait was not tested (``skipped``, or None)."""

    name: str
    n_samples: int
    n_pos: int
    n_tested: int
    table: object
    skipped: object = None

    @property
    def n_neg(self):
        return self.n_samples - self.n_pos


def _indicators(traits):
    """The traits (n, m) float with NaN missing as two float64 indicator matrices: 1 where a trait is 1,
    1 where it is 0."""
    return (traits == 1).astype(np.float64), (traits == 0).astype(np.float64)


def _present_counts(X, indicator):
    """``X^T indicator``: per gene and trait, the isolates of the indicator that carry the gene (exact
    integers in float64)."""
    product = X.T @ indicator
    return np.asarray(product, dtype=np.float64)


def _check(traits, names, threshold, permutations, seed):
    if not (is_real(threshold) and 0.0 < threshold <= 1.0):
        raise param_error("threshold", _OWNER, "a number in (0, 1]", threshold)
    if not (is_int(permutations) and permutations >= 0):
        raise param_error("permutations", _OWNER, "a whole number >= 0", permutations)
    if permutations and permutations < 10:
        raise param_error("permutations", _OWNER, "0 (none) or at least 10", permutations)
    if not is_int(seed):
        raise param_error("seed", _OWNER, "an int", seed)
    values = np.asarray(traits, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] != len(names):
        raise ValueError(f"The traits are a (samples, traits) table with one name per column; got the shape "
                         f"{values.shape} and {len(names)} name(s).")
    odd = ~np.isnan(values) & (values != 0) & (values != 1)
    if odd.any():
        j = int(np.flatnonzero(odd.any(axis=0))[0])
        raise ValueError(f"The trait {names[j]!r} holds {values[odd[:, j], j][0]:g}: a trait of the pan-genome "
                         "test holds 0, 1 or a missing value. Binarise a numeric trait first.")
    return values


def pangenome_traits(X, traits, *, names, feature_names, tree=None, sample_ids=None, threshold=0.05,
                     permutations=0, seed=0, alpha=0.05, scoary_pairs=False):
    """Each binary trait against every gene's presence: Fisher's exact test, its Bonferroni and
    Benjamini-Hochberg adjustments over the genes tested, and for the genes of naive p at most
    ``threshold`` the pairwise comparisons on ``tree`` (and their empirical p with ``permutations``).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix (n_samples, n_genes)
        Gene presence (1) and absence (0), isolates in rows.
    traits : array-like (n_samples, n_traits)
        0, 1 or NaN (unknown: the isolate takes no part in that trait's tests).
    names : sequence of str
        The traits' names.
    feature_names : sequence of str
        The genes' names.
    tree : genosift.genomics.trees.Tree, optional
        The isolates' tree (every isolate of ``sample_ids`` a tip); without one, no pairwise columns.
    sample_ids : sequence of str, optional
        The isolates' names, in the rows' order (needed with a tree).
    threshold : float, default=0.05
        The naive p-value at most which a gene is reported (1 reports every gene tested).
    permutations : int, default=0
        Permutations of each trait for the empirical p of the reported genes of q-value and
        best-case pairwise p at most ``alpha`` (0: none; else >= 10).
    seed : int, default=0
        The seed of the permutations.
    alpha : float, default=0.05
        The false discovery rate and pairwise level of the genes given an empirical p.
    scoary_pairs : bool, default=False
        The supporting and opposing pairs by Scoary 1.6's rule (``pairwise_comparisons``'
        ``scoary_pairs``), to reproduce its numbers.

    Yields
    ------
    PangenomeTrait
        One per trait, in the order of ``names``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> t = np.array([[1.0], [1.0], [0.0], [0.0]])
    >>> [r.table["pvalue"].tolist() for r in pangenome_traits(X, t, names=["T"], feature_names=["g1", "g2"],
    ...                                                       threshold=1.0)]
    [[0.3333333333333333, 1.0]]
    """
    from ..scores import fisher_exact_columns

    values = _check(traits, list(names), threshold, permutations, seed)
    if not (is_real(alpha) and 0.0 < alpha <= 1.0):
        raise param_error("alpha", _OWNER, "a number in (0, 1]", alpha)
    X = _gene_matrix(X)
    asked = _Asked(tree, sample_ids, threshold, permutations, alpha, scoary_pairs)
    for start in range(0, values.shape[1], TRAIT_BLOCK):
        part = values[:, start:start + TRAIT_BLOCK]
        pos, neg = _indicators(part)
        pvalues, columns = fisher_exact_columns(_present_counts(X, pos), _present_counts(X, neg), pos.sum(axis=0),
                                                neg.sum(axis=0))
        for k in range(part.shape[1]):
            j = start + k
            tested = _Tested(names[j], part[:, k], pvalues[:, k], {c: v[:, k] for c, v in columns.items()})
            yield _trait(X, tested, feature_names, asked, seed=np.random.SeedSequence((seed, j)).generate_state(1)[0])


def _gene_matrix(X):
    """``X`` as float64 CSR (sparse) or a dense float64 array, checked to hold 0 and 1 only."""
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        X = np.asarray(X, dtype=np.float64)
        values = X
    if X.ndim != 2 or not np.all((values == 0) | (values == 1)):
        raise ValueError("The gene table holds presence (1) and absence (0) only, isolates in rows.")
    return X


class _Asked(NamedTuple):
    """What every trait's test is asked (``pangenome_traits``' options)."""

    tree: object
    sample_ids: object
    threshold: float
    permutations: int
    alpha: float
    scoary_pairs: bool


class _Tested(NamedTuple):
    """One trait's exact tests: its name, values ``y``, its genes' p-values ``p`` and other ``columns``."""

    name: str
    y: np.ndarray
    p: np.ndarray
    columns: dict


def _trait(X, tested, feature_names, asked, *, seed):
    """The ``PangenomeTrait`` of one trait from its exact tests (``tested``)."""
    import pandas as pd

    from ..scores import bh_qvalues

    name, y, p, columns = tested
    tree, sample_ids, threshold, permutations, alpha, scoary_pairs = asked
    known = ~np.isnan(y)
    n_pos, n = int((y[known] == 1).sum()), int(known.sum())
    if n_pos == 0 or n_pos == n:
        return PangenomeTrait(name, n, n_pos, 0, None, skipped=f"one class only ({n_pos} of {n} isolates are 1)")
    columns["pvalue"] = p
    has_p = ~np.isnan(p)
    m = int(has_p.sum())
    columns["bonferroni"] = np.minimum(p * m, 1.0)
    columns["qvalue"] = bh_qvalues(p)
    reported = np.flatnonzero(has_p & (p <= threshold))
    reported = reported[np.argsort(p[reported], kind="stable")]
    table = pd.DataFrame({"feature": np.asarray(feature_names, dtype=object)[reported],
                          **{c: columns[c][reported] for c in COLUMNS}})
    table[list(COUNTS)] = table[list(COUNTS)].astype(np.int64)  # exact counts, written as whole numbers
    if tree is not None and len(reported):
        from .pairwise import empirical_pvalues, pairwise_comparisons

        genes = X[:, reported]
        pairs = pairwise_comparisons(genes, y, tree, sample_ids=sample_ids, scoary_pairs=scoary_pairs)
        table = pd.concat([table, pd.DataFrame(pairs).reset_index(drop=True)], axis=1)
        if permutations:
            confirmed = (table["qvalue"] <= alpha) & (table["pairwise_p_best"] <= alpha)
            hits = np.flatnonzero(confirmed.to_numpy())
            empirical = np.full(len(table), np.nan)
            if len(hits):
                empirical[hits] = empirical_pvalues(genes[:, hits], y, tree, sample_ids=sample_ids,
                                                    permutations=permutations, seed=int(seed))
            table["empirical_p"] = empirical
    return PangenomeTrait(name, n, n_pos, m, table)

