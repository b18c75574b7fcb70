"""pytest-benchmark: move generation on the fixed corpus.

Run: python -m pytest bench/test_bench_movegen.py --benchmark-enable
"""
import numpy as np
import pytest

from bench_corpus import corpus
from bgfast.movegen import count_shots, legal_plays_batch


@pytest.fixture(scope="module")
def data():
    return corpus()


def test_legal_plays_batch(benchmark, data):
    boards, dice = data
    off, res = benchmark(legal_plays_batch, boards, dice, validate=False)
    benchmark.extra_info["results"] = int(len(res))
    if benchmark.stats is not None:          # None when benchmarks are disabled
        benchmark.extra_info["results_per_second"] = len(res) / benchmark.stats.stats.median


def test_legal_plays_batch_with_moves(benchmark, data):
    boards, dice = data
    benchmark(legal_plays_batch, boards, dice, validate=False, with_moves=True)


def test_count_shots(benchmark, data):
    boards, _ = data
    benchmark(count_shots, np.ascontiguousarray(boards[::21]))


def test_gnubg_nn_moves(benchmark, data):
    gnubg_nn = pytest.importorskip("gnubg_nn")
    boards, dice = data
    lists = [b.tolist() for b in boards[:4200]]
    ds = dice[:4200].tolist()

    def run():
        return sum(len(gnubg_nn.moves(b, d1, d2)) for b, (d1, d2) in zip(lists, ds))

    benchmark(run)
