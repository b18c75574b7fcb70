"""Fuzz tests: every parser and every public numpy entry point, on random
and mutated input.

What is promised, and checked here:

* bad input raises a :class:`bgfast.errors.BgfastError` (a ``ValueError``
  subclass) -- never another exception, never a crash (a segfault ends the
  run, which fails it);
* what a parser accepts, its formatter writes back as it was read (the
  canonical forms: Position ID, Match ID, XGID, gnubg ID, the dice of a
  ``.mat`` line), and what the numpy entry points accept gives results of
  the documented shape.

Each property runs a bounded number of examples in the default run (the
whole file in well under 30 s) and 50 times as many in its ``slow`` twin
(``*_long``, run with ``-m slow``).
"""
import io
import json
import re
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from bgfast import analyze, bearoff, matfile
from bgfast.errors import BgfastError, DatabaseError
from bgfast.evaluate import get_evaluator
from bgfast.formats import (XGID, MatchState, format_gnubg_id, match_play, parse_dice,
                            parse_gnubg_id, parse_play, apply_moves)
from bgfast.game import Match
from bgfast.movegen import legal_plays, legal_plays_batch
from bgfast.players import Beginner, Heuristic, play_match
from bgfast.position import INITIAL_BOARD, Position, pack, unpack

from corpus import random_boards
from test_formats import match_states, xgids

SLOW_FACTOR = 50


def fuzz(examples: int, *strategies):
    """``@given(*strategies)`` with ``examples`` examples, plus a ``slow``
    twin named ``<test>_long`` with 50 times as many (so no other pytest
    marks on these tests: the twin would not get them)."""
    def deco(f):
        quiet = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
        long = settings(max_examples=examples * SLOW_FACTOR, deadline=None,
                        suppress_health_check=quiet)(given(*strategies)(f))
        globals()[f.__name__ + "_long"] = pytest.mark.slow(long)
        return settings(max_examples=examples, deadline=None,
                        suppress_health_check=quiet)(given(*strategies)(f))
    return deco


def refused(call, *args, **kw):
    """Run ``call``; True if it raised a BgfastError, False if it returned
    (any other exception fails the test)."""
    try:
        call(*args, **kw)
    except BgfastError:
        return True
    return False


# ---------------------------------------------------------------- text input

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# characters a mutation inserts: the formats' own, separators, whitespace, and
# look-alikes: non-ASCII digits and letters, controls, a surrogate escape
NOISE = list(B64 + "-:=*/() \t\n,;\"'") + [
    "\u0663", "\uff16", "\u2003", "\u00a0", "\x00", "\x0b", "\u2028", "\u00e9", "\U0001d7d1",
    "\udcff", "bar", "off", "XGID=", "D", "00", "-0", "07"]


@st.composite
def mutated(draw, valid):
    """A text from ``valid`` with up to 4 random edits (insert, delete,
    replace, duplicate a slice) -- near misses as well as the valid text."""
    s = draw(valid)
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(s)))
        op = draw(st.sampled_from(["ins", "del", "rep", "dup"]))
        if op == "ins":
            s = s[:i] + draw(st.sampled_from(NOISE)) + s[i:]
        elif op == "del":
            s = s[:i] + s[i + 1:]
        elif op == "rep":
            s = s[:i] + draw(st.sampled_from(NOISE)) + s[i + 1:]
        else:
            j = draw(st.integers(i, len(s)))
            s = s[:j] + s[i:j] + s[j:]
    return s


def noise_text(max_size=40):
    """Random text: pieces of NOISE joined, or any characters."""
    return (st.lists(st.sampled_from(NOISE), max_size=max_size // 2).map("".join)
            | st.text(max_size=max_size))


@st.composite
def positions(draw):
    return Position(random_boards(1, draw(st.integers(0, 2 ** 32 - 1)))[0])


position_ids = positions().map(lambda p: p.position_id())


@fuzz(300, mutated(position_ids) | noise_text())
def test_position_id(text):
    try:
        pos = Position.from_position_id(text)
    except BgfastError:
        return
    assert pos.position_id() == text.strip()


@fuzz(300, mutated(match_states().map(MatchState.match_id)) | noise_text())
def test_match_id(text):
    try:
        state = MatchState.from_match_id(text)
    except BgfastError:
        return
    assert state.match_id() == text.strip()


# what an integer field may be mistyped as: signs, zeros, non-ASCII digits, spaces
NUMBER_NOISE = ["-0", "00", "07", "+1", " 1", "1 ", "\uff11", "\u0661", "\u0966", "1.0", "1e1",
                "0x1", "\U0001d7d9", "١٠", "9" * 30, ""]


@st.composite
def field_edits(draw, valid, sep=":"):
    """A text from ``valid`` with one of its ``sep``-separated fields
    replaced by a mistyped number."""
    parts = draw(valid).split(sep)
    i = draw(st.integers(0, len(parts) - 1))
    parts[i] = draw(st.sampled_from(NUMBER_NOISE))
    return sep.join(parts)


@fuzz(300, mutated(xgids().map(XGID.format)) | field_edits(xgids().map(XGID.format))
      | noise_text(60))
def test_xgid(text):
    try:
        x = XGID.parse(text)
    except BgfastError:
        return
    body = text.strip()
    assert x.format() == ("XGID=" + body[5:] if body[:5].upper() == "XGID=" else "XGID=" + body)
    assert XGID.parse(x.format()) == x


@fuzz(200, mutated(st.tuples(positions(), match_states()).map(
    lambda pm: format_gnubg_id(*pm))) | noise_text())
def test_gnubg_id(text):
    try:
        pos, state = parse_gnubg_id(text)
    except BgfastError:
        return
    again = format_gnubg_id(pos, state)
    assert parse_gnubg_id(again) == (pos, state)
    if re.search(r"\s", text) is None and not text.lower().startswith("gnubg"):
        assert again == text        # no spaces, no "GNUbg ID:" prefix: exactly as read


DICE_FORMS = st.builds(lambda a, b, sep: f"{a}{sep}{b}", st.integers(0, 9), st.integers(0, 9),
                       st.sampled_from(["", "-", ",", " ", " - ", "\t"]))


@fuzz(300, mutated(DICE_FORMS) | st.tuples(st.sampled_from(NUMBER_NOISE + ["3"]),
                                            st.sampled_from(NUMBER_NOISE + ["1"])).map("".join)
      | noise_text(8))
def test_parse_dice(text):
    try:
        d1, d2 = parse_dice(text)
    except BgfastError:
        return
    assert 1 <= d1 <= 6 and 1 <= d2 <= 6
    # only ASCII digits, spaces, '-' or ',' around them
    assert re.fullmatch(rf"[ \t\n\r\f\v]*{d1}[ \t\n\r\f\v]*[-,]?[ \t\n\r\f\v]*{d2}[ \t\n\r\f\v]*",
                        text), text


# ---------------------------------------------------------------- notation

@st.composite
def board_and_play(draw):
    """A random board, a roll, its legal plays, the notation of one of them
    (or "" when none) and that notation mutated (or random text)."""
    pos = draw(positions())
    d = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    plays = legal_plays(pos, *d)
    name = draw(st.sampled_from([p.notation for p in plays])) if plays else ""
    return pos, d, plays, name, draw(mutated(st.just(name)) | noise_text(24))


@fuzz(300, board_and_play())
def test_parse_and_match_play(case):
    pos, d, plays, name, text = case
    b = pos.board
    legal = {p.position: p for p in plays}
    for written in (name, text):
        try:
            segments = parse_play(b, written)
            after = Position(apply_moves(b, segments)[::-1])
        except BgfastError:
            assert written != name          # a legal play's own notation is read
            continue
        try:
            steps = parse_play(b, written, d)
        except BgfastError:
            steps = None
        try:
            got = match_play(b, written, plays)
        except BgfastError:
            got = False
        if written == name:
            assert steps is not None and (got is None if not plays else got.notation == name)
        if got:
            assert got is legal[after]
        if steps is not None:
            # the steps use the dice and reach the same position as the segments
            assert Position(apply_moves(b, steps)[::-1]) == after
            assert got is legal.get(after, False) or not plays
    # the dice themselves are checked
    assert refused(parse_play, b, "24/18", (d[0], 7))


# ---------------------------------------------------------------- .mat files

@pytest.fixture(scope="module")
def mat_texts():
    """.mat texts of a 3-point match, two money games and a 1-point match."""
    texts = []
    for seed, length in ((1, 3), (2, 0), (3, 1)):
        m = Match(length, seed=seed, names=("Beginner", "Heuristic"))
        play_match(m, [Beginner(seed), Heuristic()], max_games=2)
        texts.append(matfile.dumps(m))
    return texts


MAT_NOISE = NOISE + ["Doubles => 2", "Takes", "Drops", "Wins 1 point", " 5 point match",
                     "99999999999999999999", " Game 2", ": 0", "; [Rules \"cube=1\"]", "66: "]


@st.composite
def mat_edits(draw):
    """Line edits of a .mat text: delete, duplicate or swap lines, or edit
    characters of one line."""
    ops = []
    for _ in range(draw(st.integers(1, 2))):
        op = draw(st.sampled_from(["del", "dup", "swap", "chars", "number", "name"]))
        line = draw(st.integers(0, 6) | st.integers(0, 10 ** 6))   # often the header lines
        ops.append((op, line, draw(st.integers(0, 10 ** 6)),
                    draw(st.lists(st.tuples(st.integers(0, 80), st.sampled_from(MAT_NOISE)),
                                  max_size=3))))
    return draw(st.integers(0, 2)), ops


MAT_NUMBERS = NUMBER_NOISE + ["32767", "32768", "99999999999999999999", "0", "1", "2", "64"]
MAT_NAMES = ["A:b", ":", "Al:ice", "x" * 300, "\u00e9t\u00e9", "a  b", "\x1b[31m"]


def _apply_mat_edits(text, ops):
    lines = text.split("\n")
    for op, i, j, chars in ops:
        i, j = i % len(lines), j % len(lines)
        if op == "number":          # a number of the file: the length, a score, a cube...
            numbers = list(re.finditer(r"[0-9]+", text))
            if numbers:
                m = numbers[i % min(len(numbers), 12)]
                text = text[:m.start()] + MAT_NUMBERS[j % len(MAT_NUMBERS)] + text[m.end():]
                lines = text.split("\n")
        elif op == "name":          # a player's name on a score line
            text = re.sub(r"Beginner|Heuristic", MAT_NAMES[j % len(MAT_NAMES)], text,
                          count=1 + i % 2)
            lines = text.split("\n")
        elif op == "del":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            line = lines[i]
            for k, c in chars:
                k %= len(line) + 1
                line = line[:k] + c + line[k + 1:]
            lines[i] = line
        if not lines:
            lines = [""]
        text = "\n".join(lines)
    return text


@fuzz(100, mat_edits())
def test_mat_import(mat_texts, edit):
    which, ops = edit
    text = _apply_mat_edits(mat_texts[which], ops)
    try:
        m = matfile.loads(text)
    except BgfastError:
        return
    out = matfile.dumps(m)                # what is read can be written again...
    assert matfile.dumps(matfile.loads(out)) == out      # ...and reads back the same
    for game in m.games:                  # and analysed: every state has its Match ID
        assert len(game.match_id()) == 12


# ---------------------------------------------------------------- analyze

@st.composite
def analyze_lines(draw):
    pos = draw(positions())
    state = draw(match_states())
    forms = [pos.position_id(), f"{pos.position_id()} 31", format_gnubg_id(pos, state),
             f"{pos.position_id()} {state.match_id()} 52", "# comment", "",
             draw(xgids()).format()]
    return [draw(mutated(st.sampled_from(forms)) | noise_text(30))
            for _ in range(draw(st.integers(1, 4)))]


@fuzz(40, analyze_lines())
def test_analyze_scanner(lines):
    """A block (the ``bgfast._analyze`` scanner and the pipeline) gives
    every kept line the row of that line alone, parsed in Python: a row for
    a good line, an error row for a bad one, never an exception."""
    lines = [x for x in lines if len(x.splitlines()) <= 1]     # one input line each
    out = io.StringIO()
    counts = analyze.run(lines, stream=out, fmt="jsonl")
    rows = [json.loads(r) for r in out.getvalue().splitlines()]
    settings = analyze.AnalysisSettings()
    want = [json.loads(analyze.format_row(analyze._scalar_row(i, text, settings), "jsonl"))
            for i, text in analyze.read_records(lines)]
    assert rows == want, lines
    assert counts["rows"] == len(rows) and counts["errors"] == sum("error" in r for r in rows)


# ---------------------------------------------------------------- numpy entry points

ARRAY_JUNK = [None, "abc", 3, 2.5, [[1, 2], [3]], [object()], np.zeros((0,)), np.zeros((2, 2)),
              np.full((1, 2, 25), np.nan), np.full((1, 2, 25), -1), np.full((1, 2, 25), 300),
              np.zeros((1, 2, 25), dtype=bool), np.zeros((1, 2, 25), dtype=complex),
              np.zeros((1, 25, 2), dtype=np.uint8)]


@st.composite
def raw_boards(draw):
    """Boards of any uint8 contents (possible or not), or one of the junk inputs."""
    kind = draw(st.sampled_from(["valid", "valid", "bytes", "near", "junk"]))
    if kind == "junk":
        return draw(st.sampled_from(ARRAY_JUNK))
    n = draw(st.integers(0, 4))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    b = random_boards(n, seed)
    rng = np.random.default_rng(seed)
    if kind == "bytes":
        b = rng.integers(0, 256, size=(n, 2, 25)).astype(np.uint8)
    elif kind == "near":
        b[rng.random(b.shape) < 0.05] += np.uint8(rng.integers(1, 16))
    return b


@st.composite
def raw_dice(draw):
    return draw(st.sampled_from([
        (3, 1), (6, 6), (0, 1), (7, 7), (-100000, 5), (2 ** 31, 1), (2 ** 63 - 1, 1), (1.5, 2),
        None, "31", (1, 2, 3), [[1, 2], [3]], np.array([True, False])]) | st.tuples(
            st.integers(-10, 10), st.integers(-10, 10)))


def _valid(boards):
    try:
        b = np.asarray(boards)
    except (TypeError, ValueError):
        return False
    return (b.dtype == np.uint8 and b.ndim == 3 and b.shape[1:] == (2, 25)
            and not refused(pack, b))


@fuzz(200, raw_boards())
def test_pack_unpack(boards):
    try:
        keys = pack(boards)
    except BgfastError:
        return
    assert keys.shape == (np.asarray(boards).shape[0], 10)
    assert (unpack(keys) == np.asarray(boards)).all()


@fuzz(300, st.binary(min_size=10, max_size=10), st.integers(0, 9), st.integers(0, 255))
def test_unpack_any_key(key, i, byte):
    key = bytearray(key)
    key[i] = byte
    arr = np.frombuffer(bytes(key), dtype=np.uint8)
    try:
        boards = unpack(arr)
    except BgfastError:
        return
    assert pack(boards).tobytes() == bytes(key)


@fuzz(200, raw_boards(), raw_dice(), st.booleans())
def test_legal_plays_batch(boards, dice, validate):
    """validate=False takes boards of any bytes: the kernel stays memory-safe."""
    try:
        offsets, results, moves = legal_plays_batch(boards, dice, validate=validate,
                                                    with_moves=True)
    except BgfastError:
        return
    n = np.asarray(boards).shape[0]
    assert offsets.shape == (n + 1,) and offsets[0] == 0 and (np.diff(offsets) >= 0).all()
    assert results.shape == (offsets[-1], 2, 25) and moves.shape == (offsets[-1], 4, 2)
    if validate:
        assert (results.sum(axis=2) <= 15).all()


@fuzz(200, st.sampled_from(["pubeval", "composite", "exact", "race", "net"]), raw_boards(),
      raw_dice())
def test_evaluators(name, boards, dice):
    ev = get_evaluator(name)
    try:
        probs = ev.evaluate_batch(boards)
    except BgfastError:
        probs = None
    if probs is not None:
        assert probs.shape == (np.asarray(boards).shape[0], 5)
        assert np.isfinite(probs).all() and (probs >= 0).all() and (probs <= 1).all()
    try:
        counts, results = ev.choose(boards, dice)
    except BgfastError:
        return
    assert _valid(boards)
    assert results.shape == (counts.shape[0], 2, 25)
    assert (results.sum(axis=2) <= 15).all() and (counts >= 0).all()


PROB_JUNK = [None, "abc", [[object()] * 5], [["a"] * 5], [[0.5] * 4], [[np.nan] * 5],
             [[0.6, 0.1, 0.0, 0.1, 0.0]], [[1.5, 0, 0, 0, 0]], np.zeros((0, 5))]


@fuzz(100, st.sampled_from(PROB_JUNK) | st.lists(st.lists(st.floats(-0.1, 1.1), min_size=5,
                                                        max_size=5), max_size=3),
      st.sampled_from([0.68, 0.0, 1.0, None, "x", [0.1, 0.2], -1.0, float("nan")]),
      st.sampled_from([(1, "centre"), (2, "me"), (2, "opp"), (3, "me"), (1, "me"), (0, "x")]))
def test_cube_decisions(probs, efficiency, cube_owner):
    from bgfast.cube import cube_decisions

    cube, owner = cube_owner
    try:
        dec = cube_decisions(probs, cube=cube, owner=owner, efficiency=efficiency)
    except BgfastError:
        return
    n = np.asarray(probs).shape[0]
    assert dec.no_double.shape == (n,) and np.isfinite(dec.no_double).all()


@fuzz(40, raw_boards(), st.sampled_from([0, 1, -1, 1.5, None, True, "1"]))
def test_evaluate_ply(boards, plies):
    from bgfast.evaluate import evaluate_ply

    try:
        out = evaluate_ply(boards, plies, "pubeval")
    except BgfastError:
        return
    assert out.shape == (np.asarray(boards).shape[0], 5)


# ---------------------------------------------------------------- bear-off files

@pytest.fixture(scope="module")
def bearoff_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzzbo")
    bearoff.build_two_sided(2, d / "ts.bgb", cubeful=True).close()
    bearoff.build_two_sided(2, d / "ti.bgb", layout="int16").close()
    bearoff.build_one_sided(2, 15, d / "os.bgb").close()
    return d, {p.name: p.read_bytes() for p in d.iterdir()}


@st.composite
def corruptions(draw):
    """Byte edits of a file: flips, truncation or padding, and whether the
    header checksum (and the data checksum) is recomputed after them."""
    edits = draw(st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(1, 255)), max_size=4))
    cut = draw(st.none() | st.integers(-200, 200))
    header_at = draw(st.lists(st.tuples(st.integers(0, 123), st.integers(0, 255)), max_size=3))
    return edits, cut, header_at, draw(st.booleans()), draw(st.booleans())


@fuzz(60, st.sampled_from(["os.bgb", "ti.bgb", "ts.bgb"]), corruptions(), raw_boards())
def test_bearoff_open_and_probe(bearoff_files, name, corruption, boards):
    d, files = bearoff_files
    edits, cut, header_at, fix_head, fix_data = corruption
    data = bytearray(files[name])
    for i, x in edits:
        data[i % len(data)] ^= x
    for i, x in header_at:
        data[i] = x
    if cut is not None:
        data = data[:max(0, len(data) + cut)] if cut < 0 else data + bytes(cut)
    if len(data) >= 128 and fix_data:
        data[64:68] = zlib.crc32(bytes(data[128:])).to_bytes(4, "little")
    if len(data) >= 128 and fix_head:
        data[124:128] = zlib.crc32(bytes(data[:124])).to_bytes(4, "little")
    path = d / f"fuzz-{name}"
    path.write_bytes(bytes(data))
    try:
        table = bearoff.open(path, verify=True)
    except DatabaseError:
        return
    with table:
        # only a file whose checksums were made right again can differ and open
        assert bytes(data) == files[name] or (fix_data and fix_head)
        try:
            res = table.probe_batch(boards)
        except BgfastError:
            return
        n = np.asarray(boards).shape[0]
        assert res["probs"].shape == (n, 5) and res["inside"].shape == (n,)
