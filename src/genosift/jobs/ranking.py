"""The jobs ``score`` and ``select``: labelled samples in, a ranking table or the selected columns out.

Each checks every option and output before it reads a file, scores the training samples through
their ``Source`` (a store streamed, other data in memory), profiles them, writes its outputs
atomically with their provenance, and returns a ``Ranking`` that says what it did.
"""
from __future__ import annotations

import os
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.files import together
from ..core.messages import FixError, FixText, PythonText, SummaryLines
from ..core.validation import FixUsageError, renamed_parameters
from .inputs import Covariates, check_declared
from .lineages import lineage_table

__all__ = ["TARGET_FIELD", "THRESHOLDS", "GenomeWide", "Ranking", "Rankings", "Rule", "as_usage", "checked_options",
           "genome_wide", "inflations", "passing_features", "score", "select"]

#: The named p-value thresholds: alpha over the number of distinct patterns of the features
#: tested (pyseer's genome-wide threshold), or over the number of features tested.
THRESHOLDS = ("bonferroni-patterns", "bonferroni")


@dataclass
class Ranking(SummaryLines):
    """What ``score`` or ``select`` did.

    Attributes
    ----------
    result : ScoreResult
        The scores of the training samples.
    mask : ndarray of bool
        The features selected by the rule (none without one).
    patterns : Patterns
        The distinct patterns of the features tested (``genosift.scoring.patterns``).
    outputs : list of Path
        The files written (the table and its JSON sidecar; with ``lineage``, the lineages' table).
    notes : list of str
        What was dropped, matched or written on the way.
    lines : list of str
        The summary the command prints: the run, the notes, what passes the genome-wide
        threshold, the ten best features. A line of advice that names parameters is a
        ``core.messages.FixText``: ``spelled`` writes them as the caller types them.
    seconds : float
    genome_wide : GenomeWide or None
        The genome-wide threshold and what passes it (None for a method without p-values).
    lineage : LineageEffects or None
        With ``lineage``: each feature's lineage and the lineages' association with the
        phenotype (``genosift.scoring.lineage``).
    """

    result: object
    mask: np.ndarray
    patterns: object
    outputs: list
    notes: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    seconds: float = 0.0
    genome_wide: object = None
    lineage: object = None


@dataclass(frozen=True)
class Rule:
    """How the ``selected`` column is made: the ``top`` best, q-value <= ``fdr``, or p-value below
    ``threshold`` (a name of ``THRESHOLDS``, alpha over a count, or a number); at most one, and
    without one no feature is selected. ``alpha`` is the family-wise level of a named threshold
    and of the genome-wide threshold the summary reports (``genome_wide``)."""

    top: object = None
    fdr: object = None
    threshold: object = None
    alpha: float = 0.05

    @property
    def given(self):
        """Whether a rule was given (without one, no feature is selected)."""
        return any(rule is not None for rule in (self.top, self.fdr, self.threshold))

    def check(self, spec, required=False):
        """Before any file is read: one rule (``required``: exactly one), that the method can use."""
        from .labelled import one_rule

        one_rule(self.top, self.fdr, self.threshold, required=required)
        if not 0 < self.alpha < 1:
            raise FixUsageError(f"{{alpha}} is a significance level in (0, 1); got {self.alpha!r}.", owner="select",
                                alpha=FixUsageError.ANY)
        named = isinstance(self.threshold, str)
        if named and self.threshold not in THRESHOLDS or not named and self.threshold is not None and not (
                isinstance(self.threshold, (int, float)) and not isinstance(self.threshold, bool)
                and 0 < self.threshold <= 1):
            raise FixUsageError(f"{{threshold}} is one of {', '.join(THRESHOLDS)} or a p-value in (0, 1]; got "
                                f"{self.threshold!r}.", owner="select", threshold=FixUsageError.ANY)
        for name in ("fdr", "threshold"):
            if getattr(self, name) is not None and not spec.has_pvalues:
                raise FixError(f"{{{name}}} needs p-values, and method '{spec.name}' has none. Use {{top}}.",
                               owner="select_mask", **{name: FixError.ANY}, top=FixError.ANY)

    def pvalue(self, result, patterns):
        """The p-value threshold, once the features tested and their patterns are known (or None)."""
        if self.threshold == "bonferroni-patterns":
            return self.alpha / patterns.n_patterns if patterns.n_patterns else float("nan")
        if self.threshold == "bonferroni":
            tested = result.n_features if result.tested is None else int(result.tested.sum())
            return self.alpha / tested if tested else float("nan")
        return self.threshold

    def mask(self, result, patterns):
        from .labelled import select_mask

        return select_mask(result, top=self.top, fdr=self.fdr, pvalue=self.pvalue(result, patterns))

    def record(self, result, patterns):
        """The rule as the sidecar keeps it."""
        out = {"top": self.top, "fdr": self.fdr}
        if self.threshold is not None:
            out.update(threshold=self.threshold, alpha=self.alpha, pvalue=self.pvalue(result, patterns))
        return out


def as_usage(exc):
    """``exc`` (a bad value of a job's parameter) as a usage error, spelled as it was."""
    from ..core.messages import Spelled
    from ..core.validation import UsageError

    if isinstance(exc, Spelled):  # the method's options are the job's ``method_options``
        params = {k: FixUsageError.ANY if k == "method_options" else v for k, v in exc.params.items()}
        return FixUsageError(exc.template, owner=exc.owner, **params)
    return UsageError(str(exc))


def checked_options(spec, method_options, min_af, max_af, covariates):
    """The method's options (defaults filled in), checked with the allele-frequency bounds and
    whether the method takes ``covariates``: values that do not fit are the call's usage errors,
    raised before any file is read."""
    from ..scores import check_af, check_options, refuse_covariates

    try:
        check_af(min_af, max_af)
        opts = check_options(spec, dict(method_options or {}))
        if covariates:
            refuse_covariates(spec)
    except (TypeError, ValueError) as exc:
        raise as_usage(exc) from None
    return opts


@dataclass(frozen=True)
class _Run:
    """What one run of ``score`` or ``select`` was asked: the samples (and how they are read), the
    rule, the method and its options, the adjustments, and how the run writes (force, the command
    recorded, when it started). ``_checked`` fills in the method's spec, its options checked, the
    files read and whether lineage effects are wanted."""

    samples: object
    rule: Rule
    method: str = "fisher"
    method_options: object = None
    covariates: Covariates = None
    min_af: object = None
    max_af: object = None
    force: bool = False
    command: object = None
    started: float = 0.0
    collapse_patterns: bool = False
    lineage: bool = False
    lineage_column: object = None
    spec: object = None
    opts: dict = None
    inputs: tuple = ()


def _checked(run, outputs, *, required, owner="score"):
    """The method, the rule, the scoring options and the outputs (each table and its sidecar, and
    with lineage effects its lineages' table), checked before any file is read: ``(run, [(table,
    sidecar)])``, the run with its spec, options, covariates and inputs filled in."""
    from dataclasses import replace

    from ..report.outputs import check_outputs, check_table_name
    from ..scores import check_kinship_given, get_method
    from .lineages import check_lineage

    spec = get_method(run.method)
    run.rule.check(spec, required)
    covariates = run.covariates if run.covariates is not None else Covariates()
    opts = checked_options(spec, run.method_options, run.min_af, run.max_af, covariates)
    try:  # the kinship itself is read later, from a file or the data
        check_kinship_given(spec, True if covariates.has_kinship else None)
    except ValueError as exc:
        raise as_usage(exc) from None
    wanted = check_lineage(spec, run.lineage, run.lineage_column)
    pairs = [(Path(out), Path(out).with_name(Path(out).name + ".json")) for out in outputs]
    for out, _ in pairs:
        check_table_name(out)
    written = [path for pair in pairs for path in pair] + [lineage_table(out) for out, _ in pairs if wanted]
    inputs = (*run.samples.inputs, *covariates.inputs)
    check_declared([("output", path) for path in written], owner=owner, samples=run.samples, covariates=covariates)
    covariates.check_outputs(force=run.force, inputs=inputs)
    check_outputs(written, force=run.force, inputs=inputs)
    return replace(run, spec=spec, opts=opts, covariates=covariates, inputs=inputs, lineage=wanted), pairs


@dataclass(frozen=True)
class _Ranked:
    """One ranking made: the labelled samples, the scores of their training samples, their
    profile and patterns, and what the run's rule selects (``mask``), the genomic inflation
    (``lams``: over the features and the patterns) and the genome-wide threshold (``wide``)."""

    labelled: object
    result: object
    profile: object
    patterns: object
    mask: np.ndarray
    lams: tuple
    wide: object

    @classmethod
    def of(cls, labelled, result, profile, patterns, rule):
        """The ranking of ``result`` under ``rule``."""
        return cls(labelled, result, profile, patterns, rule.mask(result, patterns), inflations(result, patterns),
                   genome_wide(result, patterns, rule.alpha))


def _read(run):
    """Read and label the samples, and make the covariates and kinship of the training ones:
    ``(labelled, covariates frame or None, kinship or None)``."""
    samples, covariates = run.samples, run.covariates
    labelled = samples.load(layout="csc" if run.spec.streaming == "blocks" else None)
    frame = covariates.of(labelled, rows=labelled.train, force=run.force)
    kinship = covariates.kinship_of(labelled, rows=labelled.train, binary=samples.binary)
    return labelled, frame, kinship


def _scored(run, *, folder):
    """Read, label, score on the training samples, profile, find the patterns and select:
    ``(_Ranked, covariates frame)``."""
    from ..dask import use_scheduler
    from ..scores import check_af
    from .labelled import score_labelled

    labelled, frame, kinship = _read(run)
    scheduler = run.samples.scheduler
    if scheduler and not labelled.on_disk:
        raise FixError(f"{{scheduler}} scores a store (.gs.h5ad) on Dask workers, which read it themselves; "
                       f"{str(run.samples.data)!r} is read into memory here. Convert it once with {{write_store}}, or "
                       "leave out {scheduler}.", owner="score", scheduler=FixError.ANY,
                       write_store=PythonText("genosift.io.write_store"))
    with use_scheduler(scheduler):  # None: the local engine
        result, prof, patterns = score_labelled(labelled, method=run.spec.name, opts=run.opts,
                                                bounds=check_af(run.min_af, run.max_af), covariates=frame,
                                                folder=folder, kinship=kinship)
    return _Ranked.of(labelled, result, prof, patterns, run.rule), frame


def _written(run, ranked, out, sidecar, *, digests, target=None, notes=True, lineage=None):
    """Write the ranking table ``out`` of ``ranked`` and its ``sidecar`` (``target``: the target
    of one of several, whose names the sidecar lists; ``lineage``: the run's
    ``jobs.lineages.LineageRun``, whose effects on this target are added to the ranking, with the
    lineages' table beside it) and say what was done: a ``Ranking`` (``notes``: its summary
    repeats the run's notes)."""
    from ..report.outputs import ranking_frames, write_frame
    from .lineages import lineage_effects_of, lineage_lines, lineage_record

    labelled, result, patterns, wide = ranked.labelled, ranked.result, ranked.patterns, ranked.wide
    force, started = run.force, run.started
    written, more, extra = [out, sidecar], {} if target is None else {"targets": run.samples.targets}, []
    effects = None
    if lineage is not None:
        y = labelled.y_train if target is None else labelled.train_values(target)
        effects, table = lineage_effects_of(lineage, y, run.rule.alpha), lineage_table(out)
        passing = None if wide is None else passing_features(result, wide.threshold)
        write_frame(effects.lineages.to_frame(), table, force=force)
        written.append(table)
        more["lineage_effects"] = lineage_record(effects, lineage, passing, patterns, table)
        extra = lineage_lines(effects, lineage, passing, patterns, table)
    frames = ranking_frames(result, ranked.mask, ranked.profile, patterns=patterns, collapse=run.collapse_patterns,
                            lineage=effects)
    write_frame(frames, out, sidecar=sidecar, force=force,
                provenance=lambda: {**_provenance(run, ranked, digests=digests.result(), target=target),
                                    "collapse_patterns": bool(run.collapse_patterns), **more})
    where = f"{out} and {sidecar.name}" if effects is None else f"{out}, {sidecar.name} and {written[-1].name}"
    lines = _lines(run, ranked, where, notes=notes, extra=extra, lineage=effects)
    return Ranking(result, ranked.mask, patterns, written, list(labelled.notes),
                   lines if target is None else [f"target {target!r}:", *lines], time.perf_counter() - started, wide,
                   effects)


def _provenance(run, ranked, *, digests, target=None):
    """The sidecar of ``score`` and ``select``: the result's provenance, the inputs' checksums
    (``digests``), the selection rule, the patterns' count, the samples scored and their class
    counts (of ``target``, by default the run's one), the seconds since the run started, and the
    genomic inflation and genome-wide threshold."""
    labelled, result, patterns = ranked.labelled, ranked.result, ranked.patterns
    y = labelled.y_train if target is None else labelled.train_values(target)
    record = {
        **result.provenance(),
        "command": run.command,
        "inputs": digests,
        "target": target or run.samples.target,
        "selection": {**run.rule.record(result, patterns), "n_selected": int(ranked.mask.sum())},
        **({} if patterns is None else {"n_patterns": patterns.n_patterns}),
        **({} if labelled.structure is None else {"structure": labelled.structure}),
        "samples_used": [str(s) for s in labelled.dataset.sample_ids[labelled.train]],
        "class_counts": {str(c): int((y == c).sum()) for c in np.unique(y)},
        "notes": labelled.notes,
        "seconds": round(time.perf_counter() - run.started, 3),
    }
    over_features, over_patterns = ranked.lams
    if over_features is not None:
        record["genomic_inflation"] = over_features
    if over_patterns is not None:
        record["genomic_inflation_patterns"] = over_patterns
    if ranked.wide is not None:
        record["genome_wide"] = ranked.wide.record()
    return record


def inflations(result, patterns):
    """The genomic inflation factor (``scores.genomic_inflation``) of the features tested, and
    of their distinct patterns, one p-value each (its first feature's, which every feature of
    the pattern shares: the same values give the same test): ``(over the features, over the
    patterns)``, None for a method without p-values (the second also where no pattern is known).
    With thousands of k-mers per pattern, the patterns' figure is the one that tells."""
    from ..scores import genomic_inflation

    if result.pvalues is None:
        return None, None
    known = patterns is not None and patterns.n_patterns > 0
    return (genomic_inflation(result.pvalues),
            genomic_inflation(result.pvalues[patterns.first]) if known else None)


@dataclass(frozen=True)
class GenomeWide:
    """The genome-wide threshold of a run and what passes it.

    Attributes
    ----------
    threshold : float
        ``alpha`` over the ``n_tests`` distinct patterns of the features tested (pyseer's
        genome-wide threshold).
    alpha, n_tests : float, int
    n_features, n_patterns : int
        The features whose p-value is below ``threshold`` (strictly, as ``--threshold``
        selects), and their distinct patterns.
    best_pvalue, best_qvalue : float
        The smallest p- and q-value of the features tested (NaN without one).
    """

    threshold: float
    alpha: float
    n_tests: int
    n_features: int
    n_patterns: int
    best_pvalue: float
    best_qvalue: float

    def record(self):
        """What the sidecar keeps (``genome_wide``; a NaN as null)."""
        return {"threshold": self.threshold, "alpha": self.alpha, "over": "patterns", "n_tests": self.n_tests,
                "n_features_passing": self.n_features, "n_patterns_passing": self.n_patterns,
                "best_pvalue": None if np.isnan(self.best_pvalue) else self.best_pvalue,
                "best_qvalue": None if np.isnan(self.best_qvalue) else self.best_qvalue}


def genome_wide(result, patterns, alpha=0.05):
    """What passes the genome-wide threshold, ``alpha`` over the distinct patterns of the
    features tested: a ``GenomeWide``, or None for a method without p-values or where no feature
    was tested."""
    if result.pvalues is None or patterns is None or not patterns.n_patterns:
        return None
    threshold = patterns.threshold(alpha)
    tested = np.ones(result.n_features, dtype=bool) if result.tested is None else result.tested
    p = result.pvalues
    passing = passing_features(result, threshold)
    ids = patterns.ids[passing]
    seen = tested & ~np.isnan(p)
    best_q = result.qvalues[seen] if result.qvalues is not None else np.empty(0)
    return GenomeWide(float(threshold), float(alpha), patterns.n_patterns, int(passing.sum()),
                      int(np.unique(ids[ids >= 0]).size), float(p[seen].min()) if seen.any() else float("nan"),
                      float(np.nanmin(best_q)) if best_q.size and not np.isnan(best_q).all() else float("nan"))


def passing_features(result, threshold):
    """Which features tested have a p-value below ``threshold`` (strictly, as ``threshold``
    selects), (p,) bool."""
    tested = np.ones(result.n_features, dtype=bool) if result.tested is None else result.tested
    with np.errstate(invalid="ignore"):
        return tested & (result.pvalues < threshold)


def _passing(wide, result, labelled, rule):
    """The summary's lines on what passes the genome-wide threshold ``wide``; when nothing does,
    what that means and what may help (``FixText``: the options it names spelled per caller; a
    looser rule unless the run's ``rule`` was one already)."""
    if wide.n_features:
        return [f"  {wide.n_features:,} feature(s) in {wide.n_patterns:,} distinct pattern(s) pass the genome-wide "
                f"threshold (p < {wide.threshold:.3g})"]
    best = "no feature has a p-value" if np.isnan(wide.best_pvalue) else f"the best p-value is {wide.best_pvalue:.3g}"
    lines = [f"  No feature passes the genome-wide threshold (p < {wide.threshold:.3g}): {best}. Nothing in this run "
             "is significant at that level; the ranking still orders every feature."]
    helps = [(f"  What may help: more samples ({result.n_samples} were tested; the power to reach the threshold "
              "grows with them)", {})]
    structure = labelled.structure
    if structure and structure.get("explained"):
        helps.append((f"    a check of the adjustment for structure: a principal coordinate that follows a gene takes "
                      f"the gene's signal with it, so compare a run with fewer than the {len(structure['explained'])} "
                      "adjusted for ({structure})", {"owner": "Covariates", "structure": FixText.ANY}))
    if rule.fdr is None:
        q = "" if np.isnan(wide.best_qvalue) else f"; the best q-value here is {wide.best_qvalue:.3g}"
        helps.append((f"    or a looser rule, {{fdr}} (the Benjamini-Hochberg false discovery rate over the "
                      f"features{q}): what it selects are candidates to confirm, not genome-wide findings",
                      {"owner": "select", "fdr": FixText.ANY}))
    for number, (text, fields) in enumerate(helps):
        text += ";" if number < len(helps) - 1 else "."
        lines.append(FixText(text, **fields) if fields else text)
    return lines


def _lines(run, ranked, written, *, notes=True, extra=(), lineage=None):
    """The summary of a run: what was scored, the ``notes`` (of the labelled samples), the
    patterns, their threshold and what passes it, the ``extra`` lines (the lineage effects), the
    genomic inflation (over the features and the patterns), the ten best features (with their
    direction when the profile tells it, and ``lineage``'s effect) and where the outputs went
    (``written``)."""
    import resource

    result, mask, patterns, lams, wide = ranked.result, ranked.mask, ranked.patterns, ranked.lams, ranked.wide
    rule, labelled, prof, started = run.rule, ranked.labelled, ranked.profile, run.started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    chosen = f"{int(mask.sum())} selected" if rule.given else "no selection rule"
    lines = [f"{result.method}: {result.n_samples} samples x {result.n_features} features; "
             f"{chosen}; {time.perf_counter() - started:.1f} s, peak memory {peak:.0f} MB"]
    lines += [f"  {note}" for note in labelled.notes] if notes else []
    if result.covariates:
        lines.append(f"  adjusted for {len(result.covariates)} covariate(s): {', '.join(result.covariates)}")
    if result.model and result.model.get("model") == "logistic":
        model = result.model
        lines.append(f"  mixed model: logistic (the binary target's), tau = {model['tau']:.4g} on the logit scale "
                     f"(h2 = {model['h2']:.4f} of the latent variance; penalised quasi-likelihood on the kinship "
                     "scaled to a mean diagonal of 1; fixed for the tests); score tests, saddlepoint-calibrated "
                     "(the linear model of pyseer's --lmm: the method's option model=linear)")
    elif result.model and "h2" in result.model:
        model = result.model
        lines.append(f"  mixed model: h2 = {model['h2']:.4f} (REML, on the kinship scaled to a mean diagonal of 1; "
                     f"fixed for the tests), se {model['h2_se']:.4f}, p(h2 > 0) = {model['h2_pvalue']:.3g}")
    if result.pvalues is not None and patterns.n_patterns:
        lines.append(f"  {patterns.n_patterns:,} distinct patterns among the {patterns.n_tested:,} features tested: "
                     f"Bonferroni threshold over them p < {patterns.threshold(rule.alpha):.3g} (alpha {rule.alpha:g})")
    if wide is not None:
        lines += _passing(wide, result, labelled, rule)
    lines += list(extra)
    over_features, over_patterns = lams
    if over_features is not None:
        both = (f"{over_features:.3f} over the features" if over_patterns is None else
                f"{over_features:.3f} over the features, {over_patterns:.3f} over the {patterns.n_patterns:,} "
                "distinct patterns")
        lines.append(f"  genomic inflation lambda = {both} (the median chi-square of the p-values over its expected "
                     "value: about 1 without confounding)")
    frame = result.to_frame(rows=result.ranking[:10])
    marks = None if lineage is None else lineage.columns(result.ranking[:10])
    for number, (j, row) in enumerate(zip(result.ranking, frame.itertuples())):
        p = "" if np.isnan(row.pvalue) else f"  q={row.qvalue:.2e}"
        way = "" if prof is None or not prof.direction(j) else f"  {prof.direction(j)}"
        if marks is not None and marks["effect_kind"].iloc[number] is not None:
            way += (f"  {marks['effect_kind'].iloc[number]} ({marks['lineage'].iloc[number]}, "
                    f"r = {marks['lineage_r'].iloc[number]:.2f})")
        lines.append(f"  {row.rank:>3}  {row.feature}  {row.score:.6g}{p}{way}")
    lines.append(f"Wrote {written}")
    return lines


class Rankings(list):
    """The ``Ranking`` of each target of a ``score`` of several targets, in their order."""

    def spelled(self, spell):
        """Every summary, its advice spelled by ``spell`` (``Ranking.spelled``)."""
        return "\n".join(ranking.spelled(spell) for ranking in self)

    def __str__(self):
        return "\n".join(str(ranking) for ranking in self)


#: What stands for the target's name in the output path of a ``score`` of several targets.
TARGET_FIELD = "{target}"


def target_outputs(output, targets, *, owner="score"):
    """The output of each target: ``output`` with ``{target}`` replaced by its name (``owner``: the
    job whose options the errors name)."""
    text = str(output)
    if TARGET_FIELD not in text:
        raise FixUsageError(f"Several targets ({', '.join(targets)}) write one ranking each: put {TARGET_FIELD} in "
                            f"{{output}} where each target's name goes, e.g. 'rankings/{TARGET_FIELD}.tsv'.",
                            owner=owner, output=FixUsageError.ANY)
    unsafe = [t for t in targets if not t or "/" in t or os.sep in t or t in (".", "..")]
    if unsafe:
        raise FixUsageError(f"The target name(s) {unsafe} cannot be part of a file name ({{output}} puts each target's "
                            "name in its output's): rename the column(s).", owner=owner, output=FixUsageError.ANY)
    if len(set(targets)) < len(targets):
        raise FixUsageError(f"{{target}} names a column twice: {', '.join(targets)}.", owner=owner,
                            target=FixUsageError.ANY)
    return [text.replace(TARGET_FIELD, t) for t in targets]


def _score_targets(run, output):
    """``score`` of several targets: the data read once, the samples that have every target
    scored against each (``scoring.Source.score_targets``: one pass of a whole-column method for
    all), one ranking per target written where ``{target}`` in ``output`` says."""
    run, pairs = _checked(run, target_outputs(output, run.samples.targets), required=False)
    if run.samples.scheduler:
        raise FixUsageError("{scheduler} scores one target at a time on Dask workers; several targets are scored "
                            "in one pass here. Leave out {scheduler}, or name one {target}.", owner="score",
                            scheduler=FixUsageError.ANY, target=FixUsageError.ANY)
    with together(*(p for pair in pairs for p in pair), run.covariates.structure_out,  # every output, or none
                  *(lineage_table(out) for out, _ in pairs if run.lineage)):
        return _targets_written(run, pairs)


def _targets_written(run, pairs):
    from ..report.outputs import Meanwhile, input_digests
    from .lineages import lineage_run

    targets = run.samples.targets
    labelled, found, patterns, frame = _scored_targets(run, folder=pairs[0][0].absolute().parent)
    rankings = Rankings()
    try:
        lineages = None if not run.lineage else lineage_run(labelled, frame, run.covariates, patterns,
                                                            lineage_column=run.lineage_column)
        digests = Meanwhile(input_digests, run.inputs)
        for number, (target, (result, prof), (out, sidecar)) in enumerate(zip(targets, found, pairs)):
            ranked = _Ranked.of(labelled, result, prof, patterns, run.rule)
            rankings.append(_written(run, ranked, out, sidecar, digests=digests, target=target, notes=number == 0,
                                     lineage=lineages))
    finally:
        for _, prof in found:
            getattr(prof, "close", lambda: None)()
    return rankings


def _for_target(exc, name):
    """``exc`` (a ValueError raised by the labels of the target ``name``), its message naming it."""
    from ..core.messages import Spelled

    prefix = f"Target {name!r}: "
    if isinstance(exc, Spelled):
        return type(exc)(prefix.replace("{", "{{").replace("}", "}}") + exc.template, owner=exc.owner, **exc.params)
    return ValueError(prefix + str(exc))


def _scored_targets(run, *, folder):
    """Read and label once, then score and profile every target: ``(labelled, [(result, profile)],
    patterns, covariates frame)``. A whole-column method scores them all in one pass (a store's
    profiles and patterns ride it); another method scores each in turn (``score_labelled``)."""
    from dataclasses import replace

    from ..scores import check_af, check_target
    from ..scoring.forms import profile_after, score_source_targets, source_patterns
    from ..scoring.patterns import PatternPass
    from ..scoring.profiles import kind_for
    from ..scoring.stored_profile import ProfilePass
    from .labelled import labelled_source, score_labelled

    samples, spec, opts = run.samples, run.spec, run.opts
    labelled, frame, kinship = _read(run)
    bounds = check_af(run.min_af, run.max_af)
    ys = [labelled.train_values(t) for t in samples.targets]
    for name, y in zip(samples.targets, ys):  # each target's labels, before the data are scored
        try:
            check_target(spec, y)
        except ValueError as exc:
            raise _for_target(exc, name) from None
    kinds = [kind_for(spec.name, y) for y in ys]
    if spec.streaming != "blocks":
        found, patterns = [], None
        for target in samples.targets:
            result, prof, patterns = score_labelled(replace(labelled, y=labelled.targets[target]), method=spec.name,
                                                    opts=opts, bounds=bounds, covariates=frame, folder=folder,
                                                    kinship=kinship)
            found.append((result, prof))
        return labelled, found, patterns, frame
    data = labelled_source(labelled, covariates=frame, kinship=kinship)
    taps = [ProfilePass(kind, folder=folder, labels=y) for kind, y in zip(kinds, ys)] if data.carries_riders else []
    riding = PatternPass(bounds)
    try:
        results = score_source_targets(data, spec, opts, ys, bounds, riders=(*taps, riding))
        profiles = [tap.result(res.ranks) for tap, res in zip(taps, results)] or [None] * len(results)
    finally:
        for tap in taps:
            tap.close()
    found = [(res, profile_after(data.with_target(y), kind, folder=folder, ranks=res.ranks) if prof is None else prof)
             for res, prof, y, kind in zip(results, profiles, ys, kinds)]
    return labelled, found, riding.result() if riding.began else source_patterns(data, bounds), frame


_PARAMETERS = """
    Parameters
    ----------
    samples : Samples
        The data file, its labels and how it is read (its memory budget ``chunk_bytes``, and the
        Dask ``scheduler`` that scores a store); the training samples are scored.
    output : str or path
        The output table (``.tsv``, ``.csv`` or ``.parquet``); ``<output>.json`` beside it
        holds the provenance.
    method, method_options : str, dict
        A method of ``genosift.methods()`` and its options (``genosift.scores.describe``).
    top, fdr, threshold : optional
        The selection rule: the ``top`` best, q-value <= ``fdr``, or p-value below
        ``threshold``: ``"bonferroni-patterns"`` (``alpha`` over the number of distinct patterns
        of the features tested, pyseer's genome-wide threshold), ``"bonferroni"`` (over the
        number of features tested) or a p-value. Without one, no feature is selected.
    alpha : float
        The family-wise level of a named threshold, and of the genome-wide threshold whose
        passes the summary counts (``Ranking.genome_wide``; default 0.05).
    min_af, max_af : float, optional
        The allele-frequency filter (see ``genosift.score``).
    covariates : Covariates, optional
        What to adjust for (the methods of ``genosift.scores.covariate_methods()``).
    force : bool
        Replace outputs that genosift wrote before (never an input, never another program's file).
    command : str, optional
        The command line to record in the provenance.
"""


@renamed_parameters("chunk_bytes", "scheduler")
def score(samples, output, *, method="fisher", method_options=None, top=None, fdr=None, threshold=None, alpha=0.05,
          collapse_patterns=False, min_af=None, max_af=None, covariates=None, force=False, command=None, lineage=False,
          lineage_column=None):
    """Score every feature of the labelled ``samples`` and write the ranking: ``genosift score``.

    The ranking has one row per feature, best first: its scores, ``selected`` (by the rule;
    False for every feature without one),
    its ``pattern`` (the distinct pattern of its values among the features tested, numbered by
    first appearance) and ``pattern_size`` (the features sharing it), and the class profile.
    ``collapse_patterns``: one row per pattern instead, its best-ranked feature.

    Several targets (``samples.target`` a list of columns): the data are read once and every
    target scored on the samples that have them all (``genosift.score_targets``: one pass of a
    whole-column method for all), each ranking written where ``{target}`` stands in ``output``;
    the result is then a ``Rankings``, one ``Ranking`` per target.
    """

    started = time.perf_counter()
    run = _Run(samples, Rule(top, fdr, threshold, alpha), method, method_options, covariates, min_af, max_af, force,
               command, started, collapse_patterns, lineage, lineage_column)
    if len(samples.targets) > 1:
        return _score_targets(run, output)
    run, [(out, sidecar)] = _checked(run, [output], required=False)
    lineages_out = lineage_table(out) if run.lineage else None
    with together(out, sidecar, run.covariates.structure_out, lineages_out):  # every output of the run, or none
        return _score_one(run, out, sidecar)


def _score_one(run, out, sidecar):
    from ..report.outputs import Meanwhile, input_digests
    from .lineages import lineage_run

    ranked, frame = _scored(run, folder=out.absolute().parent)
    with closing(ranked.profile):
        lineages = None if not run.lineage else lineage_run(ranked.labelled, frame, run.covariates, ranked.patterns,
                                                            lineage_column=run.lineage_column)
        digests = Meanwhile(input_digests, run.inputs)  # the inputs' checksums, taken while the table is written
        return _written(run, ranked, out, sidecar, digests=digests, lineage=lineages)


@renamed_parameters("chunk_bytes", "scheduler")
def select(samples, output, *, method="fisher", method_options=None, top=None, fdr=None, threshold=None, alpha=0.05,
           min_af=None, max_af=None, covariates=None, force=False, command=None):
    """Score the labelled ``samples`` and write the selected columns: ``genosift select``.

    The parameters are those of ``score``, with a rule required (``top``, ``fdr`` or
    ``threshold``); ``output`` is a table of the samples (rows, with their ids and labels) by the
    selected features (best first), and its sidecar lists the features selected with their scores.
    """

    started = time.perf_counter()
    rule = Rule(top, fdr, threshold, alpha)
    if len(samples.targets) > 1:
        raise FixUsageError("select writes the columns selected for one target; score several targets with "
                            "{score}, or name one {target}.", owner="select", score=PythonText("genosift score"),
                            target=FixUsageError.ANY)
    run, [(out, sidecar)] = _checked(_Run(samples, rule, method, method_options, covariates, min_af, max_af, force,
                                          command, started), [output], required=True, owner="select")
    with together(out, sidecar, run.covariates.structure_out):  # every output of the run, or none
        return _select_one(run, out, sidecar)


def _select_one(run, out, sidecar):
    from ..report.outputs import Meanwhile, input_digests, selected_frame, selected_records, write_frame
    from .labelled import reduced_frame

    ranked, _ = _scored(run, folder=out.absolute().parent)
    labelled, result, mask = ranked.labelled, ranked.result, ranked.mask
    digests = Meanwhile(input_digests, run.inputs)
    with closing(ranked.profile):
        columns = np.flatnonzero(mask)
        columns = columns[np.argsort(result.ranks[columns], kind="stable")]  # best first, as in the ranking
        reduced = reduced_frame(labelled, columns, result.names_of(columns))
        selected = selected_records(selected_frame(result, mask, ranked.profile, ranked.patterns))

        def provenance():
            return {**_provenance(run, ranked, digests=digests.result()), "selected_features": selected}

        write_frame(reduced, out, sidecar=sidecar, provenance=provenance, force=run.force)
        lines = _lines(run, ranked, f"{out} and {sidecar.name}")
    return Ranking(result, mask, ranked.patterns, [out, sidecar], list(labelled.notes), lines,
                   time.perf_counter() - run.started, ranked.wide)


if score.__doc__ and select.__doc__:  # (python -OO drops docstrings)
    score.__doc__ += _PARAMETERS + """    collapse_patterns : bool
        One row per pattern (its best-ranked feature) instead of one per feature.
    lineage : bool
        Lineage effects (bugwas; ``genosift.lineage_effects``), for the methods that take
        covariates: the ranking gains ``lineage`` (the lineage each feature's values correlate
        with most), ``lineage_r`` (that correlation) and ``effect`` ("lineage" where that lineage
        is associated with the phenotype and ``|r| >= 0.5``, else "locus"); the phenotype's
        regression on the lineages goes to ``<output>.lineages.tsv`` and the sidecar
        (``lineage_effects``), and the summary says how many of the features passing the
        genome-wide threshold are locus and lineage effects. The lineages are the principal
        coordinates adjusted for (``covariates.structure``), else those ``structure="auto"``
        would give, computed for this alone.
    lineage_column : str, optional
        Lineages given instead as clusters: a column of the samples' metadata holding each one's
        lineage (one-hot, each cluster tested against the others); implies ``lineage``.

    Returns
    -------
    Ranking, or Rankings for several targets
"""
    select.__doc__ += _PARAMETERS + """
    Returns
    -------
    Ranking
"""
