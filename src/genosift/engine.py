"""Folding statistics over chunks of rows. No statistics are defined here."""
from __future__ import annotations

from collections.abc import Iterator
from functools import reduce


def is_chunk_stream(X):
    """True for an iterator of ``(X_chunk, y_chunk)`` pairs (e.g. a generator)."""
    return isinstance(X, Iterator)


def accumulate(chunks, summarize, empty, *, map=map):
    """Merge ``summarize(chunk)`` over ``chunks``, starting from ``empty``.

    ``map`` may be a parallel map (``concurrent.futures.Executor.map``); merging is associative,
    so the result does not depend on how chunks are grouped.
    """
    return reduce(lambda acc, s: acc.merge(s), map(summarize, chunks), empty)
