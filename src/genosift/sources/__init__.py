"""``sources``: the one place that asks what an input is.

``as_source(X, y, ...)`` (``sources.dispatch``) tells the input's form apart once and returns
one ``Source`` subclass per form; everything that reads data (score, profile, patterns, pairs,
structure, the elastic net, the selectors) asks the Source, never the input:

===========  ======================================================  ==========================
form         what it holds                                           class (module), driver
===========  ======================================================  ==========================
``matrix``   an array, sparse matrix or DataFrame in memory (files   ``MatrixSource`` (matrix),
             other than stores, and AnnData objects in memory, are   ``scoring.memory``
             read into one)
``stream``   an iterator of ``(X_chunk, y_chunk)`` row chunks        ``StreamSource`` (stream),
                                                                     ``scoring.memory``
``store``    a genosift store (``io.Store``) and the rows kept       ``StoreSource`` (store),
                                                                     ``scoring.store``
``dask``     a Dask array or DataFrame                               ``DaskSource`` (dask),
                                                                     ``scoring.dask``
``backed``   a backed AnnData (``read_h5ad(path, backed="r")``)      ``BackedSource`` (backed),
                                                                     ``scoring.anndata``
===========  ======================================================  ==========================

``base`` holds what every form shares (``Source``: its fields and operations), ``rows`` which
rows are kept (``samples`` and the samples without a label), ``store`` also ``StoreRows`` (rows
of a store not loaded), ``on_disk`` (whether a data set's rows are those) and ``in_memory``.
"""
from __future__ import annotations

from .backed import BackedSource
from .base import Source
from .dask import DaskSource
from .dispatch import (
           AnnDataTransformMixin,
           as_source,
           fit_accepts_anndata,
           matrix_or_store,
           named_targets,
           selector_input,
)
from .matrix import MatrixSource
from .store import StoreRows, StoreSource, in_memory, on_disk
from .stream import StreamSource

__all__ = ["AnnDataTransformMixin", "BackedSource", "DaskSource", "FORMS", "MatrixSource", "Source", "StoreRows",
           "StoreSource", "StreamSource", "as_source", "fit_accepts_anndata", "in_memory", "matrix_or_store",
           "named_targets", "on_disk", "selector_input"]

#: The forms an input takes, one ``Source`` subclass each.
FORMS = tuple(cls.form for cls in (MatrixSource, StreamSource, StoreSource, DaskSource, BackedSource))
