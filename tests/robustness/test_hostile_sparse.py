"""Crafted sparse structures never reach a kernel: every reader, the store and every method.

A sparse matrix whose indices point past its arrays crashed the process (segmentation fault) or
gave wrong scores. Each crafted file here is read, and each registered method run on it, in a
child process, so that a crash fails the test instead of ending the test run; the parent asserts
that every case ended in the named error.
"""
import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from plain_methods import plain

import genosift as gs
from genosift.core.sparse_check import check_sparse_matrix, check_sparse_structure

METHODS = plain(gs.methods().index)
FAULTS = ("index too high", "negative index", "pointer decreases", "pointer end", "unsorted")


def _valid(seed=0, n=24, p=9):
    rng = np.random.RandomState(seed)
    dense = np.ceil(sp.random(n, p, density=0.4, random_state=rng).toarray() * 7)
    dense[np.arange(n), np.arange(n) % p] = 3.0  # every row has an entry
    X = sp.csr_matrix(dense)
    return X, np.arange(n) % 2


def _crafted(indptr, indices, fault, n_minor):
    """``(indptr, indices)`` copies with one fault of the kind named."""
    indptr, indices = indptr.copy(), indices.copy()
    row = int(np.flatnonzero(np.diff(indptr) >= 2)[0])  # a row (or column) with two entries
    k = int(indptr[row])
    if fault == "index too high":
        indices[k] = 10**9 if indices.dtype.itemsize > 4 or 10**9 < np.iinfo(indices.dtype).max else n_minor
    elif fault == "negative index":
        indices[k] = -1
    elif fault == "pointer decreases":
        indptr[row + 1] = indptr[row] - 1
    elif fault == "pointer end":
        indptr[-1] += 5
    elif fault == "unsorted":
        indices[k], indices[k + 1] = indices[k + 1], indices[k]
    return indptr, indices


# --------------------------------------------------------------------------------------------
# the checker itself, against the structures scipy would build


@pytest.mark.parametrize("fault", FAULTS[:4])
def test_check_names_the_fault_and_position(fault):
    X, _ = _valid()
    indptr, indices = _crafted(X.indptr, X.indices, fault, X.shape[1])
    with pytest.raises(ValueError, match=r"Cannot read '.*bad\.npz' as a test file: .*(index|pointer)"):
        check_sparse_structure(indptr, indices, *X.shape, nnz=X.nnz, path="/d/bad.npz", fmt="a test file")


def test_check_unsorted_only_when_asked():
    X, _ = _valid()
    indptr, indices = _crafted(X.indptr, X.indices, "unsorted", X.shape[1])
    check_sparse_structure(indptr, indices, *X.shape)  # valid, not canonical
    with pytest.raises(ValueError, match="not greater than the one before it"):
        check_sparse_structure(indptr, indices, *X.shape, sorted_indices=True)


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.uint32, np.uint64])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_check_reports_sorted_rows_and_marks_canonical(dtype, fmt):
    """The check tells whether every row's indices increase strictly (scipy's canonical form),
    for every index type, and marks such a matrix canonical; an unsorted or repeated index is
    valid but not canonical, and the matrix keeps scipy's own verdict."""
    X, _ = _valid(3)
    X = X.asformat(fmt)
    major, minor = X.shape if fmt == "csr" else X.shape[::-1]
    indptr, indices = X.indptr.astype(np.int64), X.indices.astype(dtype)
    assert check_sparse_structure(indptr, indices, major, minor) is True
    swapped = _crafted(indptr, indices, "unsorted", minor)
    twice = indices.copy()
    k = int(indptr[np.flatnonzero(np.diff(indptr) >= 2)[0]])
    twice[k + 1] = twice[k]
    for bad_ptr, bad_idx in (swapped, (indptr, twice)):
        assert check_sparse_structure(bad_ptr, bad_idx, major, minor) is False
        with pytest.raises(ValueError, match="not greater than the one before it"):
            check_sparse_structure(bad_ptr, bad_idx, major, minor, sorted_indices=True)
    M = type(X)((X.data, indices, indptr), shape=X.shape)
    M._has_canonical_format = M._has_sorted_indices = False  # unknown until checked
    assert check_sparse_matrix(M).has_canonical_format
    U = type(X)((X.data, twice, indptr), shape=X.shape)
    assert not check_sparse_matrix(U).has_canonical_format


def _first_fault_reference(indptr, indices, n_minor):
    """The first fault, row by row in plain Python/numpy: ``(kind, position)`` or None."""
    for r in range(indptr.size - 1):
        a, b = int(indptr[r]), int(indptr[r + 1])
        if b < a or a < 0:
            return "decreases after position", r
        if b > indices.size:
            return "passes the end of the indices at position", r + 1
        row = indices[a:b].astype(np.int64)
        hits = [(int(at[0]), kind) for at, kind in ((np.flatnonzero((row < 0) | (row >= n_minor)), "outside"),
                                                    (np.flatnonzero(np.diff(row) <= 0) + 1, "not greater"))
                if at.size]
        if hits:
            at, kind = min(hits)
            return kind, a + at
    return None


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.uint16, np.uint32])
def test_flat_summary_of_indices_equals_numpy(dtype):
    """The pass behind every check: lowest (at most 0), highest (at least -1) and the positions
    not above their neighbour, for every run of an array, empty and one-entry runs included."""
    from genosift.core.sparse_check import _entries_in

    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    indices = rng.integers(max(info.min, -50), min(info.max, 10**6), 300).astype(dtype)
    indices[[40, 41]] = indices[39]  # equal neighbours are drops too
    for a, b in ((0, 300), (0, 0), (7, 7), (0, 1), (299, 300), (13, 14), (1, 200), (150, 151), (39, 42)):
        run = indices[a:b].astype(np.int64)
        after = indices[max(a, 1):b].astype(np.int64)
        before = indices[max(a, 1) - 1:][:after.size].astype(np.int64)
        drops = int(np.count_nonzero(after <= before))
        want = (min(0, run.min(initial=0)), max(-1, run.max(initial=-1)), drops)
        assert tuple(int(v) for v in _entries_in(indices, a, b)) == want, (a, b)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("rows", [5_000, 100_000])  # one run, and runs on threads (> 2**20 entries)
def test_row_starts_at_every_place_of_the_chunks(rows, threads):
    """Short rows (as CSC columns of a few entries are) whose starts fall on chunk edges and
    inside chunks, on one thread and on several: a fall between two rows is no fault, one inside
    a row is, wherever it lies."""
    from genosift.core import engine
    from genosift.core import sparse_check as _sparse_check

    lengths = np.resize(np.array([16, 16, 0, 1, 7, 31, 16, 9]), rows)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    indices = (np.arange(indptr[-1]) - np.repeat(indptr[:-1], lengths)).astype(np.int32) * 2
    previous = engine.set_threads(threads)
    try:
        assert check_sparse_structure(indptr, indices, rows, 64, sorted_indices=True) is True
        chunk = _sparse_check._CHUNK
        inside = [int(indptr[r]) + 1 for r in range(rows) if lengths[r] > 1]
        for at in (min(inside, key=lambda q: abs(q - chunk)), min(inside, key=lambda q: abs(q - 3 * chunk)),
                   inside[-1]):
            bad = indices.copy()
            bad[at] = bad[at - 1]
            assert check_sparse_structure(indptr, bad, rows, 64) is False
            with pytest.raises(ValueError, match=f"position {at}"):
                check_sparse_structure(indptr, bad, rows, 64, sorted_indices=True)
    finally:
        engine.set_threads(previous)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_check_of_a_large_structure_names_its_first_fault(seed, threads):
    """Beyond a million indices the rows are checked in runs on the engine's threads; the fault
    named is still the first one, wherever the faults lie (the same message as row by row)."""
    from genosift.core import engine

    rng = np.random.default_rng(seed)
    n, per, p = 160, 7000, 50_000
    indices = np.concatenate([np.sort(rng.choice(p, per, replace=False)) for _ in range(n)]).astype(np.int32)
    indptr = np.arange(n + 1, dtype=np.int64) * per
    assert indices.size > 2**20
    rows = sorted(rng.choice(n, 2, replace=False))
    for r, kind in zip(rows, rng.permutation(["index", "order", "pointer", "negative"])[:2]):
        at = int(indptr[r]) + int(rng.integers(1, per))
        if kind == "index":
            indices[at] = p + 3
        elif kind == "negative":
            indices[at] = -2
        elif kind == "order":
            indices[at] = indices[at - 1]
        else:
            indptr[r + 1] = indptr[r] - 1
    kind, where = _first_fault_reference(indptr, indices, p)
    old = engine.set_threads(threads)
    try:
        with pytest.raises(ValueError) as caught:
            check_sparse_structure(indptr, indices, n, p, sorted_indices=True)
        # from a worker thread (the blocks of a store scored side by side): one thread, the same fault
        with ThreadPoolExecutor(1) as pool:
            worker = pool.submit(check_sparse_structure, indptr, indices, n, p, sorted_indices=True).exception()
    finally:
        engine.set_threads(old)
    for message in (str(caught.value), str(worker)):
        assert kind in message and f"position {where}" in message, (kind, where, message)


@pytest.mark.parametrize("seed", range(20))
def test_check_agrees_with_scipy_full_check(seed):
    """Random corruptions: our check fails exactly when scipy's full check does (or the pointer is off)."""
    rng = np.random.RandomState(seed)
    X, _ = _valid(seed)
    indptr, indices = X.indptr.copy(), X.indices.copy()
    target = rng.randint(3)
    if target == 0:
        indices[rng.randint(indices.size)] = rng.randint(-3, X.shape[1] + 3)
    elif target == 1:
        indptr[rng.randint(1, indptr.size - 1)] = rng.randint(0, X.nnz + 1)
    else:
        indptr[-1] = rng.randint(X.nnz - 2, X.nnz + 3)
    M = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)
    M.indptr, M.indices = indptr, indices  # as a file would give them: no constructor check
    try:
        M.check_format(full_check=True)
        scipy_ok = True
    except ValueError:
        scipy_ok = False
    try:
        check_sparse_matrix(M)
        ours_ok = True
    except ValueError as exc:
        ours_ok = False
        assert str(exc).startswith("X is not a valid sparse matrix")
    assert ours_ok == scipy_ok


def test_coo_bsr_and_lengths():
    X, _ = _valid()
    coo = X.tocoo(copy=True)
    coo.coords[1][3] = 99  # in place, as a file's arrays would be: no constructor check
    with pytest.raises(ValueError, match="column index 99 at position 3 is outside 0..8"):
        check_sparse_matrix(coo)
    bsr = sp.bsr_matrix(X.toarray()[:, :8], blocksize=(2, 2))
    bsr.indices[0] = 4
    with pytest.raises(ValueError, match="index 4 .* outside 0..3"):
        check_sparse_matrix(bsr)
    M = X.copy()
    M.data = M.data[:-1]
    with pytest.raises(ValueError, match=f"{X.nnz - 1} stored values but {X.nnz} indices"):
        check_sparse_matrix(M)
    for fmt in ("lil", "dok", "dia"):
        assert check_sparse_matrix(X.asformat(fmt)) is not None


# --------------------------------------------------------------------------------------------
# every reader and every method, in a child process

CHILD = textwrap.dedent(r"""
    import json, os, sys, warnings
    import numpy as np, scipy.sparse as sp, h5py
    import genosift as gs
    from genosift.io import Dataset, read, write_store
    from genosift.scoring.store import score_store
    sys.path[:0] = [{here!r}, {tests!r}]
    from test_hostile_sparse import FAULTS, METHODS, _crafted, _valid

    warnings.simplefilter("ignore")
    tmp = {tmp!r}
    X, y = _valid()
    n, p = X.shape
    out = {{}}

    def outcome(fn):
        try:
            fn()
            return "no error"
        except ValueError as exc:
            return "ValueError: " + str(exc)
        except Exception as exc:
            return f"{{type(exc).__name__}}: {{exc}}"

    def bad_matrix(fmt, fault):
        M = X.asformat(fmt).copy()
        major, minor = (n, p) if fmt == "csr" else (p, n)
        indptr, indices = _crafted(M.indptr, M.indices, fault, minor)
        M.indptr, M.indices = indptr, indices  # as arrays read from a file: no constructor check
        return M

    # the caller's own matrices, every method
    for fmt in ("csr", "csc"):
        for fault in FAULTS[:4]:
            M = bad_matrix(fmt, fault)
            for m in METHODS:
                out[f"memory {{fmt}} {{fault}} {{m}}"] = outcome(lambda: gs.score(M, y, method=m))

    # files
    import anndata
    for fmt in ("csr", "csc"):
        for fault in FAULTS[:4]:
            M = bad_matrix(fmt, fault)
            path = os.path.join(tmp, f"bad-{{fmt}}-{{fault.replace(' ', '_')}}.npz")
            sp.save_npz(path, M, compressed=False)
            out[f"npz {{fmt}} {{fault}}"] = outcome(lambda: read(path))
            path = os.path.join(tmp, f"bad-{{fmt}}-{{fault.replace(' ', '_')}}.h5ad")
            good = X.asformat(fmt)
            anndata.AnnData(good, layers={{"counts": good.copy()}}).write_h5ad(path)
            with h5py.File(path, "r+") as f:
                for key in ("X", "layers/counts"):
                    g = f[key]
                    indptr, indices = _crafted(g["indptr"][()], g["indices"][()], fault, p if fmt == "csr" else n)
                    del g["indptr"], g["indices"]
                    g["indptr"], g["indices"] = indptr, indices
            out[f"h5ad {{fmt}} {{fault}}"] = outcome(lambda: read(path))
            out[f"h5ad layer {{fmt}} {{fault}}"] = outcome(lambda: read(path, layer="counts"))
    path = os.path.join(tmp, "bad.mtx")
    with open(path, "w") as fh:
        fh.write("%%MatrixMarket matrix coordinate integer general\n3 2 2\n1 1 5\n3 1000000000 2\n")
    out["mtx index too high"] = outcome(lambda: read(path))

    # stores: the CSR rows and the column copy, every method
    import pandas as pd
    ds = Dataset(X, np.array([f"s{{i}}" for i in range(n)]), np.array([f"f{{j}}" for j in range(p)]),
                 pd.DataFrame({{"label": y}}, index=[f"s{{i}}" for i in range(n)]))
    valid = os.path.join(tmp, "valid.gs.h5ad")
    write_store(ds, valid)
    works = {{m: outcome(lambda: score_store(valid, "label", method=m)) == "no error" for m in METHODS}}
    out["store methods that work"] = [m for m in METHODS if works[m]]
    for part, key, minor in (("rows", "X", p), ("columns", "var/_genosift_columns", n)):
        for fault in FAULTS:
            path = os.path.join(tmp, f"bad-store-{{part}}-{{fault.replace(' ', '_')}}.gs.h5ad")
            write_store(ds, path)
            with h5py.File(path, "r+") as f:
                g = f[key]
                indptr, indices = _crafted(g["indptr"][()], g["indices"][()], fault, minor)
                g["indptr"][...] = indptr
                g["indices"][...] = indices
            for m in METHODS:
                if works[m]:
                    for budget in (None, 200):
                        out[f"store {{part}} {{fault}} {{m}} {{budget}}"] = outcome(
                            lambda: score_store(path, "label", method=m, chunk_bytes=budget))
            out[f"store {{part}} {{fault}} read"] = outcome(lambda: read(path))
            out[f"store {{part}} {{fault}} read_columns"] = outcome(
                lambda: gs.io.open_store(path).read_columns([0, 3, 4]))
    # headers that lie about the shape
    for name, edit in (("more columns", lambda f: f["X"].attrs.__setitem__("shape", np.array([n, 2**40]))),
                       ("three sizes", lambda f: f["X"].attrs.__setitem__("shape", np.array([n, p, 1]))),
                       ("negative", lambda f: f["X"].attrs.__setitem__("shape", np.array([n, -p]))),
                       ("more rows", lambda f: f["X"].attrs.__setitem__("shape", np.array([n + 1, p]))),
                       ("column copy short", lambda f: f["var/_genosift_columns/indptr"].resize((p,)) if
                        f["var/_genosift_columns/indptr"].maxshape[0] is None else
                        (f["var/_genosift_columns"].__delitem__("indptr"),
                         f["var/_genosift_columns"].create_dataset("indptr", data=np.zeros(p, dtype=np.int64))))):
        path = os.path.join(tmp, f"lying-{{name.replace(' ', '_')}}.gs.h5ad")
        write_store(ds, path)
        with h5py.File(path, "r+") as f:
            edit(f)
        out[f"header {{name}}"] = outcome(lambda: gs.io.open_store(path))
    json.dump(out, sys.stdout)
""")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    pytest.importorskip("anndata")
    tmp = tmp_path_factory.mktemp("hostile")
    here = __import__("pathlib").Path(__file__).resolve().parent
    code = CHILD.format(here=str(here), tests=str(here.parent), tmp=str(tmp))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"the child process ended with {proc.returncode}: {proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_refuses_a_crafted_matrix(outcomes, method):
    for fmt in ("csr", "csc"):
        for fault in FAULTS[:4]:
            got = outcomes[f"memory {fmt} {fault} {method}"]
            assert got.startswith("ValueError: X is not a valid sparse matrix"), (fmt, fault, got)


@pytest.mark.parametrize("reader", ["npz", "h5ad", "h5ad layer"])
def test_every_sparse_reader_refuses_crafted_files(outcomes, reader):
    for fmt in ("csr", "csc"):
        for fault in FAULTS[:4]:
            got = outcomes[f"{reader} {fmt} {fault}"]
            assert got.startswith("ValueError: Cannot read ") and f"bad-{fmt}-" in got, (fmt, fault, got)
            assert "damaged" in got or "not written by a compatible tool" in got, got


def test_matrix_market_out_of_range(outcomes):
    got = outcomes["mtx index too high"]
    assert got.startswith("ValueError: Cannot read ") and "bad.mtx" in got, got


@pytest.mark.parametrize("part", ["rows", "columns"])
def test_store_refuses_crafted_structure_for_every_method(outcomes, part):
    """Row-streaming methods read the CSR rows; whole-column methods, and the class-moment ones
    (``scoring.store.by_features``), the column copy: each refuses a fault in the part it reads,
    whatever the chunk budget."""
    from genosift.scores import REGISTRY
    from genosift.stats import ClassMoments

    working = outcomes["store methods that work"]
    streaming = gs.methods()["streaming"]
    assert set(working) == set(plain(streaming.index[streaming != "matrix"])), working
    by_columns = {m for m in working if streaming[m] == "blocks" or REGISTRY[m].statistic is ClassMoments}
    readers = [m for m in working if (m in by_columns) == (part == "columns")]
    assert readers
    for fault in FAULTS:
        for method in readers:
            for budget in (None, 200):
                got = outcomes[f"store {part} {fault} {method} {budget}"]
                assert got.startswith("ValueError: Cannot read ") and f"bad-store-{part}-" in got, \
                    (fault, method, budget, got)
                assert "as a store" in got, got
        # reading the store whole reads its rows; reading some columns reads the column copy
        got = outcomes[f"store {part} {fault} {'read' if part == 'rows' else 'read_columns'}"]
        assert got.startswith("ValueError: Cannot read ") and "as a store" in got, (fault, got)


@pytest.mark.parametrize("name", ["more columns", "three sizes", "negative", "more rows", "column copy short"])
def test_store_headers_that_lie(outcomes, name):
    got = outcomes[f"header {name}"]
    assert got.startswith("ValueError: Cannot read ") and "as a store" in got, got


@pytest.mark.parametrize("method", ["auc", "welch"])
def test_command_line_names_the_damaged_file(tmp_path, method):
    """The command line ends with one line naming the file and exit code 1, never a crash."""
    X, y = _valid()
    M = X.copy()
    M.indices = _crafted(X.indptr, X.indices, "index too high", X.shape[1])[1]
    sp.save_npz(tmp_path / "bad.npz", M, compressed=False)
    (tmp_path / "bad.samples.txt").write_text("".join(f"s{i}\n" for i in range(X.shape[0])))
    (tmp_path / "pheno.tsv").write_text("id\tlabel\n" + "".join(f"s{i}\t{v}\n" for i, v in enumerate(y)))
    proc = subprocess.run([sys.executable, "-m", "genosift", "score", str(tmp_path / "bad.npz"), "--meta",
                           str(tmp_path / "pheno.tsv"), "--id", "id", "--target", "label", "--method", method,
                           "-o", str(tmp_path / "out.tsv")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1 and "bad.npz' as a scipy.sparse .npz file: the index 1000000000" \
        in proc.stderr, proc.stderr
    assert not (tmp_path / "out.tsv").exists()
