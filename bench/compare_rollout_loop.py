"""The net-policy rollout loop beside gnubg's, at equal settings, in one run.

    python bench/compare_rollout_loop.py [--repeat 5] [--positions opening,race]
        [--tree PATH ...]

Both engines on one core, cubeless, quasi-random dice, no variance
reduction, games played to the end, their nets playing and evaluating at
0-ply: bgfast ``RolloutSettings(policy="net", evaluator="net",
early_stop=False, variance_reduction=False, jobs=1, backend="serial")``;
Debian gnubg ``-t`` with ``set threads 1``, chequer play 0-ply, prune off,
bear-off truncation off.  Rates are CPU seconds (the machine is shared:
CPU time is steadier than wall time), gnubg's as the difference of two
trial counts so that its start-up does not count.  Each ``--tree`` (a
bgfast source tree with built kernels; default: the one this script sits
in) is timed in its own process; the runs of all trees and of gnubg are
interleaved and each figure is the median of ``--repeat``.
"""
from __future__ import annotations

import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

POSITIONS = {"opening": "4HPwATDgc/ABMA", "middle": "mNvgAQaw5+ABMA",
             "race": "7bbFAADbtmkAAA", "holding": "bJ4LBwBYz8EBAw"}
GNUBG = "/usr/games/gnubg"
GNUBG_SCRIPT = """set threads 1
set jacoby off
new game
set board {pid}
set rollout trials {trials}
set rollout chequerplay plies 0
set rollout cubedecision plies 0
set rollout chequerplay prune off
set rollout cubeful off
set rollout varredn off
set rollout quasirandom on
set rollout seed 1
set rollout truncation enable off
set rollout bearofftruncation exact off
set rollout bearofftruncation onesided off
set rollout later enable off
rollout
"""
# run in a fresh process with the tree first on sys.path: prints games per CPU second
BGFAST_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
import bgfast
assert bgfast.__file__.startswith(sys.argv[1]), bgfast.__file__
from bgfast.evaluate import install_bearoff_tables
from bgfast.position import Position
from bgfast.rollout import RolloutSettings, rollout
install_bearoff_tables()
pos = Position.from_position_id(sys.argv[2])
n = int(sys.argv[3])
def settings(t):
    return RolloutSettings(trials=t, seed=1, policy="net", evaluator="net", early_stop=False,
                           variance_reduction=False, jobs=1, backend="serial")
rollout(pos, settings(72))
t0 = time.process_time()
rollout(pos, settings(n))
print(n / (time.process_time() - t0))
"""


def gnubg_seconds(pid: str, trials: int) -> float:
    """CPU seconds of a gnubg process rolling out ``pid``."""
    with tempfile.NamedTemporaryFile("w", suffix=".gnubg", delete=False) as fh:
        fh.write(GNUBG_SCRIPT.format(pid=pid, trials=trials))
        path = fh.name
    try:
        before = os.times()
        with open(path) as inp:
            subprocess.run([GNUBG, "-t", "-q"], stdin=inp, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True, timeout=1800)
        after = os.times()
    finally:
        os.unlink(path)
    return (after.children_user + after.children_system
            - before.children_user - before.children_system)


def bgfast_rate(tree: str, pid: str, trials: int) -> float:
    out = subprocess.run([sys.executable, "-c", BGFAST_CHILD, tree, pid, str(trials)],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--positions", default=",".join(POSITIONS))
    ap.add_argument("--tree", action="append", default=None,
                    help="a bgfast tree to time (repeatable; default: this one)")
    args = ap.parse_args()
    trees = [os.path.abspath(t) for t in (args.tree or [os.path.join(os.path.dirname(__file__), "..")])]
    have_gnubg = os.path.exists(GNUBG)
    print(f"# one core, CPU time, medians of {args.repeat}; load average at start "
          f"{os.getloadavg()[0]:.1f}")
    head = "| position | gnubg games/s | " + " | ".join(
        f"bgfast {os.path.basename(os.path.normpath(t))} games/s | ratio" for t in trees) + " |"
    print(head)
    print("|" + " --- |" * (2 + 2 * len(trees)))
    for name in args.positions.split(","):
        pid = POSITIONS[name]
        trials = 10368 if name == "race" else 2592
        small, big = (144, 2592) if name == "race" else (36, 324)
        rates = {t: [] for t in trees}
        grates = []
        for _ in range(args.repeat):
            for t in trees:
                rates[t].append(bgfast_rate(t, pid, trials))
            if have_gnubg:
                grates.append((big - small) / (gnubg_seconds(pid, big) - gnubg_seconds(pid, small)))
        g = statistics.median(grates) if grates else None
        cells = []
        for t in trees:
            b = statistics.median(rates[t])
            cells += [f"{b:,.0f}", "n/a" if g is None else f"{b / g:.1f}x"]
        print(f"| {name} | {'n/a' if g is None else f'{g:,.0f}'} | " + " | ".join(cells) + " |",
              flush=True)


if __name__ == "__main__":
    main()
