"""Crafted model files: every tree a loaded model holds is checked, whatever holds it.

scikit-learn's compiled prediction follows a tree's child and feature numbers unchecked, so a
model file whose tree points outside its nodes or its inputs would read outside memory (or
crash) when it predicts. Each tree-bearing estimator scikit-learn has (the list is computed from
``sklearn.utils.all_estimators``, not typed), and a few wrappers around a tree, is fitted on a
handful of samples, saved through genosift's writer, corrupted, and must be refused at load with
a clear error. Files whose lists of names disagree, and missing files, are refused too.
"""
import copy
import functools
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

skops_io = pytest.importorskip("skops.io")

from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor  # noqa: E402
from sklearn.tree._tree import Tree  # noqa: E402

from genosift.workflow import load_model, predict  # noqa: E402
from genosift.workflow.model_file import ALLOWED, write_model  # noqa: E402

FEATURES = ["f0", "f1", "f2"]


def _tree_bearing():
    """The estimators of sklearn.tree and sklearn.ensemble (every one holds trees once fitted)."""
    from sklearn.utils import all_estimators

    return {name: cls for name, cls in all_estimators() if cls.__module__.startswith(("sklearn.tree.",
                                                                                       "sklearn.ensemble."))}


TREE_BEARING = _tree_bearing()
#: Wrappers that hold a tree inside another estimator.
WRAPPERS = ["Pipeline", "OneVsRestClassifier"]


def _data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(16, 3))
    y = np.arange(16) % 2
    X[:, 0] += y * 2.0
    return X, y


@functools.cache
def _fitted(name):
    """A tiny fitted estimator of that name (few trees, few samples)."""
    from sklearn.base import is_classifier, is_regressor
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    X, y = _data()
    if name == "Pipeline":
        return make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=2)).fit(X, y)
    if name == "OneVsRestClassifier":
        return OneVsRestClassifier(DecisionTreeClassifier(max_depth=2)).fit(X, y)
    cls = TREE_BEARING[name]
    try:
        est = cls()
    except TypeError:  # stacking and voting: made of the estimators given
        regressor = "Regressor" in name
        est = cls([("t", (DecisionTreeRegressor if regressor else DecisionTreeClassifier)(max_depth=2))])
    small = {"n_estimators": 2, "max_iter": 2, "max_depth": 2, "cv": 2, "random_state": 0,
             **({"min_samples_leaf": 2} if name.startswith("HistGradientBoosting") else {})}  # a split of 16 samples
    params = est.get_params()
    est.set_params(**{k: v for k, v in small.items() if k in params})
    if is_classifier(est):
        return est.fit(X, y)
    return est.fit(X, y.astype(float)) if is_regressor(est) else est.fit(X)


def _trees(obj):
    """The trees (``Tree``, ``TreePredictor``) reachable from ``obj``."""
    found, seen, stack = [], set(), [obj]
    while stack:
        x = stack.pop()
        if id(x) in seen or isinstance(x, type):
            continue
        seen.add(id(x))
        if isinstance(x, (Tree, TreePredictor)):
            found.append(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, np.ndarray):
            if x.dtype.hasobject:
                stack.extend(x.ravel().tolist())
        elif hasattr(x, "__dict__"):
            stack.extend(vars(x).values())
    return found


def _saved(name, tmp_path, estimator=None):
    """The fitted estimator of that name (or ``estimator``) written by genosift's writer."""
    path = tmp_path / "model.skops"
    write_model(path, _fitted(name) if estimator is None else estimator,
                {"features": FEATURES, "selected": FEATURES, "classes": ["0", "1"]}, [0, 1, 2])
    return path


#: A corruption of the first node that is not a leaf: the field of a ``Tree`` and of a
#: ``TreePredictor``'s node array, and the value.
CORRUPTIONS = {
    "child outside the tree": ("children_left", "left", 10**6),
    "child back to the root": ("children_right", "right", 0),
    "feature outside the inputs": ("feature", "feature_idx", 10**4),
    "negative feature": ("feature", "feature_idx", -3),
}


def _corrupted(name, corruption):
    """A copy of the fitted estimator of that name with one internal node of its first splitting
    tree changed."""
    tree_field, node_field, value = CORRUPTIONS[corruption]
    estimator = copy.deepcopy(_fitted(name))
    for tree in _trees(estimator):
        if isinstance(tree, Tree):
            internal = np.flatnonzero(tree.children_left != -1)
            if internal.size:
                getattr(tree, tree_field)[internal[0]] = value
                return estimator
        else:
            internal = np.flatnonzero(~tree.nodes["is_leaf"].astype(bool))
            if internal.size:
                tree.nodes[node_field][internal[0]] = value
                return estimator
    raise AssertionError("no tree of the model splits: the fit is too small to test")


def _malformed_file(name, corruption, tmp_path):
    return _saved(name, tmp_path, _corrupted(name, corruption))


@functools.cache
def _refusal(name, tree=r"a node points outside the tree or its features"):
    """What load_model says of a malformed tree in a model of that name: refused before it is
    built when the file holds types no genosift model holds (stacking and voting keep theirs in a
    Bunch; a gradient boosting its loss where skops does not trust it), else refused for the tree
    (``tree``: why)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        foreign = set(skops_io.get_untrusted_types(file=_saved(name, Path(folder)))) - ALLOWED
    if foreign:
        return r"is refused: it holds objects of types that no genosift model holds"
    return rf"one of its trees is malformed \({tree}\)"


@pytest.mark.parametrize("corruption", ["child outside the tree", "feature outside the inputs"])
@pytest.mark.parametrize("name", sorted(TREE_BEARING) + WRAPPERS)
def test_a_malformed_tree_is_refused_in_every_tree_bearing_estimator(tmp_path, name, corruption):
    path = _malformed_file(name, corruption, tmp_path)
    with pytest.raises(ValueError, match=_refusal(name)):
        load_model(path)


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
@pytest.mark.parametrize("name", ["RandomForestClassifier", "HistGradientBoostingClassifier",
                                  "GradientBoostingClassifier", "ExtraTreeClassifier", "BaggingClassifier"])
def test_every_kind_of_bad_link_is_refused(tmp_path, name, corruption):
    path = _malformed_file(name, corruption, tmp_path)
    with pytest.raises(ValueError, match=r"one of its trees is malformed"):
        load_model(path)


def _schema_edit(path, change):
    """Rewrite the archive's schema.json with ``change(schema)`` applied."""
    with zipfile.ZipFile(path) as z:
        items = {item: z.read(item) for item in z.namelist()}
    schema = json.loads(items["schema.json"])
    change(schema)
    items["schema.json"] = json.dumps(schema).encode()
    with zipfile.ZipFile(path, "w") as z:
        for item, data in items.items():
            z.writestr(item, data)
    return path


def _first_tree_node_count(schema, count):
    """Set the node count of the first Tree of the schema to ``count(its count)``."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("__loader__") == "TreeNode":
                node_count = node["content"]["content"]["node_count"]
                node_count["content"] = json.dumps(count(json.loads(node_count["content"])))
                node_count["__id__"] = 1  # an id of its own: not the memo of an equal number read before
                return
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    raise AssertionError("no Tree in the schema")


@pytest.mark.parametrize("count", [lambda held: held - 1, lambda held: 0], ids=["one fewer", "none"])
@pytest.mark.parametrize("name", ["RandomForestClassifier", "GradientBoostingRegressor", "IsolationForest"])
def test_a_node_count_other_than_the_nodes_held_is_refused(tmp_path, name, count):
    # (scikit-learn lowers a count above the nodes held to their number when it builds the tree)
    path = _schema_edit(_saved(name, tmp_path), lambda schema: _first_tree_node_count(schema, count))
    with pytest.raises(ValueError, match=_refusal(name, r"it counts \d+ nodes and holds \d+")):
        load_model(path)


def test_a_gradient_boosting_node_array_of_another_layout_is_refused(tmp_path):
    path = _saved("HistGradientBoostingClassifier", tmp_path)
    content = skops_io.load(path, trusted=skops_io.get_untrusted_types(file=path))
    predictor = _trees(content["estimator"])[0]
    fields = [f for f in predictor.nodes.dtype.names if f != "gain"]
    predictor.nodes = np.ascontiguousarray(predictor.nodes[fields])
    skops_io.dump(content, path)
    with pytest.raises(ValueError, match=r"Cannot load '.*' as a genosift model: (its nodes are not an array of "
                                         r"gradient-boosting nodes|TypeError: Cannot cast array data)"):
        load_model(path)


@pytest.mark.parametrize("name", sorted(TREE_BEARING) + WRAPPERS)
def test_a_well_formed_estimator_genosift_never_saves_is_refused(tmp_path, name):
    path = _saved(name, tmp_path)
    X, _ = _data()
    if name in ("RandomForestClassifier", "HistGradientBoostingClassifier"):  # genosift's own models
        saved = load_model(path)
        frame, _ = predict(saved, X, FEATURES)
        np.testing.assert_array_equal(frame["predicted"], _fitted(name).predict(X).astype(str))
        return
    message = (r"is refused: it holds objects of types that no genosift model holds" if "is refused" in _refusal(name)
               else r"it holds .*, which no genosift model is made of|its estimator is a .*, which is not a model")
    with pytest.raises(ValueError, match=message):
        load_model(path)


def test_a_forest_whose_trees_give_other_classes_is_refused(tmp_path):
    path = _saved("RandomForestClassifier", tmp_path)
    content = skops_io.load(path, trusted=skops_io.get_untrusted_types(file=path))
    forest = content["estimator"]
    forest.estimators_[1] = _fitted("ExtraTreeClassifier")  # a tree of another kind among the forest's
    skops_io.dump(content, path)
    with pytest.raises(ValueError, match=r"ExtraTreeClassifier, which no genosift model is made of"):
        load_model(path)


def _empty_pipeline(estimator):
    estimator.steps = []


def _untrained_tree_in_forest(estimator):
    from sklearn.tree import DecisionTreeClassifier

    estimator.estimators_[0] = DecisionTreeClassifier()


@pytest.mark.parametrize(("name", "change"), [("Pipeline", _empty_pipeline),
                                              ("RandomForestClassifier", _untrained_tree_in_forest)])
def test_an_estimator_missing_its_parts_is_refused(tmp_path, name, change):
    estimator = copy.deepcopy(_fitted(name))
    change(estimator)
    with pytest.raises(ValueError, match=r"Cannot load '.*' as a genosift model: its estimator is malformed "
                                         r"\((IndexError|AttributeError): "):
        load_model(_saved(name, tmp_path, estimator))


def _predict_commands(models, data, out):
    """``genosift predict`` of each model, in this (child) process: the exit codes and what each printed."""
    import contextlib
    import io

    from genosift.cli import main

    results = []
    for model in models:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            results.append([main(["predict", model, data, "-o", model + ".tsv"]), err.getvalue()])
    out.write_text(json.dumps(results))


def test_the_command_line_refuses_malformed_trees_without_crashing(tmp_path):
    """In a child process: a crash there fails this test instead of ending the test run (a fork,
    which has scikit-learn and skops imported already)."""
    import multiprocessing

    import genosift.cli  # noqa: F401  (imported before the fork)

    X, _ = _data()
    data = tmp_path / "data.csv"
    data.write_text("id," + ",".join(FEATURES) + "\n"
                    + "".join(f"s{i}," + ",".join(f"{v:.3f}" for v in row) + "\n" for i, row in enumerate(X)))
    models = []
    for name, corruption in [("DecisionTreeClassifier", "feature outside the inputs"),
                             ("GradientBoostingClassifier", "child outside the tree"),
                             ("ExtraTreesClassifier", "child outside the tree"),
                             ("HistGradientBoostingClassifier", "feature outside the inputs")]:
        (tmp_path / name).mkdir()
        models.append(str(_malformed_file(name, corruption, tmp_path / name)))
    out = tmp_path / "results.json"
    child = multiprocessing.get_context("fork").Process(target=_predict_commands, args=(models, str(data), out))
    child.start()
    child.join(120)
    assert child.exitcode == 0  # not killed by a signal (-11: a segmentation fault)
    for (code, printed), model in zip(json.loads(out.read_text()), models):
        assert code == 1
        assert printed == (f"genosift: error: Cannot load {model!r} as a genosift model: one of its trees is malformed "
                           "(a node points outside the tree or its features). Give the model.skops (or the results "
                           "folder) that `genosift evaluate` wrote.\n")
        assert not Path(model + ".tsv").exists()


@pytest.mark.parametrize(("change", "message"), [
    # a used feature missing from 'selected' (predict would zero it, saying "none used by the model")
    (lambda info: info.update(selected=["f0", "f1"]),
     r"its list of the features the model uses \('selected', 2\) lacks 'f2', which is among the 3 features of its "
     r"columns"),
    (lambda info: info.update(selected=["f0", "f1", "f2", "x"]),
     r"its list of the features the model uses \('selected', 4\) names 'x', which is not among the 3 features"),
    (lambda info: info.update(selected=["f0", "f1", "x"]),
     r"its list of the features the model uses \('selected', 3\) names 'x', which is not among the 3 features"),
    (lambda info: info.update(selected=["f0", "f0", "f1", "f2"]), r"its 'selected' names the same one twice"),
    (lambda info: info.update(features=["f0", "f0", "f2"]), r"its 'features' names the same one twice"),
    (lambda info: info.update(classes=["0", "0"]), r"its 'classes' names the same one twice"),
    (lambda info: info.update(selected="f0,f1,f2"), r"its 'selected' is not a list of names"),
    (lambda info: info.update(features=[0, 1, 2]), r"its 'features' is not a list of names"),
    (lambda info: info.pop("selected"), r"its 'selected' is missing or malformed"),
])
def test_lists_of_names_that_disagree_are_refused(tmp_path, change, message):
    info = {"features": list(FEATURES), "selected": list(FEATURES), "classes": ["0", "1"]}
    change(info)
    path = tmp_path / "model.skops"
    write_model(path, _fitted("RandomForestClassifier"), info, [0, 1, 2])
    with pytest.raises(ValueError, match=rf"Cannot load '.*model\.skops' as a genosift model: {message}"):
        load_model(path)


@pytest.mark.parametrize("name", ["model.joblib", "model.pkl", "old.pickle", "model.skops", "folder"])
def test_a_missing_model_is_reported_missing_whatever_its_name(tmp_path, name):
    path = tmp_path / name
    shown = path / "model.skops" if name == "folder" else path
    if name == "folder":
        path.mkdir()
    with pytest.raises(FileNotFoundError, match=rf"No model at '{shown}'; give the model\.skops"):
        load_model(path)


def test_predict_help_does_not_say_the_model_runs_code():
    from genosift.cli.parser import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and "predict" in a.choices)
    text = next(c.help for c in sub._choices_actions if c.dest == "predict")
    assert "runs code" not in text and "trust" not in text
    assert "model.skops is data" in text
