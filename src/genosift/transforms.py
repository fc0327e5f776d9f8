"""Value transforms applied before scoring and modelling, in every input form alike."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["presence"]


def presence(X):
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
        out = (data > 0).astype(np.float64)
        out[np.isnan(data) if data.dtype.kind == "f" else np.zeros(data.size, bool)] = np.nan
        M = type(M)((out, M.indices.copy(), M.indptr.copy()), shape=M.shape)
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
