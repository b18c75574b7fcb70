"""Can a net with a cheaper hidden activation fit the shipped net's targets?

    python bench/activation_fit.py LABELS... [--net 4] [--activation quadratic]
        [--lr 3e-4] [--epochs 25] [--init NET.npz]

One net of the weights file (``--net``: its index in ``bgfast.net.NET_NAMES``,
default 4, the contact plan net of the even race) is fine-tuned from
``--init``'s weights (default the shipped net) towards the labels of the
LABELS directories (``bgfast data values`` or ``data label`` output), with
its hidden sigmoids swapped for ``--activation`` (those of
``bench/activation_cost.py``: ``quadratic``, ``clip``; ``sigmoid`` is the
control), by Adam on mini-batches of 256 in float64 with numpy, the split
and the masks of ``bgfast train supervised`` (10% held out, seed 0).  After
each epoch it prints the held-out loss and the equity MAE against the
labels (the raw outputs' equity, without the calibration the evaluators
apply in a few positions: for comparing activations); the starting net's
figures come first.  A net that cannot reach the
sigmoid net's MAE would play worse; one that does would evaluate plays
faster by what ``bench/activation_cost.py`` measures.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bgfast import net as netmod, train as T  # noqa: E402
from bgfast.evaluate import equity  # noqa: E402
from bgfast.traindata import concat_labels  # noqa: E402


def _sig(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _quadratic(x):
    t = np.clip(x, -4.0, 4.0)
    return 0.5 + t * (0.25 - np.abs(t) / 32.0)


def _d_quadratic(x):
    return np.where(np.abs(x) < 4.0, 0.25 - np.abs(np.clip(x, -4.0, 4.0)) / 16.0, 0.0)


def _clip(x):
    return np.clip(0.25 * x + 0.5, 0.0, 1.0)


def _d_clip(x):
    return np.where(np.abs(x) < 2.0, 0.25, 0.0)


ACTIVATIONS = {"sigmoid": (_sig, None), "quadratic": (_quadratic, _d_quadratic),
               "clip": (_clip, _d_clip)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("labels", nargs="+", help="Labels directories.")
    ap.add_argument("--net", type=int, default=4, help="The net trained [default: 4].")
    ap.add_argument("--activation", choices=sorted(ACTIVATIONS), default="quadratic")
    ap.add_argument("--lr", type=float, default=3e-4, help="Adam's step [default: 3e-4].")
    ap.add_argument("--epochs", type=int, default=25, help="Epochs [default: 25].")
    ap.add_argument("--init", default=None, help="The weights file [default: the shipped net].")
    ap.add_argument("--seed", type=int, default=0, help="The shuffles' seed [default: 0].")
    args = ap.parse_args()
    act, dact = ACTIVATIONS[args.activation]
    net = netmod.default_net() if args.init is None else netmod.load(args.init)
    k = args.net
    d = T._Data(concat_labels(args.labels), T.FitSettings(classes=("contact", "crashed")),
                net.groups, net.nets)
    if k not in d.rows:
        sys.exit(f"no labels for net {k} ({netmod.NET_NAMES[k]})")
    tr, va = d.rows[k]
    print(f"net {k} ({netmod.NET_NAMES[k]}), {args.activation}: {tr.size} positions to train on, "
          f"{va.size} held out", flush=True)

    def forward(p, X):
        a = X @ p["w1"] + p["b1"]
        h = act(a)
        return a, h, h @ p["w2"] + p["b2"]

    def held_out(p):
        loss = mae = 0.0
        for i in range(0, va.size, 8192):
            r = va[i:i + 8192]
            _, _, z = forward(p, d.X[r].astype(np.float64))
            loss += float((np.logaddexp(0.0, z) - d.Y[r] * z).sum())
            mae += float(np.abs(equity(_sig(z)) - d.equity[r]).sum())
        return loss / va.size, mae / va.size

    p = T._net_params(net, k)
    mask = T._shape_mask(net, k, 0)
    print("start: held-out loss %.6f, equity MAE %.5f" % held_out(p), flush=True)
    m = {n: np.zeros_like(p[n]) for n in p}
    v = {n: np.zeros_like(p[n]) for n in p}
    rng = np.random.default_rng(args.seed)
    t = 0
    for epoch in range(args.epochs):
        t0 = time.process_time()
        order = tr[rng.permutation(tr.size)]
        for s in range(0, tr.size, 256):
            idx = np.sort(order[s:s + 256])
            X = d.X[idx].astype(np.float64)
            a, h, z = forward(p, X)
            dz = (_sig(z) - d.Y[idx]) / idx.size
            dh = dz @ p["w2"].T
            dh = dh * (h * (1.0 - h) if dact is None else dact(a))
            g = {"w1": X.T @ dh, "b1": dh.sum(0), "w2": h.T @ dz, "b2": dz.sum(0)}
            if mask is not None:
                for n in mask:
                    g[n] = g[n] * mask[n]
            t += 1
            for n in p:
                m[n] = 0.9 * m[n] + 0.1 * g[n]
                v[n] = 0.999 * v[n] + 0.001 * g[n] * g[n]
                p[n] = p[n] - args.lr * (m[n] / (1 - 0.9 ** t)) / (np.sqrt(v[n] / (1 - 0.999 ** t)) + 1e-8)
        print(f"epoch {epoch + 1}: held-out loss %.6f, equity MAE %.5f" % held_out(p)
              + f" ({time.process_time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
