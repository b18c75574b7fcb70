"""Duels: cubeless money games with duplicate dice (``bgfast duel A B``).

Game pair ``k`` draws its dice from the stream seeded by ``(seed, k)`` and
is played twice: first with A moving first, then with B moving first on the
very same rolls, so the luck of the dice mostly cancels.  The points per
game (ppg) of A are reported with the standard error of the mean over the
pairs (the independent units).  A and B are names of :mod:`bgfast.levels`
(the five levels, pubeval, the net, a weights file), ``gnubg`` (gnubg's
0-ply through the optional ``gnubg-nn`` package) or ``bgsage`` (bgsage's
raw net, through the optional ``bgsage`` package); ``gnubg@N`` and
``bgsage@N`` play with N plies of look-ahead.

Players that exist in C (every level, pubeval) are played by the OpenMP duel
kernel; a duel involving a peer engine runs a Python game loop on the same
dice.
Results depend only on the seed, never on the number of threads.
"""
from __future__ import annotations

import abc
import math
import os
from dataclasses import dataclass, asdict

import numpy as np

from . import _net
from .errors import BgfastError, check_seed, check_whole
from .levels import Level, get_level, NET
from .position import Position

__all__ = ["DuelResult", "duel", "get_player", "PeerPlayer", "GnubgPlayer", "BgsagePlayer",
           "PyLevelPlayer", "py_game", "gnubg_available", "bgsage_available"]


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def gnubg_available() -> bool:
    """Whether the optional gnubg-nn package (the ``gnubg`` player) is installed."""
    return _importable("gnubg_nn")


def bgsage_available() -> bool:
    """Whether the optional bgsage package (the ``bgsage`` player) is installed."""
    return _importable("bgsage")


class PeerPlayer(abc.ABC):
    """Another engine's play at ``plies`` plies of look-ahead (0: its raw
    net), for the Python game loop: :meth:`play` takes the board (player on
    roll in row 1) and the dice and returns the board after the play with
    the turn passed (the mover in row 0).  A subclass names its ``engine``,
    the optional ``package`` (pip) and ``module`` (import) it needs and its
    ``max_plies``."""

    engine = ""
    package = ""
    module = ""
    max_plies = 0

    def __init__(self, plies: int = 0):
        if not (isinstance(plies, int) and 0 <= plies <= self.max_plies):
            raise BgfastError(f"{self.engine} plies must be 0..{self.max_plies}, not {plies!r}")
        self.plies = plies
        self.name = self.engine if plies == 0 else f"{self.engine}@{plies}"
        try:
            self._m = __import__(self.module)
        except ImportError:
            raise BgfastError(f"the {self.engine} player needs the optional package "
                              f"{self.package} (pip install {self.package})") from None

    @abc.abstractmethod
    def play(self, board: np.ndarray, d1: int, d2: int, seed: int) -> np.ndarray:
        """The board after this engine's play of (d1, d2), the turn passed."""


class GnubgPlayer(PeerPlayer):
    """gnubg's play at ``plies`` (0: its raw net; ``gnubg_nn.best_move``);
    needs the optional gnubg-nn package."""

    engine = "gnubg"
    package = "gnubg-nn"
    module = "gnubg_nn"
    max_plies = 2

    def play(self, board: np.ndarray, d1: int, d2: int, seed: int) -> np.ndarray:
        moves, key = self._m.best_move(board.tolist(), d1, d2, n=self.plies, b=1)
        if not moves:
            return board[::-1].copy()
        return np.asarray(self._m.board_from_position_key(key), dtype=np.uint8)


#: bgsage's evaluation level for each number of look-ahead plies (bgsage
#: counts the raw net as its "1ply")
BGSAGE_LEVELS = ("1ply", "2ply", "3ply")


class BgsagePlayer(PeerPlayer):
    """bgsage's cubeless play with ``plies`` plies of look-ahead (0: its raw
    net, with its bear-off database); needs the optional bgsage package."""

    engine = package = module = "bgsage"
    max_plies = len(BGSAGE_LEVELS) - 1

    def __init__(self, plies: int = 0):
        super().__init__(plies)
        self._a = self._m.create_analyzer(BGSAGE_LEVELS[plies], cubeful=False)

    @staticmethod
    def to_bgsage(board: np.ndarray) -> list[int]:
        """bgfast's board as bgsage's 26 numbers: the player on roll's points
        1..24 positive, the opponent's negative, index 25 the player's bar
        and index 0 the opponent's."""
        me, opp = board[1].astype(int), board[0].astype(int)
        s = [0] * 26
        for i in range(1, 25):
            s[i] = me[i - 1] - opp[24 - i]
        s[25], s[0] = int(me[24]), int(opp[24])
        return s

    @staticmethod
    def from_bgsage(s) -> np.ndarray:
        """bgsage's board after a play (the mover's view) as bgfast's board
        with the turn passed (the mover in row 0)."""
        out = np.zeros((2, 25), dtype=np.uint8)
        for i in range(1, 25):
            if s[i] > 0:
                out[0, i - 1] = s[i]
            elif s[i] < 0:
                out[1, 24 - i] = -s[i]
        out[0, 24], out[1, 24] = s[25], s[0]
        return out

    def play(self, board: np.ndarray, d1: int, d2: int, seed: int) -> np.ndarray:
        moves = self._a.checker_play(self.to_bgsage(board), d1, d2).moves
        if not moves:
            return board[::-1].copy()
        return self.from_bgsage(moves[0].board)


class PyLevelPlayer:
    """A :class:`bgfast.levels.Level` as a side of :func:`py_game` (the
    Python game loop, used when a side is gnubg)."""

    def __init__(self, level: Level):
        self.level = level
        self.name = level.name

    def play(self, board, d1, d2, seed):
        _, res = self.level.choose_boards(board[None], [[d1, d2]], seed)
        return res[0]


def get_player(name):
    """A :class:`bgfast.levels.Level` or a :class:`PeerPlayer` by name:
    ``gnubg``, ``bgsage`` (their raw nets) or ``gnubg@N``, ``bgsage@N`` (N
    plies of look-ahead), else a level's name."""
    if isinstance(name, (Level, PeerPlayer)):
        return name
    engine, at, plies = str(name).strip().lower().partition("@")
    peer = {p.engine: p for p in (GnubgPlayer, BgsagePlayer)}.get(engine)
    if peer is None:
        return get_level(str(name))
    if at and not plies.isdigit():
        raise BgfastError(f"bad plies in player {name!r}")
    return peer(int(plies or 0))


@dataclass
class DuelResult:
    a: str
    b: str
    seed: int
    pairs: int
    games: int
    ppg: float                  # points per game for A
    se: float                   # standard error of ppg (over the pairs)
    wins_a: int
    gammons_a: int              # gammons won by A (backgammons not included)
    backgammons_a: int
    wins_b: int
    gammons_b: int
    backgammons_b: int
    plies: float                # mean plies per game
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        return (f"{self.a} vs {self.b}: {self.games} games ({self.pairs} duplicate pairs), "
                f"seed {self.seed}\n"
                f"{self.a}: {self.ppg:+.4f} points per game (standard error {self.se:.4f})\n"
                f"{'player':<12}{'wins':>8}{'gammons':>10}{'backgammons':>13}\n"
                f"{self.a[:12]:<12}{self.wins_a:>8}{self.gammons_a:>10}{self.backgammons_a:>13}\n"
                f"{self.b[:12]:<12}{self.wins_b:>8}{self.gammons_b:>10}{self.backgammons_b:>13}")


class _Tally:
    """The points and plies of the game pairs played so far, as exact
    integer sums (memory does not grow with the games)."""

    def __init__(self):
        self.pairs = 0
        self.total = 0          # points for A
        self.squares = 0        # sum over the pairs of (points of the pair)^2
        self.plies = 0
        self.outcomes = dict.fromkeys((-3, -2, -1, 1, 2, 3), 0)

    def add(self, pts, plies) -> None:
        pts = np.asarray(pts, dtype=np.int64)          # [pairs, 2] points for A
        pair = pts.sum(axis=1)
        self.pairs += len(pts)
        self.total += int(pair.sum())
        self.squares += int(np.square(pair).sum())
        self.plies += int(np.asarray(plies, dtype=np.int64).sum())
        values, counts = np.unique(pts, return_counts=True)
        for v, c in zip(values.tolist(), counts.tolist()):
            self.outcomes[v] += c

    def result(self, a, b, seed, seconds) -> DuelResult:
        n, games = self.pairs, 2 * self.pairs
        # the standard error of the pairs' mean points per game, from the
        # exact sums: var = (n sum x^2 - (sum x)^2) / (n (n - 1)) / 4
        se = (math.sqrt((n * self.squares - self.total ** 2) / (4 * n * (n - 1)) / n)
              if n > 1 else float("nan"))
        o = self.outcomes
        return DuelResult(
            a=a, b=b, seed=seed, pairs=n, games=games, ppg=self.total / games if n else 0.0,
            se=se, wins_a=o[1] + o[2] + o[3], gammons_a=o[2], backgammons_a=o[3],
            wins_b=o[-1] + o[-2] + o[-3], gammons_b=o[-2], backgammons_b=o[-3],
            plies=self.plies / games if n else 0.0, seconds=round(seconds, 3))


#: Seconds of play between progress reports of the duel kernel.
REPORT_SECONDS = 0.5
#: Most pairs per call of the duel kernel.
MAX_STEP = 1 << 14
#: The most games a duel plays.
MAX_GAMES = 10 ** 12


def py_game(players, seed: int, pair: int, swap: int, record: list | None = None) -> tuple[int, int]:
    """One game in Python on the duel kernel's dice; returns (points for
    players[0], plies).  ``record``: a list that gets the board after every
    play that does not end the game (the next player on roll)."""
    b = np.array(Position.initial().board)
    rolls = _net.dice_rolls(seed, pair, 512)
    t = 0
    while True:
        if t >= len(rolls):
            rolls = _net.dice_rolls(seed, pair, 2 * len(rolls))
        r = int(rolls[t])
        who = (t & 1) ^ swap
        pseed = (seed * 1_000_003 + pair * 8 + swap * 2 + who) * 100_003 + t
        b = players[who].play(b, r // 6 + 1, r % 6 + 1, pseed & (2**63 - 1))
        t += 1
        if record is not None and b[0].sum():
            record.append(b)
        if b[0].sum() == 0:                    # the mover (now row 0) is off
            loser = b[1]
            pts = 1
            if loser[:25].sum() == 15:
                pts = 3 if loser[18:25].sum() else 2
            return (pts if who == 0 else -pts), t
        if t > 20000:
            raise RuntimeError("a duel game did not end")


def duel(a, b, games: int = 1000, seed: int = 0, threads: int | None = None,
         progress=None, python: bool = False) -> DuelResult:
    """Play ``games`` games (rounded up to whole duplicate pairs) of A against B.

    ``python=True`` plays every game with the Python game loop (the one used
    for the peer engines) instead of the C kernel -- the same dice, for checking."""
    import time

    games = check_whole("games", games, 1, MAX_GAMES, span=f"1..{MAX_GAMES:.0e}")
    seed = check_seed(seed)
    pa, pb = get_player(a), get_player(b)
    na, nb = getattr(pa, "name", str(a)), getattr(pb, "name", str(b))
    if na == nb:
        na, nb = f"{na} (A)", f"{nb} (B)"
    pairs = (games + 1) // 2
    threads = threads or os.cpu_count() or 1
    t0 = time.monotonic()
    tally = _Tally()
    if isinstance(pa, Level) and isinstance(pb, Level) and not python:
        from ._evaluator import ensure_tables   # the kernel's pubeval weights, on import
        if pa.kind == NET or pb.kind == NET:
            ensure_tables()
        spec = (pa.spec(), pb.spec())
        first, step = 0, threads
        while first < pairs:
            n = min(step, pairs - first)
            t = time.monotonic()
            p, pl = _net.duel(spec, seed & (2**64 - 1), first, n, threads)
            tally.add(p, pl)
            first += n
            if progress:
                progress(first, pairs)
            # the next call plays about REPORT_SECONDS (the pairs do not
            # depend on how they are split into calls)
            rate = n / max(time.monotonic() - t, 1e-3)
            step = max(threads, min(4 * n, MAX_STEP, int(rate * REPORT_SECONDS)))
    else:
        players = [p if isinstance(p, PeerPlayer) else PyLevelPlayer(p) for p in (pa, pb)]
        for k in range(pairs):
            games_k = [py_game(players, seed, k, swap) for swap in (0, 1)]
            tally.add([[g[0] for g in games_k]], [g[1] for g in games_k])
            if progress and (k % 50 == 49 or k == pairs - 1):
                progress(k + 1, pairs)
    return tally.result(na, nb, seed, time.monotonic() - t0)
