"""The AnnData encoding of a store: HDF5 attributes, string arrays and the ``obs``/``var`` data frames,
written and read back (https://anndata.readthedocs.io/en/latest/fileformat-prose.html)."""
from __future__ import annotations

import numpy as np
from numba import njit

from ...core.messages import FixError, PythonText

__all__ = ["NameBlob", "NamesOf", "index_length", "read_column", "read_strings", "require_h5py", "set_encoding",
           "split_names", "string_blob", "write_frame"]


def require_h5py():
    """``h5py``, or an ImportError that says how to install it."""
    try:
        import h5py
    except ImportError:
        raise ImportError(
            "genosift stores are HDF5 files and need h5py: pip install 'genosift[io]' "
            "(or pip install h5py)."
        ) from None
    return h5py



def set_encoding(obj, kind, version, **extra):
    """The AnnData encoding attributes (type, version, extras) of an HDF5 group or dataset."""
    obj.attrs["encoding-type"] = kind
    obj.attrs["encoding-version"] = version
    for k, v in extra.items():
        obj.attrs[k] = v


def string_blob(values, what):
    """``values`` as an object array of str, and their UTF-8 bytes joined by NUL (none may hold one)."""
    out = np.array([str(v) for v in values], dtype=object)
    joined = "\x00".join(out)
    if joined.count("\x00") != max(len(out) - 1, 0):
        bad = next(s for s in out if "\x00" in s)
        raise ValueError(f"The {what} {bad!r} holds a NUL character, which HDF5 strings cannot hold. Rename it.")
    return out, joined


def _write_strings(group, name, values, piece=1 << 18):
    """A string array; ``values`` is any sliceable sequence of str, written ``piece`` at a time."""
    h5py = require_h5py()
    ds = group.create_dataset(name, shape=(len(values),), dtype=h5py.string_dtype("utf-8"))
    for a in range(0, len(values), piece):
        ds[a:a + piece] = np.asarray(values[a:a + piece], dtype=object)
    set_encoding(ds, "string-array", "0.2.0")
    return ds


def write_frame(group, name, index, frame):
    """An AnnData data frame: ``index`` (str) and the columns of ``frame`` (or none)."""
    g = group.create_group(name)
    columns = [] if frame is None else [str(c) for c in frame.columns]
    index_key = "_index"
    if frame is not None and isinstance(frame.index.name, str) and frame.index.name not in columns:
        index_key = frame.index.name  # kept, as AnnData keeps it
    if len(set(columns)) != len(columns) or index_key in columns or "_index" in columns:
        raise ValueError(
            f"The {name} table has duplicated column names or a column named '_index': "
            f"{columns}. Rename its columns."
        )
    set_encoding(g, "dataframe", "0.2.0", _index=index_key)
    g.attrs["column-order"] = np.array(columns, dtype=object) if columns else np.array([], dtype=np.float64)
    _write_strings(g, index_key, index)
    for col, key in zip([] if frame is None else frame.columns, columns):
        _write_column(g, key, frame[col])
    return g


def _write_column(g, key, series):
    """The column ``key`` of a data frame, in the AnnData encoding of its dtype."""
    import pandas as pd

    h5py = require_h5py()
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cat = series.array
        sub = g.create_group(key)
        set_encoding(sub, "categorical", "0.2.0", ordered=bool(cat.ordered))
        cats = cat.categories
        if cats.dtype.kind in "biuf":
            ds = sub.create_dataset("categories", data=np.asarray(cats))
            set_encoding(ds, "array", "0.2.0")
        else:
            _write_strings(sub, "categories", string_blob(cats, f"category of column {key!r}")[0])
        ds = sub.create_dataset("codes", data=np.asarray(cat.codes))
        set_encoding(ds, "array", "0.2.0")
        return
    missing = series.isna().to_numpy()
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        ds = g.create_dataset(key, data=series.to_numpy())
        set_encoding(ds, "array", "0.2.0")
        return
    kind = getattr(dtype, "kind", "O")
    if kind in "biu" and not isinstance(dtype, np.dtype):  # pandas nullable Int64 / boolean
        sub = g.create_group(key)
        set_encoding(sub, "nullable-boolean" if kind == "b" else "nullable-integer", "0.1.0")
        fill = False if kind == "b" else 0
        sub.create_dataset("values", data=series.to_numpy(dtype=dtype.numpy_dtype, na_value=fill))
        sub.create_dataset("mask", data=missing)
        return
    if kind == "f":  # pandas nullable Float64: missing values are NaN
        ds = g.create_dataset(key, data=series.to_numpy(dtype=np.float64, na_value=np.nan))
        set_encoding(ds, "array", "0.2.0")
        return
    values = series.to_numpy(dtype=object)
    kept = values[~missing]
    if not all(isinstance(v, str) for v in kept):
        bad = next(v for v in kept if not isinstance(v, str))
        raise ValueError(
            f"Column {key!r} of obs holds {type(bad).__name__} values such as {bad!r}; a store "
            "holds numbers, booleans, strings and categoricals. Convert it, e.g. "
            f"obs[{key!r}] = obs[{key!r}].astype(str)."
        )
    if not missing.any():
        _write_strings(g, key, string_blob(values, f"value of column {key!r}")[0])
        return
    sub = g.create_group(key)
    set_encoding(sub, "nullable-string-array", "0.1.0")
    text = np.where(missing, "", values).astype(object)
    ds = sub.create_dataset("values", data=string_blob(text, f"value of column {key!r}")[0],
                            dtype=h5py.string_dtype("utf-8"))
    set_encoding(ds, "string-array", "0.2.0")
    sub.create_dataset("mask", data=missing)


def index_length(item):
    """Entries of a 1-D dataset or of an AnnData encoded array group (its ``values``); None if neither."""
    if item is None:
        return None
    if hasattr(item, "keys"):
        item = item.get("values") if "values" in item else item.get("codes")
    return int(item.shape[0]) if item is not None and item.ndim == 1 else None


def read_strings(ds):
    """The values of an AnnData string array (or nullable one: NaN where missing), as an object array."""
    kind = ds.attrs.get("encoding-type", "string-array")
    if kind == "nullable-string-array":
        values = read_strings(ds["values"])
        mask = ds["mask"][()]
        values[mask] = np.nan
        return values
    if ds.dtype.kind in "SO":
        return np.asarray(ds.asstr()[()], dtype=object)
    return np.asarray(ds[()])


def read_column(item, path, key):
    """The obs column ``key`` of the store ``path``, decoded from its AnnData encoding."""
    import pandas as pd

    kind = item.attrs.get("encoding-type", "array")
    if kind == "categorical":
        codes = item["codes"][()]
        cats = read_strings(item["categories"])
        return pd.Categorical.from_codes(codes, categories=cats, ordered=bool(item.attrs.get("ordered", False)))
    if kind in ("nullable-integer", "nullable-boolean"):
        values = item["values"][()]
        mask = item["mask"][()].astype(bool)
        if kind == "nullable-boolean":
            return pd.arrays.BooleanArray(values.astype(bool), mask)
        return pd.arrays.IntegerArray(values, mask)
    if kind in ("string-array", "nullable-string-array"):  # pandas' default string type
        return pd.Series(read_strings(item), dtype="str", copy=False).array
    if kind == "array" and not hasattr(item, "keys"):
        return item[()]
    raise FixError(
        f"Column {key!r} of obs in {str(path)!r} has the AnnData encoding {kind!r}, which the store "
        "reader does not decode. Read the file with {read_h5ad} instead.",
        owner="open_store", read_h5ad=PythonText("genosift.io.read(path, format='h5ad')"),
    )


def split_names(blob, p, piece=1 << 20):
    """The ``p`` names of a NUL-joined UTF-8 blob (None if there are not ``p``).

    Decoded a piece at a time, so that a thread doing this lets others run between pieces.
    """
    names = np.empty(p, dtype=object)
    k = pos = 0
    while p and pos <= len(blob):
        end = blob.find(b"\x00", pos + piece)
        end = len(blob) if end < 0 else end
        part = blob[pos:end].decode("utf-8").split("\x00")
        if k + len(part) > p:
            return None
        names[k:k + len(part)] = part
        k += len(part)
        pos = end + 1
    return names if k == p else None


@njit(cache=True, nogil=True)
def _gather_names(blob, starts, ends):
    """The bytes ``blob[starts[i]:ends[i]]`` of each name, joined by NUL."""
    size = 0
    for i in range(starts.size):
        size += ends[i] - starts[i] + 1
    out = np.empty(max(size - 1, 0), dtype=np.uint8)
    at = 0
    for i in range(starts.size):
        for t in range(starts[i], ends[i]):
            out[at] = blob[t]
            at += 1
        if at < out.size:
            out[at] = 0
            at += 1
    return out


class NameBlob:
    """Names kept as one NUL-joined UTF-8 byte array with their offsets, decoded only when taken.

    Millions of k-mer names as Python strings cost about 90 bytes each; here they cost their
    bytes plus one offset, and ``take(rows)`` decodes just the names asked for.

    Examples
    --------
    >>> blob = NameBlob(np.frombuffer("ACGT\\x00GGA\\x00T".encode(), dtype=np.uint8), 3)
    >>> len(blob), blob.take(np.array([2, 0])).tolist()
    (3, ['T', 'ACGT'])
    """

    def __init__(self, blob, p, piece=1 << 24):
        self.blob = np.asarray(blob, dtype=np.uint8)
        self.starts = np.empty(max(p, 1) + 1, dtype=np.int64)
        self.starts[0], k = 0, 1
        for a in range(0, self.blob.size, piece):  # a piece at a time: no temporaries the size of the blob
            ends = np.flatnonzero(self.blob[a:a + piece] == 0)
            if k + ends.size > p:  # more names than p
                k = -1
                break
            self.starts[k:k + ends.size] = ends + (a + 1)
            k += ends.size
        if k != max(p, 1) or (not p and self.blob.size):
            raise ValueError(f"The names' blob holds {int((self.blob == 0).sum()) + 1 if self.blob.size or p else 0} "
                             f"names, not {p}.")
        self.starts[p] = self.blob.size + 1  # the end of the last name, as if a NUL followed it
        self.starts = self.starts[:p + 1]

    def __len__(self):
        return self.starts.size - 1

    def take(self, rows):
        """The names ``rows`` (indices), an object array of str in that order: their bytes gathered
        NUL-joined in compiled code and decoded at once."""
        rows = np.asarray(rows, dtype=np.intp).ravel()
        out = np.empty(rows.size, dtype=object)
        if rows.size:
            starts = self.starts[rows]
            joined = _gather_names(self.blob, starts, self.starts[rows + 1] - 1)
            out[:] = joined.tobytes().decode("utf-8").split("\x00")
        return out


class NamesOf:
    """The feature names of a store, read when called (a picklable loader for a ScoreResult), or a
    few at a time: ``take(rows)``, indexing and ``len`` decode only the names asked for, so a
    ``Dataset`` of a store can hold it in place of millions of Python strings."""

    def __init__(self, store):
        self.store = store

    def __call__(self):
        return self.store.feature_names

    def __len__(self):
        return self.store.shape[1]

    def take(self, rows):
        """The names of the features ``rows`` (indices), an object array in that order."""
        return self.store.take_names(rows)

    def __getitem__(self, index):
        """One name (an int), or an array of them (a slice, indices or a boolean mask)."""
        if isinstance(index, (int, np.integer)):
            return self.take([range(len(self))[index]])[0]
        if isinstance(index, slice):
            return self.take(np.arange(*index.indices(len(self))))
        index = np.asarray(index)
        return self.take(np.flatnonzero(index) if index.dtype == bool else index)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.store.feature_names, dtype=dtype)

    def __iter__(self):
        return iter(self.store.feature_names)
