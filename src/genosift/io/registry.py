"""What every reader returns (``Dataset``) and the registry of readers by name and suffix."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["READERS", "Dataset", "Reader", "register_reader"]


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
    ploidy : int or None
        Genotypes only (VCF, PLINK): the most copies of an allele that a value counts (the
        calls' largest ploidy; 2 for PLINK, which stores a haploid call as homozygous; 1 for
        presence/absence). A model's variants are matched to new genotypes with it (alleles
        swapped between VCF and PLINK are counted as ``ploidy - count``). None for other data.
    var : pandas.DataFrame or None
        Per-feature columns (annotation), indexed by feature name in the order of ``X``'s
        columns: the annotation columns of a Roary or Panaroo gene presence/absence table
        (``Non-unique Gene name``, ``Annotation``, ...) as text. None for other data. Kept when
        rows are taken (``dataclasses.replace`` keeps it); a store writes it as its AnnData
        ``var``.
    """

    X: object
    sample_ids: np.ndarray
    feature_names: np.ndarray
    obs: object = None
    ploidy: object = None
    var: object = None

    def __post_init__(self):
        n, p = self.X.shape
        if len(self.sample_ids) != n or len(self.feature_names) != p:
            raise ValueError(
                f"Dataset of {n} x {p} values has {len(self.sample_ids)} sample ids and "
                f"{len(self.feature_names)} feature names; they must match its rows and columns."
            )
        if self.var is not None and len(self.var) != p:
            raise ValueError(f"Dataset of {p} features has a var table of {len(self.var)} rows; give one row "
                             "per feature.")

    @property
    def shape(self):
        return self.X.shape

    def with_obs(self, obs):
        """The same data with another per-sample table."""
        return replace(self, obs=obs)


@dataclass(frozen=True)
class Reader:
    """A registered reader: its name, the suffixes it claims, the function, its first docstring line."""

    name: str
    suffixes: tuple
    func: Callable
    summary: str

    @property
    def parameters(self):
        """The names of the function's parameters (the reader options it takes)."""
        import inspect

        return frozenset(inspect.signature(self.func).parameters)


READERS: dict[str, Reader] = {}


def register_reader(name, *, suffixes):
    """Register ``func(path, **read_options) -> Dataset`` as the reader ``name`` for ``suffixes``."""

    def wrap(func):
        summary = next(iter((func.__doc__ or "").strip().splitlines()), "")
        READERS[name] = Reader(name, tuple(suffixes), func, summary)
        return func

    return wrap
