"""The pins the minimum-versions CI job installs are the floors pyproject.toml declares."""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# A pin above its declared floor needs a reason here (none today).
ABOVE_FLOOR = {}


def _version(text):
    parts = [int(p) for p in re.findall(r"\d+", text)[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


def _declared():
    if sys.version_info < (3, 11):
        pytest.skip("reads pyproject.toml with tomllib (Python 3.11+)")
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors = {}
    for spec in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
        name, floor = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9.]+)(?:\s*;.*)?", spec).groups()
        floors[name.lower()] = floor
    return floors


def _pins():
    pins = {}
    for line in (ROOT / "ci" / "min-versions.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def test_every_dependency_is_pinned_at_its_floor():
    floors, pins = _declared(), _pins()
    assert sorted(floors) == sorted(pins), "ci/min-versions.txt and pyproject.toml name different packages"
    for name, floor in floors.items():
        pin = pins[name]
        assert _version(pin) >= _version(floor), f"{name}=={pin} is below the declared floor {floor}"
        if _version(pin) > _version(floor):
            assert name in ABOVE_FLOOR, f"{name}=={pin} is above its floor {floor}: pin the floor, or raise it"
