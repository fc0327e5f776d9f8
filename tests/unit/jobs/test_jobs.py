"""The jobs (``genosift.jobs``): each command is one of them, so a Python caller gets the same
outputs, checks and summary as the command line, with its messages spelled as keywords."""
from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.cli import main
from genosift.core.messages import FixError, PythonText
from genosift.core.validation import UsageError
from genosift.jobs import Covariates, Samples

pytestmark = pytest.mark.filterwarnings("ignore:The 'future.infer_string' option is deprecated")


@pytest.fixture
def golub(tmp_path):
    """200 Golub genes as a CSV table and its labels in a metadata table."""
    X, y, names = gs.load_golub()
    ids = [f"p{i}" for i in range(len(y))]
    data = pd.DataFrame(X[:, :200], columns=names[:200])
    data.insert(0, "sample", ids)
    data.to_csv(tmp_path / "expr.csv", index=False)
    pd.DataFrame({"sample": ids, "type": y, "site": (["a", "b", "c"] * 13)[:38]}).to_csv(tmp_path / "meta.csv",
                                                                                      index=False)
    return tmp_path


def _cli(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _sidecar(path):
    """The provenance, less what differs between two runs (timing, the command, the output)."""
    record = json.loads(path.read_text())
    for key in ("seconds", "started", "finished", "command", "output", "peak_memory_mb"):
        record.pop(key, None)
    return record


@pytest.mark.parametrize("job", ["score", "select"])
def test_a_job_from_python_writes_what_its_command_writes(golub, capsys, job):
    samples = Samples(golub / "expr.csv", target="type", meta=golub / "meta.csv", id_column="sample")
    code, out, _ = _cli([job, golub / "expr.csv", "--meta", golub / "meta.csv", "--id", "sample", "--target", "type",
                         "--method", "welch", "--top", "12", "-o", golub / "cli.tsv"], capsys)
    assert code == 0
    run = getattr(gs.jobs, job)(samples, golub / "py.tsv", method="welch", top=12)
    assert (golub / "py.tsv").read_bytes() == (golub / "cli.tsv").read_bytes()
    assert _sidecar(golub / "py.tsv.json") == _sidecar(golub / "cli.tsv.json")
    assert run.outputs == [golub / "py.tsv", golub / "py.tsv.json"]
    assert int(run.mask.sum()) == 12 and run.result.method == "welch"
    printed = out.splitlines()
    # the same summary, but for the time and memory of the first line and the outputs' names
    assert run.lines[0].split(";")[:2] == printed[0].split(";")[:2]
    assert run.lines[1:-1] == printed[1:-1] and len(run.lines) == len(printed)
    assert str(run) == "\n".join(run.lines)


def test_evaluate_predict_and_report_from_python(golub):
    pytest.importorskip("skops", reason="saved models need skops")
    samples = Samples(golub / "expr.csv", target="type", meta=golub / "meta.csv", id_column="sample")
    run = gs.jobs.evaluate(samples, golub / "results", method="welch", ks=[5, 20], cv=3, seed=0)
    ev = run.evaluation
    assert ev.best_k in (5, 20) and (golub / "results" / "model.skops").is_file()
    assert run.lines[0].startswith(f"genosift {gs.__version__} evaluate: welch ranking, logistic model")
    predicted = gs.jobs.predict(golub / "expr.csv", golub / "results" / "model.skops", golub / "pred.tsv",
                                meta=golub / "meta.csv", id_column="sample", target="type")
    frame = pd.read_csv(golub / "pred.tsv", sep="\t")
    assert frame["sample"].tolist() == predicted.frame["sample"].tolist() and "true" in frame
    assert predicted.lines[-1] == f"Wrote {golub / 'pred.tsv'}"


def test_the_jobs_messages_name_keywords_in_python_and_options_on_the_command_line(golub, capsys):
    samples = Samples(golub / "expr.csv", target="type", meta=golub / "meta.csv", id_column="sample")
    with pytest.raises(UsageError, match=r"id_column= names the sample-id column of the covariates table table=: "
                                         r"pass table= too"):
        Covariates(id_column="sample")
    with pytest.raises(UsageError, match=r"structure_out= writes the coordinates of structure=: pass structure= too"):
        Covariates(structure_out=golub / "pcs.tsv")
    with pytest.raises(UsageError, match=r"select needs a rule: top=, fdr= or threshold="):
        gs.jobs.select(samples, golub / "o.tsv")
    with pytest.raises(UsageError, match=r"got unknown option\(s\) \['k'\] \(method_options=\): it takes no options. "
                                         r"See genosift.scores.describe\('welch'\)"):
        gs.jobs.score(samples, golub / "o.tsv", method="welch", method_options={"k": 3})
    with pytest.raises(UsageError, match=r"Method 'welch' does not adjust for covariates"):
        gs.jobs.score(samples, golub / "o.tsv", method="welch", covariates=Covariates(columns=["site"]))
    with pytest.raises(FixError, match=r"fdr= needs p-values, and method 'fisher' has none. Use top="):
        gs.jobs.score(samples, golub / "o.tsv", method="fisher", fdr=0.05)
    assert not (golub / "o.tsv").exists()
    code, _, err = _cli(["score", golub / "expr.csv", "--meta", golub / "meta.csv", "--id", "sample", "--target",
                         "type", "--method", "welch", "--method-option", "k=3", "-o", golub / "o.tsv"], capsys)
    assert code == 2 and "(--method-option): it takes no options. See `genosift methods welch`." in err
    code, _, err = _cli(["score", golub / "expr.csv", "--target", "type", "--covariates-sep", ",", "-o",
                         golub / "o.tsv"], capsys)
    assert code == 2 and "--covariates-sep is the separator of the covariates table --covariates FILE" in err


def test_a_fix_with_a_command_spelling_survives_pickling():
    """Errors raised in worker processes come back pickled: both spellings of a fix travel."""
    text = PythonText("genosift.scores.describe('auc')", "auc")
    back = pickle.loads(pickle.dumps(text))
    assert str(back) == str(text) and back.args == ("auc",)
    err = FixError("See {describe}.", owner="check_options", describe=text)
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == "See genosift.scores.describe('auc')."
    from genosift.cli.spelling import cli_message

    assert cli_message(again) == "See `genosift methods auc`."


def test_demo_and_convert_from_python(tmp_path):
    pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
    run = gs.jobs.demo(tmp_path / "demo", top=3)
    ranking = pd.read_csv(tmp_path / "demo" / "ranking.tsv", sep="\t")
    assert run.frame["feature"].tolist() == ranking["feature"].tolist()
    assert len([line for line in run.lines if line[:4].strip().isdigit()]) == 3
    table = tmp_path / "t.tsv"
    pd.DataFrame({"sample": ["a", "b", "c"], "x": [1.0, 2.0, 0.0], "y": [0.5, 0.0, 3.0]}).to_csv(table, sep="\t",
                                                                                             index=False)
    made = gs.jobs.convert(table, tmp_path / "t.gs.h5ad", dtype="float64")
    assert made.shape == (3, 2) and made.store == tmp_path / "t.gs.h5ad"
    np.testing.assert_array_equal(gs.io.read(made.store).X, [[1.0, 0.5], [2.0, 0.0], [0.0, 3.0]])
    with pytest.raises(UsageError, match=r"dtype='auto' is for k-mer counts.*e.g. dtype='uint8'"):
        gs.jobs.convert(table, tmp_path / "u.gs.h5ad")


@pytest.mark.parametrize("job, call", [
    ("enet", lambda s, out: gs.jobs.enet(s, out / "enet.tsv")),
    ("knockoffs", lambda s, out: gs.jobs.knockoffs(s, out / "knockoffs.tsv")),
    ("evaluate", lambda s, out: gs.jobs.evaluate(s, out / "results", ks=(5,))),
    ("patterns", lambda s, out: gs.jobs.patterns(s, out / "patterns.tsv")),
    ("heritability", lambda s, out: gs.jobs.heritability(s, Covariates(kinship_from_data=True))),
    ("pairs", lambda s, out: gs.jobs.pairs(s, out / "pairs.tsv")),
])
def test_a_job_that_runs_here_refuses_a_scheduler_rather_than_ignoring_it(golub, job, call):
    """Only score and select send a store's work to Dask workers: the other jobs given a scheduler
    say so before reading anything, and write nothing."""
    samples = Samples(golub / "expr.csv", target="type", meta=golub / "meta.csv", id_column="sample",
                      scheduler="local:2")
    before = sorted(golub.iterdir())
    with pytest.raises(FixError, match=rf"^scheduler= scores a store on Dask workers in score and select; "
                                       rf"{job} runs here\. Leave out scheduler=\.$"):
        call(samples, golub)
    assert sorted(golub.iterdir()) == before
