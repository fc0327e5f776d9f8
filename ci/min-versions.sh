#!/usr/bin/env bash
# The tests on the lowest dependency versions pyproject.toml allows (pinned in
# ci/min-versions.txt), so that the floors the package declares are tested.
#
# By default the tests whose outcome can depend on the versions installed: the unit tests of
# every package, the contract over every method and input form, the references, the robustness
# checks of the readers, the store and the model files (h5py, scipy.sparse, skops, the
# compression libraries), and the doctests. The suites that check genosift's own invariants
# whatever the libraries (byte-identical reruns, hypothesis properties, ties in every form,
# interrupted and clobbered outputs, the fuzzed text readers, the run's settings against its
# environment, the benchmarks' own code, the command line's surface and the documentation) run on
# the newest versions only. `bash ci/min-versions.sh tests src/genosift`
# runs everything on the floors.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-min
# the floors themselves first (no build of genosift, so this may run beside another install), then
# genosift on them; GENOSIFT_INSTALL_LOCK, where set, is a lock file that keeps that build from
# running beside another build of this tree (they write the same egg-info)
.venv-min/bin/pip install -r ci/min-versions.txt
${GENOSIFT_INSTALL_LOCK:+flock "$GENOSIFT_INSTALL_LOCK"} .venv-min/bin/pip install -c ci/min-versions.txt -e ".[test]"
.venv-min/bin/python -m pip list --format=freeze | grep -iE "^(numpy|scipy|scikit-learn|pandas|numba|rich|skops|pyarrow|h5py|anndata|dask|matplotlib)=="
if [ "$#" -eq 0 ]; then
    set -- tests src/genosift --ignore=tests/surface \
        --ignore=tests/contract/test_determinism.py --ignore=tests/contract/test_properties.py \
        --ignore=tests/contract/test_ties.py --ignore=tests/robustness/test_crash_safety.py \
        --ignore=tests/robustness/test_fuzz.py --ignore=tests/robustness/test_output_safety.py \
        --ignore=tests/robustness/test_outputs.py --ignore=tests/robustness/test_cli_memory.py \
        --ignore=tests/robustness/test_engine_hardening.py --ignore=tests/reference/test_bench_power.py \
        --ignore=tests/reference/test_case_study.py
fi
.venv-min/bin/python -m pytest -q -p no:cacheprovider "$@"
