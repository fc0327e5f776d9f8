"""A store's profile kept on disk: the per-class means and prevalences and the signed effect of
every feature (``genosift.profile``), computed over the store's feature blocks and written to a
temporary file beside the output, then read back a few thousand features at a time. The ranking
table of millions of features gets its profile columns piece by piece and never holds the profile
of all of them (16 bytes per feature and class) in memory."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import scipy.sparse as sp

from .. import engine
from ..engine import block_width
from ..io.store import chunk_budget
from ..profiles import block_profile, profile_records, records_profile

__all__ = ["StoredProfile", "stored_profile"]


class StoredProfile:
    """A ``Profile`` whose records (``profiles.profile_records``) are in an unlinked temporary
    file: ``columns(rows)`` and ``direction(j)`` as a ``Profile``'s, reading only the features
    asked for. ``close()`` gives the file's space back (so does the end of the process)."""

    #: Features gathered per mapping of the file: the pages a gather touches count in the
    #: process's resident memory until the mapping is dropped (8,192 features: at most 32 MiB).
    GATHER = 8192

    def __init__(self, kind, classes, count, file, n_features, width):
        self.kind, self.classes, self.count = kind, classes, count
        self.file, self.n_features, self.width = file, n_features, width

    def _profile(self, records):
        return records_profile(self.kind, self.classes, self.count, records)

    @property
    def effect_column(self):
        return self._profile(np.empty((0, self.width))).effect_column

    def records(self, rows):
        """The records of the features ``rows`` (indices), in that order: ``(len(rows), width)``."""
        rows = np.asarray(rows, dtype=np.intp)
        out = np.empty((rows.size, self.width))
        for a in range(0, rows.size, self.GATHER):
            mapped = np.memmap(self.file, dtype=np.float64, mode="r", shape=(self.n_features, self.width))
            out[a:a + self.GATHER] = mapped[rows[a:a + self.GATHER]]
            del mapped  # unmapped: the pages it touched leave the process's resident set
        return out

    def columns(self, rows=None):
        """The ranking table's profile columns (``Profile.columns``) of the features ``rows``."""
        rows = np.arange(self.n_features) if rows is None else rows
        return self._profile(self.records(rows)).columns()

    def direction(self, j):
        """``Profile.direction`` of feature ``j``."""
        return self._profile(self.records([j])).direction(0)

    def close(self):
        self.file.close()


def stored_profile(store, y, kind, *, rows=None, chunk_bytes=None, folder=None):
    """The profile of a store's features (the ``rows`` kept) as a ``StoredProfile``, in one pass
    over its feature blocks (read from its column copy): ``y`` as ``profiles.block_profile``
    takes it, one value per row kept; the temporary file goes in ``folder`` (default: the
    system's temporary folder) and is unlinked at once."""
    budget = chunk_budget(chunk_bytes, "profile")
    n, p = store.shape
    m = n if rows is None else len(rows)
    first = block_profile(np.zeros((m, 1)), y, kind)  # its classes and counts
    width = 2 * first.means.shape[0] + 1
    fd, name = tempfile.mkstemp(prefix=".genosift-profile.", suffix=".tmp", dir=folder)
    file = os.fdopen(fd, "w+b")
    os.unlink(name)  # gone with the process, however it ends
    try:
        with engine.progress("Profiling feature blocks", total=p, unit="features") as bar:
            half = max(1, budget // 2)
            for j0, j1, block in store.feature_blocks(block_width(n, p, half), chunk_bytes=half):
                block = block if rows is None else block[rows]
                block = block.astype(np.float64, copy=False) if sp.issparse(block) else np.asarray(block, np.float64)
                file.write(memoryview(np.ascontiguousarray(profile_records(block_profile(block, y, kind)))).cast("B"))
                bar.advance(j1 - j0)
        file.flush()
    except BaseException:
        file.close()
        raise
    return StoredProfile(kind, first.classes, first.count, file, p, width)
