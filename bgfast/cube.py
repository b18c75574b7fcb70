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
"""
from __future__ import annotations

import dataclasses
import enum
from functools import lru_cache
from typing import Sequence

import math

import numpy as np

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
    w, wg, wb, lg, lb = vals = p.tolist()          # plain floats: fast scalar checks
    if not all(map(math.isfinite, vals)):
        raise InvalidCubeError("probabilities must be finite numbers")
    tol = 1e-6
    if not (-tol <= wb <= wg + tol and wg <= w + tol and w <= 1 + tol):
        raise InvalidCubeError(
            f"need 0 <= win backgammon <= win gammon <= win <= 1, got W={w:g} WG={wg:g} WB={wb:g}"
        )
    if not (-tol <= lb <= lg + tol and lg <= 1 - w + tol):
        raise InvalidCubeError(
            f"need 0 <= lose backgammon <= lose gammon <= 1 - win, got LG={lg:g} LB={lb:g} (win {w:g})"
        )
    w = min(max(w, 0.0), 1.0)
    wg = min(max(wg, 0.0), w)
    wb = min(max(wb, 0.0), wg)
    lg = min(max(lg, 0.0), 1.0 - w)
    lb = min(max(lb, 0.0), lg)
    return _Probs((w, wg, wb, lg, lb))


def cubeless_equity(probs) -> float:
    """Cubeless money equity ``2w - 1 + wg - lg + wbg - lbg``."""
    w, wg, wb, lg, lb = _check_probs(probs)
    return float(2 * w - 1 + wg - lg + wb - lb)


# ---------------------------------------------------------------------------
# cube efficiency
# ---------------------------------------------------------------------------

def race_efficiency(pips: float) -> float:
    """Race cube efficiency: 0.6 at 40 pips or less, 0.7 at 120 or more, linear between."""
    t = (float(pips) - RACE_PIPS_MIN) / (RACE_PIPS_MAX - RACE_PIPS_MIN)
    t = min(max(t, 0.0), 1.0)
    return RACE_EFFICIENCY_MIN + t * (RACE_EFFICIENCY_MAX - RACE_EFFICIENCY_MIN)


def cube_efficiency(position) -> float:
    """The cube efficiency for a :class:`bgfast.Position` (by its class and pip count)."""
    from .position import PositionClass

    cls = position.classify()
    if cls == PositionClass.CONTACT:
        return CONTACT_EFFICIENCY
    if cls == PositionClass.RACE:
        return race_efficiency(position.pip_count()[0])
    return BEAROFF_EFFICIENCY  # BEAROFF (one-sided class) and OVER


# ---------------------------------------------------------------------------
# the live-cube model
# ---------------------------------------------------------------------------

def _interp(p: float, points: list[tuple[float, float]]) -> float:
    """Piecewise-linear interpolation through ``points`` (any order), clamped at the ends."""
    pts = sorted(points)
    if p <= pts[0][0]:
        return pts[0][1]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if p <= x1:
            return y0 if x1 <= x0 else y0 + (y1 - y0) * (p - x0) / (x1 - x0)
    return pts[-1][1]


def _ratio(num: float, den: float) -> float:
    if den <= 1e-15:
        return 1.0 if num > 0 else 0.0
    return min(max(num / den, 0.0), 1.0)


def _averages(probs: np.ndarray) -> tuple[float, float]:
    """Average value of games won (W) and lost (L), money points per cube."""
    w, wg, wb, lg, lb = probs
    W = 1.0 + (wg + wb) / w if w > 1e-12 else 1.0
    L = 1.0 + (lg + lb) / (1.0 - w) if w < 1.0 - 1e-12 else 1.0
    return W, L


def money_take_points(probs, *, jacoby_centred: bool = False) -> dict:
    """Janowski money take points (of the side on roll, in its own winning chance).

    Returns ``take_live``/``take_dead`` (my take point if doubled) and
    ``cash_live``/``cash_dead`` (the winning chance at which the opponent's
    take of my double breaks even).  ``jacoby_centred`` treats gammons as
    single wins (the Jacoby rule with a centred cube).
    """
    p = _check_probs(probs)
    W, L = (1.0, 1.0) if jacoby_centred else _averages(p)
    return {
        "take_live": (L - 0.5) / (W + L + 0.5),
        "cash_live": (L + 1.0) / (W + L + 0.5),
        "take_dead": (L - 0.5) / (W + L),
        "cash_dead": 1.0 - (W - 0.5) / (W + L),
        "W": W,
        "L": L,
    }


def money_cubeful_equity(probs, owner: str, efficiency: float, *, jacoby: bool = False) -> float:
    """Janowski cubeful money equity per unit cube for the side on roll.

    ``owner`` is ``'centre'``, ``'me'`` or ``'opp'``; with ``jacoby`` and a
    centred cube gammons and backgammons count as single games.
    """
    p = _check_probs(probs)
    owner = normalize_owner(owner)
    W, L = _averages(p)
    tp = (L - 0.5) / (W + L + 0.5)
    cp = (L + 1.0) / (W + L + 0.5)
    if jacoby and owner == "centre":
        # Gammons count only once the cube is turned.  Take and cash points
        # (after a double) keep the gammons; the ends of the live line and
        # the dead equity do not: a centred cube cannot win more than 1.
        W = L = 1.0
        dead = 2.0 * p[0] - 1.0
    else:
        dead = float(2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4])
    points = [(0.0, -L), (1.0, W)]
    if owner in ("centre", "opp"):
        points.append((tp, -1.0))
    if owner in ("centre", "me"):
        points.append((cp, 1.0))
    live = _interp(float(p[0]), points)
    return efficiency * live + (1.0 - efficiency) * dead


class _MatchModel:
    """MWC arithmetic for one set of probabilities at one match score."""

    def __init__(self, probs: np.ndarray, score: MatchScore, met: MatchEquityTable):
        self.p = probs
        self.a, self.b = score.away_me, score.away_opp
        self.state = "crawford" if score.crawford else ("post" if score.post_crawford else "pre")
        self.met = met
        w, wg, wb, lg, lb = probs
        self.win = (w - wg, wg - wb, wb)  # single, gammon, backgammon
        self.lose = (1 - w - lg, lg - lb, lb)
        self.cp_me = lru_cache(maxsize=None)(self._cp_me)
        self.tp_me = lru_cache(maxsize=None)(self._tp_me)
        self.M = lru_cache(maxsize=None)(self._M)

    def _M(self, da: int, db: int) -> float:
        """My MWC after I win ``da`` points and the opponent ``db`` in this game."""
        a, b = self.a - da, self.b - db
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        if a == 1 and b == 1:
            return 0.5
        if a == 1 or b == 1:
            # a side reaching 1-away from a pre-Crawford score starts the Crawford game
            return self.met.mwc(a, b, post_crawford=self.state != "pre")
        return self.met.mwc(a, b)

    def W(self, n: int) -> float:
        s = sum(self.win)
        vals = (self.M(n, 0), self.M(2 * n, 0), self.M(3 * n, 0))
        if s <= 1e-12:
            return vals[0]
        return sum(q * v for q, v in zip(self.win, vals)) / s

    def L(self, n: int) -> float:
        s = sum(self.lose)
        vals = (self.M(0, n), self.M(0, 2 * n), self.M(0, 3 * n))
        if s <= 1e-12:
            return vals[0]
        return sum(q * v for q, v in zip(self.lose, vals)) / s

    def dead(self, n: int) -> float:
        return (sum(q * self.M(k * n, 0) for q, k in zip(self.win, (1, 2, 3)))
                + sum(q * self.M(0, k * n) for q, k in zip(self.lose, (1, 2, 3))))

    def can_double_me(self, n: int) -> bool:
        return self.state != "crawford" and n < self.a

    def can_double_opp(self, n: int) -> bool:
        return self.state != "crawford" and n < self.b

    def _cp_me(self, n: int) -> float:
        """My winning chance at which the opponent's take of my n -> 2n double breaks even."""
        cash = self.M(n, 0)
        if self.can_double_opp(2 * n):
            # his wins are cashes: he redoubles at my 2n take point and I pass
            tp2 = self.tp_me(2 * n)
            lose2 = self.M(0, 2 * n)
            return tp2 + (1.0 - tp2) * _ratio(cash - lose2, self.W(2 * n) - lose2)
        lo = self.L(2 * n)
        return _ratio(cash - lo, self.W(2 * n) - lo)

    def _tp_me(self, n: int) -> float:
        """My take point (my winning chance) when the opponent doubles n -> 2n."""
        pas = self.M(0, n)
        lo = self.L(2 * n)
        if self.can_double_me(2 * n):
            cp2 = self.cp_me(2 * n)
            return cp2 * _ratio(pas - lo, self.M(2 * n, 0) - lo)
        return _ratio(pas - lo, self.W(2 * n) - lo)

    def dead_cp_me(self, n: int) -> float:
        lo = self.L(2 * n)
        return _ratio(self.M(n, 0) - lo, self.W(2 * n) - lo)

    def live(self, n: int, owner: str) -> float:
        points = [(0.0, self.L(n)), (1.0, self.W(n))]
        if owner in ("centre", "opp") and self.can_double_opp(n):
            points.append((self.tp_me(n), self.M(0, n)))
        if owner in ("centre", "me") and self.can_double_me(n):
            points.append((self.cp_me(n), self.M(n, 0)))
        return _interp(float(self.p[0]), points)

    def cubeful(self, n: int, owner: str, x: float) -> float:
        return x * self.live(n, owner) + (1.0 - x) * self.dead(n)

    def gammon_prices(self, n: int) -> dict:
        span = self.M(n, 0) - self.M(0, n)
        if span <= 0:
            return {"me": 0.0, "opp": 0.0, "me_backgammon": 0.0, "opp_backgammon": 0.0}
        return {
            "me": (self.M(2 * n, 0) - self.M(n, 0)) / span,
            "opp": (self.M(0, n) - self.M(0, 2 * n)) / span,
            "me_backgammon": (self.M(3 * n, 0) - self.M(2 * n, 0)) / span,
            "opp_backgammon": (self.M(0, 2 * n) - self.M(0, 3 * n)) / span,
        }


def match_cubeful_mwc(probs, score: MatchScore, met=None, *, cube: int = 1,
                      owner: str = "centre", efficiency: float = CONTACT_EFFICIENCY) -> float:
    """Janowski cubeful match winning chance of the side on roll."""
    p = _check_probs(probs)
    cube, owner = _check_cube(cube, owner)
    model = _MatchModel(p, score, get_table(met))
    return model.cubeful(cube, owner, float(efficiency))


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


_EPS = 1e-9  # equities closer than this are equal (ties go to doubling, as in gnubg)


def _choose(nd: float, dt: float, dp: float, can_double: bool, beaver: bool) -> CubeAction:
    if not can_double:
        return CubeAction.NO_DOUBLE_DEAD_CUBE
    if dt >= dp - _EPS:  # the opponent passes
        return CubeAction.TOO_GOOD_PASS if nd > dp + _EPS else CubeAction.DOUBLE_PASS
    if nd > dp + _EPS:
        return CubeAction.TOO_GOOD_TAKE
    if abs(nd - dt) <= _EPS:
        return CubeAction.OPTIONAL_DOUBLE_BEAVER if beaver else CubeAction.OPTIONAL_DOUBLE_TAKE
    if nd > dt:
        return CubeAction.NO_DOUBLE_BEAVER if beaver else CubeAction.NO_DOUBLE
    return CubeAction.DOUBLE_BEAVER if beaver else CubeAction.DOUBLE_TAKE


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
    """
    p = _check_probs(probs)
    cube, owner = _check_cube(cube, owner)
    if match is not None and money is not None:
        raise InvalidCubeError("give either a match score or money-game rules, not both")
    if efficiency is None:
        efficiency = cube_efficiency(position) if position is not None else CONTACT_EFFICIENCY
    x = float(efficiency)
    if not 0.0 <= x <= 1.0:
        raise InvalidCubeError(f"cube efficiency must lie in [0, 1], not {efficiency}")
    exact = None
    if exact_money is not None:
        exact = np.asarray(exact_money, dtype=np.float64).reshape(-1)
        if exact.shape != (3,) or not np.all(np.isfinite(exact)):
            raise InvalidCubeError("exact_money must be 3 equities: centred, owned, opponent owns")
    ceq = float(2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4])
    redouble = owner == "me"

    if match is None:
        rules = money or MoneyRules()
        if rules.jacoby and owner == "centre" and cube > 1:
            raise InvalidCubeError("a centred cube in a money game is at 1")
        can_double = owner != "opp"
        jac = rules.jacoby and owner == "centre"
        if exact is not None:
            nd = float(exact[{"centre": 0, "me": 1, "opp": 2}[owner]])
            dt = 2.0 * float(exact[2])
        else:
            nd = money_cubeful_equity(p, owner, x, jacoby=rules.jacoby)
            dt = 2.0 * money_cubeful_equity(p, "opp", x)
        dp = 1.0
        beaver = bool(rules.beavers and can_double and dt < 0.0)
        dbeaver = 2.0 * dt if beaver else None
        tps = money_take_points(p)
        take_live, take_dead = 1.0 - tps["cash_live"], 1.0 - tps["cash_dead"]
        gp_now = 0.0 if jac else 0.5
        gp = {"me": gp_now, "opp": gp_now, "me_backgammon": gp_now, "opp_backgammon": gp_now}
        gp2 = {"me": 0.5, "opp": 0.5, "me_backgammon": 0.5, "opp_backgammon": 0.5}
        action = _choose(nd, dbeaver if beaver else dt, dp, can_double, beaver)
        dead_reason = None if can_double else "the opponent owns the cube"
        return CubeDecision(
            probs=tuple(float(v) for v in p), cube=cube, owner=owner, match=None, money=rules,
            efficiency=x, cubeless_equity=(2 * p[0] - 1) if jac else ceq,
            no_double=nd, double_take=dt, double_pass=dp, action=action,
            redouble=redouble, can_double=can_double, cube_dead=False, dead_reason=dead_reason,
            beaver=beaver, double_beaver=dbeaver, take_point_live=take_live, take_point_dead=take_dead,
            cash_point_live=tps["cash_live"], cash_point_dead=tps["cash_dead"],
            gammon_price=gp, gammon_price_after_double=gp2,
        )

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
    model = _MatchModel(p, match, table)
    n = cube
    x_nd = x_dt = x
    if exact is not None:
        # effective efficiencies from the exact money cubeful equities:
        # x = (E_exact - E_dead) / (E_live - E_dead) for each cube owner,
        # kept within [0, efficiency of the position class] (this reproduces
        # gnubg's match-play cube analysis in two-sided bear-offs)
        def x_eff(own):
            e_live = money_cubeful_equity(p, own, 1.0)
            e_exact = float(exact[{"centre": 0, "me": 1, "opp": 2}[own]])
            if abs(e_live - ceq) <= 1e-9:
                return x
            return min(max((e_exact - ceq) / (e_live - ceq), 0.0), x)

        x_nd, x_dt = x_eff(owner), x_eff("opp")
    m_nd = model.cubeful(n, owner, x_nd)
    m_dt = model.cubeful(2 * n, "opp", x_dt)
    m_dp = model.M(n, 0)
    lo, hi = model.M(0, n), m_dp

    def norm(m):
        return 2.0 * (m - lo) / (hi - lo) - 1.0 if hi > lo else 0.0

    if match.crawford:
        can_double, dead, reason = False, True, "no doubling in the Crawford game"
    elif owner == "opp":
        can_double, dead, reason = False, False, "the opponent owns the cube"
    elif not model.can_double_me(n):
        can_double, dead, reason = False, True, (
            f"dead cube: a win at cube {n} already wins the match ({match.away_me}-away)")
    else:
        can_double, dead, reason = True, False, None
    opp_take_possible = not match.crawford
    cp_live = model.cp_me(n) if opp_take_possible else None
    cp_dead = model.dead_cp_me(n) if opp_take_possible else None
    action = _choose(m_nd, m_dt, m_dp, can_double, False)
    return CubeDecision(
        probs=tuple(float(v) for v in p), cube=cube, owner=owner, match=match, money=None,
        efficiency=x_nd, cubeless_equity=norm(model.dead(n)),
        no_double=norm(m_nd), double_take=norm(m_dt), double_pass=norm(m_dp), action=action,
        redouble=redouble, can_double=can_double, cube_dead=dead, dead_reason=reason,
        beaver=False,
        take_point_live=None if cp_live is None else 1.0 - cp_live,
        take_point_dead=None if cp_dead is None else 1.0 - cp_dead,
        cash_point_live=cp_live, cash_point_dead=cp_dead,
        gammon_price=model.gammon_prices(n), gammon_price_after_double=model.gammon_prices(2 * n),
        cubeless_mwc=model.dead(n), mwc_no_double=m_nd, mwc_double_take=m_dt, mwc_double_pass=m_dp,
    )
