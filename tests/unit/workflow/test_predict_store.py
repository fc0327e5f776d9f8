"""``predict`` from a store: the model's features found by name among the stored names without
decoding them all, only their columns read, and the result that of ``predict`` on the whole matrix."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from genosift.cli import main
from genosift.io import Dataset, open_store, write_store
from genosift.io.store import Store
from genosift.io.store.lookup import find_names
from genosift.sources import StoreRows
from genosift.workflow import load_model, predict, predict_store, write_results
from genosift.workflow.evaluation import Asked
from genosift.workflow.screened import evaluate_store


def _blob_of(names):
    return np.frombuffer("\x00".join(names).encode("utf-8"), dtype=np.uint8)


@pytest.mark.parametrize("piece", [1, 3, 7, 64, 1 << 24])
def test_find_names_against_a_dictionary(piece):
    """Every piece size (names cut anywhere, names longer than a piece), more hits than the hit
    buffer holds, names absent, non-ASCII and empty names, a name asked twice."""
    rng = np.random.default_rng(0)
    stored = ["", *("".join(rng.choice(list("ACGT"), rng.integers(1, 40))) + f"_{j}" for j in range(500)),
              "é-ü", "x" * 100]
    asked = [*rng.choice(stored, 300, replace=False).tolist(), "absent", "AC\x00GT", stored[5], "x" * 99, "é-ü"]
    blob = _blob_of(stored)
    reads = []

    def read_piece(a, b):
        reads.append(b - a)
        return blob[a:b]

    where = {name: j for j, name in enumerate(stored)}
    expected = [where.get(name, -1) for name in asked]
    assert find_names(read_piece, blob.size, len(stored), asked, piece=piece).tolist() == expected
    assert max(reads) <= piece  # never more than a piece read at once


def test_find_names_edge_cases():
    one_empty = np.zeros(0, dtype=np.uint8)
    assert find_names(lambda a, b: one_empty[a:b], 0, 1, ["", "a"]).tolist() == [0, -1]
    assert find_names(lambda a, b: one_empty[a:b], 0, 0, ["a"]).tolist() == [-1]
    blob = _blob_of(["a", "b", "a"])
    with pytest.raises(ValueError, match="the name 'a' is there more than once"):
        find_names(lambda a, b: blob[a:b], blob.size, 3, ["a"])
    # bytes that do not hold the number of names: None (the caller reads the names another way)
    assert find_names(lambda a, b: blob[a:b], blob.size, 4, ["b"]) is None
    assert find_names(lambda a, b: blob[a:b], blob.size, 3, []).tolist() == []


def _fitted(tmp_path, *, n=120, p=2000, seed=4):
    """A store of counts, a model evaluated on it (screened: it lists the features it read), and the
    whole matrix with its names."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = sp.random(n, p, density=0.05, random_state=seed, format="csr")
    X.data = np.ceil(X.data * 9)
    X = sp.hstack([X[:, :20] + sp.csr_matrix((y[:, None] * rng.integers(0, 3, (n, 20))).astype(float)), X[:, 20:]],
                  format="csr")
    ids = np.array([f"s{i}" for i in range(n)], dtype=object)
    names = np.array([f"kmer_{j}_é" for j in range(p)], dtype=object)
    store = open_store(write_store(Dataset(X, ids, names), tmp_path / "d.gs.h5ad"))
    ev, X_read, _ = evaluate_store(StoreRows(store), y, Asked(method="fisher", ks=[8, 40], cv=3, random_state=0,
                                                              sample_ids=ids, feature_names=names))
    folder = write_results(ev, tmp_path / "results", X=X_read, y=y)
    ev.profile.close()
    return store, X, names, ids, y, folder


def test_predict_store_reads_only_the_models_features(tmp_path, monkeypatch):
    store, X, names, ids, _, folder = _fitted(tmp_path)
    saved = load_model(folder)
    expected, notes = predict(saved, X, names, sample_ids=ids)
    read = []
    original = Store.read_columns

    def spy(self, columns, **kw):
        read.append(np.asarray(columns).size)
        return original(self, columns, **kw)

    def never(self):
        raise AssertionError("every name decoded")

    monkeypatch.setattr(Store, "read_columns", spy)
    monkeypatch.setattr(Store, "feature_names", property(never))
    monkeypatch.setattr(Store, "name_blob", property(never))
    monkeypatch.setattr(Store, "to_dataset", never)
    got, got_notes = predict_store(saved, StoreRows(open_store(store.path)), sample_ids=ids)
    pd.testing.assert_frame_equal(got, expected)
    assert got_notes == notes
    assert read == [len(saved["features"])] and read[0] < X.shape[1]


def test_predict_store_with_features_missing_and_rows_picked(tmp_path):
    """A store lacking some of the model's features (--fill-missing: zeros), rows in any order."""
    store, X, names, ids, _, folder = _fitted(tmp_path)
    saved = load_model(folder)
    used = set(saved["selected"])
    keep = np.array([j for j, name in enumerate(names) if name not in used or int(name.split("_")[1]) % 2])
    rows = np.array([7, 3, 100, 0, 55])
    small = open_store(write_store(Dataset(X[:, keep], ids, names[keep]), tmp_path / "small.gs.h5ad"))
    with pytest.raises(ValueError, match="not in the new data: .*pass fill_missing=True"):
        predict_store(saved, StoreRows(small, rows), sample_ids=ids[rows])
    expected, notes = predict(saved, X[rows][:, keep], names[keep], sample_ids=ids[rows], fill_missing=True)
    got, got_notes = predict_store(saved, StoreRows(small, rows), sample_ids=ids[rows], fill_missing=True)
    pd.testing.assert_frame_equal(got, expected)
    assert got_notes == notes and any("set to 0" in note for note in notes)


def test_predict_store_of_names_written_by_another_tool(tmp_path):
    """A store whose names are only AnnData's string array (no NUL-joined copy) is read by name too."""
    h5py = pytest.importorskip("h5py")
    store, X, names, ids, _, folder = _fitted(tmp_path)
    with h5py.File(store.path, "r+") as f:
        del f["var"]["_genosift_names"]
    saved = load_model(folder)
    expected, notes = predict(saved, X, names, sample_ids=ids)
    got, got_notes = predict_store(saved, StoreRows(open_store(store.path)), sample_ids=ids)
    pd.testing.assert_frame_equal(got, expected)
    assert got_notes == notes


def test_cli_predict_of_a_store(tmp_path, capsys):
    store, X, names, ids, y, folder = _fitted(tmp_path)
    meta = tmp_path / "meta.tsv"
    pd.DataFrame({"sample": ids, "label": y}).to_csv(meta, sep="\t", index=False)
    out = tmp_path / "pred.tsv"
    assert main(["predict", str(folder), str(store.path), "--meta", str(meta), "--id", "sample",
                 "--target", "label", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "column(s) of the new data are not features of the model" in printed
    got = pd.read_csv(out, sep="\t", dtype={"sample": str, "predicted": str, "true": str}, float_precision="round_trip")
    expected, _ = predict(load_model(folder), X, names, sample_ids=ids)
    np.testing.assert_array_equal(got["predicted"], expected["predicted"])
    np.testing.assert_array_equal(got["sample"], ids)
    np.testing.assert_array_equal(got["true"], y.astype(str))
    np.testing.assert_array_equal(got["proba_1"].to_numpy(), expected["proba_1"].to_numpy())


def test_predict_store_holding_none_of_the_models_features(tmp_path):
    """--fill-missing on a store with none of the model's features: every one zero, as in memory."""
    _, _, _, ids, _, folder = _fitted(tmp_path)
    saved = load_model(folder)
    ones = sp.csr_matrix(np.ones((3, 2)))
    names = np.array(["x1", "x2"], dtype=object)
    other = open_store(write_store(Dataset(ones, ids[:3], names), tmp_path / "o.gs.h5ad"))
    expected, notes = predict(saved, ones, ["x1", "x2"], sample_ids=ids[:3], fill_missing=True)
    got, got_notes = predict_store(saved, StoreRows(other), sample_ids=ids[:3], fill_missing=True)
    pd.testing.assert_frame_equal(got, expected)
    assert got_notes == notes and notes[0].startswith(f"{len(saved['features'])} of the model's")
    # every feature zero: one class for all, said with its likely cause
    assert got["predicted"].nunique() == 1
    assert any(n.startswith(f"The model predicts the same class, {got['predicted'][0]!r}, for all 3 samples. "
                            f"{len(saved['selected'])} of the {len(saved['selected'])} features the model uses were "
                            "absent and set to 0") for n in notes), notes
    dense, _ = predict(saved, np.ones((3, 2)), ["x1", "x2"], sample_ids=ids[:3], fill_missing=True)
    pd.testing.assert_frame_equal(dense, expected)


def test_a_store_naming_a_feature_twice_is_damaged(tmp_path):
    h5py = pytest.importorskip("h5py")
    ds = Dataset(np.eye(3), np.array(["a", "b", "c"], dtype=object), np.array(["k1", "k2", "k3"], dtype=object))
    path = write_store(ds, tmp_path / "d.gs.h5ad")
    with h5py.File(path, "r+") as f:
        del f["var"]["_genosift_names"]
        f["var"].create_dataset("_genosift_names", data=np.frombuffer(b"k1\x00k2\x00k1", dtype=np.uint8))
    with pytest.raises(ValueError, match=r"d.gs.h5ad' is damaged: the name 'k1' is there more than once\. Write"):
        open_store(path).columns_named(["k1"])
