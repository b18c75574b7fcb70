"""Bad input to the Python API raises a :class:`bgfast.errors.BgfastError`
subclass with a clear message: formats, evaluate, analyze, bearoff,
matfile, sgf and metgen."""
import json

import numpy as np
import pytest

from bgfast import analyze, bearoff, formats, matfile, metgen, sgf
from bgfast.errors import (BgfastError, DatabaseError, InvalidIdError, InvalidMoveError,
                           InvalidPositionError, InvalidRecordError, InvalidScoreError,
                           OutputPathError)
from bgfast.evaluate import (MAX_PLIES, evaluate_cube, evaluate_cube_batch, evaluate_ply,
                             rank_plays, rank_plays_batch)
from bgfast.position import Position

START = Position.initial()
XGID_BODY = "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:9:"
LONG = "9" * 5000


# -- formats -----------------------------------------------------------------

@pytest.mark.parametrize("text", [XGID_BODY + LONG,
                                  "XGID=-b----E-C---eE---c-e----B-:" + LONG + ":1:1:00:2:4:0:9:10"],
                         ids=["max_cube", "cube"])
def test_xgid_with_a_huge_number_field(text):
    with pytest.raises(InvalidIdError, match=r"has 5000 characters"):
        formats.parse_position_text(text)
    with pytest.raises(InvalidIdError, match=r"has 5000 characters"):
        Position.from_xgid(text)


def test_move_with_a_huge_repeat_count():
    with pytest.raises(InvalidMoveError, match=r"5000-digit repeat count"):
        formats.parse_play(START.board, f"13/7({LONG})")


def test_playing_order_of_a_bad_move():
    with pytest.raises(InvalidMoveError, match=r"\(from, to\) pair"):
        formats.playing_order([(1,)])
    with pytest.raises(InvalidMoveError, match=r"checker move 3/5 is invalid"):
        formats.playing_order([(3, 5)])
    assert formats.playing_order([(6, 0), (13, 7)]) == [(13, 7), (6, 0)]


def test_format_plays_of_bad_moves():
    with pytest.raises(InvalidMoveError, match=r"shape \(1, 1, 2\)"):
        formats.format_plays(START.board, [[(30, 1)]])
    with pytest.raises(InvalidMoveError, match=r"neither -1 padding nor a move"):
        formats.format_plays(START.board, [[(30, 1)] * 4])
    with pytest.raises(InvalidMoveError, match=r"neither -1 padding nor a move"):
        formats.format_plays(START.board, np.full((1, 4, 2), 300))
    with pytest.raises(InvalidMoveError, match=r"ragged"):
        formats.format_plays(START.board, [[(13, 7)], [(13, 7), (8, 5)]])
    with pytest.raises(InvalidMoveError, match=r"float64"):
        formats.format_plays(START.board, np.full((1, 4, 2), 1.5))
    assert formats.format_plays(START.board, []) == []
    assert formats.format_plays(START.board, [[(13, 7), (13, 7), (-1, -1), (-1, -1)]]) == ["13/7(2)"]


# -- evaluate ----------------------------------------------------------------

@pytest.mark.parametrize("plies", [-1, MAX_PLIES + 1, 5, 1.0, True])
def test_rank_plays_plies_out_of_range(plies):
    with pytest.raises(BgfastError, match=rf"plies must be an integer 0\.\.{MAX_PLIES}"):
        rank_plays(START, 3, 1, plies=plies, evaluator="pubeval")


@pytest.mark.parametrize("keep", [0, -1, 2.5])
def test_rank_plays_batch_keep_below_one(keep):
    with pytest.raises(BgfastError, match=r"keep must be an integer >= 1"):
        rank_plays_batch(START.board[None], np.array([[3, 1]]), keep=keep, evaluator="pubeval")
    with pytest.raises(BgfastError, match=r"keep must be an integer >= 1"):
        rank_plays(START, 3, 1, keep=keep, evaluator="pubeval")


@pytest.mark.parametrize("window", [-0.1, float("nan"), "x"])
def test_rank_plays_bad_window(window):
    with pytest.raises(BgfastError, match=r"window must be a number >= 0"):
        rank_plays(START, 3, 1, window=window, evaluator="pubeval")


def test_evaluate_ply_has_an_upper_bound():
    with pytest.raises(BgfastError, match=rf"plies must be an integer 0\.\.{MAX_PLIES}, not 9"):
        evaluate_ply(START.board[None], 9, "pubeval")
    with pytest.raises(BgfastError, match=r"not -1"):
        evaluate_ply(START.board[None], -1, "pubeval")


@pytest.mark.parametrize("plies", [-1, MAX_PLIES + 1])
def test_evaluate_cube_bad_plies(plies):
    from bgfast.cube import CubeContext

    with pytest.raises(BgfastError, match=r"plies must be an integer 0\.\."):
        evaluate_cube(START, CubeContext(), plies=plies, evaluator="pubeval")
    with pytest.raises(BgfastError, match=r"plies must be an integer 0\.\."):
        evaluate_cube_batch(START.board[None], CubeContext(), plies=plies, evaluator="pubeval")


# -- analyze -----------------------------------------------------------------

@pytest.mark.parametrize("kw,msg", [
    (dict(ply=5), r"ply must be an integer 0\.\."),
    (dict(ply=-1), r"ply must be an integer 0\.\."),
    (dict(top=-1), r"top must be an integer >= 0"),
    (dict(evaluator="x"), r"evaluator 'x' is unknown"),
    (dict(rollout_games=-1), r"rollout_games must be an integer >= 0"),
    (dict(seed=-1), r"seed must be an integer 0\.\.2\*\*64 - 1"),
    (dict(seed=2 ** 64), r"seed must be an integer"),
    (dict(ply="1"), r"ply must be an integer"),
    (dict(cubeless=None), r"cubeless must be True or False"),
])
def test_analysis_settings_are_checked(kw, msg):
    with pytest.raises(BgfastError, match=msg):
        analyze.AnalysisSettings(**kw)


def test_analysis_settings_accept_the_valid_extremes():
    s = analyze.AnalysisSettings(ply=0, top=0, rollout_games=0, seed=2 ** 64 - 1)
    assert (s.ply, s.top, s.seed) == (0, 0, 2 ** 64 - 1)


@pytest.mark.parametrize("text", [None, 31, b"4HPwATDgc/ABMA"])
def test_parse_record_of_no_text(text):
    with pytest.raises(InvalidRecordError, match=r"a record must be a line of text"):
        analyze.parse_record(text)


# -- bearoff -----------------------------------------------------------------

def test_build_one_sided_requires_integers():
    with pytest.raises(InvalidPositionError, match=r"checkers must be an integer 1\.\.15, not 3\.7"):
        bearoff.build_one_sided(3, 3.7)
    with pytest.raises(InvalidPositionError, match=r"points must be an integer >= 1, not 3\.5"):
        bearoff.build_one_sided(3.5, 3)
    with pytest.raises(InvalidPositionError, match=r"window must be an integer 8\.\.64"):
        bearoff.build_one_sided(3, 3, window=16.5)
    with pytest.raises(InvalidPositionError, match=r"checkers of a two-sided table"):
        bearoff.build_two_sided(2.5)


@pytest.mark.parametrize("threads", [0, -1, 1.5])
def test_build_threads_at_least_one(threads):
    with pytest.raises(BgfastError, match=r"threads must be an integer >= 1"):
        bearoff.build_one_sided(3, 3, threads=threads)
    with pytest.raises(BgfastError, match=r"threads must be an integer >= 1"):
        bearoff.build_two_sided(2, threads=threads)


def test_counts_of_impossible_tables():
    with pytest.raises(InvalidPositionError, match=r"points must be an integer >= 1, not -1"):
        bearoff.num_positions(-1, 3)
    with pytest.raises(InvalidPositionError, match=r"checkers must be an integer 0\.\.15, not 16"):
        bearoff.num_positions(6, 16)
    with pytest.raises(InvalidPositionError, match=r"checkers of a two-sided table .* not 99"):
        bearoff.two_sided_bytes(99)
    with pytest.raises(InvalidPositionError, match=r"layout must be 'int16' or 'float32'"):
        bearoff.two_sided_bytes(6, layout="x")
    assert bearoff.num_positions(6, 15) == 54264
    assert bearoff.two_sided_bytes(6) == 924 * 924 * 2


def test_position_on_no_points():
    with pytest.raises(InvalidPositionError, match=r"points must be an integer 1\.\.24, not 0"):
        bearoff.position(0, points=0)


def test_open_a_directory(tmp_path):
    with pytest.raises(DatabaseError, match=r"is a directory"):
        bearoff.open(tmp_path)
    with pytest.raises(DatabaseError, match=r"no such file"):
        bearoff.open(tmp_path / "missing.bgb")


def test_cache_directory_that_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(OutputPathError, match=r"cache directory: it is not a directory"):
        bearoff.default_one_sided(f)


def test_two_sided_values_of_non_indices():
    table = bearoff.build_two_sided(2)
    with pytest.raises(InvalidIdError, match=r"two-sided indices must be whole numbers"):
        table.values("a", 0)
    with pytest.raises(InvalidIdError, match=r"two-sided indices must be whole numbers"):
        table.values(0, 1.5)
    assert table.values(1, 2).shape == (1, table.ntables)


# -- matfile, sgf ------------------------------------------------------------

@pytest.mark.parametrize("module,name", [(matfile, "x.mat"), (sgf, "x.sgf")])
def test_load_missing_file_or_directory(tmp_path, module, name):
    with pytest.raises(InvalidRecordError, match=r"cannot read .*No such file"):
        module.load(tmp_path / name)
    with pytest.raises(InvalidRecordError, match=r"cannot read .*Is a directory"):
        module.load(tmp_path)


@pytest.mark.parametrize("cv", [LONG, "\u00b2"], ids=["5000-digits", "superscript-two"])
def test_sgf_cube_value_not_a_number(cv):
    text = ("(;FF[4]GM[6]CA[UTF-8]AP[x]MI[length:5][game:0][ws:0][bs:0]"
            f";AE[a:y]AW[a][a]AB[y][y]PL[W]CV[{cv}]CP[c])")
    with pytest.raises(InvalidRecordError, match=r"cannot read the cube value"):
        sgf.loads(text)


# -- metgen ------------------------------------------------------------------

@pytest.mark.parametrize("kw,msg", [
    (dict(free_drops=[1, 2]), r"free_drops must map away scores to values"),
    (dict(gammon_rate="x"), r"gammon rate must be a finite number"),
    (dict(gammon_rate=(0.3, "x")), r"gammon rate must be a finite number"),
    (dict(win_rate="x"), r"win rate must be a finite number"),
    (dict(efficiency="x"), r"cube efficiency must be a finite number"),
    (dict(method=3), r"unknown method 3"),
    (dict(free_drops={-3: 0.1}), r"no free drop at -3-away"),
    (dict(free_drops={"a": 0.1}), r"no free drop at 'a'-away"),
    (dict(free_drops={0: 0.1}), r"no free drop at 0-away"),
    (dict(free_drops={1: 0.1}), r"no free drop at 1-away"),
    (dict(free_drops={3: 0.1}), r"no free drop at 3-away"),
    (dict(free_drops={2.0: 0.1}), r"no free drop at 2\.0-away"),
    (dict(free_drops={True: 0.1}), r"no free drop at True-away"),
    (dict(free_drops={2: -0.1}), r"free drop value at 2-away must be a finite number >= 0"),
    (dict(free_drops={2: float("nan")}), r"free drop value at 2-away must be a finite"),
    (dict(free_drops={2: "x"}), r"free drop value at 2-away must be a finite number"),
    (dict(free_drops={2: 0.7}), r"free drop at 2-away is worth 0\.7, more than the trailer's MWC"),
])
def test_generate_bad_arguments(kw, msg):
    with pytest.raises(BgfastError, match=msg):
        metgen.generate(5, **kw)


@pytest.mark.parametrize("length", [metgen.MAX_LENGTH + 1, 100000, 0])
def test_generate_length_is_capped(length):
    with pytest.raises(InvalidScoreError, match=rf"table length must be an integer 1\.\.{metgen.MAX_LENGTH}"):
        metgen.generate(length)


def test_generate_accepts_even_free_drops():
    t = metgen.generate(6, free_drops={2: 0.01, 6: 0.001})
    assert t.post[1] == pytest.approx(0.49)


def test_seeds_counts_flags_and_rates(tmp_path):
    from bgfast.game import Match, money_session
    from bgfast.rollout import RolloutSettings
    from bgfast.train import train

    for bad in (lambda: Match(5, seed=-1), lambda: money_session(seed=-2),
                lambda: RolloutSettings(trials=2.5), lambda: RolloutSettings(seed=1.5),
                lambda: RolloutSettings(trials="10"), lambda: RolloutSettings(jobs=1.5),
                lambda: RolloutSettings(luck_plays=1.5), lambda: RolloutSettings(truncate=2.5),
                lambda: RolloutSettings(min_trials=float("nan")),
                lambda: RolloutSettings(stderr_target=float("nan")),
                lambda: RolloutSettings(variance_reduction="no"),
                lambda: RolloutSettings(stderr_target=True),
                lambda: train(tmp_path / "t.npz", 1, alpha=float("inf")),
                lambda: train(tmp_path / "t.npz", 1, lam=2.0),
                lambda: train(tmp_path / "t.npz", 1.5),
                lambda: train(tmp_path / "t.npz", 1, seed=-1),
                lambda: train(tmp_path / "t.npz", 1, seed=2 ** 64),
                lambda: train(tmp_path / "t.npz", 1, round_games=1.5),
                lambda: train(tmp_path / "t.npz", 1, lam="0.5"),
                lambda: evaluate_ply(Position.initial().board, np.array(1.0))):
        with pytest.raises(BgfastError):
            bad()
    assert not (tmp_path / "t.npz").exists()
    (tmp_path / "t.npz").write_text("x")
    with pytest.raises(OutputPathError, match="resume"):
        train(tmp_path / "t.npz", 1)
    # numpy's integers are whole numbers, and the settings hold them as ints
    s = RolloutSettings(trials=np.int64(36), seed=np.uint64(2 ** 64 - 1), jobs=np.int32(1))
    assert (s.trials, s.seed, s.jobs) == (36, 2 ** 64 - 1, 1) and type(s.seed) is int
    assert json.loads(json.dumps(s.to_dict()))["trials"] == 36
    # a match's dice take any seed numpy takes
    for seed in (2 ** 70, [1, 2], np.random.SeedSequence(3)):
        Match(5, seed=seed)
