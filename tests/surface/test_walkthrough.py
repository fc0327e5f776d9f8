"""The README's walk-through from genomes to a model, run line by line as a user types it."""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
SRC = Path(__file__).resolve().parents[2] / "src"
MARKER = "<!-- walkthrough: tests/surface/test_walkthrough.py runs the commands of the next block -->"


def walkthrough_commands():
    """The commands of the README's walk-through block (continued lines joined, comments dropped)."""
    text = README.read_text(encoding="utf-8")
    assert MARKER in text, "the README's walk-through lost its marker"
    block = re.search(r"```bash\n(.*?)```", text[text.index(MARKER):], re.S).group(1)
    joined = block.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def walkthrough_output():
    """The lines of the first score's summary that the README shows (its ``text`` block after the
    output marker)."""
    text = README.read_text(encoding="utf-8")
    marker = ("<!-- walkthrough-output: tests/surface/test_walkthrough.py checks these lines of the first score's "
              "summary -->")
    assert marker in text, "the README's walk-through lost its output marker"
    return re.search(r"```text\n(.*?)```", text[text.index(marker):], re.S).group(1).splitlines()


def _shims(folder):
    """`python` and `genosift` on the PATH as this interpreter and this source tree."""
    folder.mkdir()
    for name, line in (("python", f'exec "{sys.executable}" "$@"'),
                       ("genosift", f'exec "{sys.executable}" -m genosift "$@"')):
        path = folder / name
        path.write_text(f"#!/bin/sh\n{line}\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return folder


def test_the_walkthrough_names_every_step():
    steps = [c.split()[0] + (" " + c.split()[1] if c.startswith("genosift") else "") for c in walkthrough_commands()]
    assert steps == ["python", "awk", "fsm-lite", "genosift convert", "genosift score", "genosift score",
                     "genosift enet", "genosift annotate",
                     "genosift plot", "genosift evaluate", "genosift report", "genosift predict"]


@pytest.mark.skipif(shutil.which("fsm-lite") is None, reason="fsm-lite is not installed (apt-get install fsm-lite)")
def test_the_readme_walkthrough_runs_from_genomes_to_predictions(tmp_path):
    pytest.importorskip("h5py", reason="genosift stores need h5py (genosift[io])")
    pytest.importorskip("matplotlib", reason="the report needs matplotlib (genosift[report])")
    bin_dir = _shims(tmp_path / "bin")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    work = tmp_path / "work"
    work.mkdir()
    printed = {}
    for command in walkthrough_commands():
        run = subprocess.run(["bash", "-c", f"set -euo pipefail; {command}"], cwd=work, env=env,
                             capture_output=True, text=True)
        assert run.returncode == 0, f"{command}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
        printed.setdefault(" ".join(command.split()[:2]), run.stdout)
    # the first score says that nothing passes the genome-wide threshold, as the README shows it
    summary = printed["genosift score"].splitlines()
    for line in walkthrough_output():
        assert line in summary, f"the README shows {line!r}; the score printed:\n" + "\n".join(summary)

    truth = pd.read_csv(work / "genomes" / "phenotype.tsv", sep="\t", index_col="sample")
    meta = pd.read_csv(work / "meta.tsv", sep="\t", index_col="sample")
    assert meta["phenotype"].isna().sum() == 8 and meta["phenotype"].iloc[:40].notna().all()
    # the ranking: logistic given the structure puts the causal gene's k-mers at the top
    from genosift.genomics.clonal import simulate_clonal_population

    gene = simulate_clonal_population(tmp_path / "again", n_genomes=48, seed=0).causal_gene
    reverse = gene[::-1].translate(str.maketrans("ACGT", "TGCA"))
    ranking = pd.read_csv(work / "ranking.tsv", sep="\t")
    assert ranking["rank"].is_monotonic_increasing and ranking["pvalue"].notna().any()
    causal = [k in gene or k in reverse for k in ranking["feature"]]
    assert all(causal[:10]) and ranking["selected"].sum() == 50
    # the mixed model, with the kinship of the k-mers: its h2 in the sidecar, the same features ranked
    import json

    lmm = json.loads((work / "lmm.tsv.json").read_text())
    assert lmm["method"] == "lmm" and 0 < lmm["model"]["h2"] < 1 and lmm["n_features"] == len(ranking)
    # the elastic net of every k-mer keeps the causal gene's, judged out of fold
    enet = pd.read_csv(work / "enet.tsv", sep="\t")
    record = json.loads((work / "enet.tsv.json").read_text())
    assert set(ranking.loc[causal, "feature"]) <= set(enet["feature"])
    assert record["out_of_fold"]["roc_auc"] > 0.7 and record["n_selected"] == len(enet)
    # the annotation names the causal gene first, and places each of its k-mers inside it
    genes = pd.read_csv(work / "genes.tsv", sep="\t")
    assert genes["gene"].iloc[0] == "causal" and genes["n_kmers"].iloc[0] == sum(causal)
    hits = pd.read_csv(work / "hits.tsv", sep="\t")
    assert set(hits.loc[hits["gene"] == "causal", "feature"]) == set(ranking.loc[causal, "feature"])
    assert (work / "qq.png").is_file() and (work / "manhattan.png").is_file()
    # the evaluation: a grid of 3 C values x 3 k; the 8 isolates without a label predicted
    curve = pd.read_csv(work / "results" / "curve.tsv", sep="\t")
    assert sorted(curve["options"].unique()) == ["C=0.1", "C=1", "C=10"] and len(curve) == 9
    new = pd.read_csv(work / "results" / "unlabelled_predictions.tsv", sep="\t", index_col="sample")
    assert new.index.tolist() == truth.index[40:].tolist()
    probabilities = new.filter(like="proba_")
    assert probabilities.shape[1] == 2 and np.allclose(probabilities.sum(axis=1), 1.0)
    assert (work / "report.html").stat().st_size > 10_000
    predictions = pd.read_csv(work / "predictions.tsv", sep="\t", index_col="sample")
    assert len(predictions) == 48 and predictions["in_training"].sum() == 40
    # the final model's predictions of the new isolates are those evaluate wrote
    assert predictions.loc[new.index, "predicted"].tolist() == new["predicted"].tolist()
    # counted in the assemblies or read from fsm-lite's counts in the store: the same predictions
    from genosift.cli import main

    assert main(["predict", str(work / "results" / "model.skops"), str(work / "kmers.gs.h5ad"), "-o",
                 str(work / "from_store.tsv")]) == 0
    assert (work / "from_store.tsv").read_bytes() == (work / "predictions.tsv").read_bytes()


def quick_start_install():
    """The README's first quick-start command (install and demo), as written."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Quick start.*?```bash\n(.*?)```", text, re.S).group(1)
    return block.strip()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("fsm-lite") is None, reason="fsm-lite is not installed (apt-get install fsm-lite)")
def test_the_readme_install_line_runs_the_walkthrough(tmp_path):
    """A copy of the repository, the README's install line as written (a fresh venv, `pip install
    .`, no extra), then every command of the walk-through with that venv's `genosift`: nothing the
    walk-through runs needs a package the install line did not bring, and no kernel is compiled
    on the way (the install compiled them: numba's cache log says "data saved" for every kernel it
    compiles and caches). Needs the package index (run with `pytest -m slow
    tests/surface/test_walkthrough.py`)."""
    root = Path(__file__).resolve().parents[2]
    files = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True)
    repo = tmp_path / "genosift"
    for name in files.stdout.split():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    command = quick_start_install()
    assert command.startswith("python3 -m venv .venv && .venv/bin/pip install . && ")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NUMBA_CACHE_DIR")}
    clean["NUMBA_DEBUG_CACHE"] = "1"
    run = subprocess.run(["bash", "-c", command], cwd=repo, env=clean, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "genosift-demo" in run.stdout and "data loaded from" in run.stdout
    assert "data saved to" not in run.stdout, "the demo compiled kernels that the install did not"
    env = dict(clean, PATH=f"{repo / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    work = tmp_path / "work"
    work.mkdir()
    for line in walkthrough_commands():
        step = subprocess.run(["bash", "-c", f"set -euo pipefail; {line}"], cwd=work, env=env, capture_output=True,
                              text=True)
        assert step.returncode == 0, f"{line}\n{step.stdout[-2000:]}\n{step.stderr[-3000:]}"
        compiled = [ln for ln in step.stdout.splitlines() if "data saved to" in ln]
        assert not compiled, f"{line} compiled kernels that the install did not: {compiled[:5]}"
    assert (work / "report.html").is_file() and (work / "predictions.tsv").is_file()
