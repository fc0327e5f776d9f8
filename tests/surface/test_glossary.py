"""One meaning per name in the public API: the glossary (docs/glossary.md) names every parameter of
every public signature and nothing else, the renamed names appear in none, the ``genosift``
namespace holds its public names only, and the results print a short line, never their arrays."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.core.validation import RENAMED

GLOSSARY = Path(__file__).resolve().parents[2] / "docs" / "glossary.md"
#: a glossary entry: ``- `name`: meaning`` or ``- `name`, `other`: meaning``
ENTRY = re.compile(r"^- ((?:`\w+`(?:, )?)+):", re.M)
#: the old names of one concept: given, each is refused naming the new one (``RENAMED``)
BANNED = {"score_params", "relevance_params", "threads", "options"}
#: names renamed in one signature only, that keep their meaning elsewhere: the signature it left
RENAMED_IN = {"target": gs.profile, "metric": gs.jobs.evaluate}


def _glossary():
    """``{name: how many entries}`` of the glossary's definitions."""
    counts = {}
    for entry in ENTRY.finditer(GLOSSARY.read_text()):
        for name in re.findall(r"`(\w+)`", entry.group(1)):
            counts[name] = counts.get(name, 0) + 1
    return counts


#: the namespaces of the public API: ``genosift``, its readers and writers, its jobs
NAMESPACES = {"": gs, "io.": gs.io, "jobs.": gs.jobs}
#: the signatures that take a reader's parameters as keywords: each format's reader has its own
#: (``genosift.io.READERS[format].parameters``), documented with it
READER_KEYWORDS = {"io.read", "io.convert"}


def _signatures():
    """``{owner: signature}`` of every public function and class of the public namespaces: a
    class's ``__init__`` (where genosift defines it) and each of its public methods."""
    out = {}
    for prefix, namespace in NAMESPACES.items():
        for name in namespace.__all__:
            obj = getattr(namespace, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            if not inspect.isclass(obj):
                out[prefix + name] = inspect.signature(obj)
                continue
            if inspect.isfunction(obj.__init__) and obj.__init__.__module__.startswith("genosift"):
                out[prefix + name] = inspect.signature(obj.__init__)
            for klass in obj.__mro__:  # its methods and those it inherits from genosift's own bases
                if klass.__module__.startswith("genosift"):
                    for method, func in vars(klass).items():
                        if not method.startswith("_") and inspect.isfunction(func):
                            out.setdefault(f"{prefix}{name}.{method}", inspect.signature(func))
    return out


def _parameters():
    """``{parameter: [owners]}`` over the public signatures (``self`` aside)."""
    used = {}
    for owner, sig in _signatures().items():
        for param in sig.parameters:
            if param not in ("self", "cls"):
                used.setdefault(param, []).append(owner)
    return used


def test_the_signatures_walked_are_the_public_api():
    sigs = _signatures()
    assert {"score", "score_targets", "SelectKBest", "SelectKBest.fit", "ElasticNetSelector", "kinship",
            "heritability", "ScoreResult", "ScoreResult.to_frame", "PairScores", "io.read_kmers", "io.write_store",
            "io.Store.row_chunks", "jobs.score", "jobs.Samples", "jobs.Samples.load", "jobs.Ranking"} <= set(sigs)
    functions = [(p, n) for p, ns in NAMESPACES.items() for n in ns.__all__
                 if callable(getattr(ns, n)) and not inspect.isclass(getattr(ns, n))
                 and not inspect.ismodule(getattr(ns, n))]
    assert all(p + n in sigs for p, n in functions)
    assert len(_glossary()) > 150


def test_every_public_parameter_has_its_glossary_entry():
    defined = _glossary()
    missing = {name: owners for name, owners in _parameters().items() if name not in defined}
    assert not missing, f"parameters without an entry in {GLOSSARY.name}: {missing}"


def test_the_glossary_names_only_parameters_in_use_each_once():
    used = _parameters()
    stale = sorted(name for name in _glossary() if name not in used)
    assert not stale, f"{GLOSSARY.name} defines names no public signature has: {stale}"
    twice = sorted(name for name, count in _glossary().items() if count > 1)
    assert not twice, f"{GLOSSARY.name} defines these names more than once: {twice}"


def test_the_old_names_are_in_no_public_signature():
    used = _parameters()
    assert not {name: used[name] for name in BANNED if name in used}
    assert BANNED - {"options"} <= set(RENAMED)
    # alpha is a significance level only: never the elastic net's mixing
    for owner in (gs.ElasticNetSelector.__init__, gs.EnetResult.__init__, gs.jobs.enet):
        params = inspect.signature(owner).parameters
        assert "alpha" not in params and ("l1_ratio" in params or owner is gs.EnetResult.__init__)
    assert "l1_ratio" in inspect.signature(gs.EnetResult.__init__).parameters
    assert "n_jobs" in inspect.signature(gs.jobs.evaluate).parameters
    for old, owner in RENAMED_IN.items():
        assert old in RENAMED and old not in inspect.signature(owner).parameters


def test_no_public_signature_hides_parameters_in_varargs():
    hidden = {owner: p.name for owner, sig in _signatures().items() for p in sig.parameters.values()
              if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    assert hidden == dict.fromkeys(READER_KEYWORDS, "read_options")


@pytest.mark.parametrize("call, new", [
    (lambda: gs.SelectKBest("anova", score_params={}), "method_options"),
    (lambda: gs.MRMR(relevance_params={}), "method_options"),
    (lambda: gs.ElasticNetSelector(alpha=0.5), "l1_ratio"),
    (lambda: gs.jobs.evaluate(None, "out", threads=2), "n_jobs"),
    (lambda: gs.profile(None, None, target="numeric"), "kind"),
    (lambda: gs.jobs.evaluate(None, "out", metric="roc_auc"), "scoring"),
])
def test_an_old_name_is_refused_naming_the_new_one(call, new):
    with pytest.raises(TypeError, match=rf"is called '{new}' \(.*\)\. Give {new}="):
        call()


@pytest.mark.parametrize("call, old, value", [
    (lambda: gs.jobs.score(None, "out", chunk_bytes=65536), "chunk_bytes", "65536"),
    (lambda: gs.jobs.select(None, "out", scheduler="local:2"), "scheduler", "'local:2'"),
    (lambda: gs.jobs.evaluate(None, "out", chunk_bytes=1 << 20), "chunk_bytes", "1048576"),
    (lambda: gs.jobs.enet(None, "out", chunk_bytes=4096), "chunk_bytes", "4096"),
    (lambda: gs.jobs.patterns(None, chunk_bytes=4096), "chunk_bytes", "4096"),
    (lambda: gs.jobs.heritability(None, None, chunk_bytes=4096), "chunk_bytes", "4096"),
])
def test_a_moved_parameter_is_refused_naming_the_object_that_carries_it(call, old, value):
    with pytest.raises(TypeError, match=rf"The '{old}' parameter of \w+ is a field of the Samples now \(.*\): "
                                        rf"give Samples\(\.\.\., {old}={re.escape(value)}\)\."):
        call()
    assert old in inspect.signature(gs.jobs.Samples).parameters


def test_a_methods_options_as_loose_keywords_are_told_where_they_go():
    X, y = np.random.default_rng(0).normal(size=(20, 4)), np.repeat([0, 1], 10)
    with pytest.raises(TypeError, match=r"unknown keyword\(s\) \['n_neighbors'\]: a method's options go in one "
                                        r"dict, method_options=\{'n_neighbors': 2\}"):
        gs.score(X, y, method="relieff", n_neighbors=2)
    assert gs.score(X, y, method="relieff", method_options={"n_neighbors": 2}).method_options["n_neighbors"] == 2
    with pytest.raises(ValueError, match=r"The 'method_options' parameter of score must be a dict or None"):
        gs.score(X, y, method="relieff", method_options=[("n_neighbors", 2)])


def test_the_namespace_holds_the_public_names_only():
    gs.score  # noqa: B018 - importing a public name loads subpackages, which dir() does not show
    dunders = {name for name in vars(gs) if name.startswith("__") and name.endswith("__")}
    assert dir(gs) == sorted(set(gs.__all__) | dunders)
    assert not hasattr(gs, "import_module")
    with pytest.raises(AttributeError, match="has no attribute 'import_module'"):
        gs.import_module  # noqa: B018


# --- compact reprs: the class, its sizes, its method and key numbers; never an array's values

def _large_results():
    rng = np.random.default_rng(0)
    p, n = 200_000, 500
    names = np.array([f"kmer_{j:07d}" for j in range(p)], dtype=object)
    pairs = 5_000
    from genosift.genomics.clonal import ClonalPopulation
    from genosift.scores.lmm import Heritability
    from genosift.scoring.lineage import LineageEffects, Lineages

    lineages = Lineages(tuple(f"PC{i}" for i in range(1, 61)), rng.normal(size=60), np.ones(60), rng.random(60),
                        rng.random(60), 0.05, "logistic", True)
    X = sp.random(n, 3_000, density=0.05, format="csr", random_state=1)
    yield gs.score(X, np.arange(n) % 2, method="fisher")
    yield gs.Patterns(np.arange(p), rng.random(p), np.ones(p, dtype=bool), n, names)
    yield gs.PairScores("mi", n, p, 10_000, 10**7, np.array([0, 1]), np.arange(pairs), np.arange(pairs) + 1,
                        names[:pairs], names[1:pairs + 1], *(rng.random(pairs) for _ in range(5)),
                        rng.random(pairs), rng.random(pairs), np.ones(pairs, dtype=int), np.ones(pairs, dtype=int),
                        rng.random(pairs))
    yield gs.EnetResult(np.geomspace(1, 0.01, 100), rng.normal(size=100), sp.random(p, 100, density=1e-3,
                        format="csc", random_state=2), rng.normal(size=(100, 3)), rng.random(100), True, 0.5,
                        cv_mean=rng.random(100), cv_se=rng.random(100), oof=rng.normal(size=(n, 100)),
                        folds=[(np.arange(400), np.arange(400, 500))] * 10, patterns=12_345)
    yield gs.Profile("classes", np.array(["R", "S"]), np.array([250, 250]), rng.random((2, p)), rng.random((2, p)),
                     rng.normal(size=p), None, names)
    yield ClonalPopulation([f"genome_{i}" for i in range(5_000)], [Path(f"/tmp/g{i}.fa") for i in range(5_000)],
                           Path("/tmp/population/genomes.txt"), Path("/tmp/population/phenotype.tsv"), None,
                           "ACGT" * 500, {i: ["ACGT" * 250] * 20 for i in range(8)}, 3)
    yield Heritability(0.41, 0.08, 12.5, 2e-4, -123.4)
    yield lineages
    yield LineageEffects(lineages, rng.integers(0, 60, size=p), rng.uniform(-1, 1, size=p))


@pytest.mark.parametrize("result", list(_large_results()), ids=lambda r: type(r).__name__)
def test_a_large_result_prints_one_short_line(result):
    text = repr(result)
    assert text.startswith(type(result).__name__ + "(") and len(text) < 300 and "\n" not in text, text
    assert "array(" not in text and "..." not in text and "kmer_0000005" not in text
