"""The five computer levels of the reference app, and the other duel players.

=========  ==========================================================
Beginner   a random legal play; never doubles, always takes
Easy       the net at 0-ply with Gaussian equity noise (std 0.25)
Medium     the net at 0-ply with Gaussian equity noise (std 0.06)
Hard       the net at 1-ply (looks at the opponent's 21 replies)
Expert     the net at 2-ply
=========  ==========================================================

All net levels use the exact bear-off databases in bear-off positions.
All levels but Beginner take their cube decisions through the cube layer
(:class:`LevelPlayer`).  A :class:`Level` is a plain description (kind,
plies, noise); the duel kernel plays it in C, the rollout kernel uses it as
a policy (``bgfast.rollout.LEVEL_POLICIES``), and :meth:`Level.choose_play`
plays it from Python.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import BgfastError
from .position import Position, as_board

__all__ = ["Level", "LEVELS", "LEVEL_NAMES", "get_level", "RANDOM", "PUBEVAL", "NET",
           "LevelPlayer", "make_level_player", "pick_result", "result_value"]

RANDOM, PUBEVAL, NET = 0, 1, 2


@dataclass
class Level:
    name: str
    kind: int
    plies: int = 0
    noise: float = 0.0
    weights: object = None        # None = the shipped net, else a path or bgfast.net.Net
    _net: object = field(default=None, repr=False, compare=False)

    @property
    def net(self):
        """The bgfast.net.Net this level plays with (net levels only)."""
        if self.kind != NET:
            return None
        if self._net is None:
            from . import net as netmod

            if self.weights is None:
                self._net = netmod.default_net()
            elif isinstance(self.weights, netmod.Net):
                self._net = self.weights
            else:
                self._net = netmod.load(self.weights)
        return self._net

    def spec(self):
        """The tuple the duel kernel takes."""
        return (self.kind, self.plies, self.noise, self.net.model if self.kind == NET else None)

    def choose_boards(self, boards, dice, seed: int = 0):
        """Plays for each (board, dice): ``(counts int64[N], results uint8[N,2,25])``."""
        from .position import as_boards

        b = as_boards(boards)
        d = np.ascontiguousarray(np.broadcast_to(np.asarray(dice, dtype=np.int64), (b.shape[0], 2)))
        if self.kind == NET:
            return self.net.choose(b, d, plies=self.plies, noise=self.noise, seed=seed)
        if self.kind == PUBEVAL:
            from .evaluate import get_evaluator

            return get_evaluator("pubeval").choose(b, d)
        from .movegen import legal_plays_batch

        offsets, results = legal_plays_batch(b, d)
        rng = np.random.default_rng(seed)
        out = b[:, ::-1, :].copy()
        counts = np.diff(offsets)
        for i in range(b.shape[0]):
            if counts[i]:
                out[i] = results[offsets[i] + int(rng.integers(counts[i]))]
        return counts, out

    def choose_play(self, position, d1: int, d2: int, seed: int = 0) -> Position:
        """The position after this level's play of (d1, d2) (opponent on roll)."""
        b = position.board if isinstance(position, Position) else as_board(position)
        _, res = self.choose_boards(b[None], [[d1, d2]], seed)
        return Position(res[0])


LEVEL_NAMES = ("beginner", "easy", "medium", "hard", "expert")


def _levels():
    return {
        "beginner": Level("Beginner", RANDOM),
        "easy": Level("Easy", NET, 0, 0.25),
        "medium": Level("Medium", NET, 0, 0.06),
        "hard": Level("Hard", NET, 1),
        "expert": Level("Expert", NET, 2),
        "pubeval": Level("pubeval", PUBEVAL),
        "net": Level("net", NET, 0),
        "net0": Level("net", NET, 0),
        "net1": Level("net 1-ply", NET, 1),
        "net2": Level("net 2-ply", NET, 2),
    }


LEVELS = _levels()


def get_level(name: str) -> Level:
    """A level or player by name (case-insensitive): the five levels,
    ``pubeval``, ``net``/``net0``/``net1``/``net2`` (the shipped net at n
    plies), or a weights file ``PATH.npz`` optionally followed by ``@PLIES``."""
    key = name.strip().lower()
    if key in LEVELS:
        return _levels()[key]
    path, _, plies = name.partition("@")
    if path.endswith(".npz"):
        try:
            p = int(plies) if plies else 0
        except ValueError:
            raise BgfastError(f"bad plies in player {name!r}") from None
        if not 0 <= p <= 3:
            raise BgfastError(f"plies must be 0..3 in player {name!r}")
        return Level(name, NET, p, 0.0, path)
    raise BgfastError(f"unknown player {name!r}; choose from {', '.join(LEVELS)}, gnubg, "
                      "or a weights file PATH.npz[@PLIES]")


def pick_result(level: Level, results, seed: int = 0) -> int:
    """Index of the play ``level`` makes among the candidate results
    ``uint8[N, 2, 25]`` of one roll: 0-ply with its noise, then its
    look-ahead on the best plays (the kernel's move filters,
    :func:`bgfast._net.move_filters`: the best 8 within 0.16 at 0-ply, then
    the best 5 within 0.10 at 1-ply)."""
    from . import _net
    from .evaluate import equity

    (n0, w0), (n1, w1) = _net.move_filters()
    net = level.net
    r = np.ascontiguousarray(results, dtype=np.uint8)
    eq = -equity(net.evaluate_batch(r))
    if level.noise > 0:
        eq = eq + level.noise * np.random.default_rng(seed).standard_normal(len(eq))
    keep = np.argsort(-eq, kind="stable")[:n0]
    keep = keep[eq[keep] >= eq[keep[0]] - w0]
    for lev in range(1, level.plies + 1):
        if len(keep) == 1:
            break
        eq[keep] = -equity(net.evaluate_plies(r[keep], lev))
        keep = keep[np.argsort(-eq[keep], kind="stable")]
        if lev < level.plies:
            keep = keep[:n1]
            keep = keep[eq[keep] >= eq[keep[0]] - w1]
    return int(keep[0])


try:
    from .players import Player as _PlayerBase
except ImportError:          # the terminal game's players are optional here
    _PlayerBase = object


class LevelPlayer(_PlayerBase):
    """A level as a :class:`bgfast.players.Player` for the terminal game.

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
        self.level = get_level(level) if isinstance(level, str) else level
        self.name = self.level.name
        self.rng = np.random.default_rng(seed)

    def choose_play(self, game, plays):
        if len(plays) == 1:
            return plays[0]
        results = np.stack([p.position.board for p in plays])
        if self.level.kind == RANDOM:
            return plays[int(self.rng.integers(len(plays)))]
        if self.level.kind == PUBEVAL:
            from .evaluate import pubeval_score

            # pubeval scores with the weights of the position before the move
            from .position import PositionClass

            contact = game.position().classify() == PositionClass.CONTACT
            return plays[int(np.argmax(pubeval_score(results, contact=contact)))]
        seed = int(self.rng.integers(2**63))
        return plays[pick_result(self.level, results, seed)]

    def probabilities(self, position):
        """This level's cubeless probabilities for the player on roll and
        the two-sided table's exact cubeful money equities (None outside
        it), by :func:`bgfast.evaluate.sourced_probabilities` with the
        level's evaluator: the net at the level's plies (pubeval: the
        composite evaluator)."""
        from .evaluate import get_evaluator, sourced_probabilities

        if self.level.kind == NET:
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
        if self.level.kind == NET and self.level.plies:
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
        if self.level.kind == RANDOM:
            return False
        return self.cube_decision(game).action.doubles

    def respond_to_double(self, game):
        if self.level.kind == RANDOM:
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
        from .game import Phase, result_kind

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
        what an outcome of :data:`bgfast.players.RESIGN_EPS` could be worth
        (3 cubes in money, the whole match in MWC) -- the chances
        :func:`bgfast.players.clear_resignation` ignores, so a level takes
        the resignations a level offers.  Beginner keeps the base rule."""
        from .players import RESIGN_EPS

        if self.level.kind == RANDOM:
            return super().accepts_resignation(game, kind)
        me = 1 - game.resignation_offer[0]
        offer = result_value(game, me, me, game.resignation_points(kind))
        slack = RESIGN_EPS * (3 * game.cube_value if game.is_money else 1.0)
        return offer >= self.value(game, me) - slack

    def wants_to_resign(self, game):
        """Offer a resignation when the game is lost beyond doubt by this
        level's probabilities (:func:`bgfast.players.clear_resignation`).
        Beginner never resigns."""
        from .players import clear_resignation

        if self.level.kind == RANDOM:
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
    """A terminal-game player for a level name (see :func:`get_level`)."""
    return LevelPlayer(get_level(name), seed)
