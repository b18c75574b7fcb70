"""Training data: self-play positions, their classes, the file format, the
rollout labeller (seeds, shards, resume after a kill) and the commands."""
import json
import subprocess
import sys
import time
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast.cli import main
from bgfast.errors import BgfastError, DatabaseError
from bgfast.position import INITIAL_BOARD, Position, PositionClass, classify_boards
from bgfast.rollout import rollout
from bgfast import traindata as td

QUICK = "net=2,pubeval=1,beginner=1"            # the fast players
#: players whose games do not depend on the shipped net's weights: samples
#: whose mix of classes a test relies on stay the same when the net changes
NETLESS = "pubeval=1,beginner=1"
TINY = replace(td.LABEL_SETTINGS, trials=6, truncate=3, seed=9)


def board(on_roll: dict, opponent: dict) -> np.ndarray:
    """A board from {point: checkers} of each side (point 25 = the bar)."""
    b = np.zeros((2, 25), dtype=np.uint8)
    for row, side in ((1, on_roll), (0, opponent)):
        for point, n in side.items():
            b[row, point - 1] = n
    return b


@pytest.fixture(scope="module")
def sample():
    return td.sample_positions(120, seed=4, players=QUICK, jobs=1)


@pytest.fixture(scope="module")
def positions_file(sample, tmp_path_factory):
    path = tmp_path_factory.mktemp("pos") / "p.bgtd"
    td.save_positions(sample, path)
    return path


# ---------------------------------------------------------------------------
# classes
# ---------------------------------------------------------------------------

def test_checkers_in_play_counts_the_board_less_the_deep_piles():
    b = board({1: 6, 2: 4, 13: 5}, {6: 5, 8: 3, 13: 5, 24: 2})
    # on roll: 15 on the board, 10 on its 1- and 2-points of which 8 are surplus
    assert td.checkers_in_play(b).tolist() == [[15, 7]]
    assert td.checkers_in_play(INITIAL_BOARD).tolist() == [[15, 15]]
    # the bar counts; borne-off checkers do not
    b = board({25: 1, 6: 2, 1: 3}, {1: 2, 2: 2, 3: 1})
    assert td.checkers_in_play(b).tolist() == [[3, 5]]


def test_classify_hand_made_boards():
    start = INITIAL_BOARD
    # contact: 8 checkers left in play on each side
    eight = board({24: 2, 6: 3, 5: 3}, {24: 1, 6: 4, 5: 3})
    # the same with one more checker of the side on roll borne off: 7 in play -> crashed
    seven = board({24: 2, 6: 3, 5: 2}, {24: 1, 6: 4, 5: 3})
    # 15 checkers on the board, 10 piled on the 1- and 2-points: 7 in play -> crashed
    piled = board({1: 6, 2: 4, 13: 5}, {6: 5, 8: 3, 13: 5, 24: 2})
    # one checker fewer piled deep: 8 in play -> contact
    less = board({1: 5, 2: 4, 13: 6}, {6: 5, 8: 3, 13: 5, 24: 2})
    # the opponent crashed (it does not matter who is on roll)
    opp = board({6: 5, 8: 3, 13: 5, 20: 2}, {1: 2, 2: 2, 3: 2, 24: 1})
    # no contact: a race, whatever is piled deep
    race = board({1: 6, 2: 4, 3: 5}, {1: 3, 5: 4, 9: 2})
    bearoff = board({1: 2, 2: 2}, {3: 3})
    got = td.classify(np.stack([start, eight, seven, piled, less, opp, race, bearoff]))
    C, X, R = td.CONTACT, td.CRASHED, td.RACE
    assert got.tolist() == [C, C, X, X, C, X, R, R]
    assert td.CRASHED_IN_PLAY == 7
    assert td.exact_covered(np.stack([bearoff, race, start])).tolist() == [True, False, False]


# ---------------------------------------------------------------------------
# positions
# ---------------------------------------------------------------------------

def test_sample_positions_follow_the_rules(sample):
    assert len(sample) == 120
    keys = [k.tobytes() for k in sample.keys]
    assert len(set(keys)) == 120                                  # distinct
    boards = sample.boards
    assert not td.exact_covered(boards).any()                     # no exact bear-off, no end
    assert (classify_boards(boards) != PositionClass.OVER).all()
    assert sample.classes.tolist() == td.classify(boards).tolist()
    # shares by weight: 2 : 1 : 1
    assert sample.source_counts() == {"net": 60, "pubeval": 30, "beginner": 30}
    assert sum(sample.class_counts().values()) == 120
    # shuffled: the sources are mixed in the first positions
    assert len(set(sample.sources[:20].tolist())) == 3


def test_sample_positions_are_determined_by_the_seed(sample, positions_file, tmp_path):
    again = td.sample_positions(120, seed=4, players=QUICK, jobs=2)
    td.save_positions(again, tmp_path / "a.bgtd")
    assert (tmp_path / "a.bgtd").read_bytes() == positions_file.read_bytes()
    other = td.sample_positions(120, seed=5, players=QUICK, jobs=1)
    assert other.digest != sample.digest


def test_a_pool_spreads_the_positions_over_more_games():
    plain = td.sample_positions(60, seed=4, players="net", jobs=1)
    pooled = td.sample_positions(60, seed=4, players="net", jobs=2, pool=600)
    whole = td.sample_positions(600, seed=4, players="net", jobs=1)
    assert len(pooled) == 60 and len({k.tobytes() for k in pooled.keys}) == 60
    # a seeded sample of the pool: the first 60 of the whole pool's shuffled order
    np.testing.assert_array_equal(pooled.keys, whole.keys[:60])
    assert pooled.meta["pool"] == 600 and "pool" not in plain.meta
    assert pooled.meta["games"]["net"] > plain.meta["games"]["net"]
    assert pooled.classes.tolist() == td.classify(pooled.boards).tolist()
    assert td.sample_positions(60, seed=4, players="net", jobs=1, pool=600).digest == pooled.digest
    with pytest.raises(BgfastError, match="at least n"):
        td.sample_positions(60, seed=4, players="net", pool=59)


def test_sample_positions_exclude_and_reject(sample):
    more = td.sample_positions(60, seed=4, players=QUICK, jobs=1, exclude=sample)
    assert not {k.tobytes() for k in more.keys} & {k.tobytes() for k in sample.keys}
    with pytest.raises(BgfastError, match="unknown player"):
        td.sample_positions(10, seed=1, players="net,nobody")
    with pytest.raises(BgfastError, match="positive weight"):
        td.sample_positions(10, seed=1, players="net=0")
    with pytest.raises(BgfastError, match="at least 1"):
        td.sample_positions(0, seed=1)
    with pytest.raises(BgfastError, match="jobs must be at least 1"):
        td.sample_positions(5, seed=1, jobs=0)
    with pytest.raises(BgfastError, match="shape"):
        td.sample_positions(5, seed=1, exclude=np.zeros((3, 9), dtype=np.uint8))


def test_sample_positions_of_chosen_classes(sample, positions_file, tmp_path):
    race = td.sample_positions(40, seed=4, players=QUICK, jobs=1, classes=["race"],
                               bearoffs=False, exclude=td.load_keys(positions_file))
    assert len(race) == 40 and race.class_counts() == {"contact": 0, "crashed": 0, "race": 40}
    cls = classify_boards(race.boards)
    assert (cls == PositionClass.RACE).all()                      # no bear-off, no contact
    assert not {k.tobytes() for k in race.keys} & {k.tobytes() for k in sample.keys}
    assert race.meta["classes"] == ["race"] and race.meta["bearoffs"] is False
    with_bearoffs = td.sample_positions(40, seed=4, players=QUICK, jobs=1, classes="race")
    assert (classify_boards(with_bearoffs.boards) == PositionClass.BEAROFF).any()
    both = td.sample_positions(30, seed=4, players=QUICK, jobs=1, classes=("contact", "crashed"))
    assert both.class_counts()["race"] == 0 and both.class_counts()["contact"] > 0
    with pytest.raises(BgfastError, match="unknown position class 'races'"):
        td.sample_positions(5, seed=1, classes=["races"])
    with pytest.raises(BgfastError, match="no position class"):
        td.sample_positions(5, seed=1, classes=[])


def test_load_keys_reads_positions_and_decisions(sample, positions_file, tmp_path):
    from bgfast import benchmark

    assert td.load_keys(positions_file).tobytes() == sample.keys.tobytes()
    d = benchmark.select_decisions(6, seed=2, players=QUICK, jobs=1)
    benchmark.save_decisions(d, tmp_path / "decisions.bgtd")
    assert td.load_keys(tmp_path / "decisions.bgtd").tobytes() == d.keys.tobytes()
    lab = tmp_path / "L"
    td.label(sample, TINY, out=lab, limit=2, jobs=1)
    shard = sorted(lab.glob("*.bgtd"))[0]
    with pytest.raises(DatabaseError, match="not positions or benchmark-decisions"):
        td.load_keys(shard)


def test_values_are_the_nets_lookahead_and_resume(sample, positions_file, tmp_path, run,
                                                   monkeypatch):
    from bgfast import net as netmod
    from bgfast.evaluate import equity

    out = tmp_path / "V"
    r = td.label_values(sample, 1, out, jobs=2, shard_size=50, block_size=16)
    assert r["positions"] == 120 and r["shards"] == 3            # 50 + 50 + 20
    lab = td.load_labels(out)
    want = netmod.default_net().evaluate_plies(sample.boards, 1)
    assert lab.probs.tobytes() == want.tobytes()
    assert (lab.equity == equity(want)).all() and not lab.stderr.any() and not lab.games.any()
    assert lab.meta["settings"] == {"values": "net", "plies": 1}
    # stopped part way and resumed: the same files as one run
    part = tmp_path / "P"
    td.label_values(sample, 1, part, jobs=1, shard_size=50, limit=70)
    td.label_values(sample, 1, part, jobs=1, shard_size=50, resume=True)
    for f in sorted(out.iterdir()):
        assert (part / f.name).read_bytes() == f.read_bytes(), f.name
    with pytest.raises(BgfastError, match="already holds"):
        td.label_values(sample, 1, part)
    with pytest.raises(DatabaseError, match="settings"):
        td.label_values(sample, 2, part, resume=True, shard_size=50)
    with pytest.raises(BgfastError, match="plies must be 1, 2 or 3"):
        td.label_values(sample, 0, tmp_path / "W")
    # the race table is part of what the values are: recorded, and checked on resume
    assert lab.meta["race_points"] == 10
    with monkeypatch.context() as m:
        m.setattr(td, "race_points", lambda: 6)
        with pytest.raises(DatabaseError, match="its race_points is 10, not 6"):
            td.label_values(sample, 1, part, resume=True, shard_size=50)
    # files made before these fields were recorded: the 6-point race table
    # and version 1 of the search
    assert lab.meta["search"] == netmod.SEARCH_VERSION == 2
    for field, then, now in (("race_points", 6, 10), ("search", 1, 2)):
        legacy = tmp_path / f"without-{field}"
        legacy.mkdir()
        for f in sorted(out.iterdir()):
            arrays, meta = td._read(f, "labels")
            del meta[field]
            td._write(legacy / f.name, "labels", arrays, meta)
        assert td.load_labels(legacy).meta[field] == then
        with pytest.raises(DatabaseError, match=f"its {field} is {then}, not {now}"):
            td.label_values(sample, 1, legacy, resume=True, shard_size=50)
    r = run("data", "values", positions_file, "-o", tmp_path / "C", "--plies", 1, "-j", 1,
            "--limit", 30, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["positions"] == 30
    assert td.load_labels(tmp_path / "C").probs.tobytes() == want[:30].tobytes()
    for bad in (4, "0,1", "1,1", "1,x", ","):
        r = run("data", "values", positions_file, "-o", tmp_path / "C", "--plies", bad)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, bad
        assert "is not a look-ahead" in r.stderr
    r = run("data", "values", positions_file, "-o", tmp_path / "C")
    assert r.exit_code == 2 and "already holds" in r.stderr and r.stderr.count("\n") == 1


def test_values_at_two_depths_are_the_mean_of_their_probabilities(sample, positions_file,
                                                                  tmp_path, run):
    from bgfast import net as netmod

    boards = sample.boards[:24]
    one, two = (netmod.default_net().evaluate_plies(boards, d) for d in (1, 2))
    r = run("data", "values", positions_file, "-o", tmp_path / "M", "--plies", "2,1", "-j", 1,
            "--limit", 24, "--json")
    assert r.exit_code == 0, r.output
    lab = td.load_labels(tmp_path / "M")
    assert lab.probs.tobytes() == ((one + two) / 2).tobytes()
    assert lab.meta["settings"] == {"values": "net", "plies": [1, 2]}
    # the depths are part of what the values are: checked on resume
    with pytest.raises(DatabaseError, match="settings"):
        td.label_values(sample, 2, tmp_path / "M", resume=True)
    assert td.label_values(sample, [2, 1], tmp_path / "M", resume=True, limit=24,
                           jobs=1)["labelled"] == 0
    assert td.value_depths(2) == (2,) and td.value_depths((3, 1)) == (1, 3)
    for bad in (0, (), (1, 1), (1, 4), (1.0, 2), "12"):
        with pytest.raises(BgfastError, match="plies must be 1, 2 or 3"):
            td.value_depths(bad)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """A sample of all three classes (98 contact and 11 crashed positions
    and 11 races, from the netless players' games), and its positions file."""
    sample = td.sample_positions(120, seed=6, players=NETLESS, jobs=1)
    assert sample.class_counts() == {"contact": 98, "crashed": 11, "race": 11}
    path = tmp_path_factory.mktemp("mixed") / "p.bgtd"
    td.save_positions(sample, path)
    return sample, path


def test_values_and_labels_of_chosen_classes(mixed, tmp_path, run):
    from bgfast import net as netmod

    sample, positions_file = mixed
    crashed = td.select_classes(sample, ["crashed"])
    rows = np.flatnonzero(sample.classes == td.CRASHED)
    assert 0 < len(crashed) < len(sample)
    assert crashed.keys.tobytes() == sample.keys[rows].tobytes()
    assert crashed.meta["selected"] == ["crashed"] and crashed.digest != sample.digest
    assert td.select_classes(sample) is sample
    assert td.select_classes(sample, ["contact", "crashed", "race"]) is sample
    both = td.select_classes(sample, ["race", "contact"])
    assert len(both) + len(crashed) == len(sample)
    with pytest.raises(BgfastError, match="unknown position class"):
        td.select_classes(sample, ["bearoff"])
    with pytest.raises(BgfastError, match="no position class"):
        td.select_classes(sample, [])
    race = td.select_classes(sample, ["race"])
    assert race.keys.tobytes() == sample.keys[sample.classes == td.RACE].tobytes()
    r = run("data", "values", positions_file, "-o", tmp_path / "R", "--class", "CRASHED",
            "--plies", 1, "-j", 1, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["positions"] == len(rows)
    lab = td.load_labels(tmp_path / "R")
    assert lab.keys.tobytes() == sample.keys[rows].tobytes() and (lab.classes == td.CRASHED).all()
    want = netmod.default_net().evaluate_plies(sample.boards[rows], 1)
    assert lab.probs.tobytes() == want.tobytes()
    assert lab.meta["positions"] == crashed.digest
    r = run("data", "label", positions_file, "-o", tmp_path / "RL", "--class", "crashed", "-n", 2,
            "-t", 2, "--limit", 3, "-j", 1, "--json")
    assert r.exit_code == 0, r.output
    lab = td.load_labels(tmp_path / "RL")
    assert lab.keys.tobytes() == sample.keys[rows[:3]].tobytes()
    assert lab.meta["positions"] == crashed.digest
    # resuming with another selection is refused: its positions differ
    r = run("data", "label", positions_file, "-o", tmp_path / "RL", "--class", "contact", "-n", 2,
            "-t", 2, "--limit", 3, "-j", 1, "--resume")
    assert r.exit_code != 0 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert td.load_labels(tmp_path / "RL").keys.tobytes() == sample.keys[rows[:3]].tobytes()
    # a class the file does not hold: a usage error, and no directory
    no_race = tmp_path / "no-race.bgtd"
    td.save_positions(td.select_classes(sample, ["contact", "crashed"]), no_race)
    r = run("data", "values", no_race, "-o", tmp_path / "E", "--class", "race")
    assert r.exit_code == 2 and "no positions of the class race" in r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp_path / "E").exists()
    r = run("data", "values", positions_file, "-o", tmp_path / "X", "--class", "bearoff")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and not (tmp_path / "X").exists()


@pytest.fixture(scope="module")
def race_table(tmp_path_factory):
    """A one-sided 8-point 15-checker table (the races of the sample that it
    holds are valued by its convolution)."""
    from bgfast import bearoff

    path = tmp_path_factory.mktemp("os") / "os8.bgb"
    bearoff.build_one_sided(8, 15, path)
    return path


def test_values_with_a_race_table(tmp_path, run, race_table):
    from bgfast import bearoff
    from bgfast import net as netmod

    races = td.sample_positions(200, seed=6, players=NETLESS, jobs=1, classes=["race"])
    boards = races.boards
    table = bearoff.open(race_table)
    probe = table.probe_batch(boards)
    home = (boards[:, :, 6:].sum(axis=2) == 0).all(axis=1)
    inside = probe["inside"] & ~home
    assert inside.sum() >= 10 and (~probe["inside"]).sum() >= 20 and home.sum() >= 5
    out = tmp_path / "T"
    r = td.label_values(races, 1, out, race_table=race_table, jobs=2, shard_size=64,
                        block_size=16)
    assert r["positions"] == 200
    lab = td.load_labels(out)
    want = netmod.default_net().evaluate_plies(boards, 1)
    # inside the table (not bear-offs): its convolution; elsewhere the net's look-ahead
    assert lab.probs[inside].tobytes() == probe["probs"][inside].tobytes()
    assert lab.probs[~inside].tobytes() == want[~inside].tobytes()
    assert (lab.probs[inside] != want[inside]).any()
    assert lab.meta["settings"] == {"values": "net", "plies": 1, "race_table": {
        "points": 8, "checkers": 15, "crc": table.data_crc}}
    # resumed from part way: the same files; without the table: another setting
    part = tmp_path / "TP"
    td.label_values(races, 1, part, race_table=race_table, jobs=1, shard_size=64, limit=100)
    td.label_values(races, 1, part, race_table=race_table, jobs=1, shard_size=64, resume=True)
    for f in sorted(out.iterdir()):
        assert (part / f.name).read_bytes() == f.read_bytes(), f.name
    with pytest.raises(DatabaseError, match="settings"):
        td.label_values(races, 1, part, jobs=1, shard_size=64, resume=True)
    # the command, and the tables it refuses
    p = tmp_path / "races.bgtd"
    td.save_positions(races, p)
    r = run("data", "values", p, "-o", tmp_path / "C", "--plies", 1, "--race-table", race_table,
            "-j", 1, "--json")
    assert r.exit_code == 0, r.output
    assert td.load_labels(tmp_path / "C").probs.tobytes() == lab.probs.tobytes()
    r = run("data", "values", p, "-o", tmp_path / "D", "--race-table", tmp_path / "none.bgb")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and not (tmp_path / "D").exists()
    small = tmp_path / "os4.bgb"
    bearoff.build_one_sided(4, 8, small)
    r = run("data", "values", p, "-o", tmp_path / "E", "--race-table", small)
    assert r.exit_code == 2 and "not a one-sided 15-checker table" in r.stderr
    assert r.stderr.count("\n") == 1
    bad = tmp_path / "bad.bgb"
    bad.write_bytes(race_table.read_bytes()[:1000])
    r = run("data", "values", p, "-o", tmp_path / "F", "--race-table", bad)
    assert r.exit_code == 2 and "truncated" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "E").exists() and not (tmp_path / "F").exists()


def test_gnubg_as_a_source(gnubg_nn):
    ps = td.sample_positions(40, seed=2, players="gnubg=1,net=1", jobs=1)
    assert ps.source_counts() == {"gnubg": 20, "net": 20}
    assert ps.meta["games"]["gnubg"] >= 1


def test_positions_file_round_trip(sample, positions_file):
    back = td.load_positions(positions_file)
    assert back.keys.tobytes() == sample.keys.tobytes()
    assert back.classes.tolist() == sample.classes.tolist()
    assert back.sources.tolist() == sample.sources.tolist()
    assert back.players == sample.players and back.digest == sample.digest
    assert back.meta["seed"] == 4 and back.meta["crashed_in_play"] == td.CRASHED_IN_PLAY
    assert Position(back.boards[0]).key == back.keys[0].tobytes()


def test_corrupt_or_wrong_files_are_refused(positions_file, tmp_path):
    data = positions_file.read_bytes()
    bad = tmp_path / "bad.bgtd"
    flipped = bytearray(data)
    flipped[-5] ^= 1
    bad.write_bytes(bytes(flipped))
    with pytest.raises(DatabaseError, match="checksum mismatch"):
        td.load_positions(bad)
    bad.write_bytes(data[:-7])
    with pytest.raises(DatabaseError, match="truncated"):
        td.load_positions(bad)
    bad.write_bytes(data + b"\0")
    with pytest.raises(DatabaseError, match="bytes after the data"):
        td.load_positions(bad)
    bad.write_bytes(b"PK\x03\x04 not ours")
    with pytest.raises(DatabaseError, match="not a bgfast training data file"):
        td.load_positions(bad)
    bad.write_bytes(data[:20] + b"\xff" + data[21:])
    with pytest.raises(DatabaseError, match="header"):
        td.load_positions(bad)
    # a header changed by hand (the version) no longer matches its checksum
    text = data.replace(b'"version":1', b'"version":2', 1)
    assert text != data
    bad.write_bytes(text)
    with pytest.raises(DatabaseError, match="format version 2"):
        td.load_positions(bad)
    with pytest.raises(DatabaseError, match="cannot read"):
        td.load_positions(tmp_path / "missing.bgtd")


# ---------------------------------------------------------------------------
# labels
# ---------------------------------------------------------------------------

def test_labels_are_the_rollouts_of_each_position_with_its_seed(sample, tmp_path):
    r = td.label(sample, TINY, tmp_path / "L", jobs=1, limit=7, shard_size=5)
    assert r["labelled"] == 7 and r["shards"] == 1
    lab = td.load_labels(tmp_path / "L")
    assert lab.index.tolist() == list(range(7))
    assert lab.keys.tobytes() == sample.keys[:7].tobytes()
    for i in (0, 3, 6):
        want = rollout(Position(sample.boards[i]), replace(TINY, seed=td.position_seed(9, i)))
        assert lab.mean[i].tolist() == [want.mean[k] for k in td.LABEL_NAMES]
        assert lab.stderr[i].tolist() == [want.stderr[k] for k in td.LABEL_NAMES]
        assert lab.games[i] == 6 and lab.plies[i] == want.average_plies
    assert lab.meta["settings"] == td.label_fields(TINY)
    assert lab.meta["positions"] == sample.digest
    # seeds of different positions differ, and depend on the run's seed
    assert td.position_seed(9, 0) != td.position_seed(9, 1) != td.position_seed(8, 1)


def _files(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_labels_do_not_depend_on_jobs_blocks_or_stops(sample, tmp_path):
    td.label(sample, TINY, tmp_path / "a", jobs=1, limit=30, shard_size=8)
    td.label(sample, TINY, tmp_path / "b", jobs=2, limit=30, shard_size=8, block_size=3)
    # stopped at 11 (inside a shard), then resumed
    td.label(sample, TINY, tmp_path / "c", jobs=2, limit=11, shard_size=8)
    assert sorted(_files(tmp_path / "c")) == ["partial.bgtd", "shard-000000.bgtd"]
    r = td.label(sample, TINY, tmp_path / "c", jobs=1, limit=30, shard_size=8, resume=True)
    assert r["labelled"] == 19
    a = _files(tmp_path / "a")
    assert sorted(a) == ["partial.bgtd"] + [f"shard-00000{k}.bgtd" for k in range(3)]
    assert _files(tmp_path / "b") == a == _files(tmp_path / "c")


def test_labelling_to_the_end_and_refusals(sample, tmp_path):
    small = td.PositionSet(sample.keys[:10], sample.classes[:10], sample.sources[:10],
                           sample.players, sample.meta)
    out = tmp_path / "L"
    r = td.label(small, TINY, out, jobs=1, shard_size=4)
    assert r["shards"] == 3 and sorted(_files(out)) == [f"shard-00000{k}.bgtd" for k in range(3)]
    assert len(td.load_labels(out)) == 10
    again = td.label(small, TINY, out, jobs=1, shard_size=4, resume=True)
    assert again["labelled"] == 0
    with pytest.raises(BgfastError, match="already holds labels"):
        td.label(small, TINY, out, jobs=1, shard_size=4)
    with pytest.raises(DatabaseError, match="settings"):
        td.label(small, replace(TINY, trials=7), out, jobs=1, shard_size=4, resume=True)
    with pytest.raises(DatabaseError, match="positions"):
        td.label(sample, TINY, out, jobs=1, shard_size=4, resume=True)
    (out / "shard-000001.bgtd").unlink()
    with pytest.raises(DatabaseError, match="shard-000001.bgtd is missing"):
        td.label(small, TINY, out, jobs=1, shard_size=4, resume=True)
    with pytest.raises(DatabaseError, match="do not follow"):
        td.load_labels(out)
    with pytest.raises(BgfastError, match="does not exist"):
        td.label(small, TINY, tmp_path / "no" / "L", jobs=1)
    with pytest.raises(DatabaseError, match="holds no labels"):
        td.load_labels(tmp_path)


def test_killed_labelling_resumes_with_the_same_files(positions_file, tmp_path):
    out = tmp_path / "L"
    args = ["--trials", "8", "--truncate", "4", "--seed", "3", "--shard-size", "48",
            "--checkpoint-seconds", "0.05"]
    cmd = [sys.executable, "-m", "bgfast", "data", "label", str(positions_file), "-o", str(out),
           "--jobs", "2"] + args
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not list(out.glob("*.bgtd")):
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    time.sleep(0.2)
    done = len(td.load_labels(out))
    assert 0 < done < 120, "the run should have been killed midway"
    r = subprocess.run(cmd + ["--resume", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["labelled"] == 120 - done
    whole = tmp_path / "W"
    s = replace(td.LABEL_SETTINGS, trials=8, truncate=4, seed=3)
    td.label(positions_file, s, whole, jobs=1, shard_size=48)
    assert _files(out) == _files(whole)


# ---------------------------------------------------------------------------
# the commands
# ---------------------------------------------------------------------------

@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke


def test_cli_positions_and_label(run, tmp_path, sample, monkeypatch):
    p = tmp_path / "p.bgtd"
    from bgfast import _progress

    monkeypatch.setenv("BGFAST_PROGRESS", "1")            # the bar, as on a terminal
    monkeypatch.setattr(_progress, "DELAY", 0)              # at once
    r = run("data", "positions", "-n", 120, "--seed", 4, "--players", QUICK, "-o", p, "-j", 1)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"{p}: 120 positions (contact ") and "120/120" in r.stderr
    monkeypatch.undo()
    assert td.load_positions(p).digest == sample.digest
    out = tmp_path / "L"
    r = run("data", "label", p, "-o", out, "--trials", 6, "--truncate", 3, "--seed", 9,
            "--limit", 5, "-j", 1, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["labelled"] == 5
    lab = td.load_labels(out)
    want = rollout(Position(sample.boards[4]), replace(TINY, seed=td.position_seed(9, 4)))
    assert lab.equity[4] == want.equity
    r = run("data", "label", p, "-o", out, "--trials", 6, "--truncate", 3, "--seed", 9, "-j", 1,
            "--limit", 8)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "already holds labels" in r.stderr
    r = run("data", "label", p, "-o", out, "--trials", 6, "--truncate", 3, "--seed", 9, "-j", 1,
            "--limit", 8, "--resume")
    assert r.exit_code == 0 and "8 positions labelled (3 in this run" in r.stdout
    assert len(td.load_labels(out)) == 8
    r = run("data", "positions", "-n", 20, "--seed", 4, "--players", QUICK, "-o", tmp_path / "r.bgtd",
            "-j", 1, "--class", "race", "--no-bearoffs", "--exclude", p, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["classes"] == {"contact": 0, "crashed": 0, "race": 20}
    race = td.load_positions(tmp_path / "r.bgtd")
    assert (classify_boards(race.boards) == PositionClass.RACE).all()
    assert not {k.tobytes() for k in race.keys} & {k.tobytes() for k in sample.keys}


def test_cli_usage_errors_are_one_line(run, tmp_path):
    p = tmp_path / "bad.bgtd"
    p.write_bytes(b"BGFTDATA\x05\x00\x00\x00{oops")
    cases = [
        ("data", "label", p, "-o", tmp_path / "L"),                       # corrupt
        ("data", "label", tmp_path / "none.bgtd", "-o", tmp_path / "L"),  # missing
        ("data", "positions", "-n", 5, "-o", tmp_path / "no" / "p.bgtd"),  # no directory
        ("data", "positions", "-n", 5, "-o", tmp_path / "p.bgtd", "--players", "nobody"),
        ("data", "positions", "-n", 0, "-o", tmp_path / "p.bgtd"),
        ("data", "positions", "-n", 5, "-o", tmp_path),                   # a directory
        ("data", "positions", "-n", 5, "-o", tmp_path / "p.bgtd", "--class", "races"),
        ("data", "positions", "-n", 5, "-o", tmp_path / "p.bgtd", "--pool", 4),
    ]
    for args in cases:
        r = run(*args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, (args, r.stderr)
    assert not (tmp_path / "p.bgtd").exists() and not (tmp_path / "L").exists()
