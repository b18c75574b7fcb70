"""Cubeful rollouts beside cubeless ones and beside gnubg's, in one run.

Games per second on ONE core from the opening position (money, Jacoby off,
cube centred), 0-ply, quasi-random dice, played to the end, with and
without variance reduction: bgfast cubeless and cubeful at the same policy
(the net at 0-ply, its luck and cube decisions by the net with the bear-off
tables), and the Debian ``gnubg`` program's cubeful rollout (0-ply neural
net for checker play and cube decisions, threads 1; timed as the
difference between two trial counts so that start-up does not count; see
bench/compare_rollout.py).  The cubeful/cubeless column is bgfast's cost of
playing the cube (target: at least 0.8); the ratio column bgfast cubeful
over gnubg cubeful.  Every number is a median of ``--repeat`` runs; the
machine is shared, so expect noise.

Run: python bench/compare_rollout_cubeful.py [--repeat 3] [--quick]
"""
import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(__file__))

from compare_rollout import fmt, gnubg_rollout_rate, median_rate, ratio  # noqa: E402

from bgfast.cube import CubeContext  # noqa: E402
from bgfast.evaluate import install_bearoff_tables  # noqa: E402
from bgfast.position import Position  # noqa: E402
from bgfast.rollout import RolloutSettings, rollout  # noqa: E402


def bgfast_rate(trials, vr, cube, repeat):
    s = RolloutSettings(trials=trials, seed=1, variance_reduction=vr, backend="serial",
                        chunk=max(36, trials // 4), policy="net", evaluator="net", cube=cube)
    rollout(Position.initial(), s, trials=36)       # warm-up (net, tables)
    out = {}

    def run():
        out["r"] = rollout(Position.initial(), s)

    return median_rate(run, trials, repeat), out["r"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer games (for a smoke run)")
    args = ap.parse_args()
    rep, q = args.repeat, args.quick
    install_bearoff_tables()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; medians of {rep}; load average at start "
          f"{os.getloadavg()[0]:.1f}")
    print("policy: bgfast = its net at 0-ply (cube decisions: 0-ply Janowski on the net); "
          "gnubg = its 0-ply neural net (cube decisions at 0 ply)")
    money = CubeContext.money()
    rows = []
    for vr, n, small, big in ((False, 324 if q else 1296, 36, 324 if q else 1296),
                              (True, 36 if q else 144, 18, 54 if q else 144)):
        cl, rcl = bgfast_rate(n, vr, None, rep)
        cf, rcf = bgfast_rate(n, vr, money, rep)
        g = gnubg_rollout_rate(small, big, vr, max(1, rep // 2 + 1), cubeful=True)
        rows.append((vr, cl, cf, g, rcl, rcf))
    print("\n## Rollouts, games/s on one core, opening position, money, 0-ply")
    print(f"{'':28}{'cubeless':>10}{'cubeful':>10}{'cf/cl':>8}{'gnubg cf':>10}{'ratio':>8}")
    for vr, cl, cf, g, _, _ in rows:
        label = "with variance reduction" if vr else "without variance reduction"
        print(f"{label:28}{fmt(cl):>10}{fmt(cf):>10}{cf / cl:>8.2f}{fmt(g):>10}"
              f"{ratio(cf, g):>8}")
    print("\n## The means (equity for the player on roll; cubeful: money, cube centred)")
    for vr, _, _, _, rcl, rcf in rows:
        label = "VR" if vr else "plain"
        print(f"{label:6} cubeless {rcl.equity:+.4f} ± {rcl.stderr['equity']:.4f} "
              f"({rcl.games} games, {rcl.average_plies:.1f} plies a game), cubeful "
              f"{rcf.cubeful:+.4f} ± {rcf.stderr['cubeful']:.4f} ({rcf.games} games, "
              f"{rcf.average_plies:.1f} plies a game: a pass ends a game)")


if __name__ == "__main__":
    main()
