"""The ``genosift`` command: a thin shell over the library (no arithmetic here).

Exit codes: 0 success, 1 data error, 2 usage error. Each command lives in the module of its
group (``info``, ``data``, ``model``); the library is imported only by the command that runs, so
``genosift --help`` and ``--version`` start fast.
"""
from __future__ import annotations

import sys

from ..core.files import interrupted
from .parser import build_parser

__all__ = ["build_parser", "main"]


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every clean-up block runs (temporary files)."""


def _on_signal(signum, frame):
    """Record the signal where writers look before they publish an output, then unwind.

    An exception raised in a signal handler can be lost (Python drops it when it lands in a
    finalizer or a weak-reference callback): the recorded signal still stops every output from
    being published, and the command still ends with the signal's exit code.
    """
    import signal

    interrupted.append(signum)
    raise KeyboardInterrupt() if signum == signal.SIGINT else _Terminated()


def _signals_unwind():
    """Make SIGINT and SIGTERM unwind (only from the main thread); returns the previous handlers."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}


def _interrupted(by_sigint):
    name = "SIGINT" if by_sigint else "SIGTERM"
    print(f"genosift: interrupted ({name}); outputs are written whole or not at all, so run the "
          "command again to make them.", file=sys.stderr)
    return 130 if by_sigint else 143


def _warnings_shown(previous):
    """``warnings.showwarning`` that prints genosift's own warnings as one line naming options
    (and any warning with its control characters escaped)."""
    from ..core.messages import Spelled, printable
    from .spelling import cli_message

    def show(message, category, filename, lineno, file=None, line=None):
        if isinstance(message, Spelled):
            print(f"genosift: warning: {cli_message(message)}", file=sys.stderr)
        else:
            text = str(message)
            if printable(text) != text:
                message = category(printable(text)) if isinstance(message, Warning) else printable(text)
            previous(message, category, filename, lineno, file, line)

    return show


class _Escaped:
    """Standard output as the commands print to it: control characters escaped, so that text from
    a data file (a feature name, a gene product) never reaches the terminal as a control sequence."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        from ..core.messages import printable

        return self._stream.write(printable(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _CompileNotice:
    """Says once, on standard error, that kernels are being compiled, when a compilation (numba's
    "numba:compile" event) is still running after ``after`` seconds: the first run of a command
    in a fresh install, before numba's cache holds its kernels. Loading a cached kernel also
    raises the event, but ends well within the delay, and says nothing."""

    def __init__(self, after=1.0):
        import threading

        from numba.core import event

        self._event, self._lock, self.after = event, threading.Lock(), after
        self.active, self.said, self.timer = 0, False, None
        outer = self

        class Listener(event.Listener):
            def on_start(self, ev):
                outer._started()

            def on_end(self, ev):
                with outer._lock:
                    outer.active -= 1

        self.listener = Listener()
        event.register("numba:compile", self.listener)

    def _started(self):
        import threading

        with self._lock:
            self.active += 1
            if self.said or self.timer is not None:
                return
            self.timer = threading.Timer(self.after, self._fire)
            self.timer.daemon = True
            self.timer.start()

    def _fire(self):
        with self._lock:
            self.timer = None
            if self.said or self.active <= 0:
                return
            self.said = True
        print("genosift: compiling its kernels for their first use on this machine (once: later runs take them "
              "from numba's cache); this first run takes longer.", file=sys.stderr, flush=True)

    def close(self):
        self._event.unregister("numba:compile", self.listener)
        with self._lock:
            if self.timer is not None:
                self.timer.cancel()


def main(argv=None):
    import signal
    import warnings

    from ..core.environment import thread_setting_error

    bad = thread_setting_error(fix="choose the threads of a run with --threads N")
    if bad:  # before parsing too: reading --method loads the methods, which load numba
        print(f"genosift: error: {bad}", file=sys.stderr)
        return 1
    parser = build_parser()
    args = parser.parse_args(argv)  # --help and --version end here, before the library is imported
    from ..core import engine
    from ..core.validation import UsageError
    from .spelling import cli_message

    threads = getattr(args, "threads", None)
    previous_threads = engine.set_threads(threads) if threads else None
    quiet = getattr(args, "quiet", False) or not getattr(args, "announce_compiling", True)
    notice = None if quiet else _CompileNotice()
    shown = engine.set_progress(sys.stderr.isatty() and not getattr(args, "quiet", False))
    previous = _signals_unwind()
    interrupted.clear()
    shown_warnings = warnings.showwarning
    warnings.showwarning = _warnings_shown(shown_warnings)
    stdout, sys.stdout = sys.stdout, _Escaped(sys.stdout)
    try:
        code = args.func(args)
        if interrupted:  # a signal whose exception was lost: the outputs were not published
            raise KeyboardInterrupt() if interrupted[0] == signal.SIGINT else _Terminated()
        return code
    except BrokenPipeError:  # output piped into `head` and the like: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except UsageError as exc:  # options that do not fit together: as argparse's own usage errors
        print(f"genosift {args.command}: error: {cli_message(exc)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, ImportError) as exc:  # ImportError: an optional package
        if interrupted:  # an error caused by the interruption itself (a file closed under a reader)
            return _interrupted(interrupted[0] == signal.SIGINT)
        print(f"genosift: error: {cli_message(exc)}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, _Terminated) as exc:  # the signal recorded, if any (a lost one re-raised as another)
        return _interrupted(interrupted[0] == signal.SIGINT if interrupted else isinstance(exc, KeyboardInterrupt))
    finally:  # in-process callers keep their own settings
        sys.stdout = stdout
        warnings.showwarning = shown_warnings
        interrupted.clear()
        if previous is not None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        engine.set_progress(shown)
        if threads:
            engine.set_threads(previous_threads)
        if notice is not None:
            notice.close()
