"""The game and match engine: opening roll, turns, the cube, scoring, matches.

Everything in the rules (docs/rules.md) beyond a single move lives here:

* :class:`Rules` -- the options (cube on/off and its cap, Crawford, and the
  money-only options Jacoby, beaver, raccoon, automatic doubles, and the
  "starter rolls afresh" opening).
* :class:`Game` -- one game as a state machine driven by method calls
  (:meth:`Game.roll`, :meth:`Game.play`, :meth:`Game.double`,
  :meth:`Game.take`, :meth:`Game.drop`, :meth:`Game.beaver`,
  :meth:`Game.raccoon`, :meth:`Game.resign`, :meth:`Game.accept`,
  :meth:`Game.reject`).  Only legal actions are accepted; anything else
  raises :class:`IllegalActionError` (a :class:`bgfast.errors.BgfastError`)
  or :class:`bgfast.errors.InvalidMoveError` for an illegal play.
* :class:`Match` -- a match to N points (Crawford and post-Crawford games)
  or, with ``length=0``, a money session with a running score.
* :func:`check_name` -- the one check of a player's name (no control
  characters), used by :class:`Match` and so by every importer.

:meth:`Game.can_double` is the rules' permission; ``can_double(live=True)``
also leaves out a dead cube (:meth:`Game.cube_dead`), which is what a
player is offered.  ``from_dict`` refuses (:class:`InvalidRecordError`)
any record ``to_dict`` could not have written.

Players are numbered 0 and 1 as in gnubg.  Each game records every action
(:class:`Action`), which is what ``.mat`` export and :meth:`Match.to_dict`
serialise; replaying the actions rebuilds the state exactly.  Dice come from
a seeded ``numpy.random.Generator``: the same seed gives the same game.
"""
from __future__ import annotations

import enum
import reprlib
import unicodedata
from dataclasses import asdict, dataclass, fields

import numpy as np

from .errors import BgfastError, IllegalActionError, InvalidMoveError, InvalidRecordError
from .formats import (CubeOwner, GameState, MatchState, Resignation, XGID, apply_moves,
                      check_dice, expand_steps, match_play, parse_play)
from .movegen import Play, legal_plays
from .position import INITIAL_BOARD, Position

__all__ = [
    "IllegalActionError", "ResultKind", "Phase", "Rules", "Action", "GameResult",
    "Game", "Match", "money_session", "result_kind", "max_result", "PartialPlay",
    "check_name", "MAX_NAME_LENGTH", "MAX_MATCH_LENGTH",
]

#: The longest match a :class:`Match` (or :class:`Game`) takes: what a gnubg
#: Match ID can hold (15 bits).
MAX_MATCH_LENGTH = (1 << 15) - 1

#: The longest player name :func:`check_name` accepts.
MAX_NAME_LENGTH = 64

# Unicode categories a name may not contain: control, format (bidi
# overrides, zero-width characters), surrogate, private-use and unassigned
# characters, and the line and paragraph separators.
_BAD_NAME_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60
_short.maxlist = _short.maxtuple = _short.maxdict = 6
_short.maxlevel = 3


def quote(value) -> str:
    """A short ``repr`` of record data for an error message (bounded in
    length and depth, whatever the data)."""
    return _short.repr(value)


def check_name(name) -> str:
    """Return ``name`` if it can be a player's name, else raise
    :class:`bgfast.errors.BgfastError` saying why.

    A name is a string of 1 to :data:`MAX_NAME_LENGTH` characters, not only
    spaces, without leading or trailing spaces, and without control or
    formatting characters (newlines, ESC, bidi overrides, ...), which would
    reach the terminal raw when the name is printed.  Every way a name comes
    in (``Match``, saved games, ``bgfast play --names``) goes through this
    check.
    """
    if not isinstance(name, str):
        raise BgfastError(f"a player's name must be a string, not {quote(name)}")
    if not name.strip():
        raise BgfastError("a player's name cannot be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise BgfastError(f"a player's name has at most {MAX_NAME_LENGTH} characters, "
                          f"not {len(name)}: {quote(name)}")
    if name != name.strip():
        raise BgfastError(f"a player's name cannot start or end with spaces: {quote(name)}")
    for ch in name:
        if unicodedata.category(ch) in _BAD_NAME_CATEGORIES:
            raise BgfastError(f"a player's name cannot contain the control character "
                              f"U+{ord(ch):04X}: {quote(name)}")
    return name


def _check_names(names) -> tuple[str, str]:
    if isinstance(names, (str, bytes)) or not isinstance(names, (tuple, list)) or len(names) != 2:
        raise BgfastError(f"a match has two player names, not {quote(names)}")
    return check_name(names[0]), check_name(names[1])


def _check_length(length, what: str = "match length") -> int:
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) \
            or not 0 <= length <= MAX_MATCH_LENGTH:
        raise BgfastError(f"{what} must be an integer from 0 (money) to {MAX_MATCH_LENGTH}, "
                          f"not {quote(length)}")
    return int(length)



class ResultKind(enum.IntEnum):
    """How a game was won; the value is the multiplier of the cube."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


class Phase(str, enum.Enum):
    """Where a game stands, i.e. what the player to act (:attr:`Game.to_act`) may do."""

    OPENING = "opening"    #: the opening roll (one die each) is still to come
    ROLL = "roll"          #: before the roll: double (if allowed), roll or resign
    MOVE = "move"          #: dice rolled: play them (or resign)
    DOUBLED = "doubled"    #: a double is offered: take, drop (pass) or beaver
    BEAVERED = "beavered"  #: the double was beavered: the doubler may raccoon or roll
    RESIGNED = "resigned"  #: a resignation is offered: accept or reject
    OVER = "over"          #: the game has ended


# ---------------------------------------------------------------------------
# rules
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Rules:
    """Game options.  Defaults: the standard rules with the cube, no cap.

    ``cube`` False switches the cube off entirely (gammons and backgammons
    still count).  ``max_cube`` caps the cube value (a power of two, e.g. 64
    as in the reference app; 0 = no cap).  ``crawford`` applies in matches.
    ``jacoby``, ``beaver``, ``raccoon`` (needs ``beaver``) and
    ``auto_doubles`` (how many automatic doubles equal opening throws may
    make; 0 = none) apply in money play only.  ``opening_reroll`` makes the
    starter roll both dice afresh instead of playing the two opening dice.
    """

    cube: bool = True
    max_cube: int = 0
    crawford: bool = True
    jacoby: bool = False
    beaver: bool = False
    raccoon: bool = False
    auto_doubles: int = 0
    opening_reroll: bool = False

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type in ("bool", bool):
                if not isinstance(v, (bool, np.bool_)):
                    raise BgfastError(f"rule {f.name} must be True or False, not {v!r}")
            elif isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise BgfastError(f"rule {f.name} must be a non-negative integer, not {v!r}")
        if self.max_cube and (self.max_cube & (self.max_cube - 1) or self.max_cube < 2):
            raise BgfastError(f"rule max_cube must be 0 (no cap) or a power of two >= 2, "
                              f"not {self.max_cube}")
        if self.raccoon and not self.beaver:
            raise BgfastError("rule raccoon needs beaver (a raccoon answers a beaver)")

    def check_for_match(self, length: int) -> None:
        """Refuse money-only options in a match (length > 0)."""
        if length:
            bad = [n for n in ("jacoby", "beaver", "raccoon") if getattr(self, n)]
            if self.auto_doubles:
                bad.append("auto_doubles")
            if bad:
                raise BgfastError(f"{', '.join(bad)} apply to money play only, "
                                  f"not to a {length}-point match")

    def allows(self, value: int) -> bool:
        """True if the cube may show ``value`` under the cap."""
        return not self.max_cube or value <= self.max_cube

    def to_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------
# scoring on a board
# ---------------------------------------------------------------------------

def _kind_against(loser: np.ndarray) -> ResultKind:
    """What a win is worth against ``loser`` (a row in its own numbering)."""
    if int(loser.sum()) < 15:          # borne off at least one: always a single game
        return ResultKind.SINGLE
    # the winner's home board is the loser's points 19..24 (indices 18..23); 24 = bar
    if loser[18:25].any():
        return ResultKind.BACKGAMMON
    return ResultKind.GAMMON


def result_kind(position) -> tuple[int, ResultKind] | None:
    """For a finished board: ``(winner_row, kind)``, else None.

    ``position`` is a Position or ``uint8[2, 25]`` board; ``winner_row`` is
    1 (the side on roll) or 0.  Backgammon is judged on the winner's home
    board and the bar, only when the loser has borne off nothing.
    """
    b = position.board if isinstance(position, Position) else np.asarray(position)
    for row in (0, 1):
        if int(b[row].sum()) == 0:
            return row, _kind_against(b[1 - row])
    return None


def max_result(position, loser_row: int) -> ResultKind:
    """The most the side in ``loser_row`` can still lose in this position.

    A side that has borne off a checker can lose only a single game; one with
    a checker on the bar or in the opponent's home board can still lose a
    backgammon; otherwise a gammon.
    """
    b = position.board if isinstance(position, Position) else np.asarray(position)
    return _kind_against(b[loser_row])


# ---------------------------------------------------------------------------
# actions and results
# ---------------------------------------------------------------------------

_ACTIONS = ("opening", "roll", "move", "double", "take", "drop", "beaver", "raccoon",
            "resign", "accept", "reject")


@dataclass(frozen=True)
class Action:
    """One recorded action.

    ``kind`` is one of ``opening`` (``dice`` = (player 0's die, player 1's
    die); ``player`` is -1), ``roll`` (``dice``), ``move`` (``moves``: the
    single-die checker moves in playing order, empty when the roll could not
    be played), ``double``, ``take``, ``drop``, ``beaver``, ``raccoon``
    (``value`` = the cube value after the action, for the three cube
    actions), ``resign`` (``value`` = 1, 2 or 3), ``accept``, ``reject``.
    """

    kind: str
    player: int
    dice: tuple | None = None
    moves: tuple | None = None
    value: int | None = None

    def to_list(self) -> list:
        out = [self.kind, self.player]
        if self.dice is not None:
            out.append(list(self.dice))
        elif self.moves is not None:
            out.append([list(m) for m in self.moves])
        elif self.value is not None:
            out.append(self.value)
        return out

    @classmethod
    def from_list(cls, data) -> "Action":
        """The action :meth:`to_list` wrote; anything else (other shapes,
        types or values) raises :class:`InvalidRecordError`."""
        if not isinstance(data, (list, tuple)) or len(data) not in (2, 3) \
                or not isinstance(data[0], str) or data[0] not in _ACTIONS \
                or not _is_int(data[1]) or data[1] not in (-1, 0, 1):
            raise InvalidRecordError(f"not an action: {quote(data)}")
        kind, player = data[0], int(data[1])
        extra = data[2] if len(data) == 3 else None
        bad = InvalidRecordError(f"action {quote(data)} has a malformed argument")
        if (kind == "opening") != (player == -1):
            raise InvalidRecordError(f"not an action: {quote(data)}")
        if kind in ("opening", "roll"):
            if not _int_list(extra, 2):
                raise bad
            return cls(kind, player, dice=(int(extra[0]), int(extra[1])))
        if kind == "move":
            if not isinstance(extra, (list, tuple)) or len(extra) > 4 \
                    or not all(_int_list(m, 2) for m in extra):
                raise bad
            return cls(kind, player, moves=tuple((int(a), int(b)) for a, b in extra))
        if kind in ("double", "beaver", "raccoon", "resign"):
            if not _is_int(extra):
                raise bad
            return cls(kind, player, value=int(extra))
        if extra is not None:
            raise bad
        return cls(kind, player)


def _is_int(v) -> bool:
    """A plain integer (not a bool, a float or a string)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _int_list(v, n: int) -> bool:
    return isinstance(v, (list, tuple)) and len(v) == n and all(_is_int(x) for x in v)


@dataclass(frozen=True)
class GameResult:
    """How a game ended: ``winner`` (0/1), ``kind`` (the result type that
    counted), ``points`` (kind x cube, after Jacoby), ``cube`` (the value
    used), ``how`` (``"bearoff"``, ``"drop"`` or ``"resign"``)."""

    winner: int
    kind: ResultKind
    points: int
    cube: int
    how: str


# ---------------------------------------------------------------------------
# the game
# ---------------------------------------------------------------------------

def _rng(seed, rng):
    if rng is not None:
        return rng
    return _generator(seed)


def _generator(seed) -> np.random.Generator:
    """``numpy.random.default_rng(seed)`` (a seed is anything it takes: an
    integer >= 0, a sequence of them, a SeedSequence), its refusal a
    :class:`BgfastError`."""
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise BgfastError(f"bad seed {seed!r}: {exc}") from None


class Game:
    """One game, driven by method calls.

    Arguments: ``rules``; ``match_length`` (0 = money) and ``score`` (the
    score before this game, player 0 first); ``crawford`` (this is the
    Crawford game: no doubling); ``post_crawford`` (the Crawford game has been
    played); ``seed`` or ``rng`` (dice); ``position`` +
    ``on_roll`` + ``cube_value`` + ``cube_owner`` to start from a given
    position (skipping the opening roll), e.g. for rollouts.

    The board is kept per player in its own numbering; :meth:`position`
    gives the :class:`Position` seen from the player on roll.
    """

    def __init__(self, rules: Rules | None = None, *, match_length: int = 0, score=(0, 0),
                 crawford: bool = False, seed=None, rng=None, position=None, on_roll: int = 0,
                 cube_value: int = 1, cube_owner: int | None = None,
                 post_crawford: bool = False):
        self.rules = rules if rules is not None else Rules()
        if not isinstance(self.rules, Rules):
            raise BgfastError(f"rules must be a Rules, not {quote(rules)}")
        self.match_length = _check_length(match_length, "match_length")
        self.rules.check_for_match(self.match_length)
        if not _int_list(score, 2):
            raise BgfastError(f"score must be a pair of integers, not {quote(score)}")
        self.score = (int(score[0]), int(score[1]))
        if min(self.score) < 0 or (self.match_length and max(self.score) >= self.match_length):
            raise BgfastError(f"score {self.score} is impossible before a game of a "
                              f"{self.match_length}-point match")
        if (crawford or post_crawford) and not self.match_length:
            raise BgfastError("a money game cannot be a Crawford or post-Crawford game")
        self.crawford = bool(crawford)
        self.post_crawford = bool(post_crawford) and not self.crawford
        for flag, what in ((self.crawford, "the Crawford game"),
                           (self.post_crawford, "a post-Crawford game")):
            if flag and max(self.score) != self.match_length - 1:
                raise BgfastError(f"{what} needs a side at {self.match_length - 1} "
                                  f"(one point from winning), not the score {self.score}")
        self.rng = _rng(seed, rng)
        self.actions: list[Action] = []
        self.result: GameResult | None = None
        self.dice: tuple | None = None
        if not _is_int(cube_value) or not 1 <= cube_value <= 1 << 15 \
                or cube_value & (cube_value - 1):
            raise BgfastError(f"cube_value must be a power of two from 1 to 32768, "
                              f"not {quote(cube_value)}")
        if cube_owner is not None and not (_is_int(cube_owner) and cube_owner in (0, 1)):
            raise BgfastError(f"cube_owner must be None (centred), 0 or 1, not {quote(cube_owner)}")
        if not (_is_int(on_roll) and on_roll in (0, 1)):
            raise BgfastError(f"on_roll must be 0 or 1, not {quote(on_roll)}")
        if self.crawford and (cube_value != 1 or cube_owner is not None):
            raise BgfastError("the cube stays centred at 1 in the Crawford game")
        self.cube_value = int(cube_value)
        self.cube_owner = cube_owner
        self.auto_doubles = 0
        self._resign_offer: tuple[int, ResultKind] | None = None  # (by, kind)
        self._phase_before_resign: Phase | None = None
        self._plays: list[Play] | None = None
        self._first_turn = False
        self._pending_auto_move = False
        self._last_to_act = 0
        self._start = {"position": None, "on_roll": on_roll, "cube_value": self.cube_value,
                       "cube_owner": cube_owner}
        if position is None:
            self._rows = [INITIAL_BOARD[1].copy(), INITIAL_BOARD[1].copy()]
            self.turn = 0
            self.phase = Phase.OPENING
        else:
            pos = position if isinstance(position, Position) else Position(position)
            self.turn = on_roll
            self._start["position"] = pos.position_id()
            self._rows = [None, None]
            self._rows[on_roll] = pos.board[1].copy()
            self._rows[1 - on_roll] = pos.board[0].copy()
            self.phase = Phase.ROLL
            if result_kind(pos) is not None:
                raise BgfastError("the starting position is already finished")

    # -- state --------------------------------------------------------------
    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    @property
    def over(self) -> bool:
        return self.phase == Phase.OVER

    @property
    def to_act(self) -> int:
        """The player who must act now (the opponent while a double or a
        resignation awaits an answer)."""
        if self.phase == Phase.DOUBLED:
            return 1 - self.turn
        if self.phase == Phase.RESIGNED:
            return 1 - self._resign_offer[0]
        if self.phase == Phase.OVER:
            return self._last_to_act
        return self.turn

    @property
    def turn_phase(self) -> Phase:
        """The phase of the turn: :attr:`phase`, or, while a resignation
        awaits an answer, the phase it was offered in (ROLL, MOVE or BEAVERED)."""
        return self._phase_before_resign if self.phase == Phase.RESIGNED else self.phase

    @property
    def resignation_offer(self) -> tuple[int, ResultKind] | None:
        """(player, kind) of a pending resignation, else None."""
        return self._resign_offer if self.phase == Phase.RESIGNED else None

    def board_of(self, player: int) -> np.ndarray:
        """``uint8[2, 25]`` board seen from ``player`` (row 1 = that player)."""
        return np.stack([self._rows[1 - player], self._rows[player]])

    def position(self, player: int | None = None) -> Position:
        """The position seen from ``player`` (default: the player on roll)."""
        return Position(self.board_of(self.turn if player is None else player))

    @property
    def jacoby_active(self) -> bool:
        """True while the Jacoby rule would turn a gammon into a single game."""
        return self.is_money and self.rules.jacoby and self.cube_value == 1

    def cube_available(self, player: int) -> bool:
        """May ``player`` double at the start of their turn (cube-wise)?"""
        return (self.rules.cube and not self.crawford
                and (self.cube_owner is None or self.cube_owner == player)
                and self.rules.allows(self.cube_value * 2))

    def cube_dead(self, player: int) -> bool:
        """True when the cube can gain ``player`` nothing: in a match, a win at
        the current cube value already wins ``player`` the match (a 1-point
        match, the post-Crawford leader, 2-away with the cube at 2, ...).
        This is the dead cube of :func:`bgfast.cube.cube_decision`
        (``cube >= away``).  Doubling stays legal (records may hold such a
        double), but :meth:`can_double` with ``live=True`` excludes it."""
        return bool(self.match_length) and \
            self.score[player] + self.cube_value >= self.match_length

    def why_no_double(self, live: bool = True) -> str | None:
        """Why the player on roll may not double now (None if they may).
        With ``live`` a dead cube (:meth:`cube_dead`) is a reason too."""
        if self.phase == Phase.BEAVERED:
            return "the double was beavered: raccoon or roll"
        if self.phase != Phase.ROLL:
            return f"the game is in phase {self.phase.value}, not before a roll"
        if self._first_turn:
            return "not before the first roll of the game"
        if not self.rules.cube:
            return "the cube is switched off"
        if self.crawford:
            return "this is the Crawford game"
        if self.cube_owner is not None and self.cube_owner != self.turn:
            return f"player {self.cube_owner} owns the cube"
        if not self.rules.allows(self.cube_value * 2):
            return f"the cube is capped at {self.rules.max_cube}"
        if live and self.cube_dead(self.turn):
            return (f"the cube is dead: a win at {self.cube_value} already wins player "
                    f"{self.turn} the {self.match_length}-point match")
        return None

    def can_double(self, live: bool = False) -> bool:
        """May the player on roll double now?  With ``live``, only if the cube
        is also not dead for them (:meth:`cube_dead`): what a game offers a
        player to do."""
        return self.why_no_double(live) is None

    def can_beaver(self) -> bool:
        return (self.phase == Phase.DOUBLED and self.is_money and self.rules.beaver
                and self.rules.allows(self.cube_value * 4))

    def can_raccoon(self) -> bool:
        return (self.phase == Phase.BEAVERED and self.rules.raccoon
                and self.rules.allows(self.cube_value * 2))

    def legal_plays(self) -> list[Play]:
        """The legal plays for the rolled dice (phase MOVE, or a resignation
        offered after the roll)."""
        if self._plays is None:
            raise IllegalActionError(f"no dice to play (phase {self.phase.value})")
        return list(self._plays)

    def resignation_points(self, kind) -> int:
        """The points a resignation of ``kind`` (1, 2, 3) would score now:
        kind x cube, or the cube alone while the Jacoby rule holds."""
        counted = ResultKind.SINGLE if self.jacoby_active else ResultKind(int(kind))
        return int(counted) * self.cube_value

    # -- helpers --------------------------------------------------------------
    def _need(self, phase, player=None, what="that"):
        phases = phase if isinstance(phase, tuple) else (phase,)
        if self.phase not in phases:
            raise IllegalActionError(f"cannot {what} now: the game is in phase {self.phase.value}")
        if player is not None and player != self.to_act:
            raise IllegalActionError(f"cannot {what}: it is player {self.to_act}'s decision, "
                                     f"not player {player}'s")

    def _record(self, action: Action) -> None:
        self.actions.append(action)

    def _finish(self, winner: int, kind: ResultKind, how: str, cube: int | None = None) -> None:
        # like gnubg: the turn ends with whoever answered last (the acceptor of a
        # resignation, the dropper of a double) or, after the last checker is
        # borne off, with the loser on roll
        self._last_to_act = self.to_act if how != "bearoff" else 1 - winner
        if how == "bearoff":
            self.turn = 1 - winner
        cube = self.cube_value if cube is None else cube
        counted = ResultKind.SINGLE if (how != "drop" and self.jacoby_active) else kind
        self.result = GameResult(winner, counted, int(counted) * cube, cube, how)
        self.phase = Phase.OVER
        self.dice = None
        self._plays = None

    def _draw(self) -> tuple[int, int]:
        d = self.rng.integers(1, 7, size=2)
        return int(d[0]), int(d[1])

    # -- the opening ---------------------------------------------------------
    def opening_roll(self, dice=None) -> tuple[int, int]:
        """One opening throw: one die each, ``dice`` = (player 0's, player 1's).

        Equal dice are thrown again (in money play with automatic doubles
        each equal throw doubles the centred cube, up to the agreed number
        and the cap).  With unequal dice the higher die starts and plays both
        numbers, or with ``rules.opening_reroll`` rolls two dice afresh.
        Returns the throw.
        """
        self._need(Phase.OPENING, what="make the opening roll")
        d0, d1 = self._draw() if dice is None else check_dice(*dice)
        self._record(Action("opening", -1, dice=(d0, d1)))
        if d0 == d1:
            if (self.is_money and self.rules.cube and self.auto_doubles < self.rules.auto_doubles
                    and self.rules.allows(self.cube_value * 2)):
                self.auto_doubles += 1
                self.cube_value *= 2
            return d0, d1
        self.turn = 0 if d0 > d1 else 1
        self._first_turn = True
        if self.rules.opening_reroll:
            self.phase = Phase.ROLL
        else:
            self._set_dice((max(d0, d1), min(d0, d1)))
        return d0, d1

    def start(self) -> None:
        """Throw opening dice until the game has a starter."""
        while self.phase == Phase.OPENING:
            self.opening_roll()

    # -- rolling and moving ----------------------------------------------------
    def _set_dice(self, dice) -> None:
        self.dice = dice
        self._plays = legal_plays(self.position(), dice[0], dice[1])
        self.phase = Phase.MOVE
        if not self._plays:  # the roll cannot be played: the turn is lost
            self._record(Action("move", self.turn, moves=()))
            self._next_turn()

    def roll(self, dice=None) -> tuple[int, int]:
        """Roll for the player on roll (``dice`` given, e.g. when replaying).

        If the roll cannot be played the empty play is recorded and the turn
        passes at once.  Returns the dice.
        """
        self._need((Phase.ROLL, Phase.BEAVERED), what="roll")
        d = self._draw() if dice is None else check_dice(*dice)
        d = (max(d), min(d))  # recorded high die first, as gnubg writes rolls
        self._record(Action("roll", self.turn, dice=d))
        self._set_dice(d)
        return d

    def _next_turn(self) -> None:
        self.turn = 1 - self.turn
        self.dice = None
        self._plays = None
        self._first_turn = False
        self.phase = Phase.ROLL

    def find_play(self, play) -> Play:
        """The legal :class:`Play` meant by ``play``: a Play, a Position (the
        result, opponent on roll), gnubg notation, or (from, to) moves."""
        self._need(Phase.MOVE, what="play")
        plays = self._plays
        board = self.board_of(self.turn)
        if isinstance(play, Play):
            target = play.position
        elif isinstance(play, Position):
            target = play
        elif isinstance(play, str):
            return match_play(board, play, plays)
        else:
            try:
                moves = tuple((int(a), int(b)) for a, b in play)
            except (TypeError, ValueError):
                raise InvalidMoveError(f"cannot read a play from {play!r}") from None
            target = Position(apply_moves(board, moves)[::-1])
        for p in plays:
            if p.position == target:
                return p
        raise InvalidMoveError(f"that is not a legal play for {self.dice[0]}-{self.dice[1]}")

    def play(self, play) -> Play:
        """Play the rolled dice (see :meth:`find_play`); returns the Play made."""
        self._need(Phase.MOVE, what="play")
        chosen = self.find_play(play)
        mover = self.turn
        self._record(Action("move", mover, moves=chosen.moves))
        after = chosen.position.board  # opponent on roll: row 1 = opponent
        self._rows[mover] = after[0].copy()
        self._rows[1 - mover] = after[1].copy()
        if int(self._rows[mover].sum()) == 0:
            self._finish(mover, _kind_against(self._rows[1 - mover]), "bearoff")
        else:
            self._next_turn()
        return chosen

    # -- the cube ---------------------------------------------------------------
    def double(self) -> int:
        """The player on roll doubles (before rolling).  Returns the offered value."""
        self._need(Phase.ROLL, what="double")
        why = self.why_no_double(live=False)
        if why is not None:
            raise IllegalActionError(f"player {self.turn} cannot double: {why}")
        self._record(Action("double", self.turn, value=self.cube_value * 2))
        self.phase = Phase.DOUBLED
        return self.cube_value * 2

    def take(self) -> None:
        """The doubled player takes: the cube doubles and goes to them."""
        self._need(Phase.DOUBLED, what="take")
        taker = 1 - self.turn
        self._record(Action("take", taker))
        self.cube_value *= 2
        self.cube_owner = taker
        self.phase = Phase.ROLL

    def drop(self) -> None:
        """The doubled player passes: the doubler wins a single game at the
        cube value before the double (gammons do not count)."""
        self._need(Phase.DOUBLED, what="drop")
        self._record(Action("drop", 1 - self.turn))
        self._finish(self.turn, ResultKind.SINGLE, "drop")

    pass_ = drop

    def beaver(self) -> int:
        """The doubled player takes and at once redoubles, keeping the cube
        (money play, ``rules.beaver``).  Returns the new cube value."""
        self._need(Phase.DOUBLED, what="beaver")
        if not self.can_beaver():
            why = ("beavers are for money play only" if not self.is_money else
                   "beavers are not allowed" if not self.rules.beaver else
                   f"the cube is capped at {self.rules.max_cube}")
            raise IllegalActionError(f"cannot beaver: {why}")
        who = 1 - self.turn
        self.cube_value *= 4
        self.cube_owner = who
        self._record(Action("beaver", who, value=self.cube_value))
        self.phase = Phase.BEAVERED if self.rules.raccoon else Phase.ROLL
        return self.cube_value

    def raccoon(self) -> int:
        """After a beaver, the doubler redoubles again, keeping the cube."""
        self._need(Phase.BEAVERED, what="raccoon")
        if not self.can_raccoon():
            raise IllegalActionError(f"cannot raccoon: the cube is capped at {self.rules.max_cube}")
        self.cube_value *= 2
        self.cube_owner = self.turn
        self._record(Action("raccoon", self.turn, value=self.cube_value))
        self.phase = Phase.ROLL
        return self.cube_value

    # -- resignations -------------------------------------------------------------
    def resign(self, kind=ResultKind.SINGLE, player: int | None = None) -> None:
        """``player`` (default: the one on roll) offers to resign a single
        game, gammon or backgammon (1, 2, 3); the opponent accepts or rejects."""
        self._need((Phase.ROLL, Phase.MOVE, Phase.BEAVERED), what="resign")
        try:
            kind = ResultKind(int(kind))
        except (TypeError, ValueError):
            raise IllegalActionError(f"a resignation is 1 (single), 2 (gammon) or "
                                     f"3 (backgammon), not {kind!r}") from None
        who = self.turn if player is None else player
        if who not in (0, 1):
            raise IllegalActionError(f"player must be 0 or 1, not {who!r}")
        self._record(Action("resign", who, value=int(kind)))
        self._resign_offer = (who, kind)
        self._phase_before_resign = self.phase
        self.phase = Phase.RESIGNED

    def accept(self) -> None:
        """Accept the resignation: the opponent wins the offered result x cube."""
        self._need(Phase.RESIGNED, what="accept a resignation")
        who, kind = self._resign_offer
        self._record(Action("accept", 1 - who))
        self._finish(1 - who, kind, "resign")

    def reject(self) -> None:
        """Reject the resignation: play goes on where it stopped."""
        self._need(Phase.RESIGNED, what="reject a resignation")
        who, _kind = self._resign_offer
        self._record(Action("reject", 1 - who))
        self.phase = self._phase_before_resign
        self._resign_offer = None

    # -- replay ---------------------------------------------------------------------
    def apply(self, action: Action) -> None:
        """Apply a recorded action (with its dice) -- used to replay records."""
        k = action.kind
        if k not in ("opening", "move", "resign") and action.player != self.to_act:
            raise IllegalActionError(f"{k} by player {action.player}, but player "
                                     f"{self.to_act} is to act")
        if k == "opening":
            self.opening_roll(action.dice)
        elif k == "roll":
            before = len(self.actions)
            self.roll(action.dice)
            if len(self.actions) > before + 1:  # the turn was lost: the empty move is recorded
                self._pending_auto_move = True
        elif k == "move":
            if self._pending_auto_move:
                self._pending_auto_move = False
                if action.moves:
                    raise InvalidMoveError("a play is recorded for a roll that cannot be played")
                return
            if action.player != self.turn:
                raise IllegalActionError(f"move by player {action.player}, but player "
                                         f"{self.turn} is on roll")
            self.play(action.moves)
        elif k in ("double", "beaver", "raccoon"):
            value = getattr(self, k)()
            if action.value is not None and action.value != value:
                raise InvalidRecordError(f"{k} to {action.value} recorded, but the cube "
                                         f"goes to {value}")
        elif k == "take":
            self.take()
        elif k == "drop":
            self.drop()
        elif k == "resign":
            self.resign(action.value, action.player)
        elif k == "accept":
            self.accept()
        elif k == "reject":
            self.reject()
        else:  # pragma: no cover - Action.from_list checks kinds
            raise InvalidRecordError(f"unknown action {k!r}")

    @property
    def setup(self) -> dict:
        """How the game began: ``position`` (None: the opening position and
        the opening roll; else the Position ID it was set up from, seen from
        ``on_roll``), ``on_roll``, ``cube_value`` and ``cube_owner``."""
        return dict(self._start)

    def replay_start(self) -> "Game":
        """A new game as this one began (rules, score, Crawford flags, set-up
        position and cube), with no actions yet: apply this game's actions
        to it to walk through the game."""
        return Game(self.rules, match_length=self.match_length, score=self.score,
                    crawford=self.crawford, post_crawford=self.post_crawford,
                    **_start_from(self._start))

    # -- serialisation ----------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-serialisable dict: options, the starting state, every action and
        the dice generator state (so :meth:`from_dict` continues identically)."""
        return {"rules": self.rules.to_dict(), "match_length": self.match_length,
                "score": list(self.score), "crawford": self.crawford,
                "post_crawford": self.post_crawford, "start": dict(self._start),
                "actions": [a.to_list() for a in self.actions],
                "rng_state": self.rng.bit_generator.state}

    @classmethod
    def from_dict(cls, data: dict) -> "Game":
        """Rebuild a game from :meth:`to_dict` by replaying its actions;
        a record :meth:`to_dict` could not have written raises
        :class:`InvalidRecordError`."""
        _check_keys(data, "game", required=("actions",),
                    optional=("rules", "match_length", "score", "crawford", "post_crawford",
                              "start", "rng_state"))
        start = _start_from(data.get("start"))
        flags = [data.get("crawford", False), data.get("post_crawford", False)]
        if not all(isinstance(f, bool) for f in flags):
            raise InvalidRecordError("not a game record: crawford and post_crawford are "
                                     "true or false")
        actions = data["actions"]
        if not isinstance(actions, list):
            raise InvalidRecordError("not a game record: actions must be a list")
        try:
            g = cls(_rules_from(data.get("rules", {})), match_length=data.get("match_length", 0),
                    score=data.get("score", (0, 0)), crawford=flags[0], post_crawford=flags[1],
                    **start)
        except InvalidRecordError:
            raise
        except BgfastError as exc:
            raise InvalidRecordError(f"not a game record: {exc}") from None
        _replay(g, actions, "")
        if "rng_state" in data:
            _set_rng_state(g.rng, data["rng_state"])
        return g

    # -- IDs --------------------------------------------------------------------------
    def match_state(self) -> MatchState:
        """The state as a :class:`bgfast.formats.MatchState` (gnubg Match ID)."""
        owner = CubeOwner.CENTRED if self.cube_owner is None else CubeOwner(self.cube_owner)
        score = self.score
        if self.phase == Phase.OVER:
            s = list(score)
            s[self.result.winner] += self.result.points
            if self.match_length:  # MatchState refuses an overshooting score (gnubg writes it)
                s = [min(x, self.match_length) for x in s]
            score = tuple(s)
            state = {"bearoff": GameState.OVER, "drop": GameState.DROPPED,
                     "resign": GameState.RESIGNED}[self.result.how]
        elif self.phase == Phase.OPENING:
            state = GameState.NONE
        else:
            state = GameState.PLAYING
        # like gnubg, a finished game shows no Crawford flag (gnubg clears it
        # once the Crawford game is over)
        crawford = self.crawford and self.phase != Phase.OVER
        res = Resignation.NONE
        if self.phase == Phase.RESIGNED:
            res = Resignation(int(self._resign_offer[1]))
        elif self.phase == Phase.OVER and self.result.how == "resign":
            res = Resignation(int(self.result.kind))
        return MatchState(
            match_length=self.match_length, score=score, cube_value=self.cube_value,
            cube_owner=owner, player_on_roll=self.turn, turn=self.to_act,
            crawford=crawford, game_state=state,
            double_offered=self.phase == Phase.DOUBLED, resignation=res,
            dice=self.dice if self.phase == Phase.MOVE else None,
            jacoby=self.is_money and self.rules.jacoby)

    def match_id(self) -> str:
        """gnubg Match ID of the current state."""
        return self.match_state().match_id()

    def position_id(self) -> str:
        """gnubg Position ID (seen from the player on roll)."""
        return self.position().position_id()

    def xgid(self) -> str:
        """XGID of the current state (a game in play; player 1 at the bottom)."""
        if self.phase in (Phase.OVER, Phase.RESIGNED):
            raise IllegalActionError("an XGID describes a game in play, not a finished game "
                                     "or a pending resignation")
        cap = self.rules.max_cube.bit_length() - 1 if self.rules.max_cube else 10
        return XGID.from_match_state(self.position(), self.match_state(),
                                     beaver=self.is_money and self.rules.beaver,
                                     max_cube=cap).format()

    def __repr__(self):
        return (f"<Game phase={self.phase.value} turn={self.turn} dice={self.dice} "
                f"cube={self.cube_value}@{self.cube_owner} {self.position_id()}:{self.match_id()}>")


# ---------------------------------------------------------------------------
# matches and money sessions
# ---------------------------------------------------------------------------

class Match:
    """A match to ``length`` points, or a money session when ``length`` is 0.

    ``match.new_game()`` starts the next game with the right cube rules
    (Crawford game, post-Crawford); the running :attr:`score` adds up every
    finished game.  A match ends when a side reaches ``length`` or more; a
    money session never ends by itself.
    """

    def __init__(self, length: int = 0, rules: Rules | None = None, *, seed=None,
                 names=("Player 0", "Player 1")):
        self.rules = rules if rules is not None else Rules()
        if not isinstance(self.rules, Rules):
            raise BgfastError(f"rules must be a Rules, not {quote(rules)}")
        self.length = _check_length(length)
        self.rules.check_for_match(self.length)
        self.names = _check_names(names)
        self.seed = seed
        self.rng = _generator(seed)
        self.games: list[Game] = []

    @property
    def is_money(self) -> bool:
        return self.length == 0

    @property
    def game(self) -> Game | None:
        """The latest game (None before the first)."""
        return self.games[-1] if self.games else None

    def _score_after(self, n: int) -> tuple[int, int]:
        s = [0, 0]
        for g in self.games[:n]:
            if g.result is not None:
                s[g.result.winner] += g.result.points
        return s[0], s[1]

    @property
    def score(self) -> tuple[int, int]:
        """Points won so far (finished games only), player 0 first."""
        return self._score_after(len(self.games))

    @property
    def over(self) -> bool:
        return bool(self.length) and max(self.score) >= self.length

    @property
    def winner(self) -> int | None:
        if not self.over:
            return None
        s = self.score
        return 0 if s[0] >= self.length else 1

    def next_is_crawford(self) -> bool:
        """Is the next game the Crawford game?

        It is the game right after the first game that brought a side to
        match point (length - 1); there is exactly one.
        """
        if not self.length or not self.rules.crawford or not self.games:
            return False
        before = self._score_after(len(self.games) - 1)
        after = self.score
        mp = self.length - 1
        return max(before) < mp <= max(after) < self.length

    def new_game(self, *, position=None, on_roll: int = 0, cube_value: int = 1,
                 cube_owner: int | None = None) -> Game:
        """Start the next game (the previous one must be over); from the
        opening, or set up from ``position`` (seen from ``on_roll``, who
        rolls first) with the cube at ``cube_value`` owned by
        ``cube_owner`` (None: centred), as :class:`Game` takes them."""
        if self.games and not self.games[-1].over:
            raise IllegalActionError("the current game is not over yet")
        if self.over:
            raise IllegalActionError(f"the match is over: player {self.winner} won")
        g = Game(self.rules, match_length=self.length, score=self.score,
                 crawford=self.next_is_crawford(), rng=self.rng,
                 post_crawford=any(x.crawford for x in self.games), position=position,
                 on_roll=on_roll, cube_value=cube_value, cube_owner=cube_owner)
        self.games.append(g)
        return g

    # -- serialisation ------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-serialisable dict: rules, names, every action and the dice
        generator state; ``starts`` (one per game) when a game was set up
        from a position."""
        out = {
            "length": self.length,
            "rules": self.rules.to_dict(),
            "names": list(self.names),
            "seed": self.seed if isinstance(self.seed, (int, type(None))) else None,
            "games": [[a.to_list() for a in g.actions] for g in self.games],
            "rng_state": self.rng.bit_generator.state,
        }
        if any(g.setup["position"] is not None for g in self.games):
            out["starts"] = [g.setup for g in self.games]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Match":
        """Rebuild a match from :meth:`to_dict` by replaying every action.

        Anything :meth:`to_dict` could not have written (other keys, types
        or values, an illegal action, a dice generator state numpy would
        not produce) raises :class:`InvalidRecordError`."""
        _check_keys(data, "match", required=("games",),
                    optional=("length", "rules", "names", "seed", "rng_state", "starts"))
        seed = data.get("seed")
        if seed is not None and not (_is_int(seed) and seed >= 0):
            raise InvalidRecordError(f"not a match record: seed {quote(seed)} is not a "
                                     "non-negative integer")
        games = data["games"]
        if not isinstance(games, list) or not all(isinstance(g, list) for g in games):
            raise InvalidRecordError("not a match record: games must be a list of action lists")
        try:
            m = cls(data.get("length", 0), _rules_from(data.get("rules", {})), seed=seed,
                    names=data.get("names", ("Player 0", "Player 1")))
        except InvalidRecordError:
            raise
        except BgfastError as exc:
            raise InvalidRecordError(f"not a match record: {exc}") from None
        starts = data.get("starts", [None] * len(games))
        if not isinstance(starts, list) or len(starts) != len(games):
            raise InvalidRecordError("not a match record: starts must be a list with one "
                                     "entry per game")
        for i, actions in enumerate(games):
            try:
                game = m.new_game(**_start_from(starts[i]))
            except InvalidRecordError as exc:
                raise InvalidRecordError(f"game {i + 1}: {exc}") from None
            except BgfastError as exc:
                raise InvalidRecordError(f"game {i + 1}: {exc}") from None
            _replay(game, actions, f"game {i + 1}, ")
        if "rng_state" in data:
            _set_rng_state(m.rng, data["rng_state"])
        return m


def _start_from(start) -> dict:
    """The keywords of :class:`Game` for a saved :attr:`Game.setup` (None:
    the opening)."""
    start = start or {}
    _check_keys(start, "game start", optional=("position", "on_roll", "cube_value",
                                               "cube_owner"))
    pos = start.get("position")
    if pos is not None and not isinstance(pos, str):
        raise InvalidRecordError(f"start position {quote(pos)} is not a Position ID")
    try:
        position = None if pos is None else Position.from_position_id(pos)
    except BgfastError as exc:
        raise InvalidRecordError(f"start position: {exc}") from None
    return {"position": position, "on_roll": start.get("on_roll", 0),
            "cube_value": start.get("cube_value", 1), "cube_owner": start.get("cube_owner")}


def _check_keys(data, what: str, required=(), optional=()) -> None:
    """Refuse a record that is not a dict with string keys among
    ``required`` + ``optional`` (all of ``required`` present)."""
    if not isinstance(data, dict):
        raise InvalidRecordError(f"not a {what} record: a JSON object is needed, "
                                 f"not {type(data).__name__}")
    extra = [k for k in data if k not in required and k not in optional]
    if extra:
        raise InvalidRecordError(f"not a {what} record: unknown field {quote(extra[0])}")
    missing = [k for k in required if k not in data]
    if missing:
        raise InvalidRecordError(f"not a {what} record: field {missing[0]!r} is missing")


def _rules_from(data) -> Rules:
    if not isinstance(data, dict):
        raise InvalidRecordError(f"rules must be a JSON object, not {quote(data)}")
    names = {f.name for f in fields(Rules)}
    for k in data:
        if k not in names:
            raise InvalidRecordError(f"unknown rule {quote(k)}")
    try:
        return Rules(**data)
    except BgfastError as exc:
        raise InvalidRecordError(str(exc)) from None


_U128 = 1 << 128


def _set_rng_state(rng: np.random.Generator, state) -> None:
    """Set ``rng`` (a PCG64 generator) to ``state``, a saved
    ``bit_generator.state``; refuse (:class:`InvalidRecordError`) a state
    PCG64 never takes: another generator, numbers out of range, or an even
    increment (PCG64's increment is always odd; ``inc`` 0 with ``state`` 0
    would give the same number forever)."""
    ok = (isinstance(state, dict)
          and set(state) == {"bit_generator", "state", "has_uint32", "uinteger"}
          and state["bit_generator"] == "PCG64"
          and isinstance(state["state"], dict) and set(state["state"]) == {"state", "inc"}
          and all(_is_int(v) and 0 <= v < _U128 for v in state["state"].values())
          and state["state"]["inc"] % 2 == 1
          and _is_int(state["has_uint32"]) and state["has_uint32"] in (0, 1)
          and _is_int(state["uinteger"]) and 0 <= state["uinteger"] < 1 << 32)
    if not ok:
        raise InvalidRecordError(f"rng_state {quote(state)} is not a state of the "
                                 "PCG64 dice generator")
    try:
        rng.bit_generator.state = state
    except (TypeError, ValueError) as exc:  # pragma: no cover - the checks above cover numpy's
        raise InvalidRecordError(f"rng_state cannot be restored: {exc}") from None


def _replay(game: Game, actions, where: str) -> None:
    """Apply recorded actions (lists, as ``Action.to_list`` writes them) to
    ``game``; a bad one raises InvalidRecordError naming it (``where``
    prefixes the message, e.g. ``"game 2, "``)."""
    for j, raw in enumerate(actions):
        try:
            game.apply(Action.from_list(raw))
        except BgfastError as exc:
            raise InvalidRecordError(f"{where}action {j + 1} {quote(raw)}: {exc}") from None


def money_session(rules: Rules | None = None, *, seed=None, names=("Player 0", "Player 1")) -> Match:
    """A money session (a :class:`Match` of length 0) with a running score."""
    return Match(0, rules, seed=seed, names=names)


# ---------------------------------------------------------------------------
# entering a play step by step (for people): partial moves and take-backs
# ---------------------------------------------------------------------------

def _single_steps(me: np.ndarray, opp: np.ndarray, die: int):
    """Single-die checker moves (from, to) for ``me`` (rows in own numbering)."""
    if me[24]:
        t = 25 - die
        return [(25, t)] if opp[24 - t] < 2 else []
    out = []
    home = not me[6:25].any()
    for p in range(24, 0, -1):
        if not me[p - 1]:
            continue
        t = p - die
        if t >= 1:
            if opp[24 - t] < 2:
                out.append((p, t))
        elif home and (t == 0 or not me[p:24].any()):
            out.append((p, 0))
    return out


def _step(me: np.ndarray, opp: np.ndarray, a: int, t: int):
    me, opp = me.copy(), opp.copy()
    me[24 if a == 25 else a - 1] -= 1
    if t:
        if opp[24 - t] == 1:
            opp[24 - t] = 0
            opp[24] += 1
        me[t - 1] += 1
    return me, opp


class PartialPlay:
    """Build the play of a :class:`Game` in phase MOVE one checker move at a
    time, taking moves back while dice are left.

    :meth:`move` takes gnubg notation for part of the play (``13/7``,
    ``bar/22*``, ``24/18(2)``); a move is accepted only if the play can
    still be completed to a legal play.  :attr:`complete` is the finished
    :class:`Play` once every usable die is used (then ``game.play`` it).
    """

    def __init__(self, game: Game):
        if game.phase != Phase.MOVE:
            raise IllegalActionError("there is no roll to play")
        self.game = game
        d1, d2 = game.dice
        pool = (d1,) * 4 if d1 == d2 else (d1, d2)
        b = game.board_of(game.turn)
        self._start = (b[1].copy(), b[0].copy(), pool)
        self._stack = [self._start]
        self._steps: list[tuple[int, int]] = []
        self._finals = {p.position.key: p for p in game.legal_plays()}
        self._memo: dict = {}

    @property
    def dice_left(self) -> tuple:
        return self._stack[-1][2]

    @property
    def steps(self) -> tuple:
        """The single-die moves entered so far."""
        return tuple(self._steps)

    def board(self) -> np.ndarray:
        """The board after the moves entered so far (the mover in row 1)."""
        me, opp, _pool = self._stack[-1]
        return np.stack([opp, me])

    def _key(self, me, opp) -> bytes:
        return Position(np.stack([me, opp])).key  # after the play: opponent on roll

    @property
    def complete(self) -> Play | None:
        me, opp, _pool = self._stack[-1]
        return self._finals.get(self._key(me, opp))

    def _completable(self, me, opp, pool) -> bool:
        if self._key(me, opp) in self._finals:
            return True
        memo_key = (me.tobytes(), opp.tobytes(), pool)
        if memo_key in self._memo:
            return self._memo[memo_key]
        ok = False
        for i, d in enumerate(pool):
            if d in pool[:i]:
                continue
            rest = pool[:i] + pool[i + 1:]
            for a, t in _single_steps(me, opp, d):
                if self._completable(*_step(me, opp, a, t), rest):
                    ok = True
                    break
            if ok:
                break
        self._memo[memo_key] = ok
        return ok

    def options(self) -> list[tuple[int, int, int]]:
        """(from, to, die) of every single move that keeps a legal play possible."""
        me, opp, pool = self._stack[-1]
        out = []
        for i, d in enumerate(pool):
            if d in pool[:i]:
                continue
            rest = pool[:i] + pool[i + 1:]
            for a, t in _single_steps(me, opp, d):
                if self._completable(*_step(me, opp, a, t), rest):
                    out.append((a, t, d))
        return out

    def move(self, text: str) -> None:
        """Enter part of the play in gnubg notation (moves in any order);
        refuses (InvalidMoveError, nothing changed) a move that cannot lead
        to a legal play.  The written segments are split into single-die
        steps by :func:`bgfast.formats.expand_steps`, each step keeping a
        legal play possible."""
        me, opp, pool = self._stack[-1]
        segments = parse_play(np.stack([opp, me]), text)
        if not segments:
            raise InvalidMoveError("no move given")
        steps = expand_steps(np.stack([opp, me]), segments, pool, accept=self._completable)
        if steps is None:
            d1, d2 = self.game.dice
            raise InvalidMoveError(f"{text.strip()!r} is not part of a legal play for {d1}-{d2}")
        for a, t, d in steps:
            me, opp = _step(me, opp, a, t)
            i = pool.index(d)
            pool = pool[:i] + pool[i + 1:]
            self._stack.append((me, opp, pool))
            self._steps.append((a, t))

    def undo(self) -> bool:
        """Take back the last single move; False if nothing was entered."""
        if not self._steps:
            return False
        self._stack.pop()
        self._steps.pop()
        return True

    def reset(self) -> None:
        self._stack = [self._start]
        self._steps = []
