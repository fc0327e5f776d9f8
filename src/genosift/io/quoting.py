"""How the readers' messages quote what they found: a list of names, a piece of raw text.

One helper per job, so that every message of ``genosift.io`` shows names and bytes alike.
"""
from __future__ import annotations

from ..core import validation as _validation

__all__ = ["names_list", "shown"]


def names_list(names, limit=10):
    """``'a', 'b', 'c' and 4 more``: the first ``limit`` of ``names`` (any iterable), quoted."""
    return _validation.names_list(list(names), limit)


def shown(raw, limit):
    """Raw bytes as a quoted string of at most ``limit`` characters (undecodable bytes replaced)."""
    text = bytes(raw).decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
