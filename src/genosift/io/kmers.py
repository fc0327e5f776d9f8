"""k-mer counter output: `KMER | sample:count ...` lines, plain or gzip."""
from __future__ import annotations
