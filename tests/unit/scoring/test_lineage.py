"""Lineage effects (``score --lineage``, ``genosift.lineage_effects``; bugwas, Earle et al. 2016):
the lineages' own association with the phenotype against statsmodels' ``Logit`` and ``OLS`` on
the same coordinates, each feature's most correlated coordinate against ``np.corrcoef``, and on
a simulated clonal population the answer: the confounded lineage's coordinate is the associated
one, its marker k-mers are lineage effects and the causal gene's k-mers locus effects."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from test_clonal import _of_gene, count_kmers

import genosift as gs
from genosift.cli import main
from genosift.core.validation import FixUsageError
from genosift.jobs import Covariates, Samples
from genosift.report.outputs import read_table
from genosift.scoring.lineage import LINEAGE_R, lineage_association

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")
#: The per-sample columns of the small tables (``_small``), kept apart from the features.
KEEP = {"keep": ("y", "trait", "clade")}


def _direct(X, L):
    """Each column's most correlated column of ``L`` and that correlation (the mean product of the
    standard scores, ``np.std``), -1 and NaN for a constant column."""
    def z(M):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (M - M.mean(axis=0)) / M.std(axis=0)

    r = z(np.asarray(X, dtype=float)).T @ z(L) / len(L)
    constant = np.isnan(r).all(axis=1)
    best = np.argmax(np.abs(np.nan_to_num(r)), axis=1)
    return np.where(constant, -1, best), np.where(constant, np.nan, r[np.arange(len(best)), best])


@pytest.fixture(scope="module")
def clonal(tmp_path_factory):
    """100 genomes of 4 lineages (lineage 0 confounded with the phenotype), fsm-lite's k-mers."""
    folder = tmp_path_factory.mktemp("lineage")
    pop = gs.simulate_clonal_population(folder, n_genomes=100, seed=0)
    kmers = count_kmers(pop, folder)
    ds = gs.io.read(kmers)
    table = pop.table.loc[ds.sample_ids]
    names = np.asarray(ds.feature_names, dtype=object)
    markers = np.zeros(names.size, dtype=bool)
    for gene in pop.lineage_genes[pop.confounded_lineage]:
        markers |= _of_gene(names, gene)
    return {"pop": pop, "folder": folder, "kmers": kmers, "ds": ds, "X": (ds.X > 0).astype(np.float64).tocsc(),
            "y": table["phenotype"].to_numpy(), "lineage": table["lineage"].to_numpy(), "names": names,
            "causal": _of_gene(names, pop.causal_gene), "markers": markers}


@pytest.fixture(scope="module")
def adjusted(clonal):
    """``score --method logistic --structure auto --lineage`` of the population, from Python."""
    folder = clonal["folder"] / "adjusted"
    folder.mkdir()
    run = gs.jobs.score(Samples(clonal["kmers"], target="phenotype", meta=clonal["pop"].phenotype, id_column="sample",
                                binary=True),
                        folder / "rank.tsv", method="logistic", covariates=Covariates(structure="auto"), lineage=True)
    return run, folder / "rank.tsv"


@pytest.fixture(scope="module")
def marginal(clonal):
    """``score --method logistic --lineage``: not adjusted, the coordinates for the lineages alone."""
    folder = clonal["folder"] / "marginal"
    folder.mkdir()
    run = gs.jobs.score(Samples(clonal["kmers"], target="phenotype", meta=clonal["pop"].phenotype, id_column="sample",
                                binary=True), folder / "rank.tsv", method="logistic", lineage=True)
    return run, folder / "rank.tsv"


def test_the_confounded_lineage_is_the_associated_coordinate_as_statsmodels_fits_it(clonal, adjusted):
    run, out = adjusted
    pcs = gs.principal_coordinates(clonal["ds"], "auto")  # the coordinates the run adjusted for
    assert run.result.covariates == tuple(pcs.columns)
    lineages = pd.read_csv(out.with_name("rank.tsv.lineages.tsv"), sep="\t")
    fit = sm.Logit(clonal["y"], sm.add_constant(pcs.to_numpy())).fit(disp=0, method="newton", tol=1e-12)
    np.testing.assert_allclose(lineages["coefficient"], fit.params[1:], rtol=1e-7)
    np.testing.assert_allclose(lineages["se"], fit.bse[1:], rtol=1e-6)
    np.testing.assert_allclose(lineages["pvalue"], fit.pvalues[1:], rtol=1e-5)
    np.testing.assert_allclose(lineages["explained"], pcs.attrs["explained"], rtol=1e-12)
    # the coordinate that carries the confounded lineage is the one associated, and only it
    in_lineage = (clonal["lineage"] == clonal["pop"].confounded_lineage).astype(float)
    carrier = int(np.argmax([abs(np.corrcoef(in_lineage, pcs[c])[0, 1]) for c in pcs.columns]))
    threshold = 0.05 / pcs.shape[1]
    assert lineages["associated"].tolist() == [j == carrier for j in range(pcs.shape[1])]
    assert lineages["pvalue"][carrier] < threshold < lineages["pvalue"].drop(carrier).min()
    record = json.loads(out.with_name("rank.tsv.json").read_text())["lineage_effects"]
    assert record["associated"] == [pcs.columns[carrier]] and record["threshold"] == threshold
    assert record["model"] == "logistic" and record["joint"] and record["min_r"] == LINEAGE_R


def test_marker_kmers_are_lineage_effects_and_the_causal_genes_locus_effects(clonal, adjusted):
    run, out = adjusted
    table = read_table(out).set_index("feature")
    effect = table["effect_kind"].reindex(clonal["names"]).to_numpy(dtype=object)
    assert clonal["markers"].sum() > 300 and clonal["causal"].sum() > 300
    assert (effect[clonal["markers"]] == "lineage").all()
    assert (effect[clonal["causal"]] == "locus").all()
    # what passes the genome-wide threshold: the causal gene's k-mers, locus effects all, as the summary says
    passing = table["pvalue"].to_numpy() < run.genome_wide.threshold
    assert set(table.index[passing]) == set(clonal["names"][clonal["causal"]])
    text = str(run)
    assert (f"of the {passing.sum():,} feature(s) passing the genome-wide threshold: {passing.sum():,} locus "
            "effect(s) in 1 pattern(s), 0 lineage effect(s) in 0 pattern(s)") in text
    assert f"associated with the phenotype (Wald p < {0.05 / 3:.3g}, alpha 0.05 over 3): PC1 (p = " in text


def test_unadjusted_the_marker_kmers_pass_and_are_called_lineage_effects(clonal, marginal):
    marginal, _ = marginal
    assert marginal.result.covariates is None  # the coordinates were computed for the lineages alone
    assert "computed for the lineage effects only (the tests are not adjusted for them)" in str(marginal)
    effects = marginal.lineage
    below = marginal.result.pvalues < marginal.genome_wide.threshold
    assert (below & clonal["markers"]).sum() > 100 and effects.is_lineage[below & clonal["markers"]].all()
    locus, lineage = effects.split(below)
    assert lineage > 1000 and locus >= clonal["causal"].sum()
    assert f"{locus:,} locus effect(s) in " in str(marginal) and f"{lineage:,} lineage effect(s) in " in str(marginal)


def test_each_features_lineage_is_its_most_correlated_coordinate(clonal, adjusted, tmp_path):
    run, out = adjusted
    pcs = gs.principal_coordinates(clonal["ds"], "auto")
    X = clonal["X"]
    best, r = _direct(X.toarray(), pcs.to_numpy())
    table = read_table(out).set_index("feature").reindex(clonal["names"])
    tested = run.patterns.ids >= 0
    assert tested.sum() > 14000 and (best == -1).sum() >= 1  # k-mers every genome carries: no lineage
    named = np.where(best >= 0, pcs.columns.to_numpy()[np.maximum(best, 0)], None)
    assert table["lineage"].to_numpy(dtype=object)[tested].tolist() == [
        name if name is not None else np.nan for name in named[tested]]
    np.testing.assert_allclose(table["lineage_r"].to_numpy()[tested], r[tested], rtol=1e-10, atol=1e-13)
    # the public function, in memory and from a store read in small feature blocks, gives the same
    found = gs.lineage_effects(X, clonal["y"], pcs)
    np.testing.assert_array_equal(found.best, best)
    np.testing.assert_allclose(found.r, r, rtol=1e-10, atol=1e-13)
    store = tmp_path / "kmers.gs.h5ad"
    gs.io.write_store(clonal["ds"], store)
    stored = gs.lineage_effects(store, clonal["y"], pcs, binary=True, chunk_bytes=1 << 16)
    np.testing.assert_array_equal(stored.best, found.best)
    np.testing.assert_array_equal(stored.r, found.r)
    assert stored.lineages.pvalue.tolist() == found.lineages.pvalue.tolist()


def _small(folder, seed=0, n=90, p=120):
    """Three lineages, marker columns, copies of columns (one pattern many times), a spread one
    that sets the phenotype with lineage 0: a TSV with ``y``, ``trait`` and ``clade``."""
    rng = np.random.default_rng(seed)
    lineage = np.repeat(np.arange(3), n // 3)
    X = (rng.random((n, p)) < np.where(lineage[:, None] == np.arange(p) % 3, 0.85, 0.1)).astype(int)
    X[:, 100] = rng.random(n) < 0.4  # spread over every lineage
    X[:, 101:110] = X[:, [100]]  # its copies: one pattern
    X[:, 110:120] = X[:, [0]]  # copies of a marker of lineage 0
    logit = -1.5 + 2.5 * (lineage == 0) + 2.0 * X[:, 100]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    trait = 1.5 * (lineage == 0) + X[:, 100] + rng.normal(size=n)
    frame = pd.DataFrame(X, columns=[f"k{j}" for j in range(p)])
    frame.insert(0, "sample", [f"s{i:02d}" for i in range(n)])
    frame.insert(1, "y", y)
    frame.insert(2, "trait", trait)
    frame.insert(3, "clade", np.array(["A", "B", "C"])[lineage])
    path = folder / "data.tsv"
    frame.to_csv(path, sep="\t", index=False)
    return path, X.astype(float), y, trait, lineage


@pytest.mark.parametrize("name", ["r.tsv", "r.csv", "r.parquet"])
@pytest.mark.parametrize("collapse", [False, True])
def test_every_output_form_carries_the_columns_and_a_pattern_one_value(tmp_path, name, collapse):
    data, X, y, _, _ = _small(tmp_path)
    out = tmp_path / name
    run = gs.jobs.score(Samples(data, target="y", read_options=KEEP), out, method="logistic",
                        covariates=Covariates(structure=2), lineage=True, collapse_patterns=collapse)
    table = read_table(out)
    assert list(table.columns[-3:]) == ["lineage", "lineage_r", "effect_kind"]
    assert len(table) == (run.patterns.n_patterns if collapse else X.shape[1])
    pcs = gs.principal_coordinates(X, 2)
    best, r = _direct(X, pcs.to_numpy())
    rows = np.array([int(f[1:]) for f in table["feature"]])
    assert table["lineage"].tolist() == pcs.columns.to_numpy()[best[rows]].tolist()
    np.testing.assert_allclose(table["lineage_r"], r[rows], rtol=1e-10)
    expected = np.where(run.lineage.lineages.associated[best[rows]] & (np.abs(r[rows]) >= LINEAGE_R), "lineage",
                        "locus")
    assert table["effect_kind"].tolist() == expected.tolist()
    assert {"lineage", "locus"} <= set(table["effect_kind"])
    if not collapse:  # the features of a pattern: one lineage, one correlation, one effect, to the bit
        for same in (np.arange(100, 110), np.r_[0, 110:120]):
            part = table.set_index("feature").loc[[f"k{j}" for j in same]]
            assert part["pattern"].nunique() == 1
            assert part["lineage"].nunique() == 1 and part["effect_kind"].nunique() == 1
            assert len(set(part["lineage_r"].tolist())) == 1
    assert run.outputs == [out, out.with_name(name + ".json"), out.with_name(name + ".lineages.tsv")]


def test_clusters_and_a_numeric_target_as_statsmodels_fits_them(tmp_path, capsys):
    data, X, y, trait, lineage = _small(tmp_path, seed=1)
    out = tmp_path / "clusters.tsv"
    assert main(["score", str(data), "--target", "y", "--keep", "y,trait,clade", "--method", "logistic",
                 "--structure", "2",
                 "--lineage-column", "clade", "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    lineages = pd.read_csv(str(out) + ".lineages.tsv", sep="\t", keep_default_na=False, na_values=[""])
    assert lineages["lineage"].tolist() == ["A", "B", "C"] and lineages["explained"].isna().all()
    for c, row in lineages.iterrows():  # each clade against the others
        fit = sm.Logit(y, sm.add_constant((lineage == c).astype(float))).fit(disp=0, method="newton", tol=1e-12)
        assert row["coefficient"] == pytest.approx(fit.params[1], rel=1e-7)
        assert row["se"] == pytest.approx(fit.bse[1], rel=1e-6)
        assert row["pvalue"] == pytest.approx(fit.pvalues[1], rel=1e-5)
    assert lineages["associated"].tolist() == (lineages["pvalue"] < 0.05 / 3).tolist()
    assert lineages["associated"][0]  # clade A (lineage 0) carries the phenotype
    assert "the lineages are the 3 clusters of the column 'clade'" in printed
    table = read_table(out).set_index("feature")
    best, r = _direct(X, np.column_stack([(lineage == c).astype(float) for c in range(3)]))
    assert table.loc[[f"k{j}" for j in range(100)], "lineage"].tolist() == list(np.array(["A", "B", "C"])[best[:100]])
    np.testing.assert_allclose(table.loc[[f"k{j}" for j in range(120)], "lineage_r"], r, rtol=1e-10)
    # a numeric target: least squares of the trait on every coordinate together (statsmodels' OLS)
    pcs = gs.principal_coordinates(X, 2)
    found = lineage_association(pcs, trait)
    fit = sm.OLS(trait, sm.add_constant(pcs.to_numpy())).fit()
    assert found.model == "regression"
    np.testing.assert_allclose(found.coefficient, fit.params[1:], rtol=1e-9)
    np.testing.assert_allclose(found.se, fit.bse[1:], rtol=1e-9)
    np.testing.assert_allclose(found.pvalue, fit.pvalues[1:], rtol=1e-7)
    # two targets in one pass: the features' lineages once, each target's own regression on them
    runs = gs.jobs.score(Samples(data, target=["trait", "y"], read_options=KEEP), tmp_path / "{target}.tsv",
                         method="regression", covariates=Covariates(structure=2), lineage=True)
    np.testing.assert_allclose(runs[0].lineage.lineages.pvalue, fit.pvalues[1:], rtol=1e-7)
    logit = sm.Logit(y, sm.add_constant(pcs.to_numpy())).fit(disp=0, method="newton", tol=1e-12)
    assert runs[1].lineage.lineages.model == "logistic"
    np.testing.assert_allclose(runs[1].lineage.lineages.pvalue, logit.pvalues[1:], rtol=1e-5)
    assert runs[0].lineage.best is runs[1].lineage.best
    for name in ("trait", "y"):
        assert (tmp_path / f"{name}.tsv.lineages.tsv").is_file()
        assert list(read_table(tmp_path / f"{name}.tsv").columns[-3:]) == ["lineage", "lineage_r", "effect_kind"]


def test_a_mixed_model_gets_coordinates_for_the_lineages_alone(tmp_path):
    data, X, y, _, _ = _small(tmp_path, seed=2)
    run = gs.jobs.score(Samples(data, target="y", read_options=KEEP), tmp_path / "lmm.tsv",
                        method="lmm", covariates=Covariates(kinship_from_data=True), lineage=True)
    pcs = gs.principal_coordinates(X, "auto")
    assert run.result.covariates is None and run.lineage.lineages.names == tuple(pcs.columns)
    fit = sm.Logit(y, sm.add_constant(pcs.to_numpy())).fit(disp=0, method="newton", tol=1e-12)
    np.testing.assert_allclose(run.lineage.lineages.pvalue, fit.pvalues[1:], rtol=1e-5)
    assert any("computed for the lineage effects only" in note for note in run.notes)


def test_lineage_effects_need_a_method_that_adjusts_and_a_column_that_exists(tmp_path, capsys):
    data, *_ = _small(tmp_path)
    samples = Samples(data, target="y", read_options=KEEP)
    with pytest.raises(FixUsageError, match="method 'chi2' adjusts for nothing; the methods that do: regression, "
                                            "logistic, moderated_t, lmm"):
        gs.jobs.score(samples, tmp_path / "x.tsv", method="chi2", lineage=True)
    assert not (tmp_path / "x.tsv").exists()
    assert main(["score", str(data), "--target", "y", "--method", "fisher", "--lineage", "-o",
                 str(tmp_path / "x.tsv")]) == 2
    err = capsys.readouterr().err
    assert "Lineage effects (--lineage)" in err and "Choose one of them with --method" in err
    assert main(["score", str(data), "--target", "y", "--keep", "y,trait,clade", "--method", "logistic",
                 "--lineage-column", "clad", "-o", str(tmp_path / "x.tsv")]) != 0
    err = capsys.readouterr().err
    assert "--lineage-column names the column 'clad', which the samples' metadata lack" in err
    assert not list(tmp_path.glob("x.tsv*"))  # no output of a run that failed
    with pytest.raises(ValueError, match="every sample has the lineage label"):
        gs.lineage_effects(np.eye(4), [0, 1, 0, 1], ["a"] * 4)
    with pytest.raises(ValueError, match="The lineage\\(s\\) 'L2' of lineage_effects take one value"):
        gs.lineage_effects(np.eye(4), [0, 1, 0, 1], np.c_[np.arange(4.0), np.ones(4)])


def test_the_hits_and_the_manhattan_plot_mark_lineage_effects(clonal, marginal, tmp_path):
    from genosift.report import figures

    _, ranking = marginal
    hits = tmp_path / "hits.tsv"
    gs.jobs.annotate(ranking, clonal["pop"].references, hits, top=40)
    table = read_table(ranking).set_index("feature")
    found = pd.read_csv(hits, sep="\t", keep_default_na=False, na_values=[""])
    assert {"lineage", "lineage_r", "effect_kind"} <= set(found.columns)
    assert found["effect_kind"].tolist() == table.loc[found["feature"], "effect_kind"].tolist()
    fig = figures.manhattan_plot(found, threshold=1e-5)
    drawn = [c for c in fig.axes[0].collections if len(c.get_offsets())]
    colours = {tuple(np.round(c.get_facecolor()[0], 3)) for c in drawn}
    from matplotlib.colors import to_rgba

    assert tuple(np.round(to_rgba(figures.LINEAGE), 3)) in colours
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    located = found[found["reference"].notna() & (found["effect_kind"] == "lineage")]["feature"].nunique()
    assert located and any(text.startswith(f"lineage effects ({located:,} k-mer") for text in legend)
    # the report's analysis: the rows of each effect below its threshold, and the associated lineages
    from genosift.report.association import ranking_association

    association = ranking_association(ranking)
    below = table["pvalue"].to_numpy() < association.threshold
    assert association.lineage["lineage"] == int((below & (table["effect_kind"] == "lineage").to_numpy()).sum()) > 1000
    assert association.lineage["locus"] == int((below & (table["effect_kind"] == "locus").to_numpy()).sum()) >= 370
    assert association.lineage["associated"] == ["PC1"]
    assert (f"PC1 associated with the phenotype; of the ranking's rows below the threshold, "
            f"{association.lineage['locus']:,} are locus effects") in association.lineage_text
