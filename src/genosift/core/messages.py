"""Message pieces shared by every layer: values written as plain Python, fixes spelled per caller.

Four jobs, one helper each:

- :func:`plain` writes a value (a label, a list of labels, a cell) the way a user typed it:
  ``1``, ``'a'``, ``[0, 1]``, never numpy's ``np.int64(1)`` or ``array([...])``.
- :func:`printable` escapes the control characters of text bound for a terminal, so that text
  from a data file (a gene product, a feature name) never moves the cursor or clears the screen.
- :class:`FixError` is a ``ValueError`` whose text names library parameters in ``{name}``
  fields. ``str()`` spells them as Python keywords (``keep=['label']``); the command line
  spells the same error with its options (``--keep label``) through :meth:`FixError.spelled`,
  so each caller reads a fix it can apply; :class:`FixText` is a line a job prints, its
  advice spelled the same way.
"""
from __future__ import annotations

import re

import numpy as np


def _scalar(value):
    """A numpy scalar as the Python scalar it holds (a Python value is returned as it is)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


# C0 controls but tab and line feed, DEL, C1 controls, and the bidirectional overrides and isolates
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text):
    """``text`` with its control characters written as escapes (``\\x1b``, ``\\u202e``); tab and
    line feed are kept.

    >>> printable("abcD \\x1b[2J\\r\\x9b!")
    'abcD \\\\x1b[2J\\\\x0d\\\\x9b!'
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def plain(value):
    """``repr`` of ``value`` with numpy scalars and arrays written as plain Python values.

    >>> import numpy as np
    >>> plain(np.int64(1)), plain([np.int64(1), np.str_("a")]), plain(np.array([0.0, 1.5]))
    ('1', "[1, 'a']", '[0.0, 1.5]')
    """
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple, set, frozenset)):
        if isinstance(value, (set, frozenset)):
            try:
                value = sorted(value)
            except TypeError:  # labels of mixed types: in the order of their text
                value = sorted(value, key=str)
        items = [plain(v) for v in value]
        inner = ", ".join(items)
        if isinstance(value, tuple):
            return f"({inner}{',' if len(items) == 1 else ''})"
        return f"[{inner}]"
    value = _scalar(value)
    return repr(value)


class _Any:
    """The value of a parameter named without a value (``sep=``); one object, also once unpickled."""

    def __reduce__(self):
        return "ANY"

    def __repr__(self):
        return "FixError.ANY"


ANY = _Any()


class Spelled:
    """An error whose suggested fix names parameters of the library (mixed into an exception type).

    Parameters
    ----------
    template : str
        The message, with a ``{name}`` field where a parameter is named. Only the fields of
        ``params`` are replaced: other braces (in a file name, a column name) stay as they are.
    owner : str
        The function whose parameters these are (``read_csv``, ``read_metadata``...): the command
        line may spell one parameter name differently per function (``id_column`` of the data
        file is ``--id-column``, of the metadata table ``--id``).
    **params
        Each field's parameter and value: ``name=value`` is written ``name=value`` in Python
        (``keep=['x']``), ``name=FixError.ANY`` is written ``name=`` (the parameter, no value),
        ``name=PythonText('...')`` is written as that text (a fix that is a call, not a keyword).

    Examples
    --------
    >>> err = FixError("Pass {keep} to keep it.", owner="read_csv", keep=["x"])  # a Spelled ValueError
    >>> str(err)
    "Pass keep=['x'] to keep it."
    >>> err.spelled(lambda owner, name, value: "--keep " + ",".join(value))
    'Pass --keep x to keep it.'
    """

    ANY = ANY

    def __init__(self, template, *, owner, **params):
        self.template = template
        self.owner = owner
        self.params = params
        super().__init__(self.spelled(python_spelling))

    def __reduce__(self):  # errors raised in worker processes travel back pickled
        return (_rebuild, (type(self), self.template, self.owner, self.params), self.__dict__)

    def spelled(self, spell):
        """The message with each field written by ``spell(owner, name, value)``."""
        return _spelled(self.template, self.owner, self.params, spell)


def _spelled(template, owner, params, spell):
    """``template`` with each field of ``params`` written by ``spell(owner, name, value)``."""
    if not params:
        return template
    pattern = "|".join(re.escape("{" + name + "}") for name in params)
    return re.sub(pattern, lambda m: spell(owner, m[0][1:-1], params[m[0][1:-1]]), template)


class FixError(Spelled, ValueError):
    """A ``ValueError`` (bad input) whose fix names parameters: see :class:`Spelled`."""


class FixExistsError(Spelled, FileExistsError):
    """A ``FileExistsError`` (an output that exists) whose fix names parameters: see :class:`Spelled`."""


class FixTypeError(Spelled, TypeError):
    """A ``TypeError`` (a parameter that does not exist) whose fix names parameters: see :class:`Spelled`."""


class FixText(Spelled, str):
    """A line of text a job prints (a summary's advice) whose fixes name parameters: a ``str``
    spelt with Python keywords, which the command line spells with its options through
    :meth:`Spelled.spelled`, as it does an error's.

    >>> line = FixText("Try {fdr} for a looser rule.", owner="select_mask", fdr=0.05)
    >>> line, line.spelled(lambda owner, name, value: f"--{name} {value}")
    ('Try fdr=0.05 for a looser rule.', 'Try --fdr 0.05 for a looser rule.')
    """

    def __new__(cls, template, *, owner, **params):
        return str.__new__(cls, _spelled(template, owner, params, python_spelling))

    def __init__(self, template, *, owner, **params):
        self.template, self.owner, self.params = template, owner, params

    def __repr__(self):
        return repr(str(self))


class SummaryLines:
    """What a job did, as the lines of its summary (``self.lines``: text and ``FixText``):
    ``str()`` writes them with Python keywords, ``spelled(spell)`` with the caller's spelling
    (``spell(owner, name, value)``: the command line's options)."""

    def spelled(self, spell):
        return "\n".join(line.spelled(spell) if isinstance(line, FixText) else line for line in self.lines)

    def __str__(self):
        return "\n".join(self.lines)


def _rebuild(cls, template, owner, params):
    return cls(template, owner=owner, **params)


class PythonText(str):
    """A fix written for Python callers as it is (``genosift.io.read(path)``); other callers
    (the command line) spell the field by its name, with ``args`` where their spelling takes
    values (``PythonText("genosift.scores.describe('auc')", "auc")``: the command line's
    spelling of ``describe`` names the method)."""

    def __new__(cls, text, *args):
        obj = super().__new__(cls, text)
        obj.args = args
        return obj

    def __getnewargs__(self):  # pickled with its values (errors travel back from worker processes)
        return (str(self), *self.args)


def python_spelling(owner, name, value):
    """A parameter as a Python keyword argument: ``keep=['x']``, or ``sep=`` without a value."""
    if isinstance(value, PythonText):
        return str(value)
    if value is FixError.ANY:
        return f"{name}="
    return f"{name}={plain(value)}"
