"""A checker-play benchmark: decisions with rolled-out candidate plays, and their scores.

::

    from bgfast import benchmark
    benchmark.build("bench-db", decisions=300, exclude="positions.bgtd")
    db = benchmark.load("bench-db")
    benchmark.score_evaluator(db, "net", plies=0)      # {"contact": SetScore, ...}
    benchmark.score(db, lambda board, d1, d2: my_play(board, d1, d2))

**Decisions** (:func:`select_decisions`): positions from seeded self-play
of several players (:func:`bgfast.traindata.sample_positions`, default
players :data:`DEFAULT_PLAYERS`), each with a roll drawn from a seed of the
benchmark's seed and the position's key, kept when the roll has at least two
legal plays; the first ``decisions`` of each set (:data:`SETS`, the classes
of :func:`bgfast.traindata.classify`: ``contact``, ``crashed``, ``race``) in
the sample's (shuffled) order, the sets taking turns (so that the first
decisions of a build stopped early are balanced too).  ``exclude`` takes positions that are never
used (the training data): the benchmark is held out from it.

**Reference** (:func:`build`): for each decision the candidate plays are
every play within ``margin`` (:data:`MARGIN`) equity of the best by the net
at 0 ply, at least :data:`MIN_CANDIDATES` and at most ``max_candidates``
(:data:`MAX_CANDIDATES`), in the net's order; they are rolled out together
(:func:`bgfast.rollout.rollout_plays`: common dice, variance reduction) with
the settings given (default :data:`REFERENCE_SETTINGS`), decision ``i`` with
the seed :func:`bgfast.traindata.position_seed` ``(seed, i)``.  Their
rollout equities (cubeless, for the player making the play) are the
reference.  The builder is the labeller's resumable shard engine
(:func:`bgfast.traindata.run_shards`): bit-identical for any job count, and
a resumed build equals an uninterrupted one.

**Extra plays** (:func:`extend`): a chooser's plays that are not
candidates can be rolled out afterwards, each alone with the reference
settings, net and seed of its decision: the dice of a rollout depend on the
seed and the trial only, so an extra play sees the same dice as the
candidates (common dice) and gets the very bits it would have got among
them.  They are kept in ``extras.bgtd``, in the order of their decision and
key, so the file does not depend on the order in which choosers added them.
The reference best is then the best of the candidates and the extra plays.

**Score** (:func:`score`): the equity a chooser loses per decision against
the reference best, ``best - equity(chosen)``; a play that was not rolled
out (neither a candidate nor an extra play) is charged the loss of the worst
candidate (a lower bound: it was more than ``margin`` below the best at 0
ply), and counted.  Reported per
set, x1000 (gnubg's benchmark error rate), with its standard error over the
decisions and the share of decisions where the chooser takes the reference
best.

**Files** (in the directory): ``decisions.bgtd`` (kind ``benchmark-decisions``:
``key``, ``cls``, ``source``, ``dice u1[N, 2]``; meta: how they were drawn)
and shards ``shard-NNNNNN.bgtd`` (kind ``benchmark``, one row a decision):
``index i8[N]``, ``key``, ``cls``, ``dice``, ``count u1[N]`` (candidates),
``cand u1[N, C, 10]`` (their resulting positions, :func:`bgfast.pack` keys,
zero past ``count``), ``eq0 f8[N, C]`` (the net's 0-ply equity), ``equity``
and ``stderr f8[N, C]`` (the rollout's; NaN past ``count``), ``games
i4[N]``; meta: the rollout settings, margin, bounds, the decisions' digest,
the net's checksum.  ``extras.bgtd`` (kind ``benchmark-extras``, one row an
extra play): ``index i8[M]`` (its decision), ``cand u1[M, 10]``, ``equity``
and ``stderr f8[M]``, ``games i4[M]``; meta: the settings, the decisions'
digest and the net's checksum, which must be the shards'.  The format is
:mod:`bgfast.traindata`'s, checksummed: a damaged file raises
:class:`bgfast.errors.DatabaseError`.
"""
from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from .errors import BgfastError, DatabaseError, check_number
from .evaluate import race_points, use_race_points
from .position import Position, pack, unpack
from .rollout import RolloutSettings
from .traindata import (CLASSES, DEFAULT_PLAYERS as TRAINING_PLAYERS, KeyedRows, PositionSet,
                        _meta_field, _parse_players, _read, _require,
                        _write, derive_seed, label_fields, load_keys, load_shards,
                        position_seed, prepare_directory, run_shards, sample_positions,
                        settings_of_fields)

__all__ = ["SETS", "MARGIN", "MIN_CANDIDATES", "MAX_CANDIDATES", "REFERENCE_SETTINGS",
           "DEFAULT_SEED", "DEFAULT_PLAYERS", "default_players", "DECISIONS", "Decisions",
           "Benchmark", "SetScore",
           "select_decisions", "save_decisions", "load_decisions", "build", "extend",
           "require_reference_net", "load", "score",
           "score_evaluator", "evaluator_chooser", "chosen_key", "choices", "evaluator_choices",
           "losses", "summarize"]

SETS = CLASSES
#: Candidates: the plays within this equity of the net's 0-ply best.
MARGIN = 0.12
MIN_CANDIDATES = 2
MAX_CANDIDATES = 8
#: The reference rollouts: the net plays to the end, variance reduction.
REFERENCE_SETTINGS = RolloutSettings(trials=144, truncate=0, seed=21, policy="net",
                                     evaluator="net", variance_reduction=True, luck_plays=0)
#: The default seed of the decisions (the training data's is 1).
DEFAULT_SEED = 21
#: The self-play players that find the positions (gnubg through the optional gnubg-nn).
DEFAULT_PLAYERS = {**TRAINING_PLAYERS, "gnubg": 10}
DECISIONS = "decisions.bgtd"
EXTRAS = "extras.bgtd"
_ARRAYS = ("index", "key", "cls", "dice", "count", "cand", "eq0", "equity", "stderr", "games")
_IDENTITY = ("settings", "decisions", "margin", "min_candidates", "max_candidates", "net",
             "race_points", "shard_size")
_EXTRA_ARRAYS = ("index", "cand", "equity", "stderr", "games")
_EXTRA_IDENTITY = ("settings", "decisions", "net", "race_points")


def default_players() -> dict:
    """:data:`DEFAULT_PLAYERS`, without gnubg where gnubg-nn is not installed."""
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        return {k: v for k, v in DEFAULT_PLAYERS.items() if k != "gnubg"}
    return dict(DEFAULT_PLAYERS)


def _sets(sets) -> tuple:
    if sets is None:
        return tuple(SETS)
    if isinstance(sets, str):
        sets = [sets]
    out = []
    for s in sets:
        name = str(s).strip().lower()
        if name not in SETS:
            raise BgfastError(f"unknown set {s!r}; choose from {', '.join(SETS)}")
        if name not in out:
            out.append(name)
    if not out:
        raise BgfastError("no set is given")
    return tuple(n for n in SETS if n in out)


def _keys_digest(keys: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(keys, dtype=np.uint8).tobytes()).hexdigest()


# ---------------------------------------------------------------------------
# decisions
# ---------------------------------------------------------------------------

@dataclass
class Decisions(KeyedRows):
    """Positions with a roll each: ``keys uint8[N, 10]``, ``classes``
    (index into :data:`SETS`), ``sources`` (index into ``meta["players"]``),
    ``dice uint8[N, 2]``; ``meta`` how they were drawn."""

    keys: np.ndarray
    classes: np.ndarray
    sources: np.ndarray
    dice: np.ndarray
    meta: dict = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """SHA-256 of the keys and dice in order."""
        return hashlib.sha256(np.ascontiguousarray(self.keys, dtype=np.uint8).tobytes()
                              + np.ascontiguousarray(self.dice, dtype=np.uint8).tobytes()).hexdigest()


def _roll(seed: int, key: np.ndarray) -> tuple[int, int]:
    """The seeded roll of the position ``key`` in a benchmark of ``seed``."""
    r = derive_seed(seed, "roll", key.tobytes().hex())
    return 1 + r % 6, 1 + (r // 6) % 6


def _exclude_keys(exclude) -> np.ndarray | None:
    """Position keys from a positions or decisions file, a list of them, a
    :class:`PositionSet` or a key array."""
    if exclude is None:
        return None
    if isinstance(exclude, (str, os.PathLike)):
        return load_keys(exclude)
    if isinstance(exclude, PositionSet):
        return exclude.keys
    if isinstance(exclude, (list, tuple)) and exclude and all(
            isinstance(e, (str, os.PathLike, PositionSet)) for e in exclude):
        return np.concatenate([_exclude_keys(e) for e in exclude])
    ex = np.asarray(exclude, dtype=np.uint8)
    if ex.ndim != 2 or ex.shape[1] != 10:
        raise BgfastError(f"exclude must be position keys of shape (M, 10), not {ex.shape}")
    return ex


def select_decisions(n: int, seed: int = DEFAULT_SEED, sets=None, players=None, *,
                     exclude=None, jobs: int | None = None,
                     progress: Callable | None = None) -> Decisions:
    """``n`` decisions of each set in ``sets`` (default all of :data:`SETS`),
    see the module.  ``players`` as in
    :func:`bgfast.traindata.sample_positions` (default
    :func:`default_players`); ``exclude``: positions never taken (positions
    files, a :class:`PositionSet` or keys).  The sample grows (doubling)
    until every set has ``n``; the result depends on the arguments only."""
    from .movegen import legal_plays_batch

    if not isinstance(n, (int, np.integer)) or n < 1:
        raise BgfastError("the number of decisions must be at least 1")
    names = _sets(sets)
    wanted = [SETS.index(s) for s in names]
    ex = _exclude_keys(exclude)
    players = default_players() if players is None else players
    pool = 12 * int(n) * len(names) + 1000
    while True:
        ps = sample_positions(pool, seed, players, jobs=jobs, exclude=ex, progress=progress)
        dice = np.array([_roll(seed, k) for k in ps.keys], dtype=np.int64).reshape(-1, 2)
        offsets = legal_plays_batch(ps.boards, dice)[0]
        choice = np.diff(offsets) >= 2
        per_set = [np.flatnonzero(choice & (ps.classes == c))[:n] for c in wanted]
        if min(len(i) for i in per_set) == n:
            break
        if pool >= 4_000_000:
            raise BgfastError(f"{pool} positions hold fewer than {n} decisions of a set")
        pool *= 2
    idx = np.stack(per_set, axis=1).ravel()         # the sets in turn: any prefix is balanced
    meta = {"n": int(n), "seed": int(seed), "sets": list(names), "pool": pool,
            "players": ps.meta["players"], "games": ps.meta["games"],
            "excluded": {"keys": 0 if ex is None else int(len(ex)),
                         "digest": None if ex is None else _keys_digest(ex)}}
    return Decisions(np.ascontiguousarray(ps.keys[idx]), np.ascontiguousarray(ps.classes[idx]),
                     np.ascontiguousarray(ps.sources[idx]),
                     np.ascontiguousarray(dice[idx], dtype=np.uint8), meta)


def save_decisions(d: Decisions, path) -> None:
    _write(path, "benchmark-decisions", {"key": d.keys, "cls": d.classes, "source": d.sources,
                                         "dice": d.dice}, {**d.meta, "digest": d.digest})


def load_decisions(path) -> Decisions:
    arrays, meta = _read(path, "benchmark-decisions")
    _require(arrays, ("key", "cls", "source", "dice"), path)
    d = Decisions(arrays["key"].reshape(-1, 10), arrays["cls"], arrays["source"],
                  arrays["dice"].reshape(-1, 2), meta)
    if meta.get("digest") != d.digest:
        raise DatabaseError(f"{os.fspath(path)} is corrupt: its digest does not match its decisions")
    return d


# ---------------------------------------------------------------------------
# the reference
# ---------------------------------------------------------------------------

def _candidates(ranked, margin: float, lo: int, hi: int) -> int:
    """How many of the ranked plays (best first) are candidates."""
    if not ranked:
        return 0
    k = sum(1 for r in ranked if r.equity >= ranked[0].equity - margin)
    return min(max(k, min(lo, len(ranked))), hi)


def _worker_settings(s: RolloutSettings) -> dict:
    """The fields of ``s`` for a worker that rolls out in its own process
    (cubeless, serial)."""
    return {**{k: v for k, v in s.to_dict().items() if k != "cube"}, "jobs": 1,
            "backend": "serial"}


def _reference_block(block, args) -> tuple:
    """Roll out the candidates of decisions ``start ..`` of a block."""
    from .evaluate import rank_plays
    from .rollout import rollout_plays

    start, keys, dice = block
    s = RolloutSettings(**args["settings"])
    c = args["max_candidates"]
    n = keys.shape[0]
    count = np.zeros(n, dtype=np.uint8)
    cand = np.zeros((n, c, 10), dtype=np.uint8)
    eq0 = np.full((n, c), np.nan)
    eq = np.full((n, c), np.nan)
    se = np.full((n, c), np.nan)
    games = np.zeros(n, dtype=np.int32)
    for i, board in enumerate(unpack(keys)):
        pos = Position(board)
        d1, d2 = int(dice[i, 0]), int(dice[i, 1])
        ranked = rank_plays(pos, d1, d2, plies=0)
        k = _candidates(ranked, args["margin"], args["min_candidates"], c)
        res = rollout_plays(pos, d1, d2, replace(s, seed=position_seed(s.seed, start + i)),
                            max_plays=k)
        by_play = {r.label: r for r in res}
        count[i] = k
        for j, rp in enumerate(ranked[:k]):
            r = by_play[rp.play.notation]
            cand[i, j] = pack(rp.play.position.board[None])[0]
            eq0[i, j] = rp.equity
            eq[i, j] = r.equity
            se[i, j] = r.stderr["equity"]
        games[i] = res[0].games
    return count, cand, eq0, eq, se, games


def _net_checksum() -> str:
    from .traindata import _net_checksum as checksum

    return checksum()


def build(out, decisions: int = 300, *, sets=None, seed: int = DEFAULT_SEED,
          settings: RolloutSettings | None = None, players=None, exclude=None,
          margin: float = MARGIN, min_candidates: int = MIN_CANDIDATES,
          max_candidates: int = MAX_CANDIDATES, resume: bool = False, jobs: int | None = None,
          limit: int | None = None, shard_size: int = 256, block_size: int = 2,
          checkpoint_seconds: float = 60.0, progress: Callable | None = None,
          select_progress: Callable | None = None) -> dict:
    """Build (or with ``resume`` continue) the benchmark in the directory
    ``out``: ``decisions`` of each set (see the module).  ``settings``: the
    reference rollouts (default :data:`REFERENCE_SETTINGS`; ``jobs`` and
    ``backend`` are ignored: each decision is rolled out in one process,
    ``jobs`` at a time).  ``limit``: roll out only the first ``limit``
    decisions now.  ``progress(done, total)`` follows the rollouts,
    ``select_progress(found, n)`` the search for positions.  Returns a
    summary."""
    from . import __version__

    s = settings or REFERENCE_SETTINGS
    if s.cube is not None:
        raise BgfastError("the benchmark's rollouts are cubeless")
    margin = check_number("margin", margin, 0)
    if not 1 <= int(min_candidates) <= int(max_candidates) <= 255:
        raise BgfastError("candidates: 1 <= min_candidates <= max_candidates <= 255")
    if limit is not None and int(limit) < 0:
        raise BgfastError("limit must be >= 0")
    names = _sets(sets)
    ex = _exclude_keys(exclude)
    out = prepare_directory(out, "a benchmark", resume)
    dpath = out / DECISIONS
    plist = _parse_players(default_players() if players is None else players)
    want = {"n": int(decisions), "seed": int(seed), "sets": list(names),
            "players": [list(p) for p in plist]}
    if dpath.exists():
        if not resume:
            raise BgfastError(f"{out} already holds a benchmark; give resume (--resume) to "
                              "continue it, or choose another directory")
        dec = load_decisions(dpath)
        for k, v in want.items():
            if dec.meta.get(k) != v:
                raise DatabaseError(f"{dpath} does not belong with this build: its {k} is "
                                    f"{dec.meta.get(k)!r}, not {v!r}")
        if ex is not None and dec.meta.get("excluded", {}).get("digest") != _keys_digest(ex):
            raise DatabaseError(f"{dpath} was drawn with other excluded positions")
    else:
        dec = select_decisions(int(decisions), seed, names, players, exclude=ex, jobs=jobs,
                               progress=select_progress)
        save_decisions(dec, dpath)
    total = len(dec) if limit is None else min(int(limit), len(dec))
    expect = {"settings": label_fields(s), "decisions": dec.digest, "margin": float(margin),
              "min_candidates": int(min_candidates), "max_candidates": int(max_candidates),
              "net": _net_checksum(), "race_points": race_points(), "bgfast": __version__}
    args = {"settings": _worker_settings(s),
            "margin": float(margin), "min_candidates": int(min_candidates),
            "max_candidates": int(max_candidates)}

    def rows_of(a, result):
        count, cand, eq0, eq, se, games = result
        b = a + count.shape[0]
        return (np.arange(a, b, dtype=np.int64), dec.keys[a:b], dec.classes[a:b], dec.dice[a:b],
                count, cand, eq0, eq, se, games)

    r = run_shards(out, "benchmark", _ARRAYS, expect, len(dec), total, _reference_block, args,
                   lambda a, b: (a, dec.keys[a:b], dec.dice[a:b]), rows_of, resume=resume,
                   jobs=jobs, shard_size=shard_size, block_size=block_size,
                   checkpoint_seconds=checkpoint_seconds, progress=progress, what="a benchmark")
    return {"decisions": len(dec), "classes": dec.class_counts(), "rolled_out": r["rows"],
            "in_this_run": r["computed"], "shards": r["shards"], "seconds": r["seconds"],
            "out": str(out)}


def _extra_block(block, args) -> tuple:
    """Roll out extra plays alone, each with the seed of its decision:
    ``(equity, stderr, games)``."""
    from .rollout import _results, _rollout_boards

    index, cand = block
    s = RolloutSettings(**args)
    n = index.shape[0]
    eq, se, games = np.empty(n), np.empty(n), np.zeros(n, dtype=np.int32)
    for j, board in enumerate(unpack(cand)):
        sj = replace(s, seed=position_seed(s.seed, int(index[j])))
        b = np.ascontiguousarray(board[None])
        r = _results(b, _rollout_boards(b, sj), sj, flip=True)[0]
        eq[j], se[j], games[j] = r.equity, r.stderr["equity"], r.games
    return eq, se, games


def _legal_results(db: Benchmark, rows: np.ndarray) -> list:
    """The keys (as bytes) of the legal plays' results of decisions ``rows``."""
    from .movegen import legal_plays_batch

    offsets, res = legal_plays_batch(db.boards[rows], db.dice[rows].astype(np.int64))
    keys = pack(res) if len(res) else np.zeros((0, 10), np.uint8)
    return [{bytes(k) for k in keys[offsets[i]:offsets[i + 1]]} for i in range(rows.size)]


def require_reference_net(db: Benchmark, where="the benchmark") -> None:
    """Raise :class:`BgfastError` unless this process's net ``net`` is the
    one that rolled out ``db``'s reference (what :func:`extend` needs)."""
    from .net import WEIGHTS_ENV

    net = _net_checksum()
    if db.meta.get("net") != net:
        raise BgfastError(f"the reference of {os.fspath(where)} was rolled out with the net of "
                          f"checksum {str(db.meta.get('net'))[:16]}..., not this process's "
                          f"({net[:16]}...): set ${WEIGHTS_ENV} to its weights")


def extend(directory, chosen, *, jobs: int | None = None, block_size: int = 4,
           checkpoint_seconds: float = 60.0, progress: Callable | None = None) -> dict:
    """Roll out the plays ``chosen`` (keys ``uint8[N, 10]``, one per
    decision of the benchmark in ``directory``, as :func:`choices` gives
    them) that are neither candidates nor extra plays yet, and add them to
    its ``extras.bgtd`` (see the module).  The rollouts use the reference's
    settings and race table (installed for the call) and this process's net
    ``net``, which must be the reference's (``$BGFAST_NET``); ``jobs``
    processes, written at least every ``checkpoint_seconds`` and when the
    run stops, so that an interrupted run loses at most that much (run it
    again to finish).
    ``progress(done, total)`` follows the rollouts.  Returns a summary."""
    import time

    from ._workers import ordered_map
    from .traindata import _jobs

    d = Path(directory)
    db = load(d)
    chosen = np.asarray(chosen)
    if chosen.dtype != np.uint8 or chosen.shape != (len(db), 10):
        raise BgfastError(f"chosen must be uint8[{len(db)}, 10], the key of one play a decision")
    if checkpoint_seconds <= 0 or block_size < 1:
        raise BgfastError("checkpoint_seconds and block_size must be positive")
    jobs = _jobs(jobs)
    require_reference_net(db, d)
    rows = np.flatnonzero(losses(db, chosen)[1])          # not rolled out yet
    legal = _legal_results(db, rows)
    for i, ok in zip(rows, legal):
        if bytes(chosen[i]) not in ok:
            raise BgfastError(f"chosen[{i}] is not the result of a legal play of decision {i}")
    meta = {k: db.meta[k] for k in _EXTRA_IDENTITY}
    path = d / EXTRAS
    old = _read_extras(path, db.meta) if path.exists() else {
        "index": np.zeros(0, np.int64), "cand": np.zeros((0, 10), np.uint8),
        "equity": np.zeros(0), "stderr": np.zeros(0), "games": np.zeros(0, np.int32)}
    new = {k: [] for k in _EXTRA_ARRAYS}

    def write():
        a = {k: np.concatenate([old[k], np.concatenate(new[k]) if new[k] else old[k][:0]])
             for k in _EXTRA_ARRAYS}
        order = np.lexsort(tuple(a["cand"][:, j] for j in range(9, -1, -1)) + (a["index"],))
        _write(path, "benchmark-extras", {k: a[k][order] for k in _EXTRA_ARRAYS}, meta)

    t0 = last = time.monotonic()
    args = _worker_settings(settings_of_fields(db.meta["settings"]))
    blocks = [(rows[a:a + block_size].astype(np.int64), chosen[rows[a:a + block_size]])
              for a in range(0, rows.size, block_size)]
    done, fresh = 0, False
    if progress:
        progress(0, rows.size)
    before = race_points()
    use_race_points(_meta_field(db.meta, "race_points"))      # before the workers fork
    stream = ordered_map(_extra_block, iter(blocks), args, jobs)
    try:
        for (index, cand), (eq, se, games) in zip(blocks, stream):
            for k, v in zip(_EXTRA_ARRAYS, (index, cand, eq, se, games)):
                new[k].append(v)
            done += index.size
            fresh = True
            if time.monotonic() - last >= checkpoint_seconds:
                write()
                fresh, last = False, time.monotonic()
            if progress:
                progress(done, rows.size)
    finally:
        stream.close()
        use_race_points(before)
        if fresh:
            write()
    return {"decisions": len(db), "rolled_out": done, "extras": int(old["index"].size) + done,
            "seconds": round(time.monotonic() - t0, 1), "out": str(d)}


# ---------------------------------------------------------------------------
# loading and scoring
# ---------------------------------------------------------------------------

@dataclass
class Benchmark(KeyedRows):
    """The rolled-out decisions of a benchmark directory (arrays as in the
    shards, see the module) and ``meta`` (the settings and the decisions' meta)."""

    keys: np.ndarray
    classes: np.ndarray
    dice: np.ndarray
    count: np.ndarray
    cand: np.ndarray
    eq0: np.ndarray
    equity: np.ndarray
    stderr: np.ndarray
    games: np.ndarray
    meta: dict = field(default_factory=dict)
    #: Extra plays per decision (:func:`extend`): columns ``count ..
    #: count + extra - 1`` of ``cand``, ``equity`` and ``stderr`` (``eq0`` NaN).
    extra: np.ndarray | None = None

    def __post_init__(self):
        if self.extra is None:
            self.extra = np.zeros(self.count.shape[0], dtype=np.int64)

    def subset(self, rows) -> "Benchmark":
        rows = np.asarray(rows)
        return Benchmark(self.keys[rows], self.classes[rows], self.dice[rows], self.count[rows],
                         self.cand[rows], self.eq0[rows], self.equity[rows], self.stderr[rows],
                         self.games[rows], self.meta, self.extra[rows])

    def of_sets(self, sets) -> "Benchmark":
        """The decisions of the named sets (``contact``, ``crashed``, ``race``;
        a name or a list of names; None: every set), in their order here;
        :class:`BgfastError` for an unknown name."""
        return self.subset(np.flatnonzero(np.isin(self.classes, [SETS.index(s) for s in _sets(sets)])))

    def rolled_out(self) -> np.ndarray:
        """``bool[N, C]``: the columns that hold a rolled-out play (candidates and extras)."""
        c = np.arange(self.cand.shape[1])[None, :]
        return c < (self.count.astype(np.int64) + self.extra)[:, None]


def load(directory, *, partial: bool = True) -> Benchmark:
    """The rolled-out decisions of a benchmark directory (with ``partial``,
    also those of the shard being filled); :class:`DatabaseError` unless every
    file is intact and they belong together."""
    d = Path(directory)
    if not d.is_dir():
        raise DatabaseError(f"{os.fspath(directory)} is not a benchmark directory")
    rows, meta = load_shards(d, "benchmark", _ARRAYS, _IDENTITY, partial=partial,
                             what="rolled-out decisions")
    dec = load_decisions(d / DECISIONS)
    if meta.get("decisions") != dec.digest:
        raise DatabaseError(f"{os.fspath(directory)}: the shards were not made from {DECISIONS}")
    n = rows["index"].shape[0]
    c = int(meta.get("max_candidates") or 0)
    if n > len(dec) or rows["cand"].shape[1:] != (c, 10) or (
            rows["key"].reshape(-1, 10) != dec.keys[:n]).any():
        raise DatabaseError(f"{os.fspath(directory)}: the shards do not match {DECISIONS}")
    db = Benchmark(rows["key"].reshape(-1, 10), rows["cls"], rows["dice"].reshape(-1, 2),
                   rows["count"], rows["cand"], rows["eq0"], rows["equity"], rows["stderr"],
                   rows["games"], {**meta, "decisions_meta": dec.meta})
    if (d / EXTRAS).exists():
        _add_extras(db, _read_extras(d / EXTRAS, meta))
    return db


def _read_extras(path, meta: dict) -> dict:
    """The arrays of an extras file, checked against the shards' ``meta``."""
    arrays, emeta = _read(path, "benchmark-extras")
    _require(arrays, _EXTRA_ARRAYS, path)
    for k in _EXTRA_IDENTITY:
        if _meta_field(emeta, k) != _meta_field(meta, k):
            raise DatabaseError(f"{os.fspath(path)} does not belong with the shards: its {k} differs")
    a = {k: np.asarray(arrays[k]) for k in _EXTRA_ARRAYS}
    a["cand"] = a["cand"].reshape(-1, 10)
    m = a["index"].shape[0]
    if any(a[k].shape[0] != m for k in _EXTRA_ARRAYS) or (m and (a["index"] < 0).any()):
        raise DatabaseError(f"{os.fspath(path)}: its arrays do not match")
    return a


def _add_extras(db: Benchmark, a: dict) -> None:
    """Put the extra plays ``a`` (of decisions that ``db`` holds) after each
    decision's candidates, widening the arrays as needed."""
    keep = a["index"] < len(db)
    idx = a["index"][keep]
    if not idx.size:
        return
    per = np.bincount(idx, minlength=len(db))
    width = int((db.count.astype(np.int64) + per).max())
    if width > db.cand.shape[1]:
        grow = width - db.cand.shape[1]
        db.cand = np.concatenate([db.cand, np.zeros((len(db), grow, 10), np.uint8)], axis=1)
        pad = np.full((len(db), grow), np.nan)
        db.eq0, db.equity, db.stderr = (np.concatenate([x, pad], axis=1)
                                        for x in (db.eq0, db.equity, db.stderr))
    order = np.argsort(idx, kind="stable")
    idx = idx[order]
    first = np.searchsorted(idx, idx)          # rank within the decision
    col = db.count.astype(np.int64)[idx] + np.arange(idx.size) - first
    db.cand[idx, col] = a["cand"][keep][order]
    db.equity[idx, col] = a["equity"][keep][order]
    db.stderr[idx, col] = a["stderr"][keep][order]
    db.extra = per.astype(np.int64)


@dataclass(frozen=True)
class SetScore:
    """A chooser's score on one set: ``decisions``, ``error`` (mean equity
    lost per decision x1000) and its standard error ``se``, ``best`` (share
    of decisions where it takes the reference best), ``outside`` (decisions
    where its play was not rolled out)."""

    set: str
    decisions: int
    error: float
    se: float
    best: float
    outside: int

    def to_dict(self) -> dict:
        return {"set": self.set, "decisions": self.decisions, "error": self.error, "se": self.se,
                "best": self.best, "outside": self.outside}


def chosen_key(choice) -> np.ndarray:
    """The position key (``uint8[10]``) of a chooser's answer: a
    :class:`bgfast.evaluate.RankedPlay`, a :class:`bgfast.movegen.Play`, a
    :class:`Position` or a board after the play (the opponent on roll)."""
    if hasattr(choice, "play"):
        choice = choice.play
    if hasattr(choice, "position") and not isinstance(choice, Position):
        choice = choice.position
    board = choice.board if isinstance(choice, Position) else np.asarray(choice, dtype=np.uint8)
    return pack(board.reshape(1, 2, 25))[0]


def losses(db: Benchmark, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per decision of ``db``: the equity lost by the plays ``chosen`` (keys
    ``uint8[N, 10]``, see :func:`choices`) against the reference best (of
    the candidates and the extra plays), and whether each was not rolled out
    (then charged the worst candidate's loss)."""
    c = db.cand.shape[1]
    valid = db.rolled_out()
    eq = np.where(valid, db.equity, np.nan)
    best = np.nanmax(eq, axis=1)
    cands = np.arange(c)[None, :] < db.count[:, None].astype(np.int64)
    worst = np.nanmin(np.where(cands, db.equity, np.nan), axis=1)
    match = valid & (db.cand == chosen[:, None, :]).all(axis=2)
    inside = match.any(axis=1)
    got = np.where(inside, np.nanmax(np.where(match, eq, np.nan), axis=1, initial=-np.inf), worst)
    return best - got, ~inside


def summarize(db: Benchmark, loss: np.ndarray, outside: np.ndarray, sets=None) -> dict:
    """``{set: SetScore}`` from the per-decision ``loss`` and ``outside`` of :func:`losses`."""
    out = {}
    for name in _sets(sets):
        rows = db.classes == SETS.index(name)
        n = int(rows.sum())
        if n == 0:
            continue
        l = loss[rows]
        se = float(l.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        out[name] = SetScore(name, n, float(1000 * l.mean()), 1000 * se,
                             float((l == 0).mean()), int(outside[rows].sum()))
    if not out:
        raise BgfastError("the benchmark holds no decisions of the sets asked for")
    return out


def _of_sets(db, sets) -> Benchmark:
    db = db if isinstance(db, Benchmark) else load(db)
    return db.of_sets(sets)


def choices(db: Benchmark, chooser: Callable, *, progress: Callable | None = None) -> np.ndarray:
    """The keys (``uint8[N, 10]``) of ``chooser``'s plays on every decision of ``db``."""
    boards = db.boards
    chosen = np.zeros((len(db), 10), dtype=np.uint8)
    for i in range(len(db)):
        chosen[i] = chosen_key(chooser(boards[i], int(db.dice[i, 0]), int(db.dice[i, 1])))
        if progress:
            progress(i + 1, len(db))
    return chosen


def evaluator_choices(db: Benchmark, evaluator="net", plies: int = 0, *, batch: int = 256,
                      progress: Callable | None = None) -> np.ndarray:
    """:func:`choices` of ``evaluator``'s best play at ``plies``, ranked in
    batches (:func:`bgfast.evaluate.rank_plays_batch`)."""
    from .evaluate import rank_plays_batch

    if plies < 0:
        raise BgfastError("plies must be >= 0")
    boards = db.boards
    chosen = np.zeros((len(db), 10), dtype=np.uint8)
    for a in range(0, len(db), batch):
        b = min(a + batch, len(db))
        ranked = rank_plays_batch(boards[a:b], db.dice[a:b].astype(np.int64), plies=plies,
                                  evaluator=evaluator)
        chosen[a:b] = pack(ranked.results[ranked.order[ranked.offsets[:-1]]])
        if progress:
            progress(b, len(db))
    return chosen


def score(db, chooser: Callable, *, sets=None, progress: Callable | None = None) -> dict:
    """Score ``chooser`` (a callable ``(board uint8[2, 25], d1, d2) ->`` a
    play, see :func:`chosen_key`) on the benchmark ``db`` (a
    :class:`Benchmark` or its directory): ``{set: SetScore}`` for each set of
    ``sets`` (default all) that it holds."""
    sub = _of_sets(db, sets)
    return summarize(sub, *losses(sub, choices(sub, chooser, progress=progress)), sets)


def evaluator_chooser(evaluator="net", plies: int = 0) -> Callable:
    """A chooser taking the best play of ``evaluator`` at ``plies``
    (:func:`bgfast.evaluate.rank_plays`)."""
    from .evaluate import rank_plays

    def choose(board, d1, d2):
        return rank_plays(Position(board), d1, d2, plies=plies, evaluator=evaluator)[0]

    return choose


def score_evaluator(db, evaluator="net", plies: int = 0, *, sets=None, batch: int = 256,
                    progress: Callable | None = None) -> dict:
    """:func:`score` of ``evaluator``'s best play at ``plies``
    (:func:`evaluator_choices`)."""
    sub = _of_sets(db, sets)
    chosen = evaluator_choices(sub, evaluator, plies, batch=batch, progress=progress)
    return summarize(sub, *losses(sub, chosen), sets)
