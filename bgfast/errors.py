"""Exceptions raised by bgfast.

Every error caused by bad input is a subclass of :class:`ValueError`, so
``except ValueError`` catches them all; the specific classes say what was
wrong.  :class:`MissingTableError` is also a :class:`KeyError`, like
``chess.syzygy.MissingTableError``.  :class:`WorkerError` is the one error
of failed work rather than bad input (a :class:`RuntimeError`).
:func:`check_whole`, :func:`check_seed`, :func:`check_number` and
:func:`check_flag` are the checks of arguments that every module shares.
"""
import math
import numbers
import operator

import numpy as np


class BgfastError(ValueError):
    """Base class of every bad-input error raised by bgfast."""


class InvalidPositionError(BgfastError):
    """A board that cannot occur: too many checkers, both sides on a point, a bad shape."""


class InvalidIdError(BgfastError):
    """A Position ID, Match ID, XGID, FIBS board string or position key that cannot be decoded."""


class InvalidDiceError(BgfastError):
    """Dice outside 1..6, or a dice string that cannot be parsed."""


class InvalidMoveError(BgfastError):
    """Move notation that cannot be parsed, or a play that is not legal."""


class InvalidRecordError(BgfastError):
    """A malformed game or match record (for example a ``.mat`` file)."""


class InvalidScoreError(BgfastError):
    """A match score that cannot occur (or a Crawford flag at a wrong score)."""


class InvalidCubeError(BgfastError):
    """A bad cube value/owner, bad probabilities, or a cube state that cannot occur."""


class IllegalActionError(BgfastError):
    """An action the rules do not allow now (doubling in the Crawford game,
    taking when no double is offered, rolling twice, ...)."""


class DatabaseError(BgfastError):
    """A database file that is truncated, corrupt or of the wrong kind."""


class MissingTableError(BgfastError, KeyError):
    """The position is not covered by the table being probed."""

    def __str__(self):  # KeyError would quote the message
        return ValueError.__str__(self)


class OutputPathError(BgfastError):
    """An output path that cannot be written: empty, a directory, in a
    directory that does not exist or cannot be written to."""


class WorkerError(RuntimeError):
    """A worker process died, or its failure could not be sent back."""


def as_whole(value) -> int | None:
    """``value`` as an ``int`` if it is a whole number (a Python or numpy
    integer, not a bool), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def check_whole(name: str, value, lo: int | None = None, hi: int | None = None,
                error: type = BgfastError, span: str | None = None) -> int:
    """``value`` as an ``int``, if it is a whole number (a Python or numpy
    integer, not a bool) in ``lo .. hi`` (None: no bound); else ``error``
    (a :class:`BgfastError` by default) naming ``name`` and the range
    (``span``, or the bounds)."""
    v = as_whole(value)
    if v is None or (lo is not None and v < lo) or (hi is not None and v > hi):
        if span is None:
            span = (f"{lo}..{hi}" if lo is not None and hi is not None else
                    f">= {lo}" if lo is not None else f"<= {hi}" if hi is not None else "")
        raise error(f"{name} must be an integer{' ' + span if span else ''}, not {value!r}")
    return v


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as an ``int`` in 0 .. 2**64 - 1, the seeds every random
    process of bgfast takes; else a :class:`BgfastError`."""
    return check_whole(name, seed, 0, 2 ** 64 - 1, span="0..2**64 - 1")


def check_number(name: str, value, lo: float | None = None, hi: float | None = None, *,
                 lo_open: bool = False, hi_open: bool = False, finite: bool = True,
                 error: type = BgfastError) -> float:
    """``value`` as a ``float``, if it is a real number (not a bool, not
    nan; an infinity only without ``finite``) in the range from ``lo`` to
    ``hi`` (None: no bound; ``lo_open``/``hi_open``: the bound itself
    excluded); else ``error`` naming ``name``."""
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real)
    x = float(value) if ok else math.nan
    if (not ok or math.isnan(x) or (finite and math.isinf(x))
            or (lo is not None and (x <= lo if lo_open else x < lo))
            or (hi is not None and (x >= hi if hi_open else x > hi))):
        bounds = [f"{'>' if lo_open else '>='} {lo}" if lo is not None else "",
                  f"{'<' if hi_open else '<='} {hi}" if hi is not None else ""]
        span = " and ".join(b for b in bounds if b)
        raise error(f"{name} must be a {'finite ' if finite else ''}number"
                    f"{' ' + span if span else ''}, not {value!r}")
    return x


def check_flag(name: str, value) -> bool:
    """``value`` as a ``bool``, if it is one (Python's or numpy's); else a
    :class:`BgfastError` naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise BgfastError(f"{name} must be True or False, not {value!r}")
    return bool(value)
