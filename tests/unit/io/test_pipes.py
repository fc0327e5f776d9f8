"""Inputs given through a pipe (a FIFO, ``<(cat file)``, ``/dev/stdin``) read as their files do.

Readers look at a file's first bytes (its format, its separator, its header) before reading it;
a pipe can be read once only, so its bytes are copied once to a temporary file that every later
open reads. Each kind of text input a command reads is given once as a file and once through a
real FIFO, and the results must be the same.
"""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from genosift.cli import main
from genosift.io import compression

N = 12


@pytest.fixture
def pipe(tmp_path):
    """``pipe(data)``: the path of a new FIFO whose first reader gets ``data`` (bytes) and every
    later reader nothing, as a pipe read a second time gives (never a reader left waiting)."""
    made = []

    def make(data):
        path = tmp_path / f"fifo{len(made)}"
        os.mkfifo(path)
        stop = threading.Event()

        def write():
            first = True
            while not stop.is_set():
                with open(path, "wb") as fh:  # waits for the next reader
                    if first and not stop.is_set():
                        fh.write(data)
                first = False

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        made.append((path, stop, thread))
        return str(path)

    yield make
    for path, stop, thread in made:  # release the writer waiting for a reader
        stop.set()
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        thread.join(1)
        os.close(fd)


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(5)
    ids = [f"s{i}" for i in range(N)]
    y = np.array([0, 1] * (N // 2))
    X = rng.integers(0, 2, (N, 6))
    X[:, 0] = y
    rows = ["sample\t" + "\t".join(f"g{j}" for j in range(6))]
    rows += [f"{s}\t" + "\t".join(str(v) for v in row) for s, row in zip(ids, X)]
    files = {"tsv": "\n".join(rows) + "\n"}
    files["csv"] = files["tsv"].replace("\t", ",")
    present = X.astype(bool) | (np.arange(6) == 1)  # every sample carries one k-mer at least
    files["kmers"] = "".join(
        f"{'ACGT'[j % 4] * 3}{'ACGT'[j // 4]}A | "
        + " ".join(f"{s}:{1 + X[i, j]}" for i, s in enumerate(ids) if present[i, j]) + "\n" for j in range(6))
    files["meta"] = "sample\ty\n" + "".join(f"{s}\t{v}\n" for s, v in zip(ids, y))
    c = rng.normal(size=N).round(3)
    files["cov"] = "isolate\tc\n" + "".join(f"{s}\t{v}\n" for s, v in zip(ids, c))
    K = np.eye(N) * 0.5 + 0.5 * (y[:, None] == y[None, :])
    files["kin"] = "\t" + "\t".join(ids) + "\n" + "".join(
        f"{s}\t" + "\t".join(str(v) for v in K[i]) + "\n" for i, s in enumerate(ids))
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    for i, s in enumerate(ids):
        (dumps / f"{s}.txt").write_text(
            "".join(f"AA{'ACGT'[j // 4]}{'ACGT'[j % 4]} {1 + X[i, j]}\n" for j in range(6) if present[i, j]))
    files["list"] = "".join(f"{s}\t{dumps / (s + '.txt')}\n" for s in ids)
    paths = {}
    for name, text in files.items():
        paths[name] = tmp_path / f"{name}.data"
        paths[name].write_text(text)
    return paths


def _score(tmp_path, out, *args):
    target = tmp_path / out
    assert main(["score", *args, "--id", "sample", "--target", "y", "-o", str(target)]) == 0
    return target.read_text()


@pytest.mark.parametrize("kind", ["tsv", "csv", "kmers", "list"])
def test_data_through_a_pipe(tmp_path, inputs, pipe, kind):
    """Data tables (by their content: the names say nothing) and k-mer text, and a list of
    dumps, through a FIFO: the scores of the file."""
    meta = str(inputs["meta"])
    from_file = _score(tmp_path, "file.tsv", str(inputs[kind]), "--meta", meta)
    through = _score(tmp_path, "pipe.tsv", pipe(inputs[kind].read_bytes()), "--meta", meta)
    assert through == from_file
    assert len(from_file.splitlines()) > 2


@pytest.mark.parametrize("option, kind, extra", [
    ("--meta", "meta", ["--method", "regression"]),
    ("--covariates", "cov", ["--method", "regression"]),
    ("--kinship", "kin", ["--method", "lmm"]),
])
def test_side_tables_through_a_pipe(tmp_path, inputs, pipe, option, kind, extra):
    """Metadata, covariates and kinship tables through a FIFO: the scores of the file."""
    base = {"--meta": str(inputs["meta"])}

    def run(out, given):
        args = {**base, option: given}
        return _score(tmp_path, out, str(inputs["tsv"]), *[a for kv in args.items() for a in kv], *extra)

    from_file = run("file.tsv", str(inputs[kind]))
    assert run("pipe.tsv", pipe(inputs[kind].read_bytes())) == from_file


def test_process_substitution(tmp_path, inputs):
    """``/dev/fd/N`` of a pipe (what bash's ``<(cat file)`` passes), for the data and the metadata
    at once: the output of the file."""
    given = []
    for name in ("tsv", "meta"):
        read_end, write_end = os.pipe()
        data = inputs[name].read_bytes()

        def write(fd=write_end, data=data):
            with open(fd, "wb") as fh:
                fh.write(data)

        threading.Thread(target=write, daemon=True).start()
        given.append((read_end, f"/dev/fd/{read_end}"))
    try:
        through = _score(tmp_path, "pipe.tsv", given[0][1], "--meta", given[1][1])
    finally:
        for fd, _ in given:
            os.close(fd)
    assert through == _score(tmp_path, "file.tsv", str(inputs["tsv"]), "--meta", str(inputs["meta"]))


def test_copy_once_and_messages_name_the_pipe(tmp_path, pipe, capsys):
    """The pipe is read once and its copy reused; an error names the path given, not the copy;
    a binary format through a pipe is refused with the fix."""
    given = pipe(b"sample\ty\ns1\t1\ns1\t0\n")
    first = compression.replayable(given)
    assert first != given and compression.replayable(given) == first
    with open(first, "rb") as fh:
        assert fh.read() == b"sample\ty\ns1\t1\ns1\t0\n"
    from genosift.io import read, read_metadata

    with pytest.raises(ValueError, match=r"fifo0' lists 1 sample id") as err:
        read_metadata(given, id_column="sample")
    assert first not in str(err.value)
    assert compression.replayable(os.devnull) == os.devnull
    assert not compression.is_pipe(tmp_path) and not compression.is_pipe(tmp_path / "absent")
    with pytest.raises(ValueError, match="is a pipe, not a file: npy data .* Save the data to a file"):
        read(pipe(b"\x93NUMPY\x01\x00"))
