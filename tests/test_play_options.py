"""bgfast play: --watch, money options, save and resume; bgfast learn."""
import json

from click.testing import CliRunner

from bgfast.cli import main
from bgfast.game import Match


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
    rules = json.loads(path.read_text())["rules"]
    assert rules["jacoby"] and rules["beaver"] and rules["auto_doubles"] == 2
    r = run("play", "--match", "3", "--jacoby")
    assert r.exit_code == 2 and r.stderr.startswith("Error:") and "money" in r.stderr


def test_save_on_quit_and_resume_continues_the_same_game(tmp_path):
    path = tmp_path / "game.json"
    r = run("play", "--seed", "5", "--opponent", "beginner", "--save", str(path),
            input="r\nauto\nquit\n")
    assert r.exit_code == 0
    saved = Match.from_dict(json.loads(path.read_text()))
    before = [a.to_list() for a in saved.game.actions]
    assert not saved.game.over and len(before) >= 2
    out = tmp_path / "done.json"
    r = run("play", "--resume", str(path), "--watch", "--opponent", "heuristic",
            "--save", str(out), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["over"]
    done = Match.from_dict(json.loads(out.read_text()))
    assert [a.to_list() for a in done.games[0].actions][:len(before)] == before
    assert done.games[0].over


def test_resume_of_a_bad_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = run("play", "--resume", str(bad))
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
