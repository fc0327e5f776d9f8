"""Scores from contingency tables of (discretised) features against the class: chi-square, mutual information."""
from __future__ import annotations
