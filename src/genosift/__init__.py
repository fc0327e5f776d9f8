"""genosift: find the features that matter in very high-dimensional data.

>>> import genosift as gs
>>> X, y, names = gs.load_golub()
>>> res = gs.score(X, y, method="welch")
>>> res.to_frame().head(3)  # doctest: +SKIP
"""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("genosift")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

from .datasets import load_golub
from .scores import REGISTRY, ScoreResult, get_method, methods, score
from .transforms import presence
from . import io
from .selection import SelectFdr, SelectKBest, SelectPercentile
from .mrmr import MRMR
from .redundancy import RedundancyFilter
from .model_selection import RFE, SelectKCV, StabilitySelection, cross_validate_ks
from .profiles import Profile, profile
from ._anndata import annotate_var

__all__ = [
    "MRMR", "REGISTRY", "RFE", "RedundancyFilter", "ScoreResult", "SelectFdr", "SelectKBest", "SelectKCV",
    "SelectPercentile", "StabilitySelection", "__version__", "annotate_var", "cross_validate_ks", "get_method", "io",
    "load_golub", "methods", "presence", "profile", "Profile", "score",
]
