"""Folding statistics over chunks of rows, and mapping functions over blocks of columns.

Also the two process-wide settings of long runs: how many threads work (``set_threads``), and
whether progress bars are shown (``set_progress``, ``progress``). No statistics are defined here.
"""
from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import reduce

import numpy as np
import scipy.sparse as sp

from .validation import is_int, param_error

# The memory budget: one place for its defaults, its check and how it is shared out.
#: Default budget of the data in flight when a store or file is read, scored or converted in
#: chunks of rows or blocks of features (``chunk_bytes``; the README's "default 256M").
CHUNK_BYTES = 256 * 2**20
#: Bytes of one dense float64 column block handed to a whole-column method (and the dense
#: blocks of the selectors' candidates).
BLOCK_BYTES = 64 * 2**20
#: Default budget of the stored data one Dask task reads at once. Smaller than ``CHUNK_BYTES``
#: on purpose: a worker runs a task per thread, each holding its chunk and its partial result.
TASK_BYTES = 64 * 2**20


def check_budget(chunk_bytes, owner, default=CHUNK_BYTES):
    """A memory budget in bytes: ``chunk_bytes`` (a positive int), or ``default`` for None.

    >>> check_budget(None, "score_store") == CHUNK_BYTES, check_budget(4096, "score_store")
    (True, 4096)
    """
    if chunk_bytes is None:
        return default
    if not is_int(chunk_bytes) or chunk_bytes < 1:
        raise param_error("chunk_bytes", owner, "a positive int (bytes) or None", chunk_bytes)
    return int(chunk_bytes)


def share_budget(budget, parts=2):
    """The budget of each of ``parts`` buffers alive at once (at least one byte): the halving plan.

    A reader and the work it feeds each get half (``parts=2``); ``n`` threads with a block being
    read ahead each get ``budget // 2 // (2 * n + 1)``.

    >>> share_budget(256), share_budget(1), share_budget(share_budget(1000), 5)
    (128, 1, 100)
    """
    return max(1, budget // parts)

_settings = {"threads": None, "progress": False}


def set_threads(n):
    """Use ``n`` threads: numba's parallel kernels and the default of every worker pool.

    Parameters
    ----------
    n : int or None
        Threads for ``map_blocks`` and ``score_store`` (their default ``n_jobs``) and for numba's
        parallel loops (capped at ``numba.config.NUMBA_NUM_THREADS``, the most numba started).
        None restores the defaults: all CPUs.

    Returns
    -------
    int or None
        The previous setting, to restore it with.

    Examples
    --------
    >>> import numba
    >>> previous = set_threads(1)
    >>> threads(), numba.get_num_threads()
    (1, 1)
    >>> _ = set_threads(previous)
    >>> threads() == (os.cpu_count() or 1)
    True
    """
    import numba

    if n is not None and (not is_int(n) or n < 1):
        raise param_error("n", "set_threads", "a positive int or None", n)
    cap = numba.config.NUMBA_NUM_THREADS
    numba.set_num_threads(cap if n is None else min(int(n), cap))
    previous, _settings["threads"] = _settings["threads"], None if n is None else int(n)
    return previous


def threads():
    """The default number of worker threads: ``set_threads``'s value, else the number of CPUs."""
    return _settings["threads"] or os.cpu_count() or 1


def _numba_threads(count):
    import numba

    numba.set_num_threads(count)


def set_progress(enabled):
    """Show progress bars on stderr (``True``) or not (``False``, the default).

    The command line turns them on when stderr is a terminal; library calls stay quiet.
    Returns the previous setting.
    """
    previous, _settings["progress"] = _settings["progress"], bool(enabled)
    return previous


class Silent:
    """What ``progress`` yields when bars are off: ``advance`` and ``describe`` do nothing."""

    def advance(self, n=1):
        pass

    def describe(self, text):
        pass


_Silent = Silent  # the name the tests know


class _Task:
    def __init__(self, bar, task):
        self._bar, self._task = bar, task

    def advance(self, n=1):
        self._bar.advance(self._task, n)

    def describe(self, text):
        """Say what the loop does now (e.g. ``"Fold 2/5: k = 100"``): the bar's text changes."""
        self._bar.update(self._task, description=text)


_live = {"bar": None, "tasks": 0}
_live_lock = threading.Lock()


@contextmanager
def progress(description, total=None, unit=""):
    """A progress bar for a long loop: ``with progress("Reading", total=n, unit="rows") as bar:``.

    Yields an object whose ``advance(n=1)`` counts ``n`` more units done (from any thread) and
    whose ``describe(text)`` replaces the description (the step under way). The bar is drawn on
    stderr only after ``set_progress(True)``; otherwise this costs next to nothing.
    Bars opened while another is shown are drawn below it.

    Examples
    --------
    >>> with progress("Scoring", total=3, unit="blocks") as bar:
    ...     for _ in range(3):
    ...         bar.advance()
    """
    if not _settings["progress"]:
        yield Silent()
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with _live_lock:
        if _live["bar"] is None:
            _live["bar"] = Progress(
                TextColumn("{task.description}"), BarColumn(),
                TextColumn("{task.completed:,.0f}{task.fields[of]}"),
                TimeElapsedColumn(), TimeRemainingColumn(),
                console=Console(stderr=True), transient=True,
            )
            _live["bar"].start()
        bar = _live["bar"]
        of = (f"/{total:,.0f}" if total is not None else "") + (f" {unit}" if unit else "")
        task = bar.add_task(description, total=total, of=of)
        _live["tasks"] += 1
    try:
        yield _Task(bar, task)
    finally:
        with _live_lock:
            bar.remove_task(task)
            _live["tasks"] -= 1
            if not _live["tasks"]:
                bar.stop()
                _live["bar"] = None


def is_chunk_stream(X):
    """True for an iterator of ``(X_chunk, y_chunk)`` pairs (e.g. a generator)."""
    return isinstance(X, Iterator)


def accumulate(chunks, summarize, empty, *, map=map):
    """Merge ``summarize(chunk)`` over ``chunks``, starting from ``empty``.

    ``map`` may be a parallel map (``concurrent.futures.Executor.map``); merging is associative,
    so the result does not depend on how chunks are grouped.
    """
    def step(acc, part):  # the running value is ours: statistics that can, merge into it in place
        absorb = getattr(acc, "absorb", None)
        return acc.merge(part) if absorb is None else absorb(part)

    return reduce(step, map(summarize, chunks), empty)


def block_width(n_samples, n_features=None, block_bytes=None):
    """Columns per block so that one dense float64 block of ``n_samples`` rows fits the budget.

    Given ``n_features``, the blocks are made equal in width and at least as many as the CPUs
    (where there are enough features), so that threads share the work evenly.
    """
    budget = BLOCK_BYTES if block_bytes is None else block_bytes
    width = int(max(1, min(65536, budget // (8 * max(n_samples, 1)))))
    if n_features:
        n_blocks = max(-(-n_features // width), min(threads(), n_features))
        width = -(-n_features // n_blocks)
    return width


def column_blocks(M, width, *, keep_sparse=False, columns=None):
    """Yield ``(j0, j1, block)`` over the columns of ``M`` (or over ``M[:, columns]``, for an
    array of column indices, never copied whole).

    Dense input gives float64 blocks (a copy of ``width`` columns at a time). Sparse input is
    converted to CSC once (a copy of its non-zeros) and gives CSC blocks if ``keep_sparse``,
    else dense float64 blocks; the whole matrix is never densified.
    """
    p = M.shape[1] if columns is None else len(columns)
    if sp.issparse(M):
        M = M.tocsc()
    for j0 in range(0, p, width):
        j1 = min(p, j0 + width)
        block = M[:, j0:j1] if columns is None else M[:, columns[j0:j1]]
        if sp.issparse(block):
            block = block.astype(np.float64) if keep_sparse else block.toarray().astype(np.float64, copy=False)
        else:
            block = np.ascontiguousarray(block, dtype=np.float64)
        yield j0, j1, block


def elementwise(func, *args, min_size=1 << 17):
    """``func(*args)`` for a function applied value by value (a numpy / scipy.special ufunc),
    computed in slices of the 1-D array arguments on ``threads()`` threads.

    Ufunc loops release the GIL, so p-values of millions of features take 1 / threads of the
    time. Scalars are passed whole; the array arguments must be 1-D and of one length. Smaller
    inputs (below ``min_size``) are computed at once.

    Examples
    --------
    >>> from scipy import special
    >>> import numpy as np
    >>> f = np.linspace(0, 5, 300_000)
    >>> bool(np.array_equal(elementwise(special.fdtrc, 2, 10, f), special.fdtrc(2, 10, f)))
    True
    """
    arrays = [a for a in args if np.ndim(a)]
    n_jobs = threads()
    if not arrays or n_jobs == 1 or any(np.ndim(a) != 1 or a.shape != arrays[0].shape for a in arrays):
        return func(*args)
    n = arrays[0].shape[0]
    if n < min_size:
        return func(*args)
    bounds = np.linspace(0, n, n_jobs + 1).astype(np.int64)

    def part(i):
        return func(*(a[bounds[i]:bounds[i + 1]] if np.ndim(a) else a for a in args))

    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        return np.concatenate(list(pool.map(part, range(n_jobs))))


def map_blocks(func, blocks, *, n_jobs=None):
    """``[func(block) for block in blocks]`` in order, on ``n_jobs`` threads (default ``threads()``).

    Whole-column methods spend their time in numpy and numba code that releases the GIL, so
    threads run blocks in parallel; at most ``2 * n_jobs`` blocks are in memory at once. The
    workers run numba's parallel loops on as many threads as the caller's.
    """
    return list(imap_blocks(func, blocks, n_jobs=n_jobs))


def imap_blocks(func, blocks, *, n_jobs=None, ahead=None):
    """:func:`map_blocks`'s results one at a time, in order, each as soon as it and those before
    it are done: for a consumer that writes them out as they come. At most ``ahead`` blocks
    (default ``2 * n_jobs``) are submitted and not yet handed out. Closing the generator early
    cancels the blocks not yet started."""
    import numba

    n_jobs = n_jobs or threads()
    ahead = max(1, ahead or 2 * n_jobs)
    if n_jobs == 1:
        for b in blocks:
            yield func(b)
        return
    pending = deque()
    with ThreadPoolExecutor(max_workers=n_jobs, initializer=_numba_threads,
                            initargs=(numba.get_num_threads(),)) as pool:
        try:
            for b in blocks:
                pending.append(pool.submit(func, b))
                if len(pending) >= ahead:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def read_ahead(items, ahead=1, *, name="genosift-read-ahead"):
    """The items of a generator, the next ``ahead`` of them produced by a thread meanwhile.

    For reading or decompressing while the caller computes (file reads, zlib and the numba
    kernels release the GIL). At most ``ahead + 1`` items are alive: the one handed out and
    those being produced. An exception in the thread is raised in the caller.
    """
    import queue
    import threading

    slots = threading.Semaphore(ahead + 1)
    channel = queue.Queue()
    stop = threading.Event()
    done = object()

    def produce():
        try:
            while True:
                slots.acquire()
                if stop.is_set():
                    return
                item = next(items, done)
                channel.put(item)
                if item is done:
                    return
                del item
        except BaseException as exc:  # handed to the consumer, raised there
            channel.put(exc)

    worker = threading.Thread(target=produce, name=name, daemon=True)
    worker.start()
    try:
        while True:
            item = channel.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
            item = None
            slots.release()
    finally:
        stop.set()
        slots.release()
        worker.join()
        close = getattr(items, "close", None)
        if close is not None:
            close()
