"""What the hidden units' activation costs in the play kernel.

    python bench/activation_cost.py [--hidden 256] [--plays 2000000] [--repeat 3]

Compiles a C microbenchmark of ``bgv_eval_play`` (``bgfast/_vecmath.h``,
the fused kernel that values one play of a roll from its base position's
hidden sums: the table rows that change, the hand-made inputs that change,
the activations and the 5 output sums) three times, with the hidden
activation as shipped (the sigmoid: an exponential and a division per
unit) and swapped for two that cost a few vector operations:

* ``quadratic``: 0.5 + t (1/4 - |t|/32), t = x clipped to [-4, 4]
  (within 0.022 of the sigmoid, flat beyond +-4);
* ``clip``: x/4 + 1/2 clipped to [0, 1].

Each is timed in CPU time over ``--plays`` calls with 4 rows added, 4
subtracted and 8 input deltas (a typical play), ``--hidden`` units, the
median of ``--repeat`` runs, interleaved.  It needs gcc.  The numbers say
what a net trained with a cheaper activation would save per play; no
shipped net uses one.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANCHOR = "BGV_VECTOR_HELPER bgv_f8 bgv_sigmoid8(bgv_f8 x)\n{"

SWAPS = {
    "sigmoid": "",
    "quadratic": """
    {
        const bgv_f8 lo = {-4, -4, -4, -4, -4, -4, -4, -4}, hi = {4, 4, 4, 4, 4, 4, 4, 4};
        const bgv_f8 q = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
        const bgv_f8 h = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
        const bgv_f8 c = {0.03125f, 0.03125f, 0.03125f, 0.03125f, 0.03125f, 0.03125f, 0.03125f,
                          0.03125f};
        const bgv_i8 ab = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff,
                           0x7fffffff, 0x7fffffff, 0x7fffffff};
        bgv_i8 m;
        m = x < lo;
        x = (bgv_f8)((m & (bgv_i8)lo) | (~m & (bgv_i8)x));
        m = x > hi;
        x = (bgv_f8)((m & (bgv_i8)hi) | (~m & (bgv_i8)x));
        return h + x * (q - (bgv_f8)((bgv_i8)x & ab) * c);
    }
""",
    "clip": """
    {
        const bgv_f8 q = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
        const bgv_f8 h = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
        const bgv_f8 z = {0, 0, 0, 0, 0, 0, 0, 0}, o = {1, 1, 1, 1, 1, 1, 1, 1};
        bgv_i8 m;
        x = x * q + h;
        m = x < z;
        x = (bgv_f8)(~m & (bgv_i8)x);
        m = x > o;
        return (bgv_f8)((m & (bgv_i8)o) | (~m & (bgv_i8)x));
    }
""",
}

MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "_vecmath.h"
int main(int argc, char **argv)
{
    int H = atoi(argv[1]), i, q;
    long n, N = atol(argv[2]);
    float *T = aligned_alloc(64, sizeof(float) * 200 * 256), *W = aligned_alloc(64, sizeof(float) * 64 * 256);
    float *w2t = aligned_alloc(64, sizeof(float) * 5 * 256), hb[256], b2[5] = {0, 0, 0, 0, 0}, s[5], fv[8];
    int32_t add[4] = {3, 50, 90, 120}, sub[4] = {7, 60, 99, 130}, fi[8];
    double acc = 0;
    struct timespec t0, t1;
    srand(1);
    for (i = 0; i < 200 * 256; i++) T[i] = (rand() % 2000 - 1000) * 1e-4f;
    for (i = 0; i < 64 * 256; i++) W[i] = (rand() % 2000 - 1000) * 1e-4f;
    for (i = 0; i < 5 * 256; i++) w2t[i] = (rand() % 2000 - 1000) * 1e-3f;
    for (i = 0; i < 256; i++) hb[i] = (rand() % 2000 - 1000) * 3e-3f;
    for (q = 0; q < 8; q++) { fi[q] = 3 * q; fv[q] = 0.1f * q; }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (n = 0; n < N; n++) {
        hb[n & 127] += 1e-7f;
        bgv_eval_play(hb, T, add, 4, sub, 4, W, fi, fv, 8, w2t, b2, H, s);
        acc += s[0];
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    printf("%.2f %g\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / N, acc);
    return 0;
}
"""


def build(work: str, name: str, body: str) -> str:
    src = open(os.path.join(ROOT, "bgfast", "_vecmath.h")).read()
    if ANCHOR not in src:
        sys.exit("bgfast/_vecmath.h has no bgv_sigmoid8 of the expected form")
    d = os.path.join(work, name)
    os.makedirs(d)
    with open(os.path.join(d, "_vecmath.h"), "w") as f:
        f.write(src.replace(ANCHOR, ANCHOR + body))
    shutil.copy(os.path.join(ROOT, "bgfast", "_bits.h"), d)
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write(MAIN)
    exe = os.path.join(d, "bench")
    # the kernels' own flags (setup.py): no fused multiply-adds, no trapping maths
    subprocess.run(["gcc", "-O3", "-fno-trapping-math", "-ffp-contract=off", "-w", "-o", exe,
                    os.path.join(d, "main.c"), "-lm"], check=True)
    return exe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=int, default=256,
                    help="Hidden units, a multiple of 8 up to 256 [default: 256].")
    ap.add_argument("--plays", type=int, default=2_000_000, help="Calls a run [default: 2000000].")
    ap.add_argument("--repeat", type=int, default=3, help="Runs of each, interleaved [default: 3].")
    args = ap.parse_args()
    if not (8 <= args.hidden <= 256 and args.hidden % 8 == 0):
        ap.error("--hidden: a multiple of 8 from 8 to 256")
    if shutil.which("gcc") is None:
        sys.exit("gcc is needed")
    with tempfile.TemporaryDirectory() as work:
        exes = {name: build(work, name, body) for name, body in SWAPS.items()}
        times = {name: [] for name in exes}
        for _ in range(args.repeat):
            for name, exe in exes.items():
                out = subprocess.run([exe, str(args.hidden), str(args.plays)], check=True,
                                     capture_output=True, text=True).stdout.split()
                times[name].append(float(out[0]))
    base = statistics.median(times["sigmoid"])
    print(f"bgv_eval_play, {args.hidden} hidden units, 4 + 4 rows and 8 inputs a play; "
          f"CPU ns a play, medians of {args.repeat}")
    print("| activation | ns a play | runs | share of the sigmoid's |")
    print("|---|---:|---|---:|")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"| {name} | {m:.0f} | {' / '.join(f'{t:.0f}' for t in ts)} | {m / base:.2f} |")


if __name__ == "__main__":
    main()
