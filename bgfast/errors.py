"""Exceptions raised by bgfast.

Every error caused by bad input is a subclass of :class:`ValueError`, so
``except ValueError`` catches them all; the specific classes say what was
wrong.  :class:`MissingTableError` is also a :class:`KeyError`, like
``chess.syzygy.MissingTableError``.  :class:`WorkerError` is the one error
of failed work rather than bad input (a :class:`RuntimeError`).
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
