"""The five computer levels of the reference app, and the other duel players.

=========  ==========================================================
Beginner   a random legal play; never doubles, always takes
Easy       the net at 0-ply with Gaussian equity noise (std 0.25)
Medium     the net at 0-ply with Gaussian equity noise (std 0.06)
Hard       the net at 1-ply (looks at the opponent's 21 replies)
Expert     the net at 2-ply
=========  ==========================================================

All net levels use the exact bear-off databases in bear-off positions.
A :class:`Level` is a plain description (kind, plies, noise); the duel
kernel plays it in C, the rollout kernel uses it as a policy
(``bgfast.rollout.LEVEL_POLICIES``), and :meth:`Level.choose_play` plays it
from Python.  As players of the terminal game
(:class:`bgfast.players.LevelPlayer`) all levels but Beginner take their cube
decisions through the cube layer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import BgfastError
from .movegen import legal_plays_batch
from .position import Position, as_board, as_boards

__all__ = ["Level", "LEVELS", "LEVEL_NAMES", "get_level", "RANDOM", "PUBEVAL", "NET",
           "pick_result"]

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
        b = as_boards(boards)
        d = np.ascontiguousarray(np.broadcast_to(np.asarray(dice, dtype=np.int64), (b.shape[0], 2)))
        if self.kind == NET:
            return self.net.choose(b, d, plies=self.plies, noise=self.noise, seed=seed)
        if self.kind == PUBEVAL:
            from .evaluate import get_evaluator

            return get_evaluator("pubeval").choose(b, d)
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
        "net3": Level("net 3-ply", NET, 3),
    }


LEVELS = _levels()


def get_level(name: str) -> Level:
    """A level or player by name (case-insensitive): the five levels,
    ``pubeval``, ``net``/``net0``/``net1``/``net2``/``net3`` (the shipped net
    at n plies), or a weights file ``PATH.npz`` optionally followed by ``@PLIES``."""
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
                      "bgsage[@PLIES], or a weights file PATH.npz[@PLIES]")


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
