"""SGF (gnubg's match format) import and export, recorded and against Debian's gnubg."""
import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bgfast import matfile, sgf
from bgfast.cli import main
from bgfast.errors import BgfastError, InvalidRecordError
from bgfast.game import Match, Phase, Rules, money_session
from bgfast.players import Beginner, Heuristic, play_game, play_match

from test_matfile import GNUBG_SELF_PLAY, gnubg_score, make_match, resignation_match, run_gnubg

DATA = Path(__file__).parent / "data"


def actions(match):
    """Every game's actions as lists, without what SGF does not hold
    (opening ties, offered and rejected resignations; an accepted one is in RE)."""
    return [[a.to_list() for a in g.actions
             if a.kind not in ("resign", "reject", "accept")
             and not (a.kind == "opening" and a.dice[0] == a.dice[1])] for g in match.games]


def results(match):
    return [g.result for g in match.games]


def resign_match(seed):
    return resignation_match(seed, reject=True)


def beaver_session(seed=5):
    m = money_session(Rules(beaver=True, raccoon=True), seed=seed, names=("Alice", "Bob"))
    g = m.new_game()
    g.start()
    g.play(g.legal_plays()[0])
    g.double()
    g.beaver()
    play_game(g, [Beginner(3), Heuristic()])
    g = m.new_game()
    g.start()
    g.play(g.legal_plays()[0])
    g.double()
    g.beaver()
    g.raccoon()
    play_game(g, [Beginner(3), Heuristic()])
    return play_match(m, [Beginner(3), Heuristic()], max_games=3)


# -- recorded ------------------------------------------------------------------------

def test_gnubg_file_with_analysis_imports():
    # a 1-point match gnubg 1.07 wrote by self-play, with its analysis properties
    # (A, GS, MR); gnubg's own .mat export of the same match is the reference
    text = gzip.open(DATA / "gnubg_1pt.sgf.gz", "rt", encoding="utf-8").read()
    assert "A[0]" in text and "GS[" in text and "MR[" in text
    m = sgf.loads(text)
    ref = matfile.load(DATA / "gnubg_1pt.mat")
    assert (m.length, m.score, m.names) == (1, (0, 2), ("gnubg", "root"))
    assert actions(m) == actions(ref)
    r = m.games[0].result
    assert (r.winner, r.points, r.how) == (1, 2, "resign")  # RE[B+2R]


def test_gnubg_beaver_chain_imports():
    # gnubg writes a beaver as a double by the taker, and the last side holding it takes
    m = sgf.load(DATA / "gnubg_beaver.sgf")
    g = m.games[0]
    assert [a.kind for a in g.actions] == ["opening", "move", "double", "beaver", "raccoon",
                                           "roll"]
    assert (g.cube_value, g.cube_owner, g.phase, g.dice) == (8, 1, Phase.MOVE, (6, 5))
    assert m.rules.beaver and m.rules.raccoon and m.length == 0
    # the unfinished turn (rolled 65, not moved) is written back as gnubg's dice node
    assert sgf.dumps(m).rstrip().endswith(";PL[B]DI[65])")


@pytest.mark.parametrize("make", [lambda: make_match(4), lambda: make_match(9, 3),
                                  lambda: resign_match(2), beaver_session])
def test_round_trip_is_exact(make):
    m = make()
    back = sgf.loads(sgf.dumps(m))
    assert actions(back) == actions(m)
    assert results(back) == results(m) and back.score == m.score
    assert back.rules == m.rules and back.names == m.names and back.length == m.length
    assert [g.crawford for g in back.games] == [g.crawford for g in m.games]


def test_export_layout():
    m = Match(3, names=("A]b", "Bob"))
    g = m.new_game()
    g.opening_roll((5, 2))
    g.play("13/8 24/22")
    g.roll((6, 6))
    g.play("24/18(2) 13/7(2)")
    g.double()
    g.drop()
    text = sgf.dumps(m)
    assert text.startswith("(;FF[4]GM[6]CA[UTF-8]AP[bgfast:")
    assert "MI[length:3][game:0][ws:0][bs:0]PW[A\\]b]PB[Bob]RU[Crawford]RE[W+1]" in text
    # White's points are a..x from its 1-point, Black's counted from the other side;
    # the moves in gnubg's order (starting point, then landing point, decreasing)
    assert "\n;W[52xvmh]\n;B[66agaglrlr]\n;W[double]\n;B[drop])" in text
    assert sgf.loads(text).names == ("A]b", "Bob")


def test_record_suffix_dispatch(tmp_path):
    m = make_match(4)
    for name in ("x.sgf", "x.SGF", "x.mat"):
        sgf.dump_record(m, tmp_path / name)
        assert actions(sgf.load_record(tmp_path / name)) == actions(m)
    assert (tmp_path / "x.sgf").read_text().startswith("(;FF[4]")
    assert sgf.is_record("a.mat") and sgf.is_record("b.Sgf") and not sgf.is_record("c.json")


@pytest.mark.parametrize("text,words", [
    ("", "no game tree"),
    ("(;FF[4]GM[1])", "not a backgammon game"),
    ("(;FF[4]GM[6]MI[length:3]", "a ')' is missing"),
    ("(;FF[4]GM[6]MI[length:3];W[52mh", "not closed"),
    (")", "unmatched"),
    ("(;FF[4]GM[6]MI[length:3];W[52mhxv]", "missing"),
    ("(;FF[4]GM[6]MI[length:3];W[52mhxw])", "node 1"),          # 24/23 is not a 5 or a 2
    ("(;FF[4]GM[6]MI[length:3];W[52mhxv];W[31])", "B is to act"),
    ("(;FF[4]GM[6]MI[length:3];W[55mhmh])", "is a double"),
    ("(;FF[4]GM[6]MI[length:3];W[52mh!v])", "cannot read the move"),
    ("(;FF[4]GM[6]MI[length:3]RE[W+1];W[52mhxv])", "not over"),
    ("(;FF[4]GM[6]MI[length:3]RE[Q+1];W[52mhxv])", "cannot read the result"),
    ("(;FF[4]GM[6]MI[length:3][ws:1];W[52mhxv])", "the score is 1-0"),
    ("(;FF[4]GM[6]MI[length:3]BG[cube=2];W[52mhxv])", "yes/no rule"),
    ("(;FF[4]GM[6]MI[length:3]PW[a\x1bb];W[52mhxv])", "control character"),
    ("(;FF[4]GM[6]MI[length:3];W[52mhxv];B[double];W[take];B[double])", "cannot double"),
    ("(;FF[4]GM[6]MI[length:0];W[52mhxv];B[double];W[double];W[drop])",
     "must take it"),
    ("(;FF[4]GM[6]MI[length:5];W[52mhxv];CV[2];B[31])", "node 2: a set-up after play began "
     "must clear the whole board"),
    ("(;FF[4]GM[6]MI[length:5];W[52mhxv];B[double];W[take];PL[B]AE[a:y]AW[a]AB[b])",
     "node 2: a set-up of the board or cube (node 4) after a cube action"),
    ("(;FF[4]GM[6]MI[length:5];PL[W]AE[a:y]AW" + "[a]" * 16 + "AB[x])", "more than 15 checkers"),
    ("(;FF[4]GM[6]MI[length:5];PL[W]AE[a:y]AW[a]AB[a])", "the set-up: both sides"),
    ("(;FF[4]GM[6]MI[length:5];PL[W]AE[a:y]AW[a]AB[b];CP[q])", "CP[q] is not w, b or c"),
    ("(;FF[4]GM[6]MI[length:5];PL[W]AE[a:y]AW[a]AB[b];CV[3])", "cube_value"),
    ("(;FF[4]GM[6]MI[length:5];PL[W]AE[a:z]AW[a]AB[b])", "cannot read the point [a:z]"),
])
def test_bad_files_raise_invalid_record(text, words):
    with pytest.raises(InvalidRecordError, match=None) as err:
        sgf.loads(text)
    assert words in str(err.value), str(err.value)
    assert isinstance(err.value, ValueError)


def test_variations_follow_the_main_line():
    main_line = "(;FF[4]GM[6]MI[length:3](;W[52mhxv](;B[31qtst])(;B[42qusu]))(;W[52xvxv]))"
    m = sgf.loads(main_line)
    assert [a.moves for a in m.games[0].actions if a.kind == "move"] == [
        ((13, 8), (24, 22)), ((8, 5), (6, 5))]


def test_cannot_export_what_sgf_cannot_hold():
    m = Match(0, Rules(opening_reroll=True))
    with pytest.raises(InvalidRecordError, match="afresh"):
        sgf.dumps(m)
    m = money_session(Rules(auto_doubles=1), seed=1)
    g = m.new_game()
    g.opening_roll((4, 4))
    g.opening_roll((5, 2))
    with pytest.raises(InvalidRecordError, match="automatic double"):
        sgf.dumps(m)


# -- CLI -----------------------------------------------------------------------------

def test_cli_reads_sgf(tmp_path):
    m = make_match(4)
    path = tmp_path / "m.sgf"
    sgf.dump(m, path)
    r = CliRunner().invoke(main, ["mat", "info", str(path), "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["score"] == list(m.score) and info["length"] == 5
    assert [g["points"] for g in info["games"]] == [g.result.points for g in m.games]
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;FF[4]GM[6]MI[length:3];W[52mhxw])")
    r = CliRunner().invoke(main, ["analyze-match", str(bad)])
    assert r.exit_code != 0
    assert r.output.strip().splitlines() == [r.output.strip()] and "Error:" in r.output
    assert "node 1" in r.output and "Traceback" not in r.output


def test_analyze_match_accepts_sgf(tmp_path):
    m = Match(1, seed=3, names=("A", "B"))
    play_match(m, [Beginner(1), Heuristic()])
    path = tmp_path / "m.sgf"
    sgf.dump(m, path)
    r = CliRunner().invoke(main, ["analyze-match", str(path), "--ply", "0", "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    assert summary["match"] == {"length": 1, "games": 1, "score": list(m.score)}


# -- live: Debian's gnubg ------------------------------------------------------------------

@pytest.mark.parametrize("make", [lambda: make_match(4), lambda: resign_match(2),
                                  beaver_session])
def test_gnubg_reads_our_export_identically(gnubg_binary, tmp_path, make):
    m = make()
    src, out = tmp_path / "ours.sgf", tmp_path / "theirs.sgf"
    sgf.dump(m, src)
    log = run_gnubg(gnubg_binary, f"load match {src}\nshow score\nsave match {out}")
    assert gnubg_score(log) == m.score
    back = sgf.load(out)
    assert actions(back) == actions(m) and results(back) == results(m)


@pytest.mark.parametrize("seed,length", [(7, 3), (11, 1)])
def test_we_read_gnubg_self_play(gnubg_binary, tmp_path, seed, length):
    out, mat = tmp_path / "gnubg.sgf", tmp_path / "gnubg.mat"
    log = run_gnubg(gnubg_binary, "\n".join(
        GNUBG_SELF_PLAY + [f"set seed {seed}", f"new match {length}", "show score",
                           f"save match {out}", f"export match mat {mat}"]))
    m = sgf.load(out)
    assert m.length == length and m.over and m.score == gnubg_score(log)
    assert actions(m) == actions(matfile.load(mat))


def _setup_match(position_id, on_roll, cube_value=1, cube_owner=None, plays=0, seed=3):
    from bgfast.game import Match
    from bgfast.position import Position

    m = Match(7, seed=seed, names=("Ann", "Bob"))
    g = m.new_game(position=Position.from_position_id(position_id), on_roll=on_roll,
                   cube_value=cube_value, cube_owner=cube_owner)
    for _ in range(plays):
        if g.over:
            break
        g.roll()
        if g.legal_plays():
            g.play(g.legal_plays()[-1])
    return m


@pytest.mark.parametrize("pid,on_roll,cube,owner,plays", [
    ("mNvgAQaw5+ABMA", 1, 2, 1, 0),          # gnubg's own example
    ("mNvgAQaw5+ABMA", 0, 4, 0, 3),          # White on roll, plays after the set-up
    ("7bbFAADbtmkAAA", 1, 1, None, 2),       # a race, checkers borne off
    ("4HPwATDgc/ABMA", 0, 8, 1, 1),
])
def test_a_set_up_game_round_trips(pid, on_roll, cube, owner, plays):
    m = _setup_match(pid, on_roll, cube, owner, plays)
    text = sgf.dumps(m)
    assert ";PL[" + "WB"[on_roll] + "]AE[a:y]" in text
    back = sgf.loads(text)
    a, b = back.to_dict(), m.to_dict()
    for d in (a, b):
        d.pop("rng_state"), d.pop("seed")
    assert a == b
    assert back.games[0].setup["position"] == pid
    assert sgf.dumps(back) == text


def test_a_bar_checker_in_a_set_up_is_read_for_each_side():
    text = "(;FF[4]GM[6]MI[length:3];PL[B]AE[a:y]AW[y][a]AB[y][x];PL[B]DI[31])"
    g = sgf.loads(text).games[0]
    pos = g.position()                        # Black on roll
    assert g.turn == 1 and g.dice == (3, 1)
    assert pos.board[1][24] == 1 and pos.board[1][0] == 1      # Black: bar and its 1-point
    assert pos.board[0][24] == 1 and pos.board[0][0] == 1      # White: bar and its 1-point


def test_a_set_up_game_cannot_be_written_as_mat(tmp_path):
    from bgfast import matfile

    with pytest.raises(InvalidRecordError, match="set up from a position"):
        matfile.dumps(_setup_match("mNvgAQaw5+ABMA", 1, 2, 1))


def test_a_match_record_keeps_the_set_up():
    from bgfast.game import Match

    m = _setup_match("mNvgAQaw5+ABMA", 0, 4, 0, 3)
    d = m.to_dict()
    assert d["starts"][0]["position"] == "mNvgAQaw5+ABMA"
    assert Match.from_dict(d).to_dict() == d
    d["starts"] = [{"position": "nonsense!!!!!!"}]
    with pytest.raises(InvalidRecordError, match="game 1: start position"):
        Match.from_dict(d)
    d["starts"] = []
    with pytest.raises(InvalidRecordError, match="one entry per game"):
        Match.from_dict(d)
    assert "starts" not in Match(3, seed=1).to_dict()


def test_analyze_match_starts_a_set_up_game_at_its_position(tmp_path):
    from bgfast.analyze import AnalysisSettings, analyze_match

    m = _setup_match("mNvgAQaw5+ABMA", 1, 2, 1, 4)
    rows = analyze_match(m, settings=AnalysisSettings())
    first = next(r for r in rows if r.get("position_id"))
    assert first["position_id"] == "mNvgAQaw5+ABMA"


def _gnubg_run(binary, tmp_path, lines):
    import subprocess

    script = tmp_path / "script.txt"
    script.write_text("\n".join(lines) + "\n")
    return subprocess.run([binary, "-t", "-q", "-c", str(script)], capture_output=True,
                          text=True, timeout=300, check=True).stdout


def _gnubg_ids(out):
    import re

    return (re.findall(r"Position ID: (\S{14})", out)[-1],
            re.findall(r"Match ID\s*:\s*(\S{12})", out)[-1])


@pytest.mark.parametrize("pid,cube,owner,dice", [
    ("mNvgAQaw5+ABMA", 2, 1, (3, 1)),
    ("7bbFAADbtmkAAA", 4, 0, (6, 6)),
    ("bJ4LBwBYz8EBAw", 1, None, (5, 2)),
])
def test_gnubg_set_up_files_read_and_written_as_gnubg_does(gnubg_binary, tmp_path, pid, cube,
                                                           owner, dice):
    theirs, ours = tmp_path / "gnubg.sgf", tmp_path / "ours.sgf"
    setup = ["new match 5", f"set board {pid}", f"set cube value {cube}"]
    if owner is not None:
        setup.append(f"set cube owner {owner}")
    _gnubg_run(gnubg_binary, tmp_path, setup + [f"set dice {dice[0]} {dice[1]}",
                                                f"save match {theirs}"])
    want = _gnubg_ids(_gnubg_run(gnubg_binary, tmp_path, [f"load match {theirs}", "show board"]))
    m = sgf.load(theirs)
    g = m.games[0]
    assert (g.position().position_id(), g.match_id()) == want
    sgf.dump(m, ours)
    assert _gnubg_ids(_gnubg_run(gnubg_binary, tmp_path, [f"load match {ours}",
                                                          "show board"])) == want
