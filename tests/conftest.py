"""Shared test helpers: where the real data sets live and how to load them.

The tests mirror the package (``unit/<package>/test_<module>.py``) beside the contract,
robustness, reference and surface suites. Every test folder is on ``sys.path``, as pytest puts a
test's own folder there, so a test module can take another one's builders by its base name
(``from test_clonal import count_kmers``) whichever folder it sits in; base names are unique
across the tree (``surface/test_architecture.py`` checks it).

The real data sit beside the project at ``../shared/data`` (see its README.md). They are not part
of the repository, so every test that needs them skips, with the reason, when the folder is not
there (a fresh clone elsewhere). ``GENOSIFT_SHARED_DATA`` points the tests at another copy.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

REPO_ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


def _test_folders_on_path():
    import sys

    for folder in sorted({p.parent for p in TESTS.rglob("test_*.py")} - {TESTS}):
        if str(folder) not in sys.path:
            sys.path.append(str(folder))


_test_folders_on_path()


def load_benchmark(name):
    """The module ``benchmarks/cases/<name>.py``, imported once (the tests of a benchmark's own code)."""
    import importlib.util
    import sys

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "benchmarks" / "cases" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def pytest_make_parametrize_id(config, val, argname):
    """Binary parameters are named by their length, not their bytes: the workers of a parallel
    run each collect the tests, and a name built from bytes made at collection time (a gzip
    stream holds the time it was written) differs between them, which stops the whole run."""
    if isinstance(val, (bytes, bytearray)) and not all(32 <= b < 127 or b in (9, 10) for b in val):
        return f"{argname}-{len(val)}-bytes"
    return None


@pytest.fixture(scope="session", autouse=True)
def _one_blas_thread():
    """Small model fits run on one BLAS thread: a thread pool per tiny fit is many times slower
    on a busy machine, and one thread gives the same numbers on every machine."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
ENV_VAR = "GENOSIFT_SHARED_DATA"


def shared_data_dir() -> Path:
    """The shared data folder: ``$GENOSIFT_SHARED_DATA`` if set, else ``<repo>/../shared/data``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser().resolve() if env else REPO_ROOT.parent / "shared" / "data"


def _missing_reason(path: Path) -> str:
    how = f"${ENV_VAR}" if os.environ.get(ENV_VAR) else f"<repo>/../shared/data (override with ${ENV_VAR})"
    return f"shared real-data folder not found at {path} ({how}); tests on real data are skipped"


def require_shared(*parts) -> Path:
    """Path to ``shared_data_dir() / parts``; skips the calling test when it does not exist."""
    root = shared_data_dir()
    if not root.is_dir():
        pytest.skip(_missing_reason(root))
    path = root.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data {path} not found; tests that need it are skipped")
    return path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder (skips the test when it is absent)."""
    return require_shared()


@functools.cache
def _load(root: str, name: str):
    d = Path(root) / name
    if (d / "X.sparse.npz").exists():
        X = sp.load_npz(d / "X.sparse.npz").tocsr()
    else:
        with np.load(d / "X.npz") as z:
            X = z["X"]
    y = np.array((d / "y.txt").read_text().split("\n")[:-1])
    f = d / "features.txt"
    features = np.array(f.read_text().split("\n")[:-1]) if f.exists() else None
    # cached and shared between tests: make accidental in-place edits fail loudly
    for a in (X.data, X.indices, X.indptr) if sp.issparse(X) else (X,):
        a.setflags(write=False)
    y.setflags(write=False)
    return X, y, features


def load_shared(name: str):
    """``(X, y, feature_names or None)`` of the shared data set ``name``, as ``load.py`` gives them.

    ``X`` is a dense ndarray or a CSR matrix (read-only, cached for the session); ``y`` holds the
    labels as strings, exactly as ``y.txt`` has them. Skips when the data are not available.
    """
    d = require_shared(name)
    if not (d / "y.txt").exists():
        pytest.skip(f"shared data set {name!r} has no y.txt in {d}")
    return _load(str(d.parent), name)
