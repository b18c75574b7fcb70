"""The net's optional feature groups: each input against a plain reading of
its definition, the layout of the inputs, nets widened with zero weights,
the weights files of nets with groups, and training with them."""
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from bgfast import _net, net as netmod, train as trainmod
from bgfast.errors import BgfastError
from bgfast.evaluate import equity
from bgfast.movegen import legal_plays_batch

from corpus import random_boards
from test_net import _forward_ref, _pos_board, _random_boards

ALL = (1 << len(netmod.GROUPS)) - 1
#: the groups of the shipped contact and crashed nets
FIVE = netmod.group_mask("contain,contact,anchors,hits,mobility")
#: the group of the shipped race net
OFF = netmod.group_mask("off")
#: the TD-trained net, which has no feature groups (the shipped net has them all)
TD_NET = str(Path(__file__).resolve().parents[1] / "data" / "net" / "td-net.npz")
#: the contact net after two rounds towards its 2-ply values (ROUNDS=2 tools/contact-net.sh)
TWO_ROUNDS = str(Path(__file__).resolve().parents[1] / "data" / "net" / "two-rounds.npz")
#: the contact net after four rounds (ROUNDS=4 tools/contact-net.sh)
FOUR_ROUNDS = str(Path(__file__).resolve().parents[1] / "data" / "net" / "four-rounds.npz")
#: round 6, with a crashed net (ROUNDS=6 tools/contact-net.sh)
ROUND_SIX = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-6.npz")
#: round 14, the crashed nets before crashed-4 (ROUNDS=14 tools/contact-net.sh)
ROUND_FOURTEEN = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-14.npz")
ROUND_FIFTEEN = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-15.npz")
#: round 16, the one-sided race net before its third distribution (ROUNDS=16 tools/contact-net.sh)
ROUND_SIXTEEN = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-16.npz")
#: round 17, the contact and crashed nets before its mean 1-ply/2-ply values (ROUNDS=17 tools/contact-net.sh)
ROUND_SEVENTEEN = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-17.npz")
#: round 13, a crashed net per side before crashed-3 (ROUNDS=13 tools/contact-net.sh)
ROUND_THIRTEEN = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-13.npz")
#: round 12, one crashed net (ROUNDS=12 tools/contact-net.sh)
ROUND_TWELVE = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-12.npz")
#: round 11, the plan nets before crashed-2 (ROUNDS=11 tools/contact-net.sh)
ROUND_ELEVEN = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-11.npz")
#: round 10, one contact net before the plan nets (ROUNDS=10 tools/contact-net.sh)
ROUND_TEN = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-10.npz")
#: round 9, the race net before the borne-off thermometer (ROUNDS=9 tools/contact-net.sh)
ROUND_NINE = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-9.npz")
#: round 8, the race net before the race table (ROUNDS=8 tools/contact-net.sh)
ROUND_EIGHT = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-8.npz")
#: round 5 with 256 hidden units (HIDDEN=256 ROUNDS=5 tools/contact-net.sh)
WIDE = str(Path(__file__).resolve().parents[1] / "data" / "net" / "wide-256.npz")


@pytest.fixture(scope="module")
def boards():
    """Boards from random play and random boards with many checkers on the bar."""
    return np.ascontiguousarray(np.concatenate([_random_boards(500, 7),
                                                random_boards(700, 11, bar_prob=0.8)]))


# --- plain readings of the definitions (bgfast._net, at net_features) -----
# Distances are those of the side X the inputs describe: its point i (index
# i of its row) is i + 1, the other side Y's point j is 24 - j, the bar 25.

def _held_by(row):
    """The points a row holds, in the other side's distances."""
    return {24 - j for j in range(24) if row[j] >= 2}


def _rearmost(row):
    return 25 if row[24] else max((i + 1 for i in range(24) if row[i]), default=0)


def _ref_contain(me, other):
    held = {t for t in _held_by(other) if t >= 7}
    fewest = 36
    for s in range(15, 25):
        front = {t for t in held if s - 12 <= t <= s - 1}
        if not front:
            continue
        f = min(front)

        def esc(path):                       # the landing points of one checker in turn
            for x in path:
                if x in front:
                    return False
                if x < f:
                    return True
            return False

        n = 0
        for d1 in range(1, 7):
            n += esc([s - k * d1 for k in range(1, 5)])
            for d2 in range(1, d1):
                n += 2 * (esc([s - d1]) or esc([s - d2]) or esc([s - d1, s - d1 - d2])
                          or esc([s - d2, s - d1 - d2]))
        fewest = min(fewest, n)
    c = (36 - fewest) / 36
    return [c, c * c]


def _ref_contact(me, other):
    r = 25 - _rearmost(other)
    pips = (sum(int(me[s - 1]) * (s - r) for s in range(r + 1, 25))
            + (int(me[24]) * (25 - r) if r < 25 else 0))
    n = sum(int(me[s - 1]) for s in range(r + 1, 25)) + (int(me[24]) if r < 25 else 0)
    return [pips / 100, n / 15]


def _ref_anchors(me, other):
    held = [i + 1 for i in range(24) if me[i] >= 2]
    back = [s for s in held if 13 <= s <= 24]
    return [float(any(19 <= s <= 24 for s in held)),
            (25 - min(back)) / 12 if back else 0.0,
            (max(back) - 12) / 12 if back else 0.0]


def _ref_hit_sets(hitter, target):
    """{(d1, d2): the blots of ``target`` that ``hitter`` (the side that
    rolls) can hit}, in the hitter's distances (so a blot at r loses r
    pips), by the rule of bgfast._net._hit_mask."""
    own = {i + 1 for i in range(24) if hitter[i]}
    blots = {24 - j for j in range(24) if target[j] == 1}
    blocked = {24 - j for j in range(24) if target[j] >= 2}
    nb = int(hitter[24])

    def opened(r):
        return 1 <= r <= 24 and r not in blocked

    def walk(froms, d, steps):
        hit = set()
        for r in froms:
            for k in range(1, steps + 1):
                if r - k * d in blots:
                    hit.add(r - k * d)
                if not opened(r - k * d):
                    break
        return hit

    out = {}
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            if d1 == d2:
                e = 25 - d1
                if nb == 0:
                    hit = walk(own, d1, 4)
                elif not opened(e):
                    hit = set()
                elif nb >= 4:
                    hit = {e} & blots
                else:
                    hit = ({e} & blots) | walk(own | {e}, d1, 4 - nb)
            elif nb >= 2:
                hit = {25 - d1, 25 - d2} & blots
            elif nb == 1:
                hit = set()
                for a, c in ((d1, d2), (d2, d1)):
                    e = 25 - a
                    if opened(e):
                        hit |= ({e} & blots) | {r - c for r in own | {e}} & blots
            else:
                hit = set()
                for r in own:
                    hit |= {r - d1, r - d2} & blots
                    if opened(r - d1) or opened(r - d2):
                        hit |= {r - d1 - d2} & blots
            out[d1, d2] = hit
    return out


def _ref_hits(me, other):
    loss = two = 0
    for (d1, d2), hit in _ref_hit_sets(other, me).items():
        w = 1 if d1 == d2 else 2
        loss += w * max(hit, default=0)
        two += w * (len(hit) >= 2)
    return [loss / (36 * 24), two / 36]


def _ref_mobility(me, other):
    sources = {i + 1 for i in range(24) if me[i]} | ({25} if me[24] else set())
    held = _held_by(other)
    pairs = blocked = 0
    for d in range(1, 7):
        n = sum(1 for s in sources if 1 <= s - d <= 24 and s - d not in held)
        pairs += n
        blocked += n == 0
    return [pairs / 60, blocked / 6]


def _ref_off(me, other):
    off = 15 - int(me.sum())
    return [1.0 if off > j else 0.0 for j in range(14)]


REFS = {"contain": _ref_contain, "contact": _ref_contact, "anchors": _ref_anchors,
        "hits": _ref_hits, "mobility": _ref_mobility, "off": _ref_off}


def test_every_group_has_a_reference():
    assert set(REFS) == set(netmod.GROUPS)


@pytest.mark.parametrize("group", list(netmod.GROUPS))
def test_group_inputs_match_their_definition(boards, group):
    """The kernel's bit-mask computation of each group equals a plain
    reading of the definition, side by side, on every board."""
    if group == "off":              # boards with 0 .. 15 checkers off on either side
        boards = np.concatenate([boards, _bearing_off(300, 5)])
    f = netmod.features(boards, group)
    assert f.shape == (len(boards), 10 + 2 * len(netmod.GROUPS[group]))
    for b, row in zip(boards, f):
        ref = REFS[group](b[1], b[0]) + REFS[group](b[0], b[1])
        np.testing.assert_allclose(row[10:], ref, rtol=1e-6, atol=1e-6)
    assert (f[:, 10:].std(axis=0) > 0).all()          # every input varies on these boards


def _bearing_off(n, seed):
    """Seeded boards whose sides have each borne off 0 .. 14 checkers: the
    rest on the home board, and now and then a checker of the player on roll
    further out (its points 7..18, where the other side has none)."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 2, 25), np.uint8)
    for i in range(n):
        for side in range(2):
            for _ in range(15 - int(rng.integers(0, 15))):
                far = side == 1 and rng.random() < 0.1
                out[i, side, int(rng.integers(6, 18)) if far else int(rng.integers(0, 6))] += 1
    return out


def test_hit_sets_agree_with_the_shot_count(boards):
    """The rolls whose hit set is not empty are the base input `shots`."""
    f = netmod.features(boards)
    for b, row in zip(boards[:400], f):
        for side, (me, other) in enumerate(((b[1], b[0]), (b[0], b[1]))):
            sets = _ref_hit_sets(other, me)
            n = sum((1 if d1 == d2 else 2) for (d1, d2), h in sets.items() if h)
            assert round(row[5 * side] * 36) == n


def test_a_prime_contains_and_an_anchor_is_seen():
    # the opponent holds its points 7..12 (a full prime: the roller's 13..18)
    # in front of the roller's anchor on its 20-point
    b = _pos_board({20: 2, 6: 5, 5: 4, 4: 4}, {7: 2, 8: 2, 9: 2, 10: 2, 11: 2, 12: 2, 6: 3})
    f = netmod.features(b[None], "contain,anchors")[0]
    assert f[10] == 1.0 and f[11] == 1.0              # no checker behind a 6-prime escapes
    assert f[14:17].tolist() == pytest.approx([1.0, 5 / 12, 8 / 12])  # home anchor, 20-point


def test_layout_of_the_inputs(boards):
    """The inputs are the base ones, then each group's (on-roll side first)
    in the order of GROUPS, whatever groups are chosen."""
    full = netmod.features(boards, ALL)
    assert full.shape[1] == len(netmod.input_names(ALL)) == _net.feature_count(ALL)
    np.testing.assert_array_equal(full[:, :10], netmod.features(boards))
    at = 10
    for g, names in netmod.GROUPS.items():
        one = netmod.features(boards, g)
        np.testing.assert_array_equal(one[:, 10:], full[:, at:at + 2 * len(names)])
        at += 2 * len(names)
    mixed = netmod.features(boards, "mobility,contain")       # order of GROUPS, not of the names
    np.testing.assert_array_equal(mixed, netmod.features(boards, ["contain", "mobility"]))
    assert netmod.input_names("hits")[10:] == ("pip_loss/0", "double_shots/0", "pip_loss/1",
                                               "double_shots/1")
    x = _net.encode(boards, ALL)
    np.testing.assert_array_equal(x[:, :196], _net.encode(boards)[:, :196])
    np.testing.assert_array_equal(x[:, 196:], full)


def test_bad_group_names_are_refused():
    with pytest.raises(BgfastError, match="unknown feature group"):
        netmod.group_mask("contain,nope")
    with pytest.raises(BgfastError, match="mask"):
        netmod.group_mask(1 << len(netmod.GROUPS))
    with pytest.raises(ValueError):
        _net.features(np.zeros((1, 2, 25), np.uint8), 1 << len(netmod.GROUPS))


#: (weights file, the groups each of its nets reads, its units,
#:  sha256 of its float64 outputs on _random_boards(2000, 123))
_PINNED_NETS = [
    (None, (FIVE, OFF, FIVE, FIVE, FIVE, FIVE, FIVE), (256, 128, 256, 256, 256, 256, 256),
     "193394b3751eee1c26b4f00106e32ab0d662b5447a90d5adca6c6b6cbb761081"),  # shipped
    (ROUND_SEVENTEEN, (FIVE, OFF, FIVE, FIVE, FIVE, FIVE, FIVE), (256, 128, 256, 256, 256, 256, 256),
     "06aa2ee0a9f75b86ab9bba428f54a1f3a03a98c03b2c8343f9c21eb7d136d47f"),
    (ROUND_SIXTEEN, (FIVE, OFF, FIVE, FIVE, FIVE, FIVE, FIVE), (256, 128, 256, 256, 256, 256, 256),
     "06aa2ee0a9f75b86ab9bba428f54a1f3a03a98c03b2c8343f9c21eb7d136d47f"),  # the same nets
    (ROUND_FIFTEEN, (FIVE, OFF, FIVE, FIVE, FIVE, FIVE, FIVE), (256, 128, 256, 256, 256, 256, 256),
     "06aa2ee0a9f75b86ab9bba428f54a1f3a03a98c03b2c8343f9c21eb7d136d47f"),  # the same, no one-sided net
    (ROUND_FOURTEEN, (FIVE, OFF, FIVE, FIVE, FIVE, FIVE, FIVE), (256, 128, 256, 256, 256, 256, 256),
     "0f9e2f8e489481976e2d40ce79a446e0823af7bf8c1588357bfb81feaef6a83d"),
    (ROUND_THIRTEEN, (FIVE, OFF, FIVE, FIVE, FIVE, FIVE, FIVE), (256, 128, 256, 256, 256, 256, 256),
     "f4f6f0c31c84b6573cd3906cccd2fca83de9385072c3c2262fd25011aa4090c3"),
    (ROUND_TWELVE, (FIVE, OFF, FIVE, FIVE, FIVE, FIVE), (256, 128, 256, 256, 256, 256),
     "4b875e82ca72503b839becaae6c13e022fc80dce0761fdfbf505e69e5bec2a6e"),
    (ROUND_ELEVEN, (FIVE, OFF, FIVE, FIVE, FIVE, FIVE), (256, 128, 256, 256, 256, 256),
     "e4444340465cb9fbbfb05421851d111295ee61a1ee2a6a5efcfc48d0fe591dfb"),
    (ROUND_TEN, (FIVE, OFF, FIVE), (256, 128, 256),
     "63d5f296e4db621aa5ba64a2d018c2eae89ca674d96316152982ac4e66ab85d8"),
    (ROUND_NINE, (FIVE, 0, FIVE), (256, 128, 256),
     "513e7e5801dcaee189e3ff4793729e34f8458df3be2861a8e28e87a2fbd78d8d"),
    (ROUND_EIGHT, (FIVE, 0, FIVE), (256, 128, 256),
     "0566caa18c2c3d117fd0afb3bafba9e89af62e16e33880c270682b99347504ba"),
    (ROUND_SIX, (FIVE, 0, FIVE), (256, 128, 256),
     "7ea1c1e0d6b65a1ee585b9bb4584fc32185793c4b213f7e592ec5232f74d0500"),
    (TD_NET, (0, 0), (128, 128), "f302eeabacd4b4395bd8a60c55e7be069ffaf9c30fcfcc2678d358b9a956d171"),
    (TWO_ROUNDS, (FIVE, 0), (128, 128),
     "13d2e82caa809f63d4fdf343e196a36ad172c0ddfac6e9afad5649a1bda3e8f7"),
    (FOUR_ROUNDS, (FIVE, 0), (128, 128),
     "6f4ec72adf65fde30dee57165a91ab760a32dbaf4d974d71337966787a4b2228"),
    (WIDE, (FIVE, 0), (256, 128), "0d5ef552d43700163c58f1893904e1391b57d5c2c492d2ac0d696a254cc82c70"),
]


@pytest.mark.parametrize("path,groups,units,digest", _PINNED_NETS,
                         ids=[Path(p).stem if p else "shipped" for p, *_ in _PINNED_NETS])
def test_the_nets_outputs_are_pinned_bit_for_bit(path, groups, units, digest):
    """The outputs of the shipped net (round 18: 256 units; a crashed net
    per side crashed and three contact plan nets; the five computed feature
    groups in its contact, crashed and plan nets, the borne-off thermometer
    alone in its race net), of round 17's, 16's and 15's nets (round 15's
    contact and crashed nets, before round 18's training towards round 17's
    mean 1-ply/2-ply values), of round 14's and round 13's nets (the same
    nets, their crashed nets before rounds 15 and 14), of round 12's net (one
    crashed net), of round 11's net (the nets of round 12, before round 12's
    training), of round 10's net (one contact net), of round 9's net (the
    same contact and crashed nets, no group in the race net), of round 8's
    net (the same contact and crashed nets, the race net before the race
    table's values), of round 6's net (its crashed net before round 7), of
    the TD-trained net (no group), of the two- and four-round nets and of the
    256-unit net without a crashed net on seeded boards, bit for bit (sha256
    of the float64 outputs): a change to the kernel's arithmetic updates the
    digests knowingly."""
    b = _random_boards(2000, 123)
    net = netmod.load(path or netmod.default_weights_path())
    assert net.layout == netmod.layout_of(np.bitwise_or.reduce(groups))
    assert net.model.read_groups == groups and net.model.read_hidden == units
    p = net.evaluate_batch(b, tables=False)
    assert hashlib.sha256(np.ascontiguousarray(p).tobytes()).hexdigest() == digest


def test_the_shipped_net_values_alike_at_odd_and_even_plies():
    """Round 17's net, trained towards its own 2-ply values, values the
    side on roll higher at 1 ply than at 0 (docs/training.md, "The side on
    roll at odd and even plies"); trained towards the mean of its 1-ply and
    2-ply values, the shipped net's contact and crashed nets lose that lean."""
    from bgfast import traindata

    ps = traindata.load_positions(Path(__file__).resolve().parents[1] / "data" / "training"
                                  / "selfplay-7.bgtd")
    nets = {"round 17": netmod.load(ROUND_SEVENTEEN), "shipped": netmod.load(netmod.default_weights_path())}
    for cls, round17_above in (("contact", 0.01), ("crashed", 0.015)):
        b = np.ascontiguousarray(traindata.select_classes(ps, (cls,)).boards[:300])
        swing = {}
        for name, net in nets.items():
            swing[name] = float(np.mean(equity(net.evaluate_plies(b, 1))
                                        - equity(net.evaluate_plies(b, 0))))
        assert swing["round 17"] > round17_above, (cls, swing)
        assert abs(swing["shipped"]) < 0.01, (cls, swing)


def _assert_plays_alike(a, b, boards, seed):
    """Nets ``a`` and ``b`` give the same bits on ``boards``, with and
    without the bear-off tables, and choose the same plays for seeded rolls."""
    for tables in (False, True):
        np.testing.assert_array_equal(a.evaluate_batch(boards, tables=tables),
                                      b.evaluate_batch(boards, tables=tables))
    dice = np.random.default_rng(seed).integers(1, 7, size=(len(boards), 2)).astype(np.int64)
    for x, y in zip(a.choose(boards, dice), b.choose(boards, dice)):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("groups", ["contain", "hits", "anchors,mobility", ALL])
def test_a_widened_net_plays_as_the_narrow_one(boards, groups):
    narrow = netmod.load(TD_NET)
    wide = netmod.widen(narrow, groups)
    assert wide.groups == netmod.group_mask(groups)
    assert wide.model.w1.shape[1] == 196 + _net.feature_count(wide.groups)
    _assert_plays_alike(wide, narrow, boards[:300], 4)
    np.testing.assert_array_equal(wide.evaluate_plies(boards[:4], 1),
                                  narrow.evaluate_plies(boards[:4], 1))


def test_a_net_whose_group_rows_are_zero_skips_the_groups():
    """The race net of a net widened for its contact net has zero group rows:
    it skips computing them, with the outputs of the full dense forward pass;
    with its group rows back it reads them again."""
    from bgfast.position import PositionClass, classify_boards

    n = netmod.random_net(hidden=8, seed=2, scale=0.5, groups=ALL)
    assert n.model.read_groups == (ALL, ALL)
    a = n.arrays()
    w1 = a["w1"].copy()
    w1[1, 206:] = 0.0
    m = netmod.Net(_net.Model(w1, a["b1"], a["w2"], a["b2"], ALL), {})
    assert m.model.read_groups == (ALL, 0)
    b = _random_boards(2000, 17)
    race = classify_boards(b) != PositionClass.CONTACT
    assert 100 < race.sum() < len(b) - 100

    def encode(board):
        return _net.encode(np.ascontiguousarray(board[None]), ALL)[0]

    got = m.evaluate_batch(b, tables=False)
    np.testing.assert_allclose(got, _forward_ref(m, b, encode), atol=2e-5)
    w1[1, 206:] = a["w1"][1, 206:]             # the race net's own group rows back
    r = netmod.Net(_net.Model(w1, a["b1"], a["w2"], a["b2"], ALL), {})
    assert r.model.read_groups == (ALL, ALL)
    again = r.evaluate_batch(b, tables=False)
    np.testing.assert_allclose(again[race], _forward_ref(r, b[race], encode), atol=2e-5)
    assert np.abs(again[race] - got[race]).max() > 1e-3
    np.testing.assert_array_equal(again[~race], got[~race])


def test_the_off_group_is_folded_into_the_slot_tables():
    """A race net that reads the borne-off thermometer (and no other group)
    computes no group per board: the thermometer's rows are added to the
    borne-off slot's rows of the tables.  Its outputs are those of the dense
    forward pass, and the plays it chooses (evaluated as changes from the
    board before them, bearing off included) are the best ones."""
    n = netmod.widen(netmod.random_net(hidden=16, seed=4, scale=0.5, groups=FIVE), "off")
    a = n.arrays()
    off = netmod.group_rows(n.groups)[-1]
    assert off[0] == len(netmod.GROUPS) - 1 and off[2] == a["w1"].shape[1]
    a["w1"][1, off[1]:off[2]] = np.random.default_rng(8).normal(0, 1.5, (28, 16))
    a["w1"][1, netmod.INPUTS:off[1]] = 0.0          # the race net reads the thermometer alone
    m = netmod.Net(_net.Model(a["w1"], a["b1"], a["w2"], a["b2"], n.groups), {})
    assert m.model.read_groups == (FIVE, netmod.group_mask("off"))
    b = _bearing_off(400, 9)
    b = b[b.sum(axis=2).min(axis=1) > 0]

    def encode(board):
        return _net.encode(np.ascontiguousarray(board[None]), m.groups)[0]

    got = m.evaluate_batch(b, tables=False)
    np.testing.assert_allclose(got, _forward_ref(m, b, encode), atol=2e-5)
    assert np.abs(got - n.evaluate_batch(b, tables=False)).max() > 0.05   # the rows count
    _assert_chooses_the_best_play(m, b, 3)


def test_widening_keeps_the_weights_of_groups_a_net_has():
    n = netmod.random_net(hidden=6, seed=1, scale=0.5, groups="contact,mobility")
    w = netmod.widen(n, "contain,hits")
    assert w.groups == netmod.group_mask("contain,contact,hits,mobility")
    a, b = n.arrays()["w1"], w.arrays()["w1"]
    np.testing.assert_array_equal(b[:, :206], a[:, :206])
    np.testing.assert_array_equal(b[:, 206 + 4:206 + 8], a[:, 206:210])     # contact
    np.testing.assert_array_equal(b[:, 206 + 12:], a[:, 210:])              # mobility
    assert not b[:, 206:210].any() and not b[:, 214:218].any()              # contain, hits
    np.testing.assert_array_equal(w.evaluate_batch(_random_boards(200, 3), tables=False),
                                  n.evaluate_batch(_random_boards(200, 3), tables=False))
    assert netmod.widen(w, "hits").arrays()["w1"].shape == b.shape


@pytest.fixture(scope="module")
def gnet():
    """A random net with every group and large weights (spread-out outputs)."""
    return netmod.random_net(hidden=20, seed=9, scale=0.5, groups=ALL)


def test_the_forward_pass_with_groups_matches_numpy(boards, gnet):
    from bgfast.position import PositionClass, classify_boards

    boards = boards[boards.sum(axis=2).min(axis=1) > 0]     # games not over
    a = gnet.arrays()
    x = _net.encode(boards, ALL).astype(np.float64)
    k = np.where(classify_boards(boards) == PositionClass.CONTACT, 0, 1)
    got = gnet.evaluate_batch(boards, tables=False)
    for net in (0, 1):
        sel = k == net
        h = 1 / (1 + np.exp(-(x[sel] @ a["w1"][net] + a["b1"][net])))
        p = 1 / (1 + np.exp(-(h @ a["w2"][net] + a["b2"][net])))
        assert np.abs(got[sel, 0] - p[:, 0]).max() < 2e-5
    assert got[:, 0].std() > 0.02
    np.testing.assert_array_equal(gnet.evaluate_batch(boards, nthreads=2), gnet.evaluate_batch(boards))
    np.testing.assert_array_equal(gnet.evaluate_batch(boards[:50]),
                                  np.array([gnet.evaluate_batch(b[None])[0] for b in boards[:50]]))


def _assert_chooses_the_best_play(net, boards, seed):
    """``net.choose`` (the plays of a roll evaluated as changes from the
    board before it) picks, for seeded rolls, a play that the full
    evaluation of every play ranks best."""
    dice = np.random.default_rng(seed).integers(1, 7, size=(len(boards), 2)).astype(np.int64)
    counts, res = net.choose(boards, dice, tables=False)
    offs, allres = legal_plays_batch(boards, dice)
    for i in np.flatnonzero(counts > 0):
        cand = allres[offs[i]:offs[i + 1]]
        eq = -equity(net.evaluate_batch(cand, tables=False))
        j = int(np.flatnonzero((cand == res[i]).all(axis=(1, 2)))[0])
        assert eq[j] >= eq.max() - 1e-5


def test_the_incremental_choice_with_groups_is_the_best_play(boards, gnet):
    _assert_chooses_the_best_play(gnet, boards[:150], 2)


def test_searches_in_a_row_give_the_bits_of_separate_calls(boards, gnet):
    """The 21 rolls of a 1-ply value search from one board, one after
    another, and keep its hidden sums; a batch's next board starts afresh.
    Sums kept from another board would still give the right plays (every
    play is evaluated as a change from the kept board) but other rounding:
    so the values, bit for bit, and the plays must be those of one call per
    board, each with a new work space."""
    sub = np.ascontiguousarray(boards[:60])
    sub = sub[sub.sum(axis=2).min(axis=1) > 0]
    for plies in (1, 2):
        batch = gnet.evaluate_plies(sub, plies, tables=False)
        for i in range(len(sub)):
            assert np.array_equal(gnet.evaluate_plies(sub[i:i + 1], plies, tables=False)[0], batch[i])
    rolls = [(d1, d2) for d1 in range(1, 7) for d2 in range(1, d1 + 1)]
    rep = np.ascontiguousarray(np.repeat(sub[:20], len(rolls), axis=0))
    dice = np.array(rolls * 20, dtype=np.int64)
    counts, res = gnet.choose(rep, dice, plies=1, tables=False)
    for i in range(len(rep)):
        c1, r1 = gnet.choose(rep[i:i + 1], dice[i:i + 1], plies=1, tables=False)
        assert c1[0] == counts[i] and np.array_equal(r1[0], res[i])


def test_a_learning_step_updates_the_group_rows_as_numpy_does(boards, gnet):
    """One cross-entropy step of the kernel (Model.learn) on one board equals
    the numpy gradient step, the feature groups' rows included."""
    from bgfast.position import PositionClass, classify_boards

    b = boards[[int(np.flatnonzero(classify_boards(boards) == PositionClass.CONTACT)[0])]]
    n = gnet.copy()
    a = n.arrays()
    t = np.array([[0.7, 0.2, 0.02, 0.1, 0.01]])
    alpha = 0.05
    x = _net.encode(b, ALL)[0].astype(np.float64)
    w1, b1, w2, b2 = (a[k][0].astype(np.float64) for k in ("w1", "b1", "w2", "b2"))
    z = 1 / (1 + np.exp(-(x @ w1 + b1)))
    d = alpha * (t[0] - 1 / (1 + np.exp(-(z @ w2 + b2))))
    dh = (w2 @ d) * z * (1 - z)
    n.model.learn(b, t, alpha)
    after = n.arrays()
    np.testing.assert_allclose(after["w1"][0], w1 + np.outer(x, dh), atol=1e-6)
    np.testing.assert_allclose(after["b2"][0], b2 + d, atol=1e-6)
    assert np.abs(np.outer(x, dh)[206:]).max() > 1e-4            # the groups' rows moved


def test_files_of_nets_with_groups(tmp_path, gnet, boards):
    path = tmp_path / "g.npz"
    netmod.save(gnet, path)
    back = netmod.load(path)
    assert back.groups == ALL and back.layout == netmod.layout_of(ALL)
    assert back.layout == "td4-196+f10+contain+contact+anchors+hits+mobility+off"
    np.testing.assert_array_equal(back.evaluate_batch(boards), gnet.evaluate_batch(boards))
    z = dict(np.load(path))
    for name, layout, msg in (("order.npz", "td4-196+f10+hits+contain", "input layout"),
                              ("unknown.npz", "td4-196+f10+foo", "input layout"),
                              ("fewer.npz", "td4-196+f10+contain", "w1 has shape"),
                              ("base.npz", netmod.LAYOUT, "w1 has shape")):
        with open(tmp_path / name, "wb") as f:
            np.savez(f, **{**z, "layout": np.str_(layout)})
        with pytest.raises(netmod.NetFileError, match=msg):
            netmod.load(tmp_path / name)


def test_td_training_with_groups_is_deterministic_and_resumable(tmp_path):
    init = netmod.random_net(hidden=8, seed=3)
    kw = dict(seed=5, alpha=0.1, lam=0.7, round_games=8, progress=False, init=init,
              features="contain,hits")
    trainmod.train(tmp_path / "a.npz", 32, threads=1, **kw)
    trainmod.train(tmp_path / "b.npz", 32, threads=2, **kw)
    trainmod.train(tmp_path / "c.npz", 16, threads=1, **kw)
    trainmod.train(tmp_path / "c.npz", 32, threads=2, resume=True, **{**kw, "features": None})
    a, b, c = (netmod.load(tmp_path / f"{x}.npz") for x in "abc")
    assert a.layout == "td4-196+f10+contain+hits"
    for k, v in a.arrays().items():
        np.testing.assert_array_equal(v, b.arrays()[k])
        np.testing.assert_array_equal(v, c.arrays()[k])
    assert np.abs(a.arrays()["w1"][:, 206:]).max() > 0     # the new rows learned
    assert a.meta["widened_from"]["layout"] == netmod.LAYOUT


def test_supervised_training_with_groups(tmp_path):
    from test_train_supervised import _boards, _labels

    lab = _labels(_boards(games=4))
    r = trainmod.fit(lab, tmp_path / "s.npz", init=TD_NET, features="hits,contain", epochs=2,
                     batch=32, val_fraction=0.25, progress=False)
    assert r["settings"]["features"] == "contain,hits"
    n = netmod.load(tmp_path / "s.npz")
    assert n.layout == "td4-196+f10+contain+hits"
    assert np.abs(n.arrays()["w1"][0, 206:]).max() > 0
    # stopped and resumed from its checkpoint (the groups named in any order): the same net
    trainmod.fit(lab, tmp_path / "t.npz", init=TD_NET, features="contain,hits", epochs=2,
                 batch=32, val_fraction=0.25, progress=False, max_steps=3)
    r2 = trainmod.fit(lab, tmp_path / "t.npz", resume=True, features="hits,contain", progress=False)
    assert json.dumps(r2["nets"], sort_keys=True) == json.dumps(r["nets"], sort_keys=True)
    np.testing.assert_array_equal(netmod.load(tmp_path / "t.npz").arrays()["w1"], n.arrays()["w1"])
    with pytest.raises(BgfastError, match="features"):
        trainmod.fit(lab, tmp_path / "t.npz", resume=True, features="hits", progress=False)


def test_a_net_given_more_hidden_units_plays_as_before(boards):
    narrow = netmod.load(TD_NET)
    wide = netmod.add_hidden(narrow, 192, seed=3)
    assert wide.hidden == 192 and narrow.hidden == 128
    a, w = narrow.arrays(), wide.arrays()
    np.testing.assert_array_equal(w["w1"][:, :, :128], a["w1"])
    assert (w["w2"][:, 128:] == 0).all() and (w["b1"][:, 128:] == 0).all()
    assert np.abs(w["w1"][:, :, 128:]).max() <= 0.1 and w["w1"][:, :, 128:].std() > 0.03
    _assert_plays_alike(wide, narrow, boards[:300], 5)
    assert wide.model.read_hidden == (128, 128)      # the added units are not computed
    # seeded: the same seed gives the same weights, another seed others
    assert netmod.add_hidden(narrow, 192, seed=3).arrays()["w1"].tobytes() == w["w1"].tobytes()
    assert netmod.add_hidden(narrow, 192, seed=4).arrays()["w1"].tobytes() != w["w1"].tobytes()
    assert wide.meta["hidden_added"]["from"] == 128
    # a net that skips its groups (the race net) keeps skipping them
    four = netmod.load(FOUR_ROUNDS)
    assert four.model.read_groups == (FIVE, 0)
    assert netmod.add_hidden(four, 136).model.read_groups == (FIVE, 0)
    # so do weights on the groups' rows of units it does not compute
    a = netmod.add_hidden(four, 192).arrays()
    a["w1"][1, netmod.INPUTS:, 128:] = 0.25
    idle = netmod.Net(_net.Model(a["w1"], a["b1"], a["w2"], a["b2"], FIVE), {})
    assert idle.model.read_groups == (FIVE, 0) and idle.model.read_hidden == (128, 128)
    _assert_plays_alike(idle, four, boards[:300], 6)
    for bad in (64, netmod.MAX_HIDDEN + 1):
        with pytest.raises(BgfastError, match="hidden units"):
            netmod.add_hidden(narrow, bad)


@pytest.mark.parametrize("keep", [1, 37, 40, 127])
def test_units_without_output_weights_are_not_computed(boards, keep):
    """A net evaluates only up to its last unit with a nonzero output weight
    (in blocks of 8), with the same bits as the net cut to those units."""
    a = netmod.load(TD_NET).arrays()
    w2 = a["w2"].copy()
    w2[:, keep:] = 0.0
    full = netmod.Net(_net.Model(a["w1"], a["b1"], w2, a["b2"], 0), {})
    cut = -(-keep // 8) * 8
    assert full.model.read_hidden == (cut, cut)
    short = netmod.Net(_net.Model(a["w1"][:, :, :cut], a["b1"][:, :cut], w2[:, :cut], a["b2"], 0), {})
    assert short.model.read_hidden == (cut, cut)
    _assert_plays_alike(full, short, boards[:300], keep)
    # the cut follows the weights: refresh after the output weights change
    full.model.w2[0, 127, 2] = 0.5
    full.model.refresh()
    assert full.model.read_hidden == (128, cut)
    assert not np.array_equal(full.evaluate_batch(boards[:300], tables=False),
                              short.evaluate_batch(boards[:300], tables=False))


def _crashed_and_others(boards):
    """``boards`` and the boards of 0-ply self-play games (their ends crashed), with their classes."""
    from bgfast import traindata as td

    allb = np.ascontiguousarray(np.concatenate([boards, netmod.default_net().model.selfplay_states(3, 0, 40)]))
    cls = td.classify(allb)
    assert (cls == td.CRASHED).sum() > 100 and (cls == td.CONTACT).sum() > 100
    return allb, cls


def test_a_net_of_three_values_crashed_boards_with_its_crashed_net(boards):
    from bgfast import traindata as td

    allb, cls = _crashed_and_others(boards)
    two = netmod.load(TD_NET)
    three = netmod.add_crashed(two)
    assert (two.nets, three.nets) == (2, 3)
    # the kernel's rule is the training classes' rule
    want = np.zeros(len(allb), np.int8)
    want[cls == td.RACE] = 1
    np.testing.assert_array_equal(two.model.net_of(allb), want)
    want[cls == td.CRASHED] = 2
    np.testing.assert_array_equal(three.model.net_of(allb), want)
    # a copied crashed net plays as the net of two
    _assert_plays_alike(three, two, allb[::3], 8)
    assert netmod.add_crashed(three).arrays()["w1"].shape[0] == 3
    # another crashed net: crashed boards take its values, the others the contact net's
    a = three.arrays()
    a["w1"][2] += np.random.default_rng(4).normal(0, 0.05, a["w1"][2].shape).astype(np.float32)
    a["b2"][2] += 0.3
    other = netmod.Net(_net.Model(a["w1"], a["b1"], a["w2"], a["b2"], 0), {})
    assert other.model.read_hidden == (128, 128, 128)
    swapped = netmod.Net(_net.Model(*(np.ascontiguousarray(a[k][[2, 1]]) for k in ("w1", "b1", "w2", "b2")),
                                    0), {})
    got = other.evaluate_batch(allb, tables=False)
    crashed = cls == td.CRASHED
    np.testing.assert_array_equal(got[crashed], swapped.evaluate_batch(allb[crashed], tables=False))
    np.testing.assert_array_equal(got[~crashed], two.evaluate_batch(allb[~crashed], tables=False))
    assert np.abs(got[crashed] - two.evaluate_batch(allb[crashed], tables=False)).max() > 0.01
    # the plays of a roll (evaluated as changes from the board before it) pick
    # the net of each play's result, as the full evaluation does
    _assert_chooses_the_best_play(other, np.ascontiguousarray(allb[crashed][:120]), 6)


def _assert_load_refuses(tmp_path, arrays):
    """A weights file of these arrays (a count of nets no set has) is refused on load."""
    np.savez(tmp_path / "b.npz", format_version=netmod.FORMAT_VERSION, layout=netmod.LAYOUT,
             checksum=netmod.checksum(**arrays), **arrays)
    with pytest.raises(netmod.NetFileError, match="nets"):
        netmod.load(tmp_path / "b.npz")


def test_a_net_of_three_is_saved_loaded_and_widened(tmp_path, boards):
    three = netmod.add_crashed(netmod.load(TD_NET))
    netmod.save(three, tmp_path / "t.npz")
    back = netmod.load(tmp_path / "t.npz")
    assert back.nets == 3
    _assert_plays_alike(back, three, boards[:200], 2)
    wide = netmod.add_hidden(netmod.widen(back, "hits"), 136, seed=1)
    assert wide.nets == 3 and wide.hidden == 136 and wide.model.read_hidden == (128, 128, 128)
    _assert_plays_alike(wide, three, boards[:200], 3)
    _assert_load_refuses(tmp_path, {k: v[:1] for k, v in three.arrays().items()})


def _lead(boards):
    """The side on roll's lead in the race: the opponent's pips minus its own."""
    pips = (np.asarray(boards, np.int64) * np.arange(1, 26)).sum(axis=2)
    return pips[:, 0] - pips[:, 1]


def test_a_net_with_plan_nets_values_each_band_of_the_race_with_its_own_net(boards):
    from bgfast import traindata as td

    allb, cls = _crashed_and_others(boards)
    three = netmod.add_crashed(netmod.load(TD_NET))
    plan = netmod.add_plan(netmod.load(TD_NET))         # a net of two gets its crashed net too
    assert plan.nets == netmod.PLAN_NETS == 6 and netmod.NET_NAMES[3:6] == (
        "contact-behind", "contact-even", "contact-ahead")
    assert netmod.add_plan(plan).arrays()["w1"].shape[0] == 6
    # the bands: the contact boards (not crashed) by the side on roll's lead
    lead = _lead(allb)
    e1, e2, e3 = _net.PLAN_EDGES
    band = (lead >= e1).astype(int) + (lead >= e2) + (lead >= e3)
    want = three.model.net_of(allb).astype(np.int64)
    contact = cls == td.CONTACT
    want[contact] = np.where(band[contact] > 0, 2 + band[contact], 0)
    np.testing.assert_array_equal(plan.model.net_of(allb), want)
    assert set(np.bincount(want[contact], minlength=6)[[0, 3, 4, 5]] > 20) == {True}
    np.testing.assert_array_equal(_net.plan_nets(allb)[contact], want[contact])
    # copied plan nets play as the net of three
    _assert_plays_alike(plan, three, allb[::3], 9)
    # other plan nets: each band's boards take its net's values
    a = plan.arrays()
    rng = np.random.default_rng(5)
    for k in (3, 4, 5):
        a["w1"][k] += rng.normal(0, 0.05, a["w1"][k].shape).astype(np.float32)
        a["b2"][k] += 0.1 * k
    other = netmod.Net(_net.Model(a["w1"], a["b1"], a["w2"], a["b2"], 0), {})
    got = other.evaluate_batch(allb, tables=False)
    for k in (0, 1, 2, 3, 4, 5):
        on = want == k
        alone = netmod.Net(_net.Model(*(np.ascontiguousarray(a[n][[k, 1]]) for n in ("w1", "b1", "w2", "b2")),
                                      0), {})
        sel = on & (cls != td.RACE) if k != 1 else on
        np.testing.assert_array_equal(got[sel], alone.evaluate_batch(allb[sel], tables=False))
    assert np.abs(got[want == 5] - three.evaluate_batch(allb[want == 5], tables=False)).max() > 0.01
    # the plays of a roll pick the net of each play's result, as the full evaluation does
    _assert_chooses_the_best_play(other, np.ascontiguousarray(allb[contact][:150]), 10)


def test_a_net_with_plan_nets_is_saved_and_loaded(tmp_path, boards):
    plan = netmod.add_plan(netmod.load(TD_NET))
    netmod.save(plan, tmp_path / "p.npz")
    back = netmod.load(tmp_path / "p.npz")
    assert back.nets == 6 and back.meta["plan_added"]["edges"] == list(_net.PLAN_EDGES)
    _assert_plays_alike(back, plan, boards[:200], 4)
    _assert_load_refuses(tmp_path, {k: v[:4] for k, v in plan.arrays().items()})


def test_a_net_with_crashed_sides_values_each_side_crashed_with_its_own_net(tmp_path, boards):
    from bgfast import traindata as td

    allb, cls = _crashed_and_others(boards)
    plan = netmod.add_plan(netmod.load(TD_NET))
    sides = netmod.add_sides(netmod.load(TD_NET))       # a net of two gets the plan nets too
    assert sides.nets == netmod.SIDE_NETS == 7 and netmod.NET_NAMES[6] == "crashed-other"
    assert netmod.add_sides(sides).nets == 7 and netmod.add_plan(sides).nets == 7
    # the rule: a crashed board whose side on roll (row 1) is crashed keeps net 2,
    # one where only the other side is takes net 6; the others as in a set of six
    in_play = td.checkers_in_play(allb)
    want = plan.model.net_of(allb).astype(np.int64)
    other = (cls == td.CRASHED) & (in_play[:, 1] > td.CRASHED_IN_PLAY)
    want[other] = 6
    assert other.sum() > 20 and ((cls == td.CRASHED) & ~other).sum() > 20
    np.testing.assert_array_equal(sides.model.net_of(allb), want)
    for n, net in ((2, netmod.load(TD_NET)), (3, netmod.add_crashed(netmod.load(TD_NET))), (6, plan), (7, sides)):
        np.testing.assert_array_equal(_net.nets_of(allb, n), net.model.net_of(allb))
    with pytest.raises(ValueError, match="2, 3, 6 or 7"):
        _net.nets_of(allb, 5)
    # a copied crashed net plays as the set of six; another takes its own boards
    _assert_plays_alike(sides, plan, allb[::3], 11)
    a = sides.arrays()
    a["w1"][6] += np.random.default_rng(6).normal(0, 0.05, a["w1"][6].shape).astype(np.float32)
    a["b2"][6] += 0.3
    moved = netmod.Net(_net.Model(a["w1"], a["b1"], a["w2"], a["b2"], 0), {})
    got, was = moved.evaluate_batch(allb, tables=False), plan.evaluate_batch(allb, tables=False)
    np.testing.assert_array_equal(got[~other], was[~other])
    assert np.abs(got[other] - was[other]).max() > 0.01
    _assert_chooses_the_best_play(moved, np.ascontiguousarray(allb[cls == td.CRASHED][:150]), 12)
    # saved and loaded; a count of nets no set has is refused
    netmod.save(moved, tmp_path / "s.npz")
    back = netmod.load(tmp_path / "s.npz")
    assert back.nets == 7
    _assert_plays_alike(back, moved, allb[::5], 13)
    _assert_load_refuses(tmp_path, {k: np.concatenate([v, v[:1]]) for k, v in sides.arrays().items()})


def test_the_wide_net_computes_all_its_contact_units_and_the_race_units_it_was_given():
    assert netmod.load(WIDE).model.read_hidden == (256, 128)
