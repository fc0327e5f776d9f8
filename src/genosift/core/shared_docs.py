"""The documentation of the parameters that the public scoring functions share, written once.

A public function's docstring names a shared parameter on a line of its own, ``{samples}``, and
:func:`shared_docs` puts the text here in its place, indented as that line: ``help()``, the API
pages and the doctests all read the whole text, and the text is written, and corrected, in one place.
"""
from __future__ import annotations

import re

__all__ = ["PARAMETERS", "shared_docs"]

#: The numpydoc entry of each shared parameter (its name line and its description), by name.
PARAMETERS = {
    "feature_names": """\
feature_names : sequence of str, optional
    Names of the columns; by default a DataFrame's columns, a store's or an AnnData's feature
    names, else ``x0, x1, ...``.""",
    "samples": """\
samples : sample ids, boolean mask or row positions, optional
    Which samples to use (by default all): ids of the data's samples where they have ids (a
    DataFrame's index of labels, an AnnData's ``obs_names``, a store's or a data file's
    samples; ids they lack are an error), else (an array, a sparse matrix, a DataFrame with
    a plain integer index) row positions; or a boolean mask of one value per row. The rows
    are used in the data's order, whatever the order of ``samples``. Values given per sample
    (``y`` and, where the function takes them, ``covariates`` and ``kinship``, as arrays) have
    one per row of the data, or one per sample kept. Not for streams of row chunks, Dask
    collections or backed AnnData.""",
    "chunk_bytes": """\
chunk_bytes : int, optional
    For a store (a ``.gs.h5ad`` path or ``genosift.io.Store``): the memory budget of one
    chunk of rows or block of features read from disk (default 256 MiB), and of a backed
    AnnData's reads.""",
    "scheduler": """\
scheduler : distributed.Client or str, optional
    For Dask input and stores: where the tasks run (a client, a scheduler address,
    ``"local:N"``, or a Dask local scheduler name such as ``"threads"``); see
    ``genosift.dask.use_scheduler``. By default Dask's own default for Dask input, and the
    local engine for stores.""",
    "binary": """\
binary : bool, default False
    Read presence/absence: each value becomes 1 where it is above 0, else 0 (NaN stays NaN;
    see ``genosift.presence``), in every input form; sparse stays sparse and a store is read
    that way, not rewritten. SEER and pyseer test k-mers this way; GenoLearn calls it
    ``fisher-binary``.""",
    "af": """\
min_af, max_af : float in [0, 1], optional
    Allele-frequency filter: test only the features carried (value above 0) by a share of
    the scored samples in ``[min_af, max_af]`` (bounds included), as pyseer's own bounds on the
    allele frequency. The others are not tested: score, statistic, p- and q-value NaN, ranked
    after every tested feature, and left out of the Benjamini-Hochberg count. The result then
    has ``af`` (the share carrying each feature), ``tested`` and ``n_tested``, and its table
    an ``af`` column. Methods that score features jointly (``relieff``, ``linear``) see only
    the features inside the range. One bound alone leaves the other at 0 or 1.""",
    "layer": """\
layer : str, optional
    Read ``adata.layers[layer]`` (for example raw ``"counts"``) instead of ``X``, for an
    AnnData or an ``.h5ad`` file.""",
    "covariates": """\
covariates : array-like (n_samples, c), pandas DataFrame or Series, or list of str, optional
    For the methods that adjust for covariates (``genosift.scores.covariate_methods()``):
    one row per sample, in the order of the rows scored, checked by
    ``genosift.scores.check_covariates`` (text and categorical columns of a DataFrame are
    one-hot encoded; constant and collinear covariates are an error naming them). A
    DataFrame or Series indexed by sample id is matched to the samples' ids (a DataFrame's
    index, an AnnData's ``obs_names``, a store's sample ids); for an AnnData or a store, a
    list of names of ``obs`` columns. With ``samples``, one row per row of the data or one
    per sample kept. Given to any other method, or with a stream of row chunks,
    it is an error before any data are read. The result records their names
    (``ScoreResult.covariates``, and ``provenance()``).""",
    "kinship": """\
kinship : array-like (n_samples, n_samples) or DataFrame, optional
    The kinship of the samples, for the mixed model (``method="lmm"``, which needs one):
    ``genosift.kinship(X)`` computes one from the features, or read one from a file. An
    array (or a DataFrame indexed by row position, as ``genosift.kinship`` gives for data
    without ids) is in the order of the rows: one row and column per row of the data, or per
    sample kept by ``samples``; a DataFrame indexed by sample id (its columns the same ids)
    is put in the samples' order. Every input form but a stream of
    row chunks (whole columns are needed); the null model's ``h2`` is the result's ``model``.""",
    "method_options": """\
method_options : dict, optional
    Options of the method, by name (see ``genosift.methods()`` and
    ``genosift.scores.describe(method)``), e.g. ``{"n_neighbors": 20}`` for ``relieff``.""",
}


#: a line that names a shared parameter: its indentation and the name
_PLACE = re.compile(r"^( *)\{(\w+)\}$", re.M)


def shared_docs(func):
    """Decorate a public function whose docstring names shared parameters on lines of their own
    (``{samples}``): each becomes that parameter's entry of ``PARAMETERS``, indented as its line.
    A name that ``PARAMETERS`` lacks is an error when the function is defined. Put it nearest the
    ``def``, so that the decorators above copy the docstring it wrote."""

    def entry(match):
        indent, name = match.groups()
        if name not in PARAMETERS:
            raise KeyError(f"{func.__qualname__}'s docstring names the shared parameter {name!r}, which "
                           f"PARAMETERS lacks")
        return "\n".join(indent + line if line else line for line in PARAMETERS[name].splitlines())

    func.__doc__ = _PLACE.sub(entry, func.__doc__)
    return func
