"""Folding statistics over chunks of rows, and mapping functions over blocks of columns.

No statistics are defined here.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import reduce

import numpy as np
import scipy.sparse as sp

#: Bytes of one dense float64 column block handed to a whole-column method.
BLOCK_BYTES = 64 * 2**20


def is_chunk_stream(X):
    """True for an iterator of ``(X_chunk, y_chunk)`` pairs (e.g. a generator)."""
    return isinstance(X, Iterator)


def accumulate(chunks, summarize, empty, *, map=map):
    """Merge ``summarize(chunk)`` over ``chunks``, starting from ``empty``.

    ``map`` may be a parallel map (``concurrent.futures.Executor.map``); merging is associative,
    so the result does not depend on how chunks are grouped.
    """
    return reduce(lambda acc, s: acc.merge(s), map(summarize, chunks), empty)


def block_width(n_samples, n_features=None, block_bytes=None):
    """Columns per block so that one dense float64 block of ``n_samples`` rows fits the budget.

    Given ``n_features``, the blocks are made equal in width and at least as many as the CPUs
    (where there are enough features), so that threads share the work evenly.
    """
    budget = BLOCK_BYTES if block_bytes is None else block_bytes
    width = int(max(1, min(65536, budget // (8 * max(n_samples, 1)))))
    if n_features:
        n_blocks = max(-(-n_features // width), min(os.cpu_count() or 1, n_features))
        width = -(-n_features // n_blocks)
    return width


def column_blocks(M, width, *, keep_sparse=False):
    """Yield ``(j0, j1, block)`` over the columns of ``M``.

    Dense input gives float64 blocks (a copy of ``width`` columns at a time). Sparse input is
    converted to CSC once (a copy of its non-zeros) and gives CSC blocks if ``keep_sparse``,
    else dense float64 blocks; the whole matrix is never densified.
    """
    p = M.shape[1]
    if sp.issparse(M):
        M = M.tocsc()
    for j0 in range(0, p, width):
        j1 = min(p, j0 + width)
        block = M[:, j0:j1]
        if sp.issparse(block):
            block = block.astype(np.float64) if keep_sparse else block.toarray().astype(np.float64, copy=False)
        else:
            block = np.ascontiguousarray(block, dtype=np.float64)
        yield j0, j1, block


def map_blocks(func, blocks, *, n_jobs=None):
    """``[func(block) for block in blocks]`` in order, on ``n_jobs`` threads (default: all CPUs).

    Whole-column methods spend their time in numpy and numba code that releases the GIL, so
    threads run blocks in parallel; at most ``2 * n_jobs`` blocks are in memory at once.
    """
    n_jobs = n_jobs or os.cpu_count() or 1
    if n_jobs == 1:
        return [func(b) for b in blocks]
    results, pending = [], []
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        for b in blocks:
            pending.append(pool.submit(func, b))
            if len(pending) >= 2 * n_jobs:
                results.append(pending.pop(0).result())
        results.extend(f.result() for f in pending)
    return results


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
