"""The Position model, keys and Position IDs, checked against gnubg-nn."""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import bgfast
from bgfast.errors import InvalidIdError, InvalidPositionError
from bgfast.position import (INITIAL_BOARD, Position, PositionClass, classify_boards,
                             pack, position_ids, unpack)

from corpus import random_boards, self_play_positions


def test_initial_position_test_vector():
    pos = Position.initial()
    assert pos.key == bytes.fromhex("E073F00130E073F00130")
    assert pos.position_id() == "4HPwATDgc/ABMA"
    assert Position.from_position_id("4HPwATDgc/ABMA") == pos
    assert pos.pip_count() == (167, 167)
    assert pos.checkers() == (15, 15) and pos.borne_off() == (0, 0)


def test_immutable_and_hashable():
    pos = Position.initial()
    with pytest.raises(ValueError):
        pos.board[1, 0] = 1
    src = INITIAL_BOARD.copy()
    p2 = Position(src)
    src[1, 0] = 1                                      # the Position took a copy
    assert p2 == pos and hash(p2) == hash(pos)
    assert len({pos, p2, pos.swap()}) == 1             # symmetric start: swap is equal
    assert pickle.loads(pickle.dumps(pos)) == pos


def test_repr_is_runnable():
    pos = Position(random_boards(1, seed=3)[0])
    assert eval(repr(pos), {"Position": Position}) == pos


def test_swap_exchanges_rows():
    b = random_boards(1, seed=4)[0]
    pos = Position(b)
    assert (pos.swap().board == b[::-1]).all()
    assert pos.swap().pip_count() == pos.pip_count()[::-1]
    assert pos.swap().swap() == pos


def test_pip_count_counts_bar_as_25():
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, 24] = 1
    b[1, 0] = 2
    b[0, 5] = 3
    assert Position(b).pip_count() == (25 + 2, 18)


def test_diagram_shows_checkers_and_ids():
    text = str(Position.initial())
    assert "4HPwATDgc/ABMA" in text and "pips 167" in text
    assert text.count("X") >= 15 and text.count("O") >= 15


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_key_and_id_round_trip(seed):
    b = random_boards(1, seed)[0]
    pos = Position(b)
    assert Position.from_position_id(pos.position_id()) == pos
    assert (unpack(pack(b[None]))[0] == b).all()


def test_position_ids_agree_with_gnubg(gnubg_nn):
    boards = np.concatenate([random_boards(2000, seed=1), self_play_positions(2000, 2)[0]])
    ids = position_ids(boards)
    for b, pid in zip(boards, ids):
        assert gnubg_nn.position_id(b.tolist()) == pid
        assert gnubg_nn.board_from_position_id(pid) == b.tolist()
        assert Position.from_position_id(pid).key.hex().upper() == "".join(
            f"{c:02X}" for c in bytes.fromhex(Position(b).key.hex()))


def test_keys_agree_with_gnubg_key(gnubg_nn):
    for b in random_boards(500, seed=6):
        key = gnubg_nn.key_of_board(b.tolist())          # 20 letters, a nibble each
        raw = bytes((ord(key[2 * i]) - 65) << 4 | (ord(key[2 * i + 1]) - 65) for i in range(10))
        assert raw == Position(b).key


def test_classify_matches_gnubg(gnubg_nn):
    boards = np.concatenate([random_boards(3000, seed=7), random_boards(1000, 8, home_only=True),
                             self_play_positions(3000, 9)[0]])
    ours = classify_boards(boards)
    to_ours = {gnubg_nn.c_over: PositionClass.OVER, gnubg_nn.c_bearoff: PositionClass.BEAROFF,
               1: PositionClass.BEAROFF,  # gnubg CLASS_BEAROFF2 (inside its two-sided table)
               gnubg_nn.c_race: PositionClass.RACE, gnubg_nn.c_crashed: PositionClass.CONTACT,
               gnubg_nn.c_contact: PositionClass.CONTACT}
    theirs = np.array([to_ours[gnubg_nn.classify(b.tolist())] for b in boards])
    assert (ours == theirs).all(), boards[np.nonzero(ours != theirs)[0][0]].tolist()
    assert set(np.unique(ours)) == set(PositionClass)


@pytest.mark.parametrize("text, match", [
    ("4HPwATDgc/ABM", "14 characters"),
    ("4HPwATDgc/ABMAA", "14 characters"),
    ("4HPwATDgc/AB!A", "outside base64"),
    ("/////////////w", "fewer than 50 slots"),
    ("4HPwATDgc/ABMB", "padding"),
])
def test_bad_position_ids(text, match):
    with pytest.raises(InvalidIdError, match=match):
        Position.from_position_id(text)


def test_id_with_too_many_checkers_or_clash():
    b = np.zeros((2, 25), dtype=np.uint8)
    b[1, 0] = 16
    one = np.zeros((1, 2, 25), dtype=np.uint8)
    one[0, 1, 5] = 1                                      # one checker left: a finished game
    assert pack(one).shape == (1, 10)
    with pytest.raises(InvalidPositionError, match="neither side has a checker"):
        pack(np.zeros((1, 2, 25), dtype=np.uint8))
    with pytest.raises(InvalidPositionError, match="16 checkers"):
        Position(b)
    b[1, 0] = 2
    b[0, 23] = 1                                          # opponent on my 1-point too
    with pytest.raises(InvalidPositionError, match="same point"):
        Position(b)
    # an ID that decodes to 16 checkers on one point
    from bgfast.position import key_to_position_id
    bits = [1] * 16 + [0] * 64
    raw = bytes(sum(bits[8 * i + j] << j for j in range(8)) for i in range(10))
    with pytest.raises(InvalidPositionError, match="16 checkers"):
        Position.from_position_id(key_to_position_id(raw))


def test_clash_check_reads_every_point():
    """The kernel's clash check (bit masks) against a plain reading: the first
    point p of row 0 that row 1 holds too (its point 23 - p), on boards with
    a clash at each point, several, or none."""
    from bgfast import _board

    rng = np.random.default_rng(4)
    boards = np.zeros((3000, 2, 25), dtype=np.uint8)
    for b in boards:
        for row in (0, 1):
            for p in rng.choice(25, size=rng.integers(0, 8), replace=False):
                b[row, p] = rng.integers(1, 3)
    for b in boards:
        clash = [p for p in range(24) if b[0, p] and b[1, 23 - p]]
        got = _board.first_impossible(b[None])
        if not b.any():                               # no checker on either side
            assert got == (0, 0, 2)
        else:
            assert got == ((0, 1, clash[0]) if clash else None)
    assert 0.3 < np.mean([_board.first_impossible(b[None]) is not None for b in boards]) < 0.99


def test_bad_board_shapes_and_values():
    with pytest.raises(InvalidPositionError, match="shape"):
        Position(np.zeros((25,), dtype=np.uint8))
    with pytest.raises(InvalidPositionError, match="0..15"):
        Position(-np.ones((2, 25), dtype=np.int64))
    with pytest.raises(InvalidPositionError, match="integers"):
        Position(np.zeros((2, 25), dtype=float))
    assert issubclass(InvalidPositionError, ValueError)


def test_arrays_numpy_cannot_hold_are_refused():
    from bgfast.position import as_boards

    ragged = [[[0] * 25, [0] * 24]]
    for bad in (ragged, [[[None] * 25] * 2], "abc", None, [[[object()] * 25] * 2]):
        with pytest.raises(InvalidPositionError):
            as_boards(bad)
        with pytest.raises(InvalidPositionError):
            Position(bad)


def test_unpack_refuses_what_is_not_bytes():
    key = pack(INITIAL_BOARD[None])
    for bad in (np.array([[None] * 10]), [[1.5] * 10], key.astype(float), [[256] + [0] * 9],
                [[-1] + [0] * 9], [[0] * 10, [0] * 9], np.zeros((1, 10), dtype=bool), "abc"):
        with pytest.raises(InvalidIdError):
            unpack(bad)
    # any integer dtype holding bytes is read
    assert (unpack(key.astype(np.int64)) == INITIAL_BOARD).all()
    assert (unpack(key[0].tolist()) == INITIAL_BOARD).all()
    for bad in (10, "4HPwATDgc/ABMA", None):
        with pytest.raises(InvalidIdError):
            Position.from_key(bad)
    assert Position.from_key(bytes(key[0])) == Position.initial()


def test_parse_accepts_both_formats():
    assert Position.parse(" 4HPwATDgc/ABMA ") == Position.initial()
    assert Position.parse("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10") == Position.initial()
    with pytest.raises(InvalidIdError):
        Position.parse("nonsense")


def test_package_exports():
    assert bgfast.Position is Position
    assert len(bgfast.Position.initial().legal_plays(3, 1)) == 16


def test_checked_boards_pass_as_plain_arrays_and_others_are_still_checked():
    from bgfast.errors import InvalidPositionError
    from bgfast.position import _CheckedBoards, as_boards

    boards = np.zeros((3, 2, 25), dtype=np.uint8)
    boards[:, 0, 5] = boards[:, 1, 7] = 15
    checked = boards.view(_CheckedBoards)
    out = as_boards(checked[[0, 2]])
    assert type(out) is np.ndarray and np.array_equal(out, boards[[0, 2]])
    bad = boards.copy()
    bad[1, 0, 3] = 5                                  # 20 checkers
    with pytest.raises(InvalidPositionError):
        as_boards(bad)


def test_position_id_kernel_decodes_as_base64():
    """The one Position ID decoder (``bgfast._board.position_id_key``, which
    the analysis scan also calls) against the standard library's base64 on
    random IDs: the same key where the 4 padding bits are zero, a padding
    error where they are not."""
    import base64

    from bgfast.position import position_id_to_key

    rng = np.random.default_rng(7)
    alphabet = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                             dtype=np.uint8)
    for _ in range(2000):
        text = alphabet[rng.integers(0, 64, 14)].tobytes().decode("ascii")
        padded = (alphabet.tobytes().index(text[13].encode()) & 15) == 0
        if padded:
            assert position_id_to_key(text) == base64.b64decode(text + "==")
        else:
            with pytest.raises(InvalidIdError, match="padding bits"):
                position_id_to_key(text)


def test_one_key_decodes_as_the_batch_does():
    from bgfast import _board
    from bgfast.position import unpack

    rng = np.random.default_rng(11)
    boards = []
    for _ in range(400):
        b = np.zeros((2, 25), dtype=np.uint8)
        for row in (0, 1):
            for _ in range(int(rng.integers(0, 16))):
                b[row, rng.integers(0, 25)] += 1
        boards.append(b)
    keys = _board.pack(np.array(boards))          # unchecked: impossible boards too
    shown = 0
    for key, b in zip(keys, boards):
        k = key.tobytes()
        one = _board.key_board(k)
        possible = _board.first_impossible(b[None]) is None
        if possible:
            np.testing.assert_array_equal(one, unpack(key)[0])
            pos = Position.from_key(k)
            assert pos.key == k and not pos.board.flags.writeable and pos == Position(b)
            shown += 1
        else:
            assert one is None
            with pytest.raises(InvalidPositionError):
                Position.from_key(k)
    assert 50 < shown < 400
    for bad in (b"\xff" * 10, b"\x00" * 9, bytes(9) + b"\x01"):
        assert _board.key_board(bad) is None
        with pytest.raises(ValueError):
            Position.from_key(bad)
