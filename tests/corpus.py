"""Seeded corpora of positions for differential tests and benchmarks."""
import numpy as np

from bgfast.movegen import legal_plays_batch
from bgfast.position import INITIAL_BOARD


def self_play_positions(n, seed, *, race_bias=False):
    """``n`` (board, dice) pairs from random self-play games (all game phases).

    Each game starts from the initial position and plays random legal plays;
    every position met (with the roll that was played) is recorded.
    """
    rng = np.random.default_rng(seed)
    boards, dice = [], []
    board = INITIAL_BOARD.copy()
    while len(boards) < n:
        d = rng.integers(1, 7, size=2)
        boards.append(board.copy())
        dice.append(d)
        off, res = legal_plays_batch(board, d, validate=False)
        if len(res):
            board = res[rng.integers(len(res))].copy()
        else:
            board = board[::-1].copy()
        if board.sum(axis=1).min() == 0:      # game over: start again
            board = INITIAL_BOARD.copy()
    return np.array(boards, dtype=np.uint8), np.array(dice, dtype=np.int64)


def random_boards(n, seed, *, home_only=False, bar_prob=0.3):
    """``n`` random valid boards; ``home_only`` puts every checker in the home boards."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 2, 25), dtype=np.uint8)
    for k in range(n):
        b = out[k]
        for side in (1, 0):
            count = rng.integers(1, 16)
            for _ in range(count):
                if home_only:
                    idx = int(rng.integers(0, 6))
                elif rng.random() < bar_prob / 5:
                    idx = 24
                else:
                    idx = int(rng.integers(0, 24))
                if idx < 24 and b[1 - side][23 - idx] > 0:
                    continue                  # the other side holds that point
                b[side][idx] += 1
    return out
