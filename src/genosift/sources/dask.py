"""A Dask array or DataFrame: ``DaskSource``, computed block by block where its scheduler runs
tasks, read by ``scoring.dask``."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Source

__all__ = ["DaskSource", "computed", "is_dask_collection"]


@dataclass(frozen=True, eq=False)
class DaskSource(Source):
    """A Dask collection and its target; ``scheduler`` says where its tasks run."""

    form = "dask"
    what = "a Dask collection"

    def column_blocks(self, *, owner):
        from ..core.engine import block_width

        chunk_bytes = self.chunk_bytes
        n, p = self.X.shape
        width = block_width(n, p, chunk_bytes)

        def computed():
            for j0 in range(0, p, width):
                yield j0, min(j0 + width, p), np.asarray(self.X[:, j0:j0 + width].compute())

        names = list(self.X.columns) if hasattr(self.X, "columns") else None
        return n, p, self.feature_names if self.feature_names is not None else names, computed()


def computed(value, compute, *args):
    """``compute(value, *args)`` where ``value`` is a Dask collection (a target or covariates given
    with a Dask collection), else ``value`` as it is."""
    return compute(value, *args) if is_dask_collection(value) else value


def is_dask_collection(X):
    """True for a Dask array, DataFrame or Series (dask is imported only for objects of its own)."""
    if type(X).__module__.partition(".")[0] not in ("dask", "dask_expr"):
        return False
    import dask

    return dask.is_dask_collection(X)
