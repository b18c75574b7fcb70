"""FIBS board strings (the FIBS client protocol's ``board:...`` state)."""
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from bgfast.cli import main
from bgfast.errors import InvalidIdError
from bgfast.formats import (CubeOwner, FibsBoard, GameState, MatchState, parse_position_text)
from bgfast.position import INITIAL_BOARD, Position

from corpus import random_boards

# The starting position as gnubg's FIBSBoard writes it (colour 1, direction -1:
# field 6 = the opponent's bar, negative = the opponent's checkers, 31 = our bar):
# a 5-point match at 2-3, "You" on roll with 3-1.
START_CELLS = "0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"
START = ("board:You:Opponent:5:2:3:" + START_CELLS +
         ":1:3:1:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0")

# The example of the FIBS client protocol specification (mpgnu plays X: colour
# -1, direction +1, so field 6 is mpgnu's bar and its points count from field 31).
SPEC = ("board:mpgnu:buster:17:0:2:0:0:0:2:1:4:3:0:1:0:1:0:0:2:0:0:0:0:0:1:-2:-2:-1:-4:-4:0:"
        "-1:3:6:0:0:1:1:1:0:-1:1:25:0:2:0:0:0:2:2:0:0")


def fields(text):
    return text.split(":")


def with_fields(text, **changes):
    f = fields(text)
    for index, value in changes.items():
        f[int(index[1:])] = str(value)
    return ":".join(f)


def test_gnubg_layout_of_the_start():
    fb = FibsBoard.parse(START)
    assert fb.position.position_id() == "4HPwATDgc/ABMA"
    assert fb.names == ("You", "Opponent")
    s = fb.state
    assert (s.match_length, s.score, s.dice, s.player_on_roll, s.turn) == (5, (2, 3), (3, 1), 0, 0)
    assert (s.cube_value, s.cube_owner, s.crawford, s.double_offered) == (
        1, CubeOwner.CENTRED, False, False)
    assert fb.format() == START            # the canonical layout comes back unchanged


def test_spec_example_other_orientation():
    fb = FibsBoard.parse(SPEC)
    # mpgnu (on roll): 4 on its 1-point, 4 on 2, 1 on 3, 2 on 4, 2 on 5, two off;
    # buster: 2 on its 3-point, 1 on 4, 4 on 5, 3 on 6, 1 on 8, 1 on 10, 2 on 13, 1 on 19
    me = np.zeros(25, np.uint8)
    me[[0, 1, 2, 3, 4]] = [4, 4, 1, 2, 2]
    opp = np.zeros(25, np.uint8)
    opp[[2, 3, 4, 5, 7, 9, 12, 18]] = [2, 1, 4, 3, 1, 1, 2, 1]
    assert fb.position == Position(np.stack([opp, me]))
    assert fb.state == MatchState(match_length=17, score=(0, 2), dice=(3, 6),
                                  player_on_roll=0)
    assert FibsBoard.parse(fb.format()) == fb


def mirrored(text):
    """The same state written with colour -1 and direction +1."""
    f = fields(text)
    cells = [int(x) for x in f[6:32]]
    f[6:32] = [str(-cells[25 - k]) for k in range(26)]
    f[32] = str(-int(f[32]))
    f[41:45] = ["-1", "1", "25", "0"]
    return ":".join(f)


def test_either_colour_and_direction_read_the_same():
    for text in (START, with_fields(START, f32=-1, f33=0, f34=0, f35=6, f36=4)):
        assert FibsBoard.parse(mirrored(text)) == FibsBoard.parse(text)


def test_turn_dice_cube_and_double():
    opp = FibsBoard.parse(with_fields(START, f32=-1, f33=0, f34=0, f35=6, f36=4))
    assert opp.state.player_on_roll == 1 and opp.state.dice == (6, 4)
    assert opp.position.position_id() == "4HPwATDgc/ABMA"   # seen from the opponent
    owned = FibsBoard.parse(with_fields(START, f37=2, f38=1, f39=0))
    assert (owned.state.cube_value, owned.state.cube_owner) == (2, CubeOwner.PLAYER0)
    theirs = FibsBoard.parse(with_fields(START, f37=4, f38=0, f39=1))
    assert theirs.state.cube_owner == CubeOwner.PLAYER1
    doubled = FibsBoard.parse(with_fields(START, f33=0, f34=0, f40=1))
    s = doubled.state
    assert s.double_offered and (s.player_on_roll, s.turn) == (1, 0)
    assert FibsBoard.parse(doubled.format()) == doubled
    crawford = FibsBoard.parse(with_fields(START, f4=4, f38=0, f39=0))
    assert crawford.state.crawford and crawford.state.match_id() == \
        MatchState(match_length=5, score=(4, 3), dice=(3, 1), crawford=True).match_id()
    money = FibsBoard.parse(with_fields(START, f3=9999, f4=12, f5=7))
    assert money.state.match_length == 0 and money.state.score == (12, 7)
    assert fields(money.format())[3] == "9999"
    over = FibsBoard.parse(with_fields(START, f32=0, f33=0, f34=0))
    assert over.state.game_state == GameState.OVER


_boards = random_boards(60, 2024)


@settings(max_examples=120, deadline=None)
@given(st.integers(0, len(_boards) - 1), st.integers(0, 1), st.sampled_from([0, 3, 7, 25]),
       st.integers(0, 6), st.sampled_from([(0, 0), (1, 0), (0, 1)]), st.booleans(),
       st.booleans())
def test_round_trip(i, on_roll, length, d, cube, doubled, mirror):
    board = _boards[i]
    score = (min(2, length - 1), 1) if length else (5, 9)
    owner = (CubeOwner.CENTRED, CubeOwner.PLAYER0, CubeOwner.PLAYER1)[cube[0] + 2 * cube[1]]
    cube_value = 1 if owner == CubeOwner.CENTRED else 4
    if doubled:
        if owner == 1 - on_roll:
            owner = CubeOwner.CENTRED
        state = MatchState(match_length=length, score=score, cube_value=cube_value,
                           cube_owner=owner, player_on_roll=on_roll, turn=1 - on_roll,
                           double_offered=True)
    else:
        dice = None if d == 0 else (d, 7 - d if d != 6 else 6)
        state = MatchState(match_length=length, score=score, cube_value=cube_value,
                           cube_owner=owner, player_on_roll=on_roll, dice=dice)
    fb = FibsBoard(Position(board), state, "alice", "bob")
    text = fb.format()
    assert len(fields(text)) == 53
    assert FibsBoard.parse(text) == fb
    if mirror:
        assert FibsBoard.parse(mirrored(text)) == fb
    pos, st_, xg = parse_position_text(text)
    assert (pos, st_, xg) == (fb.position, fb.state, None)


@pytest.mark.parametrize("text,words", [
    ("board:a:b:1", "53 ':'-separated fields"),
    ("bored" + START[5:], "starts with 'board:'"),
    (with_fields(START, f7="x"), "board position 1 must be an integer"),
    (with_fields(START, f41=0), "colour"),
    (with_fields(START, f43=25), "do not fit direction"),
    (with_fields(START, f45=3), "not 15 in all"),
    (with_fields(START, f33=7), "dice is 7"),
    (with_fields(START, f33=0), "half rolled"),
    (with_fields(START, f3=40000), "match length"),
    (with_fields(START, f1=""), "player"),
    (with_fields(START, f4=5), "score"),
])
def test_bad_strings(text, words):
    with pytest.raises(InvalidIdError) as err:
        FibsBoard.parse(text)
    assert words in str(err.value)
    assert isinstance(err.value, ValueError)


def test_too_many_checkers():
    # one number per point: a point cannot be held by both sides, but 16 checkers can be written
    with pytest.raises(InvalidIdError, match="16 checkers on the board"):
        FibsBoard.parse(with_fields(START, f12=6))


def test_cannot_format_what_the_string_cannot_hold():
    pos = Position(INITIAL_BOARD)
    with pytest.raises(InvalidIdError, match="game in play or over"):
        FibsBoard(pos, MatchState(resignation=1, game_state=GameState.RESIGNED)).format()
    with pytest.raises(InvalidIdError, match="resignation"):
        FibsBoard(pos, MatchState(resignation=2)).format()
    with pytest.raises(InvalidIdError, match="Jacoby"):
        FibsBoard(pos, MatchState(jacoby=True)).format()
    with pytest.raises(InvalidIdError, match="name"):
        FibsBoard(pos, MatchState(), "a:b")


def test_cli_position_accepts_fibs_board():
    r = CliRunner().invoke(main, ["show", "--json", SPEC])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["position_id"] == "rHcSAwHvtQEAAA"
    r = CliRunner().invoke(main, ["show", "board:a:b:1"])
    assert r.exit_code == 2
    assert "53 ':'-separated fields" in r.output and "Traceback" not in r.output
