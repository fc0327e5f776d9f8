"""genosift's build backend: setuptools' own, and the kernels compiled into the wheel.

genosift's numba kernels are compiled on their first call and cached beside the package's
sources. A wheel built here ships that cache already filled: after copying the package into the
build folder, ``build_py`` runs ``genosift precompile`` on the copy (the README's commands on
small data), so that numba writes the compiled kernels into the copy's ``__pycache__`` folders,
which go into the wheel. numba (0.68 and later) keys a cached kernel on the content of its source
file, the machine's CPU, numba's version and Python's, so the cache serves an install on this
machine with the same versions (what ``pip install .`` makes) and is ignored, and refilled on
first use, anywhere else.

To run the package, the build needs the package's dependencies: the wheel's build asks for
them (``get_requires_for_build_wheel``); an editable install does not compile anything.
``GENOSIFT_NO_PRECOMPILE=1`` skips the step.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403 (every hook this module does not change)
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parents[1]


def project_dependencies():
    """The ``[project] dependencies`` of pyproject.toml."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def get_requires_for_build_wheel(config_settings=None):
    return build_meta.get_requires_for_build_wheel(config_settings) + project_dependencies()


class BuildPyWithKernels(build_py):
    """``build_py``, then ``genosift precompile`` run on the built copy of the package."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("GENOSIFT_NO_PRECOMPILE"):
            return
        precompile(Path(self.build_lib))


def precompile(build_lib):
    """Fill the numba cache of the package copy in ``build_lib``; a failure is said, not fatal
    (the kernels are then compiled on their first use)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}  # the cache beside the copy's sources
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(build_lib.resolve()), env.get("PYTHONPATH")) if p)
    code = "import sys; from genosift.cli import main; sys.exit(main(['precompile']))"
    print("genosift: compiling the kernels of the README's commands into the package (about a minute)",
          flush=True)
    with tempfile.TemporaryDirectory() as folder:  # not the source tree: the copy is what gets imported
        run = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True)
    if run.returncode:
        print("genosift: warning: the kernels could not be compiled while building (they will be on their first "
              f"use):\n{run.stdout[-2000:]}{run.stderr[-4000:]}", file=sys.stderr, flush=True)
    else:
        print(run.stdout.strip(), flush=True)
