"""How a net's values move from one ply of look-ahead to the next, beside gnubg's.

    python bench/ply_consistency.py [--n 600] [--seed 3] [--depths 0,1,2,1+2]
        [--calibrate OUT.npz [--positions 150000]]
    python bench/ply_consistency.py --choose 0,0.25,0.5,0.75,1 [--sets contact,crashed]

Two measurements on the full benchmark (``data/benchmark-full``), per set
(contact, crashed, race), for ``$BGFAST_NET``'s net (default the shipped
one) and gnubg's (gnubg-nn, when installed):

* **1-ply minus 0-ply**: on ``--n`` of the decisions' positions (seeded
  sample, the player on roll), the mean and root mean square of the
  difference between the 1-ply and the 0-ply cubeless equity.  A net whose
  0-ply value of the side on roll is too low by b has a 1-ply value too
  high by about b (its leaves have the other side on roll): the mean shows
  twice the bias, and a variance-reduced rollout subtracts luck against
  values that swing so from ply to ply.
* **Against the rollouts**: on ``--n`` decisions, the position after the
  first candidate play (the other side on roll) valued at 0, 1 and 2 plies
  (``--depths``: any of 0-3, or the mean of several, such as ``2+3``; gnubg
  at 0 and 1), minus the reference rollout's equity, for the mover: the
  mean (bias) and the root mean square.

``--calibrate OUT`` also writes the net with each of its contact and
crashed nets' output biases shifted (in logit space, five numbers a net) so
that its mean 0-ply probabilities equal the mean of its 0-ply and 1-ply
probabilities on ``--positions`` contact and crashed positions of
``data/training/selfplay-7``, ``crashed-4`` and ``selfplay-6`` (seeded
sample): the experiment of docs/training.md#the-side-on-roll-at-odd-and-even-plies.

``--choose W,...`` scores instead, on every decision of ``--sets``, the
choosers that rank the plays the 2-ply search keeps (its 0-ply filter) by
``W`` times their 1-ply equity plus ``1 - W`` times their 2-ply equity
(``W = 0`` is the Expert level's choice): the error per decision, and each
paired with ``W = 0``.  Whether a mix of an odd and an even look-ahead,
whose leans for and against the side on roll cancel, ranks plays better.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from bgfast import _net, benchmark as bm, net as netmod, traindata  # noqa: E402
from bgfast.evaluate import equity, evaluate_ply, install_bearoff_tables, rank_plays_batch  # noqa: E402
from bgfast.position import pack, unpack  # noqa: E402
from score_benchmark_peers import paired  # noqa: E402


def _eq(p) -> np.ndarray:
    return np.asarray(equity(np.asarray(p, dtype=np.float64)))


def _gnubg():
    try:
        import gnubg_nn
    except ImportError:
        print("gnubg-nn is not installed: bgfast alone", file=sys.stderr)
        return None
    return lambda boards, plies: _eq([gnubg_nn.probabilities(b.tolist(), plies) for b in boards])


def _stats(d) -> str:
    return f"{np.mean(d):+.4f} / {np.sqrt(np.mean(np.square(d))):.4f}"


def consistency(db, n: int, seed: int, gnubg) -> None:
    """The 1-ply minus 0-ply table (mean / rms of the equity)."""
    rng = np.random.default_rng(seed)
    print("| set | bgfast 1-ply - 0-ply | gnubg 1-ply - 0-ply |")
    print("|---|---:|---:|")
    for k, name in enumerate(bm.SETS):
        idx = rng.choice(np.flatnonzero(db.classes == k), n, replace=False)
        b = db.boards[idx]
        ours = _stats(_eq(evaluate_ply(b, 1)) - _eq(evaluate_ply(b, 0)))
        theirs = _stats(gnubg(b, 1) - gnubg(b, 0)) if gnubg else "n/a"
        print(f"| {name} | {ours} | {theirs} |", flush=True)


def against_rollouts(db, n: int, seed: int, gnubg, depths=("0", "1", "2")) -> None:
    """The positions after the first candidate, each engine's value minus the
    rollout's; bgfast's at each of ``depths`` (a ply, or plies joined by +:
    the mean of their probabilities, as ``bgfast data values --plies 1,2``
    labels)."""
    rng = np.random.default_rng(seed + 1)
    cols = [f"bgfast {d}-ply" if "+" not in d else f"bgfast mean of {d} plies" for d in depths]
    if gnubg:
        cols += ["gnubg 0-ply", "gnubg 1-ply"]
    print("| set | rollout SE (median) | " + " | ".join(cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))
    for k, name in enumerate(bm.SETS):
        idx = rng.choice(np.flatnonzero(db.classes == k), n, replace=False)
        b = unpack(db.cand[idx, 0])
        ref = db.equity[idx, 0]
        probs = {}
        for p in sorted({int(x) for d in depths for x in d.split("+")}):
            probs[p] = evaluate_ply(b, p)
        vals = [-_eq(np.mean([probs[int(x)] for x in d.split("+")], axis=0)) for d in depths]
        if gnubg:
            vals += [-gnubg(b, p) for p in (0, 1)]
        print(f"| {name} | {np.median(db.stderr[idx, 0]):.4f} | "
              + " | ".join(_stats(v - ref) for v in vals) + " |", flush=True)


def calibrate(out: str, positions: int, seed: int) -> None:
    """Write the net with its contact and crashed nets' output biases shifted (see the module)."""
    net = netmod.default_net()
    a = net.arrays()
    boards = []
    for f in ("selfplay-7", "crashed-4", "selfplay-6"):
        ps = traindata.load_positions(os.path.join(ROOT, "data", "training", f"{f}.bgtd"))
        boards.append(traindata.select_classes(ps, ("contact", "crashed")).boards)
    b = np.concatenate(boards)
    b = np.ascontiguousarray(b[np.random.default_rng(seed).permutation(len(b))[:positions]])
    which = _net.nets_of(b, a["b2"].shape[0])
    p0, p1 = evaluate_ply(b, 0), evaluate_ply(b, 1)
    target = (p0 + p1) / 2
    q = np.clip(p0, 1e-7, 1 - 1e-7)
    z = np.log(q / (1 - q))
    b2 = a["b2"].astype(np.float64)
    for k in np.unique(which):
        m = which == k
        shift = np.zeros(5)
        for _ in range(20):                      # Newton steps on the mean of each output
            s = 1 / (1 + np.exp(-(z[m] + shift)))
            slope = np.maximum((s * (1 - s)).mean(axis=0), 1e-6)
            shift += (target[m].mean(axis=0) - s.mean(axis=0)) / slope
        print(f"net {k}: {int(m.sum())} positions, 1-ply - 0-ply "
              f"{np.mean(_eq(p1[m]) - _eq(p0[m])):+.4f}, shift {np.round(shift, 4).tolist()}")
        b2[k] += shift
    meta = dict(net.meta, calibrated={"positions": int(len(b)), "seed": seed})
    new = netmod.Net(_net.Model(a["w1"], a["b1"], a["w2"], b2.astype(np.float32), net.groups),
                     meta, net.one_sided)
    netmod.save(new, out)
    print(f"wrote {out} (checksum {new.checksum()[:16]})")


def mixed_choice(db, weights, sets, batch: int = 64) -> None:
    """Score the choosers ranking the 2-ply search's plays by ``w`` 1-ply + ``(1 - w)`` 2-ply
    on the decisions of ``sets`` of the loaded benchmark ``db``."""
    db = db.of_sets(sets)
    n = len(db)
    chosen = np.zeros((len(weights), n, 10), dtype=np.uint8)
    for a in range(0, n, batch):
        b = min(a + batch, n)
        boards, dice = db.boards[a:b], db.dice[a:b].astype(np.int64)
        r1, r2 = (rank_plays_batch(boards, dice, plies=p) for p in (1, 2))
        for k in range(b - a):
            lo, hi = r2.offsets[k], r2.offsets[k + 1]
            deep = np.flatnonzero(r2.depth[lo:hi] > 0) + lo
            assert (r1.depth[deep] > 0).all() and (r1.depth[lo:hi] > 0).sum() == len(deep)
            for j, w in enumerate(weights):
                i = (deep[int(np.argmax(w * r1.equity[deep] + (1 - w) * r2.equity[deep]))]
                     if len(deep) else r2.order[lo])
                chosen[j, a + k] = pack(r2.results[i:i + 1])[0]
        print(f"{b} / {n} decisions", file=sys.stderr, flush=True)
    loss = [bm.losses(db, c) for c in chosen]
    print("| weight of the 1-ply equity | " + " | ".join(sets) + " | "
          + " | ".join(f"{s}, paired with 0" for s in sets) + " |")
    print("|---:|" + "---:|" * (2 * len(sets)))
    for j, w in enumerate(weights):
        score = bm.summarize(db, *loss[j], sets)
        diff = paired(db, loss[j][0], loss[0][0], sets)
        print(f"| {w:g} | " + " | ".join(f"{score[s].error:.2f} ± {score[s].se:.2f}" for s in sets)
              + " | " + " | ".join(f"{m:+.2f} ± {e:.2f}" for m, e in diff.values()) + " |",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=600, help="Decisions a set [default: 600].")
    ap.add_argument("--seed", type=int, default=3, help="Seed of the samples [default: 3].")
    ap.add_argument("--calibrate", metavar="OUT", help="Also write the calibrated net to OUT.")
    ap.add_argument("--positions", type=int, default=150_000,
                    help="Positions the calibration fits [default: 150000].")
    ap.add_argument("--choose", metavar="W,...",
                    help="Score the choosers mixing 1-ply and 2-ply equities with these weights "
                         "of the 1-ply one (the first is the baseline of the paired columns).")
    ap.add_argument("--sets", default="contact,crashed",
                    help="The sets --choose scores [default: contact,crashed].")
    ap.add_argument("--depths", default="0,1,2",
                    help="bgfast's look-aheads against the rollouts: plies 0-3, or plies joined "
                         "by + for the mean of their probabilities [default: 0,1,2].")
    args = ap.parse_args()
    for d in args.depths.split(","):
        if not all(x in ("0", "1", "2", "3") for x in d.split("+")):
            ap.error(f"--depths: {d!r} is not a ply 0-3 or plies joined by +")
    install_bearoff_tables()
    db = bm.load(os.path.join(ROOT, "data", "benchmark-full"))
    if args.choose:
        weights = [float(w) for w in args.choose.split(",")]
        if weights[0] != 0:
            ap.error("--choose: the first weight is the baseline, 0")
        mixed_choice(db, weights, args.sets.split(","))
        return
    gnubg = _gnubg()
    consistency(db, args.n, args.seed, gnubg)
    against_rollouts(db, args.n, args.seed, gnubg, args.depths.split(","))
    if args.calibrate:
        calibrate(args.calibrate, args.positions, args.seed)


if __name__ == "__main__":
    main()
