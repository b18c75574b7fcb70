"""The neural-net evaluator: forward pass, incremental play choice, weights
files, training determinism and resume, the levels."""
import numpy as np
import pytest

from bgfast import _net, net as netmod, train as trainmod
from bgfast.errors import DatabaseError
from bgfast.evaluate import equity, evaluate_ply, get_evaluator
from bgfast.levels import LEVEL_NAMES, get_level, Level, NET
from bgfast.movegen import legal_plays, legal_plays_batch
from bgfast.position import Position, PositionClass, classify_boards


def _random_boards(n, seed):
    """Boards met in random play from the opening (every class)."""
    rng = np.random.default_rng(seed)
    out = []
    b = np.array(Position.initial().board)
    while len(out) < n:
        d = rng.integers(1, 7, size=2)
        offs, res = legal_plays_batch(b[None], d[None].astype(np.int64))
        if offs[1] == 0:
            b = b[::-1].copy()
        else:
            b = res[offs[0] + rng.integers(offs[1])].copy()
        if b[0].sum() == 0 or b[1].sum() == 0:
            b = np.array(Position.initial().board)
            continue
        out.append(b.copy())
    return np.ascontiguousarray(out, dtype=np.uint8)


@pytest.fixture(scope="module")
def boards():
    return _random_boards(600, 7)


@pytest.fixture(scope="module")
def rnet():
    # larger than the training init so outputs are spread out
    return netmod.random_net(hidden=24, seed=3, scale=0.5)


def _encode_ref(b):
    """Reference encoding in numpy, written from the layout description (the
    features, tested on their own below, from the kernel)."""
    x = np.zeros(206, np.float32)
    x[196:] = _net.features(np.ascontiguousarray(b[None], dtype=np.uint8))[0]
    for side, row in ((0, b[1]), (1, b[0])):
        o = side * 98
        for i in range(24):
            n = int(row[i])
            x[o + 4 * i] = n >= 1
            x[o + 4 * i + 1] = n >= 2
            x[o + 4 * i + 2] = n >= 3
            x[o + 4 * i + 3] = (n - 3) / 2 if n > 3 else 0
        x[o + 96] = row[24] / 2
        x[o + 97] = (15 - int(row.sum())) / 15
    return x


def _forward_ref(net, boards, encode=None):
    """The net's outputs by a float64 forward pass over the inputs of
    ``encode(board)`` (default: the plain reading of the base inputs)."""
    a = net.arrays()
    cls = classify_boards(boards)
    out = np.empty((len(boards), 5))
    for i, b in enumerate(boards):
        k = 0 if cls[i] == PositionClass.CONTACT else 1
        x = (encode or _encode_ref)(b).astype(np.float64)
        h = 1 / (1 + np.exp(-(x @ a["w1"][k] + a["b1"][k])))
        p = 1 / (1 + np.exp(-(h @ a["w2"][k] + a["b2"][k])))
        p[1] = min(p[1], p[0])
        p[2] = min(p[2], p[1])
        p[3] = min(p[3], 1 - p[0])
        p[4] = min(p[4], p[3])
        out[i] = p
    return out


def test_encoding_matches_reference(boards):
    x = _net.encode(boards[:200])
    ref = np.array([_encode_ref(b) for b in boards[:200]])
    np.testing.assert_allclose(x, ref, atol=1e-7)


def _pos_board(on_roll: dict, opp: dict):
    """A board from {point: checkers} of each side (point 25 = the bar)."""
    b = np.zeros((2, 25), dtype=np.uint8)
    for row, side in ((1, on_roll), (0, opp)):
        for p, n in side.items():
            b[row, p - 1] = n
    return b


# the rolls that hit a lone blot d pips away with nothing in between (the
# standard table): 11, 12, 14, 15, 15, 17, 6, 6, 5, 3, 2, 3
SHOTS_BY_DISTANCE = {1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2,
                     12: 3}


@pytest.mark.parametrize("d", sorted(SHOTS_BY_DISTANCE))
def test_shots_of_a_lone_blot(d):
    # the player on roll has one checker on its 14-point (the rest home on its
    # 1-point); the opponent a blot d pips in front of it (the rest on its own
    # 1-point, which is the roller's 24-point: behind the roller's checker)
    b = _pos_board({14: 1, 1: 14}, {25 - (14 - d): 1, 1: 14})
    f = netmod.features(b[None])[0]
    assert round(f[5] * 36) == SHOTS_BY_DISTANCE[d]       # shots against the opponent
    # the mirror image: the opponent's lone checker hits the roller's blot
    assert round(f[0] * 36) == SHOTS_BY_DISTANCE[d]


def test_shots_blocked_and_from_the_bar():
    # a blot 6 away with the opponent holding the points 2 and 3 pips in front
    # of the hitter: direct 6s (11), 5-1 (2), 4-2 (via 4 pips, 2), not 3-3 or 2-2
    b = _pos_board({14: 1, 1: 14}, {25 - 8: 1, 25 - 12: 2, 25 - 11: 2, 1: 10})
    f = netmod.features(b[None])[0]
    assert round(f[5] * 36) == 11 + 2 + 2
    # one checker on the bar and an opponent blot on the roller's 20-point:
    # entering with a 5 hits (11 rolls), so do 4-1 and 3-2 (enter, then go on
    # with the entered checker); 1-1 reaches only the 21-point
    b = _pos_board({25: 1, 6: 14}, {5: 1, 24: 14})
    f = netmod.features(b[None])[0]
    assert round(f[5] * 36) == 11 + 2 + 2
    # two on the bar: only the entering checkers hit: the 11 rolls with a 5
    b = _pos_board({25: 2, 6: 13}, {5: 1, 24: 14})
    assert round(netmod.features(b[None])[0][5] * 36) == 11
    # no blots, no shots
    assert netmod.features(_pos_board({6: 15}, {6: 15})[None])[0][[0, 5]].tolist() == [0, 0]


def _exact_shots(b):
    """Rolls of 36 with which the player on roll can legally hit (move generator)."""
    n = 0
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            offs, res = legal_plays_batch(b[None], np.array([[d1, d2]], np.int64))
            if (res[offs[0]:offs[1], 1, 24] > b[0, 24]).any():
                n += 1
    return n


def test_shots_agree_with_the_move_generator(boards):
    """The shot count ignores only rare rules (both dice must be played, bear-off
    moves): it equals the exact count on almost every board, never far off."""
    sub = boards[:400]
    got = np.rint(netmod.features(sub)[:, 5] * 36).astype(int)
    exact = np.array([_exact_shots(b) for b in sub])
    assert (got == exact).mean() >= 0.98
    assert np.abs(got - exact).max() <= 4
    assert (exact > 0).mean() > 0.3          # the boards have shots to count


def _ref_shots(hitter, target):
    """The rolls (of 36) with which ``hitter`` (a board row, on roll) hits a
    blot of ``target``, by the rule of the features' comment, roll by roll
    (distances are the hitter's: its point i is i, the target's point j is
    25 - j)."""
    own = {i + 1 for i in range(24) if hitter[i]}
    blots = {24 - j for j in range(24) if target[j] == 1}
    blocked = {24 - j for j in range(24) if target[j] >= 2}
    nb = int(hitter[24])

    def opened(r):
        return 1 <= r <= 24 and r not in blocked

    def double(d):
        froms = own
        steps = 4
        if nb:
            e = 25 - d
            if not opened(e):
                return False
            if e in blots:
                return True
            if nb >= 4:
                return False
            steps, froms = 4 - nb, own | {e}
        for r in froms:
            for k in range(1, steps + 1):
                if r - k * d in blots:
                    return True
                if not opened(r - k * d):
                    break
        return False

    def pair(d1, d2):
        if nb >= 2:
            return 25 - d1 in blots or 25 - d2 in blots
        if nb == 1:
            for a, c in ((d1, d2), (d2, d1)):
                e = 25 - a
                if opened(e) and (e in blots or any(r - c in blots for r in own | {e})):
                    return True
            return False
        return any(r - d1 in blots or r - d2 in blots
                   or (r - d1 - d2 in blots and (opened(r - d1) or opened(r - d2)))
                   for r in own)

    if not blots:
        return 0
    return sum(double(d) for d in range(1, 7)) + sum(
        2 * pair(d1, d2) for d1 in range(1, 7) for d2 in range(1, d1))


def _ref_trapped(runner, holder):
    """36 minus the escapes of ``runner``'s rearmost checker past the points
    ``holder`` holds (the features' rule, roll by roll; 0 with no checker)."""
    s = 25 if runner[24] else max((i + 1 for i in range(24) if runner[i]), default=0)
    if s == 0:
        return 0
    held = {24 - j for j in range(24) if holder[j] >= 2}
    lo = max(7, s - 12)
    front = [r for r in range(lo, s) if r in held]
    if not front:
        return 0
    landing = {r for r in range(1, min(front)) if r not in held}
    escapes = 0
    for d1 in range(1, 7):
        r = s
        for _ in range(4):
            r -= d1
            if r < 1 or r in held:
                break
            if r in landing:
                escapes += 1
                break
        for d2 in range(1, d1):
            r = s - d1 - d2
            if (s - d1 in landing or s - d2 in landing
                    or (r >= 1 and r in landing and not (s - d1 in held and s - d2 in held))):
                escapes += 2
    return 36 - escapes


def test_shots_and_escapes_match_a_roll_by_roll_reading(boards):
    """The kernel counts shots and escapes with bit masks and a count of the
    pairs; a plain reading of the rule, roll by roll, gives the same counts
    (boards from play, and boards with checkers on the bar)."""
    from corpus import random_boards

    sample = np.concatenate([boards, random_boards(1500, 11, bar_prob=0.8)])
    f = netmod.features(sample)
    for b, row in zip(sample, f):
        for side, (me, other) in enumerate(((b[1], b[0]), (b[0], b[1]))):
            assert round(row[5 * side] * 36) == _ref_shots(other, me)
            assert round(row[5 * side + 1] * 36) == _ref_trapped(me, other)


def test_escapes_prime_rearmost_dance():
    # the roller's back checker on its 24-point; the opponent holds its 7- and
    # 8-points (the roller's 18 and 17; its point 23 is in the roller's home
    # board, no block): the checker must reach the 16-point or lower, not via
    # 18 or 17: 6-2, 6-3, 6-4, 6-5, 5-3, 5-4 (12 rolls) and 5-5, 4-4 (2) escape,
    # so 22 rolls keep it trapped
    b = _pos_board({24: 1, 6: 4, 5: 4, 4: 3, 3: 3}, {7: 2, 8: 2, 23: 11})
    f = netmod.features(b[None])[0]
    assert round(f[1] * 36) == 36 - 14
    assert f[2] == pytest.approx(4 / 6)         # points 3, 4, 5, 6
    assert f[3] == pytest.approx(24 / 25)
    assert f[4] == 0
    # the opponent's rearmost checker (its 23-point) is in front of the
    # roller's 3..6 (its 19..22): it escapes with any 5 or 6 (20 rolls) only
    assert round(f[6] * 36) == 36 - 20
    assert f[7] == pytest.approx(2 / 6)         # the opponent's 7 and 8
    assert f[8] == pytest.approx(23 / 25)
    # with no point in front of it, every roll "escapes"
    b = _pos_board({24: 1, 1: 14}, {7: 2, 8: 2, 23: 11})
    assert netmod.features(b[None])[0][6] == 0
    # on the bar against a 3-point board: dances with 9 of the 36 rolls
    b = _pos_board({25: 1, 6: 14}, {1: 2, 2: 2, 3: 2, 13: 9})
    f = netmod.features(b[None])[0]
    assert f[3] == 1.0 and f[4] == pytest.approx(9 / 36) and f[9] == 0


def test_extended_previous_net_ignores_the_features(tmp_path, boards):
    """A file of the previous layout loads only with previous=True, with zero
    feature weights: it evaluates by the raw inputs alone."""
    n = netmod.random_net(hidden=12, seed=4, scale=0.5)
    a = n.arrays()
    old = {**a, "w1": a["w1"][:, :196].copy()}
    path = tmp_path / "old.npz"
    with open(path, "wb") as f:
        np.savez(f, format_version=np.int64(netmod.FORMAT_VERSION),
                 layout=np.str_(netmod.PREVIOUS_LAYOUT), checksum=np.str_(netmod.checksum(**old)),
                 meta=np.str_('{"train": {"games_done": 5}}'), **old)
    with pytest.raises(netmod.NetFileError, match="input layout"):
        netmod.load(path)
    ext = netmod.load(path, previous=True)
    w1 = ext.arrays()["w1"]
    assert w1.shape == (2, 206, 12) and not w1[:, 196:].any()
    np.testing.assert_array_equal(w1[:, :196], old["w1"])
    assert ext.meta["extended_from"]["meta"]["train"]["games_done"] == 5
    cls = classify_boards(boards)
    got = ext.evaluate_batch(boards, tables=False)
    x = np.array([_encode_ref(b) for b in boards])[:, :196].astype(np.float64)
    for k in (0, 1):
        sel = (cls == PositionClass.CONTACT) if k == 0 else (cls != PositionClass.CONTACT)
        h = 1 / (1 + np.exp(-(x[sel] @ old["w1"][k] + old["b1"][k])))
        p = 1 / (1 + np.exp(-(h @ old["w2"][k] + old["b2"][k])))
        assert np.abs(got[sel, 0] - p[:, 0]).max() < 2e-5


def test_features_matter_in_the_forward_pass(boards, rnet):
    """Changing only a feature weight row changes the outputs of the boards with that feature."""
    a = rnet.arrays()
    w1 = a["w1"].copy()
    w1[0, 196 + 5] += 1.0                         # shots against the opponent, contact net
    m = netmod.Net(_net.Model(w1, a["b1"], a["w2"], a["b2"]))
    f = netmod.features(boards)
    cls = classify_boards(boards)
    diff = np.abs(m.evaluate_batch(boards, tables=False) - rnet.evaluate_batch(boards, tables=False))
    moved = diff.max(axis=1) > 1e-6
    contact_shots = (cls == PositionClass.CONTACT) & (f[:, 5] > 0)
    assert contact_shots.sum() > 50
    np.testing.assert_array_equal(moved, contact_shots)


def test_forward_matches_numpy_reference(boards, rnet):
    got = rnet.evaluate_batch(boards, tables=False)
    ref = _forward_ref(rnet, boards)
    assert np.abs(got - ref).max() < 2e-5
    # both nets were exercised
    cls = classify_boards(boards)
    assert (cls == PositionClass.CONTACT).any() and (cls != PositionClass.CONTACT).any()
    assert got[:, 0].std() > 0.02


def test_batch_equals_single_and_threads(boards, rnet):
    batch = rnet.evaluate_batch(boards)
    single = np.array([rnet.evaluate_batch(b[None])[0] for b in boards[:100]])
    np.testing.assert_array_equal(batch[:100], single)
    np.testing.assert_array_equal(rnet.evaluate_batch(boards, nthreads=2), batch)


def test_incremental_choice_equals_full_evaluation(boards, rnet):
    rng = np.random.default_rng(1)
    sub = boards[:150]
    dice = rng.integers(1, 7, size=(len(sub), 2)).astype(np.int64)
    counts, res = rnet.choose(sub, dice, tables=False)
    offs, allres = legal_plays_batch(sub, dice)
    np.testing.assert_array_equal(counts, np.diff(offs))
    for i in range(len(sub)):
        if counts[i] == 0:
            np.testing.assert_array_equal(res[i], sub[i][::-1])
            continue
        cand = allres[offs[i]:offs[i + 1]]
        eq = -equity(rnet.evaluate_batch(cand, tables=False))
        j = int(np.flatnonzero((cand == res[i]).all(axis=(1, 2)))[0])
        assert eq[j] >= eq.max() - 1e-5


@pytest.mark.parametrize("hidden", [37, 128])
def test_incremental_choice_with_tables_equals_full_evaluation(hidden):
    """Contact, race and bear-off boards of self-play games; 37 hidden units
    take every block size of the play kernel (32, then single units)."""
    net = netmod.random_net(hidden=hidden, seed=5, scale=0.5)
    sub = netmod.default_net().model.selfplay_states(3, 0, 6)
    cls = classify_boards(sub)
    assert {PositionClass.CONTACT, PositionClass.RACE, PositionClass.BEAROFF} <= set(cls.tolist())
    dice = np.random.default_rng(2).integers(1, 7, size=(len(sub), 2)).astype(np.int64)
    counts, res = net.choose(sub, dice)
    offs, allres = legal_plays_batch(sub, dice)
    np.testing.assert_array_equal(counts, np.diff(offs))
    for i in np.flatnonzero(counts > 0):
        cand = allres[offs[i]:offs[i + 1]]
        eq = -equity(net.evaluate_batch(cand))
        j = int(np.flatnonzero((cand == res[i]).all(axis=(1, 2)))[0])
        assert eq[j] >= eq.max() - 1e-5


def test_one_ply_matches_python_lookahead(boards, rnet):
    sub = boards[::60][:6]
    got = rnet.evaluate_plies(sub, 1)
    ev = netmod.NetEvaluator(rnet)
    ref = evaluate_ply(sub, 1, ev)
    assert np.abs(got - ref).max() < 1e-4


def test_evaluator_interface(rnet):
    ev = netmod.NetEvaluator(rnet)
    e = ev.evaluate(Position.initial())
    assert len(e.probs) == 5 and 0 < e.probs[0] < 1
    assert e.equity == pytest.approx(float(equity(np.array(e.probs))))
    assert get_evaluator("net").name == "net"


def test_save_load_round_trip(tmp_path, rnet, boards):
    rnet.meta["note"] = "round trip"
    path = tmp_path / "w.npz"
    netmod.save(rnet, path)
    back = netmod.load(path)
    for k, v in rnet.arrays().items():
        np.testing.assert_array_equal(back.arrays()[k], v)
    assert back.meta["note"] == "round trip"
    np.testing.assert_array_equal(back.evaluate_batch(boards), rnet.evaluate_batch(boards))


def _rewrite(path, out, **changes):
    z = dict(np.load(path))
    z.update(changes)
    with open(out, "wb") as f:
        np.savez(f, **z)


def test_bad_files_give_clear_errors(tmp_path, rnet):
    good = tmp_path / "good.npz"
    netmod.save(rnet, good)
    data = good.read_bytes()
    cases = {}
    (tmp_path / "trunc.npz").write_bytes(data[: len(data) // 2])
    cases["trunc.npz"] = "not a net weights file"
    (tmp_path / "text.npz").write_text("hello")
    cases["text.npz"] = "not a net weights file"
    a = rnet.arrays()
    w1 = a["w1"].copy()
    w1[0, 0, 0] += 1.0
    _rewrite(good, tmp_path / "tampered.npz", w1=w1)
    cases["tampered.npz"] = "checksum"
    _rewrite(good, tmp_path / "layout.npz", layout=np.str_("other-layout"))
    cases["layout.npz"] = "input layout"
    _rewrite(good, tmp_path / "version.npz", format_version=np.int64(99))
    cases["version.npz"] = "format version"
    z = dict(np.load(good))
    del z["checksum"]
    with open(tmp_path / "nocheck.npz", "wb") as f:
        np.savez(f, **z)
    cases["nocheck.npz"] = "missing checksum"
    for name, msg in cases.items():
        with pytest.raises(netmod.NetFileError, match=msg):
            netmod.load(tmp_path / name)
    with pytest.raises(DatabaseError, match="cannot read"):
        netmod.load(tmp_path / "absent.npz")


def test_shipped_weights_load():
    n = netmod.default_net()
    assert n.hidden >= 16
    assert "train" in n.meta and n.meta["train"]["games_done"] > 0
    p = n.evaluate_batch(Position.initial().board[None])[0]
    assert 0.35 < p[0] < 0.65          # the opening is close to even


def test_training_deterministic_and_resumable(tmp_path):
    kw = dict(hidden=8, seed=5, alpha=0.1, lam=0.7, round_games=8, progress=False)
    trainmod.train(tmp_path / "a.npz", 48, threads=1, **kw)
    trainmod.train(tmp_path / "b.npz", 48, threads=2, **kw)
    trainmod.train(tmp_path / "c.npz", 16, threads=1, **kw)
    st = trainmod.train(tmp_path / "c.npz", 48, threads=2, resume=True, **kw)
    assert st["games_done"] == 48
    a, b, c = (netmod.load(tmp_path / f"{x}.npz").arrays() for x in "abc")
    init = netmod.random_net(8, 5).arrays()
    assert not np.array_equal(a["w1"], init["w1"])      # it learned something
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
        np.testing.assert_array_equal(a[k], c[k])
    trainmod.train(tmp_path / "d.npz", 48, threads=1, **{**kw, "seed": 6})
    assert not np.array_equal(netmod.load(tmp_path / "d.npz").arrays()["w1"], a["w1"])


def test_training_learns_the_race(tmp_path):
    """A short run already prefers the side that is far ahead in a race."""
    trainmod.train(tmp_path / "t.npz", 3000, hidden=16, seed=1, threads=2, progress=False)
    n = netmod.load(tmp_path / "t.npz")
    b = np.zeros((2, 2, 25), np.uint8)
    b[0, 1, [5, 6, 7]] = 5          # on roll: 15 checkers on points 6-8
    b[0, 0, [20, 21, 22]] = 5       # opponent: far back, no contact
    b[1] = b[0, ::-1]
    p = n.evaluate_batch(b, tables=False)
    assert p[0, 0] > 0.75 and p[1, 0] < 0.25


@pytest.mark.parametrize("name", LEVEL_NAMES + ("pubeval",))
def test_levels_make_legal_plays(name, boards, rnet):
    lev = get_level(name)
    if lev.kind == NET:
        lev = Level(lev.name, NET, lev.plies, lev.noise, rnet)
    rng = np.random.default_rng(2)
    idx = rng.choice(len(boards), size=4 if lev.plies == 2 else 12, replace=False)
    for i in idx:
        pos = Position(boards[i])
        d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
        after = lev.choose_play(pos, d1, d2, seed=int(i))
        legal = {p.position for p in legal_plays(pos, d1, d2)} or {pos.swap()}
        assert after in legal


def test_noise_is_seeded(boards, rnet):
    lev = Level("x", NET, 0, 0.5, rnet)
    dice = np.tile([[6, 3]], (200, 1))
    a = lev.choose_boards(boards[:200], dice, seed=4)[1]
    b = lev.choose_boards(boards[:200], dice, seed=4)[1]
    c = lev.choose_boards(boards[:200], dice, seed=5)[1]
    quiet = rnet.choose(boards[:200], dice)[1]
    np.testing.assert_array_equal(a, b)
    assert (a != c).any() and (a != quiet).any()


def test_expert_sees_the_reply():
    """2-ply and 1-ply searches run and give legal values near 0-ply on a quiet position."""
    n = netmod.default_net()
    p = Position.initial().board[None]
    v0, v1, v2 = (n.evaluate_plies(p, k)[0] for k in (0, 1, 2))
    for v in (v1, v2):
        assert 0 < v[0] < 1 and abs(v[0] - v0[0]) < 0.1


@pytest.mark.parametrize("name", ["beginner", "medium", "hard"])
def test_level_players_finish_a_game(name):
    from bgfast.game import Game
    from bgfast.players import make_level_player
    from bgfast.players import play_game

    g = play_game(Game(seed=3), [make_level_player(name, seed=1), make_level_player("easy", seed=2)])
    assert g.phase.name == "OVER"


@pytest.mark.parametrize("name", ["hard", "expert"])
def test_level_player_pick_matches_kernel(boards, name):
    """The Python move choice of a level (terminal game) equals the kernel's (duels)."""
    from bgfast.levels import pick_result

    lev = get_level(name)
    rng = np.random.default_rng(9)
    for i in rng.choice(len(boards), size=5, replace=False):
        d = rng.integers(1, 7, size=2).astype(np.int64)
        offs, res = legal_plays_batch(boards[i][None], d[None])
        if offs[1] < 2:
            continue
        j = pick_result(lev, res)
        _, k = lev.choose_boards(boards[i][None], d[None])
        np.testing.assert_array_equal(res[j], k[0])


def test_move_filters_can_be_set_and_restored(boards):
    """The search's move filters: a 1-play filter makes 2-ply choose the 0-ply best play."""
    saved = _net.move_filters()
    (n0, w0), (n1, w1) = saved
    assert 1 <= n1 <= n0 <= 16 and 0 < w1 <= w0
    with pytest.raises(ValueError):
        _net.set_move_filters(0, 0.1, 3, 0.1)
    with pytest.raises(ValueError):
        _net.set_move_filters(8, -1.0, 3, 0.1)
    assert _net.move_filters() == saved
    n = netmod.default_net()
    b = np.ascontiguousarray(boards[:40])
    d = np.ascontiguousarray(np.tile([[6, 2]], (len(b), 1)).astype(np.int64))
    try:
        _net.set_move_filters(1, 0.0, 1, 0.0)
        assert _net.move_filters() == ((1, 0.0), (1, 0.0))
        np.testing.assert_array_equal(n.choose(b, d, plies=2)[1], n.choose(b, d, plies=0)[1])
    finally:
        _net.set_move_filters(n0, w0, n1, w1)
    assert _net.move_filters() == saved


def test_supervised_phase_is_deterministic_and_moves_towards_targets(tmp_path):
    init = netmod.random_net(hidden=8, seed=2)
    netmod.save(init, tmp_path / "i.npz")
    kw = dict(plies=1, seed=3, alpha=0.05, epochs=2, progress=False)
    st = trainmod.supervise(tmp_path / "a.npz", tmp_path / "i.npz", 4, **kw)
    trainmod.supervise(tmp_path / "b.npz", tmp_path / "i.npz", 4, **kw)
    a, b = netmod.load(tmp_path / "a.npz"), netmod.load(tmp_path / "b.npz")
    np.testing.assert_array_equal(a.arrays()["w1"], b.arrays()["w1"])
    assert st["positions"] > 20 and a.meta["supervised"][0]["plies"] == 1
    assert not np.array_equal(a.arrays()["w1"], init.arrays()["w1"])


def test_supervised_steps_fit_targets():
    n = netmod.random_net(hidden=8, seed=2)
    pos = n.model.selfplay_states(3, 0, 4)
    tgt = np.tile([0.9, 0.3, 0.05, 0.1, 0.01], (len(pos), 1))
    err = [np.abs(n.evaluate_batch(pos, tables=False) - tgt).mean()]
    for _ in range(4):
        n.model.learn(pos, tgt, 0.01)
        err.append(np.abs(n.evaluate_batch(pos, tables=False) - tgt).mean())
    assert err[0] > 0.2 and err[-1] < 0.05 and all(np.diff(err) < 0)


def _pos(on_roll: dict, opp: dict):
    from bgfast.position import Position

    b = np.zeros((2, 25), dtype=np.uint8)
    for row, side in ((1, on_roll), (0, opp)):
        for p, n in side.items():
            b[row, p - 1] = n
    return Position(b)


@pytest.mark.parametrize("name", ["easy", "medium", "hard", "expert"])
def test_level_cube_goes_through_the_cube_layer(name):
    from bgfast.game import Game, Rules
    from bgfast.players import make_level_player
    from bgfast.position import Position

    lv = make_level_player(name, seed=1)
    # a certain win without gammons (exact bear-off): double, and the answer is pass
    g = Game(position=_pos({1: 2}, {6: 3}), on_roll=0)
    assert lv.cube_decision(g).action.name == "DOUBLE_PASS"
    assert lv.wants_to_double(g)
    g.double()
    assert lv.respond_to_double(g) == "drop"
    # the opening position: no double for money ...
    g = Game(position=Position.initial(), on_roll=0)
    assert not lv.wants_to_double(g)
    # ... but the trailer doubles at once post-Crawford (the leader's free drop
    # makes doubling right), which thresholds on the winning chance cannot see
    g = Game(match_length=5, score=(0, 4), post_crawford=True, position=Position.initial(),
             on_roll=0)
    if lv.level.plies == 2:
        # the 2-ply cubeful search finds what gnubg's 2-ply cube analysis says
        # here: "Optional double, take" (no double +0.283 = double/take +0.283)
        dec = lv.cube_decision(g)
        assert abs(dec.no_double - dec.double_take) < 0.002 and dec.action.takes
    else:
        assert lv.wants_to_double(g)
    g.double()
    assert lv.respond_to_double(g) == "take"
    # far behind in a race with beavers allowed: a double is beavered
    g = Game(Rules(beaver=True), position=_pos({8: 5, 7: 5, 6: 5}, {6: 5, 5: 5, 4: 5}), on_roll=0)
    assert not lv.wants_to_double(g)
    g.double()
    assert lv.respond_to_double(g) == "beaver"


def test_beginner_cube_stays_simple():
    from bgfast.game import Game
    from bgfast.players import make_level_player

    g = Game(position=_pos({1: 2}, {6: 3}), on_roll=0)
    b = make_level_player("beginner", seed=1)
    assert not b.wants_to_double(g)
    g.double()
    assert b.respond_to_double(g) == "take"


def test_evaluation_cache_returns_the_bits_the_net_computes(boards):
    net = netmod.random_net(hidden=24, seed=5, scale=0.5)
    cold = net.copy()
    cold.set_cache(0)
    want = cold.evaluate_batch(boards)
    net.set_cache(8)                     # 256 entries: hits, misses and replacements
    first = np.array([net.evaluate_batch(b[None])[0] for b in boards])
    again = np.concatenate([net.evaluate_batch(boards[i:i + 50]) for i in range(0, len(boards), 50)])
    np.testing.assert_array_equal(first, want)
    np.testing.assert_array_equal(again, want)
    info = net.cache_info()
    assert info["log2"] == 8 and 0 < info["hits"] < info["lookups"] <= 2 * len(boards)
    assert cold.cache_info() == {"log2": 0, "lookups": 0, "hits": 0}


def test_evaluation_cache_sets_hold_four_boards_replaced_in_turn(boards):
    net = netmod.random_net(hidden=8, seed=9, scale=0.5)
    cold = net.copy()
    cold.set_cache(0)
    want = cold.evaluate_batch(boards)
    net.set_cache(1)                      # one set of four entries
    assert net.cache_info()["log2"] == 2
    rows = []                             # six distinct contact boards (no bear-off tables)
    for i in range(len(boards)):
        if (len(rows) < 6 and cold.model.net_of(boards[i:i + 1])[0] != 1
                and not any(np.array_equal(boards[i], boards[j]) for j in rows)):
            rows.append(i)

    def hits(idx):
        before = net.cache_info()["hits"]
        got = net.evaluate_batch(boards[idx])
        np.testing.assert_array_equal(got, want[idx])
        return net.cache_info()["hits"] - before

    assert hits(rows[:4]) == 0
    assert hits(rows[:4]) == 4            # four boards share the set
    assert hits(rows[4:5]) == 0           # a fifth replaces the oldest ...
    assert hits(rows[1:5]) == 4
    assert hits(rows[:1]) == 0            # ... which is gone
    # a call with repeats and more boards than entries: the same bits
    idx = np.array(rows * 3 + rows[::-1])
    assert hits(idx) > 0


def test_evaluation_cache_skips_bulk_calls_and_other_settings(boards):
    net = netmod.random_net(hidden=8, seed=6)
    many = np.concatenate([boards] * 2)[:300]
    net.evaluate_batch(many)                              # more than 256 boards
    net.evaluate_batch(boards[:10], tables=False)
    net.evaluate_batch(boards[:10], nthreads=2)
    assert net.cache_info()["lookups"] == 0
    net.evaluate_batch(boards[:10])
    assert net.cache_info()["lookups"] > 0


def test_evaluation_cache_forgets_weights_that_change(boards):
    net = netmod.random_net(hidden=8, seed=7, scale=0.5)
    b = boards[:40]
    before = net.evaluate_batch(b)
    net.model.w1[...] *= 0.5                             # changed in place, then refreshed
    net.model.refresh()
    fresh = net.copy()
    fresh.set_cache(0)
    np.testing.assert_array_equal(net.evaluate_batch(b), fresh.evaluate_batch(b))
    assert not np.array_equal(net.evaluate_batch(b), before)
    tgt = np.tile([0.9, 0.3, 0.05, 0.1, 0.01], (len(b), 1))
    net.model.learn(np.ascontiguousarray(b), tgt, 0.05)    # trained: the cache is emptied
    fresh = net.copy()
    fresh.set_cache(0)
    np.testing.assert_array_equal(net.evaluate_batch(b), fresh.evaluate_batch(b))
    net.model.train(1, 0, 2, 1, 0.1, 0.7, 1)
    fresh = net.copy()
    fresh.set_cache(0)
    np.testing.assert_array_equal(net.evaluate_batch(b), fresh.evaluate_batch(b))


def test_evaluation_cache_from_several_threads(boards):
    from concurrent.futures import ThreadPoolExecutor

    net = netmod.random_net(hidden=16, seed=8, scale=0.5)
    net.set_cache(6)
    cold = net.copy()
    cold.set_cache(0)
    want = cold.evaluate_batch(boards)
    chunks = [(i % 12) * 50 for i in range(96)]
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda i: net.evaluate_batch(boards[i:i + 50]), chunks))
    for i, g in zip(chunks, got):
        np.testing.assert_array_equal(g, want[i:i + 50])


@pytest.mark.parametrize("bad", [-1, 27, 2.0, True, "16"])
def test_evaluation_cache_size_is_checked(bad):
    from bgfast.errors import BgfastError

    with pytest.raises(BgfastError):
        netmod.random_net(hidden=4, seed=1).set_cache(bad)
