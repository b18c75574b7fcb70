"""bgfast rollouts and evaluations beside gnubg, in one run.

Rollouts: games per second on ONE core from the opening position, 0-ply,
cubeless, quasi-random dice, played to the end; with and without variance
reduction.  Peers: the Debian ``gnubg`` program (its rollout command, 0-ply
neural net, threads 1; timed as the difference between two trial counts so
that start-up does not count) and ``gnubg_nn.rollout`` (see the caveat it
prints).  Evaluations: 0-ply evaluations per second in batch (bgfast's
composite evaluator on the plays of 400 corpus positions x 21 rolls) beside
``gnubg_nn.probabilities(board, 0)``.  Scaling: bgfast rollouts on 1 and 2
worker processes.  Every number is a median of ``--repeat`` runs; the
machine is shared, so expect noise.

Run: python bench/compare_rollout.py [--repeat 3] [--quick]
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

from bgfast.evaluate import get_evaluator, install_bearoff_tables  # noqa: E402
from bgfast.position import Position  # noqa: E402
from bgfast.rollout import RolloutSettings, rollout  # noqa: E402

GNUBG = "/usr/games/gnubg"


def median_rate(fn, count, repeat):
    rates = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        rates.append(count / (time.perf_counter() - t0))
    return statistics.median(rates)


def bgfast_rollout_rate(trials, vr, repeat, jobs=1):
    # the policy and evaluator the printed table names (pubeval, composite), not the defaults
    s = RolloutSettings(trials=trials, seed=1, variance_reduction=vr, jobs=jobs,
                        backend="serial" if jobs == 1 else "local", chunk=max(36, trials // (4 * jobs)),
                        policy="pubeval", evaluator="composite")
    rollout(Position.initial(), s, trials=36)       # warm-up (tables, pool)
    return median_rate(lambda: rollout(Position.initial(), s), trials, repeat)


GNUBG_SCRIPT = """set threads 1
set jacoby off
new game
set board 4HPwATDgc/ABMA
set rollout trials {trials}
set rollout chequerplay plies 0
set rollout cubedecision plies 0
set rollout chequerplay prune off
set rollout cubeful {cubeful}
set rollout varredn {vr}
set rollout quasirandom on
set rollout seed 1
set rollout truncation enable off
set rollout bearofftruncation exact off
set rollout bearofftruncation onesided off
set rollout later enable off
rollout
"""


def gnubg_time(trials, vr, cubeful=False):
    """Seconds of a gnubg run rolling out the opening position (money, cube
    centred; cubeful or cubeless)."""
    with tempfile.NamedTemporaryFile("w", suffix=".gnubg", delete=False) as fh:
        fh.write(GNUBG_SCRIPT.format(trials=trials, vr="on" if vr else "off",
                                     cubeful="on" if cubeful else "off"))
        path = fh.name
    try:
        t0 = time.perf_counter()
        with open(path) as inp:
            subprocess.run([GNUBG, "-t", "-q"], stdin=inp, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True, timeout=1800)
        return time.perf_counter() - t0
    finally:
        os.unlink(path)


def gnubg_rollout_rate(small, big, vr, repeat, cubeful=False):
    if not os.path.exists(GNUBG):
        return None
    rates = []
    for _ in range(repeat):
        rates.append((big - small) / (gnubg_time(big, vr, cubeful)
                                      - gnubg_time(small, vr, cubeful)))
    return statistics.median(rates)


def gnubg_nn_rollout(trials, repeat):
    """gnubg_nn.rollout(position_id, ngames): only positional (pos, ngames)
    works in gnubg-nn 1.1.0a11; keyword calls misparse ngames and longer
    positional calls crash.  Returns (rate, means)."""
    try:
        import gnubg_nn
    except ImportError:
        return None
    pid = Position.initial().position_id()
    out = {}

    def run():
        out["r"] = gnubg_nn.rollout(pid, trials)

    rate = median_rate(run, trials, repeat)
    return rate, out["r"][0]


def eval_rates(repeat, quick):
    from bench_corpus import corpus
    from bgfast.movegen import legal_plays_batch

    boards, dice = corpus()
    boards, dice = boards[:8400], dice[:8400]        # 400 positions x 21 rolls
    repeat = max(5, repeat)
    _off, res = legal_plays_batch(boards, dice, validate=False)
    ev = get_evaluator("composite")
    ev.evaluate_batch(res[:100])
    r1 = median_rate(lambda: ev.evaluate_batch(res, nthreads=1), len(res), repeat)
    r2 = median_rate(lambda: ev.evaluate_batch(res, nthreads=2), len(res), repeat)
    peer = None
    try:
        import gnubg_nn

        sample = [b.tolist() for b in res[:20000 if not quick else 5000]]
        peer = median_rate(lambda: [gnubg_nn.probabilities(b, 0) for b in sample], len(sample),
                           max(1, repeat // 2))
    except ImportError:
        pass
    return len(res), r1, r2, peer


def fmt(x, unit=""):
    return "n/a" if x is None else f"{x:,.0f}{unit}"


def ratio(a, b):
    return "n/a" if not a or not b else f"{a / b:.1f}x"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer games (for a smoke run)")
    args = ap.parse_args()
    rep = args.repeat
    q = args.quick
    install_bearoff_tables()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; medians of {rep}; load average at start "
          f"{os.getloadavg()[0]:.1f} (a shared machine makes the 2-core figures pessimistic)")
    print("policies: bgfast = pubeval 0-ply (variance reduction with the composite evaluator:"
          " bear-off tables + calibrated pubeval); gnubg = its 0-ply neural net")
    n_plain = 1296 if q else 5184
    n_vr = 144 if q else 648
    b_plain = bgfast_rollout_rate(n_plain, False, rep)
    b_vr = bgfast_rollout_rate(n_vr, True, rep)
    g_plain = gnubg_rollout_rate(36, 324 if q else 1296, False, max(1, rep // 2 + 1))
    g_vr = gnubg_rollout_rate(18, 54 if q else 144, True, max(1, rep // 2 + 1))
    print("\n## Rollouts, games/s on one core, opening position, 0-ply cubeless")
    print(f"{'':34}{'bgfast':>10}{'gnubg':>10}{'ratio':>8}")
    print(f"{'without variance reduction':34}{fmt(b_plain):>10}{fmt(g_plain):>10}{ratio(b_plain, g_plain):>8}")
    print(f"{'with variance reduction':34}{fmt(b_vr):>10}{fmt(g_vr):>10}{ratio(b_vr, g_vr):>8}")
    nn = gnubg_nn_rollout(1296, rep)
    if nn:
        print(f"gnubg_nn.rollout: {fmt(nn[0])} games/s, but its means from the opening are "
              f"{tuple(round(x, 3) for x in nn[1])} (win, wg, wbg, lg, lbg): not a valid peer "
              "in gnubg-nn 1.1.0a11, listed for completeness")
    s1 = b_plain
    s2 = bgfast_rollout_rate(n_plain, False, rep, jobs=2)
    v2 = bgfast_rollout_rate(n_vr, True, rep, jobs=2)
    print("\n## Scaling (local process pool), games/s")
    print(f"{'':34}{'1 core':>10}{'2 cores':>10}{'speed-up':>10}")
    print(f"{'without variance reduction':34}{fmt(s1):>10}{fmt(s2):>10}{ratio(s2, s1):>10}")
    print(f"{'with variance reduction':34}{fmt(b_vr):>10}{fmt(v2):>10}{ratio(v2, b_vr):>10}")
    n, e1, e2, peer = eval_rates(rep, q)
    print(f"\n## 0-ply evaluations/s in batch ({n:,} positions)")
    print(f"{'':34}{'bgfast':>10}{'gnubg_nn':>10}{'ratio':>8}")
    print(f"{'1 thread':34}{fmt(e1):>10}{fmt(peer):>10}{ratio(e1, peer):>8}")
    print(f"{'2 threads':34}{fmt(e2):>10}{'':>10}{ratio(e2, e1):>8} vs 1 thread")
    print("(gnubg_nn.probabilities: its 0-ply neural net, one Python call per position)")


if __name__ == "__main__":
    main()
