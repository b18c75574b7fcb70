"""Atomic file writes, shared by every module that writes a file.

The data goes to a unique temporary file beside the target, is flushed to
disk, then renamed over the target, so a reader never sees a half-written
file and a crash leaves the old file (or none) in place.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_open", "atomic_write", "check_writable"]


@contextmanager
def atomic_open(path, mode: str = "wb", encoding: str | None = None):
    """Open a temporary file for writing that replaces ``path`` on success.

    The file gets the permissions a plain ``open`` would give (0666 less
    the umask); on any error the temporary file is removed.
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
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write(path, data) -> None:
    """Write ``data`` (str, bytes, or an iterable of bytes chunks) atomically."""
    if isinstance(data, str):
        with atomic_open(path, "w", encoding="utf-8") as f:
            f.write(data)
        return
    with atomic_open(path, "wb") as f:
        if isinstance(data, (bytes, bytearray, memoryview)):
            f.write(data)
        else:
            for chunk in data:
                f.write(chunk)


def check_writable(path) -> None:
    """Refuse, before any work, an output ``path`` that :func:`atomic_open`
    could not write: raises :class:`bgfast.errors.BgfastError` with one line
    saying why (no name, a directory, a missing directory, no permission).

    It creates and removes a temporary file beside ``path`` (which is what
    the atomic write will do), so the answer is the file system's own.
    """
    from .errors import BgfastError

    text = os.fspath(path)
    if not text:
        raise BgfastError("no output file name given")
    p = Path(text)
    if p.is_dir():
        raise BgfastError(f"cannot write {text}: it is a directory")
    parent = p.parent
    if not parent.is_dir():
        raise BgfastError(f"cannot write {text}: the directory {parent} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=p.name + ".", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise BgfastError(f"cannot write {text}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)
