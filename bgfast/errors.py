"""Exceptions raised by bgfast.

Every error caused by bad input is a subclass of :class:`ValueError`, so
``except ValueError`` catches them all; the specific classes say what was
wrong.  :class:`MissingTableError` is also a :class:`KeyError`, like
``chess.syzygy.MissingTableError``.  :class:`WorkerError` is the one error
of failed work rather than bad input (a :class:`RuntimeError`).
:func:`check_whole` and :func:`check_seed` are the checks of whole-number
arguments that every module shares.
"""


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


def check_whole(name: str, value, lo: int | None = None, hi: int | None = None,
                error: type = BgfastError) -> int:
    """``value`` as an ``int``, if it is a whole number (a Python or numpy
    integer, not a bool) in ``lo .. hi`` (None: no bound); else ``error``
    (a :class:`BgfastError` by default) naming ``name``."""
    ok = not isinstance(value, bool) and hasattr(value, "__index__")
    v = value.__index__() if ok else None
    if not ok or (lo is not None and v < lo) or (hi is not None and v > hi):
        span = (f" {lo}..{hi}" if lo is not None and hi is not None else
                f" >= {lo}" if lo is not None else f" <= {hi}" if hi is not None else "")
        raise error(f"{name} must be an integer{span}, not {value!r}")
    return v


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as an ``int`` in 0 .. 2**64 - 1, the seeds every random
    process of bgfast takes; else a :class:`BgfastError`."""
    ok = not isinstance(seed, bool) and hasattr(seed, "__index__")
    if not ok or not 0 <= seed.__index__() < 2 ** 64:
        raise BgfastError(f"{name} must be an integer 0..2**64 - 1, not {seed!r}")
    return seed.__index__()
