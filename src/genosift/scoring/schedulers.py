"""The Dask schedulers genosift runs on: resolving a scheduler argument (a client, an address,
``local:N``, Dask's local names), the one ``use_scheduler`` sets for a block, and computing on it.

Dask is imported only when used; install it with ``pip install 'genosift[dask]'``.
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager

from ..core.validation import param_error

__all__ = ["compute", "current_scheduler", "opened", "require_dask", "require_distributed",
           "slots", "use_scheduler"]

_LOCAL = ("threads", "threading", "processes", "multiprocessing", "sync", "synchronous", "single-threaded")
_settings = {"scheduler": None}


def require_dask():
    """The ``dask`` module, or an ImportError that says how to install it."""
    try:
        import dask
        import dask.array
    except ImportError:
        raise ImportError(
            "Scoring Dask arrays, Dask DataFrames or a store on a Dask cluster needs dask: "
            "pip install 'genosift[dask]' (or pip install 'dask[array]' distributed)."
        ) from None
    return dask


def require_distributed():
    """The ``distributed`` module (with dask), or an ImportError that says how to install it."""
    require_dask()
    try:
        import distributed
    except ImportError:
        raise ImportError(
            "Running on a Dask cluster needs dask.distributed: pip install 'genosift[dask]' "
            "(or pip install distributed)."
        ) from None
    return distributed


@contextmanager
def opened(scheduler):
    """``scheduler`` as ``dask.compute`` takes it; a cluster or client started here is closed after.

    None gives the one ``use_scheduler`` set (else Dask's default); a ``distributed.Client`` and
    Dask's local scheduler names pass through; ``"local"`` / ``"local:N"`` start a cluster of
    ``N`` worker processes on this machine (loopback only); any other string is the address of a
    running scheduler.
    """
    if scheduler is None:
        yield _settings["scheduler"]
        return
    if hasattr(scheduler, "submit") and hasattr(scheduler, "get"):  # a distributed.Client
        yield scheduler
        return
    expected = "a distributed.Client, a scheduler address such as 'tcp://host:8786', 'local' or 'local:N'"
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise param_error("scheduler", "genosift", expected, scheduler)
    if scheduler in _LOCAL:
        require_dask()
        yield scheduler
        return
    local = re.fullmatch(r"local(?::(\d+))?", scheduler.strip())
    if scheduler.startswith("local") and (local is None or local[1] is not None and int(local[1]) < 1):
        raise param_error("scheduler", "genosift", "'local' or 'local:N' with N >= 1 worker processes", scheduler)
    distributed = require_distributed()
    if local:  # the scheduler serves HTTP even without a dashboard: a free port, loopback only
        with distributed.LocalCluster(n_workers=int(local[1]) if local[1] else None, processes=True,
                                      host="127.0.0.1", dashboard_address="127.0.0.1:0") as cluster, \
                distributed.Client(cluster, set_as_default=False) as client:
            yield client
        return
    with distributed.Client(scheduler.strip(), set_as_default=False) as client:
        yield client


@contextmanager
def use_scheduler(scheduler):
    """Run genosift's Dask work on ``scheduler`` inside the ``with`` block.

    Scoring a store (``genosift.score`` on a ``.gs.h5ad`` path or a ``Store``) then
    runs on the cluster's workers, and Dask arrays are computed there; the command line's
    ``--scheduler`` does this for one run.

    Parameters
    ----------
    scheduler : distributed.Client, str or None
        A client; the address of a running scheduler (``"tcp://host:8786"``); ``"local"`` or
        ``"local:N"`` to start ``N`` worker processes on this machine for the block (default: one
        per CPU group, as ``distributed.LocalCluster`` chooses); or one of Dask's local
        schedulers (``"threads"``, ``"processes"``, ``"sync"``). None keeps the current one.

    Yields
    ------
    The scheduler the block uses (a client for addresses and ``local``).

    Examples
    --------
    >>> import numpy as np, dask.array as da, genosift as gs
    >>> X = da.from_array(np.array([[1.0, 0], [2, 1], [6, 0], [7, 1]]), chunks=(3, 2))
    >>> with use_scheduler("sync"):
    ...     np.round(gs.score(X, [0, 0, 1, 1], method="fisher").scores, 6).tolist()
    [25.0, 0.0]
    """
    with opened(scheduler) as resolved:
        previous, _settings["scheduler"] = _settings["scheduler"], resolved
        try:
            yield resolved
        finally:
            _settings["scheduler"] = previous


def current_scheduler():
    """The scheduler ``use_scheduler`` set for the running block, or None."""
    return _settings["scheduler"]


def slots(scheduler):
    """How many tasks ``scheduler`` runs at once: its workers' threads, else the CPUs."""
    if hasattr(scheduler, "nthreads"):
        return max(1, sum(scheduler.nthreads().values()))
    return 1 if scheduler in ("sync", "synchronous", "single-threaded") else os.cpu_count() or 1


def compute(obj, scheduler):
    """``obj`` computed on ``scheduler`` (as ``opened`` gives it)."""
    (out,) = require_dask().compute(obj, scheduler=scheduler)
    return out


# --------------------------------------------------------------------------------------------
# Tasks: what runs on the workers
# --------------------------------------------------------------------------------------------

