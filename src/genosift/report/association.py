"""The association analysis whose QQ and Manhattan plots a report draws: one ranking, named.

A report shows the p-values of one analysis: the ranking of ``genosift score`` that the hits of
``genosift annotate`` came from (its sidecar names the method, the target, the samples and what
the tests were adjusted for), or, without one, the final ranking of the ``evaluate`` run. Its
QQ plot draws one p-value per distinct pattern where the ranking has them (the k-mers of a
pattern share one test), and both plots draw the genome-wide threshold: alpha over the distinct
patterns tested (pyseer's), or over the features tested where no pattern is known. A ranking
of ``score --lineage`` marks each feature a locus or a lineage effect (its ``effect`` column,
which the hits of ``genosift annotate`` keep): the Manhattan plot draws the lineage effects in
their own colour, and the captions say which lineages are associated with the phenotype.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The family-wise level of the genome-wide threshold drawn when a run records none.
ALPHA = 0.05


@dataclass(frozen=True)
class Association:
    """The p-values a report's QQ and Manhattan plots draw, and what they are.

    Attributes
    ----------
    name : str
        The analysis in words: ``"logistic of 'phenotype' on 40 samples, adjusted for 3
        principal coordinates"``.
    source : str
        Where its p-values were read.
    pvalues : ndarray
        What the QQ plot draws: one p-value per distinct pattern (``over`` is ``"distinct
        patterns"``), or per feature (``"features"``).
    over : str
    inflation, feature_inflation : float
        The genomic inflation factor of ``pvalues``, and of every feature's p-value.
    n_features : int
        The features with a p-value.
    threshold : float
        The genome-wide threshold: ``alpha`` over ``n_tests`` (the distinct patterns, else the
        features tested).
    alpha : float
    n_tests : int
    features : DataFrame or None
        ``feature`` and ``pvalue`` of a ranking, to check hits against (None for evaluate's, or
        a table without a ``feature`` column).
    lineage : dict or None
        With lineage effects (an ``effect`` column): ``associated`` (the lineages associated
        with the phenotype), ``min_r``, ``source`` (the lineages in words, where the sidecar
        says), and ``locus`` and ``lineage``, the rows of each effect below ``threshold``.
    """

    name: str
    source: str
    pvalues: np.ndarray
    over: str
    inflation: float
    feature_inflation: float
    n_features: int
    threshold: float
    alpha: float
    n_tests: int
    features: object = None
    lineage: dict = None

    @property
    def threshold_text(self):
        """The threshold in words, for a caption: ``p < 0.000131 (alpha 0.05 over the 382
        distinct patterns tested)``."""
        return f"p < {self.threshold:.3g} (alpha {self.alpha:g} over the {self.n_tests:,} {self.over} tested)"

    @property
    def lineage_text(self):
        """The lineage effects in words, for a caption ('' without them)."""
        if not self.lineage:
            return ""
        named = self.lineage.get("associated") or []
        which = (f"{', '.join(map(str, named))} associated with the phenotype" if named else
                 "no lineage associated with the phenotype")
        source = f" ({self.lineage['source']})" if self.lineage.get("source") else ""
        r = self.lineage.get("min_r")
        return (f" Lineage effects: the lineages{source}, {which}; of the ranking's rows below the threshold, "
                f"{self.lineage['locus']:,} are locus effects and {self.lineage['lineage']:,} lineage effects (they "
                "follow an associated lineage" + (f" at |r| >= {r:g}" if r is not None else "") + "), drawn in their "
                "own colour in the Manhattan plot.")

    @property
    def threshold_label(self):
        """The threshold in a figure's legend."""
        return f"genome-wide threshold p = {self.threshold:.3g}"


def analysis_name(record, ranking_of=None):
    """An analysis in words from the record of its run (a ranking's sidecar, or evaluate's
    ``run.json``): the method, the target, the samples scored and what the tests were adjusted
    for (principal coordinates, covariates, a kinship); ``ranking_of``: whose ranking it is
    (``"evaluate's final ranking"``)."""
    method = str(record.get("method", "an unnamed method"))
    target = record.get("target")
    words = method + (f" of {target!r}" if isinstance(target, str) else "")
    if isinstance(record.get("n_samples"), int):
        words += f" on {record['n_samples']:,} samples"
    if ranking_of:
        words += f" ({ranking_of})"
    structure = record.get("structure") or {}
    covariates = [str(c) for c in record.get("covariates") or []]
    k = len(structure.get("explained") or []) if isinstance(structure, dict) else 0
    adjusted = []
    if k:
        adjusted.append(f"{k} principal coordinate{'s' if k > 1 else ''}")
    others = covariates[k:] if k else covariates
    if others:
        adjusted.append(f"{'the covariate' if len(others) == 1 else f'{len(others)} covariates'} "
                        f"{', '.join(others[:4])}{', ...' if len(others) > 4 else ''}")
    model = record.get("model") or {}
    kinship = isinstance(model, dict) and "h2" in model
    if adjusted:
        words += ", adjusted for " + " and ".join(adjusted)
    if kinship:
        words += f", with a kinship (mixed model, h2 = {model['h2']:.3g})"
    if not adjusted and not kinship:
        words += ", not adjusted for population structure"
    return words


def read_sidecar(path):
    """The record of the run beside a ranking ``path`` (``<table>.json``), or {} without one."""
    sidecar = Path(str(path) + ".json")
    if not sidecar.is_file():
        return {}
    try:
        record = json.loads(sidecar.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"The sidecar {str(sidecar)!r} of the ranking is not valid JSON ({exc}): it is written by "
                         "genosift score; run it again, or move the broken file away.") from None
    return record if isinstance(record, dict) else {}


def _inflations(p, per_pattern, record):
    """The genomic inflation factor of ``per_pattern`` (of ``p`` without patterns) and of every
    feature: ``p``'s, or the sidecar's where the table holds one row per pattern."""
    from ..scores import genomic_inflation

    over_features = (record["genomic_inflation"] if record.get("collapse_patterns") and "genomic_inflation" in record
                     else genomic_inflation(p))
    return (over_features if per_pattern is None else genomic_inflation(per_pattern)), over_features


def ranking_association(path):
    """The ``Association`` of a ranking table of ``genosift score`` (and its sidecar, which names
    the analysis and gives its threshold; without one, alpha 0.05 over the table's patterns)."""
    from .outputs import pattern_pvalues, read_table

    table = read_table(path, ["feature", "pvalue", "pattern", "effect_kind"], need=["pvalue"])
    record = read_sidecar(path)
    p = table["pvalue"].to_numpy(dtype=float)
    if not np.isfinite(p).any():
        raise ValueError(f"The ranking {str(path)!r} holds no p-value: its method gives none, so it has no QQ plot "
                         "or genome-wide threshold. Score with a method that tests (`genosift methods` lists "
                         "them).")
    per_pattern = pattern_pvalues(table)
    wide = record.get("genome_wide") or {}
    alpha = float(wide.get("alpha", ALPHA))
    if per_pattern is not None:
        n_tests = int(wide.get("n_tests") or record.get("n_patterns") or per_pattern.size)
    else:
        n_tests = int(np.isfinite(p).sum())
    inflation, over_features = _inflations(p, per_pattern, record)
    name = analysis_name(record) if record else f"the ranking {Path(path).name}"
    threshold = float(wide.get("threshold", alpha / n_tests))
    return Association(name, f"the ranking {Path(path).name}", p if per_pattern is None else per_pattern,
                       "features" if per_pattern is None else "distinct patterns", inflation, over_features,
                       int(np.isfinite(p).sum()), threshold, alpha, n_tests,
                       table[["feature", "pvalue"]] if "feature" in table.columns else None,
                       _lineage(table, record, threshold))


def _lineage(table, record, threshold):
    """``Association.lineage`` of a ranking ``table`` with an ``effect`` column (and its sidecar's
    ``record``), or None."""
    if "effect_kind" not in table.columns:
        return None
    with np.errstate(invalid="ignore"):
        below = table["pvalue"].to_numpy(dtype=float) < threshold
    effect = table["effect_kind"].to_numpy(dtype=object)
    about = record.get("lineage_effects") or {}
    return {"associated": list(about.get("associated") or []), "min_r": about.get("min_r"),
            "source": about.get("source"), "locus": int((below & (effect == "locus")).sum()),
            "lineage": int((below & (effect == "lineage")).sum())}


def results_association(results):
    """The ``Association`` of the final ranking of an ``evaluate`` results folder (its
    ``scores.tsv``; no patterns: the threshold is over the features tested)."""
    from ..scores import genomic_inflation

    p = results.scores["pvalue"].to_numpy(dtype=float)
    n = int(np.isfinite(p).sum())
    inflation = genomic_inflation(p)
    return Association(analysis_name(results.run, "evaluate's final ranking"), "the results folder's scores.tsv",
                       p, "features", inflation, inflation, n, ALPHA / n, ALPHA, n)


def check_hits(hits, association, hits_path, ranking_path):
    """Refuse ``hits`` (a hits table of ``genosift annotate``) that are not of the ranking of
    ``association``: each hit's k-mer must be in the ranking with the same p-value."""
    from ..core.messages import FixError

    if association.features is None:
        raise FixError(f"The ranking {str(ranking_path)!r} has no 'feature' column, so the hits {str(hits_path)!r} "
                       "cannot be matched to it: pass in {ranking} the ranking table that genosift annotate read.",
                       owner="make_report", ranking=FixError.ANY)
    located = hits[hits["pvalue"].notna()].drop_duplicates("feature")
    ranked = association.features.drop_duplicates("feature").set_index("feature")["pvalue"]
    theirs = ranked.reindex(located["feature"].astype(str)).to_numpy(dtype=float)
    ours = located["pvalue"].to_numpy(dtype=float)
    differ = ~np.isclose(ours, theirs, rtol=1e-9, atol=0.0)
    if differ.any():
        i = int(np.flatnonzero(differ)[0])
        feature = located["feature"].iloc[i]
        where = "is not in the ranking" if np.isnan(theirs[i]) else f"has p = {theirs[i]:.6g} there"
        raise FixError(f"The hits {str(hits_path)!r} are not those of the ranking {str(ranking_path)!r}: "
                       f"{int(differ.sum()):,} of their {len(located):,} k-mers differ (the k-mer {feature!r} has "
                       f"p = {ours[i]:.6g} in the hits and {where}). Pass in {{ranking}} the ranking that genosift "
                       "annotate read, so that the QQ and Manhattan plots come from one analysis.",
                       owner="make_report", ranking=FixError.ANY)
