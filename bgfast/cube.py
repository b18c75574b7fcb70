"""Cube decisions from the 5 cubeless probabilities, for money and match play.

This layer is independent of where the probabilities come from: give it the
player on roll's ``(win, win gammon, win backgammon, lose gammon, lose
backgammon)`` (cumulative, gnubg's convention) and the cube and score.

Method (Janowski, "Take-points in money games", 1993, as described in the
GNU Backgammon manual):

* cubeful equity = ``x * live + (1 - x) * dead``, where *dead* is the
  cubeless equity (or cubeless MWC in a match), *live* the equity with a
  perfectly efficient cube and ``x`` the cube efficiency (contact 0.68,
  race 0.6..0.7 by the roller's pip count, bear-off 0.6);
* the live equity is piecewise linear in the winning chance ``p`` through
  ``(0, -L)``, ``(TP, -1)``, ``(CP, +1)``, ``(1, +W)`` (centred cube; an
  owned cube drops the point of the side that cannot double), with
  ``W``/``L`` the average value of games won/lost;
* money: ``TP = (L - 1/2) / (W + L + 1/2)``, ``CP = (L + 1) / (W + L + 1/2)``;
* match: the same picture in match winning chances.  Take points come from
  the MET recursively (the "cube-life" method): a taker who can redouble
  wins by cashing at his own cash point one cube level up, so
  ``TP_live(n) = TP_eff(n) * (1 - TP_live,opp(2n))``, where ``TP_eff`` is
  the take point when the taker's wins are cashes at ``2n``; when the
  taker's redouble is dead (``2n`` already wins him the match) the dead-cube
  take point with both sides' gammons is used.

Equities are reported per unit of the current cube (double/pass is always
+1), as gnubg does; in a match they are the MWC normalised between losing and
winning the current cube value.

The model itself (the live lines, the recursive take and cash points, the
choice of action) is the kernel :mod:`bgfast._cube`, row by row; this
module checks the inputs and shapes the results.  One position
(:func:`cube_decision`) and many (:func:`cube_decisions`) go through the
same kernel.

:class:`CubeContext` is the cube and the score (money or match) seen from
the player on roll, with named constructors (money, match, a Match ID's
state, a game).  :func:`cubeful_values` values positions at a context at
0 plies (the model above on an evaluator's probabilities, exact money
equities in two-sided bear-offs) and at n plies (gnubg's cubeful search:
each side's cube decision at every node); :func:`searched_decisions` makes
cube decisions from that search.
Their public forms, with evaluators by name, are in :mod:`bgfast.evaluate`
(``cubeful_equity``, ``evaluate_cube``, ``rank_plays(..., cube=...)``).
See ``docs/cubeful.md``.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Sequence


import numpy as np

from . import _cube as _k
from ._board import board_classes
from .errors import InvalidCubeError, InvalidScoreError, MissingTableError
from .formats import CubeOwner, MatchState
from .met import MatchEquityTable, MatchScore, get_table
from .movegen import ALL_ROLLS, ROLL_WEIGHTS, legal_plays_batch
from .position import PositionClass, as_boards

__all__ = [
    "InvalidCubeError",
    "CubeContext",
    "ContextColumn",
    "CubefulValues",
    "Owner",
    "cubeful_values",
    "decide_cube",
    "searched_decisions",
    "valued_decisions",
    "board_efficiencies",
    "cube_efficiencies",
    "CubeAction",
    "MoneyRules",
    "CubeDecision",
    "cube_decision",
    "cube_efficiency",
    "race_efficiency",
    "cubeless_equity",
    "match_cubeful_mwc",
    "money_cubeful_equity",
    "money_take_points",
    "normalize_owner",
    "InvalidScoreError",
    "MatchScore",
]

CONTACT_EFFICIENCY = 0.68
BEAROFF_EFFICIENCY = 0.6
RACE_EFFICIENCY_MIN, RACE_EFFICIENCY_MAX = 0.6, 0.7
RACE_PIPS_MIN, RACE_PIPS_MAX = 40, 120


class CubeAction(str, enum.Enum):
    """The proper cube action for the player on roll."""

    NO_DOUBLE = "no_double"
    NO_DOUBLE_BEAVER = "no_double_beaver"
    DOUBLE_TAKE = "double_take"
    DOUBLE_BEAVER = "double_beaver"
    DOUBLE_PASS = "double_pass"
    TOO_GOOD_TAKE = "too_good_take"
    TOO_GOOD_PASS = "too_good_pass"
    OPTIONAL_DOUBLE_TAKE = "optional_double_take"  # doubling neither gains nor loses
    OPTIONAL_DOUBLE_BEAVER = "optional_double_beaver"
    NO_DOUBLE_DEAD_CUBE = "no_double_dead_cube"  # the cube is dead or not available

    def text(self, redouble: bool = False) -> str:
        d = "redouble" if redouble else "double"
        return {
            "no_double": f"No {d}, take",
            "no_double_beaver": f"No {d}, beaver",
            "double_take": f"{d.capitalize()}, take",
            "double_beaver": f"{d.capitalize()}, beaver",
            "double_pass": f"{d.capitalize()}, pass",
            "too_good_take": f"Too good to {d}, take",
            "too_good_pass": f"Too good to {d}, pass",
            "optional_double_take": f"Optional {d}, take",
            "optional_double_beaver": f"Optional {d}, beaver",
            "no_double_dead_cube": f"No {d}, dead cube",
        }[self.value]

    @property
    def doubles(self) -> bool:
        return self in (CubeAction.DOUBLE_TAKE, CubeAction.DOUBLE_BEAVER, CubeAction.DOUBLE_PASS)

    @property
    def takes(self) -> bool | None:
        """Whether the opponent should take a double (None for a dead cube)."""
        if self is CubeAction.NO_DOUBLE_DEAD_CUBE:
            return None
        return self not in (CubeAction.DOUBLE_PASS, CubeAction.TOO_GOOD_PASS)


@dataclasses.dataclass(frozen=True)
class MoneyRules:
    """Money-game options: the Jacoby rule and beavers."""

    jacoby: bool = False
    beavers: bool = False


_OWNERS = {
    "centre": "centre", "center": "centre", "centred": "centre", "centered": "centre",
    "middle": "centre", "none": "centre",
    "me": "me", "mine": "me", "player": "me", "on_roll": "me", "self": "me",
    "opp": "opp", "opponent": "opp", "them": "opp",
}


def normalize_owner(owner) -> str:
    """``'centre'``, ``'me'`` or ``'opp'`` from the usual spellings."""
    key = _OWNERS.get(str(owner).strip().lower())
    if key is None:
        raise InvalidCubeError(f"unknown cube owner {owner!r}; use me, opp or centre")
    return key


class Owner(str, enum.Enum):
    """Who owns the cube, seen from the player on roll (equal to the
    strings ``'centre'``, ``'me'``, ``'opp'`` used elsewhere)."""

    CENTRE = "centre"
    ME = "me"
    OPP = "opp"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, owner) -> "Owner":
        """The owner from any spelling :func:`normalize_owner` accepts."""
        return cls(normalize_owner(owner))

    def flipped(self) -> "Owner":
        """The same owner seen from the other player."""
        return {Owner.ME: Owner.OPP, Owner.OPP: Owner.ME}.get(self, self)


#: The highest cube value: the kernels hold cube values (and points) in
#: 64-bit integers, and a rollout's money cube is not turned beyond it.
MAX_CUBE = 2 ** 40


def _check_cube(cube, owner) -> tuple[int, str]:
    if isinstance(cube, bool) or not isinstance(cube, (int, np.integer)):
        raise InvalidCubeError(f"cube value must be an integer power of 2, not {cube!r}")
    cube = int(cube)
    if cube < 1 or cube & (cube - 1):
        raise InvalidCubeError(f"cube value must be a power of 2 (1, 2, 4, ...), not {cube}")
    if cube > MAX_CUBE:
        raise InvalidCubeError(f"cube value must be at most 2**{MAX_CUBE.bit_length() - 1}, "
                               f"not 2**{cube.bit_length() - 1}")
    owner = normalize_owner(owner)
    if cube == 1 and owner != "centre":
        raise InvalidCubeError("a cube at 1 is centred: it has not been turned yet")
    return cube, owner


class _Probs(tuple):
    """5 probabilities already checked by :func:`_check_probs` (plain floats)."""

    __slots__ = ()


_TOL = 1e-6


def _checked(p: np.ndarray):
    """Rows of ``float64[N, 5]`` probabilities checked and clipped (the
    kernel :func:`bgfast._cube.checked_rows`): ``(clipped, status int8[N])``,
    status 0 for a consistent row, else 1 (not finite), 2 (the winning side)
    or 3 (the losing side)."""
    return _k.checked_rows(np.ascontiguousarray(p, dtype=np.float64), _TOL)


def _check_probs(probs) -> "_Probs":
    """Validate 5 cumulative probabilities; returns them as a tuple of 5
    floats (tiny rounding clipped), which later checks pass through."""
    if type(probs) is _Probs:
        return probs
    try:
        p = np.asarray(probs, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidCubeError(f"probabilities must be 5 numbers, not {probs!r}") from None
    if p.shape != (5,):
        raise InvalidCubeError(f"expected 5 probabilities (W, WG, WB, LG, LB), got {p.size}")
    clipped, status = _checked(p[None])
    w, wg, wb, lg, lb = p.tolist()
    if status[0] == 1:
        raise InvalidCubeError("probabilities must be finite numbers")
    if status[0] == 2:
        raise InvalidCubeError(
            f"need 0 <= win backgammon <= win gammon <= win <= 1, got W={w:g} WG={wg:g} WB={wb:g}"
        )
    if status[0] == 3:
        raise InvalidCubeError(
            f"need 0 <= lose backgammon <= lose gammon <= 1 - win, got LG={lg:g} LB={lb:g} (win {w:g})"
        )
    return _Probs(clipped[0].tolist())


def _rows(probs) -> np.ndarray:
    """One checked probability row as ``float64[1, 5]`` for the array model."""
    return np.array([_check_probs(probs)], dtype=np.float64)


def _cubeless(p: np.ndarray) -> np.ndarray:
    w, wg, wb, lg, lb = p.T
    return 2 * w - 1 + wg - lg + wb - lb


def cubeless_equity(probs) -> float:
    """Cubeless money equity ``2w - 1 + wg - lg + wbg - lbg``."""
    return float(_cubeless(_rows(probs))[0])


# ---------------------------------------------------------------------------
# cube efficiency
# ---------------------------------------------------------------------------

#: The efficiency rule's numbers, in the kernel's order (:func:`bgfast._cube.efficiencies`).
_EFFICIENCY = np.array([CONTACT_EFFICIENCY, BEAROFF_EFFICIENCY, RACE_EFFICIENCY_MIN,
                        RACE_EFFICIENCY_MAX, RACE_PIPS_MIN, RACE_PIPS_MAX], dtype=np.float64)


def race_efficiency(pips: float) -> float:
    """Race cube efficiency: 0.6 at 40 pips or less, 0.7 at 120 or more, linear between."""
    return float(cube_efficiencies([PositionClass.RACE], [float(pips)])[0])


def cube_efficiencies(classes, pips_on_roll) -> np.ndarray:
    """Cube efficiencies ``float64[N]`` from position class codes
    (:class:`bgfast.position.PositionClass`) and the roller's pip counts:
    contact 0.68, race 0.6..0.7 by the pips, bear-off (and a finished
    game) 0.6 -- the kernel's rule (:func:`bgfast._cube.efficiencies`),
    which also gives the efficiencies of boards in the cubeful search."""
    cls = np.ascontiguousarray(np.asarray(classes).reshape(-1), dtype=np.int8)
    pips = np.ascontiguousarray(np.broadcast_to(np.asarray(pips_on_roll, dtype=np.float64),
                                                cls.shape))
    return _k.efficiencies(cls, pips, _EFFICIENCY)


def cube_efficiency(position) -> float:
    """The cube efficiency for a :class:`bgfast.Position` (by its class and pip count)."""
    return float(cube_efficiencies([int(position.classify())], [position.pip_count()[0]])[0])


def board_efficiencies(boards) -> np.ndarray:
    """:func:`cube_efficiency` of boards ``uint8[N, 2, 25]`` (player on roll in row 1)."""
    return _k.board_efficiencies(as_boards(boards), _EFFICIENCY)


# ---------------------------------------------------------------------------
# the live-cube model (arrays: one row per position, cube and score shared)
# ---------------------------------------------------------------------------

def _averages(p: np.ndarray):
    """Average value of games won (W) and lost (L), money points per cube."""
    w, wg, wb, lg, lb = p.T
    with np.errstate(divide="ignore", invalid="ignore"):
        W = np.where(w > 1e-12, 1.0 + (wg + wb) / w, 1.0)
        L = np.where(w < 1.0 - 1e-12, 1.0 + (lg + lb) / (1.0 - w), 1.0)
    return W, L


def _take_points(p: np.ndarray, jacoby_centred: bool = False, averages=None) -> dict:
    if jacoby_centred:
        W = L = np.ones(p.shape[0])
    else:
        W, L = _averages(p) if averages is None else averages
    return {
        "take_live": (L - 0.5) / (W + L + 0.5),
        "cash_live": (L + 1.0) / (W + L + 0.5),
        "take_dead": (L - 0.5) / (W + L),
        "cash_dead": 1.0 - (W - 0.5) / (W + L),
        "W": W,
        "L": L,
    }


def money_take_points(probs, *, jacoby_centred: bool = False) -> dict:
    """Janowski money take points (of the side on roll, in its own winning chance).

    Returns ``take_live``/``take_dead`` (my take point if doubled) and
    ``cash_live``/``cash_dead`` (the winning chance at which the opponent's
    take of my double breaks even).  ``jacoby_centred`` treats gammons as
    single wins (the Jacoby rule with a centred cube).
    """
    return {k: float(v[0]) for k, v in _take_points(_rows(probs), jacoby_centred).items()}


def _per_row(v, n: int, dtype) -> np.ndarray:
    """``v`` (one value, or one per row) as a contiguous ``dtype[n]`` array for the kernel."""
    arr = np.asarray(v, dtype=dtype)
    if arr.ndim == 0:
        return np.full(n, arr, dtype=dtype)
    return np.ascontiguousarray(np.broadcast_to(arr, (n,)))


def _money_cubeful(p: np.ndarray, owner: str, efficiency, jacoby: bool = False) -> np.ndarray:
    """Janowski cubeful money equities of checked rows ``p`` (the kernel
    :func:`bgfast._cube.money_cubeful`; ``efficiency`` a number or one per row)."""
    return _k.money_cubeful(np.ascontiguousarray(p, dtype=np.float64), _OWNER_CODES[owner],
                            _per_row(efficiency, p.shape[0], np.float64), bool(jacoby))


def money_cubeful_equity(probs, owner: str, efficiency: float, *, jacoby: bool = False) -> float:
    """Janowski cubeful money equity per unit cube for the side on roll.

    ``owner`` is ``'centre'``, ``'me'`` or ``'opp'``; with ``jacoby`` and a
    centred cube gammons and backgammons count as single games.
    """
    p = _rows(probs)
    return float(_money_cubeful(p, normalize_owner(owner), efficiency, jacoby)[0])


class ContextColumn(enum.IntEnum):
    """The columns of a cube context's kernel row (:meth:`CubeContext.kernel_row`),
    numbered as the ``CTX_*`` enum of ``bgfast/_cube.pxd``."""

    MATCH = 0         #: 0 money, 1 match
    AWAY_ME = 1       #: the away scores (1 in money rows)
    AWAY_OPP = 2
    STATE = 3         #: a :class:`ContextState`
    CUBE = 4          #: the cube value (the money kernels read none: their values are per unit of cube)
    OWNER = 5         #: 0 centre, 1 the player on roll, 2 the opponent (:data:`_OWNER_CODES`)
    JACOBY = 6        #: money: the Jacoby rule
    BEAVERS = 7       #: money: beavers


class ContextState(enum.IntEnum):
    """The codes of a kernel row's ``STATE`` column (``PRE``, ``POST``, ``CRAWFORD`` of
    ``bgfast/_cube.pxd``)."""

    PRE_CRAWFORD = 0  #: before the Crawford game (and every money row)
    POST_CRAWFORD = 1
    CRAWFORD = 2


_PRE, _POST, _CRAWFORD = (int(s) for s in ContextState)
#: The codes of a kernel row's ``OWNER`` column (``OWN_*`` of ``bgfast/_cube.pxd``).
_OWNER_CODES = {"centre": 0, "me": 1, "opp": 2}


def _match_model(p: np.ndarray, a, b, state, cube, owner, x_nd, x_dt,
                 met: MatchEquityTable) -> dict:
    """The kernel's match model (:func:`bgfast._cube.match_rows`) of checked
    rows ``p``, each at its own score and cube (int arrays or numbers)."""
    n = p.shape[0]
    a, b, state, cube, owner = (_per_row(v, n, np.int64) for v in (a, b, state, cube, owner))
    return _k.match_rows(np.ascontiguousarray(p, dtype=np.float64), a, b, state, cube, owner,
                         _per_row(x_nd, n, np.float64), _per_row(x_dt, n, np.float64),
                         np.ascontiguousarray(met.pre, dtype=np.float64),
                         np.ascontiguousarray(met.post, dtype=np.float64))


def match_cubeful_mwc(probs, score: MatchScore, met=None, *, cube: int = 1,
                      owner: str = "centre", efficiency: float = CONTACT_EFFICIENCY) -> float:
    """Janowski cubeful match winning chance of the side on roll."""
    p = _rows(probs)
    cube, owner = _check_cube(cube, owner)
    x = float(efficiency)
    return float(_match_model(p, score.away_me, score.away_opp, _state(score), cube,
                              _OWNER_CODES[owner], x, x, get_table(met))["no_double"][0])


# ---------------------------------------------------------------------------
# decisions
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class CubeDecision:
    """The cube analysis for the player on roll.

    Equities are per unit of the current cube (double/pass = +1).  In a
    match the ``mwc_*`` fields hold match winning chances and the equities
    are those MWCs normalised between losing (-1) and winning (+1) the
    current cube value.  Take points are the opponent's (the winning chance
    he needs to take my double); cash points are mine (``1 - take point``).
    With beavers, ``double_take`` is the equity of a plain take and
    ``double_beaver`` (twice as large) the equity when the taker beavers;
    the action uses the latter.
    """

    probs: tuple
    cube: int
    owner: str
    match: MatchScore | None
    money: MoneyRules | None
    efficiency: float
    cubeless_equity: float
    no_double: float
    double_take: float
    double_pass: float
    action: CubeAction
    redouble: bool
    can_double: bool
    cube_dead: bool
    dead_reason: str | None
    beaver: bool
    take_point_live: float | None
    take_point_dead: float | None
    cash_point_live: float | None
    cash_point_dead: float | None
    gammon_price: dict
    gammon_price_after_double: dict
    cubeless_mwc: float | None = None
    mwc_no_double: float | None = None
    mwc_double_take: float | None = None
    mwc_double_pass: float | None = None
    double_beaver: float | None = None

    @property
    def action_text(self) -> str:
        return self.action.text(self.redouble)

    @property
    def best_equity(self) -> float:
        if not self.action.doubles:
            return self.no_double
        take = self.double_beaver if self.beaver else self.double_take
        return min(take, self.double_pass)

    def to_dict(self) -> dict:
        d = {
            "probs": list(self.probs),
            "cube": self.cube,
            "owner": self.owner,
            "mode": "match" if self.match else "money",
            "efficiency": self.efficiency,
            "cubeless_equity": self.cubeless_equity,
            "equities": {
                "no_double": self.no_double,
                "double_take": self.double_take,
                "double_pass": self.double_pass,
                "double_beaver": self.double_beaver,
            },
            "action": self.action.value,
            "action_text": self.action_text,
            "redouble": self.redouble,
            "can_double": self.can_double,
            "cube_dead": self.cube_dead,
            "dead_reason": self.dead_reason,
            "beaver": self.beaver,
            "take_point": {"live": self.take_point_live, "dead": self.take_point_dead},
            "cash_point": {"live": self.cash_point_live, "dead": self.cash_point_dead},
            "gammon_price": self.gammon_price,
            "gammon_price_after_double": self.gammon_price_after_double,
        }
        if self.match is not None:
            d["match"] = {
                "length": self.match.length,
                "score": [self.match.score_me, self.match.score_opp],
                "away": [self.match.away_me, self.match.away_opp],
                "crawford": self.match.crawford,
                "post_crawford": self.match.post_crawford,
            }
            d["mwc"] = {
                "cubeless": self.cubeless_mwc,
                "no_double": self.mwc_no_double,
                "double_take": self.mwc_double_take,
                "double_pass": self.mwc_double_pass,
            }
        else:
            d["money"] = {"jacoby": self.money.jacoby, "beavers": self.money.beavers}
        return d

    def describe(self, source: str = "") -> str:
        """The decision as text, in the manner of gnubg's cube hint: the
        context, the probabilities (from ``source``), the cubeless and
        cubeful equities, the proper action, take and cash points and
        gammon prices."""
        w, wg, wb, lg, lb = self.probs
        lines = []
        owner = {"centre": "centred", "me": "owned by me", "opp": "owned by the opponent"}[self.owner]
        if self.match is None:
            rules = [f"Jacoby {'on' if self.money.jacoby else 'off'}",
                     f"beavers {'allowed' if self.money.beavers else 'off'}"]
            lines.append(f"Money game ({', '.join(rules)}); cube {self.cube}, {owner}")
        else:
            m = self.match
            state = " (Crawford game)" if m.crawford else " (post-Crawford)" if m.post_crawford else ""
            lines.append(f"Match to {m.length}, score {m.score_me}-{m.score_opp} "
                         f"({m.away_me}-away, {m.away_opp}-away){state}; cube {self.cube}, {owner}")
        lines.append(f"Probabilities [{source}]: win {100 * w:.2f}% (gammon {100 * wg:.2f}%, "
                     f"backgammon {100 * wb:.2f}%), lose {100 * (1 - w):.2f}% "
                     f"(gammon {100 * lg:.2f}%, backgammon {100 * lb:.2f}%)")
        cl = f"Cubeless equity {self.cubeless_equity:+.3f}"
        if self.cubeless_mwc is not None:
            cl += f" (MWC {100 * self.cubeless_mwc:.2f}%)"
        eff = "effective cube efficiency" if (self.match is not None and "exact" in source) else "cube efficiency"
        if self.match is None and "exact" in source:
            lines.append(cl + "; cubeful equities from the exact table")
        else:
            lines.append(cl + f"; {eff} {self.efficiency:.3f}")
        lines.append("Cubeful equities:")
        rows = [("No double" if not self.redouble else "No redouble", self.no_double, self.mwc_no_double),
                ("Double, take" if not self.redouble else "Redouble, take", self.double_take, self.mwc_double_take),
                ("Double, pass" if not self.redouble else "Redouble, pass", self.double_pass, self.mwc_double_pass)]
        if self.double_beaver is not None:
            rows.insert(2, ("Double, beaver", self.double_beaver, None))
        for label, eq, mwc in rows:
            extra = f"   MWC {100 * mwc:6.2f}%" if mwc is not None else ""
            lines.append(f"  {label:<16}{eq:+8.3f}{extra}")
        lines.append(f"Proper cube action: {self.action_text}")
        if self.dead_reason:
            lines.append(f"  ({self.dead_reason})")
        lines.append(f"Take point (opponent): {_percent(self.take_point_live)} live cube, "
                     f"{_percent(self.take_point_dead)} dead cube; cash point {_percent(self.cash_point_live)} live, "
                     f"{_percent(self.cash_point_dead)} dead")
        gp, gp2 = self.gammon_price, self.gammon_price_after_double
        lines.append(f"Gammon price: me {gp['me']:.3f}, opponent {gp['opp']:.3f}; after a double: "
                     f"me {gp2['me']:.3f}, opponent {gp2['opp']:.3f}")
        return "\n".join(lines)


def _percent(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


_EPS = 1e-9  # equities closer than this are equal (ties go to doubling, as in gnubg)

#: The actions by code (the ``action`` arrays of :class:`CubeDecisions`).
ACTIONS = tuple(CubeAction)
_CODE = {a: i for i, a in enumerate(ACTIONS)}


#: The kernel's action numbers (see :func:`bgfast._cube.decide_rows`) as codes.
_KERNEL_CODES = np.array([_CODE[a] for a in (
    CubeAction.TOO_GOOD_PASS, CubeAction.DOUBLE_PASS, CubeAction.TOO_GOOD_TAKE,
    CubeAction.OPTIONAL_DOUBLE_TAKE, CubeAction.OPTIONAL_DOUBLE_BEAVER, CubeAction.NO_DOUBLE,
    CubeAction.NO_DOUBLE_BEAVER, CubeAction.DOUBLE_TAKE, CubeAction.DOUBLE_BEAVER,
    CubeAction.NO_DOUBLE_DEAD_CUBE)], dtype=np.int8)


@dataclasses.dataclass(frozen=True)
class CubeDecisions:
    """Cube decisions of many positions at one cube and score: the fields of
    :class:`CubeDecision`, with an array (one entry per position) for each
    that depends on the probabilities.  ``action`` holds codes into
    :data:`ACTIONS`; ``double_beaver`` is NaN where the taker should not
    beaver; :meth:`decision` gives one row as a :class:`CubeDecision`."""

    probs: np.ndarray
    cube: int
    owner: str
    match: MatchScore | None
    money: MoneyRules | None
    efficiency: np.ndarray
    cubeless_equity: np.ndarray
    no_double: np.ndarray
    double_take: np.ndarray
    double_pass: np.ndarray
    action: np.ndarray
    redouble: bool
    can_double: bool
    cube_dead: bool
    dead_reason: str | None
    beaver: np.ndarray
    take_point_live: np.ndarray | None
    take_point_dead: np.ndarray | None
    cash_point_live: np.ndarray | None
    cash_point_dead: np.ndarray | None
    gammon_price: dict
    gammon_price_after_double: dict
    cubeless_mwc: np.ndarray | None = None
    mwc_no_double: np.ndarray | None = None
    mwc_double_take: np.ndarray | None = None
    mwc_double_pass: np.ndarray | None = None
    double_beaver: np.ndarray | None = None

    def __len__(self) -> int:
        return self.probs.shape[0]

    def action_texts(self) -> list[str]:
        """The action of every row as text (``CubeDecision.action_text``)."""
        texts = [a.text(self.redouble) for a in ACTIONS]
        return [texts[c] for c in self.action.tolist()]

    def decision(self, i: int) -> CubeDecision:
        def at(v):
            return None if v is None else float(v[i])

        beaver = bool(self.beaver[i])
        return CubeDecision(
            probs=tuple(self.probs[i].tolist()), cube=self.cube, owner=self.owner,
            match=self.match, money=self.money, efficiency=at(self.efficiency),
            cubeless_equity=at(self.cubeless_equity), no_double=at(self.no_double),
            double_take=at(self.double_take), double_pass=at(self.double_pass),
            action=ACTIONS[int(self.action[i])], redouble=self.redouble,
            can_double=self.can_double, cube_dead=self.cube_dead, dead_reason=self.dead_reason,
            beaver=beaver, take_point_live=at(self.take_point_live),
            take_point_dead=at(self.take_point_dead), cash_point_live=at(self.cash_point_live),
            cash_point_dead=at(self.cash_point_dead), gammon_price=dict(self.gammon_price),
            gammon_price_after_double=dict(self.gammon_price_after_double),
            cubeless_mwc=at(self.cubeless_mwc), mwc_no_double=at(self.mwc_no_double),
            mwc_double_take=at(self.mwc_double_take), mwc_double_pass=at(self.mwc_double_pass),
            double_beaver=at(self.double_beaver) if beaver else None)


def _decide(p: np.ndarray, cube: int, owner: str, match, money, met, x: np.ndarray,
            exact: np.ndarray | None) -> CubeDecisions:
    """The model behind :func:`cube_decision` and :func:`cube_decisions`:
    ``p`` checked ``float64[N, 5]``, ``x`` efficiencies ``float64[N]``,
    ``exact`` ``float64[N, 3]`` exact money equities (NaN rows: none)."""
    n = p.shape[0]
    ceq = _cubeless(p)
    redouble = owner == "me"

    if match is None:
        rules = money or MoneyRules()
        if rules.jacoby and owner == "centre" and cube > 1:
            raise InvalidCubeError("a centred cube in a money game is at 1")
        can_double = owner != "opp"
        jac = rules.jacoby and owner == "centre"
        d = _decisions(p, False, 1, 1, _PRE, cube, _OWNER_CODES[owner], rules.jacoby,
                       rules.beavers, x, exact, None)
        nd, dt, dp, beaver = d["no_double"], d["double_take"], d["double_pass"], d["beaver"]
        dbeaver = np.where(beaver, 2.0 * dt, np.nan)
        tps = _take_points(p)
        gp_now = 0.0 if jac else 0.5
        gp = {"me": gp_now, "opp": gp_now, "me_backgammon": gp_now, "opp_backgammon": gp_now}
        gp2 = {"me": 0.5, "opp": 0.5, "me_backgammon": 0.5, "opp_backgammon": 0.5}
        return CubeDecisions(
            probs=p, cube=cube, owner=owner, match=None, money=rules, efficiency=x,
            cubeless_equity=(2 * p[:, 0] - 1) if jac else ceq,
            no_double=nd, double_take=dt, double_pass=dp, action=d["action"],
            redouble=redouble, can_double=can_double, cube_dead=False,
            dead_reason=None if can_double else "the opponent owns the cube",
            beaver=beaver, double_beaver=dbeaver,
            take_point_live=d["take_point_live"], take_point_dead=1.0 - tps["cash_dead"],
            cash_point_live=tps["cash_live"], cash_point_dead=tps["cash_dead"],
            gammon_price=gp, gammon_price_after_double=gp2,
        )

    table = _check_match(match, cube, owner, met)
    rows = _match_rows(p, match.away_me, match.away_opp, _state(match), cube,
                       np.full(n, _OWNER_CODES[owner]), x, exact,
                       table)
    if match.crawford:
        dead, reason = True, "no doubling in the Crawford game"
    elif owner == "opp":
        dead, reason = False, "the opponent owns the cube"
    elif cube >= match.away_me:
        dead, reason = True, (
            f"dead cube: a win at cube {cube} already wins the match ({match.away_me}-away)")
    else:
        dead, reason = False, None
    take = None if match.crawford else rows["take_point_live"]
    return CubeDecisions(
        probs=p, cube=cube, owner=owner, match=match, money=None,
        efficiency=rows["efficiency"], cubeless_equity=rows["cubeless_equity"],
        no_double=rows["no_double"], double_take=rows["double_take"],
        double_pass=rows["double_pass"], action=rows["action"],
        redouble=redouble, can_double=reason is None, cube_dead=dead, dead_reason=reason,
        beaver=np.zeros(n, dtype=bool), take_point_live=take,
        take_point_dead=None if take is None else 1.0 - rows["cash_point_dead"],
        cash_point_live=None if take is None else rows["cash_point_live"],
        cash_point_dead=None if take is None else rows["cash_point_dead"],
        gammon_price={k: float(v[0]) for k, v in rows["gammon_price"].items()},
        gammon_price_after_double={k: float(v[0]) for k, v in
                                   rows["gammon_price_after_double"].items()},
        cubeless_mwc=rows["cubeless_mwc"], mwc_no_double=rows["mwc_no_double"],
        mwc_double_take=rows["mwc_double_take"], mwc_double_pass=rows["mwc_double_pass"],
    )


def _state(match: MatchScore) -> int:
    return _CRAWFORD if match.crawford else (_POST if match.post_crawford else _PRE)


def _check_match(match, cube: int, owner: str, met) -> MatchEquityTable:
    """The table ``met``; raises unless ``cube`` and ``owner`` are possible
    at ``match`` with it."""
    if not isinstance(match, MatchScore):
        raise InvalidScoreError(f"match must be a MatchScore, not {type(match).__name__}")
    if match.crawford and (cube != 1 or owner != "centre"):
        raise InvalidCubeError("no doubling in the Crawford game: the cube must be centred at 1")
    if owner == "centre" and cube != 1:
        raise InvalidCubeError("a centred cube in a match is at 1")
    table = get_table(met)
    if max(match.away_me, match.away_opp) > table.max_away:
        raise MissingTableError(
            f"{match.away_me}-away vs {match.away_opp}-away is beyond table {table.name!r} "
            f"(up to {table.max_away}-away); pass a longer table from bgfast.metgen.generate")
    return table


def _match_rows(p: np.ndarray, a, b, state, cube, owner: np.ndarray, x: np.ndarray,
                exact: np.ndarray | None, table: MatchEquityTable, details: bool = True) -> dict:
    """Match cube decisions of rows each at its own score and cube (checked
    by :func:`_check_match`): ``a``/``b`` away, ``state`` (``_PRE``,
    ``_POST``, ``_CRAWFORD``), ``cube`` and ``owner`` codes, one per row or
    shared.  Returns arrays: the fields of :class:`CubeDecisions` (take and
    cash points NaN in the Crawford game) and ``redouble``; without
    ``details`` only the equities, the action and the live take point."""
    n = p.shape[0]
    if n == 0:                      # the model needs a row; the results are sliced to none
        first = [np.asarray(v).reshape(-1)[:1] if np.size(v) else np.zeros(1, dtype=np.int64)
                 for v in (a, b, state, cube, owner)]
        out = _match_rows(np.zeros((1, 5)), *first, np.full(1, CONTACT_EFFICIENCY), None, table)
        return {k: {g: v[:0] for g, v in val.items()} if isinstance(val, dict) else val[:0]
                for k, val in out.items()}
    core = _decisions(p, True, a, b, state, cube, owner, False, False, x, exact, table)
    out = {k: core[k] for k in ("no_double", "double_take", "double_pass", "action",
                                "take_point_live")}
    out["redouble"] = _per_row(owner, n, np.int64) == _OWNER_CODES["me"]
    if details:
        m = _match_model(p, a, b, state, cube, owner, core["x_no_double"], core["x_double_take"],
                         table)
        lo, hi = core["mwc_lose"], core["mwc_double_pass"]
        dead_mwc = m["dead"]
        with np.errstate(divide="ignore", invalid="ignore"):
            ceq = np.where(hi > lo, 2.0 * (dead_mwc - lo) / (hi - lo) - 1.0, 0.0)
        names = ("me", "opp", "me_backgammon", "opp_backgammon")
        gp = m["gammon_prices"]
        out.update({
            "efficiency": core["x_no_double"],
            "cubeless_equity": ceq, "cash_point_live": m["cash_live"],
            "cash_point_dead": m["cash_dead"],
            "gammon_price": {k: gp[:, 0, i] for i, k in enumerate(names)},
            "gammon_price_after_double": {k: gp[:, 1, i] for i, k in enumerate(names)},
            "cubeless_mwc": dead_mwc, "mwc_no_double": core["mwc_no_double"],
            "mwc_double_take": core["mwc_double_take"],
            "mwc_double_pass": core["mwc_double_pass"]})
    return out


_NO_TABLE = (np.zeros((0, 0)), np.zeros(0))


def _decisions(p: np.ndarray, match, a, b, state, cube, owner, jacoby, beavers, x,
               exact: np.ndarray | None, table: MatchEquityTable | None) -> dict:
    """The kernel's decisions (:func:`bgfast._cube.decide_rows`) of checked
    rows ``p``, money or match (``match``), each argument one value or one
    per row; ``exact`` ``float64[n, 3]`` with NaN rows, or None; ``table``
    for match rows (None: money rows only)."""
    n = p.shape[0]
    cols = [np.asarray(v, dtype=np.int64) for v in (match, a, b, state, cube, owner, jacoby,
                                                     beavers)]
    if all(c.ndim == 0 for c in cols):          # one context for every row
        params, ctx = np.array([cols], dtype=np.int64), np.zeros(n, dtype=np.int32)
    else:
        params = np.stack([np.broadcast_to(c, (n,)) for c in cols], axis=1)
        ctx = np.arange(n, dtype=np.int32)
    res = _context_decisions(p, ctx, params, _per_row(x, n, np.float64), exact, table)
    return {k: np.ascontiguousarray(v) for k, v in res.items()}   # columns of one matrix: own arrays


def _context_decisions(p: np.ndarray, ctx: np.ndarray, params: np.ndarray, x: np.ndarray,
                       exact: np.ndarray | None, table: MatchEquityTable | None,
                       values: np.ndarray | None = None) -> dict:
    """:func:`bgfast._cube.decide_rows` of checked rows ``p``, row i at the
    cube context ``params[ctx[i]]`` (match, a, b, state, cube, owner code,
    jacoby, beavers); ``values`` receives the kernel's value columns."""
    pre, post = _NO_TABLE if table is None else (table.pre, table.post)
    return _k.decide_rows(np.ascontiguousarray(p, dtype=np.float64),
                          np.ascontiguousarray(ctx, dtype=np.int32),
                          np.ascontiguousarray(params, dtype=np.int64),
                          np.ascontiguousarray(x, dtype=np.float64),
                          np.full((p.shape[0], 3), np.nan) if exact is None
                          else np.ascontiguousarray(exact, dtype=np.float64),
                          np.ascontiguousarray(pre, dtype=np.float64),
                          np.ascontiguousarray(post, dtype=np.float64), _EPS, _KERNEL_CODES,
                          values)


def _check_efficiency(x: np.ndarray, given) -> None:
    if not np.all((x >= 0.0) & (x <= 1.0)):
        raise InvalidCubeError(f"cube efficiency must lie in [0, 1], not {given}")


def _check_rules(match, money) -> None:
    if match is not None and money is not None:
        raise InvalidCubeError("give either a match score or money-game rules, not both")


def cube_decision(probs: Sequence[float], *, cube: int = 1, owner: str = "centre",
                  match: MatchScore | None = None, money: MoneyRules | None = None,
                  met: MatchEquityTable | str | None = None,
                  efficiency: float | None = None, position=None,
                  exact_money: Sequence[float] | None = None) -> CubeDecision:
    """Cube analysis for the player on roll.

    ``probs``: the 5 cubeless probabilities.  ``cube``/``owner``: cube value
    and who owns it (``'centre'``, ``'me'``, ``'opp'``).  Give ``match`` (a
    :class:`MatchScore`) for match play, else money play with ``money``
    (:class:`MoneyRules`).  ``efficiency`` defaults to the value for
    ``position`` (see :func:`cube_efficiency`) or 0.68.

    ``exact_money``: exact cubeful money equities per unit cube
    ``(centred, owned by me, owned by the opponent)`` for the player on roll,
    as a two-sided bear-off database gives them.  In money play they replace
    Janowski's estimate; in a match they give an effective cube efficiency
    for each cube state, ``(E_exact - E_dead) / (E_live - E_dead)`` in money
    terms, limited to ``[0, efficiency]``.

    This is :func:`cube_decisions` for one position.
    """
    p = _rows(probs)
    cube, owner = _check_cube(cube, owner)
    _check_rules(match, money)
    if efficiency is None:
        efficiency = cube_efficiency(position) if position is not None else CONTACT_EFFICIENCY
    x = np.array([float(efficiency)])
    _check_efficiency(x, efficiency)
    exact = None
    if exact_money is not None:
        exact = np.asarray(exact_money, dtype=np.float64).reshape(-1)
        if exact.shape != (3,) or not np.all(np.isfinite(exact)):
            raise InvalidCubeError("exact_money must be 3 equities: centred, owned, opponent owns")
        exact = exact[None]
    return _decide(p, cube, owner, match, money, met, x, exact).decision(0)


def decide_cube(position, context, probs, exact_money=None) -> CubeDecision:
    """The :class:`CubeDecision` of the player on roll in ``position`` at
    ``context`` (anything :meth:`CubeContext.of` takes) from its cubeless
    ``probs``, with the cube efficiency of the position.  ``exact_money``:
    the exact cubeful money equities (centred, owned, the opponent owns) of
    a two-sided bear-off (None, or NaN: none); they replace Janowski's
    except under the Jacoby rule, where the table (no Jacoby) does not
    apply."""
    ctx = CubeContext.of(context)
    if exact_money is not None:
        exact_money = np.asarray(exact_money, dtype=np.float64).reshape(-1)
        if ctx.rules.jacoby or not np.isfinite(exact_money).all():
            exact_money = None
    return cube_decision(probs, position=position, exact_money=exact_money,
                         **ctx.decision_args())


def _float_array(values, what: str) -> np.ndarray:
    """``values`` as a float64 array, or :class:`InvalidCubeError` for what
    is not numbers (numpy would raise TypeError or ValueError)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidCubeError(f"{what} must be numbers, not {values!r:.60}") from None


def cube_decisions(probs, *, cube: int = 1, owner: str = "centre",
                   match: MatchScore | None = None, money: MoneyRules | None = None,
                   met: MatchEquityTable | str | None = None, efficiency=CONTACT_EFFICIENCY,
                   exact_money=None) -> CubeDecisions:
    """:func:`cube_decision` for many positions at one cube and score, in
    arrays: ``probs`` ``float64[N, 5]``, ``efficiency`` a number or one per
    position (see :func:`cube_efficiencies`), ``exact_money`` ``float64[N,
    3]`` with NaN rows where there is no exact value.  Row ``i`` of the
    result is exactly ``cube_decision`` of row ``i``."""
    p = _float_array(probs, "probabilities")
    if p.ndim != 2 or p.shape[1] != 5:
        raise InvalidCubeError(f"probabilities must have shape (N, 5), not {p.shape}")
    clipped, status = _checked(p)
    bad = np.flatnonzero(status)
    if bad.size:
        try:
            _check_probs(p[bad[0]])
        except InvalidCubeError as exc:
            raise InvalidCubeError(f"row {int(bad[0])}: {exc}") from None
    p = clipped
    cube, owner = _check_cube(cube, owner)
    _check_rules(match, money)
    try:
        x = np.array(np.broadcast_to(_float_array(efficiency, "efficiency"), (p.shape[0],)))
    except ValueError:                  # not broadcastable: numpy's own message
        raise InvalidCubeError(f"efficiency must be one number or one per position "
                               f"({p.shape[0]}), not {np.shape(efficiency)}") from None
    _check_efficiency(x, efficiency)
    exact = None
    if exact_money is not None:
        exact = _float_array(exact_money, "exact_money")
        if exact.size != 3 * p.shape[0]:
            raise InvalidCubeError(f"exact_money must have shape ({p.shape[0]}, 3), "
                                   f"not {exact.shape}")
        exact = exact.reshape(p.shape[0], 3)
        if np.isinf(exact).any():
            raise InvalidCubeError("exact_money must be finite (NaN rows: no exact value)")
    return _decide(p, cube, owner, match, money, met, x, exact)


# ---------------------------------------------------------------------------
# the cube context
# ---------------------------------------------------------------------------

_C = ContextColumn


@dataclasses.dataclass(frozen=True)
class CubeContext:
    """The cube and the score, seen from the player on roll: one type for
    money and match play.

    ``cube`` is the cube value (a power of 2), ``owner`` an :class:`Owner`
    (any spelling :func:`normalize_owner` accepts is converted), ``score``
    the :class:`MatchScore` of a match (None: a money game), ``rules`` a
    money game's :class:`MoneyRules` and ``met`` a match's equity table (a
    name, a :class:`MatchEquityTable`, or None for the default table).

    Build one with :meth:`money`, :meth:`match`, :meth:`from_away`,
    :meth:`from_match_state` (a Match ID or XGID), :meth:`from_game` or
    :meth:`of` (any of those).  A context that cannot occur raises what ``bgfast cube`` reports:
    :class:`InvalidCubeError` (a cube value that is not a power of 2, a
    turned cube in the Crawford game, a centred cube above 1 in a match or
    under the Jacoby rule, an unknown owner), :class:`InvalidScoreError`
    (an impossible score) or :class:`MissingTableError` (a score beyond the
    table).
    """

    cube: int = 1
    owner: Owner = Owner.CENTRE
    score: MatchScore | None = None
    rules: MoneyRules = MoneyRules()
    met: str | MatchEquityTable | None = None

    def __post_init__(self):
        cube, owner = _check_cube(self.cube, self.owner)
        object.__setattr__(self, "cube", cube)
        object.__setattr__(self, "owner", Owner(owner))
        if not isinstance(self.rules, MoneyRules):
            raise InvalidCubeError(f"rules must be MoneyRules, not {type(self.rules).__name__}")
        if self.score is None:
            if self.met is not None:
                raise InvalidCubeError("a match equity table is for match play, not a money game")
            if self.rules.jacoby and owner == "centre" and cube > 1:
                raise InvalidCubeError("a centred cube in a money game is at 1")
        else:
            if self.rules != MoneyRules():
                raise InvalidCubeError("the Jacoby rule and beavers are money-game rules, not a match's")
            _check_match(self.score, cube, owner, self.met)

    # -- named constructors -------------------------------------------------

    @classmethod
    def money(cls, cube: int = 1, owner="centre", *, jacoby: bool = False,
              beavers: bool = False) -> "CubeContext":
        """A money game with the cube at ``cube``, owned by ``owner``."""
        return cls(cube, owner, None, MoneyRules(jacoby=bool(jacoby), beavers=bool(beavers)))

    @classmethod
    def match(cls, length: int, score_me: int, score_opp: int, *, cube: int = 1, owner="centre",
              crawford: bool = False, post_crawford: bool | None = None,
              met=None) -> "CubeContext":
        """A match to ``length`` at ``score_me``-``score_opp`` (points won).
        A score where one side needs 1 point is the Crawford game with
        ``crawford``, else post-Crawford; ``post_crawford`` (when given)
        must agree."""
        score = MatchScore(length, score_me, score_opp, bool(crawford))
        if post_crawford is not None and bool(post_crawford) != score.post_crawford:
            one = score.away_me == 1 or score.away_opp == 1
            if not one:
                raise InvalidScoreError(
                    f"score {score_me}-{score_opp} to {length} cannot be post-Crawford: "
                    "neither side needs exactly 1 point")
            raise InvalidScoreError(
                "the Crawford game cannot be post-Crawford" if crawford else
                f"at {score_me}-{score_opp} to {length} a side needs 1 point: the game is "
                "the Crawford game (crawford=True) or post-Crawford")
        return cls(cube, owner, score, MoneyRules(), met)

    @classmethod
    def from_away(cls, away_me: int, away_opp: int, *, length: int | None = None, cube: int = 1,
                  owner="centre", crawford: bool = False, post_crawford: bool | None = None,
                  met=None) -> "CubeContext":
        """A match by away scores (``length`` defaults to the larger one)."""
        s = MatchScore.from_away(away_me, away_opp, crawford=bool(crawford), length=length)
        return cls.match(s.length, s.score_me, s.score_opp, cube=cube, owner=owner,
                         crawford=crawford, post_crawford=post_crawford, met=met)

    @classmethod
    def from_match_state(cls, state: MatchState, xgid=None, *, met=None) -> "CubeContext":
        """The context of a :class:`bgfast.formats.MatchState` (a Match ID's
        or an XGID's) for its player on roll; ``xgid`` (the
        :class:`bgfast.formats.XGID` ``state`` came from) adds the money
        beaver rule a Match ID lacks."""
        me = state.player_on_roll
        if state.cube_owner == CubeOwner.CENTRED:
            owner = Owner.CENTRE
        else:
            owner = Owner.ME if int(state.cube_owner) == me else Owner.OPP
        if state.match_length == 0:
            beavers = bool(xgid is not None and xgid.match_length == 0 and xgid.rules & 2)
            return cls.money(state.cube_value, owner, jacoby=state.jacoby, beavers=beavers)
        return cls.match(state.match_length, state.score[me], state.score[1 - me],
                         cube=state.cube_value, owner=owner, crawford=state.crawford, met=met)

    @classmethod
    def from_game(cls, game, player: int, *, met=None) -> "CubeContext":
        """The context of a :class:`bgfast.game.Game` seen from ``player``."""
        if game.cube_owner is None:
            owner = Owner.CENTRE
        else:
            owner = Owner.ME if game.cube_owner == player else Owner.OPP
        if game.is_money:
            return cls.money(game.cube_value, owner, jacoby=game.rules.jacoby,
                             beavers=game.rules.beaver)
        return cls.match(game.match_length, game.score[player], game.score[1 - player],
                         cube=game.cube_value, owner=owner, crawford=game.crawford, met=met)

    @classmethod
    def of(cls, value) -> "CubeContext":
        """``value`` as a context: a CubeContext as it is, a MatchState or a
        :class:`bgfast.game.Game`'s ``(game, player)``."""
        if isinstance(value, CubeContext):
            return value
        if isinstance(value, MatchState):
            return cls.from_match_state(value)
        if _is_game_pair(value):
            return cls.from_game(*value)
        raise InvalidCubeError(f"not a cube context: {value!r}")

    # -- what it says ---------------------------------------------------------

    @property
    def is_money(self) -> bool:
        return self.score is None

    @property
    def table(self) -> MatchEquityTable | None:
        """The match equity table (None in a money game)."""
        return None if self.score is None else get_table(self.met)

    @property
    def crawford(self) -> bool:
        return self.score is not None and self.score.crawford

    @property
    def post_crawford(self) -> bool:
        return self.score is not None and self.score.post_crawford

    @property
    def cube_dead(self) -> bool:
        """The player on roll's cube gains it nothing: the Crawford game, or
        a win at the cube value already wins him the match."""
        return self.score is not None and (self.score.crawford or self.cube >= self.score.away_me)

    @property
    def can_double(self) -> bool:
        """Whether the player on roll may double now (a live cube he has access to)."""
        return self.owner != Owner.OPP and not self.cube_dead

    def flipped(self) -> "CubeContext":
        """The same context seen from the opponent."""
        return dataclasses.replace(self, owner=self.owner.flipped(),
                                   score=None if self.score is None else self.score.swap())

    def doubled(self) -> "CubeContext":
        """The context after the player on roll doubles and the opponent
        takes (seen from the doubler)."""
        return dataclasses.replace(self, cube=2 * self.cube, owner=Owner.OPP)

    def kernel_row(self) -> tuple:
        """The kernel's integers (:data:`ContextColumn` order)."""
        code = _OWNER_CODES[self.owner.value]
        if self.score is None:
            return (0, 1, 1, _PRE, self.cube, code, int(self.rules.jacoby), int(self.rules.beavers))
        return (1, self.score.away_me, self.score.away_opp, _state(self.score), self.cube, code,
                0, 0)

    def cube_mwcs(self) -> tuple[float, float]:
        """A match's MWCs for the player on roll after losing and after
        winning the cube's points (the ends of the EMG scale)."""
        if self.score is None:
            raise InvalidCubeError("a money game has no match winning chances")
        t = self.table
        _, win, lose = _k.context_values(np.array([self.kernel_row()], dtype=np.int64),
                                         np.ascontiguousarray(t.pre, dtype=np.float64),
                                         np.ascontiguousarray(t.post, dtype=np.float64))
        return float(lose[0]), float(win[0])

    def emg(self, mwc):
        """MWCs at this match context as EMG: normalised between losing (-1)
        and winning (+1) the cube's points, as gnubg normalises them (an
        array for an array, a float for a number)."""
        lose, win = self.cube_mwcs()
        m = np.atleast_1d(np.asarray(mwc, dtype=np.float64))
        out = _k.normalised(np.ascontiguousarray(m), np.full(m.size, lose), np.full(m.size, win))
        return float(out[0]) if np.ndim(mwc) == 0 else out.reshape(np.shape(mwc))

    def kernel_constants(self) -> dict:
        """What the cube kernel is called with beside the context: the cube
        efficiencies ``eff`` (float64[6]), the equality margin ``eps``, the
        probability tolerance ``tol`` and the match table's ``pre`` and
        ``post`` arrays (empty for money)."""
        pre, post = _NO_TABLE if self.score is None else (self.table.pre, self.table.post)
        return {"eff": _EFFICIENCY, "eps": _EPS, "tol": _TOL,
                "pre": np.ascontiguousarray(pre, dtype=np.float64),
                "post": np.ascontiguousarray(post, dtype=np.float64)}

    def decision_args(self) -> dict:
        """The keywords of :func:`cube_decision` / :func:`cube_decisions` for this context."""
        return {"cube": self.cube, "owner": self.owner.value, "match": self.score,
                "money": self.rules if self.score is None else None,
                "met": None if self.score is None else self.met}

    @functools.cached_property
    def label(self) -> str:
        """The short text of the analysis rows, ``bgfast show`` and hints:
        ``money, cube 1 (centre)``, ``2-4 to 7, cube 2 (opp)``, with
        ``, Crawford`` in the Crawford game."""
        s = self.score
        where = "money" if s is None else f"{s.score_me}-{s.score_opp} to {s.length}"
        return (f"{where}, cube {self.cube} ({self.owner.value})"
                + (", Crawford" if self.crawford else ""))

    def describe(self) -> str:
        """The context in words: ``money (Jacoby), cube 2 owned by me``,
        ``match to 7, 6-4 (1-away, 3-away, Crawford), cube 1 centred``."""
        owner = {"centre": "centred", "me": "owned by me", "opp": "owned by the opponent"}[self.owner]
        if self.score is None:
            rules = [r for r, on in (("Jacoby", self.rules.jacoby), ("beavers", self.rules.beavers))
                     if on]
            where = "money" + (f" ({', '.join(rules)})" if rules else "")
        else:
            s = self.score
            state = ", Crawford" if s.crawford else ", post-Crawford" if s.post_crawford else ""
            where = (f"match to {s.length}, {s.score_me}-{s.score_opp} "
                     f"({s.away_me}-away, {s.away_opp}-away{state})")
        return f"{where}, cube {self.cube} {owner}"

    def to_dict(self) -> dict:
        d = {"mode": "money" if self.score is None else "match", "cube": self.cube,
             "owner": self.owner.value}
        if self.score is None:
            d["money"] = {"jacoby": self.rules.jacoby, "beavers": self.rules.beavers}
        else:
            s = self.score
            d["match"] = {"length": s.length, "score": [s.score_me, s.score_opp],
                          "away": [s.away_me, s.away_opp], "crawford": s.crawford,
                          "post_crawford": s.post_crawford, "met": self.table.name}
        return d


def _is_game_pair(value) -> bool:
    """Whether ``value`` is a ``(game, player)`` pair."""
    return isinstance(value, tuple) and len(value) == 2 and hasattr(value[0], "cube_owner")


def _context_rows(cube, n: int):
    """Contexts for ``n`` rows (one context, or one per row, each anything
    :meth:`CubeContext.of` takes) as ``(contexts tuple, kernel rows
    int64[k, 8] of the distinct ones, index int32[n] into them, the MET)``.
    Money rows are per unit of cube (their cube column 1).  Every match
    context must use the same MET."""
    if isinstance(cube, list) or (isinstance(cube, tuple) and not _is_game_pair(cube)):
        given = list(cube)
        if len(given) != n:
            raise InvalidCubeError(f"{len(given)} cube contexts for {n} positions")
        seen = {}                       # by identity first: one conversion per object given
        for c in given:
            if id(c) not in seen:
                seen[id(c)] = CubeContext.of(c)
        contexts = tuple(seen[id(c)] for c in given)
        distinct, first = {}, {}
        for key, c in seen.items():
            first[key] = distinct.setdefault(c, len(distinct))
        index = np.fromiter((first[id(c)] for c in given), dtype=np.int32, count=n)
    else:
        one = CubeContext.of(cube)
        contexts = (one,) * n
        distinct = {one: 0}
        index = np.zeros(n, dtype=np.int32)
    rows = np.array([c.kernel_row() for c in distinct] or np.zeros((0, 8)), dtype=np.int64)
    rows = rows.reshape(-1, len(ContextColumn))
    rows[rows[:, _C.MATCH] == 0, _C.CUBE] = 1
    tables = {id(c.table): c.table for c in distinct if c.score is not None}
    if len(tables) > 1:
        raise InvalidCubeError("the match contexts of one call must share one match equity table")
    met = next(iter(tables.values())) if tables else None
    return contexts, rows, index, met


# ---------------------------------------------------------------------------
# cubeful values: 0 plies (Janowski) and n plies (the cubeful search)
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class CubefulValues:
    """Cubeful values of positions for the player on roll, each at its own
    :class:`CubeContext`, at ``plies``.

    Equities are per unit of the current cube, as in :class:`CubeDecision`:
    money equities, or at a match score the MWCs normalised between losing
    (-1) and winning (+1) the current cube's points (gnubg's EMG, the
    normalised money equivalent).  ``equity`` is the position's value to
    the player on roll after his proper cube action (``action``, codes into
    :data:`ACTIONS`); ``no_double``, ``double_take`` (a plain take; with a
    beaver, ``beaver`` is set and the doubler gets twice that) and
    ``double_pass`` are its options.  The ``mwc*`` arrays hold the MWCs
    (NaN in money rows).  ``probs`` are the cubeless probabilities at
    ``plies`` (clipped to be consistent, as the cube model reads them):
    above 0, the average over the rolls along the plays the cubeful search
    chose; ``cubeless_equity`` is their equity (a match row's cubeless MWC
    normalised like the others; with the Jacoby rule and a centred cube,
    gammons not counted)."""

    contexts: tuple
    plies: int
    probs: np.ndarray
    cubeless_equity: np.ndarray
    equity: np.ndarray
    no_double: np.ndarray
    double_take: np.ndarray
    double_pass: np.ndarray
    action: np.ndarray
    beaver: np.ndarray
    cubeless_mwc: np.ndarray
    mwc: np.ndarray
    mwc_no_double: np.ndarray
    mwc_double_take: np.ndarray
    mwc_double_pass: np.ndarray

    def __len__(self) -> int:
        return self.probs.shape[0]

    def to_dict(self, i: int) -> dict:
        """Row ``i`` as a JSON-ready dict: the context, the probabilities,
        the cubeless and cubeful values and the action (MWCs in a match)."""
        ctx = self.contexts[i]
        act = ACTIONS[int(self.action[i])]
        d = {"context": ctx.to_dict(), "plies": self.plies,
             "probs": [float(v) for v in self.probs[i]],
             "cubeless_equity": float(self.cubeless_equity[i]),
             "equity": float(self.equity[i]),
             "equities": {"no_double": float(self.no_double[i]),
                          "double_take": float(self.double_take[i]),
                          "double_pass": float(self.double_pass[i])},
             "action": act.value, "action_text": act.text(ctx.owner == Owner.ME),
             "beaver": bool(self.beaver[i])}
        if not ctx.is_money:
            d["mwc"] = {"cubeless": float(self.cubeless_mwc[i]), "cubeful": float(self.mwc[i]),
                        "no_double": float(self.mwc_no_double[i]),
                        "double_take": float(self.mwc_double_take[i]),
                        "double_pass": float(self.mwc_double_pass[i])}
        return d


_VALUE_COLUMNS = {name: j for j, name in enumerate(_k.CUBEFUL_COLUMNS)}
_OVER = int(PositionClass.OVER)
_BEAROFF = int(PositionClass.BEAROFF)


def _flipped(params: np.ndarray) -> np.ndarray:
    """Context rows seen from the other side: the away scores swapped, the
    owner flipped."""
    out = params.copy()
    out[:, _C.AWAY_ME] = params[:, _C.AWAY_OPP]
    out[:, _C.AWAY_OPP] = params[:, _C.AWAY_ME]
    own = params[:, _C.OWNER]
    out[:, _C.OWNER] = np.where(own == 1, 2, np.where(own == 2, 1, own))
    return out


def _doubled(params: np.ndarray) -> np.ndarray:
    """Context rows after a double and a take, seen from the doubler: the
    opponent owns the cube (a match's cube doubled; money rows stay per
    unit of cube), the Jacoby rule no longer applies."""
    out = params.copy()
    match = params[:, _C.MATCH] != 0
    out[match, _C.CUBE] *= 2
    out[:, _C.OWNER] = 2
    out[:, _C.JACOBY] = 0
    return out


def _row_keys(*arrays) -> np.ndarray:
    """One opaque key per row of the arrays (their bytes side by side), for np.unique."""
    parts = [np.ascontiguousarray(a).reshape(a.shape[0], -1).view(np.uint8) for a in arrays]
    joined = np.ascontiguousarray(np.concatenate(parts, axis=1))
    return joined.view(np.dtype((np.void, joined.shape[1]))).ravel()


class _Search:
    """One cubeful search: the evaluator (anything with ``evaluate_batch``),
    the exact two-sided bear-off table with cubeful values (or None), the
    MET of its match rows.  ``leaves(boards, params)`` may replace the
    0-ply values (a dict of the kernel's :data:`CUBEFUL_COLUMNS` arrays,
    ``action`` and ``beaver``), for tests that plug in exact values."""

    def __init__(self, ev, table=None, met: MatchEquityTable | None = None, leaves=None):
        self.ev = ev
        self.table = table if table is not None and getattr(table, "cubeful", False) else None
        self.met = met
        pre, post = _NO_TABLE if met is None else (met.pre, met.post)
        self.pre = np.ascontiguousarray(pre, dtype=np.float64)
        self.post = np.ascontiguousarray(post, dtype=np.float64)
        self.leaves = leaves

    # -- 0 plies --------------------------------------------------------------

    def probs(self, boards: np.ndarray) -> np.ndarray:
        """The evaluator's 0-ply probabilities of boards."""
        return np.ascontiguousarray(self.ev.evaluate_batch(boards), dtype=np.float64)

    def exact(self, boards: np.ndarray, classes: np.ndarray | None = None):
        """``(rows, equities float64[k, 3])``: the boards inside the exact
        table and their exact cubeful money equities (no double now:
        centred, owned, the opponent owns); ``classes`` (their position
        classes) when known."""
        if self.table is None or boards.shape[0] == 0:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 3))
        cls = board_classes(boards) if classes is None else classes
        home = np.flatnonzero(cls == _BEAROFF)
        if home.size == 0:
            return home, np.zeros((0, 3))
        hit = self.table.probe_batch(boards[home])
        inside = hit["inside"]
        return home[inside], hit["cubeful_no_double"][inside]

    def leaf(self, boards, probs, ctx: np.ndarray, params: np.ndarray,
             movers: np.ndarray | None = None, every_double: bool = False,
             index: np.ndarray | None = None) -> dict:
        """0-ply values of rows ``(boards[i], params[ctx[i]])`` from their
        probabilities (the kernel :func:`bgfast._cube.cubeful_rows`; the
        rows the exact table covers again with its equities); ``movers``:
        the contexts (row for row with ``params``) of the sides whose plays
        gave the boards, for the ``mover_*`` columns; ``every_double``:
        double/take also where the side on roll may not double; ``index``:
        row i is board ``index[i]`` (many rows, one board)."""
        ctx = np.ascontiguousarray(ctx, dtype=np.int32)
        if self.leaves is not None:
            b = boards if index is None else boards[index]
            out = self.leaves(b, params[ctx])
            if movers is not None:
                out["mover_value"], out["mover_equity"] = self._mover(out["value"], ctx, movers)
            return out
        vals, act, beaver = self._kernel(_k.cubeful_rows, boards, probs, ctx, params,
                                         (_KERNEL_CODES, movers, every_double), index)
        out = {name: vals[:, j] for name, j in _VALUE_COLUMNS.items()}
        out["action"] = act
        out["beaver"] = beaver
        return out

    def mover_leaf(self, boards, probs, ctx: np.ndarray, params: np.ndarray,
                   movers: np.ndarray, index: np.ndarray | None = None):
        """``(mover_value, mover_equity)`` of :meth:`leaf` (the values of the
        plays that gave the boards to the sides that made them), from the
        kernel :func:`bgfast._cube.play_rows`, which writes those two
        columns alone."""
        if self.leaves is not None:
            out = self.leaf(boards, probs, ctx, params, movers, index=index)
            return out["mover_value"], out["mover_equity"]
        ctx = np.ascontiguousarray(ctx, dtype=np.int32)
        return tuple(self._kernel(_k.play_rows, boards, probs, ctx, params, (movers,), index))

    def _kernel(self, kernel, boards, probs, ctx: np.ndarray, params: np.ndarray, extra: tuple,
                index: np.ndarray | None) -> list:
        """The arrays ``kernel`` (:func:`bgfast._cube.cubeful_rows` or
        :func:`~bgfast._cube.play_rows`, with its arguments after ``tol``
        ``extra``) gives of the rows, before its status and classes: an
        inconsistent row of probabilities raises, and the rows the exact
        table covers are valued again with its equities."""
        probs = np.ascontiguousarray(probs, dtype=np.float64)
        if index is not None:
            index = np.ascontiguousarray(index, dtype=np.int64)
        *vals, status, cls = kernel(probs, ctx, params, boards, _EFFICIENCY, None, self.pre,
                                    self.post, _EPS, _TOL, *extra, index)
        bad = np.flatnonzero(status)
        if bad.size:
            at = int(bad[0] if index is None else index[bad[0]])
            raise InvalidCubeError(f"the evaluator gave inconsistent probabilities for board "
                                   f"{at}: {probs[at].tolist()}")
        home = np.flatnonzero(cls == _BEAROFF)
        if home.size and self.table is not None:
            at = home if index is None else index[home]
            inside, eq = self.exact(boards[at], cls[home])
            if inside.size:
                rows, at = home[inside], at[inside]
                again = kernel(probs[at], ctx[rows], params, boards[at], _EFFICIENCY, eq,
                               self.pre, self.post, _EPS, _TOL, *extra)
                for whole, part in zip(vals, again):
                    whole[rows] = part
        return vals

    def _mover(self, value: np.ndarray, ctx: np.ndarray, movers: np.ndarray):
        """The kernel's ``mover_value`` and ``mover_equity`` of values to
        the side on roll (``ctx`` into ``movers``, the contexts of the
        sides that moved): minus the value (money) or 1 minus it (match),
        and that normalised by the mover's cube (match)."""
        match = movers[:, _C.MATCH] != 0
        mover = np.where(match, 1.0, 0.0)[ctx] - value
        if not match.any():
            return mover, mover
        _, win, lose = _k.context_values(movers, self.pre, self.post)
        on = match[ctx]
        equity = np.where(on, _k.normalised(np.where(on, mover, 0.0), lose[ctx], win[ctx]), mover)
        return mover, equity

    # -- n plies --------------------------------------------------------------

    def values(self, boards: np.ndarray, params: np.ndarray, plies: int,
               every_double: bool = False) -> dict:
        """The values of rows ``(boards[i], params[i])`` at ``plies``, in each
        row's currency (money per unit of cube, match MWC):
        :data:`CUBEFUL_COLUMNS`, ``action``, ``beaver`` and ``probs``.  The
        double/take value is searched where the side on roll may double (at
        every row with ``every_double``; NaN elsewhere)."""
        n = boards.shape[0]
        can, dp, lose = _k.context_values(params, self.pre, self.post)
        can = can.view(bool)
        over = board_classes(boards) == _OVER if plies > 0 else np.ones(n, dtype=bool)
        out = {"no_double": np.empty(n), "double_take": np.full(n, np.nan), "double_pass": dp,
               "value": np.empty(n), "lose": lose, "action": np.empty(n, dtype=np.int8),
               "beaver": np.zeros(n, dtype=bool), "probs": np.empty((n, 5))}
        if over.any():
            rows = np.flatnonzero(over)
            probs = self.probs(boards[rows])
            leaf = self.leaf(boards[rows], probs, np.arange(rows.size), params[rows],
                             every_double=every_double)
            for name in ("no_double", "double_take", "value", "action", "beaver"):
                out[name][rows] = leaf[name]
            out["probs"][rows] = probs
        live = np.flatnonzero(~over)
        if live.size == 0:
            return out
        dt_rows = live[can[live] | every_double]
        nd, probs = self._no_double(
            np.concatenate([boards[live], boards[dt_rows]]),
            np.concatenate([params[live], _doubled(params[dt_rows])]), plies)
        out["no_double"][live] = nd[:live.size]
        out["probs"][live] = probs[:live.size]
        money = params[dt_rows, _C.MATCH] == 0
        out["double_take"][dt_rows] = np.where(money, 2.0, 1.0) * nd[live.size:]
        beavers = (params[live, _C.BEAVERS] != 0).astype(np.uint8)
        value, action, beaver = _k.node_values(out["no_double"][live], out["double_take"][live],
                                               dp[live], can[live].view(np.uint8), beavers, _EPS,
                                               _KERNEL_CODES)
        out["value"][live] = value
        out["action"][live] = action
        out["beaver"][live] = beaver
        return out

    def _no_double(self, boards: np.ndarray, params: np.ndarray, plies: int):
        """The no-double values (each row's currency) and probabilities of
        rows that are not finished, at ``plies`` >= 1: the average over the
        21 rolls of the value, to the side on roll, of its best play by the
        0-ply cubeful value (the first best in generation order), that play
        valued at ``plies - 1`` with the opponent's cube decision; a roll
        that cannot be played passes the turn."""
        _, first, inverse = np.unique(_row_keys(boards, params), return_index=True,
                                      return_inverse=True)
        ub, up = boards[first], params[first]
        m = first.size
        _, bfirst, binv = np.unique(_row_keys(ub), return_index=True, return_inverse=True)
        nb = bfirst.size
        nr = len(ALL_ROLLS)
        rep = np.repeat(ub[bfirst], nr, axis=0)
        offsets, res = legal_plays_batch(rep, np.tile(ALL_ROLLS, (nb, 1)), validate=False)
        probs = self.probs(res)
        child = _flipped(up)
        # every (row, roll): its group of plays, read in place (no copies of the boards)
        group = (binv.reshape(-1)[:, None] * nr + np.arange(nr)).ravel()
        size = np.diff(offsets)[group]
        row = np.repeat(np.arange(m), nr)
        has = np.flatnonzero(size > 0)
        start = np.cumsum(size) - size
        entry = np.repeat(np.arange(group.size), size)
        play = np.arange(entry.size) - start[entry] + offsets[group][entry]
        mover, _ = self.mover_leaf(res, probs, row[entry], child, up, index=play)
        # the first best of each group
        best = np.maximum.reduceat(mover, start[has]) if has.size else np.zeros(0)
        at = np.where(mover == np.repeat(best, size[has]), np.arange(entry.size), entry.size)
        chosen = play[np.minimum.reduceat(at, start[has])] if has.size else np.zeros(0, np.int64)
        lost = np.flatnonzero(size == 0)
        passed = rep[group[lost]][:, ::-1, :].copy() if lost.size else res[:0]
        v = np.empty(group.size)
        p = np.empty((group.size, 5))
        if plies == 1:
            v[has] = best
            p[has] = probs[chosen]
            if lost.size:
                pp = self.probs(passed)
                v[lost] = self.mover_leaf(passed, pp, row[lost], child, up)[0]
                p[lost] = pp
        else:
            order = np.concatenate([has, lost])
            sub = self.values(np.concatenate([res[chosen], passed]), child[row[order]],
                              plies - 1)
            base = np.where(up[:, _C.MATCH] != 0, 1.0, 0.0)
            v[order] = base[row[order]] - sub["value"]
            p[order] = sub["probs"]
        p = _invert(p)
        nd = (v.reshape(m, nr) * ROLL_WEIGHTS).sum(axis=1) / 36.0
        pr = (p.reshape(m, nr, 5) * ROLL_WEIGHTS[None, :, None]).sum(axis=1) / 36.0
        return nd[inverse.reshape(-1)], pr[inverse.reshape(-1)]

    # -- results ---------------------------------------------------------------

    def play_values(self, results: np.ndarray, onroll_probs: np.ndarray, ctx: np.ndarray,
                    params: np.ndarray, plies: int = 0):
        """The values of plays to their movers: ``results`` (opponent on
        roll; ``onroll_probs`` their 0-ply probabilities for him), play i
        made at the mover's context ``params[ctx[i]]``.  Returns ``(value,
        equity, probs)``: the value in the mover's currency (money equity
        per unit of cube, match MWC), the equity (money: the same; match:
        the MWC normalised by the mover's cube, EMG) and, above 0 plies, the
        mover's probabilities along the search (None at 0 plies)."""
        child = _flipped(params)
        if plies == 0:
            value, equity = self.mover_leaf(results, onroll_probs, ctx, child, params)
            return value, equity, None
        sub = self.values(results, child[ctx], plies)
        value, equity = self._mover(sub["value"], ctx, params)
        return value, equity, _invert(sub["probs"])


def _invert(p: np.ndarray) -> np.ndarray:
    """Probabilities seen from the other player."""
    return np.stack([1 - p[:, 0], p[:, 3], p[:, 4], p[:, 1], p[:, 2]], axis=-1)


def cubeful_values(ev, boards, cube, plies: int = 0, *, table=None,
                   leaves=None) -> CubefulValues:
    """Cubeful values (:class:`CubefulValues`) of ``boards`` for the player
    on roll at ``cube`` (one context or one per board, anything
    :meth:`CubeContext.of` takes) with the evaluator object ``ev`` and the
    exact two-sided bear-off ``table`` (cubeful; None: no exact values).

    0 plies: Janowski's model of :func:`cube_decision` on the evaluator's
    probabilities, with the table's exact money equities where it has them.
    n plies: the average over the 21 rolls of the best play's value for the
    side on roll, valued at n - 1 plies from the opponent's side with his
    own cube decision (no double, or double with take or pass, whichever
    is worse for the side that moves; too good, dead cube and Crawford as
    the kernel rules them), each play chosen by its 0-ply cubeful value;
    no double and double/take are searched separately at every node where
    the side on roll may double.  :func:`bgfast.evaluate.cubeful_equity` is
    the public form (evaluator by name)."""
    b = as_boards(boards)
    if isinstance(plies, bool) or not isinstance(plies, (int, np.integer)) or plies < 0:
        raise ValueError(f"plies must be an integer >= 0, not {plies!r}")
    n = b.shape[0]
    contexts, rows, index, met = _context_rows(cube, n)
    search = _Search(ev, table, met, leaves)
    params = rows[index]
    out = search.values(b, params, int(plies), every_double=True)
    return _shape_values(search, contexts, params, int(plies), out, b)


def _shape_values(search: _Search, contexts, params, plies, out, boards) -> CubefulValues:
    """:class:`CubefulValues` from the search's arrays (each row's currency)."""
    n = boards.shape[0]
    match = params[:, _C.MATCH] != 0
    lose, win = out["lose"], out["double_pass"]
    probs = _checked(out["probs"])[0] if n else out["probs"]     # as the kernel reads them
    cubeless = _cubeless(probs) if n else np.zeros(0)
    nan = np.full(n, np.nan)
    cl_mwc = nan.copy()

    def emg(v):
        return np.where(match, _k.normalised(np.where(match, v, 0.0), lose, win), v)

    if match.any():
        rows = np.flatnonzero(match)
        p = probs[rows]
        pr = params[rows]
        x = _k.board_efficiencies(boards[rows], _EFFICIENCY)
        cl_mwc[rows] = _match_model(p, pr[:, _C.AWAY_ME], pr[:, _C.AWAY_OPP], pr[:, _C.STATE],
                                    pr[:, _C.CUBE], pr[:, _C.OWNER], x, x, search.met)["dead"]
    # the Jacoby rule with a centred cube: gammons do not count (as in CubeDecision)
    jacoby = ~match & (params[:, _C.JACOBY] != 0) & (params[:, _C.OWNER] == 0)
    cubeless = np.where(jacoby, 2 * probs[:, 0] - 1, cubeless)
    return CubefulValues(
        contexts=tuple(contexts), plies=plies, probs=probs,
        cubeless_equity=np.where(match, emg(np.nan_to_num(cl_mwc)), cubeless),
        equity=emg(out["value"]), no_double=emg(out["no_double"]),
        double_take=emg(out["double_take"]), double_pass=emg(out["double_pass"]),
        action=out["action"], beaver=out["beaver"], cubeless_mwc=cl_mwc,
        mwc=np.where(match, out["value"], nan), mwc_no_double=np.where(match, out["no_double"], nan),
        mwc_double_take=np.where(match, out["double_take"], nan),
        mwc_double_pass=np.where(match, out["double_pass"], nan))



def searched_decisions(ev, boards, cube, plies: int = 0, *, table=None,
                       leaves=None) -> CubeDecisions:
    """Cube decisions (:class:`CubeDecisions`) of ``boards`` at one context
    ``cube`` whose no double, double/take and double/pass values and action
    come from the cubeful search at ``plies`` (:func:`cubeful_values`); the
    take and cash points, gammon prices and efficiencies are Janowski's on
    the search's probabilities.  At 0 plies this is :func:`cube_decisions`
    of the evaluator's probabilities (with the table's exact money
    equities).  :func:`bgfast.evaluate.evaluate_cube` is the public form."""
    ctx = CubeContext.of(cube)
    b = as_boards(boards)
    vals = cubeful_values(ev, b, ctx, plies, table=table, leaves=leaves)
    x = board_efficiencies(b)
    exact = np.full((b.shape[0], 3), np.nan)
    rows, eq = _Search(ev, table).exact(b)
    exact[rows] = eq
    base = _decide(vals.probs, ctx.cube, ctx.owner.value, ctx.score,
                   ctx.rules if ctx.is_money else None, ctx.met, x, exact)
    return _with_values(base, ctx, vals.no_double, vals.double_take, vals.double_pass,
                        vals.action, vals.beaver, vals.mwc_no_double, vals.mwc_double_take,
                        vals.mwc_double_pass)


def _with_values(base: CubeDecisions, ctx: CubeContext, nd, dt, dp, action, beaver,
                 mwc_nd=None, mwc_dt=None, mwc_dp=None) -> CubeDecisions:
    """Janowski's decisions ``base`` with the no double, double/take and
    double/pass values (per unit of the cube: money equities or EMG; MWCs
    beside them in a match), action and beaver found by a search or a
    rollout."""
    match = not ctx.is_money
    return dataclasses.replace(
        base, no_double=nd, double_take=dt, double_pass=dp, action=action, beaver=beaver,
        double_beaver=np.where(beaver, 2.0 * dt, np.nan),
        mwc_no_double=mwc_nd if match else None, mwc_double_take=mwc_dt if match else None,
        mwc_double_pass=mwc_dp if match else None)


def valued_decisions(boards, probs, cube, no_double, double_take) -> CubeDecisions:
    """Cube decisions (:class:`CubeDecisions`) at one context ``cube`` of
    ``boards`` whose no double and double/take values were found elsewhere
    (a rollout): money equities in units of the cube before the double
    (double/take already doubled), or a match's MWCs.  The action is the
    proper one for those values (double/pass: winning the cube's points;
    with beavers, the taker beavers a double/take below 0); the take and
    cash points, gammon prices and efficiencies are Janowski's on the
    cubeless ``probs`` float64[n, 5] beside them."""
    ctx = CubeContext.of(cube)
    b = as_boards(boards)
    p, _status = _checked(np.asarray(probs, dtype=np.float64).reshape(-1, 5))
    nd = np.ascontiguousarray(no_double, dtype=np.float64).reshape(-1)
    dt = np.ascontiguousarray(double_take, dtype=np.float64).reshape(-1)
    n = p.shape[0]
    if not (b.shape[0] == nd.shape[0] == dt.shape[0] == n):
        raise InvalidCubeError("one board, probabilities, no double and double/take per row")
    k = ctx.kernel_constants()
    can, win, lose = _k.context_values(np.array([ctx.kernel_row()], dtype=np.int64), k["pre"],
                                       k["post"])
    dp = np.full(n, win[0])
    beavers = np.full(n, int(ctx.is_money and ctx.rules.beavers), dtype=np.uint8)
    _value, action, beaver = _k.node_values(nd, dt, dp, np.repeat(can, n), beavers, _EPS,
                                            _KERNEL_CODES)
    base = _decide(p, ctx.cube, ctx.owner.value, ctx.score, ctx.rules if ctx.is_money else None,
                   ctx.met, board_efficiencies(b), None)
    if ctx.is_money:
        return _with_values(base, ctx, nd, dt, dp, action, beaver)
    return _with_values(base, ctx, ctx.emg(nd), ctx.emg(dt), ctx.emg(dp), action, beaver,
                        nd, dt, dp)
