"""Interchange formats: dice, gnubg Match IDs, XGIDs and gnubg move notation.

Everything here is pure Python and exact to the bit: the encoders and
decoders were checked against gnubg (``gnubg -t``, its ``set matchid``,
``set xgid`` and ``movetupletostring``) and against gnubg-nn.

* :func:`parse_dice` / :func:`check_dice` -- ``"31"``, ``"3-1"``, ``"3 1"``,
  ``"3,1"`` -> ``(3, 1)``.
* :class:`MatchState` -- every field of gnubg's 12-character Match ID
  (:meth:`MatchState.from_match_id`, :meth:`MatchState.match_id`);
  :func:`parse_gnubg_id` / :func:`format_gnubg_id` for ``PositionID:MatchID``.
* :func:`parse_position_text` -- any of the position forms (Position ID,
  XGID, ``PositionID:MatchID``, FIBS board) with its cube, score and dice.
* :class:`FibsBoard` -- the FIBS client protocol's ``board:...`` string
  (:meth:`FibsBoard.parse`, :meth:`FibsBoard.format`).
* :class:`XGID` -- eXtreme Gammon's position + match string
  (:meth:`XGID.parse`, :meth:`XGID.format`, :attr:`XGID.position`,
  :meth:`XGID.from_position`, :meth:`XGID.to_match_state`,
  :meth:`XGID.from_match_state`).
* :func:`format_play` / :func:`parse_play` / :func:`match_play` -- gnubg's
  move notation (``24/18 13/11``, ``bar/22*``, ``6/off``, ``13/7(2)``,
  ``8/5*/3``).

Players in a Match ID are numbered 0 and 1 as in gnubg.  Boards use the
``uint8[2, 25]`` layout of :mod:`bgfast.position` (row 1 = player on roll).
Every bad input raises a subclass of :class:`bgfast.errors.BgfastError`
whose message names the offending field or token.
"""
from __future__ import annotations

import base64
import enum
import functools
import operator
import re
from dataclasses import dataclass, replace

import numpy as np

from .errors import InvalidDiceError, InvalidIdError, InvalidMoveError
from .position import Position, as_board, decode_base64_id

__all__ = [
    "parse_dice",
    "check_dice",
    "CubeOwner",
    "GameState",
    "Resignation",
    "MatchState",
    "MAX_MATCH_LENGTH",
    "parse_gnubg_id",
    "format_gnubg_id",
    "XGID",
    "FibsBoard",
    "FIBS_UNLIMITED",
    "parse_position_text",
    "format_play",
    "format_plays",
    "parse_play",
    "apply_moves",
    "playing_order",
    "expand_steps",
    "match_play",
]


# ---------------------------------------------------------------------------
# dice
# ---------------------------------------------------------------------------

_DICE_RE = re.compile(r"^\s*([0-9])\s*(?:[-,]\s*|\s+)?([0-9])\s*$", re.ASCII)


def check_dice(d1, d2) -> tuple[int, int]:
    """Return ``(d1, d2)`` as ints, or raise :class:`InvalidDiceError`.

    Each die must be an integer 1..6 (``bool`` is refused).
    """
    if type(d1) is int and type(d2) is int and 0 < d1 < 7 and 0 < d2 < 7:
        return d1, d2                    # the common case, cheaply
    out = []
    for name, d in (("first die", d1), ("second die", d2)):
        if isinstance(d, bool):
            raise InvalidDiceError(f"the {name} must be an integer 1..6, not {d!r}")
        try:
            v = operator.index(d)
        except TypeError:
            raise InvalidDiceError(
                f"the {name} must be an integer 1..6, not {type(d).__name__} {d!r}") from None
        if not 1 <= v <= 6:
            raise InvalidDiceError(f"the {name} is {v}; a die shows 1..6")
        out.append(v)
    return out[0], out[1]


def parse_dice(text) -> tuple[int, int]:
    """Parse a roll written ``31``, ``3-1``, ``3 1`` or ``3,1`` -> ``(3, 1)``.

    The order is kept (``"13"`` -> ``(1, 3)``).  Only ASCII digits and
    spaces count.  Raises :class:`InvalidDiceError` for other syntax or a
    die outside 1..6.
    """
    if not isinstance(text, str):
        raise InvalidDiceError(f"dice must be given as a string such as '31', not {type(text).__name__}")
    m = _DICE_RE.match(text)
    if m is None:
        raise InvalidDiceError(
            f"cannot read dice {text!r}: write two digits 1..6, e.g. '31', '3-1', '3 1' or '3,1'")
    return check_dice(int(m.group(1)), int(m.group(2)))


# ---------------------------------------------------------------------------
# gnubg Match ID
# ---------------------------------------------------------------------------

class CubeOwner(enum.IntEnum):
    """Who owns the cube (the Match ID codes; code 2 does not exist)."""

    PLAYER0 = 0
    PLAYER1 = 1
    CENTRED = 3


class GameState(enum.IntEnum):
    """gnubg's game state (Match ID bits 8-10)."""

    NONE = 0  #: no game started
    PLAYING = 1
    OVER = 2  #: a side bore off its last checker
    RESIGNED = 3  #: ended by an accepted resignation
    DROPPED = 4  #: ended by a dropped double


class Resignation(enum.IntEnum):
    """A resignation on offer (Match ID bits 13-14)."""

    NONE = 0
    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


#: (field, first bit, width) of the 72-bit Match ID, least significant bit first.
_MATCH_ID_LAYOUT = (
    ("cube_log2", 0, 4),
    ("cube_owner", 4, 2),
    ("player_on_roll", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("double_offered", 12, 1),
    ("resignation", 13, 2),
    ("die1", 15, 3),
    ("die2", 18, 3),
    ("match_length", 21, 15),
    ("score0", 36, 15),
    ("score1", 51, 15),
    ("no_jacoby", 66, 1),
)
_MAX15 = (1 << 15) - 1
#: The longest match (and the highest score) a Match ID can hold: 15 bits.
MAX_MATCH_LENGTH = _MAX15
_ENDED = (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)


def _as_int(value, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidIdError(f"{name} must be an integer, not {type(value).__name__} {value!r}")
    v = int(value)
    if not lo <= v <= hi:
        raise InvalidIdError(f"{name} is {v}; it must lie in {lo}..{hi}")
    return v


def _as_enum(value, enum_cls, name: str):
    try:
        return enum_cls(value)
    except ValueError:
        allowed = ", ".join(f"{m.value} ({m.name})" for m in enum_cls)
        raise InvalidIdError(f"{name} code {value!r} is invalid; allowed: {allowed}") from None


@dataclass(frozen=True)
class MatchState:
    """Everything a gnubg Match ID holds: cube, score, dice and whose turn.

    Players are gnubg's 0 and 1.  ``player_on_roll`` is the player whose
    move it is (the Position ID is seen from that player); ``turn`` is the
    player who must act now: the same player, except while a double or a
    resignation awaits an answer.  ``turn=None`` means "the player on roll".

    ``dice`` is ``(d1, d2)`` or ``None`` (not rolled).  ``match_length`` 0
    means money play.  ``jacoby`` is stored inverted in bit 66 (gnubg writes
    ``jacoby=False`` for every match).  Construction validates every field
    and raises :class:`InvalidIdError` naming the field.
    """

    match_length: int = 0
    score: tuple = (0, 0)
    cube_value: int = 1
    cube_owner: CubeOwner = CubeOwner.CENTRED
    player_on_roll: int = 0
    turn: int | None = None
    crawford: bool = False
    game_state: GameState = GameState.PLAYING
    double_offered: bool = False
    resignation: Resignation = Resignation.NONE
    dice: tuple | None = None
    jacoby: bool = False

    def __post_init__(self):
        put = object.__setattr__.__get__(self)  # frozen: normalise in place
        length = _as_int(self.match_length, "match_length", 0, _MAX15)
        put("match_length", length)
        score = self.score
        if not isinstance(score, (tuple, list)) or len(score) != 2:
            raise InvalidIdError(f"score must be a pair (player 0, player 1), not {score!r}")
        score = (_as_int(score[0], "score of player 0", 0, _MAX15),
                 _as_int(score[1], "score of player 1", 0, _MAX15))
        put("score", score)
        cube = self.cube_value
        if isinstance(cube, bool) or not isinstance(cube, (int, np.integer)) or cube < 1 \
                or cube & (cube - 1) or cube > 1 << 15:
            raise InvalidIdError(
                f"cube_value {cube!r} is invalid; it must be a power of two from 1 to 32768")
        put("cube_value", int(cube))
        put("cube_owner", _as_enum(self.cube_owner, CubeOwner, "cube_owner"))
        on_roll = _as_int(self.player_on_roll, "player_on_roll", 0, 1)
        put("player_on_roll", on_roll)
        turn = on_roll if self.turn is None else _as_int(self.turn, "turn", 0, 1)
        put("turn", turn)
        for flag in ("crawford", "double_offered", "jacoby"):
            v = getattr(self, flag)
            if not isinstance(v, (bool, np.bool_)) and v not in (0, 1):
                raise InvalidIdError(f"{flag} must be True or False, not {v!r}")
            put(flag, bool(v))
        gs = _as_enum(self.game_state, GameState, "game_state")
        put("game_state", gs)
        res = _as_enum(self.resignation, Resignation, "resignation")
        put("resignation", res)
        dice = self.dice
        if dice is not None:
            if not isinstance(dice, (tuple, list)) or len(dice) != 2:
                raise InvalidIdError(f"dice must be a pair (d1, d2) or None, not {dice!r}")
            if tuple(dice) == (0, 0):
                dice = None
            else:
                try:
                    dice = check_dice(*dice)
                except InvalidDiceError as exc:
                    raise InvalidIdError(f"dice {tuple(dice)!r} are invalid: {exc}") from None
        put("dice", dice)

        # -- consistency between fields ------------------------------------
        if length:
            # a finished game's points are added in full, so the winner of
            # the match may pass the length (gnubg records 4 in a 3-point match)
            ended = gs in _ENDED
            most = length - 1 + 3 * int(cube)       # a backgammon at the cube from match point
            for p in (0, 1):
                if score[p] >= length and not ended:
                    raise InvalidIdError(
                        f"score of player {p} is {score[p]} in a {length}-point match; "
                        f"it must be below {length} until the game is over")
                if score[p] > most:
                    raise InvalidIdError(
                        f"score of player {p} is {score[p]} in a {length}-point match; a game "
                        f"at cube {int(cube)} ends at {most} points or fewer")
            if score[0] >= length and score[1] >= length:
                raise InvalidIdError("score: both players cannot have won the match")
            if self.crawford and max(score) < length - 1:
                raise InvalidIdError(
                    f"crawford is set but neither score {score} is {length - 1} "
                    f"(one point from winning a {length}-point match)")
            if self.crawford and self.cube_value != 1:
                raise InvalidIdError(f"cube_value is {self.cube_value} in the Crawford game; "
                                     "no doubling is allowed there (gnubg resets it to 1)")
        elif self.crawford:
            raise InvalidIdError("crawford is set in a money game (match_length 0)")
        if self.double_offered:
            if self.resignation != Resignation.NONE:
                raise InvalidIdError("double_offered and resignation cannot both be pending")
            if turn == on_roll:
                raise InvalidIdError(
                    "turn must be the opponent of player_on_roll while a double is offered")
            if dice is not None:
                raise InvalidIdError("dice must be not rolled while a double is offered")
            if self.cube_owner == 1 - on_roll:
                raise InvalidIdError(
                    f"double_offered by player {on_roll}, but player {1 - on_roll} owns the cube")
            if self.crawford:
                raise InvalidIdError("double_offered in the Crawford game")
        if gs == GameState.NONE and (dice is not None or self.double_offered or res):
            raise InvalidIdError("game_state is NONE (no game) but dice, a double or a "
                                 "resignation are recorded")

    # -- Match ID -----------------------------------------------------------
    @classmethod
    def from_match_id(cls, match_id: str) -> "MatchState":
        """Decode a 12-character gnubg Match ID such as ``QYkqASAAIAAA``."""
        text = match_id.strip() if isinstance(match_id, str) else match_id
        raw = decode_base64_id(text, 12, "Match ID")
        bits = int.from_bytes(raw, "little")
        if bits >> 67:
            raise InvalidIdError(f"Match ID {text!r} has bits set after bit 66 (unused bits)")
        v = {name: (bits >> lo) & ((1 << width) - 1) for name, lo, width in _MATCH_ID_LAYOUT}
        if v["cube_owner"] == 2:
            raise InvalidIdError(f"Match ID {text!r}: cube_owner code 2 is invalid "
                                 "(0 = player 0, 1 = player 1, 3 = centred)")
        if v["game_state"] > 4:
            raise InvalidIdError(f"Match ID {text!r}: game_state code {v['game_state']} is invalid "
                                 "(0 none, 1 playing, 2 over, 3 resigned, 4 dropped)")
        d1, d2 = v["die1"], v["die2"]
        if d1 > 6 or d2 > 6 or (d1 == 0) != (d2 == 0):
            raise InvalidIdError(f"Match ID {text!r}: dice {d1}-{d2} are invalid "
                                 "(each 1..6, or both 0 = not rolled)")
        try:
            return cls(
                match_length=v["match_length"],
                score=(v["score0"], v["score1"]),
                cube_value=1 << v["cube_log2"],
                cube_owner=v["cube_owner"],
                player_on_roll=v["player_on_roll"],
                turn=v["turn"],
                crawford=bool(v["crawford"]),
                game_state=v["game_state"],
                double_offered=bool(v["double_offered"]),
                resignation=v["resignation"],
                dice=(d1, d2) if d1 else None,
                jacoby=not v["no_jacoby"],
            )
        except InvalidIdError as exc:
            raise InvalidIdError(f"Match ID {text!r}: {exc}") from None

    def match_id(self) -> str:
        """The 12-character gnubg Match ID."""
        d1, d2 = self.dice if self.dice else (0, 0)
        v = dict(
            cube_log2=self.cube_value.bit_length() - 1,
            cube_owner=int(self.cube_owner),
            player_on_roll=self.player_on_roll,
            crawford=int(self.crawford),
            game_state=int(self.game_state),
            turn=self.turn,
            double_offered=int(self.double_offered),
            resignation=int(self.resignation),
            die1=d1,
            die2=d2,
            match_length=self.match_length,
            score0=self.score[0],
            score1=self.score[1],
            no_jacoby=int(not self.jacoby),
        )
        bits = 0
        for name, lo, _width in _MATCH_ID_LAYOUT:
            bits |= v[name] << lo
        return base64.b64encode(bits.to_bytes(9, "little")).decode("ascii")

    # -- helpers ------------------------------------------------------------
    @property
    def is_money(self) -> bool:
        """True for money play (match_length 0)."""
        return self.match_length == 0

    def away(self) -> tuple[int, int] | None:
        """Points each player still needs (player 0, player 1); None for money."""
        if self.is_money:
            return None
        return self.match_length - self.score[0], self.match_length - self.score[1]

    def swapped(self) -> "MatchState":
        """The same state with the labels of players 0 and 1 exchanged."""
        owner = self.cube_owner
        if owner != CubeOwner.CENTRED:
            owner = CubeOwner(1 - owner)
        return replace(self, score=(self.score[1], self.score[0]), cube_owner=owner,
                       player_on_roll=1 - self.player_on_roll, turn=1 - self.turn)

    def __str__(self):
        return self.match_id()


_GNUBG_ID_PREFIX = re.compile(r"^\s*gnubg\s*id\s*:\s*", re.IGNORECASE)


def parse_gnubg_id(text: str) -> tuple[Position, MatchState]:
    """Read gnubg's combined ID ``PositionID:MatchID`` -> (Position, MatchState).

    E.g. ``4HPwATDgc/ABMA:cAkgAQAAAAAE`` (gnubg's ``set gnubgid`` / the
    "GNUbg ID" it shows; a leading ``GNUbg ID:`` is accepted).  The
    position is seen from ``state.player_on_roll``.
    """
    if not isinstance(text, str):
        raise InvalidIdError(f"a GNUbg ID must be a string, not {type(text).__name__}")
    body = _GNUBG_ID_PREFIX.sub("", text).strip()
    parts = body.split(":")
    if len(parts) != 2:
        raise InvalidIdError(f"a GNUbg ID is 'PositionID:MatchID', not {text!r}")
    return Position.from_position_id(parts[0]), MatchState.from_match_id(parts[1])


def format_gnubg_id(position, state: MatchState) -> str:
    """gnubg's combined ID ``PositionID:MatchID``."""
    pos = position if isinstance(position, Position) else Position(as_board(position))
    return f"{pos.position_id()}:{state.match_id()}"


# ---------------------------------------------------------------------------
# XGID
# ---------------------------------------------------------------------------

# the canonical decimal integer: ASCII digits, no leading zero, no "-0"
_INT_RE = re.compile(r"0|-?[1-9][0-9]*", re.ASCII)
_XG_FIELDS = ("position", "cube", "cube_position", "turn", "dice", "score1", "score2",
              "rules", "match_length", "max_cube")


#: The most characters an XGID number field may have (the largest value is 32767).
_XG_INT_CHARS = 6


def _xg_int(text: str, name: str) -> int:
    if len(text) > _XG_INT_CHARS:
        raise InvalidIdError(f"XGID field {name} has {len(text)} characters; a number field "
                             f"has at most {_XG_INT_CHARS}")
    if not _INT_RE.fullmatch(text):
        raise InvalidIdError(f"XGID field {name} must be an integer written in ASCII digits "
                             f"without leading zeros, not {text!r}")
    return int(text)


def _dice_field(dice) -> str:
    if dice is None:
        return "00"
    if isinstance(dice, str):
        return dice
    d1, d2 = check_dice(*dice)
    return f"{d1}{d2}"


@dataclass(frozen=True)
class XGID:
    """An eXtreme Gammon position ID, field by field.

    ``checkers`` is the 26-character position field: character 0 is the top
    player's bar, 1..24 the points 1..24 counted from the BOTTOM player's
    side, 25 the bottom player's bar; ``-`` is empty, ``A``..``O`` 1..15
    bottom checkers, ``a``..``o`` top checkers.

    Other fields: ``cube`` (log2 of the cube value), ``cube_position``
    (1 bottom owns, -1 top owns, 0 centred), ``turn`` (1 bottom, -1 top:
    the player on roll, who has doubled when ``dice`` is ``"D"``), ``dice``
    (``"00"`` not rolled, ``"D"`` double offered, ``"B"`` beavered, ``"R"``
    raccooned, or two digits such as ``"52"``), ``score1`` (bottom),
    ``score2`` (top), ``rules`` (in a match 1 = Crawford game; in money a
    bit mask, 1 = Jacoby, 2 = beaver), ``match_length`` (0 = money) and
    ``max_cube`` (log2 of the cube limit).
    """

    checkers: str
    cube: int = 0
    cube_position: int = 0
    turn: int = 1
    dice: str = "00"
    score1: int = 0
    score2: int = 0
    rules: int = 0
    match_length: int = 0
    max_cube: int = 10

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        text = self.checkers
        if not isinstance(text, str) or len(text) != 26:
            raise InvalidIdError(f"XGID position must have 26 characters, not "
                                 f"{len(text) if isinstance(text, str) else type(text).__name__}")
        totals = [0, 0]  # bottom, top
        for i, ch in enumerate(text):
            if ch == "-":
                continue
            if "A" <= ch <= "O":
                if i == 0:
                    raise InvalidIdError(f"XGID position character 0 (the top player's bar) "
                                         f"holds bottom checkers {ch!r}")
                totals[0] += ord(ch) - 64
            elif "a" <= ch <= "o":
                if i == 25:
                    raise InvalidIdError(f"XGID position character 25 (the bottom player's bar) "
                                         f"holds top checkers {ch!r}")
                totals[1] += ord(ch) - 96
            else:
                raise InvalidIdError(f"XGID position character {i} is {ch!r}; "
                                     "use '-', 'A'..'O' or 'a'..'o'")
        for side, n in zip(("bottom", "top"), totals):
            if n > 15:
                raise InvalidIdError(f"XGID position gives the {side} player {n} checkers; "
                                     "at most 15 are allowed")
        for name, lo, hi in (("cube", 0, 15), ("cube_position", -1, 1), ("turn", -1, 1),
                             ("score1", 0, _MAX15), ("score2", 0, _MAX15), ("rules", 0, 3),
                             ("match_length", 0, _MAX15), ("max_cube", 0, 15)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise InvalidIdError(f"XGID field {name} must be an integer, not {v!r}")
            if not lo <= v <= hi:
                raise InvalidIdError(f"XGID field {name} is {v}; it must lie in {lo}..{hi}")
            put(name, int(v))
        if self.turn == 0:
            raise InvalidIdError("XGID field turn is 0; it must be 1 (bottom) or -1 (top)")
        dice = self.dice
        if not isinstance(dice, str):
            dice = _dice_field(dice)  # a (d1, d2) pair or None
            put("dice", dice)
        if dice not in ("00", "D", "B", "R"):
            if len(dice) != 2 or not dice.isdigit() or not all("1" <= c <= "6" for c in dice):
                raise InvalidIdError(f"XGID field dice is {dice!r}; use '00', 'D', 'B', 'R' "
                                     "or two digits 1..6 such as '52'")
        if self.match_length:
            for name in ("score1", "score2"):
                if getattr(self, name) >= self.match_length:
                    raise InvalidIdError(f"XGID field {name} is {getattr(self, name)}; it must be "
                                         f"below the match length {self.match_length}")
            if self.rules > 1:
                raise InvalidIdError(f"XGID field rules is {self.rules}; in a match it is "
                                     "0 or 1 (Crawford game)")
            if self.rules == 1:
                if max(self.score1, self.score2) != self.match_length - 1:
                    raise InvalidIdError("XGID field rules marks the Crawford game but no "
                                         f"player is at {self.match_length - 1} "
                                         f"in a {self.match_length}-point match")
                if dice in ("D", "B", "R"):
                    raise InvalidIdError(f"XGID field dice is {dice!r}: no doubling in the "
                                         "Crawford game")
                if self.cube:
                    raise InvalidIdError(f"XGID field cube is {self.cube} in the Crawford game; "
                                         "no doubling is allowed there")
            if dice in ("B", "R"):
                raise InvalidIdError(f"XGID field dice is {dice!r}: beavers and raccoons "
                                     "exist only in money play")

    # -- text ---------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> "XGID":
        """Parse ``XGID=...`` (the ``XGID=`` prefix is optional)."""
        if not isinstance(text, str):
            raise InvalidIdError(f"an XGID must be a string, not {type(text).__name__}")
        body = text.strip()
        if body[:5].upper() == "XGID=":
            body = body[5:]
        parts = body.split(":")
        if len(parts) != 10:
            raise InvalidIdError(f"an XGID has 10 fields separated by ':', not {len(parts)}: {text!r}")
        kw = {"checkers": parts[0], "dice": parts[4]}
        for name, part in zip(_XG_FIELDS[1:], parts[1:]):
            if name != "dice":
                kw[name] = _xg_int(part, name)
        return cls(**kw)

    def format(self) -> str:
        """The ``XGID=...`` string."""
        return "XGID=" + ":".join(
            [self.checkers, str(self.cube), str(self.cube_position), str(self.turn), self.dice,
             str(self.score1), str(self.score2), str(self.rules), str(self.match_length),
             str(self.max_cube)])

    def __str__(self):
        return self.format()

    # -- derived ------------------------------------------------------------
    @property
    def roll(self) -> tuple[int, int] | None:
        """The rolled dice ``(d1, d2)``, or None when not rolled or a cube action is pending."""
        if self.dice[0].isdigit() and self.dice != "00":
            return int(self.dice[0]), int(self.dice[1])
        return None

    @property
    def cube_value(self) -> int:
        return 1 << self.cube

    def _rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(bottom row, top row), each in its own numbering (index 24 = bar)."""
        bottom = np.zeros(25, dtype=np.uint8)
        top = np.zeros(25, dtype=np.uint8)
        for i, ch in enumerate(self.checkers):
            if ch == "-":
                continue
            if ch.isupper():      # bottom: char i = bottom point i (25 = its bar)
                bottom[i - 1] = ord(ch) - 64
            else:                 # top: bottom point i = top point 25 - i (0 = its bar)
                top[24 - i if i else 24] = ord(ch) - 96
        return bottom, top

    @property
    def position(self) -> Position:
        """The checkers as a Position seen from the player whose turn it is."""
        bottom, top = self._rows()
        board = np.stack([top, bottom]) if self.turn == 1 else np.stack([bottom, top])
        return Position(board)

    @classmethod
    def from_position(cls, position, **fields) -> "XGID":
        """An XGID for ``position`` (a Position or board; row 1 on roll).

        By default (``turn=1``) the player on roll is placed at the bottom;
        ``turn=-1`` places the player on roll at the top.  Other keyword
        arguments set the remaining fields; ``dice`` may also be a pair or None.
        """
        board = as_board(position)
        turn = fields.get("turn", 1)
        if turn not in (1, -1):
            raise InvalidIdError(f"XGID field turn is {turn!r}; it must be 1 (bottom) or -1 (top)")
        bottom, top = (board[1], board[0]) if turn == 1 else (board[0], board[1])
        chars = ["-"] * 26
        for i in range(24):
            if bottom[i]:
                chars[i + 1] = chr(64 + int(bottom[i]))
            if top[i]:
                chars[24 - i] = chr(96 + int(top[i]))
        if bottom[24]:
            chars[25] = chr(64 + int(bottom[24]))
        if top[24]:
            chars[0] = chr(96 + int(top[24]))
        kw = dict(fields)
        if "dice" in kw:
            kw["dice"] = _dice_field(kw["dice"])
        return cls("".join(chars), **kw)

    # -- Match ID conversion -------------------------------------------------
    def to_match_state(self) -> MatchState:
        """The cube, score and dice as a :class:`MatchState`.

        gnubg's mapping is used: the bottom player is player 1, the top
        player player 0.  ``"D"`` becomes a pending double offered by the
        player on turn.  The dice are put high die first, as gnubg's
        ``set xgid`` does (``"24"`` -> ``(4, 2)``).  Not representable, hence refused with
        :class:`InvalidIdError`: ``"B"``/``"R"`` (beaver, raccoon).  Lost:
        ``max_cube`` and the money beaver bit (the Match ID has neither).
        """
        if self.dice in ("B", "R"):
            raise InvalidIdError(f"XGID dice {self.dice!r} (beaver/raccoon) has no Match ID equivalent")
        on_roll = 1 if self.turn == 1 else 0
        owner = {1: CubeOwner.PLAYER1, -1: CubeOwner.PLAYER0, 0: CubeOwner.CENTRED}[self.cube_position]
        doubled = self.dice == "D"
        return MatchState(
            match_length=self.match_length,
            score=(self.score2, self.score1),
            cube_value=self.cube_value,
            cube_owner=owner,
            player_on_roll=on_roll,
            turn=1 - on_roll if doubled else on_roll,
            crawford=bool(self.match_length and self.rules & 1),
            game_state=GameState.PLAYING,
            double_offered=doubled,
            dice=tuple(sorted(self.roll, reverse=True)) if self.roll else None,
            jacoby=bool(not self.match_length and self.rules & 1),
        )

    @classmethod
    def from_match_state(cls, position, state: MatchState, *, beaver: bool = False,
                         max_cube: int = 10) -> "XGID":
        """An XGID from a position (seen from ``state.player_on_roll``) and a MatchState.

        Player 1 goes to the bottom (gnubg's mapping, the inverse of
        :meth:`to_match_state`).  Only a game in play (or not started) with
        no resignation pending can be written.
        """
        if state.resignation != Resignation.NONE:
            raise InvalidIdError("an XGID cannot hold a pending resignation")
        if state.game_state not in (GameState.PLAYING, GameState.NONE):
            raise InvalidIdError(f"an XGID cannot hold game_state {state.game_state.name}")
        if state.cube_value.bit_length() - 1 > 15:  # pragma: no cover - MatchState caps it
            raise InvalidIdError("cube_value too large for an XGID")
        cube_position = {CubeOwner.PLAYER1: 1, CubeOwner.PLAYER0: -1,
                         CubeOwner.CENTRED: 0}[state.cube_owner]
        if state.is_money:
            rules = int(state.jacoby) | (2 if beaver else 0)
        else:
            if beaver:
                raise InvalidIdError("beaver applies only to money play")
            rules = int(state.crawford)
        if state.double_offered:
            dice = "D"
        else:
            dice = _dice_field(state.dice)
        return cls.from_position(
            position,
            cube=state.cube_value.bit_length() - 1,
            cube_position=cube_position,
            turn=1 if state.player_on_roll == 1 else -1,
            dice=dice,
            score1=state.score[1],
            score2=state.score[0],
            rules=rules,
            match_length=state.match_length,
            max_cube=max_cube,
        )


# ---------------------------------------------------------------------------
# FIBS board strings
# ---------------------------------------------------------------------------

#: The match length a FIBS board gives an unlimited match (money play).
FIBS_UNLIMITED = 9999
_FIBS_FIELDS = 53
_FIBS_INT_RE = re.compile(r"\s*(-?[0-9]{1,6})\s*", re.ASCII)


def _fibs_int(text: str, name: str, lo: int, hi: int) -> int:
    m = _FIBS_INT_RE.fullmatch(text)
    if m is None:
        raise InvalidIdError(f"FIBS board field {name} must be an integer, not {text!r}")
    v = int(m.group(1))
    if not lo <= v <= hi:
        raise InvalidIdError(f"FIBS board field {name} is {v}; it must be from {lo} to {hi}")
    return v


def _fibs_name(text: str, name: str) -> str:
    if not text.strip() or text != text.strip():
        raise InvalidIdError(f"FIBS board field {name} must be a name without surrounding "
                             f"spaces, not {text!r}")
    return text


@dataclass(frozen=True)
class FibsBoard:
    """A FIBS board string (``board:You:Opponent:...``, the FIBS client
    protocol's board state, 53 ``:``-separated fields) as a position and a
    :class:`MatchState`.

    Players: 0 is the string's player (``player``, its "you"), 1 the
    opponent.  ``position`` is seen from ``state.player_on_roll``.  What the
    string carries: names, match length (``9999`` or ``0`` = unlimited, read
    as money), score, the checkers, whose turn (``0`` = game over), the dice
    of the player on roll, the cube value and owner (from the two "may
    double" fields: only one side may double = that side owns the cube;
    neither, at a score one point from winning in a match with the cube at 1
    = the Crawford game; otherwise centred) and a pending double ("was
    doubled": 1 = the opponent has doubled, -1 = the player has, gnubg's
    extension).  The sides' colour and direction may be either way round;
    :meth:`format` writes colour 1 and direction -1, as gnubg does.

    Left out on reading: the "on bar" counts (the board's bar fields are
    used; gnubg writes 0 there), "can move", "forced move" and "redoubles".
    The "on home" counts must agree with the checkers on the board.  Bad
    strings raise :class:`InvalidIdError` naming the field (or
    :class:`bgfast.errors.InvalidPositionError` for an impossible board).
    """

    position: Position
    state: MatchState
    player: str = "You"
    opponent: str = "Opponent"

    def __post_init__(self):
        if not isinstance(self.position, Position):
            object.__setattr__(self, "position", Position(self.position))
        if not isinstance(self.state, MatchState):
            raise InvalidIdError(f"state must be a MatchState, not {type(self.state).__name__}")
        for name in ("player", "opponent"):
            v = getattr(self, name)
            if not isinstance(v, str) or ":" in v or not v.strip() or v != v.strip():
                raise InvalidIdError(f"FIBS board {name} name {v!r} is empty, has surrounding "
                                     "spaces or a ':'")

    @property
    def names(self) -> tuple[str, str]:
        return self.player, self.opponent

    # -- reading ------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> "FibsBoard":
        """Read a ``board:...`` string."""
        if not isinstance(text, str):
            raise InvalidIdError(f"a FIBS board must be a string, not {type(text).__name__}")
        f = text.strip().split(":")
        if f[0] != "board":
            raise InvalidIdError(f"a FIBS board string starts with 'board:', not {text[:20]!r}")
        if len(f) != _FIBS_FIELDS:
            raise InvalidIdError(f"a FIBS board has {_FIBS_FIELDS} ':'-separated fields, "
                                 f"not {len(f)}")
        player, opponent = _fibs_name(f[1], "player"), _fibs_name(f[2], "opponent")
        length = _fibs_int(f[3], "match length", 0, FIBS_UNLIMITED)
        if length == FIBS_UNLIMITED:
            length = 0
        elif length > MAX_MATCH_LENGTH:
            raise InvalidIdError(f"FIBS board field match length is {length}; the longest "
                                 f"match is {MAX_MATCH_LENGTH} points ({FIBS_UNLIMITED} = unlimited)")
        score = (_fibs_int(f[4], "player's score", 0, _MAX15),
                 _fibs_int(f[5], "opponent's score", 0, _MAX15))
        cells = [_fibs_int(f[6 + k], f"board position {k}", -15, 15) for k in range(26)]
        turn = _fibs_int(f[32], "turn", -1, 1)
        dice = [_fibs_int(f[33 + i], "dice", 0, 6) for i in range(4)]
        cube = _fibs_int(f[37], "cube", 1, 1 << 15)
        may = (_fibs_int(f[38], "player may double", 0, 1),
               _fibs_int(f[39], "opponent may double", 0, 1))
        doubled = _fibs_int(f[40], "was doubled", -1, 1)
        colour = _fibs_int(f[41], "colour", -1, 1)
        direction = _fibs_int(f[42], "direction", -1, 1)
        if colour == 0 or direction == 0:
            raise InvalidIdError("FIBS board fields colour and direction are -1 or 1, not 0")
        home, bar = _fibs_int(f[43], "home", 0, 25), _fibs_int(f[44], "bar", 0, 25)
        if (home, bar) != ((0, 25) if direction == -1 else (25, 0)):
            raise InvalidIdError(f"FIBS board fields home {home} and bar {bar} do not fit "
                                 f"direction {direction} (home 0 and bar 25 for direction -1, "
                                 "25 and 0 for +1)")
        off = (_fibs_int(f[45], "player on home", 0, 15), _fibs_int(f[46], "opponent on home", 0, 15))
        for i, name in ((47, "player on bar"), (48, "opponent on bar"), (49, "can move"),
                        (50, "forced move"), (51, "did crawford"), (52, "redoubles")):
            _fibs_int(f[i], name, -(1 << 15), 1 << 15)
        rows = np.zeros((2, 25), dtype=np.uint8)  # 0 = player, 1 = opponent, own numbering
        for k in range(1, 25):
            v = cells[k]
            p = k if direction == -1 else 25 - k  # the player's point number
            if v * colour > 0:
                rows[0, p - 1] = abs(v)
            elif v:
                rows[1, 24 - p] = abs(v)
        rows[0, 24] = abs(cells[bar])   # the bars: the sign is not relied on
        rows[1, 24] = abs(cells[home])
        for side, name in ((0, "player"), (1, "opponent")):
            if int(rows[side].sum()) + off[side] != 15:
                raise InvalidIdError(f"FIBS board: the {name} has {int(rows[side].sum())} checkers "
                                     f"on the board and {off[side]} borne off, not 15 in all")
        if doubled:
            on_roll = 1 if doubled == 1 else 0  # the doubler
            acting = 1 - on_roll
        elif turn == 0:
            on_roll = acting = 0
        else:
            on_roll = acting = 0 if turn == colour else 1
        roll = tuple(dice[0:2]) if on_roll == 0 else tuple(dice[2:4])
        if (roll[0] == 0) != (roll[1] == 0):
            raise InvalidIdError(f"FIBS board: the dice {roll[0]} {roll[1]} are half rolled")
        if may == (1, 0):
            owner = CubeOwner.PLAYER0
        elif may == (0, 1):
            owner = CubeOwner.PLAYER1
        else:
            owner = CubeOwner.CENTRED
        crawford = (length > 0 and may == (0, 0) and cube == 1 and not doubled
                    and max(score) == length - 1)
        board = rows if on_roll == 0 else rows[::-1]
        position = Position(np.ascontiguousarray(board[::-1]))  # row 1 = on roll
        state = MatchState(match_length=length, score=score, cube_value=cube, cube_owner=owner,
                           player_on_roll=on_roll, turn=acting, crawford=crawford,
                           game_state=GameState.OVER if turn == 0 and not doubled
                           else GameState.PLAYING,
                           double_offered=bool(doubled), dice=None if roll[0] == 0 else roll)
        return cls(position, state, player, opponent)

    # -- writing ------------------------------------------------------------
    def format(self) -> str:
        """The ``board:...`` string (colour 1, direction -1, as gnubg writes it)."""
        s = self.state
        if s.game_state not in (GameState.PLAYING, GameState.OVER):
            raise InvalidIdError(f"a FIBS board holds a game in play or over, not game state "
                                 f"{s.game_state.name}")
        if s.resignation:
            raise InvalidIdError("a FIBS board cannot hold a pending resignation")
        if s.jacoby:
            raise InvalidIdError("a FIBS board cannot hold the Jacoby rule")
        b = self.position.board  # row 1 = the player on roll
        rows = (b[1], b[0]) if s.player_on_roll == 0 else (b[0], b[1])  # player, opponent
        cells = [0] * 26
        for p in range(1, 25):
            if rows[0][p - 1]:
                cells[p] = int(rows[0][p - 1])
            if rows[1][24 - p]:
                cells[p] = -int(rows[1][24 - p])
        cells[25] = int(rows[0][24])
        cells[0] = -int(rows[1][24])
        if s.double_offered:
            turn = 1 if s.turn == 0 else -1
            doubled = 1 if s.player_on_roll == 1 else -1
        else:
            turn = 0 if s.game_state == GameState.OVER else (1 if s.player_on_roll == 0 else -1)
            doubled = 0
        d = s.dice or (0, 0)
        dice = [*d, 0, 0] if s.player_on_roll == 0 else [0, 0, *d]
        if s.crawford:
            may = (0, 0)
        else:
            may = (int(s.cube_owner != CubeOwner.PLAYER1), int(s.cube_owner != CubeOwner.PLAYER0))
        off = [15 - int(r.sum()) for r in rows]
        fields = ["board", self.player, self.opponent,
                  s.match_length or FIBS_UNLIMITED, *s.score, *cells, turn, *dice, s.cube_value,
                  *may, doubled, 1, -1, 0, 25, *off, int(rows[0][24]), int(rows[1][24]),
                  0, 0, int(s.crawford), 0]
        return ":".join(str(x) for x in fields)

    def __str__(self):
        return self.format()



def parse_position_text(text: str) -> tuple[Position, MatchState | None, XGID | None]:
    """Any position form bgfast reads -> ``(position, state, xgid)``.

    The forms: a Position ID (``state`` and ``xgid`` None: no context), an
    XGID (``XGID=...``, or any text with 10 ``:``-separated fields),
    gnubg's ``PositionID:MatchID`` and a FIBS board string (``board:...``,
    :class:`FibsBoard`).  ``position`` is seen from the player on
    roll and ``state`` holds the cube, score and dice; ``xgid`` is the
    parsed XGID (for the fields a Match ID lacks: the money beaver bit and
    the cube limit).  An XGID with a pending beaver or raccoon is refused
    (:class:`InvalidIdError`): a Match ID cannot hold it.
    """
    if not isinstance(text, str):
        raise InvalidIdError(f"a position must be given as a string, not {type(text).__name__}")
    head = text.strip()
    if head.startswith("board:"):
        fb = FibsBoard.parse(head)
        return fb.position, fb.state, None
    if head.upper().startswith("XGID=") or head.count(":") >= 9:
        xg = XGID.parse(head)
        if xg.dice in ("B", "R"):
            raise InvalidIdError("an XGID with a pending beaver or raccoon cannot be used here")
        return xg.position, xg.to_match_state(), xg
    if ":" in head:
        pos, state = parse_gnubg_id(head)
        return pos, state, None
    return Position.from_position_id(head), None, None


# ---------------------------------------------------------------------------
# move notation
# ---------------------------------------------------------------------------

def _point_name(p: int) -> str:
    return "bar" if p == 25 else "off" if p == 0 else str(p)


#: what a checker move (from, to) is, in the mover's numbering
_MOVE_RULE = "from 1..25 (25 = bar) to a lower point 0..24 (0 = off)"


def _move_ok(a, b):
    """Whether (a, b) is a checker move (see _MOVE_RULE): ints, or integer
    arrays element by element."""
    return (a >= 1) & (a <= 25) & (b >= 0) & (b < a)


def _check_moves(moves, limit: int | None = 4) -> list[tuple[int, int]]:
    out = []
    for m in moves:
        try:
            a, b = (operator.index(x) for x in m)
        except (TypeError, ValueError):
            raise InvalidMoveError(f"a checker move must be a (from, to) pair of ints, not {m!r}") from None
        if not _move_ok(a, b):
            raise InvalidMoveError(f"checker move {a}/{b} is invalid: {_MOVE_RULE}")
        out.append((a, b))
    if limit is not None and len(out) > limit:
        raise InvalidMoveError(f"a play has at most {limit} checker moves, not {len(out)}")
    return out


def format_play(board, moves) -> str:
    """Write a play in gnubg's notation, e.g. ``24/18 13/11``, ``bar/22*``, ``8/5*/3``.

    ``board`` is the position BEFORE the play (row 1 on roll); ``moves`` are
    the (from, to) checker moves in the mover's numbering (25 = bar,
    0 = off).  As gnubg does: moves are ordered by decreasing starting point;
    a checker's consecutive moves are joined, keeping the intermediate point
    only where it hits (``8/5*/3``), otherwise dropping it (``24/20``);
    ``*`` marks a point where an opposing blot stood, only where that point
    is first written (``8/5* 6/5``); identical moves are counted
    (``13/7(2)``).  An empty play gives ``""``.
    """
    return _format_moves(as_board(board)[0].tolist(), _check_moves(moves))


def format_plays(board, moves) -> list[str]:
    """Notation of many plays of one board at once, e.g. from
    ``legal_plays_batch(..., with_moves=True)``: ``moves`` is ``int8[M, 4, 2]``
    (from, to) rows padded with -1.  The board and the moves are checked
    once (:class:`InvalidMoveError` for another shape, or a row that is
    neither padding nor a checker move), and each
    play is looked up by its raw move row and the blots it reaches."""
    opp = as_board(board)[0]
    try:
        raw = np.asarray(moves)
    except (TypeError, ValueError):
        raw = None
    if raw is None or raw.size and (raw.dtype.kind not in "iu" or raw.shape[1:] != (4, 2)
                                    or raw.ndim != 3):
        got = "a ragged sequence" if raw is None else f"{raw.dtype} of shape {raw.shape}"
        raise InvalidMoveError(f"moves must be an int8[M, 4, 2] array of (from, to) rows "
                               f"padded with -1, not {got}")
    if not raw.size:
        return []
    a, b = raw[..., 0], raw[..., 1]
    if not (((a == -1) & (b == -1)) | _move_ok(a, b)).all():
        raise InvalidMoveError(f"moves hold a row that is neither -1 padding nor a move {_MOVE_RULE}")
    mv = np.ascontiguousarray(raw, dtype=np.int8).reshape(-1, 4, 2)
    return _play_names(np.broadcast_to(opp, (len(mv), 25)), mv)


def _play_names(opp: np.ndarray, mv: np.ndarray) -> list[str]:
    """:func:`format_plays` of plays each with its own board: ``opp``
    ``uint8[M, 25]`` the opponent's row (row 0) of each play's board before
    it, ``mv`` ``int8[M, 4, 2]`` its moves (checked boards and plays)."""
    if not len(mv):
        return []
    dest = mv[:, :, 1].astype(np.intp)
    reach = (dest >= 1) & (dest <= 24)
    blot = np.zeros(dest.shape, dtype=bool)
    at = np.nonzero(reach)
    blot[at] = opp[at[0], 24 - dest[at]] > 0
    masks = (blot * np.array([1, 2, 4, 8])).sum(axis=1).tolist()
    keys = np.ascontiguousarray(mv).reshape(-1, 8).view(np.int64).ravel().tolist()
    cache = _PLAY_NAMES
    if len(cache) > 1 << 18:
        cache.clear()
    out = []
    for i, (key, mask) in enumerate(zip(keys, masks)):
        name = cache.get((key, mask))
        if name is None:
            steps = [(a, b) for a, b in mv[i].tolist() if a >= 0]
            hit = frozenset(b for k, (_, b) in enumerate(steps) if mask >> k & 1)
            name = cache[(key, mask)] = _notation(tuple(sorted(steps, reverse=True)), hit)
        out.append(name)
    return out


_PLAY_NAMES: dict = {}


def _format_moves(opp: list, moves: list) -> str:
    """format_play on checked input; ``opp`` is row 0 of the board as a list.

    The notation depends only on the moves and on which of the points they
    reach held an opposing checker, so it is memoised on exactly that.
    """
    # a blot of the opponent on my point p (1..24) sits at its index 24 - p
    blots = frozenset(b for _, b in moves if 1 <= b <= 24 and opp[24 - b] > 0)
    return _notation(tuple(sorted(moves, reverse=True)), blots)


@functools.lru_cache(maxsize=1 << 16)
def _notation(ms: tuple, blots: frozenset) -> str:
    """gnubg notation of moves sorted by decreasing start; ``blots``: hit points."""
    hits = blots.__contains__
    # each path is a list of points; join moves of one checker
    paths: list[list[int] | None] = [[a, bb] for a, bb in ms]
    for i in range(len(paths)):
        for j in range(i + 1, len(paths)):
            pi, pj = paths[i], paths[j]
            if pi is None or pj is None or pi[-1] != pj[0]:
                continue
            if hits(pi[-1]):
                pi.append(pj[1])
            else:
                pi[-1] = pj[1]
            paths[j] = None
    chains = [p for p in paths if p is not None]
    # count identical paths, keeping the first occurrence's place
    counted: list[list] = []
    for p in chains:
        for entry in counted:
            if entry[0] == p:
                entry[1] += 1
                break
        else:
            counted.append([p, 1])
    parts = []
    marked: set[int] = set()  # gnubg stars a hit point only where it is first written
    for path, n in counted:
        text = _point_name(path[0])
        for p in path[1:]:
            text += "/" + _point_name(p)
            if hits(p) and p not in marked:
                text += "*"
                marked.add(p)
        if n > 1:
            text += f"({n})"
        parts.append(text)
    return " ".join(parts)


_TOKEN_RE = re.compile(r"^(bar|[0-9]{1,2})((?:/(?:off|[0-9]{1,2})\*?)+)(?:\(([0-9]+)\))?$",
                       re.IGNORECASE | re.ASCII)
_STEP_RE = re.compile(r"/(off|[0-9]{1,2})(\*?)", re.IGNORECASE | re.ASCII)


def _parse_tokens(text: str):
    """Syntax only: [(token, [(from, to, starred)], count)]."""
    if not isinstance(text, str):
        raise InvalidMoveError(f"a play must be given as a string, not {type(text).__name__}")
    out = []
    for token in text.split():
        m = _TOKEN_RE.match(token)
        if m is None:
            raise InvalidMoveError(f"cannot read move {token!r}: write moves such as '24/18', "
                                   "'bar/22*', '6/off', '13/7(2)' or '8/5*/3'")
        first = m.group(1).lower()
        prev = 25 if first == "bar" else int(first)
        if not 1 <= prev <= 25:
            raise InvalidMoveError(f"move {token!r} starts on point {prev}; use 1..24 or bar (25)")
        segs = []
        for sm in _STEP_RE.finditer(m.group(2)):
            name, star = sm.group(1).lower(), bool(sm.group(2))
            if segs and segs[-1][1] == 0:
                raise InvalidMoveError(f"move {token!r} goes on after bearing off")
            to = 0 if name == "off" else int(name)
            if to > 24:
                raise InvalidMoveError(f"move {token!r} names point {to}; points are 1..24 "
                                       "(bar and off are written 'bar' and 'off')")
            if to >= prev:
                raise InvalidMoveError(f"move {token!r} goes from {_point_name(prev)} to "
                                       f"{_point_name(to)}: checkers move to lower points")
            if star and to == 0:
                raise InvalidMoveError(f"move {token!r} marks a hit on 'off'")
            segs.append((prev, to, star))
            prev = to
        rep = m.group(3) or "1"
        if len(rep) > 3:
            raise InvalidMoveError(f"move {token[:20]!r}... has a {len(rep)}-digit repeat "
                                   "count; (n) must be 1..4")
        count = int(rep)
        if not 1 <= count <= 4:
            raise InvalidMoveError(f"move {token!r} repeats {count} times; (n) must be 1..4")
        out.append((token, segs, count))
    return out


def _apply_one(me: np.ndarray, opp: np.ndarray, a: int, b: int, what: str,
               also_off: int = 0) -> None:
    """Move one checker of ``me`` from a to b in place, hitting a blot; check basic sense.

    ``also_off``: how many other checkers outside the home board are still
    to be borne off by written segments (``8/off(2)`` on 4-4: each 8 comes
    home before either leaves), so they do not count against a bear-off."""
    src = 24 if a == 25 else a - 1
    if me[src] == 0:
        raise InvalidMoveError(f"{what}: there is no checker to move on {_point_name(a)}")
    if a != 25 and me[24]:
        raise InvalidMoveError(f"{what}: a checker on the bar must enter first")
    if b == 0:
        # the moving checker itself may still be outside (a segment such as 8/off)
        outside = int(me[6:].sum()) - (1 if src >= 6 else 0) - also_off
        if outside > 0:
            raise InvalidMoveError(f"{what}: cannot bear off while checkers are outside "
                                   "the home board")
    else:
        o = opp[24 - b]
        if o >= 2:
            raise InvalidMoveError(f"{what}: point {b} is held by the opponent ({int(o)} checkers)")
        if o == 1:
            opp[24 - b] = 0
            opp[24] += 1
        me[b - 1] += 1
    me[src] -= 1


def playing_order(moves) -> list[tuple[int, int]]:
    """``moves`` ((from, to) pairs, single-die steps or written segments) in
    the order :func:`apply_moves` applies them: the moves that stay on the
    board first, then the bear-offs, each by decreasing starting point.

    Entering from the bar comes first, a checker that moves twice moves
    from its higher point first, and every bear-off comes after the moves
    that bring checkers home: a written segment such as ``16/off`` is one
    move here, so ``16/off 8/2`` on 6-6 applies ``8/2`` first.  Raises
    :class:`InvalidMoveError` for a move that is not a (from, to) pair
    from 1..25 to a lower point 0..24.
    """
    return sorted(_check_moves(moves, None), key=_order_key)


def _order_key(move) -> tuple:
    return move[1] == 0, -move[0]


def _replay(board: np.ndarray, moves, labels) -> np.ndarray:
    """``board`` after ``moves``, applied to a copy in :func:`playing_order`
    (turn not passed), checking that each makes sense there (``labels[i]``
    names move i in an error).  A bear-off from outside the home board
    allows for the other checkers outside still to be borne off."""
    b = np.array(board, dtype=np.uint8, copy=True)
    opp, me = b[0], b[1]
    order = sorted(range(len(moves)), key=lambda i: _order_key(moves[i]))
    outside_off = sum(1 for a, t in moves if t == 0 and a > 6)
    for i in order:
        a, t = moves[i]
        if t == 0 and a > 6:
            outside_off -= 1
        _apply_one(me, opp, a, t, labels[i], outside_off if t == 0 else 0)
    return b


def apply_moves(board, moves) -> np.ndarray:
    """The board after the mover plays ``moves`` ((from, to) pairs), turn NOT passed.

    ``moves`` are single-die steps or written segments (``16/off`` as
    ``(16, 0)``), in any order: they are applied in :func:`playing_order`;
    landing on a blot hits it.  Raises :class:`InvalidMoveError` when a
    move has no checker to move, leaves a checker on the bar, lands on a
    held point or bears off too early.  Dice are not checked: use
    :func:`match_play` for legality.
    """
    moves = _check_moves(moves, None)
    return _replay(as_board(board), moves,
                   [f"move {_point_name(a)}/{_point_name(t)}" for a, t in moves])


def expand_steps(board, segments, pool, accept=None) -> list[tuple[int, int, int]] | None:
    """Split written segments ((from, to) pairs) into single-die steps
    ``(from, to, die)`` using dice of ``pool`` (a tuple of die values), or
    None if they cannot.

    Depth-first search over (segment, die) steps, segments tried in
    :func:`playing_order` and dice in the order given, so steps of
    different segments may interleave (``bar/13(2)`` with 6-6 enters both
    checkers before moving on; ``8/off(2)`` with 4-4 brings both home
    first).  A step may not land on a held point, nor hit on a point the
    notation does not name (gnubg always writes a hit on the way); a
    bear-off follows the rules (all checkers home, a larger die only from
    the highest point).  ``accept(me, opp, dice_left)``, if given, must
    hold after every step (rows in their own numbering), e.g. "the play can
    still be completed".
    """
    b = as_board(board)
    segments = playing_order(segments)
    targets = [t for _a, t in segments]

    def step(me, p, d, t, opp):
        q = p - d
        if q >= 1:
            if q < t:
                return None
            o = opp[24 - q]
            if o >= 2 or (o == 1 and q != t):
                return None
            return q
        if t != 0:
            return None
        if q < 0 and me[p:24].any():  # a checker on a higher point must move first
            return None
        return 0

    failed = set()

    def walk(me, opp, cur, pool):
        if cur == targets:
            return []
        state = (tuple(cur), pool, me.tobytes(), opp.tobytes())
        if state in failed:
            return None
        for i, (p, t) in enumerate(zip(cur, targets)):
            if p == t:
                continue
            for k, d in enumerate(pool):
                if d in pool[:k]:
                    continue  # the same die value was tried already
                q = step(me, p, d, t, opp)
                if q is None:
                    continue
                me2, opp2 = me.copy(), opp.copy()
                try:
                    _apply_one(me2, opp2, p, q, "step")
                except InvalidMoveError:
                    continue
                rest = pool[:k] + pool[k + 1:]
                if accept is not None and not accept(me2, opp2, rest):
                    continue
                cur2 = list(cur)
                cur2[i] = q
                got = walk(me2, opp2, cur2, rest)
                if got is not None:
                    return [(p, q, d)] + got
        failed.add(state)
        return None

    return walk(b[1].copy(), b[0].copy(), [a for a, _t in segments], tuple(pool))


def parse_play(board, text: str, dice=None) -> tuple:
    """Read gnubg move notation -> a tuple of (from, to) checker moves.

    Accepts what :func:`format_play` writes and what people type:
    ``24/18 13/11``, ``bar/22*`` (``bar`` or 25), ``6/off`` (``off`` or 0),
    ``13/7(2)``, chains ``24/18/13`` and ``8/5*/3``, any order of tokens,
    any case.  ``""`` is the empty play (the roll cannot be played).

    Returns, without ``dice``: one (from, to) pair per written segment, in
    the order written; a chain ``a/b/c`` gives ``(a, b), (b, c)`` and
    ``(n)`` repeats the token's pairs n times.  A segment may span several
    dice (``24/20`` stays ``(24, 20)``): the notation says no hit happened
    on the way, so the resulting position is already fixed.

    With ``dice=(d1, d2)`` (or ``"31"``): the same play split into
    single-die steps, in an order in which they can be played, found by
    :func:`expand_steps` (segments in :func:`playing_order`, the dice in
    the given order first); intermediate points must be open and may not
    hit (gnubg would have written such a hit).  E.g. ``24/20`` with 3-1 ->
    ``((24, 21), (21, 20))``, with 1-3 -> ``((24, 23), (23, 20))``; a
    bear-off may use a larger die (``3/off`` with 5-1 -> ``((3, 0),)``).

    The written moves may come in any order: they are replayed in
    :func:`playing_order` (``16/off 8/2`` on 6-6 moves the 8 first), a
    bear-off allowing for the other checkers written to go off
    (``8/off(2)`` on 4-4).

    Raises :class:`InvalidMoveError` naming the token for bad syntax, a
    ``*`` where no opposing checker stands, more moves than the dice give
    (two, four for a double), a move with no checker to move, onto a held
    point, from off the bar while a checker is on the bar, or bearing off
    too early; with ``dice`` also when the dice cannot make the written
    moves.  Full legality (using both dice, the higher die...)
    is checked by :func:`match_play`.
    """
    b = as_board(board)
    segments, labels = _written_segments(b, text)
    if dice is None:
        _replay(b, segments, labels)
        return tuple(segments)
    d1, d2 = check_dice(*dice) if not isinstance(dice, str) else parse_dice(dice)
    _check_move_count(text, segments, 4 if d1 == d2 else 2, f"a {d1}-{d2}")
    _replay(b, segments, labels)
    steps = expand_steps(b, segments, (d1,) * 4 if d1 == d2 else (d1, d2))
    if steps is None:
        raise InvalidMoveError(f"play {text.strip()!r} cannot be made with {d1}-{d2}")
    return tuple((a, t) for a, t, _d in steps)


def _written_segments(b: np.ndarray, text: str):
    """The (from, to) segments of a play in notation, in the order written,
    and a label naming the token of each for errors; checks the syntax, the
    ``*`` marks and the limits of any roll (4 moves, 24 pips)."""
    segments = []
    labels = []
    for token, segs, count in _parse_tokens(text):
        for _ in range(count):
            for a, t, star in segs:
                if star and b[0][24 - t] == 0:
                    raise InvalidMoveError(f"move {token!r} marks a hit on {t}, but no opposing "
                                           "checker stands there")
                segments.append((a, t))
                labels.append(f"move {token!r}")
    _check_move_count(text, segments, 4, "a roll")
    if sum(a - t for a, t in segments) > 24:
        raise InvalidMoveError(f"play {text.strip()!r} moves {sum(a - t for a, t in segments)} "
                               "pips; a roll gives at most 24")
    return segments, labels


def _check_move_count(text: str, segments, most: int, what: str) -> None:
    """Refuse more written moves than ``what`` plays (each takes a die at least)."""
    if len(segments) > most:
        raise InvalidMoveError(f"too many moves: {text.strip()!r} has {len(segments)} moves; "
                               f"{what} plays at most {most}")


def match_play(board, text: str, plays):
    """Find the legal play that ``text`` denotes.

    ``plays`` is the list of legal plays for the roll (for example
    ``bgfast.movegen.legal_plays(board, d1, d2)``), each with a
    ``.position`` (the result, opponent on roll).  The text is parsed as by
    :func:`parse_play` (moves in any order), applied to ``board`` and the
    resulting position is compared with every play.  Returns the matching
    play, or ``None`` when ``plays`` is empty and the text is empty (the
    roll cannot be played).  Raises :class:`InvalidMoveError` when the text
    denotes no legal play, naming too many moves as such (more than the
    longest legal play has, when the plays carry their ``.moves``).
    """
    b = as_board(board)
    segments, labels = _written_segments(b, text)
    plays = list(plays)
    steps = [len(p.moves) for p in plays if getattr(p, "moves", None) is not None]
    if steps:
        _check_move_count(text, segments, max(steps), "this roll")
    after = Position(_replay(b, segments, labels)[::-1])
    if not plays:
        if segments:
            raise InvalidMoveError(f"{text.strip()!r} is not legal: this roll cannot be played")
        return None
    if not segments:
        raise InvalidMoveError("the empty play is not legal: this roll can be played "
                               f"(for example {_play_name(b, plays[0])})")
    for p in plays:
        if p.position == after:
            return p
    raise InvalidMoveError(f"{text.strip()!r} is not a legal play for this roll")


def _play_name(board, play) -> str:
    moves = getattr(play, "moves", None)
    return format_play(board, moves) if moves is not None else repr(play)
