"""Writes tests/data/knockoffs/knockpy_smatrix.json: knockpy's S-matrices of two 30 x 30 correlation
matrices (an AR(1) and a random one) by each of its methods, and of groups of three by
equicorrelation, for tests/unit/knockoffs/test_gaussian.py. Run with knockpy 1.3.5 installed:
``python tools/make_knockpy_smatrix.py``."""
import json
from pathlib import Path

import knockpy.smatrix as sm
import numpy as np

p = 30
rng = np.random.default_rng(0)
ar1 = 0.5 ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
R = 0.7 * np.corrcoef(rng.standard_normal((2 * p, p)), rowvar=False) + 0.3 * np.eye(p)
groups = np.repeat(np.arange(10), 3)
out = {"knockpy": "1.3.5", "matrices": {"ar1": ar1.tolist(), "random": R.tolist()}, "groups": groups.tolist(), "s": {}}
for name, M in (("ar1", ar1), ("random", R)):
    for method in ("mvr", "maxent", "sdp", "equicorrelated"):
        out["s"][f"{name}/{method}"] = np.diag(sm.compute_smatrix(M, method=method)).tolist()
    grouped = sm.compute_smatrix(M, method="equicorrelated", groups=groups + 1)
    out["s"][f"{name}/equicorrelated/groups"] = grouped.tolist()
target = Path(__file__).resolve().parents[1] / "tests" / "data" / "knockoffs" / "knockpy_smatrix.json"
target.write_text(json.dumps(out))
