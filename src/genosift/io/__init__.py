"""Reading data files: one registry of readers, chosen by name, by file suffix or by content.

Every reader returns a ``Dataset``: the matrix (samples in rows; dense ndarray or CSR), the
sample ids and the feature names, plus an optional per-sample table (``obs``) of metadata
columns such as targets and groups.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

__all__ = [
    "Dataset", "MatchReport", "READERS", "Store", "attach_metadata", "convert", "convert_dumps", "convert_kmers",
    "format_of", "open_store", "read", "read_dumps", "read_kmers", "read_metadata", "register_reader", "score_store",
    "sniff_format", "write_store",
]


@dataclass(frozen=True, eq=False)
class Dataset:
    """A data matrix with its names.

    Attributes
    ----------
    X : ndarray or scipy.sparse.csr_matrix (n_samples, n_features), samples in rows
    sample_ids : ndarray of str (n_samples,)
    feature_names : ndarray of str (n_features,)
    obs : pandas.DataFrame or None
        Per-sample columns (targets, groups), indexed by sample id in the order of ``X``.
    """

    X: object
    sample_ids: np.ndarray
    feature_names: np.ndarray
    obs: object = None

    def __post_init__(self):
        n, p = self.X.shape
        if len(self.sample_ids) != n or len(self.feature_names) != p:
            raise ValueError(
                f"Dataset of {n} x {p} values has {len(self.sample_ids)} sample ids and "
                f"{len(self.feature_names)} feature names; they must match its rows and columns."
            )

    @property
    def shape(self):
        return self.X.shape

    def with_obs(self, obs):
        """The same data with another per-sample table."""
        return replace(self, obs=obs)


@dataclass(frozen=True)
class Reader:
    name: str
    suffixes: tuple
    func: Callable
    summary: str


READERS: dict[str, Reader] = {}


def register_reader(name, *, suffixes):
    """Register ``func(path, **options) -> Dataset`` as the reader ``name`` for ``suffixes``."""

    def wrap(func):
        summary = next(iter((func.__doc__ or "").strip().splitlines()), "")
        READERS[name] = Reader(name, tuple(suffixes), func, summary)
        return func

    return wrap


def read(path, *, format=None, **options):
    """Read a data file into a ``Dataset``: by ``format``, else by its suffix, else by its content.

    See ``genosift.io.format_of``: a suffix that names one format decides; a name that says
    nothing (``counts.gz``) or too little (``.txt``, ``.h5ad``) is settled by the first bytes.
    A folder is read as per-sample k-mer dumps (``read_dumps``) when its files are dumps.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No such file: {str(path)!r}.")
    if path.is_dir() and (format or format_of(path)) != "dumps":
        raise IsADirectoryError(f"{str(path)!r} is a folder, not a data file. Pass the path of a file in it "
                                f"(formats: {sorted(READERS)}).")
    name = format or format_of(path)
    if name not in READERS:
        from .._messages import FixError

        raise FixError(f"The {{format}} option must be one of {sorted(READERS)}. Got {name!r} instead.",
                       owner="read", format=FixError.ANY)
    return READERS[name].func(path, **options)


from . import dumps, kmers, store, delimited, binary, variants  # noqa: E402,F401  (register the readers)
from .formats import format_of, sniff_format  # noqa: E402
from .kmers import read_kmers  # noqa: E402
from .metadata import MatchReport, attach_metadata, read_metadata  # noqa: E402
from .store import Store, convert, open_store, write_store  # noqa: E402
from .kmer_store import convert_kmers  # noqa: E402
from .dumps import convert_dumps, read_dumps  # noqa: E402


def __getattr__(name):
    # ``genosift.io.score_store`` (scoring lives in ``genosift.scoring.store``), resolved on first
    # use so that reading data never imports the scoring drivers.
    if name == "score_store":
        from ..scoring.store import score_store

        return score_store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
