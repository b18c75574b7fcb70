"""Resignations and the cube in play: the levels judge a resignation by their
evaluation at the score, resign lost games, and nobody doubles a dead cube."""
import pytest
from test_game import board as pos

from bgfast.game import Game, Match, Phase, ResultKind, Rules
from bgfast.players import make_level_player, result_value
from bgfast.players import Heuristic, Player, clear_resignation, play_game, step
from bgfast.position import Position

LEVELS = ["easy", "medium", "hard", "expert"]


# Player 0 (on roll) has 15 checkers on its 12-10 points and cannot bear one off
# before player 1 (3 checkers on its 1-point) is off: a certain gammon for player 1,
# and no backgammon (no checker of player 0 in player 1's home board or on the bar).
GAMMONED = pos({12: 5, 11: 5, 10: 5}, {1: 3})
# Player 0 (on roll) has 2 checkers on its 1-point: a certain single win.
SURE_SINGLE = pos({1: 2}, {6: 3})


def offered(game: Game, by: int, kind: int) -> Game:
    game.resign(kind, player=by)
    return game


@pytest.fixture(scope="module", params=LEVELS)
def level(request):
    return make_level_player(request.param, seed=1)


class TestAcceptance:
    def test_a_resignation_that_wins_a_one_point_match_is_accepted(self, level):
        for seed in range(3):
            m = Match(1, seed=seed)
            g = m.new_game()
            g.start()
            offered(g, g.turn, 1)
            assert level.accepts_resignation(g, ResultKind.SINGLE)
            assert Heuristic().accepts_resignation(g, ResultKind.SINGLE)

    def test_money_the_offer_against_the_certain_result(self, level):
        g = Game(position=GAMMONED, on_roll=0)
        assert level.value(g, 1) == pytest.approx(2.0, abs=0.003)
        assert not level.accepts_resignation(offered(g, 0, 1), ResultKind.SINGLE)
        g.reject()
        assert level.accepts_resignation(offered(g, 0, 2), ResultKind.GAMMON)
        g.reject()
        # a single when a single is all that can be won (the on-roll side doubles out)
        g = Game(position=SURE_SINGLE, on_roll=0)
        assert level.value(g, 0) == pytest.approx(1.0)
        assert level.accepts_resignation(offered(g, 1, 1), ResultKind.SINGLE)

    def test_money_an_even_game_accepts_a_single(self, level):
        g = Game(position=Position.initial(), on_roll=0)
        assert abs(level.value(g, 1)) < 0.5
        assert level.accepts_resignation(offered(g, 0, 1), ResultKind.SINGLE)

    def test_cube_value_counts(self, level):
        g = Game(position=GAMMONED, on_roll=0, cube_value=4, cube_owner=0)
        assert level.value(g, 1) == pytest.approx(8.0, abs=0.01)
        assert not level.accepts_resignation(offered(g, 0, 1), ResultKind.SINGLE)

    def test_match_judged_in_match_winning_chances(self, level):
        # 0-0 to 7: the gammon is worth 2 of the 7 points, a single 1
        g = Game(position=GAMMONED, on_roll=0, match_length=7)
        v = level.value(g, 1)
        assert v == pytest.approx(result_value(g, 1, 1, 2), abs=0.003)
        assert result_value(g, 1, 1, 1) < v
        assert not level.accepts_resignation(offered(g, 0, 1), ResultKind.SINGLE)
        g.reject()
        assert level.accepts_resignation(offered(g, 0, 2), ResultKind.GAMMON)
        # post-Crawford, player 1 needs 1 point: the single wins the match
        g = Game(position=GAMMONED, on_roll=0, match_length=7, score=(0, 6), post_crawford=True)
        assert level.value(g, 1) == 1.0
        assert level.accepts_resignation(offered(g, 0, 1), ResultKind.SINGLE)

    def test_after_the_roll_the_value_follows_the_play(self, level):
        g = Game(position=GAMMONED, on_roll=0)
        g.roll((6, 5))
        offered(g, 0, 2)
        assert g.turn_phase == Phase.MOVE
        assert level.accepts_resignation(g, ResultKind.GAMMON)
        g.reject()
        assert g.phase == Phase.MOVE
        # the side to move bears off its last checker with this roll: exactly a single
        g = Game(position=pos({1: 1}, {6: 3}), on_roll=0)
        g.roll((2, 1))
        assert level.value(g, 0) == 1.0 and level.value(g, 1) == -1.0


class TestOffers:
    def test_a_certain_gammon_is_resigned_as_a_gammon(self, level):
        g = Game(position=GAMMONED, on_roll=0)
        assert level.wants_to_resign(g) == 2

    def test_the_score_decides_what_to_resign(self, level):
        g = Game(position=GAMMONED, on_roll=0, match_length=7, score=(0, 6), post_crawford=True)
        assert level.wants_to_resign(g) == 1         # a single loses the match already
        g = Game(Rules(jacoby=True), position=GAMMONED, on_roll=0)
        assert level.wants_to_resign(g) == 1         # Jacoby: the gammon counts single

    def test_no_offer_while_there_is_a_chance(self, level):
        assert level.wants_to_resign(Game(position=Position.initial(), on_roll=0)) == 0
        # a bear-off race that is lost, but a gammon is in doubt: no clear offer
        g = Game(position=pos({6: 5, 5: 5, 4: 5}, {1: 2}), on_roll=0)
        assert level.wants_to_resign(g) == 0

    def test_level_against_level_ends_by_resignation(self, level):
        g = play_game(Game(position=GAMMONED, on_roll=0, seed=1), [level, level])
        assert g.result.how == "resign" and g.result.winner == 1 and g.result.points == 2
        assert [a.kind for a in g.actions] == ["resign", "accept"]

    def test_clear_resignation_known_values(self):
        g = Game(position=GAMMONED, on_roll=0)
        assert clear_resignation(g, 0, [0, 0, 0, 1, 0]) == 2
        assert clear_resignation(g, 0, [0, 0, 0, 1, 1]) == 3
        assert clear_resignation(g, 0, [0, 0, 0, 0, 0]) == 1
        assert clear_resignation(g, 0, [0, 0, 0, 0.5, 0]) == 0      # gammon in doubt
        assert clear_resignation(g, 0, [0.01, 0, 0, 1, 0]) == 0     # a chance to win
        assert clear_resignation(g, 0, [0.0005, 0, 0, 0.9995, 0]) == 2


class AlwaysDoubles(Player):
    def choose_play(self, game, plays):
        return plays[0]

    def wants_to_double(self, game):
        return True


class TestNoDeadDoubles:
    @pytest.mark.parametrize("kw, doubles", [
        (dict(match_length=1), False),
        (dict(match_length=5, score=(4, 1), post_crawford=True), False),
        (dict(match_length=5, score=(1, 4), post_crawford=True), True),
        (dict(), True),
    ])
    def test_step_doubles_only_a_live_cube(self, kw, doubles):
        g = Game(position=Position.initial(), on_roll=0, **kw)
        step(g, [AlwaysDoubles(), AlwaysDoubles()])
        assert (g.phase == Phase.DOUBLED) is doubles
        assert g.actions[0].kind == ("double" if doubles else "roll")
