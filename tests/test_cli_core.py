"""The core commands through click's CliRunner."""
import json

import pytest
from click.testing import CliRunner

from bgfast.cli import main
from bgfast.position import Position

START = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args, input=None):
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)

    return invoke


def test_show_text_and_json(run):
    r = run("show", START)
    assert r.exit_code == 0 and "4HPwATDgc/ABMA" in r.stdout and "pips 167" in r.stdout
    r = run("show", START_XGID, "--json")
    data = json.loads(r.stdout)
    assert data["position_id"] == START and data["class"] == "contact"
    assert data["pips"] == {"on_roll": 167, "opponent": 167}


def test_show_svg_and_jupyter_repr(run):
    import xml.etree.ElementTree as ET
    r = run("show", START, "--svg")
    root = ET.fromstring(r.stdout)
    assert root.tag.endswith("svg")
    circles = [e for e in root.iter() if e.tag.endswith("circle")]
    assert len(circles) == 30                          # 15 + 15 checkers, no stack over 5
    assert Position.initial()._repr_svg_() == r.stdout.strip()
    assert run("show", START, "--svg", "--json").exit_code == 2


def test_pips(run):
    assert run("pips", START).stdout.strip() == "167 167"
    assert json.loads(run("pips", START, "--json").stdout)["difference"] == 0


def test_moves_text_and_json(run):
    r = run("moves", START, "31")
    assert r.exit_code == 0 and len(r.stdout.strip().splitlines()) == 16
    data = json.loads(run("moves", START, "3-1", "--json").stdout)
    assert data["position_id"] == START and data["dice"] == [3, 1]
    plays = {p["play"]: p["position_id"] for p in data["plays"]}
    assert len(plays) == 16 and "8/5 6/5" in plays
    # the resulting position has the opponent on roll
    after = Position.from_position_id(plays["8/5 6/5"])
    assert after.board[0][4] == 2 and after.board[1][5] == 5


def test_moves_no_legal_play(run):
    b = Position.initial().board.copy() * 0
    b[1][24] = 1                                       # my checker on the bar
    b[1][5] = 14
    b[0][0:6] = 2                                      # the opponent's home board is closed
    pid = Position(b).position_id()
    data = json.loads(run("moves", pid, "65", "--json").stdout)
    assert data["plays"] == []
    assert "turn is lost" in run("moves", pid, "65").stdout


def test_shots(run):
    assert run("shots", START).stdout.strip() == "0/36"
    b = Position.initial().board.copy()
    b[0] = 0
    b[0][17] = 1            # an opposing blot on my 7-point
    b[0][1] = 14            # the rest on its 2-point (my 23)
    # any 1 (8/7*) or 6 (13/7*): 20 rolls; 4-2, 3-3 and 2-2 from the 13: 4 more
    data = json.loads(run("shots", Position(b).position_id(), "--json").stdout)
    assert data["shots"] == 24 and data["of"] == 36


def test_batch_moves_jsonl_with_bad_lines(run, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text(f"{START} 31\nnot-an-id 31\n{START} 77\n{START_XGID} 66\n# comment\n\n{START} 21\n")
    r = run("moves", "--input", str(f), "--json")
    assert r.exit_code == 1
    lines = [json.loads(x) for x in r.stdout.strip().splitlines()]
    assert [x.get("line") for x in lines] == [None, 2, 3, None, None]
    assert "14 characters" in lines[1]["error"] and "die" in lines[2]["error"]
    assert len(lines[0]["plays"]) == 16 and lines[3]["dice"] == [6, 6]
    assert "2 line(s) failed" in r.stderr


def test_batch_moves_survive_bytes_that_are_not_utf8_and_huge_lines(run, tmp_path):
    """D5, D8: the valid lines give their plays, the unreadable ones an
    error object each (from a file and from stdin); nothing quotes a huge
    line whole."""
    data = (f"{START} 31\n".encode() + b"\xff\n" + b"x" * 2_000_000 + b"\n"
            + f"{START} 52 {'y' * 500}\n{START} 21\n".encode())
    import subprocess

    from procs import ROOT, bgfast, env

    f = tmp_path / "in.txt"
    f.write_bytes(data)
    # from a file; and from stdin, which click's test runner decodes itself: a real process
    piped = subprocess.run(bgfast("moves", "--input", "-", "--json"), input=data, cwd=ROOT,
                           env=env(), capture_output=True)
    assert piped.returncode == 1
    r = run("moves", "--input", str(f), "--json")
    assert r.exit_code == 1
    for out, err in ((r.stdout, r.stderr), (piped.stdout.decode(), piped.stderr.decode())):
        assert "3 line(s) failed" in err
        objs = [json.loads(x) for x in out.splitlines()]
        assert len(out) < 10_000 and [o.get("line") for o in objs] == [None, 2, 3, 4, None]
        assert objs[0]["dice"] == [3, 1] and objs[4]["dice"] == [2, 1]
        assert objs[1]["error"] == "not UTF-8 text: byte 0xff at character 1"
        assert objs[2]["error"] == "line too long: 2,000,000 characters (at most 1,024)"
        assert "fields" in objs[3]["error"]


def test_batch_from_stdin_all_good(run):
    r = run("moves", "--input", "-", "--json", input=f"{START} 31\n{START} 52\n")
    assert r.exit_code == 0 and len(r.stdout.strip().splitlines()) == 2


@pytest.mark.parametrize("args, message", [
    (["moves", "4HPwATDgc/ABM", "31"], "14 characters"),
    (["moves", START, "71"], "1..6"),
    (["moves", START], "required"),
    (["show", "XGID=bad"], "XGID"),
    (["nonsense"], "No such command"),
])
def test_usage_errors_are_one_line_exit_2(run, args, message):
    r = run(*args)
    assert r.exit_code == 2
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error:") and message in err[0]
    assert "Traceback" not in r.stderr


def test_python_dash_m(tmp_path):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "bgfast", "pips", START],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "167 167"


# An XGID at 2-4 to 9 with the cube at 2 on the
# bottom (on roll), the same with dice 52, and a gnubg ID (4-2 to 9, dice 52).
XGID_2_4 = "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:9:10"
XGID_52 = "XGID=-b----E-C---eE---c-e----B-:1:1:1:52:2:4:0:9:10"
GNUBG_52 = "4HPwATDgc/ABMA:QYkqASAAIAAA"
FORMS = [START, START_XGID, XGID_2_4, XGID_52, GNUBG_52]


@pytest.mark.parametrize("xgid", [XGID_2_4, XGID_52, START_XGID,
                                  "XGID=-b----E-C---eE---c-e----B-:2:-1:-1:D:3:1:0:7:8",
                                  "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10"])
def test_show_writes_the_xgid_back_with_its_context(run, xgid):
    r = run("show", xgid)
    assert r.exit_code == 0, r.output
    assert f" XGID: {xgid}" in r.stdout.splitlines()
    assert json.loads(run("show", xgid, "--json").stdout)["xgid"] == xgid


def test_show_of_a_gnubg_id(run):
    r = run("show", GNUBG_52)
    assert r.exit_code == 0, r.output
    assert " GNUbg ID: 4HPwATDgc/ABMA:QYkqASAAIAAA" in r.stdout.splitlines()
    assert " Context: 4-2 to 9, cube 2 (opp), dice 5-2" in r.stdout.splitlines()
    doc = json.loads(run("show", GNUBG_52, "--json").stdout)
    assert doc["match_id"] == "QYkqASAAIAAA" and doc["dice"] == [5, 2]
    assert doc["xgid"] == "XGID=-b----E-C---eE---c-e----B-:1:-1:1:52:4:2:0:9:10"
    assert "match_id" not in json.loads(run("show", START, "--json").stdout)


@pytest.mark.parametrize("form", FORMS)
def test_every_position_command_takes_every_form(run, form):
    assert run("pips", form).stdout.strip() == "167 167"
    assert run("shots", form).stdout.strip() == "0/36"
    assert run("show", form, "--json").exit_code == 0
    r = run("moves", form, "31", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["dice"] == [3, 1]


def _notations(doc):
    return [p["play"] for p in doc["plays"]]


def test_moves_evaluate_and_rollout_use_the_dice_of_the_id(run):
    by_hand = json.loads(run("moves", START, "52", "--json").stdout)
    for form in (XGID_52, GNUBG_52):
        doc = json.loads(run("moves", form, "--json").stdout)
        assert doc["dice"] == [5, 2] and _notations(doc) == _notations(by_hand)
        # an explicit DICE overrides the roll of the ID
        assert json.loads(run("moves", form, "31", "--json").stdout)["dice"] == [3, 1]
    # the XGID's roll and context: 2-4 to 9, cube 2 owned by the player on roll
    ranked = json.loads(run("evaluate", START, "-d", "52", "--score", "2-4", "--length", "9",
                            "--cube", "2", "--owner", "me", "--json").stdout)
    doc = json.loads(run("evaluate", XGID_52, "--json").stdout)
    assert doc["dice"] == [5, 2] and doc["plays"] == ranked["plays"]
    assert json.loads(run("evaluate", XGID_52, "-d", "31", "--json").stdout)["dice"] == [3, 1]
    assert "plays" not in json.loads(run("evaluate", XGID_2_4, "--json").stdout)
    doc = json.loads(run("rollout", GNUBG_52, "-n", "36", "-j", "1", "--json").stdout)
    assert doc["dice"] == [5, 2] and len(doc["plays"]) == len(by_hand["plays"])
    r = run("moves", START)
    assert r.exit_code == 2 and "holds no roll" in r.stderr


@pytest.mark.parametrize("bad, message", [
    ("XGID=-b----E-C---eE---c-e----B-:1:1:1:B:2:4:0:0:10", "beaver or raccoon"),
    ("4HPwATDgc/ABMA:QYkqASAAIAA", "Match ID"),
    ("4HPwATDgc/ABMA:QYkqASAAIAAA:x", "PositionID:MatchID"),
])
def test_bad_forms_are_one_line(run, bad, message):
    for cmd in ("show", "pips", "cube", "evaluate"):
        r = run(cmd, bad)
        assert r.exit_code == 2
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and message in err[0], r.stderr
