"""Checker-play ranking rates: cubeless beside cubeful (money and match), in one run.

    python bench/compare_cubeful.py [--positions 1000] [--repeat 5] [--plies 0]

The corpus is ``bench_corpus``'s contact and race positions, each with all
21 rolls.  Each row ranks every (position, roll) with
:func:`bgfast.evaluate.rank_plays_batch` (the net, one batch): cubeless,
then at a money cube context (centred) and at a match score (7-point
match, 2-4: a centred cube, and a cube at 2 owned by the player on roll).  Rates are plays valued per CPU
second (the best of ``--repeat`` runs; wall-clock times beside them); the
ratio is the cubeful rate over the cubeless one (at 0 plies it should be at least 0.9).  Run it
from the source tree root with ``PYTHONPATH=.`` to measure that copy.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from bench_corpus import contact_positions, race_positions  # noqa: E402

from bgfast.cube import CubeContext  # noqa: E402
from bgfast.evaluate import rank_plays_batch  # noqa: E402
from bgfast.movegen import ALL_ROLLS  # noqa: E402


def _corpus(n: int, seed: int = 1):
    pos = np.concatenate([contact_positions(n // 2, seed), race_positions(n - n // 2, seed + 1)])
    boards = np.repeat(pos, len(ALL_ROLLS), axis=0)
    dice = np.tile(ALL_ROLLS, (len(pos), 1))
    return boards, dice


def measure(positions: int = 1000, repeat: int = 5, plies: int = 0) -> list[dict]:
    """One row per setting: name, plays, the best wall-clock and CPU
    seconds of ``repeat`` runs, plays per second (by the CPU time), and
    the ratio to cubeless.  The settings take turns in every repeat, so a
    change in the machine's load falls on all of them; the CPU time of this
    single-threaded process is the steadier measure on a shared machine."""
    boards, dice = _corpus(positions)
    settings = [("cubeless", None), ("cubeful money", CubeContext.money()),
                ("cubeful match 2-4/7, centred", CubeContext.match(7, 2, 4)),
                ("cubeful match 2-4/7, cube 2 mine", CubeContext.match(7, 2, 4, cube=2, owner="me"))]
    plays = len(rank_plays_batch(boards, dice, plies=plies).results)   # loads the net and tables
    wall = {name: [] for name, _ in settings}
    cpu = {name: [] for name, _ in settings}
    for _ in range(repeat):
        for name, ctx in settings:
            t, c = time.perf_counter(), time.process_time()
            rank_plays_batch(boards, dice, plies=plies, cube=ctx)
            cpu[name].append(time.process_time() - c)
            wall[name].append(time.perf_counter() - t)
    rows = []
    for name, _ in settings:
        rows.append({"setting": name, "plays": plays, "wall": min(wall[name]),
                     "cpu": min(cpu[name]), "per_second": plays / min(cpu[name])})
    base = rows[0]["per_second"]
    for r in rows:
        r["ratio"] = r["per_second"] / base
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--plies", type=int, default=0)
    args = ap.parse_args()
    rows = measure(args.positions, args.repeat, args.plies)
    print(f"rank_plays_batch at {args.plies} plies, net, {args.positions} positions x 21 rolls")
    print(f"{'setting':<36}{'plays':>9}{'wall s':>9}{'CPU s':>9}{'plays/s':>12}{'ratio':>8}")
    for r in rows:
        print(f"{r['setting']:<36}{r['plays']:>9}{r['wall']:>9.3f}{r['cpu']:>9.3f}"
              f"{r['per_second']:>12.0f}{r['ratio']:>8.3f}")


if __name__ == "__main__":
    main()
