"""No command loses the user's data: --force replaces or removes only what genosift wrote, no
output is one of the command's inputs (files named inside list files included, through links)
or another of its outputs, and a command writes all of its outputs or none."""
from __future__ import annotations

import errno
import json
import os

import numpy as np
import pandas as pd
import pytest

from genosift.cli import main
from genosift.core import files

KMER = "ACGTTGCAAGGCTTAACCGGTATCGATCGGA"  # 31 bases, found once in the reference


def _tree(folder):
    """Every file under ``folder`` with its bytes (and every folder): what a refused run must keep."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A small data table, a ranking with p-values and its sidecar, a reference (FASTA and GFF3)
    listed in a references file, a hits table, a genome list and a list of k-mer dumps."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.RandomState(0)
    n = 12
    y = np.arange(n) % 2
    data = pd.DataFrame(rng.binomial(1, 0.5, size=(n, 4)).astype(float), columns=[f"g{j}" for j in range(4)])
    data.insert(0, "id", [f"s{i}" for i in range(n)])
    data["label"] = y
    data.to_csv("d.tsv", sep="\t", index=False)
    pd.DataFrame({"id": ["a", "b", "c", "d"], "label": [0, 1, 0, 1]}).to_csv("meta.tsv", sep="\t", index=False)
    pd.DataFrame({"feature": [KMER, "A" * 31], "pvalue": [1e-4, 0.5], "rank": [1, 2],
                  "selected": [True, False]}).to_csv("ranking.tsv", sep="\t", index=False)
    (tmp_path / "ranking.tsv.json").write_text('{"n_patterns": 2, "selection": {}}')
    (tmp_path / "ref.fa").write_text(">chr\n" + "T" * 40 + KMER + "G" * 40 + "\n")
    (tmp_path / "ref.gff3").write_text("##gff-version 3\nchr\tx\tgene\t30\t90\t.\t+\t.\tID=g1;Name=geneA\n")
    (tmp_path / "refs.tsv").write_text("ref.fa\tref.gff3\tref\n")
    pd.DataFrame({"feature": [KMER], "reference": ["ref"], "contig": ["chr"], "start": [41], "end": [71],
                  "strand": ["+"], "pvalue": [1e-4], "gene": ["geneA"],
                  "gene_id": ["g1"]}).to_csv("hits.tsv", sep="\t", index=False)
    (tmp_path / "genomes.txt").write_text("a\tref.fa\n")
    for s in "abcd":
        (tmp_path / f"{s}.txt").write_text(f"{KMER}\t{ord(s)}\nAAAAA\t1\n")
    (tmp_path / "dumps.list").write_text("".join(f"{s}\t{s}.txt\n" for s in "abcd"))
    return tmp_path


# --------------------------------------------------------------------------------------------
# one output is an input or another output: refused before anything is written

SCORE = ["score", "d.tsv", "--target", "label", "--method", "regression"]
PAIRS = ["pairs", "d.tsv", "--target", "label", "--top", "2"]
CLASHES = {
    "annotate -o = --genes": (["annotate", "ranking.tsv", "--references", "refs.tsv", "-o", "h.tsv", "--genes",
                               "h.tsv"], ["--output", "--genes"]),
    "annotate -o = a hard link of a listed GFF3": (["annotate", "ranking.tsv", "--references", "refs.tsv", "-o",
                                                    "gff.tsv", "--force"], ["--output", "--references"]),
    "annotate -o = a link to a listed FASTA": (["annotate", "ranking.tsv", "--references", "refs.tsv", "-o",
                                                "link.tsv", "--force"], ["--output", "--references"]),
    "annotate --genes = a hard link of the ranking": (["annotate", "ranking.tsv", "--references", "refs.tsv", "-o",
                                                       "h.tsv", "--genes", "hard.tsv", "--force"],
                                                      ["--genes", "RANKING"]),
    "score --structure-out = -o": ([*SCORE, "--structure", "1", "--structure-out", "r.tsv", "-o", "r.tsv",
                                    "--force"], ["--structure-out", "--output"]),
    "score of a dump list, -o = a listed dump": (["score", "dumps.list", "--meta", "meta.tsv", "--id", "id",
                                                  "--target", "label", "-o", "a.txt", "--force"],
                                                 ["--output", "DATA"]),
    "select --structure-out = -o": (["select", "d.tsv", "--target", "label", "--top", "1", "--method",
                                     "regression", "--structure", "1",
                                     "--structure-out", "r.tsv", "-o", "r.tsv"], ["--structure-out", "--output"]),
    "enet --structure-out = -o": (["enet", "d.tsv", "--target", "label", "--structure", "1", "--structure-out",
                                   "e.tsv", "-o", "e.tsv"], ["--structure-out", "--output"]),
    "knockoffs --structure-out = -o": (["knockoffs", "d.tsv", "--target", "label", "--structure", "1",
                                        "--structure-out", "k.tsv", "-o", "k.tsv"], ["--structure-out", "--output"]),
    "knockoffs -o = DATA": (["knockoffs", "d.tsv", "--target", "label", "-o", "d.tsv", "--force"],
                            ["--output", "DATA"]),
    "pairs --triples-output = -o": ([*PAIRS, "--triples", "1", "--triples-output", "p.tsv", "-o", "p.tsv"],
                                    ["--triples-output", "--output"]),
    "evaluate --structure-out inside -o": (["evaluate", "d.tsv", "--target", "label", "--k", "1", "--cv", "2",
                                            "--structure", "1", "--structure-out", "res/s.tsv", "-o", "res"],
                                           ["--structure-out", "--output"]),
    "plot --qq = --manhattan": (["plot", "ranking.tsv", "--hits", "hits.tsv", "--qq", "f.png", "--manhattan",
                                 "f.png"], ["--qq", "--manhattan"]),
    "plot --phandango = --hits": (["plot", "ranking.tsv", "--hits", "hits.tsv", "--phandango", "hits.tsv",
                                   "--force"], ["--phandango", "--hits"]),
    "plot --phandango = the ranking's sidecar": (["plot", "ranking.tsv", "--hits", "hits.tsv", "--phandango",
                                                  "ranking.tsv.json", "--force"], ["--phandango", "RANKING"]),
    "predict --assemblies, -o = a listed FASTA": (["predict", "model.skops", "genomes.txt", "--assemblies", "-o",
                                                   "link.tsv", "--force"], ["--output", "DATA"]),
    "convert of a dump list, -o = a listed dump": (["convert", "dumps.list", "-o", "x.gs.h5ad", "--force"],
                                                   ["-o", "INPUTS"]),
}


@pytest.mark.parametrize("case", list(CLASHES))
def test_an_output_that_is_an_input_or_another_output_is_refused_and_nothing_changes(work, capsys, case):
    argv, named = CLASHES[case]
    os.symlink("ref.fa", "link.tsv")
    os.link("ranking.tsv", "hard.tsv")
    os.link("ref.gff3", "gff.tsv")
    if case.startswith("convert"):  # a listed dump under the store's name
        os.replace("a.txt", "x.gs.h5ad")
        (work / "dumps.list").write_text("a\tx.gs.h5ad\n" + "".join(f"{s}\t{s}.txt\n" for s in "bcd"))
    before = _tree(work)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "genosift: error:" in err and "Traceback" not in err
    for option in named:
        assert option in err, err
    assert "another path" in err
    assert _tree(work) == before  # no file created, none changed


def test_a_sidecar_or_a_folder_output_shares_no_path_with_another_output():
    with pytest.raises(ValueError, match="both 'r.tsv.json'"):
        files.check_apart([("output", "r.tsv"), ("output", "r.tsv.json"), ("phandango", "r.tsv.json")], owner="plot")
    with pytest.raises(ValueError, match="one inside the other"):
        files.check_apart([("output", "res"), ("structure_out", "res/deeper/s.tsv")], owner="evaluate",
                          folders=("output",))
    files.check_apart([("output", "res"), ("structure_out", "resid.tsv")], owner="evaluate", folders=("output",))


# --------------------------------------------------------------------------------------------
# --force replaces only what genosift wrote


def test_the_stamp_says_what_genosift_wrote_and_is_lost_when_the_file_changes(tmp_path):
    path = tmp_path / "t.tsv"
    files.write_text(path, "a\n")
    if not files.written_by_genosift(path):
        pytest.skip("this file system keeps no extended attributes: no file is taken for genosift's")
    path.write_text("mine\n")  # the user's edit
    assert not files.written_by_genosift(path)
    files.write_text(tmp_path / "u.tsv", "b\n")
    os.symlink(tmp_path / "u.tsv", tmp_path / "link.tsv")
    assert files.written_by_genosift(tmp_path / "u.tsv") and not files.written_by_genosift(tmp_path / "link.tsv")
    (tmp_path / "own.tsv").write_text("own\n")
    assert not files.written_by_genosift(tmp_path / "own.tsv")
    with pytest.raises(FileExistsError, match="genosift did not write it"):
        files.write_text(tmp_path / "own.tsv", "new\n", force=True)
    assert (tmp_path / "own.tsv").read_text() == "own\n"
    assert not files.remove_written(tmp_path / "own.tsv") and (tmp_path / "own.tsv").exists()


FORCED = {
    "score": (SCORE + ["-o", "out.tsv", "--force"], "out.tsv"),
    "score (its sidecar)": (SCORE + ["-o", "out.tsv", "--force"], "out.tsv.json"),
    "patterns": (["patterns", "d.tsv", "-o", "out.tsv", "--force"], "out.tsv"),
    "annotate": (["annotate", "ranking.tsv", "--references", "refs.tsv", "-o", "out.tsv", "--force"], "out.tsv"),
    "plot --phandango": (["plot", "ranking.tsv", "--hits", "hits.tsv", "--phandango", "out.plot", "--force"],
                         "out.plot"),
    "convert": (["convert", "d.tsv", "-o", "out.gs.h5ad", "--force"], "out.gs.h5ad"),
}


@pytest.mark.parametrize("case", list(FORCED))
def test_force_refuses_a_file_genosift_did_not_write_and_replaces_one_it_did(work, capsys, case):
    argv, taken = FORCED[case]
    if case.startswith("plot"):
        pytest.importorskip("matplotlib")
    (work / taken).write_bytes(b"the user's own file\n")
    before = _tree(work)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "genosift did not write it" in err and "remove that file yourself" in err, err
    assert _tree(work) == before
    (work / taken).unlink()
    assert main(argv) == 0  # written by genosift: replaced by the same command with --force
    capsys.readouterr()
    if not files.written_by_genosift(work / taken):
        pytest.skip("this file system keeps no extended attributes")
    assert main(argv) == 0


def _results(folder):
    """A results folder as ``evaluate`` writes one, with only the tables a report needs."""
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"method": "fisher", "model": "logistic", "best_k": 2,
                                                 "metric": "accuracy", "classes": ["a", "b"], "ks": [1, 2]}))
    files.write_table(pd.DataFrame({"k": [1, 2], "accuracy_mean": [0.8, 0.9], "accuracy_std": [0.1, 0.05]}),
                      folder / "curve.tsv")
    scores = pd.DataFrame({"feature": ["g1", "g2", "g3"], "score": [3.0, 2.0, 0.5], "rank": [1, 2, 3],
                           "selected": [True, True, False]})
    files.write_table(scores, folder / "scores.tsv")
    files.write_table(scores.head(2).drop(columns="selected"), folder / "selected.tsv")
    return folder


def test_report_force_keeps_the_users_own_figures_and_sweeps_only_its_own(tmp_path, capsys, monkeypatch):
    from genosift.report import make

    drawn = [make._Figure("cv_curve", "a curve", "its caption", b"\x89PNG drawn")]  # drawing is tested elsewhere
    monkeypatch.setattr(make, "_figures", lambda results, hits=None, association=None: (drawn, []))
    results, figures = _results(tmp_path / "res"), tmp_path / "figs"
    figures.mkdir()
    (figures / "manhattan.png").write_bytes(b"my own plot")
    files.write_bytes(figures / "qq.png", b"a figure of an earlier report")  # genosift's, not drawn now
    argv = ["report", str(results), "-o", str(tmp_path / "r.html"), "--png-dir", str(figures), "--force"]
    assert main(argv) == 0
    assert (figures / "cv_curve.png").read_bytes() == b"\x89PNG drawn"
    assert (figures / "manhattan.png").read_bytes() == b"my own plot"
    if files.written_by_genosift(figures / "cv_curve.png"):  # extended attributes kept here
        assert not (figures / "qq.png").exists()
    (figures / "cv_curve.png").write_bytes(b"mine now")
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "genosift did not write it" in err and "--png-dir" in err
    assert (figures / "cv_curve.png").read_bytes() == b"mine now"


def test_report_html_named_as_a_results_table_or_a_figure_is_refused(tmp_path, capsys):
    results = _results(tmp_path / "res")
    before = _tree(tmp_path)
    assert main(["report", str(results), "-o", str(results / "scores.tsv"), "--force"]) == 1
    assert "RESULTS" in capsys.readouterr().err
    assert main(["report", str(results), "-o", str(tmp_path / "qq.png"), "--png-dir", str(tmp_path)]) == 1
    assert "--png-dir" in capsys.readouterr().err
    assert _tree(tmp_path) == before


# --------------------------------------------------------------------------------------------
# all outputs or none


def test_plot_writes_no_figure_when_a_later_one_fails(work, capsys):
    pytest.importorskip("matplotlib")
    pd.DataFrame({"feature": [KMER], "pvalue": [0.1]}).to_csv("bad_hits.tsv", sep="\t", index=False)
    before = _tree(work)
    assert main(["plot", "ranking.tsv", "--qq", "a.png", "--manhattan", "b.png", "--hits", "bad_hits.tsv"]) == 1
    assert "reference" in capsys.readouterr().err
    assert _tree(work) == before


def test_outputs_published_together_or_not_at_all(tmp_path):
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    with pytest.raises(RuntimeError):
        with files.together(a, b):
            files.write_text(a, "a\n")
            raise RuntimeError("the second output cannot be made")
    assert list(tmp_path.iterdir()) == []
    b.write_text("taken\n")  # the second cannot be published: the first is removed again
    with pytest.raises(FileExistsError):
        with files.together(a, b):
            files.write_text(a, "a\n", force=False)
            files.write_text(b, "b\n", force=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.tsv"] and b.read_text() == "taken\n"
    with files.together(a, b):
        files.write_text(a, "a\n")
        other = tmp_path / "c.tsv"
        files.write_text(other, "c\n")  # not declared: published at once
        assert other.exists() and not a.exists()
    assert a.read_text() == "a\n"


# --------------------------------------------------------------------------------------------
# file systems without extended attributes: the folder's ledger stamps what genosift wrote


@pytest.fixture(params=["unsupported", "not permitted", "missing"])
def no_xattr(request, monkeypatch):
    """A file system that keeps no extended attributes, or a Python without them (as on macOS)."""
    if request.param == "missing":
        monkeypatch.delattr(os, "setxattr", raising=False)
        monkeypatch.delattr(os, "getxattr", raising=False)
        return
    code = errno.ENOTSUP if request.param == "unsupported" else errno.EPERM

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "setxattr", refuse)
    monkeypatch.setattr(os, "getxattr", refuse)


def _ledger(folder):
    return json.loads((folder / files.LEDGER).read_text())["files"]


def test_without_extended_attributes_force_replaces_only_what_genosift_wrote(work, capsys, no_xattr):
    argv = SCORE + ["-o", "out.tsv", "--force"]
    assert main(argv) == 0
    assert sorted(_ledger(work)) == ["out.tsv", "out.tsv.json"]
    first = os.stat("out.tsv").st_ino
    assert main(argv) == 0  # the rerun replaces genosift's own outputs
    assert os.stat("out.tsv").st_ino != first and files.written_by_genosift(work / "out.tsv")
    assert _ledger(work)["out.tsv"][2] == os.stat("out.tsv").st_ino
    (work / "own.tsv").write_bytes(b"the user's own file\n")
    with open("out.tsv", "ab") as fh:  # genosift's output, edited by the user
        fh.write(b"my note\n")
    for name in ("own.tsv", "out.tsv"):
        before = _tree(work)
        assert main(SCORE + ["-o", name, "--force"]) == 1
        err = capsys.readouterr().err
        assert "genosift did not write it" in err and "Traceback" not in err, err
        assert _tree(work) == before
    assert files.LEDGER not in (work / "out.tsv.json").read_text()


def test_the_ledger_is_bounded_and_keeps_the_newest(tmp_path, monkeypatch, no_xattr):
    monkeypatch.setattr(files, "LEDGER_ENTRIES", 3)
    for i in range(5):
        files.write_text(tmp_path / f"f{i}.tsv", f"{i}\n")
    (tmp_path / "f4.tsv").unlink()  # gone: dropped on the next write
    files.write_text(tmp_path / "f5.tsv", "5\n")
    assert list(_ledger(tmp_path)) == ["f5.tsv", "f3.tsv", "f2.tsv"]
    assert [files.written_by_genosift(tmp_path / f"f{i}.tsv") for i in (0, 1, 2, 3, 5)] == [0, 0, 1, 1, 1]
    with pytest.raises(FileExistsError, match="genosift did not write it"):  # forgotten: never taken for its own
        files.write_text(tmp_path / "f0.tsv", "new\n", force=True)
    monkeypatch.setattr(files, "LEDGER_BYTES", len((tmp_path / files.LEDGER).read_bytes()) - 1)
    assert not files.written_by_genosift(tmp_path / "f5.tsv")  # too large to read: nothing is genosift's


GARBAGE = {
    "not JSON": b"\xff\xfe{ not json",
    "nested deeply": b"[" * 200_000,
    "a number": b"42",
    "not genosift's": None,  # the right stamp, without the mark of a ledger genosift wrote
    "a huge integer": None,
}


@pytest.mark.parametrize("case", list(GARBAGE))
def test_a_malformed_ledger_is_ignored_and_kept(tmp_path, no_xattr, case):
    path = tmp_path / "a.tsv"
    files.write_text(path, "a\n")
    stamp = _ledger(tmp_path)["a.tsv"]
    data = GARBAGE[case]
    if case == "not genosift's":
        data = json.dumps({"files": {"a.tsv": stamp}}).encode()
    elif case == "a huge integer":
        data = b'{"written_by": "genosift", "files": {"a.tsv": [' + b"9" * 100_000 + b", 1, 1, 1]}}"
    (tmp_path / files.LEDGER).write_bytes(data)
    assert not files.written_by_genosift(path)
    with pytest.raises(FileExistsError, match="genosift did not write it"):
        files.write_text(path, "b\n", force=True)
    files.write_text(tmp_path / "b.tsv", "b\n")  # written, but not recorded: that file is not a ledger it wrote
    assert (tmp_path / files.LEDGER).read_bytes() == data and path.read_text() == "a\n"
    assert not files.written_by_genosift(tmp_path / "b.tsv")


def test_malformed_entries_of_a_ledger_match_no_file_and_are_dropped(tmp_path, no_xattr):
    path = tmp_path / "a.tsv"
    files.write_text(path, "a\n")
    stamp = _ledger(tmp_path)["a.tsv"]
    (tmp_path / files.LEDGER).write_text(json.dumps({"written_by": "genosift", "files": {
        "a.tsv": [*stamp[:3], str(stamp[3])], "../a.tsv": stamp, "x.tsv": "big", files.LEDGER: stamp}}))
    assert not files.written_by_genosift(path)
    files.write_text(tmp_path / "b.tsv", "b\n")
    assert list(_ledger(tmp_path)) == ["b.tsv"] and files.written_by_genosift(tmp_path / "b.tsv")


def test_a_linked_ledger_is_ignored(tmp_path, no_xattr):
    files.write_text(tmp_path / "a.tsv", "a\n")
    other = tmp_path / "other"
    other.mkdir()
    os.replace(tmp_path / files.LEDGER, other / files.LEDGER)
    os.symlink(other / files.LEDGER, tmp_path / files.LEDGER)
    assert not files.written_by_genosift(tmp_path / "a.tsv")


def test_the_ledger_is_never_an_output_of_a_results_folder(tmp_path, no_xattr):
    folder = _results(tmp_path / "res")
    (folder / "run.json").unlink()
    files.write_json({"method": "fisher"}, folder / "run.json")
    assert (folder / files.LEDGER).is_file() and files.written_by_genosift(folder / "run.json")
    files.write_marker(folder, [p.name for p in folder.iterdir()])
    listed = json.loads((folder / files.MARKER).read_text())["files"]
    assert listed == ["curve.tsv", "run.json", "scores.tsv", "selected.tsv"]
    files.check_replaceable(folder)  # its own ledger is no stranger's file


def test_no_ledger_where_extended_attributes_are_kept(tmp_path):
    files.write_text(tmp_path / "a.tsv", "a\n")
    if not files.written_by_genosift(tmp_path / "a.tsv"):
        pytest.skip("this file system keeps no extended attributes")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tsv"]


def test_a_copy_keeping_the_stamp_or_a_same_size_edit_is_not_genosifts(tmp_path):
    path, copy = tmp_path / "a.tsv", tmp_path / "b.tsv"
    files.write_text(path, "abc\n")
    if not files.written_by_genosift(path):
        pytest.skip("this file system keeps no extended attributes")
    st = os.stat(path)
    copy.write_text("xyz\n")  # cp --preserve=xattr,timestamps of the file, edited
    os.setxattr(copy, files.STAMP, os.getxattr(path, files.STAMP))
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not files.written_by_genosift(copy)
    with open(path, "r+b") as fh:  # edited in place, same size, its time set back within 1 ns
        fh.write(b"xyz\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    if os.stat(path).st_mtime_ns != st.st_mtime_ns + 1:
        pytest.skip("this file system keeps coarser modification times")
    assert not files.written_by_genosift(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # only the very same stamp is genosift's
    assert files.written_by_genosift(path)
