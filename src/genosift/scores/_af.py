"""Allele-frequency filters: test only the features carried by a share of the samples in a range.

The allele frequency of a feature is the share of the scored samples that carry it (value above
0; NaN does not count as carrying). Association tools for bacterial genomes skip rare and
near-universal variants (pyseer's ``--min-af`` / ``--max-af``, SEER's ``--maf``): they cannot
reach significance and only add to the number of tests. Here such features are scored as not
tested: score, statistic and p-value NaN, no q-value, ranked after every tested feature and never
selected; the Benjamini-Hochberg correction counts the tested features only.

The number of carriers is a sum over rows, so it merges over row chunks, stores and Dask tasks
like the statistics themselves (:class:`WithCarriers`).
"""
from __future__ import annotations

import numbers
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..core.messages import FixError
from ..core.validation import param_error
from ..stats import class_positives
from ._base import Scores, get_method
from ._prepare import result_arrays

__all__ = ["CarrierTap", "WithCarriers", "carriers", "check_af", "untested_last", "with_af"]

#: Rows of a dense matrix compared with 0 at once (bounds the temporary boolean array).
_DENSE_CELLS = 1 << 22


def check_af(min_af, max_af, owner="score"):
    """``(min_af, max_af)`` as floats (a missing bound: 0 or 1), or None when neither is given."""
    if min_af is None and max_af is None:
        return None
    bounds = []
    for name, value, default in (("min_af", min_af, 0.0), ("max_af", max_af, 1.0)):
        if value is None:
            bounds.append(default)
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
            raise param_error(name, owner, "a number in [0, 1] (a share of the samples) or None", value)
        bounds.append(float(value))
    if bounds[0] > bounds[1]:
        raise FixError("The allele-frequency range is empty: {min_af} is above {max_af}. Give a lower bound "
                       "no greater than the upper one.", owner=owner, min_af=bounds[0], max_af=bounds[1])
    return tuple(bounds)


def carriers(M):
    """Number of rows whose value is above 0, per column, as float64 (exact up to 2**53 rows).

    ``M``: a 2-D array or any scipy.sparse matrix (duplicate entries are summed first, as
    scoring reads them). NaN is not above 0, so it never counts.
    """
    if sp.issparse(M):
        if M.format not in ("csr", "csc"):
            M = M.tocsr()
        if not M.has_canonical_format:
            M = M.copy()
            M.sum_duplicates()
        return class_positives(M, np.zeros(M.shape[0], np.intp), 1)[0]  # one pass, no temporaries
    M = np.asarray(M)
    n, p = M.shape
    out = np.zeros(p)
    step = max(1, _DENSE_CELLS // max(p, 1))
    for a in range(0, n, step):
        out += np.count_nonzero(M[a:a + step] > 0, axis=0)
    return out


class WithCarriers(NamedTuple):
    """A mergeable statistic with the carrier counts of the same rows (what Dask tasks return)."""

    stat: object
    carriers: object  # (p,) float64, or 0 for the empty value

    def merge(self, other):
        return WithCarriers(self.stat.merge(other.stat), self.carriers + other.carriers)


class CarrierTap:
    """Count the carriers of the chunks that pass through, on their way to being scored.

    ``pairs(chunks)`` passes ``(X_chunk, y_chunk)`` pairs, ``blocks(items)`` ``(j0, j1, block)``
    column blocks; ``counts`` then holds the carriers of every row (or column) seen. Chunks from
    outside are checked as the scorer checks them (so that a bad chunk gets the scorer's message);
    ``trusted`` chunks (a store's own) are counted as they are.
    """

    def __init__(self, trusted=False):
        self.counts = 0
        self.trusted = trusted

    def pairs(self, chunks):
        from ..core.validation import as_matrix

        for chunk in chunks:
            try:
                Xc, _ = chunk
                rows = np.shape(Xc)[0]
            except (TypeError, ValueError, IndexError):
                yield chunk  # not a pair: the scorer names the problem
                continue
            if rows:
                plain = self.trusted or isinstance(Xc, np.ndarray) and Xc.ndim == 2  # others checked first
                self.counts = self.counts + carriers(Xc if plain else as_matrix(Xc)[0])
            yield chunk

    def blocks(self, items, n_features):
        self.counts = np.zeros(n_features)
        for j0, j1, block in items:
            self.counts[j0:j1] = carriers(block)
            yield j0, j1, block


def untested_last(order, tested):
    """``order`` with the features that were not tested moved to its end (each part kept in order)."""
    if tested is None:
        return order
    inside = tested[order]
    return np.concatenate([order[inside], order[~inside]])


def af_tested(af, bounds):
    """Which features have an allele frequency inside ``bounds`` (inclusive)."""
    return (af >= bounds[0]) & (af <= bounds[1])


def with_af(result, counts, bounds):
    """``result`` with the filter applied: the allele frequency of every feature (``af``), and the
    features outside ``bounds`` not tested (score, statistic, p-value and the method's numeric
    columns NaN, its text columns empty; ranked last). A method that pools all features
    (``combine``, an empirical-Bayes prior) pools the tested ones only."""
    if bounds is None:
        return result
    p = result.n_features
    counts = np.broadcast_to(np.asarray(counts, dtype=np.float64), (p,))
    af = counts / float(result.n_samples)
    untested = ~af_tested(af, bounds)

    def cut(values):
        if values is None:
            return None
        values = np.array(values, dtype=np.float64, copy=True)
        values[untested] = np.nan
        return values

    def blank(values):
        values = np.array(values, dtype=object, copy=True)
        values[untested] = ""
        return values

    columns = None if result.columns is None else {
        name: cut(values) if values.dtype.kind == "f" else blank(values) for name, values in result.columns.items()}
    fields = {"scores": result.scores, "statistic": result.statistic, "pvalues": result.pvalues,
              "rank_key": result.rank_key, "columns": columns}
    spec = get_method(result.method)
    if spec.combine is not None and untested.any():
        fields = result_arrays(spec, spec.combine(Scores(cut(result.statistic), cut(result.pvalues), None, None,
                                                         columns)))
    fields.update((key, cut(fields[key])) for key in ("scores", "statistic", "pvalues", "rank_key"))
    return replace(result, **fields, af=af, af_range=tuple(bounds))
