"""pytest-benchmark: batch analysis, the cube kernel and the net (bgfast only;
the side-by-side comparison with gnubg-nn is bench/compare_analyze.py).

Run: python -m pytest bench/test_bench_analyze.py --benchmark-enable
"""
import io

import numpy as np
import pytest

from bgfast.analyze import AnalysisSettings, run
from bgfast.cube import cube_decision, cube_decisions
from bgfast.evaluate import evaluate_ply
from bgfast.formats import CubeOwner, MatchState
from bgfast.met import MatchScore
from bgfast.position import position_ids
from corpus import self_play_positions


@pytest.fixture(scope="module")
def boards():
    b, _ = self_play_positions(20_000, 31)
    return b


@pytest.fixture(scope="module")
def cube_lines(boards):
    mids = [MatchState(match_length=7, score=(a, b), cube_value=c,
                       cube_owner=CubeOwner.CENTRED if c == 1 else CubeOwner.PLAYER1).match_id()
            for a in range(7) for b in range(7) for c in (1, 2)]
    return [f"{pid}\n" if k % 2 == 0 else f"{pid} {mids[k % len(mids)]}\n"
            for k, pid in enumerate(position_ids(boards))]


def _rate(benchmark, n):
    if benchmark.stats:          # None when benchmarks are disabled (a plain test run)
        benchmark.extra_info["per_second"] = n / benchmark.stats.stats.median


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_analyze_cube_rows_one_process(benchmark, cube_lines, fmt):
    run(cube_lines[:100], stream=io.StringIO(), fmt=fmt, settings=AnalysisSettings(ply=0))          # load the net and tables
    out = benchmark(lambda: run(cube_lines, stream=io.StringIO(), fmt=fmt, jobs=1,
                                    settings=AnalysisSettings(ply=0)))
    assert out["rows"] == len(cube_lines) and out["errors"] == 0
    _rate(benchmark, len(cube_lines))


def test_net_batch_evaluation(benchmark, boards):
    evaluate_ply(boards[:10], 0, "net")
    p = benchmark(evaluate_ply, boards, 0, "net")
    assert p.shape == (len(boards), 5)
    _rate(benchmark, len(boards))


def test_cube_decisions_match_rows(benchmark):
    rng = np.random.default_rng(3)
    w = rng.uniform(0, 1, 50_000)
    p = np.stack([w, w * 0.3, w * 0.01, (1 - w) * 0.3, (1 - w) * 0.01], axis=1)
    d = benchmark(cube_decisions, p, match=MatchScore(7, 2, 4))
    assert len(d) == len(p)
    _rate(benchmark, len(p))


def test_cube_decision_one_position(benchmark):
    d = benchmark(cube_decision, (0.6, 0.2, 0.01, 0.1, 0.005), match=MatchScore(7, 2, 3))
    assert d.action_text
