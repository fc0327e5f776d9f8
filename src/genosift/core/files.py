"""Writing outputs: whole or not at all, never over a file someone else made, with messages.

Every output (tables, sidecars, stores, figures, results folders) is written under a temporary
name beside its final one, ``.NAME.genosift-HOST-PID-RANDOM.part``, synced to disk, and then
published by a rename that refuses to replace an existing name unless the caller forces it. A
result and its sidecar are published together: when the second cannot be, the first is removed.
Partial files of runs that died (``kill -9``, a power cut) are removed by the next run writing
the same output. Results folders carry a marker listing what genosift wrote in them; only such a
folder, holding nothing else, may be replaced. Every file written is stamped (an extended
attribute holding its size, modification time and inode; where the file system keeps no
extended attributes, an entry in the folder's hidden ledger :data:`LEDGER`):
forcing replaces or removes only a file that carries the stamp of its present contents, never one
that genosift did not write or that was changed since. A command declares its inputs and outputs
(:func:`check_apart`): no output is an input or another output; its outputs are published
together (:func:`together`).
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import secrets
import shutil
import socket
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path

from .messages import FixError, FixExistsError, PythonText

__all__ = ["LEDGER", "MARKER", "check_apart", "check_output", "check_replaceable", "fresh_folder", "json_text",
           "publish", "remove_written", "staged", "together", "umask", "write_bytes", "write_json", "write_marker",
           "write_table", "write_text", "written_by_genosift"]

#: Signals received (the command line records them here): no output is published after one.
interrupted = []
#: The file that marks a folder as a results folder written by genosift (the files it wrote).
MARKER = ".genosift-results.json"
#: The extended attribute that stamps a file genosift wrote: ``SIZE:MTIME_NS:INODE`` of what it
#: wrote (the inode: a copy that keeps extended attributes and times is another file).
STAMP = "user.genosift.written"
#: Where the file system keeps no extended attributes, the hidden file of a folder that stamps the
#: files genosift wrote in it: ``{"files": {NAME: [SIZE, MTIME_NS, INODE, DEVICE]}}``.
LEDGER = ".genosift-written.json"
#: A ledger larger than this (bytes) is not read (nothing in its folder is taken for genosift's),
#: and one written holds at most :data:`LEDGER_ENTRIES` files (the newest).
LEDGER_BYTES = 1 << 20
LEDGER_ENTRIES = 4096
#: The errors of setting an extended attribute where the file system keeps none.
_NO_XATTR = {errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM}
_ledger_lock = threading.Lock()
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


def _stamp_text(st):
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}".encode()


def _stamp(path):
    """Stamp the finished file ``path`` as written by genosift with an extended attribute; False
    where the file system keeps none (its folder's :data:`LEDGER` stamps it once it is published)."""
    setxattr = getattr(os, "setxattr", None)  # Linux only
    if setxattr is None:
        return False
    try:
        setxattr(path, STAMP, _stamp_text(os.stat(path)))
    except OSError as exc:
        return exc.errno not in _NO_XATTR
    return True


def _ledger_stamp(st):
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]


def _read_ledger(folder):
    """The stamps of :data:`LEDGER` in ``folder`` (name: stamp), or None when there is none or it
    is not a ledger genosift wrote (a link, larger than :data:`LEDGER_BYTES`, not such JSON)."""
    path = Path(folder) / LEDGER
    try:
        if not os.path.isfile(path) or os.path.islink(path) or os.path.getsize(path) > LEDGER_BYTES:
            return None
        with open(path, "rb") as fh:
            data = json.loads(fh.read(LEDGER_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("written_by") != "genosift" or not isinstance(data.get("files"), dict):
        return None
    return {name: stamp for name, stamp in data["files"].items()
            if "/" not in name and name not in ("", ".", "..", LEDGER)
            and isinstance(stamp, list) and len(stamp) == 4 and all(type(v) is int for v in stamp)}


def _in_ledger(path, st):
    entries = _read_ledger(path.parent)
    return entries is not None and entries.get(path.name) == _ledger_stamp(st)


def _record(path):
    """Stamp the published file ``path`` in its folder's :data:`LEDGER`, dropping the entries of
    files gone or changed and keeping the newest :data:`LEDGER_ENTRIES`. Where the ledger cannot be
    written, or its name holds a file that is not a ledger, nothing is recorded: the file is then
    not taken for genosift's (never the other way round)."""
    path = Path(path)
    folder, ledger = path.parent, path.parent / LEDGER
    with _ledger_lock:
        entries = _read_ledger(folder)
        if entries is None and os.path.lexists(ledger):
            return
        files, size = {}, 64
        for name, stamp in [(path.name, None), *(entries or {}).items()]:  # the newest first
            try:
                st = os.stat(folder / name, follow_symlinks=False)
            except (OSError, ValueError):
                continue
            if name in files or (stamp is not None and stamp != _ledger_stamp(st)):
                continue
            size += len(json.dumps({name: _ledger_stamp(st)})) + 2
            if len(files) >= LEDGER_ENTRIES or size > LEDGER_BYTES:
                break
            files[name] = _ledger_stamp(st)
        try:
            write_text(ledger, json.dumps({"written_by": "genosift", "files": files}) + "\n",
                       force=entries is not None)
        except OSError:
            pass


def written_by_genosift(path):
    """Whether ``path`` is an output genosift wrote, unchanged since: a file carrying the stamp of
    its present size, modification time and inode (an extended attribute or, where the file system keeps
    none, its entry in the folder's :data:`LEDGER`), or a folder with the results marker
    (:data:`MARKER`). A symbolic link never is (replacing it would lose the link)."""
    path = Path(path)
    if path.is_symlink():
        return False
    if path.is_dir():
        return (path / MARKER).is_file()
    if path.name == LEDGER:
        return _read_ledger(path.parent) is not None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    try:
        return os.getxattr(path, STAMP) == _stamp_text(st)
    except (AttributeError, OSError):  # no such attribute, or none kept here (not Linux)
        return _in_ledger(path, st)


def _option_fixes(owner, option):
    """The fixes of a message about the output that the parameter ``option`` of ``owner`` names."""
    if owner == "check_output" and option == "output":
        return _OUTPUT_FIXES
    return {"owner": owner, "overwrite": True, option: FixExistsError.ANY}


def _not_written(path, option="output", owner="check_output"):
    what = "folder" if Path(path).is_dir() and not Path(path).is_symlink() else "file"
    return FixExistsError(
        f"{str(path)!r} exists and genosift did not write it (or it was changed since), so {{overwrite}} does not "
        f"replace it: only outputs genosift wrote are replaced. Choose another {{{option}}}, or remove that {what} "
        "yourself.", **_option_fixes(owner, option))


def remove_written(path):
    """Remove ``path`` if it is an output genosift wrote (:func:`written_by_genosift`); True if removed."""
    if not written_by_genosift(path):
        return False
    _remove(Path(path))
    return True


def publish(tmp, path, *, force):
    """Give ``tmp`` the name ``path``; an existing ``path`` is replaced only when ``force``, and only
    if genosift wrote it."""
    if force and os.path.lexists(path) and not written_by_genosift(path):
        raise _not_written(path)
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
    only with ``force`` and only if genosift wrote it; if one cannot be published, those this
    block published are removed. Inside a :func:`together` block that declares them, they are
    published when that block ends, with the command's other outputs. Full disks and missing
    permissions are an ``OSError`` naming the path and the fix.
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
        ledger = []  # whether each is stamped in its folder's ledger once published
        for path, tmp in zip(paths, temps):
            current = path
            if not folder:
                _sync(tmp)
            os.chmod(tmp, mode)
            ledger.append(not folder and not _stamp(tmp))
        if interrupted:  # the signal's own exception was lost somewhere: still publish nothing
            raise KeyboardInterrupt()
        batch = _batch_of(paths)
        if batch is not None:  # published with the other outputs of the command, or removed with them
            batch.extend(zip(temps, paths, [force] * len(paths), ledger))
            temps = []
            return
        done = []
        try:
            for path, tmp, book in zip(paths, temps, ledger):
                current = path
                _publish(tmp, path, force, book)
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


def _publish(tmp, path, force, ledger):
    """:func:`publish`, then stamp ``path`` in its folder's ledger if ``ledger`` (the ledger itself never)."""
    publish(tmp, path, force=force)
    if ledger and Path(path).name != LEDGER:
        try:
            _record(path)
        except BaseException:  # a signal: this output is not published after all
            _remove(Path(path))
            raise


#: The outputs of the commands running now (:func:`together`):
#: ``(paths, [(tmp, path, force, ledger)])``.
_batches = []


def _batch_of(paths):
    for declared, batch in _batches:
        if all(_key(p) in declared for p in paths):
            return batch
    return None


def _key(path):
    return Path(os.path.abspath(path))


@contextmanager
def together(*paths):
    """Publish the outputs ``paths`` of one command together: each :func:`staged` block writing
    one of them keeps its temporary file until this block ends, and then all are published (if
    one cannot be, those published are removed) or, when the block fails, none is.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> try:
    ...     with together(folder / "a.txt", folder / "b.txt"):
    ...         write_text(folder / "a.txt", "a")
    ...         raise ValueError("the second output cannot be made")
    ... except ValueError:
    ...     pass
    >>> sorted(p.name for p in folder.iterdir())
    []
    """
    declared = {_key(p) for p in paths if p is not None}
    batch = []
    _batches.append((declared, batch))
    try:
        yield
    except BaseException:
        _batches.remove((declared, batch))
        for tmp, *_ in batch:
            _remove(tmp)
        raise
    _batches.remove((declared, batch))
    done, current = [], None
    try:
        if interrupted:
            raise KeyboardInterrupt()
        for tmp, path, force, ledger in batch:
            current = path
            _publish(tmp, path, force, ledger)
            done.append(path)
    except BaseException as exc:
        for path in done:  # this run's outputs only: all of them or none
            _remove(path)
        if isinstance(exc, OSError):
            raise _named(exc, current) from None
        raise
    finally:
        for tmp, *_ in batch:
            if os.path.lexists(tmp):
                _remove(tmp)


def _same(a, b):
    """Whether the paths ``a`` and ``b`` name one file: the same path once links are followed, or
    one file under two names (a hard link)."""
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
        return os.path.samefile(a, b)
    except (OSError, RuntimeError):  # a loop of links
        return False


def _within(inner, folder):
    try:
        return Path(folder).resolve() in Path(inner).resolve().parents
    except (OSError, RuntimeError):
        return False


def check_apart(outputs, inputs=(), *, owner, folders=()):
    """Check before any work that no output of a command is one of its inputs or another of its
    outputs.

    ``outputs`` and ``inputs`` are ``(parameter, path)`` pairs (``None`` paths left out); an
    input may be ``(parameter, path, listed=True)`` for a file named inside the list file
    ``parameter`` (references, genome lists, dump lists); an output of ``folders`` (parameter
    names) is a folder, which may hold no other output (nor an input when it is replaced:
    :func:`check_replaceable`). Paths are compared once
    symbolic links are followed and by file identity (hard links). The message names both
    parameters (``owner`` spells them as the caller's options).

    >>> try:
    ...     check_apart([("output", "a.tsv"), ("genes", "a.tsv")], owner="annotate")
    ... except ValueError as exc:
    ...     print(exc)
    The outputs output= and genes= are both 'a.tsv': one would overwrite the other. Give genes= another path.
    """
    outs = [(o[0], Path(o[1])) for o in outputs if o[1] is not None]
    ins = [(i[0], Path(i[1]), len(i) > 2 and bool(i[2])) for i in inputs if i[1] is not None]
    for n, (name, path) in enumerate(outs):
        for given, source, listed in ins:  # an input inside a folder replaced: see check_replaceable
            if _same(path, source):
                where = f"a file that {{{given}}} lists ({str(source)!r})" if listed else \
                    f"the input {{{given}}} ({str(source)!r})"
                raise FixError(f"The output {{{name}}} ({str(path)!r}) is {where}: writing it would "
                               f"destroy that input. Give {{{name}}} another path.", **_fixes(owner, name, given))
        for other, second in outs[n + 1:]:
            nested = ((name in folders and _within(second, path)) or (other in folders and _within(path, second)))
            if _same(path, second) or nested:
                said = (f"both {str(path)!r}" if _same(path, second)
                        else f"{str(path)!r} and {str(second)!r}, one inside the other")
                raise FixError(f"The outputs {{{name}}} and {{{other}}} are {said}: one would overwrite the "
                               f"other. Give {{{other}}} another path.", **_fixes(owner, name, other))


def _fixes(owner, *names):
    return {"owner": owner, **{n: FixError.ANY for n in names}}


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


def check_output(path, *, force, inputs=(), folder=False, owner="check_output", option="output"):
    """Check before any work that ``path`` can be written: its folder exists and is a folder, and
    an existing ``path`` is replaced only with ``force`` and only if genosift wrote it (a folder:
    see :func:`check_replaceable`; a file: :func:`written_by_genosift`); never one of ``inputs``.
    ``owner`` and ``option`` name the parameter that gave ``path`` in messages."""
    path = Path(path)
    for given in inputs:
        if given is not None and _same(given, path):
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
                                 f"{{{option}}}.", **_option_fixes(owner, option))
        if folder:
            check_replaceable(path, inputs)
        elif not written_by_genosift(path):
            raise _not_written(path, option, owner)
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
    extra = sorted(e.name for e in folder.iterdir() if e.name not in listed and e.name not in (MARKER, LEDGER))
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
    """Mark ``folder`` as a results folder holding ``files`` (names), written by genosift (its
    :data:`LEDGER` is not an output: never listed)."""
    files = sorted(f for f in files if f != LEDGER)
    (Path(folder) / MARKER).write_text(json.dumps({"written_by": "genosift", "files": files}, indent=1) + "\n")
