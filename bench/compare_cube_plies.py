"""bgfast's cube decisions at 0 and 2 plies beside gnubg's, on contact positions.

The positions are ``bench_corpus.contact_positions(n, seed)`` (seeded random
self-play, contact only).  Each is analysed by Debian's ``gnubg -t``
(``hint`` with no dice, ``set evaluation cubedecision eval plies N``; the
driver of ``compare_cube_gnubg.py``) at 0 and at 2 plies, at every context
of ``CONTEXTS`` (money and two 7-point match scores), and by bgfast in four
ways, so that the difference of the nets and that of the search show apart:

``net``        bgfast's own net: ``evaluate_cube_batch(boards, ctx, plies=N)``.
``gnubg-p``    (0 plies) bgfast's cube model (:func:`bgfast.cube.cube_decision`)
               on the probabilities gnubg printed: the cube arithmetic alone.
``gnubg-nn``   bgfast's cubeful search (:func:`bgfast.cube.searched_decisions`)
               with gnubg's own 0-ply net (the ``gnubg_nn`` module) at its
               leaves: at 2 plies, the search alone.

Agreement is on the proper action (gnubg's text read as bgfast's action,
"redouble" as "double"); a decision is *non-trivial* when gnubg's own
equities put the double within ``--margin`` (default 0.1) of no double
(``|min(DT, DP) - ND|``) or the take within it of the pass (``|DT - DP|``).

Usage::

    nice -n 10 python bench/compare_cube_plies.py --n 400 --seed 1 [--plies 0 2]

gnubg is an oracle only; ``gnubg_nn`` is optional (without it the
``gnubg-nn`` rows are left out).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from bench_corpus import contact_positions  # noqa: E402
from compare_cube_gnubg import Case, normalize_action, run_gnubg  # noqa: E402

from bgfast import cube as C  # noqa: E402
from bgfast.cube import CubeContext, MoneyRules  # noqa: E402
from bgfast.evaluate import Evaluator, _cubeful_table, evaluate_cube_batch  # noqa: E402
from bgfast.met import MatchScore  # noqa: E402
from bgfast.position import Position  # noqa: E402

#: (name, bgfast context, the same for the gnubg driver: (match or None, money or None))
CONTEXTS = [
    ("money, centred", CubeContext.money(), (None, MoneyRules())),
    ("7pt 2-4 (5-away 3-away), centred", CubeContext.match(7, 2, 4),
     (MatchScore(7, 2, 4, False), None)),
    ("7pt 4-2 (3-away 5-away), centred", CubeContext.match(7, 4, 2),
     (MatchScore(7, 4, 2, False), None)),
]


class GnubgNNEvaluator(Evaluator):
    """gnubg's 0-ply net (``gnubg_nn.probabilities(board, 0)``) as a bgfast
    evaluator: the same board layout, one Python call a board."""

    name = "gnubg-nn"

    def __init__(self):
        import gnubg_nn

        self._probs = gnubg_nn.probabilities

    def evaluate_batch(self, boards) -> np.ndarray:
        b = np.asarray(boards, dtype=np.uint8).reshape(-1, 2, 25)
        return np.array([self._probs(x.tolist(), 0) for x in b], dtype=np.float64).reshape(-1, 5)


def gnubg_nn_evaluator():
    """:class:`GnubgNNEvaluator`, or None where ``gnubg_nn`` is not installed."""
    try:
        return GnubgNNEvaluator()
    except ImportError:
        return None


def _cases(boards, spec) -> list[Case]:
    match, money = spec
    return [Case(Position(b), 1, "centre", match, money) for b in boards]


def nontrivial(g, margin: float) -> bool:
    """Whether gnubg's equities make the decision a close one."""
    return (abs(min(g.double_take, g.double_pass) - g.no_double) <= margin
            or abs(g.double_take - g.double_pass) <= margin)


def run(n: int, seed: int, plies_list, gnubg: str, margin: float, timeout: float):
    """One row per (context, plies, bgfast way): agreement with gnubg."""
    boards = contact_positions(n, seed)
    table = _cubeful_table()
    nn = gnubg_nn_evaluator()
    rows, timing = [], {}
    for name, ctx, spec in CONTEXTS:
        cases = _cases(boards, spec)
        for plies in plies_list:
            t = time.perf_counter()
            g = run_gnubg(cases, gnubg, timeout=timeout, plies=plies)
            timing[("gnubg", name, plies)] = time.perf_counter() - t
            ok = [i for i, x in enumerate(g) if x is not None]
            gact = [normalize_action(g[i].action) for i in ok]
            close = np.array([nontrivial(g[i], margin) for i in ok], dtype=bool)
            ways = {}
            t = time.perf_counter()
            ways["net"] = evaluate_cube_batch(boards, ctx, plies=plies)
            timing[("bgfast", name, plies)] = time.perf_counter() - t
            if plies == 0:
                ways["gnubg-p"] = [C.cube_decision(g[i].probs, cube=1, owner="centre",
                                                   match=spec[0], money=spec[1],
                                                   position=cases[i].position) for i in ok]
            if nn is not None:
                ways["gnubg-nn"] = C.searched_decisions(nn, boards, ctx, plies, table=table)
            for way, dec in ways.items():
                if isinstance(dec, list):
                    act = [d.action.value for d in dec]
                    nd = np.array([d.no_double for d in dec])
                    dt = np.array([d.double_take for d in dec])
                else:
                    act = [dec.decision(i).action.value for i in ok]
                    nd = np.asarray(dec.no_double)[ok]
                    dt = np.asarray(dec.double_take)[ok]
                same = np.array([a == b for a, b in zip(act, gact)], dtype=bool)
                gnd = np.array([g[i].no_double for i in ok])
                gdt = np.array([g[i].double_take for i in ok])
                rows.append({
                    "context": name, "plies": plies, "way": way, "n": len(ok),
                    "agree": same.mean(), "nontrivial": int(close.sum()),
                    "agree_nontrivial": same[close].mean() if close.any() else float("nan"),
                    "mean_dnd": float(np.abs(nd - gnd).mean()),
                    "mean_ddt": float(np.abs(dt - gdt).mean()),
                    "differ": [(Position(boards[i]).position_id(), g[i].action, a)
                               for i, a, s in zip(ok, act, same) if not s],
                })
    return rows, timing


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plies", type=int, nargs="+", default=[0, 2])
    ap.add_argument("--gnubg", default="/usr/games/gnubg")
    ap.add_argument("--margin", type=float, default=0.1)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per gnubg run")
    ap.add_argument("--show", type=int, default=0, help="disagreements to list per row")
    args = ap.parse_args(argv)
    rows, timing = run(args.n, args.seed, args.plies, args.gnubg, args.margin, args.timeout)
    print(f"{args.n} contact positions (bench_corpus seed {args.seed}); non-trivial: "
          f"gnubg's margin <= {args.margin}")
    print(f"| context | plies | bgfast | n | action agrees | non-trivial | agrees there "
          f"| mean abs dND | mean abs dDT |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['context']} | {r['plies']} | {r['way']} | {r['n']} | {100 * r['agree']:.1f}% "
              f"| {r['nontrivial']} | {100 * r['agree_nontrivial']:.1f}% | {r['mean_dnd']:.4f} "
              f"| {r['mean_ddt']:.4f} |")
        for pid, ga, ba in r["differ"][: args.show]:
            print(f"    {pid}: gnubg {ga!r}, bgfast {ba}")
    for (who, name, plies), t in sorted(timing.items()):
        print(f"time {who:<6} {plies} plies {name}: {t:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
