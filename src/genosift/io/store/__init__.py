"""The genosift store: one AnnData-compatible HDF5 file, read in row chunks and feature blocks.

Convert a data set once (``write_store``, ``kmer_store.convert_kmers``), then score it out of core
as often as needed (``genosift.score(path, ...)``, run by ``genosift.scoring.store``): row-mergeable
methods read chunks of samples, whole-column methods read blocks of features, and memory stays
bounded by a chunk budget, never by the data size.

Why this format
---------------
The store is an ``.h5ad`` file (suffix ``.gs.h5ad``): HDF5, laid out as the AnnData on-disk
specification says (``X`` as a ``csr_matrix`` group or a 2-D array, ``obs`` and ``var`` data
frames). ``anndata.read_h5ad``, scanpy and every other AnnData reader open it as they are, so a
converted k-mer matrix is also a file the genomics tools already know; genosift needs only h5py.
HDF5 keeps a 1-D array contiguous on disk, so any range of rows of a CSR matrix is one sequential
read of ``data`` and ``indices``, at the speed of the disk; genosift reads those byte ranges with
``os.preadv`` straight into numpy buffers (no copy through HDF5, and the GIL is released, so a
thread reads the next chunk while the current one is scored). Data are stored uncompressed: the
point of the store is to stream at disk speed, and decompression would be the bottleneck.
Parquet (rows of a table, no sparse matrix type) and zarr (a folder of many small files, an
extra dependency, no gain for local disks) were the alternatives.

Rows and columns
----------------
Row chunks are cheap in CSR, feature blocks are not: the entries of a block of columns lie
scattered over every row. So a sparse store also keeps the same matrix by columns (CSC), under
``var/_genosift_columns``: this doubles the size on disk and makes both access patterns single
sequential reads. It sits inside the ``var`` group, which AnnData reads column by column from its
``column-order`` attribute, so AnnData tools ignore it and do not load it (``anndata.read_h5ad``
refuses unknown top-level groups, and would load a copy kept in ``layers``, doubling the memory of
anyone who opens the file with it). A store written with
``column_copy=False``, or any other ``.h5ad`` file with a CSR ``X``, still gives feature blocks:
one pass counts the entries of every column, then each pass over the rows gathers as many blocks
as the budget holds (slower, still bounded memory). Dense matrices are stored as one 2-D array
in tiles of about 1 MiB, which serve rows and columns alike.

Exact values
------------
Values are stored in the data's own type (float64 for the k-mer reader: every count up to 2**53
exact) or in the ``dtype`` asked for, after checking that every value converts exactly: a count
never wraps or rounds. Scores accumulate in float64 whatever the stored type.

Layout::

    /X                     csr_matrix (data, indices, indptr) or a 2-D array
    /obs                   data frame: index = sample ids, columns = Dataset.obs
    /var                   data frame: index = feature names, columns = Dataset.var
    /var/_genosift_columns csc_matrix: the same matrix by columns (sparse stores)
    /var/_genosift_names   uint8: the feature names as UTF-8 joined by NUL
    /layers /obsm /varm /obsp /varp /uns   empty, as AnnData expects

The names are kept twice: as HDF5 variable-length strings, which AnnData reads, and as one NUL-joined
blob, which loads about four times faster (2,000,000 k-mers: 0.12 s against 0.5 s) and costs one
byte per character on disk.
"""
from __future__ import annotations

# the helpers other io modules (k-mer stores, dump conversion, spilling) write and read stores with
from .access import Store, StoreReader, open_store, read_store
from .encoding import NameBlob, require_h5py, set_encoding, string_blob  # noqa: F401
from .write import (  # noqa: F401
    CHUNK_BYTES,
    SUFFIX,
    atomic_output,
    check_dtype,
    column_groups,
    convert,
    index_dtype,
    write_skeleton,
    write_store,
)

__all__ = ["CHUNK_BYTES", "SUFFIX", "NameBlob", "Store", "StoreReader", "convert", "open_store",
           "read_store", "write_store"]
