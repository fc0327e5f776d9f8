"""A fitted model saved as data: ``model.skops``, which loading cannot turn into running code.

The file is a skops archive (https://skops.readthedocs.io): a JSON description of the objects and
NumPy arrays stored without pickles. Loading builds only the types that the models of
``genosift.workflow.make_model`` are made of (scikit-learn's own trusted types, and those named
in ``ALLOWED``); anything else in a file is refused before it is built. Every tree held anywhere
in the loaded model (a scikit-learn ``Tree`` or a gradient boosting's node array, whatever holds
it) is then checked node by node (node count, children inside the tree and after their parent,
features inside the model's inputs, values of the tree's outputs), because scikit-learn's compiled
prediction indexes with those numbers unchecked; and the model must be made only of the
estimators that ``make_model`` builds (``ESTIMATORS``), so that no other way of passing the inputs
to a tree is reached.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["ALLOWED", "ESTIMATORS", "FORMAT", "SUFFIX", "check_estimator", "read_model", "write_model"]

#: The name of the model file in a results folder.
SUFFIX = ".skops"
#: What the file says it is (``format``) and the layout's version.
FORMAT = {"format": "genosift-model", "version": 1}
#: Types beyond skops' default trusted ones that genosift's models hold: the trees of a random
#: forest and of a gradient boosting, the gradient boosting's bins and losses (which skops trusts
#: by default in some versions and not in others), and the step that densifies its input.
ALLOWED = frozenset({
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
    "sklearn._loss.link.Interval", "sklearn._loss.link.LogitLink", "sklearn._loss.link.MultinomialLogit",
    "sklearn._loss.loss.HalfBinomialLoss", "sklearn._loss.loss.HalfMultinomialLoss", "_loss.CyHalfMultinomialLoss",
    "genosift.selectors.models.dense",
})
#: The scikit-learn estimators genosift's models are made of (``make_model``'s models, the steps of
#: their pipelines, a forest's trees, a gradient boosting's binning and label encoding): a model
#: holding any other estimator (another tree ensemble, a single tree, a meta-estimator) is refused.
ESTIMATORS = frozenset({
    "sklearn.pipeline.Pipeline", "sklearn.preprocessing.StandardScaler", "sklearn.preprocessing.FunctionTransformer",
    "sklearn.preprocessing.LabelEncoder", "sklearn.linear_model.LogisticRegression", "sklearn.svm.LinearSVC",
    "sklearn.ensemble.RandomForestClassifier", "sklearn.tree.DecisionTreeClassifier",
    "sklearn.ensemble.HistGradientBoostingClassifier", "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
})
#: The models themselves: the last step of a saved pipeline, or the saved estimator.
_FINAL = ("sklearn.linear_model.LogisticRegression", "sklearn.svm.LinearSVC", "sklearn.ensemble.RandomForestClassifier",
          "sklearn.ensemble.HistGradientBoostingClassifier")
#: A model archive may expand to this many times its size, plus this many bytes (skops stores its
#: arrays without compression): more is a crafted file, refused before anything is read.
_EXPANSION, _SLACK = 16, 64 << 20


def _skops():
    try:
        import skops.io as sio
    except ImportError:
        raise ImportError("Models are saved and loaded with skops: pip install skops.") from None
    return sio


def write_model(path, estimator, info, columns):
    """Save ``estimator`` (the fitted model step), ``info`` (a dict of JSON values: features,
    classes, method...) and ``columns`` (the positions, among ``info["features"]``, of the
    columns the estimator takes, ascending) to ``path``."""
    _skops().dump({**FORMAT, "info": json.dumps(info), "columns": np.asarray(columns, dtype=np.int64),
                   "estimator": estimator}, path)


def read_model(path):
    """``(estimator, info, columns)`` from a file written by ``write_model``, checked as described
    in the module's notes; a ValueError naming the file for anything else."""
    path = Path(path)
    sio = _skops()
    _check_archive(path)
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:  # not a skops archive, or a damaged one
        raise _not_a_model(path, f"{type(exc).__name__}: {exc}") from None
    foreign = sorted(set(untrusted) - ALLOWED)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise ValueError(f"{str(path)!r} is refused: it holds objects of types that no genosift model holds "
                         f"({shown}), and building them could run code. Load only models written by "
                         "`genosift evaluate`.")
    try:
        saved = sio.load(path, trusted=list(untrusted))
    except Exception as exc:
        raise _not_a_model(path, f"{type(exc).__name__}: {exc}") from None
    if not isinstance(saved, dict) or any(saved.get(k) != v for k, v in FORMAT.items()):
        raise _not_a_model(path, "it does not say it is a genosift model of this version")
    try:
        info = json.loads(saved["info"])
        columns = np.asarray(saved["columns"])
        estimator = saved["estimator"]
        names = {key: info[key] for key in ("features", "classes", "selected")}
    except (KeyError, TypeError, ValueError) as exc:
        raise _not_a_model(path, f"its {exc} is missing or malformed") from None
    _check_names(names, columns, path)
    if info.get("sparse") not in (None, True, False):
        raise _not_a_model(path, f"its 'sparse' {info['sparse']!r} is not true or false")
    ploidy = info.get("ploidy")
    if ploidy is not None and (type(ploidy) is not int or not 0 < ploidy < 2**31):
        raise _not_a_model(path, f"its ploidy {ploidy!r} is not a positive number of allele copies")
    check_estimator(estimator, columns.size, len(info["classes"]), path)
    return estimator, info, columns


def _check_archive(path):
    try:
        with zipfile.ZipFile(path) as z:
            expanded = sum(item.file_size for item in z.infolist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise _not_a_model(path, str(exc)) from None
    if expanded > _EXPANSION * path.stat().st_size + _SLACK:
        raise _not_a_model(path, f"it would expand to {expanded:,} bytes, {expanded / path.stat().st_size:.0f} "
                                 "times its size")


def _not_a_model(path, why):
    return ValueError(f"Cannot load {str(path)!r} as a genosift model: {why}. Give the model.skops (or the "
                      "results folder) that `genosift evaluate` wrote.")


def _check_names(names, columns, path):
    """The model's lists of names (features, classes, the features it uses) are lists of distinct
    names, and the features it uses are those of its columns."""
    for key, listed in names.items():
        if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
            raise _not_a_model(path, f"its {key!r} is not a list of names")
        if len(set(listed)) != len(listed):
            raise _not_a_model(path, f"its {key!r} names the same one twice")
    features, selected = names["features"], names["selected"]
    if (columns.ndim != 1 or columns.dtype.kind not in "iu" or (columns.size and (
            columns[0] < 0 or columns[-1] >= len(features) or (np.diff(columns) <= 0).any()))):
        raise _not_a_model(path, "its columns are not increasing positions among its features")
    used = [features[j] for j in columns.tolist()]
    extra, lacking = sorted(set(selected) - set(used)), [f for f in used if f not in set(selected)]
    if extra or lacking:
        odd = f"names {extra[0]!r}, which is not" if extra else f"lacks {lacking[0]!r}, which is"
        raise _not_a_model(path, f"its list of the features the model uses ('selected', {len(selected)}) {odd} "
                                 f"among the {len(used)} features of its columns")


def _classes(names):
    """The classes of these dotted names, by exact type (a subclass is another estimator)."""
    from importlib import import_module

    return {getattr(import_module(module), name) for module, _, name in (n.rpartition(".") for n in names)}


def _qualname(obj):
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _held(root):
    """Every object reachable from ``root`` through containers, object arrays and attributes,
    each once (classes are not entered)."""
    seen, stack = set(), [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                stack.extend(obj.ravel().tolist())
        elif hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())


def check_estimator(estimator, n_features, n_classes, path):
    """Check that the loaded ``estimator`` is one that ``make_model`` builds, fitted on
    ``n_features`` inputs and ``n_classes`` classes, with every tree it holds well formed."""
    try:
        _check_parts(estimator, n_features, n_classes, path)
    except (AttributeError, IndexError, KeyError, TypeError) as exc:  # a part missing or of another kind
        raise _not_a_model(path, f"its estimator is malformed ({type(exc).__name__}: {exc})") from None


def _check_parts(estimator, n_features, n_classes, path):
    from sklearn.base import BaseEstimator
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor
    from sklearn.pipeline import Pipeline
    from sklearn.tree._tree import Tree

    final = estimator
    while isinstance(final, Pipeline):
        final = final.steps[-1][1]
    seen = getattr(final, "n_features_in_", None)
    if seen != n_features:
        raise _not_a_model(path, f"its estimator takes {seen} features where the file selects {n_features}")
    held = list(_held(estimator))
    for obj in held:  # then the trees, wherever they are: nothing may walk a malformed one
        if isinstance(obj, Tree):
            _check_tree(obj, n_features, path)
        elif isinstance(obj, TreePredictor):
            _check_predictor(obj, n_features, path)
    known = _classes(ESTIMATORS)
    foreign = sorted({_qualname(obj) for obj in held if isinstance(obj, BaseEstimator) and type(obj) not in known})
    if foreign:
        raise _not_a_model(path, f"it holds {', '.join(foreign[:3])}{' and more' if len(foreign) > 3 else ''}, "
                                 "which no genosift model is made of")
    if type(final) not in _classes(_FINAL):
        raise _not_a_model(path, f"its estimator is a {type(final).__name__}, which is not a model genosift fits")
    if not hasattr(final, "classes_") or len(final.classes_) != n_classes:
        raise _not_a_model(path, f"its estimator ({type(final).__name__}) is not fitted on its {n_classes} classes")
    if hasattr(final, "estimators_"):  # a forest: each tree gives the probabilities of the model's classes
        _check_forest(final, n_classes, path)
    elif hasattr(final, "_predictors"):
        _check_boosting(final, n_classes, path)


def _malformed(path, what="a node points outside the tree or its features"):
    return _not_a_model(path, f"one of its trees is malformed ({what})")


def _check_links(left, right, leaf, feature, n_features, path):
    """Children of the nodes that are not leaves inside the tree and after their node; their
    features inside the inputs."""
    size = left.shape[0]
    node = np.flatnonzero(~leaf)
    ok = (size > 0 and right.shape[0] == size and feature.shape[0] == size
          and (left[node] > node).all() and (left[node] < size).all()
          and (right[node] > node).all() and (right[node] < size).all()
          and (feature[node] >= 0).all() and (feature[node] < n_features).all())
    if not ok:
        raise _malformed(path)


def _check_tree(tree, n_features, path):
    """A scikit-learn ``Tree``: its node count that of the nodes it holds (the node arrays are read
    up to the count), at least one output and one class per output, then its links."""
    count, outputs = int(tree.node_count), int(tree.n_outputs)
    if count < 1 or count != tree.capacity:
        raise _malformed(path, f"it counts {count} nodes and holds {tree.capacity}")
    if outputs < 1 or tree.n_classes.shape != (outputs,) or (tree.n_classes < 1).any():
        raise _malformed(path, "its outputs or their classes are not positive numbers")
    left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
    leaf = left == -1
    if (right[leaf] != -1).any():
        raise _malformed(path)
    _check_links(left, right, leaf, np.asarray(tree.feature), min(int(tree.n_features), n_features), path)
    if np.asarray(tree.value).shape != (count, outputs, int(tree.max_n_classes)):
        raise _malformed(path, "its values do not match its nodes")


def _check_predictor(predictor, n_features, path):
    """A gradient boosting's tree: a node array of scikit-learn's layout, without categorical splits."""
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE

    nodes = getattr(predictor, "nodes", None)
    if not isinstance(nodes, np.ndarray) or nodes.dtype != PREDICTOR_RECORD_DTYPE or nodes.ndim != 1:
        raise _malformed(path, "its nodes are not an array of gradient-boosting nodes")
    leaf = nodes["is_leaf"].astype(bool)
    if nodes["is_categorical"][~leaf].any():  # genosift's models have no categorical features
        raise _not_a_model(path, "one of its trees splits on a categorical feature, which no genosift model has")
    _check_links(nodes["left"].astype(np.int64), nodes["right"].astype(np.int64), leaf,
                 nodes["feature_idx"].astype(np.int64), n_features, path)


def _check_forest(forest, n_classes, path):
    from sklearn.tree._tree import Tree

    trees, decision_tree = forest.estimators_, _classes(["sklearn.tree.DecisionTreeClassifier"])
    if not isinstance(trees, list) or not trees or any(
            type(tree) not in decision_tree or not isinstance(tree.tree_, Tree)
            or tree.tree_.n_outputs != 1
            or tree.tree_.n_classes.tolist() != [n_classes] for tree in trees):
        raise _not_a_model(path, f"its trees do not each give the probabilities of its {n_classes} classes")


def _check_boosting(model, n_classes, path):
    """A gradient boosting fitted on numbers only (no categorical features, no preprocessing),
    with one tree per class (one for two classes) at each iteration."""
    per_iteration = 1 if n_classes == 2 else n_classes
    categorical = getattr(getattr(model, "_bin_mapper", None), "is_categorical_", None)
    if (getattr(model, "_preprocessor", None) is not None or getattr(model, "is_categorical_", None) is not None
            or categorical is None or np.asarray(categorical).any() or hasattr(model, "_in_fit")):
        raise _not_a_model(path, "its gradient boosting is not one fitted on numbers only (it has categorical "
                                 "features, a preprocessing step or a fit under way), which no genosift model is")
    stages = model._predictors
    if (model.n_trees_per_iteration_ != per_iteration or not isinstance(stages, list)
            or any(not isinstance(stage, list) or len(stage) != per_iteration for stage in stages)
            or np.shape(model._baseline_prediction) != (1, per_iteration)):
        raise _not_a_model(path, f"its gradient boosting does not have {per_iteration} tree(s) per iteration "
                                 f"for its {n_classes} classes")
