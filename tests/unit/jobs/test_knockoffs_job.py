"""The job ``knockoffs`` (``genosift knockoffs``): every feature ranked by the knockoff filter of its
distinct pattern, the selection equal to the library's ``KnockoffSelector`` and to the knockoff+
rule applied by hand, the sidecar, the summary (also when nothing passes), and its refusals."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.cli import main
from genosift.core.validation import UsageError
from genosift.jobs import Samples

CAUSAL = [3, 11, 19, 27, 35, 50]
COLUMNS = ["feature", "group", "statistic", "e_value", "selected", "rank", "pattern", "pattern_size", "af"]


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """200 samples of 60 Gaussian features, 6 of them causal (``trait``), a copy of g03 (one pattern
    with it) and a constant feature; ``noise`` a target of no feature, ``cov`` a covariate."""
    rng = np.random.default_rng(2026)
    n, p = 200, 60
    X = rng.standard_normal((n, p))
    cov = rng.standard_normal(n)
    y = X[:, CAUSAL] @ np.full(len(CAUSAL), 0.7) + 0.8 * cov + rng.standard_normal(n)
    X = np.column_stack([X, X[:, 3], np.zeros(n)])
    names = [f"g{j:02d}" for j in range(p)] + ["g03_copy", "flat"]
    ids = [f"s{i:03d}" for i in range(n)]
    folder = tmp_path_factory.mktemp("knockoffs")
    data = pd.DataFrame(X, columns=names)
    data.insert(0, "sample", ids)
    data.to_csv(folder / "data.tsv", sep="\t", index=False)
    meta = pd.DataFrame({"sample": ids, "trait": y, "noise": rng.standard_normal(n), "cov": cov})
    meta.to_csv(folder / "meta.tsv", sep="\t", index=False)
    return folder, X, y, meta, np.array(names, dtype=object)


def _run(args, capsys):
    try:
        code = main(["knockoffs", *map(str, args)])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _common(folder, target="trait"):
    return [folder / "data.tsv", "--meta", folder / "meta.tsv", "--id", "sample", "--target", target]


def _knockoff_plus(W, q):
    """The knockoff+ threshold of Barber & Candes (2015), from its definition."""
    for t in np.sort(np.unique(np.abs(W[W != 0]))):
        if (1 + np.sum(W <= -t)) / max(1, np.sum(W >= t)) <= q:
            return t
    return np.inf


def test_the_command_selects_the_planted_features_as_the_selector_does(planted, tmp_path, capsys):
    folder, X, y, meta, names = planted
    out = tmp_path / "selected.tsv"
    code, printed, _ = _run([*_common(folder), "--covariate", "cov", "--statistic", "lasso_entry", "--fdr", "0.2",
                             "-o", out], capsys)
    assert code == 0
    table = pd.read_csv(out, sep="\t", keep_default_na=False, na_values=[""])
    assert list(table.columns) == COLUMNS and len(table) == len(names)
    assert sorted(table["feature"]) == sorted(names) and table["rank"].tolist() == list(range(1, len(names) + 1))
    chosen = set(table.loc[table["selected"], "feature"])
    assert {names[j] for j in CAUSAL} | {"g03_copy"} <= chosen and len(chosen) <= 8
    # the library's selector on the same data: the same statistics and selection
    sel = gs.KnockoffSelector(0.2, statistic="lasso_entry").fit(X, y, covariates=meta[["cov"]].to_numpy())
    by_name = table.set_index("feature")
    np.testing.assert_allclose(by_name.loc[names, "statistic"], sel.statistics_, rtol=1e-9, equal_nan=True)
    assert (by_name.loc[names, "selected"].to_numpy() == sel.get_support()).all()
    # identical features are one pattern and one group; the constant one is never tested, and last
    assert by_name.loc["g03", "pattern"] == by_name.loc["g03_copy", "pattern"]
    assert by_name.loc["g03", "group"] == by_name.loc["g03_copy", "group"] and by_name.loc["g03", "pattern_size"] == 2
    assert table.iloc[-1]["feature"] == "flat" and table.iloc[-1]["group"] == -1
    assert np.isnan(table.iloc[-1]["statistic"])
    assert "62 features in 60 distinct patterns (in memory)" in printed
    assert "1 feature(s) constant over the samples: not tested" in printed
    # the knockoff+ rule on W of the 60 patterns tested, by hand: one draw at the FDR
    tested = table[table["group"] >= 0].drop_duplicates("group")
    W = tested["statistic"].to_numpy()
    t = _knockoff_plus(W, 0.2)
    assert set(tested.loc[tested["statistic"] >= t, "feature"]) == chosen - {"g03_copy"}
    # ranked by e-value, then W
    ranked = table[table["group"] >= 0]
    keys = list(zip(-ranked["e_value"], -ranked["statistic"]))
    assert keys == sorted(keys)
    record = json.loads((tmp_path / "selected.tsv.json").read_text())
    assert record["thresholds"] == [pytest.approx(t, rel=1e-12)]
    assert (record["fdr"], record["draw_fdr"], record["n_draws"], record["statistic"], record["s_method"]) == \
        (0.2, 0.2, 1, "lasso_entry", "mvr")
    assert record["shrinkage"] == pytest.approx(sel.result_.shrinkage)
    assert (record["n_features"], record["n_tested"], record["n_patterns"], record["n_groups"]) == (62, 62, 60, 60)
    assert record["selected_features"] == table.loc[table["selected"], "feature"].tolist()
    assert record["n_selected"] == len(chosen) and record["covariates"] == ["cov"] and record["model"] == "linear"
    assert record["inputs"] and record["design"] == "in memory"
    assert f"{len(chosen)} features in {len(chosen) - 1} groups pass the knockoff filter at FDR 0.2" in printed
    assert "given 1 covariate(s), unpenalised: cov" in printed
    assert "little of the patterns is left to test" not in printed


def test_many_covariates_for_few_patterns_are_pointed_out(planted, tmp_path, capsys):
    folder, *_ = planted
    code, printed, _ = _run([*_common(folder), "--structure", "20", "--statistic", "lasso_entry", "--fdr", "0.2",
                             "-o", tmp_path / "crowded.tsv"], capsys)
    assert code == 0
    assert "note: 20 covariate(s) for 60 distinct patterns: given them, little of the patterns is left" in printed
    assert "a smaller --structure of many features" in printed


def test_nothing_passing_is_said_and_force_replaces(planted, tmp_path, capsys):
    folder, *_ = planted
    out = tmp_path / "null.tsv"
    args = [*_common(folder, "noise"), "--statistic", "lasso_entry", "-o", out]
    code, printed, _ = _run(args, capsys)
    assert code == 0
    assert "no feature passes the knockoff filter at FDR 0.1" in printed
    assert "selects at least 10 groups or none" in printed and "a larger --fdr" in printed
    table = pd.read_csv(out, sep="\t")
    record = json.loads((tmp_path / "null.tsv.json").read_text())
    assert not table["selected"].any() and record["n_selected"] == 0 and record["selected_features"] == []
    before = out.read_bytes()
    code, _, err = _run(args, capsys)
    assert code == 1 and "--force" in err and out.read_bytes() == before
    code, _, _ = _run([*args, "--force", "--seed", "3"], capsys)
    assert code == 0 and json.loads((tmp_path / "null.tsv.json").read_text())["seed"] == 3


@pytest.mark.parametrize("args, code, message", [
    (["--folds", "0"], 2, "--folds is the number of folds"),
    (["--folds", "0"], 2, "or --statistic lasso_entry, which needs none"),
    (["--fdr", "1"], 2, "argument --fdr: must be a number in (0, 1)"),
    (["--draws", "0"], 2, "argument --draws"),
    (["--s-method", "best"], 2, "argument --s-method: invalid choice"),
    (["--chunk-bytes", "100K"], 1, "beyond the memory budget of 100K. Raise --chunk-bytes to 2M"),
    (["--chunk-bytes", "100K"], 1, "or test fewer: --min-af and --max-af"),
    (["--groups", "correlation"], 2, "--groups is called --feature-groups here (the groups of features the "
                                     "knockoff filter tests together"),
    (["--groups", "correlation"], 2, "give --feature-groups correlation"),
])
def test_a_bad_option_is_named(planted, tmp_path, capsys, args, code, message):
    folder, *_ = planted
    got, _, err = _run([*_common(folder), *args, "-o", tmp_path / "x.tsv"], capsys)
    assert got == code and message in err
    assert not (tmp_path / "x.tsv").exists()


def test_from_python_the_options_are_keywords(planted, tmp_path):
    folder, *_ = planted
    samples = Samples(folder / "data.tsv", target="trait", meta=folder / "meta.tsv", id_column="sample")
    with pytest.raises(UsageError, match=r"'genes' is neither\. Give feature_groups='correlation', or leave"):
        gs.jobs.knockoffs(samples, tmp_path / "x.tsv", feature_groups="genes")
    with pytest.raises(UsageError, match=r"The 'n_draws' parameter of knockoffs must be an int >= 1. Got 0"):
        gs.jobs.knockoffs(samples, tmp_path / "x.tsv", n_draws=0)
    with pytest.raises(TypeError, match=r"give Samples\(\.\.\., chunk_bytes=4096\)"):
        gs.jobs.knockoffs(samples, tmp_path / "x.tsv", chunk_bytes=4096)
    run = gs.jobs.knockoffs(samples, tmp_path / "g.tsv", fdr=0.3, statistic="lasso_entry",
                            feature_groups="correlation")
    assert run.output == tmp_path / "g.tsv" and str(run).splitlines()[-1].startswith("Wrote ")
    assert "patterns grouped by correlation (average |r| at least 0.5): 60 patterns in" in str(run)
    assert run.result.group.size == 62 and run.result.group[-1] == -1
    assert (run.table["feature"] == pd.read_csv(tmp_path / "g.tsv", sep="\t")["feature"]).all()


def test_a_store_gives_the_table_of_the_file(planted, tmp_path, capsys):
    pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
    import scipy.sparse as sp

    from genosift.io import Dataset, write_store

    folder, X, y, meta, names = planted
    store = write_store(Dataset(sp.csr_matrix(X), meta["sample"].to_numpy(dtype=object), names,
                                meta.set_index("sample")), tmp_path / "k.gs.h5ad")
    printed = {}
    for source, out in ((store, "s.tsv"), (folder / "data.tsv", "f.tsv")):
        common = [source, "--target", "trait"] if source == store else _common(folder)
        code, printed[out], _ = _run([*common, "--statistic", "lasso_entry", "--fdr", "0.2", "-o", tmp_path / out],
                                     capsys)
        assert code == 0
    assert "62 features in 60 distinct patterns (read from the store)" in printed["s.tsv"]
    assert json.loads((tmp_path / "s.tsv.json").read_text())["design"] == "read from the store"
    a, b = (pd.read_csv(tmp_path / n, sep="\t") for n in ("s.tsv", "f.tsv"))
    pd.testing.assert_frame_equal(a, b, rtol=1e-9)
    assert set(a.loc[a["selected"], "feature"]) >= {names[j] for j in CAUSAL}
