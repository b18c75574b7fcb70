"""pytest-benchmark: rollouts and batch evaluation (bgfast only; the side-by-side
comparison with gnubg is bench/compare_rollout.py).

Run: python -m pytest bench/test_bench_rollout.py --benchmark-enable
"""
import pytest

from bench_corpus import corpus
from bgfast.evaluate import get_evaluator, install_bearoff_tables
from bgfast.movegen import legal_plays_batch
from bgfast.position import Position
from bgfast.rollout import RolloutSettings, rollout


@pytest.fixture(scope="module", autouse=True)
def tables():
    install_bearoff_tables()


@pytest.mark.parametrize("vr,trials", [(False, 1296), (True, 72)], ids=["plain", "vr"])
def test_rollout_one_core(benchmark, vr, trials):
    s = RolloutSettings(trials=trials, seed=1, variance_reduction=vr, jobs=1, backend="serial")
    r = benchmark(rollout, Position.initial(), s)
    assert r.games == trials
    if benchmark.stats:          # None when benchmarks are disabled (a plain test run)
        benchmark.extra_info["games_per_second"] = trials / benchmark.stats.stats.median


@pytest.fixture(scope="module")
def plays():
    boards, dice = corpus()
    _off, res = legal_plays_batch(boards[:21000], dice[:21000], validate=False)
    return res


@pytest.mark.parametrize("nthreads", [1, 2])
def test_evaluate_batch(benchmark, plays, nthreads):
    ev = get_evaluator("composite")
    p = benchmark(ev.evaluate_batch, plays, nthreads=nthreads)
    assert p.shape == (len(plays), 5)
    if benchmark.stats:
        benchmark.extra_info["evaluations_per_second"] = len(plays) / benchmark.stats.stats.median
