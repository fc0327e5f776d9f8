"""A Dask array or DataFrame: ``DaskSource``, computed block by block where its scheduler runs
tasks, read by ``scoring.dask``."""
from __future__ import annotations

from dataclasses import dataclass

from .base import Source

__all__ = ["DaskSource", "is_dask_collection"]


@dataclass(frozen=True, eq=False)
class DaskSource(Source):
    """A Dask collection and its target; ``scheduler`` says where its tasks run."""

    form = "dask"
    what = "a Dask collection"


def is_dask_collection(X):
    """True for a Dask array, DataFrame or Series (dask is imported only for objects of its own)."""
    if type(X).__module__.partition(".")[0] not in ("dask", "dask_expr"):
        return False
    import dask

    return dask.is_dask_collection(X)
