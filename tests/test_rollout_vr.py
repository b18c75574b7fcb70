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


def _paired(policy, trials, seed):
    """Plain and adjusted per-trial equities, ``[trials, 4]`` each, of the four
    positions rolled out together (common dice)."""
    install_bearoff_tables()
    starts = np.ascontiguousarray(np.stack([Position.from_position_id(p).board
                                            for p in POSITIONS]))
    base = RolloutSettings(seed=seed, early_stop=False, policy=policy, evaluator="net")
    plain, pp = run_chunk(starts, 0, trials, replace(base, variance_reduction=False).kernel_params())
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
