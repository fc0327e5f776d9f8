"""Scoring on Dask: Dask arrays and DataFrames, and stores read by a cluster's workers.

The public home of the Dask driver, which lives in ``genosift.scoring.dask`` (see there for how
the work is split into tasks). Dask is imported only when used; install it with
``pip install 'genosift[dask]'``.
"""
from .scoring.dask import (
                           FAN_IN,
                           RUNS_PER_THREAD,
                           TASK_BYTES,
                           current_scheduler,
                           is_dask_collection,
                           score_collection,
                           score_store_tasks,
                           use_scheduler,
)

__all__ = ["FAN_IN", "RUNS_PER_THREAD", "TASK_BYTES", "current_scheduler", "is_dask_collection", "score_collection",
           "score_store_tasks", "use_scheduler"]
