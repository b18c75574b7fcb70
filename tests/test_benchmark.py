"""The checker-play benchmark: decisions, reference rollouts (seeds, job
counts, resume), the files, the scores and the commands."""
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import benchmark as bm
from bgfast import traindata as td
from bgfast.cli import main
from bgfast.errors import BgfastError, DatabaseError
from bgfast.evaluate import rank_plays
from bgfast.movegen import legal_plays
from bgfast.position import Position, pack, unpack
from bgfast.rollout import rollout_plays

QUICK = "net=2,pubeval=1,beginner=1"            # the fast players
TINY = replace(bm.REFERENCE_SETTINGS, trials=4, truncate=4, seed=5)
BUILD = dict(seed=7, settings=TINY, players=QUICK, shard_size=4, block_size=1, jobs=1)
REPO = Path(__file__).resolve().parent.parent


def _files(d) -> dict:
    return {p.name: p.read_bytes() for p in sorted(Path(d).iterdir())}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "db"
    r = bm.build(out, 3, **BUILD)
    return out, r


@pytest.fixture(scope="module")
def db(built):
    return bm.load(built[0])


# ---------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------

def test_a_tiny_build_holds_three_decisions_per_set(built, db):
    out, r = built
    assert r["decisions"] == 9 and r["rolled_out"] == 9 and r["shards"] == 3
    assert r["classes"] == {"contact": 3, "crashed": 3, "race": 3}
    assert sorted(p.name for p in out.iterdir()) == [
        "decisions.bgtd", "shard-000000.bgtd", "shard-000001.bgtd", "shard-000002.bgtd"]
    assert len(db) == 9 and db.class_counts() == r["classes"]
    assert db.meta["settings"] == td.label_fields(TINY)
    assert db.meta["margin"] == bm.MARGIN and db.meta["max_candidates"] == bm.MAX_CANDIDATES


def test_of_sets_keeps_the_named_sets_in_their_order(db):
    sub = db.of_sets(["race", "contact"])
    assert sub.class_counts() == {"contact": 3, "crashed": 0, "race": 3}
    rows = np.flatnonzero(db.classes != bm.SETS.index("crashed"))
    assert (sub.keys == db.keys[rows]).all() and np.array_equal(sub.equity, db.equity[rows], equal_nan=True)
    assert len(db.of_sets("crashed")) == 3 and len(db.of_sets(None)) == len(db)
    with pytest.raises(BgfastError, match="unknown set"):
        db.of_sets("prime")


def test_each_decision_rolls_out_the_plays_within_the_margin(db):
    for i, board in enumerate(db.boards):
        d1, d2 = (int(x) for x in db.dice[i])
        assert (d1, d2) == bm._roll(7, db.keys[i])
        assert len(legal_plays(Position(board), d1, d2)) >= 2
        ranked = rank_plays(Position(board), d1, d2)
        within = [p for p in ranked if p.equity >= ranked[0].equity - bm.MARGIN]
        k = int(db.count[i])
        assert k == min(max(len(within), 2), bm.MAX_CANDIDATES)
        assert (db.cand[i, :k] == pack(np.stack([p.play.position.board for p in ranked[:k]]))).all()
        assert (db.cand[i, k:] == 0).all() and np.isnan(db.equity[i, k:]).all()
        assert db.eq0[i, :k].tolist() == [p.equity for p in ranked[:k]]
    # the reference of decision 4: the common-dice rollout of its candidates, seed (5, 4)
    board = db.boards[4]
    d1, d2 = (int(x) for x in db.dice[4])
    res = rollout_plays(Position(board), d1, d2, replace(TINY, seed=td.position_seed(5, 4)),
                        max_plays=int(db.count[4]))
    by_key = {r.label: r for r in res}
    ranked = rank_plays(Position(board), d1, d2)
    for j in range(int(db.count[4])):
        r = by_key[ranked[j].play.notation]
        assert db.equity[4, j] == r.equity and db.stderr[4, j] == r.stderr["equity"]
    assert (db.games == TINY.trials).all()


def test_the_job_count_does_not_change_a_bit(built, tmp_path):
    out = tmp_path / "j2"
    bm.build(out, 3, **{**BUILD, "jobs": 2})
    assert _files(out) == _files(built[0])


def test_an_interrupted_build_resumes_to_the_same_files(built, tmp_path):
    out = tmp_path / "cut"
    calls = []

    def stop(done, total):
        calls.append(done)
        if done == 6:                   # inside the second shard
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bm.build(out, 3, **BUILD, progress=stop)
    names = sorted(p.name for p in out.iterdir())
    assert names == ["decisions.bgtd", "partial.bgtd", "shard-000000.bgtd"]
    assert len(bm.load(out)) == 6
    with pytest.raises(BgfastError, match="already holds a benchmark"):
        bm.build(out, 3, **BUILD)
    r = bm.build(out, 3, **BUILD, resume=True)
    assert r["in_this_run"] == 3
    assert _files(out) == _files(built[0])
    # resuming a finished build does nothing; a different build is refused
    assert bm.build(out, 3, **BUILD, resume=True)["in_this_run"] == 0
    with pytest.raises(DatabaseError, match="its n is 3, not 4"):
        bm.build(out, 4, **BUILD, resume=True)
    with pytest.raises(DatabaseError, match="settings"):
        bm.build(out, 3, **{**BUILD, "settings": replace(TINY, trials=5)}, resume=True)
    with pytest.raises(DatabaseError, match="players"):
        bm.build(out, 3, **{**BUILD, "players": "net=1"}, resume=True)


def test_the_decisions_are_disjoint_from_an_excluded_set(db, tmp_path):
    ex = td.PositionSet(db.keys, db.classes, np.zeros(len(db), np.uint8), (("net", 1.0),))
    other = bm.select_decisions(3, 7, players=QUICK, exclude=ex, jobs=1)
    assert not {bytes(k) for k in other.keys} & {bytes(k) for k in db.keys}
    assert other.meta["excluded"]["keys"] == len(db)
    same = bm.select_decisions(3, 7, players=QUICK, jobs=1)
    assert (same.keys == db.keys).all() and (same.dice == db.dice).all()


def test_the_shipped_benchmark_is_held_out_from_the_training_positions():
    bench, train = REPO / "data" / "benchmark", REPO / "data" / "training" / "positions.bgtd"
    if not (bench / bm.DECISIONS).exists() or not train.exists():
        pytest.skip("the shipped data is not in this checkout")
    dec = bm.load_decisions(bench / bm.DECISIONS)
    keys = td.load_positions(train).keys
    assert dec.meta["seed"] != td.load_positions(train).meta["seed"]
    assert dec.meta["excluded"]["digest"] == bm._keys_digest(keys)
    assert not {bytes(k) for k in dec.keys} & {bytes(k) for k in keys}


def test_bad_arguments_are_refused_before_any_work(tmp_path):
    with pytest.raises(BgfastError, match="unknown set"):
        bm.build(tmp_path / "x", 3, sets=["backgame"], **BUILD)
    with pytest.raises(BgfastError, match="margin"):
        bm.build(tmp_path / "x", 3, margin=-1, **BUILD)
    with pytest.raises(BgfastError, match="does not exist"):
        bm.build(tmp_path / "no" / "x", 3, **BUILD)
    with pytest.raises(BgfastError, match="at least 1"):
        bm.select_decisions(0)
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------------------
# the files
# ---------------------------------------------------------------------------

def _copy(src, dst) -> Path:
    dst.mkdir()
    for name, data in _files(src).items():
        (dst / name).write_bytes(data)
    return dst


def test_a_damaged_file_raises_database_error(built, tmp_path):
    d = _copy(built[0], tmp_path / "flip")
    shard = d / "shard-000001.bgtd"
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0x40
    shard.write_bytes(bytes(data))
    with pytest.raises(DatabaseError, match="checksum mismatch"):
        bm.load(d)
    d = _copy(built[0], tmp_path / "cut")
    (d / "shard-000002.bgtd").write_bytes((d / "shard-000002.bgtd").read_bytes()[:-20])
    with pytest.raises(DatabaseError, match="truncated"):
        bm.load(d)
    d = _copy(built[0], tmp_path / "dec")
    (d / bm.DECISIONS).write_bytes((d / bm.DECISIONS).read_bytes()[:-1])
    with pytest.raises(DatabaseError, match="truncated"):
        bm.load(d)
    d = _copy(built[0], tmp_path / "gone")
    (d / "shard-000001.bgtd").unlink()
    with pytest.raises(DatabaseError, match="do not follow"):
        bm.load(d)
    d = _copy(built[0], tmp_path / "kind")
    (d / "shard-000000.bgtd").write_bytes((d / bm.DECISIONS).read_bytes())
    with pytest.raises(DatabaseError, match="not benchmark"):
        bm.load(d)
    with pytest.raises(DatabaseError, match="holds no rolled-out decisions"):
        bm.load(tmp_path)
    with pytest.raises(DatabaseError, match="not a benchmark directory"):
        bm.load(tmp_path / "none")


# ---------------------------------------------------------------------------
# scores
# ---------------------------------------------------------------------------

def _pick(db, which):
    """A chooser taking candidate ``which(equities)`` of the decision on the board."""
    table = {}
    for i in range(len(db)):
        k = int(db.count[i])
        table[(db.keys[i].tobytes(), tuple(db.dice[i]))] = unpack(db.cand[i, which(db.equity[i, :k])][None])[0]

    def choose(board, d1, d2):
        return table[(pack(board[None])[0].tobytes(), (d1, d2))]

    return choose


def test_a_chooser_of_the_reference_best_scores_zero(db):
    res = bm.score(db, _pick(db, np.argmax))
    assert set(res) == {"contact", "crashed", "race"}
    for s in res.values():
        assert s.decisions == 3 and s.error == 0.0 and s.se == 0.0 and s.best == 1.0
        assert s.outside == 0


def test_a_chooser_of_the_worst_candidate_loses_exactly_the_gap(db):
    res = bm.score(db, _pick(db, np.argmin))
    for name, s in res.items():
        rows = [i for i in range(len(db)) if td.CLASSES[db.classes[i]] == name]
        gaps = [max(db.equity[i, :db.count[i]]) - min(db.equity[i, :db.count[i]]) for i in rows]
        mean = sum(gaps) / 3
        se = (sum((g - mean) ** 2 for g in gaps) / 2) ** 0.5 / 3 ** 0.5
        assert s.error == pytest.approx(1000 * mean, abs=1e-9) and s.error > 0
        assert s.se == pytest.approx(1000 * se, abs=1e-9)
        assert s.best == sum(g == 0 for g in gaps) / 3


def test_a_play_outside_the_candidates_is_charged_the_worst_candidate(db):
    def outside(board, d1, d2):
        i = [j for j in range(len(db)) if (db.keys[j] == pack(board[None])[0]).all()][0]
        cands = {bytes(c) for c in db.cand[i, :db.count[i]]}
        for p in legal_plays(Position(board), d1, d2):
            if bytes(pack(p.position.board[None])[0]) not in cands:
                return p
        return unpack(db.cand[i, np.argmin(db.equity[i, :db.count[i]])][None])[0]

    res = bm.score(db, outside, sets="contact")
    worst = bm.score(db, _pick(db, np.argmin), sets="contact")
    assert list(res) == ["contact"] and res["contact"].error == worst["contact"].error
    assert res["contact"].outside >= 1


def test_the_evaluator_score_is_the_score_of_its_chooser(db):
    for ev, plies in (("net", 0), ("pubeval", 0), ("net", 1)):
        fast = bm.score_evaluator(db, ev, plies, batch=4)
        slow = bm.score(db, bm.evaluator_chooser(ev, plies))
        assert fast == slow


# ---------------------------------------------------------------------------
# extra plays
# ---------------------------------------------------------------------------

def _outside_plays(db, last: bool):
    """Per decision: a legal play that is not a candidate (the first or the
    last of the generated order), else the best candidate."""
    plays, keys = [], np.zeros((len(db), 10), np.uint8)
    for i, board in enumerate(db.boards):
        cands = {bytes(c) for c in db.cand[i, :db.count[i]]}
        ps = [p for p in legal_plays(Position(board), *(int(x) for x in db.dice[i]))
              if bytes(pack(p.position.board[None])[0]) not in cands]
        play = (ps[-1] if last else ps[0]) if ps else None
        plays.append(play)
        keys[i] = pack(play.position.board[None])[0] if play else db.cand[i, 0]
    return plays, keys


def test_an_extra_play_gets_the_bits_it_would_get_among_the_candidates(built, tmp_path):
    d = _copy(built[0], tmp_path / "x")
    db = bm.load(d)
    plays, keys = _outside_plays(db, last=True)
    before = bm.losses(db, keys)
    assert before[1].sum() == sum(p is not None for p in plays) >= 6
    r = bm.extend(d, keys, jobs=2)
    assert r["rolled_out"] == r["extras"] == before[1].sum()
    ext = bm.load(d)
    assert ext.extra.tolist() == [int(p is not None) for p in plays]
    for i, play in enumerate(plays):
        k = int(ext.count[i])
        assert (ext.cand[i, :k] == db.cand[i, :k]).all() and (ext.equity[i, :k] == db.equity[i, :k]).all()
        if play is None:
            continue
        # the common-dice rollout of every legal play, with the decision's seed
        res = rollout_plays(Position(ext.boards[i]), *(int(x) for x in ext.dice[i]),
                            replace(TINY, seed=td.position_seed(5, i)))
        want = {x.label: x for x in res}[play.notation]
        assert (ext.cand[i, k] == keys[i]).all() and np.isnan(ext.eq0[i, k])
        assert ext.equity[i, k] == want.equity and ext.stderr[i, k] == want.stderr["equity"]
    # the chooser is now charged its own play's loss against the best of all plays
    loss, outside = bm.losses(ext, keys)
    assert not outside.any()
    for i in range(len(ext)):
        n = int(ext.count[i] + ext.extra[i])
        got = ext.equity[i, n - 1] if ext.extra[i] else ext.equity[i, 0]
        assert loss[i] == np.nanmax(ext.equity[i, :n]) - got
    # a second chooser's plays beside the first's: the worst candidate stays the charge
    other = _outside_plays(ext, last=False)[1]
    l2, o2 = bm.losses(ext, other)
    for i in np.flatnonzero(o2):
        k = int(ext.count[i])
        n = k + int(ext.extra[i])
        assert l2[i] == np.nanmax(ext.equity[i, :n]) - np.nanmin(ext.equity[i, :k])
    assert bm.extend(d, keys)["rolled_out"] == 0
    assert len(ext.subset([1, 2]).extra) == 2


def test_the_extra_plays_file_does_not_depend_on_the_order_or_an_interruption(built, tmp_path):
    db = bm.load(built[0])
    a, b = (_outside_plays(db, last)[1] for last in (True, False))
    one, two = _copy(built[0], tmp_path / "ab"), _copy(built[0], tmp_path / "ba")
    bm.extend(one, a, jobs=1)
    bm.extend(one, b, jobs=1)
    bm.extend(two, b, jobs=2)

    def stop(done, total):
        if done == 2:
            raise KeyboardInterrupt

    before = int(bm.load(two).extra.sum())
    todo = int(bm.losses(bm.load(two), a)[1].sum())
    assert todo > 2
    with pytest.raises(KeyboardInterrupt):
        bm.extend(two, a, jobs=1, block_size=1, progress=stop)
    assert int(bm.load(two).extra.sum()) == before + 2          # kept when it stopped
    assert bm.extend(two, a, jobs=1)["rolled_out"] == todo - 2
    assert _files(one) == _files(two)


def test_extend_rolls_out_with_the_references_race_table(built, tmp_path):
    """A benchmark records its race table, and extend rolls out with it
    whatever table the process values races with."""
    from bgfast import _evaluator, bearoff

    db = bm.load(built[0])
    assert db.meta["race_points"] == 10
    keys = _outside_plays(db, last=False)[1]
    one = _copy(built[0], tmp_path / "one")
    bm.extend(one, keys, jobs=1)
    two = _copy(built[0], tmp_path / "two")
    _evaluator.install_bearoff_tables(one_sided=bearoff.default_one_sided())
    try:
        bm.extend(two, keys, jobs=2)
        assert _evaluator.race_points() == 6
    finally:
        _evaluator.install_bearoff_tables()
    assert _files(one) == _files(two)


def test_extend_refuses_bad_plays_another_net_and_damaged_files(built, tmp_path, monkeypatch):
    d = _copy(built[0], tmp_path / "x")
    db = bm.load(d)
    keys = _outside_plays(db, last=True)[1]
    with pytest.raises(BgfastError, match=r"uint8\[9, 10\]"):
        bm.extend(d, keys[:3])
    bad = keys.copy()
    bad[2] = db.keys[5]
    with pytest.raises(BgfastError, match=r"chosen\[2\] is not the result of a legal play"):
        bm.extend(d, bad)
    with monkeypatch.context() as m:
        m.setattr(bm, "_net_checksum", lambda: "0" * 64)
        with pytest.raises(BgfastError, match=r"set \$BGFAST_NET to its weights"):
            bm.extend(d, keys)
    assert not (d / bm.EXTRAS).exists()
    bm.extend(d, keys, jobs=1)
    data = bytearray((d / bm.EXTRAS).read_bytes())
    data[-5] ^= 0x10
    (d / bm.EXTRAS).write_bytes(bytes(data))
    with pytest.raises(DatabaseError, match="checksum mismatch"):
        bm.load(d)
    # extra plays of another benchmark (other settings) do not belong
    other = tmp_path / "other"
    bm.build(other, 1, **{**BUILD, "settings": replace(TINY, trials=3)}, sets=["race"])
    o = bm.load(other)
    bm.extend(other, _outside_plays(o, last=True)[1], jobs=1)
    (d / bm.EXTRAS).write_bytes((other / bm.EXTRAS).read_bytes())
    with pytest.raises(DatabaseError, match="does not belong with the shards: its settings"):
        bm.load(d)


# ---------------------------------------------------------------------------
# the commands
# ---------------------------------------------------------------------------

@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke


def test_cli_build_and_score(run, built, db, tmp_path):
    out = tmp_path / "c"
    args = ("benchmark", "build", "-o", out, "-n", 3, "--trials", 4, "--truncate", 4, "--seed", 7,
            "--players", QUICK, "-j", 1, "--set", "race")
    r = run(*args, "--limit", 1)
    assert r.exit_code == 0, r.output
    assert "1 of 3 decisions (race 3) rolled out" in r.stdout
    r = run(*args)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "already holds" in r.stderr
    r = run(*args, "--resume", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["in_this_run"] == 2
    r = run("benchmark", "score", out, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert list(doc["sets"]) == ["race"] and doc["sets"]["race"]["decisions"] == 3
    r = run("benchmark", "score", built[0], "-e", "pubeval", "--set", "contact")
    assert r.exit_code == 0, r.output
    want = bm.score_evaluator(db, "pubeval", 0, sets="contact")["contact"]
    assert f"contact          3 {want.error:>8.2f}" in r.stdout


def test_cli_extend_and_score_with_weights(run, built, tmp_path):
    d = _copy(built[0], tmp_path / "x")
    db = bm.load(d)
    want = bm.losses(db, bm.evaluator_choices(db, "pubeval"))[1].sum()
    r = run("benchmark", "extend", d, "-e", "pubeval", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["rolled_out"] == want and doc["evaluator"] == "pubeval"
    r = run("benchmark", "score", d, "-e", "pubeval", "--json")
    assert all(v["outside"] == 0 for v in json.loads(r.stdout)["sets"].values())
    net = REPO / "bgfast" / "data" / "net" / "bgfast-net.npz"
    a = run("benchmark", "score", d, "--weights", net, "--ply", 1, "--json")
    b = run("benchmark", "score", d, "--ply", 1, "--json")
    assert a.exit_code == 0 and json.loads(a.stdout)["sets"] == json.loads(b.stdout)["sets"]
    r = run("benchmark", "extend", d, "--weights", net)
    assert r.exit_code == 0 and "extra plays in all" in r.stdout


def test_cli_errors_are_one_line(run, built, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    bad = _copy(built[0], tmp_path / "bad")
    (bad / "shard-000000.bgtd").write_bytes(b"BGFTDATA\x05\x00\x00\x00{oops")
    cases = [
        ("benchmark", "build", "-o", f),                                  # a file
        ("benchmark", "build", "-o", tmp_path / "no" / "db"),             # no directory
        ("benchmark", "build", "-o", tmp_path / "x", "--set", "backgame"),
        ("benchmark", "build", "-o", tmp_path / "x", "--exclude", tmp_path / "none.bgtd"),
        ("benchmark", "build", "-o", tmp_path / "x", "--exclude", f),     # not positions
        ("benchmark", "score", tmp_path / "none"),
        ("benchmark", "score", f),
        ("benchmark", "score", bad),                                      # corrupt
        ("benchmark", "score", built[0], "-e", "nothing"),
        ("benchmark", "score", built[0], "--ply", 5),
        ("benchmark", "score", built[0], "-e", "pubeval", "--weights", f),
        ("benchmark", "extend", built[0], "--weights", tmp_path / "none.npz"),
        ("benchmark", "extend", tmp_path / "none"),
        ("benchmark", "extend", bad),
    ]
    for args in cases:
        r = run(*args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, (args, r.stderr)
    assert not (tmp_path / "x").exists()
