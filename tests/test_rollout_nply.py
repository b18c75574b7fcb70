"""n-ply policies in rollouts: gnubg's luck plays, the evaluation cache, the
3-ply policy and the presets."""
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import _net
from bgfast import net as netmod
from bgfast.cli import main
from bgfast.errors import BgfastError
from bgfast.levels import get_level, pick_result
from bgfast.movegen import legal_plays_batch
from bgfast.position import Position
from bgfast.rollout import PRESETS, RolloutSettings, rollout, run_chunk

from test_net import _random_boards
from test_rollout import BEAROFFS, _exact

#: opening, middle game, race, holding game
POSITIONS = ["4HPwATDgc/ABMA", "mNvgAQaw5+ABMA", "7bbFAADbtmkAAA", "bJ4LBwBYz8EBAw"]


def _bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


@pytest.fixture(scope="module")
def boards():
    """Random contact and race boards, no game over."""
    b = _random_boards(400, 23)
    return np.ascontiguousarray(b[(b[:, 0].sum(axis=1) > 0) & (b[:, 1].sum(axis=1) > 0)])


# ------------------------------------------------------------------ luck plays

def _paired(policy, position_id, trials, truncate, seed=5):
    """Per-trial values with and without variance reduction (same seed)."""
    pos = Position.from_position_id(position_id)
    starts = pos.board[None].copy()
    s = RolloutSettings(seed=seed, policy=policy, truncate=truncate)
    plain, pp = run_chunk(starts, 0, trials, replace(s, variance_reduction=False).kernel_params())
    vr, pv = run_chunk(starts, 0, trials, s.kernel_params())
    return plain[:, 0], vr[:, 0], pp, pv


@pytest.mark.slow
@pytest.mark.parametrize("position_id", POSITIONS)
def test_one_ply_luck_plays_are_unbiased(position_id):
    # the luck plays are not the policy's (0-ply picks), so the policy plays
    # the same games with and without variance reduction: the per-trial
    # difference is the summed luck, whose expectation is zero
    plain, vr, pp, pv = _paired("net1", position_id, 144, 6)
    assert np.array_equal(pp, pv)                           # identical games
    luck = plain[:, 5] - vr[:, 5]
    assert np.abs(luck).mean() > 0.02
    se = luck.std(ddof=1) / np.sqrt(len(luck))
    assert abs(luck.mean()) < 3 * se
    # and the two rollouts' means agree within their standard errors
    se_p = plain[:, 5].std(ddof=1) / np.sqrt(len(plain))
    se_v = vr[:, 5].std(ddof=1) / np.sqrt(len(vr))
    assert abs(plain[:, 5].mean() - vr[:, 5].mean()) < 3 * np.hypot(se_p, se_v)
    assert se_v < se_p                                       # and it reduces the variance


def test_one_ply_cubeful_luck_is_unbiased():
    from bgfast.cube import CubeContext
    from bgfast.rollout import _Cube

    pos = Position.from_position_id(POSITIONS[1])
    starts = pos.board[None].copy()
    s = RolloutSettings(seed=8, policy="net1", truncate=4)
    params = [replace(s, variance_reduction=v).kernel_params() for v in (False, True)]
    for p in params:
        p["cube"] = _Cube.of(CubeContext(), 1).params
    (plain, pp), (vr, pv) = (run_chunk(starts, 0, 72, p) for p in params)
    assert np.array_equal(pp, pv)
    luck = plain[:, 0, 6] - vr[:, 0, 6]
    assert np.abs(luck).mean() > 0.02
    assert abs(luck.mean()) < 3 * luck.std(ddof=1) / np.sqrt(len(luck))


def test_two_ply_luck_plays_keep_the_games_and_reduce_the_variance():
    plain, vr, pp, pv = _paired("net2", POSITIONS[1], 12, 2)
    assert np.array_equal(pp, pv)
    assert vr[:, 5].std() < plain[:, 5].std()


def _mover(opp):
    """Probabilities for the player who made the play, from the opponent's."""
    return np.column_stack([1 - opp[:, 0], opp[:, 3], opp[:, 4], opp[:, 1], opp[:, 2]])


def test_luck_plays_are_the_0ply_picks_valued_one_ply_less():
    # truncated after one ply, trial t throws the first roll perm0[t] (quasi-
    # random) and its result is the value after the policy's (1-ply) play
    # minus the luck: the value of the roll's luck play (the 0-ply best
    # play, valued at 0 plies by the evaluator) minus the 21-roll average
    from bgfast import _rollout

    s = RolloutSettings(seed=3, policy="net1", truncate=1, evaluator="net")
    net = netmod.default_net()
    dice = np.array([(o // 6 + 1, o % 6 + 1) for o in range(36)], dtype=np.int64)
    o = _rollout.permutations(3)[0]
    differ = 0
    for pid in POSITIONS:
        pos = Position.from_position_id(pid)
        vals, _ = run_chunk(pos.board[None].copy(), 0, 36, s.kernel_params())
        rep = np.ascontiguousarray(np.repeat(pos.board[None], 36, axis=0))
        luck_value = _mover(net.evaluate_batch(get_level("net0").choose_boards(rep, dice)[1]))
        played = _mover(net.evaluate_batch(get_level("net1").choose_boards(rep, dice)[1]))
        average = luck_value.mean(axis=0)
        want = played[o] - (luck_value[o] - average)
        np.testing.assert_allclose(vals[:, 0, :5], want, atol=1e-9)
        differ += int((played != luck_value).any(axis=1).sum())
    assert differ > 0                            # some 1-ply plays differ from the 0-ply picks


# ------------------------------------------------------------------ the cache

@pytest.mark.parametrize("plies", [1, 2])
def test_cache_hits_return_the_bits_of_a_miss(boards, plies):
    net = netmod.default_net().model
    b = boards[:120] if plies == 2 else boards
    off = net.evaluate_plies(b, plies, True, 0)
    for log2 in (16, 3):                 # a tiny cache: entries replaced all the time
        assert np.array_equal(_bits(net.evaluate_plies(b, plies, True, log2)), _bits(off))
    # the same boards twice in one call: the second time from the cache
    twice = np.ascontiguousarray(np.concatenate([b[:30], b[:30]]))
    again = net.evaluate_plies(twice, plies, True, 16)
    assert np.array_equal(_bits(again), _bits(np.concatenate([off[:30], off[:30]])))


def test_cached_choices_are_the_uncached_ones(boards):
    net = netmod.default_net().model
    b = np.ascontiguousarray(boards[:60])
    rng = np.random.default_rng(4)
    d = np.ascontiguousarray(rng.integers(1, 7, size=(len(b), 2)).astype(np.int64))
    for plies in (1, 2):
        ref = net.choose(b, d, plies, 0.0, 0, True, 0)
        for log2 in (16, 2):
            got = net.choose(b, d, plies, 0.0, 0, True, log2)
            assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


def test_rollout_bits_do_not_depend_on_the_cache_jobs_or_chunks():
    pos = Position.from_position_id(POSITIONS[1])
    s = RolloutSettings(trials=8, seed=9, policy="net2", truncate=3, jobs=1, backend="serial")
    saved = _net.cache_size()
    try:
        _net.cache_counters(reset=True)
        ref = rollout(pos, s)
        lookups, hits = _net.cache_counters()
        assert lookups > 0 and 0 < hits < lookups
        _net.set_cache_size(0)
        assert rollout(pos, s).mean == ref.mean
        _net.set_cache_size(4)
        assert rollout(pos, s, chunk=3).mean == ref.mean
    finally:
        _net.set_cache_size(saved)
    two = rollout(pos, s, jobs=2, chunk=3, backend="local")
    assert two.mean == ref.mean and two.stderr == ref.stderr
    with pytest.raises(ValueError):
        _net.set_cache_size(25)


# ------------------------------------------------------------------ 3 plies

def test_three_ply_level_searches_three_plies_with_the_filters(boards):
    """The kernel's 3-ply choice is the Python search's (the move filter at
    each level, the candidates valued at 1, 2 and 3 plies)."""
    lev = get_level("net3")
    assert lev.plies == 3
    rng = np.random.default_rng(2)
    seen = 0
    for i in rng.choice(len(boards), size=12, replace=False):
        d = rng.integers(1, 7, size=2).astype(np.int64)
        offs, res = legal_plays_batch(boards[i][None], d[None])
        if offs[1] < 2:
            continue
        j = pick_result(lev, res)
        _, k = lev.choose_boards(boards[i][None], d[None])
        np.testing.assert_array_equal(res[j], k[0])
        seen += 1
        if seen == 3:
            break
    assert seen == 3


def test_three_ply_policy_is_a_rollout_policy():
    pos = Position.from_position_id(POSITIONS[2])
    s = RolloutSettings(trials=2, seed=1, policy="net3", truncate=1, variance_reduction=False,
                        jobs=1)
    r = rollout(pos, s)
    assert r.games == 2 and r.settings["policy"] == "net3"
    saved = _net.cache_size()
    try:
        _net.set_cache_size(0)              # (3-ply searches get a bigger cache)
        assert rollout(pos, s).mean == r.mean
    finally:
        _net.set_cache_size(saved)


# ------------------------------------------------------------------ presets

def test_presets_are_the_published_settings():
    want = {"gnubg": (1296, 0, 0), "roller": (42, 5, 1), "roller+": (360, 7, 2),
            "roller++": (360, 5, 3)}
    assert set(PRESETS) == set(want)
    for name, (trials, truncate, plies) in want.items():
        p = PRESETS[name]
        s = RolloutSettings.from_preset(name)
        assert (s.trials, s.truncate, p.plies) == (trials, truncate, plies)
        assert get_level(s.policy).plies == plies
        assert s.variance_reduction and s.quasi_random and s.early_stop
        assert len(p.move_filters) == plies
    assert RolloutSettings.from_preset("roller", trials=7).truncate == 5
    with pytest.raises(BgfastError, match="roller"):
        RolloutSettings.from_preset("grandmaster")


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_agrees_with_the_exact_bearoff_value(name):
    # played out (no early stop): perfect bear-off play, so with variance
    # reduction the luck-adjusted results telescope to the exact value
    pos = BEAROFFS[1]
    exact = _exact(pos)
    trials = min(PRESETS[name].trials, 360)
    s = RolloutSettings.from_preset(name, trials=trials, seed=5, early_stop=False, jobs=1)
    r = rollout(pos, s)
    assert r.average_plies > 0
    assert abs(r.equity - exact) < 3 * max(r.stderr["equity"], 1e-3)
    assert rollout(pos, s, jobs=2, chunk=17).mean == r.mean
    plain = rollout(pos, s, variance_reduction=False)
    assert plain.stderr["equity"] > 0.005
    assert abs(plain.equity - exact) < 3 * plain.stderr["equity"]


def test_cli_preset_and_overrides():
    import json

    runner = CliRunner()
    out = runner.invoke(main, ["rollout", BEAROFFS[1].position_id(), "--preset", "roller",
                               "-n", "12", "-j", "1", "--json"])
    assert out.exit_code == 0, out.output
    s = json.loads(out.output)["settings"]
    assert (s["trials"], s["truncate"], s["policy"]) == (12, 5, "net1")
    out = runner.invoke(main, ["rollout", BEAROFFS[1].position_id(), "--preset", "roller+",
                               "--no-vr", "-t", "3", "-n", "6", "-j", "1", "--json"])
    s = json.loads(out.output)["settings"]
    assert (s["trials"], s["truncate"], s["policy"], s["variance_reduction"]) == (6, 3, "net2",
                                                                                 False)
    out = runner.invoke(main, ["rollout", BEAROFFS[1].position_id(), "--preset", "xg"])
    assert out.exit_code == 2 and "Traceback" not in out.output
