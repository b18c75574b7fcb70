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
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Sequence

import math

import numpy as np

from . import _cube as _k
from .errors import BgfastError, InvalidCubeError, MissingTableError
from .met import InvalidScoreError, MatchEquityTable, MatchScore, get_table

__all__ = [
    "InvalidCubeError",
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


def _check_cube(cube, owner) -> tuple[int, str]:
    if isinstance(cube, bool) or not isinstance(cube, (int, np.integer)):
        raise InvalidCubeError(f"cube value must be an integer power of 2, not {cube!r}")
    cube = int(cube)
    if cube < 1 or cube & (cube - 1):
        raise InvalidCubeError(f"cube value must be a power of 2 (1, 2, 4, ...), not {cube}")
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


def _lower(a, b):
    """``min(a, b)`` elementwise, with Python's rule (``a`` unless ``b < a``)."""
    return np.where(b < a, b, a)


def _upper(a, b):
    """``max(a, b)`` elementwise, with Python's rule (``a`` unless ``b > a``)."""
    return np.where(b > a, b, a)


def _clip(v, lo, hi):
    return _lower(_upper(v, lo), hi)


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

def _race_efficiencies(pips) -> np.ndarray:
    t = (np.asarray(pips, dtype=np.float64) - RACE_PIPS_MIN) / (RACE_PIPS_MAX - RACE_PIPS_MIN)
    t = _clip(t, 0.0, 1.0)
    return RACE_EFFICIENCY_MIN + t * (RACE_EFFICIENCY_MAX - RACE_EFFICIENCY_MIN)


def race_efficiency(pips: float) -> float:
    """Race cube efficiency: 0.6 at 40 pips or less, 0.7 at 120 or more, linear between."""
    return float(_race_efficiencies([float(pips)])[0])


def cube_efficiencies(classes, pips_on_roll) -> np.ndarray:
    """Cube efficiencies ``float64[N]`` from position class codes
    (:class:`bgfast.position.PositionClass`) and the roller's pip counts."""
    from .position import PositionClass

    cls = np.asarray(classes)
    return np.where(cls == PositionClass.CONTACT, CONTACT_EFFICIENCY,
                    np.where(cls == PositionClass.RACE, _race_efficiencies(pips_on_roll),
                             BEAROFF_EFFICIENCY))  # BEAROFF (one-sided class) and OVER


def cube_efficiency(position) -> float:
    """The cube efficiency for a :class:`bgfast.Position` (by its class and pip count)."""
    return float(cube_efficiencies([int(position.classify())], [position.pip_count()[0]])[0])


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


_PRE, _POST, _CRAWFORD = 0, 1, 2
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
            f"(up to {table.max_away}-away); pass a longer table from bgfast.met.generate")
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
