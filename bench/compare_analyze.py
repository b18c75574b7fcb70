"""Batch analysis beside gnubg-nn, in one run.

Positions: ``--n`` distinct positions from seeded self-play games (all
phases).  bgfast runs :func:`bgfast.analyze.run` end to end: input lines in,
real JSON Lines and CSV files out, the default ``net`` evaluator at 0-ply,
pool start-up included (the files go to /dev/shm where it exists, see
``--dir``).  Cube-decision rows (lines without a roll) are half
money (a Position ID alone) and half Match IDs: every score of a 7-point
match, with a centred cube and with a 2-cube the opponent owns (98 cube
contexts).  Checker rows are the first ``--plays`` positions with the roll
played there.

gnubg-nn keeps an evaluation cache: a second loop over the same positions
is answered from it, several times faster than evaluating.  Its rate is
therefore measured on positions it evaluates once: with a net loaded with
``cache_size=0`` (no cache; every pass is cold), and as the first pass of a
freshly loaded net with the default cache; repeat passes over 20,000 of
the positions (answered from the cache) are shown for comparison,
labelled.  The ratios are against the faster of the two cold rates.

Run: python bench/compare_analyze.py [--n 200000] [--repeat 3]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from corpus import self_play_positions  # noqa: E402

from bgfast.analyze import run  # noqa: E402
from bgfast.evaluate import evaluate_ply  # noqa: E402
from bgfast.formats import CubeOwner, MatchState  # noqa: E402
from bgfast.position import pack, position_ids  # noqa: E402


def timed(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def distinct_positions(n, seed):
    """``n`` distinct (board, dice) pairs from seeded self-play, in game order."""
    boards, dice = self_play_positions(int(n * 1.05) + 100, seed)
    _, first = np.unique(pack(boards), axis=0, return_index=True)
    keep = np.sort(first)[:n]
    return boards[keep], dice[keep]


def cube_lines(ids, seed):
    rng = np.random.default_rng(seed)
    match_ids = [MatchState(match_length=7, score=(a, b), player_on_roll=p, cube_value=c,
                            cube_owner=CubeOwner.CENTRED if c == 1 else CubeOwner(1 - p)).match_id()
                 for a in range(7) for b in range(7) for c in (1, 2) for p in (0,)]
    pick = rng.integers(len(match_ids), size=len(ids))
    return [f"{pid}\n" if k % 2 == 0 else f"{pid} {match_ids[pick[k]]}\n"
            for k, pid in enumerate(ids)], len(match_ids)


CACHED_SET = 20_000


def gnubg_rates(boards, repeat):
    """(cold without a cache [median], cold first pass with the default cache,
    cached repeat passes over the first 20,000 positions [median]) positions
    per second, or None."""
    try:
        import gnubg_nn
    except ImportError:
        return None
    weights = os.path.join(os.path.dirname(gnubg_nn.__file__), "data", "gnubg.weights")
    lists = [b.tolist() for b in boards]

    def loop():
        for b in lists:
            gnubg_nn.probabilities(b, 0)

    n = len(lists)
    gnubg_nn.net_use(gnubg_nn.net_load(weights))        # a fresh net: the default cache, empty
    first = n / timed(loop, 1)
    small = lists[:CACHED_SET]                          # a set the default cache holds

    def again():
        for b in small:
            gnubg_nn.probabilities(b, 0)

    again()
    cached = len(small) / timed(again, repeat)
    gnubg_nn.net_use(gnubg_nn.net_load(weights, 0))     # no cache
    cold = n / timed(loop, repeat)
    return cold, first, cached


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--plays", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                    help="where the output files go (default: /dev/shm if present)")
    args = ap.parse_args()
    boards, dice = distinct_positions(args.n, args.seed)
    n = len(boards)
    ids = position_ids(boards)
    cubes, contexts = cube_lines(ids, args.seed)
    plays = [f"{i} {a}{b}\n" for i, (a, b) in zip(ids[:args.plays], dice)]
    rows = []
    gnubg = gnubg_rates(boards, args.repeat)
    evaluate_ply(boards[:100], 0, "net")                  # load the net and the tables
    t = timed(lambda: evaluate_ply(boards, 0, "net"), args.repeat)
    rows.append(("bgfast batch 0-ply evaluation (net, no rows)", n / t))
    # the rows go to real files, in memory (tmpfs) where there is one, so
    # that the disk's write-back does not time itself into the runs
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        out = os.path.join(tmp, "rows")
        run(cubes[:1000], output=out, jobs=1)             # load the net and the tables
        for what, lines in (("cube rows", cubes), ("checker rows", plays)):
            for fmt in ("jsonl", "csv"):
                for jobs in (1, 2):
                    t = timed(lambda: run(lines, output=out, fmt=fmt, jobs=jobs), args.repeat)
                    rows.append((f"bgfast analyze, {what}, {fmt}, {jobs} process(es)",
                                 len(lines) / t))
    print(f"{n:,} distinct positions ({len(plays):,} for checker rows), median of "
          f"{args.repeat} runs; cube rows: half money, half Match IDs over {contexts} cube contexts")
    print(f"{'':60s} {'per second':>12s} {'vs gnubg cold':>14s}")
    base = max(gnubg[0], gnubg[1]) if gnubg else None    # the faster cold rate
    if gnubg:
        rows += [("gnubg_nn.probabilities loop, cold (no cache)", gnubg[0]),
                 ("gnubg_nn.probabilities loop, cold cache, first pass", gnubg[1]),
                 ("gnubg_nn.probabilities loop, cached (repeat passes, 20,000)", gnubg[2])]
    for name, rate in rows:
        ratio = f"{rate / base:13.2f}x" if base else ""
        print(f"{name:60s} {rate:12,.0f} {ratio}")


if __name__ == "__main__":
    main()
