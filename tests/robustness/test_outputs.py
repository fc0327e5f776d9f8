"""Outputs keep the user's data: exact numbers, no clobbering, whole results or none, --force
replaces only what genosift wrote, clear messages on a full disk."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genosift.cli import main
from genosift.core import files as _files
from genosift.report import outputs, write_table

ADVERSARIAL_FLOATS = np.array([5e-324, 1.7976931348623157e308, -1.7976931348623157e308, -0.0, 0.0, 1e6 + 1e-3,
                               0.1, 1 / 3, 2.0**53 + 2, 123456789.123456789, np.nan, np.inf, -np.inf])
ADVERSARIAL_INTS = np.array([2**53 + 1, -2**63, 2**63 - 1, 12345678901, 0, -1, 1, 2, 3, 4, 5, 6, 7], dtype=np.int64)


def _frame():
    return pd.DataFrame({"name": [f"=f{i}" for i in range(len(ADVERSARIAL_INTS))], "f": ADVERSARIAL_FLOATS,
                         "i": ADVERSARIAL_INTS,
                         "u": np.array([2**64 - 1] + [2**63] * 12, dtype=np.uint64)})


def _same_bits(a, b):
    return np.array_equal(np.asarray(a, dtype=np.float64).view(np.int64), np.asarray(b,
                                                                                     dtype=np.float64).view(np.int64))


@pytest.mark.parametrize("writer, suffix", [("write_frame", ".tsv"), ("write_frame", ".csv"),
                                            ("write_frame", ".parquet"), ("write_table", ".tsv")])
def test_every_writer_round_trips_every_float64_and_int64(tmp_path, writer, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    frame = _frame()
    path = tmp_path / f"t{suffix}"
    (outputs.write_frame if writer == "write_frame" else write_table)(frame, path)
    if suffix == ".parquet":
        back = pd.read_parquet(path)
    else:
        back = pd.read_csv(path, sep="," if suffix == ".csv" else "\t", float_precision="round_trip")
    assert back["name"].tolist() == frame["name"].tolist()
    assert _same_bits(back["f"], frame["f"])  # -0.0 and NaN bit patterns included
    assert back["i"].dtype == np.int64 and back["i"].tolist() == frame["i"].tolist()
    assert back["u"].dtype == np.uint64 and back["u"].tolist() == frame["u"].tolist()


def _table(path, values, sep):
    n = len(values[0])
    y = np.arange(n) % 2
    frame = pd.DataFrame({"id": [f"s{i}" for i in range(n)], "big": values[0], "near": values[1],
                          "noise": values[2], "label": y})
    frame.to_csv(path, sep=sep, index=False)
    return frame


@pytest.mark.parametrize("suffix", [".tsv", ".csv"])
def test_select_writes_the_values_it_read(tmp_path, suffix, capsys):
    """12345678901 stays 12345678901 and 1e6 + 1e-3 * class stays distinguishable."""
    n = 40
    y = np.arange(n) % 2
    rng = np.random.RandomState(0)
    values = (12345678901 + np.arange(n) * 7 + 1000 * y, 1e6 + 1e-3 * y + rng.randint(0, 3, n) * 1e-9,
              rng.normal(size=n))
    src = tmp_path / f"data{suffix}"
    frame = _table(src, values, "," if suffix == ".csv" else "\t")
    out = tmp_path / f"sel{suffix}"
    assert main(["select", str(src), "--target", "label", "--top", "3", "-o", str(out)]) == 0, capsys.readouterr()
    back = pd.read_csv(out, sep="," if suffix == ".csv" else "\t", float_precision="round_trip")
    assert back["big"].tolist() == frame["big"].tolist()
    assert _same_bits(back["near"], frame["near"]) and _same_bits(back["noise"], frame["noise"])
    # scoring the written file gives the statistic of the original, bit for bit
    import genosift as gs

    first = gs.score(frame[["big", "near", "noise"]].to_numpy(np.float64), y)
    again = gs.score(back[["big", "near", "noise"]].to_numpy(np.float64), back["label"].to_numpy())
    assert _same_bits(first.statistic, again.statistic)


def test_score_ranking_holds_the_exact_scores(tmp_path, capsys):
    import genosift as gs

    rng = np.random.RandomState(1)
    n = 30
    frame = pd.DataFrame(rng.normal(size=(n, 5)) * 1e-7 + 1e3, columns=[f"g{j}" for j in range(5)])
    frame.insert(0, "id", [f"s{i}" for i in range(n)])
    frame["label"] = np.arange(n) % 2
    frame.to_csv(tmp_path / "d.csv", index=False)
    assert main(["score", str(tmp_path / "d.csv"), "--target", "label", "--method", "welch",
                 "-o", str(tmp_path / "r.csv")]) == 0
    back = pd.read_csv(tmp_path / "r.csv", float_precision="round_trip").set_index("feature")
    data = pd.read_csv(tmp_path / "d.csv", float_precision="round_trip")
    ref = gs.score(data[[f"g{j}" for j in range(5)]], data["label"].to_numpy(), method="welch")
    for column, values in (("score", ref.scores), ("pvalue", ref.pvalues), ("statistic", ref.statistic)):
        assert _same_bits(back.loc[[f"g{j}" for j in range(5)], column], values), column


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".parquet"])
@pytest.mark.parametrize("method", ["logistic", "welch", "chi2"])
def test_score_writes_its_ranking_in_pieces_as_one_table(tmp_path, monkeypatch, capsys, suffix, method):
    """The ranking is built and written a few rows at a time: the file is the whole table's, byte
    for byte (text), or the same frame (Parquet), whatever the size of the pieces."""
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    rng = np.random.RandomState(2)
    n, p = 40, 23
    frame = pd.DataFrame((rng.random_sample((n, p)) < 0.4) * rng.randint(1, 4, (n, p)),
                         columns=[f"g,{j}" if j % 5 == 0 else f"g{j}" for j in range(p)])
    frame.insert(0, "id", [f"s{i}" for i in range(n)])
    frame["label"] = np.where(np.arange(n) % 3 == 0, "R", "S")
    frame.to_csv(tmp_path / "d.tsv", sep="\t", index=False)
    written = []
    for rows in (outputs.RANKING_ROWS, 4, 1):
        monkeypatch.setattr(outputs, "RANKING_ROWS", rows)
        out = tmp_path / f"r{rows}{suffix}"
        assert main(["score", str(tmp_path / "d.tsv"), "--target", "label", "--method", method, "--top", "5",
                     "-o", str(out)]) == 0
        written.append(out)
    capsys.readouterr()
    if suffix == ".parquet":
        frames = [pd.read_parquet(out) for out in written]
        for other in frames[1:]:
            pd.testing.assert_frame_equal(other, frames[0])
        assert len(frames[0]) == p and frames[0]["selected"].sum() == 5
    else:
        texts = [out.read_bytes() for out in written]
        assert texts[1] == texts[0] and texts[2] == texts[0]
        assert texts[0].count(b"\n") == p + 1


# --------------------------------------------------------------------------------------------
# no clobbering, whole or nothing


def test_a_file_made_during_the_run_is_kept(tmp_path):
    out = tmp_path / "o.tsv"
    with pytest.raises(FileExistsError, match="created by another program while this run was writing it"):
        with _files.staged(out, force=False) as tmp:
            tmp.write_text("ours")
            out.write_text("theirs")  # another run, or the user, took the name meanwhile
    assert out.read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.tsv"]


def test_two_runs_with_one_output_second_fails(tmp_path):
    out = tmp_path / "o.tsv"
    second = _files.staged(out, force=False)
    second.__enter__().write_text("second")  # a run still writing...
    with _files.staged(out, force=False) as first:  # ...while another one finishes first
        first.write_text("first")
    with pytest.raises(FileExistsError, match="created by another program"):
        second.__exit__(None, None, None)
    assert out.read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.tsv"]


def test_result_and_sidecar_appear_together(tmp_path):
    out, side = tmp_path / "r.tsv", tmp_path / "r.tsv.json"
    with pytest.raises(FileExistsError):
        with _files.staged(out, side, force=False) as (t1, t2):
            t1.write_text("table")
            t2.write_text("{}")
            side.write_text("someone else's")
    assert not out.exists() and side.read_text() == "someone else's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.tsv.json"]


def test_a_folder_made_during_the_run_is_kept(tmp_path):
    out = tmp_path / "results"
    with pytest.raises(FileExistsError):
        with _files.staged(out, force=False, folder=True) as tmp:
            (tmp / "a.tsv").write_text("x")
            out.mkdir()  # an empty folder: a plain rename would silently replace it
            (out / "mine.txt").write_text("keep")
    assert (out / "mine.txt").read_text() == "keep" and not (out / "a.tsv").exists()


def test_a_signal_whose_exception_was_lost_publishes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(_files, "interrupted", [2])
    with pytest.raises(KeyboardInterrupt):
        with _files.staged(tmp_path / "o.tsv", force=True) as tmp:
            tmp.write_text("x")
    assert list(tmp_path.iterdir()) == []


def test_main_exits_130_when_the_signal_was_swallowed(monkeypatch, capsys):
    import genosift.cli as cli

    def swallowed(args):  # a KeyboardInterrupt lost in a finalizer: the handler ran, work went on
        cli.interrupted.append(2)
        return 0

    parser = cli.build_parser()
    args = parser.parse_args(["methods"])
    args.func = swallowed
    monkeypatch.setattr(cli, "build_parser", lambda: type("P", (), {"parse_args": lambda self, a: args})())
    assert cli.main(["methods"]) == 130
    assert "interrupted (SIGINT)" in capsys.readouterr().err
    assert cli.interrupted == []


def test_stale_parts_of_dead_runs_are_removed(tmp_path):
    out = tmp_path / "o.tsv"
    host = _files._host()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".o.tsv.genosift-{host}-{dead.pid}-0000.part"
    stale.write_bytes(b"x" * 1000)
    live = tmp_path / f".o.tsv.genosift-{host}-{os.getppid()}-0000.part"  # a live process: kept
    live.write_bytes(b"y")
    other = tmp_path / f".other.tsv.genosift-{host}-{dead.pid}-0000.part"  # another output: kept
    other.write_bytes(b"z")
    with pytest.warns(UserWarning, match=r"Removed 1 partial output\(s\) of .*o\.tsv"):
        _files.write_text(out, "new", force=False)
    assert out.read_text() == "new" and not stale.exists() and live.exists() and other.exists()


# --------------------------------------------------------------------------------------------
# --force on results folders


@pytest.fixture
def evaluable(tmp_path):
    rng = np.random.RandomState(0)
    n = 30
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 6)) + y[:, None] * np.array([2, 1, 0, 0, 0, 0])
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(6)])
    frame.insert(0, "id", [f"s{i}" for i in range(n)])
    frame["label"] = y
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    return path


def _evaluate(data, out, *extra):
    return main(["evaluate", str(data), "--target", "label", "--k", "1,2", "--cv", "3", "-o", str(out), *extra])


def _tree(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_force_replaces_a_results_folder_genosift_wrote(evaluable, tmp_path, capsys):
    out = tmp_path / "res"
    assert _evaluate(evaluable, out) == 0
    marker = json.loads((out / _files.MARKER).read_text())
    assert set(marker["files"]) == {p.name for p in out.iterdir()} - {_files.MARKER}
    assert _evaluate(evaluable, out) == 1 and "--force" in capsys.readouterr().err
    (out / "run.json").write_text("old")
    assert _evaluate(evaluable, out, "--force") == 0
    assert (out / "run.json").read_text() != "old"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("case", ["input inside", "unrelated subfolder", "file genosift did not write",
                                  "no marker", "the current folder"])
def test_force_never_deletes_what_genosift_did_not_write(evaluable, tmp_path, capsys, case, monkeypatch):
    out = tmp_path / "res"
    if case == "no marker":
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    elif case == "the current folder":
        out = tmp_path
        monkeypatch.chdir(tmp_path)
    else:
        assert _evaluate(evaluable, out) == 0
        if case == "input inside":
            moved = out / "scores.tsv"  # a user's own data under a name genosift also writes
            moved.write_text(evaluable.read_text())
            evaluable = moved
        elif case == "unrelated subfolder":
            (out / "raw").mkdir()
            (out / "raw" / "genome.fa").write_text(">x\nACGT\n")
        else:
            (out / "notes.txt").write_text("mine")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    code = _evaluate(evaluable, "." if case == "the current folder" else out, "--force")
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.count("\n") == 1 and "--force" in err or "inside the output folder" in err, err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_current_folder_is_refused_before_any_work(evaluable, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    import genosift.workflow.evaluation

    monkeypatch.setattr(genosift.workflow.evaluation, "evaluate_asked", lambda *a, **k: pytest.fail("the work ran"))
    assert _evaluate(evaluable, ".") == 1
    assert "'.' already exists" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# outputs that cannot be read back, outputs that are inputs


def test_convert_output_must_be_a_store_name(tmp_path, capsys):
    src = tmp_path / "c.kmers"
    src.write_text("ACGT | a:1 b:2\nTTTT | a:3\n")
    assert main(["convert", str(src), "-o", str(tmp_path / "out.tsv")]) == 2
    err = capsys.readouterr().err
    assert "suffix .gs.h5ad" in err and "-o out.gs.h5ad" in err
    assert main(["convert", str(src), "-o", str(src), "--force"]) == 2
    assert src.read_text().startswith("ACGT")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.kmers"]


@pytest.mark.parametrize("command", ["score", "select", "convert"])
def test_an_input_is_never_an_output(tmp_path, capsys, command):
    src = tmp_path / ("d.gs.h5ad" if command == "convert" else "d.tsv")
    table = pd.DataFrame({"id": ["a", "b", "c", "d"], "g": [1.0, 2, 3, 4], "label": [0, 1, 0, 1]})
    if command == "convert":
        import genosift as gs

        gs.io.write_store(gs.io.Dataset(table[["g"]].to_numpy(), table["id"].to_numpy(), np.array(["g"])), src)
    else:
        table.to_csv(src, sep="\t", index=False)
    before = src.read_bytes()
    argv = {"score": ["score", str(src), "--target", "label"], "select": ["select", str(src), "--target", "label",
                                                                          "--top", "1"],
            "convert": ["convert", str(src)]}[command]
    assert main([*argv, "-o", str(src), "--force"]) == 1
    assert "is the input" in capsys.readouterr().err
    assert src.read_bytes() == before


# --------------------------------------------------------------------------------------------
# a full disk


@pytest.fixture
def full_disk(tmp_path):
    """A 256 KiB tmpfs (root only, Linux)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root (mount -t tmpfs); the full-disk paths are not exercised")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_full_disk_names_the_path_and_leaves_nothing(tmp_path, full_disk, capsys):
    n, p = 40, 2000
    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"g{j}" for j in range(p)])
    frame.insert(0, "id", [f"s{i}" for i in range(n)])
    frame["label"] = np.arange(n) % 2
    frame.to_csv(tmp_path / "d.csv", index=False)
    for argv in (["select", str(tmp_path / "d.csv"), "--target", "label", "--top", "2000"],
                 ["score", str(tmp_path / "d.csv"), "--target", "label"]):
        out = full_disk / "o.tsv"
        filler = full_disk / "filler"
        filler.write_bytes(b"\0" * (200 << 10))  # leaves less than the output needs
        code = main([*argv, "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 1, err
        assert f"Cannot write {str(out)!r}: the device holding it is full" in err and "[Errno" not in err, err
        assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]  # no table, no sidecar, no part
        filler.unlink()


def test_full_disk_for_evaluate_and_demo(tmp_path, full_disk, capsys, evaluable):
    (full_disk / "filler").write_bytes(b"\0" * (250 << 10))
    assert _evaluate(evaluable, full_disk / "res") == 1
    err = capsys.readouterr().err
    assert "the device holding it is full" in err and "[Errno" not in err, err
    assert main(["demo", "-o", str(full_disk / "demo")]) == 1
    err = capsys.readouterr().err
    assert "the device holding it is full" in err and "[Errno" not in err, err
    assert sorted(p.name for p in full_disk.iterdir() if p.name != "demo") == ["filler"]


def test_write_error_messages():
    for code, words in ((errno.ENOSPC, "is full"), (errno.EDQUOT, "quota"), (errno.EACCES, "permission denied"),
                        (errno.EROFS, "read-only")):
        err = _files._named(OSError(code, os.strerror(code)), Path("/x/o.tsv"))
        assert str(err).startswith("Cannot write '/x/o.tsv': ") and words in str(err) and "[Errno" not in str(err)
        assert err.errno == code


@pytest.mark.parametrize("size", [0, 1, 1 << 18, (1 << 18) + 1, 3_000_001])
def test_file_digest_is_sha256_across_its_buffer(tmp_path, size):
    import hashlib

    from genosift.report.outputs import file_digest

    path = tmp_path / "input.bin"
    path.write_bytes(np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes())
    assert file_digest(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_meanwhile_gives_the_value_or_the_error():
    from genosift.report.outputs import Meanwhile

    assert Meanwhile(lambda a, b: a + b, 2, 3).result() == 5
    failing = Meanwhile(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result()
