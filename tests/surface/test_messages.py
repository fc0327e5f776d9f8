"""Messages a user can act on: fixes spelled for the caller (Python keywords in Python, options on
the command line), values written as plain Python, checks before the work, and names drawn
literally in figures."""
import re

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.cli import main
from genosift.cli.spelling import cli_spelling
from genosift.core.messages import FixError, PythonText, plain
from genosift.io import read, read_metadata

# what a command-line user cannot type: Python keyword arguments and library calls
PYTHON_SPELLING = re.compile(
    r"\b(keep|id_column|sep|features_in_rows|method|metric|cv|format|overwrite)=|genosift\.(io|score|methods|workflow)"
    r"|\bnp\.[a-z_]+[0-9]*\(|array\("
)


def _table(path, *, n=12, sep=",", label="label", extra_text=True, names=("f1", "f2", "f3")):
    rng = np.random.default_rng(0)
    head = ["id", *names, label] + (["batch"] if extra_text else [])
    lines = [sep.join(head)]
    for i in range(n):
        y = i % 2
        values = rng.normal(size=len(names))
        values[0] += 2.0 * y
        cells = [f"s{i}", *(f"{v:.6f}" for v in values), f"{float(y)}"]
        if extra_text:
            cells.append(f"b{i % 3}")
        lines.append(sep.join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def files(tmp_path):
    f = {"csv": _table(tmp_path / "t.csv"), "semi": _table(tmp_path / "semi.csv", sep=";")}
    f["ragged"] = tmp_path / "ragged.csv"
    f["ragged"].write_text("id,f1,label\ns1,1,0\ns2,2,1,7\ns3,3,0\n")
    f["meta"] = tmp_path / "meta.tsv"
    f["meta"].write_text("sample\tlabel\n" + "".join(f"s{i}\t{i % 2}\n" for i in range(12)))
    f["meta_semi"] = tmp_path / "meta_semi.txt"
    f["meta_semi"].write_text("sample;label\n" + "".join(f"s{i};{i % 2}\n" for i in range(12)))
    f["meta_empty"] = tmp_path / "meta_empty.tsv"
    f["meta_empty"].write_text("sample\tlabel\n")
    f["data"] = _table(tmp_path / "data.csv", extra_text=False, label="other")
    f["unknown"] = tmp_path / "data.dat"
    f["unknown"].write_text("id f1\n")  # neither its name nor its first line tells the format
    f["damaged"] = tmp_path / "d.csv.gz"
    f["damaged"].write_bytes(b"\x1f\x8b\x08\x00garbage that is not deflate")
    f["bad_parquet"] = tmp_path / "d.parquet"
    f["bad_parquet"].write_bytes(b"PAR1 this footer is missing")
    f["npy"] = tmp_path / "x.npy"
    np.save(f["npy"], np.zeros((3, 2)))
    f["bad_store"] = tmp_path / "bad.gs.h5ad"
    f["bad_store"].write_bytes(b"not an HDF5 file at all")
    return f


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


# (arguments, exit code, texts the message must hold: the CLI spelling of the fix)
BAD = {
    "text column not kept": (["score", "{csv}", "--target", "label"], 1, ["--keep batch"]),
    "ragged row": (["score", "{ragged}", "--target", "label"], 1, ["line 3", "pass --sep"]),
    "wrong separator": (["score", "{semi}", "--target", "label"], 1, ["single column", "pass --sep"]),
    "separator that splits nothing": (["score", "{csv}", "--target", "label", "--sep", ";"], 1, ["--sep"]),
    "unknown id column": (["score", "{csv}", "--target", "label", "--keep", "batch", "--id-column", "nope"], 1,
                          ["'nope'", "(the --id-column option)"]),
    "id column position out of range": (["score", "{csv}", "--target", "label", "--keep", "batch",
                                         "--id-column", "9"], 1, ["--id-column", "[0, 5]"]),
    "unknown kept column": (["score", "{csv}", "--target", "label", "--keep", "batch,nope"], 1,
                            ["(the --keep option)"]),
    "unknown target column of the data table": (["score", "{csv}", "--target", "labl", "--keep", "batch"], 1,
                                                ["no column named 'labl' (the --target option)", "(closest: 'label')",
                                                 "Check the spelling."]),
    "unknown group column of the data table": (["evaluate", "{csv}", "--target", "label", "--keep", "batch",
                                                "--group", "batc", "--k", "1", "--cv", "2"], 1,
                                               ["no column named 'batc' (the --group option)"]),
    "id column also kept": (["score", "{csv}", "--target", "label", "--keep", "batch,id"], 1,
                            ["cannot also be in --keep"]),
    "every column kept": (["score", "{csv}", "--target", "label", "--keep", "batch,f1,f2,f3"], 1,
                          ["no feature columns", "--keep"]),
    "keep with features in rows": (["select", "{data}", "--target", "other", "--features-in-rows", "--keep", "f1",
                                    "--top", "1"], 1, ["--keep selects per-sample columns", "--features-in-rows"]),
    "table option on another format": (["score", "{npy}", "--target", "label", "--sep", ";"], 1,
                                       ["--sep do not apply to npy files"]),
    "metadata id column": (["score", "{data}", "--meta", "{meta}", "--id", "nope", "--target", "label"], 1,
                           ["Pass --id one of them"]),
    "metadata separator": (["score", "{data}", "--meta", "{meta_semi}", "--id", "sample", "--target", "label",
                            "--meta-sep", ","], 1, ["--id", "--meta-sep"]),
    "empty metadata": (["score", "{data}", "--meta", "{meta_empty}", "--id", "sample", "--target", "label"], 1,
                       ["meta_empty.tsv' is empty", "no rows"]),
    "classes not present": (["score", "{csv}", "--target", "label", "--keep", "batch", "--classes", "0,5"], 1,
                            ["['5']", "are [0.0, 1.0]"]),
    "not a store": (["score", "{bad_store}", "--target", "label"], 1, ["`genosift convert`"]),
    "roc_auc with three classes": (["evaluate", "{csv}", "--target", "batch", "--metric", "roc_auc", "--k", "1",
                                    "--cv", "2"], 1, ["'roc_auc' needs two classes", "3: ['b0', 'b1', 'b2']",
                                                      "--metric"]),
    "more folds than samples": (["evaluate", "{csv}", "--target", "label", "--keep", "batch", "--k", "1",
                                 "--cv", "9"], 1, ["6 sample(s)", "(--cv)"]),
    "unknown suffix": (["score", "{unknown}", "--target", "label"], 1, ["or pass --format one of"]),
    "unknown format": (["score", "{csv}", "--format", "xlsx", "--target", "label"], 1,
                       ["The --format option must be one of"]),
    "damaged gzip": (["score", "{damaged}", "--target", "label"], 1, ["damaged or incomplete", "`gzip -t FILE`"]),
    "damaged parquet": (["score", "{bad_parquet}", "--target", "label"], 1, ["is damaged", "pass --format to choose"]),
    "convert meta of a table": (["convert", "{csv}", "--meta", "{meta}", "--id", "sample"], 2, ["--keep"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_cli_messages_name_options_not_python(case, files, tmp_path, capsys):
    argv, code, wanted = BAD[case]
    argv = [a.format(**files) for a in argv] + ["-o", tmp_path / ("out" if argv[0] == "evaluate" else
                                                                  "out.gs.h5ad" if argv[0] == "convert" else "o.tsv")]
    got, err = _run(argv, capsys)
    assert got == code, err
    assert err.startswith("genosift") and err.count("\n") == 1, err  # one line, no traceback
    for text in wanted:
        assert text in err, (text, err)
    assert not PYTHON_SPELLING.search(err), err


def test_the_same_errors_in_python_name_keywords(files):
    with pytest.raises(FixError) as err:
        read(files["csv"], keep=["label"])
    assert "Pass keep=['batch'] to keep it as a per-sample column" in str(err.value)
    with pytest.raises(ValueError, match=r"pass sep= if the separator is wrong"):
        read(files["ragged"])
    with pytest.raises(ValueError, match=r"\(the id_column= option\)"):
        read(files["csv"], id_column="nope")
    with pytest.raises(ValueError, match=r"Pass id_column= one of them, or the right sep="):
        read_metadata(files["meta_semi"], id_column="sample", sep=",")
    with pytest.raises(ValueError, match=r"meta_empty\.tsv' is empty"):
        read_metadata(files["meta_empty"], id_column="sample")


def test_the_fixes_work_as_the_messages_say(files, tmp_path, capsys):
    out = tmp_path / "o.tsv"
    assert _run(["score", files["csv"], "--target", "label", "--keep", "batch", "-o", out], capsys)[0] == 0
    semi = tmp_path / "s.tsv"
    assert _run(["score", files["semi"], "--target", "label", "--sep", ";", "--keep", "batch", "-o", semi],
                capsys)[0] == 0
    pd.testing.assert_frame_equal(pd.read_csv(out, sep="\t"), pd.read_csv(semi, sep="\t"))
    by_position = tmp_path / "p.tsv"
    assert _run(["score", files["csv"], "--target", "label", "--keep", "batch", "--id-column", "0", "-o",
                 by_position], capsys)[0] == 0
    pd.testing.assert_frame_equal(pd.read_csv(out, sep="\t"), pd.read_csv(by_position, sep="\t"))
    # labels read as 0.0 / 1.0 are matched by --classes 0,1
    classes = tmp_path / "c.tsv"
    assert _run(["score", files["csv"], "--target", "label", "--keep", "batch", "--classes", "0,1", "-o", classes],
                capsys)[0] == 0
    pd.testing.assert_frame_equal(pd.read_csv(out, sep="\t"), pd.read_csv(classes, sep="\t"))
    code, err = _run(["score", files["csv"], "--target", "label", "--keep", "batch", "--classes", "1",
                      "-o", tmp_path / "one.tsv"], capsys)
    assert code == 1 and "only one class (1.0)" in err and not PYTHON_SPELLING.search(err)
    # metadata with another separator
    meta = tmp_path / "m.tsv"
    assert _run(["score", files["data"], "--meta", files["meta_semi"], "--id", "sample", "--meta-sep", ";",
                 "--target", "label", "-o", meta], capsys)[0] == 0


def test_convert_keeps_a_label_column_and_a_store_scores_it(files, tmp_path, capsys):
    store = tmp_path / "t.gs.h5ad"
    assert _run(["convert", files["csv"], "--keep", "label,batch", "-o", store], capsys)[0] == 0
    from_store, from_table = tmp_path / "a.tsv", tmp_path / "b.tsv"
    assert _run(["score", store, "--target", "label", "-o", from_store], capsys)[0] == 0
    assert _run(["score", files["csv"], "--target", "label", "--keep", "batch", "-o", from_table], capsys)[0] == 0
    a, b = pd.read_csv(from_store, sep="\t"), pd.read_csv(from_table, sep="\t")
    assert a["feature"].tolist() == b["feature"].tolist()
    np.testing.assert_allclose(a["score"], b["score"], rtol=1e-12)
    # a method that needs the whole matrix: the message names --format h5ad, which works
    code, err = _run(["score", store, "--target", "label", "--method", "relieff", "-o", tmp_path / "r.tsv"], capsys)
    assert code == 1 and "--format h5ad" in err and "`genosift methods`" in err, err
    assert not PYTHON_SPELLING.search(err), err
    assert _run(["score", store, "--format", "h5ad", "--target", "label", "--method", "relieff",
                 "-o", tmp_path / "r.tsv"], capsys)[0] == 0
    # a store takes no table options
    code, err = _run(["score", store, "--target", "label", "--sep", ";", "-o", tmp_path / "x.tsv"], capsys)
    assert code == 1 and "--sep do not apply to a store" in err


def test_relieff_on_a_store_in_python_names_the_calls(files, tmp_path):
    store = tmp_path / "t.gs.h5ad"
    gs.io.convert(files["csv"], store, keep=["label", "batch"])
    with pytest.raises(FixError) as err:
        gs.score(store, "label", method="relieff")
    assert "genosift.io.read(path) and call genosift.score" in str(err.value)
    assert "another method=" in str(err.value) and "genosift.methods()" in str(err.value)


def test_roc_auc_with_three_classes_is_refused_before_any_fold(monkeypatch):
    from genosift import selectors as model_selection
    from genosift import workflow

    def never(*args, **kwargs):
        raise AssertionError("cross-validation started")

    monkeypatch.setattr(model_selection, "cross_validate_grid", never)
    X = np.random.default_rng(1).normal(size=(12, 4))
    y = np.repeat([0, 1, 2], 4)
    with pytest.raises(ValueError, match=r"'roc_auc' needs two classes; y has 3: \[0, 1, 2\]\. Choose another metric="):
        workflow.evaluate(X, y, metric="roc_auc", ks=[1], cv=2)
    validation = np.zeros(12, dtype=bool)
    validation[[0, 1]] = True  # both of class 0
    with pytest.raises(ValueError, match=r"both classes among the validation samples; they are all 0\."):
        workflow.evaluate(X[:8], y[:8], metric="roc_auc", ks=[1], validation=validation[:8])


def test_predict_names_the_features_and_samples_with_nan(tmp_path, capsys):
    from genosift.workflow import evaluate, load_model, predict, write_results

    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 4))
    y = np.repeat([0, 1], 10)
    X[:, 0] += 3 * y
    names = np.array(["g0", "g1", "g2", "g3"], dtype=object)
    ev = evaluate(X, y, ks=[4], cv=2, feature_names=names)
    write_results(ev, tmp_path / "ev", X=X, y=y)
    saved = load_model(tmp_path / "ev")
    new = X[:3].copy()
    new[1, 0] = np.nan
    new[2, 3] = np.inf
    with pytest.raises(ValueError) as err:
        predict(saved, new, names, sample_ids=np.array(["a", "b", "c"]))
    assert ("NaN or infinity in 2 feature(s) the model uses: 'g0', 'g3', in 2 sample(s): 'b', 'c'"
            in str(err.value))
    # sparse data and a feature absent from the data (NaN in the column it borrows is not used)
    import scipy.sparse as sp

    frame, _ = predict(saved, sp.csr_matrix(X[:3, :3]), names[:3], fill_missing=True)
    dense, _ = predict(saved, np.c_[X[:3, :3], np.zeros(3)], names, fill_missing=False)
    pd.testing.assert_frame_equal(frame, dense)
    with_nan = X[:3, :3].copy()
    with_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"feature\(s\) the model uses: 'g0', in 1 sample\(s\): '0'"):
        predict(saved, sp.csr_matrix(with_nan), names[:3], fill_missing=True)
    # the command line: a table with an empty cell
    table = tmp_path / "new.csv"
    table.write_text("id,g0,g1,g2,g3\nx,1,2,3,4\ny,,2,3,4\n")
    code, err = _run(["predict", tmp_path / "ev", table, "-o", tmp_path / "p.tsv"], capsys)
    assert code == 1 and "'g0', in 1 sample(s): 'y'" in err and "sklearn" not in err.lower(), err


@pytest.mark.parametrize("value, text", [
    (np.int64(1), "1"), (np.float64(0.5), "0.5"), (np.str_("a"), "'a'"), (np.bool_(True), "True"),
    ([np.int64(1), np.str_("b")], "[1, 'b']"), (np.array([0.0, 1.0]), "[0.0, 1.0]"),
    ((np.int32(3),), "(3,)"), ({np.int64(10), np.int64(2)}, "[2, 10]"), ("x", "'x'"), (None, "None"),
])
def test_plain_writes_numpy_values_as_python(value, text):
    assert plain(value) == text


def test_library_messages_print_labels_as_python():
    X = np.random.default_rng(3).normal(size=(6, 3))
    with pytest.raises(ValueError) as err:
        gs.score(X, np.array([1, 1, 1, 1, 1, 1], dtype=np.int64), method="welch")
    assert "only one class (1)" in str(err.value) and "np." not in str(err.value)
    with pytest.raises(ValueError) as err:
        gs.score(X, np.array([0, 1, 2, 0, 1, 2]), method="welch")
    assert "[0, 1, 2]" in str(err.value) and "np." not in str(err.value)
    with pytest.raises(ValueError) as err:
        gs.SelectKBest("fisher", k=np.int64(-1)).fit(X, np.array([0, 1] * 3))
    assert "Got -1 instead" in str(err.value)


def test_fix_error_spelling_and_braces():
    err = FixError("'{a}.csv' column '{x}': pass {keep}, or {sep} or {call}.", owner="read_table",
                   keep=["x", "y z"], sep=FixError.ANY, call=PythonText("genosift.io.read(p)"))
    assert str(err) == "'{a}.csv' column '{x}': pass keep=['x', 'y z'], or sep= or genosift.io.read(p)."
    assert err.spelled(cli_spelling) == "'{a}.csv' column '{x}': pass --keep 'x,y z', or --sep or --call."
    meta = FixError("{id_column}", owner="read_metadata", id_column=FixError.ANY)
    assert meta.spelled(cli_spelling) == "--id"


NAMES = ["$_$", "a$b", "\\frac", "_", "^", "$\\frac{1}{0}$", "=1+1", "<b>&"]


def test_figures_draw_names_literally(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.text import Text

    from genosift.report import figures

    rng = np.random.default_rng(4)
    n = len(NAMES)
    scores = pd.DataFrame({"feature": NAMES, "score": rng.random(n), "statistic": rng.normal(size=n),
                           "pvalue": rng.random(n) / 100, "qvalue": rng.random(n) / 100, "rank": np.arange(1, n + 1),
                           "selected": [True] * n})
    top = pd.DataFrame({"sample": [f"s{i}" for i in range(8)], "label": ["$_$", "a$b"] * 4,
                        **{name: rng.normal(size=8) for name in NAMES}})
    stability = pd.DataFrame({"feature": NAMES, "frequency": np.linspace(1, 0.2, n), "in_final_model": [True] * n})
    confusion = pd.DataFrame({"true": ["$_$", "^"], "$_$": [3, 1], "^": [0, 4]})
    drawn = [figures.volcano(scores, n_labels=n), figures.class_distributions(top),
             figures.selection_stability(stability), figures.confusion_matrix(confusion)]
    shown = set()
    for fig in drawn:
        assert figures.png_bytes(fig)[:4] == b"\x89PNG"  # mathtext would raise on '$_$'
        for text in fig.findobj(Text):
            string, math = text._preprocess_math(text.get_text())
            assert math is False, text.get_text()
            shown.add(string)
    for name in NAMES:
        assert any(name in s for s in shown), name


def test_report_with_mathtext_names(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from genosift.report import make_report
    from genosift.workflow import evaluate, write_results

    rng = np.random.default_rng(5)
    X = rng.normal(size=(16, len(NAMES)))
    y = np.array(["$_$", "a$b"] * 8, dtype=object)
    X[:, 0] += 2 * (y == "a$b")
    ev = evaluate(X, y, ks=[2, len(NAMES)], cv=2, feature_names=np.array(NAMES, dtype=object))
    write_results(ev, tmp_path / "ev", X=X, y=y)
    report = make_report(tmp_path / "ev", tmp_path / "r.html")
    html = report.html.read_text()
    assert "<td>$_$</td>" in html and "<td>a$b</td>" in html  # the class names, as they are
    assert len(report.pngs) >= 4
    # an existing report: the fix in each caller's words
    with pytest.raises(FileExistsError, match=r"r\.html' already exists\. Pass overwrite=True to replace it, or "
                                              r"choose another out_html=\."):
        make_report(tmp_path / "ev", tmp_path / "r.html")
    code = main(["report", str(tmp_path / "ev"), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 1 and "Pass --force to replace it, or choose another -o." in err, err
    code = main(["report", str(tmp_path / "ev"), "-o", str(tmp_path / "r2.html"), "--png-dir",
                 str(report.pngs[0].parent)])
    err = capsys.readouterr().err
    assert code == 1 and "Pass --force to replace the figures, or choose another --png-dir." in err, err
    assert not PYTHON_SPELLING.search(err)


def test_formula_like_names_are_written_verbatim_and_documented(tmp_path, capsys):
    from pathlib import Path

    table = tmp_path / "f.csv"
    table.write_text("id,=1+1,@x,label\n" + "".join(f"s{i},{i},{i % 3},{i % 2}\n" for i in range(8)))
    out = tmp_path / "o.tsv"
    assert _run(["score", table, "--target", "label", "-o", out], capsys)[0] == 0
    assert set(pd.read_csv(out, sep="\t")["feature"]) == {"=1+1", "@x"}
    security = (Path(__file__).resolve().parents[2] / "SECURITY.md").read_text()
    assert "formula" in security and "**Text**" in security


def test_help_texts_name_options_and_every_format():
    import argparse

    from genosift.cli import build_parser
    from genosift.io import READERS

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        text = sub.format_help()
        assert not PYTHON_SPELLING.search(text), (name, PYTHON_SPELLING.search(text)[0])
        if any("--format" in a.option_strings for a in sub._actions):
            assert all(reader in text for reader in READERS), name
        if name in ("score", "select", "evaluate", "predict", "convert"):
            for option in ("--sep", "--id-column", "--keep", "--features-in-rows", "--meta-sep"):
                assert option in text, (name, option)


def test_evaluate_and_attach_metadata_messages():
    from genosift.io import Dataset, attach_metadata
    from genosift.workflow import evaluate

    X = np.random.default_rng(6).normal(size=(6, 2))
    with pytest.raises(ValueError, match=r"^y has only one class \(1\); evaluate needs at least two\.$"):
        evaluate(X, np.ones(6, dtype=np.int64), ks=[1], cv=2)
    ds = Dataset(X, np.array([f"s{i}" for i in range(6)], dtype=object), np.array(["a", "b"], dtype=object))
    empty = pd.DataFrame({"y": []}, index=pd.Index([], name="id"))
    with pytest.raises(ValueError, match=r"^The metadata are empty: they have no rows"):
        attach_metadata(ds, empty)
    other = pd.DataFrame({"y": [1]}, index=pd.Index(["z"], name="id"))
    other.attrs["path"] = "pheno.tsv"
    with pytest.raises(ValueError, match=r"No sample id of the data is in the metadata \('pheno\.tsv'\): the data "
                                         r"have 's0', .*; the metadata have 'z'\."):
        attach_metadata(ds, other)


def test_every_parameter_a_message_names_has_a_command_line_spelling():
    """Static: each FixError in the sources names parameters that the command line spells as one of
    its options (or a command), so no fix printed by the command is one it does not have."""
    import argparse
    from pathlib import Path

    from genosift.cli import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    options = {o for sub in subparsers.choices.values() for a in sub._actions for o in a.option_strings}
    found = set()
    for path in (Path(__file__).resolve().parents[2] / "src" / "genosift").rglob("*.py"):
        text = path.read_text()
        for match in re.finditer(r"Fix(?:Exists)?Error\(", text):
            depth, end = 1, match.end()
            while depth:  # the call's closing parenthesis (the messages' own are balanced)
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            call = text[match.end():end]
            owner = re.search(r'owner="(\w+)"', call)
            if owner is None:
                continue
            names = set(re.findall(r"\b(\w+)=(?:Fix\w*Error\.ANY|PythonText\(|True\b|\[)", call))
            if "**{option: FixError.ANY}" in call:
                names |= {"id_column", "keep"}
            if "**({\"keep\"" in call:
                names.add("keep")
            found |= {(owner[1], n) for n in names}
    assert len(found) >= 12 and ("make_report", "png_dir") in found, found
    for owner, name in sorted(found):
        spelled = cli_spelling(owner, name, FixError.ANY)
        if spelled.startswith("-"):
            assert spelled.split()[0] in options, (owner, name, spelled)
        else:
            assert "`genosift " in spelled or "--" in spelled, (owner, name, spelled)


def test_fix_errors_survive_pickling():
    """Errors raised in worker processes (Dask, joblib) come back pickled, spelling intact."""
    import pickle

    err = FixError("pass {keep} or {sep} ({call})", owner="read_table", keep=["a"], sep=FixError.ANY,
                   call=PythonText("genosift.io.read(p)"))
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is FixError and str(back) == str(err)
    assert back.spelled(cli_spelling) == "pass --keep a or --sep (--call)"


def test_the_command_in_a_subprocess_spells_the_fix(files, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run([sys.executable, "-m", "genosift", "score", str(files["csv"]), "--target", "label",
                          "-o", str(tmp_path / "o.tsv")], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "Pass --keep batch to keep it" in run.stderr and not PYTHON_SPELLING.search(run.stderr), run.stderr
