"""Batch analysis beside gnubg-nn, in one run.

Positions: ``--n`` distinct positions from seeded self-play games (all
phases).  bgfast runs :func:`bgfast.analyze.run` end to end: input lines in,
real JSON Lines and CSV files out, the default ``net`` evaluator at 0-ply (``--ply 0``),
pool start-up included (the files go to /dev/shm where it exists, see
``--dir``; each run writes a new file: the previous run's file is removed
before the clock starts, since freeing its pages, about 50 ms for 200,000
JSON rows, is not the new run's work).  Cube-decision rows (lines without
a roll) are half money (a Position ID alone) and half Match IDs: every
score of a 7-point match, with a centred cube and with a 2-cube the
opponent owns (98 cube contexts).  Checker rows are the first ``--plays``
positions with the roll played there: ranked cubefully (money, a centred
cube), cubeless (``--cubeless``) and cubefully at the cube rows' match
contexts (a Match ID on each line), side by side.

The peers: for the cube rows and the batch evaluation, a loop over
gnubg-nn's ``probabilities(board, 0)``; for the checker rows (every legal
play evaluated and ranked, the top 5 listed), a loop over its
``bestmove(board, d1, d2, n=0, list=1)`` (every play ranked, with its
probabilities and equity).  gnubg-nn keeps an evaluation cache: a second
loop over the same positions is answered from it, several times faster
than evaluating.  Its rates are therefore measured on positions it
evaluates once: with a net loaded with ``cache_size=0`` (no cache; every
pass is cold), and as the first pass of a freshly loaded net with the
default cache, the faster of the two; repeat ``probabilities`` passes over
20,000 of the positions (answered from the cache) are shown for
comparison, labelled.  The runs go in rounds: each round times every
bgfast run once, with its peer's loops just before and just after it (the
loops after one run serve as those before the next when the two share
their peer), so that both sides of a ratio see the same phase of a shared,
noisy machine: each ratio is against the mean of the two peer rates beside
its run, and the median and range over the rounds are shown.

Run: python bench/compare_analyze.py [--n 200000] [--repeat 3]
"""
import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from corpus import self_play_positions  # noqa: E402

from bgfast.analyze import AnalysisSettings, run  # noqa: E402
from bgfast.evaluate import evaluate_ply  # noqa: E402

ZERO_PLY = AnalysisSettings(ply=0)     # the peer's loops are 0-ply
CUBELESS = AnalysisSettings(ply=0, cubeless=True)
from bgfast.formats import CubeOwner, MatchState  # noqa: E402
from bgfast.position import pack, position_ids  # noqa: E402


def distinct_positions(n, seed):
    """``n`` distinct (board, dice) pairs from seeded self-play, in game order."""
    boards, dice = self_play_positions(int(n * 1.05) + 100, seed)
    _, first = np.unique(pack(boards), axis=0, return_index=True)
    keep = np.sort(first)[:n]
    return boards[keep], dice[keep]


MATCH_IDS = [MatchState(match_length=7, score=(a, b), player_on_roll=0, cube_value=c,
                        cube_owner=CubeOwner.CENTRED if c == 1 else CubeOwner(1)).match_id()
             for a in range(7) for b in range(7) for c in (1, 2)]


def match_ids(seed, n):
    """``n`` seeded picks among :data:`MATCH_IDS` (every score of a 7-point
    match, a centred cube or a 2-cube the opponent owns)."""
    rng = np.random.default_rng(seed)
    return [MATCH_IDS[k] for k in rng.integers(len(MATCH_IDS), size=n)]


def cube_lines(ids, seed):
    pick = match_ids(seed, len(ids))
    return [f"{pid}\n" if k % 2 == 0 else f"{pid} {pick[k]}\n"
            for k, pid in enumerate(ids)], len(MATCH_IDS)


CACHED_SET = 20_000


class Gnubg:
    """gnubg-nn's ``probabilities`` loops over the positions (None where
    gnubg-nn is not installed)."""

    def __init__(self, boards, dice, plays):
        import gnubg_nn

        self.g = gnubg_nn
        self.weights = os.path.join(os.path.dirname(gnubg_nn.__file__), "data", "gnubg.weights")
        self.lists = [b.tolist() for b in boards]
        self.rolls = [(int(a), int(b)) for a, b in dice[:plays]]

    def _loop(self, lists):
        t = time.perf_counter()
        for b in lists:
            self.g.probabilities(b, 0)
        return len(lists) / (time.perf_counter() - t)

    def cold(self):
        """(no cache, first pass of a fresh net with the default cache): per second."""
        self.g.net_use(self.g.net_load(self.weights, 0))
        none = self._loop(self.lists)
        self.g.net_use(self.g.net_load(self.weights))
        return none, self._loop(self.lists)

    def _plays_loop(self):
        t = time.perf_counter()
        for b, (d1, d2) in zip(self.lists, self.rolls):
            self.g.bestmove(b, d1, d2, n=0, list=1)
        return len(self.rolls) / (time.perf_counter() - t)

    def plays_cold(self):
        """``bestmove(board, d1, d2, n=0, list=1)`` (every play ranked, with
        its probabilities and equity) per second over the checker positions:
        the faster of no cache and the first pass of a fresh default cache."""
        self.g.net_use(self.g.net_load(self.weights, 0))
        none = self._plays_loop()
        self.g.net_use(self.g.net_load(self.weights))
        return max(none, self._plays_loop())

    def cached(self, repeat):
        small = self.lists[:CACHED_SET]
        self.g.net_use(self.g.net_load(self.weights))
        self._loop(small)
        return statistics.median(self._loop(small) for _ in range(repeat))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--plays", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds: each times every bgfast run once, gnubg's loops around each")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                    help="where the output files go (default: /dev/shm if present)")
    args = ap.parse_args()
    boards, dice = distinct_positions(args.n, args.seed)
    n = len(boards)
    ids = position_ids(boards)
    cubes, contexts = cube_lines(ids, args.seed)
    plays = [f"{i} {a}{b}\n" for i, (a, b) in zip(ids[:args.plays], dice)]
    # the same plays, each at one of the cube rows' match contexts
    match_plays = [f"{i} {m} {a}{b}\n" for i, m, (a, b) in
                   zip(ids[:args.plays], match_ids(args.seed, len(plays)), dice)]
    try:
        gnubg = Gnubg(boards, dice, len(plays))
    except ImportError:
        gnubg = None
    evaluate_ply(boards[:100], 0, "net")                  # load the net and the tables
    names = ["bgfast batch 0-ply evaluation (net, no rows)"]
    runs = [lambda: evaluate_ply(boards, 0, "net")]
    sizes = [n]
    peers = ["cold"]                # each run's peer: the probabilities loop, or bestmove's
    # the rows go to real files, in memory (tmpfs) where there is one, so
    # that the disk's write-back does not time itself into the runs
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        out = os.path.join(tmp, "rows")
        run(cubes[:1000], output=out, jobs=1, settings=ZERO_PLY)   # load the net and the tables
        for what, lines, settings in (("cube rows", cubes, ZERO_PLY),
                                      ("checker rows", plays, ZERO_PLY),
                                      ("checker rows, cubeless", plays, CUBELESS),
                                      ("checker rows, match", match_plays, ZERO_PLY)):
            for fmt in ("jsonl", "csv"):
                for jobs in (1, 2):
                    names.append(f"bgfast analyze, {what}, {fmt}, {jobs} process(es)")
                    runs.append(lambda lines=lines, fmt=fmt, jobs=jobs, settings=settings:
                                run(lines, output=out, fmt=fmt, jobs=jobs, settings=settings))
                    sizes.append(len(lines))
                    peers.append("cold" if what == "cube rows" else "plays")
        peer_rate = {"cold": lambda: max(gnubg.cold()), "plays": gnubg.plays_cold} if gnubg else {}
        rates = [[] for _ in names]
        ratios = [[] for _ in names]
        bases = {"cold": [], "plays": []}
        for _ in range(args.repeat):                      # rounds: both sides see the same noise
            # each run is compared with the mean of its peer's rates just
            # before and just after it (a rate after one run is the rate
            # before the next, when the two share their peer)
            last = None
            for k, fn in enumerate(runs):
                if gnubg:
                    if last and last[0] == peers[k]:
                        before = last[1]
                    else:
                        before = peer_rate[peers[k]]()
                        bases[peers[k]].append(before)
                if os.path.exists(out):                   # each run writes a new file (freeing
                    os.unlink(out)                        # the last run's pages is not its work)
                t = time.perf_counter()
                fn()
                rates[k].append(sizes[k] / (time.perf_counter() - t))
                if gnubg:
                    after = peer_rate[peers[k]]()
                    bases[peers[k]].append(after)        # (each timing once)
                    ratios[k].append(rates[k][-1] / ((before + after) / 2))
                    last = (peers[k], after)
    print(f"{n:,} distinct positions ({len(plays):,} for checker rows), {args.repeat} rounds "
          f"(medians; ratios against gnubg's cold loop just before and after each run, with their range); "
          f"cube rows: half money, half Match IDs over {contexts} cube contexts")
    print(f"{'':60s} {'per second':>12s} {'vs gnubg cold':>14s} {'range':>14s}")
    for name, r, q in zip(names, rates, ratios):
        ratio = (f"{statistics.median(q):13.2f}x {min(q):6.2f}-{max(q):.2f}x" if q else "")
        print(f"{name:60s} {statistics.median(r):12,.0f} {ratio}")
    if gnubg:
        print(f"{'gnubg_nn.probabilities loop, cold (faster of no cache / first pass)':60s} "
              f"{statistics.median(bases['cold']):12,.0f} {1:13.2f}x   (peer of the cube rows)")
        print(f"{'gnubg_nn.bestmove(list=1) loop, 0-ply, cold (as above)':60s} "
              f"{statistics.median(bases['plays']):12,.0f} {1:13.2f}x   (peer of the checker rows)")
        print(f"{'gnubg_nn.probabilities loop, cached (repeat passes, 20,000)':60s} "
              f"{gnubg.cached(args.repeat):12,.0f}")


if __name__ == "__main__":
    main()
