"""bgfast bear-off builds side by side with gnubg's ``makebearoff``, in one run.

    python bench/compare_bearoff.py [--quick] [--repeat 5] [--threads N]

For each size the script times ``makebearoff`` (median of ``--repeat``
runs, one run for the slow 8-point and 6x7 builds) and the bgfast build on
one thread and on ``--threads`` (default all cores; median of ``--repeat``
runs each), all writing their file to a temporary directory, and prints
the times and the ratios.  Sizes: one-sided
6 and 8 points (15 checkers), two-sided 6x6 and 6x7 cubeless, and 6x6 with
cubeful equities.  ``--quick`` skips the two slow makebearoff runs (8 points,
6x7).  Without makebearoff (Debian's gnubg package) only bgfast is timed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import bgfast.bearoff as bo

MAKEBEAROFF = shutil.which("makebearoff") or "/usr/games/makebearoff"


def time_makebearoff(args, out, repeat=1):
    """Median wall time of ``repeat`` makebearoff runs (None without it)."""
    if not os.path.exists(MAKEBEAROFF):
        return None
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([MAKEBEAROFF, *args, "-f", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def time_bgfast(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads of the second bgfast column (default: all cores)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-bearoff-")
    cases = [
        ("one-sided 6 points", ["-o", "6"], lambda p, t: bo.build_one_sided(6, 15, p, threads=t), False),
        ("one-sided 8 points", ["-o", "8"], lambda p, t: bo.build_one_sided(8, 15, p, threads=t), True),
        ("two-sided 6x6 cubeless", ["-t", "6x6", "-C"],
         lambda p, t: bo.build_two_sided(6, p, threads=t), False),
        ("two-sided 6x7 cubeless", ["-t", "6x7", "-C"],
         lambda p, t: bo.build_two_sided(7, p, threads=t), True),
        ("two-sided 6x6 cubeful", ["-t", "6x6"],
         lambda p, t: bo.build_two_sided(6, p, cubeful=True, threads=t), False),
    ]
    print(f"bgfast: median of {a.repeat} builds, file written; makebearoff: median of "
          f"{a.repeat} builds (one for 8 points and 6x7)")
    print(f"{'build':<26}{'makebearoff s':>14}{'1 thread s':>12}{'ratio':>9}"
          f"{f'{a.threads} threads s':>14}{'ratio':>9}")
    try:
        for name, margs, fn, slow in cases:
            gt = None if (slow and a.quick) else time_makebearoff(
                margs, os.path.join(tmp, "gnubg.bd"), 1 if slow else a.repeat)
            out = os.path.join(tmp, "bgfast.bgb")
            cols = f"{gt:14.2f}" if gt else f"{'-':>14}"
            for i, th in enumerate((1, a.threads)):
                bt = time_bgfast(lambda: fn(out, th).close(), a.repeat)
                ratio = f"{gt / bt:8.1f}x" if gt else "       -"
                cols += f"{bt:{12 if i == 0 else 14}.3f}{ratio}"
            print(f"{name:<26}{cols}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
