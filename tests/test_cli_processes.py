"""Every command that starts workers or shows progress, run for real: it
returns on a pipe with no process left behind (D12), shows one progress bar
on a terminal and nothing on a pipe (D16)."""
import pytest
from click.testing import CliRunner

from bgfast.cli import main

from procs import run_on_terminal, run_piped, running

START = "4HPwATDgc/ABMA"


@pytest.fixture(scope="module")
def mat_file(tmp_path_factory):
    from bgfast import matfile
    from bgfast.game import Match
    from bgfast.players import Beginner, Heuristic, play_match

    path = tmp_path_factory.mktemp("match") / "m.mat"
    matfile.dump(play_match(Match(1, seed=5, names=("A", "B")), (Heuristic(), Beginner(seed=2))),
                 path)
    return path


def _commands(tmp, mat):
    """(name, arguments, a marker in the command line) of each command."""
    src = tmp / "two.txt"
    src.write_text(f"{START}\nAwAA4AYAAAAAAA 31\n")
    return [
        ("analyze --rollout", ["analyze", src, "--rollout", "36", "-j", "2"], str(src)),
        ("analyze -o", ["analyze", src, "--rollout", "36", "-j", "2", "-o", tmp / "a.jsonl"],
         str(tmp / "a.jsonl")),
        ("analyze-match", ["analyze-match", mat, "-j", "2", "-o", tmp / "m.csv"],
         str(tmp / "m.csv")),
        ("rollout", ["rollout", START, "-n", "400", "-t", "6", "-j", "2", "--seed", "918273645",
                     "--policy", "pubeval", "-e", "composite"], "918273645"),
        ("rollout --dice", ["rollout", START, "-d", "31", "-n", "72", "-t", "4", "-j", "2",
                            "--max-plays", "3", "--seed", "918273646"], "918273646"),
        ("duel", ["duel", "pubeval", "beginner", "--games", "40", "--seed", "918273647"],
         "918273647"),
        ("train", ["train", tmp / "n.npz", "--games", "16", "--hidden", "4", "--round-games", "8"],
         str(tmp / "n.npz")),
        ("bearoff build", ["bearoff", "build", "--one-sided", "5", "-o", tmp / "o5.bgb"],
         str(tmp / "o5.bgb")),
        ("data positions", ["data", "positions", "-n", "60", "--seed", "3", "--players",
                            "pubeval=1,beginner=1", "-o", tmp / "p.bgtd", "-j", "2"],
         str(tmp / "p.bgtd")),
    ]


_BAR = (b"%|", b"it/s", b"ETA", b"\r")


def _returns_on_a_pipe(name, args, marker):
    r = run_piped(args, timeout=180)          # returns only once every holder of the pipe ended
    assert r.returncode == 0, (name, r.stderr)
    assert r.stdout or name == "analyze -o", name
    assert not running(marker), f"{name} left a process behind"
    assert not any(mark in r.stderr for mark in _BAR), (name, r.stderr)   # no progress


def test_worker_commands_return_on_a_pipe_leaving_no_process(tmp_path, mat_file):
    """The commands with local worker processes besides analyze (which
    test_analyze checks the same way)."""
    for name, args, marker in _commands(tmp_path, mat_file):
        if name in ("rollout", "analyze-match", "data positions"):
            _returns_on_a_pipe(name, args, marker)


@pytest.mark.slow
def test_every_command_returns_on_a_pipe_leaving_no_process_or_progress(tmp_path, mat_file):
    for name, args, marker in _commands(tmp_path, mat_file):
        _returns_on_a_pipe(name, args, marker)


def test_every_command_shows_one_bar_on_a_terminal_only(tmp_path, mat_file, monkeypatch):
    """In process: with stderr a terminal each command draws its bar there;
    otherwise (the test runner's stderr) nothing."""
    from bgfast import _progress

    monkeypatch.setattr(_progress, "DELAY", 0)
    monkeypatch.delenv("BGFAST_PROGRESS", raising=False)
    runner = CliRunner()
    for terminal in (False, True):
        monkeypatch.setattr(_progress, "on_terminal", lambda: terminal)
        for name, args, _ in _commands(tmp_path, mat_file):
            r = runner.invoke(main, [str(a) for a in args] + (["--resume"] * (name == "train")))
            assert r.exit_code == 0, (name, r.output)
            # a bar redraws itself on its line ('\r'), and ends it at 100%
            bars = [line for line in r.stderr.split("\n") if "%|" in line]
            assert len(bars) == terminal and all("100%|" in b for b in bars), \
                (name, terminal, r.stderr)


def test_a_real_terminal_gets_the_bar(tmp_path):
    """D16 as a user sees it: a job of a few seconds (well past the bar's
    DELAY, about 2.4 s on an idle machine) with stderr on a pseudo-terminal
    shows the bar (on a pipe, stderr is empty: above)."""
    status, stdout, terminal = run_on_terminal(["bearoff", "build", "--one-sided", "9",
                                                "-o", tmp_path / "o9.bgb"])
    assert status == 0 and stdout.startswith(b"wrote ")
    assert b"100%|" in terminal and b"one-sided 9x15" in terminal
