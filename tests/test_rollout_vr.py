"""The luck adjustment (variance reduction) keeps rollouts unbiased.

With the same seed a rollout plays the same games with and without variance
reduction (the dice are the trial's, the policy's plays do not depend on
the luck estimate), so each trial's plain result minus its adjusted result
is the luck summed over the game.  Its expectation is zero whatever the
evaluator: the mean of the luck must lie within 3 standard errors of zero,
and the adjusted mean within 3 standard errors of the plain one.
"""
from dataclasses import replace

import numpy as np
import pytest

from bgfast.evaluate import install_bearoff_tables
from bgfast.position import Position
from bgfast.rollout import RolloutSettings, run_chunk

#: opening, middle game, race, holding game (the rollout benchmark's positions)
POSITIONS = ["4HPwATDgc/ABMA", "mNvgAQaw5+ABMA", "7bbFAADbtmkAAA", "bJ4LBwBYz8EBAw"]


def _paired(policy, trials, seed, luck_plays=0):
    """Plain and adjusted per-trial equities, ``[trials, 4]`` each, of the four
    positions rolled out together (common dice)."""
    install_bearoff_tables()
    starts = np.ascontiguousarray(np.stack([Position.from_position_id(p).board
                                            for p in POSITIONS]))
    base = RolloutSettings(seed=seed, early_stop=False, policy=policy, evaluator="net",
                           luck_plays=luck_plays)
    plain, pp = run_chunk(starts, 0, trials, replace(base, variance_reduction=False,
                                                     luck_plays=0).kernel_params())
    vr, pv = run_chunk(starts, 0, trials, base.kernel_params())
    assert np.array_equal(pp, pv)                  # the same games
    return plain[:, :, 5], vr[:, :, 5]


def _check_unbiased(plain, vr):
    n = len(plain)
    luck = plain - vr
    assert (np.abs(luck).mean(axis=0) > 1e-3).all()          # the adjustment does something
    se_luck = luck.std(axis=0, ddof=1) / np.sqrt(n)
    assert (np.abs(luck.mean(axis=0)) < 3 * se_luck).all(), (luck.mean(axis=0), se_luck)
    se_plain = plain.std(axis=0, ddof=1) / np.sqrt(n)
    se_vr = vr.std(axis=0, ddof=1) / np.sqrt(n)
    assert (np.abs(vr.mean(axis=0) - plain.mean(axis=0)) < 3 * np.hypot(se_plain, se_vr)).all()
    # and the adjustment reduces the variance on every position
    assert (vr.var(axis=0) < 0.25 * plain.var(axis=0)).all(), (vr.var(axis=0), plain.var(axis=0))


def test_luck_adjustment_is_unbiased_at_0_ply():
    _check_unbiased(*_paired("net0", 216, seed=5))


@pytest.mark.slow
def test_luck_adjustment_is_unbiased_at_0_ply_long():
    _check_unbiased(*_paired("net0", 2592, seed=6))


@pytest.mark.slow
def test_luck_adjustment_is_unbiased_with_a_1_ply_policy():
    _check_unbiased(*_paired("net1", 48, seed=7))


def test_pruned_luck_plays_are_unbiased_at_0_ply():
    _check_unbiased(*_paired("net0", 216, seed=8, luck_plays=8))


def test_the_default_luck_plays_are_unbiased_at_0_ply():
    from bgfast.rollout import DEFAULT_LUCK_PLAYS

    assert RolloutSettings(policy="net0").effective_luck_plays == DEFAULT_LUCK_PLAYS
    _check_unbiased(*_paired("net0", 216, seed=9, luck_plays=None))


@pytest.mark.slow
def test_pruned_luck_plays_are_unbiased_at_0_ply_long():
    _check_unbiased(*_paired("net0", 2592, seed=6, luck_plays=4))   # the dice of the long test above


@pytest.mark.slow
def test_pruned_luck_plays_are_unbiased_with_a_1_ply_policy():
    _check_unbiased(*_paired("net1", 48, seed=10, luck_plays=6))


@pytest.mark.parametrize("pid, k", [("4HPwATDgc/ABMA", 1), ("mNvgAQaw5+ABMA", 8), ("bJ4LBwBYz8EBAw", 3),
                                    ("7bbFAADbtmkAAA", 5)])
def test_a_pruned_luck_play_is_the_nets_best_of_pubevals_best_k(pid, k):
    """Truncated after one ply, a trial's luck (plain minus adjusted) is the
    value of its roll's luck play minus the mean over the 36 rolls: the
    luck play of a roll found here as the net's best (its cubeless equity
    for the mover) of the k plays pubeval scores best, ties to the earlier."""
    from bgfast import _board, _evaluate, _rollout
    from bgfast.evaluate import equity
    from bgfast.movegen import ALL_ROLLS, legal_plays_batch
    from bgfast.net import default_net

    install_bearoff_tables()
    board = Position.from_position_id(pid).board
    contact = int(_board.board_classes(board[None])[0] == 3)
    value = {}
    missed = 0                                    # rolls whose luck play is not the net's best
    for d1, d2 in ALL_ROLLS:
        off, res = legal_plays_batch(board[None], (d1, d2))
        eq = -equity(default_net().evaluate_batch(res))
        top = np.argsort(-_evaluate.pubeval_scores(res, np.full(len(res), contact, np.int8)),
                         kind="stable")[:k]
        value[d1, d2] = value[d2, d1] = eq[top].max()
        missed += eq[top].max() < eq.max()
    assert missed > 0 or k > 3
    mean = sum(value[d1, d2] * (1 if d1 == d2 else 2) for d1, d2 in ALL_ROLLS) / 36
    s = RolloutSettings(seed=3, truncate=1, policy="net0", luck_plays=k)
    plain, _ = run_chunk(board[None], 0, 36, replace(s, variance_reduction=False, luck_plays=0).kernel_params())
    vr, _ = run_chunk(board[None], 0, 36, s.kernel_params())
    perm = _rollout.permutations(3)[0]            # trial t's first roll (quasi-random dice)
    want = [value[o // 6 + 1, o % 6 + 1] - mean for o in perm[np.arange(36) % 36]]
    np.testing.assert_allclose(plain[:, 0, 5] - vr[:, 0, 5], want, atol=1e-9)
