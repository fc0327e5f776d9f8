"""The constraint vocabulary: what a parameter may be, declared once on a public function
(``checked``) and refused in the one message format before the function runs."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import genosift as gs
from genosift.core.constraints import (
    AnyOf,
    Boolean,
    Choice,
    InstanceOf,
    Integer,
    Nothing,
    Real,
    Satisfies,
    Text,
    checked,
)


@pytest.mark.parametrize("constraint, good, bad, text", [
    (Boolean(), [True, False, np.bool_(True)], [1, 0, "yes", None], "True or False"),
    (Integer(low=1), [1, np.int64(7)], [0, 1.0, True], "an int >= 1"),
    (Real(0, 1, above=True), [0.5, 1], [0, np.nan, True, "0.5"], "a finite number > 0 and <= 1"),
    (Choice("a", "b"), ["a"], ["c", 1], "one of 'a', 'b'"),
    (Text(), ["", "x"], [b"x", 1], "a str"),
    (AnyOf(Boolean(), Nothing()), [None, True], [1], "True or False or None"),
    (InstanceOf(dict, "a dict"), [{}], [[]], "a dict"),
    (Satisfies(callable, "a function"), [len], [1], "a function"),
])
def test_each_constraint_accepts_its_values_and_says_them(constraint, good, bad, text):
    assert constraint.text == text
    assert all(constraint.accepts(v) for v in good)
    assert not any(constraint.accepts(v) for v in bad)


def _counted(X, *, binary=False, kind=None, size=2):
    return X, binary, kind, size


def test_a_refused_value_names_the_parameter_its_owner_and_the_values_it_takes():
    f = checked(binary=Boolean(), kind=AnyOf(InstanceOf(dict, "a dict"), Nothing()), size=Integer(low=1))(_counted)
    assert f(1, binary=True, kind={}, size=3) == (1, True, {}, 3)
    assert f(2) == (2, False, None, 2)
    with pytest.raises(ValueError, match=r"^The 'binary' parameter of _counted must be True or False\. "
                                         r"Got 1 instead\.$"):
        f(1, binary=1)
    with pytest.raises(ValueError, match=r"The 'size' parameter of _counted must be an int >= 1\. Got 0 instead"):
        f(1, size=0)
    with pytest.raises(TypeError, match=r"The 'data' parameter of _data must be a dict\. Got 'list' instead"):
        checked(data=InstanceOf(dict, "a dict"))(_data)([1, 2])  # a value of the wrong type: a TypeError
    with pytest.raises(TypeError, match="unexpected keyword argument 'other'"):  # Python's own for a bad call
        f(1, other=2)
    assert inspect.signature(f) == inspect.signature(_counted)  # what scikit-learn and the glossary see


def _data(data):
    return data


def test_a_declaration_is_checked_when_the_function_is_defined():
    with pytest.raises(ValueError, match=r"declares constraints of \['nope'\], which are not its parameters"):
        checked(nope=Boolean())(_counted)
    with pytest.raises(ValueError, match=r"_counted's default 2 of 'size' is not an int >= 3"):
        checked(size=Integer(low=3))(_counted)


def _binary_owners():
    for name in gs.__all__:
        obj = getattr(gs, name)
        if callable(obj) and not inspect.isclass(obj) and "binary" in inspect.signature(obj).parameters:
            yield name


@pytest.mark.parametrize("name", list(_binary_owners()))
def test_every_public_function_refuses_a_binary_that_is_no_bool_before_reading_anything(name):
    """``binary=1`` is refused by the declaration of every public function that takes ``binary``,
    in the same words, before its data (here none) are looked at."""
    func = getattr(gs, name)
    assert isinstance(func.constraints["binary"], (Boolean, AnyOf))
    args = {"score_targets": (None, None), "lineage_effects": (None, None, None),
            "principal_coordinates": (None, 2)}.get(name, (None,))
    with pytest.raises(ValueError, match=rf"^The 'binary' parameter of {name} must be True or False( or None)?\. "
                                         r"Got 1 instead\.$"):
        func(*args, binary=1)
