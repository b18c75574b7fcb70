"""Compare bgfast's cube decisions with GNU Backgammon's, on the same probabilities.

Random race and bear-off positions are set up in Debian's ``gnubg -t`` (the
terminal program) at random money and match cube states; ``hint`` with no
dice prints gnubg's 0-ply cube analysis: the cubeless probabilities, the
three cubeful equities and the proper action.  The printed probabilities
(5 decimals) are fed to :func:`bgfast.cube.cube_decision` with the cube
efficiency of the position class, and the equities and actions are
compared.

Usage::

    python bench/compare_cube_gnubg.py --n 400 --seed 1 [--gnubg /usr/games/gnubg] [--show 10]

gnubg is an oracle only: it is never imported or needed at run time.
"""
from __future__ import annotations

import argparse
import base64
import dataclasses
import re
import shutil
import subprocess
import sys
import time

import numpy as np

from bgfast.cube import MoneyRules, cube_decision
from bgfast.met import MatchScore
from bgfast.position import Position, PositionClass

LENGTHS = (3, 5, 7, 9, 11, 13, 17, 25)


@dataclasses.dataclass
class Case:
    position: Position
    cube: int
    owner: str  # 'centre' or 'me'
    match: MatchScore | None
    money: MoneyRules | None

    def describe(self) -> str:
        if self.match is None:
            rules = ("J" if self.money.jacoby else "") + ("B" if self.money.beavers else "")
            state = f"money{'/' + rules if rules else ''}"
        else:
            m = self.match
            state = f"{m.score_me}-{m.score_opp}/{m.length}{' C' if m.crawford else ''}"
        return f"{self.position.position_id()} {state} cube {self.cube} {self.owner}"


@dataclasses.dataclass
class GnubgCube:
    probs: tuple
    cubeless: float
    no_double: float
    double_take: float
    double_pass: float
    action: str


def match_id(*, cube: int, owner: int, on_roll: int, crawford: bool, length: int,
             score0: int, score1: int, jacoby: bool) -> str:
    """A gnubg Match ID with the dice not rolled (layout: shared FORMATS.md)."""
    bits: list[int] = []

    def put(value: int, n: int) -> None:
        bits.extend((value >> i) & 1 for i in range(n))

    put(cube.bit_length() - 1, 4)
    put(owner, 2)
    put(on_roll, 1)
    put(int(crawford), 1)
    put(1, 3)  # game state: playing
    put(on_roll, 1)  # turn
    put(0, 1)  # no double offered
    put(0, 2)  # no resignation
    put(0, 3)
    put(0, 3)  # dice not rolled
    put(length, 15)
    put(score0, 15)
    put(score1, 15)
    put(0 if jacoby else 1, 1)
    bits.extend([0] * (72 - len(bits)))
    data = bytes(sum(bits[8 * k + i] << i for i in range(8)) for k in range(9))
    return base64.b64encode(data).decode()


def random_race_position(rng: np.random.Generator, *, bearoff: bool) -> Position:
    """A random no-contact position (both sides inside their home boards if ``bearoff``)."""
    while True:
        board = np.zeros((2, 25), dtype=np.uint8)
        if bearoff:
            hi = (6, 6)
        else:
            top = int(rng.integers(7, 18))
            hi = (int(rng.integers(6, min(top, 18) + 1)), 0)
            hi = (hi[0], int(rng.integers(6, max(7, 24 - hi[0] + 1))))
            hi = (hi[0], min(hi[1], 24 - hi[0]))
        for row, limit in ((1, hi[0]), (0, hi[1])):
            n = int(rng.integers(1, 16))
            # favour low points, like real races
            weights = np.linspace(1.5, 0.5, limit)
            pts = rng.choice(limit, size=n, p=weights / weights.sum())
            np.add.at(board[row], pts, 1)
        try:
            pos = Position(board)
        except ValueError:
            continue
        cls = pos.classify()
        if cls == PositionClass.OVER:
            continue
        if bearoff and cls != PositionClass.BEAROFF:
            continue
        if not bearoff and cls != PositionClass.RACE:
            continue
        return pos


def random_case(rng: np.random.Generator) -> Case:
    pos = random_race_position(rng, bearoff=bool(rng.random() < 0.4))
    if rng.random() < 0.35:
        cube = int(rng.choice([1, 1, 2, 4]))
        owner = "centre" if cube == 1 else "me"
        money = MoneyRules(jacoby=bool(rng.random() < 0.4), beavers=bool(rng.random() < 0.4))
        return Case(pos, cube, owner, None, money)
    length = int(rng.choice(LENGTHS))
    while True:
        s_me, s_opp = (int(v) for v in rng.integers(0, length, size=2))
        crawford = False
        if (length - s_me == 1) != (length - s_opp == 1):
            crawford = bool(rng.random() < 0.5)
        away_me = length - s_me
        cube = 1 if crawford else int(rng.choice([1, 1, 2, 4]))
        if cube > 1 and cube >= away_me:  # keep mostly live cubes; dead ones appear via 1-cube cases
            continue
        owner = "centre" if cube == 1 else "me"
        return Case(pos, cube, owner, MatchScore(length, s_me, s_opp, crawford), None)


def gnubg_script(cases: list[Case], plies: int = 0) -> str:
    """A ``gnubg -t`` script: the ``hint`` cube analysis of every case at ``plies``."""
    lines = [
        "set output digits 5",
        "set output mwc off",
        f"set evaluation chequer eval plies {plies}",
        f"set evaluation cubedecision eval plies {plies}",
    ]
    for k, case in enumerate(cases):
        owner = {"centre": 3, "me": 1}[case.owner]
        if case.match is None:
            lines.append(f"set jacoby {'on' if case.money.jacoby else 'off'}")
            lines.append(f"set beavers {3 if case.money.beavers else 0}")
            mid = match_id(cube=case.cube, owner=owner, on_roll=1, crawford=False, length=0,
                           score0=0, score1=0, jacoby=case.money.jacoby)
        else:
            m = case.match
            mid = match_id(cube=case.cube, owner=owner, on_roll=1, crawford=m.crawford,
                           length=m.length, score0=m.score_opp, score1=m.score_me, jacoby=False)
        lines.append(f"set matchid {mid}")
        lines.append(f"set board {case.position.position_id()}")
        lines.append("hint")
        lines.append(f"bgfastcase{k}")
    return "\n".join(lines) + "\n"


_NUM = r"([+-]?\d+\.\d+)"


def parse_block(text: str) -> GnubgCube | None:
    """Parse one ``hint`` cube analysis (None when gnubg printed none)."""
    if "Cube analysis" not in text:
        return None
    m_cl = re.search(r"cubeless equity\s+" + _NUM, text)
    q = r"(-?\d\.\d+)"  # gnubg may print -0.00000
    m_p = re.search(r"\n\s+" + " ".join([q] * 3) + " - " + " ".join([q] * 3), text)
    eq = {}
    for m in re.finditer(r"\d\. (No double|No redouble|Double, pass|Double, take|Redouble, pass|"
                         r"Redouble, take)\s+" + _NUM, text):
        key = m.group(1).lower().replace("redouble", "double")
        eq[key] = float(m.group(2))
    m_a = re.search(r"Proper cube action: ([^\n(]+)", text)
    if not (m_cl and m_p and m_a) or len(eq) != 3:
        return None
    p = [max(0.0, float(m_p.group(i))) for i in (1, 2, 3, 5, 6)]
    return GnubgCube(tuple(p), float(m_cl.group(1)), eq["no double"], eq["double, take"],
                     eq["double, pass"], m_a.group(1).strip())


def run_gnubg(cases: list[Case], binary: str, timeout: float = 600.0,
              plies: int = 0) -> list[GnubgCube | None]:
    """Run all cases in one ``gnubg -t`` process (cube analysis at ``plies``);
    one result per case."""
    proc = subprocess.run([binary, "-t", "-q"], input=gnubg_script(cases, plies),
                          stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)
    out = proc.stdout
    results = []
    rest = out
    for k in range(len(cases)):
        marker = f"bgfastcase{k}'"
        head, sep, rest = rest.partition(marker)
        if not sep:
            raise RuntimeError(f"gnubg output ended before case {k}: {out[-400:]!r}")
        results.append(parse_block(head))
    return results


def normalize_action(text: str) -> str:
    """gnubg action text -> bgfast action value ('redouble' read as 'double')."""
    t = text.lower().replace("redouble", "double").strip()
    table = {
        "no double, take": "no_double",
        "no double, beaver": "no_double_beaver",
        "double, take": "double_take",
        "double, beaver": "double_beaver",
        "double, pass": "double_pass",
        "too good to double, take": "too_good_take",
        "too good to double, pass": "too_good_pass",
        "optional double, take": "optional_double_take",
        "optional double, beaver": "optional_double_beaver",
    }
    return table.get(t, t)


def bearoffdump_equities(db: str, position: Position, binary: str = "/usr/games/bearoffdump"):
    """Exact money equities from a gnubg two-sided database (made by ``makebearoff -t PxC``).

    Returns ``(cubeless, centred, owned, opponent_owns)`` for the player on
    roll, each for a cube not turned this turn, or None when the position is
    not in the database.
    """
    out = subprocess.run([binary, db, "-p", position.position_id()], capture_output=True,
                         text=True).stdout
    vals = {}
    for key, label in (("cubeless", "Cubeless equity"), ("owned", "Owned cube"),
                       ("centred", "Centered cube"), ("opp", "Opponent owns cube")):
        m = re.search(label + r"\s*:\s*" + _NUM, out)
        if not m:
            return None
        vals[key] = float(m.group(1))
    return vals["cubeless"], vals["centred"], vals["owned"], vals["opp"]


def in_two_sided(position: Position, checkers: int) -> bool:
    """Whether both sides are in the home board with at most ``checkers`` checkers."""
    return (position.classify() == PositionClass.BEAROFF
            and max(position.checkers()) <= checkers)


def bgfast_decision(case: Case, probs, exact_money=None):
    return cube_decision(probs, cube=case.cube, owner=case.owner, match=case.match,
                         money=case.money, position=case.position, exact_money=exact_money)


def known_difference(case: Case, g: GnubgCube) -> str:
    """Which explained systematic difference applies to a case ('general' if none)."""
    m = case.match
    if in_two_sided(case.position, 6):
        return "two-sided bear-off (<= 6 checkers a side)"
    if m is not None and (m.away_me, m.away_opp) == (2, 2) and case.owner == "centre":
        return "2-away/2-away centred cube"
    if case.match is None and case.money.beavers and g.double_take <= -2.0:
        return "beaver with double/take <= -2"
    if abs(g.no_double - g.double_take) < 5e-5:
        return "no double = double/take tie"
    return "general"


def bgfast_exact_money(position: Position):
    """Exact cubeful money equities from bgfast's default 6x6 two-sided table, or None."""
    from bgfast import bearoff

    r = bearoff.default_two_sided().get(position)
    if r is None or not r.cubeful_no_double:
        return None
    nd = r.cubeful_no_double
    return nd["centred"], nd["owned"], nd["opponent_owned"]


def compare(cases: list[Case], results: list[GnubgCube | None], *, tol: float = 2e-4,
            exact_tables: bool = False) -> dict:
    """Agreement statistics.  ``tol``: equity tolerance (gnubg prints 5 decimals).

    ``exact_tables``: in two-sided bear-offs (<= 6 checkers a side) pass the
    exact cubeful equities of bgfast's own table, as gnubg uses its own.
    """
    rows = []
    for case, g in zip(cases, results):
        if g is None:
            rows.append((case, None, None))
            continue
        exact = None
        if exact_tables and in_two_sided(case.position, 6):
            exact = bgfast_exact_money(case.position)
        d = bgfast_decision(case, g.probs, exact_money=exact)
        rows.append((case, g, d))
    compared = [(c, g, d) for c, g, d in rows if g is not None]
    n = len(compared)
    act = [normalize_action(g.action) == d.action.value for c, g, d in compared]
    err_nd = np.array([abs(g.no_double - d.no_double) for c, g, d in compared])
    err_dt = np.array([abs(g.double_take - d.double_take) for c, g, d in compared])
    close = [(e1 <= tol and e2 <= tol) for e1, e2 in zip(err_nd, err_dt)]
    disagreements = [(c, g, d) for (c, g, d), a, ok in zip(compared, act, close) if not (a and ok)]
    by_kind, by_reason = {}, {}
    for (c, g, d), a, ok in zip(compared, act, close):
        kind = ("money" if c.match is None else "match") + "/" + c.position.classify().name.lower()
        for table, key in ((by_kind, kind), (by_reason, known_difference(c, g))):
            s = table.setdefault(key, [0, 0, 0])
            s[0] += 1
            s[1] += a
            s[2] += ok
    return {
        "cases": len(cases),
        "compared": n,
        "no_analysis": len(cases) - n,
        "action_agreement": float(np.mean(act)) if n else float("nan"),
        "equity_agreement": float(np.mean(close)) if n else float("nan"),
        "max_abs_no_double": float(err_nd.max()) if n else float("nan"),
        "max_abs_double_take": float(err_dt.max()) if n else float("nan"),
        "mean_abs_no_double": float(err_nd.mean()) if n else float("nan"),
        "mean_abs_double_take": float(err_dt.mean()) if n else float("nan"),
        "by_kind": by_kind,
        "by_reason": by_reason,
        "disagreements": disagreements,
        "skipped": [c for c, g, d in rows if g is None],
        # gnubg prints no cube analysis exactly when bgfast finds the cube dead
        "dead_cube_agreement": float(np.mean(
            [(g is None) == (not bgfast_decision(c, (0.5, 0.1, 0.0, 0.1, 0.0)).can_double)
             for c, g in zip(cases, results)])),
    }


def make_cases(n: int, seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    return [random_case(rng) for _ in range(n)]


def two_sided_report(args) -> None:
    """Money decisions in two-sided bear-off positions (<= 4 checkers a side).

    (a) with the database's exact cubeful equities: bgfast vs gnubg's own
    analysis; (b) Janowski (x = 0.6) from the exact probabilities vs the
    decisions of the exact equities.
    """
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "ts64.bd")
        subprocess.run([args.makebearoff, "-t", "6x4", "-f", db], check=True, capture_output=True)
        rng = np.random.default_rng(args.seed)
        cases = []
        while len(cases) < args.n:
            c = random_case(rng)
            if c.match is None and in_two_sided(c.position, 4):
                cases.append(c)
        results = run_gnubg(cases, args.gnubg)
        n = same_exact = same_janowski = same_eq = 0
        for c, g in zip(cases, results):
            if g is None:
                continue
            exact = bearoffdump_equities(db, c.position, args.bearoffdump)
            d_exact = bgfast_decision(c, g.probs, exact_money=exact[1:])
            d_jan = bgfast_decision(c, g.probs)
            n += 1
            same_exact += normalize_action(g.action) == d_exact.action.value
            same_eq += (abs(g.no_double - d_exact.no_double) <= 2e-4
                        and abs(g.double_take - d_exact.double_take) <= 2e-4)
            same_janowski += d_jan.action is d_exact.action
    print(f"two-sided bear-off, money, {n} positions (<= 4 checkers a side):")
    print(f"  with exact cubeful equities: action = gnubg {100 * same_exact / n:.1f}%, "
          f"equities within 2e-4 {100 * same_eq / n:.1f}%")
    print(f"  Janowski x=0.6 from exact probabilities vs exact decision: {100 * same_janowski / n:.1f}%")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=400, help="number of random cases")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gnubg", default=shutil.which("gnubg") or "/usr/games/gnubg")
    ap.add_argument("--show", type=int, default=10, help="disagreements to list")
    ap.add_argument("--tol", type=float, default=2e-4)
    ap.add_argument("--exact-tables", action="store_true",
                    help="in two-sided bear-offs use the exact cubeful equities of bgfast's "
                         "6x6 table (bgfast.bearoff, built on first use), as gnubg does")
    ap.add_argument("--two-sided", action="store_true",
                    help="also check money decisions against an exact 6x4 two-sided database "
                         "built with gnubg's makebearoff")
    ap.add_argument("--makebearoff", default=shutil.which("makebearoff") or "/usr/games/makebearoff")
    ap.add_argument("--bearoffdump", default=shutil.which("bearoffdump") or "/usr/games/bearoffdump")
    args = ap.parse_args(argv)
    cases = make_cases(args.n, args.seed)
    t0 = time.perf_counter()
    results = run_gnubg(cases, args.gnubg)
    t1 = time.perf_counter()
    stats = compare(cases, results, tol=args.tol, exact_tables=args.exact_tables)
    t2 = time.perf_counter()
    print(f"{stats['cases']} cases (seed {args.seed}); gnubg printed a cube analysis for "
          f"{stats['compared']} ({stats['no_analysis']} without: dead or unavailable cube)")
    print(f"dead cube (gnubg prints no analysis <=> bgfast cannot double): "
          f"{100 * stats['dead_cube_agreement']:.1f}% of cases")
    print(f"action agreement   {100 * stats['action_agreement']:.1f}%")
    print(f"equities within {args.tol:g}: {100 * stats['equity_agreement']:.1f}%   "
          f"max |dND| {stats['max_abs_no_double']:.5f}  max |dDT| {stats['max_abs_double_take']:.5f}  "
          f"mean |dND| {stats['mean_abs_no_double']:.6f}  mean |dDT| {stats['mean_abs_double_take']:.6f}")
    print("by kind (cases, action agree, equities agree):")
    for kind, (k, a, e) in sorted(stats["by_kind"].items()):
        print(f"  {kind:<16} {k:5d}  {100 * a / k:6.1f}%  {100 * e / k:6.1f}%")
    print(f"time: gnubg {t1 - t0:.2f} s, bgfast {t2 - t1:.2f} s "
          f"({1e3 * (t2 - t1) / max(1, stats['compared']):.2f} ms per decision)")
    print("by reason (cases, action agree, equities agree):")
    for kind, (k, a, e) in sorted(stats["by_reason"].items()):
        print(f"  {kind:<44} {k:5d}  {100 * a / k:6.1f}%  {100 * e / k:6.1f}%")
    if args.two_sided:
        two_sided_report(args)
    for c, g, d in stats["disagreements"][: args.show]:
        print(f"  {c.describe()}: gnubg {g.action!r} ND {g.no_double:+.5f} DT {g.double_take:+.5f} | "
              f"bgfast {d.action_text!r} ND {d.no_double:+.5f} DT {d.double_take:+.5f} x={d.efficiency:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
