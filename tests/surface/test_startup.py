"""Startup stays light: ``import genosift`` and ``genosift --help`` / ``--version`` load no heavy package."""
import subprocess
import sys

import numpy as np
import pytest

HEAVY = ("sklearn", "numba", "scipy", "dask", "h5py", "anndata", "matplotlib")

_LOADED = ("import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))")


def _loaded_after(code):
    out = subprocess.run([sys.executable, "-c", f"{code}\n" + _LOADED.format(heavy=HEAVY)],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_import_genosift_loads_no_heavy_package():
    assert _loaded_after("import genosift") == "[]"


def test_public_names_load_on_first_use():
    code = ("import genosift\n"
            "assert set(genosift.__all__) <= set(dir(genosift))\n"
            "from genosift import score, SelectKBest, io\n"
            "assert genosift.score is score and callable(score)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_attribute_is_an_attribute_error():
    import genosift

    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        genosift.nonexistent  # noqa: B018


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_command_help_and_version_load_no_heavy_package(option):
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "genosift", option],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert not sorted(m for m in imported if m.split(".")[0] in HEAVY)
    assert "genosift" in imported


#: What a plain ``genosift score`` never needs: models, rank statistics, plots, clusters, stores.
SCORE_LAZY = ("sklearn", "scipy.stats", "matplotlib", "dask", "h5py", "anndata")


def _lazy_loaded(modules):
    return sorted(m for m in modules if any(m == lazy or m.startswith(lazy + ".") for lazy in SCORE_LAZY))


def test_registry_writer_and_covariates_load_no_models_or_scipy_stats():
    code = ("import sys, genosift.scores, genosift.jobs.labelled, genosift.core.tabletext\n"
            "import genosift.workflow.covariates\n"
            "assert len(genosift.scores.methods()) > 10\n"
            "print(sorted(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert _lazy_loaded(eval(out.stdout.strip().splitlines()[-1])) == []


@pytest.mark.parametrize("extra", [[], ["--structure", "2"]])
def test_score_command_on_kmers_loads_no_models_or_scipy_stats(tmp_path, extra):
    rng = np.random.default_rng(0)
    samples = [f"s{i}" for i in range(12)]
    lines = []
    for k in range(40):
        present = [s for s in samples if rng.random() < 0.5] or samples[:1]
        lines.append("ACGT" + "ACGT"[k % 4] * (k + 1) + " | " + " ".join(f"{s}:1" for s in present))
    (tmp_path / "kmers.txt").write_text("\n".join(lines) + "\n")
    rows = "".join(f"{s}\t{i % 2}\n" for i, s in enumerate(samples))
    (tmp_path / "meta.tsv").write_text("sample\tphenotype\n" + rows)
    command = [sys.executable, "-X", "importtime", "-m", "genosift", "score", str(tmp_path / "kmers.txt"),
               "--meta", str(tmp_path / "meta.tsv"), "--id", "sample", "--target", "phenotype", "--binary",
               "--method", "logistic", "--quiet", "-o", str(tmp_path / "out.tsv"), *extra]
    out = subprocess.run(command, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert _lazy_loaded(imported) == []
    assert (tmp_path / "out.tsv").read_text().startswith("feature\tscore\t")


@pytest.mark.slow
def test_the_first_compilation_is_announced_once(tmp_path):
    """With an empty kernel cache (a fresh install) the first run of a command says on standard
    error that it compiles its kernels; the second run, whose kernels come from the cache, says
    nothing; --quiet says nothing either (`pytest -m slow tests/surface/test_startup.py`)."""
    import os

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-m", "genosift", "demo", *extra, "-o", str(tmp_path / f"demo{i}")],
                           capture_output=True, text=True, env=env)
            for i, extra in enumerate(([], [], []))]
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    said = [run.stderr.count("compiling its kernels for their first use") for run in runs]
    assert said == [1, 0, 0], said
    table = tmp_path / "t.csv"
    table.write_text("id,a,b,label\n" + "".join(f"s{i},{i % 3},{i % 5},{i % 2}\n" for i in range(12)))
    quiet = subprocess.run([sys.executable, "-m", "genosift", "score", str(table), "--target", "label", "--quiet",
                            "-o", str(tmp_path / "s.tsv")], capture_output=True, text=True,
                           env=dict(env, NUMBA_CACHE_DIR=str(tmp_path / "cold")))
    assert quiet.returncode == 0 and "compiling" not in quiet.stderr, quiet.stderr


def _options(argv):
    """A command's name and its options with their values, paths left out (they differ by folder)."""
    paths = {"-o", "--meta", "--references", "--genes", "--hits", "--ranking", "--qq", "--manhattan"}
    out, tokens = [argv[0]], list(argv[1:])
    for i, token in enumerate(tokens):
        if token.startswith("-"):
            value = tokens[i + 1] if i + 1 < len(tokens) and not tokens[i + 1].startswith("-") else ""
            out.append(token if token in paths else f"{token} {value}".strip())
    return out


def test_precompile_runs_the_readme_walkthrough_as_written(tmp_path):
    """`genosift precompile` (which `pip install .` runs) compiles the kernels of the README's
    walk-through by running its commands: the same commands with the same options."""
    import shlex

    from test_walkthrough import walkthrough_commands

    from genosift.cli import precompile

    readme = [_options(shlex.split(line)[1:]) for line in walkthrough_commands() if line.startswith("genosift ")]
    runs = [_options(argv) for argv in precompile._walkthrough(tmp_path)]
    assert runs[: len(readme)] == readme


def test_precompile_makes_its_python_calls_as_the_library_takes_them(tmp_path):
    """The steps `genosift precompile` runs in its own process (the README's Python calls, the
    k-mer text read in pieces, a large sparse structure checked) run as written: a call the
    library refuses would leave their kernels uncompiled in every install, with only a warning in
    pip's log."""
    from genosift.cli import precompile

    precompile._api_calls()
    precompile._kmer_pieces(tmp_path)
    precompile._large_structures()
