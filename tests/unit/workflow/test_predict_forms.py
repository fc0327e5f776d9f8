"""``predict`` gives the same bits from every form of the same data: a dense array, CSR and CSC
matrices, and a store (the model is handed one canonical form, so that it sums the same terms in
the same order), for models trained on sparse and on dense data."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from test_predict_store import _fitted

from genosift.io import open_store
from genosift.sources import StoreRows
from genosift.workflow import load_model, predict, predict_store


@pytest.mark.parametrize("densify", [False, True], ids=["trained sparse", "trained dense"])
def test_every_form_of_the_data_gives_the_same_predictions_bit_for_bit(tmp_path, densify):
    store, X, names, ids, _, folder = _fitted(tmp_path)
    saved = load_model(folder)
    scaler = saved["estimator"].steps[0][1] if hasattr(saved["estimator"], "steps") else None
    if densify and scaler is not None and hasattr(scaler, "with_mean"):
        scaler.with_mean = True  # as a model trained on dense data centres its inputs
        scaler.mean_ = np.zeros(scaler.n_features_in_)
    X = X.toarray() * 0.1  # values whose sums round differently in another order
    forms = {"dense": X, "fortran": np.asfortranarray(X), "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X)}
    expected, _ = predict(saved, forms.pop("dense"), names, sample_ids=ids)
    assert expected.filter(like="proba_").shape[1] == 2
    for name, form in forms.items():
        got, _ = predict(saved, form, names, sample_ids=ids)
        pd.testing.assert_frame_equal(got, expected, check_exact=True, obj=name)
    if not densify:
        got, _ = predict_store(saved, StoreRows(open_store(store.path)), sample_ids=ids)
        stored = predict(saved, open_store(store.path).to_dataset().X, names, sample_ids=ids)[0]
        pd.testing.assert_frame_equal(got, stored, check_exact=True, obj="store")
