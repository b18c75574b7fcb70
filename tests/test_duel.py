"""Duplicate-dice duels: determinism, symmetry, the Python loop, the CLI."""
import json

import numpy as np
from click.testing import CliRunner

from bgfast import _net
from bgfast.cli import main
from bgfast.duel import duel


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
