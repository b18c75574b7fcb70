"""How much variance would variance-reduced race rollouts leave with exact race values?

Games of bgfast's 0-ply play from a race position, played to the end in a
pure-Python loop (the estimator of ``bench/vr_estimator.py``): at every ply
the 21 rolls' plays, each valued for the mover, and the luck of the roll
thrown (its value minus the 21-roll mean) subtracted from the result.  The
same games are adjusted three ways, with the luck valued by:

* bgfast's net (``evaluator="net"``, the bear-off tables included);
* gnubg's 0-ply net (``gnubg_nn``; skipped when it is not installed);
* a one-sided 15-checker race table (``bgfast bearoff build --one-sided
  10 -o os10.bgb``) for the races it holds that are not bear-offs, and
  bgfast's exact values elsewhere (every position of such a game from a
  race inside the table): the floor that exact race values would leave.

It prints the variance per game of the plain and of the three adjusted
results, and the net's error against the table over the positions valued
(mean, root mean square, and the mean over plies of its variance over the
21 rolls, which is what the adjustment cannot subtract).

Run: python bench/race_luck.py --table os10.bgb [--games 3000] [--position 7bbFAADbtmkAAA]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
# this tree's bgfast, not an installed one
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import vr_estimator as V  # noqa: E402

from bgfast import Position, bearoff  # noqa: E402
from bgfast.evaluate import get_evaluator, install_bearoff_tables  # noqa: E402
from bgfast.position import PositionClass, classify_boards  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True, help="A one-sided 15-checker table (.bgb).")
    ap.add_argument("--games", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--position", default="7bbFAADbtmkAAA", help="A race position (Position ID).")
    args = ap.parse_args()
    table = bearoff.open(args.table)
    if table.kind != "one-sided" or table.checkers != 15:
        ap.error(f"{args.table} is not a one-sided 15-checker table")
    try:
        import gnubg_nn
    except ImportError:
        gnubg_nn = None
    install_bearoff_tables()
    ev = get_evaluator("net")
    policy = V.BgfastPolicy(ev)
    start = Position.from_position_id(args.position).board
    rng = np.random.default_rng(args.seed)
    results, lucks, errs, spread = [], [], [], []
    for _ in range(args.games):
        b = start.copy()
        sign, luck = 1.0, np.zeros(3)
        while True:
            nbs = policy.plays(b)
            vb = -V.equity(ev.evaluate_batch(nbs))
            r = table.probe_batch(nbs)
            inside = r["inside"] & (classify_boards(nbs) != PositionClass.BEAROFF)
            vt = vb.copy()
            vt[inside] = -V.equity(r["probs"][inside])
            vg = np.full(21, np.nan)
            for k, nb in enumerate(nbs):
                if not nb[0].any():
                    vg[k] = vb[k] = vt[k] = V.over_value(nb.tolist())
                elif gnubg_nn is not None:
                    vg[k] = -V.equity(gnubg_nn.probabilities(nb.tolist(), 0))
            e = vb - vt
            errs.extend(e[inside])
            spread.append(V.W21 @ (e - V.W21 @ e) ** 2)
            d1, d2 = rng.integers(1, 7, size=2)
            k = V.OF36[(int(d1), int(d2))]
            for j, v in enumerate((vb, vg, vt)):
                luck[j] += sign * (v[k] - V.W21 @ v)
            b = nbs[k]
            if not b[0].any():
                results.append(sign * V.over_value(b.tolist()))
                lucks.append(luck)
                break
            sign = -sign
    res, luck = np.array(results), np.array(lucks)
    var = [np.var(res - luck[:, j], ddof=1) for j in range(3)]
    errs = np.array(errs)
    print(f"{args.position}, {args.games} games of bgfast's 0-ply play, seed {args.seed}; "
          f"variance per game of the cubeless equity:")
    print(f"  plain {np.var(res, ddof=1):.4g}")
    print(f"  luck by bgfast's net {var[0]:.4g}")
    print(f"  luck by gnubg's net {var[1]:.4g}" if gnubg_nn is not None
          else "  luck by gnubg's net: gnubg-nn is not installed")
    print(f"  luck by the race table {var[2]:.4g}")
    print(f"bgfast's net against the table over {len(errs)} positions: mean {errs.mean():+.5f}, "
          f"rms {np.sqrt((errs ** 2).mean()):.5f}; variance over the 21 rolls, mean over plies "
          f"{np.mean(spread):.3g}")


if __name__ == "__main__":
    main()
