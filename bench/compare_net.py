"""0-ply evaluations per second of the bgfast net beside gnubg's (gnubg-nn), in one run,
and self-play training games per second.

    python bench/compare_net.py [--boards 20000] [--repeat 5] [--threads 2]

Boards: distinct positions from seeded random play (contact and race; bear-off
positions excluded so both engines run their nets).  Rates are medians of
``--repeat`` runs.  gnubg-nn has no batch call: its rate is one Python call
per position (it is compared with both our forms).
"""
from __future__ import annotations

import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

from bgfast import net as netmod, train as trainmod  # noqa: E402
from bgfast.position import PositionClass, classify_boards  # noqa: E402


def _boards(n, seed):
    from test_net import _random_boards

    b = _random_boards(int(n * 1.3), seed)
    cls = classify_boards(b)
    b = b[(cls == PositionClass.CONTACT) | (cls == PositionClass.RACE)]
    keys = {bytes(x) for x in b}
    _, idx = np.unique(b.reshape(len(b), -1), axis=0, return_index=True)
    b = b[np.sort(idx)][:n]
    assert len(keys) >= len(b)
    return np.ascontiguousarray(b)


def _rate(fn, count, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return count / statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--train-games", type=int, default=2000)
    args = ap.parse_args()
    b = _boards(args.boards, 1)
    n = len(b)
    net = netmod.default_net()
    model = net.model
    rows = []
    single_n = min(n, 5000)
    rows.append(("bgfast net 0-ply, one Python call per position",
                 _rate(lambda: [model.evaluate(b[i:i + 1], False, 1) for i in range(single_n)],
                       single_n, args.repeat)))
    rows.append(("bgfast net 0-ply, batch, 1 thread",
                 _rate(lambda: model.evaluate(b, False, 1), n, args.repeat)))
    if args.threads > 1:
        rows.append((f"bgfast net 0-ply, batch, {args.threads} threads",
                     _rate(lambda: model.evaluate(b, False, args.threads), n, args.repeat)))
    dice = np.random.default_rng(2).integers(1, 7, size=(n, 2)).astype(np.int64)
    from bgfast.movegen import legal_plays_batch

    nplays = int(legal_plays_batch(b, dice)[0][-1])
    rows.append(("bgfast net 0-ply, incremental (plays of a roll, incl. move generation)",
                 _rate(lambda: model.choose(b, dice, 0, 0.0, 0, False), nplays, args.repeat)))
    try:
        import gnubg_nn
    except ImportError:
        gnubg_nn = None
    if gnubg_nn is not None:
        lists = [x.tolist() for x in b]
        rows.append(("gnubg-nn probabilities(board, 0), one call per position",
                     _rate(lambda: [gnubg_nn.probabilities(x, 0) for x in lists], n, 1)))
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        g = args.train_games
        for th in sorted({1, args.threads}):
            t = time.perf_counter()
            trainmod.train(os.path.join(d, "t.npz"), g, hidden=net.hidden, threads=th,
                           progress=False, checkpoint_every=10**9)
            rows.append((f"training self-play games/s (H={net.hidden}, {th} thread(s))",
                         g / (time.perf_counter() - t)))
    gn = next((r for name, r in rows if name.startswith("gnubg")), None)
    print(f"{n} distinct contact/race positions, net H={net.hidden}, median of {args.repeat}")
    print(f"{'measure':<75}{'per second':>14}{'vs gnubg':>10}")
    for name, r in rows:
        ratio = f"{r / gn:9.2f}x" if gn and not name.startswith("training") else ""
        print(f"{name:<75}{r:>14,.0f}{ratio:>10}")


if __name__ == "__main__":
    main()
