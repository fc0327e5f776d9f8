"""Sphinx configuration of genosift's documentation: `python -m sphinx -W -b html docs docs/_build/html`.

The pages are Markdown (MyST); the API pages come from the numpydoc docstrings, the command-line
reference from the parser itself (sphinx-argparse), the methods table from the registry
(`tools/methods_table.py` keeps it in `methods.md`).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import genosift  # noqa: E402

project = "genosift"
author = "genosift developers"
copyright = "genosift developers"
release = version = genosift.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "numpydoc", "sphinxarg.ext"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_typehints = "none"
html_theme = "furo"
html_title = f"genosift {release}"
suppress_warnings = ["myst.xref_missing"]
