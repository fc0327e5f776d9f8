"""A store's profile, made by the pass that scores it and kept on disk: the per-class means and
prevalences and the signed effect of every feature (``genosift.profile``).

``ProfilePass`` rides along the scoring pass over a store (``scoring.store.store_scores``): the
row chunks it reads fold into the profile's statistics, the feature blocks it reads give their
records, written to a temporary file beside the output and put in the order of the ranking once
it is known. ``stored_profile`` makes the same file in a pass of its own. The ranking table of
millions of features then gets its profile columns piece by piece and never holds the profile of
all of them (16 bytes per feature and class) in memory."""
from __future__ import annotations

import errno
import os
import tempfile
import threading

import numpy as np

from ..core import engine
from ..core.engine import block_width, check_budget
from ..core.validation import as_labels
from ..sources.store import float_block
from .profiles import block_records, chunk_statistic, finish_profile, records_profile, statistic_for
from .store import entry_blocks

__all__ = ["ProfilePass", "StoredProfile", "stored_profile"]


class StoredProfile:
    """A ``Profile`` whose records (``profiles.block_records``) are in an unlinked temporary
    file, in the order of a ranking: ``columns(rows)`` and ``direction(j)`` as a ``Profile``'s,
    reading only the features asked for (a piece of the ranking is one read). ``close()`` gives
    the file's space back (so does the end of the process)."""

    #: Bytes read from the file at a time.
    READ = 1 << 24

    def __init__(self, kind, classes, count, file, ranks, width):
        self.kind, self.classes, self.count = kind, classes, count
        self.file, self.ranks, self.width = file, ranks, width

    @property
    def n_features(self):
        return self.ranks.shape[0]

    def _profile(self, records):
        return records_profile(self.kind, self.classes, self.count, records)

    @property
    def effect_column(self):
        return self._profile(np.empty((0, self.width))).effect_column

    def records(self, rows):
        """The records of the features ``rows`` (indices), in that order: ``(len(rows), width)``;
        each run of consecutive places in the file is one read."""
        at = self.ranks[np.asarray(rows, dtype=np.intp)] - 1
        out = np.empty((at.size, self.width))
        order = np.argsort(at, kind="stable")
        places = at[order]
        cuts = np.flatnonzero(np.diff(places) != 1) + 1
        step = max(1, self.READ // (self.width * 8))
        for a, b in zip(np.r_[0, cuts].tolist(), np.r_[cuts, places.size].tolist()):
            for c in range(a, b, step):  # reads of at most READ bytes
                d = min(b, c + step)
                out[order[c:d]] = self._read(int(places[c]), d - c)
        return out

    def _read(self, first, count):
        size = count * self.width * 8
        data = os.pread(self.file.fileno(), size, first * self.width * 8)
        if len(data) != size:
            raise OSError(f"The profile's temporary file ended early: {len(data)} of {size} bytes read.")
        return np.frombuffer(data, dtype=np.float64).reshape(count, self.width)

    def columns(self, rows=None):
        """The ranking table's profile columns (``Profile.columns``) of the features ``rows``."""
        rows = np.arange(self.n_features) if rows is None else rows
        return self._profile(self.records(rows)).columns()

    def direction(self, j):
        """``Profile.direction`` of feature ``j``."""
        return self._profile(self.records([j])).direction(0)

    def close(self):
        self.file.close()


def _temporary(size, folder):
    """An unlinked temporary file of ``size`` bytes in ``folder``, its space reserved."""
    fd, name = tempfile.mkstemp(prefix=".genosift-profile.", suffix=".tmp", dir=folder)
    file = os.fdopen(fd, "w+b")
    os.unlink(name)  # gone with the process, however it ends
    try:
        _reserve(file, size, folder)
    except BaseException:
        file.close()
        raise
    return file


class ProfilePass:
    """The profile of a store's features, made from what the scoring pass reads.

    The scoring pass calls ``begin`` once it knows the samples' target, then hands over each
    row chunk (``rows``: its statistics are merged) or each feature block (``block``: its
    records are written at the features' places in a temporary file in ``folder``, from any
    thread). It rides along only the passes that read the store as its own pass would
    (``rides_rows``, ``rides_blocks``). ``result(ranks)`` gives the profile: a ``Profile`` from row chunks, a
    ``StoredProfile`` in the order of ``ranks`` from feature blocks (close it when done); None
    when the pass read neither (a Dask scheduler scores elsewhere). ``labels``: the profile's
    own labels (one per row scored), for a pass that scores several targets; by default the
    pass's target.
    """

    def __init__(self, kind, *, folder=None, labels=None):
        self.kind, self.folder, self.own = kind, folder, labels
        self.began = False
        self.stats = self.file = None
        self._lock = threading.Lock()

    def begin(self, y, m, p, names):
        """The target of the ``m`` rows scored (None for none), the number of features ``p`` and
        their names (a callable giving them, for a profile made from rows)."""
        self.began, self.p, self.names = True, p, names
        y = y if self.own is None else self.own
        self.labels = None if y is None or self.kind == "none" else as_labels(y, m)
        first, self.classes, self.count = block_records(np.zeros((m, 1)), self.labels, self.kind)
        self.width = first.shape[1]
        # the blocks get class codes: the labels are checked once, here
        self.codes = (np.searchsorted(self.classes, self.labels).astype(np.intp) if self.kind == "classes"
                      else self.labels)

    def rides_rows(self, store):
        """Whether the profile rides along a pass over the row chunks of ``store``: where its own
        pass would read them too, a store without a column copy (one with it is profiled from
        its feature blocks, faster, and exactly as in memory)."""
        return not (store.sparse and store.has_column_copy)

    def rides_blocks(self, store):
        """Whether the profile rides along a pass over the feature blocks of ``store``: those of
        its column copy, what its own pass would read (a dense store's blocks are profiled
        faster by its own pass over the row chunks)."""
        return store.sparse and store.has_column_copy

    def rows(self, pairs):
        """``pairs`` (row chunks and their targets) as they are, their profile merged on the way;
        a pass that starts again starts the profile again."""
        stat = statistic_for(self.kind)
        self.stats, done = stat.empty(), 0
        for chunk, target in pairs:
            labels = None if self.labels is None else self.labels[done:done + chunk.shape[0]]
            part = chunk_statistic(chunk, labels, stat, self.kind)
            absorb = getattr(self.stats, "absorb", None)  # the running value is this pass's own
            self.stats = self.stats.merge(part) if absorb is None else absorb(part)
            done += chunk.shape[0]
            yield chunk, target

    def block(self, j0, j1, block):
        """The records of the features ``j0:j1`` (every row scored of ``block``) at their places."""
        with self._lock:
            if self.file is None:
                self.file = _temporary(self.p * self.width * 8, self.folder)
        records = np.ascontiguousarray(block_records(block, self.codes, self.kind)[0])
        os.pwrite(self.file.fileno(), records.tobytes(), j0 * self.width * 8)

    def result(self, ranks):
        """The profile, the records of a ``StoredProfile`` in the order of ``ranks`` (each feature's
        rank, 1 = first); None if the pass read neither rows nor blocks."""
        if self.file is None:
            if self.stats is None or not self.stats.n_features:
                return None
            names = self.names() if callable(self.names) else self.names
            return finish_profile(self.stats, self.kind, names)
        ranks = np.asarray(ranks)
        by_feature, self.file = self.file, None
        try:
            ranked = _temporary(self.p * self.width * 8, self.folder)
            try:
                step = max(1, StoredProfile.READ // (self.width * 8))
                for j0 in range(0, self.p, step):
                    j1 = min(self.p, j0 + step)
                    size = (j1 - j0) * self.width * 8
                    data = os.pread(by_feature.fileno(), size, j0 * self.width * 8)
                    if len(data) != size:
                        raise OSError(f"The profile's temporary file ended early: {len(data)} of {size} bytes read.")
                    _place(ranked, self.width, ranks, j0,
                           np.frombuffer(data, dtype=np.float64).reshape(j1 - j0, self.width))
                ranked.flush()
            except BaseException:
                ranked.close()
                raise
        finally:
            by_feature.close()
        return StoredProfile(self.kind, self.classes, self.count, ranked, ranks, self.width)

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None


def stored_profile(source, kind, *, ranks=None, folder=None):
    """The profile of the features of the store of ``source`` (a ``StoreSource``: its ``rows``
    kept, within its memory budget) as a ``StoredProfile``, in one pass over its feature blocks
    (read from its column copy): its target as ``profiles.block_records`` takes it, one value per
    row kept. The records are placed in the order of ``ranks`` (the
    rank of each feature, 1 = first; default: feature order), so that the ranking table reads
    them in one sweep; the temporary file goes in ``folder`` (default: the system's temporary
    folder) and is unlinked at once."""
    store, rows = source.X, source.rows
    budget = check_budget(source.chunk_bytes, "profile")
    n, p = store.shape
    m = n if rows is None else len(rows)
    ranks = np.arange(1, p + 1) if ranks is None else np.asarray(ranks)
    target = ProfilePass(kind)
    target.begin(source.y, m, p, None)  # the classes, their counts and the blocks' class codes, as the pass has them
    width = target.width
    file = _temporary(p * width * 8, folder)
    try:
        with engine.progress("Profiling feature blocks", total=p, unit="features") as bar:
            half = max(1, budget // 2)
            if store.sparse and store.has_column_copy:
                blocks = entry_blocks(store, half, 64 * width)
            else:
                blocks = store.feature_blocks(block_width(n, p, half), chunk_bytes=half)
            for j0, j1, block in blocks:
                _place(file, width, ranks, j0, block_records(float_block(block, rows), target.codes, kind)[0])
                bar.advance(j1 - j0)
        file.flush()
    except BaseException:
        file.close()
        raise
    return StoredProfile(kind, target.classes, target.count, file, ranks, width)


def _place(file, width, ranks, j0, records):
    """The records of the features ``j0 ...`` each at its rank's place in ``file``. The mapping
    is dropped at once, so the pages it wrote leave the process's resident memory (they stay in
    the page cache)."""
    mapped = np.memmap(file, dtype=np.float64, mode="r+").reshape(-1, width)
    mapped[ranks[j0:j0 + records.shape[0]] - 1] = records
    del mapped


def _reserve(file, size, folder):
    """Give the file its ``size`` bytes on disk now: a full disk is then a clear error here, not a
    fault when a mapped page is first written."""
    file.truncate(size)
    if size and hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(file.fileno(), 0, size)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                return  # a file system without the call: the space comes as the pages are written
            raise OSError(exc.errno, f"No room for the table's class profile: it needs {size / 1e9:.2f} GB "
                                     f"of temporary space in {str(folder or tempfile.gettempdir())!r}, beside "
                                     "the output. Free some space there, or write the output to another "
                                     "disk.") from None
