"""The one-sided race net's cost and variance in rollouts of long races.

For each race position (both sides beyond the 10-point race table, or one
side), 0-ply rollouts (the net playing and evaluating, quasi-random dice,
games to the end, one process) with the shipped net, whose one-sided race
net values the races beyond the table, and with the same nets without it
(the race net values them; ``data/net/round-15.npz``, or ``--against``
another file: ``data/net/round-16.npz``, whose one-sided race net leaves
the races with a checker on the points 19-24 to the race net), with and without
variance reduction, interleaved and repeated: games per second of CPU
time (medians), the equity with its standard error, the variance per game
(games x SE^2) and the speed at equal standard error (games/s over the
variance), as a ratio of the two.

Run: python bench/race_one_sided.py [--games 2592] [--repeat 3] [--positions ID ...]
     [--against PATH] (--positions far: FAR_POSITIONS)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # this checkout

from bgfast.position import Position  # noqa: E402
from bgfast.rollout import RolloutSettings, rollout  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: long races of the full benchmark (the farthest checkers of the side not on roll
#: and of the side on roll; pips): 11 and 13 (97, 89), 14 and 10 (105, 98), 15 and 6 (67, 37)
POSITIONS = ("ansrAQDq+kQGAA", "svsiCQBin+sAAA", "/z4BEAC2uw8AAA")
#: races of the full benchmark with a checker in the other side's home board, the side on
#: roll saving the gammon (pips 129 against 41, and 90 against 18)
FAR_POSITIONS = ("u90BAADy3eBAAA", "7QIAANvcDAgCAA")


def _one(position, vr, games):
    """One rollout in this process (its net: $BGFAST_NET): games/s, equity, SE."""
    s = RolloutSettings(trials=games, variance_reduction=vr, seed=1, jobs=1, policy="net", evaluator="net")
    t = time.process_time()
    r = rollout(Position.from_position_id(position), s)
    print(games / (time.process_time() - t), r.mean["equity"], r.stderr["equity"])


def _run(position, net_path, vr, games):
    """_one in a process of its own whose default net is net_path."""
    out = subprocess.run([sys.executable, __file__, "--one", position, str(int(vr)), str(games)],
                         env={**os.environ, "BGFAST_NET": net_path}, capture_output=True, text=True,
                         check=True).stdout.split()
    return tuple(float(x) for x in out[-3:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=2592)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--positions", nargs="*", default=list(POSITIONS))
    ap.add_argument("--against", default=os.path.join(ROOT, "data", "net", "round-15.npz"),
                    help="the weights file whose race net values the races (default: round 15's)")
    args = ap.parse_args()
    if args.positions == ["far"]:
        args.positions = list(FAR_POSITIONS)
    nets = {"one-sided": os.path.join(ROOT, "bgfast", "data", "net", "bgfast-net.npz"),
            "race net": args.against}
    print("| position | VR | one-sided g/s | race net g/s | ratio | one-sided equity | race net equity "
          "| var/game one-sided | race net | equal SE |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for pos in args.positions:
        for vr in (True, False):
            rates = {k: [] for k in nets}
            res = {}
            for _ in range(args.repeat):
                for k, path in nets.items():
                    rate, eq, se = _run(pos, path, vr, args.games)
                    rates[k].append(rate)
                    res[k] = (eq, se)
            a, b = (statistics.median(rates[k]) for k in nets)
            va, vb = (args.games * res[k][1] ** 2 for k in nets)
            print(f"| {pos} | {'on' if vr else 'off'} | {a:.0f} | {b:.0f} | {a / b:.2f}x "
                  f"| {res['one-sided'][0]:+.4f} ± {res['one-sided'][1]:.4f} "
                  f"| {res['race net'][0]:+.4f} ± {res['race net'][1]:.4f} | {va:.2e} | {vb:.2e} "
                  f"| {(a / va) / (b / vb):.2f}x |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        _one(sys.argv[2], bool(int(sys.argv[3])), int(sys.argv[4]))
    else:
        main()
