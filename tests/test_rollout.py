"""Rollouts: determinism, exactness in bear-offs, variance reduction, backends."""
import json
from dataclasses import replace

import numpy as np
import pytest

from bgfast import bearoff
from bgfast._workers import WorkerError
from bgfast.errors import BgfastError
from bgfast.evaluate import equity, evaluate_ply, get_evaluator, install_bearoff_tables
from bgfast.position import Position
from bgfast.rollout import (OUTPUT_NAMES, RolloutSettings, rollout, rollout_opening_rolls,
                            rollout_plays, run_chunk)

from procs import children

INITIAL = Position.initial()


def _bearoff(on_roll, opponent):
    """Board from home-board counts (points 1..6) of the player on roll and the opponent."""
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, :6] = on_roll
    b[0, :6] = opponent
    return Position(b)


BEAROFFS = [
    _bearoff([0, 1, 1, 0, 1, 1], [1, 0, 1, 1, 1, 0]),
    _bearoff([2, 0, 0, 1, 0, 2], [0, 1, 1, 1, 1, 1]),
    _bearoff([0, 0, 0, 0, 0, 3], [1, 1, 0, 0, 0, 0]),
]


def _exact(pos):
    return bearoff.default_two_sided().probe(pos).equity


def test_same_seed_same_bits_other_seed_differs():
    s = RolloutSettings(trials=200, seed=7, jobs=1)
    a, b = rollout(INITIAL, s), rollout(INITIAL, s)
    assert a.mean == b.mean and a.stderr == b.stderr
    c = rollout(INITIAL, s, seed=8)
    assert c.mean != a.mean


def test_bit_identical_across_job_counts_and_chunks():
    base = RolloutSettings(trials=300, seed=3, variance_reduction=False)
    serial = rollout(INITIAL, base, jobs=1, backend="serial")
    for jobs, chunk in ((1, 7), (2, 50), (2, 300)):
        r = rollout(INITIAL, base, jobs=jobs, chunk=chunk, backend="local")
        assert r.mean == serial.mean and r.stderr == serial.stderr
    vr = RolloutSettings(trials=40, seed=3)
    assert rollout(INITIAL, vr, jobs=2, chunk=9).mean == rollout(INITIAL, vr, jobs=1).mean


def test_pruned_luck_plays_are_bit_identical_across_job_counts_and_chunks():
    mid = Position.from_position_id("mNvgAQaw5+ABMA")
    s = RolloutSettings(trials=60, seed=4, luck_plays=6, truncate=12)
    serial = rollout(mid, s, jobs=1, backend="serial")
    for jobs, chunk in ((2, 7), (2, 60)):
        r = rollout(mid, s, jobs=jobs, chunk=chunk, backend="local")
        assert r.mean == serial.mean and r.stderr == serial.stderr
    full = rollout(mid, s, luck_plays=0, jobs=1, backend="serial")
    assert full.mean != serial.mean                  # other luck plays: other adjusted results


@pytest.mark.parametrize("kw, words", [
    ({"luck_plays": 65}, r"luck_plays must be an integer 0\.\.64"),
    ({"luck_plays": -1}, r"luck_plays must be an integer 0\.\.64"),
    ({"luck_plays": 8, "policy": "pubeval"}, "needs variance reduction and a net level"),
    ({"luck_plays": 8, "policy": "beginner"}, "needs variance reduction and a net level"),
    ({"luck_plays": 8, "variance_reduction": False}, "needs variance reduction and a net level"),
])
def test_pruned_luck_plays_refuse_settings_they_do_not_apply_to(kw, words):
    with pytest.raises(BgfastError, match=words):
        RolloutSettings(**kw)


@pytest.mark.parametrize("kw, k", [
    ({}, 6),                                            # the net at 0-ply, variance reduction
    ({"policy": "medium"}, 6),
    ({"policy": "net1"}, 0),                            # n-ply: the cache holds gnubg's picks
    ({"policy": "expert"}, 0),
    ({"policy": "pubeval"}, 0),
    ({"variance_reduction": False}, 0),
    ({"luck_plays": 0}, 0),
    ({"luck_plays": 3, "policy": "net2"}, 3),
])
def test_the_default_luck_plays_prune_only_a_0_ply_net_policy(kw, k):
    s = RolloutSettings(**kw)
    assert s.effective_luck_plays == k
    assert s.to_dict()["luck_plays"] == k
    assert RolloutSettings(**{key: v for key, v in s.to_dict().items() if key != "cube"}) \
        .effective_luck_plays == k


def test_the_default_luck_plays_follow_the_policy_they_are_replaced_with():
    s = RolloutSettings()
    assert replace(s, policy="pubeval").effective_luck_plays == 0     # no error: still the default
    assert replace(s, policy="net2").effective_luck_plays == 0
    assert RolloutSettings.from_preset("gnubg").effective_luck_plays == 0   # gnubg's scheme
    assert RolloutSettings.from_preset("gnubg", luck_plays=6).effective_luck_plays == 6
    assert RolloutSettings.from_preset("roller").effective_luck_plays == 0


def test_a_default_rollout_is_the_one_with_pruned_luck_plays():
    s = RolloutSettings(trials=36, seed=5, truncate=8, jobs=1, backend="serial")
    default = rollout(INITIAL, s)
    assert default.mean == rollout(INITIAL, s, luck_plays=6).mean
    assert default.mean != rollout(INITIAL, s, luck_plays=0).mean


def test_labels_and_benchmark_references_value_every_play_for_the_luck():
    from bgfast.benchmark import REFERENCE_SETTINGS
    from bgfast.traindata import LABEL_SETTINGS, label_fields, settings_of_fields

    for s in (LABEL_SETTINGS, REFERENCE_SETTINGS):
        assert s.effective_luck_plays == 0
        assert "luck_plays" not in label_fields(s)      # records made before the field read alike
        assert settings_of_fields(label_fields(s)).effective_luck_plays == 0
    pruned = replace(LABEL_SETTINGS, luck_plays=6)
    assert label_fields(pruned)["luck_plays"] == 6
    assert settings_of_fields(label_fields(pruned)) == pruned


def test_the_luck_plays_limit_is_the_kernels():
    from bgfast import _net
    from bgfast.rollout import MAX_LUCK_PLAYS

    assert MAX_LUCK_PLAYS == _net.MAX_LUCK_PLAYS


def test_per_trial_values_do_not_depend_on_the_split():
    params = RolloutSettings(seed=11, variance_reduction=False).kernel_params()
    starts = INITIAL.board[None].copy()
    whole, _ = run_chunk(starts, 0, 100, params)
    parts = np.concatenate([run_chunk(starts, a, 25, params)[0] for a in (0, 25, 50, 75)])
    assert np.array_equal(whole, parts)


@pytest.mark.parametrize("pos", BEAROFFS, ids=lambda p: p.position_id())
def test_bearoff_rollout_agrees_with_exact(pos):
    # the evaluator policy plays the bear-off perfectly (exact table)
    r = rollout(pos, trials=1500, seed=5, jobs=1, policy="evaluator",
                variance_reduction=False, early_stop=False)
    exact = _exact(pos)
    assert r.stderr["equity"] > 0.005      # the games were really played
    assert abs(r.equity - exact) < 3 * r.stderr["equity"]


def test_luck_adjustment_with_exact_values_leaves_no_variance():
    # exact evaluator + perfect play: the adjusted result telescopes to the exact value
    pos = BEAROFFS[1]
    r = rollout(pos, trials=200, seed=5, jobs=1, policy="evaluator", early_stop=False)
    assert abs(r.equity - _exact(pos)) < 2e-3
    assert r.stderr["equity"] < 1e-3
    plain = rollout(pos, trials=200, seed=5, jobs=1, policy="evaluator", early_stop=False,
                    variance_reduction=False)
    assert plain.stderr["equity"] > 20 * r.stderr["equity"]


def test_early_stop_inside_the_two_sided_table():
    pos = BEAROFFS[0]
    r = rollout(pos, trials=50, seed=1, jobs=1)
    assert r.average_plies == 0 and r.stderr["equity"] == 0
    assert r.equity == pytest.approx(_exact(pos), abs=1e-9)
    # a bigger bear-off reaches the table after a few plies
    big = _bearoff([3, 3, 2, 2, 2, 3], [2, 2, 3, 3, 3, 2])
    r = rollout(big, trials=100, seed=1, jobs=1, variance_reduction=False)
    assert 0 < r.average_plies < 12


def test_variance_reduction_lowers_the_standard_error():
    s = RolloutSettings(trials=648, seed=21, jobs=1)
    plain = rollout(INITIAL, s, variance_reduction=False)
    vr = rollout(INITIAL, s)
    ratio = vr.stderr["equity"] / plain.stderr["equity"]
    assert ratio < 0.85, ratio
    assert abs(vr.equity - plain.equity) < 3 * plain.stderr["equity"]


def test_truncation_after_one_ply_is_the_one_ply_evaluation():
    # 36 quasi-random trials see every first roll once: the mean is the 1-ply value
    board = Position.from_position_id("4HPwATDgc/ABMA").board
    r = rollout(Position(board), trials=36, seed=4, jobs=1, truncate=1, variance_reduction=False,
                policy="evaluator")
    v = evaluate_ply(board[None], 1, get_evaluator("net"))[0]
    np.testing.assert_allclose([r.mean[k] for k in OUTPUT_NAMES[:5]], v, atol=1e-12)
    assert r.average_plies == 1
    r2 = rollout(Position(board), trials=20, seed=4, jobs=1, truncate=3)
    assert r2.average_plies == 3


def test_quasi_random_first_roll_is_stratified():
    # with truncation at 1 ply and 36 trials, quasi-random gives the same mean for every seed
    a = rollout(INITIAL, trials=36, seed=1, jobs=1, truncate=1, variance_reduction=False)
    b = rollout(INITIAL, trials=36, seed=2, jobs=1, truncate=1, variance_reduction=False)
    assert a.equity == pytest.approx(b.equity, abs=1e-12)
    c = rollout(INITIAL, trials=36, seed=1, jobs=1, truncate=1, variance_reduction=False,
                quasi_random=False)
    d = rollout(INITIAL, trials=36, seed=2, jobs=1, truncate=1, variance_reduction=False,
                quasi_random=False)
    assert c.equity != pytest.approx(d.equity, abs=1e-6)


def test_standard_error_is_the_sample_deviation_over_root_n():
    """stderr = sqrt(sum (x - mean)^2 / (n - 1)) / sqrt(n) of the per-trial values."""
    s = RolloutSettings(trials=12, seed=23, jobs=1, truncate=3, variance_reduction=False)
    r = rollout(INITIAL, s)
    vals = run_chunk(INITIAL.board[None].copy(), 0, 12, s.kernel_params())[0][:, 0, :]
    for k, name in enumerate(OUTPUT_NAMES):
        x = [float(v) for v in vals[:, k]]
        mean = sum(x) / 12
        assert r.mean[name] == pytest.approx(mean, abs=1e-12)
        se = (sum((v - mean) ** 2 for v in x) / 11) ** 0.5 / 12 ** 0.5
        assert r.stderr[name] == pytest.approx(se, abs=1e-12), name
    assert r.stderr["equity"] > 0.01


def test_stderr_stopping_rule():
    r = rollout(INITIAL, trials=100000, seed=2, jobs=1, stderr_target=0.06, batch=72,
                min_trials=72, variance_reduction=False)
    assert r.games < 100000 and r.games % 72 == 0
    assert r.stderr["equity"] <= 0.06


def test_stderr_stop_equals_the_fixed_rollout_of_its_games():
    """Stopped by the standard-error target after n games, a rollout is the
    fixed n-trial rollout of the same seed: batches go on from trial n, not 0."""
    s = RolloutSettings(seed=17, jobs=1, truncate=4, variance_reduction=False)
    stopped = rollout(INITIAL, s, trials=10000, stderr_target=0.5, batch=50, min_trials=150)
    assert stopped.games == 150                     # three batches, then the target holds
    fixed = rollout(INITIAL, s, trials=150)
    assert stopped.mean == fixed.mean and stopped.stderr == fixed.stderr
    assert stopped.average_plies == fixed.average_plies
    # a target that is never met runs every trial, in batches, as one rollout
    capped = rollout(INITIAL, s, trials=130, stderr_target=1e-9, batch=50, min_trials=50)
    assert capped.games == 130 and capped.mean == rollout(INITIAL, s, trials=130).mean


def test_quasi_random_trials_cover_every_pair_of_first_rolls_once():
    """Truncated after 2 plies, trial t is worth the value after the policy's
    plays of rolls perm0[t % 36] and then perm1[(t + t // 36) % 36]; 1296
    trials see all 36 x 36 pairs once, so the mean is the exact average."""
    from bgfast import _rollout
    from bgfast.evaluate import PubevalEvaluator

    dice = np.array([(o // 6 + 1, o % 6 + 1) for o in range(36)], dtype=np.int64)
    _, first = PubevalEvaluator().choose(np.repeat(INITIAL.board[None], 36, axis=0), dice)
    _, second = PubevalEvaluator().choose(np.repeat(first, 36, axis=0), np.tile(dice, (36, 1)))
    value = get_evaluator("composite").evaluate_batch(second)    # pair (o1, o2) at 36 o1 + o2
    t = np.arange(1296)
    for seed in (13, 14):
        s = RolloutSettings(seed=seed, truncate=2, variance_reduction=False, policy="pubeval",
                            evaluator="composite")
        vals, plies = run_chunk(INITIAL.board[None].copy(), 0, 1296, s.kernel_params())
        perm = _rollout.permutations(seed)
        pair = 36 * perm[0][t % 36] + perm[1][(t + t // 36) % 36]
        assert np.array_equal(np.bincount(pair, minlength=1296), np.ones(1296))
        np.testing.assert_allclose(vals[:, 0, :5], value[pair], rtol=0, atol=1e-12)
        r = rollout(INITIAL, s, trials=1296, jobs=1)
        np.testing.assert_allclose([r.mean[k] for k in OUTPUT_NAMES[:5]], value.mean(axis=0),
                                   rtol=0, atol=1e-12)


def test_candidate_plays_share_dice():
    # pubeval plays: its gammons won and lost differ here, so a swap would show
    s = RolloutSettings(trials=72, seed=9, jobs=1, variance_reduction=False, policy="pubeval")
    res = rollout_plays(INITIAL, 3, 1, s, max_plays=3)
    assert len(res) == 3
    assert [r.equity for r in res] == sorted((r.equity for r in res), reverse=True)
    for r in res:
        alone = rollout(Position.from_position_id(r.position), s)
        # the same trials: the play's value is minus its result's value
        assert r.equity == pytest.approx(-alone.equity, abs=1e-12)
        assert r.mean["win"] == pytest.approx(1 - alone.mean["win"], abs=1e-12)
        # the mover's gammons are the roller's lost gammons, and so are their
        # standard errors; a win's error is its loss's
        theirs = {"win": "win", "win_gammon": "lose_gammon", "win_backgammon": "lose_backgammon",
                  "lose_gammon": "win_gammon", "lose_backgammon": "win_backgammon",
                  "equity": "equity"}
        for k in ("win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"):
            assert r.mean[k] == pytest.approx(alone.mean[theirs[k]], abs=1e-12), k
        for k in OUTPUT_NAMES:
            assert r.stderr[k] == pytest.approx(alone.stderr[theirs[k]], abs=1e-12), k
        assert alone.stderr["win_gammon"] != pytest.approx(alone.stderr["lose_gammon"], abs=1e-4)


def test_all_21_rolls():
    rolls, res = rollout_opening_rolls(trials=36, seed=1, jobs=1, truncate=1,
                                       variance_reduction=False)
    assert len(rolls) == len(res) == 21
    assert {r.label for r in res} == {f"{a}{b}" for a, b in rolls}


def test_result_json():
    r = rollout(INITIAL, games=30, seed=1, jobs=1)
    doc = json.loads(r.to_json())
    assert doc["games"] == 30 and doc["policy"] == "net"
    assert set(doc["mean"]) == set(OUTPUT_NAMES) == set(doc["stderr"])
    probs = [doc["mean"][k] for k in OUTPUT_NAMES[:5]]
    assert doc["mean"]["equity"] == pytest.approx(float(equity(probs)))


def test_bad_settings():
    for kw in ({"trials": 0}, {"policy": "x"}, {"backend": "x"}, {"jobs": 0},
               {"truncate": -1}, {"seed": -1}, {"stderr_target": 0}, {"evaluator": "exact"},
               {"retries": -1}):
        with pytest.raises(BgfastError):
            RolloutSettings(**kw)
    with pytest.raises(BgfastError):
        rollout(INITIAL, games=10, trials=10)


def test_cli_rollout():
    from click.testing import CliRunner

    from bgfast.cli import main

    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-n", "36", "-j", "1", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["games"] == 36
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-n", "36", "-j", "1", "-d", "31",
                                  "--max-plays", "2", "--json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.output)["plays"]) == 2
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-n", "36", "-j", "1", "-t", "1",
                                  "--all-rolls", "--json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.output)["rolls"]) == 21
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-n", "36", "-j", "1"])
    assert r.exit_code == 0 and "equity" in r.output
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-n", "36", "-j", "1", "-e", "pubeval",
                                  "--policy", "evaluator", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["settings"]["evaluator"] == "pubeval"
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-e", "nope"])
    assert r.exit_code == 2 and "nope" in r.output
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "--backend", "nope"])
    assert r.exit_code == 2
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-n", "36", "-j", "1", "--cubeless",
                                  "--luck-plays", "8", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["settings"]["luck_plays"] == 8
    assert doc["mean"] == rollout(INITIAL, trials=36, jobs=1, luck_plays=8).to_dict()["mean"]
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "--luck-plays", "8", "--policy", "pubeval"])
    assert r.exit_code != 0 and "luck_plays needs variance reduction" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "--luck-plays", "65"])
    assert r.exit_code == 2
    for extra, k in (([], 6), (["--policy", "hard"], 0), (["--preset", "gnubg"], 0),
                     (["--preset", "gnubg", "--luck-plays", "4"], 4)):
        r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-n", "2", "-j", "1",
                                      "--cubeless", "--json"] + extra)
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["settings"]["luck_plays"] == k, extra
    for extra, words in (([], "luck from the best of pubeval's 6 plays, cubeless"),
                         (["--luck-plays", "0"], "luck from every play, cubeless"),
                         (["--no-vr"], "policy net, cubeless")):
        r = CliRunner().invoke(main, ["rollout", "4HPwATDgc/ABMA", "-n", "2", "-j", "1",
                                      "--cubeless"] + extra)
        assert r.exit_code == 0 and words in r.output.splitlines()[-1], r.output


@pytest.mark.loopback
def test_ray_backend_matches_local_and_retries(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    import bgfast.rollout as ro

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        s = RolloutSettings(trials=120, seed=13, chunk=25, variance_reduction=False)
        a = rollout(INITIAL, s, backend="ray")
        b = rollout(INITIAL, s, jobs=1)
        assert a.mean == b.mean and a.stderr == b.stderr and a.games == 120
        # a level policy and the net evaluator: fresh Ray workers install them
        lv = RolloutSettings(trials=40, seed=13, chunk=15, truncate=8, policy="medium",
                             evaluator="net")
        assert rollout(INITIAL, lv, backend="ray").mean == rollout(INITIAL, lv, jobs=1).mean
        # every preset, the n-ply ones with their evaluation caches, gives the
        # local bits on Ray (few trials, small chunks)
        for name, trials, chunk in (("gnubg", 36, 10), ("roller", 12, 5), ("roller+", 4, 2),
                                    ("roller++", 2, 1)):
            ps = RolloutSettings.from_preset(name, trials=trials, seed=13, chunk=chunk)
            on_ray, local = rollout(INITIAL, ps, backend="ray"), rollout(INITIAL, ps, jobs=1)
            assert on_ray.mean == local.mean and on_ray.stderr == local.stderr, name

        # every task fails on its first attempt (Ray's own retries off): the
        # driver resubmits and the merged result is still the same
        marker = str(tmp_path)

        @ray.remote(max_retries=0)
        def flaky(starts, first, count, params):
            import os

            path = os.path.join(marker, f"chunk{first}")
            if not os.path.exists(path):
                open(path, "w").close()
                raise RuntimeError("injected failure")
            return "node", ro.run_chunk(starts, first, count, params)

        monkeypatch.setattr(ro, "_ray_remote", lambda: flaky)
        c = rollout(INITIAL, s, backend="ray")
        assert c.mean == b.mean and c.stderr == b.stderr
        assert len(list(tmp_path.iterdir())) == 5
        with pytest.raises(WorkerError, match="a Ray task failed: RuntimeError: injected failure"):
            for f in tmp_path.iterdir():
                f.unlink()
            rollout(INITIAL, s, backend="ray", retries=0)
    finally:
        ray.shutdown()


def _policy_value(board, memo):
    """Exact expectation of the 'evaluator' policy's game from a small race:
    the average over the 21 rolls of the policy's play (the kernel's own
    choice), down to the exact two-sided table."""
    from bgfast import _evaluate
    from bgfast.evaluate import invert
    from bgfast.movegen import ALL_ROLLS, ROLL_WEIGHTS

    key = board.tobytes()
    if key in memo:
        return memo[key]
    ts = bearoff.default_two_sided()
    pr = ts.probe_batch(board[None])
    if pr["inside"][0]:
        v = pr["probs"][0]
    elif board[0].sum() == 0 or board[1].sum() == 0:
        v = get_evaluator("composite").evaluate_batch(board[None])[0]
    else:
        rep = np.ascontiguousarray(np.repeat(board[None], 21, axis=0))
        _c, res = _evaluate.choose_plays(rep, np.ascontiguousarray(ALL_ROLLS), 1, 0)
        v = sum(w * invert(_policy_value(r, memo)) for w, r in zip(ROLL_WEIGHTS, res)) / 36
    memo[key] = v
    return v


@pytest.mark.parametrize("rows", [
    ([0, 1, 0, 0, 0, 0, 0, 1, 0], [0, 0, 1, 1, 0, 1]),
    ([1, 0, 0, 0, 0, 1, 0, 0, 1], [0, 1, 0, 0, 2, 0, 0, 1]),
])
def test_race_rollout_agrees_with_exact_policy_value(rows):
    on_roll, opp = rows
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, :len(on_roll)] = on_roll
    b[0, :len(opp)] = opp
    pos = Position(b)
    assert pos.classify().name == "RACE"
    install_bearoff_tables()       # the kernel's choice uses the tables, as in rollouts
    exact = _policy_value(b, {})
    r = rollout(pos, trials=1500, seed=8, jobs=1, policy="evaluator", evaluator="composite",
                variance_reduction=False)
    assert r.stderr["equity"] > 0.002 and r.average_plies >= 1
    assert abs(r.equity - float(equity(exact))) < 3 * r.stderr["equity"]
    vr = rollout(pos, trials=300, seed=8, jobs=1, policy="evaluator", evaluator="composite")
    assert abs(vr.equity - float(equity(exact))) < 3 * max(vr.stderr["equity"], 1e-3)


def test_luck_adjustment_is_unbiased_in_contact():
    # same seed: the same games with and without VR, so the per-trial
    # difference is the summed luck, whose expectation is zero
    pos = Position.from_position_id("4HPwATDgc/ABMA")
    starts = np.ascontiguousarray(np.stack([pos.board, INITIAL.board]))
    base = RolloutSettings(seed=17, early_stop=False)
    plain, pp = run_chunk(starts, 0, 400, replace(base, variance_reduction=False).kernel_params())
    vr, pv = run_chunk(starts, 0, 400, base.kernel_params())
    assert np.array_equal(pp, pv)                 # identical games
    luck = plain[:, :, 5] - vr[:, :, 5]
    assert (np.abs(luck).mean(axis=0) > 0.1).all()
    se = luck.std(axis=0, ddof=1) / np.sqrt(len(luck))
    assert (np.abs(luck.mean(axis=0)) < 3 * se).all()
    # the raw results are game outcomes: each probability is 0 or 1
    assert set(np.unique(plain[:, :, :5])) <= {0.0, 1.0}


def test_local_rollout_survives_a_dead_worker(tmp_path, monkeypatch):
    """A worker killed in the middle of a rollout: the run goes on from the
    first trial not received, with the same result, and no worker is left."""
    import os
    import signal

    import bgfast.rollout as ro

    s = RolloutSettings(trials=240, seed=6, jobs=2, chunk=20, variance_reduction=False,
                        policy="pubeval", evaluator="composite")
    whole = rollout(INITIAL, replace(s, jobs=1))
    before = children()
    parent, marker = os.getpid(), tmp_path / "killed"
    real = ro.run_chunk

    def dying(starts, first, count, params):
        if os.getpid() != parent and not marker.exists():   # the first chunk of a worker
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return real(starts, first, count, params)

    monkeypatch.setattr(ro, "run_chunk", dying)
    again = rollout(INITIAL, s)
    assert marker.exists(), "a worker should have been killed"
    assert again.mean == whole.mean and again.stderr == whole.stderr and again.games == 240
    assert children() <= before
    # more deaths than retries: the run fails with a WorkerError
    from bgfast._workers import WorkerError

    def always(starts, first, count, params):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(starts, first, count, params)

    monkeypatch.setattr(ro, "run_chunk", always)
    with pytest.raises(WorkerError, match="killed by signal 9"):
        rollout(INITIAL, replace(s, retries=1))
    assert children() <= before


def test_rollout_streams_in_bounded_memory_and_stops_by_stderr():
    """A huge trial count with a standard-error target neither preallocates
    nor plays past the stop; the stopped rollout is the fixed rollout of as
    many trials (R3), and the chunks are folded the same way whatever their
    size."""
    import resource
    s = RolloutSettings(trials=10 ** 15, seed=3, jobs=1, stderr_target=0.006, batch=100,
                        min_trials=100, truncate=6, policy="pubeval", evaluator="composite")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    seen = []
    r = rollout(INITIAL, s, progress=lambda done, total: seen.append((done, total)))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000   # KiB
    assert r.games == 1000 and seen[-1] == (1000, 10 ** 15)
    assert r.stderr["equity"] <= 0.006
    fixed = rollout(INITIAL, replace(s, trials=1000, stderr_target=None))
    assert fixed.mean == r.mean and fixed.stderr == r.stderr and fixed.games == 1000
    # the batch boundary before had not reached the target
    assert rollout(INITIAL, replace(s, trials=900, stderr_target=None)).stderr["equity"] > 0.006
    # chunks that do not divide the batches: the same stop, the same numbers
    small = rollout(INITIAL, replace(s, chunk=7))
    assert small.games == 1000 and small.mean == r.mean and small.stderr == r.stderr


def test_rollout_statistics_are_the_plain_ones():
    """The folded means and standard errors are those of the trials' values
    taken at once (known values from the kernel's own per-trial results)."""
    import math
    s = RolloutSettings(trials=3000, seed=9, jobs=1, truncate=10,   # 2 blocks and a part
                        variance_reduction=False, policy="pubeval", evaluator="composite")
    starts = np.ascontiguousarray(INITIAL.board[None])
    vals, plies = run_chunk(starts, 0, 3000, s.kernel_params())
    r = rollout(INITIAL, s)
    v = vals[:, 0, :]
    np.testing.assert_allclose([r.mean[k] for k in OUTPUT_NAMES], v.mean(axis=0), rtol=0,
                               atol=1e-14)
    np.testing.assert_allclose([r.stderr[k] for k in OUTPUT_NAMES],
                               v.std(axis=0, ddof=1) / math.sqrt(3000), rtol=1e-12)
    assert r.average_plies == plies.mean()


def test_rollout_limits():
    from bgfast.rollout import MAX_TRIALS, MAX_TRUNCATE
    with pytest.raises(BgfastError, match="trials"):
        RolloutSettings(trials=MAX_TRIALS + 1)
    with pytest.raises(BgfastError, match="truncate"):
        RolloutSettings(truncate=MAX_TRUNCATE + 1)
    with pytest.raises(BgfastError, match="chunk"):
        RolloutSettings(chunk=10 ** 12)
    RolloutSettings(trials=MAX_TRIALS, truncate=MAX_TRUNCATE)


def test_stratification_permutations():
    from bgfast import _rollout

    a, b = _rollout.permutations(5), _rollout.permutations(6)
    for p in (a, b):
        assert p.shape == (2, 36)
        assert all(sorted(row) == list(range(36)) for row in p)
    assert (a != b).any() and (a[0] != a[1]).any()
    assert np.array_equal(a, _rollout.permutations(5))


def test_registered_kernel_evaluator_slot():
    from bgfast import _evaluate
    from bgfast.rollout import KERNEL_EVALUATORS, register_kernel_evaluator

    with pytest.raises(BgfastError):
        register_kernel_evaluator("mine", 5)          # nothing registered there
    with pytest.raises(ValueError):
        _evaluate.alias_slot(1, 0)                    # built-in slots are fixed
    _evaluate.alias_slot(5, 1)                        # pubeval alone, through the slot path
    try:
        register_kernel_evaluator("mine", 5)
        boards = np.ascontiguousarray(np.stack([INITIAL.board, BEAROFFS[0].board]))
        np.testing.assert_allclose(_evaluate.evaluate_probs(boards, 5),
                                   _evaluate.evaluate_probs(boards, 1), atol=1e-15)
        s = RolloutSettings(trials=60, seed=3, jobs=1, policy="evaluator")
        a = rollout(INITIAL, s, evaluator="mine")
        b = rollout(INITIAL, s, evaluator="pubeval")
        c = rollout(INITIAL, s, evaluator="composite")
        # the slot path evaluates for the player on roll and inverts (1 - (1 - x)):
        # equal up to rounding, while the composite evaluator really differs
        assert a.mean == pytest.approx(b.mean, abs=1e-12) and a.mean != pytest.approx(c.mean, abs=1e-6)
        with pytest.raises(BgfastError):
            register_kernel_evaluator("composite", 5)
    finally:
        register_kernel_evaluator("mine", None)
        _evaluate.alias_slot(5, -1)
    assert "mine" not in KERNEL_EVALUATORS and not _evaluate.slot_registered(5)


# ---------------------------------------------------------------- levels as policies
LEVEL_BOARD = Position.from_position_id("4HPwATDgc/ABMA").board


@pytest.mark.parametrize("level", ["net", "hard", "expert"])
def test_level_policy_plays_the_levels_moves(level):
    # 36 quasi-random trials truncated after one ply: every first roll once,
    # so the mean is the average over the 36 rolls of the net's value after
    # the level's own play (bgfast.levels) of that roll
    from bgfast.levels import get_level

    r = rollout(Position(LEVEL_BOARD), trials=36, seed=4, jobs=1, truncate=1,
                variance_reduction=False, policy=level, evaluator="net")
    dice = np.array([(o // 6 + 1, o % 6 + 1) for o in range(36)], dtype=np.int64)
    boards = np.ascontiguousarray(np.repeat(LEVEL_BOARD[None], 36, axis=0))
    _, after = get_level(level).choose_boards(boards, dice)
    opp = evaluate_ply(after, 0, "net")               # for the opponent, now on roll
    mine = np.array([[1 - p[0], p[3], p[4], p[1], p[2]] for p in opp]).mean(axis=0)
    np.testing.assert_allclose([r.mean[k] for k in OUTPUT_NAMES[:5]], mine, atol=2e-6)


def test_level_policies_are_deterministic_and_differ():
    s = RolloutSettings(trials=72, seed=21, truncate=6, variance_reduction=False)
    means = {}
    for level in ("beginner", "easy", "medium", "net"):
        a = rollout(INITIAL, s, policy=level, jobs=1, backend="serial")
        b = rollout(INITIAL, s, policy=level, jobs=2, chunk=7)
        assert a.mean == b.mean and a.stderr == b.stderr          # any split, same bits
        means[level] = a.equity
    assert len(set(means.values())) == 4                          # noise and randomness act


def test_net_policy_is_the_net_evaluator_policy():
    # the net level at 0-ply and the 'evaluator' policy with the net pick the same plays
    # (and, with every play valued for the luck, adjust by the same luck)
    s = RolloutSettings(trials=36, seed=8, jobs=1, evaluator="net", luck_plays=0)
    a = rollout(INITIAL, s, policy="net")
    b = rollout(INITIAL, s, policy="evaluator")
    assert a.mean == pytest.approx(b.mean, abs=1e-9)
    assert a.average_plies == b.average_plies


def test_unknown_policy_names_the_levels():
    with pytest.raises(BgfastError, match="expert"):
        RolloutSettings(policy="grandmaster")
