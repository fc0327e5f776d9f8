"""Startup stays light: ``import genosift`` and ``genosift --help`` / ``--version`` load no heavy package."""
import subprocess
import sys

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
