"""Checks of a complete two-sided 15x15 table (a heavy manual run: the file
is 17.7 GB; build it with ``bgfast bearoff build --two-sided 6x15 -o FILE``).

    python bench/check_15x15.py FILE [--n 20000] [--seed 1]

Prints, for random pairs of positions:

1. positions with at most 6 checkers a side: the largest difference from
   the 6x6 table (equity, and the winning chance (E + 1) / 2 there);
2. positions where a side still has all 15 checkers (gammons possible):
   that the five probabilities are consistent (0 <= WG <= W, 0 <= LG <=
   1 - W, only a full side is gammoned, E = 2W - 1 + WG - LG to the
   storage precision), and how far they are from the one-sided
   convolution estimate (``OneSidedTable.race``: each side alone minimising
   its expected rolls, which is not the equity-maximising play, so they
   differ a little);
3. the probe speed (single and batch).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import bgfast.bearoff as bo


def boards_of(r, o):
    b = np.zeros((len(r), 2, 25), dtype=np.uint8)
    b[:, 1, :6] = bo.position(r, 6)
    b[:, 0, :6] = bo.position(o, 6)
    return b


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("file")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    big = bo.open(a.file, verify=False)
    print(f"{a.file}: {big.info()}")
    small = bo.default_two_sided()
    os_t = bo.default_one_sided()
    N6 = small.size
    # 1. up to 6 checkers a side
    r = rng.integers(1, N6, a.n)
    o = rng.integers(1, N6, a.n)
    pb = big.probe_batch(boards_of(r, o))
    ps = small.probe_batch(boards_of(r, o))
    print(f"<= 6 checkers, {a.n} pairs: max |E - E(6x6)| = {np.abs(pb['equity'] - ps['equity']).max():.2e}, "
          f"max |W - W(6x6)| = {np.abs(pb['probs'][:, 0] - ps['probs'][:, 0]).max():.2e}")
    # 2. pairs with a full side
    counts = bo.position(np.arange(big.size), 6)
    nchk = counts.sum(axis=1)
    pips = (counts * np.arange(1, 7)).sum(axis=1)
    full = np.flatnonzero(nchk == 15)
    heavy = np.flatnonzero((nchk == 15) & (pips >= 70))        # far from home: gammon danger
    light = np.flatnonzero((nchk >= 1) & (nchk <= 4))
    for name, r, o in (("roller full", rng.choice(full, a.n), rng.integers(1, big.size, a.n)),
                       ("opponent full", rng.integers(1, big.size, a.n), rng.choice(full, a.n)),
                       ("both full", rng.choice(full, a.n), rng.choice(full, a.n)),
                       ("gammonish", rng.choice(light, a.n), rng.choice(heavy, a.n)),
                       ("gammonish rev", rng.choice(heavy, a.n), rng.choice(light, a.n))):
        b = boards_of(r, o)
        res = big.probe_batch(b)
        p, e = res["probs"], res["equity"]
        ok = ((p[:, 1] <= p[:, 0] + 1e-12) & (p[:, 3] <= 1 - p[:, 0] + 1e-12) & (p >= 0).all(axis=1))
        resid = np.abs(2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] - e)
        conv = os_t.race(bo.position(r, 6), bo.position(o, 6))
        d = np.abs(p - conv)
        print(f"{name:14s} {len(r)} pairs: consistent {ok.mean() * 100:.2f}%, max |E - (2W-1+WG-LG)| "
              f"{resid.max():.1e}; mean W {p[:, 0].mean():.3f} WG {p[:, 1].mean():.3f} "
              f"LG {p[:, 3].mean():.3f}; vs convolution: max |dW| {d[:, 0].max():.4f}, "
              f"max |dWG| {d[:, 1].max():.4f}, max |dLG| {d[:, 3].max():.4f}, mean |dW| {d[:, 0].mean():.5f}")
    # 3. probe speed
    b = boards_of(rng.integers(1, big.size, 100000), rng.integers(1, big.size, 100000))
    t = time.perf_counter()
    big.probe_batch(b)
    tb = time.perf_counter() - t
    t = time.perf_counter()
    for i in range(2000):
        big.probe(b[i])
    ts = (time.perf_counter() - t) / 2000
    print(f"probe_batch: {100000 / tb:,.0f} positions/s; probe: {ts * 1e6:.0f} us each")


if __name__ == "__main__":
    main()
