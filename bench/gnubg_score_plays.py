"""Regenerate ``tests/data/score_plays.json``: race and bear-off positions
where gnubg's best play at a match score differs from its money best play.

Seeded random no-contact positions (races with a gammon at stake, random
races and bear-offs of ``compare_cube_gnubg.random_race_position``, small
two-sided bear-offs) with a random roll are
hinted by Debian's ``gnubg -t`` (``set matchid``, ``set board``, ``hint``
with the dice, 0 plies; the driver ``tests/gnubg_hints.py``) at money
(centred cube, no Jacoby rule, no beavers) and at every score of
``SCORES``.  A (position, roll, score) is kept when gnubg's best play at
the score is not its money best play and its top two plays at the score
are at least ``--gap`` apart (no near-ties).  Each record keeps gnubg's best
play at the score (notation and resulting Position ID), its money best
play, the gap and whether both sides are inside the exact two-sided
bear-off table (at most 6 checkers a side: both programs then have exact
probabilities).

Usage::

    nice -n 10 python bench/gnubg_score_plays.py [--candidates 1500] [--seed 1] [--per-score 12]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from compare_cube_gnubg import in_two_sided, random_race_position  # noqa: E402
from gnubg_hints import gnubg_hints  # noqa: E402

from bgfast.cube import CubeContext  # noqa: E402
from bgfast.movegen import legal_plays  # noqa: E402
from bgfast.position import Position, PositionClass  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "data", "score_plays.json")

#: name -> the context of the player on roll (7-point match)
SCORES = {
    "double match point": dict(length=7, score_me=6, score_opp=6),
    "gammon-save (1-away Crawford, opponent 2-away)":
        dict(length=7, score_me=6, score_opp=5, crawford=True),
    "gammon-go (2-away Crawford, opponent 1-away)":
        dict(length=7, score_me=5, score_opp=6, crawford=True),
    "post-Crawford leader (1-away, opponent 4-away)":
        dict(length=7, score_me=6, score_opp=3, post_crawford=True),
    "post-Crawford trailer (4-away, opponent 1-away)":
        dict(length=7, score_me=3, score_opp=6, post_crawford=True),
    "2-away 2-away, centred cube": dict(length=7, score_me=5, score_opp=5),
    "4-away 2-away, my cube at 2": dict(length=7, score_me=3, score_opp=5, cube=2, owner="me"),
}


def context(spec: dict) -> CubeContext:
    spec = dict(spec)
    return CubeContext.match(spec.pop("length"), spec.pop("score_me"), spec.pop("score_opp"),
                             **spec)


def gammon_race_position(rng: np.random.Generator) -> Position:
    """A no-contact position with a gammon at stake: one side has all 15
    checkers on its points 1..top (top 7..12, more on the low points), none
    borne off; the other has 3..14 checkers in its home board.  Either side may be on roll."""
    while True:
        board = np.zeros((2, 25), dtype=np.uint8)
        top = int(rng.integers(7, 13))
        weights = np.linspace(1.5, 0.5, top)
        np.add.at(board[0], rng.choice(top, size=15, p=weights / weights.sum()), 1)
        np.add.at(board[1], rng.integers(0, 6, size=int(rng.integers(3, 15))), 1)
        if rng.random() < 0.5:
            board = board[::-1].copy()
        try:
            pos = Position(board)
        except ValueError:
            continue
        if pos.classify() in (PositionClass.RACE, PositionClass.BEAROFF):
            return pos


def small_bearoff(rng: np.random.Generator) -> Position:
    """A two-sided bear-off with 1..6 checkers a side (inside the exact table)."""
    board = np.zeros((2, 25), dtype=np.uint8)
    for row in (0, 1):
        np.add.at(board[row], rng.integers(0, 6, size=int(rng.integers(1, 7))), 1)
    return Position(board)


def candidates(n: int, seed: int):
    """``n`` (Position, dice) pairs with at least two legal plays: races with
    a gammon at stake, random races and bear-offs, and small two-sided
    bear-offs, each with a random roll."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        u = rng.random()
        if u < 0.4:
            pos = gammon_race_position(rng)
        elif u < 0.7:
            pos = random_race_position(rng, bearoff=bool(rng.random() < 0.5))
        else:
            pos = small_bearoff(rng)
        d = tuple(int(v) for v in rng.integers(1, 7, size=2))
        if len(legal_plays(pos, *d)) >= 2:
            out.append((pos, d))
    return out


def build(n: int, seed: int, binary: str, gap: float, per_score: int, timeout: float) -> list:
    cands = candidates(n, seed)
    contexts = [CubeContext.money()] + [context(s) for s in SCORES.values()]
    cases = [(p.board, d, c) for c in contexts for p, d in cands]
    hints = gnubg_hints(binary, cases, timeout=timeout)
    m = len(cands)
    records, per = [], {name: 0 for name in SCORES}
    for i, (pos, d) in enumerate(cands):
        money = hints[i]
        if len(money) < 2:
            continue
        for k, (name, spec) in enumerate(SCORES.items(), start=1):
            here = hints[k * m + i]
            if per[name] >= per_score or len(here) < 2 or here[0][0] == money[0][0]:
                continue
            if here[0][2] - here[1][2] < gap:
                continue
            plays = legal_plays(pos, *d)
            notation = {p.position.position_id(): p.notation for p in plays}
            records.append({
                "score": name, "context": spec, "position_id": pos.position_id(),
                "dice": list(d), "class": pos.classify().name.lower(),
                "exact": bool(in_two_sided(pos, 6)),
                "gnubg_best": notation[here[0][0].position_id()],
                "gnubg_best_id": here[0][0].position_id(),
                "gnubg_gap": round(here[0][2] - here[1][2], 5),
                "gnubg_money_best": notation[money[0][0].position_id()],
                "gnubg_money_best_id": money[0][0].position_id(),
            })
            per[name] += 1
    return records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--candidates", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gnubg", default="/usr/games/gnubg")
    ap.add_argument("--gap", type=float, default=0.001,
                    help="least EMG between gnubg's top two plays at the score")
    ap.add_argument("--per-score", type=int, default=12, help="records kept per score at most")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    recs = build(args.candidates, args.seed, args.gnubg, args.gap, args.per_score, args.timeout)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"generator": "bench/gnubg_score_plays.py", "seed": args.seed,
                   "candidates": args.candidates, "gap": args.gap, "plies": 0,
                   "records": recs}, fh, indent=1)
        fh.write("\n")
    by = {}
    for r in recs:
        by.setdefault(r["score"], [0, 0])
        by[r["score"]][0] += 1
        by[r["score"]][1] += r["exact"]
    for name, (k, e) in by.items():
        print(f"{name}: {k} records ({e} exact)")
    print(f"wrote {len(recs)} records to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
