"""``bgfast.hint`` and ``bgfast hint``: ranked plays for a roll, the cube without one."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import Position
from bgfast.cube import CubeContext
from bgfast.cli import main
from bgfast.errors import BgfastError
from bgfast.evaluate import rank_plays
from bgfast.hint import DEFAULT_PLY, hint

OPENING = "4HPwATDgc/ABMA"
XGID_MATCH = "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:9:10"


def test_plays_are_every_legal_play_best_first_with_losses():
    h = hint(OPENING, (3, 1), cubeless=True)
    assert h.ply == DEFAULT_PLY == 2 and h.cube is None
    legal = {p.notation for p in Position.initial().legal_plays(3, 1)}
    assert {p.play for p in h.plays} == legal and len(h.plays) == 16
    eqs = [p.equity for p in h.plays]
    assert eqs == sorted(eqs, reverse=True)
    assert h.plays[0].play == "8/5 6/5" and h.plays[0].loss == 0.0
    for p in h.plays:
        assert p.loss == pytest.approx(eqs[0] - p.equity, abs=1e-12)
        w, wg, wb, lg, lb = p.probs
        assert 0 <= wb <= wg <= w <= 1 and 0 <= lb <= lg <= 1 - w + 1e-9
    # the same numbers as the ranking it presents, at the same ply
    ranked = rank_plays(Position.initial(), 3, 1, plies=2, evaluator="net")
    assert [r.play.notation for r in ranked] == [p.play for p in h.plays]
    assert [r.equity for r in ranked] == eqs
    assert h.ranked_by == "cubeless" and all(p.cubeful is None for p in h.plays)


def _deeper_first_then_best(plays, vals):
    """The plays searched deeper come first (the move filter's others keep
    their 0-ply values and rank below), each group best first."""
    key = [(-p.ply, -v) for p, v in zip(plays, vals)]
    return key == sorted(key) and plays[0].ply == max(p.ply for p in plays)


def test_plays_are_ranked_at_the_cube_and_score_by_default():
    from bgfast.cube import CubeContext

    money = hint(OPENING, (3, 1))
    assert money.ranked_by == "cubeful"
    ranked = rank_plays(Position.initial(), 3, 1, plies=2, cube=CubeContext.money())
    assert [(p.play, p.cubeful, p.equity) for p in money.plays] == [
        (r.play.notation, r.cubeful, r.equity) for r in ranked]
    vals = [p.cubeful for p in money.plays]
    assert _deeper_first_then_best(money.plays, vals)
    assert [p.loss for p in money.plays] == [vals[0] - v for v in vals]
    # at 4-2 to 9, the opponent owning a 2-cube: ranked by MWC, EMG beside it
    match = hint(OPENING + ":QYkqASAAIAAA")
    assert match.ranked_by == "mwc"
    ctx = CubeContext.match(9, 4, 2, cube=2, owner="opp")
    ranked = rank_plays(Position.initial(), 5, 2, plies=2, cube=ctx)
    assert [(p.play, p.mwc, p.cubeful) for p in match.plays] == [
        (r.play.notation, r.mwc, r.cubeful) for r in ranked]
    mwcs = [p.mwc for p in match.plays]
    assert _deeper_first_then_best(match.plays, mwcs) and 0 < min(mwcs) <= mwcs[0] < 1
    assert [p.loss for p in match.plays] == [mwcs[0] - m for m in mwcs]
    doc = match.to_dict()
    assert doc["ranked_by"] == "mwc" and {"mwc", "emg", "equity"} <= set(doc["plays"][0])


def test_ply_and_top():
    h0 = hint(OPENING, (6, 5), ply=0, top=3)
    assert h0.ply == 0 and len(h0.plays) == 3 and all(p.ply == 0 for p in h0.plays)
    assert h0.plays[0].play == "24/13"
    with pytest.raises(BgfastError):
        hint(OPENING, (3, 1), ply=3)


def test_no_roll_gives_the_cube_decision_at_the_ids_score_and_cube():
    h = hint(XGID_MATCH)
    assert h.plays is None and h.dice is None
    dec = h.cube
    assert dec.match is not None and dec.match.length == 9
    assert (dec.match.score_me, dec.match.score_opp) == (2, 4)
    assert dec.cube == 2 and dec.owner == "me" and dec.redouble
    assert h.context == CubeContext.match(9, 2, 4, cube=2, owner="me")
    money = hint(OPENING)
    assert money.cube.match is None and money.cube.cube == 1 and money.cube.owner == "centre"


def test_the_ids_roll_is_used_and_a_given_roll_replaces_it():
    # gnubg ID whose Match ID holds a 5-2 for the player on roll
    h = hint(OPENING + ":QYkqASAAIAAA")
    assert h.dice == (5, 2) and h.plays and h.context.score.length == 9
    assert h.plays[0].play == hint(OPENING, (5, 2), context=h.context).plays[0].play
    assert hint(OPENING + ":QYkqASAAIAAA", (6, 6)).dice == (6, 6)


def test_exact_bearoff_positions_use_the_table():
    from bgfast import bearoff

    h = hint(Position.from_position_id("d7cNAADfexAgAA"), (6, 6))   # one legal play
    assert [p.play for p in h.plays] == ["16/off 8/2"]
    small = Position(_bearoff_board())
    c = hint(small)
    assert c.source == "exact"
    assert c.cube.probs == pytest.approx(tuple(bearoff.get(small).probs), abs=1e-12)


def _bearoff_board():
    b = np.zeros((2, 25), dtype=np.uint8)
    b[0, 0], b[0, 1] = 2, 1        # opponent: 3 checkers on its 1 and 2 points
    b[1, 0], b[1, 5] = 1, 1        # on roll: its 1 and 6 points
    return b


def test_rollout_is_seeded_and_orders_the_plays_by_its_result():
    a = hint(OPENING, (3, 1), ply=0, rollout=72, rollout_plays=3, seed=5, cubeless=True)
    b = hint(OPENING, (3, 1), ply=0, rollout=72, rollout_plays=3, seed=5, cubeless=True)
    assert a.to_dict() == b.to_dict()
    rolled = [p for p in a.plays if p.rollout_equity is not None]
    assert len(rolled) == 3
    assert [p.rollout_equity for p in rolled] == sorted((p.rollout_equity for p in rolled), reverse=True)
    assert rolled[0].loss == 0.0 and all(p.rollout_stderr > 0 for p in rolled)
    assert a.rollout["trials"] == 72 and a.rollout["policy"] == "net"
    c = hint(OPENING, rollout=72, seed=5)
    assert c.rollout["games"] == 72 and "rollout" in c.source


def test_game_over_and_bad_input_are_refused():
    over = np.zeros((2, 25), dtype=np.uint8)
    over[0, 0] = 15
    with pytest.raises(BgfastError, match="over"):
        hint(Position(over))
    with pytest.raises(ValueError):
        hint("not-an-id", (3, 1))
    with pytest.raises(ValueError):
        hint(OPENING, (7, 1))


def test_cli_text_and_json():
    r = CliRunner().invoke(main, ["hint", OPENING, "31"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert "roll 3-1" in lines[0] and "2-ply, by cubeful equity" in lines[1]
    assert lines[3].split()[:3] == ["1", "8/5", "6/5"]
    assert len(lines) == 3 + 16
    r = CliRunner().invoke(main, ["hint", XGID_MATCH, "--json", "--ply", "0"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["cube"]["cube"] == 2 and doc["context"] == "2-4 to 9, cube 2 (me)"
    r = CliRunner().invoke(main, ["hint", OPENING, "3-1", "--json", "--top", "2"])
    doc = json.loads(r.output)
    assert [p["rank"] for p in doc["plays"]] == [1, 2] and doc["ranked_by"] == "cubeful"
    r = CliRunner().invoke(main, ["hint", OPENING, "31", "--json", "--cubeless"])
    assert json.loads(r.output)["ranked_by"] == "cubeless"


def test_cli_errors_are_one_line():
    for args in (["hint", "garbage", "31"], ["hint", OPENING, "71"], ["hint", OPENING, "31", "--ply", "5"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, (args, r.output)
        assert len(r.output.strip().splitlines()) == 1 and r.output.startswith("Error")
