"""A bounded load test of ``bgfast serve``: requests per second and latency of /hint.

    python bench/load_server.py [--requests 200] [--seconds 60] [--clients 4] [--workers 2]

Starts this checkout's server on a free loopback port (``bgfast serve --port
0``), then for each of 0 and 2 ply sends ``--requests`` POST /hint requests
from ``--clients`` concurrent clients (threads with one httpx client each),
stopping early once ``--seconds`` have passed.  The requests go round a fixed
corpus: seeded contact positions of ``bench_corpus``, each with one of the 21
rolls in turn.  Reports, per ply, the requests completed, the wall time,
requests per second and the p50/p99 latency in milliseconds, then stops the
server.  Every request must answer 200 (a failure ends the run).  Nothing
leaves the loopback interface.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

import httpx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)                 # this checkout's bgfast
from bench_corpus import ALL_ROLLS, contact_positions  # noqa: E402

from bgfast.position import Position  # noqa: E402


def requests_corpus(n: int, seed: int = 1) -> list[dict]:
    """``n`` /hint bodies: contact position k with roll k mod 21."""
    boards = contact_positions(max(1, n // 21 + 1), seed)
    out = []
    for k in range(n):
        d1, d2 = (int(v) for v in ALL_ROLLS[k % len(ALL_ROLLS)])
        pid = Position(boards[k % len(boards)]).position_id()
        out.append({"position": pid, "dice": [d1, d2]})
    return out


def start_server(workers: int):
    """``bgfast serve`` on a free loopback port -> (process, base URL), once ready."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "bgfast", "serve", "--host", "127.0.0.1",
                             "--port", "0", "--workers", str(workers)],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    line = proc.stderr.readline()
    if not line.startswith("bgfast serve: http://"):
        proc.kill()
        proc.wait()
        raise SystemExit(f"the server did not start: {line!r}")
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    return proc, line.split()[2].rstrip("/")


def load(url: str, bodies: list[dict], ply: int, clients: int, seconds: float) -> dict:
    """Send ``bodies`` at ``ply`` from ``clients`` threads (until ``seconds``)."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    next_index = iter(range(len(bodies)))
    deadline = time.perf_counter() + seconds

    def client():
        with httpx.Client(base_url=url, timeout=120) as c:
            while time.perf_counter() < deadline:
                with lock:
                    k = next(next_index, None)
                if k is None:
                    return
                t0 = time.perf_counter()
                r = c.post("/hint", json={**bodies[k], "ply": ply})
                took = time.perf_counter() - t0
                with lock:
                    if r.status_code != 200:
                        errors.append(f"{r.status_code} {r.text[:200]}")
                    latencies.append(took)

    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    if errors:
        raise SystemExit(f"{len(errors)} requests failed, the first: {errors[0]}")
    latencies.sort()
    q = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) > 1 else latencies * 99
    return {"ply": ply, "requests": len(latencies), "seconds": wall,
            "per_second": len(latencies) / wall, "p50_ms": 1000 * q[49], "p99_ms": 1000 * q[98]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200, help="requests per ply")
    ap.add_argument("--seconds", type=float, default=60.0, help="time limit per ply")
    ap.add_argument("--clients", type=int, default=4, help="concurrent clients")
    ap.add_argument("--workers", type=int, default=2, help="the server's worker processes")
    args = ap.parse_args(argv)
    if args.requests < 1 or args.clients < 1 or args.seconds <= 0:
        ap.error("--requests and --clients must be at least 1, --seconds above 0")
    bodies = requests_corpus(args.requests)
    proc, url = start_server(args.workers)
    try:
        rows = [load(url, bodies, ply, args.clients, args.seconds) for ply in (0, 2)]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(f"bgfast serve, {args.workers} workers, {args.clients} clients, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}")
    print("| /hint | requests | seconds | requests/s | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['ply']}-ply | {r['requests']} | {r['seconds']:.1f} | {r['per_second']:.1f} "
              f"| {r['p50_ms']:.1f} | {r['p99_ms']:.1f} |")


if __name__ == "__main__":
    main()
