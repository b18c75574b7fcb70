"""Positions: the board model, validation, pip counts, classes, diagrams.

The interchange layout used by every public numpy API is gnubg's
``uint8[2, 25]``: row 0 is the player NOT on roll, row 1 the player on roll;
index 0..23 is that side's point 1..24 counted from its own side and index 24
its bar.  Batches are ``uint8[N, 2, 25]``.  A side's point ``p`` is the other
side's point ``25 - p``, so row 0 index ``i`` faces row 1 index ``23 - i``.
"""
from __future__ import annotations

import base64
import binascii
import enum

import numpy as np

from . import _board
from .errors import InvalidIdError, InvalidPositionError

__all__ = [
    "Position",
    "PositionClass",
    "INITIAL_BOARD",
    "as_board",
    "as_boards",
    "validate_boards",
    "pack",
    "unpack",
    "key_to_position_id",
    "position_ids",
    "position_id_to_key",
]

_INITIAL_ROW = np.zeros(25, dtype=np.uint8)
_INITIAL_ROW[[5, 7, 12, 23]] = [5, 3, 5, 2]
INITIAL_BOARD = np.stack([_INITIAL_ROW, _INITIAL_ROW])
INITIAL_BOARD.flags.writeable = False


class PositionClass(enum.IntEnum):
    """What kind of position this is (ordered from finished to complex)."""

    OVER = 0  #: a side has borne off all its checkers
    BEAROFF = 1  #: no contact and both sides have every checker in the home board
    RACE = 2  #: no contact is possible any more
    CONTACT = 3  #: the sides can still hit each other


_CLASSES = tuple(PositionClass)

# ---------------------------------------------------------------------------
# validation and conversion
# ---------------------------------------------------------------------------

def validate_boards(boards: np.ndarray) -> None:
    """Raise :class:`InvalidPositionError` unless every board is possible.

    ``boards`` is ``uint8[N, 2, 25]``.  A board is possible when each side has
    at most 15 checkers, at least one side has a checker left, and no point
    holds checkers of both sides (a bar may hold checkers of both).  The message names the first offending board.
    """
    bad = _board.first_impossible(boards)
    if bad is None:
        return
    i, kind, detail = bad
    if kind == 0 and detail == 2:
        raise InvalidPositionError(f"board {i}: neither side has a checker left; the game ends "
                                   "when the first side has borne off all 15")
    if kind == 0:
        side = "player on roll" if detail == 1 else "player not on roll"
        raise InvalidPositionError(
            f"board {i}: the {side} has {int(boards[i].sum(axis=1).max())} checkers; "
            "at most 15 are allowed"
        )
    raise InvalidPositionError(
        f"board {i}: both sides have checkers on the same point "
        f"(point {24 - detail} of the player on roll)"
    )


class _CheckedBoards(np.ndarray):
    """Boards already found possible (the analysis scan checks every board
    it reads): :func:`as_boards` does not check them again.  Only views,
    slices and row selections of such boards are made here; nothing that
    computes new boards from them."""


def _array(x, error, message: str) -> np.ndarray:
    """``np.asarray(x)``, raising ``error(message)`` for what numpy cannot
    make an array of (ragged nesting, unconvertible objects)."""
    try:
        return np.asarray(x)
    except (TypeError, ValueError):
        raise error(message) from None


def as_boards(boards, *, validate: bool = True) -> np.ndarray:
    """Convert to a C-contiguous ``uint8[N, 2, 25]`` array, checking it."""
    if isinstance(boards, _CheckedBoards) and boards.dtype == np.uint8 and boards.ndim == 3:
        return np.ascontiguousarray(boards.view(np.ndarray))
    arr = _array(boards, InvalidPositionError, "boards must be an array of shape (N, 2, 25) "
                 "of checker counts")
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1:] != (2, 25):
        raise InvalidPositionError(f"boards must have shape (N, 2, 25), not {arr.shape}")
    if arr.dtype != np.uint8:
        if not np.issubdtype(arr.dtype, np.integer):
            raise InvalidPositionError(f"boards must hold integers, not {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() > 15):
            raise InvalidPositionError("checker counts must lie in 0..15")
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    if validate:
        validate_boards(arr)
    return arr


def as_board(board) -> np.ndarray:
    """Convert one board (a Position, or anything shaped (2, 25)) to uint8[2, 25]."""
    if isinstance(board, Position):
        return board.board
    arr = _array(board, InvalidPositionError, "a board must be an array of shape (2, 25) "
                 "of checker counts")
    if arr.shape != (2, 25):
        raise InvalidPositionError(f"a board must have shape (2, 25), not {arr.shape}")
    return as_boards(arr)[0]


# ---------------------------------------------------------------------------
# position keys and Position IDs
# ---------------------------------------------------------------------------

def pack(boards) -> np.ndarray:
    """``uint8[N, 2, 25]`` -> ``uint8[N, 10]`` gnubg position keys (vectorised)."""
    return _board.pack(as_boards(boards))


def unpack(keys) -> np.ndarray:
    """``uint8[N, 10]`` gnubg position keys -> ``uint8[N, 2, 25]`` boards.

    Keys may be given in any integer dtype with values 0..255.  Raises
    :class:`InvalidIdError` for anything else, for a key that does not decode, and
    :class:`InvalidPositionError` for one that decodes to an impossible board.
    """
    arr = _array(keys, InvalidIdError, "keys must be an array of shape (N, 10) of bytes 0..255")
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != 10:
        raise InvalidIdError(f"keys must have shape (N, 10), not {arr.shape}")
    if arr.dtype != np.uint8:
        if not np.issubdtype(arr.dtype, np.integer):
            raise InvalidIdError(f"keys must hold bytes 0..255, not {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() > 255):
            raise InvalidIdError("key bytes must lie in 0..255")
    boards, status = _board.unpack(np.ascontiguousarray(arr, dtype=np.uint8))
    if status.any():
        i = int(np.flatnonzero(status)[0])
        why = ("it describes fewer than 50 slots (too many checkers)" if status[i] == -1
               else "bits are set after the last slot")
        raise InvalidIdError(f"key {i} is not a valid position key: {why}")
    validate_boards(boards)
    return boards


_B64_ALPHABET = np.frombuffer(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", dtype=np.uint8)


def position_ids(boards) -> list[str]:
    """Position IDs of many boards at once (vectorised base64 of the keys)."""
    keys = pack(boards)
    n = keys.shape[0]
    padded = np.zeros((n, 12), dtype=np.uint8)
    padded[:, :10] = keys
    triples = padded.reshape(n, 4, 3).astype(np.uint32)
    words = (triples[:, :, 0] << 16) | (triples[:, :, 1] << 8) | triples[:, :, 2]
    sextets = np.stack([(words >> s) & 63 for s in (18, 12, 6, 0)], axis=2).reshape(n, 16)
    chars = _B64_ALPHABET[sextets[:, :14]]
    return chars.view("S14").ravel().astype(str).tolist()


def key_to_position_id(key: bytes) -> str:
    """10 key bytes -> the 14-character Position ID."""
    return base64.b64encode(bytes(key)).decode("ascii")[:14]


_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _check_base64(text, length: int, what: str) -> None:
    """Raise unless ``text`` is a string of ``length`` base64 characters."""
    if not isinstance(text, str):
        raise InvalidIdError(f"a {what} must be a string, not {type(text).__name__}")
    if len(text) != length:
        raise InvalidIdError(f"a {what} has {length} characters, not {len(text)}: {text!r}")
    if not _B64.issuperset(text):
        bad = [c for c in text if c not in _B64]
        raise InvalidIdError(f"{what} {text!r} has a character outside base64: {bad[0]!r}")


def decode_base64_id(text: str, length: int, what: str) -> bytes:
    """Decode an unpadded base64 ID of ``length`` characters, strictly."""
    _check_base64(text, length, what)
    pad = "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text + pad, validate=True)
    except binascii.Error as exc:  # pragma: no cover - alphabet checked above
        raise InvalidIdError(f"{what} {text!r} is not valid base64: {exc}") from None


def position_id_to_key(position_id: str) -> bytes:
    """The 14-character Position ID -> its 10 key bytes (by the kernel
    that the analysis scan decodes with, :func:`bgfast._board.position_id_key`)."""
    _check_base64(position_id, 14, "Position ID")
    key = _board.position_id_key(position_id.encode("ascii"))
    if isinstance(key, int):
        # 14 characters carry 84 bits; the last 4 must be zero padding.
        raise InvalidIdError(f"Position ID {position_id!r} has non-zero padding bits")
    return key


# ---------------------------------------------------------------------------
# the Position
# ---------------------------------------------------------------------------

class Position:
    """An immutable, hashable backgammon position with a side on roll.

    ``Position(board)`` takes anything shaped ``(2, 25)`` in gnubg's layout
    (row 1 is the player on roll).  Build one with :meth:`initial`,
    :meth:`from_position_id` or :meth:`from_xgid`.
    """

    __slots__ = ("_board", "_key", "_class")

    def __init__(self, board):
        arr = np.array(as_board(board), dtype=np.uint8, copy=True)
        arr.flags.writeable = False
        self._board = arr
        self._key = _board.pack_bytes(arr[None])
        self._class = None

    # -- constructors -------------------------------------------------------
    @classmethod
    def initial(cls) -> "Position":
        """The starting position."""
        return cls(INITIAL_BOARD)

    @classmethod
    def from_key(cls, key: bytes) -> "Position":
        """From gnubg's 10-byte position key (bytes)."""
        if not isinstance(key, (bytes, bytearray, memoryview)):
            raise InvalidIdError(f"a position key is 10 bytes, not {type(key).__name__}")
        key = bytes(key)
        board = _board.key_board(key)
        if board is None:                  # unpack says what is wrong with it
            return cls._many_checked(unpack(np.frombuffer(key, dtype=np.uint8)))[0]
        pos = cls.__new__(cls)
        pos._board = board
        pos._key = key                     # a key that decodes is the board's own
        pos._class = None
        return pos

    @classmethod
    def from_position_id(cls, position_id: str) -> "Position":
        """From a 14-character gnubg Position ID, e.g. ``4HPwATDgc/ABMA``."""
        if isinstance(position_id, str):
            position_id = position_id.strip()
        return cls.from_key(position_id_to_key(position_id))

    @classmethod
    def from_xgid(cls, xgid: str) -> "Position":
        """From an XGID; the position is seen from the player whose turn it is."""
        from .formats import XGID

        return XGID.parse(xgid).position

    @classmethod
    def parse(cls, text: str) -> "Position":
        """From a Position ID or an XGID (``XGID=...``)."""
        if not isinstance(text, str):
            raise InvalidIdError(f"a position must be given as a string, not {type(text).__name__}")
        text = text.strip()
        if text.upper().startswith("XGID=") or text.count(":") >= 9:
            return cls.from_xgid(text)
        return cls.from_position_id(text)

    # -- formats ------------------------------------------------------------
    @property
    def board(self) -> np.ndarray:
        """The read-only ``uint8[2, 25]`` board."""
        return self._board

    @property
    def key(self) -> bytes:
        """gnubg's 10-byte position key."""
        return self._key

    def position_id(self) -> str:
        """The 14-character gnubg Position ID."""
        return key_to_position_id(self._key)

    def xgid(self, **fields) -> str:
        """An XGID for this position with the player on roll at the bottom.

        Keyword arguments set the other XGID fields (see :class:`bgfast.formats.XGID`).
        """
        from .formats import XGID

        return XGID.from_position(self, **fields).format()

    # -- derived facts ------------------------------------------------------
    def swap(self) -> "Position":
        """The same checkers with the other side on roll."""
        return Position(self._board[::-1])

    def pip_count(self) -> tuple[int, int]:
        """(pips of the player on roll, pips of the opponent)."""
        weights = np.arange(1, 26)
        return int(self._board[1] @ weights), int(self._board[0] @ weights)

    def checkers(self) -> tuple[int, int]:
        """Checkers left on the board (on roll, opponent), bar included."""
        return int(self._board[1].sum()), int(self._board[0].sum())

    def borne_off(self) -> tuple[int, int]:
        """Checkers borne off (on roll, opponent)."""
        on_roll, opp = self.checkers()
        return 15 - on_roll, 15 - opp

    def classify(self) -> PositionClass:
        """OVER, BEAROFF, RACE or CONTACT."""
        if self._class is None:
            self._class = PositionClass(int(classify_boards(self._board[None])[0]))
        return self._class

    @classmethod
    def many(cls, boards, *, classify: bool = True) -> list["Position"]:
        """Positions of ``uint8[N, 2, 25]`` boards, validated, packed (and
        classified) in one vectorised pass each, not one per board."""
        arr = as_boards(boards)
        return cls._many_checked(arr, classify_boards(arr) if classify else None)

    @classmethod
    def _many_checked(cls, boards: np.ndarray, classes=None) -> list["Position"]:
        """Positions of C-contiguous ``uint8[N, 2, 25]`` boards known to be
        possible (results of move generation, checked boards): one pack for
        all; each board a read-only row of one copy of ``boards``."""
        arr = boards.copy()
        arr.flags.writeable = False
        keys = _board.pack_bytes(arr)
        new = cls.__new__
        out = []
        for i in range(arr.shape[0]):
            pos = new(cls)
            pos._board = arr[i]
            pos._key = keys[10 * i:10 * i + 10]
            pos._class = None if classes is None else _CLASSES[classes[i]]
            out.append(pos)
        return out

    @classmethod
    def from_position_ids(cls, position_ids) -> list["Position"]:
        """Many Position IDs at once (one unpack, validation and
        classification for all); raises for the first bad ID."""
        keys = [position_id_to_key(p.strip() if isinstance(p, str) else p) for p in position_ids]
        if not keys:
            return []
        arr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 10)
        return cls.many(unpack(arr))

    def legal_plays(self, d1: int, d2: int):
        """Every legal play for the roll, de-duplicated by resulting position.

        Returns a list of :class:`bgfast.movegen.Play` (notation, moves and the
        resulting position with the opponent on roll).  An empty list means
        the roll cannot be played and the turn is lost.
        """
        from .movegen import legal_plays

        return legal_plays(self, d1, d2)

    def shots(self) -> int:
        """How many of the 36 rolls let the player on roll hit a blot."""
        from .movegen import count_shots

        return int(count_shots(self._board[None])[0])

    # -- Python protocol ----------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Position):
            return NotImplemented
        return self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"Position.from_position_id({self.position_id()!r})"

    def __str__(self):
        return diagram(self)

    def __reduce__(self):
        return (Position.from_key, (self._key,))

    def _repr_svg_(self):  # Jupyter
        from . import svg  # provided by the analysis layer

        return svg.board_svg(self)


# ---------------------------------------------------------------------------
# classification (vectorised)
# ---------------------------------------------------------------------------

def classify_boards(boards: np.ndarray) -> np.ndarray:
    """PositionClass codes (``int8[N]``) for ``uint8[N, 2, 25]`` boards.

    Contact means some checker of one side still has an opposing checker in
    front of it: the on-roll side's rearmost checker (highest point, bar =
    25) is behind the opponent's rearmost checker seen from the same side.
    The rule is written once, in the board kernel (``bgfast._board``), which
    every other kernel uses too.
    """
    return _board.board_classes(np.ascontiguousarray(boards, dtype=np.uint8))


# ---------------------------------------------------------------------------
# the ASCII diagram
# ---------------------------------------------------------------------------

def diagram(pos: Position, *, on_roll: str = "X", opponent: str = "O") -> str:
    """A gnubg-style ASCII board, the player on roll (X) at the bottom moving
    counter-clockwise from the 24-point (top right) to the 1-point (bottom right)."""
    b = pos.board
    me = b[1]
    # opponent's checkers on my point p (1..24) are at their index 24 - p
    def cell(p: int, level: int) -> str:
        mine = int(me[p - 1])
        theirs = int(b[0][24 - p])
        n, ch = (mine, on_roll) if mine else (theirs, opponent)
        if n > level:
            if level == 4 and n > 5:
                return f"{n:2d}"[-2:] if n > 9 else f" {n}"
            return f" {ch}"
        return "  "

    top = list(range(13, 19)), list(range(19, 25))
    bottom = list(range(12, 6, -1)), list(range(6, 0, -1))
    lines = []
    lines.append(" +13-14-15-16-17-18-+---+19-20-21-22-23-24-+")
    for level in range(5):
        left = "".join(cell(p, level) + " " for p in top[0])
        right = "".join(cell(p, level) + " " for p in top[1])
        bar = f" {opponent} " if level == 0 and b[0][24] else "   "
        if level == 1 and b[0][24] > 1:
            bar = f"{int(b[0][24]):2d} "
        lines.append(f" |{left}|{bar}|{right}|")
    lines.append(" |                  |BAR|                  |")
    for level in range(4, -1, -1):
        left = "".join(cell(p, level) + " " for p in bottom[0])
        right = "".join(cell(p, level) + " " for p in bottom[1])
        bar = f" {on_roll} " if level == 0 and me[24] else "   "
        if level == 1 and me[24] > 1:
            bar = f"{int(me[24]):2d} "
        lines.append(f" |{left}|{bar}|{right}|")
    lines.append(" +12-11-10-09-08-07-+---+06-05-04-03-02-01-+")
    pips = pos.pip_count()
    off = pos.borne_off()
    lines.append(f" {on_roll} on roll: pips {pips[0]}, off {off[0]}   "
                 f"{opponent}: pips {pips[1]}, off {off[1]}")
    lines.append(f" Position ID: {pos.position_id()}")
    return "\n".join(lines)
