"""Evaluators: pubeval against gnubg-nn, bear-off tables, n-ply, move choice."""
import numpy as np
import pytest

from bgfast import _evaluate, evaluate
from bgfast.errors import BgfastError, InvalidDiceError, InvalidPositionError
from bgfast.evaluate import (PROB_NAMES, equity, evaluate_ply, get_evaluator, invert,
                             pubeval_score, rank_plays)
from bgfast.movegen import ALL_ROLLS, ROLL_WEIGHTS, legal_plays
from bgfast.position import Position, PositionClass, classify_boards


def _games(n_games, seed, plies=200):
    """Boards met in seeded pubeval self-play (player on roll in row 1)."""
    rng = np.random.default_rng(seed)
    ev = get_evaluator("pubeval")
    b = np.repeat(Position.initial().board[None], n_games, axis=0)
    seen = []
    for _ in range(plies):
        live = classify_boards(b) != PositionClass.OVER
        if not live.any():
            break
        b = b[live]
        seen.append(b.copy())
        dice = rng.integers(1, 7, size=(b.shape[0], 2))
        _c, b = ev.choose(b, dice)
    return np.concatenate(seen)


@pytest.fixture(scope="module")
def boards():
    return _games(60, 11)


def _reference_score(board, weights):
    """pubeval written from bgfast/data/pubeval/README.md, in plain Python (row 0 = us)."""
    contact = classify_boards(board[None])[0] == PositionClass.CONTACT
    w = weights["contact" if contact else "race"]
    x = np.zeros(122)
    for k in range(24):
        p = 24 - k
        n = int(board[0, p - 1]) - int(board[1, 24 - p])
        if n == -1:
            x[5 * k] = 1
        if n == 1:
            x[5 * k + 1] = 1
        if n >= 2:
            x[5 * k + 2] = 1
        if n == 3:
            x[5 * k + 3] = 1
        if n >= 4:
            x[5 * k + 4] = (n - 3) / 2
    x[120] = board[1, 24] / 2          # + opponent's bar (see the notes on the sign)
    x[121] = (15 - board[0].sum()) / 15
    return float(x @ w)


def _gnubg(board):
    return [[int(v) for v in board[0]], [int(v) for v in board[1]]]


def test_weights_come_from_the_data_file():
    w = evaluate.pubeval_weights()
    assert w["race"].shape == (122,) and w["contact"].shape == (122,)
    assert not np.allclose(w["race"], w["contact"])


def test_pubeval_matches_gnubg_nn(gnubg_nn, boards):
    results = boards[classify_boards(boards) != PositionClass.OVER][:3000]
    # the scores of a play's result: swap the boards so that row 0 is "us"
    res = np.ascontiguousarray(results[:, ::-1, :])
    res = res[classify_boards(res) != PositionClass.OVER]
    ours = pubeval_score(res)
    theirs = np.array([gnubg_nn.pub_eval_score(_gnubg(b)) for b in res])
    assert len(res) > 2000
    assert np.abs(ours - theirs).max() < 1e-4       # gnubg computes in float32
    assert (classify_boards(res) == PositionClass.CONTACT).any()
    assert (classify_boards(res) == PositionClass.RACE).any()


def test_pubeval_matches_reference(boards):
    w = evaluate.pubeval_weights()
    res = np.ascontiguousarray(boards[::7, ::-1, :])
    res = res[classify_boards(res) != PositionClass.OVER]
    ours = pubeval_score(res)
    ref = np.array([_reference_score(b, w) for b in res])
    np.testing.assert_allclose(ours, ref, atol=1e-9)


def _apply_gnubg_move(board, mv):
    b = board.copy()
    for f, t in zip(mv[::2], mv[1::2]):
        b[1, f] -= 1
        if t >= 0:
            b[1, t] += 1
            if b[0, 23 - t] == 1:
                b[0, 23 - t] = 0
                b[0, 24] += 1
    return b[::-1].copy()


def test_pubeval_move_choice_matches_gnubg_nn(gnubg_nn, boards):
    rng = np.random.default_rng(3)
    sample = boards[rng.choice(len(boards), 1500, replace=False)]
    dice = rng.integers(1, 7, size=(len(sample), 2))
    counts, ours = get_evaluator("pubeval").choose(sample, dice)
    checked = 0
    for b, d, c, r in zip(sample, dice, counts, ours):
        if c <= 1:
            continue
        mv = gnubg_nn.pub_best_move(_gnubg(b), int(d[0]), int(d[1]))
        assert np.array_equal(_apply_gnubg_move(b, mv), r), (b, d)
        checked += 1
    assert checked > 1000


def _classes_by_numpy(boards):
    """The position class written out with numpy: OVER when a side has no
    checker, CONTACT when the two rearmost checkers (bar = index 24) face
    each other (index sum >= 23), BEAROFF when both are home, else RACE."""
    present = boards > 0
    back = np.where(present, np.arange(25), -1).max(axis=2)
    out = np.full(len(boards), PositionClass.RACE, dtype=np.int8)
    out[(back <= 5).all(axis=1)] = PositionClass.BEAROFF
    out[(back[:, 0] >= 0) & (back[:, 1] >= 0) & (back.sum(axis=1) >= 23)] = PositionClass.CONTACT
    out[(back < 0).any(axis=1)] = PositionClass.OVER
    return out


def test_kernel_classes_match_the_rule(boards):
    over = boards[:40].copy()
    over[:20, 0] = 0                                 # the side not on roll has borne off
    over[20:, 1] = 0                                 # the side on roll has borne off
    sample = np.concatenate([boards, over])
    got = classify_boards(sample)
    assert np.array_equal(got, _classes_by_numpy(sample))
    assert set(np.unique(got).tolist()) == {0, 1, 2, 3}     # every class is in the sample


def test_probabilities_are_consistent(boards):
    for name in ("pubeval", "composite"):
        p = get_evaluator(name).evaluate_batch(boards)
        assert p.shape == (len(boards), 5)
        assert (p >= 0).all() and (p <= 1).all()
        assert (p[:, 1] <= p[:, 0] + 1e-12).all() and (p[:, 2] <= p[:, 1] + 1e-12).all()
        assert (p[:, 3] <= 1 - p[:, 0] + 1e-12).all() and (p[:, 4] <= p[:, 3] + 1e-12).all()
        np.testing.assert_allclose(equity(p), 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4])
    e = get_evaluator("composite").evaluate(Position(boards[5]))
    assert e.to_dict()["equity"] == pytest.approx(e.equity)
    assert set(PROB_NAMES) <= set(e.to_dict())


def test_invert_is_an_involution():
    p = np.array([0.6, 0.2, 0.05, 0.1, 0.01])
    np.testing.assert_allclose(invert(invert(p)), p)
    assert equity(invert(p)) == pytest.approx(-equity(p))


def test_finished_games_are_exact():
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, 0] = 1                 # on roll: one checker left; opponent has borne off all
    p = get_evaluator("composite").evaluate_batch(b[None])[0]
    np.testing.assert_array_equal(p, [0, 0, 0, 0, 0])
    b[1, 0] = 0
    b[1, 20] = 14
    b[1, 24] = 1                # 15 left, one on the bar: backgammon
    p = get_evaluator("composite").evaluate_batch(b[None])[0]
    np.testing.assert_array_equal(p, [0, 0, 0, 1, 1])


def _bearoff_boards(rng, n, max_checkers, min_checkers=1):
    out = np.zeros((n, 2, 25), dtype=np.uint8)
    for i in range(n):
        for side in range(2):
            k = rng.integers(min_checkers, max_checkers + 1)
            for pt in rng.integers(0, 6, size=k):
                out[i, side, pt] += 1
    return out


def test_exact_evaluator_matches_bearoff_table():
    from bgfast import bearoff

    rng = np.random.default_rng(5)
    b = _bearoff_boards(rng, 300, 6)
    ours = get_evaluator("exact").evaluate_batch(b)
    ref = bearoff.default_two_sided().probe_batch(b)
    assert ref["inside"].all()
    np.testing.assert_allclose(equity(ours), ref["equity"], atol=1e-9)
    assert get_evaluator("exact").covers(b).all()
    big = _bearoff_boards(rng, 3, 15, 10)
    assert not get_evaluator("exact").covers(big).any()
    with pytest.raises(InvalidPositionError):
        get_evaluator("exact").evaluate_batch(big)


def test_race_kernel_matches_one_sided_convolution():
    """The C convolution (used in rollouts) against bgfast.bearoff's numpy one."""
    from bgfast import bearoff

    rng = np.random.default_rng(6)
    b = _bearoff_boards(rng, 300, 15, 7)
    b[:40, 0, :6] = 0
    b[:40, 0, 3] = 15            # gammon chances on both sides
    b[:20, 1, :6] = 0
    b[:20, 1, 2] = 3
    b[40:80, 1, :6] = 0
    b[40:80, 1, 5] = 15
    b[40:60, 0, :6] = 0
    b[40:60, 0, 1] = 2
    ours = get_evaluator("composite").evaluate_batch(b)
    ref = bearoff.default_one_sided().probe_batch(b)["probs"]
    np.testing.assert_allclose(ours, ref, atol=2e-6)
    np.testing.assert_allclose(get_evaluator("race").evaluate_batch(b), ref, atol=1e-12)
    assert ours[:20, 1].max() > 0.1 and ours[40:60, 3].max() > 0.1


def test_one_ply_is_the_average_over_21_rolls(boards):
    ev = get_evaluator("composite")
    cls = classify_boards(boards)
    b = np.concatenate([boards[[3, 40, 400]], boards[cls == PositionClass.BEAROFF][:2]])
    got = evaluate_ply(b, 1, ev)
    for i, board in enumerate(b):
        acc = np.zeros(5)
        for (d1, d2), w in zip(ALL_ROLLS, ROLL_WEIGHTS):
            plays = legal_plays(Position(board), int(d1), int(d2))
            if plays:
                res = np.stack([p.position.board for p in plays])
                chosen = res[int(np.argmax(-equity(ev.evaluate_batch(res))))]
            else:
                chosen = board[::-1].copy()
            acc += w * invert(ev.evaluate_batch(chosen[None])[0])
        np.testing.assert_allclose(got[i], acc / 36, atol=1e-12)


def test_two_ply_ranking_filters_and_orders():
    pos = Position.initial()
    r0 = rank_plays(pos, 3, 1, plies=0)
    r2 = rank_plays(pos, 3, 1, plies=2, keep=3, window=10.0)
    assert len(r0) == len(r2) == len(legal_plays(pos, 3, 1))
    assert [r.plies for r in r2[:3]] == [2, 2, 2] and all(r.plies == 0 for r in r2[3:])
    eqs = [r.equity for r in r2[:3]]
    assert eqs == sorted(eqs, reverse=True)
    assert r0[0].play.notation == "8/5 6/5"
    assert evaluate.best_play(pos, 3, 1).notation == "8/5 6/5"


def test_bad_input():
    with pytest.raises(InvalidDiceError):
        rank_plays(Position.initial(), 7, 1)
    with pytest.raises(BgfastError):
        get_evaluator("nope")
    with pytest.raises(ValueError):
        evaluate_ply(Position.initial().board[None], -1)


BAD_DICE = [(-100000, 5), (0, 0), (7, 7), (2 ** 31, 1), (2 ** 32 + 3, 1), (3.5, 2), (1, 2, 3),
            [[1, 2], [3]], None]


@pytest.mark.parametrize("name", ["pubeval", "composite", "exact", "race", "net"])
def test_choose_refuses_bad_dice_and_boards(name):
    """choose() checks the dice and the boards before a kernel sees them
    (pubeval and composite once passed them on: a crash, or 35 "plays"
    for 0-0 and a board of 14 checkers for 2**31-1)."""
    ev = get_evaluator(name)
    start = Position.initial().board
    for dice in BAD_DICE:
        with pytest.raises(InvalidDiceError):
            ev.choose(start[None], dice)
    with pytest.raises(InvalidDiceError):
        ev.choose(np.stack([start, start]), [(3, 1), (3, 7)])
    too_many = start.copy()
    too_many[1, 0] = 5
    clash = start.copy()
    clash[0, 0] = 1                   # on the 24-point of the player on roll, which it holds
    huge = np.full((2, 25), 255, dtype=np.uint8)
    for bad in (too_many, clash, huge):
        with pytest.raises(InvalidPositionError):
            ev.choose(bad[None], (3, 1))
    with pytest.raises(InvalidPositionError):
        ev.choose(np.zeros((1, 2, 24), dtype=np.uint8), (3, 1))


@pytest.mark.parametrize("name", ["pubeval", "composite"])
def test_choose_with_good_dice_still_plays(name):
    start = Position.initial()
    counts, results = get_evaluator(name).choose(start.board[None], (3, 1))
    assert counts.tolist() == [16]
    assert Position(results[0]) in {p.position for p in legal_plays(start, 3, 1)}
    assert Position(results[0]).board.sum(axis=1).tolist() == [15, 15]


def test_ranking_refuses_bad_dice():
    from bgfast.evaluate import best_play, rank_plays_batch

    start = Position.initial()
    for d1, d2 in [(3.7, 1), (None, 1), ("3", 1), (True, 1), (0, 1)]:
        with pytest.raises(InvalidDiceError):
            rank_plays(start, d1, d2)
        with pytest.raises(InvalidDiceError):
            best_play(start, d1, d2)
    for dice in BAD_DICE:
        with pytest.raises(InvalidDiceError):
            rank_plays_batch(start.board[None], dice)


def test_register_evaluator_slot():
    class Coin(evaluate.Evaluator):
        name = "coin"

        def evaluate_batch(self, boards):
            n = np.asarray(boards).shape[0]
            return np.tile([0.5, 0, 0, 0, 0], (n, 1)).astype(float)

    evaluate.register_evaluator("coin", Coin)
    assert "coin" in evaluate.evaluator_names()
    # a Python evaluator works with the generic move choice and n-ply
    v = evaluate_ply(Position.initial().board[None], 1, "coin")
    np.testing.assert_allclose(v, [[0.5, 0, 0, 0, 0]])
    assert rank_plays(Position.initial(), 6, 5, evaluator="coin")


def test_calibration_beats_a_constant():
    from bgfast.train import fit_pubeval_calibration

    doc = fit_pubeval_calibration(games=300, seed=9)
    for cls in ("race", "contact"):
        assert doc[cls + "_samples"] > 100
    # log-loss of the win estimate well below the coin's log(2)
    assert doc["contact_logloss"]["win"] < 0.66
    assert doc["race_logloss"]["win"] < 0.4


def test_cli_evaluate():
    from click.testing import CliRunner
    import json

    from bgfast.cli import main

    r = CliRunner().invoke(main, ["evaluate", "4HPwATDgc/ABMA", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["equity"] == pytest.approx(equity([doc[k] for k in PROB_NAMES]))
    r = CliRunner().invoke(main, ["evaluate", "4HPwATDgc/ABMA", "-d", "31", "-p", "1", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["plays"][0]["play"] == "8/5 6/5"
    r = CliRunner().invoke(main, ["evaluate", "4HPwATDgc/ABMA", "-e", "nope"])
    assert r.exit_code == 2


def test_pubeval_alone_and_composite_differ_only_where_tables_apply(boards):
    from bgfast.evaluate import bearoff_tables

    pub = get_evaluator("pubeval").evaluate_batch(boards)
    comp = get_evaluator("composite").evaluate_batch(boards)
    cls = classify_boards(boards)
    # the bear-offs, and the races inside the race table
    table = (cls == PositionClass.BEAROFF) | (
        (cls == PositionClass.RACE) & bearoff_tables()[0].probe_batch(boards)["inside"])
    assert (table & (cls == PositionClass.RACE)).any()
    np.testing.assert_array_equal(pub[~table], comp[~table])
    assert table.any() and (np.abs(pub[table] - comp[table]).max(axis=1) > 1e-6).mean() > 0.9
    cal = evaluate.calibration()
    assert cal.shape == (2, 5, len(_evaluate.CAL_FEATURES))
    # a higher score means more wins for the mover, in both classes
    assert (cal[:, 0, 0] > 0).all()


def test_missing_bearoff_tables_degrade_gracefully(monkeypatch):
    from bgfast import _evaluator, bearoff
    from bgfast.errors import DatabaseError

    def broken(*a, **k):
        raise OSError("read-only cache")

    monkeypatch.setattr(_evaluator, "_TABLES", None)
    monkeypatch.setattr(_evaluator, "_TABLE_ERROR", None)
    monkeypatch.setattr(bearoff, "default_race_table", broken)
    with pytest.warns(RuntimeWarning, match="bear-off tables unavailable"):
        _evaluator.ensure_tables()
    home = np.zeros((1, 2, 25), dtype=np.uint8)
    home[0, :, 0] = 2
    with pytest.raises(DatabaseError):
        get_evaluator("race").evaluate_batch(home)
    with pytest.raises(DatabaseError):
        get_evaluator("exact").covers(home)
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _evaluator.ensure_tables()        # tried once only: no second warning
    assert not seen


@pytest.mark.parametrize("plies,evaluator", [(0, "composite"), (0, "pubeval"), (1, "composite"),
                                             (0, "net")])
def test_rank_plays_batch_is_the_single_ranking_for_every_board(plies, evaluator):
    # one batch over many boards (bar, bear-off, blocked rolls included) ranks
    # each board exactly as that board alone: segments never mix
    from bgfast.evaluate import rank_plays_batch
    from corpus import self_play_positions

    boards, dice = self_play_positions(40 if plies else 150, seed=17)
    batch = rank_plays_batch(boards, dice, plies=plies, evaluator=evaluator)
    assert (np.diff(batch.offsets) == 0).any() or plies    # a roll that cannot be played
    assert batch.offsets[-1] == len(batch.results) == len(batch.order)
    for i in range(len(boards)):
        alone = rank_plays_batch(boards[i:i + 1], dice[i:i + 1], plies=plies, evaluator=evaluator)
        seg = batch.order[batch.offsets[i]:batch.offsets[i + 1]]
        assert (seg >= batch.offsets[i]).all() and (seg < batch.offsets[i + 1]).all()
        np.testing.assert_array_equal(batch.results[seg], alone.results[alone.order])
        np.testing.assert_allclose(batch.equity[seg], alone.equity[alone.order], atol=1e-12)
        np.testing.assert_array_equal(batch.depth[seg], alone.depth[alone.order])
    eq = batch.equity
    for i in range(len(boards)):
        seg = batch.order[batch.offsets[i]:batch.offsets[i + 1]]
        if plies == 0 and evaluator != "pubeval" and len(seg) > 1:
            assert (np.diff(eq[seg]) <= 1e-15).all()          # best first


def _race_boards(rng, n, points):
    """Races with every checker of both sides within ``points`` points of
    home, 1-15 checkers a side (all 15 in about a third of them)."""
    out = np.zeros((n, 2, 25), dtype=np.uint8)
    for i in range(n):
        for side in range(2):
            k = 15 if rng.random() < 0.35 else int(rng.integers(1, 16))
            np.add.at(out[i, side], rng.integers(0, points, size=k), 1)
    return out


@pytest.fixture
def six_point_race_table():
    """Installs the 6-point one-sided table as the race table for one test."""
    from bgfast import _evaluator, bearoff

    _evaluator.install_bearoff_tables(one_sided=bearoff.default_one_sided())
    yield
    _evaluator.install_bearoff_tables()


def test_the_race_table_values_every_race_inside_it():
    """The default race table (10 points) values every race whose checkers
    lie within its points: by convolution, in the batch kernel, in the
    play ranker's incremental path and at 1 ply; outside it the net."""
    from bgfast import bearoff
    from bgfast.evaluate import bearoff_tables, race_points, rank_plays_batch

    assert race_points() == bearoff.RACE_TABLE_POINTS == 10
    table = bearoff_tables()[0]
    assert table.points == 10 and table.checkers == 15
    rng = np.random.default_rng(31)
    b = _race_boards(rng, 400, 10)
    inside = classify_boards(b) == PositionClass.RACE
    assert inside.sum() > 300
    ref = table.probe_batch(b)["probs"]
    net = get_evaluator("net")
    np.testing.assert_allclose(net.evaluate_batch(b)[inside], ref[inside], atol=1e-6)
    np.testing.assert_allclose(get_evaluator("composite").evaluate_batch(b)[inside], ref[inside],
                               atol=1e-6)
    # the 21 rolls' plays: the ranker values each result incrementally
    dice = rng.integers(1, 7, size=(len(b), 2))
    ranked = rank_plays_batch(b[inside], dice[inside], evaluator="net")
    res = ranked.results
    live = classify_boards(res) == PositionClass.RACE
    assert live.sum() > 1000
    mover = table.probe_batch(res)["probs"][live]
    theirs = np.stack([1 - mover[:, 0], mover[:, 3], mover[:, 4], mover[:, 1], mover[:, 2]], 1)
    np.testing.assert_allclose(ranked.probs[live], theirs, atol=1e-6)
    # one ply: the average over the rolls of the table's values of the plays
    one = evaluate_ply(b[:3], 1, net)
    one_ref = evaluate_ply(b[:3], 1, get_evaluator("race"))
    np.testing.assert_allclose(one, one_ref, atol=1e-6)
    # a checker on the 11-point: the net
    far = b[inside][:50].copy()
    far[:, 1, 10] += 1
    far[:, 1, :10] = np.minimum(far[:, 1, :10], 14 // 10)
    assert not table.probe_batch(far)["inside"].any()
    assert np.abs(net.evaluate_batch(far) - table.probe_batch(b[inside][:50])["probs"]).max() > 1e-3


def test_the_race_table_changes_nothing_in_the_home_boards(six_point_race_table):
    from bgfast import _evaluator

    rng = np.random.default_rng(32)
    b = _race_boards(rng, 300, 6)
    b[:40, 1, :] = 0
    b[:40, 1, 0] = 15             # gammons on both sides
    six = get_evaluator("net").evaluate_batch(b)
    _evaluator.install_bearoff_tables()
    assert _evaluator.race_points() == 10
    np.testing.assert_array_equal(get_evaluator("net").evaluate_batch(b), six)


def test_the_six_point_race_table_leaves_the_longer_races_to_the_net(six_point_race_table):
    from bgfast import bearoff
    from bgfast.evaluate import race_points

    assert race_points() == 6
    rng = np.random.default_rng(33)
    b = _race_boards(rng, 200, 10)
    home = classify_boards(b) == PositionClass.BEAROFF
    race = classify_boards(b) == PositionClass.RACE
    ref = bearoff.default_race_table().probe_batch(b)["probs"]
    got = get_evaluator("net").evaluate_batch(b)
    np.testing.assert_allclose(got[home], ref[home], atol=1e-6)
    assert np.abs(got[race] - ref[race]).max(axis=1).mean() > 1e-3


@pytest.mark.parametrize("value", ["5", "13", "ten", "-1"])
def test_a_bad_race_table_size_is_refused(monkeypatch, value):
    from bgfast import bearoff
    from bgfast.errors import InvalidPositionError

    monkeypatch.setenv("BGFAST_RACE_POINTS", value)
    with pytest.raises(InvalidPositionError, match="BGFAST_RACE_POINTS"):
        bearoff.race_table_points()
    with pytest.raises(InvalidPositionError, match="6 to 12"):
        bearoff.default_race_table(points=int(value) if value.lstrip("-").isdigit() else 99)


def test_a_rollout_worker_values_races_with_the_table_it_is_given(six_point_race_table):
    """A rollout's parameters carry the race table's points, and a worker
    (a fresh process, a Ray task) installs that table before it plays."""
    from bgfast.evaluate import race_points
    from bgfast.rollout import RolloutSettings, run_chunk

    s = RolloutSettings(trials=2, seed=3, policy="pubeval", evaluator="composite", backend="serial")
    six = s.kernel_params()
    assert six["race_points"] == 6
    start = np.ascontiguousarray(_race_boards(np.random.default_rng(1), 1, 10)[:, ::-1])
    a = run_chunk(start, 0, 2, six)
    params = dict(six, race_points=10)
    b = run_chunk(start, 0, 2, params)
    assert race_points() == 10
    assert not np.array_equal(a[0], b[0])
    np.testing.assert_array_equal(run_chunk(start, 0, 2, six)[0], a[0])
    assert race_points() == 6


def test_any_one_sided_table_can_be_the_race_table():
    """A table built in memory (windows, not a packed file) on 7 points: the
    kernels read its rows in place, and value the races within 7 points
    by it (the home boards to the same bits as the default table)."""
    from bgfast import _evaluator, bearoff

    seven = bearoff.build_one_sided(7, 15)
    assert seven._packed is None
    rows = seven.kernel_rows()
    assert rows[0] == 7 and rows[2][1] == seven.window     # row i at i * window
    rng = np.random.default_rng(34)
    b = _race_boards(rng, 300, 7)
    home = classify_boards(b) == PositionClass.BEAROFF
    race = classify_boards(b) == PositionClass.RACE
    before = get_evaluator("net").evaluate_batch(b)
    _evaluator.install_bearoff_tables(one_sided=seven)
    try:
        assert _evaluator.race_points() == 7
        got = get_evaluator("net").evaluate_batch(b)
    finally:
        _evaluator.install_bearoff_tables()
    np.testing.assert_allclose(got[race], seven.probe_batch(b)["probs"][race], atol=1e-6)
    np.testing.assert_array_equal(got[home], before[home])
    with pytest.raises(ValueError, match="rows, not"):
        _evaluator._k.set_tables(None, 0, (8,) + rows[1:])
    with pytest.raises(ValueError, match="outside its values"):
        bad = list(rows)
        bad[2] = rows[2] + 10 ** 9
        _evaluator._k.set_tables(None, 0, tuple(bad))
    _evaluator.install_bearoff_tables()


def test_the_nets_search_looks_past_the_one_sided_table_and_stops_at_exact_values():
    """n plies mean n plies wherever the race table's convolution (an
    approximation) values a position, as in gnubg; the two-sided table's
    exact values end the search."""
    race = get_evaluator("race")
    rng = np.random.default_rng(35)
    b = _race_boards(rng, 40, 10)
    b = b[classify_boards(b) == PositionClass.RACE][:6]
    home = np.zeros((1, 2, 25), dtype=np.uint8)
    home[0, 0, :6] = [1, 0, 2, 0, 1, 0]
    home[0, 1, :6] = [0, 2, 0, 1, 0, 1]                 # inside the two-sided table
    want = np.zeros((len(b), 5))
    for i, board in enumerate(b):
        for (d1, d2), w in zip(ALL_ROLLS, ROLL_WEIGHTS):
            res = np.stack([p.position.board for p in legal_plays(Position(board), int(d1), int(d2))])
            q = race.evaluate_batch(res)
            want[i] += w / 36 * invert(q[int(np.argmax(-equity(q)))])
    from bgfast.net import default_net

    net = default_net()                  # its compiled search (rollouts, rankings, values)
    got = net.evaluate_plies(b, 1)
    np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_allclose(evaluate_ply(b, 1, get_evaluator("net")), want, atol=1e-6)
    assert np.abs(got - net.evaluate_batch(b)).max() > 1e-5     # a look past the table
    np.testing.assert_allclose(net.evaluate_plies(home, 2), net.evaluate_batch(home), atol=1e-8)


@pytest.mark.parametrize("name", ["net", "pubeval"])
def test_one_position_gives_the_batch_numbers_bit_for_bit(name):
    rng = np.random.default_rng(5)
    boards = [Position.initial().board]
    pos = Position.initial()
    for _ in range(300):                    # positions along a random game
        plays = legal_plays(pos, *rng.integers(1, 7, 2))
        pos = plays[rng.integers(len(plays))].position if plays else pos.swap()
        if pos.board[0].sum() == 0 or pos.board[1].sum() == 0:
            pos = Position.initial()
        boards.append(pos.board)
    b = np.array(boards)
    ev = get_evaluator(name)
    probs = ev.evaluate_batch(b)
    kernel = _evaluate.equities(np.ascontiguousarray(probs))
    assert np.array_equal(equity(probs), kernel)
    for i, board in enumerate(b):
        e = ev.evaluate(board)
        assert e.probs == tuple(probs[i].tolist())
        assert e.equity == kernel[i]
