"""The command line, run in-process."""
import json

import pandas as pd
import pytest

from genosift.cli import main


def test_demo_writes_ranking_selection_and_provenance(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "-o", str(out), "--top", "5"]) == 0
    printed = capsys.readouterr().out
    assert "M27891_at" in printed and "Cystatin C" in printed  # the top ALL/AML marker
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t")
    assert list(ranking.columns[:6]) == ["feature", "score", "statistic", "pvalue", "qvalue", "rank"]
    assert len(ranking) == 3051 and list(ranking["rank"][:3]) == [1, 2, 3]
    selected = pd.read_csv(out / "selected.tsv", sep="\t")
    assert (selected["qvalue"] <= 0.05).all() and len(selected) == ranking["selected"].sum()
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["method"] == "fisher" and prov["n_samples"] == 38 and prov["classes"] == ["ALL", "AML"]
    # a second run never overwrites the first
    assert main(["demo", "-o", str(out), "--top", "1"]) == 0
    assert (tmp_path / "demo-2" / "ranking.tsv").exists()
    assert not list(out.glob(".*part"))


def test_methods_lists_every_method(capsys):
    assert main(["methods"]) == 0
    printed = capsys.readouterr().out
    for name in ("fisher", "anova", "welch", "snr", "fscore", "pearson", "variance"):
        assert name in printed


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--fdr", "abc"])
    assert exc.value.code == 2


@pytest.mark.parametrize("args", [["--fdr", "2"], ["--fdr", "0"], ["--top", "0"], ["--top", "x"]])
def test_bad_option_values_are_usage_errors(tmp_path, capsys, args):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "-o", str(tmp_path / "d"), *args])
    assert exc.value.code == 2
    assert args[0] in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


# ------------------------------------------------------------------ score / select on files
import numpy as np

import genosift as gs


@pytest.fixture
def golub_files(tmp_path):
    X, y, names = gs.load_golub()
    ids = [f"patient-{i}" for i in range(38)]
    data = pd.DataFrame(X[:, :300], columns=names[:300])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "expr.csv", index=False)
    meta = pd.DataFrame({"sample": ids[::-1], "type": y[::-1], "batch": (["a", "b"] * 19)[::-1]})
    meta.to_csv(tmp_path / "meta.tsv", sep="\t", index=False)
    labelled = data.copy()
    labelled.insert(1, "type", y)
    labelled.to_csv(tmp_path / "labelled.csv", index=False)
    return tmp_path, X[:, :300], y, names[:300], np.array(ids)


def test_score_with_metadata_matches_the_library(golub_files, capsys):
    d, X, y, names, _ = golub_files
    out = d / "rank.tsv"
    argv = ["score", str(d / "expr.csv"), "--meta", str(d / "meta.tsv"), "--id", "sample",
            "--target", "type", "--method", "welch", "--fdr", "0.05", "-o", str(out)]
    assert main(argv) == 0
    table = pd.read_csv(out, sep="\t")
    ref = gs.score(X, y, method="welch", feature_names=names)
    assert list(table["feature"]) == list(ref.feature_names[ref.ranking])
    np.testing.assert_allclose(table["statistic"], ref.statistic[ref.ranking], rtol=1e-9)
    np.testing.assert_array_equal(table["selected"], ref.qvalues[ref.ranking] <= 0.05)
    prov = json.loads((d / "rank.tsv.json").read_text())
    assert prov["method"] == "welch" and prov["class_counts"] == {"ALL": 27, "AML": 11}
    assert len(prov["samples_used"]) == 38 and len(prov["inputs"]) == 2
    assert all(len(v["sha256"]) == 64 for v in prov["inputs"].values())
    # outputs are never overwritten without --force
    assert main(argv) == 1
    assert "already exists" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0


def test_score_with_labels_in_the_table_and_top(golub_files):
    d, X, y, names, _ = golub_files
    assert main(["score", str(d / "labelled.csv"), "--target", "type", "--top", "7", "-o", str(d / "r.tsv")]) == 0
    table = pd.read_csv(d / "r.tsv", sep="\t")
    assert table["selected"].sum() == 7 and table["selected"][:7].all()
    ref = gs.score(X, y, method="fisher")
    np.testing.assert_allclose(table["score"][:7], ref.scores[ref.ranking[:7]], rtol=1e-9)


def test_select_scores_on_training_groups_and_writes_every_sample(golub_files):
    d, X, y, names, ids = golub_files
    out = d / "reduced.parquet"
    assert main(["select", str(d / "expr.csv"), "--meta", str(d / "meta.tsv"), "--id", "sample",
                 "--target", "type", "--group", "batch", "--train-groups", "a", "--top", "4",
                 "-o", str(out)]) == 0
    frame = pd.read_parquet(out)
    train = np.arange(38) % 2 == 0  # sample i is in batch 'a' when i is even
    ref = gs.score(X[train], y[train], method="fisher", feature_names=names)
    assert list(frame.columns[4:]) == list(names[np.sort(ref.ranking[:4])])  # in data order
    assert list(frame["sample"]) == list(ids) and frame["used_for_scoring"].sum() == 19
    np.testing.assert_allclose(frame[ref.top(4)[0]], X[:, ref.ranking[0]], rtol=1e-12)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--target", "nope"], "not found among the sample columns"),
        (["--target", "type", "--classes", "ALL,XYZ"], "no sample has"),
        (["--target", "type", "--method", "fisher", "--fdr", "0.1"], "needs p-values"),
        (["--target", "type", "--train-groups", "a"], "need --group"),
    ],
)
def test_score_data_errors_exit_1(golub_files, capsys, extra, message):
    d = golub_files[0]
    argv = ["score", str(d / "expr.csv"), "--meta", str(d / "meta.tsv"), "--id", "sample", *extra, "-o",
            str(d / "x.tsv")]
    assert main(argv) == 1
    assert message in capsys.readouterr().err
    assert not (d / "x.tsv").exists()


def test_score_kmer_counts_with_phenotypes():
    from conftest import require_shared

    folder = require_shared("pyseer_kmers")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/k.tsv"
        assert main(["score", str(folder / "kmers.gz"), "--meta", str(folder / "example.pheno"), "--id", "samples",
                     "--target", "binary", "--method", "chi2_counts", "--top", "10", "-o", out]) == 0
        table = pd.read_csv(out, sep="\t")
        assert len(table) == 200 and table["selected"].sum() == 10
        ds = gs.io.read_kmers(folder / "kmers.gz")
        meta = gs.io.read_metadata(folder / "example.pheno", id_column="samples")
        labels = meta.loc[ds.sample_ids, "binary"].to_numpy()
        ref = gs.score(ds.X, labels, method="chi2_counts", feature_names=ds.feature_names)
        assert list(table["feature"][:10]) == list(ref.top(10))


def test_convert_kmers_then_score_the_store(tmp_path, capsys):
    from conftest import require_shared

    folder = require_shared("pyseer_kmers")
    store = tmp_path / "kmers.gs.h5ad"
    argv = ["convert", str(folder / "kmers.gz"), "--meta", str(folder / "example.pheno"), "--id", "samples",
            "-o", str(store)]
    assert main(argv) == 0
    assert "1837 samples x 200 features" in capsys.readouterr().out
    assert main(argv) == 1 and "exists" in capsys.readouterr().err  # never overwritten without --force
    assert main([*argv, "--force"]) == 0
    from_store = gs.score(str(store), "binary", method="chi2_counts", chunk_bytes=1 << 16)
    ds = gs.io.read_kmers(folder / "kmers.gz")
    meta = gs.io.read_metadata(folder / "example.pheno", id_column="samples")
    ref = gs.score(ds.X, meta.loc[ds.sample_ids, "binary"].to_numpy(), method="chi2_counts")
    np.testing.assert_allclose(from_store.statistic, ref.statistic, rtol=1e-12)


def test_score_accepts_a_file_path_and_a_label_column(golub_files):
    d, X, y, names, _ = golub_files
    import gzip

    (d / "labelled.csv.gz").write_bytes(gzip.compress((d / "labelled.csv").read_bytes()))
    for path in (d / "labelled.csv", str(d / "labelled.csv.gz")):
        res = gs.score(path, "type", method="welch")
        ref = gs.score(X, y, method="welch", feature_names=names)
        np.testing.assert_allclose(res.statistic, ref.statistic, rtol=1e-9)
        assert list(res.feature_names) == list(names)
    with pytest.raises(ValueError, match="no column named 'nope'"):
        gs.score(d / "labelled.csv", "nope")


def test_outputs_get_the_permissions_of_new_files(golub_files, tmp_path):
    import os
    import stat

    d, *_ = golub_files
    old = os.umask(0o022)
    try:
        for name in ("rank.tsv", "rank.parquet"):
            out = tmp_path / name
            assert main(["score", str(d / "labelled.csv"), "--target", "type", "-o", str(out)]) == 0
            for path in (out, out.with_name(out.name + ".json")):
                assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    finally:
        os.umask(old)


# ------------------------------------------------------------------ a metadata join that matches few ids
def _few_matched(tmp_path):
    """Data of 40 samples; metadata of 25, of which 12 are in the data (44 of 536 in a real mix-up)."""
    rng = np.random.default_rng(0)
    ids = [f"iso{i:02d}" for i in range(40)]
    data = pd.DataFrame(rng.normal(size=(40, 6)), columns=[f"g{j}" for j in range(6)])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "data.csv", index=False)
    meta_ids = ids[:12] + [f"ISO{i:02d}" for i in range(12, 25)]  # the rest spelled in capitals
    pd.DataFrame({"sample": meta_ids, "y": ["a", "b"] * 12 + ["a"]}).to_csv(tmp_path / "meta.csv", index=False)
    return tmp_path


def test_attach_metadata_warns_and_min_matched_refuses(tmp_path):
    from genosift.io import attach_metadata, read, read_metadata
    from genosift.io.metadata import FewMatchedWarning, TooFewMatched

    d = _few_matched(tmp_path)
    data, meta = read(d / "data.csv"), read_metadata(d / "meta.csv", id_column="sample")
    with pytest.warns(FewMatchedWarning) as caught:
        matched, report = attach_metadata(data, meta)
    text = str(caught[0].message)
    assert (report.n_matched, report.n_data, report.n_metadata) == (12, 40, 25) and report.few
    assert "12 of the data's 40 sample(s) (30%) and 12 of the metadata's 25 (48%) matched by id" in text
    assert "ids of the data not in the metadata: 'iso12', 'iso13', 'iso14', 'iso15', 'iso16' and 23 more" in text
    assert "ids of the metadata not in the data: 'ISO12', 'ISO13', 'ISO14', 'ISO15', 'ISO16' and 8 more" in text
    assert "id_column=" in text and "min_matched=" in text and matched.shape == (12, 6)
    # a count: at least N in both; a share: at least that share of each side
    for ok in (12, 0.3, 0.25):
        with pytest.warns(FewMatchedWarning):
            assert attach_metadata(data, meta, min_matched=ok)[1].n_matched == 12
    for too_many in (13, 0.5, 0.31):
        with pytest.raises(TooFewMatched) as err:
            attach_metadata(data, meta, min_matched=too_many)
        assert isinstance(err.value, ValueError) and f"min_matched={too_many}" in str(err.value)
        assert "12 of the data's 40 sample(s)" in str(err.value)
    for bad in (0, -3, 1.5, True, "12", 0.0):
        with pytest.raises(ValueError, match="The 'min_matched' parameter of attach_metadata must be"):
            attach_metadata(data, meta, min_matched=bad)
    # the jobs' samples take it too
    from genosift.jobs import Samples
    from genosift.jobs.labelled import load_labelled

    with pytest.raises(TooFewMatched):
        load_labelled(Samples(d / "data.csv", target="y", meta=d / "meta.csv", id_column="sample", min_matched=20))
    # a join that matches most samples says nothing
    import warnings

    most = pd.DataFrame({"y": ["a", "b"] * 15}, index=pd.Index([f"iso{i:02d}" for i in range(30)], name="sample"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewMatchedWarning)
        assert not attach_metadata(data, most)[1].few  # 30 of 40, and all 30 of the metadata


def test_cli_warns_on_a_poor_join_and_min_matched_exits_2(tmp_path, capsys):
    d = _few_matched(tmp_path)
    base = ["score", str(d / "data.csv"), "--meta", str(d / "meta.csv"), "--id", "sample", "--target", "y",
            "--quiet"]
    assert main([*base, "-o", str(d / "r.tsv")]) == 0  # goes on, loudly
    err = capsys.readouterr().err
    assert err.startswith("genosift: warning: Few samples matched: 12 of the data's 40 sample(s) (30%)")
    assert "'iso12'" in err and "'ISO12'" in err
    assert "--id names the metadata's id column and --id-column the data's" in err
    assert "(--meta-sep for the metadata, --sep for the data)" in err and "pass --min-matched." in err
    for cmd, out in (("score", "s.tsv"), ("select", "sel.tsv")):
        extra = ["--top", "2"] if cmd == "select" else []
        argv = [cmd, *base[1:], *extra, "--min-matched", "0.9", "-o", str(d / out)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"genosift {cmd}: error: Too few samples matched: 12 of the data's 40 sample(s)")
        assert "fewer than --min-matched 0.9 asks (at least 90% of each side)" in err
        assert not (d / out).exists()
    assert main([*base, "--min-matched", "12", "-o", str(d / "ok.tsv")]) == 0 and (d / "ok.tsv").exists()
    assert main(["evaluate", *base[1:], "--min-matched", "13", "-o", str(d / "res")]) == 2
    assert "fewer than --min-matched 13 asks (at least 13)" in capsys.readouterr().err
    for bad in ("1.5", "0", "many"):
        with pytest.raises(SystemExit) as usage:
            main([*base, "--min-matched", bad, "-o", str(d / "x.tsv")])
        assert usage.value.code == 2


def test_the_recorded_command_as_it_was_typed(monkeypatch):
    """`genosift ...` and `python -m genosift ...` are recorded; a call from Python is not a command."""
    from genosift.cli.data import command_line

    for argv0, expected in [("/usr/bin/genosift", "genosift score a.tsv -o b.tsv"),
                            ("/x/site-packages/genosift/__main__.py", "python -m genosift score a.tsv -o b.tsv"),
                            ("/x/other/__main__.py", None), ("", None), ("script.py", None)]:
        monkeypatch.setattr("sys.argv", [argv0, "score", "a.tsv", "-o", "b.tsv"])
        assert command_line() == expected


def test_methods_table_fits_the_terminal(capsys, monkeypatch):
    """`genosift methods` lists every method within the terminal's width (80 columns at least),
    each summary wrapped under its own column."""
    import genosift as gs
    from genosift.cli import main

    for columns in ("80", "120"):
        monkeypatch.setenv("COLUMNS", columns)
        assert main(["methods"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert max(len(line) for line in lines) <= int(columns)
        listed = [line.split()[0] for line in lines[1:] if line and not line.startswith(" ") and
                  not line.startswith("`")]
        assert listed == list(gs.methods().index)
