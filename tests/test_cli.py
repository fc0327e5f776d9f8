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
