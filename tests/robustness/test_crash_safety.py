"""Interrupting `genosift convert` / `genosift score` (SIGINT, SIGTERM, SIGKILL) leaves no
half-written output under the final name, a re-run completes, and outputs are never clobbered
without --force. The commands run as real processes, interrupted while they work."""
from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from genosift.io.datasets import write_synthetic_kmers

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="watches /proc/<pid>/fd (Linux)")


@pytest.fixture(scope="module")
def kmers(tmp_path_factory):
    """A k-mer file large enough (about 15 M counts) that converting it takes a few seconds."""
    folder = tmp_path_factory.mktemp("crash")
    path = folder / "big.kmers"
    pheno, _ = write_synthetic_kmers(path, n_samples=300, n_kmers=1_000_000, density=0.05, seed=3)
    pheno.to_frame().to_csv(folder / "pheno.csv")
    return path, folder / "pheno.csv"


def start(*args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "genosift", *args, "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def wait_until(proc, ready, timeout=60):
    """Poll until ``ready()`` (True: the process is at the stage to interrupt) or the process ends."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        if ready():
            return True
        time.sleep(0.005)
    raise AssertionError("the process neither reached the stage nor ended")


def has_open(proc, path):
    try:
        return any(os.readlink(f"/proc/{proc.pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{proc.pid}/fd"))
    except OSError:  # the process ended, or an fd closed while listed
        return False


def leftovers(folder, name):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}") or "genosift-kmers" in p.name)


@pytest.mark.parametrize("sig, stage, code", [
    (signal.SIGINT, "reading", 130),
    (signal.SIGTERM, "writing", 143),
    (signal.SIGKILL, "writing", -9),
])
def test_interrupted_convert_leaves_no_output_and_a_rerun_completes(kmers, tmp_path, sig, stage, code):
    src, pheno = kmers
    out = tmp_path / "k.gs.h5ad"
    args = ["convert", str(src), "--meta", str(pheno), "--id", "sample", "-o", str(out), "--chunk-bytes", "4M"]
    proc = start(*args)
    if stage == "reading":
        reached = wait_until(proc, lambda: has_open(proc, src))
    else:  # the store is being written under its temporary name
        reached = wait_until(proc, lambda: any(p.name.startswith(".k.gs.h5ad.") for p in tmp_path.iterdir()))
    assert reached, proc.communicate()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert not out.exists()
    if sig != signal.SIGKILL:  # a clean unwind removes its temporary files (the spill is never named)
        assert "interrupted" in err and leftovers(tmp_path, "k.gs.h5ad") == []
    else:  # nothing unwinds after SIGKILL: the next run removes the dead run's partial store
        assert leftovers(tmp_path, "k.gs.h5ad") != []
    rerun = subprocess.run([sys.executable, "-m", "genosift", *args, "--quiet"], capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert "300 samples x 1000000 features" in rerun.stdout
    assert leftovers(tmp_path, "k.gs.h5ad") == []
    if sig == signal.SIGKILL:
        assert "partial output(s) of" in rerun.stderr and "left by an interrupted run" in rerun.stderr


def test_interrupted_score_writes_nothing(kmers, tmp_path):
    src, pheno = kmers
    store = tmp_path / "k.gs.h5ad"
    subprocess.run([sys.executable, "-m", "genosift", "convert", str(src), "--meta", str(pheno), "--id", "sample",
                    "-o", str(store), "--quiet"], check=True, capture_output=True)
    out = tmp_path / "rank.tsv"
    args = ["score", str(store), "--target", "phenotype", "--method", "kendall", "-o", str(out)]
    proc = start(*args)
    assert wait_until(proc, lambda: has_open(proc, store)), proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted (SIGINT)" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.gs.h5ad"]


def test_existing_outputs_are_never_clobbered(kmers, tmp_path):
    src, pheno = kmers
    small = tmp_path / "small.kmers"
    small.write_text("".join(src.open().readline() for _ in range(1)))
    out = tmp_path / "k.gs.h5ad"
    out.write_bytes(b"precious")
    before = hashlib.sha256(out.read_bytes()).hexdigest()
    run = subprocess.run([sys.executable, "-m", "genosift", "convert", str(small), "-o", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "--force" in run.stderr
    assert hashlib.sha256(out.read_bytes()).hexdigest() == before
    run = subprocess.run([sys.executable, "-m", "genosift", "convert", str(small), "-o", str(out), "--force"],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "genosift did not write it" in run.stderr  # --force replaces only its own
    assert hashlib.sha256(out.read_bytes()).hexdigest() == before
    out.unlink()
    for force in ([], ["--force"]):
        run = subprocess.run([sys.executable, "-m", "genosift", "convert", str(small), "-o", str(out), *force],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr


def test_a_lost_sigterm_reraised_as_an_interrupt_still_exits_as_sigterm(monkeypatch, capsys):
    """A SIGTERM whose exception was lost (raised in a weak-reference callback) is recorded; a writer
    that then refuses to publish raises KeyboardInterrupt: the command still ends as SIGTERM (143)."""
    import argparse

    import genosift.cli as cli
    from genosift.core.files import interrupted

    def command(args):
        interrupted.append(signal.SIGTERM)
        raise KeyboardInterrupt()

    class Parser:
        def parse_args(self, argv):
            return argparse.Namespace(func=command, command="convert", threads=None, quiet=True)

    monkeypatch.setattr(cli, "build_parser", lambda: Parser())
    assert cli.main([]) == 143
    assert "interrupted (SIGTERM)" in capsys.readouterr().err


@pytest.mark.parametrize("folder", [False, True])
def test_a_signal_just_after_the_temporary_output_is_made_leaves_nothing(tmp_path, monkeypatch, folder):
    """The temporary output is listed for removal before it is made: an interruption (here raised
    by the very call that makes it, as a signal handler would raise on the next instruction)
    leaves no partial file, whatever the timing."""
    from genosift.core import files

    made = {"close": os.close, "mkdir": Path.mkdir}

    def close(fd):
        made["close"](fd)
        raise KeyboardInterrupt()

    def mkdir(self, *args, **kwargs):
        made["mkdir"](self, *args, **kwargs)
        raise KeyboardInterrupt()

    with pytest.raises(KeyboardInterrupt):
        with monkeypatch.context() as patch:
            patch.setattr(Path, "mkdir", mkdir) if folder else patch.setattr(files.os, "close", close)
            with files.staged(tmp_path / "out", force=False, folder=folder):
                pass
    assert list(tmp_path.iterdir()) == []
