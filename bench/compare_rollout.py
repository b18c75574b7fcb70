"""bgfast rollouts beside gnubg's at equal settings, in one run.

For each setting (policy plies, with or without variance reduction) a table
over four positions (opening, middle game, race, holding game):

    position | bgfast games/s | gnubg games/s | ratio | variance per game
    (bgfast, gnubg) | equal-SE ratio | each side's equity +- SE | bgfast on 2 processes

Settings on both sides: cubeless, quasi-random dice (bgfast: stratified
first two rolls; gnubg: ``set rollout quasirandom on``, its rotation of the
rolls), no truncation, one process (gnubg ``set threads 1``), the net
playing and evaluating (bgfast ``policy="net0"/"net1"/"net2",
evaluator="net"``; gnubg chequer play 0/1/2-ply, cubeless, prune off), and
the same bear-off handling, printed with each table: by default games are
played to the end (bgfast ``early_stop=False``; gnubg
``bearofftruncation exact off`` and ``onesided off``); ``--early-stop``
pairs bgfast's stop inside its two-sided table with gnubg's ``exact on``.
Both sides value races with their home-board tables (bgfast's 6-point race
table, ``bench/equal_settings.py``); ``--gnubg-os-db FILE`` gives both a
larger one-sided table instead: gnubg reads FILE (``makebearoff -o 10 -f
FILE``), which Debian's gnubg looks for only as
``/var/lib/gnubg/gnubg_os.bd``, so FILE is bind-mounted there in a private
mount namespace (``unshare -m``, as root; the system's directory is not
changed), and bgfast uses its race table of the same points.

Rates on one process are in CPU time (the machine is shared: wall-clock
rates there measure the other jobs).  gnubg's rate is the difference of two
runs with different trial counts (so start-up does not count), each timed by
the CPU time of the whole program, run under a pseudo-terminal so that gnubg
prints its final results; its variance per game is SE^2 x trials from the
SE it prints (``--digits`` decimals).  The 2-process bgfast column (local
process pool) and its ratio to one process are in wall-clock time.  bgfast's variance per game is its SE^2 x games.  The equal-SE
ratio is ``ratio x gnubg variance / bgfast variance``: how much faster bgfast
reaches the same standard error.  Rates are medians of ``--repeat`` runs
(the same seed each time, so the means and SEs do not change); the machine
is shared, so read the ratios.

Run: python bench/compare_rollout.py [--repeat 3] [--quick] [--policy-plies 0 1 2]
     [--vr both|on|off] [--positions opening race ...] [--trials N] [--gnubg-trials S B]
     [--early-stop] [--no-jobs2] [--evals] [--gnubg-os-db FILE]
"""
import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import atexit
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
# this tree's bgfast, not an installed one
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bgfast.evaluate import get_evaluator, install_bearoff_tables  # noqa: E402
from bgfast.position import Position  # noqa: E402
from bgfast.rollout import RolloutSettings, rollout  # noqa: E402

GNUBG = "/usr/games/gnubg"
#: the shell command that runs ``gnubg -t`` (``--gnubg-os-db`` wraps it)
GNUBG_CMD = f"{GNUBG} -t -q"
#: the positions every rollout engineer measures (gnubg position IDs)
POSITIONS = {"opening": "4HPwATDgc/ABMA", "middle": "mNvgAQaw5+ABMA",
             "race": "7bbFAADbtmkAAA", "holding": "bJ4LBwBYz8EBAw"}
#: bgfast policy for each number of chequer-play plies
POLICY_OF_PLIES = {0: "net0", 1: "net1", 2: "net2"}


def median_rate(fn, count, repeat):
    rates = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        rates.append(count / (time.perf_counter() - t0))
    return statistics.median(rates)


def median_rates(fn, count, repeat):
    """(wall-clock rate, CPU-time rate of this process), medians of ``repeat``."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(count / (time.perf_counter() - t0))
        cpu.append(count / max(time.process_time() - c0, 1e-9))
    return statistics.median(wall), statistics.median(cpu)


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


#: bgfast's luck plays with variance reduction (--luck-plays): the net's best
#: of pubeval's best K plays of each roll, or of every play (0, gnubg's scheme)
LUCK_PLAYS = 0


def bgfast_settings(trials, vr, plies=0, early_stop=False, jobs=1, seed=1):
    return RolloutSettings(trials=trials, seed=seed, variance_reduction=vr, quasi_random=True,
                           early_stop=early_stop, truncate=0, policy=POLICY_OF_PLIES[plies],
                           evaluator="net", jobs=jobs, luck_plays=LUCK_PLAYS if vr else 0,
                           backend="serial" if jobs == 1 else "local",
                           chunk=max(36, min(1296, trials // (4 * jobs))))


def bgfast_run(pid, trials, vr, repeat, plies=0, early_stop=False, jobs=1):
    """((wall-clock, CPU-time) games/s medians, the last RolloutResult); the
    CPU time is this process's (meaningful for one process only)."""
    pos = Position.from_position_id(pid)
    s = bgfast_settings(trials, vr, plies, early_stop, jobs)
    rollout(pos, s, trials=36)                       # warm-up (net, tables, pool)
    out = {}

    def run():
        out["r"] = rollout(pos, s)

    return median_rates(run, trials, repeat), out["r"]


GNUBG_SCRIPT = """set threads 1
set jacoby off
set output digits {digits}
new game
set board {pid}
set rollout trials {trials}
set rollout chequerplay plies {plies}
set rollout chequerplay cubeful off
set rollout cubedecision plies 0
set rollout chequerplay prune off
set rollout cubeful {cubeful}
set rollout varredn {vr}
set rollout quasirandom on
set rollout seed {seed}
set rollout truncation enable off
set rollout bearofftruncation exact {exact}
set rollout bearofftruncation onesided off
set rollout later enable off
rollout
"""

_NUM = r"[-+]?\d+\.\d+"
_ROW = re.compile(rf"^\s*({_NUM}) ({_NUM}) ({_NUM}) - ({_NUM}) ({_NUM}) ({_NUM}) C[LF]\s+({_NUM})")
_SE = re.compile(rf"^\s*\[({_NUM}) ({_NUM}) ({_NUM}) - ({_NUM}) ({_NUM}) ({_NUM}) C[LF]\s+({_NUM})\]")


def parse_gnubg_rollout(text):
    """(probabilities, equity, SE of the equity) of the final results gnubg
    prints after ``Rollout done``, or None."""
    tail = text.split("Rollout done", 1)
    if len(tail) < 2:
        return None
    lines = tail[1].replace("\r", "\n").splitlines()
    for i, line in enumerate(lines):
        m = _ROW.match(line)
        if m and i + 1 < len(lines):
            s = _SE.match(lines[i + 1])
            if s:
                v = [float(x) for x in m.groups()]
                return v[:6], v[6], float(s.group(7))
    return None


def gnubg_run_once(pid, trials, vr, plies=0, cubeful=False, exact=False, digits=3, seed=1):
    """(wall-clock seconds, CPU seconds, parsed results) of one gnubg program
    run rolling out ``pid`` (money, cube centred).  gnubg prints its results
    only to a terminal, so it runs under ``script``."""
    with tempfile.NamedTemporaryFile("w", suffix=".gnubg", delete=False) as fh:
        fh.write(GNUBG_SCRIPT.format(pid=pid, trials=trials, vr="on" if vr else "off",
                                     plies=plies, cubeful="on" if cubeful else "off",
                                     exact="on" if exact else "off", digits=digits, seed=seed))
        path = fh.name
    try:
        t0, c0 = time.perf_counter(), _children_cpu()
        out = subprocess.run(["script", "-qfec", f"{GNUBG_CMD} < {path}", "/dev/null"],
                             stdin=subprocess.DEVNULL, capture_output=True, check=True,
                             timeout=3600, text=True, errors="replace")
        return (time.perf_counter() - t0, _children_cpu() - c0,
                parse_gnubg_rollout(out.stdout))
    finally:
        os.unlink(path)


def gnubg_run(pid, small, big, vr, repeat, plies=0, exact=False, digits=3):
    """(games/s median of (big - small) / (t_big - t_small) in CPU time,
    results of the ``big`` run), or None without gnubg."""
    if not os.path.exists(GNUBG):
        return None
    rates, res = [], None
    for _ in range(repeat):
        _w, ts, _r = gnubg_run_once(pid, small, vr, plies, exact=exact, digits=digits)
        _w, tb, res = gnubg_run_once(pid, big, vr, plies, exact=exact, digits=digits)
        rates.append((big - small) / max(tb - ts, 1e-9))
    return statistics.median(rates), res


def gnubg_rollout_rate(small, big, vr, repeat, cubeful=False):
    """gnubg games/s (wall-clock) from the opening (cubeful or cubeless,
    0-ply), start-up subtracted (for bench/compare_rollout_cubeful.py)."""
    if not os.path.exists(GNUBG):
        return None
    rates = []
    for _ in range(repeat):
        ts, _c, _r = gnubg_run_once(POSITIONS["opening"], small, vr, cubeful=cubeful)
        tb, _c, _r = gnubg_run_once(POSITIONS["opening"], big, vr, cubeful=cubeful)
        rates.append((big - small) / max(tb - ts, 1e-9))
    return statistics.median(rates)


def eval_rates(repeat, quick):
    from bench_corpus import corpus
    from bgfast.movegen import legal_plays_batch

    boards, dice = corpus()
    boards, dice = boards[:8400], dice[:8400]        # 400 positions x 21 rolls
    repeat = max(5, repeat)
    _off, res = legal_plays_batch(boards, dice, validate=False)
    ev = get_evaluator("net")
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


def trial_counts(plies, vr, quick):
    """(bgfast trials, gnubg small, gnubg big) for a setting."""
    if plies == 0:
        return ((1296, 72, 216) if quick else (2592, 144, 648)) if vr else \
            ((1296, 144, 648) if quick else (5184, 288, 2592))
    if plies == 1:
        return ((144, 18, 54) if quick else (648, 36, 216)) if vr else \
            ((324, 36, 144) if quick else (1296, 72, 432))
    return ((36, 6, 18) if quick else (144, 12, 48)) if vr else \
        ((72, 12, 36) if quick else (216, 18, 90))


def table(plies, vr, names, args):
    n, small, big = trial_counts(plies, vr, args.quick)
    n = args.trials or n
    small, big = args.gnubg_trials or (small, big)
    grep = max(1, args.repeat // 2 + 1)
    bear = ("bgfast early_stop=True (exact two-sided values inside its table) | gnubg "
            "bearofftruncation exact on, onesided off" if args.early_stop else
            "played to the end: bgfast early_stop=False | gnubg bearofftruncation exact off, "
            "onesided off")
    print(f"\n## net policy {plies}-ply, {'with' if vr else 'without'} variance reduction, "
          f"cubeless, quasi-random, no truncation, one process")
    if vr and LUCK_PLAYS:
        print(f"bgfast's luck plays: the net's best of the {LUCK_PLAYS} plays pubeval scores best "
              "(gnubg: of every play)")
    print(f"bgfast policy={POLICY_OF_PLIES[plies]!r} evaluator='net', {n} trials (medians of "
          f"{args.repeat}); gnubg chequer play {plies}-ply cubeless, prune off, {big} - {small} "
          f"trials (medians of {grep}); bear-off: {bear}")
    hdr = ("| position | bgfast games/s | gnubg games/s | ratio | bgfast var/game | "
           "gnubg var/game | equal-SE ratio | bgfast equity | gnubg equity | "
           "bgfast 2 proc games/s | 2 proc / 1 proc |")
    print("(one-process rates in CPU time; the 2-process rate and its ratio to one process "
          "in wall-clock time)")
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    for name in names:
        pid = POSITIONS[name]
        load = os.getloadavg()[0]
        (w1, b1), rb = bgfast_run(pid, n, vr, args.repeat, plies, args.early_stop)
        g = gnubg_run(pid, small, big, vr, grep, plies, args.early_stop, args.digits)
        b2 = None
        if args.jobs2:
            (b2, _), _ = bgfast_run(pid, n, vr, args.repeat, plies, args.early_stop, jobs=2)
        bse = rb.stderr["equity"]
        bvar = bse ** 2 * rb.games
        gr, gvar, geq = None, None, "n/a"
        if g is not None:
            gr, res = g
            if res is not None:
                gvar = res[2] ** 2 * big
                geq = f"{res[1]:+.4f} ± {res[2]:.{args.digits}f}"
        eqse = (gr and gvar and bvar) and b1 / gr * gvar / bvar
        print(f"| {name} | {fmt(b1)} | {fmt(gr)} | {ratio(b1, gr)} | {bvar:.3g} | "
              f"{'n/a' if gvar is None else f'{gvar:.3g}'} | "
              f"{'n/a' if not eqse else f'{eqse:.2f}x'} | {rb.equity:+.4f} ± {bse:.4f} | {geq} | "
              f"{fmt(b2)} | {ratio(b2, w1)} |", flush=True)
        if args.verbose:
            print(f"  (load {load:.1f}; bgfast {rb.average_plies:.1f} plies a game, "
                  f"{fmt(w1)} games/s wall-clock on one process)")


def gnubg_with_os_db(path: str) -> tuple[int, str]:
    """``(points, command)``: the shell command that runs ``gnubg -t -q``
    (with any arguments after it) reading the one-sided database ``path``
    as ``/var/lib/gnubg/gnubg_os.bd`` (a private bind mount over a copy of
    that directory, for gnubg's process only), and the database's points."""
    with open(path, "rb") as fh:
        head = fh.read(40).decode("ascii", "replace")
    m = re.match(r"gnubg-OS-(\d\d)-15-", head)
    if not m:
        sys.exit(f"{path}: not a gnubg one-sided 15-checker database")
    work = tempfile.mkdtemp(prefix="gnubg-varlib-")
    atexit.register(shutil.rmtree, work, True)
    for name in os.listdir("/var/lib/gnubg"):
        src = os.path.join("/var/lib/gnubg", name)
        if os.path.isfile(src):
            with open(src, "rb") as a, open(os.path.join(work, name), "wb") as b:
                b.write(a.read())
    os.symlink(os.path.abspath(path), os.path.join(work, "gnubg_os.bd"))
    return int(m.group(1)), (f"unshare -m sh -c 'mount --bind {work} /var/lib/gnubg && "
                             f"exec {GNUBG} -t -q \"$@\"' sh")


def add_luck_plays_option(ap) -> None:
    """The ``--luck-plays K`` option (bgfast's ``RolloutSettings.luck_plays``)."""
    ap.add_argument("--luck-plays", type=int, default=0, metavar="K",
                    help="bgfast's luck plays among pubeval's best K plays of each roll "
                         "(RolloutSettings.luck_plays; 0, the default here: every play, as "
                         "gnubg; a bgfast rollout with a 0-ply policy defaults to 6)")


def add_os_db_option(ap) -> None:
    """The ``--gnubg-os-db FILE`` option (see :func:`use_os_db`)."""
    ap.add_argument("--gnubg-os-db", metavar="FILE",
                    help="a gnubg one-sided database (makebearoff -o 10 -f FILE): both engines "
                         "value the races it holds by table (needs root for unshare -m)")


def use_os_db(path: str) -> str:
    """Give both engines the race table of the gnubg one-sided database
    ``path``: bgfast through ``$BGFAST_RACE_POINTS`` (set before its tables
    are installed), gnubg through the command returned
    (:func:`gnubg_with_os_db`)."""
    points, command = gnubg_with_os_db(path)
    os.environ["BGFAST_RACE_POINTS"] = str(points)
    print(f"# race table: {points} points on both sides (bgfast's race table; gnubg "
          f"{path} as /var/lib/gnubg/gnubg_os.bd)")
    return command


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer games (for a smoke run)")
    ap.add_argument("--policy-plies", type=int, nargs="+", default=[0], choices=[0, 1, 2])
    ap.add_argument("--vr", choices=["both", "on", "off"], default="both")
    ap.add_argument("--positions", nargs="+", default=list(POSITIONS), choices=list(POSITIONS))
    ap.add_argument("--early-stop", action="store_true",
                    help="pair bgfast's early stop with gnubg's exact bear-off truncation")
    ap.add_argument("--trials", type=int, help="bgfast trials (default: by setting)")
    ap.add_argument("--gnubg-trials", type=int, nargs=2, metavar=("SMALL", "BIG"),
                    help="gnubg's two trial counts (default: by setting)")
    ap.add_argument("--digits", type=int, default=5, help="decimals gnubg prints")
    ap.add_argument("--no-jobs2", dest="jobs2", action="store_false",
                    help="skip the 2-process bgfast column")
    ap.add_argument("--evals", action="store_true", help="also 0-ply evaluations/s in batch")
    ap.add_argument("--verbose", action="store_true")
    add_luck_plays_option(ap)
    add_os_db_option(ap)
    args = ap.parse_args()
    global LUCK_PLAYS
    LUCK_PLAYS = args.luck_plays
    if args.gnubg_os_db:
        global GNUBG_CMD
        GNUBG_CMD = use_os_db(args.gnubg_os_db)
    install_bearoff_tables()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; load average at start "
          f"{os.getloadavg()[0]:.1f} (a shared machine: read the ratios)")
    vrs = {"both": (False, True), "on": (True,), "off": (False,)}[args.vr]
    for plies in args.policy_plies:
        for vr in vrs:
            table(plies, vr, args.positions, args)
    if args.evals:
        n, e1, e2, peer = eval_rates(args.repeat, args.quick)
        print(f"\n## 0-ply evaluations/s in batch ({n:,} positions), bgfast net")
        print(f"1 thread {fmt(e1)}, 2 threads {fmt(e2)} ({ratio(e2, e1)}); gnubg_nn.probabilities "
              f"one call per position {fmt(peer)} ({ratio(e1, peer)})")
    print(f"\n# load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
