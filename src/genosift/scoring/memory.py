"""Scoring data in memory: arrays, sparse matrices, DataFrames and streams of row chunks."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.distinct import distinct_columns
from ..core.engine import block_width, column_blocks, map_blocks
from ..core.transforms import zeros_and_ones
from ..core.validation import as_matrix
from ..scores import (
    CarrierTap,
    Deduplicated,
    Scores,
    af_tested,
    build_result,
    carriers,
    check_classes,
    check_covariates,
    finish,
    finite_blocks,
    join_scores,
    make_target,
    make_targets,
    score_blocks,
    statistics,
    stream_statistics,
    with_af,
    with_covariates,
)
from ..stats import class_positives

__all__ = ["score_memory", "score_memory_targets", "score_stream"]


def _score_columns(spec, X, y, names, opts, covariates=None, kinship=None):
    """Run a "blocks" or "matrix" method on in-memory data (with the ``covariates`` of its rows);
    ``y`` a tuple of targets: a "blocks" method fits them all in one pass, a list of results."""
    M, frame_names = as_matrix(X, keep_csc=spec.streaming == "blocks")  # blocks of columns: CSC as it is
    names = frame_names if names is None else np.asarray(names, dtype=object)
    Z, covariate_names = check_covariates(covariates, M.shape[0])
    many = isinstance(y, tuple)
    target = make_targets(spec, y, M.shape[0], Z, kinship) if many else make_target(spec, y, M.shape[0], Z, kinship)
    for each in target if many else (target,):
        check_classes(spec, each)
    if spec.positives is not None and Z is None and zeros_and_ones(M):
        found = [_score_presence(spec, M, each, names, opts) for each in (target if many else (target,))]
        return found if many else found[0]
    columns = inverse = None
    if spec.distinct:  # each distinct column scored once
        M = M.tocsc() if sp.issparse(M) else M
        columns, inverse = distinct_columns(M) or (None, None)
    width = block_width(M.shape[0], M.shape[1] if columns is None else len(columns))
    blocks = column_blocks(M, width, keep_sparse=spec.sparse_blocks, columns=columns)
    if spec.streaming == "matrix":
        for _ in finite_blocks(blocks, names):  # the finiteness check, one block at a time
            pass
        if spec.scale_free:
            from ..core.validation import rescale_huge

            M = rescale_huge(M)
        return build_result(spec, spec.func(M, target, **opts), target, names, opts)
    deduplicated = Deduplicated(inverse) if spec.distinct else None  # the distinct columns found above
    found = score_blocks(spec, blocks, target, names, opts, deduplicated=deduplicated)
    if many:
        return [with_covariates(res, covariate_names) for res in found]
    return with_covariates(found, covariate_names)


def _score_presence(spec, M, target, names, opts):
    """A method registered with ``positives`` on data that are all 0 and 1: each class's count of
    1s from one pass over the rows (no copy by columns), then the features' scores from them a
    block at a time on the engine's threads."""
    counts = class_positives(M, target.codes, target.count.shape[0])
    p = counts.shape[1]
    width = block_width(M.shape[0], p)
    parts = map_blocks(lambda j0: spec.positives(counts[:, j0:j0 + width], target, **opts), range(0, p, width))
    return build_result(spec, join_scores(parts), target, names, opts)


def _score_kept(spec, M, y, names, opts, counts, bounds):
    """A "matrix" method (it scores the features jointly) on the features inside the
    allele-frequency range only; the others come back NaN."""
    from ..core.validation import default_feature_names

    n, p = M.shape
    for _ in finite_blocks(column_blocks(M, block_width(n, p)), names):  # every feature, as without a filter
        pass
    keep = np.flatnonzero(af_tested(counts / n, bounds))
    if keep.size == p:
        return _score_columns(spec, M, y, names, opts)
    target = make_target(spec, y, n)
    check_classes(spec, target)
    full = np.full(p, np.nan)
    out = Scores(full, None, full.copy(), None)
    if keep.size:
        every = default_feature_names(p) if names is None else np.asarray(names, dtype=object)
        part = _score_columns(spec, M[:, keep], y, every[keep], opts)
        arrays = []
        for values in (part.statistic, part.pvalues, part.scores, part.rank_key):
            if values is None:
                arrays.append(None)
                continue
            wide = np.full(p, np.nan)
            wide[keep] = values
            arrays.append(wide)
        out = Scores(*arrays)
    return build_result(spec, out, target, names, opts)


def _score_af(spec, X, y, feature_names, opts, bounds, covariates=None, kinship=None):
    """``score`` on data in memory, with the allele-frequency filter ``bounds``."""
    M, frame_names = as_matrix(X, keep_csc=spec.streaming == "blocks")
    names = frame_names if feature_names is None else np.asarray(feature_names, dtype=object)
    counts = carriers(M)
    if spec.streaming == "matrix":
        result = _score_kept(spec, M, y, names, opts, counts, bounds)
    elif spec.streaming == "blocks":
        result = _score_columns(spec, M, y, names, opts, covariates, kinship)
    else:
        stats, names = statistics(spec, M, y, feature_names=names)
        result = finish(spec, stats, names, opts)
    return with_af(result, counts, bounds)


def score_stream(spec, chunks, feature_names, opts, bounds=None):
    """``genosift.score`` of a stream of ``(X, y)`` row chunks (merged exactly), with the checked
    options ``opts`` and the allele-frequency filter ``bounds`` (None: none)."""
    if spec.streaming != "rows":
        raise ValueError(
            f"Method '{spec.name}' needs every sample of a feature at once (it works on whole "
            "columns), so it cannot read a stream of row chunks. Pass an array, a sparse matrix or "
            "a DataFrame."
        )
    if bounds is None:
        stats, names = stream_statistics(spec, chunks, feature_names=feature_names)
        return finish(spec, stats, names, opts)
    tap = CarrierTap()
    stats, names = stream_statistics(spec, tap.pairs(chunks), feature_names=feature_names)
    return with_af(finish(spec, stats, names, opts), tap.counts, bounds)


def score_memory(spec, X, y, feature_names, opts, bounds=None, covariates=None, *, kinship=None):
    """``genosift.score`` of data in memory, with the
    checked options ``opts``, the allele-frequency filter ``bounds`` (None: none), the
    ``covariates`` of the rows (one row per sample, for the methods that take them) and their
    ``kinship`` (for the methods that need one)."""
    if bounds is not None:
        return _score_af(spec, X, y, feature_names, opts, bounds, covariates, kinship)
    if spec.streaming != "rows":
        return _score_columns(spec, X, y, feature_names, opts, covariates, kinship)
    stats, names = statistics(spec, X, y, feature_names=feature_names)
    return finish(spec, stats, names, opts)


def score_memory_targets(spec, X, ys, feature_names, opts, bounds=None, covariates=None, *, kinship=None):
    """``score_memory`` of several targets ``ys`` (a tuple of one value per row each) of the same
    rows of a matrix (not a stream): a list of results in their order. A "blocks" method fits
    every target on each block in one pass over the columns (``_score_columns`` with a tuple:
    ``make_targets`` checks the covariates and the kinship once, a mixed model rotates each block
    once); the other methods score the matrix once per target."""
    M, frame_names = as_matrix(X, keep_csc=spec.streaming == "blocks")
    names = frame_names if feature_names is None else np.asarray(feature_names, dtype=object)
    if spec.streaming != "blocks":
        return [score_memory(spec, M, y, names, opts, bounds, covariates, kinship=kinship) for y in ys]
    counts = None if bounds is None else carriers(M)
    return [with_af(res, counts, bounds) for res in _score_columns(spec, M, tuple(ys), names, opts, covariates,
                                                                     kinship)]
