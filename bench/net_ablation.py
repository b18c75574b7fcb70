"""Nets side by side: benchmark error per set (paired with the first net) and
duels against the first net, for the feature-group ablation of docs/training.md.

    python bench/net_ablation.py BENCHMARK_DIR [BENCHMARK_DIR ...] --nets A.npz B.npz ...
        [--duel-games 10000] [--seed 1] [--json OUT]

The first net of ``--nets`` is the reference (``shipped`` names the shipped
weights).  For every benchmark directory (partial shards included) and set:
each net's error (mean equity lost per decision x1000 against the rollout
best) and the paired difference from the reference with its standard error
(the decisions are the same).  With ``--duel-games``: each other net against
the reference, 0-ply cubeless money games with duplicate dice, ppg +- SE.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bgfast import benchmark, duel, net as netmod  # noqa: E402


def _net(spec):
    return netmod.load(netmod.default_weights_path()) if spec == "shipped" else netmod.load(spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("benchmarks", nargs="+")
    ap.add_argument("--nets", nargs="+", required=True)
    ap.add_argument("--duel-games", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    nets = [_net(s) for s in args.nets]
    out = {"nets": args.nets, "benchmarks": {}, "duels": {}}
    for d in args.benchmarks:
        db = benchmark.load(d)
        loss = [benchmark.losses(db, benchmark.evaluator_choices(db, netmod.NetEvaluator(n)))[0]
                for n in nets]
        res = {}
        for s in benchmark.SETS:
            rows = db.classes == benchmark.SETS.index(s)
            n = int(rows.sum())
            if n < 2:
                continue
            row = {"decisions": n}
            for name, l in zip(args.nets, loss):
                diff = l[rows] - loss[0][rows]
                row[name] = {"error": round(1000 * float(l[rows].mean()), 3),
                             "se": round(1000 * float(l[rows].std(ddof=1) / math.sqrt(n)), 3),
                             "diff": round(1000 * float(diff.mean()), 3),
                             "diff_se": round(1000 * float(diff.std(ddof=1) / math.sqrt(n)), 3)}
            res[s] = row
        out["benchmarks"][d] = res
        print(f"{d}:")
        for s, row in res.items():
            print(f"  {s} ({row['decisions']} decisions)")
            for name in args.nets:
                r = row[name]
                print(f"    {name:<50} {r['error']:7.2f} +- {r['se']:.2f}   "
                      f"vs first {r['diff']:+7.2f} +- {r['diff_se']:.2f}")
    if args.duel_games:
        for spec in args.nets[1:]:
            ref = str(netmod.default_weights_path()) if args.nets[0] == "shipped" else args.nets[0]
            r = duel.duel(str(netmod.default_weights_path()) if spec == "shipped" else spec, ref,
                          games=args.duel_games, seed=args.seed, threads=args.threads)
            d = r.to_dict() if hasattr(r, "to_dict") else vars(r)
            out["duels"][spec] = {k: v for k, v in d.items() if isinstance(v, (int, float, str))}
            print(f"duel {spec} vs {args.nets[0]}: {json.dumps(out['duels'][spec])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
