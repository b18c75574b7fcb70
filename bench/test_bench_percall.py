"""pytest-benchmark: per-call speed of the Python API beside gnubg-nn
(the measures of bench/compare_percall.py, one board and one roll a call).

Run: python -m pytest bench/test_bench_percall.py --benchmark-enable
"""
import pytest

from compare_percall import measures, percall_corpus

PAIRS = 500


def _table():
    boards, dice = percall_corpus(PAIRS)
    return {name.strip(" ."): (ours, theirs, ours0, theirs0)
            for name, ours, theirs, ours0, theirs0, _n in measures(boards, dice)}


@pytest.fixture(scope="module")
def table():
    return _table()


NAMES = [
    "rank_plays 0-ply cubeless (vs bestmove list=1)",
    "rank_plays 0-ply cubeful money (vs bestmove list=1)",
    "legal_plays_batch, one board (vs moves)",
    "legal_plays, Play objects (vs moves)",
    "Position.from_position_id (vs boardfromid)",
    "Position.position_id (vs position_id)",
    "evaluate one position 0-ply (vs probabilities)",
]


@pytest.mark.parametrize("name", NAMES)
def test_bgfast(benchmark, table, name):
    benchmark.extra_info["calls"] = PAIRS
    benchmark(table[name][0])


@pytest.mark.parametrize("name", NAMES)
def test_gnubg_nn(benchmark, table, name):
    pytest.importorskip("gnubg_nn")
    benchmark.extra_info["calls"] = PAIRS
    benchmark(table[name][1])


@pytest.mark.parametrize("name", [NAMES[0], NAMES[-1]])
def test_bgfast_no_cache(benchmark, table, name):
    benchmark.extra_info["calls"] = PAIRS
    benchmark(table[name][2])


@pytest.mark.parametrize("name", [NAMES[0], NAMES[-1]])
def test_gnubg_nn_no_cache(benchmark, table, name):
    pytest.importorskip("gnubg_nn")
    benchmark.extra_info["calls"] = PAIRS
    benchmark(table[name][3])
