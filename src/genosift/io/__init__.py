"""Reading data files: one registry of readers, chosen by name, by file suffix or by content.

Every reader returns a ``Dataset``: the matrix (samples in rows; dense ndarray or CSR), the
sample ids and the feature names, plus an optional per-sample table (``obs``) of metadata
columns such as targets and groups and an optional per-feature table (``var``) of annotation.
"""
from __future__ import annotations

from .registry import READERS, Dataset, Reader, register_reader  # noqa: F401

__all__ = [
    "CovariateMatch", "Dataset", "MatchReport", "READERS", "Store", "attach_metadata", "convert", "convert_dumps",
    "convert_kmers", "format_of", "match_covariates", "open_store", "read", "read_covariates", "read_dumps",
    "read_kinship",
    "read_kmers", "read_metadata", "register_reader", "sniff_format", "write_store",
]


from . import dumps, kmers, store, delimited, binary, variants, pangenome  # noqa: E402,F401  (register the readers)
from .formats import format_of, read, sniff_format  # noqa: E402
from .kmers import read_kmers  # noqa: E402
from .metadata import MatchReport, attach_metadata, read_metadata  # noqa: E402
from .covariate_table import CovariateMatch, match_covariates, read_covariates, read_kinship  # noqa: E402
from .store import Store, convert, open_store, write_store  # noqa: E402
from .kmer_store import convert_kmers  # noqa: E402
from .dumps import convert_dumps, read_dumps  # noqa: E402

