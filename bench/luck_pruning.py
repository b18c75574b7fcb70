"""Could a cheaper luck estimator pay? How often pubeval's best K plays hold the net's best.

A rollout with variance reduction spends nearly all its time finding, for
each of the 21 rolls of every ply, the play the net values best (the luck
play).  A cheaper estimator would let pubeval pick K candidates and the net
value only those: the luck of a roll stays unbiased (the same function for
every roll), but wherever pubeval's K miss the net's best play the roll's
value falls short of it, and that shortfall adds to the variance the
adjustment leaves.

For seeded positions of a training file, each with a seeded roll, this
prints per class (contact, race) and K: how often the K plays pubeval
scores best hold the net's best play, and the mean and root mean square
shortfall of the best of them (the net's cubeless equity for the mover).

Run: python bench/luck_pruning.py [--positions data/training/selfplay-6.bgtd] [--n 6000] [--seed 1]
"""
import argparse

import numpy as np

from bgfast import _board, _evaluate
from bgfast import net as netmod
from bgfast import traindata
from bgfast.evaluate import equity, install_bearoff_tables
from bgfast.movegen import legal_plays_batch
from bgfast.position import unpack

CONTACT, RACE = 3, 2          # bgfast._board.board_classes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", default="data/training/selfplay-6.bgtd")
    ap.add_argument("--n", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--k", type=int, nargs="+", default=[1, 2, 3, 4, 6, 8])
    a = ap.parse_args()
    install_bearoff_tables()
    ps = traindata.load_positions(a.positions)
    rng = np.random.default_rng(a.seed)
    boards = unpack(ps.keys[rng.choice(len(ps.keys), min(a.n, len(ps.keys)), replace=False)])
    cls = _board.board_classes(boards)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    off, res = legal_plays_batch(boards, dice)
    eq = -equity(netmod.default_net().evaluate_batch(res))          # for the mover
    contact = np.repeat((cls == CONTACT).astype(np.int8), np.diff(off))
    pub = _evaluate.pubeval_scores(res, contact)                     # weights of the board before
    print("class    K  decisions  plays  best in K  mean shortfall  rms shortfall")
    for name, c in (("contact", CONTACT), ("race", RACE)):
        rows = [i for i in np.flatnonzero(cls == c) if off[i + 1] - off[i] > 1]
        for k in a.k:
            hit, short = [], []
            for i in rows:
                e, p = eq[off[i]:off[i + 1]], pub[off[i]:off[i + 1]]
                top = np.argsort(-p, kind="stable")[:k]
                hit.append(e[top].max() >= e.max())
                short.append(e.max() - e[top].max())
            plays = np.mean([off[i + 1] - off[i] for i in rows])
            print(f"{name:8} {k:2} {len(rows):10} {plays:6.1f} {np.mean(hit):10.3f} "
                  f"{np.mean(short):15.5f} {np.sqrt(np.mean(np.square(short))):14.5f}")


if __name__ == "__main__":
    main()
