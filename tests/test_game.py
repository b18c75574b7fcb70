"""The game and match engine: every scoring and cube rule of docs/rules.md."""
import json
import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bgfast.errors import BgfastError, InvalidMoveError, InvalidRecordError
from bgfast.formats import MatchState, XGID
from bgfast.game import (Action, Game, IllegalActionError, Match, Phase, ResultKind, Rules,
                         check_name, max_result, money_session, result_kind)
from bgfast.players import Beginner, Heuristic, Player, play_game, play_match
from bgfast.position import Position


def board(on_roll: dict, opp: dict) -> Position:
    """A position from {point: checkers} per side, each in its own numbering (25 = bar)."""
    b = np.zeros((2, 25), dtype=np.uint8)
    for row, side in ((1, on_roll), (0, opp)):
        for p, n in side.items():
            b[row, p - 1] = n
    return Position(b)


def finish(loser: dict, *, cube=1, owner=None, rules=None, match_length=0, score=(0, 0)):
    """Player 0 (on roll) has one checker on its 1-point and bears it off with 2-1."""
    g = Game(rules, position=board({1: 1}, loser), on_roll=0, cube_value=cube,
             cube_owner=owner, match_length=match_length, score=score)
    g.roll((2, 1))
    g.play("1/off")
    assert g.over
    return g.result


# ---------------------------------------------------------------------------
# results of a game
# ---------------------------------------------------------------------------

class TestResults:
    def test_single_when_loser_bore_off(self):
        r = finish({12: 14})
        assert (r.winner, r.kind, r.points, r.how) == (0, ResultKind.SINGLE, 1, "bearoff")

    def test_borne_off_one_then_hit_is_single(self):
        # one checker off, one on the bar and others in the winner's home board
        r = finish({25: 1, 22: 2, 12: 11})
        assert r.kind == ResultKind.SINGLE and r.points == 1

    def test_gammon(self):
        r = finish({12: 15})
        assert r.kind == ResultKind.GAMMON and r.points == 2

    def test_gammon_with_loser_in_own_home_board(self):
        # the loser's own home board is not the winner's: still only a gammon
        r = finish({3: 10, 5: 5})
        assert r.kind == ResultKind.GAMMON

    def test_backgammon_from_the_bar(self):
        r = finish({25: 1, 12: 14})
        assert r.kind == ResultKind.BACKGAMMON and r.points == 3

    def test_backgammon_from_winners_home_board(self):
        # the loser's 20-point is the winner's 5-point
        r = finish({20: 1, 12: 14})
        assert r.kind == ResultKind.BACKGAMMON

    def test_loser_on_winners_7_point_is_only_gammon(self):
        r = finish({18: 1, 12: 14})  # the loser's 18 = the winner's 7-point
        assert r.kind == ResultKind.GAMMON

    @pytest.mark.parametrize("cube,kind_board,points", [
        (2, {12: 14}, 2), (4, {12: 15}, 8), (8, {25: 1, 12: 14}, 24)])
    def test_points_are_result_times_cube(self, cube, kind_board, points):
        assert finish(kind_board, cube=cube, owner=1).points == points

    def test_result_kind_and_max_result_helpers(self):
        pos = board({}, {25: 1, 12: 14})  # row 1 (on roll) has borne off everything
        assert result_kind(pos) == (1, ResultKind.BACKGAMMON)
        assert result_kind(Position.initial()) is None
        assert max_result(Position.initial(), 1) == ResultKind.BACKGAMMON
        assert max_result(board({6: 14}, {6: 15}), 1) == ResultKind.SINGLE
        assert max_result(board({6: 15}, {6: 15}), 1) == ResultKind.GAMMON


# ---------------------------------------------------------------------------
# the opening
# ---------------------------------------------------------------------------

class TestOpening:
    def test_equal_dice_are_thrown_again_and_higher_die_starts(self):
        g = Game()
        assert g.phase == Phase.OPENING
        g.opening_roll((3, 3))
        assert g.phase == Phase.OPENING and g.cube_value == 1
        g.opening_roll((2, 5))
        assert g.turn == 1 and g.dice == (5, 2) and g.phase == Phase.MOVE
        assert not g.can_double()  # not a decision point, and never the first turn
        g.play("13/8 24/22")
        assert g.turn == 0 and g.phase == Phase.ROLL

    def test_opening_is_never_a_double_with_random_dice(self):
        for seed in range(30):
            g = Game(seed=seed)
            g.start()
            assert g.dice[0] > g.dice[1]
            throws = [a.dice for a in g.actions if a.kind == "opening"]
            assert all(a == b for a, b in throws[:-1])  # earlier throws were ties
            d0, d1 = throws[-1]
            assert g.turn == (0 if d0 > d1 else 1)

    def test_opening_reroll_option(self):
        g = Game(Rules(opening_reroll=True))
        g.opening_roll((6, 1))
        assert g.turn == 0 and g.phase == Phase.ROLL and g.dice is None
        assert not g.can_double()  # no doubling before the first roll
        with pytest.raises(IllegalActionError, match="first roll"):
            g.double()
        g.roll((4, 4))  # the starter may roll a double
        assert len(g.legal_plays()) > 1

    def test_same_seed_same_game(self):
        def run(seed):
            g = Game(seed=seed)
            play_game(g, [Beginner(seed), Beginner(seed + 1)])
            return g.actions, g.result
        assert run(5) == run(5)
        assert run(5)[0] != run(6)[0]


# ---------------------------------------------------------------------------
# moving
# ---------------------------------------------------------------------------

class TestMoves:
    def test_only_legal_plays_are_accepted(self):
        g = Game()
        g.opening_roll((3, 1))
        with pytest.raises(InvalidMoveError):
            g.play("24/19")           # 5 pips: not 3-1
        with pytest.raises(InvalidMoveError):
            g.play("13/10")           # one die only, though both can be played
        with pytest.raises(InvalidMoveError):
            g.play(((13, 10),))       # one die only
        played = g.play("8/5 6/5")
        assert played.moves and g.actions[-1].moves == played.moves
        assert g.position(0).board[1][4] == 2   # player 0's 5-point is made

    def test_play_by_moves_and_by_play_object(self):
        g = Game()
        g.opening_roll((1, 3))  # player 1 starts
        plays = g.legal_plays()
        chosen = plays[3]
        assert g.play(list(chosen.moves)).position == chosen.position

    def test_turn_lost_when_no_play(self):
        # player 0 on the bar against a closed board
        pos = board({25: 1, 6: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
        g = Game(position=pos, on_roll=0)
        g.roll((6, 5))
        assert g.phase == Phase.ROLL and g.turn == 1
        assert g.actions[-1] == Action("move", 0, moves=())

    def test_wrong_phase_and_wrong_player(self):
        g = Game()
        with pytest.raises(IllegalActionError):
            g.roll()
        g.opening_roll((6, 1))
        with pytest.raises(IllegalActionError):
            g.roll()
        with pytest.raises(IllegalActionError):
            g.take()
        g.play("13/7 8/7")
        with pytest.raises(IllegalActionError):
            g.play("13/7 8/7")
        with pytest.raises(IllegalActionError):
            g.apply(Action("double", 0))  # player 1 is to act


# ---------------------------------------------------------------------------
# the cube
# ---------------------------------------------------------------------------

def started(rules=None, **kw) -> Game:
    """A game after player 0's opening 3-1, player 1 to roll."""
    g = Game(rules, **kw)
    g.opening_roll((3, 1))
    g.play("8/5 6/5")
    return g


class TestCube:
    def test_double_only_before_rolling(self):
        g = started()
        assert g.can_double()
        g.roll((2, 1))
        assert not g.can_double()
        with pytest.raises(IllegalActionError):
            g.double()

    def test_centred_cube_either_side_owned_cube_only_owner(self):
        g = started()
        assert g.cube_available(0) and g.cube_available(1)
        assert g.double() == 2 and g.to_act == 0
        g.take()
        assert (g.cube_value, g.cube_owner, g.turn, g.phase) == (2, 0, 1, Phase.ROLL)
        assert not g.can_double()  # player 1 doubled, player 0 owns the cube now
        with pytest.raises(IllegalActionError, match="owns the cube"):
            g.double()
        g.roll((2, 1))
        g.play(g.legal_plays()[0])
        assert g.can_double()  # the owner may redouble
        assert g.double() == 4
        g.take()
        assert (g.cube_value, g.cube_owner) == (4, 1)

    def test_pass_scores_value_before_double(self):
        g = started()
        g.double()
        g.drop()
        assert g.result.winner == 1 and g.result.points == 1 and g.result.how == "drop"

    def test_pass_after_redouble_to_4_scores_2(self):
        g = started()
        g.double()              # player 1 doubles to 2
        g.take()                # player 0 owns at 2
        g.roll((2, 1))
        g.play(g.legal_plays()[0])
        g.double()              # player 0 redoubles to 4
        g.drop()                # player 1 passes
        r = g.result
        assert (r.winner, r.points, r.kind, r.cube) == (0, 2, ResultKind.SINGLE, 2)

    def test_pass_never_counts_a_gammon(self):
        # player 0 is far ahead (a gammon is likely) but a pass is a single game
        pos = board({1: 3}, {12: 15})
        g = Game(position=pos, on_roll=0, cube_value=2, cube_owner=0)
        g.double()
        g.drop()
        assert g.result.points == 2 and g.result.kind == ResultKind.SINGLE

    def test_gammon_after_take_counts_double(self):
        pos = board({1: 1}, {12: 15})
        g = Game(position=pos, on_roll=0)
        g.double()
        g.take()
        g.roll((3, 2))
        g.play("1/off")
        assert g.result.points == 4 and g.result.cube == 2

    def test_beaver_keeps_ownership(self):
        g = started(Rules(beaver=True))
        g.double()
        assert g.can_beaver()
        assert g.beaver() == 4
        assert (g.cube_value, g.cube_owner, g.turn, g.phase) == (4, 0, 1, Phase.ROLL)
        # no take decision goes back: the doubler simply rolls
        with pytest.raises(IllegalActionError):
            g.take()
        g.roll((2, 1))
        g.play(g.legal_plays()[0])
        assert g.can_double()  # the beaverer owns the cube

    def test_raccoon(self):
        g = started(Rules(beaver=True, raccoon=True))
        g.double()
        g.beaver()
        assert g.phase == Phase.BEAVERED and g.to_act == 1 and g.can_raccoon()
        assert g.raccoon() == 8
        assert (g.cube_owner, g.phase) == (1, Phase.ROLL)
        g.roll((2, 1))

    def test_beaver_not_allowed_without_option_or_in_match(self):
        g = started()
        g.double()
        with pytest.raises(IllegalActionError, match="not allowed"):
            g.beaver()
        with pytest.raises(BgfastError, match="money play only"):
            Match(5, Rules(beaver=True))
        with pytest.raises(BgfastError, match="raccoon needs beaver"):
            Rules(raccoon=True)

    def test_redoubles_have_no_limit_without_a_cap(self):
        g = started()
        for value in (2, 4, 8, 16, 32, 64, 128, 256):
            assert g.double() == value
            g.take()
            g.roll((2, 1))
            g.play(g.legal_plays()[0])
        assert g.cube_value == 256 and g.can_double()

    def test_cube_cap(self):
        g = Game(Rules(max_cube=64), position=Position.initial(), on_roll=0,
                 cube_value=32, cube_owner=0)
        assert g.can_double()
        g.double()
        g.take()
        assert g.cube_value == 64
        g.roll((2, 1))
        g.play(g.legal_plays()[0])
        assert not g.can_double()
        with pytest.raises(IllegalActionError, match="capped at 64"):
            g.double()
        with pytest.raises(BgfastError):
            Rules(max_cube=48)
        # a beaver that would pass the cap is refused
        g = Game(Rules(max_cube=8, beaver=True), position=Position.initial(), on_roll=0,
                 cube_value=4)
        g.double()
        assert not g.can_beaver()

    def test_cube_off_still_counts_gammons(self):
        rules = Rules(cube=False)
        g = started(rules)
        assert not g.can_double()
        with pytest.raises(IllegalActionError, match="switched off"):
            g.double()
        assert finish({12: 15}, rules=rules).points == 2
        assert finish({25: 1, 12: 14}, rules=rules).points == 3


# ---------------------------------------------------------------------------
# resignations
# ---------------------------------------------------------------------------

class TestResignation:
    @pytest.mark.parametrize("kind,points", [(1, 2), (2, 4), (3, 6)])
    def test_accepted_resignation_scores_kind_times_cube(self, kind, points):
        g = Game(position=Position.initial(), on_roll=0, cube_value=2, cube_owner=1)
        g.resign(kind)
        assert g.to_act == 1 and g.resignation_offer == (0, ResultKind(kind))
        g.accept()
        assert (g.result.winner, g.result.points, g.result.how) == (1, points, "resign")

    def test_rejected_resignation_continues(self):
        g = started()
        g.roll((6, 5))
        g.resign(ResultKind.GAMMON)
        g.reject()
        assert g.phase == Phase.MOVE and g.dice == (6, 5)
        g.play("24/13")

    def test_either_player_may_resign(self):
        g = started()
        g.resign(1, player=0)
        assert g.to_act == 1
        g.accept()
        assert g.result.winner == 1


# ---------------------------------------------------------------------------
# money options
# ---------------------------------------------------------------------------

class TestMoneyOptions:
    def test_jacoby_gammon_counts_single_with_centred_cube(self):
        r = finish({12: 15}, rules=Rules(jacoby=True))
        assert r.points == 1 and r.kind == ResultKind.SINGLE
        r = finish({25: 1, 12: 14}, rules=Rules(jacoby=True))
        assert r.points == 1

    def test_jacoby_gammon_counts_after_cube_turned(self):
        pos = board({1: 1}, {12: 15})
        g = Game(Rules(jacoby=True), position=pos, on_roll=0)
        assert g.jacoby_active
        g.double()
        g.take()
        assert not g.jacoby_active
        g.roll((3, 2))
        g.play("1/off")
        assert g.result.points == 4 and g.result.kind == ResultKind.GAMMON

    def test_jacoby_never_in_a_match(self):
        with pytest.raises(BgfastError, match="money play only"):
            Match(7, Rules(jacoby=True))
        # and a match game counts its gammon
        assert finish({12: 15}, match_length=7).points == 2

    def test_jacoby_resignation_of_gammon_counts_single(self):
        g = Game(Rules(jacoby=True), position=Position.initial(), on_roll=0)
        g.resign(2)
        g.accept()
        assert g.result.points == 1

    def test_automatic_doubles_with_limit(self):
        g = Game(Rules(auto_doubles=2))
        g.opening_roll((4, 4))
        assert g.cube_value == 2 and g.cube_owner is None
        g.opening_roll((1, 1))
        g.opening_roll((6, 6))  # the limit is two
        assert g.cube_value == 4
        g.opening_roll((2, 3))
        assert g.turn == 1 and g.cube_value == 4 and g.cube_owner is None
        with pytest.raises(BgfastError, match="money play only"):
            Match(3, Rules(auto_doubles=1))

    def test_automatic_doubles_respect_cap(self):
        g = Game(Rules(auto_doubles=5, max_cube=2))
        for _ in range(3):
            g.opening_roll((5, 5))
        assert g.cube_value == 2


# ---------------------------------------------------------------------------
# matches
# ---------------------------------------------------------------------------

def resign_game(match: Match, loser: int, kind: int = 1) -> Game:
    g = match.new_game()
    g.start()
    g.resign(kind, player=loser)
    g.accept()
    return g


class TestMatch:
    def test_exactly_one_crawford_game(self):
        m = Match(5, seed=1)
        g1 = resign_game(m, loser=1, kind=2)            # 2-0
        assert not g1.crawford and m.score == (2, 0)
        g2 = resign_game(m, loser=1, kind=2)            # 4-0: match point
        assert not g2.crawford and m.score == (4, 0)
        assert m.next_is_crawford()
        g3 = m.new_game()
        assert g3.crawford
        g3.start()
        g3.play(g3.legal_plays()[0])
        assert not g3.can_double() and not g3.cube_available(0) and not g3.cube_available(1)
        with pytest.raises(IllegalActionError, match="Crawford"):
            g3.double()
        ms = MatchState.from_match_id(g3.match_id())
        assert ms.crawford and ms.score == (4, 0)
        # gammons still count in the Crawford game
        g3.resign(2, player=0)
        g3.accept()
        assert m.score == (4, 2)
        g4 = m.new_game()                               # post-Crawford
        assert not g4.crawford
        g4.start()
        g4.play(g4.legal_plays()[0])
        assert g4.can_double()
        g4.resign(1, player=0)
        g4.accept()
        assert m.score == (4, 3)
        g5 = m.new_game()
        assert not g5.crawford and not m.next_is_crawford()

    def test_crawford_after_jump_to_match_point(self):
        m = Match(7)
        resign_game(m, loser=0, kind=3)   # 0-3
        resign_game(m, loser=0, kind=3)   # 0-6: jumped to match point
        assert m.new_game().crawford

    def test_crawford_off(self):
        m = Match(3, Rules(crawford=False))
        resign_game(m, loser=1, kind=2)
        g = m.new_game()
        assert not g.crawford
        g.start()
        g.play(g.legal_plays()[0])
        assert g.can_double()

    def test_match_won_by_overshooting(self):
        m = Match(3)
        resign_game(m, loser=1, kind=1)   # 1-0
        g = m.new_game()
        g.start()
        g.play(g.legal_plays()[0])
        g.double()
        g.take()
        g.resign(3, player=g.turn if g.turn == 1 else 1)  # player 1 resigns a backgammon
        g.accept()
        assert m.score == (7, 0) and m.over and m.winner == 0
        with pytest.raises(IllegalActionError, match="match is over"):
            m.new_game()
        ms = MatchState.from_match_id(g.match_id())
        assert ms.score == (3, 0)  # clamped: formats.MatchState refuses 7 in a 3-point match

    def test_impossible_scores_refused(self):
        with pytest.raises(BgfastError, match="impossible"):
            Game(match_length=5, score=(5, 0))
        with pytest.raises(BgfastError, match="Crawford"):
            Game(crawford=True)
        with pytest.raises(BgfastError, match="Crawford"):
            Game(match_length=5, score=(4, 0), crawford=True, cube_value=2)

    def test_new_game_needs_previous_over(self):
        m = Match(3)
        m.new_game()
        with pytest.raises(IllegalActionError, match="not over"):
            m.new_game()

    def test_money_session_running_score(self):
        s = money_session(seed=2)
        resign_game(s, loser=0, kind=2)
        resign_game(s, loser=1, kind=1)
        resign_game(s, loser=1, kind=3)
        assert s.score == (4, 2) and not s.over and s.winner is None
        assert not any(g.crawford for g in s.games)

    def test_serialise_round_trip(self):
        m = Match(5, Rules(max_cube=64), seed=9, names=("Ann", "Ben"))
        play_match(m, [Beginner(1), Heuristic()], max_games=1)
        g = m.new_game()
        g.start()
        g.play(g.legal_plays()[-1])
        data = json.loads(json.dumps(m.to_dict()))
        m2 = Match.from_dict(data)
        assert m2.score == m.score and m2.names == m.names and m2.rules == m.rules
        assert [x.actions for x in m2.games] == [x.actions for x in m.games]
        assert m2.game.position() == m.game.position() and m2.game.match_id() == m.game.match_id()
        # the dice generator continues identically
        assert m2.game.roll() == m.game.roll()

    def test_game_from_position_serialises(self):
        pos = board({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 4: 5})
        g = Game(position=pos, on_roll=1, cube_value=2, cube_owner=1, seed=4,
                 match_length=7, score=(3, 5))
        g.double()
        g.take()
        g.roll()
        g2 = Game.from_dict(json.loads(json.dumps(g.to_dict())))
        assert g2.actions == g.actions and g2.position() == g.position()
        assert g2.match_id() == g.match_id() and g2.phase == Phase.MOVE
        g.play(g.legal_plays()[0])
        g2.play(g2.legal_plays()[0])
        assert g.roll() == g2.roll()
        with pytest.raises(InvalidRecordError, match="action 1"):
            Game.from_dict({**g.to_dict(), "actions": [["take", 0]]})

    def test_from_dict_rejects_bad_actions(self):
        m = Match(3, seed=1)
        play_match(m, [Beginner(1), Beginner(2)], max_games=1)
        data = m.to_dict()
        data["games"][0][3] = ["move", 0, [[24, 1]]]
        with pytest.raises(InvalidRecordError, match="game 1, action 4"):
            Match.from_dict(data)


# ---------------------------------------------------------------------------
# IDs
# ---------------------------------------------------------------------------

class TestIds:
    def test_match_id_test_vector(self):
        # 9-point match, 2-4, cube 2 owned by player 0, player 1 on roll with 5-2
        g = Game(match_length=9, score=(2, 4), position=Position.initial(), on_roll=1,
                 cube_value=2, cube_owner=0)
        g.roll((5, 2))
        # gnubg 1.07 sets bit 66 ("no Jacoby") in matches; the published vector
        # QYkqASAAIAAA predates that and differs only there
        assert g.match_id() == "QYkqASAAIAAE"
        assert MatchState.from_match_id(g.match_id()) == replace(
            MatchState.from_match_id("QYkqASAAIAAA"), jacoby=False)

    def test_ids_follow_the_game(self):
        g = started(match_length=0)
        ms = MatchState.from_match_id(g.match_id())
        assert ms.player_on_roll == 1 and ms.dice is None and ms.cube_value == 1
        g.double()
        ms = MatchState.from_match_id(g.match_id())
        assert ms.double_offered and ms.turn == 0
        assert XGID.parse(g.xgid()).dice == "D"
        g.take()
        g.roll((6, 4))
        x = XGID.parse(g.xgid())
        assert x.position == g.position() and x.roll == (6, 4) and x.cube == 1
        assert x.cube_position == -1  # player 0 (the top player) owns the cube
        assert Position.from_position_id(g.position_id()) == g.position()

    def test_xgid_of_finished_game_refused(self):
        g = started()
        g.double()
        g.drop()
        with pytest.raises(IllegalActionError):
            g.xgid()
        assert MatchState.from_match_id(g.match_id()).game_state.name == "DROPPED"


# ---------------------------------------------------------------------------
# players
# ---------------------------------------------------------------------------

class TestPlayers:
    def test_beginner_never_doubles_and_always_takes(self):
        g = started()
        b = Beginner(1)
        assert not b.wants_to_double(g)
        g.double()
        assert b.respond_to_double(g) == "take"

    def test_beginner_plays_random_legal_plays_reproducibly(self):
        g = Game()
        g.opening_roll((6, 2))
        plays = g.legal_plays()
        picks = {Beginner(s).choose_play(g, plays).position for s in range(12)}
        assert len(picks) > 1 and picks <= {p.position for p in plays}
        assert Beginner(3).choose_play(g, plays) == Beginner(3).choose_play(g, plays)

    def test_heuristic_hits_and_makes_points(self):
        g = Game()
        g.opening_roll((3, 1))
        assert Heuristic().choose_play(g, g.legal_plays()).notation == "8/5 6/5"

    def test_heuristic_cube_decisions(self):
        h = Heuristic()
        # a 14% race lead: double and pass
        g = Game(position=board({8: 5, 7: 5, 6: 5}, {10: 5, 8: 5, 6: 5}), on_roll=0)
        assert h.wants_to_double(g)
        g.double()
        assert h.respond_to_double(g) == "drop"
        # a 5% lead: no double yet; a 30% lead: too good (play on for the gammon)
        for opp in ({9: 5, 7: 5, 6: 5}, {13: 5, 8: 5, 6: 5}):
            g = Game(position=board({8: 5, 7: 5, 6: 5}, opp), on_roll=0)
            assert not h.wants_to_double(g)
        # a take 5% behind
        g = Game(position=board({8: 5, 7: 5, 5: 5}, {8: 5, 7: 5, 6: 5}), on_roll=0)
        g.double()
        assert h.respond_to_double(g) == "take"
        # the initial position is neither a double nor a pass
        g = Game(position=Position.initial(), on_roll=0)
        assert not h.wants_to_double(g)

    def test_default_resignation_answer(self):
        class FirstPlay(Player):            # only the abstract choice is supplied
            def choose_play(self, game, plays):
                return plays[0]

        p = FirstPlay()
        g = Game(position=board({12: 15}, {1: 1}), on_roll=1)  # player 1 (the loser) on roll
        g.resign(1)
        assert not p.accepts_resignation(g, ResultKind.SINGLE)  # a gammon is still possible
        assert p.accepts_resignation(g, ResultKind.GAMMON)

    def test_bot_match_ends_with_correct_score(self):
        m = Match(5, seed=3, names=("Beginner", "Heuristic"))
        play_match(m, [Beginner(3), Heuristic()])
        assert m.over
        s = [0, 0]
        crawford_games = 0
        for g in m.games:
            assert g.over
            s[g.result.winner] += g.result.points
            crawford_games += g.crawford
        assert tuple(s) == m.score and max(s) >= 5 and m.winner == int(s[1] >= 5)
        assert crawford_games <= 1

    def test_heuristic_beats_beginner(self):
        wins = 0
        for seed in range(8):
            g = Game(Rules(cube=False), seed=seed)
            play_game(g, [Beginner(seed), Heuristic()])
            wins += g.result.winner == 1
        assert wins >= 6


# ---------------------------------------------------------------------------
# post-Crawford games survive serialisation (mutant G6: new_game(post_crawford=False))
# ---------------------------------------------------------------------------

def _crawford_then_post(rules=None) -> Match:
    """A 3-point match: 2-0 (game 1), the Crawford game 2-1 (game 2), then game 3."""
    m = Match(3, rules, seed=8, names=("Ann", "Bob"))
    resign_game(m, loser=1, kind=2)      # 2-0: match point
    resign_game(m, loser=0, kind=1)      # 2-1
    g3 = m.new_game()
    g3.start()
    return m


def _crawford_flags(m: Match):
    return [(g.crawford, g.post_crawford) for g in m.games]


class TestPostCrawford:
    def test_game_after_the_crawford_game_is_post_crawford(self):
        m = _crawford_then_post()
        assert _crawford_flags(m) == [(False, False), (True, False), (False, True)]

    def test_post_crawford_survives_to_dict_and_json(self):
        m = _crawford_then_post()
        again = Match.from_dict(json.loads(json.dumps(m.to_dict())))
        assert _crawford_flags(again) == [(False, False), (True, False), (False, True)]
        g = Game.from_dict(json.loads(json.dumps(m.games[2].to_dict())))
        assert (g.crawford, g.post_crawford) == (False, True)

    def test_post_crawford_survives_a_mat_round_trip(self):
        from bgfast import matfile

        m = _crawford_then_post()
        m.games[2].resign(1, player=1)
        m.games[2].accept()                  # 3-1: over
        again = matfile.loads(matfile.dumps(m))
        assert again.score == (3, 1)
        assert _crawford_flags(again) == [(False, False), (True, False), (False, True)]

    def test_no_post_crawford_without_the_crawford_rule(self):
        m = Match(3, Rules(crawford=False), seed=8)
        resign_game(m, loser=1, kind=2)
        resign_game(m, loser=0, kind=1)
        assert _crawford_flags(m) == [(False, False), (False, False)]
        assert not m.new_game().post_crawford

    def test_flags_need_a_side_at_match_point(self):
        with pytest.raises(BgfastError, match="post-Crawford game needs a side at 4"):
            Game(match_length=5, score=(2, 3), post_crawford=True)
        with pytest.raises(BgfastError, match="the Crawford game needs a side at 4"):
            Game(match_length=5, score=(3, 3), crawford=True)
        with pytest.raises(BgfastError, match="money game"):
            Game(post_crawford=True)


# ---------------------------------------------------------------------------
# the dead cube
# ---------------------------------------------------------------------------

def _rolled_game(**kw) -> Game:
    """A game from the opening position, player 0 on roll before the roll."""
    return Game(position=Position.initial(), on_roll=0, **kw)


class TestDeadCube:
    @pytest.mark.parametrize("kw, dead", [
        (dict(match_length=1), True),                                   # 1-point match
        (dict(match_length=5, score=(4, 2), post_crawford=True), True),  # the leader
        (dict(match_length=5, score=(3, 2), cube_value=2, cube_owner=0), True),  # 2-away, cube 2
        (dict(match_length=5, score=(2, 4), post_crawford=True), False),  # the trailer
        (dict(match_length=5, score=(3, 2)), False),
        (dict(), False),                                                # money
    ])
    def test_cube_dead_and_live_doubles(self, kw, dead):
        g = _rolled_game(**kw)
        assert g.cube_dead(0) is dead
        assert g.can_double()                      # legal either way ...
        assert g.can_double(live=True) is not dead  # ... but offered only while live
        why = g.why_no_double()
        assert (why is not None and why.startswith("the cube is dead")) is dead

    def test_a_dead_double_stays_legal_for_records(self):
        g = _rolled_game(match_length=1)
        assert g.double() == 2
        g.drop()
        assert g.result.points == 1 and g.result.winner == 0

    def test_reasons_in_order(self):
        g = _rolled_game(match_length=5, score=(4, 0), crawford=True)
        assert g.why_no_double() == "this is the Crawford game"
        g = _rolled_game(cube_value=2, cube_owner=1)
        assert g.why_no_double() == "player 1 owns the cube"
        g = _rolled_game(rules=Rules(max_cube=2), cube_value=2, cube_owner=0)
        assert g.why_no_double() == "the cube is capped at 2"
        g = _rolled_game(rules=Rules(cube=False))
        assert g.why_no_double() == "the cube is switched off"


# ---------------------------------------------------------------------------
# names, lengths and records the engine could not have written
# ---------------------------------------------------------------------------

class TestNames:
    @pytest.mark.parametrize("name", ["Ann", "Jens Ødegaard", "李", "a" * 64, "O'Neil-2"])
    def test_good_names(self, name):
        assert check_name(name) == name
        assert Match(names=(name, "Bob")).names == (name, "Bob")

    @pytest.mark.parametrize("name, message", [
        ("a\nb", "U+000A"), ("\x1b[31mred", "U+001B"), ("tab\there", "U+0009"),
        ("rtl\u202eoverride", "U+202E"), ("zero\u200bwidth", "U+200B"),
        ("line\u2028sep", "U+2028"), ("", "empty"), ("   ", "empty"),
        (" Ann", "spaces"), ("a" * 65, "at most 64"), (3, "string"), (None, "string"),
    ])
    def test_bad_names(self, name, message):
        with pytest.raises(BgfastError, match=re.escape(message)):
            check_name(name)
        with pytest.raises(BgfastError, match=re.escape(message)):
            Match(names=(name, "Bob"))

    @pytest.mark.parametrize("names", [("a", "b", "c"), ("a",), "ab", None, ["a"]])
    def test_two_names(self, names):
        with pytest.raises(BgfastError, match="two player names"):
            Match(names=names)


class TestRecordsTheEngineCouldNotWrite:
    def _dict(self):
        m = Match(5, seed=3, names=("Ann", "Bob"))
        resign_game(m, loser=1, kind=2)
        g = m.new_game()
        g.start()
        return m.to_dict()

    def test_round_trip_keeps_the_dice(self):
        d = self._dict()
        a, b = Match.from_dict(json.loads(json.dumps(d))), Match.from_dict(d)
        assert a.rng.integers(1 << 30) == b.rng.integers(1 << 30)

    @pytest.mark.parametrize("edit, message", [
        (lambda d: d["rng_state"]["state"].update(state=0, inc=0), "not a state of the PCG64"),
        (lambda d: d["rng_state"]["state"].update(inc=2), "not a state of the PCG64"),
        (lambda d: d["rng_state"]["state"].update(state=1 << 128), "not a state of the PCG64"),
        (lambda d: d["rng_state"].update(bit_generator="MT19937"), "not a state of the PCG64"),
        (lambda d: d["rng_state"].update(has_uint32=True), "not a state of the PCG64"),
        (lambda d: d.update(rng_state=[1, 2]), "not a state of the PCG64"),
        (lambda d: d.update(length=10 ** 30), "0 \\(money\\) to 32767"),
        (lambda d: d.update(length=-1), "0 \\(money\\) to 32767"),
        (lambda d: d.update(length="5"), "0 \\(money\\) to 32767"),
        (lambda d: d.update(names=["a", "b", "c"]), "two player names"),
        (lambda d: d.update(names=["a\x1b]0;pwned\x07", "b"]), "U\\+001B"),
        (lambda d: d.update(seed=-1), "seed -1"),
        (lambda d: d.update(seed=1.5), "seed 1.5"),
        (lambda d: d.update(extra=1), "unknown field 'extra'"),
        (lambda d: d["rules"].update(cheat=True), "unknown rule 'cheat'"),
        (lambda d: d["rules"].update(cube="yes"), "rule cube must be True or False"),
        (lambda d: d.update(games={}), "list of action lists"),
        (lambda d: d["games"][0].__setitem__(0, ["opening", -1, [3.0, 1]]), "malformed"),
        (lambda d: d["games"][0].__setitem__(0, ["opening", -1, [float("inf"), 1]]), "malformed"),
        (lambda d: d["games"][0].__setitem__(0, ["opening", True, [3, 1]]), "not an action"),
        (lambda d: d["games"][0].__setitem__(0, ["opening", 0, [3, 1]]), "not an action"),
        (lambda d: d["games"][0].__setitem__(0, ["opening", -1, "31"]), "malformed"),
        (lambda d: d["games"][0].append(["take", 0, 5]), "malformed"),
        (lambda d: d["games"][0].__setitem__(0, [["x"] * 10] * 10), "not an action"),
        (lambda d: d["games"].append([]), "game 3: the current game is not over"),
    ])
    def test_refused(self, edit, message):
        d = self._dict()
        edit(d)
        with pytest.raises(InvalidRecordError, match=message):
            Match.from_dict(d)

    def test_double_value_must_match_the_cube(self):
        g = _rolled_game()
        g.double()
        g.take()
        d = g.to_dict()
        d["actions"][0] = ["double", 0, 64]
        with pytest.raises(InvalidRecordError, match="double to 64 recorded, but the cube goes to 2"):
            Game.from_dict(d)

    def test_error_messages_stay_short(self):
        d = self._dict()
        d["names"] = ["x" * 100000, "y"]
        with pytest.raises(InvalidRecordError) as info:
            Match.from_dict(d)
        assert len(str(info.value)) < 300

    @pytest.mark.parametrize("data", [[], "x", None, 3, {"games": "x"}, {"actions": [], "x": 1}])
    def test_not_records(self, data):
        with pytest.raises(InvalidRecordError):
            Match.from_dict(data)
        with pytest.raises(InvalidRecordError):
            Game.from_dict(data)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 130, 2 ** 130) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=25)

_KEYS = ("length", "rules", "names", "seed", "games", "rng_state")


def _mutations():
    """A real match record with one field replaced by arbitrary JSON."""
    return st.tuples(st.sampled_from(_KEYS + ("games/0", "games/0/0", "rng_state/state")), _json)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_fuzz_any_json_is_a_record_or_refused(data):
    for cls in (Match, Game):
        try:
            cls.from_dict(data)
        except BgfastError:
            pass


@settings(max_examples=200, deadline=None)
@given(_mutations())
def test_fuzz_mutated_records_are_refused_cleanly(mutation):
    where, value = mutation
    d = TestRecordsTheEngineCouldNotWrite()._dict()
    *path, last = where.split("/")
    target = d
    for step_ in path:
        target = target[int(step_)] if isinstance(target, list) else target[step_]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    try:
        m = Match.from_dict(d)
    except BgfastError:
        return
    assert len(m.names) == 2 and 0 <= m.length <= 32767   # accepted: a usable match
    m.to_dict()
