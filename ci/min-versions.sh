#!/usr/bin/env bash
# The test suite on the lowest dependency versions pyproject.toml allows
# (pinned in ci/min-versions.txt), so that the floors the package declares are tested.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-min
.venv-min/bin/pip install -c ci/min-versions.txt -e ".[test]"
.venv-min/bin/python -m pip list --format=freeze | grep -iE "^(numpy|scipy|scikit-learn|pandas|numba|rich|skops|pyarrow|h5py|anndata|dask|matplotlib)=="
.venv-min/bin/python -m pytest -q -p no:cacheprovider
