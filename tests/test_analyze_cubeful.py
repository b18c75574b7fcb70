"""Cubeful, score-aware analysis: checker rows ranked at the line's cube and
score, cube rows by the n-ply cubeful search, --cubeless, the run record,
and match analysis in EMG with gnubg's error rates."""
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import _cube
from bgfast.analyze import (AnalysisSettings, _scalar_row, analyze_match, format_row,
                            read_records, run, summarize)
from bgfast.cli import main
from bgfast.cube import CubeContext, decide_cube
from bgfast.evaluate import evaluate_cube, evaluate_ply, rank_plays, rank_plays_batch
from bgfast.formats import CubeOwner, MatchState
from bgfast.position import Position, PositionClass, classify_boards

from corpus import self_play_positions

#: Scores where the score changes the best play: double match point (no
#: gammons count), the Crawford game for the trailer (gammons count double:
#: gammon-go) and for the leader (gammon-save), each 5-point matches.
SCORES = {"dmp": dict(score=(4, 4)),
          "gammon_go": dict(score=(2, 4), crawford=True),
          "gammon_save": dict(score=(4, 2), crawford=True)}


def rows_of(lines, **kw):
    out = io.StringIO()
    run(lines, stream=out, **kw)
    return [json.loads(x) for x in out.getvalue().splitlines()]


def reference(lines, fmt, settings):
    """The rows of each line alone (parsed in Python, a block of one)."""
    return "".join(format_row(_scalar_row(n, text, settings), fmt)
                   for n, text in read_records(lines))


@pytest.fixture(scope="module")
def plays():
    """Contact positions with the roll played there (player 0 on roll)."""
    boards, dice = self_play_positions(900, seed=41)
    keep = classify_boards(boards) == PositionClass.CONTACT
    return boards[keep][:400], dice[keep][:400]


def _match_lines(boards, dice, length=5, **state):
    mid = MatchState(match_length=length, player_on_roll=0, **state).match_id()
    return [f"{Position(b).position_id()}:{mid} {d[0]}{d[1]}\n" for b, d in zip(boards, dice)]


@pytest.mark.parametrize("name", sorted(SCORES))
def test_score_changes_the_best_play_and_rows_follow_rank_plays(plays, name):
    """At DMP, gammon-go and gammon-save the cubeful best play differs from
    the cubeless one on some positions; every row's best play and values
    are rank_plays(cube=the line's context), its cubeless equity beside."""
    boards, dice = plays
    state = MatchState(match_length=5, player_on_roll=0, **SCORES[name])
    ctx = CubeContext.from_match_state(state)
    lines = _match_lines(boards, dice, **SCORES[name])
    settings = AnalysisSettings(ply=0)
    cubeful = rows_of(lines, settings=settings, chunk_size=128)
    cubeless = rows_of(lines, settings=AnalysisSettings(ply=0, cubeless=True), chunk_size=128)
    batch = rank_plays_batch(boards, dice.astype(np.int64), plies=0, cube=ctx)
    differ = 0
    for i, (row, old) in enumerate(zip(cubeful, cubeless)):
        want = batch.ranked(i, Position(boards[i]), top=5)
        assert row["valuation"] == "cubeful" and old["valuation"] == "cubeless"
        if not want:                            # the roll cannot be played
            assert row["best_play"] == "" and row["mwc"] is None
            continue
        assert row["best_play"] == want[0].play.notation
        assert row["mwc"] == round(want[0].mwc, 6) and row["emg"] == round(want[0].cubeful, 6)
        assert row["cubeful_equity"] is None
        assert [p["play"] for p in row["plays"]] == [r.play.notation for r in want]
        assert [p["equity"] for p in row["plays"]] == [round(r.equity, 6) for r in want]
        assert [p["mwc"] for p in row["plays"]] == [round(r.mwc, 6) for r in want]
        assert row["best_equity"] == round(want[0].equity, 6)
        assert (old["mwc"], old["emg"], old["cubeful_equity"]) == (None, None, None)
        differ += row["best_play"] != old["best_play"]
    assert differ >= 3, differ
    # each line alone gives the same rows
    out = io.StringIO()
    run(lines[:120], stream=out, settings=settings, chunk_size=64)
    assert out.getvalue() == reference(lines[:120], "jsonl", settings)


def test_money_rows_rank_by_cubeful_equity(plays):
    """A Position ID alone is money with a centred cube; an owned cube
    changes the values; the CSV lists each play's cubeful equity."""
    boards, dice = plays
    lines = [f"{Position(b).position_id()} {d[0]}{d[1]}\n" for b, d in zip(boards[:60], dice[:60])]
    owned = MatchState(cube_value=2, cube_owner=CubeOwner(0), player_on_roll=0).match_id()
    lines_owned = [f"{t.split()[0]}:{owned} {t.split()[1]}\n" for t in lines]
    rows = rows_of(lines + lines_owned, settings=AnalysisSettings(ply=0))
    for i, row in enumerate(rows):
        ctx = CubeContext.money() if i < 60 else CubeContext.money(2, "me")
        b, d = boards[i % 60], dice[i % 60]
        want = rank_plays(Position(b), int(d[0]), int(d[1]), cube=ctx)
        if not want:
            continue
        assert row["cubeful_equity"] == round(want[0].cubeful, 6)
        assert row["mwc"] is None and row["emg"] is None
        assert [p["cubeful_equity"] for p in row["plays"]] == [round(r.cubeful, 6)
                                                              for r in want[:5]]
        assert [p["loss"] for p in row["plays"]] == [round(want[0].cubeful - r.cubeful, 6)
                                                    for r in want[:5]]
    settings = AnalysisSettings(ply=0)
    out = io.StringIO()
    run(lines + lines_owned, stream=out, fmt="csv", settings=settings, chunk_size=32)
    from bgfast.analyze import csv_header
    assert out.getvalue() == csv_header() + reference(lines + lines_owned, "csv", settings)
    first = out.getvalue().splitlines()[1]
    assert f"={rows[0]['plays'][0]['cubeful_equity']:+.4f}" in first


def test_cube_rows_above_0_ply_come_from_the_cubeful_search(plays):
    """--ply 1: cube rows by evaluate_cube (the n-ply cubeful search), the
    probabilities those of the search; bear-offs from the exact table;
    --cubeless: Janowski's model on the 1-ply probabilities; blocks ==
    each line alone."""
    boards, _dice = plays
    mid = MatchState(match_length=7, score=(3, 5), player_on_roll=0).match_id()
    sample = boards[:12]
    lines = ([f"{Position(b).position_id()}\n" for b in sample[:6]]
             + [f"{Position(b).position_id()}:{mid}\n" for b in sample[6:]])
    bear = np.zeros((2, 25), np.uint8)
    bear[1, [0, 1, 2]] = [2, 1, 1]
    bear[0, [3, 4]] = [2, 2]
    lines.append(Position(bear).position_id() + "\n")
    settings = AnalysisSettings(ply=1)
    rows = rows_of(lines, settings=settings)
    for row, line in zip(rows, lines):
        pos = Position.from_position_id(line.split(":")[0].strip())
        ctx = CubeContext.money() if ":" not in line else CubeContext.from_match_state(
            MatchState.from_match_id(mid))
        if pos.classify() == PositionClass.BEAROFF:
            assert row["source"] == "exact"
            continue
        dec = evaluate_cube(pos, ctx, plies=1)
        assert row["no_double"] == round(dec.no_double, 6)
        assert row["double_take"] == round(dec.double_take, 6)
        assert row["cube_action"] == dec.action_text
        assert row["win"] == round(dec.probs[0], 6)
        if ctx.is_money:
            assert row["cubeful_equity"] == round(dec.best_equity, 6)
        else:
            assert row["emg"] == round(dec.best_equity, 6)
    out = io.StringIO()
    run(lines, stream=out, settings=settings, chunk_size=4)
    assert out.getvalue() == reference(lines, "jsonl", settings)
    # cubeless: Janowski on the 1-ply probabilities, no cubeful values
    old = rows_of(lines[:6], settings=AnalysisSettings(ply=1, cubeless=True))
    probs = evaluate_ply(sample[:6], 1)
    for row, b, p in zip(old, sample[:6], probs):
        dec = decide_cube(Position(b), CubeContext.money(), p)
        assert row["no_double"] == round(dec.no_double, 6) and row["win"] == round(p[0], 6)
        assert row["valuation"] == "cubeless" and row["cubeful_equity"] is None


def test_cubeless_rows_are_the_cubeless_analysis(plays):
    """--cubeless: plays ranked by cubeless equity (rank_plays without a
    cube), losses in that equity, no cubeful values."""
    boards, dice = plays
    lines = _match_lines(boards[:40], dice[:40], **SCORES["dmp"])
    for row, b, d in zip(rows_of(lines, settings=AnalysisSettings(ply=0, cubeless=True)),
                         boards, dice):
        want = rank_plays(Position(b), int(d[0]), int(d[1]))
        assert row["best_play"] == (want[0].play.notation if want else "")
        assert row["plays"] == [{"play": r.play.notation, "equity": round(r.equity, 6),
                                 "loss": round(want[0].equity - r.equity, 6)} for r in want[:5]]


def test_resume_refuses_another_cubeless_setting(tmp_path):
    """The run record holds --cubeless; a record without it (written before
    cubeful analysis) is a cubeless run's."""
    src = tmp_path / "in.txt"
    src.write_text("4HPwATDgc/ABMA 31\n4HPwATDgc/ABMA\n")
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    base = ["analyze", str(src), "-o", str(out), "--ply", "0", "-j", "1"]
    assert runner.invoke(main, base + ["--cubeless"]).exit_code == 0
    record = json.loads((tmp_path / "out.jsonl.resume.json").read_text())
    assert record["cubeless"] is True
    before = out.read_bytes()
    r = runner.invoke(main, base + ["--resume"])
    assert r.exit_code == 2 and "written with --cubeless, and this run is without it" in r.stderr
    assert out.read_bytes() == before
    assert runner.invoke(main, base + ["--cubeless", "--resume"]).exit_code == 0
    del record["cubeless"]                      # an older run record
    (tmp_path / "out.jsonl.resume.json").write_text(json.dumps(record))
    assert runner.invoke(main, base + ["--resume"]).exit_code == 2
    assert runner.invoke(main, base + ["--cubeless", "--resume"]).exit_code == 0


@pytest.fixture(scope="module")
def match5():
    from bgfast.game import Match
    from bgfast.players import Beginner, Heuristic, play_match

    return play_match(Match(5, seed=7, names=("Heuristic", "Beginner")),
                      (Heuristic(), Beginner(seed=7)))


def test_match_analysis_in_emg_with_gnubg_rates(match5, tmp_path):
    """Every decision's loss is in EMG at its own score and cube: for a
    checker play, its MWC loss normalised by the MWCs of winning and losing
    the cube's points; the summary's mEMG rates are gnubg's (checker per
    unforced play, cube per close or actual decision, overall per both);
    jobs 1 and 2 give the same rows."""
    from bgfast import matfile
    from bgfast.met import get_table

    matfile.dump(match5, tmp_path / "m.mat")
    match = matfile.load(tmp_path / "m.mat")
    settings = AnalysisSettings(ply=0)
    rows = list(analyze_match(match, settings=settings))
    assert rows == list(analyze_match(match, settings=settings, jobs=2))
    met = get_table()
    checked = 0
    for r in rows:
        if r["kind"] == "forced":
            continue
        assert r["valuation"] == "cubeful" and r["loss"] >= 0 and r["mwc_loss"] >= 0
        if r["kind"] != "checker" or r["mwc_loss"] < 1e-3:
            continue
        state = MatchState.from_match_id(r["match_id"])
        params = np.array([CubeContext.from_match_state(state).kernel_row()], dtype=np.int64)
        _can, win, lose = _cube.context_values(params, np.ascontiguousarray(met.pre),
                                               np.ascontiguousarray(met.post))
        assert r["loss"] == pytest.approx(2 * r["mwc_loss"] / (win[0] - lose[0]), abs=2e-5)
        checked += 1
    assert checked >= 20
    s = summarize(rows, match.names)["players"]
    for p in (0, 1):
        mine = [r for r in rows if r["player"] == p]
        chk = [r for r in mine if r["kind"] == "checker"]
        cube = [r for r in mine if r["kind"] in ("cube", "take")]
        close = [r for r in cube if r["close"]]
        assert s[p]["checker_decisions"] == len(chk) and s[p]["cube_decisions"] == len(close)
        assert s[p]["checker_error_rate_memg"] == pytest.approx(
            1000 * sum(r["loss"] for r in chk) / len(chk), abs=0.01)
        total = sum(r["loss"] for r in mine)
        assert s[p]["error_rate_memg"] == pytest.approx(1000 * total / (len(chk) + len(close)),
                                                        abs=0.01)
        mwc = sum(r["mwc_loss"] for r in mine if r["mwc_loss"] is not None)
        assert s[p]["total_mwc_loss"] == pytest.approx(mwc, abs=1e-5)
    # random play errs more than the heuristic player
    assert s[1]["checker_error_rate_memg"] > s[0]["checker_error_rate_memg"]
    # cubeless: the cubeless analysis, no MWC
    old = list(analyze_match(match, settings=AnalysisSettings(ply=0, cubeless=True)))
    assert all(r["valuation"] == "cubeless" for r in old)
    assert all(r["mwc_loss"] is None for r in old if r["kind"] == "checker")
    assert any(a["best"] != b["best"] for a, b in zip(rows, old) if a["kind"] == "checker")


def test_analyze_match_cli_reports_memg_rates(match5, tmp_path):
    from bgfast import matfile

    matfile.dump(match5, tmp_path / "m.mat")
    r = CliRunner().invoke(main, ["analyze-match", str(tmp_path / "m.mat"), "--ply", "0",
                                  "-j", "1"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.count("error rate (mEMG)") == 2 and "checker" in r.stdout


@pytest.mark.parametrize("first", [False, True])
def test_luck_averages_to_zero_over_the_rolls(plays, first):
    """The luck of a roll is its best play's value against the average
    roll: over the 21 rolls (the 15 non-doubles of a game's first move),
    weighted by their chances, it averages to zero; a roll that cannot be
    played counts the position with the turn passed."""
    from bgfast.analyze import _luck
    from bgfast.movegen import ALL_ROLLS, ROLL_WEIGHTS

    boards, _dice = plays
    settings = AnalysisSettings(ply=0)
    closed = np.zeros((2, 25), np.uint8)          # on roll: two on the bar against a closed board
    closed[1, 24], closed[1, 12] = 2, 13
    closed[0, :6], closed[0, 12] = 2, 3
    for b, cube in ((boards[0], CubeContext.money()), (boards[1], None),
                    (boards[2], CubeContext.match(5, 1, 3)), (closed, CubeContext.money())):
        pos = Position(b)
        luck = np.array([_luck(pos, tuple(r), cube, settings, first) for r in ALL_ROLLS])
        w = ROLL_WEIGHTS * (ALL_ROLLS[:, 0] != ALL_ROLLS[:, 1]) if first else ROLL_WEIGHTS
        assert abs((luck * w).sum() / w.sum()) < 1e-9
        assert luck.max() > 0 > luck.min() or np.allclose(luck, 0)
    # a closed board: every roll dances, so none is luckier than another
    assert np.allclose(luck, 0, atol=1e-12)


def test_match_summary_reports_luck(match5, tmp_path):
    from bgfast import matfile

    matfile.dump(match5, tmp_path / "m.mat")
    match = matfile.load(tmp_path / "m.mat")
    rows = list(analyze_match(match, settings=AnalysisSettings(ply=0)))
    s = summarize(rows, match.names)["players"]
    for p in (0, 1):
        moves = [r for r in rows if r["player"] == p and r["kind"] in ("checker", "forced")]
        assert all(r["luck"] is not None for r in moves) and s[p]["moves"] == len(moves)
        assert s[p]["luck_rate_memg"] == pytest.approx(
            1000 * sum(r["luck"] for r in moves) / len(moves), abs=0.01)
    forced = [r for r in rows if r["kind"] == "forced"]
    assert forced and all(r["loss"] == 0 and not r["close"] for r in forced)
