"""Where k-mers lie and which genes they hit: positions equal a direct scan of both strands and
bwa's exact matches (``bwa fastmap``), genes and neighbours equal ``bedtools intersect`` and
``bedtools closest``, drafts are searched only for what no reference holds, the gene summary
equals its definition, and `genosift annotate` / `genosift plot` name the causal gene of the
simulated population."""
from __future__ import annotations

import gzip
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.cli import main
from genosift.genomics.annotation import MIN_LENGTH, annotate, gene_summary, locate, reverse_complement
from genosift.io.references import Reference, read_fasta, read_gff3, read_references

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


def _genome(rng, lengths):
    return {f"contig{i + 1}": "".join(rng.choice(list("ACGT"), n)) for i, n in enumerate(lengths)}


def _write_fasta(path, contigs, width=60, lower=False):
    text = "".join(f">{name} some description\n" + "".join((seq.lower() if lower else seq)[i:i + width] + "\n"
                                                           for i in range(0, len(seq), width))
                   for name, seq in contigs.items())
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def _kmers(rng, contigs, n, repeats=()):
    """K-mers of 9 to 40 bases drawn from the contigs (as they are or reverse-complemented),
    with some that occur nowhere, a palindrome and the ``repeats`` given."""
    seqs = [s for s in contigs.values() if len(s) > 40]
    out = set(repeats)
    while len(out) < n:
        seq = seqs[rng.integers(len(seqs))]
        length = int(rng.integers(MIN_LENGTH, 41))
        start = int(rng.integers(0, len(seq) - length + 1))
        kmer = seq[start:start + length]
        if "N" in kmer:
            continue
        out.add(kmer if rng.random() < 0.5 else reverse_complement(kmer))
    out |= {"ACGTTAACGT", "GAATTCGAATTC"}  # palindromes (each its own reverse complement)
    out.add("".join(rng.choice(list("ACGT"), 35)))  # almost surely nowhere
    return sorted(out)


def _scan(kmers, contigs):
    """Every occurrence by str.find on both strands: (k-mer index, contig, start, end, strand)."""
    found = set()
    for i, kmer in enumerate(kmers):
        for strand, word in (("+", kmer), ("-", reverse_complement(kmer))):
            if strand == "-" and word == kmer:
                continue
            for contig, seq in contigs.items():
                at = seq.find(word)
                while at >= 0:
                    found.add((i, contig, at + 1, at + len(word), strand))
                    at = seq.find(word, at + 1)
    return found


def _rows(hits):
    return {(int(r.feature), r.contig, int(r.start), int(r.end), r.strand) for r in hits.itertuples()}


@pytest.mark.parametrize("compressed", [False, True])
def test_positions_equal_a_direct_scan_of_both_strands(tmp_path, compressed):
    rng = np.random.default_rng(1)
    contigs = _genome(rng, [4000, 2500, 30])
    contigs["contig2"] = contigs["contig2"][:1000] + "NNNNN" + contigs["contig2"][1000:]  # gaps match nothing
    repeat = contigs["contig1"][500:530]
    contigs["contig3"] = repeat  # a k-mer on two contigs, and one that is a whole contig
    fasta = _write_fasta(tmp_path / ("g.fa.gz" if compressed else "g.fa"), contigs, lower=compressed)
    kmers = _kmers(rng, contigs, 300, repeats=[repeat, contigs["contig1"][:12], contigs["contig2"][-9:],
                                               "A" * 9])
    hits = locate(kmers, [Reference(fasta, None, "ref")])
    expected = _scan(kmers, contigs)
    assert _rows(hits) == expected
    assert len(hits) == len(expected)  # no occurrence twice
    assert set(hits["reference"]) == {"g"}
    assert hits["feature"].is_monotonic_increasing
    palindrome = kmers.index("GAATTCGAATTC")
    assert set(hits.loc[hits["feature"] == palindrome, "strand"]) <= {"+"}
    assert (hits["end"] - hits["start"] + 1 == [len(kmers[i]) for i in hits["feature"]]).all()


@pytest.mark.skipif(shutil.which("bwa") is None, reason="bwa is not installed (apt-get install bwa)")
def test_positions_equal_bwa_exact_matches(tmp_path):
    """``bwa fastmap`` lists every exact match of each query (its super-maximal exact matches
    that span the whole query), with the strand and the leftmost position."""
    rng = np.random.default_rng(2)
    contigs = _genome(rng, [20_000, 7_000])
    fasta = _write_fasta(tmp_path / "ref.fa", contigs)
    kmers = _kmers(rng, contigs, 400, repeats=[contigs["contig1"][100:109], contigs["contig2"][5:15]])
    (tmp_path / "q.fa").write_text("".join(f">{i}\n{k}\n" for i, k in enumerate(kmers)))
    subprocess.run(["bwa", "index", str(fasta)], check=True, capture_output=True)
    out = subprocess.run(["bwa", "fastmap", "-w", "1000000", "-l", str(MIN_LENGTH), str(fasta), str(tmp_path / "q.fa")],
                         check=True, capture_output=True, text=True).stdout
    expected, query = set(), None
    for line in out.splitlines():
        cells = line.split("\t")
        if cells[0] == "SQ":
            query, length = int(cells[1]), int(cells[2])
        elif cells[0] == "EM" and int(cells[1]) == 0 and int(cells[2]) == length:
            for place in cells[4:]:
                contig, _, where = place.rpartition(":")
                start = int(where[1:])
                expected.add((query, contig, start, start + length - 1, where[0]))
    hits = locate(kmers, [Reference(fasta, None, "ref")])
    ours = _rows(hits)
    # bwa reports a palindrome on both strands; genosift once, on +
    palindromic = {i for i, k in enumerate(kmers) if reverse_complement(k) == k}
    assert {r for r in ours if r[0] not in palindromic} == {r for r in expected if r[0] not in palindromic}
    assert {r[:4] for r in ours if r[0] in palindromic} == {r[:4] for r in expected if r[0] in palindromic}
    assert len(ours) > len(kmers)  # the short ones occur more than once


def _gff(path, genes):
    lines = ["##gff-version 3"]
    for k, (contig, start, end, strand, kind, name) in enumerate(genes):
        lines.append(f"{contig}\tsim\t{kind}\t{start}\t{end}\t.\t{strand}\t.\tID=f{k};Name={name};product=p%3B{k}")
    path.write_text("\n".join(lines) + "\n##FASTA\n>contig1\nACGT\n")
    return path


def _random_genes(rng, contigs, n):
    genes = []
    kinds = ["CDS", "CDS", "CDS", "tRNA", "rRNA", "ncRNA"]
    for _ in range(n):
        contig = list(contigs)[rng.integers(len(contigs))]
        start = int(rng.integers(1, len(contigs[contig]) - 30))
        end = min(len(contigs[contig]), start + int(rng.integers(30, 700)))
        genes.append((contig, start, end, "+-"[rng.integers(2)], kinds[rng.integers(len(kinds))], f"g{len(genes)}"))
    return genes


@pytest.mark.skipif(shutil.which("bedtools") is None, reason="bedtools is not installed (apt-get install bedtools)")
def test_genes_and_neighbours_equal_bedtools(tmp_path):
    rng = np.random.default_rng(3)
    contigs = _genome(rng, [30_000, 12_000])
    fasta = _write_fasta(tmp_path / "ref.fa", contigs)
    genes = _random_genes(rng, contigs, 60)  # overlapping and nested ones among them
    gff = _gff(tmp_path / "ref.gff", genes)
    kmers = _kmers(rng, contigs, 500)
    found = annotate(kmers, [Reference(fasta, gff, "ref")])
    hits = found.hits[found.hits["reference"].notna()]
    hits = hits.assign(key=hits["feature"] + ":" + hits["contig"] + ":" + hits["start"].astype(str) + ":"
                       + hits["strand"])
    bed = hits.drop_duplicates("key").sort_values(["contig", "start"])
    bed_path = tmp_path / "hits.bed"
    bed_path.write_text("".join(f"{r.contig}\t{r.start - 1}\t{r.end}\t{r.key}\n" for r in bed.itertuples()))
    sorted_gff = tmp_path / "sorted.gff"
    subprocess.run(f"grep -v '^#' {gff} | sed '/^>/,$d' | sed '/^[ACGT]*$/d' | sort -k1,1 -k4,4n > {sorted_gff}",
                   shell=True, check=True)

    def bedtools(*args):
        out = subprocess.run(["bedtools", *args], check=True, capture_output=True, text=True).stdout
        return [line.split("\t") for line in out.splitlines()]

    overlaps = {(c[3], c[12].split(";")[1][5:]) for c in bedtools("intersect", "-a", str(bed_path), "-b",
                                                                   str(sorted_gff), "-wa", "-wb")}
    ours = {(r.key, r.gene) for r in hits[hits["gene"].notna()].itertuples()}
    assert ours == overlaps and len(ours) > 100
    assert not set(hits["key"]) - {k for k, _ in ours} - set(hits.loc[hits["gene"].isna(), "key"])
    between = hits[hits["gene"].isna()].set_index("key")
    assert len(between) > 20
    for side, flag in (("upstream", "-id"), ("downstream", "-iu")):
        rows = bedtools("closest", "-a", str(bed_path), "-b", str(sorted_gff), "-D", "ref", "-io", flag, "-t", "all")
        ties, distance = {}, {}
        for c in rows:
            if c[3] in between.index and c[6] != ".":
                ties.setdefault(c[3], set()).add(c[12].split(";")[1][5:])
                distance[c[3]] = abs(int(c[-1]))
        named = between[between[f"{side}_gene"].notna()]
        assert set(named.index) == set(ties)
        for key, row in named.iterrows():
            assert row[f"{side}_gene"] in ties[key]
            assert row[f"{side}_distance"] == distance[key]
    assert set(hits["gene_type"].dropna()) >= {"CDS", "tRNA", "rRNA"}
    assert set(hits["product"].dropna()) <= {f"p;{k}" for k in range(len(genes))}  # %3B read as ';'


def test_drafts_only_for_what_no_reference_holds(tmp_path):
    rng = np.random.default_rng(4)
    ref, draft1, draft2 = _genome(rng, [3000]), _genome(rng, [3000]), _genome(rng, [3000])
    both = ref["contig1"][100:131]
    draft1["contig1"] = draft1["contig1"][:500] + both + draft1["contig1"][500:]
    only_drafts = draft1["contig1"][2000:2025]
    draft2["contig1"] = draft2["contig1"] + reverse_complement(only_drafts)
    only_second = draft2["contig1"][10:40]
    paths = [_write_fasta(tmp_path / f"{n}.fa", c) for n, c in (("ref", ref), ("d1", draft1), ("d2", draft2))]
    (tmp_path / "refs.tsv").write_text(f"{paths[1].name}\t-\tdraft\n{paths[0].name}\n{paths[2].name}\t\tdraft\n")
    hits = locate([both, only_drafts, only_second, "ACGT" * 5], tmp_path / "refs.tsv")
    where = hits.groupby("feature")["reference"].agg(set).to_dict()
    assert where == {0: {"ref"}, 1: {"d1"}, 2: {"d2"}}  # draft d2 never sees only_drafts, which d1 holds


def test_gff3_genes_replace_their_parents_and_keep_their_names(tmp_path):
    path = tmp_path / "a.gff3"
    path.write_text(
        "##gff-version 3\n"
        "c\tRefSeq\tregion\t1\t9000\t.\t+\t.\tID=c:1..9000\n"
        "c\tRefSeq\tgene\t100\t400\t.\t+\t.\tID=gene-b1;Name=thrL;gene=thrL;locus_tag=b0001\n"
        "c\tRefSeq\tCDS\t100\t400\t.\t+\t0\tID=cds-1;Parent=gene-b1;Name=NP_1.1;gene=thrL;locus_tag=b0001;"
        "product=thr operon leader%2C peptide\n"
        "c\tRefSeq\tgene\t500\t600\t.\t-\t.\tID=gene-b2;Name=rrsA;gene=rrsA\n"
        "c\tRefSeq\trRNA\t500\t600\t.\t-\t.\tID=rna-2;Parent=gene-b2;product=16S ribosomal RNA\n"
        "c\tRefSeq\tpseudogene\t700\t800\t.\t+\t.\tID=gene-b3;Name=yzzX\n"
        "c\tRefSeq\tgene\t900\t990\t.\t+\t.\tID=gene-b4;Name=mgtL\n"
        "c\tRefSeq\tmRNA\t900\t990\t.\t+\t.\tID=m4;Parent=gene-b4\n"
        "c\tRefSeq\texon\t900\t990\t.\t+\t.\tID=e4;Parent=m4\n"
        "c\tRefSeq\tCDS\t900\t990\t.\t+\t0\tID=cds-4;Parent=m4\n"
        "###\n##FASTA\n>c\nACGT\n")
    genes = read_gff3(path)
    assert genes[["start", "type", "gene", "gene_id", "product"]].values.tolist() == [
        [100, "CDS", "thrL", "b0001", "thr operon leader, peptide"],
        [500, "rRNA", "rrsA", "rna-2", "16S ribosomal RNA"],
        [700, "pseudogene", "yzzX", "gene-b3", ""], [900, "CDS", "mgtL", "cds-4", ""]]
    assert genes["strand"].tolist() == ["+", "-", "+", "+"]


@pytest.mark.parametrize("text, message", [
    ("c\t.\tCDS\t10\t5\t.\t+\t0\tID=a\n", "1 <= start <= end"),
    ("c\t.\tCDS\t10\n", "not 9"),
    ("c\t.\tCDS\tten\t50\t.\t+\t0\tID=a\n", "whole numbers"),
])
def test_a_bad_gff3_line_is_named(tmp_path, text, message):
    path = tmp_path / "bad.gff"
    path.write_text("##gff-version 3\n" + text)
    with pytest.raises(ValueError, match=message) as info:
        read_gff3(path)
    assert "Line 2" in str(info.value)


@pytest.mark.parametrize("text, message", [
    ("ACGT\n>a\nACGT\n", "before the first '>'"),
    (">a\nACGT\n>a\nTTTT\n", "two records named 'a'"),
    (">a\nAC;GT\n", "not bases"),
    ("", "holds no sequence"),
    (">\nACGT\n", "without a name"),
])
def test_a_bad_fasta_is_refused(tmp_path, text, message):
    path = tmp_path / "bad.fa"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_fasta(path)


def test_a_bad_references_file_or_kmer_is_refused(tmp_path):
    (tmp_path / "a.fa").write_text(">a\nACGTACGTACGT\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.fa.gz").write_bytes(gzip.compress(b">a\nACGT\n"))
    for text, message in (("a.fa\t\tmaybe\n", "ref' or"), ("b.fa\t\tref\n", "not a file"),
                          ("# none\n", "no reference"), ("a.fa\nsub/a.fa.gz\t\tdraft\n", "duplicated reference names")):
        (tmp_path / "r.tsv").write_text(text)
        with pytest.raises((ValueError, FileNotFoundError), match=message):
            read_references(tmp_path / "r.tsv")
    ref = [Reference(tmp_path / "a.fa", None, "ref")]
    with pytest.raises(ValueError, match="has 8 bases"):
        locate(["ACGTACGT"], ref)
    with pytest.raises(ValueError, match="other than A, C, G and T"):
        locate(["ACGTNACGTAA"], ref)
    with pytest.raises(ValueError, match="'feature' column"):
        annotate(pd.DataFrame({"kmer": ["ACGTACGTACGT"]}), ref)


def test_the_gene_summary_follows_its_definition():
    hits = pd.DataFrame({
        "feature": ["a", "a", "b", "c", "d", "e"],
        "reference": ["r"] * 6, "contig": ["c"] * 6,
        "gene": ["x", "x", "x", "y", None, "x"], "gene_id": ["X", "X", "X", "Y", None, "X"],
        "gene_type": ["CDS"] * 4 + [None, "CDS"], "product": ["px"] * 3 + ["py", None, "px"],
        "upstream_gene": [None] * 4 + ["y", None], "downstream_gene": [None] * 4 + ["x", None],
        "upstream_gene_id": [None] * 4 + ["Y", None], "downstream_gene_id": [None] * 4 + ["X", None],
        "pvalue": [0.01, 0.01, 0.001, 0.2, 1e-5, 0.5], "beta": [1.5, 1.5, -2.0, 0.3, 9.0, np.nan],
        "pattern": [1, 1, 2, 3, 4, 1]})
    genes = gene_summary(hits, effect="beta")
    assert genes[["gene", "n_kmers", "n_patterns", "min_pvalue", "max_effect", "direction"]].values.tolist() == [
        ["x", 3, 2, 0.001, -2.0, "mixed"], ["y", 1, 1, 0.2, 0.3, "+"]]
    assert genes["mean_effect"].tolist() == pytest.approx([-0.25, 0.3])
    nearby = gene_summary(hits, effect="beta", nearby=True).set_index("gene")
    assert nearby.loc["x", "n_kmers"] == 4 and nearby.loc["y", "min_pvalue"] == 1e-5
    assert nearby.loc["x", "product"] == "px" and len(nearby) == 2


def test_annotate_and_plot_name_the_causal_gene_of_the_simulation(tmp_path, monkeypatch, capsys):
    """The walk-through's steps after `score`: every k-mer of the causal gene found in it, its
    gene first in the summary, the Manhattan plot and phandango's file written."""
    pytest.importorskip("matplotlib", reason="figures need matplotlib")
    pop = gs.simulate_clonal_population(tmp_path / "genomes", n_genomes=30, n_lineages=3, seed=2)
    causal = pop.causal_gene
    rng = np.random.default_rng(0)
    starts = rng.choice(len(causal) - 31, 40, replace=False)
    kmers = [causal[s:s + 31] if i % 2 else reverse_complement(causal[s:s + 25]) for i, s in enumerate(starts)]
    genes = read_gff3(pop.annotation)
    other = genes[genes["gene"] == "core_003"].iloc[0]
    core = "".join(read_fasta(pop.reference).values())[other["start"] - 1:other["start"] + 39]
    ranking = pd.DataFrame({"feature": kmers + [core, "ACGT" * 8], "pvalue": [1e-6] * 40 + [0.3, 0.5],
                            "beta": [2.0] * 40 + [0.1, -1.0], "rank": np.arange(1, 43), "selected": [True] * 42,
                            "pattern": [7] * 40 + [1, 2]})
    ranking.to_csv(tmp_path / "ranking.tsv", sep="\t", index=False)
    (tmp_path / "ranking.tsv.json").write_text('{"n_patterns": 50, "selection": {}}')
    monkeypatch.chdir(tmp_path)
    assert main(["annotate", "ranking.tsv", "--references", str(pop.references), "-o", "hits.tsv",
                 "--genes", "genes.tsv"]) == 0
    out = capsys.readouterr().out
    assert "42 k-mers (selected) searched in 1 reference(s): 41 found" in out
    assert "causal (causal, reference:chromosome): 40 k-mer(s), lowest p = 1e-06" in out
    summary = pd.read_csv("genes.tsv", sep="\t")
    assert summary.iloc[0][["gene", "n_kmers", "n_patterns", "direction"]].tolist() == ["causal", 40, 1, "+"]
    from genosift.report.outputs import read_table

    hits = read_table("hits.tsv")
    causal_row = genes[genes["gene"] == "causal"].iloc[0]
    inside = hits[hits["gene"] == "causal"]
    assert ((inside["start"] >= causal_row["start"]) & (inside["end"] <= causal_row["end"])).all()
    assert hits["start"].dtype == "Int64" and hits.loc[hits["reference"].isna(), "feature"].tolist() == ["ACGT" * 8]
    assert main(["plot", "ranking.tsv", "--manhattan", "m.png", "--hits", "hits.tsv", "--phandango", "m.plot"]) == 0
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plot = (tmp_path / "m.plot").read_text().splitlines()
    assert plot[0] == "#CHR\tSNP\tBP\tminLOG10(P)\tlog10(p)\tr^2" and len(plot) == 1 + 41
    first = plot[1].split("\t")
    row = hits[hits["feature"] == first[1]].iloc[0]
    assert first[2] == f"{row['start']}..{row['end']}" and float(first[3]) == -np.log10(row["pvalue"])
    # choices of k-mers, and what is refused
    assert main(["annotate", "ranking.tsv", "--references", str(pop.references), "-o", "top.tsv", "--top", "3"]) == 0
    assert read_table("top.tsv")["feature"].nunique() == 3
    assert main(["annotate", "ranking.tsv", "--references", str(pop.references), "-o", "p.tsv", "--pvalue",
                 "0.4"]) == 0
    assert read_table("p.tsv")["feature"].nunique() == 41
    capsys.readouterr()
    assert main(["annotate", "ranking.tsv", "--references", str(pop.references), "-o", "hits.tsv"]) != 0
    assert "--force" in capsys.readouterr().err
    assert main(["plot", "ranking.tsv", "--manhattan", "m2.png"]) != 0
    assert "--hits TABLE" in capsys.readouterr().err
    ranking.assign(selected=False).to_csv("none.tsv", sep="\t", index=False)
    assert main(["annotate", "none.tsv", "--references", str(pop.references), "-o", "n.tsv"]) != 0
    assert "--top N" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("fsm-lite") is None, reason="fsm-lite is not installed (apt-get install fsm-lite)")
def test_kmers_counted_in_assemblies_equal_fsm_lite_counts(tmp_path):
    """Every k-mer fsm-lite finds in a simulated population, counted in each genome's FASTA."""
    from genosift.genomics.annotation import count_kmers

    pop = gs.simulate_clonal_population(tmp_path / "genomes", n_genomes=16, n_lineages=2, seed=4)
    out = subprocess.run(["fsm-lite", "-l", str(pop.file_list), "-t", str(tmp_path / "index"), "-s", "1", "-m", "9",
                          "-M", "40"], check=True, capture_output=True, text=True, cwd=tmp_path).stdout
    (tmp_path / "kmers.txt").write_text(out)
    ds = gs.io.read(tmp_path / "kmers.txt")
    samples, counts = count_kmers(list(ds.feature_names), pop.file_list, n_jobs=2)
    order = [samples.index(s) for s in ds.sample_ids]
    expected = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X)
    assert counts.shape == expected.shape and counts.shape[1] > 5_000
    np.testing.assert_array_equal(counts[order], expected)
    assert (expected > 1).any()  # repeated k-mers (the short ones) counted as often as they occur


def test_predict_from_assemblies_refuses_what_it_cannot_count(tmp_path, capsys):
    from genosift.genomics.annotation import count_kmers
    from genosift.io.references import genomes_of

    (tmp_path / "g.fa").write_text(">c\nACGTACGTAAGGT\n")
    (tmp_path / "list.txt").write_text("s1\tg.fa\ns1\tg.fa\n")
    with pytest.raises(ValueError, match="duplicated samples"):
        genomes_of(tmp_path / "list.txt")
    (tmp_path / "list.txt").write_text("s1 g.fa\n")
    with pytest.raises(ValueError, match="sample<TAB>path.fa"):
        genomes_of(tmp_path / "list.txt")
    with pytest.raises(ValueError, match="of the model holds letters other than"):
        count_kmers(["gene_17"], tmp_path / "g.fa", owner="the model")
    assert main(["predict", str(tmp_path / "model.skops"), str(tmp_path / "g.fa"), "-o", str(tmp_path / "p.tsv")]) != 0
    assert "pass --assemblies" in capsys.readouterr().err

