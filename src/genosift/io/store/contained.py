"""HDF5 files read as data only: an HDF5 file can ask its reader to take values or objects from other
files (external links, raw data stored in external files, virtual datasets mapping other files);
every store and AnnData file is walked once when it is opened and refused if anything in it does."""
from __future__ import annotations

from ..reading import ForeignData
from .encoding import require_h5py

__all__ = ["check_contained", "check_file", "foreign_parts"]


def foreign_parts(f):
    """``(name, what)`` for each link or dataset of the open HDF5 file ``f`` that would read another
    file, in the order met: external links and links of other kinds than hard and soft (never
    followed), datasets whose raw data lie in external files, virtual datasets. Soft links are not
    followed (what they point to is met under its own name); each object is visited once, so
    groups linked into their own subtree end the walk."""
    h5py = require_h5py()
    found = []
    seen = set()
    stack = [("", f)]
    while stack:
        where, group = stack.pop()
        for name in group:  # the names of the links: listing them resolves nothing
            full = f"{where}/{name}"
            link = group.get(name, getlink=True)
            if isinstance(link, h5py.ExternalLink):
                found.append((full, f"an external link to {link.filename!r}"))
                continue
            if isinstance(link, h5py.SoftLink):
                continue
            if not isinstance(link, h5py.HardLink):
                found.append((full, "a link of a user-defined kind"))
                continue
            obj = group[name]
            key = _address(h5py, obj)
            if key in seen:
                continue
            seen.add(key)
            if isinstance(obj, h5py.Group):
                stack.append((full, obj))
            elif isinstance(obj, h5py.Dataset):
                if obj.is_virtual:
                    found.append((full, "a virtual dataset (its values are mapped from other files)"))
                elif obj.id.get_create_plist().get_external_count() > 0:
                    found.append((full, "a dataset whose values are stored in external files"))
    return found


def _address(h5py, obj):
    """Where the object lies in its file (the same for every hard link to it)."""
    info = h5py.h5o.get_info(obj.id)
    token = getattr(info, "token", None)  # HDF5 1.12 and later name objects by tokens
    return bytes(token) if token is not None else info.addr


def check_contained(f, path):
    """Raise a ForeignData (a ValueError) naming the first part of the open HDF5 file ``f`` (read from ``path``)
    that would read another file; nothing of it is read."""
    found = foreign_parts(f)
    if found:
        name, what = found[0]
        more = f" and {len(found) - 1} more such part(s)" if len(found) > 1 else ""
        raise ForeignData(
            f"{str(path)!r} is refused: {name!r} is {what}{more}. genosift reads a data file on its own and "
            "never takes values from other files that it names. Write the data into the file itself "
            "(h5py: copy the values into an ordinary dataset; AnnData: adata.write_h5ad) and read that file."
        )


def check_file(path):
    """``check_contained`` on the HDF5 file ``path``, opened for this check alone (for files
    another library then reads: anndata)."""
    with require_h5py().File(path, "r") as f:
        check_contained(f, path)
