"""Writing outputs: whole or not at all, never over a file someone else made, with messages.

Every output (tables, sidecars, stores, figures, results folders) is written under a temporary
name beside its final one, ``.NAME.genosift-HOST-PID-RANDOM.part``, synced to disk, and then
published by a rename that refuses to replace an existing name unless the caller forces it. A
result and its sidecar are published together: when the second cannot be, the first is removed.
Partial files of runs that died (``kill -9``, a power cut) are removed by the next run writing
the same output. Results folders carry a marker listing what genosift wrote in them; only such a
folder, holding nothing else, may be replaced.
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import secrets
import shutil
import socket
import warnings
from contextlib import contextmanager
from pathlib import Path

from .messages import FixError, FixExistsError, PythonText

__all__ = ["MARKER", "check_output", "check_replaceable", "fresh_folder", "json_text", "publish", "staged", "umask",
           "write_bytes", "write_json", "write_marker", "write_table", "write_text"]

#: Signals received (the command line records them here): no output is published after one.
interrupted = []
#: The file that marks a folder as a results folder written by genosift (the files it wrote).
MARKER = ".genosift-results.json"
_PART = ".genosift-"
_NOREPLACE = 1  # RENAME_NOREPLACE
_AT_FDCWD = -100
_FULL = {errno.ENOSPC: "the device holding it is full", errno.EDQUOT: "the disk quota is exhausted",
         errno.EFBIG: "the file is larger than the file system allows"}
_DENIED = {errno.EACCES: "permission denied", errno.EPERM: "the operation is not permitted",
           errno.EROFS: "the file system is read-only"}

#: The fixes that messages about an output name: replacing it (``overwrite=True``; ``--force`` on
#: the command line) or writing elsewhere (another path; ``-o``).
_OUTPUT_FIXES = {"owner": "check_output", "overwrite": True, "output": PythonText("output path")}


def umask():
    """This process's umask (read without changing it, which would race with other threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _host():
    return socket.gethostname().replace(".", "_").replace("-", "_") or "host"


def _part_name(path):
    return path.with_name(f".{path.name}{_PART}{_host()}-{os.getpid()}-{secrets.token_hex(4)}.part")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _remove(path):
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def clean_stale_parts(path):
    """Remove the partial outputs of ``path`` left by dead processes of this host; return them."""
    path = Path(path)
    prefix = f".{path.name}{_PART}{_host()}-"
    removed = []
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".part")):
            continue
        pid = name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            _remove(entry)
            removed.append(entry)
    if removed:
        warnings.warn(f"Removed {len(removed)} partial output(s) of {str(path)!r} left by an interrupted run: "
                      f"{', '.join(repr(p.name) for p in removed)}.", UserWarning, stacklevel=3)
    return removed


def write_error(exc, path):
    """An ``OSError`` of the same kind whose message names ``path`` and what to do; ``exc``
    itself when it is not about space or permissions."""
    where = Path(path)
    if exc.errno in _FULL:
        return type(exc)(exc.errno, f"Cannot write {str(where)!r}: {_FULL[exc.errno]}. Nothing was written; "
                         "free space there, or write the output to another disk")
    if exc.errno in _DENIED:
        return type(exc)(exc.errno, f"Cannot write {str(where)!r}: {_DENIED[exc.errno]} in the folder "
                         f"{str(where.parent)!r}. Nothing was written; choose another output path, or make that "
                         "folder writable")
    return exc


class _Message(OSError):
    """An OSError whose text is its message alone (no ``[Errno N]`` prefix)."""

    def __str__(self):
        return self.strerror or super().__str__()


def _named(exc, path):
    made = write_error(exc, path)
    if made is exc:
        return exc
    err = _Message(made.errno, made.strerror)
    err.filename = str(path)
    return err


def _rename_noreplace(src, dst):
    """Rename ``src`` to ``dst``, failing with FileExistsError if ``dst`` exists (atomically where
    the kernel supports it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    rename2 = getattr(libc, "renameat2", None)
    if rename2 is not None:
        if rename2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), str(dst))
    if Path(src).is_dir():  # no atomic way: a name taken between the check and the rename is replaced
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst))
        os.rename(src, dst)
    else:
        os.link(src, dst)  # fails, atomically, if the name is taken
        os.unlink(src)


def _sync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(tmp, path, *, force):
    """Give ``tmp`` the name ``path``; an existing ``path`` is replaced only when ``force``."""
    if force:
        if Path(path).is_dir() and not Path(path).is_symlink():
            aside = _part_name(Path(path))
            os.rename(path, aside)
            try:
                os.rename(tmp, path)
            except BaseException:
                os.rename(aside, path)
                raise
            _remove(aside)
        else:
            os.replace(tmp, path)
        return
    try:
        _rename_noreplace(tmp, path)
    except FileExistsError:
        raise FixExistsError(
            f"{str(path)!r} was created by another program while this run was writing it, and is kept. "
            "Run again with {overwrite} to replace it, or choose another {output}.", **_OUTPUT_FIXES) from None


@contextmanager
def staged(*paths, force, folder=False):
    """Temporary names for ``paths``; when the block succeeds they are synced and published
    together (a result and its sidecar), else removed.

    ``folder=True`` makes each temporary name an empty folder. An existing output is replaced
    only with ``force``; if one cannot be published, those this block published are removed.
    Full disks and missing permissions are an ``OSError`` naming the path and the fix.
    """
    paths = [Path(p) for p in paths]
    temps = []
    current = paths[0] if paths else None
    try:
        for path in paths:
            current = path
            clean_stale_parts(path)
            tmp = _part_name(path)
            # listed before it exists: a signal right after it is made still finds it to remove
            temps.append(tmp)
            try:
                if folder:
                    tmp.mkdir()
                else:
                    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:  # not this run's (names are unique per process): never removed here
                temps.pop()
                raise
        current = paths[0]  # the body writes them all: its errors are about the output as a whole
        yield temps[0] if len(temps) == 1 else temps
        mode = (0o777 if folder else 0o666) & ~umask()
        for path, tmp in zip(paths, temps):
            current = path
            if not folder:
                _sync(tmp)
            os.chmod(tmp, mode)
        if interrupted:  # the signal's own exception was lost somewhere: still publish nothing
            raise KeyboardInterrupt()
        done = []
        try:
            for path, tmp in zip(paths, temps):
                current = path
                publish(tmp, path, force=force)
                done.append(path)
        except BaseException:
            for path in done:  # this run's outputs only: all of them or none
                _remove(path)
            raise
    except OSError as exc:
        raise _named(exc, current) from None
    finally:
        for tmp in temps:
            if os.path.lexists(tmp):
                _remove(tmp)


def write_bytes(path, data, *, force=True):
    """Write ``data`` to ``path`` whole or not at all (see :func:`staged`)."""
    with staged(path, force=force) as tmp:
        tmp.write_bytes(data)


def write_text(path, text, *, force=True):
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (see :func:`staged`)."""
    write_bytes(path, text.encode("utf-8"), force=force)


def json_text(obj):
    """``obj`` as genosift writes JSON (sidecars, run records): indented, keys sorted, a final newline."""
    return json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n"


def write_json(obj, path, *, force=True):
    """``obj`` as JSON (:func:`json_text`), written whole or not at all."""
    write_text(path, json_text(obj), force=force)


def write_table(frame, path, *, force=True):
    """A DataFrame as a tab-separated file without its index, written whole or not at all; every
    float64 and int64 is written exactly (the shortest text that reads back to the same number)."""
    from .tabletext import frame_text

    write_text(path, frame_text(frame, sep="\t"), force=force)


def fresh_folder(base):
    """Create and return a new folder ``base``, or ``base-2``, ``base-3``... if it exists."""
    base = Path(base)
    for i in range(1, 10_000):
        candidate = base if i == 1 else base.with_name(f"{base.name}-{i}")
        try:
            candidate.mkdir(parents=True)
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"Could not create a fresh folder next to {base}.")


def check_output(path, *, force, inputs=(), folder=False):
    """Check before any work that ``path`` can be written: its folder exists and is a folder, and
    an existing ``path`` is replaced only with ``force`` (a folder only if genosift wrote it, see
    :func:`check_replaceable`); never one of ``inputs``."""
    path = Path(path)
    for given in inputs:
        if given is not None and os.path.exists(given) and path.exists() and os.path.samefile(given, path):
            raise FixError(f"The output {str(path)!r} is the input {str(given)!r}: writing it would destroy "
                           "the data. Choose another {output}.", **_OUTPUT_FIXES)
    parent = path.resolve().parent
    if parent.exists() and not parent.is_dir():
        raise NotADirectoryError(f"The output folder {str(parent)!r} is a file. Choose another output path.")
    if not parent.exists():
        raise FileNotFoundError(f"The output folder {str(parent)!r} does not exist. Create it first.")
    if path.is_dir() and not folder:
        raise IsADirectoryError(f"The output {str(path)!r} is a folder; give a file name as the output.")
    if path.exists() or path.is_symlink():
        if not force:
            raise FixExistsError(f"{str(path)!r} already exists. Pass {{overwrite}} to replace it, or choose another "
                                 "{output}.", **_OUTPUT_FIXES)
        if folder:
            check_replaceable(path, inputs)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"Cannot write {str(path)!r}: permission denied in the folder {str(parent)!r}. "
                              "Choose another output path, or make that folder writable.")


def check_replaceable(folder, inputs=()):
    """Refuse to replace ``folder`` unless genosift wrote it and it holds nothing else."""
    folder = Path(folder)
    if not folder.is_dir() or folder.is_symlink():
        raise FixExistsError(f"{str(folder)!r} exists and is not a results folder; {{overwrite}} replaces only "
                             "results folders written by genosift. Choose another {output}.", **_OUTPUT_FIXES)
    try:
        listed = set(json.loads((folder / MARKER).read_text())["files"])
    except (OSError, ValueError, KeyError, TypeError):
        raise FixExistsError(
            f"{str(folder)!r} is not a results folder written by genosift (it has no {MARKER}), so {{overwrite}} "
            "does not replace it. Choose another {output}, or remove that folder yourself.", **_OUTPUT_FIXES) from None
    extra = sorted(e.name for e in folder.iterdir() if e.name not in listed and e.name != MARKER)
    if extra:
        shown = ", ".join(repr(n) for n in extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        raise FixExistsError(
            f"{str(folder)!r} holds {shown}, which genosift did not write there, so {{overwrite}} does not "
            "replace it. Move them out, or choose another {output}.", **_OUTPUT_FIXES)
    resolved = folder.resolve()
    for given in inputs:
        if given is not None and resolved in Path(given).resolve().parents:
            raise ValueError(f"The input {str(given)!r} is inside the output folder {str(folder)!r}; replacing "
                             "the folder would delete it. Choose another -o.")


def write_marker(folder, files):
    """Mark ``folder`` as a results folder holding ``files`` (names), written by genosift."""
    (Path(folder) / MARKER).write_text(json.dumps({"written_by": "genosift", "files": sorted(files)}, indent=1)
                                       + "\n")
