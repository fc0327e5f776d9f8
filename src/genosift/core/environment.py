"""The settings genosift takes from the environment, checked before anything reads them.

numba reads ``NUMBA_NUM_THREADS`` once, when it is first imported, and fails on it obscurely: this
module imports nothing but ``os``, so the command line and ``core.validation`` check the setting
before numba loads (and before the command line parses, since naming a method loads the methods).
"""
from __future__ import annotations

import os

__all__ = ["THREADS_VARIABLE", "check_thread_setting", "max_env_threads", "thread_setting_error"]

#: The environment variable numba reads its thread count from, once, when it is first imported.
THREADS_VARIABLE = "NUMBA_NUM_THREADS"


def max_env_threads():
    """The most threads ``NUMBA_NUM_THREADS`` may ask for: 1024, or 4 per CPU on a larger machine
    (numba starts that many threads; tens of thousands exhaust the process's threads and crash it)."""
    return max(1024, 4 * (os.cpu_count() or 1))


def thread_setting_error(fix="choose the threads of a run with genosift.core.engine.set_threads"):
    """The message for a ``NUMBA_NUM_THREADS`` in the environment that is not a whole number of
    threads from 1 to ``max_env_threads()``, or None when it is unset or such a number.

    numba fails on 0 or a negative number as it is imported (every scoring method needs it), ignores
    other text with a warning, and crashes on a huge number, so genosift refuses them all before
    numba reads the variable. ``fix`` ends the message: how the caller chooses the threads instead.

    >>> thread_setting_error() is None or THREADS_VARIABLE in os.environ
    True
    """
    value = os.environ.get(THREADS_VARIABLE)
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isascii() and text.isdigit() and 1 <= int(text) <= max_env_threads():
        return None
    return (f"the environment sets {THREADS_VARIABLE}={value!r}, which must be a whole number of threads from 1 to "
            f"{max_env_threads()}. Unset it (`unset {THREADS_VARIABLE}`) or set such a number, and {fix}.")


def check_thread_setting():
    """Raise a ValueError naming ``NUMBA_NUM_THREADS`` when ``thread_setting_error`` finds it wrong:
    called before numba is imported, where its own error would not say which setting is at fault."""
    problem = thread_setting_error()
    if problem is not None:
        raise ValueError(problem[0].upper() + problem[1:])
