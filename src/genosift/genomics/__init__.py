"""Genomics on top of the scores: where significant k-mers lie and which genes they hit."""
from .annotation import Annotation, annotate, gene_summary, locate

__all__ = ["Annotation", "annotate", "gene_summary", "locate"]
