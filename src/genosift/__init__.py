"""genosift: find the features that matter in very high-dimensional data.

>>> import genosift as gs
>>> X, y, names = gs.load_golub()
>>> res = gs.score(X, y, method="welch")
>>> res.to_frame().head(3)  # doctest: +SKIP

The public names are imported on first use (PEP 562), so that ``import genosift`` and the
``genosift`` command start fast: scikit-learn, numba and scipy.stats load only when needed.
"""
from importlib import import_module as _import_module

from ._version import __version__

# public name -> the module that defines it
_PUBLIC = {
    "load_golub": ".io.datasets",
    "REGISTRY": ".scores", "ScoreResult": ".scores", "get_method": ".scores", "methods": ".scores",
    "score": ".scoring", "score_targets": ".scoring",
    "score_pairs": ".scoring.pairs", "PairScores": ".scoring.pairs",
    "presence": ".core.transforms",
    "SelectFdr": ".selectors.univariate", "SelectKBest": ".selectors.univariate",
    "SelectPercentile": ".selectors.univariate",
    "MRMR": ".selectors.mrmr", "RedundancyFilter": ".selectors.redundancy",
    "RFE": ".selectors.rfe", "SelectKCV": ".selectors.cv", "StabilitySelection": ".selectors.stability",
    "cross_validate_ks": ".selectors.cv",
    "ElasticNetSelector": ".selectors.enet", "EnetResult": ".selectors.enet",
    "KnockoffSelector": ".selectors.knockoffs", "KnockoffResult": ".selectors.knockoffs",
    "Profile": ".scoring.profiles", "profile": ".scoring",
    "annotate_var": ".io.anndata",
    "count_patterns": ".scoring", "Patterns": ".scoring.patterns",
    "lineage_effects": ".scoring.lineage",
    "principal_coordinates": ".genomics.structure", "kinship": ".genomics.structure",
    "heritability": ".scores.lmm",
    "annotate": ".genomics", "locate": ".genomics",
    "simulate_clonal_population": ".genomics.clonal", "clonal_gene_table": ".genomics.clonal",
    "pairwise_comparisons": ".genomics.pairwise", "read_tree": ".genomics.trees", "upgma_tree": ".genomics.trees",
    "pangenome_traits": ".genomics.pangenome",
}

__all__ = [
    "ElasticNetSelector",
    "EnetResult",
    "KnockoffResult",
    "KnockoffSelector",
    "MRMR",
    "PairScores",
    "Patterns",
    "REGISTRY",
    "RFE",
    "Profile",
    "RedundancyFilter",
    "ScoreResult",
    "SelectFdr",
    "SelectKBest",
    "SelectKCV",
    "SelectPercentile",
    "StabilitySelection",
    "__version__",
    "annotate",
    "annotate_var",
    "clonal_gene_table",
    "count_patterns",
    "cross_validate_ks",
    "get_method",
    "heritability",
    "io",
    "jobs",
    "kinship",
    "lineage_effects",
    "load_golub",
    "locate",
    "methods",
    "pairwise_comparisons",
    "pangenome_traits",
    "presence",
    "principal_coordinates",
    "profile",
    "read_tree",
    "score",
    "score_pairs",
    "score_targets",
    "simulate_clonal_population",
    "upgma_tree",
]


def __getattr__(name):
    """Import a public name (or the ``io`` or ``jobs`` subpackage) on first use and keep it."""
    if name in ("io", "jobs"):
        value = _import_module("." + name, __name__)
    elif name in _PUBLIC:
        value = getattr(_import_module(_PUBLIC[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    """The public names and the module's dunders: not its private helpers, nor the subpackages that
    importing a public name loads as a side effect (``genosift.scoring``...)."""
    return sorted(set(__all__) | {name for name in globals() if name.startswith("__") and name.endswith("__")})
