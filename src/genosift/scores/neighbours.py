"""Neighbour-based scores: ReliefF."""
from __future__ import annotations
