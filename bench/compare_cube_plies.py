"""bgfast's cube decisions at 0 and 2 plies beside gnubg's, on contact positions.

The positions are ``bench_corpus.contact_positions(n, seed)`` (seeded random
self-play, contact only) at every context of ``CONTEXTS``, or with
``--source matches`` the contact positions of the self-play matches of
``compare_match_analysis.py`` (``bench/data``) where the side on roll may
double, each at its own cube and score.  Each is analysed by Debian's ``gnubg -t``
(``hint`` with no dice, ``set evaluation cubedecision eval plies N``; the
driver of ``compare_cube_gnubg.py``) at 0 and at 2 plies, and by bgfast in
three ways, so that the difference of the nets and that of the search show
apart:

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
The equities are compared by the mean absolute difference of bgfast's
no-double (dND) and double/take (dDT) equities from gnubg's, and the mean
signed dND: above zero when bgfast values the side on roll higher.

Usage::

    nice -n 10 python bench/compare_cube_plies.py --n 400 --seed 1 [--plies 0 2] [--source matches]

gnubg is an oracle only; ``gnubg_nn`` is optional (without it the
``gnubg-nn`` rows are left out).
"""
from __future__ import annotations

import argparse
import base64
import glob
import os
import re
import sys
import tempfile
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


def nontrivial(g, margin: float) -> bool:
    """Whether gnubg's equities make the decision a close one."""
    return (abs(min(g.double_take, g.double_pass) - g.no_double) <= margin
            or abs(g.double_take - g.double_pass) <= margin)


def random_groups(n: int, seed: int) -> list:
    """``(label, boards, context, driver spec)`` of the random positions at
    every context of ``CONTEXTS``."""
    boards = contact_positions(n, seed)
    return [(name, boards, ctx, spec) for name, ctx, spec in CONTEXTS]


def _playing(match_id: str) -> str:
    """A Match ID of gnubg's text export with its game state set to
    "playing" (the export writes game state 0, "no game", beside the dice)."""
    raw = bytearray(base64.b64decode(match_id))
    raw[1] = (raw[1] & ~0b111) | 1                 # bits 8-10: the game state
    return base64.b64encode(bytes(raw)).decode()


def match_groups(paths, gnubg: str, timeout: float) -> list:
    """The contact positions before a roll of gnubg's self-play matches
    (``paths``: .mat files, read by gnubg's ``export match text``) where the
    side on roll may double, one group per cube context, all labelled
    "self-play matches"."""
    from compare_match_analysis import gnubg as run_script

    from bgfast.formats import MatchState
    from bgfast.position import PositionClass

    seen, by_ctx = set(), {}
    for path in paths:
        with tempfile.TemporaryDirectory() as tmp:
            txt = os.path.join(tmp, "m.txt")
            run_script(f"import mat {path}\nexport match text {txt}\n", gnubg, timeout)
            text = "".join(open(f).read() for f in sorted(glob.glob(os.path.join(tmp, "m*.txt"))))
        for m in re.finditer(r"Move number \d+:\s+.*(?:to play|cube decision\?).*\n\n"
                             r"\s*GNU Backgammon\s+Position ID: (\S+)\s*\n\s*Match ID\s*: (\S+)",
                             text):
            pid, mid = m.group(1), m.group(2)
            pos = Position.from_position_id(pid)
            ctx = CubeContext.from_match_state(MatchState.from_match_id(_playing(mid)))
            if (pid, ctx) in seen or pos.classify() != PositionClass.CONTACT or not ctx.can_double:
                continue
            seen.add((pid, ctx))
            by_ctx.setdefault(ctx, []).append(pos.board)
    groups = []
    for ctx, boards in by_ctx.items():
        s = ctx.score
        spec = (MatchScore(s.length, s.score_me, s.score_opp, ctx.crawford), None)
        groups.append(("self-play matches", np.stack(boards), ctx, spec))
    return groups


def run(groups, plies_list, gnubg: str, margin: float, timeout: float):
    """One row per (label, plies, bgfast way): agreement with gnubg."""
    table = _cubeful_table()
    nn = gnubg_nn_evaluator()
    acc, timing = {}, {}
    for name, boards, ctx, spec in groups:
        cases = [Case(Position(b), ctx.cube, ctx.owner.value, spec[0], spec[1]) for b in boards]
        for plies in plies_list:
            t = time.perf_counter()
            g = run_gnubg(cases, gnubg, timeout=timeout, plies=plies)
            timing[("gnubg", name, plies)] = timing.get(("gnubg", name, plies), 0.0) + \
                time.perf_counter() - t
            ok = [i for i, x in enumerate(g) if x is not None]
            ways = {}
            t = time.perf_counter()
            ways["net"] = evaluate_cube_batch(boards, ctx, plies=plies)
            timing[("bgfast", name, plies)] = timing.get(("bgfast", name, plies), 0.0) + \
                time.perf_counter() - t
            if plies == 0:
                ways["gnubg-p"] = [C.cube_decision(g[i].probs, cube=ctx.cube, owner=ctx.owner.value,
                                                   match=spec[0], money=spec[1],
                                                   position=cases[i].position) for i in ok]
            if nn is not None:
                ways["gnubg-nn"] = C.searched_decisions(nn, boards, ctx, plies, table=table)
            for way, dec in ways.items():
                if isinstance(dec, list):
                    act = [d.action.value for d in dec]
                    nd = [d.no_double for d in dec]
                    dt = [d.double_take for d in dec]
                else:
                    act = [dec.decision(i).action.value for i in ok]
                    nd = list(np.asarray(dec.no_double)[ok])
                    dt = list(np.asarray(dec.double_take)[ok])
                r = acc.setdefault((name, plies, way), {"same": [], "close": [], "dnd": [],
                                                         "ddt": [], "differ": []})
                for i, a, x, y in zip(ok, act, nd, dt):
                    same = a == normalize_action(g[i].action)
                    r["same"].append(same)
                    r["close"].append(nontrivial(g[i], margin))
                    r["dnd"].append(x - g[i].no_double)
                    r["ddt"].append(abs(y - g[i].double_take))
                    if not same:
                        r["differ"].append((Position(boards[i]).position_id(), ctx.describe(),
                                            g[i].action, a))
    rows = []
    for (name, plies, way), r in acc.items():
        same, close = np.array(r["same"]), np.array(r["close"])
        rows.append({"context": name, "plies": plies, "way": way, "n": len(same),
                     "agree": same.mean(), "nontrivial": int(close.sum()),
                     "agree_nontrivial": same[close].mean() if close.any() else float("nan"),
                     "mean_dnd": float(np.mean(np.abs(r["dnd"]))), "bias_dnd": float(np.mean(r["dnd"])),
                     "mean_ddt": float(np.mean(r["ddt"])),
                     "differ": r["differ"]})
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
    ap.add_argument("--source", choices=("random", "matches"), default="random",
                    help="random: --n seeded positions at each of CONTEXTS; matches: the "
                         "positions of gnubg's self-play matches in bench/data, each at its "
                         "own cube and score")
    args = ap.parse_args(argv)
    if args.source == "random":
        groups = random_groups(args.n, args.seed)
        print(f"{args.n} contact positions (bench_corpus seed {args.seed})")
    else:
        from compare_match_analysis import SEEDS, mat_path

        groups = match_groups([mat_path(s) for s in SEEDS], args.gnubg, args.timeout)
        print(f"{sum(len(g[1]) for g in groups)} contact positions of gnubg's self-play "
              f"matches where the side on roll may double ({len(groups)} cube contexts)")
    rows, timing = run(groups, args.plies, args.gnubg, args.margin, args.timeout)
    print(f"non-trivial: gnubg's margin <= {args.margin}")
    print("| context | plies | bgfast | n | action agrees | non-trivial | agrees there "
          "| mean abs dND | mean dND | mean abs dDT |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['context']} | {r['plies']} | {r['way']} | {r['n']} | {100 * r['agree']:.1f}% "
              f"| {r['nontrivial']} | {100 * r['agree_nontrivial']:.1f}% | {r['mean_dnd']:.4f} "
              f"| {r['bias_dnd']:+.4f} | {r['mean_ddt']:.4f} |")
        for pid, where, ga, ba in r["differ"][: args.show]:
            print(f"    {pid} {where}: gnubg {ga!r}, bgfast {ba}")
    for (who, name, plies), t in sorted(timing.items()):
        print(f"time {who:<6} {plies} plies {name}: {t:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
