"""Cube decisions: money checks with exact answers, match play, CLI, gnubg agreement."""
import math
import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import cube as C
from bgfast.cube import CubeAction, InvalidCubeError, MoneyRules, cube_decision
from bgfast.met import MatchScore, get_table
from bgfast.position import Position

ROOT = Path(__file__).resolve().parents[1]


def cli(*args):
    from bgfast.cli import main

    return CliRunner().invoke(main, list(args))


def probs_from(p, g_win=0.0, g_lose=0.0, bg_win=0.0, bg_lose=0.0):
    """Cumulative probabilities from a win chance and conditional gammon rates."""
    return [p, p * g_win, p * bg_win, (1 - p) * g_lose, (1 - p) * bg_lose]


def crossing(f, lo=0.0, hi=1.0, it=60):
    """The p in [lo, hi] where the increasing function f changes sign (bisection)."""
    for _ in range(it):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


# -- money: exact answers ------------------------------------------------------

@pytest.mark.parametrize("x, taker_needs", [(0.0, 0.25), (1.0, 0.20)])
def test_money_take_point_without_gammons(x, taker_needs):
    """Dead cube: 25%.  Fully live cube: 20%.  Found where double/take = double/pass."""
    def excess(p):
        d = cube_decision(probs_from(p), efficiency=x)
        return d.double_take - d.double_pass

    p = crossing(excess)
    assert 1 - p == pytest.approx(taker_needs, abs=1e-9)
    d = cube_decision(probs_from(0.5), efficiency=x)
    assert d.take_point_live == pytest.approx(0.20) and d.take_point_dead == pytest.approx(0.25)
    assert d.cash_point_live == pytest.approx(0.80)
    assert cube_decision(probs_from(p - 0.01), efficiency=x).action.takes
    assert cube_decision(probs_from(p + 0.01), efficiency=x).action is CubeAction.DOUBLE_PASS


def test_money_take_point_when_gammons_count():
    """Half the doubler's wins are gammons: the taker risks 3 on average to win 2.

    Dead cube: take if 2q - 3(1-q) >= -1, i.e. q >= 40%.  Live cube (Janowski,
    W = 1, L = 1.5): (L - 1/2) / (W + L + 1/2) = 1/3.
    """
    for x, need in ((0.0, 0.40), (1.0, 1.0 / 3.0)):
        def excess(p):
            d = cube_decision(probs_from(p, g_win=0.5), efficiency=x)
            return d.double_take - d.double_pass

        assert 1 - crossing(excess) == pytest.approx(need, abs=1e-9)
        d = cube_decision(probs_from(0.7, g_win=0.5), efficiency=x)
        assert d.take_point_dead == pytest.approx(0.40)
        assert d.take_point_live == pytest.approx(1.0 / 3.0)


def test_money_equities_by_hand():
    p = probs_from(0.6, g_win=0.2, g_lose=0.1)
    w, wg, wb, lg, lb = p
    dead = 2 * w - 1 + wg - lg
    W, L = 1 + wg / w, 1 + lg / (1 - w)
    tp, cp = (L - 0.5) / (W + L + 0.5), (L + 1) / (W + L + 0.5)
    live_centre = -1 + 2 * (w - tp) / (cp - tp)  # tp < 0.6 < cp
    live_opp = -1 + (W + 1) * (w - tp) / (1 - tp)
    d = cube_decision(p, efficiency=0.68)
    assert d.cubeless_equity == pytest.approx(dead)
    assert d.no_double == pytest.approx(0.68 * live_centre + 0.32 * dead)
    assert d.double_take == pytest.approx(2 * (0.68 * live_opp + 0.32 * dead))
    assert d.double_pass == 1.0


def test_jacoby_centred_cube_makes_gammons_worthless():
    p = probs_from(0.55, g_win=0.4, g_lose=0.3)
    plain = cube_decision(p, efficiency=0.0)
    jac = cube_decision(p, efficiency=0.0, money=MoneyRules(jacoby=True))
    assert jac.no_double == pytest.approx(2 * 0.55 - 1)  # gammons count as singles
    assert plain.no_double == pytest.approx(C.cubeless_equity(p))
    assert jac.gammon_price["me"] == 0.0 and jac.gammon_price_after_double["me"] == 0.5
    # once the cube is turned, Jacoby no longer applies
    assert jac.double_take == pytest.approx(plain.double_take)
    owned_j = cube_decision(p, cube=2, owner="me", efficiency=0.7, money=MoneyRules(jacoby=True))
    owned = cube_decision(p, cube=2, owner="me", efficiency=0.7)
    assert owned_j.no_double == pytest.approx(owned.no_double)
    # a centred cube under Jacoby can never be "too good"
    big = probs_from(0.95, g_win=0.9)
    assert cube_decision(big, money=MoneyRules(jacoby=True)).action is CubeAction.DOUBLE_PASS
    assert cube_decision(big).action is CubeAction.TOO_GOOD_PASS


@pytest.mark.parametrize("probs, expect", [
    # no gammons: W = L = 1; live 0.5 / 2.5, dead 0.5 / 2 (RULES.md: 25%), cash 2 / 2.5
    (probs_from(0.6), dict(W=1.0, L=1.0, take_live=0.20, take_dead=0.25,
                           cash_live=0.80, cash_dead=0.75)),
    # W = 1 + 0.21 / 0.7 = 1.3, L = 1 + 0.06 / 0.3 = 1.2: live 0.7 / 3, dead 0.7 / 2.5,
    # cash live 2.2 / 3, cash dead 1 - 0.8 / 2.5
    (probs_from(0.7, g_win=0.3, g_lose=0.2),
     dict(W=1.3, L=1.2, take_live=0.7 / 3, take_dead=0.28, cash_live=2.2 / 3, cash_dead=0.68)),
    # backgammons add once more: W = 1 + (0.1 + 0.05) / 0.5 = 1.3, L = 1 + (0.2 + 0.05) / 0.5
    # = 1.5: live 1 / 3.3, dead 1 / 2.8, cash live 2.5 / 3.3, cash dead 1 - 0.8 / 2.8
    ([0.5, 0.1, 0.05, 0.2, 0.05],
     dict(W=1.3, L=1.5, take_live=1 / 3.3, take_dead=1 / 2.8, cash_live=2.5 / 3.3,
          cash_dead=1 - 0.8 / 2.8)),
])
def test_money_take_points_known_values(probs, expect):
    """Janowski's points by hand: take live (L - 1/2) / (W + L + 1/2), dead
    (L - 1/2) / (W + L) (where 2(qW - (1-q)L) = -1), cash live (L + 1) / (W +
    L + 1/2), dead 1 - (W - 1/2) / (W + L)."""
    got = C.money_take_points(probs)
    assert set(got) == set(expect)
    for k, v in expect.items():
        assert got[k] == pytest.approx(v, abs=1e-12), k
    # the Jacoby rule with a centred cube: every game counts single, so the
    # gammonless points whatever the gammon chances
    jac = C.money_take_points(probs, jacoby_centred=True)
    for k, v in dict(W=1.0, L=1.0, take_live=0.20, take_dead=0.25, cash_live=0.80,
                     cash_dead=0.75).items():
        assert jac[k] == pytest.approx(v, abs=1e-12), k


def test_cubeless_equity_counts_backgammons():
    """2w - 1 + wg - lg + wb - lb: 0.2 + (0.2 - 0.1) + (0.05 - 0.02) = 0.33."""
    p = [0.6, 0.2, 0.05, 0.1, 0.02]
    assert C.cubeless_equity(p) == pytest.approx(0.33, abs=1e-12)
    assert cube_decision(p).cubeless_equity == pytest.approx(0.33, abs=1e-12)
    # -0.2 + (0.1 - 0.3) + (0 - 0.1)
    assert C.cubeless_equity([0.4, 0.1, 0.0, 0.3, 0.1]) == pytest.approx(-0.5, abs=1e-12)


def test_jacoby_owned_cube_counts_gammons():
    """Jacoby applies only while the cube is centred: my owned 2-cube at
    p = 0.7, W = 1.3, L = 1.2 (0.3 of my wins gammons, 0.2 of my losses).

    Cubeless 0.4 + 0.21 - 0.06 = 0.55.  Owned: the live line runs (0, -L),
    (CP, 1), (1, W) with CP = 2.2 / 3, so at 0.7 it is -1.2 + 2.2 * 0.7 / CP
    = 0.9 and no redouble is 0.7 * 0.9 + 0.3 * 0.55 = 0.795.  Redoubled
    (the opponent owns): (0, -L), (TP, -1), (1, W) with TP = 0.7 / 3 gives
    -1 + 2.3 * (14/30) / (23/30) = 0.4, so double/take is 2 (0.7 * 0.4 +
    0.3 * 0.55) = 0.89 < 1: redouble, take.  The opponent's take points are
    1 - CP = 0.8 / 3 and 0.8 / 2.5 (his W is my L and the reverse)."""
    p = probs_from(0.7, g_win=0.3, g_lose=0.2)
    for rules in (MoneyRules(jacoby=True), MoneyRules(), None):
        d = cube_decision(p, cube=2, owner="me", efficiency=0.7, money=rules)
        assert d.cubeless_equity == pytest.approx(0.55, abs=1e-12)
        assert d.gammon_price == {"me": 0.5, "opp": 0.5, "me_backgammon": 0.5,
                                  "opp_backgammon": 0.5}
        assert d.no_double == pytest.approx(0.795, abs=1e-12)
        assert d.double_take == pytest.approx(0.89, abs=1e-12)
        assert d.double_pass == 1.0
        assert d.action is CubeAction.DOUBLE_TAKE and d.action_text == "Redouble, take"
        assert d.take_point_live == pytest.approx(0.8 / 3, abs=1e-12)
        assert d.take_point_dead == pytest.approx(0.32, abs=1e-12)
    # the same position with a centred cube under Jacoby: gammons count for nothing yet
    c = cube_decision(p, efficiency=0.7, money=MoneyRules(jacoby=True))
    assert c.cubeless_equity == pytest.approx(0.4, abs=1e-12)
    assert c.gammon_price["me"] == 0.0 and c.gammon_price_after_double["me"] == 0.5


def test_beaver():
    p = probs_from(0.45, g_win=0.1, g_lose=0.1)
    d = cube_decision(p, money=MoneyRules(beavers=True))
    assert d.double_take < 0 and d.beaver
    assert d.double_beaver == pytest.approx(2 * d.double_take)
    assert d.action is CubeAction.NO_DOUBLE_BEAVER and d.action_text == "No double, beaver"
    nb = cube_decision(p)
    assert not nb.beaver and nb.action is CubeAction.NO_DOUBLE and nb.double_beaver is None
    # a favourite's double is never beavered
    assert not cube_decision(probs_from(0.75), money=MoneyRules(beavers=True)).beaver


def test_money_actions_and_redouble_text():
    assert cube_decision(probs_from(0.5)).action is CubeAction.NO_DOUBLE
    assert cube_decision(probs_from(0.74)).action is CubeAction.DOUBLE_TAKE
    assert cube_decision(probs_from(0.9)).action is CubeAction.DOUBLE_PASS
    d = cube_decision(probs_from(0.85, g_win=0.7), cube=2, owner="me")
    assert d.action is CubeAction.TOO_GOOD_PASS and d.action_text == "Too good to redouble, pass"
    opp = cube_decision(probs_from(0.9), cube=2, owner="opp")
    assert not opp.can_double and opp.action is CubeAction.NO_DOUBLE_DEAD_CUBE


def test_input_validation():
    with pytest.raises(InvalidCubeError, match="win gammon <= win"):
        cube_decision([0.3, 0.4, 0, 0, 0])
    with pytest.raises(InvalidCubeError, match="1 - win"):
        cube_decision([0.7, 0.1, 0, 0.4, 0])
    with pytest.raises(InvalidCubeError, match="5 probabilities"):
        cube_decision([0.5, 0.1])
    with pytest.raises(InvalidCubeError, match="power of 2"):
        cube_decision(probs_from(0.5), cube=3, owner="me")
    with pytest.raises(InvalidCubeError, match="centred"):
        cube_decision(probs_from(0.5), cube=1, owner="me")
    with pytest.raises(InvalidCubeError, match="owner"):
        cube_decision(probs_from(0.5), cube=2, owner="nobody")
    with pytest.raises(InvalidCubeError, match="Crawford"):
        cube_decision(probs_from(0.5), cube=2, owner="me", match=MatchScore(5, 4, 1, crawford=True))
    with pytest.raises(InvalidCubeError, match="efficiency"):
        cube_decision(probs_from(0.5), efficiency=1.5)


# -- efficiency ----------------------------------------------------------------

def test_cube_efficiency_by_class():
    assert C.race_efficiency(40) == pytest.approx(0.6)
    assert C.race_efficiency(120) == pytest.approx(0.7)
    assert C.race_efficiency(80) == pytest.approx(0.65)
    assert C.race_efficiency(10) == 0.6 and C.race_efficiency(200) == 0.7
    assert C.cube_efficiency(Position.initial()) == 0.68
    b = np.zeros((2, 25), np.uint8)
    b[0, :6] = [2, 2, 2, 3, 3, 3]
    b[1, :6] = [3, 3, 3, 2, 2, 2]
    assert C.cube_efficiency(Position(b)) == 0.6  # bear-off
    b = np.zeros((2, 25), np.uint8)
    b[1, [5, 9, 14]] = [5, 5, 5]  # 5*6 + 5*10 + 5*15 = 155 pips on roll
    b[0, [0, 1, 2]] = [5, 5, 5]
    pos = Position(b)
    assert pos.pip_count()[0] == 155
    assert C.cube_efficiency(pos) == pytest.approx(0.7)
    d = cube_decision(probs_from(0.6), position=pos)
    assert d.efficiency == pytest.approx(0.7)


# -- match play ----------------------------------------------------------------

def test_match_matches_gnubg_reference_output():
    """gnubg 1.07 ``hint`` at 0-ply (Kazaross-XG2): 5-point match, score 1-2
    (I need 4, the opponent 3), centred cube, contact (x = 0.68).  gnubg
    printed: cubeless -0.00273, no double +0.20143, double/take +0.00335,
    "No double, take"."""
    p = [0.52151, 0.15392, 0.00756, 0.12985, 0.00755]
    d = cube_decision(p, match=MatchScore(5, 1, 2))
    assert d.cubeless_equity == pytest.approx(-0.00273, abs=5e-5)
    assert d.no_double == pytest.approx(0.20143, abs=5e-5)
    assert d.double_take == pytest.approx(0.00335, abs=5e-5)
    assert d.action is CubeAction.NO_DOUBLE and d.double_pass == 1.0


def test_match_dead_cube_take_point_by_hand():
    """No gammons, dead cube after the double: the taker's MWC is linear in q."""
    met = get_table()
    score = MatchScore.from_away(4, 2, length=7)  # I need 4, the opponent 2
    d = cube_decision(probs_from(0.7), match=score, efficiency=0.0)
    # opponent: pass -> he needs 2, I need 3; take -> cube 2 decides 2-away opp
    pass_opp = 1 - met.mwc(3, 2)
    win_opp, lose_opp = 1.0, 1 - met.mwc(2, 2)
    tp = (pass_opp - lose_opp) / (win_opp - lose_opp)
    assert d.take_point_dead == pytest.approx(tp)
    # his redouble to 4 would be dead (2-cube already wins him the match)
    assert d.take_point_live == pytest.approx(tp)


def test_match_live_take_point_recursion():
    """Live take point: TP_live(1) = TP_eff(1) * (1 - TP_live(2)) (cube-life)."""
    met = get_table()
    score = MatchScore.from_away(3, 3, length=5)
    d = cube_decision(probs_from(0.6), match=score)
    # my take point when he redoubles 2 -> 4: owning 4 at 3-away, my cube is dead
    my_pass, my_lose4, my_win4 = met.mwc(3, 1, crawford=True), 0.0, 1.0
    tp_me_2 = (my_pass - my_lose4) / (my_win4 - my_lose4)
    # his take point at cube 1: his wins are cashes of 2 (I pass his redouble)
    opp_pass = 1 - met.mwc(2, 3)
    opp_lose2 = 1 - met.mwc(1, 3, crawford=True)
    opp_cash2 = 1 - met.mwc(3, 1, crawford=True)
    tp_eff = (opp_pass - opp_lose2) / (opp_cash2 - opp_lose2)
    assert d.take_point_live == pytest.approx(tp_eff * (1 - tp_me_2))
    assert d.take_point_live < d.take_point_dead


def test_crawford_and_dead_cubes():
    p = probs_from(0.7, g_win=0.2)
    d = cube_decision(p, match=MatchScore(5, 1, 4, crawford=True))
    assert d.cube_dead and not d.can_double and d.action is CubeAction.NO_DOUBLE_DEAD_CUBE
    assert "Crawford" in d.dead_reason
    assert d.mwc_no_double == pytest.approx(d.cubeless_mwc)  # no cube at all
    # post-Crawford: the leader's cube is dead; the trailer's double is live
    lead = cube_decision(p, match=MatchScore(5, 4, 1))
    assert lead.cube_dead and "already wins the match" in lead.dead_reason
    trail = cube_decision(p, match=MatchScore(5, 1, 4))
    assert trail.can_double and trail.action.doubles
    # DMP: the cube is dead and the game is the match
    dmp = cube_decision(p, match=MatchScore(5, 4, 4))
    assert dmp.cube_dead and dmp.mwc_no_double == pytest.approx(0.7)
    # owning a 4-cube at 3-away: a win already takes the match
    d = cube_decision(p, cube=4, owner="me", match=MatchScore(7, 4, 0))
    assert d.cube_dead and d.action is CubeAction.NO_DOUBLE_DEAD_CUBE


def test_match_gammon_prices():
    d = cube_decision(probs_from(0.5), match=MatchScore.from_away(2, 4, length=7))
    met = get_table()
    # cube 1: a gammon takes me from 2-away to the match win instead of 1-away
    span = met.mwc(1, 4, crawford=True) - met.mwc(2, 3)
    assert d.gammon_price["me"] == pytest.approx((1.0 - met.mwc(1, 4, crawford=True)) / span)
    # after a double a single win already wins the match: my gammons are worthless
    assert d.gammon_price_after_double["me"] == 0.0
    assert d.gammon_price_after_double["opp"] > 0.0
    money = cube_decision(probs_from(0.5))
    assert money.gammon_price["me"] == 0.5


def test_long_match_needs_a_long_table():
    from bgfast.errors import MissingTableError
    from bgfast.metgen import generate

    p = probs_from(0.6, g_win=0.2)
    with pytest.raises(MissingTableError, match="beyond table"):
        cube_decision(p, match=MatchScore(31, 0, 0))
    d = cube_decision(p, match=MatchScore(31, 0, 0), met=generate(31))
    assert d.action is CubeAction.NO_DOUBLE


def test_long_match_approaches_money():
    p = probs_from(0.68, g_win=0.25, g_lose=0.15)
    m = cube_decision(p, match=MatchScore(25, 0, 0), efficiency=0.68)
    money = cube_decision(p, efficiency=0.68)
    assert m.no_double == pytest.approx(money.no_double, abs=0.05)
    assert m.double_take == pytest.approx(money.double_take, abs=0.1)
    assert m.action is money.action


def test_exact_money_equities_replace_janowski():
    p = probs_from(0.8)
    exact = (0.62, 0.66, 0.58)  # centred, owned, opponent owns
    d = cube_decision(p, exact_money=exact)
    assert d.no_double == 0.62 and d.double_take == pytest.approx(1.16)
    assert d.action is CubeAction.DOUBLE_PASS
    d = cube_decision(p, cube=2, owner="me", exact_money=exact)
    assert d.no_double == 0.66


def test_decision_json_roundtrip():
    d = cube_decision(probs_from(0.7, g_win=0.2), match=MatchScore(7, 2, 4))
    doc = json.loads(json.dumps(d.to_dict()))
    assert doc["mode"] == "match" and doc["match"]["away"] == [5, 3]
    assert doc["action"] == d.action.value
    assert doc["mwc"]["double_pass"] == pytest.approx(get_table().mwc(4, 3))


# -- CLI -----------------------------------------------------------------------

def test_cli_money_probs():
    r = cli("cube", "--probs", "0.52151,0.15392,0.00756,0.12985,0.00755", "--money", "--beaver")
    assert r.exit_code == 0, r.output
    assert "No double, beaver" in r.output and "Take point" in r.output
    r = cli("cube", "--probs", "70,20,1,5,0", "--json")
    doc = json.loads(r.stdout)
    assert doc["probs"][0] == pytest.approx(0.7) and doc["mode"] == "money"
    assert set(doc["equities"]) >= {"no_double", "double_take", "double_pass"}


def test_cli_match():
    r = cli("cube", "--probs", "0.7,0.2,0.01,0.05,0", "--score", "2-4", "--length", "7",
            "--cube", "2", "--owner", "me", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["match"]["away"] == [5, 3] and doc["owner"] == "me" and doc["redouble"]
    r = cli("cube", "--probs", "0.7,0.2,0.01,0.05,0", "--score", "4-2", "--length", "5",
            "--crawford")
    assert r.exit_code == 0 and "dead cube" in r.output and "Crawford" in r.output


@pytest.mark.parametrize("args, message", [
    (["--score", "2-7", "--length", "7"], "not below the match length"),
    (["--score", "2-4", "--length", "7", "--crawford"], "cannot be the Crawford game"),
    (["--score", "2-4"], "needs --length"),
    (["--length", "7", "--jacoby"], "money games"),
    (["--cube", "2"], "--owner"),
    (["--cube", "3", "--owner", "me"], "power of 2"),
])
def test_cli_errors(args, message):
    r = cli("cube", "--probs", "0.6,0.1,0,0.1,0", *args)
    assert r.exit_code == 2
    assert message in r.output


def test_cli_bad_probs_and_missing_source():
    r = cli("cube", "--probs", "0.6,0.1")
    assert r.exit_code == 2 and "5 numbers" in r.output
    r = cli("cube")
    assert r.exit_code == 2 and "POSITION or --probs" in r.output


def test_cli_position_source(monkeypatch):
    """A contact position goes to the --evaluator (through
    bgfast.evaluate.sourced_probabilities), named as the source."""

    from bgfast import evaluate

    calls = []

    class FakeEvaluator(evaluate.Evaluator):
        name = "fake"

        def evaluate_batch(self, boards):
            calls.append(Position(boards[0]))
            return np.array([[0.72, 0.25, 0.01, 0.08, 0.0]] * len(boards))

    monkeypatch.setitem(evaluate._REGISTRY, "fake", FakeEvaluator)
    r = cli("cube", Position.initial().position_id(), "--evaluator", "fake", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert calls == [Position.initial()]
    assert doc["source"] == "bgfast.evaluate (fake)" and doc["efficiency"] == 0.68
    ref = cube_decision((0.72, 0.25, 0.01, 0.08, 0.0))
    assert doc["equities"]["no_double"] == pytest.approx(ref.no_double)


# -- agreement with gnubg ------------------------------------------------------

def _bench():
    """The gnubg driver of bench/compare_cube_gnubg.py (shared with the tests)."""
    import sys

    name = "bgfast_bench_compare_cube_gnubg"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "compare_cube_gnubg.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)
    return sys.modules[name]


def _known_difference(case, g):
    """The systematic differences explained in the notes."""
    m = case.match
    if m is not None and (m.away_me, m.away_opp) == (2, 2) and case.owner == "centre":
        return True  # gnubg: no-double equity = cubeless MWC at 2-away/2-away
    if case.match is None and case.money.beavers and g.double_take <= -2.0:
        return True  # gnubg prints "take", not "beaver", below -2
    if abs(g.no_double - g.double_take) < 5e-5:
        return True  # float32 ties: gnubg's "Optional double"
    return False


@pytest.fixture(scope="module")
def two_sided_6(tmp_path_factory):
    bearoff = pytest.importorskip("bgfast.bearoff")
    return bearoff.build_two_sided(6, tmp_path_factory.mktemp("ts6") / "ts6.bgb", cubeful=True)


def _agreement(gnubg_binary, table, n, seed):
    """gnubg's probabilities -> bgfast's cube analysis, compared with gnubg's.

    Two-sided bear-offs get the exact cubeful equities of bgfast's own table,
    as gnubg uses its database there."""
    bench = _bench()
    cases = bench.make_cases(n, seed)
    results = bench.run_gnubg(cases, gnubg_binary)
    assert sum(r is not None for r in results) > 0.8 * n
    checked = agree = total = 0
    for case, g in zip(cases, results):
        if g is None:  # gnubg prints no analysis: the cube must be dead for bgfast too
            d = bench.bgfast_decision(case, (0.5, 0.1, 0.0, 0.1, 0.0))
            assert not d.can_double, case.describe()
            continue
        exact = None
        r = table.get(case.position)
        if r is not None and r.cubeful_no_double:
            nd = r.cubeful_no_double
            exact = (nd["centred"], nd["owned"], nd["opponent_owned"])
        d = bench.bgfast_decision(case, g.probs, exact_money=exact)
        total += 1
        agree += bench.normalize_action(g.action) == d.action.value
        if _known_difference(case, g):
            continue
        checked += 1
        ctx = case.describe()
        tol = 3e-4 if exact is None else 5e-4  # gnubg's table values have 16 bits
        assert bench.normalize_action(g.action) == d.action.value, ctx
        assert d.no_double == pytest.approx(g.no_double, abs=tol), ctx
        assert d.double_take == pytest.approx(g.double_take, abs=tol), ctx
    assert checked > 0.75 * n
    assert agree / total > 0.98


@pytest.mark.gnubg
def test_gnubg_agreement_race_and_bearoff(gnubg_binary, two_sided_6):
    _agreement(gnubg_binary, two_sided_6, 60, seed=7)


@pytest.mark.gnubg
@pytest.mark.slow
def test_gnubg_agreement_many(gnubg_binary, two_sided_6):
    _agreement(gnubg_binary, two_sided_6, 1000, seed=2024)


@pytest.mark.gnubg
def test_two_sided_bearoff_exact_money_equities(gnubg_binary, tmp_path):
    """Exact cubeful money equities of a two-sided database (gnubg's makebearoff)
    give gnubg's own cube analysis, equities and action, in money play."""
    makebearoff = shutil.which("makebearoff") or "/usr/games/makebearoff"
    dump = shutil.which("bearoffdump") or "/usr/games/bearoffdump"
    if not (Path(makebearoff).exists() and Path(dump).exists()):
        pytest.skip("gnubg's makebearoff/bearoffdump not installed")
    db = tmp_path / "ts64.bd"
    subprocess.run([makebearoff, "-t", "6x4", "-f", str(db)], check=True, capture_output=True)
    bench = _bench()
    rng = np.random.default_rng(3)
    cases = []
    while len(cases) < 40:
        c = bench.random_case(rng)
        if c.match is None and bench.in_two_sided(c.position, 4):
            cases.append(c)
    results = bench.run_gnubg(cases, gnubg_binary)
    compared = 0
    for case, g in zip(cases, results):
        if g is None:
            continue
        exact = bench.bearoffdump_equities(str(db), case.position, dump)
        assert exact is not None
        d = bench.bgfast_decision(case, g.probs, exact_money=exact[1:])
        compared += 1
        assert d.no_double == pytest.approx(g.no_double, abs=2e-4), case.describe()
        assert d.double_take == pytest.approx(g.double_take, abs=2e-4), case.describe()
        # bearoffdump prints 4 decimals: near-ties between equities can go either way
        if min(abs(g.double_take - g.double_pass), abs(g.no_double - g.double_take),
               abs(g.no_double - g.double_pass)) > 2e-4:
            assert bench.normalize_action(g.action) == d.action.value, case.describe()
    assert compared >= 30


def test_cli_bearoff_position_uses_exact_table():
    """POSITION in the bear-off: probabilities and exact cubeful equities come
    from the two-sided table (bgfast.evaluate.sourced_probabilities)."""
    bearoff = pytest.importorskip("bgfast.bearoff")
    b = np.zeros((2, 25), np.uint8)
    b[1, [0, 1]] = [1, 1]  # on roll: 2 checkers on the 1 and 2 points
    b[0, [4, 5]] = [2, 2]
    pos = Position(b)
    hit = bearoff.default_two_sided().get(pos)
    r = cli("cube", pos.position_id(), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert "exact two-sided" in doc["source"]
    assert doc["probs"] == pytest.approx(list(hit.probs))
    assert doc["equities"]["no_double"] == pytest.approx(hit.cubeful_no_double["centred"])
    nd = hit.cubeful_no_double
    assert doc["equities"]["double_take"] == pytest.approx(2 * nd["opponent_owned"])
    assert doc["efficiency"] == 0.6


def _random_bearoff_positions(rng, n, checkers):
    bearoff = pytest.importorskip("bgfast.bearoff")
    npos = bearoff.num_positions(6, checkers)
    out = []
    while len(out) < n:
        i, j = (int(v) for v in rng.integers(1, npos, size=2))  # 0 = all borne off
        b = np.zeros((2, 25), np.uint8)
        b[1, :6] = bearoff.position(i)
        b[0, :6] = bearoff.position(j)
        out.append(Position(b))
    return out


@pytest.fixture(scope="module")
def two_sided_4(tmp_path_factory):
    bearoff = pytest.importorskip("bgfast.bearoff")
    path = tmp_path_factory.mktemp("ts") / "ts4.bgb"
    return bearoff.build_two_sided(4, path, cubeful=True)


def test_two_sided_bearoff_janowski_vs_exact(two_sided_4):
    """Money decisions in exact two-sided bear-offs (<= 4 checkers a side):
    exact probabilities + Janowski (x = 0.6) against the database's exact
    cubeful equities.  Measured agreement: about 94%."""
    rng = np.random.default_rng(99)
    same = total = 0
    for pos in _random_bearoff_positions(rng, 1500, 4):
        r = two_sided_4.probe(pos)
        nd = r.cubeful_no_double
        exact = (nd["centred"], nd["owned"], nd["opponent_owned"])
        for owner, cube in (("centre", 1), ("me", 2)):
            d_exact = cube_decision(r.probs, cube=cube, owner=owner, exact_money=exact, position=pos)
            d_jan = cube_decision(r.probs, cube=cube, owner=owner, position=pos)
            assert d_jan.efficiency == 0.6
            # the exact equities are used as they are
            assert d_exact.no_double == pytest.approx(exact[0 if owner == "centre" else 1])
            assert d_exact.double_take == pytest.approx(2 * exact[2])
            same += d_jan.action is d_exact.action
            total += 1
    assert 0.88 < same / total < 1.0


@pytest.mark.gnubg
def test_two_sided_bearoff_bgfast_table_agrees_with_gnubg(gnubg_binary, two_sided_4):
    """End to end: bgfast's exact table (probabilities and cubeful equities)
    gives the cube analysis gnubg prints for the same bear-off: money play
    directly, match play through the effective cube efficiency."""
    bench = _bench()
    rng = np.random.default_rng(5)
    positions = _random_bearoff_positions(rng, 80, 4)
    cases = []
    for k, pos in enumerate(positions):
        cube, owner = ((1, "centre"), (2, "me"), (4, "me"))[k % 3]
        if k % 2:
            cases.append(bench.Case(pos, cube, owner, None, MoneyRules(jacoby=k % 4 == 1)))
        else:
            length = int(rng.choice([5, 7, 11, 17]))
            cube = 1 if cube >= length else cube
            owner = "centre" if cube == 1 else owner
            s_me = int(rng.integers(0, length - cube)) if cube > 1 else int(rng.integers(0, length))
            score = MatchScore(length, s_me, int(rng.integers(0, length)))
            if score.crawford or (cube > 1 and score.post_crawford):
                continue
            cases.append(bench.Case(pos, cube, owner, score, None))
    results = bench.run_gnubg(cases, gnubg_binary)
    compared = 0
    for case, g in zip(cases, results):
        if g is None:
            continue
        r = two_sided_4.probe(case.position)
        # gnubg stores its two-sided values in 16 bits (steps of about 3e-5)
        assert r.probs[0] == pytest.approx(g.probs[0], abs=1e-4)
        nd = r.cubeful_no_double
        d = cube_decision(r.probs, cube=case.cube, owner=case.owner, money=case.money,
                          match=case.match, position=case.position,
                          exact_money=(nd["centred"], nd["owned"], nd["opponent_owned"]))
        assert d.no_double == pytest.approx(g.no_double, abs=2e-4), case.describe()
        assert d.double_take == pytest.approx(g.double_take, abs=2e-4), case.describe()
        if abs(g.double_take - g.double_pass) > 2e-4 and abs(g.no_double - g.double_take) > 2e-4:
            assert bench.normalize_action(g.action) == d.action.value, case.describe()
        compared += 1
    assert compared >= 60


def test_match_kernel_matches_a_plain_reading_of_the_model():
    """bgfast._cube.match_rows against tests/reference_cube.py, row by row,
    over random probabilities at every score of 1..11-point matches, cubes
    up to 16 and every owner: the same numbers to the last bit (up to the
    order of additions that Python's sum() and the kernel share)."""
    import numpy as np

    from bgfast import _cube
    from bgfast.met import get_table
    from reference_cube import Row

    t = get_table(None)
    rng = np.random.default_rng(11)
    rows = []
    for length in (1, 2, 3, 5, 7, 11):
        for sa in range(length):
            for sb in range(length):
                for state in (0, 1, 2):
                    a, b = length - sa, length - sb
                    if state != 0 and (a == 1) == (b == 1):
                        continue
                    for cube, owner in ((1, 0), (2, 1), (2, 2), (4, 1), (16, 2)):
                        if state == 2 and (cube, owner) != (1, 0):
                            continue
                        rows.append((a, b, state, cube, owner))
    n = len(rows)
    w = rng.uniform(0, 1, n)
    wg = w * rng.uniform(0, 1, n) ** 2
    wb = wg * rng.uniform(0, 1, n) ** 3
    lg = (1 - w) * rng.uniform(0, 1, n) ** 2
    lb = lg * rng.uniform(0, 1, n) ** 3
    p = np.ascontiguousarray(np.stack([w, wg, wb, lg, lb], axis=1))
    p[:5] = [[1, 1, 1, 0, 0], [0, 0, 0, 1, 1], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0.5, 0, 0, 0, 0]]
    a, b, state, cube, owner = (np.array(c, dtype=np.int64) for c in zip(*rows))
    x = rng.uniform(0, 1, n)
    got = _cube.match_rows(p, a, b, state, cube, owner, x, x[::-1].copy(),
                           np.ascontiguousarray(t.pre), np.ascontiguousarray(t.post))
    assert n > 1000
    for i in range(n):
        r = Row(tuple(p[i]), int(a[i]), int(b[i]), int(state[i]), int(cube[i]), t)
        assert got["no_double"][i] == r.cubeful(0, int(owner[i]), x[i])
        assert got["double_take"][i] == r.cubeful(1, 2, x[n - 1 - i])
        assert got["double_pass"][i] == r.M(1, 0, 0) and got["lose"][i] == r.M(1, 0, 1)
        assert got["dead"][i] == r.dead(0)
        assert bool(got["can_double"][i]) == r.can_me(0)
        if state[i] != 2:
            assert got["cash_live"][i] == r.cp(0) and got["cash_dead"][i] == r.dead_cp(0)
        else:
            assert np.isnan(got["cash_live"][i])


def test_checked_rows_kernel_against_a_plain_reading():
    """bgfast._cube.checked_rows against the checks and the clipping written
    out in Python, on random rows near the limits, NaN and infinity."""
    import numpy as np

    from bgfast import _cube
    from bgfast.cube import _TOL

    rng = np.random.default_rng(8)
    n = 3000
    w = rng.uniform(-2e-6, 1 + 2e-6, n)
    wg = w * rng.uniform(0.9, 1.01, n)
    wb = wg * rng.uniform(-0.01, 1.01, n)
    lg = (1 - w) * rng.uniform(0.9, 1.01, n)
    lb = lg * rng.uniform(-0.01, 1.01, n)
    p = np.ascontiguousarray(np.stack([w, wg, wb, lg, lb], axis=1))
    p[0, 0], p[1, 3], p[2, 4] = np.nan, np.inf, -np.inf
    clipped, status = _cube.checked_rows(p, _TOL)
    seen = set()
    for i, (a, g, b, l, lb_) in enumerate(p.tolist()):
        if not all(math.isfinite(v) for v in (a, g, b, l, lb_)):
            want = 1
        elif not (-_TOL <= b <= g + _TOL and g <= a + _TOL and a <= 1 + _TOL):
            want = 2
        elif not (-_TOL <= lb_ <= l + _TOL and l <= 1 - a + _TOL):
            want = 3
        else:
            want = 0
        assert status[i] == want, (i, p[i])
        seen.add(want)
        if want == 0:
            def clip(v, lo, hi):
                v = lo if lo > v else v
                return hi if hi < v else v
            cw = clip(a, 0.0, 1.0)
            cg = clip(g, 0.0, cw)
            cb = clip(b, 0.0, cg)
            cl = clip(l, 0.0, 1.0 - cw)
            clb = clip(lb_, 0.0, cl)
            assert clipped[i].tolist() == [cw, cg, cb, cl, clb]
    assert seen == {0, 1, 2, 3}


def test_kernel_rows_at_shared_contexts_equal_one_context_each():
    """decide_rows reads row i's cube context as params[ctx[i]]: rows that
    share a table of contexts get the same values, bit for bit, as the same
    rows each with its own copy of its context; values= receives them."""
    from bgfast import _cube

    rng = np.random.default_rng(12)
    n = 3000
    w = rng.uniform(0, 1, n)
    wg = w * rng.uniform(0, 1, n) ** 2
    lg = (1 - w) * rng.uniform(0, 1, n) ** 2
    p = np.stack([w, wg, wg * rng.uniform(0, 1, n) ** 3, lg, lg * rng.uniform(0, 1, n) ** 3], 1)
    p, status = C._checked(p)
    assert (status == 0).all()
    # money (centred, owned, the opponent's; Jacoby, beavers) and match contexts
    params = np.array([[0, 1, 1, 0, 1, 0, 0, 0], [0, 1, 1, 0, 2, 1, 0, 1], [0, 1, 1, 0, 2, 2, 0, 0],
                       [0, 1, 1, 0, 1, 0, 1, 1], [1, 7, 5, 0, 1, 0, 0, 0], [1, 3, 4, 0, 2, 2, 0, 0],
                       [1, 1, 4, 2, 1, 0, 0, 0], [1, 2, 1, 1, 1, 0, 0, 0]], dtype=np.int64)
    ctx = rng.integers(0, len(params), n).astype(np.int32)
    x = rng.uniform(0.5, 0.8, n)
    exact = np.where(rng.uniform(size=(n, 1)) < 0.3, rng.uniform(-1, 1, (n, 3)), np.nan)
    table = get_table(None)
    values = np.full((n, 10), -7.0)
    shared = C._context_decisions(p, ctx, params, x, exact, table, values)
    own = C._context_decisions(p, np.arange(n, dtype=np.int32), params[ctx], x, exact, table)
    for name in _cube.DECISION_COLUMNS + ("action", "beaver"):
        assert np.array_equal(shared[name], own[name], equal_nan=True), name
    assert np.array_equal(values[:, 0], own["no_double"]) and not (values == -7.0).any()
    with pytest.raises(ValueError, match="context"):
        C._context_decisions(p, ctx + len(params), params, x, exact, table)


def test_public_decision_arrays_are_their_own():
    d = C.cube_decisions(np.array([[0.6, 0.2, 0.01, 0.1, 0.01]] * 4))
    for name in ("no_double", "double_take", "double_pass", "take_point_live"):
        arr = getattr(d, name)
        assert arr.flags.c_contiguous and arr.base is None, name


@pytest.mark.parametrize("cube", ["3", "-2", "0", "6"])
def test_cli_bad_cube_value_is_named_first(cube):
    for extra in ([], ["--owner", "me"]):
        r = cli("cube", "--probs", "0.7,0.2,0.01,0.05,0", "--cube", cube, *extra)
        assert r.exit_code == 2
        assert f"power of 2 (1, 2, 4, ...), not {cube}" in r.stderr and "--owner" not in r.stderr


# an XGID at 2-4 to 9, cube 2 owned by the player on roll (bottom)
XGID_2_4 = "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:9:10"


def _doc(*args):
    r = cli("cube", *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("position, away, owner", [
    (XGID_2_4, [7, 5], "me"),
    ("4HPwATDgc/ABMA:QYkqASAAIAAA", [5, 7], "opp"),          # gnubg ID: 4-2 to 9, cube 2
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", None, "centre"),
])
def test_cli_position_brings_its_context(position, away, owner):
    doc = _doc(position)
    assert doc["owner"] == owner
    assert doc["cube"] == (1 if owner == "centre" else 2)
    if away is None:
        assert doc["mode"] == "money"
    else:
        assert doc["mode"] == "match" and doc["match"]["away"] == away
    text = cli("cube", position).stdout.splitlines()[0]
    if away == [7, 5]:
        assert text == "Match to 9, score 2-4 (7-away, 5-away); cube 2, owned by me"


def test_cli_options_override_the_position_context():
    base = _doc(XGID_2_4)
    probs = ",".join(str(p) for p in base["probs"])
    # the same decision from the same probabilities at the same context, given by hand
    same = _doc("--probs", probs, "--score", "2-4", "--length", "9", "--cube", "2",
                "--owner", "me", "--efficiency", str(base["efficiency"]))
    assert same["equities"] == base["equities"]
    assert _doc(XGID_2_4, "--money")["mode"] == "money"
    assert _doc(XGID_2_4, "--money")["owner"] == "me"
    assert _doc(XGID_2_4, "--score", "1-1")["match"]["away"] == [8, 8]
    assert _doc(XGID_2_4, "--length", "11")["match"]["away"] == [9, 7]
    assert _doc(XGID_2_4, "--owner", "opp")["owner"] == "opp"
    doc = _doc(XGID_2_4, "--cube", "1")
    assert doc["cube"] == 1 and doc["owner"] == "centre"
    assert _doc(XGID_2_4, "--cube", "4")["owner"] == "me"      # the position's owner
    r = cli("cube", XGID_2_4, "--jacoby", "--length", "9")
    assert r.exit_code == 2 and "money games" in r.stderr
