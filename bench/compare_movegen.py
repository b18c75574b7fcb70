"""bgfast move generation beside gnubg-nn and OpenSpiel, in one run.

Corpus: 1,000 contact + 1,000 race positions x all 21 rolls (42,000 calls).
Prints resulting positions per second (median of several repetitions) and
the ratios.  Run: python bench/compare_movegen.py [--repeat 7]
"""
import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_corpus import corpus  # noqa: E402

from bgfast.movegen import legal_plays_batch  # noqa: E402


def median_time(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def bench_bgfast(boards, dice, repeat):
    legal_plays_batch(boards, dice, validate=False)          # warm-up
    t, (off, res) = median_time(lambda: legal_plays_batch(boards, dice, validate=False), repeat)
    return len(res), t


def bench_gnubg(boards, dice, repeat):
    try:
        import gnubg_nn
    except ImportError:
        return None
    lists = [b.tolist() for b in boards]
    ds = dice.tolist()

    def run():
        return sum(len(gnubg_nn.moves(b, d1, d2)) for b, (d1, d2) in zip(lists, ds))

    t, n = median_time(run, max(1, repeat // 2))
    return n, t


def bench_openspiel(n_positions, repeat, seed=1):
    """OpenSpiel cannot be set to an arbitrary board, so it runs on positions
    from its own seeded random games: legal_actions() at each decision node."""
    try:
        import numpy as np
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("backgammon")
    rng = np.random.default_rng(seed)
    states = []
    state = game.new_initial_state()
    while len(states) < n_positions:
        if state.is_terminal():
            state = game.new_initial_state()
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            continue
        states.append(state.clone())
        acts = state.legal_actions()
        state.apply_action(acts[rng.integers(len(acts))])

    def run():
        return sum(len(s.legal_actions()) for s in states)

    t, n = median_time(run, max(1, repeat // 2))
    return n, t


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    boards, dice = corpus()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"corpus: {len(boards)} (position, roll) pairs; median of {args.repeat} runs, one core\n")
    rows = []
    n, t = bench_bgfast(boards, dice, args.repeat)
    ours = n / t
    rows.append(("bgfast legal_plays_batch", n, t, ours))
    g = bench_gnubg(boards, dice, args.repeat)
    if g:
        rows.append(("gnubg_nn.moves (per position)", g[0], g[1], g[0] / g[1]))
    o = bench_openspiel(len(boards), args.repeat)
    if o:
        rows.append(("OpenSpiel legal_actions (own random games)*", o[0], o[1], o[0] / o[1]))
    print(f"{'engine':46s} {'results':>10s} {'seconds':>9s} {'results/s':>12s} {'bgfast x':>9s}")
    for name, n, t, rate in rows:
        print(f"{name:46s} {n:10d} {t:9.4f} {rate:12,.0f} {ours / rate:9.1f}")
    if o:
        print("\n* OpenSpiel has no way to load an arbitrary board; it is measured on the same"
              "\n  number of decision nodes from its own seeded random games, and its actions"
              "\n  are not de-duplicated by resulting position.")


if __name__ == "__main__":
    main()
