"""Batch analysis: known answers, streaming order, bad lines, resume, Ray."""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import bearoff
from bgfast.analyze import (AnalysisSettings, analyze_match, analyze_record, parse_record,
                            read_records, resume_point, run, summarize)
from bgfast.cli import main
from bgfast.errors import InvalidRecordError
from bgfast.movegen import legal_plays
from bgfast.position import Position

from corpus import random_boards, self_play_positions
from procs import run_piped, running


def rows_of(lines, **kw):
    import io
    out = io.StringIO()
    run(lines, stream=out, **kw)
    return [json.loads(x) for x in out.getvalue().splitlines()]


def small_bearoffs(n, seed):
    """Random positions with at most 6 checkers a side in the home boards."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        b = np.zeros((2, 25), dtype=np.uint8)
        for row in (0, 1):
            for _ in range(rng.integers(1, 7)):
                b[row][rng.integers(0, 6)] += 1
        out.append(b)
    return out


def test_bearoff_rows_are_exact():
    boards = small_bearoffs(40, seed=3)
    lines = [Position(b).position_id() + "\n" for b in boards]
    rows = rows_of(lines)
    for b, row in zip(boards, rows):
        exact = bearoff.probe(Position(b))
        assert row["source"] == "exact"
        assert row["win"] == pytest.approx(exact.probs[0], abs=1e-6)
        assert row["equity"] == pytest.approx(exact.equity, abs=1e-6)
        # the money cube decision uses the table's exact cubeful equities
        assert row["no_double"] == pytest.approx(exact.cubeful_no_double["centred"], abs=1e-6)
        assert row["double_take"] == pytest.approx(2 * exact.cubeful_no_double["opponent_owned"],
                                                   abs=1e-6)
        assert row["epc_on_roll"] is not None and row["epc_opponent"] is not None


def test_forced_play_has_one_play_and_no_loss():
    boards, dice = self_play_positions(3000, seed=21)
    forced = [(b, d) for b, d in zip(boards, dice)
              if len(legal_plays(b, int(d[0]), int(d[1]))) == 1][:10]
    assert len(forced) >= 5
    lines = [f"{Position(b).position_id()} {d[0]}{d[1]}\n" for b, d in forced]
    for (b, d), row in zip(forced, rows_of(lines)):
        only = legal_plays(b, int(d[0]), int(d[1]))[0]
        assert row["best_play"] == only.notation
        assert [p["loss"] for p in row["plays"]] == [0.0]


def test_plays_are_ranked_with_losses():
    row = rows_of(["4HPwATDgc/ABMA 31\n"], settings=AnalysisSettings(top=4))[0]
    assert len(row["plays"]) == 4 and row["plays"][0]["loss"] == 0.0
    losses = [p["loss"] for p in row["plays"]]
    assert losses == sorted(losses) and losses[-1] > 0


def test_input_forms_and_context():
    r = parse_record("4HPwATDgc/ABMA QYkqASAAIAAA", 1)
    assert r.dice == (5, 2) and r.context.score.length == 9
    assert (r.context.score.score_me, r.context.score.score_opp, r.context.owner) == (4, 2, "opp")
    r = parse_record("XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:1:0:5:10", 2)
    assert r.dice is None and r.context.cube == 2 and r.context.owner == "me"
    assert parse_record("4HPwATDgc/ABMA 3-1").dice == (3, 1)
    row = analyze_record(parse_record("4HPwATDgc/ABMA QYkqASAAIAAA"), AnalysisSettings())
    assert row["dice"] == "52" and "9" in row["context"]


def test_bad_lines_are_reported_and_the_rest_runs():
    rows = rows_of(["4HPwATDgc/ABMA 31\n", "garbage\n", "\n", "# note\n",
                    "4HPwATDgc/ABMA 71\n", "4HPwATDgc/ABMA 31 extra\n", "4HPwATDgc/ABMA\n"])
    assert [r["line"] for r in rows] == [1, 2, 5, 6, 7]
    assert ["error" in r for r in rows] == [False, True, True, True, False]
    assert "14 characters" in rows[1]["error"] and "die" in rows[2]["error"]


@pytest.mark.parametrize("k, kept", [
    (0, [1, 2, 5, 6]), (1, [2, 5, 6]), (2, [5, 6]), (4, [5, 6]), (5, [6]), (6, []), (9, [])])
def test_read_records_skips_exactly_lines_1_to_k(k, kept):
    """Line 3 is blank and line 4 a comment; ``start_after=k`` skips lines 1..k."""
    lines = ["a\n", "  b  \n", "\n", "# c\n", "d\n", "e"]
    got = list(read_records(lines, start_after=k))
    assert [n for n, _ in got] == kept
    assert [t for _, t in got] == ["abde"[[1, 2, 5, 6].index(n)] for n in kept]


@pytest.mark.parametrize("k", [0, 1, 3, 7, 8])
def test_a_resumed_run_goes_on_at_line_k_plus_1(k, tmp_path):
    """With the rows of lines 1..k on file (and their run record), a resume
    analyses lines k + 1 .. n, numbered from k + 1 (line 3 a comment)."""
    lines = [f"{Position(b).position_id()}\n" for b in small_bearoffs(7, seed=9)]
    lines[2] = "# a comment\n"
    out = tmp_path / "out.jsonl"
    run(lines[:k], output=str(out))
    counts = run(lines, output=str(out), resume=True)
    rows = [1, 2, 4, 5, 6, 7]
    assert counts["resumed_after_line"] == max([n for n in rows if n <= k], default=0)
    assert counts["rows"] == len([n for n in rows if n > k])
    assert [json.loads(x)["line"] for x in out.read_text().splitlines()] == [1, 2, 4, 5, 6, 7]


def test_order_kept_with_several_workers():
    boards, dice = self_play_positions(60, seed=8)
    lines = [f"{Position(b).position_id()} {d[0]}{d[1]}\n" for b, d in zip(boards, dice)]
    one = rows_of(lines, jobs=1, chunk_size=4)
    two = rows_of(lines, jobs=2, chunk_size=4)
    assert one == two and [r["line"] for r in two] == list(range(1, 61))


def test_csv_and_html_outputs(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("4HPwATDgc/ABMA 31\nAwAA4AYAAAAAAA\nbad\n")
    runner = CliRunner()
    out = tmp_path / "out.csv"
    r = runner.invoke(main, ["analyze", str(src), "-o", str(out), "--format", "csv", "-j", "1"])
    assert r.exit_code == 1 and "1 failed" in r.stderr
    import csv
    rows = list(csv.DictReader(out.open()))
    assert [x["line"] for x in rows] == ["1", "2", "3"] and rows[1]["source"] == "exact"
    html = tmp_path / "out.html"
    r = runner.invoke(main, ["analyze", str(src), "-o", str(html), "--format", "html", "-j", "1"])
    page = html.read_text()
    assert page.count("<svg") == 2 and "8/5 6/5" in page


def test_resume_cuts_a_torn_row_and_continues(tmp_path):
    lines = [f"{Position(b).position_id()}\n" for b in small_bearoffs(12, seed=5)]
    full = tmp_path / "full.jsonl"
    run(lines, output=str(full), fmt="jsonl")
    part = tmp_path / "part.jsonl"
    run(lines[:5], output=str(part), fmt="jsonl")
    with part.open("a") as f:
        f.write('{"line":6,"inp')                         # a torn row from a crash
    assert resume_point(str(part), "jsonl") == 5
    counts = run(lines, output=str(part), fmt="jsonl", resume=True)
    assert counts["rows"] == 7 and counts["resumed_after_line"] == 5
    assert part.read_text() == full.read_text()


@pytest.mark.parametrize("jobs", [1, 2])
def test_killed_run_resumes_without_duplicates(tmp_path, jobs):
    n = 30000                    # enough that the run cannot end between two polls
    boards, dice = self_play_positions(n, seed=13)
    src = tmp_path / "in.txt"
    src.write_text("".join(f"{Position(b).position_id()} {d[0]}{d[1]}\n"
                           for b, d in zip(boards, dice)))
    out = tmp_path / "out.csv"
    cmd = [sys.executable, "-m", "bgfast", "analyze", str(src), "--ply", "0", "-o", str(out),
           "--format", "csv", "-j", str(jobs)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        if out.exists() and out.read_text().count("\n") > 40:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    done = out.read_text().count("\n") - 1
    assert 0 < done < n, "the run should have been killed midway"
    deadline = time.time() + 30                # its workers end too (their task pipe closed)
    while running(str(src)) and time.time() < deadline:
        time.sleep(0.05)
    assert not running(str(src))
    r = subprocess.run(cmd + ["--resume"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import csv
    rows = list(csv.DictReader(out.open()))
    assert [int(x["line"]) for x in rows] == list(range(1, n + 1))
    whole = tmp_path / "whole.csv"
    subprocess.run(cmd[:7] + ["-o", str(whole), "--format", "csv", "-j", "1"], check=True,
                   capture_output=True)
    assert out.read_text() == whole.read_text()


def test_resume_needs_a_file_and_a_bgfast_header(tmp_path):
    from bgfast.errors import BgfastError
    with pytest.raises(BgfastError, match="output file"):
        run(["4HPwATDgc/ABMA\n"], resume=True)
    other = tmp_path / "x.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(BgfastError, match="header"):
        run(["4HPwATDgc/ABMA\n"], output=str(other), fmt="csv", resume=True)


def test_resume_refuses_a_file_that_is_not_bgfast_output_untouched(tmp_path):
    """D3: the file is checked before a torn last line is cut."""
    src = tmp_path / "one.txt"
    src.write_text("4HPwATDgc/ABMA 31\n")
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"line 1\nimportant last line")
    r = CliRunner().invoke(main, ["analyze", str(src), "-o", str(notes), "--resume"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "not bgfast's" in r.stderr
    assert notes.read_bytes() == b"line 1\nimportant last line"
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "one.txt"]
    # bgfast's rows, then a last line that is not the start of a row
    out = tmp_path / "out.jsonl"
    run(["4HPwATDgc/ABMA 31\n"], output=str(out))
    data = out.read_bytes() + b"my own notes"
    out.write_bytes(data)
    with pytest.raises(InvalidRecordError, match="last line is not a bgfast row"):
        run(["4HPwATDgc/ABMA 31\n"], output=str(out), resume=True)
    assert out.read_bytes() == data
    # a CSV file with bgfast's header and a foreign row
    csv_out = tmp_path / "out.csv"
    run(["4HPwATDgc/ABMA 31\n"], output=str(csv_out), fmt="csv")
    data = csv_out.read_bytes() + b"x,y\n"
    csv_out.write_bytes(data)
    with pytest.raises(InvalidRecordError, match="not bgfast's CSV"):
        run(["4HPwATDgc/ABMA 31\n"], output=str(csv_out), fmt="csv", resume=True)
    assert csv_out.read_bytes() == data


def _out_files(tmp_path):
    return {f: (tmp_path / f).read_bytes() for f in sorted(os.listdir(tmp_path))
            if f.startswith("out")}


def test_resume_checks_the_input_and_the_settings(tmp_path):
    """D6: a resume with another input or other settings is refused with
    one line, the output and its run record untouched; the output files
    hold the rows only."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("4HPwATDgc/ABMA 31\n# a comment\nAwAA4AYAAAAAAA\n")
    b.write_text("4HPwATDgc/ABMA 52\n# a comment\nAwAA4AYAAAAAAA\n")
    runner = CliRunner()
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"out.{fmt}"
        base = ["-o", str(out), "--format", fmt, "-j", "1"]
        assert runner.invoke(main, ["analyze", str(a)] + base).exit_code == 0
        rows = out.read_text().splitlines()
        assert len(rows) == 2 + (fmt == "csv")                 # rows only (and the header)
        assert json.loads((tmp_path / f"out.{fmt}.resume.json").read_text())["lines"] == 3
        before = _out_files(tmp_path)
        for args, message in [
                ([str(b)], "the input is not the one it was written from"),
                ([str(a), "--ply", "0"], "written with --ply 1, not --ply 0"),
                ([str(a), "--top", "2"], "--top 5, not --top 2"),
                ([str(a), "--evaluator", "pubeval"], "--evaluator net, not --evaluator pubeval"),
                ([str(a), "--rollout", "36"], "--rollout 0, not --rollout 36"),
                ([str(a), "--seed", "2"], "--seed 1, not --seed 2"),
                ([str(a), "--cubeless"], "written without --cubeless, and this run is with it")]:
            r = runner.invoke(main, ["analyze"] + args + base + ["--resume"])
            assert r.exit_code == 2 and message in r.stderr, (args, r.stderr)
            assert r.stderr.count("\n") == 1 and _out_files(tmp_path) == before
        other = "csv" if fmt == "jsonl" else "jsonl"
        r = runner.invoke(main, ["analyze", str(a), "-o", str(out), "--format", other,
                                 "--resume"])
        assert r.exit_code == 2 and f"--format {fmt}, not --format {other}" in r.stderr
        # the same input resumes (nothing left to do); more lines continue it
        r = runner.invoke(main, ["analyze", str(a)] + base + ["--resume"])
        assert r.exit_code == 0 and "0 rows" in r.stderr and out.read_bytes() == before[out.name]
        longer = tmp_path / "longer.txt"
        longer.write_text(a.read_text() + "4HPwATDgc/ABMA 61\n")
        r = runner.invoke(main, ["analyze", str(longer)] + base + ["--resume"])
        assert r.exit_code == 0 and "1 rows" in r.stderr
        whole = tmp_path / f"whole.{fmt}"
        runner.invoke(main, ["analyze", str(longer), "-o", str(whole), "--format", fmt])
        assert out.read_bytes() == whole.read_bytes()


def test_resume_refuses_rows_its_record_does_not_cover(tmp_path):
    lines = [f"{Position(b).position_id()}\n" for b in small_bearoffs(6, seed=2)]
    out = tmp_path / "out.jsonl"
    run(lines[:3], output=str(out))
    run(lines, output=str(tmp_path / "other.jsonl"))
    data = (tmp_path / "other.jsonl").read_bytes()
    out.write_bytes(data)                                 # six rows, a record of three lines
    with pytest.raises(InvalidRecordError, match="rows past line 3"):
        run(lines, output=str(out), resume=True)
    assert out.read_bytes() == data
    (tmp_path / "out.jsonl.resume.json").write_text("[1, 2]")
    with pytest.raises(InvalidRecordError, match="not a bgfast run record"):
        run(lines, output=str(out), resume=True)


def test_resume_goes_on_after_the_rows_of_a_block_the_record_covers(tmp_path):
    """A kill after the run record of a block was written and before its
    rows were: the lines the record covers past the last row are analysed
    again, and the result is the uninterrupted run's."""
    lines = [f"{Position(b).position_id()}\n" for b in small_bearoffs(30, seed=4)]
    lines[12:12] = ["# a comment\n", "\n"]
    full = tmp_path / "full.jsonl"
    run(lines, output=str(full), chunk_size=8)
    rows = full.read_text().splitlines(keepends=True)
    out = tmp_path / "out.jsonl"
    out.write_text("".join(rows[:10]) + rows[10][:7])     # ten rows, and a torn one
    (tmp_path / "out.jsonl.resume.json").write_text(
        (tmp_path / "full.jsonl.resume.json").read_text())
    counts = run(lines, output=str(out), resume=True, chunk_size=8)
    assert counts["resumed_after_line"] == 10 and counts["rows"] == 20
    assert out.read_bytes() == full.read_bytes()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_bytes_that_are_not_utf8_give_an_error_row(tmp_path, fmt):
    """D5: the valid line gets its row, the bad one an error row."""
    src = tmp_path / "bad.txt"
    src.write_bytes(b"4HPwATDgc/ABMA 31\n\xff\n4HPwATDgc/ABMA \xc3\x28 52\n")
    for target in ("stdout", "file"):
        args = ["analyze", str(src), "--format", fmt, "-j", "1"]
        if target == "file":
            args += ["-o", str(tmp_path / f"out.{fmt}")]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 1 and "3 rows, 2 failed" in r.stderr
        text = r.stdout if target == "stdout" else (tmp_path / f"out.{fmt}").read_text()
        if fmt == "jsonl":
            rows = [json.loads(x) for x in text.splitlines()]
        else:
            import csv
            rows = list(csv.DictReader(text.splitlines()))
        assert rows[0]["best_play"] == "8/5 6/5" and not rows[0]["error"] if fmt == "csv" \
            else rows[0]["best_play"] == "8/5 6/5" and "error" not in rows[0]
        assert rows[1]["input"] == "\ufffd"
        assert rows[1]["error"] == "not UTF-8 text: byte 0xff at character 1"
        assert rows[2]["error"] == "not UTF-8 text: byte 0xc3 at character 16"


def test_a_huge_line_gives_a_short_error_row(tmp_path):
    """D8: the error row quotes 200 characters of the line and its length."""
    src = tmp_path / "big.txt"
    junk = "4HPwATDgc/ABMA " + "x" * 3_000_000
    src.write_text(f"4HPwATDgc/ABMA 31\n{junk}\n4HPwATDgc/ABMA 52 {'y' * 900}\n")
    r = CliRunner().invoke(main, ["analyze", str(src), "-j", "1"])
    assert r.exit_code == 1 and "3 rows, 2 failed" in r.stderr and len(r.stdout) < 5000
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert rows[1]["input"] == junk[:200] + "... (3,000,015 characters)"
    assert rows[1]["error"] == "line too long: 3,000,015 characters (at most 1,024)"
    # under the limit the line is read, and what the error quotes is cut
    assert rows[2]["input"] == f"4HPwATDgc/ABMA 52 {'y' * 900}"[:200] + "... (918 characters)"
    assert len(rows[2]["error"]) < 250 and rows[2]["error"].endswith("characters)")
    # lines given to the API as strings are cut the same way
    assert rows_of([f"{junk}\n"], jobs=1)[0]["error"] == rows[1]["error"]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "html"])
def test_output_paths_are_checked_before_the_work(tmp_path, fmt, monkeypatch):
    """D13, D5: a missing or unwritable directory, an empty path: one line,
    no work, nothing left behind."""
    import bgfast.analyze as an

    src = tmp_path / "one.txt"
    src.write_text("4HPwATDgc/ABMA 31\n")

    def no_work(*a, **k):
        raise AssertionError("the analysis started")

    monkeypatch.setattr(an, "_chunk_text", no_work)
    runner = CliRunner()
    for out, message in [(tmp_path / "missing" / "x.out", "does not exist"),
                         ("", "name given"), ("/proc/x.out", "no file can be created"),
                         (tmp_path, "directory")]:
        r = runner.invoke(main, ["analyze", str(src), "-o", str(out), "--format", fmt])
        assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert r.exception is None or isinstance(r.exception, SystemExit)
    assert sorted(os.listdir(tmp_path)) == ["one.txt"]
    mat = tmp_path / "m.mat"
    mat.write_text("")
    r = runner.invoke(main, ["analyze-match", str(mat), "-o", str(tmp_path / "no" / "x.csv")])
    assert r.exit_code == 2 and "does not exist" in r.stderr


def test_rollout_rows_leave_no_process_behind(tmp_path):
    """D12: the real CLI on a pipe returns, with no worker left (to stdout,
    and with -o)."""
    src = tmp_path / "two.txt"
    src.write_text("4HPwATDgc/ABMA\nAwAA4AYAAAAAAA 31\n")
    for extra in ([], ["-o", str(tmp_path / "out.jsonl")]):
        r = run_piped(["analyze", src, "--rollout", "36", "-j", "2"] + extra, timeout=120)
        assert r.returncode == 0, r.stderr
        assert b"2 rows, 0 failed" in r.stderr
        assert not running(str(src))
    rows = [json.loads(x) for x in r.stdout.splitlines() or
            (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [row["rollout"]["games"] for row in rows] == [36, 36]
    one = rows_of(src.read_text().splitlines(keepends=True),
                  settings=AnalysisSettings(rollout_games=36), jobs=1)
    assert [row["rollout"] for row in one] == [row["rollout"] for row in rows]


# ------------------------------------------------------------------ matches
@pytest.fixture(scope="module")
def bot_match():
    from bgfast.game import Match
    from bgfast.players import Beginner, Heuristic, play_match
    m = Match(5, seed=11, names=("Heuristic", "Beginner"))
    return play_match(m, (Heuristic(), Beginner(seed=3)))


def test_match_analysis_rows_and_summary(bot_match, tmp_path):
    from bgfast import matfile
    path = tmp_path / "m.mat"
    matfile.dump(bot_match, path)
    match = matfile.load(path)
    rows = list(analyze_match(match))
    assert rows and all(r["loss"] >= 0 for r in rows)
    checker = [r for r in rows if r["kind"] == "checker"]
    assert all(r["dice"] for r in checker)
    assert {r["player"] for r in rows} == {0, 1}
    s = summarize(rows, match.names)["players"]
    # random play loses far more equity than the heuristic player
    assert s[1]["checker_error_rate_memg"] > s[0]["checker_error_rate_memg"]
    assert rows == list(analyze_match(match, jobs=2))


def test_match_analysis_cube_rows_known_values(tmp_path):
    """Double/pass is worth +1 (per unit cube, a match's MWCs normalised
    between losing and winning the cube): a missed double in a pass position
    loses 1 - no double, and a proper no double loses nothing."""
    from bgfast import matfile
    from bgfast.game import Match
    from bgfast.players import Beginner, Heuristic, play_match

    # Beginner never doubles: its missed doubles, passes among them
    m = play_match(Match(5, seed=5, names=("Heuristic", "Beginner")),
                   (Heuristic(), Beginner(seed=5)))
    matfile.dump(m, tmp_path / "m.mat")
    rows = list(analyze_match(matfile.load(tmp_path / "m.mat")))
    nd_rows = [r for r in rows if r["kind"] == "cube" and r["played"] == "no double"]
    passes = [r for r in nd_rows if r["best"] in ("Double, pass", "Redouble, pass")]
    clear = [r for r in nd_rows if r["best"].startswith(("No double", "No redouble"))]
    assert len(passes) >= 3 and len(clear) >= 10
    for r in passes:
        assert r["equity_best"] == 1.0
        assert r["equity_played"] < 1.0
        assert r["loss"] == pytest.approx(1.0 - r["equity_played"], abs=2e-6)
    for r in clear:
        assert r["loss"] == 0.0 and r["flag"] == ""
        assert r["equity_best"] == r["equity_played"]


def test_match_analysis_wrong_doubles_and_a_wrong_pass():
    """A double right after the opening is a clear no double and a clear
    take: the doubler loses no double - double/take, the taker loses nothing
    and takes at minus the doubler's double/take; a pass is worth -1, so
    passing that take loses 1 + the take's equity."""
    from bgfast.game import Match

    m = Match(5, seed=1, names=("A", "B"))
    g = m.new_game()
    g.opening_roll((3, 1))
    g.play("8/5 6/5")
    g.double()                        # B doubles at once, A takes
    g.take()
    g.roll((6, 5))
    g.play("24/13")
    g.double()                        # A redoubles at once, B passes
    g.drop()
    rows = [r for r in analyze_match(m) if r["kind"] in ("cube", "take")]
    assert [(r["player"], r["kind"], r["played"], r["best"]) for r in rows] == [
        (1, "cube", "double", "No double, take"), (0, "take", "take", "take"),
        (0, "cube", "double", "No redouble, take"), (1, "take", "pass", "take")]
    double, take, redouble, drop = rows
    for r in (double, redouble):
        assert r["equity_best"] > r["equity_played"]
        assert r["loss"] == pytest.approx(r["equity_best"] - r["equity_played"], abs=2e-6)
    assert take["loss"] == 0.0 and take["flag"] == ""
    assert take["equity_played"] == take["equity_best"] == -double["equity_played"]
    assert drop["equity_played"] == -1.0
    assert drop["equity_best"] == -redouble["equity_played"]
    assert drop["loss"] == pytest.approx(1.0 + drop["equity_best"], abs=2e-6)


@pytest.mark.parametrize("loss, flag", [(0.0, ""), (0.039999, ""), (0.04, "doubtful"),
                                        (0.079999, "doubtful"), (0.08, "error"),
                                        (0.159999, "error"), (0.16, "blunder"), (1.5, "blunder")])
def test_flags_at_gnubgs_thresholds(loss, flag):
    """gnubg's defaults: doubtful from 0.04, error from 0.08, blunder from 0.16."""
    from bgfast.analyze import flag_of

    assert flag_of(loss) == flag


def test_summary_counts_take_decisions_as_cube_decisions():
    """gnubg's rates: checker play per unforced play, cube per close or
    actual cube decision (takes included), overall per both; the loss of a
    cube decision that is not close still counts in the totals."""
    rows = [{"player": 0, "kind": "checker", "loss": 0.1, "flag": "error", "close": True},
            {"player": 0, "kind": "cube", "loss": 0.2, "flag": "blunder", "close": True},
            {"player": 0, "kind": "take", "loss": 0.05, "flag": "doubtful", "close": True},
            {"player": 0, "kind": "cube", "loss": 0.0, "flag": "", "close": False},
            {"player": 1, "kind": "checker", "loss": 0.0, "flag": "", "close": True},
            {"player": 1, "kind": "checker", "loss": 0.03, "flag": "", "close": True},
            {"player": 1, "kind": "cube", "loss": 0.01, "flag": "", "close": False}]
    a, b = summarize(rows, ("A", "B"))["players"]
    assert (a["name"], a["checker_decisions"], a["cube_decisions"]) == ("A", 1, 2)
    assert a["checker_loss"] == 0.1 and a["cube_loss"] == 0.25 and a["total_loss"] == 0.35
    assert a["error_rate_memg"] == 116.67              # 1000 * 0.35 / 3
    assert a["checker_error_rate_memg"] == 100.0 and a["cube_error_rate_memg"] == 125.0
    assert (a["doubtful"], a["error"], a["blunder"]) == (1, 1, 1)
    assert (b["checker_decisions"], b["cube_decisions"], b["total_loss"]) == (2, 0, 0.04)
    assert b["error_rate_memg"] == 20.0 and b["checker_error_rate_memg"] == 15.0
    assert b["cube_error_rate_memg"] == 0.0            # no close cube decision
    assert (b["doubtful"], b["error"], b["blunder"]) == (0, 0, 0)
    assert "total_mwc_loss" not in a                   # money: no MWC


def test_analyze_match_cli(bot_match, tmp_path):
    from bgfast import matfile
    path = tmp_path / "m.mat"
    matfile.dump(bot_match, path)
    r = CliRunner().invoke(main, ["analyze-match", str(path), "--json", "-j", "1",
                                  "-o", str(tmp_path / "d.csv"), "--format", "csv"])
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["match"]["length"] == 5 and len(summary["players"]) == 2
    assert (tmp_path / "d.csv").read_text().startswith("game,decision,player")
    bad = tmp_path / "bad.mat"
    bad.write_text(" 5 point match\n\n Game 1\n A : 0   B : 0\n  1) 99: 13/8\n")
    r = CliRunner().invoke(main, ["analyze-match", str(bad)])
    assert r.exit_code == 2 and "line" in r.stderr.lower()


@pytest.mark.loopback
def test_ray_backend_matches_local():
    ray = pytest.importorskip("ray")
    lines = [f"{Position(b).position_id()}\n" for b in small_bearoffs(10, seed=9)]
    local = rows_of(lines)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = rows_of(lines, backend="ray", chunk_size=3)
    finally:
        ray.shutdown()
    assert remote == local


def test_match_luck_counts_every_roll_unplayable_ones_too(bot_match):
    """Each move of the match (each roll played, and each roll that cannot
    be played: the turn passes at once) has one row with its luck; a roll
    that cannot be played gives a forced row with no play."""
    from bgfast.game import Game

    rows = list(analyze_match(bot_match, settings=AnalysisSettings(ply=0)))
    moves, dances = 0, []
    for game in bot_match.games:
        replay = Game(game.rules, match_length=game.match_length, score=game.score,
                      crawford=game.crawford)
        for action in game.actions:
            moves += action.kind == "move"
            if action.kind == "roll" and not replay.position().legal_plays(*action.dice):
                dances.append((replay.position().position_id(),
                               f"{max(action.dice)}{min(action.dice)}"))
            replay.apply(action)
    assert dances, "the match has rolls that cannot be played"
    assert sum(r["luck"] is not None for r in rows) == moves
    danced = [r for r in rows if r["kind"] == "forced" and r["played"] == ""]
    assert [(r["position_id"], r["dice"]) for r in danced] == dances
