"""Allele-frequency filters (``min_af`` / ``max_af``, ``--min-af`` / ``--max-af``).

The allele frequency of a feature is the share of the scored samples whose value is above 0.
Features outside the range are not tested: NaN score, statistic and p-value, no q-value, ranked
after every tested feature, never selected, and not counted by the Benjamini-Hochberg
correction. Checked against numpy and ``scipy.stats.false_discovery_control`` computed here, in
every input form (dense, sparse, DataFrame, row chunks, stores, Dask), in the selectors, in
``cross_validate_ks`` / ``evaluate`` (training rows only) and on the command line.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.stats import false_discovery_control

import genosift as gs
from genosift.cli import main
from genosift.selectors import cross_validate_ks
from genosift.workflow import evaluate

MIN_AF, MAX_AF = 0.1, 0.8


def _data(n=90, p=60, seed=0):
    """Counts with carrier shares spread over [0, 1], a few rare and near-universal features, an
    all-zero feature, a constant (all-carrier) feature and two class-linked features."""
    rng = np.random.default_rng(seed)
    share = np.concatenate([rng.uniform(0.0, 1.0, p - 6), [0.02, 0.05, 0.97, 1.0, 0.4, 0.6]])
    X = (rng.random((n, p)) < share).astype(np.int64) * rng.integers(1, 5, (n, p))
    X[:, p - 6] = 0  # nobody carries it
    X[:, p - 3] = 2  # everybody carries it, constant
    y = np.repeat(["R", "S"], [n // 2, n - n // 2])
    X[y == "R", p - 2] += 3  # a signal, af inside the range
    X[:9, 1] = 1
    X[9:, 1] = 0  # af 0.1: exactly the lower bound (included)
    return X, y


def _af(X):
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    return (X > 0).mean(axis=0)


def _expected(X, y, method, lo=MIN_AF, hi=MAX_AF, **options):
    """The filtered result computed by hand: the unfiltered scores where the af is inside."""
    plain = gs.score(X, y, method=method, method_options=options)
    af = _af(X)
    kept = (af >= lo) & (af <= hi)
    scores = np.where(kept, plain.scores, np.nan)
    p = None if plain.pvalues is None else np.where(kept, plain.pvalues, np.nan)
    return af, kept, scores, p


@pytest.mark.parametrize("method", ["welch", "anova", "fisher", "pearson", "chi2_counts", "chi2", "auc", "mi",
                                    "kruskal", "variance"])
def test_filtered_scores_equal_the_unfiltered_ones_inside_the_range(method):
    X, y = _data()
    af, kept, scores, p = _expected(X, y, method)
    res = gs.score(X, y, method=method, min_af=MIN_AF, max_af=MAX_AF)
    assert 0 < kept.sum() < X.shape[1] and kept[1] and af[1] == 0.1  # the bound itself is inside
    np.testing.assert_allclose(res.af, af, rtol=0, atol=0)
    np.testing.assert_array_equal(res.tested, kept)
    assert res.n_tested == kept.sum() and res.af_range == (MIN_AF, MAX_AF)
    np.testing.assert_allclose(res.scores, scores, rtol=1e-12, equal_nan=True)
    assert np.isnan(res.statistic[~kept]).all()
    if p is not None:
        np.testing.assert_allclose(res.pvalues, p, rtol=1e-12, equal_nan=True)
        # BH over the tested features only (those with a p-value): scipy on the kept features
        ok = kept & ~np.isnan(p)
        q = np.full(X.shape[1], np.nan)
        q[ok] = false_discovery_control(p[ok], method="bh")
        np.testing.assert_allclose(res.qvalues, q, rtol=1e-12, equal_nan=True)
        assert np.isnan(res.qvalues[~kept]).all()
        # the count of tests is that of the tested features: BH over every feature gives other q-values
        plain_q = gs.score(X, y, method=method).qvalues
        assert not np.allclose(res.qvalues[ok], plain_q[ok])


def test_ranking_puts_untested_features_after_every_tested_one():
    X, y = _data()
    res = gs.score(X, y, method="welch", min_af=MIN_AF, max_af=MAX_AF)
    kept = res.tested
    n = kept.sum()
    assert kept[res.ranking[:n]].all() and not kept[res.ranking[n:]].any()
    # among the tested: by score, best first, the constant one (NaN) last among them
    tested_scores = res.scores[res.ranking[:n]]
    finite = tested_scores[~np.isnan(tested_scores)]
    assert (np.diff(finite) <= 0).all()
    # untested features keep index order at the end
    assert (np.diff(res.ranking[n:]) > 0).all()
    frame = res.to_frame()
    assert list(frame.columns) == ["feature", "score", "statistic", "pvalue", "qvalue", "af", "rank"]
    np.testing.assert_allclose(frame["af"].to_numpy(), _af(X)[res.ranking])
    assert frame["score"].iloc[n:].isna().all() and frame["qvalue"].iloc[n:].isna().all()
    assert res.top(1000).size == n
    prov = res.provenance()
    assert prov["min_af"] == MIN_AF and prov["max_af"] == MAX_AF and prov["n_tested"] == n


def test_one_bound_alone_and_no_filter():
    X, y = _data()
    af = _af(X)
    low = gs.score(X, y, method="welch", min_af=0.5)
    np.testing.assert_array_equal(low.tested, af >= 0.5)
    assert low.af_range == (0.5, 1.0)
    high = gs.score(X, y, method="welch", max_af=0.5)
    np.testing.assert_array_equal(high.tested, af <= 0.5)
    plain = gs.score(X, y, method="welch")
    assert plain.af is None and plain.tested is None and plain.n_tested == X.shape[1]
    assert "af" not in plain.to_frame().columns
    everything = gs.score(X, y, method="welch", min_af=0, max_af=1)  # the af column, nothing left out
    assert everything.tested.all()
    np.testing.assert_array_equal(everything.scores, plain.scores)


def test_carriers_are_values_above_zero():
    """Negative values, explicit zeros and duplicate entries of a sparse matrix: carriers are x > 0."""
    X = np.array([[1.0, -2.0, 0.0], [0.5, -1.0, 0.0], [0.0, 3.0, 0.0], [2.0, 0.0, 0.0]])
    y = [0, 0, 1, 1]
    expect = np.array([3, 1, 0]) / 4
    np.testing.assert_allclose(gs.score(X, y, method="anova", min_af=0.0).af, expect)
    coo = sp.coo_matrix((np.array([1.0, -1.0, 0.5, 0.0, 2.0, -2.0, 3.0]),
                         (np.array([0, 0, 1, 1, 3, 1, 2]), np.array([0, 0, 0, 2, 0, 1, 1]))), shape=(4, 3))
    # row 0, column 0 holds 1 - 1 = 0 once duplicates are summed: not a carrier
    dense = coo.toarray()
    np.testing.assert_allclose(gs.score(coo.tocsr(), y, method="anova", min_af=0.0).af, (dense > 0).mean(axis=0))
    np.testing.assert_allclose(gs.score(coo.tocsc(), y, method="anova", min_af=0.0).af, (dense > 0).mean(axis=0))


def test_nan_in_x_is_still_an_error_naming_the_feature():
    """The NaN policy is unchanged: NaN is an error, also in a feature the filter would leave out."""
    X, y = _data()
    X = X.astype(float)
    X[3, 0] = np.nan
    X[:, 0] = np.where(np.isnan(X[:, 0]), np.nan, 0.0)  # af 0: outside the range
    for method in ("welch", "auc", "relieff"):
        with pytest.raises(ValueError, match="x0"):
            gs.score(X, y, method=method, min_af=MIN_AF, max_af=MAX_AF)


def test_bad_bounds_are_errors():
    X, y = _data()
    with pytest.raises(ValueError, match=r"min_af=0\.9 is above max_af=0\.2"):
        gs.score(X, y, method="welch", min_af=0.9, max_af=0.2)
    for bad in (-0.1, 1.5, "0.1", True):
        with pytest.raises(ValueError, match="'min_af' parameter of score must be a number in"):
            gs.score(X, y, method="welch", min_af=bad)
    with pytest.raises(ValueError, match="'max_af' parameter of SelectKBest"):
        gs.SelectKBest("welch", max_af=2).fit(X, y)


def _forms(X, y, tmp_path):
    """The same data in every input form ``genosift.score`` takes (name, X, y)."""
    import dask.array as da

    from genosift.io import Dataset, write_store

    ids = np.array([f"s{i}" for i in range(X.shape[0])], dtype=object)
    names = np.array([f"x{j}" for j in range(X.shape[1])], dtype=object)
    sparse_store = write_store(Dataset(sp.csr_matrix(X), ids, names, pd.DataFrame({"y": y}, index=ids)),
                               tmp_path / "sparse.gs.h5ad")
    dense_store = write_store(Dataset(X.astype(np.float64), ids, names, pd.DataFrame({"y": y}, index=ids)),
                              tmp_path / "dense.gs.h5ad")

    def chunks():
        for a in range(0, X.shape[0], 13):
            yield X[a:a + 13], y[a:a + 13]

    return [
        ("dense", X, y), ("float", X.astype(np.float32), y), ("csr", sp.csr_matrix(X), y),
        ("csc", sp.csc_matrix(X), y), ("frame", pd.DataFrame(X, columns=names), y), ("chunks", chunks, None),
        ("sparse store", sparse_store, "y"), ("dense store", dense_store, "y"),
        ("dask", da.from_array(X, chunks=(17, 25)), y),
        ("dask sparse", da.from_array(sp.csr_matrix(X), chunks=(17, X.shape[1]), asarray=False), y),
    ]


def _same(res, ref, name):
    """The same filtered result, to rounding: scores, q-values, which features were tested, order."""
    np.testing.assert_array_equal(res.tested, ref.tested, err_msg=name)
    np.testing.assert_allclose(res.scores, ref.scores, rtol=1e-10, atol=1e-12, equal_nan=True, err_msg=name)
    if ref.pvalues is not None:
        np.testing.assert_allclose(res.qvalues, ref.qvalues, rtol=1e-10, equal_nan=True, err_msg=name)
    # the same order; scores that are zero in exact arithmetic may come out as 1e-16 in one form and
    # 0 in another: those rank after the others of the tested features, in either order
    real = int((ref.scores > 1e-9).sum())
    np.testing.assert_array_equal(res.ranking[:real], ref.ranking[:real], err_msg=name)
    np.testing.assert_array_equal(res.ranking[ref.n_tested:], ref.ranking[ref.n_tested:], err_msg=name)


@pytest.mark.parametrize("method", ["welch", "chi2_counts", "auc", "chi2"])
def test_every_input_form_gives_the_same_result(method, tmp_path):
    pytest.importorskip("dask")
    pytest.importorskip("h5py")
    X, y = _data()
    ref = gs.score(X, y, method=method, min_af=MIN_AF, max_af=MAX_AF)
    for name, data, labels in _forms(X, y, tmp_path):
        if name == "chunks":
            if gs.get_method(method).streaming != "rows":
                continue
            data = data()
        extra = {"scheduler": "sync"} if name.startswith("dask") else {}
        res = gs.score(data, labels, method=method, min_af=MIN_AF, max_af=MAX_AF, **extra)
        np.testing.assert_array_equal(res.af, ref.af, err_msg=name)
        np.testing.assert_array_equal(res.tested, ref.tested, err_msg=name)
        _same(res, ref, name)


@pytest.mark.parametrize("method", ["welch", "auc"])
def test_stores_share_of_the_scored_samples_only(method, tmp_path):
    """With ``samples``, the allele frequency is that of the rows scored (local engine and Dask tasks)."""
    pytest.importorskip("h5py")
    pytest.importorskip("dask")
    from genosift.io import Dataset, write_store
    from genosift.scoring.store import score_store

    X, y = _data()
    ids = np.array([f"s{i}" for i in range(X.shape[0])], dtype=object)
    path = write_store(Dataset(sp.csr_matrix(X), ids, np.array([f"x{j}" for j in range(X.shape[1])], dtype=object),
                               None), tmp_path / "d.gs.h5ad")
    rows = np.flatnonzero(np.arange(X.shape[0]) % 3 != 0)
    ref = gs.score(X[rows], y[rows], method=method, min_af=MIN_AF, max_af=MAX_AF)
    for extra in ({}, {"scheduler": "sync"}, {"chunk_bytes": 512}):
        res = score_store(path, y[rows], method=method, samples=rows, min_af=MIN_AF, max_af=MAX_AF, **extra)
        np.testing.assert_allclose(res.af, _af(X[rows]), rtol=0, atol=0)
        _same(res, ref, str(extra))


def test_joint_methods_see_only_the_features_inside_the_range():
    """relieff (distances over all features) and linear (one model): the filtered features are
    left out before scoring, so the kept ones score as on the reduced matrix."""
    X, y = _data()
    kept = (_af(X) >= MIN_AF) & (_af(X) <= MAX_AF)
    for method in ("relieff", "linear"):
        res = gs.score(X, y, method=method, min_af=MIN_AF, max_af=MAX_AF)
        alone = gs.score(X[:, kept], y, method=method)
        np.testing.assert_allclose(res.scores[kept], alone.scores, rtol=1e-9, equal_nan=True)
        assert np.isnan(res.scores[~kept]).all()
        assert (np.asarray(res.feature_names)[kept] == np.array([f"x{j}" for j in np.flatnonzero(kept)])).all()


def test_no_feature_inside_the_range():
    X, y = _data()
    res = gs.score(X, y, method="welch", min_af=0.99, max_af=0.995)
    assert res.n_tested == 0 and np.isnan(res.scores).all() and np.isnan(res.qvalues).all()
    assert gs.score(X, y, method="relieff", min_af=0.99, max_af=0.995).n_tested == 0


def test_selectors_never_keep_an_untested_feature():
    X, y = _data()
    res = gs.score(X, y, method="welch", min_af=MIN_AF, max_af=MAX_AF)
    n = res.n_tested
    sel = gs.SelectKBest("welch", k=5, min_af=MIN_AF, max_af=MAX_AF).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), np.sort(res.ranking[:5]))
    np.testing.assert_array_equal(sel.tested_, res.tested)
    np.testing.assert_allclose(sel.af_, _af(X))
    with pytest.warns(UserWarning, match="only those are kept"):
        big = gs.SelectKBest("welch", k=n + 5, min_af=MIN_AF, max_af=MAX_AF).fit(X, y).get_support()
    np.testing.assert_array_equal(big, res.tested)
    np.testing.assert_array_equal(gs.SelectKBest("welch", k="all", min_af=MIN_AF, max_af=MAX_AF).fit(X, y)
                                  .get_support(), res.tested)
    pct = gs.SelectPercentile("welch", percentile=50, min_af=MIN_AF, max_af=MAX_AF).fit(X, y).get_support()
    assert pct.sum() == int(np.ceil(n / 2)) and not pct[~res.tested].any()
    fdr = gs.SelectFdr("welch", alpha=0.5, min_af=MIN_AF, max_af=MAX_AF).fit(X, y).get_support()
    p = res.pvalues
    ok = res.tested & ~np.isnan(p)
    q = false_discovery_control(p[ok], method="bh")
    np.testing.assert_array_equal(np.flatnonzero(fdr), np.flatnonzero(ok)[q <= 0.5])
    # a callable score function is filtered the same way
    sel = gs.SelectKBest(lambda A, b: np.asarray(A).sum(axis=0).astype(float), k=3, min_af=MIN_AF,
                         max_af=MAX_AF).fit(X, y)
    sums = np.where(res.tested, X.sum(axis=0), -np.inf)
    np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), np.sort(np.argsort(-sums, kind="stable")[:3]))
    # relieff (a joint method) through a selector: the same result as gs.score
    sel = gs.SelectKBest("relieff", k=4, min_af=MIN_AF, max_af=MAX_AF).fit(X, y)
    joint = gs.score(X, y, method="relieff", min_af=MIN_AF, max_af=MAX_AF)
    np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), np.sort(joint.ranking[:4]))


@pytest.mark.parametrize("method", ["welch", "chi2_counts", "pearson"])
def test_partial_fit_with_the_filter_equals_fit(method):
    X, y = _data()
    order = np.argsort(y, kind="stable")  # the first chunks hold one class only
    full = gs.SelectKBest(method, k=6, min_af=MIN_AF, max_af=MAX_AF).fit(X, y)
    inc = gs.SelectKBest(method, k=6, min_af=MIN_AF, max_af=MAX_AF)
    for a in range(0, X.shape[0], 20):
        rows = order[a:a + 20]
        inc.partial_fit(X[rows], y[rows], classes=["R", "S"])
    np.testing.assert_allclose(inc.af_, full.af_, rtol=0, atol=0)
    np.testing.assert_allclose(inc.scores_, full.scores_, rtol=1e-9, atol=1e-12, equal_nan=True)
    np.testing.assert_array_equal(inc.get_support(), full.get_support())


def test_cross_validation_counts_carriers_on_the_training_rows_only():
    """A feature carried only by held-out rows of a fold is outside the range in that fold."""
    from sklearn.linear_model import LogisticRegression

    X, y = _data()
    rng = np.random.default_rng(3)
    test0 = np.sort(rng.choice(X.shape[0], 30, replace=False))
    train0 = np.setdiff1d(np.arange(X.shape[0]), test0)
    X = X.copy()
    X[:, 2] = 0
    X[test0, 2] = 1  # af 1/3 over all rows, 0 on the training rows of fold 0
    splits = [(train0, test0), (test0, train0)]
    folds = cross_validate_ks(X, y, score_func="welch", estimator=LogisticRegression(), ks=[3, 60], cv=splits,
                              min_af=MIN_AF, max_af=MAX_AF)
    for (train, _), fold in zip(splits, folds):
        af = _af(X[train])
        kept = (af >= MIN_AF) & (af <= MAX_AF)
        assert set(fold["ranking"].tolist()) == set(np.flatnonzero(kept).tolist())
        ref = gs.score(X[train], y[train], method="welch", min_af=MIN_AF, max_af=MAX_AF)
        np.testing.assert_array_equal(fold["ranking"], ref.ranking[:ref.n_tested])
        np.testing.assert_allclose(fold["scores"], ref.scores, equal_nan=True)
    assert 2 not in folds[0]["ranking"] and 2 not in folds[1]["ranking"]  # all ones in fold 1: af 1 > 0.8


def test_evaluate_filters_on_training_folds_and_writes_af(tmp_path):
    from genosift.workflow import write_results

    X, y = _data()
    ev = evaluate(X, y, method="welch", ks=[2, 5, 50], cv=3, min_af=MIN_AF, max_af=MAX_AF, random_state=0)
    for fold in ev.folds:
        af = _af(X[fold["train"]])
        assert set(fold["ranking"].tolist()) == set(np.flatnonzero((af >= MIN_AF) & (af <= MAX_AF)).tolist())
    kept = ev.result.tested
    np.testing.assert_array_equal(kept, (_af(X) >= MIN_AF) & (_af(X) <= MAX_AF))
    support = ev.pipeline.named_steps["select"].get_support()
    assert not support[~kept].any() and support.sum() == min(ev.best_k, kept.sum())
    assert any("Allele-frequency filter" in note for note in ev.notes)
    write_results(ev, tmp_path / "res", X=X, y=y)
    scores = pd.read_csv(tmp_path / "res" / "scores.tsv", sep="\t")
    assert "af" in scores.columns and not scores.loc[scores["af"] > MAX_AF, "selected"].any()
    run = json.loads((tmp_path / "res" / "run.json").read_text())
    assert run["min_af"] == MIN_AF and run["max_af"] == MAX_AF
    selected = pd.read_csv(tmp_path / "res" / "selected.tsv", sep="\t")
    assert len(selected) == support.sum()


def _table(tmp_path, X, y):
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "sample", [f"s{i}" for i in range(X.shape[0])])
    frame["label"] = y
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    return path


def test_command_line_min_af_max_af(tmp_path, capsys):
    X, y = _data()
    data = _table(tmp_path, X, y)
    out = tmp_path / "r.tsv"
    assert main(["score", str(data), "--target", "label", "--method", "welch", "--min-af", str(MIN_AF),
                 "--max-af", str(MAX_AF), "-o", str(out), "--quiet"]) == 0
    table = pd.read_csv(out, sep="\t").set_index("feature")
    af = pd.Series(_af(X), index=[f"g{j}" for j in range(X.shape[1])])
    np.testing.assert_allclose(table.loc[af.index, "af"].to_numpy(), af.to_numpy())
    kept = (af >= MIN_AF) & (af <= MAX_AF)
    assert table.loc[kept.index[~kept], "score"].isna().all() and not table.loc[kept.index[~kept], "selected"].any()
    ref = gs.score(X, y, method="welch", min_af=MIN_AF, max_af=MAX_AF)
    np.testing.assert_allclose(table.loc[kept.index, "qvalue"].to_numpy(), ref.qvalues, equal_nan=True)
    side = json.loads((tmp_path / "r.tsv.json").read_text())
    assert side["min_af"] == MIN_AF and side["max_af"] == MAX_AF and side["n_tested"] == int(kept.sum())
    # select --top beyond the tested features writes the tested ones only
    sel = tmp_path / "s.tsv"
    assert main(["select", str(data), "--target", "label", "--method", "welch", "--min-af", str(MIN_AF),
                 "--max-af", str(MAX_AF), "--top", "1000", "-o", str(sel), "--quiet"]) == 0
    columns = set(pd.read_csv(sel, sep="\t").columns) - {"sample", "label", "used_for_scoring"}
    assert columns == set(kept.index[kept])
    # a store gives the same table
    store = tmp_path / "d.gs.h5ad"
    assert main(["convert", str(data), "--keep", "label", "-o", str(store), "--quiet"]) == 0
    out2 = tmp_path / "r2.tsv"
    assert main(["score", str(store), "--target", "label", "--method", "welch", "--min-af", str(MIN_AF),
                 "--max-af", str(MAX_AF), "-o", str(out2), "--quiet"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(out2, sep="\t"), pd.read_csv(out, sep="\t"))
    capsys.readouterr()


def test_command_line_bound_errors_exit_2(tmp_path, capsys):
    X, y = _data()
    data = _table(tmp_path, X, y)
    base = ["score", str(data), "--target", "label", "-o", str(tmp_path / "r.tsv")]
    with pytest.raises(SystemExit) as exc:
        main(base + ["--min-af", "1.5"])
    assert exc.value.code == 2 and "--min-af: must be a share of the samples" in capsys.readouterr().err
    assert main(base + ["--min-af", "0.9", "--max-af", "0.1"]) == 2
    assert "--min-af 0.9 is above --max-af 0.1" in capsys.readouterr().err
    assert not (tmp_path / "r.tsv").exists()


def test_command_line_evaluate_with_the_filter(tmp_path, capsys):
    X, y = _data()
    data = _table(tmp_path, X, y)
    out = tmp_path / "ev"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["evaluate", str(data), "--target", "label", "--method", "welch", "--k", "2,5", "--cv", "3",
                     "--min-af", str(MIN_AF), "--max-af", str(MAX_AF), "-o", str(out), "--quiet"]) == 0
    assert "Allele-frequency filter" in capsys.readouterr().out
    selected = pd.read_csv(out / "selected.tsv", sep="\t")["feature"]
    af = _af(X)
    assert all(MIN_AF <= af[int(f[1:])] <= MAX_AF for f in selected)
