"""Cubeful evaluation: the cube context, cubeful values at 0, 1 and 2 plies
against exact bear-off values (money: the two-sided table; match: an exact
recursion), cube decisions by the search, checker play at the cube and
score, and gnubg's choices where the score changes the best play."""
import re

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import cube as C
from bgfast import _cube as K
from bgfast.cube import decide_cube
from bgfast.cube import CubeContext, InvalidCubeError, MoneyRules, Owner
from bgfast.errors import InvalidScoreError, MissingTableError
from bgfast.evaluate import (_cubeful_table, cubeful_equity, equity, evaluate_cube,
                             evaluate_cube_batch, get_evaluator,
                             invert, rank_plays, rank_plays_batch)
from bgfast.formats import CubeOwner, MatchState
from bgfast.game import Game
from bgfast.met import MatchScore, get_table
from bgfast.movegen import legal_plays
from bgfast.position import Position, PositionClass, classify_boards
from corpus import random_boards, self_play_positions
from gnubg_hints import gnubg_hints
from reference_cubeful import CRAWFORD, POST, PRE, MatchReference, exact_match_values

MET = get_table(None)


@pytest.fixture(scope="module")
def table():
    return _cubeful_table()


@pytest.fixture(scope="module")
def exact_ev():
    return get_evaluator("exact")


def _bearoffs(n, seed, most=6):
    """``n`` random two-sided bear-offs with 1..``most`` checkers a side."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 2, 25), dtype=np.uint8)
    for b in out:
        for row in (0, 1):
            np.add.at(b[row], rng.integers(0, 6, int(rng.integers(1, most + 1))), 1)
    return out


# ---------------------------------------------------------------------------
# the cube context
# ---------------------------------------------------------------------------

def test_context_constructors_agree():
    m = CubeContext.match(7, 2, 4, cube=2, owner="opponent")
    assert m == CubeContext.from_away(5, 3, length=7, cube=2, owner=Owner.OPP)
    assert m.owner is Owner.OPP and m.owner == "opp" and not m.is_money
    assert m.kernel_row() == (1, 5, 3, 0, 2, 2, 0, 0)
    assert m.flipped() == CubeContext.match(7, 4, 2, cube=2, owner="me")
    assert m.flipped().flipped() == m
    assert m.table is MET and not m.can_double        # the opponent owns it
    d = CubeContext.money().doubled()
    assert (d.cube, d.owner) == (2, Owner.OPP)
    # a Match ID's state, seen from its player on roll
    st = MatchState(match_length=7, score=(4, 2), cube_value=2, cube_owner=CubeOwner.PLAYER0,
                    player_on_roll=1)
    assert CubeContext.from_match_state(st) == m
    assert CubeContext.of(st) == m
    # a game, from either player
    g = Game(match_length=7, score=(3, 6), crawford=True)
    assert CubeContext.from_game(g, 0) == CubeContext.match(7, 3, 6, crawford=True)
    assert CubeContext.from_game(g, 1) == CubeContext.match(7, 6, 3, crawford=True)
    for player in (0, 1):
        assert CubeContext.of((g, player)) == CubeContext.from_game(g, player)
    assert CubeContext.from_game(g, 0).crawford and CubeContext.from_game(g, 0).cube_dead
    post = CubeContext.match(5, 4, 1)
    assert post.post_crawford and not post.crawford and post.kernel_row()[3] == 1
    assert CubeContext.match(5, 4, 1, post_crawford=True) == post


def test_context_describe_and_dict():
    assert CubeContext.money().describe() == "money, cube 1 centred"
    assert CubeContext.money(4, "me", jacoby=True, beavers=True).describe() == \
        "money (Jacoby, beavers), cube 4 owned by me"
    assert CubeContext.match(7, 6, 4, crawford=True).describe() == \
        "match to 7, 6-4 (1-away, 3-away, Crawford), cube 1 centred"
    d = CubeContext.match(7, 4, 6, cube=2, owner="opp").to_dict()
    assert d == {"mode": "match", "cube": 2, "owner": "opp",
                 "match": {"length": 7, "score": [4, 6], "away": [3, 1], "crawford": False,
                           "post_crawford": True, "met": "Kazaross-XG2"}}


@pytest.mark.parametrize("make, error, words", [
    (lambda: CubeContext.money(3, "me"), InvalidCubeError, "power of 2"),
    (lambda: CubeContext.money(1, "me"), InvalidCubeError, "a cube at 1 is centred"),
    (lambda: CubeContext.money(2, "centre", jacoby=True), InvalidCubeError,
     "centred cube in a money game is at 1"),
    (lambda: CubeContext.money(2, "banana"), InvalidCubeError, "unknown cube owner"),
    (lambda: CubeContext.match(7, 7, 2), InvalidScoreError, "not below the match length"),
    (lambda: CubeContext.match(7, 2, 3, crawford=True), InvalidScoreError,
     "cannot be the Crawford game"),
    (lambda: CubeContext.match(7, 6, 3, crawford=True, cube=2, owner="me"), InvalidCubeError,
     "no doubling in the Crawford game"),
    (lambda: CubeContext.match(7, 2, 3, cube=2, owner="centre"), InvalidCubeError,
     "centred cube in a match is at 1"),
    (lambda: CubeContext.match(7, 2, 3, post_crawford=True), InvalidScoreError,
     "cannot be post-Crawford"),
    (lambda: CubeContext.match(7, 6, 3, post_crawford=False), InvalidScoreError,
     "the Crawford game (crawford=True) or post-Crawford"),
    (lambda: CubeContext.match(40, 0, 0), MissingTableError, "beyond table"),
    (lambda: CubeContext(1, "centre", MatchScore(7, 0, 0), MoneyRules(jacoby=True)),
     InvalidCubeError, "money-game rules"),
    (lambda: CubeContext(1, "centre", None, MoneyRules(), "Kazaross-XG2"), InvalidCubeError,
     "for match play"),
    (lambda: CubeContext.of("7-point match"), InvalidCubeError, "not a cube context"),
])
def test_context_errors(make, error, words):
    with pytest.raises(error, match=re.escape(words)):
        make()
    assert issubclass(error, ValueError)


@pytest.mark.parametrize("args, words", [
    (["--cube", "3", "--owner", "me"], "power of 2"),
    (["--score", "6-3", "--length", "7", "--crawford", "--cube", "2", "--owner", "me"],
     "no doubling in the Crawford game"),
    (["--score", "7-3", "--length", "7"], "not below the match length"),
])
def test_context_errors_are_those_of_bgfast_cube(args, words):
    """The CLI's one-line error and the context's ValueError say the same."""
    from bgfast.cli import main

    r = CliRunner().invoke(main, ["cube", "--probs", "0.6,0.1,0,0.05,0", *args])
    assert r.exit_code != 0 and words in r.output


# ---------------------------------------------------------------------------
# money: the exact two-sided table
# ---------------------------------------------------------------------------

OWNERS = (("centre", 1), ("me", 2), ("opp", 2))


@pytest.mark.parametrize("plies", [0, 1, 2])
def test_money_search_reproduces_the_exact_table(plies, table, exact_ev):
    """On exact leaves the cubeful search is the table's own recursion (the
    table picks each cube state's best play and lets each side double before
    its roll, as the search does), so every ply gives the table's values;
    they differ only by the table's float32 rounding (about 3e-8)."""
    boards = _bearoffs(24 if plies < 2 else 12, 3)
    hit = table.probe_batch(boards)
    nd, after = hit["cubeful_no_double"], hit["cubeful"]
    for k, (owner, cube) in enumerate(OWNERS):
        v = cubeful_equity(boards, CubeContext.money(cube, owner), plies=plies, evaluator=exact_ev)
        assert np.abs(v.no_double - nd[:, k]).max() < 2e-7, owner
        assert np.abs(v.double_take - 2 * nd[:, 2]).max() < 4e-7, owner
        assert np.abs(v.equity - after[:, k]).max() < 4e-7, owner
        assert (v.double_pass == 1.0).all()
        assert np.isnan(v.mwc).all() and v.plies == plies


def test_money_cube_decisions_by_the_search(table, exact_ev):
    """evaluate_cube: at 0 plies the decision bgfast.cube.decide_cube
    makes from the same probabilities; at 2 plies the exact equities."""
    race = self_play_positions(400, 3)[0]
    race = race[classify_boards(race) == PositionClass.RACE][0]
    for b in (Position.initial().board, race, _bearoffs(1, 5)[0]):
        pos = Position(b)
        for ctx in (CubeContext(), CubeContext.money(2, "me"), CubeContext.match(5, 1, 2)):
            got = evaluate_cube(pos, ctx, plies=0)
            hit = table.get(pos) if pos.classify() == PositionClass.BEAROFF else None
            exact = None if hit is None else [hit.cubeful_no_double[k]
                                              for k in ("centred", "owned", "opponent_owned")]
            want = decide_cube(pos, ctx, get_evaluator("net").evaluate(pos).probs, exact)
            assert got.to_dict() == want.to_dict(), (pos.position_id(), ctx)
    boards = _bearoffs(6, 11)
    hit = table.probe_batch(boards)
    for b, nd in zip(boards, hit["cubeful_no_double"]):
        d = evaluate_cube(b, CubeContext.money(), plies=2, evaluator=exact_ev)
        assert d.no_double == pytest.approx(nd[0], abs=2e-7)
        assert d.double_take == pytest.approx(2 * nd[2], abs=4e-7)
        want = C.cube_decision(d.probs, exact_money=nd, position=Position(b))
        assert d.action == want.action


@pytest.mark.parametrize("plies", [0, 1])
def test_rank_plays_money_bearoff_is_exact(plies, table, exact_ev):
    """A play's cubeful value is minus the opponent's exact value after it,
    with his cube decision, at the flipped cube."""
    for b in _bearoffs(5, 21):
        for owner, cube in OWNERS:
            ranked = rank_plays(b, 6, 3, plies=plies, evaluator=exact_ev,
                                cube=CubeContext.money(cube, owner))
            flipped = {"centre": 0, "me": 2, "opp": 1}[owner]
            for r in ranked:
                hit = table.probe(r.play.position) if r.play.position.classify() != \
                    PositionClass.OVER else None
                want = 1.0 if hit is None else \
                    -hit.cubeful[("centred", "owned", "opponent_owned")[flipped]]
                assert r.cubeful == pytest.approx(want, abs=4e-7) and r.mwc is None
            assert [r.cubeful for r in ranked] == sorted((r.cubeful for r in ranked), reverse=True)


# ---------------------------------------------------------------------------
# match: an exact recursion over small bear-offs
# ---------------------------------------------------------------------------

SCORES = [  # (away, game state, cube, owner)
    ((2, 2), PRE, 1, "centre"),
    ((1, 3), CRAWFORD, 1, "centre"),
    ((3, 1), POST, 1, "centre"),
    ((3, 3), PRE, 2, "me"),
    ((3, 3), PRE, 2, "opp"),
    ((4, 2), PRE, 1, "centre"),
]


@pytest.fixture(scope="module")
def references():
    return {(away, state): MatchReference(3, away, state, MET) for away, state, _, _ in SCORES}


def _ctx(away, state, cube, owner):
    return CubeContext.from_away(*away, length=max(away) + 2, cube=cube, owner=owner,
                                 crawford=state == CRAWFORD)


def _exact_leaves(ref):
    """The search's 0-ply values replaced by the reference's exact ones."""
    def leaves(boards, params):
        rows = [ref.values(b, ref.state_of(p)) for b, p in zip(boards, params)]
        out = {k: np.array([r[k] for r in rows], dtype=np.float64)
               for k in ("no_double", "double_take", "double_pass", "value", "lose")}
        can, _, _ = K.context_values(np.ascontiguousarray(params), MET.pre, MET.post)
        _, out["action"], out["beaver"] = K.node_values(
            out["no_double"], out["double_take"], out["double_pass"], can,
            np.zeros(len(params), dtype=np.uint8), C._EPS, C._KERNEL_CODES)
        return out
    return leaves


def _roots(ref, n, seed):
    rng = np.random.default_rng(seed)
    return ref.boards([(int(rng.integers(ref.P)), int(rng.integers(ref.P))) for _ in range(n)])


@pytest.mark.parametrize("away, state, cube, owner", SCORES)
def test_match_search_on_exact_leaves_is_exact(away, state, cube, owner, references, exact_ev):
    """With the exact values at its leaves the search gives the exact values
    at 1 and 2 plies: the flips of score and owner, the doubled cube, the
    MWCs of a pass and of a finished game and each side's cube decision at
    every node are those of the recursion (to the last bit: the same
    operations on the same numbers)."""
    ref = references[(away, state)]
    ctx = _ctx(away, state, cube, owner)
    s = ref.state_of(ctx.kernel_row())
    boards = _roots(ref, 16, 5)
    want = [ref.values(b, s) for b in boards]
    for plies in (1, 2):
        v = C.cubeful_values(exact_ev, boards, ctx, plies, leaves=_exact_leaves(ref))
        for k, name in (("value", "mwc"), ("no_double", "mwc_no_double"),
                        ("double_take", "mwc_double_take"), ("double_pass", "mwc_double_pass")):
            np.testing.assert_allclose(getattr(v, name), [w[k] for w in want], rtol=0, atol=1e-12,
                                       err_msg=f"{name} at {plies} plies")


def test_exact_match_values_known(exact_ev):
    """The reference's known values: a sure win is worth the MWC of winning
    the cube's points (2-away 2-away: the 1-away 2-away Crawford MWC); in the
    Crawford game the cube is dead and there are no gammons in these
    bear-offs, so the MWC is the winning chance times 1 plus the losing
    chance times the MWC of the post-Crawford score (1-away 2-away)."""
    sure = np.zeros((1, 2, 25), dtype=np.uint8)
    sure[0, 1, 0], sure[0, 0, 5] = 2, 3
    v = exact_match_values(sure, (2, 2), table=MET)
    assert v["value"][0] == pytest.approx(MET.mwc(1, 2, post_crawford=False), abs=1e-12)
    assert v["double_take"][0] == 1.0
    ref = MatchReference(3, (1, 3), CRAWFORD, MET)
    boards = _roots(ref, 50, 3)
    v = exact_match_values(boards, (1, 3), state=CRAWFORD, table=MET)
    p = exact_ev.evaluate_batch(boards)[:, 0]
    lose = MET.mwc(1, 2, post_crawford=True)
    np.testing.assert_allclose(v["value"], p + (1 - p) * lose, rtol=0, atol=2e-6)
    assert np.array_equal(v["value"], v["no_double"])
    with pytest.raises(ValueError, match="bear-off"):
        exact_match_values(Position.initial().board, (2, 2))


@pytest.mark.parametrize("away, state, cube, owner", SCORES)
def test_match_search_close_to_exact(away, state, cube, owner, references):
    """The public cubeful evaluation (``cubeful_equity``, ``evaluate_cube_batch``
    with the exact bear-off probabilities) against the exact reference
    (:func:`reference_cubeful.exact_match_values`).  Janowski's leaves (the
    match model with the table's exact money equities turned into effective
    efficiencies) give estimates: the model knows the match's cube only
    through money-game efficiencies.  Measured on these 100 roots: MWCs
    within 0.06 of the exact ones at 0 plies and 0.02 at 2 plies, closer on
    average at 2 plies (by 2 to 10 times; exact in the Crawford and
    post-Crawford games, where the cube is dead or turned once and the MWC
    is linear in the winning chance).  Where the exact cube action is clear
    (by 0.01) the 2-ply decision agrees."""
    ref = references[(away, state)]
    ctx = _ctx(away, state, cube, owner)
    boards = _roots(ref, 100, 9)
    exact = exact_match_values(boards, away, state=state, cube=cube, owner=owner, table=MET)
    err = {}
    for plies in (0, 2):
        v = cubeful_equity(boards, ctx, plies=plies, evaluator="exact")
        err[plies] = np.abs(v.mwc - exact["value"])
    assert err[0].max() < 0.07 and err[2].max() < 0.02, (err[0].max(), err[2].max())
    assert err[2].mean() <= err[0].mean() + 1e-12, (err[0].mean(), err[2].mean())
    dec = evaluate_cube_batch(boards, ctx, plies=2, evaluator="exact")
    for i in range(len(boards)):
        nd, dt, dp = (exact[k][i] for k in ("no_double", "double_take", "double_pass"))
        if not ctx.can_double or np.isnan(dt):
            assert not dec.decision(i).action.doubles
            continue
        gain = min(dt, dp) - nd
        if abs(gain) > 0.01:
            assert dec.decision(i).action.doubles == (gain > 0), i
        if abs(dt - dp) > 0.01:
            assert dec.decision(i).action.takes == (dt < dp), i


# ---------------------------------------------------------------------------
# invariants
# ---------------------------------------------------------------------------

def test_without_a_context_the_ranking_is_cubeless():
    pos = Position.initial()
    ranked = rank_plays(pos, 4, 2)
    plays = legal_plays(pos, 4, 2)
    probs = invert(get_evaluator("net").evaluate_batch(np.stack([p.position.board for p in plays])))
    assert sorted(r.equity for r in ranked) == pytest.approx(sorted(equity(probs)))
    assert ranked[0].play.notation == "8/4 6/4"
    assert all(r.cubeful is None and r.mwc is None and r.value == r.equity for r in ranked)
    assert set(ranked[0].to_dict()) == {"play", "position_id", "plies", "win", "win_gammon",
                                        "win_backgammon", "lose_gammon", "lose_backgammon",
                                        "equity"}
    batch = rank_plays_batch(pos.board[None], [[4, 2]])
    assert batch.cubeful is None and batch.mwc is None


@pytest.mark.parametrize("plies", [0, 1])
def test_dead_cube_is_cubeless(plies):
    """In the Crawford game and at double match point the cube is dead:
    cubeful MWC = cubeless MWC of the same probabilities (at DMP the
    winning chance), and no one doubles."""
    boards, _ = self_play_positions(40, 4)
    boards = boards[::4]
    for ctx in (CubeContext.match(7, 6, 4, crawford=True), CubeContext.match(7, 4, 6, crawford=True),
                CubeContext.match(7, 6, 6)):
        v = cubeful_equity(boards, ctx, plies=plies)
        np.testing.assert_allclose(v.mwc, v.cubeless_mwc, rtol=0, atol=1e-12)
        assert (v.action == C.ACTIONS.index(C.CubeAction.NO_DOUBLE_DEAD_CUBE)).all()
        if ctx.score.away_me == ctx.score.away_opp == 1:
            np.testing.assert_allclose(v.mwc, v.probs[:, 0], rtol=0, atol=1e-12)


def test_money_with_a_dead_cube_efficiency_is_cubeless(monkeypatch):
    """Janowski with efficiency 0 is the dead cube: no double = cubeless equity."""
    monkeypatch.setattr(C, "_EFFICIENCY", np.zeros(6))
    boards, _ = self_play_positions(30, 8)
    ev = get_evaluator("net")
    for owner, cube in OWNERS:
        v = C.cubeful_values(ev, boards, CubeContext.money(cube, owner), 0)
        np.testing.assert_allclose(v.no_double, v.cubeless_equity, rtol=0, atol=1e-12)
        np.testing.assert_allclose(v.double_take, 2 * v.cubeless_equity, rtol=0, atol=1e-12)


def test_kernel_mover_columns_are_the_python_ones(table):
    """The kernel's values of plays for their movers (money: minus the
    opponent's value; match: 1 minus his MWC, normalised by the mover's
    cube) equal those worked out in numpy from its other columns."""
    boards = random_boards(300, 2)
    ev = get_evaluator("net")
    probs = ev.evaluate_batch(boards)
    movers = np.array([c.kernel_row() for c in (
        CubeContext.money(), CubeContext.money(2, "opp", beavers=True),
        CubeContext.match(7, 2, 4, cube=2, owner="me"), CubeContext.match(9, 3, 1))],
        dtype=np.int64)
    movers[movers[:, 0] == 0, 4] = 1
    ctx = np.arange(len(boards), dtype=np.int32) % len(movers)
    search = C._Search(ev, table, MET)
    leaf = search.leaf(boards, probs, ctx, C._flipped(movers), movers)
    value, eq = search._mover(leaf["value"], ctx, movers)
    np.testing.assert_array_equal(leaf["mover_value"], value)
    np.testing.assert_array_equal(leaf["mover_equity"], eq)


def test_play_rows_are_the_mover_columns_of_cubeful_rows(table):
    """The ranking's kernel (play_rows, only the values to the movers) gives
    bit for bit the mover columns of cubeful_rows, at money and match
    contexts (Crawford, post-Crawford, every owner), on random boards and
    exact bear-offs, with and without an index of rows into the boards."""
    boards = np.concatenate([random_boards(400, 7), _bearoffs(200, 8)])
    ev = get_evaluator("net")
    probs = ev.evaluate_batch(boards)
    movers = np.array([c.kernel_row() for c in (
        CubeContext.money(), CubeContext.money(jacoby=True), CubeContext.money(2, "me"),
        CubeContext.money(4, "opp", beavers=True), CubeContext.match(7, 2, 4),
        CubeContext.match(7, 2, 4, cube=2, owner="me"), CubeContext.match(7, 4, 2, cube=2,
                                                                          owner="opp"),
        CubeContext.match(5, 4, 1, crawford=True), CubeContext.match(5, 4, 2),
        CubeContext.match(5, 2, 4, cube=2, owner="opp"))], dtype=np.int64)
    movers[movers[:, 0] == 0, 4] = 1
    assert set(movers[:, 3]) == {0, 1, 2}                  # pre-, post-Crawford and Crawford
    search = C._Search(ev, table, MET)
    child = C._flipped(movers)
    rng = np.random.default_rng(9)
    for index in (None, rng.integers(0, len(boards), 3000)):
        n = len(boards) if index is None else len(index)
        ctx = rng.integers(0, len(movers), n).astype(np.int32)
        leaf = search.leaf(boards, probs, ctx, child, movers, index=index)
        value, eq = search.mover_leaf(boards, probs, ctx, child, movers, index=index)
        assert value.flags.c_contiguous and eq.flags.c_contiguous
        np.testing.assert_array_equal(value, leaf["mover_value"])
        np.testing.assert_array_equal(eq, leaf["mover_equity"])
        assert np.isfinite(value).all()


def test_ranking_and_cubeful_equity_agree():
    """A play's cubeful value in rank_plays is the opponent's value after it
    (cubeful_equity at the flipped context) seen from the mover, at 0 and 1
    plies; the EMG normalises the mover's MWC by his cube."""
    pos = Position.from_position_id("4HPwATDgc/ABMA")
    for ctx in (CubeContext.money(2, "me"), CubeContext.match(7, 2, 4, cube=2, owner="opp")):
        for plies in (0, 1):
            ranked = rank_plays(pos, 5, 2, plies=plies, cube=ctx, keep=3)
            after = np.stack([r.play.position.board for r in ranked])
            v = cubeful_equity(after, ctx.flipped(), plies=plies)
            deep = np.array([r.plies == plies for r in ranked])
            if ctx.is_money:
                np.testing.assert_allclose(np.array([r.cubeful for r in ranked])[deep],
                                           -v.equity[deep], atol=1e-12)
            else:
                np.testing.assert_allclose(np.array([r.mwc for r in ranked])[deep],
                                           1 - v.mwc[deep], atol=1e-12)
                win, lose = MET.mwc(3, 3), MET.mwc(5, 1, post_crawford=False)
                mwc = np.array([r.mwc for r in ranked])
                np.testing.assert_allclose([r.cubeful for r in ranked],
                                           2 * (mwc - lose) / (win - lose) - 1, atol=1e-12)
            assert all(r.plies == plies for r in ranked[:1])


# ---------------------------------------------------------------------------
# the score changes the best play
# ---------------------------------------------------------------------------

#: Dead-cube scores (the Crawford game, double match point) where the MWC of
#: the player on roll is a plain function of his probabilities.
SCORE_RULES = {
    "double match point": (CubeContext.match(7, 6, 6), lambda w, wg, lg: w),
    # I lead 1-away: a single loss leaves DMP, a gammon loses the match
    "gammon-save (1-away Crawford, opponent 2-away)":
        (CubeContext.match(7, 6, 5, crawford=True), lambda w, wg, lg: w + 0.5 * (1 - w - lg)),
    # I trail 2-away: a single win reaches DMP, a gammon wins the match
    "gammon-go (2-away Crawford, opponent 1-away)":
        (CubeContext.match(7, 5, 6, crawford=True), lambda w, wg, lg: 0.5 * (w - wg) + wg),
}


@pytest.fixture(scope="module")
def gammonish():
    """(board, dice) pairs of seeded self-play positions with gammons in play."""
    boards, dice = self_play_positions(3000, 17)
    ev = get_evaluator("net")
    p = ev.evaluate_batch(boards)
    keep = (p[:, 1] + p[:, 3] > 0.1) & (classify_boards(boards) != PositionClass.OVER)
    return boards[keep][:300], dice[keep][:300]


@pytest.mark.parametrize("name", sorted(SCORE_RULES))
def test_score_changes_the_best_play(name, gammonish):
    """At each dead-cube score the cubeful ranking picks the play with the
    best MWC by the score's rule, and that differs from the money play in
    some positions."""
    ctx, rule = SCORE_RULES[name]
    boards, dice = gammonish
    at_score = rank_plays_batch(boards, dice, cube=ctx)
    money = rank_plays_batch(boards, dice, cube=CubeContext.money())
    differ = 0
    for i in range(len(boards)):
        lo, hi = at_score.offsets[i], at_score.offsets[i + 1]
        if hi - lo < 2:
            continue
        p = at_score.probs[lo:hi]
        mwc = rule(p[:, 0], p[:, 1], p[:, 3])
        best = at_score.order[lo]
        # the kernel reads probabilities clipped to be consistent (within 1e-6)
        np.testing.assert_allclose(at_score.mwc[lo:hi], mwc, atol=2e-6)
        assert mwc[best - lo] >= mwc.max() - 4e-6
        differ += mwc[money.order[lo] - lo] < mwc.max() - 1e-3
    assert differ >= 10, differ


@pytest.mark.gnubg
def test_gnubg_agrees_on_checker_play_at_the_score(gnubg_binary, table):
    """gnubg's 0-ply checker-play hints for 80 race and contact positions,
    at money and four scores (double match point, gammon-save and gammon-go
    in the Crawford game, 4-away 2-away with a live cube).  From gnubg's own
    probabilities of each play it lists, bgfast's cube model (the kernel
    rank_plays uses at 0 plies, the opponent's cube decision after the play
    included) gives gnubg's cubeful equity within its printing (5 decimals,
    1e-4) and so ranks gnubg's best play first, wherever gnubg's top two
    are not tied in print -- including the 20 or more positions where the
    score changes gnubg's best play."""
    boards, dice = self_play_positions(1500, 31)
    keep = classify_boards(boards) >= PositionClass.RACE
    boards, dice = boards[keep][::5][:80], dice[keep][::5][:80]
    n = len(boards)
    contexts = [CubeContext.money()] + [ctx for ctx, _ in SCORE_RULES.values()] + \
        [CubeContext.match(7, 3, 5)]
    hints = gnubg_hints(gnubg_binary, [(b, d, c) for c in contexts for b, d in zip(boards, dice)])
    search = C._Search(get_evaluator("net"), table, MET)
    ranked = swapped = 0
    for k, ctx in enumerate(contexts):
        rows = np.array([ctx.kernel_row()], dtype=np.int64)
        for i in range(n):
            here = hints[k * n + i]
            if not here:
                continue
            after = np.stack([h[0].board for h in here])
            onroll = invert(np.array([h[1] for h in here]))
            _, eq, _ = search.play_values(after, onroll, np.zeros(len(here), dtype=np.int32), rows)
            where = (ctx.describe(), Position(boards[i]).position_id(), tuple(dice[i]))
            np.testing.assert_allclose(eq, [h[2] for h in here], rtol=0, atol=1e-4,
                                       err_msg=str(where))
            if len(here) > 1 and here[0][2] - here[1][2] >= 2e-4:
                assert int(np.argmax(eq)) == 0, where
                ranked += 1
                swapped += k > 0 and bool(hints[i]) and here[0][0] != hints[i][0][0]
    assert ranked >= 250 and swapped >= 20, (ranked, swapped)
