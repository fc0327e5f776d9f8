"""Method options on the command line (``--method-option KEY=VALUE``) and ``genosift methods NAME``.

Options reach the method (checked against scipy on the same data), are recorded in the
sidecar, and are checked against the method's declared options before any file is read: an
unknown name or a value the method refuses is a usage error (exit 2) listing the valid options.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import genosift as gs
from genosift.cli import main
from genosift.scores import REGISTRY, check_options, describe


def _data(n=40, p=6, seed=1):
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b"], n // 2)
    X = rng.normal(size=(n, p)).round(1)
    X[y == "b", 0] += 1.5
    X[:, 1] = rng.integers(0, 4, n)
    return X, y


def _table(tmp_path, X, y):
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "sample", [f"s{i}" for i in range(X.shape[0])])
    frame["label"] = y
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    return path


def _run(argv, capsys):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _weighted_w1(x, y):
    """sum_c (n_c / n) W1(x, x | c) by scipy: wasserstein with normalize=False."""
    return sum((y == c).mean() * stats.wasserstein_distance(x, x[y == c]) for c in np.unique(y))


def test_method_option_reaches_the_method(tmp_path, capsys):
    X, y = _data()
    data = _table(tmp_path, X, y)
    out = tmp_path / "w.tsv"
    code, _, err = _run(["score", data, "--target", "label", "--method", "wasserstein", "--method-option",
                         "normalize=false", "-o", out, "--quiet"], capsys)
    assert code == 0, err
    table = pd.read_csv(out, sep="\t").set_index("feature")
    expect = [_weighted_w1(X[:, j], y) for j in range(X.shape[1])]
    np.testing.assert_allclose(table.loc[[f"g{j}" for j in range(X.shape[1])], "score"], expect, rtol=1e-10)
    assert json.loads((tmp_path / "w.tsv.json").read_text())["options"] == {"normalize": False}
    # the default (normalize=True) differs: the option was not ignored
    default = gs.score(X, y, method="wasserstein").scores
    assert not np.allclose(default, expect)


def test_repeated_method_options(tmp_path, capsys):
    """Two options at once; kendall's asymptotic p-value against scipy's."""
    X, _ = _data()
    target = np.linspace(0, 1, X.shape[0]) + X[:, 0] * 0.1
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "sample", [f"s{i}" for i in range(X.shape[0])])
    frame["t"] = target
    data = tmp_path / "k.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "k.tsv"
    code, _, err = _run(["score", data, "--target", "t", "--method", "kendall", "--method-option",
                         "p_method=asymptotic", "-o", out, "--quiet"], capsys)
    assert code == 0, err
    table = pd.read_csv(out, sep="\t").set_index("feature")
    for j in range(X.shape[1]):
        ref = stats.kendalltau(X[:, j], target, method="asymptotic")
        assert table.loc[f"g{j}", "pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
    out = tmp_path / "c.tsv"
    X2, y2 = _data()
    data2 = _table(tmp_path, X2, y2)
    code, _, err = _run(["score", data2, "--target", "label", "--method", "chi2", "--method-option", "bins=2",
                         "--method-option", "max_categories=2", "-o", out, "--quiet"], capsys)
    assert code == 0, err
    table = pd.read_csv(out, sep="\t").set_index("feature")
    # bins=2: a continuous feature is cut at its median into two equal-frequency bins
    x = X2[:, 0]
    codes = (x > np.median(x)).astype(int) if len(np.unique(x)) > 2 else x
    ref = stats.chi2_contingency(pd.crosstab(codes, y2).to_numpy(), correction=False)
    assert table.loc["g0", "score"] == pytest.approx(ref.statistic, rel=1e-9)
    assert table.loc["g0", "pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert json.loads((tmp_path / "c.tsv.json").read_text())["options"] == {"bins": 2, "max_categories": 2}


def test_select_and_evaluate_take_method_options(tmp_path, capsys):
    X, y = _data(n=60, p=8)
    data = _table(tmp_path, X, y)
    ref = gs.score(X, y, method="relieff", method_options={"n_neighbors": 3},
                   feature_names=[f"g{j}" for j in range(X.shape[1])])
    out = tmp_path / "s.tsv"
    code, _, err = _run(["select", data, "--target", "label", "--method", "relieff", "--method-option",
                         "n_neighbors=3", "--top", "2", "-o", out, "--quiet"], capsys)
    assert code == 0, err
    kept = set(pd.read_csv(out, sep="\t").columns) - {"sample", "label", "used_for_scoring"}
    assert kept == set(ref.top(2))
    res = tmp_path / "ev"
    code, _, err = _run(["evaluate", data, "--target", "label", "--method", "relieff", "--method-option",
                         "n_neighbors=3", "--k", "1,2", "--cv", "3", "-o", res, "--quiet"], capsys)
    assert code == 0, err
    scores = pd.read_csv(res / "scores.tsv", sep="\t").set_index("feature")
    np.testing.assert_allclose(scores.loc[list(ref.feature_names), "score"], ref.scores, rtol=1e-12)
    assert json.loads((res / "run.json").read_text())["method_options"] == {"n_neighbors": 3,
                                                                            "miss_weight": "prior"}


@pytest.mark.parametrize("command", ["score", "select", "evaluate"])
def test_unknown_option_is_a_usage_error_listing_the_valid_ones(command, tmp_path, capsys):
    X, y = _data()
    data = _table(tmp_path, X, y)
    extra = ["--top", "2"] if command == "select" else []
    out = tmp_path / ("ev" if command == "evaluate" else "o.tsv")
    code, _, err = _run([command, data, "--target", "label", "--method", "relieff", "--method-option", "k=3",
                         *extra, "-o", out, "--quiet"], capsys)
    assert code == 2
    assert "Method 'relieff' got unknown option(s) ['k'] (--method-option): its options are " in err
    assert "n_neighbors (default 10), miss_weight (default 'prior')" in err
    assert "genosift methods relieff" in err and "Traceback" not in err
    assert not out.exists()
    code, _, err = _run([command, data, "--target", "label", "--method", "welch", "--method-option", "bins=3",
                         *extra, "-o", out, "--quiet"], capsys)
    assert code == 2 and "Method 'welch' got unknown option(s) ['bins'] (--method-option): it takes no options" in err


@pytest.mark.parametrize("option, message", [
    ("n_neighbors=0", r"The 'n_neighbors' option of method 'relieff' must be an int >= 1\. Got 0 instead "
                      r"\(--method-option\)"),
    ("n_neighbors=many", r"must be an int >= 1\. Got 'many' instead"),
    ("miss_weight=uniform", r"'miss_weight' option of method 'relieff' must be one of 'prior', 'equal'\. "
                            r"Got 'uniform'"),
])
def test_bad_value_is_a_usage_error_before_any_file_is_read(option, message, tmp_path, capsys):
    missing = tmp_path / "no-such-file.csv"  # never opened: the value is checked first
    code, _, err = _run(["score", missing, "--target", "label", "--method", "relieff", "--method-option", option,
                         "-o", tmp_path / "o.tsv"], capsys)
    assert code == 2, err
    assert re.search(message, err), err
    assert "genosift methods relieff" in err
    assert not (tmp_path / "o.tsv").exists()


def test_malformed_method_option(tmp_path, capsys):
    code, _, err = _run(["score", tmp_path / "d.csv", "--target", "label", "--method-option", "bins",
                         "-o", tmp_path / "o.tsv"], capsys)
    assert code == 2 and "argument --method-option: must be KEY=VALUE" in err


def test_methods_name_describes_one_method(capsys):
    code, out, _ = _run(["methods", "relieff"], capsys)
    assert code == 0
    assert out.startswith("relieff: ReliefF")
    assert "task:       class labels, any number of classes" in out
    assert "p-values:   no" in out and "Kononenko (1994)" in out
    assert "n_neighbors=10" in out and "the number of nearest hits" in out
    assert "miss_weight='prior'" in out and "Weight of the misses" in out
    code, out, _ = _run(["methods", "chi2"], capsys)
    assert "p-values:   yes" in out and "bins=5" in out and "max_categories=5" in out
    assert "chi2_contingency" in out  # its reference
    code, out, _ = _run(["methods", "welch"], capsys)
    assert "task:       class labels, two classes" in out and "options: none" in out
    code, out, _ = _run(["methods"], capsys)  # alone: the table of every method
    assert code == 0 and all(re.search(rf"^{name}\s", out, re.M) for name in REGISTRY)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_option_is_described(name):
    spec = gs.get_method(name)
    text = describe(name)
    assert text.startswith(f"{name}: {spec.summary}")
    assert spec.reference.split()[0] in text
    for option, default in spec.options.items():
        assert f"{option}={default!r}" in text
        kind, meaning = spec.option_help[option]
        assert meaning, f"option {option!r} of {name} has no description in its docstring"
        assert f"{option}={default!r}  ({spec.declared[option].text})" in text  # its declaration
    # the defaults are accepted
    assert check_options(name, {}) == spec.options


def test_check_options_in_python():
    assert check_options("relieff", {"n_neighbors": 3}) == {"n_neighbors": 3, "miss_weight": "prior"}
    with pytest.raises(ValueError, match=r"The 'n_neighbors' option of method 'relieff' must be an int >= 1\. "
                                         r"Got -1 instead \(in the method_options of genosift\.score\)"):
        check_options("relieff", {"n_neighbors": -1})
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['k'\]"):
        check_options("relieff", {"k": 3})


#: For every option of every method: values its declaration refuses (types, ranges, spellings).
REFUSED = {
    ("auc", "continuity"): [1, "yes", None], ("chi2", "bins"): [1, 2.5, True, "5"],
    ("chi2", "max_categories"): [-1, 1.0], ("mi", "bins"): [0, None], ("mi", "max_categories"): [-2, "a"],
    ("dcor", "y_metric"): ["euclidean", 1], ("jensen_shannon", "bins"): [1, "scott", 3.0, True],
    ("kendall", "p_method"): ["exact", None], ("linear", "model"): ["svm", None], ("linear", "C"): [0, -1.0,
                                                                                                   float("inf"),
                                                                                                   float("nan"),
                                                                                                   True],
    ("linear", "max_iter"): [0, 10.0], ("linear", "random_state"): [1.5, "0", True],
    ("logistic", "firth"): ["yes", True], ("lmm", "model"): ["glmm", "Linear", None],
    ("relieff", "n_neighbors"): [0, 2.0, False],
    ("relieff", "miss_weight"): ["uniform"], ("wasserstein", "normalize"): [0, "true"],
}


def test_every_option_is_declared_and_its_declaration_refuses_bad_values():
    declared = {(name, option) for name, spec in REGISTRY.items() for option in spec.options}
    assert declared == set(REFUSED), "give every declared option its refused values here"
    for (name, option), values in REFUSED.items():
        for value in values:
            with pytest.raises(ValueError, match=rf"The '{option}' option of method '{name}' must be "):
                check_options(name, {option: value})
    # and values the declarations take, which the methods then run with
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.repeat([0, 1], 10)
    for name, options in [("jensen_shannon", {"bins": 3}), ("linear", {"random_state": None, "C": 2}),
                          ("chi2", {"bins": np.int64(3)}), ("relieff", {"n_neighbors": np.int32(2)})]:
        assert np.isfinite(gs.score(X, y, method=name, method_options=options).scores).all()


def test_a_registration_must_declare_exactly_its_options():
    from genosift.core.constraints import Integer
    from genosift.scores import register

    def method(block, target, *, k=3):
        """A method."""

    with pytest.raises(ValueError, match=r"its options \['k'\] and their declarations \[\] differ"):
        register("toy", task="classification", invariance="none", streaming="blocks", formula="", reference="")(method)
    with pytest.raises(ValueError, match=r"the default 3 of 'k' is not an int >= 5"):
        register("toy", task="classification", invariance="none", streaming="blocks", formula="", reference="",
                 options={"k": Integer(low=5)})(method)
    assert "toy" not in REGISTRY
