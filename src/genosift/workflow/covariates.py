"""The covariates of labelled samples, from a covariates table and from their metadata columns."""
from __future__ import annotations

import numpy as np

from ..core.messages import FixError
from ..core.validation import names_list
from ..scores.covariates import missing_columns

__all__ = ["labelled_covariates", "structure_covariates"]


def _samples_read(labelled, rows):
    """``(data, samples, ids)``: what the sample-structure functions read for the labelled
    samples ``rows`` (a boolean mask; None: all): a store with the ids of its rows to keep, or
    the rows themselves (``samples`` None); and the samples' ids as text."""
    dataset = labelled.dataset
    keep = np.arange(len(dataset.sample_ids)) if rows is None else np.flatnonzero(rows)
    ids = [str(s) for s in np.asarray(dataset.sample_ids)[keep]]
    X = dataset.X
    if labelled.on_disk:  # the store's own rows, picked by id
        return X.store, list(np.asarray(X.store.sample_ids, dtype=object)[X.rows[keep]]), ids
    return (X if rows is None else X[keep]), None, ids  # every row: the data themselves, not a copy


def structure_covariates(labelled, n_components, *, rows=None, metric="kmds", distinct=True):
    """The top ``n_components`` principal coordinates of the labelled samples ``rows`` (a boolean
    mask; None: all), computed from their data (``genosift.genomics.structure.principal_coordinates``:
    a store read in feature blocks within ``labelled.chunk_bytes``, never loaded), indexed by the
    samples' ids as text, columns ``PC1 .. PCk``. No label is used: population structure only.
    ``distinct``: each distinct pattern counted once (see ``principal_coordinates``)."""
    from ..genomics.structure import principal_coordinates

    data, samples, ids = _samples_read(labelled, rows)
    frame = principal_coordinates(data, n_components, metric=metric, distinct=distinct,
                                  chunk_bytes=labelled.chunk_bytes, samples=samples)
    return frame.set_axis(ids, axis=0)


def kinship_of_labelled(labelled, *, rows=None, binary=False, distinct=True):
    """The kinship of the labelled samples ``rows`` (a boolean mask; None: all) from their data
    (``genosift.genomics.structure.kinship``: a store read in feature blocks within
    ``labelled.chunk_bytes``),
    indexed and with columns by the samples' ids as text (``attrs["n_used"]``: the features or,
    ``distinct``, the distinct patterns it counts). No label is used."""
    import pandas as pd

    from ..genomics.structure import kinship

    data, samples, ids = _samples_read(labelled, rows)
    K = kinship(data, binary=binary, distinct=distinct, chunk_bytes=labelled.chunk_bytes, samples=samples)
    frame = pd.DataFrame(np.asarray(K), index=ids, columns=ids)
    frame.attrs["n_used"] = K.attrs.get("n_used") if hasattr(K, "attrs") else None
    return frame


def labelled_covariates(labelled, *, table=None, columns=(), rows=None, structure=None):
    """``(covariates, notes)`` of the labelled samples ``rows`` (a boolean mask; None: all).

    Parameters
    ----------
    labelled : genosift.jobs.labelled.Labelled
        The labelled samples (``genosift.jobs.labelled.load_labelled``).
    table : pandas.DataFrame, optional
        A covariates table indexed by sample id (``genosift.io.read_covariates``), matched by id
        (``genosift.io.match_covariates``: every sample needs a row).
    columns : sequence of str
        Per-sample columns of the labelled samples (their metadata, ``--meta``) to use as
        covariates too; text columns are one-hot encoded when scored.
    rows : boolean array, optional
        The samples whose covariates are wanted (the training samples of a score), in order.
    structure : pandas.DataFrame, optional
        Principal coordinates of those samples (``structure_covariates``), added last.

    Returns
    -------
    (pandas.DataFrame or None, list of str)
        The table's columns, then ``columns``, then ``structure``'s, one row per sample in the
        order of the samples, indexed by their ids (as text, so that messages name them); None
        without covariates. ``notes``: how the table matched.
    """
    import pandas as pd

    from ..io.covariate_table import match_covariates

    dataset = labelled.dataset
    keep = np.arange(len(dataset.sample_ids)) if rows is None else np.flatnonzero(rows)
    ids = pd.Index([str(s) for s in np.asarray(dataset.sample_ids)[keep]])
    parts, notes = [], []
    if table is not None:
        frame, report = match_covariates(ids, table)
        parts.append(frame)
        notes.append(str(report))
    if columns:
        obs = dataset.obs
        have, missing = missing_columns(obs, columns)
        if missing:
            raise FixError(f"{{covariate}} names column(s) {names_list(missing)} that the samples' metadata "
                           f"do not have; their columns: {names_list(have, 20) or 'none'}. Name columns of {{meta}} "
                           "(or of the data table, kept with {keep}), or pass a covariates table with {covariates}.",
                           owner="labelled_covariates", covariate=FixError.ANY, meta=FixError.ANY,
                           covariates=FixError.ANY, keep=FixError.ANY)
        parts.append(obs[list(columns)].iloc[keep].set_axis(ids, axis=0))
    if structure is not None:
        parts.append(structure.set_axis(ids, axis=0))
    if not parts:
        return None, notes
    names = [str(c) for part in parts for c in part.columns]
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise FixError(f"The covariate column(s) {names_list(repeated)} come twice (from the covariates table and "
                       "from the metadata, or named twice): give each covariate once, in {covariates} or with "
                       "{covariate}.", owner="labelled_covariates", covariates=FixError.ANY, covariate=FixError.ANY)
    return pd.concat(parts, axis=1), notes
