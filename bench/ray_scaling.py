"""Scaling on the test cluster: a rollout and an analysis through the CLI,
locally (``--jobs 1`` and ``--jobs 2``) and on a Ray cluster of one-CPU
nodes (the head alone, then with a second node), held to loopback in a
network namespace of its own exactly as in tests/test_ray_cluster.py.

    python bench/ray_scaling.py [--trials 2592] [--lines 4000] [--repeats 3]

Prints the median wall time of each command (seconds, Python's start and
Ray's connection included) and the ratios to local ``--jobs 1``.  Needs
``unshare``/``nsenter`` (a network namespace) and the ``ray`` command.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests")]
from corpus import self_play_positions  # noqa: E402
from test_ray_cluster import START, Cluster, _cli  # noqa: E402

from bgfast import Position  # noqa: E402


def analysis_input(path: str, lines: int) -> None:
    boards, dice = self_play_positions(lines, seed=7)
    with open(path, "w") as f:
        for b, (d1, d2) in zip(boards, dice):
            f.write(f"{Position(b).position_id()} {d1}{d2}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=2592)
    ap.add_argument("--lines", type=int, default=4000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bgs", dir="/tmp")        # Ray's socket paths must be short
    src, out = os.path.join(tmp, "in.txt"), os.path.join(tmp, "out.txt")
    analysis_input(src, args.lines)
    work = {
        f"rollout, {args.trials:,} trials, net policy":
            ["rollout", START, "-n", args.trials, "--seed", 3, "--policy", "net", "--json"],
        f"analyze, {args.lines:,} lines, 1-ply": ["analyze", src, "--ply", 1, "-o", out],
    }
    columns = ["local -j 1", "local -j 2", "Ray, 1 node", "Ray, 2 nodes"]
    times = {w: {} for w in work}
    results = {w: set() for w in work}

    def measure(column, run):
        for name, cmd in work.items():
            seconds = []
            for _ in range(args.repeats):
                code, stdout, err, t = run(cmd)
                if code != 0:
                    sys.exit(f"{column}: {name}: exit {code}: {err[-2000:]}")
                seconds.append(t)
                results[name].add(stdout if cmd[0] == "rollout" else open(out).read())
            times[name][column] = statistics.median(seconds)
            print(f"{column:>12}  {name}: {' '.join(f'{s:.1f}' for s in seconds)}",
                  file=sys.stderr, flush=True)

    for jobs in (1, 2):
        measure(f"local -j {jobs}", lambda cmd, j=jobs: _cli(*cmd, "-j", j))
    cluster = Cluster(tmp)
    try:
        cluster.start_head()
        on_ray = lambda cmd: cluster.bgfast(*cmd, "--backend", "ray", "--address",  # noqa: E731
                                            cluster.address)
        measure("Ray, 1 node", on_ray)
        cluster.add_node()
        measure("Ray, 2 nodes", on_ray)
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    # the same result everywhere (rollouts: the numbers; their settings name the backend)
    import json

    keys = ("mean", "stderr", "games")
    rollouts = {json.dumps({k: json.loads(r)[k] for k in keys})
                for name in work if name.startswith("rollout") for r in results[name]}
    analyses = {r for name in work if name.startswith("analyze") for r in results[name]}
    assert len(rollouts) == 1 and len(analyses) == 1, "results differ between the backends"

    print(f"| work | {' | '.join(columns)} |")
    print(f"| --- |{' --- |' * len(columns)}")
    for name in work:
        row = times[name]
        cells = [f"{row[c]:.1f} ({row[c] / row['local -j 1']:.2f})" for c in columns]
        print(f"| {name} | {' | '.join(cells)} |")
    print(f"\nmedian of {args.repeats} wall seconds (ratio to local -j 1); "
          f"{os.cpu_count()} cores on this machine")


if __name__ == "__main__":
    main()
