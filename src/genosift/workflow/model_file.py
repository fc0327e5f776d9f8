"""A fitted model saved as data: ``model.skops``, which loading cannot turn into running code.

The file is a skops archive (https://skops.readthedocs.io): a JSON description of the objects and
NumPy arrays stored without pickles. Loading builds only the types that the models of
``genosift.workflow.make_model`` are made of (scikit-learn's own trusted types, and those named
in ``ALLOWED``); anything else in a file is refused before it is built. The trees of a
forest or a gradient boosting are then checked node by node (children inside the tree and after
their parent, features inside the model's inputs), because scikit-learn's compiled prediction
indexes with those numbers unchecked.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["ALLOWED", "FORMAT", "SUFFIX", "check_estimator", "read_model", "write_model"]

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
        features, classes = info["features"], info["classes"]
    except (KeyError, TypeError, ValueError) as exc:
        raise _not_a_model(path, f"its {exc} is missing or malformed") from None
    if (columns.ndim != 1 or columns.dtype.kind not in "iu" or (columns.size and (
            columns[0] < 0 or columns[-1] >= len(features) or (np.diff(columns) <= 0).any()))):
        raise _not_a_model(path, "its columns are not increasing positions among its features")
    ploidy = info.get("ploidy")
    if ploidy is not None and (type(ploidy) is not int or not 0 < ploidy < 2**31):
        raise _not_a_model(path, f"its ploidy {ploidy!r} is not a positive number of allele copies")
    check_estimator(estimator, columns.size, len(classes), path)
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


def check_estimator(estimator, n_features, n_classes, path):
    """Check that the loaded ``estimator`` is one that ``make_model`` builds, fitted on
    ``n_features`` inputs and ``n_classes`` classes, with every tree well formed."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.pipeline import Pipeline

    final = estimator
    steps = []
    while isinstance(final, Pipeline):
        steps.extend(final.steps[:-1])
        final = final.steps[-1][1]
    if not hasattr(final, "classes_") or len(final.classes_) != n_classes:
        raise _not_a_model(path, f"its estimator ({type(final).__name__}) is not fitted on its {n_classes} classes")
    seen = getattr(final, "n_features_in_", None)
    if seen != n_features:
        raise _not_a_model(path, f"its estimator takes {seen} features where the file selects {n_features}")
    if isinstance(final, RandomForestClassifier):
        for tree in final.estimators_:
            _check_tree(tree.tree_, n_features, path)
    elif isinstance(final, HistGradientBoostingClassifier):
        for stage in final._predictors:
            for predictor in stage:
                _check_predictor(predictor, n_features, path)


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
        raise _not_a_model(path, "one of its trees is malformed (a node points outside the tree or its features)")


def _check_tree(tree, n_features, path):
    left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
    leaf = left == -1
    if (right[leaf] != -1).any() or tree.n_features != n_features:
        raise _not_a_model(path, "one of its trees is malformed (a node points outside the tree or its features)")
    _check_links(left, right, leaf, np.asarray(tree.feature), n_features, path)
    if np.asarray(tree.value).shape[0] != left.shape[0]:
        raise _not_a_model(path, "one of its trees is malformed (its values do not match its nodes)")


def _check_predictor(predictor, n_features, path):
    nodes = predictor.nodes
    leaf = nodes["is_leaf"].astype(bool)
    if nodes["is_categorical"][~leaf].any():  # genosift's models have no categorical features
        raise _not_a_model(path, "one of its trees splits on a categorical feature, which no genosift model has")
    _check_links(nodes["left"].astype(np.int64), nodes["right"].astype(np.int64), leaf,
                 nodes["feature_idx"].astype(np.int64), n_features, path)
