"""The fixed benchmark corpus: 1,000 contact + 1,000 race positions x 21 rolls."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from corpus import self_play_positions  # noqa: E402

from bgfast.movegen import ALL_ROLLS  # noqa: E402
from bgfast.position import PositionClass, classify_boards  # noqa: E402


def race_positions(n, seed):
    """Random race positions: each side's rearmost checker short of contact."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 2, 25), dtype=np.uint8)
    for k in range(n):
        top_me = int(rng.integers(4, 19))
        top_op = int(rng.integers(3, 25 - top_me))
        for row, top in ((1, top_me), (0, top_op)):
            count = int(rng.integers(8, 16))
            pts = rng.integers(0, top, size=count)
            pts[0] = top - 1
            np.add.at(out[k, row], pts, 1)
    assert (classify_boards(out) <= PositionClass.RACE).all()
    return out


def contact_positions(n, seed):
    boards, _ = self_play_positions(n * 3, seed)
    boards = boards[classify_boards(boards) == PositionClass.CONTACT]
    return boards[:n]


def corpus(seed=1):
    """(boards uint8[42000, 2, 25], dice int64[42000, 2]): every position x 21 rolls."""
    pos = np.concatenate([contact_positions(1000, seed), race_positions(1000, seed + 1)])
    boards = np.repeat(pos, len(ALL_ROLLS), axis=0)
    dice = np.tile(ALL_ROLLS, (len(pos), 1))
    return boards, dice
