"""A backed AnnData (``read_h5ad(path, backed="r")``): ``BackedSource``, read from its file in
row chunks of a memory budget, read by ``scoring.anndata``."""
from __future__ import annotations

from dataclasses import dataclass

from .base import Source

__all__ = ["BackedSource"]


@dataclass(frozen=True, eq=False)
class BackedSource(Source):
    """A backed AnnData and its target (an array, or the name of an ``obs`` column)."""

    form = "backed"
    what = "a backed AnnData"
