"""The method registry and the result type every method returns."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ..core.constraints import check_declaration
from ..core.validation import check_unique_names, default_feature_names
from ._order import rank_order, top_order

TASKS = ("classification", "regression", "any", "unsupervised")
#: How a method reads the data: "rows" merges statistics over row chunks; "blocks" needs every
#: sample of a block of columns at once (ranks, histograms); "matrix" needs the whole matrix
#: (neighbour methods), and bounds its own memory.
STREAMING = ("rows", "blocks", "matrix")
#: What a method's scores do not see of a feature (see ``register``).
INVARIANCES = ("affine", "monotone", "none")
#: The columns of ``ScoreResult.to_frame`` that a method's own ``columns`` may not take.
FRAME_COLUMNS = ("feature", "score", "statistic", "pvalue", "qvalue", "af", "rank")


@dataclass(frozen=True, eq=False)
class Target:
    """``y`` prepared for whole-column methods.

    ``codes``/``classes``/``count`` for class labels (``codes[i]`` indexes ``classes``);
    ``values`` for a numeric target (two non-numeric labels are coded 0/1). Either may be None.
    ``covariates``: an ``(n_samples, c)`` float64 array of checked covariates (no intercept
    column; the methods that take them add it), or None; only methods registered with
    ``covariates=True`` get one. ``kinship``: an ``(n_samples, n_samples)`` symmetric float64
    array, the kinship of the samples, for the methods registered with ``kinship=True``.
    """

    n_samples: int
    codes: np.ndarray | None = None
    classes: np.ndarray | None = None
    count: np.ndarray | None = None
    values: np.ndarray | None = None
    covariates: np.ndarray | None = None
    kinship: np.ndarray | None = None

    @property
    def m2_y(self):
        if self.values is None:
            return 0.0
        with np.errstate(over="ignore"):  # a target too large to square (a rank method's) has an infinite spread
            return float(((self.values - self.values.mean()) ** 2).sum())


def ratio(num, den):
    """``num / den`` elementwise, quietly: x/0 is +-inf and 0/0 is NaN, as the conventions want."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / den


def genomic_inflation(pvalues):
    """The genomic inflation factor lambda of ``pvalues``: the median of their 1-degree-of-freedom
    chi-square quantiles over the median of that distribution (0.4549...), NaN ignored.

    About 1 when the p-values are uniform (no association anywhere); above 1 when population
    structure or another confounder inflates the test statistics genome-wide.

    >>> round(genomic_inflation(np.linspace(0.001, 1.0, 1000)), 3)
    0.998
    """
    from scipy.special import chdtri

    p = np.asarray(pvalues, dtype=np.float64)
    p = p[~np.isnan(p)]
    if not p.size:
        return float("nan")
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("p-values must lie in [0, 1].")
    # the quantile falls as p rises: the median quantile is that of the median p-value (or the
    # mean of the two middle ones' quantiles), so only those are computed
    k = p.size // 2
    if p.size % 2:
        middle = chdtri(1.0, np.partition(p, k)[k])
    else:
        low, high = np.partition(p, [k - 1, k])[[k - 1, k]]
        middle = (chdtri(1.0, high) + chdtri(1.0, low)) / 2
    return float(middle / chdtri(1.0, 0.5))


def bh_qvalues(pvalues):
    """Benjamini-Hochberg adjusted p-values; NaN p-values stay NaN and are not counted.

    The same arithmetic, in the same order, as ``scipy.stats.false_discovery_control(p, method="bh")``
    (so the same bits), without importing ``scipy.stats`` on every run."""
    q = np.full(pvalues.shape, np.nan)
    ok = ~np.isnan(pvalues)
    p = np.asarray(pvalues[ok], dtype=np.float64)
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("`ps` must include only numbers between 0 and 1.")
    if p.size <= 1:
        q[ok] = p
        return q
    order = np.argsort(p, kind="stable")
    ps = p[order]
    m = ps.size
    ps *= m / np.arange(1, m + 1, dtype=np.float64)
    np.minimum.accumulate(ps[::-1], out=ps[::-1])
    adjusted = np.empty_like(ps)
    adjusted[order] = ps
    q[ok] = np.clip(adjusted, 0.0, 1.0)
    return q


class Scores(NamedTuple):
    """What a method function returns; ``scores`` defaults to ``statistic`` (abs if signed).

    ``columns``: more per-feature results, ``{name: array (p,)}`` (float64, or text such as a
    note on how a feature was fitted), in the order the result table shows them; or None.
    ``absent``: of stacked targets' ``Scores`` (``stack_scores``), ``{name: bool per target}``
    for the columns some targets do not have.
    """

    statistic: np.ndarray
    pvalues: np.ndarray | None = None
    scores: np.ndarray | None = None
    rank_key: np.ndarray | None = None
    columns: dict | None = None
    absent: dict | None = None


def stack_scores(parts):
    """The ``Scores`` of several targets (one each, same features) as one whose arrays hold one
    column per target, in their order (``target_scores`` takes one out). Targets may have
    different columns (a mixed model's binary and numeric targets): each has its own back."""
    arrays = (None if parts[0][i] is None else np.column_stack([q[i] for q in parts]) for i in range(4))
    if parts[0].columns is None:
        return Scores(*arrays)
    names = list(dict.fromkeys(name for q in parts for name in q.columns))
    absent = {name: np.array([name not in q.columns for q in parts]) for name in names}
    absent = {name: missing for name, missing in absent.items() if missing.any()} or None
    blank = np.full(len(parts[0].statistic), np.nan)
    columns = {name: np.column_stack([q.columns.get(name, blank) for q in parts]) for name in names}
    return Scores(*arrays, columns, absent)


def target_scores(scores, t):
    """The ``Scores`` of target ``t`` out of ``stack_scores``' columns."""
    arrays = (None if values is None else np.ascontiguousarray(values[:, t]) for values in scores[:4])
    absent = scores.absent or {}
    columns = (None if scores.columns is None else
               {name: np.ascontiguousarray(values[:, t]) for name, values in scores.columns.items()
                if not (name in absent and absent[name][t])})
    return Scores(*arrays, columns)


@dataclass(frozen=True, eq=False)
class ScoreResult:
    """Per-feature scores of one method, with p-values, q-values, ranking and provenance.

    Attributes
    ----------
    method : str
    scores : ndarray (p,)       higher = more relevant; NaN where undefined (constant feature)
    statistic : ndarray (p,)    the raw statistic (signed t, r, ...)
    pvalues : ndarray (p,) or None
    qvalues : ndarray (p,) or None   Benjamini-Hochberg adjusted p-values
    ranking : ndarray (p,)      feature indices, best first; NaN last; ties by lower index
    ranks : ndarray (p,)        rank of each feature, 1 = best
    feature_names : ndarray (p,)  the given names, or ``x0, x1, ...``
    n_samples : int
    classes : ndarray or None   class labels, in the order the statistics use them
    method_options : dict       the method options used
    af : ndarray (p,) or None   allele frequency: the share of the scored samples carrying each
                                feature (value above 0); set when an allele-frequency filter is given
    af_range : (float, float) or None   the filter ``(min_af, max_af)``: features outside it are
                                not tested (score, statistic, p- and q-value NaN; ranked last)
    columns : dict or None      the method's other per-feature results, ``{name: array (p,)}``
                                (a regression's ``beta`` and ``se``, ...), shown by ``to_frame``
    covariates : tuple of str or None   the names of the covariates the method adjusted for
                                (``check_covariates``'s columns); None without covariates
    model : dict or None        what the method fitted once for all features (a mixed model's
                                ``h2``); None for the others

    ``qvalues``, ``ranking`` and ``feature_names`` (the defaults, or a store's names) each need
    a pass over all features (two of them a sort), so they are computed on first use and kept.
    """

    method: str
    scores: np.ndarray
    statistic: np.ndarray
    pvalues: np.ndarray | None
    n_samples: int
    classes: np.ndarray | None = None
    method_options: dict = field(default_factory=dict)
    names: np.ndarray | None = field(default=None, repr=False)
    rank_key: np.ndarray | None = field(default=None, repr=False)
    names_loader: Callable[[], Sequence[str]] | None = field(default=None, repr=False)
    af: np.ndarray | None = field(default=None, repr=False)
    af_range: tuple | None = None
    columns: dict | None = field(default=None, repr=False)
    covariates: tuple | None = None
    model: dict | None = None

    def __post_init__(self):
        for name, values in (self.columns or {}).items():
            if name in FRAME_COLUMNS or len(values) != self.scores.shape[0]:
                raise ValueError(f"A method's column {name!r} must be one value per feature "
                                 f"({self.scores.shape[0]}) named unlike {FRAME_COLUMNS}; got {len(values)}.")
        if self.names is not None:
            if len(self.names) != self.scores.shape[0]:
                raise ValueError(f"The 'feature_names' parameter of score must be one name per feature "
                                 f"({self.scores.shape[0]}). Got {len(self.names)} names instead.")
            check_unique_names(self.names)

    @property
    def n_features(self):
        return self.scores.shape[0]

    @cached_property
    def feature_names(self):
        if self.names is not None:
            return self.names
        if self.names_loader is not None:  # e.g. a store's names, decoded on first use
            return np.asarray(self.names_loader(), dtype=object)
        return default_feature_names(self.n_features)

    @cached_property
    def tested(self):
        """Which features passed the allele-frequency filter (bool, (p,)); None without a filter."""
        if self.af_range is None:
            return None
        return (self.af >= self.af_range[0]) & (self.af <= self.af_range[1])

    @property
    def n_tested(self):
        """How many features were tested: all of them, unless an allele-frequency filter left some out."""
        return self.n_features if self.tested is None else int(self.tested.sum())

    @cached_property
    def qvalues(self):
        # features left out by the filter have NaN p-values: the correction counts the tested ones only
        return None if self.pvalues is None else bh_qvalues(self.pvalues)

    @cached_property
    def ranking(self):
        order = rank_order(self.scores if self.rank_key is None else self.rank_key)
        if self.tested is None:
            return order
        inside = self.tested[order]  # the features not tested come after every tested one
        return np.concatenate([order[inside], order[~inside]])

    @cached_property
    def ranks(self):
        """Rank of each feature, 1 = best, in feature order."""
        ranks = np.empty(self.n_features, dtype=np.int64)
        ranks[self.ranking] = np.arange(1, self.n_features + 1)
        return ranks

    def top_indices(self, k):
        """Indices of the ``k`` best features, best first: ``ranking[:k]``, without sorting all the
        scores unless the full ranking is already known."""
        if "ranking" in self.__dict__:
            return self.ranking[:k]
        return top_order(self.scores if self.rank_key is None else self.rank_key, k, self.tested)

    def top(self, k):
        """Names of the ``k`` best features, best first (tested features only)."""
        return self.names_of(self.top_indices(min(k, self.n_tested)))

    def names_of(self, rows):
        """The names of the features ``rows`` (indices), in that order; a store's names are decoded
        for those features only (its loader's ``take``) unless all of them are already."""
        rows = np.asarray(rows, dtype=np.intp)
        take = getattr(self.names_loader, "take", None)
        if self.names is not None or take is None or "feature_names" in self.__dict__:
            return self.feature_names[rows]
        return np.asarray(take(rows), dtype=object)

    def to_frame(self, *, sort=True, rows=None):
        """A tidy DataFrame: feature, score, statistic, pvalue, qvalue, the method's own columns
        (``columns``), then with an allele-frequency filter an ``af`` column (the share of
        samples carrying the feature), and rank (1 = best).

        Best first if ``sort``, else in feature order; ``rows`` (feature indices): those features
        only, in that order (a slice of a ranking of millions, without the whole table)."""
        import pandas as pd

        if rows is None and sort:
            rows = self.ranking
        take = (lambda values: values) if rows is None else (lambda values: values[rows])
        size = self.n_features if rows is None else len(rows)
        nan = np.full(size, np.nan)
        columns = {
            "feature": self.feature_names if rows is None else self.names_of(rows),
            "score": take(self.scores),
            "statistic": take(self.statistic),
            "pvalue": nan if self.pvalues is None else take(self.pvalues),
            "qvalue": nan if self.qvalues is None else take(self.qvalues),
            **{name: take(values) for name, values in (self.columns or {}).items()},
        }
        if self.af is not None:
            columns["af"] = take(self.af)
        columns["rank"] = take(self.ranks)
        frame = pd.DataFrame(columns)
        frame.attrs.update(self.provenance())
        return frame

    def provenance(self):
        """Method, options, version and data shape, as plain JSON-ready values."""
        from .. import __version__

        out = {
            "method": self.method,
            "options": dict(self.method_options),
            "genosift_version": __version__,
            "n_samples": int(self.n_samples),
            "n_features": int(self.n_features),
            "classes": None if self.classes is None else [c.item() if hasattr(c, "item") else c for c in self.classes],
        }
        if self.af_range is not None:
            out.update(min_af=self.af_range[0], max_af=self.af_range[1], n_tested=self.n_tested)
        if self.covariates is not None:
            out["covariates"] = list(self.covariates)
        if self.model is not None:
            out["model"] = dict(self.model)
        return out

    def __repr__(self):
        best = ", ".join(map(str, self.top(3)))
        return (
            f"ScoreResult(method={self.method!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features}, best=[{best}])"
        )


@dataclass(frozen=True)
class Method:
    """A registered scoring method and its declared properties."""

    name: str
    func: Callable
    statistic: type | None
    task: str
    binary_only: bool
    has_pvalues: bool
    signed: bool
    streaming: str
    min_class_size: int
    sparse_blocks: bool
    formula: str
    reference: str
    summary: str
    scale_free: bool = False
    invariance: str = "none"
    covariates: bool = False
    combine: Callable | None = None
    distinct: bool | str = False
    declared: dict = field(default_factory=dict)
    kinship: bool = False
    fitted: Callable | None = None
    many: Callable | None = None
    positives: Callable | None = None

    @property
    def options(self):
        skip = 1 if self.streaming == "rows" else 2
        params = list(inspect.signature(self.func).parameters.values())[skip:]
        return {p.name: p.default for p in params}

    @property
    def option_help(self):
        """``{option: (type text, description)}`` from the "Parameters" section of the method's
        docstring (empty strings for an option it does not describe)."""
        return {name: _parameter_docs(self.func.__doc__).get(name, ("", "")) for name in self.options}


def _parameter_docs(doc):
    """``{name: (type text, description)}`` of a numpy-style "Parameters" section."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out, name, start = {}, None, None
    for i, line in enumerate(lines):
        if line.strip() == "Parameters" and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            start = i + 2
            break
    if start is None:
        return out
    for line in lines[start:]:
        if not line.strip():
            name = None if name is None or not out[name][1] else name
            continue
        if not line.startswith(" "):
            head, _, kind = line.partition(" : ")
            if not head.isidentifier():  # the next section, or text after the parameters
                break
            name = head
            out[name] = (kind.strip(), "")
        elif name is not None:
            kind, text = out[name]
            out[name] = (kind, f"{text} {line.strip()}".strip())
    return out


def task_text(method):
    """The target a method takes, in words: ``"class labels, two classes"``, ``"none (unsupervised)"``..."""
    m = get_method(method)
    return {"classification": "class labels" + (", two classes" if m.binary_only else ", any number of classes"),
            "regression": "a numeric target, or two classes coded 0/1",
            "any": "a numeric target or class labels",
            "unsupervised": "none (unsupervised)"}[m.task]


def describe(name):
    """A method's description, as ``genosift methods NAME`` prints it: what it computes, its task,
    whether it gives p-values, its reference and its options with their defaults and meaning.

    Examples
    --------
    >>> print(describe("chi2").splitlines()[0])
    chi2: Chi-square test of independence between the feature's categories and the class.
    """
    import textwrap

    m = get_method(name)
    task = task_text(m)
    streaming = {"rows": "rows: statistics merged over row chunks (streams, partial_fit, stores by rows)",
                 "blocks": "blocks: every sample of a block of features at once (stores by feature blocks)",
                 "matrix": "matrix: the whole matrix in memory"}[m.streaming]
    if m.positives is not None:
        streaming += ("; data of 0s and 1s (presence/absence): from each class's count of 1s (one pass over the rows "
                      "in memory, each block of a store)")

    def wrapped(label, text, indent=2):
        return textwrap.fill(text, width=96, initial_indent=" " * indent + label,
                             subsequent_indent=" " * (indent + len(label)), break_on_hyphens=False)

    lines = [f"{m.name}: {m.summary}", "",
             wrapped("task:       ", task),
             wrapped("p-values:   ", "yes" if m.has_pvalues else "no"),
             wrapped("statistic:  ", m.formula),
             wrapped("reads:      ", streaming),
             wrapped("reference:  ", m.reference), ""]
    if not m.options:
        lines.append("  options: none")
    else:
        lines.append("  options (--method-option KEY=VALUE on the command line, keywords of genosift.score):")
        for option, default in m.options.items():
            _, text = m.option_help[option]
            lines.append(f"    {option}={default!r}  ({m.declared[option].text})")
            if text:
                lines.append(textwrap.fill(text, width=96, initial_indent=" " * 8, subsequent_indent=" " * 8,
                                           break_on_hyphens=False))
    return "\n".join(lines)


REGISTRY: dict[str, Method] = {}


def register(name, *, task, invariance, statistic=None, streaming="rows", binary_only=False, pvalues=False,
             signed=False, min_class_size=1, sparse_blocks=False, scale_free=False, covariates=False, combine=None,
             distinct=False, options=None, kinship=False, fitted=None, many=None, positives=None, formula, reference):
    """Register a method under ``name``.

    The function's first two arguments depend on ``streaming``: ``func(stats, **options)`` for
    "rows" (``stats`` an instance of ``statistic``); ``func(block, target, **options)`` for
    "blocks" (a float64 column block, or a CSC block of sparse input if ``sparse_blocks``);
    ``func(M, target, **options)`` for "matrix" (a checked ndarray or CSR matrix). It returns
    ``Scores`` for the features it was given. Its keyword options are the method's options.
    ``scale_free``: the statistic does not change when a feature is multiplied by a positive
    constant, so features too large to square are rescaled by a power of two before it runs.
    ``invariance``: the maps of a feature that leave the scores unchanged, ``"affine"``
    (``a x + b`` with ``a > 0``), ``"monotone"`` (every strictly increasing map: the method sees
    only the order of the values) or ``"none"``; the property tests check it for every method.
    ``covariates``: the method adjusts for covariates (``Target.covariates``, a "blocks" method);
    the others refuse them.
    ``combine``: a step after the blocks' ``Scores`` are joined, ``combine(scores) -> Scores``, for a
    method that pools information across all features (an empirical-Bayes prior); it reads what
    it needs from ``scores.columns``, ignores the features whose columns are NaN (not tested),
    and every driver gets it through ``build_result``.
    ``distinct``: a "blocks" method whose result for a feature depends on that feature's values
    alone (and the target), not on the other features of its block: identical columns are scored
    once (``score_block``), which the contract tests check bit for bit. ``distinct="all"``: the
    same, and fitting a column costs far more than hashing it (an iterative fit), so a pass over
    blocks of a store fits each distinct column once in all its blocks (``FittedColumns``).
    ``kinship``: the method needs the samples' kinship (``Target.kinship``, a "blocks" method);
    the others refuse one. ``fitted``: ``fitted(target) -> dict``, what the method fits once for
    all features (a mixed model's null ``h2``), the result's ``model``.
    ``many``: ``many(block, targets, **options) -> Scores``, a "blocks" method's work for several
    targets at once (a tuple of ``Target`` sharing the samples, covariates and kinship) whose
    arrays hold one column per target, for a method that shares work between them (the mixed
    model rotates the block once); without it each target is fitted in turn (``fit_block``).
    ``positives``: ``positives(counts, target, **options) -> Scores``, the method on features whose
    every value is 0 or 1 from each class's count of 1s alone (``counts`` (k, p), in the order of
    ``target.classes``), the same numbers ``func`` gives on their blocks (a "blocks" method without
    covariates): data in memory that are all 0 and 1 (presence/absence) are then scored from one
    pass over their rows, without the columns (``scoring.memory``); the contract tests compare the
    two bit for bit.
    ``options``: ``{option: Constraint}`` (``genosift.core.constraints``), the values each keyword
    option of the function takes: exactly its keyword options, each default accepted. They are
    checked once, by ``check_options``, before the method runs; the function trusts them.
    """
    if invariance not in INVARIANCES:
        raise ValueError(f"bad registration of {name!r}: invariance in {INVARIANCES}, not {invariance!r}")
    if task not in TASKS or streaming not in STREAMING or (streaming == "rows") != (statistic is not None):
        raise ValueError(f"bad registration of {name!r}: task in {TASKS}, streaming in {STREAMING}, "
                         "and a statistic exactly when streaming is 'rows'")
    if distinct not in (False, True, "all"):
        raise ValueError(f"bad registration of {name!r}: distinct is False, True or 'all', not {distinct!r}")
    if (covariates or distinct or kinship or many or positives) and streaming != "blocks":
        raise ValueError(f"bad registration of {name!r}: a method that takes covariates, scores distinct columns "
                         "once or scores presence from class counts works on column blocks")

    def wrap(func):
        check_declaration(name, func, options or {}, 1 if streaming == "rows" else 2)
        if positives is not None:
            check_declaration(name, positives, options or {}, 2)
        summary = next(iter((func.__doc__ or "").strip().splitlines()), "")
        REGISTRY[name] = Method(name, func, statistic, task, binary_only, pvalues, signed, streaming,
                                min_class_size, sparse_blocks, formula, reference, summary, scale_free, invariance,
                                covariates, combine, distinct, dict(options or {}), kinship, fitted, many, positives)
        return func

    return wrap


def get_method(name):
    """The registered method called ``name``, or a clear error listing the valid names."""
    if isinstance(name, Method):
        return name
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"The 'method' parameter must be one of {sorted(REGISTRY)}. Got {name!r} instead. "
            "See genosift.methods() for what each one computes."
        ) from None


def methods():
    """A DataFrame of the registered methods and their declared properties."""
    import pandas as pd

    rows = [
        {
            "method": m.name,
            "task": m.task,
            "classes": "binary" if m.binary_only else ("any" if m.task == "classification" else "-"),
            "pvalues": m.has_pvalues,
            "signed": m.signed,
            "streaming": m.streaming,
            "scale_free": m.scale_free,
            "covariates": m.covariates,
            "statistic": m.statistic.__name__ if m.statistic else f"whole columns ({m.streaming})",
            "options": ", ".join(f"{k}={v!r}" for k, v in m.options.items()) or "-",
            "formula": m.formula,
            "summary": m.summary,
            "reference": m.reference,
        }
        for m in REGISTRY.values()
    ]
    return pd.DataFrame(rows).set_index("method")
