"""knockpy's S-matrices of two 30 x 30 correlation matrices, for tests/unit/knockoffs/test_gaussian.py."""
import json, numpy as np, knockpy, knockpy.smatrix as sm
p = 30
rng = np.random.default_rng(0)
ar1 = 0.5 ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
A = rng.standard_normal((2 * p, p))
R = 0.7 * np.corrcoef(A, rowvar=False) + 0.3 * np.eye(p)
groups = np.repeat(np.arange(10), 3)
out = {"knockpy": "1.3.5", "matrices": {"ar1": ar1.tolist(), "random": R.tolist()},
       "groups": groups.tolist(), "s": {}}
for name, M in (("ar1", ar1), ("random", R)):
    for m in ("mvr", "maxent", "sdp", "equicorrelated"):
        out["s"][f"{name}/{m}"] = np.diag(sm.compute_smatrix(M, method=m)).tolist()
    out["s"][f"{name}/equicorrelated/groups"] = sm.compute_smatrix(M, method="equicorrelated", groups=groups + 1).tolist()
json.dump(out, open("/work/main/tests/data/knockoffs/knockpy_smatrix.json", "w"), indent=None)
