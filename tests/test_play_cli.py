"""``bgfast play`` and ``bgfast mat`` driven end to end through click."""
import json
import re

import pytest
from click.testing import CliRunner

from bgfast import matfile
from bgfast.cli import main
from bgfast.game import Match, Rules
from bgfast.lessons import LANGUAGES, load_lessons, load_text


def run(args, text=""):
    return CliRunner().invoke(main, args, input=text, catch_exceptions=False)


def opening(seed, length=0, rules=None):
    """The opening the CLI will see with this seed (it uses Match(seed=seed))."""
    m = Match(length, rules or Rules(max_cube=64), seed=seed)
    g = m.new_game()
    g.start()
    return g


def human_starting_seed():
    for seed in range(100):
        g = opening(seed)
        if g.turn == 0:
            plays = [p for p in g.legal_plays() if len(p.moves) == 2
                     and p.moves[0][0] != p.moves[1][0] and p.moves[0][1] != p.moves[1][0]]
            if plays:
                return seed, g, plays[0]
    raise AssertionError("no seed where the human starts")


def test_scripted_human_session(tmp_path):
    seed, g, target = human_starting_seed()
    (a, b), _second = target.moves
    first_step = f"{a}/{b}"
    lines = ["24/1",            # not possible
             "hint",
             first_step,        # half of the play ...
             "undo",            # ... taken back while dice are left
             "undo",            # nothing more to take back
             target.notation]   # the whole play
    lines += ["auto"] * 400
    path = tmp_path / "game.mat"
    res = run(["play", "--opponent", "beginner", "--seed", str(seed), "--save", str(path)],
              "\n".join(lines) + "\n")
    assert res.exit_code == 0, res.output
    out = res.output
    assert "Not possible" in out
    assert "Checkers that can move:" in out
    # the ranked plays of the opening roll, best first, as bgfast.hint ranks them
    from bgfast.hint import hint

    # (a money session: ranked by cubeful equity at the game's cube)
    listed = out.split("Best plays (net, 2-ply, cubeful equity):\n", 1)[1].splitlines()
    expect = hint(g.position(), g.dice, top=5).plays
    rows = [re.match(r"\s+(\d+)\. (.+?)\s+([+-]\d\.\d{3})", ln) for ln in listed[:len(expect)]]
    assert [(int(m[1]), m[2], float(m[3])) for m in rows] == [
        (p.rank, p.play, round(p.cubeful, 3)) for p in expect]
    assert "Nothing to take back." in out
    assert f"You play {target.notation}." in out
    assert "Position ID: 4HPwATDgc/ABMA" in out
    saved = matfile.load(path)
    assert saved.games[0].actions[1].moves == target.moves
    res0 = saved.games[0].result
    assert res0 is not None
    winner = "You" if res0.winner == 0 else "Beginner"
    verb = "win" if winner == "You" else "wins"
    assert f"{winner} {verb} a" in out and f"and {res0.points} point" in out
    assert f"Final score: You {saved.score[0]}, Beginner {saved.score[1]}." in out


def test_full_bot_match_ends_with_correct_score(tmp_path):
    path = tmp_path / "bots.mat"
    res = run(["play", "--you", "beginner", "--opponent", "heuristic", "--match", "3",
               "--seed", "5", "--json", "--save", str(path)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout.strip().splitlines()[-1])
    assert data["over"] and not data["abandoned"] and data["length"] == 3
    totals = [0, 0]
    for g in data["games"]:
        totals[g["winner"]] += g["points"]
    assert totals == data["score"] and max(totals) >= 3
    assert data["winner"] == (0 if totals[0] >= 3 else 1)
    assert sum(g["crawford"] for g in data["games"]) <= 1
    saved = matfile.load(path)
    assert list(saved.score) == data["score"] and saved.over
    # the transcript went to stderr, the data to stdout
    assert "wins the match" in res.stderr


def test_same_seed_same_match():
    args = ["play", "--you", "heuristic", "--opponent", "beginner", "--match", "3",
            "--seed", "11", "--json"]
    assert run(args).stdout == run(args).stdout


def test_two_humans_and_no_crawford(tmp_path):
    res = run(["play", "--opponent", "human", "--match", "3", "--no-crawford", "--seed", "4",
               "--json"], "auto\n" * 3000)
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout.strip().splitlines()[-1])
    assert data["names"] == ["PlayerX", "PlayerO"] and data["over"]
    assert not any(g["crawford"] for g in data["games"])


def test_cube_off_and_quit(tmp_path):
    seed, _g, _t = human_starting_seed()
    res = run(["play", "--opponent", "beginner", "--no-cube", "--seed", str(seed), "--json"],
              "auto\ndouble\nquit\n")
    assert res.exit_code == 0
    assert "cube off" in res.stderr and "Game abandoned." in res.stderr
    data = json.loads(res.stdout.strip().splitlines()[-1])
    assert data["abandoned"] and not data["over"]
    assert "You cannot double now: the cube is switched off." in res.stderr
    assert "[d]ouble" not in res.stderr


def test_resign_in_terminal():
    seed, _g, _t = human_starting_seed()
    res = run(["play", "--opponent", "heuristic", "--seed", str(seed), "--json"],
              "resign gammon\n")
    assert res.exit_code == 0
    data = json.loads(res.stdout.strip().splitlines()[-1])
    # the heuristic accepts only what it could still win: a backgammon is possible at the start
    assert "offer to resign a gammon" in res.stderr and "Heuristic rejects." in res.stderr
    assert data["abandoned"]


def test_mat_info(tmp_path):
    path = tmp_path / "m.mat"
    run(["play", "--you", "beginner", "--opponent", "heuristic", "--match", "3",
         "--seed", "2", "--save", str(path)])
    res = run(["mat", "info", str(path), "--json"])
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["length"] == 3 and data["over"] and data["score"] == list(matfile.load(path).score)
    text = run(["mat", "info", str(path)]).stdout
    assert text.startswith("3-point match") and "Game 1" in text
    bad = tmp_path / "bad.mat"
    lines = path.read_text().split("\n")
    lines[7] = "  1) 99: 24/1"
    bad.write_text("\n".join(lines))
    res = run(["mat", "info", str(bad)])
    assert res.exit_code == 2 and "line 8" in res.stderr


# ---------------------------------------------------------------------------
# lessons
# ---------------------------------------------------------------------------


LESSONS = load_lessons()
QUESTIONS = [(ls.number, q) for ls in LESSONS for q in ls.questions()]


def test_eight_lessons_each_with_questions():
    assert [ls.id for ls in LESSONS] == ["rules", "moving", "hitting", "bearoff", "scoring",
                                          "cube", "crawford", "strategy"]
    assert all(ls.questions() for ls in LESSONS)


@pytest.mark.parametrize("number,question", QUESTIONS, ids=[q.text for _n, q in QUESTIONS])
def test_lesson_answer_is_what_the_engine_computes(number, question):
    truth = question.engine_answer()
    words = load_text("en")
    if question.kind == "legal_play":
        assert question.answer in truth          # the example is one of the legal plays
        assert question.check(question.answer, words)
        assert not question.check("24/1", words)
    else:
        assert question.answer == truth
        assert question.check(str(words.get(truth, truth)), words)
        wrong = "999" if isinstance(truth, int) else ("no" if truth == "yes" else "yes"
                                                       if truth == "no" else
                                                       "pass" if truth == "take" else "take")
        assert not question.check(wrong, words)


def test_both_languages_have_every_text():
    keys = set()
    for ls in LESSONS:
        keys.add(f"{ls.id}.title")
        for p in ls.pages:
            keys.add(p.text)
            if p.question is not None and p.question.explain:
                keys.add(p.question.explain)
    texts = {lang: load_text(lang) for lang in LANGUAGES}
    for lang, words in texts.items():
        missing = keys - set(words)
        assert not missing, (lang, missing)
        assert all(words[k].strip() for k in keys)
    assert set(texts["en"]) == set(texts["da"])
    assert texts["en"]["cube.title"] != texts["da"]["cube.title"]


def _answers(number, lang):
    words = load_text(lang)
    out = []
    for p in LESSONS[number - 1].pages:
        q = p.question
        if q is None:
            out.append("")
        elif q.kind == "legal_play":
            out.append(q.answer)
        else:
            truth = q.engine_answer()
            out.append(str(words.get(truth, truth)))
    return out


@pytest.mark.parametrize("number", range(1, 9))
def test_lesson_cli_all_right(number):
    res = run(["lesson", str(number)], "\n".join(_answers(number, "en")) + "\n")
    assert res.exit_code == 0
    n = len(LESSONS[number - 1].questions())
    assert f"Lesson finished: {n} of {n} answers right." in res.output
    assert "Right!" in res.output and "Not quite" not in res.output


def test_lesson_cli_danish_and_wrong_answers():
    res = run(["lesson", "7", "--lang", "da"], "\n".join(_answers(7, "da")) + "\n")
    assert "Lektionen er slut: 4 af 4 rigtige svar." in res.output
    res = run(["lesson", "6", "--lang", "da"], "\nx\nafvis\ntag imod\n")
    assert "Lektionen er slut: 0 af 3 rigtige svar." in res.output
    assert "Svaret er tag imod." in res.output


def test_lesson_list_and_json():
    res = run(["lesson", "--json"])
    assert [x["number"] for x in json.loads(res.stdout)] == list(range(1, 9))
    assert "8. Basic strategy" in run(["lesson"]).stdout
    data = json.loads(run(["lesson", "3", "--json"]).stdout)
    shots = [p for p in data["pages"] if p.get("kind") == "shots"]
    assert [p["answer"] for p in shots] == ["17", "6"]
