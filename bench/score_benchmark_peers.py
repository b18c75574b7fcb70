"""bgfast, pubeval, gnubg (gnubg-nn) and bgsage on a benchmark database.

    python bench/score_benchmark_peers.py [DIR] [--markdown]

DIR is a directory of ``bgfast benchmark build`` (default: the shipped
``data/benchmark``).  Each chooser's error rate (mean equity lost per
decision against the rollout best, x1000) with its standard error, the share
of decisions where it picks the rollout's best play and the plays outside
the rolled-out candidates, per set.  bgfast and pubeval are scored by
:func:`bgfast.benchmark.score_evaluator`; gnubg 0/1-ply (gnubg-nn) and
bgsage's raw net and 1-ply look-ahead (bgsage) by
:func:`bgfast.benchmark.score` with their duel players
(:func:`bgfast.duel.get_player`) as choosers, each skipped when its package
is not installed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bgfast import benchmark as bm  # noqa: E402
from bgfast.duel import bgsage_available, get_player, gnubg_available  # noqa: E402

DEFAULT = os.path.join(os.path.dirname(__file__), "..", "data", "benchmark")


def peer_chooser(name: str):
    """A peer engine's play (``bgfast.duel.get_player``), as a chooser."""
    player = get_player(name)
    return lambda board, d1, d2: player.play(board, d1, d2, 0)


PEERS = (("gnubg 0-ply (gnubg-nn)", "gnubg", gnubg_available),
         ("gnubg 1-ply (gnubg-nn)", "gnubg@1", gnubg_available),
         ("bgsage raw net", "bgsage", bgsage_available),
         ("bgsage 1-ply look-ahead", "bgsage@1", bgsage_available))


def choices(db):
    """``(name, chosen keys, seconds)`` for every chooser."""
    out = []
    for name, ev, plies in (("bgfast net 0-ply", "net", 0), ("bgfast net 1-ply", "net", 1),
                            ("bgfast net 2-ply", "net", 2), ("pubeval", "pubeval", 0)):
        t = time.monotonic()
        out.append((name, bm.evaluator_choices(db, ev, plies), time.monotonic() - t))
    for name, player, available in PEERS:
        if not available():
            print(f"{name}: its package is not installed, skipped", file=sys.stderr)
            continue
        t = time.monotonic()
        out.append((name, bm.choices(db, peer_chooser(player)), time.monotonic() - t))
    return out


def paired(db, loss_a, loss_b, sets):
    """Per set: the mean of ``loss_a - loss_b`` x1000 and its standard error."""
    out = {}
    for x in sets:
        d = (loss_a - loss_b)[db.classes == bm.SETS.index(x)]
        out[x] = (1000 * d.mean(), 1000 * d.std(ddof=1) / np.sqrt(len(d)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("directory", nargs="?", default=DEFAULT)
    ap.add_argument("--markdown", action="store_true", help="A markdown table.")
    args = ap.parse_args()
    db = bm.load(args.directory)
    sets = [s for s in bm.SETS if db.class_counts()[s]]
    picks = choices(db)
    res = [(name, bm.summarize(db, *bm.losses(db, keys), sets), t) for name, keys, t in picks]
    loss = {name: bm.losses(db, keys)[0] for name, keys, _t in picks}
    s = db.meta["settings"]
    print(f"{args.directory}: {db.class_counts()} decisions; reference: {s['trials']} trials, "
          f"truncate {s['truncate']}, policy {s['policy']}, variance reduction "
          f"{s['variance_reduction']}; margin {db.meta['margin']}, at most "
          f"{db.meta['max_candidates']} candidates")
    if args.markdown:
        print("| chooser | " + " | ".join(f"{x} error (mE) | {x} best" for x in sets) + " |")
        print("|---|" + "---:|---:|" * len(sets))
        for name, sc, _t in res:
            cells = " | ".join(f"{sc[x].error:.2f} ± {sc[x].se:.2f} | {100 * sc[x].best:.1f}%"
                               for x in sets)
            print(f"| {name} | {cells} |")
        for name, sc, t in res:
            print(f"{name}: plays outside the candidates " + ", ".join(
                f"{x} {sc[x].outside}" for x in sets) + f" [{t:.1f} s]")
    else:
        for name, sc, t in res:
            cells = "  ".join(f"{x} {sc[x].error:6.2f} ± {sc[x].se:5.2f} ({100 * sc[x].best:4.1f}% "
                              f"best, {sc[x].outside} outside)" for x in sets)
            print(f"{name:<26} {cells}  [{t:.1f} s]")
    for a, b in (("bgfast net 0-ply", "gnubg 0-ply (gnubg-nn)"),
                 ("bgfast net 1-ply", "gnubg 1-ply (gnubg-nn)")):
        if a in loss and b in loss:
            d = paired(db, loss[a], loss[b], sets)
            print(f"paired, {a} minus {b}: " + ", ".join(
                f"{x} {m:+.2f} ± {e:.2f} mE" for x, (m, e) in d.items()))


if __name__ == "__main__":
    main()
