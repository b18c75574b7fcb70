"""Exact cubeful match values of small bear-offs, by recursion, for checking
the cubeful search of ``bgfast.cube``.

Both sides have 1..K checkers on their 6-point home boards (no gammons: a
side that still has K <= 6 checkers has borne off at least 9).  For every
pair (roller i, opponent j) and every cube state -- whose away score the
roller has (the match's two sides), the cube value, its owner seen from the
roller -- the recursion gives the roller's match winning chance before his
roll with his cube decision (``value``), without doubling (``no_double``)
and after doubling and a take (``no_double`` of the doubled state)::

    no_double(s, i, j) = 1/36 sum_rolls max_plays (1 - value(flip s, j, k))
    value(s, i, j)     = max(no_double, min(double/take, double/pass))

the roller winning the cube's points when he bears off his last checker;
double/pass is the MWC after winning the cube's points.  The side on roll may
double unless it is the Crawford game or the opponent owns the cube, up to a
cube of twice the larger away score (beyond it every game ends the match);
a dead cube is never worth turning, so the recursion needs no dead-cube rule.
MWCs after a game come from the match equity table's ``mwc`` with the
Crawford rule: a side reaching 1-away from a pre-Crawford score starts the
Crawford game; in the Crawford game and after it, a 1-away score is
post-Crawford.

The plays come from ``bgfast.movegen`` (tested on its own); nothing else of
bgfast is used.  Pairs are solved in order of their total pip count (a
play lowers the mover's pips), every pair of one pip total at once.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from bgfast.movegen import ALL_ROLLS, ROLL_WEIGHTS, legal_plays_batch

PRE, POST, CRAWFORD = 0, 1, 2
CENTRE, ME, OPP = 0, 1, 2
_OWNERS = {"centre": CENTRE, "me": ME, "opp": OPP}


def home_positions(k: int) -> np.ndarray:
    """Every home board with 1..k checkers: counts ``int64[P, 6]`` (points 1..6)."""
    rows = [c for c in itertools.product(range(k + 1), repeat=6) if 1 <= sum(c) <= k]
    return np.array(sorted(rows, key=lambda c: (sum((p + 1) * n for p, n in enumerate(c)), c)),
                    dtype=np.int64)


class MatchReference:
    """Exact values of every pair of :func:`home_positions` ``(k)`` at a match
    score: the sides are ``away`` = (a, b) away, ``state`` the game's (PRE,
    POST or CRAWFORD), ``table`` a :class:`bgfast.met.MatchEquityTable`."""

    def __init__(self, k: int, away: tuple, state: int, table):
        self.k, self.away, self.state, self.table = k, tuple(away), state, table
        self.pos = home_positions(k)
        P = self.P = len(self.pos)
        self.index = {tuple(c): i for i, c in enumerate(self.pos.tolist())}
        self.levels = int(np.ceil(np.log2(max(away)))) + 2          # cubes 1 .. 2 * max away
        self._successors()
        # states: (side on roll 0/1, cube level, owner); arrays [P, P + 1], column P = the
        # opponent has borne off (the side on roll has lost the cube's points)
        self.states = [(o, lv, own) for o in (0, 1) for lv in range(self.levels) for own in (0, 1, 2)]
        self.nd = {s: np.full((P, P + 1), np.nan) for s in self.states}
        self.val = {s: np.full((P, P + 1), np.nan) for s in self.states}
        for s in self.states:
            lost = self.after(s, lose=True)
            self.nd[s][:, P] = lost
            self.val[s][:, P] = lost
        self._solve()

    # -- the rules --------------------------------------------------------------

    def mine(self, s):
        """(my away, the opponent's away) of state s."""
        a, b = self.away
        return (a, b) if s[0] == 0 else (b, a)

    def after(self, s, *, lose: bool = False) -> float:
        """The roller's MWC after he wins (or loses) the cube's points of state s."""
        x, y = self.mine(s)
        v = 1 << s[1]
        if lose:
            y -= v
        else:
            x -= v
        if x <= 0:
            return 1.0
        if y <= 0:
            return 0.0
        post = self.state != PRE and (x == 1) != (y == 1)
        return float(self.table.mwc(x, y, post_crawford=post))

    def can_double(self, s) -> bool:
        return self.state != CRAWFORD and s[2] != OPP and s[1] + 1 < self.levels

    @staticmethod
    def flip(s):
        return (1 - s[0], s[1], {CENTRE: CENTRE, ME: OPP, OPP: ME}[s[2]])

    @staticmethod
    def doubled(s):
        return (s[0], s[1] + 1, OPP)

    # -- the recursion ------------------------------------------------------------

    def _successors(self):
        P, nr = self.P, len(ALL_ROLLS)
        boards = np.zeros((P, 2, 25), dtype=np.uint8)
        boards[:, 1, :6] = self.pos
        boards[:, 0, 5] = 1                     # an opponent checker on his 6-point: no contact
        offsets, res = legal_plays_batch(np.repeat(boards, nr, axis=0), np.tile(ALL_ROLLS, (P, 1)))
        succ = [[] for _ in range(P * nr)]
        owner = np.repeat(np.arange(P * nr), np.diff(offsets))
        for g, after in zip(owner.tolist(), res[:, 0, :6].tolist()):
            succ[g].append(self.index.get(tuple(after), P))        # P: all borne off
        width = max(len(s) for s in succ)
        # padded with the first successor (a maximum does not change)
        self.succ = np.array([s + [s[0]] * (width - len(s)) for s in succ],
                             dtype=np.int64).reshape(P, nr, width)
        self.pips = self.pos @ np.arange(1, 7)

    def _solve(self):
        P = self.P
        ii, jj = np.meshgrid(np.arange(P), np.arange(P), indexing="ij")
        total = (self.pips[ii] + self.pips[jj]).ravel()
        I, J = ii.ravel(), jj.ravel()
        w = ROLL_WEIGHTS.astype(np.float64)
        for t in np.unique(total):
            at = total == t
            i, j = I[at], J[at]
            S = self.succ[i]                                   # [g, 21, width]
            for s in self.states:
                v = 1.0 - self.val[self.flip(s)][j[:, None, None], S]
                self.nd[s][i, j] = (v.max(axis=2) * w).sum(axis=1) / 36.0
            for s in self.states:
                nd = self.nd[s][i, j]
                if self.can_double(s):
                    dt = self.nd[self.doubled(s)][i, j]
                    self.val[s][i, j] = np.maximum(nd, np.minimum(dt, self.after(s)))
                else:
                    self.val[s][i, j] = nd

    # -- lookups --------------------------------------------------------------------

    def pair(self, board) -> tuple:
        """(roller, opponent) indices of a board (player on roll in row 1); P for an empty side."""
        return (self.index.get(tuple(int(v) for v in board[1, :6]), self.P),
                self.index.get(tuple(int(v) for v in board[0, :6]), self.P))

    def state_of(self, row) -> tuple:
        """The state of a kernel context row (match, a, b, state, cube, owner, ...)."""
        a, b, cube, owner = int(row[1]), int(row[2]), int(row[4]), int(row[5])
        o = 0 if (a, b) == self.away else 1
        assert self.mine((o, 0, 0)) == (a, b), (a, b, self.away)
        return (o, cube.bit_length() - 1, owner)

    def values(self, board, s) -> dict:
        """no_double, double_take, double_pass, value and lose of a board at state s."""
        i, j = self.pair(board)
        if i == self.P:
            raise ValueError("the side on roll has no checkers")
        dt = self.nd[self.doubled(s)][i, j] if s[1] + 1 < self.levels else np.nan
        return {"no_double": self.nd[s][i, j], "double_take": dt, "double_pass": self.after(s),
                "value": self.val[s][i, j], "lose": self.after(s, lose=True)}

    def boards(self, pairs) -> np.ndarray:
        """Boards ``uint8[n, 2, 25]`` of (roller, opponent) index pairs."""
        out = np.zeros((len(pairs), 2, 25), dtype=np.uint8)
        for n, (i, j) in enumerate(pairs):
            out[n, 1, :6] = self.pos[i]
            out[n, 0, :6] = self.pos[j]
        return out


@functools.lru_cache(maxsize=16)
def match_reference(checkers: int, away: tuple, state: int, table=None) -> MatchReference:
    """The solved :class:`MatchReference` of every pair of bear-offs with
    1..``checkers`` checkers a side at ``away`` = (a, b) (the player on roll
    a away) and ``state`` (PRE, POST or CRAWFORD), by ``table`` (a
    :class:`bgfast.met.MatchEquityTable`; None: bgfast's default MET).
    Cached: 3 checkers take about a second, 4 several seconds."""
    if table is None:
        from bgfast.met import get_table

        table = get_table(None)
    return MatchReference(checkers, tuple(away), state, table)


def exact_match_values(boards, away: tuple, *, state: int = PRE, cube: int = 1,
                       owner: str = "centre", checkers: int = 3, table=None) -> dict:
    """Exact cubeful MWCs of bear-off ``boards`` (``uint8[N, 2, 25]`` or one
    board, the player on roll in row 1, every checker of both sides on the
    1..6 points, 1..``checkers`` each) for the player on roll, ``away`` =
    (his away score, the opponent's), ``state`` (PRE, POST or CRAWFORD), a
    ``cube`` at that value owned by ``owner`` ('centre', 'me' or 'opp'),
    with optimal cube play by both sides from here on.

    Returns float64 arrays [N]: ``value`` (after the roller's own cube
    decision), ``no_double``, ``double_take`` (NaN where the cube cannot be
    turned further), ``double_pass`` and ``lose`` (the MWC of losing the
    cube's points).  Raises ValueError for a board outside the reference."""
    b = np.asarray(boards, dtype=np.uint8).reshape(-1, 2, 25)
    if b[:, :, 6:].any() or (b[:, :, :6].sum(axis=2) > checkers).any():
        raise ValueError(f"a board is not a bear-off of at most {checkers} checkers a side")
    ref = match_reference(checkers, tuple(away), state, table)
    s = (0, int(cube).bit_length() - 1, _OWNERS[owner])
    if s[1] >= ref.levels:
        raise ValueError(f"cube {cube} is beyond the match's last useful cube")
    rows = [ref.values(x, s) for x in b]
    return {k: np.array([r[k] for r in rows], dtype=np.float64)
            for k in ("value", "no_double", "double_take", "double_pass", "lose")}
