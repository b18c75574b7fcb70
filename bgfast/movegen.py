"""Legal plays, in bulk and one position at a time, and shot counting.

The rules (docs/rules.md) are implemented once, in the Cython kernel
``bgfast._movegen``: bar first, blocked points, hits, doubles played up to
four times, the use-both-dice / use-the-higher-die rule, partial entry from
the bar and every bear-off rule.  Plays are de-duplicated by resulting
position.  An empty result means the roll cannot be played (turn lost).

Every resulting position is given with the turn passed: row 1 (on roll) of a
result is the opponent, row 0 the side that just moved.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _movegen
from .errors import BgfastError, InvalidDiceError, InvalidPositionError
from .position import Position, as_board, as_boards

__all__ = ["Play", "legal_plays", "legal_plays_batch", "count_plays_batch",
           "count_shots", "ALL_ROLLS", "ROLL_WEIGHTS"]

#: The 21 distinct rolls (high die first) and how many of the 36 each stands for.
ALL_ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int64)
ROLL_WEIGHTS = np.where(ALL_ROLLS[:, 0] == ALL_ROLLS[:, 1], 1, 2).astype(np.int64)


def _as_dice(dice, n: int) -> np.ndarray:
    """``dice`` (one pair, or one pair per board) as ``int64[n, 2]``, checked:
    integers 1..6 (bool and floats are refused), else :class:`InvalidDiceError`."""
    try:
        arr = np.asarray(dice)
    except (TypeError, ValueError):
        raise InvalidDiceError(f"dice must be a pair of integers 1..6, or one pair per board, "
                               f"not {dice!r}") from None
    single = arr.shape == (2,)
    if single:
        arr = np.broadcast_to(arr, (n, 2))
    if arr.ndim != 2 or arr.shape != (n, 2):
        raise InvalidDiceError(f"dice must have shape ({n}, 2) or (2,), not {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise InvalidDiceError(f"dice must be integers 1..6, not {arr.dtype}")
    if arr.size and (arr.min() < 1 or arr.max() > 6):
        bad = (arr < 1) | (arr > 6)
        i = int(np.nonzero(bad.any(axis=1))[0][0])
        a, b = (int(x) for x in arr[i])
        roll = f"{a}-{b}" if 0 <= min(a, b) and max(a, b) <= 9 else f"({a}, {b})"
        die = int(arr[i][bad[i]][0])
        where = "" if single else f" of board {i}"
        raise InvalidDiceError(f"the roll {roll}{where} has a die of {die}: each die shows 1..6")
    return np.ascontiguousarray(arr, dtype=np.int64)


#: The kernel's error codes (negative play counts) and what they mean.
_KERNEL_ERRORS = {-1: "out of memory", -2: "more plays than the generator allows",
                  -3: "a die outside 1..6"}


def _kernel_failure(i: int, code: int) -> BgfastError:
    """The error for board ``i`` whose move generation returned ``code`` (< 0)."""
    if code == -3:
        return InvalidDiceError(f"board {i}: move generation refused {_KERNEL_ERRORS[code]}")
    what = _KERNEL_ERRORS.get(int(code), f"error {int(code)}")
    return InvalidPositionError(f"board {i}: move generation failed ({what})")


def _one_pair(dice) -> tuple[int, int] | None:
    """``(d1, d2)`` when ``dice`` is plainly one valid roll -- a pair of ints
    1..6 (a tuple or list, or one such pair in a list) -- else None: the
    caller then checks ``dice`` in full with :func:`_as_dice`."""
    if type(dice) in (tuple, list) and len(dice) == 1:
        dice = dice[0]
    if type(dice) in (tuple, list) and len(dice) == 2:
        a, b = dice
        if type(a) is int and type(b) is int and 1 <= a <= 6 and 1 <= b <= 6:
            return a, b
    return None


def _run(boards, dice, validate: bool, with_moves: bool):
    if isinstance(boards, np.ndarray):
        # one board and one roll: the kernel's single-board entry (no batch set-up)
        pair = _one_pair(dice)
        if pair is not None:
            one = _movegen.legal_plays_one(boards, pair[0], pair[1], with_moves, validate)
            if one is not None:
                results, moves = one
                return np.array([0, len(results)], dtype=np.int64), results, moves
    b = as_boards(boards, validate=validate)
    d = _as_dice(dice, b.shape[0])
    offsets, results, moves, failure = _movegen.legal_plays_batch(b, d, with_moves)
    if failure is not None:
        raise _kernel_failure(*failure)
    return offsets, results, moves


def legal_plays_batch(boards, dice, *, validate: bool = True, with_moves: bool = False):
    """All legal plays for many boards at once.

    ``boards`` is ``uint8[N, 2, 25]``; ``dice`` is ``int[N, 2]`` (or one pair
    for every board).  Returns ``(offsets int64[N+1], results uint8[M, 2, 25])``:
    the plays of board ``i`` are ``results[offsets[i]:offsets[i+1]]``, each
    with the opponent on roll.  With ``with_moves=True`` a third array
    ``int8[M, 4, 2]`` gives the checker moves of each play as (from, to)
    points of the mover (25 = bar, 0 = off), padded with -1.
    The loop runs in C with the GIL released.

    The dice are always checked (integers 1..6, else
    :class:`InvalidDiceError`).  ``validate=False`` skips the check that
    each board is possible (for boards known to be, such as results of
    earlier plays); the kernel stays memory-safe for any ``uint8`` board,
    but the plays of an impossible board mean nothing.
    """
    offsets, results, moves = _run(boards, dice, validate, with_moves)
    if with_moves:
        return offsets, results, moves
    return offsets, results


def count_plays_batch(boards, dice, *, validate: bool = True) -> np.ndarray:
    """The number of legal plays of each board (0 = the roll cannot be played)."""
    b = as_boards(boards, validate=validate)
    counts = _movegen.count_plays_batch(b, _as_dice(dice, b.shape[0]))
    if counts.size and counts.min() < 0:
        i = int(np.nonzero(counts < 0)[0][0])
        raise _kernel_failure(i, int(counts[i]))
    return counts


@dataclass(frozen=True)
class Play:
    """One legal play: its checker moves and the resulting position.

    ``moves`` holds (from, to) pairs in the order played, points counted
    from the mover's side (25 = bar, 0 = off).  ``position`` is the result
    with the opponent on roll.
    """

    before: Position
    moves: tuple
    position: Position

    @property
    def notation(self) -> str:
        """The play in gnubg notation, e.g. ``24/18 13/11`` or ``bar/22*``."""
        from .formats import format_play

        return format_play(self.before, self.moves)       # a Position: checked once already

    def __str__(self):
        return self.notation

    def __repr__(self):
        return f"<Play {self.notation} -> {self.position.position_id()}>"


def _frozen(cls, fields: dict):
    """An instance of the frozen dataclass ``cls`` (one without
    ``__post_init__``) holding ``fields`` (every field, by name): equal to
    ``cls(**fields)``, made in one step instead of one
    ``object.__setattr__`` per field (plays are made by the dozen)."""
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", fields)
    return obj


def legal_plays(position, d1: int, d2: int) -> list[Play]:
    """Every legal play of ``position`` (a Position or a board) for the roll d1-d2."""
    pos = position if isinstance(position, Position) else Position(as_board(position))
    _offsets, results, moves = _run(pos.board, (d1, d2), False, True)
    return [_frozen(Play, {"before": pos, "moves": steps, "position": after})
            for steps, after in zip(_play_steps(moves), Position._many_checked(results))]


def _play_steps(moves) -> list[tuple]:
    """The (from, to) steps of each play of ``moves`` (``int8[M, 4, 2]`` as
    :func:`legal_plays_batch` gives them, padded with -1) as tuples.  The
    tuples are kept by the play's 8 move bytes (up to 200,000 of them), so
    a play seen before costs one dict look-up."""
    codes = memoryview(np.asarray(moves).tobytes()).cast("q").tolist()
    known = _STEPS
    out = [known.get(c) for c in codes]
    if None in out:
        if len(known) > 200_000:
            known.clear()
        for i in [i for i, t in enumerate(out) if t is None]:
            t = out[i] = tuple((a, b) for a, b in moves[i].tolist() if a >= 0)
            known[codes[i]] = t
    return out


# the step tuples of the plays seen so far, by their 8 move bytes (see _play_steps)
_STEPS: dict[int, tuple] = {}


def count_shots(boards, *, validate: bool = True) -> np.ndarray:
    """For each board, how many of the 36 rolls let the player on roll hit.

    A roll counts when at least one of its legal plays hits an opposing blot
    (moves are generated in full, so blocks, the bar and intermediate points
    are respected).
    """
    b = as_boards(boards, validate=validate)
    n = b.shape[0]
    rep = np.repeat(b, len(ALL_ROLLS), axis=0)
    dice = np.tile(ALL_ROLLS, (n, 1))
    offsets, results = legal_plays_batch(rep, dice, validate=False)
    # after the play the opponent is row 1; a hit put one more of its checkers on the bar
    before_bar = np.repeat(rep[:, 0, 24], np.diff(offsets))
    hit = results[:, 1, 24] > before_bar
    any_hit = np.zeros(len(rep), dtype=bool)
    owner = np.repeat(np.arange(len(rep)), np.diff(offsets))
    any_hit[owner[hit]] = True
    return (any_hit.reshape(n, len(ALL_ROLLS)) * ROLL_WEIGHTS).sum(axis=1)
