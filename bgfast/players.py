"""Players: the interface the terminal game, rollouts and analysis drive.

A player answers four questions about a :class:`bgfast.game.Game` (seen
from the player whose decision it is):

* :meth:`Player.choose_play` -- which of the legal plays to make;
* :meth:`Player.wants_to_double` -- double now (before rolling)?
* :meth:`Player.respond_to_double` -- ``"take"``, ``"drop"`` or ``"beaver"``;
* :meth:`Player.accepts_resignation` -- accept an offered result?

(and two optional ones with safe defaults: :meth:`Player.wants_to_raccoon`
and :meth:`Player.wants_to_resign`).

Shipped players:

* :class:`Beginner` -- a random legal play; never doubles, always takes (as
  in the reference app).
* :class:`Heuristic` -- a one-ply hand-written evaluation (race, blots in
  reach of a shot, points and primes, the bar, the bear-off) with a simple
  cube strategy.
* :class:`LevelPlayer` -- a computer level of :mod:`bgfast.levels` (Beginner
  to Expert, pubeval, a net file), with cube and resignation decisions
  through the cube layer (:func:`make_player`, :func:`make_level_player`).

:func:`play_game` and :func:`play_match` run games between two players.
"""
from __future__ import annotations

import abc
from typing import TYPE_CHECKING

import numpy as np

from .errors import BgfastError
from .game import Game, Match, Phase, ResultKind, max_result, result_kind
from .movegen import Play, count_shots
from .position import Position, PositionClass, classify_boards

if TYPE_CHECKING:
    from .levels import Level

__all__ = ["Player", "Beginner", "Heuristic", "play_game", "play_match",
           "heuristic_scores", "win_estimate", "PLAYERS", "make_player", "worth",
           "clear_resignation", "RESIGN_EPS", "LevelPlayer", "make_level_player",
           "result_value", "NET_LEVELS"]


class Player(abc.ABC):
    """Base class: a player must choose plays; the cube and resignation
    decisions have sensible defaults to override.  ``name`` is shown in records."""

    name = "player"

    @abc.abstractmethod
    def choose_play(self, game: Game, plays: list[Play]) -> Play:
        """The play to make, one of ``plays`` (never empty)."""

    def wants_to_double(self, game: Game) -> bool:
        return False

    def respond_to_double(self, game: Game) -> str:
        return "take"

    def wants_to_raccoon(self, game: Game) -> bool:
        return False

    def accepts_resignation(self, game: Game, kind: ResultKind) -> bool:
        """Default: accept when the offer is worth as much as the most the
        resigner can still lose, counted at the score: in a match, points
        beyond what the acceptor needs count for nothing, so an offer that
        wins the match is always accepted."""
        loser = game.resignation_offer[0] if game.resignation_offer else 1 - game.to_act
        most = max_result(game.board_of(loser), 1)
        return (worth(game, 1 - loser, game.resignation_points(kind))
                >= worth(game, 1 - loser, game.resignation_points(most)))

    def wants_to_resign(self, game: Game) -> int:
        """0 for no, else the result (1, 2, 3) to offer.  Default: never."""
        return 0


def worth(game: Game, player: int, points: int) -> int:
    """``points`` won by ``player``, counted at the score: in a match, no
    more than ``player`` still needs."""
    if game.match_length:
        return min(points, game.match_length - game.score[player])
    return points


#: Below this probability an outcome does not count when a player decides
#: whether a game is lost beyond doubt (:func:`clear_resignation`).
RESIGN_EPS = 1e-3


def clear_resignation(game: Game, player: int, probs) -> int:
    """The resignation (1, 2, 3) ``player`` can offer when the game is lost
    beyond doubt, else 0.

    ``probs`` are ``player``'s five cubeless probabilities (win, win gammon,
    win backgammon, lose gammon, lose backgammon; cumulative).  Lost beyond
    doubt: the chance of winning is at most :data:`RESIGN_EPS`, and every
    way of losing with more than that chance is worth the same to the
    opponent at the score (:func:`worth`: in a match the points beyond what
    the opponent needs do not count, and with the Jacoby rule in force every
    loss is a single game).  The offer is the least result of that worth.
    """
    w, _wg, _wb, lg, lb = (float(x) for x in probs)
    if w > RESIGN_EPS:
        return 0
    opp = 1 - player
    value = {k: worth(game, opp, game.resignation_points(k)) for k in (1, 2, 3)}
    chances = {1: 1.0 - lg, 2: lg - lb, 3: lb}
    likely = {value[k] for k in (1, 2, 3) if chances[k] > RESIGN_EPS}
    if len(likely) != 1:
        return 0
    v = likely.pop()
    return min(k for k in (1, 2, 3) if value[k] == v)


class Beginner(Player):
    """A random legal play; never doubles and always takes."""

    name = "Beginner"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def choose_play(self, game, plays):
        return plays[int(self.rng.integers(len(plays)))]


# ---------------------------------------------------------------------------
# the heuristic
# ---------------------------------------------------------------------------

def _longest_run(made: np.ndarray) -> np.ndarray:
    """Longest run of True along the last axis (vectorised over rows)."""
    run = np.zeros(made.shape[:-1], dtype=np.int64)
    best = np.zeros_like(run)
    for i in range(made.shape[-1]):
        run = np.where(made[..., i], run + 1, 0)
        best = np.maximum(best, run)
    return best


def heuristic_scores(boards) -> np.ndarray:
    """Scores of ``uint8[N, 2, 25]`` boards for the side in row 0 (the side
    that just moved; row 1 is on roll), higher = better for row 0.

    Terms: pip difference; blots weighted by how many rolls hit them
    (counted by the move generator); made points in the home board and
    anchors; the longest prime; checkers on the bar; checkers borne off.
    """
    b = np.asarray(boards, dtype=np.int64)
    me, opp = b[:, 0], b[:, 1]
    w = np.arange(1, 26)
    pips_me, pips_opp = me @ w, opp @ w

    def structure(side, behind):
        made = side[:, :24] >= 2
        home_points = made[:, :6].sum(axis=1)
        prime = _longest_run(made[:, :18])
        anchors = made[:, 18:24].sum(axis=1)
        return 3.0 * home_points + 2.5 * prime + 2.0 * anchors * behind

    blot_me = me[:, :24] == 1
    blots_me = blot_me.sum(axis=1)
    blots_opp = (opp[:, :24] == 1).sum(axis=1)
    # a blot on point p that is hit loses 25 - p pips; weigh the shots by the worst loss
    worst_loss = np.where(blot_me, 25 - np.arange(1, 25), 0).max(axis=1)
    shots = count_shots(np.asarray(boards, dtype=np.uint8), validate=False)
    off_me, off_opp = 15 - me.sum(axis=1), 15 - opp.sum(axis=1)
    contact = classify_boards(np.asarray(boards, dtype=np.uint8)) == 3
    score = (pips_opp - pips_me) * 1.0
    score += contact * (structure(me, pips_me > pips_opp) - structure(opp, pips_opp > pips_me)
                        - 0.5 * blots_me + 0.25 * blots_opp
                        - shots / 36.0 * worst_loss * 0.6
                        + 6.0 * opp[:, 24] - 6.0 * me[:, 24])
    score += ~contact * (2.0 * off_me - 2.0 * off_opp)
    return score


def win_estimate(position: Position) -> float:
    """A rough probability that the side ON ROLL wins (race formula with
    the heuristic's terms added), used for cube decisions."""
    b = position.board
    swapped = b[::-1][None]  # put the side on roll in row 0 for heuristic_scores
    s = float(heuristic_scores(swapped)[0])
    pips_me, pips_opp = position.pip_count()
    total = max(pips_me + pips_opp, 1)
    # the side on roll is worth about 4 pips at the start of a race
    lead = (s + 4.0) / (0.08 * total + 2.0)
    return float(1.0 / (1.0 + np.exp(-1.6 * lead)))


class Heuristic(Player):
    """A one-ply player with a hand-written evaluation and simple cube rules:
    doubles at about 70-85% estimated chances, takes at 25% or more."""

    name = "Heuristic"

    def __init__(self, double_window=(0.70, 0.86), take_point=0.25):
        self.double_window = double_window
        self.take_point = take_point

    def choose_play(self, game, plays):
        boards = np.stack([p.position.board for p in plays])
        scores = heuristic_scores(boards)
        return plays[int(np.argmax(scores))]

    def wants_to_double(self, game):
        p = win_estimate(game.position())
        lo, hi = self.double_window
        return lo <= p < hi

    def respond_to_double(self, game):
        p = 1.0 - win_estimate(game.position())  # the doubler is on roll
        if game.can_beaver() and p > 0.55:
            return "beaver"
        return "take" if p >= self.take_point else "drop"


PLAYERS = {"beginner": Beginner, "heuristic": Heuristic}


# ---------------------------------------------------------------------------
# the computer levels
# ---------------------------------------------------------------------------

class LevelPlayer(Player):
    """A computer level (:class:`bgfast.levels.Level`) as a player of the terminal game.

    Plays: the level's choice among the legal plays.  Cube (all but
    Beginner): at the game's cube, score, Crawford, Jacoby and beaver rules
    (:meth:`bgfast.cube.CubeContext.from_game`), by :meth:`decide`: a net
    level at 1 or 2 plies by the cubeful search at its plies
    (:func:`bgfast.evaluate.evaluate_cube`), a 0-ply net level by the cube
    model (:func:`bgfast.cube.cube_decision`) on the net's probabilities
    (pubeval: the composite evaluator's), with exact ones and exact cubeful
    money equities in two-sided bear-offs.  It doubles when the proper action doubles, passes
    a double that should be passed, beavers when beavering is right, and
    otherwise takes.  Resignations: it accepts one worth at least the
    position to it (:meth:`value`, at the score) and offers one when its
    game is lost beyond doubt.  Beginner never doubles, always takes and
    never resigns.
    """

    def __init__(self, level: Level | str, seed=None):
        from . import levels   # with the first level player: the CLI's start-up does without it

        self._levels = levels
        self.level = levels.get_level(level) if isinstance(level, str) else level
        self.name = self.level.name
        self.rng = np.random.default_rng(seed)

    def choose_play(self, game, plays):
        if len(plays) == 1:
            return plays[0]
        results = np.stack([p.position.board for p in plays])
        if self.level.kind == self._levels.RANDOM:
            return plays[int(self.rng.integers(len(plays)))]
        if self.level.kind == self._levels.PUBEVAL:
            from .evaluate import pubeval_score

            # pubeval scores with the weights of the position before the move
            contact = game.position().classify() == PositionClass.CONTACT
            return plays[int(np.argmax(pubeval_score(results, contact=contact)))]
        seed = int(self.rng.integers(2**63))
        return plays[self._levels.pick_result(self.level, results, seed)]

    def probabilities(self, position):
        """This level's cubeless probabilities for the player on roll and
        the two-sided table's exact cubeful money equities (None outside
        it), by :func:`bgfast.evaluate.sourced_probabilities` with the
        level's evaluator: the net at the level's plies (pubeval: the
        composite evaluator)."""
        from .evaluate import get_evaluator, sourced_probabilities

        if self.level.kind == self._levels.NET:
            ev, plies = self.level.net, self.level.plies
        else:
            ev, plies = get_evaluator("composite"), 0
        got = sourced_probabilities(position.board[None], plies, ev)
        exact = got.exact_money[0]
        return got.probs[0], (exact if np.isfinite(exact).all() else None)

    def decide(self, position, context):
        """The :class:`bgfast.cube.CubeDecision` of the player on roll in
        ``position`` at the :class:`bgfast.cube.CubeContext` ``context``, by
        this level: a net level at n plies by the n-ply cubeful search
        (:func:`bgfast.evaluate.evaluate_cube`), the others by the cube
        model on :meth:`probabilities`."""
        if self.level.kind == self._levels.NET and self.level.plies:
            from .evaluate import evaluate_cube

            return evaluate_cube(position, context, plies=self.level.plies,
                                 evaluator=self._evaluator())
        from .cube import decide_cube

        probs, exact = self.probabilities(position)
        return decide_cube(position, context, probs, exact)

    def _evaluator(self):
        """The level's net as a 0-ply :class:`bgfast.evaluate.Evaluator` (made once)."""
        ev = getattr(self, "_net_evaluator", None)
        if ev is None:
            from .net import NetEvaluator

            ev = self._net_evaluator = NetEvaluator(self.level.net)
        return ev

    def cube_decision(self, game):
        """The cube decision of the player on roll (the doubler while a
        double is offered), by this level."""
        from .cube import CubeContext

        pos = game.position()            # the player on roll (the doubler) in row 1
        return self.decide(pos, CubeContext.from_game(game, game.turn))

    def wants_to_double(self, game):
        if self.level.kind == self._levels.RANDOM:
            return False
        return self.cube_decision(game).action.doubles

    def respond_to_double(self, game):
        if self.level.kind == self._levels.RANDOM:
            return "take"
        dec = self.cube_decision(game)
        if dec.action.takes is False:
            return "drop"
        if dec.beaver and game.can_beaver():
            return "beaver"
        return "take"

    # -- resignations -------------------------------------------------------------
    def value(self, game, player: int) -> float:
        """What the game is worth to ``player`` by this level, with the cube:
        the cubeful equity in points (equity per cube x cube) for money, the
        match winning chance at a match score.

        Before a roll it is the cube decision of the player on roll (doubling
        if the level would and the cube is theirs); after a roll, that of the
        opponent after this level's play of the dice (or the result, if the
        play ends the game).  A pending resignation is looked through.
        """
        from .cube import CubeContext

        if game.turn_phase == Phase.MOVE:
            mover = game.turn
            after = self.choose_play(game, game.legal_plays()).position
            finished = result_kind(after)   # row 0 = the mover, who may have borne off
            if finished is not None:
                return result_value(game, player, mover, game.resignation_points(finished[1]))
            roller, pos = 1 - mover, after
        else:
            roller, pos = game.turn, game.position(game.turn)
        dec = self.decide(pos, CubeContext.from_game(game, roller))
        doubles = game.cube_available(roller) and dec.action.doubles
        if game.is_money:
            v = (dec.best_equity if doubles else dec.no_double) * game.cube_value
            return v if player == roller else -v
        mwc = min(dec.mwc_double_take, dec.mwc_double_pass) if doubles else dec.mwc_no_double
        return mwc if player == roller else 1.0 - mwc

    def accepts_resignation(self, game, kind):
        """Accept when the offer is worth at least the position to this
        level (:meth:`value`: points for money, MWC at a match score), less
        what an outcome of :data:`RESIGN_EPS` could be worth
        (3 cubes in money, the whole match in MWC) -- the chances
        :func:`clear_resignation` ignores, so a level takes
        the resignations a level offers.  Beginner keeps the base rule."""
        if self.level.kind == self._levels.RANDOM:
            return super().accepts_resignation(game, kind)
        me = 1 - game.resignation_offer[0]
        offer = result_value(game, me, me, game.resignation_points(kind))
        slack = RESIGN_EPS * (3 * game.cube_value if game.is_money else 1.0)
        return offer >= self.value(game, me) - slack

    def wants_to_resign(self, game):
        """Offer a resignation when the game is lost beyond doubt by this
        level's probabilities (:func:`clear_resignation`).
        Beginner never resigns."""
        if self.level.kind == self._levels.RANDOM:
            return 0
        probs, _exact = self.probabilities(game.position(game.turn))
        return clear_resignation(game, game.turn, probs)


def result_value(game, player: int, winner: int, points: int) -> float:
    """What ``winner`` winning ``points`` in ``game`` is worth to ``player``:
    points (+ or -) for money, ``player``'s match winning chance after the
    game at a match score (by the default match equity table; the next game
    is the Crawford game when the result first brings a side to match point,
    else post-Crawford once a side is there)."""
    if game.is_money:
        return float(points if winner == player else -points)
    from .met import get_table

    n = game.match_length
    away = [n - game.score[player], n - game.score[1 - player]]
    away[0 if winner == player else 1] -= points
    a, b = away
    if a <= 0:
        return 1.0
    if b <= 0:
        return 0.0
    crawford_done = max(game.score) == n - 1 or not game.rules.crawford
    return get_table().mwc(a, b, post_crawford=crawford_done and (a == 1) != (b == 1))


def make_level_player(name: str, seed=None) -> "LevelPlayer":
    """A terminal-game player for a level name (see :func:`bgfast.levels.get_level`)."""
    return LevelPlayer(name, seed)


#: The computer levels of the reference app above Beginner (bgfast.levels, on the net).
NET_LEVELS = ("easy", "medium", "hard", "expert")


def make_player(name: str, seed=None) -> Player:
    """A player by name: ``beginner``, ``heuristic``, or a computer level
    ``easy``, ``medium``, ``hard``, ``expert`` (the shipped neural net)."""
    key = name.lower()
    if key in NET_LEVELS:
        return make_level_player(key, seed)
    if key not in PLAYERS:
        raise BgfastError(f"unknown player {name!r}; choose from "
                          f"{', '.join(list(PLAYERS) + list(NET_LEVELS))}")
    cls = PLAYERS[key]
    return cls(seed) if cls is Beginner else cls()


# ---------------------------------------------------------------------------
# driving games
# ---------------------------------------------------------------------------

def step(game: Game, players) -> None:
    """Let the player to act make one decision."""
    who = game.to_act
    pl = players[who]
    ph = game.phase
    if ph == Phase.OPENING:
        game.opening_roll()
    elif ph == Phase.ROLL:
        if game.can_double(live=True) and pl.wants_to_double(game):
            game.double()
            return
        kind = pl.wants_to_resign(game)
        if kind and not _offered(game, who, kind):
            game.resign(kind)
            return
        game.roll()
    elif ph == Phase.BEAVERED:
        if game.can_raccoon() and pl.wants_to_raccoon(game):
            game.raccoon()
        else:
            game.roll()
    elif ph == Phase.MOVE:
        game.play(pl.choose_play(game, game.legal_plays()))
    elif ph == Phase.DOUBLED:
        answer = pl.respond_to_double(game)
        if answer == "beaver" and game.can_beaver():
            game.beaver()
        elif answer in ("drop", "pass"):
            game.drop()
        else:
            game.take()
    elif ph == Phase.RESIGNED:
        _by, kind = game.resignation_offer
        game.accept() if pl.accepts_resignation(game, kind) else game.reject()


def _offered(game: Game, who: int, kind: int) -> bool:
    """Has ``who`` already offered ``kind`` (or less) this game?  (No repeats.)"""
    return any(a.kind == "resign" and a.player == who and a.value <= kind for a in game.actions)


def play_game(game: Game, players, *, max_actions: int = 100000) -> Game:
    """Play ``game`` to the end with ``players`` (a pair, player 0 first)."""
    n = 0
    while not game.over:
        step(game, players)
        n += 1
        if n > max_actions:  # pragma: no cover - a safety net, never reached in play
            raise RuntimeError("the game did not finish")
    return game


def play_match(match: Match, players, *, max_games: int | None = None) -> Match:
    """Play games of ``match`` until it is over (or ``max_games`` were played,
    which a money session needs)."""
    played = 0
    while not match.over and (max_games is None or played < max_games):
        if match.game is None or match.game.over:
            match.new_game()
        play_game(match.game, players)
        played += 1
    return match
