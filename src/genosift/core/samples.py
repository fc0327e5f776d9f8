"""``samples``: which samples to use, with one meaning in every public function.

Where the data have sample ids (a DataFrame indexed by them, an AnnData's ``obs_names``, a
store's samples), ``samples`` gives ids of theirs; where they have none (an array, a sparse
matrix), integer row positions. A boolean mask of one value per row works for both.
"""
from __future__ import annotations

import numpy as np

from .validation import names_list, param_error

__all__ = ["sample_rows"]


def sample_rows(samples, n, ids=None, *, owner):
    """The row positions (int64, in the order given) that ``samples`` picks among ``n`` rows; None
    for None.

    ``ids``: the data's sample ids (one per row), or None where they have none. ``samples`` is a
    boolean mask of ``n`` values, or ids of the data (matched as text) where they have ids, else
    row positions in ``[0, n)``. Repeated samples and an empty choice are errors.

    >>> sample_rows(["c", "a"], 3, ["a", "b", "c"], owner="score").tolist()
    [2, 0]
    >>> sample_rows([True, False, True], 3, owner="score").tolist()
    [0, 2]
    """
    if samples is None:
        return None
    if isinstance(samples, (str, bytes)):
        samples = [samples]
    values = np.asarray(samples.to_numpy() if hasattr(samples, "to_numpy") else samples)
    expected = (f"sample ids of the data, or a boolean mask of {n} values" if ids is not None else
                f"a boolean mask of {n} values or row positions in [0, {n})")
    if values.ndim != 1:
        raise param_error("samples", owner, expected, f"an array of shape {values.shape}")
    if values.dtype == bool:
        if values.shape != (n,):
            raise param_error("samples", owner, expected, f"a boolean mask of {values.size} values")
        rows = np.flatnonzero(values)
    elif ids is not None:
        where = {str(s): i for i, s in enumerate(ids)}
        wanted = [str(s) for s in values]
        missing = [s for s in wanted if s not in where]
        if missing:
            raise ValueError(f"The 'samples' of {owner} must be sample ids of the data; {len(missing)} of the "
                             f"{len(wanted)} given are not: {names_list(missing)}. Give ids of the data's samples "
                             f"(or a boolean mask of {n} values).")
        rows = np.array([where[s] for s in wanted], dtype=np.int64)
    elif values.size == 0 or values.dtype.kind in "iu":
        rows = values.astype(np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            bad = rows[(rows < 0) | (rows >= n)]
            raise param_error("samples", owner, expected, bad[:5].tolist())
    else:
        raise ValueError(f"The 'samples' of {owner} are ids ({names_list(list(values))}), but these data have no "
                         f"sample ids: give a boolean mask of {n} values or row positions, or give X as a "
                         "DataFrame indexed by sample id.")
    if np.unique(rows).size < rows.size:
        raise ValueError(f"The 'samples' of {owner} name a sample more than once: give each sample once.")
    if not rows.size:
        raise ValueError(f"The 'samples' of {owner} keep no sample: select at least one.")
    return rows.astype(np.int64, copy=False)
