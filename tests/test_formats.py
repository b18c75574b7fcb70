"""Formats: dice, gnubg Match IDs, XGIDs, gnubg move notation.

Oracles: gnubg-nn (Position IDs, legal plays as gnubg generates them) and
Debian's ``gnubg -t`` with its embedded Python (``matchid``, ``set matchid``,
``set xgid``, ``movetupletostring``).  The recorded vectors below were
produced by ``gnubg -t`` 1.07.001 from the commands quoted beside them.
"""
import base64
import json
import os
import subprocess
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from bgfast.errors import InvalidDiceError, InvalidIdError, InvalidMoveError
from bgfast.formats import (XGID, CubeOwner, GameState, MatchState, Resignation, apply_moves,
                            check_dice, format_gnubg_id, format_play, match_play, parse_dice,
                            parse_gnubg_id, parse_play)
from bgfast.movegen import legal_plays
from bgfast.position import INITIAL_BOARD, Position

from corpus import random_boards, self_play_positions


def board(me=None, opp=None, opp_bar=0):
    """A board from {point: count} dicts, both in the numbering of the player
    on roll (25 = my bar); the opponent's bar count is ``opp_bar``."""
    b = np.zeros((2, 25), dtype=np.uint8)
    for p, n in (me or {}).items():
        b[1][p - 1] = n
    for p, n in (opp or {}).items():
        b[0][24 - p] = n
    b[0][24] = opp_bar
    return b


def run_gnubg_python(gnubg_binary, tmp_path, script, data):
    """Run ``script`` inside ``gnubg -t -p`` with ``data`` as JSON; return its JSON answer.

    Skips when this gnubg has no embedded Python; a failing script is an error.
    """
    def run(body, payload, name):
        src, dst = tmp_path / f"{name}.in.json", tmp_path / f"{name}.out.json"
        src.write_text(json.dumps(payload))
        (tmp_path / f"{name}.py").write_text(
            "import gnubg, json, os\n"
            "data = json.load(open(os.environ['ORACLE_IN']))\n"
            "out = []\n" + body +
            "\njson.dump(out, open(os.environ['ORACLE_OUT'], 'w'))\n")
        env = dict(os.environ, ORACLE_IN=str(src), ORACLE_OUT=str(dst))
        proc = subprocess.run([gnubg_binary, "-t", "-q", "-r", "-p", str(tmp_path / f"{name}.py")],
                              env=env, capture_output=True, text=True, timeout=120)
        return (json.loads(dst.read_text()) if dst.exists() else None), proc

    probe, proc = run("out.append(data)", 1, "probe")
    if probe != [1]:
        pytest.skip(f"this gnubg has no embedded Python: {proc.stderr[-200:]}")
    got, proc = run(script, data, "oracle")
    assert got is not None, f"the gnubg oracle script failed:\n{proc.stderr[-2000:]}"
    return got


# ---------------------------------------------------------------------------
# dice
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("31", (3, 1)), ("3-1", (3, 1)), ("3 1", (3, 1)), ("3,1", (3, 1)), (" 6-6 ", (6, 6)),
    ("13", (1, 3)), ("5, 2", (5, 2)), ("4 - 4", (4, 4)), ("2\t5", (2, 5)),
])
def test_parse_dice_accepts(text, expected):
    assert parse_dice(text) == expected


@pytest.mark.parametrize("text,needle", [
    ("37", "second die is 7"), ("03", "first die is 0"), ("9-1", "first die is 9"),
    ("3", "cannot read"), ("3--1", "cannot read"), ("3-1-2", "cannot read"), ("ab", "cannot read"),
    ("", "cannot read"), ("311", "cannot read"), ("3/1", "cannot read"), ("-31", "cannot read"),
    # ASCII digits and spaces only
    ("\uff136", "cannot read"), ("\u0663\u0661", "cannot read"), ("3\u20031", "cannot read"),
    ("\U0001d7d16", "cannot read"),
])
def test_parse_dice_rejects(text, needle):
    with pytest.raises(InvalidDiceError, match=needle):
        parse_dice(text)


def test_parse_dice_rejects_non_strings():
    with pytest.raises(InvalidDiceError, match="string"):
        parse_dice(31)


def test_check_dice():
    assert check_dice(np.int64(6), 1) == (6, 1)
    assert type(check_dice(np.int8(2), 3)[0]) is int
    for bad, needle in [((0, 1), "first die is 0"), ((1, 7), "second die is 7"),
                        ((True, 1), "first die"), ((2.0, 1), "first die must be an integer"),
                        ((1, "2"), "second die must be an integer")]:
        with pytest.raises(InvalidDiceError, match=needle):
            check_dice(*bad)


# ---------------------------------------------------------------------------
# Match ID
# ---------------------------------------------------------------------------

def test_match_id_vector_from_formats_md():
    m = MatchState.from_match_id("QYkqASAAIAAA")
    assert m == MatchState(match_length=9, score=(2, 4), cube_value=2,
                           cube_owner=CubeOwner.PLAYER0, player_on_roll=1, turn=1,
                           dice=(5, 2), jacoby=True)
    assert m.match_id() == "QYkqASAAIAAA"
    assert str(m) == "QYkqASAAIAAA"
    assert m.away() == (7, 5) and not m.is_money


P, O = GameState.PLAYING, CubeOwner

# Recorded with gnubg -t 1.07.001, both players human (`set player 0/1 human`).
GNUBG_MATCH_IDS = [
    # new match 9 (opening roll: gnubg 3, root 2): player 0 to play 3-2
    ("MIEpAQAAAAAE", MatchState(match_length=9, dice=(3, 2))),
    # ... after gnubg played: player 1 on roll, dice not rolled
    ("cAkgAQAAAAAE", MatchState(match_length=9, player_on_roll=1)),
    # set jacoby on; new session (gnubg rolls 3, root rolls 6): money, Jacoby in force
    ("cAkPAAAAAAAA", MatchState(player_on_roll=1, dice=(6, 3), jacoby=True)),
    # set jacoby off; new session (gnubg rolls 2, root rolls 3)
    ("cIkJAAAAAAAE", MatchState(player_on_roll=1, dice=(3, 2))),
    # new match 1 (root 6, gnubg 3); resign normal; accept
    ("cAkvAAAAAAAE", MatchState(match_length=1, player_on_roll=1, dice=(6, 3))),
    ("cCEvAAAAAAAE", MatchState(match_length=1, player_on_roll=1, turn=0, dice=(6, 3),
                                resignation=Resignation.SINGLE)),
    ("cCMvABAAAAAE", MatchState(match_length=1, score=(1, 0), player_on_roll=1, turn=0,
                                dice=(6, 3), resignation=Resignation.SINGLE,
                                game_state=GameState.RESIGNED)),
    # new match 7; set score 3 5; set cube value 4; set cube owner 1; set turn 0; set dice 6 4
    ("EgHzADAAKAAE", MatchState(match_length=7, score=(3, 5), cube_value=4,
                                cube_owner=O.PLAYER1, dice=(6, 4))),
    # new match 5; set score 4 2; set crawford on; set turn 1; set dice 1 1
    ("8ImkAEAAEAAE", MatchState(match_length=5, score=(4, 2), crawford=True, player_on_roll=1,
                                dice=(1, 1))),
    # set jacoby on; new session; set cube value 8; set cube owner 1; set turn 1
    ("UwkAAAAAAAAA", MatchState(cube_value=8, cube_owner=O.PLAYER1, player_on_roll=1,
                                jacoby=True)),
    # ... then `double`
    ("UxEAAAAAAAAA", MatchState(cube_value=8, cube_owner=O.PLAYER1, player_on_roll=1, turn=0,
                                double_offered=True, jacoby=True)),
    # new match 11; set score 10 10; set turn 0; set dice 5 3; resign gammon
    ("MMluAaAAUAAE", MatchState(match_length=11, score=(10, 10), dice=(5, 3), turn=1,
                                resignation=Resignation.GAMMON)),
    # set xgid XGID=-a-B--C-B---bC---c-e----A-:1:-1:1:31:1:2:1:3:10 (gnubg resets the
    # cube to 1 in the Crawford game but keeps the owner)
    ("wIllACAACAAE", MatchState(match_length=3, score=(2, 1), cube_value=1,
                                cube_owner=O.PLAYER0, player_on_roll=1, crawford=True,
                                dice=(3, 1))),
    # set xgid XGID=-a-B--C-B---bC---c-e----A-:2:-1:-1:00:3:2:3:0:10 (gnubg swaps the players)
    ("UgkAADAAEAAA", MatchState(score=(3, 2), cube_value=4, cube_owner=O.PLAYER1,
                                player_on_roll=1, jacoby=True)),
]


@pytest.mark.parametrize("mid,state", GNUBG_MATCH_IDS, ids=[m for m, _ in GNUBG_MATCH_IDS])
def test_match_ids_recorded_from_gnubg(mid, state):
    assert MatchState.from_match_id(mid) == state
    assert state.match_id() == mid


def test_match_state_normalises_fields():
    m = MatchState(dice=[0, 0], cube_owner=3, game_state=1, resignation=0, turn=None,
                   player_on_roll=np.int64(1), crawford=0, score=[0, np.int32(5)])
    assert m.dice is None and m.turn == 1 and m.score == (0, 5)
    assert m.cube_owner is CubeOwner.CENTRED and m.game_state is GameState.PLAYING
    assert m.crawford is False and m.resignation is Resignation.NONE
    assert hash(m) == hash(MatchState(player_on_roll=1, score=(0, 5)))
    with pytest.raises(Exception):
        m.cube_value = 2          # frozen


def test_match_state_swapped():
    m = MatchState.from_match_id("EgHzADAAKAAE")
    s = m.swapped()
    assert s.score == (5, 3) and s.cube_owner is CubeOwner.PLAYER0
    assert s.player_on_roll == 1 and s.turn == 1 and s.dice == (6, 4)
    assert s.swapped() == m
    assert MatchState().swapped().cube_owner is CubeOwner.CENTRED
    assert MatchState().away() is None


@st.composite
def match_states(draw):
    length = draw(st.sampled_from([0, 0, 1, 2, 3, 5, 7, 9, 11, 17, 25, 32767]))
    gs = draw(st.sampled_from(list(GameState)))
    ended = gs in (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)
    top = (length if ended else length - 1) if length else (1 << 15) - 1
    s0, s1 = draw(st.integers(0, top)), draw(st.integers(0, top))
    assume(not (length and s0 >= length and s1 >= length))
    crawford = bool(length) and max(s0, s1) >= length - 1 and draw(st.booleans())
    on_roll = draw(st.integers(0, 1))
    doubled = (gs not in (GameState.NONE, GameState.RESIGNED) and not crawford
               and draw(st.booleans()))
    if doubled:
        res = Resignation.NONE
        owner = draw(st.sampled_from([CubeOwner.CENTRED, CubeOwner(on_roll)]))
        dice = None
        turn = 1 - on_roll
    else:
        res = Resignation(draw(st.integers(0, 3))) if gs != GameState.NONE else Resignation.NONE
        if gs == GameState.RESIGNED and res == Resignation.NONE:
            res = Resignation.SINGLE
        owner = draw(st.sampled_from(list(CubeOwner)))
        dice = None if gs == GameState.NONE else draw(
            st.none() | st.tuples(st.integers(1, 6), st.integers(1, 6)))
        turn = draw(st.integers(0, 1))
    return MatchState(match_length=length, score=(s0, s1),
                      cube_value=1 if crawford else 1 << draw(st.integers(0, 15)),
                      cube_owner=owner,
                      player_on_roll=on_roll, turn=turn, crawford=crawford, game_state=gs,
                      double_offered=doubled, resignation=res, dice=dice,
                      jacoby=draw(st.booleans()))


@settings(max_examples=300, deadline=None)
@given(match_states())
def test_match_state_round_trip(state):
    mid = state.match_id()
    assert len(mid) == 12
    assert MatchState.from_match_id(mid) == state
    assert MatchState.from_match_id(mid).match_id() == mid


@settings(max_examples=500, deadline=None)
@given(st.integers(0, (1 << 72) - 1))
def test_every_decodable_match_id_round_trips(bits):
    mid = base64.b64encode(bits.to_bytes(9, "little")).decode()
    try:
        state = MatchState.from_match_id(mid)
    except InvalidIdError as exc:
        assert "Match ID" in str(exc)
        return
    assert state.match_id() == mid


def _mid(**v):
    """A Match ID with raw field values (the FORMATS.md bit layout)."""
    layout = dict(cube=(0, 0), owner=(4, 3), move=(6, 0), crawford=(7, 0), gs=(8, 1),
                  turn=(11, 0), dbl=(12, 0), res=(13, 0), d1=(15, 0), d2=(18, 0),
                  length=(21, 0), s0=(36, 0), s1=(51, 0), nojac=(66, 0), extra=(67, 0))
    bits = 0
    for name, (lo, default) in layout.items():
        bits |= v.get(name, default) << lo
    return base64.b64encode(bits.to_bytes(9, "little")).decode()


def test_raw_helper_matches_vector():
    assert _mid(cube=1, owner=0, move=1, turn=1, d1=5, d2=2, length=9, s0=2, s1=4) \
        == "QYkqASAAIAAA"


@pytest.mark.parametrize("fields,needle", [
    (dict(owner=2), "cube_owner code 2"),
    (dict(gs=5), "game_state code 5"),
    (dict(gs=7), "game_state code 7"),
    (dict(d1=7, d2=1), "dice 7-1"),
    (dict(d1=3, d2=0), "dice 3-0"),
    (dict(d1=0, d2=4), "dice 0-4"),
    (dict(length=9, s0=9), "score of player 0 is 9"),
    (dict(length=9, s1=12, gs=2), "score of player 1 is 12 in a 9-point match; a game at cube 1"),
    (dict(length=9, s0=9, s1=9, gs=2), "both players"),
    (dict(crawford=1), "crawford is set in a money game"),
    (dict(crawford=1, length=9, s0=3, s1=4), "crawford is set but neither score"),
    (dict(crawford=1, length=9, s0=8, cube=1), "cube_value is 2 in the Crawford"),
    (dict(extra=1), "unused bits"),
    (dict(dbl=1, turn=0, move=0), "turn must be the opponent"),
    (dict(dbl=1, turn=1, d1=3, d2=1), "dice must be not rolled"),
    (dict(dbl=1, turn=1, owner=1), "player 1 owns the cube"),
    (dict(dbl=1, turn=1, res=1), "double_offered and resignation"),
    (dict(gs=0, d1=1, d2=1), "game_state is NONE"),
])
def test_bad_match_ids(fields, needle):
    mid = _mid(**fields)
    with pytest.raises(InvalidIdError, match=needle) as info:
        MatchState.from_match_id(mid)
    assert mid in str(info.value)


@pytest.mark.parametrize("text,needle", [
    ("QYkqASAAIAA", "12 characters, not 11"),
    ("QYkqASAAIAAAA", "12 characters, not 13"),
    ("QYkqASAA!AAA", "outside base64"),
    (12345, "must be a string"),
])
def test_bad_match_id_text(text, needle):
    with pytest.raises(InvalidIdError, match=needle):
        MatchState.from_match_id(text)


def test_match_id_accepts_surrounding_space():
    assert MatchState.from_match_id("  QYkqASAAIAAA\n").match_id() == "QYkqASAAIAAA"


@pytest.mark.parametrize("kwargs,needle", [
    (dict(cube_value=3), "cube_value 3"),
    (dict(cube_value=0), "cube_value 0"),
    (dict(cube_value=1 << 16), "cube_value 65536"),
    (dict(cube_value=2.0), "cube_value 2.0"),
    (dict(cube_value=True), "cube_value True"),
    (dict(cube_owner=2), "cube_owner code 2"),
    (dict(player_on_roll=2), "player_on_roll is 2"),
    (dict(turn=-1), "turn is -1"),
    (dict(match_length=-1), "match_length is -1"),
    (dict(match_length=1 << 15), "match_length is 32768"),
    (dict(match_length="9"), "match_length must be an integer"),
    (dict(score=(1, 2, 3)), "score must be a pair"),
    (dict(score=(-1, 0)), "score of player 0 is -1"),
    (dict(match_length=5, score=(0, 5)), "score of player 1 is 5"),
    (dict(dice=(0, 3)), r"dice \(0, 3\) are invalid"),
    (dict(dice=(7, 1)), r"dice \(7, 1\) are invalid"),
    (dict(dice=(1,)), "dice must be a pair"),
    (dict(dice=31), "dice must be a pair"),
    (dict(game_state=9), "game_state code 9"),
    (dict(resignation=4), "resignation code 4"),
    (dict(crawford="yes"), "crawford must be True or False"),
    (dict(crawford=True), "crawford is set in a money game"),
    (dict(match_length=7, score=(5, 4), crawford=True), "crawford is set but neither"),
    (dict(match_length=7, score=(6, 4), crawford=True, cube_value=2), "cube_value is 2 in the"),
    (dict(double_offered=True), "turn must be the opponent"),
    (dict(double_offered=True, turn=1, dice=(3, 1)), "dice must be not rolled"),
    (dict(double_offered=True, turn=1, cube_owner=1), "player 1 owns the cube"),
    (dict(double_offered=True, turn=1, match_length=5, score=(4, 0), crawford=True),
     "Crawford game"),
    (dict(double_offered=True, turn=1, resignation=2), "double_offered and resignation"),
    (dict(game_state=GameState.NONE, dice=(2, 2)), "game_state is NONE"),
])
def test_bad_match_states(kwargs, needle):
    with pytest.raises(InvalidIdError, match=needle):
        MatchState(**kwargs)


def test_match_state_end_of_match_score_allowed():
    m = MatchState(match_length=5, score=(5, 3), game_state=GameState.OVER)
    assert MatchState.from_match_id(m.match_id()) == m


def _random_states(n, seed):
    """Seeded random valid MatchStates (rejection sampling over raw fields)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        length = int(rng.choice([0, 0, 1, 3, 5, 7, 9, 11, 25]))
        kw = dict(match_length=length,
                  score=tuple(int(x) for x in rng.integers(0, length + 1 if length else 50, 2)),
                  cube_value=1 << int(rng.integers(0, 13)),
                  cube_owner=int(rng.choice([0, 1, 3])),
                  player_on_roll=int(rng.integers(0, 2)), turn=int(rng.integers(0, 2)),
                  crawford=bool(rng.random() < 0.2), game_state=int(rng.integers(0, 5)),
                  double_offered=bool(rng.random() < 0.2),
                  resignation=int(rng.integers(0, 4)) if rng.random() < 0.3 else 0,
                  dice=None if rng.random() < 0.3 else tuple(int(x) for x in rng.integers(1, 7, 2)),
                  jacoby=bool(rng.random() < 0.5))
        try:
            out.append(MatchState(**kw))
        except InvalidIdError:
            pass
    return out


@pytest.mark.gnubg
def test_match_id_encoder_agrees_with_gnubg(gnubg_binary, tmp_path):
    """gnubg.matchid(cubeinfo, posinfo) builds the ID from the same fields."""
    # gnubg's Python posinfo puts the high die first: feed it dice in that order
    states = [replace(s, dice=tuple(sorted(s.dice, reverse=True)) if s.dice else None)
              for s in _random_states(400, 2024)]
    data = [dict(cube=s.cube_value, owner=-1 if s.cube_owner == 3 else int(s.cube_owner),
                 move=s.player_on_roll, length=s.match_length, score=list(s.score),
                 crawford=int(s.crawford), jacoby=int(s.jacoby), turn=s.turn,
                 res=int(s.resignation), dbl=int(s.double_offered), gs=int(s.game_state),
                 dice=list(s.dice or (0, 0))) for s in states]
    script = (
        "for d in data:\n"
        "    ci = {'cube': d['cube'], 'cubeowner': d['owner'], 'move': d['move'],"
        " 'matchto': d['length'], 'score': tuple(d['score']), 'crawford': d['crawford'],"
        " 'jacoby': d['jacoby'], 'beavers': 0, 'bgv': 0}\n"
        "    pi = gnubg.posinfo(d['turn'], d['res'], d['dbl'], d['gs'], tuple(d['dice']))\n"
        "    out.append(gnubg.matchid(ci, pi))\n")
    got = run_gnubg_python(gnubg_binary, tmp_path, script, data)
    assert got == [s.match_id() for s in states]
    assert [MatchState.from_match_id(g) for g in got] == states


@pytest.mark.gnubg
def test_match_id_decoder_agrees_with_gnubg(gnubg_binary, tmp_path):
    """gnubg's `set matchid` reads our IDs into the same cube, score and dice."""
    states = [s for s in _random_states(3000, 7)
              if s.game_state == GameState.PLAYING and not s.double_offered
              and s.resignation == Resignation.NONE and s.turn == s.player_on_roll
              and (s.cube_value <= 64 or s.is_money)][:150]   # gnubg 1.07 crashes on
    # huge match cubes (its match equity lookups overflow)
    assert len(states) >= 50
    script = (
        "gnubg.command('set player 0 human')\n"
        "gnubg.command('set player 1 human')\n"
        "gnubg.command('new match 5')\n"
        "for mid in data:\n"
        "    gnubg.command('set matchid ' + mid)\n"
        "    ci, pi = gnubg.cubeinfo(), gnubg.posinfo()\n"
        "    out.append([gnubg.matchid(), ci['cube'], ci['cubeowner'], ci['move'],"
        " ci['matchto'], list(ci['score']), ci['crawford'], list(pi['dice'])])\n")
    got = run_gnubg_python(gnubg_binary, tmp_path, script, [s.match_id() for s in states])
    for s, (mid, cube, owner, move, length, score, crawford, dice) in zip(states, got):
        high_first = replace(s, dice=tuple(sorted(s.dice, reverse=True)) if s.dice else None)
        assert mid == high_first.match_id()          # gnubg rewrites the dice high die first
        assert cube == s.cube_value
        assert owner == (-1 if s.cube_owner == CubeOwner.CENTRED else int(s.cube_owner))
        assert move == s.player_on_roll and length == s.match_length
        assert bool(crawford) == s.crawford
        if not s.is_money:                            # gnubg's cubeinfo shows 0-0 in money
            assert tuple(score) == s.score
        assert tuple(dice) == (s.dice or (0, 0))     # ... but keeps their order inside


def test_gnubg_id():
    pos, state = parse_gnubg_id("4HPwATDgc/ABMA:QYkqASAAIAAA")
    assert pos == Position.initial() and state == MatchState.from_match_id("QYkqASAAIAAA")
    assert format_gnubg_id(pos, state) == "4HPwATDgc/ABMA:QYkqASAAIAAA"
    assert format_gnubg_id(INITIAL_BOARD, state) == "4HPwATDgc/ABMA:QYkqASAAIAAA"
    assert parse_gnubg_id(" GNUbg ID: 4HPwATDgc/ABMA:QYkqASAAIAAA ") == (pos, state)
    for bad, needle in [("4HPwATDgc/ABMA", "PositionID:MatchID"), ("a:b:c", "PositionID:MatchID"),
                        ("4HPwATDgc/ABMA:QYkqASAAIAA", "Match ID has 12"),
                        ("4HPwATDgc/ABM:QYkqASAAIAAA", "Position ID has 14"), (None, "string")]:
        with pytest.raises(InvalidIdError, match=needle):
            parse_gnubg_id(bad)


@pytest.mark.gnubg
def test_gnubg_id_agrees_with_gnubg(gnubg_binary, tmp_path):
    boards = self_play_positions(40, 5)[0]
    states = [s for s in _random_states(400, 11) if s.game_state == GameState.PLAYING
              and not s.double_offered and s.resignation == Resignation.NONE
              and s.turn == s.player_on_roll and (s.cube_value <= 64 or s.is_money)
              and (s.dice is None or s.dice[0] >= s.dice[1])][:40]
    ids = [format_gnubg_id(b, s) for b, s in zip(boards, states)]
    script = ("gnubg.command('set player 0 human')\n"
              "gnubg.command('set player 1 human')\n"
              "gnubg.command('new match 5')\n"
              "for gid in data:\n"
              "    gnubg.command('set gnubgid ' + gid)\n"
              "    out.append(gnubg.gnubgid())\n")
    assert run_gnubg_python(gnubg_binary, tmp_path, script, ids) == ids


# ---------------------------------------------------------------------------
# Position IDs against gnubg-nn (the layout XGID and notation rely on)
# ---------------------------------------------------------------------------

def test_position_ids_agree_with_gnubg_nn(gnubg_nn):
    boards = np.concatenate([random_boards(3000, 99), random_boards(500, 5, home_only=True),
                             self_play_positions(1000, 3)[0]])
    for b in boards:
        pid = Position(b).position_id()
        assert pid == gnubg_nn.position_id(b.tolist())
        assert np.array_equal(np.array(gnubg_nn.board_from_position_id(pid)), b)


# ---------------------------------------------------------------------------
# XGID
# ---------------------------------------------------------------------------

START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


def test_xgid_start_position():
    x = XGID.parse(START_XGID)
    assert x == XGID("-b----E-C---eE---c-e----B-")
    assert (x.cube, x.cube_position, x.turn, x.dice, x.score1, x.score2, x.rules,
            x.match_length, x.max_cube) == (0, 0, 1, "00", 0, 0, 0, 0, 10)
    assert x.position == Position.initial()
    assert x.format() == START_XGID and str(x) == START_XGID
    assert XGID.from_position(Position.initial()).format() == START_XGID
    assert Position.initial().xgid() == START_XGID
    assert Position.from_xgid(START_XGID) == Position.initial()
    assert Position.parse(START_XGID) == Position.initial()
    assert x.roll is None and x.cube_value == 1


def test_xgid_prefix_optional_and_case_insensitive():
    body = START_XGID[5:]
    assert XGID.parse(body) == XGID.parse(START_XGID) == XGID.parse("xgid=" + body)
    assert XGID.parse("  " + START_XGID + "\n") == XGID.parse(body)


# Recorded with gnubg -t: `set xgid <XGID>` then `show board` / gnubg.positionid().
GNUBG_XGID_POSITIONS = [
    ("XGID=-a-B--C-B---bC---c-e----A-:1:0:1:00:0:0:0:0:10", "4HMwAMI4gwMgAA"),
    ("XGID=-a-B--C-B---bC---c-e----A-:1:0:-1:00:0:0:0:0:10", "jDM4AAI+BwMgAA"),
    ("XGID=-bCC--DA----eB----Af---bA-:0:0:-1:24:23:7:0:25:10", "7niBQSCGH/ABMA"),
    ("XGID=-aCC--D-a---eB----Af---bAA:3:1:1:14:0:0:0:1:10", "hh/wISDueMAgUA"),
]


@pytest.mark.parametrize("xgid,pid", GNUBG_XGID_POSITIONS)
def test_xgid_positions_recorded_from_gnubg(xgid, pid):
    x = XGID.parse(xgid)
    assert x.position.position_id() == pid
    assert XGID.from_position(x.position, **{f: getattr(x, f) for f in (
        "cube", "cube_position", "turn", "dice", "score1", "score2", "rules",
        "match_length", "max_cube")}) == x


def test_xgid_orientation_by_hand():
    # bottom: 2 on its 24-point and 1 on the bar; top: 3 on the bottom's 1-point, 1 on its bar
    x = XGID("ac----------------------BA", turn=1)
    pos = x.position                         # bottom on roll: row 1 = bottom
    assert pos.board[1][23] == 2 and pos.board[1][24] == 1
    assert pos.board[0][23] == 3 and pos.board[0][24] == 1   # bottom's 1-pt = top's 24-pt
    top = replace(x, turn=-1).position      # top on roll: row 1 = top
    assert top == pos.swap()


@st.composite
def xgids(draw):
    seed = draw(st.integers(0, 2 ** 32 - 1))
    b = random_boards(1, seed)[0]
    length = draw(st.sampled_from([0, 0, 1, 3, 5, 7, 11, 25]))
    s1 = draw(st.integers(0, length - 1)) if length else draw(st.integers(0, 99))
    s2 = draw(st.integers(0, length - 1)) if length else draw(st.integers(0, 99))
    if length:
        rules = int(max(s1, s2) == length - 1 and draw(st.booleans()))
        cube_actions = ["D"] if not rules else []
    else:
        rules = draw(st.integers(0, 3))
        cube_actions = ["D", "B", "R"]
    dice = draw(st.sampled_from(["00"] + cube_actions) | st.tuples(
        st.integers(1, 6), st.integers(1, 6)).map(lambda d: f"{d[0]}{d[1]}"))
    cube = 0 if length and rules else draw(st.integers(0, 15))
    return XGID.from_position(Position(b), cube=cube,
                              cube_position=draw(st.integers(-1, 1)),
                              turn=draw(st.sampled_from([1, -1])), dice=dice, score1=s1,
                              score2=s2, rules=rules, match_length=length,
                              max_cube=draw(st.integers(0, 15)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xgids())
def test_xgid_round_trip(x):
    text = x.format()
    assert XGID.parse(text) == x
    assert XGID.parse(text).format() == text
    # the position seen from the player on turn survives a trip through from_position
    assert XGID.from_position(x.position, turn=x.turn).checkers == x.checkers
    assert XGID.from_position(x.position, turn=-x.turn).position == x.position
    assert Position.parse(text) == x.position


@settings(max_examples=300, deadline=None)
@given(xgids())
def test_xgid_match_state_round_trip(x):
    if x.dice in ("B", "R"):
        with pytest.raises(InvalidIdError, match="beaver"):
            x.to_match_state()
        return
    if x.dice == "D" and x.cube_position == -x.turn:
        # the player on turn doubles a cube the opponent owns: no such Match ID
        with pytest.raises(InvalidIdError, match="owns the cube"):
            x.to_match_state()
        return
    ms = x.to_match_state()
    assert ms.player_on_roll == (1 if x.turn == 1 else 0)
    assert ms.score == (x.score2, x.score1) and ms.cube_value == 1 << x.cube
    back = XGID.from_match_state(x.position, ms, beaver=bool(x.rules & 2 and not x.match_length),
                                 max_cube=x.max_cube)
    roll = x.roll
    expected = replace(x, dice=f"{max(roll)}{min(roll)}") if roll else x
    assert back == expected


def test_xgid_match_state_vector():
    x = XGID.parse("XGID=-b----E-C---eE---c-e----B-:1:1:-1:52:2:4:0:9:10")
    ms = x.to_match_state()
    assert ms == MatchState(match_length=9, score=(4, 2), cube_value=2,
                            cube_owner=CubeOwner.PLAYER1, player_on_roll=0, dice=(5, 2))
    # gnubg's `set xgid` labels the player on roll as player 1: swap to compare
    assert ms.swapped().match_id() == "QYkqASAAIAAE"
    d = XGID.parse("XGID=-b----E-C---eE---c-e----B-:1:0:1:D:0:0:3:0:10").to_match_state()
    assert d.double_offered and d.player_on_roll == 1 and d.turn == 0 and d.jacoby
    assert XGID.from_match_state(Position.initial(), d, beaver=True).dice == "D"


def test_from_match_state_refusals():
    pos = Position.initial()
    with pytest.raises(InvalidIdError, match="resignation"):
        XGID.from_match_state(pos, MatchState(resignation=Resignation.SINGLE, turn=1))
    with pytest.raises(InvalidIdError, match="game_state OVER"):
        XGID.from_match_state(pos, MatchState(game_state=GameState.OVER))
    with pytest.raises(InvalidIdError, match="beaver applies only to money"):
        XGID.from_match_state(pos, MatchState(match_length=5), beaver=True)


@pytest.mark.gnubg
def test_xgid_agrees_with_gnubg(gnubg_binary, tmp_path):
    """`set xgid` in gnubg gives the same Position ID and Match ID."""
    rng = np.random.default_rng(3)
    boards = self_play_positions(200, 9)[0]
    xs = []
    for b in boards:
        ml = int(rng.choice([0, 0, 1, 3, 5, 7, 9, 11, 25]))
        s1 = int(rng.integers(0, ml)) if ml else int(rng.integers(0, 5))
        s2 = int(rng.integers(0, ml)) if ml else int(rng.integers(0, 5))
        rules = (int(rng.integers(0, 4)) if not ml
                 else int(ml > 1 and max(s1, s2) == ml - 1 and rng.random() < .5))
        cube = 0 if rules == 1 and ml else int(rng.integers(0, 7))
        cp = 0 if cube == 0 else int(rng.choice([-1, 1, 0]))
        dice = "00" if rng.random() < .3 else f"{rng.integers(1, 7)}{rng.integers(1, 7)}"
        xs.append(XGID.from_position(Position(b), cube=cube, cube_position=cp,
                                     turn=int(rng.choice([1, -1])), dice=dice, score1=s1,
                                     score2=s2, rules=rules, match_length=ml))
    script = ("for x in data:\n"
              "    gnubg.command('set xgid ' + x)\n"
              "    out.append([gnubg.positionid(), gnubg.matchid()])\n")
    got = run_gnubg_python(gnubg_binary, tmp_path, script, [x.format() for x in xs])
    for x, (pid, mid) in zip(xs, got):
        ms = x.to_match_state()
        if ms.player_on_roll == 0:          # gnubg relabels: player on roll = player 1
            ms = ms.swapped()
        assert (x.position.position_id(), ms.match_id()) == (pid, mid), x.format()


@pytest.mark.parametrize("text,needle", [
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0", "10 fields"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10:1", "10 fields"),
    ("XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10", "26 characters"),
    ("XGID=-b----E-C---eE---c-e----B-x:0:0:1:00:0:0:0:0:10", "26 characters"),
    ("XGID=-b----E-C---eE---c-e--1-B-:0:0:1:00:0:0:0:0:10", "character 22 is '1'"),
    ("XGID=-b----E-C---eE---c-e----P-:0:0:1:00:0:0:0:0:10", "character 24 is 'P'"),
    ("XGID=-b----E-C---eE---c-e----O-:0:0:1:00:0:0:0:0:10", "bottom player 28 checkers"),
    ("XGID=-o----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "top player 28 checkers"),
    ("XGID=Ab----E-C---eE---c-e----A-:0:0:1:00:0:0:0:0:10", "character 0"),
    ("XGID=-b----E-C---eE---c-e----Ba:0:0:1:00:0:0:0:0:10", "character 25"),
    ("XGID=-b----E-C---eE---c-e----B-:x:0:1:00:0:0:0:0:10", "cube must be an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:16:0:1:00:0:0:0:0:10", "cube is 16"),
    ("XGID=-b----E-C---eE---c-e----B-:-1:0:1:00:0:0:0:0:10", "cube is -1"),
    ("XGID=-b----E-C---eE---c-e----B-:0:2:1:00:0:0:0:0:10", "cube_position is 2"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:0:00:0:0:0:0:10", "turn is 0"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:2:00:0:0:0:0:10", "turn is 2"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:07:0:0:0:0:10", "dice is '07'"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:0:0:0:0:0:10", "dice is '0'"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:X:0:0:0:0:10", "dice is 'X'"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:123:0:0:0:0:10", "dice is '123'"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:-1:0:0:0:10", "score1 is -1"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:7:0:7:10", "score2 is 7"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:2:7:10", "rules is 2"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:4:0:10", "rules is 4"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:1:7:10", "Crawford game but no player"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:D:6:0:1:7:10", "no doubling in the Crawford"),
    ("XGID=-b----E-C---eE---c-e----B-:1:0:1:00:6:0:1:7:10", "cube is 1 in the Crawford"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:B:0:0:0:7:10", "only in money play"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:16", "max_cube is 16"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:1.5", "max_cube must be an integer"),
    # integers only as XG writes them: ASCII digits, no leading zero, no -0
    ("XGID=-b----E-C---eE---c-e----B-:-0:0:1:00:0:0:0:0:10", "cube must be an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:00:0:1:00:0:0:0:0:10", "cube must be an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:07:10", "match_length must be an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:\uff11\uff10", "max_cube must be an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:\u0667:10", "match_length must be an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0\n:10", "match_length must be an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:+1:00:0:0:0:0:10", "turn must be an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:\uff15\uff12:0:0:0:0:10", "dice is"),
    ("", "10 fields"),
])
def test_bad_xgids(text, needle):
    with pytest.raises(InvalidIdError, match=needle):
        XGID.parse(text)


def test_bad_xgid_construction():
    with pytest.raises(InvalidIdError, match="must be a string"):
        XGID.parse(None)
    with pytest.raises(InvalidIdError, match="26 characters"):
        XGID(12)
    with pytest.raises(InvalidIdError, match="cube must be an integer"):
        XGID("-" * 26, cube=True)
    with pytest.raises(InvalidIdError, match="turn is 0"):
        XGID.from_position(Position.initial(), turn=0)
    with pytest.raises(InvalidDiceError):
        XGID.from_position(Position.initial(), dice=(0, 1))
    assert XGID.from_position(Position.initial(), dice=(6, 2)).dice == "62"
    assert XGID.from_position(Position.initial(), dice=None).dice == "00"
    assert XGID("-" * 26, dice=(3, 4)).roll == (3, 4)


# ---------------------------------------------------------------------------
# move notation
# ---------------------------------------------------------------------------

START = INITIAL_BOARD


@pytest.mark.parametrize("b,moves,text", [
    (START, [(8, 5), (6, 5)], "8/5 6/5"),
    (START, [(6, 5), (8, 5)], "8/5 6/5"),
    (START, [(24, 18), (13, 11)], "24/18 13/11"),
    (START, [(13, 11), (24, 18)], "24/18 13/11"),
    (START, [(24, 21), (21, 20)], "24/20"),
    (START, [(24, 23), (24, 21)], "24/23 24/21"),
    (START, [(13, 7), (13, 7), (8, 2), (8, 2)], "13/7(2) 8/2(2)"),
    (board({24: 2}), [(24, 18), (24, 18), (18, 12)], "24/12 24/18"),
    (START, [(13, 7), (7, 1)], "13/1*"),
    (START, [], ""),
    (board({25: 1, 6: 5}, {22: 1}), [(25, 22), (6, 5)], "bar/22* 6/5"),
    (board({25: 1, 6: 5}, {3: 1}), [(25, 22), (6, 3)], "bar/22 6/3*"),
    (board({6: 2, 1: 1}), [(6, 0), (1, 0)], "6/off 1/off"),
    (board({6: 2}), [(6, 0), (6, 0), (6, 0)], "6/off(3)"),
    (board({8: 1, 6: 2}, {5: 1}), [(8, 5), (5, 3)], "8/5*/3"),
    (board({8: 1, 6: 2}, {4: 1}), [(8, 5), (5, 3)], "8/3"),
    (board({7: 1, 6: 1}, {5: 1}), [(7, 5), (6, 5)], "7/5* 6/5"),
    (board({25: 2}, {20: 1}), [(25, 20), (25, 20), (20, 15), (15, 10)], "bar/20*/10 bar/20"),
    (board({24: 2}, {20: 1}), [(24, 20), (24, 20), (20, 16), (20, 16)], "24/20*/16(2)"),
    (board({10: 1}, {6: 1, 4: 1}), [(10, 6), (6, 4), (4, 2)], "10/6*/4*/2"),
])
def test_format_play_examples(b, moves, text):
    assert format_play(b, moves) == text


@pytest.mark.parametrize("moves,needle", [
    ([(26, 20)], "26/20"), ([(5, 7)], "5/7"), ([(0, 0)], "0/0"), ([(3, -1)], "3/-1"),
    ([(6, 5)] * 5, "at most 4"), ([(6,)], "pair of ints"), ([("a", 1)], "pair of ints"),
])
def test_format_play_rejects(moves, needle):
    with pytest.raises(InvalidMoveError, match=needle):
        format_play(START, moves)


@pytest.mark.gnubg
def test_format_play_agrees_with_gnubg(gnubg_binary, tmp_path):
    """Every legal play of 400 self-play positions, written by gnubg itself."""
    boards, dice = self_play_positions(400, 21)
    cases = []
    for b, d in zip(boards, dice):
        for p in legal_plays(b, int(d[0]), int(d[1])):
            cases.append((b, p.moves))
    assert len(cases) > 5000
    script = ("for b, moves in data:\n"
              "    flat = [x for m in moves for x in m]\n"
              "    flat += [-1] * (8 - len(flat))\n"
              "    out.append(gnubg.movetupletostring(tuple(flat), (tuple(b[0]), tuple(b[1]))))\n")
    got = run_gnubg_python(gnubg_binary, tmp_path, script,
                           [(b.tolist(), [list(m) for m in mv]) for b, mv in cases])
    mine = [format_play(b, mv) for b, mv in cases]
    bad = [(Position(b).position_id(), mv, g, m)
           for (b, mv), g, m in zip(cases, got, mine) if g != m]
    assert not bad, bad[:5]


def test_notation_of_gnubg_nn_plays(gnubg_nn):
    """gnubg's own move paths give the same set of notations as bgfast's plays."""
    boards, dice = self_play_positions(600, 33)
    for b, d in zip(boards, dice):
        d1, d2 = int(d[0]), int(d[1])
        theirs = {format_play(b, steps) for _key, steps in gnubg_nn.moves(b.tolist(), d1, d2, 1)}
        assert theirs == {p.notation for p in legal_plays(b, d1, d2)}


@pytest.mark.parametrize("text,expected", [
    ("24/18 13/11", ((24, 18), (13, 11))),
    ("13/11 24/18", ((13, 11), (24, 18))),
    ("24/18/13", ((24, 18), (18, 13))),
    ("13/7(2)", ((13, 7), (13, 7))),
    ("13/7(2) 8/2(2)", ((13, 7), (13, 7), (8, 2), (8, 2))),
    ("24/20", ((24, 20),)),
    ("  24/23   24/21 ", ((24, 23), (24, 21))),
    ("", ()),
])
def test_parse_play_examples(text, expected):
    assert parse_play(START, text) == expected


def test_parse_play_bar_off_and_hits():
    b = board({25: 1, 8: 1, 6: 2}, {22: 1, 5: 1})
    assert parse_play(b, "bar/22* 8/5*/3") == ((25, 22), (8, 5), (5, 3))
    assert parse_play(b, "BAR/22 8/5/3") == ((25, 22), (8, 5), (5, 3))
    assert parse_play(b, "25/22*") == ((25, 22),)
    home = board({6: 2, 1: 1})
    assert parse_play(home, "6/off 1/off") == ((6, 0), (1, 0))
    assert parse_play(home, "6/0 1/OFF") == ((6, 0), (1, 0))
    assert parse_play(home, "6/off(2)") == ((6, 0), (6, 0))


@pytest.mark.parametrize("b,text,dice,expected", [
    (START, "24/20", (3, 1), ((24, 21), (21, 20))),
    (START, "24/20", (1, 3), ((24, 23), (23, 20))),
    (START, "13/7(2) 8/2(2)", (6, 6), ((13, 7), (13, 7), (8, 2), (8, 2))),
    (board({24: 2}), "24/12(2)", (6, 6), ((24, 18), (18, 12), (24, 18), (18, 12))),
    (board({25: 2}, {1: 2}), "bar/13(2)", "66", ((25, 19), (25, 19), (19, 13), (19, 13))),
    (board({8: 1, 6: 2}, {5: 1}), "8/5*/3", (3, 2), ((8, 5), (5, 3))),
    # 8/3 with 3-2 may not hit on the 5-point on the way: it goes 8/6/3
    (board({8: 1, 6: 2}, {5: 1}), "8/3", (3, 2), ((8, 6), (6, 3))),
    (board({10: 1, 4: 1}), "10/off", (6, 5), ((10, 4), (4, 0))),
    (board({3: 1}), "3/off", (5, 1), ((3, 0),)),
])
def test_parse_play_with_dice(b, text, dice, expected):
    assert parse_play(b, text, dice) == expected


@pytest.mark.parametrize("b,text,dice,needle", [
    (START, "24/20", (6, 5), "cannot be made with 6-5"),
    (START, "24/23", (2, 2), "cannot be made with 2-2"),
    # 8/5/3 would hit on 5 (unwritten), 8/6/3 lands on a held point
    (board({8: 1}, {5: 1, 6: 2}), "8/3", (3, 2), "cannot be made with 3-2"),
    (board({6: 1, 3: 1}), "3/off", (5, 1), "cannot be made with 5-1"),
    (START, "24/20", (7, 1), "second die|first die"),
])
def test_parse_play_with_bad_dice(b, text, dice, needle):
    with pytest.raises((InvalidMoveError, InvalidDiceError), match=needle):
        parse_play(b, text, dice)


@pytest.mark.parametrize("b,text,needle", [
    (START, "24-18", "'24-18'"),
    (START, "24/18 13", "'13'"),
    (START, "24/", "'24/'"),
    (START, "off/20", "'off/20'"),
    (START, "24/bar", "'24/bar'"),
    (START, "24/30", "names point 30"),
    (START, "26/20", "starts on point 26"),
    (START, "0/3", "starts on point 0"),
    (START, "18/24", "to lower points"),
    (START, "6/6", "to lower points"),
    (START, "6/off/3", "goes on after bearing off"),
    (START, "6/off*", "marks a hit on 'off'"),
    (START, "13/7(5)", r"repeats 5 times"),
    (START, "13/7(0)", r"repeats 0 times"),
    (START, "13/7(3) 8/2(2)", "5 moves"),
    (START, "24/1 24/1", "46 pips"),
    (START, "13/10*", "marks a hit on 10"),
    (START, "20/15", "no checker to move on 20"),
    (START, "24/19", "point 19 is held"),
    (START, "6/off", "cannot bear off"),
    (START, "8/5 8/5 8/5 8/5", "no checker to move on 8"),
    (board({25: 1, 6: 2}), "6/4", "bar must enter first"),
    (START, 31, "must be given as a string"),
])
def test_parse_play_errors(b, text, needle):
    with pytest.raises(InvalidMoveError, match=needle):
        parse_play(b, text)


def test_apply_moves():
    after = apply_moves(board({25: 1, 6: 2}, {22: 1}), [(6, 4), (25, 22)])
    assert after[1][21] == 1 and after[1][24] == 0 and after[1][3] == 1
    assert after[0][2] == 0 and after[0][24] == 1            # the blot went to the bar
    with pytest.raises(InvalidMoveError, match="no checker"):
        apply_moves(START, [(5, 1)])


def _uses_dice(steps, d1, d2):
    """Each step is one die (a bear-off may use a larger die), no die used twice."""
    pool = [d1] * 4 if d1 == d2 else [d1, d2]
    for a, t in steps:
        dist = a - t
        if dist in pool:
            pool.remove(dist)
        elif t == 0 and any(d > dist for d in pool):
            pool.remove(min(d for d in pool if d > dist))
        else:
            return False
    return True


def test_parse_format_match_round_trip_on_self_play():
    """For every legal play: format -> parse (with and without dice) -> same result."""
    boards, dice = self_play_positions(150, 77)
    n = 0
    for b, d in zip(boards, dice):
        d1, d2 = int(d[0]), int(d[1])
        plays = legal_plays(b, d1, d2)
        if not plays:
            assert match_play(b, "", plays) is None
            continue
        for p in plays:
            text = format_play(b, p.moves)
            assert Position(apply_moves(b, parse_play(b, text))[::-1]) == p.position
            steps = parse_play(b, text, (d1, d2))
            assert _uses_dice(steps, d1, d2), (text, steps)
            assert Position(apply_moves(b, steps)[::-1]) == p.position
            assert match_play(b, text, plays) is p
            n += 1
    assert n > 1500


def test_match_play():
    plays = legal_plays(START, 6, 1)
    assert match_play(START, "13/7 8/7", plays).notation == "13/7 8/7"
    assert match_play(START, "8/7 13/7", plays).notation == "13/7 8/7"
    assert match_play(START, "13/7/6", plays).notation == "13/6"
    assert match_play(START, "24/18 24/23", plays).notation == "24/23 24/18"
    with pytest.raises(InvalidMoveError, match="not a legal play"):
        match_play(START, "13/7", plays)                     # uses only one die
    with pytest.raises(InvalidMoveError, match="not a legal play"):
        match_play(START, "13/8 6/4", plays)                 # wrong dice
    with pytest.raises(InvalidMoveError, match="empty play is not legal"):
        match_play(START, "", plays)
    blocked = board({25: 1}, {p: 2 for p in range(19, 25)})
    assert legal_plays(blocked, 6, 1) == []
    assert match_play(blocked, "", []) is None
    with pytest.raises(InvalidMoveError, match="cannot be played"):
        match_play(START, "24/18", [])                      # the caller says: no legal play
    with pytest.raises(InvalidMoveError, match="held by the opponent"):
        match_play(blocked, "bar/24", [])


def test_too_many_moves_are_named_as_such():
    plays = legal_plays(START, 5, 2)
    with pytest.raises(InvalidMoveError, match=r"too many moves: '6/1 6/4 3/2' has 3 moves; "
                                               r"this roll plays at most 2"):
        match_play(START, "6/1 6/4 3/2", plays)
    with pytest.raises(InvalidMoveError, match=r"too many moves: .* has 3 moves; a 5-2 plays "
                                               r"at most 2"):
        parse_play(START, "6/1 6/4 3/2", (5, 2))
    with pytest.raises(InvalidMoveError, match=r"has 5 moves; a roll plays at most 4"):
        parse_play(START, "8/5(2) 6/3(3)", (3, 3))
    # a play of 1 move where the roll plays only one die
    one = board({1: 1})
    with pytest.raises(InvalidMoveError, match="has 2 moves; this roll plays at most 1"):
        match_play(one, "1/off 1/off", legal_plays(one, 6, 5))


# (Position ID, roll, the only legal play / one of them, its single-die steps)
OWN_NOTATION = [
    # one checker bears off over three sixes while the 8 is still outside
    ("d7cNAADfexAgAA", (6, 6), "16/off 8/2", ((8, 2), (16, 10), (10, 4), (4, 0))),
    # both checkers on 8 come home before either bears off
    ("f30oAAB7HzMAAA", (4, 4), "8/off(2)", ((8, 4), (8, 4), (4, 0), (4, 0))),
    ("f30oAAB7HzMAAA", (4, 4), "8/off 8/4 6/2", ((8, 4), (6, 2), (8, 4), (4, 0))),
    ("d9MIIBHnv6AAAA", (6, 6), "10/off 9/3 4/off", ((9, 3), (10, 4), (4, 0), (4, 0))),
    ("308IGAB/tiECAA", (4, 4), "12/off 9/5", ((9, 5), (12, 8), (8, 4), (4, 0))),
]


@pytest.mark.parametrize("pid,dice,text,steps", OWN_NOTATION)
def test_own_bear_off_notation_is_accepted(pid, dice, text, steps):
    """bgfast's notation of a play parses back to it, in any order of its
    moves, through parse_play, match_play, Game.play and PartialPlay."""
    from bgfast.game import Game, PartialPlay

    pos = Position.from_position_id(pid)
    plays = legal_plays(pos, *dice)
    play = next(p for p in plays if p.notation == text)
    assert parse_play(pos.board, text, dice) == steps
    for written in (text, " ".join(reversed(text.split()))):
        assert Position(apply_moves(pos.board, parse_play(pos.board, written))[::-1]) == play.position
        assert match_play(pos.board, written, plays) is play
        game = Game(position=pos, on_roll=1, seed=1)
        game.roll(dice)
        entered = PartialPlay(game)
        entered.move(written)
        assert entered.complete is not None and entered.complete.position == play.position
        assert game.play(written).position == play.position


def test_partial_play_takes_the_moves_in_parts_and_in_any_order():
    from bgfast.game import Game, PartialPlay

    game = Game(position=Position.from_position_id("d7cNAADfexAgAA"), on_roll=1, seed=1)
    game.roll((6, 6))
    entered = PartialPlay(game)
    entered.move("16/4")
    assert entered.steps == ((16, 10), (10, 4)) and entered.dice_left == (6, 6)
    with pytest.raises(InvalidMoveError, match="cannot bear off while checkers are outside"):
        entered.move("4/off")                          # the 8 is still outside
    with pytest.raises(InvalidMoveError, match=r"'8/7' is not part of a legal play for 6-6"):
        entered.move("8/7")
    assert entered.steps == ((16, 10), (10, 4))        # nothing changed
    entered.move("4/off 8/2")
    assert entered.steps == ((16, 10), (10, 4), (8, 2), (4, 0)) and entered.dice_left == ()
    assert entered.complete.notation == "16/off 8/2"
    assert entered.undo() and entered.complete is None and entered.dice_left == (6,)


def _bear_off_positions(n, seed):
    """``n`` (board, doubles) pairs: the player on roll with most checkers
    home and one to three outside, the opponent anywhere else (the plays
    where one checker bears off over several dice)."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 2, 25), dtype=np.uint8)
    for b in out:
        for _ in range(int(rng.integers(1, 4))):
            b[1][int(rng.integers(6, 18))] += 1
        for _ in range(int(rng.integers(1, 13))):
            b[1][int(rng.integers(0, 6))] += 1
        for _ in range(int(rng.integers(1, 16))):
            i = int(rng.integers(0, 25))
            if i == 24 or b[1][23 - i] == 0:
                b[0][i] += 1
    d = rng.integers(1, 7, size=n)
    return out, np.stack([d, d], axis=1)


def _check_notation_round_trip(boards, dice, *, full: bool = True) -> int:
    """Every legal play's notation (as :func:`format_plays` writes it), and
    the same moves in reverse order, parse back to that play, without the
    dice (segments) and with them (single-die steps that use the dice);
    ``full=False`` checks only the steps, of the notation or (every other
    play) its reverse.  Returns how many plays were checked."""
    from bgfast.formats import format_plays
    from bgfast.movegen import legal_plays_batch

    offsets, results, moves = legal_plays_batch(boards, dice, with_moves=True)
    n = 0
    for i, (b, d) in enumerate(zip(boards, dice.tolist())):
        lo, hi = offsets[i], offsets[i + 1]
        for name, res in zip(format_plays(b, moves[lo:hi]), results[lo:hi]):
            want = res[::-1].tobytes()
            turned = " ".join(reversed(name.split()))
            if full:
                for text in (name, turned):
                    assert apply_moves(b, parse_play(b, text)).tobytes() == want, (b.tolist(), d,
                                                                                   text)
            text = name if full or n % 2 else turned
            steps = parse_play(b, text, d)
            assert _uses_dice(steps, *d), (b.tolist(), d, text, steps)
            assert apply_moves(b, steps).tobytes() == want, (b.tolist(), d, text)
            n += 1
    return n


def test_notation_round_trip_with_bear_off_doubles():
    boards, dice = self_play_positions(300, 5)
    assert _check_notation_round_trip(boards, dice) > 4000
    boards, dice = _bear_off_positions(300, 6)
    assert _check_notation_round_trip(boards, dice) > 3000


@pytest.mark.slow
def test_notation_round_trip_on_many_positions():
    """The steps check over 200,000 positions, about 4.5 million plays (ten
    minutes on one core)."""
    for first in range(0, 100_000, 10_000):     # batches keep the memory small
        boards, dice = self_play_positions(10_000, 1000 + first)
        assert _check_notation_round_trip(boards, dice, full=False) > 150_000
        boards, dice = _bear_off_positions(10_000, 2000 + first)
        assert _check_notation_round_trip(boards, dice, full=False) > 100_000


def test_the_match_id_gnubg_writes_after_a_resigned_game_that_ends_the_match():
    # gnubg -t: "new match 3", "end game", "show board": a 4-cube resigned at
    # 0-0 gives player 1 four points; gnubg clears the resignation once the
    # game is over
    m = MatchState.from_match_id("EgtgAAAAIAAE")
    assert m.game_state == GameState.RESIGNED and m.resignation == Resignation.NONE
    assert (m.match_length, m.score, m.cube_value) == (3, (0, 4), 4)
    assert m.match_id() == "EgtgAAAAIAAE"


def test_every_match_id_gnubg_shows_while_it_plays_a_match_out_decodes(gnubg_binary, tmp_path):
    import re
    import subprocess

    script = tmp_path / "match.txt"
    lines = ["set player 0 gnubg", "set player 1 gnubg", "set seed 5",
             "set player 0 chequerplay evaluation plies 0",
             "set player 1 chequerplay evaluation plies 0",
             "set player 0 cubedecision evaluation plies 0",
             "set player 1 cubedecision evaluation plies 0",
             "new match 3"]
    lines += ["play", "show board"] * 40 + ["end game", "show board"] * 6
    script.write_text("\n".join(lines) + "\n")
    out = subprocess.run([gnubg_binary, "-t", "-q", "-c", str(script)], capture_output=True,
                         text=True, timeout=600).stdout
    ids = set(re.findall(r"Match ID\s*:\s*(\S{12})", out))
    assert len(ids) >= 10
    for mid in ids:
        assert MatchState.from_match_id(mid).match_id() == mid
