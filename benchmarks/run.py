#!/usr/bin/env python
"""Benchmark genosift against scikit-learn and scikit-feature in one process run.

Writes a markdown report (default ``benchmarks/results/RESULTS.md``, overwritten) and prints it.

    python benchmarks/run.py            # full sizes, a few minutes
    python benchmarks/run.py --quick    # p / 10, smoke test (writes benchmarks/results/RESULTS-quick.md)

Each measured call is run once untimed (this first run is also the memory measurement), then
timed 3 times; the table shows the best of the 3 wall times (``time.perf_counter``). genosift's
numba kernels are compiled beforehand by scoring a tiny slice of the same dtype and format, so
JIT compilation is never counted. Peak memory is the peak resident set size (RSS) of the process
during the call minus the RSS just before it, sampled from ``/proc/self/statm`` every ~1 ms by a
background thread: this sees numpy, scipy, BLAS and numba (NRT) allocations alike.
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import datetime
import gc
import importlib
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # common.py, when this runner is imported from elsewhere
sys.path.insert(0, str(HERE / "cases"))  # the family modules bench_<family>.py
from common import RESULTS, header, version  # noqa: E402

SEED = 20240611
#: Score families benchmarked by benchmarks/cases/bench_<family>.py, run after the core cases.
FAMILIES = ("ranks", "contingency", "distances", "neighbours", "multivariate", "model_selection")
REPEATS = 3


# --------------------------------------------------------------------------------------------
# measurement
# --------------------------------------------------------------------------------------------

_PAGE = os.sysconf("SC_PAGE_SIZE")
try:
    _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
except (OSError, AttributeError):  # not glibc
    _LIBC = None


def _rss_bytes(fd):
    """Current resident set size, from the second field of /proc/self/statm."""
    return int(os.pread(fd, 128, 0).split()[1]) * _PAGE


def _vm_hwm_bytes():
    """The kernel's peak RSS of this process (VmHWM), or None where it cannot be read."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_vm_hwm():
    """Reset VmHWM to the current RSS (Linux >= 4.0: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _release_free_memory():
    """Collect garbage and hand freed heap pages back to the OS, so the RSS baseline is clean."""
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


class PeakRSS:
    """Context manager: peak RSS increment (bytes) of the enclosed code.

    Two sources, the larger wins: (1) the kernel's high-water mark VmHWM, reset on entry through
    ``/proc/self/clear_refs`` (exact, where the kernel allows the reset); (2) a daemon thread
    reading ``/proc/self/statm`` every ``interval`` seconds (misses spikes shorter than the
    interval and code that holds the GIL). Either way every allocation is seen (numba NRT, BLAS
    buffers, C extensions), not only those made through numpy as with ``tracemalloc``.
    """

    def __init__(self, interval=0.001):
        self.interval = interval
        self.peak = 0

    def __enter__(self):
        _release_free_memory()
        self._fd = os.open("/proc/self/statm", os.O_RDONLY)
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(self.interval)  # let the sampler in during GIL-holding Python code
        self._stop = threading.Event()
        self.exact = _reset_vm_hwm()
        self.base = _rss_bytes(self._fd)
        self._max = self.base
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(self.interval):
            rss = _rss_bytes(self._fd)
            if rss > self._max:
                self._max = rss

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._max = max(self._max, _rss_bytes(self._fd))
        hwm = _vm_hwm_bytes() if self.exact else None
        if hwm is not None:
            self._max = max(self._max, hwm)
        os.close(self._fd)
        sys.setswitchinterval(self._switch)
        self.peak = self._max - self.base
        return False


@dataclass
class Timing:
    best: float
    times: list
    peak_mb: float
    exact: bool = False


def measure(fn, repeats=None):
    """Run ``fn`` once untimed under ``PeakRSS``, then ``repeats`` timed runs.

    Returns ``(Timing, result of the first run)``.
    """
    repeats = repeats or REPEATS
    with PeakRSS() as mem:
        result = fn()
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    return Timing(min(times), times, mem.peak / 2**20, mem.exact), result


def measure_together(fns, repeats=None):
    """``measure`` for several functions whose times are compared: each runs once untimed under
    ``PeakRSS``, then the timed runs go round the functions in turn, so that a slow spell of a
    shared machine falls on all of them alike. Returns ``[(Timing, result of the first run)]``."""
    repeats = repeats or REPEATS
    firsts = []
    for fn in fns:
        with PeakRSS() as mem:
            result = fn()
        firsts.append((mem.peak / 2**20, mem.exact, result))
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, spent in zip(fns, times):
            gc.collect()
            t0 = time.perf_counter()
            out = fn()
            spent.append(time.perf_counter() - t0)
            del out
    return [(Timing(min(t), t, peak, exact), result) for t, (peak, exact, result) in zip(times, firsts)]


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------

def dense_case(rng, n, p, k=3):
    """Standard-normal float32 features; the first 1% shifted by 0.5 * class code."""
    y = rng.integers(0, k, n)
    X = rng.standard_normal((n, p), dtype=np.float32)
    m = max(1, p // 100)
    X[:, :m] += (0.5 * y[:, None]).astype(np.float32)
    # numeric target for the regression row: depends on the first 100 features, plus noise
    w = rng.standard_normal(min(100, p))
    y_num = X[:, : w.shape[0]].astype(np.float64) @ w + rng.standard_normal(n)
    return X, y, y_num


def sparse_case(rng, n, p, density, k=3):
    """CSR counts 1..20 stored as float32 (int32 indices); first 1% of features class-dependent."""
    y = rng.integers(0, k, n)
    row_nnz = rng.binomial(p, density, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(row_nnz, out=indptr[1:])
    indices = np.empty(indptr[-1], dtype=np.int32)
    for i in range(n):
        indices[indptr[i]:indptr[i + 1]] = np.sort(rng.choice(p, row_nnz[i], replace=False))
    data = rng.integers(1, 21, indptr[-1]).astype(np.float32)
    rows = np.repeat(np.arange(n), row_nnz)
    informative = indices < max(1, p // 100)
    data[informative] = np.minimum(20, data[informative] + 3 * y[rows[informative]]).astype(np.float32)
    X = sp.csr_matrix((data, indices, indptr.astype(np.int32)), shape=(n, p))
    return X, y


# --------------------------------------------------------------------------------------------
# report helpers
# --------------------------------------------------------------------------------------------

@dataclass
class Row:
    case: str
    method: str
    data: str
    timing: Timing
    floor: float | None = None
    f_classif: float | None = None
    target: str = ""
    verdict: str = ""
    notes: list = field(default_factory=list)


def fmt_t(s):
    return f"{s:.3f}" if s < 10 else f"{s:.1f}"


def max_rel_diff(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        # values below 1e-12 count as zero: equal class means give F = 0 exactly or ~1e-30 of rounding
        rel = np.abs(a[ok] - b[ok]) / np.maximum(np.abs(b[ok]), 1e-12)
    return float(rel.max()) if rel.size else float("nan"), int(ok.sum())


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------------------------

def run_dense(args, rng, rows, checks, phases):
    from sklearn.feature_selection import f_classif, r_regression

    import genosift as gs

    n, p = 1000, args.p_dense
    case = f"dense float32 {n} x {p:,}, 3 classes"
    log(f"dense: generating {n} x {p} float32")
    X, y, y_num = dense_case(rng, n, p)
    data = "full"

    # JIT warm-up on a tiny slice of the same dtype and layout (C-contiguous float32)
    tiny = np.ascontiguousarray(X[:40, :64])
    for method in ("fisher", "anova"):
        gs.score(tiny, y[:40], method=method)
    gs.score(tiny, y_num[:40], method="pearson")

    log("dense: floor X.sum(axis=0)")
    t_floor, _ = measure(lambda: X.sum(axis=0))
    rows.append(Row(case, "floor: `X.sum(axis=0)`", data, t_floor))

    log("dense: sklearn f_classif")
    t_fc, (F_sk, _) = measure(lambda: f_classif(X, y))
    log("dense: genosift fisher")
    t_fi, res_fi = measure(lambda: gs.score(X, y, method="fisher"))
    log("dense: genosift anova")
    t_an, res_an = measure(lambda: gs.score(X, y, method="anova"))
    log("dense: genosift fisher, scores and the full ranking")
    t_fr, _ = measure(lambda: gs.score(X, y, method="fisher").ranking)
    log("dense: float64 floor")
    t_floor64, _ = measure(lambda: X.sum(axis=0, dtype=np.float64))

    for name, t in (("fisher", t_fi), ("anova", t_an)):
        ratio, speed = t.best / t_floor.best, t_fc.best / t.best
        verdict = (f"{'PASS' if ratio <= 2 else 'FAIL'} (floor), "
                   f"{'PASS' if speed >= 2 else 'FAIL'} (f_classif)")
        rows.append(Row(case, f"genosift `{name}`", data, t, t_floor.best, t_fc.best,
                        "<= 2x floor and >= 2x faster than f_classif", verdict))
    rows.append(Row(case, "genosift `fisher`, scores + full `.ranking` (one stable argsort)", data, t_fr,
                    t_floor.best, t_fc.best))
    rows.append(Row(case, "floor in float64: `X.sum(axis=0, dtype=np.float64)`", data, t_floor64, t_floor.best))
    rows.append(Row(case, "sklearn `f_classif`", data, t_fc, t_floor.best, t_fc.best))

    # scikit-feature: the score computation (mode="index", a plain argsort) on the full data,
    # and its default call (mode="rank") on a column subset, since its rank conversion is O(p^2).
    try:
        from skfeature.function.similarity_based.fisher_score import fisher_score as skf_fisher
    except ImportError:
        skf_fisher = None
        checks.append(("scikit-feature", "not installed (`pip install skfeature-chappers`): rows skipped", ""))
    if skf_fisher is not None:
        log("dense: skfeature fisher_score(mode='index') on all features (slow)")
        t_skf, order_skf = measure(lambda: skf_fisher(X, y, mode="index"))
        rows.append(Row(case, "skfeature `fisher_score(X, y, mode=\"index\")`", data, t_skf,
                        t_floor.best, t_fc.best,
                        notes=["mode=\"index\" returns the feature indices best first: the same score computation "
                               "as the default call, without its rank conversion, which is O(p^2) in pure "
                               "Python (`skfeature.utility.util.reverse_argsort`)"]))
        top = min(1000, p // 10)
        overlap = len(np.intersect1d(np.asarray(order_skf)[:top], res_fi.ranking[:top])) / top
        checks.append((f"skfeature vs genosift fisher: overlap of the top {top} features",
                       f"{overlap:.1%}", "info"))

        q = min(args.skf_subset, p)
        Xq = np.ascontiguousarray(X[:, :q])
        log(f"dense: skfeature fisher_score default mode on first {q} features")
        t_skq, _ = measure(lambda: skf_fisher(Xq, y))
        # the matching genosift and f_classif timings on the same subset, for a fair ratio
        t_fiq, _ = measure(lambda: gs.score(Xq, y, method="fisher"))
        t_fcq, _ = measure(lambda: f_classif(Xq, y))
        sub = f"first {q:,} features only"
        rows.append(Row(case, "skfeature `fisher_score(X, y)` (default mode=\"rank\")", sub, t_skq,
                        None, t_fcq.best,
                        notes=[f"run on the first {q:,} columns only, because of the O(p^2) rank conversion; on "
                               f"that subset genosift fisher takes {fmt_t(t_fiq.best)} s and f_classif "
                               f"{fmt_t(t_fcq.best)} s; nothing is extrapolated to all features"]))
        del Xq

    # regression row
    log("dense: genosift pearson / sklearn r_regression")
    t_pe, res_pe = measure(lambda: gs.score(X, y_num, method="pearson"))
    t_rr, r_sk = measure(lambda: r_regression(X, y_num))
    rows.append(Row(case, "genosift `pearson` (numeric y)", data, t_pe, t_floor.best,
                    notes=[f"{t_rr.best / t_pe.best:.1f}x faster than r_regression"]))
    rows.append(Row(case, "sklearn `r_regression` (numeric y)", data, t_rr, t_floor.best,
                    notes=["converts float32 X to a float64 copy"]))
    breakdown(case, X, y_num, ("pearson",), phases)
    breakdown(case, X, y, ("fisher", "anova"), phases)

    # correctness
    log("dense: correctness checks")
    rel32, nf = max_rel_diff(res_an.statistic, F_sk)
    checks.append(("dense: anova F vs f_classif(float32 X), max relative difference "
                   f"({nf:,} finite features)", f"{rel32:.2e}",
                   "info: f_classif sums float32 input in float32; compare the float64 row"))
    X64 = X.astype(np.float64)
    F64, _ = f_classif(X64, y)
    rel64, _ = max_rel_diff(res_an.statistic, F64)
    rel_sk, _ = max_rel_diff(F_sk, F64)
    checks.append(("dense: anova F vs f_classif(float64 copy of X), max relative difference",
                   f"{rel64:.2e}", "PASS" if rel64 <= 1e-5 else "FAIL (rtol 1e-5)"))
    checks.append(("dense: f_classif(float32) vs f_classif(float64), max relative difference "
                   "(sklearn's own float32 error)", f"{rel_sk:.2e}", "info"))
    r64 = r_regression(X64, y_num)
    del X64
    checks.append(("dense: pearson r vs r_regression(float32 X), max abs difference",
                   f"{np.nanmax(np.abs(res_pe.statistic - r_sk)):.2e}", "info"))
    checks.append(("dense: pearson r vs r_regression(float64 copy of X), max abs difference",
                   f"{np.nanmax(np.abs(res_pe.statistic - r64)):.2e}", "info"))
    same = np.array_equal(res_fi.ranking, res_an.ranking)
    checks.append(("dense: fisher ranking == anova ranking (np.array_equal)", str(same),
                   "PASS" if same else "FAIL"))
    del X


def breakdown(label, X, y, methods, out):
    """Time genosift's two phases: ``statistics`` (validation, one-pass kernel, merge) and ``finish``
    (scores and p-values; q-values and the ranking are computed on first use). Best of ``REPEATS``;
    diagnostic only."""
    try:
        from genosift.scores import finish, statistics
    except ImportError:
        return
    for method in methods:
        t_st, (st, names) = measure(lambda: statistics(method, X, y))
        t_fin, _ = measure(lambda: finish(method, st, names))
        out.append((label, f"genosift `{method}`", t_st.best, t_fin.best))
        del st, names
    if methods[0] != "pearson":
        # for scale: one stable argsort of p float64 scores, which every ranking needs
        key = np.random.default_rng(0).random(X.shape[1])
        t_sort, _ = measure(lambda: np.argsort(-key, kind="stable"))
        out.append((label, "for scale: `np.argsort(-scores, kind=\"stable\")` of p float64", None, t_sort.best))


def run_sparse(args, rng, rows, checks, phases):
    from sklearn.feature_selection import f_classif

    import genosift as gs
    from genosift.core import engine

    n, p, density = 2000, args.p_sparse, 0.01
    case = f"sparse CSR {n} x {p:,}, density 1%, 3 classes"
    log(f"sparse: generating {n} x {p} CSR, density {density}")
    X, y = sparse_case(rng, n, p, density)
    data = "full"
    dense_f32 = n * p * 4
    limit = dense_f32 / 10

    tiny = X[:40, :64]
    for method in ("fisher", "anova"):
        gs.score(tiny, y[:40], method=method)

    log("sparse: floor X.sum(axis=0), sklearn f_classif and genosift fisher / anova on CSR and CSC, "
        "2 threads and 1, timed in turn")
    C = X.tocsc()
    gs.score(C[:40, :64], y[:40], method="fisher")

    def on_one_thread(fn):
        def run():
            previous = engine.set_threads(1)
            try:
                return fn()
            finally:
                engine.set_threads(previous)
        return run

    timed = measure_together([
        lambda: X.sum(axis=0),
        lambda: f_classif(X, y),
        lambda: gs.score(X, y, method="fisher"),
        lambda: gs.score(X, y, method="anova"),
        lambda: gs.score(C, y, method="fisher"),
        on_one_thread(lambda: gs.score(X, y, method="fisher")),
        on_one_thread(lambda: gs.score(C, y, method="fisher")),
    ])
    (t_floor, _), (t_fc, (F_sk, _)), (t_fi, res_fi), (t_an, res_an), (t_csc, _), (t_one, _), (t_one_csc, _) = timed
    rows.append(Row(case, "floor: `X.sum(axis=0)`", data, t_floor))
    log("sparse: genosift fisher, scores and the full ranking")
    t_fr, _ = measure(lambda: gs.score(X, y, method="fisher").ranking)
    log("sparse: genosift fisher, scores and the top 10 (partition, no full sort)")
    t_top, _ = measure(lambda: gs.score(X, y, method="fisher").top_indices(10))
    del C
    log("sparse: float64 floor")
    # scipy sums a float32 matrix in float32 even with dtype=np.float64 (its result is cast after):
    # the floor of a float64 accumulation is the sum of a float64 copy, made beforehand
    X64 = X.astype(np.float64)
    t_floor64, _ = measure(lambda: X64.sum(axis=0))
    del X64

    for label, t in (("`fisher`", t_fi), ("`anova`", t_an), ("`fisher` on CSC (`X.tocsc()`)", t_csc),
                     ("`fisher`, 1 thread", t_one), ("`fisher` on CSC, 1 thread", t_one_csc)):
        ratio = t.best / t_floor.best
        no_copy = t.peak_mb * 2**20 < limit
        rows.append(Row(case, f"genosift {label}", data, t, t_floor.best, t_fc.best,
                        f"<= 2x floor, >= 3x faster than f_classif, no dense copy (peak < {limit / 2**20:,.0f} MB)",
                        f"{'PASS' if ratio <= 2 else 'FAIL'} (floor), {'PASS' if t_fc.best >= 3 * t.best else 'FAIL'} "
                        f"(f_classif), {'PASS' if no_copy else 'FAIL'} (memory)"))
    rows.append(Row(case, "genosift `fisher`, scores + full `.ranking` (one stable argsort)", data, t_fr,
                    t_floor.best, t_fc.best))
    rows.append(Row(case, "genosift `fisher`, scores + `.top_indices(10)` (partition, no full sort)", data, t_top,
                    t_floor.best, t_fc.best))
    rows.append(Row(case, "floor in float64: `X64.sum(axis=0)`, `X64 = X.astype(np.float64)` made beforehand "
                    "(scipy sums float32 in float32, even with `dtype=np.float64`)", data, t_floor64, t_floor.best))
    rows.append(Row(case, "sklearn `f_classif`", data, t_fc, t_floor.best, t_fc.best))
    breakdown(case, X, y, ("fisher", "anova"), phases)

    rel, nf = max_rel_diff(res_an.statistic, F_sk)
    checks.append((f"sparse: anova F vs f_classif(float32 X), max relative difference ({nf:,} finite features)",
                   f"{rel:.2e}", "info: f_classif sums float32 input in float32; compare the float64 row"))
    X64 = X.astype(np.float64)  # still sparse
    F64, _ = f_classif(X64, y)
    del X64
    rel64, _ = max_rel_diff(res_an.statistic, F64)
    rel_sk, _ = max_rel_diff(F_sk, F64)
    checks.append(("sparse: anova F vs f_classif(float64 copy of X), max relative difference",
                   f"{rel64:.2e}", "PASS" if rel64 <= 1e-5 else "FAIL (rtol 1e-5)"))
    checks.append(("sparse: f_classif(float32) vs f_classif(float64), max relative difference "
                   "(sklearn's own float32 error)", f"{rel_sk:.2e}", "info"))
    same = np.array_equal(res_fi.ranking, res_an.ranking)
    checks.append(("sparse: fisher ranking == anova ranking (np.array_equal)", str(same),
                   "PASS" if same else "FAIL"))
    nbytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    checks.append(("sparse: size of X (data + indices + indptr) / one dense float64 copy (n*p*8)",
                   f"{nbytes / 2**20:,.0f} MB / {n * p * 8 / 2**20:,.0f} MB", "info"))
    return nbytes


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

def render(args, rows, checks, phases, loads, started, elapsed):
    if rows and all(r.timing.exact for r in rows):
        hwm_src = ("from the kernel's high-water mark VmHWM (reset before each call through "
                   "`/proc/self/clear_refs`), combined with 1 ms sampling of `/proc/self/statm`")
    else:
        hwm_src = ("sampled every ~1 ms from `/proc/self/statm` (the kernel's VmHWM reset was not "
                   "available: a lower bound, short spikes may be missed)")
    import numba

    libraries = ["scipy", "scikit-learn", ("numba", f"{version('numba')} (threads: {numba.get_num_threads()})"),
                 "skfeature-chappers"]
    out = header("genosift benchmark results", libraries=libraries, load=loads[0], started=started)
    out[-1:-1] = [f"- Seed: {SEED}; total run time {elapsed:.0f} s; 1-minute load average "
                  f"{loads[0][0]:.2f} at start, {loads[1][0]:.2f} at end (the runner itself adds up to ~2: "
                  "a start value well above 0 means other processes shared the CPUs)"]
    if args.quick:
        out += ["**Quick (smoke-test) run: reduced sizes, not the reference numbers.**", ""]
    out += [
        f"Time: best of {REPEATS} wall-clock runs (`time.perf_counter`) after one untimed run; "
        "genosift's numba kernels are compiled beforehand on a tiny slice of the same dtype and "
        f"format. Peak memory: peak RSS during the untimed run minus RSS just before it, {hwm_src}. "
        "x floor = time / time of `X.sum(axis=0)` on the same data; speedup = f_classif time / "
        "time (computed on the same data).",
        "",
        "| case | method | data | time (s) | x floor | speedup vs f_classif | peak RSS increment (MB) | target | "
        "result |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    notes = []
    for r in rows:
        t = r.timing
        ratio = f"{t.best / r.floor:.2f}" if r.floor else "-"
        speed = f"{r.f_classif / t.best:.2f}" if r.f_classif else "-"
        method = r.method
        if r.notes:
            notes.append("; ".join(r.notes))
            method += f" [{len(notes)}]"
        out.append(f"| {r.case} | {method} | {r.data} | {fmt_t(t.best)} | {ratio} | {speed} | "
                   f"{t.peak_mb:,.1f} | {r.target or '-'} | {r.verdict or '-'} |")
    out += [""] + [f"[{i}] {note}  " for i, note in enumerate(notes, 1)]
    if phases:
        out += ["", "## Where genosift's time goes", "",
                "`genosift.scores.statistics` (input checks, the one-pass kernel, merging of the "
                "per-class moments) and `genosift.scores.finish` (scores and p-values; q-values and the "
                "ranking are computed on first use, see the `.ranking` row), timed "
                "separately (best of the same number of runs).", "",
                "| case | what | statistics (s) | finish (s) |", "| --- | --- | ---: | ---: |"]
        out += [f"| {c} | {m} | {'-' if a is None else fmt_t(a)} | {fmt_t(b)} |" for c, m, a, b in phases]
    out += ["", "All timings (s):", ""]
    for r in rows:
        out.append(f"- {r.case} / {r.method}: " + ", ".join(fmt_t(x) for x in r.timing.times))
    out += ["", "## Correctness checks", "", "| check | value | result |", "| --- | --- | --- |"]
    out += [f"| {c} | {v} | {s} |" for c, v, s in checks]
    return "\n".join(out) + "\n"



def print_family(rows, checks):
    """A family module's rows and checks as markdown tables, when it runs alone."""
    print("| case | method | time (s) | x floor | peak RSS increment (MB) | target | result |")
    print("| --- | --- | ---: | ---: | ---: | --- | --- |")
    notes = []
    for r in rows:
        ratio = f"{r.timing.best / r.floor:.2f}" if r.floor else "-"
        name = r.method
        if r.notes:
            notes.append("; ".join(r.notes))
            name += f" [{len(notes)}]"
        print(f"| {r.case} | {name} | {fmt_t(r.timing.best)} | {ratio} | {r.timing.peak_mb:,.1f} | "
              f"{r.target or '-'} | {r.verdict or '-'} |")
    for i, note in enumerate(notes, 1):
        print(f"[{i}] {note}")
    print()
    print("| check | value | result |")
    print("| --- | --- | --- |")
    for c, v, s in checks:
        print(f"| {c} | {v} | {s} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="p / 10 in every case (smoke test)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per measurement (default 3)")
    ap.add_argument("--output", type=Path, default=None,
                    help="report path (default benchmarks/results/RESULTS.md, or RESULTS-quick.md with --quick)")
    ap.add_argument("--skip-sparse", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--skip-dense", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--families", default=",".join(FAMILIES),
                    help="comma-separated score families to add after the core cases "
                         f"(default: {','.join(FAMILIES)}; '' for none)")
    args = ap.parse_args(argv)
    global REPEATS
    REPEATS = max(1, args.repeats)
    scale = 10 if args.quick else 1
    args.p_dense = 100_000 // scale
    args.p_sparse = 1_000_000 // scale
    args.skf_subset = 10_000 // scale
    output = args.output or RESULTS / ("RESULTS-quick.md" if args.quick else "RESULTS.md")

    started = datetime.datetime.now().astimezone()
    t0 = time.perf_counter()
    rng = np.random.default_rng(SEED)
    rows, checks, phases = [], [], []
    load0 = os.getloadavg()
    if not args.skip_dense:
        run_dense(args, rng, rows, checks, phases)
        _release_free_memory()
    if not args.skip_sparse:
        run_sparse(args, rng, rows, checks, phases)
    for family in filter(None, args.families.split(",")):
        _release_free_memory()
        log(f"family: {family}")
        importlib.import_module(f"bench_{family}").run(rows, checks, quick=args.quick)
    loads = (load0, os.getloadavg())
    report = render(args, rows, checks, phases, loads, started, time.perf_counter() - t0)
    output.write_text(report)
    print(report)
    log(f"wrote {output}")


if __name__ == "__main__":
    sys.modules.setdefault("run", sys.modules["__main__"])  # bench_* modules import this runner as `run`
    main()
