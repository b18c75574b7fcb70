"""Are the rollouts' standard errors what they claim?  Each engine rolls out a
position many times with different seeds, at the settings of
``bench/compare_rollout.py`` (0-ply nets playing and evaluating, cubeless,
quasi-random dice, variance reduction on, games played to the end, one
thread), and the spread of its means across the seeds (the empirical
standard error) is set beside the standard error it reports.

Both engines stratify the first two rolls (quasi-random dice), and both
compute their standard error as if the games were independent, so a
reported standard error can overstate the real one.  Comparing the engines
at equal standard error (bench/compare_rollout.py) is fair when the two
overstate theirs alike: the last column gives the ratio of empirical to
reported variance for each, and the "bgfast / gnubg" line the ratio of the
engines' empirical variances at the same trials.

Run: python bench/rollout_se_spread.py [--positions race opening] [--trials 1296]
     [--seeds 30] [--gnubg-seeds 30] [--first-seed 100]
"""
import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import os
import sys
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
# this tree's bgfast, not an installed one
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from compare_rollout import GNUBG, POSITIONS, bgfast_settings, gnubg_run_once  # noqa: E402

from bgfast.position import Position  # noqa: E402
from bgfast.rollout import rollout  # noqa: E402


def spread(means, ses):
    """(mean, empirical SE, its SE, reported SE, empirical / reported variance)."""
    m, s = np.asarray(means), np.asarray(ses)
    emp = float(m.std(ddof=1))
    rep = float(np.sqrt((s ** 2).mean()))
    return float(m.mean()), emp, emp / np.sqrt(2 * (len(m) - 1)), rep, emp ** 2 / rep ** 2


def bgfast_spread(pid, trials, seeds, first):
    pos = Position.from_position_id(pid)
    means, ses = [], []
    for k in range(seeds):
        r = rollout(pos, bgfast_settings(trials, True, seed=first + k))
        means.append(r.equity)
        ses.append(r.stderr["equity"])
    return spread(means, ses)


def gnubg_spread(pid, trials, seeds, first):
    means, ses = [], []
    for k in range(seeds):
        _w, _c, res = gnubg_run_once(pid, trials, True, digits=5, seed=first + k)
        if res is None:
            raise SystemExit("gnubg printed no rollout result")
        means.append(res[1])
        ses.append(res[2])
    return spread(means, ses)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", nargs="+", default=["race", "opening"], choices=list(POSITIONS))
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--seeds", type=int, default=30, help="bgfast rollouts per position")
    ap.add_argument("--gnubg-seeds", type=int, default=30, help="gnubg rollouts per position")
    ap.add_argument("--first-seed", type=int, default=100, help="the seeds are this one and on")
    args = ap.parse_args()
    if not os.path.exists(GNUBG):
        raise SystemExit(f"this comparison needs gnubg ({GNUBG}; Debian package gnubg)")
    if args.seeds < 2 or args.gnubg_seeds < 2:
        raise SystemExit("a spread needs at least 2 seeds per engine")
    print(f"{args.trials} trials a rollout, variance reduction, 0 ply, to the end")
    print("| position | engine | seeds | mean equity | empirical SE | reported SE | "
          "empirical / reported variance |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in args.positions:
        pid = POSITIONS[name]
        rows = [("bgfast", args.seeds, bgfast_spread(pid, args.trials, args.seeds, args.first_seed)),
                ("gnubg", args.gnubg_seeds,
                 gnubg_spread(pid, args.trials, args.gnubg_seeds, args.first_seed))]
        for engine, n, (mean, emp, emp_se, rep, ratio) in rows:
            print(f"| {name} `{pid}` | {engine} | {n} | {mean:+.5f} | {emp:.6f} ± {emp_se:.6f} | "
                  f"{rep:.6f} | {ratio:.2f} |", flush=True)
        (b, g) = (rows[0][2], rows[1][2])
        print(f"| {name} | bgfast / gnubg variance | | | {b[1] ** 2 / g[1] ** 2:.2f} | "
              f"{b[3] ** 2 / g[3] ** 2:.2f} | |", flush=True)


if __name__ == "__main__":
    main()
