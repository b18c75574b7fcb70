"""Files in and out, shared by every module that reads input lines or
writes a file.

* :func:`check_writable`: an output path is checked before the work that
  fills it starts (one clear error, nothing created).
* :func:`atomic_open` / :func:`atomic_write`: the data goes to a unique
  temporary file beside the target, is flushed to disk, then renamed over
  the target, so a reader never sees a half-written file and a crash leaves
  the old file (or none) in place.
* :func:`write_output`: an output file of a command, atomically where it
  is a regular file, in place where it is a device, a pipe or a link
  (``-o /dev/stdout``).
* :func:`read_input`: an input file read whole (or up to a bound), a
  path that cannot be read raising the caller's error.
* :func:`directory_lock`: processes that fill the same cache directory
  take turns (an advisory lock on the directory itself, no lock file).
* :func:`bounded_lines`, :func:`line_problem`, :func:`shorten`: input lines
  in bounded memory (a line longer than :data:`MAX_LINE` characters is never
  held whole), bytes that are not UTF-8 kept apart from the text, and the
  quotes of bad lines in error rows cut to :data:`QUOTE` characters.
"""
from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, TextIO

from .errors import OutputPathError

__all__ = ["atomic_open", "atomic_write", "write_output", "check_writable", "read_input",
           "directory_lock", "bounded_lines", "line_problem",
           "shorten", "MAX_LINE", "QUOTE"]

#: The longest input line read whole (characters, without its newline); a
#: longer line is read in pieces and stands for an error ("too long").
MAX_LINE = 1024
#: Characters of a bad line (or of an error message) an error row quotes.
QUOTE = 200


def check_writable(path, what: str = "output file", *, stream: bool = False) -> Path:
    """Refuse, with one :class:`~bgfast.errors.OutputPathError` naming the
    problem, an output path that cannot be written: empty, a directory, in a
    directory that does not exist, or where no file can be created (a
    read-only directory or file system).  An existing file must be writable,
    and a regular file: :func:`atomic_write` would replace a device or a
    pipe.  ``stream``: the file is written in place, so an existing device or
    pipe (``/dev/stdout``) will do.  Nothing is left behind.  Returns the path
    as a :class:`~pathlib.Path`."""
    text = os.fspath(path)
    if not str(text).strip():
        raise OutputPathError(f"no {what} name given")
    p = Path(text)
    if p.is_dir():
        raise OutputPathError(f"cannot write {what} {text!r}: it is a directory")
    if p.exists() and not p.is_file():
        if not stream:
            raise OutputPathError(f"cannot write {what} {text!r}: it is not a regular file")
        if not os.access(p, os.W_OK):
            raise OutputPathError(f"cannot write {what} {text!r}: permission denied")
        return p
    parent = p.parent
    if not parent.exists():
        raise OutputPathError(f"cannot write {what} {text!r}: the directory {str(parent)!r} "
                              "does not exist")
    if not parent.is_dir():
        raise OutputPathError(f"cannot write {what} {text!r}: {str(parent)!r} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix="." + p.name + ".", suffix=".check", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputPathError(f"cannot write {what} {text!r}: no file can be created in "
                              f"{str(parent)!r} ({exc.strerror or exc})") from None
    if p.exists():
        try:
            with open(p, "r+b"):
                pass
        except OSError as exc:
            raise OutputPathError(f"cannot write {what} {text!r}: "
                                  f"{exc.strerror or exc}") from None
    return p


@contextmanager
def atomic_open(path, mode: str = "wb", encoding: str | None = None, fsync: bool = True):
    """Open a temporary file for writing that replaces ``path`` on success.

    The file gets the permissions a plain ``open`` would give (0666 less
    the umask); on any error the temporary file is removed.  ``fsync``: the
    data reaches the disk before the rename (without it, a killed process
    still leaves the old file or the new one, a power cut may not).
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write(path, data, fsync: bool = True) -> None:
    """Write ``data`` (str, bytes, or an iterable of bytes chunks) atomically."""
    if isinstance(data, str):
        with atomic_open(path, "w", encoding="utf-8", fsync=fsync) as f:
            f.write(data)
        return
    with atomic_open(path, "wb", fsync=fsync) as f:
        if isinstance(data, (bytes, bytearray, memoryview)):
            f.write(data)
        else:
            for chunk in data:
                f.write(chunk)


def write_output(path, text: str) -> None:
    """Write ``text`` to the output file ``path`` (checked beforehand with
    ``check_writable(path, stream=True)``): with :func:`atomic_write` where
    it is a regular file or a new one, in place where it is a device, a
    pipe or a link (``/dev/stdout``), which a rename would replace."""
    p = Path(path)
    if p.is_symlink() or (p.exists() and not p.is_file()):
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        atomic_write(p, text)


def read_input(path, error: type[Exception], *, limit: int | None = None,
               binary: bool = False):
    """The contents of the input file ``path``: text (UTF-8, any byte that is
    not UTF-8 replaced by U+FFFD) or, with ``binary``, bytes; with ``limit``, at
    most ``limit + 1`` characters (bytes), so that the caller can tell a
    file that is too long.  A path that cannot be read (missing, a
    directory, no permission) raises ``error("cannot read PATH: why")``."""
    n = -1 if limit is None else limit + 1
    try:
        if binary:
            with open(path, "rb") as fh:
                return fh.read(n)
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(n)
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from None


@contextmanager
def directory_lock(directory):
    """Hold an exclusive advisory lock (``flock``) on ``directory`` for the
    block, waiting while another process holds it.  Where the platform has
    no ``flock`` or the directory cannot be opened, the block runs unlocked.
    """
    try:
        import fcntl
    except ImportError:             # not POSIX
        yield
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                # closing the descriptor releases the lock


# ---------------------------------------------------------------------------
# input lines
# ---------------------------------------------------------------------------

#: A Unicode noncharacter (reserved for a program's internal use): it marks
#: the stand-in of a line too long to read whole, ``MARK length MARK head``.
_CUT = "\ufdd0"
_CUT_RE = re.compile(f"{_CUT}([0-9]+){_CUT}(.*)", re.S)


def cut_line(head: str, length: int) -> str:
    """The stand-in of a line of ``length`` characters beginning ``head``."""
    return f"{_CUT}{length}{_CUT}{head[:QUOTE]}\n"


def bounded_lines(stream: TextIO, limit: int = MAX_LINE) -> Iterator[str]:
    """The lines of a text stream, as iterating it gives them, except that a
    line longer than ``limit`` characters is read in pieces (never held
    whole) and given as a short stand-in that :func:`line_problem` names."""
    readline = stream.readline
    while True:
        line = readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line[-1] == "\n":
            yield line
            continue
        length = len(line)
        while True:
            piece = readline(1 << 16)
            if not piece:
                break
            if piece[-1] == "\n":
                length += len(piece) - 1
                break
            length += len(piece)
        yield cut_line(line, length)


def bound_lines(lines: list, limit: int = MAX_LINE) -> list:
    """``lines`` with each line longer than ``limit`` characters replaced by
    the stand-in :func:`bounded_lines` gives."""
    if not lines or max(map(len, lines)) <= limit + 1:
        return lines
    return [line if len(line) <= limit or (len(line) == limit + 1 and line[-1] == "\n")
            else cut_line(line, len(line.rstrip("\n"))) for line in lines]


def _not_text(text: str) -> int:
    """The column (0-based) of the first byte that was not UTF-8 (read with
    ``errors="surrogateescape"``), or -1."""
    if text.isascii():
        return -1
    for i, ch in enumerate(text):
        if "\udc80" <= ch <= "\udcff":
            return i
    return -1


def line_problem(text: str) -> str | None:
    """What makes an input line unreadable, or None: too long
    (:func:`bounded_lines`), or bytes that are not UTF-8 text."""
    if text.startswith(_CUT):
        m = _CUT_RE.match(text)
        if m:
            return f"line too long: {int(m.group(1)):,} characters (at most {MAX_LINE:,})"
    col = _not_text(text)
    if col >= 0:
        return (f"not UTF-8 text: byte 0x{ord(text[col]) - 0xDC00:02x} "
                f"at character {col + 1}")
    return None


def shorten(text: str, limit: int = QUOTE) -> str:
    """``text`` as an error row quotes it: at most ``limit`` characters and
    a note of the length, bytes that were not UTF-8 as U+FFFD."""
    length = None
    m = _CUT_RE.match(text) if text.startswith(_CUT) else None
    if m:
        length, text = int(m.group(1)), m.group(2).rstrip("\n")
    if _not_text(text) >= 0:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if length is None:
        length = len(text)
    if length > limit or len(text) > limit:
        return f"{text[:limit]}... ({length:,} characters)"
    return text
