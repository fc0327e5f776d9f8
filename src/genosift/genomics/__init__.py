"""Genomics on top of the scores: where significant k-mers lie and which genes they hit, the
samples' structure and trees, and the pan-genome test.

The public names are imported on first use (PEP 562): a job that needs one module of the
package does not pay for the import of the others.
"""
from importlib import import_module as _import_module

__all__ = ["Annotation", "annotate", "gene_summary", "locate"]


def __getattr__(name):
    """Import a public name from ``annotation`` on first use and keep it."""
    if name in __all__:
        value = getattr(_import_module(".annotation", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
