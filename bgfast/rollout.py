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
variance.  A level searching n >= 1 plies (``hard``, ``expert``, ``net1``
.. ``net3``) measures luck as gnubg does: each roll's 0-ply best play,
valued n - 1 plies deep (by the evaluator at 0 plies, else by the level's
net), and it searches only the roll thrown, so it plays the same games with
and without variance reduction.  Its searches keep an evaluation cache in
each worker (``bgfast._net.set_cache_size``), which changes the speed, never
the bits.

Presets (:data:`PRESETS`, :meth:`RolloutSettings.from_preset`): ``gnubg``
(0-ply, 1296 games to the end) and, in the spirit of eXtreme Gammon's
Roller levels, ``roller``, ``roller+`` and ``roller++``.

Cubeful rollouts (``RolloutSettings(cube=CubeContext(...))``): the
compiled loop plays the cube.  Before each roll the side on roll asks its
0-ply cube decision (Janowski's model of :mod:`bgfast.cube` on the
settings' evaluator's probabilities, the exact money equities of the
two-sided bear-off table where it has them) at the rollout's cube and
score as they evolve in the game; the opponent takes, beavers (money, with
beavers) or passes as that decision says, and a pass ends the trial at the
value before the double (its cubeless result is then the evaluation).
The checker plays stay the policy's.  Each trial's cubeful result is the
money equity in units of the starting cube (the Jacoby rule: a game with a
centred cube counts no gammons) or the MWC at the match score (EMG beside
it); variance reduction subtracts the luck of every roll in cubeful 0-ply
values, truncation ends with the cubeful 0-ply value and the bear-off early
stop with the exact cubeful money value (in a match, the cubeful 0-ply
value of the exact probabilities).  :func:`rollout_cube` rolls out no
double and double/take with common dice.  Without a context (``cube=None``)
rollouts are cubeless, and say so.
"""
from __future__ import annotations

import json
from collections import deque
from contextlib import closing
from dataclasses import asdict, dataclass, replace

import numpy as np

from . import _rollout
from ._workers import WorkerError, cores, ordered_map
from .cube import CubeContext, CubeDecision, valued_decisions
from .errors import (BgfastError, InvalidCubeError, InvalidPositionError, check_flag, check_number,
                     check_seed, check_whole)
from .evaluate import (EVAL_COMPOSITE, EVAL_PUBEVAL, POLICY_EVAL, POLICY_PUBEVAL, PROB_NAMES,
                       ensure_tables as _ensure_tables, invert,
                       race_points as _race_points, use_race_points as _use_race_points)
from .movegen import ALL_ROLLS
from .position import Position, as_board, as_boards

__all__ = ["RolloutSettings", "Preset", "PRESETS", "RolloutResult", "CubeRolloutResult", "rollout", "rollout_plays",
           "rollout_cube", "LEVEL_POLICIES",
           "policy_names", "evaluator_names",
           "rollout_opening_rolls", "run_chunk", "OUTPUT_NAMES", "POLICIES", "BACKENDS",
           "KERNEL_EVALUATORS", "register_kernel_evaluator", "MAX_TRIALS", "MAX_TRUNCATE", "MAX_LUCK_PLAYS",
           "DEFAULT_LUCK_PLAYS",
           "STATS_BLOCK"]

OUTPUT_NAMES = PROB_NAMES + ("equity",)
#: The fewest trials of a Ray task that :func:`_ray_chunk_size` makes.
MIN_RAY_CHUNK = 36
POLICIES = {"pubeval": POLICY_PUBEVAL, "evaluator": POLICY_EVAL}
#: computer levels (bgfast.levels) as rollout policies: name -> kernel policy
#: slot, installed from bgfast._net on first use in each process
LEVEL_POLICIES = {"beginner": 2, "easy": 3, "medium": 4, "net": 5, "net0": 5,
                  "hard": 6, "net1": 6, "expert": 7, "net2": 7, "net3": 8}
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
#: Most candidates of a pruned luck play (``RolloutSettings.luck_plays``).
MAX_LUCK_PLAYS = 64
#: The luck plays of a 0-ply net policy with variance reduction when
#: ``RolloutSettings.luck_plays`` is None: the net values the 6 plays
#: pubeval scores best for each roll's luck (docs/performance.md, "Pruned
#: luck plays": about 2.1x gnubg's scheme at equal standard error).
DEFAULT_LUCK_PLAYS = 6
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


def _net_level(name: str) -> bool:
    """Whether policy ``name`` is a computer level played by the net."""
    if name in POLICIES:
        return False
    from .levels import NET, get_level

    return get_level(name).kind == NET


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
    ``beginner`` .. ``expert``; ``net1`` .. ``net3`` the net at 1 .. 3
    plies), which plays exactly as in games and duels,
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
    on after a local worker died, or a Ray task is resubmitted; ``cube``:
    a :class:`bgfast.cube.CubeContext` (or anything
    :meth:`~bgfast.cube.CubeContext.of` takes) for a cubeful rollout at
    that cube and score, seen from the player on roll in the position
    rolled out (None: cubeless), with ``stderr_target`` then on the
    cubeful equity (money) or EMG (match); ``luck_plays``: with variance
    reduction and a net level as the policy, the luck play of each roll is
    the net's best of the ``luck_plays`` plays (1 .. :data:`MAX_LUCK_PLAYS`)
    that pubeval scores best, instead of the best of every play (0, gnubg's
    scheme): fewer evaluations a ply, a little more variance per game, the
    same expectation.  None (the default) takes :data:`DEFAULT_LUCK_PLAYS`
    for a net level searching 0 plies with variance reduction, where the
    pruned plays reach a given standard error about twice as fast, and 0
    otherwise: an n-ply policy finds its luck plays in its evaluation cache,
    and pruning them costs it time and variance
    (:attr:`effective_luck_plays`)."""

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
    cube: CubeContext | None = None
    luck_plays: int | None = None

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)

        put("trials", check_whole("trials", self.trials, 1, MAX_TRIALS, span=f"1..{MAX_TRIALS:.0e}"))
        put("truncate", check_whole("truncate", self.truncate, 0, MAX_TRUNCATE))
        put("seed", check_seed(self.seed))
        put("min_trials", check_whole("min_trials", self.min_trials, 0))
        put("batch", check_whole("batch", self.batch, 1))
        put("chunk", check_whole("chunk", self.chunk, 1, MAX_CHUNK))
        put("retries", check_whole("retries", self.retries, 0))
        if self.jobs is not None:
            put("jobs", check_whole("jobs", self.jobs, 1))
        if self.luck_plays is not None:
            put("luck_plays", check_whole("luck_plays", self.luck_plays, 0, MAX_LUCK_PLAYS))
        for name in ("variance_reduction", "quasi_random", "early_stop"):
            put(name, check_flag(name, getattr(self, name)))
        if self.stderr_target is not None:
            put("stderr_target", check_number("stderr_target", self.stderr_target, 0, lo_open=True))
        if self.policy not in POLICIES and self.policy not in LEVEL_POLICIES:
            raise BgfastError(f"unknown policy {self.policy!r}; choose from {', '.join(policy_names())}")
        if self.evaluator not in KERNEL_EVALUATORS and self.evaluator != "net":
            raise BgfastError(f"evaluator {self.evaluator!r} has no rollout kernel; choose from "
                              f"{', '.join(evaluator_names())}")
        if self.backend not in BACKENDS:
            raise BgfastError(f"unknown backend {self.backend!r}; choose from {', '.join(BACKENDS)}")
        if self.cube is not None:
            object.__setattr__(self, "cube", CubeContext.of(self.cube))
        if self.luck_plays is not None:
            if self.luck_plays and not (self.variance_reduction and _net_level(self.policy)):
                raise BgfastError("luck_plays needs variance reduction and a net level as the "
                                  f"policy (not {self.policy!r})")

    @property
    def effective_luck_plays(self) -> int:
        """The luck plays the rollout uses: ``luck_plays``, or for None
        :data:`DEFAULT_LUCK_PLAYS` with variance reduction and a net level
        searching 0 plies as the policy, else 0 (every play, gnubg's scheme)."""
        if self.luck_plays is not None:
            return self.luck_plays
        if self.variance_reduction and _net_level(self.policy):
            from .levels import get_level

            if get_level(self.policy).plies == 0:
                return DEFAULT_LUCK_PLAYS
        return 0

    @classmethod
    def from_preset(cls, name: str, **kw) -> "RolloutSettings":
        """The settings of preset ``name`` (:data:`PRESETS`), with the fields
        given in ``kw`` overriding the preset's."""
        if name not in PRESETS:
            raise BgfastError(f"unknown rollout preset {name!r}; choose from {', '.join(PRESETS)}")
        return cls(**{**PRESETS[name].fields(), **kw})

    def kernel_params(self) -> dict:
        params = _rollout.make_params(self.seed, self.truncate, self.variance_reduction,
                                      self.quasi_random, _policy_slot(self.policy),
                                      _evaluator_slot(self.evaluator), self.early_stop,
                                      self.effective_luck_plays)
        # names, so that a worker process installs the same kernels
        params["policy_name"] = self.policy
        params["evaluator_name"] = self.evaluator
        params["race_points"] = _race_points()
        return params

    def to_dict(self) -> dict:
        d = asdict(replace(self, cube=None))
        d["cube"] = "cubeless" if self.cube is None else self.cube.to_dict()
        d["luck_plays"] = self.effective_luck_plays
        return d


@dataclass(frozen=True)
class Preset:
    """A named rollout setting (:data:`PRESETS`): the trials, the truncation
    (plies, 0 = none), the policy (a computer level of
    :data:`LEVEL_POLICIES`), variance reduction, quasi-random dice and the
    bear-off handling (``early_stop``: exact values once both sides are in
    the two-sided bear-off table) and the luck plays (None: as
    :attr:`RolloutSettings.effective_luck_plays` chooses).  The luck,
    truncation and bear-off values are the net's with the exact databases
    (``evaluator="net"``)."""

    name: str
    description: str
    trials: int
    truncate: int
    policy: str
    variance_reduction: bool = True
    quasi_random: bool = True
    early_stop: bool = True
    luck_plays: int | None = None

    @property
    def plies(self) -> int:
        """The plies the policy searches."""
        from .levels import get_level

        return get_level(self.policy).plies

    @property
    def move_filters(self) -> tuple:
        """The policy's move filters, one ``(kept plays, equity window)`` per
        search level after 0 plies (:func:`bgfast._net.move_filters`): empty
        for a 0-ply policy."""
        from . import _net

        (n0, w0), (n1, w1) = _net.move_filters()
        return tuple([(n0, w0)] + [(n1, w1)] * (self.plies - 1)) if self.plies else ()

    def fields(self) -> dict:
        """The :class:`RolloutSettings` fields the preset sets."""
        return {"trials": self.trials, "truncate": self.truncate, "policy": self.policy,
                "variance_reduction": self.variance_reduction,
                "quasi_random": self.quasi_random, "early_stop": self.early_stop,
                "evaluator": "net", "luck_plays": self.luck_plays}


#: Named rollout settings users know: gnubg's default rollout and settings in
#: the spirit of eXtreme Gammon's Roller levels as published (trials,
#: truncation, the plies of the checker play).  ``RolloutSettings.from_preset``
#: and ``bgfast rollout --preset NAME``; explicit settings override the preset's.
PRESETS = {p.name: p for p in (
    Preset("gnubg", "gnubg's default rollout: 0-ply net play, 1296 games to the end, "
                    "variance reduction with every play valued for each roll's luck, "
                    "quasi-random dice", 1296, 0, "net", luck_plays=0),
    Preset("roller", "XG Roller-like: 42 games truncated at 5 plies, 1-ply play", 42, 5, "net1"),
    Preset("roller+", "XG Roller+-like: 360 games truncated at 7 plies, 2-ply play", 360, 7,
           "net2"),
    Preset("roller++", "XG Roller++-like: 360 games truncated at 5 plies, 3-ply play", 360, 5,
           "net3"),
)}


@dataclass(frozen=True)
class RolloutResult:
    """Means of the 5 probabilities and the cubeless equity for the player on
    roll in ``position``, with standard errors and the number of games.

    A cubeful rollout adds ``cubeful`` to ``mean`` and ``stderr`` (money:
    the cubeful equity in units of the starting cube; match: the EMG) and,
    in a match, ``mwc``; ``cube`` is then the context's
    :meth:`~bgfast.cube.CubeContext.to_dict` (seen from the player the
    values are for), None for a cubeless rollout."""

    position: str
    mean: dict
    stderr: dict
    games: int
    settings: dict
    average_plies: float
    label: str = ""
    cube: dict | None = None

    @property
    def probs(self) -> tuple:
        return tuple(self.mean[k] for k in PROB_NAMES)

    @property
    def equity(self) -> float:
        """The cubeless equity."""
        return self.mean["equity"]

    @property
    def cubeful(self) -> float | None:
        """The cubeful equity (money) or EMG (match); None when cubeless."""
        return self.mean.get("cubeful")

    @property
    def mwc(self) -> float | None:
        """The cubeful match winning chance (None: money or cubeless)."""
        return self.mean.get("mwc")

    @property
    def value(self) -> float:
        """What the rollout ranks by: the cubeful value, else the cubeless equity."""
        return self.equity if self.cubeful is None else self.cubeful

    def to_dict(self) -> dict:
        return {"position": self.position, "label": self.label, "games": self.games,
                "mean": self.mean, "stderr": self.stderr, "average_plies": self.average_plies,
                "policy": self.settings["policy"],
                "cube": "cubeless" if self.cube is None else self.cube,
                "settings": self.settings}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def __str__(self):
        m, s = self.mean, self.stderr
        cols = " ".join(f"{k}={m[k]:.4f}±{s[k]:.4f}" for k in OUTPUT_NAMES)
        if self.cube is None:
            cols += " (cubeless)"
        else:
            cols += "".join(f" {k}={m[k]:.4f}±{s[k]:.4f}" for k in ("cubeful", "mwc") if k in m)
        return f"{self.label or self.position}: {cols} games={self.games}"


@dataclass(frozen=True)
class CubeRolloutResult:
    """A cube-decision rollout (:func:`rollout_cube`): no double and
    double/take rolled out with common dice.

    ``decision`` is a :class:`bgfast.cube.CubeDecision` whose no double,
    double/take (money: in units of the cube before the double) and
    double/pass values and proper action are the rollout's (its take
    points and gammon prices are Janowski's on the no-double rollout's
    probabilities); ``stderr`` the standard errors of ``no_double`` and
    ``double_take`` (and in a match of ``mwc_no_double`` and
    ``mwc_double_take``; double/pass is exact); ``rollouts`` the two
    :class:`RolloutResult` (labels ``no double``, ``double/take``)."""

    position: str
    decision: CubeDecision
    stderr: dict
    games: int
    rollouts: tuple
    settings: dict

    @property
    def action(self):
        return self.decision.action

    @property
    def action_text(self) -> str:
        return self.decision.action_text

    def to_dict(self) -> dict:
        d = self.decision.to_dict()
        d.update({"position": self.position, "games": self.games, "stderr": self.stderr,
                  "rollouts": [r.to_dict() for r in self.rollouts], "settings": self.settings})
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def describe(self) -> str:
        """gnubg-like text: the decision with the standard errors of the rolled-out values."""
        se = self.stderr
        lines = self.decision.describe(f"rollout, {self.games} games")
        return (lines + f"\nStandard errors: no double {se['no_double']:.4f}, "
                f"double/take {se['double_take']:.4f}")


# ------------------------------------------------------------------ workers

def run_chunk(starts: np.ndarray, first: int, count: int, params: dict):
    """Trials ``first .. first+count-1`` of every start board (a task)."""
    _ensure_tables()
    _use_race_points(params.get("race_points", 0))
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


@dataclass(frozen=True)
class _Cube:
    """The cube side of one rollout call: the kernel's ``params["cube"]``
    and how each candidate's cubeful column is reported: ``report`` the
    context of the player the values are for, ``flip`` whether he is not
    on roll in the candidate's board."""

    params: dict
    report: CubeContext
    flip: bool

    @classmethod
    def of(cls, report: CubeContext, n: int, *, flip: bool = False, contexts=None,
           skip=None) -> "_Cube":
        """``n`` candidates valued for ``report``'s player: their starting
        contexts (default ``report``, flipped with ``flip``), money results
        in units of ``report``'s cube."""
        if contexts is None:
            contexts = [report.flipped() if flip else report] * n
        k = report.kernel_constants()
        params = _rollout.cube_params(np.array([c.kernel_row() for c in contexts]),
                                      np.full(n, float(report.cube)),
                                      np.zeros(n) if skip is None else skip, k["pre"],
                                      k["post"], k["eff"], k["eps"], k["tol"])
        return cls(params, report, flip)

    def stop_scale(self) -> float:
        """The cubeful column's standard error times this is the reported one's."""
        if self.report.is_money:
            return 1.0
        lose, win = self.report.cube_mwcs()
        return 2.0 / (win - lose)

    def values(self, mean: float, se: float) -> tuple[dict, dict]:
        """The reported cubeful means and standard errors of a candidate's
        cubeful column (the starter's value)."""
        money = self.report.is_money
        if self.flip:
            mean = -mean if money else 1.0 - mean
        if money:
            return {"cubeful": mean}, {"cubeful": se}
        return ({"cubeful": self.report.emg(mean), "mwc": mean},
                {"cubeful": se * self.stop_scale(), "mwc": se})


def _rollout_boards(starts: np.ndarray, s: RolloutSettings, progress=None,
                    cube: _Cube | None = None) -> _Moments:
    """Roll out start boards together (common dice): the statistics of
    their trials (cubeful with ``cube``).  With ``s.stderr_target``, stop
    at the first multiple of ``s.batch`` trials (at least ``s.min_trials``)
    where every board's equity (cubeful with ``cube``) has that standard
    error.  ``progress(trials done, s.trials)`` after every chunk."""
    params = s.kernel_params()
    col, scale = 5, 1.0
    if cube is not None:
        params["cube"] = cube.params
        col, scale = 6, cube.stop_scale()
    acc = _Moments()
    batch = s.batch if s.stderr_target is not None else None
    with closing(_trial_stream(starts, s, params, batch)) as stream:
        for vals, plies in stream:
            acc.add(vals, plies)
            done = acc.trials
            if progress is not None:
                progress(done, s.trials)
            if (batch and (done % batch == 0 or done == s.trials) and done >= s.min_trials
                    and done > 1 and (acc.stats()[2][:, col] * scale <= s.stderr_target).all()):
                break
    return acc


def _results(boards, acc: _Moments, s: RolloutSettings, labels=None, flip=False,
             cube: _Cube | None = None) -> list:
    """The :class:`RolloutResult` of each board from the statistics of its trials."""
    n, means, ses, plies = acc.stats()
    return [_result(boards[c], n, means[c], ses[c], plies[c], s,
                    labels[c] if labels else "", flip, cube) for c in range(len(boards))]


def _result(board, n, mean, se, plies, s: RolloutSettings, label="", flip=False,
            cube: _Cube | None = None) -> RolloutResult:
    m = {k: float(v) for k, v in zip(OUTPUT_NAMES, _seen(mean[:6], flip))}
    e = {k: float(v) for k, v in zip(OUTPUT_NAMES, _seen(se[:6], flip, se=True))}
    ctx = None
    if cube is not None:
        cm, ce = cube.values(float(mean[6]), float(se[6]))
        m.update(cm)
        e.update(ce)
        ctx = cube.report.to_dict()
    return RolloutResult(Position(board).position_id(), m, e, int(n), s.to_dict(), float(plies),
                         label, ctx)


def _seen(v: np.ndarray, flip: bool, se: bool = False) -> np.ndarray:
    """Probabilities and equity (or their standard errors) seen from the
    player who made the play (not on roll in the board) with ``flip``."""
    if not flip:
        return v
    if se:
        return np.r_[v[[0, 3, 4, 1, 2]], v[5]]
    return np.r_[invert(v[:5]), -v[5]]


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
    rolled out with common dice).  Values are for the player on roll (with
    ``settings.cube`` cubeful, at that context for every position).
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
    cube = None if s.cube is None else _Cube.of(s.cube, boards.shape[0])
    res = _results(boards, _rollout_boards(boards, s, progress, cube), s, cube=cube)
    return res[0] if single else res


def rollout_plays(position, d1: int, d2: int, settings: RolloutSettings | None = None,
                  *, max_plays: int | None = None, progress=None, **kw) -> list[RolloutResult]:
    """Roll out the legal plays of ``position`` for d1-d2 with common dice,
    best first; values are for the player making the play (cubeful at
    ``settings.cube``, his context, when given: ranked by the cubeful value).
    ``max_plays`` keeps the best plays by the 0-ply ranking (cubeful with
    a context)."""
    from .evaluate import rank_plays

    s = _settings(settings, kw)
    pos = position if isinstance(position, Position) else Position(as_board(position))
    ranked = rank_plays(pos, d1, d2, plies=0, cube=s.cube)
    if max_plays:
        ranked = ranked[:max_plays]
    if not ranked:
        return []
    boards = np.ascontiguousarray(np.stack([r.play.position.board for r in ranked]))
    cube = None if s.cube is None else _Cube.of(s.cube, boards.shape[0], flip=True)
    out = _results(boards, _rollout_boards(boards, s, progress, cube), s,
                   [r.play.notation for r in ranked], flip=True, cube=cube)
    return sorted(out, key=lambda r: -r.value)


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
    cube = None if s.cube is None else _Cube.of(s.cube, res.shape[0], flip=True)
    out = _results(res, _rollout_boards(res, s, progress, cube), s,
                   [f"{a}{b}" for a, b in ALL_ROLLS], flip=True, cube=cube)
    return [tuple(int(x) for x in r) for r in ALL_ROLLS], out


def rollout_cube(position, settings: RolloutSettings | None = None, *, progress=None,
                 **kw) -> CubeRolloutResult:
    """The cube decision of the player on roll in ``position`` at
    ``settings.cube`` (default: money, centred cube) by rollout, as gnubg's
    cube rollout makes it: no double (the first roll played without a cube
    decision) and double/take (the cube doubled, owned by the taker) rolled
    out with common dice, double/pass exact.  Money values are in units of
    the cube before the double; at a match score the MWCs and their EMG.
    Raises :class:`InvalidCubeError` where the player on roll may not
    double (the opponent owns the cube, the Crawford game, a dead cube)."""
    s = _settings(settings, kw)
    ctx = s.cube if s.cube is not None else CubeContext()
    s = replace(s, cube=ctx)
    if not ctx.can_double:
        raise InvalidCubeError(f"the player on roll may not double ({ctx.describe()})")
    pos = position if isinstance(position, Position) else Position(as_board(position))
    boards = np.ascontiguousarray(np.stack([pos.board, pos.board]))
    cube = _Cube.of(ctx, 2, contexts=[ctx, ctx.doubled()], skip=np.array([1, 0]))
    nd, dt = _results(boards, _rollout_boards(boards, s, progress, cube), s,
                      ["no double", "double/take"], cube=cube)
    key = "cubeful" if ctx.is_money else "mwc"
    dec = valued_decisions(boards[:1], np.array([nd.probs]), ctx, [nd.mean[key]],
                           [dt.mean[key]]).decision(0)
    se = {"no_double": nd.stderr["cubeful"], "double_take": dt.stderr["cubeful"]}
    if not ctx.is_money:
        se.update(mwc_no_double=nd.stderr["mwc"], mwc_double_take=dt.stderr["mwc"])
    return CubeRolloutResult(pos.position_id(), dec, se, nd.games, (nd, dt), s.to_dict())
