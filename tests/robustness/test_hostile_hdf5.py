"""An HDF5 file is data: no store or AnnData file can make genosift read another file.

HDF5 lets a file name other files as the home of its parts: an external link, raw values stored in
an external file, a virtual dataset mapped from other HDF5 files. A crafted ``.gs.h5ad`` whose
``X`` "lies" in ``/etc/passwd`` would otherwise put that file's bytes into a score table. Each
kind of part is planted in a store (dense and sparse) at each place a reader takes values or names
from, and every way of opening such a file is tried: each must refuse it with a message naming the
part, before anything of the other file is read.
"""
import subprocess
import sys

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.io import Dataset, write_store
from genosift.io.reading import ForeignData
from genosift.io.store.contained import foreign_parts

SECRET = b"root:x:0:0:SECRET-LINE:/root:/bin/bash\n" * 8
KINDS = ("external storage", "external link", "virtual dataset")


def _store(tmp_path, sparse):
    rng = np.random.RandomState(0)
    X = rng.randint(0, 4, size=(12, 5)).astype(np.uint8)
    X[:, 0] += 1
    X = sp.csr_matrix(X) if sparse else X
    ids = np.array([f"s{i}" for i in range(12)], dtype=object)
    names = np.array([f"f{j}" for j in range(5)], dtype=object)
    import pandas as pd
    obs = pd.DataFrame({"label": np.arange(12) % 2}, index=ids)
    return write_store(Dataset(X, ids, names, obs), tmp_path / f"{'sp' if sparse else 'de'}.gs.h5ad")


def _plant(path, target, kind, secret_file, other_h5):
    """Replace the dataset ``target`` of the file by one of the ``kind`` that reads another file."""
    with h5py.File(path, "r+") as f:
        old = f[target]
        shape, dtype = old.shape, old.dtype
        attrs = dict(old.attrs)
        del f[target]
        if kind == "external storage":
            size = int(np.prod(shape)) * dtype.itemsize
            f.create_dataset(target, shape=shape, dtype=dtype, external=[(str(secret_file), 0, size)])
        elif kind == "external link":
            with h5py.File(other_h5, "a") as o:
                if "v" not in o:
                    o.create_dataset("v", data=np.frombuffer(SECRET, dtype=np.uint8)[: int(np.prod(shape))]
                                     .reshape(shape).astype(dtype) if dtype.kind != "O" else np.zeros(shape))
            f[target] = h5py.ExternalLink(str(other_h5), "/v")
        else:
            layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
            layout[...] = h5py.VirtualSource(str(other_h5), "/w", shape=shape)
            with h5py.File(other_h5, "a") as o:
                if "w" not in o:
                    o.create_dataset("w", data=np.ones(shape, dtype=dtype))
            f.create_virtual_dataset(target, layout)
        for k, v in attrs.items():
            if not isinstance(f[target], h5py.Group) or kind != "external link":
                try:
                    f[target].attrs[k] = v
                except (KeyError, OSError):
                    pass


@pytest.fixture
def secret(tmp_path):
    p = tmp_path / "secret.txt"
    p.write_bytes(SECRET)
    return p


def _targets(sparse):
    return ["X/data", "X/indices"] if sparse else ["X"]


CASES = [(sparse, target, kind) for sparse in (False, True) for target in _targets(sparse) for kind in KINDS]


@pytest.mark.parametrize(("sparse", "target", "kind"), CASES)
def test_every_opening_refuses_a_part_read_from_another_file(tmp_path, secret, sparse, target, kind):
    path = _store(tmp_path, sparse)
    _plant(path, target, kind, secret, tmp_path / "other.h5")
    with h5py.File(path, "r") as f:
        found = foreign_parts(f)
    assert [name for name, _ in found] == ["/" + target]
    y = np.arange(12) % 2
    openings = {
        "open_store": lambda: gs.io.open_store(path),
        "read (store)": lambda: gs.io.read(path),
        "read (h5ad)": lambda: gs.io.read(path, format="h5ad"),
        "score (path)": lambda: gs.score(gs.io.open_store(path), y, method="fisher"),
    }
    for name, call in openings.items():
        with pytest.raises(ForeignData, match=rf"is refused: '/{target}' is (an external link|a virtual|a dataset "
                                              r"whose values are stored in external files)") as info:
            call()
        assert "SECRET" not in str(info.value), name


def test_backed_anndata_is_refused_before_reading(tmp_path, secret):
    anndata = pytest.importorskip("anndata")
    path = _store(tmp_path, sparse=False)
    _plant(path, "X", "external storage", secret, tmp_path / "other.h5")
    adata = anndata.read_h5ad(path, backed="r")
    try:
        with pytest.raises(ForeignData, match="'/X' is a dataset whose values are stored in external files"):
            gs.score(adata, np.arange(12) % 2, method="fisher")
    finally:
        adata.file.close()


@pytest.mark.parametrize("where", ["var/_index", "obs/label", "uns/extra"])
def test_names_and_tables_from_another_file_are_refused(tmp_path, secret, where):
    """The feature names, a per-sample column or any other member, linked to another file."""
    path = _store(tmp_path, sparse=True)
    with h5py.File(tmp_path / "names.h5", "w") as o:
        o.create_dataset("n", data=np.array([b"root:x:0:0"] * 12, dtype=object), dtype=h5py.string_dtype())
    with h5py.File(path, "r+") as f:
        if where in f:
            del f[where]
        f[where] = h5py.ExternalLink(str(tmp_path / "names.h5"), "/n")
    with pytest.raises(ForeignData, match=rf"'/{where}' is an external link to "):
        gs.io.open_store(path)
    with pytest.raises(ForeignData, match=rf"'/{where}' is an external link to "):
        gs.io.read(path, format="h5ad")


def test_cli_select_writes_nothing_from_another_file(tmp_path, secret):
    path = _store(tmp_path, sparse=False)
    _plant(path, "X", "external storage", secret, tmp_path / "other.h5")
    out = tmp_path / "out.tsv"
    run = subprocess.run([sys.executable, "-m", "genosift", "select", str(path), "--target", "label",
                          "--method", "fisher", "--top", "3", "-o", str(out)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "is refused: '/X' is a dataset whose values are stored in external files" in run.stderr
    assert "SECRET" not in run.stderr + run.stdout
    assert not out.exists()


def test_links_inside_the_file_and_loops_are_data(tmp_path):
    """Soft links and hard links within the file read nothing else; a group linked into its own
    subtree ends the walk."""
    path = _store(tmp_path, sparse=True)
    with h5py.File(path, "r+") as f:
        f["uns/soft"] = h5py.SoftLink("/X/data")
        f["uns/loop"] = f["uns"]
        f["uns/hard"] = f["X/indices"]
    with h5py.File(path, "r") as f:
        assert foreign_parts(f) == []
    store = gs.io.open_store(path)
    assert store.shape == (12, 5)
