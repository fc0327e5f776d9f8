"""A pandas DataFrame scores as its values do, whatever its column dtypes."""
import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.selectors import cross_validate_ks
from genosift.workflow import evaluate

RNG = np.random.RandomState(0)
COUNTS = RNG.randint(0, 5, (24, 5))
Y = np.arange(24) % 2
COUNTS[:, 0] += 3 * Y  # one informative feature

DTYPES = ["int64", "int32", "int16", "uint8", "uint64", "float32", "float64", "Int64", "Int8", "UInt32",
          "Float64", "Sparse[int64]", "Sparse[float64]", "mixed"]


def _frame(dtype):
    frame = pd.DataFrame(COUNTS, columns=[f"k{j}" for j in range(COUNTS.shape[1])])
    if dtype == "mixed":
        return frame.astype({"k0": "int64", "k1": "float64", "k2": "Int64", "k3": "uint8", "k4": "int32"})
    return frame.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_score_of_every_column_dtype_equals_the_float_array(dtype):
    ref = gs.score(COUNTS.astype(np.float64), Y, method="welch")
    got = gs.score(_frame(dtype), Y, method="welch")
    np.testing.assert_array_equal(got.scores, ref.scores)
    assert got.feature_names.tolist() == [f"k{j}" for j in range(5)]


def test_boolean_columns_and_missing_values():
    flags = pd.DataFrame(COUNTS > 1, columns=[f"k{j}" for j in range(5)])
    ref = gs.score((COUNTS > 1).astype(np.float64), Y, method="chi2_counts")
    for frame in (flags, flags.astype("boolean")):
        np.testing.assert_array_equal(gs.score(frame, Y, method="chi2_counts").scores, ref.scores)
    with_na = _frame("Int64")
    with_na.iloc[3, 2] = pd.NA
    with pytest.raises(ValueError, match="NaN or infinity in feature\\(s\\) 'k2'"):
        gs.score(with_na, Y)


@pytest.mark.parametrize("dtype", ["int64", "uint8", "Int64"])
def test_integer_frames_in_selectors_evaluate_and_cross_validation(dtype):
    frame = _frame(dtype)
    selector = gs.SelectKBest(k=1).fit(frame, Y)
    assert selector.get_feature_names_out().tolist() == ["k0"]
    ev = evaluate(frame, Y, method="fisher", ks=[1, 2], cv=3, random_state=0)
    ref = evaluate(COUNTS.astype(np.float64), Y, method="fisher", ks=[1, 2], cv=3, random_state=0)
    pd.testing.assert_frame_equal(ev.curve, ref.curve)
    from sklearn.linear_model import LogisticRegression

    got = cross_validate_ks(frame, Y, score_func="fisher", estimator=LogisticRegression(), ks=[1, 3], cv=3,
                            random_state=0)
    want = cross_validate_ks(COUNTS.astype(np.float64), Y, score_func="fisher", estimator=LogisticRegression(),
                             ks=[1, 3], cv=3, random_state=0)
    assert len(got) == len(want) == 3
    for a, b in zip(got, want):  # one record per fold
        np.testing.assert_array_equal(a["scores"], b["scores"])
        for k in (1, 3):
            np.testing.assert_array_equal(a["predicted"][k], b["predicted"][k])
