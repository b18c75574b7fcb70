"""Bear-off databases: indexing, move rules, one-sided and two-sided tables,
files, API and CLI.  gnubg's shipped tables (inside gnubg-nn) are the oracle;
small two-sided tables are also checked against a slow recursive reference."""
import functools
import json
import multiprocessing
import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import bgfast.bearoff as bo
from bgfast import _bearoff as K
from bgfast.cli import main
from bgfast.errors import DatabaseError, InvalidIdError, InvalidPositionError, MissingTableError
from bgfast.position import Position

def gnubg_file(gnubg_nn, name):
    path = Path(gnubg_nn.__file__).parent / "data" / name
    if not path.exists():
        pytest.skip(f"gnubg-nn has no {name}")
    return path


# ------------------------------------------------------------ reference rules

def _ref_single(c, p, d):
    """Result of moving one checker from point p (1-based) by d, or None
    (RULES.md "Bearing off")."""
    P = len(c)
    if c[p - 1] == 0:
        return None
    home = all(c[q] == 0 for q in range(6, P))
    if p > d:
        pass
    elif p == d:
        if not home:
            return None
    else:
        if not home or any(c[q] for q in range(p, P)):
            return None
    n = list(c)
    n[p - 1] -= 1
    if p > d:
        n[p - d - 1] += 1
    return tuple(n)


def ref_plays(c, d1, d2):
    """All legal results of a roll, by brute force over every order, with
    the must-use-both / must-use-the-higher rules."""
    c = tuple(int(x) for x in c)
    orders = [[d1] * 4] if d1 == d2 else [[d1, d2], [d2, d1]]
    found = []  # (result, dice used list)

    def rec(pos, dice, used):
        moved = False
        if dice:
            for p in range(1, len(pos) + 1):
                n = _ref_single(pos, p, dice[0])
                if n is not None:
                    moved = True
                    rec(n, dice[1:], used + [dice[0]])
        if not moved:
            found.append((pos, used))

    for order in orders:
        rec(c, order, [])
    most = max(len(u) for _, u in found)
    legal = [(r, u) for r, u in found if len(u) == most]
    if most == 1 and d1 != d2:
        hi = max(d1, d2)
        if any(u[0] == hi for _, u in legal):
            legal = [(r, u) for r, u in legal if u[0] == hi]
    return sorted({r for r, _ in legal})


def random_counts(rng, points, max_checkers, n):
    out = np.zeros((n, points), dtype=np.uint8)
    for row in out:
        k = rng.integers(1, max_checkers + 1)
        for _ in range(k):
            row[rng.integers(0, points)] += 1
    return out


# ------------------------------------------------------------------ indexing

def test_index_matches_gnubg_numbering(gnubg_nn):
    n = bo.num_positions(6, 15)
    assert n == 54264
    ref = np.array([(0,) * 6] + [gnubg_nn.bearoff_id_2_pos(i) for i in range(1, n)], dtype=np.uint8)
    assert np.array_equal(bo.position(np.arange(n), 6), ref)
    assert np.array_equal(bo.index(ref), np.arange(n))


@pytest.mark.parametrize("points", [1, 3, 8, 13])
def test_index_roundtrip(points):
    n = bo.num_positions(points, 15)
    rng = np.random.default_rng(points)
    idx = np.unique(np.concatenate([[0, 1, n - 1], rng.integers(0, n, 3000)]))
    counts = bo.position(idx, points)
    assert (counts.sum(axis=1) <= 15).all()
    assert np.array_equal(bo.index(counts), idx)
    # ordered by number of checkers first
    k = counts.sum(axis=1)
    assert (np.diff(k) >= 0).all()


def test_index_rejects_bad_counts():
    with pytest.raises(InvalidPositionError):
        bo.index([16, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError):
        bo.position(bo.num_positions(6, 15), 6)


@pytest.mark.parametrize("counts", [[1.5, 2, 0, 0, 0, 0], [0.999, 0, 0, 0, 0, 0], ["1", 0, 0, 0, 0, 0],
                                    [float("nan"), 0, 0, 0, 0, 0]])
def test_index_refuses_counts_that_are_not_whole_numbers(counts):
    with pytest.raises(InvalidPositionError, match="whole numbers"):
        bo.index(counts)


def test_whole_float_counts_and_indices_are_the_integers_they_name():
    assert bo.index([1.0, 2.0, 0, 0, 0, 0]) == bo.index([1, 2, 0, 0, 0, 0])
    assert np.array_equal(bo.position(34.0), bo.position(34))
    with pytest.raises(InvalidIdError, match="whole numbers"):
        bo.position(3.7)


# -------------------------------------------------------------- move rules

@pytest.mark.parametrize("points,checkers,n", [(6, 15, 150), (6, 4, 150), (8, 6, 150), (10, 7, 40)])
def test_successors_follow_the_rules(points, checkers, n):
    rng = np.random.default_rng(7 + points)
    table = K.single_moves(points, checkers, 1)
    for c in random_counts(rng, points, checkers, n):
        i = bo.index(c)
        for d1, d2, _ in K.rolls():
            ref = sorted(bo.index(np.array(r, dtype=np.uint8)) for r in ref_plays(c, d1, d2))
            assert K.successor_ranks(c, d1, d2) == ref, (c, d1, d2)
            assert K.roll_successors(points, *table, i, d1, d2) == ref, (c, d1, d2)


def test_bear_off_rule_examples():
    six = lambda *pts: np.array(pts, dtype=np.uint8)  # noqa: E731
    # 6-5 with checkers on 4 and 2: the 6 bears off the highest (4), 5 then the 2
    assert K.successor_ranks(six(0, 1, 0, 1, 0, 0), 6, 5) == [0]
    # a 6 with a checker on the 6-point and one on the 1-point
    got = {tuple(bo.position(i, 6)) for i in K.successor_ranks(six(1, 0, 0, 0, 0, 1), 6, 6)}
    assert got == {(0, 0, 0, 0, 0, 0)}
    # a 1 from a 2-checker position: bearing off is never forced
    got = {tuple(bo.position(i, 6)) for i in K.successor_ranks(six(1, 1, 0, 0, 0, 0), 2, 1)}
    assert got == {(0, 0, 0, 0, 0, 0), (1, 0, 0, 0, 0, 0)}
    # with a checker outside (8-point) nothing is borne off before it is home:
    # 2-1 plays 8/5, or 8/6 and then the 1 bears off the 1-point checker
    pos = np.array([1, 0, 0, 0, 0, 0, 0, 1], dtype=np.uint8)
    got = {tuple(int(x) for x in bo.position(i, 8)) for i in K.successor_ranks(pos, 2, 1)}
    assert got == {(1, 0, 0, 0, 1, 0, 0, 0), (0, 0, 0, 0, 0, 1, 0, 0)}


# ------------------------------------------------------------- one-sided

@pytest.fixture(scope="session")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("bgfast-cache")


@pytest.fixture(scope="session")
def os6(cache):
    return bo.default_one_sided(cache)


@pytest.fixture(scope="session")
def ts6(cache):
    return bo.default_two_sided(cache)


def _gnubg_dist(gnubg_nn, i):
    p = gnubg_nn.bearoff_probabilities(int(i))  # P(1 roll), P(2 rolls), ...
    out = np.zeros(40)
    out[1:1 + len(p)] = p
    return out


def _dense(table, i, gammon=False):
    d = table.distribution(int(i), gammon=gammon)
    out = np.zeros(40)
    out[:len(d)] = d[:40]
    return out


def test_gnubg_bd_reader_matches_gnubg_nn(gnubg_nn):
    g = bo.open(gnubg_file(gnubg_nn, "gnubg_os0.bd"))
    assert (g.points, g.checkers, g.source) == (6, 15, "gnubg")
    for i in range(1, 54264, 97):
        assert np.abs(_dense(g, i) - _gnubg_dist(gnubg_nn, i)).max() < 1e-6


def test_one_sided_agrees_with_gnubg(os6, gnubg_nn):
    """Per-roll probabilities agree to 1e-4 except at near-ties between plays,
    where gnubg's rounded values pick the other play (measured: 0.4% of
    positions, max difference 1.4e-3, expected rolls still within 5e-5).
    Means (and so EPCs) agree to 1e-4 on average; gnubg's 16-bit bins move
    its means by up to 2e-4."""
    g = bo.open(gnubg_file(gnubg_nn, "gnubg_os0.bd"))
    idx = np.arange(1, 54264, 5)
    mine_m, _ = os6.moments(idx)
    theirs_m, _ = g.moments(idx)
    assert np.abs(mine_m - theirs_m).max() < 3e-4
    assert np.abs(mine_m - theirs_m).mean() < 1e-4
    gm, _ = os6.moments(idx, gammon=True)
    tgm, _ = g.moments(idx, gammon=True)
    full = bo.position(idx, 6).sum(axis=1) == 15
    assert np.abs(gm[full] - tgm[full]).max() < 3e-4
    bad = 0
    for i in idx:
        err = np.abs(_dense(os6, i) - _gnubg_dist(gnubg_nn, i)).max()
        if err > 1e-4:
            bad += 1
            assert err < 5e-3
    assert bad < 0.01 * len(idx)
    # gammon distributions of 15-checker positions against gnubg's file
    gbad = 0
    for i in idx[full]:
        if np.abs(_dense(os6, i, True) - _dense(g, i, True)).max() > 1e-4:
            gbad += 1
    assert gbad < 0.01 * full.sum()


def _ref_one_sided(points, checkers):
    """Slow recursion: optimal play by expected rolls, then distributions."""
    n = bo.num_positions(points, checkers)
    rolls = K.rolls()

    @functools.lru_cache(maxsize=None)
    def dist(c):
        if sum(c) == 0:
            return (1.0,)
        acc = np.zeros(64)
        for d1, d2, w in rolls:
            best = None
            for r in ref_plays(c, d1, d2):
                d = np.array(dist(r))
                m = (np.arange(len(d)) * d).sum()
                if best is None or m < best[0] - 1e-12:
                    best = (m, d)
            acc[1:1 + len(best[1])] += w / 36.0 * best[1]
        return tuple(np.trim_zeros(acc, "b"))

    return [dist(tuple(int(x) for x in bo.position(i, points))) for i in range(n)]


def test_one_sided_outside_checkers_against_reference():
    table = bo.build_one_sided(8, 3)
    ref = _ref_one_sided(8, 3)
    for i, d in enumerate(ref):
        mine = table.distribution(i)
        L = max(len(mine), len(d))
        assert np.abs(np.pad(mine, (0, L - len(mine))) - np.pad(d, (0, L - len(d)))).max() < 1e-6


def test_one_sided_statistics(os6):
    c = [0, 0, 0, 0, 0, 15]
    d = os6.distribution(c)
    k = np.arange(len(d))
    assert d.sum() == pytest.approx(1.0, abs=1e-6)
    assert os6.mean(c) == pytest.approx((k * d).sum(), abs=1e-6)
    assert os6.variance(c) == pytest.approx((k * k * d).sum() - (k * d).sum() ** 2, abs=1e-5)
    assert os6.epc(c) == pytest.approx(os6.mean(c) * 49 / 6)
    # a single checker on the 1-point is off in one roll; with fewer than 15
    # checkers a checker is already off (gammon distribution: 0 rolls)
    assert os6.mean([1, 0, 0, 0, 0, 0]) == pytest.approx(1.0)
    assert os6.mean([1, 0, 0, 0, 0, 0], gammon=True) == 0.0
    assert os6.mean([0, 0, 0, 0, 0, 15], gammon=True) == pytest.approx(1.616, abs=1e-3)
    # vectorised
    idx = np.arange(1, 100)
    m, v = os6.moments(idx)
    assert m.shape == v.shape == (99,) and (m >= 1).all() and (v >= 0).all()
    with pytest.raises(MissingTableError):
        os6.mean([0, 0, 0, 0, 0, 0, 1])


def test_one_sided_refuses_too_many_points():
    with pytest.raises(DatabaseError, match=r"GiB"):
        bo.build_one_sided(14, 15)


def test_race_convolution_gammons(os6):
    # opponent has 15 checkers far back, roller nearly done: gammon is near sure
    probs = os6.race([2, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 15])
    assert probs[0] == pytest.approx(1.0)
    assert probs[1] > 0.99
    # mirrored: the roller is gammoned unless the first roll bears a checker
    # off: any 6, 4-2, 5-1, 3-3, 2-2 (17 of 36); the opponent is off next roll
    probs = os6.race([0, 0, 0, 0, 0, 15], [2, 0, 0, 0, 0, 0])
    assert probs[3] == pytest.approx(19 / 36, abs=1e-6)
    assert probs[0] == 0.0
    assert probs[1] == 0.0  # the opponent has already borne off checkers


def test_race_kernel_is_the_convolution_of_the_windows(os6):
    """The race kernel against the convolution written out in plain Python
    (dense distributions, the roller first, ties to the roller) on random
    pairs of the 15-checker table, gammons included."""
    rng = np.random.default_rng(5)
    i, j = rng.integers(1, os6.size, 400), rng.integers(1, os6.size, 400)
    i[:50] = j[50:100] = os6.index_of([0, 0, 0, 0, 0, 15])        # gammons possible

    def dense(idx, gammon):
        start, dist = (os6.start_g, os6.dist_g) if gammon else (os6.start_r, os6.dist_r)
        out = np.zeros(300)
        out[int(start[idx]):int(start[idx]) + os6.window] = dist[idx].astype(np.float64)
        return out

    def at_least(f, k):
        return sum(f[max(k, 0):])

    got = os6._race(i, j)
    for r, (a, b) in enumerate(zip(i.tolist(), j.tolist())):
        fr, fo = dense(a, False), dense(b, False)
        full_r = bo.position(a, 6).sum() == 15
        full_o = bo.position(b, 6).sum() == 15
        win = sum(fr[k] * at_least(fo, k) for k in range(300))
        wg = sum(fr[k] * at_least(dense(b, True), k) for k in range(300)) if full_o else 0.0
        lg = sum(fo[k] * at_least(dense(a, True), k + 1) for k in range(300)) if full_r else 0.0
        np.testing.assert_allclose(got[r], np.clip([win, wg, 0, lg, 0], 0, 1), rtol=0, atol=1e-12)
    one = np.ones(1, dtype=bool)
    with pytest.raises(IndexError):
        os6._race_counted(np.array([os6.size]), np.array([1]), one, one)


# ------------------------------------------------------------- two-sided

def _ref_two_sided(checkers, gammon_checkers=15):
    """Slow recursive reference: cubeless equity and the three no-double
    cubeful equities for every pair (gnubg indices).  Bearing off the last
    checker wins 2 (a gammon) against a side that still has
    ``gammon_checkers`` checkers; a pass always costs 1."""
    n = bo.num_positions(6, checkers)
    pos = [tuple(int(x) for x in bo.position(i, 6)) for i in range(n)]
    succ = {}
    for i in range(1, n):
        for d1, d2, w in K.rolls():
            succ[i, d1, d2] = [bo.index(np.array(r, dtype=np.uint8)) for r in ref_plays(pos[i], d1, d2)]
    import sys  # deep memoised recursion
    sys.setrecursionlimit(10000)

    @functools.lru_cache(maxsize=None)
    def nd(i, j, t):
        # t: 0 cubeless, 1 centred, 2 owned, 3 opponent owns
        total = 0.0
        for d1, d2, w in K.rolls():
            best = -9.0
            for k in succ[i, d1, d2]:
                if k == 0:
                    v = 2.0 if sum(pos[j]) == gammon_checkers else 1.0
                else:
                    v = -val(j, k, {0: 0, 1: 1, 2: 3, 3: 2}[t])
                best = max(best, v)
            total += w / 36.0 * best
        return total

    def val(i, j, t):
        e = nd(i, j, t)
        if t in (1, 2):
            e = max(e, min(2 * nd(i, j, 3), 1.0))
        return e

    return {(i, j): [nd(i, j, t) for t in range(4)] for i in range(1, n) for j in range(1, n)}


@pytest.mark.parametrize("checkers", [2, 3])
def test_two_sided_matches_recursive_reference(checkers):
    ref = _ref_two_sided(checkers)
    table = bo.build_two_sided(checkers, cubeful=True)
    keys = np.array(list(ref))
    vals = table.values(keys[:, 0], keys[:, 1])
    want = np.array(list(ref.values()))
    assert np.abs(vals - want).max() < 1e-6


@pytest.mark.parametrize("layout,tol", [("float32", 1e-6), ("int16", 3e-4)])
def test_gammons_match_recursive_reference(layout, tol):
    """The 15-checker table's gammon rule (a side with all its checkers
    loses double), exercised on 3-checker tables where 3 checkers count as
    'all'; int16 then uses the 15-checker scale (16383 per unit)."""
    ref = _ref_two_sided(3, gammon_checkers=3)
    table = bo.build_two_sided(3, cubeful=True, layout=layout, _gammon_checkers=3)
    if layout == "int16":
        assert table.scale == 16383.0
    keys = np.array(list(ref))
    vals = table.values(keys[:, 0], keys[:, 1])
    want = np.array(list(ref.values()))
    assert np.abs(vals - want).max() < tol
    assert want[:, 0].max() > 1.5  # gammons happen


def _ref_probabilities(checkers, gammon_checkers, table):
    """Slow recursive reference of the probability tables: the roller's
    winning chance W and gammon-winning chance X under the play that
    maximises the cubeless equity.  Plays are chosen by the table's own
    stored equities (first minimum of the opponent's in build order, as the
    solver does), so that plays of mathematically equal equity, which
    differ in W, are chosen alike; the equities themselves are checked
    against the recursive reference elsewhere."""
    n = bo.num_positions(6, checkers)
    pos = [tuple(int(x) for x in bo.position(i, 6)) for i in range(n)]
    inv = bo._build_order(checkers)[1]
    ii, jj = (x.ravel() for x in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    stored = table.values(ii, jj)[:, 0].reshape(n, n)

    def eq(i, j):
        return float(stored[i, j])

    @functools.lru_cache(maxsize=None)
    def wx(i, j):
        w = x = 0.0
        for d1, d2, p in K.rolls():
            succ = sorted({bo.index(np.array(r, dtype=np.uint8)) for r in ref_plays(pos[i], d1, d2)},
                          key=lambda k: inv[k])
            if 0 in succ:
                w += p / 36.0
                x += p / 36.0 * (sum(pos[j]) == gammon_checkers)
                continue
            k = min(succ, key=lambda k: eq(j, k))      # min is the first minimum
            wj, xj = wx(j, k)
            w += p / 36.0 * (1.0 - wj)
            x += p / 36.0 * (2.0 * wj - 1.0 + xj - eq(j, k))
        return w, x

    return {(i, j): (eq(i, j),) + wx(i, j) for i in range(1, n) for j in range(1, n)}


@pytest.mark.parametrize("layout,tol", [("float32", 2e-6), ("int16", 3e-4)])
def test_probability_tables_match_recursive_reference(layout, tol):
    """With gammons (3 checkers count as 'all' here, as 15 do in the full
    table) a cubeless table also solves W and X; probe gives the five
    probabilities, consistent with the equity."""
    table = bo.build_two_sided(3, layout=layout, _gammon_checkers=3)
    assert table.probabilities and table.ntables == 3
    ref = _ref_probabilities(3, 3, table)
    keys = np.array(list(ref))
    got = table.values(keys[:, 0], keys[:, 1])
    want = np.array(list(ref.values()))
    assert np.abs(got - want).max() < tol
    # and the equities are the plain (equity-only) solver's
    plain = _ref_two_sided(3, gammon_checkers=3)
    assert max(abs(plain[k][0] - e) for k, e in zip(ref, got[:, 0])) < tol
    assert want[:, 2].max() > 0.5 and (want[:, 1] < 1).any()      # gammons and losses happen
    # probe: the five probabilities, consistent with the stored equity
    boards = np.zeros((len(keys), 2, 25), dtype=np.uint8)
    boards[:, 1, :6] = bo.position(keys[:, 0], 6)
    boards[:, 0, :6] = bo.position(keys[:, 1], 6)
    res = table.probe_batch(boards)
    p = res["probs"]
    assert not np.isnan(p).any()
    np.testing.assert_allclose(2 * p[:, 0] - 1 + p[:, 1] - p[:, 3], res["equity"], atol=2 * tol)
    full_r = boards[:, 1].sum(axis=1) == 3
    full_o = boards[:, 0].sum(axis=1) == 3
    assert (p[~full_o, 1] == 0).all() and (p[~full_r, 3] == 0).all()
    assert (p[full_r & full_o, 3] > 0).any() and (p[full_r & full_o, 1] > 0).any()


def test_probability_tables_without_gammons_are_the_equity():
    # no side can be gammoned: the plain table's W is (E + 1) / 2
    plain = bo.build_two_sided(4, layout="float32")
    assert not plain.probabilities and plain.ntables == 1


def test_int16_layout_close_to_float32():
    a = bo.build_two_sided(5, cubeful=True, layout="float32")
    b = bo.build_two_sided(5, cubeful=True, layout="int16")
    n = a.size
    i, j = np.meshgrid(np.arange(1, n), np.arange(1, n))
    diff = np.abs(a.values(i.ravel(), j.ravel()) - b.values(i.ravel(), j.ravel()))
    assert diff.max() < 2e-4  # int16 step 3e-5, rounded once per value


def test_two_sided_6x6_agrees_with_gnubg(ts6, gnubg_nn):
    """Every pair of the 6x6 table: cubeless and the three cubeful equities.
    gnubg stores 16-bit values and differs from the exact values by up to
    1.3e-4 on a few pairs (its values are 1.1e-5 to 1.8e-5 lower on average,
    as if truncated); 99.9% agree to 1e-4."""
    g = bo.open(gnubg_file(gnubg_nn, "gnubg_ts0.bd"))
    assert g.cubeful and g.checkers == 6
    n = ts6.size
    i, j = (x.ravel() for x in np.meshgrid(np.arange(1, n), np.arange(1, n)))
    diff = np.abs(ts6.values(i, j) - g.values(i, j))
    assert diff.max() < 2e-4
    assert (diff < 1e-4).mean() > 0.999
    assert diff.mean() < 5e-5


def test_two_sided_agrees_with_gnubg_nn_probabilities(ts6, gnubg_nn, rng):
    boards = np.zeros((2000, 2, 25), dtype=np.uint8)
    for b in boards:
        for side in (0, 1):
            for _ in range(rng.integers(1, 7)):
                b[side, rng.integers(0, 6)] += 1
    res = ts6.probe_batch(boards)
    assert res["inside"].all()
    want = np.array([gnubg_nn.probabilities(b.tolist(), 0)[0] for b in boards])
    assert np.abs(res["probs"][:, 0] - want).max() < 1e-4
    assert np.allclose(res["equity"], 2 * res["probs"][:, 0] - 1)


def test_one_sided_convolution_close_to_exact(os6, ts6):
    """The race convolution assumes independent bear-offs; against the exact
    6x6 values its winning chances are off by at most 0.0139 (measured over
    all 851,929 pairs; mean 0.0009, 99th percentile 0.0063)."""
    n = ts6.size
    i, j = (x.ravel()[::7] for x in np.meshgrid(np.arange(1, n), np.arange(1, n)))
    exact = (ts6.values(i, j)[:, 0] + 1) / 2
    conv = os6.race(bo.position(i, 6), bo.position(j, 6))[:, 0]
    err = np.abs(conv - exact)
    assert err.max() < 0.015
    assert err.mean() < 0.0012


def test_cube_decisions(ts6):
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, 3] = 1  # roller: one checker on the 4-point
    b[0, 0] = 1  # opponent: one on the 1-point
    r = ts6.probe(Position(b))
    # only 2-1 misses; then the opponent is off
    assert r.probs[0] == pytest.approx(34 / 36, abs=1e-6)
    assert r.equity == pytest.approx(32 / 36, abs=1e-6)
    assert r.cubeful["centred"] == pytest.approx(1.0)  # double, opponent passes
    assert r.cubeful["owned"] == pytest.approx(1.0)
    assert r.cubeful["opponent_owned"] == pytest.approx(32 / 36, abs=1e-6)
    assert r.cubeful_no_double["centred"] == pytest.approx(32 / 36, abs=1e-6)
    # the opponent on roll (swap sides): cannot double a cube the roller owns
    r2 = ts6.probe(Position(b[::-1].copy()))
    assert r2.probs[0] == 1.0 and r2.cubeful["opponent_owned"] == pytest.approx(1.0)


# ------------------------------------------------------------- API

def test_probe_api(ts6, os6):
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, :6] = [1, 2, 0, 1, 0, 0]
    b[0, :6] = [0, 0, 2, 0, 1, 1]
    p = Position(b)
    r = ts6.probe(p)
    assert r.exact and 0 < r.probs[0] < 1
    assert ts6.get(p) == r
    init = Position.initial()
    with pytest.raises(MissingTableError):
        ts6.probe(init)
    with pytest.raises(KeyError):
        ts6.probe(init)
    assert ts6.get(init) is None and ts6.get(init, 5) == 5
    assert os6.get(init) is None
    r1 = os6.probe(p)
    assert not r1.exact and abs(r1.probs[0] - r.probs[0]) < 0.02
    # module-level probe: exact inside 6x6, race outside
    assert bo.probe(p, directory=ts6.path and Path(ts6.path).parent) == r
    b2 = b.copy()
    b2[1, :6] = [3, 3, 3, 2, 2, 2]
    assert not bo.probe(Position(b2), directory=Path(ts6.path).parent).exact
    batch = np.stack([b, Position.initial().board, b2])
    res = ts6.probe_batch(batch)
    assert res["inside"].tolist() == [True, False, False]
    assert res["probs"].shape == (3, 5) and res["cubeful"].shape == (3, 3)


def test_defaults_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("BGFAST_CACHE_DIR", str(tmp_path))
    assert bo.cache_dir() == tmp_path
    t = bo.default_two_sided()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["bearoff-ts-6x6-cubeful-v1.bgb", "bearoff-ts-6x6-cubeful-v1.bgb.checked"]
    path = tmp_path / files[0]
    mtime = path.stat().st_mtime_ns
    bo._DEFAULTS.clear()
    t2 = bo.default_two_sided()
    assert path.stat().st_mtime_ns == mtime
    assert np.array_equal(t.values([5], [7]), t2.values([5], [7]))
    # its checksum is checked once; a file changed since is checked again,
    # and a corrupt one is built anew
    good = path.read_bytes()
    want = np.array(t.values([5, 9], [7, 2]))
    bad = bytearray(good)
    bad[-3] ^= 0x40
    t.close()
    t2.close()
    path.write_bytes(bytes(bad))
    bo._DEFAULTS.clear()
    t3 = bo.default_two_sided()
    assert path.read_bytes() == good
    assert np.array_equal(t3.values([5, 9], [7, 2]), want)
    assert (tmp_path / files[1]).read_text() == f"{path.stat().st_size} {path.stat().st_mtime_ns}"


def _open_cached_after(barrier, directory, log, out):
    """A process's first use of a cache: the builder notes each build."""
    def builder(path):
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(0.5)                 # the other process asks meanwhile
        bo.build_one_sided(3, 15, path)
    barrier.wait()
    t = bo._cached("o3.bgb", builder, directory)
    out.put(float(np.asarray(t.distribution(500)).sum()))


def test_processes_starting_together_build_a_cached_table_once(tmp_path):
    # two workers opening a new cache at once: one builds, the other waits
    # for it and opens its file (both building the same file crashed one)
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    log = tmp_path / "builds.log"
    procs = [ctx.Process(target=_open_cached_after, args=(barrier, tmp_path, log, out))
             for _ in range(2)]
    for p in procs:
        p.start()
    sums = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert len(log.read_text().split()) == 1
    assert sums[0] == sums[1] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["builds.log", "o3.bgb", "o3.bgb.checked"]


# ------------------------------------------------------------- files

@pytest.fixture
def small_file(tmp_path):
    path = tmp_path / "t4.bgb"
    bo.build_two_sided(4, path, cubeful=True)
    return path


def test_file_roundtrip(small_file, tmp_path):
    mem = bo.build_two_sided(4, cubeful=True)
    with bo.open(small_file) as t:
        assert t.info()["checkers"] == 4 and t.cubeful
        assert np.array_equal(t.values(np.arange(1, 70), np.arange(2, 71)),
                              mem.values(np.arange(1, 70), np.arange(2, 71)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t4.bgb"]  # no temp files
    head = small_file.read_bytes()[:128]
    assert head[:8] == b"BGFBOFF\0"
    version, kind, points, checkers, layout, ntables = struct.unpack("<6H", head[8:20])
    assert (version, kind, points, checkers, layout, ntables) == (1, 2, 6, 4, 3, 4)
    os_path = tmp_path / "o3.bgb"
    t1 = bo.build_one_sided(3, 15, os_path)
    with bo.open(os_path) as t2:
        assert np.array_equal(t1.distribution(500), t2.distribution(500))


def _header_fields(path):
    return struct.unpack("<6H", Path(path).read_bytes()[8:20])


def _rewrite_checksums(data: bytearray) -> bytes:
    """Make the data and header checksums of a bgfast file right again."""
    import zlib

    data[64:68] = struct.pack("<I", zlib.crc32(bytes(data[128:])) & 0xFFFFFFFF)
    data[124:128] = struct.pack("<I", zlib.crc32(bytes(data[:124])) & 0xFFFFFFFF)
    return bytes(data)


def test_one_sided_files_are_packed_and_round_trip(tmp_path, monkeypatch):
    path = tmp_path / "o6.bgb"
    table = bo.build_one_sided(6, 15, path)
    assert _header_fields(path)[4] == bo.LAYOUT_PACKED
    windows = 2 * table.size * table.window * 4
    assert path.stat().st_size < windows / 3      # 2.9 MB instead of 13.9 MB
    with bo.open(path) as t:
        for name in ("start_r", "start_g", "dist_r", "dist_g"):
            assert np.array_equal(getattr(t, name), getattr(table, name)), name
        assert np.array_equal(t.moments(np.arange(table.size))[0],
                              table.moments(np.arange(table.size))[0])
    # tables over PACK_LIMIT keep memory-mapped windows, and those files open too
    monkeypatch.setattr(bo, "PACK_LIMIT", 0)
    path2 = tmp_path / "o6w.bgb"
    table.save(path2)
    assert _header_fields(path2)[4] == bo.LAYOUT_WINDOWS
    assert path2.stat().st_size == 128 + bo._one_sided_data_size(table.size, table.window)
    with bo.open(path2) as t:
        assert np.array_equal(t.dist_r, table.dist_r) and np.array_equal(t.dist_g, table.dist_g)


def test_corrupt_packed_file_is_refused(tmp_path):
    path = tmp_path / "o4.bgb"
    bo.build_one_sided(4, 15, path)
    n = bo.num_positions(4, 15)
    good = bytearray(path.read_bytes())
    # a value flipped: the checksum
    data = bytearray(good)
    data[-9] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(DatabaseError, match="checksum"):
        bo.open(path)
    # row lengths that do not add up to the data, checksums made right again
    data = bytearray(good)
    data[128 + 2 * n + 7] += 1
    path.write_bytes(_rewrite_checksums(data))
    with pytest.raises(DatabaseError, match="packed row lengths"):
        bo.open(path)
    # a row longer than the window
    data = bytearray(good)
    data[128 + 3 * n + 7] = 200
    path.write_bytes(_rewrite_checksums(data))
    with pytest.raises(DatabaseError, match="packed row lengths"):
        bo.open(path)
    # a data size the header cannot have
    data = bytearray(good[:-4])
    data[48:56] = struct.pack("<Q", len(data) - 128)
    path.write_bytes(_rewrite_checksums(data))
    with pytest.raises(DatabaseError, match="packed row lengths"):
        bo.open(path)


def test_one_sided_threads_give_identical_tables():
    for points, checkers in ((6, 15), (8, 6)):
        one = bo.build_one_sided(points, checkers, threads=1)
        two = bo.build_one_sided(points, checkers, threads=2)
        for name in ("start_r", "start_g", "dist_r", "dist_g"):
            assert np.array_equal(getattr(one, name), getattr(two, name)), (points, name)


@pytest.mark.parametrize("points", [1, 6, 8])
def test_rank_terms_give_the_index(points):
    """The point-term form of the index that the one-sided build uses for
    single-die moves equals gnubg's numbering for every position."""
    T, K_ = K._rank_terms(points)
    n = bo.num_positions(points, 15)
    c = bo.position(np.arange(n), points).astype(np.int64)
    m = np.cumsum(c[:, ::-1], axis=1)[:, ::-1]       # checkers on points >= p
    idx = K_[c.sum(axis=1)] + sum(T[p, m[:, p - 1], c[:, p - 1]] for p in range(1, points + 1))
    assert np.array_equal(idx, np.arange(n))


def test_truncated_file_is_refused(small_file):
    data = small_file.read_bytes()
    small_file.write_bytes(data[:-10])
    with pytest.raises(DatabaseError, match="truncated"):
        bo.open(small_file)
    small_file.write_bytes(data[:60])
    with pytest.raises(DatabaseError, match="truncated"):
        bo.open(small_file)


def test_corrupt_data_is_refused(small_file):
    data = bytearray(small_file.read_bytes())
    data[5000] ^= 0x40
    small_file.write_bytes(bytes(data))
    with pytest.raises(DatabaseError, match="checksum"):
        bo.open(small_file)


def test_corrupt_header_is_refused(small_file):
    data = bytearray(small_file.read_bytes())
    data[14] = 5  # checkers
    small_file.write_bytes(bytes(data))
    with pytest.raises(DatabaseError, match="header"):
        bo.open(small_file)
    small_file.write_bytes(b"NOTABASE" + bytes(data[8:]))
    with pytest.raises(DatabaseError, match="magic"):
        bo.open(small_file)


_FIELDS = ("magic", "version", "kind", "points", "checkers", "layout", "ntables", "window",
           "flags", "npos", "scale", "data_offset", "data_size", "shells_done", "data_crc")


def _rewrite_header(path, **fields):
    """Set header fields of a bgfast file and recompute the header checksum
    (what a deliberate edit does); ``pad`` = bytes written over the
    reserved ones."""
    import zlib

    raw = bytearray(Path(path).read_bytes())
    values = dict(zip(_FIELDS, bo.HEADER.unpack(bytes(raw[:128]))))
    pad = fields.pop("pad", None)
    values.update(fields)
    head = bytearray(bo.HEADER.pack(*(values[f] for f in _FIELDS), 0))
    head[68:124] = raw[68:124] if pad is None else pad.ljust(56, b"\0")
    head[124:128] = struct.pack("<I", zlib.crc32(bytes(head[:124])) & 0xFFFFFFFF)
    raw[:128] = head
    Path(path).write_bytes(bytes(raw))


@pytest.fixture(scope="module")
def header_files(tmp_path_factory):
    """One file of each kind the writers produce, as bytes: float32 cubeful
    two-sided, int16 cubeless (T = 1) and probability (T = 3) two-sided,
    a packed one-sided table and a one-sided build state."""
    d = tmp_path_factory.mktemp("headers")
    bo.build_two_sided(3, d / "f32.bgb", cubeful=True, layout="float32").close()
    bo.build_two_sided(3, d / "i16.bgb", layout="int16").close()
    bo.build_two_sided(3, d / "p16.bgb", layout="int16", _gammon_checkers=3).close()
    bo.build_one_sided(3, 15, d / "os.bgb").close()
    n = bo.num_positions(3, 15)
    size = bo._state_layout(n, bo.DEFAULT_WINDOW)[1]
    (d / "os.partial").write_bytes(
        bo._pack_header(bo.KIND_ONE_SIDED, 3, 15, bo.LAYOUT_BUILD, 2, bo.DEFAULT_WINDOW, 0, n,
                        0.0, size, 5, 0) + bytes(size))
    return {p.name: p.read_bytes() for p in d.iterdir()}


# (file, field edits, the field the error names); every edit keeps the checksums right
BAD_HEADERS = [
    ("f32.bgb", dict(scale=0.0), "scale"),
    ("f32.bgb", dict(scale=float("inf")), "scale"),
    ("f32.bgb", dict(scale=float("nan")), "scale"),
    ("f32.bgb", dict(scale=1.0000000000000002), "scale"),
    ("f32.bgb", dict(scale=-1.0), "scale"),
    ("f32.bgb", dict(scale=32767.0), "scale"),
    ("i16.bgb", dict(scale=16383.0), "scale"),
    ("i16.bgb", dict(scale=32767.5), "scale"),
    ("i16.bgb", dict(scale=1.0), "scale"),
    ("p16.bgb", dict(scale=32767.0), "scale"),
    ("f32.bgb", dict(kind=3), "kind"),
    ("f32.bgb", dict(points=7), "two-sided parameters"),
    ("f32.bgb", dict(checkers=0), "two-sided parameters"),
    ("f32.bgb", dict(checkers=16), "two-sided parameters"),
    ("f32.bgb", dict(layout=bo.LAYOUT_PACKED), "two-sided parameters"),
    ("f32.bgb", dict(ntables=2), "two-sided parameters"),
    ("f32.bgb", dict(window=32), "two-sided parameters"),
    ("f32.bgb", dict(flags=3), "flags"),
    ("f32.bgb", dict(flags=2), "flags"),
    ("f32.bgb", dict(npos=999), "number of positions"),
    ("f32.bgb", dict(data_offset=136), "data offset"),
    ("f32.bgb", dict(data_size=8), "data size"),
    ("f32.bgb", dict(shells_done=0), "shells solved"),
    ("f32.bgb", dict(shells_done=10 ** 6), "shells solved"),
    ("f32.bgb", dict(flags=0, data_crc=0, shells_done=10 ** 6), "shells solved"),
    ("f32.bgb", dict(flags=0, shells_done=3), "data checksum"),
    ("f32.bgb", dict(pad=b"\1"), "reserved bytes"),
    ("f32.bgb", dict(pad=b"\0" * 55 + b"\x80"), "reserved bytes"),
    ("os.bgb", dict(scale=1.0), "scale"),
    ("os.bgb", dict(scale=-0.0), "scale"),
    ("os.bgb", dict(scale=float("nan")), "scale"),
    ("os.bgb", dict(points=0), "one-sided parameters"),
    ("os.bgb", dict(points=25), "one-sided parameters"),
    ("os.bgb", dict(checkers=16), "one-sided parameters"),
    ("os.bgb", dict(ntables=1), "one-sided parameters"),
    ("os.bgb", dict(window=7), "one-sided parameters"),
    ("os.bgb", dict(window=65), "one-sided parameters"),
    ("os.bgb", dict(layout=bo.LAYOUT_INT16), "one-sided parameters"),
    ("os.bgb", dict(flags=0), "flags"),
    ("os.bgb", dict(layout=bo.LAYOUT_BUILD), "flags"),
    ("os.bgb", dict(shells_done=1), "pip groups solved"),
    ("os.bgb", dict(npos=7), "number of positions"),
    ("os.bgb", dict(pad=b"x"), "reserved bytes"),
    ("os.partial", dict(flags=1), "flags"),
    ("os.partial", dict(shells_done=3 * 15 + 2), "pip groups solved"),
    ("os.partial", dict(data_crc=1), "data checksum"),
    ("os.partial", dict(scale=2.0), "scale"),
    ("os.partial", dict(points=14, npos=bo.num_positions(14, 15)), "one-sided parameters"),
    ("os.partial", dict(data_size=8), "data size"),
]


@pytest.mark.parametrize("name,edit,field", BAD_HEADERS)
def test_every_header_field_is_checked(header_files, tmp_path, name, edit, field):
    """A header edited with its checksum recomputed opens only with values
    the writers produce (a scale of 0, inf or 1 + 2**-52 once opened and
    gave wrong values)."""
    path = tmp_path / name
    path.write_bytes(header_files[name])
    _rewrite_header(path, **edit)
    with pytest.raises(DatabaseError, match=rf"inconsistent header \({field}"):
        bo.open(path)


@pytest.mark.parametrize("name", ["f32.bgb", "i16.bgb", "p16.bgb", "os.bgb", "os.partial"])
def test_written_headers_pass_the_checks(header_files, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(header_files[name])
    _rewrite_header(path)                   # the same fields: the rewrite itself is sound
    assert path.read_bytes() == header_files[name]
    if name == "os.partial":
        with pytest.raises(DatabaseError, match=r"incomplete build \(5 pip groups solved\)"):
            bo.open(path)
    else:
        bo.open(path, verify=True).close()
    # the scales the writers use for these tables
    h = bo._parse_header(header_files[name][:128], name)
    assert (h.scale, h.ntables) == {"f32.bgb": (1.0, 4), "i16.bgb": (32767.0, 1),
                                    "p16.bgb": (16383.0, 3)}.get(name, (0.0, 2))


def test_missing_file(tmp_path):
    with pytest.raises(DatabaseError):
        bo.open(tmp_path / "nope.bgb")


def _killed_build(build, path, after):
    """Run ``build(path, progress)`` and interrupt it (as a kill would) at
    its ``after``-th progress report; return the reports and the .partial
    file it left, checked to be refused as a table."""
    calls = []

    def boom(done, total):
        calls.append(done)
        if len(calls) == after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build(path, boom)
    assert not path.exists()
    partial = Path(str(path) + ".partial")
    assert partial.exists()
    with pytest.raises(DatabaseError, match="incomplete"):
        bo.open(partial)
    return calls, partial


def test_killed_build_resumes(tmp_path):
    path = tmp_path / "t5.bgb"
    calls, partial = _killed_build(
        lambda p, cb: bo.build_two_sided(5, p, cubeful=True, progress=cb, checkpoint_seconds=0,
                                         block_work=20000), path, 3)
    seen = []
    t = bo.build_two_sided(5, path, cubeful=True, progress=lambda d, tot: seen.append(d),
                           block_work=20000)
    assert seen[0] > calls[0]  # resumed, not restarted
    assert not partial.exists()
    fresh = bo.build_two_sided(5, cubeful=True)
    n = fresh.size
    i, j = (x.ravel() for x in np.meshgrid(np.arange(1, n), np.arange(1, n)))
    assert np.array_equal(t.values(i, j), fresh.values(i, j))


def test_killed_one_sided_build_resumes(tmp_path):
    path = tmp_path / "o6.bgb"

    def build(p, cb):
        bo.build_one_sided(6, 15, p, progress=cb, checkpoint_seconds=0, threads=1)

    calls, partial = _killed_build(build, path, 4)
    seen = []
    t = bo.build_one_sided(6, 15, path, progress=lambda d, tot: seen.append(d), threads=2)
    full = []
    fresh = bo.build_one_sided(6, 15, progress=lambda d, tot: full.append(d))
    assert seen[0] > calls[-2] and len(seen) < len(full) - 2  # resumed, not restarted
    assert not partial.exists()
    for name in ("start_r", "start_g", "dist_r", "dist_g"):
        assert np.array_equal(getattr(t, name), getattr(fresh, name)), name
    # a state file of another table is not resumed from
    path.unlink()
    _killed_build(build, path, 4)
    partial.rename(tmp_path / "o5.bgb.partial")
    t5 = bo.build_one_sided(5, 15, tmp_path / "o5.bgb")
    assert np.array_equal(t5.dist_r, bo.build_one_sided(5, 15).dist_r)
    assert not (tmp_path / "o5.bgb.partial").exists()


# ------------------------------------------------------------- CLI

def test_cli_build_info_probe(tmp_path):
    runner = CliRunner()
    out = tmp_path / "c3.bgb"
    res = runner.invoke(main, ["bearoff", "build", "--two-sided", "6x3", "--cubeful",
                               "-o", str(out), "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["checkers"] == 3
    res = runner.invoke(main, ["bearoff", "info", str(out), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["cubeful"] is True
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, :6] = [1, 0, 1, 0, 0, 0]
    b[0, :6] = [0, 0, 2, 0, 0, 0]
    pid = Position(b).position_id()
    res = runner.invoke(main, ["bearoff", "probe", str(out), pid, "--json"])
    assert res.exit_code == 0
    d = json.loads(res.stdout)
    assert d["exact"] and d["cubeful"]["centred"] == pytest.approx(1.0)
    res = runner.invoke(main, ["bearoff", "probe", str(out), Position.initial().position_id()])
    assert res.exit_code == 1 and "outside" in res.output
    res = runner.invoke(main, ["bearoff", "build", "--two-sided", "7x3", "-o", str(out)])
    assert res.exit_code == 2
    res = runner.invoke(main, ["bearoff", "build", "--one-sided", "14", "-o", str(out)])
    assert res.exit_code == 2 and "GiB" in res.output
    res = runner.invoke(main, ["bearoff", "build", "--one-sided", "3", "-o", str(tmp_path / "o.bgb"),
                               "--quiet"])
    assert res.exit_code == 0, res.output


def test_build_checks_the_output_path_before_the_work(tmp_path, monkeypatch):
    """D13, D5: one line, no build, nothing left behind (no stray
    '..partial' for an empty path)."""
    def no_work(*a, **k):
        raise AssertionError("the build started")

    for name in ("build_one_sided", "solve_shells", "successor_table"):
        monkeypatch.setattr(bo._k, name, no_work)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for kind in (["--one-sided", "3"], ["--two-sided", "6x3"]):
        for out, message in [(tmp_path / "no" / "x.bgb", "does not exist"),
                             ("", "name given"), ("/proc/x.bgb", "no file can be created"),
                             (tmp_path / "f.txt" / "x.bgb", "is not a directory")]:
            (tmp_path / "f.txt").write_text("")
            r = runner.invoke(main, ["bearoff", "build", *kind, "-o", str(out)])
            assert r.exit_code == 2 and message in r.stderr, r.output
            assert r.stderr.count("\n") == 1 and r.stderr.startswith("Error: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]
    from bgfast.errors import OutputPathError
    with pytest.raises(OutputPathError):
        bo.build_one_sided(3, 15, tmp_path / "no" / "x.bgb")
    with pytest.raises(OutputPathError):
        bo.build_two_sided(3, tmp_path / "no" / "x.bgb")


def _shells_done(partial: Path) -> int:
    try:
        return bo._parse_header(partial.read_bytes()[:bo.HEADER_SIZE], partial).shells_done
    except (OSError, DatabaseError):            # not there yet, or caught mid-write
        return 0


@pytest.mark.parametrize("kind", [["--one-sided", "7"], ["--two-sided", "6x7"]])
def test_a_cli_build_killed_with_sigkill_resumes_to_the_same_file(tmp_path, kind, monkeypatch):
    """--checkpoint-seconds 0 saves after every group (one-sided) or block
    (two-sided); a real process killed with SIGKILL once a checkpoint is on
    disk, then run again, gives the file of an uninterrupted build, and the
    second run goes on from the checkpoint."""
    import signal
    import subprocess
    import time

    from procs import ROOT, bgfast, env

    out = tmp_path / "t.bgb"
    partial = Path(str(out) + ".partial")
    args = ["bearoff", "build", *kind, "-o", str(out), "--checkpoint-seconds", "0",
            "--threads", "1"]
    proc = subprocess.Popen(bgfast(*args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=ROOT, env=env())
    # past the first progress report (one-sided: every 8 pip groups) that a
    # resumed build skips
    least = 9 if kind[0] == "--one-sided" else 1
    done, deadline = 0, time.time() + 120
    while proc.poll() is None and time.time() < deadline and done < least:
        done = _shells_done(partial)
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert done >= least and not out.exists(), "the build should have been killed midway"
    # run again (in process, to see where it starts)
    from bgfast.cli import bearoff as cli_bearoff

    class Recorder:
        calls: list = []

        def __init__(self, *a, **k):
            pass

        def __call__(self, d, total=None):
            Recorder.calls.append(d)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

    monkeypatch.setattr(cli_bearoff, "Progress", Recorder)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    resumed, Recorder.calls = Recorder.calls, []
    assert not partial.exists()
    ref = tmp_path / "ref.bgb"
    r = CliRunner().invoke(main, ["bearoff", "build", *kind, "-o", str(ref)])
    assert r.exit_code == 0, r.output
    assert resumed[0] > Recorder.calls[0]              # went on, did not start again
    assert out.read_bytes() == ref.read_bytes()


def test_cli_reads_gnubg_files(gnubg_nn):
    runner = CliRunner()
    res = runner.invoke(main, ["bearoff", "info", str(gnubg_file(gnubg_nn, "gnubg_ts0.bd")), "--json"])
    assert res.exit_code == 0
    d = json.loads(res.stdout)
    assert d["source"] == "gnubg" and d["checkers"] == 6 and d["cubeful"]


@pytest.mark.slow
def test_two_sided_6x10_int16_builds(tmp_path):
    t = bo.build_two_sided(10, tmp_path / "t10.bgb")
    small = bo.build_two_sided(6)
    n = small.size
    # positions with <= 6 checkers have the same values in both tables
    i, j = (x.ravel() for x in np.meshgrid(np.arange(1, n), np.arange(1, n)))
    assert np.abs(t.values(i, j) - small.values(i, j)).max() < 3e-4


@pytest.mark.parametrize("dtype,scale", [(np.int16, 32767.0), (np.float32, 1.0)])
def test_parallel_shells_equal_serial(dtype, scale):
    offsets, succ = K.successor_table(3)
    n = offsets.shape[0] // 21
    winv = np.full(n, scale)
    serial = np.zeros((4, n * n), dtype=dtype)
    K.solve_shells(serial, n, offsets, succ, winv, scale, 0, n, 1)
    par = np.zeros((4, n * n), dtype=dtype)
    K.solve_shells(par, n, offsets, succ, winv, scale, 0, n, 2, chunk=7, parallel_from=1)
    assert np.array_equal(serial, par)


@pytest.mark.parametrize("dtype,scale,pscale", [(np.int16, 16383.0, 32767.0), (np.float32, 1.0, 1.0)])
def test_parallel_probability_shells_equal_serial(dtype, scale, pscale):
    offsets, succ = K.successor_table(3)
    n = offsets.shape[0] // 21
    counts = bo.position(bo._build_order(3)[0], 6).sum(axis=1)
    gam = (counts == 3).astype(np.float64)
    winv = (1.0 + gam) * scale
    serial = np.zeros((3, n * n), dtype=dtype)
    K.solve_shells(serial, n, offsets, succ, winv, scale, 0, n, 1, gam=gam, pscale=pscale)
    par = np.zeros((3, n * n), dtype=dtype)
    K.solve_shells(par, n, offsets, succ, winv, scale, 0, n, 2, chunk=7, parallel_from=1,
                   gam=gam, pscale=pscale)
    assert np.array_equal(serial, par) and serial[2].any()
    with pytest.raises(ValueError):
        K.solve_shells(par, n, offsets, succ, winv, scale, 0, n, 1)      # no gam


def test_probability_tables_round_trip_through_a_file(tmp_path):
    mem = bo.build_two_sided(3, layout="int16", _gammon_checkers=3)
    path = tmp_path / "p3.bgb"
    bo.build_two_sided(3, path, layout="int16", _gammon_checkers=3).close()
    with bo.open(path, verify=True) as f:
        assert f.ntables == 3 and f.probabilities and f.info()["probabilities"]
        n = f.size
        i, j = (x.ravel() for x in np.meshgrid(np.arange(1, n), np.arange(1, n)))
        assert np.array_equal(f.values(i, j), mem.values(i, j))
    raw = bytearray(path.read_bytes())
    raw[200] ^= 0xFF                                  # corrupt one value
    path.write_bytes(bytes(raw))
    with pytest.raises(bo.DatabaseError):
        bo.open(path, verify=True)


def test_two_sided_build_refuses_when_the_disk_is_too_small(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**6, 10**6 - 1000, 1000))
    with pytest.raises(bo.DatabaseError, match="GiB of disk"):
        bo.build_two_sided(4, tmp_path / "t4.bgb")
    assert not list(tmp_path.iterdir())                  # nothing left behind


def test_a_table_refuses_fractional_counts_and_indices(os6):
    with pytest.raises(InvalidPositionError, match="whole numbers"):
        os6.index_of([0.5, 0, 0, 0, 0, 0])
    with pytest.raises(InvalidPositionError, match="whole numbers"):
        os6.moments([1.5])
    assert os6.index_of([2.0, 0, 0, 0, 0, 0]) == os6.index_of([2, 0, 0, 0, 0, 0])
