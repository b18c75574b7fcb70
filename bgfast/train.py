"""Training the net by TD(lambda) self-play (the ``bgfast train`` driver).

Games are played at 0-ply by the net against itself, in rounds of
``round_games`` games that are played in parallel (OpenMP) with the weights
of the round's start; the games are then learned from one after the other,
each state moving towards its lambda-return (cross-entropy gradient on the 5
outputs).  Game ``k`` uses the dice stream seeded by ``(seed, k)``, so the
weights depend only on the seed and the hyper-parameters, never on the number
of threads, and a run resumed from a checkpoint ends with the same weights as
an uninterrupted run.
"""
from __future__ import annotations

import os
import sys
import time

from . import net as _netmod

__all__ = ["train", "supervise", "STEP"]

STEP = 1024        # games between progress updates (rounded to whole rounds)


class _Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total: int, start: int, enabled: bool, stream=None):
        self.total, self.start, self.enabled = total, start, enabled
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        el = time.monotonic() - self.t0
        rate = (done - self.start) / el if el > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else 0.0
        width = 30
        fill = int(width * done / max(self.total, 1))
        self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} games "
                          f"{rate:7.0f} games/s  eta {int(eta) // 60}m{int(eta) % 60:02d}s ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def train(out, games: int, *, hidden: int = 64, seed: int = 0, alpha: float = 0.1,
          lam: float = 0.5, round_games: int = 16, threads: int | None = None,
          checkpoint_every: int = 50_000, resume: bool = False, init=None,
          progress: bool = True, stream=None) -> dict:
    """Train until ``games`` self-play games in total and write the weights to ``out``.

    ``resume``: continue the run whose checkpoint is ``out`` (seed, lambda,
    round size and net shape come from the file; ``alpha`` may change); a new
    run when ``out`` does not exist yet.
    ``init``: start from these weights (a path or :class:`bgfast.net.Net`)
    instead of random ones; a file of the previous input layout (no
    features, :data:`bgfast.net.PREVIOUS_LAYOUT`) is extended with zero
    feature weights, so training starts from exactly its strength.  Checkpoints are written to ``out`` every
    ``checkpoint_every`` games and at the end.  Returns the training state
    (also stored as ``meta["train"]`` in the file).
    """
    if games < 0:
        raise ValueError("games must be >= 0")
    if round_games < 1:
        raise ValueError("round_games must be >= 1")
    threads = threads or os.cpu_count() or 1
    if resume and os.path.exists(out):
        net = _netmod.load(out)
        st = dict(net.meta.get("train") or {})
        if "games_done" not in st:
            raise _netmod.NetFileError(f"{out} is not a training checkpoint (no training state)")
        seed, lam, round_games = int(st["seed"]), float(st["lambda"]), int(st["round_games"])
        done = int(st["games_done"])
        history = list(st.get("history", []))
        seconds = float(st.get("seconds", 0.0))
        plies = int(st.get("plies", 0))
    else:
        if init is not None:
            net = init.copy() if isinstance(init, _netmod.Net) else _netmod.load(init, previous=True)
        else:
            net = _netmod.random_net(hidden, seed)
        done, history, seconds, plies = 0, [], 0.0, 0
    step = max(1, STEP // round_games) * round_games
    ck = max(1, checkpoint_every // step) * step
    history.append({"from_game": done, "alpha": alpha})
    bar = _Progress(games, done, progress, stream)
    last_ck = done
    t_start = time.monotonic()

    def state():
        return {"seed": seed, "lambda": lam, "round_games": round_games, "games_done": done,
                "hidden": net.hidden, "history": history, "plies": plies,
                "seconds": round(seconds + time.monotonic() - t_start, 1)}

    try:
        while done < games:
            n = min(step, games - done)
            p, g = net.model.train(seed, done, n, round_games, alpha, lam, threads)
            done += int(g)
            plies += int(p)
            bar.update(done)
            if done - last_ck >= ck:
                net.meta["train"] = state()
                _netmod.save(net, out)
                last_ck = done
    finally:
        bar.close()
    net.meta["train"] = state()
    _netmod.save(net, out)
    return net.meta["train"]


def supervise(out, init, games: int, *, plies: int = 1, seed: int = 1000, alpha: float = 0.01,
              epochs: int = 2, progress: bool = True, stream=None) -> dict:
    """Supervised phase: positions of ``games`` 0-ply self-play games of the
    ``init`` net (dice streams ``(seed, k)``) are evaluated by the same net at
    ``plies`` look-ahead (bear-off databases included); the net is then
    trained towards these targets for ``epochs`` passes in a seeded order and
    written to ``out``.  Deterministic for given arguments."""
    import numpy as np

    if games < 1 or epochs < 1 or plies < 1:
        raise ValueError("games, epochs and plies must be >= 1")
    net = init.copy() if isinstance(init, _netmod.Net) else _netmod.load(init)
    t0 = time.monotonic()
    pos = net.model.selfplay_states(seed, 0, games)
    bar = _Progress(len(pos), 0, progress, stream)
    targets = np.empty((len(pos), 5))
    step = 4096
    for i in range(0, len(pos), step):
        targets[i:i + step] = net.evaluate_plies(pos[i:i + step], plies)
        bar.update(i + len(pos[i:i + step]))
    bar.close()
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        order = rng.permutation(len(pos))
        for i in range(0, len(order), 65536):
            idx = order[i:i + 65536]
            net.model.learn(np.ascontiguousarray(pos[idx]), np.ascontiguousarray(targets[idx]),
                            alpha)
    st = {"games": games, "positions": int(len(pos)), "plies": plies, "seed": seed,
          "alpha": alpha, "epochs": epochs, "seconds": round(time.monotonic() - t0, 1)}
    net.meta.setdefault("supervised", []).append(st)
    _netmod.save(net, out)
    return st
