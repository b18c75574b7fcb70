"""Which part of the luck adjustment leaves variance: the estimator or the evaluator?

A slow pure-Python rollout loop (a test bench only) with the estimator of
``bgfast._rollout.play_trial``: at every ply the policy's play for each of
the 21 rolls, each valued for the mover, and the luck of the roll thrown
(its value minus the 21-roll mean) subtracted from the result.  One game
is played and adjusted twice, with the same plays and dice: once valued by
gnubg's 0-ply net (``gnubg_nn``: its nets and bear-off databases), once by
bgfast's (``evaluator="net"``).  The policy is gnubg's 0-ply play
(``gnubg_nn.bestmove``) or bgfast's (``--policy bgfast``: the best 0-ply
equity by its net).

Per position it prints the variance per game of the plain result and of
the two adjusted results, in cubeless equity (money, no cube).  Compare
with the per-game variances of the engines' own rollouts
(bench/compare_rollout.py): if the gnubg-valued column matches gnubg's own
rollout, the estimator is the same; the ratio of the two columns is the
evaluator's share.

Run: python bench/vr_estimator.py [--games 300] [--policy gnubg|bgfast] [--positions ...]
"""
import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
# this tree's bgfast, not an installed one
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from compare_rollout import POSITIONS  # noqa: E402

from bgfast.evaluate import get_evaluator, install_bearoff_tables  # noqa: E402

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
W21 = np.array([(1.0 if a == b else 2.0) / 36.0 for a, b in ROLLS])
OF36 = {(a, b): i for i, (a, b) in enumerate(ROLLS)}
OF36.update({(b, a): i for i, (a, b) in enumerate(ROLLS)})


def equity(p):
    """Cubeless money equity of 5 cumulative probabilities (rows: last axis)."""
    p = np.asarray(p, dtype=np.float64)
    return 2 * p[..., 0] - 1 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]


def over_value(nb):
    """The mover's result (equity) when the mover, row 0 of nb, has borne off
    everything (nb: next player on roll in row 1)."""
    loser = nb[1]
    if sum(loser) < 15:
        return 1.0
    if any(loser[18:25]):          # a checker in the winner's home board or on the bar
        return 3.0
    return 2.0


class Policy:
    def plays(self, b):
        """The next boards (the mover in row 0) after the policy's play of each
        of the 21 rolls from b (the player on roll in row 1), uint8[21, 2, 25]."""
        raise NotImplementedError


class GnubgPolicy(Policy):
    def __init__(self):
        import gnubg_nn

        self.g = gnubg_nn

    def plays(self, b):
        out = np.empty((21, 2, 25), dtype=np.uint8)
        bl = b.tolist()
        for k, (d1, d2) in enumerate(ROLLS):
            key = self.g.bestmove(bl, d1, d2, b=1)[1]
            out[k] = self.g.board_from_position_key(key)   # [mover, opponent]: turn passed
        return out


class BgfastPolicy(Policy):
    def __init__(self, ev):
        self.ev = ev

    def plays(self, b):
        dice = np.array(ROLLS, dtype=np.int64)
        boards = np.repeat(b[None], 21, axis=0)
        _counts, res = self.ev.choose(boards, dice)
        return np.ascontiguousarray(res, dtype=np.uint8)


def mover_values(next_boards, gnubg_probs, bgfast_ev):
    """The mover's equity after each of the 21 plays: by gnubg's 0-ply net and
    by bgfast's evaluator (finished games: their exact result)."""
    vb = -equity(bgfast_ev.evaluate_batch(next_boards))
    vg = np.empty(21)
    for k, nb in enumerate(next_boards):
        if not nb[0].any():
            vg[k] = vb[k] = over_value(nb.tolist())
        else:
            vg[k] = -equity(gnubg_probs(nb.tolist(), 0))
    return vg, vb


CLASSES = ("contact", "race", "bear-off")


def play_game(start, policy, gprobs, bev, rng):
    """The starter's plain result of one game, its plies, and the luck of its
    rolls valued by gnubg's and by bgfast's net, summed by the class of the
    position rolled from (float64[2, 3]: evaluator x contact, race, bear-off)."""
    from bgfast._board import board_classes

    b = start.copy()
    sign = 1.0
    luck = np.zeros((2, 3))
    plies = 0
    while True:
        nbs = policy.plays(b)
        vg, vb = mover_values(nbs, gprobs, bev)
        c = 3 - int(board_classes(b[None])[0])       # 0 contact, 1 race, 2 bear-off
        d1, d2 = rng.integers(1, 7, size=2)
        k = OF36[(int(d1), int(d2))]
        luck[0, c] += sign * (vg[k] - W21 @ vg)
        luck[1, c] += sign * (vb[k] - W21 @ vb)
        b = nbs[k]
        plies += 1
        if not b[0].any():
            return sign * over_value(b.tolist()), plies, luck
        sign = -sign


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--policy", choices=["gnubg", "bgfast"], default="gnubg")
    ap.add_argument("--positions", nargs="+", default=list(POSITIONS), choices=list(POSITIONS))
    args = ap.parse_args()
    import gnubg_nn

    install_bearoff_tables()
    bev = get_evaluator("net")
    policy = GnubgPolicy() if args.policy == "gnubg" else BgfastPolicy(bev)
    print(f"# policy: {args.policy} 0-ply; {args.games} games a position, seed {args.seed}; "
          f"variance per game of the cubeless equity; load {os.getloadavg()[0]:.1f}")
    print("| position | plain | luck by gnubg net | luck by bgfast net | bgfast / gnubg | "
          "mean plain | mean gnubg-adj | mean bgfast-adj | plies | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    split = {}
    for name in args.positions:
        start = np.array(gnubg_nn.board_from_position_id(POSITIONS[name]), dtype=np.uint8)
        rng = np.random.default_rng([args.seed, list(POSITIONS).index(name)])
        t0 = time.perf_counter()
        games = [play_game(start, policy, gnubg_nn.probabilities, bev, rng)
                 for _ in range(args.games)]
        dt = time.perf_counter() - t0
        res = np.array([g[0] for g in games])
        luck = np.array([g[2] for g in games])              # [games, 2, 3]
        rows = np.column_stack([res, res - luck[:, 0].sum(1), res - luck[:, 1].sum(1),
                                [g[1] for g in games]])
        # bgfast's values everywhere but in one class of positions, gnubg's there
        split[name] = [np.var(res - luck[:, 1].sum(1) + luck[:, 1, c] - luck[:, 0, c], ddof=1)
                       for c in range(3)]
        var = rows[:, :3].var(axis=0, ddof=1)
        mean = rows[:, :3].mean(axis=0)
        se = np.sqrt(var / len(rows))
        print(f"| {name} | {var[0]:.4g} | {var[1]:.4g} | {var[2]:.4g} | {var[2] / var[1]:.2f} | "
              f"{mean[0]:+.3f}±{se[0]:.3f} | {mean[1]:+.4f}±{se[1]:.4f} | "
              f"{mean[2]:+.4f}±{se[2]:.4f} | {rows[:, 3].mean():.1f} | {dt:.0f} |", flush=True)
    print("\nVariance per game with bgfast's values, except gnubg's for the rolls from one "
          "class of positions:")
    print("| position | " + " | ".join(f"gnubg in {c}" for c in CLASSES) + " |")
    print("|---|---|---|---|")
    for name, v in split.items():
        print(f"| {name} | " + " | ".join(f"{x:.4g}" for x in v) + " |")


if __name__ == "__main__":
    main()
