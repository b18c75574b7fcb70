"""Bad command-line input: one line on stderr, exit status 2, nothing written.

Seeds, numbers that are not finite, output paths that cannot be written or
are checked only after the work, options that do not go together, and
files that are not what they claim to be (a match equity table that is not
text or not consistent, a net whose weights are not finite).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import met, net
from bgfast.cli import main
from bgfast.errors import BgfastError, DatabaseError, InvalidPositionError, OutputPathError
from bgfast.position import Position

START = "4HPwATDgc/ABMA"
MAT = "tests/data/gnubg_1pt.mat"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def one_line_error(r, code=2) -> str:
    assert r.exit_code == code, r.output
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error:"), r.stderr
    assert "Traceback" not in r.output
    return err[0]


@pytest.mark.parametrize("args", [
    ("play", "--seed", "-1", "--json"),
    ("calibrate-pubeval", "--games", "10", "--seed", "-1"),
    ("train", "td", "{tmp}/t.npz", "--games", "1", "--seed", "-1"),
    ("train", "td", "{tmp}/t.npz", "--games", "1", "--seed", str(2 ** 64)),
    ("train-supervised", "{tmp}/s.npz", "--init", "data/net/four-rounds.npz", "--games", "1",
     "--seed", "-1"),
    ("duel", "pubeval", "pubeval", "--games", "2", "--seed", "-1"),
    ("analyze", "-", "--seed", "-5"),
])
def test_a_seed_outside_64_bits_is_a_usage_error(tmp_path, args):
    r = run(*(a.format(tmp=tmp_path) for a in args))
    assert "--seed" in one_line_error(r)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args", [
    ("rollout", START, "--stderr", "nan"),
    ("rollout", START, "--stderr", "inf"),
    ("train", "td", "{tmp}/t.npz", "--games", "1", "--alpha", "nan"),
    ("train", "td", "{tmp}/t.npz", "--games", "1", "--alpha", "-1"),
    ("train-supervised", "{tmp}/s.npz", "--init", "data/net/four-rounds.npz", "--games", "1",
     "--alpha", "inf"),
    ("bearoff", "build", "--one-sided", "3", "-o", "{tmp}/b.bgb", "--checkpoint-seconds", "nan"),
    ("cube", "--probs", "0.7,0.2,0.01,0.05,0.002", "--efficiency", "nan"),
    ("cube", "--probs", "0.7,0.2,0.01,0.05,0.002", "--efficiency", "2"),
    ("met", "--generate", "--gammon-rate", "nan"),
])
def test_numbers_that_are_not_finite_or_out_of_range_are_usage_errors(tmp_path, args):
    one_line_error(run(*(a.format(tmp=tmp_path) for a in args)))
    assert not list(tmp_path.iterdir())


def test_duel_games_have_a_bound():
    assert "--games" in one_line_error(run("duel", "pubeval", "pubeval", "--games", 10 ** 20))


def test_a_seed_of_64_bits_plays(tmp_path):
    r = run("duel", "pubeval", "pubeval", "--games", "2", "--seed", 2 ** 64 - 1, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["games"] == 2


def test_calibration_output_is_checked_before_the_games(tmp_path):
    err = one_line_error(run("calibrate-pubeval", "--games", "10", "-o", tmp_path / "no" / "c.json"))
    assert "does not exist" in err
    assert "no calibration file" in one_line_error(run("calibrate-pubeval", "--games", "10", "-o", ""))
    r = run("calibrate-pubeval", "--games", "10", "-o", tmp_path / "c.json")
    assert r.exit_code == 0 and json.loads((tmp_path / "c.json").read_text())["games"] == 10


def test_calibration_to_a_pipe_is_written_in_place():
    r = subprocess.run([sys.executable, "-m", "bgfast", "calibrate-pubeval", "--games", "10",
                        "-o", "/dev/stdout"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["games"] == 10


def test_a_label_directory_must_be_named_and_writable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                  # an empty name would be this directory
    crashed = Path(__file__).parent.parent / "data" / "training" / "crashed-1.bgtd"
    assert "no directory given" in one_line_error(
        run("data", "values", crashed, "-o", "", "--limit", "2"))
    assert "cannot write labels" in one_line_error(
        run("data", "values", crashed, "-o", "/proc/bgfast-labels", "--limit", "2"))
    assert list(tmp_path.iterdir()) == []


def test_a_benchmark_directory_with_shards_is_refused_before_the_draw(tmp_path):
    (tmp_path / "partial.bgtd").write_bytes(b"stray")
    err = one_line_error(run("benchmark", "build", "-o", tmp_path, "-n", "30", "--set", "contact",
                             "-j", "1"))
    assert "already holds a benchmark" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["partial.bgtd"]


def test_the_run_record_of_an_analysis_is_checked_first(tmp_path):
    (tmp_path / "pos.txt").write_text("4HPwATDgc/ABMA 31\n")
    (tmp_path / "out.jsonl.resume.json").mkdir()
    err = one_line_error(run("analyze", tmp_path / "pos.txt", "-o", tmp_path / "out.jsonl",
                             "--ply", "0"))
    assert "cannot write run record" in err and "it is a directory" in err
    assert not (tmp_path / "out.jsonl").exists()


def test_training_refuses_to_overwrite_without_resume(tmp_path):
    out = tmp_path / "t.npz"
    out.write_text("notes")
    assert "--resume" in one_line_error(run("train", "td", out, "--games", "1", "--quiet"))
    assert out.read_text() == "notes"


def test_a_resumed_training_keeps_its_settings(tmp_path):
    out = tmp_path / "t.npz"
    args = ("train", "td", out, "--hidden", "8", "--threads", "1", "--quiet")
    assert run(*args, "--games", "16").exit_code == 0
    err = one_line_error(run(*args, "--games", "32", "--resume", "--seed", "7", "--hidden", "9"))
    assert "has --hidden 8, --seed 0" in err
    # the same command line resumes
    assert run(*args, "--games", "24", "--resume").exit_code == 0
    r = run("train", "td", out, "--games", "32", "--resume", "--alpha", "0.05", "--quiet",
            "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["games_done"] == 32


def test_met_output_directory(tmp_path):
    assert "no directory" in one_line_error(run("met", "--generate", "--length", "5", "--output", ""))
    one_line_error(run("met", "--generate", "--length", "5", "--output", "/proc/bgfast-met"))
    (tmp_path / "file").write_text("x")
    one_line_error(run("met", "--generate", "--length", "5", "--output", tmp_path / "file"))
    r = run("met", "--generate", "--length", "5", "--output", tmp_path / "mt")
    assert r.exit_code == 0
    assert len(list((tmp_path / "mt").glob("*.csv"))) == 2
    assert list((tmp_path / "mt").glob("*.tmp")) == []


@pytest.mark.parametrize("args", [
    ("met", "--gammon-rate", "0.2"),
    ("met", "--free-drop", "2=0.01"),
    ("met", "--generate", "--method", "zadeh", "--efficiency", "0.5"),
    ("rollout", START, "--all-rolls", "-d", "31", "-n", "10"),
    ("rollout", START, "--max-plays", "3", "-n", "10"),
    ("rollout", START, "--all-rolls", "--max-plays", "3", "-n", "10"),
    ("rollout", START, "--address", "127.0.0.1:6379", "-n", "10"),
    ("analyze", "-", "--address", "127.0.0.1:6379"),
    ("analyze-match", MAT, "--address", "127.0.0.1:6379"),
    ("analyze-match", MAT, "--format", "html"),
    ("bearoff", "build", "--two-sided", "6x2", "--checkers", "3", "-o", "{tmp}/b.bgb"),
    ("analyze-match", MAT, "--format", "jsonl"),
])
def test_options_that_do_nothing_here_are_usage_errors(tmp_path, args):
    one_line_error(run(*(a.format(tmp=tmp_path) for a in args)))
    assert list(tmp_path.iterdir()) == []


def test_a_resumed_match_keeps_its_own_settings(tmp_path):
    save = tmp_path / "m.json"
    r = run("play", "--seed", "5", "--opponent", "beginner", "--you", "beginner", "--match", "3",
            "--save", save, "--json")
    assert r.exit_code == 0 and save.exists()
    err = one_line_error(run("play", "--resume", save, "--match", "5", "--max-cube", "8"))
    assert "drop --match, --max-cube" in err


def test_max_plays_with_dice_ranks_that_many_plays():
    r = run("rollout", START, "-d", "31", "--max-plays", "2", "-n", "36", "--cubeless", "-j", "1",
            "--json")
    assert r.exit_code == 0 and len(json.loads(r.stdout)["plays"]) == 2


def test_a_table_file_that_is_not_text(tmp_path):
    for part in ("pre", "post"):
        (tmp_path / f"g.{part}-crawford.csv").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(DatabaseError, match="not UTF-8"):
        met.get_table(str(tmp_path / "g"))
    assert "not UTF-8" in one_line_error(run("met", "--table", tmp_path / "g"))


def test_a_table_whose_two_sides_do_not_add_up(tmp_path):
    good = met.get_table()
    pre = np.array(good.pre)
    pre[0, 0] = 0.9                      # 1-away against 1-away: 90% for both sides
    with pytest.raises(DatabaseError, match="add up to 1.8"):
        met.MatchEquityTable("bad", pre, good.post)
    pre = np.array(good.pre)
    pre[2, 4] += 0.01                    # 3-away against 5-away, and not 5 against 3
    with pytest.raises(DatabaseError, match="3-away against 5-away"):
        met.MatchEquityTable("bad", pre, good.post)
    met.MatchEquityTable("rounded", np.round(good.pre, 3), good.post)   # printed to 0.1%


def _net_file(path, **change):
    """The four-round net with arrays or its metadata changed, saved with a
    matching checksum (so that only the change is wrong)."""
    with np.load("data/net/four-rounds.npz") as z:
        a = {k: z[k] for k in z.files}
    for k, v in change.items():
        a[k] = v
    arrays = {k: a[k] for k in ("w1", "b1", "w2", "b2")}
    a["checksum"] = np.array(net.checksum(**arrays, one_sided=None))
    np.savez(path, **a)
    return path


def test_a_net_with_weights_that_are_not_finite(tmp_path):
    with np.load("data/net/four-rounds.npz") as z:
        b2 = z["b2"].copy()
    b2.flat[0] = np.nan
    path = _net_file(tmp_path / "nan.npz", b2=b2)
    with pytest.raises(net.NetFileError, match="not all finite"):
        net.load(path)
    # a new process: this one has loaded its net already
    r = subprocess.run([sys.executable, "-m", "bgfast", "evaluate", START], capture_output=True,
                       text=True, env={**os.environ, "BGFAST_NET": str(path)}, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "not all finite" in err[0]


@pytest.mark.parametrize("meta", ["[1, 2]", '"text"'])
def test_a_net_whose_metadata_is_not_an_object(tmp_path, meta):
    path = _net_file(tmp_path / "meta.npz", meta=np.array(meta))
    with pytest.raises(net.NetFileError, match="metadata is not a JSON object"):
        net.load(path)
    one_line_error(run("duel", "pubeval", path, "--games", "2"))


def test_both_sides_borne_off_is_not_a_position():
    with pytest.raises(InvalidPositionError, match="neither side has a checker"):
        Position.from_position_id("AAAAAAAAAAAAAA")
    assert "neither side" in one_line_error(run("evaluate", "AAAAAAAAAAAAAA"))
    # one side borne off is a finished game, and a position
    over = np.zeros((2, 25), np.uint8)
    over[1, 5] = 3
    assert Position(over).position_id()
