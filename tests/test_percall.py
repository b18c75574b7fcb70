"""The per-call paths (one board, one roll) give what the batch paths give,
and the lazily made ranked plays behave like the eager list."""
import pickle

import dataclasses
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bgfast import _evaluate, _movegen
from bgfast.cube import CubeContext
from bgfast.errors import InvalidDiceError, InvalidPositionError
from bgfast.evaluate import (RankedPlay, RankedPlays, equity, get_evaluator, invert, rank_plays,
                             rank_plays_batch)
from bgfast.movegen import Play, _frozen, legal_plays, legal_plays_batch
from bgfast.position import Position, as_boards

from corpus import random_boards, self_play_positions

_POOL = np.concatenate([self_play_positions(300, 11)[0], random_boards(100, 12)])

rolls = st.tuples(st.integers(1, 6), st.integers(1, 6))
boards = st.integers(0, len(_POOL) - 1).map(lambda i: _POOL[i])


def _eager(batch, i, before):
    """Board i's ranked plays built one by one with the public constructors."""
    out = []
    for r in batch.order[batch.offsets[i]:batch.offsets[i + 1]]:
        steps = tuple((int(a), int(b)) for a, b in batch.moves[r] if a >= 0)
        mwc = None if batch.mwc is None or np.isnan(batch.mwc[r]) else float(batch.mwc[r])
        out.append(RankedPlay(Play(before, steps, Position(batch.results[r])),
                              tuple(float(x) for x in batch.probs[r]), float(batch.equity[r]),
                              int(batch.depth[r]),
                              None if batch.cubeful is None else float(batch.cubeful[r]), mwc))
    return out


def _same(ranked, eager):
    """Equal plays in the same order with bit-identical values."""
    assert len(ranked) == len(eager)
    for a, b in zip(ranked, eager):
        assert a.play.moves == b.play.moves and a.play.position == b.play.position
        assert a.play.before == b.play.before
        assert a.probs == b.probs and a.equity == b.equity and a.plies == b.plies
        assert a.cubeful == b.cubeful and a.mwc == b.mwc
    assert ranked == eager


# ---------------------------------------------------------------- move generation

@settings(max_examples=150, deadline=None)
@given(boards, rolls)
def test_single_board_plays_match_the_batch_kernel(board, roll):
    d = np.array([roll], dtype=np.int64)
    off, res, mv, fail = _movegen.legal_plays_batch(board[None], d, True)
    assert fail is None
    one_res, one_mv = _movegen.legal_plays_one(board, roll[0], roll[1], True, True)
    assert np.array_equal(one_res, res) and np.array_equal(one_mv, mv)
    o, r = legal_plays_batch(board[None], roll)
    assert np.array_equal(o, off) and np.array_equal(r, res)
    o, r, m = legal_plays_batch(board, [list(roll)], with_moves=True)
    assert np.array_equal(o, off) and np.array_equal(r, res) and np.array_equal(m, mv)
    plays = legal_plays(Position(board), *roll)
    assert [p.position.board.tolist() for p in plays] == res.tolist()


def test_single_board_generator_is_reused_across_sizes():
    """The kept generator gives the right plays after a board with many plays."""
    big = Position.from_position_id("2+4BAEDbtgEAAA")            # a 1-1 with many plays
    small = Position.initial()
    first = legal_plays_batch(small.board[None], (3, 1))[1]
    many = legal_plays_batch(big.board[None], (1, 1))[1]
    assert len(many) > len(first)
    again = legal_plays_batch(small.board[None], (3, 1))[1]
    assert np.array_equal(first, again) and again.flags.owndata


def test_single_board_path_reports_bad_input_as_the_batch_path():
    bad = Position.initial().board.copy()
    bad[1, 0] = 9                                                 # 24 checkers on roll
    with pytest.raises(InvalidPositionError, match="board 0: the player on roll has 24"):
        legal_plays_batch(bad[None], (3, 1))
    clash = Position.initial().board.copy()
    clash[1, 5] -= 1
    clash[1, 0] = 1                      # the on-roll side's 1-point, where the opponent has 2
    with pytest.raises(InvalidPositionError, match="same point"):
        legal_plays_batch(clash, (3, 1))
    b = Position.initial().board[None]
    for dice in [(0, 1), (3, 7), (3.0, 1), [[1, 2, 3]], [(1, 2), (3, 4)]]:
        with pytest.raises(InvalidDiceError):
            legal_plays_batch(b, dice)
    # numpy integers take the checked path and give the same plays
    assert np.array_equal(legal_plays_batch(b, np.array([3, 1]))[1], legal_plays_batch(b, (3, 1))[1])
    # an impossible board is refused by the kernel entry too (the caller reports it)
    assert _movegen.legal_plays_one(bad, 3, 1, False, True) is None
    assert _movegen.legal_plays_one(bad.astype(np.int64), 3, 1, False, True) is None


# ---------------------------------------------------------------- ranking

@settings(max_examples=120, deadline=None)
@given(boards, rolls)
def test_rank_plays_matches_the_batch_path(board, roll):
    pos = Position(board)
    batch = rank_plays_batch(board[None], [roll])
    _same(rank_plays(pos, *roll), _eager(batch, 0, pos))
    _same(rank_plays(board, *roll), _eager(batch, 0, pos))


@settings(max_examples=40, deadline=None)
@given(boards, rolls, st.sampled_from(["money", "match", "ply1", "pubeval"]))
def test_rank_plays_matches_the_batch_path_cubeful_deeper_pubeval(board, roll, kind):
    pos = Position(board)
    kw = {"money": {"cube": CubeContext.money()},
          "match": {"cube": CubeContext.from_away(3, 5)},
          "ply1": {"plies": 1, "keep": 3},
          "pubeval": {"evaluator": "pubeval"}}[kind]
    batch = rank_plays_batch(board[None], [roll], **kw)
    _same(rank_plays(pos, *roll, **kw), _eager(batch, 0, pos))


def test_rank_plays_of_many_boards_agree_with_one_batch():
    """Each board ranked on its own equals its slice of one batch of 200 boards."""
    rng = np.random.default_rng(5)
    idx = rng.integers(0, len(_POOL), 200)
    dice = rng.integers(1, 7, (200, 2))
    batch = rank_plays_batch(_POOL[idx], dice)
    for k in range(200):
        pos = Position(_POOL[idx[k]])
        _same(rank_plays(pos, int(dice[k, 0]), int(dice[k, 1])), _eager(batch, k, pos))


def test_mover_values_is_invert_equity_and_a_stable_sort():
    rng = np.random.default_rng(3)
    for n in (0, 1, 5, 64, 65, 300):
        onroll = rng.random((n, 5))
        onroll[::3] = onroll[0] if n else onroll[::3]          # ties
        probs, eq, order = _evaluate.mover_values(np.ascontiguousarray(onroll))
        ref = invert(onroll)
        assert np.array_equal(probs, ref) and np.array_equal(eq, equity(ref))
        assert np.array_equal(order, np.argsort(-equity(ref), kind="stable"))
        unsorted = _evaluate.mover_values(np.ascontiguousarray(onroll), False)
        assert np.array_equal(unsorted[1], eq) and unsorted[2] is None
    onroll = rng.random((6, 5))
    onroll[2, 0] = np.nan
    _probs, eq, order = _evaluate.mover_values(onroll)
    assert np.array_equal(order, np.argsort(-eq, kind="stable")) and order[-1] == 2


# ---------------------------------------------------------------- lazy objects

def test_ranked_plays_behave_like_the_eager_list():
    pos = Position.initial()
    ranked = rank_plays(pos, 3, 1)
    eager = _eager(rank_plays_batch(pos.board[None], [(3, 1)]), 0, pos)
    assert isinstance(ranked, RankedPlays) and len(ranked) == len(eager) == 16
    assert ranked[-1] == eager[-1] and ranked[3] == eager[3]
    assert ranked[1:4] == eager[1:4] and isinstance(ranked[1:4], list)
    assert ranked[::-5] == eager[::-5]
    assert ranked[0] is ranked[0]                         # made once, then kept
    assert repr(ranked) == repr(eager)
    assert ranked == eager and eager == ranked and ranked == rank_plays(pos, 3, 1)
    assert ranked != eager[:-1] and ranked != tuple(eager)
    assert list(reversed(ranked)) == eager[::-1]
    assert eager[5] in ranked and ranked.index(eager[5]) == 5
    with pytest.raises(IndexError):
        ranked[16]
    with pytest.raises(TypeError):
        ranked["0"]
    with pytest.raises(TypeError):
        hash(ranked)
    back = pickle.loads(pickle.dumps(ranked))
    assert isinstance(back, RankedPlays) and back == eager and repr(back) == repr(eager)
    assert ranked[0].to_dict() == eager[0].to_dict()
    assert str(ranked[0].play) == str(eager[0].play) == "8/5 6/5"
    assert hash(ranked[0].play.position) == hash(eager[0].play.position)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ranked[0].equity = 1.0
    with pytest.raises(ValueError):
        ranked[0].play.position.board[0, 0] = 1              # read-only, like Position(b)


def test_ranked_plays_of_a_roll_that_cannot_be_played():
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, 24] = 2                                   # two on the bar
    b[0, 0:6] = 2                                  # the opponent's closed board
    b[0, 12] = 3
    b[1, 12] = 13
    ranked = rank_plays(b, 6, 6)
    assert len(ranked) == 0 and not ranked and ranked == [] and list(ranked) == []
    assert repr(ranked) == "[]"


def test_frozen_construction_equals_the_constructor():
    pos = Position.initial()
    after = Position(as_boards(pos.board[::-1])[0])
    a = _frozen(Play, {"before": pos, "moves": ((8, 5), (6, 5)), "position": after})
    b = Play(pos, ((8, 5), (6, 5)), after)
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.moves = ()


def test_positions_made_in_bulk_equal_single_ones():
    res = legal_plays_batch(_POOL[:50], (5, 3))[1]
    for p, b in zip(Position._many_checked(res), res):
        q = Position(b)
        assert p == q and p.key == q.key and np.array_equal(p.board, q.board)
        assert p.classify() == q.classify() and not p.board.flags.writeable


@pytest.mark.parametrize("name", ["net", "pubeval", "composite"])
def test_evaluate_one_position_gives_the_batch_numbers(name):
    ev = get_evaluator(name)
    for b in _POOL[:40]:
        probs = ev.evaluate_batch(b[None])
        e = ev.evaluate(Position(b))
        assert e.probs == tuple(probs[0].tolist()) and e.equity == float(equity(probs)[0])
        assert type(e.equity) is float and e.evaluator == name
        assert e == type(e)(e.probs, e.equity, name) and ev.evaluate(b) == e
    rows = np.random.default_rng(4).random((100, 5))
    assert np.array_equal(_evaluate.equities(rows), equity(rows))

