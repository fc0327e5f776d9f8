"""Writing results: atomic files, tidy tables, provenance sidecars."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def atomic_write_text(path, text):
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename.

    A reader never sees a half-written file, and an interrupted write leaves nothing under the
    final name.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_table(frame, path):
    """A DataFrame as a tab-separated file, written atomically."""
    atomic_write_text(path, frame.to_csv(sep="\t", index=False, float_format="%.10g"))


def write_json(obj, path):
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def fresh_folder(base):
    """Create and return a new folder ``base``, or ``base-2``, ``base-3``... if it exists."""
    base = Path(base)
    for i in range(1, 10_000):
        candidate = base if i == 1 else base.with_name(f"{base.name}-{i}")
        try:
            candidate.mkdir(parents=True)
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"Could not create a fresh folder next to {base}.")
