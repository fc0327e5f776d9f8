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

from . import io
from ._anndata import annotate_var
from .datasets import load_golub
from .model_selection import RFE, SelectKCV, StabilitySelection, cross_validate_ks
from .mrmr import MRMR
from .profiles import Profile, profile
from .redundancy import RedundancyFilter
from .scores import REGISTRY, ScoreResult, get_method, methods, score
from .selection import SelectFdr, SelectKBest, SelectPercentile
from .transforms import presence

__all__ = [
    "MRMR", "REGISTRY", "RFE", "RedundancyFilter", "ScoreResult", "SelectFdr", "SelectKBest", "SelectKCV",
    "SelectPercentile", "StabilitySelection", "__version__", "annotate_var", "cross_validate_ks", "get_method", "io",
    "load_golub", "methods", "presence", "profile", "Profile", "score",
]
