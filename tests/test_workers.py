"""The ordered parallel map behind batch analysis: order, shared-memory
hand-overs, failures in a worker, a worker that dies, and clean-up."""
import os
import signal
import time

import pytest

from bgfast import _workers
from bgfast._workers import WorkerError, ordered_map
from bgfast.errors import InvalidIdError

from procs import children


def _square_sum(block, args):
    scale, delay = args
    if delay:
        time.sleep(delay)
    return sum(scale * x * x for x in block), os.getpid()


def _fails_on_13(block, args):
    if 13 in block:
        raise InvalidIdError("bad block with 13")
    return list(block)


def _big(block, args):
    """A result far larger than a pipe buffer, and bytes first."""
    n = block[0]
    return bytes([n % 251]) * (300_000 + n), n, "x" * 50_000


def _echo_len(block, args):
    return len(block), block[:3], block[-3:]


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers need fork")


@pytest.mark.parametrize("jobs", [2, 3])
def test_results_come_in_order_and_both_processes_work(jobs):
    blocks = [list(range(k, k + 50)) for k in range(0, 5000, 50)]
    before = children()
    out = list(ordered_map(_square_sum, blocks, (3, 0.002), jobs=jobs))
    assert [v for v, _ in out] == [sum(3 * x * x for x in b) for b in blocks]
    pids = {pid for _, pid in out}
    assert os.getpid() in pids and len(pids) == jobs      # this process and every worker
    assert children() == before                          # the workers are gone


def test_large_blocks_and_results_go_through_the_slots():
    blocks = [[k] for k in range(12)]
    for k, (data, n, tail) in enumerate(ordered_map(_big, blocks, None, jobs=2)):
        assert n == k and len(data) == 300_000 + k and bytes(data[:1]) == bytes([k % 251])
        assert tail == "x" * 50_000
    # blocks larger than a pipe buffer (pickled into the input slot), and
    # one larger than the slot (worked on here instead)
    blocks = [list(range(20_000 + k)) for k in range(6)]
    assert list(ordered_map(_echo_len, blocks, None, jobs=2)) == [
        (len(b), b[:3], b[-3:]) for b in blocks]
    old = _workers.IN_BYTES
    _workers.IN_BYTES = 1 << 10
    try:
        assert list(ordered_map(_echo_len, blocks, None, jobs=2)) == [
            (len(b), b[:3], b[-3:]) for b in blocks]
    finally:
        _workers.IN_BYTES = old


def test_an_error_in_a_worker_is_raised_here_with_its_class():
    blocks = [list(range(k, k + 4)) for k in range(0, 40, 4)]
    before = children()
    got = []
    with pytest.raises(InvalidIdError, match="bad block with 13"):
        for rows in ordered_map(_fails_on_13, blocks, None, jobs=2):
            got.append(rows)
    assert got == blocks[:len(got)] and len(got) <= 3     # in order up to the bad block
    assert children() == before


def _slow_pid(block, args):
    time.sleep(0.05)
    return os.getpid()


def test_a_worker_that_dies_stops_the_run_with_a_worker_error():
    before = children()
    it = ordered_map(_slow_pid, [[k] for k in range(40)], None, jobs=2)
    got = []
    with pytest.raises(WorkerError, match="killed by signal 9"):
        for pid in it:
            got.append(pid)
            workers = children() - before
            if len(got) == 4 and workers:
                os.kill(next(iter(workers)), signal.SIGKILL)
    assert 4 <= len(got) < 40
    assert children() == before


def test_stopping_early_ends_the_workers():
    before = children()
    it = ordered_map(_square_sum, [[k] for k in range(1000)], (1, 0.001), jobs=3)
    assert next(it)[0] == 0
    assert len(children() - before) == 2
    it.close()
    assert children() == before


def test_the_cli_reports_a_dead_worker_in_one_line(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bgfast import analyze
    from bgfast.cli import main

    def dies(*a, **k):
        raise WorkerError("worker process 123 was killed by signal 9 in the middle of the run")

    monkeypatch.setattr(analyze, "run", dies)
    src = tmp_path / "in.txt"
    src.write_text("4HPwATDgc/ABMA\n")
    r = CliRunner().invoke(main, ["analyze", str(src), "-o", str(tmp_path / "o.jsonl")])
    assert r.exit_code == 1
    assert r.output.strip().splitlines()[-1] == (
        "Error: worker process 123 was killed by signal 9 in the middle of the run")


@pytest.mark.parametrize("n", [0, 1, 63, 64, 2000, 70_000, 100_003])
@pytest.mark.parametrize("split_end", [False, True])
def test_line_blocks_cover_the_input_in_order(n, split_end):
    from bgfast.analyze import _blocks

    lines = [f"{k}\n" for k in range(n)]
    blocks = list(_blocks(iter(lines), 1, 16384, split_end=split_end))
    assert [line for _, b in blocks for line in b] == lines
    assert [first for first, _ in blocks] == [1 + sum(len(b) for _, b in blocks[:k])
                                              for k in range(len(blocks))]
    sizes = [len(b) for _, b in blocks]
    assert all(s <= 16384 for s in sizes)
    if split_end and n > 40_000:                  # the end in quarter blocks or less
        assert max(sizes[-4:]) <= 4096 and sum(s <= 4096 for s in sizes) >= 4
    if not split_end:
        assert sizes[:4] == [min(64, n), 256, 1024, 4096][:len(sizes[:4])] or n < 5440


def _fill(block, args, into=None):
    """Bytes of the block's size, written into ``into`` when it fits."""
    n, = block
    data = bytes([n % 256]) * (n * 1000)
    if into is not None and len(into) >= len(data):
        memoryview(into)[:len(data)] = data
        return memoryview(into)[:len(data)], n
    return data, n


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_results_written_into_the_slots(jobs):
    sizes = [1, 70, 3, 200, 5, 90, 4, 300, 2, 10] * 3
    seen = []
    for data, n in ordered_map(_fill, [[k] for k in sizes], None, jobs=jobs, into=True):
        assert len(data) == n * 1000 and bytes(data[:1]) == bytes([n % 256])
        assert bytes(data) == bytes([n % 256]) * len(data)          # untouched until used
        seen.append(n)
    assert seen == sizes


def _inner_pids(block, args):
    """A map inside a block: the pids that worked on the inner blocks."""
    return os.getpid(), sorted(set(ordered_map(lambda b, a: os.getpid(), range(8), None, 2)))


def test_a_map_inside_a_worker_runs_in_that_worker():
    """Workers never fork workers of their own (no process is left behind
    by a map that a block starts, e.g. a rollout asked for by analysis)."""
    before = children()
    results = list(ordered_map(_inner_pids, range(6), None, 2))
    here = os.getpid()
    workers = {pid for pid, _ in results if pid != here}
    assert workers, "some blocks should have run in the worker"
    for pid, inner in results:
        if pid != here:
            assert inner == [pid]               # that worker alone
    assert children() == before


@pytest.mark.parametrize("pieces", [4, 8])
def test_the_tail_is_split_for_every_cpu(pieces):
    """The last two blocks (1,024 + 2,656 lines of 4,000) come in ``pieces``
    equal pieces (Ray: twice the cluster's CPUs), not as one block."""
    from bgfast.analyze import _blocks

    lines = [f"{k}\n" for k in range(4000)]
    sizes = [len(b) for _, b in _blocks(iter(lines), 1, 16384, split_end=True, pieces=pieces)]
    assert sizes[:2] == [64, 256]
    assert sizes[2:] == [-(-3680 // pieces)] * (pieces - 1) + [3680 - (pieces - 1) * -(-3680 // pieces)]
