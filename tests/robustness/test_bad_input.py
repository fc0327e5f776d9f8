"""Bad input at every public entry point: a clear error, or a documented result.

The tables below map each case either to the exception it raises and a regex its message must
match (the message names the problem and the fix, in genosift's own words), or to a documented
result checked against an independent reference (numpy, scipy, scikit-learn) or against the
same data in a well-behaved form. The entry points: every registered method through
``genosift.score``, every selector, every command of the CLI (in process: exit code 1 for data
errors, 2 for usage errors, the message on stderr), and every reader of ``genosift.io.READERS``.
The policy itself is written down in the README section "Bad input and the NaN policy".
"""
from __future__ import annotations

import gzip
import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import scipy.stats as st
from plain_methods import plain
from sklearn.feature_selection import SelectKBest as SkSelectKBest
from sklearn.feature_selection import chi2 as sk_chi2
from sklearn.feature_selection import f_classif
from sklearn.linear_model import LogisticRegression

import genosift as gs
from genosift.cli import main
from genosift.stats import ClassMoments, CoMoments

METHODS = plain(gs.methods().index)
SPECS = {m: gs.get_method(m) for m in METHODS}
#: methods built on means and sums of squares: values whose squares leave float64 are an error
MOMENT_METHODS = [m for m in METHODS if SPECS[m].statistic in (ClassMoments, CoMoments)]
SUPERVISED = [m for m in METHODS if SPECS[m].task != "unsupervised"]


def _data(n=24, p=5, seed=0):
    """Positive values (counts-like, so chi2_counts applies), two balanced classes, feature 0 informative."""
    rng = np.random.default_rng(seed)
    X = rng.gamma(2.0, size=(n, p))
    X[:, 0] += np.repeat([0.0, 3.0], n // 2)
    return X, np.repeat([0, 1], n // 2)


def _with(a, index, value, dtype=None):
    a = np.array(a, dtype=dtype if dtype is not None else np.asarray(a).dtype)
    a[index] = value
    return a


def _frame(X, names=None):
    return pd.DataFrame(X, columns=names or [f"f{j}" for j in range(X.shape[1])])


def _object_cell(X):
    M = X.astype(object)
    M[0, 1] = "x"
    return M


def _text_column(X):
    frame = _frame(X)
    frame["f1"] = frame["f1"].astype(str)
    frame.loc[0, "f1"] = "n/a"
    return frame


def _missing_label(y):
    y = y.astype(object)
    y[4] = None
    return y


def _same(a, b, rtol=1e-12):
    """Equal arrays (NaN where the other is NaN), or both None."""
    if a is None or b is None:
        assert a is None and b is None
        return
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0, equal_nan=True)


# --------------------------------------------------------------------------------------------
# genosift.score: every registered method
# --------------------------------------------------------------------------------------------

#: case -> (make (X, y) from the clean data, exception, message regex); the same for every
#: supervised method. Names 'x1' are the default feature names; frames give their own.
SCORE_ERRORS = {
    "NaN in X": (lambda X, y: (_with(X, (2, 1), np.nan), y), ValueError,
                 r"X contains NaN or infinity in feature\(s\) 'x1'\. Remove or impute missing values"),
    "inf in X": (lambda X, y: (_with(X, (2, 3), np.inf), y), ValueError,
                 r"X contains NaN or infinity in feature\(s\) 'x3'\. Remove or impute"),
    "-inf in X": (lambda X, y: (_with(X, (0, 0), -np.inf), y), ValueError,
                  r"X contains NaN or infinity in feature\(s\) 'x0'\."),
    "NaN in y": (lambda X, y: (X, _with(y, 3, np.nan, float)), ValueError,
                 r"y contains NaN or infinity at positions \[3\]\. Drop those samples or give them a label"),
    "inf in y": (lambda X, y: (X, _with(y, 5, np.inf, float)), ValueError,
                 r"y contains NaN or infinity at positions \[5\]\."),
    "missing label": (lambda X, y: (X, _missing_label(y)), ValueError,
                      r"y has missing labels at positions \[4\]\. Drop those samples or label them"),
    "no samples": (lambda X, y: (X[:0], y[:0]), ValueError,
                   r"X is empty: 0 samples x 5 features\. Scoring needs at least one sample"),
    "no features": (lambda X, y: (X[:, :0], y), ValueError,
                    r"X is empty: 24 samples x 0 features\. Scoring needs at least one sample and one feature"),
    "length mismatch": (lambda X, y: (X, y[:-1]), ValueError,
                        r"X and y have different numbers of samples: X has 24 rows, y has 23 values\. "
                        r"Pass one label per row of X"),
    "non-numeric cell": (lambda X, y: (_object_cell(X), y), TypeError,
                         r"X holds a value that is not a number \(could not convert string to float: 'x'\)\. "
                         r"Encode or drop"),
    "non-numeric column": (lambda X, y: (_text_column(X), y), TypeError,
                           r"X has non-numeric columns 'f1'\. Encode or drop them"),
    "duplicated feature names": (lambda X, y: (_frame(X, ["a", "b", "a", "c", "d"]), y), ValueError,
                                 r"X has duplicated feature names: 'a' \(2 times\)\. Each feature needs its own name"),
    "y of the wrong shape": (lambda X, y: (X, np.c_[y, y]), ValueError, r"y must be 1-D, one label per sample"),
    "1-D X": (lambda X, y: (X[:, 0], y), ValueError, r"X must be 2-D .* use X\.reshape\(-1, 1\)"),
    "complex X": (lambda X, y: (X.astype(complex), y), TypeError,
                  r"X has dtype complex128, which is not a real number"),
}


@pytest.mark.parametrize("case", list(SCORE_ERRORS))
@pytest.mark.parametrize("method", SUPERVISED)
def test_score_bad_input_is_a_clear_error(method, case):
    make, exc, message = SCORE_ERRORS[case]
    X, y = make(*_data())
    with pytest.raises(exc, match=message):
        gs.score(X, y, method=method)


def _one_sample_message(spec):
    if spec.task == "classification":
        return (rf"y has only one class \(.*0.*\) in 1 sample\(s\); method '{spec.name}' compares classes "
                "and needs at least two")
    return rf"Method '{spec.name}' needs at least 2 samples; got 1"


def _one_class_message(spec):
    if spec.task == "classification":
        return (rf"y has only one class \(.*1.*\) in 24 sample\(s\); method '{spec.name}' compares classes "
                r".* Check the labels")
    return rf"y is constant.*: method '{spec.name}' needs a target that varies"


@pytest.mark.parametrize("method", SUPERVISED)
def test_score_one_sample_and_one_class(method):
    X, y = _data()
    with pytest.raises(ValueError, match=_one_sample_message(SPECS[method])):
        gs.score(X[:1], y[:1], method=method)
    with pytest.raises(ValueError, match=_one_class_message(SPECS[method])):
        gs.score(X, np.ones(24, dtype=int), method=method)


def test_unsupervised_method_ignores_y_and_scores_one_sample_as_zero():
    """Documented: 'variance' takes no target (y, even NaN or of another length, is not read)."""
    X, y = _data()
    for bad_y in (None, _with(y, 3, np.nan, float), y[:-1]):
        _same(gs.score(X, bad_y, method="variance").scores, np.var(X, axis=0))
    _same(gs.score(X[:1], method="variance").scores, np.zeros(5))
    with pytest.raises(ValueError, match=SCORE_ERRORS["NaN in X"][2]):
        gs.score(_with(X, (2, 1), np.nan), method="variance")


@pytest.mark.parametrize("method", SUPERVISED)
def test_labels_as_floats_bools_strings_and_plus_minus_one_give_the_same_scores(method):
    """Documented: labels are labels, whatever their type; two classes compare classes[1] (sorted) with classes[0]."""
    X, y = _data()
    ref = gs.score(X, y, method=method)
    for labels in (y.astype(float), y.astype(bool), np.where(y == 1, "b", "a"), 2 * y - 1, list(y)):
        res = gs.score(X, labels, method=method)
        _same(res.scores, ref.scores, rtol=1e-9)
        _same(res.statistic, ref.statistic, rtol=1e-9)
        _same(res.pvalues, ref.pvalues, rtol=1e-9)


def test_two_class_scores_match_scipy_whatever_the_label_type():
    X, y = _data()
    for labels in (y.astype(bool), np.where(y == 1, "b", "a"), 2 * y - 1):
        res = gs.score(X, labels, method="welch")
        t, p = st.ttest_ind(X[y == 1], X[y == 0], equal_var=False)
        _same(res.statistic, t, rtol=1e-10)
        _same(res.pvalues, p, rtol=1e-8)


def _constant_columns(X):
    X = X.copy()
    X[:, 2] = 3.0  # constant
    X[:, 3] = 0.0  # all zero
    return X


@pytest.mark.parametrize("method", METHODS)
def test_constant_and_all_zero_features_score_nan_and_rank_last(method):
    """Documented: a feature that does not vary has no score (NaN; 'variance' gives 0) and ranks last."""
    X, y = _data()
    if method == "fisher_exact":  # it tests presence, a value above 0: some values must be 0
        X[::3, [0, 1, 4]] = 0.0
    Xc = _constant_columns(X)
    res = gs.score(Xc, None if method == "variance" else y, method=method)
    expected = 0.0 if method == "variance" else np.nan
    _same(res.scores[[2, 3]], [expected, expected])
    assert np.isfinite(res.scores[[0, 1, 4]]).all()
    assert sorted(res.ranking[-2:]) == [2, 3]
    if res.pvalues is not None:
        assert np.isnan(res.pvalues[[2, 3]]).all() and np.isnan(res.qvalues[[2, 3]]).all()
    sparse = gs.score(sp.csr_matrix(Xc), None if method == "variance" else y, method=method)
    _same(sparse.scores, res.scores, rtol=1e-9)


def _three_classes(y):
    y = y.copy()
    y[0] = 2  # a class of one sample
    return y


@pytest.mark.parametrize("method", SUPERVISED)
def test_a_class_of_one_sample(method):
    """Two-class methods refuse a third class; the others score it (checked against scipy where it has the test)."""
    X, y = _data()
    y3 = _three_classes(y)
    spec = SPECS[method]
    if spec.binary_only:
        with pytest.raises(ValueError,
                           match=rf"Method '{method}' compares two classes, but y has 3: .* keep two classes"):
            gs.score(X, y3, method=method)
        return
    res = gs.score(X, y3, method=method)
    assert np.isfinite(res.scores).all()
    groups = [X[y3 == c] for c in (0, 1, 2)]
    per_column = lambda test: tuple(np.array([test(X[:, j], y3) for j in range(X.shape[1])]).T)  # noqa: E731
    reference = {
        "anova": lambda: st.f_oneway(*groups),
        "kruskal": lambda: st.kruskal(*groups),
        "pearson": lambda: per_column(st.pearsonr),
        "spearman": lambda: per_column(st.spearmanr),
        "kendall": lambda: per_column(st.kendalltau),
        "chi2_counts": lambda: sk_chi2(X, y3),
    }
    if method in reference:
        stat, p = reference[method]()
        _same(res.statistic, stat, rtol=1e-8)
        _same(res.pvalues, p, rtol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_huge_integer_counts_are_exact(method):
    """Counts above 2**32 in int64: the same scores as their float64 copy (no overflow), and
    anova / chi2_counts match scipy / scikit-learn."""
    X, y = _data()
    counts = np.round(X * 2**33).astype(np.int64)  # up to ~1e11
    assert counts.max() > 2**32
    target = None if method == "variance" else y
    res = gs.score(counts, target, method=method)
    ref = gs.score(counts.astype(np.float64), target, method=method)
    _same(res.scores, ref.scores, rtol=1e-12)
    _same(res.pvalues, ref.pvalues, rtol=1e-12)
    if method == "anova":
        _same(res.statistic, st.f_oneway(counts[y == 0].astype(float), counts[y == 1].astype(float)).statistic,
              rtol=1e-10)
    if method == "chi2_counts":
        _same(res.statistic, sk_chi2(counts.astype(float), y)[0], rtol=1e-10)
    if method == "variance":
        _same(res.scores, np.var(counts.astype(float), axis=0), rtol=1e-10)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
@pytest.mark.parametrize("method", METHODS)
def test_very_large_and_very_small_magnitudes(method, scale):
    """Moment methods cannot square such values in float64: a clear error naming the features
    and the fix. The others give the scores of the unscaled data (they are scale-free), and
    chi2_counts, which scales with x, gives scale times scikit-learn's chi2 of the unscaled data."""
    X, y = _data()
    target = None if method == "variance" else y
    if method in MOMENT_METHODS:
        message = (r"X has values too large to square in float64 in feature\(s\) 'x0', .* Rescale" if scale > 1
                   else r"X has values too close together to square in float64 in feature\(s\) 'x0', .* Rescale")
        with pytest.raises(ValueError, match=message):
            gs.score(X * scale, target, method=method)
        return
    res = gs.score(X * scale, target, method=method)
    if method == "chi2_counts":
        _same(res.statistic, sk_chi2(X, y)[0] * scale, rtol=1e-12)
        return
    ref = gs.score(X, target, method=method)
    _same(res.scores, ref.scores, rtol=1e-6 if method == "linear" else 1e-9)
    _same(res.pvalues, ref.pvalues, rtol=1e-9)


def test_chi2_counts_up_to_the_float64_limit():
    """Counts whose totals come near 1.8e308 (n times the largest passing it): the statistic of the
    data divided by a power of two, multiplied back (it is linear in the counts), not 0 with p = 1;
    counts whose class sums pass the limit: an error that says so."""
    X, y = _data()
    X = np.abs(X)
    # n * max|x| between 2**1024 and 2**1025 (beyond the limit), every class sum within it
    scale = 2.0 ** (1024 - np.frexp(len(y) * X.max())[1])
    with np.errstate(over="ignore"):
        assert np.isinf(len(y) * X.max() * scale * 2) and np.isfinite(X.sum(axis=0).max() * scale * 2)
    res = gs.score(X * scale * 2, y, method="chi2_counts")
    with np.errstate(over="ignore"):
        _same(res.statistic, sk_chi2(X, y)[0] * scale * 2, rtol=1e-12)
    assert (res.pvalues[np.isfinite(res.statistic)] < 1).all()
    with pytest.raises(ValueError, match=r"X has values too large to add up in float64 in feature\(s\) .*: their "
                                         r"class sums pass 1\.8e308 .* Divide those features by a constant"):
        gs.score(X * 1e307, y, method="chi2_counts")


REGRESSION = [m for m in METHODS if SPECS[m].task == "regression"]


@pytest.mark.parametrize("method", REGRESSION)
def test_a_numeric_target_beyond_squares_is_refused_or_ranked(method):
    """A target as large as 1e160: its squares overflow, so every method that computes with its
    values refuses it (it gave p = 0, or r = 0, for every feature); rank methods score it as the
    same target divided by 1e160."""
    X, _ = _data()
    rng = np.random.RandomState(3)
    t = X[:, 0] + rng.normal(size=X.shape[0])
    if SPECS[method].invariance == "monotone":
        _same(gs.score(X, t * 1e160, method=method).scores, gs.score(X, t, method=method).scores, rtol=0)
        return
    with pytest.raises(ValueError, match=rf"y holds values as large as .*e\+160, beyond 2\*\*500 .* method "
                                         rf"'{method}' would score every feature wrongly\. Divide y by a power of ten"):
        gs.score(X, t * 1e160, method=method)


COVARIATE_METHODS = [m for m in METHODS if SPECS[m].covariates]


@pytest.mark.parametrize("method", COVARIATE_METHODS)
def test_a_covariate_too_large_to_square_is_not_called_constant(method):
    """A covariate of about 1e306 adjusts the tests as the same covariate divided by 1e306 does
    (the models have a coefficient per covariate); it is neither "constant" nor an overflow."""
    X, y = _data()
    rng = np.random.RandomState(4)
    z = rng.normal(size=(X.shape[0], 1))
    target = y if SPECS[method].task == "classification" else X[:, 1] + rng.normal(size=X.shape[0])
    res = gs.score(X, target, method=method, covariates=z * 1e306)
    ref = gs.score(X, target, method=method, covariates=z)
    _same(res.pvalues, ref.pvalues, rtol=1e-9)
    _same(res.scores, ref.scores, rtol=1e-9)


def test_negative_values_where_counts_are_required():
    X, y = _data()
    X[3, 2] = -1.5
    with pytest.raises(ValueError, match=r"Method 'chi2_counts' needs non-negative counts or frequencies, but "
                                         r"feature\(s\) 'x2' have negative values \(smallest -1\.5\)\. "
                                         r"Use method 'chi2'"):
        gs.score(X, y, method="chi2_counts")
    with pytest.raises(ValueError, match=r"feature\(s\) 'x2' have negative values"):
        gs.score(sp.csr_matrix(X), y, method="chi2_counts")


def _messy_csr(X):
    """The CSR of X with an explicit zero stored, a value split over two duplicate entries, and
    the indices of every row in reverse order."""
    M = sp.csr_matrix(np.where(X > 1.5, X, 0.0))
    data, indices = [], []
    for i in range(M.shape[0]):
        row = slice(M.indptr[i], M.indptr[i + 1])
        data.append(M.data[row][::-1])
        indices.append(M.indices[row][::-1])
    data[0] = np.r_[data[0], 0.0]  # an explicit zero in a column that has none stored in row 0
    free = np.setdiff1d(np.arange(X.shape[1]), indices[0])
    indices[0] = np.r_[indices[0], free[0]]
    r = next(i for i in range(1, len(data)) if len(data[i]))
    half = data[r][0] / 2  # a duplicate entry: the two halves of one value
    data[r] = np.r_[half, data[r][1:], half]
    indices[r] = np.r_[indices[r], indices[r][0]]
    indptr = np.r_[0, np.cumsum([len(d) for d in data])]
    messy = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr), shape=X.shape)
    assert not messy.has_sorted_indices and (messy.data == 0).any() and not messy.has_canonical_format
    return messy, M.toarray()


@pytest.mark.parametrize("method", METHODS)
def test_sparse_with_explicit_zeros_and_unsorted_indices_equals_dense(method):
    """Documented: any valid CSR/CSC layout gives the dense result; the caller's matrix is left as it was."""
    X, y = _data()
    messy, dense = _messy_csr(X)
    before = (messy.data.copy(), messy.indices.copy())
    target = None if method == "variance" else y
    ref = gs.score(dense, target, method=method)
    for form in (messy, messy.tocsc()):
        res = gs.score(form, target, method=method)
        _same(res.scores, ref.scores, rtol=1e-9)
        _same(res.pvalues, ref.pvalues, rtol=1e-9)
    np.testing.assert_array_equal(messy.data, before[0])
    np.testing.assert_array_equal(messy.indices, before[1])
    if method == "anova":
        _same(ref.statistic, f_classif(dense, y)[0], rtol=1e-10)


def test_mixed_dtypes_in_a_frame_are_read_as_numbers():
    X, y = _data()
    frame = pd.DataFrame({"int": np.round(X[:, 0] * 10).astype(np.int64), "float32": X[:, 1].astype(np.float32),
                          "bool": X[:, 2] > 2, "nullable": pd.array(np.round(X[:, 3]).astype(int), dtype="Int64"),
                          "float": X[:, 4]})
    res = gs.score(frame, y, method="anova")
    dense = np.column_stack([frame[c].to_numpy(dtype=np.float64) for c in frame.columns])
    _same(res.statistic, f_classif(dense, y)[0], rtol=1e-6)
    assert list(res.feature_names) == list(frame.columns)
    selector = gs.SelectKBest("anova", k=2).fit(frame, y)
    np.testing.assert_array_equal(selector.get_support(), SkSelectKBest(f_classif, k=2).fit(dense, y).get_support())
    assert list(selector.get_feature_names_out()) == list(frame.columns[selector.get_support()])
    frame.loc[3, "nullable"] = pd.NA  # a missing value in a nullable column is NaN, named
    with pytest.raises(ValueError, match=r"X contains NaN or infinity in feature\(s\) 'nullable'"):
        gs.score(frame, y, method="anova")


@pytest.mark.parametrize("names, message", [
    (["a", "b"], r"The 'feature_names' parameter of score must be one name per feature \(5\)\. Got 2 names instead"),
    (["a", "b", "c", "b", "e"], r"X has duplicated feature names: 'b' \(2 times\)"),
])
def test_feature_names_of_the_wrong_length_or_duplicated(names, message):
    X, y = _data()
    for method in ("anova", "auc", "relieff"):
        with pytest.raises(ValueError, match=message):
            gs.score(X, y, method=method, feature_names=names)


def test_the_error_names_a_frames_own_columns():
    X, y = _data()
    frame = _frame(_with(X, (1, 4), np.nan), ["g0", "g1", "g2", "g3", "ACGT"])
    for method in ("fisher", "kruskal", "linear"):
        with pytest.raises(ValueError, match=r"feature\(s\) 'ACGT'\. Remove or impute"):
            gs.score(frame, y, method=method)


def _stream(*chunks):
    return iter(chunks)


STREAM_ERRORS = {
    "empty stream": (lambda: _stream(), "anova", ValueError, r"The chunk stream was empty: no rows to score"),
    "NaN in a later chunk": (lambda: _stream((np.ones((3, 2)), [0, 1, 0]), (np.array([[1, np.nan], [2, 3]]), [0, 1])),
                             "anova", ValueError, r"X contains NaN or infinity in feature\(s\) 'x1'"),
    "chunks of different widths": (lambda: _stream((np.ones((3, 2)), [0, 1, 0]), (np.ones((3, 3)), [0, 1, 1])),
                                   "anova", ValueError,
                                   r"Chunk columns differ from the first chunk's \(3 vs 2 features\)"),
    "chunks without labels": (lambda: _stream(np.ones((3, 2))), "anova", TypeError,
                              r"A chunk stream must yield \(X_chunk, y_chunk\) pairs"),
    "whole-column method": (lambda: _stream((np.ones((3, 2)), [0, 1, 0])), "auc", ValueError,
                            r"Method 'auc' needs every sample of a feature at once .* Pass an array"),
}


@pytest.mark.parametrize("case", list(STREAM_ERRORS))
def test_chunk_stream_bad_input(case):
    make, method, exc, message = STREAM_ERRORS[case]
    with pytest.raises(exc, match=message):
        gs.score(make(), method=method)
    with pytest.raises(ValueError, match=r"A chunk stream carries its own labels: pass y=None"):
        gs.score(_stream((np.ones((3, 2)), [0, 1, 0])), [0, 1, 0], method="anova")


def test_stream_of_huge_counts_and_tiny_chunks_matches_scipy():
    """Chunks of one row each and counts above 2**32: the F of scipy on all rows."""
    X, y = _data()
    counts = np.round(X * 2**33).astype(np.int64)
    res = gs.score(_stream(*[(counts[i:i + 1], y[i:i + 1]) for i in range(24)]), method="anova")
    _same(res.statistic, st.f_oneway(counts[y == 0].astype(float), counts[y == 1].astype(float)).statistic, rtol=1e-9)


# --------------------------------------------------------------------------------------------
# Selectors
# --------------------------------------------------------------------------------------------

def _logistic():
    return LogisticRegression(max_iter=500)


SELECTORS = {
    "SelectKBest": lambda: gs.SelectKBest("anova", k=2),
    "SelectPercentile": lambda: gs.SelectPercentile("anova", percentile=40),
    "SelectFdr": lambda: gs.SelectFdr("anova", alpha=0.2),
    "RedundancyFilter": lambda: gs.RedundancyFilter("fisher", k=2),
    "MRMR": lambda: gs.MRMR(k=2),
    "RFE": lambda: gs.RFE(_logistic(), n_features_to_select=2),
    "SelectKCV": lambda: gs.SelectKCV("anova", _logistic(), ks=(1, 2), cv=3),
    "StabilitySelection": lambda: gs.StabilitySelection("anova", k=2, n_resamples=5, random_state=0),
}

_RFE_NO_RANKING = r"LogisticRegression gives every feature an importance of zero, or a NaN or infinite one, .* scale"

#: case -> (make (X, y), exception, message regex, {selector: other regex}); "{name}" is the selector.
SELECTOR_ERRORS = {
    "NaN in X": (lambda X, y: (_with(X, (2, 1), np.nan), y), ValueError,
                 r"X contains NaN or infinity in feature\(s\) 'x1'\. Remove or impute", {}),
    "inf in X": (lambda X, y: (_with(X, (2, 3), np.inf), y), ValueError,
                 r"X contains NaN or infinity in feature\(s\) 'x3'\.", {}),
    "NaN in a frame": (lambda X, y: (_frame(_with(X, (2, 1), np.nan)), y), ValueError,
                       r"X contains NaN or infinity in feature\(s\) 'f1'\.", {}),
    "NaN in y": (lambda X, y: (X, _with(y, 3, np.nan, float)), ValueError,
                 r"y contains NaN or infinity at positions \[3\]\. Drop those samples", {}),
    "missing label": (lambda X, y: (X, _missing_label(y)), ValueError, r"y has missing labels at positions \[4\]", {}),
    # scikit-learn's message for empty input, which its estimator checks require
    "no samples": (lambda X, y: (X[:0], y[:0]), ValueError,
                   r"Found array with 0 sample\(s\) \(shape=\(0, 5\)\) while a minimum of 1 is required by {name}\.",
                   {}),
    "no features": (lambda X, y: (X[:, :0], y), ValueError,
                    r"Found array with 0 feature\(s\) \(shape=\(24, 0\)\) while a minimum of 1 is required by {name}\.",
                    {}),
    "one sample": (lambda X, y: (X[:1], y[:1]), ValueError, r"y has only one class \(.*\) in 1 sample\(s\)",
                   {"RFE": r"y has only one class \(.*\) in 1 sample\(s\); RFE fits the classifier estimator",
                    "SelectKCV": r"The 'cv' parameter of SelectKCV must be an int in \[2, n_samples\] "
                                 r"\(n_samples = 1\)\. Got 3 instead\."}),
    "one class": (lambda X, y: (X, np.zeros(24, dtype=int)), ValueError,
                  r"y has only one class \(.*0.*\) in \d+ sample\(s\)",
                  {"RFE": r"RFE fits the classifier estimator, which needs at least two\. Check the labels"}),
    "length mismatch": (lambda X, y: (X, y[:-1]), ValueError,
                        r"X and y have different numbers of samples: X has 24 rows, y has 23 values", {}),
    "non-numeric cell": (lambda X, y: (_object_cell(X), y), TypeError,
                         r"X holds a value that is not a number \(could not convert string to float: 'x'\)", {}),
    "non-numeric column": (lambda X, y: (_text_column(X), y), TypeError,
                           r"X has non-numeric columns 'f1'\. Encode or drop", {}),
    "duplicated feature names": (lambda X, y: (_frame(X, ["a", "b", "a", "c", "d"]), y), ValueError,
                                 r"X has duplicated feature names: 'a' \(2 times\)\. Each feature needs its own name",
                                 {}),
    "values near 1e300": (lambda X, y: (X * 1e300, y), ValueError,
                          r"X has values too large to square in float64 in feature\(s\) 'x0'.* Rescale",
                          {"RFE": _RFE_NO_RANKING}),
    "values near 1e-300": (lambda X, y: (X * 1e-300, y), ValueError,
                           r"X has values too close together to square in float64 .* Rescale",
                           {"RFE": _RFE_NO_RANKING}),
}


@pytest.mark.parametrize("case", list(SELECTOR_ERRORS))
@pytest.mark.parametrize("name", list(SELECTORS))
def test_selector_bad_input_is_a_clear_error(name, case):
    make, exc, message, special = SELECTOR_ERRORS[case]
    X, y = make(*_data())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. the least populated class is smaller than cv
        with pytest.raises(exc, match=special.get(name, message).replace("{name}", name)):
            SELECTORS[name]().fit(X, y)


@pytest.mark.parametrize("name", list(SELECTORS))
def test_selectors_never_select_constant_features_and_ignore_the_label_type(name):
    """Documented: constant and all-zero features are never chosen ahead of varying ones; labels
    as floats, bools, strings or -1/1 select what 0/1 labels select."""
    X, y = _data(n=30, p=8, seed=3)
    y = np.repeat([0, 1], 15)
    X[:, 5] = 2.0
    X[:, 6] = 0.0
    ref = SELECTORS[name]().fit(X, y).get_support()
    assert not ref[[5, 6]].any()
    for labels in (y.astype(float), y.astype(bool), np.where(y == 1, "yes", "no"), 2 * y - 1):
        np.testing.assert_array_equal(SELECTORS[name]().fit(X, labels).get_support(), ref)


def test_selectors_match_scikit_learn_on_messy_sparse_and_huge_counts():
    """SelectKBest('anova') keeps what scikit-learn's SelectKBest(f_classif) keeps: on a CSR
    with explicit zeros and unsorted indices (left as it was), and on counts above 2**32."""
    X, y = _data(n=30, p=8, seed=5)
    y = np.repeat([0, 1], 15)
    messy, dense = _messy_csr(X)
    indices = messy.indices.copy()
    expected = SkSelectKBest(f_classif, k=3).fit(dense, y).get_support()
    np.testing.assert_array_equal(gs.SelectKBest("anova", k=3).fit(messy, y).get_support(), expected)
    np.testing.assert_array_equal(messy.indices, indices)
    counts = np.round(X * 2**33).astype(np.int64)
    expected = SkSelectKBest(f_classif, k=3).fit(counts.astype(float), y).get_support()
    np.testing.assert_array_equal(gs.SelectKBest("anova", k=3).fit(counts, y).get_support(), expected)
    for name in ("RedundancyFilter", "MRMR", "StabilitySelection"):
        np.testing.assert_array_equal(SELECTORS[name]().fit(messy, y).get_support(),
                                      SELECTORS[name]().fit(dense, y).get_support())


def test_rfe_on_huge_counts_matches_scikit_learn():
    from sklearn.feature_selection import RFE as SkRFE

    X, y = _data(n=30, p=6, seed=2)
    y = np.repeat([0, 1], 15)
    counts = np.round(X * 2**33).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lbfgs on unscaled counts may stop early: the same for both
        ours = gs.RFE(_logistic(), n_features_to_select=2, step=1).fit(counts, y).get_support()
        theirs = SkRFE(_logistic(), n_features_to_select=2, step=1).fit(counts.astype(float), y).get_support()
    np.testing.assert_array_equal(ours, theirs)


def test_model_importances_that_cannot_rank_are_an_error():
    """An estimator left at zero weights (LogisticRegression at 1e300) cannot rank features: an
    error, not a ranking by column order, in RFE and StabilitySelection alike."""
    X, y = _data()
    for selector in (gs.RFE(_logistic(), n_features_to_select=2),
                     gs.StabilitySelection(_logistic(), k=2, n_resamples=3, random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match=_RFE_NO_RANKING):
                selector.fit(X * 1e300, y)


def test_selectors_with_a_class_of_one_sample():
    """A class of one sample is a class: anova scores it (scipy's F), a two-class method refuses it."""
    X, y = _data()
    y3 = _three_classes(y)
    sel = gs.SelectKBest("anova", k=2).fit(X, y3)
    _same(sel.scores_, st.f_oneway(*[X[y3 == c] for c in (0, 1, 2)]).statistic, rtol=1e-10)
    with pytest.raises(ValueError, match=r"Method 'welch' compares two classes, but y has 3"):
        gs.SelectKBest("welch", k=2).fit(X, y3)


# --------------------------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------------------------

GOOD_CSV = "id,a,b,c\ns1,1,2,3\ns2,4,5,6\ns3,7,8,9\n"


def _gz(data, cut=None, flip=False):
    raw = gzip.compress(data.encode() if isinstance(data, str) else data)
    if flip:
        raw = bytearray(raw)
        raw[len(raw) // 2] ^= 0xFF
        raw[len(raw) // 2 + 1] ^= 0xFF
        raw = bytes(raw)
    return raw[: len(raw) // 2] if cut else raw


def _npy_bytes(a):
    import io

    buffer = io.BytesIO()
    np.save(buffer, a)
    return buffer.getvalue()


def _claiming_npy():
    """The .npy bytes of a 3 x 4 array whose header claims 10**6 x 10**6 (the same header length)."""
    b = _npy_bytes(np.zeros((3, 4)))
    size = int.from_bytes(b[8:10], "little")
    header = b[10:10 + size].decode("latin1")
    claimed = header.replace("(3, 4)", "(1000000, 1000000)").rstrip()
    claimed = claimed.rstrip() + " " * (size - 1 - len(claimed)) + "\n"
    return b[:10] + claimed.encode("latin1") + b[10 + size:]


def _zipped(name, content):
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, content)
    return buf.getvalue()


def _zip_lying_about_size():
    """A stored (uncompressed) zip member whose headers say it holds 0xF0000000 bytes."""
    import struct

    data = bytearray(_zipped("X.npy", _npy_bytes(np.zeros((3, 4)))))
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # the local and central uncompressed sizes
        at = bytes(data).find(sig)
        data[at + offset: at + offset + 4] = struct.pack("<I", 0xF0000000)
    return bytes(data)


def _parquet_with_repeated_column():
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table([pa.array(["s1", "s2"]), pa.array([1.0, 2.0]), pa.array([3.0, 4.0])],
                            names=["id", "a", "a"]), buf)
    return buf.getvalue()


def _npz_bytes():
    import io

    buffer = io.BytesIO()
    sp.save_npz(buffer, sp.csr_matrix(np.arange(12.0).reshape(4, 3)))
    return buffer.getvalue()


def _h5ad_bytes(tmp_path, obs_names=("s1", "s2"), var_names=("f", "g", "h")):
    import anndata

    path = tmp_path / "tmp.h5ad"
    with warnings.catch_warnings(), anndata.settings.override(allow_write_nullable_strings=True):
        warnings.filterwarnings("ignore", "(Observation|Variable) names are not unique", UserWarning)
        adata = anndata.AnnData(X=np.arange(6.0).reshape(2, 3))
        adata.obs_names, adata.var_names = list(obs_names), list(var_names)
        adata.write_h5ad(path)
    data = path.read_bytes()
    path.unlink()
    return data


def _store_bytes(tmp_path):
    path = tmp_path / "tmp.gs.h5ad"
    gs.io.write_store(gs.io.Dataset(np.arange(6.0).reshape(2, 3), np.array(["s1", "s2"], dtype=object),
                                    np.array(["f", "g", "h"], dtype=object)), path)
    data = path.read_bytes()
    path.unlink()
    return data


_DAMAGED = r"Cannot read '.*{file}' as {kind}: .*The file is damaged \(truncated or corrupt\) or is not in this format"
_DAMAGED_GZIP = r"Cannot read '.*{file}' as {kind}: .*The file is damaged or incomplete .*\(`gzip -t FILE` checks it\)"

#: (reader, file name, content: str, bytes or callable(tmp_path) -> bytes, exception, message regex)
READER_ERRORS = [
    ("csv", "empty.csv", "", ValueError,
     r"empty\.csv' is empty\. A table needs a header line and at least one data row"),
    ("csv", "header.csv", "id,a,b\n", ValueError, r"header\.csv' has a header \(line 1\) but no data rows"),
    ("csv", "text.csv", "id,a,b\ns1,1,x\ns2,3,4\n", ValueError,
     r"text\.csv' line 2, column 'b': 'x' is not a number\. .*keep="),
    ("csv", "dupfeat.csv", "id,a,a\ns1,1,2\ns2,3,4\n", ValueError,
     r"dupfeat\.csv' has duplicated column names: 'a' \(2 times\)\. Each must appear once"),
    ("csv", "dupid.csv", "id,a,b\ns1,1,2\ns1,3,4\n", ValueError,
     r"dupid\.csv' has duplicated sample ids: 's1' \(2 times\)\. Each must appear once"),
    ("csv", "ragged.csv", "id,a,b\ns1,1,2\ns2,3\n", ValueError, r"ragged\.csv' line 3 has 2 fields but the header"),
    ("csv", "truncated.csv.gz", _gz(GOOD_CSV * 40, cut=True), ValueError,
     _DAMAGED_GZIP.format(file=r"truncated\.csv\.gz", kind="a delimited table")),
    ("csv", "corrupt.csv.gz", _gz(GOOD_CSV * 40, flip=True), ValueError,
     _DAMAGED_GZIP.format(file=r"corrupt\.csv\.gz", kind="a delimited table")),
    ("csv", "binary.csv.gz", b"\x00\x01\x02 not gzip", ValueError,
     r"binary\.csv\.gz' as a delimited table: its name says gzip but it does not start with the gzip header"),
    ("tsv", "empty.tsv", "", ValueError, r"empty\.tsv' is empty"),
    ("tsv", "truncated.tsv.gz", _gz(GOOD_CSV.replace(",", "\t") * 40, cut=True), ValueError,
     _DAMAGED_GZIP.format(file=r"truncated\.tsv\.gz", kind="a delimited table")),
    ("tsv", "latin1.tsv", "id\ta\ns\xe9\t1\n".encode("latin-1"), ValueError,
     r"latin1\.tsv' is not UTF-8 text .*`iconv"),
    ("parquet", "empty.parquet", "", ValueError, _DAMAGED.format(file=r"empty\.parquet", kind="a Parquet file")),
    ("parquet", "garbage.parquet", "not parquet at all", ValueError,
     _DAMAGED.format(file=r"garbage\.parquet", kind="a Parquet file")),
    ("npy", "empty.npy", "", ValueError, _DAMAGED.format(file=r"empty\.npy", kind=r"a NumPy \.npy file")),
    ("npy", "garbage.npy", "not a numpy file", ValueError,
     r"garbage\.npy' as a NumPy \.npy file: it starts with neither the \.npy header nor a zip \(\.npz\) header\. The "
     r"file is damaged"),
    ("npy", "truncated.npy", _npy_bytes(np.arange(12.0).reshape(4, 3))[:-10], ValueError,
     _DAMAGED.format(file=r"truncated\.npy", kind=r"a NumPy \.npy file")),
    ("npy", "text.npy", _npy_bytes(np.array([["a", "b"]])), ValueError,
     r"text\.npy' holds values of type <U1, which are not real numbers"),
    ("npy", "vector.npy", _npy_bytes(np.arange(3.0)), ValueError,
     r"vector\.npy' holds a 1-D array of shape \(3,\); a data matrix must be 2-D"),
    ("npz", "empty.npz", "", ValueError, _DAMAGED.format(file=r"empty\.npz", kind=r"a NumPy \.npz archive")),
    ("npz", "garbage.npz", "not a zip", ValueError, r"garbage\.npz' as a NumPy \.npz archive: it starts with neither"),
    ("npz", "truncated.npz", lambda tmp: _npz_bytes()[:200], ValueError,
     _DAMAGED.format(file=r"truncated\.npz", kind=r"a NumPy \.npz archive")),
    ("mtx", "empty.mtx", "", ValueError, _DAMAGED.format(file=r"empty\.mtx", kind="a Matrix Market file")),
    ("mtx", "garbage.mtx", "hello\n", ValueError, r"garbage\.mtx' as a Matrix Market file: .*Missing banner"),
    ("mtx", "truncated.mtx.gz", _gz("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n3 3 3\n" * 30,
                                    cut=True),
     ValueError, _DAMAGED_GZIP.format(file=r"truncated\.mtx\.gz", kind="a Matrix Market file")),
    # headers that claim more than the file holds: refused before anything is allocated for them
    ("npy", "bigclaim.npy", lambda tmp: _claiming_npy(), ValueError,
     r"bigclaim\.npy' as a NumPy \.npy file: declares shape \(1000000, 1000000\) of float64 "
     r"\(8,000,000,000,000 bytes\) but holds 96 bytes"),
    ("npz", "bigclaim.npz", lambda tmp: _zipped("X.npy", _claiming_npy()), ValueError,
     r"bigclaim\.npz' as a NumPy \.npz archive: its array 'X' declares shape \(1000000, 1000000\)"),
    ("npz", "bomb.npz", lambda tmp: _zip_lying_about_size(), ValueError,
     r"bomb\.npz' as a NumPy \.npz archive: its member 'X\.npy' claims 4,026,531,840 bytes, more than its 224 "
     r"stored bytes can expand to"),
    ("mtx", "bigclaim.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n1000000 1000000 1000000000000\n"
     "1 1 1\n", ValueError, r"its header declares 1,000,000 x 1,000,000 with 1,000,000,000,000 stored values, but "
     r"the whole file holds 86 bytes"),
    ("mtx", "overfull.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 10\n1 1 1\n", ValueError,
     r"3 x 3 with 10 stored values, more values than the matrix has cells"),
    ("mtx", "bigarray.mtx", "%%MatrixMarket matrix array real general\n100000 100000\n1\n", ValueError,
     r"100,000 x 100,000 with 10,000,000,000 stored values, but the whole file holds"),
    ("parquet", "dupcols.parquet", lambda tmp: _parquet_with_repeated_column(), ValueError,
     r"dupcols\.parquet' has duplicated column names: 'a' \(2 times\)\. Each must appear once"),
    ("h5ad", "empty.h5ad", "", ValueError, _DAMAGED.format(file=r"empty\.h5ad", kind=r"an AnnData \.h5ad file")),
    ("h5ad", "truncated.h5ad", lambda tmp: _h5ad_bytes(tmp)[:3000], ValueError,
     _DAMAGED.format(file=r"truncated\.h5ad", kind=r"an AnnData \.h5ad file")),
    ("h5ad", "dupobs.h5ad", lambda tmp: _h5ad_bytes(tmp, obs_names=("s", "s")), ValueError,
     r"dupobs\.h5ad' has duplicated sample ids \(obs_names\): 's' \(2 times\)"),
    ("h5ad", "dupvar.h5ad", lambda tmp: _h5ad_bytes(tmp, var_names=("f", "f", "g")), ValueError,
     r"dupvar\.h5ad' has duplicated feature names.*'f' \(2 times\)"),
    ("kmers", "empty.kmers.txt", "", ValueError, r"empty\.kmers\.txt' holds no k-mer lines"),
    ("kmers", "word.kmers.txt", "ACGT | s1:x s2:5\n", ValueError,
     r"word\.kmers\.txt', line 1: the count 'x' of sample 's1' is not a non-negative integer"),
    ("kmers", "negative.kmers.txt", "ACGT | s1:-3\n", ValueError,
     r"line 1: the count '-3' of sample 's1' is not a non-negative integer"),
    ("kmers", "dupsample.kmers.txt", "ACGT | s1:3 s1:5\n", ValueError,
     r"line 1: sample 's1' is listed twice for the same k-mer"),
    ("kmers", "dupkmer.kmers.txt", "ACGT | s1:3\nACGT | s2:5\n", ValueError,
     r"line 2: the k-mer 'ACGT' is also on line 1"),
    ("kmers", "truncated.kmers.txt.gz", _gz("".join(f"A{i:06d} | s1:{i}\n" for i in range(3000)), cut=True), ValueError,
     r"truncated\.kmers\.txt\.gz': it is truncated"),
    ("kmers", "corrupt.kmers.txt.gz", _gz("".join(f"A{i:06d} | s1:{i}\n" for i in range(3000)), flip=True), ValueError,
     r"corrupt\.kmers\.txt\.gz': its gzip data are corrupt"),
    # integers that float64 would round: refused, never read as neighbouring (or equal) numbers
    ("csv", "int64.csv", "id,a,b\ns1,9223372036854775807,1\ns2,9223372036854775806,2\n", ValueError,
     r"int64\.csv' holds integers beyond \+-2\*\*53 \(9007199254740992\) in feature\(s\) 'a'"),
    ("csv", "uint64.csv", "id,a,b\ns1,18446744073709551615,1\ns2,3,2\n", ValueError,
     r"uint64\.csv' holds integers beyond \+-2\*\*53 .* in feature\(s\) 'a'"),
    ("tsv", "negative.tsv", "id\ta\tb\ns1\t-9007199254740993\t1\ns2\t3\t2\n", ValueError,
     r"negative\.tsv' holds integers beyond \+-2\*\*53 .* in feature\(s\) 'a'"),
    ("rtab", "counts.Rtab", "Gene\ts1\ts2\ng1\t1\t0\ng2\t2\t1\n", ValueError,
     r"counts\.Rtab' holds 2 for the gene 'g2' in sample 's1' \(1 cell\(s\) in all are neither 0 nor 1\): an "
     r"\.Rtab table of gene presence/absence holds 0 and 1 only.*format='tsv' features_in_rows=True"),
    ("rtab", "half.Rtab", "Gene\ts1\ts2\ng1\t1\t0.5\n", ValueError, r"half\.Rtab' holds 0\.5 for the gene 'g1'"),
    ("kmers", "huge.kmers.txt", "ACGT | s1:9007199254740993\n", ValueError,
     r"the count '9007199254740993' of sample 's1' is above 2\*\*53"),
    ("store", "empty.gs.h5ad", "", ValueError, r"empty\.gs\.h5ad' as a store: it is damaged or not an HDF5 file"),
    ("store", "truncated.gs.h5ad", lambda tmp: _store_bytes(tmp)[:3000], ValueError,
     r"truncated\.gs\.h5ad' as a store: it is damaged"),
]


@pytest.mark.parametrize("reader, name, content, exc, message", READER_ERRORS,
                         ids=[f"{r}-{n}" for r, n, *_ in READER_ERRORS])
def test_reader_bad_file_is_a_clear_error(tmp_path, reader, name, content, exc, message):
    if reader == "parquet":
        pytest.importorskip("pyarrow", reason="the parquet reader needs pyarrow (genosift[io])")
    if reader in ("h5ad", "store"):
        pytest.importorskip("h5py", reason="the h5ad and store readers need h5py")
    path = tmp_path / name
    content = content(tmp_path) if callable(content) else content
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    assert gs.io.format_of(path) == reader
    with pytest.raises(exc, match=message):
        gs.io.read(path)


@pytest.mark.parametrize("reader", sorted(gs.io.READERS))
def test_every_reader_refuses_a_folder_and_a_missing_file(tmp_path, reader):
    folder = tmp_path / f"data{gs.io.READERS[reader].suffixes[0]}"
    folder.mkdir()
    for fmt in (None, reader):
        with pytest.raises(IsADirectoryError, match=r"is a folder, not a data file\. Pass the path of a file in it"):
            gs.io.read(folder, format=fmt)
    with pytest.raises(FileNotFoundError, match=r"No such file: '.*nothing"):
        gs.io.read(tmp_path / f"nothing{gs.io.READERS[reader].suffixes[0]}", format=reader)


def test_unknown_format_and_suffix():
    with pytest.raises(ValueError, match=r"The format= option must be one of \['csv', .*\]\. Got 'xlsx' instead"):
        gs.io.read(__file__, format="xlsx")
    with pytest.raises(ValueError,
                       match=r"Cannot tell the format of '.*test_bad_input\.py' from its name or its first bytes\. "
                       r"Known suffixes"):
        gs.io.read(__file__)


def test_tables_keep_missing_cells_and_exact_numbers(tmp_path):
    """Documented: empty cells, NA and NaN are read as NaN and inf as inf (scoring then names the
    feature); integer, float and true/false columns mix in one float64 matrix; counts above 2**32
    and up to 2**53 are exact, and 1e300 / 1e-300 are read exactly. A word among numbers is an
    error naming its line and column."""
    path = tmp_path / "cells.csv"
    path.write_text("id,empty,na,inf,bool,float,huge,tiny\n"
                    "s1,,NA,inf,true,0.5,5000000000,1e-300\n"
                    "s2,2,3,-inf,false,2.5,9007199254740992,1e300\n"
                    "s3,3,4,5,true,7,4294967297,0\n")
    data = gs.io.read(path)
    expected = np.array([[np.nan, np.nan, np.inf, 1, 0.5, 5e9, 1e-300],
                         [2, 3, -np.inf, 0, 2.5, 2.0**53, 1e300],
                         [3, 4, 5, 1, 7, 2.0**32 + 1, 0]])
    np.testing.assert_array_equal(data.X, expected)
    with pytest.raises(ValueError, match=r"X contains NaN or infinity in feature\(s\) 'empty', 'na', 'inf'\."):
        gs.score(data.X, [0, 1, 1], method="anova", feature_names=data.feature_names)
    path.write_text("id,a,b\ns1,1,true\ns2,2,2.5\n")
    with pytest.raises(ValueError, match=r"cells\.csv' line 2, column 'b': 'true' is not a number\. .*keep=\['b'\]"):
        gs.io.read(path)


def test_binary_formats_keep_huge_counts_and_canonicalise_messy_sparse(tmp_path):
    counts = np.array([[5_000_000_000, 1], [2**53, 0], [7, 4_294_967_297]], dtype=np.int64)
    np.save(tmp_path / "counts.npy", counts)
    data = gs.io.read(tmp_path / "counts.npy")
    assert data.X.dtype == np.int64
    np.testing.assert_array_equal(data.X, counts)
    (tmp_path / "counts.kmers.txt").write_text("ACGT | s1:5000000000 s2:9007199254740992\nCCGT | s2:1\n")
    np.testing.assert_array_equal(gs.io.read(tmp_path / "counts.kmers.txt").X.toarray(), [[5e9, 0], [2.0**53, 1]])
    X, _ = _data(n=6, p=4)
    messy, dense = _messy_csr(X)
    sp.save_npz(tmp_path / "messy.npz", messy, compressed=False)
    for path in (tmp_path / "messy.npz",):
        M = gs.io.read(path).X
        assert sp.issparse(M) and M.has_canonical_format
        np.testing.assert_array_equal(M.toarray(), dense)
    import scipy.io

    scipy.io.mmwrite(tmp_path / "messy.mtx", messy.tocoo())
    np.testing.assert_array_equal(gs.io.read(tmp_path / "messy.mtx").X.toarray(), dense)
    gs.io.write_store(gs.io.Dataset(messy, np.array([f"s{i}" for i in range(6)], dtype=object),
                                    np.array(list("abcd"), dtype=object)), tmp_path / "messy.gs.h5ad")
    stored = gs.io.read(tmp_path / "messy.gs.h5ad").X
    np.testing.assert_array_equal(stored.toarray() if sp.issparse(stored) else stored, dense)


def test_parquet_mixed_types_and_text(tmp_path):
    pytest.importorskip("pyarrow", reason="the parquet reader needs pyarrow (genosift[io])")
    frame = pd.DataFrame({"id": ["s1", "s2"], "i": [1, 5_000_000_000], "f": [1.5, 2.5], "b": [True, False]})
    frame.to_parquet(tmp_path / "mixed.parquet")
    np.testing.assert_array_equal(gs.io.read(tmp_path / "mixed.parquet").X, [[1, 1.5, 1], [5e9, 2.5, 0]])
    frame.assign(t=["x", "y"]).to_parquet(tmp_path / "text.parquet")
    with pytest.raises(ValueError, match=r"text\.parquet' row 1, column 't': 'x' is not a number"):
        gs.io.read(tmp_path / "text.parquet")
    frame.assign(id=["s1", "s1"]).to_parquet(tmp_path / "dupid.parquet")
    with pytest.raises(ValueError, match=r"dupid\.parquet' has duplicated sample ids: 's1' \(2 times\)"):
        gs.io.read(tmp_path / "dupid.parquet")


def test_store_with_nan_is_named_when_scored(tmp_path):
    X, y = _data(n=8, p=3)
    X[2, 1] = np.nan
    path = tmp_path / "nan.gs.h5ad"
    gs.io.write_store(gs.io.Dataset(X, np.array([f"s{i}" for i in range(8)], dtype=object),
                                    np.array(["a", "b", "c"], dtype=object)), path)
    for method in ("anova", "kruskal"):
        with pytest.raises(ValueError, match=r"X contains NaN or infinity in feature\(s\) 'b'\. Remove or impute"):
            gs.score(path, y, method=method)


def test_metadata_and_store_writing(tmp_path):
    (tmp_path / "meta.csv").write_text("id,label\ns1,a\ns1,b\ns2,a\n")
    with pytest.raises(ValueError, match=r"meta\.csv' lists 1 sample id\(s\) of column 'id' more than once: 's1'\. "
                                         r"Each sample must have one row"):
        gs.io.read_metadata(tmp_path / "meta.csv", id_column="id")
    with pytest.raises(ValueError,
                       match=r"The id column 'sample' is not in '.*meta\.csv'; its columns are \['id', 'label'\]"):
        gs.io.read_metadata(tmp_path / "meta.csv", id_column="sample")
    data = gs.io.Dataset(np.ones((2, 2)), np.array(["a", "b"], dtype=object), np.array(["f", "g"], dtype=object))
    gs.io.write_store(data, tmp_path / "x.gs.h5ad")
    before = (tmp_path / "x.gs.h5ad").read_bytes()
    with pytest.raises(FileExistsError, match=r"x\.gs\.h5ad' already exists\. Pass overwrite=True to replace it"):
        gs.io.write_store(data, tmp_path / "x.gs.h5ad")
    assert (tmp_path / "x.gs.h5ad").read_bytes() == before
    with pytest.raises(IsADirectoryError, match=r"is a folder; give write_store a file name"):
        gs.io.write_store(data, tmp_path)
    with pytest.raises(FileNotFoundError, match=r"the folder '.*nowhere' does not exist"):
        gs.io.write_store(data, tmp_path / "nowhere" / "x.gs.h5ad")


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Input files for the CLI cases, and one `evaluate` results folder."""
    d = tmp_path_factory.mktemp("inputs")
    X, _ = _data(n=24, p=5)
    frame = _frame(X, [f"g{j}" for j in range(5)])
    frame.insert(0, "id", [f"s{i}" for i in range(24)])
    labelled = frame.assign(label=np.repeat(["a", "b"], 12))
    labelled.to_csv(d / "data.csv", index=False)
    frame.to_csv(d / "numeric.csv", index=False)
    labelled[["id", "label"]].to_csv(d / "meta.csv", index=False)
    labelled.assign(g1=labelled["g1"].mask(labelled.index == 3)).to_csv(d / "nan.csv", index=False)
    labelled.assign(label="a").to_csv(d / "oneclass.csv", index=False)
    labelled.assign(id=labelled["id"].replace("s2", "s1")).to_csv(d / "dupid.csv", index=False)
    labelled.assign(g2=labelled["g2"].astype(str).replace(labelled["g2"].astype(str)[5], "high")).to_csv(
        d / "text.csv", index=False)
    (d / "empty.csv").write_text("")
    (d / "folder.csv").mkdir()
    text = (d / "data.csv").read_text()
    (d / "truncated.csv.gz").write_bytes(_gz(text, cut=True))
    (d / "corrupt.csv.gz").write_bytes(_gz(text * 20, flip=True))
    (d / "counts.kmers.txt").write_text("ACGT | s0:3 s1:5\nCCGT | s1:1\n")
    (d / "afile").write_text("a file, not a folder\n")
    (d / "taken.tsv").write_text("keep me\n")
    (d / "taken.gs.h5ad").write_text("keep me\n")
    labelled.assign(site=np.where(np.arange(24) < 12, "north", "south")).to_csv(d / "groups.csv", index=False)
    (d / "counts.Rtab").write_text("Gene\ts1\ts2\ng1\t1\t0\ng2\t2\t1\n")
    np.save(d / "numeric.npy", X)
    (d / "bad.skops").write_bytes(b"not a model")
    (d / "old.joblib").write_bytes(b"\x80\x04N.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["evaluate", str(d / "data.csv"), "--target", "label", "--k", "1,2", "--cv", "3",
                     "-o", str(d / "results"), "--quiet"]) == 0
    return d


def _cli(argv, capsys):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    return code, capsys.readouterr().err


_SCORE = ["--target", "label"]

#: (case, argv with {d} the inputs and {o} a fresh output folder, exit code, stderr regex)
CLI_CASES = [
    ("methods: extra argument", ["methods", "fisher", "x"], 2, r"unrecognized arguments: x"),
    ("methods: unknown method", ["methods", "x"], 2, r"argument name: must be one of \[.*'welch'\].*got 'x'"),
    ("demo: --fdr out of range", ["demo", "--fdr", "2", "-o", "{o}/demo"], 2,
     r"argument --fdr: must be a number in \(0, 1\]"),
    ("demo: --top 0", ["demo", "--top", "0", "-o", "{o}/demo"], 2, r"argument --top: must be a whole number >= 1"),
    ("demo: output folder under a file", ["demo", "-o", "{d}/afile/demo"], 1,
     r"genosift: error: .*Not a directory.*afile"),
    ("convert: missing input", ["convert", "{d}/missing.csv", "-o", "{o}/c.gs.h5ad"], 1,
     r"No such file: '.*missing\.csv'"),
    ("convert: empty file", ["convert", "{d}/empty.csv", "-o", "{o}/c.gs.h5ad"], 1, r"empty\.csv' is empty"),
    ("convert: input is a folder", ["convert", "{d}/folder.csv", "-o", "{o}/c.gs.h5ad"], 1,
     r"folder\.csv' is a folder, not a data file"),
    ("convert: truncated gzip", ["convert", "{d}/truncated.csv.gz", "-o", "{o}/c.gs.h5ad"], 1,
     r"Cannot read '.*truncated\.csv\.gz' .* damaged"),
    ("convert: corrupt gzip", ["convert", "{d}/corrupt.csv.gz", "-o", "{o}/c.gs.h5ad"], 1,
     r"Cannot read '.*corrupt\.csv\.gz' .* damaged"),
    ("convert: non-numeric cell", ["convert", "{d}/data.csv", "-o", "{o}/c.gs.h5ad"], 1,
     r"data\.csv' line 2, column 'label': 'a' is not a number"),
    ("convert: output exists", ["convert", "{d}/numeric.csv", "-o", "{d}/taken.gs.h5ad"], 1,
     r"taken\.gs\.h5ad' already exists.*--force"),
    ("convert: output folder missing", ["convert", "{d}/numeric.csv", "-o", "{o}/no/c.gs.h5ad"], 1,
     r"'.*no' does not exist"),
    ("convert: output folder is a file", ["convert", "{d}/numeric.csv", "-o", "{d}/afile/c.gs.h5ad"], 1, r"afile"),
    ("convert: --meta without --id", ["convert", "{d}/counts.kmers.txt", "--meta", "{d}/meta.csv", "-o",
                                      "{o}/c.gs.h5ad"], 2,
     r"genosift convert: error: --meta needs --id"),
    ("convert: two tables", ["convert", "{d}/numeric.csv", "{d}/numeric.csv", "-o", "{o}/c.gs.h5ad"], 1,
     r"Several inputs are combined only for k-mer count files"),
    ("convert: bad --chunk-bytes", ["convert", "{d}/numeric.csv", "--chunk-bytes", "lots", "-o", "{o}/c.gs.h5ad"], 2,
     r"argument --chunk-bytes: must be a size in bytes"),
]
for command in ("score", "select"):
    rule = ["--top", "2"] if command == "select" else []
    CLI_CASES += [
        (f"{command}: missing input", [command, "{d}/missing.csv", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"No such file"),
        (f"{command}: empty file", [command, "{d}/empty.csv", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"empty\.csv' is empty"),
        (f"{command}: input is a folder", [command, "{d}/folder.csv", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"is a folder, not a data file"),
        (f"{command}: truncated gzip", [command, "{d}/truncated.csv.gz", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"truncated\.csv\.gz' as a delimited table: .*damaged"),
        (f"{command}: corrupt gzip", [command, "{d}/corrupt.csv.gz", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"corrupt\.csv\.gz' as a delimited table: .*damaged"),
        (f"{command}: NaN in a feature", [command, "{d}/nan.csv", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"X contains NaN or infinity in feature\(s\) 'g1'\. Remove or impute"),
        (f"{command}: non-numeric cell", [command, "{d}/text.csv", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"text\.csv' line 7, column 'g2': 'high' is not a number"),
        (f"{command}: one class", [command, "{d}/oneclass.csv", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"y has only one class \('a'\) in 24 sample\(s\); method 'fisher' compares classes"),
        (f"{command}: duplicated sample ids", [command, "{d}/dupid.csv", *_SCORE, *rule, "-o", "{o}/out.tsv"], 1,
         r"dupid\.csv' has duplicated sample ids: 's1' \(2 times\)"),
        (f"{command}: unknown target column", [command, "{d}/data.csv", "--target", "nope", *rule, "-o", "{o}/out.tsv"],
         1,
         r"has no column named 'nope'"),
        (f"{command}: output exists", [command, "{d}/data.csv", *_SCORE, *rule, "-o", "{d}/taken.tsv"], 1,
         r"taken\.tsv' already exists\. Pass --force to replace it"),
        (f"{command}: output folder missing", [command, "{d}/data.csv", *_SCORE, *rule, "-o", "{o}/no/out.tsv"], 1,
         r"The output folder '.*no' does not exist\. Create it first"),
        (f"{command}: output folder is a file", [command, "{d}/data.csv", *_SCORE, *rule, "-o", "{d}/afile/out.tsv"], 1,
         r"The output folder '.*afile' is a file\. Choose another output path"),
        (f"{command}: unknown method", [command, "{d}/data.csv", *_SCORE, *rule, "--method", "nope", "-o",
                                        "{o}/out.tsv"], 2,
         r"argument --method: must be one of \['anova', .*\] \(see `genosift methods`\), got 'nope'"),
        (f"{command}: --top 0", [command, "{d}/data.csv", *_SCORE, "--top", "0", "-o", "{o}/out.tsv"], 2,
         r"argument --top: must be a whole number >= 1"),
        (f"{command}: no --target", [command, "{d}/data.csv", *rule, "-o", "{o}/out.tsv"], 2,
         r"the following arguments are required: --target"),
        (f"{command}: --top and --fdr", [command, "{d}/data.csv", *_SCORE, "--method", "anova", "--top", "2", "--fdr",
                                         "0.1",
                                          "-o", "{o}/out.tsv"], 2,
         rf"genosift {command}: error: Choose one selection rule"),
        (f"{command}: --meta without --id", [command, "{d}/numeric.csv", "--meta", "{d}/meta.csv", *_SCORE, *rule,
                                             "-o", "{o}/out.tsv"], 2, rf"genosift {command}: error: --meta needs --id"),
        (f"{command}: --fdr without p-values", [command, "{d}/data.csv", *_SCORE, "--fdr", "0.1", "-o", "{o}/out.tsv"],
         1,
         r"--fdr needs p-values, and method 'fisher' has none\. Use --top K"),
    ]
CLI_CASES += [
    ("select: no rule", ["select", "{d}/data.csv", *_SCORE, "-o", "{o}/out.tsv"], 2,
     r"genosift select: error: select needs a rule: --top K, --fdr Q or --threshold"),
    ("evaluate: one class", ["evaluate", "{d}/oneclass.csv", *_SCORE, "--k", "1", "--cv", "3", "-o", "{o}/ev"], 1,
     r"y has only one class \('a'\); evaluate needs at least two"),
    ("evaluate: NaN in a feature", ["evaluate", "{d}/nan.csv", *_SCORE, "--k", "1", "--cv", "3", "-o", "{o}/ev"], 1,
     r"X contains NaN or infinity in feature\(s\) 'g1'"),
    ("evaluate: more folds than samples of a class", ["evaluate", "{d}/data.csv", *_SCORE, "--k", "1", "--cv", "50",
                                                      "-o", "{o}/ev"], 1,
     r"The smallest class has 12 sample\(s\), fewer than the 50 folds asked for\. Ask for at most 12 folds \(--cv\)"),
    ("evaluate: empty file", ["evaluate", "{d}/empty.csv", *_SCORE, "-o", "{o}/ev"], 1, r"empty\.csv' is empty"),
    ("evaluate: output exists", ["evaluate", "{d}/data.csv", *_SCORE, "-o", "{d}/results"], 1,
     r"results' already exists\. Pass --force to replace it"),
    ("evaluate: --k 0", ["evaluate", "{d}/data.csv", *_SCORE, "--k", "0", "-o", "{o}/ev"], 2,
     r"argument --k: must be comma-separated"),
    ("evaluate: unknown model", ["evaluate", "{d}/data.csv", *_SCORE, "--model", "tree", "-o", "{o}/ev"], 2,
     r"argument --model: invalid choice: 'tree'"),
    ("evaluate: output folder under a file", ["evaluate", "{d}/data.csv", *_SCORE, "--k", "1", "--cv", "3",
                                              "-o", "{d}/afile/ev"], 1,
     r"The output folder '.*afile' is a file\. Choose another output path"),
    ("evaluate: unknown model option", ["evaluate", "{d}/data.csv", *_SCORE, "--k", "1", "--cv", "3", "--model-option",
                                        "nope=1",
                                        "-o", "{o}/ev"], 1,
     r"Unknown option\(s\) \['nope'\] for model 'logistic'; its options are"),
    ("predict: no model", ["predict", "{d}/nomodel", "{d}/numeric.csv", "-o", "{o}/p.tsv"], 1,
     r"No model at '.*nomodel.*'; give the model\.skops \(or the results folder\) of a `genosift evaluate` run"),
    ("predict: damaged model file", ["predict", "{d}/bad.skops", "{d}/numeric.csv", "-o", "{o}/p.tsv"], 1,
     r"Cannot load '.*bad\.skops' as a genosift model: .*\. Give the model\.skops \(or the results folder\) that "
     r"`genosift evaluate` wrote"),
    ("predict: pickled model", ["predict", "{d}/old.joblib", "{d}/numeric.csv", "-o", "{o}/p.tsv"], 1,
     r"'.*old\.joblib' is a Python pickle, which runs code when it is loaded: genosift does not load pickles"),
    ("predict: empty data", ["predict", "{d}/results", "{d}/empty.csv", "-o", "{o}/p.tsv"], 1, r"empty\.csv' is empty"),
    ("predict: truncated gzip", ["predict", "{d}/results", "{d}/truncated.csv.gz", "-o", "{o}/p.tsv"], 1,
     r"truncated\.csv\.gz'.*damaged"),
    ("predict: output exists", ["predict", "{d}/results", "{d}/numeric.csv", "-o", "{d}/taken.tsv"], 1,
     r"taken\.tsv' already exists"),
    ("predict: output folder is a file", ["predict", "{d}/results", "{d}/numeric.csv", "-o", "{d}/afile/p.tsv"], 1,
     r"The output folder '.*afile' is a file"),
    ("predict: --meta without --id", ["predict", "{d}/results", "{d}/numeric.csv", "--meta", "{d}/meta.csv", "-o",
                                      "{o}/p.tsv"], 2,
     r"genosift predict: error: --meta needs --id \(the sample-id column\) and --target"),
    ("convert: --meta with a table", ["convert", "{d}/data.csv", "--meta", "{d}/meta.csv", "--id", "id", "-o",
                                      "{o}/t.gs.h5ad"], 2,
     r"--meta and --absent-samples are for data without per-sample columns .* a table keeps its own per-sample "
     r"columns with --keep COLUMNS"),
    ("convert: --absent-samples without --meta", ["convert", "{d}/numeric.npy", "--absent-samples", "drop", "-o",
                                                  "{o}/t.gs.h5ad"], 2, r"--absent-samples .* needs --meta"),
    ("score: unknown --train-groups value", ["score", "{d}/groups.csv", *_SCORE, "--keep", "site", "--group", "site",
                                             "--train-groups", "nort", "-o", "{o}/s.tsv"], 1,
     r"--train-groups names 'nort', which is not a value of the column 'site' of the samples scored; its values: "
     r"'north', 'south' \(closest: 'north'\)"),
    ("evaluate: unknown --val-groups value", ["evaluate", "{d}/groups.csv", *_SCORE, "--keep", "site", "--group",
                                              "site", "--val-groups", "east", "--k", "1", "-o", "{o}/ev"], 1,
     r"--val-groups names 'east', which is not a value of the column 'site'"),
    ("score: Rtab of counts", ["score", "{d}/counts.Rtab", "--target", "x", "-o", "{o}/s.tsv"], 1,
     r"counts\.Rtab' holds 2 for the gene 'g2' in sample 's1' .* read the table as a TSV with genes in rows: "
     r"--format tsv --features-in-rows"),
    ("report: no results folder", ["report", "{d}/nothing", "-o", "{o}/r.html"], 1,
     r"The results folder '.*nothing' does not exist"),
    ("report: results is a file", ["report", "{d}/afile", "-o", "{o}/r.html"], 1,
     r"afile' is a file, not a results folder"),
    ("report: empty folder", ["report", "{d}/folder.csv", "-o", "{o}/r.html"], 1, r"folder\.csv' has no run\.json"),
    ("report: output folder missing", ["report", "{d}/results", "-o", "{o}/no/r.html"], 1,
     r"The output folder '.*no' does not exist"),
    ("report: output exists", ["report", "{d}/results", "-o", "{d}/taken.tsv"], 1,
     r"taken\.tsv' already exists\. Pass --force"),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_bad_input(files, tmp_path, capsys, case):
    """Exit 1 for data errors, 2 for usage errors; the message on stderr; nothing written, nothing clobbered."""
    _, argv, code, message = case
    if argv[0] == "report":
        pytest.importorskip("matplotlib", reason="genosift report needs matplotlib (genosift[report])")
    taken = {p: p.read_bytes() for p in files.iterdir() if p.name.startswith("taken")}
    out = tmp_path / "out"
    out.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, err = _cli([a.format(d=files, o=out) for a in argv], capsys)
    assert got == code, err
    assert re.search(message, err), err
    assert "Traceback" not in err
    # the fix is spelled as options, never as Python keywords or library calls
    assert not re.search(r"\b(keep|id_column|sep|features_in_rows|method|metric|cv)=|genosift\.(io|score)\b|np\.\w+\(",
                         err), err
    assert not list(out.iterdir())  # nothing written, not even a temporary file
    assert {p: p.read_bytes() for p in files.iterdir() if p.name.startswith("taken")} == taken


def test_cli_good_runs_exit_0(files, tmp_path, capsys):
    """The same inputs in good form: each command succeeds (the cases above fail for their one defect)."""
    o = tmp_path
    runs = [
        ["methods"],
        ["convert", files / "numeric.csv", "-o", o / "c.gs.h5ad", "--quiet"],
        ["score", files / "data.csv", *_SCORE, "-o", o / "s.tsv", "--quiet"],
        ["select", files / "data.csv", *_SCORE, "--top", "2", "-o", o / "sel.tsv", "--quiet"],
        ["predict", files / "results", files / "numeric.csv", "-o", o / "p.tsv", "--quiet"],
        ["score", files / "data.csv", *_SCORE, "--method", "anova", "-o", o / "s.tsv", "--force", "--quiet"],
    ]
    for argv in runs:
        code, err = _cli(argv, capsys)
        assert code == 0, (argv, err)
        if argv is runs[2]:
            before = (o / "s.tsv").read_bytes()
    assert (o / "s.tsv").read_bytes() != before  # an output genosift wrote, replaced with --force


def test_demo_makes_a_fresh_folder_when_the_output_exists(tmp_path, capsys):
    """Documented: demo never overwrites; an existing -o gets a sibling 'NAME-2'."""
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "mine.txt").write_text("x")
    code, err = _cli(["demo", "-o", tmp_path / "demo", "--top", "1"], capsys)
    assert code == 0, err
    assert (tmp_path / "demo-2" / "ranking.tsv").exists()
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == ["mine.txt"]


def _read_only_folder(tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        (folder / "probe").write_text("x")
    except PermissionError:
        return folder
    (folder / "probe").unlink()
    folder.chmod(0o755)
    pytest.skip("running with the right to write anywhere (root): a read-only folder does not stop writes here, "
                "so an unwritable output folder cannot be provoked (run as another user, or as root under "
                "`setpriv --bounding-set=-dac_override,-dac_read_search --inh-caps=-dac_override,-dac_read_search`)")


UNWRITABLE = {
    "demo": ["demo", "-o", "{ro}/demo"],
    "convert": ["convert", "{d}/numeric.csv", "-o", "{ro}/c.gs.h5ad"],
    "score": ["score", "{d}/data.csv", *_SCORE, "-o", "{ro}/s.tsv"],
    "select": ["select", "{d}/data.csv", *_SCORE, "--top", "2", "-o", "{ro}/s.tsv"],
    "evaluate": ["evaluate", "{d}/data.csv", *_SCORE, "--k", "1", "--cv", "3", "-o", "{ro}/ev"],
    "predict": ["predict", "{d}/results", "{d}/numeric.csv", "-o", "{ro}/p.tsv"],
    "report": ["report", "{d}/results", "-o", "{ro}/r.html"],
}


@pytest.mark.parametrize("command", list(UNWRITABLE))
def test_cli_unwritable_output_folder(files, tmp_path, capsys, command):
    if command == "report":
        pytest.importorskip("matplotlib", reason="genosift report needs matplotlib (genosift[report])")
    ro = _read_only_folder(tmp_path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code, err = _cli([a.format(d=files, ro=ro) for a in UNWRITABLE[command]], capsys)
        assert code == 1, err
        assert re.search(r"Permission denied|Cannot write", err) and "read-only" in err, err
        assert not list(ro.iterdir())
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize("sep", [",", "\t"])
def test_ids_spelled_like_missing_values_are_ids(tmp_path, sep):
    """A sample called NA, NULL or None is a sample, in the metadata as in the data; its other
    columns keep pandas' reading of missing values."""
    from genosift.io import read, read_metadata

    names = ["NA", "NULL", "None", "nan", "s5"]
    meta = tmp_path / "meta.txt"
    meta.write_text(sep.join(["id", "y", "age"]) + "\n"
                    + "".join(sep.join([n, str(i % 2), "NA" if i == 2 else str(30 + i)]) + "\n"
                              for i, n in enumerate(names)))
    frame = read_metadata(meta, id_column="id")
    assert list(frame.index) == names
    assert frame["age"].isna().tolist() == [False, False, True, False, False]
    data = tmp_path / "data.csv"
    data.write_text("id,f1\n" + "".join(f"{n},{i}\n" for i, n in enumerate(names)))
    assert list(read(data).sample_ids) == names


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_cli_a_bad_numba_thread_count_in_the_environment_is_named(tmp_path, value):
    import os
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "genosift", "demo", "-o", str(tmp_path / "d.tsv")],
                         capture_output=True, text=True, env={**os.environ, "NUMBA_NUM_THREADS": value})
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert f"the environment sets NUMBA_NUM_THREADS={value!r}, which must be a whole number of threads from 1 to" \
        in run.stderr, run.stderr
    assert not (tmp_path / "d.tsv").exists()
