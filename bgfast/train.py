"""Training the net by TD(lambda) self-play (the ``bgfast train`` driver).

Games are played at 0-ply by the net against itself, in rounds of
``round_games`` games that are played in parallel (OpenMP) with the weights
of the round's start; the games are then learned from one after the other,
each state moving towards its lambda-return (cross-entropy gradient on the 5
outputs).  Game ``k`` uses the dice stream seeded by ``(seed, k)``, so the
weights depend only on the seed and the hyper-parameters, never on the number
of threads, and a run resumed from a checkpoint ends with the same weights as
an uninterrupted run.

:func:`supervise` trains on rollout labels; :func:`fit_pubeval_calibration`
fits the map from pubeval's score to probabilities (``calibration.json``).
"""
from __future__ import annotations

import os
import time

import numpy as np

from . import _evaluate, _rollout
from . import net as _netmod
from ._files import check_writable
from ._progress import Progress
from .evaluate import POLICY_PUBEVAL, PROB_NAMES, invert
from .position import PositionClass, classify_boards

__all__ = ["train", "supervise", "fit_pubeval_calibration", "STEP"]

STEP = 1024        # games between progress updates (rounded to whole rounds)


def train(out, games: int, *, hidden: int = 64, seed: int = 0, alpha: float = 0.1,
          lam: float = 0.5, round_games: int = 16, threads: int | None = None,
          checkpoint_every: int = 50_000, resume: bool = False, init=None,
          progress: bool = True) -> dict:
    """Train until ``games`` self-play games in total and write the weights to ``out``.

    ``resume``: continue the run whose checkpoint is ``out`` (seed, lambda,
    round size and net shape come from the file; ``alpha`` may change); a new
    run when ``out`` does not exist yet.
    ``init``: start from these weights (a path or :class:`bgfast.net.Net`)
    instead of random ones; a file of the previous input layout (no
    features, :data:`bgfast.net.PREVIOUS_LAYOUT`) is extended with zero
    feature weights, so training starts from exactly its strength.  Checkpoints are written to ``out`` every
    ``checkpoint_every`` games and at the end.  Returns the training state
    (also stored as ``meta["train"]`` in the file).  ``progress``: a bar on
    a terminal's stderr (:class:`bgfast._progress.Progress`).  ``out`` is
    checked to be writable before any game is played.
    """
    if games < 0:
        raise ValueError("games must be >= 0")
    if round_games < 1:
        raise ValueError("round_games must be >= 1")
    threads = threads or os.cpu_count() or 1
    check_writable(out, "weights file")
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
    bar = Progress(games, unit="game", initial=done, quiet=not progress)
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
            bar(done)
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
              epochs: int = 2, progress: bool = True) -> dict:
    """Supervised phase: positions of ``games`` 0-ply self-play games of the
    ``init`` net (dice streams ``(seed, k)``) are evaluated by the same net at
    ``plies`` look-ahead (bear-off databases included); the net is then
    trained towards these targets for ``epochs`` passes in a seeded order and
    written to ``out``.  Deterministic for given arguments."""
    import numpy as np

    if games < 1 or epochs < 1 or plies < 1:
        raise ValueError("games, epochs and plies must be >= 1")
    check_writable(out, "weights file")
    net = init.copy() if isinstance(init, _netmod.Net) else _netmod.load(init)
    t0 = time.monotonic()
    pos = net.model.selfplay_states(seed, 0, games)
    bar = Progress(len(pos), unit="position", quiet=not progress)
    targets = np.empty((len(pos), 5))
    step = 4096
    for i in range(0, len(pos), step):
        targets[i:i + step] = net.evaluate_plies(pos[i:i + step], plies)
        bar(i + len(pos[i:i + step]))
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


# ---------------------------------------------------------------------------
# pubeval's calibration
# ---------------------------------------------------------------------------

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
    feats, outs, contact = [], [], []
    for first in range(0, int(games), batch):
        n = min(batch, int(games) - first)
        boards, parity, gid, results, winner = _rollout.selfplay_samples(
            n, int(seed), POLICY_PUBEVAL, first)
        same = parity == winner[gid]
        outs.append(np.where(same[:, None], results[gid], invert(results[gid])))
        feats.append(_evaluate.calibration_features(boards))
        contact.append(classify_boards(boards) == PositionClass.CONTACT)
    F, Y, C = np.concatenate(feats), np.concatenate(outs), np.concatenate(contact)
    doc = {"games": int(games), "seed": int(seed), "policy": "pubeval",
           "features": list(_evaluate.CAL_FEATURES),
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
