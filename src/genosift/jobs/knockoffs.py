"""The job ``knockoffs``: the features (or groups of features) that matter given all the others, with
the false discovery rate controlled: the model-X knockoff filter over their distinct patterns."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..core.messages import FixError, FixText, SummaryLines
from ..core.validation import renamed_parameters

__all__ = ["KnockoffRun", "knockoffs"]

#: The bytes the knockoff filter holds at once per entry of the (samples x patterns) matrix (the
#: patterns, their model's means and residuals, the knockoffs, the lasso's design of both and its
#: folds) and per pair of patterns (their correlation, the S-matrix and the inverses of Newton's
#: steps): peaks measured with tracemalloc (10-12 and 8-9 float64 arrays of each size), rounded up.
_BYTES_PER_ENTRY = 8 * 12
_BYTES_PER_PAIR = 8 * 9
#: A run given more than one covariate per this many distinct patterns is told that the covariates
#: leave little of the patterns to test.
CROWDED = 4


@dataclass
class KnockoffRun(SummaryLines):
    """What ``knockoffs`` did: the ``KnockoffResult`` (``genosift.selectors.knockoffs``) of every
    feature (the ``group`` of each, -1 where not tested), the table ranking them and the summary the
    command prints (``lines``; its advice names parameters, see ``spelled``)."""

    result: object
    output: object
    table: object = None
    lines: list = field(default_factory=list)


@dataclass(frozen=True)
class _Fit:
    """What one run of ``knockoffs`` was asked, checked where it entered: the samples and
    adjustments, the files read and written, the filter's options, and how the run writes."""

    samples: object
    covariates: object
    inputs: tuple
    out: Path
    sidecar: Path
    options: object
    family: str
    bounds: object
    min_af: object
    max_af: object
    force: bool
    command: object
    started: float


@renamed_parameters("chunk_bytes")
def knockoffs(samples, output, *, covariates=None, fdr=0.1, statistic="lasso", feature_groups=None,
              group_threshold=0.5, s_method="mvr", n_draws=1, family="auto", min_af=None, max_af=None, folds=5,
              seed=0, force=False, command=None):
    """Select the features of ``samples`` that matter for its target given all the others, with the
    false discovery rate at most ``fdr`` (the model-X knockoff filter; identical features as one
    pattern, covariates unpenalised), and write every feature ranked: ``genosift knockoffs``.

    Parameters
    ----------
    samples : Samples
        The data and the target (two classes: logistic; numbers: linear). A store is never loaded
        whole: its distinct patterns are found in one pass and read once, when they fit the
        memory budget (``samples.chunk_bytes``, which also bounds a store's reads); else the run is
        refused, saying what it would need.
    output : str or path
        Every feature, ranked (``.tsv``, ``.csv`` or ``.parquet``): ``feature, group, statistic,
        e_value, selected, rank, pattern, pattern_size, af``, with ``<output>.json`` beside it:
        the options, the groups and features selected, each draw's threshold, the provenance.
    covariates : Covariates, optional
        In the model unpenalised, and the knockoffs drawn given them (and the principal
        coordinates of ``structure``).
    fdr, statistic, group_threshold, s_method, n_draws, family : as ``genosift.KnockoffSelector``
    feature_groups : {None, "correlation"}
        None: every distinct pattern on its own; "correlation": patterns whose correlations
        average at least ``group_threshold`` tested as one group.
    min_af, max_af : float, optional
        Only the features carried by a share of the samples in this range are tested.
    folds : int
        Folds of the cross-validation that chooses the lasso's penalty (``samples.group_column``
        keeps each group, e.g. a lineage, in one fold); not used by ``statistic="lasso_entry"``.
    seed : int
        The knockoff draws and the folds' shuffling.
    force : bool
        Replace outputs that genosift wrote before.
    command : str, optional
        The command line, for the provenance.
    """
    from ..core.files import together
    from ..report.outputs import check_outputs, check_table_name
    from ..selectors.knockoffs import KnockoffOptions
    from .inputs import Covariates, check_declared

    started = time.perf_counter()
    covariates = covariates if covariates is not None else Covariates()
    out = Path(output)
    sidecar = out.with_name(out.name + ".json")
    options = KnockoffOptions(fdr=fdr, statistic=statistic, feature_groups=feature_groups,
                              group_threshold=group_threshold, s_method=s_method, n_draws=n_draws, cv=folds,
                              random_state=seed)
    bounds = _checked(options, family, min_af, max_af)
    check_table_name(out)
    declared = check_declared([("output", out), ("output", sidecar)], owner="knockoffs", samples=samples,
                              covariates=covariates)
    inputs = (*samples.inputs, *covariates.inputs)
    check_outputs([out, sidecar], force=force, inputs=inputs)
    with together(*declared):  # every output of the run, or none
        return _run(_Fit(samples, covariates, inputs, out, sidecar, options, family, bounds, min_af, max_af, force,
                         command, started))


def _checked(options, family, min_af, max_af):
    """The ``KnockoffOptions`` of a run and its other options checked before any file is read (a
    bad one is the call's usage error); the allele-frequency bounds."""
    from ..core.messages import plain
    from ..core.validation import FixUsageError, is_int, param_error
    from ..scores import check_af
    from ..selectors.enet import FAMILIES
    from .ranking import as_usage

    groups = options.feature_groups
    if groups is not None and not (isinstance(groups, str) and groups == "correlation"):
        raise FixUsageError(f"The patterns are tested in groups of their correlation or each on its own; "
                            f"{plain(groups)} is neither. Give {{feature_groups}}, or leave it out.",
                            owner="knockoffs", feature_groups="correlation")
    if options.statistic != "lasso_entry" and not (is_int(options.cv) and options.cv >= 2):
        raise FixUsageError("{folds} is the number of folds of the cross-validation that chooses the lasso's "
                            "penalty: at least 2; or {statistic}, which needs none.", owner="knockoffs",
                            folds=FixUsageError.ANY, statistic="lasso_entry")
    try:
        options.check("knockoffs")
        if family not in FAMILIES:
            raise param_error("family", "knockoffs", f"one of {list(FAMILIES)}", family)
        return check_af(min_af, max_af, "knockoffs")
    except (TypeError, ValueError) as exc:
        raise as_usage(exc) from None


def _run(fit):
    """Filter and write what ``knockoffs`` declared (its outputs are published together)."""
    from ..report.outputs import input_digests, write_frame
    from ..selectors.knockoffs import knockoff_filter
    from .enet import model_target
    from .labelled import fold_groups

    samples, force, options = fit.samples, fit.force, fit.options
    labelled, Z, covariate_names, y, logistic, classes = model_target(fit, "knockoffs")
    groups = fold_groups(labelled, samples.group_column)[labelled.train] if samples.group_column else None
    P, patterns, order, how = _patterns(labelled, fit.bounds)
    if order is not None:  # a store's rows in the file's order
        y, Z = y[order], None if Z is None else Z[order]
        groups = None if groups is None else groups[order]
    found = knockoff_filter(P, y, logistic=logistic, options=fit.options, covariates=Z, groups=groups)
    tested = patterns.ids >= 0
    group = np.full(patterns.ids.size, -1, dtype=np.int64)
    group[tested] = found.group[patterns.ids[tested]]  # each feature as its pattern
    result = replace(found, group=group)
    names = np.asarray(labelled.dataset.feature_names, dtype=object)
    table = _table(result, names, patterns)
    selected = table[table["selected"]]
    write_frame(table, fit.out, sidecar=fit.sidecar, force=force, provenance=lambda: {
        "command": fit.command, "inputs": input_digests(fit.inputs), "target": samples.target,
        "model": "logistic" if logistic else "linear",
        "classes": None if classes is None else [str(c) for c in classes], "knockoffs": "gaussian",
        "fdr": result.fdr, "draw_fdr": result.draw_fdr, "n_draws": options.n_draws,
        "statistic": options.statistic, "s_method": options.s_method, "shrinkage": result.shrinkage,
        "feature_groups": options.feature_groups,
        "group_threshold": options.group_threshold if options.feature_groups else None,
        "thresholds": [float(t) if np.isfinite(t) else None for t in result.thresholds],
        "n_samples": int(y.size), "n_features": int(names.size), "n_tested": int(patterns.n_tested),
        "n_patterns": int(result.patterns), "n_groups": int(result.n_groups),
        "n_selected": int(len(selected)), "n_selected_groups": int(result.selected.sum()),
        "selected_groups": [int(g) for g in np.flatnonzero(result.selected)],
        "selected_features": [str(f) for f in selected["feature"]], "covariates": covariate_names,
        "folds": options.cv if options.statistic != "lasso_entry" else None, "seed": options.random_state,
        "min_af": fit.min_af,
        "max_af": fit.max_af, "design": how, "notes": labelled.notes,
        "seconds": round(time.perf_counter() - fit.started, 3)})
    lines = _summary(fit, result, table, y.size, logistic, covariate_names, how, labelled.notes)
    lines.append(f"Wrote {fit.out} and {fit.sidecar.name}")
    return KnockoffRun(result, fit.out, table, lines)


def _patterns(labelled, bounds):
    """``(P, patterns, order, how)``: the distinct patterns of the training samples' features inside
    ``bounds``, dense (samples x patterns), when the filter's work on them fits the data's memory
    budget (``labelled.chunk_bytes``; a store's are found in one pass and read once); ``order``
    puts a store's kept rows in the file's order."""
    import scipy.sparse as sp

    from ..core.engine import check_budget
    from ..scoring import count_patterns
    from ..sources import on_disk

    X, chunk_bytes = labelled.X_train, labelled.chunk_bytes
    budget = check_budget(chunk_bytes, "knockoffs")
    af = {} if bounds is None else {"min_af": bounds[0], "max_af": bounds[1]}
    if not on_disk(X):
        patterns = count_patterns(X, binary=False, **af)
        _check_fits(patterns, X.shape[0], budget)
        M = X[:, patterns.first]
        return (M.toarray() if sp.issparse(M) else np.asarray(M, dtype=np.float64)), patterns, None, "in memory"
    order = np.argsort(X.rows, kind="stable")
    rows = X.rows[order]
    kept = np.zeros(X.store.shape[0], dtype=bool)
    kept[rows] = True
    patterns = count_patterns(X.store.path, binary=X.store.binary, samples=kept, chunk_bytes=chunk_bytes, **af)
    _check_fits(patterns, rows.size, budget)
    M = X.store.read_columns(patterns.first, rows=rows, chunk_bytes=chunk_bytes)
    return (M.toarray() if sp.issparse(M) else np.asarray(M, dtype=np.float64)), patterns, order, "read from the store"


def _check_fits(patterns, n, budget):
    """Refuse patterns whose knockoff filter would hold more than ``budget`` bytes, saying how much
    it needs and how to test fewer."""
    m = patterns.n_patterns
    if not patterns.n_tested:
        raise FixError("No feature is carried by a share of the samples inside the allele-frequency range: there "
                       "is nothing to test. Widen {min_af} and {max_af}.", owner="knockoffs",
                       min_af=FixError.ANY, max_af=FixError.ANY)
    need = _BYTES_PER_ENTRY * n * m + _BYTES_PER_PAIR * m * m
    if need > budget:
        raise FixError(f"The knockoff filter holds the {m:,} distinct patterns of the features tested, for "
                       f"{n:,} samples, in memory with their knockoffs and their {m:,} x {m:,} correlations: about "
                       f"{_size(need)}, beyond the memory budget of {_size(budget)}. Raise {{chunk_bytes}} to "
                       f"{_size(need)} (the S-matrix's time grows with the cube of the patterns), or test fewer: "
                       "{min_af} and {max_af} keep the features carried by a range of shares of the samples (rare "
                       "and near-universal ones make most patterns).", owner="knockoffs", chunk_bytes=FixError.ANY,
                       min_af=FixError.ANY, max_af=FixError.ANY)


def _size(n_bytes):
    """``n_bytes`` rounded up in the largest unit of 1024 it fills, as a memory budget is typed (``2M``)."""
    for unit, power in (("G", 30), ("M", 20), ("K", 10)):
        if n_bytes >= 2**power:
            return f"{math.ceil(n_bytes / 2**power):,}{unit}"
    return str(int(n_bytes))


def _table(result, names, patterns):
    """Every feature, ranked (``KnockoffResult.to_frame``), with its pattern (-1: not tested),
    the features sharing it (0: not tested) and its allele frequency."""
    frame = result.to_frame(np.arange(names.size))
    rows = frame["feature"].to_numpy(dtype=np.int64)
    pattern = patterns.ids[rows]
    frame["feature"] = names[rows]
    frame["pattern"] = pattern
    frame["pattern_size"] = np.where(pattern >= 0, patterns.sizes[np.maximum(pattern, 0)], 0)
    frame["af"] = patterns.af[rows]
    return frame


def _summary(fit, result, table, n, logistic, covariate_names, how, notes):
    """The summary ``knockoffs`` prints: the filter, the ``notes``, the covariates, the groups, what
    passes (or that nothing does, and why that can be) and the ten strongest groups (each by its
    best-ranked feature)."""
    seconds, target, options = time.perf_counter() - fit.started, fit.samples.target, fit.options
    statistic, fdr, n_draws = options.statistic, options.fdr, options.n_draws
    model = "logistic" if logistic else "linear"
    what = {"lasso": "lasso", "enet": "elastic net", "lasso_entry": "lasso entry"}[statistic]
    cv = "no cross-validation" if statistic == "lasso_entry" else f"{options.cv}-fold cross-validation"
    draws = f"{n_draws} draw" + ("s" if n_draws > 1 else "")
    tested = int((table["pattern"] >= 0).sum())
    inside = "" if tested == len(table) else f" ({tested:,} inside the allele-frequency range)"
    lines = [f"knockoff filter ({model} {what}, {cv}; {options.s_method} S-matrix, {draws}) of {target!r} on {n:,} "
             f"samples: {len(table):,} features{inside} in {result.patterns:,} distinct patterns ({how}); "
             f"FDR {fdr:g}; {seconds:.1f} s"]
    lines += [f"  {note}" for note in notes]
    constant = int(((table["pattern"] >= 0) & (table["group"] < 0)).sum())
    if constant:
        lines.append(f"  {constant:,} feature(s) constant over the samples: not tested")
    if covariate_names:
        lines.append(f"  given {len(covariate_names)} covariate(s), unpenalised: {', '.join(covariate_names)}")
        if len(covariate_names) * CROWDED > result.patterns:
            lines.append(FixText(f"  note: {len(covariate_names)} covariate(s) for {result.patterns:,} distinct "
                                 "patterns: given them, little of the patterns is left to test (the knockoffs are "
                                 "drawn and the features compared given the covariates). Give fewer: the lineages, "
                                 "or a smaller {structure} of many features (the core genome's variants, k-mers) "
                                 "rather than of the table tested.", owner="knockoffs", structure=FixError.ANY))
    if options.feature_groups == "correlation":
        lines.append(f"  patterns grouped by correlation (average |r| at least {options.group_threshold:g}): "
                     f"{result.patterns:,} patterns in {result.n_groups:,} groups")
    chosen = table[table["selected"]]
    if chosen.empty:
        least = math.ceil(1.0 / result.draw_fdr - 1e-9)
        lines.append(FixText(f"  no feature passes the knockoff filter at FDR {fdr:g}: each draw's knockoff+ "
                             f"threshold (at {result.draw_fdr:g}) selects at least {least} groups or none, so fewer "
                             "strong signals than that are not found; a larger {fdr} needs fewer.",
                             owner="knockoffs", fdr=FixError.ANY))
    else:
        n_groups = int(result.selected.sum())
        cuts = ", ".join(f"{t:.4g}" if np.isfinite(t) else "none" for t in result.thresholds)
        lines.append(f"  {len(chosen):,} features in {n_groups:,} groups pass the knockoff filter at FDR {fdr:g} "
                     + (f"(the knockoff+ threshold: W >= {cuts})" if n_draws == 1 else
                        f"(by their e-values over the draws; the draws' knockoff+ thresholds at "
                        f"{result.draw_fdr:g}: W >= {cuts})"))
    tested = table[table["group"] >= 0]
    sizes = tested["group"].value_counts()
    for row in tested.drop_duplicates("group").head(10).itertuples(index=False):  # the ten strongest groups
        more = sizes[row.group] - 1
        mark = "  selected" if row.selected else ""
        lines.append(f"  {row.rank:>3}  {row.feature}" + (f" and {more:,} more" if more else "")
                     + f"  W {row.statistic:+.4g}  e-value {row.e_value:.4g}  (group {row.group}){mark}")
    return lines
