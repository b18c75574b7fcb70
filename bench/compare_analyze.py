"""Batch analysis beside gnubg-nn, in one run.

Positions: 2,000 from seeded self-play games (all phases).  Prints, per
second: bgfast's batch 0-ply evaluation of the positions, bgfast's full
analysis rows (cube decision rows and checker-play rows) on 1 and 2 worker
processes, and a loop over gnubg_nn.probabilities(board, 0) on the same
positions.  Run: python bench/compare_analyze.py [--n 2000]
"""
import argparse
import io
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from corpus import self_play_positions  # noqa: E402

from bgfast.analyze import run  # noqa: E402
from bgfast.evaluate import evaluate_ply  # noqa: E402
from bgfast.position import position_ids  # noqa: E402


def timed(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    boards, dice = self_play_positions(args.n, 31)
    ids = position_ids(boards)
    cube_lines = [f"{i}\n" for i in ids]
    play_lines = [f"{i} {a}{b}\n" for i, (a, b) in zip(ids, dice)]
    n = len(boards)
    rows = []
    t = timed(lambda: evaluate_ply(boards, 0), args.repeat)
    rows.append(("bgfast batch 0-ply evaluation", n / t))
    for jobs in (1, 2):
        t = timed(lambda: run(cube_lines, stream=io.StringIO(), jobs=jobs, chunk_size=64),
                  args.repeat)
        rows.append((f"bgfast analyze, cube rows, {jobs} process(es)", n / t))
        t = timed(lambda: run(play_lines, stream=io.StringIO(), jobs=jobs, chunk_size=64),
                  args.repeat)
        rows.append((f"bgfast analyze, checker rows, {jobs} process(es)", n / t))
    try:
        import gnubg_nn
    except ImportError:
        gnubg = None
    else:
        lists = [b.tolist() for b in boards]
        t = timed(lambda: [gnubg_nn.probabilities(b, 0) for b in lists], args.repeat)
        gnubg = n / t
        rows.append(("gnubg_nn.probabilities loop (0-ply)", gnubg))
    print(f"{n} positions, median of {args.repeat} runs")
    print(f"{'':48s} {'per second':>12s} {'vs gnubg':>9s}")
    for name, rate in rows:
        ratio = f"{rate / gnubg:8.2f}x" if gnubg else ""
        print(f"{name:48s} {rate:12,.0f} {ratio}")


if __name__ == "__main__":
    main()
