"""Move generation: the rules one by one, a pure-Python reference, gnubg."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bgfast.errors import InvalidDiceError, InvalidPositionError
from bgfast.movegen import (ALL_ROLLS, count_plays_batch, count_shots, legal_plays,
                            legal_plays_batch)
from bgfast.position import Position

from corpus import random_boards, self_play_positions
from reference_movegen import reference_plays


def board(me=None, opp=None, opp_bar=0):
    """A board from {point: count} dicts.  BOTH dicts use the numbering of the
    player on roll (points 1..24, 25 = bar for ``me``); the opponent's bar is
    ``opp_bar``.  Sides may have fewer than 15 checkers (the rest are off)."""
    b = np.zeros((2, 25), dtype=np.uint8)
    for p, n in (me or {}).items():
        b[1][p - 1] = n
    for p, n in (opp or {}).items():
        b[0][24 - p] = n                       # my point p is the opponent's 25 - p
    b[0][24] = opp_bar
    return b


def notations(b, d1, d2):
    return {p.notation for p in legal_plays(b, d1, d2)}


def move_sets(b, d1, d2):
    """Each play as a sorted tuple of its (from, to) single moves."""
    return {tuple(sorted(p.moves, reverse=True)) for p in legal_plays(b, d1, d2)}


def finals(b, d1, d2):
    """Resulting (my row, opponent row) pairs, unswapped."""
    off, res = legal_plays_batch(b, (d1, d2))
    return {(tuple(int(x) for x in r[0]), tuple(int(x) for x in r[1])) for r in res}


# ---------------------------------------------------------------- moving
def test_each_die_separately_or_one_checker_both():
    b = board({24: 1, 13: 1})
    got = {frozenset(m) for m in move_sets(b, 5, 3)}
    # 24/19 13/10, 24/21 13/8, one checker 24/19/16 or 24/21/16, 13/8/5 or 13/10/5
    assert len({p.position for p in legal_plays(b, 5, 3)}) == 4
    assert frozenset({(24, 19), (13, 10)}) in got
    assert frozenset({(24, 21), (13, 8)}) in got


def test_intermediate_point_must_be_open():
    # one checker on 24 with 6-5; my 18 and 19 are held by the opponent, 13 is free
    b = board({24: 1}, {18: 2, 19: 2})
    assert legal_plays(b, 6, 5) == []
    b = board({24: 1}, {18: 2})                 # 24/19/13 through the open 19
    assert move_sets(b, 6, 5) == {((24, 19), (19, 13))}


def test_never_land_on_two_or_more_but_hit_a_blot():
    b = board({13: 1}, {9: 2, 7: 1})
    plays = legal_plays(b, 4, 2)
    dests = {m[1] for p in plays for m in p.moves}
    assert 9 not in dests                        # 13/9 is blocked
    hitting = [p for p in plays if p.position.board[1][24] == 1]
    assert [p.moves for p in hitting] == [((13, 11), (11, 7))]


def test_double_is_played_four_times():
    b = board({24: 2, 13: 2})
    fs = finals(b, 2, 2)
    assert fs
    for me, _ in fs:
        assert sum((i + 1) * n for i, n in enumerate(me)) == 2 * 24 + 2 * 13 - 8


def test_must_use_both_dice_if_possible():
    # with 6-1 the 8/2 then 2/1 or 8/7/1 etc.: all plays use both dice
    b = board({8: 1, 3: 2})
    assert all(len(p.moves) == 2 for p in legal_plays(b, 6, 1))
    # a play of 6 that leaves the 1 unplayable is not allowed when another uses both:
    # checker on 7 and blocked 1-point: 7/1 is blocked; 7/6 then 6/0? not home-all -> must find both
    b = board({24: 1, 8: 1}, {18: 2, 23: 2, 2: 2})
    for p in legal_plays(b, 6, 1):
        assert len(p.moves) == 2


def test_only_one_die_playable_must_play_it():
    # 6 from 24 lands on my 18 (blocked); 3 lands on 21 (open); then 21-6 = 15 blocked
    b = board({24: 1}, {18: 2, 15: 2})
    assert move_sets(b, 6, 3) == {((24, 21),)}


def test_either_but_not_both_must_play_the_higher():
    # 24/18 or 24/19 are open, but 24-11 = 13 is blocked
    b = board({24: 1}, {13: 2})
    assert move_sets(b, 6, 5) == {((24, 18),)}
    # when the higher die is blocked, the lower one must be played
    b = board({24: 1}, {13: 2, 18: 2})
    assert move_sets(b, 6, 5) == {((24, 19),)}


def test_double_plays_as_many_as_possible():
    b = board({24: 1}, {4: 2})                   # 24/19/14/9, then 9/4 blocked
    assert move_sets(b, 5, 5) == {((24, 19), (19, 14), (14, 9))}


def test_no_legal_move_loses_the_turn():
    b = board({25: 1, 6: 5}, {p: 2 for p in range(19, 25)})
    assert legal_plays(b, 6, 5) == []
    off, res = legal_plays_batch(b, (6, 5))
    assert list(off) == [0, 0] and res.shape == (0, 2, 25)


# ---------------------------------------------------------------- bar
def test_checker_on_bar_must_enter_first():
    b = board({25: 1, 13: 5, 6: 5})
    for p in legal_plays(b, 3, 1):
        assert p.moves[0][0] == 25


def test_enter_on_point_matching_die():
    b = board({25: 1, 13: 5})
    # a 3 enters on the opponent's 3-point, my 22; a 6 on my 19
    assert {p.moves[0] for p in legal_plays(b, 6, 3)} == {(25, 22), (25, 19)}


def test_cannot_enter_on_blocked_point_whole_turn_lost():
    b = board({25: 1, 13: 5}, {22: 2, 20: 2})    # opponent's 3 and 5 points made
    assert legal_plays(b, 5, 3) == []


def test_partial_entry_then_lose_the_rest():
    closed = {25 - q: 2 for q in (1, 2, 3, 5, 6)}   # only the opponent's 4-point is open
    b = board({25: 2, 6: 5}, closed)
    assert move_sets(b, 5, 4) == {((25, 21),)}    # one enters with the 4, the 5 is lost
    ps = legal_plays(b, 4, 4)                     # both enter, then two more 4s
    assert ps and all(p.moves[0] == (25, 21) and p.moves[1] == (25, 21) for p in ps)
    assert all(len(p.moves) == 4 for p in ps)


def test_after_entering_the_rest_of_the_roll_is_free():
    b = board({25: 1, 13: 5})
    sources = {p.moves[1][0] for p in legal_plays(b, 6, 1)}
    assert 13 in sources and (24 in sources or 19 in sources)


# ---------------------------------------------------------------- bear-off
def test_bear_off_only_when_all_home():
    b = board({7: 1, 2: 3})
    for p in legal_plays(b, 2, 1):
        assert (2, 0) not in p.moves or (7, 6) in p.moves or (7, 5) in p.moves
    # with 1-1 the checker on 7 comes home first, then bearing off is allowed
    assert any(sum(me) < 4 for me, _ in finals(b, 1, 1))
    assert all(sum(me) == 4 for me, _ in finals(board({9: 1, 2: 3}), 1, 1))


def test_die_bears_off_from_its_point():
    assert move_sets(board({4: 2}), 4, 4) == {((4, 0), (4, 0))}


def test_may_move_inside_instead_of_bearing_off():
    plays = move_sets(board({6: 1, 5: 1}), 1, 1)
    assert ((6, 5), (6, 5)) not in plays
    assert any(all(t != 0 for _, t in p) for p in plays)


def test_empty_point_and_higher_checker_must_move_higher():
    # die 4 with checkers on 6 and 2: the 4 point is empty and 6 is higher
    # 6/2 is forced; then the 4s are larger than the highest point (2): 2/off twice
    assert move_sets(board({6: 1, 2: 1}), 4, 4) == {((6, 2), (2, 0), (2, 0))}
    first_moves = {p.moves[0] for p in legal_plays(board({6: 1, 2: 1}), 4, 4)}
    assert first_moves == {(6, 2)}


def test_die_larger_than_highest_bears_off_highest():
    assert move_sets(board({3: 1, 2: 1}), 6, 5) == {((3, 0), (2, 0))}


def test_hit_during_bear_off_must_come_home_first():
    b = board({25: 1, 3: 10})
    for p in legal_plays(b, 6, 3):
        assert p.moves[0][0] == 25
        assert all(t != 0 for _, t in p.moves)


def test_higher_die_rule_in_bear_off():
    assert move_sets(board({1: 1}), 6, 2) == {((1, 0),)}


# ---------------------------------------------------------------- API
def test_results_are_swapped_and_deduplicated():
    b = Position.initial().board
    off, res = legal_plays_batch(b, (3, 1))
    assert len(res) == 16 == len({r.tobytes() for r in res})
    assert (res[:, 1] == b[0]).all()                 # opponent untouched, now on roll


def test_batch_offsets_line_up():
    boards, dice = self_play_positions(300, seed=5)
    off, res = legal_plays_batch(boards, dice)
    counts = count_plays_batch(boards, dice)
    assert (np.diff(off) == counts).all()
    for i in range(0, 300, 37):
        single = legal_plays_batch(boards[i], dice[i])[1]
        assert (single == res[off[i]:off[i + 1]]).all()


def test_bad_input_raises_specific_errors():
    b = Position.initial().board
    with pytest.raises(InvalidDiceError, match="1..6"):
        legal_plays_batch(b, (0, 3))
    with pytest.raises(InvalidDiceError):
        legal_plays(b, 7, 1)
    bad = b.copy()
    bad[1, 0] = 5
    with pytest.raises(InvalidPositionError, match="at most 15"):
        legal_plays_batch(bad, (3, 1))
    with pytest.raises(InvalidPositionError, match="shape"):
        legal_plays_batch(np.zeros((3, 25), dtype=np.uint8), (3, 1))


def test_dice_errors_say_what_is_wrong():
    b = Position.initial().board
    with pytest.raises(InvalidDiceError, match=r"^the roll 7-1 has a die of 7: each die shows 1\.\.6$"):
        legal_plays_batch(b, (7, 1))
    with pytest.raises(InvalidDiceError, match=r"^the roll 3-0 of board 1 has a die of 0"):
        legal_plays_batch(np.stack([b, b]), [(3, 1), (3, 0)])
    for bad, needle in [((1.5, 2), "integers 1..6, not float64"),
                        (np.array([True, False]), "not bool"), ((2 ** 70, 1), "not object"), ([[1, 2], [3]], "pair of integers"),
                        ((1, 2, 3), r"shape \(1, 2\) or \(2,\)")]:
        with pytest.raises(InvalidDiceError, match=needle):
            count_plays_batch(b, bad)


@pytest.mark.parametrize("dice", [(-100000, 5), (0, 0), (7, 7), (2 ** 31, 1), (2 ** 32 + 3, 1),
                                  (1, -2 ** 63)])
def test_kernels_refuse_dice_outside_1_to_6(dice):
    """The kernels themselves refuse such dice (code -3) without writing:
    a die is never cast into 1..6 from a wider value, and the boards before
    and after a bad row are still played."""
    from bgfast import _evaluate, _movegen
    from bgfast.evaluate import EVAL_PUBEVAL, POLICY_PUBEVAL

    start = Position.initial()
    b = np.ascontiguousarray(np.repeat(start.board[None], 3, axis=0))
    d = np.array([(3, 1), dice, (6, 6)], dtype=np.int64)
    want = [len(legal_plays(start, 3, 1)), -3, len(legal_plays(start, 6, 6))]
    assert want[0] == 16
    assert _movegen.count_plays_batch(b, d).tolist() == want
    assert _movegen.legal_plays_batch(b, d, True)[3] == (1, -3)
    chosen, results = _evaluate.choose_plays(b, d, POLICY_PUBEVAL, EVAL_PUBEVAL)
    assert chosen.tolist() == want
    assert results[0].sum() == 30 and results[2].sum() == 30


# ---------------------------------------------------------------- reference
def check_against_reference(b, d1, d2):
    ref = reference_plays(b.tolist(), d1, d2)          # {(opp, me)} unswapped
    res = legal_plays_batch(b, (d1, d2))[1]
    ours = {(tuple(int(x) for x in r[1]), tuple(int(x) for x in r[0])) for r in res}
    assert ours == ref, (b.tolist(), d1, d2)
    assert len(ours) == len(res), ("duplicate results", b.tolist(), d1, d2)


@st.composite
def boards(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["any", "home"]))
    return random_boards(1, seed, home_only=(kind == "home"))[0]


@settings(max_examples=400, deadline=None)
@given(boards(), st.integers(1, 6), st.integers(1, 6))
def test_property_matches_reference(b, d1, d2):
    check_against_reference(b, d1, d2)


def test_self_play_matches_reference():
    bs, ds = self_play_positions(1500, seed=11)
    for b, (d1, d2) in zip(bs, ds):
        check_against_reference(b, int(d1), int(d2))


# ---------------------------------------------------------------- gnubg
def gnubg_results(gnubg_nn, b, d1, d2):
    out = set()
    for key in gnubg_nn.moves(b.tolist(), int(d1), int(d2)):
        opp, me = gnubg_nn.board_from_position_key(key)
        out.add((tuple(opp), tuple(me)))
    return out


def differential(gnubg_nn, bs, ds):
    off, res = legal_plays_batch(bs, ds)
    mismatches = []
    for i, (b, (d1, d2)) in enumerate(zip(bs, ds)):
        mine = res[off[i]:off[i + 1]]
        ours = {(tuple(r[1]), tuple(r[0])) for r in mine}
        if len(ours) != len(mine):                    # a result given twice
            mismatches.append(("duplicate", b.tolist(), int(d1), int(d2)))
        theirs = gnubg_results(gnubg_nn, b, d1, d2)
        if theirs == {(tuple(b[0]), tuple(b[1]))} and not ours:
            continue                                  # gnubg returns the unchanged board
        if ours != theirs:
            mismatches.append((b.tolist(), int(d1), int(d2)))
    return mismatches


def test_gnubg_self_play_corpus(gnubg_nn):
    bs, ds = self_play_positions(8000, seed=2024)
    assert differential(gnubg_nn, bs, ds) == []


def test_gnubg_bar_and_bearoff_corpus(gnubg_nn):
    rng = np.random.default_rng(7)
    bar = random_boards(2000, seed=8, bar_prob=2.5)
    home = random_boards(2000, seed=9, home_only=True)
    bs = np.concatenate([bar, home])
    ds = rng.integers(1, 7, size=(len(bs), 2))
    assert (bs[:2000, :, 24].sum(axis=1) > 0).mean() > 0.5
    assert differential(gnubg_nn, bs, ds) == []


def test_gnubg_all_21_rolls(gnubg_nn):
    bs, _ = self_play_positions(300, seed=99)
    bs = np.repeat(bs, 21, axis=0)
    ds = np.tile(ALL_ROLLS, (300, 1))
    assert differential(gnubg_nn, bs, ds) == []


# ---------------------------------------------------------------- shots
def lone_blot(distance):
    """My single checker on my 24-point and an opposing blot ``distance`` pips in front."""
    return board({24: 1}, {24 - distance: 1})


def test_direct_shots_hit_11_to_17_indirect_at_most_6():
    counts = {d: int(count_shots(lone_blot(d))[0]) for d in range(1, 13)}
    for d in range(1, 7):
        assert 11 <= counts[d] <= 17, counts
    for d in range(7, 13):
        assert counts[d] <= 6, counts
    assert counts[6] == 17 and counts[1] == 11
    assert counts[7] == 6 and counts[11] == 2 and counts[12] == 3


def test_shots_respect_blocks():
    free = int(count_shots(lone_blot(8))[0])
    # block my 20 and 18 points with opponent points (intermediate points of 4-4 and 6-2)
    b = board({24: 1}, {16: 1, 20: 2, 18: 2})   # blocks the 4-4 and 6-2 routes
    assert int(count_shots(b)[0]) < free


def test_position_shots_method():
    assert Position.initial().shots() == 0
    p = Position(lone_blot(6))
    assert p.shots() == 17
