"""pytest-benchmark: bear-off database builds and probes.

Run: python -m pytest bench/test_bench_bearoff.py --benchmark-enable
(``bench/compare_bearoff.py`` times the same builds beside gnubg's makebearoff.)
"""
import os

import numpy as np
import pytest

import bgfast.bearoff as bo

MAKEBEAROFF = "/usr/games/makebearoff"


@pytest.mark.parametrize("threads", [1, os.cpu_count() or 1])
def test_build_one_sided_6(benchmark, tmp_path, threads):
    path = tmp_path / "o6.bgb"
    table = benchmark(bo.build_one_sided, 6, 15, path, threads=threads)
    assert table.size == 54264 and path.exists()


def test_build_two_sided_6x6(benchmark, tmp_path):
    path = tmp_path / "t6.bgb"
    table = benchmark(bo.build_two_sided, 6, path)
    assert table.size == 924


def test_makebearoff_one_sided_6(benchmark, tmp_path):
    if not os.path.exists(MAKEBEAROFF):
        pytest.skip("Debian's gnubg (makebearoff) is not installed")
    import subprocess

    out = str(tmp_path / "g6.bd")
    benchmark.pedantic(subprocess.run, args=([MAKEBEAROFF, "-o", "6", "-f", out],),
                       kwargs={"check": True, "stdout": subprocess.DEVNULL,
                               "stderr": subprocess.DEVNULL}, rounds=3, iterations=1)


def bearoff_boards(n, max_checkers, seed=5):
    """``n`` random two-sided bear-off boards, 1..max_checkers a side on 6 points."""
    rng = np.random.default_rng(seed)
    boards = np.zeros((n, 2, 25), dtype=np.uint8)
    for b in boards:
        for side in range(2):
            for _ in range(rng.integers(1, max_checkers + 1)):
                b[side, rng.integers(0, 6)] += 1
    return boards


def test_probe_one_sided_race(benchmark):
    table = bo.default_one_sided()
    res = benchmark(table.probe_batch, bearoff_boards(10000, 15))
    assert res["inside"].all()


def test_probe_two_sided_6x6(benchmark):
    table = bo.default_two_sided()
    res = benchmark(table.probe_batch, bearoff_boards(10000, 6))
    assert res["inside"].all()
