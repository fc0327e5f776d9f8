"""What every form of input knows: the ``Source`` base, its fields and its shared operations.

A ``Source`` is one input told apart once (by ``sources.dispatch.as_source``) with its target
and what reading it needs (feature names, rows kept, memory budget, scheduler, covariates,
kinship). Each form is a subclass (``MatrixSource``, ``StreamSource``, ``StoreSource``,
``DaskSource``, ``BackedSource``); the drivers that score, profile and count the patterns of each
are chosen by its class in ``scoring.forms``. Nothing that reads data asks what kind of input it
holds: it asks the Source.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

__all__ = ["Source"]


@dataclass(frozen=True, eq=False)
class Source:
    """One input, in one of ``sources.FORMS``, with its target and what reading it needs.

    Attributes
    ----------
    form : str
        The form's name, one of ``FORMS`` (a class attribute: the subclass says it).
    X : object
        The matrix, the chunk iterator, the ``io.Store``, the Dask collection or the backed AnnData.
    y : object
        The labels or numeric target, one per row scored (for a store also the name of a column
        of its sample table; for a backed AnnData also that of an ``obs`` column); None.
    feature_names : sequence or None
        None: the input's own (a DataFrame's columns, a store's names, ``x0, x1, ...``).
    rows : ndarray or None
        The increasing row indices kept (None: every row): for a store, those read; for a matrix,
        those taken from the data given (``X`` holds just them, ``n_given`` the rows it had), by
        ``samples`` and the samples without a label (see ``as_source``).
    covariates : object
        One row per sample scored (or, for a store or a backed AnnData, per row of the file),
        matched to the samples where they carry ids; None.
    chunk_bytes, scheduler : optional
        The reads of a store or backed file, and where Dask tasks run.
    binary : bool
        For a backed AnnData: read its values as presence/absence (the other forms already are).
    kinship : object
        The samples' kinship in the order of the rows scored; None.
    n_given : int or None
        The rows of the data given to ``as_source`` (data in memory), before rows were taken.
    """

    form: ClassVar[str] = ""
    #: The form in words, for messages that say what an operation cannot read.
    what: ClassVar[str] = ""
    #: Whether more work can ride along the one pass that scores it (``scoring.store.store_scores``'s riders).
    carries_riders: ClassVar[bool] = False

    X: object
    y: object = None
    feature_names: object = None
    rows: object = None
    covariates: object = None
    chunk_bytes: object = None
    scheduler: object = None
    binary: bool = False
    kinship: object = None
    n_given: object = None

    def rows_given(self):
        """How many rows the data had before rows were kept (None: not known)."""
        return self.n_given

    def kept(self, values):
        """``values`` given one per row of the data (a matrix's before its rows were taken, a
        store's rows) for the rows kept; values of another length as they are."""
        n = self.rows_given()
        if self.rows is None or values is None or n is None or len(values) != n:
            return values
        return values.iloc[self.rows] if hasattr(values, "iloc") else np.asarray(values)[self.rows]

    def with_target(self, y):
        """This input with another target ``y`` (None: no target)."""
        return replace(self, y=y)
    def labels(self):
        """The target as values, one per row scored (``y`` as it is, or a store's per-sample column it names)."""
        return self.y

    def ids_scored(self, given):
        """The sample ids of the rows scored, where the data ``given`` to ``as_source`` have ids (a
        DataFrame's index; a store's own), else None."""
        from ..scores import frame_sample_ids

        ids = frame_sample_ids(given)
        return ids if ids is None or self.rows is None else ids[self.rows]

    def column_blocks(self, *, owner):
        """``(n, p, names, blocks)``: the rows scored, the features, their names (or a function giving
        them) and ``(j0, j1, block)`` blocks of whole columns of the rows scored, of about
        ``chunk_bytes`` each, for ``owner`` (the public function, in messages) that reads whole columns."""
        raise ValueError(f"{owner} reads whole columns; it cannot read {self.what}. Pass an array, a sparse matrix, "
                         "a DataFrame, an AnnData in memory, a Dask array or a store (genosift.io.write_store).")

    def float_columns(self, *, owner):
        """``(m, p, blocks)``: the rows scored, the features and ``(j0, j1, block)`` blocks of whole
        columns in float64 (sparse kept sparse), a store's read within its memory budget, for ``owner``
        (the public function, in messages) that reads data in memory or stores."""
        raise ValueError(f"{owner} reads whole columns: pass an array, a sparse matrix, a DataFrame, an AnnData in "
                         "memory or a store, not a stream of row chunks, a Dask collection or a backed AnnData.")
