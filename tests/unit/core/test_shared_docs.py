"""The parameters the public scoring functions share are documented once (``core.shared_docs``):
each function's docstring holds the whole entry, the same words everywhere, and no placeholder
is left behind."""
from __future__ import annotations

import inspect
import re
import textwrap

import pytest

import genosift as gs
from genosift.core.shared_docs import PARAMETERS, shared_docs


def _entries(doc):
    """``{name line: entry}`` of a numpydoc Parameters section."""
    section = inspect.cleandoc(doc).split("Parameters\n----------\n", 1)[1].split("\n\n", 1)[0]
    return {m.group(1): m.group(0) for m in re.finditer(r"(?m)^(\S[^\n]*)\n(?:    [^\n]*\n?)*", section + "\n")}


@pytest.mark.parametrize("func", [gs.score, gs.score_targets, gs.profile, gs.count_patterns, gs.lineage_effects])
def test_a_function_documents_each_shared_parameter_it_takes_in_the_shared_words(func):
    doc = func.__doc__
    assert not re.search(r"(?m)^\s*\{\w+\}$", doc), "a placeholder left in the docstring"
    entries = _entries(doc)
    named = re.findall(r"(?m)^\s*\{(\w+)\}$", inspect.getsource(inspect.unwrap(func)))  # those its source names
    assert len(named) >= 3
    for name in named:
        text = PARAMETERS[name]
        assert entries[text.split("\n", 1)[0]].rstrip("\n") == text
    documented = {name.strip() for head in entries for name in head.split(" : ")[0].split(",")}
    assert documented >= set(inspect.signature(func).parameters) - {"self"}


def test_a_placeholder_becomes_the_entry_indented_as_its_line_and_an_unknown_one_is_an_error():
    def f(samples=None):
        """Do.

        Parameters
        ----------
        {samples}
        """

    text = shared_docs(f).__doc__
    assert textwrap.indent(PARAMETERS["samples"], "        ") in text
    assert gs.score.__doc__.count("samples : sample ids") == 1

    def g():
        """Do.

        {nothing}
        """

    with pytest.raises(KeyError, match="g's docstring names the shared parameter 'nothing'"):
        shared_docs(g)
