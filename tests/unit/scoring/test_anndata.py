"""AnnData objects (scanpy's data) in genosift.score, the selectors and annotate_var."""
import pickle
import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

import genosift as gs
from genosift.io.anndata import is_anndata

anndata = pytest.importorskip("anndata", reason="AnnData input needs anndata (pip install 'genosift[h5ad]')")

N, P = 48, 30
NAMES = [f"gene{j}" for j in range(P)]
IDS = [f"cell{i}" for i in range(N)]


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = np.array(["tumour", "normal", "normal"] * (N // 3))
    X = rng.poisson(2.0, (N, P)).astype(np.float32)
    X[:, 0] += 3 * (y == "tumour")  # two informative genes
    X[:, 5] += 2 * (y == "normal")
    X[rng.random((N, P)) < 0.4] = 0  # sparse-ish counts
    return X, y


X, Y = _data()
AGE = np.linspace(20, 80, N) + np.random.default_rng(1).normal(0, 5, N)


def _adata(M=X, **layers):
    obs = pd.DataFrame({"status": pd.Categorical(Y), "age": AGE, "batch": np.arange(N) % 4}, index=IDS)
    adata = anndata.AnnData(M, obs=obs, var=pd.DataFrame(index=NAMES))
    for name, layer in layers.items():
        adata.layers[name] = layer
    return adata


FORMS = {"dense": lambda M: M, "csr": sp.csr_matrix, "csc": sp.csc_matrix}
METHODS = ["fisher", "anova", "welch", "chi2", "chi2_counts", "mi", "pearson", "auc", "kruskal", "variance"]


def _target(method):
    return None if method == "variance" else "age" if method == "pearson" else "status"


def _labels(method):
    return None if method == "variance" else AGE if method == "pearson" else Y


def _same(got, want):
    np.testing.assert_allclose(got.scores, want.scores, rtol=1e-9, atol=1e-12, equal_nan=True)
    if want.pvalues is not None:
        np.testing.assert_allclose(got.pvalues, want.pvalues, rtol=1e-9, atol=1e-300, equal_nan=True)
    np.testing.assert_array_equal(got.ranking, want.ranking)


# ------------------------------------------------------------------ in memory


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("method", METHODS)
def test_scores_of_an_anndata_equal_those_of_its_matrix(form, method):
    adata = _adata(FORMS[form](X))
    got = gs.score(adata, _target(method), method=method)
    _same(got, gs.score(X, _labels(method), method=method))
    _same(got, gs.score(sp.csr_matrix(X), _labels(method), method=method))
    assert got.feature_names.tolist() == NAMES


def test_layer_and_the_ways_to_give_the_target():
    counts = sp.csr_matrix(np.round(X * 3))
    adata = _adata(np.log1p(X), counts=counts)
    _same(gs.score(adata, "status", method="chi2_counts", layer="counts"),
          gs.score(counts, Y, method="chi2_counts"))
    _same(gs.score(adata, "status", method="welch"), gs.score(np.log1p(X), Y, method="welch"))
    ref = gs.score(X, Y, method="auc")
    plain = _adata()
    for y in ("status", Y, list(Y), plain.obs["status"], pd.Series(Y)):
        _same(gs.score(plain, y, method="auc"), ref)
    shuffled = plain.obs["status"].sample(frac=1, random_state=0)  # a Series is matched by obs_names
    _same(gs.score(plain, shuffled, method="auc"), ref)
    _same(gs.score(plain, method="variance"), gs.score(X, method="variance"))
    keep = np.arange(N) % 4 > 0
    view = plain[keep, 3:]  # a view in memory: its rows, genes and obs
    got = gs.score(view, "status", method="kruskal")
    _same(got, gs.score(X[keep, 3:], Y[keep], method="kruskal"))
    assert got.feature_names.tolist() == NAMES[3:]
    assert gs.score(plain, "status", method="fisher",
                    feature_names=[f"f{j}" for j in range(P)]).feature_names[0] == "f0"


def test_bad_anndata_input_is_named():
    adata = _adata(sp.csr_matrix(X), counts=sp.csr_matrix(X))
    with pytest.raises(ValueError,
                       match=r"y='cell_type' names no column of adata.obs \(its columns: \['status', 'age', "
                                         r"'batch'\]\)"):
        gs.score(adata, "cell_type", method="fisher")
    with pytest.raises(ValueError, match=r"The 'layer' parameter of score must be one of \['counts'\]. Got 'raw'"):
        gs.score(adata, "status", layer="raw")
    with pytest.raises(ValueError, match=r"y is required: pass the name of a column of adata.obs"):
        gs.score(adata, method="welch")
    partial = adata.obs["status"].iloc[:40]  # matched by obs_names: the 8 samples it does not list are left out
    with pytest.warns(UserWarning, match=r"8 sample\(s\) are not in y's index and were left out of score"):
        _same(gs.score(adata, partial, method="welch"), gs.score(sp.csr_matrix(X)[:40], Y[:40], method="welch"))
    with pytest.raises(ValueError, match=r"1 of its ids are not samples of the data: 'nobody'"):
        gs.score(adata, partial.rename({"cell3": "nobody"}), method="welch")
    with pytest.raises(TypeError, match=r"layer='counts' picks a layer of an AnnData or of an .h5ad file; X is a "
                                        r"ndarray"):
        gs.score(X, Y, layer="counts")
    broken = _adata(X.copy())
    broken.X[3, 7] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinity in feature\(s\) 'gene7'"):  # named by var_names
        gs.score(broken, "status", method="welch")


def test_anndata_is_told_without_importing_it():
    fake = type("AnnData", (), {"__module__": "anndata._core.anndata"})
    other = type("AnnData", (), {"__module__": "mypackage"})
    assert is_anndata(fake()) and not is_anndata(other()) and is_anndata(_adata())
    assert not is_anndata(X) and not is_anndata(pd.DataFrame(X))
    code = ("import sys, numpy as np, genosift as gs; gs.score(np.eye(4) + 1, [0, 0, 1, 1]); "
            "gs.SelectKBest(k=1).fit(np.eye(4) + 1, [0, 0, 1, 1]); print('anndata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_h5ad_file_with_a_layer(tmp_path):
    adata = _adata(np.log1p(X), counts=sp.csr_matrix(X))
    adata.write_h5ad(tmp_path / "a.h5ad")
    _same(gs.score(tmp_path / "a.h5ad", "status", method="kruskal", layer="counts"), gs.score(X, Y, method="kruskal"))


# ------------------------------------------------------------------ backed


def _backed(tmp_path, form, name="b.h5ad", M=X):
    _adata(FORMS[form](M)).write_h5ad(tmp_path / name)
    return anndata.read_h5ad(tmp_path / name, backed="r")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("method", METHODS)
def test_backed_anndata_scores_equal_in_memory(tmp_path, form, method):
    backed = _backed(tmp_path, form)
    got = gs.score(backed, _target(method), method=method, chunk_bytes=2000)  # a few rows or columns at a time
    _same(got, gs.score(X, _labels(method), method=method))
    assert got.feature_names.tolist() == NAMES
    assert backed.isbacked


@pytest.mark.parametrize("form", FORMS)
def test_backed_views_binary_and_allele_frequency(tmp_path, form):
    backed = _backed(tmp_path, form)
    rows = np.array([7, 3, 1, 30, 31, 32, 20, 21, 22, 40, 41, 44, 2, 5, 9])
    cols = [5, 0, 2, 9, 11]
    names = [NAMES[j] for j in cols]
    mask = np.arange(N) % 5 > 0
    for view, M, y in ((backed[rows, cols], X[rows][:, cols], Y[rows]), (backed[rows], X[rows], Y[rows]),
                       (backed[:, cols], X[:, cols], Y), (backed[mask], X[mask], Y[mask]),
                       (backed[np.r_[rows, 3]], X[np.r_[rows, 3]], Y[np.r_[rows, 3]])):  # a repeated row
        for method in ("welch", "auc", "variance"):
            got = gs.score(view, None if method == "variance" else "status", method=method, chunk_bytes=1000)
            _same(got, gs.score(M, None if method == "variance" else y, method=method))
            assert got.feature_names.tolist() == list(view.var_names)
    _same(gs.score(backed[rows, cols], "status", method="fisher"), gs.score(X[rows][:, cols], Y[rows], method="fisher"))
    assert gs.score(backed[rows, cols], "status").feature_names.tolist() == names
    for method in ("chi2", "auc"):
        _same(gs.score(backed, "status", method=method, binary=True, chunk_bytes=2000),
              gs.score(X > 0, Y, method=method))
        got = gs.score(backed, "status", method=method, min_af=0.5, chunk_bytes=2000)
        want = gs.score(X, Y, method=method, min_af=0.5)
        _same(got, want)
        np.testing.assert_array_equal(got.af, want.af)


def test_backed_row_chunks_through_anndata(tmp_path, monkeypatch):
    """A layout the store does not read (here: the store refused) streams rows via adata.X[i:j]."""
    import genosift.scoring.anndata as module

    backed = _backed(tmp_path, "csr")
    monkeypatch.setattr(module, "_store_of", lambda parent, binary: None)
    reads = []
    real = type(backed.X).__getitem__
    monkeypatch.setattr(type(backed.X), "__getitem__", lambda self, index: reads.append(index) or real(self, index))
    for method in ("fisher", "welch", "chi2_counts", "pearson", "variance"):
        _same(gs.score(backed, _target(method), method=method, chunk_bytes=3000),
              gs.score(X, _labels(method), method=method))
    assert len(reads) > 5 and all(isinstance(i, slice) for i in reads)  # row slices only
    with pytest.raises(ValueError, match=r"Method 'auc' needs every sample of a feature at once, which this backed "
                                         r"AnnData .* Load it with adata.to_memory\(\)"):
        gs.score(backed, "status", method="auc")
    with pytest.raises(ValueError, match=r"Method 'relieff' needs the whole matrix in memory .* adata.to_memory\(\)"):
        gs.score(backed, "status", method="relieff")


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_backed_store_route_never_touches_adata_X(tmp_path, form, monkeypatch):
    backed = _backed(tmp_path, form)
    want = {m: gs.score(X, Y, method=m) for m in ("welch", "auc")}

    def refuse(self):
        raise AssertionError("adata.X was read")

    monkeypatch.setattr(anndata.AnnData, "X", property(refuse))
    for method, ref in want.items():
        _same(gs.score(backed, "status", method=method), ref)


def _traced_peak(func):
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# csr (the slowest to trace: about 15 s of CI per job) runs with the slow checks; csc and dense always
@pytest.mark.parametrize("form", [pytest.param("csr", marks=pytest.mark.slow), "csc", "dense"])
def test_backed_scoring_holds_a_chunk_not_the_matrix(tmp_path, form):
    rng = np.random.default_rng(3)
    n, p = 600, 6000
    M = rng.poisson(0.8, (n, p)).astype(np.float64)  # 29 MB dense; about 16 MB of CSR values and indices
    y = np.where(np.arange(n) % 2, "a", "b")
    obs = pd.DataFrame({"y": y}, index=[f"s{i}" for i in range(n)])
    stored = FORMS[form](M)
    anndata.AnnData(stored, obs=obs,
                    var=pd.DataFrame(index=[f"k{j}" for j in range(p)])).write_h5ad(tmp_path / "m.h5ad")
    del stored
    size = M.nbytes if form == "dense" else sp.csr_matrix(M).data.nbytes * 1.5
    backed = anndata.read_h5ad(tmp_path / "m.h5ad", backed="r")
    budget = 2 << 20
    for method in ("welch", "auc"):
        want = gs.score(M, y, method=method)
        gs.score(backed[:50], "y", method=method, chunk_bytes=budget)  # compiled kernels and the names, first
        got = []
        peak = _traced_peak(lambda m=method: got.append(gs.score(backed, "y", method=m, chunk_bytes=budget)))
        np.testing.assert_allclose(got[0].scores, want.scores, rtol=1e-9, atol=1e-9, equal_nan=True)
        np.testing.assert_array_equal(got[0].ranking[:100], want.ranking[:100])  # zero scores may differ by 1e-30
        assert peak < size / 4, (method, peak, size)
    loaded = _traced_peak(lambda: gs.score(backed.to_memory(), "y", method="welch"))
    assert loaded > size * 0.9  # the measure sees a matrix read whole


# ------------------------------------------------------------------ annotate_var


def test_annotate_var_aligns_by_name():
    res = gs.score(_adata(), "status", method="welch")
    adata = _adata()[:, ::-1].copy()  # reversed features, some missing, one unknown to the result
    adata = adata[:, 3:].copy()
    adata.var_names = list(adata.var_names[:-1]) + ["new_gene"]
    assert gs.annotate_var(adata, res, selected=5) is None
    var = adata.var
    frame = res.to_frame(sort=False).set_index("feature")
    for name in adata.var_names[:-1]:
        assert var.loc[name, "genosift_score"] == frame.loc[name, "score"]
        assert var.loc[name, "genosift_qvalue"] == frame.loc[name, "qvalue"]
        assert var.loc[name, "genosift_rank"] == frame.loc[name, "rank"]
    assert var.loc["new_gene", ["genosift_score", "genosift_pvalue", "genosift_rank"]].isna().all()
    assert not var.loc["new_gene", "genosift_selected"]
    assert set(var.index[var["genosift_selected"]]) == set(res.top(5)) & set(var.index)
    assert adata.uns["genosift"] == {"method": "welch", "n_samples": N}
    assert var["genosift_rank"].dtype == np.float64 and var["genosift_selected"].dtype == bool


def test_annotate_var_prefix_copy_selectors_and_round_trip(tmp_path):
    adata = _adata()
    sel = gs.SelectKBest("auc", k=4).fit(adata, "status")
    out = gs.annotate_var(adata, sel, prefix="auc_", copy=True)
    assert "auc_score" not in adata.var and out.var["auc_selected"].sum() == 4
    assert out.var_names[out.var["auc_selected"]].tolist() == sel.get_feature_names_out().tolist()
    assert out.uns["auc"]["selector"] == "SelectKBest" and out.uns["auc"]["params"]["k"] == 4
    gs.annotate_var(out, gs.score(out, method="variance"), prefix="auc_")  # replaces the earlier columns
    assert "auc_pvalue" not in out.var and "auc_selected" not in out.var and out.uns["auc"]["method"] == "variance"
    gs.annotate_var(out, gs.RFE(LogisticRegression(), n_features_to_select=3).fit(out, "status"), prefix="rfe_")
    assert out.var["rfe_selected"].sum() == 3 and "rfe_score" not in out.var
    out.write_h5ad(tmp_path / "annotated.h5ad")
    back = anndata.read_h5ad(tmp_path / "annotated.h5ad")
    pd.testing.assert_frame_equal(back.var, out.var)
    gs.annotate_var(out, gs.score(X, Y, method="fisher"), prefix="arr_")  # no names: one value per feature, in order
    np.testing.assert_array_equal(out.var["arr_score"], gs.score(X, Y, method="fisher").scores)
    with pytest.raises(ValueError, match=r"The result has no feature names and 5 features, but adata has 30"):
        gs.annotate_var(out, gs.score(X[:, :5], Y, method="fisher"))
    with pytest.raises(ValueError, match=r"No feature of the result is among adata.var_names"):
        gs.annotate_var(out, gs.score(X, Y, feature_names=[f"other{j}" for j in range(P)]))
    with pytest.raises(TypeError, match=r"The 'adata' parameter of annotate_var must be an anndata.AnnData. "
                                        r"Got 'ndarray'"):
        gs.annotate_var(X, gs.score(X, Y))


# ------------------------------------------------------------------ selectors


def _mean_score(M, y):
    return np.asarray(M.mean(axis=0)).ravel()


SELECTORS = [gs.SelectKBest("welch", k=3), gs.SelectPercentile("kruskal", percentile=10),
             gs.SelectFdr("anova", alpha=0.05),
             gs.SelectKBest(_mean_score, k=2),
             gs.RedundancyFilter("fisher", k=3), gs.MRMR(k=3), gs.RFE(LogisticRegression(), n_features_to_select=3),
             gs.SelectKCV("fisher", LogisticRegression(), ks=(2, 3), cv=3, random_state=0),
             gs.StabilitySelection("welch", k=3, n_resamples=8, random_state=0)]


@pytest.mark.parametrize("selector", SELECTORS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("form", ["dense", "csr"])
def test_selectors_fit_an_anndata_and_keep_its_names(selector, form):
    adata = _adata(FORMS[form](X))
    ref = clone(selector).fit(FORMS[form](X), Y)
    sel = clone(selector).fit(adata, "status")
    np.testing.assert_array_equal(sel.get_support(), ref.get_support())
    np.testing.assert_array_equal(sel.feature_names_in_, NAMES)
    chosen = np.array(NAMES, dtype=object)[ref.get_support()]
    np.testing.assert_array_equal(sel.get_feature_names_out(), chosen)
    reduced = sel.transform(adata)
    assert isinstance(reduced, anndata.AnnData) and reduced.var_names.tolist() == chosen.tolist()
    assert reduced.obs_names.tolist() == IDS and reduced.obs["status"].tolist() == Y.tolist()
    assert clone(selector).fit_transform(adata, "status").var_names.tolist() == chosen.tolist()
    reordered = adata[:, ::-1].copy()  # found by name, returned in the fitted order
    assert sel.transform(reordered).var_names.tolist() == chosen.tolist()
    with pytest.raises(ValueError, match=r"adata lacks 1 of the"):
        sel.transform(adata[:, [n for n in NAMES if n != chosen[0]]])
    if hasattr(sel, "result_"):
        assert sel.result_.feature_names.tolist() == NAMES
    assert pickle.loads(pickle.dumps(sel)).get_feature_names_out().tolist() == chosen.tolist()


def test_selector_groups_from_obs_and_unnamed_fit():
    adata = _adata()
    kcv = gs.SelectKCV("fisher", LogisticRegression(), ks=(2, 3), cv=2)
    by_name = clone(kcv).fit(adata, "status", groups="batch")
    by_array = clone(kcv).fit(X, Y, groups=np.arange(N) % 4)
    assert by_name.best_k_ == by_array.best_k_
    sel = gs.SelectKBest("welch", k=3).fit(X, Y)  # no names: the same number of features, by position
    assert sel.transform(adata).var_names.tolist() == [NAMES[j] for j in np.flatnonzero(sel.get_support())]
    with pytest.raises(ValueError, match=r"adata has 10 features \(var_names\), but SelectKBest was fitted on 30"):
        sel.transform(adata[:, :10])
    named = gs.SelectKBest("welch", k=3).set_output(transform="pandas").fit(_adata(sp.csr_matrix(X)), "status")
    frame = named.transform(_adata(sp.csr_matrix(X)))  # the container asked for, indexed by obs_names
    assert isinstance(frame, pd.DataFrame) and frame.index.tolist() == IDS
    assert frame.columns.tolist() == named.get_feature_names_out().tolist()
    np.testing.assert_array_equal(frame.to_numpy(), X[:, named.get_support()])


def test_selector_on_a_backed_anndata_reads_it_in_chunks(tmp_path, monkeypatch):
    backed = _backed(tmp_path, "csr")
    ref = gs.SelectKBest("auc", k=4).fit(X, Y)

    def refuse(self):
        raise AssertionError("adata.X was read")

    with monkeypatch.context() as patched:
        patched.setattr(anndata.AnnData, "X", property(refuse))
        sel = gs.SelectKBest("auc", k=4).fit(backed, "status")
    np.testing.assert_array_equal(sel.get_support(), ref.get_support())
    assert sel.get_feature_names_out().tolist() == np.array(NAMES)[ref.get_support()].tolist()
    reduced = sel.transform(backed)
    assert reduced.isbacked and reduced.shape == (N, 4)
    np.testing.assert_array_equal(reduced.to_memory().X.toarray(), X[:, ref.get_support()])


def test_selector_fitted_on_a_store_path_has_its_names(tmp_path):
    pytest.importorskip("h5py")
    from genosift.io import Dataset, write_store

    obs = pd.DataFrame({"status": Y}, index=IDS)
    path = write_store(Dataset(sp.csr_matrix(X), np.array(IDS, dtype=object), np.array(NAMES, dtype=object), obs),
                       tmp_path / "d.gs.h5ad")
    for source in (path, str(path), gs.io.open_store(path)):
        sel = gs.SelectKBest("welch", k=3).fit(source, "status")
        assert "feature_names_in_" not in vars(sel)  # read when first asked for
        np.testing.assert_array_equal(sel.feature_names_in_, NAMES)
        chosen = sel.get_feature_names_out().tolist()
        assert chosen == sel.result_.top(3).tolist() or sorted(chosen) == sorted(sel.result_.top(3).tolist())
        assert pickle.loads(pickle.dumps(sel)).get_feature_names_out().tolist() == chosen
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            frame = pd.DataFrame(X, columns=NAMES)
            assert sel.transform(frame).shape == (N, 3)
        assert sel.transform(_adata()).var_names.tolist() == chosen  # an AnnData of the same genes
    sel.fit(X, Y)  # refitted on an array: no names any more
    assert not hasattr(sel, "feature_names_in_")
    assert sel.get_feature_names_out().tolist()[0].startswith("x")
