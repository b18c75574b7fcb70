"""bgfast, pubeval, gnubg (gnubg-nn) and bgsage on a benchmark database.

    python bench/score_benchmark_peers.py [DIR] [--markdown] [--net LABEL=WEIGHTS ...]
        [--plies 0,1,2] [--gnubg-plies 0,1,2]
    BGFAST_NET=data/net/td-net.npz python bench/score_benchmark_peers.py DIR --extend

DIR is a directory of ``bgfast benchmark build`` (default: the shipped
``data/benchmark``).  Each chooser's error rate (mean equity lost per
decision against the rollout best, x1000) with its standard error, the share
of decisions where it picks the rollout's best play and the plays that were
not rolled out, per set.  bgfast's nets (``--net``, repeatable; default the
shipped net) at 0, 1 and 2 plies and pubeval choose through
:func:`bgfast.benchmark.evaluator_choices`; gnubg (gnubg-nn) at the plies of
``--gnubg-plies`` (default 0 and 1) and
bgsage's raw net and 1-ply look-ahead (bgsage) through
:func:`bgfast.benchmark.choices` with their duel players
(:func:`bgfast.duel.get_player`) as choosers, each skipped when its package
is not installed.  ``--extend`` first rolls out every chooser's plays that
are not rolled out yet (:func:`bgfast.benchmark.extend`, kept in the
directory), so that all are scored against the same, larger reference; the
rollouts play ``$BGFAST_NET``'s net, which must be the reference's.
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
from bgfast.net import NetEvaluator, default_weights_path  # noqa: E402

DEFAULT = os.path.join(os.path.dirname(__file__), "..", "data", "benchmark")


def peer_chooser(name: str):
    """A peer engine's play (``bgfast.duel.get_player``), as a chooser."""
    player = get_player(name)
    return lambda board, d1, d2: player.play(board, d1, d2, 0)


def peers(gnubg_plies=(0, 1)):
    """``(name, duel player, available)`` of the peer choosers: gnubg (gnubg-nn)
    at each of ``gnubg_plies``, bgsage's raw net and its 1-ply look-ahead."""
    return tuple((f"gnubg {n}-ply (gnubg-nn)", f"gnubg@{n}", gnubg_available)
                 for n in gnubg_plies) + (
        ("bgsage raw net", "bgsage", bgsage_available),
        ("bgsage 1-ply look-ahead", "bgsage@1", bgsage_available))


def choices(db, nets, plies=(0, 1, 2), gnubg_plies=(0, 1)):
    """``(name, chosen keys, seconds)`` for every chooser; ``nets``: ``(label,
    weights file)`` of bgfast's nets, at each of ``plies``; gnubg at each of
    ``gnubg_plies``."""
    out = []
    evaluators = [(f"{label} {n}-ply", NetEvaluator(path), n) for label, path in nets
                  for n in plies] + [("pubeval", "pubeval", 0)]
    for name, ev, n in evaluators:
        t = time.monotonic()
        out.append((name, bm.evaluator_choices(db, ev, n), time.monotonic() - t))
    for name, player, available in peers(gnubg_plies):
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
    ap.add_argument("--net", action="append", metavar="LABEL=WEIGHTS", default=[],
                    help="A bgfast net to score (repeatable) [default: bgfast net=the shipped net].")
    ap.add_argument("--plies", default="0,1,2", help="The nets' search depths [default: 0,1,2].")
    ap.add_argument("--gnubg-plies", default="0,1",
                    help="gnubg's search depths [default: 0,1; 2 takes about 0.1 s a decision].")
    ap.add_argument("--extend", action="store_true",
                    help="Roll out every chooser's plays that are not rolled out yet, then score.")
    ap.add_argument("-j", "--jobs", type=int, default=None, help="Processes for --extend.")
    args = ap.parse_args()
    nets = [tuple(x.split("=", 1)) for x in args.net] or [("bgfast net", str(default_weights_path()))]
    if any(len(x) != 2 for x in nets):
        ap.error("--net takes LABEL=WEIGHTS")
    db = bm.load(args.directory)
    sets = [s for s in bm.SETS if db.class_counts()[s]]
    gnubg_plies = tuple(int(x) for x in args.gnubg_plies.split(","))
    picks = choices(db, nets, tuple(int(x) for x in args.plies.split(",")), gnubg_plies)
    if args.extend:
        for name, keys, _t in picks:
            r = bm.extend(args.directory, keys, jobs=args.jobs)
            print(f"{name}: {r['rolled_out']} plays rolled out ({r['seconds']} s)", file=sys.stderr)
        db = bm.load(args.directory)
    res = [(name, bm.summarize(db, *bm.losses(db, keys), sets), t) for name, keys, t in picks]
    loss = {name: bm.losses(db, keys)[0] for name, keys, _t in picks}
    s = db.meta["settings"]
    print(f"{args.directory}: {db.class_counts()} decisions; reference: {s['trials']} trials, "
          f"truncate {s['truncate']}, policy {s['policy']}, variance reduction "
          f"{s['variance_reduction']}; margin {db.meta['margin']}, at most "
          f"{db.meta['max_candidates']} candidates; {int(db.extra.sum())} extra plays")
    if args.markdown:
        print("| chooser | " + " | ".join(f"{x} error (mE) | {x} best" for x in sets) + " |")
        print("|---|" + "---:|---:|" * len(sets))
        for name, sc, _t in res:
            cells = " | ".join(f"{sc[x].error:.2f} ± {sc[x].se:.2f} | {100 * sc[x].best:.1f}%"
                               for x in sets)
            print(f"| {name} | {cells} |")
        for name, sc, t in res:
            print(f"{name}: plays not rolled out " + ", ".join(
                f"{x} {sc[x].outside}" for x in sets) + f" [{t:.1f} s]")
    else:
        for name, sc, t in res:
            cells = "  ".join(f"{x} {sc[x].error:6.2f} ± {sc[x].se:5.2f} ({100 * sc[x].best:4.1f}% "
                              f"best, {sc[x].outside} outside)" for x in sets)
            print(f"{name:<26} {cells}  [{t:.1f} s]")
    for a, b in [(f"{label} {n}-ply", f"gnubg {n}-ply (gnubg-nn)") for label, _p in nets
                 for n in gnubg_plies]:
        if a in loss and b in loss:
            d = paired(db, loss[a], loss[b], sets)
            print(f"paired, {a} minus {b}: " + ", ".join(
                f"{x} {m:+.2f} ± {e:.2f} mE" for x, (m, e) in d.items()))


if __name__ == "__main__":
    main()
