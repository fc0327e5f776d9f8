#!/usr/bin/env bash
# The tests on the lowest dependency versions pyproject.toml allows (pinned in
# ci/min-versions.txt), so that the floors the package declares are tested.
#
# By default the tests whose outcome can depend on the versions installed: the unit tests of
# every package, the contract over every method and input form, the references, the robustness
# checks of the readers, the store and the model files (h5py, scipy.sparse, skops, the
# compression libraries), and the doctests. The suites that check genosift's own invariants
# whatever the libraries (byte-identical reruns, hypothesis properties, ties in every form,
# interrupted and clobbered outputs, the fuzzed text readers, the command line's surface and the
# documentation) run on the newest versions only. `bash ci/min-versions.sh tests src/genosift`
# runs everything on the floors.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-min
.venv-min/bin/pip install -c ci/min-versions.txt -e ".[test]"
.venv-min/bin/python -m pip list --format=freeze | grep -iE "^(numpy|scipy|scikit-learn|pandas|numba|rich|skops|pyarrow|h5py|anndata|dask|matplotlib)=="
if [ "$#" -eq 0 ]; then
    set -- tests src/genosift --ignore=tests/surface \
        --ignore=tests/contract/test_determinism.py --ignore=tests/contract/test_properties.py \
        --ignore=tests/contract/test_ties.py --ignore=tests/robustness/test_crash_safety.py \
        --ignore=tests/robustness/test_fuzz.py --ignore=tests/robustness/test_output_safety.py \
        --ignore=tests/robustness/test_outputs.py --ignore=tests/robustness/test_cli_memory.py
fi
.venv-min/bin/python -m pytest -q -p no:cacheprovider "$@"
