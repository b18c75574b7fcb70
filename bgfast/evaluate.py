"""Position evaluators and move choice (0-ply, 1-ply, 2-ply).

Every evaluator gives, for the player on roll, the five cumulative
probabilities ``(win, win gammon, win backgammon, lose gammon, lose
backgammon)`` (win includes gammons) and the cubeless equity
``2 win - 1 + wg - lg + wbg - lbg``.  One interface, single and batch forms::

    ev = bgfast.evaluate.get_evaluator("net")
    probs = ev.evaluate_batch(boards)          # float64[N, 5]
    e = ev.evaluate(Position.initial())        # Evaluation(probs, equity)

Evaluators:

* ``exact`` -- the two-sided bear-off table (``bgfast.bearoff``), both sides
  with at most 6 checkers in their home boards; finished games;
* ``race`` -- one-sided convolution of the bear-off distributions (every
  bear-off position, gammons included);
* ``pubeval`` -- Tesauro's public evaluator (weights in
  ``bgfast/data/pubeval``).  It gives a score, not probabilities: the
  probabilities are a logistic calibration of the score and a few race
  features (pips, checkers off, on the bar) fitted on seeded pubeval
  self-play (``calibration.json``, see :func:`bgfast.train.fit_pubeval_calibration`).
* ``composite`` -- picks per position: finished -> exact result, bear-off ->
  exact or race table, otherwise calibrated pubeval;
* ``net`` -- bgfast's own neural net (``bgfast.net``) with the same exact
  bear-off tables: the strongest evaluator, and the default of every
  function here that takes one.  :func:`register_evaluator` adds others.

The composite evaluator and the pubeval move choice also exist in C
(``bgfast._evaluate``) for the rollout engine.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from typing import Callable

import numpy as np

from . import _evaluate as _k
from . import _movegen
from . import cube as _cube
from ._evaluator import (PROB_NAMES, Evaluation, Evaluator, bearoff_tables, boards_and_dice,
                         ensure_tables, equity, install_bearoff_tables, invert, load_calibration,
                         pubeval_weights, race_points, use_race_points)
from .errors import BgfastError, InvalidPositionError, check_number, check_whole
from .formats import check_dice
from .movegen import ALL_ROLLS, ROLL_WEIGHTS, _frozen, _kernel_failure, legal_plays_batch
from .position import (Position, PositionClass, _CheckedBoards, as_board, as_boards,
                       classify_boards)

__all__ = [
    "PROB_NAMES", "Evaluation", "Evaluator", "PubevalEvaluator", "ExactEvaluator",
    "RaceEvaluator", "CompositeEvaluator", "register_evaluator", "get_evaluator",
    "evaluator_names", "equity", "invert", "pubeval_score", "pubeval_weights",
    "rank_plays", "rank_plays_batch", "RankedBatch", "RankedPlay", "RankedPlays", "best_play",
    "evaluate_ply", "calibration",
    "install_bearoff_tables", "race_points", "use_race_points", "cubeful_equity", "evaluate_cube", "evaluate_cube_batch",
    "SourcedProbabilities", "sourced_probabilities", "MAX_PLIES",
]

#: The deepest search the functions here take (plies): each ply multiplies
#: the work by about 21, and the net kernel chooses plays at 0..3 plies
#: (:meth:`bgfast.net.Net.choose`); the levels play at 0..3 plies.
MAX_PLIES = 3

POLICY_PUBEVAL = 0
POLICY_EVAL = 1
EVAL_COMPOSITE = 0   # kernel slots: pubeval + bear-off tables + finished games,
EVAL_PUBEVAL = 1     # calibrated pubeval alone


# ---------------------------------------------------------------- helpers

def pubeval_score(boards, *, contact=None) -> np.ndarray | float:
    """Tesauro's score of boards for the side NOT on roll (row 0), i.e. a
    play's result for the player who made it -- like ``gnubg_nn.pub_eval_score``.

    ``contact`` picks the weights (True = contact, False = race); by default
    each board's own class.  The move choice uses the class of the position
    before the move (see :func:`best_play`).
    """
    b = as_boards(boards)
    single = np.asarray(boards).ndim == 2 if not isinstance(boards, Position) else True
    if contact is None:
        flags = np.full(b.shape[0], -1, dtype=np.int8)
    else:
        flags = np.broadcast_to(np.asarray(contact, dtype=np.int8), (b.shape[0],)).copy()
    out = _k.pubeval_scores(b, flags)
    return float(out[0]) if single else out


class PubevalEvaluator(Evaluator):
    """Tesauro's pubeval: probabilities from the calibrated score (finished
    games exactly); plays chosen by the raw score with the weights of the
    position before the move, as pubeval does."""

    name = "pubeval"
    kernel = EVAL_PUBEVAL
    policy = POLICY_PUBEVAL       # plays by the raw score

    def evaluate_batch(self, boards, nthreads: int = 1) -> np.ndarray:
        return _k.evaluate_probs(as_boards(boards), self.kernel, nthreads)

    def choose(self, boards, dice):
        b, d = boards_and_dice(boards, dice)
        counts, results = _k.choose_plays(b, d, self.policy, self.kernel)
        if counts.size and counts.min() < 0:
            i = int(np.flatnonzero(counts < 0)[0])
            raise _kernel_failure(i, int(counts[i]))
        return counts, results


def calibration() -> np.ndarray:
    """The installed pubeval calibration ``float64[2, 5, F]``: class (race,
    contact) x outcome x coefficients of the features ``_evaluate.CAL_FEATURES``."""
    return load_calibration()


class ExactEvaluator(Evaluator):
    """Exact values from the two-sided bear-off table (<= 6 checkers a side
    in the home boards) and for finished games; :meth:`covers` says where."""

    name = "exact"

    def covers(self, boards) -> np.ndarray:
        b = as_boards(boards)
        inside = bearoff_tables()[1].probe_batch(b)["inside"]
        return inside | (classify_boards(b) == PositionClass.OVER)

    def evaluate_batch(self, boards) -> np.ndarray:
        b = as_boards(boards)
        ok = self.covers(b)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise InvalidPositionError(f"board {i} is outside the exact bear-off table")
        return _k.evaluate_probs(b, EVAL_COMPOSITE)


class RaceEvaluator(Evaluator):
    """Race values by convolution of the race table's one-sided
    distributions (every bear-off position, and every race inside the
    installed race table, :func:`race_points`; gammons included; finished
    games exactly)."""

    name = "race"

    def covers(self, boards) -> np.ndarray:
        b = as_boards(boards)
        cls = classify_boards(b)
        race = cls == PositionClass.RACE
        if race.any():
            race[race] = bearoff_tables()[0].inside(b[race])
        return (cls == PositionClass.BEAROFF) | (cls == PositionClass.OVER) | race

    def evaluate_batch(self, boards) -> np.ndarray:
        b = as_boards(boards)
        ok = self.covers(b)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise InvalidPositionError(f"board {i} is outside the {race_points()}-point race table")
        out = bearoff_tables()[0].probe_batch(b)["probs"]
        over = classify_boards(b) == PositionClass.OVER
        if over.any():
            out[over] = _k.evaluate_probs(np.ascontiguousarray(b[over]), EVAL_COMPOSITE)
        return out


class CompositeEvaluator(PubevalEvaluator):
    """Per position class: finished -> result, bear-off -> exact (<= 6
    checkers a side) or one-sided race table, race and contact -> calibrated
    pubeval (the ``net`` evaluator puts the net there).  This is what the rollout
    kernel evaluates with.  Plays are chosen by the best equity for the
    mover (the rollouts' ``evaluator`` policy)."""

    name = "composite"
    kernel = EVAL_COMPOSITE
    policy = POLICY_EVAL

    def evaluate_batch(self, boards, nthreads: int = 1) -> np.ndarray:
        ensure_tables()
        return super().evaluate_batch(boards, nthreads)

    def choose(self, boards, dice):
        ensure_tables()
        return super().choose(boards, dice)


_REGISTRY: dict[str, Callable[[], Evaluator]] = {
    "pubeval": PubevalEvaluator,
    "exact": ExactEvaluator,
    "race": RaceEvaluator,
    "composite": CompositeEvaluator,
}


def _net_evaluator() -> Evaluator:
    """bgfast's own neural net (bgfast.net), loaded on first use."""
    global _net_evaluator_class
    if _net_evaluator_class is None:
        from .net import NetEvaluator

        _net_evaluator_class = NetEvaluator
    return _net_evaluator_class()


_net_evaluator_class = None


_REGISTRY["net"] = _net_evaluator


def register_evaluator(name: str, factory: Callable[[], Evaluator]) -> None:
    """Add an evaluator by name: ``factory()`` -> Evaluator."""
    _REGISTRY[name] = factory


def evaluator_names() -> list[str]:
    return sorted(_REGISTRY)


def get_evaluator(name="net") -> Evaluator:
    if isinstance(name, Evaluator):
        return name
    try:
        return _REGISTRY[name]()
    except (KeyError, TypeError):
        raise BgfastError(f"unknown evaluator {name!r}; choose from {', '.join(evaluator_names())}") from None


# ---------------------------------------------------------------- n-ply

def _check_plies(plies) -> int:
    """``plies`` as an int 0..:data:`MAX_PLIES`, or raise :class:`BgfastError`."""
    return check_whole("plies", plies, 0, MAX_PLIES)


def evaluate_ply(boards, plies: int = 0, evaluator="net") -> np.ndarray:
    """Probabilities for the player on roll at ``plies`` plies (0..:data:`MAX_PLIES`):
    0 = static; n > 0 = the average over the 21 rolls of the on-roll side's
    0-ply play, evaluated at n - 1 plies (gnubg's scheme)."""
    plies = _check_plies(plies)
    ev = get_evaluator(evaluator)
    b = as_boards(boards)
    return _value(ev, b, plies)


def _value(ev: Evaluator, b: np.ndarray, plies: int) -> np.ndarray:
    if plies == 0 or b.shape[0] == 0:
        return ev.evaluate_batch(b)
    out = np.empty((b.shape[0], 5))
    over = classify_boards(b) == PositionClass.OVER
    if over.any():
        out[over] = ev.evaluate_batch(b[over])
    live = np.flatnonzero(~over)
    if live.size:
        n = live.size
        rep = np.repeat(b[live], len(ALL_ROLLS), axis=0)
        dice = np.tile(ALL_ROLLS, (n, 1))
        _counts, res = ev.choose(rep, dice)
        v = invert(_value(ev, res, plies - 1)).reshape(n, len(ALL_ROLLS), 5)
        out[live] = (v * ROLL_WEIGHTS[None, :, None]).sum(axis=1) / 36.0
    return out


@dataclass(frozen=True)
class SourcedProbabilities:
    """Probabilities of many positions from the best source there is (see
    :func:`sourced_probabilities`): ``probs`` ``float64[n, 5]`` for the
    player on roll (NaN rows for finished games), ``exact`` ``bool[n]``
    where the bear-off tables gave them (the two-sided table, else the
    one-sided race table), ``exact_money`` ``float64[n, 3]`` the two-sided
    table's exact cubeful money equities, the roller not doubling now
    (centred, owned, the opponent owns; NaN rows: none)."""

    probs: np.ndarray
    exact: np.ndarray
    exact_money: np.ndarray

    def source(self, i: int, evaluator: str) -> str:
        """Where row i's probabilities come from: ``exact`` (the bear-off
        tables), ``over`` (a finished game) or ``evaluator``."""
        if self.exact[i]:
            return "exact"
        return "over" if np.isnan(self.probs[i, 0]) else evaluator


def sourced_probabilities(boards, plies: int = 0, evaluator="net",
                          classes=None) -> SourcedProbabilities:
    """The one rule for a position's probabilities: exact in bear-offs,
    else the evaluator.  Bear-off positions (every checker of both sides
    home) get the two-sided table's exact probabilities and cubeful money
    equities where it covers them, else the one-sided race table's
    probabilities; the other unfinished positions the evaluator's at
    ``plies`` (:func:`evaluate_ply`; an evaluator object with its own
    ``evaluate_plies``, such as a :class:`bgfast.net.Net`, searches with
    that).  ``evaluator``: a name, an :class:`Evaluator` or any object with
    ``evaluate_batch``; ``classes``: the boards' position classes, when
    known.  Returns a :class:`SourcedProbabilities`."""
    from . import bearoff

    plies = _check_plies(plies)
    b = as_boards(boards.board[None] if isinstance(boards, Position) else boards)
    cls = classify_boards(b) if classes is None else np.asarray(classes)
    ev = evaluator if hasattr(evaluator, "evaluate_batch") else get_evaluator(evaluator)
    n = len(b)
    nd = np.full((n, 3), np.nan)
    exact = cls == PositionClass.BEAROFF
    over = cls == PositionClass.OVER
    rows = np.flatnonzero(~exact & ~over)
    if (plies == 0 and rows.size >= n - n // 8 and not over.any()
            and (rows.size == n or (hasattr(ev, "covers") and ev.covers(b[exact]).all()))):
        # nearly every board is for the evaluator, which covers the others
        # too: it takes them all in place (no gather, no scatter); the
        # bear-offs get their exact values below
        probs = np.array(ev.evaluate_batch(b), dtype=np.float64, copy=None)
    else:
        probs = np.full((n, 5), np.nan)
        if rows.size:
            live = b[rows]
            if plies == 0:
                probs[rows] = ev.evaluate_batch(live)
            elif hasattr(ev, "evaluate_plies"):
                probs[rows] = ev.evaluate_plies(live, int(plies))
            else:
                probs[rows] = _value(ev, live, int(plies))
    rows = np.flatnonzero(exact)
    if rows.size:
        two = bearoff.default_two_sided().probe_batch(b[rows])
        inside = two["inside"]
        probs[rows[inside]] = two["probs"][inside]
        if "cubeful_no_double" in two:
            nd[rows[inside]] = two["cubeful_no_double"][inside]
        rest = rows[~inside]
        if rest.size:
            probs[rest] = bearoff.default_one_sided().probe_batch(b[rest])["probs"]
    return SourcedProbabilities(probs, exact, nd)


# ---------------------------------------------------------------- cubeful

def _cubeful_table():
    """The installed two-sided bear-off table (its exact cubeful money
    equities serve the cubeful search), or None without tables."""
    tables = bearoff_tables(required=False)
    return None if tables is None else tables[1]


def cubeful_equity(boards, cube, *, plies: int = 0, evaluator="net") -> "_cube.CubefulValues":
    """Cubeful values of positions (a Position, a board or ``uint8[N, 2, 25]``
    boards) for the player on roll at ``cube`` -- one
    :class:`bgfast.cube.CubeContext` (or anything
    :meth:`~bgfast.cube.CubeContext.of` takes) or one per position -- at
    ``plies`` plies: a :class:`bgfast.cube.CubefulValues` (money: equity per
    unit of the current cube; match: MWC and its EMG).

    0 plies: Janowski's interpolation of :mod:`bgfast.cube` on the
    evaluator's probabilities, the two-sided bear-off table's exact cubeful
    money equities where it has them.  n plies: gnubg's scheme, the average
    over the 21 rolls of the best play's value with each side's cube
    decision at every node (:func:`bgfast.cube.cubeful_values`)."""
    plies = _check_plies(plies)
    b = as_boards(boards.board if isinstance(boards, Position) else boards)
    return _cube.cubeful_values(get_evaluator(evaluator), b, cube, plies, table=_cubeful_table())


def evaluate_cube_batch(boards, cube, *, plies: int = 0, evaluator="net") -> "_cube.CubeDecisions":
    """The cube decisions (:class:`bgfast.cube.CubeDecisions`) of the player
    on roll in ``boards`` at one context ``cube``, no double and
    double/take valued by the cubeful search at ``plies``
    (:func:`bgfast.cube.searched_decisions`)."""
    plies = _check_plies(plies)
    b = as_boards(boards.board if isinstance(boards, Position) else boards)
    return _cube.searched_decisions(get_evaluator(evaluator), b, cube, plies,
                                    table=_cubeful_table())


def evaluate_cube(position, cube, *, plies: int = 0, evaluator="net") -> "_cube.CubeDecision":
    """:func:`evaluate_cube_batch` of one position: its
    :class:`bgfast.cube.CubeDecision` at ``cube`` by the cubeful search at
    ``plies`` (at 0 plies what :func:`bgfast.cube.cube_decision` gives on
    the evaluator's probabilities)."""
    plies = _check_plies(plies)
    b = position.board if isinstance(position, Position) else as_board(position)
    return evaluate_cube_batch(b[None], cube, plies=plies, evaluator=evaluator).decision(0)


@dataclass(frozen=True)
class RankedPlay:
    """A play with its values for the player who made it: ``probs`` and the
    cubeless ``equity``; ranked at a cube context, also ``cubeful`` (money:
    the cubeful equity per unit of the current cube; match: the EMG) and at
    a match score ``mwc``."""

    play: object           # bgfast.movegen.Play
    probs: tuple           # for the player who made the play
    equity: float
    plies: int
    cubeful: float | None = None
    mwc: float | None = None

    @property
    def value(self) -> float:
        """What the play is ranked by: the cubeful value (money equity or
        EMG) at a cube context, else the cubeless equity."""
        return self.equity if self.cubeful is None else self.cubeful

    def to_dict(self) -> dict:
        d = {"play": self.play.notation, "position_id": self.play.position.position_id(),
             "plies": self.plies, **dict(zip(PROB_NAMES, self.probs)), "equity": self.equity}
        if self.cubeful is not None:
            if self.mwc is None:
                d["cubeful_equity"] = self.cubeful
            else:
                d["mwc"] = self.mwc
                d["emg"] = self.cubeful
        return d


@dataclass(frozen=True)
class RankedBatch:
    """The legal plays of many (board, dice) pairs, ranked: the plays of
    board i are rows ``offsets[i]:offsets[i+1]`` of ``results`` (opponent on
    roll), ``moves`` (as :func:`bgfast.movegen.legal_plays_batch`), ``probs``
    (for the mover), ``equity`` (cubeless) and ``depth`` (plies searched);
    ``order`` lists every board's rows best first (its slice is the board's
    own).  Ranked at cube contexts, ``cubeful`` holds each play's cubeful
    value (money equity per unit of the current cube, or EMG at a match
    score) and ``mwc`` its MWC (NaN for money plays; None when every
    context is money); otherwise both are None."""

    offsets: np.ndarray
    results: np.ndarray
    moves: np.ndarray
    probs: np.ndarray
    equity: np.ndarray
    depth: np.ndarray
    order: np.ndarray
    cubeful: np.ndarray | None = None
    mwc: np.ndarray | None = None

    def ranked(self, i: int, before: Position, top: int | None = None) -> list["RankedPlay"]:
        """Board i's plays as :class:`RankedPlay` objects, best first (the
        best ``top`` only; notation is made just for those)."""
        return list(self.plays(i, before)[:top])

    def plays(self, i: int, before: Position) -> "RankedPlays":
        """Board i's plays, best first, as a :class:`RankedPlays` sequence
        (its :class:`RankedPlay` objects are made when they are read)."""
        rows = self.order[self.offsets[i]:self.offsets[i + 1]]
        return RankedPlays(before, rows, self.results, self.moves, self.probs, self.equity,
                           self.depth, self.cubeful, self.mwc)


def _ranked_items(before: Position, rows, results, moves, probs, eq, depth, cubeful,
                  mwc) -> list[RankedPlay]:
    """The :class:`RankedPlay` objects of ``rows`` (an index array or a
    slice) of ranking arrays (see :class:`RankedBatch`), in one pass each
    for the positions, moves and values."""
    from .movegen import Play, _play_steps

    after = Position._many_checked(results[rows])
    pr, eqs, dp = probs[rows].tolist(), eq[rows].tolist(), depth[rows].tolist()
    cf = [None] * len(pr) if cubeful is None else cubeful[rows].tolist()
    mw = [None] * len(pr) if mwc is None else [None if v != v else v for v in mwc[rows].tolist()]
    return [_frozen(RankedPlay, {
        "play": _frozen(Play, {"before": before, "moves": steps, "position": after[k]}),
        "probs": tuple(pr[k]), "equity": eqs[k], "plies": dp[k], "cubeful": cf[k], "mwc": mw[k]})
        for k, steps in enumerate(_play_steps(moves[rows]))]


class RankedPlays(Sequence):
    """The ranked plays of one position, best first: a read-only sequence of
    :class:`RankedPlay` (what :func:`rank_plays` returns).

    It holds the ranking arrays and makes each :class:`RankedPlay` (its
    :class:`~bgfast.movegen.Play` and resulting Position) when it is first
    read -- indexing, slicing (a list) or iterating -- and keeps it.  It
    compares equal to a list (or RankedPlays) of equal plays in the same
    order, prints like that list and pickles with its plays."""

    __slots__ = ("_before", "_rows", "_arrays", "_items")

    def __init__(self, before: Position, rows, results, moves, probs, eq, depth,
                 cubeful=None, mwc=None):
        self._before = before
        self._rows = rows
        self._arrays = (results, moves, probs, eq, depth, cubeful, mwc)
        self._items = [None] * len(rows)

    @classmethod
    def _of(cls, items) -> "RankedPlays":
        out = cls.__new__(cls)
        out._before = out._rows = out._arrays = None
        out._items = list(items)
        return out

    def __len__(self) -> int:
        return len(self._items)

    def _fill(self, ks) -> None:
        """Make the plays at ranks ``ks`` (not yet made) in one pass."""
        if len(ks) == 1:                      # one play: slices, not fancy indexing
            r = int(self._rows[ks[0]])
            rows = slice(r, r + 1)
        else:
            rows = self._rows[ks]
        made = _ranked_items(self._before, rows, *self._arrays)
        for k, item in zip(ks, made):
            self._items[k] = item

    def __getitem__(self, i):
        items = self._items
        if isinstance(i, slice):
            ks = range(len(items))[i]
            todo = [k for k in ks if items[k] is None]
            if todo:
                self._fill(todo)
            return [items[k] for k in ks]
        item = items[i]                       # IndexError / TypeError as a list's
        if item is None:
            k = i + len(items) if i < 0 else i
            self._fill([k])
            item = items[k]
        return item

    def _all(self) -> list[RankedPlay]:
        return self[:]

    def __iter__(self):
        return iter(self._all())

    def __reversed__(self):
        return reversed(self._all())

    def __eq__(self, other):
        if isinstance(other, RankedPlays):
            other = other._all()
        if not isinstance(other, list):
            return NotImplemented
        return self._all() == other

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self):
        return (RankedPlays._of, (self._all(),))


def rank_plays_batch(boards, dice, *, plies: int = 0, evaluator="net", keep: int = 8,
                     window: float = 0.16, cube=None) -> RankedBatch:
    """:func:`rank_plays` for many (board, dice) pairs at once: one move
    generation, one evaluation of every play and one deeper search of the
    filtered plays of all boards together.  ``cube``: one cube context for
    every board or one per board (see :func:`rank_plays`)."""
    plies, keep, window = _check_search(plies, keep, window)
    ev = get_evaluator(evaluator)
    b, d = boards_and_dice(boards, dice)
    offsets, res, moves = legal_plays_batch(b, d, validate=False, with_moves=True)
    return _rank_generated(ev, b, offsets, res, moves, plies, keep, window, cube)


def _check_search(plies, keep, window) -> tuple[int, int, float]:
    """The move filter's ``plies``, ``keep`` (>= 1) and ``window`` (>= 0),
    checked; raises :class:`BgfastError`."""
    if (type(plies) is int and 0 <= plies <= MAX_PLIES and type(keep) is int and keep >= 1
            and type(window) is float and window >= 0):      # the common case, cheaply
        return plies, keep, window
    plies = _check_plies(plies)
    keep = check_whole("keep", keep, 1)
    return plies, keep, check_number("window", window, 0, finite=False)


def _mover_values(onroll, sort: bool = True):
    """Plays' ``(probs, equity, order)`` for the mover from their results'
    probabilities ``onroll`` for the player on roll: :func:`invert`,
    :func:`equity` and (``sort``, else None) the rows best first, ties in
    row order, in one kernel call."""
    return _k.mover_values(np.ascontiguousarray(onroll, dtype=np.float64), sort)


def _rank_generated(ev: Evaluator, b: np.ndarray, offsets, res, moves, plies: int, keep: int,
                    window: float, cube) -> RankedBatch:
    """:func:`rank_plays_batch` of checked boards ``b`` whose legal plays
    (``offsets``, results ``res``, ``moves``) are already generated."""
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(b.shape[0]), counts)
    onroll = ev.evaluate_batch(res.view(_CheckedBoards)) if len(res) else np.zeros((0, 5))
    one = b.shape[0] == 1
    vals, e0, order0 = _mover_values(onroll, sort=one)
    cubeful = mwc = None
    if cube is not None:
        # cubeful: each play valued by the kernel's cube model at the mover's context
        _ctxs, rows, index, met = _cube._context_rows(cube, b.shape[0])
        search = _cube._Search(ev, _cubeful_table(), met)
        ctx = index[seg]
        value, cubeful, _ = search.play_values(res, onroll, ctx, rows)
        key = cubeful
    elif type(ev) is PubevalEvaluator and plies == 0:
        # pubeval orders its plays by the raw score (weights from the position before)
        contact = classify_boards(b) == PositionClass.CONTACT
        key = pubeval_score(res, contact=contact[seg]) if len(res) else e0
    else:
        key = e0
    # stable: ties keep generation order (one board by equity: the kernel's order)
    order = order0 if key is e0 and one else np.lexsort((-key, seg))
    depth = np.zeros(len(res), dtype=np.int64)
    cubeless = e0
    if plies > 0 and len(res):
        ref = e0 if cube is None else cubeful
        # per board: its best `keep` at 0 ply within `window` of its best
        rank = np.empty(len(res), dtype=np.int64)
        rank[order] = np.arange(len(res)) - np.repeat(offsets[:-1], counts)
        best = ref[order[offsets[:-1][counts > 0]]]
        best_of = np.full(b.shape[0], np.nan)
        best_of[counts > 0] = best
        deep = np.flatnonzero((rank < keep) & (ref >= best_of[seg] - window))
        vals = vals.copy()
        if cube is None:
            vals[deep] = invert(_value(ev, res[deep], plies))
            eq = equity(vals)
        else:
            value, cubeful = value.copy(), cubeful.copy()
            value[deep], cubeful[deep], vals[deep] = search.play_values(
                res[deep], onroll[deep], ctx[deep], rows, plies)
            eq = cubeful
        depth[deep] = plies
        cubeless = equity(vals)
        # deeper values first, then 0-ply leftovers
        order = np.lexsort((np.arange(len(res)), -eq, -depth, seg))
    if cube is not None:
        match = rows[:, _cube.ContextColumn.MATCH] != 0
        if match.any():
            mwc = np.where(match[ctx], value, np.nan)
    return RankedBatch(offsets, res, moves, vals, cubeless, depth, order, cubeful, mwc)


def rank_plays(position, d1: int, d2: int, *, plies: int = 0, evaluator="net",
               keep: int = 8, window: float = 0.16, cube=None) -> "RankedPlays":
    """The legal plays of ``position`` for d1-d2, best first, with their
    values for the mover.  Above 0 plies, move filtering: every play is
    ranked at 0 ply and only the best ``keep`` within ``window`` equity of
    the best are searched deeper (the others keep their 0-ply values and
    rank below).

    Without ``cube`` the plays are ranked by cubeless equity.  With a cube
    context (a :class:`bgfast.cube.CubeContext`, or anything
    :meth:`~bgfast.cube.CubeContext.of` takes) they are ranked by their
    cubeful value at that cube and score -- money: cubeful equity per unit
    of the current cube; match: MWC (its EMG in ``cubeful``) -- with the
    opponent's cube decision after the play and, above 0 plies, the
    cubeful search of :func:`cubeful_equity`; the window applies to that
    value.  Every :class:`RankedPlay` keeps its cubeless ``equity``.

    Returns a :class:`RankedPlays`, a sequence of :class:`RankedPlay` that
    makes each play object when it is read.  ``plies`` is 0..:data:`MAX_PLIES`,
    ``keep`` >= 1 and ``window`` >= 0 (else :class:`BgfastError`)."""
    plies, keep, window = _check_search(plies, keep, window)
    d1, d2 = check_dice(d1, d2)
    pos = position if isinstance(position, Position) else Position(as_board(position))
    ev = get_evaluator(evaluator)
    one = _movegen.legal_plays_one(pos.board, d1, d2, True, False)         # one board's plays
    if one is None:          # the single-board generator is in use (a call from a finalizer)
        one = legal_plays_batch(pos.board, (d1, d2), validate=False, with_moves=True)[1:]
    res, moves = one
    if plies == 0 and cube is None and type(ev) is not PubevalEvaluator:
        # cubeless at 0 ply: one evaluation of the plays, ranked as
        # _rank_generated ranks them (the same values and order)
        onroll = ev.evaluate_batch(res.view(_CheckedBoards)) if len(res) else np.zeros((0, 5))
        vals, eq, rows = _mover_values(onroll)
        return RankedPlays(pos, rows, res, moves, vals, eq, np.zeros(len(res), dtype=np.int64))
    offsets = np.array([0, len(res)], dtype=np.int64)
    batch = _rank_generated(ev, pos.board[None], offsets, res, moves, plies, keep, window, cube)
    return batch.plays(0, pos)


def best_play(position, d1: int, d2: int, *, plies: int = 0, evaluator="net"):
    """The chosen play (a :class:`bgfast.movegen.Play`), or None if the roll cannot be played."""
    ranked = rank_plays(position, d1, d2, plies=plies, evaluator=evaluator)
    return ranked[0].play if ranked else None
