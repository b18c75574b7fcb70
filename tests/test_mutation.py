"""The mutation check (tools/mutation.py): its table fits the sources, and
(slow) the tests kill at least 90% of its mutants."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "mutation.py"
RULE_MODULES = {"bgfast/game.py", "bgfast/cube.py", "bgfast/_cube.pyx", "bgfast/met.py", "bgfast/metgen.py",
                "bgfast/formats.py", "bgfast/movegen.py", "bgfast/_movegen.pyx",
                "bgfast/analyze.py", "bgfast/rollout.py", "bgfast/_rollout.pyx"}


@pytest.fixture(scope="module")
def mutation():
    spec = importlib.util.spec_from_file_location("bgfast_mutation", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # dataclasses look their module up
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def test_every_mutant_applies_to_the_current_sources(mutation):
    """Each original text occurs exactly once, each mutant changes it, and its test files exist."""
    assert mutation.check(ROOT) == []
    assert len(mutation.MUTANTS) >= 40
    assert {m.path for m in mutation.MUTANTS} == RULE_MODULES


def test_check_reports_a_rotten_entry(mutation, tmp_path):
    (tmp_path / "bgfast").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "bgfast" / "x.py").write_text("a = 1\na = 1\nb = 2\n")
    (tmp_path / "tests" / "test_x.py").write_text("")
    M = mutation.Mutant
    problems = mutation.check(tmp_path, [
        M("X1", "bgfast/x.py", "a = 1", "a = 2", ("tests/test_x.py",), "twice"),
        M("X2", "bgfast/x.py", "c = 3", "c = 4", ("tests/test_x.py",), "gone"),
        M("X3", "bgfast/x.py", "b = 2", "b = 2", ("tests/test_y.py",), "no change, no test file"),
        M("X3", "bgfast/y.py", "b = 2", "b = 3", ("tests/test_x.py",), "same id, no file"),
    ])
    assert problems == [
        "X1: the original text occurs 2 times in bgfast/x.py, not once",
        "X2: the original text occurs 0 times in bgfast/x.py, not once",
        "X3: the mutant changes nothing", "X3: no test file tests/test_y.py",
        "X3: duplicate id", "X3: no file bgfast/y.py"]


def test_check_command():
    r = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("0 problems")


@pytest.mark.slow
def test_the_tests_kill_at_least_90_percent_of_the_mutants():
    """The whole mutation run: about 10 minutes on two cores."""
    r = subprocess.run([sys.executable, str(SCRIPT), "--min-score", "90"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "mutation score:" in r.stdout
