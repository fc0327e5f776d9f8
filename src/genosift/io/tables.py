"""The table readers under their former module name: see :mod:`genosift.io.delimited` (CSV, TSV,
.Rtab) and :mod:`genosift.io.binary` (Parquet, NumPy, Matrix Market, AnnData)."""
from .binary import read_h5ad, read_mtx, read_npy, read_npz, read_parquet
from .delimited import read_csv, read_rtab, read_tsv

__all__ = ["read_csv", "read_h5ad", "read_mtx", "read_npy", "read_npz", "read_parquet", "read_rtab", "read_tsv"]
