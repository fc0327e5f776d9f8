"""The method registry and the result type every method returns."""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, NamedTuple, Sequence

import numpy as np

from .._validation import check_unique_names, default_feature_names

TASKS = ("classification", "regression", "any", "unsupervised")
#: How a method reads the data: "rows" merges statistics over row chunks; "blocks" needs every
#: sample of a block of columns at once (ranks, histograms); "matrix" needs the whole matrix
#: (neighbour methods), and bounds its own memory.
STREAMING = ("rows", "blocks", "matrix")


@dataclass(frozen=True, eq=False)
class Target:
    """``y`` prepared for whole-column methods.

    ``codes``/``classes``/``count`` for class labels (``codes[i]`` indexes ``classes``);
    ``values`` for a numeric target (two non-numeric labels are coded 0/1). Either may be None.
    """

    n_samples: int
    codes: np.ndarray | None = None
    classes: np.ndarray | None = None
    count: np.ndarray | None = None
    values: np.ndarray | None = None

    @property
    def m2_y(self):
        return 0.0 if self.values is None else float(((self.values - self.values.mean()) ** 2).sum())


def ratio(num, den):
    """``num / den`` elementwise, quietly: x/0 is +-inf and 0/0 is NaN, as the conventions want."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / den


#: Scores that agree in their leading 32 significant bits (about 10 decimal digits) rank as
#: ties. Their last bits depend on the order of the arithmetic, which differs between dense,
#: sparse, chunked and distributed copies of the same data; without this, two features with
#: equal scores in exact arithmetic could swap places between the copies.
TIE_BITS = 32
_LOW_BITS = np.int64((1 << (52 - (TIE_BITS - 1))) - 1)
_HALF = np.int64(1 << (52 - TIE_BITS))


def tie_key(key):
    """``key`` rounded to :data:`TIE_BITS` significant bits (to nearest, so that a value one unit
    in the last place from a round number such as 0.1875 rounds to it): values that agree to
    that precision become equal; order is kept otherwise (rounding is monotone)."""
    key = np.asarray(key, dtype=np.float64)
    finite = np.isfinite(key)
    with np.errstate(over="ignore"):
        magnitude = ((np.abs(key).view(np.int64) + _HALF) & ~_LOW_BITS).view(np.float64)
    return np.where(finite, np.copysign(magnitude, key), key)


def rank_order(key):
    """Feature indices, best first: higher key first, NaN last; ties (values equal to about
    ten significant digits, see :data:`TIE_BITS`) by lower index."""
    return np.argsort(-tie_key(key), kind="stable")


def bh_qvalues(pvalues):
    """Benjamini-Hochberg adjusted p-values; NaN p-values stay NaN and are not counted."""
    from scipy.stats import false_discovery_control

    q = np.full(pvalues.shape, np.nan)
    ok = ~np.isnan(pvalues)
    if ok.any():
        q[ok] = false_discovery_control(pvalues[ok], method="bh")
    return q


class Scores(NamedTuple):
    """What a method function returns; ``scores`` defaults to ``statistic`` (abs if signed)."""

    statistic: np.ndarray
    pvalues: np.ndarray | None = None
    scores: np.ndarray | None = None
    rank_key: np.ndarray | None = None


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
    options : dict              the method options used

    ``qvalues``, ``ranking`` and ``feature_names`` (the defaults, or a store's names) each need
    a pass over all features (two of them a sort), so they are computed on first use and kept.
    """

    method: str
    scores: np.ndarray
    statistic: np.ndarray
    pvalues: np.ndarray | None
    n_samples: int
    classes: np.ndarray | None = None
    options: dict = field(default_factory=dict)
    names: np.ndarray | None = field(default=None, repr=False)
    rank_key: np.ndarray | None = field(default=None, repr=False)
    names_loader: Callable[[], Sequence[str]] | None = field(default=None, repr=False)

    def __post_init__(self):
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
    def qvalues(self):
        return None if self.pvalues is None else bh_qvalues(self.pvalues)

    @cached_property
    def ranking(self):
        return rank_order(self.scores if self.rank_key is None else self.rank_key)

    @cached_property
    def ranks(self):
        """Rank of each feature, 1 = best, in feature order."""
        ranks = np.empty(self.n_features, dtype=np.int64)
        ranks[self.ranking] = np.arange(1, self.n_features + 1)
        return ranks

    def top(self, k):
        """Names of the ``k`` best features, best first."""
        return self.feature_names[self.ranking[:k]]

    def to_frame(self, *, sort=True):
        """A tidy DataFrame: feature, score, statistic, pvalue, qvalue, rank (1 = best)."""
        import pandas as pd

        nan = np.full(self.n_features, np.nan)
        frame = pd.DataFrame(
            {
                "feature": self.feature_names,
                "score": self.scores,
                "statistic": self.statistic,
                "pvalue": nan if self.pvalues is None else self.pvalues,
                "qvalue": nan if self.qvalues is None else self.qvalues,
                "rank": self.ranks,
            }
        )
        frame.attrs.update(self.provenance())
        return frame.iloc[self.ranking].reset_index(drop=True) if sort else frame

    def provenance(self):
        """Method, options, version and data shape, as plain JSON-ready values."""
        from .. import __version__

        return {
            "method": self.method,
            "options": dict(self.options),
            "genosift_version": __version__,
            "n_samples": int(self.n_samples),
            "n_features": int(self.n_features),
            "classes": None if self.classes is None else [c.item() if hasattr(c, "item") else c for c in self.classes],
        }

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

    @property
    def options(self):
        skip = 1 if self.streaming == "rows" else 2
        params = list(inspect.signature(self.func).parameters.values())[skip:]
        return {p.name: p.default for p in params}


REGISTRY: dict[str, Method] = {}


def register(name, *, task, statistic=None, streaming="rows", binary_only=False, pvalues=False,
             signed=False, min_class_size=1, sparse_blocks=False, scale_free=False, formula, reference):
    """Register a method under ``name``.

    The function's first two arguments depend on ``streaming``: ``func(stats, **options)`` for
    "rows" (``stats`` an instance of ``statistic``); ``func(block, target, **options)`` for
    "blocks" (a float64 column block, or a CSC block of sparse input if ``sparse_blocks``);
    ``func(M, target, **options)`` for "matrix" (a checked ndarray or CSR matrix). It returns
    ``Scores`` for the features it was given. Its keyword options are the method's options.
    ``scale_free``: the statistic does not change when a feature is multiplied by a positive
    constant, so features too large to square are rescaled by a power of two before it runs.
    """
    if task not in TASKS or streaming not in STREAMING or (streaming == "rows") != (statistic is not None):
        raise ValueError(f"bad registration of {name!r}: task in {TASKS}, streaming in {STREAMING}, "
                         "and a statistic exactly when streaming is 'rows'")

    def wrap(func):
        summary = next(iter((func.__doc__ or "").strip().splitlines()), "")
        REGISTRY[name] = Method(name, func, statistic, task, binary_only, pvalues, signed, streaming,
                                min_class_size, sparse_blocks, formula, reference, summary, scale_free)
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
            "statistic": m.statistic.__name__ if m.statistic else f"whole columns ({m.streaming})",
            "options": ", ".join(f"{k}={v!r}" for k, v in m.options.items()) or "-",
            "formula": m.formula,
            "summary": m.summary,
            "reference": m.reference,
        }
        for m in REGISTRY.values()
    ]
    return pd.DataFrame(rows).set_index("method")
