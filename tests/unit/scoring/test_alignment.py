"""pandas inputs aligned by sample id, ``samples=`` with one meaning, unlabelled samples left out."""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.io import Dataset, write_store

N, P, LABELLED = 48, 20, 40


def _data(seed=5):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, size=(N, P)).astype(np.float64)
    y = np.arange(N) % 2
    X[:, 0] += 2 * y
    ids = np.array([f"s{i:02d}" for i in range(N)], dtype=object)
    return X, y, ids


def _same(a, b):
    for name in ("scores", "statistic", "pvalues", "qvalues", "ranking"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.n_samples == b.n_samples


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A sparse store whose 'phenotype' is missing for its last 8 samples, as an unphenotyped batch."""
    X, y, ids = _data()
    phenotype = y.astype(float)
    phenotype[LABELLED:] = np.nan
    obs = pd.DataFrame({"phenotype": phenotype}, index=ids)
    ds = Dataset(sp.csr_matrix(X), ids, np.array([f"k{j}" for j in range(P)], dtype=object), obs)
    return write_store(ds, tmp_path_factory.mktemp("align") / "kmers.gs.h5ad")


def test_a_store_with_unlabelled_samples_scores_the_labelled_ones_and_says_how_many(store):
    X, y, _ = _data()
    with pytest.warns(UserWarning, match=r"^8 sample\(s\) have no label and were left out of score; choose the "
                                         r"samples with samples="):
        res = gs.score(store, "phenotype")
    assert res.n_samples == LABELLED
    _same(res, gs.score(sp.csr_matrix(X[:LABELLED]), y[:LABELLED].astype(float)))
    with pytest.warns(UserWarning, match="8 sample"):
        prof = gs.profile(store, "phenotype")
    np.testing.assert_array_equal(prof.means, gs.profile(sp.csr_matrix(X[:LABELLED]),
                                                         y[:LABELLED].astype(float)).means)


def test_a_shuffled_series_is_aligned_to_the_dataframe_by_sample_id():
    X, y, ids = _data()
    order = np.random.default_rng(0).permutation(N)
    frame = pd.DataFrame(X, index=ids)
    labels = pd.Series(y, index=ids).iloc[order]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every sample labelled: nothing to say
        _same(gs.score(frame, labels, method="welch"), gs.score(X, y, method="welch"))
    with pytest.warns(UserWarning, match=r"^8 sample\(s\) are not in y's index and were left out of score"):
        res = gs.score(frame.iloc[order], labels.loc[ids[:LABELLED]], method="welch")
    kept = order[order < LABELLED]  # the labelled rows, in the frame's order
    _same(res, gs.score(X[kept], y[kept], method="welch"))


def test_a_series_naming_samples_the_data_lack_is_an_error_naming_them():
    X, y, ids = _data()
    labels = pd.Series(y, index=ids).rename({"s03": "t03", "s07": "t07"})
    with pytest.raises(ValueError, match=r"2 of its ids are not samples of the data: 't03', 't07'"):
        gs.score(pd.DataFrame(X, index=ids), labels)


def test_range_indexes_are_positions_as_before():
    X, y, ids = _data()
    order = np.random.default_rng(1).permutation(N)
    # a Series with a plain integer index is taken in the order of the rows, its index unused
    _same(gs.score(pd.DataFrame(X), pd.Series(y[order])), gs.score(X, y[order]))


def test_covariates_indexed_by_id_follow_the_samples_kept():
    X, y, ids = _data()
    rng = np.random.default_rng(2)
    C = pd.DataFrame({"age": rng.normal(size=N)}, index=ids)
    frame = pd.DataFrame(X, index=ids)
    order = rng.permutation(N)
    with pytest.warns(UserWarning, match="8 sample"):
        res = gs.score(frame, pd.Series(y, index=ids).iloc[:LABELLED], method="regression", covariates=C.iloc[order])
    _same(res, gs.score(X[:LABELLED], y[:LABELLED], method="regression", covariates=C.to_numpy()[:LABELLED]))


@pytest.mark.parametrize("form", ["ndarray", "sparse", "dataframe", "store"])
def test_samples_by_id_mask_or_position_equal_slicing_first(form, store):
    X, y, ids = _data()
    rng = np.random.default_rng(3)
    rows = np.sort(rng.choice(N, size=30, replace=False))
    mask = np.zeros(N, dtype=bool)
    mask[rows] = True
    data = {"ndarray": X, "sparse": sp.csr_matrix(X), "dataframe": pd.DataFrame(X, index=ids), "store": store}[form]
    sliced = {"ndarray": X[rows], "sparse": sp.csr_matrix(X)[rows], "dataframe": X[rows],
              "store": sp.csr_matrix(X)[rows]}[form]
    ref = gs.score(sliced, y[rows], method="anova")
    has_ids = form in ("dataframe", "store")
    chosen = [list(ids[rows[::-1]]) if has_ids else rows[::-1], mask]  # any order: the data's order is used
    for samples in chosen:
        _same(gs.score(data, y, method="anova", samples=samples), ref)  # y: one per row of the data
        _same(gs.score(data, y[rows], method="anova", samples=mask), ref)  # or one per sample kept
        np.testing.assert_array_equal(gs.profile(data, y, samples=samples).means, gs.profile(sliced, y[rows]).means)
        np.testing.assert_array_equal(gs.count_patterns(data, samples=samples).ids, gs.count_patterns(sliced).ids)
    targets = gs.score_targets(data, {"t": y}, method="regression", samples=mask)
    _same(targets["t"], gs.score(sliced, y[rows], method="regression"))
    if has_ids:
        with pytest.raises(ValueError, match=r"must be sample ids of the data; 1 of the 2 given are not: 'nope'"):
            gs.score(data, y, samples=["s01", "nope"])
    else:
        with pytest.raises(ValueError, match="these data have no sample ids"):
            gs.score(data, y, samples=["s01"])


def test_samples_in_another_order_with_labels_per_sample_kept_are_refused():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="takes the samples in the data's order"):
        gs.score(X, y[[5, 2, 9]], samples=[5, 2, 9])


def test_samples_means_the_same_in_kinship_and_principal_coordinates(store):
    X, y, ids = _data()
    frame = pd.DataFrame(X, index=ids)
    picked = ["s09", "s02", "s30"]
    K = gs.kinship(frame, samples=picked)
    assert list(K.index) == picked and list(K.columns) == picked
    np.testing.assert_array_equal(K.to_numpy(), gs.kinship(X[[9, 2, 30]]).to_numpy())
    np.testing.assert_array_equal(gs.kinship(X, samples=[9, 2, 30]).to_numpy(), K.to_numpy())
    mask = np.isin(np.arange(N), [2, 9, 30])
    np.testing.assert_array_equal(gs.kinship(store, samples=mask).to_numpy(),
                                  gs.kinship(sp.csr_matrix(X)[[2, 9, 30]]).to_numpy())
    pcs = gs.principal_coordinates(X, 2, samples=np.arange(N) < 40)
    assert list(pcs.index) == list(range(40))
    with pytest.raises(ValueError, match="these data have no sample ids"):
        gs.principal_coordinates(X, 2, samples=["s01", "s02", "s03"])


def test_kinship_is_always_a_dataframe_indexed_by_sample():
    X, y, ids = _data()
    K = gs.kinship(X)
    assert isinstance(K, pd.DataFrame) and K.index.name == "sample"
    assert list(K.index) == list(range(N)) and list(K.columns) == list(range(N))
    assert isinstance(gs.kinship(pd.DataFrame(X, index=ids)), pd.DataFrame)
    assert K.attrs["n_used"] >= 1
    # the positional table scores as its array does
    target = X[:, 0] + np.random.default_rng(4).normal(size=N)
    _same(gs.score(X, target, method="lmm", kinship=K), gs.score(X, target, method="lmm", kinship=K.to_numpy()))


def test_heritability_aligns_a_kinship_table_and_a_series_by_id():
    X, y, ids = _data()
    rng = np.random.default_rng(6)
    K = gs.kinship(pd.DataFrame(X, index=ids))
    target = pd.Series(X[:, 0] + rng.normal(size=N), index=ids)
    order = rng.permutation(N)
    shuffled = target.iloc[order]
    aligned = gs.heritability(K.loc[shuffled.index, shuffled.index].to_numpy(), shuffled.to_numpy())
    got = gs.heritability(K, shuffled)
    assert got.h2 == aligned.h2 and got.pvalue == aligned.pvalue and got.se == aligned.se
    with pytest.raises(ValueError, match=r"5 samples of the kinship have no value in y \('s43'"):
        gs.heritability(K, target.iloc[:43])
    with pytest.raises(ValueError, match=r"1 of y's ids have no row in the kinship \('x'\)"):
        gs.heritability(K.iloc[:47, :47], target.rename({"s47": "x"}))


def test_a_selector_given_a_kinship_says_how_to_use_one():
    X, y, _ = _data()
    K = gs.kinship(X)
    with pytest.raises(ValueError, match=r"SelectKBest.fit was given a kinship, which the selectors do not take .*"
                                         r"genosift.score\(X, y, method='lmm', kinship=K\)"):
        gs.SelectKBest("lmm", k=2).fit(X, X[:, 0], kinship=K)


def test_data_read_as_they_come_refuse_samples_with_the_fix():
    X, y, _ = _data()
    with pytest.raises(ValueError, match=r"'samples' chooses the samples of data in memory or of a store; score reads "
                                         r"these data as they come .* Take the rows first \(X\[rows\]\)"):
        gs.score(((X[i:i + 12], y[i:i + 12]) for i in range(0, N, 12)), samples=[0, 1])
