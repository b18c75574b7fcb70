"""Cubeful rollouts: the cube played in the rollout loop against exact
bear-off values (money: the two-sided table; match: an exact recursion and
the cubeful 2-ply search), cube-decision rollouts, variance reduction and
determinism."""
import json
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast.cli import main
from bgfast.cube import CubeAction, CubeContext
from bgfast.errors import InvalidCubeError
from bgfast.evaluate import _cubeful_table, cubeful_equity, get_evaluator
from bgfast.met import get_table
from bgfast.position import Position
from bgfast.rollout import (RolloutSettings, rollout, rollout_cube, rollout_opening_rolls,
                            rollout_plays, run_chunk)
from reference_cubeful import CRAWFORD, PRE, MatchReference

INITIAL = Position.initial()
#: the bear-off rollouts: every game played out (no early stop) by the
#: exact table's best cubeless plays
EXACT_PLAY = RolloutSettings(seed=2, backend="serial", early_stop=False, policy="evaluator",
                             evaluator="composite")
#: the cube decisions of a rollout are made with the table's cubeful values
#: but the plays by cubeless equity, where the table's values assume the
#: best cubeful plays: measured, the luck-adjusted means (whose standard
#: errors are nearly 0 with exact values) stay within 0.004 of the table's
OF_PLAY = 0.006


@pytest.fixture(scope="module")
def table():
    return _cubeful_table()


def _bearoffs(n, seed, least=3, most=6):
    """``n`` random two-sided bear-offs with ``least`` .. ``most`` checkers a side."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 2, 25), dtype=np.uint8)
    for b in out:
        for row in (0, 1):
            np.add.at(b[row], rng.integers(0, 6, int(rng.integers(least, most + 1))), 1)
    return out


OWNERS = [("centre", 1, 0), ("me", 2, 1), ("opp", 4, 2)]


def _money_against_exact(table, boards, trials, owner, cube, k):
    ctx = CubeContext.money(cube, owner)
    exact = table.probe_batch(boards)["cubeful"][:, k]      # before the roll, with the cube action
    plain = rollout(boards, EXACT_PLAY, trials=trials, cube=ctx, variance_reduction=False)
    for r, e in zip(plain, exact):
        assert r.cube == ctx.to_dict() and r.games == trials
        assert abs(r.cubeful - e) <= 3 * r.stderr["cubeful"] + 1e-12, (r.cubeful, e, r.stderr)
    vr = rollout(boards, EXACT_PLAY, trials=trials // 4, cube=ctx)
    for r, e in zip(vr, exact):
        assert abs(r.cubeful - e) <= 3 * r.stderr["cubeful"] + OF_PLAY, (r.cubeful, e, r.stderr)
    return plain


@pytest.mark.parametrize("owner, cube, k", OWNERS)
def test_money_bearoff_rollout_is_the_exact_cubeful_equity(owner, cube, k, table):
    """Centred, owned and opponent-owned cubes (at 1, 2 and 4: results per
    unit of the starting cube): the cubeful rollout of 6x6 bear-offs is the
    table's exact cubeful equity within 3 standard errors."""
    plain = _money_against_exact(table, _bearoffs(16, 3, least=4), 2592, owner, cube, k)
    assert sum(r.stderr["cubeful"] > 0.01 for r in plain) >= 5     # real games, not cashes


@pytest.mark.slow
@pytest.mark.parametrize("owner, cube, k", OWNERS)
def test_money_bearoff_rollout_is_exact_many_positions(owner, cube, k, table):
    _money_against_exact(table, _bearoffs(60, 31, least=4), 20736, owner, cube, k)


def test_cube_rollout_is_exact_in_bearoffs(table):
    """No double and double/take of the cube rollout are the table's exact
    values (double/take: twice the opponent-owned no-double value) within 3
    standard errors, and the action is the exact one where it is clear."""
    boards = _bearoffs(10, 7)
    hit = table.probe_batch(boards)
    seen = set()
    for b, nd in zip(boards, hit["cubeful_no_double"]):
        r = rollout_cube(Position(b), EXACT_PLAY, trials=2592, variance_reduction=False)
        d = r.decision
        ex_nd, ex_dt = nd[0], 2.0 * nd[2]
        assert abs(d.no_double - ex_nd) <= 3 * r.stderr["no_double"] + 1e-12
        assert abs(d.double_take - ex_dt) <= 3 * r.stderr["double_take"] + 1e-12
        assert d.double_pass == 1.0
        gain = min(ex_dt, 1.0) - ex_nd
        margin = 3 * (r.stderr["no_double"] + r.stderr["double_take"]) + 0.01
        if abs(gain) > margin:
            assert d.action.doubles == (gain > 0), (d.action, ex_nd, ex_dt)
        if abs(ex_dt - 1.0) > 3 * r.stderr["double_take"] + 0.01:
            assert d.action.takes in (None, ex_dt < 1.0) or not d.action.doubles
        seen.add(d.action)
        assert [x.label for x in r.rollouts] == ["no double", "double/take"]
    assert len(seen) >= 2


def _clear_pass(table):
    """A 6x6 bear-off where the player on roll doubles and the opponent
    passes (exactly: double/take above 1, no double below it)."""
    boards = _bearoffs(400, 5)
    nd = table.probe_batch(boards)["cubeful_no_double"]
    ok = np.flatnonzero((2.0 * nd[:, 2] > 1.2) & (nd[:, 0] < 0.9))
    return Position(boards[ok[0]])


def test_a_pass_ends_the_game(table):
    pos = _clear_pass(table)
    r = rollout_cube(pos, EXACT_PLAY, trials=324)
    assert r.decision.double_pass == 1.0
    assert r.action == CubeAction.DOUBLE_PASS and r.action_text == "Double, pass"
    assert r.decision.double_take > 1.0 and r.decision.no_double < 1.0
    # with the cube in the middle the first decision is double/pass: every
    # trial ends before a roll, at the value before the double
    c = rollout(pos, EXACT_PLAY, trials=324, cube=CubeContext.money())
    assert c.cubeful == 1.0 and c.stderr["cubeful"] == 0.0 and c.average_plies == 0.0
    # the opponent owning the cube: the player on roll cannot double, games are played
    o = rollout(pos, EXACT_PLAY, trials=324, cube=CubeContext.money(2, "opp"))
    assert o.average_plies >= 1 and o.stderr["cubeful"] > 0
    with pytest.raises(InvalidCubeError, match="may not double"):
        rollout_cube(pos, EXACT_PLAY, trials=36, cube=CubeContext.money(2, "opp"))
    text = r.describe()
    assert "Proper cube action: Double, pass" in text and "Standard errors" in text
    d = json.loads(r.to_json())
    assert d["action_text"] == "Double, pass" and d["games"] == 324
    assert set(d["stderr"]) == {"no_double", "double_take"}


# ---------------------------------------------------------------------------
# match play
# ---------------------------------------------------------------------------

MET = get_table(None)
MATCH = [((2, 2), PRE), ((1, 3), CRAWFORD), ((3, 1), CRAWFORD)]


def _match_ctx(away, state):
    return CubeContext.from_away(*away, crawford=state == CRAWFORD)


@pytest.mark.parametrize("away, state", MATCH)
def test_match_rollout_agrees_with_the_exact_recursion_and_2_ply(away, state):
    """At 2-away/2-away and 1-away/3-away in the Crawford game (both sides
    of it), bear-offs of up to 3 checkers a side: the cubeful rollout's MWC
    is the exact recursion's within 3 standard errors, and the cubeful 2-ply
    search's within 3 standard errors plus its own error (measured at most
    0.02 on such positions in test_cubeful).  The rollout's cube actions
    are 0-ply Janowski's, which can cost a little MWC against the exact
    play: allowed 0.005."""
    ref = MatchReference(3, away, state, MET)
    ctx = _match_ctx(away, state)
    s = ref.state_of(ctx.kernel_row())
    rng = np.random.default_rng(4)
    boards = ref.boards([(int(rng.integers(1, ref.P)), int(rng.integers(1, ref.P)))
                         for _ in range(8)])
    exact = np.array([ref.values(b, s)["value"] for b in boards])
    two = cubeful_equity(boards, ctx, plies=2, evaluator="composite").mwc
    rs = rollout(boards, EXACT_PLAY, trials=2592, cube=ctx, variance_reduction=False)
    for r, e, t in zip(rs, exact, two):
        se = r.stderr["mwc"]
        assert abs(r.mwc - e) <= 3 * se + 0.005, (r.mwc, e, se)
        assert abs(r.mwc - t) <= 3 * se + 0.02, (r.mwc, t, se)
        assert r.cubeful == pytest.approx(ctx.emg(r.mwc), abs=1e-12)
        lose, win = ctx.cube_mwcs()
        assert r.stderr["cubeful"] == pytest.approx(2 * se / (win - lose))


def test_match_cube_rollout_at_2_away_2_away():
    """At 2-away/2-away a double is the match: double/take wins or loses
    the match with the game, so it is the cubeless winning chance of the
    position (no gammons in these bear-offs) and double/pass is the MWC of
    1-away/2-away; the no-double rollout is the exact no-double MWC."""
    ref = MatchReference(3, (2, 2), PRE, MET)
    ctx = _match_ctx((2, 2), PRE)
    s = ref.state_of(ctx.kernel_row())
    b = ref.boards([(5, 9)])[0]
    r = rollout_cube(Position(b), EXACT_PLAY, trials=2592, cube=ctx, variance_reduction=False)
    w = ref.values(b, s)
    d = r.decision
    assert d.mwc_double_pass == pytest.approx(w["double_pass"], abs=1e-12)
    assert abs(d.mwc_no_double - w["no_double"]) <= 3 * r.stderr["mwc_no_double"] + 0.005
    assert abs(d.mwc_double_take - w["double_take"]) <= 3 * r.stderr["mwc_double_take"] + 1e-12
    assert d.double_pass == 1.0 and d.no_double == pytest.approx(ctx.emg(d.mwc_no_double))


# ---------------------------------------------------------------------------
# variance reduction, determinism, play rollouts, output
# ---------------------------------------------------------------------------

def test_cubeful_luck_adjustment_is_unbiased_in_contact():
    """Same seed, a deterministic policy: the same games with and without
    variance reduction, so the per-trial difference of the cubeful values
    is the summed cubeful luck, of expectation zero; the adjusted mean is
    the plain one within 3 standard errors."""
    pos = Position.from_position_id("4HPwATDgc/ABMA")
    starts = np.ascontiguousarray(np.stack([pos.board, INITIAL.board]))
    for ctx in (CubeContext.money(), CubeContext.from_away(3, 5)):
        s = RolloutSettings(seed=17, early_stop=False, policy="pubeval", evaluator="composite",
                            backend="serial", cube=ctx)
        from bgfast.rollout import _Cube
        cube = _Cube.of(ctx, 2).params
        params = s.kernel_params() | {"cube": cube}
        plain, pp = run_chunk(starts, 0, 240, replace(s, variance_reduction=False).kernel_params()
                              | {"cube": cube})
        vr, pv = run_chunk(starts, 0, 240, params)
        assert np.array_equal(pp, pv) and plain.shape[2] == 7
        luck = plain[:, :, 6] - vr[:, :, 6]
        assert (np.abs(luck).mean(axis=0) > 0.01).all()
        se = luck.std(axis=0, ddof=1) / np.sqrt(len(luck))
        assert (np.abs(luck.mean(axis=0)) < 3 * se).all()
        # and it removes variance
        assert (vr[:, :, 6].std(axis=0) < plain[:, :, 6].std(axis=0)).all()
        a = rollout(pos, s, trials=240, variance_reduction=False)
        b = rollout(pos, s, trials=240)
        assert abs(a.cubeful - b.cubeful) <= 3 * a.stderr["cubeful"]


def test_cubeful_results_are_bit_identical_across_jobs_and_chunks():
    for ctx in (CubeContext.money(), CubeContext.match(7, 2, 4, cube=2, owner="me")):
        base = RolloutSettings(trials=108, seed=5, policy="pubeval", evaluator="composite",
                               cube=ctx)
        serial = rollout(INITIAL, base, backend="serial")
        for jobs, chunk in ((1, 7), (2, 50), (2, 108)):
            r = rollout(INITIAL, base, jobs=jobs, chunk=chunk, backend="local")
            assert r.mean == serial.mean and r.stderr == serial.stderr
        c1 = rollout_cube(INITIAL, base, backend="serial", chunk=31)
        c2 = rollout_cube(INITIAL, base, jobs=2, chunk=64)
        assert c1.decision == c2.decision and c1.stderr == c2.stderr


def test_cubeful_play_rollouts():
    """The plays of a bear-off roll rolled out cubefully, for the mover: each
    play's value is minus the opponent's exact cubeful value after it, and
    the order is by that value."""
    table = _cubeful_table()
    pos = Position(_bearoffs(1, 8, least=5)[0])
    ctx = CubeContext.money(2, "me")
    res = rollout_plays(pos, 6, 3, EXACT_PLAY, trials=1296, cube=ctx)
    assert len(res) >= 2
    assert [r.cubeful for r in res] == sorted((r.cubeful for r in res), reverse=True)
    for r in res:
        opp = table.probe(Position.from_position_id(r.position)).cubeful["opponent_owned"]
        assert r.cube == ctx.to_dict()
        assert abs(r.cubeful + opp) <= 3 * r.stderr["cubeful"] + OF_PLAY
    rolls, out = rollout_opening_rolls(RolloutSettings(trials=36, seed=1, policy="pubeval",
                                                       evaluator="composite", backend="serial",
                                                       cube=CubeContext.money()))
    assert len(out) == 21 and all(r.cubeful is not None for r in out)


def test_cubeless_is_named_and_unchanged():
    s = RolloutSettings(trials=36, seed=3, policy="pubeval", evaluator="composite",
                        backend="serial")
    a = rollout(INITIAL, s)
    assert a.cube is None and a.cubeful is None and "cubeful" not in a.mean
    assert a.to_dict()["cube"] == "cubeless" and a.settings["cube"] == "cubeless"
    assert str(a).endswith("(cubeless) games=36")
    b = rollout(INITIAL, s, cube=CubeContext.money())
    assert b.to_dict()["cube"]["mode"] == "money" and b.settings["cube"]["cube"] == 1
    assert "cubeful=" in str(b)
    m = rollout(INITIAL, s, cube=CubeContext.from_away(2, 4))
    assert set(m.mean) == set(a.mean) | {"cubeful", "mwc"}
    json.loads(m.to_json())


def test_stderr_target_applies_to_the_cubeful_value():
    s = RolloutSettings(trials=20736, seed=3, policy="pubeval", evaluator="composite",
                        stderr_target=0.1, batch=108, min_trials=108, backend="serial",
                        variance_reduction=False, cube=CubeContext.money())
    r = rollout(INITIAL, s)
    assert r.games < 20736 and r.stderr["cubeful"] <= 0.1 < rollout(
        INITIAL, s, trials=r.games - 108, stderr_target=None).stderr["cubeful"]


def test_kernel_refuses_bad_cube_rows():
    s = RolloutSettings(seed=1, policy="pubeval", evaluator="composite")
    from bgfast.rollout import _Cube
    cube = _Cube.of(CubeContext.money(), 2).params
    starts = np.ascontiguousarray(INITIAL.board[None])
    with pytest.raises(ValueError, match="cube rows for 1 start boards"):
        run_chunk(starts, 0, 1, s.kernel_params() | {"cube": cube})
    bad = dict(cube, rows=np.array([[1, 9, 9, 0, 1, 0, 0, 0]] * 2, dtype=np.int64))
    with pytest.raises(ValueError, match="away scores outside the table"):
        run_chunk(np.ascontiguousarray(np.stack([INITIAL.board] * 2)), 0, 1,
                  s.kernel_params() | {"cube": bad})


# ---------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------

FAST = ["-n", "36", "--policy", "pubeval", "-e", "composite", "--backend", "serial"]
MATCH_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:2:4:0:7:10"


def _cli(*args):
    return CliRunner().invoke(main, ["rollout", *args, *FAST])


def test_cli_rollout_is_cubeful_at_the_positions_context_by_default():
    # a bare Position ID: money, the cube centred, as --money says
    r = _cli("4HPwATDgc/ABMA")
    assert r.exit_code == 0 and r.output.rstrip().endswith("money, cube 1 centred")
    assert "cubeful equity" in r.output
    bare = json.loads(_cli("4HPwATDgc/ABMA", "--json").output)
    d = json.loads(_cli("4HPwATDgc/ABMA", "--money", "--json").output)
    assert d["cube"]["mode"] == "money" and "cubeful" in d["mean"]
    assert bare["cube"] == d["cube"] and bare["mean"] == d["mean"]
    r = _cli("4HPwATDgc/ABMA", "--cubeless", "--json")
    d = json.loads(r.output)
    assert d["cube"] == "cubeless" and "cubeful" not in d["mean"]
    # the XGID's match score: cubeful, MWC and EMG
    r = _cli(MATCH_XGID)
    assert r.exit_code == 0, r.output
    assert "cubeful MWC" in r.output and "cubeful EMG" in r.output
    assert "match to 7, 2-4 (5-away, 3-away), cube 1 centred" in r.output
    r = _cli(MATCH_XGID, "--cubeless", "--json")
    assert json.loads(r.output)["cube"] == "cubeless"
    # the same trials through the API
    api = rollout(Position.from_position_id("4HPwATDgc/ABMA"),
                  RolloutSettings(trials=36, policy="pubeval", evaluator="composite",
                                  backend="serial", cube=CubeContext.match(7, 2, 4)))
    d = json.loads(_cli(MATCH_XGID, "--json").output)
    assert d["mean"] == api.mean and d["stderr"] == api.stderr


def test_cli_cube_rollout_and_cubeful_plays():
    r = _cli("4HPwATDgc/ABMA", "--cube")
    assert r.exit_code == 0, r.output
    assert "Proper cube action:" in r.output and "Standard errors: no double" in r.output
    d = json.loads(_cli(MATCH_XGID, "--cube", "--json").output)
    assert d["mode"] == "match" and set(d["mwc"]) >= {"no_double", "double_take"}
    assert d["stderr"]["mwc_no_double"] > 0
    r = _cli("4HPwATDgc/ABMA", "--money", "--dice", "31", "--json")
    d = json.loads(r.output)
    assert d["context"]["mode"] == "money" and all("cubeful" in p["mean"] for p in d["plays"])
    r = _cli("4HPwATDgc/ABMA", "--cube", "--dice", "31")
    assert r.exit_code == 2 and "drop --cubeless, --dice and --all-rolls" in r.output
    r = _cli("4HPwATDgc/ABMA", "--cube", "3")
    assert r.exit_code == 2 and "power of 2" in r.output
    # the opponent owns the cube: nothing to decide
    r = _cli("XGID=-b----E-C---eE---c-e----B-:1:-1:1:00:0:0:0:0:10", "--cube")
    assert r.exit_code != 0 and r.output.count("\n") == 1 and "may not double" in r.output


@pytest.mark.loopback
@pytest.mark.slow
def test_cubeful_ray_backend_matches_local():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        for ctx in (CubeContext.money(), CubeContext.match(7, 2, 4, cube=2, owner="me")):
            s = RolloutSettings(trials=90, seed=13, chunk=25, policy="pubeval",
                                evaluator="composite", cube=ctx)
            a = rollout(INITIAL, s, backend="ray")
            b = rollout(INITIAL, s, backend="serial")
            assert a.mean == b.mean and a.stderr == b.stderr and a.games == 90
            c = rollout_cube(INITIAL, s, backend="ray")
            assert c.decision == rollout_cube(INITIAL, s, backend="serial").decision
    finally:
        ray.shutdown()


def test_a_finished_game_counts_the_cube_and_the_jacoby_rule():
    """A game that is over before the first roll (the player on roll has
    lost a gammon): its result is the cube's points times 2, in units of
    the starting cube, except under the Jacoby rule with a centred cube
    (gammons do not count); at a match score the MWC after the opponent
    wins those points."""
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, 5] = 15
    pos = Position(b)
    s = RolloutSettings(trials=4, seed=1, policy="pubeval", evaluator="composite",
                        backend="serial")
    assert rollout(pos, s).equity == -2.0
    for ctx, want in ((CubeContext.money(), -2.0), (CubeContext.money(jacoby=True), -1.0),
                      (CubeContext.money(2, "me", jacoby=True), -2.0),
                      (CubeContext.money(4, "opp"), -2.0)):
        r = rollout(pos, s, cube=ctx)
        assert r.cubeful == want and r.stderr["cubeful"] == 0.0 and r.average_plies == 0.0
    m = rollout(pos, s, cube=CubeContext.from_away(3, 5))
    assert m.mwc == pytest.approx(MET.mwc(3, 3), abs=1e-12) and MET.mwc(3, 3) == 0.5
