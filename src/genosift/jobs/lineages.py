"""The lineage effects of a ``score`` run (``score(..., lineage=True)``): which lineages the
training samples fall into, each feature's lineage, the lineages' association with each target,
the table beside the ranking, and what the summary and the sidecar say of them
(``genosift.scoring.lineage`` computes them).

The lineages are the principal coordinates the run adjusts for (``Covariates.structure``); a run
adjusted for none (a mixed model with its kinship, or no structure at all) gets the coordinates
``structure="auto"`` would give, computed for the lineages alone (the tests are not adjusted for
them); or the clusters of a metadata column (``lineage_column``), one lineage per label.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.messages import FixError
from ..core.validation import FixUsageError, names_list

__all__ = ["LineageRun", "check_lineage", "lineage_effects_of", "lineage_lines", "lineage_record", "lineage_run",
           "lineage_table"]


def check_lineage(spec, lineage, lineage_column):
    """Whether lineage effects were asked for (``lineage``, or the clusters of ``lineage_column``),
    checked with the method before any file is read: only a method that takes covariates tests
    features given the lineages."""
    from ..scores import covariate_methods

    if not isinstance(lineage, (bool, np.bool_)):
        raise FixUsageError(f"{{lineage}} is True or False; got {lineage!r}.", owner="score", lineage=FixUsageError.ANY)
    if lineage_column is not None and (not isinstance(lineage_column, str) or not lineage_column):
        raise FixUsageError(f"{{lineage_column}} names a column of the samples' metadata; got {lineage_column!r}.",
                            owner="score", lineage_column=FixUsageError.ANY)
    wanted = bool(lineage) or lineage_column is not None
    if wanted and not spec.covariates:
        raise FixUsageError(f"Lineage effects ({{lineage}}) tell locus effects from lineage effects in a test "
                            f"adjusted for the lineages, and method '{spec.name}' adjusts for nothing; the methods "
                            f"that do: {', '.join(covariate_methods())}. Choose one of them with {{method}} (logistic "
                            "or regression with {structure}, or lmm with a kinship), or leave out {lineage}.",
                            owner="score", lineage=FixUsageError.ANY, method=FixUsageError.ANY,
                            structure=FixUsageError.ANY)
    return wanted


def lineage_table(out):
    """Where the lineages' association with the phenotype goes: ``<out>.lineages.tsv``."""
    out = Path(out)
    return out.with_name(out.name + ".lineages.tsv")


@dataclass
class LineageRun:
    """The lineages of the training samples and each feature's (the same for every target).

    Attributes
    ----------
    lineages : DataFrame (n, k)
        The coordinates or cluster indicators, one row per training sample.
    others : DataFrame or None
        The run's other covariates (not the lineages), in every regression of the phenotype.
    explained : list or None
        The coordinates' shares of the variance.
    joint : bool
        Coordinates tested together (True) or clusters each against the others.
    words : str
        Where the lineages came from, in words.
    best, r : ndarray (p,)
        Each feature's lineage and its correlation (``scoring.lineage.feature_lineages``).
    """

    lineages: object
    others: object
    explained: object
    joint: bool
    words: str
    best: np.ndarray
    r: np.ndarray


def lineage_run(labelled, frame, covariates, patterns, *, lineage_column=None):
    """The ``LineageRun`` of the training samples of ``labelled`` (their covariates ``frame``,
    as ``covariates`` made it) and of the features' ``patterns``."""
    from ..scoring.lineage import feature_lineages
    from .labelled import labelled_source

    lineages, others, explained, joint, words = _lineages(labelled, frame, covariates, lineage_column)
    best, r = feature_lineages(labelled_source(labelled), lineages, patterns=patterns)
    return LineageRun(lineages, others, explained, joint, words, best, r)


def _lineages(labelled, frame, covariates, column):
    """``(lineages, other covariates, explained, joint, words)`` of the training samples."""
    from ..scoring.lineage import lineage_frame

    structure = labelled.structure or {}
    k = len(structure.get("explained") or [])
    others = frame.iloc[:, :-k] if frame is not None and k else frame
    others = None if others is None or others.shape[1] == 0 else others
    if column is not None:
        obs = labelled.dataset.obs
        if obs is None or column not in obs.columns:
            have = [] if obs is None else [str(c) for c in obs.columns]
            raise FixError(f"{{lineage_column}} names the column {column!r}, which the samples' metadata lack; their "
                           f"columns: {names_list(have, 20) or 'none'}. Name a column of {{meta}} (or of the data "
                           "table) that holds each sample's lineage.", owner="score", lineage_column=FixError.ANY,
                           meta=FixError.ANY)
        labels = obs[column].iloc[np.flatnonzero(labelled.train)]
        labels = labels.set_axis([str(s) for s in np.asarray(labelled.dataset.sample_ids)[labelled.train]], axis=0)
        try:
            table = lineage_frame(labels)
        except ValueError as exc:
            raise FixError("{lineage_column} " + _literal(f"{column!r}: {exc}"), owner="score",
                           lineage_column=FixError.ANY) from None
        return table, others, None, False, f"the {table.shape[1]} clusters of the column {column!r}"
    if k:
        return (frame.iloc[:, -k:], others, list(structure["explained"]), True,
                f"the {k} principal coordinate(s) adjusted for")
    from ..workflow.covariates import structure_covariates

    metric = {} if covariates.structure_metric is None else {"metric": covariates.structure_metric}
    pcs = structure_covariates(labelled, "auto", rows=labelled.train,
                               distinct=covariates.structure_count == "patterns", **metric)
    rule = pcs.attrs.get("rule", f"{pcs.shape[1]} principal coordinate(s)")
    labelled.notes.append(f"lineages of the lineage effects: {rule}; computed for the lineage effects only (the "
                          "tests are not adjusted for them)")
    return pcs, others, list(pcs.attrs["explained"]), True, (f"{pcs.shape[1]} principal coordinate(s) chosen by "
                                                             "their scree, not adjusted for")


def _literal(text):
    """``text`` inside a message template, its braces kept as they are."""
    return text.replace("{", "{{").replace("}", "}}")


def lineage_effects_of(run, y, alpha):
    """The ``LineageEffects`` of one target ``y`` (the training samples' values) at the level
    ``alpha``."""
    from ..scoring.lineage import LINEAGE_R, LineageEffects, lineage_association

    found = lineage_association(run.lineages, y, covariates=run.others, explained=run.explained, alpha=alpha,
                                joint=run.joint)
    return LineageEffects(found, run.best, run.r, LINEAGE_R)


def _split(effects, passing, patterns):
    """``{"locus": n, "lineage": n}`` of the features ``passing`` and of their distinct patterns."""
    lineage = passing & effects.is_lineage
    locus = passing & (effects.best >= 0) & ~effects.is_lineage
    ids = patterns.ids

    def distinct(mask):
        return int(np.unique(ids[mask & (ids >= 0)]).size)

    return ({"locus": int(locus.sum()), "lineage": int(lineage.sum())},
            {"locus": distinct(locus), "lineage": distinct(lineage)})


def lineage_record(effects, run, passing, patterns, table):
    """What the sidecar keeps of the lineage effects (``lineage_effects``)."""
    features, distinct = _split(effects, passing, patterns) if passing is not None else (None, None)
    return {**effects.lineages.record(), "source": run.words, "min_r": effects.min_r, "table": str(table),
            "passing_features": features, "passing_patterns": distinct}


def lineage_lines(effects, run, passing, patterns, table):
    """The summary's lines: the lineages, those associated with the phenotype, and how many of
    the features ``passing`` the genome-wide threshold are locus and lineage effects."""
    found = effects.lineages
    test = "logistic regression" if found.model == "logistic" else "least squares"
    how = "together" if found.joint else "each against the others"
    lines = [f"  lineage effects: the lineages are {run.words}; the phenotype's {test} on them ({how}) is in "
             f"{table.name}"]
    p = found.pvalue
    if found.associated.any():
        named = ", ".join(f"{n} (p = {v:.3g})" for n, v, a in zip(found.names, p, found.associated) if a)
        lines.append(f"    associated with the phenotype (Wald p < {found.threshold:.3g}, alpha {found.alpha:g} over "
                     f"{len(found.names)}): {named}")
    else:
        best = ("" if np.isnan(p).all() else
                f" (the smallest p is {np.nanmin(p):.3g}, {found.names[int(np.nanargmin(p))]})")
        lines.append(f"    no lineage is associated with the phenotype at p < {found.threshold:.3g}{best}: every "
                     "feature is a locus effect")
    lines += [f"    {note}" for note in found.notes]
    if passing is not None and passing.any():
        features, distinct = _split(effects, passing, patterns)
        lines.append(f"    of the {int(passing.sum()):,} feature(s) passing the genome-wide threshold: "
                     f"{features['locus']:,} locus effect(s) in {distinct['locus']:,} pattern(s), "
                     f"{features['lineage']:,} lineage effect(s) in {distinct['lineage']:,} pattern(s) (a lineage "
                     f"effect follows an associated lineage at |r| >= {effects.min_r:g})")
    return lines
