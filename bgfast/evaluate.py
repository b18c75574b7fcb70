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
  self-play (``calibration.json``, see :func:`fit_pubeval_calibration`).
* ``composite`` -- picks per position: finished -> exact result, bear-off ->
  exact or race table, otherwise calibrated pubeval;
* ``net`` -- bgfast's own neural net (``bgfast.net``) with the same exact
  bear-off tables: the strongest evaluator, and the default of every
  function here that takes one.  :func:`register_evaluator` adds others.

The composite evaluator and the pubeval move choice also exist in C
(``bgfast._evaluate``) for the rollout engine.
"""
from __future__ import annotations

import abc

import json
import warnings
from dataclasses import dataclass
from importlib import resources
from typing import Callable

import numpy as np

from . import _evaluate as _k
from . import cube as _cube
from .errors import BgfastError, DatabaseError, InvalidPositionError
from .formats import check_dice
from .movegen import ALL_ROLLS, ROLL_WEIGHTS, _as_dice, _kernel_failure, legal_plays_batch
from .position import Position, PositionClass, as_board, as_boards, classify_boards

__all__ = [
    "PROB_NAMES", "Evaluation", "Evaluator", "PubevalEvaluator", "ExactEvaluator",
    "RaceEvaluator", "CompositeEvaluator", "register_evaluator", "get_evaluator",
    "evaluator_names", "equity", "invert", "pubeval_score", "pubeval_weights",
    "rank_plays", "rank_plays_batch", "RankedBatch", "best_play", "evaluate_ply", "fit_pubeval_calibration", "calibration",
    "install_bearoff_tables", "cubeful_equity", "evaluate_cube", "evaluate_cube_batch",
    "SourcedProbabilities", "sourced_probabilities",
]

PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
POLICY_PUBEVAL = 0
POLICY_EVAL = 1
EVAL_COMPOSITE = 0   # kernel slots: pubeval + bear-off tables + finished games,
EVAL_PUBEVAL = 1     # calibrated pubeval alone


# ---------------------------------------------------------------- data files

def _data(name: str):
    return resources.files("bgfast") / "data" / "pubeval" / name


def pubeval_weights() -> dict[str, np.ndarray]:
    """Tesauro's weights, ``{"race": float64[122], "contact": float64[122]}``,
    read from ``bgfast/data/pubeval/weights.csv``."""
    rows = {}
    for line in _data("weights.csv").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, *vals = line.split(",")
        rows[name.strip()] = np.array([float(v) for v in vals], dtype=np.float64)
    if set(rows) != {"race", "contact"} or any(len(v) != 122 for v in rows.values()):
        raise RuntimeError("bgfast/data/pubeval/weights.csv is damaged")
    return rows


def _load_calibration() -> np.ndarray:
    doc = json.loads(_data("calibration.json").read_text())
    return np.ascontiguousarray(
        [[doc[cls][name] for name in PROB_NAMES] for cls in ("race", "contact")], dtype=np.float64)


_W = pubeval_weights()
_k.set_pubeval_weights(_W["race"], _W["contact"])
_k.set_calibration(_load_calibration())


# ---------------------------------------------------------------- helpers

def equity(probs) -> np.ndarray:
    """Cubeless equity of probabilities ``[..., 5]``."""
    p = np.asarray(probs, dtype=np.float64)
    return 2 * p[..., 0] - 1 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]


def invert(probs) -> np.ndarray:
    """The same probabilities seen from the other player."""
    p = np.asarray(probs, dtype=np.float64)
    return np.stack([1 - p[..., 0], p[..., 3], p[..., 4], p[..., 1], p[..., 2]], axis=-1)


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


@dataclass(frozen=True)
class Evaluation:
    """Probabilities for the player on roll and the cubeless equity."""

    probs: tuple
    equity: float
    evaluator: str = ""

    def to_dict(self) -> dict:
        return {"evaluator": self.evaluator, **dict(zip(PROB_NAMES, self.probs)),
                "equity": self.equity}


def _boards_and_dice(boards, dice) -> tuple[np.ndarray, np.ndarray]:
    """Checked ``uint8[N, 2, 25]`` boards and ``int64[N, 2]`` dice (one pair
    for all boards, or one per board) for the play-choosing kernels."""
    b = as_boards(boards)
    return b, _as_dice(dice, b.shape[0])


# ---------------------------------------------------------------- evaluators

class Evaluator(abc.ABC):
    """Base class: implement :meth:`evaluate_batch`.

    ``kernel`` is the evaluator's slot in the C kernels (rollouts), or None
    for a Python-only evaluator.  :meth:`choose` is the 0-ply play choice
    (best result for the mover); subclasses may override it with a kernel.
    """

    name = "evaluator"
    kernel: int | None = None

    @abc.abstractmethod
    def evaluate_batch(self, boards) -> np.ndarray:
        """``uint8[N, 2, 25]`` -> ``float64[N, 5]`` probabilities for the player on roll."""

    def covers(self, boards) -> np.ndarray:
        """Which boards this evaluator can evaluate (all, by default)."""
        return np.ones(as_boards(boards).shape[0], dtype=bool)

    def evaluate(self, position) -> Evaluation:
        b = position.board if isinstance(position, Position) else as_board(position)
        p = self.evaluate_batch(b[None])[0]
        return Evaluation(tuple(float(x) for x in p), float(equity(p)), self.name)

    def equity_batch(self, boards) -> np.ndarray:
        return equity(self.evaluate_batch(boards))

    def choose(self, boards, dice) -> tuple[np.ndarray, np.ndarray]:
        """0-ply play of each (board, dice): ``(counts int64[N], results uint8[N,2,25])``,
        results with the turn passed; count 0 = the roll cannot be played.

        ``dice`` is one pair for every board or one pair per board.  The
        boards and the dice are checked (:class:`InvalidPositionError`,
        :class:`InvalidDiceError`) before any kernel sees them."""
        b, d = _boards_and_dice(boards, dice)
        offsets, results = legal_plays_batch(b, d, validate=False)
        counts = np.diff(offsets)
        out = b[:, ::-1, :].copy()
        if results.shape[0]:
            eq = -self.equity_batch(results)          # for the mover
            owner = np.repeat(np.arange(b.shape[0]), counts)
            # first play with the highest equity in each group
            order = np.lexsort((np.arange(len(eq)), -eq, owner))
            first = order[np.r_[0, np.flatnonzero(np.diff(owner[order])) + 1]]
            out[owner[first]] = results[first]
        return counts, out


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
        b, d = _boards_and_dice(boards, dice)
        counts, results = _k.choose_plays(b, d, self.policy, self.kernel)
        if counts.size and counts.min() < 0:
            i = int(np.flatnonzero(counts < 0)[0])
            raise _kernel_failure(i, int(counts[i]))
        return counts, results


def calibration() -> np.ndarray:
    """The installed pubeval calibration ``float64[2, 5, F]``: class (race,
    contact) x outcome x coefficients of the features ``_evaluate.CAL_FEATURES``."""
    return _load_calibration()


_TABLES = None


def install_bearoff_tables(one_sided=None, two_sided=None) -> None:
    """Give the kernels the bear-off tables (defaults: ``bgfast.bearoff``'s
    cached 6-point one-sided and 6x6 two-sided tables, built on first use).
    The two-sided cubeless equities are copied into a dense ``float64[N, N]``
    matrix (6.8 MB for 6 checkers; fine up to about 8 checkers a side)."""
    global _TABLES
    from . import bearoff

    os_t = one_sided if one_sided is not None else bearoff.default_one_sided()
    ts_t = two_sided if two_sided is not None else bearoff.default_two_sided()
    n = ts_t.size
    idx = np.arange(n, dtype=np.int64)
    ii, jj = np.meshgrid(idx, idx, indexing="ij")
    eq = np.ascontiguousarray(ts_t.values(ii.ravel(), jj.ravel())[:, 0].reshape(n, n))
    r = np.ascontiguousarray(os_t.dist_r, dtype=np.float32)
    g = np.ascontiguousarray(os_t.dist_g, dtype=np.float32)
    sr = np.ascontiguousarray(os_t.start_r, dtype=np.uint8)
    sg = np.ascontiguousarray(os_t.start_g, dtype=np.uint8)
    _k.set_tables(eq, int(ts_t.checkers), r, g, sr, sg)
    _TABLES = (os_t, ts_t)


_TABLE_ERROR = None


def _ensure_tables() -> None:
    """Install the default bear-off tables once.  If they cannot be built or
    read (e.g. no writable cache directory), warn once and go on without
    them: the composite evaluator and rollouts then use pubeval for
    bear-offs, and the exact and race evaluators raise DatabaseError."""
    global _TABLE_ERROR
    if _TABLES is None and _TABLE_ERROR is None:
        try:
            install_bearoff_tables()
        except (OSError, DatabaseError) as exc:
            _TABLE_ERROR = exc
            warnings.warn(f"bear-off tables unavailable ({exc}); bear-offs are evaluated "
                          "with pubeval", RuntimeWarning, stacklevel=2)


def _tables():
    _ensure_tables()
    if _TABLES is None:
        raise DatabaseError(f"the bear-off tables are unavailable: {_TABLE_ERROR}")
    return _TABLES


class ExactEvaluator(Evaluator):
    """Exact values from the two-sided bear-off table (<= 6 checkers a side
    in the home boards) and for finished games; :meth:`covers` says where."""

    name = "exact"

    def covers(self, boards) -> np.ndarray:
        b = as_boards(boards)
        inside = _tables()[1].probe_batch(b)["inside"]
        return inside | (classify_boards(b) == PositionClass.OVER)

    def evaluate_batch(self, boards) -> np.ndarray:
        b = as_boards(boards)
        ok = self.covers(b)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise InvalidPositionError(f"board {i} is outside the exact bear-off table")
        return _k.evaluate_probs(b, EVAL_COMPOSITE)


class RaceEvaluator(Evaluator):
    """Race values by convolution of the one-sided bear-off distributions
    (every bear-off position, gammons included; finished games exactly)."""

    name = "race"

    def covers(self, boards) -> np.ndarray:
        b = as_boards(boards)
        cls = classify_boards(b)
        return (cls == PositionClass.BEAROFF) | (cls == PositionClass.OVER)

    def evaluate_batch(self, boards) -> np.ndarray:
        b = as_boards(boards)
        ok = self.covers(b)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise InvalidPositionError(f"board {i} is not a bear-off position")
        out = _tables()[0].probe_batch(b)["probs"]
        over = classify_boards(b) == PositionClass.OVER
        if over.any():
            out[over] = _k.evaluate_probs(np.ascontiguousarray(b[over]), EVAL_COMPOSITE)
        return out


class CompositeEvaluator(PubevalEvaluator):
    """Per position class: finished -> result, bear-off -> exact (<= 6
    checkers a side) or one-sided race table, race and contact -> calibrated
    pubeval (the neural net will take this part).  This is what the rollout
    kernel evaluates with.  Plays are chosen by the best equity for the
    mover (the rollouts' ``evaluator`` policy)."""

    name = "composite"
    kernel = EVAL_COMPOSITE
    policy = POLICY_EVAL

    def evaluate_batch(self, boards, nthreads: int = 1) -> np.ndarray:
        _ensure_tables()
        return super().evaluate_batch(boards, nthreads)

    def choose(self, boards, dice):
        _ensure_tables()
        return super().choose(boards, dice)


_REGISTRY: dict[str, Callable[[], Evaluator]] = {
    "pubeval": PubevalEvaluator,
    "exact": ExactEvaluator,
    "race": RaceEvaluator,
    "composite": CompositeEvaluator,
}


def _net_evaluator() -> Evaluator:
    """bgfast's own neural net (bgfast.net), loaded on first use."""
    from .net import NetEvaluator

    return NetEvaluator()


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

def evaluate_ply(boards, plies: int = 0, evaluator="net") -> np.ndarray:
    """Probabilities for the player on roll at ``plies`` plies: 0 = static;
    n > 0 = the average over the 21 rolls of the on-roll side's 0-ply play,
    evaluated at n - 1 plies (gnubg's scheme)."""
    ev = get_evaluator(evaluator)
    b = as_boards(boards)
    if isinstance(plies, bool) or not isinstance(plies, (int, np.integer)) or plies < 0:
        raise BgfastError(f"plies must be an integer >= 0, not {plies!r}")
    return _value(ev, b, int(plies))


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
    _ensure_tables()
    return None if _TABLES is None else _TABLES[1]


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
    b = as_boards(boards.board if isinstance(boards, Position) else boards)
    return _cube.cubeful_values(get_evaluator(evaluator), b, cube, plies, table=_cubeful_table())


def evaluate_cube_batch(boards, cube, *, plies: int = 0, evaluator="net") -> "_cube.CubeDecisions":
    """The cube decisions (:class:`bgfast.cube.CubeDecisions`) of the player
    on roll in ``boards`` at one context ``cube``, no double and
    double/take valued by the cubeful search at ``plies``
    (:func:`bgfast.cube.searched_decisions`)."""
    b = as_boards(boards.board if isinstance(boards, Position) else boards)
    return _cube.searched_decisions(get_evaluator(evaluator), b, cube, plies,
                                    table=_cubeful_table())


def evaluate_cube(position, cube, *, plies: int = 0, evaluator="net") -> "_cube.CubeDecision":
    """:func:`evaluate_cube_batch` of one position: its
    :class:`bgfast.cube.CubeDecision` at ``cube`` by the cubeful search at
    ``plies`` (at 0 plies what :func:`bgfast.cube.cube_decision` gives on
    the evaluator's probabilities)."""
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
        from .movegen import Play

        rows = self.order[self.offsets[i]:self.offsets[i + 1]]
        if top is not None:
            rows = rows[:top]
        after = Position.many(self.results[rows], classify=False)
        probs, eq, depth = self.probs[rows].tolist(), self.equity[rows].tolist(), self.depth[rows].tolist()
        cf = [None] * len(rows) if self.cubeful is None else self.cubeful[rows].tolist()
        mwc = [None] * len(rows) if self.mwc is None else \
            [None if v != v else v for v in self.mwc[rows].tolist()]
        out = []
        for k, mv in enumerate(self.moves[rows].tolist()):
            steps = tuple((a, b) for a, b in mv if a >= 0)
            out.append(RankedPlay(Play(before, steps, after[k]), tuple(probs[k]), eq[k], depth[k],
                                  cf[k], mwc[k]))
        return out


def rank_plays_batch(boards, dice, *, plies: int = 0, evaluator="net", keep: int = 8,
                     window: float = 0.16, cube=None) -> RankedBatch:
    """:func:`rank_plays` for many (board, dice) pairs at once: one move
    generation, one evaluation of every play and one deeper search of the
    filtered plays of all boards together.  ``cube``: one cube context for
    every board or one per board (see :func:`rank_plays`)."""
    ev = get_evaluator(evaluator)
    b, d = _boards_and_dice(boards, dice)
    offsets, res, moves = legal_plays_batch(b, d, validate=False, with_moves=True)
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(b.shape[0]), counts)
    onroll = ev.evaluate_batch(res) if len(res) else np.zeros((0, 5))
    vals = invert(onroll)
    e0 = equity(vals)
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
    order = np.lexsort((-key, seg))                   # stable: ties keep generation order
    depth = np.zeros(len(res), dtype=np.int64)
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
        # deeper values first, then 0-ply leftovers
        order = np.lexsort((np.arange(len(res)), -eq, -depth, seg))
    if cube is not None:
        match = rows[:, _cube.ContextColumn.MATCH] != 0
        if match.any():
            mwc = np.where(match[ctx], value, np.nan)
    return RankedBatch(offsets, res, moves, vals, equity(vals), depth, order, cubeful, mwc)


def rank_plays(position, d1: int, d2: int, *, plies: int = 0, evaluator="net",
               keep: int = 8, window: float = 0.16, cube=None) -> list[RankedPlay]:
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
    value.  Every :class:`RankedPlay` keeps its cubeless ``equity``."""
    d1, d2 = check_dice(d1, d2)
    pos = position if isinstance(position, Position) else Position(as_board(position))
    batch = rank_plays_batch(pos.board[None], [[d1, d2]], plies=plies,
                             evaluator=evaluator, keep=keep, window=window, cube=cube)
    return batch.ranked(0, pos)


def best_play(position, d1: int, d2: int, *, plies: int = 0, evaluator="net"):
    """The chosen play (a :class:`bgfast.movegen.Play`), or None if the roll cannot be played."""
    ranked = rank_plays(position, d1, d2, plies=plies, evaluator=evaluator)
    return ranked[0].play if ranked else None


# ---------------------------------------------------------------- calibration

def _logistic_fit(X: np.ndarray, y: np.ndarray, iters: int = 50, ridge: float = 1.0) -> np.ndarray:
    """Maximum-likelihood w of P(y) = 1 / (1 + exp(-X w)), by Newton (X's last
    column = 1), with a small ridge on the other coefficients (it keeps them
    finite when a feature separates the outcomes, e.g. no gammon once a
    checker is off)."""
    w = np.zeros(X.shape[1])
    w[-1] = float(np.log((y.mean() + 1e-6) / (1 - y.mean() + 1e-6)))
    R = ridge * np.eye(X.shape[1])
    R[-1, -1] = 1e-9
    for _ in range(iters):
        z = np.clip(X @ w, -40, 40)
        p = 1 / (1 + np.exp(-z))
        g = X.T @ (y - p) - R @ w
        H = (X * (p * (1 - p))[:, None]).T @ X + R
        step = np.linalg.solve(H, g)
        w = w + step
        if np.abs(step).max() < 1e-10:
            break
    return w


def fit_pubeval_calibration(games: int = 20000, seed: int = 1, batch: int = 2000) -> dict:
    """Fit the logistic map from pubeval's score (and a few race features) to
    the 5 probabilities, on seeded pubeval self-play from the opening: every
    play's result with the game's final outcome for its mover.  Returns the
    ``calibration.json`` document (per class race/contact, per outcome the
    coefficients of ``_evaluate.CAL_FEATURES``) with sample sizes and
    log-losses."""
    from . import _rollout

    feats, outs, contact = [], [], []
    for first in range(0, int(games), batch):
        n = min(batch, int(games) - first)
        boards, parity, gid, results, winner = _rollout.selfplay_samples(
            n, int(seed), POLICY_PUBEVAL, first)
        same = parity == winner[gid]
        outs.append(np.where(same[:, None], results[gid], invert(results[gid])))
        feats.append(_k.calibration_features(boards))
        contact.append(classify_boards(boards) == PositionClass.CONTACT)
    F, Y, C = np.concatenate(feats), np.concatenate(outs), np.concatenate(contact)
    doc = {"games": int(games), "seed": int(seed), "policy": "pubeval",
           "features": list(_k.CAL_FEATURES),
           "note": "P(outcome for the mover) = 1/(1+exp(-sum(coef * feature))) for a play's "
                   "result (mover in row 0); score = pubeval with the weights of the result's "
                   "own class; pips = (opponent pips - mover pips)/sqrt(pip sum); off = "
                   "checkers borne off / 15; bar = checkers on the bar"}
    for cname, mask in (("race", ~C), ("contact", C)):
        X, y = F[mask], Y[mask]
        doc[cname] = {}
        loss = {}
        for k, name in enumerate(PROB_NAMES):
            w = _logistic_fit(X, y[:, k])
            doc[cname][name] = [float(v) for v in w]
            p = np.clip(1 / (1 + np.exp(-np.clip(X @ w, -40, 40))), 1e-12, 1 - 1e-12)
            loss[name] = float(-(y[:, k] * np.log(p) + (1 - y[:, k]) * np.log(1 - p)).mean())
        doc[cname + "_samples"] = int(mask.sum())
        doc[cname + "_logloss"] = loss
    return doc
