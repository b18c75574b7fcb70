"""The one-sided race net: the kernel's valuation of long races by
convolution (bgfast._net os_race_probs), the weights file, and its training
by value iteration (bgfast.onesided, ``bgfast train one-sided``)."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import bearoff, net as netmod, onesided, traindata
from bgfast._evaluator import bearoff_tables, ensure_tables
from bgfast.cli import main
from bgfast.movegen import legal_plays_batch
from bgfast.net import NetFileError

BINS = onesided.BINS


def _one_sided(hidden=8, seed=3, heads=2):
    rng = np.random.default_rng(seed)
    n = heads * BINS
    return {"w1": (rng.standard_normal((onesided.INPUTS, hidden)) * 0.3).astype(np.float32),
            "b1": (rng.standard_normal(hidden) * 0.1).astype(np.float32),
            "w2": (rng.standard_normal((hidden, n)) * 0.3).astype(np.float32),
            "b2": (np.tile(np.linspace(4, -4, BINS), heads) + rng.standard_normal(n)).astype(np.float32),
            "min_points": 10}


@pytest.fixture(scope="module")
def nets():
    """A small net without and with a (random) one-sided race net of two
    distributions, and with one of three."""
    ensure_tables()
    if bearoff_tables(required=False) is None or bearoff_tables()[0].points != 10:
        pytest.skip("needs the default 10-point race table")
    plain = netmod.random_net(hidden=16, seed=5)
    return (plain, netmod.Net(plain.copy().model, plain.meta, _one_sided()),
            netmod.Net(plain.copy().model, plain.meta, _one_sided(heads=3)))


def _board(onroll: dict, other: dict) -> np.ndarray:
    """A race board from {point: checkers} of each side (the rest borne off)."""
    b = np.zeros((2, 25), np.uint8)
    for row, side in ((1, onroll), (0, other)):
        for p, n in side.items():
            b[row, p - 1] = n
    return b


def _side_dists(side: np.ndarray, os_weights: dict):
    """(bear off, first off, out of the other's home board or None when no
    checker is there) float64[BINS] of one side, by the race table or the
    reference forward pass of the module docs (float64)."""
    table = bearoff_tables()[0]
    if not side[table.points:].any():
        r = np.zeros(BINS)
        d = table.distribution(side[:table.points])
        r[:len(d)] = d
        g = np.zeros(BINS)
        if side.sum() < 15:
            g[0] = 1.0
        else:
            d = table.distribution(side[:table.points], gammon=True)
            g[:len(d)] = d
        return r, g, None
    p = {k: np.asarray(os_weights[k], np.float64) for k in ("w1", "b1", "w2", "b2")}
    z = np.tanh(onesided.encode(side[None]).astype(np.float64) @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    out = []
    for k in range(z.shape[1] // BINS):
        e = np.exp(z[0, k * BINS:(k + 1) * BINS] - z[0, k * BINS:(k + 1) * BINS].max())
        out.append(e / e.sum())
    if side[onesided.FAR_POINT - 1:].any():
        return out[0], out[1], out[2]
    return out[0], out[1], None


def _reference(board: np.ndarray, os_weights: dict) -> np.ndarray:
    """The race's probabilities for the side on roll: it wins when the
    opponent needs at least as many rolls; gammons for a side with 15, and
    backgammons when it has a checker in the winner's home board and has not
    brought them all out by then."""
    mine, theirs = board[1, :24], board[0, :24]
    ri, gi, ci = _side_dists(mine, os_weights)
    rj, gj, cj = _side_dists(theirs, os_weights)
    at_least = lambda d: np.cumsum(d[::-1])[::-1]          # noqa: E731  P(>= k)
    after = lambda d: np.append(at_least(d)[1:], 0.0)      # noqa: E731  P(>= k + 1)
    p = np.zeros(5)
    p[0] = (ri * at_least(rj)).sum()
    if theirs.sum() == 15:
        p[1] = (ri * at_least(gj)).sum()
        if cj is not None:
            p[2] = (ri * at_least(cj)).sum()
    if mine.sum() == 15:
        p[3] = (rj * after(gi)).sum()
        if ci is not None:
            p[4] = (rj * after(ci)).sum()
    p[1] = min(p[1], p[0])          # a gammon is a win (or a loss)
    p[3] = min(p[3], 1 - p[0])
    p[2] = min(p[2], p[1])          # a backgammon is a gammon
    p[4] = min(p[4], p[3])
    return p


LONG_RACES = [        # no contact: the rearmost checkers' points add up to at most 24
    # on roll beyond the table, the opponent inside it
    ({13: 2, 11: 3, 8: 4, 6: 3, 3: 3}, {6: 4, 5: 4, 4: 3, 2: 2, 1: 2}),
    # both beyond it
    ({13: 1, 12: 2, 11: 2, 9: 4, 6: 6}, {11: 3, 10: 2, 8: 3, 6: 5, 2: 2}),
    # the opponent beyond, the side on roll with checkers off
    ({5: 3, 3: 4, 1: 2}, {17: 2, 12: 4, 7: 4, 4: 5}),
]


#: races with a checker in the other side's home board
FAR_RACES = [
    ({19: 1, 12: 4, 6: 10}, {5: 3, 4: 12}),
    ({20: 2, 6: 13}, {3: 15}),
    # the side on roll near the end, the opponent's stragglers in its home board
    ({3: 2, 2: 3, 1: 4}, {21: 1, 19: 1, 8: 3, 6: 10}),
    ({2: 6, 1: 3}, {20: 2, 13: 3, 6: 10}),
]


@pytest.mark.parametrize("mine,theirs", LONG_RACES + FAR_RACES)
def test_a_long_race_is_valued_by_convolving_the_one_sided_nets_distributions(nets, mine, theirs):
    plain, _, with_os = nets
    b = _board(mine, theirs)
    got = with_os.evaluate_batch(b[None])[0]
    np.testing.assert_allclose(got, _reference(b, with_os.one_sided), atol=2e-5)
    assert np.abs(got - plain.evaluate_batch(b[None])[0]).max() > 1e-3


def test_the_third_distribution_counts_backgammons_both_ways(nets):
    _, _, with_os = nets
    p = with_os.evaluate_batch(np.stack([_board(m, t) for m, t in FAR_RACES]))
    assert p[0, 4] > 0.01 and p[1, 4] > 0.01          # the side on roll can be backgammoned
    assert p[2, 2] > 0.01 and p[3, 2] > 0.01          # the side on roll can win one
    assert (p[:2, 2] == 0).all() and (p[2:, 4] == 0).all()
    assert (p[:, 2] <= p[:, 1]).all() and (p[:, 4] <= p[:, 3]).all()


@pytest.mark.parametrize("mine,theirs", FAR_RACES[:2] + [
    ({9: 3, 6: 12}, {8: 5, 4: 10}),                  # inside the race table: the table
])
def test_races_it_does_not_value_keep_the_race_net_or_the_table(nets, mine, theirs):
    """With two distributions a checker in the other's home board leaves the
    race to the race net."""
    plain, with_os, _ = nets
    b = _board(mine, theirs)[None]
    assert (with_os.evaluate_batch(b) == plain.evaluate_batch(b)).all()


def test_without_tables_the_net_alone_values_every_race(nets):
    plain, with_os, with3 = nets
    b = np.stack([_board(m, t) for m, t in LONG_RACES + FAR_RACES])
    assert (with_os.evaluate_batch(b, tables=False) == plain.evaluate_batch(b, tables=False)).all()
    assert (with3.evaluate_batch(b, tables=False) == plain.evaluate_batch(b, tables=False)).all()


def test_a_race_table_short_of_its_first_point_leaves_long_races_to_the_race_net(nets):
    from bgfast._evaluator import install_bearoff_tables

    plain, _, with_os = nets
    b = np.stack([_board(m, t) for m, t in LONG_RACES + FAR_RACES])
    before = with_os.evaluate_batch(b)
    try:
        install_bearoff_tables(one_sided=bearoff.build_one_sided(6))
        assert (with_os.evaluate_batch(b) == plain.evaluate_batch(b)).all()
    finally:
        install_bearoff_tables()
    assert (with_os.evaluate_batch(b) == before).all()


@pytest.mark.parametrize("which", [1, 2])
def test_the_plays_chosen_are_the_best_by_the_full_evaluation(nets, which):
    with_os = nets[which]
    rng = np.random.default_rng(11)
    boards, dice = [], []
    for m, t in LONG_RACES + FAR_RACES:
        for _ in range(7):
            boards.append(_board(m, t))
            dice.append(sorted(rng.integers(1, 7, 2), reverse=True))
    boards, dice = np.stack(boards), np.array(dice, np.int64)
    counts, chosen = with_os.choose(boards, dice)
    off, res = legal_plays_batch(boards, dice)
    p = with_os.evaluate_batch(res)
    eq = 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]     # for the side on roll after
    mine = with_os.evaluate_batch(chosen)
    got = 2 * mine[:, 0] - 1 + mine[:, 1] - mine[:, 3] + mine[:, 2] - mine[:, 4]
    for i in range(len(boards)):
        assert got[i] == pytest.approx(eq[off[i]:off[i + 1]].min(), abs=1e-6)


@pytest.mark.parametrize("which", [1, 2])
def test_the_file_keeps_the_one_sided_net_and_its_checksum_covers_it(nets, tmp_path, which):
    plain, with_os = nets[0], nets[which]
    netmod.save(with_os, tmp_path / "os.npz")
    back = netmod.load(tmp_path / "os.npz")
    assert back.one_sided["min_points"] == 10
    assert back.one_sided["w2"].shape[1] == (which + 1) * BINS
    b = np.stack([_board(m, t) for m, t in LONG_RACES + FAR_RACES])
    assert (back.evaluate_batch(b) == with_os.evaluate_batch(b)).all()
    assert back.checksum() != plain.checksum()
    assert back.copy().one_sided is not None
    z = dict(np.load(tmp_path / "os.npz"))
    bad = dict(z, os_b2=z["os_b2"] + np.float32(1))
    np.savez(tmp_path / "bad.npz", **bad)
    with pytest.raises(NetFileError, match="checksum"):
        netmod.load(tmp_path / "bad.npz")
    del z["os_w2"]
    np.savez(tmp_path / "part.npz", **z)
    with pytest.raises(NetFileError, match="os_w2"):
        netmod.load(tmp_path / "part.npz")


def test_bad_shapes_are_refused(nets):
    plain = nets[0]
    w = _one_sided()
    w["w2"] = w["w2"][:, :BINS]
    with pytest.raises(netmod.BgfastError, match="shapes"):
        plain.copy().set_one_sided(w)
    w = _one_sided(heads=3)
    w["b2"] = w["b2"][:2 * BINS]
    with pytest.raises(netmod.BgfastError, match="shapes"):
        plain.copy().set_one_sided(w)


# ---------------------------------------------------------------- training

def test_a_target_one_roll_from_the_table_is_the_larger_tables_row():
    """Value iteration's target of a side one checker outside a table is the
    recursion that builds a table: a 7-point table's row.  Every roll can
    bring the checker in; a net that values everything outside the table at
    63 rolls leaves the policy those results."""
    six, seven = onesided._Base(bearoff.build_one_sided(6)), bearoff.build_one_sided(7)
    sides = np.zeros((3, 24), np.uint8)
    sides[0, [6, 5, 0]] = (1, 9, 5)                     # one checker on the 7-point
    sides[1, [6, 3, 1]] = (1, 7, 7)
    sides[2, [6, 4]] = (1, 3)                           # 4 checkers, 11 off
    w = onesided._Weights(4, 0)
    w.p["w2"][:] = 0
    w.p["b2"][:] = -20
    w.p["b2"][[BINS - 1, 2 * BINS - 1]] = 20
    policy = onesided._policy(w.p, six, sides, 10, lambda k: None)
    # (a side with a checker off has taken the first off: its ties there mean nothing)
    assert six.inside(_bearoff_unranks(policy[:, :, 0].reshape(-1))).all()
    assert six.inside(_bearoff_unranks(policy[:2, :, 1].reshape(-1))).all()
    weights = np.array([x for _, _, x in bearoff._k.rolls()], np.float64) / 36.0
    y = onesided._targets(w.p, six, policy, weights)
    for i, s in enumerate(sides):
        want = np.zeros(BINS)
        d = seven.distribution(s[:7])
        want[:len(d)] = d
        np.testing.assert_allclose(y[i, :BINS], want, atol=2e-6)
        if s.sum() == 15:
            want = np.zeros(BINS)
            d = seven.distribution(s[:7], gammon=True)
            want[:len(d)] = d
            # the table's rows are rounded to float32: two results whose expected
            # rolls to the first checker off differ by less than that can swap
            np.testing.assert_allclose(y[i, BINS:2 * BINS], want, atol=5e-5)


def test_a_target_of_the_third_distribution_counts_the_rolls_that_bring_the_checker_out():
    """A checker on the 24-point (the others home) comes out of the other
    side's home board in one roll with 27 of the 36: a non-double of 6 pips
    or more, or a double from 2-2.  A net that values everything still there
    at 63 rolls leaves the policy those plays; the rest of the chance falls
    past the last roll."""
    six = onesided._Base(bearoff.build_one_sided(6))
    sides = np.zeros((2, 24), np.uint8)
    sides[0, [23, 5, 0]] = (1, 9, 5)
    sides[1, [18, 2]] = (1, 14)                         # one on the 19-point: every roll
    w = onesided._Weights(4, 0)
    w.p["w2"][:] = 0
    w.p["b2"][:] = -20
    w.p["b2"][[BINS - 1, 2 * BINS - 1, 3 * BINS - 1]] = 20
    policy = onesided._policy(w.p, six, sides, 10, lambda k: None)
    weights = np.array([x for _, _, x in bearoff._k.rolls()], np.float64) / 36.0
    y = onesided._targets(w.p, six, policy, weights)
    out = y[:, 2 * BINS:]
    assert out[0, 1] == pytest.approx(27 / 36, abs=1e-6) and out[0, 0] == 0
    assert out[0].sum() == pytest.approx(27 / 36, abs=1e-6)
    assert out[1, 1] == pytest.approx(1.0, abs=1e-6)


def _bearoff_unranks(ranks):
    from bgfast import _bearoff

    return _bearoff.unranks(np.ascontiguousarray(ranks, dtype=np.int64), 24)


@pytest.fixture(scope="module")
def few_races(tmp_path_factory):
    ps = traindata.load_positions("data/race/positions.bgtd")
    keep = np.flatnonzero(ps.classes == 2)[:60]
    sub = traindata.PositionSet(ps.keys[keep], ps.classes[keep], ps.sources[keep], ps.players, ps.meta)
    path = tmp_path_factory.mktemp("os") / "few.bgtd"
    traindata.save_positions(sub, path)
    return path


@pytest.fixture(scope="module")
def table6():
    return bearoff.build_one_sided(6)


def _train(out, positions, table, **kw):
    st = onesided.OneSidedSettings(min_points=6, hidden=8, rounds=2, iterations=2, epochs=1)
    return onesided.train(out, positions=[positions], table=table, init=kw.pop("init", "shipped"),
                          settings=st, progress=False, **kw)


def test_training_writes_the_net_with_it_and_an_interrupted_run_resumes_to_the_same_bits(
        few_races, table6, tmp_path, monkeypatch):
    table6.save(tmp_path / "t6.bgb")
    r = _train(tmp_path / "a.npz", few_races, tmp_path / "t6.bgb")
    assert len(r["history"]) == 4 and r["sides"] > 20
    a = netmod.load(tmp_path / "a.npz")
    assert a.one_sided["min_points"] == 6 and a.one_sided["w1"].shape == (onesided.INPUTS, 8)
    calls = {"n": 0}
    fit = onesided._fit

    def dies(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return fit(*args, **kw)

    monkeypatch.setattr(onesided, "_fit", dies)
    with pytest.raises(KeyboardInterrupt):
        _train(tmp_path / "b.npz", few_races, tmp_path / "t6.bgb")
    monkeypatch.setattr(onesided, "_fit", fit)
    _train(tmp_path / "b.npz", few_races, tmp_path / "t6.bgb", resume=True)
    b = netmod.load(tmp_path / "b.npz")
    for k in ("w1", "b1", "w2", "b2"):
        assert (a.one_sided[k] == b.one_sided[k]).all()


def test_the_cli_refuses_a_table_too_small_in_one_line(few_races, table6, tmp_path):
    table6.save(tmp_path / "t6.bgb")
    r = CliRunner().invoke(main, ["train", "one-sided", str(few_races), "-o", str(tmp_path / "x.npz"),
                                  "--table", str(tmp_path / "t6.bgb")])
    assert r.exit_code == 2                              # bad input, as a corrupt file
    assert "of 10 to 18 points" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "x.npz").exists()
    r = CliRunner().invoke(main, ["train", "one-sided", str(few_races), "--table", str(tmp_path / "t6.bgb")])
    assert r.exit_code == 2


#: sha256 of the shipped net's float64 values of the long races of
#: data/race/positions.bgtd (those the one-sided race net values, a checker
#: in the other side's home board included), with the tables
SHIPPED_LONG_RACES = "40b85f648631567c9d33c785614794dae33d0ad2ef41d34d3cd234430fdc7f46"


def test_the_shipped_net_values_long_races_with_its_pinned_one_sided_net():
    import hashlib

    ensure_tables()
    if bearoff_tables(required=False) is None or bearoff_tables()[0].points != 10:
        pytest.skip("needs the default 10-point race table")
    shipped = netmod.load(netmod.default_weights_path())
    assert shipped.one_sided is not None and shipped.one_sided["min_points"] == 10
    assert shipped.one_sided["w2"].shape[1] == onesided.HEADS * BINS
    ps = traindata.load_positions("data/race/positions.bgtd")
    b = ps.boards[ps.classes == 2]
    far = np.maximum(onesided._highest(b[:, 0, :24]), onesided._highest(b[:, 1, :24]))
    b = np.ascontiguousarray(b[far > 10])
    assert len(b) > 10_000 and (far >= onesided.FAR_POINT).sum() > 1_000
    p = shipped.evaluate_batch(b)
    assert hashlib.sha256(np.ascontiguousarray(p, "<f8").tobytes()).hexdigest() == SHIPPED_LONG_RACES


def test_a_run_from_the_init_nets_one_sided_net_starts_from_its_weights(few_races, table6, tmp_path):
    """--from-init: the first two distributions start as the init net's (the
    checksum of the init is part of the run's identity), the third seeded."""
    table6.save(tmp_path / "t6.bgb")
    init = netmod.random_net(hidden=16, seed=5)
    init.set_one_sided({**_one_sided(hidden=8), "min_points": 6})
    netmod.save(init, tmp_path / "init.npz")
    st = onesided.OneSidedSettings(min_points=6, hidden=8, rounds=1, iterations=1, epochs=1,
                                   from_init=True)
    r = onesided.train(tmp_path / "a.npz", positions=[few_races], table=tmp_path / "t6.bgb",
                       init=tmp_path / "init.npz", settings=st, progress=False)
    assert r["start"] == init.checksum()[:16]
    a = netmod.load(tmp_path / "a.npz")
    assert a.one_sided["w2"].shape == (8, 3 * BINS)
    # a few Adam steps from the start: close to it, far from a seeded net
    assert np.abs(a.one_sided["w1"] - init.one_sided["w1"]).max() < 0.1
    with pytest.raises(netmod.BgfastError, match="hidden units"):
        onesided.train(tmp_path / "b.npz", positions=[few_races], table=tmp_path / "t6.bgb",
                       init=tmp_path / "init.npz", progress=False,
                       settings=onesided.OneSidedSettings(min_points=6, hidden=16, from_init=True))
    with pytest.raises(netmod.BgfastError, match="distributions"):
        onesided.OneSidedSettings(heads=4)


def test_two_distributions_train_on_the_sides_with_no_checker_in_the_other_home_board(few_races):
    three = onesided.race_sides([few_races], 6)
    two = onesided.race_sides([few_races], 6, heads=2)
    assert onesided.far(three).any() and not onesided.far(two).any()
    assert len(two) == (~onesided.far(three)).sum()


def test_two_distributions_train_with_a_table_that_holds_some_of_the_sides(few_races, tmp_path):
    """The sides the table holds take its values as targets, in the run's
    own number of distributions."""
    bearoff.build_one_sided(7).save(tmp_path / "t7.bgb")
    st = onesided.OneSidedSettings(min_points=6, hidden=8, rounds=1, iterations=1, epochs=1, heads=2)
    r = onesided.train(tmp_path / "a.npz", positions=[few_races], table=tmp_path / "t7.bgb",
                       settings=st, progress=False)
    assert netmod.load(tmp_path / "a.npz").one_sided["w2"].shape == (8, 2 * BINS)
    sides = onesided.race_sides([few_races], 6, heads=2)
    assert r["sides"] == len(sides) and (onesided._highest(sides) == 7).any()
