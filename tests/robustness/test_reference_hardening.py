"""Genomes read with bounded memory and checked as data: FASTA, GFF3, references files and genome
lists (line and contig bounds, occurrences kept per k-mer, coordinates, Parent cycles, control
characters, pipes), and data text printed with its control characters escaped."""
from __future__ import annotations

import gzip
import os
import random
import re
import threading
import warnings

import pandas as pd
import pytest

from genosift.cli import main
from genosift.core.messages import printable
from genosift.genomics import annotation
from genosift.genomics.annotation import annotate, count_kmers, locate
from genosift.io import references
from genosift.io.compression import LineTooLong
from genosift.io.references import fasta_records, genomes_of, read_fasta, read_gff3, read_references

_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NASTY = "\x1b[2J\x00\r\x07\x9b"


def _genome(n=3000, seed=1):
    rng = random.Random(seed)
    return "".join(rng.choice("ACGT") for _ in range(n))


def _reference(folder, sequence, gff_lines, contig="chr1"):
    (folder / "g.fa").write_text(f">{contig} test genome\n{sequence}\n")
    (folder / "g.gff").write_text("##gff-version 3\n" + "".join(line + "\n" for line in gff_lines))
    (folder / "refs.tsv").write_text("g.fa\tg.gff\tref\n")
    return folder / "refs.tsv"


# bounded reading -------------------------------------------------------------------------------

@pytest.mark.parametrize("reader", [read_references, genomes_of, read_gff3])
def test_list_files_and_gff3_lines_are_bounded(tmp_path, monkeypatch, reader):
    monkeypatch.setattr(references, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "one_line.gz"
    path.write_bytes(gzip.compress(b"x" * 5000 + b"\n"))
    with pytest.raises(LineTooLong, match="line 1 is longer than 1,000 bytes"):
        reader(path)


@pytest.mark.parametrize("single_line", [True, False])
def test_a_contig_longer_than_the_bound_is_refused_naming_it(tmp_path, monkeypatch, single_line):
    monkeypatch.setattr(references, "MAX_CONTIG", 500)
    body = "A" * 3000 if single_line else "\n".join(["ACGT" * 15] * 50)
    fasta = tmp_path / "big.fa.gz"
    fasta.write_bytes(gzip.compress(f">small\nACGT\n>huge\n{body}\n".encode()))
    with pytest.raises(ValueError, match=r"contig 'huge' of the FASTA file .*big\.fa\.gz.* longer than 500 bases"):
        read_fasta(fasta)
    (tmp_path / "refs.tsv").write_text("big.fa.gz\t\tref\n")
    with pytest.raises(ValueError, match="contig 'huge'"):  # annotate and predict --assemblies alike
        locate(["ACGTACGTA"], tmp_path / "refs.tsv")
    with pytest.raises(ValueError, match="contig 'huge'"):
        count_kmers(["ACGTACGTA"], fasta)
    assert [(n, len(s)) for n, s in fasta_records(fasta, max_contig=10_000)] == [("small", 4), ("huge", 3000)]


def test_occurrences_kept_per_kmer_are_capped_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(annotation, "MAX_OCCURRENCES", 5)
    monkeypatch.setattr(annotation, "_WINDOW", 16)
    (tmp_path / "a.fa").write_text(">c1\n" + "A" * 200 + "\n>c2\n" + "A" * 30 + "\n")
    (tmp_path / "refs.tsv").write_text("a.fa\t\tref\n")
    kmers = ["A" * 10, "CCCCCCCCCC"]
    with pytest.warns(UserWarning, match=r"1 k-mer\(s\) occur more than 5 times in the reference 'a' .*first 5"):
        hits = locate(kmers, tmp_path / "refs.tsv")
    assert hits["feature"].tolist() == [0] * 5
    assert hits["start"].tolist() == [1, 2, 3, 4, 5] and set(hits["contig"]) == {"c1"}
    _, counts = count_kmers(kmers, tmp_path / "a.fa")  # counts are never capped
    assert counts.tolist() == [[191 + 21, 0]]


def test_windowed_search_finds_every_occurrence_once(tmp_path, monkeypatch):
    monkeypatch.setattr(annotation, "_WINDOW", 7)
    sequence = _genome(400, seed=3)
    (tmp_path / "g.fa").write_text(f">c\n{sequence}\n")
    (tmp_path / "refs.tsv").write_text("g.fa\t\tref\n")
    kmers = [sequence[i:i + 12] for i in (0, 50, 388)] + ["ACGTACGTAC"]
    hits = locate(kmers, tmp_path / "refs.tsv")
    for i, kmer in enumerate(kmers):
        expected = [m.start() + 1 for m in re.finditer(f"(?={kmer})", sequence)]
        assert sorted(hits.loc[(hits["feature"] == i) & (hits["strand"] == "+"), "start"]) == expected
    _, counts = count_kmers(kmers, tmp_path / "g.fa")
    monkeypatch.setattr(annotation, "_WINDOW", 1 << 20)
    assert counts.tolist() == count_kmers(kmers, tmp_path / "g.fa")[1].tolist()


# GFF3 and FASTA checks ------------------------------------------------------------------------

@pytest.mark.parametrize("start", ["1" + "0" * 30, "1_0", "\u0661\u0660", "+5", " 5", "0", "5.0", ""])
def test_gff3_coordinates_are_plain_ascii_numbers_in_range(tmp_path, start):
    gff = tmp_path / "g.gff"
    gff.write_text(f"chr1\t.\tCDS\t{start}\t99999\t.\t+\t0\tID=c1\n")
    with pytest.raises(ValueError, match=r"Line 1 of the GFF3 file .*\(digits 0-9\)"):
        read_gff3(gff)


def test_gff3_end_beyond_the_bound_is_refused(tmp_path):
    gff = tmp_path / "g.gff"
    gff.write_text(f"chr1\t.\tCDS\t1\t{10 ** 16}\t.\t+\t0\tID=c1\n")
    with pytest.raises(ValueError, match="end <= 1e\\+15"):
        read_gff3(gff)


@pytest.mark.parametrize("lines", [
    ["chr1\t.\tgene\t10\t99\t.\t+\t.\tID=g1;Parent=g1;Name=selfish"],
    ["chr1\t.\tgene\t10\t99\t.\t+\t.\tID=g1;Parent=m1", "chr1\t.\tmRNA\t10\t99\t.\t+\t.\tID=m1;Parent=g1"],
    ["chr1\t.\tgene\t10\t99\t.\t+\t.\tID=g1;Parent=x,g1"],
])
def test_gff3_parent_cycles_are_refused(tmp_path, lines):
    gff = tmp_path / "g.gff"
    gff.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="cycle of Parent attributes .*'g1'"):
        read_gff3(gff)


def test_gff3_parents_without_cycles_still_pass(tmp_path):
    gff = tmp_path / "g.gff"
    gff.write_text("chr1\t.\tgene\t10\t99\t.\t+\t.\tID=g1;Name=abc\n"
                   "chr1\t.\tmRNA\t10\t99\t.\t+\t.\tID=m1;Parent=g1\n"
                   "chr1\t.\tCDS\t10\t99\t.\t+\t0\tID=c1;Parent=m1\n")
    assert read_gff3(gff)[["type", "gene"]].values.tolist() == [["CDS", "abc"]]


@pytest.mark.parametrize("control", ["\x00", "\x1b", "\x07", "\r", "\x9b", "\u202e"])
def test_fasta_headers_with_control_characters_are_refused(tmp_path, control):
    fasta = tmp_path / "g.fa"
    fasta.write_bytes(f">ctg{control}1 x\nACGT\n".encode())
    with pytest.raises(ValueError, match="Line 1 of the FASTA file .* control character"):
        read_fasta(fasta)


def test_fasta_with_crlf_and_tabbed_headers_reads(tmp_path):
    fasta = tmp_path / "g.fa"
    fasta.write_bytes(b">c1\tdescription\r\nacgt \r\nNNAC\r\n")
    assert read_fasta(fasta) == {"c1": "ACGTNNAC"}


def test_gff3_seqids_that_match_no_contig_are_warned_about(tmp_path):
    sequence = _genome()
    refs = _reference(tmp_path, sequence, ["NC_000913.3\t.\tCDS\t100\t400\t.\t+\t0\tID=c1;gene=abc"])
    with pytest.warns(UserWarning, match=r"names 1 contig\(s\) that its FASTA .* lacks \('NC_000913.3'; the "
                                         r"FASTA's contigs: 'chr1'\)"):
        found = annotate([sequence[150:181]], refs)
    assert found.hits["gene"].isna().all()


def test_annotate_gives_no_pandas_warning(tmp_path):
    sequence, other = _genome(), _genome(2000, seed=2)
    (tmp_path / "g.fa").write_text(f">chr1\n{sequence}\n>chr2\n{other}\n")
    (tmp_path / "g.gff").write_text("chr1\t.\tCDS\t100\t400\t.\t+\t0\tID=c1;gene=abc\n"
                                    "chr1\t.\tCDS\t2000\t2500\t.\t-\t0\tID=c2;gene=xyz\n")
    (tmp_path / "refs.tsv").write_text("g.fa\tg.gff\tref\n")
    kmers = [sequence[150:181], sequence[1000:1031], other[100:131], "ACGTACGTACGTAAAAACCCCCGGGGGTTTT"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = annotate(kmers, tmp_path / "refs.tsv", nearby=True)
    assert found.hits["gene"].fillna("-").tolist() == ["abc", "-", "-", "-"] and found.n_found == 3
    assert found.hits["upstream_gene"].fillna("-").tolist() == ["-", "abc", "-", "-"]


# pipes -----------------------------------------------------------------------------------------

def _fifo(tmp_path, text):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as fh:
            fh.write(text)

    threading.Thread(target=feed, daemon=True).start()
    return fifo


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_references_and_genome_lists_are_read_once_from_a_pipe(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.fa").write_text(">c\nACGTACGTACGT\n")
    (tmp_path / "g.gff").write_text("")
    refs = read_references(_fifo(tmp_path, "g.fa\tg.gff\tref\n"))
    assert [(r.fasta, r.gff) for r in refs] == [(tmp_path / "g.fa", tmp_path / "g.gff")]
    os.unlink(tmp_path / "pipe")
    assert genomes_of(_fifo(tmp_path, "iso1\tg.fa\n")) == [("iso1", tmp_path / "g.fa")]
    os.unlink(tmp_path / "pipe")
    with pytest.raises(ValueError, match="FASTA read from a pipe"):
        genomes_of(_fifo(tmp_path, ">c\nACGT\n"))


# control characters never reach the terminal ----------------------------------------------------

def test_printable_escapes_every_control_class():
    assert printable("a" + _NASTY + "\u202eb\tc\nd") == "a\\x1b[2J\\x00\\x0d\\x07\\x9b\\u202eb\tc\nd"
    assert printable("plain gene abcD") == "plain gene abcD"


def _assert_escaped(text):
    assert not _RAW_CONTROL.search(text), repr(text)
    assert "\\x1b" in text and "\\x9b" in text


def test_annotate_prints_gene_names_and_products_escaped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    sequence = _genome()
    quoted = "%1B[2J%07%0D%C2%9B"
    _reference(tmp_path, sequence, [f"chr1\t.\tCDS\t100\t400\t.\t+\t0\tID=c1{quoted};gene=ab{quoted};"
                                    f"product=spoof{quoted}"])
    pd.DataFrame({"feature": [sequence[150:181]], "pvalue": [0.001], "selected": [True]}).to_csv(
        "ranking.tsv", sep="\t", index=False)
    assert main(["annotate", "ranking.tsv", "--references", "refs.tsv", "-o", "hits.tsv"]) == 0
    out = capsys.readouterr().out
    _assert_escaped(out)
    assert "ab\\x1b[2J\\x07\\x0d\\x9b (c1\\x1b" in out and "spoof\\x1b[2J" in out
    assert "\tspoof\x1b[2J\x07\r\x9b\t" in (tmp_path / "hits.tsv").read_bytes().decode()  # kept as data


def test_errors_and_printed_results_quote_data_escaped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "refs.tsv").write_text(f"g{_NASTY}.fa\tx\ty\tz\n".replace("\x00", ""))
    (tmp_path / "ranking.tsv").write_text("feature\tselected\nACGTACGTAC\ttrue\n")
    assert main(["annotate", "ranking.tsv", "--references", "refs.tsv", "-o", "hits.tsv"]) == 1
    err = capsys.readouterr().err
    assert not _RAW_CONTROL.search(err) and "\\x1b" in err
    # a printed result (any command's) goes through the same escaping
    from genosift import cli

    class Loud:
        def __str__(self):
            return "feature x" + _NASTY

    monkeypatch.setattr(cli, "build_parser", lambda: _parser_printing(Loud()))
    assert main(["loud"]) == 0
    _assert_escaped(capsys.readouterr().out)


def _parser_printing(value):
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("loud").set_defaults(func=lambda args: print(value) or 0)
    return parser


# the bounds as options -------------------------------------------------------------------------

def _ranking(folder, kmers):
    pd.DataFrame({"feature": kmers, "pvalue": [0.001] * len(kmers), "selected": [True] * len(kmers)}).to_csv(
        folder / "ranking.tsv", sep="\t", index=False)
    return str(folder / "ranking.tsv")


def test_max_contig_option_refuses_a_longer_contig_naming_it_and_passes_a_larger_bound(tmp_path, monkeypatch,
                                                                                        capsys):
    sequence = _genome(3000)
    refs = _reference(tmp_path, sequence, ["chr1\t.\tCDS\t100\t400\t.\t+\t0\tID=c1;gene=abc"])
    ranking = _ranking(tmp_path, [sequence[150:181]])
    command = ["annotate", ranking, "--references", str(refs), "-o", str(tmp_path / "hits.tsv")]
    assert main(command + ["--max-contig", "2K"]) == 1
    err = capsys.readouterr().err
    assert "contig 'chr1' of the FASTA file" in err and "longer than 2,048 bases" in err
    assert "--max-contig 8192" in err and "max_contig=" not in err
    assert not (tmp_path / "hits.tsv").exists()
    assert main(command + ["--max-contig", "3000"]) == 0  # a bound of the contig's own length passes
    assert pd.read_csv(tmp_path / "hits.tsv", sep="\t")["gene"].tolist() == ["abc"]
    capsys.readouterr()
    # predict --assemblies: the same bound, the same message
    from genosift import workflow

    monkeypatch.setattr(workflow, "load_model", lambda path: {"features": [sequence[150:181]]})
    (tmp_path / "model.skops").write_bytes(b"")
    predict = ["predict", str(tmp_path / "model.skops"), str(tmp_path / "g.fa"), "-o", str(tmp_path / "p.tsv")]
    assert main(predict + ["--assemblies", "--max-contig", "1000"]) == 1
    err = capsys.readouterr().err
    assert "contig 'chr1'" in err and "longer than 1,000 bases" in err and "--max-contig 4000" in err
    assert main(predict + ["--max-contig", "1000"]) == 2  # without --assemblies it bounds nothing
    assert "--max-contig bounds the contigs of genome assemblies: pass --assemblies" in capsys.readouterr().err
    # a library caller is told the keyword
    with pytest.raises(ValueError, match=r"longer than 2,999 bases.*e\.g\. max_contig=11996\."):
        count_kmers([sequence[:12]], tmp_path / "g.fa", max_contig=2999)
    assert count_kmers([sequence[:12]], tmp_path / "g.fa", max_contig=3000)[1][0, 0] >= 1


def test_max_contig_option_reads_sizes_and_refuses_nonsense(capsys):
    from genosift.cli.parser import build_parser

    parse = build_parser().parse_args
    base = ["annotate", "r.tsv", "--references", "refs.tsv", "-o", "h.tsv"]
    assert parse(base).max_contig is None and parse(base).max_occurrences is None
    assert parse(base + ["--max-contig", "1G"]).max_contig == 2 ** 30
    assert parse(base + ["--max-contig", "268435456", "--max-occurrences", "0"]).max_occurrences == 0
    for bad in (["--max-contig", "0"], ["--max-contig", "lots"], ["--max-occurrences", "-1"]):
        with pytest.raises(SystemExit):
            parse(base + bad)
    assert "must be a number of bases such as" in capsys.readouterr().err
    with pytest.raises(ValueError, match="'max_contig' parameter of locate must be a whole number of bases >= 1"):
        locate(["ACGTACGTA"], [], max_contig=0)
    with pytest.raises(ValueError, match="'max_occurrences' parameter of annotate must be a whole number >= 0"):
        annotate(["ACGTACGTA"], [], max_occurrences=-1)


def test_max_occurrences_option_keeps_that_many_and_warns_naming_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.fa").write_text(">c1\n" + "A" * 200 + "\n")
    (tmp_path / "refs.tsv").write_text("a.fa\t\tref\n")
    ranking = _ranking(tmp_path, ["A" * 10])
    command = ["annotate", ranking, "--references", str(tmp_path / "refs.tsv"), "-o", str(tmp_path / "hits.tsv")]
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(command + ["--max-occurrences", "3"]) == 0
    err = capsys.readouterr().err
    assert "occur more than 3 times in the reference 'a' (the first occurs 191 times)" in err
    assert "raise --max-occurrences N (0 keeps every one)" in err and "max_occurrences=" not in err
    assert pd.read_csv(tmp_path / "hits.tsv", sep="\t")["start"].tolist() == [1, 2, 3]
    with pytest.warns(UserWarning, match=r"first 3 occurrences .* raise max_occurrences= \(0 keeps every one\)"):
        assert locate(["A" * 10], tmp_path / "refs.tsv", max_occurrences=3)["start"].tolist() == [1, 2, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(annotate(["A" * 10], tmp_path / "refs.tsv", max_occurrences=0).hits) == 191
        assert len(locate(["A" * 10], tmp_path / "refs.tsv", max_occurrences=191)) == 191
