"""The genomic inflation factor and the QQ plot: lambda equals its formula (scipy.stats), the plot's
points and band are the order statistics' and Beta quantiles', and `genosift plot` draws a
ranking with the threshold of its run."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import genosift as gs
from genosift.cli import main
from genosift.scores import genomic_inflation

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


def test_genomic_inflation_equals_its_formula():
    rng = np.random.default_rng(3)
    for p in (rng.random(1001), rng.random(500) ** 2, np.r_[rng.random(300), [np.nan] * 7, 0.0, 1.0]):
        ok = p[~np.isnan(p)]
        expected = np.median(stats.chi2.isf(ok, 1)) / stats.chi2.ppf(0.5, 1)
        assert genomic_inflation(p) == pytest.approx(expected, rel=1e-12)
    assert genomic_inflation(rng.random(200_000)) == pytest.approx(1.0, abs=0.02)  # uniform: no inflation
    assert np.isnan(genomic_inflation([np.nan]))
    with pytest.raises(ValueError, match=r"p-values must lie in \[0, 1\]"):
        genomic_inflation([0.5, 1.5])


def test_the_qq_plot_draws_the_order_statistics_and_their_band():
    pytest.importorskip("matplotlib", reason="figures need matplotlib")
    from genosift.report.figures import qq_plot

    rng = np.random.default_rng(5)
    p = np.r_[rng.random(300), 0.0, np.nan]
    fig = qq_plot(p, threshold=1e-4, inflation=genomic_inflation(p))
    ax = fig.axes[0]
    m = 301
    ranks = np.arange(1, m + 1)
    expected = -np.log10((ranks - 0.5) / m)
    points = np.vstack([c.get_offsets() for c in ax.collections[1:]])  # the points, then the one p = 0
    order = np.argsort(points[:, 0])[::-1]
    np.testing.assert_allclose(points[order, 0], expected, rtol=1e-12)
    observed = np.sort(p[~np.isnan(p)])
    floor = observed[observed > 0].min() / 10
    np.testing.assert_allclose(points[order, 1], -np.log10(np.maximum(observed, floor)), rtol=1e-12)
    band = ax.collections[0].get_paths()[0].vertices  # the 95 % band: Beta(i, m - i + 1) quantiles
    top = -np.log10(stats.beta.ppf(0.025, ranks, m - ranks + 1))
    assert np.isclose(band[:, 1].max(), top.max(), rtol=1e-9)
    assert "lambda" in ax.get_title() and any(abs(line.get_ydata()[0] - 4.0) < 1e-12 for line in ax.lines[1:])
    with pytest.raises(ValueError, match="No p-value to draw"):
        qq_plot([np.nan])


@pytest.fixture
def ranked(tmp_path):
    X, y, names = gs.load_golub()
    table = pd.DataFrame(X[:, :300], columns=names[:300])
    table.insert(0, "sample", [f"p{i}" for i in range(len(y))])
    table.insert(1, "type", y)
    data = tmp_path / "expr.tsv"
    table.to_csv(data, sep="\t", index=False)
    out = tmp_path / "ranking.tsv"
    assert main(["score", str(data), "--target", "type", "--method", "welch", "--threshold", "bonferroni-patterns",
                 "-o", str(out), "--quiet"]) == 0
    return out


def test_the_score_job_reports_the_inflation_and_plot_draws_the_run(ranked, tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="figures need matplotlib")
    frame = pd.read_csv(ranked, sep="\t", float_precision="round_trip")
    record = json.loads((tmp_path / "ranking.tsv.json").read_text())
    assert record["genomic_inflation"] == genomic_inflation(frame["pvalue"].to_numpy())
    assert record["selection"]["pvalue"] == 0.05 / record["n_patterns"]
    capsys.readouterr()
    qq = tmp_path / "qq.png"
    assert main(["plot", str(ranked), "--qq", str(qq)]) == 0
    printed = capsys.readouterr().out
    assert qq.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # expression values: every gene its own pattern, so both lambdas are one
    assert record["genomic_inflation_patterns"] == record["genomic_inflation"] and record["n_patterns"] == 300
    lam = f"{record['genomic_inflation']:.3f}"
    assert f"genomic inflation lambda = {lam} over the patterns, {lam} over the features" in printed
    assert f"threshold p = {record['selection']['pvalue']:.3g}" in printed
    run = gs.jobs.plot(ranked, qq=qq, force=True)
    assert run.threshold == record["selection"]["pvalue"] and run.files == [qq]
    assert main(["plot", str(ranked), "--qq", str(qq)]) == 1  # an output that exists, without --force
    assert "--force" in capsys.readouterr().err
    assert main(["plot", str(ranked), "--qq", str(tmp_path / "qq.svg")]) == 2
    assert "is written as PNG: name it .png in --qq PNG" in capsys.readouterr().err
    assert main(["plot", str(ranked)]) == 2 and "plot needs a figure to draw: --qq PNG" in capsys.readouterr().err
    other = tmp_path / "other.tsv"
    pd.DataFrame({"feature": ["a"], "score": [1.0]}).to_csv(other, sep="\t", index=False)
    assert main(["plot", str(other), "--qq", str(tmp_path / "o.png")]) == 1
    assert "has no 'pvalue' column" in capsys.readouterr().err


def test_structure_auto_is_recorded_and_plot_draws_its_scree(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="figures need matplotlib")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "genomics"))
    from test_structure import _clonal

    X = _clonal(6, 15, seed=1)
    rng = np.random.default_rng(0)
    table = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    table.insert(0, "sample", [f"s{i}" for i in range(X.shape[0])])
    table.insert(1, "trait", X[:, 3] + rng.standard_normal(X.shape[0]))
    data = tmp_path / "clonal.tsv"
    table.to_csv(data, sep="\t", index=False)
    out = tmp_path / "ranking.tsv"
    assert main(["score", str(data), "--target", "trait", "--method", "regression", "--structure", "auto",
                 "--structure-out", str(tmp_path / "pcs.tsv"), "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "population structure: 5 principal coordinate(s): the steepest drop of the scree" in printed
    assert "adjusted for 5 covariate(s): PC1, PC2, PC3, PC4, PC5" in printed
    assert "Wrote the 5 principal coordinates" in printed
    record = json.loads((tmp_path / "ranking.tsv.json").read_text())["structure"]
    expected = gs.principal_coordinates(X, "auto")
    assert record["explained"] == expected.attrs["explained"] and record["scree"] == expected.attrs["scree"]
    scree = tmp_path / "scree.png"
    assert main(["plot", str(out), "--scree", str(scree)]) == 0
    assert scree.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "5 principal coordinate(s) adjusted for" in capsys.readouterr().out
    plain = tmp_path / "plain.tsv"
    assert main(["score", str(data), "--target", "trait", "--method", "regression", "-o", str(plain), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["plot", str(plain), "--scree", str(tmp_path / "s.png")]) == 1
    assert "adjusted for no principal coordinates" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["score", str(data), "--target", "trait", "--structure", "many", "-o", str(plain)])
    assert "--structure: must be a whole number >= 1 or auto, got 'many'" in capsys.readouterr().err


def test_plot_draws_and_says_lambda_over_the_distinct_patterns(tmp_path, capsys, monkeypatch):
    """A k-mer ranking: the QQ plot draws one p-value per distinct pattern, its lambda over them
    (scipy's chi-square quantiles of those p-values), the summary both lambdas; a collapsed
    ranking (one row per pattern) says the same, its lambda over the features from its sidecar."""
    pytest.importorskip("matplotlib", reason="figures need matplotlib")
    from test_genome_wide import _population, _table

    from genosift.report import figures

    X, y = _population(1, causal=True)
    data = _table(tmp_path, X, y)
    n_patterns = len(np.unique((X > 0).T, axis=0))
    drawn, original = [], figures.qq_plot
    monkeypatch.setattr(figures, "qq_plot", lambda *a, **k: drawn.append(original(*a, **k)) or drawn[-1])
    said = []
    for name, extra in (("whole", []), ("collapsed", ["--collapse-patterns"])):
        out = tmp_path / f"{name}.tsv"
        assert main(["score", str(data), "--target", "y", "--binary", "--method", "chi2", *extra, "-o", str(out),
                     "--quiet"]) == 0
        capsys.readouterr()
        assert main(["plot", str(out), "--qq", str(tmp_path / f"{name}.png")]) == 0
        said.append(capsys.readouterr().out.splitlines()[0])
    table = pd.read_csv(tmp_path / "whole.tsv", sep="\t", float_precision="round_trip")
    per_pattern = table.drop_duplicates("pattern")["pvalue"].to_numpy()
    over_patterns = np.median(stats.chi2.isf(per_pattern, 1)) / stats.chi2.ppf(0.5, 1)
    over_features = np.median(stats.chi2.isf(table["pvalue"].to_numpy(), 1)) / stats.chi2.ppf(0.5, 1)
    assert said == [f"{n_patterns:,} distinct patterns with a p-value: genomic inflation lambda = "
                    f"{over_patterns:.3f} over the patterns, {over_features:.3f} over the features; threshold p = "
                    f"{0.05 / n_patterns:.3g}"] * 2
    for fig in drawn:
        ax = fig.axes[0]
        assert sum(len(c.get_offsets()) for c in ax.collections[1:]) == n_patterns
        assert ax.get_title() == f"QQ plot (lambda = {over_patterns:.3f} over the patterns)"
    run = gs.jobs.plot(tmp_path / "whole.tsv", qq=tmp_path / "whole.png", force=True)
    assert run.over == "distinct patterns" and run.inflation == pytest.approx(over_patterns, rel=1e-12)
    assert run.feature_inflation == pytest.approx(over_features, rel=1e-12)
