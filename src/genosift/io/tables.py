"""Delimited tables, Parquet, NumPy, Matrix Market and AnnData files, and metadata tables."""
from __future__ import annotations
