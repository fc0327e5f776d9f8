"""What a method's options may be: each registered method declares the values each option takes.

A declaration is checked once, where a call enters the library (``check_options``, which
``genosift.score``, the selectors and the command line call before any data are read); the
methods themselves trust their options. ``genosift methods NAME`` and :func:`genosift.scores.describe`
print the declarations.

>>> Integer(low=2).text, Choice("auto", "never").text
('an int >= 2', "one of 'auto', 'never'")
>>> AnyOf(Choice("sturges"), Integer(low=2)).accepts(7), Boolean().accepts(1)
(True, False)
"""
from __future__ import annotations

import math
import numbers

__all__ = ["AnyOf", "Boolean", "Choice", "Constraint", "Integer", "Nothing", "Real", "check_declaration"]


class Constraint:
    """The values an option takes: ``accepts(value)`` and ``text``, the values in words."""

    text = "any value"

    def accepts(self, value):
        return True

    def __repr__(self):
        return f"{type(self).__name__}({self.text!r})"


class Boolean(Constraint):
    """``True`` or ``False`` (a number is not taken for one)."""

    text = "True or False"

    def accepts(self, value):
        return type(value) is bool or type(value).__name__ == "bool_"


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
