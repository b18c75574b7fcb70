"""The one-sided race net: one side's distributions of the rolls it needs
to bear off, beyond the race table, and its training by value iteration.

The race table (:func:`bgfast.bearoff.default_race_table`) values a race in
which every checker of both sides lies within its points by convolving each
side's distributions of the rolls it needs to bear off all its checkers and
to bear off the first.  The one-sided race net gives those two
distributions for a side with a checker beyond the table, so that the same
convolution values the longer races (:meth:`bgfast.net.Net.set_one_sided`;
the kernel's ``os_race_probs``).  A third distribution, of the rolls a side
needs to bring every checker out of the other side's home board (its
points :data:`FAR_POINT` to 24), counts the backgammons: the other side
wins one when it bears off before that.

Inputs (:func:`encode`, 100 per side): four units per point (count >= 1,
>= 2, >= 3, and (count - 3) / 2 beyond), then the pips / 100, the checkers
outside the home board / 15, the crossovers (each checker times its quarter
of the board, 0-3) / 30 and the checkers off / 15.  One layer of tanh
hidden units, then three softmaxes of :data:`BINS` rolls.

Training (:func:`train`) is fitted value iteration on one-sided positions:
a position's distribution is the average over the 21 rolls of the
distribution of the roll's best result one roll later, the best being the
one with the fewest rolls expected (the fewest to the first checker off,
or out of the other's home board, for those distributions), as the race
table is built.  Results inside a
one-sided table are valued by it, the others by the net; the positions the
table holds keep its values as targets.  Each round chooses every roll's
best result by the net of the round before (the policy), then several
iterations of targets and training follow that policy.
"""
from __future__ import annotations

import hashlib
import json
import os
import time

import numpy as np

from . import _bearoff, _net
from ._files import atomic_open, check_writable
from ._progress import Progress
from .errors import BgfastError, check_seed

__all__ = ["INPUTS", "BINS", "HEADS", "FAR_POINT", "encode", "beyond", "race_sides", "forward",
           "distributions", "OneSidedSettings", "train"]

#: Inputs of one side.
INPUTS = 100
#: Rolls of each output distribution: P(exactly n rolls), n = 0 .. BINS - 1.
BINS = 64
#: The output distributions: the rolls to bear off, to take the first
#: checker off, and to bring every checker out of the other side's home board.
HEADS = 3
#: The first point of the other side's home board: a side with a checker
#: there can be backgammoned (the third distribution).
FAR_POINT = 19

_UNITS = _net.POINT_UNITS         # the four units of a point's count
_QUARTER = np.repeat(np.arange(4, dtype=np.float32), 6)


def _highest(counts: np.ndarray) -> np.ndarray:
    """The highest occupied point (1-based; 0 for none) of ``uint8[n, 24]``."""
    nz = counts > 0
    return np.where(nz.any(axis=1), counts.shape[1] - np.argmax(nz[:, ::-1], axis=1), 0)


def encode(counts) -> np.ndarray:
    """``float32[n, INPUTS]``: the inputs of one-sided positions ``uint8[n, 24]``
    (point p's checkers at index p - 1)."""
    c = np.asarray(counts, dtype=np.uint8)
    n = c.shape[0]
    out = np.empty((n, INPUTS), dtype=np.float32)
    out[:, :96] = _UNITS[c].reshape(n, 96)
    cf = c.astype(np.float32)
    out[:, 96] = cf @ np.arange(1, 25, dtype=np.float32) / np.float32(100)
    out[:, 97] = cf[:, 6:].sum(axis=1) / np.float32(15)
    out[:, 98] = cf @ _QUARTER / np.float32(30)
    out[:, 99] = (15 - cf.sum(axis=1)) / np.float32(15)
    return out


def beyond(counts, min_points: int, heads: int = HEADS) -> np.ndarray:
    """``bool[n]``: the sides a one-sided race net of ``heads`` distributions
    values: a checker beyond point ``min_points`` (and with two, none on
    :data:`FAR_POINT` or beyond)."""
    hi = _highest(np.asarray(counts, dtype=np.uint8))
    return (hi > min_points) & ((hi < FAR_POINT) | (heads > 2))


def far(counts) -> np.ndarray:
    """``bool[n]``: the sides with a checker on :data:`FAR_POINT` or beyond."""
    return _highest(np.asarray(counts, dtype=np.uint8)) >= FAR_POINT


def _exact_out(counts: np.ndarray, d: np.ndarray) -> None:
    """With a third distribution in ``d`` (``[n, HEADS BINS]``): a side with
    no checker in the other's home board needs no rolls to bring them out."""
    if d.shape[1] > 2 * BINS:
        home = ~far(counts)
        d[home, 2 * BINS:] = 0.0
        d[home, 2 * BINS] = 1.0


def _exact_heads(counts: np.ndarray, d: np.ndarray) -> None:
    """Set the distributions the position decides alone in ``d`` (``[n, D
    BINS]``): a side with a checker off took its first off (no rolls), and
    :func:`_exact_out`."""
    gone = counts.sum(axis=1) < 15
    d[gone, BINS:2 * BINS] = 0.0
    d[gone, BINS] = 1.0
    _exact_out(counts, d)


def race_sides(paths, min_points: int = 10, heads: int = HEADS) -> np.ndarray:
    """The distinct sides (``uint8[n, 24]``, sorted) of the race positions of
    position files (``bgfast data positions``) that :func:`beyond` keeps."""
    from .traindata import load_positions

    sides = []
    for p in paths:
        ps = load_positions(p)
        b = ps.boards[ps.classes == 2]
        sides += [b[:, 0, :24], b[:, 1, :24]]
    if not sides:
        raise BgfastError("no position files given")
    s = np.unique(np.concatenate(sides), axis=0)
    return np.ascontiguousarray(s[beyond(s, min_points, heads)])


class _Weights:
    """The net's weights (w1[INPUTS, H], b1[H], w2[H, D BINS], b2[D BINS]),
    D distributions, and their Adam state."""

    NAMES = ("w1", "b1", "w2", "b2")

    def __init__(self, hidden: int, seed: int, heads: int = HEADS):
        rng = np.random.default_rng(seed)
        self.p = {"w1": (rng.standard_normal((INPUTS, hidden)) * 0.1).astype(np.float32),
                  "b1": np.zeros(hidden, np.float32),
                  "w2": (rng.standard_normal((hidden, heads * BINS)) * 0.05).astype(np.float32),
                  "b2": np.zeros(heads * BINS, np.float32)}
        self.m = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.t = 0


def forward(p: dict, x: np.ndarray):
    """Hidden units and logits of inputs ``x`` (:func:`encode`)."""
    h = np.tanh(x @ p["w1"] + p["b1"])
    return h, h @ p["w2"] + p["b2"]


def _softmax(z: np.ndarray) -> np.ndarray:
    """The softmax of each block of BINS logits."""
    out = np.empty_like(z)
    for k in range(z.shape[1] // BINS):
        s = z[:, k * BINS:(k + 1) * BINS]
        s = s - s.max(axis=1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=1, keepdims=True)
        out[:, k * BINS:(k + 1) * BINS] = s
    return out


def distributions(p: dict, counts, chunk: int = 250_000) -> np.ndarray:
    """``float32[n, D BINS]``: the net's distributions of rolls to bear off
    (the first BINS), to take the first checker off and (D = 3) to bring
    every checker out of the other side's home board, of one-sided positions
    ``uint8[n, 24]``; D is the net's (2 or :data:`HEADS`)."""
    c = np.asarray(counts, dtype=np.uint8)
    out = np.empty((c.shape[0], p["b2"].shape[0]), np.float32)
    for a in range(0, c.shape[0], chunk):
        out[a:a + chunk] = _softmax(forward(p, encode(c[a:a + chunk]))[1])
    return out


def _shift1(d: np.ndarray) -> np.ndarray:
    out = np.zeros_like(d)
    out[:, 1:] = d[:, :-1]
    return out


class _Base:
    """A one-sided table's distributions, dense, for positions it holds."""

    def __init__(self, table):
        self.t = table
        self.points = table.points

    def inside(self, c: np.ndarray) -> np.ndarray:
        return _highest(c) <= self.points

    def dense(self, c: np.ndarray, heads: int = HEADS, chunk: int = 500_000) -> np.ndarray:
        """``float32[n, heads BINS]`` (bear off, first off, out of the other's
        home board) of positions inside the table."""
        rows = self.t.kernel_rows()         # the packed rows, read in place
        out = np.zeros((c.shape[0], heads * BINS), np.float32)
        for a in range(0, c.shape[0], chunk):
            cc = c[a:a + chunk]
            idx = _bearoff.ranks(np.ascontiguousarray(cc[:, :self.points]))
            for k in (0, 1):
                values, offsets, lengths, starts = rows[1 + 4 * k:5 + 4 * k]
                o = np.asarray(offsets)[idx]
                ln = np.asarray(lengths)[idx].astype(np.int64)
                st = np.asarray(starts)[idx].astype(np.int64)
                w = int(ln.max(initial=0))
                if (st + ln).max(initial=0) > BINS:
                    raise BgfastError(f"the table's rows reach past {BINS} rolls")
                q = np.arange(w)[None, :]
                ok = q < ln[:, None]
                v = np.where(ok, np.asarray(values)[np.where(ok, o[:, None] + q, 0)], 0.0)
                block = out[a:a + chunk, k * BINS:(k + 1) * BINS]
                rr, cc_ = np.nonzero(ok)
                block[rr, (st[:, None] + q)[rr, cc_]] = v[rr, cc_]
            _exact_heads(cc, out[a:a + chunk])
        return out


def _values(p: dict, base: _Base, counts: np.ndarray) -> np.ndarray:
    """``float32[n, D BINS]`` of one-sided positions (D: the net's
    distributions): the table's inside it, else the net's, with what the
    position decides alone exact."""
    heads = p["b2"].shape[0] // BINS
    out = np.empty((counts.shape[0], heads * BINS), np.float32)
    ins = base.inside(counts)
    if ins.any():
        out[ins] = base.dense(counts[ins], heads)
    if (~ins).any():
        sub = distributions(p, counts[~ins])
        _exact_heads(counts[~ins], sub)
        out[~ins] = sub
    return out


def _means(p: dict, base: _Base, counts: np.ndarray, chunk: int = 250_000) -> np.ndarray:
    """``float64[n, D]``: the expected rolls to bear off, to take the first
    checker off and (D = 3) to bring every checker out of the other side's
    home board, of one-sided positions (:func:`_values`)."""
    bins = np.arange(BINS, dtype=np.float64)
    heads = p["b2"].shape[0] // BINS
    out = np.empty((counts.shape[0], heads))
    for a in range(0, counts.shape[0], chunk):
        d = _values(p, base, counts[a:a + chunk]).astype(np.float64)
        for k in range(heads):
            out[a:a + chunk, k] = d[:, k * BINS:(k + 1) * BINS] @ bins
    return out


def _policy(p: dict, base: _Base, X: np.ndarray, chunk: int, progress) -> np.ndarray:
    """``int64[n, 21, D]``: each roll's best result (a gnubg index on 24
    points) from each position of X, by expected rolls of each of the net's
    D distributions (:func:`_means`)."""
    heads = p["b2"].shape[0] // BINS
    out = np.empty((X.shape[0], 21, heads), np.int64)
    for a in range(0, X.shape[0], chunk):
        off, ranks = _bearoff.successors_batch(X[a:a + chunk])
        uq, inv = np.unique(ranks, return_inverse=True)
        means = _means(p, base, _bearoff.unranks(uq, 24))
        cnt = np.diff(off)
        for k in range(heads):
            val = means[inv, k]
            segmin = np.minimum.reduceat(val, off[:-1])
            hit = np.flatnonzero(val == np.repeat(segmin, cnt))
            # the first of equals: the lowest index, as the race table breaks ties
            out[a:a + chunk, :, k] = ranks[hit[np.searchsorted(hit, off[:-1])]].reshape(-1, 21)
        progress(min(a + chunk, X.shape[0]))
    return out


def _targets(p: dict, base: _Base, policy: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``float32[n, D BINS]``: one roll plus the weighted average over the
    rolls of the policy's results' distributions."""
    n, heads = policy.shape[0], policy.shape[2]
    uq, inv = np.unique(policy, return_inverse=True)
    d = _values(p, base, _bearoff.unranks(uq, 24))
    inv = inv.reshape(n, 21, heads)
    out = np.empty((n, heads * BINS), np.float32)
    w = weights.astype(np.float32)
    for k in range(heads):
        dk = d[:, k * BINS:(k + 1) * BINS]
        avg = np.einsum("nrb,r->nb", dk[inv[:, :, k]], w)
        out[:, k * BINS:(k + 1) * BINS] = _shift1(avg)
    return out


def _fit(W: _Weights, x: np.ndarray, y: np.ndarray, epochs: int, lr: float, rng, batch: int = 512):
    """Adam on the cross-entropy of the distributions; the mean loss of the last epoch."""
    p, n = W.p, x.shape[0]
    loss = 0.0
    for _ in range(epochs):
        perm = rng.permutation(n)
        total = 0.0
        for a in range(0, n, batch):
            b = perm[a:a + batch]
            h, z = forward(p, x[b])
            q = _softmax(z)
            total += float(-(y[b] * np.log(q + 1e-12)).sum())
            dz = (q - y[b]) / np.float32(len(b))
            g = {"w2": h.T @ dz, "b2": dz.sum(axis=0)}
            dh = (dz @ p["w2"].T) * (1 - h * h)
            g["w1"] = x[b].T @ dh
            g["b1"] = dh.sum(axis=0)
            W.t += 1
            c1, c2 = 1 - 0.9 ** W.t, 1 - 0.999 ** W.t
            for k in _Weights.NAMES:
                W.m[k] *= np.float32(0.9)
                W.m[k] += np.float32(0.1) * g[k]
                W.v[k] *= np.float32(0.999)
                W.v[k] += np.float32(0.001) * g[k] * g[k]
                p[k] -= (np.float32(lr) * (W.m[k] / np.float32(c1))
                         / (np.sqrt(W.v[k] / np.float32(c2)) + np.float32(1e-8)))
        loss = total / n
    return loss


class OneSidedSettings:
    """The settings of :func:`train` (see there)."""

    FIELDS = ("min_points", "hidden", "rounds", "iterations", "epochs", "lr", "final_lr", "seed",
              "heads", "from_init")

    def __init__(self, min_points=10, hidden=128, rounds=3, iterations=6, epochs=6, lr=1e-3,
                 final_lr=3e-4, seed=0, heads=HEADS, from_init=False):
        self.min_points, self.hidden, self.rounds = int(min_points), int(hidden), int(rounds)
        self.heads, self.from_init = int(heads), bool(from_init)
        self.iterations, self.epochs = int(iterations), int(epochs)
        self.seed = check_seed(seed)
        self.lr, self.final_lr = float(lr), float(final_lr)
        if not 6 <= self.min_points < FAR_POINT - 1:
            raise BgfastError(f"min_points must be 6..{FAR_POINT - 2}, not {self.min_points}")
        if not 1 <= self.hidden <= 256:
            raise BgfastError(f"hidden units must be 1..256, not {self.hidden}")
        if min(self.rounds, self.iterations, self.epochs) < 1:
            raise BgfastError("rounds, iterations and epochs must be at least 1")
        if self.heads not in (2, HEADS):
            raise BgfastError(f"distributions must be 2 or {HEADS}, not {self.heads}")

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.FIELDS}
        if self.heads == 2 and not self.from_init:     # as the runs before these settings
            del d["heads"], d["from_init"]
        return d


def _save_state(path, state: dict, W: _Weights, policy) -> None:
    arrays = {f"{w}_{k}": d[k] for w, d in (("p", W.p), ("m", W.m), ("v", W.v)) for k in _Weights.NAMES}
    if policy is not None:
        arrays["policy"] = policy
    with atomic_open(path, "wb") as f:
        np.savez(f, state=np.str_(json.dumps({**state, "t": W.t})), **arrays)


def train(out, *, positions, table, init="shipped", settings: OneSidedSettings | None = None,
          resume: bool = False, progress: bool = True) -> dict:
    """Train a one-sided race net and write ``init``'s net with it to ``out``.

    ``positions``: position files whose race sides (:func:`race_sides`)
    are trained on; ``table``: a one-sided table (``bgfast bearoff build
    --one-sided P``, P >= ``min_points``) whose values the positions it
    holds take and whose results end the look-ahead; ``init``: the net
    (``"shipped"`` or a weights file) that carries the result, and with
    ``settings.from_init`` whose one-sided race net the training starts
    from (its weights, a third distribution's seeded when it has two).  A
    checkpoint (``out + ".ckpt"``) follows each iteration; ``resume``
    continues it.  Returns a report."""
    from . import bearoff
    from . import net as netmod

    st = settings or OneSidedSettings()
    out = os.fspath(out)
    check_writable(out, "weights file")
    ck = out + ".ckpt"
    base_net = netmod.default_net() if init == "shipped" else netmod.load(init)
    tab = bearoff.open(table)
    if (tab.kind != "one-sided" or tab.checkers != 15 or tab.points < st.min_points
            or tab.points >= FAR_POINT):
        raise BgfastError(f"{table}: a one-sided 15-checker table of {st.min_points} to "
                          f"{FAR_POINT - 1} points is needed, not a {tab.describe()} table")
    start = None
    if st.from_init:
        start = base_net.one_sided
        if start is None or start["w1"].shape[1] != st.hidden:
            raise BgfastError(f"{init}: no one-sided race net of {st.hidden} hidden units "
                              f"to start from")
    base = _Base(tab)
    X = race_sides(positions, st.min_points, st.heads)
    if X.shape[0] == 0:
        raise BgfastError("the position files hold no race side beyond the table")
    weights = np.array([w for _, _, w in _bearoff.rolls()], np.float64) / 36.0
    ident = {"settings": st.to_dict(), "sides": int(X.shape[0]),
             "sides_digest": hashlib.sha256(X.tobytes()).hexdigest()[:16],
             "table": {"points": tab.points, "crc": tab.data_crc}}
    W = _Weights(st.hidden, st.seed, st.heads)
    if start is not None:
        ident["start"] = base_net.checksum()[:16]
        d = min(start["b2"].shape[0], st.heads * BINS)
        for k in ("w1", "b1"):
            W.p[k] = np.array(start[k], np.float32)
        W.p["w2"][:, :d] = start["w2"][:, :d]
        W.p["b2"][:d] = start["b2"][:d]
    rng = np.random.default_rng(st.seed + 1)
    policy = None
    state = {**ident, "round": 0, "iteration": 0, "warm": False, "history": [], "seconds": 0.0}
    if resume and os.path.exists(ck):
        z = np.load(ck)
        saved = json.loads(str(z["state"]))
        if {k: saved[k] for k in ident} != json.loads(json.dumps(ident)):
            raise BgfastError(f"{ck} is a run of other settings, positions or table")
        state = {k: v for k, v in saved.items() if k != "t"}
        for w, d in (("p", W.p), ("m", W.m), ("v", W.v)):
            for k in _Weights.NAMES:
                d[k] = z[f"{w}_{k}"]
        W.t = int(saved["t"])
        policy = z["policy"] if "policy" in z.files else None
        rng.bit_generator.state = state["rng"]
    t0 = time.monotonic() - float(state["seconds"])
    x = encode(X)
    inside = base.inside(X)
    exact = base.dense(X[inside], st.heads) if inside.any() else None
    fr = far(X)
    bins = np.arange(BINS, dtype=np.float32)
    total = st.rounds * (X.shape[0] + st.iterations)
    bar = Progress(total, unit="step", quiet=not progress)

    def checkpoint():
        state["seconds"] = round(time.monotonic() - t0, 1)
        state["rng"] = rng.bit_generator.state
        _save_state(ck, state, W, policy)

    if not state["warm"]:
        # a start: each side's rolls around its pips / 8.17 (a roll's pips,
        # wastage aside), to bring the checkers out of the other's home
        # board around their pips to its edge; a started net keeps its own
        def around(mu):
            g = np.exp(-0.5 * ((bins[None, :] - mu[:, None]) / np.float32(1.3)) ** 2)
            return g / g.sum(axis=1, keepdims=True)

        g = around(x[:, 96] * np.float32(100 / 8.17) + np.float32(1))
        parts = [g, g]
        if st.heads > 2:
            out_pips = X[:, FAR_POINT - 1:].astype(np.float32) @ np.arange(1, 26 - FAR_POINT,
                                                                            dtype=np.float32)
            parts.append(around(out_pips * np.float32(1 / 8.17) + np.float32(1)))
        y = np.concatenate(parts, axis=1).astype(np.float32)
        _exact_out(X, y)
        if start is not None:
            y[~fr, :2 * BINS] = _values(W.p, base, X[~fr])[:, :2 * BINS]
        _fit(W, x, y, 2, st.lr, rng)
        state["warm"] = True
        checkpoint()
    while state["round"] < st.rounds:
        r = state["round"]
        done0 = r * (X.shape[0] + st.iterations)
        if policy is None:
            policy = _policy(W.p, base, X, 100_000, lambda k: bar(done0 + k, total))
            state["iteration"] = 0
            checkpoint()
        while state["iteration"] < st.iterations:
            y = _targets(W.p, base, policy, weights)
            _exact_out(X, y)
            if exact is not None:
                y[inside] = exact
            now = _softmax(forward(W.p, x)[1])
            resid = float(np.abs(now[:, :BINS] @ bins - y[:, :BINS] @ bins).mean())
            lr = st.final_lr if r == st.rounds - 1 else st.lr
            loss = _fit(W, x, y, st.epochs, lr, rng)
            state["history"].append({"round": r, "iteration": state["iteration"],
                                     "rolls_residual": round(resid, 5), "loss": round(loss, 5)})
            if st.heads > 2:
                resid_out = (float(np.abs(now[fr, 2 * BINS:] @ bins - y[fr, 2 * BINS:] @ bins).mean())
                             if fr.any() else 0.0)
                state["history"][-1]["out_residual"] = round(resid_out, 5)
            state["iteration"] += 1
            checkpoint()
            bar(done0 + X.shape[0] + state["iteration"], total)
        state["round"] += 1
        policy = None
        checkpoint()
    bar.close()
    result = base_net.copy()
    result.meta = {**base_net.meta, "one_sided": {**ident, "history": state["history"],
                                                  "seconds": round(time.monotonic() - t0, 1)}}
    result.set_one_sided({**W.p, "min_points": st.min_points})
    netmod.save(result, out)
    return {"out": out, **ident, "history": state["history"], "seconds": round(time.monotonic() - t0, 1)}
