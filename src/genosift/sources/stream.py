"""A stream of row chunks: ``StreamSource``, an iterator of ``(X_chunk, y_chunk)`` pairs read
once as they come and merged exactly, read by ``scoring.memory``."""
from __future__ import annotations

from dataclasses import dataclass

from .base import Source

__all__ = ["StreamSource"]


@dataclass(frozen=True, eq=False)
class StreamSource(Source):
    """An iterator of ``(X_chunk, y_chunk)`` row chunks (its labels ride in the chunks)."""

    form = "stream"
    what = "a stream of row chunks"
