"""The registry of scoring methods, the method families, and the preparation core the drivers share.

``scores`` knows nothing of files, Dask or selectors: the one ``score()`` that runs a method on
any kind of input lives in ``genosift.scoring`` (``genosift.score``).
"""
from __future__ import annotations

from ._base import (REGISTRY, Method, Scores, ScoreResult, Target, bh_qvalues, describe, get_method, methods,
                    rank_order, register)
from ._discretize import check_bins, discretize, n_codes
from ._af import CarrierTap, WithCarriers, af_tested, carriers, check_af, untested_last, with_af
from ._prepare import (LabelCoding, build_result, check_classes, check_options, covariate_methods, finish,
                       finite_blocks, join_scores, make_target, refuse_covariates, score_blocks, statistics,
                       target_values)
from .covariates import (align_covariates, check_covariates, covariate_columns, frame_sample_ids, has_sample_ids,
                         prepare_covariates, with_covariates)
# registers the methods; this order is the order of genosift.methods()
from . import moments, ranks, contingency, distances, dcor, neighbours, models, regression, logistic, moderated  # noqa: E402,F401,I001

__all__ = [
    "REGISTRY", "Method", "ScoreResult", "Scores", "Target", "bh_qvalues", "get_method", "methods",
    "rank_order", "register", "score", "score_blocks", "statistics", "finish", "check_options", "make_target",
    "LabelCoding", "describe", "carriers", "check_af", "with_af", "check_option_values", "CarrierTap",
    "WithCarriers", "af_tested", "untested_last", "build_result", "check_classes", "finite_blocks", "join_scores",
    "target_values", "covariate_methods", "refuse_covariates", "check_covariates", "align_covariates",
    "prepare_covariates", "with_covariates", "covariate_columns", "has_sample_ids", "frame_sample_ids", "check_bins", "discretize", "n_codes",
]

# ``genosift.scores.score`` and ``check_option_values`` run data through a driver, which lives a
# layer above (``genosift.scoring``); they stay reachable here, resolved on first use, for code
# written against this module (the one upward import, listed in tests/test_architecture.py).


def __getattr__(name):
    if name == "score":
        from ..scoring import score

        return score
    if name == "check_option_values":
        from ..scoring.memory import check_option_values

        return check_option_values
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
