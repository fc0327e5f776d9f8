"""The options of the k-mer readers checked (paths, samples, count dtype, block size), and the
checks of what they read (counts a dtype holds exactly, sample ids in none of the files)."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from ..core.messages import FixError
from ..core.validation import param_error
from .quoting import names_list

__all__ = ["COUNT_TYPES", "check_block_size", "check_count_dtype", "check_max_count", "check_paths", "check_samples",
           "count_dtype", "exact_limit", "warn_unmatched"]

#: The types a store of counts takes by default (``dtype="auto"``), smallest first.
COUNT_TYPES = (np.uint8, np.uint16, np.uint32)


def exact_limit(dtype):
    """The largest count that ``dtype`` holds exactly (with every smaller one)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return 2 ** (np.finfo(dt).nmant + 1)
    return int(np.iinfo(dt).max)


def count_dtype(biggest):
    """The smallest of :data:`COUNT_TYPES` that holds every count up to ``biggest``; float64 beyond
    (exact up to 2**53, ``check_max_count`` refuses more)."""
    for t in COUNT_TYPES:
        if biggest <= np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.float64)


def check_max_count(biggest, dtype):
    """Refuse counts up to ``biggest`` when ``dtype`` does not hold them all exactly."""
    limit = exact_limit(dtype)
    if biggest > max(limit, 2**53):
        raise ValueError(
            f"The largest count, {int(biggest)}, is above 2**53 ({2**53}), the largest count that scores "
            "(computed in float64) hold exactly with every smaller one. Check the counting step: no k-mer "
            "occurs that often in a genome.")
    if biggest > limit:
        raise FixError(
            f"The largest count, {int(biggest)}, is more than dtype {np.dtype(dtype).name} holds "
            f"exactly (up to {limit}). Pass {{dtype}} (exact up to 2**53), or a larger integer type.",
            owner="convert_kmers", dtype="float64",
        )


def warn_unmatched(samples, ids, row_of, paths, stacklevel=4):
    """Warn of ``samples`` in none of the files, and of ids of the files left out of ``samples``."""
    found = set(ids)
    absent = [s for s in samples if s not in found]
    extra = sorted(s for s, r in zip(ids, row_of) if r < 0)
    files = ", ".join(repr(str(p)) for p in paths)
    if absent:
        warnings.warn(
            f"{len(absent)} of the {len(samples)} ids in 'samples' are in none of the k-mer files "
            f"({files}); their rows are all zero: {names_list(absent)}. Check that the ids are spelt as "
            "in the k-mer files (e.g. 'sample_1' against 'sample_1.fasta').",
            UserWarning,
            stacklevel=stacklevel,
        )
    if extra:
        warnings.warn(
            f"{len(extra)} sample ids of the k-mer files ({files}) are not in 'samples' and were "
            f"left out: {names_list(extra)}.",
            UserWarning,
            stacklevel=stacklevel,
        )


def check_paths(paths):
    """``paths`` (one or a list) as a list of Paths of existing files, each once."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    try:
        paths = [Path(os.fsdecode(p)) for p in paths]
    except TypeError:
        raise param_error("paths", "read_kmers", "a path or a list of paths", paths) from None
    if not paths:
        raise param_error("paths", "read_kmers", "a path or a non-empty list of paths", paths)
    seen = {}
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"No such file: {str(p)!r}.")
        if p.is_dir():
            raise IsADirectoryError(f"{str(p)!r} is a folder, not a k-mer file.")
        key = p.resolve()
        if key in seen:
            raise ValueError(
                f"The file {str(p)!r} is listed twice in 'paths' (also as {str(seen[key])!r}); "
                "its counts would be added twice. List each file once."
            )
        seen[key] = p
    return paths


def check_samples(samples):
    """``samples`` as a list of str (None stays None), checked to be non-empty and without repeats."""
    if samples is None:
        return None
    if isinstance(samples, (str, bytes)):
        raise param_error("samples", "read_kmers", "a list of sample ids (not one string)", samples)
    out = [str(s) for s in samples]
    if not out:
        raise param_error("samples", "read_kmers", "a non-empty list of sample ids, or None", samples)
    counts = {}
    for s in out:
        counts[s] = counts.get(s, 0) + 1
    dup = sorted(s for s, c in counts.items() if c > 1)
    if dup:
        raise ValueError(
            f"The 'samples' parameter of read_kmers lists {len(dup)} id(s) more than once: "
            f"{names_list(dup)}. Each sample must be listed once."
        )
    return out


def check_count_dtype(dtype, owner, expected="a real number type such as np.float64"):
    """``dtype`` as a numpy dtype of real numbers, for the counts read by ``owner``; ``expected``
    says what the message asks for."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind not in "iuf":
        raise param_error("dtype", owner, expected, dtype)
    return dt


def check_block_size(block_size, owner):
    """Refuse a ``block_size`` of ``owner`` that is not a positive int."""
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise param_error("block_size", owner, "a positive int (bytes)", block_size)
