"""The command line's peak memory on a store of 2,000,000 features: `score` and `select` stay
within the bound the README states (100 MB, 250 bytes per feature and twice the chunk budget),
below 1 GB. The ranking is written in pieces and `select` builds only the rows it keeps."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")

N_SAMPLES, N_FEATURES, PER_SAMPLE = 1000, 2_000_000, 20_000


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    from genosift.io import Dataset, write_store

    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(N_SAMPLES), PER_SAMPLE)
    cols = rng.integers(0, N_FEATURES, rows.size)
    counts = rng.integers(1, 9, rows.size).astype(np.float32)
    X = sp.coo_matrix((counts, (rows, cols)), shape=(N_SAMPLES, N_FEATURES)).tocsr()
    X.sum_duplicates()
    digits = (np.arange(N_FEATURES)[:, None] >> (2 * np.arange(16))[None, :]) % 4
    names = np.array(["".join(r) + "ACGTACGTACGTACG" for r in np.array(list("ACGT"))[digits]], dtype=object)
    ids = np.array([f"s{i}" for i in range(N_SAMPLES)], dtype=object)
    obs = pd.DataFrame({"phenotype": np.where(rng.random(N_SAMPLES) < 0.5, "R", "S")}, index=ids)
    path = tmp_path_factory.mktemp("big") / "big.gs.h5ad"
    write_store(Dataset(X, ids, names, obs=obs), path)
    return path


_RUN = """
import sys
from genosift.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
# the high-water mark of this process's own memory (a fork's rusage would count its parent's)
peak = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")][0]
print(int(peak) * 1024, file=sys.stderr)
sys.exit(code)
"""


def _peak_bytes(args, cwd):
    """Run `genosift ARGS` as its own process; the peak resident memory of that process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(os.path.dirname(__file__), "..", "..", "src"),
                                                       os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", _RUN, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    assert run.returncode == 0, run.stderr
    return int(run.stderr.split()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("command", [["score", "--method", "fisher", "-o", "r.tsv"],
                                     ["score", "--method", "welch", "-o", "r.parquet"],
                                     ["select", "--method", "fisher", "--top", "10", "-o", "s.tsv"]])
def test_command_line_peak_memory_on_two_million_features(big_store, tmp_path, command):
    pytest.importorskip("pyarrow")
    peak = _peak_bytes([command[0], str(big_store), "--target", "phenotype", "--chunk-bytes", "64M", "--quiet",
                        *command[1:]], tmp_path)
    bound = 100e6 + 250 * N_FEATURES + 2 * 64 * 2**20  # the README's bound: imports, per feature, 2 x budget
    print(f"{command[0]} {command[2]} peak {peak / 1e6:.0f} MB, bound {bound / 1e6:.0f} MB")
    assert peak < bound < 0.8e9, (peak, bound)
    out = tmp_path / command[-1]
    if command[0] == "score" and out.suffix == ".tsv":
        ranking = pd.read_csv(out, sep="\t", usecols=["feature", "rank"])
        assert len(ranking) == N_FEATURES and ranking["rank"].is_monotonic_increasing


@pytest.mark.slow
def test_predict_from_a_store_reads_only_the_models_features(big_store, tmp_path):
    """`predict` on the 2,000,000-feature store peaks where it does on a store of the model's
    features alone: the stored names are scanned, not decoded, and only the model's columns read."""
    from genosift.io import Dataset, open_store, write_store
    from genosift.sources import StoreRows
    from genosift.workflow import write_results
    from genosift.workflow.evaluation import Asked
    from genosift.workflow.screened import evaluate_store

    store = open_store(big_store)
    y = store.obs["phenotype"].to_numpy()
    ev, X, _ = evaluate_store(StoreRows(store), y, Asked(method="fisher", ks=[20], cv=3, sample_ids=store.sample_ids))
    folder = write_results(ev, tmp_path / "model", X=X, y=y)
    ev.profile.close()
    small = write_store(Dataset(X, store.sample_ids, store.take_names(ev.columns)), tmp_path / "small.gs.h5ad")
    peaks = {}
    for name, data in (("big", big_store), ("small", small)):
        peaks[name] = _peak_bytes(["predict", str(folder), str(data), "-o", f"{name}.tsv"], tmp_path)
    print(f"predict peak: {peaks['big'] / 1e6:.0f} MB on 2,000,000 features, {peaks['small'] / 1e6:.0f} MB on "
          f"the model's {X.shape[1]}")
    assert peaks["big"] - peaks["small"] < 64e6, peaks  # the whole store would take some 400 MB more
    a, b = (pd.read_csv(tmp_path / f"{name}.tsv", sep="\t", float_precision="round_trip") for name in ("big", "small"))
    pd.testing.assert_frame_equal(a, b)
