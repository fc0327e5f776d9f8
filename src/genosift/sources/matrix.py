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

    def column_blocks(self, *, owner):
        from ..core.engine import block_width, column_blocks
        from ..core.validation import as_matrix

        chunk_bytes = self.chunk_bytes
        M, names = as_matrix(self.X)
        n, p = M.shape
        names = self.feature_names if self.feature_names is not None else names
        return n, p, names, column_blocks(M, block_width(n, p, chunk_bytes), keep_sparse=True)

    def float_columns(self, *, owner):
        from ..core import engine
        from ..core.validation import as_matrix

        M, _ = as_matrix(self.X, keep_csc=True)
        return M.shape[0], M.shape[1], engine.column_blocks(M, engine.block_width(*M.shape), keep_sparse=True)
