"""Per-call speed of the Python API beside gnubg-nn, in one run.

    python bench/compare_percall.py [--pairs 2000] [--repeat 7]

Each measure is one Python call per (position, roll) of a fixed corpus
(``bench_corpus``: contact and race positions, each with one of the 21 rolls
in turn), timed as CPU time (``time.process_time``, so a loaded machine
slows both sides alike) over the whole corpus; the table gives the median
over ``--repeat`` runs, the two engines' runs interleaved, in microseconds
per call, and gnubg-nn's time divided by bgfast's (above 1: bgfast is
faster).

Both engines keep an evaluation cache across calls (gnubg-nn's net, and
bgfast's ``Net.set_cache``), so from the second run on the evaluations of
the corpus are mostly cache hits.  The measures that evaluate are therefore
also timed with both caches off (gnubg-nn's net loaded with
``cache_size=0``, bgfast's ``set_cache(0)``): the "no cache" columns, the
cost of positions neither has seen.  gnubg-nn has no cubeful
play ranking: the cubeful row sets bgfast's cubeful money ranking beside
gnubg-nn's cubeless ``bestmove``.
"""
from __future__ import annotations

import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))   # this checkout's bgfast
from bench_corpus import corpus  # noqa: E402

from bgfast.cube import CubeContext  # noqa: E402
from bgfast.evaluate import get_evaluator, rank_plays  # noqa: E402
from bgfast.movegen import legal_plays, legal_plays_batch  # noqa: E402
from bgfast.net import NetEvaluator, default_net  # noqa: E402
from bgfast.position import Position  # noqa: E402


def percall_corpus(pairs: int, seed: int = 1):
    """``pairs`` (board, roll) pairs: position k of the corpus with roll k mod 21."""
    boards, dice = corpus(seed)
    npos = len(boards) // 21
    idx = [(k % npos) * 21 + (k % 21) for k in range(pairs)]
    return boards[idx], dice[idx]


def measures(boards, dice):
    """``[(name, bgfast_fn, gnubg_fn or None, bgfast_fn without its cache
    or None, gnubg_fn without its cache or None, unit_count)]``: each fn
    runs the measure once over the corpus; unit_count (results, or None)
    gives a results/s column."""
    pos = [Position(b) for b in boards]
    arrs = [p.board for p in pos]
    rolls = [tuple(int(x) for x in d) for d in dice]
    ids = [p.position_id() for p in pos]
    ev = get_evaluator("net")
    money = CubeContext.money()
    nres = int(legal_plays_batch(boards, dice)[0][-1])
    try:
        import gnubg_nn
    except ImportError:
        gnubg_nn = None
    g = {}
    cold = {}
    if gnubg_nn is not None:
        weights = os.path.join(os.path.dirname(gnubg_nn.__file__), "data", "gnubg.weights")
        cached, uncached = gnubg_nn.net_load(weights), gnubg_nn.net_load(weights, 0)
        gnubg_nn.net_use(cached)

        def nocache(fn):
            def run():
                gnubg_nn.net_use(uncached)
                try:
                    return fn()
                finally:
                    gnubg_nn.net_use(cached)
            return run

        lists = [b.tolist() for b in boards]
        lr = [(b, d1, d2) for b, (d1, d2) in zip(lists, rolls)]
        g = {
            "bestmove": lambda: _each(lambda b, d1, d2: gnubg_nn.bestmove(b, d1, d2, list=1), lr),
            "moves": lambda: _each(gnubg_nn.moves, lr),
            "probs": lambda: _each(lambda b: gnubg_nn.probabilities(b, 0), [(b,) for b in lists]),
            "fromid": lambda: _each(gnubg_nn.boardfromid, [(i,) for i in ids]),
            "toid": lambda: _each(gnubg_nn.position_id, [(b,) for b in lists]),
        }
        cold = {k: nocache(g[k]) for k in ("bestmove", "probs")}
    cold_net = default_net().copy()          # the same weights, without a cache
    cold_net.set_cache(0)
    cold_ev = NetEvaluator(cold_net)

    pr = [(p, d1, d2) for p, (d1, d2) in zip(pos, rolls)]
    ar = list(zip(arrs, rolls))
    one = [(p,) for p in pos]
    best, best0 = g.get("bestmove"), cold.get("bestmove")

    def ranked(ev):
        return [
            ("rank_plays 0-ply cubeless (vs bestmove list=1)",
             lambda: _each(lambda p, d1, d2: rank_plays(p, d1, d2, evaluator=ev), pr)),
            ("  ... and read the best play",
             lambda: _each(lambda p, d1, d2: rank_plays(p, d1, d2, evaluator=ev)[:1], pr)),
            ("  ... and read every play",
             lambda: _each(lambda p, d1, d2: list(rank_plays(p, d1, d2, evaluator=ev)), pr)),
            ("rank_plays 0-ply cubeful money (vs bestmove list=1)",
             lambda: _each(lambda p, d1, d2: rank_plays(p, d1, d2, cube=money, evaluator=ev), pr)),
        ]

    rankings = [(name, fn, best, fn0, best0, None)
                for (name, fn), (_, fn0) in zip(ranked("net"), ranked(cold_ev))]
    return rankings + [
        ("legal_plays_batch, one board (vs moves)",
         lambda: _each(legal_plays_batch, ar), g.get("moves"), None, None, nres),
        ("legal_plays, Play objects (vs moves)",
         lambda: _each(legal_plays, pr), g.get("moves"), None, None, nres),
        ("Position.from_position_id (vs boardfromid)",
         lambda: _each(Position.from_position_id, [(i,) for i in ids]), g.get("fromid"), None, None,
         None),
        ("Position.position_id (vs position_id)",
         lambda: _each(Position.position_id, one), g.get("toid"), None, None, None),
        ("evaluate one position 0-ply (vs probabilities)",
         lambda: _each(ev.evaluate, one), g.get("probs"), lambda: _each(cold_ev.evaluate, one),
         cold.get("probs"), None),
    ]


def _each(fn, args) -> None:
    """``fn(*a)`` for each tuple ``a`` of ``args``, one call at a time (the
    results are dropped, as a caller that uses each one in turn drops them)."""
    for a in args:
        fn(*a)


def cpu_median(fns, repeat):
    """Median CPU seconds of each fn over ``repeat`` interleaved runs (one warm-up)."""
    times = [[] for _ in fns]
    for f in fns:
        if f is not None:
            f()
    for _ in range(repeat):
        for k, f in enumerate(fns):
            if f is None:
                continue
            t = time.process_time()
            f()
            times[k].append(time.process_time() - t)
    return [statistics.median(t) if t else None for t in times]


def run(pairs: int = 2000, repeat: int = 7, seed: int = 1):
    """``[(name, bgfast_us, gnubg_us or None, bgfast_no_cache_us or None,
    gnubg_no_cache_us or None, bgfast_results_per_s or None)]``."""
    boards, dice = percall_corpus(pairs, seed)
    rows = []
    for name, ours, theirs, ours0, theirs0, nres in measures(boards, dice):
        times = cpu_median([ours, theirs, ours0, theirs0], repeat)
        us = [None if t is None else t / pairs * 1e6 for t in times]
        rows.append((name, *us, None if nres is None else nres / times[0]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"{args.pairs} (position, roll) calls per run, median CPU time of {args.repeat} runs\n")
    rows = run(args.pairs, args.repeat)
    print(f"{'':52s} {'caches on':^30s} {'caches off':^30s}")
    print(f"{'measure':52s} {'bgfast us':>10s} {'gnubg-nn':>10s} {'ratio':>8s} {'bgfast us':>10s}"
          f" {'gnubg-nn':>10s} {'ratio':>8s} {'bgfast results/s':>17s}")
    for name, ours, theirs, ours0, theirs0, rate in rows:
        cells = ""
        for a, t in ((ours, theirs), (ours0, theirs0)):
            if a is None:
                cells += f" {'-':>10s} {'-':>10s} {'':8s}"
            elif t:
                cells += f" {a:10.2f} {t:10.2f} {theirs_ratio(t, a):>8s}"
            else:
                cells += f" {a:10.2f} {'-':>10s} {'':8s}"
        r = f"{rate:17,.0f}" if rate else ""
        print(f"{name:52s}{cells} {r}")


def theirs_ratio(theirs: float, ours: float) -> str:
    """gnubg-nn's time over bgfast's (above 1: bgfast is faster)."""
    return f"{theirs / ours:7.2f}x"


if __name__ == "__main__":
    main()
