"""Cubeless rollouts: the game loop in Cython, parallel on local cores or Ray.

::

    from bgfast.rollout import rollout, RolloutSettings
    res = rollout(Position.initial(), RolloutSettings(trials=1296, seed=1))
    res.equity, res.stderr["equity"], res.to_dict()

A trial plays a position to the end (or to the truncation) with the policy
for both sides: the net at 0-ply (``net``, the default), any other
computer level (``beginner`` .. ``expert``; :data:`LEVEL_POLICIES`),
pubeval, or the best play by an evaluator.  Everything that makes a trial's result is a
function of ``(seed, trial index)``: its random stream, its stratified first
two rolls, its luck adjustment.  Trials are split into chunks, the chunks run
anywhere (one process, a local process pool, Ray tasks), and the per-trial
results are put back in trial order before any sum is taken: the result is
bit-identical for every job count and backend.

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
import math
import os
from dataclasses import asdict, dataclass, replace

import numpy as np

from . import _rollout
from .errors import BgfastError, InvalidPositionError
from .evaluate import (EVAL_COMPOSITE, EVAL_PUBEVAL, POLICY_EVAL, POLICY_PUBEVAL, PROB_NAMES,
                       _ensure_tables, invert)
from .movegen import ALL_ROLLS
from .position import Position, as_board, as_boards

__all__ = ["RolloutSettings", "RolloutResult", "rollout", "rollout_plays", "LEVEL_POLICIES",
           "policy_names", "evaluator_names",
           "rollout_opening_rolls", "run_chunk", "OUTPUT_NAMES", "POLICIES", "BACKENDS",
           "KERNEL_EVALUATORS", "register_kernel_evaluator", "shutdown_pools"]

OUTPUT_NAMES = PROB_NAMES + ("equity",)
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

    ``trials``: games per position (the maximum when ``stderr_target`` is
    set); ``seed``: same seed, same bits; ``truncate``: plies before the
    position is evaluated (0 = play to the end); ``variance_reduction``:
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
    ``min_trials``); ``jobs``: worker processes (None = every core);
    ``backend``: ``local`` (process pool), ``serial`` or ``ray``;
    ``address``: the Ray cluster (None = a local Ray); ``chunk``: trials per
    task; ``retries``: resubmissions of a failed Ray task."""

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
        if self.trials < 1:
            raise BgfastError("trials must be at least 1")
        if self.truncate < 0:
            raise BgfastError("truncate must be >= 0")
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
        if self.chunk < 1 or self.batch < 1:
            raise BgfastError("chunk and batch must be at least 1")
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


def _chunks(first: int, count: int, size: int):
    return [(a, min(size, first + count - a)) for a in range(first, first + count, size)]


_POOLS: dict = {}


def _local_pool(jobs: int):
    import concurrent.futures as cf
    import multiprocessing as mp

    pool = _POOLS.get(jobs)
    if pool is None:
        # fork: workers inherit the loaded kernels and tables (no re-import)
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
        if not _POOLS:
            import atexit

            atexit.register(shutdown_pools)    # before the interpreter tears the pools down
        _POOLS[jobs] = pool
    return pool


def shutdown_pools() -> None:
    """Stop the cached local worker processes."""
    for pool in _POOLS.values():
        pool.shutdown(wait=True, cancel_futures=True)
    _POOLS.clear()


def _ray_remote():
    import ray

    @ray.remote(max_retries=3, retry_exceptions=True)
    def _ray_chunk(starts, first, count, params):
        from bgfast.rollout import run_chunk as rc
        return rc(starts, first, count, params)

    return ray, _ray_chunk


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # not on Linux
        return os.cpu_count() or 1


def _ray_gather(ray, chunk, starts_ref, parts, params, retries: int):
    """Run the chunks as Ray tasks; a task that fails (an exception, a lost
    worker or node) is submitted again, up to ``retries`` times, on top of
    Ray's own retries.  Results come back in chunk order."""
    refs = [chunk.remote(starts_ref, a, n, params) for a, n in parts]
    outs = [None] * len(parts)
    tries = [0] * len(parts)
    for i in range(len(parts)):
        while outs[i] is None:
            try:
                outs[i] = ray.get(refs[i])
            except ray.exceptions.RayError:
                tries[i] += 1
                if tries[i] > retries:
                    raise
                a, n = parts[i]
                refs[i] = chunk.remote(starts_ref, a, n, params)
    return outs


def _local_gather(jobs, starts, parts, params):
    """Run the chunks on the local pool, in chunk order.  If a worker process
    dies, the pool is replaced and the whole round is run once more."""
    from concurrent.futures.process import BrokenProcessPool

    _ensure_tables()      # once, before the workers fork
    for attempt in (0, 1):
        pool = _local_pool(jobs)
        try:
            futs = [pool.submit(run_chunk, starts, a, n, params) for a, n in parts]
            return [f.result() for f in futs]
        except BrokenProcessPool:
            _POOLS.pop(jobs, None)
            pool.shutdown(wait=False, cancel_futures=True)
            if attempt:
                raise


def _run(starts, first, count, s: RolloutSettings, params):
    """Per-trial values ``[count, ncand, 6]`` and plies, in trial order."""
    jobs = s.jobs or _cores()
    backend = s.backend
    if backend == "local" and jobs == 1:
        backend = "serial"
    parts = _chunks(first, count, s.chunk if backend != "serial" else count)
    if backend == "serial":
        outs = [run_chunk(starts, a, n, params) for a, n in parts]
    elif backend == "local":
        outs = _local_gather(jobs, starts, parts, params)
    else:
        try:
            ray, chunk = _ray_remote()
        except ImportError:
            raise BgfastError("the ray backend needs Ray: pip install 'bgfast[ray]'") from None
        if not ray.is_initialized():
            ray.init(address=s.address, include_dashboard=False, log_to_driver=False)
        outs = _ray_gather(ray, chunk, ray.put(starts), parts, params, s.retries)
    vals = np.concatenate([o[0] for o in outs], axis=0)
    plies = np.concatenate([o[1] for o in outs], axis=0)
    return vals, plies


def _stats(vals: np.ndarray):
    n = vals.shape[0]
    mean = vals.mean(axis=0)
    sd = vals.std(axis=0, ddof=1) if n > 1 else np.full_like(mean, np.nan)
    return mean, sd / math.sqrt(n)


def _rollout_boards(starts: np.ndarray, s: RolloutSettings):
    """Roll out start boards together (common dice); per-trial values and plies."""
    params = s.kernel_params()
    if s.stderr_target is None:
        return _run(starts, 0, s.trials, s, params)
    vals, plies = [], []
    done = 0
    while done < s.trials:
        n = min(s.batch, s.trials - done)
        v, p = _run(starts, done, n, s, params)
        vals.append(v)
        plies.append(p)
        done += n
        allv = np.concatenate(vals)
        if done >= s.min_trials and done > 1:
            se = _stats(allv)[1][:, 5]
            if (se <= s.stderr_target).all():
                break
    return np.concatenate(vals), np.concatenate(plies)


def _result(board, vals, plies, s: RolloutSettings, label="", flip=False) -> RolloutResult:
    mean, se = _stats(vals)
    if flip:        # seen from the player who made the play (not on roll in board)
        mean = np.r_[invert(mean[:5]), -mean[5]]
        se = np.r_[se[[0, 3, 4, 1, 2]], se[5]]
    return RolloutResult(Position(board).position_id(),
                         {k: float(v) for k, v in zip(OUTPUT_NAMES, mean)},
                         {k: float(v) for k, v in zip(OUTPUT_NAMES, se)},
                         int(vals.shape[0]), s.to_dict(), float(plies.mean()), label)


def _settings(settings, kw) -> RolloutSettings:
    if "games" in kw:           # the number of games = trials
        if "trials" in kw:
            raise BgfastError("give trials or games, not both")
        kw = dict(kw)
        kw["trials"] = kw.pop("games")
    s = settings or RolloutSettings()
    return replace(s, **kw) if kw else s


def rollout(positions, settings: RolloutSettings | None = None, **kw):
    """Roll out one position (a :class:`Position` or board: returns a
    :class:`RolloutResult`) or several (a list or ``uint8[N,2,25]``: a list,
    rolled out with common dice).  Values are for the player on roll.
    Keyword arguments override fields of ``settings`` (``games`` is an alias
    of ``trials``)."""
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
    vals, plies = _rollout_boards(boards, s)
    res = [_result(boards[c], vals[:, c], plies[:, c], s) for c in range(boards.shape[0])]
    return res[0] if single else res


def rollout_plays(position, d1: int, d2: int, settings: RolloutSettings | None = None,
                  *, max_plays: int | None = None, **kw) -> list[RolloutResult]:
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
    vals, plies = _rollout_boards(boards, s)
    out = [_result(boards[c], vals[:, c], plies[:, c], s, ranked[c].play.notation, flip=True)
           for c in range(len(ranked))]
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


def rollout_opening_rolls(settings: RolloutSettings | None = None, *, position=None, **kw):
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
    vals, plies = _rollout_boards(np.ascontiguousarray(res), s)
    out = [_result(res[c], vals[:, c], plies[:, c], s, f"{a}{b}", flip=True)
           for c, (a, b) in enumerate(ALL_ROLLS)]
    return [tuple(int(x) for x in r) for r in ALL_ROLLS], out
