"""The job ``enet``: every feature in one elastic-net model, its penalty chosen by cross-validation."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..core.validation import renamed_parameters

__all__ = ["EnetRun", "enet", "model_target"]


@dataclass
class EnetRun:
    """What ``enet`` did: the ``EnetResult`` (``genosift.selectors.enet``), the penalty chosen, the
    table of the features kept and the summary the command prints (``lines``)."""

    result: object
    index: int
    output: object
    table: object = None
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


@dataclass(frozen=True)
class _Fit:
    """What one run of ``enet`` was asked, checked where it entered: the samples and adjustments,
    the files read and written, the path's settings, and how the run reads and writes."""

    samples: object
    covariates: object
    inputs: tuple
    out: Path
    sidecar: Path
    model: object
    folds: object
    bounds: object
    l1_ratio: float
    n_lambdas: int
    min_ratio: object
    lambda_choice: str
    family: object
    seed: object
    min_af: object
    max_af: object
    force: bool
    command: object
    started: float


@dataclass(frozen=True)
class _Fitted:
    """What the fit gave: the path (``result``) and the penalty chosen (``index``), the target as
    fitted (``y``; ``logistic``, its ``classes``), the covariates' names, the features' names, their
    distinct patterns and how the design was held (``how``), and the out-of-fold ``metrics``."""

    result: object
    index: int
    y: np.ndarray
    logistic: bool
    classes: object
    covariate_names: list
    names: np.ndarray
    patterns: object
    how: str
    metrics: object


@renamed_parameters("alpha", "chunk_bytes")
def enet(samples, output, *, covariates=None, l1_ratio=0.5, folds=10, lambda_choice="min", n_lambdas=100,
         min_ratio=None, family="auto", min_af=None, max_af=None, seed=0, model=None, force=False, command=None):
    """Fit the elastic net of the target of ``samples`` on every feature (identical ones as one
    pattern, covariates unpenalised), cross-validate its penalty and write the features it keeps:
    ``genosift enet``.

    Parameters
    ----------
    samples : Samples
        The data and the target (two classes: logistic; numbers: linear). A store is never loaded
        whole: its distinct patterns are found in one pass and, when they do not fit the memory
        budget (``samples.chunk_bytes``, which also bounds a store's reads), the path reads them in
        passes (strong rules and KKT checks).
    output : str or path
        The features with a coefficient at the chosen penalty (``.tsv``, ``.csv`` or ``.parquet``),
        largest first, with ``<output>.json`` beside it: the path, its cross-validation and the
        out-of-fold metrics.
    covariates : Covariates, optional
        In the model unpenalised (and the principal coordinates of ``structure``).
    l1_ratio, n_lambdas, min_ratio, family : as ``genosift.ElasticNetSelector``
    folds : int
        Folds of the cross-validation (``samples.group_column`` keeps each group, e.g. a lineage,
        in one fold).
    lambda_choice : {"min", "1se"}
    min_af, max_af : float, optional
        Only the features carried by a share of the samples in this range enter the model.
    seed : int
        The folds' shuffling.
    model : str or path, optional
        Save the logistic model as ``genosift predict`` applies it (``.skops``).
    force : bool
        Replace outputs that genosift wrote before.
    command : str, optional
        The command line, for the provenance.
    """
    from ..core.files import together
    from ..core.validation import FixUsageError
    from ..report.outputs import check_outputs, check_table_name
    from ..scores import check_af
    from ..selectors.enet import check_enet_options
    from ..workflow.model_file import SUFFIX
    from .inputs import Covariates, check_declared
    from .ranking import as_usage

    started = time.perf_counter()
    try:
        check_enet_options(l1_ratio=l1_ratio, n_lambdas=n_lambdas, min_ratio=min_ratio, lambda_choice=lambda_choice,
                           family=family, owner="enet")
        bounds = check_af(min_af, max_af, "enet")
    except (TypeError, ValueError) as exc:
        raise as_usage(exc) from None
    if folds is not None and folds != 0 and folds < 2:
        raise FixUsageError("{folds} is the number of folds of the cross-validation: at least 2.", owner="enet",
                            folds=FixUsageError.ANY)
    covariates = covariates if covariates is not None else Covariates()
    out = Path(output)
    sidecar = out.with_name(out.name + ".json")
    check_table_name(out)
    written = [out, sidecar] + ([Path(model)] if model is not None else [])
    if model is not None and Path(model).suffix != SUFFIX:
        raise FixUsageError(f"The model file {str(model)!r} is a skops archive: name it *{SUFFIX}.", owner="enet")
    inputs = (*samples.inputs, *covariates.inputs)
    declared = check_declared([("output", out), ("output", sidecar), ("model", model)], owner="enet",
                              samples=samples, covariates=covariates)
    check_outputs(written, force=force, inputs=inputs)
    with together(*declared):  # every output of the run, or none
        return _run(_Fit(samples, covariates, inputs, out, sidecar, model, folds, bounds, l1_ratio, n_lambdas,
                         min_ratio, lambda_choice, family, seed, min_af, max_af, force, command, started))


def model_target(fit, owner):
    """The samples of ``fit`` (an ``enet`` or ``knockoffs`` run: its ``samples``, ``covariates``,
    ``family`` and ``force``) loaded, their covariates checked on the training samples and their
    target as the model fits it: ``(labelled, Z, covariate names, y, logistic, classes)``; a target
    the family cannot take is the call's usage error."""
    from ..scores import check_covariates
    from ..selectors.enet import enet_target
    from .ranking import as_usage

    fit.samples.refuse_scheduler(owner)
    labelled = fit.samples.load()
    frame = fit.covariates.of(labelled, rows=labelled.train, force=fit.force)
    Z, covariate_names = check_covariates(frame, len(labelled.y_train), owner=owner)
    try:
        y, logistic, classes = enet_target(labelled.y_train, fit.family)
    except ValueError as exc:
        raise as_usage(exc) from None
    return labelled, Z, covariate_names, y, logistic, classes


def _run(fit):
    """Fit and write what ``enet`` declared (its outputs are published together)."""
    from ..core.validation import FixUsageError
    from ..report.outputs import input_digests, write_frame
    from ..selectors.enet import elastic_net
    from .labelled import fold_groups

    samples, out, sidecar, model, folds, force, started = (fit.samples, fit.out, fit.sidecar, fit.model, fit.folds,
                                                           fit.force, fit.started)
    labelled, Z, covariate_names, y, logistic, classes = model_target(fit, "enet")
    if model is not None and (not logistic or Z is not None):
        raise FixUsageError("{model} saves a model that `genosift predict` applies to features alone: a logistic "
                            "model (two classes) without covariates. Leave out {model}, or the covariates.",
                            owner="enet", model=FixUsageError.ANY)
    groups = fold_groups(labelled, samples.group_column)[labelled.train] if samples.group_column else None
    design, patterns, order, how = _design(labelled, fit.bounds)
    if order is not None:  # a store's rows in the file's order
        y, Z = y[order], None if Z is None else Z[order]
        groups = None if groups is None else groups[order]
    result = elastic_net(design, y, logistic=logistic, l1_ratio=float(fit.l1_ratio), n_lambdas=fit.n_lambdas,
                         min_ratio=fit.min_ratio, covariates=Z, cv=folds or None, groups=groups, random_state=fit.seed,
                         inverse=patterns.ids, owner="enet")
    index = result.index(fit.lambda_choice) if folds else result.lambdas.size - 1
    names = np.asarray(labelled.dataset.feature_names, dtype=object)
    table = _kept(result, index, names, patterns)
    metrics = result.out_of_fold(y, index) if folds else None
    fitted = _Fitted(result, index, y, logistic, classes, covariate_names, names, patterns, how, metrics)
    record = _record(fitted, fit.lambda_choice)
    write_frame(table, out, sidecar=sidecar, force=force, provenance=lambda: {
        "command": fit.command, "inputs": input_digests(fit.inputs), "target": samples.target, **record,
        "n_samples": int(y.size), "n_features": int(names.size), "n_patterns": int(patterns.n_patterns),
        "folds": folds, "seed": fit.seed, "min_af": fit.min_af, "max_af": fit.max_af, "design": how,
        "notes": labelled.notes, "seconds": round(time.perf_counter() - started, 3)})
    if model is not None:
        _save_model(fit, fitted, labelled)
    lines = _summary(fit, fitted, table, labelled.notes)
    lines.append(f"Wrote {out} and {sidecar.name}" + (f", and the model {model}" if model is not None else ""))
    return EnetRun(result, index, out, table, lines)


def _design(labelled, bounds):
    """``(design, patterns, order, how)``: the distinct patterns of the training samples' features
    inside ``bounds`` as the path's columns, in memory when they fit the data's memory budget
    (``labelled.chunk_bytes``; a store's are read once), else
    read from the store at each check; ``order`` puts a store's kept rows in the file's order."""
    import scipy.sparse as sp

    from ..core.engine import check_budget
    from ..enet.path import MemoryDesign
    from ..enet.store import StoreDesign
    from ..scoring import count_patterns
    from ..sources import on_disk

    X, chunk_bytes = labelled.X_train, labelled.chunk_bytes
    af = {} if bounds is None else {"min_af": bounds[0], "max_af": bounds[1]}
    if not on_disk(X):
        patterns = count_patterns(X, binary=False, **af)
        M = sp.csc_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        return MemoryDesign(M[:, patterns.first], patterns.sizes), patterns, None, "in memory"
    order = np.argsort(X.rows, kind="stable")
    rows = X.rows[order]
    kept = np.zeros(X.store.shape[0], dtype=bool)
    kept[rows] = True
    patterns = count_patterns(X.store.path, binary=X.store.binary, samples=kept, chunk_bytes=chunk_bytes, **af)
    entries = float(patterns.af[patterns.first].sum()) * rows.size
    if entries * 24 <= check_budget(chunk_bytes, "enet"):  # the columns and their standardised copies
        M = X.store.read_columns(patterns.first, rows=rows, chunk_bytes=chunk_bytes)
        return MemoryDesign(sp.csc_matrix(M) if sp.issparse(M) else M, patterns.sizes), patterns, order, "in memory"
    return (StoreDesign(replace(X, rows=rows), patterns.first, patterns.sizes), patterns, order,
            "from the store")


def _kept(result, index, names, patterns):
    """The features with a coefficient at the penalty ``index``, by absolute coefficient (ties: the
    earlier feature first)."""
    import pandas as pd

    column = result.coef[:, index]
    rows = column.indices
    values = column.data
    order = np.lexsort((rows, -np.abs(values)))
    rows, values = rows[order], values[order]
    pattern = patterns.ids[rows]
    return pd.DataFrame({"feature": names[rows], "coefficient": values, "rank": np.arange(1, rows.size + 1),
                         "pattern": pattern, "pattern_size": patterns.sizes[pattern], "af": patterns.af[rows]})


def _record(fitted, choice):
    """The sidecar's account of the model: the penalties, the path with its cross-validation, the
    penalty chosen (by ``choice``), the out-of-fold metrics (never those of the rows a model was
    fitted on)."""
    result, index, classes = fitted.result, fitted.index, fitted.classes
    path = {"lambda": result.lambdas.tolist(), "features": result.df.tolist(),
            "dev_ratio": result.dev_ratio.tolist()}
    if result.cv_mean is not None:
        path.update(cv_deviance=result.cv_mean.tolist(), cv_se=result.cv_se.tolist())
    chosen = {"lambda_choice": choice if result.cv_mean is not None else "last", "lambda": float(result.lambdas[index]),
              "intercept": float(result.intercept[index]), "n_selected": int(result.df[index])}
    if result.cv_mean is not None:
        chosen.update(lambda_min=float(result.lambdas[result.index_min]),
                      lambda_1se=float(result.lambdas[result.index_1se]))
    return {"model": "logistic" if fitted.logistic else "linear", "l1_ratio": result.l1_ratio,
            "classes": None if classes is None else [str(c) for c in classes], **chosen,
            "covariates": {name: float(b) for name, b in zip(fitted.covariate_names, result.covariate_coef[index])},
            "out_of_fold": fitted.metrics, "path": path, "kkt_checks": result.checks,
            "largest_working_set": result.working}


def _summary(fit, fitted, table, notes):
    """The summary ``enet`` prints: the fit, the ``notes``, the covariates, the penalty chosen with
    the features of ``table`` it keeps, the out-of-fold metrics and the ten largest coefficients."""
    seconds, choice, target = time.perf_counter() - fit.started, fit.lambda_choice, fit.samples.target
    result, index, y, names, patterns = fitted.result, fitted.index, fitted.y, fitted.names, fitted.patterns
    metrics, logistic, covariate_names = fitted.metrics, fitted.logistic, fitted.covariate_names
    model = "logistic" if logistic else "linear"
    cv = f"{len(result.folds)}-fold cross-validation" if result.folds else "no cross-validation"
    inside = "" if patterns.n_tested == names.size else f" ({patterns.n_tested:,} inside the allele-frequency range)"
    lines = [f"elastic net ({model}, l1_ratio {result.l1_ratio:g}) of {target!r} on {y.size:,} samples: {names.size:,} "
             f"features{inside} in {patterns.n_patterns:,} distinct patterns ({fitted.how}); "
             f"{result.lambdas.size} penalties, {cv}; {seconds:.1f} s"]
    lines += [f"  {note}" for note in notes]
    if covariate_names:
        lines.append(f"  given {len(covariate_names)} covariate(s), unpenalised: {', '.join(covariate_names)}")
    label = {"min": "the smallest cross-validated deviance", "1se": "within one standard error of the smallest"}
    lines.append(f"  lambda {result.lambdas[index]:.4g} ({label.get(choice, 'the last of the path')}"
                 + (")" if not result.folds else f"; lambda_min {result.lambdas[result.index_min]:.4g}, "
                    f"lambda_1se {result.lambdas[result.index_1se]:.4g})")
                 + f": {len(table):,} features in {np.unique(table['pattern']).size:,} patterns")
    if metrics is not None:
        parts = [f"deviance {metrics['deviance']:.4g} per sample", f"R^2 {metrics['r2']:.3f}"]
        if logistic:
            parts[1:1] = [f"AUC {metrics['roc_auc']:.3f}", f"accuracy {metrics['accuracy']:.3f}"]
        lines.append("  out of fold: " + ", ".join(parts) + " (the R^2 of the held-out predictions: an estimate "
                     "of the variance the features explain)")
    for row in table.head(10).itertuples(index=False):
        lines.append(f"  {row.rank:>3}  {row.feature}  {row.coefficient:+.4g}  (pattern of {row.pattern_size})")
    return lines


def _save_model(fit, fitted, labelled):
    """The logistic model at the chosen penalty, saved where ``fit.model`` says as ``genosift
    predict`` reads it: a scikit-learn logistic regression on the features with a coefficient."""
    from .. import __version__
    from ..core.files import staged
    from ..selectors.enet import logistic_of
    from ..workflow.model_file import write_model

    result, index, names, classes = fitted.result, fitted.index, fitted.names, fitted.classes
    column = result.coef[:, index]
    columns = np.sort(column.indices)
    estimator = logistic_of(column[columns].toarray().ravel(), result.intercept[index], classes)
    info = {"features": [str(f) for f in names], "selected": [str(f) for f in names[columns]],
            "classes": [str(c) for c in classes], "method": "enet", "k": int(columns.size), "model": "enet",
            "model_options": {"l1_ratio": result.l1_ratio, "lambda": float(result.lambdas[index])},
            "genosift_version": __version__, "binary": bool(fit.samples.binary),
            "training_samples": [str(s) for s in labelled.dataset.sample_ids[labelled.train]]}
    with staged(fit.model, force=fit.force) as tmp:
        write_model(tmp, estimator, info, columns)
