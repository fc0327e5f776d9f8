"""The preparation core every driver calls: options, the target, class checks, the result.

In memory, out of core from a store and on Dask, scoring runs the same steps: ``check_options``,
``make_target`` (or ``target_values`` and ``LabelCoding`` for row chunks), ``check_classes``
before any data are read, the statistic's ``from_chunk``/``merge`` (``statistics``) or the
method on column blocks (``score_blocks``), and ``finish`` / ``build_result`` for the
``ScoreResult``. Nothing here reads files or knows of Dask.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..core.distinct import distinct_columns
from ..core.engine import accumulate, map_blocks
from ..core.messages import FixError, FixTypeError, PythonText, plain
from ..core.transforms import zeros_and_ones
from ..core.validation import (
    HUGE,
    MAX_FLOAT_CLASSES,
    as_labels,
    as_matrix,
    default_feature_names,
    is_continuous,
    numeric_target,
)
from ..stats import class_positives
from ._base import REGISTRY, ScoreResult, Scores, Target, get_method, stack_scores, target_scores

__all__ = ["FittedColumns", "LabelCoding", "build_result", "check_classes", "check_kinship_given", "check_options",
           "check_target", "covariate_methods", "finish", "finite_blocks", "fit_block", "join_scores", "make_target",
           "make_targets", "refuse_covariates", "result_arrays", "score_block", "score_blocks", "statistics",
           "stream_statistics", "take_scores", "target_values"]


def check_options(method, options):
    """The options of ``method`` (a name or a registered method) with the defaults filled in,
    each value checked against its declaration: the one check of method options in genosift.

    An unknown name is a ``TypeError`` naming the method's options, a value out of its
    declaration a ``ValueError`` (``genosift.FixError``) saying what it must be.

    >>> check_options("relieff", {"n_neighbors": 3})
    {'n_neighbors': 3, 'miss_weight': 'prior'}
    """
    spec = get_method(method)
    defaults = spec.options
    unknown = sorted(set(options) - set(defaults))
    fields = dict(owner="check_options", method_options=PythonText("in the method_options of genosift.score"),
                  describe=PythonText(f"genosift.scores.describe({spec.name!r})", spec.name))
    if unknown:
        listed = ", ".join(f"{k} (default {v!r})" for k, v in defaults.items())
        raise FixTypeError(f"Method '{spec.name}' got unknown option(s) {unknown} ({{method_options}}): "
                           + (f"its options are {listed}" if defaults else "it takes no options")
                           + ". See {describe}.", **fields)
    for name, value in options.items():
        declared = spec.declared[name]
        if not declared.accepts(value):
            raise FixError(f"The '{name}' option of method '{spec.name}' must be {declared.text}. Got {value!r} "
                           "instead ({method_options}). See {describe}.", **fields)
    return {**defaults, **options}


def target_values(spec, y, n_samples):
    """The labels or numeric values ``spec`` needs from ``y`` (None for unsupervised methods)."""
    if spec.task == "unsupervised":
        return None
    y = as_labels(y, n_samples)
    if spec.task == "any":
        return y
    if spec.task == "classification":
        if is_continuous(y):
            raise ValueError(
                f"Method '{spec.name}' needs class labels, but y looks like a continuous target "
                f"({len(np.unique(y))} distinct non-integer values; float labels are classes when there "
                f"are at most {MAX_FLOAT_CLASSES} values, each at least twice). Use a regression method such "
                "as 'pearson', or bin y into classes first."
            )
        return y
    values = numeric_target(y)
    if values is None:
        classes = np.unique(y)
        if len(classes) != 2:
            raise ValueError(
                f"Method '{spec.name}' needs a numeric target or two class labels; y has "
                f"{len(classes)} non-numeric labels. Encode y as numbers first."
            )
        values = (y == classes[1]).astype(np.float64)
    top = np.abs(values[np.isfinite(values)]).max(initial=0.0)
    if top >= HUGE and spec.invariance != "monotone":  # rank methods see only the order of y
        raise ValueError(
            f"y holds values as large as {top:.4g}, beyond 2**500 ({HUGE:.4g}): their squares overflow float64, so "
            f"method '{spec.name}' would score every feature wrongly. Divide y by a power of ten first (correlations, "
            "rank statistics and their p-values do not change; coefficients come out in the new unit).")
    return values


class LabelCoding:
    """The target of a row-streamed method, coded the same way whatever the chunks hold.

    A regression method given two non-numeric labels scores ``y == the label that sorts last``
    (as on all rows at once). Chunk by chunk a chunk may hold one label only, so the label seen
    first is coded 0 and the other 1; :meth:`finish` turns the merged statistics into those of the
    sorted coding (for co-moments, ``1 - y``: the co-moment changes sign, exactly). Other methods'
    targets are coded per chunk as they are.
    """

    def __init__(self, spec):
        self.spec = spec
        self.labels = []
        self.numeric = False
        self._lock = threading.Lock()

    def __getstate__(self):  # a fitted selector pickles with it; the lock is made anew
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def values(self, y, n_samples):
        """The target of one chunk of ``n_samples`` rows."""
        if self.spec.task != "regression":
            return target_values(self.spec, y, n_samples)
        y = as_labels(y, n_samples)
        values = numeric_target(y)
        with self._lock:
            if values is not None:
                self.numeric = True
            else:
                for label in np.unique(y):
                    if label not in self.labels:
                        self.labels.append(label)
                self._check()
                first = self.labels[0]
        return values if values is not None else (y != first).astype(np.float64)

    def _check(self, done=False):
        if self.numeric and self.labels:
            raise ValueError(f"Method '{self.spec.name}' needs a numeric target or two class labels; y mixes "
                             "numbers and other labels across chunks. Encode y as numbers first.")
        if len(self.labels) > 2 or done and len(self.labels) == 1:
            raise ValueError(
                f"Method '{self.spec.name}' needs a numeric target or two class labels; y has "
                f"{'at least ' if not done else ''}{len(self.labels)} non-numeric labels "
                f"({plain(sorted(self.labels)[:5])}). Encode y as numbers first.")

    def finish(self, stats):
        """The merged statistics as if ``y`` had been coded on all rows at once."""
        if not self.labels:
            return stats
        self._check(done=True)
        if self.labels[0] > self.labels[1]:  # the label seen first sorts last: it is the one coded 1
            return stats.flip_target()
        return stats


def covariate_methods():
    """The names of the methods that take covariates."""
    from ._base import REGISTRY

    return [name for name, m in REGISTRY.items() if m.covariates]


def refuse_covariates(spec, owner="score"):
    """Raise the error for covariates given to a method that does not take them (call it before
    reading data); a method that takes them passes."""
    if not spec.covariates:
        raise FixError(f"Method '{spec.name}' does not adjust for covariates; the methods that do: "
                       f"{covariate_methods()}. Choose one of them ({{method}}), or leave out {{covariates}}.",
                       owner=owner, method=FixError.ANY, covariates=FixError.ANY)


def make_target(spec, y, n_samples, covariates=None, kinship=None):
    """The ``Target`` a whole-column method gets: class codes, numeric values, or neither, the
    checked ``covariates`` (an ``(n_samples, c)`` float64 array) of a method that takes them and
    the ``kinship`` (n_samples x n_samples, checked here) of a method that needs one."""
    if covariates is not None:
        refuse_covariates(spec)
    check_kinship_given(spec, kinship)
    target = _make_target(spec, y, n_samples)
    if covariates is None and kinship is None:
        return target
    from dataclasses import replace

    from .lmm import check_kinship

    return replace(target, covariates=covariates,
                   kinship=None if kinship is None else check_kinship(kinship, n_samples))


def check_target(spec, y):
    """The error for labels ``y`` that the method ``spec`` cannot score (the wrong kind, one class,
    a class too small, NaN), raised before any data are read; labels it takes pass."""
    check_classes(spec, _make_target(spec, y, len(y)))


def make_targets(spec, ys, n_samples, covariates=None, kinship=None):
    """The ``Target`` of each of the targets ``ys`` (a tuple, in their order), sharing the same
    ``covariates`` and ``kinship`` (checked once: one array for all, so that a mixed model
    decomposes it once)."""
    from dataclasses import replace

    first = make_target(spec, ys[0], n_samples, covariates, kinship)
    return (first, *(replace(_make_target(spec, y, n_samples), covariates=first.covariates, kinship=first.kinship)
                     for y in ys[1:]))


def check_kinship_given(spec, kinship, owner="score"):
    """The error for a kinship given to a method that takes none, or none given to one that
    needs it (call it before reading data)."""
    if kinship is not None and not spec.kinship:
        raise FixError(f"Method '{spec.name}' does not use a kinship; the methods that do: "
                       f"{sorted(m for m, s in REGISTRY.items() if s.kinship)}. Choose one of them ({{method}}), "
                       "or leave out {kinship}.", owner=owner, method=FixError.ANY, kinship=FixError.ANY)
    if kinship is None and spec.kinship:
        raise FixError(f"Method '{spec.name}' needs the kinship of the samples: pass {{kinship}} (for example "
                       "{kinship_of_data}, the kinship of the features themselves).", owner=owner,
                       kinship=FixError.ANY, kinship_of_data=PythonText("genosift.kinship(X)"))


def _make_target(spec, y, n_samples):
    y = target_values(spec, y, n_samples)
    if y is None:
        return Target(n_samples)
    if spec.task == "regression":
        return Target(n_samples, values=y)
    values = numeric_target(y) if spec.task == "any" else None
    if spec.task == "any":
        from sklearn.utils.multiclass import type_of_target

        if type_of_target(y) not in ("binary", "multiclass"):
            return Target(n_samples, values=values)
    classes, codes = np.unique(y, return_inverse=True)
    count = np.bincount(codes, minlength=len(classes)).astype(np.float64)
    return Target(n_samples, codes=codes.astype(np.intp, copy=False), classes=classes, count=count, values=values)


def finite_blocks(blocks, names, scale_free=False):
    """Pass ``(j0, j1, block)`` through, raising the non-finite error (naming the features);
    with ``scale_free``, features too large to square come out rescaled (``rescale_huge``)."""
    from ..core.validation import raise_nonfinite, rescale_huge

    for j0, j1, block in blocks:
        values = block.data if sp.issparse(block) else block
        if not np.isfinite(values).all():
            dense = block.toarray() if sp.issparse(block) else block
            local = default_feature_names(j1)[j0:] if names is None else names[j0:j1]
            raise_nonfinite(dense, np.flatnonzero(~np.isfinite(dense).all(axis=0)), local)
        yield j0, j1, rescale_huge(block) if scale_free else block


@dataclass(frozen=True)
class Deduplicated:
    """The blocks hold the distinct columns of the data, found before the blocks were cut
    (``distinct_columns`` of data in memory): feature ``j``'s is column ``inverse[j]`` (None: every
    column was distinct already), and no column recurs from one block to another."""

    inverse: np.ndarray | None = None


def score_blocks(spec, blocks, target, feature_names, options, *, n_jobs=None, each=None, deduplicated=None):
    """Run a "blocks" method over ``(j0, j1, block)`` column blocks, in order: a ``ScoreResult``
    (for a tuple of targets, ``make_targets``, a list of one per target, from one pass).

    The one loop behind in-memory arrays and on-disk stores; blocks run on ``n_jobs`` threads.
    ``feature_names`` name the data's features. ``each``: called with ``(j0, j1, block)`` of every
    checked block on its thread, for work that rides along the pass (a store's profile,
    ``scoring.stored_profile.ProfilePass``). ``deduplicated`` (a ``Deduplicated``): the blocks
    hold the data's distinct columns. Without it, a method registered ``distinct="all"`` fits
    each distinct column once over all the blocks (a ``FittedColumns`` remembers what earlier
    blocks fitted).
    """
    names = feature_names
    inverse = None if deduplicated is None else deduplicated.inverse
    if inverse is not None:
        first = np.unique(inverse, return_index=True)[1]
        names = (default_feature_names(inverse.size, first) if names is None
                 else np.asarray(names, dtype=object)[first])
    seen = FittedColumns() if deduplicated is None and spec.distinct == "all" else None

    def one(item):
        if each is not None:
            each(*item)
        return score_block(spec, item[2], target, options, seen)

    parts = map_blocks(one, finite_blocks(blocks, names, spec.scale_free), n_jobs=n_jobs)
    joined = join_scores(parts)
    joined = joined if inverse is None else take_scores(joined, inverse)
    if isinstance(target, tuple):
        return [build_result(spec, target_scores(joined, t), each_target, feature_names, options)
                for t, each_target in enumerate(target)]
    return build_result(spec, joined, target, feature_names, options)


def fit_block(spec, block, target, options):
    """A "blocks" method on ``block`` for ``target``; for a tuple of targets (``make_targets``),
    for each of them at once: a ``Scores`` whose arrays hold one column per target, from the
    method's ``many`` where it shares work between them, else from one fit per target. A block
    of 0s and 1s goes to the method's ``positives`` where it has one (the same numbers)."""
    if spec.positives is not None and zeros_and_ones(block):  # presence/absence: each class's count of 1s
        if not isinstance(target, tuple):
            return spec.positives(class_positives(block, target.codes, target.count.shape[0]), target, **options)
        return stack_scores([spec.positives(class_positives(block, each.codes, each.count.shape[0]), each, **options)
                             for each in target])
    if not isinstance(target, tuple):
        return spec.func(block, target, **options)
    if spec.many is not None:
        return spec.many(block, target, **options)
    return stack_scores([spec.func(block, each, **options) for each in target])


def score_block(spec, block, target, options, seen=None):
    """A "blocks" method on one checked block: ``spec.func``, run on the block's distinct columns
    only if the method is registered ``distinct`` (their results copied to the duplicates); with
    ``seen`` (a ``FittedColumns`` shared by the blocks of one pass), only on the columns that no
    block before held (each distinct column of a store fitted once in all)."""
    found = distinct_columns(block) if spec.distinct else None
    if seen is None:
        if found is None:
            return fit_block(spec, block, target, options)
        first, inverse = found
        return take_scores(fit_block(spec, block[:, first], target, options), inverse)
    first, inverse = found if found is not None else (np.arange(block.shape[1]), None)
    distinct = block[:, first] if found is not None else block
    if not distinct.shape[1]:
        return fit_block(spec, block, target, options)
    keys = seen.keys_of(distinct)
    where, new, waits = seen.claim(keys)
    try:
        if new.size:
            where[new] = seen.add(keys[new], fit_block(spec, distinct[:, new], target, options))
    finally:
        seen.release(keys[new])
    late = seen.wait(keys, where, waits)  # columns another thread was fitting, if it failed
    if late.size:
        where[late] = seen.add(keys[late], fit_block(spec, distinct[:, late], target, options))
    scores = seen.gather(where)
    return scores if inverse is None else take_scores(scores, inverse)


class FittedColumns:
    """The results of the columns fitted so far in one pass over blocks of features, by column
    key (``core.distinct.EntryHashes``: two 64-bit hashes of the non-zero entries; two different
    columns share a key with a chance of about m**2 / 2**129 among m distinct columns), so that a
    column that a block before held is not fitted again. Shared by the threads of the pass."""

    def __init__(self):
        self.lock = threading.Lock()
        self.index = {}    # key (16 bytes) -> (part, position)
        self.parts = []    # the Scores of each fit
        self.pending = {}  # key -> Event: being fitted by a thread

    @staticmethod
    def keys_of(block):
        from ..core.distinct import EntryHashes

        hashes = EntryHashes(block.shape[1])
        hashes.columns(block, 0)
        return hashes.keys()

    def claim(self, keys):
        """``(where, new, waits)``: the ``(part, position)`` of each key's fitted column (``-1``
        where none is yet), the keys this caller is to fit (claimed: no other thread fits them
        meanwhile) and those another thread is fitting now, ``{row: event}``."""
        where = np.full((len(keys), 2), -1, dtype=np.int64)
        new, waits = [], {}
        with self.lock:
            for row, k in enumerate(keys):
                key = k.tobytes()
                if key in self.index:
                    where[row] = self.index[key]
                elif key in self.pending:
                    waits[row] = self.pending[key]
                else:
                    self.pending[key] = threading.Event()
                    new.append(row)
        return where, np.asarray(new, dtype=np.intp), waits

    def release(self, keys):
        """The claims on ``keys`` end (fitted, or failed): those waiting for them go on."""
        with self.lock:
            events = [self.pending.pop(k.tobytes(), None) for k in keys]
        for event in events:
            if event is not None:
                event.set()

    def wait(self, keys, where, waits):
        """Fill ``where`` for the keys other threads were fitting, once they are; the rows whose
        fit failed there (to fit here)."""
        late = []
        for row, event in waits.items():
            event.wait()
            with self.lock:
                found = self.index.get(keys[row].tobytes())
            if found is None:
                late.append(row)
            else:
                where[row] = found
        return np.asarray(late, dtype=np.intp)

    def add(self, keys, fitted):
        """Keep ``fitted`` (the Scores of the columns ``keys``): their ``(part, position)``."""
        with self.lock:
            part = len(self.parts)
            self.parts.append(fitted)
            for position, k in enumerate(keys):
                self.index.setdefault(k.tobytes(), (part, position))
        return np.column_stack([np.full(len(keys), part), np.arange(len(keys))])

    def gather(self, where):
        """The Scores of the columns at ``where`` (``(part, position)`` rows)."""
        with self.lock:
            parts = {int(q): self.parts[q] for q in np.unique(where[:, 0])}
        first = parts[int(where[0, 0])]

        def take(get):
            model = get(first)
            if model is None:
                return None
            out = np.empty((len(where), *model.shape[1:]), dtype=model.dtype)  # a column per target
            for q, scores in parts.items():
                rows = where[:, 0] == q
                out[rows] = get(scores)[where[rows, 1]]
            return out

        arrays = [take(lambda scores, i=i: scores[i]) for i in range(4)]
        columns = (None if first.columns is None else
                   {name: take(lambda scores, name=name: scores.columns[name]) for name in first.columns})
        return Scores(*arrays, columns, first.absent)


def take_scores(scores, index):
    """``scores`` of the features ``index`` (a ``Scores`` indexed like an array, columns too)."""
    arrays = (None if values is None else values[index] for values in scores[:4])
    columns = None if scores.columns is None else {name: values[index] for name, values in scores.columns.items()}
    return Scores(*arrays, columns, scores.absent)


def join_scores(parts):
    """The ``Scores`` of consecutive feature blocks, joined into one (their ``columns`` too)."""
    arrays = (None if parts[0][i] is None else np.concatenate([q[i] for q in parts]) for i in range(4))
    columns = parts[0].columns
    if columns is not None:
        columns = {name: np.concatenate([q.columns[name] for q in parts]) for name in columns}
    return Scores(*arrays, columns, parts[0].absent)  # the targets' columns: the same in every block


def statistics(spec, X, y, *, feature_names=None):
    """``(stats, feature_names)`` of data in memory (an array, a sparse matrix, a DataFrame) and their
    target ``y``."""
    spec = get_method(spec)
    # a sparse matrix goes as it is to from_chunk, which checks it (one pass over its indices,
    # and a CSC matrix stays CSC for the statistics that read columns)
    M, names = (X, None) if sp.issparse(X) else as_matrix(X)
    names = names if feature_names is None else np.asarray(feature_names, dtype=object)
    return spec.statistic.from_chunk(M, target_values(spec, y, M.shape[0]), feature_names=names), names


def stream_statistics(spec, chunks, *, feature_names=None):
    """``(stats, feature_names)`` of a stream of ``(X, y)`` row chunks, merged exactly."""
    spec = get_method(spec)
    first = {}
    coding = LabelCoding(spec)

    def summarize(chunk):
        try:
            Xc, yc = chunk
        except (TypeError, ValueError):
            raise TypeError("A chunk stream must yield (X_chunk, y_chunk) pairs.") from None
        if np.shape(Xc)[0] == 0:
            return spec.statistic.empty()
        M, names = as_matrix(Xc)
        if not first:
            given = None if feature_names is None else np.asarray(feature_names, dtype=object)
            first.update(p=M.shape[1], names=names if given is None else given)
        same_names = names is None or first["names"] is None or np.array_equal(first["names"], names)
        if M.shape[1] != first["p"] or not same_names:
            raise ValueError(
                f"Chunk columns differ from the first chunk's ({M.shape[1]} vs {first['p']} features): "
                "every chunk must have the same features in the same order."
            )
        return spec.statistic.from_chunk(M, coding.values(yc, M.shape[0]), feature_names=first["names"])

    stats = accumulate(chunks, summarize, spec.statistic.empty())
    if stats.n_features == 0:
        raise ValueError("The chunk stream was empty: no rows to score.")
    return coding.finish(stats), first["names"]


def check_classes(spec, stats):
    """Raise the error for a target the method cannot score (one class, too few samples, a
    constant value); ``stats`` is merged statistics or a ``Target``. Call it before reading data."""
    if spec.task == "any":
        if stats.n_samples < 2:
            raise ValueError(f"Method '{spec.name}' needs at least 2 samples; got {int(stats.n_samples)}.")
        if stats.classes is not None and len(stats.classes) < 2 or stats.classes is None and stats.m2_y == 0:
            raise ValueError(f"y is constant (only one class or value): method '{spec.name}' needs a target that "
                             "varies.")
        return
    if spec.task != "classification":
        if spec.task == "regression":
            if stats.n_samples < 2:
                raise ValueError(f"Method '{spec.name}' needs at least 2 samples; got {int(stats.n_samples)}.")
            if stats.m2_y == 0:
                raise ValueError(f"y is constant: method '{spec.name}' needs a target that varies.")
        return
    classes, count = stats.classes, stats.count
    if len(classes) < 2:
        raise ValueError(
            f"y has only one class ({plain(classes[0])}) in "
            f"{int(count.sum())} sample(s); method "
            f"'{spec.name}' compares classes and needs at least two. Check the labels."
        )
    if spec.binary_only and len(classes) != 2:
        raise ValueError(
            f"Method '{spec.name}' compares two classes, but y has {len(classes)}: "
            f"{plain(list(classes)[:10])}. Use 'anova' or 'fisher' for several classes, or keep two classes."
        )
    small = classes[count < spec.min_class_size]
    if len(small):
        raise ValueError(
            f"Method '{spec.name}' needs at least {spec.min_class_size} samples in every class; "
            f"class(es) {plain(small)} have fewer. Add samples or drop those classes."
        )


def finish(spec, stats, feature_names, options=None):
    """Turn merged statistics into a ``ScoreResult``; ``options`` were checked where the call
    entered the library (``check_options``), the defaults are filled in here."""
    spec = get_method(spec)
    opts = {**spec.options, **(options or {})}
    check_classes(spec, stats)
    return build_result(spec, spec.func(stats, **opts), stats, feature_names, opts)


def build_result(spec, out, data, feature_names, opts):
    """Build the ``ScoreResult`` of ``out``; ``data`` (statistics or Target) gives n and classes.

    ``feature_names``: the names, None (``x0, x1, ...``), or a function that returns them when the
    result first needs them. A method with a ``combine`` step (one that pools all features) gets
    it here, on the joined ``out``.
    """
    if spec.combine is not None:
        out = spec.combine(out)
    return ScoreResult(
        method=spec.name,
        **result_arrays(spec, out),
        n_samples=int(data.n_samples),
        classes=data.classes if spec.task in ("classification", "any") else None,
        method_options=opts,
        names=None if feature_names is None or callable(feature_names) else np.asarray(feature_names, dtype=object),
        names_loader=feature_names if callable(feature_names) else None,
        model=spec.fitted(data, **opts) if spec.fitted is not None and isinstance(data, Target) else None,
    )


def result_arrays(spec, out):
    """The per-feature fields of a ``ScoreResult`` from a method's ``Scores``: float64 arrays,
    ``scores`` by default the statistic (its absolute value if signed), p-values in [0, 1]."""
    statistic = np.asarray(out.statistic, dtype=np.float64)
    scores = out.scores if out.scores is not None else (np.abs(statistic) if spec.signed else statistic)
    columns = None
    if out.columns is not None:
        columns = {name: np.asarray(values, dtype=np.float64) if np.asarray(values).dtype.kind in "biuf"
                   else np.asarray(values, dtype=object) for name, values in out.columns.items()}
    return {
        "scores": np.asarray(scores, dtype=np.float64),
        "statistic": statistic,
        # p-values are probabilities: clip the last-bit excursions above 1 (2 * 0.5000000000000001)
        "pvalues": None if out.pvalues is None else np.clip(np.asarray(out.pvalues, dtype=np.float64), 0.0, 1.0),
        "rank_key": out.rank_key,
        "columns": columns,
    }
