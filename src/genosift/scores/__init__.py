"""The registry of scoring methods, the method families, and the preparation core the drivers share.

``scores`` knows nothing of files, Dask or selectors: the one ``score()`` that runs a method on
any kind of input lives in ``genosift.scoring`` (``genosift.score``).
"""
from __future__ import annotations

from ._base import (REGISTRY, Method, Scores, ScoreResult, Target, bh_qvalues, describe, genomic_inflation, get_method,
                    methods, register)
from ._order import TIE_BITS, rank_order, tie_key, top_order
from ._discretize import check_bins, discretize, n_codes
from ._af import CarrierTap, WithCarriers, af_tested, carriers, check_af, untested_last, with_af
from ._prepare import (Deduplicated, LabelCoding, build_result, check_classes, check_kinship_given, check_options,
                       check_target, covariate_methods, finish, finite_blocks, join_scores, make_target, make_targets,
                       refuse_covariates, score_block, score_blocks, statistics, stream_statistics, take_scores,
                       target_values)
from .covariates import (align_covariates, check_covariates, covariate_columns, frame_sample_ids, has_sample_ids,
                         prepare_covariates, with_covariates)
# registers the methods; this order is the order of genosift.methods()
from . import moments, ranks, contingency, distances, dcor, neighbours, models, regression, logistic, moderated, lmm  # noqa: E402,F401,I001
from .lmm import kinship_by_ids  # noqa: E402
from .exact import fisher_exact_pvalues  # noqa: E402
from .contingency import fisher_exact_columns  # noqa: E402

__all__ = [
    "REGISTRY", "Method", "ScoreResult", "Scores", "Target", "bh_qvalues", "genomic_inflation", "get_method", "methods",
    "rank_order", "top_order", "tie_key", "TIE_BITS",
    "register", "score_block", "score_blocks", "take_scores", "statistics", "stream_statistics", "finish",
    "check_options", "make_target",
    "make_targets", "check_target", "LabelCoding", "describe", "carriers", "check_af", "with_af", "CarrierTap",
    "WithCarriers", "af_tested", "untested_last", "build_result", "check_classes", "finite_blocks", "join_scores",
    "target_values", "covariate_methods", "refuse_covariates", "check_covariates", "align_covariates",
    "prepare_covariates", "with_covariates", "covariate_columns", "has_sample_ids", "frame_sample_ids", "check_bins",
    "discretize", "n_codes", "check_kinship_given", "kinship_by_ids", "Deduplicated", "fisher_exact_columns",
    "fisher_exact_pvalues",
]
