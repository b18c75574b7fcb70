"""bgfast play: --watch, money options, save and resume; bgfast learn."""
import json

import pytest
from click.testing import CliRunner

from bgfast import savegame
from bgfast.cli import main
from bgfast.game import Match, Rules


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def test_learn_is_the_lessons_command():
    a = run("learn", "--json")
    b = run("lesson", "--json")
    assert a.exit_code == 0 and a.stdout == b.stdout
    assert len(json.loads(a.stdout)) == 8
    assert json.loads(run("learn", "6", "--json", "--lang", "da").stdout) \
        != json.loads(run("learn", "6", "--json").stdout)


def test_watch_plays_computer_against_computer_reproducibly():
    args = ("play", "--watch", "--opponent", "beginner", "--match", "3", "--seed", "4", "--json")
    first = json.loads(run(*args).stdout)
    assert first["over"] and max(first["score"]) >= 3 and not first["abandoned"]
    assert json.loads(run(*args).stdout) == first


def test_money_options_reach_the_rules_and_are_refused_in_a_match(tmp_path):
    path = tmp_path / "s.json"
    r = run("play", "--watch", "--opponent", "heuristic", "--seed", "2", "--jacoby", "--beaver",
            "--auto-doubles", "2", "--save", str(path), "--json")
    assert r.exit_code == 0
    rules = json.loads(path.read_text())["match"]["rules"]
    assert rules["jacoby"] and rules["beaver"] and rules["auto_doubles"] == 2
    r = run("play", "--match", "3", "--jacoby")
    assert r.exit_code == 2 and r.stderr.startswith("Error:") and "money" in r.stderr


def test_save_on_quit_and_resume_continues_the_same_game(tmp_path):
    path = tmp_path / "game.json"
    r = run("play", "--seed", "5", "--opponent", "beginner", "--save", str(path),
            input="r\nauto\nquit\n")
    assert r.exit_code == 0
    saved = savegame.load(path)
    before = [a.to_list() for a in saved.game.actions]
    assert not saved.game.over and len(before) >= 2
    out = tmp_path / "done.json"
    r = run("play", "--resume", str(path), "--watch", "--opponent", "heuristic",
            "--save", str(out), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["over"]
    done = savegame.load(out)
    assert [a.to_list() for a in done.games[0].actions][:len(before)] == before
    assert done.games[0].over


def test_resume_of_a_bad_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = run("play", "--resume", str(bad))
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1


def _one_line_error(r, code=2):
    assert r.exit_code == code, r.output
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error:"), r.stderr
    assert "Traceback" not in r.output
    return err[0]


def _saved_game(tmp_path):
    path = tmp_path / "game.json"
    r = run("play", "--seed", "5", "--opponent", "beginner", "--save", str(path),
            input="r\nauto\nr\nquit\n")
    assert r.exit_code == 0
    return path, json.loads(path.read_text())


def _resign(doc, path):
    """Write ``doc`` back, signed with this installation's key (so the
    checks behind the signature are the ones tested)."""
    body = doc["match"]
    doc["mac"] = savegame._mac(savegame.install_key(), body)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["match"]["rng_state"]["state"].update(state=0, inc=0), "PCG64"),
    (lambda d: d["match"].update(rng_state="x"), "PCG64"),
    (lambda d: d["match"].update(length=10 ** 30), "32767"),
    (lambda d: d["match"].update(length=100), "up to 99 points"),
    (lambda d: d["match"].update(names=["a", "b", "c"]), "two player names"),
    (lambda d: d["match"].update(names=["\x1b[2J", "b"]), "U+001B"),
])
def test_resume_refuses_impossible_states_in_one_line(tmp_path, edit, message):
    path, doc = _saved_game(tmp_path)
    edit(doc)
    _resign(doc, path)
    line = _one_line_error(run("play", "--resume", str(path)))
    assert message in line and str(path) in line


def test_resume_refuses_an_edited_roll(tmp_path):
    path, doc = _saved_game(tmp_path)
    last = doc["match"]["games"][0][-1]
    assert last[0] == "roll"                  # saved with the roll to play
    last[2] = [6, 6] if last[2] != [6, 6] else [5, 5]
    path.write_text(json.dumps(doc))
    assert "changed after bgfast wrote it" in _one_line_error(run("play", "--resume", str(path)))
    doc["match"]["rng_state"]["state"]["state"] += 1
    path.write_text(json.dumps(doc))
    assert "changed after bgfast wrote it" in _one_line_error(run("play", "--resume", str(path)))


@pytest.mark.parametrize("content", [b"[1, 2, 3]", b"[" * 100000 + b"]" * 100000, b"\xff\xfe",
                                     b'{"format": "bgfast saved match"}', b"{}"])
def test_resume_of_malformed_files_is_one_line(tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    _one_line_error(run("play", "--resume", str(bad)))


def test_a_bad_save_path_is_refused_before_the_match(tmp_path):
    for target in ("/nonexistent2/x.mat", str(tmp_path / "no" / "x.json"), ""):
        r = run("play", "--you", "easy", "--opponent", "easy", "--save", target)
        line = _one_line_error(r)
        assert "cannot write" in line or "no output file" in line
        assert "Opening roll" not in r.output      # no game was played
    (tmp_path / "dir.json").mkdir()
    _one_line_error(run("play", "--watch", "--save", str(tmp_path / "dir.json")))


@pytest.mark.parametrize("names, message", [
    ("a\x1b[31m,b", "U+001B"), ("a\nb,c", "U+000A"), ("a,b,c", "two names"), ("a,", "two names"),
])
def test_names_with_control_characters_are_refused(names, message):
    assert message in _one_line_error(run("play", "--watch", "--names", names))


def _opponent_starts(length):
    for seed in range(100):
        m = Match(length, Rules(max_cube=64), seed=seed)
        g = m.new_game()
        g.start()
        if g.turn == 1:
            return seed
    raise AssertionError("no seed where the opponent starts")


@pytest.mark.parametrize("length, dead", [(1, True), (0, False), (3, False)])
def test_double_is_offered_only_with_a_live_cube(length, dead):
    seed = _opponent_starts(length)
    r = run("play", "--opponent", "beginner", "--match", str(length), "--seed", str(seed),
            input="help\ndouble\nquit\n")
    assert r.exit_code == 0, r.output
    prompt = [line for line in r.output.splitlines() if "to play:" in line][0]
    assert ("[d]ouble" in prompt) is not dead
    assert ("d, double" in r.output) is not dead
    refused = "You cannot double now: the cube is dead: a win at 1 already wins player 0"
    assert (refused in r.output) is dead
    assert ("You double to 2." in r.output) is not dead
