"""Value transforms applied before scoring and modelling, in every input form alike."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

__all__ = ["presence", "zeros_and_ones"]


def presence(X, *, copy=True):
    """Presence/absence of each value: 1.0 where ``x > 0``, else 0.0, as float64.

    The reading of k-mer counts and gene copies that SEER and pyseer test, and that GenoLearn's
    ``fisher-binary`` scores: a feature is carried or not. NaN stays NaN, so the NaN policy of
    scoring still names it. Sparse stays sparse, in its own format (values at or below 0 are
    dropped from the stored entries); a DataFrame stays a DataFrame with its labels. In a
    scikit-learn pipeline, ``sklearn.preprocessing.Binarizer(threshold=0)`` does the same on data
    without NaN.

    Parameters
    ----------
    X : ndarray, scipy.sparse matrix or array, or pandas DataFrame of real numbers
    copy : bool, default True
        False lets a CSR or CSC matrix of float64 values be rewritten in place (its values, and
        its structure where values at or below 0 are dropped): for a matrix that is not needed
        afterwards, as when a file was just read. Other input is always copied.

    Returns
    -------
    The same kind of matrix, float64.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> presence(np.array([[0, 3], [-1, 1]])).tolist()
    [[0.0, 1.0], [0.0, 1.0]]
    >>> presence(sp.csr_matrix([[0, 7], [2, 0]])).toarray().tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    if sp.issparse(X):
        fmt = X.format
        M = X.tocsr() if fmt not in ("csr", "csc") else X
        data = np.asarray(M.data)
        in_place = not copy and M is X and data.dtype == np.float64 and data.flags.writeable
        out = data if in_place else np.empty(data.shape, np.float64)
        if data.dtype.kind in "biuf" and data.dtype != np.longdouble:
            _presence_values(data, out)  # one compiled pass
        else:
            out[:] = data > 0
            if data.dtype.kind == "f":
                out[np.isnan(data)] = np.nan
        structure = (M.indices, M.indptr) if in_place else (M.indices.copy(), M.indptr.copy())
        M = type(M)((out, *structure), shape=M.shape)
        if out.size and not out.all():  # values at or below 0 leave the stored entries
            M.eliminate_zeros()
        return M.asformat(fmt)
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):  # a DataFrame keeps its labels
        return X.__class__(presence(X.to_numpy(dtype=np.float64, na_value=np.nan)), index=X.index, columns=X.columns)
    values = np.asarray(X)
    if values.dtype.kind not in "biuf":
        raise TypeError(f"presence needs real numbers; got values of dtype {values.dtype}.")
    out = (values > 0).astype(np.float64)
    if values.dtype.kind == "f":
        out[np.isnan(values)] = np.nan
    return out


@njit(parallel=True, nogil=True, cache=True)
def _presence_values(values, out):
    """``out[i] = 1.0 if values[i] > 0, NaN if NaN, else 0.0`` (``out`` may be ``values``)."""
    for i in prange(values.size):
        v = values[i]
        out[i] = 1.0 if v > 0 else (v if v != v else 0.0)


def zeros_and_ones(M):
    """Whether every value of ``M`` is 0 or 1 (presence/absence, a ``presence`` result without
    NaN): ``M`` an ndarray, or a CSR or CSC matrix, whose duplicate entries (summed when read)
    answer False. Read a slice at a time (a few MiB of temporaries), stopping at the first other value.
    """
    if sp.issparse(M):
        if not M.has_canonical_format:
            return False
        values = M.data
    else:
        values = np.asarray(M)
    if values.dtype.kind not in "biuf":
        return False
    if not values.size:
        return True
    rows = values.reshape(values.shape[0] if values.ndim else 1, -1)
    step = max(1, (1 << 22) // max(rows.shape[1], 1))
    return all(((part == 0) | (part == 1)).all() for part in (rows[a:a + step] for a in range(0, rows.shape[0], step)))
