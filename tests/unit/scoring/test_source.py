"""The one dispatch (``genosift.sources.as_source``): every input form is told apart once, into one
``Source`` class per form, the same way for ``gs.score`` and ``gs.profile``, whose numbers are
numpy's in every form, including the forms the profile gained from it (AnnData in memory and
backed, a layer, a data file)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.scoring.forms import profile_source, score_source, score_source_targets
from genosift.sources import (
    FORMS,
    BackedSource,
    DaskSource,
    MatrixSource,
    Source,
    StoreRows,
    StoreSource,
    StreamSource,
    as_source,
)

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


def _data(n=60, p=12, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.2, size=(n, p)).astype(np.float64)
    X[:, 0] += 3 * (np.arange(n) % 2)  # differs by class
    y = np.array(["a", "b"])[np.arange(n) % 2]
    ids = np.array([f"s{i}" for i in range(n)], dtype=object)
    names = np.array([f"g{j}" for j in range(p)], dtype=object)
    return X, y, ids, names


def _reference(X, y):
    classes = np.unique(y)
    return (np.array([X[y == c].mean(0) for c in classes]), np.array([(X[y == c] > 0).mean(0) for c in classes]))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The same data as a store, a TSV table and an .h5ad file (with a layer of twice the values)."""
    h5py = pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
    del h5py
    from genosift.io import Dataset, write_store

    X, y, ids, names = _data()
    folder = tmp_path_factory.mktemp("sources")
    obs = pd.DataFrame({"label": y}, index=ids)
    store = write_store(Dataset(sp.csr_matrix(X), ids, names, obs), folder / "d.gs.h5ad")
    table = folder / "d.tsv"
    pd.concat([pd.DataFrame({"sample": ids, "label": y}), pd.DataFrame(X, columns=names)], axis=1).to_csv(
        table, sep="\t", index=False)
    out = {"store": store, "table": table}
    try:
        import anndata as ad
    except ImportError:
        return out
    adata = ad.AnnData(X=sp.csr_matrix(X), obs=obs, var=pd.DataFrame(index=names), layers={"twice": 2 * X})
    adata.write_h5ad(folder / "d.h5ad")
    out["h5ad"] = folder / "d.h5ad"
    return out


def test_each_input_form_is_told_apart_once(files):
    X, y, ids, names = _data()
    stream = ((X[i:i + 10], y[i:i + 10]) for i in range(0, len(y), 10))
    cases = {"matrix": [X, sp.csr_matrix(X), sp.csc_matrix(X), pd.DataFrame(X, columns=names)],
             "stream": [stream], "store": [files["store"], gs.io.open_store(files["store"])]}
    classes = {"matrix": MatrixSource, "stream": StreamSource, "store": StoreSource}
    for form, inputs in cases.items():
        for given in inputs:
            found = as_source(given, None if form == "stream" else y)
            assert type(found) is classes[form] and found.form == form
    table = as_source(files["table"], "label")  # a data file other than a store: read, its labels by name
    assert table.form == "matrix" and table.y.tolist() == y.tolist() and table.feature_names.tolist() == names.tolist()
    assert set(cases) < set(FORMS)
    rows = StoreRows(gs.io.open_store(files["store"]), np.arange(0, 60, 2))
    kept = rows.source(y[::2])
    assert type(kept) is StoreSource and kept.rows.tolist() == list(range(0, 60, 2))
    assert StoreRows(rows.store).source(y).rows is None  # every row: nothing to pick


def test_every_form_has_its_class_and_its_name():
    assert FORMS == ("matrix", "stream", "store", "dask", "backed")
    assert [cls.form for cls in (MatrixSource, StreamSource, StoreSource, DaskSource, BackedSource)] == list(FORMS)
    da = pytest.importorskip("dask.array", reason="Dask is optional (genosift[dask])")
    X, y, ids, names = _data()
    found = as_source(da.from_array(X, chunks=(20, 12)), y)
    assert type(found) is DaskSource and found.form == "dask"


def test_kept_takes_the_rows_kept_of_values_given_per_row_of_the_data(files):
    X, y, ids, names = _data()
    keep = np.arange(60) % 3 == 0
    for given in (X, files["store"]):
        data = as_source(given, y, samples=keep)
        assert data.rows.tolist() == np.flatnonzero(keep).tolist()
        assert data.kept(np.arange(60)).tolist() == np.flatnonzero(keep).tolist()
        assert data.kept(np.arange(7)).tolist() == list(range(7))  # another length: as it is
    assert as_source(X, y).kept(np.arange(60)).tolist() == list(range(60))


def test_several_targets_in_one_pass_are_refused_by_forms_read_as_they_come():
    X, y, ids, names = _data()
    stream = as_source((X[i:i + 10], y[i:i + 10]) for i in range(0, 60, 10))
    with pytest.raises(ValueError, match="Several targets are scored in one pass of data in memory or of a store, "
                                         "not of a stream of row chunks: score each target with genosift.score"):
        score_source_targets(stream, gs.get_method("regression"), {}, (y, y))


def test_a_source_scores_as_genosift_score_and_profiles_as_genosift_profile(files):
    X, y, ids, names = _data()
    spec = gs.get_method("welch")
    for given in (X, files["store"]):
        data = as_source(given, y)
        assert isinstance(data, Source)
        expected = gs.score(given, y, method="welch")
        np.testing.assert_array_equal(score_source(data, spec, {}).scores, expected.scores)
        np.testing.assert_array_equal(profile_source(data).means, gs.profile(given, y).means)


def test_feature_names_name_the_features_of_every_form(files):
    X, y, ids, names = _data()
    other = np.array([f"n{j}" for j in range(X.shape[1])], dtype=object)
    for given in (X, files["store"], gs.io.open_store(files["store"])):
        assert gs.score(given, y, method="welch", feature_names=other).top(3).tolist() == \
            other[gs.score(X, y, method="welch").ranking[:3]].tolist()
        assert gs.profile(given, y, feature_names=other).feature_names.tolist() == other.tolist()
    with pytest.raises(ValueError, match=r"The 'feature_names' parameter of score must be 12 names, one per feature "
                                         r"of the store. Got '3 names' instead"):
        gs.score(files["store"], y, feature_names=["a", "b", "c"])


def test_profile_reads_every_input_that_score_reads(files):
    """AnnData (in memory, backed, a layer) and data files: the profile of each equals numpy's."""
    X, y, ids, names = _data()
    means, prevalence = _reference(X, y)
    prof = gs.profile(files["table"], "label")
    np.testing.assert_allclose(prof.means, means, rtol=1e-15)
    np.testing.assert_array_equal(prof.prevalence, prevalence)
    assert prof.feature_names.tolist() == names.tolist()
    ad = pytest.importorskip("anndata", reason="AnnData is optional (genosift[anndata])")
    adata = ad.read_h5ad(files["h5ad"])
    backed = ad.read_h5ad(files["h5ad"], backed="r")
    try:
        for given, chunk in ((adata, None), (backed, None), (backed, 200)):  # 200 bytes: a few rows a chunk
            prof = gs.profile(given, "label", chunk_bytes=chunk) if chunk else gs.profile(given, "label")
            np.testing.assert_allclose(prof.means, means, rtol=1e-15)
            np.testing.assert_array_equal(prof.prevalence, prevalence)
            assert prof.feature_names.tolist() == names.tolist()
        assert type(as_source(backed, "label")) is BackedSource
        view = backed[::3]  # a view of a backed AnnData: its own rows only
        prof = gs.profile(view, y[::3])
        np.testing.assert_allclose(prof.means, _reference(X[::3], y[::3])[0], rtol=1e-15)
    finally:
        backed.file.close()
    layered = gs.profile(adata, "label", layer="twice")
    np.testing.assert_allclose(layered.means, 2 * means, rtol=1e-15)
    np.testing.assert_allclose(gs.profile(files["h5ad"], y, layer="twice").means, 2 * means, rtol=1e-15)


@pytest.mark.parametrize("call", ["score", "profile"])
def test_score_and_profile_refuse_what_their_input_form_cannot_take_alike(call, files):
    X, y, ids, names = _data()
    run = getattr(gs, call)
    with pytest.raises(ValueError, match=f"The 'scheduler' parameter of {call} must be None for data in memory"):
        run(X, y, scheduler="threads")
    with pytest.raises(ValueError, match=f"The 'samples' of {call} keep no sample: select at least one"):
        run(files["store"], y[:0], samples=np.zeros(60, dtype=bool))
    with pytest.raises(ValueError, match=f"The 'samples' of {call} are ids .* these data have no sample ids"):
        run(X, y, samples=["s1", "s2"])
    with pytest.raises(ValueError, match=f"'chunk_bytes' chooses the rows and reads of a store; {call} reads"):
        run(X, y, chunk_bytes=1 << 20)
    with pytest.raises(TypeError, match="layer='x' picks a layer of an AnnData or of an .h5ad file; X is a ndarray"):
        run(X, y, layer="x")
    with pytest.raises(ValueError, match="A chunk stream carries its own labels"):
        run(((X[i:i + 10], y[i:i + 10]) for i in range(0, 60, 10)), y)


def test_a_stream_with_covariates_is_refused_before_it_is_read():
    X, y, ids, names = _data()
    read = []

    def stream():
        read.append(1)
        yield X, y

    with pytest.raises(ValueError, match="score adjusts for covariates on whole columns: it cannot read a stream"):
        gs.score(stream(), method="regression", covariates=np.ones((60, 1)))
    assert read == []


def test_a_source_says_its_rows_ids_labels_and_whole_columns(files):
    """What callers ask a Source instead of asking the input: the ids and labels of the rows
    scored and blocks of whole columns, the same for a matrix, a store and store rows."""
    X, y, ids, names = _data()
    keep = np.arange(60) % 4 != 1
    frame = pd.DataFrame(X, columns=names, index=ids)
    store = gs.io.open_store(files["store"])
    cases = [(as_source(frame, y, samples=keep), frame),
             (as_source(files["store"], "label", samples=keep), files["store"]),
             (as_source(StoreRows(store, np.flatnonzero(keep)), y[keep]), None)]
    for data, given in cases:
        assert data.ids_scored(given).tolist() == ids[keep].tolist()
        assert np.asarray(data.labels()).tolist() == y[keep].tolist()
        n, p, _, blocks = data.column_blocks(owner="score_pairs")
        assert (n, p) == (keep.sum(), 12)
        got = np.hstack([sp.csr_matrix(b).toarray() if sp.issparse(b) else np.asarray(b) for _, _, b in blocks])
        np.testing.assert_array_equal(got, X[keep])
        m, p, blocks = data.float_columns(owner="lineage_effects")
        assert (m, p) == (keep.sum(), 12)
        np.testing.assert_array_equal(np.hstack([sp.csr_matrix(b).toarray() for _, _, b in blocks]), X[keep])
    assert as_source(StoreRows(store), y).carries_riders and not as_source(X, y).carries_riders
    stream = as_source((X[i:i + 10], y[i:i + 10]) for i in range(0, 60, 10))
    with pytest.raises(ValueError, match="score_pairs reads whole columns; it cannot read a stream of row chunks"):
        stream.column_blocks(owner="score_pairs")
    with pytest.raises(ValueError, match="X holds rows of a store chosen already"):
        as_source(StoreRows(store), y, samples=keep)
