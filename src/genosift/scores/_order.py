"""The order of features by score: the tie rule (:data:`TIE_BITS`), the full ranking and its
first ``k`` without a full sort."""
from __future__ import annotations

import numpy as np

#: Scores that agree in their leading 32 significant bits (about 10 decimal digits) rank as
#: ties. Their last bits depend on the order of the arithmetic, which differs between dense,
#: sparse, chunked and distributed copies of the same data; without this, two features with
#: equal scores in exact arithmetic could swap places between the copies.
TIE_BITS = 32
_LOW_BITS = np.int64((1 << (52 - (TIE_BITS - 1))) - 1)
_HALF = np.int64(1 << (52 - TIE_BITS))


def tie_key(key):
    """``key`` rounded to :data:`TIE_BITS` significant bits (to nearest, so that a value one unit
    in the last place from a round number such as 0.1875 rounds to it): values that agree to
    that precision become equal; order is kept otherwise (rounding is monotone)."""
    key = np.asarray(key, dtype=np.float64)
    finite = np.isfinite(key)
    with np.errstate(over="ignore"):
        magnitude = ((np.abs(key).view(np.int64) + _HALF) & ~_LOW_BITS).view(np.float64)
    return np.where(finite, np.copysign(magnitude, key), key)


def rank_order(key):
    """Feature indices, best first: higher key first, NaN last; ties (values equal to about
    ten significant digits, see :data:`TIE_BITS`) by lower index."""
    return np.argsort(-tie_key(key), kind="stable")


def _smallest(v, where, m):
    """The ``m`` positions ``where`` whose ``v`` (no NaN) is smallest, in order (ties: lower first)."""
    if m >= where.size:
        return where[np.argsort(v, kind="stable")]
    cut = np.partition(v, m - 1)[m - 1]  # the m-th smallest value
    below = np.flatnonzero(v < cut)
    at = np.flatnonzero(v == cut)[:m - below.size]  # ties at the cut: lower positions first
    pick = np.concatenate([below, at])
    pick.sort()  # position order, so that the stable sort below breaks ties by position
    return where[pick[np.argsort(v[pick], kind="stable")]]


def top_order(key, k, tested=None):
    """The first ``k`` indices of the ranking (``rank_order(key)``, with the features that
    ``tested`` marks False after all the others), found by partition: O(p) and a sort of ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> top_order(np.array([0.5, np.nan, 2.0, 0.5, 1.0]), 3).tolist()
    [2, 4, 0]
    """
    neg = -tie_key(key)
    k = int(min(max(k, 0), neg.shape[0]))
    groups = [~np.isnan(neg)] if tested is None else [tested & ~np.isnan(neg), tested & np.isnan(neg),
                                                      ~tested & ~np.isnan(neg)]
    out, left = [], k
    for i, inside in enumerate(groups):
        if left == 0:
            break
        if i == 0 and left and inside.all():  # no NaN and nothing left out: no gather
            return _smallest(neg, np.arange(neg.shape[0]), left)
        where = np.flatnonzero(inside)
        out.append(_smallest(neg[where], where, left) if i != 1 else where[:left])
        left -= out[-1].size
    if left:  # NaN keys last, by index (the features not tested after the tested ones)
        out.append(np.flatnonzero(np.isnan(neg) if tested is None else ~tested & np.isnan(neg))[:left])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.intp)
