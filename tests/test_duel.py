"""Duplicate-dice duels: determinism, symmetry, the Python loop, the CLI."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import _net
from bgfast.cli import main
from bgfast.duel import duel
from bgfast.position import Position


def _same(r1, r2):
    d1, d2 = r1.to_dict(), r2.to_dict()
    d1.pop("seconds")
    d2.pop("seconds")
    assert d1 == d2


def test_duel_is_deterministic_whatever_the_threads():
    r1 = duel("medium", "beginner", games=60, seed=11, threads=1)
    r2 = duel("medium", "beginner", games=60, seed=11, threads=2)
    _same(r1, r2)
    r3 = duel("medium", "beginner", games=60, seed=12, threads=1)
    assert r3.to_dict() != r1.to_dict()


def test_duplicate_dice_symmetry():
    # a deterministic player against itself: each pair cancels exactly
    r = duel("net", "net", games=40, seed=3)
    assert r.ppg == 0 and r.wins_a == r.wins_b == 20
    assert r.gammons_a == r.gammons_b and r.backgammons_a == r.backgammons_b
    # swapping A and B negates the result game for game
    ab = duel("net", "pubeval", games=80, seed=5)
    ba = duel("pubeval", "net", games=80, seed=5)
    assert ab.ppg == -ba.ppg and ab.wins_a == ba.wins_b and ab.gammons_a == ba.gammons_b


def test_dice_stream_is_shared_by_both_games_of_a_pair():
    r = _net.dice_rolls(9, 4, 50)
    assert r[0] % 7 != 0 and r.min() >= 0 and r.max() < 36
    np.testing.assert_array_equal(r, _net.dice_rolls(9, 4, 50))
    assert (r != _net.dice_rolls(9, 5, 50)).any()


def test_python_loop_equals_kernel():
    k = duel("net", "pubeval", games=20, seed=8)
    p = duel("net", "pubeval", games=20, seed=8, python=True)
    _same(k, p)


def test_strength_order():
    r = duel("pubeval", "beginner", games=200, seed=1)
    assert r.ppg > 0.8 and r.se < 0.2
    assert r.wins_a + r.wins_b == r.games == 200
    r = duel("net", "pubeval", games=400, seed=2)
    assert r.ppg > 0.0


def test_gnubg_player(gnubg_nn):
    r = duel("gnubg", "beginner", games=10, seed=4)
    assert r.games == 10 and r.ppg > 0.5


def test_cli_duel_json_and_errors():
    runner = CliRunner()
    res = runner.invoke(main, ["duel", "pubeval", "beginner", "--games", "20", "--seed", "3",
                               "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["games"] == 20 and doc["a"] == "pubeval" and doc["ppg"] > 0
    res = runner.invoke(main, ["duel", "pubeval", "beginner", "--games", "20", "--seed", "3"])
    assert "points per game" in res.stdout
    res = runner.invoke(main, ["duel", "nobody", "beginner", "--games", "2"])
    assert res.exit_code == 2 and "unknown player" in res.output


def test_cli_train_and_resume(tmp_path):
    runner = CliRunner()
    out = str(tmp_path / "n.npz")
    res = runner.invoke(main, ["train", out, "--games", "32", "--hidden", "8", "--round-games",
                               "8", "--quiet", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["games_done"] == 32
    res = runner.invoke(main, ["train", out, "--games", "48", "--resume", "--quiet", "--json"])
    assert json.loads(res.stdout)["games_done"] == 48
    res = runner.invoke(main, ["duel", out, "beginner", "--games", "4", "--json"])
    assert res.exit_code == 0, res.output


def test_duel_is_the_same_however_its_pairs_are_split(monkeypatch):
    """The kernel is called in steps (progress between them); the result
    depends on the seed alone, and the summary is the plain one of the
    games' points."""
    import bgfast.duel as d

    calls = []
    whole = d.duel("pubeval", "beginner", games=41, seed=7, threads=2,
                   progress=lambda done, total: calls.append((done, total)))
    assert whole.pairs == 21 and calls[-1] == (21, 21)
    assert all(a[0] < b[0] for a, b in zip(calls, calls[1:]))
    monkeypatch.setattr(d, "MAX_STEP", 1)          # one pair a call
    monkeypatch.setattr(d, "REPORT_SECONDS", 0.0)
    steps = []
    split = d.duel("pubeval", "beginner", games=41, seed=7, threads=1,
                   progress=lambda done, total: steps.append(done))
    assert steps == list(range(1, 22))
    assert {k: v for k, v in split.to_dict().items() if k != "seconds"} == \
        {k: v for k, v in whole.to_dict().items() if k != "seconds"}
    pts, plies = _net.duel((d.get_level("pubeval").spec(), d.get_level("beginner").spec()),
                           7, 0, 21, 1)
    pts = np.asarray(pts, dtype=np.int64)
    assert whole.ppg == pts.mean() and whole.plies == np.mean(plies)
    assert abs(whole.se - pts.mean(axis=1).std(ddof=1) / np.sqrt(21)) < 1e-15
    assert whole.wins_a == (pts > 0).sum() and whole.gammons_b == (pts == -2).sum()
    assert whole.backgammons_a == (pts == 3).sum()


def test_train_checks_its_output_before_training(tmp_path, monkeypatch):
    """D13: a weights file in a missing directory: one line, no game played."""
    import bgfast.net as netmod

    def no_work(*a, **k):
        raise AssertionError("training started")

    monkeypatch.setattr(netmod, "random_net", no_work)
    monkeypatch.setattr(netmod, "load", no_work)
    runner = CliRunner()
    for cmd in (["train", str(tmp_path / "no" / "n.npz"), "--games", "10"],
                ["train-supervised", str(tmp_path / "no" / "n.npz"), "--init", __file__,
                 "--games", "1"]):
        r = runner.invoke(main, cmd)
        assert r.exit_code == 2 and "does not exist" in r.stderr and r.stderr.count("\n") == 1
    r = runner.invoke(main, ["train", "", "--games", "10"])
    assert r.exit_code == 2 and "name given" in r.stderr


@pytest.fixture(scope="module")
def bgsage():
    return pytest.importorskip("bgsage")


def _selfplay_boards(n_games=6, seed=3):
    from bgfast.duel import PyLevelPlayer, py_game
    from bgfast.levels import get_level

    boards = []
    players = [PyLevelPlayer(get_level("easy")), PyLevelPlayer(get_level("beginner"))]
    for k in range(n_games):
        py_game(players, seed, k, k & 1, record=boards)
    return boards


def test_bgsage_board_conversion_passes_the_turn_and_keeps_every_checker(bgsage):
    from bgfast.duel import BgsagePlayer

    boards = _selfplay_boards()
    assert any(b[1, 24] or b[0, 24] for b in boards)          # the bar is covered
    for b in boards:
        s = BgsagePlayer.to_bgsage(b)
        assert sum(x for x in s[1:25] if x > 0) + s[25] == b[1].sum()
        assert -sum(x for x in s[1:25] if x < 0) + s[0] == b[0].sum()
        np.testing.assert_array_equal(BgsagePlayer.from_bgsage(s), b[::-1])


def test_bgsage_plays_are_exactly_bgfasts_legal_plays(bgsage):
    from bgfast.duel import BgsagePlayer
    from bgfast.movegen import legal_plays

    rng = np.random.default_rng(5)
    boards = _selfplay_boards()
    player = BgsagePlayer()
    for b in boards[::3]:
        d1, d2 = (int(x) for x in rng.integers(1, 7, 2))
        pos = Position(b)
        ours = {p.position.board.tobytes() for p in legal_plays(pos, d1, d2)}
        theirs = {BgsagePlayer.from_bgsage(m).tobytes()
                  for m in bgsage.possible_moves(BgsagePlayer.to_bgsage(b), d1, d2)}
        if not ours:                                           # no legal play
            assert theirs <= {b[::-1].tobytes()}
            continue
        assert ours == theirs, (pos.position_id(), d1, d2)
        assert player.play(b, d1, d2, 0).tobytes() in ours


def test_bgsage_player_duels_by_name(bgsage):
    r = duel("bgsage", "beginner", games=10, seed=4)
    assert r.games == 10 and r.ppg > 0.5 and r.a == "bgsage"
    assert duel("bgsage@1", "pubeval", games=2, seed=1).a == "bgsage@1"


def test_bad_bgsage_players_are_refused():
    from bgfast.errors import BgfastError

    for name in ("bgsage@x", "bgsage@7"):
        with pytest.raises(BgfastError):
            duel(name, "beginner", games=2)


def test_a_peer_whose_package_is_missing_is_named_in_the_error():
    from bgfast.duel import PeerPlayer
    from bgfast.errors import BgfastError

    class Missing(PeerPlayer):
        engine, package, module = "nobody", "nobody-nn", "nobody_nn_not_installed"

        def play(self, board, d1, d2, seed):
            return board[::-1].copy()

    with pytest.raises(BgfastError, match="the nobody player needs the optional package "
                                          r"nobody-nn \(pip install nobody-nn\)"):
        Missing()
