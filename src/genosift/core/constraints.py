"""What a parameter may be: one vocabulary of constraints, declared once where a call enters the library.

A public function declares the values its parameters take with :func:`checked`, and each
registered scoring method declares its keyword options (``genosift.scores.register``, checked by
``genosift.scores.check_options`` before any data are read). Either way a value is checked once,
at the entry point, with one message format (``core.validation.param_error``); the code below
trusts it. ``genosift methods NAME`` and :func:`genosift.scores.describe` print a method's
declarations.

>>> Integer(low=2).text, Choice("auto", "never").text
('an int >= 2', "one of 'auto', 'never'")
>>> AnyOf(Choice("sturges"), Integer(low=2)).accepts(7), Boolean().accepts(1)
(True, False)
"""
from __future__ import annotations

import functools
import inspect
import math
import numbers

import numpy as np

__all__ = ["AnyOf", "Boolean", "Choice", "Constraint", "InstanceOf", "Integer", "Nothing", "Real", "Satisfies", "Text",
           "check_declaration", "checked"]


class Constraint:
    """The values a parameter takes: ``accepts(value)``, ``text`` (the values in words),
    ``shown(value)`` (how a refused value is quoted: the value itself, or its type) and ``error``
    (the exception a refused value raises)."""

    text = "any value"
    error = ValueError

    def accepts(self, value):
        return True

    def shown(self, value):
        return value

    def __repr__(self):
        return f"{type(self).__name__}({self.text!r})"


class Boolean(Constraint):
    """``True`` or ``False``, numpy's too (a number is not taken for one)."""

    text = "True or False"

    def accepts(self, value):
        return isinstance(value, (bool, np.bool_))


class Integer(Constraint):
    """A whole number (not a bool) between ``low`` and ``high``, both included when given."""

    def __init__(self, low=None, high=None):
        self.low, self.high = low, high
        bounds = [b for b in (f">= {low}" if low is not None else "", f"<= {high}" if high is not None else "") if b]
        self.text = "an int" + (" " + " and ".join(bounds) if bounds else "")

    def accepts(self, value):
        return (isinstance(value, numbers.Integral) and not Boolean().accepts(value)
                and (self.low is None or value >= self.low) and (self.high is None or value <= self.high))


class Real(Constraint):
    """A finite number (not a bool) above ``low`` (``above=True``: strictly) and at most ``high``."""

    def __init__(self, low=None, high=None, *, above=False):
        self.low, self.high, self.above = low, high, above
        bounds = [b for b in (f"{'>' if above else '>='} {low}" if low is not None else "",
                              f"<= {high}" if high is not None else "") if b]
        self.text = "a finite number" + (" " + " and ".join(bounds) if bounds else "")

    def accepts(self, value):
        if not isinstance(value, numbers.Real) or Boolean().accepts(value) or not math.isfinite(value):
            return False
        low = self.low is None or (value > self.low if self.above else value >= self.low)
        return low and (self.high is None or value <= self.high)


class Choice(Constraint):
    """One of the given values (text options: exactly as written)."""

    def __init__(self, *values):
        self.values = values
        self.text = "one of " + ", ".join(repr(v) for v in values)

    def accepts(self, value):
        return isinstance(value, str) and value in self.values


class Nothing(Constraint):
    """``None``."""

    text = "None"

    def accepts(self, value):
        return value is None


class Text(Constraint):
    """A str."""

    text = "a str"

    def accepts(self, value):
        return isinstance(value, str)


class InstanceOf(Constraint):
    """An instance of ``kind`` (a class), named ``text`` (e.g. ``"a genosift.io.Dataset"``); a
    refused value is quoted by its type, and is a ``TypeError``."""

    error = TypeError

    def __init__(self, kind, text):
        self.kind, self.text = kind, text

    def accepts(self, value):
        return isinstance(value, self.kind)

    def shown(self, value):
        return type(value).__name__


class Satisfies(InstanceOf):
    """A value that ``test(value)`` accepts, named ``text``: a type told without importing its
    library (``io.anndata.is_anndata``); a refused value is quoted by its type."""

    def __init__(self, test, text):
        self.test, self.text = test, text

    def accepts(self, value):
        return bool(self.test(value))


class AnyOf(Constraint):
    """A value that one of the ``constraints`` accepts."""

    def __init__(self, *constraints):
        self.constraints = constraints
        self.text = " or ".join(c.text for c in constraints)

    def accepts(self, value):
        return any(c.accepts(value) for c in self.constraints)


def check_declaration(name, func, options, skip):
    """Raise ValueError unless ``options`` declares exactly the keyword options of ``func`` (its
    parameters after the first ``skip``) and accepts each default."""
    import inspect

    params = {p.name: p.default for p in list(inspect.signature(func).parameters.values())[skip:]}
    if set(params) != set(options):
        raise ValueError(f"bad registration of {name!r}: its options {sorted(params)} and their declarations "
                         f"{sorted(options)} differ")
    for option, default in params.items():
        if not options[option].accepts(default):
            raise ValueError(f"bad registration of {name!r}: the default {default!r} of {option!r} is not "
                             f"{options[option].text}")


def checked(**constraints):
    """Decorate a public function (or an estimator's ``__init__``) whose parameters take the values
    ``constraints`` declares (``{parameter: Constraint}``): a call with a value a constraint refuses
    raises ``ValueError`` in the one format, ``The 'binary' parameter of score must be True or
    False. Got 1 instead.``, before the function runs. The declaration is checked when the function
    is defined: each name a parameter, each default accepted. Functions below the entry point
    trust the checked values.

    >>> @checked(binary=Boolean())
    ... def count(X, *, binary=False):
    ...     return binary
    >>> count(None, binary=1)
    Traceback (most recent call last):
    ...
    ValueError: The 'binary' parameter of count must be True or False. Got 1 instead.
    """
    from .validation import param_error

    def decorate(func):
        owner = func.__qualname__.removesuffix(".__init__")
        signature = inspect.signature(func)
        unknown = sorted(set(constraints) - set(signature.parameters))
        if unknown:
            raise ValueError(f"{owner} declares constraints of {unknown}, which are not its parameters")
        for name, constraint in constraints.items():
            default = signature.parameters[name].default
            if default is not inspect.Parameter.empty and not constraint.accepts(default):
                raise ValueError(f"{owner}'s default {default!r} of {name!r} is not {constraint.text}")

        @functools.wraps(func)
        def checking(*args, **kwargs):
            try:
                given = signature.bind(*args, **kwargs).arguments
            except TypeError:
                return func(*args, **kwargs)  # Python's own message for a call that does not fit
            for name, value in given.items():
                constraint = constraints.get(name)
                if constraint is not None and not constraint.accepts(value):
                    raise param_error(name, owner, constraint.text, constraint.shown(value), constraint.error)
            return func(*args, **kwargs)
        checking.constraints = dict(constraints)
        return checking
    return decorate
