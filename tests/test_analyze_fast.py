"""Batch analysis of blocks of lines (bgfast.analyze._chunk_text: the
bgfast._analyze scan and row writer around the one array pipeline) against
each line parsed in Python and analysed alone (bgfast.analyze._scalar_row),
row for row."""
import io
import json
import math

import numpy as np
import pytest

from bgfast import _analyze, _board
from bgfast.analyze import (AnalysisSettings, _scalar_row, csv_header, format_row, parse_record,
                            read_records, run)
from bgfast.cube import CONTACT_EFFICIENCY, cube_decision, cube_decisions
from bgfast.evaluate import evaluate_ply
from bgfast.formats import CubeOwner, MatchState
from bgfast.errors import InvalidCubeError, InvalidScoreError
from bgfast.met import MatchScore
from bgfast.position import Position, key_to_position_id, position_ids

from corpus import random_boards, self_play_positions


def _match_ids(rng):
    """Match IDs over money (Jacoby on and off) and match scores, owned and
    centred cubes, Crawford games and rolled dice."""
    out = []
    for cube in (1, 2, 4):
        for owner in ([CubeOwner.CENTRED] if cube == 1 else [CubeOwner.PLAYER0, CubeOwner.PLAYER1]):
            for jacoby in (False, True):
                out.append(MatchState(cube_value=cube, cube_owner=owner, jacoby=jacoby,
                                      player_on_roll=int(rng.integers(2))).match_id())
    for length in (1, 3, 5, 7, 11):
        for _ in range(8):
            s0, s1 = (int(v) for v in rng.integers(0, length, 2))
            crawford = max(s0, s1) == length - 1 and bool(rng.integers(2))
            cube = 1 if crawford else int(2 ** rng.integers(0, 3))
            owner = CubeOwner.CENTRED if cube == 1 else CubeOwner(int(rng.integers(2)))
            dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7))) if rng.random() < 0.2 else None
            out.append(MatchState(match_length=length, score=(s0, s1), cube_value=cube,
                                  cube_owner=owner, crawford=crawford, dice=dice,
                                  player_on_roll=int(rng.integers(2))).match_id())
        out.append(MatchState(match_length=length, score=(length - 1, 0), crawford=True).match_id())
    return out


def _impossible_ids():
    """Position IDs that decode to boards no game can reach."""
    b = np.zeros((1, 2, 25), dtype=np.uint8)
    b[0, 1, 0] = 16                                   # 16 checkers
    too_many = key_to_position_id(_board.pack(b)[0].tobytes())
    b = np.zeros((1, 2, 25), dtype=np.uint8)
    b[0, 1, 5], b[0, 0, 18] = 2, 2                    # both sides on one point
    clash = key_to_position_id(_board.pack(b)[0].tobytes())
    return [too_many, clash]


def mixed_corpus(n=1200, seed=5):
    rng = np.random.default_rng(seed)
    boards, dice = self_play_positions(n, seed)
    ids = position_ids(boards)
    home = np.zeros((300, 2, 25), dtype=np.uint8)     # bear-offs: exact rows (two- and one-sided)
    for b in home:
        for row, most in ((0, 8), (1, 8)):
            for _ in range(rng.integers(0, most)):
                b[row][rng.integers(0, 6)] += 1
        if not b.any():                               # a side always has a checker left
            b[1][0] = 1
    bear = position_ids(home)
    mids = _match_ids(rng)
    lines = []
    for i, pid in enumerate(ids):
        r = rng.random()
        if r < 0.1:
            pid = bear[rng.integers(len(bear))]
        mid = mids[rng.integers(len(mids))]
        roll = f"{dice[i][0]}{dice[i][1]}"
        form = rng.integers(7)
        lines.append([pid, f"{pid} {roll}", f"{pid} {mid}", f"{pid}:{mid}", f"  {pid}  {mid} {roll}",
                      f"{pid} {dice[i][0]}-{dice[i][1]}", f"{pid}\t"][form])
    odd = ["", "   ", "# a comment", "garbage", "4HPwATDgc/ABMA 71", "4HPwATDgc/ABMA 31 extra",
           "4HPwATDgc/ABMB", "4HPwATDgc/ABMA 00", "4HPwATDgc/ABMA 3,1", "4HPwATDgc/ABMA\t31",
           "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:1:0:5:10",
           "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10",
           "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:2:0:10",   # money with beavers
           "gnubg id: 4HPwATDgc/ABMA:cAkgAQAAAAAE", "4HPwATDgc/ABMA AAAAAAAAAAAA",
           '4HPwATDgc/ABMA "quoted, text"', "h\u00e9llo", "4HPwATDgc/ABMA:cAkgAQAAAAAE 3-1",
           "AAAAAAAAAAAAAA", "AAAAAAAAAAAAAA 31", "/////////////w"] + _impossible_ids()
    for text in odd:
        lines.insert(int(rng.integers(len(lines) + 1)), text)
    return [t + "\n" for t in lines]


def reference(lines, fmt, settings=AnalysisSettings()):
    """The rows of each line alone: parsed in Python (parse_record), analysed
    as a block of one, as a dict, written by format_row."""
    body = "".join(format_row(_scalar_row(n, text, settings), fmt)
                   for n, text in read_records(lines))
    return (csv_header() + body) if fmt == "csv" else body


@pytest.fixture(scope="module")
def corpus():
    return mixed_corpus()


def test_the_corpus_takes_the_array_path(corpus):
    sc = _analyze.scan(corpus, 1)
    assert (sc["status"] == 0).mean() > 0.95
    assert len(sc["number"]) == len(corpus) - 3      # blanks and the comment are dropped


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_rows_match_each_line_alone(corpus, fmt, jobs):
    ref = reference(corpus, fmt)
    out = io.StringIO()
    counts = run(corpus, stream=out, fmt=fmt, jobs=jobs, chunk_size=256)
    assert out.getvalue() == ref
    rows = ref.count("\n") - (fmt == "csv")
    assert counts["rows"] == rows and counts["errors"] >= 10


def test_rows_cover_every_kind(corpus):
    rows = [json.loads(x) for x in reference(corpus, "jsonl").splitlines()]
    sources = {r.get("source") for r in rows}
    assert {"net", "exact"} <= sources
    contexts = " ".join(r.get("context", "") for r in rows)
    assert "money" in contexts and "to 7" in contexts and "Crawford" in contexts
    assert any(r.get("plays") for r in rows) and any("cube_action" in r for r in rows)
    assert any(r.get("take_point") is None and "cube_action" in r for r in rows)  # Crawford
    assert sum("error" in r for r in rows) >= 10


def test_small_chunks_and_ply_one_match_too(corpus):
    lines = corpus[:150]
    settings = AnalysisSettings(ply=1, top=3)
    out = io.StringIO()
    run(lines, stream=out, settings=settings, chunk_size=7)
    assert out.getvalue() == reference(lines, "jsonl", settings)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("top", [0, 1])
def test_few_listed_plays_match_too(corpus, fmt, top):
    """top 0 (the best play only, no list) and 1, in both formats."""
    lines = corpus[:300]
    settings = AnalysisSettings(top=top)
    out = io.StringIO()
    run(lines, stream=out, fmt=fmt, settings=settings)
    assert out.getvalue() == reference(lines, fmt, settings)


def test_resume_after_a_torn_chunk(tmp_path, corpus):
    lines = corpus[:400]
    full = tmp_path / "full.csv"
    run(lines, output=str(full), fmt="csv", chunk_size=64)
    text = full.read_text()
    part = tmp_path / "part.csv"
    part.write_text(text[:len(text) // 2])            # a crash in the middle of a write
    # with the run record of that run (which covers every row written)
    (tmp_path / "part.csv.resume.json").write_text((tmp_path / "full.csv.resume.json").read_text())
    counts = run(lines, output=str(part), fmt="csv", resume=True, chunk_size=64)
    assert counts["resumed_after_line"] > 0
    assert part.read_text() == text


def test_crawford_cube_row_has_no_take_point():
    mid = MatchState(match_length=5, score=(4, 2), crawford=True).match_id()
    for row in (_scalar_row(1, f"4HPwATDgc/ABMA {mid}", AnalysisSettings()),
                json.loads(_rows_text([f"4HPwATDgc/ABMA {mid}\n"]))):
        assert row["take_point"] is None and row["cube_action"] == "No double, dead cube"


def _rows_text(lines, **kw):
    out = io.StringIO()
    run(lines, stream=out, **kw)
    return out.getvalue()


def test_money_cube_rows_follow_janowski():
    """An independent check of the vectorised cube model: the money
    centred-cube equities by Janowski's formula, written out here."""
    boards, _ = self_play_positions(300, 12)
    pos = Position.many(boards)
    lines = [p.position_id() + "\n" for p in pos]
    rows = [json.loads(x) for x in _rows_text(lines, settings=AnalysisSettings(ply=0)).splitlines()]
    probs = evaluate_ply(boards, 0, "net")
    checked = 0
    for p, row, (w, wg, wb, lg, lb) in zip(pos, rows, probs.tolist()):
        if row.get("source") != "net" or p.classify() != 3:
            continue
        assert row["win"] == round(w, 6)
        W = 1 + (wg + wb) / w
        L = 1 + (lg + lb) / (1 - w)
        tp, cp = (L - 0.5) / (W + L + 0.5), (L + 1) / (W + L + 0.5)

        def live(x_points):
            xs, ys = zip(*x_points)
            return float(np.interp(w, xs, ys))

        dead = 2 * w - 1 + wg - lg + wb - lb
        x = CONTACT_EFFICIENCY
        nd = x * live([(0, -L), (tp, -1), (cp, 1), (1, W)]) + (1 - x) * dead
        dt = 2 * (x * live([(0, -L), (tp, -1), (1, W)]) + (1 - x) * dead)
        assert row["no_double"] == pytest.approx(nd, abs=1e-6)
        assert row["double_take"] == pytest.approx(dt, abs=1e-6)
        assert row["take_point"] == pytest.approx(1 - cp, abs=1e-6)
        checked += 1
    assert checked > 100


def test_cube_decisions_rows_are_cube_decision():
    rng = np.random.default_rng(3)
    w = rng.random(200)
    wg = w * rng.random(200) * (rng.random(200) < 0.8)
    wb = wg * rng.random(200) * (rng.random(200) < 0.5)
    lg = (1 - w) * rng.random(200)
    lb = lg * rng.random(200) * (rng.random(200) < 0.5)
    probs = np.stack([w, wg, wb, lg, lb], axis=1)
    probs[:3] = [[1, 1, 0, 0, 0], [0, 0, 0, 1, 1], [0.5, 0, 0, 0, 0]]
    x = rng.uniform(0.5, 0.8, 200)
    exact = np.where(rng.random((200, 1)) < 0.3, rng.uniform(-1, 1, (200, 3)), np.nan)
    for kw in (dict(), dict(cube=2, owner="opp"), dict(cube=4, owner="me"),
               dict(match=MatchScore(7, 2, 4)), dict(match=MatchScore(5, 3, 3), cube=2, owner="me"),
               dict(match=MatchScore(9, 8, 5, crawford=True)), dict(match=MatchScore(9, 8, 5))):
        decs = cube_decisions(probs, efficiency=x, exact_money=exact, **kw)
        for i in range(0, 200, 7):
            ex = None if np.isnan(exact[i]).any() else exact[i]
            one = cube_decision(probs[i], efficiency=x[i], exact_money=ex, **kw)
            assert decs.decision(i) == one
            assert decs.action_texts()[i] == one.action_text


@pytest.mark.parametrize("x", [0.0, -0.0, 1.0, -1.0, 0.0078125, -0.0078125, 1e-7, -1e-9, 5e-7,
                               4.9999999e-7, 5e-5, 1.2e-5, 9.94e-5, 0.0001, 0.000125, 0.1 + 0.2,
                               2.5e-7, 0.9999995, 1.0000005, 123.4567895, 2.0 ** -20, 0.6666666666])
def test_floats_print_as_python_rounds_them(x):
    assert _analyze.float_text(x, 6) == repr(round(x, 6))
    y = float(np.round(x, 3))
    assert _analyze.float_text(y, 3) == repr(y)


def test_integers_print_as_python_prints_them():
    rng = np.random.default_rng(1)
    edges = [0, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000, 10**9, 2**53, 2**63 - 1]
    values = edges + [-v for v in edges[1:]] + [-(2**63)] + rng.integers(
        -10**12, 10**12, 3000).tolist() + rng.integers(0, 2000, 3000).tolist()
    for v in values:
        assert _analyze.int_text(v) == str(v), v


def test_random_floats_print_as_python_rounds_them():
    rng = np.random.default_rng(0)
    vals = np.concatenate([rng.uniform(-3, 3, 20000), rng.uniform(-1e-4, 1e-4, 5000),
                           np.round(rng.uniform(-2, 2, 5000), 7),
                           (rng.integers(-10**7, 10**7, 5000) + 0.5) / 1e6])
    for x in vals.tolist():
        assert _analyze.float_text(x, 6) == repr(round(x, 6)), x
        assert math.isfinite(x)


def test_parse_record_agrees_with_the_scan_on_dice_and_context(corpus):
    sc = _analyze.scan(corpus, 1)
    kept = list(read_records(corpus))
    text = sc["text"]
    impossible = 0
    for i, (number, line) in enumerate(kept):
        assert sc["number"][i] == number
        if sc["status"][i]:
            continue
        try:
            rec = parse_record(line, number)
        except (InvalidScoreError, InvalidCubeError) as exc:
            # a Match ID whose context cannot occur (gnubg never writes them):
            # the Crawford flag at 1-away/1-away, a turned cube at 1
            assert ("this cannot be the Crawford game" in str(exc)
                    or "a cube at 1 is centred" in str(exc)), line
            impossible += 1
            continue
        assert (sc["boards"][i] == rec.position.board).all()
        assert int(sc["classes"][i]) == int(rec.position.classify())
        assert tuple(sc["pips"][i]) == rec.position.pip_count()
        assert text[sc["offsets"][i]:sc["offsets"][i + 1]].decode() == line
        if sc["dice"][i, 0]:
            assert rec.dice == tuple(sc["dice"][i])
    assert 0 < impossible < len(kept) // 10


def _reference_unpack(key: bytes):
    """The key rule read plainly: bits from the lowest of each byte, a slot's
    count of one-bits ended by a zero-bit, 50 slots, nothing set after them."""
    bits = [(key[i >> 3] >> (i & 7)) & 1 for i in range(80)]
    board, count, at = [], 0, 0
    while at < 80 and len(board) < 50:
        if bits[at]:
            count += 1
        else:
            board.append(count)
            count = 0
        at += 1
    if len(board) < 50 or any(bits[at:]):
        return None
    return np.array(board, dtype=np.uint8).reshape(2, 25)


def test_scan_decodes_position_ids_like_the_board_kernel():
    """The key decoding (bgfast._board's, shared by the scan) against a
    plain reading of the rule and validate_boards, on game positions,
    random boards and random keys."""
    from bgfast.position import validate_boards
    from corpus import random_boards

    rng = np.random.default_rng(0)
    boards, _ = self_play_positions(500, 3)
    keys = np.concatenate([_board.pack(boards), _board.pack(random_boards(500, 4)),
                           rng.integers(0, 256, (5000, 10), dtype=np.uint8),
                           np.full((1, 10), 255, np.uint8), np.zeros((1, 10), np.uint8)])
    decoded = [_reference_unpack(k.tobytes()) for k in keys]
    ref, status = _board.unpack(keys)
    assert [d is not None for d in decoded] == (status == 0).tolist()
    assert all(np.array_equal(d, ref[i]) for i, d in enumerate(decoded) if d is not None)
    want = status == 0
    for i in np.flatnonzero(want):
        try:
            validate_boards(ref[i:i + 1])
        except Exception:
            want[i] = False
    sc = _analyze.scan([key_to_position_id(k.tobytes()) for k in keys], 1)
    assert ((sc["status"] == 0) == want).all() and 900 < want.sum() < 2000
    assert (sc["boards"][want] == ref[want]).all()


def test_rounding_noise_and_bad_probabilities_match_each_line_alone(corpus):
    """An evaluator whose probabilities are off by tiny amounts (clipped
    by the cube layer) or inconsistent (an error row by cube_decision)."""
    from bgfast.evaluate import Evaluator, get_evaluator, register_evaluator

    class Noisy(Evaluator):
        name = "noisy-test"

        def evaluate_batch(self, boards):
            b = np.asarray(boards)
            p = get_evaluator("net").evaluate_batch(b)
            key = b.reshape(len(b), -1).astype(np.int64) @ np.arange(1, 51)
            p[:, 4] = np.where(key % 3 == 0, -4e-7, p[:, 4])           # within the tolerance
            p[:, 0] = np.where(key % 13 == 0, p[:, 0] + 2e-7, p[:, 0])
            p[:, 1] = np.where(key % 17 == 0, p[:, 0] + 0.2, p[:, 1])  # win gammon > win
            return p

    register_evaluator("noisy-test", Noisy)
    settings = AnalysisSettings(evaluator="noisy-test", ply=0)
    lines = [t for t in corpus if len(t.split()) < 2 or len(t.split()[1]) == 12][:600]
    out = io.StringIO()
    run(lines, stream=out, settings=settings, chunk_size=256)
    ref = reference(lines, "jsonl", settings)
    assert out.getvalue() == ref
    assert "win gammon <= win" in ref and ref.count('"source":"noisy-test"') > 400


def test_packed_lines_scan_as_the_lines_do(corpus):
    """Workers get their lines as one ASCII text with line ends (shared
    memory); the scan of that is the scan of the lines."""
    from bgfast import analyze

    lines = [t for t in corpus if t.isascii()] + ["4HPwATDgc/ABMA 31"]     # no newline at the end
    text = "".join(lines).encode("ascii")
    ends = np.cumsum([len(t) for t in lines]).astype(np.int64)
    a, b = _analyze.scan(lines, 11), _analyze.scan_packed(text, ends, 11)
    assert a.keys() == b.keys()
    for key, value in a.items():
        assert (value == b[key]) if isinstance(value, (bytes, dict)) else np.array_equal(value, b[key])
    with pytest.raises(ValueError):
        _analyze.scan_packed(text, ends + 1, 1)
    # through a worker's input buffer: ASCII chunks go packed, others as they are
    buf = bytearray(1 << 20)
    ref = analyze._put_lines((1, lines), buf)
    assert ref is not None and ref[0] == 1
    first, packed = analyze._get_lines(ref, buf)
    assert first == 1 and bytes(packed.text) == text and np.array_equal(packed.ends, ends)
    assert analyze._put_lines((1, ["h\u00e9llo\n"]), buf) is None
    assert analyze._put_lines((1, lines), bytearray(len(text))) is None      # does not fit


def test_scan_home_ranks_give_the_epcs(corpus):
    """The EPCs the pipeline takes from the scan's one-sided indices are
    those of the boards themselves (NaN for a side not all home)."""
    from bgfast import analyze

    sc = _analyze.scan(corpus, 1)
    read = sc["status"] == 0
    got = analyze._epc_of_ranks(sc["hrank"][read])
    want = analyze._epc_array(sc["boards"][read])
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isfinite(got).any() and np.isnan(got).any()
    assert (sc["hrank"][~read] == -1).all()


def test_scan_numbers_the_distinct_match_ids():
    """The scan numbers a block's distinct Match IDs (a hash table with open
    addressing): every line's number names its own 12 characters, and each
    distinct ID has one number, in the order first seen -- with IDs that
    differ only at the end, and enough of them to fill probe chains."""
    rng = np.random.default_rng(4)
    chars = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                          dtype=np.uint8)
    base = chars[rng.integers(0, 64, (3000, 12))]
    base[1500:, :8] = base[:1500, :8]               # pairs that differ only at the end
    pick = rng.integers(0, 3000, 9000)
    tokens = [bytes(base[k]).decode() for k in pick]
    lines = [f"4HPwATDgc/ABMA {t}\n" if k % 3 else "4HPwATDgc/ABMA\n"
             for k, t in enumerate(tokens)]
    sc = _analyze.scan(lines, 1)
    tok, mid = sc["mtok"], sc["mid"]
    expect = [t if k % 3 else None for k, t in enumerate(tokens)]
    got = [None if j < 0 else bytes(mid[j]).decode() for j in tok.tolist()]
    assert got == expect
    seen = list(dict.fromkeys(t for t in expect if t is not None))
    assert [bytes(r).decode() for r in mid] == seen      # one number each, first seen first


def test_scan_reads_position_ids_as_the_parser_does():
    """The scan's Position ID decoding against Position.from_position_id on
    real IDs, random base64 strings and real IDs with one character changed:
    the same boards, and a fast-path row exactly when the parser accepts."""
    import random

    from bgfast.errors import BgfastError

    chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    rng = random.Random(5)
    real = [Position(b).position_id() for b in random_boards(4000, seed=3)]
    ids = real + ["".join(rng.choice(chars) for _ in range(14)) for _ in range(8000)]
    for t in real:
        i = rng.randrange(14)
        ids.append(t[:i] + rng.choice(chars) + t[i + 1:])
    sc = _analyze.scan([t + "\n" for t in ids], 1)
    accepted = 0
    for i, t in enumerate(ids):
        try:
            board = Position.from_position_id(t).board
        except BgfastError:
            assert sc["status"][i] != 0, t
            continue
        accepted += 1
        assert sc["status"][i] == 0 and np.array_equal(sc["boards"][i], board), t
    assert accepted > 4000


def test_float_texts_edges():
    """Large and non-finite values print as Python prints them; in JSON rows
    non-finite ones as json writes them; digits other than 3 or 6 are refused."""
    from bgfast import analyze

    vals = np.array([1e13, -2.5e12, 123456.1234565, 1e6, 999999.9999995, np.nan, np.inf, -np.inf,
                     0.1 + 0.2, -0.0])
    assert _analyze.float_texts(vals) == [repr(round(v, 6)) for v in vals.tolist()]
    assert _analyze.float_texts(vals, 3) == [repr(round(v, 3)) for v in vals.tolist()]
    assert analyze._json_floats(vals) == [json.dumps(round(v, 6)) for v in vals.tolist()]
    with pytest.raises(ValueError, match="3 or 6"):
        _analyze.float_texts(vals, 4)
    with pytest.raises(ValueError, match="3 or 6"):
        _analyze.float_text(1.0, 2)


def test_rows_follow_the_declared_columns(corpus):
    """Every row's members are the columns of analyze.COLUMNS its kind is
    given in, in their order (JSON: ply before source), and the CSV header
    is their names; error rows are line, input and error."""
    from bgfast.analyze import _KINDS, COLUMNS, ROW_FIELDS

    assert csv_header() == ",".join(ROW_FIELDS) + "\n"
    assert ROW_FIELDS == [c.name for c in COLUMNS if c.csv]
    order = [c.name for c in COLUMNS]
    at = order.index("source")
    order[at], order[at + 1] = order[at + 1], order[at]
    rows = [json.loads(x) for x in reference(corpus[:400], "jsonl").splitlines()]
    seen = set()
    for r in rows:
        if "error" in r:
            assert list(r) == ["line", "input", "error"]
            continue
        kind = ("over" if r["class"] == "over" else "checker" if r["dice"] else "cube")
        seen.add(kind)
        given = [c.name for c in COLUMNS if kind in _KINDS[c.rows]
                 and not (c.name == "best_equity" and r.get("best_play") == "")
                 and c.name != "rollout"]
        assert list(r) == [n for n in order if n in given], r
    assert seen == {"cube", "checker"} or seen == {"cube", "checker", "over"}


def test_row_writer_refuses_offsets_that_do_not_fit():
    kind = np.zeros(2, dtype=np.int8)
    text = np.frombuffer(b"x" * 28, dtype=np.uint8)
    offs = np.array([0, 14, 28], dtype=np.int64)
    empty = np.zeros(1, dtype=np.uint8)
    bad = (_analyze.COLUMN_TYPES["text"], 1, b",", np.zeros(3, dtype=np.uint8),
           np.array([0, 2, 9], dtype=np.int64))
    with pytest.raises(ValueError, match="offsets"):
        _analyze.format_rows(True, kind, [bad], b"\n", text, offs, empty,
                             np.zeros(1, dtype=np.int64), empty, np.zeros(3, dtype=np.int64))
