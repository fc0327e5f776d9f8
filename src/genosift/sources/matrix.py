"""Data in memory: ``MatrixSource``, an array, a sparse matrix or a DataFrame (files other than
stores, and AnnData objects in memory, are read into one), read by ``scoring.memory``."""
from __future__ import annotations

from dataclasses import dataclass

from .base import Source

__all__ = ["MatrixSource"]


@dataclass(frozen=True, eq=False)
class MatrixSource(Source):
    """A matrix in memory and its target (the rows kept already taken from it)."""

    form = "matrix"
    what = "data in memory"
