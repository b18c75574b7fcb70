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


def _one_sided(hidden=8, seed=3):
    rng = np.random.default_rng(seed)
    return {"w1": (rng.standard_normal((onesided.INPUTS, hidden)) * 0.3).astype(np.float32),
            "b1": (rng.standard_normal(hidden) * 0.1).astype(np.float32),
            "w2": (rng.standard_normal((hidden, 2 * BINS)) * 0.3).astype(np.float32),
            "b2": (np.linspace(4, -4, 2 * BINS) + rng.standard_normal(2 * BINS)).astype(np.float32),
            "min_points": 10}


@pytest.fixture(scope="module")
def nets():
    """A small net without and with a (random) one-sided race net."""
    ensure_tables()
    if bearoff_tables(required=False) is None or bearoff_tables()[0].points != 10:
        pytest.skip("needs the default 10-point race table")
    plain = netmod.random_net(hidden=16, seed=5)
    return plain, netmod.Net(plain.copy().model, plain.meta, _one_sided())


def _board(onroll: dict, other: dict) -> np.ndarray:
    """A race board from {point: checkers} of each side (the rest borne off)."""
    b = np.zeros((2, 25), np.uint8)
    for row, side in ((1, onroll), (0, other)):
        for p, n in side.items():
            b[row, p - 1] = n
    return b


def _side_dists(side: np.ndarray, os_weights: dict):
    """(bear off, first off) float64[BINS] of one side, by the race table or
    the reference forward pass of the module docs (float64)."""
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
        return r, g
    p = {k: np.asarray(os_weights[k], np.float64) for k in ("w1", "b1", "w2", "b2")}
    z = np.tanh(onesided.encode(side[None]).astype(np.float64) @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    out = []
    for k in (0, 1):
        e = np.exp(z[0, k * BINS:(k + 1) * BINS] - z[0, k * BINS:(k + 1) * BINS].max())
        out.append(e / e.sum())
    return out


def _reference(board: np.ndarray, os_weights: dict) -> np.ndarray:
    """The race's probabilities for the side on roll: it wins when the
    opponent needs at least as many rolls; gammons for a side with 15."""
    mine, theirs = board[1, :24], board[0, :24]
    ri, gi = _side_dists(mine, os_weights)
    rj, gj = _side_dists(theirs, os_weights)
    at_least = lambda d: np.cumsum(d[::-1])[::-1]          # noqa: E731  P(>= k)
    p = np.zeros(5)
    p[0] = (ri * at_least(rj)).sum()
    if theirs.sum() == 15:
        p[1] = (ri * at_least(gj)).sum()
    if mine.sum() == 15:
        p[3] = (rj * np.append(at_least(gi)[1:], 0.0)).sum()
    p[1] = min(p[1], p[0])          # a gammon is a win (or a loss)
    p[3] = min(p[3], 1 - p[0])
    return p


LONG_RACES = [        # no contact: the rearmost checkers' points add up to at most 24
    # on roll beyond the table, the opponent inside it
    ({13: 2, 11: 3, 8: 4, 6: 3, 3: 3}, {6: 4, 5: 4, 4: 3, 2: 2, 1: 2}),
    # both beyond it
    ({13: 1, 12: 2, 11: 2, 9: 4, 6: 6}, {11: 3, 10: 2, 8: 3, 6: 5, 2: 2}),
    # the opponent beyond, the side on roll with checkers off
    ({5: 3, 3: 4, 1: 2}, {17: 2, 12: 4, 7: 4, 4: 5}),
]


@pytest.mark.parametrize("mine,theirs", LONG_RACES)
def test_a_long_race_is_valued_by_convolving_the_one_sided_nets_distributions(nets, mine, theirs):
    plain, with_os = nets
    b = _board(mine, theirs)
    got = with_os.evaluate_batch(b[None])[0]
    np.testing.assert_allclose(got, _reference(b, with_os.one_sided), atol=2e-5)
    assert np.abs(got - plain.evaluate_batch(b[None])[0]).max() > 1e-3


@pytest.mark.parametrize("mine,theirs", [
    ({19: 1, 12: 4, 6: 10}, {5: 3, 4: 12}),          # a checker on the 19-point: the race net
    ({9: 3, 6: 12}, {8: 5, 4: 10}),                  # inside the race table: the table
    ({20: 2, 6: 13}, {3: 15}),
])
def test_races_it_does_not_value_keep_the_race_net_or_the_table(nets, mine, theirs):
    plain, with_os = nets
    b = _board(mine, theirs)[None]
    assert (with_os.evaluate_batch(b) == plain.evaluate_batch(b)).all()


def test_without_tables_the_net_alone_values_every_race(nets):
    plain, with_os = nets
    b = np.stack([_board(m, t) for m, t in LONG_RACES])
    assert (with_os.evaluate_batch(b, tables=False) == plain.evaluate_batch(b, tables=False)).all()


def test_a_race_table_short_of_its_first_point_leaves_long_races_to_the_race_net(nets):
    from bgfast._evaluator import install_bearoff_tables

    plain, with_os = nets
    b = np.stack([_board(m, t) for m, t in LONG_RACES])
    before = with_os.evaluate_batch(b)
    try:
        install_bearoff_tables(one_sided=bearoff.build_one_sided(6))
        assert (with_os.evaluate_batch(b) == plain.evaluate_batch(b)).all()
    finally:
        install_bearoff_tables()
    assert (with_os.evaluate_batch(b) == before).all()


def test_the_plays_chosen_are_the_best_by_the_full_evaluation(nets):
    _, with_os = nets
    rng = np.random.default_rng(11)
    boards, dice = [], []
    for m, t in LONG_RACES:
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


def test_the_file_keeps_the_one_sided_net_and_its_checksum_covers_it(nets, tmp_path):
    plain, with_os = nets
    netmod.save(with_os, tmp_path / "os.npz")
    back = netmod.load(tmp_path / "os.npz")
    assert back.one_sided["min_points"] == 10
    b = np.stack([_board(m, t) for m, t in LONG_RACES])
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
    plain, _ = nets
    w = _one_sided()
    w["w2"] = w["w2"][:, :BINS]
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
            np.testing.assert_allclose(y[i, BINS:], want, atol=5e-5)


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
    assert "at least 10 points" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "x.npz").exists()
    r = CliRunner().invoke(main, ["train", "one-sided", str(few_races), "--table", str(tmp_path / "t6.bgb")])
    assert r.exit_code == 2


#: sha256 of the shipped net's float64 values of the long races of
#: data/race/positions.bgtd (those the one-sided race net values), with the tables
SHIPPED_LONG_RACES = "0481e688e5504317647b579862d0fd302b56c758f3def17aa3c98a1cb26dc190"


def test_the_shipped_net_values_long_races_with_its_pinned_one_sided_net():
    import hashlib

    ensure_tables()
    if bearoff_tables(required=False) is None or bearoff_tables()[0].points != 10:
        pytest.skip("needs the default 10-point race table")
    shipped = netmod.load(netmod.default_weights_path())
    assert shipped.one_sided is not None and shipped.one_sided["min_points"] == 10
    ps = traindata.load_positions("data/race/positions.bgtd")
    b = ps.boards[ps.classes == 2]
    far = np.maximum(onesided._highest(b[:, 0, :24]), onesided._highest(b[:, 1, :24]))
    b = np.ascontiguousarray(b[(far > 10) & (far < onesided.FAR_POINT)])
    assert len(b) > 10_000
    p = shipped.evaluate_batch(b)
    assert hashlib.sha256(np.ascontiguousarray(p, "<f8").tobytes()).hexdigest() == SHIPPED_LONG_RACES
