"""A model is data: every model kind saved and loaded as skops, and crafted model files refused.

A model someone sent must not run code when loaded (a pickle does) nor send a compiled
prediction outside its arrays (a tree's node numbers are used unchecked by scikit-learn). Each
model of ``MODELS`` is saved and loaded back and predicts exactly as the fitted one; then files
crafted around each model kind are refused with a message naming the fault, and none of their
payloads runs.
"""
import json
import pickle
import zipfile

import numpy as np
import pytest

import genosift as gs  # noqa: F401
from genosift.workflow import MODELS, evaluate, load_model, predict, write_results
from genosift.workflow.model_file import FORMAT, read_model

skops_io = pytest.importorskip("skops.io")


def _data(seed=0, n=60, p=40, classes=2):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % classes
    X = rng.normal(size=(n, p))
    X[:, :4] += y[:, None] * 1.5
    return X, y, np.array([f"g{j}" for j in range(p)], dtype=object)


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory):
    """Each model of ``MODELS`` fitted by ``evaluate`` and written: ``(name, evaluation, folder, X, names)``."""
    made = {}
    for name in sorted(MODELS):
        X, y, names = _data(classes=3 if name in ("logistic", "hist_gradient_boosting") else 2)
        options = {"n_estimators": 20} if name == "random_forest" else \
            {"max_iter": 15} if name == "hist_gradient_boosting" else None
        ev = evaluate(X, y, method="anova", ks=[5], cv=3, model=name, model_options=options, feature_names=names)
        made[name] = name, ev, write_results(ev, tmp_path_factory.mktemp(name) / "res", X=X, y=y), X, names
    return made


@pytest.fixture(params=sorted(MODELS))
def saved_model(request, saved_models):
    return saved_models[request.param]


def test_every_model_comes_back_and_predicts_as_fitted(saved_model):
    name, ev, out, X, names = saved_model
    assert sorted(p.name for p in out.glob("model.*")) == ["model.json", "model.skops"]
    saved = load_model(out)
    info = json.loads((out / "model.json").read_text())
    assert {k: saved[k] for k in info} == info
    assert saved["model"] == name
    frame, _ = predict(saved, X, names)
    np.testing.assert_array_equal(frame["predicted"], ev.pipeline.predict(X).astype(str))
    if hasattr(ev.pipeline, "predict_proba") and name != "linear_svm":
        proba = ev.pipeline.predict_proba(X)
        for c, label in enumerate(saved["classes"]):
            np.testing.assert_array_equal(frame[f"proba_{label}"], proba[:, c])
    np.testing.assert_array_equal(saved["columns"], np.flatnonzero(ev.pipeline.named_steps["select"].get_support()))


def _rewrite(src, dst, change):
    """Load the archive's content with every type trusted, change it, dump it again."""
    content = skops_io.load(src, trusted=skops_io.get_untrusted_types(file=src))
    change(content)
    skops_io.dump(content, dst)
    return dst


def _marker_payload(marker):
    """A callable that would create ``marker`` if a loader ever called it."""
    from pathlib import Path

    return Path(marker).touch


def test_types_no_model_holds_are_refused_and_nothing_runs(saved_model, tmp_path):
    _, _, out, _, _ = saved_model
    marker = tmp_path / "ran"
    bad = _rewrite(out / "model.skops", tmp_path / "m.skops",
                   lambda c: c.update(extra=_marker_payload(marker), estimator=c["estimator"]))
    with pytest.raises(ValueError, match=r"is refused: it holds objects of types that no genosift model holds "
                                         r"\(.*pathlib.*\), and building them could run code"):
        load_model(bad)
    assert not marker.exists()


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_a_results_folder_of_an_earlier_genosift_names_its_pickle(tmp_path):
    (tmp_path / "model.joblib").write_bytes(pickle.dumps({"pipeline": None}))
    with pytest.raises(ValueError, match=r"model\.joblib' is a Python pickle, which runs code when it is loaded: "
                                         r"genosift does not load pickles\. Run `genosift evaluate` again"):
        load_model(tmp_path)


@pytest.mark.parametrize("name", ["model.joblib", "model.skops", "model.pkl"])
def test_pickles_are_never_loaded(tmp_path, name):
    marker = tmp_path / "ran"
    path = tmp_path / name
    path.write_bytes(pickle.dumps({"estimator": _Payload(marker)}))
    with pytest.raises(ValueError, match=r"Python pickle, which runs code|Cannot load .* as a genosift model"):
        load_model(path)
    assert not marker.exists()


def _set_tree(content, field, value):
    est = content["estimator"]
    est = est.steps[-1][1] if hasattr(est, "steps") else est
    if hasattr(est, "estimators_"):  # a forest: the first tree's first node
        getattr(est.estimators_[0].tree_, field)[0] = value
    else:  # a gradient boosting: the first predictor's root
        est._predictors[0][0].nodes[field][0] = value


@pytest.mark.parametrize(("model", "field", "value", "message"), [
    ("random_forest", "children_left", 10**6, "a node points outside the tree"),
    ("random_forest", "children_right", 0, "a node points outside the tree"),  # a loop back to the root
    ("random_forest", "feature", 10**6, "a node points outside the tree or its features"),
    ("hist_gradient_boosting", "left", 10**6, "a node points outside the tree"),
    ("hist_gradient_boosting", "right", 0, "a node points outside the tree"),
    ("hist_gradient_boosting", "feature_idx", 10**4, "a node points outside the tree or its features"),
    ("hist_gradient_boosting", "is_categorical", 1, "splits on a categorical feature"),
])
def test_malformed_trees_are_refused(saved_models, tmp_path, model, field, value, message):
    _, _, out, _, _ = saved_models[model]
    bad = _rewrite(out / "model.skops", tmp_path / "m.skops", lambda c: _set_tree(c, field, value))
    with pytest.raises(ValueError, match=message):
        load_model(bad)


def _drop_last_column(content):
    """The file's last column left out, from its columns and its list of the features used alike."""
    info = json.loads(content["info"])
    dropped = info["features"][content["columns"][-1]]
    info["selected"] = [f for f in info["selected"] if f != dropped]
    content.update(columns=content["columns"][:-1], info=json.dumps(info))


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c.update(format="other"), "does not say it is a genosift model"),
    (lambda c: c.update(version=2), "does not say it is a genosift model"),
    (lambda c: c.update(columns=np.array([3, 1])), "its columns are not increasing positions"),
    (lambda c: c.update(columns=np.array([0, 10**6])), "its columns are not increasing positions"),
    (lambda c: _drop_last_column(c), "where the file selects"),
    (lambda c: c.update(info=json.dumps({**json.loads(c["info"]), "classes": ["a"]})), "not fitted on its 1 classes"),
    (lambda c: c.pop("info"), "'info' is missing or malformed"),
])
def test_inconsistent_model_files_are_refused(saved_model, tmp_path, change, message):
    _, _, out, _, _ = saved_model
    bad = _rewrite(out / "model.skops", tmp_path / "m.skops", change)
    with pytest.raises(ValueError, match=message):
        read_model(bad)


def test_an_archive_that_would_expand_far_beyond_its_size_is_refused(tmp_path):
    path = tmp_path / "bomb.skops"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("schema.json", json.dumps(FORMAT))
        z.writestr("big.npy", b"\0" * (200 << 20))
    with pytest.raises(ValueError, match=r"would expand to 209,715,2\d\d bytes"):
        load_model(path)
