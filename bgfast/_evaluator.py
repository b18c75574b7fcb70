"""The evaluator interface and the evaluation kernel's setup.

Below :mod:`bgfast.evaluate` (the evaluators by name, move ranking) and
:mod:`bgfast.net` (the neural net), which both build on it:

* :data:`PROB_NAMES`, the order of the five probabilities every evaluator
  gives, :func:`equity` and :func:`invert` of such probabilities;
* :class:`Evaluation` and the :class:`Evaluator` base class;
* the kernel's data: Tesauro's pubeval weights and their calibration
  (installed on import), and the bear-off tables
  (:func:`install_bearoff_tables`, installed on first use by
  :func:`ensure_tables`).

The public names are re-exported by :mod:`bgfast.evaluate`.
"""
from __future__ import annotations

import abc
import json
import warnings
from dataclasses import dataclass
from importlib import resources

import numpy as np

from . import _evaluate as _k
from .errors import DatabaseError
from .movegen import _as_dice, _frozen, legal_plays_batch
from .position import Position, _CheckedBoards, as_board, as_boards

#: The five cumulative probabilities for the player on roll (win includes
#: gammons, a gammon includes backgammons), in the order of every array of them.
PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")


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


def load_calibration() -> np.ndarray:
    """The pubeval calibration ``float64[2, 5, F]`` of ``calibration.json``."""
    doc = json.loads(_data("calibration.json").read_text())
    return np.ascontiguousarray(
        [[doc[cls][name] for name in PROB_NAMES] for cls in ("race", "contact")], dtype=np.float64)


_W = pubeval_weights()
_k.set_pubeval_weights(_W["race"], _W["contact"])
_k.set_calibration(load_calibration())


def _equity_of(w, wg, wb, lg, lb):
    """The cubeless equity of the five probabilities (floats or arrays),
    summed in the order of the kernels' ``probs_equity``, so that the bits
    are the same."""
    return 2 * w - 1 + wg - lg + wb - lb


def equity(probs) -> np.ndarray:
    """Cubeless equity of probabilities ``[..., 5]``."""
    p = np.asarray(probs, dtype=np.float64)
    return _equity_of(p[..., 0], p[..., 1], p[..., 2], p[..., 3], p[..., 4])


def invert(probs) -> np.ndarray:
    """The same probabilities seen from the other player."""
    p = np.asarray(probs, dtype=np.float64)
    return np.stack([1 - p[..., 0], p[..., 3], p[..., 4], p[..., 1], p[..., 2]], axis=-1)


@dataclass(frozen=True)
class Evaluation:
    """Probabilities for the player on roll and the cubeless equity."""

    probs: tuple
    equity: float
    evaluator: str = ""

    def to_dict(self) -> dict:
        return {"evaluator": self.evaluator, **dict(zip(PROB_NAMES, self.probs)),
                "equity": self.equity}


def boards_and_dice(boards, dice) -> tuple[np.ndarray, np.ndarray]:
    """Checked ``uint8[N, 2, 25]`` boards and ``int64[N, 2]`` dice (one pair
    for all boards, or one per board) for the play-choosing kernels."""
    b = as_boards(boards)
    return b, _as_dice(dice, b.shape[0])


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
        row = np.asarray(self.evaluate_batch(b[None].view(_CheckedBoards)),    # b is checked
                         dtype=np.float64)[0].tolist()
        return _frozen(Evaluation, {"probs": tuple(row), "equity": _equity_of(*row),
                                    "evaluator": self.name})

    def equity_batch(self, boards) -> np.ndarray:
        return equity(self.evaluate_batch(boards))

    def choose(self, boards, dice) -> tuple[np.ndarray, np.ndarray]:
        """0-ply play of each (board, dice): ``(counts int64[N], results uint8[N,2,25])``,
        results with the turn passed; count 0 = the roll cannot be played.

        ``dice`` is one pair for every board or one pair per board.  The
        boards and the dice are checked (:class:`InvalidPositionError`,
        :class:`InvalidDiceError`) before any kernel sees them."""
        b, d = boards_and_dice(boards, dice)
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


_TABLES = None


def install_bearoff_tables(one_sided=None, two_sided=None) -> None:
    """Give the kernels the bear-off tables (defaults: ``bgfast.bearoff``'s
    cached race table, :func:`bgfast.bearoff.default_race_table`, and 6x6
    two-sided table, built on first use).  The one-sided table (15
    checkers, 6 or more points) values every race whose checkers all lie
    within its points, outside the two-sided table.
    The two-sided cubeless equities are copied into a dense ``float64[N, N]``
    matrix (6.8 MB for 6 checkers; fine up to about 8 checkers a side), and
    a cubeful table's no-double money equities into ``float64[N, N, 3]``
    (for the cubeful rollouts' exact early stop)."""
    global _TABLES
    from . import bearoff

    os_t = one_sided if one_sided is not None else bearoff.default_race_table()
    ts_t = two_sided if two_sided is not None else bearoff.default_two_sided()
    n = ts_t.size
    idx = np.arange(n, dtype=np.int64)
    ii, jj = np.meshgrid(idx, idx, indexing="ij")
    vals = ts_t.values(ii.ravel(), jj.ravel())
    eq = np.ascontiguousarray(vals[:, 0].reshape(n, n))
    cubeful = np.ascontiguousarray(vals[:, 1:4].reshape(n, n, 3)) if ts_t.cubeful else None
    _k.set_tables(eq, int(ts_t.checkers), os_t.kernel_rows(), cubeful)
    _TABLES = (os_t, ts_t)


_TABLE_ERROR = None


def ensure_tables() -> None:
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


def race_points() -> int:
    """The points of the installed one-sided race table (installed on first
    use; 0 without tables): the races the evaluators value by table, which
    labels, values and benchmarks record beside the net."""
    t = bearoff_tables(required=False)
    return 0 if t is None else int(t[0].points)


def use_race_points(points: int) -> None:
    """Install the default race table of ``points`` points (and the default
    two-sided table) unless the installed race table has them: what a
    worker runs so that it values races as the process that gave it the
    work did."""
    if points and race_points() != points:
        from . import bearoff

        install_bearoff_tables(one_sided=bearoff.default_race_table(points=points))


def bearoff_tables(required: bool = True):
    """The installed ``(one-sided, two-sided)`` bear-off tables, installed on
    first use; without them DatabaseError, or None when not ``required``."""
    ensure_tables()
    if _TABLES is None and required:
        raise DatabaseError(f"the bear-off tables are unavailable: {_TABLE_ERROR}")
    return _TABLES
