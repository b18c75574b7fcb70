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

import hashlib
import json
import math
import os
import time
import zipfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from . import _evaluate, _rollout
from . import net as _netmod
from ._files import atomic_open, check_writable
from ._progress import Progress
from .errors import BgfastError, OutputPathError, check_number, check_seed, check_whole
from .evaluate import POLICY_PUBEVAL, PROB_NAMES, invert
from .position import PositionClass, classify_boards

__all__ = ["train", "supervise", "fit_pubeval_calibration", "STEP", "fit", "FitSettings",
           "NET_OF_CLASS", "NET_NAMES", "net_of_class", "nets_of_rows", "loss_and_grad", "label_metrics", "validation_mask",
           "checkpoint_path"]

STEP = 1024        # games between progress updates (rounded to whole rounds)



def train(out, games: int, *, hidden: int = 64, seed: int = 0, alpha: float = 0.1,
          lam: float = 0.5, round_games: int = 16, threads: int | None = None,
          checkpoint_every: int = 50_000, resume: bool = False, init=None,
          features=None, progress: bool = True) -> dict:
    """Train until ``games`` self-play games in total and write the weights to ``out``.

    ``resume``: continue the run whose checkpoint is ``out`` (seed, lambda,
    round size and net shape come from the file; ``alpha`` may change); a new
    run when ``out`` does not exist yet.
    ``init``: start from these weights (a path or :class:`bgfast.net.Net`)
    instead of random ones; a file of the previous input layout (no
    features, :data:`bgfast.net.PREVIOUS_LAYOUT`) is extended with zero
    feature weights, so training starts from exactly its strength.
    ``features``: feature groups (names or a mask, :data:`bgfast.net.GROUPS`)
    the net gets in a new run: ``init`` is widened with zero weights on them
    (:func:`bgfast.net.widen`), a random net has them from the start; a
    resumed run keeps the groups of its checkpoint.  Checkpoints are written to ``out`` every
    ``checkpoint_every`` games and at the end.  Returns the training state
    (also stored as ``meta["train"]`` in the file).  ``progress``: a bar on
    a terminal's stderr (:class:`bgfast._progress.Progress`).  ``out`` is
    checked to be writable before any game is played.
    """
    games = check_whole("games", games, 0)
    round_games = check_whole("round_games", round_games, 1)
    hidden = check_whole("hidden", hidden, 1, _netmod.MAX_HIDDEN)
    seed = check_seed(seed)
    alpha = check_number("the learning rate alpha", alpha, 0, lo_open=True)
    lam = check_number("lambda", lam, 0, 1)
    threads = threads or os.cpu_count() or 1
    groups = _netmod.group_mask(features)
    check_writable(out, "weights file")
    if not resume and os.path.exists(out):
        raise OutputPathError(f"{out} exists; give resume (--resume) to continue the training "
                              "run it holds, or choose another file")
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
            net = _netmod.widen(net, groups) if groups & ~net.groups else net
        else:
            net = _netmod.random_net(hidden, seed, groups=groups)
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
    games, epochs = check_whole("games", games, 1), check_whole("epochs", epochs, 1)
    plies = check_whole("plies", plies, 1, 3)
    seed = check_seed(seed)
    alpha = check_number("the learning rate alpha", alpha, 0, lo_open=True)
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
# supervised training on rollout labels (bgfast.traindata)
# ---------------------------------------------------------------------------
#
# The net of each training class: bgfast._net values contact positions with
# net 0 and race positions with net 1, and crashed positions with net 2 in a
# set of three nets (with net 0 in a set of two).  Bear-off positions (every
# checker of both sides in its home board) are valued by the bear-off tables
# whenever the evaluator has them, so they are left out of the training.

#: The kernel net (``w1[k]`` ...) that values each class of
#: :data:`bgfast.traindata.CLASSES` in a set of two nets (:func:`net_of_class`).
NET_OF_CLASS = {"contact": 0, "crashed": 0, "race": 1}
#: The names of the kernel nets, by index.
NET_NAMES = _netmod.NET_NAMES


def net_of_class(nets: int = 2) -> dict:
    """The kernel net that values each class in a set of ``nets`` nets (in a
    set with plan nets, the contact class's first net: the others follow its
    plan band, :func:`nets_of_rows`)."""
    return {**NET_OF_CLASS, "crashed": 2} if nets > 2 else dict(NET_OF_CLASS)


def nets_of_rows(boards, classes, nets: int) -> np.ndarray:
    """The kernel net that values each labelled position: its class's
    (:func:`net_of_class`), and in a set with plan nets (and a crashed net
    per side crashed) each contact and crashed position's net by the
    kernel's rule (``bgfast._net.nets_of``: its plan band, the side crashed)."""
    from . import _net
    from .traindata import CLASSES

    m = net_of_class(nets)
    out = np.array([m[c] for c in CLASSES], dtype=np.int64)[np.asarray(classes, dtype=np.int64)]
    if nets >= _netmod.PLAN_NETS:
        rows = np.flatnonzero(np.asarray(classes) != CLASSES.index("race"))
        out[rows] = _net.nets_of(np.ascontiguousarray(boards[rows], dtype=np.uint8), nets)
    return out


#: The weightings of the loss (see :func:`loss_and_grad`).
WEIGHTINGS = ("plain", "stderr")
#: The suffix of a supervised run's checkpoint file, beside its weights file.
CHECKPOINT_SUFFIX = ".ckpt"
_CKPT_VERSION = 1
_P = ("w1", "b1", "w2", "b2")


@dataclass(frozen=True)
class FitSettings:
    """The settings of :func:`fit`.

    ``init``: ``"shipped"`` (fine-tune the shipped net), ``"random"`` (small
    seeded random weights of ``hidden`` units) or a weights file path.
    ``classes``: the training classes whose labels are used; the nets they
    map to (:func:`net_of_class`) are trained, the other nets are kept as
    ``init`` has them.  ``l2`` penalises the squared distance of the weights
    from zero (``l2_anchor="zero"``) or from the initial weights
    (``"init"``: a fine-tuned net stays near the one it starts from).
    ``weighting``: ``"plain"`` or ``"stderr"`` (each
    output's term weighted by ``1 / (stderr**2 + eps)``, scaled to mean 1 on
    the training rows).  ``val_fraction`` of the positions (chosen by
    :func:`validation_mask`, seeded) is held out; training stops after
    ``patience`` epochs without a lower validation loss (the weights of the
    best epoch are kept) or after ``epochs`` epochs.  ``features``: feature
    groups (comma-separated names of :data:`bgfast.net.GROUPS`) added to
    ``init``'s net with zero weights (:func:`bgfast.net.widen`) before
    training; ``widen_to``: the hidden units to give ``init``'s net
    (:func:`bgfast.net.add_hidden`, seeded by ``seed``; 0 keeps its own);
    ``crashed_net``: give ``init``'s net a crashed net, a copy of its
    contact net (:func:`bgfast.net.add_crashed`), so that the crashed
    positions train a net of their own; ``plan_nets``: give it the contact
    plan nets (:func:`bgfast.net.add_plan`: copies of its contact net, and
    a crashed net if it has none), so that each plan band's contact
    positions train a net of their own (the kernel's ``net_of`` decides
    which net a position belongs to); ``crashed_sides``: give it a crashed
    net per side crashed (:func:`bgfast.net.add_sides`: crashed-other, a
    copy of its crashed net, and the plan nets if it has none), so that the
    crashed positions whose side on roll is crashed and those where only its
    opponent is train a net each.  ``keep_shape``: each trained net
    keeps reading only what it reads at the start (its hidden units,
    :attr:`bgfast._net.Model.read_hidden`, and its feature groups,
    :attr:`~bgfast._net.Model.read_groups`): the gradient of the units and
    group inputs it does not read is held at zero, so they stay zero and the
    net costs what it cost (the shipped race net, 128 units and no group in
    a file of 256-unit nets), but for the groups of ``features``, which it
    learns; it cannot be combined with ``widen_to``.
    ``class_weights``: ``"CLASS=W[,CLASS=W]"``, each class's
    rows weighted by W in the training loss (1 for the classes not named;
    times the stderr weights with ``weighting="stderr"``), as if its
    labels were W times as many; the validation loss that stops the run is
    weighted by class alike."""

    epochs: int = 30
    batch: int = 256
    lr: float = 1e-3
    l2: float = 0.0
    l2_anchor: str = "zero"
    weighting: str = "plain"
    eps: float = 1e-4
    val_fraction: float = 0.1
    patience: int = 4
    seed: int = 0
    init: str = "shipped"
    hidden: int = 128
    classes: tuple = ("contact", "crashed", "race")
    features: str = ""
    class_weights: str = ""
    widen_to: int = 0
    crashed_net: bool = False
    plan_nets: bool = False
    crashed_sides: bool = False
    keep_shape: bool = False

    def class_weight_map(self) -> dict:
        """``{class: weight}`` of :attr:`class_weights` (validated)."""

        out = {}
        for part in filter(None, (x.strip() for x in self.class_weights.split(","))):
            name, sep, w = part.partition("=")
            name = name.strip()
            try:
                weight = float(w)
            except ValueError:
                weight = float("nan")
            if not sep or name not in NET_OF_CLASS or not (math.isfinite(weight) and weight > 0):
                raise BgfastError(f"a class weight is CLASS=W with CLASS one of "
                                  f"{', '.join(NET_OF_CLASS)} and W > 0, not {part!r}")
            out[name] = weight
        return out

    def check(self) -> "FitSettings":
        check_seed(self.seed)
        if self.epochs < 1 or self.batch < 1 or self.patience < 1 or self.hidden < 1:
            raise BgfastError("epochs, batch, patience and hidden must be at least 1")
        if not 0 <= self.widen_to <= _netmod.MAX_HIDDEN:
            raise BgfastError(f"the hidden units to widen to must be 0..{_netmod.MAX_HIDDEN}, "
                              f"not {self.widen_to}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise BgfastError(f"the learning rate must be > 0, not {self.lr}")
        if not (math.isfinite(self.l2) and self.l2 >= 0) or not self.eps > 0:
            raise BgfastError("l2 must be >= 0 and eps > 0")
        if not 0 <= self.val_fraction < 1:
            raise BgfastError(f"the validation fraction must be in [0, 1), not {self.val_fraction}")
        if self.l2_anchor not in ("zero", "init"):
            raise BgfastError(f"the l2 anchor must be zero or init, not {self.l2_anchor!r}")
        if self.weighting not in WEIGHTINGS:
            raise BgfastError(f"unknown weighting {self.weighting!r}; choose from "
                              f"{', '.join(WEIGHTINGS)}")
        bad = [c for c in self.classes if c not in NET_OF_CLASS]
        if bad or not self.classes:
            raise BgfastError(f"unknown class {bad[0] if bad else ''!r}; choose from "
                              f"{', '.join(NET_OF_CLASS)}")
        features = ",".join(_netmod.group_names(self.features))
        if self.keep_shape and self.widen_to:
            raise BgfastError("keep_shape (--keep-shape) trains only the hidden units a net "
                              "reads already; it cannot be combined with widen_to (--widen-to)")
        cw = self.class_weight_map()
        return replace(self, classes=tuple(c for c in NET_OF_CLASS if c in self.classes),
                       features=features,
                       class_weights=",".join(f"{c}={cw[c]:g}" for c in NET_OF_CLASS if c in cw))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["classes"] = list(self.classes)
        return d


def checkpoint_path(out) -> Path:
    """The checkpoint file of a supervised run writing ``out``."""
    return Path(os.fspath(out) + CHECKPOINT_SUFFIX)


def validation_mask(keys, fraction: float, seed: int) -> np.ndarray:
    """``bool[N]``: the held-out positions.  A position (its 10-byte key) is
    held out when the first 8 bytes of SHA-256 of ``"seed:" + key`` read as a
    fraction of 2**64 fall below ``fraction``: the choice depends on the
    position alone, so it stays the same as the labelled data grows."""
    keys = np.ascontiguousarray(keys, dtype=np.uint8)
    prefix = f"{int(seed)}:".encode()
    cut = int(fraction * 2 ** 64)
    return np.fromiter((int.from_bytes(hashlib.sha256(prefix + k.tobytes()).digest()[:8], "little")
                        < cut for k in keys), dtype=bool, count=keys.shape[0])


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def loss_and_grad(p: dict, X, Y, W=None, l2: float = 0.0, grad: bool = True, center=None):
    """The loss of one net on rows ``X`` (inputs ``[n, 206]``) with target
    probabilities ``Y`` ``[n, 5]`` and its gradient.

    Outputs ``sigmoid(z)``, ``z = sigmoid(X w1 + b1) w2 + b2``; the loss is
    the mean over the rows of the sum over the 5 outputs of ``W`` times the
    cross-entropy ``-y log s - (1 - y) log(1 - s)`` (``W`` ``[n, 5]``, ones
    when None), plus ``l2 / 2`` times the squared distance of ``w1`` and
    ``w2`` from ``center`` (a dict like ``p``; zero when None).  ``p``: arrays ``w1 [206, H]``, ``b1 [H]``, ``w2 [H, 5]``,
    ``b2 [5]``.  Returns ``(loss, grads)`` (``grads`` a dict like ``p``, or
    None without ``grad``)."""
    n = X.shape[0]
    h = _sigmoid(X @ p["w1"] + p["b1"])
    z = h @ p["w2"] + p["b2"]
    ce = np.logaddexp(0.0, z) - Y * z
    if W is not None:
        ce = ce * W
    loss = float(ce.sum()) / n
    if l2:
        d1, d2 = (p["w1"], p["w2"]) if center is None else (p["w1"] - center["w1"],
                                                            p["w2"] - center["w2"])
        loss += 0.5 * l2 * float((d1 ** 2).sum() + (d2 ** 2).sum())
    if not grad:
        return loss, None
    dz = _sigmoid(z) - Y
    if W is not None:
        dz *= W
    dz /= n
    dh = (dz @ p["w2"].T) * h * (1.0 - h)
    g = {"w1": X.T @ dh, "b1": dh.sum(axis=0), "w2": h.T @ dz, "b2": dz.sum(axis=0)}
    if l2:
        g["w1"] += l2 * d1
        g["w2"] += l2 * d2
    return loss, g


def _net_params(net, k: int) -> dict:
    """Net ``k`` of ``net`` as float64 arrays."""
    a = net.arrays()
    return {n: a[n][k].astype(np.float64) for n in _P}


def _with_params(net, k: int, p: dict):
    """A copy of ``net`` whose net ``k`` has the weights ``p`` (as float32)."""
    from . import _net

    a = net.arrays()
    for n in _P:
        a[n][k] = p[n].astype(np.float32)
    return _netmod.Net(_net.Model(a["w1"], a["b1"], a["w2"], a["b2"], net.groups), net.meta,
                       net.one_sided)


def _shape_mask(net, k: int, also: int = 0) -> dict | None:
    """For ``keep_shape``: 0/1 masks of net ``k``'s ``w1``, ``b1`` and
    ``w2`` that are zero on the hidden units it does not read and on the
    rows of the feature groups it does not read (but for the groups of the
    mask ``also``, those the run adds); None when it trains everything."""
    a = net.arrays()
    h = int(net.model.read_hidden[k])
    groups = (int(net.model.read_groups[k]) | also) & net.groups
    H = a["w1"].shape[2]
    rows = np.ones(a["w1"].shape[1])
    for bit, a0, a1 in _netmod.group_rows(net.groups):
        if not groups >> bit & 1:
            rows[a0:a1] = 0.0
    if h >= H and rows.all():
        return None
    units = (np.arange(H) < h).astype(np.float64)
    return {"w1": rows[:, None] * units[None, :], "b1": units, "w2": units[:, None] * np.ones(5)}


def _batched_loss(p: dict, X, Y, W=None, step: int = 8192) -> float:
    """The loss of ``p`` on every row (in blocks, float64): plain, or with
    the row weights ``W`` (``[n, 5]``)."""
    if X.shape[0] == 0:
        return float("nan")
    tot = 0.0
    for i in range(0, X.shape[0], step):
        xb = X[i:i + step].astype(np.float64)
        wb = None if W is None else W[i:i + step]
        tot += loss_and_grad(p, xb, Y[i:i + step], wb, grad=False)[0] * xb.shape[0]
    return tot / X.shape[0]


class _Data:
    """The labels of a supervised run: inputs, targets, weights and masks."""

    def __init__(self, lab, st: FitSettings, groups: int = 0, nets: int = 2):
        from . import _net
        from .position import PositionClass, classify_boards
        from .traindata import CLASSES

        boards = lab.boards
        self.n = len(lab)
        self.cls = np.asarray(lab.classes, dtype=np.int64)
        self.bearoff = classify_boards(boards) == PositionClass.BEAROFF
        self.val = validation_mask(lab.keys, st.val_fraction, st.seed)
        self.boards = boards
        self.equity = np.asarray(lab.mean[:, 5], dtype=np.float64)
        self.X = _net.encode(np.ascontiguousarray(boards, dtype=np.uint8), groups)
        self.Y = np.clip(np.asarray(lab.mean[:, :5], dtype=np.float64), 0.0, 1.0)
        se = np.asarray(lab.stderr[:, :5], dtype=np.float64)
        self.W = 1.0 / (se ** 2 + st.eps) if st.weighting == "stderr" else None
        cw = st.class_weight_map()
        self.CW = None                   # the class weights of the rows, [N, 1]
        if any(w != 1.0 for w in cw.values()):
            self.CW = np.array([cw.get(c, 1.0) for c in CLASSES])[self.cls][:, None]
            self.W = self.CW * (np.ones((self.n, 5)) if self.W is None else self.W)
        self.class_names = CLASSES
        chosen = np.isin(self.cls, [CLASSES.index(c) for c in st.classes])
        self.net_of_class = net_of_class(nets)
        self.net_of = net_of = nets_of_rows(boards, self.cls, nets)
        self.rows = {}
        for k in sorted(set(net_of[chosen].tolist())):
            use = chosen & (net_of == k) & ~self.bearoff
            self.rows[k] = (np.flatnonzero(use & ~self.val), np.flatnonzero(use & self.val))
        h = hashlib.sha256()
        for a in (lab.keys, lab.mean, lab.stderr):
            h.update(np.ascontiguousarray(a).tobytes())
        self.digest = h.hexdigest()

    def val_weights(self, val_rows) -> np.ndarray | None:
        """The class weights of ``val_rows`` scaled to mean 1 (None without
        class weights): the validation loss weighs the classes as training
        does, and the stderr not."""
        if self.CW is None or val_rows.size == 0:
            return None
        w = self.CW[val_rows]
        return np.broadcast_to(w / w.mean(), (val_rows.size, 5))

    def weights(self, train_rows) -> np.ndarray | None:
        """The row weights (stderr, class) scaled to mean 1 per output on ``train_rows``."""
        if self.W is None:
            return None
        return self.W / self.W[train_rows].mean(axis=0)

    def counts(self) -> dict:
        out = {}
        for i, name in enumerate(self.class_names):
            c = self.cls == i
            out[name] = {"labels": int(c.sum()), "bearoff": int((c & self.bearoff).sum()),
                         "validation": int((c & self.val & ~self.bearoff).sum())}
        return out


def label_metrics(net, lab, *, val_fraction: float = 0.1, seed: int = 0) -> dict:
    """How well ``net`` (a :class:`bgfast.net.Net`) fits the held-out labels
    of ``lab`` (:func:`validation_mask` with ``val_fraction`` and ``seed``;
    ``val_fraction=1`` takes every label), per class: ``n``, ``loss`` (the
    plain loss of :func:`loss_and_grad` of the class's net) and
    ``equity_mae`` (mean absolute difference between the evaluator's 0-ply
    cubeless equity and the label's equity), both on the positions the net
    values (bear-offs, valued by the tables, left out)."""
    return _metrics(net, _Data(lab, FitSettings(val_fraction=val_fraction, seed=seed), net.groups,
                               net.nets))


def _metrics(net, d: "_Data") -> dict:
    from .evaluate import equity

    out = {}
    for i, name in enumerate(d.class_names):
        rows = np.flatnonzero((d.cls == i) & d.val & ~d.bearoff)
        if rows.size == 0:
            out[name] = {"n": 0, "loss": None, "equity_mae": None}
            continue
        ks = np.unique(d.net_of[rows])
        if ks.size == 1:
            loss = _batched_loss(_net_params(net, int(ks[0])), d.X[rows], d.Y[rows])
        else:                            # the plan nets: the mean over the rows of each
            loss = sum(_batched_loss(_net_params(net, int(k)), d.X[r], d.Y[r]) * r.size
                       for k in ks for r in [rows[d.net_of[rows] == k]]) / rows.size
        eq = equity(net.evaluate_batch(d.boards[rows]))
        out[name] = {"n": int(rows.size), "loss": round(loss, 6),
                     "equity_mae": round(float(np.abs(eq - d.equity[rows]).mean()), 6)}
    return out


def _init_net(st: FitSettings):
    if st.init == "shipped":
        net = _netmod.default_net().copy()
    elif st.init == "random":
        net = _netmod.random_net(st.hidden, st.seed, groups=st.features)
    else:
        net = _netmod.load(st.init)
    net = _netmod.widen(net, st.features)
    if st.widen_to:
        net = _netmod.add_hidden(net, st.widen_to, seed=st.seed)
    if st.crashed_net:
        net = _netmod.add_crashed(net)
    if st.plan_nets:
        net = _netmod.add_plan(net)
    if st.crashed_sides:
        net = _netmod.add_sides(net)
    return net


def _checkpoint_arrays(net, state: dict) -> dict:
    """The arrays of ``net`` a checkpoint keeps: its weights, and its
    one-sided race net, which training carries from the initial net
    unchanged (its first point goes into ``state``)."""
    a = {"net_" + n: np.array(getattr(net.model, n)) for n in _P}
    if net.one_sided is not None:
        a.update({"os_" + n: net.one_sided[n] for n in _P})
        state["os_min_points"] = net.one_sided["min_points"]
    return a


def _save_checkpoint(path: Path, state: dict, arrays: dict) -> None:
    with atomic_open(path, "wb") as f:
        np.savez(f, state=np.str_(json.dumps(state, sort_keys=True)), **arrays)


def _load_checkpoint(path: Path) -> tuple[dict, dict]:
    from .errors import DatabaseError

    try:
        with np.load(path, allow_pickle=False) as z:
            state = json.loads(str(z["state"]))
            arrays = {k: np.array(z[k]) for k in z.files if k != "state"}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
        raise DatabaseError(f"{path} is not a supervised training checkpoint: {exc}") from None
    if not isinstance(state, dict) or state.get("version") != _CKPT_VERSION:
        raise DatabaseError(f"{path} is not a supervised training checkpoint of version "
                            f"{_CKPT_VERSION}")
    return state, arrays


#: The settings a resumed run may change (the others must be those of the checkpoint).
_RESUME_FREE = ("epochs", "patience")


def fit(labels, out, *, resume: bool = False, progress=True, checkpoint_steps: int | None = None,
        max_steps: int | None = None, **settings) -> dict:
    """Train the net on rollout labels and write it to ``out`` (a weights
    file :func:`bgfast.net.load` reads).

    ``labels``: a labels directory or a :class:`bgfast.traindata.LabelSet`,
    or a list of them (:func:`bgfast.traindata.concat_labels`);
    ``settings``: the fields of :class:`FitSettings`.  Each net of the
    classes asked for (:func:`net_of_class`) is trained in turn (contact,
    race, then crashed) by Adam on shuffled mini-batches (a seeded permutation per
    epoch) towards the label probabilities (clipped to [0, 1]), computed in
    float64 with numpy.  The run is checkpointed to :func:`checkpoint_path`
    (weights, Adam moments, epoch, step, the generator's state, the data's
    digest; atomic writes) after every epoch and every ``checkpoint_steps``
    steps, and ``out`` then holds the best weights so far.  ``resume``:
    continue the run of the checkpoint (a new run when there is none); it
    ends with the same weights, bit for bit, as an uninterrupted run.  The
    settings come from the checkpoint; ``epochs`` and ``patience`` may be
    changed (for the nets not finished yet), any other given setting must
    equal the checkpoint's.
    ``max_steps``: stop (checkpointed) after this many steps in this call.
    Returns the report (also ``meta["fit"]`` in the file): settings, the
    validation split, counts per class, per net the validation loss before
    and after and the epochs' history, per class the metrics of
    :func:`label_metrics` before and after."""
    from .errors import DatabaseError
    from .traindata import concat_labels, derive_seed

    out = check_writable(out, "weights file")
    ck = check_writable(checkpoint_path(out), "checkpoint file")
    state = arrays = None
    if resume and ck.exists():
        state, arrays = _load_checkpoint(ck)
        saved = FitSettings(**{**state["settings"], "classes": tuple(state["settings"]["classes"])})
        for k, v in settings.items():
            if k in _RESUME_FREE or v is None:
                continue
            if k == "features":
                v = ",".join(_netmod.group_names(v))
            if k == "class_weights":
                v = replace(FitSettings(), class_weights=v).check().class_weights
            if (tuple(v) if k == "classes" else v) != getattr(saved, k):
                raise BgfastError(f"the checkpoint {ck} was made with {k}={getattr(saved, k)!r}, "
                                  f"not {v!r}; resume with its settings")
        st = replace(saved, **{k: settings[k] for k in _RESUME_FREE
                               if settings.get(k) is not None}).check()
    else:
        st = FitSettings(**{k: v for k, v in settings.items() if v is not None}).check()
    net0 = _init_net(st) if state is None else None      # a bad --init: before the data
    groups = net0.groups if state is None else int(state.get("groups", 0))
    nets = net0.nets if state is None else int(arrays["net_w1"].shape[0])
    lab = concat_labels(labels if isinstance(labels, (list, tuple)) else [labels])
    t0 = time.monotonic()
    data = _Data(lab, st, groups, nets)
    # the metrics' positions: the validation split, or every label without one
    mdata = data if st.val_fraction else _Data(lab, replace(st, val_fraction=1.0), groups, nets)
    if state is not None and state["data"] != data.digest:
        raise DatabaseError(f"the labels are not those of the checkpoint {ck} (their digest "
                            "differs); start a new run without resume")
    stages = [k for k in data.rows if data.rows[k][0].size]
    if not stages:
        raise BgfastError(f"no labels of the classes {', '.join(st.classes)} to train on")
    counts = data.counts()

    if state is None:
        net = net0.copy()
        before = _metrics(net0, mdata)
        state = {"version": _CKPT_VERSION, "settings": st.to_dict(), "data": data.digest,
                 "groups": groups, "stage": 0, "before": before, "nets": {}, "seconds": 0.0, "steps": 0}
        cur = None
    else:
        from . import _net

        one_sided = None
        if "os_min_points" in state:
            one_sided = {n: arrays["os_" + n] for n in _P}
            one_sided["min_points"] = state["os_min_points"]
        net = _netmod.Net(_net.Model(*(arrays["net_" + n] for n in _P), groups), state["net_meta"],
                          one_sided)
        cur = arrays
    steps_here = 0
    seconds0 = float(state["seconds"])
    nsteps = {k: -(-data.rows[k][0].size // st.batch) for k in stages}
    total = sum(nsteps[k] * st.epochs for k in stages)
    bar = Progress(total, unit="step", initial=0, quiet=not progress)

    def report():
        return {"settings": st.to_dict(), "data_digest": data.digest, "labels": data.n,
                "split": {"rule": "sha256(seed:key) < fraction", "seed": st.seed,
                          "fraction": st.val_fraction},
                "net_of_class": dict(data.net_of_class), "counts": counts, "before": state["before"],
                "nets": state["nets"], "steps": state["steps"],
                "seconds": round(seconds0 + time.monotonic() - t0, 1)}

    try:
        while state["stage"] < len(stages):
            k = stages[state["stage"]]
            tr, va = data.rows[k]
            Wn = data.weights(tr)
            # net k as the stage found it (the net it started from: stages change one net each)
            center = _net_params(net, k) if st.l2_anchor == "init" else None
            mask = (_shape_mask(net, k, _netmod.group_mask(st.features)) if st.keep_shape
                    else None)
            if cur is None:                      # a stage starts
                p = _net_params(net, k)
                m = {n: np.zeros_like(p[n]) for n in _P}
                v = {n: np.zeros_like(p[n]) for n in _P}
                best = {n: p[n].copy() for n in _P}
                rng = np.random.Generator(np.random.PCG64(derive_seed(st.seed, "fit", k)))
                sv = {"t": 0, "epoch": 0, "step": 0, "rng": rng.bit_generator.state,
                      "loss_sum": 0.0,
                      "best_val": _batched_loss(p, data.X[va], data.Y[va], data.val_weights(va)),
                      "best_epoch": 0, "bad": 0, "history": []}
                sv["val_before"] = sv["best_val"]
            else:
                p = {n: cur["p_" + n] for n in _P}
                m = {n: cur["m_" + n] for n in _P}
                v = {n: cur["v_" + n] for n in _P}
                best = {n: cur["best_" + n] for n in _P}
                sv = state["cur"]
                rng = np.random.Generator(np.random.PCG64())
                cur = None
            done_steps = sum(nsteps[j] * st.epochs for j in stages[:state["stage"]])
            bar(done_steps + sv["epoch"] * nsteps[k] + sv["step"], total)

            def save():
                state["cur"] = sv
                state["seconds"] = round(seconds0 + time.monotonic() - t0, 1)
                a = {f"{w}_{n}": d[n] for w, d in (("p", p), ("m", m), ("v", v), ("best", best))
                     for n in _P}
                snap = _with_params(net, k, best)
                snap.meta = {**net.meta, "fit": report()}
                state["net_meta"] = net.meta
                a.update(_checkpoint_arrays(net, state))
                _save_checkpoint(ck, state, a)
                _netmod.save(snap, out)

            beta1, beta2, eps = 0.9, 0.999, 1e-8
            finished = False
            while not finished:
                if sv["epoch"] >= st.epochs or sv["bad"] >= st.patience:
                    finished = True
                    break
                rng.bit_generator.state = sv["rng"]
                order = tr[rng.permutation(tr.size)]
                while sv["step"] < nsteps[k]:
                    idx = np.sort(order[sv["step"] * st.batch:(sv["step"] + 1) * st.batch])
                    loss, g = loss_and_grad(p, data.X[idx].astype(np.float64), data.Y[idx],
                                            None if Wn is None else Wn[idx], st.l2,
                                            center=center)
                    if mask is not None:
                        for n in mask:
                            g[n] = g[n] * mask[n]
                    t = sv["t"] + 1
                    new = {}
                    for n in _P:
                        mn = beta1 * m[n] + (1 - beta1) * g[n]
                        vn = beta2 * v[n] + (1 - beta2) * g[n] * g[n]
                        upd = st.lr * (mn / (1 - beta1 ** t)) / (np.sqrt(vn / (1 - beta2 ** t)) + eps)
                        new[n] = (p[n] - upd, mn, vn)
                    for n in _P:                 # all arrays change together
                        p[n], m[n], v[n] = new[n]
                    sv["t"] = t
                    sv["step"] += 1
                    sv["loss_sum"] += loss * idx.size
                    state["steps"] += 1
                    steps_here += 1
                    bar(done_steps + sv["epoch"] * nsteps[k] + sv["step"], total)
                    if checkpoint_steps and sv["t"] % checkpoint_steps == 0 and sv["step"] < nsteps[k]:
                        save()
                    if max_steps is not None and steps_here >= max_steps and sv["step"] < nsteps[k]:
                        save()
                        return report()
                vl = _batched_loss(p, data.X[va], data.Y[va], data.val_weights(va))
                sv["history"].append({"epoch": sv["epoch"] + 1,
                                      "train_loss": round(sv["loss_sum"] / tr.size, 6),
                                      "val_loss": None if math.isnan(vl) else round(vl, 6)})
                sv["epoch"] += 1
                sv["step"] = 0
                sv["loss_sum"] = 0.0
                sv["rng"] = rng.bit_generator.state
                if math.isnan(vl) or vl < sv["best_val"]:
                    best = {n: p[n].copy() for n in _P}
                    sv["best_val"], sv["best_epoch"], sv["bad"] = vl, sv["epoch"], 0
                else:
                    sv["bad"] += 1
                if max_steps is not None and steps_here >= max_steps:
                    save()
                    return report()
                save()
            net = _with_params(net, k, best)
            state["nets"][NET_NAMES[k]] = {
                "train": int(tr.size), "validation": int(va.size),
                "val_loss_before": None if math.isnan(sv["val_before"]) else round(sv["val_before"], 6),
                "val_loss_after": None if math.isnan(sv["best_val"]) else round(sv["best_val"], 6),
                "best_epoch": sv["best_epoch"], "epochs": sv["epoch"],
                "early_stop": sv["bad"] >= st.patience, "history": sv["history"]}
            state["stage"] += 1
            state.pop("cur", None)
    finally:
        bar.close()
    state["after"] = _metrics(net, mdata)
    rep = {**report(), "after": state["after"], "finished": True}
    net.meta = {**net.meta, "fit": rep}
    state["seconds"] = rep["seconds"]
    state["net_meta"] = net.meta
    _save_checkpoint(ck, state, _checkpoint_arrays(net, state))
    _netmod.save(net, out)
    return rep


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
