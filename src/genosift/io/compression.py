"""Compressed input: which compression a file uses, and its text read with bounded memory.

Every text reader of genosift (delimited tables, metadata tables, k-mer counts, Matrix Market,
name lists) opens its files here, so all of them follow the same rules:

- The compression is told from the file's first bytes (gzip, bzip2, xz, zstd); the name is
  only a fallback check: a file named ``.gz`` that starts neither with a compression header nor
  with text is refused as damaged, while plain text under such a name is read as plain text.
  zstd needs the optional ``zstandard`` package.
- Every decompressor is driven with a bounded output size per step, so a small "bomb" that
  expands to gigabytes costs time, never memory. Concatenated members and streams are read in
  turn (multi-member gzip such as bgzip, ``cat a.bz2 b.bz2``, several zstd frames), and the zero
  padding of xz (and trailing zeros after gzip) is skipped. Anything else after the last stream,
  a truncated stream and corrupt data raise :class:`DamagedFile`, which names the file.
- :func:`open_text` also bounds the length of a line: a line longer than :data:`MAX_LINE_BYTES`
  raises :class:`LineTooLong`, naming the file and the line, without holding the line.
- An input that is not a regular file (a pipe: ``<(cat file)``, ``/dev/stdin``, a FIFO) can be
  read only once, while readers look at a file's first bytes before reading it: its bytes are
  copied once, in bounded pieces, to a temporary file (:func:`replayable`), which every later
  open reads. Messages still name the path given.
"""
from __future__ import annotations

import atexit
import bz2
import io
import lzma
import os
import stat
import tempfile
import zlib
from pathlib import Path

from isal import isal_zlib

__all__ = ["COMPRESSION_SUFFIXES", "FORMATS", "MAX_LINE_BYTES", "DamagedFile", "LineTooLong", "check_command", "detect",
           "is_pipe", "replayable", "suffix_compression", "decompressed", "open_binary", "open_text"]

#: The compression formats read, by the one name used everywhere.
FORMATS = ("gzip", "bzip2", "xz", "zstd")
#: The longest line a text file may hold (64 MiB); no table row or k-mer line comes near it.
MAX_LINE_BYTES = 1 << 26
_STEP = 1 << 20  # compressed bytes read, and decompressed bytes produced, per step
_XZ_MEMORY = 1 << 28  # the most an xz stream may ask for; zstandard limits zstd windows to 128 MiB
_ZSTD_FEED = 1 << 10  # zstd input per call: a zstd block expands at most 32768-fold, so <= 32 MiB out
_MAGIC = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00", "zstd": b"\x28\xb5\x2f\xfd"}
#: The compression each file-name suffix claims, in the order messages list them; the names of
#: compressed files are looked through these suffixes.
COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".zst": "zstd", ".xz": "xz"}
_INSTALL = "pip install 'genosift[io]'"


class DamagedFile(ValueError):
    """A compressed file that cannot be read whole: corrupt, truncated or with trailing bytes."""

    def __init__(self, path, kind, reason, where="", reader=""):
        """``where``: a place in the text (after the reason); ``reader``: what the file was read
        as, e.g. ``"a delimited table"``."""
        self.path, self.kind, self.reason = path, kind, reason
        read_as = f" as {reader}" if reader else ""
        super().__init__(
            f"Cannot read {str(path)!r}{read_as}: {reason}{where}. The file is damaged or incomplete (an "
            "interrupted copy or download): re-create it or fetch it again "
            f"(`{check_command(kind)} FILE` checks it)."
        )


class LineTooLong(ValueError):
    """A text file with a line longer than :data:`MAX_LINE_BYTES`."""

    def __init__(self, path, line, limit, cr=False):
        self.path, self.line = path, line
        hint = (
            " It uses CR (old Mac) line endings: convert them to LF first, e.g. with "
            "`tr '\\r' '\\n' < FILE > FILE.txt`."
            if cr
            else " It is not a text file of this kind, or it is damaged (a quote never closed, line "
            "breaks lost): check that this is the right file."
        )
        super().__init__(
            f"{str(path)!r} line {line} is longer than {limit:,} bytes (it has no line break within "
            f"{limit:,} bytes), more than any text table or k-mer line holds.{hint}"
        )


def check_command(kind):
    """The command line that tests a file compressed with ``kind``, e.g. ``'gzip -t'``."""
    return {"gzip": "gzip -t", "bzip2": "bzip2 -t", "xz": "xz -t", "zstd": "zstd -t"}[kind]


def suffix_compression(name):
    """The compression a file name claims by its suffix (``'gzip'`` for ``x.csv.gz``), or None."""
    name = Path(name).name.lower()
    for suffix, kind in COMPRESSION_SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    return None


# each pipe read, by its path as given and its device and inode: the temporary copy of its bytes
# and the pipe's change time once copied (a new FIFO made at that path, even on a reused inode, or
# bytes written to it since, change it: another input)
_COPIES = {}


def _pipe_stat(path):
    """``os.stat(path)`` when ``path`` is a pipe or a device other than /dev/null, else None."""
    try:
        found = os.stat(path)
    except (OSError, ValueError, TypeError):
        return None
    mode = found.st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        return None
    if stat.S_ISCHR(mode) and os.path.realpath(path) == os.devnull:
        return None
    return found


def is_pipe(path):
    """Whether ``path`` is a pipe or a device (``<(cat file)``, ``/dev/stdin``, a FIFO), which can
    be read only once; ``/dev/null`` is not, nor any path that is missing or cannot be looked at."""
    return _pipe_stat(path) is not None


def _remove_copies_of(key):
    try:
        os.unlink(_COPIES[key][0])
    except OSError:
        pass


def _remove_copies():
    for key in _COPIES:
        _remove_copies_of(key)


def replayable(path):
    """The path to read the bytes of ``path`` from, as many times as needed.

    A regular file (or a folder, or a missing path) is its own path. A pipe (see
    :func:`is_pipe`) is copied, the first time it is asked for in this process, to a temporary
    file in the system's temporary folder (in pieces of 1 MiB, never held whole), removed when
    the process ends; that copy's path is returned then and for every later call with the same
    path while it is the same pipe (a new FIFO made at that path is copied anew). Messages keep
    naming ``path``.
    """
    found = _pipe_stat(path)
    if found is None:
        return path
    key = (os.fspath(path), found.st_dev, found.st_ino)
    if key in _COPIES and _COPIES[key][1] == found.st_ctime_ns:
        return _COPIES[key][0]
    fd, copy = tempfile.mkstemp(prefix="genosift-pipe-")
    try:
        with open(fd, "wb") as out, open(path, "rb") as source:
            while piece := source.read(_STEP):
                out.write(piece)
    except BaseException:
        os.unlink(copy)
        raise
    if not _COPIES:
        atexit.register(_remove_copies)
    elif key in _COPIES:  # another pipe at that path
        _remove_copies_of(key)
    _COPIES[key] = (copy, os.stat(path).st_ctime_ns)
    return copy


def _magic_kind(head):
    for kind, magic in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def detect(path):
    """``'gzip'``, ``'bzip2'``, ``'xz'``, ``'zstd'`` or ``None`` (plain text), from the first bytes.

    A file whose name claims a compression but which starts with neither its header nor text
    (a NUL or another control byte in its first bytes) raises :class:`DamagedFile`.
    """
    with open(replayable(path), "rb") as fh:
        head = fh.read(64)
    return _kind_of(head, path)


def _kind_of(head, path):
    """``detect`` of the first bytes ``head`` of ``path``."""
    kind = _magic_kind(head)
    claimed = suffix_compression(path)
    if kind is None and claimed is not None and head:
        controls = bytes(range(9)) + bytes(range(14, 32))
        if any(b in controls for b in head):
            raise DamagedFile(path, claimed, f"its name says {claimed} but it does not start with "
                              f"the {claimed} header")
    return kind


def _zstandard(path):
    try:
        import zstandard
    except ImportError:
        raise ImportError(
            f"Reading the Zstandard-compressed file {str(path)!r} needs the 'zstandard' package, which "
            f"is not installed. Install it with `pip install zstandard` or `{_INSTALL}`, or "
            "decompress the file first with `zstd -d`."
        ) from None
    return zstandard


def _decompressor(kind, path):
    if kind == "gzip":  # ISA-L's inflate: the bytes of zlib's, two to three times as fast
        return isal_zlib.decompressobj(wbits=31)
    if kind == "bzip2":
        return bz2.BZ2Decompressor()
    if kind == "xz":
        # a crafted header may ask for a dictionary of gigabytes; xz -9 needs 65 MiB
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=_XZ_MEMORY)
    return _zstandard(path).ZstdDecompressor().decompressobj()


def _starts_stream(kind, data):
    if kind == "zstd" and len(data) >= 4 and data[0] & 0xF0 == 0x50 and data[1:4] == b"\x2a\x4d\x18":
        return True  # a zstd skippable frame
    return data.startswith(_MAGIC[kind])


def _steps(fh, kind, path, step, comp=b""):
    """Decompressed pieces of the open file ``fh`` (after its bytes already read, ``comp``), each
    at most ``step`` bytes."""
    d = None
    eof = False
    while True:
        if d is None:  # between streams: skip zero padding, then expect a header or the end
            while True:
                if kind in ("gzip", "xz"):
                    comp = comp.lstrip(b"\x00")
                if len(comp) >= len(_MAGIC[kind]) or eof:
                    break
                more = fh.read(_STEP)
                eof = not more
                comp += more
            if not comp:
                return
            if not _starts_stream(kind, comp):
                raise DamagedFile(path, kind, f"it has trailing bytes after its {kind} data that are not {kind}")
            d = _decompressor(kind, path)
        try:
            if kind == "zstd":
                comp = memoryview(comp)  # slices without copies
                out = d.decompress(comp[:_ZSTD_FEED])
                comp = comp[_ZSTD_FEED:]
                pending = False
            elif kind == "gzip":
                out = d.decompress(comp, step)
                comp = d.unconsumed_tail
                pending = len(out) == step  # zlib may hold more output for the input it took
            else:
                out = d.decompress(comp, step)
                comp = b""  # bz2 and lzma keep the input they have not used yet
                pending = not d.needs_input
        except lzma.LZMAError as exc:
            if "memory usage limit" in str(exc).lower():
                raise DamagedFile(path, kind, f"its xz data ask for more than {_XZ_MEMORY >> 20} MiB to "
                                  "decompress, more than any xz preset needs") from None
            raise DamagedFile(path, kind, f"its {kind} data are corrupt ({exc})") from None
        except (zlib.error, isal_zlib.error, OSError, EOFError, ValueError) as exc:
            raise DamagedFile(path, kind, f"its {kind} data are corrupt ({exc})") from None
        except Exception as exc:
            if type(exc).__name__ != "ZstdError":
                raise
            raise DamagedFile(path, kind, f"its {kind} data are corrupt ({exc})") from None
        if len(out) > step:  # zstd: at most 32 MiB from one feed, handed out in steps
            for i in range(0, len(out), step):
                yield out[i : i + step]
        elif out:
            yield out
        if d.eof:  # zlib leaves the bytes after the stream in unused_data and unconsumed_tail both
            comp = d.unused_data + (b"" if kind == "gzip" else comp)
            d = None
        elif not (comp or pending):
            comp = fh.read(_STEP)
            if not comp:
                raise DamagedFile(path, kind, f"it is truncated: its {kind} data end before the "
                                  "end-of-stream marker")


def decompressed(path, step=_STEP):
    """The bytes of ``path``, decompressed if it is compressed, in pieces of at most ``step`` bytes.

    The file is opened and read once (its first bytes tell the compression); a pipe
    (``<(cat file)``, ``/dev/stdin``) is read from its copy (:func:`replayable`)."""
    with open(replayable(path), "rb") as fh:
        head = fh.read(64)
        kind = _kind_of(head, path)
        if kind is None:
            if data := head + fh.read(max(step - len(head), 1)):
                yield data
            while data := fh.read(step):
                yield data
        else:
            yield from _steps(fh, kind, path, step, head)


class _Stream(io.RawIOBase):
    """A generator of byte pieces as a readable raw stream; optionally bounds the line length."""

    def __init__(self, path, pieces, max_line):
        self._path = path
        self._pieces = pieces
        self._out = memoryview(b"")
        self._max_line = max_line
        self._lines = 0  # line breaks seen
        self._run = 0  # bytes since the last line break
        self._cr = False

    def readable(self):
        return True

    def readinto(self, buffer):
        while not len(self._out):
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            if self._max_line:
                self._count(piece)
            self._out = memoryview(piece)
        count = min(len(buffer), len(self._out))
        buffer[:count] = self._out[:count]
        self._out = self._out[count:]
        return count

    def _count(self, piece):
        # one pass of C-speed searches per piece: the bytes since the last line break are counted,
        # never gathered, so a file without line breaks is refused after MAX_LINE_BYTES
        first = piece.find(b"\n")
        if first < 0:
            self._run += len(piece)
            self._cr = self._cr or b"\r" in piece
        else:
            if self._run + first > self._max_line:
                raise self._too_long(self._lines + 1, self._cr or b"\r" in piece[:first])
            last = piece.rfind(b"\n")
            if last - first > self._max_line:  # a long line inside the piece (tiny limits only)
                k = _first_long_line(piece, first, last, self._max_line)
                if k is not None:
                    raise self._too_long(self._lines + 2 + k, False)
            self._lines += piece.count(b"\n", first, last + 1)
            self._run = len(piece) - last - 1
            self._cr = b"\r" in piece[last + 1 :]
        if self._run > self._max_line:
            raise self._too_long(self._lines + 1, self._cr)

    def _too_long(self, line, cr):
        return LineTooLong(self._path, line, self._max_line, cr)

    def close(self):
        self._pieces.close()
        super().close()


def _first_long_line(piece, first, last, limit):
    """Index (from 0) of the first line between the breaks at ``first`` and ``last`` that is
    longer than ``limit``, or None."""
    import numpy as np

    breaks = np.flatnonzero(np.frombuffer(piece, np.uint8, count=last + 1 - first, offset=first) == 10)
    long = np.flatnonzero(np.diff(breaks) - 1 > limit)
    return int(long[0]) if long.size else None


def open_binary(path, *, max_line=None):
    """``path`` opened for reading its (decompressed) bytes, with bounded memory.

    With ``max_line`` (bytes), a line longer than that raises :class:`LineTooLong`.
    """
    raw = _Stream(path, decompressed(path), max_line)
    return io.BufferedReader(raw, _STEP)


def open_text(path, *, max_line=MAX_LINE_BYTES):
    """``path`` as UTF-8 text (a leading byte-order mark dropped), lines bounded by ``max_line``.

    ``newline=""`` keeps line endings as they are, so the csv module sees quoted line breaks.
    """
    return io.TextIOWrapper(open_binary(path, max_line=max_line), encoding="utf-8-sig", newline="")
