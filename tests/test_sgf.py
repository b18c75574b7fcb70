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
    ("(;FF[4]GM[6]MI[length:5];PL[B]AE[a:y]AW[d][d]AB[t][t];PL[B]DI[31])",
     "node 1: a set-up of the board or cube (AE, AB, AW"),
    ("(;FF[4]GM[6]MI[length:5];W[52mhxv];CV[2];B[31])", "node 2: a set-up of the board or cube (CV"),
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


def test_a_gnubg_file_of_a_set_up_position_is_refused_by_name(gnubg_binary, tmp_path):
    import subprocess

    out = tmp_path / "setup.sgf"
    script = tmp_path / "script.txt"
    script.write_text(f"new match 5\nset board mNvgAQaw5+ABMA\nset cube value 2\n"
                      f"set dice 3 1\nsave match {out}\n")
    subprocess.run([gnubg_binary, "-t", "-q", "-c", str(script)], capture_output=True,
                   timeout=120, check=True)
    with pytest.raises(InvalidRecordError, match="set-up of the board or cube"):
        sgf.load(out)
