#!/usr/bin/env python
"""Mutation check of the rule modules: do the tests catch small, real bugs?

Each mutant in :data:`MUTANTS` is one small change of one source file (an
exact piece of text and its replacement) with the test files that should
catch it.  The script copies the project to a scratch directory once, then
for each mutant in turn applies it, rebuilds the one kernel it touches (a
``.pyx`` mutant: ``BGFAST_ONLY=<kernel> setup.py build_ext``, release flags),
runs its test files (``pytest -x -q``, niced), and puts the file (and the
kernel) back.  A mutant is *killed* when its tests fail (or crash or time
out) and *survives* when they pass; a mutant whose kernel does not build is
an error, left out of the score.  Before the mutants, the tests run once on
the unmutated copy, which must pass.

    python tools/mutation.py                 # every mutant (about 10 minutes on 2 cores)
    python tools/mutation.py --only C1,R3    # some of them
    python tools/mutation.py --list          # the table
    python tools/mutation.py --check         # each original text found exactly once

The exit status is 0 when the score (killed / (killed + survived)) is at
least ``--min-score`` percent (default 90) and nothing went wrong.  The
``.pyx`` mutants need the build requirements (Cython, setuptools) installed.
``tests/test_mutation.py`` checks the table against the sources in the
default run, and runs the whole check when asked for the slow tests.

mutmut is not used: it mutates Python code only (the kernels are Cython),
generates every mutant it can (thousands here, hours on two cores), and
copies the tree to a directory of its own without the compiled kernels.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str            # relative to the project root
    original: str        # found exactly once in the file
    mutated: str
    tests: tuple         # test files (relative paths) that should fail
    what: str

    @property
    def kernel(self) -> str | None:
        """The Cython kernel to rebuild (``_cube`` for ``bgfast/_cube.pyx``), else None."""
        p = Path(self.path)
        return p.stem if p.suffix == ".pyx" else None


def M(id, path, original, mutated, tests, what):
    tests = (tests,) if isinstance(tests, str) else tuple(tests)
    return Mutant(id, path, original, mutated, tuple(f"tests/{t}" for t in tests), what)


GAME, CUBE, MET, FORMATS = "bgfast/game.py", "bgfast/cube.py", "bgfast/met.py", "bgfast/formats.py"
METGEN = "bgfast/metgen.py"
ANALYZE, ROLLOUT, MOVEGEN = "bgfast/analyze.py", "bgfast/rollout.py", "bgfast/movegen.py"

#: The mutants: id, file, original text, mutated text, test files, what it breaks.
MUTANTS = [
    # -- game ------------------------------------------------------------------
    M("G1", GAME, "    if int(loser.sum()) < 15:", "    if int(loser.sum()) <= 15:",
      "test_game.py", "every win scored as a single game"),
    M("G2", GAME, "    if loser[18:25].any():", "    if loser[18:24].any():",
      "test_game.py", "a checker on the bar does not make a backgammon"),
    M("G3", GAME, "        return self.is_money and self.rules.jacoby and self.cube_value == 1",
      "        return self.is_money and self.rules.jacoby and self.cube_value <= 2",
      "test_game.py", "Jacoby still active after the cube is turned"),
    M("G4", GAME, "        return max(before) < mp <= max(after) < self.length",
      "        return max(before) <= mp <= max(after) < self.length",
      "test_game.py", "a second Crawford game"),
    M("G5", GAME, "post_crawford=any(x.crawford for x in self.games), position=position,",
      "post_crawford=False, position=position,", ["test_game.py", "test_matfile.py"],
      "the game after the Crawford game is not post-Crawford"),
    M("G6", GAME, "and (self.cube_owner is None or self.cube_owner == player)",
      "and (self.cube_owner is None or self.cube_owner != player)",
      "test_game.py", "the player without the cube may double"),
    M("G7", GAME, "        if self._first_turn:\n            return \"not before the first roll of the game\"\n",
      "",
      "test_game.py", "doubling before the first roll of the game"),
    M("G8", GAME, "        self.cube_owner = taker\n", "        self.cube_owner = self.turn\n",
      "test_game.py", "the doubler keeps the cube after a take"),
    M("G9", GAME, "        self.turn = 0 if d0 > d1 else 1", "        self.turn = 0 if d0 < d1 else 1",
      "test_game.py", "the lower opening die starts"),
    M("G10", GAME, "                s[g.result.winner] += g.result.points",
      "                s[g.result.winner] += g.result.cube",
      "test_game.py", "match score ignores gammons"),
    M("G11", GAME, "GameResult(winner, counted, int(counted) * cube, cube, how)",
      "GameResult(winner, counted, int(kind) * cube, cube, how)",
      "test_game.py", "Jacoby gammons scored in full"),
    # -- cube (Python) -----------------------------------------------------------
    M("C1", CUBE, '"take_live": (L - 0.5) / (W + L + 0.5),', '"take_live": (L - 0.5) / (W + L),',
      "test_cube.py", "money live take point: wrong denominator"),
    M("C2", CUBE, '"cash_dead": 1.0 - (W - 0.5) / (W + L),',
      '"cash_dead": 1.0 - (W - 0.5) / (W + L + 0.5),',
      "test_cube.py", "money dead cash point: the live denominator"),
    M("C3", CUBE, '        jac = rules.jacoby and owner == "centre"', "        jac = rules.jacoby",
      "test_cube.py", "money Jacoby ignores the cube owner"),
    M("C4", CUBE, "    return 2 * w - 1 + wg - lg + wb - lb", "    return 2 * w - 1 + wg - lg",
      "test_cube.py", "cubeless equity without backgammons"),
    M("C5", "bgfast/_cube.pyx", "        t = _clip01((pips - eff[4]) / (eff[5] - eff[4]))\n",
      "        t = (pips - eff[4]) / (eff[5] - eff[4])\n",
      "test_cube.py", "race efficiency above 0.7 past 120 pips"),
    M("C6", CUBE, '    if cube == 1 and owner != "centre":', '    if cube == 1 and owner == "opp":',
      "test_cube.py", "an owned 1-cube accepted"),
    M("C7", CUBE, '        can_double = owner != "opp"', "        can_double = True",
      "test_cube.py", "money: the cube's non-owner may double"),
    # -- cube (kernel) -----------------------------------------------------------
    M("K1", "bgfast/_cube.pyx", "    m.tp = (m.L - 0.5) / (m.W + m.L + 0.5)\n",
      "    m.tp = (m.L - 0.5) / (m.W + m.L)\n",
      "test_cube.py", "kernel money take point: wrong denominator"),
    M("K2", "bgfast/_cube.pyx", "    post = (a == 1 or b == 1) and r.state != PRE",
      "    post = (a == 1 or b == 1) and r.state == POST",
      "test_cube.py", "a Crawford game's loss leads to another Crawford game"),
    M("K3", "bgfast/_cube.pyx", "    return r.state != CRAWFORD and (r.cube << j) < r.a",
      "    return r.state != CRAWFORD and (r.cube << j) <= r.a",
      "test_cube.py", "doubling a dead cube"),
    # -- match equity tables -------------------------------------------------------
    M("T1", MET, "            return 1.0 - float(self.post[b - 1]) if a == 1 else float(self.post[a - 1])",
      "            return float(self.post[b - 1]) if a == 1 else 1.0 - float(self.post[a - 1])",
      "test_met.py", "post-Crawford MWC of the wrong side"),
    M("T2", MET, "        return float(self.pre[a - 1, b - 1])", "        return float(self.pre[b - 1, a - 1])",
      "test_met.py", "pre-Crawford table read transposed"),
    M("T3", MET, "        return (self.away_me == 1 or self.away_opp == 1) and not self.crawford",
      "        return self.away_me == 1 and not self.crawford",
      ["test_met.py", "test_cube.py"], "post-Crawford only when I lead"),
    M("T4", METGEN, "        post[j] = win_rate * ((1 - gammon_rate) * val(j - 2) + gammon_rate * val(j - 4))",
      "        post[j] = win_rate * ((1 - gammon_rate) * val(j - 2) + gammon_rate * val(j - 3))",
      "test_met.py", "generated post-Crawford gammons worth 3 points"),
    M("T5", MET, "            if s >= self.length:", "            if s > self.length:",
      ["test_met.py", "test_cube.py"], "a score equal to the match length accepted"),
    # -- formats -----------------------------------------------------------------
    M("F1", FORMATS, '                jacoby=not v["no_jacoby"],', '                jacoby=bool(v["no_jacoby"]),',
      "test_formats.py", "Match ID Jacoby bit read uninverted"),
    M("F2", FORMATS, "            crawford=bool(self.match_length and self.rules & 1),",
      "            crawford=bool(self.rules & 1),",
      "test_formats.py", "XGID money Jacoby read as Crawford"),
    M("F3", FORMATS, "            score=(self.score2, self.score1),", "            score=(self.score1, self.score2),",
      "test_formats.py", "XGID scores swapped"),
    M("F4", FORMATS, "        if not 1 <= v <= 6:", "        if not 0 <= v <= 6:",
      "test_formats.py", "a die of 0 accepted"),
    M("F5", FORMATS, '                score=(v["score0"], v["score1"]),',
      '                score=(v["score1"], v["score0"]),',
      "test_formats.py", "Match ID scores swapped"),
    M("F6", FORMATS, "            rules = int(state.crawford)", "            rules = 0",
      "test_formats.py", "XGID loses the Crawford flag"),
    # -- move generation -------------------------------------------------------------
    M("V1", MOVEGEN, "np.where(ALL_ROLLS[:, 0] == ALL_ROLLS[:, 1], 1, 2)",
      "np.where(ALL_ROLLS[:, 0] == ALL_ROLLS[:, 1], 2, 1)",
      "test_movegen.py", "doubles weighted as two of the 36 rolls"),
    M("V2", MOVEGEN, "    hit = results[:, 1, 24] > before_bar", "    hit = results[:, 1, 24] >= before_bar",
      "test_movegen.py", "every roll counted as a shot"),
    M("V3", "bgfast/_movegen.pyx", "    if g.outside == 0 and (cand & low):",
      "    if g.outside <= 1 and (cand & low):",
      "test_movegen.py", "bearing off with a checker outside the home board"),
    M("V4", "bgfast/_movegen.pyx", "        first_pass = g.n if g.best == 1 else g.start",
      "        first_pass = g.start",
      "test_movegen.py", "the higher-die rule not applied"),
    # -- analysis ------------------------------------------------------------------
    M("A1", ANALYZE, "        if number <= start_after or not text", "        if number < start_after or not text",
      "test_analyze.py", "read_records keeps line start_after"),
    M("A2", ANALYZE, "        for number, block in _blocks(it, start + 1, size,",
      "        for number, block in _blocks(it, start, size,",
      "test_analyze.py", "resumed blocks numbered one line early"),
    M("A3", CUBE, "            owner = Owner.ME if game.cube_owner == player else Owner.OPP",
      "            owner = Owner.OPP if game.cube_owner == player else Owner.ME",
      "test_analyze.py", "match analysis gives the cube to the wrong side"),
    M("A4", ANALYZE, '    out["double"] = min(out["take"], out["pass"], key=lambda v: v[0])',
      '    out["double"] = max(out["take"], out["pass"], key=lambda v: v[0])',
      "test_analyze.py", "a double valued at the taker's worse answer"),
    M("A5", ANALYZE, '    out["best"] = out["double"] if dec.action.doubles else out["no_double"]',
      '    out["best"] = out["no_double"] if dec.action.doubles else out["double"]',
      "test_analyze.py", "the proper cube action's value swapped"),
    M("A6", ANALYZE, '"best": "take" if v["take"][0] <= v["pass"][0] else "pass"',
      '"best": "take" if v["take"][0] >= v["pass"][0] else "pass"',
      "test_analyze.py", "take and pass swapped in a take row"),
    M("A7", ANALYZE, "        if loss >= limit:", "        if loss > limit:",
      "test_analyze.py", "a loss at a threshold not flagged"),
    M("A8", ANALYZE, '        kind = "checker" if r["kind"] == "checker" else "cube"',
      '        kind = "cube" if r["kind"] == "cube" else "checker"',
      "test_analyze.py", "take decisions summed as checker plays"),
    # -- rollouts --------------------------------------------------------------------
    M("R1", ROLLOUT, "        se = np.sqrt(m2 / (n - 1) / n) if n > 1", "        se = np.sqrt(m2 / n / n) if n > 1",
      "test_rollout.py", "standard error from the biased standard deviation"),
    M("R2", ROLLOUT, "== s.trials) and done >= s.min_trials\n", "== s.trials)\n",
      "test_rollout.py", "the stderr target ignores min_trials"),
    M("R3", ROLLOUT, "        yield a, n\n", "        yield a % step, n\n",
      "test_rollout.py", "stderr-target batches restart at trial 0"),
    M("R4", ROLLOUT, "        return np.r_[v[[0, 3, 4, 1, 2]], v[5]]", "        return np.r_[v[:5], v[5]]",
      "test_rollout.py", "a flipped result's standard errors not reordered"),
    M("R6", ROLLOUT, "    return np.r_[invert(v[:5]), -v[5]]", "    return np.r_[invert(v[:5]), v[5]]",
      "test_rollout.py", "a flipped result keeps the roller's equity"),
    M("R7", ROLLOUT, "    return sorted(out, key=lambda r: -r.value)", "    return sorted(out, key=lambda r: r.value)",
      "test_rollout.py", "rolled-out plays worst first"),
    M("R5", "bgfast/_rollout.pyx", "                o = P.perm[1][(trial + trial // 36) % 36]",
      "                o = P.perm[1][trial % 36]",
      "test_rollout.py", "the second quasi-random roll tied to the first"),
    M("R8", "bgfast/_rollout.pyx", "                o = P.perm[1][(trial + trial // 36) % 36]",
      "                o = P.perm[0][(trial + trial // 36) % 36]",
      "test_rollout.py", "the second quasi-random roll from the first roll's permutation"),
]


# ---------------------------------------------------------------------------

def check(root: Path = ROOT, mutants=MUTANTS) -> list[str]:
    """Problems with the table against the sources under ``root`` (empty: none)."""
    problems, seen = [], set()
    for m in mutants:
        if m.id in seen:
            problems.append(f"{m.id}: duplicate id")
        seen.add(m.id)
        path = root / m.path
        if not path.is_file():
            problems.append(f"{m.id}: no file {m.path}")
            continue
        n = path.read_text(encoding="utf-8").count(m.original)
        if n != 1:
            problems.append(f"{m.id}: the original text occurs {n} times in {m.path}, not once")
        if m.original == m.mutated:
            problems.append(f"{m.id}: the mutant changes nothing")
        if not m.tests:
            problems.append(f"{m.id}: no tests named")
        for t in m.tests:
            if not (root / t).is_file():
                problems.append(f"{m.id}: no test file {t}")
    return problems


def _project_files(root: Path) -> list[Path]:
    """The files to copy: git's tracked and untracked (not ignored) files and the built kernels."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=root, capture_output=True, check=True).stdout
        files = [Path(p) for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = [p.relative_to(root) for p in root.rglob("*") if p.is_file()
                 and not {".git", "build", "__pycache__"} & set(p.relative_to(root).parts)]
    files += [p.relative_to(root) for p in (root / "bgfast").glob("_*.so")]
    return sorted({f for f in files if (root / f).is_file()})


def scratch_copy(root: Path, dest: Path) -> None:
    for rel in _project_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)


def _env(scratch: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(scratch) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"   # no stale .pyc of a mutant within the same second
    env.pop("BGFAST_DEBUG", None)
    env.pop("BGFAST_ONLY", None)
    return env


def _nice() -> list[str]:
    return ["nice", "-n", "10"] if shutil.which("nice") else []


def run_tests(scratch: Path, tests, timeout: float) -> tuple[str, float, str]:
    """``(outcome, seconds, last line)``: outcome ``pass``, ``fail``, ``timeout`` or ``error``."""
    cmd = _nice() + [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=scratch, env=_env(scratch), capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - t0, f"no result after {timeout:.0f} s"
    dt = time.monotonic() - t0
    lines = [x for x in (r.stdout + r.stderr).splitlines() if x.strip()]
    last = lines[-1] if lines else ""
    if r.returncode == 0:
        return "pass", dt, last
    if r.returncode == 1 or r.returncode < 0:          # failed tests, or a crash (signal)
        return "fail", dt, last if r.returncode > 0 else f"killed by signal {-r.returncode}"
    return "error", dt, f"pytest exit {r.returncode}: {last}"


def build_kernel(scratch: Path, kernel: str) -> tuple[bool, str]:
    env = _env(scratch)
    env["BGFAST_ONLY"] = kernel
    r = subprocess.run(_nice() + [sys.executable, "setup.py", "build_ext", "-i", "-q"], cwd=scratch,
                       env=env, capture_output=True, text=True)
    tail = [x for x in (r.stdout + r.stderr).splitlines() if "rror" in x][-1:]
    return r.returncode == 0, tail[0] if tail else ""


def _kernel_files(scratch: Path, kernel: str) -> list[Path]:
    return list((scratch / "bgfast").glob(f"{kernel}.*.so"))


def run_mutant(scratch: Path, m: Mutant, timeout: float) -> tuple[str, float, str]:
    """Apply ``m`` in ``scratch``, run its tests, put everything back.
    Outcome ``killed``, ``survived`` or ``error``."""
    path = scratch / m.path
    source = path.read_text(encoding="utf-8")
    saved = {}
    if m.kernel:
        saved = {p: p.read_bytes() for p in _kernel_files(scratch, m.kernel)}
    t0 = time.monotonic()
    try:
        path.write_text(source.replace(m.original, m.mutated, 1), encoding="utf-8")
        if m.kernel:
            ok, why = build_kernel(scratch, m.kernel)
            if not ok:
                return "error", time.monotonic() - t0, f"the kernel does not build: {why}"
        outcome, _dt, last = run_tests(scratch, m.tests, timeout)
    finally:
        path.write_text(source, encoding="utf-8")
        for p in _kernel_files(scratch, m.kernel) if m.kernel else []:
            if p not in saved:
                p.unlink()
        for p, data in saved.items():
            p.write_bytes(data)
    verdict = {"fail": "killed", "timeout": "killed", "pass": "survived"}.get(outcome, "error")
    return verdict, time.monotonic() - t0, last


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--list", action="store_true", help="print the mutants and exit")
    ap.add_argument("--check", action="store_true",
                    help="check that the table applies to the sources, and exit")
    ap.add_argument("--min-score", type=float, default=90.0, help="percent killed needed (default 90)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per test run (default 900)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run on the unmutated copy")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args(argv)

    mutants = MUTANTS
    if a.only:
        want = [x.strip() for x in a.only.split(",") if x.strip()]
        unknown = sorted(set(want) - {m.id for m in MUTANTS})
        if unknown:
            ap.error(f"no mutant {', '.join(unknown)}")
        mutants = [m for m in MUTANTS if m.id in want]
    if a.list:
        for m in mutants:
            print(f"{m.id:4} {m.path:22} {m.what}  [{' '.join(m.tests)}]")
        return 0
    problems = check(ROOT, mutants)
    if problems or a.check:
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{len(mutants)} mutants, {len(problems)} problems")
        return 1 if problems else 0
    if any(m.kernel for m in mutants):
        import importlib.util
        if importlib.util.find_spec("Cython") is None:
            print("Error: the .pyx mutants need the build requirements: pip install Cython setuptools",
                  file=sys.stderr)
            return 2

    scratch = Path(tempfile.mkdtemp(prefix="bgfast-mutation-"))
    try:
        scratch_copy(ROOT, scratch)
        if not a.no_baseline:
            tests = sorted({t for m in mutants for t in m.tests})
            outcome, dt, last = run_tests(scratch, tests, a.timeout)
            print(f"baseline ({len(tests)} test files): {outcome} in {dt:.0f} s: {last}", flush=True)
            if outcome != "pass":
                print("Error: the tests fail without any mutant", file=sys.stderr)
                return 1
        counts = {"killed": 0, "survived": 0, "error": 0}
        survivors = []
        for m in mutants:
            verdict, dt, last = run_mutant(scratch, m, a.timeout)
            counts[verdict] += 1
            if verdict == "survived":
                survivors.append(m)
            print(f"{m.id:4} {verdict:8} {dt:5.0f} s  {m.what}" + (f"  ({last})" if verdict == "error" else ""),
                  flush=True)
    finally:
        if a.keep:
            print(f"scratch copy kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    scored = counts["killed"] + counts["survived"]
    score = 100.0 * counts["killed"] / scored if scored else 0.0
    print(f"mutation score: {counts['killed']}/{scored} killed ({score:.1f}%), "
          f"{counts['error']} errors" + (f"; survived: {', '.join(m.id for m in survivors)}"
                                         if survivors else ""))
    return 0 if score >= a.min_score and not counts["error"] else 1


if __name__ == "__main__":
    sys.exit(main())
