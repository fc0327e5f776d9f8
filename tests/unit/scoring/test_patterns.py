"""Distinct patterns (``gs.count_patterns``, ``genosift patterns``): the count and each feature's
pattern equal a direct count (``np.unique`` over the columns of the presence/absence matrix, of
the features tested: pyseer's definition), in every input form, and the threshold is alpha over it."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.cli import main

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")

N, P = 70, 400


def _data(seed=11):
    """Counts whose presence patterns repeat: 120 base columns, each copied with other counts."""
    rng = np.random.default_rng(seed)
    base = (rng.random((N, 120)) < rng.uniform(0.02, 0.9, 120)).astype(np.float64)
    pick = rng.integers(0, 120, P)
    X = base[:, pick] * rng.integers(1, 4, (N, P))  # same carriers, different counts
    X[:, 7] = 0.0  # carried by nobody
    y = np.array(["R", "S"])[rng.integers(0, 2, N)]
    return X, y


def _reference(M, tested=None):
    """Each column's pattern numbered by first appearance (-1 where not tested), by np.unique."""
    keep = np.arange(M.shape[1]) if tested is None else np.flatnonzero(tested)
    ids = np.full(M.shape[1], -1)
    if keep.size:
        _, first, inverse = np.unique(M[:, keep].T, axis=0, return_index=True, return_inverse=True)
        rank = np.empty(first.size, dtype=np.int64)
        rank[np.argsort(first)] = np.arange(first.size)
        ids[keep] = rank[inverse.ravel()]
    return ids


def test_patterns_equal_a_direct_count():
    X, _ = _data()
    res = gs.count_patterns(X)
    expected = _reference(X > 0)
    assert res.ids.tolist() == expected.tolist()
    assert res.n_patterns == len(np.unique((X > 0).T, axis=0)) and res.n_features == P and res.n_tested == P
    assert res.threshold(0.05) == 0.05 / res.n_patterns
    assert res.sizes.sum() == P and res.sizes.tolist() == np.bincount(expected).tolist()
    assert res.first.tolist() == [int(np.flatnonzero(expected == k)[0]) for k in range(res.n_patterns)]
    np.testing.assert_array_equal(res.af, (X > 0).mean(axis=0))
    values = gs.count_patterns(X, binary=False)  # the counts themselves: more patterns
    assert values.ids.tolist() == _reference(X).tolist() and values.n_patterns > res.n_patterns


def test_only_the_features_tested_count():
    X, _ = _data()
    res = gs.count_patterns(X, min_af=0.1, max_af=0.8)
    af = (X > 0).mean(axis=0)
    tested = (af >= 0.1) & (af <= 0.8)
    assert res.tested.tolist() == tested.tolist() and 0 < res.n_tested < P
    assert res.ids.tolist() == _reference(X > 0, tested).tolist()
    frame = res.to_frame()
    assert frame["pattern"].isna().tolist() == (~tested).tolist()
    assert frame["feature"].tolist()[:2] == ["x0", "x1"]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
    from genosift.io import Dataset, write_store

    X, y = _data()
    ids = np.array([f"s{i}" for i in range(N)], dtype=object)
    names = np.array([f"k{j}" for j in range(P)], dtype=object)
    obs = pd.DataFrame({"y": y}, index=ids)
    folder = tmp_path_factory.mktemp("pattern-stores")
    return X, y, {"sparse": write_store(Dataset(sp.csr_matrix(X), ids, names, obs), folder / "s.gs.h5ad"),
                  "dense": write_store(Dataset(X, ids, names, obs), folder / "d.gs.h5ad")}


def test_every_input_form_gives_the_same_patterns(stores):
    X, y, paths = stores
    expected = _reference(X > 0)
    explicit = sp.csr_matrix(X)
    explicit.data[::5] = 0.0  # stored zeros are no entries...
    stored_zero = _reference(explicit.toarray() > 0)
    assert gs.count_patterns(explicit).ids.tolist() == stored_zero.tolist()
    negative_zero = X.copy()
    negative_zero[X == 0] = -0.0  # ... and neither is -0.0
    forms = [X, sp.csr_matrix(X), sp.csc_matrix(X), pd.DataFrame(X), negative_zero,
             ((X[i:i + 9], y[i:i + 9]) for i in range(0, N, 9)), paths["sparse"], paths["dense"],
             gs.io.open_store(paths["sparse"])]
    for given in forms:
        assert gs.count_patterns(given, chunk_bytes=4000 if isinstance(given, str) else None).ids.tolist() == \
            expected.tolist()
    rows = np.flatnonzero(np.arange(N) % 3 != 0)
    for path in paths.values():
        got = gs.count_patterns(path, samples=np.arange(N) % 3 != 0, chunk_bytes=3000, min_af=0.05)  # a mask
        af = (X[rows] > 0).mean(axis=0)
        assert got.ids.tolist() == _reference(X[rows] > 0, af >= 0.05).tolist() and got.n_samples == rows.size
        assert got.feature_names[:2].tolist() == ["k0", "k1"]


def test_dask_and_anndata_give_the_same_patterns(stores, tmp_path):
    X, y, _ = stores
    expected = _reference(X > 0).tolist()
    da = pytest.importorskip("dask.array", reason="Dask is optional (genosift[dask])")
    assert gs.count_patterns(da.from_array(X, chunks=(11, 150))).ids.tolist() == expected
    ad = pytest.importorskip("anndata", reason="AnnData is optional (genosift[anndata])")
    ad.AnnData(X=sp.csr_matrix(X)).write_h5ad(tmp_path / "a.h5ad")
    backed = ad.read_h5ad(tmp_path / "a.h5ad", backed="r")
    try:
        assert gs.count_patterns(backed, chunk_bytes=2000).ids.tolist() == expected
    finally:
        backed.file.close()


def test_bad_input_is_refused():
    X, _ = _data()
    bad = X.copy()
    bad[3, 5] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity in the data: patterns are defined on finite values"):
        gs.count_patterns(bad, binary=False)
    with pytest.raises(ValueError, match="The 'binary' parameter of count_patterns must be True or False"):
        gs.count_patterns(X, binary="yes")
    with pytest.raises(ValueError, match="The 'min_af' parameter of count_patterns must be a number in"):
        gs.count_patterns(X, min_af=2)
    with pytest.raises(ValueError, match="alpha is a significance level in"):
        gs.count_patterns(X).threshold(1.5)


def test_the_patterns_command_and_job(stores, tmp_path, capsys):
    X, y, paths = stores
    out = tmp_path / "patterns.tsv"
    assert main(["patterns", str(paths["sparse"]), "--target", "y", "--min-af", "0.05", "-o", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    af = (X > 0).mean(axis=0)
    n = len(np.unique((X[:, af >= 0.05] > 0).T, axis=0))
    assert f"{n:,} distinct presence/absence patterns among {int((af >= 0.05).sum()):,} of {P:,} features" in printed
    assert f"p < {0.05 / n!r} (alpha 0.05 / {n:,})" in printed
    table = pd.read_csv(out, sep="\t", keep_default_na=False, na_values=[""], float_precision="round_trip")
    assert table["feature"].tolist() == [f"k{j}" for j in range(P)]
    assert table["pattern"].fillna(-1).astype(int).tolist() == _reference(X > 0, af >= 0.05).tolist()
    assert np.array_equal(table["af"].to_numpy(), af)
    run = gs.jobs.patterns(gs.jobs.Samples(paths["dense"]), binary=False)  # no target: every sample
    assert run.patterns.ids.tolist() == _reference(X).tolist() and run.threshold == 0.05 / run.patterns.n_patterns
    with pytest.raises(SystemExit) as exit_:
        main(["patterns", str(paths["sparse"]), "--alpha", "2"])
    assert exit_.value.code == 2 and "--alpha: must be a number in (0, 1]" in capsys.readouterr().err
    code = main(["patterns", str(paths["sparse"]), "--meta", str(out)])
    assert code == 2 and "--meta joins the labels of --target: pass --target" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["sparse", "dense", "table"])
def test_the_ranking_names_each_features_pattern_and_thresholds_over_them(stores, kind, tmp_path, capsys):
    X, y, paths = stores
    if kind == "table":
        data = tmp_path / "t.tsv"
        frame = pd.DataFrame(X, columns=[f"k{j}" for j in range(P)])
        frame.insert(0, "sample", [f"s{i}" for i in range(N)])
        frame.insert(1, "y", y)
        frame.to_csv(data, sep="\t", index=False)
    else:
        data = paths[kind]
    out = tmp_path / "r.tsv"
    argv = ["score", str(data), "--target", "y", "--binary", "--method", "chi2", "--min-af", "0.05",
            "--threshold", "bonferroni-patterns", "--alpha", "0.2", "--chunk-bytes", "5000", "-o", str(out), "--quiet"]
    assert main(argv if kind != "table" else [a for a in argv if a not in ("--chunk-bytes", "5000")]) == 0
    printed = capsys.readouterr().out
    af = (X > 0).mean(axis=0)
    tested = af >= 0.05
    expected = _reference(X > 0, tested)
    n = int(expected.max()) + 1
    table = pd.read_csv(out, sep="\t", keep_default_na=False, na_values=[""], float_precision="round_trip")
    got = table.set_index("feature").loc[[f"k{j}" for j in range(P)]]
    assert got["pattern"].fillna(-1).astype(int).tolist() == expected.tolist()
    sizes = np.bincount(expected[expected >= 0])
    assert got["pattern_size"].fillna(0).astype(int).tolist() == [int(sizes[e]) if e >= 0 else 0 for e in expected]
    # the threshold: alpha over the patterns of the features tested, p strictly below it
    assert got["selected"].tolist() == (got["pvalue"] < 0.2 / n).tolist() and got["selected"].any()
    record = json.loads((tmp_path / "r.tsv.json").read_text())
    assert record["n_patterns"] == n and record["selection"]["pvalue"] == 0.2 / n
    assert f"{n:,} distinct patterns among the {int(tested.sum()):,} features tested" in printed
    # features of one pattern get one result: chi2 on presence depends on the pattern alone
    for k in range(n):
        assert got.loc[got["pattern"] == k, "pvalue"].nunique() == 1


def test_collapsed_ranking_keeps_the_best_feature_of_each_pattern(stores, tmp_path):
    X, y, paths = stores
    whole, collapsed = tmp_path / "whole.tsv", tmp_path / "one.tsv"
    base = ["score", str(paths["sparse"]), "--target", "y", "--binary", "--method", "fisher", "--quiet"]
    assert main([*base, "-o", str(whole)]) == 0 and main([*base, "--collapse-patterns", "-o", str(collapsed)]) == 0
    a = pd.read_csv(whole, sep="\t", keep_default_na=False, na_values=[""])
    b = pd.read_csv(collapsed, sep="\t", keep_default_na=False, na_values=[""])
    best = a.drop_duplicates("pattern", keep="first")  # the ranking is best first
    assert b["feature"].tolist() == best["feature"].tolist() and len(b) == a["pattern"].nunique()
    assert b["pattern_size"].sum() == P and b["rank"].tolist() == best["rank"].tolist()


def test_patterns_ride_along_the_scoring_pass_of_a_store(stores, monkeypatch):
    """The score job's patterns come from the scoring pass itself (no pass of their own), rows or
    feature blocks alike, and equal ``count_patterns``'s."""
    from genosift.io import open_store
    from genosift.io.store import Store
    from genosift.scoring.forms import score_and_profile
    from genosift.scoring.patterns import PatternPass
    from genosift.sources import StoreRows

    X, y, paths = stores
    for path in paths.values():
        for method in ("fisher", "chi2", "auc"):
            calls = []
            for name in ("row_chunks", "feature_blocks"):
                original = getattr(Store, name)
                monkeypatch.setattr(Store, name, lambda self, *a, _o=original, _n=name, **k: (calls.append(_n),
                                                                                             _o(self, *a, **k))[1])
            riding = PatternPass((0.05, 1.0))
            spec = gs.get_method(method)
            data = StoreRows(open_store(path), chunk_bytes=6000).source(y)
            res, prof = score_and_profile(data, spec, spec.options, (0.05, 1.0), kind="classes", riders=(riding,))
            getattr(prof, "close", lambda: None)()
            monkeypatch.undo()
            assert riding.began and riding.result().ids.tolist() == \
                gs.count_patterns(path, binary=False, min_af=0.05).ids.tolist()
            # a dense store's feature blocks (chi2, auc) leave the profile a pass over its rows
            own_profile = "d.gs" in str(path) and gs.get_method(method).streaming == "blocks"
            assert len(calls) == (2 if own_profile else 1), (path, method, calls)


def test_columns_sharing_one_hash_but_not_the_other_stay_apart():
    """The two hashes are both compared: equal first hashes with different second ones (a
    collision of one 64-bit hash) are two patterns, numbered by first appearance."""
    from genosift.scoring.patterns import pattern_ids

    keys = np.array([[5, 1], [7, 2], [5, 1], [5, 9], [7, 2], [3, 3]], dtype=np.uint64)
    assert pattern_ids(keys).tolist() == [0, 1, 0, 2, 1, 3]
    assert pattern_ids(keys, np.array([False, True, True, True, False, True])).tolist() == [-1, 0, 1, 2, -1, 3]
    assert pattern_ids(keys[:0]).tolist() == [] and pattern_ids(keys, np.zeros(6, bool)).tolist() == [-1] * 6
