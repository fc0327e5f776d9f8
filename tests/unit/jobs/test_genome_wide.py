"""The answer in words: every association run says how many features and distinct patterns pass
the genome-wide threshold (alpha over the distinct patterns), or that none does and what may
help; lambda over the distinct patterns beside the one over every feature; ``selected`` marks only
what a rule selected. Each figure is checked against a direct count: ``np.unique`` over the
columns of the presence/absence matrix, scipy's chi-square quantiles."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import genosift as gs
from genosift.cli import main

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")

N, BASE, P = 80, 40, 240


def _population(seed, *, causal):
    """k-mer-like presence/absence: ``BASE`` patterns, each copied to several columns; with
    ``causal``, the label follows pattern 0 (and thus every k-mer copying it)."""
    rng = np.random.default_rng(seed)
    base = (rng.random((N, BASE)) < rng.uniform(0.15, 0.85, BASE)).astype(np.float64)
    pick = np.r_[np.arange(BASE), rng.integers(0, BASE, P - BASE)]  # every pattern at least once
    X = base[:, pick]
    if causal:
        y = np.where(rng.random(N) < 0.9, base[:, 0], 1 - base[:, 0]).astype(int)
    else:
        y = rng.integers(0, 2, N)
    return X, y


def _table(folder, X, y, name="data.tsv", **more):
    frame = pd.DataFrame(X.astype(int), columns=[f"k{j}" for j in range(X.shape[1])])
    frame.insert(0, "sample", [f"s{i}" for i in range(X.shape[0])])
    frame.insert(1, "y", y)
    for column, values in more.items():
        frame.insert(2, column, values)
    path = folder / name
    frame.to_csv(path, sep="\t", index=False)
    return path


def _read(out):
    table = pd.read_csv(out, sep="\t", keep_default_na=False, na_values=[""], float_precision="round_trip")
    return table, json.loads(out.with_name(out.name + ".json").read_text())


def _direct_lambda(p):
    p = p[~np.isnan(p)]
    return np.median(stats.chi2.isf(p, 1)) / stats.chi2.ppf(0.5, 1)


def test_the_summary_counts_what_passes_and_lambda_over_the_patterns(tmp_path, capsys):
    X, y = _population(1, causal=True)
    out = tmp_path / "r.tsv"
    assert main(["score", str(_table(tmp_path, X, y)), "--target", "y", "--binary", "--method", "chi2",
                 "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    table, record = _read(out)
    n_patterns = len(np.unique((X > 0).T, axis=0))  # the patterns of the features tested, counted directly
    threshold = 0.05 / n_patterns
    passing = table["pvalue"].to_numpy() < threshold
    columns = [int(f[1:]) for f in table.loc[passing, "feature"]]
    expected_patterns = len(np.unique((X[:, columns] > 0).T, axis=0))
    assert passing.sum() >= 2 and expected_patterns >= 1  # the premise: the label's pattern passes
    assert (f"{int(passing.sum()):,} feature(s) in {expected_patterns:,} distinct pattern(s) pass the genome-wide "
            f"threshold (p < {threshold:.3g})") in printed
    assert record["genome_wide"] == {
        "threshold": threshold, "alpha": 0.05, "over": "patterns", "n_tests": n_patterns,
        "n_features_passing": int(passing.sum()), "n_patterns_passing": expected_patterns,
        "best_pvalue": float(table["pvalue"].min()), "best_qvalue": float(table["qvalue"].min())}
    # lambda: over every feature, and over the distinct patterns, one p-value each (they share it)
    assert (table.groupby("pattern")["pvalue"].nunique() == 1).all()
    per_pattern = table.drop_duplicates("pattern")["pvalue"].to_numpy()
    assert per_pattern.size == n_patterns
    over_patterns, over_features = _direct_lambda(per_pattern), _direct_lambda(table["pvalue"].to_numpy())
    assert record["genomic_inflation_patterns"] == pytest.approx(over_patterns, rel=1e-12)
    assert record["genomic_inflation"] == pytest.approx(over_features, rel=1e-12)
    assert abs(over_patterns - over_features) > 1e-3  # the two differ here: the test tells them apart
    assert (f"genomic inflation lambda = {over_features:.3f} over the features, {over_patterns:.3f} over the "
            f"{n_patterns:,} distinct patterns") in printed
    # no rule: nothing is selected, and the summary says so
    assert not table["selected"].any() and record["selection"]["n_selected"] == 0
    assert "; no selection rule;" in printed.splitlines()[0]


def test_when_nothing_passes_the_summary_says_so_and_what_may_help(tmp_path, capsys):
    X, y = _population(2, causal=False)
    data = _table(tmp_path, X, y)
    out = tmp_path / "r.tsv"
    assert main(["score", str(data), "--target", "y", "--binary", "--method", "logistic", "--structure", "2",
                 "--top", "5", "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    table, record = _read(out)
    threshold = 0.05 / len(np.unique((X > 0).T, axis=0))
    best = float(table["pvalue"].min())
    assert best >= threshold  # the premise: a label of chance, nothing passes
    assert (f"No feature passes the genome-wide threshold (p < {threshold:.3g}): the best p-value is "
            f"{best:.3g}.") in printed
    assert "more samples (80 were tested" in printed
    assert "so compare a run with fewer than the 2 adjusted for (--structure K);" in printed
    assert "or a looser rule, --fdr Q (" in printed and f"the best q-value here is {table['qvalue'].min():.3g}" \
        in printed
    wide = record["genome_wide"]
    assert wide["n_features_passing"] == 0 and wide["n_patterns_passing"] == 0 and wide["best_pvalue"] == best
    # the rule's own selection is unchanged: the top 5
    assert table["selected"].tolist() == (table["rank"] <= 5).tolist()
    # a run that chose by --fdr already is not told to: its advice ends with the structure
    assert main(["score", str(data), "--target", "y", "--binary", "--method", "logistic", "--structure", "2",
                 "--fdr", "0.05", "-o", str(tmp_path / "fdr.tsv"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "--fdr Q" not in printed
    assert "so compare a run with fewer than the 2 adjusted for (--structure K)." in printed
    # from Python, the advice names the keywords
    run = gs.jobs.score(gs.jobs.Samples(data, target="y", binary=True), tmp_path / "py.tsv", method="logistic",
                        covariates=gs.jobs.Covariates(structure=2))
    text = str(run)
    assert "(structure=)" in text and "or a looser rule, fdr= (" in text and "--" not in text
    assert run.genome_wide.n_features == 0 and run.genome_wide.threshold == threshold
    assert not run.mask.any()


def test_selected_is_what_the_rule_selects_and_nothing_without_one(tmp_path, capsys):
    X, y = _population(1, causal=True)
    data = _table(tmp_path, X, y)
    base = ["score", str(data), "--target", "y", "--binary", "--method", "chi2", "--quiet"]
    tables = {}
    for name, rule in (("none", []), ("fdr", ["--fdr", "0.2"]), ("top", ["--top", "7"]),
                       ("threshold", ["--threshold", "0.001"])):
        out = tmp_path / f"{name}.tsv"
        assert main([*base, *rule, "-o", str(out)]) == 0
        tables[name] = _read(out)
    capsys.readouterr()
    table, record = tables["none"]
    assert not table["selected"].any() and record["selection"]["n_selected"] == 0
    fdr, _ = tables["fdr"]
    assert fdr["selected"].tolist() == (fdr["qvalue"] <= 0.2).tolist() and fdr["selected"].any()
    top, _ = tables["top"]
    assert top["selected"].tolist() == (top["rank"] <= 7).tolist()
    threshold, _ = tables["threshold"]
    assert threshold["selected"].tolist() == (threshold["pvalue"] < 0.001).tolist()
    # in Python too: select_mask without a rule selects nothing
    from genosift.jobs.labelled import select_mask

    res = gs.score(X > 0, y, method="chi2")
    assert not select_mask(res).any()
    assert select_mask(res, fdr=0.2).tolist() == (res.qvalues <= 0.2).tolist()


def test_several_targets_each_say_what_passes(tmp_path, capsys):
    X, y = _population(1, causal=True)
    z = np.random.default_rng(9).integers(0, 2, N)
    data = _table(tmp_path, X, y, z=z)
    assert main(["score", str(data), "--target", "y,z", "--binary", "--method", "chi2", "-o",
                 str(tmp_path / "{target}.tsv"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    threshold = 0.05 / len(np.unique((X > 0).T, axis=0))
    for target in ("y", "z"):
        table, record = _read(tmp_path / f"{target}.tsv")
        n = int((table["pvalue"] < threshold).sum())
        assert record["genome_wide"]["n_features_passing"] == n
        said = (f"{n:,} feature(s) in" if n else "No feature passes the genome-wide threshold")
        block = printed.split(f"target {target!r}:")[1].split("Wrote")[0]
        assert said in block and "over the features," in block
