"""Cubeless rollouts: the game loop in Cython, parallel on local cores or Ray.

::

    from bgfast.rollout import rollout, RolloutSettings
    res = rollout(Position.initial(), RolloutSettings(trials=1296, seed=1))
    res.equity, res.stderr["equity"], res.to_dict()

A trial plays a position to the end (or to the truncation) with the policy
for both sides: the net at 0-ply (``net``, the default), any other
computer level (``beginner`` .. ``expert``; :data:`LEVEL_POLICIES`),
pubeval, or the best play by an evaluator.  Everything that makes a
trial's result is a function of ``(seed, trial index)``: its random
stream, its stratified first two rolls, its luck adjustment.  Trials are
split into chunks, the chunks run anywhere (one process, local worker processes, Ray tasks), and their results
are folded in trial order, in fixed blocks of :data:`STATS_BLOCK` trials:
the result is bit-identical for every job count and backend, and a rollout
of any length runs in bounded memory.  Local workers are forked for each
rollout and stopped when it ends (:mod:`bgfast._workers`).

Variance reduction (``variance_reduction=True``): at every ply the policy's
play for each of the 21 rolls is evaluated by the settings' evaluator (by
default the net, with the bear-off tables; see ``bgfast.evaluate``);
the luck of the roll actually thrown (its value minus the 21-roll average) is
subtracted from the result.  The adjustment has expectation zero whatever
the evaluator, so the mean stays unbiased; a better evaluator removes more
variance.

Rollouts are cubeless: the ``cube`` field of :class:`RolloutSettings` and
:class:`RolloutResult` is always ``None``.
"""
from __future__ import annotations

import json
from collections import deque
from contextlib import closing
from dataclasses import asdict, dataclass, replace

import numpy as np

from . import _rollout
from ._workers import WorkerError, cores, ordered_map
from .errors import BgfastError, InvalidPositionError
from .evaluate import (EVAL_COMPOSITE, EVAL_PUBEVAL, POLICY_EVAL, POLICY_PUBEVAL, PROB_NAMES,
                       ensure_tables as _ensure_tables, invert)
from .movegen import ALL_ROLLS
from .position import Position, as_board, as_boards

__all__ = ["RolloutSettings", "RolloutResult", "rollout", "rollout_plays", "LEVEL_POLICIES",
           "policy_names", "evaluator_names",
           "rollout_opening_rolls", "run_chunk", "OUTPUT_NAMES", "POLICIES", "BACKENDS",
           "KERNEL_EVALUATORS", "register_kernel_evaluator", "MAX_TRIALS", "MAX_TRUNCATE",
           "STATS_BLOCK"]

OUTPUT_NAMES = PROB_NAMES + ("equity",)
#: The fewest trials of a Ray task that :func:`_ray_chunk_size` makes.
MIN_RAY_CHUNK = 36
POLICIES = {"pubeval": POLICY_PUBEVAL, "evaluator": POLICY_EVAL}
#: computer levels (bgfast.levels) as rollout policies: name -> kernel policy
#: slot, installed from bgfast._net on first use in each process
LEVEL_POLICIES = {"beginner": 2, "easy": 3, "medium": 4, "net": 5, "net0": 5,
                  "hard": 6, "net1": 6, "expert": 7, "net2": 7}
BACKENDS = ("local", "serial", "ray")
#: evaluators the rollout kernel can use (luck, truncation, the "evaluator" policy)
KERNEL_EVALUATORS = {"composite": EVAL_COMPOSITE, "pubeval": EVAL_PUBEVAL}
#: the shipped net as a kernel evaluator (slot), installed on first use
NET_EVALUATOR_SLOT = 7
#: Most trials of a rollout (its memory does not grow with them).
MAX_TRIALS = 10 ** 15
#: Most plies before truncation: the kernel ends every game after 4000
#: plies (``MAX_PLIES`` in ``_rollout.pyx``), truncated or not.
MAX_TRUNCATE = 4000
#: Most trials per task (a task's results are held whole).
MAX_CHUNK = 1 << 16
#: Trials whose statistics are taken together before they join the totals.
STATS_BLOCK = 1296


def policy_names() -> list[str]:
    return list(POLICIES) + [k for k in LEVEL_POLICIES if k not in POLICIES]


def evaluator_names() -> list[str]:
    return list(KERNEL_EVALUATORS) + ([] if "net" in KERNEL_EVALUATORS else ["net"])


def _policy_slot(name: str) -> int:
    """The kernel slot of policy ``name``, installing a level in this process."""
    if name in POLICIES:
        return POLICIES[name]
    slot = LEVEL_POLICIES[name]
    from . import _net

    if not _rollout.policy_registered(slot):
        from .levels import get_level

        _net.install_policy(slot, get_level(name).spec())
    return slot


def _evaluator_slot(name: str) -> int:
    """The kernel slot of evaluator ``name``, installing the net in this process."""
    if name in KERNEL_EVALUATORS:
        return KERNEL_EVALUATORS[name]
    from . import _evaluate, _net
    from .net import default_net

    if not _evaluate.slot_registered(NET_EVALUATOR_SLOT):
        _net.install_evaluator(NET_EVALUATOR_SLOT, default_net().model)
    return NET_EVALUATOR_SLOT


def register_kernel_evaluator(name: str, slot: int | None) -> None:
    """Make the evaluator in kernel slot ``slot`` usable by rollouts as
    ``RolloutSettings(evaluator=name)`` (``slot=None`` removes the name).

    A kernel module (e.g. the neural net) fills the slot from C with
    ``bgfast._evaluate.register_evaluator_slot(slot, fn, ctx)`` at import;
    worker processes get it by fork (local pool) or must import that module
    (Ray).  Built-in names cannot be replaced."""
    from . import _evaluate

    if name in ("composite", "pubeval"):
        raise BgfastError(f"{name!r} is a built-in rollout evaluator")
    if slot is None:
        KERNEL_EVALUATORS.pop(name, None)
        return
    if not _evaluate.slot_registered(int(slot)):
        raise BgfastError(f"no evaluator is registered in kernel slot {slot}")
    KERNEL_EVALUATORS[name] = int(slot)


@dataclass(frozen=True)
class RolloutSettings:
    """How to roll out.

    ``trials``: games per position, 1 .. :data:`MAX_TRIALS` (the maximum
    when ``stderr_target`` is set); ``seed``: same seed, same bits;
    ``truncate``: plies before the position is evaluated, 0 ..
    :data:`MAX_TRUNCATE` (0 = play to the end); ``variance_reduction``:
    luck adjustment; ``quasi_random``: stratified first two rolls;
    ``early_stop``: stop with exact values once both sides are inside the
    two-sided bear-off table; ``policy``: a computer level of
    :data:`LEVEL_POLICIES` (``net``, the default, is the net at 0-ply;
    ``beginner`` .. ``expert``), which plays exactly as in games and duels,
    its noise and random choices drawn from each trial's own stream, or
    ``pubeval`` (its score picks the plays, many times faster and much
    weaker) or ``evaluator`` (the best equity by ``evaluator``);
    ``evaluator``: ``net`` (the default: the shipped net with the bear-off
    databases), ``composite``, ``pubeval`` or a registered kernel evaluator
    (:func:`register_kernel_evaluator`), for luck, truncation and the
    evaluator policy; ``stderr_target``: stop once the equity's
    standard error is at most this (checked every ``batch`` trials, at least
    ``min_trials``); ``jobs``: worker processes (None = every core), with
    Ray the tasks in flight (None = twice the cluster's CPUs);
    ``backend``: ``local`` (worker processes), ``serial`` or ``ray``;
    ``address``: the Ray cluster (:func:`bgfast._ray.connect`; None =
    ``RAY_ADDRESS`` or a private local Ray); ``chunk``: trials per task (at
    most :data:`MAX_CHUNK`; on Ray fewer where the cluster's CPUs would get
    fewer than four tasks each); ``retries``: how often the run goes
    on after a local worker died, or a Ray task is resubmitted."""

    trials: int = 1296
    seed: int = 0
    truncate: int = 0
    variance_reduction: bool = True
    quasi_random: bool = True
    early_stop: bool = True
    policy: str = "net"
    evaluator: str = "net"
    stderr_target: float | None = None
    min_trials: int = 324
    batch: int = 1296
    jobs: int | None = None
    backend: str = "local"
    address: str | None = None
    chunk: int = 216
    retries: int = 3
    cube: None = None   # cubeful rollouts come with cube handling

    def __post_init__(self):
        if not 1 <= self.trials <= MAX_TRIALS:
            raise BgfastError(f"trials must be 1 .. {MAX_TRIALS:.0e}, not {self.trials}")
        if not 0 <= self.truncate <= MAX_TRUNCATE:
            raise BgfastError(f"truncate must be 0 .. {MAX_TRUNCATE} plies, not {self.truncate}")
        if self.policy not in POLICIES and self.policy not in LEVEL_POLICIES:
            raise BgfastError(f"unknown policy {self.policy!r}; choose from {', '.join(policy_names())}")
        if self.evaluator not in KERNEL_EVALUATORS and self.evaluator != "net":
            raise BgfastError(f"evaluator {self.evaluator!r} has no rollout kernel; choose from "
                              f"{', '.join(evaluator_names())}")
        if self.backend not in BACKENDS:
            raise BgfastError(f"unknown backend {self.backend!r}; choose from {', '.join(BACKENDS)}")
        if self.jobs is not None and self.jobs < 1:
            raise BgfastError("jobs must be at least 1")
        if self.retries < 0:
            raise BgfastError("retries must be >= 0")
        if not 1 <= self.chunk <= MAX_CHUNK:
            raise BgfastError(f"chunk must be 1 .. {MAX_CHUNK}, not {self.chunk}")
        if self.batch < 1 or self.min_trials < 0:
            raise BgfastError("batch must be at least 1 and min_trials at least 0")
        if not 0 <= self.seed < 2 ** 64:
            raise BgfastError("seed must be in 0 .. 2**64 - 1")
        if self.stderr_target is not None and self.stderr_target <= 0:
            raise BgfastError("stderr_target must be positive")

    def kernel_params(self) -> dict:
        params = _rollout.make_params(self.seed, self.truncate, self.variance_reduction,
                                      self.quasi_random, _policy_slot(self.policy),
                                      _evaluator_slot(self.evaluator), self.early_stop)
        # names, so that a worker process installs the same kernels
        params["policy_name"] = self.policy
        params["evaluator_name"] = self.evaluator
        return params

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RolloutResult:
    """Means of the 5 probabilities and the cubeless equity for the player on
    roll in ``position``, with standard errors and the number of games."""

    position: str
    mean: dict
    stderr: dict
    games: int
    settings: dict
    average_plies: float
    label: str = ""
    cube: None = None

    @property
    def probs(self) -> tuple:
        return tuple(self.mean[k] for k in PROB_NAMES)

    @property
    def equity(self) -> float:
        return self.mean["equity"]

    def to_dict(self) -> dict:
        return {"position": self.position, "label": self.label, "games": self.games,
                "mean": self.mean, "stderr": self.stderr, "average_plies": self.average_plies,
                "policy": self.settings["policy"], "settings": self.settings}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def __str__(self):
        m, s = self.mean, self.stderr
        cols = " ".join(f"{k}={m[k]:.4f}±{s[k]:.4f}" for k in OUTPUT_NAMES)
        return f"{self.label or self.position}: {cols} games={self.games}"


# ------------------------------------------------------------------ workers

def run_chunk(starts: np.ndarray, first: int, count: int, params: dict):
    """Trials ``first .. first+count-1`` of every start board (a task)."""
    _ensure_tables()
    if "policy_name" in params:           # a fresh worker: install level / net kernels
        _policy_slot(params["policy_name"])
        _evaluator_slot(params["evaluator_name"])
    return _rollout.run_trials(starts, int(first), int(count), params)


def _chunk_task(part, job):
    """:func:`run_chunk` as a block of :func:`bgfast._workers.ordered_map`."""
    starts, params = job
    return run_chunk(starts, part[0], part[1], params)


def _parts(trials: int, chunk: int, batch: int | None, first: int = 0):
    """``(first trial, count)`` of the chunks of trials ``first .. trials -
    1``, at most ``chunk`` long, none across a multiple of ``batch``."""
    step = batch or trials
    a = first
    while a < trials:
        n = min(chunk, min(trials, (a // step + 1) * step) - a)
        yield a, n
        a += n


def _ray_remote():
    import ray

    @ray.remote(max_retries=3, retry_exceptions=True)
    def _ray_chunk(starts, first, count, params):
        from bgfast._ray import tagged
        from bgfast.rollout import run_chunk as rc
        return tagged(rc, starts, first, count, params)

    return _ray_chunk


def _ray_chunk_size(s: RolloutSettings) -> int:
    """Trials per Ray task: ``s.chunk``, or less, so that every CPU of the
    cluster gets at least four tasks (at least :data:`MIN_RAY_CHUNK` trials
    a task)."""
    from ._ray import cluster_cpus, connect

    cpus = cluster_cpus(connect(s.address))
    return max(1, min(s.chunk, max(MIN_RAY_CHUNK, -(-s.trials // (4 * cpus)))))


def _ray_stream(starts, parts, params, s: RolloutSettings):
    """The chunks as Ray tasks, results in chunk order, with a bounded
    number in flight; a task that fails (an exception, a lost worker or
    node) is submitted again, up to ``s.retries`` times, on top of Ray's
    own retries."""
    from ._ray import NodeTally, connect, task_error, tasks_in_flight

    ray = connect(s.address)
    chunk = _ray_remote()
    window = tasks_in_flight(ray, s.jobs)
    tally = NodeTally()
    ref = ray.put(starts)
    pending: deque = deque()

    def collect():
        part, task = pending.popleft()
        tries = 0
        while True:
            try:
                return tally.take(ray.get(task))
            except ray.exceptions.RayError as exc:
                tries += 1
                if tries > s.retries:
                    raise task_error(exc) from None
                task = chunk.remote(ref, part[0], part[1], params)

    for part in parts:
        pending.append((part, chunk.remote(ref, part[0], part[1], params)))
        if len(pending) >= window:
            yield collect()
    while pending:
        yield collect()
    tally.report()


def _trial_stream(starts, s: RolloutSettings, params, batch: int | None):
    """``(values float64[k, ncand, 6], plies int32[k, ncand])`` of every
    trial, chunk by chunk in trial order; closing it stops the work (and
    the workers).  On the local backend this process and ``jobs - 1``
    forked workers play the chunks (:func:`bgfast._workers.ordered_map`);
    if a worker dies, the run goes on from the first trial not yet
    received, up to ``s.retries`` times."""
    jobs = s.jobs or cores()
    backend = s.backend
    if backend == "local" and jobs == 1:
        backend = "serial"
    if backend == "serial":
        for a, n in _parts(s.trials, s.chunk, batch):
            yield run_chunk(starts, a, n, params)
        return
    if backend == "ray":
        yield from _ray_stream(starts, _parts(s.trials, _ray_chunk_size(s), batch), params, s)
        return
    _ensure_tables()      # once, before the workers fork
    done = failures = 0
    while True:
        try:
            with closing(ordered_map(_chunk_task, _parts(s.trials, s.chunk, batch, done),
                                     (starts, params), jobs, "local")) as results:
                for out in results:
                    done += len(out[0])
                    yield out
            return
        except WorkerError:
            failures += 1
            if failures > s.retries:
                raise


class _Moments:
    """The count, means and sums of squared deviations of per-trial values
    (and the total plies), folded in trial order in blocks of
    :data:`STATS_BLOCK` trials by Chan, Golub and LeVeque's pairwise update:
    bounded memory, and the same bits for the same trials however they were
    split into chunks, batches and processes."""

    def __init__(self):
        self.n = 0                  # trials folded into mean and m2
        self.mean = self.m2 = None
        self.plies = 0              # int64[ncand]: plies of every trial added
        self.part: list = []        # values of the block being filled
        self.part_n = 0

    def add(self, vals: np.ndarray, plies: np.ndarray) -> None:
        self.plies = self.plies + plies.sum(axis=0, dtype=np.int64)
        i, k = 0, len(vals)
        while i < k:
            take = min(k - i, STATS_BLOCK - self.part_n)
            self.part.append(vals[i:i + take])
            self.part_n += take
            i += take
            if self.part_n == STATS_BLOCK:
                self.n, self.mean, self.m2 = self._merged()
                self.part, self.part_n = [], 0

    @property
    def trials(self) -> int:
        return self.n + self.part_n

    def _merged(self):
        if not self.part:
            return self.n, self.mean, self.m2
        block = self.part[0] if len(self.part) == 1 else np.concatenate(self.part)
        nb = len(block)
        bm = block.mean(axis=0)
        bm2 = np.square(block - bm).sum(axis=0)
        if self.n == 0:
            return nb, bm, bm2
        n = self.n + nb
        d = bm - self.mean
        return n, self.mean + d * (nb / n), self.m2 + bm2 + d * d * (self.n * nb / n)

    def stats(self):
        """``(trials, means float64[ncand, 6], standard errors, mean plies
        float64[ncand])``; NaN standard errors for one trial."""
        n, mean, m2 = self._merged()
        se = np.sqrt(m2 / (n - 1) / n) if n > 1 else np.full_like(mean, np.nan)
        return n, mean, se, self.plies / n


def _rollout_boards(starts: np.ndarray, s: RolloutSettings, progress=None) -> _Moments:
    """Roll out start boards together (common dice): the statistics of
    their trials.  With ``s.stderr_target``, stop at the first multiple of
    ``s.batch`` trials (at least ``s.min_trials``) where every board's
    equity has that standard error.  ``progress(trials done, s.trials)``
    after every chunk."""
    params = s.kernel_params()
    acc = _Moments()
    batch = s.batch if s.stderr_target is not None else None
    with closing(_trial_stream(starts, s, params, batch)) as stream:
        for vals, plies in stream:
            acc.add(vals, plies)
            done = acc.trials
            if progress is not None:
                progress(done, s.trials)
            if (batch and (done % batch == 0 or done == s.trials) and done >= s.min_trials
                    and done > 1 and (acc.stats()[2][:, 5] <= s.stderr_target).all()):
                break
    return acc


def _results(boards, acc: _Moments, s: RolloutSettings, labels=None, flip=False) -> list:
    """The :class:`RolloutResult` of each board from the statistics of its trials."""
    n, means, ses, plies = acc.stats()
    return [_result(boards[c], n, means[c], ses[c], plies[c], s,
                    labels[c] if labels else "", flip) for c in range(len(boards))]


def _result(board, n, mean, se, plies, s: RolloutSettings, label="", flip=False) -> RolloutResult:
    if flip:        # seen from the player who made the play (not on roll in board)
        mean = np.r_[invert(mean[:5]), -mean[5]]
        se = np.r_[se[[0, 3, 4, 1, 2]], se[5]]
    return RolloutResult(Position(board).position_id(),
                         {k: float(v) for k, v in zip(OUTPUT_NAMES, mean)},
                         {k: float(v) for k, v in zip(OUTPUT_NAMES, se)},
                         int(n), s.to_dict(), float(plies), label)


def _settings(settings, kw) -> RolloutSettings:
    if "games" in kw:           # the number of games = trials
        if "trials" in kw:
            raise BgfastError("give trials or games, not both")
        kw = dict(kw)
        kw["trials"] = kw.pop("games")
    s = settings or RolloutSettings()
    return replace(s, **kw) if kw else s


def rollout(positions, settings: RolloutSettings | None = None, *, progress=None, **kw):
    """Roll out one position (a :class:`Position` or board: returns a
    :class:`RolloutResult`) or several (a list or ``uint8[N,2,25]``: a list,
    rolled out with common dice).  Values are for the player on roll.
    Keyword arguments override fields of ``settings`` (``games`` is an alias
    of ``trials``).  ``progress(trials done, trials)`` is called as the
    trials come in."""
    s = _settings(settings, kw)
    single = isinstance(positions, Position) or (isinstance(positions, np.ndarray) and positions.ndim == 2)
    if isinstance(positions, Position):
        boards = positions.board[None]
    elif isinstance(positions, (list, tuple)):
        boards = np.stack([p.board if isinstance(p, Position) else as_board(p) for p in positions])
    else:
        boards = as_boards(positions)
    boards = np.ascontiguousarray(as_boards(boards), dtype=np.uint8)
    if boards.shape[0] == 0:
        raise InvalidPositionError("nothing to roll out")
    res = _results(boards, _rollout_boards(boards, s, progress), s)
    return res[0] if single else res


def rollout_plays(position, d1: int, d2: int, settings: RolloutSettings | None = None,
                  *, max_plays: int | None = None, progress=None, **kw) -> list[RolloutResult]:
    """Roll out the legal plays of ``position`` for d1-d2 with common dice,
    best first; values are for the player making the play.  ``max_plays``
    keeps the best plays by the 0-ply ranking."""
    from .evaluate import rank_plays

    s = _settings(settings, kw)
    pos = position if isinstance(position, Position) else Position(as_board(position))
    ranked = rank_plays(pos, d1, d2, plies=0)
    if max_plays:
        ranked = ranked[:max_plays]
    if not ranked:
        return []
    boards = np.ascontiguousarray(np.stack([r.play.position.board for r in ranked]))
    out = _results(boards, _rollout_boards(boards, s, progress), s,
                   [r.play.notation for r in ranked], flip=True)
    return sorted(out, key=lambda r: -r.equity)


def _policy_choice(s: RolloutSettings, boards: np.ndarray, dice: np.ndarray):
    """The plays the policy of ``s`` makes for each (board, dice), as the
    rollout kernel would make them: ``(counts, results)``."""
    from .evaluate import get_evaluator

    if s.policy == "pubeval":
        return get_evaluator("pubeval").choose(boards, dice)
    if s.policy == "evaluator":
        return get_evaluator(s.evaluator).choose(boards, dice)
    from .levels import get_level

    return get_level(s.policy).choose_boards(boards, dice, seed=s.seed)


def rollout_opening_rolls(settings: RolloutSettings | None = None, *, position=None,
                          progress=None, **kw):
    """Roll out the policy's play for each of the 21 rolls from ``position``
    (default the opening position), with common dice across rolls.

    Returns ``(rolls, results)``: ``rolls`` the 21 ``(d1, d2)`` and
    ``results`` the :class:`RolloutResult` of each roll's play, for the
    player who rolled.  The 36-weighted average of the equities is the
    position's value before the roll."""
    s = _settings(settings, kw)
    pos = position if position is not None else Position.initial()
    pos = pos if isinstance(pos, Position) else Position(as_board(pos))
    rep = np.repeat(pos.board[None], len(ALL_ROLLS), axis=0)
    _c, res = _policy_choice(s, rep, np.asarray(ALL_ROLLS, dtype=np.int64))
    res = np.ascontiguousarray(res)
    out = _results(res, _rollout_boards(res, s, progress), s,
                   [f"{a}{b}" for a, b in ALL_ROLLS], flip=True)
    return [tuple(int(x) for x in r) for r in ALL_ROLLS], out
