"""Batch analysis of positions: files in, evaluations, ranked plays and cube
decisions out, streamed in input order, resumable, over a local process pool
or a Ray cluster.

Input: one position per line, in any of these forms (``#`` starts a comment)::

    4HPwATDgc/ABMA                      a Position ID: cube decision, money
    4HPwATDgc/ABMA 31                   ... with a roll: checker play
    4HPwATDgc/ABMA:cAkgAQAAAAAE [31]    gnubg's PositionID:MatchID (score, cube, dice)
    4HPwATDgc/ABMA cAkgAQAAAAAE [31]    the same, separated by a space
    XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10   an XGID (dice in it, or add them)

A Match ID or XGID that holds rolled dice asks for the checker play; one
without dice asks for the cube decision at its score and cube.

Output rows (CSV or JSON Lines) carry the input line number, so ``--resume``
continues an interrupted run without redoing or duplicating rows.  The rows
of a block of input are written with one ``write`` and flushed; a torn last
row (a crash in the middle of a write) is cut off when the run resumes.
Beside an output file, its run record (``OUTPUT.resume.json``,
:data:`RUN_RECORD`) holds what a resume must match: the format, the
settings, and the number and SHA-256 of the input lines read, so that a
resume with other settings or another input is refused, and the output file
is only touched once everything has been checked.

Bad lines get an error row that quotes at most :data:`bgfast._files.QUOTE`
characters of them; a line longer than :data:`bgfast._files.MAX_LINE`
characters, or with bytes that are not UTF-8 (read them with
``errors="surrogateescape"``), is such a bad line.

Checker plays are ranked at each line's cube and score (cubeful equity for
money, MWC and EMG at a match; :func:`bgfast.evaluate.rank_plays_batch`
with the line's :class:`bgfast.cube.CubeContext`), cube decisions above 0
plies come from the n-ply cubeful search; ``AnalysisSettings(cubeless=True)``
(``--cubeless``) gives the cubeless analysis.

Every row comes from one array pipeline (:func:`_chunk_text`): the
``bgfast._analyze`` scan reads the common line forms into columns, and the
lines it leaves (XGIDs, other spellings, bad lines) are parsed in Python
into the same columns; then one batch evaluation, the cube decisions of the
block by :mod:`bgfast.cube`'s kernel in one go, the plays of every checker
row ranked in one call, and the row writer writes the columns of
:data:`COLUMNS`, the one declaration of the schema.  Only error rows and
rollouts are formatted apart.  :func:`analyze_record` is that pipeline for
one record.
"""
from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import io
import json
import os
import re
from collections import deque
from itertools import chain, islice
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import numpy as np

from ._files import atomic_write, bound_lines, check_writable, line_problem, shorten
from ._workers import cores, ordered_map
from .errors import BgfastError, InvalidRecordError, check_flag, check_seed, check_whole
from .cube import ACTIONS, CubeContext, ContextColumn, decide_cube
from .formats import MatchState, parse_dice, parse_position_text
from .position import Position, PositionClass, _CheckedBoards

__all__ = ["Record", "parse_record", "read_records", "analyze_record",
           "AnalysisSettings", "run", "ROW_FIELDS", "html_report", "RUN_RECORD"]


# ---------------------------------------------------------------------------
# input records
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Record:
    line: int
    text: str
    position: Position
    dice: tuple | None = None
    context: CubeContext = field(default_factory=CubeContext)


def _looks_like_match_id(token: str) -> bool:
    return len(token) == 12 and all(c.isalnum() or c in "+/" for c in token)


def parse_record(text: str, line: int = 0, known: dict | None = None) -> Record:
    """Parse one input line; raises a :class:`BgfastError` naming the problem.
    ``known``: Position IDs already decoded (``{id: Position}``)."""
    if not isinstance(text, str):
        raise InvalidRecordError(f"a record must be a line of text, not {type(text).__name__}")
    tokens = text.split()
    if not tokens:
        raise InvalidRecordError("empty line")
    head, rest = tokens[0], tokens[1:]
    dice = None
    context = CubeContext()
    if ":" in head or head.upper().startswith("XGID="):
        pos, ms, xg = parse_position_text(head)
        context = CubeContext.from_match_state(ms, xg)
        dice = ms.dice
    else:
        pos = known.get(head) if known else None
        if pos is None:
            pos = Position.from_position_id(head)
        if rest and _looks_like_match_id(rest[0]):
            ms = MatchState.from_match_id(rest[0])
            context = CubeContext.from_match_state(ms)
            dice = ms.dice
            rest = rest[1:]
    if rest:
        if len(rest) > 1:
            raise InvalidRecordError(f"unexpected text after the roll: {' '.join(rest[1:])!r}")
        dice = parse_dice(rest[0])
    if dice is not None and (not dice or dice[0] == 0):
        dice = None
    return Record(line, text.strip(), pos, tuple(int(d) for d in dice) if dice else None, context)


def read_records(lines: Iterable[str], start_after: int = 0) -> Iterator[tuple[int, str]]:
    """(line number, text) of the lines to analyse, skipping blanks, comments
    and lines up to ``start_after`` (for --resume)."""
    for number, raw in enumerate(lines, 1):
        text = raw.strip()
        if number <= start_after or not text or text.startswith("#"):
            continue
        yield number, text


# ---------------------------------------------------------------------------
# the rows: one schema
# ---------------------------------------------------------------------------

from .evaluate import PROB_NAMES  # noqa: E402  (the order of the probability columns)


@dataclass(frozen=True)
class Column:
    """One column of the output rows.  ``type``: how the row writer
    (:func:`bgfast._analyze.format_rows`) writes its values (a key of
    :data:`bgfast._analyze.COLUMN_TYPES`: ``int``, ``float6``, ``float3``,
    ``float6_omit`` (no JSON member when NaN), ``entry`` (an encoded string
    of the block's table), ``text`` (encoded per row), ``input``, ``pid``,
    ``dice``); ``rows``: the row kinds it is given in (:data:`_KINDS`);
    ``csv``: whether it is a CSV column."""

    name: str
    type: str
    rows: str = "all"
    csv: bool = True


#: The row kinds a column is given in: every analysed row, the rows with
#: values (not finished games), checker rows, cube rows, none (a column
#: only error rows fill; they are formatted apart).
_KINDS = {"all": ("cube", "checker", "over"), "valued": ("cube", "checker"),
          "checker": ("checker",), "cube": ("cube",), "none": ()}

#: The output rows' columns, in CSV order (JSON rows give ``ply`` before
#: ``source``).  A column is its entry here and the array
#: :func:`_analysed` puts under its name.
COLUMNS = (
    Column("line", "int"), Column("input", "input"), Column("position_id", "pid"),
    Column("context", "entry"), Column("dice", "dice"), Column("class", "entry"),
    Column("pips_on_roll", "int"), Column("pips_opponent", "int"),
    Column("epc_on_roll", "float3"), Column("epc_opponent", "float3"),
    Column("source", "entry"), Column("ply", "int"),
    *(Column(name, "float6", "valued") for name in PROB_NAMES),
    Column("equity", "float6", "valued"), Column("valuation", "entry", "valued"),
    Column("cubeful_equity", "float6", "valued"), Column("mwc", "float6", "valued"),
    Column("emg", "float6", "valued"),
    Column("best_play", "text", "checker"), Column("best_equity", "float6_omit", "checker"),
    Column("plays", "text", "checker"),
    Column("cube_action", "entry", "cube"), Column("no_double", "float6", "cube"),
    Column("double_take", "float6", "cube"), Column("double_pass", "float6", "cube"),
    Column("take_point", "float6", "cube"),
    Column("error", "text", "none"),
    Column("rollout", "text", "valued", csv=False),    # with --rollout: JSON only
)
ROW_FIELDS = [c.name for c in COLUMNS if c.csv]


@functools.cache
def _program(fmt: str) -> tuple:
    """The row writer's schema for ``fmt``: ``(type code, kinds mask, key,
    column name)`` of each column written, in order, and the row's end."""
    from . import _analyze as k

    codes = {"cube": k.CUBE, "checker": k.CHECKER, "over": k.OVER}
    if fmt == "csv":
        cols = [c for c in COLUMNS if c.csv]
    else:
        cols = list(COLUMNS)
        at = [c.name for c in cols].index("source")
        cols[at], cols[at + 1] = cols[at + 1], cols[at]          # ply, then source
    out = []
    for j, c in enumerate(cols):
        mask = sum(1 << codes[kind] for kind in _KINDS[c.rows])
        if fmt == "csv":
            key = b"" if j == 0 else b","
        else:
            key = ("{" if j == 0 else ",").encode() + json.dumps(c.name).encode() + b":"
        out.append((k.COLUMN_TYPES[c.type], mask, key, c.name))
    return tuple(out), (b"\n" if fmt == "csv" else b"}\n")


@dataclass(frozen=True)
class AnalysisSettings:
    """How to analyse: ``ply`` 0..:data:`bgfast.evaluate.MAX_PLIES`, ``top``
    plays listed per checker decision (0: the best play only), an
    ``evaluator`` name of :func:`bgfast.evaluate.evaluator_names`,
    ``rollout_games`` >= 0, ``seed`` 0..2**64 - 1 and ``cubeless``.
    Construction checks every field and raises :class:`BgfastError`
    naming it."""

    ply: int = 1
    top: int = 5
    evaluator: str = "net"
    rollout_games: int = 0             # > 0: add a per-position rollout
    seed: int = 1
    cubeless: bool = False             # cubeless plays; Janowski on the n-ply probabilities

    def __post_init__(self):
        from .evaluate import MAX_PLIES, evaluator_names

        for name, hi in (("ply", MAX_PLIES), ("top", None), ("rollout_games", None)):
            object.__setattr__(self, name, check_whole(f"analysis setting {name}",
                                                       getattr(self, name), 0, hi))
        object.__setattr__(self, "seed", check_seed(self.seed, "analysis setting seed"))
        if not isinstance(self.evaluator, str) or self.evaluator not in evaluator_names():
            raise BgfastError(f"analysis setting evaluator {self.evaluator!r} is unknown; choose "
                              f"from {', '.join(evaluator_names())}")
        object.__setattr__(self, "cubeless", check_flag("analysis setting cubeless",
                                                        self.cubeless))


# ---------------------------------------------------------------------------
# the stages' helpers
# ---------------------------------------------------------------------------

def _epc_array(boards: np.ndarray) -> np.ndarray:
    """EPCs ``float64[n, 2]`` (on roll, opponent) of ``uint8[n, 2, 25]``
    boards from the 6-point one-sided database, in one vectorised look-up,
    rounded to 3 decimals (NaN for a side with a checker outside its home
    board)."""
    from . import bearoff

    ranks = np.full((len(boards), 2), -1, dtype=np.int64)
    home = boards[:, ::-1, 6:].sum(axis=2) == 0                   # [n, on roll / opponent]
    rows, sides = np.nonzero(home)
    if rows.size:
        ranks[rows, sides] = bearoff.default_one_sided().index_of(
            boards[rows, 1 - sides, :6].astype(np.int64))
    return _epc_of_ranks(ranks)


def _epc_of_ranks(ranks: np.ndarray) -> np.ndarray:
    """EPCs ``float64[n, 2]`` from the one-sided 6-point indices of the
    sides all home (on roll, opponent; -1 for a side not all home), as the
    scan finds them: the expected rolls times 49/6 pips, rounded to 3
    decimals, NaN for -1."""
    from . import bearoff

    out = np.full(ranks.shape, np.nan)
    home = ranks >= 0
    if home.any():
        mean = bearoff.default_one_sided().moments(ranks[home])[0]
        out[home] = np.round(mean * bearoff.EPC_PIPS_PER_ROLL, 3)
    return out


def _searched(settings: AnalysisSettings, classes) -> np.ndarray:
    """Which cube rows of ``classes`` are decided by the n-ply cubeful
    search (:func:`bgfast.evaluate.evaluate_cube_batch`): above 0 plies,
    unless cubeless, outside the bear-off tables (decided from their exact
    values); the others by Janowski's model on their probabilities."""
    return (np.asarray(classes) != PositionClass.BEAROFF) & (settings.ply > 0
                                                            and not settings.cubeless)


def _cube_decision(pos: Position, cube, settings: AnalysisSettings, got=None):
    """The :class:`bgfast.cube.CubeDecision` of the player on roll in
    ``pos`` at the cube context ``cube``: by the cubeful search where
    :func:`_searched`, else Janowski's model on its probabilities (``got``:
    its :class:`bgfast.evaluate.SourcedProbabilities`, when known)."""
    from .evaluate import evaluate_cube, sourced_probabilities

    if _searched(settings, pos.classify()):
        return evaluate_cube(pos, cube, plies=settings.ply, evaluator=settings.evaluator)
    if got is None:
        got = sourced_probabilities(pos.board[None], settings.ply, settings.evaluator)
    return decide_cube(pos, cube, got.probs[0], got.exact_money[0])


def _decision_values(nd, dt, dp, action, beaver, mwc_nd, mwc_dt, mwc_dp):
    """``(equity, mwc)`` arrays: the value of cube decisions to the player on
    roll after his proper action (no double, or the taker's answer to the
    double, a beaver counted), as equity per unit cube (a match's EMG) and
    MWC (NaN for money)."""
    doubles = np.array([a.doubles for a in ACTIONS])[np.asarray(action, dtype=np.int64)]
    take = np.where(beaver, 2.0 * dt, dt)
    eq = np.where(doubles, np.minimum(take, dp), nd)
    mwc = np.where(doubles, np.minimum(mwc_dt, mwc_dp), mwc_nd)
    return eq, mwc


_NO_ENTRY = object()


_MATCH_IDS: dict = {}


def _match_entry(token: str):
    """(CubeContext, dice) of a Match ID, or None if it does not decode (cached
    per process: a file holds few distinct Match IDs)."""
    hit = _MATCH_IDS.get(token, _NO_ENTRY)
    if hit is _NO_ENTRY:
        try:
            ms = MatchState.from_match_id(token)
            hit = (CubeContext.from_match_state(ms), ms.dice)
        except BgfastError:
            hit = None
        if len(_MATCH_IDS) >= 1 << 16:
            _MATCH_IDS.clear()
        _MATCH_IDS[token] = hit
    return hit


class _Table:
    """Strings encoded once for the formatter (JSON strings or CSV fields)."""

    def __init__(self, fmt: str):
        self.fmt = fmt
        self.index: dict = {}
        self.parts: list = []

    def __call__(self, text: str) -> int:
        k = self.index.get(text)
        if k is None:
            k = self.index[text] = len(self.parts)
            self.parts.append(_encode_field(text, self.fmt))
        return k

    def arrays(self):
        data = [p.encode("utf-8") for p in self.parts]
        offsets = np.zeros(len(data) + 1, dtype=np.int64)
        np.cumsum([len(d) for d in data], out=offsets[1:])
        return np.frombuffer(b"".join(data) or b" ", dtype=np.uint8), offsets


@functools.lru_cache(maxsize=1 << 12)     # a block names the same few strings again
def _encode_field(value, fmt: str) -> str:
    if fmt == "jsonl":
        return json.dumps(value)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow([value])
    return buf.getvalue()


def _json_floats(x: np.ndarray) -> list[str]:
    """``json.dumps(round(v, 6))`` of each value (``NaN``/``Infinity`` as
    json writes them), by the row writer's float writer."""
    from . import _analyze

    out = _analyze.float_texts(x)
    for i in np.flatnonzero(~np.isfinite(x)).tolist():
        out[i] = json.dumps(float(x[i]))
    return out


def _csv_text(text: str) -> str:
    """``text`` as one CSV field among others (quoted only where the csv
    module quotes: a comma, a quote or a line break in it)."""
    if "," in text or '"' in text or "\n" in text or "\r" in text:
        return _encode_field(text, "csv")
    return text


def _blob(pieces: dict, m: int):
    """{row: text} -> (bytes, offsets int64[m + 1]) for the formatter."""
    rows = sorted(pieces)
    return _blob_rows(np.asarray(rows, dtype=np.int64), [pieces[i] for i in rows], m)


def _blob_rows(rows: np.ndarray, texts: list, m: int):
    """The texts of the ascending ``rows`` -> (bytes, offsets int64[m + 1])
    for the formatter (one encoding for ASCII texts)."""
    lengths = np.zeros(m + 1, dtype=np.int64)
    joined = "".join(texts)
    if joined.isascii():
        data = joined.encode("ascii")
        lengths[rows + 1] = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    else:
        parts = [t.encode("utf-8") for t in texts]
        data = b"".join(parts)
        lengths[rows + 1] = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    return np.frombuffer(data or b" ", dtype=np.uint8), np.cumsum(lengths)


@functools.cache
def _action_texts() -> tuple:
    """The cube actions' texts, without and with a redouble."""
    from .cube import ACTIONS

    return tuple(tuple(a.text(redouble) for a in ACTIONS) for redouble in (False, True))


def _cube_columns(rows, ctx, contexts, probs, eff, nd, table, out_cube, out_action,
                  searched=None) -> tuple[np.ndarray, np.ndarray]:
    """The cube decisions of ``rows`` (``ctx``: their indices into
    ``contexts``) into the formatter's columns (``out_cube`` float64[m,
    10], the kernel's value columns: when ``rows`` are every row, in order,
    the kernel writes there; otherwise they are copied to ``rows``), money
    and match rows in one kernel call, each at its own score, cube and
    rules.  ``searched``: ``(bool[len(rows)], CubefulValues)``, the rows
    whose no double, double/take, double/pass and action the cubeful search
    gave (their take points are Janowski's on its probabilities).  Returns
    ``(the rows whose probabilities are not possible, error rows; the
    action codes and the beaver flags of every row)``."""
    from .cube import _OWNER_CODES, _checked, _context_decisions
    from .met import get_table

    params = np.array([c.kernel_row() for c in contexts], dtype=np.int64)
    # each context's action texts: with a redouble where the roller owns the cube
    texts = np.asarray([[table(t) for t in row] for row in _action_texts()], dtype=np.int32)
    labels = texts[(params[:, ContextColumn.OWNER] == _OWNER_CODES["me"]).astype(np.int64)].ravel()
    whole = rows.size == len(probs)                     # every row (in order): no copies
    p = probs if whole else probs[rows]
    p, status = _checked(p)                             # as cube_decision checks them
    ok = status == 0
    bad = rows[~ok]
    if not ok.all():
        rows, ctx, p, eff = rows[ok], ctx[ok], p[ok], eff[ok]
        whole = False
    exact = nd if whole else nd[rows]
    jacoby = params[:, ContextColumn.JACOBY] != 0
    if jacoby.any():                                    # the Jacoby rule: Janowski's equities
        exact = exact.copy()
        exact[jacoby[ctx]] = np.nan
    res = _context_decisions(p, ctx, params, eff, exact, get_table(None),
                             out_cube if whole else None)
    at = slice(None) if whole else rows
    if not whole:
        out_cube[rows] = np.stack([res[name] for name in _k_decision_columns()], axis=1)
    act, beaver = res["action"].copy(), res["beaver"].copy()
    if searched is not None:
        mask = searched[0]
        got = (np.cumsum(mask) - 1)[ok][mask[ok]]        # into the search's arrays
        take = np.flatnonzero(mask[ok])
        vals = searched[1]
        for j, name in ((0, "no_double"), (1, "double_take"), (2, "double_pass"),
                        (6, "mwc_no_double"), (7, "mwc_double_take"), (8, "mwc_double_pass")):
            out_cube[rows[take], j] = getattr(vals, name)[got]
        act[take] = vals.action[got]
        beaver[take] = vals.beaver[got]
    out_action[at] = np.take(labels, ctx.astype(np.int64) * texts.shape[1] + act)
    codes = np.zeros(len(probs), dtype=np.int8)
    flags = np.zeros(len(probs), dtype=bool)
    codes[rows], flags[rows] = act, beaver
    return bad, codes, flags


@functools.cache
def _k_decision_columns() -> tuple:
    from . import _cube

    return _cube.DECISION_COLUMNS


def _put_values(values: np.ndarray, rows: np.ndarray, eq: np.ndarray, mwc: np.ndarray) -> None:
    """The :data:`VALUE_FIELDS` of ``rows`` into ``values`` from their
    cubeful equity (a match's EMG) and MWC (NaN: money)."""
    money = np.isnan(mwc)
    values[rows, 0] = np.where(money, eq, np.nan)
    values[rows, 1] = mwc
    values[rows, 2] = np.where(money, np.nan, eq)


# ---------------------------------------------------------------------------
# the pipeline: lines -> input columns -> values -> rows
# ---------------------------------------------------------------------------

class _Lines:
    """The input columns of a block of ``m`` lines: what the scan read
    (:func:`bgfast._analyze.scan`), and the lines it leaves, parsed in
    Python (:func:`parse_record`) into the same columns.  ``inputs`` and
    ``pids``: the input text and Position ID of the rows parsed in Python
    (the others are read from ``text``); ``errors``: the error rows."""

    def __init__(self, number, text, offsets, boards, dice, classes, pips, epc):
        self.number, self.text, self.offsets = number, text, offsets
        self.boards, self.dice, self.classes, self.pips, self.epc = boards, dice, classes, pips, epc
        self.contexts = [CubeContext()]              # 0: a Position ID alone (money)
        self.ctx_of = {self.contexts[0]: 0}
        self.ctx = np.zeros(len(number), dtype=np.int32)
        self.inputs: dict = {}
        self.pids: dict = {}
        self.errors: dict = {}

    @classmethod
    def empty(cls, m: int) -> "_Lines":
        return cls(np.zeros(m, dtype=np.int64), b"", np.zeros(m + 1, dtype=np.int64),
                   np.zeros((m, 2, 25), dtype=np.uint8).view(_CheckedBoards),
                   np.zeros((m, 2), dtype=np.int8), np.zeros(m, dtype=np.int8),
                   np.zeros((m, 2), dtype=np.int64), np.full((m, 2), np.nan))

    def context(self, c: CubeContext) -> int:
        k = self.ctx_of.setdefault(c, len(self.contexts))
        if k == len(self.contexts):
            self.contexts.append(c)
        return k

    def line_text(self, i: int) -> str:
        """The stripped text of row ``i``."""
        got = self.inputs.get(i)
        if got is None:
            got = self.text[self.offsets[i]:self.offsets[i + 1]].decode("ascii")
        return got

    def put_line(self, i: int, number: int, text: str) -> None:
        """Row ``i`` from the line ``text`` parsed in Python (an error row
        for a bad line, quoting at most :data:`bgfast._files.QUOTE`
        characters of it)."""
        self.number[i] = number
        problem = line_problem(text)
        if problem is None:
            try:
                return self.put_record(i, parse_record(text, number))
            except BgfastError as exc:
                problem = str(exc)
        self.error(i, problem, text)

    def put_record(self, i: int, rec: Record) -> None:
        pos = rec.position
        self.number[i] = rec.line
        self.boards[i] = pos.board
        self.dice[i] = rec.dice or (0, 0)
        self.ctx[i] = self.context(rec.context)
        self.classes[i] = pos.classify()
        self.pips[i] = pos.pip_count()
        self.epc[i] = _epc_array(pos.board[None])[0]
        self.inputs[i] = rec.text
        self.pids[i] = pos.position_id()

    def error(self, i: int, problem: str, text: str | None = None) -> None:
        self.errors[i] = {"line": int(self.number[i]),
                          "input": shorten(self.line_text(i) if text is None else text),
                          "error": shorten(problem)}


def _scanned(chunk) -> _Lines:
    """The input columns of a ``(first line number, raw lines)`` chunk: one
    scan, the contexts of its distinct Match IDs, the other lines parsed in
    Python."""
    from . import _analyze as k

    first, lines = chunk
    if isinstance(lines, _Packed):
        sc = k.scan_packed(lines.text, lines.ends, first)
    else:
        sc = k.scan(list(lines), first)
    m = len(sc["number"])
    status = sc["status"]
    # every board the scan read is possible (the others are parsed again)
    L = _Lines(sc["number"], sc["text"], sc["offsets"], sc["boards"].view(_CheckedBoards),
               sc["dice"], sc["classes"], sc["pips"], None)
    tokens = sc["mid"]
    if len(tokens):                  # contexts: one per distinct Match ID (the scan's tok)
        tok = sc["mtok"]
        ids = np.zeros(len(tokens) + 1, dtype=np.int32)     # the last: no Match ID (money)
        idice = np.zeros((len(tokens) + 1, 2), dtype=np.int8)
        for u, token in enumerate(tokens.view("S12").ravel().tolist()):
            entry = _match_entry(token.decode("ascii"))
            if entry is None:
                ids[u] = -1
                continue
            ids[u] = L.context(entry[0])
            if entry[1]:
                idice[u] = entry[1]
        L.ctx = np.take(ids, tok)                            # tok -1: the last entry
        status[(L.ctx < 0) & (status == 0)] = 1              # a Match ID that does not decode
        np.maximum(L.ctx, 0, out=L.ctx)
        if idice.any():                                       # the roll a Match ID gives
            roll = (L.dice[:, 0] == 0) & (tok >= 0)
            L.dice[roll] = idice[tok[roll]]
    ok = status == 0
    if ok.all():
        L.epc = _epc_of_ranks(sc["hrank"])
    else:
        L.epc = np.full((m, 2), np.nan)
        L.epc[ok] = _epc_of_ranks(sc["hrank"][ok])
        for i in np.flatnonzero(~ok).tolist():
            text = sc["other"].get(i)
            L.put_line(i, int(L.number[i]), L.line_text(i) if text is None else text)
    return L


def _chunk_text(chunk, job, into=None) -> tuple[bytes | memoryview, int, int]:
    """Worker entry: ``(first line number, raw lines)`` -> (the rows as
    UTF-8 text, rows, error rows); the text is written into the buffer
    ``into`` where it fits (then a memoryview of it)."""
    settings, fmt = job
    return _analysed(_scanned(chunk), settings, fmt, into)


def _analysed(L: _Lines, settings: AnalysisSettings, fmt: str,
              into=None) -> tuple[bytes | memoryview, int, int]:
    """The rows of the input columns ``L`` as text, with their number and
    the number of error rows: one batch evaluation, the cube decisions of
    every cube row in one kernel call (above 0 plies one cubeful search),
    every checker row's plays ranked in one batch at its cube and score,
    the columns of :data:`COLUMNS` written by the row writer; error rows
    (:func:`format_row`) and rollouts are formatted apart."""
    from . import _analyze as k
    from .evaluate import equity, sourced_probabilities

    m = len(L.number)
    boards, dice, classes, pips, ctx, contexts = (L.boards, L.dice, L.classes, L.pips, L.ctx,
                                                  L.contexts)
    cubeful = not settings.cubeless
    kind = np.where(classes == PositionClass.OVER, k.OVER,
                    np.where(dice[:, 0] > 0, k.CHECKER, k.CUBE)).astype(np.int8)
    if L.errors:
        kind[list(L.errors)] = k.VERBATIM
    # the cube rows the cubeful search decides, with its probabilities
    search = (kind == k.CUBE) & _searched(settings, classes)
    probs = np.zeros((m, 5))
    nd = np.full((m, 3), np.nan)
    exact = np.zeros(m, dtype=bool)
    live = np.flatnonzero((kind != k.VERBATIM) & (kind != k.OVER) & ~search)
    if live.size == m:                     # every line valued here: no copies
        got = sourced_probabilities(boards, settings.ply, settings.evaluator, classes)
        probs, exact, nd = got.probs, got.exact, got.exact_money
    elif live.size:
        got = sourced_probabilities(boards[live], settings.ply, settings.evaluator, classes[live])
        probs[live], exact[live], nd[live] = got.probs, got.exact, got.exact_money
    searched = None
    srows = np.flatnonzero(search)
    if srows.size:
        from .cube import cubeful_values
        from .evaluate import _cubeful_table, get_evaluator

        vals = cubeful_values(get_evaluator(settings.evaluator), boards[srows],
                              [contexts[c] for c in ctx[srows].tolist()],
                              settings.ply, table=_cubeful_table())
        probs[srows] = vals.probs
        searched = (srows, vals)
    table = _Table(fmt)
    cols: dict = {"line": L.number, "dice": dice, "pips_on_roll": pips[:, 0],
                  "pips_opponent": pips[:, 1], "epc_on_roll": L.epc[:, 0],
                  "epc_opponent": L.epc[:, 1], "ply": np.full(m, settings.ply, dtype=np.int64)}
    cols["input"] = _blob({i: _encode_field(t, fmt) for i, t in L.inputs.items()}, m)
    cols["position_id"] = _blob({i: _encode_field(t, fmt) for i, t in L.pids.items()}, m)
    cols["context"] = np.asarray([table(c.label) for c in contexts], dtype=np.int32)[ctx]
    cols["class"] = np.asarray([table(c.name.lower()) for c in PositionClass],
                               dtype=np.int32)[classes]
    sources = np.asarray([table(settings.evaluator), table("exact"), table("over")],
                         dtype=np.int32)
    cols["source"] = np.where(classes == PositionClass.OVER, sources[2],
                              np.where(exact, sources[1], sources[0])).astype(np.int32)
    cols["valuation"] = np.full(m, table("cubeful" if cubeful else "cubeless"), dtype=np.int32)
    cube = np.full((m, 10), np.nan)
    values = np.full((m, 3), np.nan)             # cubeful equity, MWC, EMG
    cube_rows = np.flatnonzero(kind == k.CUBE)
    action = np.full(m, -1, dtype=np.int32)
    if cube_rows.size:
        from .cube import InvalidCubeError, _check_probs, cube_efficiencies

        if cube_rows.size == m:
            eff, cube_ctx = cube_efficiencies(classes, pips[:, 0]), ctx
        else:
            eff, cube_ctx = cube_efficiencies(classes[cube_rows], pips[cube_rows, 0]), ctx[cube_rows]
        if searched is not None:
            searched = (search[cube_rows], searched[1])
        bad, codes, beaver = _cube_columns(cube_rows, cube_ctx, contexts, probs, eff, nd, table,
                                           cube, action, searched)
        for i in bad.tolist():                    # probabilities the cube model refuses
            try:
                _check_probs(probs[i])
            except InvalidCubeError as exc:
                L.error(i, str(exc))
            kind[i] = k.VERBATIM
        if cubeful:
            good = cube_rows[kind[cube_rows] == k.CUBE]
            c = cube[good]
            eq, mwc = _decision_values(c[:, 0], c[:, 1], c[:, 2],
                                       codes[good], beaver[good],
                                       c[:, 6], c[:, 7], c[:, 8])
            _put_values(values, good, eq, mwc)
    cols["cube_action"] = action
    for j, name in enumerate(("no_double", "double_take", "double_pass", "take_point")):
        cols[name] = cube[:, j]
    play_rows = np.flatnonzero(kind == k.CHECKER)
    done, best_play, plays = [], [], []
    best_equity = np.full(m, np.nan)
    for rows, (names, eqs, texts, best) in _play_batches(play_rows, boards, dice, settings, fmt,
                                                         contexts, ctx, cubeful, L):
        done.append(rows)
        best_play += names
        plays += texts
        best_equity[rows] = eqs
        if cubeful:
            _put_values(values, rows, best[:, 0], best[:, 1])
    done = np.concatenate(done) if done else np.zeros(0, dtype=np.int64)
    cols["best_play"], cols["plays"] = _blob_rows(done, best_play, m), _blob_rows(done, plays, m)
    cols["best_equity"] = best_equity
    for j, name in enumerate(("cubeful_equity", "mwc", "emg")):
        cols[name] = values[:, j]
    for j, name in enumerate(PROB_NAMES):
        cols[name] = probs[:, j]
    cols["equity"] = equity(probs)
    cols["rollout"] = _blob(_rollouts(L, kind, settings) if settings.rollout_games > 0 else {}, m)
    cols["error"] = _blob({}, m)
    for i in L.errors:
        kind[i] = k.VERBATIM
    ebytes, eoffs = _blob({i: format_row(row, fmt) for i, row in L.errors.items()}, m)
    tbytes, toffs = table.arrays()
    program, end = _program(fmt)
    columns = []
    for code, mask, key, name in program:
        col = cols[name]
        columns.append((code, mask, key, *(col if isinstance(col, tuple) else (col, None))))
    out = k.format_rows(fmt == "csv", kind, columns, end,
                        np.frombuffer(L.text or b" ", dtype=np.uint8), L.offsets,
                        tbytes, toffs, ebytes, eoffs, into)
    return out, m, len(L.errors)


def _plays_texts(boards: np.ndarray, dice: np.ndarray, settings: AnalysisSettings,
                 fmt: str, cubes=None) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """The checker-play columns of many rows, encoded for ``fmt``: each
    board's best play (its notation), that play's cubeless equity (NaN: no
    legal play), the listed plays (the ``plays`` field: in JSON each play's
    notation, cubeless equity, cubeful value -- money: ``cubeful_equity``;
    a match: ``mwc`` and ``emg`` -- and loss against the best in the value
    the plays are ranked by; in CSV each play's notation and that value),
    and the best play's ``(cubeful value, MWC)`` ``float64[n, 2]`` (NaN:
    none, or money for the MWC): one ranking of every board's plays (at
    the cube contexts ``cubes``, one per board, or cubeless), the notation
    of the listed plays in one call, the values written by the row
    writer's float writer."""
    from .evaluate import rank_plays_batch
    from .formats import _play_names

    batch = rank_plays_batch(boards, dice.astype(np.int64), plies=settings.ply,
                             evaluator=settings.evaluator, cube=cubes)
    counts = np.diff(batch.offsets)
    k = np.minimum(counts, max(1, settings.top))        # the plays named: the best one at least
    first = np.cumsum(k) - k
    board_of = np.repeat(np.arange(len(k)), k)
    sel = batch.order[np.repeat(batch.offsets[:-1], k) + np.arange(k.sum()) - np.repeat(first, k)]
    names = _play_names(boards[board_of, 0], batch.moves[sel])
    eq = batch.equity[sel]
    value = eq if cubes is None else batch.cubeful[sel]
    mwc = (np.full(len(sel), np.nan) if cubes is None or batch.mwc is None
           else batch.mwc[sel])
    has = k > 0
    loss = np.repeat(value[first[has]], k[has]) - value    # against each board's best
    best = np.full((len(k), 2), np.nan)
    if cubes is not None:
        best[has, 0], best[has, 1] = value[first[has]], mwc[first[has]]
    best_equity = np.full(len(k), np.nan)
    best_equity[has] = eq[first[has]]
    listed = min(max(settings.top, 0), int(k.max(initial=0)))
    best_names, plays = [], []
    if fmt == "jsonl":
        eqs, losses = _json_floats(eq), _json_floats(loss)
        # each listed play's "equity" and cubeful members, in one pass
        mid = eqs
        if cubes is not None:
            money = np.repeat([c.is_money for c in cubes], k)
            vals = _json_floats(value)
            # (NaN, money plays' MWC, is never written)
            mwcs = vals if money.all() else _json_floats(np.nan_to_num(mwc))
            money = money.tolist()
            mid = [f'{e},"cubeful_equity":{v}' if mo else f'{e},"mwc":{w},"emg":{v}'
                   for e, v, w, mo in zip(eqs, vals, mwcs, money)]
        for j, n in zip(first.tolist(), k.tolist()):
            if not n:
                best_names.append('""')
                plays.append("[]")
                continue
            listing = ",".join(f'{{"play":"{names[i]}","equity":{mid[i]},"loss":{losses[i]}}}'
                               for i in range(j, j + min(n, listed)))
            best_names.append(f'"{names[j]}"')
            plays.append(f"[{listing}]")
        return best_names, best_equity, plays, best
    for j, n in zip(first.tolist(), k.tolist()):
        if not n:
            best_names.append("")
            plays.append("")
            continue
        listing = _csv_plays((names[i], round(e, 6)) for i, e in
                             zip(range(j, j + min(n, listed)), value[j:j + min(n, listed)].tolist()))
        best_names.append(_csv_text(names[j]))
        plays.append(_csv_text(listing))
    return best_names, best_equity, plays, best


def _play_batches(play_rows, boards, dice, settings, fmt, contexts, ctx, cubeful, L):
    """``(rows, _plays_texts of them)`` of the checker rows: one batch; if
    the evaluator's probabilities are refused, a row at a time, each row
    refused an error row."""
    if not play_rows.size:
        return

    def texts(rows):
        cubes = [contexts[c] for c in ctx[rows].tolist()] if cubeful else None
        return _plays_texts(boards[rows], dice[rows], settings, fmt, cubes)

    try:
        yield play_rows, texts(play_rows)
        return
    except BgfastError:
        pass
    for i in play_rows.tolist():
        rows = np.array([i])
        try:
            got = texts(rows)
        except BgfastError as exc:
            L.error(i, str(exc))
            continue
        yield rows, got


def _rollouts(L: _Lines, kind: np.ndarray, settings: AnalysisSettings) -> dict:
    """``{row: the JSON of its rollout}`` of the rows with values."""
    from . import _analyze as k
    from .rollout import rollout

    out = {}
    for i in np.flatnonzero((kind == k.CUBE) | (kind == k.CHECKER)).tolist():
        # one process per rollout: a run spreads its lines over the processes
        res = rollout(Position(L.boards[i]), games=settings.rollout_games, seed=settings.seed,
                      jobs=1)
        out[i] = json.dumps(res.to_dict(), separators=(",", ":"))
    return out


def analyze_record(rec: Record, settings: AnalysisSettings) -> dict:
    """The output row of one record, by the pipeline of every row: its
    probabilities (exact in bear-offs, else the evaluator at the ply:
    :func:`bgfast.evaluate.sourced_probabilities`), then its plays ranked
    at its cube and score (cubeless with ``settings.cubeless``) or its
    cube decision."""
    L = _Lines.empty(1)
    L.put_record(0, rec)
    return _row_dict(L, settings)


def _scalar_row(number: int, text: str, settings: AnalysisSettings) -> dict:
    """The row of one line alone, parsed in Python (an error row for a bad
    line)."""
    L = _Lines.empty(1)
    L.put_line(0, number, text)
    return _row_dict(L, settings)


def _row_dict(L: _Lines, settings: AnalysisSettings) -> dict:
    return json.loads(bytes(_analysed(L, settings, "jsonl")[0]))


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------

def _csv_plays(plays) -> str:
    """The CSV ``plays`` field of (notation, rounded equity) pairs."""
    return "; ".join(f"{name}={equity:+.4f}" for name, equity in plays)


def _csv_value(key, value):
    if value is None:
        return ""
    if key == "plays":           # each play's value as it is ranked
        return _csv_plays((p["play"], p.get("emg", p.get("cubeful_equity", p["equity"])))
                          for p in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return value


def format_row(row: dict, fmt: str) -> str:
    if fmt == "jsonl":
        return json.dumps(row, separators=(",", ":")) + "\n"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([_csv_value(k, row.get(k)) for k in ROW_FIELDS])
    return buf.getvalue()


def csv_header() -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(ROW_FIELDS)
    return buf.getvalue()


#: The run record of an output file is ``OUTPUT + RUN_RECORD``.
RUN_RECORD = ".resume.json"
#: The command-line options of the settings a resume must match.
_OPTIONS = {"format": "--format", "ply": "--ply", "top": "--top", "evaluator": "--evaluator",
            "rollout_games": "--rollout", "seed": "--seed", "cubeless": "--cubeless"}
#: Settings a run record may lack, with the value such a record means (a
#: record without "cubeless" is of a cubeless run).
_DEFAULTS = {"cubeless": True}
_JSON_ROW = re.compile(rb'\{"line":([0-9]+)[,}]')
_CSV_ROW = re.compile(rb"([0-9]+),")


def _run_settings(fmt: str, settings: AnalysisSettings) -> dict:
    return {"format": fmt, **dataclasses.asdict(settings)}


def _write_run_record(output: str, fmt: str, settings: AnalysisSettings, lines: int,
                      digest: str) -> None:
    """The run record of ``output``: its settings, and the number and
    SHA-256 of the input lines read for its rows.  It is replaced before the
    rows of each block are written (so it always covers every row), and not
    forced to disk: like the rows, it survives a killed process."""
    record = {"bgfast": "analyze run", "version": 1, **_run_settings(fmt, settings),
              "lines": lines, "sha256": digest}
    atomic_write(output + RUN_RECORD, json.dumps(record) + "\n", fsync=False)


def _read_run_record(output: str) -> dict | None:
    """The run record of ``output``, or None if it has none."""
    path = output + RUN_RECORD
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InvalidRecordError(f"cannot resume {output}: its run record {path} cannot be "
                                 f"read ({exc})") from None
    if (not isinstance(record, dict) or record.get("bgfast") != "analyze run"
            or not isinstance(record.get("lines"), int) or record["lines"] < 0
            or not isinstance(record.get("sha256"), str)
            or any(k not in record and k not in _DEFAULTS for k in _OPTIONS)):
        raise InvalidRecordError(f"cannot resume {output}: {path} is not a bgfast run record")
    return record


def _check_settings(output: str, record: dict, fmt: str, settings: AnalysisSettings) -> None:
    for key, value in _run_settings(fmt, settings).items():
        was = record.get(key, _DEFAULTS.get(key))
        if was != value:
            option = _OPTIONS.get(key, key)
            if isinstance(value, bool):            # a flag: with it or without it
                raise InvalidRecordError(
                    f"cannot resume {output}: it was written {'with' if was else 'without'} "
                    f"{option}, and this run is {'with' if value else 'without'} it")
            raise InvalidRecordError(f"cannot resume {output}: it was written with {option} "
                                     f"{was}, not {option} {value}")


def resume_point(path: str, fmt: str) -> int:
    """Last input line whose row is in ``path`` (0 when there is no file);
    raises :class:`InvalidRecordError` if ``path`` is not bgfast's output in
    ``fmt``.  Reads only (:func:`run` cuts a torn last row)."""
    if not os.path.exists(path):
        return 0
    return _rows_done(path, fmt)[0]


def _rows_done(path: str, fmt: str) -> tuple[int, int]:
    """``(last input line with a row, bytes of the whole rows)`` of the
    output file ``path``, each row checked to be one of bgfast's, a torn
    last row (the tail after the last newline) to be the start of one."""
    last = end = 0
    row = _JSON_ROW if fmt == "jsonl" else _CSV_ROW
    start = b'{"line":' if fmt == "jsonl" else b""
    with open(path, "rb") as f:
        if fmt == "csv":
            header = f.readline()
            want = csv_header().encode()
            if header != want:
                if not header.endswith(b"\n") and want.startswith(header):
                    return 0, 0                      # torn in its header: nothing done
                raise InvalidRecordError(f"cannot resume {path}: the CSV header is not bgfast's")
            end = len(header)
        for raw in f:
            if not raw.endswith(b"\n"):             # a torn last row
                if not (start.startswith(raw[:len(start)])
                        and (fmt == "jsonl" or raw[:1].isdigit())):
                    raise InvalidRecordError(f"cannot resume {path}: its last line is not "
                                             "a bgfast row")
                break
            m = row.match(raw)
            if m is None or (fmt == "jsonl" and not raw.endswith(b"}\n")):
                raise InvalidRecordError(f"cannot resume {path}: a row is not bgfast's "
                                         f"{'JSON Lines' if fmt == 'jsonl' else 'CSV'}")
            last = max(last, int(m.group(1)))
            end += len(raw)
    return last, end


def _resume(output: str, fmt: str, settings: AnalysisSettings, lines: Iterator[str],
            digest) -> tuple[int, int | None, Iterator[str], int]:
    """Check that ``output`` can be resumed, touching nothing: it is
    bgfast's output in ``fmt``, its run record has these settings, and the
    input's first lines (as many as the record covers, read from ``lines``
    into ``digest``) are those it was written from.  Returns ``(last line done,
    bytes of whole rows to keep or None, the lines after the last line
    done, the lines the record covers)``."""
    if not os.path.exists(output) or os.path.getsize(output) == 0:
        return 0, None, lines, 0                     # nothing done yet
    record = _read_run_record(output)                # None: none (named after the rows)
    if record is not None:
        _check_settings(output, record, fmt, settings)
    last, end = _rows_done(output, fmt)
    if record is None:
        raise InvalidRecordError(f"cannot resume {output}: it has no run record "
                                 f"{output + RUN_RECORD} (bgfast analyze -o writes one)")
    count = record["lines"]
    if last > count:
        raise InvalidRecordError(f"cannot resume {output}: it holds rows past line {count:,}, "
                                 "the last its run record covers")
    kept: list = []         # lines last+1 .. count, analysed again (blanks and comments as such)
    read = 0
    while read < count:
        block = bound_lines(list(islice(lines, min(1 << 16, count - read))))
        if not block:
            break
        digest.update("".join(block).encode("utf-8", "surrogateescape"))
        if read + len(block) > last:
            kept.extend(line if line.strip() and not line.lstrip().startswith("#") else "\n"
                        for line in block[max(0, last - read):])
        read += len(block)
    if read < count or digest.hexdigest() != record["sha256"]:
        raise InvalidRecordError(f"cannot resume {output}: the input is not the one it was "
                                 f"written from (its first {count:,} lines differ)")
    return last, end, chain(kept, lines), count


class _Writer:
    """Appends rows: one write and a flush per call.  ``keep``: when
    appending, the bytes of whole rows to keep (a torn last row is cut)."""

    def __init__(self, path: str | None, fmt: str, append: bool, stream=None,
                 keep: int | None = None):
        self.fmt = fmt
        if path is None:
            self.f = stream
            self.close_it = False
        else:
            if append and keep is not None and keep < os.path.getsize(path):
                os.truncate(path, keep)
            fresh = not append or not os.path.exists(path) or os.path.getsize(path) == 0
            self.f = open(path, "a" if append else "w", encoding="utf-8")
            self.close_it = True
            if fmt == "csv" and fresh:
                self.f.write(csv_header())
                self.f.flush()
        if path is None and fmt == "csv":
            self.f.write(csv_header())

    def write(self, row: dict) -> None:
        self.write_text(format_row(row, self.fmt))

    def write_text(self, text: str) -> None:
        """Whole rows, in one write, flushed."""
        self.f.write(text)
        self.f.flush()

    def write_bytes(self, data: bytes) -> None:
        """Whole rows as UTF-8, in one write, flushed (straight to the
        byte stream under a UTF-8 text file)."""
        raw = getattr(self.f, "buffer", None)
        if raw is not None and str(getattr(self.f, "encoding", "")).lower() in ("utf-8", "utf8"):
            self.f.flush()
            raw.write(data)
            raw.flush()
        else:
            self.write_text(bytes(data).decode("utf-8"))

    def close(self):
        if self.close_it:
            self.f.close()


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Packed:
    """Input lines as one ASCII text: line i is ``text[ends[i - 1]:ends[i]]``."""

    text: memoryview
    ends: np.ndarray


def _put_lines(chunk, buf):
    """A ``(first, lines)`` chunk into a worker's shared input buffer as
    text and line ends: ``(first, text bytes, lines)``, or None when the
    lines are not all ASCII text or do not fit."""
    first, lines = chunk
    try:
        text = "".join(lines)
    except TypeError:
        return None
    if not text.isascii():
        return None
    data = text.encode("ascii")
    at = -(-len(data) // 8) * 8
    if at + 8 * len(lines) > len(buf):
        return None
    ends = np.cumsum(np.fromiter(map(len, lines), dtype=np.int64, count=len(lines)))
    buf[:len(data)] = data
    buf[at:at + 8 * len(lines)] = ends.tobytes()
    return (first, len(data), len(lines))


def _get_lines(ref, buf):
    """The worker's side of :func:`_put_lines`: ``(first, _Packed)``."""
    first, size, count = ref
    at = -(-size // 8) * 8
    return first, _Packed(memoryview(buf)[:size],
                          np.frombuffer(buf, dtype=np.int64, count=count, offset=at))


def _blocks(it: Iterator[str], number: int, size: int, first_size: int = 64,
            split_end: bool = False, pieces: int = 4) -> Iterator[tuple[int, list]]:
    """``(number of the first line, raw lines)`` blocks of the lines of
    ``it``, the first numbered ``number``; the first blocks are small (rows
    show up at once), then they grow fourfold up to ``size``.  With
    ``split_end`` (several processes) the last two blocks' lines come in
    ``pieces`` pieces (at most a quarter block each, at least ``first_size``
    lines), so that the processes end together: two blocks are read ahead."""
    step = max(1, min(first_size, size))
    ahead: list = []
    while True:
        block = list(islice(it, step))
        if not block:
            break
        ahead.append(block)
        step = min(4 * step, size)
        if len(ahead) > (2 if split_end else 0):
            block = ahead.pop(0)
            yield number, block
            number += len(block)
    rest = [line for block in ahead for line in block]
    piece = max(1, min(first_size, size), min(size // 4, -(-len(rest) // pieces)))
    for k in range(0, len(rest), piece):
        yield number + k, rest[k:k + piece]


def run(lines: Iterable[str], *, output: str | None = None, fmt: str = "jsonl",
        settings: AnalysisSettings = AnalysisSettings(), jobs: int | None = 1, backend: str = "local",
        address: str | None = None, resume: bool = False, chunk_size: int = 16384,
        stream=None, progress=None) -> dict:
    """Analyse ``lines``; write rows to ``output`` (or ``stream``) in input order.

    Work goes out in blocks of at most ``chunk_size`` input lines (the first
    ones smaller; one line a block with rollouts, which spread over the
    processes); the rows of a block are written with one write and a flush,
    so a crash can only tear the last row, which ``resume`` cuts.  With
    ``output`` (a regular file), its run record (:data:`RUN_RECORD`) is kept
    beside it, and ``resume`` first checks (:func:`_resume`) that the file,
    the settings and the input are those of the run it continues, and
    refuses with an :class:`InvalidRecordError` otherwise, the file
    untouched.
    Returns counts: ``{"rows": n, "errors": k, "resumed_after_line": lines
    already done}``.  ``progress(n)`` is called with the number of input
    lines dealt with (those a resume skips, then each block's).
    """
    if fmt not in ("csv", "jsonl"):
        raise BgfastError(f"unknown output format {fmt!r}; choose csv or jsonl")
    if resume and output is None:
        raise BgfastError("--resume needs an output file (-o)")
    size = 1 if settings.rollout_games else chunk_size
    split, pieces = (jobs or cores()) > 1, 4
    if backend == "ray":          # connected before anything is read or written;
        # the last blocks in pieces for every CPU of the cluster
        from ._ray import cluster_cpus, connect

        split, pieces = True, max(4, 2 * cluster_cpus(connect(address)))
    it = iter(lines)
    start, keep, digest, hashed = 0, None, None, 0
    if output is not None:
        check_writable(output, stream=True)
        if os.path.exists(output) and not os.path.isfile(output):
            # a device or a pipe (-o /dev/stdout): written in place, no run record
            if resume:
                raise BgfastError(f"--resume needs a regular output file, not {output}")
        else:
            check_writable(output + RUN_RECORD, "run record")
            digest = hashlib.sha256()
            if resume:
                start, keep, it, hashed = _resume(output, fmt, settings, it, digest)
            if keep is None:                         # a new run: its record comes first
                _write_run_record(output, fmt, settings, 0, digest.hexdigest())
    if progress is not None and start:
        progress(start)
    marks: deque = deque()        # of each block read: (lines hashed, their SHA-256, its lines)

    def blocks():
        nonlocal hashed
        for number, block in _blocks(it, start + 1, size, min(size, 64),
                                     split_end=split, pieces=pieces):
            block = bound_lines(block)
            if digest is not None and number + len(block) - 1 > hashed:
                # the lines a resume read are in the digest already
                digest.update("".join(block[max(0, hashed + 1 - number):])
                              .encode("utf-8", "surrogateescape"))
                hashed = number + len(block) - 1
            marks.append((hashed, digest.hexdigest() if digest is not None else "", len(block)))
            yield number, block

    writer = _Writer(output, fmt, append=keep is not None, stream=stream, keep=keep)
    rows = errors = 0
    try:
        for text, n, bad in ordered_map(_chunk_text, blocks(),
                                        (settings, fmt), jobs, backend, address,
                                        put=_put_lines, get=_get_lines, into=True):
            last, sha, count = marks.popleft()
            if digest is not None:
                _write_run_record(output, fmt, settings, last, sha)
            if n:
                writer.write_bytes(text)
            rows += n
            errors += bad
            if progress is not None:
                progress(count)
    finally:
        writer.close()
    return {"rows": rows, "errors": errors, "resumed_after_line": start}


# ---------------------------------------------------------------------------
# HTML report
# ---------------------------------------------------------------------------

def html_report(rows: Iterable[dict], *, title: str = "bgfast analysis", limit: int = 200,
                key=None) -> str:
    """An HTML page with an SVG board and the results of each row (the
    ``limit`` rows with the largest ``key``, e.g. the biggest errors)."""
    from html import escape

    from .svg import board_svg

    rows = [r for r in rows if "error" not in r and r.get("position_id")]
    if key is not None:
        rows = sorted(rows, key=key, reverse=True)
    rows = rows[:limit]
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title>",
             "<style>body{font-family:sans-serif;margin:2em} .item{display:flex;gap:2em;"
             "margin-bottom:2em;border-bottom:1px solid #ccc;padding-bottom:1em}"
             "table{border-collapse:collapse} td,th{padding:2px 8px;text-align:left}</style>",
             f"</head><body><h1>{escape(title)}</h1>"]
    for r in rows:
        pos = Position.from_position_id(r["position_id"])
        facts = [("line", r.get("line")), ("context", r.get("context")), ("dice", r.get("dice")),
                 ("class", r.get("class")), ("equity", r.get("equity")),
                 ("best play", r.get("best_play")), ("cube", r.get("cube_action")),
                 ("played", r.get("played")), ("loss", r.get("loss"))]
        table = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
                        for k, v in facts if v not in (None, ""))
        plays = "".join(f"<tr><td>{escape(p['play'])}</td><td>{p['equity']:+.4f}</td>"
                        f"<td>{-p['loss']:+.4f}</td></tr>" for p in r.get("plays") or [])
        if plays:
            table += f"<tr><th colspan=2>plays</th></tr>{plays}"
        parts.append(f"<div class='item'><div>{board_svg(pos)}</div><table>{table}</table></div>")
    parts.append("</body></html>")
    return "".join(parts)


# ---------------------------------------------------------------------------
# match analysis
# ---------------------------------------------------------------------------

#: Equity-loss thresholds (per unit cube, or normalised match equity), as gnubg's defaults.
THRESHOLDS = (("blunder", 0.16), ("error", 0.08), ("doubtful", 0.04))
#: gnubg's close cube decision: doubling costs less than this (it counts in the error rates).
CLOSE_CUBE = 0.16
MATCH_FIELDS = ["game", "decision", "player", "name", "kind", "position_id", "match_id", "dice",
                "valuation", "played", "best", "equity_played", "equity_best", "loss", "mwc_loss",
                "close", "flag", "luck"]


def flag_of(loss: float) -> str:
    for name, limit in THRESHOLDS:
        if loss >= limit:
            return name
    return ""


def _cube_values(dec) -> dict:
    """A cube decision's values for the match analysis, each ``(equity,
    MWC)`` to the player on roll (equities per unit cube, a match's EMG;
    MWC None for money): ``no_double``, ``double`` (the taker's better
    answer, a beaver counted), ``take``, ``pass``, ``best`` (the proper
    action's), and ``close`` (doubling costs less than :data:`CLOSE_CUBE`)."""
    def mwc(v):
        return None if v is None else float(v)

    take = dec.double_beaver if dec.beaver else dec.double_take
    out = {"no_double": (dec.no_double, mwc(dec.mwc_no_double)),
           "take": (take, mwc(dec.mwc_double_take)),
           "pass": (dec.double_pass, mwc(dec.mwc_double_pass))}
    out["double"] = min(out["take"], out["pass"], key=lambda v: v[0])
    out["best"] = out["double"] if dec.action.doubles else out["no_double"]
    out["close"] = dec.best_equity - min(take, dec.double_pass) < CLOSE_CUBE
    return out


def _loss(played, best, flip: bool = False) -> tuple:
    """``(equity loss, MWC loss or None)`` of ``played`` against ``best``
    (each ``(equity, MWC)``; ``flip``: values of the other side)."""
    sign = -1.0 if flip else 1.0
    eq = max(0.0, sign * (best[0] - played[0]))
    mwc = None if best[1] is None else max(0.0, sign * (best[1] - played[1]))
    return eq, mwc


def _luck(pos: Position, dice, cube, settings: AnalysisSettings, first: bool) -> float:
    """The luck of rolling ``dice`` in ``pos``, at 0 plies, as gnubg
    measures it: the value to the mover (cubeful at ``cube``, or cubeless
    with None) of the roll's best play minus its average over the rolls
    (the 15 rolls that are not doubles for the ``first`` move of a game,
    the 21 otherwise; a roll that cannot be played: the position with the
    turn passed)."""
    from .evaluate import cubeful_equity, equity, get_evaluator, rank_plays_batch
    from .movegen import ALL_ROLLS, ROLL_WEIGHTS

    n = len(ALL_ROLLS)
    batch = rank_plays_batch(np.repeat(pos.board[None], n, axis=0), ALL_ROLLS, plies=0,
                             evaluator=settings.evaluator, cube=cube)
    value = batch.equity if cube is None else batch.cubeful
    counts = np.diff(batch.offsets)
    best = np.empty(n)
    has = counts > 0
    best[has] = value[batch.order[batch.offsets[:-1][has]]]
    if not has.all():                              # the turn passes: minus the opponent's value
        passed = pos.board[::-1][None].copy()
        if cube is None:
            best[~has] = -equity(get_evaluator(settings.evaluator).evaluate_batch(passed))[0]
        else:
            best[~has] = -cubeful_equity(passed, cube.flipped(),
                                         evaluator=settings.evaluator).equity[0]
    w = ROLL_WEIGHTS * (ALL_ROLLS[:, 0] != ALL_ROLLS[:, 1]) if first else ROLL_WEIGHTS
    roll = np.flatnonzero((ALL_ROLLS[:, 0] == max(dice)) & (ALL_ROLLS[:, 1] == min(dice)))[0]
    return float(best[roll] - (best * w).sum() / w.sum())


def _analyze_game(item, settings: AnalysisSettings) -> list[dict]:
    """Worker entry: (game number, match dict of the rules/names, game) ->
    decision rows, every value at the decision's own cube and score
    (cubeless with ``settings.cubeless``: checker plays by cubeless
    equity, cube decisions by Janowski's model on the n-ply probabilities)."""
    from .evaluate import rank_plays
    from .game import Phase

    number, names, game = item
    replay = game.replay_start()
    rows = []
    decision = 0
    first = True                # the game's first move: its roll is never a double
    actions = list(game.actions)

    def add(pos, dice, row):
        nonlocal decision
        rows.append(_decision_row(number, names, decision, pos, replay, dice, row, settings))
        decision += 1

    for i, action in enumerate(actions):
        if action.kind in ("roll", "double") and (action.kind == "double" or replay.can_double()):
            p = replay.turn
            pos = replay.position()
            dec = _cube_decision(pos, CubeContext.from_game(replay, p), settings)
            v = _cube_values(dec)
            doubled = action.kind == "double"
            played = v["double"] if doubled else v["no_double"]
            add(pos, None, {"kind": "cube", "player": p, "played": "double" if doubled else
                            "no double", "best": dec.action_text, "equity_played": played[0],
                            "equity_best": v["best"][0], "loss": _loss(played, v["best"]),
                            "close": doubled or v["close"]})
            answer = actions[i + 1].kind if doubled and i + 1 < len(actions) else None
            if answer in ("take", "drop", "beaver"):
                # the taker's values are the doubler's, seen from the other side
                took = answer != "drop"
                mine = v["take"] if took else v["pass"]
                best = min(v["take"], v["pass"], key=lambda x: x[0])
                add(pos, None,
                    {"kind": "take", "player": 1 - p, "played": "take" if took else "pass",
                     "best": "take" if v["take"][0] <= v["pass"][0] else "pass",
                     "equity_played": -mine[0], "equity_best": -best[0],
                     "loss": _loss(mine, best, flip=True), "close": True})
        elif action.kind == "move" and replay.phase == Phase.MOVE:
            plays = replay.legal_plays()
            p = replay.turn
            pos = replay.position()
            cube = None if settings.cubeless else CubeContext.from_game(replay, p)
            luck = _luck(pos, replay.dice, cube, settings, first)
            first = False
            if len(plays) > 1:
                played = replay.find_play(action.moves)
                ranked = rank_plays(pos, replay.dice[0], replay.dice[1], plies=settings.ply,
                                    evaluator=settings.evaluator, cube=cube)
                mine = next(r for r in ranked if r.play.position == played.position)
                best = ranked[0]
                add(pos, replay.dice,
                    {"kind": "checker", "player": p, "played": played.notation,
                     "best": best.play.notation, "equity_played": mine.value,
                     "equity_best": best.value,
                     "loss": _loss((mine.value, mine.mwc), (best.value, best.mwc)),
                     "close": True, "luck": luck})
            else:                                   # one play or none: only its luck
                only = plays[0].notation if plays else ""
                add(pos, replay.dice,
                    {"kind": "forced", "player": p, "played": only, "best": only,
                     "equity_played": 0.0, "equity_best": 0.0, "loss": (0.0, None),
                     "close": False, "luck": luck})
        if action.kind == "roll" and not replay.position().legal_plays(*action.dice):
            # a roll that cannot be played: the turn passes at once, with no
            # move to score, but the roll has its luck (as gnubg counts it)
            p = replay.turn
            pos = replay.position()
            cube = None if settings.cubeless else CubeContext.from_game(replay, p)
            add(pos, action.dice,
                {"kind": "forced", "player": p, "played": "", "best": "",
                 "equity_played": 0.0, "equity_best": 0.0, "loss": (0.0, None),
                 "close": False, "luck": _luck(pos, action.dice, cube, settings, first)})
            first = False
        replay.apply(action)
    return rows


def _decision_row(game_no, names, decision, pos, replay, dice, row, settings) -> dict:
    out = {"game": game_no, "decision": decision, "player": row["player"],
           "name": names[row["player"]], "kind": row["kind"], "position_id": pos.position_id(),
           "match_id": replay.match_id(), "dice": f"{dice[0]}{dice[1]}" if dice else "",
           "valuation": "cubeless" if settings.cubeless else "cubeful"}
    for k in ("played", "best"):
        out[k] = row[k]
    for k in ("equity_played", "equity_best"):
        out[k] = round(float(row[k]), 6)
    loss, mwc_loss = row["loss"]
    out["loss"] = round(float(loss), 6)
    out["mwc_loss"] = None if mwc_loss is None else round(float(mwc_loss), 6)
    out["close"] = bool(row["close"])
    out["flag"] = flag_of(out["loss"])
    out["luck"] = None if row.get("luck") is None else round(float(row["luck"]), 6)
    return out


def summarize(rows: Iterable[dict], names=("Player 0", "Player 1")) -> dict:
    """Per player, in gnubg's terms: the unforced checker plays and the
    close or actual cube decisions (take decisions included), the equity
    lost on each kind (per unit cube; a match's EMG) and in MWC at a
    match, the error rates in mEMG (thousandths of that equity) per
    decision -- checker play per unforced play, cube per close or actual
    cube decision, overall per both --, the number of doubtful plays,
    errors and blunders, and the luck of the rolls (``moves`` rolls played,
    forced ones included: their total ``luck`` and ``luck_rate_memg`` per
    roll)."""
    stats = {p: {"name": names[p], "checker_decisions": 0, "cube_decisions": 0,
                 "checker_loss": 0.0, "cube_loss": 0.0, "checker_mwc_loss": 0.0,
                 "cube_mwc_loss": 0.0, "doubtful": 0, "error": 0, "blunder": 0,
                 "moves": 0, "luck": 0.0}
             for p in (0, 1)}
    match = False
    for r in rows:
        s = stats[r["player"]]
        if r.get("luck") is not None:
            s["moves"] += 1
            s["luck"] += r["luck"]
        if r["kind"] == "forced":
            continue
        kind = "checker" if r["kind"] == "checker" else "cube"
        s[f"{kind}_decisions"] += bool(r.get("close", True))
        s[f"{kind}_loss"] += r["loss"]
        if r.get("mwc_loss") is not None:
            match = True
            s[f"{kind}_mwc_loss"] += r["mwc_loss"]
        if r["flag"]:
            s[r["flag"]] += 1

    def rate(loss, n):
        return round(1000 * loss / n, 2) if n else 0.0

    for s in stats.values():
        n = s["checker_decisions"] + s["cube_decisions"]
        total = s["checker_loss"] + s["cube_loss"]
        s["total_loss"] = round(total, 6)
        for k in ("checker_loss", "cube_loss"):
            s[k] = round(s[k], 6)
        s["error_rate_memg"] = rate(total, n)
        s["checker_error_rate_memg"] = rate(s["checker_loss"], s["checker_decisions"])
        s["cube_error_rate_memg"] = rate(s["cube_loss"], s["cube_decisions"])
        s["luck"] = round(s["luck"], 6)
        s["luck_rate_memg"] = rate(s["luck"], s["moves"])
        mwc = s.pop("checker_mwc_loss"), s.pop("cube_mwc_loss")
        if match:
            s["checker_mwc_loss"], s["cube_mwc_loss"] = round(mwc[0], 6), round(mwc[1], 6)
            s["total_mwc_loss"] = round(mwc[0] + mwc[1], 6)
    return {"players": [stats[0], stats[1]]}


def analyze_match(match, *, settings: AnalysisSettings = AnalysisSettings(), jobs: int = 1,
                  backend: str = "local", address: str | None = None) -> Iterator[dict]:
    """Every checker play and cube action of both players, as decision rows
    in the order played (games are analysed in parallel)."""
    items = ([(n + 1, match.names, g)] for n, g in enumerate(match.games))
    for rows in ordered_map(_analyze_games, items, settings, jobs, backend, address):
        yield from rows


def _analyze_games(chunk, settings):
    out = []
    for item in chunk:
        out.extend(_analyze_game(item, settings))
    return out
