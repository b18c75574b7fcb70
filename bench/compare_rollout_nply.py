"""bgfast rollouts with n-ply policies beside gnubg's, at equal settings, in one run.

For each setting (chequer-play plies, variance reduction on or off,
truncation) and each position (opening, middle game, race, holding game):
bgfast's rollout (``policy=net<plies>``, the net evaluating luck and
truncated positions, one process) and the Debian ``gnubg`` program's
(``gnubg -t``, threads 1, chequer play at the same plies with the move
filters of bgfast's search, no pruning nets, truncated positions valued at
0 plies), both cubeless, quasi-random dice, the exact two-sided bear-off
table ending a game.  Both play the same number of games (``--games``;
``--gnubg-games`` gives gnubg fewer, to save time at 2 plies), each with
its evaluation cache over its whole rollout (bgfast: its default chunk of
trials).  Printed per position: games/s of CPU time on each
side, their ratio, the equities with their standard errors and the
per-game variance (games x SE^2; speed at equal standard error is games/s
over the variance).  gnubg's start-up (loading its nets and databases) is
measured once and subtracted.  ``--cache`` adds bgfast with and without its
evaluation cache (hit rate, games/s); ``--consistency`` prints instead how
much each net's equity moves from 0 to 1 and from 1 to 2 plies.  Both
sides value races with their home-board tables; ``--gnubg-os-db FILE``
gives both a larger one-sided table, as in ``bench/compare_rollout.py``.
``--luck-plays K`` has bgfast pick each roll's luck play from the K best
plays by pubeval (``RolloutSettings.luck_plays``), as in that script.

Run: python bench/compare_rollout_nply.py [--plies 1 2] [--vr on off] [--truncate 0 7]
     [--games 72] [--gnubg-games N] [--positions ID ...] [--cache] [--gnubg-os-db FILE]
     [--luck-plays K]
"""
import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # this checkout

from bgfast import _net  # noqa: E402
from bgfast.evaluate import install_bearoff_tables  # noqa: E402
from bgfast.position import Position  # noqa: E402
from bgfast.rollout import RolloutSettings, rollout  # noqa: E402
from compare_rollout import add_luck_plays_option, add_os_db_option, use_os_db  # noqa: E402

GNUBG = "/usr/games/gnubg"
#: the shell command that runs ``gnubg -t -q`` (``--gnubg-os-db`` wraps it)
GNUBG_CMD = f"{GNUBG} -t -q"
POSITIONS = {"opening": "4HPwATDgc/ABMA", "middle": "mNvgAQaw5+ABMA", "race": "7bbFAADbtmkAAA",
             "holding": "bJ4LBwBYz8EBAw"}

GNUBG_SETUP = """set threads 1
set output digits 5
set jacoby off
new game
set board {position}
set rollout trials {trials}
set rollout chequerplay plies {plies}
set rollout cubedecision plies 0
set rollout chequerplay prune off
set rollout cubeful off
set rollout varredn {vr}
set rollout quasirandom on
set rollout seed {seed}
set rollout truncation enable {trunc_on}
set rollout truncation plies {truncate}
set rollout truncation chequerplay plies 0
set rollout truncation chequerplay prune off
set rollout truncation cubedecision plies 0
set rollout truncate-equal-player0 off
set rollout bearofftruncation exact on
set rollout bearofftruncation onesided off
set rollout later enable off
{filters}
"""


def gnubg_filters(plies: int) -> str:
    """gnubg move filters matching bgfast's search (bgfast._net.move_filters):
    the best n0 within w0 after 0 plies, then the best n1 within w1 after
    each further ply."""
    (n0, w0), (n1, w1) = _net.move_filters()
    lines = []
    for player in (0, 1):
        for p in range(1, plies + 1):
            lines.append(f"set rollout player {player} movefilter {p} 0 0 {n0} {w0}")
            for lev in range(1, p):
                lines.append(f"set rollout player {player} movefilter {p} {lev} 0 {n1} {w1}")
    return "\n".join(lines)


def _gnubg_run(script: str):
    """Run a gnubg script in a pseudo-terminal (gnubg prints rollout results
    only to a terminal); returns (CPU seconds of the run, its output)."""
    with tempfile.NamedTemporaryFile("w", suffix=".gnubg", delete=False) as fh:
        fh.write(script)
        path = fh.name
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(["script", "-qc", f"{GNUBG_CMD} -c {path}", "/dev/null"],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             check=True, timeout=7200).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), out
    finally:
        os.unlink(path)


def gnubg_startup(repeat: int = 3) -> float:
    """CPU seconds of a gnubg run that sets everything up and rolls out nothing."""
    s = GNUBG_SETUP.format(position=POSITIONS["opening"], trials=36, plies=1, vr="on", seed=1,
                           trunc_on="off", truncate=7, filters=gnubg_filters(1))
    return statistics.median(_gnubg_run(s)[0] for _ in range(repeat))


_NUM = r"([-+]?\d+\.\d+)"


def gnubg_rollout(pid, trials, plies, vr, truncate, startup, seed=1):
    """(games/s, equity, standard error) of gnubg's rollout."""
    s = GNUBG_SETUP.format(position=pid, trials=trials, plies=plies, vr="on" if vr else "off",
                           seed=seed, trunc_on="on" if truncate else "off",
                           truncate=max(truncate, 1), filters=gnubg_filters(plies)) + "rollout\n"
    cpu, out = _gnubg_run(s)
    tail = out[out.rindex("Rollout done"):]
    mean = re.search(r"CL\s+" + _NUM, tail)
    se = re.search(r"\[.*CL\s+" + _NUM + r"\]", tail)
    return trials / max(cpu - startup, 1e-9), float(mean.group(1)), float(se.group(1))


#: bgfast's luck plays with variance reduction (--luck-plays): the net's 0-ply
#: best of each roll's LUCK_PLAYS best plays by pubeval; 0: of every play, as gnubg
LUCK_PLAYS = 0


def bgfast_rollout(pid, trials, plies, vr, truncate, seed=1):
    """(games/s of CPU time, equity, standard error) of bgfast's rollout (one process)."""
    # the default chunk (216 trials): a policy's evaluation cache lives for a chunk, so
    # over a rollout of up to 216 games, as gnubg's lives for its whole rollout
    s = RolloutSettings(trials=trials, seed=seed, policy=f"net{plies}", evaluator="net",
                        variance_reduction=vr, truncate=truncate, jobs=1, backend="serial",
                        luck_plays=LUCK_PLAYS if vr else 0)
    t0 = time.process_time()
    r = rollout(Position.from_position_id(pid), s)
    return trials / (time.process_time() - t0), r.equity, r.stderr["equity"]


def cache_effect(pid, trials, plies, vr, truncate):
    """bgfast games/s with the evaluation cache and without, and its hit rate."""
    saved = _net.cache_size()
    try:
        _net.cache_counters(reset=True)
        on = bgfast_rollout(pid, trials, plies, vr, truncate)[0]
        lookups, hits = _net.cache_counters(reset=True)
        _net.set_cache_size(0)
        off = bgfast_rollout(pid, trials, plies, vr, truncate)[0]
    finally:
        _net.set_cache_size(saved)
    return on, off, hits / max(lookups, 1)


def ply_consistency(n=250, n2=80, seed=5):
    """How much each net's equity moves from 0 to 1 ply and from 1 to 2 plies
    on contact positions met in random play (bgfast's net and gnubg's through
    gnubg-nn): the luck estimate of an n-ply rollout leaves about the
    variance of these moves, ply after ply."""
    import numpy as np

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    import gnubg_nn
    from bgfast.net import default_net
    from bgfast.position import PositionClass, classify_boards
    from test_net import _random_boards

    b = _random_boards(6 * n, seed)
    b = np.ascontiguousarray(b[classify_boards(b) == PositionClass.CONTACT][::4][:n])

    def eq(p):
        p = np.asarray(p)
        return 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]

    m = default_net().model
    ours = {k: eq(m.evaluate_plies(b, k)) for k in (0, 1, 2)}
    theirs = {k: eq([gnubg_nn.probabilities(x.tolist(), k) for x in b[:n if k < 2 else n2]])
              for k in (0, 1, 2)}
    print(f"\n## Equity moves between plies, {len(b)} contact positions (2 plies: the first {n2})")
    for a, c in ((0, 1), (1, 2)):
        k = len(theirs[c])
        d1, d2 = ours[c][:k] - ours[a][:k], theirs[c] - theirs[a][:k]
        print(f"{a} -> {c} plies: bgfast mean {d1.mean():+.4f} sd {d1.std():.4f}; "
              f"gnubg-nn mean {d2.mean():+.4f} sd {d2.std():.4f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plies", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--vr", nargs="+", choices=["on", "off"], default=["on", "off"])
    ap.add_argument("--truncate", type=int, nargs="+", default=[0, 7])
    ap.add_argument("--games", type=int, default=72, help="bgfast games per rollout")
    ap.add_argument("--gnubg-games", type=int, default=None,
                    help="gnubg games per rollout [default: --games]")
    ap.add_argument("--positions", nargs="+", default=list(POSITIONS),
                    help="names of POSITIONS or Position IDs")
    ap.add_argument("--cache", action="store_true", help="bgfast with and without its cache")
    ap.add_argument("--consistency", action="store_true",
                    help="only the equity moves between plies of both nets (needs gnubg-nn)")
    add_luck_plays_option(ap)
    add_os_db_option(ap)
    args = ap.parse_args()
    if args.gnubg_games is None:
        args.gnubg_games = args.games
    global LUCK_PLAYS
    LUCK_PLAYS = args.luck_plays
    if args.gnubg_os_db:
        global GNUBG_CMD
        GNUBG_CMD = use_os_db(args.gnubg_os_db)
    install_bearoff_tables()
    if args.consistency:
        ply_consistency()
        return
    rollout(Position.initial(), RolloutSettings(trials=2, jobs=1, policy="net1"))   # warm-up
    import bgfast

    print(f"# bgfast from {os.path.dirname(bgfast.__file__)}")
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; CPU time, one process each side; load "
          f"average at start {os.getloadavg()[0]:.1f}")
    have_gnubg = os.path.exists(GNUBG)
    startup = gnubg_startup() if have_gnubg else None
    if have_gnubg:
        print(f"# gnubg start-up {startup:.2f} s CPU (subtracted); move filters "
              f"{_net.move_filters()} (kept plays, equity window) on both sides")
    if LUCK_PLAYS:
        print(f"# bgfast's luck plays: the net's best of the {LUCK_PLAYS} best by pubeval "
              f"(gnubg: of every play)")
    for plies in args.plies:
        for vr in args.vr:
            for trunc in args.truncate:
                print(f"\n## {plies}-ply chequer play, variance reduction {vr}, "
                      f"{'truncated at ' + str(trunc) + ' plies' if trunc else 'to the end'}; "
                      f"bgfast {args.games} games, gnubg {args.gnubg_games}")
                print(f"{'position':10}{'bgfast g/s':>11}{'gnubg g/s':>11}{'ratio':>7}"
                      f"{'bgfast equity':>20}{'gnubg equity':>20}{'var/game bg':>12}"
                      f"{'gnubg':>9}{'equal-SE ratio':>15}")
                for name in args.positions:
                    pid = POSITIONS.get(name, name)
                    b = bgfast_rollout(pid, args.games, plies, vr == "on", trunc)
                    g = (gnubg_rollout(pid, args.gnubg_games, plies, vr == "on", trunc, startup)
                         if have_gnubg else None)
                    vb = b[2] ** 2 * args.games
                    line = (f"{name:10}{b[0]:11.2f}{g[0] if g else float('nan'):11.2f}"
                            f"{(b[0] / g[0]) if g else float('nan'):6.1f}x"
                            f"{b[1]:+11.4f} ± {b[2]:.4f}")
                    if g:
                        vg = g[2] ** 2 * args.gnubg_games
                        eq = (b[0] / vb) / (g[0] / vg) if vb > 0 and vg > 0 else float("nan")
                        line += f"{g[1]:+11.4f} ± {g[2]:.4f}{vb:12.2g}{vg:9.2g}{eq:14.1f}x"
                    print(line, flush=True)
                    if args.cache:
                        on, off, rate = cache_effect(pid, args.games, plies, vr == "on", trunc)
                        print(f"{'':10}cache: {on:.2f} g/s with, {off:.2f} without "
                              f"({on / off:.2f}x), hit rate {rate:.1%}", flush=True)


if __name__ == "__main__":
    main()
