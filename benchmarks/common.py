"""What every benchmark shares: where things are, and the header every results file starts with.

A case script (``benchmarks/cases/bench_<name>.py``) puts this folder on ``sys.path`` and imports
from here (and, for the measurement helpers, from the runner ``run.py``)::

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, run.py
    from common import RESULTS, header

Nothing here imports genosift or the libraries whose versions it reports (their versions are read
from the installed distributions), so a header costs no import time or memory in the process that
measures.
"""
from __future__ import annotations

import datetime
import importlib.metadata as md
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

#: ``benchmarks/``: the runner ``run.py``, this module, ``cases/`` and ``results/``.
BENCHMARKS = Path(__file__).resolve().parent
#: The repository root.
ROOT = BENCHMARKS.parent
#: The genosift source a benchmark measures (a checkout's ``src/``).
SRC = ROOT / "src"
#: Where the results files live: ``RESULTS-<name>.md`` (and ``.json``).
RESULTS = BENCHMARKS / "results"

#: Reported in every header, after Python; a script adds its own with ``libraries=``.
CORE_LIBRARIES = ("numpy", "numba")


def machine_info():
    """``{"nproc", "cpu", "ram", "os"}``: CPU count, CPU model, total RAM and the platform."""
    model = platform.processor() or platform.machine() or "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = "unknown"
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    ram = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "ram": ram, "os": platform.platform()}


def version(distribution):
    """The installed version of ``distribution``, or ``"not installed"``."""
    try:
        return md.version(distribution)
    except md.PackageNotFoundError:
        return "not installed"


def git_revision():
    """``HEAD`` of the checkout being benchmarked, with ``-dirty`` if src/ has local changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "pyproject.toml"],
                               cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def command(argv=None):
    """The command that runs this script, as typed from the repository root."""
    argv = sys.argv if argv is None else argv
    script = Path(argv[0]).resolve()
    try:
        script = script.relative_to(ROOT)
    except ValueError:
        pass
    return shlex.join(["python", str(script), *argv[1:]])


def machine(load=None):
    """The machine in one line: CPUs, CPU model, RAM, and the load average ``load`` (a tuple as
    ``os.getloadavg()`` gives; default: now) at the start."""
    info = machine_info()
    load = " ".join(f"{x:.2f}" for x in (load or os.getloadavg()))
    return f"{info['nproc']} CPUs ({info['cpu']}), {info['ram']} RAM; load average {load} at the start"


def header(title, *, libraries=(), load=None, started=None, revision=None, argv=None):
    """The lines every results file starts with: its title, then the command that made it, the
    date, the machine (CPUs, CPU model, RAM, load average at the start), Python and the key
    library versions, and genosift's git revision, followed by a blank line.

    ``libraries`` adds versions after Python, numpy, numba and genosift: a distribution name, or a
    ``(name, text)`` pair for a version told some other way. ``load`` is the load average at the
    start (``os.getloadavg()`` taken before the work; default: now), ``started`` the start time
    (default: now), ``revision`` the revision measured (default: ``git_revision()``).
    """
    started = started or datetime.datetime.now().astimezone()
    versions = {"python": platform.python_version()}
    for entry in (*CORE_LIBRARIES, "genosift", *libraries):
        name, text = entry if isinstance(entry, tuple) else (entry, version(entry))
        versions[name] = text  # a pair for a core library replaces its plain version, in its place
    return [
        f"# {title}",
        "",
        f"- Command: `{command(argv)}` (from the repository root)",
        f"- Date: {started:%Y-%m-%d %H:%M:%S %Z}".rstrip(),
        f"- Machine: {machine(load)}",
        "- Versions: " + ", ".join(f"{name} {text}" for name, text in versions.items()),
        f"- genosift source: git {revision or git_revision()}",
        "",
    ]


def timed_run(command, folder, *, env=None):
    """``(seconds, peak MiB, stdout)`` of ``command`` run as its own process in ``folder``, with this
    checkout's ``src/`` first on ``PYTHONPATH`` and ``env`` added; the peak is GNU time's ``%M``
    (NaN where ``/usr/bin/time`` is absent). A failed command raises with its output's end."""
    env = dict(os.environ, PYTHONPATH=str(SRC), **(env or {}))
    folder = Path(folder)
    timed = ["/usr/bin/time", "-f", "%M", "-o", str(folder / "rss")] if Path("/usr/bin/time").exists() else []
    started = time.perf_counter()
    done = subprocess.run(timed + [str(c) for c in command], capture_output=True, text=True, env=env, cwd=folder)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{' '.join(map(str, command))}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    rss = int((folder / "rss").read_text().split()[-1]) / 1024 if timed else float("nan")
    return seconds, rss, done.stdout


def best_run(measure, repeats):
    """The fastest of ``repeats`` calls of ``measure`` (each returning a tuple whose first item is seconds)."""
    return min((measure() for _ in range(repeats)), key=lambda r: r[0])
